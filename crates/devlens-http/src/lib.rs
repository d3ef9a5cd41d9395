//! The devlens HTTP server: MCP Streamable HTTP at `/mcp` and the REST API under `/api/`, on
//! one port.
//!
//! It binds loopback by default and checks `Host` and `Origin` on every request: a page on some
//! other site must not be able to reach a local devlens through DNS rebinding or a cross-origin
//! fetch. Handlers are thin: they parse the request, call the same domain functions the MCP tools
//! and the CLI call, and map failures to status codes.

mod api;
mod docs;
mod guard;
mod kb;

use std::{net::SocketAddr, sync::Arc};

use axum::{Router, middleware};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio_util::sync::CancellationToken;

use devlens_mcp::{DevlensServer, Services};

pub use guard::OriginPolicy;

/// Builds the whole application: `/mcp`, `/api/…`, guarded by the origin policy.
pub fn app(services: Arc<Services>, policy: OriginPolicy, shutdown: CancellationToken) -> Router {
    let mcp_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(policy.allowed_hosts())
        .with_cancellation_token(shutdown);
    let mcp_services = Arc::clone(&services);
    let mcp: StreamableHttpService<DevlensServer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(DevlensServer::new(Arc::clone(&mcp_services))),
        Default::default(),
        mcp_config,
    );
    let policy = Arc::new(policy);
    Router::new()
        .nest_service("/mcp", mcp)
        .merge(docs::metrics_route(Arc::clone(&services)))
        .nest("/api", api::routes(services))
        .layer(middleware::from_fn_with_state(
            policy,
            guard::check_host_and_origin,
        ))
}

/// Serves until `shutdown` is cancelled. Logs the address it listens on to stderr.
pub async fn serve(
    addr: SocketAddr,
    services: Arc<Services>,
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
    let app = app(services, policy, shutdown.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
}
