//! The two seams every surface shares: what a result looks like ([`Report`]) and what kind of
//! failure an error is ([`ErrorKind`], through [`Classify`]).
//!
//! Domain crates implement them on their own types; the CLI, the MCP server and the HTTP API are
//! generic over them. So one result prints the same compact text on the command line and in a
//! tool reply and serialises to the same JSON for `--json`, `structuredContent` and REST; one
//! error maps to one HTTP status, one exit code and an MCP `isError` reply, decided here once.

use serde::Serialize;

/// A result a person or an agent reads: serializable for programs, compact text for reading.
///
/// The text is what agents pay tokens for, so it says what matters in as few lines as it can;
/// the serialized form carries every field.
pub trait Report: Serialize {
    /// The compact text of this result.
    fn to_text(&self) -> String;
}

impl<T: Report + ?Sized> Report for &T {
    fn to_text(&self) -> String {
        (**self).to_text()
    }
}

impl<T: Report + ?Sized> Report for Box<T> {
    fn to_text(&self) -> String {
        (**self).to_text()
    }
}

/// What kind of failure an error is. Every domain error maps to one, so each surface decides
/// its status code, exit code or reply once for all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// The request is malformed, out of range or ambiguous: the caller can fix it.
    InvalidInput,
    /// The caller did not prove who it is (a wrong pairing token, no bearer token).
    Unauthorized,
    /// The caller is known but may not do this (a read-only token asking for a write).
    Forbidden,
    /// Something named (a project, an operation, a library, a solution, a tab) does not exist.
    NotFound,
    /// The request clashes with what is going on (an index being built, an id taken).
    Conflict,
    /// The request needs a state that does not hold yet (no browser connected, a dialog open).
    Precondition,
    /// The input is well-formed but cannot be processed (a spec that is not OpenAPI, an element
    /// that cannot take the action, a page that failed to load).
    Unprocessable,
    /// A service devlens relies on is missing or not ready (the embedding model, Chrome, Redis).
    Unavailable,
    /// Something devlens called answered with a failure (a spec URL, an embedding API, an LLM).
    Upstream,
    /// Something awaited did not happen in time.
    Timeout,
    /// The thing a call was about went away (a closed tab, a crashed browser).
    Gone,
    /// A fault of devlens or of the machine (a file that cannot be written, a damaged index).
    Internal,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 12] = [
        Self::InvalidInput,
        Self::Unauthorized,
        Self::Forbidden,
        Self::NotFound,
        Self::Conflict,
        Self::Precondition,
        Self::Unprocessable,
        Self::Unavailable,
        Self::Upstream,
        Self::Timeout,
        Self::Gone,
        Self::Internal,
    ];

    /// The HTTP status code of a failure of this kind.
    pub fn http_status(self) -> u16 {
        match self {
            Self::InvalidInput => 400,
            Self::Unauthorized => 401,
            Self::Forbidden => 403,
            Self::NotFound => 404,
            Self::Conflict | Self::Precondition => 409,
            Self::Gone => 410,
            Self::Unprocessable => 422,
            Self::Internal => 500,
            Self::Upstream => 502,
            Self::Unavailable => 503,
            Self::Timeout => 504,
        }
    }

    /// The exit status of a command that failed this way: 2 for input the user can fix (as for
    /// a command line clap refuses), 3 for something named that does not exist, 4 for a missing
    /// or failing service (a retry or an install may help), 1 for the rest.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::InvalidInput | Self::Unauthorized | Self::Forbidden => 2,
            Self::NotFound => 3,
            Self::Unavailable | Self::Upstream | Self::Timeout => 4,
            Self::Conflict
            | Self::Precondition
            | Self::Unprocessable
            | Self::Gone
            | Self::Internal => 1,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalidInput",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::NotFound => "notFound",
            Self::Conflict => "conflict",
            Self::Precondition => "precondition",
            Self::Unprocessable => "unprocessable",
            Self::Unavailable => "unavailable",
            Self::Upstream => "upstream",
            Self::Timeout => "timeout",
            Self::Gone => "gone",
            Self::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error that knows its [`ErrorKind`]. Its `Display` is the message a person or an agent
/// reads: what went wrong and what to do next.
pub trait Classify: std::fmt::Display {
    fn kind(&self) -> ErrorKind;
}

impl<T: Classify + ?Sized> Classify for &T {
    fn kind(&self) -> ErrorKind {
        (**self).kind()
    }
}

impl<T: Classify + ?Sized> Classify for Box<T> {
    fn kind(&self) -> ErrorKind {
        (**self).kind()
    }
}

impl Classify for crate::CoreError {
    fn kind(&self) -> ErrorKind {
        use crate::CoreError;
        match self {
            CoreError::UnknownProject { .. } => ErrorKind::NotFound,
            CoreError::NoActiveProject
            | CoreError::ProjectWithoutSpec { .. }
            | CoreError::InvalidProjectName { .. }
            | CoreError::ConfigSyntax { .. }
            | CoreError::ConfigSetting { .. }
            | CoreError::ProjectsSyntax { .. } => ErrorKind::InvalidInput,
            CoreError::ConfigEdit { .. } => ErrorKind::Unprocessable,
            CoreError::Read { .. } | CoreError::Write { .. } | CoreError::NoDataDir => {
                ErrorKind::Internal
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_status_an_exit_code_and_a_name() {
        let mut names = std::collections::HashSet::new();
        for kind in ErrorKind::ALL {
            let status = kind.http_status();
            assert!((400..600).contains(&status), "{kind}: {status}");
            assert!(kind.exit_code() >= 1, "{kind}");
            assert!(names.insert(kind.as_str()), "{kind} named twice");
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.as_str())
            );
        }
        // The caller's mistakes are 4xx, devlens' and its services' are 5xx.
        assert_eq!(ErrorKind::InvalidInput.http_status(), 400);
        assert!(ErrorKind::Unavailable.http_status() >= 500);
    }

    #[test]
    fn unknown_projects_are_not_found_and_a_missing_active_project_is_the_callers_to_fix() {
        let unknown = crate::CoreError::unknown_project("pets", &["petstore".into()]);
        assert_eq!(unknown.kind(), ErrorKind::NotFound);
        assert_eq!(
            crate::CoreError::NoActiveProject.kind(),
            ErrorKind::InvalidInput
        );
    }
}
