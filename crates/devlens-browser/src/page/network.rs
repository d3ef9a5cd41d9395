//! The network log as a call reads it, and request bodies fetched on demand.

use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::network::{
    BodyOptions, MAX_BODY_BYTES, MessageBody, NetworkPage, NetworkQuery, RequestDetails,
    decode_base64, parse_id,
};
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::prefix_bytes;

impl Tab {
    /// Lists the tab's requests (current page by default), filtered and paged.
    pub fn network_requests(&self, query: &NetworkQuery) -> NetworkPage {
        let (page, url) = {
            let p = self.state().page.lock().unwrap_or_else(|e| e.into_inner());
            (p.navigations, p.url.clone())
        };
        self.state()
            .network
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .query(query, page, &url)
    }

    /// One request with headers and bounded bodies (fetched from the browser now).
    pub async fn network_request(&self, id: &str, options: &BodyOptions) -> Result<RequestDetails> {
        let (record, capacity) = {
            let log = self
                .state()
                .network
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            (parse_id(id).and_then(|n| log.get(n)), log.capacity())
        };
        let Some(record) = record else {
            return Err(BrowserError::UnknownRequest {
                id: id.trim().to_string(),
                capacity,
            });
        };
        self.guard()?;
        let limit = options.max_body_bytes.clamp(1, MAX_BODY_BYTES);
        let mut details = RequestDetails {
            entry: record.summary(),
            status_text: record.status_text.clone(),
            mime_type: record.mime_type.clone(),
            remote_address: record.remote_address.clone(),
            redirected_from: record.redirected_from,
            request_headers: if options.headers {
                record.request_headers.clone()
            } else {
                Vec::new()
            },
            response_headers: if options.headers {
                record.response_headers.clone()
            } else {
                Vec::new()
            },
            request_body: None,
            response_body: None,
            body_note: None,
        };
        let is_current_hop = {
            let log = self
                .state()
                .network
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            log.current.get(&record.request_id) == Some(&record.id)
        };
        if record.has_post_data {
            match self
                .call(Raw::new(
                    "Network.getRequestPostData",
                    json!({ "requestId": record.request_id }),
                ))
                .await
            {
                Ok(v) => {
                    let data = v.get("postData").and_then(Value::as_str).unwrap_or("");
                    details.request_body = Some(inline_body(data.as_bytes(), false, limit));
                }
                Err(BrowserError::Protocol { .. }) => {
                    details.body_note = Some("the request body is no longer available".into());
                }
                Err(e) => return Err(e),
            }
        }
        let wants_body = record.finished && record.failure.is_none() && is_current_hop;
        if wants_body {
            match self
                .call(Raw::new(
                    "Network.getResponseBody",
                    json!({ "requestId": record.request_id }),
                ))
                .await
            {
                Ok(v) => {
                    let body = v.get("body").and_then(Value::as_str).unwrap_or("");
                    let base64 = v
                        .get("base64Encoded")
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    let raw: Vec<u8> = if base64 {
                        decode_base64(body).unwrap_or_default()
                    } else {
                        body.as_bytes().to_vec()
                    };
                    let binary = base64 && std::str::from_utf8(&raw).is_err();
                    details.response_body = Some(match &options.save_response_body_to {
                        Some(path) => {
                            // Like screenshots: a missing directory is made, not an error.
                            let raw = self.save_file(path, raw).await?;
                            MessageBody {
                                size: raw.len(),
                                binary,
                                saved_to: Some(path.display().to_string()),
                                ..Default::default()
                            }
                        }
                        None => inline_body(&raw, binary, limit),
                    });
                }
                Err(BrowserError::Protocol { .. }) => {
                    details.body_note = Some(
                        "the browser no longer holds the response body (bodies are dropped on navigation and when large); reload and ask again"
                            .into(),
                    );
                }
                Err(e) => return Err(e),
            }
        } else if record.failure.is_some() {
            details.body_note = Some("the request failed: there is no response body".into());
        } else if !record.finished {
            details.body_note = Some("the response has not finished loading yet".into());
        } else if !is_current_hop {
            details.body_note = Some("a redirect response has no body".into());
        }
        Ok(details)
    }
}

fn inline_body(raw: &[u8], binary: bool, limit: usize) -> MessageBody {
    if binary {
        return MessageBody {
            size: raw.len(),
            binary: true,
            ..Default::default()
        };
    }
    let text = String::from_utf8_lossy(raw);
    let cut = prefix_bytes(&text, limit);
    MessageBody {
        text: Some(cut.to_string()),
        size: raw.len(),
        truncated: cut.len() < text.len(),
        binary: false,
        saved_to: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_bodies_stop_at_a_character_boundary() {
        let b = inline_body("héllo wörld".as_bytes(), false, 3);
        assert_eq!(b.text.as_deref(), Some("hé"));
        assert!(b.truncated);
    }
}
