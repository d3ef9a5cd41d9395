//! The second stage of an API search: a configured reranker reorders the best candidates.
//!
//! The reranker here is a stand-in that prefers one endpoint, so what is checked is what the
//! explorer does with any reranker's scores: recall, order, limit, filters, failures. The
//! cross-encoder itself is tested in devlens-embed (`rerank.rs`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use devlens_core::Config;
use devlens_embed::{BoxFuture, EmbedError, LazyReranker, Reranker};
use devlens_openapi::{
    explorer::{ApiExplorer, SpecSelector},
    search::{SearchMode, SearchRequest},
};

/// Scores 1 for passages that hold `prefer`, 0 for the rest; remembers what it was asked.
#[derive(Debug)]
struct Prefers {
    prefer: &'static str,
    fail: bool,
    asked: Mutex<Vec<(String, Vec<String>)>>,
}

impl Prefers {
    fn new(prefer: &'static str) -> Arc<Self> {
        Arc::new(Self {
            prefer,
            fail: false,
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl Reranker for Prefers {
    fn model(&self) -> &str {
        "prefers"
    }

    fn score<'a>(
        &'a self,
        query: &'a str,
        passages: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        self.asked
            .lock()
            .unwrap()
            .push((query.to_string(), passages.to_vec()));
        Box::pin(async move {
            if self.fail {
                return Err(EmbedError::Inference("the model ran out of memory".into()));
            }
            Ok(passages
                .iter()
                .map(|p| f32::from(u8::from(p.contains(self.prefer))))
                .collect())
        })
    }
}

fn config(data: &Path, candidates: Option<usize>) -> Config {
    let mut config = Config::with_data_dir(data);
    config.file.embedding.rerank_candidates = candidates;
    config
}

fn petstore() -> SpecSelector {
    let path: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/swagger2-petstore.json");
    SpecSelector {
        project: None,
        spec: Some(path.display().to_string()),
    }
}

fn question(q: &str, limit: i64) -> SearchRequest {
    SearchRequest::new(
        Some(q.into()),
        None,
        None,
        Some(limit),
        Some(SearchMode::Keyword),
    )
    .unwrap()
}

fn ids(api_hits: &[devlens_openapi::search::SearchHit]) -> Vec<&str> {
    api_hits
        .iter()
        .map(|h| h.operation_id.as_deref().unwrap_or(""))
        .collect()
}

#[tokio::test]
async fn the_reranker_reorders_the_best_candidates_and_the_limit_applies_after() {
    let data = tempfile::tempdir().unwrap();
    let plain = ApiExplorer::new(config(data.path(), None));
    let first_stage = plain
        .search(&petstore(), &question("pet", 8))
        .await
        .unwrap();
    let first = ids(&first_stage.results);
    assert_ne!(
        first[0], "uploadFile",
        "the first stage ranks another first"
    );
    let upload_at = first.iter().position(|id| *id == "uploadFile").unwrap();
    assert!(upload_at >= 2, "{first:?}");

    let reranker = Prefers::new("OperationId: uploadFile");
    let api = ApiExplorer::new(config(data.path(), Some(upload_at + 1)))
        .with_reranker(Arc::new(LazyReranker::ready(reranker.clone())));
    let response = api.search(&petstore(), &question("pet", 2)).await.unwrap();
    assert_eq!(response.notice, None);
    // Two asked, but the reranker read `rerank_candidates` of them: deep enough to reach it.
    let asked = reranker.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0, "pet");
    assert_eq!(asked[0].1.len(), upload_at + 1);
    assert!(asked[0].1[0].starts_with(&format!(
        "{} {}",
        first_stage.results[0].method, first_stage.results[0].path
    )));
    // uploadFile first with the reranker's score; ties keep the first stage's order.
    assert_eq!(ids(&response.results), vec!["uploadFile", first[0]]);
    assert_eq!(response.results[0].score, 1.0);
    assert_eq!(response.results[1].score, 0.0);
}

#[tokio::test]
async fn filters_hold_and_listing_a_tag_is_not_reranked() {
    let data = tempfile::tempdir().unwrap();
    let reranker = Prefers::new("OperationId: uploadFile");
    let api = ApiExplorer::new(config(data.path(), None))
        .with_reranker(Arc::new(LazyReranker::ready(reranker.clone())));
    let mut request = question("pet", 5);
    request.method = Some("GET".into());
    request.details = true;
    let response = api.search(&petstore(), &request).await.unwrap();
    assert!(!response.results.is_empty());
    assert!(response.results.iter().all(|h| h.method == "GET"));
    assert!(response.results.iter().all(|h| h.details.is_some()));

    let listing = SearchRequest::new(None, Some("pet".into()), None, Some(50), None).unwrap();
    api.search(&petstore(), &listing).await.unwrap();
    assert_eq!(reranker.asked.lock().unwrap().len(), 1, "only the question");
}

#[tokio::test]
async fn a_failing_or_missing_reranker_leaves_the_first_stage_and_says_why() {
    let data = tempfile::tempdir().unwrap();
    let plain = ApiExplorer::new(config(data.path(), None))
        .search(&petstore(), &question("pet", 3))
        .await
        .unwrap();

    let failing = Arc::new(Prefers {
        prefer: "deletePet",
        fail: true,
        asked: Mutex::new(Vec::new()),
    });
    let api = ApiExplorer::new(config(data.path(), None))
        .with_reranker(Arc::new(LazyReranker::ready(failing)));
    let response = api.search(&petstore(), &question("pet", 3)).await.unwrap();
    assert_eq!(ids(&response.results), ids(&plain.results));
    let notice = response.notice.unwrap();
    assert!(notice.contains("not reranked"), "{notice}");
    assert!(notice.contains("ran out of memory"), "{notice}");
    assert!(notice.contains("reranker_dir"), "{notice}");

    // A candidate count out of range: the same answer, and the notice says what to set.
    let api = ApiExplorer::new(config(data.path(), Some(0)))
        .with_reranker(Arc::new(LazyReranker::ready(Prefers::new("deletePet"))));
    let response = api.search(&petstore(), &question("pet", 3)).await.unwrap();
    assert_eq!(ids(&response.results), ids(&plain.results));
    let notice = response.notice.unwrap();
    assert!(
        notice.contains("rerank_candidates must be between 1 and 100 (got 0)"),
        "{notice}"
    );

    // A folder that holds no model: the same answer, and the notice says what is missing.
    let empty = tempfile::tempdir().unwrap();
    let mut with_folder = config(data.path(), None);
    with_folder.file.embedding.reranker_dir = Some(empty.path().to_path_buf());
    let response = ApiExplorer::new(with_folder)
        .search(&petstore(), &question("pet", 3))
        .await
        .unwrap();
    assert_eq!(ids(&response.results), ids(&plain.results));
    let notice = response.notice.unwrap();
    assert!(notice.contains("missing config.json"), "{notice}");
}
