//! The answer cache: a repeated question is answered from memory, the same answer, fast; a
//! re-ingested version is never answered from the old docs.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use devlens_docs::{Docs, DocsSource, IngestRequest, QueryDocsInput};

fn ingest(docs: &Docs, rt: &tokio::runtime::Runtime, path: &std::path::Path) {
    let request = IngestRequest {
        id: "widgets".into(),
        source: DocsSource::Path(path.to_path_buf()),
        version: None,
        name: None,
        description: None,
    };
    rt.block_on(docs.ingest(&request, &|_, _, _| {})).unwrap();
}

#[test]
fn repeated_questions_come_from_the_cache_until_the_docs_change() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    std::fs::write(
        pages.join("a.md"),
        "# Widgets\n\n## Refresh\n\nWidgets refresh every second.\n",
    )
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let docs = Docs::with_embedder(&dir.path().join("docs.sqlite"), None).unwrap();
    ingest(&docs, &rt, &pages);
    let input = QueryDocsInput {
        library_id: "widgets".into(),
        query: "how often do widgets refresh".into(),
        version: None,
        max_results: None,
        include_code: None,
        context_limit: None,
    };
    let first = rt.block_on(docs.query(&input)).unwrap();
    let started = Instant::now();
    let second = rt.block_on(docs.query(&input)).unwrap();
    let cached = started.elapsed();
    assert_eq!(first, second);
    assert_eq!(docs.cache_stats().hits.load(Relaxed), 1);
    assert_eq!(docs.cache_stats().misses.load(Relaxed), 1);
    assert!(cached.as_millis() < 50, "{cached:?}");

    // Another limit is another question.
    let other = QueryDocsInput {
        context_limit: Some(2000),
        ..input.clone()
    };
    rt.block_on(docs.query(&other)).unwrap();
    assert_eq!(docs.cache_stats().misses.load(Relaxed), 2);

    std::fs::write(
        pages.join("a.md"),
        "# Widgets\n\n## Refresh\n\nWidgets refresh by server push now.\n",
    )
    .unwrap();
    ingest(&docs, &rt, &pages);
    let fresh = rt.block_on(docs.query(&input)).unwrap();
    assert!(fresh.context.contains("server push"), "{}", fresh.context);
    assert_eq!(docs.cache_stats().misses.load(Relaxed), 3);
}
