//! The page as its accessibility tree, in compact text: one line per meaningful node, indented,
//! with a short ref (`e12`) on each interactive element that actions accept instead of a
//! selector. Paged by line.
//!
//! ```text
//! - heading "Sign in" [level=1]
//! - textbox "Email" [ref=e1] [required]
//! - checkbox "Remember me" [ref=e2] [checked=false]
//! - button "Sign in" [ref=e3]
//! ```
//!
//! The tree comes from Chrome (`Accessibility.getFullAXTree`), so names and roles are the ones
//! screen readers get. Refs map to DOM backend node ids and keep their number for as long as the
//! document lives, so a second snapshot of the same page says `e3` for the same button.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::page::dom::ElementTarget;
use crate::page::frames::MAX_FRAMES;
use crate::records::refs::{NodeKey, Realm, RefMap};
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::{collapse, truncate};

/// Default and largest page of lines.
pub const DEFAULT_LINES: usize = 200;
pub const MAX_LINES: usize = 1000;
/// Longest name shown on a line.
const MAX_NAME: usize = 100;
/// A page with at least this many elements is read lazily when the lines asked for are near
/// its top (`Tab::snapshot_lines`). Below it, Chrome's whole tree in one answer is quicker than
/// a few dozen round trips.
const LAZY_MIN_ELEMENTS: usize = 5_000;
/// `getChildAXNodes` calls in flight at once while reading lazily.
const LAZY_PARALLEL: usize = 16;
/// A lazy read needing more calls than this reads the whole tree instead.
const LAZY_MAX_CALLS: usize = 2_000;

const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
    "textField",
    "TextField",
];

/// Roles that only group other nodes: their children are shown in their place.
const TRANSPARENT: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "GenericContainer",
    "Section",
    "LineBreak",
    "InlineTextBox",
    "LayoutTable",
    "LayoutTableRow",
    "LayoutTableCell",
    "Unknown",
];

/// Landmarks and structure kept in `interactive_only` mode, to keep it readable.
const STRUCTURE: &[&str] = &[
    "heading",
    "dialog",
    "alertdialog",
    "alert",
    "form",
    "navigation",
    "main",
    "banner",
    "contentinfo",
    "complementary",
    "region",
    "search",
];

/// States shown in brackets, as `[name]` when true or `[name=value]`.
const PROPERTIES: &[&str] = &[
    "level",
    "checked",
    "pressed",
    "selected",
    "expanded",
    "disabled",
    "required",
    "invalid",
    "readonly",
    "focused",
    "multiselectable",
    "valuetext",
];

/// What to show.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SnapshotOptions {
    /// Only interactive elements plus headings and landmarks.
    pub interactive_only: bool,
    /// Only the part of the page under this element.
    pub root: Option<ElementTarget>,
    /// Skip this many lines (paging).
    pub offset: usize,
    /// At most this many lines (default 200, at most 1000).
    pub limit: Option<usize>,
}

/// A page of the accessibility snapshot.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub url: String,
    pub title: String,
    /// The lines of this page, indented two spaces per level.
    pub lines: Vec<String>,
    /// Lines in the whole snapshot; absent when a big page was read only as far as this page
    /// of lines (then `nextOffset` says whether more follow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Interactive elements (refs) in the lines read: the whole snapshot when `totalLines` is
    /// given.
    pub refs: usize,
}

impl Snapshot {
    pub fn to_text(&self) -> String {
        let mut out = format!("{} — \"{}\"", self.url, truncate(&self.title, 100));
        if self.lines.is_empty() {
            out.push_str("\n(nothing to show: the page is empty or still loading)");
        }
        for line in &self.lines {
            out.push('\n');
            out.push_str(line);
        }
        match (self.next_offset, self.total_lines) {
            (Some(next), Some(total)) => {
                let _ = write!(
                    out,
                    "\n… {} of {total} lines shown; next page: offset {next}",
                    self.lines.len()
                );
            }
            (Some(next), None) => {
                let _ = write!(
                    out,
                    "\n… {} lines shown; more follow (a big page, read only this far); next \
                     page: offset {next}",
                    self.lines.len()
                );
            }
            (None, _) => {}
        }
        out
    }
}

pub(crate) struct Node<'a> {
    raw: &'a Value,
    children: Vec<String>,
    /// The document (index into the documents of the snapshot) the node belongs to.
    doc: usize,
}

/// One document's accessibility nodes: the page's, or an iframe's.
pub(crate) struct Document {
    realm: Realm,
    nodes: Vec<Value>,
    /// The `<iframe>` element that shows it (for an iframe's document).
    owner: Option<NodeKey>,
    url: String,
}

/// An iframe whose document the snapshot shows under it.
struct FrameLink {
    /// The key of the frame document's root node.
    root: String,
    url: String,
}

/// The `nodes` of an accessibility answer.
fn ax_nodes(v: Value) -> Vec<Value> {
    match v {
        Value::Object(mut o) => match o.remove("nodes") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn ax_id(v: &Value) -> Option<&str> {
    v.get("nodeId").and_then(Value::as_str)
}

/// Roles whose children the snapshot never shows (a text's inline boxes).
fn childless_role(role: &str) -> bool {
    matches!(role, "StaticText" | "InlineTextBox")
}

/// The part of a page's accessibility tree read so far, node by node in document order.
struct LazyTree {
    nodes: Vec<Value>,
    known: std::collections::HashSet<String>,
    /// Nodes whose children are still to read, the next in document order last.
    pending: Vec<String>,
    calls: usize,
}

impl LazyTree {
    fn new(first: Value) -> Self {
        let mut tree = Self {
            nodes: Vec::new(),
            known: Default::default(),
            pending: Vec::new(),
            calls: 0,
        };
        tree.add(vec![vec![first]]);
        tree
    }

    /// Up to `n` nodes whose children to read next, in document order.
    fn next_batch(&mut self, n: usize) -> Vec<String> {
        let take = n.min(self.pending.len());
        let batch: Vec<String> = self
            .pending
            .drain(self.pending.len() - take..)
            .rev()
            .collect();
        self.calls += batch.len();
        batch
    }

    /// The answers to one batch, in the batch's order. Chrome answers a node's children with
    /// the descendants of its ignored children too, so a node is read only when some of its
    /// children are still unknown.
    fn add(&mut self, answers: Vec<Vec<Value>>) {
        let mut next = Vec::new();
        for nodes in answers {
            let fresh: Vec<Value> = nodes
                .into_iter()
                .filter(|n| ax_id(n).is_some_and(|id| !self.known.contains(id)))
                .collect();
            self.known
                .extend(fresh.iter().filter_map(ax_id).map(str::to_string));
            for n in &fresh {
                let role = ax_str(n, "role");
                let unread = n
                    .get("childIds")
                    .and_then(Value::as_array)
                    .is_some_and(|c| {
                        c.iter()
                            .filter_map(Value::as_str)
                            .any(|c| !self.known.contains(c))
                    });
                if unread && !childless_role(role) {
                    next.extend(ax_id(n).map(str::to_string));
                }
            }
            self.nodes.extend(fresh);
        }
        // `next` is in document order; the stack takes the first last.
        self.pending.extend(next.into_iter().rev());
    }
}

fn ax_str<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key)
        .and_then(|x| x.get("value"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn node_key(doc: usize, id: &str) -> String {
    format!("{doc}:{id}")
}

/// The documents of a snapshot as one tree: node keys are `document:nodeId`, and each iframe's
/// node leads to its document's root.
struct Merged<'a> {
    by_id: HashMap<String, Node<'a>>,
    /// Where each (realm, backend node) sits in the tree.
    by_backend: HashMap<NodeKey, String>,
    /// The top nodes of each document.
    roots: Vec<Vec<String>>,
    /// `<iframe>` node key → the frame's document.
    frames: HashMap<String, FrameLink>,
    realms: Vec<Realm>,
}

impl<'a> Merged<'a> {
    pub(crate) fn new(docs: &'a [Document]) -> Self {
        let mut by_id: HashMap<String, Node<'a>> = HashMap::new();
        let mut parent_of: HashMap<String, String> = HashMap::new();
        let mut by_backend: HashMap<NodeKey, String> = HashMap::new();
        let mut roots = Vec::new();
        for (d, doc) in docs.iter().enumerate() {
            let mut ids = Vec::new();
            for n in &doc.nodes {
                let Some(id) = n.get("nodeId").and_then(Value::as_str) else {
                    continue;
                };
                let key = node_key(d, id);
                let children: Vec<String> = n
                    .get("childIds")
                    .and_then(Value::as_array)
                    .map(|c| {
                        c.iter()
                            .filter_map(Value::as_str)
                            .map(|c| node_key(d, c))
                            .collect()
                    })
                    .unwrap_or_default();
                for c in &children {
                    parent_of.insert(c.clone(), key.clone());
                }
                if let Some(backend) = n.get("backendDOMNodeId").and_then(Value::as_i64) {
                    by_backend
                        .entry((doc.realm.clone(), backend))
                        .or_insert_with(|| key.clone());
                }
                ids.push(key.clone());
                by_id.insert(
                    key,
                    Node {
                        raw: n,
                        children,
                        doc: d,
                    },
                );
            }
            roots.push(
                ids.into_iter()
                    .filter(|k| !parent_of.contains_key(k))
                    .collect::<Vec<_>>(),
            );
        }
        let mut frames = HashMap::new();
        for (d, doc) in docs.iter().enumerate().skip(1) {
            let (Some(owner), Some(root)) = (&doc.owner, roots[d].first()) else {
                continue;
            };
            if let Some(owner_key) = by_backend.get(owner) {
                frames.insert(
                    owner_key.clone(),
                    FrameLink {
                        root: root.clone(),
                        url: doc.url.clone(),
                    },
                );
            }
        }
        Self {
            by_id,
            by_backend,
            roots,
            frames,
            realms: docs.iter().map(|d| d.realm.clone()).collect(),
        }
    }
}

impl Tab {
    /// The accessibility snapshot of the page (or of `root`), paged by line. The documents of
    /// iframes appear under their `iframe` line, with refs that actions accept.
    pub async fn snapshot(&self, options: &SnapshotOptions) -> Result<Snapshot> {
        self.guard()?;
        let limit = options.limit.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES);
        let root_node = match &options.root {
            Some(target) => Some(self.node_key(target).await?),
            None => None,
        };
        let want = options.offset.saturating_add(limit);
        // The title does not depend on the tree: ask for both at once.
        let (lines, info) = futures::join!(
            self.snapshot_lines(options, root_node.as_ref(), want),
            self.info()
        );
        let (lines, complete) = lines?;
        let info = info.ok();
        let ref_count = lines.iter().filter(|l| l.contains("[ref=e")).count();
        let read = lines.len();
        let page: Vec<String> = lines.into_iter().skip(options.offset).take(limit).collect();
        let end = options.offset.saturating_add(page.len());
        Ok(Snapshot {
            url: info
                .as_ref()
                .map(|i| i.url.clone())
                .unwrap_or_else(|| self.url()),
            title: info.map(|i| i.title).unwrap_or_default(),
            lines: page,
            total_lines: complete.then_some(read),
            next_offset: (end < read).then_some(end),
            refs: ref_count,
        })
    }

    /// The snapshot's lines, and whether they are all of them. A big page (at least
    /// [`LAZY_MIN_ELEMENTS`] elements) is read node by node in document order only as far as
    /// the `want` lines asked for: Chrome's whole tree of a 3,000-row table is 51,000 nodes and
    /// 20 MB of JSON, seconds to build, send and parse, for a first page of 200 lines.
    async fn snapshot_lines(
        &self,
        options: &SnapshotOptions,
        root: Option<&NodeKey>,
        want: usize,
    ) -> Result<(Vec<String>, bool)> {
        let in_page = root.is_none_or(|(realm, _)| *realm == Realm::Page);
        // Sparse modes and far pages would read most of the tree one call at a time. A page
        // paused in the debugger is not asked to run the counting script: it reads whole, as
        // before.
        if !options.interactive_only
            && in_page
            && !self.is_paused()
            && let Some(elements) = self.element_count().await
            && elements >= LAZY_MIN_ELEMENTS
            && want.saturating_mul(8) <= elements
        {
            // Anything unexpected (the domain refused, the tree changed under the walk, too
            // many calls) reads the whole tree instead.
            if let Ok(Some(read)) = self.lazy_lines(options, root, want).await {
                return Ok(read);
            }
        }
        let docs = self.documents().await?;
        Ok((self.render(&docs, options, root, None), true))
    }

    /// Renders documents; with `max_lines` (a partial tree read lazily) it stops after that many
    /// lines or where the tree read so far ends.
    fn render(
        &self,
        docs: &[Document],
        options: &SnapshotOptions,
        root: Option<&NodeKey>,
        max_lines: Option<usize>,
    ) -> Vec<String> {
        let tree = Merged::new(docs);
        let start: Vec<String> = match root {
            Some(node) => tree.by_backend.get(node).cloned().into_iter().collect(),
            None => tree.roots.first().cloned().unwrap_or_default(),
        };
        let mut lines = Vec::new();
        let mut page = self.state().page_state();
        let mut walker = Walker {
            nodes: &tree.by_id,
            frames: &tree.frames,
            realms: &tree.realms,
            refs: &mut page.refs,
            lines: &mut lines,
            interactive_only: options.interactive_only,
            control_names: control_names(&tree.by_id),
            max_lines,
            stopped: false,
        };
        for id in &start {
            walker.walk(id, 0, "");
        }
        lines
    }

    /// Elements in the page's document (not its iframes'), or `None` when the page won't say.
    async fn element_count(&self) -> Option<usize> {
        let v = self
            .call(Raw::new(
                "Runtime.evaluate",
                json!({
                    "expression": "document.getElementsByTagName('*').length",
                    "returnByValue": true,
                    "silent": true,
                }),
            ))
            .await
            .ok()?;
        v["result"]["value"].as_u64().map(|n| n as usize)
    }

    /// The first `want` lines (and one more, to know whether more follow) from a tree read node
    /// by node (`Accessibility.getChildAXNodes`), a batch of calls in flight at once. `None`
    /// when it would take more than [`LAZY_MAX_CALLS`] calls.
    async fn lazy_lines(
        &self,
        options: &SnapshotOptions,
        root: Option<&NodeKey>,
        want: usize,
    ) -> Result<Option<(Vec<String>, bool)>> {
        self.call(Raw::new("Accessibility.enable", json!({})))
            .await?;
        let read = self.lazy_lines_enabled(options, root, want).await;
        // Accessibility left on slows the page down (and every later trace of it).
        let _ = self
            .call(Raw::new("Accessibility.disable", json!({})))
            .await;
        read
    }

    /// The node a lazy read starts from: the page's root, or the accessibility node of `root`.
    async fn lazy_root(&self, root: Option<&NodeKey>) -> Result<Option<Value>> {
        Ok(match root {
            Some((_, backend)) => {
                let v = self
                    .call(Raw::new(
                        "Accessibility.getPartialAXTree",
                        json!({ "backendNodeId": backend, "fetchRelatives": false }),
                    ))
                    .await?;
                let nodes = ax_nodes(v);
                nodes
                    .iter()
                    .find(|n| n.get("backendDOMNodeId").and_then(Value::as_i64) == Some(*backend))
                    .or(nodes.first())
                    .cloned()
            }
            None => self
                .call(Raw::new("Accessibility.getRootAXNode", json!({})))
                .await?
                .get("node")
                .cloned(),
        })
    }

    async fn lazy_lines_enabled(
        &self,
        options: &SnapshotOptions,
        root: Option<&NodeKey>,
        want: usize,
    ) -> Result<Option<(Vec<String>, bool)>> {
        // The frames' trees (whole: they are small) while the page's root is read.
        let (first, frames) = futures::join!(self.lazy_root(root), self.frame_documents());
        let Some(first) = first? else {
            return Ok(None);
        };
        let mut tree = LazyTree::new(first);
        let mut docs = vec![Document {
            realm: Realm::Page,
            nodes: Vec::new(),
            owner: None,
            url: String::new(),
        }];
        docs.extend(frames);
        // About one line per call (a row, each of its cells, a link in one): read that many,
        // render, and read as many more as lines are still missing. Counting nodes instead
        // would count a table's thousands of rows, all known after one call, none read.
        let mut budget = want.saturating_add(1);
        loop {
            let read_to = tree.calls.saturating_add(budget);
            while tree.calls < read_to && !tree.pending.is_empty() {
                if tree.calls > LAZY_MAX_CALLS {
                    return Ok(None);
                }
                let batch = tree.next_batch(LAZY_PARALLEL);
                let answers = futures::future::join_all(batch.iter().map(|id| {
                    self.call(Raw::new(
                        "Accessibility.getChildAXNodes",
                        json!({ "id": id }),
                    ))
                }))
                .await;
                let mut children = Vec::with_capacity(answers.len());
                for answer in answers {
                    children.push(ax_nodes(answer?));
                }
                tree.add(children);
            }
            let complete = tree.pending.is_empty();
            docs[0].nodes = std::mem::take(&mut tree.nodes);
            let max_lines = (!complete).then_some(want.saturating_add(1));
            let lines = self.render(&docs, options, root, max_lines);
            if complete || lines.len() > want {
                return Ok(Some((lines, complete)));
            }
            tree.nodes = std::mem::take(&mut docs[0].nodes);
            budget = (want + 1 - lines.len()).max(LAZY_PARALLEL);
        }
    }

    /// The accessibility trees of the page and of its iframes (at most [`MAX_FRAMES`]): the
    /// ones Chrome renders in the page's process through the tab's session, cross-site ones
    /// through their own.
    pub(crate) async fn documents(&self) -> Result<Vec<Document>> {
        // The page's tree is most of the time; read the frames' meanwhile.
        let (main, frames) = futures::join!(
            self.call(Raw::new("Accessibility.getFullAXTree", json!({}))),
            self.frame_documents()
        );
        let mut docs = vec![Document {
            realm: Realm::Page,
            nodes: ax_nodes(main?),
            owner: None,
            url: String::new(),
        }];
        docs.extend(frames);
        Ok(docs)
    }

    /// The accessibility trees of the page's iframes (at most [`MAX_FRAMES`] with the page's
    /// own): the ones Chrome renders in the page's process through the tab's session, cross-site
    /// ones through their own.
    async fn frame_documents(&self) -> Vec<Document> {
        let local = self.local_frames().await;
        let mut docs = Vec::new();
        for frame in &local {
            let Some(owner) = self.frame_owner(&Realm::Page, &frame.frame_id).await else {
                continue;
            };
            let Ok(tree) = self
                .call(Raw::new(
                    "Accessibility.getFullAXTree",
                    json!({ "frameId": frame.frame_id }),
                ))
                .await
            else {
                continue;
            };
            docs.push(Document {
                realm: Realm::Page,
                nodes: ax_nodes(tree),
                owner: Some((Realm::Page, owner)),
                url: frame.url.clone(),
            });
        }
        let parents: Vec<&str> = std::iter::once(self.id())
            .chain(local.iter().map(|f| f.frame_id.as_str()))
            .collect();
        for frame in self.remote_frames(&parents).await {
            // The page's own document counts towards the limit.
            if docs.len() >= MAX_FRAMES {
                break;
            }
            let realm = Realm::Remote {
                target_id: frame.target_id.clone(),
            };
            let Ok(tree) = self
                .call_in(&realm, Raw::new("Accessibility.getFullAXTree", json!({})))
                .await
            else {
                continue;
            };
            docs.push(Document {
                realm,
                nodes: ax_nodes(tree),
                owner: Some((Realm::Page, frame.owner)),
                url: frame.url,
            });
        }
        docs
    }

    /// The node a target names (for refs and scoping).
    async fn node_key(&self, target: &ElementTarget) -> Result<NodeKey> {
        if let ElementTarget::Ref(r) = target
            && let Some(node) = self.state().page_state().refs.node(r)
        {
            return Ok(node);
        }
        let el = self.resolve(target).await?;
        let v = self
            .call_in(
                &el.realm,
                Raw::new("DOM.describeNode", json!({ "objectId": el.object_id })),
            )
            .await?;
        v["node"]
            .get("backendNodeId")
            .and_then(Value::as_i64)
            .map(|backend| (el.realm, backend))
            .ok_or_else(|| BrowserError::protocol("describing the element", "no backend node id"))
    }
}

struct Walker<'a, 'b> {
    nodes: &'b HashMap<String, Node<'a>>,
    /// `<iframe>` node key → the frame's document.
    frames: &'b HashMap<String, FrameLink>,
    /// The realm of each document.
    realms: &'b [Realm],
    refs: &'b mut RefMap,
    lines: &'b mut Vec<String>,
    interactive_only: bool,
    /// Names of interactive elements: a text that only repeats one (a `<label>`) is dropped.
    control_names: std::collections::HashSet<String>,
    /// For a tree read only in part: stop after this many lines, or at the first node whose
    /// children are not read yet, so the lines are exactly the first ones of the whole tree.
    max_lines: Option<usize>,
    stopped: bool,
}

/// Options shown per select or listbox before "… N more".
const MAX_OPTIONS: usize = 10;

fn control_names(nodes: &HashMap<String, Node<'_>>) -> std::collections::HashSet<String> {
    nodes
        .values()
        .filter(|n| INTERACTIVE.contains(&ax_str(n.raw, "role")))
        .map(|n| collapse(ax_str(n.raw, "name")))
        .filter(|n| !n.is_empty())
        .collect()
}

impl<'a> Walker<'a, '_> {
    /// Renders a node and its subtree; `parent_name` lets text that repeats it be dropped.
    pub(crate) fn walk(&mut self, id: &str, depth: usize, parent_name: &str) {
        if self.stopped {
            return;
        }
        let Some(node) = self.nodes.get(id) else {
            // In a tree read in part, the rest starts here.
            self.stopped = self.max_lines.is_some();
            return;
        };
        if let Some(frame) = self.frames.get(id) {
            return self.walk_frame(frame, depth);
        }
        let raw = node.raw;
        let ignored = raw.get("ignored").and_then(Value::as_bool).unwrap_or(false);
        let role = ax_str(raw, "role");
        let name = collapse(ax_str(raw, "name"));
        let mut child_depth = depth;
        let mut name_for_children = parent_name.to_string();
        if !ignored
            && !TRANSPARENT.contains(&role)
            && role != "RootWebArea"
            && let Some(line) = self.line(raw, node.doc, role, &name, parent_name)
        {
            self.push(format!("{}- {line}", "  ".repeat(depth)));
            child_depth = depth + 1;
            name_for_children = name.clone();
        }
        if childless_role(role) || self.stopped {
            return;
        }
        // A named leaf-ish control (button "Save") needs no text lines for its label.
        if INTERACTIVE.contains(&role)
            && !name.is_empty()
            && role != "listbox"
            && role != "combobox"
        {
            if self.max_lines.is_some() && node.children.iter().any(|c| !self.nodes.contains_key(c))
            {
                self.stopped = true;
                return;
            }
            let text_only = node.children.iter().all(|c| {
                self.nodes
                    .get(c)
                    .map(|n| {
                        let r = ax_str(n.raw, "role");
                        r == "StaticText" || r == "InlineTextBox" || r == "generic" || r == "image"
                    })
                    .unwrap_or(true)
            });
            if text_only {
                return;
            }
        }
        let children = node.children.clone();
        let is_list = matches!(role, "combobox" | "listbox");
        let mut options = 0;
        for child in children {
            if is_list {
                options += 1;
                if options > MAX_OPTIONS {
                    continue;
                }
            }
            self.walk(&child, child_depth, &name_for_children);
        }
        if options > MAX_OPTIONS && !self.stopped {
            self.push(format!(
                "{}- … {} more options",
                "  ".repeat(child_depth),
                options - MAX_OPTIONS
            ));
        }
    }

    fn push(&mut self, line: String) {
        self.lines.push(line);
        if self.max_lines.is_some_and(|max| self.lines.len() >= max) {
            self.stopped = true;
        }
    }

    /// An iframe: one line with its document's title and URL, its content indented below.
    fn walk_frame(&mut self, frame: &FrameLink, depth: usize) {
        let Some(root) = self.nodes.get(&frame.root) else {
            return;
        };
        let title = collapse(ax_str(root.raw, "name"));
        let mut line = format!("{}- iframe", "  ".repeat(depth));
        if !title.is_empty() {
            let _ = write!(line, " \"{}\"", truncate(&title, MAX_NAME));
        }
        if !frame.url.is_empty() {
            let _ = write!(line, " {}", truncate(&frame.url, 100));
        }
        self.push(line);
        for child in root.children.clone() {
            self.walk(&child, depth + 1, &title);
        }
    }

    pub(crate) fn line(
        &mut self,
        raw: &Value,
        doc: usize,
        role: &str,
        name: &str,
        parent_name: &str,
    ) -> Option<String> {
        let interactive = INTERACTIVE.contains(&role);
        if role == "StaticText" {
            if self.interactive_only
                || name.is_empty()
                || parent_name.contains(name)
                || self.control_names.contains(name)
            {
                return None;
            }
            return Some(format!("text \"{}\"", truncate(name, MAX_NAME)));
        }
        if self.interactive_only && !interactive && !STRUCTURE.contains(&role) {
            return None;
        }
        // Unnamed, non-interactive containers add nothing but depth.
        if !interactive
            && name.is_empty()
            && !STRUCTURE.contains(&role)
            && !matches!(
                role,
                "list" | "table" | "row" | "img" | "image" | "separator"
            )
        {
            return None;
        }
        let mut line = role.to_string();
        if !name.is_empty() {
            let _ = write!(line, " \"{}\"", truncate(name, MAX_NAME));
        }
        if interactive && let Some(backend) = raw.get("backendDOMNodeId").and_then(Value::as_i64) {
            let realm = self.realms.get(doc).cloned().unwrap_or_default();
            let r = self.refs.ref_for((realm, backend));
            let _ = write!(line, " [ref={r}]");
        }
        let value = ax_str(raw, "value");
        if !value.is_empty() && value != name {
            let _ = write!(line, " value=\"{}\"", truncate(&collapse(value), 60));
        }
        if let Some(props) = raw.get("properties").and_then(Value::as_array) {
            for p in props {
                let pname = p.get("name").and_then(Value::as_str).unwrap_or("");
                if !PROPERTIES.contains(&pname) {
                    continue;
                }
                let v = p.get("value").and_then(|v| v.get("value"));
                match v {
                    Some(Value::Bool(true)) => {
                        let _ = write!(line, " [{pname}]");
                    }
                    // A closed select is the normal case; a closed menu button is worth saying.
                    Some(Value::Bool(false))
                        if matches!(pname, "checked" | "pressed")
                            || (pname == "expanded" && role != "combobox") =>
                    {
                        let _ = write!(line, " [{pname}=false]");
                    }
                    Some(Value::String(s)) if s != "false" && !s.is_empty() => {
                        if s == "true" {
                            let _ = write!(line, " [{pname}]");
                        } else if pname != "valuetext" || !line.contains(s.as_str()) {
                            let _ = write!(line, " [{pname}={}]", truncate(s, 40));
                        }
                    }
                    Some(Value::Number(n)) => {
                        let _ = write!(line, " [{pname}={n}]");
                    }
                    _ => {}
                }
            }
        }
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_stable_and_resolve() {
        let page = |n| (Realm::Page, n);
        let mut m = RefMap::default();
        let a = m.ref_for(page(100));
        let b = m.ref_for(page(200));
        assert_eq!(m.ref_for(page(100)), a);
        assert_ne!(a, b);
        assert_eq!(m.node(&b), Some(page(200)));
        // The same backend id in a cross-site iframe is another node.
        let remote = (
            Realm::Remote {
                target_id: "F1".into(),
            },
            100,
        );
        assert_ne!(m.ref_for(remote.clone()), a);
        assert_eq!(m.node("e999"), None);
        assert_eq!(m.node("x1"), None);
        m.clear();
        assert_eq!(m.node(&a), None);
        // Numbers keep growing after a clear, so an old ref never names a new element.
        assert_ne!(m.ref_for(page(100)), a);
    }

    fn render(docs: &[Document]) -> (Vec<String>, RefMap) {
        let (lines, refs, _) = render_with(docs, None);
        (lines, refs)
    }

    fn render_with(docs: &[Document], max_lines: Option<usize>) -> (Vec<String>, RefMap, bool) {
        let tree = Merged::new(docs);
        let mut refs = RefMap::default();
        let mut lines = Vec::new();
        let mut w = Walker {
            control_names: control_names(&tree.by_id),
            nodes: &tree.by_id,
            frames: &tree.frames,
            realms: &tree.realms,
            refs: &mut refs,
            lines: &mut lines,
            interactive_only: false,
            max_lines,
            stopped: false,
        };
        for id in tree.roots[0].clone() {
            w.walk(&id, 0, "");
        }
        let stopped = w.stopped;
        (lines, refs, stopped)
    }

    /// A table page as Chrome's whole tree gives it: ignored wrappers, a label around a search
    /// box, a table whose rows sit under an ignored `tbody`, cells with text and links, and
    /// inline text boxes under every text.
    fn table_page(rows: usize) -> Vec<Value> {
        struct Nodes(Vec<Value>);
        impl Nodes {
            fn add(&mut self, role: &str, name: &str, ignored: bool, kids: Vec<String>) -> String {
                let n = self.0.len() + 100;
                self.0
                    .push(json!({"nodeId": n.to_string(), "ignored": ignored,
                    "role": {"value": role}, "name": {"value": name}, "childIds": kids,
                    "backendDOMNodeId": n}));
                n.to_string()
            }
            fn text(&mut self, name: &str) -> String {
                let inline = self.add("InlineTextBox", name, false, vec![]);
                self.add("StaticText", name, false, vec![inline])
            }
        }
        let mut t = Nodes(Vec::new());
        let heading_text = t.text("Orders");
        let filter_text = t.text("Filter ");
        let mut row_ids = Vec::new();
        for r in 0..rows {
            let order = format!("{}", 1000 + r);
            let t1 = t.text(&order);
            let c1 = t.add("cell", &order, false, vec![t1]);
            let label = format!("Order {order}");
            let t2 = t.text(&label);
            let link = t.add("link", &label, false, vec![t2]);
            let c2 = t.add("cell", &label, false, vec![link]);
            row_ids.push(t.add("row", "", false, vec![c1, c2]));
        }
        let tbody = t.add("none", "", true, row_ids);
        let caption_text = t.text("All orders");
        let caption = t.add("caption", "", false, vec![caption_text]);
        let table = t.add("table", "All orders", false, vec![caption, tbody]);
        let generic = t.add("generic", "", false, vec![]);
        let wrapper = t.add("none", "", true, vec![generic]);
        let searchbox = t.add("searchbox", "Filter", false, vec![wrapper]);
        let label = t.add("LabelText", "", false, vec![filter_text, searchbox]);
        let heading = t.add("heading", "Orders", false, vec![heading_text]);
        let main = t.add("main", "", false, vec![heading, label, table]);
        let inner = t.add("none", "", true, vec![main]);
        let outer = t.add("none", "", true, vec![inner]);
        t.add("RootWebArea", "Orders", false, vec![outer]);
        // Chrome lists the root first.
        let mut nodes = t.0;
        let root = nodes.pop().unwrap();
        nodes.insert(0, root);
        nodes
    }

    /// What `Accessibility.getChildAXNodes` answers: the node's children, and in place of an
    /// ignored child also its children (recursively), in document order.
    fn child_answer(all: &[Value], id: &str) -> Vec<Value> {
        let by_id: HashMap<&str, &Value> = all.iter().map(|n| (ax_id(n).unwrap(), n)).collect();
        fn children(by_id: &HashMap<&str, &Value>, id: &str, out: &mut Vec<Value>) {
            for c in by_id[id]["childIds"].as_array().unwrap() {
                let child = by_id[c.as_str().unwrap()];
                out.push(child.clone());
                if child["ignored"] == true {
                    children(by_id, c.as_str().unwrap(), out);
                }
            }
        }
        let mut out = Vec::new();
        children(&by_id, id, &mut out);
        out
    }

    fn page(nodes: Vec<Value>) -> [Document; 1] {
        [Document {
            realm: Realm::Page,
            nodes,
            owner: None,
            url: String::new(),
        }]
    }

    #[test]
    fn a_tree_read_in_part_gives_exactly_the_first_lines_of_the_whole() {
        let all = table_page(30);
        let (whole, _) = render(&page(all.clone()));
        assert_eq!(
            &whole[..8],
            [
                "- main",
                "  - heading \"Orders\"",
                "  - searchbox \"Filter\" [ref=e1]",
                "  - table \"All orders\"",
                "    - row",
                "      - cell \"1000\"",
                "      - cell \"Order 1000\"",
                "        - link \"Order 1000\" [ref=e2]",
            ]
        );
        assert_eq!(whole.len(), 4 + 30 * 4, "{whole:#?}");
        for batch in [1, 3, 16] {
            let mut tree = LazyTree::new(all[0].clone());
            let mut calls = 0;
            while !tree.pending.is_empty() {
                let ids = tree.next_batch(batch);
                calls += ids.len();
                tree.add(ids.iter().map(|id| child_answer(&all, id)).collect());
                for max in [1, 7, 40] {
                    let (lines, _, stopped) = render_with(&page(tree.nodes.clone()), Some(max));
                    assert_eq!(lines[..], whole[..lines.len()], "batch {batch}, max {max}");
                    assert!(lines.len() <= max);
                    assert!(stopped || lines.len() < max || tree.pending.is_empty());
                }
            }
            // Every node read once; texts' inline boxes never.
            assert_eq!(tree.calls, calls);
            let inline = all
                .iter()
                .filter(|n| n["role"]["value"] == "InlineTextBox")
                .count();
            assert_eq!(tree.nodes.len(), all.len() - inline, "batch {batch}");
            let (lines, _, stopped) = render_with(&page(tree.nodes.clone()), None);
            assert_eq!(lines, whole);
            assert!(!stopped);
        }
    }

    #[test]
    fn tree_renders_compactly() {
        let nodes: Vec<Value> = vec![
            json!({"nodeId": "1", "ignored": false, "role": {"value": "RootWebArea"}, "name": {"value": "Login"}, "childIds": ["2"]}),
            json!({"nodeId": "2", "ignored": false, "role": {"value": "generic"}, "childIds": ["3", "4", "6"]}),
            json!({"nodeId": "3", "ignored": false, "role": {"value": "heading"}, "name": {"value": "Sign in"},
                   "properties": [{"name": "level", "value": {"type": "integer", "value": 1}}], "childIds": ["5"]}),
            json!({"nodeId": "5", "ignored": false, "role": {"value": "StaticText"}, "name": {"value": "Sign in"}}),
            json!({"nodeId": "4", "ignored": false, "role": {"value": "textbox"}, "name": {"value": "Email"}, "backendDOMNodeId": 42,
                   "properties": [{"name": "required", "value": {"type": "boolean", "value": true}}]}),
            json!({"nodeId": "6", "ignored": false, "role": {"value": "button"}, "name": {"value": "Go"}, "backendDOMNodeId": 43, "childIds": ["7"]}),
            json!({"nodeId": "7", "ignored": false, "role": {"value": "StaticText"}, "name": {"value": "Go"}}),
        ];
        let docs = [Document {
            realm: Realm::Page,
            nodes,
            owner: None,
            url: String::new(),
        }];
        let (lines, refs) = render(&docs);
        assert_eq!(
            lines,
            vec![
                "- heading \"Sign in\" [level=1]",
                "- textbox \"Email\" [ref=e1] [required]",
                "- button \"Go\" [ref=e2]",
            ]
        );
        assert_eq!(refs.node("e1"), Some((Realm::Page, 42)));
    }

    #[test]
    fn iframes_render_under_their_element_with_refs_into_their_realm() {
        let page = vec![
            json!({"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Shop"}, "childIds": ["2", "3"]}),
            json!({"nodeId": "2", "role": {"value": "heading"}, "name": {"value": "Checkout"}, "backendDOMNodeId": 5}),
            json!({"nodeId": "3", "role": {"value": "Iframe"}, "backendDOMNodeId": 9}),
        ];
        // Node ids repeat across documents; backend ids repeat across processes.
        let frame = vec![
            json!({"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Pay"}, "childIds": ["2"]}),
            json!({"nodeId": "2", "role": {"value": "button"}, "name": {"value": "Pay now"}, "backendDOMNodeId": 5}),
        ];
        let remote = Realm::Remote {
            target_id: "F1".into(),
        };
        let docs = [
            Document {
                realm: Realm::Page,
                nodes: page,
                owner: None,
                url: String::new(),
            },
            Document {
                realm: remote.clone(),
                nodes: frame,
                owner: Some((Realm::Page, 9)),
                url: "https://pay.example/".into(),
            },
        ];
        let (lines, refs) = render(&docs);
        assert_eq!(
            lines,
            vec![
                "- heading \"Checkout\"",
                "- iframe \"Pay\" https://pay.example/",
                "  - button \"Pay now\" [ref=e1]",
            ]
        );
        assert_eq!(refs.node("e1"), Some((remote, 5)));
    }
}
