//! Floor 3, what a call changed: the tab's counters before an action ([`Mark`]), racing a call
//! that may block the page against its blockers (a dialog, a pause), and the report of what
//! followed — console errors, failed requests, a navigation, a dialog, new tabs, a pause —
//! which [`ActionOutcome`] and [`NavigationOutcome`] share.

use std::fmt::Write as _;
use std::future::Future;
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use crate::error::{BrowserError, Result};
use crate::records::console::{ConsoleEntry, ConsoleLevel};
use crate::records::debugger::PauseContext;
use crate::records::network::NetworkEntry;
use crate::records::{Blocker, DialogInfo};
use crate::tab::cdp::Raw;
use crate::tab::targets::{Tab, TabInfo};
use crate::text::truncate;

/// How long an action waits for the navigation it started.
const NAVIGATION_SETTLE: Duration = Duration::from_secs(10);
/// How long an action waits for the requests it started.
const NETWORK_SETTLE: Duration = Duration::from_secs(2);
/// How long a navigation the page asked for may take to start loading.
const NAVIGATION_START: Duration = Duration::from_secs(1);
/// At most this long for the page to finish the task an input started.
const PAGE_TURN: Duration = Duration::from_millis(250);
/// Console errors and failed requests listed in an outcome.
const OUTCOME_ITEMS: usize = 5;

/// Console errors and failed requests since a [`Mark`]: the newest few of each and how many
/// more. Every report of what a call changed lists them.
pub(crate) struct Followups {
    pub console_errors: Vec<ConsoleEntry>,
    pub console_errors_omitted: usize,
    pub failed_requests: Vec<NetworkEntry>,
    pub failed_requests_omitted: usize,
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
    pub paused: Option<Box<crate::records::debugger::PauseContext>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub(crate) page_url: String,
}

pub(crate) fn is_zero(n: &usize) -> bool {
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

/// What a load produced.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavigationOutcome {
    /// The URL after redirects.
    pub url: String,
    /// HTTP status of the document (none for same-document and about: navigations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    pub title: String,
    /// The `load` event fired before devlens stopped waiting.
    pub loaded: bool,
    /// Console errors and uncaught exceptions during the load (newest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub console_errors: Vec<ConsoleEntry>,
    #[serde(skip_serializing_if = "is_zero")]
    pub console_errors_omitted: usize,
    /// Requests that failed during the load (newest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_requests: Vec<NetworkEntry>,
    #[serde(skip_serializing_if = "is_zero")]
    pub failed_requests_omitted: usize,
    /// A dialog the page opened while loading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogInfo>,
    /// Where a script of the page stopped in the debugger while loading (a breakpoint); the
    /// load goes on when the page resumes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<Box<PauseContext>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl NavigationOutcome {
    pub fn to_text(&self) -> String {
        let mut out = self.url.clone();
        if let Some(s) = self.status {
            let _ = write!(out, " — HTTP {s}");
        }
        if !self.title.is_empty() {
            let _ = write!(out, " — \"{}\"", truncate(&self.title, 100));
        }
        if self.paused.is_some() {
            out.push_str(" (loading, paused in the debugger)");
        } else if !self.loaded {
            out.push_str(" (still loading)");
        }
        render_changes(
            &mut out,
            &self.console_errors,
            self.console_errors_omitted,
            &self.failed_requests,
            self.failed_requests_omitted,
            self.dialog.as_ref(),
            &self.url,
        );
        if self.console_errors.is_empty()
            && self.failed_requests.is_empty()
            && self.dialog.is_none()
        {
            out.push_str("\nno console errors, no failed requests");
        }
        if let Some(ctx) = &self.paused {
            out.push('\n');
            out.push_str(&ctx.to_text());
        }
        for note in &self.notes {
            let _ = write!(out, "\nnote: {note}");
        }
        out
    }
}

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

    /// Console errors and failed requests since `mark`, at most `limit` of each.
    pub(crate) fn followups(&self, mark: &Mark, limit: usize) -> Followups {
        let (console_errors, console_errors_omitted) =
            self.state()
                .console_mut()
                .since(mark.console, ConsoleLevel::Error, limit);
        let (failed_requests, failed_requests_omitted) =
            self.state().network_mut().failed_since(mark.network, limit);
        Followups {
            console_errors,
            console_errors_omitted,
            failed_requests,
            failed_requests_omitted,
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
        // Chrome sent what the input caused before its answer, but the CDP client hands events
        // to the tab's collector a moment after the answer reaches us (a fixed 3 ms wait lost a
        // failed request on a loaded machine). One more round trip through the client flushes
        // them to the collector; then the collector says when it has recorded them.
        let flush = self.call(Raw::new("Target.getTargetInfo", json!({})));
        tokio::select! {
            _ = tokio::time::timeout(PAGE_TURN, flush) => {}
            _ = blocker.wait_for(Option::is_some) => {}
        }
        self.state().catch_up().await;
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
        let Followups {
            console_errors,
            console_errors_omitted,
            failed_requests,
            failed_requests_omitted,
        } = self.followups(mark, OUTCOME_ITEMS);
        let document = self
            .state()
            .network_mut()
            .main_document_since(mark.network, main_frame.as_deref());
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

    pub(crate) async fn finish(
        &self,
        mark: &Mark,
        action: String,
        mut notes: Vec<String>,
    ) -> ActionOutcome {
        notes.extend(self.settle(mark).await);
        self.outcome(mark, action, notes).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::DialogInfo;

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
