//! Tabs: listing, switching, opening and closing them, and the handle ([`Tab`]) every page call
//! goes through.
//!
//! Chrome's page targets are the truth (`Target.getTargets`); devlens attaches to each one it
//! sees (tabs that were open before it connected included), starts its event collector and keeps
//! them in the order first seen, which is the index users pick tabs by. What a tab records lives
//! in [`crate::records::TabState`].

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::target::{
    CreateTargetParams, EventTargetDestroyed, TargetId,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::{Blocker, TabState};
use crate::tab::cdp::{CallFailure, Raw, short_message};
use crate::tab::registry::TabInner;
use crate::tab::session::{BrowserSessions, Connection};
use crate::text::truncate;

/// How long to wait for chromiumoxide to attach to a target it just discovered.
const ATTACH_WAIT: Duration = Duration::from_secs(3);

/// A handle to one tab of one connection. Cheap to clone; every page operation is a method.
#[derive(Debug, Clone)]
pub struct Tab {
    pub(crate) conn: Arc<Connection>,
    pub(crate) inner: Arc<TabInner>,
    /// Where this handle may write files (screenshots, bodies, traces): `None` writes where
    /// the caller says (a CLI `--out`); see [`Tab::writing_in`].
    pub(crate) writes: Option<Arc<devlens_workspace::Places>>,
}

/// A tab's turn to be acted on (see [`Tab::take_turn`]); the next action waits until it is
/// dropped.
#[derive(Debug)]
pub struct TabTurn {
    _held: tokio::sync::OwnedMutexGuard<()>,
}

impl Tab {
    /// Waits until no other action runs on this tab and holds the tab until the returned turn
    /// is dropped. Actions of several sessions on one tab (clicks, typing, navigation) then run
    /// one after the other, each seeing and reporting its own effects.
    pub async fn take_turn(&self) -> TabTurn {
        TabTurn {
            _held: Arc::clone(&self.inner.turn).lock_owned().await,
        }
    }
}

/// A tab as listed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TabInfo {
    pub index: usize,
    /// The target id (stable while the tab lives).
    pub id: String,
    pub title: String,
    pub url: String,
    pub active: bool,
}

impl TabInfo {
    pub fn to_line(&self) -> String {
        let title = if self.title.is_empty() || self.title == self.url {
            String::new()
        } else {
            format!("{} — ", truncate(&self.title, 80))
        };
        format!(
            "{} [{}] {title}{}",
            if self.active { "*" } else { " " },
            self.index,
            truncate(&self.url, 200)
        )
    }
}

/// The tabs of a connection.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TabList {
    pub connection: String,
    pub tabs: Vec<TabInfo>,
}

impl TabList {
    pub fn to_text(&self) -> String {
        if self.tabs.is_empty() {
            return format!(
                "connection {} has no open tab; open one with target action `new`",
                self.connection
            );
        }
        let mut out = String::new();
        for t in &self.tabs {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&t.to_line());
        }
        out
    }

    pub fn active(&self) -> Option<&TabInfo> {
        self.tabs.iter().find(|t| t.active)
    }
}

/// How a call names a tab.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TabSelector {
    /// The position in the tab list.
    Index(usize),
    /// The target id, or an unambiguous prefix of it (at least 4 characters).
    Id(String),
    /// A case-insensitive part of the title.
    Title(String),
    /// A part of the URL.
    Url(String),
}

impl TabSelector {
    /// The selector from the optional fields tools usually take; the first one given wins.
    pub fn from_parts(
        index: Option<usize>,
        id: Option<&str>,
        title: Option<&str>,
        url: Option<&str>,
    ) -> Option<Self> {
        let text = |s: Option<&str>| s.map(str::trim).filter(|s| !s.is_empty()).map(String::from);
        index
            .map(Self::Index)
            .or_else(|| text(id).map(Self::Id))
            .or_else(|| text(title).map(Self::Title))
            .or_else(|| text(url).map(Self::Url))
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Index(i) => format!("index {i}"),
            Self::Id(id) => format!("id `{id}`"),
            Self::Title(t) => format!("title \"{t}\""),
            Self::Url(u) => format!("URL \"{u}\""),
        }
    }

    /// Picks one tab from the list, or says why it cannot.
    pub(crate) fn pick<'a>(&self, tabs: &'a [TabInfo]) -> Result<&'a TabInfo> {
        let lines = || tabs.iter().take(20).map(TabInfo::to_line).collect();
        let matches: Vec<&TabInfo> = match self {
            Self::Index(i) => tabs.iter().filter(|t| t.index == *i).collect(),
            Self::Id(id) => {
                let id = id.to_ascii_uppercase();
                tabs.iter()
                    .filter(|t| t.id == id || (id.len() >= 4 && t.id.starts_with(&id)))
                    .collect()
            }
            Self::Title(q) => {
                let q = q.to_lowercase();
                let exact: Vec<&TabInfo> = tabs
                    .iter()
                    .filter(|t| t.title.to_lowercase() == q)
                    .collect();
                if exact.len() == 1 {
                    exact
                } else {
                    tabs.iter()
                        .filter(|t| t.title.to_lowercase().contains(&q))
                        .collect()
                }
            }
            Self::Url(q) => {
                let exact: Vec<&TabInfo> = tabs.iter().filter(|t| t.url == *q).collect();
                if exact.len() == 1 {
                    exact
                } else {
                    let q = q.to_lowercase();
                    tabs.iter()
                        .filter(|t| t.url.to_lowercase().contains(&q))
                        .collect()
                }
            }
        };
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(BrowserError::UnknownTab {
                query: self.describe(),
                tabs: lines(),
            }),
            many => Err(BrowserError::AmbiguousTab {
                query: self.describe(),
                tabs: many.iter().map(|t| t.to_line()).collect(),
            }),
        }
    }
}

/// A page target as `Target.getTargets` reports it.
#[derive(Debug, Clone)]
pub(crate) struct TargetSummary {
    pub id: String,
    pub title: String,
    pub url: String,
    /// The tab that opened this one (popups, target=_blank links).
    pub opener: Option<String>,
}

impl Connection {
    /// The browser's page targets (no service workers, no browser UI).
    pub(crate) async fn page_targets(&self) -> Result<Vec<TargetSummary>> {
        let v = self
            .browser_call(Raw::new("Target.getTargets", json!({})), "listing tabs")
            .await?;
        Ok(v.get("targetInfos")
            .and_then(Value::as_array)
            .map(|infos| {
                infos
                    .iter()
                    .filter(|i| i.get("type").and_then(Value::as_str) == Some("page"))
                    .map(|i| TargetSummary {
                        id: str_field(i, "targetId"),
                        title: str_field(i, "title"),
                        url: str_field(i, "url"),
                        opener: i
                            .get("openerId")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Brings the tab registry in line with the browser: attaches to new page targets, forgets
    /// closed ones, keeps an active tab. Returns the targets in registry order.
    pub(crate) async fn sync_tabs(&self) -> Result<Vec<TargetSummary>> {
        let _sync = self.sync_lock.lock().await;
        let targets = self.page_targets().await?;
        let known: Vec<String> = {
            let reg = self.registry();
            reg.tabs
                .iter()
                .map(|t| t.target_id.clone())
                .chain(reg.closed.iter().cloned())
                .collect()
        };
        let mut attached = Vec::new();
        // One budget for all new tabs: a browser with many tabs must not stall discovery.
        let deadline = tokio::time::Instant::now() + ATTACH_WAIT;
        for target in &targets {
            if known.contains(&target.id) {
                continue;
            }
            if let Some(page) = self.wait_for_page(&target.id, deadline).await {
                match self.attach(page).await {
                    Ok(tab) => attached.push(tab),
                    Err(e) => tracing::debug!("cannot attach to tab {}: {e}", target.id),
                }
            }
        }
        let mut reg = self.registry();
        let closed = std::mem::take(&mut reg.closed);
        // Forget closed ids once Chrome stopped listing them.
        reg.closed = closed
            .into_iter()
            .filter(|id| targets.iter().any(|t| &t.id == id))
            .collect();
        reg.tabs.retain(|t| {
            let alive = targets.iter().any(|x| x.id == t.target_id);
            if !alive {
                t.state.mark_closed();
            }
            alive && !t.state.closed.load(Ordering::SeqCst)
        });
        reg.tabs.extend(attached);
        let active_ok = reg
            .active
            .as_ref()
            .is_some_and(|a| reg.tabs.iter().any(|t| &t.target_id == a));
        if !active_ok {
            reg.active = reg.tabs.first().map(|t| t.target_id.clone());
        }
        let by_id: HashMap<&str, &TargetSummary> =
            targets.iter().map(|t| (t.id.as_str(), t)).collect();
        Ok(reg
            .tabs
            .iter()
            .filter_map(|t| by_id.get(t.target_id.as_str()).map(|s| (*s).clone()))
            .collect())
    }

    /// chromiumoxide attaches to discovered targets on its own; wait until it has.
    async fn wait_for_page(&self, target_id: &str, deadline: tokio::time::Instant) -> Option<Page> {
        loop {
            if let Ok(page) = self
                .browser
                .get_page(TargetId::from(target_id.to_string()))
                .await
            {
                return Some(page);
            }
            if tokio::time::Instant::now() > deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Starts recording a page's events and wraps it as a tab.
    pub(crate) async fn attach(&self, page: Page) -> Result<Arc<TabInner>> {
        let state = Arc::new(TabState::new(
            self.options.console_capacity,
            self.options.network_capacity,
        ));
        let target_id = page.target_id().as_ref().to_string();
        self.fit_window(&target_id).await;
        let destroyed = self
            .browser
            .event_listener::<EventTargetDestroyed>()
            .await
            .map_err(|e| crate::tab::cdp::browser_error(&self.id, "watching a tab", e))?;
        let collector = crate::tab::events::start(&page, state.clone(), destroyed)
            .await
            .map_err(|e| crate::tab::cdp::browser_error(&self.id, "watching a tab", e))?;
        // Where the page is now; later navigations update it from events. A tab that is
        // closing never answers: do not hold tab discovery up for it.
        let tree = tokio::time::timeout(
            Duration::from_secs(2),
            page.execute(Raw::new("Page.getFrameTree", json!({}))),
        )
        .await;
        if let Ok(Ok(tree)) = tree {
            let frame = &tree.result["frameTree"]["frame"];
            let mut p = state.page_state();
            if p.main_frame.is_none() {
                p.main_frame = frame.get("id").and_then(Value::as_str).map(str::to_string);
            }
            if p.url.is_empty() {
                p.url = str_field(frame, "url");
            }
        }
        Ok(Arc::new(TabInner {
            target_id,
            page,
            state,
            collector,
            turn: Arc::new(tokio::sync::Mutex::new(())),
        }))
    }

    pub(crate) fn tab_list(&self, targets: &[TargetSummary]) -> TabList {
        let active = self.registry().active.clone();
        TabList {
            connection: self.id.clone(),
            tabs: targets
                .iter()
                .enumerate()
                .map(|(index, t)| TabInfo {
                    index,
                    id: t.id.clone(),
                    title: t.title.clone(),
                    url: t.url.clone(),
                    active: active.as_deref() == Some(t.id.as_str()),
                })
                .collect(),
        }
    }

    fn tab_handle(self: &Arc<Self>, target_id: &str) -> Option<Tab> {
        self.registry()
            .tabs
            .iter()
            .find(|t| t.target_id == target_id)
            .map(|inner| Tab {
                conn: self.clone(),
                inner: inner.clone(),
                writes: None,
            })
    }

    /// The active tab, attaching to the browser's tabs first if none is known yet.
    async fn active_tab(self: &Arc<Self>) -> Result<Tab> {
        self.check_alive()?;
        let active = self.registry().active.clone();
        if let Some(id) = active
            && let Some(tab) = self.tab_handle(&id)
        {
            if !tab.inner.state.closed.load(Ordering::SeqCst) {
                return Ok(tab);
            }
            // Closed behind devlens' back, and its target-destroyed event came first: say so,
            // as a call that reached the closed tab does, rather than act on another tab
            // unasked. The sync makes another tab active for the calls after this one.
            self.sync_tabs().await?;
            return Err(tab.gone());
        }
        self.sync_tabs().await?;
        let active = self.registry().active.clone();
        active
            .and_then(|id| self.tab_handle(&id))
            .ok_or_else(|| BrowserError::NoTab {
                connection: self.id.clone(),
            })
    }

    /// Opens a blank tab, records its events from the start and makes it active.
    pub(crate) async fn open_tab(self: &Arc<Self>) -> Result<Tab> {
        self.check_alive()?;
        // Headless, every tab gets a window of its own: a tab behind another one in the same
        // window gets no frames, and its input events and animations stall.
        let params = CreateTargetParams::builder()
            .url("about:blank")
            .new_window(self.headless_browser())
            .build()
            .map_err(|e| BrowserError::protocol("opening a tab", e))?;
        let page = self
            .browser
            .new_page(params)
            .await
            .map_err(|e| crate::tab::cdp::browser_error(&self.id, "opening a tab", e))?;
        let _sync = self.sync_lock.lock().await;
        let target_id = page.target_id().as_ref().to_string();
        // A sync that ran meanwhile may have attached it already.
        let existing = self
            .registry()
            .tabs
            .iter()
            .find(|t| t.target_id == target_id)
            .cloned();
        let inner = match existing {
            Some(inner) => inner,
            None => {
                let inner = self.attach(page).await?;
                self.registry().tabs.push(inner.clone());
                inner
            }
        };
        self.registry().active = Some(inner.target_id.clone());
        Ok(Tab {
            conn: self.clone(),
            inner,
            writes: None,
        })
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

impl BrowserSessions {
    /// The tabs of a connection (default: the active connection).
    pub async fn tabs(&self, connection: Option<&str>) -> Result<TabList> {
        let conn = self.connection(connection)?;
        conn.check_alive()?;
        let targets = conn.sync_tabs().await?;
        Ok(conn.tab_list(&targets))
    }

    /// Makes a tab the one later calls act on.
    pub async fn switch_tab(&self, connection: Option<&str>, tab: &TabSelector) -> Result<TabInfo> {
        let conn = self.connection(connection)?;
        conn.check_alive()?;
        let targets = conn.sync_tabs().await?;
        let list = conn.tab_list(&targets);
        let picked = tab.pick(&list.tabs)?.clone();
        conn.registry().active = Some(picked.id.clone());
        // Bring it to the front in a headful browser; harmless when headless.
        let _ = conn
            .browser_call(
                Raw::new("Target.activateTarget", json!({ "targetId": picked.id })),
                "activating a tab",
            )
            .await;
        Ok(TabInfo {
            active: true,
            ..picked
        })
    }

    /// Closes a tab (default: the active one) and returns the tabs left.
    pub async fn close_tab(
        &self,
        connection: Option<&str>,
        tab: Option<&TabSelector>,
    ) -> Result<TabList> {
        let conn = self.connection(connection)?;
        conn.check_alive()?;
        let targets = conn.sync_tabs().await?;
        let list = conn.tab_list(&targets);
        let picked = match tab {
            Some(sel) => sel.pick(&list.tabs)?.clone(),
            None => list.active().cloned().ok_or_else(|| BrowserError::NoTab {
                connection: conn.id.clone(),
            })?,
        };
        conn.browser_call(
            Raw::new("Target.closeTarget", json!({ "targetId": picked.id })),
            "closing a tab",
        )
        .await?;
        {
            let mut reg = conn.registry();
            if let Some(t) = reg.tabs.iter().find(|t| t.target_id == picked.id) {
                t.state.mark_closed();
            }
            reg.closed.push(picked.id.clone());
            reg.tabs.retain(|t| t.target_id != picked.id);
            if reg.active.as_deref() == Some(picked.id.as_str()) {
                // The most recently opened tab left is the likeliest next one.
                reg.active = reg.tabs.last().map(|t| t.target_id.clone());
            }
        }
        // Chrome removes the target asynchronously; leave it out of the answer either way.
        let targets: Vec<TargetSummary> = conn
            .sync_tabs()
            .await?
            .into_iter()
            .filter(|t| t.id != picked.id)
            .collect();
        Ok(conn.tab_list(&targets))
    }

    /// The active tab of a connection: the handle every page operation is called on.
    pub async fn tab(&self, connection: Option<&str>) -> Result<Tab> {
        self.connection(connection)?.active_tab().await
    }

    /// A specific tab, without making it active.
    pub async fn tab_by(&self, connection: Option<&str>, tab: &TabSelector) -> Result<Tab> {
        let conn = self.connection(connection)?;
        conn.check_alive()?;
        let targets = conn.sync_tabs().await?;
        let list = conn.tab_list(&targets);
        let picked = tab.pick(&list.tabs)?;
        conn.tab_handle(&picked.id)
            .ok_or_else(|| BrowserError::TabGone {
                tab: picked.to_line().trim().to_string(),
            })
    }
}

impl Tab {
    /// The connection this tab belongs to.
    pub fn connection_id(&self) -> &str {
        &self.conn.id
    }

    /// The target id of this tab.
    pub fn id(&self) -> &str {
        &self.inner.target_id
    }

    pub(crate) fn state(&self) -> &TabState {
        &self.inner.state
    }

    pub(crate) fn page(&self) -> &Page {
        &self.inner.page
    }

    /// The tab's current URL as its events reported it.
    pub fn url(&self) -> String {
        self.state().page_state().url.clone()
    }

    /// Counts the documents the tab's main frame has shown: it changes on every navigation,
    /// when what the page logged and requested starts over.
    pub fn document_number(&self) -> u64 {
        self.state().page_state().navigations
    }

    /// Title and URL from the browser (answers even while the page is blocked).
    pub async fn info(&self) -> Result<TabInfo> {
        self.check_alive()?;
        let v = self
            .conn
            .browser_call(
                Raw::new("Target.getTargetInfo", json!({ "targetId": self.id() })),
                "reading the tab's title",
            )
            .await
            .map_err(|e| match e {
                BrowserError::Protocol { .. } => self.gone(),
                other => other,
            })?;
        let info = &v["targetInfo"];
        let index = self
            .conn
            .registry()
            .tabs
            .iter()
            .position(|t| t.target_id == self.inner.target_id)
            .unwrap_or(0);
        let active = self.conn.registry().active.as_deref() == Some(self.id());
        Ok(TabInfo {
            index,
            id: self.id().to_string(),
            title: str_field(info, "title"),
            url: str_field(info, "url"),
            active,
        })
    }

    pub(crate) fn gone(&self) -> BrowserError {
        if !self.conn.is_alive() {
            return BrowserError::BrowserGone {
                connection: self.conn.id.clone(),
            };
        }
        self.state().mark_closed();
        let url = self.url();
        BrowserError::TabGone {
            tab: if url.is_empty() {
                self.id().to_string()
            } else {
                format!("({url})")
            },
        }
    }

    /// The browser and the tab are still there.
    pub(crate) fn check_alive(&self) -> Result<()> {
        self.conn.check_alive()?;
        if self.state().closed.load(Ordering::SeqCst) {
            return Err(self.gone());
        }
        Ok(())
    }

    /// The tab can run something on its page now: alive and no dialog blocking it.
    pub(crate) fn guard(&self) -> Result<()> {
        self.check_alive()?;
        if let Some(Blocker::Dialog(d)) = self.state().blocker.borrow().clone() {
            return Err(BrowserError::DialogOpen {
                kind: d.kind,
                message: d.message,
            });
        }
        Ok(())
    }

    /// As [`Tab::guard`], and the page's JavaScript runs: acting on a page paused in the
    /// debugger would wait until someone resumes it, so `what` is refused at once instead.
    pub(crate) fn guard_running(&self, what: &str) -> Result<()> {
        self.guard()?;
        if self.is_paused() {
            return Err(BrowserError::InvalidInput(format!(
                "the page is paused in the debugger, so {what} would wait for it: resume it \
                 first (`execution` action resume), or look around with call_stack, step and \
                 evaluate_in_frame; snapshot and screenshot work while paused"
            )));
        }
        Ok(())
    }

    /// Sends a protocol command to this tab's page.
    pub(crate) async fn call(&self, cmd: Raw) -> Result<Value> {
        let what = cmd.method;
        let mut closed = self.state().closed_signal.subscribe();
        // A tab closed meanwhile never answers: stop waiting when it goes.
        tokio::select! {
            answer = self.page().execute(cmd) => match answer {
                Ok(resp) => Ok(resp.result),
                Err(e) => Err(self.map_err(what, e)),
            },
            // (The value `wait_for` answers holds a read lock: release it before `gone`.)
            _ = async { closed.wait_for(|c| *c).await.map(drop) } => Err(self.gone()),
        }
    }

    pub(crate) fn map_err(&self, what: &str, err: chromiumoxide::error::CdpError) -> BrowserError {
        match CallFailure::classify(&err) {
            CallFailure::Disconnected | CallFailure::TargetGone => {
                if !self.conn.is_alive() {
                    self.conn.mark_dead();
                }
                self.gone()
            }
            CallFailure::Timeout => BrowserError::Timeout {
                what: format!("the page to answer {what}"),
                after: crate::tab::cdp::REQUEST_TIMEOUT,
                hint: Some(
                    "The page's main thread is busy (a long-running script?) or paused.".into(),
                ),
            },
            CallFailure::Rejected(_) => BrowserError::protocol(what, short_message(&err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tabs() -> Vec<TabInfo> {
        ["Home", "App — settings", "App — users"]
            .iter()
            .enumerate()
            .map(|(i, title)| TabInfo {
                index: i,
                id: format!("ABCD{i}"),
                title: title.to_string(),
                url: format!("http://localhost/{i}"),
                active: i == 0,
            })
            .collect()
    }

    #[test]
    fn selectors_pick_one_tab_or_explain() {
        let t = tabs();
        assert_eq!(TabSelector::Index(2).pick(&t).unwrap().title, "App — users");
        assert_eq!(
            TabSelector::Title("settings".into())
                .pick(&t)
                .unwrap()
                .index,
            1
        );
        assert_eq!(TabSelector::Url("/2".into()).pick(&t).unwrap().index, 2);
        assert_eq!(TabSelector::Id("abcd1".into()).pick(&t).unwrap().index, 1);
        let e = TabSelector::Title("app".into()).pick(&t).unwrap_err();
        assert!(matches!(e, BrowserError::AmbiguousTab { .. }), "{e}");
        let e = TabSelector::Index(9).pick(&t).unwrap_err();
        assert!(e.to_string().contains("[1] App — settings"), "{e}");
        assert_eq!(
            TabSelector::from_parts(None, Some(" "), Some("x"), None),
            Some(TabSelector::Title("x".into()))
        );
    }
}
