//! The errors of checking and calling an API, beside those of reading its spec.

use devlens_core::{Classify, ErrorKind};
use devlens_openapi::OpenApiError;

/// What can go wrong while checking traffic, building or sending a call, or writing a sample.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// The spec could not answer (an unknown operation, a broken `$ref`, …).
    #[error(transparent)]
    Spec(#[from] OpenApiError),

    /// A HAR file that cannot be read.
    #[error(
        "{location} is not a readable HAR file: {reason}. Save it from DevTools (Network panel → Export HAR) or another HAR 1.2 recorder."
    )]
    InvalidHar { location: String, reason: String },

    /// A call whose arguments break the operation's contract; `contract` is the endpoint's
    /// details as text.
    #[error("{endpoint}: {}.\n\nThe endpoint's contract:\n{contract}", problems.join("; "))]
    InvalidCall {
        endpoint: String,
        problems: Vec<String>,
        contract: String,
    },

    /// No base URL to send a call to.
    #[error(
        "no base URL for {endpoint}: the spec has no absolute server URL. Pass baseUrl, set `base_url` on the project in devlens.toml, or set {env}."
    )]
    NoBaseUrl { endpoint: String, env: String },

    /// The call was sent and got no HTTP answer.
    #[error(
        "{method} {url} failed: {reason}. Check that the API is running and the base URL is right."
    )]
    CallFailed {
        method: String,
        url: String,
        reason: String,
    },

    /// The outbound guard refused where a call would go (devlens_core::outbound); the reason
    /// says why and how to allow a private host.
    #[error("the call was not sent: {reason}")]
    CallRefused { reason: String },
}

impl Classify for ContractError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::Spec(e) => e.kind(),
            Self::InvalidHar { .. } => ErrorKind::Unprocessable,
            Self::InvalidCall { .. } | Self::NoBaseUrl { .. } => ErrorKind::InvalidInput,
            Self::CallFailed { .. } => ErrorKind::Upstream,
            Self::CallRefused { .. } => ErrorKind::Forbidden,
        }
    }
}
