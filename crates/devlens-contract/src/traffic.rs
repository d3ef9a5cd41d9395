//! Live traffic against the contract: which captured requests are calls of this API, which
//! operation each one is, and how each request and answer differs from what the spec promises.
//!
//! The traffic comes from anywhere that records HTTP exchanges — the browser's network log or
//! a HAR file ([`crate::har`]) — as plain [`Exchange`]s, so both give the same findings.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use crate::findings::{Finding, FindingKind, Side, merge, validate};
use crate::{Contract, ParamContract, dialect_of, is_json_media, media_base, pick_media};
use devlens_openapi::ApiSpec;
use devlens_openapi::documents::{percent_decode, template_match};

/// One recorded HTTP exchange.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exchange {
    /// Where it came from (`#12` in the browser's log, `entry 3` of a HAR file).
    pub source: String,
    pub method: String,
    pub url: String,
    /// Document, Fetch, XHR, Script, … when the recorder knows it.
    pub resource_type: Option<String>,
    pub request_content_type: Option<String>,
    pub request_body: Option<Body>,
    /// None: no answer (a network error, still pending).
    pub status: Option<u16>,
    pub response_content_type: Option<String>,
    pub response_body: Option<Body>,
}

/// A recorded body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Body {
    pub text: String,
    /// Cut by the recorder: not checked, since a cut JSON document never parses.
    pub truncated: bool,
}

/// Where the API lives, when the spec's servers do not say it (or say production while the
/// page talks to a local server).
#[derive(Debug, Clone, Default)]
pub struct TrafficOptions {
    /// Base URLs of the API (`http://127.0.0.1:8080/api`); when given, they replace the spec's
    /// servers.
    pub base_urls: Vec<String>,
    /// The page the traffic was recorded on: relative servers (`/api`) are on its origin.
    pub page_url: Option<String>,
}

/// The calls of one operation and what they broke.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperationTraffic {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    pub method: String,
    pub path: String,
    pub calls: usize,
    /// Statuses seen, sorted.
    pub statuses: Vec<u16>,
    pub findings: Vec<Finding>,
    /// Recorder ids of the calls (`#12`), at most 10.
    pub examples: Vec<String>,
}

/// Calls of the API's base that no operation describes.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndocumentedCall {
    pub method: String,
    /// The concrete path, after the API's base.
    pub path: String,
    pub calls: usize,
    /// Statuses seen.
    pub statuses: Vec<u16>,
    /// Methods the spec documents on this path, when the path is known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documented_methods: Vec<String>,
    pub examples: Vec<String>,
}

/// The whole check.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrafficReport {
    /// `title version` of the spec.
    pub api: String,
    /// The bases requests were matched under (`http://127.0.0.1:8080/api`, `/v1` on the page's
    /// origin).
    pub bases: Vec<String>,
    /// Calls matched to an operation.
    pub checked: usize,
    /// Findings over all operations (each counted once however many calls showed it).
    pub findings: usize,
    /// Operations called, those with findings first.
    pub operations: Vec<OperationTraffic>,
    pub undocumented: Vec<UndocumentedCall>,
    /// Requests that are not calls of this API (other hosts, pages, scripts, images).
    pub other_requests: usize,
    /// API calls without an answer (network errors, pending).
    pub unanswered: usize,
    /// Bodies not checked because the recorder cut them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unchecked_bodies: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// At most this many operations, undocumented paths and example ids are listed.
const MAX_OPERATIONS: usize = 100;
const MAX_UNDOCUMENTED: usize = 50;
const MAX_EXAMPLES: usize = 10;
/// Distinct findings kept per operation.
const MAX_FINDINGS_PER_OPERATION: usize = 40;

/// Where the API's calls go: an origin (or the page's), and a path prefix.
#[derive(Debug, Clone, PartialEq)]
struct ApiBase {
    origin: Option<String>,
    prefix: String,
}

impl ApiBase {
    fn parse(base: &str) -> Option<ApiBase> {
        let base = base.trim();
        if base.starts_with('/') || base.is_empty() {
            return Some(ApiBase {
                origin: None,
                prefix: base.trim_end_matches('/').to_string(),
            });
        }
        let url = Url::parse(base).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        Some(ApiBase {
            origin: Some(url.origin().ascii_serialization()),
            prefix: url.path().trim_end_matches('/').to_string(),
        })
    }

    fn label(&self) -> String {
        match &self.origin {
            Some(o) => format!("{o}{}", self.prefix),
            None => format!(
                "{} on the page's origin",
                if self.prefix.is_empty() {
                    "/"
                } else {
                    &self.prefix
                }
            ),
        }
    }

    /// The path after this base, when `url` is under it.
    fn rest_of(&self, url: &Url, page_origin: Option<&str>) -> Option<String> {
        let origin = url.origin().ascii_serialization();
        let origin_ok = match &self.origin {
            Some(o) => *o == origin,
            None => page_origin.is_none_or(|p| p == origin),
        };
        if !origin_ok {
            return None;
        }
        let path = url.path();
        let rest = path.strip_prefix(self.prefix.as_str())?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        Some(if rest.is_empty() {
            "/".into()
        } else {
            rest.to_string()
        })
    }
}

fn api_bases(spec: &ApiSpec, options: &TrafficOptions, page_origin: Option<&str>) -> Vec<ApiBase> {
    let given: Vec<String> = if options.base_urls.is_empty() {
        spec.server_urls()
    } else {
        options.base_urls.clone()
    };
    let mut bases: Vec<ApiBase> = Vec::new();
    for b in &given {
        let Some(base) = ApiBase::parse(b) else {
            continue;
        };
        // A spec naming its production host still describes the paths a local build of
        // the same API serves on the page's origin.
        let relative =
            options.base_urls.is_empty() && base.origin.is_some() && page_origin.is_some();
        let local = ApiBase {
            origin: None,
            prefix: base.prefix.clone(),
        };
        if !bases.contains(&base) {
            bases.push(base);
        }
        if relative && !bases.contains(&local) {
            bases.push(local);
        }
    }
    if bases.is_empty() {
        bases.push(ApiBase {
            origin: None,
            prefix: String::new(),
        });
    }
    // Longest prefix first, so `/api/v2` wins over `/api`.
    bases.sort_by_key(|b| std::cmp::Reverse(b.prefix.len()));
    bases
}

/// Checks recorded traffic against this spec.
pub fn check_traffic(
    spec: &ApiSpec,
    exchanges: &[Exchange],
    options: &TrafficOptions,
) -> TrafficReport {
    let page_origin = options
        .page_url
        .as_deref()
        .and_then(|u| Url::parse(u).ok())
        .map(|u| u.origin().ascii_serialization())
        .filter(|o| o != "null");
    let bases = api_bases(spec, options, page_origin.as_deref());
    let dialect = dialect_of(&spec.spec_version);
    let mut contracts: HashMap<usize, Contract> = HashMap::new();
    let mut operations: Vec<(usize, OperationTraffic)> = Vec::new();
    let mut undocumented: Vec<UndocumentedCall> = Vec::new();
    let mut report = TrafficReport {
        api: format!("{} {}", spec.title, spec.version)
            .trim()
            .to_string(),
        bases: bases.iter().map(ApiBase::label).collect(),
        checked: 0,
        findings: 0,
        operations: Vec::new(),
        undocumented: Vec::new(),
        other_requests: 0,
        unanswered: 0,
        unchecked_bodies: 0,
    };
    for exchange in exchanges {
        let Ok(url) = Url::parse(&exchange.url) else {
            report.other_requests += 1;
            continue;
        };
        let rest = bases
            .iter()
            .find_map(|b| b.rest_of(&url, page_origin.as_deref()));
        let Some(rest) = rest.filter(|_| is_api_call(exchange)) else {
            report.other_requests += 1;
            continue;
        };
        let method = exchange.method.to_ascii_uppercase();
        let (matched, methods_on_path) = route(spec, &method, &rest);
        let Some(op_index) = matched else {
            let entry = match undocumented
                .iter_mut()
                .find(|u| u.method == method && u.path == rest)
            {
                Some(e) => e,
                None => {
                    undocumented.push(UndocumentedCall {
                        method: method.clone(),
                        path: rest.clone(),
                        calls: 0,
                        statuses: Vec::new(),
                        documented_methods: methods_on_path,
                        examples: Vec::new(),
                    });
                    let last = undocumented.len() - 1;
                    &mut undocumented[last]
                }
            };
            entry.calls += 1;
            push_status(&mut entry.statuses, exchange.status);
            if entry.examples.len() < MAX_EXAMPLES {
                entry.examples.push(exchange.source.clone());
            }
            continue;
        };
        let Some(op) = spec.operations().get(op_index) else {
            continue;
        };
        let contract = contracts
            .entry(op_index)
            .or_insert_with(|| Contract::build(&spec.documents().view(), op, dialect));
        let slot = match operations.iter().position(|(i, _)| *i == op_index) {
            Some(p) => p,
            None => {
                operations.push((
                    op_index,
                    OperationTraffic {
                        operation_id: op.operation_id.clone(),
                        method: op.method.clone(),
                        path: op.path.clone(),
                        calls: 0,
                        statuses: Vec::new(),
                        findings: Vec::new(),
                        examples: Vec::new(),
                    },
                ));
                operations.len() - 1
            }
        };
        let traffic = &mut operations[slot].1;
        traffic.calls += 1;
        report.checked += 1;
        if traffic.examples.len() < MAX_EXAMPLES {
            traffic.examples.push(exchange.source.clone());
        }
        if exchange.status.is_none() {
            report.unanswered += 1;
        }
        push_status(&mut traffic.statuses, exchange.status);
        let mut found = check_request(
            contract,
            &url,
            &rest,
            exchange,
            &mut report.unchecked_bodies,
        );
        found.extend(check_response(
            contract,
            exchange,
            &mut report.unchecked_bodies,
        ));
        for f in found {
            if traffic.findings.len() < MAX_FINDINGS_PER_OPERATION
                || traffic.findings.iter().any(|e| e.same_as(&f))
            {
                merge(&mut traffic.findings, f);
            }
        }
    }
    let mut operations: Vec<OperationTraffic> = operations.into_iter().map(|(_, t)| t).collect();
    // Operations with findings first; otherwise in the order they were first called.
    operations.sort_by_key(|o| o.findings.is_empty());
    report.findings = operations.iter().map(|o| o.findings.len()).sum::<usize>();
    operations.truncate(MAX_OPERATIONS);
    undocumented.truncate(MAX_UNDOCUMENTED);
    report.operations = operations;
    report.undocumented = undocumented;
    report
}

/// The operation a method and concrete path are (the most literal template wins), and the
/// methods documented on the path when none has this method.
fn route(spec: &ApiSpec, method: &str, path: &str) -> (Option<usize>, Vec<String>) {
    let mut best: Option<(usize, usize)> = None;
    let mut methods: Vec<String> = Vec::new();
    for (i, op) in spec.operations().iter().enumerate() {
        let Some(literal) = template_match(&op.path, path) else {
            continue;
        };
        if op.method.eq_ignore_ascii_case(method) {
            if best.is_none_or(|(_, l)| literal > l) {
                best = Some((i, literal));
            }
        } else if !methods.contains(&op.method) {
            methods.push(op.method.clone());
        }
    }
    (best.map(|(i, _)| i), methods)
}

/// Calls, not page loads: fetch/XHR, or anything recorded without a type whose answer is not
/// a page or a static asset. CORS preflights are the browser's, not the page's.
fn is_api_call(exchange: &Exchange) -> bool {
    let media = exchange
        .response_content_type
        .as_deref()
        .map(media_base)
        .unwrap_or_default();
    let asset = media.starts_with("text/html")
        || media.starts_with("text/css")
        || media.contains("javascript")
        || media.starts_with("image/")
        || media.starts_with("font/");
    match exchange
        .resource_type
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("fetch" | "xhr" | "eventsource") => true,
        Some("other" | "ping") | None => !asset,
        Some("document") => is_json_media(&media),
        _ => false,
    }
}

fn push_status(statuses: &mut Vec<u16>, status: Option<u16>) {
    if let Some(s) = status
        && !statuses.contains(&s)
    {
        statuses.push(s);
        statuses.sort_unstable();
    }
}

fn check_request(
    contract: &Contract,
    url: &Url,
    rest: &str,
    exchange: &Exchange,
    unchecked: &mut usize,
) -> Vec<Finding> {
    let mut out = Vec::new();
    // Path parameters: whole segments of the template.
    let template: Vec<&str> = contract
        .operation
        .path
        .trim_end_matches('/')
        .split('/')
        .collect();
    let concrete: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    for (t, c) in template.iter().zip(&concrete) {
        let Some(name) = t.strip_prefix('{').and_then(|n| n.strip_suffix('}')) else {
            continue;
        };
        if let Some(param) = contract
            .params
            .iter()
            .find(|p| p.location == "path" && p.name == name)
        {
            out.extend(check_param(param, &[percent_decode(c)]));
        }
    }
    // Query parameters.
    let mut query: Vec<(String, Vec<String>)> = Vec::new();
    for (k, v) in url.query_pairs() {
        match query.iter_mut().find(|(name, _)| *name == k) {
            Some((_, values)) => values.push(v.into_owned()),
            None => query.push((k.into_owned(), vec![v.into_owned()])),
        }
    }
    for param in contract.params.iter().filter(|p| p.location == "query") {
        match query
            .iter()
            .find(|(k, _)| *k == param.name || *k == format!("{}[]", param.name))
        {
            Some((_, values)) => out.extend(check_param(param, values)),
            None if param.required => out.push(
                Finding::new(
                    FindingKind::MissingRequired,
                    Side::Request,
                    "required query parameter",
                )
                .at_parameter("query", &param.name),
            ),
            None => {}
        }
    }
    let declared = |k: &str| {
        contract
            .params
            .iter()
            .any(|p| p.location == "query" && (p.name == k || format!("{}[]", p.name) == k))
    };
    // An object parameter with `style: form, explode: true` spreads its fields as query keys,
    // so undeclared keys are only reported when no query parameter is an object.
    let spreads = contract.params.iter().any(|p| {
        p.location == "query"
            && p.schema
                .as_ref()
                .is_some_and(|s| schema_type(s) == Some("object"))
    });
    if !spreads {
        for (k, values) in &query {
            if !declared(k) {
                let documented: Vec<&str> = contract
                    .params
                    .iter()
                    .filter(|p| p.location == "query")
                    .map(|p| p.name.as_str())
                    .collect();
                let expected = if documented.is_empty() {
                    "no query parameters".to_string()
                } else {
                    format!("one of {}", documented.join(", "))
                };
                out.push(
                    Finding::new(FindingKind::UnknownParameter, Side::Request, expected)
                        .at_parameter("query", k)
                        .seen(&Value::String(values.join(",")), Some(k)),
                );
            }
        }
    }
    // The body.
    match (&exchange.request_body, &contract.body) {
        (Some(body), Some(contract_body)) if !body.text.is_empty() => {
            let content_type = exchange
                .request_content_type
                .as_deref()
                .unwrap_or("application/json");
            out.extend(check_body(
                &contract_body.media,
                content_type,
                body,
                Side::Request,
                None,
                unchecked,
            ));
        }
        (None, Some(contract_body)) if contract_body.required => out.push(
            Finding::new(
                FindingKind::MissingRequired,
                Side::Request,
                "a request body",
            )
            .at_pointer(""),
        ),
        (Some(body), None)
            if !body.text.is_empty()
                && !matches!(
                    exchange.method.to_ascii_uppercase().as_str(),
                    "GET" | "HEAD"
                ) =>
        {
            out.push(
                Finding::new(
                    FindingKind::UndocumentedContentType,
                    Side::Request,
                    "no request body",
                )
                .at_pointer("")
                .seen(
                    &Value::String(exchange.request_content_type.clone().unwrap_or_default()),
                    None,
                ),
            );
        }
        _ => {}
    }
    out
}

pub(crate) fn check_response(
    contract: &Contract,
    exchange: &Exchange,
    unchecked: &mut usize,
) -> Vec<Finding> {
    let Some(status) = exchange.status else {
        return Vec::new();
    };
    let Some(response) = contract.response(status) else {
        let documented = contract.statuses();
        let expected = if documented.is_empty() {
            "no responses documented".to_string()
        } else {
            format!("one of {}", documented.join(", "))
        };
        return vec![
            Finding::new(FindingKind::UndocumentedStatus, Side::Response, expected)
                .with_status(Some(status))
                .seen(&Value::from(status), None),
        ];
    };
    let Some(body) = exchange
        .response_body
        .as_ref()
        .filter(|b| !b.text.trim().is_empty())
    else {
        return Vec::new();
    };
    if response.media.is_empty() || status == 204 || status == 304 {
        return Vec::new();
    }
    let content_type = exchange.response_content_type.as_deref().unwrap_or("");
    check_body(
        &response.media,
        content_type,
        body,
        Side::Response,
        Some(status),
        unchecked,
    )
}

fn check_body(
    media: &[crate::MediaContract],
    content_type: &str,
    body: &crate::traffic::Body,
    side: Side,
    status: Option<u16>,
    unchecked: &mut usize,
) -> Vec<Finding> {
    let Some(contract) = pick_media(media, content_type) else {
        let documented: Vec<&str> = media.iter().map(|m| m.media_type.as_str()).collect();
        return vec![
            Finding::new(
                FindingKind::UndocumentedContentType,
                side,
                format!("one of {}", documented.join(", ")),
            )
            .with_status(status)
            .at_pointer("")
            .seen(&Value::String(media_base(content_type)), None),
        ];
    };
    let Some(validator) = &contract.validator else {
        return Vec::new();
    };
    if !is_json_media(&contract.media_type) && !is_json_media(content_type) {
        return Vec::new();
    }
    if body.truncated {
        *unchecked += 1;
        return Vec::new();
    }
    match serde_json::from_str::<Value>(&body.text) {
        Ok(value) => validate(validator, &value, side, status),
        Err(e) => vec![
            Finding::new(FindingKind::InvalidJson, side, format!("JSON ({e})"))
                .with_status(status)
                .at_pointer("")
                .seen(&Value::String(body.text.chars().take(60).collect()), None),
        ],
    }
}

/// A parameter's values, read as its schema's type, checked.
fn check_param(param: &ParamContract, values: &[String]) -> Vec<Finding> {
    let Some(validator) = &param.validator else {
        return Vec::new();
    };
    let schema = param.schema.as_ref().unwrap_or(&Value::Null);
    let value = coerce(values, schema);
    validate(validator, &value, Side::Request, None)
        .into_iter()
        .map(|mut f| {
            f.parameter = Some(format!("{}.{}", param.location, param.name));
            if f.pointer.as_deref() == Some("") {
                f.pointer = None;
            }
            f
        })
        .collect()
}

/// The declared type of an exported schema (looking through a nullable wrapper and `allOf`).
fn schema_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => return Some(t),
        Some(Value::Array(types)) => {
            return types
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null");
        }
        _ => {}
    }
    ["anyOf", "allOf", "oneOf"].iter().find_map(|k| {
        schema
            .get(*k)
            .and_then(Value::as_array)
            .and_then(|alts| alts.iter().find_map(schema_type))
    })
}

/// Strings from a URL read as the schema's type: `"3"` is 3 for an integer, `"true"` true for
/// a boolean; a value that does not read stays a string, so the check reports its type.
pub(crate) fn coerce(values: &[String], schema: &Value) -> Value {
    let one = |s: &str, t: Option<&str>| -> Value {
        match t {
            Some("integer") => s
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| Value::String(s.into())),
            Some("number") => s
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                .unwrap_or_else(|| Value::String(s.into())),
            Some("boolean") => match s {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => Value::String(s.into()),
            },
            _ => Value::String(s.into()),
        }
    };
    match schema_type(schema) {
        Some("array") => {
            let item_type = schema.get("items").and_then(schema_type);
            let items = values
                .iter()
                .flat_map(|v| v.split(','))
                .map(|v| one(v, item_type))
                .collect();
            Value::Array(items)
        }
        t => one(values.first().map(String::as_str).unwrap_or(""), t),
    }
}

impl devlens_core::Report for TrafficReport {
    fn to_text(&self) -> String {
        let mut out = format!(
            "Checked {} call{} against {} ({} operation{}): {} finding{}, {} undocumented endpoint{}",
            self.checked,
            plural(self.checked),
            self.api,
            self.operations.len(),
            plural(self.operations.len()),
            self.findings,
            plural(self.findings),
            self.undocumented.len(),
            plural(self.undocumented.len()),
        );
        out.push_str(&format!("\nAPI base: {}", self.bases.join(", ")));
        for op in &self.operations {
            let statuses: Vec<String> = op.statuses.iter().map(u16::to_string).collect();
            let _ = write!(
                out,
                "\n\n{} {} {} — {} call{} ({})",
                op.operation_id.as_deref().unwrap_or("(no operationId)"),
                op.method,
                op.path,
                op.calls,
                plural(op.calls),
                if statuses.is_empty() {
                    "no answer".to_string()
                } else {
                    statuses.join(", ")
                }
            );
            if op.findings.is_empty() {
                out.push_str(": as documented");
            }
            for f in &op.findings {
                let _ = write!(out, "\n  {}", f.to_line());
            }
        }
        if !self.undocumented.is_empty() {
            out.push_str("\n\nUndocumented:");
            for u in &self.undocumented {
                let statuses: Vec<String> = u.statuses.iter().map(u16::to_string).collect();
                let _ = write!(
                    out,
                    "\n  {} {} — {} call{}",
                    u.method,
                    u.path,
                    u.calls,
                    plural(u.calls)
                );
                if !statuses.is_empty() {
                    let _ = write!(out, " ({})", statuses.join(", "));
                }
                if u.documented_methods.is_empty() {
                    out.push_str("; no operation has this path");
                } else {
                    let _ = write!(
                        out,
                        "; the path is documented for {} only",
                        u.documented_methods.join(", ")
                    );
                }
            }
        }
        let mut tail = Vec::new();
        if self.other_requests > 0 {
            tail.push(format!(
                "{} other request{} (not this API) left out",
                self.other_requests,
                plural(self.other_requests)
            ));
        }
        if self.unanswered > 0 {
            tail.push(format!(
                "{} call{} without an answer",
                self.unanswered,
                plural(self.unanswered)
            ));
        }
        if self.unchecked_bodies > 0 {
            tail.push(format!(
                "{} bod{} too large to check",
                self.unchecked_bodies,
                if self.unchecked_bodies == 1 {
                    "y"
                } else {
                    "ies"
                }
            ));
        }
        if self.checked == 0 && self.undocumented.is_empty() {
            tail.push(
                "no call matched the API's base: set the project's base_url (or pass baseUrl) to where the page sends its API calls"
                    .to_string(),
            );
        }
        if !tail.is_empty() {
            let _ = write!(out, "\n\n{}", tail.join("; "));
        }
        out
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
