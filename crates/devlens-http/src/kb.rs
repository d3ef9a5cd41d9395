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
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::json;

use devlens_kb::{
    AskAnswer, AskRequest, ImportReport, KbError, KbStatus, KnowledgeBase, NewSolution,
    ReembedReport, Saved, SearchMode, SearchOptions, SearchResults, Solution, SolutionPatch,
};
use devlens_mcp::Services;

type Shared = State<Arc<Services>>;

/// A solution's text may be up to 1 MB, which JSON escaping can multiply; an export holds many.
const SOLUTION_BODY_LIMIT: usize = 8 * 1024 * 1024;
const IMPORT_BODY_LIMIT: usize = 256 * 1024 * 1024;

pub fn routes() -> Router<Arc<Services>> {
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
        .route("/kb/status", get(status))
}

/// A failure as `{"error": message}` with the status that fits it.
struct KbFailure(StatusCode, String);

impl IntoResponse for KbFailure {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

impl From<KbError> for KbFailure {
    fn from(e: KbError) -> Self {
        let status = match &e {
            KbError::UnknownSolution { .. } => StatusCode::NOT_FOUND,
            KbError::InvalidInput(_) | KbError::Import { .. } => StatusCode::BAD_REQUEST,
            KbError::Embed(inner) if inner.is_unavailable() => StatusCode::SERVICE_UNAVAILABLE,
            KbError::EmbedderUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            KbError::Llm(_) => StatusCode::BAD_GATEWAY,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self(status, e.to_string())
    }
}

type KbResult<T> = Result<Json<T>, KbFailure>;

fn kb(services: &Services) -> Result<Arc<KnowledgeBase>, KbFailure> {
    Ok(services.knowledge_base()?)
}

/// The JSON body, or a 400 naming the fields `expected`.
fn body<T>(body: Result<Json<T>, JsonRejection>, expected: &str) -> Result<T, KbFailure> {
    body.map(|Json(b)| b).map_err(|e| {
        // A body too large stays a 413; the rest (syntax, fields, content type) is a bad request.
        let status = match e.status() {
            StatusCode::PAYLOAD_TOO_LARGE => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::BAD_REQUEST,
        };
        KbFailure(
            status,
            format!("{}. Send a JSON body: {expected}", e.body_text()),
        )
    })
}

/// `null` → `Some(None)` (remove), absent → `None` (keep), a value → `Some(Some(v))`.
fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// One row of `GET /api/kb/solutions` (what `devlens kb list --json` prints).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    id: String,
    title: String,
    url: Option<String>,
    tags: Vec<String>,
    created_at: String,
}

#[derive(Serialize)]
struct SolutionList {
    solutions: Vec<Listed>,
}

/// `GET /api/kb/solutions`: every solution, newest first.
async fn list(State(services): Shared) -> KbResult<SolutionList> {
    let solutions = kb(&services)?
        .list()?
        .into_iter()
        .map(|s| Listed {
            id: s.id,
            title: s.title,
            url: s.url,
            tags: s.tags,
            created_at: s.created_at,
        })
        .collect();
    Ok(Json(SolutionList { solutions }))
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
    State(services): Shared,
    request: Result<Json<CreateBody>, JsonRejection>,
) -> Result<(StatusCode, Json<Saved>), KbFailure> {
    let b = body(request, CREATE_FIELDS)?;
    let saved = kb(&services)?
        .add(NewSolution {
            title: b.title,
            url: b.url,
            text: b.text,
            summary: b.summary,
            tags: b.tags,
        })
        .await?;
    Ok((StatusCode::CREATED, Json(saved)))
}

async fn show(State(services): Shared, Path(id): Path<String>) -> KbResult<Solution> {
    Ok(Json(kb(&services)?.get(&id)?))
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
    State(services): Shared,
    Path(id): Path<String>,
    request: Result<Json<UpdateBody>, JsonRejection>,
) -> KbResult<Saved> {
    let b = body(
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
    Ok(Json(kb(&services)?.update(&id, patch).await?))
}

#[derive(Serialize)]
struct Deleted {
    deleted: Solution,
}

/// `DELETE /api/kb/solutions/{id}`: what was deleted.
async fn remove(State(services): Shared, Path(id): Path<String>) -> KbResult<Deleted> {
    Ok(Json(Deleted {
        deleted: kb(&services)?.delete(&id)?,
    }))
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
    State(services): Shared,
    request: Result<Json<SearchBody>, JsonRejection>,
) -> KbResult<SearchResults> {
    let b = body(
        request,
        "{\"query\", \"mode\"?: \"semantic\"|\"keyword\"|\"hybrid\", \"topK\"?, \"similarityThreshold\"?}",
    )?;
    let options = SearchOptions {
        mode: b.mode,
        top_k: b.top_k,
        similarity_threshold: b.similarity_threshold,
    };
    Ok(Json(kb(&services)?.search(&b.query, &options).await?))
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
    State(services): Shared,
    request: Result<Json<AskBody>, JsonRejection>,
) -> KbResult<AskAnswer> {
    let b = body(
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
    Ok(Json(kb(&services)?.ask(&request).await?))
}

/// `GET /api/kb/export`: the file `devlens kb export` writes, byte for byte.
async fn export(State(services): Shared) -> Result<Response, KbFailure> {
    let json = kb(&services)?.export_json()?;
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
    State(services): Shared,
    text: Result<String, StringRejection>,
) -> KbResult<ImportReport> {
    let text = text.map_err(|e| {
        KbFailure(
            e.status(),
            format!(
                "{}. Send the JSON file `devlens kb export` (or GET /api/kb/export) wrote as the \
                 body; nothing was imported",
                e.body_text()
            ),
        )
    })?;
    Ok(Json(kb(&services)?.import_json(&text, "the request body")?))
}

/// `POST /api/kb/reembed`: embeds every solution lacking a current embedding.
async fn reembed(State(services): Shared) -> KbResult<ReembedReport> {
    Ok(Json(kb(&services)?.reembed(&|_, _| {}).await?))
}

async fn status(State(services): Shared) -> KbResult<KbStatus> {
    Ok(Json(kb(&services)?.status().await?))
}
