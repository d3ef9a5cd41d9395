//! REST endpoints under `/api/`: the same operations as the MCP tools and the CLI.

use std::sync::Arc;

use axum::{
    Extension, Json, Router,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{delete, get, post},
};
use serde::Deserialize;
use serde_json::json;

use devlens_app::{
    App,
    api::{SearchInput, confined_spec_selector, endpoint_ref, search_request, spec_selector},
    browser::ConnectionArgs,
    contract::{self, CallEndpoint, CheckTraffic, TrafficSource},
    projects::{ProjectList, ReindexAll, ReindexEvent},
    tokens::Scope,
};
use devlens_openapi::explorer::SpecSelector;

use crate::browser::answer;
use crate::events;
use crate::failure::{Body, Failure, JsonResult, Params};

type Shared = State<Arc<App>>;

pub(crate) fn routes(app: Arc<App>) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/projects", get(projects).post(add_project))
        .route("/projects/{name}", delete(remove_project))
        .route("/projects/{name}/activate", post(activate_project))
        .route("/tags", get(tags))
        .route("/endpoints", get(endpoints))
        .route("/endpoint", get(endpoint))
        .route("/search", get(search_get).post(search_post))
        .route("/embed/reindex", post(embed_reindex))
        .route("/embed/reindex/stream", post(embed_reindex_stream))
        .route("/embed/reindex-all", post(embed_reindex_all))
        .route("/embed/reindex-all/stream", post(embed_reindex_all_stream))
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
    /// The spec named: a project, or a spec file inside the workspace — never a URL or another
    /// file (devlens_app::api::confined_spec_selector).
    fn selector(&self, app: &App) -> Result<SpecSelector, Failure> {
        if self.spec.as_deref().is_none_or(|s| s.trim().is_empty()) {
            return Ok(spec_selector(self.project.clone(), None));
        }
        let workspace = app.workspace()?;
        Ok(confined_spec_selector(
            self.project.clone(),
            self.spec.clone(),
            &workspace,
            true,
        )?)
    }
}

async fn health() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION") }))
}

async fn projects(State(app): Shared) -> JsonResult<ProjectList> {
    Ok(Json(devlens_app::projects::list(&app)?))
}

/// A project to add.
#[derive(Debug, Deserialize)]
struct NewProject {
    #[serde(default)]
    name: String,
    #[serde(default)]
    spec: String,
}

/// `POST /api/projects` with `{name, spec}`: added once the spec loads; 201 with the project.
async fn add_project(
    State(app): Shared,
    Body(body): Body<NewProject>,
) -> Result<(StatusCode, Json<devlens_core::Project>), Failure> {
    let project = devlens_app::projects::add_from_request(&app, &body.name, &body.spec).await?;
    Ok((StatusCode::CREATED, Json(project)))
}

/// `DELETE /api/projects/{name}`.
async fn remove_project(
    State(app): Shared,
    Path(name): Path<String>,
) -> JsonResult<serde_json::Value> {
    devlens_app::projects::remove(&app, &name)?;
    Ok(Json(json!({ "removed": name })))
}

/// `POST /api/projects/{name}/activate`.
async fn activate_project(State(app): Shared, Path(name): Path<String>) -> JsonResult<ProjectList> {
    devlens_app::projects::activate(&app, &name)?;
    Ok(Json(devlens_app::projects::list(&app)?))
}

async fn tags(
    State(app): Shared,
    Params(target): Params<Target>,
) -> JsonResult<devlens_openapi::explorer::TagList> {
    Ok(Json(app.api().tags(&target.selector(&app)?).await?))
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
            &query.target.selector(&app)?,
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
            .details(&query.target.selector(&app)?, &endpoint)
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
        app.api()
            .search(&body.target.selector(app)?, &request)
            .await?,
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
        .build_index(
            &query.target.selector(&app)?,
            query.force,
            &|done, total| {
                tracing::debug!(done, total, "embedding endpoints");
            },
        )
        .await?;
    Ok(Json(report))
}

/// `POST /api/embed/reindex/stream?project=NAME[&force=true]`: the same build, answered as
/// server-sent events while it runs — `progress` (`{done, total}`), then `done` (the report) or
/// `error` (`{error, kind}`) — so the panel can show the badge and the bar move.
async fn embed_reindex_stream(
    State(app): Shared,
    Params(query): Params<ReindexQuery>,
) -> Result<impl IntoResponse, Failure> {
    // A spec that may not be named is a plain 403 before the stream starts.
    let selector = query.target.selector(&app)?;
    Ok(events::stream(move |events| async move {
        let progress = events.counter();
        let result = app
            .api()
            .build_index(&selector, query.force, &progress)
            .await;
        events.finish(result);
    }))
}

#[derive(Debug, Deserialize)]
struct ReindexAllQuery {
    #[serde(default)]
    force: bool,
}

/// `POST /api/embed/reindex-all/stream[?force=true]`: every project re-indexed in turn, as
/// server-sent events — `started` (`{project, index, of}`), `progress` (`{project, done,
/// total}`), `finished` (`{project, report | error}`) per project, then `done` (the summary).
async fn embed_reindex_all_stream(
    State(app): Shared,
    Params(query): Params<ReindexAllQuery>,
) -> impl IntoResponse {
    events::stream(move |events| async move {
        let on_event = {
            let events = events.clone();
            move |event: ReindexEvent| {
                let name = match &event {
                    ReindexEvent::Started { .. } => "started",
                    ReindexEvent::Progress { .. } => "progress",
                    ReindexEvent::Finished { .. } => "finished",
                };
                events.send(name, &event)
            }
        };
        let result = devlens_app::projects::reindex_all(&app, query.force, &on_event).await;
        events.finish(result);
    })
}

/// `POST /api/embed/reindex-all[?force=true]`: the same, answered once all are done.
async fn embed_reindex_all(
    State(app): Shared,
    Params(query): Params<ReindexAllQuery>,
) -> JsonResult<ReindexAll> {
    Ok(Json(
        devlens_app::projects::reindex_all(&app, query.force, &|_| {}).await?,
    ))
}

/// `GET /api/embed/status?project=NAME`.
async fn embed_status(
    State(app): Shared,
    Params(target): Params<Target>,
) -> JsonResult<devlens_openapi::explorer::IndexStatus> {
    Ok(Json(app.api().index_status(&target.selector(&app)?).await?))
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
        selector: body.target.selector(&app)?,
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
/// `execute` is true; `execute` needs a write token where tokens are required).
async fn call(
    State(app): Shared,
    scope: Option<Extension<Scope>>,
    headers: HeaderMap,
    Body(body): Body<CallBody>,
) -> Result<Response, Failure> {
    let read_only = scope.is_some_and(|Extension(scope)| scope == Scope::Read);
    let endpoint = endpoint_ref(body.operation_id, body.method, body.path)?;
    let request = CallEndpoint {
        selector: body.target.selector(&app)?,
        endpoint: Some(endpoint),
        params: body.params,
        headers: body.headers.into_iter().collect(),
        body: body.body,
        content_type: body.content_type,
        base_url: body.base_url,
        execute: body.execute,
        // A read token sees the request it would send, and nothing is sent (`execute: true` is
        // refused).
        dry_run_only: read_only,
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
    let sample = contract::code_sample(&app, &query.target.selector(&app)?, &endpoint).await?;
    Ok(answer(&sample)?.respond(&headers))
}
