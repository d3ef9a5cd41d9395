//! Code samples for an operation: a typed `fetch` function (TypeScript types generated from
//! the schemas: components become named types, enums literal unions, `nullable` a `| null`)
//! and a curl line with an example body built from the schema.
//!
//! Bounded like everything else: at most [`MAX_NAMED_TYPES`] named types, nesting cut at
//! [`MAX_DEPTH`] (`unknown` below), enums of more than [`MAX_ENUM`] values typed by their base.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::operation_object;
use devlens_openapi::Operation;
use devlens_openapi::documents::text;
use devlens_openapi::documents::{DocId, DocView, ROOT};
use devlens_openapi::{ApiSpec, EndpointRef};

use crate::ContractError;

/// A parameter as the sample uses it: name, `in`, required, and its schema with its document.
type SampleParam = (String, String, bool, Option<(Value, DocId)>);

const MAX_NAMED_TYPES: usize = 40;
const MAX_DEPTH: usize = 8;
const MAX_ENUM: usize = 30;
const MAX_EXAMPLE_DEPTH: usize = 5;

/// The samples of one operation.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CodeSample {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    pub method: String,
    pub path: String,
    /// The function's name in the TypeScript sample.
    pub function_name: String,
    /// Types and a `fetch` function, ready to paste.
    pub typescript: String,
    pub curl: String,
}

impl devlens_core::Report for CodeSample {
    fn to_text(&self) -> String {
        format!(
            "```ts\n{}\n```\n\n```sh\n{}\n```",
            self.typescript.trim_end(),
            self.curl
        )
    }
}

/// A typed `fetch` function and a curl line for an operation. `base_url` defaults to the
/// spec's first server.
pub fn code_sample(
    spec: &ApiSpec,
    endpoint: &EndpointRef,
    base_url: Option<&str>,
) -> Result<CodeSample, ContractError> {
    let op = spec.find_operation(endpoint)?;
    let view = spec.documents().view();
    let docs = &view;
    let (item, raw_op) = operation_object(docs, op);
    let doc = item.map_or(ROOT, |(_, d)| d);
    let base = base_url
        .map(str::to_string)
        .or_else(|| spec.server_urls().into_iter().next())
        .unwrap_or_default();
    let base = base.trim_end_matches('/').to_string();
    let mut types = TsTypes::new(docs);
    let function_name = function_name(op);
    let pascal = pascal_case(&function_name);

    // Parameters: path-level then operation-level, the operation's winning.
    let mut params: Vec<SampleParam> = Vec::new();
    for list in [
        item.and_then(|(i, _)| i.get("parameters")),
        raw_op.and_then(|o| o.get("parameters")),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_array)
    {
        for raw in list {
            let Ok(p) = docs.deref(raw, doc) else {
                continue;
            };
            let Some(name) = text(p.value.get("name")) else {
                continue;
            };
            let location = text(p.value.get("in")).unwrap_or_else(|| "query".into());
            if location == "cookie" {
                continue;
            }
            let required = location == "path"
                || p.value.get("required").and_then(Value::as_bool) == Some(true);
            let schema = p.value.get("schema").map(|s| (s.clone(), p.doc));
            params.retain(|(n, l, _, _)| !(n == &name && l == &location));
            params.push((name, location, required, schema));
        }
    }
    // Request body (JSON) and success response.
    let body = raw_op
        .and_then(|o| o.get("requestBody"))
        .and_then(|rb| docs.deref(rb, doc).ok())
        .and_then(|rb| {
            let required = rb.value.get("required").and_then(Value::as_bool) == Some(true);
            json_schema_of(rb.value.get("content")).map(|s| (s.clone(), rb.doc, required))
        });
    let success = raw_op
        .and_then(|o| o.get("responses"))
        .and_then(Value::as_object)
        .and_then(|responses| {
            let mut codes: Vec<&String> = responses.keys().filter(|k| k.starts_with('2')).collect();
            codes.sort();
            codes
                .first()
                .map(|c| (*c).clone())
                .or_else(|| {
                    responses
                        .contains_key("default")
                        .then(|| "default".to_string())
                })
                .and_then(|code| responses.get(&code).map(|r| (code, r)))
        })
        .and_then(|(code, raw)| docs.deref(raw, doc).ok().map(|r| (code, r)));
    let response_type = match &success {
        Some((code, r)) if code != "204" => match json_schema_of(r.value.get("content")) {
            Some(schema) => types.ts(schema, r.doc, 0),
            None => "void".to_string(),
        },
        _ => "void".to_string(),
    };

    let mut ts = String::new();
    let params_type = format!("{pascal}Params");
    if !params.is_empty() {
        let _ = writeln!(ts, "export interface {params_type} {{");
        for (name, _, required, schema) in &params {
            let t = schema
                .as_ref()
                .map_or_else(|| "string".to_string(), |(s, d)| types.ts(s, *d, 1));
            let _ = writeln!(
                ts,
                "  {}{}: {t};",
                property_name(name),
                if *required { "" } else { "?" }
            );
        }
        ts.push_str("}\n\n");
    }
    let body_type = body.as_ref().map(|(s, d, _)| types.ts(s, *d, 0));
    let summary = op.summary.clone().unwrap_or_default();
    let _ = writeln!(
        ts,
        "/** {}{} {} */",
        if summary.is_empty() {
            String::new()
        } else {
            format!("{} — ", summary.replace("*/", ""))
        },
        op.method,
        op.path
    );
    let mut args: Vec<String> = Vec::new();
    if !params.is_empty() {
        let all_optional = params.iter().all(|(_, _, r, _)| !r);
        args.push(format!(
            "params: {params_type}{}",
            if all_optional { " = {}" } else { "" }
        ));
    }
    if let Some(t) = &body_type {
        args.push(format!("body: {t}"));
    }
    args.push("init?: RequestInit".into());
    let _ = writeln!(
        ts,
        "export async function {function_name}({}): Promise<{response_type}> {{",
        args.join(", ")
    );
    // The URL.
    let mut path_expr = op.path.clone();
    for (name, location, _, _) in &params {
        if location == "path" {
            path_expr = path_expr.replace(
                &format!("{{{name}}}"),
                &format!("${{encodeURIComponent(String(params{}))}}", accessor(name)),
            );
        }
    }
    let query: Vec<&SampleParam> = params.iter().filter(|(_, l, _, _)| l == "query").collect();
    if !query.is_empty() {
        ts.push_str("  const query = new URLSearchParams();\n");
        for (name, _, _, schema) in &query {
            let is_array = schema
                .as_ref()
                .is_some_and(|(s, d)| resolved_type(docs, s, *d).as_deref() == Some("array"));
            let value = format!("params{}", accessor(name));
            if is_array {
                let _ = writeln!(
                    ts,
                    "  for (const v of {value} ?? []) query.append({}, String(v));",
                    json!(name)
                );
            } else {
                let _ = writeln!(
                    ts,
                    "  if ({value} !== undefined) query.set({}, String({value}));",
                    json!(name)
                );
            }
        }
    }
    let mut headers: Vec<String> = vec!["Accept: \"application/json\"".into()];
    if body_type.is_some() {
        headers.push("\"Content-Type\": \"application/json\"".into());
    }
    for (name, location, required, _) in &params {
        if location == "header" {
            let value = format!("params{}", accessor(name));
            headers.push(if *required {
                format!("{}: String({value})", json!(name))
            } else {
                format!(
                    "...({value} !== undefined ? {{ {}: String({value}) }} : {{}})",
                    json!(name)
                )
            });
        }
    }
    let base_expr = if base.is_empty() {
        String::new()
    } else {
        "${BASE_URL}".into()
    };
    let query_expr = if query.is_empty() {
        ""
    } else {
        "${query.size ? `?${query}` : \"\"}"
    };
    let _ = writeln!(
        ts,
        "  const res = await fetch(`{base_expr}{path_expr}{query_expr}`, {{"
    );
    ts.push_str("    ...init,\n");
    let _ = writeln!(ts, "    method: {},", json!(op.method));
    let _ = writeln!(
        ts,
        "    headers: {{ {}, ...(init?.headers as Record<string, string> | undefined) }},",
        headers.join(", ")
    );
    if body_type.is_some() {
        ts.push_str("    body: JSON.stringify(body),\n");
    }
    ts.push_str("  });\n");
    let _ = writeln!(
        ts,
        "  if (!res.ok) throw new Error(`{function_name} failed: ${{res.status}} ${{await res.text()}}`);"
    );
    if response_type == "void" {
        ts.push_str("}\n");
    } else {
        let _ = writeln!(ts, "  return (await res.json()) as {response_type};\n}}");
    }
    let mut out = String::new();
    if !base.is_empty() {
        let _ = writeln!(out, "const BASE_URL = {};\n", json!(base));
    }
    for decl in types.declarations() {
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    out.push_str(&ts);

    // curl with placeholders and an example body.
    let mut url_path = op.path.clone();
    for (name, location, _, _) in &params {
        if location == "path" {
            url_path = url_path.replace(&format!("{{{name}}}"), &format!("<{name}>"));
        }
    }
    let required_query: Vec<String> = params
        .iter()
        .filter(|(_, l, r, _)| l == "query" && *r)
        .map(|(n, _, _, _)| format!("{n}=<{n}>"))
        .collect();
    let mut url = format!(
        "{}{url_path}",
        if base.is_empty() {
            "<base URL>".to_string()
        } else {
            base.clone()
        }
    );
    if !required_query.is_empty() {
        url.push('?');
        url.push_str(&required_query.join("&"));
    }
    let mut curl = String::from("curl");
    if op.method != "GET" {
        let _ = write!(curl, " -X {}", op.method);
    }
    let _ = write!(curl, " '{url}' \\\n  -H 'Accept: application/json'");
    if crate::call::api_key_scheme(spec).is_some() || has_bearer(docs) {
        curl.push_str(" \\\n  -H \"Authorization: Bearer $API_TOKEN\"");
    }
    if let Some((schema, d, _)) = &body {
        let example = example_value(docs, schema, *d, 0);
        let text = serde_json::to_string(&example).unwrap_or_default();
        let _ = write!(
            curl,
            " \\\n  -H 'Content-Type: application/json' \\\n  --data-raw '{}'",
            text.replace('\'', "'\\''")
        );
    }
    Ok(CodeSample {
        operation_id: op.operation_id.clone(),
        method: op.method.clone(),
        path: op.path.clone(),
        function_name,
        typescript: out,
        curl,
    })
}

/// The schema of the JSON media type of a `content` map.
fn json_schema_of(content: Option<&Value>) -> Option<&Value> {
    let content = content?.as_object()?;
    content
        .iter()
        .find(|(k, _)| crate::is_json_media(k))
        .or_else(|| content.iter().find(|(k, _)| k.as_str() == "*/*"))
        .and_then(|(_, m)| m.get("schema"))
}

fn has_bearer(docs: &DocView<'_>) -> bool {
    docs.security_schemes().is_some_and(|s| {
        s.values().any(|v| {
            v.get("scheme")
                .and_then(Value::as_str)
                .is_some_and(|s| s.eq_ignore_ascii_case("bearer"))
                || v.get("type").and_then(Value::as_str) == Some("oauth2")
        })
    })
}

fn resolved_type(docs: &DocView<'_>, schema: &Value, doc: DocId) -> Option<String> {
    let s = docs.deref(schema, doc).ok()?;
    match s.value.get("type") {
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_string),
        _ => None,
    }
}

/// `issues/create` → `issuesCreate`; without an operationId, method and path words.
fn function_name(op: &Operation) -> String {
    let source = op.operation_id.clone().unwrap_or_else(|| {
        let words: Vec<&str> = op
            .path
            .split('/')
            .filter(|s| !s.is_empty() && !s.starts_with('{'))
            .collect();
        format!("{} {}", op.method.to_ascii_lowercase(), words.join(" "))
    });
    let mut out = String::new();
    let mut upper = false;
    for c in source.chars() {
        if c.is_ascii_alphanumeric() {
            if out.is_empty() {
                if c.is_ascii_digit() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            } else if upper {
                out.push(c.to_ascii_uppercase());
            } else {
                out.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    if out.is_empty() {
        "callEndpoint".into()
    } else {
        out
    }
}

fn pascal_case(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn property_name(name: &str) -> String {
    if is_identifier(name) {
        name.to_string()
    } else {
        json!(name).to_string()
    }
}

fn accessor(name: &str) -> String {
    if is_identifier(name) {
        format!(".{name}")
    } else {
        format!("[{}]", json!(name))
    }
}

/// TypeScript types of schemas, with components as named declarations.
struct TsTypes<'a> {
    docs: &'a DocView<'a>,
    names: HashMap<(DocId, String), String>,
    taken: HashMap<String, usize>,
    declarations: Vec<(String, Option<String>)>,
    queue: Vec<(usize, DocId, String)>,
}

impl<'a> TsTypes<'a> {
    fn new(docs: &'a DocView<'a>) -> Self {
        TsTypes {
            docs,
            names: HashMap::new(),
            taken: HashMap::new(),
            declarations: Vec::new(),
            queue: Vec::new(),
        }
    }

    /// The named declarations, each written once.
    fn declarations(mut self) -> Vec<String> {
        while let Some((index, doc, pointer)) = self.queue.pop() {
            let name = self
                .declarations
                .get(index)
                .map(|(n, _)| n.clone())
                .unwrap_or_default();
            let decl = match self.docs.pointer(doc, &pointer) {
                Ok(target) => {
                    let (value, d) = (target.value.clone(), target.doc);
                    let is_interface = value.get("properties").is_some()
                        && ["allOf", "anyOf", "oneOf", "enum"]
                            .iter()
                            .all(|k| value.get(*k).is_none())
                        && value.get("nullable").and_then(Value::as_bool) != Some(true);
                    let body = self.ts(&value, d, 0);
                    if is_interface {
                        format!("export interface {name} {body}")
                    } else {
                        format!("export type {name} = {body};")
                    }
                }
                Err(_) => format!("export type {name} = unknown;"),
            };
            if let Some(slot) = self.declarations.get_mut(index) {
                slot.1 = Some(decl);
            }
        }
        self.declarations
            .into_iter()
            .filter_map(|(_, d)| d)
            .collect()
    }

    fn reference(&mut self, reference: &str, doc: DocId) -> String {
        let Ok((target_doc, pointer)) = self.docs.locate(reference, doc) else {
            return "unknown".into();
        };
        let key = (target_doc, pointer.clone());
        if let Some(name) = self.names.get(&key) {
            return name.clone();
        }
        if self.declarations.len() >= MAX_NAMED_TYPES {
            return "unknown".into();
        }
        let raw = pointer
            .rsplit('/')
            .next()
            .unwrap_or("Type")
            .replace("~1", "/")
            .replace("~0", "~");
        let mut base = String::new();
        let mut upper = true;
        for c in raw.chars() {
            if c.is_ascii_alphanumeric() {
                base.push(if upper { c.to_ascii_uppercase() } else { c });
                upper = false;
            } else {
                upper = true;
            }
        }
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base = format!("T{base}");
        }
        let n = self.taken.entry(base.clone()).or_insert(0);
        *n += 1;
        let name = if *n == 1 { base } else { format!("{base}{n}") };
        self.names.insert(key, name.clone());
        self.declarations.push((name.clone(), None));
        self.queue
            .push((self.declarations.len() - 1, target_doc, pointer));
        name
    }

    fn ts(&mut self, schema: &Value, doc: DocId, depth: usize) -> String {
        let Value::Object(map) = schema else {
            return "unknown".into();
        };
        if depth > MAX_DEPTH {
            return "unknown".into();
        }
        let nullable = map.get("nullable").and_then(Value::as_bool) == Some(true)
            || map.get("x-nullable").and_then(Value::as_bool) == Some(true);
        let base = self.ts_inner(map, doc, depth);
        if nullable && base != "unknown" {
            format!("{base} | null")
        } else {
            base
        }
    }

    fn ts_inner(&mut self, map: &Map<String, Value>, doc: DocId, depth: usize) -> String {
        if let Some(r) = map.get("$ref").and_then(Value::as_str) {
            return self.reference(r, doc);
        }
        if let Some(values) = map.get("enum").and_then(Value::as_array)
            && !values.is_empty()
            && values.len() <= MAX_ENUM
        {
            return values
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" | ");
        }
        if let Some(c) = map.get("const") {
            return c.to_string();
        }
        for (key, joiner) in [("allOf", " & "), ("oneOf", " | "), ("anyOf", " | ")] {
            if let Some(parts) = map.get(key).and_then(Value::as_array) {
                let parts: Vec<String> = parts
                    .iter()
                    .map(|p| {
                        let t = self.ts(p, doc, depth + 1);
                        if t.contains(' ') && !t.starts_with('{') {
                            format!("({t})")
                        } else {
                            t
                        }
                    })
                    .collect();
                let mut joined = parts.join(joiner);
                // allOf with its own properties too.
                if key == "allOf" && map.contains_key("properties") {
                    let own = self.object(map, doc, depth);
                    joined = format!("{joined} & {own}");
                }
                return joined;
            }
        }
        let types: Vec<String> = match map.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ if map.contains_key("properties") || map.contains_key("additionalProperties") => {
                vec!["object".into()]
            }
            _ if map.contains_key("items") => vec!["array".into()],
            _ => Vec::new(),
        };
        if types.is_empty() {
            return "unknown".into();
        }
        let rendered: Vec<String> = types
            .iter()
            .map(|t| match t.as_str() {
                "string" => "string".into(),
                "integer" | "number" => "number".into(),
                "boolean" => "boolean".into(),
                "null" => "null".into(),
                "array" => {
                    let item = map
                        .get("items")
                        .map_or_else(|| "unknown".into(), |i| self.ts(i, doc, depth + 1));
                    if item.contains(' ') && !item.starts_with('{') {
                        format!("Array<{item}>")
                    } else {
                        format!("{item}[]")
                    }
                }
                "object" => self.object(map, doc, depth),
                _ => "unknown".into(),
            })
            .collect();
        rendered.join(" | ")
    }

    fn object(&mut self, map: &Map<String, Value>, doc: DocId, depth: usize) -> String {
        let indent = "  ".repeat(depth + 1);
        let close = "  ".repeat(depth);
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut lines: Vec<String> = Vec::new();
        if let Some(props) = map.get("properties").and_then(Value::as_object) {
            for (name, schema) in props {
                let t = self.ts(schema, doc, depth + 1);
                let optional = if required.contains(&name.as_str()) {
                    ""
                } else {
                    "?"
                };
                lines.push(format!("{indent}{}{optional}: {t};", property_name(name)));
            }
        }
        match map.get("additionalProperties") {
            Some(Value::Object(extra)) => {
                let t = self.ts(&Value::Object(extra.clone()), doc, depth + 1);
                if lines.is_empty() {
                    return format!("Record<string, {t}>");
                }
                lines.push(format!("{indent}[key: string]: {t} | unknown;"));
            }
            Some(Value::Bool(true)) if lines.is_empty() => return "Record<string, unknown>".into(),
            _ => {}
        }
        if lines.is_empty() {
            return "Record<string, unknown>".into();
        }
        format!("{{\n{}\n{close}}}", lines.join("\n"))
    }
}

/// An example value for a schema: its own `example` when it has one, else one built from the
/// types (required fields, the first enum value).
fn example_value(docs: &DocView<'_>, schema: &Value, doc: DocId, depth: usize) -> Value {
    let Ok(resolved) = docs.deref(schema, doc) else {
        return Value::Null;
    };
    let (s, doc) = (resolved.value, resolved.doc);
    if let Some(example) = s.get("example") {
        return example.clone();
    }
    if depth > MAX_EXAMPLE_DEPTH {
        return Value::Null;
    }
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|v| v.first())
    {
        return first.clone();
    }
    if let Some(parts) = s.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for p in parts {
            if let Value::Object(fields) = example_value(docs, p, doc, depth + 1) {
                merged.extend(fields);
            }
        }
        return Value::Object(merged);
    }
    if let Some(first) = ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| s.get(*k).and_then(Value::as_array).and_then(|v| v.first()))
    {
        return example_value(docs, first, doc, depth + 1);
    }
    let t = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.get("properties").is_some() => "object",
        _ => "",
    };
    match t {
        "string" => Value::String(match s.get("format").and_then(Value::as_str) {
            Some("date-time") => "2024-01-01T00:00:00Z".into(),
            Some("date") => "2024-01-01".into(),
            Some("email") => "user@example.com".into(),
            Some("uri" | "url") => "https://example.com".into(),
            Some("uuid") => "00000000-0000-0000-0000-000000000000".into(),
            _ => "string".into(),
        }),
        "integer" => json!(0),
        "number" => json!(0.0),
        "boolean" => json!(false),
        "array" => match s.get("items") {
            Some(items) => json!([example_value(docs, items, doc, depth + 1)]),
            None => json!([]),
        },
        "object" => {
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (name, p) in props {
                    let read_only = docs
                        .deref(p, doc)
                        .ok()
                        .and_then(|r| r.value.get("readOnly").and_then(Value::as_bool))
                        == Some(true);
                    if read_only || (!required.is_empty() && !required.contains(&name.as_str())) {
                        continue;
                    }
                    out.insert(name.clone(), example_value(docs, p, doc, depth + 1));
                    if out.len() >= 12 {
                        break;
                    }
                }
            }
            Value::Object(out)
        }
        _ => Value::Null,
    }
}
