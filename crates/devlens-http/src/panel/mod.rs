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

/// A page of the panel: where it is served, its name in the navigation, its title, its module
/// (`/panel/<script>.js`) and its `<main>` (the file holds only that: the frame around it —
/// head, navigation — is the same on every page and built here).
struct Page {
    path: &'static str,
    nav: &'static str,
    title: &'static str,
    script: &'static str,
    main: &'static str,
}

/// The pages, in the order of the navigation.
const PAGES: &[Page] = &[
    Page {
        path: "/",
        nav: "API",
        title: "API",
        script: "api",
        main: include_str!("api.html"),
    },
    Page {
        path: "/traffic",
        nav: "API traffic",
        title: "API traffic",
        script: "traffic",
        main: include_str!("traffic.html"),
    },
    Page {
        path: "/kb",
        nav: "Knowledge base",
        title: "Knowledge base",
        script: "kb",
        main: include_str!("kb.html"),
    },
    Page {
        path: "/docs",
        nav: "Docs",
        title: "Docs",
        script: "docs",
        main: include_str!("docs.html"),
    },
    Page {
        path: "/browser",
        nav: "Browser",
        title: "Browser",
        script: "browser",
        main: include_str!("browser.html"),
    },
    Page {
        path: "/status",
        nav: "Status",
        title: "Status",
        script: "status",
        main: include_str!("status.html"),
    },
    Page {
        path: "/extension",
        nav: "Extension",
        title: "Chrome extension",
        script: "extension",
        main: include_str!("extension.html"),
    },
];

/// The assets the pages load: the path each is served at, its type, its text.
const ASSETS: &[(&str, &str, &str)] = &[
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

/// A whole page: the head, the navigation with this page marked current, then its `<main>`.
fn render(page: &Page) -> String {
    let nav: String = PAGES
        .iter()
        .map(|p| {
            let current = if p.path == page.path {
                " aria-current=\"page\""
            } else {
                ""
            };
            format!("    <a href=\"{}\"{current}>{}</a>\n", p.path, p.nav)
        })
        .collect();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>devlens — {title}</title>\n<link rel=\"stylesheet\" href=\"/panel/panel.css\">\n\
         <script type=\"module\" src=\"/panel/{script}.js\"></script>\n</head>\n<body>\n\
         <header class=\"top\">\n  <span class=\"brand\">devlens</span>\n  \
         <nav aria-label=\"Panel sections\">\n{nav}  </nav>\n</header>\n{main}</body>\n</html>\n",
        title = page.title,
        script = page.script,
        main = page.main,
    )
}

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

fn respond(content_type: &'static str, body: String, csp: String) -> Response {
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

/// Whether `path` is one of the panel's pages or assets: public, so a browser without a session
/// can load the sign-in form (the data they show comes from the API, which asks for a token).
pub(crate) fn is_public(path: &str) -> bool {
    is_page(path) || ASSETS.iter().any(|(asset, ..)| *asset == path)
}

/// Whether `path` is one of the panel's pages (not an asset): what a link from anywhere may
/// open (see the guard).
pub(crate) fn is_page(path: &str) -> bool {
    PAGES.iter().any(|page| page.path == path)
}

pub(crate) fn routes(app: Arc<App>) -> Router {
    let pages = PAGES.iter().map(|page| (page.path, HTML, render(page)));
    let assets = ASSETS
        .iter()
        .map(|&(path, content_type, body)| (path, content_type, body.to_string()));
    pages
        .chain(assets)
        .fold(Router::new(), |router, (path, content_type, body)| {
            let app = Arc::clone(&app);
            router.route(
                path,
                get(move || async move {
                    respond(content_type, body, csp(&app.extension().paired_origins()))
                }),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_marks_itself_current_in_one_navigation() {
        for page in PAGES {
            let html = render(page);
            assert_eq!(html.matches("aria-current=\"page\"").count(), 1);
            assert!(html.contains(&format!("<a href=\"{}\" aria-current=\"page\">", page.path)));
            assert!(html.contains(&format!("src=\"/panel/{}.js\"", page.script)));
            assert!(
                ASSETS
                    .iter()
                    .any(|(path, ..)| *path == format!("/panel/{}.js", page.script))
            );
            assert!(
                page.main.trim_start().starts_with("<main>"),
                "{}",
                page.path
            );
        }
    }

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
