//! DNS-rebinding and cross-origin protection for every route.

use std::sync::Arc;

use devlens_app::App;

use axum::{
    extract::{Request, State},
    http::{HeaderMap, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

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
    /// Loopback hosts and same-machine origins, plus what the configuration adds
    /// (e.g. `chrome-extension://<id>` for the devlens extension).
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

    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.origins.iter().any(|o| o == &origin) {
            return true;
        }
        if origin.starts_with(EXTENSION_SCHEME) {
            return self
                .paired
                .as_ref()
                .is_some_and(|app| app.extension().is_paired(&origin));
        }
        // Pages served by this machine (the dev panel, a local front end) may call the API.
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        LOOPBACK_HOSTS.contains(&strip_port(rest))
    }
}

/// The host name of an authority: `localhost:80` → `localhost`, `[::1]:80` → `::1`.
fn strip_port(authority: &str) -> &str {
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

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

pub(crate) async fn check_host_and_origin(
    State(policy): State<Arc<OriginPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let host = header_str(headers, header::HOST).or_else(|| request.uri().host());
    match host {
        Some(host) if policy.host_allowed(host) => {}
        Some(host) => {
            tracing::warn!(host, "refused a request for a foreign Host");
            return refuse(format!(
                "Host '{host}' is not allowed: devlens answers loopback names only. \
                 Add it to [server] allowed_hosts in devlens.toml if you really mean to expose it."
            ));
        }
        None => return refuse("missing Host header".to_string()),
    }
    match header_str(headers, header::ORIGIN) {
        Some(origin) if policy.origin_allowed(origin) => {}
        // The panel served at the (accepted) address the client used, e.g. a team server's.
        Some(origin) if host.is_some_and(|host| same_origin(origin, host)) => {}
        // An extension may ask to pair; the handler checks its token.
        Some(origin)
            if origin.starts_with(EXTENSION_SCHEME) && request.uri().path() == PAIRING_PATH => {}
        Some(origin) if origin.starts_with(EXTENSION_SCHEME) => {
            // Which origins are paired is not logged.
            tracing::warn!("refused a request from an unpaired browser extension");
            return refuse(format!(
                "The extension {origin} is not paired with this devlens server. Open the \
                 extension's options, enter the pairing token shown on the panel's Extension \
                 page (/extension) and press Pair."
            ));
        }
        Some(origin) => {
            tracing::warn!(origin, "refused a cross-origin request");
            return refuse(format!(
                "Origin '{origin}' is not allowed. Add it to [server] allowed_origins in \
                 devlens.toml, or pair the devlens Chrome extension on the panel's Extension page."
            ));
        }
        None if anonymous_script_request(headers) => {
            tracing::warn!("refused a script request that names no origin");
            return refuse(
                "This request came from a browser script that does not say its origin (a \
                 browser extension's GET). The devlens extension calls with POST once paired; \
                 other extensions may not read devlens."
                    .to_string(),
            );
        }
        None => {}
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

/// A request a browser made for a script of no web page: `Sec-Fetch-Site: none` outside a
/// navigation. Chrome sends extensions' GETs so, without an `Origin`: refused, because the
/// guard could not tell a paired extension from any other.
fn anonymous_script_request(headers: &HeaderMap) -> bool {
    let fetch_header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    fetch_header("sec-fetch-site") == Some("none")
        && fetch_header("sec-fetch-mode").is_some_and(|mode| mode != "navigate")
}

fn refuse(message: String) -> Response {
    (
        StatusCode::FORBIDDEN,
        axum::Json(serde_json::json!({ "error": message })),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_and_origins_pass_foreign_ones_do_not() {
        let policy = OriginPolicy::new(&[], &["chrome-extension://abc".into()]);
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
        assert!(policy.origin_allowed("http://localhost:3000"));
        assert!(policy.origin_allowed("http://127.0.0.1:7878"));
        assert!(policy.origin_allowed("chrome-extension://abc"));
        assert!(!policy.origin_allowed("http://evil.com"));
        assert!(!policy.origin_allowed("http://localhost.evil.com"));
        assert!(!policy.origin_allowed("null"));
        assert!(!policy.origin_allowed("chrome-extension://unpaired"));
    }

    #[test]
    fn a_page_of_the_server_itself_is_same_origin() {
        assert!(same_origin("http://devlens.team:7878", "devlens.team:7878"));
        assert!(same_origin("https://Devlens.Team/", "devlens.team"));
        assert!(!same_origin("http://evil.com:7878", "devlens.team:7878"));
        assert!(!same_origin(
            "http://devlens.team:9999",
            "devlens.team:7878"
        ));
        assert!(!same_origin("null", "devlens.team"));
    }

    #[test]
    fn extension_gets_without_an_origin_are_anonymous_navigations_are_not() {
        let headers = |site: &str, mode: &str| {
            let mut h = HeaderMap::new();
            h.insert("sec-fetch-site", site.parse().unwrap());
            h.insert("sec-fetch-mode", mode.parse().unwrap());
            h
        };
        assert!(anonymous_script_request(&headers("none", "cors")));
        assert!(!anonymous_script_request(&headers("none", "navigate")));
        assert!(!anonymous_script_request(&headers("same-origin", "cors")));
        assert!(
            !anonymous_script_request(&HeaderMap::new()),
            "curl, the CLI"
        );
    }
}
