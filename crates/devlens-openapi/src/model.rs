//! The small, owned view of a spec that listing and search work on: one [`Operation`] per
//! method of each path, extracted once at load time. Details are rendered on demand from the
//! document (see [`crate::details`]), so these stay light even for 15,000-operation specs.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::compact::{METHODS, path_item_outline};
use crate::resolve::{DocSet, PathItem, ROOT};

/// One operation (a method on a path), as listed and searched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// Uppercase HTTP method.
    pub method: String,
    /// The path template exactly as the spec writes it (`/repos/{owner}/{repo}`).
    pub path: String,
    pub operation_id: Option<String>,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub deprecated: bool,
}

/// How a caller names an operation: by `operationId`, or by method and path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EndpointRef {
    OperationId(String),
    /// `method` is case-insensitive; `path` may differ from the spec in a trailing slash, in
    /// parameter names (`{id}` for `{userId}`) or be a concrete path (`/users/42`).
    MethodPath {
        method: String,
        path: String,
    },
}

impl EndpointRef {
    /// Reads what a person would type: `GET /pets/{id}` (method, whitespace, path) is a method
    /// and path, anything else an operationId.
    pub fn parse(input: &str) -> EndpointRef {
        let trimmed = input.trim();
        if let Some((method, path)) = trimmed.split_once(char::is_whitespace) {
            let path = path.trim();
            let is_method = METHODS.iter().any(|m| m.eq_ignore_ascii_case(method));
            if is_method && (path.starts_with('/') || path.contains("://")) {
                return EndpointRef::MethodPath {
                    method: method.to_ascii_uppercase(),
                    path: path.to_string(),
                };
            }
        }
        EndpointRef::OperationId(trimmed.to_string())
    }

    /// Shorthand for [`EndpointRef::MethodPath`].
    pub fn method_path(method: impl Into<String>, path: impl Into<String>) -> EndpointRef {
        EndpointRef::MethodPath {
            method: method.into(),
            path: path.into(),
        }
    }
}

impl fmt::Display for EndpointRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndpointRef::OperationId(id) => f.write_str(id),
            EndpointRef::MethodPath { method, path } => {
                write!(f, "{} {path}", method.to_ascii_uppercase())
            }
        }
    }
}

/// A tag with the number of operations that carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TagSummary {
    pub name: String,
    pub description: Option<String>,
    pub endpoints: usize,
}

/// One line of an endpoint list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointSummary {
    pub method: String,
    pub path: String,
    pub operation_id: Option<String>,
    pub summary: Option<String>,
}

impl From<&Operation> for EndpointSummary {
    fn from(op: &Operation) -> Self {
        EndpointSummary {
            method: op.method.clone(),
            path: op.path.clone(),
            operation_id: op.operation_id.clone(),
            summary: op.shown_summary(),
        }
    }
}

/// Characters of an operation's summary in lists, search hits and details: a summary is one
/// line, but nothing stops a spec from putting a page there, and a list repeats it per endpoint.
pub(crate) const SUMMARY_CHARS: usize = 300;

impl Operation {
    /// The summary as answers show it: at most [`SUMMARY_CHARS`] characters, cut with `…`
    /// (the full text stays in the spec; `description` is where specs put long prose).
    pub fn shown_summary(&self) -> Option<String> {
        self.summary
            .as_deref()
            .map(|s| crate::schema::truncate_chars(s, SUMMARY_CHARS))
    }
}

/// Tag under which operations without tags are listed.
pub(crate) const DEFAULT_TAG: &str = "default";

/// Every operation of the (normalised) document, in document order.
///
/// Path items that are `$ref`s are followed; ones that do not resolve are skipped here and show
/// up as no operations (the load step has already refused specs with broken external files).
pub(crate) fn extract_operations(docs: &DocSet) -> Vec<Operation> {
    let mut ops = Vec::new();
    for (path, item) in docs.path_items() {
        if path.starts_with("x-") {
            continue;
        }
        // A view per item: what it parses (a ref's target) goes once the item is listed.
        let view = docs.scratch_view();
        let outline;
        let item = match item {
            PathItem::Parsed(value) => value,
            PathItem::Piece(id) => {
                let Some(Ok(value)) = docs.piece_text(ROOT, id).map(path_item_outline) else {
                    tracing::debug!(path, "path item does not read back; skipped");
                    continue;
                };
                outline = value;
                &outline
            }
        };
        let Ok(item) = view.deref(item, ROOT) else {
            tracing::debug!(path, "path item $ref does not resolve; skipped");
            continue;
        };
        let Some(item) = item.value.as_object() else {
            continue;
        };
        for method in METHODS {
            let Some(op) = item.get(*method).and_then(Value::as_object) else {
                continue;
            };
            ops.push(Operation {
                method: method.to_ascii_uppercase(),
                path: path.to_string(),
                operation_id: text(op.get("operationId")),
                summary: text(op.get("summary")),
                description: text(op.get("description")),
                tags: op
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|tags| {
                        let mut out: Vec<String> = Vec::new();
                        for t in tags.iter().filter_map(Value::as_str).map(str::trim) {
                            if !t.is_empty() && !out.iter().any(|o| o == t) {
                                out.push(t.to_string());
                            }
                        }
                        out
                    })
                    .unwrap_or_default(),
                deprecated: op.get("deprecated").and_then(Value::as_bool) == Some(true),
            });
        }
    }
    ops
}

/// A trimmed, non-empty string field (numbers are accepted: YAML makes `operationId: 123` one).
pub fn text(v: Option<&Value>) -> Option<String> {
    let s = match v? {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    (!s.is_empty()).then_some(s)
}

/// The path as compared when the caller's path is not an exact match: parameter names erased,
/// no trailing slash, lowercase, no query string.
pub(crate) fn loose_path(path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or(path).trim();
    let mut out = String::with_capacity(path.len() + 1);
    if !path.starts_with('/') {
        out.push('/');
    }
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push('{');
            }
            '}' if in_param => {
                in_param = false;
                out.push('}');
            }
            _ if in_param => {}
            c => out.extend(c.to_lowercase()),
        }
    }
    while out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

/// Does a concrete path (`/users/42/repos`) fit a template (`/users/{id}/repos`)? Returns the
/// number of literal segments matched, so the most specific template can win.
pub fn template_match(template: &str, concrete: &str) -> Option<usize> {
    let t: Vec<&str> = template.trim_end_matches('/').split('/').collect();
    let c: Vec<&str> = concrete.trim_end_matches('/').split('/').collect();
    if t.len() != c.len() {
        return None;
    }
    let mut literal = 0;
    for (ts, cs) in t.iter().zip(&c) {
        if !ts.contains('{') {
            if !ts.eq_ignore_ascii_case(cs) {
                return None;
            }
            if !ts.is_empty() {
                literal += 1;
            }
        } else if !segment_glob(ts, cs) {
            return None;
        }
    }
    Some(literal)
}

/// Matches one segment with `{param}` placeholders (`{name}.{ext}` against `a.json`); each
/// placeholder matches one or more characters. Iterative, so no input can make it recurse.
fn segment_glob(template: &str, concrete: &str) -> bool {
    // Split the template into literal pieces between placeholders.
    let mut pieces: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        pieces.push(rest.get(..open).unwrap_or(""));
        let after = rest.get(open..).unwrap_or("");
        rest = match after.find('}') {
            Some(close) => after.get(close + 1..).unwrap_or(""),
            None => "",
        };
    }
    pieces.push(rest);
    let Some((first, others)) = pieces.split_first() else {
        return template.eq_ignore_ascii_case(concrete);
    };
    let lower = concrete.to_ascii_lowercase();
    let Some(mut cur) = lower.strip_prefix(&first.to_ascii_lowercase()) else {
        return false;
    };
    let last_index = others.len().saturating_sub(1);
    for (i, piece) in others.iter().enumerate() {
        let piece = piece.to_ascii_lowercase();
        if i == last_index {
            // The last literal must end the segment, after at least one placeholder character.
            return cur.len() > piece.len() && cur.ends_with(&piece);
        }
        // A placeholder eats at least one character, then the next literal.
        match cur.get(1..).and_then(|s| s.find(&piece)) {
            Some(pos) => cur = cur.get(1 + pos + piece.len()..).unwrap_or(""),
            None => return false,
        }
    }
    cur.is_empty()
}

/// The first sentence of a description, at most 200 characters: enough to carry meaning,
/// short enough not to drown the summary.
pub fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let end = text
        .char_indices()
        .find(|&(i, c)| {
            (c == '.' || c == '\n')
                && text[i + c.len_utf8()..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    text[..end].chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_refs_parse_like_people_type_them() {
        assert_eq!(
            EndpointRef::parse("get /pets/{id}"),
            EndpointRef::method_path("GET", "/pets/{id}")
        );
        assert_eq!(
            EndpointRef::parse("issues/create"),
            EndpointRef::OperationId("issues/create".into())
        );
        assert_eq!(
            EndpointRef::parse("list pets"),
            EndpointRef::OperationId("list pets".into())
        );
        assert_eq!(
            EndpointRef::method_path("post", "/a").to_string(),
            "POST /a"
        );
    }

    #[test]
    fn loose_paths_ignore_param_names_case_and_trailing_slash() {
        assert_eq!(loose_path("/Users/{userId}/"), "/users/{}");
        assert_eq!(loose_path("users/{id}?x=1"), "/users/{}");
        assert_eq!(loose_path("/"), "/");
    }

    #[test]
    fn concrete_paths_match_templates() {
        assert_eq!(
            template_match("/users/{id}/repos", "/users/42/repos"),
            Some(2)
        );
        assert_eq!(template_match("/users/{id}", "/users/42/repos"), None);
        assert_eq!(
            template_match("/files/{name}.{ext}", "/files/a.json"),
            Some(1)
        );
        assert_eq!(
            template_match("/files/{name}.json", "/files/a.json"),
            Some(1)
        );
        assert_eq!(template_match("/files/{name}.json", "/files/.json"), None);
        assert_eq!(template_match("/v{version}/x", "/v2/x"), Some(1));
        assert_eq!(template_match("/a/{b", "/a/zzz"), Some(1));
    }
}
