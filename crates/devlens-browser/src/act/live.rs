//! Live code: evaluate JavaScript in the page and inject CSS, seeing the result at once.
//!
//! `evaluate` runs like the DevTools console (top-level `await`, `let` that can be re-declared)
//! and answers with the value as bounded JSON, the console output the code produced, and a
//! thrown error with its stack. Code that opens a dialog or never finishes does not hang the
//! call: it is raced against the tab's blockers and a timeout (then terminated).

use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::DialogInfo;
use crate::records::console::{ConsoleEntry, ConsoleLevel, stack_frames};
use crate::records::debugger::PauseContext;
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::{prefix_bytes, truncate};

/// Default and longest evaluation time.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
pub const MAX_TIMEOUT: Duration = Duration::from_secs(120);
/// Default and largest size of the returned JSON, in bytes.
pub const DEFAULT_MAX_VALUE: usize = 8 * 1024;
pub const MAX_VALUE: usize = 256 * 1024;
/// Console entries reported with an evaluation.
const CONSOLE_ITEMS: usize = 20;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct EvaluateOptions {
    /// Give up (and stop the script) after this many milliseconds (default 10000).
    pub timeout_ms: Option<u64>,
    /// Cut the JSON of the value at this many bytes (default 8192).
    pub max_value_bytes: Option<usize>,
}

/// An exception the code threw.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThrownError {
    /// `TypeError: x is not a function`
    pub message: String,
    /// Innermost frame first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
}

/// The result of `evaluate`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Evaluation {
    /// The value as JSON (DOM nodes as `<tag#id.class>`, functions as `[function f]`,
    /// cycles as `[circular]`). When `truncated`, a string with the start of the JSON.
    pub value: Value,
    /// `undefined`, `number`, `string`, `object`, `array`, `node`, `function`, ...
    #[serde(rename = "type")]
    pub value_type: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Console messages logged while it ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub console: Vec<ConsoleEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ThrownError>,
    /// A dialog the code opened; the code waits until it is handled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogInfo>,
    /// Where the code stopped in the debugger (a breakpoint it ran into); it finishes when
    /// the page resumes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<Box<PauseContext>>,
}

impl Evaluation {
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(ctx) = &self.paused {
            out.push_str("still running: it stopped in the debugger\n");
            out.push_str(&ctx.to_text());
        }
        match (&self.error, &self.dialog) {
            _ if self.paused.is_some() => {}
            (Some(e), _) => {
                let _ = write!(out, "threw {}", e.message);
                for f in &e.stack {
                    let _ = write!(out, "\n    at {f}");
                }
            }
            (None, Some(d)) => {
                let _ = write!(
                    out,
                    "still running: it opened a {} dialog (\"{}\"); handle it with handle_dialog",
                    d.kind, d.message
                );
            }
            (None, None) => {
                if self.value_type == "undefined" {
                    out.push_str("undefined");
                } else if let Value::String(s) = &self.value
                    && self.truncated
                {
                    let _ = write!(out, "{s}… (cut; raise maxValueBytes)");
                } else {
                    out.push_str(&self.value.to_string());
                }
            }
        }
        if !self.console.is_empty() {
            out.push_str("\nconsole:");
            for e in &self.console {
                for line in e.to_text().lines() {
                    let _ = write!(out, "\n  {line}");
                }
            }
        }
        out
    }
}

/// A stylesheet `inject_css` added.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CssInjection {
    /// The `<style>` element's id, for `remove_css`.
    pub id: String,
    /// Style rules parsed.
    pub rules: usize,
    /// Elements at least one rule applies to.
    pub matched_elements: usize,
    /// Selectors with how many elements each matches (the first 10).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub selectors: Vec<(String, usize)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl CssInjection {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "injected {} ({} rule(s), {} element(s) affected)",
            self.id, self.rules, self.matched_elements
        );
        for (sel, n) in &self.selectors {
            let _ = write!(out, "\n  {sel}: {n}");
        }
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

/// What `remove_css` took away.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CssRemoval {
    /// The stylesheet removed.
    pub id: String,
    /// Stylesheets devlens injected that are still in the page.
    pub remaining: Vec<String>,
}

impl CssRemoval {
    pub fn to_text(&self) -> String {
        if self.remaining.is_empty() {
            format!("removed {}; no injected stylesheet left", self.id)
        } else {
            format!(
                "removed {}; still injected: {}",
                self.id,
                self.remaining.join(", ")
            )
        }
    }
}

const SERIALIZE_FN: &str = r#"
function(max) {
  let budget = 5000;
  const seen = new WeakSet();
  const node = (n) => {
    if (n.nodeType === 1) {
      let s = '<' + n.tagName.toLowerCase();
      if (n.id) s += '#' + n.id;
      if (n.classList && n.classList.length) s += '.' + Array.from(n.classList).slice(0, 3).join('.');
      return s + '>';
    }
    if (n.nodeType === 3) return '#text "' + n.textContent.slice(0, 40) + '"';
    return n.nodeName;
  };
  const walk = (v, depth) => {
    if (--budget < 0) return '[…]';
    if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
    if (typeof v === 'bigint') return v.toString() + 'n';
    if (typeof v === 'undefined') return undefined;
    if (typeof v === 'symbol') return v.toString();
    if (typeof v === 'function') return '[function ' + (v.name || 'anonymous') + ']';
    if (typeof Node !== 'undefined' && v instanceof Node) return node(v);
    if (v instanceof Error) return String(v);
    if (seen.has(v)) return '[circular]';
    if (depth > 6) return Array.isArray(v) ? '[array(' + v.length + ')]' : '[object]';
    seen.add(v);
    if (v instanceof Date) return isNaN(v) ? 'Invalid Date' : v.toISOString();
    if (v instanceof RegExp) return String(v);
    if (v instanceof Map) return { '[map]': Array.from(v.entries()).slice(0, 50).map(([k, x]) => [walk(k, depth + 1), walk(x, depth + 1)]) };
    if (v instanceof Set) return Array.from(v).slice(0, 100).map((x) => walk(x, depth + 1));
    if (Array.isArray(v) || ArrayBuffer.isView(v)) {
      const arr = Array.from(Array.prototype.slice.call(v, 0, 200), (x) => walk(x, depth + 1));
      if (v.length > 200) arr.push('… ' + (v.length - 200) + ' more');
      return arr;
    }
    if (typeof v.toJSON === 'function') { try { return walk(v.toJSON(), depth + 1); } catch (e) {} }
    const out = {};
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      if (i >= 100) { out['…'] = (keys.length - 100) + ' more keys'; break; }
      try { out[keys[i]] = walk(v[keys[i]], depth + 1); } catch (e) { out[keys[i]] = '[unreadable]'; }
    }
    return out;
  };
  const json = JSON.stringify(walk(this, 0));
  return json === undefined ? 'null' : json;
}
"#;

const INJECT_CSS_FN: &str = r#"
function(css, id) {
  const style = document.createElement('style');
  style.id = id;
  style.setAttribute('data-devlens', '');
  style.textContent = css;
  (document.head || document.documentElement).appendChild(style);
  const rules = [];
  const matched = new Set();
  const visit = (list) => {
    for (const r of Array.from(list || [])) {
      if (r.selectorText) {
        let n = 0;
        try { const els = document.querySelectorAll(r.selectorText); n = els.length; els.forEach((e) => matched.add(e)); } catch (e) {}
        rules.push([r.selectorText, n]);
      } else if (r.cssRules) {
        visit(r.cssRules);
      }
    }
  };
  try { visit(style.sheet && style.sheet.cssRules); } catch (e) {}
  return { rules, matched: matched.size };
}
"#;

impl Tab {
    /// Evaluates JavaScript in the page like the DevTools console.
    pub async fn evaluate(
        &self,
        expression: &str,
        options: &EvaluateOptions,
    ) -> Result<Evaluation> {
        self.guard()?;
        if expression.trim().is_empty() {
            return Err(BrowserError::InvalidInput(
                "give the JavaScript to evaluate".into(),
            ));
        }
        let limit = options
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(Duration::from_millis(100), MAX_TIMEOUT);
        let max = options
            .max_value_bytes
            .unwrap_or(DEFAULT_MAX_VALUE)
            .clamp(64, MAX_VALUE);
        let console_mark = self.state().console_mut().mark();
        let tab = self.clone();
        // Promises never settle while the page is paused (no microtasks run): evaluate plainly.
        let paused = self.is_paused();
        let params = json!({
            "expression": expression,
            "replMode": !paused,
            "awaitPromise": !paused,
            "userGesture": true,
            "returnByValue": false,
            "objectGroup": "devlens",
        });
        let answer = if paused {
            // A paused page still evaluates (in global scope, inside the pause) and nothing
            // it runs can pause again, so only the time limit applies.
            match tokio::time::timeout(limit, tab.call(Raw::new("Runtime.evaluate", params))).await
            {
                Ok(answer) => answer.map(Some),
                Err(_) => Err(BrowserError::Timeout {
                    what: "the evaluation".into(),
                    after: limit,
                    hint: None,
                }),
            }
        } else {
            self.run_blocking("the evaluation", limit, async move {
                tab.call(Raw::new("Runtime.evaluate", params)).await
            })
            .await
        };
        let answer = match answer {
            Err(BrowserError::Timeout { .. }) => {
                // Stop a runaway script so the page is usable again.
                let _ = self
                    .call(Raw::new("Runtime.terminateExecution", json!({})))
                    .await;
                return Err(BrowserError::Timeout {
                    what: "the evaluation to finish".into(),
                    after: limit,
                    hint: Some("It was stopped. An endless loop, or a promise that never settles? Raise timeoutMs for slow work.".into()),
                });
            }
            other => other?,
        };
        let Some(answer) = answer else {
            return Ok(self.interrupted(console_mark).await);
        };
        // Like `await` at the end: a promise the code returns is settled before answering.
        let answer = match answer["result"].get("subtype").and_then(Value::as_str) {
            Some("promise") if answer.get("exceptionDetails").is_none() && !paused => {
                let id = answer["result"]["objectId"].clone();
                let tab = self.clone();
                let settled = self
                    .run_blocking("the promise to settle", limit, async move {
                        tab.call(Raw::new(
                            "Runtime.awaitPromise",
                            json!({ "promiseObjectId": id, "returnByValue": false }),
                        ))
                        .await
                    })
                    .await;
                match settled {
                    Ok(Some(v)) => v,
                    Ok(None) => return Ok(self.interrupted(console_mark).await),
                    Err(BrowserError::Timeout { .. }) => {
                        return Err(BrowserError::Timeout {
                            what: "the returned promise to settle".into(),
                            after: limit,
                            hint: Some("Raise timeoutMs if the work is slow.".into()),
                        });
                    }
                    Err(e) => return Err(e),
                }
            }
            _ => answer,
        };
        let mut evaluation = Evaluation {
            value: Value::Null,
            value_type: "undefined".into(),
            truncated: false,
            console: Vec::new(),
            error: None,
            dialog: None,
            paused: None,
        };
        if let Some(ex) = answer.get("exceptionDetails") {
            evaluation.error = Some(thrown(ex, &self.url()));
            evaluation.value_type = "error".into();
        } else {
            let result = &answer["result"];
            let ty = result
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("undefined");
            let subtype = result.get("subtype").and_then(Value::as_str);
            evaluation.value_type = match (ty, subtype) {
                ("object", Some("null")) => "null".into(),
                ("object", Some(s)) => s.to_string(),
                (t, _) => t.to_string(),
            };
            if let Some(object_id) = result.get("objectId").and_then(Value::as_str) {
                let json = self
                    .call_on(object_id, SERIALIZE_FN, json!([max]))
                    .await
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "null".into());
                if json.len() > max {
                    evaluation.value = Value::String(prefix_bytes(&json, max).to_string());
                    evaluation.truncated = true;
                } else {
                    evaluation.value = serde_json::from_str(&json).unwrap_or(Value::String(json));
                }
            } else if let Some(u) = result.get("unserializableValue").and_then(Value::as_str) {
                evaluation.value = Value::String(u.to_string());
            } else if let Some(v) = result.get("value") {
                let text = v.to_string();
                if text.len() > max {
                    evaluation.value = Value::String(prefix_bytes(&text, max).to_string());
                    evaluation.truncated = true;
                } else {
                    evaluation.value = v.clone();
                }
            }
        }
        let _ = self
            .call(Raw::new(
                "Runtime.releaseObjectGroup",
                json!({ "objectGroup": "devlens" }),
            ))
            .await;
        // Console events reach the tab's collector a moment after the answer; the round trip
        // above flushed them to it, and it says when they are recorded.
        self.state().catch_up().await;
        evaluation.console = self.console_since(console_mark);
        Ok(evaluation)
    }

    /// The answer when a dialog or a breakpoint stopped the code midway.
    pub(crate) async fn interrupted(&self, console_mark: u64) -> Evaluation {
        let dialog = self.open_dialog();
        Evaluation {
            value: Value::Null,
            value_type: "pending".into(),
            truncated: false,
            console: self.console_since(console_mark),
            error: None,
            dialog,
            paused: self.pause_context_if_paused().await.map(Box::new),
        }
    }

    fn console_since(&self, mark: u64) -> Vec<ConsoleEntry> {
        self.state()
            .console_mut()
            .since(mark, ConsoleLevel::Debug, CONSOLE_ITEMS)
            .0
    }

    /// Adds a stylesheet to the page and says how many elements its rules match.
    pub async fn inject_css(&self, css: &str) -> Result<CssInjection> {
        self.guard_running("inject_css")?;
        if css.trim().is_empty() {
            return Err(BrowserError::InvalidInput("give the CSS to inject".into()));
        }
        let id = {
            let mut p = self.state().page_state();
            p.css_counter += 1;
            format!("devlens-css-{}", p.css_counter)
        };
        let v = self.call_fn(INJECT_CSS_FN, json!([css, id])).await?;
        let rules: Vec<(String, usize)> = v
            .get("rules")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|r| {
                        Some((
                            truncate(r.get(0)?.as_str()?, 80),
                            r.get(1)?.as_u64()? as usize,
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut notes = Vec::new();
        if rules.is_empty() {
            notes.push("no style rule was parsed: check the CSS syntax (or the page's Content-Security-Policy blocks inline styles)".into());
        }
        let unmatched: Vec<&str> = rules
            .iter()
            .filter(|(_, n)| *n == 0)
            .map(|(s, _)| s.as_str())
            .take(5)
            .collect();
        if !unmatched.is_empty() && !rules.is_empty() {
            notes.push(format!(
                "no element matches (now): {}",
                unmatched.join(", ")
            ));
        }
        Ok(CssInjection {
            id,
            rules: rules.len(),
            matched_elements: v.get("matched").and_then(Value::as_u64).unwrap_or(0) as usize,
            selectors: rules.into_iter().take(10).collect(),
            notes,
        })
    }

    /// Removes a stylesheet `inject_css` added.
    pub async fn remove_css(&self, id: &str) -> Result<CssRemoval> {
        self.guard_running("remove_css")?;
        let id = id.trim();
        if id.is_empty() {
            return Err(BrowserError::InvalidInput(
                "give the id inject_css answered with (e.g. devlens-css-1)".into(),
            ));
        }
        let v = self
            .call_fn(
                "function(id) { const all = () => Array.from(document.querySelectorAll('style[data-devlens]')).map((s) => s.id); const s = document.getElementById(id); if (!s || !s.hasAttribute('data-devlens')) return { removed: false, remaining: all() }; s.remove(); return { removed: true, remaining: all() }; }",
                json!([id]),
            )
            .await?;
        let remaining: Vec<String> = v
            .get("remaining")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .take(20)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if v.get("removed") == Some(&Value::Bool(true)) {
            return Ok(CssRemoval {
                id: id.to_string(),
                remaining,
            });
        }
        let injected = if remaining.is_empty() {
            "none is injected now".to_string()
        } else {
            format!("injected now: {}", remaining.join(", "))
        };
        Err(BrowserError::InvalidInput(format!(
            "no stylesheet `{id}` injected in this page ({injected}; injected styles go away on navigation)"
        )))
    }
}

/// An exception from `Runtime.evaluate` (`ExceptionDetails` JSON).
pub(crate) fn thrown(ex: &Value, page_url: &str) -> ThrownError {
    let description = ex
        .get("exception")
        .and_then(|e| e.get("description"))
        .and_then(Value::as_str);
    let message = description
        .map(|d| d.lines().next().unwrap_or("").to_string())
        .or_else(|| {
            ex.get("exception").map(|e| {
                format!(
                    "Uncaught {}",
                    crate::records::console::format_value(e, false)
                )
            })
        })
        .unwrap_or_else(|| {
            ex.get("text")
                .and_then(Value::as_str)
                .unwrap_or("exception")
                .to_string()
        });
    let mut stack = stack_frames(ex.get("stackTrace"), page_url);
    if stack.is_empty()
        && let Some(d) = description
    {
        stack = d
            .lines()
            .skip(1)
            .filter_map(|l| l.trim().strip_prefix("at "))
            .take(8)
            .map(str::to_string)
            .collect();
    }
    ThrownError { message, stack }
}
