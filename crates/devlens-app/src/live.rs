//! The agent's browser as an onlooker sees it, live (`GET /api/browser/events`, the dev panel's
//! Browser page): the connections and tabs, the active tab's console and network as the
//! `get_console_logs` and `list_network_requests` tools read them, and the debugger's pause.
//!
//! The browser crate keeps records, not a change feed, so a [`BrowserWatch`] polls them
//! ([`POLL_INTERVAL`]) and hands out only what is new since its previous poll. It reads the
//! way an onlooker must: it moves none of the agent's "since last read" marks and does not
//! disturb what the agent's next step will report as changed.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use devlens_browser::{
    ConnectionInfo, ConsoleEntry, NetworkEntry, NetworkQuery, PauseContext, Tab, TabInfo,
};

use crate::App;

/// How often a watch looks at the records: quick enough to feel live, rare enough to cost
/// nothing.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// The tab list asks the browser (the records do not hold it), so it is read every few polls.
const TABS_EVERY: u32 = 4;
/// Most console entries one event carries (the first poll of a busy page).
const CONSOLE_BATCH: usize = 200;
/// The most recent requests a watch follows.
const NETWORK_WINDOW: usize = 500;

/// What changed since the previous poll. The surface sends each as an event named
/// [`WatchEvent::name`] whose data is the inner value.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum WatchEvent {
    /// The connections and the active connection's tabs (sent when they change).
    Browser(BrowserView),
    /// The active tab is another one or shows a new document: what was shown of the old one
    /// no longer applies (the console and network that follow are the new page's).
    Page(PageView),
    /// New console entries (a repeated message comes again with its count raised).
    Console(ConsoleBatch),
    /// Requests that are new or changed (finished, failed) since the previous poll.
    Network(NetworkBatch),
    /// The page paused in the debugger (or paused again after a step).
    Paused(Box<PauseContext>),
    /// The page runs again.
    Resumed(Resumed),
}

impl WatchEvent {
    /// The event's name: `browser`, `page`, `console`, `network`, `paused` or `resumed`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Browser(_) => "browser",
            Self::Page(_) => "page",
            Self::Console(_) => "console",
            Self::Network(_) => "network",
            Self::Paused(_) => "paused",
            Self::Resumed(_) => "resumed",
        }
    }
}

/// The connections and tabs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserView {
    /// A connection is there and alive.
    pub connected: bool,
    /// When nothing can be shown: why, and how to start a browser.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub connections: Vec<ConnectionInfo>,
    /// The active connection's tabs.
    pub tabs: Vec<TabInfo>,
}

/// The tab the console, network and pause events are about.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageView {
    pub connection: String,
    pub tab: String,
    pub url: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleBatch {
    /// Oldest first.
    pub entries: Vec<ConsoleEntry>,
    /// Earlier new entries left out (more arrived between two polls than one event carries).
    pub omitted: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkBatch {
    /// Oldest first; a request seen before replaces its earlier version (same `id`).
    pub requests: Vec<NetworkEntry>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Resumed {}

/// Said when no browser is connected.
pub const NO_BROWSER: &str = "No browser is connected. Start one with the `chrome` tool \
    (action `launch`), `devlens browser launch`, or the Launch button here.";

/// One onlooker's view of the browser: what it has shown so far.
#[derive(Debug, Default)]
pub struct BrowserWatch {
    polls: u32,
    /// The browser view last sent, as JSON (compared to tell a change).
    browser: Option<Value>,
    /// Connection, tab and document of the page shown.
    page: Option<(String, String, u64)>,
    /// The last console entry sent.
    console_after: u64,
    /// The requests sent, as sent.
    requests: HashMap<u64, NetworkEntry>,
    /// The pause shown (its number), if the page is paused.
    pause: Option<u64>,
}

impl BrowserWatch {
    pub fn new() -> Self {
        Self::default()
    }

    /// What changed since the previous poll (everything, the first time).
    pub async fn poll(&mut self, app: &App) -> Vec<WatchEvent> {
        let mut events = Vec::new();
        let sessions = app.browser();
        let tab = sessions.tab(None).await;
        let page_key = tab.as_ref().ok().map(|t| {
            (
                t.connection_id().to_string(),
                t.id().to_string(),
                t.document_number(),
            )
        });
        let moved = page_key != self.page;
        if self.polls.is_multiple_of(TABS_EVERY) || moved {
            let view = self.browser_view(app).await;
            let json = serde_json::to_value(&view).ok();
            if json != self.browser || self.browser.is_none() {
                self.browser = json;
                events.push(WatchEvent::Browser(view));
            }
        }
        self.polls = self.polls.wrapping_add(1);
        let Ok(tab) = tab else {
            self.forget_page();
            return events;
        };
        if moved {
            self.forget_page();
            self.page = page_key.clone();
            if let Some((connection, tab_id, _)) = page_key {
                events.push(WatchEvent::Page(PageView {
                    connection,
                    tab: tab_id,
                    url: tab.url(),
                }));
            }
        }
        events.extend(self.console(&tab));
        events.extend(self.network(&tab));
        events.extend(self.pause(&tab).await);
        events
    }

    fn forget_page(&mut self) {
        self.page = None;
        self.console_after = 0;
        self.requests.clear();
        self.pause = None;
    }

    async fn browser_view(&self, app: &App) -> BrowserView {
        let sessions = app.browser();
        let connections = sessions.connections().connections;
        let active_alive = connections.iter().any(|c| c.active && c.alive);
        let (tabs, message) = if connections.is_empty() {
            (Vec::new(), Some(NO_BROWSER.to_string()))
        } else {
            match sessions.tabs(None).await {
                Ok(list) => (list.tabs, None),
                Err(e) => (Vec::new(), Some(e.to_string())),
            }
        };
        BrowserView {
            connected: active_alive,
            message,
            connections,
            tabs,
        }
    }

    fn console(&mut self, tab: &Tab) -> Option<WatchEvent> {
        let (entries, omitted) = tab.console_after(self.console_after, CONSOLE_BATCH);
        let last = entries.last()?.id;
        self.console_after = last;
        Some(WatchEvent::Console(ConsoleBatch { entries, omitted }))
    }

    fn network(&mut self, tab: &Tab) -> Option<WatchEvent> {
        let mut query = NetworkQuery {
            include_static: true,
            limit: Some(NETWORK_WINDOW),
            ..NetworkQuery::default()
        };
        let mut page = tab.network_requests(&query);
        // The log lists oldest first: follow its most recent requests.
        if page.total > NETWORK_WINDOW {
            query.offset = page.total - NETWORK_WINDOW;
            page = tab.network_requests(&query);
        }
        let oldest_listed = page.requests.first().map_or(0, |r| r.id);
        let changed: Vec<NetworkEntry> = page
            .requests
            .into_iter()
            .filter(|r| self.requests.get(&r.id) != Some(r))
            .collect();
        // Requests that left the window are never listed again: forget them.
        self.requests.retain(|id, _| *id >= oldest_listed);
        if changed.is_empty() {
            return None;
        }
        for r in &changed {
            self.requests.insert(r.id, r.clone());
        }
        Some(WatchEvent::Network(NetworkBatch { requests: changed }))
    }

    async fn pause(&mut self, tab: &Tab) -> Option<WatchEvent> {
        let now = tab.pause_number();
        if now == self.pause {
            return None;
        }
        match now {
            None => {
                self.pause = None;
                Some(WatchEvent::Resumed(Resumed {}))
            }
            // A context that cannot be read yet (the page resumed meanwhile) is tried again on
            // the next poll.
            Some(n) => match tab.peek_pause_context().await {
                Ok(context) => {
                    self.pause = Some(n);
                    Some(WatchEvent::Paused(Box::new(context)))
                }
                Err(_) => None,
            },
        }
    }
}
