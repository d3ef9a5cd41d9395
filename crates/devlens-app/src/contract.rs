//! The API contract in use: the page's live traffic (or a HAR file) checked against the active
//! project's spec, calls built from an operationId and sent with the project's base URL and
//! credentials, and code samples.
//!
//! Where the API runs and how it authenticates come from the project (`base_url`, `[auth]` in
//! devlens.toml, `baseUrl` in a projects file) or from environment variables named after it
//! (`DEVLENS_<PROJECT>_BASE_URL`, `_TOKEN`, `_API_KEY`, `_USERNAME` + `_PASSWORD`); secrets
//! only ever from the environment.
//!
//! Credentials go only to the project's own hosts: a call carries them only when it goes to the
//! origin of the project's configured base URL or of one of the spec's servers; a caller's
//! `baseUrl` elsewhere is sent without them (and says so), and a project that an untrusted
//! `./devlens.toml` declares gets none. Every call passes the outbound guard, which lets it
//! reach a private host only when that host is the project's (or `[network] allow` lists it).

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use devlens_browser::{BodyOptions, NetworkQuery};
use devlens_contract::{
    call::{
        Auth, CallArgs, CallTarget, KeyLocation, Secret, api_key_scheme, is_safe_method,
        prepare_call, send_call,
    },
    har::read_har,
    sample,
    traffic::{self, Body, Exchange, TrafficOptions},
};
use devlens_core::{Project, ProjectAuth};
use devlens_openapi::{ApiSpec, EndpointRef, explorer::SpecSelector};
use devlens_workspace::Access;

pub use devlens_contract::{call::CallOutcome, sample::CodeSample, traffic::TrafficReport};

use crate::api::{SpecArgs, endpoint_ref};
use crate::browser::ConnectionArgs;
use crate::{App, AppError};

/// Requests read from the browser's log for one check.
const MAX_CHECKED_REQUESTS: usize = 500;
/// Body bytes read per request (the network log's own bound).
const BODY_BYTES: usize = 256 * 1024;

/// Where the traffic to check comes from.
#[derive(Debug, Clone)]
pub enum TrafficSource {
    /// The network log of a browser tab.
    Browser {
        connection: ConnectionArgs,
        include_previous_pages: bool,
    },
    /// A HAR file named by a tool: confined to the workspace like every path a tool reads.
    HarPath(String),
    /// A HAR document read by the caller (the CLI, from a path its user typed).
    HarBytes { bytes: Vec<u8>, name: String },
}

/// What a traffic check asks for.
#[derive(Debug, Clone)]
pub struct CheckTraffic {
    pub selector: SpecSelector,
    /// Where the API runs, overriding the project's and the spec's.
    pub base_url: Option<String>,
    pub source: TrafficSource,
}

/// `check_api_traffic`, `POST /api/check-traffic`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckTrafficArgs {
    /// A HAR file (workspace-relative) to check instead of the tab's live traffic.
    #[serde(default)]
    pub har: Option<String>,
    /// Where the API runs (default: the project's base_url, else the spec's servers, also on the
    /// page's origin).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Also requests of the tab's earlier pages.
    #[serde(default)]
    pub include_previous_pages: Option<bool>,
    // Omit for the active connection (said once: chrome_list_connections, the instructions).
    #[serde(default)]
    pub connection_id: Option<String>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

impl CheckTrafficArgs {
    /// The check of the spec `selector` names (resolved by the caller from `target`): a HAR file
    /// when one is named, else the browser tab's traffic.
    pub fn into_request(self, selector: SpecSelector) -> CheckTraffic {
        let source = match self
            .har
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
        {
            Some(path) => TrafficSource::HarPath(path),
            None => TrafficSource::Browser {
                connection: ConnectionArgs {
                    connection_id: self.connection_id,
                },
                include_previous_pages: self.include_previous_pages.unwrap_or(false),
            },
        };
        CheckTraffic {
            selector,
            base_url: self.base_url,
            source,
        }
    }
}

/// The project a selector names, when it names one (not a bare spec location).
fn project_of(app: &App, selector: &SpecSelector) -> Result<Option<Project>, AppError> {
    if selector.spec.is_some() {
        return Ok(None);
    }
    let registry = app.api().projects()?;
    Ok(Some(registry.resolve(selector.project.as_deref())?.clone()))
}

fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The API's base URL: given > the project's > `DEVLENS_<PROJECT>_BASE_URL`.
fn base_url(given: Option<String>, project: Option<&Project>) -> Option<String> {
    given
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .or_else(|| project.and_then(|p| p.base_url.clone()))
        .or_else(|| project.and_then(|p| env(&format!("{}BASE_URL", p.env_prefix()))))
}

/// Checks recorded traffic against the selected spec.
pub async fn check_traffic(app: &App, request: CheckTraffic) -> Result<TrafficReport, AppError> {
    let project = project_of(app, &request.selector)?;
    let spec = app.api().open(&request.selector).await?;
    let (exchanges, page_url) = match request.source {
        TrafficSource::Browser {
            connection,
            include_previous_pages,
        } => browser_exchanges(app, &connection, include_previous_pages).await?,
        TrafficSource::HarPath(path) => {
            let resolved = app.workspace()?.resolve(&path, Access::Read)?;
            let bytes = tokio::fs::read(&resolved.path).await.map_err(|e| {
                AppError::invalid(format!(
                    "cannot read the HAR file `{}`: {e}. Check the path (relative to the workspace).",
                    resolved.display
                ))
            })?;
            let log = read_har(&bytes, &resolved.display)?;
            (log.exchanges, log.page_url)
        }
        TrafficSource::HarBytes { bytes, name } => {
            let log = read_har(&bytes, &name)?;
            (log.exchanges, log.page_url)
        }
    };
    let options = TrafficOptions {
        base_urls: base_url(request.base_url, project.as_ref())
            .into_iter()
            .collect(),
        page_url,
    };
    Ok(traffic::check_traffic(&spec, &exchanges, &options))
}

/// The tab's requests with their bodies, as exchanges, and the page's URL.
async fn browser_exchanges(
    app: &App,
    connection: &ConnectionArgs,
    include_previous_pages: bool,
) -> Result<(Vec<Exchange>, Option<String>), AppError> {
    let tab = crate::browser::tab(app, connection).await?;
    let page = tab.network_requests(&NetworkQuery {
        include_previous_pages,
        limit: Some(MAX_CHECKED_REQUESTS),
        ..NetworkQuery::default()
    });
    let options = BodyOptions {
        max_body_bytes: BODY_BYTES,
        save_response_body_to: None,
        headers: true,
    };
    let mut exchanges = Vec::with_capacity(page.requests.len());
    for entry in &page.requests {
        let id = entry.id.to_string();
        let details = match tab.network_request(&id, &options).await {
            Ok(d) => d,
            // A request that left the log meanwhile is simply not checked.
            Err(devlens_browser::BrowserError::UnknownRequest { .. }) => continue,
            Err(e) => return Err(e.into()),
        };
        let header = |headers: &[(String, String)], name: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let body = |b: Option<devlens_browser::MessageBody>| {
            b.filter(|b| !b.binary).and_then(|b| {
                b.text.map(|text| Body {
                    text,
                    truncated: b.truncated,
                })
            })
        };
        exchanges.push(Exchange {
            source: format!("#{id}"),
            method: entry.method.clone(),
            url: entry.url.clone(),
            resource_type: Some(entry.resource_type.clone()),
            request_content_type: header(&details.request_headers, "content-type"),
            request_body: body(details.request_body),
            status: if entry.failure.is_some() {
                None
            } else {
                entry.status
            },
            response_content_type: header(&details.response_headers, "content-type")
                .or(details.mime_type.clone()),
            response_body: body(details.response_body),
        });
    }
    Ok((exchanges, Some(tab.url())))
}

/// What a call asks for.
#[derive(Debug, Clone, Default)]
pub struct CallEndpoint {
    pub selector: SpecSelector,
    pub endpoint: Option<EndpointRef>,
    /// Parameters by name; each goes where the operation declares it.
    pub params: Map<String, Value>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
    pub content_type: Option<String>,
    pub base_url: Option<String>,
    /// Send it: None sends safe methods (GET, HEAD, OPTIONS) and shows the others as a dry
    /// run; true sends any method; false never sends.
    pub execute: Option<bool>,
    /// The caller may only read (a read token): nothing is sent, whatever `execute` says.
    pub dry_run_only: bool,
}

/// `call_endpoint`, `POST /api/call`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallEndpointArgs {
    /// E.g. "createOrder"; or give method and path.
    #[serde(default)]
    pub operation_id: Option<String>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    /// Parameters by name (path, query, header alike), e.g. {"productId": 7, "limit": 10}.
    #[serde(default)]
    pub params: Option<Map<String, Value>>,
    /// The request body (JSON).
    #[serde(default)]
    pub body: Option<Value>,
    /// Extra request headers.
    #[serde(default)]
    pub headers: Option<BTreeMap<String, String>>,
    /// The body's content type, when the operation takes several. Left out of the tool's
    /// schema (the panel sets it; a model leaves it to the spec).
    #[serde(default)]
    #[schemars(skip)]
    pub content_type: Option<String>,
    /// Overrides the project's base URL.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Send a POST, PUT, PATCH or DELETE instead of a dry run.
    #[serde(default)]
    pub execute: Option<bool>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

impl CallEndpointArgs {
    /// The endpoint named (checked before the spec is looked for).
    pub fn endpoint(&self) -> Result<EndpointRef, AppError> {
        endpoint_ref(
            self.operation_id.clone(),
            self.method.clone(),
            self.path.clone(),
        )
    }

    /// The call of `endpoint` in the spec `selector` names (both resolved by the caller);
    /// `dry_run_only`: the caller may only read (a read token), so nothing is sent.
    pub fn into_request(
        self,
        selector: SpecSelector,
        endpoint: EndpointRef,
        dry_run_only: bool,
    ) -> CallEndpoint {
        CallEndpoint {
            selector,
            endpoint: Some(endpoint),
            params: self.params.unwrap_or_default(),
            headers: self.headers.unwrap_or_default().into_iter().collect(),
            body: self.body,
            content_type: self.content_type,
            base_url: self.base_url,
            execute: self.execute,
            dry_run_only,
        }
    }
}

/// The origin (`scheme://host:port`) of a URL, for comparing where a call goes.
fn origin_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.origin().ascii_serialization())
}

/// Checks the arguments against the operation, builds the request, and sends it when asked.
pub async fn call_endpoint(app: &App, request: CallEndpoint) -> Result<CallOutcome, AppError> {
    if request.dry_run_only && request.execute == Some(true) {
        return Err(AppError::new(
            devlens_core::ErrorKind::Forbidden,
            "`execute: true` sends the request to the API for real, and this token may only \
             read: leave `execute` out for a dry run (nothing is sent for a read token), or use \
             a write token (`devlens token create --scope write` on the server).",
        ));
    }
    let endpoint = request.endpoint.clone().ok_or_else(|| {
        AppError::invalid(
            "name the endpoint: `operationId`, or `method` and `path` (find it with search_api_documentation or `devlens api search`)",
        )
    })?;
    let project = project_of(app, &request.selector)?;
    let spec = app.api().open(&request.selector).await?;
    // The project's own hosts: its configured base URL and the spec's servers.
    let configured = base_url(None, project.as_ref());
    let own_hosts: Vec<String> = configured
        .iter()
        .cloned()
        .chain(spec.server_urls())
        .filter_map(|u: String| origin_of(&u))
        .collect();
    let base = base_url(request.base_url.clone(), project.as_ref());
    let mut notes: Vec<String> = Vec::new();
    let mut credentials = auth(project.as_ref(), &spec)?;
    if credentials.is_some() {
        let goes_to = base
            .clone()
            .or_else(|| spec.server_urls().into_iter().next())
            .and_then(|b| origin_of(&b));
        if project.as_ref().is_some_and(|p| !p.trusted) {
            credentials = None;
            notes.push(
                "sent without the project's credentials: the project comes from a devlens.toml \
                 that is not trusted (review it, then run `devlens trust` in its folder)"
                    .into(),
            );
        } else if !goes_to.as_ref().is_some_and(|o| own_hosts.contains(o)) {
            credentials = None;
            notes.push(format!(
                "sent without the project's credentials: {} is not one of the project's hosts \
                 ({}); credentials go only to its base_url and the spec's servers",
                goes_to.as_deref().unwrap_or("that base URL"),
                if own_hosts.is_empty() {
                    "none configured".to_string()
                } else {
                    own_hosts.join(", ")
                }
            ));
        }
    }
    let target = CallTarget {
        base_url: base,
        auth: credentials,
        base_url_env: project.as_ref().map_or_else(
            || "DEVLENS_<PROJECT>_BASE_URL".to_string(),
            |p| format!("{}BASE_URL", p.env_prefix()),
        ),
    };
    let args = CallArgs {
        params: request.params,
        headers: request.headers,
        body: request.body,
        content_type: request.content_type,
    };
    let prepared = prepare_call(&spec, &endpoint, &args, &target)?;
    let send = match request.execute {
        _ if request.dry_run_only => false,
        Some(asked) => asked,
        None => is_safe_method(&prepared.method),
    };
    if !send {
        let note = if request.dry_run_only {
            "dry run: this token may only read, so nothing is sent; a write token (`devlens \
             token create --scope write`) sends it"
                .to_string()
        } else if request.execute == Some(false) {
            "dry run, as asked".to_string()
        } else {
            format!(
                "dry run: {} changes data, so it is sent only when asked (execute: true, or --execute)",
                prepared.method
            )
        };
        return Ok(with_notes(prepared.dry_run(note), notes));
    }
    // The project's own hosts may be private (a backend on localhost:3000); nothing else
    // private is reached unless `[network] allow` lists it.
    let mut policy = app.config().outbound();
    for host in &own_hosts {
        policy.allow(host);
    }
    let outcome = send_call(&spec, &prepared, &policy).await?;
    Ok(with_notes(outcome, notes))
}

/// `outcome` with `notes` put before its own note.
fn with_notes(mut outcome: CallOutcome, mut notes: Vec<String>) -> CallOutcome {
    if notes.is_empty() {
        return outcome;
    }
    notes.extend(outcome.note.take());
    outcome.note = Some(notes.join("; "));
    outcome
}

/// The project's credentials: its `[auth]` with the variables it names, or the
/// `DEVLENS_<PROJECT>_…` variables that are set. A named variable that is not set is an error,
/// so a call does not go out unauthenticated by mistake.
fn auth(project: Option<&Project>, spec: &Arc<ApiSpec>) -> Result<Option<Auth>, AppError> {
    let Some(project) = project else {
        return Ok(None);
    };
    let prefix = project.env_prefix();
    let read = |var: &str| -> Result<Secret, AppError> {
        env(var).map(|v| Secret::from_env_value(v, var)).ok_or_else(|| {
            AppError::new(
                devlens_core::ErrorKind::Precondition,
                format!(
                    "project `{}` authenticates with the environment variable {var}, which is not set. Export it in the environment devlens runs in.",
                    project.name
                ),
            )
        })
    };
    let api_key = |name: Option<String>,
                   location: Option<String>,
                   secret: Secret|
     -> Result<Auth, AppError> {
        let from_spec = api_key_scheme(spec);
        let location = match location.as_deref() {
            None => from_spec.as_ref().map_or(KeyLocation::Header, |(_, l)| *l),
            Some("header") => KeyLocation::Header,
            Some("query") => KeyLocation::Query,
            Some("cookie") => KeyLocation::Cookie,
            Some(other) => {
                return Err(AppError::invalid(format!(
                    "project `{}`: auth `in = \"{other}\"` is not one of header, query, cookie",
                    project.name
                )));
            }
        };
        let name = name
            .or_else(|| from_spec.map(|(n, _)| n))
            .unwrap_or_else(|| "X-API-Key".to_string());
        Ok(Auth::ApiKey {
            name,
            location,
            key: secret,
        })
    };
    match &project.auth {
        Some(ProjectAuth {
            kind,
            token_env,
            name,
            location,
            username_env,
            password_env,
        }) => match kind.trim().to_ascii_lowercase().as_str() {
            "bearer" => Ok(Some(Auth::Bearer(read(
                token_env.as_deref().unwrap_or(&format!("{prefix}TOKEN")),
            )?))),
            "api-key" | "apikey" | "api_key" => {
                let secret = read(token_env.as_deref().unwrap_or(&format!("{prefix}API_KEY")))?;
                Ok(Some(api_key(name.clone(), location.clone(), secret)?))
            }
            "basic" => Ok(Some(Auth::Basic {
                username: read(
                    username_env
                        .as_deref()
                        .unwrap_or(&format!("{prefix}USERNAME")),
                )?,
                password: read(
                    password_env
                        .as_deref()
                        .unwrap_or(&format!("{prefix}PASSWORD")),
                )?,
            })),
            other => Err(AppError::invalid(format!(
                "project `{}`: auth type `{other}` is not one of bearer, api-key, basic",
                project.name
            ))),
        },
        None => {
            if env(&format!("{prefix}TOKEN")).is_some() {
                return Ok(Some(Auth::Bearer(read(&format!("{prefix}TOKEN"))?)));
            }
            if env(&format!("{prefix}API_KEY")).is_some() {
                let secret = read(&format!("{prefix}API_KEY"))?;
                return Ok(Some(api_key(None, None, secret)?));
            }
            if env(&format!("{prefix}USERNAME")).is_some()
                && env(&format!("{prefix}PASSWORD")).is_some()
            {
                return Ok(Some(Auth::Basic {
                    username: read(&format!("{prefix}USERNAME"))?,
                    password: read(&format!("{prefix}PASSWORD"))?,
                }));
            }
            Ok(None)
        }
    }
}

/// A typed `fetch` function and a curl line for an operation.
pub async fn code_sample(
    app: &App,
    selector: &SpecSelector,
    endpoint: &EndpointRef,
) -> Result<CodeSample, AppError> {
    let project = project_of(app, selector)?;
    let spec = app.api().open(selector).await?;
    let base = base_url(None, project.as_ref());
    Ok(sample::code_sample(&spec, endpoint, base.as_deref())?)
}
