//! REST endpoints for library docs under `/api/docs/`: the operations of the `resolve_library_id`
//! and `query_docs` tools and of `devlens docs list|add`, for the dev panel.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use devlens_docs::{
    Docs, DocsError, DocsSource, IngestReport, IngestRequest, LibraryInfo, QueryDocsInput,
    QueryDocsOutput, Resolved,
};
use devlens_mcp::Services;

type Shared = State<Arc<Services>>;

pub fn routes() -> Router<Arc<Services>> {
    Router::new()
        .route("/docs/libraries", get(libraries).post(add_library))
        .route("/docs/resolve", get(resolve))
        .route("/docs/query", get(query_get).post(query_post))
}

/// A docs failure as `{"error": message}` with the status that fits it.
struct DocsFailure(DocsError);

impl IntoResponse for DocsFailure {
    fn into_response(self) -> Response {
        let status = match &self.0 {
            e if e.is_not_found() => StatusCode::NOT_FOUND,
            e if e.is_user_error() => StatusCode::BAD_REQUEST,
            DocsError::Fetch { .. } => StatusCode::BAD_GATEWAY,
            DocsError::Read { .. } => StatusCode::BAD_REQUEST,
            DocsError::Embed(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        (status, Json(json!({ "error": self.0.to_string() }))).into_response()
    }
}

impl From<DocsError> for DocsFailure {
    fn from(e: DocsError) -> Self {
        Self(e)
    }
}

type DocsResult<T> = Result<Json<T>, DocsFailure>;

fn docs(services: &Services) -> Result<Arc<Docs>, DocsFailure> {
    Ok(Docs::shared(services.api.config())?)
}

#[derive(Serialize)]
struct LibraryList {
    libraries: Vec<LibraryInfo>,
}

async fn libraries(State(services): Shared) -> DocsResult<LibraryList> {
    Ok(Json(LibraryList {
        libraries: docs(&services)?.list()?,
    }))
}

/// `POST /api/docs/libraries`: ingest a folder (`path`) or a site crawled from `url` (within
/// `maxPages` and `maxDepth`; `ignoreRobots` fetches what the site's robots.txt disallows).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AddLibrary {
    id: String,
    path: Option<String>,
    url: Option<String>,
    #[serde(alias = "max_pages")]
    max_pages: Option<usize>,
    #[serde(alias = "max_depth")]
    max_depth: Option<usize>,
    #[serde(default, alias = "ignore_robots")]
    ignore_robots: bool,
    version: Option<String>,
    name: Option<String>,
    description: Option<String>,
}

async fn add_library(
    State(services): Shared,
    Json(body): Json<AddLibrary>,
) -> DocsResult<IngestReport> {
    let source = match (body.path, body.url) {
        (Some(path), None) => DocsSource::Path(path.into()),
        (None, Some(url)) => {
            let defaults = devlens_docs::crawl::CrawlLimits::default();
            DocsSource::Crawl {
                url,
                limits: devlens_docs::crawl::CrawlLimits {
                    max_pages: body.max_pages.unwrap_or(defaults.max_pages),
                    max_depth: body.max_depth.unwrap_or(defaults.max_depth),
                    ignore_robots: body.ignore_robots,
                },
            }
        }
        _ => {
            return Err(DocsError::InvalidInput(
                "give exactly one of `path` (a docs folder on this machine) or `url`".into(),
            )
            .into());
        }
    };
    let request = IngestRequest {
        id: body.id,
        source,
        version: body.version,
        name: body.name,
        description: body.description,
    };
    let report = docs(&services)?.ingest(&request, &|_, _, _| {}).await?;
    Ok(Json(report))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResolveQuery {
    #[serde(alias = "name", alias = "library_name")]
    library_name: Option<String>,
    query: Option<String>,
}

async fn resolve(State(services): Shared, Query(q): Query<ResolveQuery>) -> DocsResult<Resolved> {
    let name = q.library_name.unwrap_or_default();
    Ok(Json(Resolved {
        matches: docs(&services)?.resolve(&name, q.query.as_deref())?,
    }))
}

async fn query_get(
    State(services): Shared,
    Query(input): Query<QueryDocsInput>,
) -> DocsResult<QueryDocsOutput> {
    Ok(Json(docs(&services)?.query(&input).await?))
}

async fn query_post(
    State(services): Shared,
    Json(input): Json<QueryDocsInput>,
) -> DocsResult<QueryDocsOutput> {
    Ok(Json(docs(&services)?.query(&input).await?))
}

/// `/metrics`, outside `/api/` where scrapers look for it.
pub fn metrics_route(services: Arc<Services>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .with_state(services)
}

/// `GET /metrics`: Prometheus text of the docs queries (requests, errors, latency and tokens
/// histograms, cache hits and misses).
async fn metrics(State(services): Shared) -> Response {
    match docs(&services) {
        Ok(docs) => (
            [(
                axum::http::header::CONTENT_TYPE,
                "text/plain; version=0.0.4",
            )],
            docs.metrics_text(),
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}
