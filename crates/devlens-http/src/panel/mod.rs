//! The dev panel: pages for the people beside the agent, at `/` of the HTTP server.
//!
//! Plain HTML, CSS and an ES module, compiled into the binary (no Node, no build step at run
//! time). The pages call the same REST API as the CLI and the MCP tools and put every value the
//! server sends on the page as text. Served with a content security policy that allows this
//! origin only, so nothing a page shows can load or run anything else.

use std::sync::Arc;

use axum::{
    Router,
    http::header,
    response::{IntoResponse, Response},
    routing::get,
};

use devlens_app::App;

/// Every page and asset: the path it is served at, its type, its text.
const FILES: &[(&str, &str, &str)] = &[
    ("/", HTML, include_str!("api.html")),
    ("/traffic", HTML, include_str!("traffic.html")),
    ("/kb", HTML, include_str!("kb.html")),
    ("/docs", HTML, include_str!("docs.html")),
    ("/browser", HTML, include_str!("browser.html")),
    ("/status", HTML, include_str!("status.html")),
    ("/extension", HTML, include_str!("extension.html")),
    (
        "/panel/panel.css",
        "text/css; charset=utf-8",
        include_str!("panel.css"),
    ),
    ("/panel/common.js", JS, include_str!("common.js")),
    ("/panel/api.js", JS, include_str!("api.js")),
    ("/panel/traffic.js", JS, include_str!("traffic.js")),
    ("/panel/kb.js", JS, include_str!("kb.js")),
    ("/panel/docs.js", JS, include_str!("docs.js")),
    ("/panel/browser.js", JS, include_str!("browser.js")),
    ("/panel/status.js", JS, include_str!("status.js")),
    ("/panel/extension.js", JS, include_str!("extension.js")),
];
const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// Pages and assets only use this origin. Who may frame a page is added per response
/// ([`csp`]).
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'";

/// The policy of a response: this origin only, framed by this origin and by the paired devlens
/// extensions (their DevTools panel hosts the panel; DevTools itself is the panel's parent).
fn csp(paired: &[String]) -> String {
    let mut ancestors = String::from("'self'");
    if !paired.is_empty() {
        for origin in paired {
            ancestors.push(' ');
            ancestors.push_str(origin);
        }
        ancestors.push_str(" devtools://devtools");
    }
    format!("{CSP}; frame-ancestors {ancestors}")
}

fn asset(content_type: &'static str, body: &'static str, csp: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CACHE_CONTROL, "no-cache".to_string()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
            (header::CONTENT_SECURITY_POLICY, csp),
        ],
        body,
    )
        .into_response()
}

pub(crate) fn routes(app: Arc<App>) -> Router {
    FILES
        .iter()
        .fold(Router::new(), |router, &(path, content_type, body)| {
            let app = Arc::clone(&app);
            router.route(
                path,
                get(move || async move {
                    asset(content_type, body, csp(&app.extension().paired_origins()))
                }),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paired_extensions_may_frame_the_panel() {
        assert!(csp(&[]).ends_with("frame-ancestors 'self'"));
        let paired = csp(&["chrome-extension://abc".to_string()]);
        assert!(
            paired.ends_with("frame-ancestors 'self' chrome-extension://abc devtools://devtools"),
            "{paired}"
        );
    }
}
