//! The dev panel: pages for the people beside the agent, at `/` of the HTTP server.
//!
//! Plain HTML, CSS and an ES module, compiled into the binary (no Node, no build step at run
//! time). The pages call the same REST API as the CLI and the MCP tools and put every value the
//! server sends on the page as text. Served with a content security policy that allows this
//! origin only, so nothing a page shows can load or run anything else.

use axum::{
    Router,
    http::header,
    response::{IntoResponse, Response},
    routing::get,
};

const INDEX_HTML: &str = include_str!("index.html");
const PANEL_CSS: &str = include_str!("panel.css");
const PANEL_JS: &str = include_str!("panel.js");

/// Pages and assets only use this origin.
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'self'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_SECURITY_POLICY, CSP),
        ],
        body,
    )
        .into_response()
}

pub(crate) fn routes() -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/panel/panel.css",
            get(|| async { asset("text/css; charset=utf-8", PANEL_CSS) }),
        )
        .route(
            "/panel/panel.js",
            get(|| async { asset("text/javascript; charset=utf-8", PANEL_JS) }),
        )
}
