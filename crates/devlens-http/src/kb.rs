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
use serde::{Deserialize, Deserializer};

use devlens_app::{
    App,
    kb::{KB_SETTINGS_FIELDS, KbSettingsChange, KbSettingsView, SaveSolution},
};
use devlens_kb::{
    AskAnswer, AskRequest, Deleted, ImportReport, KbStatus, KnowledgeBase, ReembedReport, Saved,
    SearchMode, SearchOptions, SearchResults, Solution, SolutionList, SolutionPatch,
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
        .route("/kb/reembed", post(reembed))
        .route("/kb/reembed/stream", post(reembed_stream))
        .route("/kb/status", get(status))
        .route("/kb/settings", get(settings).put(save_settings))
}

fn kb(app: &App) -> Result<Arc<KnowledgeBase>, Failure> {
    Ok(app.kb()?)
}

/// `null` → `Some(None)` (remove), absent → `None` (keep), a value → `Some(Some(v))`.
fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// `GET /api/kb/solutions`: every solution, newest first (what `devlens kb list --json` prints).
async fn list(State(app): Shared) -> JsonResult<SolutionList> {
    Ok(Json(kb(&app)?.list()?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateBody {
    title: String,
    text: String,
    url: Option<String>,
    summary: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
}

const CREATE_FIELDS: &str = "{\"title\", \"text\", \"url\"?, \"summary\"?, \"tags\"?: [..]}";

/// `POST /api/kb/solutions`: 201 with the saved solution.
async fn create(
    State(app): Shared,
    request: Result<Json<CreateBody>, JsonRejection>,
) -> Result<(StatusCode, Json<Saved>), Failure> {
    let b = json_body(request, CREATE_FIELDS)?;
    let save = SaveSolution {
        id: None,
        title: Some(b.title),
        text: Some(b.text),
        url: b.url,
        summary: b.summary,
        tags: Some(b.tags),
    };
    let saved = save.run(&*kb(&app)?).await?;
    Ok((StatusCode::CREATED, Json(saved)))
}

async fn show(State(app): Shared, Path(id): Path<String>) -> JsonResult<Solution> {
    Ok(Json(kb(&app)?.get(&id)?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UpdateBody {
    title: Option<String>,
    text: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    url: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    summary: Option<Option<String>>,
    tags: Option<Vec<String>>,
}

/// `PUT /api/kb/solutions/{id}`: only the fields given change; `null` removes url or summary.
async fn update(
    State(app): Shared,
    Path(id): Path<String>,
    request: Result<Json<UpdateBody>, JsonRejection>,
) -> JsonResult<Saved> {
    let b = json_body(
        request,
        "any of {\"title\", \"text\", \"url\", \"summary\", \"tags\"} (null removes url or summary)",
    )?;
    let patch = SolutionPatch {
        title: b.title,
        url: b.url,
        text: b.text,
        summary: b.summary,
        tags: b.tags,
    };
    Ok(Json(kb(&app)?.update(&id, patch).await?))
}

/// `DELETE /api/kb/solutions/{id}`: which solution was deleted.
async fn remove(State(app): Shared, Path(id): Path<String>) -> JsonResult<Deleted> {
    Ok(Json(kb(&app)?.delete(&id)?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SearchBody {
    query: String,
    mode: Option<SearchMode>,
    #[serde(alias = "top_k")]
    top_k: Option<usize>,
    #[serde(alias = "similarity_threshold")]
    similarity_threshold: Option<f32>,
}

/// `POST /api/kb/search`.
async fn search(
    State(app): Shared,
    request: Result<Json<SearchBody>, JsonRejection>,
) -> JsonResult<SearchResults> {
    let b = json_body(
        request,
        "{\"query\", \"mode\"?: \"semantic\"|\"keyword\"|\"hybrid\", \"topK\"?, \"similarityThreshold\"?}",
    )?;
    let options = SearchOptions {
        mode: b.mode,
        top_k: b.top_k,
        similarity_threshold: b.similarity_threshold,
    };
    Ok(Json(kb(&app)?.search(&b.query, &options).await?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AskBody {
    query: String,
    #[serde(alias = "top_k")]
    top_k: Option<usize>,
    #[serde(alias = "generate_answer")]
    generate_answer: Option<bool>,
    mode: Option<SearchMode>,
    #[serde(alias = "context_limit")]
    context_limit: Option<usize>,
    #[serde(alias = "similarity_threshold")]
    similarity_threshold: Option<f32>,
}

/// `POST /api/kb/ask`: the numbered context with its sources, and an answer when asked for.
async fn ask(
    State(app): Shared,
    request: Result<Json<AskBody>, JsonRejection>,
) -> JsonResult<AskAnswer> {
    let b = json_body(
        request,
        "{\"query\", \"topK\"?, \"generateAnswer\"?, \"mode\"?, \"contextLimit\"?, \"similarityThreshold\"?}",
    )?;
    let request = AskRequest {
        query: b.query,
        top_k: b.top_k,
        mode: b.mode,
        similarity_threshold: b.similarity_threshold,
        generate_answer: b.generate_answer,
        context_limit: b.context_limit,
    };
    Ok(Json(kb(&app)?.ask(&request).await?))
}

/// `GET /api/kb/export`: the file `devlens kb export` writes, byte for byte.
async fn export(State(app): Shared) -> Result<Response, Failure> {
    let json = kb(&app)?.export_json()?;
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
    Ok(Json(kb(&app)?.import_json(&text, "the request body")?))
}

/// `POST /api/kb/reembed`: embeds every solution lacking a current embedding.
async fn reembed(State(app): Shared) -> JsonResult<ReembedReport> {
    Ok(Json(kb(&app)?.reembed(&|_, _| {}).await?))
}

/// `POST /api/kb/reembed/stream`: the same, answered as server-sent events while it runs —
/// `progress` (`{done, total}`), then `done` (the report) or `error` (`{error, kind}`).
async fn reembed_stream(State(app): Shared) -> impl IntoResponse {
    crate::events::stream(move |events| async move {
        let kb = match app.kb() {
            Ok(kb) => kb,
            Err(e) => return events.finish::<ReembedReport, _>(Err(e)),
        };
        let progress = events.counter();
        events.finish(kb.reembed(&progress).await);
    })
}

async fn status(State(app): Shared) -> JsonResult<KbStatus> {
    Ok(Json(kb(&app)?.status().await?))
}

/// `GET /api/kb/settings`: the `[kb]` settings in effect and the config file they are saved in.
async fn settings(State(app): Shared) -> JsonResult<KbSettingsView> {
    Ok(Json(devlens_app::kb::settings(&app).await?))
}

/// `PUT /api/kb/settings`: saves the fields given into the config file's `[kb]` table (the rest
/// of the file kept as it is) and puts them in effect at once; a bad value changes nothing.
async fn save_settings(
    State(app): Shared,
    request: Result<Json<KbSettingsChange>, JsonRejection>,
) -> JsonResult<KbSettingsView> {
    let change = json_body(request, KB_SETTINGS_FIELDS)?;
    Ok(Json(devlens_app::kb::save_settings(&app, change).await?))
}
