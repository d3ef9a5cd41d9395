//! V8 heap snapshots (the `.heapsnapshot` JSON that Chrome's `HeapProfiler.takeHeapSnapshot` and
//! Node's `v8.writeHeapSnapshot()` write) reduced to what an agent acts on: the constructors that
//! retain the most memory and the detached DOM trees still held.
//!
//! The snapshot is read from a stream (the file it was written to), keeping only the meta data
//! and the flat `nodes`, `edges` and `strings` arrays, so its text is never in memory beside
//! them. Retained sizes come from the dominator tree (Lengauer–Tarjan, as DevTools computes it
//! now); every walk is a loop with its own stack, as snapshots have millions of nodes.

use std::cmp::Reverse;
use std::fmt::{self, Write as _};
use std::io::{BufReader, Read};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{BrowserError, Result};
use crate::text::{bytes, truncate};

/// No node, or not known yet.
const NONE: u32 = u32::MAX;
/// Detached trees described one by one.
const EXAMPLE_TREES: usize = 5;

/// A heap snapshot in a few lines.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeapSummary {
    /// Objects in the snapshot (its nodes).
    pub node_count: usize,
    /// Their self sizes added up, in bytes.
    pub total_size: u64,
    /// The classes retaining the most, largest first.
    pub constructors: Vec<ConstructorSummary>,
    pub detached: DetachedDom,
}

/// One class of objects, grouped as DevTools' summary view groups them.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConstructorSummary {
    /// The constructor's name, or `(closure)`, `(string)`, `(array)`, `(system)`, ...
    pub name: String,
    pub count: usize,
    /// Bytes the objects take themselves.
    pub self_size: u64,
    /// Bytes freed if all of them went (nested instances counted once).
    pub retained_size: u64,
}

/// DOM nodes no longer in a document but still referenced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetachedDom {
    pub nodes: usize,
    /// Detached nodes not held through another detached node.
    pub trees: usize,
    /// Bytes the trees retain.
    pub retained_size: u64,
    /// The largest trees.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<DetachedTree>,
}

/// The root of one detached tree.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetachedTree {
    pub name: String,
    /// Detached nodes in the tree, the root included.
    pub nodes: usize,
    pub retained_size: u64,
}

impl HeapSummary {
    pub fn to_text(&self) -> String {
        let (n, size) = (self.node_count, bytes(self.total_size));
        let mut out = format!("heap snapshot: {n} objects, {size}");
        if !self.constructors.is_empty() {
            out.push_str("\nlargest retainers by constructor (count, self, retained):");
        }
        for c in &self.constructors {
            let (own, all) = (bytes(c.self_size), bytes(c.retained_size));
            let _ = write!(out, "\n  {} ×{}  {own}  {all}", c.name, c.count);
        }
        out.push('\n');
        out.push_str(&self.detached.to_text());
        out
    }
}

impl DetachedDom {
    pub fn to_text(&self) -> String {
        if self.nodes == 0 {
            return "detached DOM: none".into();
        }
        let (nodes, trees, size) = (self.nodes, self.trees, bytes(self.retained_size));
        let mut out = format!("detached DOM: {nodes} node(s) in {trees} tree(s), retaining {size}");
        for t in &self.examples {
            let size = bytes(t.retained_size);
            let _ = write!(out, "\n  {}: {} node(s), {size}", t.name, t.nodes);
        }
        out
    }
}

/// The parts of a snapshot file that are kept.
#[derive(Deserialize)]
struct RawSnapshot {
    snapshot: RawHeader,
    // Integers below 2^32 in practice (ids, sizes, indexes into these arrays).
    nodes: Vec<u32>,
    edges: Vec<u32>,
    strings: Vec<String>,
    // Parsed past without being built: allocation traces can be as large as the graph.
    #[serde(default, rename = "locations")]
    _locations: IgnoredAny,
    #[serde(default, rename = "samples")]
    _samples: IgnoredAny,
    #[serde(default, rename = "trace_function_infos")]
    _trace_function_infos: IgnoredAny,
    #[serde(default, rename = "trace_tree")]
    _trace_tree: IgnoredAny,
}

#[derive(Deserialize)]
struct RawHeader {
    meta: Meta,
}

#[derive(Deserialize)]
struct Meta {
    node_fields: Vec<String>,
    /// Per field: a list of names (an enum, the `type` field) or the field's kind.
    node_types: Vec<Value>,
    edge_fields: Vec<String>,
    edge_types: Vec<Value>,
}

fn not_a_snapshot(why: impl fmt::Display) -> BrowserError {
    BrowserError::InvalidInput(format!(
        "not a V8 heap snapshot ({why}); pass the .heapsnapshot JSON that Chrome DevTools, \
         HeapProfiler.takeHeapSnapshot or Node's v8.writeHeapSnapshot() writes"
    ))
}

/// Where each of `names` is in a `*_fields` list.
fn fields<const N: usize>(list: &[String], names: [&str; N], of: &str) -> Result<[usize; N]> {
    let mut at = [0; N];
    for (slot, name) in at.iter_mut().zip(names) {
        *slot = list
            .iter()
            .position(|f| f == name)
            .ok_or_else(|| not_a_snapshot(format!("{of} have no `{name}` field")))?;
    }
    Ok(at)
}

/// The names of an enum field (`node_types[type]`, `edge_types[type]`).
fn enum_names(types: &[Value], at: usize) -> Vec<&str> {
    types
        .get(at)
        .and_then(Value::as_array)
        .map(|names| names.iter().map(|n| n.as_str().unwrap_or("")).collect())
        .unwrap_or_default()
}

/// How DevTools' summary groups a node type.
enum Grouping {
    /// Objects and native objects: by their (constructor) name.
    ByName,
    /// Everything else: one group per type, `(system)` for hidden nodes.
    Fixed(u32),
    /// The root and the GC-root bookkeeping: not objects.
    Skip,
}

/// Reads a snapshot from `reader` and summarises it, listing the `top` largest classes.
pub fn summarize(reader: impl Read, top: usize) -> Result<HeapSummary> {
    let raw: RawSnapshot = serde_json::from_reader(BufReader::with_capacity(1 << 16, reader))
        .map_err(not_a_snapshot)?;
    let RawSnapshot {
        snapshot: RawHeader { meta },
        nodes,
        edges,
        strings,
        ..
    } = raw;

    let nf = meta.node_fields.len();
    let node_fields = ["type", "name", "self_size", "edge_count"];
    let [n_type, n_name, n_self, n_edges] = fields(&meta.node_fields, node_fields, "nodes")?;
    let n_detached = meta.node_fields.iter().position(|f| f == "detachedness");
    let ef = meta.edge_fields.len();
    let [e_type, e_to] = fields(&meta.edge_fields, ["type", "to_node"], "edges")?;
    if nodes.is_empty() || !nodes.len().is_multiple_of(nf) || !edges.len().is_multiple_of(ef) {
        return Err(not_a_snapshot(
            "the nodes or edges array has a partial entry",
        ));
    }
    let n = nodes.len() / nf;
    if n >= NONE as usize {
        return Err(not_a_snapshot("more nodes than this reader handles"));
    }
    let edge_types = enum_names(&meta.edge_types, e_type);
    let edge_kind = |name: &str| {
        edge_types
            .iter()
            .position(|t| *t == name)
            .map_or(NONE, |i| i as u32)
    };
    let (weak, shortcut) = (edge_kind("weak"), edge_kind("shortcut"));
    let node_types = enum_names(&meta.node_types, n_type);

    // Class names: one per node type that is grouped as a whole, one per distinct object name.
    let mut class_names: Vec<String> = Vec::new();
    let groupings: Vec<Grouping> = node_types
        .iter()
        .map(|t| match *t {
            "object" | "native" => Grouping::ByName,
            "synthetic" => Grouping::Skip,
            other => {
                class_names.push(match other {
                    "hidden" => "(system)".into(),
                    "code" => "(compiled code)".into(),
                    _ => format!("({other})"),
                });
                Grouping::Fixed(class_names.len() as u32 - 1)
            }
        })
        .collect();
    let mut class_by_string = vec![NONE; strings.len()];
    let name_of = |s: u32| strings.get(s as usize).map_or("", String::as_str);

    // Columns of what the analysis needs; then the node array goes.
    let mut first_edge = Vec::with_capacity(n + 1);
    let mut self_size = Vec::with_capacity(n);
    let mut class_of = Vec::with_capacity(n);
    let mut detached = Vec::with_capacity(n);
    let mut names = Vec::with_capacity(n);
    let mut edge_total: u64 = 0;
    for i in 0..n {
        first_edge.push(u32::try_from(edge_total).unwrap_or(NONE));
        edge_total += u64::from(nodes[i * nf + n_edges]);
        self_size.push(nodes[i * nf + n_self]);
        let class = match groupings.get(nodes[i * nf + n_type] as usize) {
            Some(Grouping::ByName) => {
                let s = nodes[i * nf + n_name] as usize;
                match class_by_string.get(s) {
                    Some(&c) if c != NONE => c,
                    Some(_) => {
                        class_names.push(truncate(&strings[s], 80));
                        class_by_string[s] = class_names.len() as u32 - 1;
                        class_names.len() as u32 - 1
                    }
                    None => return Err(not_a_snapshot("a node name is not in the strings")),
                }
            }
            Some(Grouping::Fixed(c)) => *c,
            Some(Grouping::Skip) => NONE,
            None => return Err(not_a_snapshot("a node type is not in node_types")),
        };
        class_of.push(class);
        let name = nodes[i * nf + n_name];
        names.push(name);
        // Chrome marks detached DOM nodes; older versions named them so.
        detached.push(
            n_detached.is_some_and(|d| nodes[i * nf + d] == 2)
                || name_of(name).starts_with("Detached "),
        );
    }
    if edge_total != (edges.len() / ef) as u64 {
        return Err(not_a_snapshot(
            "the edge counts do not add up to the edges array",
        ));
    }
    first_edge.push(edge_total as u32);
    drop(nodes);

    // Edge targets as node ordinals; edges DevTools leaves out of dominance become NONE: weak
    // ones, and shortcuts except the root's (those mark the user's global objects).
    let mut target = Vec::with_capacity(edges.len() / ef);
    for from in 0..n {
        for e in first_edge[from]..first_edge[from + 1] {
            let e = e as usize * ef;
            let to = edges[e + e_to] as usize;
            if !to.is_multiple_of(nf) || to / nf >= n {
                return Err(not_a_snapshot("an edge points past the nodes"));
            }
            let kind = edges[e + e_type];
            let essential = kind != weak && (kind != shortcut || from == 0);
            target.push(if essential { (to / nf) as u32 } else { NONE });
        }
    }
    drop(edges);

    let (idom, order) = dominators(&first_edge, &target);
    drop(target);
    // Each node's size plus everything it dominates; dominators come earlier in pre-order.
    let mut retained: Vec<u64> = self_size.iter().map(|&s| u64::from(s)).collect();
    for &node in order[1..].iter().rev() {
        retained[idom[node as usize] as usize] += retained[node as usize];
    }
    drop(order);
    let children = Groups::new(n, (1..n).map(|i| (idom[i], i as u32)));

    // One walk down the dominator tree: a class's retained size counts only instances with no
    // instance of the same class above them (DevTools' rule), and a detached node with no
    // detached node above it roots a tree.
    let mut classes: Vec<ConstructorSummary> = class_names
        .into_iter()
        .map(|name| ConstructorSummary {
            name,
            count: 0,
            self_size: 0,
            retained_size: 0,
        })
        .collect();
    for (i, &c) in class_of.iter().enumerate() {
        if let Some(class) = classes.get_mut(c as usize) {
            class.count += 1;
            class.self_size += u64::from(self_size[i]);
        }
    }
    // Instances of each class on the path from the root.
    let mut open = vec![0u32; classes.len()];
    let mut trees: Vec<DetachedTree> = Vec::new();
    // (node, next child or NONE before the node is entered, the detached tree it is in)
    let mut stack: Vec<(u32, u32, u32)> = vec![(0, NONE, NONE)];
    while let Some((node, next, tree)) = stack.last_mut() {
        let i = *node as usize;
        if *next == NONE {
            if let Some(c) = open.get_mut(class_of[i] as usize) {
                if *c == 0 {
                    classes[class_of[i] as usize].retained_size += retained[i];
                }
                *c += 1;
            }
            if detached[i] {
                if *tree == NONE {
                    trees.push(DetachedTree {
                        name: truncate(name_of(names[i]), 80),
                        nodes: 0,
                        retained_size: retained[i],
                    });
                    *tree = trees.len() as u32 - 1;
                }
                trees[*tree as usize].nodes += 1;
            }
            *next = children.start[i];
        }
        if *next < children.start[i + 1] {
            let child = children.list[*next as usize];
            *next += 1;
            let tree = *tree;
            stack.push((child, NONE, tree));
        } else {
            stack.pop();
            if let Some(c) = open.get_mut(class_of[i] as usize) {
                *c -= 1;
            }
        }
    }

    classes.retain(|c| c.count > 0);
    classes.sort_by_key(|c| Reverse((c.retained_size, c.count)));
    classes.truncate(top);
    let detached_nodes = trees.iter().map(|t| t.nodes).sum();
    let tree_count = trees.len();
    let detached_retained = trees.iter().map(|t| t.retained_size).sum();
    trees.sort_by_key(|t| Reverse((t.retained_size, t.nodes)));
    trees.truncate(EXAMPLE_TREES);
    Ok(HeapSummary {
        node_count: n,
        total_size: self_size.iter().map(|&s| u64::from(s)).sum(),
        constructors: classes,
        detached: DetachedDom {
            nodes: detached_nodes,
            trees: tree_count,
            retained_size: detached_retained,
            examples: trees,
        },
    })
}

/// The immediate dominator of every node (the root's is itself), node 0 being the root, and the
/// nodes in depth-first pre-order (a dominator before what it dominates).
/// `first_edge[i]..first_edge[i + 1]` are node `i`'s edges in `target`; `NONE` targets are
/// left out. Nodes the root does not reach hang off the root, as in DevTools, so that the
/// retained sizes still add up to the heap.
///
/// Lengauer–Tarjan with path compression: Cooper–Harvey–Kennedy's intersections walk the
/// dominator tree and turn quadratic on long chains (a linked list of a million objects).
fn dominators(first_edge: &[u32], target: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let n = first_edge.len() - 1;
    // Depth-first pre-order: `order[k]` is the node numbered k, `num[node]` its number, and
    // `parent[k]` the number of the node it was reached from.
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut num = vec![NONE; n];
    let mut parent = vec![0u32; n];
    let mut orphan = vec![false; n];
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for start in 0..n {
        if num[start] != NONE {
            continue;
        }
        // What the root does not reach is numbered as if the root pointed at it.
        orphan[start] = start != 0;
        num[start] = order.len() as u32;
        order.push(start as u32);
        stack.push((start as u32, first_edge[start]));
        while let Some((node, next)) = stack.last_mut() {
            if *next == first_edge[*node as usize + 1] {
                stack.pop();
                continue;
            }
            let to = target[*next as usize];
            *next += 1;
            if to != NONE && num[to as usize] == NONE {
                parent[order.len()] = num[*node as usize];
                num[to as usize] = order.len() as u32;
                order.push(to);
                stack.push((to, first_edge[to as usize]));
            }
        }
    }

    // Who points at each node (essential edges only), by number.
    let numbers = &num;
    let preds = Groups::new(
        n,
        (0..n).flat_map(|from| {
            let edges = &target[first_edge[from] as usize..first_edge[from + 1] as usize];
            let from = num[from];
            edges
                .iter()
                .filter(|&&t| t != NONE)
                .map(move |&t| (numbers[t as usize], from))
        }),
    );

    // All in numbers from here on.
    let mut semi: Vec<u32> = (0..n as u32).collect();
    let mut label = semi.clone();
    let mut ancestor = vec![NONE; n];
    let mut idom = vec![0u32; n];
    let (mut bucket, mut bucket_next) = (vec![NONE; n], vec![NONE; n]);
    let mut path: Vec<u32> = Vec::new();
    // The vertex of least semi-dominator on `v`'s path in the forest built so far.
    let mut eval = |v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32]| {
        if ancestor[v as usize] == NONE {
            return v;
        }
        let mut x = v;
        while ancestor[ancestor[x as usize] as usize] != NONE {
            path.push(x);
            x = ancestor[x as usize];
        }
        while let Some(x) = path.pop() {
            let (x, a) = (x as usize, ancestor[x as usize] as usize);
            if semi[label[a] as usize] < semi[label[x] as usize] {
                label[x] = label[a];
            }
            ancestor[x] = ancestor[a];
        }
        label[v as usize]
    };
    for w in (1..n).rev() {
        let node = order[w] as usize;
        let mut s = if orphan[node] { 0 } else { semi[w] };
        for &v in preds.of(w) {
            let u = eval(v, &mut ancestor, &mut label, &semi);
            s = s.min(semi[u as usize]);
        }
        semi[w] = s;
        bucket_next[w] = bucket[s as usize];
        bucket[s as usize] = w as u32;
        let p = parent[w];
        ancestor[w] = p;
        let mut v = std::mem::replace(&mut bucket[p as usize], NONE);
        while v != NONE {
            let u = eval(v, &mut ancestor, &mut label, &semi);
            idom[v as usize] = if semi[u as usize] < semi[v as usize] {
                u
            } else {
                p
            };
            v = bucket_next[v as usize];
        }
    }
    for w in 1..n {
        if idom[w] != semi[w] {
            idom[w] = idom[idom[w] as usize];
        }
    }
    let by_node = (0..n)
        .map(|i| order[idom[num[i] as usize] as usize])
        .collect();
    (by_node, order)
}

/// Values grouped by key: `list[start[k]..start[k + 1]]` are key `k`'s.
struct Groups {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Groups {
    fn new(keys: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Self {
        let mut start = vec![0u32; keys + 1];
        for (k, _) in pairs.clone() {
            start[k as usize + 1] += 1;
        }
        for k in 0..keys {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; start[keys] as usize];
        for (k, v) in pairs {
            list[fill[k as usize] as usize] = v;
            fill[k as usize] += 1;
        }
        Self { start, list }
    }

    fn of(&self, k: usize) -> &[u32] {
        &self.list[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A snapshot with fields in an unusual order (the reader must follow the meta data).
    /// Nodes: (type, name, self size, detachedness, edges as (type, target)).
    type Node<'a> = (&'a str, &'a str, u32, u32, &'a [(&'a str, usize)]);

    #[rustfmt::skip]
    fn snapshot(nodes: &[Node<'_>]) -> String {
        let node_types = ["hidden", "array", "string", "object", "code", "closure", "native", "synthetic"];
        let edge_types = ["context", "element", "property", "internal", "hidden", "shortcut", "weak"];
        let mut strings: Vec<String> = vec!["".into()];
        let mut string = |s: &str| strings.iter().position(|x| x == s).unwrap_or_else(|| {
            strings.push(s.into());
            strings.len() - 1
        });
        let pos = |list: &[&str], t: &str| list.iter().position(|x| *x == t).unwrap();
        let (mut flat_nodes, mut flat_edges) = (vec![], vec![]);
        for (id, (kind, name, size, detachedness, edges)) in nodes.iter().enumerate() {
            // node_fields: name, id, edge_count, type, self_size, trace_node_id, detachedness
            flat_nodes.extend([string(name), id * 2 + 1, edges.len(), pos(&node_types, kind), *size as usize, 0, *detachedness as usize]);
            for (kind, to) in *edges {
                // edge_fields: to_node, type, name_or_index
                flat_edges.extend([to * 7, pos(&edge_types, kind), 0]);
            }
        }
        json!({
            "snapshot": {
                "meta": {
                    "node_fields": ["name", "id", "edge_count", "type", "self_size", "trace_node_id", "detachedness"],
                    "node_types": ["string", "number", "number", node_types, "number", "number", "number"],
                    "edge_fields": ["to_node", "type", "name_or_index"],
                    "edge_types": ["node", edge_types, "string_or_number"],
                },
                "node_count": nodes.len(),
            },
            "nodes": flat_nodes,
            "edges": flat_edges,
            "trace_function_infos": [],
            "trace_tree": [[1, 2, [3, [4]]]],
            "samples": [],
            "locations": [0, 1, 2, 3],
            "strings": strings,
        })
        .to_string()
    }

    #[test]
    fn retained_sizes_follow_the_dominator_tree() {
        // Hand-computed dominators: 1←0, 2←1, 3←2, 4←3, 5←1 (held by 1 and 2), 6←4 (the weak
        // edge from 5 and the shortcut from 3 do not count), 7←1 (10, under 7, points back at
        // it), 8←7, 9←8, 10←8, 11←0 (held only weakly), 12←5.
        #[rustfmt::skip]
        let text = snapshot(&[
            /* 0 */ ("synthetic", "", 0, 0, &[("shortcut", 1)]),
            /* 1 */ ("object", "Window", 10, 0, &[("property", 2), ("property", 5), ("property", 7), ("weak", 11)]),
            /* 2 */ ("object", "Foo", 20, 0, &[("property", 3), ("property", 5)]),
            /* 3 */ ("object", "Foo", 30, 0, &[("property", 4), ("shortcut", 6)]),
            /* 4 */ ("object", "Bar", 5, 0, &[("property", 6)]),
            /* 5 */ ("object", "Bar", 5, 0, &[("weak", 6), ("property", 12)]),
            /* 6 */ ("string", "hello", 8, 0, &[]),
            /* 7 */ ("native", "Detached HTMLDivElement", 40, 0, &[("element", 8)]),
            /* 8 */ ("native", "HTMLSpanElement", 15, 2, &[("element", 9), ("internal", 10)]),
            /* 9 */ ("native", "Text", 5, 2, &[("element", 8)]),
            /* 10 */ ("closure", "onClick", 12, 0, &[("context", 7)]),
            /* 11 */ ("hidden", "system / Map", 3, 0, &[]),
            /* 12 */ ("native", "HTMLInputElement", 7, 2, &[]),
        ]);
        let s = summarize(text.as_bytes(), 50).unwrap();
        assert_eq!((s.node_count, s.total_size), (13, 160));
        let got: Vec<(&str, usize, u64, u64)> = s
            .constructors
            .iter()
            .map(|c| (c.name.as_str(), c.count, c.self_size, c.retained_size))
            .collect();
        assert_eq!(
            got,
            [
                ("Window", 1, 10, 157),
                ("Detached HTMLDivElement", 1, 40, 72),
                // 63, not 63 + 43: the inner Foo is inside the outer one.
                ("Foo", 2, 50, 63),
                ("HTMLSpanElement", 1, 15, 32),
                ("Bar", 2, 10, 25),
                ("(closure)", 1, 12, 12),
                ("(string)", 1, 8, 8),
                ("HTMLInputElement", 1, 7, 7),
                ("Text", 1, 5, 5),
                ("(system)", 1, 3, 3),
            ]
        );
        let tree = |name: &str, nodes, retained_size| DetachedTree {
            name: name.into(),
            nodes,
            retained_size,
        };
        assert_eq!(
            s.detached,
            DetachedDom {
                nodes: 4,
                trees: 2,
                retained_size: 79,
                examples: vec![
                    tree("Detached HTMLDivElement", 3, 72),
                    tree("HTMLInputElement", 1, 7)
                ],
            }
        );
        let text = s.to_text();
        assert!(text.contains("Foo ×2  50 B  63 B"), "{text}");
        assert!(
            text.contains("detached DOM: 4 node(s) in 2 tree(s), retaining 79 B"),
            "{text}"
        );
        let top = summarize(snapshot(&[("synthetic", "", 0, 0, &[])]).as_bytes(), 3).unwrap();
        assert!(top.constructors.is_empty() && top.to_text().contains("detached DOM: none"));
    }

    #[test]
    fn dominators_match_a_brute_force_check() {
        let mut seed = 7u64;
        let mut rand = |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        for _ in 0..300 {
            // Random graphs, all reachable, with back and cross edges.
            let n = 2 + rand(30);
            let mut out: Vec<Vec<u32>> = vec![vec![]; n];
            for i in 1..n {
                out[rand(i)].push(i as u32);
            }
            for _ in 0..rand(3 * n) {
                out[rand(n)].push(rand(n) as u32);
            }
            let (mut first_edge, mut target) = (vec![0u32], vec![]);
            for o in &out {
                target.extend(o);
                first_edge.push(target.len() as u32);
            }
            let (idom, _) = dominators(&first_edge, &target);
            // d dominates w when w is out of reach without d.
            let reach_without = |skip: usize| {
                let (mut seen, mut todo) = (vec![false; n], vec![0]);
                seen[0] = true;
                while let Some(x) = todo.pop() {
                    for &t in &out[x] {
                        if t as usize != skip && !seen[t as usize] {
                            seen[t as usize] = true;
                            todo.push(t as usize);
                        }
                    }
                }
                seen
            };
            let dominates: Vec<Vec<bool>> = (0..n)
                .map(|d| {
                    let reached = reach_without(d);
                    (0..n).map(|w| d == 0 || d == w || !reached[w]).collect()
                })
                .collect();
            for w in 1..n {
                let above: Vec<usize> = (0..n).filter(|&d| d != w && dominates[d][w]).collect();
                // The immediate one is dominated by all the others.
                let nearest = above
                    .iter()
                    .find(|&&d| above.iter().all(|&o| dominates[o][d]));
                assert_eq!(Some(idom[w] as usize), nearest.copied(), "{out:?}");
            }
        }
    }

    #[test]
    fn other_files_are_refused() {
        for text in [
            "{\"nodes\": [1, 2]}",
            "not json",
            &snapshot(&[("object", "A", 1, 0, &[("property", 1)])]),
        ] {
            let e = summarize(text.as_bytes(), 10).unwrap_err();
            assert!(
                matches!(&e, BrowserError::InvalidInput(m) if m.starts_with("not a V8 heap snapshot")),
                "{e}"
            );
        }
    }

    #[test]
    fn summarises_a_snapshot_node_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node.heapsnapshot");
        let script = "globalThis.keep = Array.from({length: 5000}, (_, i) => new (class Leak { constructor(){ this.i = i; } })()); require('v8').writeHeapSnapshot(process.argv[1])";
        let Ok(status) = std::process::Command::new("node")
            .args(["-e", script])
            .arg(&path)
            .status()
        else {
            eprintln!("skipping: node is not on PATH");
            return;
        };
        assert!(status.success());
        let s = summarize(std::fs::File::open(&path).unwrap(), 10).unwrap();
        let leak = s.constructors.iter().find(|c| c.name == "Leak");
        assert_eq!(leak.map(|c| c.count), Some(5000), "{}", s.to_text());
        let leak = leak.unwrap();
        assert!(leak.retained_size >= leak.self_size && s.total_size > leak.retained_size);
    }
}
