//! `$ref` resolution over a set of documents: the spec itself plus the external documents it
//! references, all loaded up front so that resolving is synchronous and cannot do I/O.
//!
//! Documents are held compactly (see `compact`): path items and components stay JSON text until
//! read. Reading goes through a [`DocView`], one per request: it parses the pieces the request
//! reaches (or takes them from the spec's small cache of recently parsed ones) and keeps them
//! while it lives, so the references it hands out stay valid and a piece read twice in one
//! request is parsed once.
//!
//! Nothing here recurses on refs: following a chain of refs is a loop with a hop limit, so a
//! cycle (`A -> B -> A`) or a very long chain ends in an error instead of a hang or a stack
//! overflow. Cycle *marking* for schemas (a tree node whose children are nodes) is the job of
//! the schema compactor, which keeps its own stack of open refs.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use url::Url;

use crate::compact::METHODS;
use crate::compact::{Members, Node, PieceId, Pieces, operation_part, split_value};

/// Index of a document in a [`DocSet`]; the spec itself is [`ROOT`].
pub type DocId = usize;

/// The spec's own document.
pub const ROOT: DocId = 0;

/// How many `$ref` hops one resolution may take (ref to ref to ref ...).
const MAX_HOPS: usize = 32;

/// Text of the pieces recently parsed that a spec keeps parsed for the next requests. Parsed,
/// JSON takes 7–10 times its text (Graph beta's schemas: 5.5 MB of text, 41 MiB parsed): this
/// is up to about 80 MB of trees, room for the schemas a big spec's requests keep reading and
/// the path items of the last few hundred endpoints (200 of Graph beta's read 1.6 MB of text).
const RECENT_PIECES_TEXT: usize = 8 * 1024 * 1024;

/// Bytes a parsed `serde_json::Value` takes per byte of its JSON text, at most about (measured
/// on Graph beta: 7.5 for path items and schemas, 10 for examples).
const PARSED_PER_TEXT_BYTE: usize = 10;

/// The most text a ref to a whole split object (`#/components/schemas`, `#`) may expand: such
/// refs make no sense in a real spec, and expanding one of a big spec would parse all of it.
const MAX_WHOLE_TEXT: usize = 8 * 1024 * 1024;

/// One loaded document.
#[derive(Debug)]
pub struct Document {
    /// Absolute location used as the base for relative refs; `None` when the spec was given as
    /// bytes without a location, in which case refs to other documents cannot resolve.
    pub url: Option<Url>,
    /// How the document is named in messages (redacted).
    pub display: String,
    root: Node,
    pieces: Pieces,
}

impl Document {
    /// A document parsed whole; [`DocSet::split`] splits it once loading is done.
    pub fn parsed(url: Option<Url>, display: impl Into<String>, value: Value) -> Document {
        Document {
            url,
            display: display.into(),
            root: Node::Value(value),
            pieces: Pieces::default(),
        }
    }

    /// A document split as it was read.
    pub(crate) fn split(
        url: Option<Url>,
        display: impl Into<String>,
        root: Node,
        pieces: Pieces,
    ) -> Document {
        Document {
            url,
            display: display.into(),
            root,
            pieces,
        }
    }
}

/// The spec and every document it references.
#[derive(Debug)]
pub struct DocSet {
    docs: Vec<Document>,
    by_url: HashMap<String, DocId>,
    recent: RecentPieces,
}

/// A ref target: which document, and the value there.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a> {
    pub doc: DocId,
    pub value: &'a Value,
}

/// Why a ref did not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefError {
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
    /// The ref names a whole split object (all schemas, the whole spec) of a big document.
    TooLarge(usize),
    /// A held piece did not parse back (it was valid JSON when loaded: a bug, not bad input).
    Unreadable(String),
}

impl fmt::Display for RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefError::DocumentNotLoaded(d) => write!(f, "document `{d}` is not loaded"),
            RefError::NotAPointer(p) => write!(f, "`#{p}` is not a JSON pointer"),
            RefError::NotFound(p) => write!(f, "nothing at `#{p}`"),
            RefError::Invalid(why) => write!(f, "invalid reference ({why})"),
            RefError::TooManyHops => write!(f, "the $ref chain loops or is longer than {MAX_HOPS}"),
            RefError::TooLarge(bytes) => write!(
                f,
                "it names a whole section of {} MB; refer to one of its members",
                bytes / (1024 * 1024)
            ),
            RefError::Unreadable(why) => write!(f, "a loaded part did not read back ({why})"),
        }
    }
}

impl DocSet {
    pub fn new(root: Document) -> DocSet {
        let mut set = DocSet {
            docs: Vec::new(),
            by_url: HashMap::new(),
            recent: RecentPieces::default(),
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

    /// Splits the documents still parsed whole (see `compact`). Done once loading, Swagger 2.0
    /// rewriting and listing are over.
    pub fn split(&mut self) {
        for doc in &mut self.docs {
            if let Node::Value(value) = &mut doc.root {
                let (root, pieces) = split_value(std::mem::take(value));
                doc.root = root;
                doc.pieces = pieces;
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    /// Bytes of JSON text held for the documents' pieces.
    pub(crate) fn piece_bytes(&self) -> usize {
        self.docs.iter().map(|d| d.pieces.bytes()).sum()
    }

    /// About what the documents hold in memory: the pieces' text and the recently parsed
    /// pieces (the small parts held parsed are left out).
    pub(crate) fn weight(&self) -> usize {
        self.piece_bytes() + self.recent.text_bytes() * PARSED_PER_TEXT_BYTE
    }

    pub(crate) fn contains_url(&self, url: &Url) -> bool {
        self.by_url.contains_key(&doc_key(url))
    }

    pub(crate) fn doc(&self, id: DocId) -> Option<&Document> {
        self.docs.get(id)
    }

    /// A top-level member of the spec that is held parsed (`info`, `servers`, `tags`, ...).
    pub fn root_member(&self, key: &str) -> Option<&Value> {
        self.held_value(ROOT, &[key])
    }

    /// `components.securitySchemes` of the spec (held parsed).
    pub fn security_schemes(&self) -> Option<&Map<String, Value>> {
        self.held_value(ROOT, &["components", "securitySchemes"])?
            .as_object()
    }

    /// What a chain of keys leads to in a document, when it is held parsed (`None` for pieces).
    fn held_value(&self, doc: DocId, keys: &[&str]) -> Option<&Value> {
        let mut node = &self.docs.get(doc)?.root;
        for (i, key) in keys.iter().enumerate() {
            match node {
                Node::Members(members) => node = members.get(key)?,
                Node::Value(value) => {
                    let mut value = value;
                    for key in keys.get(i..)? {
                        value = value.get(*key)?;
                    }
                    return Some(value);
                }
                Node::Piece(_) => return None,
            }
        }
        match node {
            Node::Value(value) => Some(value),
            _ => None,
        }
    }

    /// The spec itself while it is parsed whole (before [`DocSet::split`]), to rewrite it.
    pub(crate) fn root_mut(&mut self) -> Option<&mut Value> {
        match self.docs.get_mut(ROOT).map(|d| &mut d.root) {
            Some(Node::Value(value)) => Some(value),
            _ => None,
        }
    }

    /// The spec's path items in document order, as held.
    pub(crate) fn path_items(&self) -> Vec<(&str, PathItem<'_>)> {
        let Some(root) = self.docs.get(ROOT).map(|d| &d.root) else {
            return Vec::new();
        };
        let paths = match root {
            Node::Value(value) => value.get("paths"),
            Node::Members(members) => match members.get("paths") {
                Some(Node::Members(paths)) => {
                    return paths
                        .iter()
                        .filter_map(|(path, node)| match node {
                            Node::Value(v) => Some((path, PathItem::Parsed(v))),
                            Node::Piece(id) => Some((path, PathItem::Piece(*id))),
                            Node::Members(_) => None,
                        })
                        .collect();
                }
                Some(Node::Value(value)) => Some(value),
                _ => None,
            },
            Node::Piece(_) => None,
        };
        paths
            .and_then(Value::as_object)
            .map(|paths| {
                paths
                    .iter()
                    .map(|(path, item)| (path.as_str(), PathItem::Parsed(item)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A piece's JSON text.
    pub(crate) fn piece_text(&self, doc: DocId, id: PieceId) -> Option<&[u8]> {
        self.docs.get(doc)?.pieces.text(id)
    }

    /// A view for one request; what it parses is offered to the next ones (see
    /// [`RECENT_PIECES_TEXT`]).
    pub fn view(&self) -> DocView<'_> {
        DocView::new(self, true)
    }

    /// A view whose parsed pieces go with it: for reading each piece once (listing at load).
    pub(crate) fn scratch_view(&self) -> DocView<'_> {
        DocView::new(self, false)
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

    /// Bytes of piece text under a split object.
    fn text_under(&self, doc: DocId, members: &Members) -> usize {
        members
            .iter()
            .map(|(_, node)| match node {
                Node::Value(_) => 0,
                Node::Piece(id) => self.piece_text(doc, *id).map_or(0, <[u8]>::len),
                Node::Members(m) => self.text_under(doc, m),
            })
            .sum()
    }
}

/// A path item as held: parsed (a document not split yet), or a piece.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PathItem<'a> {
    Parsed(&'a Value),
    Piece(PieceId),
}

/// Where a walk through a document is: an object held member by member, or inside a value.
#[derive(Clone, Copy)]
enum Spot<'a> {
    Members(&'a Members),
    Value(&'a Value),
}

/// A piece, or the part of it that was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct PieceKey {
    doc: DocId,
    id: PieceId,
    part: Part,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    Whole,
    /// A path item as [`DocView::path_item_for`] reads it for the method `METHODS[i]`.
    Operation(usize),
}

/// What a view has read, by what it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Slot {
    Piece(PieceKey),
    /// A split object built whole (by its [`Members::id`]).
    Whole(DocId, usize),
}

/// Hashes the keys of a view's slots and of the recent pieces: small integers the loader
/// assigned (no text a spec chose, so nothing to guard against), hashed with a multiply a word
/// instead of the default SipHash, which a view pays on every ref it follows.
#[derive(Default, Clone, Copy)]
struct IdHasher(u64);

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word.iter_mut().zip(chunk).for_each(|(w, b)| *w = *b);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Reads documents for one request (or one listing pass): see the module docs. Not shared
/// between threads; cheap to make.
pub struct DocView<'s> {
    set: &'s DocSet,
    held: Held,
    slots: RefCell<IdMap<Slot, usize>>,
    /// Whether parsed pieces are offered to later views.
    share: bool,
}

impl fmt::Debug for DocView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DocView")
            .field("documents", &self.set.len())
            .field("held", &self.held.len.get())
            .finish()
    }
}

impl<'s> DocView<'s> {
    fn new(set: &'s DocSet, share: bool) -> DocView<'s> {
        DocView {
            set,
            held: Held::new(),
            // Room for what a request usually reads, so the map rarely grows.
            slots: RefCell::new(IdMap::with_capacity_and_hasher(32, Default::default())),
            share,
        }
    }

    pub fn doc(&self, id: DocId) -> Option<&'s Document> {
        self.set.doc(id)
    }

    pub fn locate(&self, reference: &str, from: DocId) -> Result<(DocId, String), RefError> {
        self.set.locate(reference, from)
    }

    pub(crate) fn display_ref(&self, doc: DocId, pointer: &str) -> String {
        self.set.display_ref(doc, pointer)
    }

    pub fn security_schemes(&self) -> Option<&'s Map<String, Value>> {
        self.set.security_schemes()
    }

    /// The spec's path item for a path key exactly as written (no ref followed).
    pub(crate) fn path_item(&self, path: &str) -> Result<Option<&Value>, RefError> {
        let Some(root) = self.set.docs.get(ROOT) else {
            return Ok(None);
        };
        let root = self.spot_of(ROOT, &root.root)?;
        let Some(paths) = self.child(ROOT, root, "paths")? else {
            return Ok(None);
        };
        match self.child(ROOT, paths, path)? {
            Some(item) => self.value_at(ROOT, item).map(Some),
            None => Ok(None),
        }
    }

    /// The spec's path item for a path key as far as one operation reads it: its `$ref`, its
    /// shared `parameters` and the `method` operation (lowercase, as the spec writes it).
    /// Other members may be missing: a piece is parsed only that far, the other operations of
    /// the path skipped unbuilt.
    pub fn path_item_for(&self, path: &str, method: &str) -> Result<Option<&Value>, RefError> {
        if let Some(Node::Members(root)) = self.set.docs.get(ROOT).map(|d| &d.root)
            && let Some(Node::Members(paths)) = root.get("paths")
            && let Some(Node::Piece(id)) = paths.get(path)
            && let Some(i) = METHODS.iter().position(|m| *m == method)
        {
            let part = Part::Operation(i);
            return self
                .piece_as(PieceKey {
                    doc: ROOT,
                    id: *id,
                    part,
                })
                .map(Some);
        }
        self.path_item(path)
    }

    /// Resolves one ref (following further refs only where the pointer has to pass through one).
    pub(crate) fn resolve(&self, reference: &str, from: DocId) -> Result<Resolved<'_>, RefError> {
        let (doc, pointer) = self.set.locate(reference, from)?;
        self.pointer(doc, &pointer)
    }

    /// Evaluates a decoded JSON pointer in a document.
    ///
    /// Where a pointer steps into an object that is itself a `$ref` and lacks the next key, the
    /// ref is followed: `#/paths/~1pets/get/responses/200/content` should work when that
    /// response is a ref, as most tools allow.
    pub fn pointer(&self, doc: DocId, pointer: &str) -> Result<Resolved<'_>, RefError> {
        let mut cur_doc = doc;
        let mut cur = self.root_spot(doc)?;
        let mut hops = 0;
        for raw in pointer.split('/').skip(1) {
            let segment = unescape_segment(raw);
            loop {
                if let Some(next) = self.child(cur_doc, cur, &segment)? {
                    cur = next;
                    break;
                }
                match self.ref_at(cur_doc, cur)? {
                    Some(r) if hops < MAX_HOPS => {
                        hops += 1;
                        let (d, p) = self.set.locate(r, cur_doc)?;
                        cur = self.walk_no_follow(d, &p)?;
                        cur_doc = d;
                    }
                    Some(_) => return Err(RefError::TooManyHops),
                    None => return Err(RefError::NotFound(pointer.to_string())),
                }
            }
        }
        Ok(Resolved {
            doc: cur_doc,
            value: self.value_at(cur_doc, cur)?,
        })
    }

    /// Where pointers into a document start: its root.
    fn root_spot(&self, doc: DocId) -> Result<Spot<'_>, RefError> {
        let root = &self
            .set
            .docs
            .get(doc)
            .ok_or_else(|| RefError::DocumentNotLoaded(format!("#{doc}")))?
            .root;
        self.spot_of(doc, root)
    }

    /// Pointer evaluation without following refs on the way (used inside [`Self::pointer`] so
    /// the mutual recursion is at most one level deep).
    fn walk_no_follow(&self, doc: DocId, pointer: &str) -> Result<Spot<'_>, RefError> {
        let mut cur = self.root_spot(doc)?;
        for raw in pointer.split('/').skip(1) {
            let segment = unescape_segment(raw);
            cur = self
                .child(doc, cur, &segment)?
                .ok_or_else(|| RefError::NotFound(pointer.to_string()))?;
        }
        Ok(cur)
    }

    /// Follows `$ref` until reaching a value that is not a ref. Used for parameters, responses,
    /// request bodies and path items, which (unlike schemas) cannot legitimately be recursive.
    pub fn deref<'a>(&'a self, value: &'a Value, doc: DocId) -> Result<Resolved<'a>, RefError> {
        let mut cur = Resolved { doc, value };
        for _ in 0..MAX_HOPS {
            match cur.value.get("$ref").and_then(Value::as_str) {
                Some(r) => cur = self.resolve(r, cur.doc)?,
                None => return Ok(cur),
            }
        }
        Err(RefError::TooManyHops)
    }

    fn spot_of<'a>(&'a self, doc: DocId, node: &'a Node) -> Result<Spot<'a>, RefError> {
        Ok(match node {
            Node::Value(value) => Spot::Value(value),
            Node::Members(members) => Spot::Members(members),
            Node::Piece(id) => Spot::Value(self.piece(doc, *id)?),
        })
    }

    /// One step down: an object's member or an array's item.
    fn child<'a>(
        &'a self,
        doc: DocId,
        spot: Spot<'a>,
        segment: &str,
    ) -> Result<Option<Spot<'a>>, RefError> {
        match spot {
            Spot::Value(value) => Ok(match value {
                Value::Object(map) => map.get(segment),
                Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            }
            .map(Spot::Value)),
            Spot::Members(members) => members
                .get(segment)
                .map(|node| self.spot_of(doc, node))
                .transpose(),
        }
    }

    /// The `$ref` string of the object at a spot, if it is one.
    fn ref_at<'a>(&'a self, doc: DocId, spot: Spot<'a>) -> Result<Option<&'a str>, RefError> {
        Ok(match self.child(doc, spot, "$ref")? {
            Some(Spot::Value(value)) => value.as_str(),
            _ => None,
        })
    }

    fn value_at<'a>(&'a self, doc: DocId, spot: Spot<'a>) -> Result<&'a Value, RefError> {
        match spot {
            Spot::Value(value) => Ok(value),
            Spot::Members(members) => self.whole(doc, members),
        }
    }

    /// A piece, parsed (once per view; from the spec's recent pieces when there).
    fn piece(&self, doc: DocId, id: PieceId) -> Result<&Value, RefError> {
        self.piece_as(PieceKey {
            doc,
            id,
            part: Part::Whole,
        })
    }

    /// A piece, or the part of it that `key` names, parsed (once per view; from the spec's
    /// recent pieces when there).
    fn piece_as(&self, key: PieceKey) -> Result<&Value, RefError> {
        let whole = PieceKey {
            part: Part::Whole,
            ..key
        };
        // The whole piece, when this view has it, serves for any part of it.
        if let Some(value) = self.held_at(Slot::Piece(whole)) {
            return Ok(value);
        }
        if key.part != Part::Whole
            && let Some(value) = self.held_at(Slot::Piece(key))
        {
            return Ok(value);
        }
        let recent = if self.share {
            self.set.recent.get(key)
        } else {
            None
        };
        let value = match recent {
            Some(value) => value,
            None => {
                let text = self
                    .set
                    .piece_text(key.doc, key.id)
                    .ok_or_else(|| RefError::Unreadable(format!("no piece {}", key.id)))?;
                let parsed = match key.part {
                    Part::Whole => serde_json::from_slice::<Value>(text),
                    Part::Operation(i) => operation_part(text, METHODS.get(i).unwrap_or(&"")),
                };
                let value = Arc::new(parsed.map_err(|e| RefError::Unreadable(e.to_string()))?);
                if self.share {
                    self.set.recent.put(key, Arc::clone(&value), text.len());
                }
                value
            }
        };
        self.hold(Slot::Piece(key), value)
    }

    /// A split object built whole, for a pointer that ends on it (`#/components/schemas`).
    fn whole(&self, doc: DocId, members: &Members) -> Result<&Value, RefError> {
        let slot = Slot::Whole(doc, members.id);
        if let Some(value) = self.held_at(slot) {
            return Ok(value);
        }
        let text = self.set.text_under(doc, members);
        if text > MAX_WHOLE_TEXT {
            return Err(RefError::TooLarge(text));
        }
        let value = self.build_whole(doc, members)?;
        self.hold(slot, Arc::new(value))
    }

    fn build_whole(&self, doc: DocId, members: &Members) -> Result<Value, RefError> {
        let mut map = Map::new();
        for (key, node) in members.iter() {
            let value = match node {
                Node::Value(value) => value.clone(),
                // Parsed apart from the view's pieces: the whole holds its own copy.
                Node::Piece(id) => match self.held_at(Slot::Piece(PieceKey {
                    doc,
                    id: *id,
                    part: Part::Whole,
                })) {
                    Some(value) => value.clone(),
                    None => {
                        let text = self
                            .set
                            .piece_text(doc, *id)
                            .ok_or_else(|| RefError::Unreadable(format!("no piece {id}")))?;
                        serde_json::from_slice(text)
                            .map_err(|e| RefError::Unreadable(e.to_string()))?
                    }
                },
                Node::Members(inner) => self.build_whole(doc, inner)?,
            };
            map.insert(key.to_string(), value);
        }
        Ok(Value::Object(map))
    }

    fn held_at(&self, slot: Slot) -> Option<&Value> {
        let index = self.slots.borrow().get(&slot).copied()?;
        self.held.get(index)
    }

    fn hold(&self, slot: Slot, value: Arc<Value>) -> Result<&Value, RefError> {
        let (index, value) = self
            .held
            .push(value)
            .ok_or_else(|| RefError::Unreadable("too many parts read in one request".into()))?;
        self.slots.borrow_mut().insert(slot, index);
        Ok(value)
    }
}

/// Values a view has parsed or built, kept until the view ends so that the references it
/// handed out stay valid. Appended to through a shared reference and never moved: chunks of
/// doubling size, each allocated once, each slot set once.
struct Held {
    chunks: [HeldChunk; HELD_CHUNKS],
    len: Cell<usize>,
}

/// A chunk of [`Held`]'s slots, allocated when the first value lands in it.
type HeldChunk = OnceCell<Box<[OnceCell<Arc<Value>>]>>;

/// Slots of the first chunk; chunk `k` has `FIRST_CHUNK << k`.
const FIRST_CHUNK: usize = 16;
/// Enough chunks for any request (16 × (2^24 − 1) values).
const HELD_CHUNKS: usize = 24;

impl Held {
    fn new() -> Held {
        Held {
            chunks: std::array::from_fn(|_| OnceCell::new()),
            len: Cell::new(0),
        }
    }

    /// Chunk and offset of the `i`-th value.
    fn place(i: usize) -> (usize, usize) {
        let q = i / FIRST_CHUNK + 1;
        let chunk = (usize::BITS - 1 - q.leading_zeros()) as usize;
        (chunk, i - FIRST_CHUNK * ((1 << chunk) - 1))
    }

    fn get(&self, i: usize) -> Option<&Value> {
        let (chunk, offset) = Held::place(i);
        self.chunks
            .get(chunk)?
            .get()?
            .get(offset)?
            .get()
            .map(|v| &**v)
    }

    fn push(&self, value: Arc<Value>) -> Option<(usize, &Value)> {
        let i = self.len.get();
        let (chunk, offset) = Held::place(i);
        let slots = self
            .chunks
            .get(chunk)?
            .get_or_init(|| (0..FIRST_CHUNK << chunk).map(|_| OnceCell::new()).collect());
        let slot = slots.get(offset)?;
        slot.set(value).ok()?;
        self.len.set(i + 1);
        slot.get().map(|v| (i, &**v))
    }
}

/// Pieces parsed lately by the views of one spec, up to [`RECENT_PIECES_TEXT`] bytes of their
/// text, least recently used dropped first: the next request on the same endpoint, or on one
/// sharing its big schemas, does not parse them again.
#[derive(Default)]
struct RecentPieces {
    state: Mutex<RecentState>,
}

#[derive(Default)]
struct RecentState {
    entries: IdMap<PieceKey, Recent>,
    text_bytes: usize,
    tick: u64,
}

struct Recent {
    value: Arc<Value>,
    text_bytes: usize,
    last_used: u64,
}

impl fmt::Debug for RecentPieces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("RecentPieces")
            .field("pieces", &state.entries.len())
            .field("text_bytes", &state.text_bytes)
            .finish()
    }
}

impl RecentPieces {
    /// Bytes of text of the pieces kept parsed.
    fn text_bytes(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .text_bytes
    }

    fn get(&self, key: PieceKey) -> Option<Arc<Value>> {
        // A poisoned lock only means a panic elsewhere mid-update of a plain map: still usable.
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.tick += 1;
        let tick = state.tick;
        let entry = state.entries.get_mut(&key)?;
        entry.last_used = tick;
        Some(Arc::clone(&entry.value))
    }

    fn put(&self, key: PieceKey, value: Arc<Value>, text_bytes: usize) {
        if text_bytes > RECENT_PIECES_TEXT / 4 {
            return; // one piece must not push out everything else
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.tick += 1;
        let last_used = state.tick;
        let old = state.entries.insert(
            key,
            Recent {
                value,
                text_bytes,
                last_used,
            },
        );
        state.text_bytes =
            (state.text_bytes + text_bytes).saturating_sub(old.map_or(0, |o| o.text_bytes));
        if state.text_bytes > RECENT_PIECES_TEXT {
            // Down to three quarters at once, so that eviction is not paid on every insert.
            let mut by_age: Vec<(PieceKey, u64, usize)> = state
                .entries
                .iter()
                .map(|(k, r)| (*k, r.last_used, r.text_bytes))
                .collect();
            by_age.sort_by_key(|(_, used, _)| *used);
            for (key, _, bytes) in by_age {
                if state.text_bytes <= RECENT_PIECES_TEXT * 3 / 4 {
                    break;
                }
                state.entries.remove(&key);
                state.text_bytes = state.text_bytes.saturating_sub(bytes);
            }
        }
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
pub fn percent_decode(s: &str) -> String {
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
        DocSet::new(Document::parsed(
            Some(Url::parse("file:///specs/api.yaml").unwrap()),
            "api.yaml",
            root,
        ))
    }

    /// The same document parsed whole and split: every ref must resolve alike in both.
    fn both(root: Value) -> [DocSet; 2] {
        let mut split = set(root.clone());
        split.split();
        [set(root), split]
    }

    #[test]
    fn local_pointers_unescape_and_percent_decode() {
        let root = json!({
            "paths": {"/pets/{id}": {"get": {"x": 1}}},
            "components": {"schemas": {"a~b": {"type": "string"}, "Pet Name": {"type": "integer"}}},
            "list": [10, 20]
        });
        for s in both(root.clone()) {
            let s = s.view();
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
            assert_eq!(s.resolve("#", ROOT).unwrap().value, &root);
            assert_eq!(
                s.resolve("#/components", ROOT).unwrap().value,
                &root["components"]
            );
            assert_eq!(
                s.resolve("#/nope", ROOT).unwrap_err(),
                RefError::NotFound("/nope".into())
            );
            assert!(matches!(
                s.resolve("#Pet", ROOT).unwrap_err(),
                RefError::NotAPointer(_)
            ));
            assert_eq!(
                s.path_item("/pets/{id}").unwrap(),
                Some(&json!({"get": {"x": 1}}))
            );
            assert_eq!(s.path_item("/nope").unwrap(), None);
        }
    }

    #[test]
    fn pointers_pass_through_refs() {
        for s in both(json!({
            "paths": {"/a": {"get": {"responses": {"200": {"$ref": "#/components/responses/Ok"}}}},
                      "/b": {"$ref": "#/paths/~1a"}},
            "components": {"responses": {"Ok": {"description": "fine"}}}
        })) {
            let s = s.view();
            let r = s
                .resolve("#/paths/~1a/get/responses/200/description", ROOT)
                .unwrap();
            assert_eq!(r.value, "fine");
            let r = s
                .resolve("#/paths/~1b/get/responses/200/description", ROOT)
                .unwrap();
            assert_eq!(r.value, "fine");
        }
    }

    #[test]
    fn ref_loops_end_in_an_error() {
        for s in both(json!({"a": {"$ref": "#/b"}, "b": {"$ref": "#/a"},
                             "paths": {"/a": {"$ref": "#/paths/~1b"}, "/b": {"$ref": "#/paths/~1a"}}}))
        {
            let a = s.root_member("a").unwrap();
            let s = s.view();
            assert_eq!(s.deref(a, ROOT).unwrap_err(), RefError::TooManyHops);
            assert!(s.resolve("#/a/x", ROOT).is_err());
            let item = s.path_item("/a").unwrap().unwrap();
            assert_eq!(s.deref(item, ROOT).unwrap_err(), RefError::TooManyHops);
            assert!(s.resolve("#/paths/~1a/get", ROOT).is_err());
        }
    }

    #[test]
    fn refs_into_other_documents_resolve_relative_to_their_document() {
        let mut s = set(json!({"x": {"$ref": "./schemas/pet.yaml#/Pet"}}));
        let pet = s.add(Document::parsed(
            Some(Url::parse("file:///specs/schemas/pet.yaml").unwrap()),
            "schemas/pet.yaml",
            json!({"Pet": {"properties": {"tag": {"$ref": "common.yaml#/Tag"}}}}),
        ));
        s.add(Document::parsed(
            Some(Url::parse("file:///specs/schemas/common.yaml").unwrap()),
            "schemas/common.yaml",
            json!({"components": {"schemas": {"Tag": {"type": "string"}}}}),
        ));
        for split in [false, true] {
            if split {
                s.split();
            }
            let v = s.view();
            let r = v.resolve("./schemas/pet.yaml#/Pet", ROOT).unwrap();
            assert_eq!(r.doc, pet);
            let tag = v
                .resolve("common.yaml#/components/schemas/Tag", pet)
                .unwrap();
            assert_eq!(tag.value["type"], "string");
            assert_eq!(v.display_ref(pet, "/Pet"), "pet.yaml#/Pet");
            assert!(matches!(
                v.resolve("missing.yaml#/X", ROOT).unwrap_err(),
                RefError::DocumentNotLoaded(_)
            ));
        }
    }

    #[test]
    fn pieces_are_parsed_once_per_view_and_shared_through_the_recent_cache() {
        let mut s = set(json!({"components": {"schemas": {"A": {"type": "string"}}}}));
        s.split();
        let first = s.view();
        let a = first.resolve("#/components/schemas/A", ROOT).unwrap().value;
        let again = first.resolve("#/components/schemas/A", ROOT).unwrap().value;
        assert!(std::ptr::eq(a, again), "parsed twice in one view");
        let second = s.view();
        let b = second
            .resolve("#/components/schemas/A", ROOT)
            .unwrap()
            .value;
        assert!(std::ptr::eq(a, b), "not shared between views");
        let scratch = s.scratch_view();
        let c = scratch
            .resolve("#/components/schemas/A", ROOT)
            .unwrap()
            .value;
        assert_eq!(a, c);
    }

    #[test]
    fn a_ref_to_a_whole_big_section_is_refused_not_expanded() {
        let mut schemas = Map::new();
        let big = "x".repeat(1024 * 1024);
        for i in 0..10 {
            schemas.insert(format!("S{i}"), json!({"description": big}));
        }
        let mut s = set(json!({"components": {"schemas": schemas}}));
        s.split();
        let v = s.view();
        assert!(matches!(
            v.resolve("#/components/schemas", ROOT).unwrap_err(),
            RefError::TooLarge(_)
        ));
        assert!(v.resolve("#/components/schemas/S3", ROOT).is_ok());
    }

    #[test]
    fn held_values_stay_put_as_the_view_grows() {
        let held = Held::new();
        let first = held.push(Arc::new(json!(0))).unwrap().1;
        for i in 1..1000 {
            let (index, value) = held.push(Arc::new(json!(i))).unwrap();
            assert_eq!((index, value), (i, &json!(i)));
        }
        assert_eq!(first, &json!(0));
        assert_eq!(held.get(999), Some(&json!(999)));
        assert_eq!(held.get(1000), None);
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
