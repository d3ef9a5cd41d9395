//! A saved solution, what a caller sends to create or change one, and the export file.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::KbError;

/// Longest title accepted (characters): a title is a line, not a document.
pub(crate) const MAX_TITLE_CHARS: usize = 500;
/// Longest text accepted (bytes): a pasted page fits, a database dump does not.
pub(crate) const MAX_TEXT_BYTES: usize = 1_000_000;
/// Most tags on one solution.
pub(crate) const MAX_TAGS: usize = 32;

/// A solution as stored, listed, exported and imported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Solution {
    pub id: String,
    pub title: String,
    /// Where it came from (a Stack Overflow answer, an issue, a wiki page), if anywhere.
    pub url: Option<String>,
    pub text: String,
    /// A one-line summary, when the author gave one.
    pub summary: Option<String>,
    pub tags: Vec<String>,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub updated_at: String,
}

/// The fields of a new solution.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewSolution {
    pub title: String,
    pub url: Option<String>,
    pub text: String,
    pub summary: Option<String>,
    pub tags: Vec<String>,
}

/// Changes to a stored solution: `None` keeps a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SolutionPatch {
    pub title: Option<String>,
    /// `Some(None)` removes the URL.
    pub url: Option<Option<String>>,
    pub text: Option<String>,
    /// `Some(None)` removes the summary.
    pub summary: Option<Option<String>>,
    pub tags: Option<Vec<String>>,
}

impl SolutionPatch {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// What `devlens kb export` writes and `import` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportFile {
    pub version: u32,
    pub solutions: Vec<Solution>,
}

/// The export format's version.
pub const EXPORT_VERSION: u32 = 1;

/// Normalises and checks the fields every solution must have; the error says which one is wrong.
pub(crate) fn clean(new: NewSolution) -> Result<NewSolution, KbError> {
    let title = one_line(&new.title);
    if title.is_empty() {
        return Err(invalid(
            "the title is empty: give the solution a short title, e.g. \"Fix CORS preflight on PUT\"",
        ));
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(invalid(format!(
            "the title is longer than {MAX_TITLE_CHARS} characters: keep it to a line and put the \
             rest in the text"
        )));
    }
    if new.text.trim().is_empty() {
        return Err(invalid(
            "the text is empty: pass the solution itself (--text TEXT or --file F)",
        ));
    }
    if new.text.len() > MAX_TEXT_BYTES {
        return Err(invalid(format!(
            "the text is {} bytes; the limit is {MAX_TEXT_BYTES}: save the part that solves the \
             problem and link the rest with --url",
            new.text.len()
        )));
    }
    let url = new
        .url
        .map(|u| u.trim().to_string())
        .filter(|u| !u.is_empty());
    if let Some(url) = &url
        && (url.chars().any(char::is_whitespace) || url.len() > 4096)
    {
        return Err(invalid(format!(
            "the url `{url}` is not a URL (it has spaces or is very long)"
        )));
    }
    let summary = new.summary.map(|s| one_line(&s)).filter(|s| !s.is_empty());
    Ok(NewSolution {
        title,
        url,
        text: new.text.trim_end().to_string(),
        summary,
        tags: clean_tags(new.tags)?,
    })
}

/// Tags: trimmed, lower-cased, `#` dropped, duplicates removed, order kept.
pub(crate) fn clean_tags(tags: Vec<String>) -> Result<Vec<String>, KbError> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        let tag = tag.trim().trim_start_matches('#').trim().to_lowercase();
        if tag.is_empty() || out.contains(&tag) {
            continue;
        }
        if tag.chars().count() > 64 || tag.contains(',') {
            return Err(invalid(format!(
                "the tag `{tag}` is not a tag: tags are short words, separated by commas"
            )));
        }
        out.push(tag);
    }
    if out.len() > MAX_TAGS {
        return Err(invalid(format!(
            "{} tags; at most {MAX_TAGS} are kept per solution",
            out.len()
        )));
    }
    Ok(out)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn invalid(message: impl Into<String>) -> KbError {
    KbError::InvalidInput(message.into())
}

/// Checks an id given by a caller (import, get, delete): what `new_id` makes, or what another
/// tool exported — letters, digits, `-`, `_`, at most 64.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A fresh id: 12 hex digits of a hash of the content, the time and a process-wide counter, so
/// two saves in the same nanosecond still differ.
pub(crate) fn new_id(title: &str, text: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut hash = Sha256::new();
    hash.update(nanos.to_le_bytes());
    hash.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    hash.update(std::process::id().to_le_bytes());
    hash.update(title.as_bytes());
    hash.update(text.as_bytes());
    hex::encode(&hash.finalize()[..6])
}

/// Whether `ts` looks like the RFC 3339 timestamps devlens writes (`2026-03-02T10:15:00Z`, or
/// with fractional seconds or an offset).
pub(crate) fn valid_timestamp(ts: &str) -> bool {
    let b = ts.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b[10] == b'T' || b[10] == b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaning_trims_and_explains_what_is_missing() {
        let ok = clean(NewSolution {
            title: "  Fix\n CORS  ".into(),
            url: Some("  ".into()),
            text: "body\n\n".into(),
            summary: Some(" ".into()),
            tags: vec!["CSS".into(), "#css".into(), " layout ".into(), "".into()],
        })
        .unwrap();
        assert_eq!(ok.title, "Fix CORS");
        assert_eq!(ok.url, None);
        assert_eq!(ok.text, "body");
        assert_eq!(ok.summary, None);
        assert_eq!(ok.tags, vec!["css", "layout"]);

        let err = clean(NewSolution {
            title: "t".into(),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("--text"), "{err}");
        let err = clean(NewSolution {
            text: "x".into(),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("title is empty"), "{err}");
    }

    #[test]
    fn ids_are_fresh_and_checked() {
        let a = new_id("t", "x");
        let b = new_id("t", "x");
        assert_ne!(a, b);
        assert!(valid_id(&a));
        assert!(!valid_id("a b"));
        assert!(!valid_id(""));
        assert!(valid_timestamp("2026-03-02T10:15:00Z"));
        assert!(valid_timestamp("2026-03-02T10:15:00.123+02:00"));
        assert!(!valid_timestamp("yesterday"));
    }
}
