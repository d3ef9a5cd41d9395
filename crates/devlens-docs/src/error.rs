//! The one error type of this crate. Every message is shown to a person or an agent as is, so
//! each says what is wrong and what to do next.

use std::path::PathBuf;

use devlens_core::{Classify, ErrorKind};

/// Everything that can go wrong while ingesting or querying library docs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocsError {
    #[error("{0}")]
    InvalidInput(String),

    #[error(
        "invalid library id `{id}`: use a slug like `react` or a path like `/facebook/react` \
         (lower-case letters, digits, `.`, `_`, `-`, segments separated by `/`)"
    )]
    InvalidId { id: String },

    #[error("{}", unknown_library_message(id, closest))]
    UnknownLibrary { id: String, closest: Vec<String> },

    #[error(
        "library `{id}` has no version `{version}`; it has: {}. Pass one of them, or omit the \
         version for the latest", available.join(", ")
    )]
    UnknownVersion {
        id: String,
        version: String,
        available: Vec<String>,
    },

    #[error("no documentation found for this query in `{library}`. Try: {}", suggestions.join("; "))]
    NoResults {
        library: String,
        suggestions: Vec<String>,
    },

    #[error("cannot read {}: {reason}. Check that it exists and is readable.", path.display())]
    Read { path: PathBuf, reason: String },

    #[error(
        "found no documentation files in {}: devlens reads .md, .mdx, .markdown, .rst, .txt, \
         .html and .htm files. Point --path at the folder holding the docs.", path.display()
    )]
    NothingToIngest { path: PathBuf },

    #[error("cannot fetch {url}: {reason}. Check the URL, or download the docs and use --path.")]
    Fetch { url: String, reason: String },

    /// The outbound guard refused a request of the crawl (devlens_core::outbound): the reason is
    /// its sentence, which says how to allow a private host where that is possible.
    #[error("{0}")]
    Refused(String),

    #[error(
        "the docs registry {} failed: {message}. Nothing was changed; if this repeats, move the \
         file away and ingest the libraries again.", path.display()
    )]
    Store { path: PathBuf, message: String },

    #[error("the docs database failed: {message}. Nothing was changed.")]
    Database { location: String, message: String },

    #[error("embedding the docs failed: {0}")]
    Embed(#[from] devlens_embed::EmbedError),

    #[error("search failed: {0}")]
    Search(#[from] devlens_search::SearchError),
}

fn unknown_library_message(id: &str, closest: &[String]) -> String {
    if closest.is_empty() {
        format!(
            "library `{id}` not found. List the libraries with `devlens docs list` (or \
             resolve_library_id), or ingest it with `devlens docs add {id} --path DIR`"
        )
    } else {
        format!(
            "library `{id}` not found. Closest ids: {}. Use one of them, or ingest it with \
             `devlens docs add {id} --path DIR`",
            closest.join(", ")
        )
    }
}

impl Classify for DocsError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidInput(_) | Self::InvalidId { .. } | Self::NothingToIngest { .. } => {
                ErrorKind::InvalidInput
            }
            // A folder the caller named that cannot be read is theirs to fix.
            Self::Read { .. } => ErrorKind::InvalidInput,
            Self::UnknownLibrary { .. } | Self::UnknownVersion { .. } | Self::NoResults { .. } => {
                ErrorKind::NotFound
            }
            Self::Fetch { .. } => ErrorKind::Upstream,
            Self::Refused(_) => ErrorKind::Forbidden,
            Self::Embed(e) if e.is_unavailable() => ErrorKind::Unavailable,
            Self::Embed(_) => ErrorKind::Upstream,
            Self::Store { .. } | Self::Search(_) => ErrorKind::Internal,
            // Mostly an unreachable or busy server: worth trying again.
            Self::Database { .. } => ErrorKind::Unavailable,
        }
    }
}
