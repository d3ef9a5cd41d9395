//! Library docs on a team server's PostgreSQL (pgvector): the same answers as the embedded
//! store, and two servers on one database serving each other's ingests, re-ingests and
//! removals at once. Against a real PostgreSQL this test starts.

use crate::postgres;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use devlens_core::Config;
use devlens_docs::{Docs, DocsSource, IngestRequest, PostgresDocsStore, QueryDocsInput};
use devlens_embed::{Embedder, LazyEmbedder, LocalBert};
use devlens_search::postgres::ServerDatabase;

/// The local model, or `None` (with a notice) when the test data is missing and not required.
fn test_model() -> Option<Arc<dyn Embedder>> {
    let dir = std::env::var_os("DEVLENS_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.testdata/models/all-MiniLM-L6-v2")
        });
    if !dir.join("model.safetensors").is_file() {
        assert!(
            std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() != Ok("1"),
            "the local model is missing at {}: run scripts/fetch-testdata",
            dir.display()
        );
        eprintln!("SKIPPED: no local model at {}", dir.display());
        return None;
    }
    Some(Arc::new(
        LocalBert::load_with(
            &dir,
            devlens_embed::DEFAULT_LOCAL_MODEL,
            32,
            // The engine users get by default, chosen as devlens chooses it: ONNX Runtime where
            // scripts/test provides it (several times faster than candle here), else candle.
            // Both engines are tested as engines in devlens-embed.
            &devlens_embed::EngineOptions::resolve(
                &devlens_core::EmbeddingSettings::default(),
                // No data dir here: the model's folder stands in (it holds no runtime).
                &devlens_core::DataDir::at(&dir),
                &|key| std::env::var(key).ok(),
            )
            .unwrap(),
        )
        .unwrap(),
    ))
}

fn docs_on(url: &str, model: &Arc<dyn Embedder>) -> Docs {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::with_data_dir(dir.path());
    Docs::with_store(
        Arc::new(PostgresDocsStore::new(ServerDatabase::open(url))),
        &config,
        Arc::new(LazyEmbedder::ready(Ok(Arc::clone(model)))),
    )
    .unwrap()
}

fn pages(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    let pages = dir.join("pages");
    let _ = std::fs::remove_dir_all(&pages);
    std::fs::create_dir_all(&pages).unwrap();
    for (name, text) in files {
        std::fs::write(pages.join(name), text).unwrap();
    }
    pages
}

async fn ingest(docs: &Docs, id: &str, path: &Path) {
    let request = IngestRequest {
        id: id.into(),
        source: DocsSource::Path(path.to_path_buf()),
        version: None,
        name: None,
        description: None,
    };
    docs.ingest(&request, &|_, _, _| {}).await.unwrap();
}

fn question(library: &str, query: &str) -> QueryDocsInput {
    QueryDocsInput {
        library_id: library.into(),
        query: query.into(),
        version: None,
        max_results: None,
        include_code: None,
        context_limit: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_docs_answer_on_postgres_as_they_do_embedded() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let Some(model) = test_model() else {
        return;
    };
    let testdata = std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"));
    let node = testdata.join("nodejs-doc/md");
    if !node.is_dir() {
        assert!(
            std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() != Ok("1"),
            "nodejs-doc is missing: run scripts/fetch-testdata"
        );
        return;
    }
    // A slice of the Node.js docs: enough sections to rank, quick to embed.
    let dir = tempfile::tempdir().unwrap();
    let slice = dir.path().join("node");
    std::fs::create_dir(&slice).unwrap();
    for file in ["fs.md", "path.md", "events.md", "timers.md"] {
        std::fs::copy(node.join(file), slice.join(file)).unwrap();
    }
    let embedded =
        Docs::with_embedder(&dir.path().join("docs.sqlite"), Some(Arc::clone(&model))).unwrap();
    let server = docs_on(&pg.database(), &model);
    ingest(&embedded, "node", &slice).await;
    ingest(&server, "node", &slice).await;
    let listed = server.list().unwrap();
    assert_eq!(listed.libraries.len(), 1);
    assert_eq!(
        listed.libraries[0].snippets,
        embedded.list().unwrap().libraries[0].snippets
    );
    for query in [
        "read a whole file into a string",
        "join two path segments",
        "run a callback once after a delay",
        "listen for an event only one time",
        "watch a directory for changes",
    ] {
        let a = embedded.query(&question("node", query)).await.unwrap();
        let b = server.query(&question("node", query)).await.unwrap();
        assert_eq!(a.results, b.results, "{query}");
        assert_eq!(a.context, b.context, "{query}");
        assert!(b.notice.is_none(), "{:?}", b.notice);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_ingests_reingests_and_removals() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let Some(model) = test_model() else {
        return;
    };
    let url = pg.database();
    let a = docs_on(&url, &model);
    let b = docs_on(&url, &model);
    let dir = tempfile::tempdir().unwrap();
    let v1 = pages(
        dir.path(),
        &[(
            "widgets.md",
            "# Widgets\n\n## Refresh\n\nWidgets refresh every second.\n\n## Colours\n\n\
             Widgets are blue unless `tint` is set.\n",
        )],
    );
    ingest(&a, "widgets", &v1).await;
    let first = b
        .query(&question("widgets", "how often do widgets refresh"))
        .await
        .unwrap();
    assert!(first.context.contains("every second"), "{}", first.context);

    // A re-ingest on A: B's next answer (cached or not) comes from the new docs.
    let v2 = pages(
        dir.path(),
        &[(
            "widgets.md",
            "# Widgets\n\n## Refresh\n\nWidgets refresh every five minutes.\n",
        )],
    );
    ingest(&a, "widgets", &v2).await;
    let second = b
        .query(&question("widgets", "how often do widgets refresh"))
        .await
        .unwrap();
    assert!(
        second.context.contains("five minutes"),
        "{}",
        second.context
    );
    assert!(!second.context.contains("every second"));

    // A removal on B: A no longer knows the library.
    assert!(b.remove("widgets", None).unwrap());
    let err = a
        .query(&question("widgets", "refresh"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("widgets"), "{err}");
    assert!(a.list().unwrap().libraries.is_empty());
}
