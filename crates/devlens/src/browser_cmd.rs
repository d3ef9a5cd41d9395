//! `devlens browser …`: one-shot page checks from a shell or a script. Each command launches a
//! headless browser for itself (closed when it ends) or uses a running Chrome (`--connect`), loads
//! the page when `--url` is given, prints one compact answer and leaves. Interactive sessions —
//! clicking through a flow — act on a running server's browser instead (`session_cmd`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use devlens_browser::{
    BrowserSessions, ConnectOptions, ConsoleLevel, ConsoleQuery, ElementQuery, ElementTarget,
    EvaluateOptions, ImageFormat, LaunchOptions, Navigation, NetworkQuery, ScreenshotRequest,
    ScreenshotScope, SnapshotOptions, Tab, TabSelector, WaitCondition,
};

use crate::output;

#[derive(Debug, Args)]
pub(crate) struct BrowserArgs {
    #[command(flatten)]
    pub browser: BrowserChoice,
    #[command(subcommand)]
    pub command: BrowserCommand,
}

/// Which browser a command uses: a headless one launched for the command (closed after), or a
/// running Chrome.
#[derive(Debug, Args)]
pub(crate) struct BrowserChoice {
    /// Use a running Chrome instead of launching one: a port (9222), host:port, http://host:port
    /// or a ws:// DevTools URL (start Chrome with --remote-debugging-port=9222)
    #[arg(long, global = true, value_name = "ENDPOINT")]
    pub connect: Option<String>,
    /// With --connect: the tab to use, by index, title or URL part [default: the first tab]
    #[arg(long, global = true, value_name = "TAB", requires = "connect")]
    pub tab: Option<String>,
    /// The Chrome/Chromium executable to launch [default: CHROME_PATH, then PATH and the usual
    /// install locations]
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "connect")]
    pub chrome_path: Option<PathBuf>,
    /// Show the browser window instead of running headless
    #[arg(long, global = true, conflicts_with = "connect")]
    pub headful: bool,
    /// Viewport size of a launched browser, e.g. 1280x720
    #[arg(long, global = true, value_name = "WxH", conflicts_with = "connect")]
    pub window: Option<String>,
    /// The running devlens server session commands act on [default: DEVLENS_SERVER, then the
    /// config's [server] http, then 127.0.0.1:7878]
    #[arg(
        long,
        global = true,
        value_name = "HOST:PORT",
        conflicts_with = "connect"
    )]
    pub server: Option<String>,
    /// The bearer token for a server that requires one (`devlens token create` on the server)
    #[arg(
        long,
        global = true,
        env = "DEVLENS_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
}

/// The page a command looks at: loaded from --url, or the current page of a --connect tab.
#[derive(Debug, Args, Clone)]
pub(crate) struct PageArgs {
    /// Load this URL first (required unless --connect names a browser with the page open)
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Give up waiting for the page load after this many milliseconds
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub timeout_ms: u64,
}

#[derive(Debug, Subcommand)]
pub(crate) enum BrowserCommand {
    /// Load a URL: final URL, HTTP status, title, console errors and failed requests of the load
    /// (exit status 1 when the document failed or returned 4xx/5xx)
    Open {
        url: String,
        #[arg(long, value_name = "MS", default_value_t = 30_000)]
        timeout_ms: u64,
        #[arg(long)]
        json: bool,
    },
    /// The page's accessibility tree as compact text, paged by line
    Snapshot {
        #[command(flatten)]
        page: PageArgs,
        /// Only interactive elements, headings and landmarks
        #[arg(long)]
        interactive: bool,
        /// Skip this many lines
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// At most this many lines [default: 200]
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Elements matching a CSS selector, one compact line each
    Query {
        #[command(flatten)]
        page: PageArgs,
        /// CSS selector
        selector: String,
        /// Only elements whose text, value, label or placeholder contains this
        #[arg(long)]
        text: Option<String>,
        /// Only visible elements
        #[arg(long)]
        visible: bool,
        /// At most this many (default 5, at most 20)
        #[arg(long)]
        limit: Option<usize>,
        /// Skip this many matches
        #[arg(long, default_value_t = 0)]
        offset: usize,
        #[arg(long)]
        json: bool,
    },
    /// Save a screenshot of the viewport, the full page or one element
    Screenshot {
        #[command(flatten)]
        page: PageArgs,
        /// Where to write the image
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The whole page, not just the viewport
        #[arg(long, conflicts_with = "element")]
        full_page: bool,
        /// Only this element (CSS selector)
        #[arg(long, value_name = "SELECTOR")]
        element: Option<String>,
        /// png or jpeg [default: from the file extension, else png]
        #[arg(long)]
        format: Option<String>,
        /// JPEG quality 1-100
        #[arg(long)]
        quality: Option<u8>,
        #[arg(long)]
        json: bool,
    },
    /// The console of the page: messages, errors with their stack, uncaught exceptions
    Console {
        #[command(flatten)]
        page: PageArgs,
        /// Lowest level to show: error, warn, info, log or debug
        #[arg(long)]
        level: Option<String>,
        /// At most this many, the most recent [default: 50]
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// The requests of the page: method, status, type, URL, duration, size
    Network {
        #[command(flatten)]
        page: PageArgs,
        /// Only network errors and HTTP 4xx/5xx
        #[arg(long)]
        failed: bool,
        /// Only this resource type (document, script, fetch, xhr, image, stylesheet, ...)
        #[arg(long, value_name = "TYPE")]
        r#type: Option<String>,
        /// Only URLs containing this
        #[arg(long, value_name = "TEXT")]
        url_contains: Option<String>,
        /// At most this many [default: 50]
        #[arg(long)]
        limit: Option<usize>,
        /// Also list the scripts, stylesheets, images and fonts that loaded fine
        #[arg(long = "static")]
        include_static: bool,
        #[arg(long)]
        json: bool,
    },
    /// Run JavaScript in the page and print its value as JSON (exit status 1 if it threw)
    Eval {
        #[command(flatten)]
        page: PageArgs,
        /// The expression or statements (top-level await works)
        expression: String,
        #[arg(long)]
        json: bool,
    },
    /// List the tabs of the browser (useful with --connect)
    Tabs {
        #[arg(long)]
        json: bool,
    },
    /// Audit a page: accessibility, performance, an element's CSS, the app's state
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Start a browser in the running server for the session commands (headless unless
    /// --headful)
    Launch {
        #[arg(long)]
        json: bool,
    },
    /// Close the server's browser (or disconnect from a Chrome it attached to)
    Close {
        #[arg(long)]
        json: bool,
    },
    /// Load a URL in the active tab, or go back, forward or reload; what changed is reported
    Navigate {
        #[arg(required_unless_present_any = ["back", "forward", "reload"])]
        url: Option<String>,
        #[arg(long, conflicts_with_all = ["url", "forward", "reload"])]
        back: bool,
        #[arg(long, conflicts_with_all = ["url", "reload"])]
        forward: bool,
        #[arg(long, conflicts_with = "url")]
        reload: bool,
        #[arg(long)]
        json: bool,
    },
    /// Click an element: a ref from `snapshot` (e12) or a CSS selector
    Click {
        target: String,
        /// Double-click
        #[arg(long)]
        double: bool,
        /// Right-click
        #[arg(long)]
        right: bool,
        #[arg(long)]
        json: bool,
    },
    /// Replace an input's value (a ref or a CSS selector)
    Fill {
        target: String,
        value: String,
        #[arg(long)]
        json: bool,
    },
    /// Type text as key presses, into the focused element or --into one
    Type {
        text: String,
        #[arg(long, value_name = "REF|SELECTOR")]
        into: Option<String>,
        /// Press Enter afterwards
        #[arg(long)]
        submit: bool,
        #[arg(long)]
        json: bool,
    },
    /// Press a key or a combination (Enter, Escape, Control+A)
    Press {
        key: String,
        #[arg(long, value_name = "REF|SELECTOR")]
        on: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Move the mouse over an element
    Hover {
        target: String,
        #[arg(long)]
        json: bool,
    },
    /// Choose options of a <select> by value or label
    Select {
        target: String,
        #[arg(required = true)]
        values: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Scroll the page or an element: up, down, left, right, top or bottom; without a
    /// direction, scroll the element into view
    Scroll {
        #[arg(value_parser = ["up", "down", "left", "right", "top", "bottom"])]
        direction: Option<String>,
        #[arg(long, value_name = "REF|SELECTOR")]
        element: Option<String>,
        /// Pixels
        #[arg(long)]
        amount: Option<u32>,
        #[arg(long)]
        json: bool,
    },
    /// Wait for text to appear (or --gone), an element (--selector), a URL or network idle
    Wait {
        /// Text to wait for
        text: Option<String>,
        /// Wait for the text to disappear instead
        #[arg(long, requires = "text")]
        gone: bool,
        #[arg(long, value_name = "SELECTOR")]
        selector: Option<String>,
        #[arg(long, value_name = "TEXT")]
        url_contains: Option<String>,
        #[arg(long)]
        network_idle: bool,
        #[arg(long, value_name = "MS")]
        timeout_ms: Option<u64>,
        #[arg(long)]
        json: bool,
    },
    /// Accept or dismiss the open dialog (alert, confirm, prompt)
    Dialog {
        #[arg(value_parser = ["accept", "dismiss"])]
        action: String,
        /// The answer to a prompt()
        #[arg(long)]
        text: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

/// The page an audit loads: a URL, or the page open in a running Chrome (--connect).
#[derive(Debug, Args)]
pub(crate) struct AuditPage {
    /// The page to audit (required unless --connect names a browser with the page open)
    pub url: Option<String>,
    /// Give up waiting for the page load after this many milliseconds
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub timeout_ms: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum AuditCommand {
    /// Accessibility with axe-core: violations by impact with their elements (exit status 1
    /// when there are any)
    A11y {
        #[command(flatten)]
        page: AuditPage,
        /// Only this element and its descendants (CSS selector)
        #[arg(long, value_name = "SELECTOR")]
        scope: Option<String>,
        /// Only rules with these tags, comma-separated (wcag2a, wcag2aa, wcag21aa, best-practice, …)
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// Only these rule ids, comma-separated
        #[arg(long, value_delimiter = ',')]
        rules: Vec<String>,
        /// Skip these rule ids, comma-separated
        #[arg(long, value_delimiter = ',')]
        exclude: Vec<String>,
        /// Elements listed per rule [default: 3]
        #[arg(long)]
        max_nodes: Option<usize>,
    },
    /// Performance of the page's load: a trace reduced to findings (default), vitals, a CPU
    /// profile, or memory with a heap snapshot summary
    Perf {
        #[command(flatten)]
        page: AuditPage,
        /// trace, vitals, profile or memory
        #[arg(long, default_value = "trace")]
        measure: String,
        /// Also save the raw trace here (DevTools' Performance panel opens it)
        #[arg(long, value_name = "FILE")]
        save_trace: Option<PathBuf>,
        /// CPU slowdown while measuring (4 = a mid-range phone)
        #[arg(long)]
        cpu_slowdown: Option<f64>,
        /// Network throttling while measuring: slow-3g, fast-3g, fast-4g
        #[arg(long)]
        network: Option<String>,
    },
    /// Why an element looks as it does: computed values and, per property, which declaration
    /// won and why the others lost
    Css {
        #[command(flatten)]
        page: AuditPage,
        /// The element (CSS selector)
        #[arg(long, value_name = "SELECTOR")]
        element: String,
        /// Only these properties, comma-separated
        #[arg(long, value_delimiter = ',')]
        properties: Vec<String>,
    },
    /// The app's state: frameworks (default), the component tree, a component's props and
    /// state, stores, or the globals the app added
    State {
        #[command(flatten)]
        page: AuditPage,
        /// frameworks, tree, component, stores or globals
        #[arg(long, default_value = "frameworks")]
        view: String,
        /// For tree and component: the element whose component to show (CSS selector)
        #[arg(long, value_name = "SELECTOR")]
        element: Option<String>,
        /// Skip this many items (the next page)
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
}

/// How long console and network commands wait for the page's own requests to finish after the
/// load, so late `fetch`es and the errors they cause are in the answer.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// One-shot checks of a page in a browser of their own (session commands go to `session_cmd`).
pub(crate) async fn run(args: BrowserArgs) -> anyhow::Result<()> {
    check_arguments(&args)?;
    let sessions = BrowserSessions::new();
    let outcome = run_with(&sessions, &args).await;
    // A launched browser is closed, a connected one is left running, on success and on failure.
    sessions.shutdown().await;
    outcome
}

/// Mistakes in the arguments, reported before a browser starts.
fn check_arguments(args: &BrowserArgs) -> anyhow::Result<()> {
    // Page commands without --url or --connect, and the session verbs, went to the server.
    if let BrowserCommand::Audit(audit) = &args.command {
        if let AuditCommand::Perf {
            measure, network, ..
        } = audit
        {
            if !matches!(measure.as_str(), "trace" | "vitals" | "profile" | "memory") {
                bail!("unknown --measure `{measure}`: use trace, vitals, profile or memory");
            }
            if let Some(name) = network
                && devlens_browser::NetworkProfile::parse(name).is_none()
            {
                bail!("unknown --network `{name}`: use slow-3g, fast-3g or fast-4g");
            }
        }
        if let AuditCommand::State { view, .. } = audit
            && state_view(view).is_none()
        {
            bail!("unknown --view `{view}`: use frameworks, tree, component, stores or globals");
        }
        if audit.page().url.is_none() && args.browser.connect.is_none() {
            bail!(
                "give the URL to audit, or --connect ENDPOINT to audit a page open in a running \
                 Chrome"
            );
        }
    }
    if let BrowserCommand::Console {
        level: Some(level), ..
    } = &args.command
        && ConsoleLevel::parse(level).is_none()
    {
        bail!("unknown --level `{level}`: use error, warn, info, log or debug");
    }
    if let Some(window) = &args.browser.window {
        parse_window(window)?;
    }
    Ok(())
}

async fn run_with(sessions: &BrowserSessions, args: &BrowserArgs) -> anyhow::Result<()> {
    start_browser(sessions, &args.browser).await?;
    if let BrowserCommand::Tabs { json } = args.command {
        let tabs = sessions.tabs(None).await?;
        return output::print(json, &tabs, || tabs.to_text());
    }
    let tab = pick_tab(sessions, args.browser.tab.as_deref()).await?;
    match &args.command {
        BrowserCommand::Audit(audit) => run_audit(&tab, audit).await,
        BrowserCommand::Open {
            url,
            timeout_ms,
            json,
        } => {
            let outcome = tab
                .navigate(
                    &Navigation::Url(url.clone()),
                    Some(Duration::from_millis(*timeout_ms)),
                )
                .await?;
            output::print(*json, &outcome, || outcome.to_text())?;
            if let Some(status) = outcome.status
                && status >= 400
            {
                bail!("the page answered HTTP {status}");
            }
            Ok(())
        }
        BrowserCommand::Snapshot {
            page,
            interactive,
            offset,
            limit,
            json,
        } => {
            load(&tab, page).await?;
            let options = SnapshotOptions {
                interactive_only: *interactive,
                root: None,
                offset: *offset,
                limit: *limit,
            };
            let snapshot = tab.snapshot(&options).await?;
            output::print(*json, &snapshot, || snapshot.to_text())
        }
        BrowserCommand::Query {
            page,
            selector,
            text,
            visible,
            limit,
            offset,
            json,
        } => {
            load(&tab, page).await?;
            let query = ElementQuery {
                selector: selector.clone(),
                text: text.clone(),
                visible: visible.then_some(true),
                limit: *limit,
                offset: *offset,
            };
            let elements = tab.query_elements(&query).await?;
            output::print(*json, &elements, || elements.to_text())
        }
        BrowserCommand::Screenshot {
            page,
            out,
            full_page,
            element,
            format,
            quality,
            json,
        } => {
            let format = image_format(format.as_deref(), out)?;
            load(&tab, page).await?;
            let scope = match element {
                Some(selector) => ScreenshotScope::Element(ElementTarget::parse(selector)),
                None if *full_page => ScreenshotScope::FullPage,
                None => ScreenshotScope::Viewport,
            };
            let request = ScreenshotRequest {
                scope,
                format,
                quality: *quality,
                path: Some(out.clone()),
            };
            let shot = tab.screenshot(&request).await?;
            output::print(*json, &shot, || shot.to_text())
        }
        BrowserCommand::Console {
            page,
            level,
            limit,
            json,
        } => {
            load(&tab, page).await?;
            settle(&tab, page).await;
            let query = ConsoleQuery {
                level: level.as_deref().and_then(ConsoleLevel::parse),
                limit: *limit,
                ..Default::default()
            };
            let logs = tab.console_logs(&query);
            output::print(*json, &logs, || logs.to_text())
        }
        BrowserCommand::Network {
            page,
            failed,
            r#type,
            url_contains,
            limit,
            include_static,
            json,
        } => {
            load(&tab, page).await?;
            settle(&tab, page).await;
            let query = NetworkQuery {
                failed_only: *failed,
                resource_type: r#type.clone(),
                url_contains: url_contains.clone(),
                offset: 0,
                limit: *limit,
                include_previous_pages: false,
                include_static: *include_static,
            };
            let requests = tab.network_requests(&query);
            output::print(*json, &requests, || requests.to_text())
        }
        BrowserCommand::Eval {
            page,
            expression,
            json,
        } => {
            load(&tab, page).await?;
            let evaluation = tab
                .evaluate(expression, &EvaluateOptions::default())
                .await?;
            output::print(*json, &evaluation, || evaluation.to_text())?;
            if let Some(error) = &evaluation.error {
                bail!("the code threw: {}", error.message);
            }
            Ok(())
        }
        BrowserCommand::Tabs { .. } => unreachable!("answered above"),
        _ => bail!("a session command reached the one-shot runner; this is a bug in devlens"),
    }
}

async fn start_browser(sessions: &BrowserSessions, choice: &BrowserChoice) -> anyhow::Result<()> {
    match &choice.connect {
        Some(endpoint) => {
            sessions
                .connect(&ConnectOptions {
                    endpoint: endpoint.clone(),
                    connection_id: None,
                })
                .await?;
        }
        None => {
            let defaults = LaunchOptions::default();
            let (window_width, window_height) = match &choice.window {
                Some(window) => parse_window(window)?,
                None => (defaults.window_width, defaults.window_height),
            };
            sessions
                .launch(&LaunchOptions {
                    chrome_path: choice.chrome_path.clone(),
                    headless: !choice.headful,
                    window_width,
                    window_height,
                    ..defaults
                })
                .await?;
        }
    }
    Ok(())
}

/// The tab `--tab` names (an index, else a title or URL part), or the active one.
async fn pick_tab(sessions: &BrowserSessions, wanted: Option<&str>) -> anyhow::Result<Tab> {
    let Some(wanted) = wanted.map(str::trim).filter(|w| !w.is_empty()) else {
        return Ok(sessions.tab(None).await?);
    };
    let selectors = match wanted.parse::<usize>() {
        Ok(index) => vec![TabSelector::Index(index)],
        Err(_) => vec![
            TabSelector::Title(wanted.to_string()),
            TabSelector::Url(wanted.to_string()),
        ],
    };
    let mut last_error = None;
    for selector in &selectors {
        match sessions.tab_by(None, selector).await {
            Ok(tab) => return Ok(tab),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.map_or_else(|| anyhow::anyhow!("no tab `{wanted}`"), Into::into))
}

/// Loads `--url` when given; with `--connect` and no URL the tab's current page is used.
fn state_view(name: &str) -> Option<devlens_browser::audit::state::StateView> {
    serde_json::from_value(serde_json::json!(name)).ok()
}

impl AuditCommand {
    pub(crate) fn page(&self) -> &AuditPage {
        match self {
            Self::A11y { page, .. }
            | Self::Perf { page, .. }
            | Self::Css { page, .. }
            | Self::State { page, .. } => page,
        }
    }
}

/// `devlens browser audit …`.
async fn run_audit(tab: &Tab, audit: &AuditCommand) -> anyhow::Result<()> {
    let page = audit.page();
    let load_page = PageArgs {
        url: page.url.clone(),
        timeout_ms: page.timeout_ms,
    };
    match audit {
        AuditCommand::A11y {
            scope,
            tags,
            rules,
            exclude,
            max_nodes,
            ..
        } => {
            load(tab, &load_page).await?;
            let options = devlens_browser::audit::a11y::A11yOptions {
                scope: scope.clone(),
                tags: tags.clone(),
                rules: rules.clone(),
                exclude: exclude.clone(),
                max_nodes: *max_nodes,
            };
            let report = tab.audit_accessibility(&options).await?;
            output::print(page.json, &report, || report.to_text())?;
            if !report.violations.is_empty() {
                bail!("{} accessibility rule(s) violated", report.violations.len());
            }
            Ok(())
        }
        AuditCommand::Css {
            element,
            properties,
            ..
        } => {
            load(tab, &load_page).await?;
            let query = devlens_browser::audit::css::CssQuery {
                element: element.clone(),
                properties: properties.clone(),
                ..Default::default()
            };
            let report = tab.css(&query).await?;
            output::print(page.json, &report, || report.to_text())
        }
        AuditCommand::State {
            view,
            element,
            offset,
            ..
        } => {
            load(tab, &load_page).await?;
            let query = devlens_browser::audit::state::StateQuery {
                view: state_view(view).unwrap_or_default(),
                element: element.clone(),
                offset: *offset,
                ..Default::default()
            };
            let state = tab.app_state(&query).await?;
            output::print(page.json, &state, || state.to_text())
        }
        AuditCommand::Perf {
            measure,
            save_trace,
            cpu_slowdown,
            network,
            ..
        } => {
            use devlens_browser::audit::perf::{Phase, Recorded};
            let network = match network.as_deref() {
                None => None,
                Some(name) => Some(devlens_browser::NetworkProfile::parse(name).with_context(
                    || format!("unknown --network `{name}`: use slow-3g, fast-3g or fast-4g"),
                )?),
            };
            load(tab, &load_page).await?;
            if cpu_slowdown.is_some() || network.is_some() {
                tab.emulate(&devlens_browser::EmulationRequest {
                    cpu_slowdown: *cpu_slowdown,
                    network,
                    ..Default::default()
                })
                .await?;
            }
            match measure.as_str() {
                "vitals" => {
                    let v = tab.vitals(true).await?;
                    output::print(page.json, &v, || v.to_text())
                }
                "memory" => {
                    let options = devlens_browser::audit::memory::MemoryOptions {
                        heap_snapshot: true,
                        ..Default::default()
                    };
                    let m = tab.memory(&options).await?;
                    output::print(page.json, &m, || m.to_text())
                }
                "profile" => match tab.cpu_profile(Phase::Reload, None).await? {
                    Recorded::Done(p) => output::print(page.json, &p, || p.to_text()),
                    Recorded::Started(_) => Ok(()),
                },
                _ => match tab.trace(Phase::Reload, save_trace.as_deref()).await? {
                    Recorded::Done(t) => output::print(page.json, &t, || t.to_text()),
                    Recorded::Started(_) => Ok(()),
                },
            }
        }
    }
}

async fn load(tab: &Tab, page: &PageArgs) -> anyhow::Result<()> {
    let Some(url) = &page.url else {
        return Ok(());
    };
    let outcome = tab
        .navigate(
            &Navigation::Url(url.clone()),
            Some(Duration::from_millis(page.timeout_ms)),
        )
        .await?;
    if !outcome.loaded {
        tracing::warn!(
            "{} did not finish loading; answering with what is there",
            outcome.url
        );
    }
    Ok(())
}

/// Lets requests the page starts after `load` finish (bounded), so their outcome is reported.
async fn settle(tab: &Tab, page: &PageArgs) {
    if page.url.is_none() {
        return;
    }
    // Not reaching idle is fine: the answer then shows the requests still pending.
    let _ = tab
        .wait_for(&WaitCondition::NetworkIdle, Some(SETTLE_TIMEOUT))
        .await;
}

fn image_format(format: Option<&str>, out: &Path) -> anyhow::Result<ImageFormat> {
    let from_extension = || {
        out.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
    };
    let name = format.map(str::to_ascii_lowercase).or_else(from_extension);
    match name.as_deref() {
        None | Some("png") => Ok(ImageFormat::Png),
        Some("jpeg" | "jpg") => Ok(ImageFormat::Jpeg),
        Some(other) if format.is_some() => bail!("unknown --format `{other}`: use png or jpeg"),
        // An unfamiliar extension with no --format: PNG, as the default says.
        Some(_) => Ok(ImageFormat::Png),
    }
}

/// `1280x720` → (1280, 720).
fn parse_window(text: &str) -> anyhow::Result<(u32, u32)> {
    let parse = || -> Option<(u32, u32)> {
        let (w, h) = text.trim().split_once(['x', 'X'])?;
        let (w, h) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
        ((100..=10_000).contains(&w) && (100..=10_000).contains(&h)).then_some((w, h))
    };
    parse().with_context(|| {
        format!("--window `{text}`: give WIDTHxHEIGHT, e.g. 1280x720 (100 to 10000 each)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sizes_parse_and_bad_ones_say_the_form() {
        assert_eq!(parse_window("1280x720").unwrap(), (1280, 720));
        assert_eq!(parse_window(" 800X600 ").unwrap(), (800, 600));
        for bad in ["1280", "x720", "0x0", "99999x10", "wide x tall"] {
            let message = parse_window(bad).unwrap_err().to_string();
            assert!(message.contains("WIDTHxHEIGHT"), "{bad}: {message}");
        }
    }

    #[test]
    fn image_format_comes_from_the_flag_then_the_extension() {
        let png = Path::new("shot.png");
        let jpg = Path::new("shot.JPG");
        assert_eq!(image_format(None, png).unwrap(), ImageFormat::Png);
        assert_eq!(image_format(None, jpg).unwrap(), ImageFormat::Jpeg);
        assert_eq!(image_format(Some("jpeg"), png).unwrap(), ImageFormat::Jpeg);
        assert_eq!(
            image_format(None, Path::new("shot.webp")).unwrap(),
            ImageFormat::Png
        );
        assert!(image_format(Some("gif"), png).is_err());
    }
}
