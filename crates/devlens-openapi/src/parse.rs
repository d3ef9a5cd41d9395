//! Bytes to a JSON value: JSON or YAML, told apart by content rather than by file extension
//! (servers happily serve YAML as `application/json` and files are often misnamed).

use serde_json::{Map, Number, Value};
use url::Url;

use crate::compact::{Plan, check_json, scan, split_json};
use crate::error::{OpenApiError, SyntaxFormat};
use crate::resolve::{Document, external_refs};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A spec's root document as loaded, with what it declares itself to be and the refs to other
/// documents in it (the first per document).
#[derive(Debug)]
pub(crate) struct RootDocument {
    pub document: Document,
    pub kind: SpecKind,
    pub declared: String,
    pub refs: Vec<String>,
}

/// Reads a spec's root document from the bytes of its file.
///
/// An OpenAPI 3 JSON document that refers to no other document is split as it is read (see
/// `compact`): it is never held whole as a value tree, and its pieces' text reuses the buffer it
/// was read into. Everything else (YAML, Swagger 2.0 which is rewritten at load, JSON with refs to
/// other files, which are followed before splitting) is parsed whole as before and split once
/// loading is done. Errors are the same either way.
pub(crate) fn read_root(
    bytes: Vec<u8>,
    url: Option<Url>,
    location: &str,
) -> Result<RootDocument, OpenApiError> {
    let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let text = bytes.get(start..).unwrap_or_default();
    // The scan does not validate; it is trusted only once `check_json` has.
    let shape = if text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        scan(&bytes, start).filter(|shape| !shape.is_swagger2())
    } else {
        None
    };
    if let Some(shape) = shape {
        let facts = check_json(text).map_err(|e| json_syntax_error(&e, location))?;
        let plan = if facts.refers_elsewhere {
            None
        } else {
            Plan::of(&bytes, shape)
        };
        if let Some(plan) = plan {
            let (kind, declared) = detect_kind(&plan.outline(), location)?;
            if kind == SpecKind::OpenApi3 {
                let (root, pieces) = split_json(bytes, plan);
                return Ok(RootDocument {
                    document: Document::split(url, location, root, pieces),
                    kind,
                    declared,
                    refs: Vec::new(),
                });
            }
        }
    }
    let value = parse_document(&bytes, location)?;
    drop(bytes);
    let (kind, declared) = detect_kind(&value, location)?;
    let refs = external_refs(&value);
    Ok(RootDocument {
        document: Document::parsed(url, location, value),
        kind,
        declared,
        refs,
    })
}

/// Parses a JSON or YAML document into a `serde_json::Value`.
///
/// YAML is read into `serde_norway::Value` first so that merge keys (`<<: *anchor`) are applied
/// and non-string keys (`200:` response codes, `true:`) become strings, as OpenAPI means them.
pub(crate) fn parse_document(bytes: &[u8], location: &str) -> Result<Value, OpenApiError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    match first {
        None => Err(OpenApiError::NotOpenApi {
            location: location.to_string(),
            found: "an empty document".into(),
        }),
        Some(b'{') | Some(b'[') => parse_json(bytes, location),
        Some(_) => parse_yaml(bytes, location),
    }
}

fn parse_json(bytes: &[u8], location: &str) -> Result<Value, OpenApiError> {
    serde_json::from_slice(bytes).map_err(|e| json_syntax_error(&e, location))
}

fn json_syntax_error(e: &serde_json::Error, location: &str) -> OpenApiError {
    OpenApiError::Syntax {
        location: location.to_string(),
        format: SyntaxFormat::Json,
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    }
}

fn parse_yaml(bytes: &[u8], location: &str) -> Result<Value, OpenApiError> {
    let syntax = |e: serde_norway::Error| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        OpenApiError::Syntax {
            location: location.to_string(),
            format: SyntaxFormat::Yaml,
            line,
            column,
            message: strip_position(&e.to_string()),
        }
    };
    let mut yaml: serde_norway::Value = serde_norway::from_slice(bytes).map_err(syntax)?;
    yaml.apply_merge().map_err(syntax)?;
    Ok(yaml_to_json(yaml))
}

/// serde's messages end in "at line X column Y"; the error renders its own position.
fn strip_position(message: &str) -> String {
    let cut = message.find(" at line ").unwrap_or(message.len());
    let head = message.get(..cut).unwrap_or(message);
    head.trim_end_matches([',', ' ']).to_string()
}

/// Converts YAML to JSON. Recursion is bounded by the YAML parser's own nesting limit.
fn yaml_to_json(value: serde_norway::Value) -> Value {
    use serde_norway::Value as Y;
    match value {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Number(i.into())
            } else if let Some(u) = n.as_u64() {
                Value::Number(u.into())
            } else {
                n.as_f64()
                    .and_then(Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(seq) => Value::Array(seq.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                out.insert(yaml_key(k), yaml_to_json(v));
            }
            Value::Object(out)
        }
        // Custom tags (`!include`, `!!binary`) carry no meaning for OpenAPI: keep the value.
        Y::Tagged(tagged) => yaml_to_json(tagged.value),
    }
}

fn yaml_key(key: serde_norway::Value) -> String {
    use serde_norway::Value as Y;
    match key {
        Y::String(s) => s,
        Y::Null => "null".into(),
        Y::Bool(b) => b.to_string(),
        Y::Number(n) => n.to_string(),
        Y::Tagged(t) => yaml_key(t.value),
        other => serde_json::to_string(&yaml_to_json(other)).unwrap_or_default(),
    }
}

/// Which kind of spec a parsed document is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SpecKind {
    Swagger2,
    OpenApi3,
}

/// Checks the `openapi` / `swagger` key and returns the kind and the declared version.
pub(crate) fn detect_kind(doc: &Value, location: &str) -> Result<(SpecKind, String), OpenApiError> {
    let Some(obj) = doc.as_object() else {
        return Err(OpenApiError::NotOpenApi {
            location: location.to_string(),
            found: format!("the document is {}", describe_value(doc)),
        });
    };
    if let Some(v) = obj.get("openapi") {
        let declared = version_string(v);
        return if declared.starts_with("3.0") || declared.starts_with("3.1") {
            Ok((SpecKind::OpenApi3, declared))
        } else {
            Err(OpenApiError::UnsupportedVersion {
                location: location.to_string(),
                declared: format!("openapi: {declared}"),
            })
        };
    }
    if let Some(v) = obj.get("swagger") {
        let declared = version_string(v);
        return if declared == "2.0" || declared == "2" {
            Ok((SpecKind::Swagger2, "2.0".into()))
        } else {
            Err(OpenApiError::UnsupportedVersion {
                location: location.to_string(),
                declared: format!("swagger: {declared}"),
            })
        };
    }
    let keys: Vec<&str> = obj.keys().take(8).map(String::as_str).collect();
    let found = if keys.is_empty() {
        "an empty object".to_string()
    } else if obj.contains_key("swaggerVersion") || obj.contains_key("apiVersion") {
        "what looks like a Swagger 1.x resource listing (unsupported)".to_string()
    } else if obj.contains_key("asyncapi") {
        "an AsyncAPI document (unsupported)".to_string()
    } else {
        let more = if obj.len() > keys.len() { ", ..." } else { "" };
        format!(
            "an object with top-level keys {}{more}",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(OpenApiError::NotOpenApi {
        location: location.to_string(),
        found,
    })
}

/// `openapi: 3.0` and `swagger: 2.0` unquoted in YAML are numbers.
fn version_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => {
            let s = n.to_string();
            if s.contains('.') { s } else { format!("{s}.0") }
        }
        other => describe_value(other),
    }
}

fn describe_value(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(_) => "a string".into(),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_yaml_are_sniffed_by_content() {
        let j = parse_document(b"  {\"openapi\": \"3.0.0\"}", "a.yaml").unwrap();
        assert_eq!(j, json!({"openapi": "3.0.0"}));
        let y = parse_document(b"openapi: 3.1.0\npaths:\n  /a:\n    get:\n      responses:\n        200:\n          description: ok\n", "a.json").unwrap();
        assert_eq!(
            y["paths"]["/a"]["get"]["responses"]["200"]["description"],
            "ok"
        );
    }

    #[test]
    fn yaml_merge_keys_are_applied() {
        let y = parse_document(
            b"base: &b\n  type: string\n  format: uuid\nid:\n  <<: *b\n  description: x\n",
            "a.yaml",
        )
        .unwrap();
        assert_eq!(y["id"]["format"], "uuid");
        assert_eq!(y["id"]["description"], "x");
    }

    #[test]
    fn malformed_json_reports_line_and_column() {
        let e = parse_document(
            b"{\n  \"openapi\": \"3.0.0\",\n  \"info\": {,\n}",
            "bad.json",
        )
        .unwrap_err();
        match &e {
            OpenApiError::Syntax {
                line,
                column,
                format,
                ..
            } => {
                assert_eq!((*line, *column, *format), (3, 12, SyntaxFormat::Json));
            }
            other => panic!("{other:?}"),
        }
        let msg = e.to_string();
        assert!(msg.contains("bad.json is not valid JSON"), "{msg}");
        assert!(msg.contains("line 3, column 12"), "{msg}");
    }

    #[test]
    fn malformed_yaml_reports_line_and_column() {
        let e =
            parse_document(b"openapi: 3.0.0\ninfo:\n  title: [unclosed\n", "bad.yaml").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("bad.yaml is not valid YAML"), "{msg}");
        assert!(matches!(e, OpenApiError::Syntax { line: 4, .. }), "{msg}");
    }

    #[test]
    fn json_roots_split_unless_swagger2_or_multi_file_and_fail_alike() {
        let split = read_root(
            br#"{"openapi": "3.0.0", "paths": {"/a": {}}}"#.to_vec(),
            None,
            "a.json",
        )
        .unwrap();
        assert_eq!(split.kind, SpecKind::OpenApi3);
        assert!(format!("{:?}", split.document).contains("Members"));
        for whole in [
            br#"{"swagger": "2.0", "paths": {"/a": {}}}"#.as_slice(),
            br#"{"openapi": "3.0.0", "paths": {"/a": {"$ref": "a.json#/x"}}}"#,
            b"openapi: 3.0.0\npaths: {}\n",
        ] {
            let root = read_root(whole.to_vec(), None, "a").unwrap();
            assert!(!format!("{:?}", root.document).contains("Members"));
        }
        let multi = read_root(
            br#"{"openapi": "3.0.0", "paths": {"/a": {"$ref": "a.json#/x"}}}"#.to_vec(),
            None,
            "a",
        )
        .unwrap();
        assert_eq!(multi.refs, ["a.json#/x"]);
        for bad in [
            b"\xEF\xBB\xBF{\n  \"openapi\": \"3.0.0\",\n  \"info\": {,\n}".as_slice(),
            b"{\"openapi\": \"3.0.0\", \"x\": \"\\ud800\"}",
            b"{\"openapi\": \"3.0.0\"} trailing",
        ] {
            let read = read_root(bad.to_vec(), None, "bad.json").unwrap_err();
            let parsed = parse_document(bad, "bad.json").unwrap_err();
            assert_eq!(read.to_string(), parsed.to_string());
        }
        let e = read_root(br#"{"name": "pkg"}"#.to_vec(), None, "package.json").unwrap_err();
        assert!(e.to_string().contains("top-level keys `name`"), "{e}");
    }

    #[test]
    fn versions_are_detected_and_checked() {
        let k = detect_kind(&json!({"swagger": "2.0"}), "x").unwrap();
        assert_eq!(k, (SpecKind::Swagger2, "2.0".into()));
        let k = detect_kind(&json!({"swagger": 2.0}), "x").unwrap();
        assert_eq!(k.0, SpecKind::Swagger2);
        let k = detect_kind(&json!({"openapi": "3.1.0"}), "x").unwrap();
        assert_eq!(k, (SpecKind::OpenApi3, "3.1.0".into()));
        let e = detect_kind(&json!({"openapi": "4.0.0"}), "x").unwrap_err();
        assert!(e.to_string().contains("declares openapi: 4.0.0"), "{e}");
        let e = detect_kind(&json!({"name": "pkg", "version": "1"}), "package.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("top-level keys `name`, `version`"), "{e}");
        let e = detect_kind(&json!([1, 2]), "x").unwrap_err().to_string();
        assert!(e.contains("an array of 2 items"), "{e}");
    }
}
