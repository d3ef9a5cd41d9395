//! Failures as the REST API reports them: the status the error's [`ErrorKind`] maps to, and
//! `{"error": message, "kind": kind}` — the same message the CLI prints and an MCP tool returns.

use axum::{
    Json,
    extract::rejection::JsonRejection,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde_json::json;

use devlens_app::{AppError, Classify, ErrorKind};

/// A failed request.
#[derive(Debug)]
pub struct Failure {
    status: StatusCode,
    kind: ErrorKind,
    message: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            status: status_of(kind),
            kind,
            message: message.into(),
        }
    }

    /// A request the caller can fix; the message says how.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// The same failure answered with `status` instead of its kind's (429, 413: statuses no
    /// domain error has).
    pub(crate) fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    fn of(error: &impl Classify) -> Self {
        Self::new(error.kind(), error.to_string())
    }
}

/// The HTTP status of a failure of `kind`.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    StatusCode::from_u16(kind.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({ "error": self.message, "kind": self.kind })),
        )
            .into_response()
    }
}

/// Every error of the application layer (each domain's error among them) becomes a failure
/// with its own kind and message.
macro_rules! failure_from {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for Failure {
            fn from(error: $t) -> Self {
                Self::of(&error)
            }
        }
    )*};
}

failure_from!(AppError, devlens_core::CoreError);

/// A body axum refused (`status`): a 400 that says what to send, except that a body too large
/// stays a 413.
pub fn rejected_body(status: StatusCode, message: String) -> Failure {
    let mut failure = Failure::bad_request(message);
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        failure.status = status;
    }
    failure
}

/// The JSON body, or a 400 that says what was expected.
pub fn json_body<T>(body: Result<Json<T>, JsonRejection>, expected: &str) -> Result<T, Failure> {
    body.map(|Json(b)| b).map_err(|e| {
        rejected_body(
            e.status(),
            format!("{}. Send a JSON body: {expected}", e.body_text()),
        )
    })
}

/// What a handler returns: the result as JSON, or a failure.
pub type JsonResult<T> = Result<Json<T>, Failure>;

/// A JSON body whose refusal (malformed, wrong types, wrong content type) is a [`Failure`] like
/// every other error, not axum's plain-text rejection.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> axum::extract::FromRequest<S> for Body<T> {
    type Rejection = Failure;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Failure> {
        json_body(
            Json::<T>::from_request(req, state).await,
            "see docs/http-api.md",
        )
        .map(Body)
    }
}

/// Query parameters whose refusal is a [`Failure`] (see [`Body`]).
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> axum::extract::FromRequestParts<S>
    for Params<T>
{
    type Rejection = Failure;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Failure> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(q)| Params(q))
            .map_err(|e| {
                Failure::bad_request(format!(
                    "{}. Query parameters are listed in docs/http-api.md",
                    e.body_text()
                ))
            })
    }
}
