//! `devlens`: the command line. Every capability has a command here; `devlens serve` runs the MCP
//! server (stdio, or Streamable HTTP with the REST API).

mod api_cmd;
mod browser_cmd;
mod cli;
mod docs_cmd;
mod extension_cmd;
mod kb_cmd;
mod model_cmd;
mod output;
mod project_cmd;
mod remote;
mod serve;
mod session_cmd;
mod store_cmd;
mod token_cmd;
mod trust_cmd;
mod workspace_cmd;

use std::process::ExitCode;

use clap::Parser;

use devlens_app::{Classify, ErrorKind};

use cli::{Cli, Command};

fn main() -> ExitCode {
    // Before any HTTP client exists (devlens_core::tls).
    devlens_core::tls::install();
    let cli = Cli::parse();
    let log_feed = init_logging(&cli);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli, log_feed)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(error_kind(&e).map_or(1, ErrorKind::exit_code))
        }
    }
}

/// The kind of the first error in `e`'s chain that knows its kind: it decides the exit status
/// (2 for input to fix, 3 for something that does not exist, 4 for a missing or failing
/// service, 1 otherwise).
fn error_kind(e: &anyhow::Error) -> Option<ErrorKind> {
    e.chain().find_map(|cause| {
        macro_rules! kind_of {
            ($($t:ty),*) => {
                None$(.or_else(|| cause.downcast_ref::<$t>().map(Classify::kind)))*
            };
        }
        kind_of!(
            devlens_app::AppError,
            devlens_core::CoreError,
            devlens_openapi::explorer::ExplorerError,
            devlens_openapi::OpenApiError,
            devlens_docs::DocsError,
            devlens_kb::KbError,
            devlens_workspace::WorkspaceError,
            devlens_browser::BrowserError
        )
    })
}

async fn run(cli: Cli, log_feed: devlens_mcp::LogFeed) -> anyhow::Result<()> {
    if let Command::Trust(args) = cli.command {
        return trust_cmd::run(&cli.global.overrides(), args);
    }
    let config = devlens_core::Config::load(&cli.global.overrides())?;
    // Made owner-only before anything is stored in it (tokens, pairing secrets, the data).
    config.data_dir.ensure()?;
    match cli.command {
        Command::Serve(args) => serve::run(config, args, log_feed).await,
        Command::Api(command) => api_cmd::run(config, command).await,
        Command::Project(command) => project_cmd::run(config, command),
        Command::Model(command) => model_cmd::run(config, command).await,
        Command::Browser(args) if session_cmd::is_session(&args) => {
            session_cmd::run_browser(config, args).await
        }
        Command::Browser(args) => browser_cmd::run(args).await,
        Command::Debug(args) => session_cmd::run_debug(config, args).await,
        Command::Docs(args) => docs_cmd::run(config, args).await,
        Command::Kb(args) => kb_cmd::run(config, args).await,
        Command::Workspace(args) => workspace_cmd::run(config, args).await,
        Command::Extension(command) => extension_cmd::run(&config, command),
        Command::Token(command) => token_cmd::run(&config, command),
        Command::Store(args) => store_cmd::run(config, args).await,
        Command::Trust(_) => unreachable!("handled before the config is loaded"),
    }
}

/// Logs go to stderr: stdout belongs to MCP stdio and to `--json` output. MCP sessions that
/// ask (`logging/setLevel`) also get devlens' events through the returned feed.
fn init_logging(cli: &Cli) -> devlens_mcp::LogFeed {
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::{EnvFilter, Layer as _, fmt, layer::SubscriberExt as _};
    let default = if cli.global.verbose { "debug" } else { "info" };
    let filter = EnvFilter::try_from_env("DEVLENS_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        // chromiumoxide logs protocol chatter (unknown events, the socket closing at exit) that
        // devlens already turns into its own messages where it matters.
        .unwrap_or_else(|_| EnvFilter::new(format!("devlens={default},warn,chromiumoxide=off")));
    let json = std::env::var("DEVLENS_LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let stderr = fmt::layer().with_writer(std::io::stderr).with_ansi(ansi);
    let stderr = if json {
        stderr.json().boxed()
    } else {
        stderr.with_target(false).compact().boxed()
    };
    let feed = devlens_mcp::LogFeed::default();
    tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(feed.layer())
        .init();
    feed
}
