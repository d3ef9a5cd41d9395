//! Loaded documents held compactly: the parts every request reads stay parsed, the bulk stays
//! JSON text until someone asks for it.
//!
//! A spec's path items and its `components` (schemas, responses, parameters, examples, ...) are
//! almost all of it, and a request reads a handful of them: as a parsed `serde_json::Value` tree
//! they cost 10–15 times their text (Microsoft Graph beta, 47 MB of JSON: about 700 MB of tree).
//! So each path item and each component is kept as one *piece*: its JSON text, whitespace
//! removed, in one buffer per document, parsed on demand by a [`crate::resolve::DocView`].
//! Everything else (`info`, `servers`, `tags`, security schemes, vendor extensions) is small and
//! stays parsed.
//!
//! A JSON root document is split while it is read, without ever building the whole tree:
//! [`check_json`] validates it exactly as `serde_json::from_slice::<Value>` would (same errors,
//! same positions) without allocating, [`scan`] finds where the pieces are, and [`split_json`]
//! moves their text to the front of the very buffer the file was read into. Documents that are
//! parsed whole anyway (YAML, Swagger 2.0 which is rewritten at load, JSON that refers to other
//! files) are split after loading by [`split_value`]. Both give the same shape.

use std::fmt;
use std::ops::Range;

use indexmap::IndexMap;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// HTTP methods an OpenAPI path item can hold, in the order operations are listed.
pub(crate) const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// `components` sections kept parsed: small, and read whole (`securitySchemes` for the auth of a
/// code sample or a call).
const PARSED_SECTIONS: &[&str] = &["securitySchemes"];

/// Index of a piece in its document's [`Pieces`].
pub(crate) type PieceId = usize;

/// A part of a document as held in memory.
#[derive(Debug)]
pub(crate) enum Node {
    /// Parsed: the small parts, and whole documents until they are split.
    Value(Value),
    /// An object whose members are held one by one (the root, `paths`, `components`, a section).
    Members(Members),
    /// A path item or a component, kept as JSON text.
    Piece(PieceId),
}

/// An object's members in document order. A key written twice keeps its first place and its
/// last value, as `serde_json::Map` does.
#[derive(Debug, Default)]
pub(crate) struct Members {
    /// Tells this object apart from the document's other ones (a view keeps the object built
    /// whole under it when a pointer ends on it).
    pub id: usize,
    entries: IndexMap<Box<str>, Node>,
}

impl Members {
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entries.get(key)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.entries.iter().map(|(k, n)| (&**k, n))
    }
}

/// The JSON text of a document's pieces, back to back.
#[derive(Default)]
pub(crate) struct Pieces {
    text: Vec<u8>,
    /// Where each piece ends in `text`; piece `i` starts where piece `i - 1` ends.
    ends: Vec<usize>,
}

impl fmt::Debug for Pieces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pieces")
            .field("pieces", &self.ends.len())
            .field("bytes", &self.text.len())
            .finish()
    }
}

impl Pieces {
    /// A piece's JSON text.
    pub(crate) fn text(&self, id: PieceId) -> Option<&[u8]> {
        let start = match id {
            0 => 0,
            _ => *self.ends.get(id - 1)?,
        };
        self.text.get(start..*self.ends.get(id)?)
    }

    /// Bytes of text held.
    pub(crate) fn bytes(&self) -> usize {
        self.text.len()
    }

    fn push_value(&mut self, value: &Value) -> Option<PieceId> {
        let start = self.text.len();
        if serde_json::to_writer(&mut self.text, value).is_err() {
            self.text.truncate(start);
            return None;
        }
        self.ends.push(self.text.len());
        Some(self.ends.len() - 1)
    }
}

/// Where a member sits in a document, which decides how it is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Paths,
    Components,
    Section,
    Piece,
    Parsed,
}

impl Level {
    fn child(self, key: &str) -> Level {
        match self {
            Level::Root if key == "paths" => Level::Paths,
            Level::Root if key == "components" => Level::Components,
            Level::Components if PARSED_SECTIONS.contains(&key) => Level::Parsed,
            Level::Components => Level::Section,
            Level::Paths | Level::Section => Level::Piece,
            _ => Level::Parsed,
        }
    }

    /// Objects at these levels are held member by member.
    fn splits(self) -> bool {
        matches!(
            self,
            Level::Root | Level::Paths | Level::Components | Level::Section
        )
    }
}

/// Splits a parsed document (the shape [`split_json`] gives a JSON file).
pub(crate) fn split_value(value: Value) -> (Node, Pieces) {
    let mut pieces = Pieces::default();
    let mut ids = 0;
    let node = split_at(value, Level::Root, &mut pieces, &mut ids);
    pieces.text.shrink_to_fit();
    pieces.ends.shrink_to_fit();
    (node, pieces)
}

fn split_at(value: Value, level: Level, pieces: &mut Pieces, ids: &mut usize) -> Node {
    match value {
        Value::Object(map) if level.splits() => {
            let mut members = Members {
                id: *ids,
                entries: IndexMap::with_capacity(map.len()),
            };
            *ids += 1;
            for (key, child) in map {
                let node = split_at(child, level.child(&key), pieces, ids);
                members.entries.insert(key.into_boxed_str(), node);
            }
            Node::Members(members)
        }
        value if level == Level::Piece => match pieces.push_value(&value) {
            Some(id) => Node::Piece(id),
            None => Node::Value(value),
        },
        value => Node::Value(value),
    }
}

// ------------------------------------------------------------------ checking JSON text

/// What checking a JSON document found out beyond its validity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JsonFacts {
    /// Some `$ref` names another document (its part before `#` is not empty). Such a document is
    /// parsed whole, as the loader follows its refs before it can be split.
    pub refers_elsewhere: bool,
}

/// Validates a JSON document exactly as parsing it into a `serde_json::Value` would (the same
/// deserializer checks syntax, escapes, numbers and nesting depth; the error is the same, at the
/// same line and column), without building anything.
pub(crate) fn check_json(bytes: &[u8]) -> Result<JsonFacts, serde_json::Error> {
    let mut facts = JsonFacts {
        refers_elsewhere: false,
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Check {
        facts: &mut facts,
        is_ref: false,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(facts)
}

/// Visits any JSON value and everything in it; `is_ref` when the value is that of a `$ref` key.
struct Check<'f> {
    facts: &'f mut JsonFacts,
    is_ref: bool,
}

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        if self.is_ref && !s.split('#').next().unwrap_or("").is_empty() {
            self.facts.refers_elsewhere = true;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Check {
                facts: &mut *self.facts,
                is_ref: false,
            })?
            .is_some()
        {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(is_ref) = map.next_key_seed(KeyIs("$ref"))? {
            map.next_value_seed(Check {
                facts: &mut *self.facts,
                is_ref,
            })?;
        }
        Ok(())
    }
}

/// A map key, read as a string; tells whether it is the given one.
struct KeyIs(&'static str);

impl<'de> DeserializeSeed<'de> for KeyIs {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E>(self, s: &str) -> Result<bool, E> {
        Ok(s == self.0)
    }
}

// ------------------------------------------------------------------ splitting JSON text

/// How a JSON document will be held, with the text ranges of its parts; found by [`scan`].
#[derive(Debug)]
pub(crate) enum Shape {
    Parsed(Range<usize>),
    Members(Vec<(String, Shape)>),
    Piece(Range<usize>),
}

impl Shape {
    /// A Swagger 2.0 document (a `swagger` key and no `openapi` one): it is rewritten at load,
    /// which needs it parsed whole, so it is not worth splitting as it is read.
    pub(crate) fn is_swagger2(&self) -> bool {
        let Shape::Members(members) = self else {
            return false;
        };
        members.iter().any(|(k, _)| k == "swagger") && !members.iter().any(|(k, _)| k == "openapi")
    }
}

/// Finds the members of a JSON document that become pieces. Only a valid document (one that
/// [`check_json`] accepts) is scanned right; on anything else the scan may give a wrong shape or
/// `None`, never a panic. `None` also for what it does not expect: the caller then parses the
/// document whole.
pub(crate) fn scan(bytes: &[u8], start: usize) -> Option<Shape> {
    let scanner = Scanner { bytes };
    let at = scanner.skip_ws(start);
    let (shape, end) = scanner.shape(at, Level::Root)?;
    (scanner.skip_ws(end) == bytes.len()).then_some(shape)
}

struct Scanner<'b> {
    bytes: &'b [u8],
}

impl Scanner<'_> {
    fn skip_ws(&self, mut i: usize) -> usize {
        while matches!(self.bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    }

    /// `i` at an opening quote: the index after the closing one.
    fn string_end(&self, i: usize) -> Option<usize> {
        let mut j = i + 1;
        loop {
            match self.bytes.get(j)? {
                b'"' => return Some(j + 1),
                b'\\' => j += 2,
                _ => j += 1,
            }
        }
    }

    /// `i` at the first byte of a value: the index after it.
    fn value_end(&self, i: usize) -> Option<usize> {
        match self.bytes.get(i)? {
            b'"' => self.string_end(i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut j = i;
                loop {
                    match self.bytes.get(j)? {
                        b'"' => {
                            j = self.string_end(j)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.checked_sub(1)?;
                            if depth == 0 {
                                return Some(j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            _ => {
                let mut j = i;
                while self.bytes.get(j).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    j += 1;
                }
                Some(j)
            }
        }
    }

    /// The shape of the value at `i` (at `level`) and the index after it.
    fn shape(&self, i: usize, level: Level) -> Option<(Shape, usize)> {
        if level.splits() && self.bytes.get(i) == Some(&b'{') {
            return self.members(i, level);
        }
        let end = self.value_end(i)?;
        let shape = if level == Level::Piece {
            Shape::Piece(i..end)
        } else {
            Shape::Parsed(i..end)
        };
        Some((shape, end))
    }

    /// `i` at `{`: the members with their shapes, and the index after `}`.
    fn members(&self, i: usize, level: Level) -> Option<(Shape, usize)> {
        let mut out = Vec::new();
        let mut j = self.skip_ws(i + 1);
        if self.bytes.get(j) == Some(&b'}') {
            return Some((Shape::Members(out), j + 1));
        }
        loop {
            if self.bytes.get(j) != Some(&b'"') {
                return None;
            }
            let key_end = self.string_end(j)?;
            let key = decode_key(self.bytes.get(j..key_end)?)?;
            j = self.skip_ws(key_end);
            if self.bytes.get(j) != Some(&b':') {
                return None;
            }
            j = self.skip_ws(j + 1);
            let (shape, end) = self.shape(j, level.child(&key))?;
            out.push((key, shape));
            j = self.skip_ws(end);
            match self.bytes.get(j)? {
                b',' => j = self.skip_ws(j + 1),
                b'}' => return Some((Shape::Members(out), j + 1)),
                _ => return None,
            }
        }
    }
}

/// A quoted JSON key as a string (escapes decoded the way serde_json does).
fn decode_key(quoted: &[u8]) -> Option<String> {
    if quoted.contains(&b'\\') {
        return serde_json::from_slice(quoted).ok();
    }
    let inner = quoted.get(1..quoted.len().checked_sub(1)?)?;
    std::str::from_utf8(inner).ok().map(str::to_string)
}

/// A shape whose parsed parts have been parsed: what the kind of the spec is read from before
/// its text is moved.
#[derive(Debug)]
pub(crate) enum Plan {
    Parsed(Value),
    Members(Vec<(String, Plan)>),
    Piece(Range<usize>),
}

impl Plan {
    /// Parses the small parts of a scanned document.
    pub(crate) fn of(bytes: &[u8], shape: Shape) -> Option<Plan> {
        Some(match shape {
            Shape::Parsed(range) => Plan::Parsed(serde_json::from_slice(bytes.get(range)?).ok()?),
            Shape::Piece(range) => Plan::Piece(range),
            Shape::Members(members) => Plan::Members(
                members
                    .into_iter()
                    .map(|(k, s)| Some((k, Plan::of(bytes, s)?)))
                    .collect::<Option<Vec<_>>>()?,
            ),
        })
    }

    /// The top level as an object of its keys, with the pieces' places left `null`: enough to
    /// tell what kind of document it is.
    pub(crate) fn outline(&self) -> Value {
        match self {
            Plan::Parsed(v) => v.clone(),
            Plan::Piece(_) => Value::Null,
            Plan::Members(members) => {
                let mut map = Map::new();
                for (k, plan) in members {
                    let shown = match plan {
                        Plan::Parsed(v) => v.clone(),
                        _ => Value::Null,
                    };
                    map.insert(k.clone(), shown);
                }
                Value::Object(map)
            }
        }
    }
}

/// Moves the pieces' text, whitespace removed, to the front of `bytes` (the buffer the document
/// was read into, so the pieces need no second copy of it) and builds the document's nodes.
/// Pieces come in text order and never grow, so text is only ever written over what has been
/// read already.
pub(crate) fn split_json(mut bytes: Vec<u8>, plan: Plan) -> (Node, Pieces) {
    let mut ends = Vec::new();
    let mut written = 0;
    let mut ids = 0;
    let node = place(plan, &mut bytes, &mut written, &mut ends, &mut ids);
    bytes.truncate(written);
    bytes.shrink_to_fit();
    ends.shrink_to_fit();
    (node, Pieces { text: bytes, ends })
}

fn place(
    plan: Plan,
    bytes: &mut [u8],
    written: &mut usize,
    ends: &mut Vec<usize>,
    ids: &mut usize,
) -> Node {
    match plan {
        Plan::Parsed(v) => Node::Value(v),
        Plan::Piece(range) => {
            *written = copy_minified(bytes, range, *written);
            ends.push(*written);
            Node::Piece(ends.len() - 1)
        }
        Plan::Members(members) => {
            let mut out = Members {
                id: *ids,
                entries: IndexMap::with_capacity(members.len()),
            };
            *ids += 1;
            for (key, child) in members {
                let node = place(child, bytes, written, ends, ids);
                out.entries.insert(key.into_boxed_str(), node);
            }
            Node::Members(out)
        }
    }
}

/// Copies `bytes[from]` to `bytes[to..]` without the whitespace between tokens; returns where
/// the copy ends. `to <= from.start`.
fn copy_minified(bytes: &mut [u8], from: Range<usize>, to: usize) -> usize {
    let mut w = to;
    let mut in_string = false;
    let mut escaped = false;
    for r in from {
        let Some(&b) = bytes.get(r) else { break };
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        } else if b == b'"' {
            in_string = true;
        }
        if let Some(slot) = bytes.get_mut(w) {
            *slot = b;
        }
        w += 1;
    }
    w
}

// ------------------------------------------------------------------ reading path items

/// A path item with only what the operation list reads: its `$ref`, and per method the fields an
/// [`crate::Operation`] is made of. Everything else (parameters, responses, schemas: the bulk)
/// is skipped unbuilt. Methods that are not objects come out `null`, and so does an item that is
/// not an object: both are skipped when listing, as they would be parsed in full.
pub(crate) fn path_item_outline(text: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let value = Outline {
        keep: OutlineOf::PathItem,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A path item as one of its operations reads it: its `$ref`, its shared `parameters` and the
/// `method` operation, in full; the other members (other operations: most of the text) are
/// skipped unbuilt. Anything but an object is parsed as it is.
pub(crate) fn operation_part(text: &[u8], method: &str) -> Result<Value, serde_json::Error> {
    if text.first() != Some(&b'{') {
        return serde_json::from_slice(text);
    }
    let mut de = serde_json::Deserializer::from_slice(text);
    let value = OperationPart { method }.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

struct OperationPart<'m> {
    method: &'m str,
}

impl<'de> DeserializeSeed<'de> for OperationPart<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OperationPart<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a path item")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "$ref" || key == "parameters" || key == self.method {
                let value = map.next_value::<Value>()?;
                out.insert(key, value);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Value::Object(out))
    }
}

#[derive(Clone, Copy)]
enum OutlineOf {
    PathItem,
    Operation,
}

/// Fields of an operation that [`crate::model::extract_operations`] reads.
const OPERATION_FIELDS: &[&str] = &[
    "operationId",
    "summary",
    "description",
    "tags",
    "deprecated",
];

struct Outline {
    keep: OutlineOf,
}

impl<'de> DeserializeSeed<'de> for Outline {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Outline {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_str<E>(self, _: &str) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Null)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match self.keep {
                OutlineOf::PathItem if key == "$ref" => map.next_value::<Value>()?,
                OutlineOf::PathItem if METHODS.contains(&key.as_str()) => {
                    map.next_value_seed(Outline {
                        keep: OutlineOf::Operation,
                    })?
                }
                OutlineOf::Operation if OPERATION_FIELDS.contains(&key.as_str()) => {
                    map.next_value::<Value>()?
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn split_text(text: &str) -> (Node, Pieces) {
        let bytes = text.as_bytes().to_vec();
        check_json(&bytes).unwrap();
        let shape = scan(&bytes, 0).unwrap();
        let plan = Plan::of(&bytes, shape).unwrap();
        split_json(bytes, plan)
    }

    /// The parsed form of a node, pieces parsed back.
    fn whole(node: &Node, pieces: &Pieces) -> Value {
        match node {
            Node::Value(v) => v.clone(),
            Node::Piece(id) => serde_json::from_slice(pieces.text(*id).unwrap()).unwrap(),
            Node::Members(m) => Value::Object(
                m.iter()
                    .map(|(k, n)| (k.to_string(), whole(n, pieces)))
                    .collect(),
            ),
        }
    }

    const SPEC: &str = r##" {
        "openapi": "3.0.0", "info": {"title": "T \"q\"", "version": "1"},
        "paths": {
            "/a": { "get": {"operationId": "a", "responses": {"200": {"description": "ok  x"}}} },
            "/b\u00e9": {"$ref": "#/paths/~1a"},
            "/a": { "post": {"summary": "dup wins"} }
        },
        "components": {
            "schemas": {"A": {"type": "object", "properties": {"x": {"type": "string"}}}, "B": 1},
            "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X"}},
            "responses": []
        },
        "x-big": [1, 2, 3]
    } "##;

    #[test]
    fn text_and_value_split_alike_and_parse_back_the_same() {
        let parsed: Value = serde_json::from_str(SPEC).unwrap();
        let (from_text, text_pieces) = split_text(SPEC);
        let (from_value, value_pieces) = split_value(parsed.clone());
        assert_eq!(whole(&from_text, &text_pieces), parsed);
        assert_eq!(whole(&from_value, &value_pieces), parsed);
        // Four pieces (two path items, two schemas); read from text, the first `/a` that the
        // second replaced keeps its (unreachable) text.
        assert_eq!(value_pieces.ends.len(), 4);
        assert_eq!(text_pieces.ends.len(), 5);
        let Node::Members(root) = &from_text else {
            panic!("root not split")
        };
        assert!(matches!(root.get("info"), Some(Node::Value(_))));
        assert!(matches!(root.get("x-big"), Some(Node::Value(_))));
        let Some(Node::Members(components)) = root.get("components") else {
            panic!("components not split")
        };
        assert!(matches!(
            components.get("securitySchemes"),
            Some(Node::Value(_))
        ));
        // Not an object: nothing to split.
        assert!(matches!(components.get("responses"), Some(Node::Value(_))));
        // The repeated `/a` kept its place and took the last value.
        let Some(Node::Members(paths)) = root.get("paths") else {
            panic!("paths not split")
        };
        let keys: Vec<&str> = paths.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["/a", "/bé"]);
        assert_eq!(
            whole(paths.get("/a").unwrap(), &text_pieces),
            json!({"post": {"summary": "dup wins"}})
        );
    }

    #[test]
    fn checking_fails_like_parsing_and_notices_other_documents() {
        for bad in [
            "{\"a\": 1,}",
            "{\"a\": \"\\ud800\"}",
            "[1e400]",
            "{\"a\": 1} x",
            &"[".repeat(200),
        ] {
            let parsed = serde_json::from_str::<Value>(bad).unwrap_err();
            let checked = check_json(bad.as_bytes()).unwrap_err();
            assert_eq!(checked.to_string(), parsed.to_string(), "{bad}");
        }
        let local = check_json(br##"{"a": {"$ref": "#/b"}, "b": {"x": "other.yaml"}}"##).unwrap();
        assert!(!local.refers_elsewhere);
        let other = check_json(br#"{"a": [{"$ref": "other.yaml#/b"}]}"#).unwrap();
        assert!(other.refers_elsewhere);
    }

    #[test]
    fn whitespace_inside_strings_survives_minifying() {
        let text = "{\"paths\": {\"/a\": {\"d\": \" a \\\" b \\\\\", \"e\" : [ 1 , 2 ]}}}";
        let (_, pieces) = split_text(text);
        assert_eq!(
            std::str::from_utf8(pieces.text(0).unwrap()).unwrap(),
            "{\"d\":\" a \\\" b \\\\\",\"e\":[1,2]}"
        );
    }

    #[test]
    fn operation_parts_keep_what_one_operation_reads() {
        let item = br##"{"get": {"x": 1}, "parameters": [{"name": "p"}], "post": {"y": 2},
            "summary": "s", "$ref": "#/a", "get": {"x": 3}}"##;
        assert_eq!(
            operation_part(item, "get").unwrap(),
            json!({"get": {"x": 3}, "parameters": [{"name": "p"}], "$ref": "#/a"})
        );
        assert_eq!(operation_part(b"[1]", "get").unwrap(), json!([1]));
    }

    #[test]
    fn path_item_outlines_keep_what_listing_reads() {
        let item = br##"{"summary": "s", "get": {"operationId": "g", "tags": ["t"], "responses": {"200": {}}},
            "post": "not an operation", "$ref": "#/x", "parameters": [{"name": "p"}]}"##;
        assert_eq!(
            path_item_outline(item).unwrap(),
            json!({"get": {"operationId": "g", "tags": ["t"]}, "post": null, "$ref": "#/x"})
        );
        assert_eq!(path_item_outline(b"[1, 2]").unwrap(), Value::Null);
    }
}
