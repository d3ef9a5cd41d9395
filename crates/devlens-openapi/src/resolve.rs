//! `$ref` resolution over a set of documents: the spec itself plus the external documents it
//! references, all loaded up front so that resolving is synchronous and cannot do I/O.
//!
//! Nothing here recurses on refs: following a chain of refs is a loop with a hop limit, so a
//! cycle (`A -> B -> A`) or a very long chain ends in an error instead of a hang or a stack
//! overflow. Cycle *marking* for schemas (a tree node whose children are nodes) is the job of
//! the schema compactor, which keeps its own stack of open refs.

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;
use url::Url;

/// Index of a document in a [`DocSet`]; the spec itself is [`ROOT`].
pub(crate) type DocId = usize;

/// The spec's own document.
pub(crate) const ROOT: DocId = 0;

/// How many `$ref` hops one resolution may take (ref to ref to ref ...).
const MAX_HOPS: usize = 32;

/// One parsed document.
#[derive(Debug)]
pub(crate) struct Document {
    /// Absolute location used as the base for relative refs; `None` when the spec was given as
    /// bytes without a location, in which case refs to other documents cannot resolve.
    pub url: Option<Url>,
    /// How the document is named in messages (redacted).
    pub display: String,
    pub value: Value,
}

/// The spec and every document it references.
#[derive(Debug)]
pub(crate) struct DocSet {
    docs: Vec<Document>,
    by_url: HashMap<String, DocId>,
}

/// A ref target: which document, the JSON pointer inside it, and the value there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved<'a> {
    pub doc: DocId,
    pub value: &'a Value,
}

/// Why a ref did not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefError {
    /// The ref names another document that was not loaded (or cannot be, without a base URL).
    DocumentNotLoaded(String),
    /// The fragment is not a JSON pointer (`#Pet`, a 3.1 `$anchor`).
    NotAPointer(String),
    /// The pointer leads nowhere in its document.
    NotFound(String),
    /// The ref string is not a valid URI reference.
    Invalid(String),
    /// Too many hops: a ref cycle or an absurd chain.
    TooManyHops,
}

impl fmt::Display for RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefError::DocumentNotLoaded(d) => write!(f, "document `{d}` is not loaded"),
            RefError::NotAPointer(p) => write!(f, "`#{p}` is not a JSON pointer"),
            RefError::NotFound(p) => write!(f, "nothing at `#{p}`"),
            RefError::Invalid(why) => write!(f, "invalid reference ({why})"),
            RefError::TooManyHops => write!(f, "the $ref chain loops or is longer than {MAX_HOPS}"),
        }
    }
}

impl DocSet {
    pub(crate) fn new(root: Document) -> DocSet {
        let mut set = DocSet {
            docs: Vec::new(),
            by_url: HashMap::new(),
        };
        set.add(root);
        set
    }

    /// Adds a document; returns its id (the existing one if that URL is already loaded).
    pub(crate) fn add(&mut self, doc: Document) -> DocId {
        if let Some(key) = doc.url.as_ref().map(doc_key)
            && let Some(&id) = self.by_url.get(&key)
        {
            return id;
        }
        let id = self.docs.len();
        if let Some(url) = &doc.url {
            self.by_url.insert(doc_key(url), id);
        }
        self.docs.push(doc);
        id
    }

    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    pub(crate) fn contains_url(&self, url: &Url) -> bool {
        self.by_url.contains_key(&doc_key(url))
    }

    pub(crate) fn doc(&self, id: DocId) -> Option<&Document> {
        self.docs.get(id)
    }

    pub(crate) fn root(&self) -> &Value {
        self.docs.get(ROOT).map_or(&Value::Null, |d| &d.value)
    }

    pub(crate) fn root_mut(&mut self) -> Option<&mut Value> {
        self.docs.get_mut(ROOT).map(|d| &mut d.value)
    }

    pub(crate) fn value(&self, id: DocId) -> &Value {
        self.docs.get(id).map_or(&Value::Null, |d| &d.value)
    }

    /// The absolute URL of the document a ref names (without fragment), when it names another
    /// document; `Ok(None)` for a local ref.
    pub(crate) fn target_url(&self, reference: &str, from: DocId) -> Result<Option<Url>, RefError> {
        let doc_part = reference.split('#').next().unwrap_or("");
        if doc_part.is_empty() {
            return Ok(None);
        }
        let base = self.docs.get(from).and_then(|d| d.url.as_ref());
        let joined = match base {
            Some(base) => base.join(doc_part),
            None => Url::parse(doc_part),
        };
        match joined {
            Ok(mut url) => {
                url.set_fragment(None);
                Ok(Some(url))
            }
            Err(url::ParseError::RelativeUrlWithoutBase) => {
                Err(RefError::DocumentNotLoaded(doc_part.to_string()))
            }
            Err(e) => Err(RefError::Invalid(e.to_string())),
        }
    }

    /// Where a ref points: the document and the decoded JSON pointer (without the `#`).
    pub(crate) fn locate(&self, reference: &str, from: DocId) -> Result<(DocId, String), RefError> {
        let fragment = reference.split_once('#').map_or("", |(_, f)| f);
        let doc = match self.target_url(reference, from)? {
            None => from,
            Some(url) => *self
                .by_url
                .get(&doc_key(&url))
                .ok_or_else(|| RefError::DocumentNotLoaded(url.to_string()))?,
        };
        let pointer = percent_decode(fragment);
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(RefError::NotAPointer(pointer));
        }
        Ok((doc, pointer))
    }

    /// Resolves one ref (following further refs only where the pointer has to pass through one).
    pub(crate) fn resolve(&self, reference: &str, from: DocId) -> Result<Resolved<'_>, RefError> {
        let (doc, pointer) = self.locate(reference, from)?;
        self.pointer(doc, &pointer)
    }

    /// Evaluates a decoded JSON pointer in a document.
    ///
    /// Where a pointer steps into an object that is itself a `$ref` and lacks the next key, the
    /// ref is followed: `#/paths/~1pets/get/responses/200/content` should work when that
    /// response is a ref, as most tools allow.
    pub(crate) fn pointer(&self, doc: DocId, pointer: &str) -> Result<Resolved<'_>, RefError> {
        let mut cur = Resolved {
            doc,
            value: self.value(doc),
        };
        if self.docs.get(doc).is_none() {
            return Err(RefError::DocumentNotLoaded(format!("#{doc}")));
        }
        let mut hops = 0;
        for raw in pointer.split('/').skip(1) {
            let segment = unescape_segment(raw);
            loop {
                let next = match cur.value {
                    Value::Object(map) => map.get(segment.as_ref()),
                    Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
                    _ => None,
                };
                if let Some(value) = next {
                    cur.value = value;
                    break;
                }
                match cur.value.get("$ref").and_then(Value::as_str) {
                    Some(r) if hops < MAX_HOPS => {
                        hops += 1;
                        let (d, p) = self.locate(r, cur.doc)?;
                        cur = self.pointer_no_follow(d, &p)?;
                    }
                    Some(_) => return Err(RefError::TooManyHops),
                    None => return Err(RefError::NotFound(pointer.to_string())),
                }
            }
        }
        Ok(cur)
    }

    /// Pointer evaluation without following refs on the way (used inside [`Self::pointer`] so
    /// the mutual recursion is at most one level deep).
    fn pointer_no_follow(&self, doc: DocId, pointer: &str) -> Result<Resolved<'_>, RefError> {
        let mut value = self
            .docs
            .get(doc)
            .map(|d| &d.value)
            .ok_or_else(|| RefError::DocumentNotLoaded(format!("#{doc}")))?;
        for raw in pointer.split('/').skip(1) {
            let segment = unescape_segment(raw);
            value = match value {
                Value::Object(map) => map.get(segment.as_ref()),
                Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            }
            .ok_or_else(|| RefError::NotFound(pointer.to_string()))?;
        }
        Ok(Resolved { doc, value })
    }

    /// Follows `$ref` until reaching a value that is not a ref. Used for parameters, responses,
    /// request bodies and path items, which (unlike schemas) cannot legitimately be recursive.
    pub(crate) fn deref<'a>(
        &'a self,
        value: &'a Value,
        doc: DocId,
    ) -> Result<Resolved<'a>, RefError> {
        let mut cur = Resolved { doc, value };
        for _ in 0..MAX_HOPS {
            match cur.value.get("$ref").and_then(Value::as_str) {
                Some(r) => cur = self.resolve(r, cur.doc)?,
                None => return Ok(cur),
            }
        }
        Err(RefError::TooManyHops)
    }

    /// A ref as a person should read it: local refs as written (`#/components/schemas/Pet`),
    /// refs into other documents with that document's file name (`pet.yaml#/Pet`).
    pub(crate) fn display_ref(&self, doc: DocId, pointer: &str) -> String {
        let escaped = pointer.replace('%', "%25");
        if doc == ROOT {
            return format!("#{escaped}");
        }
        let name = self
            .docs
            .get(doc)
            .and_then(|d| d.url.as_ref())
            .and_then(|u| {
                u.path_segments()
                    .and_then(|mut s| s.next_back().map(String::from))
            })
            .unwrap_or_else(|| "external".to_string());
        format!("{name}#{escaped}")
    }
}

/// The key a document is known by: its URL without fragment.
fn doc_key(url: &Url) -> String {
    let mut u = url.clone();
    u.set_fragment(None);
    u.to_string()
}

/// JSON pointer unescaping (`~1` is `/`, `~0` is `~`, in that order per RFC 6901).
fn unescape_segment(raw: &str) -> std::borrow::Cow<'_, str> {
    if raw.contains('~') {
        raw.replace("~1", "/").replace("~0", "~").into()
    } else {
        raw.into()
    }
}

/// JSON pointer escaping for building pointers from keys.
pub(crate) fn escape_segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Percent-decodes a URI fragment (`#/paths/~1pets%7Bid%7D`). Invalid escapes stay as they are;
/// invalid UTF-8 after decoding falls back to the raw text.
pub(crate) fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|c| hex_val(*c)),
                bytes.get(i + 2).and_then(|c| hex_val(*c)),
            )
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Refs to other documents in a value: the first ref string seen for each document (the part
/// before `#`), in first-seen order. Examples and `x-` extensions are not followed: they are never rendered and
/// often hold files that are not JSON or YAML.
pub(crate) fn external_refs(value: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    let doc_part = r.split('#').next().unwrap_or("");
                    let seen = out
                        .iter()
                        .any(|o| o.split('#').next().unwrap_or("") == doc_part);
                    if !doc_part.is_empty() && !seen {
                        out.push(r.clone());
                    }
                }
                for (k, child) in map.iter().rev() {
                    if k == "example" || k == "examples" || k.starts_with("x-") {
                        continue;
                    }
                    if child.is_object() || child.is_array() {
                        stack.push(child);
                    }
                }
            }
            Value::Array(items) => {
                stack.extend(items.iter().rev().filter(|c| c.is_object() || c.is_array()))
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(root: Value) -> DocSet {
        DocSet::new(Document {
            url: Some(Url::parse("file:///specs/api.yaml").unwrap()),
            display: "api.yaml".into(),
            value: root,
        })
    }

    #[test]
    fn local_pointers_unescape_and_percent_decode() {
        let s = set(json!({
            "paths": {"/pets/{id}": {"get": {"x": 1}}},
            "components": {"schemas": {"a~b": {"type": "string"}, "Pet Name": {"type": "integer"}}},
            "list": [10, 20]
        }));
        assert_eq!(
            s.resolve("#/paths/~1pets~1{id}/get/x", ROOT).unwrap().value,
            &json!(1)
        );
        assert_eq!(
            s.resolve("#/paths/~1pets~1%7Bid%7D/get/x", ROOT)
                .unwrap()
                .value,
            &json!(1)
        );
        assert_eq!(
            s.resolve("#/components/schemas/a~0b", ROOT).unwrap().value["type"],
            "string"
        );
        assert_eq!(
            s.resolve("#/components/schemas/Pet%20Name", ROOT)
                .unwrap()
                .value["type"],
            "integer"
        );
        assert_eq!(s.resolve("#/list/1", ROOT).unwrap().value, &json!(20));
        assert_eq!(s.resolve("#", ROOT).unwrap().value, s.root());
        assert_eq!(
            s.resolve("#/nope", ROOT).unwrap_err(),
            RefError::NotFound("/nope".into())
        );
        assert!(matches!(
            s.resolve("#Pet", ROOT).unwrap_err(),
            RefError::NotAPointer(_)
        ));
    }

    #[test]
    fn pointers_pass_through_refs() {
        let s = set(json!({
            "paths": {"/a": {"get": {"responses": {"200": {"$ref": "#/components/responses/Ok"}}}}},
            "components": {"responses": {"Ok": {"description": "fine"}}}
        }));
        let r = s
            .resolve("#/paths/~1a/get/responses/200/description", ROOT)
            .unwrap();
        assert_eq!(r.value, "fine");
    }

    #[test]
    fn ref_loops_end_in_an_error() {
        let s = set(json!({"a": {"$ref": "#/b"}, "b": {"$ref": "#/a"}}));
        let a = s.root().get("a").unwrap();
        assert_eq!(s.deref(a, ROOT).unwrap_err(), RefError::TooManyHops);
        assert!(s.resolve("#/a/x", ROOT).is_err());
    }

    #[test]
    fn refs_into_other_documents_resolve_relative_to_their_document() {
        let mut s = set(json!({"x": {"$ref": "./schemas/pet.yaml#/Pet"}}));
        let pet = s.add(Document {
            url: Some(Url::parse("file:///specs/schemas/pet.yaml").unwrap()),
            display: "schemas/pet.yaml".into(),
            value: json!({"Pet": {"properties": {"tag": {"$ref": "common.yaml#/Tag"}}}}),
        });
        s.add(Document {
            url: Some(Url::parse("file:///specs/schemas/common.yaml").unwrap()),
            display: "schemas/common.yaml".into(),
            value: json!({"Tag": {"type": "string"}}),
        });
        let r = s.resolve("./schemas/pet.yaml#/Pet", ROOT).unwrap();
        assert_eq!(r.doc, pet);
        let tag = s.resolve("common.yaml#/Tag", pet).unwrap();
        assert_eq!(tag.value["type"], "string");
        assert_eq!(s.display_ref(pet, "/Pet"), "pet.yaml#/Pet");
        assert!(matches!(
            s.resolve("missing.yaml#/X", ROOT).unwrap_err(),
            RefError::DocumentNotLoaded(_)
        ));
    }

    #[test]
    fn external_refs_are_collected_once_skipping_examples() {
        let v = json!({
            "a": {"$ref": "a.yaml#/X"},
            "b": [{"$ref": "a.yaml#/Y"}, {"$ref": "#/local"}],
            "examples": {"e": {"$ref": "ex.json"}},
            "x-tool": {"$ref": "tool.yaml"},
            "c": {"$ref": "../c.json"}
        });
        assert_eq!(external_refs(&v), vec!["a.yaml#/X", "../c.json"]);
    }

    #[test]
    fn percent_decoding_keeps_invalid_escapes() {
        assert_eq!(percent_decode("a%20b%zz%"), "a b%zz%");
        assert_eq!(escape_segment("/a~b"), "~1a~0b");
    }
}
