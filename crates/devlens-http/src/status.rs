//! `GET /api/status`: what the server has loaded and stored — the embedding model and its
//! engine, the API projects' vectors, the docs libraries' chunks, the knowledge base's
//! solutions — for the dev panel's Status page.

use std::sync::Arc;

use axum::{Router, extract::State, http::HeaderMap, response::Response, routing::get};

use devlens_app::App;

use crate::browser::answer;
use crate::failure::Failure;

pub(crate) fn routes(app: Arc<App>) -> Router {
    Router::new()
        .route("/api/status", get(status))
        .with_state(app)
}

/// JSON, or the compact text with `Accept: text/plain`.
async fn status(State(app): State<Arc<App>>, headers: HeaderMap) -> Result<Response, Failure> {
    Ok(answer(&devlens_app::status::status(&app).await)?.respond(&headers))
}
