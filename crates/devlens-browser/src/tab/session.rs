//! Connections: launching or attaching to browsers, listing and closing them.
//!
//! [`BrowserSessions`] is the one object every surface (MCP tools, CLI, REST) holds. It keeps
//! any number of connections, each with an id (`c1`, `c2`, ... unless the caller names it); calls
//! that take no id use the active connection, which is the one made or used last.
//!
//! A browser devlens launched is closed on [`BrowserSessions::disconnect`] and
//! [`BrowserSessions::shutdown`]; if neither runs (a crash, a kill), its guard process stops it
//! when devlens's end of the pipe closes. A browser devlens connected to keeps running.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chromiumoxide::Browser;
use chromiumoxide::error::CdpError;
use chromiumoxide::handler::HandlerConfig;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use devlens_workspace::Places;

use crate::error::{BrowserError, Result};
use crate::tab::cdp::{Raw, browser_error};
use crate::tab::files::file_allowed;
use crate::tab::launch::{
    ConnectOptions, LaunchOptions, LaunchedChrome, SandboxState, http_endpoint, normalize_endpoint,
    spawn_chrome,
};
use crate::tab::registry::TabRegistry;

/// How long connecting to a DevTools endpoint may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long to wait for the tabs of a browser just connected to.
const FIRST_TABS_WAIT: Duration = Duration::from_secs(5);

/// Bounds of what each tab keeps.
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// Console entries kept per tab (a ring buffer).
    pub console_capacity: usize,
    /// Network requests kept per tab.
    pub network_capacity: usize,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            console_capacity: 500,
            network_capacity: 1000,
        }
    }
}

/// Launched by devlens (closed with it) or attached to a running browser (left running).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionKind {
    Launched,
    Connected,
}

/// One connection as listed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionInfo {
    pub id: String,
    pub kind: ConnectionKind,
    /// Where other tools can attach (`http://127.0.0.1:PORT`), or the websocket URL.
    pub endpoint: String,
    /// Product and version, e.g. `Chrome/131.0.6778.85`.
    pub browser: String,
    pub headless: bool,
    /// Process id of a launched browser.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// A launched browser: whether it runs in Chrome's sandbox, and if not, why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxState>,
    pub tabs: usize,
    /// Calls without a connection id use this one.
    pub active: bool,
    /// False once the browser has closed or crashed.
    pub alive: bool,
}

impl ConnectionInfo {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}{} {} {}",
            self.id,
            if self.active { " (active)" } else { "" },
            match self.kind {
                ConnectionKind::Launched => "launched",
                ConnectionKind::Connected => "connected",
            },
            self.browser
        );
        if self.headless {
            out.push_str(" headless");
        }
        let _ = write!(out, " at {}, {} tab(s)", self.endpoint, self.tabs);
        if let Some(pid) = self.pid {
            let _ = write!(out, ", pid {pid}");
        }
        if let Some(sandbox) = self.sandbox {
            let _ = write!(out, ", {}", sandbox.describe());
        }
        if !self.alive {
            out.push_str(" — GONE (browser closed or crashed; disconnect it)");
        }
        out
    }
}

/// All connections.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionList {
    pub connections: Vec<ConnectionInfo>,
}

impl ConnectionList {
    pub fn to_text(&self) -> String {
        if self.connections.is_empty() {
            return "no browser connected (launch one or connect to a running Chrome)".into();
        }
        self.connections
            .iter()
            .map(ConnectionInfo::to_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The result of [`BrowserSessions::disconnect`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Disconnected {
    pub id: String,
    /// The browser was closed (devlens launched it), rather than left running.
    pub browser_closed: bool,
    /// The connection that is active now, if any is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<String>,
}

impl Disconnected {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "disconnected {}; {}",
            self.id,
            if self.browser_closed {
                "the browser devlens launched was closed"
            } else {
                "the browser keeps running"
            }
        );
        if let Some(a) = &self.active {
            let _ = write!(out, ". Active connection: {a}");
        }
        out
    }
}

/// One browser connection.
pub(crate) struct Connection {
    pub id: String,
    pub kind: ConnectionKind,
    pub endpoint: String,
    pub version: String,
    pub browser: Browser,
    pub options: SessionOptions,
    alive: Arc<AtomicBool>,
    handler: JoinHandle<()>,
    launched: tokio::sync::Mutex<Option<LaunchedChrome>>,
    launched_exited: Option<Arc<AtomicBool>>,
    pid: Option<u32>,
    headless: Option<bool>,
    sandbox: Option<SandboxState>,
    tabs: Mutex<TabRegistry>,
    /// The page size each tab's window is fitted to (launched headless browsers only).
    viewport: Option<(u32, u32)>,
    /// Serializes tab discovery so a target is attached once.
    pub sync_lock: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.handler.abort();
    }
}

impl Connection {
    pub(crate) fn registry(&self) -> MutexGuard<'_, TabRegistry> {
        self.tabs.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn headless_browser(&self) -> bool {
        self.headless.unwrap_or(false)
    }

    pub(crate) fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
            && !self
                .launched_exited
                .as_ref()
                .is_some_and(|e| e.load(Ordering::SeqCst))
    }

    pub(crate) fn mark_dead(&self) {
        self.alive.store(false, Ordering::SeqCst);
    }

    pub(crate) fn check_alive(&self) -> Result<()> {
        if self.is_alive() {
            Ok(())
        } else {
            Err(BrowserError::BrowserGone {
                connection: self.id.clone(),
            })
        }
    }

    /// A browser-level protocol command (no tab session).
    pub(crate) async fn browser_call(&self, cmd: Raw, what: &str) -> Result<Value> {
        self.check_alive()?;
        match self.browser.execute(cmd).await {
            Ok(resp) => Ok(resp.result),
            Err(e) => {
                if matches!(
                    crate::tab::cdp::CallFailure::classify(&e),
                    crate::tab::cdp::CallFailure::Disconnected
                ) {
                    self.mark_dead();
                }
                Err(browser_error(&self.id, what, e))
            }
        }
    }

    /// Headless Chrome has no window frame yet takes a made-up one's height off the page
    /// (`--window-size=1280,720` gives a 1280x577 page): size the tab's window by its contents
    /// instead, so the page is the size that was asked for. Best effort: a Chrome without
    /// `Browser.setContentsSize` (before 136) keeps the smaller page.
    pub(crate) async fn fit_window(&self, target_id: &str) {
        let Some((width, height)) = self.viewport else {
            return;
        };
        let window = self
            .browser_call(
                Raw::new(
                    "Browser.getWindowForTarget",
                    json!({ "targetId": target_id }),
                ),
                "finding the tab's window",
            )
            .await;
        let Some(window_id) = window.ok().and_then(|w| w.get("windowId")?.as_i64()) else {
            return;
        };
        let sized = self
            .browser_call(
                Raw::new(
                    "Browser.setContentsSize",
                    json!({ "windowId": window_id, "width": width, "height": height }),
                ),
                "sizing the tab's window",
            )
            .await;
        if let Err(e) = sized {
            tracing::debug!("page stays smaller than {width}x{height}: {e}");
        }
    }

    pub(crate) fn info(&self, active: bool) -> ConnectionInfo {
        ConnectionInfo {
            id: self.id.clone(),
            kind: self.kind,
            endpoint: self.endpoint.clone(),
            browser: self.version.clone(),
            headless: self.headless_browser(),
            pid: self.pid,
            sandbox: self.sandbox,
            tabs: self.registry().tabs.len(),
            active,
            alive: self.is_alive(),
        }
    }

    /// Closes the browser if devlens launched it; detaches otherwise.
    pub(crate) async fn close(&self) -> bool {
        self.mark_dead();
        let mut launched = self.launched.lock().await;
        let Some(chrome) = launched.as_mut() else {
            self.handler.abort();
            return false;
        };
        // Ask politely first: Chrome flushes the profile and exits; the guard then removes it.
        let _ = tokio::time::timeout(
            Duration::from_secs(3),
            self.browser.execute(Raw::new("Browser.close", json!({}))),
        )
        .await;
        chrome.stop().await;
        self.handler.abort();
        true
    }
}

#[derive(Debug, Default)]
pub(crate) struct Registry {
    connections: Vec<Arc<Connection>>,
    active: Option<String>,
    counter: u32,
}

/// Every browser connection of this devlens process.
#[derive(Debug, Default)]
pub struct BrowserSessions {
    registry: Mutex<Registry>,
    options: SessionOptions,
    /// Where pages may load `file:` URLs from ([`BrowserSessions::confine_files`]); anywhere
    /// when unset.
    files: Mutex<Option<Arc<Places>>>,
}

impl BrowserSessions {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_options(options: SessionOptions) -> Self {
        Self {
            registry: Mutex::default(),
            options,
            files: Mutex::default(),
        }
    }

    pub(crate) fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// From now on, the connections these sessions make (launched or connected) let their
    /// pages load `file:` URLs only inside `places`. Without it (a CLI run, whose files are the
    /// user's own), pages load any file Chrome can read.
    pub fn confine_files(&self, places: &Places) {
        *self.file_places() = Some(Arc::new(places.clone()));
    }

    pub(crate) fn file_places(&self) -> MutexGuard<'_, Option<Arc<Places>>> {
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Confines a new connection's `file:` loads, when these sessions are confined. A
    /// connection that cannot be confined is not used.
    async fn confine(&self, conn: &Arc<Connection>) -> Result<()> {
        let places = self.file_places().clone();
        match places {
            Some(places) => guard_files(conn, places).await,
            None => Ok(()),
        }
    }

    /// The connection `id` names, or the active one.
    pub(crate) fn connection(&self, id: Option<&str>) -> Result<Arc<Connection>> {
        let reg = self.registry();
        let id = id.map(str::trim).filter(|s| !s.is_empty());
        let wanted = match id {
            Some(id) => id.to_string(),
            None => match &reg.active {
                Some(a) => a.clone(),
                None => return Err(BrowserError::NotConnected),
            },
        };
        reg.connections
            .iter()
            .find(|c| c.id == wanted)
            .cloned()
            .ok_or_else(|| {
                if reg.connections.is_empty() {
                    BrowserError::NotConnected
                } else {
                    BrowserError::UnknownConnection {
                        id: wanted,
                        known: reg.connections.iter().map(|c| c.id.clone()).collect(),
                    }
                }
            })
    }

    /// Reserves a connection id: the caller's, or the next free `cN`.
    fn reserve_id(&self, wanted: Option<&str>) -> Result<String> {
        let mut reg = self.registry();
        match wanted.map(str::trim).filter(|s| !s.is_empty()) {
            Some(id) => {
                if reg.connections.iter().any(|c| c.id == id) {
                    return Err(BrowserError::ConnectionExists { id: id.into() });
                }
                Ok(id.to_string())
            }
            None => loop {
                reg.counter += 1;
                let id = format!("c{}", reg.counter);
                if !reg.connections.iter().any(|c| c.id == id) {
                    return Ok(id);
                }
            },
        }
    }

    fn register(&self, conn: Arc<Connection>) -> Result<ConnectionInfo> {
        let mut reg = self.registry();
        if reg.connections.iter().any(|c| c.id == conn.id) {
            return Err(BrowserError::ConnectionExists {
                id: conn.id.clone(),
            });
        }
        reg.active = Some(conn.id.clone());
        reg.connections.push(conn.clone());
        Ok(conn.info(true))
    }

    /// Launches a browser and connects to it; it becomes the active connection.
    pub async fn launch(&self, options: &LaunchOptions) -> Result<ConnectionInfo> {
        let id = self.reserve_id(options.connection_id.as_deref())?;
        let started = std::time::Instant::now();
        let spawned = spawn_chrome(options).await?;
        let spawned_in = started.elapsed();
        let mut chrome = spawned.chrome;
        let exited = chrome.exited.clone();
        let endpoint = http_endpoint(&spawned.ws_url).unwrap_or_else(|| spawned.ws_url.clone());
        let (browser, handler) = match attach_browser(&spawned.ws_url).await {
            Ok(pair) => pair,
            Err(reason) => {
                chrome.stop().await;
                return Err(BrowserError::LaunchFailed {
                    executable: chrome.executable.display().to_string(),
                    reason: format!("it started but devlens cannot talk to it: {reason}"),
                    stderr: Vec::new(),
                });
            }
        };
        let attached_in = started.elapsed();
        let pid = chrome.pid;
        let headless = chrome.headless;
        let sandbox = chrome.sandbox;
        let mut conn = self
            .new_connection(
                id,
                ConnectionKind::Launched,
                endpoint,
                browser,
                handler,
                Some(chrome),
                Some(exited),
                pid,
                Some(headless),
            )
            .await;
        conn.sandbox = Some(sandbox);
        conn.viewport = headless.then_some((
            options.window_width.max(100),
            options.window_height.max(100),
        ));
        let conn = Arc::new(conn);
        if let Err(e) = self.confine(&conn).await {
            conn.close().await;
            return Err(e);
        }
        conn.open_tab().await?;
        // Where a launch spends its time (`DEVLENS_LOG=devlens_browser=debug`).
        tracing::debug!(
            spawned_ms = spawned_in.as_millis() as u64,
            attached_ms = attached_in.as_millis() as u64,
            ready_ms = started.elapsed().as_millis() as u64,
            "browser launched"
        );
        self.register(conn)
    }

    /// Connects to a running browser's DevTools endpoint and attaches to its open tabs; it
    /// becomes the active connection.
    pub async fn connect(&self, options: &ConnectOptions) -> Result<ConnectionInfo> {
        let url = normalize_endpoint(&options.endpoint)?;
        let id = self.reserve_id(options.connection_id.as_deref())?;
        let (browser, handler) =
            attach_browser(&url)
                .await
                .map_err(|reason| BrowserError::ConnectFailed {
                    endpoint: url.clone(),
                    reason,
                })?;
        let endpoint = if url.starts_with("ws") {
            http_endpoint(&url).unwrap_or_else(|| url.clone())
        } else {
            url.clone()
        };
        let conn = Arc::new(
            self.new_connection(
                id,
                ConnectionKind::Connected,
                endpoint,
                browser,
                handler,
                None,
                None,
                None,
                None,
            )
            .await,
        );
        if let Err(e) = self.confine(&conn).await {
            conn.close().await;
            return Err(e);
        }
        let expected = conn.page_targets().await.map(|t| t.len()).unwrap_or(0);
        wait_for_tabs(&conn, expected).await;
        self.register(conn)
    }

    #[allow(clippy::too_many_arguments)]
    async fn new_connection(
        &self,
        id: String,
        kind: ConnectionKind,
        endpoint: String,
        browser: Browser,
        mut handler: chromiumoxide::Handler,
        launched: Option<LaunchedChrome>,
        launched_exited: Option<Arc<AtomicBool>>,
        pid: Option<u32>,
        headless: Option<bool>,
    ) -> Connection {
        let alive = Arc::new(AtomicBool::new(true));
        let flag = alive.clone();
        // The handler drives the websocket; it must be polled for anything to happen.
        let handler_task = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                match event {
                    Ok(()) => {}
                    // A websocket error means the browser is gone; polling on would spin.
                    Err(CdpError::Ws(e)) => {
                        tracing::debug!("browser connection closed: {e}");
                        break;
                    }
                    Err(e) => tracing::debug!("CDP handler: {e}"),
                }
            }
            flag.store(false, Ordering::SeqCst);
        });
        let (version, user_agent_headless) = match browser.version().await {
            // New headless says "Chrome/…" as product; only the user agent gives it away.
            Ok(v) => (v.product, v.user_agent.contains("HeadlessChrome")),
            Err(_) => ("Chrome".into(), false),
        };
        Connection {
            id,
            kind,
            endpoint,
            version,
            browser,
            options: self.options,
            alive,
            handler: handler_task,
            launched: tokio::sync::Mutex::new(launched),
            launched_exited,
            pid,
            headless: headless.or(Some(user_agent_headless)),
            sandbox: None,
            tabs: Mutex::default(),
            viewport: None,
            sync_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// All connections, the active one marked.
    pub fn connections(&self) -> ConnectionList {
        let reg = self.registry();
        ConnectionList {
            connections: reg
                .connections
                .iter()
                .map(|c| c.info(reg.active.as_deref() == Some(c.id.as_str())))
                .collect(),
        }
    }

    /// Makes a connection the one calls without an id use.
    pub fn use_connection(&self, id: &str) -> Result<ConnectionInfo> {
        let conn = self.connection(Some(id))?;
        self.registry().active = Some(conn.id.clone());
        Ok(conn.info(true))
    }

    /// Closes a connection (default: the active one). A browser devlens launched is closed
    /// and its temporary profile removed; a browser devlens connected to keeps running.
    pub async fn disconnect(&self, id: Option<&str>) -> Result<Disconnected> {
        let conn = self.connection(id)?;
        let active = {
            let mut reg = self.registry();
            reg.connections.retain(|c| c.id != conn.id);
            if reg.active.as_deref() == Some(conn.id.as_str()) {
                reg.active = reg.connections.last().map(|c| c.id.clone());
            }
            reg.active.clone()
        };
        let browser_closed = conn.close().await;
        Ok(Disconnected {
            id: conn.id.clone(),
            browser_closed,
            active,
        })
    }

    /// Closes every connection; call when devlens exits.
    pub async fn shutdown(&self) {
        let all: Vec<Arc<Connection>> = {
            let mut reg = self.registry();
            reg.active = None;
            std::mem::take(&mut reg.connections)
        };
        for conn in all {
            conn.close().await;
        }
    }
}

/// Starts refusing a connection's `file:` requests outside `places`, before its pages load
/// anything more. The watcher ends with the connection (its event stream closes).
async fn guard_files(conn: &Arc<Connection>, places: Arc<Places>) -> Result<()> {
    let mut paused = conn
        .browser
        .event_listener::<EventRequestPaused>()
        .await
        .map_err(|e| BrowserError::protocol("confining file access", e))?;
    conn.browser_call(
        Raw::new(
            "Fetch.enable",
            json!({ "patterns": [{ "urlPattern": "file:*", "requestStage": "Request" }] }),
        ),
        "confining file access (Fetch.enable)",
    )
    .await?;
    let conn = Arc::downgrade(conn);
    tokio::spawn(async move {
        while let Some(request) = paused.next().await {
            let Some(conn) = conn.upgrade() else { break };
            let id = request.request_id.inner().clone();
            let answer = match file_allowed(&places, &request.request.url) {
                Ok(()) => Raw::new("Fetch.continueRequest", json!({ "requestId": id })),
                Err(why) => {
                    tracing::info!(url = %request.request.url, "a page's file request was refused: {why}");
                    Raw::new(
                        "Fetch.failRequest",
                        json!({ "requestId": id, "errorReason": "AccessDenied" }),
                    )
                }
            };
            // The page waits for this answer; a failure means the browser went away.
            let _ = conn.browser.execute(answer).await;
        }
    });
    Ok(())
}

/// Opens the CDP websocket (resolving an http endpoint first) and returns the browser.
async fn attach_browser(
    url: &str,
) -> std::result::Result<(Browser, chromiumoxide::Handler), String> {
    let config = HandlerConfig {
        // No forced 800x600 viewport: pages get the window's real size.
        viewport: None,
        request_timeout: crate::tab::cdp::REQUEST_TIMEOUT,
        ..HandlerConfig::default()
    };
    // chromiumoxide looks an http:// address up with a reqwest client of its own.
    devlens_core::tls::install();
    match tokio::time::timeout(
        CONNECT_TIMEOUT,
        Browser::connect_with_config(url.to_string(), config),
    )
    .await
    {
        Ok(Ok(pair)) => Ok(pair),
        Ok(Err(CdpError::NoResponse)) => Err("nothing answers there".into()),
        Ok(Err(CdpError::Ws(e))) => Err(format!(
            "no DevTools websocket there ({e}); is it Chrome's remote debugging port?"
        )),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())),
    }
}

/// Waits until at least `expected` tabs are attached (chromiumoxide attaches in the
/// background), or a few seconds passed.
async fn wait_for_tabs(conn: &Arc<Connection>, expected: usize) {
    let deadline = tokio::time::Instant::now() + FIRST_TABS_WAIT;
    loop {
        let _ = conn.sync_tabs().await;
        if conn.registry().tabs.len() >= expected.max(1) || tokio::time::Instant::now() > deadline {
            return;
        }
        // Short: the first tab usually appears within a few milliseconds of attaching, and
        // every poll is one local round trip.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
