//! Compact schemas: what an agent needs to write a call, and nothing else.
//!
//! A schema is rendered with its `$ref`s inlined and `allOf` merged into one object; kept are
//! the keywords that change what a valid request or response looks like (type, format, enum,
//! properties, required, items, nullability, unions, bounds, a one-sentence description).
//! Examples, XML hints, extensions and documentation links are dropped, and so are read-only
//! properties in request bodies and write-only ones in responses.
//!
//! Output is bounded three ways so that one call can never flood an agent's context or hang:
//! - **depth**: containers nested deeper than [`DetailLimits::max_depth`] become
//!   `{"type": "object", "$truncated": "depth"}`;
//! - **size**: at most [`DetailLimits::max_nodes`] schema nodes; when a schema is bigger the
//!   depth is lowered until it fits (so every top-level property stays visible rather than the
//!   first one eating the budget), and what still does not fit is counted in
//!   `$propertiesOmitted` / `$variantsOmitted` or marked `{"$truncated": "size"}`;
//! - **cycles**: a `$ref` to a schema that is already being expanded on the current path becomes
//!   `{"$cycle": "#/components/schemas/Node"}` and is not followed again.
//!
//! A `$ref` that does not resolve becomes `{"$unresolved": "<ref>"}` instead of failing the call.

use serde_json::{Map, Value, json};

use crate::resolve::{DocId, DocView};

/// Bounds on rendered details. The defaults suit agents: a GitHub "issue" response renders to
/// a few kilobytes instead of hundreds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetailLimits {
    /// Levels of nesting below a schema before containers are cut.
    pub max_depth: usize,
    /// Schema nodes per rendered schema (each parameter, body and response counts separately).
    pub max_nodes: usize,
    /// Properties shown per object; required ones are kept first.
    pub max_properties: usize,
    /// Enum values shown before the rest are counted.
    pub max_enum: usize,
    /// `oneOf` / `anyOf` alternatives shown before the rest are counted.
    pub max_variants: usize,
    /// Characters of a schema or response description (its first sentence).
    pub max_description: usize,
    /// Characters of a parameter or request body description (its first sentence).
    pub max_param_description: usize,
    /// Characters of the operation description in details (JSON); the text form uses less.
    pub max_operation_description: usize,
    /// Refs open at once on one path (a chain of distinct schemas); guards the stack.
    pub max_open_refs: usize,
    /// Nesting shown in response schemas. Responses are read, not written: an agent needs the
    /// top levels to know what comes back, and deep response trees (GitHub's issue embeds a
    /// user, a repository, a milestone…) are where token budgets go to die.
    pub max_response_depth: usize,
    /// Schema nodes per response schema.
    pub max_response_nodes: usize,
}

impl DetailLimits {
    /// The bounds applied to response schemas.
    pub fn for_responses(&self) -> DetailLimits {
        DetailLimits {
            max_depth: self.max_depth.min(self.max_response_depth),
            max_nodes: self.max_nodes.min(self.max_response_nodes),
            ..*self
        }
    }
}

impl Default for DetailLimits {
    fn default() -> Self {
        DetailLimits {
            max_depth: 6,
            max_nodes: 300,
            max_properties: 40,
            max_enum: 20,
            max_variants: 10,
            max_description: 120,
            max_param_description: 200,
            max_operation_description: 2000,
            max_open_refs: 48,
            max_response_depth: 3,
            max_response_nodes: 150,
        }
    }
}

/// Which side of the call a schema describes: decides whether `readOnly` or `writeOnly`
/// properties are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Request,
    Response,
    /// Parameters: keep everything.
    Neutral,
}

/// Nesting of `allOf` inside `allOf` (through refs) one node may gather before giving up.
const MAX_GATHER_NESTING: usize = 24;
/// Pieces one node may merge from `allOf`.
const MAX_PARTS: usize = 64;
/// A `default` value larger than this (as JSON) is left out.
const MAX_DEFAULT_CHARS: usize = 200;

/// Renders a schema compactly; see the module docs for what is kept and the bounds.
pub(crate) fn compact_schema(
    docs: &DocView<'_>,
    schema: &Value,
    doc: DocId,
    direction: Direction,
    limits: &DetailLimits,
) -> Value {
    // The measuring pass renders too: when nothing had to be cut, its output is the answer.
    let mut measure = Compactor::new(docs, direction, limits, limits.max_depth);
    measure.per_depth = Some(vec![0; limits.max_depth + 2]);
    let full = measure.compact(schema, doc, 0);
    if measure.depth_limit == limits.max_depth && measure.nodes <= limits.max_nodes {
        return full;
    }
    // Too big: the deepest uniform cut that fits keeps the overview (all top-level fields)
    // instead of letting the first deep property eat the budget; the measuring pass found it.
    let mut c = Compactor::new(docs, direction, limits, measure.depth_limit);
    c.compact(schema, doc, 0)
}

/// One piece of a schema being merged: a schema object from some document, or a marker that
/// stands for a piece that could not be expanded (cycle, unresolved ref).
enum Part<'a> {
    Schema(DocId, &'a Map<String, Value>),
    Marker(Value),
}

struct Compactor<'a> {
    docs: &'a DocView<'a>,
    direction: Direction,
    limits: &'a DetailLimits,
    depth_limit: usize,
    nodes: usize,
    /// Set when the node budget cut something; structural cuts (cycles, ref chains) do not
    /// count, since rendering shallower would not avoid them.
    over_budget: bool,
    /// Refs being expanded on the current path, as (document, pointer).
    open: Vec<(DocId, String)>,
    /// Refs followed by the `gather` calls currently on the stack (a subset of `open`).
    chain: Vec<(DocId, String)>,
    /// Measuring mode: nodes counted per depth instead of a budget, and `depth_limit` lowered
    /// as soon as the nodes down to `depth_limit + 1` (where containers become stubs) exceed
    /// the budget, so deeper levels are not visited in vain.
    per_depth: Option<Vec<usize>>,
}

impl<'a> Compactor<'a> {
    fn new(
        docs: &'a DocView<'a>,
        direction: Direction,
        limits: &'a DetailLimits,
        depth_limit: usize,
    ) -> Self {
        Compactor {
            docs,
            direction,
            limits,
            depth_limit,
            nodes: 0,
            over_budget: false,
            open: Vec::new(),
            chain: Vec::new(),
            per_depth: None,
        }
    }

    fn compact(&mut self, schema: &'a Value, doc: DocId, depth: usize) -> Value {
        let mark = self.open.len();
        let mut parts = Vec::new();
        self.gather(schema, doc, &mut parts, 0, mark);
        let out = self.build(&parts, depth);
        self.open.truncate(mark);
        out
    }

    /// Collects the pieces that make up one schema node: the schema itself, what its `$ref`
    /// points to, and its `allOf` members, recursively. Followed refs stay open until the node
    /// is built so that its children see them (that is how cycles are detected).
    fn gather(
        &mut self,
        schema: &'a Value,
        doc: DocId,
        parts: &mut Vec<Part<'a>>,
        nesting: usize,
        mark: usize,
    ) {
        let Value::Object(map) = schema else {
            if schema == &Value::Bool(false) {
                parts.push(Part::Marker(json!({ "not": {} })));
            }
            return;
        };
        if nesting > MAX_GATHER_NESTING || parts.len() >= MAX_PARTS {
            parts.push(Part::Marker(json!({ "$truncated": "depth" })));
            return;
        }
        // Keywords next to a `$ref` (3.1, and common in 3.0 practice) come first: they are the
        // more specific ones, and the first piece wins for single-valued keywords.
        if !map.contains_key("$ref") || map.keys().any(|k| k != "$ref") {
            parts.push(Part::Schema(doc, map));
        }
        if let Some(r) = map.get("$ref") {
            let Some(r) = r.as_str() else {
                parts.push(Part::Marker(json!({ "$unresolved": r.to_string() })));
                return;
            };
            match self.docs.locate(r, doc) {
                Err(_) => parts.push(Part::Marker(json!({ "$unresolved": r }))),
                Ok((tdoc, pointer)) => {
                    let open_at = self
                        .open
                        .iter()
                        .position(|(d, p)| *d == tdoc && *p == pointer);
                    let on_chain = self.chain.iter().any(|(d, p)| *d == tdoc && *p == pointer);
                    match open_at {
                        // Already merged into this very node by a sibling (`allOf: [A, A]`):
                        // nothing to add. On the chain that led here it is a loop (`A: $ref A`).
                        Some(i) if i >= mark && !on_chain => {}
                        Some(_) => parts.push(Part::Marker(
                            json!({ "$cycle": self.docs.display_ref(tdoc, &pointer) }),
                        )),
                        None if self.open.len() >= self.limits.max_open_refs => {
                            parts.push(Part::Marker(json!({ "$truncated": "depth" })));
                        }
                        None => match self.docs.pointer(tdoc, &pointer) {
                            Err(_) => parts.push(Part::Marker(json!({ "$unresolved": r }))),
                            Ok(target) => {
                                self.open.push((tdoc, pointer.clone()));
                                self.chain.push((tdoc, pointer));
                                self.gather(target.value, target.doc, parts, nesting + 1, mark);
                                self.chain.pop();
                            }
                        },
                    }
                }
            }
        }
        if let Some(Value::Array(all)) = map.get("allOf") {
            for member in all {
                self.gather(member, doc, parts, nesting + 1, mark);
            }
        }
    }

    fn build(&mut self, parts: &[Part<'a>], depth: usize) -> Value {
        let schemas: Vec<(DocId, &'a Map<String, Value>)> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Schema(d, m) => Some((*d, *m)),
                Part::Marker(_) => None,
            })
            .collect();
        let markers: Vec<&Value> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Marker(m) => Some(m),
                Part::Schema(..) => None,
            })
            .collect();
        let kw = Keywords::scan(&schemas);
        if !kw.meaningful {
            return match markers.as_slice() {
                [] => json!({}),
                [one] => (*one).clone(),
                many => json!({ "allOf": many }),
            };
        }
        self.nodes += 1;
        if let Some(per_depth) = &mut self.per_depth {
            if let Some(n) = per_depth.get_mut(depth) {
                *n += 1;
            }
            while self.depth_limit > 0
                && per_depth.iter().take(self.depth_limit + 2).sum::<usize>()
                    > self.limits.max_nodes
            {
                self.depth_limit -= 1;
            }
        } else if self.nodes > self.limits.max_nodes {
            self.over_budget = true;
            return json!({ "$truncated": "size" });
        }

        let mut out = Map::new();
        let mut ty = kw.ty.cloned();
        let mut format = kw.format.cloned();
        if ty.as_ref().and_then(Value::as_str) == Some("file") {
            ty = Some(json!("string"));
            format = Some(json!("binary"));
        }
        let properties: Vec<(&'a String, DocId, &'a Value)> = if kw.with_properties > 0 {
            self.collect_properties(&schemas, kw.with_properties > 1)
        } else {
            Vec::new()
        };
        let items = kw.items.filter(|(_, v)| v.is_object() || v.is_boolean());
        if ty.is_none() {
            if !properties.is_empty() {
                ty = Some(json!("object"));
            } else if items.is_some() {
                ty = Some(json!("array"));
            }
        }

        let additional = kw.additional.filter(|(_, v)| v.is_object());
        let variants = kw
            .one_of
            .map(|v| ("oneOf", v))
            .or_else(|| kw.any_of.map(|v| ("anyOf", v)))
            .filter(|(_, (_, v))| v.as_array().is_some_and(|a| !a.is_empty()));

        let is_container = !properties.is_empty()
            || additional.is_some()
            || variants.is_some()
            || items.is_some_and(|(d, v)| self.is_complex(v, d));
        if depth > self.depth_limit && is_container {
            if let Some(t) = ty {
                out.insert("type".into(), t);
            }
            out.insert("$truncated".into(), json!("depth"));
            return Value::Object(out);
        }

        if let Some(t) = ty {
            out.insert("type".into(), t);
        }
        if let Some(f) = format {
            out.insert("format".into(), f);
        }
        if kw.nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        if let Some(c) = kw.constant {
            out.insert("const".into(), c.clone());
        }
        if let Some(Value::Array(values)) = kw.enumeration {
            let shown: Vec<Value> = values.iter().take(self.limits.max_enum).cloned().collect();
            out.insert("enum".into(), Value::Array(shown));
            if values.len() > self.limits.max_enum {
                out.insert(
                    "$enumOmitted".into(),
                    json!(values.len() - self.limits.max_enum),
                );
            }
        }
        if let Some(d) = kw.default
            && small_json(d, MAX_DEFAULT_CHARS)
        {
            out.insert("default".into(), d.clone());
        }
        for (key, v) in BOUNDS.iter().zip(kw.bounds) {
            if let Some(v) = v
                && (v.is_number() || v.is_boolean() || v.is_string())
            {
                out.insert((*key).to_string(), v.clone());
            }
        }
        if let Some(Value::String(d)) = kw.description {
            let d = first_sentence(d, self.limits.max_description);
            if !d.is_empty() {
                out.insert("description".into(), Value::String(d));
            }
        }
        if let Some(Value::Object(disc)) = kw.discriminator
            && let Some(p) = disc.get("propertyName")
        {
            out.insert("discriminator".into(), json!({ "propertyName": p }));
        }

        if !properties.is_empty() {
            self.render_properties(&schemas, &properties, depth, &mut out);
        }
        if let Some((d, a)) = additional {
            let rendered = self.child(a, d, depth);
            if rendered.as_object().is_none_or(|o| !o.is_empty()) {
                out.insert("additionalProperties".into(), rendered);
            }
        }
        if let Some((d, i)) = items {
            let rendered = self.child(i, d, depth);
            out.insert("items".into(), rendered);
        }
        if let Some((key, (d, Value::Array(alternatives)))) = variants {
            let mut shown = Vec::new();
            let mut omitted = alternatives.len().saturating_sub(self.limits.max_variants);
            for (i, alt) in alternatives
                .iter()
                .take(self.limits.max_variants)
                .enumerate()
            {
                if self.out_of_nodes() {
                    omitted += alternatives.len().min(self.limits.max_variants) - i;
                    break;
                }
                shown.push(self.child(alt, d, depth));
            }
            out.insert(key.into(), Value::Array(shown));
            if omitted > 0 {
                out.insert("$variantsOmitted".into(), json!(omitted));
            }
        }
        if !markers.is_empty() {
            out.insert(
                "allOf".into(),
                Value::Array(markers.into_iter().cloned().collect()),
            );
        }
        Value::Object(out)
    }

    /// Is the node budget spent? (Never while measuring.)
    fn out_of_nodes(&mut self) -> bool {
        if self.per_depth.is_none() && self.nodes >= self.limits.max_nodes {
            self.over_budget = true;
            return true;
        }
        false
    }

    fn child(&mut self, schema: &'a Value, doc: DocId, depth: usize) -> Value {
        if self.out_of_nodes() {
            return json!({ "$truncated": "size" });
        }
        self.compact(schema, doc, depth + 1)
    }

    /// Properties of all pieces in order, first definition of a name winning, without the
    /// ones that do not belong on this side of the call.
    fn collect_properties(
        &self,
        schemas: &[(DocId, &'a Map<String, Value>)],
        dedup: bool,
    ) -> Vec<(&'a String, DocId, &'a Value)> {
        let mut out: Vec<(&'a String, DocId, &'a Value)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (d, m) in schemas {
            let Some(Value::Object(props)) = m.get("properties") else {
                continue;
            };
            for (name, schema) in props {
                if dedup && !seen.insert(name.as_str()) {
                    continue;
                }
                let hidden = match self.direction {
                    Direction::Request => self.flag(schema, *d, "readOnly"),
                    Direction::Response => self.flag(schema, *d, "writeOnly"),
                    Direction::Neutral => false,
                };
                if !hidden {
                    out.push((name, *d, schema));
                }
            }
        }
        out
    }

    fn render_properties(
        &mut self,
        schemas: &[(DocId, &'a Map<String, Value>)],
        properties: &[(&'a String, DocId, &'a Value)],
        depth: usize,
        out: &mut Map<String, Value>,
    ) {
        let mut required: Vec<&str> = Vec::new();
        for (_, m) in schemas {
            if let Some(Value::Array(req)) = m.get("required") {
                for r in req.iter().filter_map(Value::as_str) {
                    if !required.contains(&r) {
                        required.push(r);
                    }
                }
            }
        }
        // Over the cap: required properties first, then the others, in document order.
        let cap = self.limits.max_properties;
        let keep: Vec<bool> = if properties.len() > cap {
            let mut budget = cap;
            let mut keep: Vec<bool> = properties
                .iter()
                .map(|(n, ..)| {
                    let k = budget > 0 && required.contains(&n.as_str());
                    if k {
                        budget -= 1;
                    }
                    k
                })
                .collect();
            for k in keep.iter_mut() {
                if !*k && budget > 0 {
                    *k = true;
                    budget -= 1;
                }
            }
            keep
        } else {
            vec![true; properties.len()]
        };
        let mut rendered = Map::new();
        let mut omitted = keep.iter().filter(|k| !**k).count();
        for (i, ((name, d, schema), k)) in properties.iter().zip(&keep).enumerate() {
            if !*k {
                continue;
            }
            if self.out_of_nodes() {
                omitted += keep
                    .get(i..)
                    .map_or(0, |rest| rest.iter().filter(|k| **k).count());
                break;
            }
            let value = self.child(schema, *d, depth);
            rendered.insert((*name).clone(), value);
        }
        let all_names: Vec<&str> = schemas
            .iter()
            .filter_map(|(_, m)| m.get("properties").and_then(Value::as_object))
            .flat_map(|p| p.keys().map(String::as_str))
            .collect();
        let required: Vec<Value> = required
            .into_iter()
            .filter(|r| rendered.contains_key(*r) || !all_names.contains(r))
            .map(|r| Value::String(r.to_string()))
            .collect();
        out.insert("properties".into(), Value::Object(rendered));
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        if omitted > 0 {
            out.insert("$propertiesOmitted".into(), json!(omitted));
        }
    }

    /// Is a keyword set on a schema (looking through refs and `allOf`, shallowly)?
    fn flag(&self, schema: &Value, doc: DocId, key: &str) -> bool {
        let Ok(target) = self.docs.deref(schema, doc) else {
            return false;
        };
        if schema.get(key).and_then(Value::as_bool) == Some(true)
            || target.value.get(key).and_then(Value::as_bool) == Some(true)
        {
            return true;
        }
        target
            .value
            .get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|all| {
                all.iter().any(|m| {
                    self.docs
                        .deref(m, target.doc)
                        .is_ok_and(|t| t.value.get(key).and_then(Value::as_bool) == Some(true))
                })
            })
    }

    /// Would this schema render with children of its own (so that cutting it saves anything)?
    fn is_complex(&self, schema: &Value, doc: DocId) -> bool {
        let Ok(target) = self.docs.deref(schema, doc) else {
            return false;
        };
        target.value.as_object().is_some_and(|m| {
            [
                "properties",
                "items",
                "oneOf",
                "anyOf",
                "allOf",
                "additionalProperties",
            ]
            .iter()
            .any(|k| m.get(*k).is_some_and(|v| v.is_object() || v.is_array()))
        })
    }
}

/// The keywords of one schema node, gathered in one pass over its pieces (the first piece that
/// has a keyword wins), so that building a node does not look each keyword up in each piece.
#[derive(Default)]
struct Keywords<'a> {
    /// Any keyword that makes the node worth rendering.
    meaningful: bool,
    ty: Option<&'a Value>,
    format: Option<&'a Value>,
    nullable: bool,
    constant: Option<&'a Value>,
    enumeration: Option<&'a Value>,
    default: Option<&'a Value>,
    description: Option<&'a Value>,
    discriminator: Option<&'a Value>,
    bounds: [Option<&'a Value>; BOUNDS.len()],
    items: Option<(DocId, &'a Value)>,
    additional: Option<(DocId, &'a Value)>,
    one_of: Option<(DocId, &'a Value)>,
    any_of: Option<(DocId, &'a Value)>,
    /// How many pieces have `properties`.
    with_properties: usize,
}

impl<'a> Keywords<'a> {
    fn scan(schemas: &[(DocId, &'a Map<String, Value>)]) -> Keywords<'a> {
        fn first<T>(slot: &mut Option<T>, value: T) {
            if slot.is_none() {
                *slot = Some(value);
            }
        }
        let mut kw = Keywords::default();
        for &(doc, map) in schemas {
            for (key, v) in map {
                let kept = match key.as_str() {
                    "type" => {
                        first(&mut kw.ty, v);
                        true
                    }
                    "format" => {
                        first(&mut kw.format, v);
                        true
                    }
                    "nullable" | "x-nullable" => {
                        kw.nullable |= v.as_bool() == Some(true);
                        true
                    }
                    "const" => {
                        first(&mut kw.constant, v);
                        true
                    }
                    "enum" => {
                        first(&mut kw.enumeration, v);
                        true
                    }
                    "default" => {
                        first(&mut kw.default, v);
                        true
                    }
                    "description" => {
                        first(&mut kw.description, v);
                        true
                    }
                    "discriminator" => {
                        first(&mut kw.discriminator, v);
                        true
                    }
                    "items" => {
                        first(&mut kw.items, (doc, v));
                        true
                    }
                    "additionalProperties" => {
                        first(&mut kw.additional, (doc, v));
                        true
                    }
                    "oneOf" => {
                        first(&mut kw.one_of, (doc, v));
                        true
                    }
                    "anyOf" => {
                        first(&mut kw.any_of, (doc, v));
                        true
                    }
                    "properties" => {
                        kw.with_properties += 1;
                        true
                    }
                    "required" => true,
                    other => match BOUNDS.iter().position(|b| *b == other) {
                        Some(i) => {
                            if let Some(slot) = kw.bounds.get_mut(i) {
                                first(slot, v);
                            }
                            true
                        }
                        None => false,
                    },
                };
                kw.meaningful |= kept;
            }
        }
        kw
    }
}

/// Is a value's JSON shorter than `max` characters? Counted without serialising big values.
fn small_json(v: &Value, max: usize) -> bool {
    match v {
        Value::String(s) => s.len() + 2 <= max,
        Value::Array(_) | Value::Object(_) => {
            serde_json::to_string(v).is_ok_and(|s| s.len() <= max)
        }
        _ => true,
    }
}

/// Validation keywords copied as they are.
const BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
];

/// The first sentence of a description, whitespace collapsed, cut at `max` characters with an
/// ellipsis. A sentence ends at `. `, `! `, `? ` or a blank line; `e.g. ` and `i.e. ` do not end
/// one.
pub(crate) fn first_sentence(text: &str, max: usize) -> String {
    let text = strip_html_tags(text);
    // One pass over at most about `max` characters: long descriptions cost no more than short.
    let mut out = String::with_capacity(max.min(text.len()) + 4);
    let mut chars = text.trim().chars().peekable();
    let mut count = 0;
    let mut pending_space = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            if c == '\n' && chars.peek().is_some_and(|n| *n == '\n' || *n == '\r') {
                break; // blank line: end of the paragraph
            }
            pending_space = true;
            continue;
        }
        if pending_space && !out.is_empty() {
            out.push(' ');
            count += 1;
        }
        pending_space = false;
        out.push(c);
        count += 1;
        if matches!(c, '.' | '!' | '?')
            && chars.peek().is_some_and(|n| n.is_whitespace())
            && !ends_with_abbreviation(&out)
        {
            break;
        }
        if count > max {
            break;
        }
    }
    truncate_chars(&out, max)
}

/// Removes HTML tags (`<p>`, `</code>`, `<a href="...">`) that some generators put into
/// descriptions; a `<` that does not start a tag (`a < b`, `<owner>` placeholders in prose are
/// rare but `<` is common) stays.
pub(crate) fn strip_html_tags(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('<') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(rest.get(..open).unwrap_or(""));
        let after = rest.get(open + 1..).unwrap_or("");
        let name_start = after.strip_prefix('/').unwrap_or(after);
        let is_tag = name_start
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && after.find('>').is_some_and(|close| {
                let inner = after.get(..close).unwrap_or("");
                let name: String = name_start
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                HTML_TAGS.contains(&name.to_ascii_lowercase().as_str()) && !inner.contains('<')
            });
        if is_tag {
            let close = after.find('>').unwrap_or(0);
            rest = after.get(close + 1..).unwrap_or("");
        } else {
            out.push('<');
            rest = after;
        }
    }
    out.push_str(rest);
    out.into()
}

/// Tags stripped from descriptions; anything else in angle brackets is kept as text.
const HTML_TAGS: &[&str] = &[
    "a", "b", "br", "code", "div", "em", "h1", "h2", "h3", "h4", "i", "li", "ol", "p", "pre",
    "span", "strong", "table", "td", "th", "tr", "u", "ul",
];

fn ends_with_abbreviation(s: &str) -> bool {
    let tail: String = s
        .chars()
        .rev()
        .take(7)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<String>()
        .to_ascii_lowercase();
    ["e.g.", "i.e.", "etc.", " vs.", "approx."]
        .iter()
        .any(|a| tail.ends_with(a))
}

/// Cuts at `max` characters (not bytes), on a word boundary when one is near, adding `…`.
pub(crate) fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max.saturating_sub(1)).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > cut.len() * 2 / 3 => cut.get(..space).unwrap_or(&cut).to_string(),
        _ => cut,
    };
    format!("{}…", cut.trim_end_matches([' ', ',', ';', ':']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::{DocSet, Document, ROOT};

    /// A document held as a loaded spec is: split (see `compact`).
    fn docs(v: Value) -> DocSet {
        let mut set = DocSet::new(Document::parsed(None, "t", v));
        set.split();
        set
    }

    fn compact(d: &DocSet, schema: Value, dir: Direction) -> Value {
        compact_schema(&d.view(), &schema, ROOT, dir, &DetailLimits::default())
    }

    #[test]
    fn refs_inline_and_cycles_are_marked() {
        let d = docs(json!({"components": {"schemas": {
            "Node": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "example": "root", "x-internal": true},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
            }}
        }}}));
        let out = compact(
            &d,
            json!({"$ref": "#/components/schemas/Node"}),
            Direction::Response,
        );
        assert_eq!(
            out,
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$cycle": "#/components/schemas/Node"}}
            }, "required": ["name"]})
        );
    }

    #[test]
    fn all_of_merges_into_one_object() {
        let d = docs(json!({"components": {"schemas": {
            "Base": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "readOnly": true}}},
            "Pet": {"description": "A pet. It has a name.", "allOf": [
                {"$ref": "#/components/schemas/Base"},
                {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
            ]}
        }}}));
        let pet = json!({"$ref": "#/components/schemas/Pet"});
        assert_eq!(
            compact(&d, pet.clone(), Direction::Response),
            json!({"type": "object", "description": "A pet.", "properties": {
                "id": {"type": "integer"}, "name": {"type": "string"}
            }, "required": ["id", "name"]})
        );
        // readOnly `id` is not something a request sends.
        assert_eq!(
            compact(&d, pet, Direction::Request),
            json!({"type": "object", "description": "A pet.", "properties": {
                "name": {"type": "string"}
            }, "required": ["name"]})
        );
    }

    #[test]
    fn unresolved_refs_are_marked_not_fatal() {
        let d = docs(json!({}));
        let out = compact(
            &d,
            json!({"type": "object", "properties": {"a": {"$ref": "#/components/schemas/Missing"}}}),
            Direction::Response,
        );
        assert_eq!(
            out["properties"]["a"],
            json!({"$unresolved": "#/components/schemas/Missing"})
        );
    }

    #[test]
    fn enums_variants_and_properties_are_capped() {
        let d = docs(json!({}));
        let values: Vec<Value> = (0..25).map(|i| json!(format!("v{i}"))).collect();
        let out = compact(
            &d,
            json!({"type": "string", "enum": values}),
            Direction::Neutral,
        );
        assert_eq!(out["enum"].as_array().unwrap().len(), 20);
        assert_eq!(out["$enumOmitted"], 5);

        let mut props = Map::new();
        for i in 0..50 {
            props.insert(format!("p{i}"), json!({"type": "string"}));
        }
        let out = compact(
            &d,
            json!({"type": "object", "required": ["p49"], "properties": props}),
            Direction::Response,
        );
        let shown = out["properties"].as_object().unwrap();
        assert_eq!(shown.len(), 40);
        assert!(
            shown.contains_key("p49"),
            "required properties are kept first"
        );
        assert_eq!(out["$propertiesOmitted"], 10);
        assert_eq!(out["required"], json!(["p49"]));
    }

    #[test]
    fn deep_schemas_are_cut_at_the_depth_limit() {
        let d = docs(json!({}));
        let mut schema = json!({"type": "string"});
        for _ in 0..10 {
            schema = json!({"type": "object", "properties": {"next": schema, "id": {"type": "integer"}}});
        }
        let out = compact(&d, schema, Direction::Response);
        let mut cur = &out;
        for _ in 0..6 {
            cur = &cur["properties"]["next"];
        }
        assert_eq!(cur["properties"]["id"], json!({"type": "integer"}));
        assert_eq!(
            cur["properties"]["next"],
            json!({"type": "object", "$truncated": "depth"})
        );
    }

    #[test]
    fn big_schemas_shrink_by_depth_to_keep_the_overview() {
        // 30 properties, each an object of 30 properties: 900+ nodes at full depth.
        let mut inner = Map::new();
        for i in 0..30 {
            inner.insert(format!("f{i}"), json!({"type": "string"}));
        }
        let mut outer = Map::new();
        for i in 0..30 {
            outer.insert(
                format!("o{i}"),
                json!({"type": "object", "properties": inner}),
            );
        }
        let d = docs(json!({}));
        let out = compact(
            &d,
            json!({"type": "object", "properties": outer}),
            Direction::Response,
        );
        let props = out["properties"].as_object().unwrap();
        assert_eq!(props.len(), 30, "every top-level property stays visible");
        assert_eq!(
            props["o29"],
            json!({"type": "object", "$truncated": "depth"})
        );
    }

    #[test]
    fn adversarial_ref_chains_terminate() {
        // A chain of 500 distinct schemas, each allOf-ing the next, and a self-ref loop.
        let mut schemas = Map::new();
        for i in 0..500 {
            schemas.insert(
                format!("S{i}"),
                json!({"allOf": [{"$ref": format!("#/components/schemas/S{}", i + 1)}], "properties": {"x": {"$ref": format!("#/components/schemas/S{}", i + 1)}}}),
            );
        }
        schemas.insert("Loop".into(), json!({"$ref": "#/components/schemas/Loop"}));
        let d = docs(json!({"components": {"schemas": schemas}}));
        let out = compact(
            &d,
            json!({"$ref": "#/components/schemas/S0"}),
            Direction::Response,
        );
        assert!(serde_json::to_string(&out).unwrap().contains("$truncated"));
        let out = compact(
            &d,
            json!({"$ref": "#/components/schemas/Loop"}),
            Direction::Response,
        );
        assert_eq!(out, json!({"$cycle": "#/components/schemas/Loop"}));
    }

    #[test]
    fn swagger_and_31_spellings_are_understood() {
        let d = docs(json!({}));
        assert_eq!(
            compact(&d, json!({"type": "file"}), Direction::Request),
            json!({"type": "string", "format": "binary"})
        );
        assert_eq!(
            compact(
                &d,
                json!({"type": "string", "x-nullable": true}),
                Direction::Request
            ),
            json!({"type": "string", "nullable": true})
        );
        assert_eq!(
            compact(
                &d,
                json!({"type": ["string", "null"], "examples": ["a"]}),
                Direction::Request
            ),
            json!({"type": ["string", "null"]})
        );
    }

    #[test]
    fn html_tags_are_stripped_from_descriptions() {
        assert_eq!(
            first_sentence("<p>Creates a new <code>customer</code> object.</p>", 120),
            "Creates a new customer object."
        );
        assert_eq!(
            first_sentence("Use a < b and <owner>.", 120),
            "Use a < b and <owner>."
        );
        assert_eq!(strip_html_tags("x <a href=\"y\">link</a> <"), "x link <");
    }

    #[test]
    fn descriptions_keep_their_first_sentence() {
        assert_eq!(
            first_sentence("The title of the issue. More text here.", 120),
            "The title of the issue."
        );
        assert_eq!(
            first_sentence("Use e.g. `foo`. Then more.", 120),
            "Use e.g. `foo`."
        );
        assert_eq!(
            first_sentence("Line one\n\nSecond paragraph", 120),
            "Line one"
        );
        assert_eq!(first_sentence("v1.2 is out", 120), "v1.2 is out");
        let long = "word ".repeat(60);
        let cut = first_sentence(&long, 120);
        assert!(cut.chars().count() <= 120 && cut.ends_with('…'), "{cut}");
    }
}
