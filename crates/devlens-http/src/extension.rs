//! REST endpoints for pairing the devlens Chrome extension, under `/api/extension`.
//!
//! `POST /api/extension/pair` is the one call an unpaired extension may make (the guard lets it
//! through): it carries the token, the browser adds the extension's `Origin`. The rest serve the
//! panel's Extension page: the token and the paired origins, a new token, a revocation. The
//! logic is devlens-app's `ExtensionPairing`; nothing here logs a token or an origin.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{State, rejection::JsonRejection},
    http::{HeaderMap, header},
    routing::{get, post},
};
use serde::Deserialize;

use devlens_app::{
    App,
    extension::{PairingChange, PairingStatus},
};

use crate::failure::{Failure, JsonResult, json_body};

type Shared = State<Arc<App>>;

pub(crate) fn routes(app: Arc<App>) -> Router {
    Router::new()
        .route("/api/extension", get(status))
        .route("/api/extension/pair", post(pair))
        .route("/api/extension/token", post(new_token))
        .route("/api/extension/revoke", post(revoke))
        .with_state(app)
}

/// `GET /api/extension`: the pairing token and the paired origins.
async fn status(State(app): Shared, headers: HeaderMap) -> JsonResult<PairingStatus> {
    not_from_an_extension(&headers)?;
    Ok(Json(app.extension().status()?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PairBody {
    token: String,
}

/// `POST /api/extension/pair` `{"token"}` from the extension: pairs its origin; 401 when the
/// token is wrong.
async fn pair(
    State(app): Shared,
    headers: HeaderMap,
    request: Result<Json<PairBody>, JsonRejection>,
) -> JsonResult<PairingChange> {
    let body = json_body(request, "{\"token\"}")?;
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    Ok(Json(app.extension().pair(origin, &body.token)?))
}

/// `POST /api/extension/token`: a new token (paired extensions stay paired).
async fn new_token(State(app): Shared, headers: HeaderMap) -> JsonResult<PairingStatus> {
    not_from_an_extension(&headers)?;
    Ok(Json(app.extension().new_token()?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RevokeBody {
    origin: String,
}

/// `POST /api/extension/revoke` `{"origin"}`: the guard refuses that extension again.
async fn revoke(
    State(app): Shared,
    headers: HeaderMap,
    request: Result<Json<RevokeBody>, JsonRejection>,
) -> JsonResult<PairingChange> {
    not_from_an_extension(&headers)?;
    let body = json_body(request, "{\"origin\"}")?;
    Ok(Json(app.extension().revoke(&body.origin)?))
}

/// The token and the pairings are the user's to manage, from the panel or the CLI: a paired
/// extension may not read the token or unpair others.
fn not_from_an_extension(headers: &HeaderMap) -> Result<(), Failure> {
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if origin.starts_with("chrome-extension://") {
        return Err(Failure::bad_request(
            "Pairing is managed on the devlens panel's Extension page or with `devlens extension`, \
             not by an extension.",
        ));
    }
    Ok(())
}
