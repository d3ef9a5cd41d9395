//! Emulation of the tab: viewport and device metrics, `prefers-color-scheme`, CPU slowdown and
//! network throttling (presets as in DevTools, or custom).
//!
//! Settings stay on the tab across navigations until changed or reset.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::cdp::Raw;
use crate::error::{BrowserError, Result};
use crate::targets::Tab;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewportSize {
    pub width: u32,
    pub height: u32,
    /// Device pixel ratio (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_scale_factor: Option<f64>,
    /// Mobile: meta viewport and touch-style layout.
    #[serde(default)]
    pub mobile: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ColorScheme {
    Light,
    Dark,
    NoPreference,
}

/// Network conditions; the presets match Chrome DevTools.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NetworkProfile {
    NoThrottling,
    Offline,
    #[serde(rename = "slow3g")]
    Slow3g,
    #[serde(rename = "fast3g")]
    Fast3g,
    #[serde(rename = "fast4g")]
    Fast4g,
    Custom {
        #[serde(rename = "latencyMs")]
        latency_ms: u32,
        #[serde(rename = "downloadKbps")]
        download_kbps: u32,
        #[serde(rename = "uploadKbps")]
        upload_kbps: u32,
    },
}

impl NetworkProfile {
    /// Parses `none`, `offline`, `slow-3g`, `fast 3g`, `4g`, ...
    pub fn parse(s: &str) -> Option<Self> {
        let k: String = s
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        Some(match k.as_str() {
            "none" | "nothrottling" | "off" | "online" | "reset" => Self::NoThrottling,
            "offline" => Self::Offline,
            "slow3g" | "3g" => Self::Slow3g,
            "fast3g" | "slow4g" => Self::Fast3g,
            "fast4g" | "4g" => Self::Fast4g,
            _ => return None,
        })
    }

    /// (offline, latency ms, download bytes/s, upload bytes/s); -1 = unthrottled.
    fn conditions(self) -> (bool, f64, f64, f64) {
        match self {
            Self::NoThrottling => (false, 0.0, -1.0, -1.0),
            Self::Offline => (true, 0.0, 0.0, 0.0),
            Self::Slow3g => (false, 2000.0, 50_000.0, 50_000.0),
            Self::Fast3g => (false, 562.5, 180_000.0, 84_375.0),
            Self::Fast4g => (false, 165.0, 1_012_500.0, 168_750.0),
            Self::Custom {
                latency_ms,
                download_kbps,
                upload_kbps,
            } => (
                false,
                f64::from(latency_ms),
                f64::from(download_kbps) * 1000.0 / 8.0,
                f64::from(upload_kbps) * 1000.0 / 8.0,
            ),
        }
    }

    fn describe(self) -> String {
        match self {
            Self::NoThrottling => "no network throttling".into(),
            Self::Offline => "offline".into(),
            Self::Slow3g => "slow 3G".into(),
            Self::Fast3g => "fast 3G".into(),
            Self::Fast4g => "fast 4G".into(),
            Self::Custom {
                latency_ms,
                download_kbps,
                upload_kbps,
            } => format!("{latency_ms} ms latency, {download_kbps}/{upload_kbps} kbit/s down/up"),
        }
    }
}

/// What to change; fields left out stay as they are.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct EmulationRequest {
    pub viewport: Option<ViewportSize>,
    pub color_scheme: Option<ColorScheme>,
    /// CPU slowdown factor (1 = none, 4 = a mid-range phone).
    pub cpu_slowdown: Option<f64>,
    pub network: Option<NetworkProfile>,
    /// Clear every emulation first.
    pub reset: bool,
}

/// The emulation in effect on a tab.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmulationState {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viewport: Option<ViewportSize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color_scheme: Option<ColorScheme>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_slowdown: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkProfile>,
}

impl EmulationState {
    pub fn to_text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(v) = self.viewport {
            let mut s = format!("viewport {}x{}", v.width, v.height);
            if let Some(dpr) = v
                .device_scale_factor
                .filter(|d| (*d - 1.0).abs() > f64::EPSILON)
            {
                let _ = write!(s, " @{dpr}x");
            }
            if v.mobile {
                s.push_str(" mobile");
            }
            parts.push(s);
        }
        if let Some(c) = self.color_scheme {
            parts.push(format!(
                "prefers-color-scheme: {}",
                match c {
                    ColorScheme::Light => "light",
                    ColorScheme::Dark => "dark",
                    ColorScheme::NoPreference => "no-preference",
                }
            ));
        }
        if let Some(c) = self.cpu_slowdown {
            parts.push(format!("CPU {c}x slower"));
        }
        if let Some(n) = self.network {
            parts.push(n.describe());
        }
        if parts.is_empty() {
            "no emulation: the browser's own viewport, color scheme, CPU and network".into()
        } else {
            format!("emulating {}", parts.join(", "))
        }
    }
}

impl Tab {
    /// The emulation in effect.
    pub fn emulation(&self) -> EmulationState {
        self.state().page_state().emulation.clone()
    }

    /// Changes the emulation of this tab and returns what is in effect now.
    pub async fn emulate(&self, request: &EmulationRequest) -> Result<EmulationState> {
        self.guard()?;
        if let Some(v) = request.viewport {
            if !(1..=10_000).contains(&v.width) || !(1..=10_000).contains(&v.height) {
                return Err(BrowserError::InvalidInput(format!(
                    "viewport {}x{} is out of range: width and height go from 1 to 10000",
                    v.width, v.height
                )));
            }
            if let Some(d) = v.device_scale_factor
                && !(0.25..=5.0).contains(&d)
            {
                return Err(BrowserError::InvalidInput(format!(
                    "device scale factor {d} is out of range (0.25 to 5)"
                )));
            }
        }
        if let Some(c) = request.cpu_slowdown
            && !(1.0..=20.0).contains(&c)
        {
            return Err(BrowserError::InvalidInput(format!(
                "CPU slowdown {c} is out of range: 1 (none) to 20"
            )));
        }
        let mut state = if request.reset {
            EmulationState::default()
        } else {
            self.emulation()
        };
        if request.reset {
            self.call(Raw::new("Emulation.clearDeviceMetricsOverride", json!({})))
                .await?;
            self.call(Raw::new(
                "Emulation.setEmulatedMedia",
                json!({ "features": [] }),
            ))
            .await?;
            self.call(Raw::new(
                "Emulation.setCPUThrottlingRate",
                json!({ "rate": 1 }),
            ))
            .await?;
            self.set_network(NetworkProfile::NoThrottling).await?;
        }
        if let Some(v) = request.viewport {
            self.call(Raw::new(
                "Emulation.setDeviceMetricsOverride",
                json!({
                    "width": v.width,
                    "height": v.height,
                    "deviceScaleFactor": v.device_scale_factor.unwrap_or(1.0),
                    "mobile": v.mobile,
                }),
            ))
            .await?;
            state.viewport = Some(v);
        }
        if let Some(c) = request.color_scheme {
            let value = match c {
                ColorScheme::Light => "light",
                ColorScheme::Dark => "dark",
                ColorScheme::NoPreference => "no-preference",
            };
            self.call(Raw::new(
                "Emulation.setEmulatedMedia",
                json!({ "features": [{ "name": "prefers-color-scheme", "value": value }] }),
            ))
            .await?;
            state.color_scheme = Some(c);
        }
        if let Some(rate) = request.cpu_slowdown {
            self.call(Raw::new(
                "Emulation.setCPUThrottlingRate",
                json!({ "rate": rate }),
            ))
            .await?;
            state.cpu_slowdown = (rate > 1.0).then_some(rate);
        }
        if let Some(n) = request.network {
            self.set_network(n).await?;
            state.network = (n != NetworkProfile::NoThrottling).then_some(n);
        }
        self.state().page_state().emulation = state.clone();
        Ok(state)
    }

    async fn set_network(&self, profile: NetworkProfile) -> Result<()> {
        let (offline, latency, down, up) = profile.conditions();
        self.call(Raw::new(
            "Network.emulateNetworkConditions",
            json!({
                "offline": offline,
                "latency": latency,
                "downloadThroughput": down,
                "uploadThroughput": up,
            }),
        ))
        .await
        .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_describe() {
        assert_eq!(
            NetworkProfile::parse("Slow 3G"),
            Some(NetworkProfile::Slow3g)
        );
        assert_eq!(
            NetworkProfile::parse("offline"),
            Some(NetworkProfile::Offline)
        );
        assert_eq!(
            NetworkProfile::parse("none"),
            Some(NetworkProfile::NoThrottling)
        );
        assert_eq!(NetworkProfile::parse("5g"), None);
        let s = EmulationState {
            viewport: Some(ViewportSize {
                width: 375,
                height: 667,
                device_scale_factor: Some(2.0),
                mobile: true,
            }),
            color_scheme: Some(ColorScheme::Dark),
            cpu_slowdown: Some(4.0),
            network: Some(NetworkProfile::Fast3g),
        };
        assert_eq!(
            s.to_text(),
            "emulating viewport 375x667 @2x mobile, prefers-color-scheme: dark, CPU 4x slower, fast 3G"
        );
        assert!(
            EmulationState::default()
                .to_text()
                .starts_with("no emulation")
        );
    }
}
