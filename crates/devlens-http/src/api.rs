//! REST endpoints under `/api/`: the same operations as the MCP tools and the CLI.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use devlens_core::Classify;
use devlens_mcp::Services;
use devlens_openapi::{
    EndpointRef,
    explorer::{ExplorerError, SpecSelector},
    search::{SearchMode, SearchRequest},
};

type Shared = State<Arc<Services>>;

pub fn routes(services: Arc<Services>) -> Router {
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
        .merge(crate::docs::routes())
        .merge(crate::kb::routes())
        .with_state(services)
}

/// A failure as the REST API reports it: a status code and `{"error": message}`.
struct ApiFailure(StatusCode, String);

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

impl From<ExplorerError> for ApiFailure {
    fn from(error: ExplorerError) -> Self {
        let status = StatusCode::from_u16(error.kind().http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        ApiFailure(status, error.to_string())
    }
}

fn bad_request(message: impl Into<String>) -> ApiFailure {
    ApiFailure(StatusCode::BAD_REQUEST, message.into())
}

type ApiResult<T> = Result<Json<T>, ApiFailure>;

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
        SpecSelector {
            project: self.project.clone().filter(|p| !p.is_empty()),
            spec: self.spec.clone().filter(|s| !s.is_empty()),
        }
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

async fn projects(State(services): Shared) -> ApiResult<ProjectList> {
    let registry = services
        .api
        .projects()
        .map_err(|e| ApiFailure::from(ExplorerError::from(e)))?;
    Ok(Json(ProjectList {
        projects: registry.projects().to_vec(),
        active: registry.active_name(),
    }))
}

async fn tags(
    State(services): Shared,
    Query(target): Query<Target>,
) -> ApiResult<devlens_openapi::explorer::TagList> {
    Ok(Json(services.api.tags(&target.selector()).await?))
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
    State(services): Shared,
    Query(query): Query<EndpointsQuery>,
) -> ApiResult<devlens_openapi::explorer::EndpointPage> {
    let tag = query
        .tag
        .ok_or_else(|| bad_request("`tag` is required: list tag names at /api/tags"))?;
    let page = services
        .api
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
    State(services): Shared,
    Query(query): Query<EndpointQuery>,
) -> ApiResult<devlens_openapi::EndpointDetails> {
    let endpoint = match (query.operation_id, query.method, query.path) {
        (Some(id), None, None) => EndpointRef::OperationId(id),
        (None, Some(method), Some(path)) => EndpointRef::method_path(method, path),
        _ => {
            return Err(bad_request(
                "give either operationId, or both method and path",
            ));
        }
    };
    Ok(Json(
        services
            .api
            .details(&query.target.selector(), &endpoint)
            .await?,
    ))
}

/// `search_api_documentation`'s arguments, as query parameters or a JSON body (seed 001 shape).
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
    services: &Services,
    body: SearchBody,
) -> ApiResult<devlens_openapi::search::SearchResponse> {
    let mode = body
        .mode
        .as_deref()
        .map(SearchMode::parse)
        .transpose()
        .map_err(bad_request)?;
    let mut request = SearchRequest::new(body.query, body.tag, body.method, body.limit, mode)
        .map_err(bad_request)?;
    request.details = body.details.unwrap_or(false);
    Ok(Json(
        services
            .api
            .search(&body.target.selector(), &request)
            .await?,
    ))
}

async fn search_get(
    State(services): Shared,
    Query(body): Query<SearchBody>,
) -> ApiResult<devlens_openapi::search::SearchResponse> {
    run_search(&services, body).await
}

async fn search_post(
    State(services): Shared,
    Json(body): Json<SearchBody>,
) -> ApiResult<devlens_openapi::search::SearchResponse> {
    run_search(&services, body).await
}

#[derive(Debug, Deserialize)]
struct ReindexQuery {
    #[serde(default)]
    force: bool,
    #[serde(flatten)]
    target: Target,
}

/// `POST /api/embed/reindex?project=NAME[&force=true]`: builds the project's semantic index
/// (seed 001).
async fn embed_reindex(
    State(services): Shared,
    Query(query): Query<ReindexQuery>,
) -> ApiResult<devlens_openapi::explorer::IndexReport> {
    let report = services
        .api
        .build_index(&query.target.selector(), query.force, &|done, total| {
            tracing::debug!(done, total, "embedding endpoints");
        })
        .await?;
    Ok(Json(report))
}

/// `GET /api/embed/status?project=NAME`.
async fn embed_status(
    State(services): Shared,
    Query(target): Query<Target>,
) -> ApiResult<devlens_openapi::explorer::IndexStatus> {
    Ok(Json(services.api.index_status(&target.selector()).await?))
}

/// `POST /api/embed/search`: seed 001's semantic search; `mode` may ask for another.
async fn embed_search(
    State(services): Shared,
    Json(mut body): Json<SearchBody>,
) -> ApiResult<devlens_openapi::search::SearchResponse> {
    body.mode.get_or_insert_with(|| "semantic".into());
    run_search(&services, body).await
}
