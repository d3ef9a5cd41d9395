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

/// Every domain error becomes a failure with its own kind and message.
macro_rules! failure_from {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for Failure {
            fn from(error: $t) -> Self {
                Self::of(&error)
            }
        }
    )*};
}

failure_from!(
    AppError,
    devlens_core::CoreError,
    devlens_openapi::explorer::ExplorerError,
    devlens_docs::DocsError,
    devlens_kb::KbError,
    devlens_workspace::WorkspaceError,
    devlens_browser::BrowserError,
);

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
