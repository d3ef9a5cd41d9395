//! REST endpoints for the workspace under `/api/workspace/`: the operations of the workspace
//! tools, with the same JSON bodies as their MCP arguments and the same confinement.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{State, rejection::JsonRejection},
    routing::{get, post},
};

use devlens_app::{
    App,
    workspace::{
        self as files, EditFile, FileContent, FileList, ListFiles, ReadFile, SearchFiles,
        SearchMatches, WriteFile,
    },
};
use serde_json::Value;

use crate::browser::shown_answer;

use crate::failure::{JsonResult, Params, json_body};

type Shared = State<Arc<App>>;

/// A file's text may be up to 10 MB, which JSON escaping can multiply.
const FILE_BODY_LIMIT: usize = 32 * 1024 * 1024;

pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/workspace/file", get(read))
        .route("/workspace/files", get(list))
        .route("/workspace/search", post(search))
        .route(
            "/workspace/write",
            post(write).layer(axum::extract::DefaultBodyLimit::max(FILE_BODY_LIMIT)),
        )
        .route(
            "/workspace/edit",
            post(edit).layer(axum::extract::DefaultBodyLimit::max(FILE_BODY_LIMIT)),
        )
}

/// `GET /api/workspace/file?path=src/App.jsx[&startLine=1&limit=100]`.
async fn read(State(app): Shared, Params(request): Params<ReadFile>) -> JsonResult<FileContent> {
    Ok(Json(files::read_file(app.workspace()?, request).await?))
}

/// `GET /api/workspace/files[?path=src]`; globs in the JSON form of `list_files` are for MCP.
async fn list(State(app): Shared, Params(request): Params<ListFiles>) -> JsonResult<FileList> {
    Ok(Json(files::list_files(app.workspace()?, request).await?))
}

async fn search(
    State(app): Shared,
    body: Result<Json<SearchFiles>, JsonRejection>,
) -> JsonResult<SearchMatches> {
    let request = json_body(
        body,
        "{\"pattern\", \"literal\"?, \"caseInsensitive\"?, \"globs\"?, \"path\"?, \"context\"?, \
         \"maxMatches\"?}",
    )?;
    Ok(Json(files::search_files(app.workspace()?, request).await?))
}

async fn write(
    State(app): Shared,
    body: Result<Json<WriteFile>, JsonRejection>,
) -> JsonResult<Value> {
    let request = json_body(body, "{\"path\", \"content\", \"page\"?}")?;
    Ok(Json(
        shown_answer(files::write_file(&app, app.workspace()?, request).await?)?.json,
    ))
}

async fn edit(
    State(app): Shared,
    body: Result<Json<EditFile>, JsonRejection>,
) -> JsonResult<Value> {
    let request = json_body(
        body,
        "{\"path\", \"oldText\", \"newText\", \"replaceAll\"?} or {\"path\", \"diff\"}, and \
         \"expectedVersion\"?, \"page\"?",
    )?;
    Ok(Json(
        shown_answer(files::edit_file(&app, app.workspace()?, request).await?)?.json,
    ))
}
