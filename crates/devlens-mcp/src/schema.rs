//! Leaner tool schemas. Every client sends `tools/list` to its model, so each token there is paid
//! on every conversation, and the TypeScript SDK compiles every output schema (Ajv) before its
//! `listTools()` returns. schemars writes optional arguments for validators, not for models:
//! `"type": ["string", "null"]`, `"default": null`, `anyOf [$ref, null]`, Rust integer formats
//! (`uint64`, which JSON Schema validators then warn about), a `$schema` line per tool, and the
//! line breaks of the doc comments it reads. The meaning for a caller is unchanged by dropping
//! them: an argument that is not `required` may be left out, and an empty default (`[]`, `false`,
//! `0`, `""`) is what leaving it out means.

use serde_json::{Map, Value};

/// Integer formats schemars derives from Rust types; not JSON Schema formats.
const RUST_NUMBER_FORMATS: &[&str] = &[
    "uint", "uint8", "uint16", "uint32", "uint64", "uint128", "int", "int8", "int16", "int32",
    "int64", "int128", "float", "double",
];

/// An input schema as a model needs it: optional arguments without their `null` alternatives,
/// enums referenced once inlined, no Rust formats or implied bounds.
pub(crate) fn compact_input_schema(schema: &mut Map<String, Value>) {
    schema.remove("$schema");
    unwrap_descriptions(schema);
    drop_empty_defaults(schema);
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        for definition in defs.values_mut() {
            if let Value::Object(definition) = definition {
                const_unions_to_enums(definition);
            }
        }
    }
    let defs = schema.get("$defs").and_then(Value::as_object).cloned();
    inline_single_use_definitions(schema);
    optional_properties_without_null(schema, defs.as_ref());
    strip_rust_formats(schema);
    drop_unused_defs(schema);
}

/// Applies [`drop_null_alternative`] to the optional properties of an object schema and of the
/// object schemas nested in it.
fn optional_properties_without_null(
    schema: &mut Map<String, Value>,
    defs: Option<&Map<String, Value>>,
) {
    const_unions_to_enums(schema);
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if let Value::Object(property) = property {
                if !required.contains(name) {
                    drop_null_alternative(property, defs);
                }
                optional_properties_without_null(property, defs);
            }
        }
    }
}

/// `oneOf: [{const: "a", description}, {const: "b", …}]` (how schemars writes a documented
/// Rust enum) → `enum: ["a", "b"]`, the variants' descriptions folded into one line.
fn const_unions_to_enums(schema: &mut Map<String, Value>) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(alternatives)) = schema.get(key) else {
            continue;
        };
        let mut values = Vec::new();
        let mut explained = Vec::new();
        for alternative in alternatives {
            let Some(alternative) = alternative.as_object() else {
                return;
            };
            let Some(constant) = alternative.get("const").and_then(Value::as_str) else {
                return;
            };
            if alternative
                .keys()
                .any(|k| !matches!(k.as_str(), "const" | "type" | "description"))
            {
                return;
            }
            if let Some(description) = alternative.get("description").and_then(Value::as_str) {
                explained.push(format!("{constant}: {}", description.trim_end_matches('.')));
            }
            values.push(Value::String(constant.to_string()));
        }
        schema.remove(key);
        schema.insert("type".into(), Value::String("string".into()));
        schema.insert("enum".into(), Value::Array(values));
        if !explained.is_empty() && !schema.contains_key("description") {
            schema.insert(
                "description".into(),
                Value::String(explained.join("; ") + "."),
            );
        }
        return;
    }
}

/// Replaces each `$ref` to a definition used only once by the definition itself: one level
/// less for the reader, and the definition's name is not worth its tokens.
fn inline_single_use_definitions(schema: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = schema.get("$defs").cloned() else {
        return;
    };
    let text = Value::Object(schema.clone()).to_string();
    let single: Map<String, Value> = defs
        .into_iter()
        .filter(|(name, _)| text.matches(&format!("\"#/$defs/{name}\"")).count() == 1)
        .collect();
    if single.is_empty() {
        return;
    }
    for (key, value) in schema.iter_mut() {
        if key != "$defs" {
            inline_refs(value, &single);
        }
    }
}

fn inline_refs(value: &mut Value, single: &Map<String, Value>) {
    match value {
        Value::Object(map) => {
            let definition = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|name| single.get(name))
                .and_then(Value::as_object);
            if let Some(definition) = definition {
                map.remove("$ref");
                // The referring property's own words win over the definition's.
                for (key, value) in definition {
                    map.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            for child in map.values_mut() {
                inline_refs(child, single);
            }
        }
        Value::Array(items) => {
            for item in items {
                inline_refs(item, single);
            }
        }
        _ => {}
    }
}

/// `T`'s input schema, compacted, with `property` described by another tool: its own words
/// replaced by `refer` (e.g. "As in write_file."), the descriptions nested in it dropped (its
/// names, types and values stay). Two tools taking the same argument then explain it once.
pub(crate) fn input_schema_referring<T: schemars::JsonSchema + std::any::Any>(
    property: &str,
    refer: &str,
) -> std::sync::Arc<Map<String, Value>> {
    let schema = rmcp::handler::server::common::schema_for_input::<T>()
        .unwrap_or_else(|e| panic!("input schema of {}: {e}", std::any::type_name::<T>()));
    let mut schema = (*schema).clone();
    compact_input_schema(&mut schema);
    let Some(Value::Object(described)) = schema
        .get_mut("properties")
        .and_then(|p| p.get_mut(property))
    else {
        panic!("{} has no property {property}", std::any::type_name::<T>());
    };
    for_each_schema(described, &mut |nested| {
        nested.remove("description");
    });
    described.insert("description".into(), Value::String(refer.into()));
    std::sync::Arc::new(schema)
}

/// An output schema as a client uses it: to check the structured content (the model reads the
/// text answer). Names, types and `null`s stay; `$schema`, Rust formats, descriptions and
/// defaults (a result holds every value) go, and definitions used once are inlined.
pub(crate) fn compact_output_schema(schema: &mut Map<String, Value>) {
    schema.remove("$schema");
    for_each_schema(schema, &mut |schema| {
        if schema.get("description").is_some_and(Value::is_string) {
            schema.remove("description");
        }
        schema.remove("default");
    });
    inline_single_use_definitions(schema);
    strip_rust_formats(schema);
    drop_unused_defs(schema);
}

/// A doc comment's wrapped lines joined into one: schemars and rmcp keep the line breaks of the
/// `///` comments they read, which a model has no use for. A break before a list item, an
/// indented or fenced line or an empty line (a paragraph) stays.
pub(crate) fn unwrap_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        let Some(next) = lines.peek() else { break };
        let keeps_break = line.is_empty()
            || next.is_empty()
            || next.starts_with([' ', '\t', '-', '*', '|', '`', '#'])
            || next
                .split_once(". ")
                .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()));
        out.push(if keeps_break { '\n' } else { ' ' });
    }
    out
}

/// [`unwrap_lines`] on every `description` of a schema.
fn unwrap_descriptions(schema: &mut Map<String, Value>) {
    for_each_schema(schema, &mut |schema| {
        if let Some(Value::String(description)) = schema.get_mut("description")
            && description.contains('\n')
        {
            *description = unwrap_lines(description);
        }
    });
}

/// Removes `default`s that say what leaving the argument out says anyway: `[]`, `{}`, `false`,
/// `0` and `""`.
fn drop_empty_defaults(schema: &mut Map<String, Value>) {
    for_each_schema(schema, &mut |schema| {
        let empty = match schema.get("default") {
            Some(Value::Array(items)) => items.is_empty(),
            Some(Value::Object(map)) => map.is_empty(),
            Some(Value::Bool(b)) => !b,
            Some(Value::Number(n)) => n.as_f64() == Some(0.0),
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        };
        if empty {
            schema.remove("default");
        }
    });
}

/// Calls `f` on `schema` and on every schema nested in it (properties, definitions, items,
/// alternatives), never on the names of properties or the data a schema holds (`enum`, `const`,
/// `default`, `examples`).
fn for_each_schema<F: FnMut(&mut Map<String, Value>)>(schema: &mut Map<String, Value>, f: &mut F) {
    f(schema);
    for (key, child) in schema.iter_mut() {
        match (key.as_str(), child) {
            ("enum" | "const" | "default" | "examples" | "required", _) => {}
            (
                "properties" | "$defs" | "definitions" | "patternProperties",
                Value::Object(named),
            ) => {
                for nested in named.values_mut() {
                    if let Value::Object(nested) = nested {
                        for_each_schema(nested, f);
                    }
                }
            }
            (_, Value::Object(nested)) => for_each_schema(nested, f),
            (_, Value::Array(items)) => {
                for item in items {
                    if let Value::Object(nested) = item {
                        for_each_schema(nested, f);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `type: [T, "null"]` → `type: T`; `anyOf: [X, {type: null}]` → X (a referenced definition
/// inlined, keeping the property's own description); `default: null` removed.
fn drop_null_alternative(property: &mut Map<String, Value>, defs: Option<&Map<String, Value>>) {
    if property.get("default") == Some(&Value::Null) {
        property.remove("default");
    }
    if let Some(Value::Array(types)) = property.get("type") {
        let rest: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if rest.len() < types.len() {
            let single = (rest.len() == 1).then(|| rest[0].clone());
            property.insert("type".into(), single.unwrap_or(Value::Array(rest)));
        }
    }
    let Some(Value::Array(any_of)) = property.get("anyOf") else {
        return;
    };
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    let rest: Vec<&Value> = any_of.iter().filter(|v| !is_null(v)).collect();
    let [only] = rest[..] else {
        return;
    };
    if rest.len() == any_of.len() {
        return;
    }
    let mut replacement = match only.get("$ref").and_then(Value::as_str) {
        Some(reference) => match reference
            .strip_prefix("#/$defs/")
            .and_then(|name| defs?.get(name))
        {
            Some(Value::Object(definition)) => definition.clone(),
            _ => only.as_object().cloned().unwrap_or_default(),
        },
        None => only.as_object().cloned().unwrap_or_default(),
    };
    property.remove("anyOf");
    // The property's own words win over the definition's.
    if let Some(description) = property.remove("description") {
        replacement.insert("description".into(), description);
    }
    for (key, value) in replacement {
        property.entry(key).or_insert(value);
    }
}

/// Removes Rust number formats everywhere, with the bounds they imply (`minimum: 0` of an
/// unsigned type, the type's maximum).
fn strip_rust_formats(value: &mut Map<String, Value>) {
    let format = value
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| RUST_NUMBER_FORMATS.contains(f))
        .map(String::from);
    if let Some(format) = format {
        value.remove("format");
        if format.starts_with("uint") && value.get("minimum").and_then(Value::as_u64) == Some(0) {
            value.remove("minimum");
        }
        let implied_max = match format.as_str() {
            "uint8" => Some(u64::from(u8::MAX)),
            "uint16" => Some(u64::from(u16::MAX)),
            "uint32" => Some(u64::from(u32::MAX)),
            _ => None,
        };
        if implied_max.is_some() && value.get("maximum").and_then(Value::as_u64) == implied_max {
            value.remove("maximum");
        }
    }
    for child in value.values_mut() {
        match child {
            Value::Object(map) => strip_rust_formats(map),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(map) = item {
                        strip_rust_formats(map);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Drops `$defs` entries nothing refers to any more (and `$defs` itself when empty).
fn drop_unused_defs(schema: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = schema.remove("$defs") else {
        return;
    };
    let mut kept = Map::new();
    // A definition may refer to another: repeat until nothing new is kept.
    loop {
        let text = format!(
            "{}{}",
            Value::Object(schema.clone()),
            Value::Object(kept.clone())
        );
        let before = kept.len();
        for (name, definition) in &defs {
            if !kept.contains_key(name) && text.contains(&format!("\"#/$defs/{name}\"")) {
                kept.insert(name.clone(), definition.clone());
            }
        }
        if kept.len() == before {
            break;
        }
    }
    if !kept.is_empty() {
        schema.insert("$defs".into(), Value::Object(kept));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn compact(mut value: Value) -> Value {
        compact_input_schema(value.as_object_mut().unwrap());
        value
    }

    #[test]
    fn optional_arguments_lose_their_null_alternatives_and_rust_formats() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "ImageFormat": {"type": "string", "enum": ["png", "jpeg"]},
                "Unused": {"type": "string"}
            },
            "type": "object",
            "required": ["element"],
            "properties": {
                "element": {"type": "string", "description": "A ref or selector."},
                "format": {
                    "description": "png (default) or jpeg.",
                    "anyOf": [{"$ref": "#/$defs/ImageFormat"}, {"type": "null"}],
                    "default": null
                },
                "quality": {
                    "type": ["integer", "null"], "format": "uint8",
                    "minimum": 0, "maximum": 255, "default": null
                },
                "limit": {"type": ["integer", "null"], "format": "uint", "minimum": 1}
            }
        });
        assert_eq!(
            compact(schema),
            json!({
                "type": "object",
                "required": ["element"],
                "properties": {
                    "element": {"type": "string", "description": "A ref or selector."},
                    "format": {
                        "description": "png (default) or jpeg.",
                        "type": "string", "enum": ["png", "jpeg"]
                    },
                    "quality": {"type": "integer"},
                    "limit": {"type": "integer", "minimum": 1}
                }
            })
        );
    }

    #[test]
    fn required_arguments_and_shared_definitions_are_kept() {
        let schema = json!({
            "$defs": {
                "Target": {"type": "object", "properties": {"kind": {"$ref": "#/$defs/Kind"}}},
                "Kind": {"type": "string", "enum": ["a", "b"]}
            },
            "type": "object",
            "required": ["must"],
            "properties": {
                "must": {"type": ["string", "null"]},
                "first": {"$ref": "#/$defs/Target"},
                "second": {"$ref": "#/$defs/Target"}
            }
        });
        let compacted = compact(schema.clone());
        assert_eq!(
            compacted["properties"]["must"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            compacted["$defs"], schema["$defs"],
            "both definitions still referred to"
        );
    }

    #[test]
    fn documented_enums_become_enum_lists_and_single_definitions_are_inlined() {
        let schema = json!({
            "$defs": {
                "Action": {"oneOf": [
                    {"type": "string", "const": "list", "description": "The tabs."},
                    {"type": "string", "const": "close", "description": "Close one."}
                ]},
                "Size": {"type": "object", "required": ["width"], "properties": {
                    "width": {"type": "integer"},
                    "scale": {"type": ["number", "null"], "description": "Pixel ratio."}
                }}
            },
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {"$ref": "#/$defs/Action"},
                "mode": {"description": "Own words.", "$ref": "#/$defs/Action"},
                "size": {"$ref": "#/$defs/Size"}
            }
        });
        let compacted = compact(schema);
        assert_eq!(
            compacted["$defs"]["Action"],
            json!({"type": "string", "enum": ["list", "close"],
                   "description": "list: The tabs; close: Close one."}),
            "used twice, so kept as a definition"
        );
        assert_eq!(
            compacted["properties"]["size"],
            json!({"type": "object", "required": ["width"], "properties": {
                "width": {"type": "integer"},
                "scale": {"type": "number", "description": "Pixel ratio."}
            }})
        );
        assert!(compacted["$defs"].get("Size").is_none());
    }

    #[test]
    fn output_schemas_keep_null_but_lose_rust_formats() {
        let mut schema = json!({
            "$schema": "x",
            "type": "object",
            "properties": {"size": {"type": ["integer", "null"], "format": "uint64", "minimum": 0}}
        });
        compact_output_schema(schema.as_object_mut().unwrap());
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {"size": {"type": ["integer", "null"]}}})
        );
    }

    #[test]
    fn wrapped_lines_are_joined_and_empty_defaults_dropped_but_not_properties_named_so() {
        let schema = json!({
            "type": "object",
            "description": "One line\nwrapped here.\n\nA paragraph:\n- an item\n- another",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                "mobile": {"type": "boolean", "default": false},
                "view": {"type": "string", "default": "frameworks"},
                "default": {},
                "description": {"type": "string", "description": "Two\nlines."}
            }
        });
        let compacted = compact(schema);
        assert_eq!(
            compacted["description"],
            "One line wrapped here.\n\nA paragraph:\n- an item\n- another"
        );
        assert_eq!(
            compacted["properties"]["description"]["description"],
            "Two lines."
        );
        assert_eq!(compacted["properties"]["tags"].get("default"), None);
        assert_eq!(compacted["properties"]["mobile"].get("default"), None);
        assert_eq!(compacted["properties"]["view"]["default"], "frameworks");
        assert_eq!(
            compacted["properties"]["default"],
            json!({}),
            "a parameter stays"
        );
    }

    #[test]
    fn output_schemas_lose_descriptions_and_single_use_definitions() {
        let mut schema = json!({
            "$defs": {"Tag": {"description": "A tag.", "type": "object",
                "properties": {"name": {"type": "string", "description": "Its name."}},
                "required": ["name"]}},
            "type": "object",
            "required": ["tags"],
            "properties": {"tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}}}
        });
        compact_output_schema(schema.as_object_mut().unwrap());
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "required": ["tags"],
                "properties": {"tags": {"type": "array", "items": {"type": "object",
                    "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
            })
        );
    }
}
