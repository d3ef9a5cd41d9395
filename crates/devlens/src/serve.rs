//! `devlens serve`: MCP over stdio, or over Streamable HTTP with the REST API.

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use clap::Args;
use tokio_util::sync::CancellationToken;

use devlens_app::{App, AppError, ErrorKind, WorkspaceChoice, tokens::TokenStore};
use devlens_core::Config;
use devlens_http::{Limits, OriginPolicy, ServerOptions};
use devlens_mcp::{DevlensServer, McpOptions};

use crate::workspace_cmd::WorkspaceArgs;

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

fn parse_families(list: &str) -> Result<devlens_mcp::ToolFamilies, String> {
    devlens_mcp::ToolFamilies::parse(list)
}

pub(crate) async fn run(
    config: Config,
    args: ServeArgs,
    log_feed: devlens_mcp::LogFeed,
) -> anyhow::Result<()> {
    config.data_dir.ensure()?;
    let http = args.http.or_else(|| config.file.server.http.clone());
    let policy = OriginPolicy::new(
        &config.file.server.allowed_hosts,
        &config.file.server.allowed_origins,
    );
    let server_options = ServerOptions {
        policy,
        require_tokens: config.file.server.require_token,
        limits: Limits::from_settings(&config.file.server),
    };
    let data_dir = config.data_dir.root().display().to_string();
    let choice = WorkspaceChoice::resolve(
        &config,
        args.workspace.workspace.as_deref(),
        args.workspace.read_only_workspace,
    );
    let app = Arc::new(
        App::new(config)
            .with_workspace_choice(&choice)
            .with_background_work(),
    );
    // A bad --workspace is an error now, not at the first file call. The folder devlens was
    // started in (an MCP client may start it in `/` or a home folder) that cannot be one leaves
    // the file tools without a workspace, said now and by each of them.
    if let Some(why) = app.workspace()?.missing_project() {
        tracing::warn!("no workspace for the file tools: {why}");
    }
    // A team server's database is checked (and its schema brought up to date) before serving,
    // so a wrong URL or a server that is down is said now, not at the first request.
    app.check_store()?;
    if let Some(db) = app.database() {
        tracing::info!(
            database = db.location(),
            "storing in the team server database"
        );
    }
    let options = Arc::new(McpOptions {
        families: args.tools.unwrap_or_default(),
        dynamic_tools: args.dynamic_tools,
        workspace_from_roots: !choice.explicit,
        log_feed: Some(log_feed),
    });
    let result = serve(Arc::clone(&app), options, http, server_options, data_dir).await;
    // Browsers devlens launched close with it, however serving ended.
    app.shutdown().await;
    result
}

async fn serve(
    app: Arc<App>,
    options: Arc<McpOptions>,
    http: Option<String>,
    mut server_options: ServerOptions,
    data_dir: String,
) -> anyhow::Result<()> {
    match http {
        None => {
            tracing::info!(data_dir, "devlens MCP server on stdio");
            DevlensServer::new(app, options).serve_stdio().await?;
            Ok(())
        }
        Some(addr) => {
            let addr: SocketAddr = addr.parse().with_context(|| {
                format!("--http expects an address like 127.0.0.1:7878, got '{addr}'")
            })?;
            let beyond_loopback = !addr.ip().is_loopback();
            // Beyond loopback anyone on the network could call: tokens are not optional there.
            server_options.require_tokens |= beyond_loopback;
            // Whether tokens are required is said with the panel's address once listening.
            if server_options.require_tokens {
                require_a_token(&app, addr, beyond_loopback)?;
            }
            tracing::info!(data_dir, "starting");
            let shutdown = CancellationToken::new();
            tokio::spawn(cancel_on_signal(shutdown.clone()));
            let mcp = axum::Router::new().nest_service(
                "/mcp",
                devlens_mcp::streamable_http(
                    Arc::clone(&app),
                    options,
                    server_options.policy.allowed_hosts(),
                    shutdown.clone(),
                ),
            );
            devlens_http::serve(addr, app, mcp, server_options, shutdown).await?;
            Ok(())
        }
    }
}

/// A server that requires tokens and has none could answer nobody: refuse to start, saying how
/// to make one.
fn require_a_token(app: &App, addr: SocketAddr, beyond_loopback: bool) -> anyhow::Result<()> {
    let tokens = TokenStore::new(&app.config().data_dir);
    if !tokens.is_empty()? {
        return Ok(());
    }
    let why = if beyond_loopback {
        format!("{addr} is beyond loopback, where every API and MCP call needs a token")
    } else {
        "[server] require_token is on".to_string()
    };
    Err(AppError::new(
        ErrorKind::Precondition,
        format!(
            "not serving: {why}, and there is no token yet ({}). Run `devlens token create \
             --scope write` first (it prints the token once; `--scope read` makes one that can \
             only search and read), then start the server again.",
            tokens.path().display()
        ),
    )
    .into())
}
async fn cancel_on_signal(shutdown: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    shutdown.cancel();
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutting down");
    shutdown.cancel();
}
