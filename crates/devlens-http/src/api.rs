//! REST endpoints under `/api/`: the same operations as the MCP tools and the CLI.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::State,
    routing::{get, post},
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use axum::http::HeaderMap;
use axum::response::Response;

use devlens_app::{
    App,
    api::{SearchInput, endpoint_ref, search_request, spec_selector},
    browser::ConnectionArgs,
    contract::{self, CallEndpoint, CheckTraffic, TrafficSource},
};

use crate::browser::answer;
use devlens_openapi::explorer::SpecSelector;

use crate::failure::{Body, Failure, JsonResult, Params};

type Shared = State<Arc<App>>;

pub(crate) fn routes(app: Arc<App>) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/projects", get(projects))
        .route("/tags", get(tags))
        .route("/endpoints", get(endpoints))
        .route("/endpoint", get(endpoint))
        .route("/search", get(search_get).post(search_post))
        .route("/embed/reindex", post(embed_reindex))
        .route("/embed/status", get(embed_status))
        .route("/embed/search", post(embed_search))
        .route("/check-traffic", post(check_traffic))
        .route("/call", post(call))
        .route("/code-sample", get(code_sample))
        .merge(crate::docs::routes())
        .merge(crate::kb::routes())
        .merge(crate::workspace::routes())
        .merge(crate::browser::routes())
        .with_state(app)
}

/// `?project=NAME` or `?spec=PATH_OR_URL`; neither means the active project.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Target {
    #[serde(alias = "projectName")]
    project: Option<String>,
    spec: Option<String>,
}

impl Target {
    fn selector(&self) -> SpecSelector {
        spec_selector(self.project.clone(), self.spec.clone())
    }
}

async fn health() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION") }))
}

#[derive(Serialize)]
struct ProjectList {
    projects: Vec<devlens_core::Project>,
    active: Option<String>,
}

async fn projects(State(app): Shared) -> JsonResult<ProjectList> {
    let registry = app.api().projects()?;
    Ok(Json(ProjectList {
        projects: registry.projects().to_vec(),
        active: registry.active_name(),
    }))
}

async fn tags(
    State(app): Shared,
    Params(target): Params<Target>,
) -> JsonResult<devlens_openapi::explorer::TagList> {
    Ok(Json(app.api().tags(&target.selector()).await?))
}

#[derive(Debug, Deserialize)]
struct EndpointsQuery {
    tag: Option<String>,
    offset: Option<usize>,
    limit: Option<usize>,
    #[serde(flatten)]
    target: Target,
}

async fn endpoints(
    State(app): Shared,
    Params(query): Params<EndpointsQuery>,
) -> JsonResult<devlens_openapi::explorer::EndpointPage> {
    let tag = query
        .tag
        .ok_or_else(|| Failure::bad_request("`tag` is required: list tag names at /api/tags"))?;
    let page = app
        .api()
        .endpoints(
            &query.target.selector(),
            &tag,
            query.offset.unwrap_or(0),
            query.limit,
        )
        .await?;
    Ok(Json(page))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EndpointQuery {
    operation_id: Option<String>,
    method: Option<String>,
    path: Option<String>,
    #[serde(flatten)]
    target: Target,
}

async fn endpoint(
    State(app): Shared,
    Params(query): Params<EndpointQuery>,
) -> JsonResult<devlens_openapi::EndpointDetails> {
    let endpoint = endpoint_ref(query.operation_id, query.method, query.path)?;
    Ok(Json(
        app.api()
            .details(&query.target.selector(), &endpoint)
            .await?,
    ))
}

/// `search_api_documentation`'s arguments, as query parameters or a JSON body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearchBody {
    query: Option<String>,
    tag: Option<String>,
    method: Option<String>,
    limit: Option<i64>,
    mode: Option<String>,
    details: Option<bool>,
    #[serde(flatten)]
    target: Target,
}

async fn run_search(
    app: &App,
    body: SearchBody,
) -> JsonResult<devlens_openapi::search::SearchResponse> {
    let request = search_request(SearchInput {
        query: body.query,
        tag: body.tag,
        method: body.method,
        limit: body.limit,
        mode: body.mode,
        details: body.details.unwrap_or(false),
    })?;
    Ok(Json(
        app.api().search(&body.target.selector(), &request).await?,
    ))
}

async fn search_get(
    State(app): Shared,
    Params(body): Params<SearchBody>,
) -> JsonResult<devlens_openapi::search::SearchResponse> {
    run_search(&app, body).await
}

async fn search_post(
    State(app): Shared,
    Body(body): Body<SearchBody>,
) -> JsonResult<devlens_openapi::search::SearchResponse> {
    run_search(&app, body).await
}

#[derive(Debug, Deserialize)]
struct ReindexQuery {
    #[serde(default)]
    force: bool,
    #[serde(flatten)]
    target: Target,
}

/// `POST /api/embed/reindex?project=NAME[&force=true]`: builds the project's semantic index
/// (what the dev panel's Re-index button calls).
async fn embed_reindex(
    State(app): Shared,
    Params(query): Params<ReindexQuery>,
) -> JsonResult<devlens_openapi::explorer::IndexReport> {
    let report = app
        .api()
        .build_index(&query.target.selector(), query.force, &|done, total| {
            tracing::debug!(done, total, "embedding endpoints");
        })
        .await?;
    Ok(Json(report))
}

/// `GET /api/embed/status?project=NAME`.
async fn embed_status(
    State(app): Shared,
    Params(target): Params<Target>,
) -> JsonResult<devlens_openapi::explorer::IndexStatus> {
    Ok(Json(app.api().index_status(&target.selector()).await?))
}

/// `POST /api/embed/search`: semantic search; `mode` may ask for another.
async fn embed_search(
    State(app): Shared,
    Body(mut body): Body<SearchBody>,
) -> JsonResult<devlens_openapi::search::SearchResponse> {
    body.mode.get_or_insert_with(|| "semantic".into());
    run_search(&app, body).await
}

/// `check_api_traffic`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CheckTrafficBody {
    har: Option<String>,
    base_url: Option<String>,
    #[serde(default)]
    include_previous_pages: bool,
    connection_id: Option<String>,
    #[serde(flatten)]
    target: Target,
}

/// `POST /api/check-traffic`: the active tab's API calls (or a workspace HAR file) checked
/// against the project's spec.
async fn check_traffic(
    State(app): Shared,
    headers: HeaderMap,
    Body(body): Body<CheckTrafficBody>,
) -> Result<Response, Failure> {
    let source = match body.har.filter(|h| !h.trim().is_empty()) {
        Some(path) => TrafficSource::HarPath(path),
        None => TrafficSource::Browser {
            connection: ConnectionArgs {
                connection_id: body.connection_id,
            },
            include_previous_pages: body.include_previous_pages,
        },
    };
    let request = CheckTraffic {
        selector: body.target.selector(),
        base_url: body.base_url,
        source,
    };
    let report = contract::check_traffic(&app, request).await?;
    Ok(answer(&report)?.respond(&headers))
}

/// `call_endpoint`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallBody {
    operation_id: Option<String>,
    method: Option<String>,
    path: Option<String>,
    #[serde(default)]
    params: serde_json::Map<String, serde_json::Value>,
    body: Option<serde_json::Value>,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    content_type: Option<String>,
    base_url: Option<String>,
    execute: Option<bool>,
    #[serde(flatten)]
    target: Target,
}

/// `POST /api/call`: an endpoint called by operationId (a dry run for unsafe methods unless
/// `execute` is true).
async fn call(
    State(app): Shared,
    headers: HeaderMap,
    Body(body): Body<CallBody>,
) -> Result<Response, Failure> {
    let endpoint = endpoint_ref(body.operation_id, body.method, body.path)?;
    let request = CallEndpoint {
        selector: body.target.selector(),
        endpoint: Some(endpoint),
        params: body.params,
        headers: body.headers.into_iter().collect(),
        body: body.body,
        content_type: body.content_type,
        base_url: body.base_url,
        execute: body.execute,
    };
    let outcome = contract::call_endpoint(&app, request).await?;
    Ok(answer(&outcome)?.respond(&headers))
}

/// `GET /api/code-sample?operationId=…`: a typed fetch function and a curl line.
async fn code_sample(
    State(app): Shared,
    headers: HeaderMap,
    Params(query): Params<EndpointQuery>,
) -> Result<Response, Failure> {
    let endpoint = endpoint_ref(query.operation_id, query.method, query.path)?;
    let sample = contract::code_sample(&app, &query.target.selector(), &endpoint).await?;
    Ok(answer(&sample)?.respond(&headers))
}
