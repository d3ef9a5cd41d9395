//! The one error type of this crate.
//!
//! Every message is shown to a person or an agent as is, so each one says what is wrong, where,
//! and what to do next. Locations are already redacted (see [`crate::SpecSource`]): no message
//! carries a password or a token from a URL.

use std::fmt;

use devlens_core::{Classify, ErrorKind};
use std::path::PathBuf;

/// Everything that can go wrong while loading or exploring a spec.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenApiError {
    /// The spec location given by the user cannot be understood at all.
    #[error("invalid spec location `{input}`: {reason}. Pass a file path or an http(s):// URL.")]
    InvalidSource { input: String, reason: String },

    /// The spec (or a document it references) is not on disk.
    #[error(
        "spec file not found: {}. Check the path (relative paths are resolved from the current directory) or pass an http(s) URL.",
        path.display()
    )]
    FileNotFound { path: PathBuf },

    /// The file exists but cannot be read (permissions, a directory, ...).
    #[error("cannot read spec file {}: {reason}. Check that it is a readable file.", path.display())]
    FileUnreadable { path: PathBuf, reason: String },

    /// No HTTP answer at all: DNS, connection refused, TLS, timeout.
    #[error(
        "cannot fetch {url}: {reason}. Check that the URL is right and the server is reachable."
    )]
    FetchFailed { url: String, reason: String },

    /// The server answered, but not with the document.
    #[error("{url} answered HTTP {status}. {hint}")]
    HttpStatus {
        url: String,
        status: u16,
        hint: &'static str,
    },

    /// The document is bigger than this crate is willing to hold in memory.
    #[error(
        "{location} is larger than {limit_mb} MB; devlens refuses to load it. Split the spec or point to a smaller one."
    )]
    TooLarge { location: String, limit_mb: u64 },

    /// Malformed JSON or YAML, with the position of the first problem.
    #[error(
        "{location} is not valid {format}: {message} at line {line}, column {column}. Fix the syntax there and load it again."
    )]
    Syntax {
        location: String,
        format: SyntaxFormat,
        line: usize,
        column: usize,
        message: String,
    },

    /// Well-formed JSON/YAML that is not an OpenAPI or Swagger document.
    #[error(
        "{location} is not an OpenAPI or Swagger document: {found}. Expected a top-level `openapi: 3.x` or `swagger: \"2.0\"` key; check that the URL or path points to the spec itself and not to a documentation page."
    )]
    NotOpenApi { location: String, found: String },

    /// An `openapi`/`swagger` key with a version this crate does not read.
    #[error(
        "{location} declares {declared}, which is not supported. Supported: Swagger 2.0, OpenAPI 3.0.x and 3.1.x; convert the spec to one of them."
    )]
    UnsupportedVersion { location: String, declared: String },

    /// A `$ref` to another document that cannot be loaded or followed at load time.
    #[error("cannot resolve $ref `{reference}` in {from}: {reason}")]
    UnresolvedRef {
        reference: String,
        from: String,
        reason: String,
    },

    /// The spec pulls in more external documents than the safety bound allows.
    #[error(
        "{location} references more than {limit} external documents; devlens stops there. Bundle the spec into one file (e.g. `redocly bundle`) and load that."
    )]
    TooManyDocuments { location: String, limit: usize },

    /// No operation has this operationId.
    #[error("unknown operationId `{id}`.{}", Suggestions(suggestions))]
    UnknownOperation {
        id: String,
        suggestions: Vec<String>,
    },

    /// No operation matches this method and path.
    #[error("no endpoint {method} {path}.{}", Suggestions(suggestions))]
    UnknownEndpoint {
        method: String,
        path: String,
        suggestions: Vec<String>,
    },

    /// No operation carries this tag.
    #[error("unknown tag `{tag}`.{}", Suggestions(suggestions))]
    UnknownTag {
        tag: String,
        suggestions: Vec<String>,
    },

    /// The outbound guard refused to fetch the spec or a document its `$ref`s name
    /// (devlens_core::outbound); the reason is its sentence, which says how to allow a private
    /// host where that is possible.
    #[error("{reason}")]
    FetchRefused { reason: String },

    /// A bug or a runtime failure (e.g. a panicked worker thread), never caused by the spec.
    #[error("internal error while loading {location}: {message}")]
    Internal { location: String, message: String },
}

/// Which syntax failed to parse; shown in [`OpenApiError::Syntax`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyntaxFormat {
    Json,
    Yaml,
}

impl fmt::Display for SyntaxFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SyntaxFormat::Json => "JSON",
            SyntaxFormat::Yaml => "YAML",
        })
    }
}

/// Renders the "did you mean" tail of the unknown-name errors.
struct Suggestions<'a>(&'a [String]);

impl fmt::Display for Suggestions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            [] => f.write_str(" List the tags and their endpoints to find the right one."),
            [one] => write!(f, " Did you mean `{one}`?"),
            many => {
                f.write_str(" Did you mean one of: ")?;
                for (i, s) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{s}`")?;
                }
                f.write_str("?")
            }
        }
    }
}

/// Hint for an HTTP status, so the user knows whether to fix the URL, the credentials or wait.
pub(crate) fn http_status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => {
            "The server wants credentials: download the spec with them and load the file instead."
        }
        404 | 410 => "Check the URL: the spec is not there.",
        429 => "The server is rate limiting; try again in a minute.",
        500..=599 => "The server failed; try again later or load a local copy.",
        _ => "Check the URL and that it serves the spec itself.",
    }
}

impl Classify for OpenApiError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidSource { .. } => ErrorKind::InvalidInput,
            Self::FileNotFound { .. }
            | Self::UnknownOperation { .. }
            | Self::UnknownEndpoint { .. }
            | Self::UnknownTag { .. } => ErrorKind::NotFound,
            Self::FetchFailed { .. } | Self::HttpStatus { .. } => ErrorKind::Upstream,
            Self::FetchRefused { .. } => ErrorKind::Forbidden,
            Self::Internal { .. } => ErrorKind::Internal,
            // The spec exists but cannot be used: malformed, not OpenAPI, a broken `$ref`.
            _ => ErrorKind::Unprocessable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_render_as_a_question() {
        let e = OpenApiError::UnknownOperation {
            id: "issues/crate".into(),
            suggestions: vec!["issues/create".into()],
        };
        assert_eq!(
            e.to_string(),
            "unknown operationId `issues/crate`. Did you mean `issues/create`?"
        );
        let e = OpenApiError::UnknownTag {
            tag: "x".into(),
            suggestions: vec![],
        };
        assert!(e.to_string().contains("List the tags"));
        let e = OpenApiError::UnknownEndpoint {
            method: "GET".into(),
            path: "/a".into(),
            suggestions: vec!["GET /b".into(), "POST /a".into()],
        };
        assert_eq!(
            e.to_string(),
            "no endpoint GET /a. Did you mean one of: `GET /b`, `POST /a`?"
        );
    }

    #[test]
    fn syntax_error_names_line_and_column() {
        let e = OpenApiError::Syntax {
            location: "spec.json".into(),
            format: SyntaxFormat::Json,
            line: 3,
            column: 7,
            message: "expected `,`".into(),
        };
        assert_eq!(
            e.to_string(),
            "spec.json is not valid JSON: expected `,` at line 3, column 7. Fix the syntax there and load it again."
        );
    }
}
