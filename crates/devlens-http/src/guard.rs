//! DNS-rebinding and cross-origin protection for every route.

use std::sync::Arc;

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
}

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
        }
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
    if let Some(origin) = header_str(headers, header::ORIGIN)
        && !policy.origin_allowed(origin)
    {
        tracing::warn!(origin, "refused a cross-origin request");
        return refuse(format!(
            "Origin '{origin}' is not allowed. Add it to [server] allowed_origins in devlens.toml \
             (e.g. chrome-extension://<id>)."
        ));
    }
    next.run(request).await
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
    }
}
