//! The one error type of this crate. Every message reaches a person or an agent as is, so each
//! says what is wrong and what to do next — for a path refused, where files may go.

use devlens_core::{Classify, ErrorKind};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// A path that may not be used: outside the allowed places, malformed, or into `.git/`.
    #[error("{message}")]
    Refused { message: String },

    /// Arguments that do not make sense.
    #[error("{0}")]
    InvalidInput(String),

    #[error("{path} does not exist. {hint}")]
    NotFound { path: String, hint: String },

    /// A file that is not text.
    #[error(
        "{path} is a binary file ({kind}, {bytes} bytes): read_file shows text only. Open it \
         with a tool for {kind} files, or read a text file beside it."
    )]
    Binary {
        path: String,
        kind: String,
        bytes: u64,
    },

    /// The workspace was opened read-only.
    #[error(
        "the workspace is read-only (the server was started with --read-only-workspace): {path} \
         was not written. Restart without it to let tools change files."
    )]
    ReadOnly { path: String },

    /// An edit whose text is not in the file, or is there more than once.
    #[error("{0}")]
    EditMismatch(String),

    /// The file changed on disk after it was read through devlens.
    #[error(
        "{path} changed on disk since it was last read (by an editor, a build or another \
         agent); nothing was written. Read it again and redo the edit on what it holds now."
    )]
    Changed { path: String },

    #[error("cannot {action} {path}: {reason}")]
    Io {
        action: &'static str,
        path: String,
        reason: String,
    },
}

impl WorkspaceError {
    pub(crate) fn refused(message: impl Into<String>) -> Self {
        Self::Refused {
            message: message.into(),
        }
    }

    pub(crate) fn io(action: &'static str, path: &str, e: &std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_string(),
            reason: e.to_string(),
        }
    }
}

impl Classify for WorkspaceError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::Refused { .. }
            | Self::InvalidInput(_)
            | Self::Binary { .. }
            | Self::EditMismatch(_) => ErrorKind::InvalidInput,
            Self::NotFound { .. } => ErrorKind::NotFound,
            Self::ReadOnly { .. } => ErrorKind::Precondition,
            Self::Changed { .. } => ErrorKind::Conflict,
            Self::Io { .. } => ErrorKind::Internal,
        }
    }
}
