//! The one error type of this crate. Every message reaches a person or an agent as is, so each
//! says what is wrong and what to do next.

use std::path::PathBuf;

use devlens_core::{Classify, ErrorKind};

/// Everything that can go wrong with the knowledge base.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KbError {
    #[error("{0}")]
    InvalidInput(String),

    #[error(
        "no saved solution has the id `{id}`. List the ids with `devlens kb list` (or the \
         search_solutions tool)"
    )]
    UnknownSolution { id: String },

    #[error(
        "cannot import {source_name}: {problems}. Nothing was imported; the knowledge base is \
         unchanged. The file must be what `devlens kb export` writes: \
         {{\"version\":1,\"solutions\":[{{\"id\",\"title\",\"url\",\"text\",\"summary\",\"tags\",\
         \"createdAt\",\"updatedAt\"}}]}}"
    )]
    Import {
        source_name: String,
        problems: String,
    },

    #[error(
        "the knowledge base {} failed: {message}. Nothing was changed; if this repeats, export \
         what you can with `devlens kb export` and move the file away.", path.display()
    )]
    Store { path: PathBuf, message: String },

    #[error("the knowledge base database failed: {message}. Nothing was changed.")]
    Database { location: String, message: String },

    /// No embedder (no model, no key): the reason, as the embedder gave it.
    #[error("cannot embed: {0}")]
    EmbedderUnavailable(String),

    #[error("embedding failed: {0}")]
    Embed(#[from] devlens_embed::EmbedError),

    #[error("{0}")]
    Llm(String),
}

impl From<devlens_embed::ChatError> for KbError {
    fn from(e: devlens_embed::ChatError) -> Self {
        Self::Llm(e.to_string())
    }
}

impl Classify for KbError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidInput(_) | Self::Import { .. } => ErrorKind::InvalidInput,
            Self::UnknownSolution { .. } => ErrorKind::NotFound,
            Self::Store { .. } => ErrorKind::Internal,
            // Mostly an unreachable or busy server: worth trying again.
            Self::Database { .. } => ErrorKind::Unavailable,
            Self::EmbedderUnavailable(_) => ErrorKind::Unavailable,
            Self::Embed(e) if e.is_unavailable() => ErrorKind::Unavailable,
            Self::Embed(_) => ErrorKind::Upstream,
            Self::Llm(_) => ErrorKind::Upstream,
        }
    }
}
