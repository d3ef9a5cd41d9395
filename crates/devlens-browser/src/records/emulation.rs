//! What a tab emulates: viewport and device metrics, `prefers-color-scheme`, CPU slowdown and
//! network throttling (presets as in DevTools, or custom). Settings stay on the tab across
//! navigations until changed or reset ([`crate::page::emulation`] applies them).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

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

// Network conditions; the presets match Chrome DevTools (the emulate tool's schema lists them).
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
    pub(crate) fn conditions(self) -> (bool, f64, f64, f64) {
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

    pub(crate) fn describe(self) -> String {
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
