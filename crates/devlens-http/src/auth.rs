//! Who may call: bearer tokens (devlens-app's [`TokenStore`]) on a server that requires them.
//!
//! A server requires a token when it listens beyond loopback or `[server] require_token` says
//! so. Then every call to `/api/…`, `/mcp` and `/metrics` carries `Authorization: Bearer
//! <token>` — or, for the dev panel in a browser, the session cookie its sign-in form got from
//! `POST /api/auth/session` (the cookie names a session kept here, not the token: see
//! [`SessionCookie`] for its name and attributes). The panel's pages and assets, `/api/health`,
//! the sign-in itself and the MCP authorization metadata (`/.well-known/oauth-protected-resource`,
//! RFC 9728) are public.
//!
//! Sessions are bounded per token ([`SESSIONS_PER_TOKEN`]: a token's own oldest session makes
//! room) and in all ([`MAX_SESSIONS`]: then sign-ins are refused, nobody's session is ended), so
//! a token holder signing in in a loop ends only their own sessions.
//!
//! Two middlewares: [`identify`] (outermost) finds out who is calling and puts a [`Caller`] in
//! the request, so the rate limit can count per token; [`enforce`] (inside the rate limit)
//! answers 401 to a caller without a valid token and 403 to a read token asking for a write, and
//! hands the token's [`Scope`] on to the handlers — the MCP server reads it to refuse tools that
//! are not read-only, `POST /api/call` to refuse `execute`.
//!
//! Which calls are writes: every `POST`, `PUT`, `PATCH`, `DELETE` except the ones listed in
//! [`READ_ONLY_POSTS`] (searches, queries, asks, traffic checks, the browser's read-only tools) —
//! so a route added later is a write until someone decides otherwise; a body-less `POST`
//! (`/api/embed/reindex?project=x`) is a write like any other — plus `GET /api/extension`,
//! which shows the extension pairing secret. Tokens and session ids are never logged.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::{
    Json, Router,
    extract::{Request, State, rejection::JsonRejection},
    http::{HeaderMap, HeaderValue, Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
    routing::get,
};
use serde::Deserialize;
use serde_json::{Value, json};

use devlens_app::{
    ErrorKind,
    tokens::{Scope, TokenIdentity, TokenStore},
};

use crate::failure::{Failure, json_body};
use crate::guard::{base_url, is_loopback_name, over_tls, strip_port};

/// The cookie a signed-in panel carries where browsers keep a `Secure` cookie: over TLS, and on
/// loopback (`http://localhost`, `http://127.0.0.1` are potentially trustworthy origins, where
/// browsers keep `Secure` cookies; Chromium's is tested). The `__Host-` prefix makes the browser
/// insist on `Secure`, `Path=/` and no `Domain`.
pub(crate) const SESSION_COOKIE: &str = "__Host-devlens_session";
/// The cookie of a panel on plain HTTP beyond loopback (a team server at `http://10.0.0.5:7878`),
/// where no browser keeps a `Secure` cookie: the same session, without `Secure` and its prefix.
pub(crate) const PLAIN_SESSION_COOKIE: &str = "devlens_session";
/// How long a panel stays signed in.
const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);
/// Sessions one token keeps at most: its next sign-in ends its own oldest session.
pub(crate) const SESSIONS_PER_TOKEN: usize = 16;
/// Sessions kept at most, all tokens together: past it a sign-in is refused (503) rather than
/// ending someone's session. One token can hold only [`SESSIONS_PER_TOKEN`] of them.
pub(crate) const MAX_SESSIONS: usize = 1_000;
/// Where clients find out how to authenticate (RFC 9728).
pub(crate) const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Paths anyone may call, beside the panel's pages and assets and the well-known documents.
const PUBLIC_PATHS: &[&str] = &["/api/health", "/api/auth/session"];

/// `POST` routes that only read: allowed to read tokens. Every other `POST`, `PUT` and `DELETE`
/// is a write. The browser and debugger entries are the tools whose MCP annotations say
/// read-only.
pub(crate) const READ_ONLY_POSTS: &[&str] = &[
    "/api/search",
    "/api/embed/search",
    "/api/check-traffic",
    // A dry run reads; `execute: true` is refused to read tokens by the handler.
    "/api/call",
    "/api/docs/query",
    "/api/kb/search",
    "/api/kb/ask",
    "/api/workspace/search",
    // The extension proves itself with the pairing token; what it may do after is its token's.
    "/api/extension/pair",
    "/api/browser/query_elements",
    "/api/browser/snapshot",
    "/api/browser/wait_for",
    "/api/browser/get_console_logs",
    "/api/browser/list_network_requests",
    "/api/browser/inspect_css",
    "/api/browser/inspect_app_state",
    "/api/browser/audit_accessibility",
    "/api/debugger/call_stack",
    "/api/debugger/wait_for_pause",
];

/// `GET` routes that need a write token: they show a secret.
const WRITE_ONLY_GETS: &[&str] = &["/api/extension"];

/// What a call needs: nothing (public), or a token of at least this scope.
pub(crate) fn needed_scope(method: &Method, path: &str) -> Option<Scope> {
    if path.starts_with("/.well-known/")
        || PUBLIC_PATHS.contains(&path)
        || crate::panel::is_public(path)
    {
        return None;
    }
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Some(if WRITE_ONLY_GETS.contains(&path) {
            Scope::Write
        } else {
            Scope::Read
        });
    }
    // The MCP server checks each tool call against the token's scope itself.
    if path == "/mcp" || path.starts_with("/mcp/") {
        return Some(Scope::Read);
    }
    if *method == Method::POST && READ_ONLY_POSTS.contains(&path) {
        return Some(Scope::Read);
    }
    Some(Scope::Write)
}

/// Who made a request, as far as tokens go; [`identify`] puts it in the request's extensions.
#[derive(Debug, Clone)]
pub(crate) enum Caller {
    /// The server requires no token, or none came with the request.
    Anonymous,
    /// A bearer token or a panel session that checks out.
    Token(TokenIdentity),
    /// A token or a session that matches nothing here (mistyped, revoked, expired).
    Unknown,
    /// The tokens file cannot be read; the message says which and what to do.
    Broken(String),
}

/// A signed-in panel: the token it signed in with (by id, so a revocation ends it) and when it
/// ends.
#[derive(Debug)]
struct PanelSession {
    token_id: String,
    expires: Instant,
    /// The order sessions started in (oldest first).
    serial: u64,
}

/// The session cookie of a request's context: its name and whether it is `Secure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SessionCookie {
    pub(crate) name: &'static str,
    pub(crate) secure: bool,
}

impl SessionCookie {
    /// `__Host-devlens_session` (`Secure`) over TLS and on loopback, else `devlens_session`.
    pub(crate) fn for_request(headers: &HeaderMap) -> Self {
        if over_tls(headers) || loopback_host(headers) {
            Self {
                name: SESSION_COOKIE,
                secure: true,
            }
        } else {
            Self {
                name: PLAIN_SESSION_COOKIE,
                secure: false,
            }
        }
    }

    /// The `Set-Cookie` value holding `value` for `max_age` seconds (0 clears it).
    fn set(self, value: &str, max_age: u64) -> String {
        let secure = if self.secure { "; Secure" } else { "" };
        format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}",
            self.name
        )
    }
}

/// Whether the client addressed the server by a loopback name (the guard has checked `Host`).
fn loopback_host(headers: &HeaderMap) -> bool {
    headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|host| is_loopback_name(strip_port(host)))
}

/// The token check of one server.
#[derive(Debug)]
pub(crate) struct Auth {
    required: bool,
    tokens: TokenStore,
    sessions: Mutex<HashMap<String, PanelSession>>,
    /// The next session's [`PanelSession::serial`].
    serial: AtomicU64,
}

impl Auth {
    pub(crate) fn new(tokens: TokenStore, required: bool) -> Self {
        Self {
            required,
            tokens,
            sessions: Mutex::new(HashMap::new()),
            serial: AtomicU64::new(0),
        }
    }

    fn caller(&self, headers: &HeaderMap) -> Caller {
        if !self.required {
            return Caller::Anonymous;
        }
        if let Some(token) = bearer(headers) {
            return match self.tokens.verify(token) {
                Ok(Some(who)) => Caller::Token(who),
                Ok(None) => Caller::Unknown,
                Err(e) => Caller::Broken(e.to_string()),
            };
        }
        match cookie(headers, SessionCookie::for_request(headers).name) {
            Some(session) => self.session_caller(session),
            None => Caller::Anonymous,
        }
    }

    fn session_caller(&self, session: &str) -> Caller {
        let token_id = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            match sessions.get(session) {
                Some(s) if s.expires > Instant::now() => s.token_id.clone(),
                Some(_) => {
                    sessions.remove(session);
                    return Caller::Unknown;
                }
                None => return Caller::Unknown,
            }
        };
        match self.tokens.identity(&token_id) {
            Ok(Some(who)) => Caller::Token(who),
            Ok(None) => {
                self.end_session(session);
                Caller::Unknown
            }
            Err(e) => Caller::Broken(e.to_string()),
        }
    }

    /// A new session for `who`; its id, the cookie's value. A token at [`SESSIONS_PER_TOKEN`]
    /// loses its own oldest session; with [`MAX_SESSIONS`] held in all, the sign-in is refused.
    fn start_session(&self, who: &TokenIdentity) -> Result<String, Failure> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| {
            Failure::new(
                ErrorKind::Internal,
                format!("cannot start a session: the system's random source failed ({e})"),
            )
        })?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let now = Instant::now();
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|_, s| s.expires > now);
        // The token's own sessions, oldest first.
        let mut own: Vec<(u64, String)> = sessions
            .iter()
            .filter(|(_, s)| s.token_id == who.id)
            .map(|(k, s)| (s.serial, k.clone()))
            .collect();
        own.sort();
        let surplus = (own.len() + 1).saturating_sub(SESSIONS_PER_TOKEN);
        for (_, oldest) in own.into_iter().take(surplus) {
            sessions.remove(&oldest);
        }
        if sessions.len() >= MAX_SESSIONS {
            tracing::warn!(
                token = %who.id,
                sessions = sessions.len(),
                "refused a panel sign-in: the server holds as many sessions as it keeps"
            );
            return Err(Failure::new(
                ErrorKind::Unavailable,
                format!(
                    "This server holds {MAX_SESSIONS} signed-in panel sessions, the most it keeps \
                     (at most {SESSIONS_PER_TOKEN} per token), so it signs no one else in until \
                     some end: a session ends after 12 hours, on sign-out, when its token is \
                     revoked (`devlens token list`, `devlens token revoke ID` on the server) or \
                     when the server restarts. Try again later, or ask the server's owner; \
                     clients other than the panel need no session: they send the token as \
                     `Authorization: Bearer <token>`."
                ),
            ));
        }
        sessions.insert(
            id.clone(),
            PanelSession {
                token_id: who.id.clone(),
                expires: now + SESSION_LIFETIME,
                serial: self.serial.fetch_add(1, Ordering::Relaxed),
            },
        );
        Ok(id)
    }

    fn end_session(&self, session: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session);
    }
}

/// Finds out who is calling (see [`Caller`]); refuses nothing.
pub(crate) async fn identify(
    State(auth): State<Arc<Auth>>,
    mut request: Request,
    next: Next,
) -> Response {
    let caller = auth.caller(request.headers());
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// Refuses calls without the token they need (401) or with too small a scope (403); passes the
/// token's scope on to the handlers.
pub(crate) async fn enforce(
    State(auth): State<Arc<Auth>>,
    mut request: Request,
    next: Next,
) -> Response {
    if !auth.required {
        return next.run(request).await;
    }
    let Some(needed) = needed_scope(request.method(), request.uri().path()) else {
        return next.run(request).await;
    };
    let caller = request
        .extensions()
        .get::<Caller>()
        .cloned()
        .unwrap_or(Caller::Anonymous);
    match caller {
        Caller::Token(who) if who.scope.allows(needed) => {
            request.extensions_mut().insert(who.scope);
            next.run(request).await
        }
        Caller::Token(who) => {
            tracing::info!(
                token = %who.id,
                method = %request.method(),
                path = request.uri().path(),
                "refused a write to a read-only token"
            );
            forbidden(&request, &who)
        }
        Caller::Anonymous => unauthorized(request.headers(), false),
        Caller::Unknown => {
            tracing::info!(
                method = %request.method(),
                path = request.uri().path(),
                "refused a request with an unknown token"
            );
            unauthorized(request.headers(), true)
        }
        Caller::Broken(message) => Failure::new(ErrorKind::Internal, message).into_response(),
    }
}

/// How a client gets and sends a token: every 401 says it.
const HOW_TO_PASS: &str = "send it as `Authorization: Bearer <token>` — MCP clients as a header \
    in their server config, the CLI with DEVLENS_TOKEN or --token, the extension in its options; \
    the panel asks for it on its sign-in form";

fn unauthorized(headers: &HeaderMap, invalid: bool) -> Response {
    let message = if invalid {
        format!(
            "The token sent is not valid on this server: it was revoked, mistyped, or made for \
             another server (a signed-in panel: the session ended). Get a current one from the \
             server's owner (`devlens token list` shows which exist) and {HOW_TO_PASS}."
        )
    } else {
        format!(
            "This devlens server requires a token. Ask its owner for one (made on the server \
             with `devlens token create --scope read`, or `--scope write` to change things) and \
             {HOW_TO_PASS}."
        )
    };
    let mut challenge = format!(
        "Bearer resource_metadata=\"{}{RESOURCE_METADATA_PATH}\"",
        base_url(headers)
    );
    if invalid {
        challenge.push_str(", error=\"invalid_token\"");
    }
    with_challenge(
        Failure::new(ErrorKind::Unauthorized, message).into_response(),
        &challenge,
    )
}

fn forbidden(request: &Request, who: &TokenIdentity) -> Response {
    let message = format!(
        "{} {} changes state, and token {} may only read. Use a write token (made on the server \
         with `devlens token create --scope write`).",
        request.method(),
        request.uri().path(),
        who.id,
    );
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"write\", resource_metadata=\"{}{RESOURCE_METADATA_PATH}\"",
        base_url(request.headers())
    );
    with_challenge(
        Failure::new(ErrorKind::Forbidden, message).into_response(),
        &challenge,
    )
}

fn with_challenge(mut response: Response, challenge: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The token of `Authorization: Bearer <token>`.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The value of cookie `name` in the request's `Cookie` headers.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim())
        .filter(|v| !v.is_empty())
}

pub(crate) fn routes(auth: Arc<Auth>) -> Router {
    Router::new()
        .route(RESOURCE_METADATA_PATH, get(resource_metadata))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(resource_metadata),
        )
        .route(
            "/api/auth/session",
            get(session).post(sign_in).delete(sign_out),
        )
        .with_state(auth)
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`: the protected resource metadata MCP
/// clients look for (RFC 9728). devlens issues its own tokens (`devlens token create`), so no
/// authorization server is named: a client is configured with a token.
async fn resource_metadata(headers: HeaderMap) -> Json<Value> {
    let base = base_url(&headers);
    Json(json!({
        "resource": format!("{base}/mcp"),
        "resource_name": "devlens",
        "bearer_methods_supported": ["header"],
        "scopes_supported": [Scope::Read, Scope::Write],
        "resource_documentation": concat!(
            env!("CARGO_PKG_REPOSITORY"),
            "/blob/main/docs/http-api.md#authentication"
        ),
    }))
}

/// What the panel needs to know: whether this server requires a token and whether this browser
/// (or this request's bearer token) has one.
fn session_state(auth: &Auth, who: Option<&TokenIdentity>) -> Value {
    match who {
        Some(who) => json!({
            "required": auth.required,
            "signedIn": true,
            "tokenId": who.id,
            "name": who.name,
            "scope": who.scope,
        }),
        None => json!({ "required": auth.required, "signedIn": false }),
    }
}

/// `GET /api/auth/session`.
async fn session(State(auth): State<Arc<Auth>>, request: Request) -> Json<Value> {
    let who = match request.extensions().get::<Caller>() {
        Some(Caller::Token(who)) => Some(who.clone()),
        _ => None,
    };
    Json(session_state(&auth, who.as_ref()))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    token: String,
}

/// `POST /api/auth/session` `{"token"}`: a panel signs in; the answer sets the session cookie.
async fn sign_in(
    State(auth): State<Arc<Auth>>,
    headers: HeaderMap,
    body: Result<Json<SignIn>, JsonRejection>,
) -> Result<Response, Failure> {
    let body = json_body(body, "{\"token\"}")?;
    if !auth.required {
        return Ok(Json(session_state(&auth, None)).into_response());
    }
    let who = match auth.tokens.verify(&body.token) {
        Ok(Some(who)) => who,
        Ok(None) => {
            return Err(Failure::new(
                ErrorKind::Unauthorized,
                "That token is not valid on this server: check you copied all of it (it starts \
                 with dlt_), or ask the server's owner for a current one (`devlens token list` \
                 shows which exist).",
            ));
        }
        Err(e) => return Err(Failure::new(ErrorKind::Internal, e.to_string())),
    };
    let session = auth.start_session(&who)?;
    let cookie = SessionCookie::for_request(&headers).set(&session, SESSION_LIFETIME.as_secs());
    let mut response = Json(session_state(&auth, Some(&who))).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

/// `DELETE /api/auth/session`: signs the panel out (the session ends, the cookie is cleared).
async fn sign_out(State(auth): State<Arc<Auth>>, headers: HeaderMap) -> Response {
    let kind = SessionCookie::for_request(&headers);
    if let Some(session) = cookie(&headers, kind.name) {
        auth.end_session(session);
    }
    let mut response = Json(session_state(&auth, None)).into_response();
    if let Ok(value) = HeaderValue::from_str(&kind.set("", 0)) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(method: Method, path: &str) -> Option<Scope> {
        needed_scope(&method, path)
    }

    #[test]
    fn the_panel_health_sign_in_and_metadata_are_public() {
        for path in [
            "/",
            "/kb",
            "/status",
            "/extension",
            "/panel/common.js",
            "/panel/panel.css",
            "/api/health",
            "/api/auth/session",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ] {
            assert_eq!(needs(Method::GET, path), None, "{path}");
        }
        assert_eq!(needs(Method::POST, "/api/auth/session"), None);
        assert_eq!(needs(Method::DELETE, "/api/auth/session"), None);
        // Not a panel asset: an unknown path is not public.
        assert_eq!(
            needs(Method::GET, "/panel/../api/kb/export"),
            Some(Scope::Read)
        );
    }

    #[test]
    fn reads_need_a_read_token() {
        for (method, path) in [
            (Method::GET, "/api/projects"),
            (Method::GET, "/api/search"),
            (Method::POST, "/api/search"),
            (Method::POST, "/api/embed/search"),
            (Method::POST, "/api/check-traffic"),
            (Method::POST, "/api/call"),
            (Method::GET, "/api/docs/query"),
            (Method::POST, "/api/docs/query"),
            (Method::POST, "/api/kb/search"),
            (Method::POST, "/api/kb/ask"),
            (Method::GET, "/api/kb/export"),
            (Method::GET, "/api/kb/settings"),
            (Method::POST, "/api/workspace/search"),
            (Method::GET, "/api/workspace/file"),
            (Method::POST, "/api/browser/snapshot"),
            (Method::POST, "/api/browser/get_console_logs"),
            (Method::POST, "/api/debugger/call_stack"),
            (Method::GET, "/api/browser/events"),
            (Method::GET, "/api/status"),
            (Method::GET, "/metrics"),
            (Method::POST, "/mcp"),
            (Method::GET, "/mcp"),
            (Method::DELETE, "/mcp"),
            (Method::POST, "/api/extension/pair"),
        ] {
            assert_eq!(
                needs(method.clone(), path),
                Some(Scope::Read),
                "{method} {path}"
            );
        }
    }

    #[test]
    fn everything_that_changes_state_needs_a_write_token() {
        for (method, path) in [
            (Method::POST, "/api/projects"),
            (Method::DELETE, "/api/projects/pets"),
            (Method::POST, "/api/projects/pets/activate"),
            (Method::POST, "/api/embed/reindex"),
            (Method::POST, "/api/embed/reindex/stream"),
            (Method::POST, "/api/embed/reindex-all"),
            (Method::POST, "/api/embed/reindex-all/stream"),
            (Method::POST, "/api/kb/solutions"),
            (Method::PUT, "/api/kb/solutions/abc"),
            (Method::DELETE, "/api/kb/solutions/abc"),
            (Method::POST, "/api/kb/import"),
            (Method::PUT, "/api/kb/settings"),
            (Method::POST, "/api/kb/reembed"),
            (Method::POST, "/api/kb/reembed/stream"),
            (Method::POST, "/api/docs/libraries"),
            (Method::POST, "/api/docs/libraries/stream"),
            (Method::DELETE, "/api/docs/libraries"),
            (Method::POST, "/api/workspace/write"),
            (Method::POST, "/api/workspace/edit"),
            (Method::POST, "/api/browser/chrome"),
            (Method::POST, "/api/browser/navigate"),
            (Method::POST, "/api/browser/click_element"),
            (Method::POST, "/api/browser/evaluate"),
            (Method::POST, "/api/browser/screenshot"),
            (Method::POST, "/api/debugger/breakpoint"),
            (Method::POST, "/api/debugger/step"),
            (Method::GET, "/api/extension"),
            (Method::POST, "/api/extension/token"),
            (Method::POST, "/api/extension/revoke"),
            // A route nobody classified yet is a write.
            (Method::POST, "/api/something-new"),
            (Method::PATCH, "/api/search"),
        ] {
            assert_eq!(
                needs(method.clone(), path),
                Some(Scope::Write),
                "{method} {path}"
            );
        }
    }

    #[test]
    fn bearer_tokens_and_cookies_are_read_from_their_headers() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "bearer  dlt_abc ".parse().unwrap());
        assert_eq!(bearer(&headers), Some("dlt_abc"));
        headers.insert(header::AUTHORIZATION, "Basic dXNlcg==".parse().unwrap());
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, "Bearer".parse().unwrap());
        assert_eq!(bearer(&headers), None);

        headers.insert(
            header::COOKIE,
            "theme=dark; __Host-devlens_session=s1; devlens_session=s2; other=x"
                .parse()
                .unwrap(),
        );
        assert_eq!(cookie(&headers, SESSION_COOKIE), Some("s1"));
        assert_eq!(cookie(&headers, PLAIN_SESSION_COOKIE), Some("s2"));
        assert_eq!(cookie(&headers, "missing"), None);
    }

    fn request_to(host: &str, tls: bool) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, host.parse().unwrap());
        if tls {
            headers.insert("x-forwarded-proto", "https".parse().unwrap());
        }
        headers
    }

    #[test]
    fn the_session_cookie_is_host_prefixed_and_secure_over_tls_and_on_loopback() {
        for host in [
            "127.0.0.1:7878",
            "localhost:7878",
            "[::1]:7878",
            "localhost",
        ] {
            let kind = SessionCookie::for_request(&request_to(host, false));
            assert_eq!(kind.name, "__Host-devlens_session", "{host}");
            let set = kind.set("abc", 60);
            assert_eq!(
                set,
                "__Host-devlens_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=60; Secure"
            );
            assert!(!set.contains("Domain"), "{set}");
        }
        let team = SessionCookie::for_request(&request_to("devlens.team:7878", true));
        assert_eq!((team.name, team.secure), (SESSION_COOKIE, true));
        // Plain HTTP beyond loopback: no browser keeps a Secure cookie there.
        let lan = SessionCookie::for_request(&request_to("10.0.0.5:7878", false));
        assert_eq!((lan.name, lan.secure), (PLAIN_SESSION_COOKIE, false));
        assert_eq!(
            lan.set("", 0),
            "devlens_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        );
    }

    #[test]
    fn a_request_is_read_with_the_cookie_of_its_context_only() {
        let dir = std::env::temp_dir().join("devlens-auth-cookie-test-nonexistent");
        let auth = Auth::new(TokenStore::new(&devlens_core::DataDir::at(&dir)), true);
        let mut loopback = request_to("127.0.0.1:7878", false);
        // A cookie under the other name (set by a page on another port of localhost, say) is
        // not looked at: no session, an anonymous caller.
        loopback.insert(header::COOKIE, "devlens_session=planted".parse().unwrap());
        assert!(matches!(auth.caller(&loopback), Caller::Anonymous));
        loopback.insert(
            header::COOKIE,
            "__Host-devlens_session=gone".parse().unwrap(),
        );
        assert!(matches!(auth.caller(&loopback), Caller::Unknown));
    }

    fn identity(id: &str) -> TokenIdentity {
        TokenIdentity {
            id: id.to_string(),
            name: id.to_string(),
            scope: Scope::Read,
        }
    }

    fn live(auth: &Auth, session: &str) -> bool {
        auth.sessions
            .lock()
            .unwrap()
            .get(session)
            .is_some_and(|s| s.expires > Instant::now())
    }

    #[test]
    fn a_token_signing_in_in_a_loop_ends_only_its_own_oldest_sessions() {
        let dir = std::env::temp_dir().join("devlens-auth-session-test-nonexistent");
        let auth = Auth::new(TokenStore::new(&devlens_core::DataDir::at(&dir)), true);
        let (alice, mallory) = (identity("tok_alice"), identity("tok_mallory"));
        let kept = auth.start_session(&alice).unwrap();
        let first = auth.start_session(&mallory).unwrap();
        let mut last = Vec::new();
        for _ in 0..(MAX_SESSIONS + 10) {
            last.push(auth.start_session(&mallory).unwrap());
        }
        assert!(live(&auth, &kept), "another token's session is kept");
        assert!(!live(&auth, &first), "the token's own oldest went");
        let own = auth
            .sessions
            .lock()
            .unwrap()
            .values()
            .filter(|s| s.token_id == mallory.id)
            .count();
        assert_eq!(own, SESSIONS_PER_TOKEN);
        for session in &last[last.len() - SESSIONS_PER_TOKEN..] {
            assert!(live(&auth, session));
        }
        assert_eq!(auth.sessions.lock().unwrap().len(), SESSIONS_PER_TOKEN + 1);
    }

    #[test]
    fn past_the_global_bound_sign_ins_are_refused_and_nobody_is_signed_out() {
        let dir = std::env::temp_dir().join("devlens-auth-bound-test-nonexistent");
        let auth = Auth::new(TokenStore::new(&devlens_core::DataDir::at(&dir)), true);
        let mut held = Vec::new();
        for n in 0..MAX_SESSIONS {
            held.push(
                auth.start_session(&identity(&format!("tok_{}", n / SESSIONS_PER_TOKEN)))
                    .unwrap(),
            );
        }
        let refused = auth.start_session(&identity("tok_new")).unwrap_err();
        let response = refused.into_response();
        assert_eq!(
            response.status(),
            axum::http::StatusCode::SERVICE_UNAVAILABLE
        );
        assert!(held.iter().all(|s| live(&auth, s)), "every session is kept");
        // A token at its own cap still signs in: in place of its own oldest.
        let full = identity("tok_0");
        assert!(auth.start_session(&full).is_ok());
        assert!(!live(&auth, &held[0]));
        assert!(held[1..].iter().all(|s| live(&auth, s)));
    }

    #[test]
    fn the_base_url_is_the_one_the_client_used() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "devlens.team:7878".parse().unwrap());
        assert_eq!(base_url(&headers), "http://devlens.team:7878");
        headers.insert("x-forwarded-proto", "https".parse().unwrap());
        assert_eq!(base_url(&headers), "https://devlens.team:7878");
    }
}
