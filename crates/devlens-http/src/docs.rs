//! REST endpoints for library docs under `/api/docs/`: the operations of the `resolve_library_id`
//! and `query_docs` tools and of `devlens docs list|add`, for the dev panel.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::State,
    response::{IntoResponse, Response},
    routing::get,
};
use serde::Deserialize;

use devlens_app::{
    App,
    docs::{SourceInput, docs_source},
};
use devlens_docs::{
    IngestReport, IngestRequest, LibraryList, QueryDocsInput, QueryDocsOutput, Resolved,
};

use crate::failure::{Body, Failure, JsonResult, Params};

type Shared = State<Arc<App>>;

pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/docs/libraries", get(libraries).post(add_library))
        .route("/docs/resolve", get(resolve))
        .route("/docs/query", get(query_get).post(query_post))
}

/// `GET /api/docs/libraries`: what `devlens docs list --json` prints.
async fn libraries(State(app): Shared) -> JsonResult<LibraryList> {
    Ok(Json(app.docs()?.list()?))
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

async fn add_library(State(app): Shared, Body(body): Body<AddLibrary>) -> JsonResult<IngestReport> {
    let source = docs_source(SourceInput {
        path: body.path.map(Into::into),
        url: body.url,
        max_pages: body.max_pages,
        max_depth: body.max_depth,
        ignore_robots: body.ignore_robots,
    })?;
    let request = IngestRequest {
        id: body.id,
        source,
        version: body.version,
        name: body.name,
        description: body.description,
    };
    let report = app.docs()?.ingest(&request, &|_, _, _| {}).await?;
    Ok(Json(report))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResolveQuery {
    #[serde(alias = "name", alias = "library_name")]
    library_name: Option<String>,
    query: Option<String>,
}

async fn resolve(State(app): Shared, Params(q): Params<ResolveQuery>) -> JsonResult<Resolved> {
    let name = q.library_name.unwrap_or_default();
    Ok(Json(app.docs()?.resolve(&name, q.query.as_deref())?))
}

async fn query_get(
    State(app): Shared,
    Params(input): Params<QueryDocsInput>,
) -> JsonResult<QueryDocsOutput> {
    Ok(Json(app.docs()?.query(&input).await?))
}

async fn query_post(
    State(app): Shared,
    Body(input): Body<QueryDocsInput>,
) -> JsonResult<QueryDocsOutput> {
    Ok(Json(app.docs()?.query(&input).await?))
}

/// `/metrics`, outside `/api/` where scrapers look for it.
pub(crate) fn metrics_route(app: Arc<App>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .with_state(app)
}

/// `GET /metrics`: Prometheus text of the docs queries (requests, errors, latency and tokens
/// histograms, cache hits and misses).
async fn metrics(State(app): Shared) -> Response {
    match app.docs() {
        Ok(docs) => (
            [(
                axum::http::header::CONTENT_TYPE,
                "text/plain; version=0.0.4",
            )],
            docs.metrics_text(),
        )
            .into_response(),
        Err(e) => Failure::from(e).into_response(),
    }
}
