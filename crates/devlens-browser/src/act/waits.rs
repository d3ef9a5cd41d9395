//! Waiting for the page: text to appear or go, an element to reach a state, the URL to change,
//! the network to idle — stopped early by a dialog or a pause.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::act::input::{DEFAULT_WAIT, MAX_WAIT};
use crate::error::{BrowserError, Result};
use crate::page::dom::page_fn;
use crate::records::{Blocker, DialogInfo};
use crate::tab::targets::Tab;
use crate::text::collapse;

/// The state `WaitCondition::Selector` waits for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElementState {
    #[default]
    Visible,
    Hidden,
    Attached,
    Detached,
}

/// What `wait_for` waits for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WaitCondition {
    /// This text (case-insensitive) to appear in the page.
    Text(String),
    /// This text to disappear from the page.
    TextGone(String),
    /// An element matching the selector to reach a state.
    Selector {
        selector: String,
        #[serde(default)]
        state: ElementState,
    },
    /// The URL to contain this.
    UrlContains(String),
    /// No request in flight for half a second.
    NetworkIdle,
}

impl WaitCondition {
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Text(t) => format!("text \"{t}\" to appear"),
            Self::TextGone(t) => format!("text \"{t}\" to disappear"),
            Self::Selector { selector, state } => format!(
                "`{selector}` to be {}",
                match state {
                    ElementState::Visible => "visible",
                    ElementState::Hidden => "hidden",
                    ElementState::Attached => "in the page",
                    ElementState::Detached => "gone from the page",
                }
            ),
            Self::UrlContains(u) => format!("the URL to contain \"{u}\""),
            Self::NetworkIdle => "the network to be idle".into(),
        }
    }
}

/// The result of a `wait_for` that did not time out.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WaitOutcome {
    /// What was awaited.
    pub condition: String,
    /// The condition holds (false when a dialog or a breakpoint interrupted the wait).
    pub met: bool,
    pub waited_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogInfo>,
    /// Where the page paused in the debugger while it was awaited (a breakpoint in a timer or
    /// a handler): a paused page cannot go on, so the wait stops there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<Box<crate::records::debugger::PauseContext>>,
}

impl WaitOutcome {
    pub fn to_text(&self) -> String {
        if let (Some(paused), false) = (&self.paused, self.met) {
            return format!(
                "stopped waiting for {} after {} ms: the page paused in the debugger\n{}",
                self.condition,
                self.waited_ms,
                paused.to_text()
            );
        }
        match &self.dialog {
            Some(d) if !self.met => format!(
                "stopped waiting for {}: a {} dialog opened (\"{}\"); handle it with handle_dialog",
                self.condition, d.kind, d.message
            ),
            _ => format!("done: {} after {} ms", self.condition, self.waited_ms),
        }
    }
}

const WAIT_FN: &str = r#"
function(kind, arg, state) {
  __PRELUDE__
  if (kind === 'text' || kind === 'textGone') {
    const body = document.body ? document.body.innerText : '';
    const has = body.toLowerCase().includes(arg.toLowerCase());
    return { met: kind === 'text' ? has : !has, shows: __text(body, 200) };
  }
  const all = __select(arg, true).all;
  const visible = all.filter(__visible).length;
  const met = state === 'visible' ? visible > 0 : state === 'hidden' ? visible === 0 : state === 'attached' ? all.length > 0 : all.length === 0;
  return { met, matched: all.length, visible };
}
"#;

impl Tab {
    /// Waits until a condition holds, polling the page; fails with what the page shows instead
    /// when the timeout (default 5 s, at most 60 s) passes.
    pub async fn wait_for(
        &self,
        condition: &WaitCondition,
        timeout: Option<Duration>,
    ) -> Result<WaitOutcome> {
        self.guard_running("waiting for a condition")?;
        let limit = timeout.unwrap_or(DEFAULT_WAIT).min(MAX_WAIT);
        let what = condition.describe();
        let start = tokio::time::Instant::now();
        let function = page_fn(WAIT_FN);
        let mut idle_since: Option<tokio::time::Instant> = None;
        let mut last: Value = Value::Null;
        if let WaitCondition::Text(t) | WaitCondition::TextGone(t) | WaitCondition::UrlContains(t) =
            condition
            && t.trim().is_empty()
        {
            return Err(BrowserError::InvalidInput(
                "the text to wait for is empty".into(),
            ));
        }
        loop {
            match self.blocker() {
                Some(Blocker::Dialog(d)) => {
                    return Ok(WaitOutcome {
                        condition: what,
                        met: false,
                        waited_ms: start.elapsed().as_millis() as u64,
                        dialog: Some(d),
                        paused: None,
                    });
                }
                Some(Blocker::Paused(_)) => {
                    let waited_ms = start.elapsed().as_millis() as u64;
                    return Ok(WaitOutcome {
                        condition: what,
                        met: false,
                        waited_ms,
                        dialog: None,
                        paused: self.pause_context_if_paused().await.map(Box::new),
                    });
                }
                None => {}
            }
            self.check_alive()?;
            let met = match condition {
                WaitCondition::NetworkIdle => {
                    let page = self.state().page_state().navigations;
                    let busy = self.state().network_mut().in_flight_on_page(page);
                    if busy == 0 {
                        let since = *idle_since.get_or_insert_with(tokio::time::Instant::now);
                        since.elapsed() >= Duration::from_millis(500)
                    } else {
                        idle_since = None;
                        false
                    }
                }
                WaitCondition::UrlContains(part) => {
                    let url = self
                        .info()
                        .await
                        .map(|i| i.url)
                        .unwrap_or_else(|_| self.url());
                    last = json!({ "url": url });
                    url.contains(part.as_str())
                }
                WaitCondition::Text(t) | WaitCondition::TextGone(t) => {
                    let kind = if matches!(condition, WaitCondition::Text(_)) {
                        "text"
                    } else {
                        "textGone"
                    };
                    self.poll(&function, json!([kind, t, null]), &mut last)
                        .await?
                }
                WaitCondition::Selector { selector, state } => {
                    let state = match state {
                        ElementState::Visible => "visible",
                        ElementState::Hidden => "hidden",
                        ElementState::Attached => "attached",
                        ElementState::Detached => "detached",
                    };
                    match self
                        .poll(&function, json!(["selector", selector, state]), &mut last)
                        .await
                    {
                        Err(BrowserError::Protocol { message, .. })
                            if message.contains("not a valid selector") =>
                        {
                            return Err(BrowserError::InvalidSelector {
                                selector: selector.clone(),
                                reason: message,
                            });
                        }
                        other => other?,
                    }
                }
            };
            if met {
                return Ok(WaitOutcome {
                    condition: what,
                    met: true,
                    waited_ms: start.elapsed().as_millis() as u64,
                    dialog: None,
                    paused: None,
                });
            }
            if start.elapsed() >= limit {
                let hint = self.wait_hint(condition, &last).await;
                return Err(BrowserError::Timeout {
                    what,
                    after: limit,
                    hint,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// One poll of a wait condition; a page busy for a second counts as "not yet".
    async fn poll(&self, function: &str, args: Value, last: &mut Value) -> Result<bool> {
        match tokio::time::timeout(Duration::from_secs(1), self.call_fn(function, args)).await {
            Ok(Ok(v)) => {
                let met = v.get("met").and_then(Value::as_bool).unwrap_or(false);
                *last = v;
                Ok(met)
            }
            Ok(Err(BrowserError::Protocol { message, .. }))
                if message.contains("Execution context was destroyed")
                    || message.contains("Cannot find context") =>
            {
                // A navigation is replacing the document; poll the new one next time.
                Ok(false)
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Ok(false),
        }
    }

    async fn wait_hint(&self, condition: &WaitCondition, last: &Value) -> Option<String> {
        match condition {
            WaitCondition::Text(_) | WaitCondition::TextGone(_) => {
                let shows = last.get("shows").and_then(Value::as_str).unwrap_or("");
                Some(format!(
                    "The page ({}) shows: \"{}\"",
                    self.url(),
                    collapse(shows)
                ))
            }
            WaitCondition::Selector { selector, state } => {
                let matched = last.get("matched").and_then(Value::as_u64).unwrap_or(0);
                let visible = last.get("visible").and_then(Value::as_u64).unwrap_or(0);
                match state {
                    ElementState::Visible | ElementState::Attached if matched == 0 => {
                        let s = self.selector_suggestions(selector).await;
                        Some(if s.is_empty() {
                            "No element matches it.".to_string()
                        } else {
                            format!("No element matches it; close matches: {}.", s.join(", "))
                        })
                    }
                    ElementState::Visible => {
                        Some(format!("{matched} element(s) match but none is visible."))
                    }
                    ElementState::Hidden => {
                        Some(format!("{visible} matching element(s) are still visible."))
                    }
                    _ => Some(format!("{matched} element(s) still match.")),
                }
            }
            WaitCondition::UrlContains(_) => Some(format!(
                "The URL is {}.",
                last.get("url").and_then(Value::as_str).unwrap_or("")
            )),
            WaitCondition::NetworkIdle => {
                let page_url = self.url();
                let page = self.state().page_state().navigations;
                let log = self.state().network_mut();
                let pending: Vec<String> = log
                    .records_on_page(page)
                    .filter(|r| r.in_flight())
                    .take(3)
                    .map(|r| r.summary().to_line(&page_url))
                    .collect();
                Some(format!("Still pending: {}", pending.join("; ")))
            }
        }
    }
}
