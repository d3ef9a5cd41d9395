//! Screenshots of the viewport, the full page or one element, as PNG or JPEG; returned as bytes
//! (for MCP image content) and optionally saved to a file.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::page::dom::{ElementTarget, page_fn};
use crate::records::network::decode_base64;
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::bytes;

/// Tallest full-page capture, in CSS pixels (taller pages are cut there).
const MAX_FULL_HEIGHT: f64 = 16_384.0;

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    #[default]
    Png,
    Jpeg,
}

impl ImageFormat {
    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
        }
    }
}

/// What to capture.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScreenshotScope {
    #[default]
    Viewport,
    FullPage,
    Element(ElementTarget),
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ScreenshotRequest {
    pub scope: ScreenshotScope,
    pub format: ImageFormat,
    /// JPEG quality 1–100 (default 80).
    pub quality: Option<u8>,
    /// Also write the image to this file (parent directories are created; written whole
    /// through a temporary file, see [`Tab::writing_in`]).
    pub path: Option<PathBuf>,
}

/// A captured image.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Screenshot {
    pub format: ImageFormat,
    /// Size in device pixels.
    pub width: u32,
    pub height: u32,
    /// Encoded size in bytes.
    pub size: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The encoded image.
    #[serde(skip)]
    pub data: Vec<u8>,
}

impl Screenshot {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} {}x{}, {}",
            match self.format {
                ImageFormat::Png => "PNG",
                ImageFormat::Jpeg => "JPEG",
            },
            self.width,
            self.height,
            bytes(self.size as u64)
        );
        if let Some(p) = &self.path {
            let _ = write!(out, ", saved to {p}");
        }
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

const ELEMENT_BOX_FN: &str = r#"
function() {
  __PRELUDE__
  this.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = this.getBoundingClientRect();
  const win = this.ownerDocument.defaultView || window;
  return { label: __label(this), framed: win !== win.top, x: r.left + win.scrollX, y: r.top + win.scrollY, width: r.width, height: r.height };
}
"#;

impl Tab {
    /// Captures the viewport, the full page or an element.
    pub async fn screenshot(&self, request: &ScreenshotRequest) -> Result<Screenshot> {
        self.guard()?;
        let mut params = json!({
            "format": match request.format {
                ImageFormat::Png => "png",
                ImageFormat::Jpeg => "jpeg",
            },
        });
        if request.format == ImageFormat::Jpeg {
            params["quality"] = json!(request.quality.unwrap_or(80).clamp(1, 100));
        }
        let mut notes = Vec::new();
        match &request.scope {
            ScreenshotScope::Viewport => {}
            ScreenshotScope::FullPage => {
                let metrics = self
                    .call(Raw::new("Page.getLayoutMetrics", json!({})))
                    .await?;
                let size = metrics
                    .get("cssContentSize")
                    .or_else(|| metrics.get("contentSize"));
                let width = size.and_then(|s| s["width"].as_f64()).unwrap_or(0.0).ceil();
                let mut height = size
                    .and_then(|s| s["height"].as_f64())
                    .unwrap_or(0.0)
                    .ceil();
                if height > MAX_FULL_HEIGHT {
                    notes.push(format!(
                        "the page is {height} px tall; captured the top {MAX_FULL_HEIGHT} px"
                    ));
                    height = MAX_FULL_HEIGHT;
                }
                if width >= 1.0 && height >= 1.0 {
                    params["clip"] =
                        json!({ "x": 0, "y": 0, "width": width, "height": height, "scale": 1 });
                    params["captureBeyondViewport"] = json!(true);
                }
            }
            ScreenshotScope::Element(target) => {
                let el = self.resolve(target).await?;
                let mut b = self
                    .call_el(&el, &page_fn(ELEMENT_BOX_FN), Value::Null)
                    .await?;
                if b["framed"].as_bool() == Some(true) {
                    // Measured in its frame: place it in the page (viewport + scroll).
                    let [x, y, w, h] = self.viewport_box(&el.realm, &el.object_id).await?;
                    let scroll = self
                        .call(Raw::new("Page.getLayoutMetrics", json!({})))
                        .await?;
                    let page = &scroll["cssVisualViewport"];
                    b["x"] = json!(x + page["pageX"].as_f64().unwrap_or(0.0));
                    b["y"] = json!(y + page["pageY"].as_f64().unwrap_or(0.0));
                    b["width"] = json!(w);
                    b["height"] = json!(h);
                }
                let (w, h) = (
                    b["width"].as_f64().unwrap_or(0.0),
                    b["height"].as_f64().unwrap_or(0.0),
                );
                if w < 1.0 || h < 1.0 {
                    return Err(BrowserError::NotInteractable {
                        action: "capture",
                        element: b["label"].as_str().unwrap_or("the element").to_string(),
                        reason: "it has no size (hidden or empty)".into(),
                    });
                }
                params["clip"] = json!({
                    "x": b["x"].as_f64().unwrap_or(0.0),
                    "y": b["y"].as_f64().unwrap_or(0.0),
                    "width": w, "height": h, "scale": 1,
                });
                params["captureBeyondViewport"] = json!(true);
            }
        }
        let v = self
            .call(Raw::new("Page.captureScreenshot", params))
            .await?;
        let data = v
            .get("data")
            .and_then(Value::as_str)
            .and_then(decode_base64)
            .ok_or_else(|| BrowserError::protocol("taking the screenshot", "no image data"))?;
        let (width, height) = image_size(&data).unwrap_or((0, 0));
        let (data, path) = match &request.path {
            Some(p) => (
                self.save_file(p, data).await?,
                Some(p.display().to_string()),
            ),
            None => (data, None),
        };
        Ok(Screenshot {
            format: request.format,
            width,
            height,
            size: data.len(),
            path,
            notes,
            data,
        })
    }
}

/// Width and height from a PNG or JPEG header.
pub fn image_size(data: &[u8]) -> Option<(u32, u32)> {
    if data.starts_with(b"\x89PNG\r\n\x1a\n") && data.len() >= 24 {
        let w = u32::from_be_bytes(data[16..20].try_into().ok()?);
        let h = u32::from_be_bytes(data[20..24].try_into().ok()?);
        return Some((w, h));
    }
    if data.starts_with(&[0xFF, 0xD8]) {
        let mut i = 2;
        while i + 9 < data.len() {
            if data[i] != 0xFF {
                i += 1;
                continue;
            }
            let marker = data[i + 1];
            let len = usize::from(u16::from_be_bytes([data[i + 2], data[i + 3]]));
            // Start-of-frame markers (baseline, progressive, ...) carry the size.
            if matches!(marker, 0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF) {
                let h = u16::from_be_bytes([data[i + 5], data[i + 6]]);
                let w = u16::from_be_bytes([data[i + 7], data[i + 8]]);
                return Some((u32::from(w), u32::from(h)));
            }
            i += 2 + len;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_from_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((640, 480)));
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00,
            0x10, 0x00, 0x20, 0x03, 0x00, 0x00,
        ];
        assert_eq!(image_size(&jpeg), Some((32, 16)));
        assert_eq!(image_size(b"nope"), None);
    }
}
