//! The browser family's requests — connections, tabs, page reads, actions, console, network,
//! screenshots, live code, emulation — as every surface sends them, and what they run on
//! [`devlens_browser`]. A page tool acts on the tab `connectionId` names, or the active tab of
//! the active connection.
//!
//! Three rules live here because a tool call must not be able to break out through a browser:
//! every file a call writes (a screenshot, a saved response body) is confined to the workspace
//! or the artifacts folder — checked when the call arrives, and again as the file is written
//! ([`Tab::writing_in`]); the local files a page may open (`file:` URLs) are those same places
//! only — checked when a call names one ([`check_file_url`]), and for everything a page loads
//! afterwards by the browser itself ([`BrowserSessions::confine_files`]); and the executable and
//! profile a launch uses come from the server's configuration (`[browser]`, `CHROME_PATH`), or
//! from its allowed lists, never freely from the call.
//!
//! [`BrowserSessions::confine_files`]: devlens_browser::BrowserSessions::confine_files

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use devlens_browser::{
    ActionOutcome, BodyOptions, ClickOptions, ColorScheme, ConnectOptions, ConnectionInfo,
    ConnectionList, ConsoleLevel, ConsoleLogs, ConsoleQuery, ElementList, ElementQuery,
    ElementState, ElementTarget, EmulationRequest, EmulationState, EvaluateOptions, Evaluation,
    ImageFormat, LaunchOptions, MouseButton, Navigation, NavigationOutcome, NetworkPage,
    NetworkProfile, NetworkQuery, NewTab, RequestDetails, Sandbox, ScreenshotRequest,
    ScreenshotScope, ScrollDirection, ScrollRequest, Snapshot, SnapshotOptions, Tab, TabInfo,
    TabList, TabSelector, ViewportSize, WaitCondition, WaitOutcome,
};

/// The results the surfaces name in their tool definitions and replies.
pub use devlens_browser::{CssInjection, CssRemoval, Disconnected, Screenshot};
use devlens_workspace::{Access, Workspace};

use crate::{App, AppError};

/// Which connection a call is about.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionArgs {
    // Omit for the active connection. Said once for all page tools (chrome_list_connections, the
    // server's instructions), not in each tool's schema: ~45 bytes times 26 tools.
    #[serde(default)]
    pub connection_id: Option<String>,
}

impl ConnectionArgs {
    pub fn id(&self) -> Option<&str> {
        self.connection_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChromeAction {
    // Start a new browser (headless by default). The chrome tool's description says what each
    // action does.
    Launch,
    // Attach to a running Chrome's DevTools endpoint.
    Connect,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChromeArgs {
    pub action: ChromeAction,
    /// launch: run without a window (default true).
    #[serde(default)]
    pub headless: Option<bool>,
    /// launch: an allowed executable (default: the configured one).
    #[serde(default)]
    pub chrome_path: Option<String>,
    /// launch: an allowed profile folder (default: a fresh one).
    #[serde(default)]
    pub user_data_dir: Option<String>,
    /// connect: a port (9222), host:port, or an http:// or ws:// URL.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The new connection's id (default c1, c2, …).
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetAction {
    // What each does is in the target tool's description.
    List,
    Switch,
    New,
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
    /// switch/close: the tab's id (or its first 4+ characters).
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
    /// Load timeout in ms (default 30000, at most 120000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueryElementsArgs {
    /// CSS selector, e.g. "form button"; `a >>> b`: b inside the shadow roots and iframes under a.
    pub selector: String,
    /// Search shadow roots and iframes even when the page itself has matches.
    #[serde(default)]
    pub pierce: Option<bool>,
    /// Only elements whose text, value, label or placeholder has this (case-insensitive).
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
    /// A snapshot ref (e12) or a CSS selector.
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
    /// A snapshot ref (e12) or a CSS selector.
    #[serde(alias = "ref", alias = "selector")]
    pub element: String,
    /// The new value (replaces the field's; a select picks this option).
    pub value: String,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TypeTextArgs {
    /// The text to type, key by key.
    pub text: String,
    /// Focus this first (ref or CSS selector).
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
    /// Focus this first (ref or CSS selector).
    #[serde(default, alias = "ref", alias = "selector")]
    pub element: Option<String>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ElementArgs {
    /// A snapshot ref (e12) or a CSS selector.
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
    /// Option values or visible labels (several for a multiple select).
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
    /// Wait for this text (case-insensitive) to appear.
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
    /// Timeout in ms (default 5000, at most 60000).
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
    /// Lowest level: error, warn, info, log or debug (default: all).
    #[serde(default)]
    pub level: Option<String>,
    /// Only entries containing this (case-insensitive).
    #[serde(default)]
    pub contains: Option<String>,
    /// At most this many, the most recent (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only entries since this tab's previous get_console_logs.
    #[serde(default)]
    pub since_last_read: Option<bool>,
    /// Also entries of the tab's earlier pages.
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
    /// document, script, fetch, xhr, image, stylesheet, font, …
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
    /// Also requests of the tab's earlier pages.
    #[serde(default)]
    pub include_previous_pages: Option<bool>,
    /// Also static resources that loaded fine.
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
    /// Bytes of each body inlined (default 4096, at most 262144).
    #[serde(default)]
    pub max_body_bytes: Option<usize>,
    /// Save the full response body to this workspace file instead of inlining it.
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
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// JPEG quality 1-100 (default 80).
    #[serde(default)]
    pub quality: Option<u8>,
    /// Save it to this workspace file and answer with the path.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateArgs {
    /// JavaScript, as in the DevTools console (top-level await works).
    pub expression: String,
    /// Timeout in ms, then the script is stopped (default 10000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Cut the value's JSON at this many bytes (default 8192, at most 262144).
    #[serde(default)]
    pub max_value_bytes: Option<usize>,
    /// Attach a viewport screenshot taken afterwards.
    #[serde(default)]
    pub screenshot: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InjectCssArgs {
    /// Rules to add, e.g. "header { display: none }".
    pub css: String,
    /// Attach a viewport screenshot taken afterwards.
    #[serde(default)]
    pub screenshot: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

/// A network preset name or custom conditions.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NetworkArg {
    // none, offline, slow-3g, fast-3g or fast-4g (the field's description says so).
    Preset(String),
    // {"custom": {"latencyMs": .., "downloadKbps": .., "uploadKbps": ..}} (the schema shows it).
    Profile(NetworkProfile),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmulateArgs {
    /// In CSS pixels.
    #[serde(default)]
    pub viewport: Option<ViewportSize>,
    /// prefers-color-scheme: light, dark or no-preference.
    #[serde(default)]
    pub color_scheme: Option<ColorScheme>,
    /// CPU slowdown factor (1 = none, 4 = a mid-range phone).
    #[serde(default)]
    pub cpu_slowdown: Option<f64>,
    /// Throttling: a preset or custom conditions.
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
    /// Attach a viewport screenshot taken afterwards.
    #[serde(default)]
    pub screenshot: Option<bool>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

/// A result, and the viewport as it looked afterwards when the call asked for it (a failed
/// capture is a note, not a failure: the call itself worked).
#[derive(Debug)]
pub struct WithScreenshot<T> {
    pub result: T,
    pub screenshot: Option<Result<Screenshot, String>>,
}

/// The tab a page call acts on.
pub async fn tab(app: &App, connection: &ConnectionArgs) -> Result<Tab, AppError> {
    Ok(app.browser().tab(connection.id()).await?)
}

pub(crate) async fn with_screenshot<T>(
    tab: &Tab,
    result: T,
    asked: Option<bool>,
) -> WithScreenshot<T> {
    let screenshot = match asked {
        Some(true) => Some(
            tab.screenshot(&ScreenshotRequest::default())
                .await
                .map_err(|e| e.to_string()),
        ),
        _ => None,
    };
    WithScreenshot { result, screenshot }
}

/// An optional `element` argument: blank means none.
fn optional_target(element: Option<String>) -> Option<ElementTarget> {
    non_blank(element).map(|e| ElementTarget::parse(&e))
}

/// An optional text argument: blank means none.
fn non_blank(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

fn millis(ms: Option<u64>) -> Option<Duration> {
    ms.map(Duration::from_millis)
}

/// A `file:` URL a call asks the browser to open: allowed only for a file or folder inside the
/// workspace or devlens' artifacts folder (resolved with symlinks followed, as every path a
/// tool names). Any other URL passes: web pages cannot load local files, and the browser checks
/// every `file:` load a page makes itself.
pub(crate) fn check_file_url(ws: &Workspace, url: &str) -> Result<(), AppError> {
    let refused = |why: String| {
        AppError::invalid(format!(
            "`{}` was not opened: the browser opens local files only inside the workspace ({}) \
             or devlens' artifacts folder ({}), and {why}. Put the file in the workspace, or \
             serve it over http (your dev server) and open that URL.",
            url.trim(),
            ws.root().display(),
            ws.places().artifacts().display()
        ))
    };
    match devlens_browser::file_url_path(url) {
        Ok(None) => Ok(()),
        Ok(Some(path)) => match ws.resolve(&path, Access::Read) {
            Ok(_) => Ok(()),
            Err(_) => Err(refused(format!("{path} is not"))),
        },
        Err(why) => Err(refused(why)),
    }
}

/// What `[browser] no_sandbox` asks of a launch: Chrome's sandbox stays on unless devlens runs
/// as root, or the configuration turns it off.
pub fn sandbox_setting(no_sandbox: bool) -> Sandbox {
    if no_sandbox {
        Sandbox::Disabled
    } else {
        Sandbox::Auto
    }
}

/// Where a call may write a file it names: inside the workspace or the data dir.
pub(crate) fn output_path(
    ws: &Workspace,
    path: Option<String>,
) -> Result<Option<PathBuf>, AppError> {
    match non_blank(path) {
        None => Ok(None),
        Some(p) => Ok(Some(ws.resolve(p.trim(), Access::Write)?.path)),
    }
}

/// A path a call named for the executable or the profile of a launch: allowed only when the
/// configuration lists it.
fn allowed_path(
    given: Option<String>,
    configured: Option<&Path>,
    allowed: &[PathBuf],
    what: &str,
    setting: &str,
) -> Result<Option<PathBuf>, AppError> {
    let Some(given) = non_blank(given) else {
        return Ok(configured.map(Path::to_path_buf));
    };
    let given = PathBuf::from(given.trim());
    let same = |a: &Path, b: &Path| {
        a == b
            || matches!(
                (std::fs::canonicalize(a), std::fs::canonicalize(b)),
                (Ok(x), Ok(y)) if x == y
            )
    };
    if configured.is_some_and(|c| same(c, &given)) || allowed.iter().any(|a| same(a, &given)) {
        return Ok(Some(given));
    }
    Err(AppError::invalid(format!(
        "{what} `{}` is not one this server allows a tool call to choose: leave it out to use \
         the configured one, or list it in [browser] {setting} in devlens.toml",
        given.display()
    )))
}

/// `chrome`: launch a browser or connect to a running Chrome; the new connection is active.
pub async fn chrome(app: &App, args: ChromeArgs) -> Result<ConnectionInfo, AppError> {
    let browser = app.browser();
    let connection_id = non_blank(args.connection_id).map(|s| s.trim().to_string());
    // Pages of a browser a tool call drives open local files only where its tools may read.
    browser.confine_files(app.workspace()?.places());
    match args.action {
        ChromeAction::Launch => {
            if non_blank(args.endpoint).is_some() {
                return Err(AppError::invalid(
                    "endpoint is for action `connect`; leave it out to launch a browser",
                ));
            }
            let settings = &app.config().file.browser;
            let options = LaunchOptions {
                chrome_path: allowed_path(
                    args.chrome_path,
                    settings.chrome_path.as_deref(),
                    &settings.allowed_chrome_paths,
                    "chromePath",
                    "allowed_chrome_paths",
                )?,
                headless: args.headless.unwrap_or(true),
                user_data_dir: allowed_path(
                    args.user_data_dir,
                    settings.user_data_dir.as_deref(),
                    &settings.allowed_user_data_dirs,
                    "userDataDir",
                    "allowed_user_data_dirs",
                )?,
                connection_id,
                sandbox: sandbox_setting(settings.no_sandbox.unwrap_or(false)),
                ..LaunchOptions::default()
            };
            Ok(browser.launch(&options).await?)
        }
        ChromeAction::Connect => {
            let Some(endpoint) = non_blank(args.endpoint) else {
                return Err(AppError::invalid(
                    "give endpoint to connect to: a port (9222), host:port, http://host:port or \
                     a ws:// DevTools URL — or use action `launch` to start a browser",
                ));
            };
            let options = ConnectOptions {
                endpoint,
                connection_id,
            };
            Ok(browser.connect(&options).await?)
        }
    }
}

/// `chrome_list_connections`.
pub fn connections(app: &App) -> ConnectionList {
    app.browser().connections()
}

/// `chrome_disconnect`.
pub async fn disconnect(app: &App, args: ConnectionArgs) -> Result<Disconnected, AppError> {
    Ok(app.browser().disconnect(args.id()).await?)
}

/// What a `target` call answers: the tab list, the tab switched to, the tab opened, or the
/// tabs left after a close. Serialized as the inner value.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum TargetOutcome {
    Tabs(TabList),
    Switched(TabInfo),
    Opened(Box<NewTab>),
}

impl devlens_core::Report for TargetOutcome {
    fn to_text(&self) -> String {
        match self {
            Self::Tabs(tabs) => tabs.to_text(),
            Self::Switched(tab) => format!("switched to {}", tab.to_line().trim()),
            Self::Opened(tab) => tab.to_text(),
        }
    }
}

/// `target`: list, switch, open or close tabs.
pub async fn target(app: &App, args: TargetArgs) -> Result<TargetOutcome, AppError> {
    let browser = app.browser();
    let conn = args.connection.id();
    let selector = TabSelector::from_parts(
        args.index,
        args.id.as_deref(),
        args.title.as_deref(),
        args.url.as_deref(),
    );
    Ok(match (args.action, selector) {
        (TargetAction::List, _) => TargetOutcome::Tabs(browser.tabs(conn).await?),
        (TargetAction::Switch, Some(sel)) => {
            TargetOutcome::Switched(browser.switch_tab(conn, &sel).await?)
        }
        (TargetAction::Switch, None) => {
            return Err(AppError::invalid(
                "say which tab to switch to: index, title, url or id (target action `list` shows \
                 them)",
            ));
        }
        (TargetAction::New, _) => {
            if let Some(url) = &args.url {
                check_file_url(&*app.workspace()?, url)?;
            }
            TargetOutcome::Opened(Box::new(browser.new_tab(conn, args.url.as_deref()).await?))
        }
        (TargetAction::Close, sel) => {
            TargetOutcome::Tabs(browser.close_tab(conn, sel.as_ref()).await?)
        }
    })
}

/// `navigate`: a URL, or back, forward, reload.
pub async fn navigate(app: &App, args: NavigateArgs) -> Result<NavigationOutcome, AppError> {
    let to = match (non_blank(args.url), args.action) {
        (Some(url), None) => Navigation::Url(url.trim().to_string()),
        (None, Some(HistoryAction::Back)) => Navigation::Back,
        (None, Some(HistoryAction::Forward)) => Navigation::Forward,
        (None, Some(HistoryAction::Reload)) => Navigation::Reload,
        _ => {
            return Err(AppError::invalid(
                "give either url, or action back, forward or reload",
            ));
        }
    };
    if let Navigation::Url(url) = &to {
        check_file_url(&*app.workspace()?, url)?;
    }
    let (tab, _turn) = acting_tab(app, &args.connection).await?;
    Ok(tab.navigate(&to, millis(args.timeout_ms)).await?)
}

/// The tab, once it is this action's turn on it: input and navigation from every session act
/// on a tab one at a time ([`Tab::take_turn`]); reads do not wait.
async fn acting_tab(
    app: &App,
    connection: &ConnectionArgs,
) -> Result<(Tab, devlens_browser::TabTurn), AppError> {
    let tab = tab(app, connection).await?;
    let turn = tab.take_turn().await;
    Ok((tab, turn))
}

/// `query_elements`.
pub async fn query_elements(app: &App, args: QueryElementsArgs) -> Result<ElementList, AppError> {
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
    Ok(tab(app, &args.connection)
        .await?
        .query_elements(&query)
        .await?)
}

/// `snapshot`.
pub async fn snapshot(app: &App, args: SnapshotArgs) -> Result<Snapshot, AppError> {
    let options = SnapshotOptions {
        interactive_only: args.interactive_only.unwrap_or(false),
        root: optional_target(args.root),
        offset: args.offset.unwrap_or(0),
        limit: args.limit,
    };
    Ok(tab(app, &args.connection).await?.snapshot(&options).await?)
}

/// `click_element`.
pub async fn click(app: &App, args: ClickArgs) -> Result<ActionOutcome, AppError> {
    let target = ElementTarget::parse(&args.element);
    let options = ClickOptions {
        button: args.button.unwrap_or_default(),
        double: args.double_click.unwrap_or(false),
    };
    let (tab, _turn) = acting_tab(app, &args.connection).await?;
    Ok(tab.click(&target, &options).await?)
}

/// `fill_element`.
pub async fn fill(app: &App, args: FillArgs) -> Result<ActionOutcome, AppError> {
    let target = ElementTarget::parse(&args.element);
    let (tab, _turn) = acting_tab(app, &args.connection).await?;
    Ok(tab.fill(&target, &args.value).await?)
}

/// `type_text`.
pub async fn type_text(app: &App, args: TypeTextArgs) -> Result<ActionOutcome, AppError> {
    let target = optional_target(args.element);
    let submit = args.submit.unwrap_or(false);
    let (tab, _turn) = acting_tab(app, &args.connection).await?;
    Ok(tab.type_text(target.as_ref(), &args.text, submit).await?)
}

/// `press_key`.
pub async fn press_key(app: &App, args: PressKeyArgs) -> Result<ActionOutcome, AppError> {
    let target = optional_target(args.element);
    let (tab, _turn) = acting_tab(app, &args.connection).await?;
    Ok(tab.press_key(&args.key, target.as_ref()).await?)
}

/// `hover`.
pub async fn hover(app: &App, args: ElementArgs) -> Result<ActionOutcome, AppError> {
    let target = ElementTarget::parse(&args.element);
    let (tab, _turn) = acting_tab(app, &args.connection).await?;
    Ok(tab.hover(&target).await?)
}

/// `select_option`.
pub async fn select_option(app: &App, args: SelectOptionArgs) -> Result<ActionOutcome, AppError> {
    let target = ElementTarget::parse(&args.element);
    let (tab, _turn) = acting_tab(app, &args.connection).await?;
    Ok(tab.select_option(&target, &args.values).await?)
}

/// `scroll`.
pub async fn scroll(app: &App, args: ScrollArgs) -> Result<ActionOutcome, AppError> {
    let target = optional_target(args.element);
    if target.is_none() && args.direction.is_none() {
        return Err(AppError::invalid(
            "give element (to scroll into view), direction, or both",
        ));
    }
    let request = ScrollRequest {
        target,
        direction: args.direction,
        amount: args.amount,
    };
    let (tab, _turn) = acting_tab(app, &args.connection).await?;
    Ok(tab.scroll(&request).await?)
}

/// `wait_for`: exactly one condition.
pub async fn wait_for(app: &App, args: WaitForArgs) -> Result<WaitOutcome, AppError> {
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
        return Err(AppError::invalid(
            "give exactly one condition: text, textGone, selector (with state), urlContains or \
             networkIdle: true",
        ));
    };
    let tab = tab(app, &args.connection).await?;
    Ok(tab.wait_for(condition, millis(args.timeout_ms)).await?)
}

/// `handle_dialog`.
pub async fn handle_dialog(app: &App, args: HandleDialogArgs) -> Result<ActionOutcome, AppError> {
    let tab = tab(app, &args.connection).await?;
    Ok(tab
        .handle_dialog(args.accept, args.prompt_text.as_deref())
        .await?)
}

/// `get_console_logs`.
pub async fn console_logs(app: &App, args: ConsoleArgs) -> Result<ConsoleLogs, AppError> {
    let level = match non_blank(args.level) {
        None => None,
        Some(l) => Some(ConsoleLevel::parse(l.trim()).ok_or_else(|| {
            AppError::invalid(format!(
                "unknown level `{l}`: use error, warn, info, log or debug"
            ))
        })?),
    };
    let query = ConsoleQuery {
        level,
        contains: args.contains,
        limit: args.limit,
        since_last_read: args.since_last_read.unwrap_or(false),
        include_previous_pages: args.include_previous_pages.unwrap_or(false),
    };
    Ok(tab(app, &args.connection).await?.console_logs(&query))
}

/// `list_network_requests`.
pub async fn network_requests(app: &App, args: NetworkArgs) -> Result<NetworkPage, AppError> {
    let query = NetworkQuery {
        failed_only: args.failed_only.unwrap_or(false),
        resource_type: non_blank(args.resource_type),
        url_contains: non_blank(args.url_contains),
        offset: args.offset.unwrap_or(0),
        limit: args.limit,
        include_previous_pages: args.include_previous_pages.unwrap_or(false),
        include_static: args.include_static.unwrap_or(false),
    };
    Ok(tab(app, &args.connection).await?.network_requests(&query))
}

/// `get_network_request`: a body saved to a file only inside the workspace or the data dir.
pub async fn network_request(
    app: &App,
    ws: &Workspace,
    args: NetworkRequestArgs,
) -> Result<RequestDetails, AppError> {
    let id = match args.id {
        RequestId::Number(n) => n.to_string(),
        RequestId::Text(s) => s,
    };
    let defaults = BodyOptions::default();
    let options = BodyOptions {
        max_body_bytes: args.max_body_bytes.unwrap_or(defaults.max_body_bytes),
        save_response_body_to: output_path(ws, args.save_response_body_to)?,
        headers: args.headers.unwrap_or(defaults.headers),
    };
    Ok(tab(app, &args.connection)
        .await?
        .writing_in(ws.places())
        .network_request(&id, &options)
        .await?)
}

/// `screenshot`: saved to a file only inside the workspace or the data dir.
pub async fn screenshot(
    app: &App,
    ws: &Workspace,
    args: ScreenshotArgs,
) -> Result<Screenshot, AppError> {
    let scope = match (
        optional_target(args.element),
        args.full_page.unwrap_or(false),
    ) {
        (Some(_), true) => return Err(AppError::invalid("give element or fullPage, not both")),
        (Some(target), false) => ScreenshotScope::Element(target),
        (None, true) => ScreenshotScope::FullPage,
        (None, false) => ScreenshotScope::Viewport,
    };
    let request = ScreenshotRequest {
        scope,
        format: args.format.unwrap_or_default(),
        quality: args.quality,
        path: output_path(ws, args.path)?,
    };
    Ok(tab(app, &args.connection)
        .await?
        .writing_in(ws.places())
        .screenshot(&request)
        .await?)
}

/// `evaluate`.
pub async fn evaluate(
    app: &App,
    args: EvaluateArgs,
) -> Result<WithScreenshot<Evaluation>, AppError> {
    let options = EvaluateOptions {
        timeout_ms: args.timeout_ms,
        max_value_bytes: args.max_value_bytes,
    };
    let tab = tab(app, &args.connection).await?;
    let result = tab.evaluate(&args.expression, &options).await?;
    Ok(with_screenshot(&tab, result, args.screenshot).await)
}

/// `inject_css`.
pub async fn inject_css(
    app: &App,
    args: InjectCssArgs,
) -> Result<WithScreenshot<CssInjection>, AppError> {
    let tab = tab(app, &args.connection).await?;
    let result = tab.inject_css(&args.css).await?;
    Ok(with_screenshot(&tab, result, args.screenshot).await)
}

/// `remove_css`.
pub async fn remove_css(
    app: &App,
    args: RemoveCssArgs,
) -> Result<WithScreenshot<CssRemoval>, AppError> {
    let tab = tab(app, &args.connection).await?;
    let result = tab.remove_css(&args.id).await?;
    Ok(with_screenshot(&tab, result, args.screenshot).await)
}

/// `emulate`.
pub async fn emulate(app: &App, args: EmulateArgs) -> Result<EmulationState, AppError> {
    let network = match args.network {
        None => None,
        Some(NetworkArg::Profile(p)) => Some(p),
        Some(NetworkArg::Preset(name)) => Some(NetworkProfile::parse(&name).ok_or_else(|| {
            AppError::invalid(format!(
                "unknown network profile `{name}`: use none, offline, slow-3g, fast-3g, fast-4g \
                 or {{\"custom\": {{\"latencyMs\", \"downloadKbps\", \"uploadKbps\"}}}}"
            ))
        })?),
    };
    let request = EmulationRequest {
        viewport: args.viewport,
        color_scheme: args.color_scheme,
        cpu_slowdown: args.cpu_slowdown,
        network,
        reset: args.reset.unwrap_or(false),
    };
    Ok(tab(app, &args.connection).await?.emulate(&request).await?)
}
