//! Memory against a real page with known leaks: the page's metrics, and a heap snapshot
//! summary that names the class with many instances and the detached DOM it keeps.

use crate::common;

use common::{Env, with_browser};
use devlens_browser::audit::memory::MemoryOptions;

#[test]
fn metrics_and_a_heap_snapshot_find_the_leaks() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/leaky.html").await;
        let quick = tab
            .memory(&MemoryOptions::default())
            .await
            .expect("metrics");
        let text = quick.to_text();
        assert!(quick.js_heap_used_bytes > 100_000, "{text}");
        assert!(
            quick.js_heap_total_bytes >= quick.js_heap_used_bytes,
            "{text}"
        );
        assert!(
            quick.dom_nodes > 250,
            "the detached nodes count too: {text}"
        );
        assert!(quick.event_listeners >= 1, "{text}");
        assert!(
            quick.heap.is_none() && text.contains("heapSnapshot: true"),
            "{text}"
        );

        let dir = tempfile::tempdir().expect("dir");
        let saved = dir.path().join("snap/page.heapsnapshot");
        let full = tab
            .memory(&MemoryOptions {
                heap_snapshot: true,
                top: Some(30),
                save_to: Some(saved.clone()),
            })
            .await
            .expect("snapshot");
        let text = full.to_text();
        let heap = full.heap.as_ref().expect("a heap summary");
        let lines = heap
            .constructors
            .iter()
            .find(|c| c.name == "CartLine")
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(lines.count, 3000, "{text}");
        assert!(heap.detached.nodes >= 250, "{text}");
        assert_eq!(heap.detached.trees, 2, "{text}");
        // Chrome names a detached tree by its root element: `<section>`, `<ul id="list">`.
        assert!(
            heap.detached
                .examples
                .iter()
                .any(|t| t.name.contains("section") && t.nodes == 201),
            "{text}"
        );
        assert!(
            heap.detached
                .examples
                .iter()
                .any(|t| t.name.contains("list") && t.nodes == 51),
            "{text}"
        );
        assert!(std::fs::metadata(&saved).expect("saved").len() > 100_000);
        assert!(
            text.len() < 3_500,
            "compact even with 30 constructors: {}\n{text}",
            text.len()
        );
    });
}
