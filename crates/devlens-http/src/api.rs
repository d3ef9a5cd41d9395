//! REST endpoints under `/api/`: the same operations as the MCP tools and the CLI, with the same
//! argument types ([`devlens_app::api`], [`devlens_app::contract`]) read from query parameters
//! or a JSON body. A spec named here is confined: a file only inside the workspace, never a URL.

use std::sync::Arc;

use axum::{
    Extension, Json, Router,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{delete, get, post},
};
use serde_json::json;

use devlens_app::{
    App, AppError,
    api::{
        self, BuildIndexArgs, EndpointArgs, EndpointDetails, EndpointPage, IndexReport,
        IndexStatus, ListEndpoints, SearchArgs, SearchResponse, SpecArgs, SpecSelector, TagList,
    },
    contract::{self, CallEndpointArgs, CheckTrafficArgs},
    projects::{self, AddProject, ProjectList, ReindexAll, ReindexAllArgs, ReindexEvent},
    tokens::Scope,
};

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

/// The spec `target` names (`?project=NAME` or `?spec=PATH`; neither means the active project):
/// a project, or a spec file inside the workspace — never a URL or another file.
async fn selector(app: &App, target: &SpecArgs) -> Result<SpecSelector, AppError> {
    target
        .confined_selector(|| async { app.workspace() }, true)
        .await
}

async fn health() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION") }))
}

async fn projects(State(app): Shared) -> JsonResult<ProjectList> {
    Ok(Json(projects::list(&app)?))
}

/// `POST /api/projects` with `{name, spec}`: added once the spec loads; 201 with the project.
async fn add_project(
    State(app): Shared,
    Body(body): Body<AddProject>,
) -> Result<(StatusCode, Json<devlens_core::Project>), Failure> {
    let project = projects::add_from_request(&app, &body.name, &body.spec).await?;
    Ok((StatusCode::CREATED, Json(project)))
}

/// `DELETE /api/projects/{name}`.
async fn remove_project(
    State(app): Shared,
    Path(name): Path<String>,
) -> JsonResult<serde_json::Value> {
    projects::remove(&app, &name)?;
    Ok(Json(json!({ "removed": name })))
}

/// `POST /api/projects/{name}/activate`.
async fn activate_project(State(app): Shared, Path(name): Path<String>) -> JsonResult<ProjectList> {
    projects::activate(&app, &name)?;
    Ok(Json(projects::list(&app)?))
}

async fn tags(State(app): Shared, Params(target): Params<SpecArgs>) -> JsonResult<TagList> {
    Ok(Json(
        api::tags(&app, &selector(&app, &target).await?).await?,
    ))
}

async fn endpoints(
    State(app): Shared,
    Params(args): Params<ListEndpoints>,
) -> JsonResult<EndpointPage> {
    // Said before the spec is looked for, pointing to this API's own list of tags.
    if args.tag.is_none() {
        return Err(Failure::bad_request(
            "`tag` is required: list tag names at /api/tags",
        ));
    }
    let selector = selector(&app, &args.target).await?;
    Ok(Json(api::endpoints(&app, &selector, &args).await?))
}

async fn endpoint(
    State(app): Shared,
    Params(args): Params<EndpointArgs>,
) -> JsonResult<EndpointDetails> {
    let endpoint = args.endpoint()?;
    let selector = selector(&app, &args.target).await?;
    Ok(Json(api::details(&app, &selector, &endpoint).await?))
}

/// `search_api_documentation`'s arguments, as query parameters or a JSON body.
async fn run_search(app: &App, args: SearchArgs) -> JsonResult<SearchResponse> {
    let request = args.request()?;
    let selector = selector(app, &args.target).await?;
    Ok(Json(api::search(app, &selector, &request).await?))
}

async fn search_get(
    State(app): Shared,
    Params(args): Params<SearchArgs>,
) -> JsonResult<SearchResponse> {
    run_search(&app, args).await
}

async fn search_post(
    State(app): Shared,
    Body(args): Body<SearchArgs>,
) -> JsonResult<SearchResponse> {
    run_search(&app, args).await
}

/// `POST /api/embed/reindex?project=NAME[&force=true]`: builds the project's semantic index
/// (what the dev panel's Re-index button calls).
async fn embed_reindex(
    State(app): Shared,
    Params(args): Params<BuildIndexArgs>,
) -> JsonResult<IndexReport> {
    let selector = selector(&app, &args.target).await?;
    let progress = |done, total| tracing::debug!(done, total, "embedding endpoints");
    Ok(Json(
        api::build_index(&app, &selector, &args, &progress).await?,
    ))
}

/// `POST /api/embed/reindex/stream?project=NAME[&force=true]`: the same build, answered as
/// server-sent events while it runs — `progress` (`{done, total}`), then `done` (the report) or
/// `error` (`{error, kind}`) — so the panel can show the badge and the bar move.
async fn embed_reindex_stream(
    State(app): Shared,
    Params(args): Params<BuildIndexArgs>,
) -> Result<impl IntoResponse, Failure> {
    // A spec that may not be named is a plain 403 before the stream starts.
    let selector = selector(&app, &args.target).await?;
    Ok(events::stream(move |events| async move {
        let progress = events.counter();
        events.finish(api::build_index(&app, &selector, &args, &progress).await);
    }))
}

/// `POST /api/embed/reindex-all/stream[?force=true]`: every project re-indexed in turn, as
/// server-sent events — `started` (`{project, index, of}`), `progress` (`{project, done,
/// total}`), `finished` (`{project, report | error}`) per project, then `done` (the summary).
async fn embed_reindex_all_stream(
    State(app): Shared,
    Params(args): Params<ReindexAllArgs>,
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
        let result = projects::reindex_all(&app, args.force, &on_event).await;
        events.finish(result);
    })
}

/// `POST /api/embed/reindex-all[?force=true]`: the same, answered once all are done.
async fn embed_reindex_all(
    State(app): Shared,
    Params(args): Params<ReindexAllArgs>,
) -> JsonResult<ReindexAll> {
    Ok(Json(
        projects::reindex_all(&app, args.force, &|_| {}).await?,
    ))
}

/// `GET /api/embed/status?project=NAME`.
async fn embed_status(
    State(app): Shared,
    Params(target): Params<SpecArgs>,
) -> JsonResult<IndexStatus> {
    Ok(Json(
        api::index_status(&app, &selector(&app, &target).await?).await?,
    ))
}

/// `POST /api/embed/search`: semantic search; `mode` may ask for another.
async fn embed_search(
    State(app): Shared,
    Body(mut args): Body<SearchArgs>,
) -> JsonResult<SearchResponse> {
    args.mode.get_or_insert_with(|| "semantic".into());
    run_search(&app, args).await
}

/// `POST /api/check-traffic`: the active tab's API calls (or a workspace HAR file) checked
/// against the project's spec.
async fn check_traffic(
    State(app): Shared,
    headers: HeaderMap,
    Body(args): Body<CheckTrafficArgs>,
) -> Result<Response, Failure> {
    let selector = selector(&app, &args.target).await?;
    let report = contract::check_traffic(&app, args.into_request(selector)).await?;
    Ok(answer(&report)?.respond(&headers))
}

/// `POST /api/call`: an endpoint called by operationId (a dry run for unsafe methods unless
/// `execute` is true; `execute` needs a write token where tokens are required).
async fn call(
    State(app): Shared,
    scope: Option<Extension<Scope>>,
    headers: HeaderMap,
    Body(args): Body<CallEndpointArgs>,
) -> Result<Response, Failure> {
    // A read token sees the request it would send, and nothing is sent (`execute: true` is
    // refused).
    let read_only = scope.is_some_and(|Extension(scope)| scope == Scope::Read);
    let endpoint = args.endpoint()?;
    let selector = selector(&app, &args.target).await?;
    let outcome =
        contract::call_endpoint(&app, args.into_request(selector, endpoint, read_only)).await?;
    Ok(answer(&outcome)?.respond(&headers))
}

/// `GET /api/code-sample?operationId=…`: a typed fetch function and a curl line.
async fn code_sample(
    State(app): Shared,
    headers: HeaderMap,
    Params(args): Params<EndpointArgs>,
) -> Result<Response, Failure> {
    let endpoint = args.endpoint()?;
    let selector = selector(&app, &args.target).await?;
    let sample = contract::code_sample(&app, &selector, &endpoint).await?;
    Ok(answer(&sample)?.respond(&headers))
}
