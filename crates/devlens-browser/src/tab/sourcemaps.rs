//! Loading source maps and original sources through the page (its network, its cookies), for the
//! maps of [`crate::records::sourcemap`].

use std::sync::Arc;

use chromiumoxide::Page;
use serde_json::{Value, json};

use crate::records::sourcemap::{
    MAX_MAP_BYTES, MAX_SOURCE_BYTES, ScriptMap, SourceMap, base64_decode, data_url_text,
    resolve_url,
};
use crate::tab::cdp::{Raw, short_message};

/// Loads and parses a script's map: inline `data:` maps decoded here, others fetched through
/// the page's network stack (its cookies and auth), which also answers while the page is
/// paused.
pub(crate) async fn load(
    page: &Page,
    frame: Option<&str>,
    script_url: &str,
    source_map_url: &str,
) -> Result<SourceMap, String> {
    if source_map_url.starts_with("data:") {
        if source_map_url.len() > MAX_MAP_BYTES * 4 / 3 + 100 {
            return Err(format!(
                "the inline source map is over {} MB",
                MAX_MAP_BYTES >> 20
            ));
        }
        let text = data_url_text(source_map_url)?;
        return SourceMap::parse(&text, script_url);
    }
    let url = resolve_url(script_url, source_map_url);
    let text = fetch_text(page, frame, &url, MAX_MAP_BYTES).await?;
    SourceMap::parse(&text, &url).map_err(|e| format!("{url}: {e}"))
}

/// The source map a script names in its `sourceMappingURL` comment (for code the debugger
/// has not seen: a profile's or a trace's functions).
pub(crate) async fn script_map(
    page: &Page,
    frame: Option<&str>,
    script_url: &str,
) -> Result<SourceMap, String> {
    let text = fetch_text(page, frame, script_url, MAX_MAP_BYTES).await?;
    let start = (text.len().saturating_sub(8192)..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    let tail = &text[start..];
    let map_url = tail
        .lines()
        .rev()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("//# sourceMappingURL=")
                .or_else(|| l.strip_prefix("//@ sourceMappingURL="))
        })
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| format!("{script_url} names no source map"))?;
    load(page, frame, script_url, map_url).await
}

/// A script's text (bounded like a map), to turn a character offset into a line and column.
pub(crate) async fn script_text(
    page: &Page,
    frame: Option<&str>,
    script_url: &str,
) -> Result<String, String> {
    fetch_text(page, frame, script_url, MAX_MAP_BYTES).await
}

/// A text resource loaded with `Network.loadNetworkResource`, at most `max` bytes.
async fn fetch_text(
    page: &Page,
    frame: Option<&str>,
    url: &str,
    max: usize,
) -> Result<String, String> {
    if url.starts_with("data:") {
        return data_url_text(url);
    }
    let frame = frame.ok_or_else(|| format!("{url}: no frame to load it in"))?;
    let call = |method: &'static str, params: Value| async move {
        page.execute(Raw::new(method, params))
            .await
            .map(|r| r.result)
            .map_err(|e| format!("{url}: {}", short_message(&e)))
    };
    let answer = call(
        "Network.loadNetworkResource",
        json!({
            "frameId": frame,
            "url": url,
            "options": { "disableCache": false, "includeCredentials": true },
        }),
    )
    .await?;
    let resource = &answer["resource"];
    if resource.get("success").and_then(Value::as_bool) != Some(true) {
        let why = resource
            .get("netErrorName")
            .and_then(Value::as_str)
            .filter(|e| !e.is_empty())
            .map(str::to_string)
            .or_else(|| {
                resource
                    .get("httpStatusCode")
                    .and_then(Value::as_u64)
                    .map(|s| format!("HTTP {s}"))
            })
            .unwrap_or_else(|| "failed".into());
        return Err(format!("{url}: {why}"));
    }
    let Some(handle) = resource.get("stream").and_then(Value::as_str) else {
        return Err(format!("{url}: an empty answer"));
    };
    let mut bytes: Vec<u8> = Vec::new();
    let result = loop {
        let chunk = match call("IO.read", json!({ "handle": handle, "size": 1 << 20 })).await {
            Ok(c) => c,
            Err(e) => break Err(e),
        };
        let data = chunk.get("data").and_then(Value::as_str).unwrap_or("");
        if chunk.get("base64Encoded").and_then(Value::as_bool) == Some(true) {
            match base64_decode(data) {
                Ok(b) => bytes.extend(b),
                Err(e) => break Err(format!("{url}: {e}")),
            }
        } else {
            bytes.extend_from_slice(data.as_bytes());
        }
        if bytes.len() > max {
            break Err(format!("{url}: larger than {} MB", max >> 20));
        }
        if chunk.get("eof").and_then(Value::as_bool) != Some(false) {
            break Ok(());
        }
    };
    let _ = call("IO.close", json!({ "handle": handle })).await;
    result?;
    String::from_utf8(bytes).map_err(|_| format!("{url}: not UTF-8 text"))
}

/// An original source's text: from the map's `sourcesContent`, or fetched once (bounded).
pub(crate) async fn original_text(
    page: &Page,
    frame: Option<&str>,
    map: &ScriptMap,
    source: usize,
) -> Result<Arc<str>, String> {
    if let Some(Some(text)) = map.map.contents.get(source) {
        return Ok(text.clone());
    }
    let url = map
        .map
        .sources
        .get(source)
        .ok_or("the source map has no such source")?;
    if !url.starts_with("http") && !url.starts_with("data:") && !url.starts_with("file:") {
        return Err(format!(
            "{url} is not a URL the page can load and the source map has no sourcesContent"
        ));
    }
    fetch_text(page, frame, url, MAX_SOURCE_BYTES)
        .await
        .map(Arc::from)
}
