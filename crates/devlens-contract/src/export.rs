//! OpenAPI schema objects → standalone JSON Schema documents a validator runs.
//!
//! Every `$ref` the schema reaches (transitively, across the spec's documents) becomes an entry
//! of the exported document's `definitions` (draft 4) or `$defs` (2020-12), and the ref is
//! rewritten to point there, so recursion stays recursion and nothing is inlined twice. On the
//! way, what OpenAPI adds to JSON Schema is mapped or dropped:
//!
//! - `nullable: true` (3.0) and `x-nullable` (Swagger 2.0) → `null` allowed;
//! - `readOnly` properties are not required in requests, `writeOnly` ones not in responses;
//! - `type: file` (Swagger 2.0) accepts anything;
//! - annotations (`description`, `example`, `discriminator`, `xml`, `x-*`) are dropped, and so
//!   are `$id`/`id`, which would move the base the rewritten refs resolve against.
//!
//! Bounded: a schema nested deeper than [`MAX_DEPTH`] or more than [`MAX_DEFS`] refs accept
//! anything below that point; nothing here recurses on refs.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use devlens_openapi::documents::{DocId, DocView};

/// JSON Schema dialects the exported documents are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// OpenAPI 3.0 and Swagger 2.0 schemas: a draft-4 flavour (boolean `exclusiveMinimum`).
    Draft4,
    /// OpenAPI 3.1 schemas are JSON Schema 2020-12.
    Draft202012,
}

/// Which way a message goes: it decides whether `readOnly` or `writeOnly` fields may be absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Request,
    Response,
}

const MAX_DEPTH: usize = 64;
const MAX_DEFS: usize = 2_000;

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "not",
    "additionalItems",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];
/// OpenAPI additions and annotations that a validator should not see.
const DROPPED: &[&str] = &[
    "$id",
    "$schema",
    "$anchor",
    "$dynamicAnchor",
    "$comment",
    "$defs",
    "definitions",
    "discriminator",
    "xml",
    "externalDocs",
    "example",
    "examples",
    "nullable",
    "readOnly",
    "writeOnly",
    "deprecated",
    "description",
    "title",
    "default",
];

/// Exports `schema` (found in document `doc`) as a standalone JSON Schema document.
pub(crate) fn export_schema(
    docs: &DocView<'_>,
    schema: &Value,
    doc: DocId,
    dialect: Dialect,
    flow: Flow,
) -> Value {
    let mut exporter = Exporter {
        docs,
        dialect,
        flow,
        defs: Vec::new(),
        keys: HashMap::new(),
        queue: Vec::new(),
    };
    let root = exporter.walk(schema, doc, 0);
    while let Some((index, target_doc, pointer)) = exporter.queue.pop() {
        let exported = match docs.pointer(target_doc, &pointer) {
            Ok(target) => exporter.walk(target.value, target.doc, 0),
            Err(_) => json!({}),
        };
        if let Some(slot) = exporter.defs.get_mut(index) {
            *slot = exported;
        }
    }
    if exporter.defs.is_empty() {
        return root;
    }
    let defs: Map<String, Value> = exporter
        .defs
        .into_iter()
        .enumerate()
        .map(|(i, v)| (format!("d{i}"), v))
        .collect();
    // Under draft 4 a `$ref` hides its siblings, so the root refers through `allOf`.
    let mut out = Map::new();
    out.insert("allOf".into(), Value::Array(vec![root]));
    out.insert(dialect.defs_keyword().into(), Value::Object(defs));
    Value::Object(out)
}

impl Dialect {
    fn defs_keyword(self) -> &'static str {
        match self {
            Dialect::Draft4 => "definitions",
            Dialect::Draft202012 => "$defs",
        }
    }
}

struct Exporter<'a> {
    docs: &'a DocView<'a>,
    dialect: Dialect,
    flow: Flow,
    defs: Vec<Value>,
    keys: HashMap<(DocId, String), usize>,
    queue: Vec<(usize, DocId, String)>,
}

impl Exporter<'_> {
    /// The exported ref for a `$ref` string, queuing its target the first time; None when it
    /// does not resolve or the bound is reached.
    fn reference(&mut self, reference: &str, doc: DocId) -> Option<Value> {
        let (target_doc, pointer) = self.docs.locate(reference, doc).ok()?;
        let key = (target_doc, pointer);
        let index = match self.keys.get(&key) {
            Some(i) => *i,
            None => {
                if self.defs.len() >= MAX_DEFS {
                    return None;
                }
                let i = self.defs.len();
                self.defs.push(json!({}));
                self.queue.push((i, key.0, key.1.clone()));
                self.keys.insert(key, i);
                i
            }
        };
        Some(Value::String(format!(
            "#/{}/d{index}",
            self.dialect.defs_keyword()
        )))
    }

    fn walk(&mut self, schema: &Value, doc: DocId, depth: usize) -> Value {
        let Value::Object(map) = schema else {
            // `true` / `false` schemas, or junk that a validator would reject: accept anything.
            return match schema {
                Value::Bool(_) => schema.clone(),
                _ => json!({}),
            };
        };
        if depth > MAX_DEPTH {
            return json!({});
        }
        let nullable = map.get("nullable").and_then(Value::as_bool) == Some(true)
            || map.get("x-nullable").and_then(Value::as_bool) == Some(true);
        let mut out = Map::new();
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let Some(target) = self.reference(reference, doc) else {
                return json!({});
            };
            out.insert("$ref".into(), target);
            // OpenAPI 3.0 ignores a ref's siblings (except that people write `nullable` there).
            if self.dialect == Dialect::Draft4 {
                return if nullable {
                    or_null(out)
                } else {
                    Value::Object(out)
                };
            }
        }
        for (key, value) in map {
            if key == "$ref" || key.starts_with("x-") || DROPPED.contains(&key.as_str()) {
                continue;
            }
            // `id` is draft 4's `$id` when it is a string at schema level.
            if key == "id" && value.is_string() {
                continue;
            }
            let exported = if SCHEMA_KEYWORDS.contains(&key.as_str()) {
                self.walk(value, doc, depth + 1)
            } else if SCHEMA_LIST_KEYWORDS.contains(&key.as_str()) {
                match value {
                    Value::Array(items) => {
                        Value::Array(items.iter().map(|s| self.walk(s, doc, depth + 1)).collect())
                    }
                    _ => continue,
                }
            } else if SCHEMA_MAP_KEYWORDS.contains(&key.as_str()) {
                match value {
                    Value::Object(entries) => Value::Object(
                        entries
                            .iter()
                            .map(|(name, s)| (name.clone(), self.walk(s, doc, depth + 1)))
                            .collect(),
                    ),
                    _ => continue,
                }
            } else if key == "items" {
                match value {
                    Value::Array(items) => {
                        Value::Array(items.iter().map(|s| self.walk(s, doc, depth + 1)).collect())
                    }
                    other => self.walk(other, doc, depth + 1),
                }
            } else if key == "type" {
                match value {
                    Value::String(t) if t == "file" => continue,
                    Value::String(_) | Value::Array(_) => value.clone(),
                    _ => continue,
                }
            } else if key == "required" {
                match value {
                    Value::Array(names) => Value::Array(
                        names
                            .iter()
                            .filter(|n| !self.optional_in_flow(map, n.as_str().unwrap_or(""), doc))
                            .cloned()
                            .collect(),
                    ),
                    // 3.0 schemas sometimes carry `required: true` on a property: not JSON Schema.
                    _ => continue,
                }
            } else {
                value.clone()
            };
            out.insert(key.clone(), exported);
        }
        if nullable {
            return or_null(out);
        }
        Value::Object(out)
    }

    /// A property that may be absent in this flow: `readOnly` ones in requests, `writeOnly`
    /// ones in responses.
    fn optional_in_flow(&self, schema: &Map<String, Value>, name: &str, doc: DocId) -> bool {
        let Some(property) = schema.get("properties").and_then(|p| p.get(name)) else {
            return false;
        };
        let flag = match self.flow {
            Flow::Request => "readOnly",
            Flow::Response => "writeOnly",
        };
        let Ok(resolved) = self.docs.deref(property, doc) else {
            return false;
        };
        resolved.value.get(flag).and_then(Value::as_bool) == Some(true)
            || property.get(flag).and_then(Value::as_bool) == Some(true)
    }
}

/// A schema that also accepts `null`: the type widened when that is all it takes, else an
/// `anyOf` (so a wrong type under a plain nullable field still reads as a wrong type).
fn or_null(mut schema: Map<String, Value>) -> Value {
    let combined = ["$ref", "allOf", "anyOf", "oneOf", "not"]
        .iter()
        .any(|k| schema.contains_key(*k));
    if !combined && let Some(Value::String(t)) = schema.get("type").cloned() {
        schema.insert("type".into(), json!([t, "null"]));
        if let Some(Value::Array(values)) = schema.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        return Value::Object(schema);
    }
    if schema.is_empty() {
        return Value::Object(schema);
    }
    json!({ "anyOf": [Value::Object(schema), { "type": "null" }] })
}

#[cfg(test)]
mod tests {
    use super::*;
    use devlens_openapi::documents::{DocSet, Document};

    /// A document held as a loaded spec is: split (see `compact`).
    fn docs(root: Value) -> DocSet {
        let mut set = DocSet::new(Document::parsed(None, "test", root));
        set.split();
        set
    }

    fn validator(schema: &Value, dialect: Dialect) -> jsonschema::Validator {
        match dialect {
            Dialect::Draft4 => jsonschema::draft4::new(schema).unwrap(),
            Dialect::Draft202012 => jsonschema::draft202012::new(schema).unwrap(),
        }
    }

    #[test]
    fn refs_become_definitions_and_recursion_stays_recursion() {
        let set = docs(json!({
            "components": {"schemas": {
                "Node": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
                }}
            }}
        }));
        let exported = export_schema(
            &set.view(),
            &json!({"$ref": "#/components/schemas/Node"}),
            0,
            Dialect::Draft4,
            Flow::Response,
        );
        let v = validator(&exported, Dialect::Draft4);
        assert!(v.is_valid(&json!({"name": "a", "children": [{"name": "b", "children": []}]})));
        let bad = json!({"name": "a", "children": [{"children": []}]});
        let errors: Vec<String> = v
            .iter_errors(&bad)
            .map(|e| e.instance_path().as_str().to_string())
            .collect();
        assert_eq!(errors, vec!["/children/0"]);
    }

    #[test]
    fn nullable_read_only_and_write_only_are_understood() {
        let set = docs(json!({}));
        let schema = json!({
            "type": "object",
            "required": ["id", "password", "status"],
            "properties": {
                "id": {"type": "integer", "readOnly": true},
                "password": {"type": "string", "writeOnly": true},
                "status": {"type": "string", "enum": ["a", "b"], "nullable": true},
                "note": {"type": "string", "x-nullable": true, "example": 3}
            }
        });
        let request = validator(
            &export_schema(&set.view(), &schema, 0, Dialect::Draft4, Flow::Request),
            Dialect::Draft4,
        );
        let response = validator(
            &export_schema(&set.view(), &schema, 0, Dialect::Draft4, Flow::Response),
            Dialect::Draft4,
        );
        // A request need not carry the server-made id; a response need not echo the password.
        assert!(request.is_valid(&json!({"password": "x", "status": null, "note": null})));
        assert!(response.is_valid(&json!({"id": 1, "status": "a"})));
        assert!(!response.is_valid(&json!({"id": 1, "status": "c"})));
        assert!(!response.is_valid(&json!({"status": "a"})));
    }

    #[test]
    fn three_one_schemas_keep_their_dialect() {
        let set = docs(
            json!({"components": {"schemas": {"Id": {"type": ["integer", "null"], "exclusiveMinimum": 0}}}}),
        );
        let exported = export_schema(
            &set.view(),
            &json!({"type": "object", "properties": {"id": {"$ref": "#/components/schemas/Id", "description": "x"}}}),
            0,
            Dialect::Draft202012,
            Flow::Response,
        );
        let v = validator(&exported, Dialect::Draft202012);
        assert!(v.is_valid(&json!({"id": 3})));
        assert!(v.is_valid(&json!({"id": null})));
        assert!(!v.is_valid(&json!({"id": 0})));
    }

    #[test]
    fn broken_refs_and_junk_accept_anything() {
        let set = docs(json!({}));
        let exported = export_schema(
            &set.view(),
            &json!({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}, "b": 7}}),
            0,
            Dialect::Draft4,
            Flow::Response,
        );
        assert!(validator(&exported, Dialect::Draft4).is_valid(&json!({"a": 1, "b": "x"})));
    }
}
