//! A V8 heap snapshot (`.heapsnapshot`, as Chrome's `HeapProfiler` and Node's
//! `v8.writeHeapSnapshot` write it) reduced to what finds a leak: the constructors holding the
//! most memory and the detached DOM trees. Read from a file as a stream of its flat arrays, so
//! the snapshot's text is never held beside the parsed graph.

use std::collections::HashMap;
use std::io::Read;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Deserialize)]
struct SnapshotFile {
    snapshot: Header,
    #[serde(default)]
    nodes: Vec<u64>,
    #[serde(default)]
    edges: Vec<u64>,
    #[serde(default)]
    strings: Vec<String>,
}

#[derive(Deserialize)]
struct Header {
    meta: Meta,
}

#[derive(Deserialize)]
struct Meta {
    node_fields: Vec<String>,
    /// The first entry lists the node type names; the others describe the other fields.
    node_types: Vec<Value>,
    edge_fields: Vec<String>,
    edge_types: Vec<Value>,
}

/// A constructor and the memory its objects hold.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConstructorSummary {
    /// `Leak`, `(closure)`, `(string)`, `HTMLDivElement` …
    pub name: String,
    pub count: usize,
    /// Bytes of the objects themselves.
    pub self_bytes: u64,
    /// Bytes freed if all of them went (nested objects of the same constructor counted once).
    pub retained_bytes: u64,
}

/// A detached DOM tree: elements no document shows that JavaScript still holds.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetachedTree {
    /// The tree's root, e.g. `Detached HTMLDivElement`.
    pub root: String,
    pub nodes: usize,
    pub retained_bytes: u64,
}

/// A heap snapshot summarised.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeapSummary {
    pub objects: usize,
    pub total_bytes: u64,
    /// By retained size, most first.
    pub constructors: Vec<ConstructorSummary>,
    pub detached_nodes: usize,
    /// The largest detached DOM trees.
    pub detached_trees: Vec<DetachedTree>,
    pub detached_tree_count: usize,
}

impl HeapSummary {
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!(
            "heap snapshot: {} objects, {}",
            self.objects,
            crate::text::bytes(self.total_bytes)
        );
        out.push_str("\nby retained size:");
        for c in &self.constructors {
            let _ = write!(
                out,
                "\n  {}  ×{}  {} retained ({} self)",
                c.name,
                c.count,
                crate::text::bytes(c.retained_bytes),
                crate::text::bytes(c.self_bytes)
            );
        }
        if self.detached_nodes == 0 {
            out.push_str("\nno detached DOM");
        } else {
            let _ = write!(
                out,
                "\ndetached DOM: {} node(s) in {} tree(s)",
                self.detached_nodes, self.detached_tree_count
            );
            for t in &self.detached_trees {
                let _ = write!(
                    out,
                    "\n  {} ({} nodes, {} retained)",
                    t.root,
                    t.nodes,
                    crate::text::bytes(t.retained_bytes)
                );
            }
        }
        out
    }
}

fn type_names(types: &[Value]) -> Vec<String> {
    types
        .first()
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// DevTools' summary groups: objects by constructor, the rest by kind.
fn class_of(kind: &str, name: &str) -> String {
    match kind {
        "object" | "native" => name.to_string(),
        // The root, the GC roots and the handle lists hold everything: not a finding.
        "synthetic" => String::new(),
        "closure" => "(closure)".into(),
        "string" | "concatenated string" | "sliced string" => "(string)".into(),
        "array" => "(array)".into(),
        "code" => "(compiled code)".into(),
        "hidden" => "(system)".into(),
        "regexp" => "(regexp)".into(),
        "number" | "heap number" => "(number)".into(),
        "object shape" => "(object shape)".into(),
        other => format!("({other})"),
    }
}

/// Reads and summarises a snapshot: the `top` constructors and detached trees.
pub(crate) fn summarize(reader: impl Read, top: usize) -> Result<HeapSummary, String> {
    let file: SnapshotFile = serde_json::from_reader(std::io::BufReader::new(reader))
        .map_err(|e| format!("not a V8 heap snapshot: {e}"))?;
    let meta = &file.snapshot.meta;
    let field = |fields: &[String], name: &str| fields.iter().position(|f| f == name);
    let nf = meta.node_fields.len();
    let ef = meta.edge_fields.len();
    let (Some(n_type), Some(n_name), Some(n_size), Some(n_edges)) = (
        field(&meta.node_fields, "type"),
        field(&meta.node_fields, "name"),
        field(&meta.node_fields, "self_size"),
        field(&meta.node_fields, "edge_count"),
    ) else {
        return Err("the snapshot's node fields lack type, name, self_size or edge_count".into());
    };
    let n_detached = field(&meta.node_fields, "detachedness");
    let (Some(e_type), Some(e_to)) = (
        field(&meta.edge_fields, "type"),
        field(&meta.edge_fields, "to_node"),
    ) else {
        return Err("the snapshot's edge fields lack type or to_node".into());
    };
    if nf == 0 || ef == 0 || !file.nodes.len().is_multiple_of(nf) {
        return Err("the snapshot's node array does not match its fields".into());
    }
    let node_types = type_names(&meta.node_types);
    let edge_types = type_names(&meta.edge_types);
    let weak = edge_types
        .iter()
        .position(|t| t == "weak")
        .map(|w| w as u64);
    let count = file.nodes.len() / nf;
    let node = |i: usize, f: usize| file.nodes[i * nf + f];
    let string = |i: u64| file.strings.get(i as usize).map_or("", String::as_str);

    // Successors (strong edges) of each node, as a compact adjacency.
    let mut first_edge = Vec::with_capacity(count + 1);
    let mut e = 0usize;
    for i in 0..count {
        first_edge.push(e);
        e += node(i, n_edges) as usize;
    }
    first_edge.push(e);
    if e * ef > file.edges.len() {
        return Err("the snapshot's edge array is shorter than its nodes say".into());
    }
    let successors = |i: usize| {
        (first_edge[i]..first_edge[i + 1]).filter_map(|k| {
            let ty = file.edges[k * ef + e_type];
            if Some(ty) == weak {
                return None;
            }
            let to = file.edges[k * ef + e_to] as usize / nf;
            (to < count).then_some(to)
        })
    };

    // Reverse post-order from the root (node 0), iteratively.
    const UNSEEN: usize = usize::MAX;
    let mut order: Vec<usize> = Vec::with_capacity(count);
    let mut rpo_index = vec![UNSEEN; count];
    let mut visited = vec![false; count];
    let mut stack: Vec<(usize, usize)> = vec![(0, first_edge.first().copied().unwrap_or(0))];
    if count > 0 {
        visited[0] = true;
    }
    while let Some(&mut (v, ref mut next)) = stack.last_mut() {
        let end = first_edge[v + 1];
        let mut pushed = false;
        while *next < end {
            let k = *next;
            *next += 1;
            if Some(file.edges[k * ef + e_type]) == weak {
                continue;
            }
            let to = file.edges[k * ef + e_to] as usize / nf;
            if to < count && !visited[to] {
                visited[to] = true;
                stack.push((to, first_edge[to]));
                pushed = true;
                break;
            }
        }
        if !pushed {
            order.push(v);
            stack.pop();
        }
    }
    order.reverse();
    for (i, &v) in order.iter().enumerate() {
        rpo_index[v] = i;
    }
    // Predecessors among reachable nodes.
    let mut pred_count = vec![0usize; count + 1];
    for &v in &order {
        for to in successors(v) {
            pred_count[to] += 1;
        }
    }
    let mut pred_start = vec![0usize; count + 1];
    for i in 0..count {
        pred_start[i + 1] = pred_start[i] + pred_count[i];
    }
    let mut fill = pred_start.clone();
    let mut preds = vec![0usize; pred_start[count]];
    for &v in &order {
        for to in successors(v) {
            preds[fill[to]] = v;
            fill[to] += 1;
        }
    }
    // Immediate dominators (Cooper, Harvey, Kennedy), indexed by reverse post-order.
    let n = order.len();
    let mut idom = vec![UNSEEN; n];
    if n > 0 {
        idom[0] = 0;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..n {
            let v = order[b];
            let mut new = UNSEEN;
            for &p in &preds[pred_start[v]..pred_start[v + 1]] {
                let p = rpo_index[p];
                if p == UNSEEN || idom[p] == UNSEEN {
                    continue;
                }
                new = if new == UNSEEN {
                    p
                } else {
                    let (mut a, mut b2) = (p, new);
                    while a != b2 {
                        while a > b2 {
                            a = idom[a];
                        }
                        while b2 > a {
                            b2 = idom[b2];
                        }
                    }
                    a
                };
            }
            if new != UNSEEN && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    // Retained sizes: each node adds its own to its dominator, deepest first.
    let mut retained: Vec<u64> = order.iter().map(|&v| node(v, n_size)).collect();
    for b in (1..n).rev() {
        let d = idom[b];
        if d != UNSEEN && d != b {
            retained[d] += retained[b];
        }
    }

    let class: Vec<String> = order
        .iter()
        .map(|&v| {
            let kind = node_types
                .get(node(v, n_type) as usize)
                .map_or("", String::as_str);
            class_of(kind, string(node(v, n_name)))
        })
        .collect();
    let detached: Vec<bool> = order
        .iter()
        .map(|&v| {
            n_detached.is_some_and(|f| node(v, f) == 2)
                || string(node(v, n_name)).starts_with("Detached ")
        })
        .collect();

    // Walk the dominator tree: a constructor's retained size counts only its outermost
    // objects, a detached tree is a detached node with no detached node above it.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for b in 1..n {
        if idom[b] != UNSEEN {
            children[idom[b]].push(b);
        }
    }
    let mut by_class: HashMap<&str, (usize, u64, u64)> = HashMap::new();
    let mut open: HashMap<&str, usize> = HashMap::new();
    let mut trees: Vec<DetachedTree> = Vec::new();
    let mut detached_nodes = 0;
    let mut tree_stack: Vec<usize> = Vec::new();
    // (node, entering)
    let mut walk: Vec<(usize, bool)> = if n > 0 { vec![(0, true)] } else { Vec::new() };
    let mut total = 0u64;
    while let Some((b, entering)) = walk.pop() {
        let c = class[b].as_str();
        if entering {
            let own = node(order[b], n_size);
            total += own;
            let entry = by_class.entry(c).or_default();
            entry.0 += 1;
            entry.1 += own;
            let depth = open.entry(c).or_default();
            if *depth == 0 {
                entry.2 += retained[b];
            }
            *depth += 1;
            if detached[b] {
                detached_nodes += 1;
                match tree_stack.last() {
                    Some(&t) => trees[t].nodes += 1,
                    None => {
                        trees.push(DetachedTree {
                            root: c.to_string(),
                            nodes: 1,
                            retained_bytes: retained[b],
                        });
                    }
                }
                if tree_stack.is_empty() {
                    tree_stack.push(trees.len() - 1);
                } else {
                    tree_stack.push(tree_stack[tree_stack.len() - 1]);
                }
            }
            walk.push((b, false));
            for &child in children[b].iter().rev() {
                walk.push((child, true));
            }
        } else {
            if let Some(depth) = open.get_mut(c) {
                *depth -= 1;
            }
            if detached[b] {
                tree_stack.pop();
            }
        }
    }
    let mut constructors: Vec<ConstructorSummary> = by_class
        .into_iter()
        .filter(|(name, _)| !name.is_empty() && *name != "(system)")
        .map(
            |(name, (count, self_bytes, retained_bytes))| ConstructorSummary {
                name: name.to_string(),
                count,
                self_bytes,
                retained_bytes,
            },
        )
        .collect();
    constructors.sort_by(|a, b| {
        b.retained_bytes
            .cmp(&a.retained_bytes)
            .then(a.name.cmp(&b.name))
    });
    constructors.truncate(top);
    let detached_tree_count = trees.len();
    trees.sort_by_key(|t| std::cmp::Reverse(t.retained_bytes));
    trees.truncate(5);
    Ok(HeapSummary {
        objects: n,
        total_bytes: total,
        constructors,
        detached_nodes,
        detached_trees: trees,
        detached_tree_count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// root → a (Leak, 10) → b (Leak, 20) → c (Detached HTMLDivElement, 30) → d (Detached
    /// HTMLSpanElement, 5); root -weak-> e (Big, 1000); root → f (Leak, 7).
    fn snapshot() -> String {
        let types = json!([
            ["hidden", "object", "native"],
            "string",
            "number",
            "number",
            "number"
        ]);
        let edge_types = json!([["element", "property", "weak"], "string_or_number", "node"]);
        // name indexes: 0 "", 1 Leak, 2 Detached HTMLDivElement, 3 Detached HTMLSpanElement, 4 Big, 5 x
        let nf = 5;
        let node = |ty: u64, name: u64, size: u64, edges: u64| vec![ty, name, 0, size, edges];
        let mut nodes = Vec::new();
        nodes.extend(node(0, 0, 0, 3)); // 0 root
        nodes.extend(node(1, 1, 10, 1)); // 1 a
        nodes.extend(node(1, 1, 20, 1)); // 2 b
        nodes.extend(node(2, 2, 30, 1)); // 3 c
        nodes.extend(node(2, 3, 5, 0)); // 4 d
        nodes.extend(node(1, 4, 1000, 0)); // 5 e
        nodes.extend(node(1, 1, 7, 0)); // 6 f
        let edge = |ty: u64, to: u64| vec![ty, 5, to * nf];
        let mut edges = Vec::new();
        edges.extend(edge(1, 1));
        edges.extend(edge(2, 5));
        edges.extend(edge(1, 6));
        edges.extend(edge(1, 2));
        edges.extend(edge(1, 3));
        edges.extend(edge(1, 4));
        json!({
            "snapshot": { "meta": {
                "node_fields": ["type", "name", "id", "self_size", "edge_count"],
                "node_types": types,
                "edge_fields": ["type", "name_or_index", "to_node"],
                "edge_types": edge_types,
            }, "node_count": 7, "edge_count": 6 },
            "nodes": nodes,
            "edges": edges,
            "locations": [],
            "strings": ["", "Leak", "Detached HTMLDivElement", "Detached HTMLSpanElement", "Big", "x"],
        })
        .to_string()
    }

    #[test]
    fn retained_sizes_follow_dominators() {
        let s = summarize(snapshot().as_bytes(), 10).expect("summary");
        // The weakly held object is not reachable through strong edges.
        assert_eq!(s.objects, 6);
        let leak = s
            .constructors
            .iter()
            .find(|c| c.name == "Leak")
            .expect("Leak");
        assert_eq!(leak.count, 3);
        assert_eq!(leak.self_bytes, 37);
        // a retains b, c, d (65); b nested inside a counts once; f adds 7.
        assert_eq!(leak.retained_bytes, 65 + 7);
        assert_eq!(s.constructors[0].name, "Leak");
        assert_eq!(s.detached_nodes, 2);
        assert_eq!(s.detached_tree_count, 1);
        assert_eq!(s.detached_trees[0].root, "Detached HTMLDivElement");
        assert_eq!(s.detached_trees[0].nodes, 2);
        assert_eq!(s.detached_trees[0].retained_bytes, 35);
        let text = s.to_text();
        assert!(
            text.contains("detached DOM: 2 node(s) in 1 tree(s)"),
            "{text}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_snapshot_is_refused() {
        let err = summarize(&b"{\"traceEvents\": []}"[..], 10).expect_err("not a snapshot");
        assert!(err.contains("not a V8 heap snapshot"), "{err}");
    }

    /// Node writes the same format Chrome does.
    #[test]
    fn a_real_snapshot_from_node() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("node.heapsnapshot");
        let script = "class Leak { constructor(i) { this.i = i; this.pad = new Array(8).fill(i); } } \
            globalThis.keep = Array.from({ length: 5000 }, (_, i) => new Leak(i)); \
            require('v8').writeHeapSnapshot(process.argv[1]);";
        let Ok(status) = std::process::Command::new("node")
            .args(["-e", script, &path.display().to_string()])
            .status()
        else {
            eprintln!("skipping: node is not installed");
            return;
        };
        assert!(status.success());
        let file = std::fs::File::open(&path).expect("snapshot");
        let s = summarize(file, 20).expect("summary");
        let leak = s
            .constructors
            .iter()
            .find(|c| c.name == "Leak")
            .unwrap_or_else(|| panic!("Leak among the top constructors:\n{}", s.to_text()));
        assert_eq!(leak.count, 5000);
        assert!(leak.retained_bytes > leak.self_bytes, "{}", s.to_text());
    }
}
