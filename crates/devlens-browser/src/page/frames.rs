//! Frames: where an element lives, and how to reach it.
//!
//! A tab's own protocol session reaches its document and every iframe Chrome renders in the same
//! process (same-site frames, `srcdoc`, `about:blank`). A cross-site iframe runs in another
//! process as its own target (an "out-of-process iframe"); chromiumoxide attaches to those but
//! gives no way to send them commands, so devlens attaches a second, non-flattened session
//! through the tab's session and tunnels commands with `Target.sendMessageToTarget`, reading the
//! answers from `Target.receivedMessageFromTarget` events.
//!
//! Coordinates: the tab's session measures in-process frames in the page's viewport already;
//! a cross-site iframe measures in its own viewport, so its owner `<iframe>`'s content box is
//! added. Input events always go to the tab, which routes them to the frame under the point.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::target::EventReceivedMessageFromTarget;
use futures::StreamExt;
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::refs::Realm;
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;

/// Frames a snapshot expands at most (in-process and cross-site together).
pub(crate) const MAX_FRAMES: usize = 20;

/// A cross-site iframe of the tab.
#[derive(Debug, Clone)]
pub(crate) struct RemoteFrame {
    pub target_id: String,
    pub url: String,
    /// The `<iframe>` element in the tab's document (backend node id).
    pub owner: i64,
}

/// An in-process child frame of the tab.
#[derive(Debug, Clone)]
pub(crate) struct LocalFrame {
    pub frame_id: String,
    pub url: String,
}

static NEXT_TUNNEL_ID: AtomicU64 = AtomicU64::new(1);

impl Tab {
    /// Sends a command to the session a realm lives in.
    pub(crate) async fn call_in(&self, realm: &Realm, cmd: Raw) -> Result<Value> {
        match realm {
            Realm::Page => self.call(cmd).await,
            Realm::Remote { target_id } => {
                let session = self.remote_session(target_id).await?;
                match self.tunnel(&session, cmd.clone()).await {
                    Err(BrowserError::Protocol { message, .. })
                        if message.contains("No session with given id") =>
                    {
                        // The frame navigated or was replaced: attach again once.
                        self.state().page_state().remote_sessions.remove(target_id);
                        let session = self.remote_session(target_id).await?;
                        self.tunnel(&session, cmd).await
                    }
                    other => other,
                }
            }
        }
    }

    /// Calls `function` on an object of a realm, returning the value.
    pub(crate) async fn call_on_in(
        &self,
        realm: &Realm,
        object_id: &str,
        function: &str,
        args: Value,
    ) -> Result<Value> {
        let arguments: Vec<Value> = match args {
            Value::Array(a) => a.into_iter().map(|v| json!({ "value": v })).collect(),
            Value::Null => Vec::new(),
            v => vec![json!({ "value": v })],
        };
        let v = self
            .call_in(
                realm,
                Raw::new(
                    "Runtime.callFunctionOn",
                    json!({
                        "objectId": object_id,
                        "functionDeclaration": function,
                        "arguments": arguments,
                        "returnByValue": true,
                        "awaitPromise": true,
                    }),
                ),
            )
            .await?;
        if let Some(ex) = v.get("exceptionDetails") {
            return Err(BrowserError::protocol(
                "running a page function",
                crate::records::console::exception_text(ex),
            ));
        }
        Ok(v["result"].get("value").cloned().unwrap_or(Value::Null))
    }

    /// The session devlens holds on a cross-site iframe, attaching on first use.
    async fn remote_session(&self, target_id: &str) -> Result<String> {
        if let Some(s) = self.state().page_state().remote_sessions.get(target_id) {
            return Ok(s.clone());
        }
        let v = self
            .call(Raw::new(
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": false }),
            ))
            .await
            .map_err(|_| frame_gone())?;
        let session = v
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(frame_gone)?
            .to_string();
        self.state()
            .page_state()
            .remote_sessions
            .insert(target_id.to_string(), session.clone());
        Ok(session)
    }

    /// One command through a non-flattened session.
    async fn tunnel(&self, session: &str, cmd: Raw) -> Result<Value> {
        let id = NEXT_TUNNEL_ID.fetch_add(1, Ordering::Relaxed);
        let mut answers = self
            .page()
            .event_listener::<EventReceivedMessageFromTarget>()
            .await
            .map_err(|e| self.map_err("Target.sendMessageToTarget", e))?;
        let message = json!({ "id": id, "method": cmd.method, "params": cmd.params }).to_string();
        self.call(Raw::new(
            "Target.sendMessageToTarget",
            json!({ "sessionId": session, "message": message }),
        ))
        .await?;
        let wait = async {
            while let Some(event) = answers.next().await {
                if event.session_id.as_ref() != session {
                    continue;
                }
                let Ok(reply) = serde_json::from_str::<Value>(&event.message) else {
                    continue;
                };
                if reply.get("id").and_then(Value::as_u64) != Some(id) {
                    continue;
                }
                if let Some(error) = reply.get("error") {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("error");
                    return Err(BrowserError::protocol(cmd.method, message));
                }
                return Ok(reply.get("result").cloned().unwrap_or(Value::Null));
            }
            Err(frame_gone())
        };
        match tokio::time::timeout(crate::tab::cdp::REQUEST_TIMEOUT, wait).await {
            Ok(result) => result,
            Err(_) => Err(BrowserError::Timeout {
                what: format!("the iframe to answer {}", cmd.method),
                after: crate::tab::cdp::REQUEST_TIMEOUT,
                hint: Some("The iframe's main thread is busy (a long-running script?).".into()),
            }),
        }
    }

    /// The in-process child frames of the tab (depth-first, at most [`MAX_FRAMES`]).
    pub(crate) async fn local_frames(&self) -> Vec<LocalFrame> {
        let Ok(tree) = self.call(Raw::new("Page.getFrameTree", json!({}))).await else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut stack: Vec<&Value> = tree["frameTree"]["childFrames"]
            .as_array()
            .map(|c| c.iter().rev().collect())
            .unwrap_or_default();
        while let Some(node) = stack.pop() {
            if out.len() >= MAX_FRAMES {
                break;
            }
            if let Some(id) = node["frame"]["id"].as_str() {
                out.push(LocalFrame {
                    frame_id: id.to_string(),
                    url: node["frame"]["url"].as_str().unwrap_or("").to_string(),
                });
            }
            if let Some(children) = node["childFrames"].as_array() {
                stack.extend(children.iter().rev());
            }
        }
        out
    }

    /// The cross-site iframes whose `<iframe>` element is in this tab's process: children of
    /// one of `parents` (the tab's own frame ids).
    pub(crate) async fn remote_frames(&self, parents: &[&str]) -> Vec<RemoteFrame> {
        let Ok(v) = self
            .conn
            .browser_call(
                Raw::new("Target.getTargets", json!({})),
                "listing the iframes",
            )
            .await
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for t in v["targetInfos"].as_array().into_iter().flatten() {
            if t["type"].as_str() != Some("iframe") || out.len() >= MAX_FRAMES {
                continue;
            }
            let Some(target_id) = t["targetId"].as_str() else {
                continue;
            };
            if let Some(parent) = t["parentFrameId"].as_str()
                && !parents.contains(&parent)
            {
                continue;
            }
            // Only an iframe of this tab has an owner element here.
            if let Some(owner) = self.frame_owner(&Realm::Page, target_id).await {
                out.push(RemoteFrame {
                    target_id: target_id.to_string(),
                    url: t["url"].as_str().unwrap_or("").to_string(),
                    owner,
                });
            }
        }
        out
    }

    /// The backend node id of the `<iframe>` that holds a frame.
    pub(crate) async fn frame_owner(&self, realm: &Realm, frame_id: &str) -> Option<i64> {
        self.call_in(
            realm,
            Raw::new("DOM.getFrameOwner", json!({ "frameId": frame_id })),
        )
        .await
        .ok()?
        .get("backendNodeId")
        .and_then(Value::as_i64)
    }

    /// Where a realm's viewport starts in the tab's viewport (CSS pixels).
    async fn realm_origin(&self, realm: &Realm) -> Result<(f64, f64)> {
        let Realm::Remote { target_id } = realm else {
            return Ok((0.0, 0.0));
        };
        let owner = self
            .frame_owner(&Realm::Page, target_id)
            .await
            .ok_or_else(frame_gone)?;
        let v = self
            .call(Raw::new(
                "DOM.getBoxModel",
                json!({ "backendNodeId": owner }),
            ))
            .await?;
        let content = &v["model"]["content"];
        Ok((
            content[0].as_f64().unwrap_or(0.0),
            content[1].as_f64().unwrap_or(0.0),
        ))
    }

    /// The bounding box of an object in the tab's viewport: [x, y, width, height].
    pub(crate) async fn viewport_box(&self, realm: &Realm, object_id: &str) -> Result<[f64; 4]> {
        // Scrolls every frame on the way so that the element is in the tab's viewport.
        let _ = self
            .call_in(
                realm,
                Raw::new(
                    "DOM.scrollIntoViewIfNeeded",
                    json!({ "objectId": object_id }),
                ),
            )
            .await;
        // Give a scroll in another process a moment to reach the compositor.
        if matches!(realm, Realm::Remote { .. }) {
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        let v = self
            .call_in(
                realm,
                Raw::new("DOM.getContentQuads", json!({ "objectId": object_id })),
            )
            .await?;
        let Some(quad) = v["quads"].as_array().and_then(|q| q.first()) else {
            return Ok([0.0; 4]);
        };
        let xs: Vec<f64> = (0..4).filter_map(|i| quad[i * 2].as_f64()).collect();
        let ys: Vec<f64> = (0..4).filter_map(|i| quad[i * 2 + 1].as_f64()).collect();
        let (min_x, max_x) = min_max(&xs);
        let (min_y, max_y) = min_max(&ys);
        let (ox, oy) = self.realm_origin(realm).await?;
        Ok([min_x + ox, min_y + oy, max_x - min_x, max_y - min_y])
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(*x), hi.max(*x))
        })
}

fn frame_gone() -> BrowserError {
    BrowserError::FrameGone
}
