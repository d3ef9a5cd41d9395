//! Bounds on what one client can ask of the server: requests a minute (per token, per address
//! without one), the size of a request body, and how long a plain request may run. Each refusal
//! is a JSON failure that says which `[server]` setting decided it.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::{
    Router,
    body::Body,
    extract::{ConnectInfo, Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http_body_util::BodyExt as _;
use tower_governor::{
    GovernorError, GovernorLayer, governor::GovernorConfigBuilder, key_extractor::KeyExtractor,
};

use devlens_app::ErrorKind;
use devlens_core::ServerSettings;

use crate::auth::Caller;
use crate::failure::Failure;

const MB: u64 = 1024 * 1024;
/// A refused body at most this much past the cap is read and dropped before the 413 (see
/// [`cap_body`]); a larger one gets the answer on a connection then closed.
const DRAIN_MAX_BYTES: u64 = 64 * MB;
const DRAIN_MAX_TIME: Duration = Duration::from_secs(30);

/// The limits of one server (`[server]` in devlens.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests a minute per token (per client address without one); 0 is no limit.
    pub rate_limit_per_minute: u32,
    /// The largest request body, in bytes.
    pub max_body_bytes: u64,
    /// How long a plain request may run (event streams and MCP are not cut).
    pub request_timeout: Duration,
}

impl Limits {
    /// Enough for a person on the panel and an agent working flat out; a script looping on the
    /// API meets it.
    pub const DEFAULT_RATE_LIMIT_PER_MINUTE: u32 = 600;
    /// The largest file the workspace tools write (10 MB) after JSON escaping, a big knowledge
    /// base import.
    pub const DEFAULT_MAX_BODY_MB: u64 = 32;
    /// Long enough for a re-index answered at the end; the streaming forms are not cut.
    pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 300;

    pub fn from_settings(settings: &ServerSettings) -> Self {
        Self {
            rate_limit_per_minute: settings
                .rate_limit_per_minute
                .unwrap_or(Self::DEFAULT_RATE_LIMIT_PER_MINUTE),
            max_body_bytes: settings
                .max_body_mb
                .unwrap_or(Self::DEFAULT_MAX_BODY_MB)
                .saturating_mul(MB),
            request_timeout: Duration::from_secs(
                settings
                    .request_timeout_secs
                    .unwrap_or(Self::DEFAULT_REQUEST_TIMEOUT_SECS)
                    .max(1),
            ),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from_settings(&ServerSettings::default())
    }
}

/// Whom a request counts against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum RateKey {
    Token(String),
    Address(IpAddr),
    /// No token and no peer address (a router served without connection info).
    Unaddressed,
}

/// The token [`crate::auth::identify`] found, else the client's address.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallerKey;

impl KeyExtractor for CallerKey {
    type Key = RateKey;

    fn extract<T>(&self, request: &axum::http::Request<T>) -> Result<RateKey, GovernorError> {
        if let Some(Caller::Token(who)) = request.extensions().get::<Caller>() {
            return Ok(RateKey::Token(who.id.clone()));
        }
        Ok(request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(RateKey::Unaddressed, |ConnectInfo(peer)| {
                RateKey::Address(peer.ip())
            }))
    }
}

/// `router` with the rate limit (off when `per_minute` is 0). Refusals are 429 with
/// `Retry-After`.
pub(crate) fn with_rate_limit(router: Router, per_minute: u32) -> Router {
    if per_minute == 0 {
        return router;
    }
    // A full minute's worth may come at once; then one more every 60/n seconds.
    let Some(config) = GovernorConfigBuilder::default()
        .key_extractor(CallerKey)
        .per_nanosecond(60_000_000_000 / u64::from(per_minute))
        .burst_size(per_minute)
        .finish()
    else {
        tracing::warn!(
            per_minute,
            "the rate limit cannot be set up; serving without one"
        );
        return router;
    };
    // Counters of callers quiet for a while are dropped, so a stream of new addresses does not
    // grow memory; the task ends with the server.
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let limiter = Arc::downgrade(config.limiter());
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(60)).await;
                let Some(limiter) = limiter.upgrade() else {
                    return;
                };
                limiter.retain_recent();
            }
        });
    }
    router.layer(
        GovernorLayer::new(Arc::new(config))
            .error_handler(move |error| too_many(error, per_minute)),
    )
}

fn too_many(error: GovernorError, per_minute: u32) -> Response {
    let wait = match error {
        GovernorError::TooManyRequests { wait_time, .. } => wait_time.max(1),
        // The key extractor cannot fail; say so rather than guess.
        _ => {
            return Failure::new(
                ErrorKind::Internal,
                "the rate limit could not place this request",
            )
            .into_response();
        }
    };
    let mut response = Failure::new(
        ErrorKind::Unavailable,
        format!(
            "Too many requests: this server takes {per_minute} a minute per token (per client \
             address without one; [server] rate_limit_per_minute). Try again in {wait} s."
        ),
    )
    .with_status(StatusCode::TOO_MANY_REQUESTS)
    .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(wait));
    response
}

/// Refuses a body larger than `max` bytes: at once when `Content-Length` says so, else when
/// reading it passes the cap (the handler then answers 413 too).
pub(crate) async fn cap_body(State(max): State<u64>, request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(length) = declared
        && length > max
    {
        let refusal = Failure::new(
            ErrorKind::InvalidInput,
            format!(
                "The request body is {} MB; this server takes at most {} MB ([server] \
                 max_body_mb in its devlens.toml). Send less at once (import in parts), or ask \
                 the server's owner to raise the limit.",
                megabytes(length),
                megabytes(max),
            ),
        )
        .with_status(StatusCode::PAYLOAD_TOO_LARGE)
        .into_response();
        // Most clients still sending a body read no answer from a connection closed under
        // them: take in (and drop) a body not far past the cap first, so they see this one.
        if length <= max.saturating_add(DRAIN_MAX_BYTES) {
            let mut body = request.into_body();
            let _ = tokio::time::timeout(DRAIN_MAX_TIME, async {
                while let Some(Ok(_)) = body.frame().await {}
            })
            .await;
        }
        return refusal;
    }
    let limit = usize::try_from(max).unwrap_or(usize::MAX);
    let request = request.map(|body| Body::new(http_body_util::Limited::new(body, limit)));
    next.run(request).await
}

fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / MB as f64;
    if mb < 10.0 {
        format!("{mb:.1}")
    } else {
        format!("{mb:.0}")
    }
}

/// Requests answered as a stream: the timeout does not cut them (MCP sessions, server-sent
/// events of progress and of the browser).
fn is_stream(request: &Request) -> bool {
    let path = request.uri().path();
    path == "/mcp"
        || path.starts_with("/mcp/")
        || path.ends_with("/stream")
        || path == "/api/browser/events"
        || request
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|accept| accept.contains("text/event-stream"))
}

/// Stops a plain request that runs longer than `limit` with a 503 that says so.
pub(crate) async fn bound_time(
    State(limit): State<Duration>,
    request: Request,
    next: Next,
) -> Response {
    if is_stream(&request) {
        return next.run(request).await;
    }
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(%method, path, "stopped a request that ran past the timeout");
            Failure::new(
                ErrorKind::Timeout,
                format!(
                    "{method} {path} ran longer than {} s, this server's limit ([server] \
                     request_timeout_secs), and was stopped. Long operations have a streaming \
                     form that is not cut (…/stream, e.g. POST /api/embed/reindex/stream).",
                    limit.as_secs()
                ),
            )
            .with_status(StatusCode::SERVICE_UNAVAILABLE)
            .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_fill_in_the_defaults() {
        let limits = Limits::default();
        assert_eq!(limits.rate_limit_per_minute, 600);
        assert_eq!(limits.max_body_bytes, 32 * MB);
        assert_eq!(limits.request_timeout, Duration::from_secs(300));
        let set = Limits::from_settings(&ServerSettings {
            rate_limit_per_minute: Some(0),
            max_body_mb: Some(1),
            request_timeout_secs: Some(0),
            ..ServerSettings::default()
        });
        assert_eq!(set.rate_limit_per_minute, 0);
        assert_eq!(set.max_body_bytes, MB);
        assert_eq!(set.request_timeout, Duration::from_secs(1), "never zero");
    }

    #[test]
    fn streams_are_not_timed() {
        let request = |path: &str, accept: Option<&str>| {
            let mut r = Request::builder().uri(path);
            if let Some(a) = accept {
                r = r.header(header::ACCEPT, a);
            }
            r.body(Body::empty()).unwrap_or_default()
        };
        assert!(is_stream(&request("/mcp", None)));
        assert!(is_stream(&request("/api/embed/reindex/stream", None)));
        assert!(is_stream(&request("/api/browser/events", None)));
        assert!(is_stream(&request(
            "/api/anything",
            Some("text/event-stream")
        )));
        assert!(!is_stream(&request("/api/embed/reindex", None)));
        assert!(!is_stream(&request(
            "/api/kb/search",
            Some("application/json")
        )));
    }
}
