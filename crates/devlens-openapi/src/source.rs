//! Where a spec comes from: a file or an http(s) URL.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use url::Url;

use crate::OpenApiError;

/// The location of a spec, as given by the user.
///
/// `Display` and [`SpecSource::location`] give the location for people and logs. For URLs they are
/// redacted: a password in the URL and the values of query parameters that look like credentials
/// (`token`, `key`, `signature`, ...) become `***`, because errors and status output must never
/// carry secrets. Fetching uses the real URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SpecSource {
    /// A local file; relative paths are relative to the current directory.
    File(PathBuf),
    /// An `http://` or `https://` URL.
    Url(Url),
}

impl SpecSource {
    /// Reads a location string: `http(s)://...` is a URL, anything else a file path.
    ///
    /// `file://` URLs are accepted as paths; other schemes (`ftp:`, ...) are refused rather than
    /// being taken for odd file names. Windows drive letters (`C:\specs\a.json`) stay paths.
    pub fn parse(input: &str) -> Result<SpecSource, OpenApiError> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err(OpenApiError::InvalidSource {
                input: input.to_string(),
                reason: "it is empty".into(),
            });
        }
        let lower = trimmed.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Url::parse(trimmed).map(SpecSource::Url).map_err(|e| {
                OpenApiError::InvalidSource {
                    input: redact_str(trimmed),
                    reason: format!("not a valid URL ({e})"),
                }
            });
        }
        if lower.starts_with("file://") {
            return Url::parse(trimmed)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .map(SpecSource::File)
                .ok_or_else(|| OpenApiError::InvalidSource {
                    input: trimmed.to_string(),
                    reason: "not a valid file:// URL".into(),
                });
        }
        if let Some((scheme, _)) = trimmed.split_once("://") {
            let looks_like_scheme = !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
            if looks_like_scheme {
                return Err(OpenApiError::InvalidSource {
                    input: redact_str(trimmed),
                    reason: format!("the `{scheme}` scheme is not supported"),
                });
            }
        }
        Ok(SpecSource::File(PathBuf::from(trimmed)))
    }

    /// The location for display: the path, or the redacted URL.
    pub fn location(&self) -> String {
        match self {
            SpecSource::File(p) => p.display().to_string(),
            SpecSource::Url(u) => redact_url(u),
        }
    }

    /// The file path, when this is a file.
    pub fn as_path(&self) -> Option<&Path> {
        match self {
            SpecSource::File(p) => Some(p),
            SpecSource::Url(_) => None,
        }
    }
}

impl fmt::Display for SpecSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.location())
    }
}

impl std::str::FromStr for SpecSource {
    type Err = OpenApiError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SpecSource::parse(s)
    }
}

/// Query parameter names whose values are treated as secrets.
const SECRET_PARAMS: &[&str] = &[
    "token",
    "access_token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "password",
    "pass",
    "sig",
    "signature",
    "auth",
    "code",
    "client_secret",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
];

/// A URL as it may be shown: no password, no credential-looking query values.
pub(crate) fn redact_url(url: &Url) -> String {
    let mut shown = url.clone();
    if shown.password().is_some() {
        // Only fails for URLs that cannot have credentials, which this one evidently can.
        let _ = shown.set_password(Some("***"));
    }
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let lower = k.to_ascii_lowercase();
                let secret = SECRET_PARAMS.iter().any(|s| lower == *s)
                    || lower.contains("token")
                    || lower.contains("secret")
                    || lower.contains("password");
                let v = if secret { "***".into() } else { v.into_owned() };
                (k.into_owned(), v)
            })
            .collect();
        shown.query_pairs_mut().clear().extend_pairs(pairs);
    }
    shown.to_string()
}

/// Redacts a string that may or may not parse as a URL.
pub(crate) fn redact_str(s: &str) -> String {
    match Url::parse(s) {
        Ok(u) => redact_url(&u),
        Err(_) => s.split(['?', '#']).next().unwrap_or(s).to_string(),
    }
}

/// What a file looked like when it was read: enough to notice that it changed without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

impl Stamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            modified: meta.modified().ok(),
            len: meta.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths_are_told_apart() {
        assert!(matches!(
            SpecSource::parse("https://example.com/openapi.json").unwrap(),
            SpecSource::Url(_)
        ));
        assert!(matches!(
            SpecSource::parse("HTTP://example.com/a.yaml").unwrap(),
            SpecSource::Url(_)
        ));
        assert_eq!(
            SpecSource::parse("specs/petstore.yaml").unwrap(),
            SpecSource::File(PathBuf::from("specs/petstore.yaml"))
        );
        assert_eq!(
            SpecSource::parse("C:\\specs\\a.json").unwrap(),
            SpecSource::File(PathBuf::from("C:\\specs\\a.json"))
        );
        assert_eq!(
            SpecSource::parse("file:///tmp/a.json").unwrap(),
            SpecSource::File(PathBuf::from("/tmp/a.json"))
        );
    }

    #[test]
    fn bad_locations_are_refused_with_a_reason() {
        let e = SpecSource::parse("   ").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = SpecSource::parse("ftp://example.com/a.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`ftp` scheme is not supported"), "{e}");
        let e = SpecSource::parse("http://exa mple.com/")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a valid URL"), "{e}");
    }

    #[test]
    fn display_never_shows_secrets() {
        let s = SpecSource::parse("https://bob:hunter2@api.example.com/spec.json?token=abc&v=2")
            .unwrap();
        let shown = s.to_string();
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("abc"), "{shown}");
        assert!(shown.contains("v=2"), "{shown}");
        assert_eq!(s.location(), shown);
        let plain = SpecSource::parse("https://api.example.com/spec.json").unwrap();
        assert_eq!(plain.to_string(), "https://api.example.com/spec.json");
    }
}
