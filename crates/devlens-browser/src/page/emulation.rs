//! Emulating a device on a tab: viewport, color scheme, CPU and network throttling.

use serde_json::json;

use crate::error::{BrowserError, Result};
use crate::records::emulation::{ColorScheme, EmulationRequest, EmulationState, NetworkProfile};
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;

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
