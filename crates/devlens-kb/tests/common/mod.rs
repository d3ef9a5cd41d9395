//! Helpers of the knowledge-base tests: the test model, a knowledge base in a temporary folder,
//! and the golden corpus.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use devlens_core::Config;
use devlens_embed::{Embedder, LocalBert};
use devlens_kb::KnowledgeBase;

/// The all-MiniLM-L6-v2 folder: `DEVLENS_MODEL_DIR`, else `.testdata/` in the workspace. `None`
/// (with a notice) when absent, unless `DEVLENS_REQUIRE_TESTDATA=1` makes that a failure.
pub fn test_model() -> Option<Arc<dyn Embedder>> {
    let dir = std::env::var_os("DEVLENS_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.testdata/models/all-MiniLM-L6-v2")
        });
    if !dir.join("model.safetensors").is_file() {
        let setup = format!(
            "the local model test data is missing at {}: run scripts/fetch-testdata",
            dir.display()
        );
        assert!(
            std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() != Ok("1"),
            "{setup}"
        );
        eprintln!("SKIPPED: {setup}");
        return None;
    }
    Some(Arc::new(
        LocalBert::load(&dir, devlens_embed::DEFAULT_LOCAL_MODEL, 32)
            .expect("the test model loads"),
    ))
}

/// A knowledge base in a fresh folder, with `embedder` (or none, for `Err(reason)`).
pub fn kb_in(
    dir: &tempfile::TempDir,
    embedder: Result<Arc<dyn Embedder>, String>,
) -> KnowledgeBase {
    let config = Config::with_data_dir(dir.path());
    KnowledgeBase::open(&config)
        .unwrap()
        .with_embedder(embedder)
}

pub fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

pub fn golden_solutions() -> String {
    std::fs::read_to_string(golden_dir().join("solutions.json")).unwrap()
}

pub fn golden_queries() -> String {
    std::fs::read_to_string(golden_dir().join("queries.tsv")).unwrap()
}
