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
    pub total_lines: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Interactive elements (refs) in the whole snapshot.
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
        if let Some(next) = self.next_offset {
            let _ = write!(
                out,
                "\n… {} of {} lines shown; next page: offset {next}",
                self.lines.len(),
                self.total_lines
            );
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
        // The title does not depend on the tree: ask for both at once.
        let (docs, info) = futures::join!(self.documents(), self.info());
        let docs = docs?;
        let info = info.ok();
        let tree = Merged::new(&docs);
        let start: Vec<String> = match root_node {
            Some(node) => tree.by_backend.get(&node).cloned().into_iter().collect(),
            None => tree.roots.first().cloned().unwrap_or_default(),
        };
        let mut lines = Vec::new();
        {
            let mut page = self.state().page_state();
            let mut walker = Walker {
                nodes: &tree.by_id,
                frames: &tree.frames,
                realms: &tree.realms,
                refs: &mut page.refs,
                lines: &mut lines,
                interactive_only: options.interactive_only,
                control_names: control_names(&tree.by_id),
            };
            for id in &start {
                walker.walk(id, 0, "");
            }
        }
        let ref_count = lines.iter().filter(|l| l.contains("[ref=e")).count();
        let total_lines = lines.len();
        let page: Vec<String> = lines.into_iter().skip(options.offset).take(limit).collect();
        let end = options.offset.saturating_add(page.len());
        Ok(Snapshot {
            url: info
                .as_ref()
                .map(|i| i.url.clone())
                .unwrap_or_else(|| self.url()),
            title: info.map(|i| i.title).unwrap_or_default(),
            lines: page,
            total_lines,
            next_offset: (end < total_lines).then_some(end),
            refs: ref_count,
        })
    }

    /// The accessibility trees of the page and of its iframes (at most [`MAX_FRAMES`]): the
    /// ones Chrome renders in the page's process through the tab's session, cross-site ones
    /// through their own.
    pub(crate) async fn documents(&self) -> Result<Vec<Document>> {
        let nodes = |v: Value| match v {
            Value::Object(mut o) => match o.remove("nodes") {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        // The page's tree is most of the time; list its frames meanwhile.
        let (main, local) = futures::join!(
            self.call(Raw::new("Accessibility.getFullAXTree", json!({}))),
            self.local_frames()
        );
        let mut docs = vec![Document {
            realm: Realm::Page,
            nodes: nodes(main?),
            owner: None,
            url: String::new(),
        }];
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
                nodes: nodes(tree),
                owner: Some((Realm::Page, owner)),
                url: frame.url.clone(),
            });
        }
        let parents: Vec<&str> = std::iter::once(self.id())
            .chain(local.iter().map(|f| f.frame_id.as_str()))
            .collect();
        for frame in self.remote_frames(&parents).await {
            if docs.len() > MAX_FRAMES {
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
                nodes: nodes(tree),
                owner: Some((Realm::Page, frame.owner)),
                url: frame.url,
            });
        }
        Ok(docs)
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
        let Some(node) = self.nodes.get(id) else {
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
            self.lines.push(format!("{}- {line}", "  ".repeat(depth)));
            child_depth = depth + 1;
            name_for_children = name.clone();
        }
        // A named leaf-ish control (button "Save") needs no text lines for its label.
        if INTERACTIVE.contains(&role)
            && !name.is_empty()
            && role != "listbox"
            && role != "combobox"
        {
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
        if options > MAX_OPTIONS {
            self.lines.push(format!(
                "{}- … {} more options",
                "  ".repeat(child_depth),
                options - MAX_OPTIONS
            ));
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
        self.lines.push(line);
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
        };
        for id in tree.roots[0].clone() {
            w.walk(&id, 0, "");
        }
        (lines, refs)
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
