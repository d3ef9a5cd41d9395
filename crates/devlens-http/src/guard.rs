//! DNS-rebinding and cross-origin protection for every route.
//!
//! Two checks, before anything else runs:
//!
//! - **Host**: a loopback name or one of `[server] allowed_hosts` (DNS rebinding: a page of
//!   `evil.com` resolved to 127.0.0.1 still says `Host: evil.com`).
//! - **Where a browser request comes from**: the REST API, `/mcp` and the panel answer browsers
//!   only for their own pages (the server as the client addressed it: [`same_origin`]), for the
//!   origins in `[server] allowed_origins` and for the paired Chrome extensions. Another port of
//!   this machine is another origin: a dev server on `localhost:5173`, or the page of a malicious
//!   dependency there, is refused like any other site. The browser names the origin in `Origin`
//!   (every POST, every CORS request) and says where a request comes from in `Sec-Fetch-Site`
//!   (every request of current browsers): a request without `Origin` that says `same-site` or
//!   `cross-site` (an `<img>`, a `<script>`, a link from another port or site) is refused too,
//!   but for a navigation to one of the panel's pages, which is harmless (public HTML; framing
//!   is up to the pages' `frame-ancestors`). Requests with neither header (curl, the CLI, MCP
//!   clients) are no browser's and pass; tokens, where required, are checked after this.
//!
//! The method does not matter: a body-less `POST` (`/api/embed/reindex?project=x`), a form's
//! `text/plain` POST and a JSON one meet the same checks.

use std::sync::Arc;

use devlens_app::App;

use axum::{
    extract::{Request, State},
    http::{HeaderMap, Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use devlens_app::ErrorKind;

use crate::failure::Failure;

/// Which `Host` and `Origin` values the server accepts.
#[derive(Debug, Clone)]
pub struct OriginPolicy {
    hosts: Vec<String>,
    origins: Vec<String>,
    /// The Chrome extensions paired with this server (their origins are accepted too).
    paired: Option<Arc<App>>,
}

/// The one path an unpaired extension may call: pairing itself (the handler checks the token).
const PAIRING_PATH: &str = "/api/extension/pair";
const EXTENSION_SCHEME: &str = "chrome-extension://";

const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

impl OriginPolicy {
    /// Loopback hosts, plus what the configuration adds: hosts (a team server's name) and browser
    /// origins (e.g. a front end of yours that calls devlens, `chrome-extension://<id>`).
    pub fn new(extra_hosts: &[String], extra_origins: &[String]) -> Self {
        let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        hosts.extend(extra_hosts.iter().map(|h| h.to_ascii_lowercase()));
        Self {
            hosts,
            origins: extra_origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
            paired: None,
        }
    }

    /// Also accepts the extension origins paired with `app` (looked up on each request, so a
    /// pairing or a revocation takes effect at once).
    pub fn with_pairing(mut self, app: Arc<App>) -> Self {
        self.paired = Some(app);
        self
    }

    pub fn allowed_hosts(&self) -> Vec<String> {
        self.hosts.clone()
    }

    fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let name = strip_port(&host);
        self.hosts.iter().any(|h| h == &host || h == name)
    }

    /// Whether `origin` is configured (`[server] allowed_origins`) or a paired extension. The
    /// server's own origin is checked against the request's `Host` ([`same_origin`]).
    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.origins.iter().any(|o| o == &origin) {
            return true;
        }
        origin.starts_with(EXTENSION_SCHEME)
            && self
                .paired
                .as_ref()
                .is_some_and(|app| app.extension().is_paired(&origin))
    }

    /// Whether a request may go on, from its method, path, accepted `host` and headers; the
    /// refusal's message says why and what to do.
    fn check_source(
        &self,
        method: &Method,
        path: &str,
        host: &str,
        headers: &HeaderMap,
    ) -> Result<(), String> {
        let fetch = FetchMetadata::of(headers);
        match header_str(headers, header::ORIGIN) {
            Some(origin) if same_origin(origin, host) || self.origin_allowed(origin) => Ok(()),
            // An extension may ask to pair; the handler checks its token.
            Some(origin) if origin.starts_with(EXTENSION_SCHEME) && path == PAIRING_PATH => Ok(()),
            Some(origin) if origin.starts_with(EXTENSION_SCHEME) => {
                // Which origins are paired is not logged.
                tracing::warn!("refused a request from an unpaired browser extension");
                Err(format!(
                    "The extension {origin} is not paired with this devlens server. Open the \
                     extension's options, enter the pairing token shown on the panel's Extension \
                     page ({}/extension) and press Pair.",
                    base_url(headers)
                ))
            }
            Some(origin) => {
                tracing::warn!(origin, %method, path, "refused a cross-origin request");
                Err(foreign_origin(origin, &base_url(headers)))
            }
            None => match fetch.site {
                // No browser (curl, the CLI, MCP clients), or this server's own page.
                None | Some("same-origin") => Ok(()),
                // The person typed the address, or opened a bookmark.
                Some("none") if fetch.mode == Some("navigate") => Ok(()),
                Some("none") => {
                    tracing::warn!(%method, path, "refused a script request that names no origin");
                    Err(
                        "This request came from a browser script that does not say its origin \
                         (a browser extension's GET). The devlens extension calls with POST \
                         once paired; other extensions may not read devlens."
                            .to_string(),
                    )
                }
                Some(_) if fetch.is_panel_navigation(method, path) => Ok(()),
                Some(site) => {
                    tracing::warn!(site, %method, path, "refused a request from another site");
                    Err(format!(
                        "{method} {path} came from a page of another site or of another port of \
                         this machine (Sec-Fetch-Site: {site}) without naming its origin — an \
                         <img>, a <script>, a link or a form of that page. devlens answers \
                         browsers for its own pages only: open the panel at {}/. If a front end \
                         of yours must call devlens, let it call with fetch() (which names its \
                         origin) and add that origin to [server] allowed_origins in devlens.toml.",
                        base_url(headers)
                    ))
                }
            },
        }
    }
}

/// The refusal of an `Origin` that is neither this server (`base`), configured nor a paired
/// extension.
fn foreign_origin(origin: &str, base: &str) -> String {
    let why = if is_loopback_origin(origin) {
        format!(
            "it is another origin on this machine (another port, or another name for it), and \
             devlens answers browsers for its own pages ({base}) only: a dev server or a \
             dependency's page there must not drive it"
        )
    } else if origin == "null" {
        "the page has no origin (a sandboxed frame, a file, a redirect across sites)".to_string()
    } else {
        format!(
            "devlens answers browsers for its own pages ({base}), the origins in [server] \
             allowed_origins and paired extensions only"
        )
    };
    format!(
        "Origin '{origin}' is not allowed: {why}. If that page is yours and must call devlens, \
         add \"{origin}\" to [server] allowed_origins in devlens.toml and restart the server; for \
         the devlens Chrome extension, pair it on the panel's Extension page instead."
    )
}

/// Whether `origin` is a page served by this machine (any port).
fn is_loopback_origin(origin: &str) -> bool {
    let origin = origin.trim_end_matches('/').to_ascii_lowercase();
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(|authority| is_loopback_name(strip_port(authority)))
}

/// Whether a host name (without port) is this machine: `localhost` and its subdomains,
/// 127.0.0.0/8, `::1`.
pub(crate) fn is_loopback_name(name: &str) -> bool {
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost")
        || name.to_ascii_lowercase().ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The host name of an authority: `localhost:80` → `localhost`, `[::1]:80` → `::1`.
pub(crate) fn strip_port(authority: &str) -> &str {
    if let Some(inner) = authority.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner);
    }
    match authority.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) && !name.contains(':') => {
            name
        }
        _ => authority,
    }
}

fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// What a browser says about a request (Fetch Metadata): from where (`Sec-Fetch-Site`), how
/// (`Sec-Fetch-Mode`) and for what (`Sec-Fetch-Dest`). All absent outside browsers.
#[derive(Debug, Clone, Copy, Default)]
struct FetchMetadata<'a> {
    site: Option<&'a str>,
    mode: Option<&'a str>,
    dest: Option<&'a str>,
}

impl<'a> FetchMetadata<'a> {
    fn of(headers: &'a HeaderMap) -> Self {
        Self {
            site: header_str(headers, "sec-fetch-site"),
            mode: header_str(headers, "sec-fetch-mode"),
            dest: header_str(headers, "sec-fetch-dest"),
        }
    }

    /// A link or a typed address opening one of the panel's pages in a tab or a frame (the
    /// devlens extension's DevTools panel frames it): public HTML, harmless from anywhere.
    fn is_panel_navigation(&self, method: &Method, path: &str) -> bool {
        matches!(*method, Method::GET | Method::HEAD)
            && self.mode == Some("navigate")
            && matches!(self.dest, Some("document" | "iframe" | "frame"))
            && crate::panel::is_page(path)
    }
}

pub(crate) async fn check_host_and_origin(
    State(policy): State<Arc<OriginPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let host = header_str(headers, header::HOST).or_else(|| request.uri().host());
    let host = match host {
        Some(host) if policy.host_allowed(host) => host,
        Some(host) => {
            tracing::warn!(host, "refused a request for a foreign Host");
            return refuse(format!(
                "Host '{host}' is not allowed: devlens answers loopback names only. \
                 Add it to [server] allowed_hosts in devlens.toml if you really mean to expose it."
            ));
        }
        None => {
            return refuse(
                "The request names no Host: send the Host header (every HTTP/1.1 client does)."
                    .to_string(),
            );
        }
    };
    if let Err(message) = policy.check_source(request.method(), request.uri().path(), host, headers)
    {
        return refuse(message);
    }
    next.run(request).await
}

/// Whether `origin` is this server as the client addressed it (`Host`, already accepted): a page
/// the server itself served, not another site.
fn same_origin(origin: &str, host: &str) -> bool {
    let origin = origin.trim_end_matches('/').to_ascii_lowercase();
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(|authority| authority == host.to_ascii_lowercase())
}

fn refuse(message: String) -> Response {
    Failure::new(ErrorKind::Forbidden, message).into_response()
}

/// Whether the client reached the server over TLS (a proxy in front says so).
pub(crate) fn over_tls(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
}

/// The server's address as the client used it (the guard has checked `Host`).
pub(crate) fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    let scheme = if over_tls(headers) { "https" } else { "http" };
    format!("{scheme}://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "127.0.0.1:7878";

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HOST.parse().unwrap());
        for (name, value) in pairs {
            h.insert(*name, value.parse().unwrap());
        }
        h
    }

    fn policy() -> OriginPolicy {
        OriginPolicy::new(
            &[],
            &[
                "chrome-extension://abc".into(),
                "http://localhost:3000/".into(),
            ],
        )
    }

    fn check(method: Method, path: &str, pairs: &[(&'static str, &str)]) -> Result<(), String> {
        policy().check_source(&method, path, HOST, &headers(pairs))
    }

    #[test]
    fn loopback_hosts_pass_foreign_ones_do_not() {
        let policy = policy();
        for host in ["localhost", "localhost:7878", "127.0.0.1:1", "[::1]:80"] {
            assert!(policy.host_allowed(host), "{host}");
        }
        for host in [
            "evil.com",
            "evil.com:7878",
            "127.0.0.1.evil.com",
            "localhost.evil.com:80",
        ] {
            assert!(!policy.host_allowed(host), "{host}");
        }
    }

    #[test]
    fn only_configured_origins_and_paired_extensions_are_allowed_origins() {
        let policy = policy();
        assert!(policy.origin_allowed("chrome-extension://abc"));
        assert!(policy.origin_allowed("http://LOCALHOST:3000"));
        // Other ports of this machine are other origins.
        assert!(!policy.origin_allowed("http://localhost:5173"));
        assert!(!policy.origin_allowed("http://127.0.0.1:7878"));
        assert!(!policy.origin_allowed("http://evil.com"));
        assert!(!policy.origin_allowed("http://localhost.evil.com"));
        assert!(!policy.origin_allowed("null"));
        assert!(!policy.origin_allowed("chrome-extension://unpaired"));
    }

    #[test]
    fn a_page_of_the_server_itself_is_same_origin() {
        assert!(same_origin("http://devlens.team:7878", "devlens.team:7878"));
        assert!(same_origin("https://Devlens.Team/", "devlens.team"));
        assert!(same_origin("http://[::1]:7878", "[::1]:7878"));
        assert!(!same_origin("http://evil.com:7878", "devlens.team:7878"));
        assert!(!same_origin(
            "http://devlens.team:9999",
            "devlens.team:7878"
        ));
        assert!(!same_origin("http://localhost:7878", "127.0.0.1:7878"));
        assert!(!same_origin("null", "devlens.team"));
    }

    #[test]
    fn the_servers_own_pages_configured_origins_and_paired_extensions_pass() {
        let own = ("origin", "http://127.0.0.1:7878");
        assert!(check(Method::POST, "/api/workspace/write", &[own]).is_ok());
        assert!(
            check(
                Method::POST,
                "/mcp",
                &[own, ("sec-fetch-site", "same-origin")]
            )
            .is_ok()
        );
        let configured = ("origin", "http://localhost:3000");
        assert!(
            check(
                Method::POST,
                "/api/kb/search",
                &[configured, ("sec-fetch-site", "same-site")]
            )
            .is_ok()
        );
        let extension = ("origin", "chrome-extension://abc");
        assert!(
            check(
                Method::POST,
                "/api/kb/solutions",
                &[extension, ("sec-fetch-site", "none")]
            )
            .is_ok()
        );
        // An unpaired extension may pair, nothing else.
        let stranger = ("origin", "chrome-extension://unpaired");
        assert!(check(Method::POST, PAIRING_PATH, &[stranger]).is_ok());
        let refused = check(Method::POST, "/api/kb/search", &[stranger]).unwrap_err();
        assert!(refused.contains("not paired"), "{refused}");
        // The panel's GET fetches name no origin but say same-origin.
        assert!(
            check(
                Method::GET,
                "/api/projects",
                &[
                    ("sec-fetch-site", "same-origin"),
                    ("sec-fetch-mode", "cors")
                ]
            )
            .is_ok()
        );
    }

    #[test]
    fn another_port_of_this_machine_is_refused_whatever_the_method_or_body() {
        for method in [Method::GET, Method::POST, Method::PUT, Method::DELETE] {
            for path in [
                "/api/workspace/write",
                "/api/embed/reindex",
                "/mcp",
                "/api/auth/session",
                "/",
            ] {
                let refused = check(
                    method.clone(),
                    path,
                    &[
                        ("origin", "http://localhost:5173"),
                        ("sec-fetch-site", "same-site"),
                    ],
                )
                .unwrap_err();
                assert!(refused.contains("another port"), "{refused}");
                assert!(refused.contains("allowed_origins"), "{refused}");
            }
        }
        // Without Sec-Fetch-* (an older browser, a form): the origin alone decides.
        assert!(
            check(
                Method::POST,
                "/api/embed/reindex",
                &[("origin", "http://127.0.0.1:5173")]
            )
            .is_err()
        );
        let null = check(Method::POST, "/api/kb/import", &[("origin", "null")]).unwrap_err();
        assert!(null.contains("no origin"), "{null}");
        let evil = check(Method::POST, "/mcp", &[("origin", "http://evil.com")]).unwrap_err();
        assert!(evil.contains("allowed_origins"), "{evil}");
    }

    #[test]
    fn requests_of_other_sites_that_name_no_origin_are_refused() {
        for site in ["same-site", "cross-site"] {
            // <img src>, <script src>, <link href>.
            for (mode, dest) in [
                ("no-cors", "image"),
                ("no-cors", "script"),
                ("cors", "empty"),
            ] {
                let refused = check(
                    Method::GET,
                    "/api/kb/export",
                    &[
                        ("sec-fetch-site", site),
                        ("sec-fetch-mode", mode),
                        ("sec-fetch-dest", dest),
                    ],
                )
                .unwrap_err();
                assert!(refused.contains("Sec-Fetch-Site"), "{refused}");
                assert!(refused.contains("http://127.0.0.1:7878/"), "{refused}");
            }
            // A link to the API or MCP: not needed, refused.
            for path in ["/api/extension", "/mcp", "/panel/common.js", "/metrics"] {
                assert!(
                    check(
                        Method::GET,
                        path,
                        &[
                            ("sec-fetch-site", site),
                            ("sec-fetch-mode", "navigate"),
                            ("sec-fetch-dest", "document"),
                        ],
                    )
                    .is_err(),
                    "{site} {path}"
                );
            }
            // A body-less POST without an Origin (no browser sends one, but still).
            assert!(
                check(
                    Method::POST,
                    "/api/embed/reindex",
                    &[("sec-fetch-site", site)]
                )
                .is_err()
            );
        }
    }

    #[test]
    fn navigations_to_the_panels_pages_pass_from_anywhere() {
        for site in ["none", "same-origin", "same-site", "cross-site"] {
            for dest in ["document", "iframe"] {
                for path in ["/", "/kb", "/extension"] {
                    assert!(
                        check(
                            Method::GET,
                            path,
                            &[
                                ("sec-fetch-site", site),
                                ("sec-fetch-mode", "navigate"),
                                ("sec-fetch-dest", dest),
                            ],
                        )
                        .is_ok(),
                        "{site} {dest} {path}"
                    );
                }
            }
        }
        // A form POSTed to a page is no navigation to read.
        assert!(
            check(
                Method::POST,
                "/",
                &[
                    ("sec-fetch-site", "cross-site"),
                    ("sec-fetch-mode", "navigate"),
                    ("sec-fetch-dest", "document"),
                ],
            )
            .is_err()
        );
    }

    #[test]
    fn extension_gets_without_an_origin_are_refused_typed_addresses_are_not() {
        let refused = check(
            Method::GET,
            "/api/kb/solutions",
            &[("sec-fetch-site", "none"), ("sec-fetch-mode", "cors")],
        )
        .unwrap_err();
        assert!(refused.contains("extension"), "{refused}");
        assert!(
            check(
                Method::GET,
                "/api/status",
                &[
                    ("sec-fetch-site", "none"),
                    ("sec-fetch-mode", "navigate"),
                    ("sec-fetch-dest", "document"),
                ],
            )
            .is_ok()
        );
    }

    #[test]
    fn clients_that_are_no_browser_pass() {
        for method in [Method::GET, Method::POST, Method::DELETE] {
            assert!(check(method, "/api/workspace/write", &[]).is_ok(), "curl");
        }
    }

    #[test]
    fn loopback_names_are_this_machine() {
        for name in [
            "localhost",
            "LOCALHOST",
            "app.localhost",
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "[::1]",
        ] {
            assert!(is_loopback_name(name), "{name}");
        }
        for name in ["localhost.evil.com", "10.0.0.2", "devlens.team", "0.0.0.0"] {
            assert!(!is_loopback_name(name), "{name}");
        }
        assert!(is_loopback_origin("http://localhost:5173"));
        assert!(is_loopback_origin("http://[::1]:5173/"));
        assert!(!is_loopback_origin("http://evil.com"));
        assert!(!is_loopback_origin("null"));
    }
}
