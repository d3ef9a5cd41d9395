//! The one error type of this crate. Every message is shown to a person or an agent as is, so
//! each says what is wrong and what to do next.

use std::path::PathBuf;

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

    #[error(
        "the docs registry {} failed: {message}. Nothing was changed; if this repeats, move the \
         file away and ingest the libraries again.", path.display()
    )]
    Store { path: PathBuf, message: String },

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

impl DocsError {
    /// Whether the caller asked for something wrong (as opposed to a failure of devlens or its
    /// storage): maps to HTTP 4xx and to MCP tool errors the model can fix.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            Self::InvalidInput(_)
                | Self::InvalidId { .. }
                | Self::UnknownLibrary { .. }
                | Self::UnknownVersion { .. }
                | Self::NoResults { .. }
                | Self::NothingToIngest { .. }
        )
    }

    /// Whether the thing asked for does not exist (HTTP 404).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Self::UnknownLibrary { .. } | Self::UnknownVersion { .. } | Self::NoResults { .. }
        )
    }
}
