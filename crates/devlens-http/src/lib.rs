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
//!
//! A server others reach (beyond loopback, or `[server] require_token`) asks every API and MCP
//! call for a bearer token ([`auth`]); every server bounds requests a minute, body sizes and
//! plain requests' time ([`limits`]) and compresses its answers (event streams excepted).

mod api;
mod auth;
mod browser;
mod docs;
mod events;
mod extension;
pub mod failure;
mod guard;
mod kb;
pub mod limits;
mod panel;
mod status;
mod workspace;

use std::{net::SocketAddr, sync::Arc};

use axum::{Router, middleware};
use tokio_util::sync::CancellationToken;
use tower_http::compression::CompressionLayer;

use devlens_app::{App, tokens::TokenStore};

pub use failure::Failure;
pub use guard::OriginPolicy;
pub use limits::Limits;

/// How a server guards its door: which hosts and origins it answers, whether callers need a
/// token, and its limits.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub policy: OriginPolicy,
    /// Every API and MCP call needs a bearer token (or a signed-in panel's session).
    pub require_tokens: bool,
    pub limits: Limits,
}

/// Builds the whole application: `/api/…`, `/metrics` and `extra` (e.g. `/mcp`), guarded by the
/// origin policy and, when the options say so, by tokens; bounded by the limits.
///
/// Layers, outermost first: compression, the Host/Origin guard, finding the caller's token, the
/// rate limit (per token), refusing calls without the token they need, the body cap, the
/// timeout.
pub fn router(app: Arc<App>, extra: Router, options: ServerOptions) -> Router {
    let policy = Arc::new(options.policy.with_pairing(Arc::clone(&app)));
    let auth = Arc::new(auth::Auth::new(
        TokenStore::new(&app.config().data_dir),
        options.require_tokens,
    ));
    let limits = options.limits;
    let routes = Router::new()
        .merge(extra)
        .merge(docs::metrics_route(Arc::clone(&app)))
        .merge(status::routes(Arc::clone(&app)))
        .merge(extension::routes(Arc::clone(&app)))
        .merge(panel::routes(Arc::clone(&app)))
        .merge(auth::routes(Arc::clone(&auth)))
        .nest("/api", api::routes(app))
        .layer(middleware::from_fn_with_state(
            limits.request_timeout,
            limits::bound_time,
        ))
        .layer(middleware::from_fn_with_state(
            limits.max_body_bytes,
            limits::cap_body,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&auth),
            auth::enforce,
        ));
    limits::with_rate_limit(routes, limits.rate_limit_per_minute)
        .layer(middleware::from_fn_with_state(auth, auth::identify))
        .layer(middleware::from_fn_with_state(
            policy,
            guard::check_host_and_origin,
        ))
        // Server-sent events are left alone (compressing would hold events back).
        .layer(CompressionLayer::new())
}

/// Says where the dev panel is and whether this server asks for tokens (and how to make it).
fn announce_panel_and_tokens(local: SocketAddr, require_tokens: bool) {
    let panel = if local.ip().is_unspecified() {
        // Every address of the machine: the panel is at any of them.
        format!(
            "http://127.0.0.1:{}/ (or this machine's network address)",
            local.port()
        )
    } else {
        format!("http://{local}/")
    };
    tracing::info!("dev panel on {panel}");
    if require_tokens {
        tracing::info!(
            "tokens required: every API and MCP call needs a bearer token, and the panel asks for \
             one to sign in (`devlens token create --scope read|write` makes one, `devlens token \
             list` shows them)"
        );
    } else {
        tracing::info!(
            "no token required (loopback): programs on this machine may call this server, web \
             pages only from its own origin. To require tokens here too, set \
             `[server] require_token = true` in devlens.toml and run `devlens token create \
             --scope write`"
        );
    }
}

/// Serves until `shutdown` is cancelled. Logs the address it listens on, the panel's address and
/// whether tokens are required to stderr.
pub async fn serve(
    addr: SocketAddr,
    app: Arc<App>,
    extra: Router,
    options: ServerOptions,
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
    announce_panel_and_tokens(local, options.require_tokens);
    let router = router(app, extra, options);
    // The peer's address keys the rate limit of callers without a token.
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
    .await
}
