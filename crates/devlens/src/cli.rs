//! The command-line grammar.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "devlens",
    version,
    about = "Browser, API, docs and knowledge tools for AI coding agents — over MCP, CLI and HTTP",
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Where devlens stores its data [default: the platform data dir, e.g. ~/.local/share/devlens]
    #[arg(long, global = true, env = "DEVLENS_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Configuration file [default: ./devlens.toml, then <data dir>/devlens.toml]
    #[arg(long, global = true, env = "DEVLENS_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// More log output (to stderr)
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

impl GlobalArgs {
    pub(crate) fn overrides(&self) -> devlens_core::ConfigOverrides {
        devlens_core::ConfigOverrides {
            data_dir: self.data_dir.clone(),
            config_file: self.config.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the MCP server: stdio by default, or Streamable HTTP + REST API with --http
    Serve(ServeArgs),
    /// Explore OpenAPI/Swagger specs: tags, endpoints, details, search
    #[command(subcommand)]
    Api(ApiCommand),
    /// Manage projects (named specs) and the active project
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Install or locate the local embedding model (all-MiniLM-L6-v2)
    #[command(subcommand)]
    Model(ModelCommand),
    /// The browser: session commands on a running `devlens serve --http` (launch, navigate,
    /// click, fill, snapshot, …), or one-shot checks of a page in a headless Chrome (--url)
    Browser(BrowserArgs),
    /// The JavaScript debugger of a running server's browser: breakpoints, stepping, the stack
    Debug(DebugArgs),
    /// Library docs: ingest, list, resolve, query within a token budget, eval
    Docs(crate::docs_cmd::DocsArgs),
    /// Knowledge base: saved solutions, semantic search, cited answers
    Kb(crate::kb_cmd::KbArgs),
    /// The project's files as the workspace tools see them: read, list, search
    Workspace(crate::workspace_cmd::WorkspaceCmd),
    /// The devlens Chrome extension: the folder to load unpacked, the pairing token
    #[command(subcommand)]
    Extension(ExtensionCommand),
    /// The team server's database (PostgreSQL + pgvector): check it, and the scale run that
    /// compares it with the embedded store
    Store(crate::store_cmd::StoreArgs),
    /// Bearer tokens for a server others reach (required beyond loopback): create, list, revoke
    #[command(subcommand)]
    Token(TokenCommand),
    /// Trust this folder's devlens.toml after reviewing it: until then it may not set
    /// executables, libraries, credentials or network settings
    Trust(TrustArgs),
}

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The file to trust [default: ./devlens.toml]
    pub file: Option<PathBuf>,
    /// Forget the file's trust
    #[arg(long, conflicts_with = "list")]
    pub untrust: bool,
    /// List the trusted files
    #[arg(long)]
    pub list: bool,
    #[arg(long)]
    pub json: bool,
}

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

#[derive(Debug, Args)]
pub(crate) struct DebugArgs {
    /// The running devlens server [default: DEVLENS_SERVER, then the config's [server] http,
    /// then 127.0.0.1:7878]
    #[arg(long, global = true, value_name = "HOST:PORT")]
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
    /// Print the structured answer as JSON
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: DebugCommand,
}

/// Debugger commands: they act on the active tab of the server's browser.
#[derive(Debug, Subcommand)]
pub(crate) enum DebugCommand {
    /// Turn the debugger on for the active tab (the other commands do it on first use)
    Enable,
    /// Set a breakpoint at FILE:LINE (the original source through source maps, e.g.
    /// src/cart.ts:42 or app.js:12); the next pause answers with where it stopped
    Break {
        #[arg(value_name = "FILE:LINE[:COLUMN]")]
        location: String,
        /// Only pause when this JavaScript expression is true
        #[arg(long)]
        condition: Option<String>,
    },
    /// List the breakpoints
    Breakpoints,
    /// Remove a breakpoint by the id `break` or `breakpoints` printed
    Remove { id: String },
    /// Resume a paused page
    Resume,
    /// Pause the page at the next JavaScript statement
    Pause,
    /// Step over (default), into or out of the current call
    Step {
        #[arg(default_value = "over", value_parser = ["over", "into", "out"])]
        direction: String,
    },
    /// The paused page's call stack with each frame's scopes
    Stack,
    /// Evaluate an expression in a paused frame (the top one by default)
    Eval {
        expression: String,
        /// The frame, by its number in `stack`
        #[arg(long)]
        frame: Option<usize>,
    },
    /// Pause on thrown exceptions: none, uncaught or all
    Exceptions {
        #[arg(value_parser = ["none", "uncaught", "all"])]
        state: String,
    },
    /// Wait until the page pauses (a breakpoint hit by a timer or a request), then show where
    Wait {
        #[arg(long, value_name = "MS")]
        timeout_ms: Option<u64>,
    },
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

#[derive(Debug, Subcommand)]
pub(crate) enum ModelCommand {
    /// Install the model into the data dir: from the Hugging Face hub, or from a local folder
    Install {
        /// A folder holding config.json, tokenizer.json and model.safetensors (no download)
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Show where the model is looked for and whether it loads
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ExtensionCommand {
    /// Write the extension's files into the data dir (refreshing them when this devlens carries
    /// newer ones) and print the folder: load it in chrome://extensions with Developer mode,
    /// "Load unpacked"
    Path {
        #[arg(long)]
        json: bool,
    },
    /// Print the pairing token the extension's options ask for, and the paired extensions
    Token {
        /// Replace the token (paired extensions stay paired)
        #[arg(long)]
        new: bool,
        #[arg(long)]
        json: bool,
    },
    /// Unpair an extension: its origin, chrome-extension://<id>
    Revoke {
        origin: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a token and print it — the only time it is shown (the data dir keeps its hash)
    Create {
        /// What it may do: `read` (search, query, ask, list, read files and the browser's
        /// records) or `write` (also everything that changes state)
        #[arg(long, value_parser = parse_scope)]
        scope: devlens_app::tokens::Scope,
        /// A name to tell it apart in `devlens token list` (who or what holds it)
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The tokens: id, name, scope, when made and their last four characters (never a token)
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token by its id: calls carrying it are refused from now on, by running servers
    /// too
    Revoke {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

fn parse_scope(text: &str) -> Result<devlens_app::tokens::Scope, String> {
    text.parse()
        .map_err(|e: devlens_app::AppError| e.to_string())
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Serve HTTP on this address instead of stdio: MCP at /mcp, REST under /api/
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:7878")]
    pub http: Option<String>,
    /// The tool families to offer, comma-separated: api, browser, debugger, docs, kb,
    /// workspace [default: all]
    #[arg(long, env = "DEVLENS_TOOLS", value_name = "FAMILIES", value_parser = parse_families)]
    pub tools: Option<devlens_mcp::ToolFamilies>,
    /// List only the tools the browser's state allows (not connected, connected, debugging,
    /// paused) and send tools/list_changed when that changes. Off by default: clients that did
    /// not ask for a moving tool list keep a fixed one
    #[arg(long, env = "DEVLENS_DYNAMIC_TOOLS", value_parser = clap::builder::FalseyValueParser::new())]
    pub dynamic_tools: bool,
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
}

/// The project folder tools read and write.
#[derive(Debug, Args, Clone)]
pub(crate) struct WorkspaceArgs {
    /// The project folder: every file a tool reads or writes (and every screenshot or saved
    /// body) stays inside it or the data dir [default: the client's MCP root, else the current
    /// directory]
    #[arg(long, global = true, env = "DEVLENS_WORKSPACE", value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Tools may read the workspace but not change it
    #[arg(long, global = true, env = "DEVLENS_READ_ONLY_WORKSPACE", value_parser = clap::builder::FalseyValueParser::new())]
    pub read_only_workspace: bool,
}

fn parse_families(list: &str) -> Result<devlens_mcp::ToolFamilies, String> {
    devlens_mcp::ToolFamilies::parse(list)
}

/// Which spec a command is about: the flags of [`devlens_app::api::SpecArgs`].
#[derive(Debug, Args, Clone)]
pub(crate) struct SpecArgs {
    /// A spec file or http(s) URL (JSON or YAML; OpenAPI 3.x or Swagger 2.0)
    #[arg(long, value_name = "PATH_OR_URL", conflicts_with = "project")]
    pub spec: Option<String>,
    /// A configured project [default: the active project]
    #[arg(long, value_name = "NAME", env = "DEVLENS_PROJECT")]
    pub project: Option<String>,
}

impl SpecArgs {
    /// The application's spec arguments, as the tools and the REST API take them.
    pub(crate) fn to_app(&self) -> devlens_app::api::SpecArgs {
        devlens_app::api::SpecArgs {
            project_name: self.project.clone(),
            spec: self.spec.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum ApiCommand {
    /// List tags with their endpoint counts
    Tags {
        #[command(flatten)]
        target: SpecArgs,
        #[arg(long)]
        json: bool,
    },
    /// List the endpoints of a tag
    Endpoints {
        #[command(flatten)]
        target: SpecArgs,
        #[arg(long)]
        tag: String,
        /// Skip this many endpoints
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Show at most this many endpoints (at most 200 a page; --offset pages on) [default: 200]
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Show one endpoint: parameters, request body, responses
    Show {
        #[command(flatten)]
        target: SpecArgs,
        #[arg(long, conflicts_with_all = ["method", "path"], required_unless_present = "method")]
        operation_id: Option<String>,
        #[arg(long, requires = "path")]
        method: Option<String>,
        #[arg(long, requires = "method")]
        path: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Find endpoints for a question, or list a tag's endpoints
    Search {
        #[command(flatten)]
        target: SpecArgs,
        /// A natural-language question
        #[arg(long, conflicts_with = "tag", required_unless_present = "tag")]
        query: Option<String>,
        /// List this tag's endpoints instead
        #[arg(long)]
        tag: Option<String>,
        /// Keep only GET, POST, PUT, PATCH or DELETE
        #[arg(long)]
        method: Option<String>,
        /// Number of results (1-50)
        #[arg(long, default_value_t = 10)]
        limit: i64,
        /// hybrid (default), semantic or keyword
        #[arg(long)]
        mode: Option<String>,
        /// Include each hit's full endpoint details
        #[arg(long)]
        details: bool,
        #[arg(long)]
        json: bool,
    },
    /// Build (or rebuild) the semantic search index of a spec; unchanged endpoints reuse their
    /// vectors
    Index {
        #[command(flatten)]
        target: SpecArgs,
        /// Embedding provider for this build: local, openai, gemini, ollama or auto
        /// [default: EMBEDDING_PROVIDER, then `[embedding] provider`, then local]
        #[arg(long)]
        provider: Option<String>,
        /// Embed every endpoint again instead of reusing the vectors of unchanged ones
        #[arg(long)]
        force: bool,
        /// Re-index every project, one after the other (a failure is reported, the rest go on)
        #[arg(long, conflicts_with_all = ["spec", "project"])]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show whether a spec has a semantic index, what built it, and whether it is stale
    Status {
        #[command(flatten)]
        target: SpecArgs,
        #[arg(long)]
        json: bool,
    },
    /// Score search quality on a golden set of questions (top-1/3/5, MRR, latency)
    Eval {
        #[command(flatten)]
        target: SpecArgs,
        /// Golden file: one question per line, a TAB, then comma-separated operationIds
        #[arg(long, value_name = "FILE")]
        golden: PathBuf,
        /// hybrid (default), semantic or keyword
        #[arg(long)]
        mode: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Check API traffic against the spec: a HAR file, or (without --har) the live traffic of
    /// the running server's browser tab. Exits 1 when something differs from the spec
    CheckTraffic {
        #[command(flatten)]
        target: SpecArgs,
        /// A HAR file (DevTools → Network → Export HAR, Playwright, Firefox)
        #[arg(long, value_name = "FILE")]
        har: Option<PathBuf>,
        /// Where the API runs, e.g. http://127.0.0.1:8080/api [default: the project's
        /// base_url, else the spec's servers]
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Also the requests of pages the tab showed before (live traffic only)
        #[arg(long)]
        include_previous_pages: bool,
        /// The running server whose browser to read (live traffic only) [default:
        /// DEVLENS_SERVER, `[server] http`, 127.0.0.1:7878]
        #[arg(long, value_name = "HOST:PORT")]
        server: Option<String>,
        /// The bearer token for a server that requires one
        #[arg(
            long,
            env = "DEVLENS_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        token: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Call an endpoint: arguments checked against the spec first, the answer checked after.
    /// GET/HEAD/OPTIONS are sent; other methods print the request as curl unless --execute
    Call {
        #[command(flatten)]
        target: SpecArgs,
        /// The operationId (or give --method and --path)
        #[arg(conflicts_with_all = ["method", "path"], required_unless_present = "method")]
        operation_id: Option<String>,
        #[arg(long, requires = "path")]
        method: Option<String>,
        #[arg(long, requires = "method")]
        path: Option<String>,
        /// A parameter (path, query or header), repeatable: --param productId=7 --param
        /// tags='["a","b"]'
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// The request body: JSON, or @FILE
        #[arg(long, value_name = "JSON|@FILE")]
        body: Option<String>,
        /// An extra header, repeatable: --header 'X-Trace: 1'
        #[arg(long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// Overrides the project's base URL
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Send it, whatever the method
        #[arg(long, conflicts_with = "dry_run")]
        execute: bool,
        /// Only show it (curl), whatever the method
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// A TypeScript fetch function (types from the spec's schemas) and a curl line for an
    /// endpoint
    Sample {
        #[command(flatten)]
        target: SpecArgs,
        /// The operationId (or give --method and --path)
        #[arg(conflicts_with_all = ["method", "path"], required_unless_present = "method")]
        operation_id: Option<String>,
        #[arg(long, requires = "path")]
        method: Option<String>,
        #[arg(long, requires = "method")]
        path: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark loading, indexing and search of a spec
    Bench {
        /// The spec file to measure
        #[arg(long, value_name = "PATH")]
        spec: PathBuf,
        /// How many times to load and index (the median is reported)
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// How many search queries to time
        #[arg(long, default_value_t = 500)]
        queries: usize,
        /// Also measure the local embedding model: load, index build, hybrid queries
        #[arg(long)]
        semantic: bool,
        /// Write the endpoint strings the semantic index embeds to FILE (a JSON array)
        #[arg(long, value_name = "FILE")]
        texts_out: Option<PathBuf>,
        /// Write the questions the semantic queries embed to FILE (a JSON array)
        #[arg(long, value_name = "FILE")]
        queries_out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ProjectCommand {
    /// List projects and which one is active
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add (or update) a project in the data directory's projects.json
    Add {
        name: String,
        /// The project's spec: a file path or an http(s) URL
        spec: String,
    },
    /// Make a project the active one
    Use { name: String },
    /// Remove a project from the data directory's projects.json
    Remove { name: String },
}
