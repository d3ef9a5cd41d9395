//! Snapshot refs: the short names (`e12`) a snapshot gives the elements it shows, and the nodes
//! they stand for, so an action can name an element by ref.

use std::collections::HashMap;

/// Where a node lives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) enum Realm {
    /// The tab's session: its document and the iframes rendered in its process.
    #[default]
    Page,
    /// A cross-site iframe with its own target (its target id is its frame id).
    Remote { target_id: String },
}

/// Refs a document may hand out before the map starts over.
const MAX_REFS: usize = 20_000;

/// A DOM node a ref names: the session that reaches it and its backend node id.
pub(crate) type NodeKey = (Realm, i64);

/// Ref ↔ node of the current document (and its iframes).
#[derive(Debug, Default)]
pub(crate) struct RefMap {
    pub(crate) by_node: HashMap<NodeKey, u32>,
    pub(crate) by_ref: HashMap<u32, NodeKey>,
    pub(crate) next: u32,
}

impl RefMap {
    pub(crate) fn clear(&mut self) {
        self.by_node.clear();
        self.by_ref.clear();
    }

    pub(crate) fn ref_for(&mut self, node: NodeKey) -> String {
        if self.by_ref.len() >= MAX_REFS {
            self.clear();
        }
        let n = match self.by_node.get(&node) {
            Some(n) => *n,
            None => {
                self.next += 1;
                self.by_node.insert(node.clone(), self.next);
                self.by_ref.insert(self.next, node);
                self.next
            }
        };
        format!("e{n}")
    }

    pub(crate) fn node(&self, reference: &str) -> Option<NodeKey> {
        let n: u32 = reference.trim().strip_prefix('e')?.parse().ok()?;
        self.by_ref.get(&n).cloned()
    }
}
