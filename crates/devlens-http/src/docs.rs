//! REST endpoints for library docs under `/api/docs/`: the operations of the `resolve_library_id`
//! and `query_docs` tools and of `devlens docs list|add|remove`, for the dev panel.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::State,
    response::{IntoResponse, Response},
    routing::{get, post},
};

use devlens_app::{
    App,
    docs::{
        self, AddDocs, DependencyList, Ingest, IngestProgress, IngestReport, LibraryList,
        QueryDocsInput, QueryDocsOutput, RemoveDocs, RemovedDocs, ResolveLibrary, Resolved,
    },
};

use crate::failure::{Body, Failure, JsonResult, Params};

type Shared = State<Arc<App>>;

pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/docs/libraries",
            get(libraries).post(add_library).delete(remove_library),
        )
        .route("/docs/libraries/stream", post(add_library_stream))
        .route("/docs/deps", get(dependencies))
        .route("/docs/resolve", get(resolve))
        .route("/docs/query", get(query_get).post(query_post))
}

/// `GET /api/docs/libraries`: what `devlens docs list --json` prints.
async fn libraries(State(app): Shared) -> JsonResult<LibraryList> {
    Ok(Json(docs::libraries(&app)?))
}

/// `GET /api/docs/deps`: what `devlens docs deps --json` prints — the workspace's direct
/// dependencies, their installed versions and whether their docs are stored.
async fn dependencies(State(app): Shared) -> JsonResult<DependencyList> {
    Ok(Json(docs::dependencies(&app)?))
}

/// `POST /api/docs/libraries`: ingest a folder (`path`) or a site crawled from `url` (within
/// `maxPages` and `maxDepth`; `ignoreRobots` fetches what the site's robots.txt disallows).
async fn add_library(State(app): Shared, Body(add): Body<AddDocs>) -> JsonResult<IngestReport> {
    let ingest = Ingest::confined(&app, add)?;
    Ok(Json(ingest.run(&|_, _, _| {}).await?))
}

/// `POST /api/docs/libraries/stream?id=ID&path=DIR` (or `&url=URL`, and the other fields of
/// `POST /api/docs/libraries` as query parameters): the same ingest, answered as server-sent
/// events while it runs — `progress` (`{stage, done, total}`: pages read, then sections
/// embedded), then `done` (the report) or `error` (`{error, kind}`). A request that is wrong
/// before anything is read (no id, no source) is a plain 400.
async fn add_library_stream(
    State(app): Shared,
    Params(add): Params<AddDocs>,
) -> Result<impl IntoResponse, Failure> {
    let ingest = Ingest::confined(&app, add)?;
    Ok(crate::events::stream(move |events| async move {
        let progress = {
            let events = events.clone();
            move |stage, done, total| {
                events.send("progress", &IngestProgress::new(stage, done, total))
            }
        };
        events.finish(ingest.run(&progress).await);
    }))
}

/// `DELETE /api/docs/libraries?id=ID[&version=V]`: what `devlens docs remove` does (ids may hold
/// `/`, hence a query parameter rather than a path segment).
async fn remove_library(
    State(app): Shared,
    Params(args): Params<RemoveDocs>,
) -> JsonResult<RemovedDocs> {
    Ok(Json(docs::remove(&app, &args)?))
}

async fn resolve(State(app): Shared, Params(args): Params<ResolveLibrary>) -> JsonResult<Resolved> {
    Ok(Json(docs::resolve(&app, &args)?))
}

async fn query_get(
    State(app): Shared,
    Params(input): Params<QueryDocsInput>,
) -> JsonResult<QueryDocsOutput> {
    Ok(Json(docs::query(&app, &input).await?))
}

async fn query_post(
    State(app): Shared,
    Body(input): Body<QueryDocsInput>,
) -> JsonResult<QueryDocsOutput> {
    Ok(Json(docs::query(&app, &input).await?))
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
    match docs::metrics_text(&app) {
        Ok(text) => (
            [(
                axum::http::header::CONTENT_TYPE,
                "text/plain; version=0.0.4",
            )],
            text,
        )
            .into_response(),
        Err(e) => Failure::from(e).into_response(),
    }
}
