//! Swagger 2.0 to OpenAPI 3.x, once at load time, so everything after loading reads one shape.
//!
//! What moves where:
//! - `definitions` / `parameters` / `responses` / `securityDefinitions` become
//!   `components/{schemas,parameters,responses,securitySchemes}` and every local `$ref` to them is
//!   rewritten;
//! - `host` + `basePath` + `schemes` become `servers`;
//! - `in: body` and `in: formData` parameters become the operation's `requestBody`, with content
//!   types from `consumes` (form data is `multipart/form-data` when a `type: file` field is
//!   present, otherwise `application/x-www-form-urlencoded` unless `consumes` says multipart);
//! - other parameters get their `type`/`format`/`items`/... moved into `schema`;
//! - response `schema` goes under `content` for each `produces` type;
//! - `type: file` becomes `type: string, format: binary`, `x-nullable` becomes `nullable`;
//! - `collectionFormat` is dropped.
//!
//! Parameters and responses are inlined into the operations (after resolving their refs) because
//! a 2.0 parameter's meaning (`in: body` or not) decides where it goes in 3.x. Anything inlined
//! from another document gets its refs made absolute so they still point where they did.

use serde_json::{Map, Value, json};

use crate::compact::METHODS;
use crate::resolve::{DocId, DocSet, DocView, ROOT};

/// Keywords a 2.0 non-body parameter (or header, or `items`) shares with a schema.
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "items",
    "enum",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "x-nullable",
];

const FORM_URLENCODED: &str = "application/x-www-form-urlencoded";
const MULTIPART: &str = "multipart/form-data";

/// Converts the root document of `docs` from Swagger 2.0 to OpenAPI 3.0 in place.
pub(crate) fn swagger2_to_openapi3(docs: &mut DocSet) {
    let Some(root) = docs.root_mut() else { return };
    let taken = std::mem::take(root);
    let converted = convert(taken, &docs.scratch_view());
    if let Some(root) = docs.root_mut() {
        *root = converted;
    }
}

/// What operations need from the document while they are converted.
struct Ctx<'a> {
    docs: &'a DocView<'a>,
    parameters: &'a Map<String, Value>,
    responses: &'a Map<String, Value>,
    consumes: Vec<String>,
    produces: Vec<String>,
}

fn convert(root: Value, docs: &DocView<'_>) -> Value {
    let Value::Object(mut src) = root else {
        return root;
    };
    let definitions = take_object(&mut src, "definitions");
    let parameters = take_object(&mut src, "parameters");
    let responses = take_object(&mut src, "responses");
    let security_definitions = take_object(&mut src, "securityDefinitions");
    let consumes = take_strings(&mut src, "consumes");
    let produces = take_strings(&mut src, "produces");
    let servers = servers(&mut src);
    src.remove("swagger");

    let ctx = Ctx {
        docs,
        parameters: &parameters,
        responses: &responses,
        consumes: if consumes.is_empty() {
            vec!["application/json".into()]
        } else {
            consumes
        },
        produces: if produces.is_empty() {
            vec!["application/json".into()]
        } else {
            produces
        },
    };

    let mut paths = take_object(&mut src, "paths");
    for item in paths.values_mut() {
        if let Some(r) = item.get("$ref").and_then(Value::as_str)
            && !r.starts_with('#')
            && let Some(inlined) = inline_ref(r, ROOT, docs)
        {
            *item = inlined;
        }
        if let Value::Object(item) = item {
            convert_path_item(item, &ctx);
        }
    }

    let mut components = Map::new();
    if !definitions.is_empty() {
        components.insert("schemas".into(), Value::Object(definitions));
    }
    let params: Map<String, Value> = parameters
        .iter()
        .filter(|(_, p)| !matches!(param_in(p), "body" | "formData"))
        .map(|(k, p)| (k.clone(), convert_parameter(p.clone())))
        .collect();
    if !params.is_empty() {
        components.insert("parameters".into(), Value::Object(params));
    }
    let converted_responses: Map<String, Value> = responses
        .iter()
        .map(|(k, r)| (k.clone(), convert_response(r.clone(), &ctx.produces)))
        .collect();
    if !converted_responses.is_empty() {
        components.insert("responses".into(), Value::Object(converted_responses));
    }
    let schemes: Map<String, Value> = security_definitions
        .into_iter()
        .map(|(k, s)| (k, convert_security_scheme(s)))
        .collect();
    if !schemes.is_empty() {
        components.insert("securitySchemes".into(), Value::Object(schemes));
    }

    let mut out = Map::new();
    out.insert("openapi".into(), json!("3.0.3"));
    if let Some(info) = src.remove("info") {
        out.insert("info".into(), info);
    }
    if !servers.is_empty() {
        out.insert("servers".into(), Value::Array(servers));
    }
    out.insert("paths".into(), Value::Object(paths));
    if !components.is_empty() {
        out.insert("components".into(), Value::Object(components));
    }
    out.extend(src);
    let mut out = Value::Object(out);
    rewrite_schemas_and_refs(&mut out);
    out
}

fn take_object(map: &mut Map<String, Value>, key: &str) -> Map<String, Value> {
    match map.remove(key) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn take_strings(map: &mut Map<String, Value>, key: &str) -> Vec<String> {
    strings(map.remove(key).as_ref())
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// `host` + `basePath` + `schemes` to `servers`. Without `host` the API is on the spec's own
/// host, which a relative server URL says.
fn servers(src: &mut Map<String, Value>) -> Vec<Value> {
    let host = src
        .remove("host")
        .and_then(|h| h.as_str().map(String::from));
    let base = src
        .remove("basePath")
        .and_then(|b| b.as_str().map(String::from))
        .unwrap_or_default();
    let base = if base.is_empty() || base.starts_with('/') {
        base
    } else {
        format!("/{base}")
    };
    let schemes = take_strings(src, "schemes");
    match host {
        Some(host) if !host.is_empty() => {
            let schemes = if schemes.is_empty() {
                vec!["https".to_string()]
            } else {
                schemes
            };
            schemes
                .iter()
                .map(|s| json!({ "url": format!("{s}://{host}{base}") }))
                .collect()
        }
        _ if !base.is_empty() => vec![json!({ "url": base })],
        _ => Vec::new(),
    }
}

fn convert_path_item(item: &mut Map<String, Value>, ctx: &Ctx<'_>) {
    let path_params: Vec<Value> = match item.remove("parameters") {
        Some(Value::Array(ps)) => ps
            .into_iter()
            .filter_map(|p| resolve_param(p, ctx))
            .collect(),
        _ => Vec::new(),
    };
    for method in METHODS {
        if let Some(Value::Object(op)) = item.get_mut(*method) {
            convert_operation(op, &path_params, ctx);
        }
    }
    let shared: Vec<Value> = path_params
        .into_iter()
        .filter(|p| !matches!(param_in(p), "body" | "formData"))
        .map(convert_parameter)
        .collect();
    if !shared.is_empty() {
        item.insert("parameters".into(), Value::Array(shared));
    }
}

fn convert_operation(op: &mut Map<String, Value>, path_params: &[Value], ctx: &Ctx<'_>) {
    let consumes = match op.remove("consumes") {
        Some(v) if !strings(Some(&v)).is_empty() => strings(Some(&v)),
        _ => ctx.consumes.clone(),
    };
    let produces = match op.remove("produces") {
        Some(v) if !strings(Some(&v)).is_empty() => strings(Some(&v)),
        _ => ctx.produces.clone(),
    };
    let own: Vec<Value> = match op.remove("parameters") {
        Some(Value::Array(ps)) => ps
            .into_iter()
            .filter_map(|p| resolve_param(p, ctx))
            .collect(),
        _ => Vec::new(),
    };

    // Body and form fields may come from the path level too; operation-level wins by name+in.
    let mut effective: Vec<&Value> = path_params
        .iter()
        .filter(|pp| !own.iter().any(|op| same_param(pp, op)))
        .collect();
    effective.extend(own.iter());

    let body = effective.iter().find(|p| param_in(p) == "body");
    let form: Vec<&&Value> = effective
        .iter()
        .filter(|p| param_in(p) == "formData")
        .collect();
    if let Some(body) = body {
        op.insert("requestBody".into(), body_request(body, &consumes));
    } else if !form.is_empty() {
        op.insert("requestBody".into(), form_request(&form, &consumes));
    }

    let params: Vec<Value> = own
        .iter()
        .filter(|p| !matches!(param_in(p), "body" | "formData"))
        .cloned()
        .map(convert_parameter)
        .collect();
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }

    if let Some(Value::Object(responses)) = op.get_mut("responses") {
        for resp in responses.values_mut() {
            let raw = std::mem::take(resp);
            *resp = match resolve_response(raw, ctx) {
                Some(r) => convert_response(r, &produces),
                None => json!({ "description": "" }),
            };
        }
    }
}

fn same_param(a: &Value, b: &Value) -> bool {
    a.get("name") == b.get("name") && a.get("in") == b.get("in")
}

fn param_in(p: &Value) -> &str {
    p.get("in").and_then(Value::as_str).unwrap_or("")
}

/// Resolves a parameter ref: local ones from the 2.0 `parameters` section, others from the
/// loaded documents. An unresolvable one is kept as is so the details view can mark it.
fn resolve_param(p: Value, ctx: &Ctx<'_>) -> Option<Value> {
    resolve_section_ref(p, ctx, "#/parameters/", ctx.parameters)
}

fn resolve_response(r: Value, ctx: &Ctx<'_>) -> Option<Value> {
    resolve_section_ref(r, ctx, "#/responses/", ctx.responses)
}

fn resolve_section_ref(
    value: Value,
    ctx: &Ctx<'_>,
    prefix: &str,
    section: &Map<String, Value>,
) -> Option<Value> {
    let mut cur = value;
    // A short loop: a ref to a ref is legal, a cycle is not and must not hang.
    for _ in 0..8 {
        let Some(r) = cur.get("$ref").and_then(Value::as_str) else {
            return Some(cur);
        };
        if let Some(name) = r.strip_prefix(prefix) {
            let name = crate::resolve::percent_decode(name)
                .replace("~1", "/")
                .replace("~0", "~");
            cur = section.get(&name)?.clone();
        } else if r.starts_with('#') {
            return Some(cur);
        } else {
            cur = inline_ref(r, ROOT, ctx.docs)?;
        }
    }
    None
}

/// Clones what a ref into another document points to, with its own refs made absolute.
fn inline_ref(reference: &str, from: DocId, docs: &DocView<'_>) -> Option<Value> {
    let target = docs.resolve(reference, from).ok()?;
    let mut value = target.value.clone();
    absolutize_refs(&mut value, target.doc, docs);
    Some(value)
}

/// Rewrites every `$ref` in a value taken from document `doc` so it resolves the same way from
/// the root document.
fn absolutize_refs(value: &mut Value, doc: DocId, docs: &DocView<'_>) {
    let Some(base) = docs.doc(doc).and_then(|d| d.url.clone()) else {
        return;
    };
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get_mut("$ref") {
                    let (doc_part, fragment) = r.split_once('#').unwrap_or((r.as_str(), ""));
                    let target = if doc_part.is_empty() {
                        Some(base.clone())
                    } else {
                        base.join(doc_part).ok()
                    };
                    if let Some(mut t) = target {
                        t.set_fragment(None);
                        *r = format!("{t}#{fragment}");
                    }
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

/// A 2.0 non-body parameter in 3.x shape.
fn convert_parameter(p: Value) -> Value {
    let Value::Object(mut p) = p else { return p };
    if p.contains_key("$ref") || p.contains_key("schema") {
        return Value::Object(p);
    }
    let schema = take_schema(&mut p);
    p.remove("collectionFormat");
    if p.get("in").and_then(Value::as_str) == Some("path") {
        p.insert("required".into(), Value::Bool(true));
    }
    p.insert("schema".into(), schema);
    Value::Object(p)
}

/// Moves the schema keywords of a 2.0 parameter or header into a schema object.
fn take_schema(p: &mut Map<String, Value>) -> Value {
    let mut schema = Map::new();
    for key in SCHEMA_KEYS {
        if let Some(v) = p.remove(*key) {
            schema.insert((*key).to_string(), v);
        }
    }
    if let Some(Value::Object(items)) = schema.get_mut("items") {
        items.remove("collectionFormat");
    }
    Value::Object(schema)
}

fn body_request(body: &Value, consumes: &[String]) -> Value {
    let schema = body.get("schema").cloned().unwrap_or_else(|| json!({}));
    let content: Map<String, Value> = consumes
        .iter()
        .map(|ct| (ct.clone(), json!({ "schema": schema })))
        .collect();
    let mut rb = Map::new();
    if let Some(d) = body.get("description") {
        rb.insert("description".into(), d.clone());
    }
    rb.insert("content".into(), Value::Object(content));
    if body.get("required").and_then(Value::as_bool) == Some(true) {
        rb.insert("required".into(), Value::Bool(true));
    }
    Value::Object(rb)
}

fn form_request(fields: &[&&Value], consumes: &[String]) -> Value {
    let has_file = fields
        .iter()
        .any(|f| f.get("type").and_then(Value::as_str) == Some("file"));
    let wants = |ct: &str| consumes.iter().any(|c| c.starts_with(ct));
    let content_type = if has_file || (wants(MULTIPART) && !wants(FORM_URLENCODED)) {
        MULTIPART
    } else {
        FORM_URLENCODED
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields {
        let Some(name) = field.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut f = match (**field).clone() {
            Value::Object(m) => m,
            _ => continue,
        };
        let mut schema = match take_schema(&mut f) {
            Value::Object(s) => s,
            _ => Map::new(),
        };
        if let Some(d) = f.remove("description") {
            schema.insert("description".into(), d);
        }
        if f.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::String(name.to_string()));
        }
        properties.insert(name.to_string(), Value::Object(schema));
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    let any_required = !required.is_empty();
    if any_required {
        schema.insert("required".into(), Value::Array(required));
    }
    let mut content = Map::new();
    content.insert(
        content_type.into(),
        json!({ "schema": Value::Object(schema) }),
    );
    let mut rb = Map::new();
    rb.insert("content".into(), Value::Object(content));
    if any_required {
        rb.insert("required".into(), Value::Bool(true));
    }
    Value::Object(rb)
}

/// A 2.0 response in 3.x shape: `schema` under `content` per produced type, headers with schemas.
fn convert_response(r: Value, produces: &[String]) -> Value {
    let Value::Object(mut r) = r else { return r };
    if r.contains_key("$ref") {
        return Value::Object(r);
    }
    let mut out = Map::new();
    let description = r
        .remove("description")
        .unwrap_or_else(|| Value::String(String::new()));
    out.insert("description".into(), description);
    if let Some(Value::Object(headers)) = r.remove("headers") {
        let headers: Map<String, Value> = headers
            .into_iter()
            .map(|(name, h)| {
                let h = match h {
                    Value::Object(mut h) => {
                        let schema = take_schema(&mut h);
                        h.insert("schema".into(), schema);
                        Value::Object(h)
                    }
                    other => other,
                };
                (name, h)
            })
            .collect();
        out.insert("headers".into(), Value::Object(headers));
    }
    if let Some(schema) = r.remove("schema") {
        let content: Map<String, Value> = produces
            .iter()
            .map(|ct| (ct.clone(), json!({ "schema": schema })))
            .collect();
        out.insert("content".into(), Value::Object(content));
    }
    r.remove("examples");
    out.extend(r.into_iter().filter(|(k, _)| k.starts_with("x-")));
    Value::Object(out)
}

fn convert_security_scheme(s: Value) -> Value {
    let Value::Object(mut s) = s else { return s };
    match s.get("type").and_then(Value::as_str) {
        Some("basic") => {
            let mut out = Map::new();
            out.insert("type".into(), json!("http"));
            out.insert("scheme".into(), json!("basic"));
            if let Some(d) = s.remove("description") {
                out.insert("description".into(), d);
            }
            Value::Object(out)
        }
        Some("oauth2") => {
            let flow = match s.remove("flow").as_ref().and_then(Value::as_str) {
                Some("implicit") => "implicit",
                Some("password") => "password",
                Some("application") => "clientCredentials",
                _ => "authorizationCode",
            };
            let mut f = Map::new();
            for key in ["authorizationUrl", "tokenUrl", "scopes"] {
                if let Some(v) = s.remove(key) {
                    f.insert(key.into(), v);
                }
            }
            let mut flows = Map::new();
            flows.insert(flow.into(), Value::Object(f));
            s.insert("flows".into(), Value::Object(flows));
            Value::Object(s)
        }
        _ => Value::Object(s),
    }
}

/// One pass over the converted document: rewrite local refs to their 3.x homes and turn
/// `type: file` / `x-nullable` into their 3.x spelling. Examples and extensions are left alone.
fn rewrite_schemas_and_refs(doc: &mut Value) {
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get_mut("$ref") {
                    for (old, new) in [
                        ("#/definitions/", "#/components/schemas/"),
                        ("#/parameters/", "#/components/parameters/"),
                        ("#/responses/", "#/components/responses/"),
                    ] {
                        if let Some(rest) = r.strip_prefix(old) {
                            *r = format!("{new}{rest}");
                            break;
                        }
                    }
                }
                if map.get("type").and_then(Value::as_str) == Some("file") {
                    map.insert("type".into(), json!("string"));
                    map.insert("format".into(), json!("binary"));
                }
                if let Some(Value::Bool(n)) = map.get("x-nullable").cloned() {
                    map.remove("x-nullable");
                    map.insert("nullable".into(), Value::Bool(n));
                }
                for (k, child) in map.iter_mut() {
                    if k == "example" || k == "examples" || k.starts_with("x-") {
                        continue;
                    }
                    if child.is_object() || child.is_array() {
                        stack.push(child);
                    }
                }
            }
            Value::Array(items) => {
                stack.extend(items.iter_mut().filter(|c| c.is_object() || c.is_array()))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::Document;

    fn normalize(v: Value) -> Value {
        let mut docs = DocSet::new(Document::parsed(None, "test", v));
        swagger2_to_openapi3(&mut docs);
        docs.root_mut().unwrap().clone()
    }

    #[test]
    fn servers_come_from_host_base_path_and_schemes() {
        let d = normalize(json!({
            "swagger": "2.0", "host": "api.example.com", "basePath": "/v1",
            "schemes": ["https", "http"], "paths": {}
        }));
        assert_eq!(
            d["servers"],
            json!([{"url": "https://api.example.com/v1"}, {"url": "http://api.example.com/v1"}])
        );
        let d = normalize(json!({"swagger": "2.0", "basePath": "/api", "paths": {}}));
        assert_eq!(d["servers"], json!([{"url": "/api"}]));
    }

    #[test]
    fn body_and_form_parameters_become_request_bodies() {
        let d = normalize(json!({
            "swagger": "2.0",
            "consumes": ["application/json"],
            "parameters": {"Limit": {"name": "limit", "in": "query", "type": "integer", "collectionFormat": "csv"}},
            "paths": {"/pets/{id}": {
                "parameters": [{"name": "id", "in": "path", "type": "string", "required": true}],
                "post": {
                    "parameters": [
                        {"name": "pet", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Pet"}},
                        {"$ref": "#/parameters/Limit"}
                    ],
                    "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"}}}
                },
                "put": {
                    "consumes": ["multipart/form-data", "application/x-www-form-urlencoded"],
                    "parameters": [
                        {"name": "photo", "in": "formData", "type": "file", "required": true},
                        {"name": "note", "in": "formData", "type": "string", "x-nullable": true}
                    ],
                    "responses": {"204": {"description": "done"}}
                }
            }},
            "definitions": {"Pet": {"type": "object"}}
        }));
        let post = &d["paths"]["/pets/{id}"]["post"];
        assert_eq!(
            post["requestBody"],
            json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}, "required": true})
        );
        assert_eq!(
            post["parameters"],
            json!([{"name": "limit", "in": "query", "schema": {"type": "integer"}}])
        );
        assert_eq!(
            post["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Pet"
        );
        let put = &d["paths"]["/pets/{id}"]["put"];
        let form = &put["requestBody"]["content"]["multipart/form-data"]["schema"];
        assert_eq!(
            form["properties"]["photo"],
            json!({"type": "string", "format": "binary"})
        );
        assert_eq!(
            form["properties"]["note"],
            json!({"type": "string", "nullable": true})
        );
        assert_eq!(form["required"], json!(["photo"]));
        assert_eq!(
            d["paths"]["/pets/{id}"]["parameters"][0]["schema"],
            json!({"type": "string"})
        );
        assert_eq!(d["components"]["schemas"]["Pet"], json!({"type": "object"}));
        assert!(d.get("definitions").is_none());
    }

    #[test]
    fn form_without_files_is_urlencoded() {
        let d = normalize(json!({
            "swagger": "2.0",
            "paths": {"/login": {"post": {
                "parameters": [{"name": "user", "in": "formData", "type": "string"}],
                "responses": {"200": {"description": "ok"}}
            }}}
        }));
        assert!(
            d["paths"]["/login"]["post"]["requestBody"]["content"][FORM_URLENCODED].is_object()
        );
    }

    #[test]
    fn response_refs_are_inlined_with_the_operation_content_types() {
        let d = normalize(json!({
            "swagger": "2.0",
            "produces": ["application/xml"],
            "responses": {"NotFound": {"description": "missing", "schema": {"$ref": "#/definitions/Err"}}},
            "paths": {"/a": {"get": {
                "produces": ["application/json"],
                "responses": {"404": {"$ref": "#/responses/NotFound"}}
            }}}
        }));
        assert_eq!(
            d["paths"]["/a"]["get"]["responses"]["404"],
            json!({"description": "missing", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Err"}}}})
        );
        assert!(d["components"]["responses"]["NotFound"]["content"]["application/xml"].is_object());
    }

    #[test]
    fn security_definitions_become_security_schemes() {
        let d = normalize(json!({
            "swagger": "2.0", "paths": {},
            "securityDefinitions": {
                "basic": {"type": "basic"},
                "oauth": {"type": "oauth2", "flow": "accessCode", "authorizationUrl": "a", "tokenUrl": "t", "scopes": {}}
            }
        }));
        let s = &d["components"]["securitySchemes"];
        assert_eq!(s["basic"], json!({"type": "http", "scheme": "basic"}));
        assert_eq!(s["oauth"]["flows"]["authorizationCode"]["tokenUrl"], "t");
    }
}
