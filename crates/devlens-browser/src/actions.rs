//! Actions on a page — click, fill, type, press, hover, select, scroll, wait, dialogs — each
//! answering with what changed: a new URL, an HTTP status, new console errors, failed requests,
//! a dialog, a new tab.
//!
//! Input is real (CDP `Input.*` events at the element's centre, after scrolling it into view and
//! checking that nothing covers it), so pages see what a user's mouse and keyboard produce.
//!
//! Anything that runs page code can block: an `alert()` in a click handler stops the page until
//! the dialog is handled (and, with the debugger, a breakpoint until it resumes). Such steps run
//! as their own task, raced against the tab's blockers, so the call returns at once with
//! what blocked it; the step finishes in the background when the page resumes.

use std::fmt::Write as _;
use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cdp::Raw;
use crate::console::{ConsoleEntry, ConsoleLevel};
use crate::dom::{ElementTarget, Resolved, page_fn};
use crate::error::{BrowserError, Result};
use crate::network::NetworkEntry;
use crate::targets::{Blocker, Tab, TabInfo};
use crate::text::{collapse, truncate};

/// How long the input events of one action may take before the page counts as stuck.
const ACTION_LIMIT: Duration = Duration::from_secs(10);
/// How long an action waits for the navigation it started.
const NAVIGATION_SETTLE: Duration = Duration::from_secs(10);
/// How long an action waits for the requests it started.
const NETWORK_SETTLE: Duration = Duration::from_secs(2);
/// How long a navigation the page asked for may take to start loading.
const NAVIGATION_START: Duration = Duration::from_secs(1);
/// At most this long for the page to finish the task an input started.
const PAGE_TURN: Duration = Duration::from_millis(250);
/// Default and longest `wait_for` timeout.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(5);
pub const MAX_WAIT: Duration = Duration::from_secs(60);
/// Console errors and failed requests listed in an outcome.
const OUTCOME_ITEMS: usize = 5;
/// Longer text is inserted at once instead of key by key.
const TYPE_KEYS_MAX: usize = 2000;

/// A JavaScript dialog (alert, confirm, prompt, beforeunload) that is open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DialogInfo {
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_prompt: Option<String>,
}

/// What an action did and what changed because of it.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionOutcome {
    /// What was done, e.g. `clicked button "Save"`.
    pub action: String,
    /// The new URL, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The new title, when the URL changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// HTTP status of the new document, when the action loaded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Tabs the action opened (popups, target=_blank links).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub new_tabs: Vec<TabInfo>,
    /// Console errors and uncaught exceptions since the action started (newest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub console_errors: Vec<ConsoleEntry>,
    #[serde(skip_serializing_if = "is_zero")]
    pub console_errors_omitted: usize,
    /// Requests that failed since the action started (newest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_requests: Vec<NetworkEntry>,
    #[serde(skip_serializing_if = "is_zero")]
    pub failed_requests_omitted: usize,
    /// A dialog the action opened; the page waits until it is handled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogInfo>,
    /// Where the page paused in the debugger (a breakpoint the action ran into).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<Box<crate::debugger::PauseContext>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub(crate) page_url: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ActionOutcome {
    pub fn to_text(&self) -> String {
        let mut out = self.action.clone();
        if let Some(url) = &self.url {
            let _ = write!(out, "\n→ now at {url}");
            if let Some(status) = self.status {
                let _ = write!(out, " (HTTP {status})");
            }
            if let Some(title) = self.title.as_ref().filter(|t| !t.is_empty()) {
                let _ = write!(out, " \"{}\"", truncate(title, 80));
            }
        }
        render_changes(
            &mut out,
            &self.console_errors,
            self.console_errors_omitted,
            &self.failed_requests,
            self.failed_requests_omitted,
            self.dialog.as_ref(),
            &self.page_url,
        );
        for tab in &self.new_tabs {
            let _ = write!(out, "\nopened a new tab: {}", tab.to_line().trim());
        }
        if let Some(paused) = &self.paused {
            out.push('\n');
            out.push_str(&paused.to_text());
        }
        for note in &self.notes {
            let _ = write!(out, "\nnote: {note}");
        }
        if self.url.is_none()
            && self.paused.is_none()
            && self.console_errors.is_empty()
            && self.failed_requests.is_empty()
            && self.dialog.is_none()
            && self.new_tabs.is_empty()
        {
            out.push_str(" — no navigation, console errors, failed requests or dialogs followed");
        }
        out
    }
}

/// The lines every smart response shares.
pub(crate) fn render_changes(
    out: &mut String,
    errors: &[ConsoleEntry],
    errors_omitted: usize,
    failed: &[NetworkEntry],
    failed_omitted: usize,
    dialog: Option<&DialogInfo>,
    page_url: &str,
) {
    if let Some(d) = dialog {
        let _ = write!(
            out,
            "\n{} dialog open: \"{}\" — the page waits until it is accepted or dismissed (handle_dialog)",
            d.kind, d.message
        );
    }
    if !errors.is_empty() {
        let _ = write!(out, "\nconsole errors ({}):", errors.len() + errors_omitted);
        for e in errors {
            for line in e.to_text().lines() {
                let _ = write!(out, "\n  {line}");
            }
        }
        if errors_omitted > 0 {
            let _ = write!(out, "\n  … {errors_omitted} more (get_console_logs)");
        }
    }
    if !failed.is_empty() {
        let _ = write!(
            out,
            "\nfailed requests ({}):",
            failed.len() + failed_omitted
        );
        for r in failed {
            let _ = write!(out, "\n  {}", r.to_line(page_url));
        }
        if failed_omitted > 0 {
            let _ = write!(
                out,
                "\n  … {failed_omitted} more (list_network_requests failedOnly)"
            );
        }
    }
}

/// Which mouse button.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    #[default]
    Left,
    Right,
    Middle,
}

/// How to click.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ClickOptions {
    pub button: MouseButton,
    /// Double-click.
    pub double: bool,
}

/// Where to scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
    Top,
    Bottom,
}

/// A scroll: an element into view, or the page (or a scrollable element) in a direction.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ScrollRequest {
    /// Without a direction: scroll this element into view. With one: scroll inside it.
    pub target: Option<ElementTarget>,
    pub direction: Option<ScrollDirection>,
    /// Pixels (default: most of the viewport).
    pub amount: Option<u32>,
}

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
    fn describe(&self) -> String {
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
    pub paused: Option<Box<crate::debugger::PauseContext>>,
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

/// The tab's counters before an action, to tell what the action changed.
#[derive(Debug, Clone)]
pub(crate) struct Mark {
    pub console: u64,
    pub network: u64,
    pub navigations: u64,
    pub loads: u64,
    pub url: String,
    navigation_requests: u64,
    same_document: u64,
    tabs: Vec<String>,
}

const POINT_FN: &str = r#"
function(checkCovered) {
  __PRELUDE__
  const el = this;
  const info = { label: __label(el) };
  if (!el.isConnected) { info.error = 'it is no longer in the page'; return info; }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (!__visible(el)) { info.error = 'it is not visible (hidden, zero-sized or transparent)'; return info; }
  if (el.disabled) { info.error = 'it is disabled'; return info; }
  // An element of a same-origin frame can come from the page's context: use its own window.
  const win = el.ownerDocument.defaultView || window;
  info.hidden = el.ownerDocument.visibilityState === 'hidden';
  info.framed = win !== win.top;
  const r = el.getBoundingClientRect();
  info.x = r.left + r.width / 2;
  info.y = r.top + r.height / 2;
  if (checkCovered) {
    // Inside a shadow root the document would answer with the host: ask the element's root.
    const root = el.getRootNode();
    const top = (root.elementFromPoint ? root : document).elementFromPoint(info.x, info.y);
    if (top && top !== el && !el.contains(top) && !top.contains(el) && top.control !== el) {
      info.error = 'it is covered by ' + __label(top) + '; close or move that first';
    }
  }
  return info;
}
"#;

const FILL_PREP_FN: &str = r#"
function(value) {
  __PRELUDE__
  const el = this;
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || 'text').toLowerCase();
  const info = { label: __label(el), type };
  if (!el.isConnected) { info.error = 'it is no longer in the page'; return info; }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (tag === 'select') { info.kind = 'select'; return info; }
  if (tag === 'input' && (type === 'checkbox' || type === 'radio')) { info.error = 'it is a ' + type + '; click it to toggle it'; return info; }
  if (tag === 'input' && type === 'file') { info.error = 'it is a file input; devlens cannot pick files yet'; return info; }
  const textual = tag === 'textarea' || el.isContentEditable || (tag === 'input' && !['button', 'submit', 'reset', 'image', 'hidden'].includes(type));
  if (!textual) { info.error = 'it is not a text field (input, textarea, select or contenteditable)'; return info; }
  if (el.disabled) { info.error = 'it is disabled'; return info; }
  if (el.readOnly) { info.error = 'it is read-only'; return info; }
  if (!__visible(el)) { info.error = 'it is not visible'; return info; }
  if (tag === 'input' && ['date', 'time', 'datetime-local', 'month', 'week', 'range', 'color'].includes(type)) {
    // The keyboard cannot fill these; set the value as their picker would.
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    setter.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    info.kind = 'direct';
    return info;
  }
  el.focus();
  if (el.isContentEditable) {
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    const sel = (el.ownerDocument.defaultView || window).getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  } else {
    el.select();
  }
  info.kind = 'text';
  return info;
}
"#;

const VALUE_FN: &str =
    "function() { return this.isContentEditable ? this.innerText : String(this.value ?? ''); }";

const FOCUS_FN: &str = r#"
function() {
  __PRELUDE__
  const el = this;
  const info = { label: __label(el) };
  if (!el.isConnected) { info.error = 'it is no longer in the page'; return info; }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (el.disabled) { info.error = 'it is disabled'; return info; }
  el.focus();
  // The element's own root: in a shadow root the document would answer with the host.
  const active = el.getRootNode().activeElement;
  if (active !== el && !el.contains(active)) { info.error = 'it cannot take keyboard focus'; return info; }
  try { const n = (el.value || '').length; if (el.setSelectionRange) el.setSelectionRange(n, n); } catch (e) {}
  return info;
}
"#;

const SELECT_FN: &str = r#"
function(wanted) {
  __PRELUDE__
  const el = this;
  const info = { label: __label(el) };
  if (el.tagName.toLowerCase() !== 'select') { info.error = 'it is not a <select>'; return info; }
  if (el.disabled) { info.error = 'it is disabled'; return info; }
  const opts = Array.from(el.options);
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const chosen = [];
  const missing = [];
  for (const w of wanted) {
    const o = opts.find((o) => o.value === w) || opts.find((o) => norm(o.label) === norm(w));
    if (o) chosen.push(o); else missing.push(w);
  }
  info.options = opts.slice(0, 40).map((o) => o.label.trim() === o.value ? o.value : o.label.trim() + ' (' + o.value + ')');
  if (missing.length) { info.missing = missing; return info; }
  if (!el.multiple && chosen.length > 1) { info.error = 'it takes one option, not ' + chosen.length; return info; }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  for (const o of opts) o.selected = chosen.includes(o);
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  info.selected = chosen.map((o) => o.label.trim());
  return info;
}
"#;

const SCROLL_FN: &str = r#"
function(direction, amount) {
  __PRELUDE__
  const isEl = this && this.nodeType === 1;
  const el = isEl ? this : null;
  const info = { label: el ? __label(el) : 'the page' };
  if (el && !direction) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  } else {
    const box = el ? el : document.scrollingElement || document.documentElement;
    const stepY = amount || Math.round((el ? el.clientHeight : window.innerHeight) * 0.8);
    const stepX = amount || Math.round((el ? el.clientWidth : window.innerWidth) * 0.8);
    const by = { up: [0, -stepY], down: [0, stepY], left: [-stepX, 0], right: [stepX, 0] }[direction];
    if (direction === 'top') box.scrollTo({ top: 0, behavior: 'instant' });
    else if (direction === 'bottom') box.scrollTo({ top: box.scrollHeight, behavior: 'instant' });
    else if (by) box.scrollBy({ left: by[0], top: by[1], behavior: 'instant' });
  }
  const box = el && direction ? el : document.scrollingElement || document.documentElement;
  info.x = Math.round(box.scrollLeft);
  info.y = Math.round(box.scrollTop);
  info.height = Math.round(box.scrollHeight);
  info.viewport = Math.round(el && direction ? el.clientHeight : window.innerHeight);
  return info;
}
"#;

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
    /// The counters before an action.
    pub(crate) async fn mark(&self) -> Mark {
        let (console, network) = (
            self.state().console_mut().mark(),
            self.state().network_mut().mark(),
        );
        let (navigations, loads, url, navigation_requests, same_document) = {
            let p = self.state().page_state();
            (
                p.navigations,
                p.loads,
                p.url.clone(),
                p.navigation_requests,
                p.same_document,
            )
        };
        let tabs = self
            .conn
            .registry()
            .tabs
            .iter()
            .map(|t| t.target_id.clone())
            .collect();
        Mark {
            console,
            network,
            navigation_requests,
            same_document,
            navigations,
            loads,
            url,
            tabs,
        }
    }

    /// Runs a step that may block on page code as its own task, raced against the tab's
    /// blockers. `Ok(None)`: a blocker (a dialog) appeared first; the step goes on in the
    /// background and ends when the page resumes.
    pub(crate) async fn run_blocking<T, F>(
        &self,
        what: &str,
        limit: Duration,
        step: F,
    ) -> Result<Option<T>>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        let mut blocker = self.state().blocker.subscribe();
        let mut task = tokio::spawn(step);
        tokio::select! {
            joined = &mut task => match joined {
                Ok(result) => result.map(Some),
                Err(e) => Err(BrowserError::protocol(what, e)),
            },
            changed = blocker.wait_for(Option::is_some) => {
                if changed.is_ok() {
                    Ok(None)
                } else {
                    task.abort();
                    Err(BrowserError::TabGone { tab: self.url() })
                }
            }
            _ = tokio::time::sleep(limit) => {
                task.abort();
                Err(BrowserError::Timeout {
                    what: format!("the page to finish {what}"),
                    after: limit,
                    hint: Some("A long-running event handler may be blocking the page; check the console and try evaluate.".into()),
                })
            }
        }
    }

    /// The current blocker, if any.
    pub(crate) fn blocker(&self) -> Option<Blocker> {
        self.state().blocker.borrow().clone()
    }

    /// The dialog that blocks the page, if one does.
    pub(crate) fn open_dialog(&self) -> Option<DialogInfo> {
        match self.blocker()? {
            Blocker::Dialog(d) => Some(d),
            Blocker::Paused(_) => None,
        }
    }

    /// Waits until what an action started is done: a navigation loaded, requests finished.
    /// Returns notes about what was still going on when it stopped waiting.
    pub(crate) async fn settle(&self, mark: &Mark) -> Vec<String> {
        self.page_turn().await;
        let start = tokio::time::Instant::now();
        loop {
            if self.blocker().is_some() || self.check_alive().is_err() {
                return Vec::new();
            }
            let (loading, navigation_pending) = {
                let p = self.state().page_state();
                // Asked for, but neither loading nor done yet (the browser is still fetching
                // the new document's headers).
                let pending = p.navigation_requests > mark.navigation_requests
                    && p.navigations == mark.navigations
                    && p.same_document == mark.same_document
                    && p.loads == mark.loads;
                (p.loading, pending)
            };
            let in_flight = self.state().network_mut().in_flight_since(mark.network);
            if !loading && in_flight == 0 && !navigation_pending {
                return Vec::new();
            }
            let limit = if loading {
                NAVIGATION_SETTLE
            } else if navigation_pending && in_flight == 0 {
                // A navigation that never starts (a 204, a download, a cancelled unload).
                NAVIGATION_START
            } else {
                NETWORK_SETTLE
            };
            if start.elapsed() > limit {
                return if navigation_pending && !loading && in_flight == 0 {
                    Vec::new()
                } else {
                    vec![if loading {
                        format!("the page was still loading after {} s", limit.as_secs())
                    } else {
                        format!(
                            "{in_flight} request(s) still pending after {} s",
                            limit.as_secs()
                        )
                    }]
                };
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Lets the page finish one task after an input: its event handlers have run, and what
    /// they started (requests, a navigation) has been reported, without a fixed sleep. Bounded,
    /// and cut short by a dialog or a pause, which stop the page from answering.
    async fn page_turn(&self) {
        let mut blocker = self.state().blocker.subscribe();
        let turn = self.call(Raw::new(
            "Runtime.evaluate",
            json!({ "expression": "new Promise(r => setTimeout(r))", "awaitPromise": true }),
        ));
        tokio::select! {
            _ = tokio::time::timeout(PAGE_TURN, turn) => {}
            _ = blocker.wait_for(Option::is_some) => {}
        }
        // The events that came before the answer are queued; let the tab's listener record them.
        tokio::time::sleep(Duration::from_millis(3)).await;
    }

    /// What changed since `mark`.
    pub(crate) async fn outcome(
        &self,
        mark: &Mark,
        action: String,
        mut notes: Vec<String>,
    ) -> ActionOutcome {
        let main_frame = self.state().page_state().main_frame.clone();
        let navigated = self.state().page_state().navigations > mark.navigations;
        let (console_errors, console_errors_omitted) =
            self.state()
                .console_mut()
                .since(mark.console, ConsoleLevel::Error, OUTCOME_ITEMS);
        let (failed_requests, failed_requests_omitted, document) = {
            let log = self.state().network_mut();
            let (failed, omitted) = log.failed_since(mark.network, OUTCOME_ITEMS);
            (
                failed,
                omitted,
                log.main_document_since(mark.network, main_frame.as_deref()),
            )
        };
        let dialog = self.open_dialog();
        let (mut url, mut title) = (None, None);
        let current = self.url();
        if current != mark.url || navigated {
            url = Some(current.clone());
            if let Ok(info) = self.info().await {
                title = Some(info.title);
            }
        }
        let new_tabs = self.new_tabs(mark).await;
        if !new_tabs.is_empty() {
            notes.push("switch to a new tab with target action `switch` to act on it".into());
        }
        ActionOutcome {
            action,
            url,
            title,
            status: if navigated {
                document.and_then(|d| d.status)
            } else {
                None
            },
            new_tabs,
            console_errors,
            console_errors_omitted,
            failed_requests,
            failed_requests_omitted,
            dialog,
            paused: self.pause_context_if_paused().await.map(Box::new),
            notes,
            page_url: current,
        }
    }

    /// Tabs that appeared since `mark`, once they know where they are going (a popup starts
    /// as about:blank).
    async fn new_tabs(&self, mark: &Mark) -> Vec<TabInfo> {
        let mut new_tabs = Vec::new();
        for _ in 0..20 {
            let Ok(targets) = self.conn.sync_tabs().await else {
                return new_tabs;
            };
            // Only tabs this one opened: others may come from other calls meanwhile.
            let opened: Vec<&str> = targets
                .iter()
                .filter(|t| t.opener.as_deref() == Some(self.id()))
                .map(|t| t.id.as_str())
                .collect();
            new_tabs = self
                .conn
                .tab_list(&targets)
                .tabs
                .into_iter()
                .filter(|t| !mark.tabs.contains(&t.id) && opened.contains(&t.id.as_str()))
                .collect();
            if new_tabs
                .iter()
                .all(|t| !t.url.is_empty() && t.url != "about:blank")
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        new_tabs
    }

    async fn finish(&self, mark: &Mark, action: String, mut notes: Vec<String>) -> ActionOutcome {
        notes.extend(self.settle(mark).await);
        self.outcome(mark, action, notes).await
    }

    /// Scrolls the element into view and finds the point to click, or says why it cannot.
    async fn point(
        &self,
        el: &Resolved,
        action: &'static str,
        check_covered: bool,
    ) -> Result<(f64, f64, String)> {
        let info = self
            .call_el(el, &page_fn(POINT_FN), json!([check_covered]))
            .await?;
        let label = str_of(&info, "label");
        if let Some(reason) = info.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NotInteractable {
                action,
                element: label,
                reason: reason.to_string(),
            });
        }
        let mut x = info.get("x").and_then(Value::as_f64).unwrap_or(0.0);
        let mut y = info.get("y").and_then(Value::as_f64).unwrap_or(0.0);
        // Inside an iframe the page function measures in the frame's viewport: ask Chrome
        // where the element is in the tab's.
        if info.get("framed").and_then(Value::as_bool) == Some(true) {
            let [bx, by, bw, bh] = self.viewport_box(&el.realm, &el.object_id).await?;
            if bw > 0.0 && bh > 0.0 {
                (x, y) = (bx + bw / 2.0, by + bh / 2.0);
            }
        }
        if info.get("hidden").and_then(Value::as_bool) == Some(true) {
            self.bring_to_front().await?;
        }
        Ok((x, y, label))
    }

    /// A tab in the background (another tab of its window in front, e.g. a popup it opened)
    /// gets no frames, and Chrome holds input events until it does: bring it to the front.
    async fn bring_to_front(&self) -> Result<()> {
        self.call(Raw::new("Page.bringToFront", json!({})))
            .await
            .map(drop)
    }

    async fn front_if_hidden(&self) -> Result<()> {
        let v = self.eval_raw("document.visibilityState", true).await?;
        if v["result"].get("value").and_then(Value::as_str) == Some("hidden") {
            self.bring_to_front().await?;
        }
        Ok(())
    }

    /// Clicks an element (a snapshot ref or a CSS selector) with real mouse events.
    pub async fn click(
        &self,
        target: &ElementTarget,
        options: &ClickOptions,
    ) -> Result<ActionOutcome> {
        self.guard_running("a click")?;
        let mark = self.mark().await;
        let el = self.resolve(target).await?;
        let (x, y, label) = self.point(&el, "click", true).await?;
        let tab = self.clone();
        let opts = options.clone();
        self.run_blocking("the click", ACTION_LIMIT, async move {
            tab.mouse_click(x, y, &opts).await
        })
        .await?;
        let mut notes = Vec::new();
        if el.matches > 1 {
            notes.push(format!(
                "{} elements match {}; clicked the first visible one",
                el.matches,
                target.describe()
            ));
        }
        let verb = match (options.double, options.button) {
            (true, _) => "double-clicked",
            (false, MouseButton::Right) => "right-clicked",
            (false, MouseButton::Middle) => "middle-clicked",
            (false, MouseButton::Left) => "clicked",
        };
        Ok(self.finish(&mark, format!("{verb} {label}"), notes).await)
    }

    async fn mouse(
        &self,
        kind: &str,
        x: f64,
        y: f64,
        button: &str,
        buttons: u32,
        clicks: u32,
    ) -> Result<()> {
        self.call(Raw::new(
            "Input.dispatchMouseEvent",
            json!({
                "type": kind, "x": x, "y": y,
                "button": button, "buttons": buttons, "clickCount": clicks,
            }),
        ))
        .await
        .map(drop)
    }

    async fn mouse_click(&self, x: f64, y: f64, options: &ClickOptions) -> Result<()> {
        let (button, mask) = match options.button {
            MouseButton::Left => ("left", 1),
            MouseButton::Right => ("right", 2),
            MouseButton::Middle => ("middle", 4),
        };
        self.mouse("mouseMoved", x, y, "none", 0, 0).await?;
        let rounds = if options.double { 2 } else { 1 };
        for count in 1..=rounds {
            self.mouse("mousePressed", x, y, button, mask, count)
                .await?;
            self.mouse("mouseReleased", x, y, button, 0, count).await?;
        }
        Ok(())
    }

    /// Moves the mouse over an element (hover styles, menus, tooltips).
    pub async fn hover(&self, target: &ElementTarget) -> Result<ActionOutcome> {
        self.guard_running("hover")?;
        let mark = self.mark().await;
        let el = self.resolve(target).await?;
        let (x, y, label) = self.point(&el, "hover", false).await?;
        let tab = self.clone();
        self.run_blocking("the hover", ACTION_LIMIT, async move {
            tab.mouse("mouseMoved", x, y, "none", 0, 0).await
        })
        .await?;
        Ok(self
            .finish(&mark, format!("hovered {label}"), Vec::new())
            .await)
    }

    /// Replaces the value of a text field (input, textarea, contenteditable; a select picks the
    /// option) as typing would: focus, select all, insert.
    pub async fn fill(&self, target: &ElementTarget, value: &str) -> Result<ActionOutcome> {
        self.guard_running("fill")?;
        let el = self.resolve(target).await?;
        let mark = self.mark().await;
        let info = self
            .call_el(&el, &page_fn(FILL_PREP_FN), json!([value]))
            .await?;
        let label = str_of(&info, "label");
        if let Some(reason) = info.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NotInteractable {
                action: "fill",
                element: label,
                reason: reason.to_string(),
            });
        }
        let kind = str_of(&info, "kind");
        if kind == "select" {
            return self.select_option(target, &[value.to_string()]).await;
        }
        if kind == "text" {
            self.front_if_hidden().await?;
            let tab = self.clone();
            let text = value.to_string();
            let done = self
                .run_blocking("filling the field", ACTION_LIMIT, async move {
                    if text.is_empty() {
                        tab.key_press(&parse_key("Delete")?).await
                    } else {
                        tab.call(Raw::new("Input.insertText", json!({ "text": text })))
                            .await
                            .map(drop)
                    }
                })
                .await?;
            if done.is_none() {
                return Ok(self
                    .outcome(&mark, format!("started filling {label}"), Vec::new())
                    .await);
            }
        }
        let mut notes = Vec::new();
        let secret = str_of(&info, "type") == "password";
        if let Ok(Value::String(now)) = self.call_el(&el, VALUE_FN, Value::Null).await
            && now != value
        {
            notes.push(if secret {
                "the field does not hold the full value (maxlength or input filtering?)".to_string()
            } else {
                format!(
                    "the field now holds \"{}\", not the value given (maxlength, a mask or validation?)",
                    truncate(&now, 60)
                )
            });
        }
        let shown = if secret {
            "••••".to_string()
        } else {
            format!("\"{}\"", truncate(value, 60))
        };
        Ok(self
            .finish(&mark, format!("filled {label} with {shown}"), notes)
            .await)
    }

    /// Types text key by key into the focused element (or `target`, focused first), then
    /// presses Enter when `submit`.
    pub async fn type_text(
        &self,
        target: Option<&ElementTarget>,
        text: &str,
        submit: bool,
    ) -> Result<ActionOutcome> {
        self.guard_running("typing")?;
        let mark = self.mark().await;
        let mut label = String::from("the focused element");
        if let Some(target) = target {
            label = self.focus(target).await?;
        }
        self.front_if_hidden().await?;
        let tab = self.clone();
        let text_owned = text.to_string();
        let done = self
            .run_blocking(
                "typing",
                ACTION_LIMIT + Duration::from_millis(text.len() as u64 * 5),
                async move {
                    tab.type_keys(&text_owned).await?;
                    if submit {
                        tab.key_press(&parse_key("Enter")?).await?;
                    }
                    Ok(())
                },
            )
            .await?;
        let verb = if done.is_some() {
            "typed"
        } else {
            "started typing"
        };
        let action = format!(
            "{verb} \"{}\" into {label}{}",
            truncate(text, 60),
            if submit { " and pressed Enter" } else { "" }
        );
        Ok(self.finish(&mark, action, Vec::new()).await)
    }

    /// Presses a key or a combination (`Enter`, `Escape`, `ArrowDown`, `Control+A`,
    /// `Shift+Tab`), on `target` (focused first) or the focused element.
    pub async fn press_key(
        &self,
        key: &str,
        target: Option<&ElementTarget>,
    ) -> Result<ActionOutcome> {
        self.guard_running("a key press")?;
        let combo = parse_key(key)?;
        let mark = self.mark().await;
        if let Some(target) = target {
            self.focus(target).await?;
        }
        self.front_if_hidden().await?;
        let tab = self.clone();
        let c = combo.clone();
        self.run_blocking("the key press", ACTION_LIMIT, async move {
            tab.key_press(&c).await
        })
        .await?;
        Ok(self
            .finish(&mark, format!("pressed {}", combo.display), Vec::new())
            .await)
    }

    async fn focus(&self, target: &ElementTarget) -> Result<String> {
        let el = self.resolve(target).await?;
        let info = self.call_el(&el, &page_fn(FOCUS_FN), Value::Null).await?;
        let label = str_of(&info, "label");
        if let Some(reason) = info.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NotInteractable {
                action: "focus",
                element: label,
                reason: reason.to_string(),
            });
        }
        Ok(label)
    }

    async fn type_keys(&self, text: &str) -> Result<()> {
        if text.chars().count() > TYPE_KEYS_MAX {
            return self
                .call(Raw::new("Input.insertText", json!({ "text": text })))
                .await
                .map(drop);
        }
        for ch in text.chars() {
            match ch {
                '\n' => self.key_press(&parse_key("Enter")?).await?,
                '\t' => self.key_press(&parse_key("Tab")?).await?,
                '\r' => {}
                _ => {
                    let s = ch.to_string();
                    let def = key_definition(&s);
                    let mut down = json!({
                        "type": "keyDown", "key": s, "text": s, "unmodifiedText": s,
                    });
                    if let Some(def) = def {
                        down["code"] = json!(def.code);
                        down["windowsVirtualKeyCode"] = json!(def.key_code);
                    }
                    self.call(Raw::new("Input.dispatchKeyEvent", down.clone()))
                        .await?;
                    let mut up = down;
                    up["type"] = json!("keyUp");
                    if let Some(o) = up.as_object_mut() {
                        o.remove("text");
                        o.remove("unmodifiedText");
                    }
                    self.call(Raw::new("Input.dispatchKeyEvent", up)).await?;
                }
            }
        }
        Ok(())
    }

    async fn key_press(&self, combo: &KeyCombo) -> Result<()> {
        let mut modifiers = 0;
        for m in &combo.modifiers {
            modifiers |= m.bit;
            self.call(Raw::new(
                "Input.dispatchKeyEvent",
                json!({
                    "type": "rawKeyDown", "key": m.key, "code": m.code,
                    "windowsVirtualKeyCode": m.key_code, "modifiers": modifiers,
                }),
            ))
            .await?;
        }
        // Text only without Control/Alt/Meta: Control+A selects, it does not type "a".
        let text = combo.text.as_deref().filter(|_| modifiers & 0b111 == 0);
        let mut down = json!({
            "type": if text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": combo.key, "code": combo.code,
            "windowsVirtualKeyCode": combo.key_code, "modifiers": modifiers,
        });
        if let Some(t) = text {
            down["text"] = json!(t);
            down["unmodifiedText"] = json!(t);
        }
        self.call(Raw::new("Input.dispatchKeyEvent", down)).await?;
        self.call(Raw::new(
            "Input.dispatchKeyEvent",
            json!({
                "type": "keyUp", "key": combo.key, "code": combo.code,
                "windowsVirtualKeyCode": combo.key_code, "modifiers": modifiers,
            }),
        ))
        .await?;
        for m in combo.modifiers.iter().rev() {
            modifiers &= !m.bit;
            self.call(Raw::new(
                "Input.dispatchKeyEvent",
                json!({
                    "type": "keyUp", "key": m.key, "code": m.code,
                    "windowsVirtualKeyCode": m.key_code, "modifiers": modifiers,
                }),
            ))
            .await?;
        }
        Ok(())
    }

    /// Selects options of a `<select>` by value or visible label.
    pub async fn select_option(
        &self,
        target: &ElementTarget,
        values: &[String],
    ) -> Result<ActionOutcome> {
        self.guard_running("selecting an option")?;
        if values.is_empty() {
            return Err(BrowserError::InvalidInput(
                "give the option(s) to select, by value or by visible label".into(),
            ));
        }
        let mark = self.mark().await;
        let el = self.resolve(target).await?;
        let tab = self.clone();
        let wanted = json!([values]);
        let info = self
            .run_blocking("selecting the option", ACTION_LIMIT, async move {
                tab.call_el(&el, &page_fn(SELECT_FN), wanted).await
            })
            .await?;
        let Some(info) = info else {
            return Ok(self
                .outcome(&mark, format!("selected {}", values.join(", ")), Vec::new())
                .await);
        };
        let label = str_of(&info, "label");
        if let Some(reason) = info.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NotInteractable {
                action: "select an option of",
                element: label,
                reason: reason.to_string(),
            });
        }
        let options: Vec<String> = strings(&info, "options");
        let missing = strings(&info, "missing");
        if let Some(first) = missing.first() {
            let close =
                devlens_core::suggest::closest(first, options.iter().map(String::as_str), 3);
            let mut msg = format!("{label} has no option \"{first}\".");
            if !close.is_empty() {
                let _ = write!(msg, " Did you mean {}?", close.join(", "));
            }
            let _ = write!(msg, " Options: {}", options.join(", "));
            return Err(BrowserError::InvalidInput(truncate(&msg, 1500)));
        }
        let selected = strings(&info, "selected")
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(self
            .finish(&mark, format!("selected {selected} in {label}"), Vec::new())
            .await)
    }

    /// Scrolls an element into view, or the page (or a scrollable element) in a direction.
    pub async fn scroll(&self, request: &ScrollRequest) -> Result<ActionOutcome> {
        self.guard_running("scrolling")?;
        let mark = self.mark().await;
        let direction = request.direction.map(|d| match d {
            ScrollDirection::Up => "up",
            ScrollDirection::Down => "down",
            ScrollDirection::Left => "left",
            ScrollDirection::Right => "right",
            ScrollDirection::Top => "top",
            ScrollDirection::Bottom => "bottom",
        });
        if request.target.is_none() && direction.is_none() {
            return Err(BrowserError::InvalidInput(
                "say where to scroll: a direction (up, down, left, right, top, bottom) and/or an element to bring into view".into(),
            ));
        }
        let args = json!([direction, request.amount]);
        let function = page_fn(SCROLL_FN);
        let info = match &request.target {
            Some(t) => {
                let el = self.resolve(t).await?;
                self.call_el(&el, &function, args).await?
            }
            None => self.call_fn(&function, args).await?,
        };
        let label = str_of(&info, "label");
        let y = info.get("y").and_then(Value::as_i64).unwrap_or(0);
        let height = info.get("height").and_then(Value::as_i64).unwrap_or(0);
        let viewport = info.get("viewport").and_then(Value::as_i64).unwrap_or(0);
        let action = match direction {
            None => format!("scrolled {label} into view"),
            Some(d) => format!(
                "scrolled {}{}; now at {y} px of {height} px (viewport {viewport} px)",
                if request.target.is_some() {
                    format!("{label} ")
                } else {
                    String::new()
                },
                match d {
                    "top" | "bottom" => format!("to the {d}"),
                    _ => d.to_string(),
                }
            ),
        };
        Ok(self.finish(&mark, action, Vec::new()).await)
    }

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

    /// Accepts or dismisses the open JavaScript dialog (`prompt_text` answers a prompt).
    pub async fn handle_dialog(
        &self,
        accept: bool,
        prompt_text: Option<&str>,
    ) -> Result<ActionOutcome> {
        self.check_alive()?;
        let Some(Blocker::Dialog(dialog)) = self.blocker() else {
            return Err(BrowserError::NoDialog);
        };
        let mark = self.mark().await;
        let mut params = json!({ "accept": accept });
        if let Some(text) = prompt_text {
            params["promptText"] = json!(text);
        }
        self.call(Raw::new("Page.handleJavaScriptDialog", params))
            .await?;
        // Clear it now rather than when the closing event arrives: the page is free again.
        self.state().page_state().dialog = None;
        self.state().blocker.send_replace(None);
        let action = format!(
            "{} the {} dialog \"{}\"",
            if accept { "accepted" } else { "dismissed" },
            dialog.kind,
            truncate(&dialog.message, 80)
        );
        Ok(self.finish(&mark, action, Vec::new()).await)
    }
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A modifier key with its `modifiers` bit.
#[derive(Debug, Clone)]
struct Modifier {
    key: &'static str,
    code: &'static str,
    key_code: i64,
    bit: u32,
}

/// A parsed key combination.
#[derive(Debug, Clone)]
struct KeyCombo {
    modifiers: Vec<Modifier>,
    key: String,
    code: String,
    key_code: i64,
    text: Option<String>,
    display: String,
}

fn modifier(name: &str) -> Option<Modifier> {
    let (key, code, key_code, bit) = match name.to_ascii_lowercase().as_str() {
        "alt" | "option" => ("Alt", "AltLeft", 18, 1),
        "control" | "ctrl" => ("Control", "ControlLeft", 17, 2),
        "meta" | "cmd" | "command" | "super" => ("Meta", "MetaLeft", 91, 4),
        "shift" => ("Shift", "ShiftLeft", 16, 8),
        _ => return None,
    };
    Some(Modifier {
        key,
        code,
        key_code,
        bit,
    })
}

/// The US-layout definition of a key name (`Enter`, `a`, `ArrowDown`), the main-keyboard one
/// when the numpad has the same key.
fn key_definition(name: &str) -> Option<&'static chromiumoxide::keys::KeyDefinition> {
    let layout = &chromiumoxide::keys::USKEYBOARD_LAYOUT;
    let exact = || layout.iter().filter(|d| d.key == name);
    exact()
        .find(|d| !d.code.starts_with("Numpad"))
        .or_else(|| exact().next())
}

/// Parses `Enter`, `escape`, `Control+Shift+K`, `Meta+a`, `+`.
fn parse_key(input: &str) -> Result<KeyCombo> {
    let input = input.trim();
    if input.is_empty() {
        return Err(BrowserError::InvalidInput(
            "give a key, e.g. Enter, Escape, Tab, ArrowDown, Control+A".into(),
        ));
    }
    // A trailing "+" is the plus key itself ("Control++").
    let (mods_part, key_name) = if input == "+" {
        ("", "+")
    } else if let Some(stripped) = input.strip_suffix("++") {
        (stripped, "+")
    } else {
        match input.rsplit_once('+') {
            Some((m, k)) => (m, k),
            None => ("", input),
        }
    };
    let mut modifiers = Vec::new();
    for part in mods_part.split('+').filter(|p| !p.trim().is_empty()) {
        match modifier(part.trim()) {
            Some(m) => modifiers.push(m),
            None => {
                return Err(BrowserError::InvalidInput(format!(
                    "`{part}` in `{input}` is not a modifier: use Alt, Control, Meta or Shift"
                )));
            }
        }
    }
    let key_name = key_name.trim();
    let alias = match key_name.to_ascii_lowercase().as_str() {
        "esc" => "Escape".to_string(),
        "return" => "Enter".to_string(),
        "del" => "Delete".to_string(),
        "space" | "spacebar" => " ".to_string(),
        "up" => "ArrowUp".to_string(),
        "down" => "ArrowDown".to_string(),
        "left" => "ArrowLeft".to_string(),
        "right" => "ArrowRight".to_string(),
        "pgup" => "PageUp".to_string(),
        "pgdn" => "PageDown".to_string(),
        _ => key_name.to_string(),
    };
    let layout = &chromiumoxide::keys::USKEYBOARD_LAYOUT;
    let def = key_definition(&alias).or_else(|| {
        // Named keys match case-insensitively (`enter`, `arrowdown`); single letters do not.
        (alias.chars().count() > 1)
            .then(|| {
                layout
                    .iter()
                    .find(|d| d.key.eq_ignore_ascii_case(&alias))
                    .and_then(|d| key_definition(d.key))
            })
            .flatten()
    });
    let Some(def) = def else {
        if let Some(m) = modifier(&alias) {
            // A modifier pressed on its own.
            return Ok(KeyCombo {
                display: input.to_string(),
                key: m.key.to_string(),
                code: m.code.to_string(),
                key_code: m.key_code,
                text: None,
                modifiers,
            });
        }
        let names: Vec<&str> = layout
            .iter()
            .map(|d| d.key)
            .filter(|k| k.len() > 1)
            .collect();
        let close = devlens_core::suggest::closest(&alias, names, 3);
        let mut msg = format!("unknown key `{key_name}`.");
        if !close.is_empty() {
            let _ = write!(msg, " Did you mean {}?", close.join(", "));
        }
        msg.push_str(" Keys use the names of KeyboardEvent.key: Enter, Tab, Escape, Backspace, ArrowDown, PageUp, F5, a, 1, …");
        return Err(BrowserError::InvalidInput(msg));
    };
    let text = def.text.map(str::to_string).or_else(|| {
        let single = def.key.chars().count() == 1;
        single.then(|| {
            let shifted = modifiers.iter().any(|m| m.key == "Shift");
            if shifted {
                def.key.to_uppercase()
            } else {
                def.key.to_string()
            }
        })
    });
    Ok(KeyCombo {
        display: input.to_string(),
        key: def.key.to_string(),
        code: def.code.to_string(),
        key_code: def.key_code,
        text,
        modifiers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_with_modifiers_and_aliases() {
        let k = parse_key("Enter").unwrap();
        assert_eq!((k.key.as_str(), k.text.as_deref()), ("Enter", Some("\r")));
        let k = parse_key("control+a").unwrap();
        assert_eq!(k.modifiers.len(), 1);
        assert_eq!(k.code, "KeyA");
        let k = parse_key("esc").unwrap();
        assert_eq!(k.key, "Escape");
        let k = parse_key("arrowdown").unwrap();
        assert_eq!(k.code, "ArrowDown");
        let k = parse_key("Control++").unwrap();
        assert_eq!(k.key, "+");
        let e = parse_key("Entr").unwrap_err();
        assert!(e.to_string().contains("Did you mean Enter"), "{e}");
        let e = parse_key("Hyper+a").unwrap_err();
        assert!(e.to_string().contains("not a modifier"), "{e}");
        assert!(parse_key(" ").is_err());
        assert_eq!(parse_key("Shift").unwrap().key, "Shift");
    }

    #[test]
    fn quiet_outcomes_say_nothing_followed() {
        let o = ActionOutcome {
            action: "clicked button \"Save\"".into(),
            ..Default::default()
        };
        assert!(o.to_text().contains("no navigation"));
        let o = ActionOutcome {
            action: "clicked a".into(),
            url: Some("http://x/next".into()),
            status: Some(200),
            title: Some("Next".into()),
            dialog: Some(DialogInfo {
                kind: "confirm".into(),
                message: "Sure?".into(),
                default_prompt: None,
            }),
            ..Default::default()
        };
        let t = o.to_text();
        assert!(
            t.contains("now at http://x/next (HTTP 200) \"Next\""),
            "{t}"
        );
        assert!(t.contains("confirm dialog open"), "{t}");
    }
}
