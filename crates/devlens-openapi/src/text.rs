//! Compact schemas as one line of TypeScript-like text, the cheapest form for an agent to read:
//! `{ title: string | integer; body?: string; labels?: (string | { name?: string })[] }`.
//!
//! Input is always the output of [`crate::schema::compact_schema`]: a finite tree, already
//! bounded in depth and size, with markers instead of refs. Markers read as:
//! `↺Node` (a cycle back to the `Node` schema), `{…}` (cut for depth), `…` (cut for size),
//! `unresolved(#/x)`, `…+3 more` (omitted properties, enum values or alternatives).

use serde_json::{Map, Value};

/// Renders a compact schema.
pub(crate) fn schema_text(schema: &Value) -> String {
    let mut out = String::new();
    render(schema, &mut out);
    out
}

fn render(v: &Value, out: &mut String) {
    let m = match v {
        Value::Object(m) => m,
        Value::Bool(false) => {
            out.push_str("never");
            return;
        }
        _ => {
            out.push_str("any");
            return;
        }
    };
    if let Some(target) = m.get("$cycle").and_then(Value::as_str) {
        out.push('↺');
        out.push_str(schema_name(target));
        return;
    }
    if let Some(target) = m.get("$unresolved") {
        out.push_str("unresolved(");
        out.push_str(target.as_str().unwrap_or("?"));
        out.push(')');
        return;
    }

    let mut alternatives: Vec<String> = Vec::new();
    if let Some(c) = m.get("const") {
        alternatives.push(literal(c));
    } else if let Some(Value::Array(values)) = m.get("enum") {
        alternatives.extend(values.iter().map(literal));
        if let Some(n) = m.get("$enumOmitted").and_then(Value::as_u64) {
            alternatives.push(format!("…+{n} more"));
        }
    } else if let Some(Value::Array(variants)) = m.get("oneOf").or_else(|| m.get("anyOf")) {
        let base = base_type(m);
        for variant in variants {
            let text = schema_text(variant);
            // `{type: object, oneOf: [...]}`: the variants say more than the bare base type.
            alternatives.push(text);
        }
        if let Some(n) = m.get("$variantsOmitted").and_then(Value::as_u64) {
            alternatives.push(format!("…+{n} more"));
        }
        if alternatives.is_empty() {
            alternatives.push(base);
        } else if m.contains_key("properties") {
            // Shared properties next to the alternatives: `{ kind: string } & (A | B)`.
            let shared = base;
            let union = alternatives.join(" | ");
            alternatives = vec![format!("{shared} & ({union})")];
        }
    } else {
        alternatives.push(base_type(m));
    }
    if let Some(Value::Array(parts)) = m.get("allOf") {
        let extra: Vec<String> = parts.iter().map(schema_text).collect();
        if let Some(first) = alternatives.first_mut() {
            for e in extra {
                first.push_str(" & ");
                first.push_str(&e);
            }
        }
    }
    let nullable = m.get("nullable").and_then(Value::as_bool) == Some(true)
        || matches!(m.get("type"), Some(Value::Array(ts)) if ts.iter().any(|t| t == "null"));
    if nullable && !alternatives.iter().any(|a| a == "null") {
        alternatives.push("null".into());
    }
    out.push_str(&alternatives.join(" | "));
}

/// The type part, ignoring enum/const/unions.
fn base_type(m: &Map<String, Value>) -> String {
    let truncated = m.get("$truncated").and_then(Value::as_str);
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ if m.contains_key("properties") || m.contains_key("additionalProperties") => {
            vec!["object"]
        }
        _ if m.contains_key("items") => vec!["array"],
        _ => Vec::new(),
    };
    if types.is_empty() {
        return match truncated {
            Some(_) => "…".into(),
            None => "any".into(),
        };
    }
    let rendered: Vec<String> = types
        .iter()
        .map(|t| match (*t, truncated) {
            ("object", Some("depth")) => "{…}".to_string(),
            ("array", Some("depth")) => "…[]".to_string(),
            (_, Some(_)) => "…".to_string(),
            ("object", None) => object_text(m),
            ("array", None) => array_text(m),
            (t, None) => match m.get("format").and_then(Value::as_str) {
                Some(f) => format!("{t}({f})"),
                None => t.to_string(),
            },
        })
        .collect();
    rendered.join(" | ")
}

fn object_text(m: &Map<String, Value>) -> String {
    let props = m.get("properties").and_then(Value::as_object);
    let additional = m.get("additionalProperties");
    let omitted = m.get("$propertiesOmitted").and_then(Value::as_u64);
    if props.is_none_or(Map::is_empty) && additional.is_none() && omitted.is_none() {
        return "object".into();
    }
    let required: Vec<&str> = m
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<String> = Vec::new();
    for (name, schema) in props.into_iter().flatten() {
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        fields.push(format!("{}{optional}: {}", key(name), schema_text(schema)));
    }
    if let Some(a) = additional {
        fields.push(format!("[key: string]: {}", schema_text(a)));
    }
    if let Some(n) = omitted {
        fields.push(format!("…+{n} more"));
    }
    format!("{{ {} }}", fields.join("; "))
}

fn array_text(m: &Map<String, Value>) -> String {
    let Some(items) = m.get("items") else {
        return "any[]".into();
    };
    let inner = schema_text(items);
    if is_union(items) {
        format!("({inner})[]")
    } else {
        format!("{inner}[]")
    }
}

/// Does a schema render as `A | B` (or `A & B`) at its top level, so that `[]` after it needs
/// parentheses? Mirrors the choices made in `render`.
fn is_union(v: &Value) -> bool {
    let Some(m) = v.as_object() else {
        return false;
    };
    if m.contains_key("$cycle") || m.contains_key("$unresolved") {
        return false;
    }
    let count = |key: &str| m.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    let nullable = m.get("nullable").and_then(Value::as_bool) == Some(true);
    let types = match m.get("type") {
        Some(Value::Array(ts)) => ts.len(),
        _ => 1,
    };
    let alternatives = if m.contains_key("const") {
        1
    } else if m.contains_key("enum") {
        count("enum") + usize::from(m.contains_key("$enumOmitted"))
    } else if m.contains_key("oneOf") || m.contains_key("anyOf") {
        count("oneOf").max(count("anyOf")) + usize::from(m.contains_key("$variantsOmitted"))
    } else {
        types
    };
    alternatives + usize::from(nullable) > 1 || count("allOf") > 0
}

/// Property names that are not plain identifiers are quoted, as in TypeScript.
fn key(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain {
        name.to_string()
    } else {
        serde_json::to_string(name).unwrap_or_else(|_| name.to_string())
    }
}

fn literal(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `#/components/schemas/Node` reads as `Node`, `pet.yaml#/Pet` as `Pet`.
fn schema_name(reference: &str) -> &str {
    reference
        .rsplit(['/', '#'])
        .find(|s| !s.is_empty())
        .unwrap_or(reference)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_arrays_and_unions_read_like_typescript() {
        let s = json!({"type": "object", "required": ["title"], "properties": {
            "title": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "body": {"type": "string"},
            "labels": {"type": "array", "items": {"oneOf": [
                {"type": "string"},
                {"type": "object", "properties": {"name": {"type": "string"}}}
            ]}},
            "due_on": {"type": "string", "format": "date-time", "nullable": true},
            "state": {"type": "string", "enum": ["open", "closed"]},
            "content-type": {"type": "string"}
        }});
        assert_eq!(
            schema_text(&s),
            "{ title: string | integer; body?: string; labels?: (string | { name?: string })[]; \
             due_on?: string(date-time) | null; state?: \"open\" | \"closed\"; \"content-type\"?: string }"
        );
    }

    #[test]
    fn markers_read_briefly() {
        assert_eq!(
            schema_text(&json!({"$cycle": "#/components/schemas/Node"})),
            "↺Node"
        );
        assert_eq!(
            schema_text(&json!({"$unresolved": "#/x/Y"})),
            "unresolved(#/x/Y)"
        );
        assert_eq!(
            schema_text(&json!({"type": "object", "$truncated": "depth"})),
            "{…}"
        );
        assert_eq!(schema_text(&json!({"$truncated": "size"})), "…");
        assert_eq!(
            schema_text(
                &json!({"type": "object", "properties": {"a": {"type": "integer"}}, "$propertiesOmitted": 3})
            ),
            "{ a?: integer; …+3 more }"
        );
        assert_eq!(
            schema_text(&json!({"type": "string", "enum": ["a"], "$enumOmitted": 9})),
            "\"a\" | …+9 more"
        );
    }

    #[test]
    fn type_arrays_maps_and_empty_schemas() {
        assert_eq!(
            schema_text(&json!({"type": ["string", "null"]})),
            "string | null"
        );
        assert_eq!(
            schema_text(&json!({"type": "object", "additionalProperties": {"type": "integer"}})),
            "{ [key: string]: integer }"
        );
        assert_eq!(schema_text(&json!({})), "any");
        assert_eq!(schema_text(&json!({"type": "object"})), "object");
        assert_eq!(schema_text(&json!({"type": "array"})), "any[]");
        assert_eq!(
            schema_text(
                &json!({"type": "array", "items": {"type": "object", "properties": {
                    "a": {"type": "string", "nullable": true}
                }}})
            ),
            "{ a?: string | null }[]"
        );
        assert_eq!(
            schema_text(&json!({"type": "array", "items": {"type": ["string", "null"]}})),
            "(string | null)[]"
        );
    }
}
