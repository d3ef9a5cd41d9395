//! REST endpoints for the knowledge base under `/api/kb/`: the operations of the knowledge base
//! tools and of `devlens kb …`, for the dev panel and the extension.
//!
//! Bodies are JSON in camelCase; a body that does not parse is a 400 that says what was expected,
//! like every other failure: `{"error": message}` with the status that fits.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{
        DefaultBodyLimit, Path, State,
        rejection::{JsonRejection, StringRejection},
    },
    http::{StatusCode, header},
    response::{IntoResponse, Response},
    routing::{get, post},
};

use devlens_app::{
    App,
    kb::{
        self, ASK_KNOWLEDGE_BASE_FIELDS, AskAnswer, AskKnowledgeBaseBody, CREATE_SOLUTION_FIELDS,
        CreateSolution, Deleted, ImportReport, KB_SETTINGS_FIELDS, KbSettingsChange,
        KbSettingsView, KbStatus, ReembedReport, SEARCH_SOLUTIONS_FIELDS, SYNC_FIELDS, Saved,
        SearchResults, SearchSolutionsBody, Solution, SolutionList, SyncReport, SyncRequest,
        UPDATE_SOLUTION_FIELDS, UpdateSolution,
    },
};

use crate::failure::{Failure, JsonResult, json_body, rejected_body};

type Shared = State<Arc<App>>;

/// A solution's text may be up to 1 MB, which JSON escaping can multiply; an export holds many.
const SOLUTION_BODY_LIMIT: usize = 8 * 1024 * 1024;
const IMPORT_BODY_LIMIT: usize = 256 * 1024 * 1024;

pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/kb/solutions",
            get(list)
                .post(create)
                .layer(DefaultBodyLimit::max(SOLUTION_BODY_LIMIT)),
        )
        .route(
            "/kb/solutions/{id}",
            get(show)
                .put(update)
                .delete(remove)
                .layer(DefaultBodyLimit::max(SOLUTION_BODY_LIMIT)),
        )
        .route("/kb/search", post(search))
        .route("/kb/ask", post(ask))
        .route("/kb/export", get(export))
        .route(
            "/kb/import",
            post(import).layer(DefaultBodyLimit::max(IMPORT_BODY_LIMIT)),
        )
        .route(
            "/kb/sync",
            post(sync).layer(DefaultBodyLimit::max(IMPORT_BODY_LIMIT)),
        )
        .route("/kb/reembed", post(reembed))
        .route("/kb/reembed/stream", post(reembed_stream))
        .route("/kb/status", get(status))
        .route("/kb/settings", get(settings).put(save_settings))
}

/// `GET /api/kb/solutions`: every solution, newest first (what `devlens kb list --json` prints).
async fn list(State(app): Shared) -> JsonResult<SolutionList> {
    Ok(Json(kb::list(&app)?))
}

/// `POST /api/kb/solutions`: 201 with the saved solution.
async fn create(
    State(app): Shared,
    request: Result<Json<CreateSolution>, JsonRejection>,
) -> Result<(StatusCode, Json<Saved>), Failure> {
    let new = json_body(request, CREATE_SOLUTION_FIELDS)?;
    Ok((StatusCode::CREATED, Json(kb::create(&app, new).await?)))
}

async fn show(State(app): Shared, Path(id): Path<String>) -> JsonResult<Solution> {
    Ok(Json(kb::get(&app, &id)?))
}

/// `PUT /api/kb/solutions/{id}`: only the fields given change; `null` removes url or summary.
async fn update(
    State(app): Shared,
    Path(id): Path<String>,
    request: Result<Json<UpdateSolution>, JsonRejection>,
) -> JsonResult<Saved> {
    let changes = json_body(request, UPDATE_SOLUTION_FIELDS)?;
    Ok(Json(kb::update(&app, &id, changes).await?))
}

/// `DELETE /api/kb/solutions/{id}`: which solution was deleted.
async fn remove(State(app): Shared, Path(id): Path<String>) -> JsonResult<Deleted> {
    Ok(Json(kb::delete(&app, &id)?))
}

/// `POST /api/kb/search`.
async fn search(
    State(app): Shared,
    request: Result<Json<SearchSolutionsBody>, JsonRejection>,
) -> JsonResult<SearchResults> {
    let args = json_body(request, SEARCH_SOLUTIONS_FIELDS)?;
    Ok(Json(kb::search(&app, &args.into()).await?))
}

/// `POST /api/kb/ask`: the numbered context with its sources, and an answer when asked for.
async fn ask(
    State(app): Shared,
    request: Result<Json<AskKnowledgeBaseBody>, JsonRejection>,
) -> JsonResult<AskAnswer> {
    let args = json_body(request, ASK_KNOWLEDGE_BASE_FIELDS)?;
    Ok(Json(kb::ask(&app, args.into()).await?))
}

/// `GET /api/kb/export`: the file `devlens kb export` writes, byte for byte.
async fn export(State(app): Shared) -> Result<Response, Failure> {
    let json = kb::export_json(&app)?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/json"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"devlens-kb.json\"",
            ),
        ],
        json,
    )
        .into_response())
}

/// `POST /api/kb/import` with an export as the body: every solution or, when anything in it is
/// wrong, none.
async fn import(
    State(app): Shared,
    text: Result<String, StringRejection>,
) -> JsonResult<ImportReport> {
    let text = text.map_err(|e| {
        rejected_body(
            e.status(),
            format!(
                "{}. Send the JSON file `devlens kb export` (or GET /api/kb/export) wrote as the \
                 body; nothing was imported",
                e.body_text()
            ),
        )
    })?;
    Ok(Json(kb::import_json(&app, &text, "the request body")?))
}

/// `POST /api/kb/sync`: the extension's changes applied (last writer wins per solution,
/// conflicts noted, bad changes rejected alone), answered with the server's changes. A body as
/// big as an import: a first sync may carry every solution with its vectors.
async fn sync(
    State(app): Shared,
    request: Result<Json<SyncRequest>, JsonRejection>,
) -> JsonResult<SyncReport> {
    let request = json_body(request, SYNC_FIELDS)?;
    Ok(Json(kb::sync(&app, request).await?))
}

/// `POST /api/kb/reembed`: embeds every solution lacking a current embedding.
async fn reembed(State(app): Shared) -> JsonResult<ReembedReport> {
    Ok(Json(kb::reembed(&app, &|_, _| {}).await?))
}

/// `POST /api/kb/reembed/stream`: the same, answered as server-sent events while it runs —
/// `progress` (`{done, total}`), then `done` (the report) or `error` (`{error, kind}`).
async fn reembed_stream(State(app): Shared) -> impl IntoResponse {
    crate::events::stream(move |events| async move {
        let progress = events.counter();
        events.finish(kb::reembed(&app, &progress).await);
    })
}

async fn status(State(app): Shared) -> JsonResult<KbStatus> {
    Ok(Json(kb::status(&app).await?))
}

/// `GET /api/kb/settings`: the `[kb]` settings in effect and the config file they are saved in.
async fn settings(State(app): Shared) -> JsonResult<KbSettingsView> {
    Ok(Json(kb::settings(&app).await?))
}

/// `PUT /api/kb/settings`: saves the fields given into the config file's `[kb]` table (the rest
/// of the file kept as it is) and puts them in effect at once; a bad value changes nothing.
async fn save_settings(
    State(app): Shared,
    request: Result<Json<KbSettingsChange>, JsonRejection>,
) -> JsonResult<KbSettingsView> {
    let change = json_body(request, KB_SETTINGS_FIELDS)?;
    Ok(Json(kb::save_settings(&app, change).await?))
}
