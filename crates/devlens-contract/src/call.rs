//! Calling an endpoint: arguments checked against the operation's contract before anything is
//! sent (with the contract in the error when they break it), the request built with the
//! project's base URL and credentials, shown as curl, sent when asked, and its answer checked
//! like live traffic.
//!
//! Credentials come from the environment (the project names the variables); they go into the
//! request and nowhere else: the request shown, the curl line and every message name the
//! variable (`$GITHUB_TOKEN`), never its value.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use base64::Engine as _;
use devlens_core::outbound::{self, GuardedClient, OutboundError, OutboundPolicy};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::findings::{Finding, Side};
use crate::traffic::{Body, Exchange, coerce};
use crate::{Contract, dialect_of, is_json_media, media_base};
use devlens_openapi::{ApiSpec, EndpointRef, Operation};

use crate::ContractError;

/// A credential read from the environment: the value, and how it is shown (`$VAR`).
#[derive(Clone)]
pub struct Secret {
    value: String,
    shown: String,
}

impl Secret {
    /// `value` read from the variable `env`.
    pub fn from_env_value(value: String, env: &str) -> Secret {
        Secret {
            value,
            shown: format!("${env}"),
        }
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Where an API key goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLocation {
    Header,
    Query,
    Cookie,
}

/// How a call authenticates.
#[derive(Debug, Clone)]
pub enum Auth {
    Bearer(Secret),
    ApiKey {
        name: String,
        location: KeyLocation,
        key: Secret,
    },
    Basic {
        username: Secret,
        password: Secret,
    },
}

/// Where a call goes and with which credentials.
#[derive(Debug, Clone, Default)]
pub struct CallTarget {
    /// Overrides the spec's servers.
    pub base_url: Option<String>,
    pub auth: Option<Auth>,
    /// The variable that would give a base URL, named in the error when there is none.
    pub base_url_env: String,
}

/// What a caller passes: parameters by name (each goes where the operation declares it), extra
/// headers, a body.
#[derive(Debug, Clone, Default)]
pub struct CallArgs {
    pub params: Map<String, Value>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
    /// The request body's content type when the operation offers several.
    pub content_type: Option<String>,
}

/// A request ready to send.
#[derive(Debug, Clone)]
pub struct PreparedCall {
    pub operation: Operation,
    pub method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
    /// As shown: credentials named by their variable.
    pub shown: ShownRequest,
    pub curl: String,
}

/// The request as shown to a person or an agent.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShownRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// The answer to a sent call.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallResponse {
    pub status: u16,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Size of the whole body in bytes.
    pub size: usize,
    /// The body, cut to [`SHOWN_BODY_BYTES`].
    pub body: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// What `call_endpoint` answers.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    pub request: ShownRequest,
    pub curl: String,
    /// False for a dry run.
    pub executed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<CallResponse>,
    /// How the answer differs from the spec.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Bytes of a response body shown.
pub const SHOWN_BODY_BYTES: usize = 8 * 1024;
/// Bytes of a response body read (and checked).
const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
/// How long a call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Methods that change nothing: sent without being asked.
pub fn is_safe_method(method: &str) -> bool {
    matches!(
        method.to_ascii_uppercase().as_str(),
        "GET" | "HEAD" | "OPTIONS"
    )
}

/// The spec's first API-key security scheme: its name and where it goes.
pub fn api_key_scheme(spec: &ApiSpec) -> Option<(String, KeyLocation)> {
    let schemes = spec.documents().security_schemes()?;
    schemes.values().find_map(|s| {
        if s.get("type")?.as_str()? != "apiKey" {
            return None;
        }
        let location = match s.get("in")?.as_str()? {
            "query" => KeyLocation::Query,
            "cookie" => KeyLocation::Cookie,
            _ => KeyLocation::Header,
        };
        Some((s.get("name")?.as_str()?.to_string(), location))
    })
}

/// Checks `args` against the operation and builds the request.
pub fn prepare_call(
    spec: &ApiSpec,
    endpoint: &EndpointRef,
    args: &CallArgs,
    target: &CallTarget,
) -> Result<PreparedCall, ContractError> {
    let op = spec.find_operation(endpoint)?;
    let contract = Contract::build(&spec.documents().view(), op, dialect_of(&spec.spec_version));
    let label = match &op.operation_id {
        Some(id) => format!("{} {} ({id})", op.method, op.path),
        None => format!("{} {}", op.method, op.path),
    };
    let mut problems: Vec<String> = Vec::new();
    let mut values: Vec<(&crate::ParamContract, Value)> = Vec::new();
    for (name, value) in &args.params {
        match contract.params.iter().find(|p| &p.name == name) {
            Some(param) => values.push((param, value.clone())),
            None => {
                let known: Vec<&str> = contract.params.iter().map(|p| p.name.as_str()).collect();
                problems.push(if known.is_empty() {
                    format!("unknown parameter `{name}`: the operation takes no parameters")
                } else {
                    format!("unknown parameter `{name}` (it takes {})", known.join(", "))
                });
            }
        }
    }
    for param in &contract.params {
        let given = values.iter().find(|(p, _)| std::ptr::eq(*p, param));
        match given {
            None if param.required => problems.push(format!(
                "missing required {} parameter `{}`",
                param.location, param.name
            )),
            None => {}
            Some((_, value)) => {
                let Some(validator) = &param.validator else {
                    continue;
                };
                let checked = match value {
                    Value::String(s) => coerce(
                        std::slice::from_ref(s),
                        param.schema.as_ref().unwrap_or(&Value::Null),
                    ),
                    other => other.clone(),
                };
                for f in crate::findings::validate(validator, &checked, Side::Request, None) {
                    problems.push(format!(
                        "{} parameter `{}`: {}",
                        param.location,
                        param.name,
                        finding_text(&f)
                    ));
                }
            }
        }
    }
    // The body.
    let mut body_text: Option<String> = None;
    let mut content_type: Option<String> = None;
    match (&contract.body, &args.body) {
        (Some(body), None) if body.required => {
            problems.push("missing the required request body".into());
        }
        (None, Some(_)) => problems.push("the operation takes no request body".into()),
        (Some(body), Some(value)) => {
            let wanted = args.content_type.as_deref().map(media_base);
            let media = match &wanted {
                Some(w) => body.media.iter().find(|m| &m.media_type == w),
                None => body
                    .media
                    .iter()
                    .find(|m| is_json_media(&m.media_type))
                    .or_else(|| body.media.first()),
            };
            match media {
                None => problems.push(format!(
                    "the request body cannot be {}: it takes {}",
                    wanted.unwrap_or_default(),
                    body.media
                        .iter()
                        .map(|m| m.media_type.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                Some(m) if m.media_type == "application/x-www-form-urlencoded" => {
                    match value.as_object() {
                        Some(fields) => {
                            let mut form = url::form_urlencoded::Serializer::new(String::new());
                            for (k, v) in fields {
                                form.append_pair(k, &scalar_text(v));
                            }
                            body_text = Some(form.finish());
                            content_type = Some(m.media_type.clone());
                        }
                        None => problems.push("a form body must be an object of fields".into()),
                    }
                }
                Some(m) if m.media_type.starts_with("multipart/") => problems.push(
                    "multipart bodies are not sent by call_endpoint; use the curl line with -F"
                        .into(),
                ),
                Some(m) => {
                    if let Some(validator) = &m.validator {
                        for f in crate::findings::validate(validator, value, Side::Request, None) {
                            problems.push(format!("request body: {}", finding_text(&f)));
                        }
                    }
                    body_text = Some(match value {
                        Value::String(s) if !is_json_media(&m.media_type) => s.clone(),
                        other => serde_json::to_string(other).unwrap_or_default(),
                    });
                    content_type = Some(if m.media_type.contains('*') {
                        "application/json".into()
                    } else {
                        m.media_type.clone()
                    });
                }
            }
        }
        _ => {}
    }
    if !problems.is_empty() {
        let contract = spec
            .endpoint_details(endpoint)
            .map(|d| devlens_core::Report::to_text(&d))
            .unwrap_or_default();
        return Err(ContractError::InvalidCall {
            endpoint: label,
            problems,
            contract,
        });
    }
    let base = match &target.base_url {
        Some(b) => b.clone(),
        None => spec
            .server_urls()
            .into_iter()
            .find(|s| s.starts_with("http://") || s.starts_with("https://"))
            .ok_or_else(|| ContractError::NoBaseUrl {
                endpoint: label.clone(),
                env: target.base_url_env.clone(),
            })?,
    };
    // The URL: path parameters filled, query parameters appended.
    let mut path = op.path.clone();
    let mut query: Vec<(String, String)> = Vec::new();
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut cookies: Vec<(String, String)> = Vec::new();
    for (param, value) in &values {
        match param.location.as_str() {
            "path" => {
                let encoded: String =
                    url::form_urlencoded::byte_serialize(scalar_text(value).as_bytes()).collect();
                path = path.replace(&format!("{{{}}}", param.name), &encoded.replace('+', "%20"));
            }
            "query" => match value {
                Value::Array(items) => {
                    for item in items {
                        query.push((param.name.clone(), scalar_text(item)));
                    }
                }
                Value::Object(fields) => {
                    for (k, v) in fields {
                        query.push((k.clone(), scalar_text(v)));
                    }
                }
                other => query.push((param.name.clone(), scalar_text(other))),
            },
            "header" => headers.push((param.name.clone(), scalar_text(value))),
            "cookie" => cookies.push((param.name.clone(), scalar_text(value))),
            _ => {}
        }
    }
    let mut shown_query = query.clone();
    let mut shown_headers: Vec<(String, String)> = Vec::new();
    let mut curl_auth: Option<String> = None;
    match &target.auth {
        Some(Auth::Bearer(token)) => {
            headers.push(("Authorization".into(), format!("Bearer {}", token.value)));
            shown_headers.push(("Authorization".into(), format!("Bearer {}", token.shown)));
        }
        Some(Auth::ApiKey {
            name,
            location,
            key,
        }) => match location {
            KeyLocation::Header => {
                headers.push((name.clone(), key.value.clone()));
                shown_headers.push((name.clone(), key.shown.clone()));
            }
            KeyLocation::Query => {
                query.push((name.clone(), key.value.clone()));
                shown_query.push((name.clone(), key.shown.clone()));
            }
            KeyLocation::Cookie => {
                cookies.push((name.clone(), key.value.clone()));
            }
        },
        Some(Auth::Basic { username, password }) => {
            let token = base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{}", username.value, password.value));
            headers.push(("Authorization".into(), format!("Basic {token}")));
            shown_headers.push(("Authorization".into(), "Basic [redacted]".into()));
            curl_auth = Some(format!("-u \"{}:{}\"", username.shown, password.shown));
        }
        None => {}
    }
    let shown_cookies: Vec<(String, String)> = cookies
        .iter()
        .map(|(k, v)| match &target.auth {
            Some(Auth::ApiKey {
                name,
                location: KeyLocation::Cookie,
                key,
            }) if name == k => (k.clone(), key.shown.clone()),
            _ => (k.clone(), v.clone()),
        })
        .collect();
    let base = base.trim_end_matches('/');
    let url = with_query(&format!("{base}{path}"), &query, false);
    let shown_url = with_query(&format!("{base}{path}"), &shown_query, true);
    for (k, v) in &args.headers {
        headers.push((k.clone(), v.clone()));
    }
    if let Some(ct) = &content_type {
        headers.push(("Content-Type".into(), ct.clone()));
    }
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("accept"))
    {
        headers.push(("Accept".into(), "application/json".into()));
    }
    if !cookies.is_empty() {
        headers.push(("Cookie".into(), cookie_header(&cookies)));
    }
    // Shown headers: everything, the credentials by their variable.
    let mut shown_all: Vec<(String, String)> = headers
        .iter()
        .filter(|(k, _)| {
            !k.eq_ignore_ascii_case("authorization")
                && !k.eq_ignore_ascii_case("cookie")
                && !shown_headers.iter().any(|(s, _)| s.eq_ignore_ascii_case(k))
        })
        .cloned()
        .collect();
    shown_all.extend(shown_headers);
    if !shown_cookies.is_empty() {
        shown_all.push(("Cookie".into(), cookie_header(&shown_cookies)));
    }
    let shown = ShownRequest {
        method: op.method.clone(),
        url: shown_url,
        headers: shown_all,
        body: body_text.clone(),
    };
    let curl = curl_line(&shown, curl_auth.as_deref());
    Ok(PreparedCall {
        operation: op.clone(),
        method: op.method.clone(),
        url,
        headers,
        body: body_text,
        shown,
        curl,
    })
}

/// Sends a prepared call through the outbound guard (`policy`: which private hosts it may
/// reach) and checks its answer against the operation's responses.
pub async fn send_call(
    spec: &ApiSpec,
    call: &PreparedCall,
    policy: &OutboundPolicy,
) -> Result<CallOutcome, ContractError> {
    let call_failed = |reason: String| ContractError::CallFailed {
        method: call.method.clone(),
        url: call.shown.url.clone(),
        reason,
    };
    let builder = policy
        .client_builder()
        .timeout(CALL_TIMEOUT)
        .connect_timeout(Duration::from_secs(10));
    let client = GuardedClient::new(policy.clone(), builder)
        .map_err(|e| call_failed(outbound::explain(&e)))?;
    let method =
        reqwest::Method::from_bytes(call.method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut request = client.request(method, &call.url).await.map_err(|refused| {
        ContractError::CallRefused {
            // The refusal names the URL as sent, which may carry an API key: name it as shown.
            reason: OutboundError {
                url: call.shown.url.clone(),
                reason: refused.reason,
            }
            .to_string(),
        }
    })?;
    for (k, v) in &call.headers {
        request = request.header(k, v);
    }
    if let Some(body) = &call.body {
        request = request.body(body.clone());
    }
    let failed = |e: reqwest::Error| match outbound::refusal_in(&e) {
        // A redirect or an address the guard refused.
        Some(refused) => ContractError::CallRefused {
            reason: refused.to_string(),
        },
        // explain() leaves out the URL, which may carry an API key.
        None => call_failed(outbound::explain(&e)),
    };
    let started = Instant::now();
    let mut response = request.send().await.map_err(failed)?;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut bytes: Vec<u8> = Vec::new();
    let mut size = 0usize;
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        size += chunk.len();
        if bytes.len() < MAX_RESPONSE_BYTES {
            let room = MAX_RESPONSE_BYTES - bytes.len();
            bytes.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or(&[]));
        }
    }
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let read_whole = size <= MAX_RESPONSE_BYTES;
    let contract = Contract::build(
        &spec.documents().view(),
        &call.operation,
        dialect_of(&spec.spec_version),
    );
    let exchange = Exchange {
        source: "call".into(),
        method: call.method.clone(),
        url: call.url.clone(),
        resource_type: Some("fetch".into()),
        request_content_type: None,
        request_body: None,
        status: Some(status),
        response_content_type: content_type.clone(),
        response_body: Some(Body {
            text: text.clone(),
            truncated: !read_whole,
        }),
    };
    let mut unchecked = 0;
    let findings = crate::traffic::check_response(&contract, &exchange, &mut unchecked);
    let mut shown_body = text;
    let truncated = shown_body.len() > SHOWN_BODY_BYTES || !read_whole;
    if shown_body.len() > SHOWN_BODY_BYTES {
        let mut end = SHOWN_BODY_BYTES;
        while !shown_body.is_char_boundary(end) {
            end -= 1;
        }
        shown_body.truncate(end);
    }
    Ok(CallOutcome {
        operation_id: call.operation.operation_id.clone(),
        request: call.shown.clone(),
        curl: call.curl.clone(),
        executed: true,
        response: Some(CallResponse {
            status,
            duration_ms,
            content_type,
            size,
            body: shown_body,
            truncated,
        }),
        findings,
        note: (unchecked > 0)
            .then(|| "the answer is too large to check against the spec".to_string()),
    })
}

impl PreparedCall {
    /// The outcome of not sending it.
    pub fn dry_run(&self, note: impl Into<String>) -> CallOutcome {
        CallOutcome {
            operation_id: self.operation.operation_id.clone(),
            request: self.shown.clone(),
            curl: self.curl.clone(),
            executed: false,
            response: None,
            findings: Vec::new(),
            note: Some(note.into()),
        }
    }
}

fn finding_text(f: &Finding) -> String {
    let mut out = String::new();
    if let Some(p) = f.pointer.as_deref().filter(|p| !p.is_empty()) {
        let _ = write!(out, "{p}: ");
    }
    let _ = write!(out, "{} — {}", f.kind, f.expected);
    if let Some(seen) = &f.seen {
        let _ = write!(out, "; given {seen}");
    }
    out
}

/// A JSON value as it goes into a URL or a header: strings bare, the rest as JSON.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `url?k=v&…`; in the shown form (`shown`), values naming a variable (`$API_KEY`) stay bare so
/// a shell fills them.
fn with_query(url: &str, pairs: &[(String, String)], shown: bool) -> String {
    if pairs.is_empty() {
        return url.to_string();
    }
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let parts: Vec<String> = pairs
        .iter()
        .map(|(k, v)| {
            let variable = shown
                && v.len() > 1
                && v.starts_with('$')
                && v.chars()
                    .skip(1)
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
            if variable {
                format!("{}={v}", encode(k))
            } else {
                format!("{}={}", encode(k), encode(v))
            }
        })
        .collect();
    format!("{url}?{}", parts.join("&"))
}

fn cookie_header(cookies: &[(String, String)]) -> String {
    cookies
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The request as a curl command line. Values naming a variable go in double quotes so the
/// shell fills them; everything else in single quotes.
fn curl_line(request: &ShownRequest, basic_auth: Option<&str>) -> String {
    let quote = |s: &str| -> String {
        if s.contains('$') && !s.contains('"') && !s.contains('`') && !s.contains('\\') {
            format!("\"{s}\"")
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let mut out = String::from("curl");
    if request.method != "GET" {
        let _ = write!(out, " -X {}", request.method);
    }
    let _ = write!(out, " {}", quote(&request.url));
    for (k, v) in &request.headers {
        if basic_auth.is_some() && k.eq_ignore_ascii_case("authorization") {
            continue;
        }
        let _ = write!(out, " \\\n  -H {}", quote(&format!("{k}: {v}")));
    }
    if let Some(auth) = basic_auth {
        let _ = write!(out, " \\\n  {auth}");
    }
    if let Some(body) = &request.body {
        let _ = write!(out, " \\\n  --data-raw '{}'", body.replace('\'', "'\\''"));
    }
    out
}

impl devlens_core::Report for CallOutcome {
    fn to_text(&self) -> String {
        let mut out = String::new();
        match &self.response {
            None => {
                let _ = writeln!(
                    out,
                    "Dry run (not sent): {} {}",
                    self.request.method, self.request.url
                );
            }
            Some(r) => {
                let _ = writeln!(
                    out,
                    "{} {} → {} in {} ms{}",
                    self.request.method,
                    self.request.url,
                    r.status,
                    r.duration_ms,
                    r.content_type
                        .as_deref()
                        .map(|c| format!(" ({})", media_base(c)))
                        .unwrap_or_default()
                );
            }
        }
        let _ = writeln!(out, "\n{}", self.curl);
        if let Some(r) = &self.response {
            if self.findings.is_empty() {
                out.push_str("\nThe answer matches the spec.\n");
            } else {
                out.push_str("\nThe answer differs from the spec:\n");
                for f in &self.findings {
                    let _ = writeln!(out, "  {}", f.to_line());
                }
            }
            if !r.body.is_empty() {
                let _ = write!(out, "\n{}", r.body);
                if r.truncated {
                    let _ = write!(out, "\n… {} bytes in all", r.size);
                }
                out.push('\n');
            }
        }
        if let Some(note) = &self.note {
            let _ = write!(out, "\n{note}\n");
        }
        out.trim_end().to_string()
    }
}
