//! `devlens serve`: MCP over stdio, or over Streamable HTTP with the REST API.

use std::{net::SocketAddr, path::PathBuf, sync::Arc};

use anyhow::Context;
use tokio_util::sync::CancellationToken;

use devlens_app::App;
use devlens_core::Config;
use devlens_http::OriginPolicy;
use devlens_mcp::{DevlensServer, McpOptions};

use crate::cli::ServeArgs;

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
    let data_dir = config.data_dir.root().display().to_string();
    let root = args
        .workspace
        .workspace
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let app = Arc::new(App::new(config).with_workspace(&root, args.workspace.read_only_workspace));
    // A bad --workspace is an error now, not at the first file call.
    if args.workspace.workspace.is_some() {
        app.workspace()?;
    }
    let options = Arc::new(McpOptions {
        families: args.tools.unwrap_or_default(),
        dynamic_tools: args.dynamic_tools,
        workspace_from_roots: args.workspace.workspace.is_none(),
        log_feed: Some(log_feed),
    });
    let result = serve(Arc::clone(&app), options, http, policy, data_dir).await;
    // Browsers devlens launched close with it, however serving ended.
    app.shutdown().await;
    result
}

async fn serve(
    app: Arc<App>,
    options: Arc<McpOptions>,
    http: Option<String>,
    policy: OriginPolicy,
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
            if !addr.ip().is_loopback() {
                tracing::warn!(
                    %addr,
                    "listening beyond loopback: anyone who can reach this address can use devlens"
                );
            }
            tracing::info!(data_dir, "starting");
            let shutdown = CancellationToken::new();
            tokio::spawn(cancel_on_signal(shutdown.clone()));
            let mcp = axum::Router::new().nest_service(
                "/mcp",
                devlens_mcp::streamable_http(
                    Arc::clone(&app),
                    options,
                    policy.allowed_hosts(),
                    shutdown.clone(),
                ),
            );
            devlens_http::serve(addr, app, mcp, policy, shutdown).await?;
            Ok(())
        }
    }
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
