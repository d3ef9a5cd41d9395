//! Endpoint details: everything an agent needs to write one call, rendered on demand from the
//! document with refs resolved and schemas compacted (see [`crate::schema`]).
//!
//! The JSON shape is a contract shared with the CLI, MCP and HTTP layers:
//! `{method, path, operationId, summary, description, tags, deprecated?, parameters: [{name, in,
//! required, schema, description}], requestBody: {contentType, required, schema, description?,
//! otherContentTypes?} | null, responses: {status: {description, contentType?, schema?}}}`.
//! Success responses (2xx, or `default` when there is none) carry their schema; the others only
//! their description, which is enough to know the error codes and cheap.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::OpenApiError;
use crate::model::{Operation, text};
use crate::resolve::{DocId, DocView, ROOT};
use crate::schema::{DetailLimits, Direction, compact_schema, first_sentence, truncate_chars};
use crate::text::schema_text;

/// Everything about one operation that is needed to call it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointDetails {
    pub method: String,
    pub path: String,
    pub operation_id: Option<String>,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
    /// Path-level and operation-level parameters merged (the operation's win by name + `in`),
    /// in document order.
    pub parameters: Vec<ParameterDetails>,
    pub request_body: Option<RequestBodyDetails>,
    /// By status code, sorted (`200`, `201`, `404`, `default`).
    pub responses: BTreeMap<String, ResponseDetails>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ParameterDetails {
    pub name: String,
    /// `path`, `query`, `header` or `cookie` (`unknown` when the parameter's `$ref` is broken).
    #[serde(rename = "in")]
    pub location: String,
    pub required: bool,
    pub schema: Value,
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestBodyDetails {
    /// The content type shown: `application/json` when offered, else a JSON-ish one, else the
    /// first.
    pub content_type: String,
    pub required: bool,
    pub schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The other content types the operation accepts (same meaning, other encodings).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_content_types: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResponseDetails {
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Only for success responses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
}

/// Renders the details of an operation found by [`crate::ApiSpec::find_operation`].
pub(crate) fn build(
    docs: &DocView<'_>,
    op: &Operation,
    limits: &DetailLimits,
) -> Result<EndpointDetails, OpenApiError> {
    let unresolved = |reason: String| OpenApiError::UnresolvedRef {
        reference: format!("#/paths/{}", crate::resolve::escape_segment(&op.path)),
        from: docs
            .doc(ROOT)
            .map_or_else(String::new, |d| d.display.clone()),
        reason,
    };
    let method = op.method.to_ascii_lowercase();
    let raw_item = docs
        .path_item_for(&op.path, &method)
        .map_err(|e| unresolved(e.to_string()))?
        .ok_or_else(|| unresolved("the path is not in the document".into()))?;
    let item = docs
        .deref(raw_item, ROOT)
        .map_err(|e| unresolved(e.to_string()))?;
    let raw_op = item
        .value
        .get(&method)
        .ok_or_else(|| unresolved(format!("no `{method}` operation")))?;
    let doc = item.doc;

    let description = op
        .description
        .as_deref()
        .map(|d| truncate_chars(d, limits.max_operation_description));

    Ok(EndpointDetails {
        method: op.method.clone(),
        path: op.path.clone(),
        operation_id: op.operation_id.clone(),
        summary: op.shown_summary(),
        description,
        tags: op.tags.clone(),
        deprecated: op.deprecated,
        parameters: parameters(
            docs,
            item.value.get("parameters"),
            raw_op.get("parameters"),
            doc,
            limits,
        ),
        request_body: raw_op
            .get("requestBody")
            .and_then(|rb| request_body(docs, rb, doc, limits)),
        responses: responses(docs, raw_op.get("responses"), doc, &limits.for_responses()),
    })
}

fn parameters(
    docs: &DocView<'_>,
    shared: Option<&Value>,
    own: Option<&Value>,
    doc: DocId,
    limits: &DetailLimits,
) -> Vec<ParameterDetails> {
    let mut out: Vec<ParameterDetails> = Vec::new();
    let lists = [shared, own];
    for list in lists.into_iter().flatten().filter_map(Value::as_array) {
        for raw in list {
            let p = parameter(docs, raw, doc, limits);
            match out
                .iter_mut()
                .find(|o| o.name == p.name && o.location == p.location)
            {
                Some(existing) => *existing = p,
                None => out.push(p),
            }
        }
    }
    out
}

fn parameter(
    docs: &DocView<'_>,
    raw: &Value,
    doc: DocId,
    limits: &DetailLimits,
) -> ParameterDetails {
    let p = match docs.deref(raw, doc) {
        Ok(p) => p,
        Err(_) => {
            let r = raw.get("$ref").and_then(Value::as_str).unwrap_or("?");
            return ParameterDetails {
                name: r.rsplit('/').next().unwrap_or(r).to_string(),
                location: "unknown".into(),
                required: false,
                schema: serde_json::json!({ "$unresolved": r }),
                description: None,
            };
        }
    };
    let location = text(p.value.get("in")).unwrap_or_else(|| "query".into());
    // 3.x lets a parameter carry `content` instead of `schema`.
    let schema = p.value.get("schema").or_else(|| {
        p.value
            .get("content")
            .and_then(Value::as_object)
            .and_then(|c| pick_content(c))
            .and_then(|(_, media)| media.get("schema"))
    });
    let name = text(p.value.get("name")).unwrap_or_default();
    // Generated specs often describe `address__city` as "address__city": no information.
    let description = short(p.value.get("description"), limits.max_param_description)
        .filter(|d| !d.trim_end_matches('.').eq_ignore_ascii_case(&name));
    ParameterDetails {
        name,
        required: location == "path"
            || p.value.get("required").and_then(Value::as_bool) == Some(true),
        location,
        schema: schema.map_or_else(
            || Value::Object(Map::new()),
            |s| compact_schema(docs, s, p.doc, Direction::Neutral, limits),
        ),
        description,
    }
}

fn request_body(
    docs: &DocView<'_>,
    raw: &Value,
    doc: DocId,
    limits: &DetailLimits,
) -> Option<RequestBodyDetails> {
    let rb = match docs.deref(raw, doc) {
        Ok(rb) => rb,
        Err(_) => {
            let r = raw.get("$ref").and_then(Value::as_str).unwrap_or("?");
            return Some(RequestBodyDetails {
                content_type: String::new(),
                required: false,
                schema: serde_json::json!({ "$unresolved": r }),
                description: None,
                other_content_types: Vec::new(),
            });
        }
    };
    let content = rb.value.get("content").and_then(Value::as_object)?;
    let (content_type, media) = pick_content(content)?;
    let schema = media.get("schema").map_or_else(
        || Value::Object(Map::new()),
        |s| compact_schema(docs, s, rb.doc, Direction::Request, limits),
    );
    Some(RequestBodyDetails {
        content_type: content_type.clone(),
        required: rb.value.get("required").and_then(Value::as_bool) == Some(true),
        schema,
        description: short(rb.value.get("description"), limits.max_param_description),
        other_content_types: content
            .keys()
            .filter(|k| *k != content_type)
            .cloned()
            .collect(),
    })
}

fn responses(
    docs: &DocView<'_>,
    raw: Option<&Value>,
    doc: DocId,
    limits: &DetailLimits,
) -> BTreeMap<String, ResponseDetails> {
    let mut out = BTreeMap::new();
    let Some(map) = raw.and_then(Value::as_object) else {
        return out;
    };
    let has_2xx = map.keys().any(|k| is_success(k));
    for (status, raw) in map {
        if status.starts_with("x-") {
            continue;
        }
        let success = is_success(status) || (!has_2xx && status == "default");
        let details = match docs.deref(raw, doc) {
            Err(_) => ResponseDetails {
                description: String::new(),
                content_type: None,
                schema: Some(serde_json::json!({
                    "$unresolved": raw.get("$ref").and_then(Value::as_str).unwrap_or("?")
                })),
            },
            Ok(resp) => {
                let description = short(resp.value.get("description"), limits.max_description)
                    .unwrap_or_default();
                let picked = resp
                    .value
                    .get("content")
                    .and_then(Value::as_object)
                    .and_then(|c| pick_content(c));
                match picked {
                    Some((ct, media)) if success => ResponseDetails {
                        description,
                        content_type: Some(ct.clone()),
                        schema: media.get("schema").map(|s| {
                            compact_schema(docs, s, resp.doc, Direction::Response, limits)
                        }),
                    },
                    _ => ResponseDetails {
                        description,
                        content_type: None,
                        schema: None,
                    },
                }
            }
        };
        out.insert(status.clone(), details);
    }
    out
}

fn is_success(status: &str) -> bool {
    status.starts_with('2')
}

/// The content type to show: `application/json`, else a JSON-ish one (`+json`, `; charset`),
/// else the first.
fn pick_content(content: &Map<String, Value>) -> Option<(&String, &Value)> {
    content
        .iter()
        .find(|(k, _)| k.as_str() == "application/json")
        .or_else(|| content.iter().find(|(k, _)| is_json(k)))
        .or_else(|| content.iter().next())
}

fn is_json(content_type: &str) -> bool {
    let base = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    base == "application/json" || base.ends_with("+json") || base.ends_with("/json")
}

fn short(v: Option<&Value>, max: usize) -> Option<String> {
    let s = first_sentence(v?.as_str()?, max);
    (!s.is_empty()).then_some(s)
}

/// Characters of the operation description in the text form.
const TEXT_DESCRIPTION_CHARS: usize = 300;
/// Parameters shown with type and description in the text form; further optional ones are
/// listed by name only (filter-heavy endpoints have hundreds).
const TEXT_FULL_PARAMETERS: usize = 40;

impl devlens_core::Report for EndpointDetails {
    /// A compact, exact text form for agents, e.g.:
    ///
    /// ```text
    /// POST /repos/{owner}/{repo}/issues  (issues/create)
    /// Create an issue
    /// params:
    ///   owner (path, required): string — The account owner of the repository.
    /// body (application/json, required): { title: string | integer; body?: string }
    /// 201 → { id: integer; … }
    /// errors: 400, 403, 404, 410, 422, 503
    /// ```
    fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "{} {}", self.method, self.path);
        if let Some(id) = &self.operation_id {
            let _ = write!(s, "  ({id})");
        }
        if self.deprecated {
            s.push_str("  [deprecated]");
        }
        s.push('\n');
        let summary = self
            .summary
            .as_deref()
            .map(|s| paragraph(s, TEXT_DESCRIPTION_CHARS));
        if let Some(summary) = &summary {
            s.push_str(summary);
            s.push('\n');
        }
        if let Some(d) = &self.description {
            let d = paragraph(d, TEXT_DESCRIPTION_CHARS);
            if !d.is_empty() && Some(&d) != summary.as_ref() {
                s.push_str(&d);
                s.push('\n');
            }
        }
        if !self.parameters.is_empty() {
            s.push_str("params:\n");
            // Required parameters always; optional ones in full up to a point, then by name.
            let optional_room = TEXT_FULL_PARAMETERS
                .saturating_sub(self.parameters.iter().filter(|p| p.required).count());
            let mut optional_seen = 0;
            let mut by_name: Vec<(&str, Vec<&str>)> = Vec::new();
            for p in &self.parameters {
                if !p.required {
                    optional_seen += 1;
                    if optional_seen > optional_room {
                        match by_name.iter_mut().find(|(loc, _)| *loc == p.location) {
                            Some((_, names)) => names.push(&p.name),
                            None => by_name.push((&p.location, vec![&p.name])),
                        }
                        continue;
                    }
                }
                let required = if p.required { ", required" } else { "" };
                let _ = write!(
                    s,
                    "  {} ({}{required}): {}",
                    p.name,
                    p.location,
                    schema_text(&p.schema)
                );
                if let Some(d) = p.schema.get("default") {
                    let _ = write!(s, " = {d}");
                }
                if let Some(d) = &p.description {
                    let _ = write!(s, " — {d}");
                }
                s.push('\n');
            }
            for (location, names) in by_name {
                let _ = writeln!(
                    s,
                    "  …+{} more optional ({location}): {}",
                    names.len(),
                    names.join(", ")
                );
            }
        }
        if let Some(b) = &self.request_body {
            let required = if b.required { ", required" } else { "" };
            let _ = writeln!(
                s,
                "body ({}{required}): {}",
                b.content_type,
                schema_text(&b.schema)
            );
            if !b.other_content_types.is_empty() {
                let _ = writeln!(s, "  also accepts: {}", b.other_content_types.join(", "));
            }
        }
        let mut errors: Vec<&str> = Vec::new();
        let mut other: Vec<&str> = Vec::new();
        for (status, r) in &self.responses {
            if r.content_type.is_none() && r.schema.is_none() && !is_success(status) {
                if status.starts_with(['4', '5']) || status == "default" {
                    errors.push(status);
                } else {
                    other.push(status);
                }
                continue;
            }
            let shown = match (&r.content_type, &r.schema) {
                (_, Some(schema)) => schema_text(schema),
                (Some(ct), None) => ct.clone(),
                (None, None) => "no body".into(),
            };
            match &r.content_type {
                Some(ct) if !is_json(ct) && r.schema.is_some() => {
                    let _ = writeln!(s, "{status} ({ct}) → {shown}");
                }
                _ => {
                    let _ = writeln!(s, "{status} → {shown}");
                }
            }
        }
        if !other.is_empty() {
            let _ = writeln!(s, "other: {}", other.join(", "));
        }
        if !errors.is_empty() {
            let _ = writeln!(s, "errors: {}", errors.join(", "));
        }
        s
    }
}

/// The first paragraph, whitespace collapsed, capped.
pub(crate) fn paragraph(text: &str, max: usize) -> String {
    let text = crate::schema::strip_html_tags(text);
    let p = text.trim().split("\n\n").next().unwrap_or("");
    truncate_chars(&p.split_whitespace().collect::<Vec<_>>().join(" "), max)
}
