//! The devlens HTTP server: the REST API under `/api/`, `/metrics`, the dev panel at `/`, and
//! whatever MCP transport the caller mounts (MCP Streamable HTTP at `/mcp`), on one port.
//!
//! It binds loopback by default and checks `Host` and `Origin` on every request: a page on some
//! other site must not be able to reach a local devlens through DNS rebinding or a cross-origin
//! fetch. Handlers are thin: they parse the request, call the application layer
//! ([`devlens_app::App`]) exactly as the MCP tools and the CLI do, and answer its results as JSON
//! or its failures with the status their kind maps to ([`failure`]).
//!
//! This crate knows nothing of MCP: the binary builds the MCP service and hands it in as a
//! router, so the REST API and the MCP server depend on the application layer, not on each
//! other.

mod api;
mod browser;
mod docs;
mod events;
mod extension;
pub mod failure;
mod guard;
mod kb;
mod panel;
mod status;
mod workspace;

use std::{net::SocketAddr, sync::Arc};

use axum::{Router, middleware};
use tokio_util::sync::CancellationToken;

use devlens_app::App;

pub use failure::Failure;
pub use guard::OriginPolicy;

/// Builds the whole application: `/api/…`, `/metrics` and `extra` (e.g. `/mcp`), guarded by the
/// origin policy.
pub fn router(app: Arc<App>, extra: Router, policy: OriginPolicy) -> Router {
    let policy = Arc::new(policy.with_pairing(Arc::clone(&app)));
    Router::new()
        .merge(extra)
        .merge(docs::metrics_route(Arc::clone(&app)))
        .merge(status::routes(Arc::clone(&app)))
        .merge(extension::routes(Arc::clone(&app)))
        .merge(panel::routes(Arc::clone(&app)))
        .nest("/api", api::routes(app))
        .layer(middleware::from_fn_with_state(
            policy,
            guard::check_host_and_origin,
        ))
}

/// Serves until `shutdown` is cancelled. Logs the address it listens on to stderr.
pub async fn serve(
    addr: SocketAddr,
    app: Arc<App>,
    extra: Router,
    policy: OriginPolicy,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("cannot listen on {addr}: {e}. Is another server using the port? Pick another with --http 127.0.0.1:PORT"),
        )
    })?;
    let local = listener.local_addr()?;
    tracing::info!("devlens HTTP API on http://{local}/api/  MCP on http://{local}/mcp");
    let router = router(app, extra, policy);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
}
