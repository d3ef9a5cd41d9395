//! Browser tools: drive a real Chrome over the DevTools Protocol — connections, tabs, page view,
//! actions, console, network, screenshots, live code, emulation.
//!
//! Thin adapters over [`devlens_browser::BrowserSessions`] and [`devlens_browser::Tab`]: each
//! handler turns its arguments into the domain call and the result into compact text plus
//! `structuredContent` (screenshots as MCP image content). Every tool that acts on a page takes
//! an optional `connectionId`; without it the active connection and its active tab are used.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use rmcp::{
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::{CallToolResult, ContentBlock},
    schemars::{self, JsonSchema},
    tool, tool_router,
};
use serde::Deserialize;

use devlens_browser::{
    ActionOutcome, BodyOptions, ClickOptions, ColorScheme, ConnectOptions, ConnectionInfo,
    ConnectionList, ConsoleLevel, ConsoleLogs, ConsoleQuery, CssInjection, CssRemoval,
    Disconnected, ElementList, ElementQuery, ElementState, ElementTarget, EmulationRequest,
    EmulationState, EvaluateOptions, Evaluation, ImageFormat, LaunchOptions, MouseButton,
    Navigation, NavigationOutcome, NetworkPage, NetworkProfile, NetworkQuery, NewTab,
    RequestDetails, Screenshot, ScreenshotRequest, ScreenshotScope, ScrollDirection, ScrollRequest,
    Snapshot, SnapshotOptions, Tab, TabInfo, TabList, TabSelector, ViewportSize, WaitCondition,
    WaitOutcome,
};

use crate::{
    DevlensServer,
    reply::{Textual, failure, respond, structured, textual},
};

textual!(
    ConnectionInfo,
    ConnectionList,
    Disconnected,
    TabList,
    NewTab,
    NavigationOutcome,
    ElementList,
    Snapshot,
    ActionOutcome,
    WaitOutcome,
    ConsoleLogs,
    NetworkPage,
    RequestDetails,
    Screenshot,
    Evaluation,
    CssInjection,
    CssRemoval,
    EmulationState,
);

impl Textual for TabInfo {
    fn text(&self) -> String {
        format!("switched to {}", self.to_line().trim())
    }
}

/// The reply to a domain call: text plus `structuredContent`, or an actionable `isError`.
/// An MCP image block of a screenshot.
fn image_block(shot: &Screenshot) -> ContentBlock {
    let data = base64::engine::general_purpose::STANDARD.encode(&shot.data);
    ContentBlock::image(data, shot.format.mime_type())
}

fn millis(ms: Option<u64>) -> Option<Duration> {
    ms.map(Duration::from_millis)
}

/// Which connection a call is about.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionArgs {
    /// Omit for the active connection.
    #[serde(default)]
    pub connection_id: Option<String>,
}

impl ConnectionArgs {
    fn id(&self) -> Option<&str> {
        self.connection_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChromeAction {
    /// Start a new browser (headless by default).
    Launch,
    /// Attach to a running Chrome's DevTools endpoint.
    Connect,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChromeArgs {
    /// launch: start a browser devlens owns (closed when devlens exits); connect: attach to a
    /// running Chrome started with --remote-debugging-port.
    pub action: ChromeAction,
    /// launch: run without a window (default true).
    #[serde(default)]
    pub headless: Option<bool>,
    /// launch: the Chrome/Chromium executable. Default: CHROME_PATH, then the usual places.
    #[serde(default)]
    pub chrome_path: Option<String>,
    /// launch: a profile directory. Default: a fresh temporary one.
    #[serde(default)]
    pub user_data_dir: Option<String>,
    /// connect: a port (9222), host:port, http://host:port or a ws:// DevTools URL.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The id of the new connection. Default: c1, c2, ...
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetAction {
    /// The tabs of the connection.
    List,
    /// Make a tab the one later calls act on.
    Switch,
    /// Open a tab (loading `url` when given) and make it active.
    New,
    /// Close a tab (default: the active one).
    Close,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetArgs {
    pub action: TargetAction,
    /// switch/close: the tab's position in the list.
    #[serde(default)]
    pub index: Option<usize>,
    /// switch/close: part of the tab's title (case-insensitive).
    #[serde(default)]
    pub title: Option<String>,
    /// new: the URL to open. switch/close: part of the tab's URL.
    #[serde(default)]
    pub url: Option<String>,
    /// switch/close: the tab's target id (or a prefix of 4+ characters).
    #[serde(default)]
    pub id: Option<String>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HistoryAction {
    Back,
    Forward,
    Reload,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavigateArgs {
    /// The URL to load (`localhost:3000` gets a scheme). Or give action.
    #[serde(default)]
    pub url: Option<String>,
    /// back, forward or reload, instead of a URL.
    #[serde(default)]
    pub action: Option<HistoryAction>,
    /// Stop waiting for the load after this many milliseconds (default 30000, at most 120000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueryElementsArgs {
    /// CSS selector, e.g. "form button" or "#login". `a >>> b` finds b inside the shadow roots
    /// and iframes under a.
    pub selector: String,
    /// Also look inside open shadow roots and same-origin iframes even when the page itself
    /// has matches (without it they are searched only when it has none).
    #[serde(default)]
    pub pierce: Option<bool>,
    /// Only elements whose text, value, label or placeholder contains this (case-insensitive).
    #[serde(default)]
    pub text: Option<String>,
    /// Only visible (true) or only hidden (false) elements.
    #[serde(default)]
    pub visible: Option<bool>,
    /// At most this many (default 5, at most 20).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Skip this many matches (paging).
    #[serde(default)]
    pub offset: Option<usize>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotArgs {
    /// Only interactive elements plus headings and landmarks.
    #[serde(default)]
    pub interactive_only: Option<bool>,
    /// Only the part under this element: a ref (e12) or a CSS selector.
    #[serde(default)]
    pub root: Option<String>,
    /// Skip this many lines (paging).
    #[serde(default)]
    pub offset: Option<usize>,
    /// At most this many lines (default 200, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClickArgs {
    /// A ref from the latest snapshot (e12) or a CSS selector.
    #[serde(alias = "ref", alias = "selector")]
    pub element: String,
    /// left (default), right or middle.
    #[serde(default)]
    pub button: Option<MouseButton>,
    /// Double-click.
    #[serde(default)]
    pub double_click: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FillArgs {
    /// A ref from the latest snapshot (e12) or a CSS selector.
    #[serde(alias = "ref", alias = "selector")]
    pub element: String,
    /// The new value (replaces what the field holds; a select picks this option).
    pub value: String,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TypeTextArgs {
    /// The text to type, key by key.
    pub text: String,
    /// Focus this first (ref or CSS selector). Default: the focused element.
    #[serde(default, alias = "ref", alias = "selector")]
    pub element: Option<String>,
    /// Press Enter afterwards.
    #[serde(default)]
    pub submit: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PressKeyArgs {
    /// A key or combination: Enter, Escape, ArrowDown, Control+A, Shift+Tab.
    pub key: String,
    /// Focus this first (ref or CSS selector). Default: the focused element.
    #[serde(default, alias = "ref", alias = "selector")]
    pub element: Option<String>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ElementArgs {
    /// A ref from the latest snapshot (e12) or a CSS selector.
    #[serde(alias = "ref", alias = "selector")]
    pub element: String,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectOptionArgs {
    /// The <select>: a ref (e12) or a CSS selector.
    #[serde(alias = "ref", alias = "selector")]
    pub element: String,
    /// Option values or visible labels to select (several for a multiple select).
    pub values: Vec<String>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScrollArgs {
    /// Without direction: scroll this element into view. With one: scroll inside it.
    #[serde(default, alias = "ref", alias = "selector")]
    pub element: Option<String>,
    /// up, down, left, right, top or bottom. Without element: the page.
    #[serde(default)]
    pub direction: Option<ScrollDirection>,
    /// Pixels (default: most of the viewport).
    #[serde(default)]
    pub amount: Option<u32>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WaitForArgs {
    /// Wait for this text (case-insensitive) to appear. Give exactly one condition.
    #[serde(default)]
    pub text: Option<String>,
    /// Wait for this text to disappear.
    #[serde(default)]
    pub text_gone: Option<String>,
    /// Wait for an element matching this CSS selector to reach `state`.
    #[serde(default)]
    pub selector: Option<String>,
    /// With selector: visible (default), hidden, attached or detached.
    #[serde(default)]
    pub state: Option<ElementState>,
    /// Wait for the URL to contain this.
    #[serde(default)]
    pub url_contains: Option<String>,
    /// Wait until no request is in flight for half a second.
    #[serde(default)]
    pub network_idle: Option<bool>,
    /// Give up after this many milliseconds (default 5000, at most 60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HandleDialogArgs {
    /// true: accept (OK), false: dismiss (Cancel).
    pub accept: bool,
    /// The answer to a prompt() dialog.
    #[serde(default)]
    pub prompt_text: Option<String>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleArgs {
    /// Lowest level to include: error, warn, info, log or debug (default: everything).
    #[serde(default)]
    pub level: Option<String>,
    /// Only entries whose text contains this (case-insensitive).
    #[serde(default)]
    pub contains: Option<String>,
    /// At most this many, the most recent (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only entries that arrived after the previous get_console_logs of this tab.
    #[serde(default)]
    pub since_last_read: Option<bool>,
    /// Also entries of pages shown before the current one (default: current page only).
    #[serde(default)]
    pub include_previous_pages: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkArgs {
    /// Only network errors and HTTP 4xx/5xx.
    #[serde(default)]
    pub failed_only: Option<bool>,
    /// Only this resource type: document, script, fetch, xhr, image, stylesheet, font, ...
    #[serde(default)]
    pub resource_type: Option<String>,
    /// Only URLs containing this (case-insensitive).
    #[serde(default)]
    pub url_contains: Option<String>,
    /// Skip this many matching requests (paging).
    #[serde(default)]
    pub offset: Option<usize>,
    /// At most this many (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Also requests of the pages this tab showed before the current one.
    #[serde(default)]
    pub include_previous_pages: Option<bool>,
    /// Also static resources that loaded fine (scripts, styles, images, fonts).
    #[serde(default)]
    pub include_static: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

/// A request id as listed (`7` or `#7`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    Number(u64),
    Text(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkRequestArgs {
    /// The request's id from list_network_requests (7 or "#7").
    pub id: RequestId,
    /// Inline at most this many bytes of each body (default 4096, at most 262144).
    #[serde(default)]
    pub max_body_bytes: Option<usize>,
    /// Write the full response body to this file instead of inlining it.
    #[serde(default)]
    pub save_response_body_to: Option<String>,
    /// Include request and response headers (default true).
    #[serde(default)]
    pub headers: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotArgs {
    /// The whole page instead of the viewport.
    #[serde(default)]
    pub full_page: Option<bool>,
    /// Only this element: a ref (e12) or a CSS selector.
    #[serde(default, alias = "ref", alias = "selector")]
    pub element: Option<String>,
    /// png (default) or jpeg.
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// JPEG quality 1-100 (default 80).
    #[serde(default)]
    pub quality: Option<u8>,
    /// Save the image to this file and return its path instead of the image.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateArgs {
    /// JavaScript, run like the DevTools console (top-level await works); the value of the last
    /// expression is returned as JSON.
    pub expression: String,
    /// Give up (and stop the script) after this many milliseconds (default 10000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Cut the JSON of the value at this many bytes (default 8192, at most 262144).
    #[serde(default)]
    pub max_value_bytes: Option<usize>,
    /// Attach a screenshot of the viewport taken afterwards.
    #[serde(default)]
    pub screenshot: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InjectCssArgs {
    /// Style rules to add to the page, e.g. "header { display: none }".
    pub css: String,
    /// Attach a screenshot of the viewport taken afterwards.
    #[serde(default)]
    pub screenshot: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

/// A network preset name or custom conditions.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NetworkArg {
    /// none, offline, slow-3g, fast-3g or fast-4g.
    Preset(String),
    /// {"custom": {"latencyMs": .., "downloadKbps": .., "uploadKbps": ..}}
    Profile(NetworkProfile),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmulateArgs {
    /// Viewport size in CSS pixels, with optional deviceScaleFactor and mobile.
    #[serde(default)]
    pub viewport: Option<ViewportSize>,
    /// prefers-color-scheme: light, dark or no-preference.
    #[serde(default)]
    pub color_scheme: Option<ColorScheme>,
    /// CPU slowdown factor (1 = none, 4 = a mid-range phone).
    #[serde(default)]
    pub cpu_slowdown: Option<f64>,
    /// Network throttling: none, offline, slow-3g, fast-3g, fast-4g, or custom conditions.
    #[serde(default)]
    pub network: Option<NetworkArg>,
    /// Clear every emulation first.
    #[serde(default)]
    pub reset: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveCssArgs {
    /// The stylesheet's id from inject_css (e.g. devlens-css-1).
    pub id: String,
    /// Attach a screenshot of the viewport taken afterwards.
    #[serde(default)]
    pub screenshot: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

impl DevlensServer {
    async fn active_tab(&self, connection: &ConnectionArgs) -> Result<Tab, CallToolResult> {
        self.app()
            .browser()
            .tab(connection.id())
            .await
            .map_err(failure)
    }

    /// `result` with a viewport screenshot appended when asked (a failed capture becomes a
    /// note: the call itself worked).
    async fn with_screenshot(&self, tab: &Tab, mut result: CallToolResult) -> CallToolResult {
        if result.is_error == Some(true) {
            return result;
        }
        match tab.screenshot(&ScreenshotRequest::default()).await {
            Ok(shot) => result.content.push(image_block(&shot)),
            Err(e) => result
                .content
                .push(ContentBlock::text(format!("no screenshot: {e}"))),
        }
        result
    }
}

/// The shape of every page tool: resolve the tab (`connectionId` or the active one), run the
/// domain call on it, reply with its text and `structuredContent` or with the failure.
/// `screenshot: <bool>` appends a viewport screenshot taken afterwards.
macro_rules! on_tab {
    ($self:ident, $conn:expr, |$tab:ident| $call:expr) => {
        match $self.active_tab($conn).await {
            Ok($tab) => respond($call),
            Err(reply) => reply,
        }
    };
    ($self:ident, $conn:expr, |$tab:ident| $call:expr, screenshot: $shot:expr) => {
        match $self.active_tab($conn).await {
            Ok($tab) => {
                let reply = respond($call);
                if $shot == Some(true) {
                    $self.with_screenshot(&$tab, reply).await
                } else {
                    reply
                }
            }
            Err(reply) => reply,
        }
    };
}

#[tool_router(router = browser_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Launch a browser (headless by default; closed when devlens exits) or connect to a running
    /// Chrome (endpoint: port, host:port, http or ws URL). The new connection becomes active.
    #[tool(
        name = "chrome",
        annotations(title = "Launch or connect Chrome", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<ConnectionInfo>()
    )]
    async fn chrome(&self, Parameters(args): Parameters<ChromeArgs>) -> CallToolResult {
        let browser = self.app().browser();
        let connection_id = non_blank(args.connection_id).map(|s| s.trim().to_string());
        match args.action {
            ChromeAction::Launch => {
                if non_blank(args.endpoint).is_some() {
                    return failure(
                        "endpoint is for action `connect`; leave it out to launch a browser",
                    );
                }
                let options = LaunchOptions {
                    chrome_path: non_blank(args.chrome_path).map(PathBuf::from),
                    headless: args.headless.unwrap_or(true),
                    user_data_dir: non_blank(args.user_data_dir).map(PathBuf::from),
                    connection_id,
                    ..LaunchOptions::default()
                };
                respond(browser.launch(&options).await)
            }
            ChromeAction::Connect => {
                let Some(endpoint) = non_blank(args.endpoint) else {
                    return failure(
                        "give endpoint to connect to: a port (9222), host:port, http://host:port \
                         or a ws:// DevTools URL — or use action `launch` to start a browser",
                    );
                };
                let options = ConnectOptions {
                    endpoint,
                    connection_id,
                };
                respond(browser.connect(&options).await)
            }
        }
    }

    /// The browser connections: id, launched or connected, endpoint, tabs, which is active.
    #[tool(
        name = "chrome_list_connections",
        annotations(title = "List browser connections", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ConnectionList>()
    )]
    async fn chrome_list_connections(&self) -> CallToolResult {
        respond(Ok(self.app().browser().connections()))
    }

    /// Close a connection (default: the active one). A browser devlens launched is closed; a
    /// browser devlens connected to keeps running.
    #[tool(
        name = "chrome_disconnect",
        annotations(title = "Disconnect a browser", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<Disconnected>()
    )]
    async fn chrome_disconnect(
        &self,
        Parameters(args): Parameters<ConnectionArgs>,
    ) -> CallToolResult {
        respond(self.app().browser().disconnect(args.id()).await)
    }

    /// Tabs: list them, switch to one, open a new one (optionally loading url), or close one.
    /// Name a tab by index, title, url or id.
    #[tool(
        name = "target",
        annotations(
            title = "Browser tabs",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn target(&self, Parameters(args): Parameters<TargetArgs>) -> CallToolResult {
        let browser = self.app().browser();
        let conn = args.connection.id();
        let selector = TabSelector::from_parts(
            args.index,
            args.id.as_deref(),
            args.title.as_deref(),
            args.url.as_deref(),
        );
        match (args.action, selector) {
            (TargetAction::List, _) => respond(browser.tabs(conn).await),
            (TargetAction::Switch, Some(sel)) => respond(browser.switch_tab(conn, &sel).await),
            (TargetAction::Switch, None) => failure(
                "say which tab to switch to: index, title, url or id (target action `list` shows them)",
            ),
            (TargetAction::New, _) => respond(browser.new_tab(conn, args.url.as_deref()).await),
            (TargetAction::Close, sel) => respond(browser.close_tab(conn, sel.as_ref()).await),
        }
    }

    /// Load a URL, or go back, forward or reload. Answers with the final URL, HTTP status,
    /// title, and the console errors and failed requests of the load.
    #[tool(
        name = "navigate",
        annotations(title = "Navigate", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<NavigationOutcome>()
    )]
    async fn navigate(&self, Parameters(args): Parameters<NavigateArgs>) -> CallToolResult {
        let to = match (non_blank(args.url), args.action) {
            (Some(url), None) => Navigation::Url(url.trim().to_string()),
            (None, Some(HistoryAction::Back)) => Navigation::Back,
            (None, Some(HistoryAction::Forward)) => Navigation::Forward,
            (None, Some(HistoryAction::Reload)) => Navigation::Reload,
            _ => return failure("give either url, or action back, forward or reload"),
        };
        on_tab!(self, &args.connection, |tab| tab
            .navigate(&to, millis(args.timeout_ms))
            .await)
    }

    /// Find elements by CSS selector: compact summaries (tag, id, classes, role, text, key
    /// attributes, visibility, box). 5 by default, at most 20; filter by text and visibility.
    /// Looks inside open shadow roots and same-origin iframes when the page itself has no match.
    #[tool(
        name = "query_elements",
        annotations(title = "Query elements", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ElementList>()
    )]
    async fn query_elements(
        &self,
        Parameters(args): Parameters<QueryElementsArgs>,
    ) -> CallToolResult {
        let selector = match args.pierce {
            Some(true) if !args.selector.contains(">>>") => format!(">>> {}", args.selector),
            _ => args.selector,
        };
        let query = ElementQuery {
            selector,
            text: args.text,
            visible: args.visible,
            limit: args.limit,
            offset: args.offset.unwrap_or(0),
        };
        on_tab!(self, &args.connection, |tab| tab
            .query_elements(&query)
            .await)
    }

    /// The page's accessibility tree as compact text; interactive elements get refs (e12) that
    /// the action tools accept. Paged (200 lines by default).
    #[tool(
        name = "snapshot",
        annotations(title = "Page snapshot", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<Snapshot>()
    )]
    async fn snapshot(&self, Parameters(args): Parameters<SnapshotArgs>) -> CallToolResult {
        let options = SnapshotOptions {
            interactive_only: args.interactive_only.unwrap_or(false),
            root: optional_target(args.root),
            offset: args.offset.unwrap_or(0),
            limit: args.limit,
        };
        on_tab!(self, &args.connection, |tab| tab.snapshot(&options).await)
    }

    /// Click an element (snapshot ref or CSS selector) with real mouse events. Answers with what
    /// changed: navigation, console errors, failed requests, a dialog, new tabs.
    #[tool(
        name = "click_element",
        annotations(title = "Click", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<ActionOutcome>()
    )]
    async fn click_element(&self, Parameters(args): Parameters<ClickArgs>) -> CallToolResult {
        let target = ElementTarget::parse(&args.element);
        let options = ClickOptions {
            button: args.button.unwrap_or_default(),
            double: args.double_click.unwrap_or(false),
        };
        on_tab!(self, &args.connection, |tab| tab
            .click(&target, &options)
            .await)
    }

    /// Replace the value of a text field, textarea, contenteditable or select, as typing would.
    #[tool(
        name = "fill_element",
        annotations(title = "Fill a field", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<ActionOutcome>()
    )]
    async fn fill_element(&self, Parameters(args): Parameters<FillArgs>) -> CallToolResult {
        let target = ElementTarget::parse(&args.element);
        on_tab!(self, &args.connection, |tab| tab
            .fill(&target, &args.value)
            .await)
    }

    /// Type text key by key into the focused element (or element), optionally pressing Enter.
    #[tool(
        name = "type_text",
        annotations(title = "Type text", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<ActionOutcome>()
    )]
    async fn type_text(&self, Parameters(args): Parameters<TypeTextArgs>) -> CallToolResult {
        let target = optional_target(args.element);
        let submit = args.submit.unwrap_or(false);
        on_tab!(self, &args.connection, |tab| tab
            .type_text(target.as_ref(), &args.text, submit)
            .await)
    }

    /// Press a key or combination (Enter, Escape, ArrowDown, Control+A, Shift+Tab).
    #[tool(
        name = "press_key",
        annotations(title = "Press a key", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<ActionOutcome>()
    )]
    async fn press_key(&self, Parameters(args): Parameters<PressKeyArgs>) -> CallToolResult {
        let target = optional_target(args.element);
        on_tab!(self, &args.connection, |tab| tab
            .press_key(&args.key, target.as_ref())
            .await)
    }

    /// Move the mouse over an element (hover styles, menus, tooltips).
    #[tool(
        name = "hover",
        annotations(title = "Hover", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<ActionOutcome>()
    )]
    async fn hover(&self, Parameters(args): Parameters<ElementArgs>) -> CallToolResult {
        let target = ElementTarget::parse(&args.element);
        on_tab!(self, &args.connection, |tab| tab.hover(&target).await)
    }

    /// Select options of a <select> by value or visible label.
    #[tool(
        name = "select_option",
        annotations(title = "Select an option", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<ActionOutcome>()
    )]
    async fn select_option(
        &self,
        Parameters(args): Parameters<SelectOptionArgs>,
    ) -> CallToolResult {
        let target = ElementTarget::parse(&args.element);
        on_tab!(self, &args.connection, |tab| tab
            .select_option(&target, &args.values)
            .await)
    }

    /// Scroll an element into view, or the page (or a scrollable element) in a direction.
    #[tool(
        name = "scroll",
        annotations(title = "Scroll", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<ActionOutcome>()
    )]
    async fn scroll(&self, Parameters(args): Parameters<ScrollArgs>) -> CallToolResult {
        let target = optional_target(args.element);
        if target.is_none() && args.direction.is_none() {
            return failure("give element (to scroll into view), direction, or both");
        }
        let request = ScrollRequest {
            target,
            direction: args.direction,
            amount: args.amount,
        };
        on_tab!(self, &args.connection, |tab| tab.scroll(&request).await)
    }

    /// Wait until text appears or disappears, a selector reaches a state, the URL contains
    /// something, or the network is idle. Give exactly one condition; timeoutMs default 5000.
    #[tool(
        name = "wait_for",
        annotations(title = "Wait for", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<WaitOutcome>()
    )]
    async fn wait_for(&self, Parameters(args): Parameters<WaitForArgs>) -> CallToolResult {
        let state = args.state.unwrap_or_default();
        let conditions: Vec<WaitCondition> = [
            non_blank(args.text).map(WaitCondition::Text),
            non_blank(args.text_gone).map(WaitCondition::TextGone),
            non_blank(args.selector).map(|selector| WaitCondition::Selector { selector, state }),
            non_blank(args.url_contains).map(WaitCondition::UrlContains),
            (args.network_idle == Some(true)).then_some(WaitCondition::NetworkIdle),
        ]
        .into_iter()
        .flatten()
        .collect();
        let [condition] = conditions.as_slice() else {
            return failure(
                "give exactly one condition: text, textGone, selector (with state), urlContains \
                 or networkIdle: true",
            );
        };
        on_tab!(self, &args.connection, |tab| tab
            .wait_for(condition, millis(args.timeout_ms))
            .await)
    }

    /// Accept or dismiss the open JavaScript dialog (alert, confirm, prompt, beforeunload).
    #[tool(
        name = "handle_dialog",
        annotations(title = "Handle a dialog", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<ActionOutcome>()
    )]
    async fn handle_dialog(
        &self,
        Parameters(args): Parameters<HandleDialogArgs>,
    ) -> CallToolResult {
        on_tab!(self, &args.connection, |tab| tab
            .handle_dialog(args.accept, args.prompt_text.as_deref())
            .await)
    }

    /// The tab's console: messages, errors with their stack, uncaught exceptions. Filter by
    /// level and text; the most recent 50 by default; sinceLastRead for only new ones.
    #[tool(
        name = "get_console_logs",
        annotations(title = "Console logs", read_only_hint = true, idempotent_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<ConsoleLogs>()
    )]
    async fn get_console_logs(&self, Parameters(args): Parameters<ConsoleArgs>) -> CallToolResult {
        let level = match non_blank(args.level) {
            None => None,
            Some(l) => match ConsoleLevel::parse(l.trim()) {
                Some(level) => Some(level),
                None => {
                    return failure(format!(
                        "unknown level `{l}`: use error, warn, info, log or debug"
                    ));
                }
            },
        };
        let query = ConsoleQuery {
            level,
            contains: args.contains,
            limit: args.limit,
            since_last_read: args.since_last_read.unwrap_or(false),
            include_previous_pages: args.include_previous_pages.unwrap_or(false),
        };
        on_tab!(self, &args.connection, |tab| Ok(tab.console_logs(&query)))
    }

    /// The tab's requests (current page): id, method, status, type, URL, duration, size.
    /// Static resources that loaded fine are left out unless includeStatic. Filters: failedOnly,
    /// resourceType, urlContains; paged (50 by default).
    #[tool(
        name = "list_network_requests",
        annotations(title = "Network requests", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<NetworkPage>()
    )]
    async fn list_network_requests(
        &self,
        Parameters(args): Parameters<NetworkArgs>,
    ) -> CallToolResult {
        let query = NetworkQuery {
            failed_only: args.failed_only.unwrap_or(false),
            resource_type: non_blank(args.resource_type),
            url_contains: non_blank(args.url_contains),
            offset: args.offset.unwrap_or(0),
            limit: args.limit,
            include_previous_pages: args.include_previous_pages.unwrap_or(false),
            include_static: args.include_static.unwrap_or(false),
        };
        on_tab!(self, &args.connection, |tab| Ok(
            tab.network_requests(&query)
        ))
    }

    /// One request: headers, request body, response body (bounded by maxBodyBytes, or saved to
    /// a file with saveResponseBodyTo).
    #[tool(
        name = "get_network_request",
        annotations(title = "Network request details", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<RequestDetails>()
    )]
    async fn get_network_request(
        &self,
        Parameters(args): Parameters<NetworkRequestArgs>,
    ) -> CallToolResult {
        let id = match args.id {
            RequestId::Number(n) => n.to_string(),
            RequestId::Text(s) => s,
        };
        let defaults = BodyOptions::default();
        let options = BodyOptions {
            max_body_bytes: args.max_body_bytes.unwrap_or(defaults.max_body_bytes),
            save_response_body_to: non_blank(args.save_response_body_to).map(PathBuf::from),
            headers: args.headers.unwrap_or(defaults.headers),
        };
        on_tab!(self, &args.connection, |tab| tab
            .network_request(&id, &options)
            .await)
    }

    /// Capture the viewport, the full page or one element as PNG (default) or JPEG. Returns the
    /// image, or with path saves it there and returns the path.
    #[tool(
        name = "screenshot",
        annotations(title = "Screenshot", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<Screenshot>()
    )]
    async fn screenshot(&self, Parameters(args): Parameters<ScreenshotArgs>) -> CallToolResult {
        let scope = match (
            optional_target(args.element),
            args.full_page.unwrap_or(false),
        ) {
            (Some(_), true) => return failure("give element or fullPage, not both"),
            (Some(target), false) => ScreenshotScope::Element(target),
            (None, true) => ScreenshotScope::FullPage,
            (None, false) => ScreenshotScope::Viewport,
        };
        let request = ScreenshotRequest {
            scope,
            format: args.format.unwrap_or_default(),
            quality: args.quality,
            path: non_blank(args.path).map(PathBuf::from),
        };
        let tab = match self.active_tab(&args.connection).await {
            Ok(tab) => tab,
            Err(reply) => return reply,
        };
        match tab.screenshot(&request).await {
            Ok(shot) => {
                let mut result = structured(shot.to_text(), &shot);
                if request.path.is_none() {
                    result.content.push(image_block(&shot));
                }
                result
            }
            Err(e) => failure(e),
        }
    }

    /// Run JavaScript in the page like the DevTools console: returns the value as JSON, the
    /// console output it produced, and a thrown error with its stack. screenshot: true attaches
    /// a screenshot taken afterwards.
    #[tool(
        name = "evaluate",
        annotations(title = "Evaluate JavaScript", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<Evaluation>()
    )]
    async fn evaluate(&self, Parameters(args): Parameters<EvaluateArgs>) -> CallToolResult {
        let options = EvaluateOptions {
            timeout_ms: args.timeout_ms,
            max_value_bytes: args.max_value_bytes,
        };
        on_tab!(
            self,
            &args.connection,
            |tab| tab.evaluate(&args.expression, &options).await,
            screenshot: args.screenshot
        )
    }

    /// Add a stylesheet to the page and say how many elements its rules match. screenshot: true
    /// attaches a screenshot taken afterwards. remove_css takes it away again.
    #[tool(
        name = "inject_css",
        annotations(title = "Inject CSS", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<CssInjection>()
    )]
    async fn inject_css(&self, Parameters(args): Parameters<InjectCssArgs>) -> CallToolResult {
        on_tab!(
            self,
            &args.connection,
            |tab| tab.inject_css(&args.css).await,
            screenshot: args.screenshot
        )
    }

    /// Remove a stylesheet inject_css added (by the id it answered with). screenshot: true
    /// attaches a screenshot taken afterwards.
    #[tool(
        name = "remove_css",
        annotations(title = "Remove injected CSS", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<CssRemoval>()
    )]
    async fn remove_css(&self, Parameters(args): Parameters<RemoveCssArgs>) -> CallToolResult {
        on_tab!(
            self,
            &args.connection,
            |tab| tab.remove_css(&args.id).await,
            screenshot: args.screenshot
        )
    }

    /// Emulate a device: viewport, prefers-color-scheme, CPU slowdown, network throttling.
    /// Settings stay on the tab until changed or reset. With no arguments, shows what is in
    /// effect.
    #[tool(
        name = "emulate",
        annotations(title = "Emulate a device", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<EmulationState>()
    )]
    async fn emulate(&self, Parameters(args): Parameters<EmulateArgs>) -> CallToolResult {
        let network = match args.network {
            None => None,
            Some(NetworkArg::Profile(p)) => Some(p),
            Some(NetworkArg::Preset(name)) => match NetworkProfile::parse(&name) {
                Some(p) => Some(p),
                None => {
                    return failure(format!(
                        "unknown network profile `{name}`: use none, offline, slow-3g, fast-3g, \
                         fast-4g or {{\"custom\": {{\"latencyMs\", \"downloadKbps\", \"uploadKbps\"}}}}"
                    ));
                }
            },
        };
        let request = EmulationRequest {
            viewport: args.viewport,
            color_scheme: args.color_scheme,
            cpu_slowdown: args.cpu_slowdown,
            network,
            reset: args.reset.unwrap_or(false),
        };
        on_tab!(self, &args.connection, |tab| tab.emulate(&request).await)
    }
}

/// An optional `element` argument: blank means none.
fn optional_target(element: Option<String>) -> Option<ElementTarget> {
    non_blank(element).map(|e| ElementTarget::parse(&e))
}

/// An optional text argument: blank means none.
fn non_blank(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}
