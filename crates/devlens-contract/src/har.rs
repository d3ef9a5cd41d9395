//! HAR files (HTTP Archive 1.2, as Chrome DevTools, Firefox and Playwright save them) read into
//! [`Exchange`]s, so a recorded session is checked like the live one.

use base64::Engine as _;
use serde_json::Value;

use crate::ContractError;
use crate::traffic::{Body, Exchange};

/// A HAR file's exchanges, in order, and the URL of its first page (relative API servers are
/// on its origin).
#[derive(Debug, Clone, Default)]
pub struct HarLog {
    pub exchanges: Vec<Exchange>,
    pub page_url: Option<String>,
}

/// Bodies larger than this are kept as cut (and not checked).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Reads a HAR document. `location` names it in errors.
pub fn read_har(bytes: &[u8], location: &str) -> Result<HarLog, ContractError> {
    let invalid = |reason: String| ContractError::InvalidHar {
        location: location.to_string(),
        reason,
    };
    let root: Value =
        serde_json::from_slice(bytes).map_err(|e| invalid(format!("not JSON ({e})")))?;
    let entries = root
        .get("log")
        .and_then(|l| l.get("entries"))
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("no `log.entries` list".into()))?;
    let mut log = HarLog::default();
    for (i, entry) in entries.iter().enumerate() {
        let request = entry.get("request");
        let response = entry.get("response");
        let (Some(method), Some(url)) = (
            request
                .and_then(|r| r.get("method"))
                .and_then(Value::as_str),
            request.and_then(|r| r.get("url")).and_then(Value::as_str),
        ) else {
            return Err(invalid(format!(
                "entry {i} has no `request.method` and `request.url`"
            )));
        };
        let resource_type = entry
            .get("_resourceType")
            .and_then(Value::as_str)
            .map(str::to_string);
        // HAR writes status 0 for requests that got no answer.
        let status = response
            .and_then(|r| r.get("status"))
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .filter(|s| *s > 0);
        let content = response.and_then(|r| r.get("content"));
        let response_content_type = content
            .and_then(|c| c.get("mimeType"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .or_else(|| header(response, "content-type"));
        let response_body = content.and_then(|c| {
            let text = c.get("text").and_then(Value::as_str)?;
            let base64 = c.get("encoding").and_then(Value::as_str) == Some("base64");
            Some(body(text, base64))
        });
        let post = request.and_then(|r| r.get("postData"));
        let request_body = post
            .and_then(|p| p.get("text"))
            .and_then(Value::as_str)
            .map(|t| body(t, false));
        let request_content_type = post
            .and_then(|p| p.get("mimeType"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .or_else(|| header(request, "content-type"));
        if log.page_url.is_none()
            && (resource_type.as_deref() == Some("document")
                || response_content_type
                    .as_deref()
                    .is_some_and(|m| m.starts_with("text/html")))
        {
            log.page_url = Some(url.to_string());
        }
        log.exchanges.push(Exchange {
            source: format!("entry {i}"),
            method: method.to_string(),
            url: url.to_string(),
            resource_type,
            request_content_type,
            request_body,
            status,
            response_content_type,
            response_body,
        });
    }
    if log.page_url.is_none() {
        // Chrome names each page by its URL.
        log.page_url = root
            .get("log")
            .and_then(|l| l.get("pages"))
            .and_then(Value::as_array)
            .and_then(|p| p.first())
            .and_then(|p| p.get("title"))
            .and_then(Value::as_str)
            .filter(|t| t.starts_with("http"))
            .map(str::to_string);
    }
    Ok(log)
}

fn header(message: Option<&Value>, name: &str) -> Option<String> {
    message?
        .get("headers")?
        .as_array()?
        .iter()
        .find(|h| {
            h.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
        })
        .and_then(|h| h.get("value"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn body(text: &str, base64: bool) -> Body {
    let text = if base64 {
        base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default()
    } else {
        text.to_string()
    };
    if text.len() > MAX_BODY_BYTES {
        let mut end = MAX_BODY_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        return Body {
            text: text.get(..end).unwrap_or("").to_string(),
            truncated: true,
        };
    }
    Body {
        text,
        truncated: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn har_entries_become_exchanges() {
        let har = br#"{"log": {"version": "1.2", "pages": [{"title": "http://localhost:3000/"}], "entries": [
          {"_resourceType": "fetch", "request": {"method": "POST", "url": "http://localhost:3000/api/pets",
             "headers": [], "postData": {"mimeType": "application/json", "text": "{\"name\":\"Rex\"}"}},
           "response": {"status": 201, "headers": [], "content": {"mimeType": "application/json", "text": "eyJpZCI6MX0=", "encoding": "base64"}}},
          {"request": {"method": "GET", "url": "http://localhost:3000/api/down"}, "response": {"status": 0, "content": {}}}
        ]}}"#;
        let log = read_har(har, "session.har").unwrap();
        assert_eq!(log.page_url.as_deref(), Some("http://localhost:3000/"));
        assert_eq!(log.exchanges.len(), 2);
        let first = &log.exchanges[0];
        assert_eq!(first.status, Some(201));
        assert_eq!(first.response_body.as_ref().unwrap().text, r#"{"id":1}"#);
        assert_eq!(
            first.request_body.as_ref().unwrap().text,
            r#"{"name":"Rex"}"#
        );
        assert_eq!(log.exchanges[1].status, None);
    }

    #[test]
    fn a_file_that_is_not_har_says_what_it_lacks() {
        let err = read_har(b"{\"openapi\": \"3.0.0\"}", "x.json").unwrap_err();
        assert!(err.to_string().contains("log.entries"), "{err}");
        let err = read_har(b"not json", "x.har").unwrap_err();
        assert!(err.to_string().contains("x.har"), "{err}");
    }
}
