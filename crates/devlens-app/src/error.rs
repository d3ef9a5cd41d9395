//! The one error of the application layer: any domain's error, or a request that does not make
//! sense before any domain is asked. Its message is the domain's, word for word; its kind is
//! what the surfaces map to a status, an exit code or an MCP error.

use devlens_core::{Classify, CoreError, ErrorKind};

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The request itself is wrong (missing or conflicting arguments); the message says how to
    /// call it right.
    #[error("{0}")]
    InvalidInput(String),
    #[error(transparent)]
    Config(#[from] CoreError),
    #[error(transparent)]
    Api(#[from] devlens_openapi::explorer::ExplorerError),
    #[error(transparent)]
    Contract(#[from] devlens_contract::ContractError),
    #[error(transparent)]
    Docs(#[from] devlens_docs::DocsError),
    #[error(transparent)]
    Kb(#[from] devlens_kb::KbError),
    #[error(transparent)]
    Browser(#[from] devlens_browser::BrowserError),
    #[error(transparent)]
    Workspace(#[from] devlens_workspace::WorkspaceError),
    /// A failure of the application layer's own (reading a saved artifact, ...).
    #[error("{message}")]
    Failed { kind: ErrorKind, message: String },
}

impl AppError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidInput(message.into())
    }

    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self::Failed {
            kind,
            message: message.into(),
        }
    }
}

impl Classify for AppError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidInput(_) => ErrorKind::InvalidInput,
            Self::Config(e) => e.kind(),
            Self::Api(e) => e.kind(),
            Self::Contract(e) => e.kind(),
            Self::Docs(e) => e.kind(),
            Self::Kb(e) => e.kind(),
            Self::Browser(e) => e.kind(),
            Self::Workspace(e) => e.kind(),
            Self::Failed { kind, .. } => *kind,
        }
    }
}
