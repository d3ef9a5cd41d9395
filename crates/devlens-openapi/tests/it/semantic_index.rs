//! The semantic index's life cycle through `ApiExplorer`: build, reuse, staleness, model
//! mismatch, fallbacks, failed rebuilds, concurrent builds.
//!
//! The embedder here is a deterministic bag-of-words hasher, so these tests exercise the index
//! mechanics quickly; the real model runs in the CLI and MCP end-to-end tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use devlens_core::Config;
use devlens_embed::{BoxFuture, EmbedError, Embedder, Progress, Provider};
use devlens_openapi::{
    explorer::{ApiExplorer, ExplorerError, SpecSelector},
    search::{SearchMode, SearchRequest},
};

const DIMS: usize = 64;

/// Hashes words into buckets; similar wording, similar vectors.
#[derive(Debug)]
struct WordHash {
    model: &'static str,
    embedded: AtomicUsize,
    /// When set, document embedding fails (a provider going down mid-build).
    fail: bool,
    /// When set, document embedding waits here until released.
    gate: Option<Arc<Gate>>,
}

#[derive(Debug)]
struct Gate {
    entered: tokio::sync::Notify,
    release: tokio::sync::Semaphore,
}

impl WordHash {
    fn new(model: &'static str) -> Self {
        Self {
            model,
            embedded: AtomicUsize::new(0),
            fail: false,
            gate: None,
        }
    }

    fn vector(text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; DIMS];
        for word in text
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
        {
            let h = word
                .bytes()
                .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
            v[h as usize % DIMS] += 1.0;
        }
        devlens_embed::l2_normalize(&mut v);
        v
    }
}

impl Embedder for WordHash {
    fn provider(&self) -> Provider {
        Provider::Ollama
    }
    fn model(&self) -> &str {
        self.model
    }
    fn dims(&self) -> usize {
        DIMS
    }
    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            if let Some(gate) = &self.gate {
                gate.entered.notify_one();
                let _permit = gate.release.acquire().await;
            }
            if self.fail {
                return Err(EmbedError::Connection {
                    provider: Provider::Ollama,
                    url: "http://127.0.0.1:9".into(),
                    message: "connection refused".into(),
                    hint: "start Ollama".into(),
                });
            }
            self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
            progress(texts.len(), texts.len());
            Ok(texts.iter().map(|t| Self::vector(t)).collect())
        })
    }
    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        Box::pin(async move { Ok(Self::vector(text)) })
    }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/swagger2-petstore.json")
}

fn config(data: &Path) -> Config {
    Config::with_data_dir(data)
}

fn explorer(data: &Path, embedder: WordHash) -> (ApiExplorer, Arc<WordHash>) {
    let embedder = Arc::new(embedder);
    (
        ApiExplorer::with_embedder(config(data), embedder.clone()),
        embedder,
    )
}

fn spec(path: &Path) -> SpecSelector {
    SpecSelector {
        project: None,
        spec: Some(path.display().to_string()),
    }
}

fn question(q: &str, mode: SearchMode) -> SearchRequest {
    SearchRequest::new(Some(q.into()), None, None, Some(5), Some(mode)).unwrap()
}

#[tokio::test]
async fn without_an_index_semantic_search_falls_back_to_keywords_and_says_how_to_build() {
    let data = tempfile::tempdir().unwrap();
    let (api, _) = explorer(data.path(), WordHash::new("words-v1"));
    let target = spec(&fixture());

    let status = api.index_status(&target).await.unwrap();
    assert!(!status.indexed);
    assert!(status.notice.unwrap().contains("devlens api index --spec"));

    let response = api
        .search(&target, &question("delete a pet", SearchMode::Hybrid))
        .await
        .unwrap();
    assert_eq!(response.mode, SearchMode::Keyword);
    let notice = response.notice.unwrap();
    assert!(notice.contains("no semantic index"), "{notice}");
    assert!(notice.contains("keyword ranking only"), "{notice}");
    assert_eq!(
        response.results[0].operation_id.as_deref(),
        Some("deletePet")
    );
}

#[tokio::test]
async fn build_then_search_in_every_mode_with_strict_filters_and_details() {
    let data = tempfile::tempdir().unwrap();
    let (api, embedder) = explorer(data.path(), WordHash::new("words-v1"));
    let target = spec(&fixture());

    let report = api.build_index(&target, false, &|_, _| {}).await.unwrap();
    assert_eq!(report.embedded, 8);
    assert_eq!(report.reused, 0);
    assert!(report.status.indexed && !report.status.stale);
    assert_eq!(report.status.vector_count, 8);
    assert_eq!(report.status.dims, Some(DIMS));
    assert_eq!(report.status.model.as_deref(), Some("words-v1"));
    assert_eq!(embedder.embedded.load(Ordering::SeqCst), 8);

    for mode in [SearchMode::Semantic, SearchMode::Hybrid] {
        let response = api
            .search(&target, &question("uploads an image", mode))
            .await
            .unwrap();
        assert_eq!(response.mode, mode);
        assert_eq!(response.notice, None);
        assert_eq!(
            response.results[0].operation_id.as_deref(),
            Some("uploadFile")
        );
    }

    // Method is a strict filter applied after recall.
    let mut filtered = question("pet", SearchMode::Semantic);
    filtered.method = Some("DELETE".into());
    filtered.details = true;
    let response = api.search(&target, &filtered).await.unwrap();
    assert!(!response.results.is_empty());
    assert!(response.results.iter().all(|h| h.method == "DELETE"));
    let details = response.results[0].details.as_ref().expect("details");
    assert_eq!(details.operation_id.as_deref(), Some("deletePet"));

    // The index persists: a new explorer (a restart) finds it.
    let (again, _) = explorer(data.path(), WordHash::new("words-v1"));
    assert!(again.index_status(&target).await.unwrap().indexed);
}

#[tokio::test]
async fn rebuilding_embeds_only_changed_endpoints_and_staleness_is_reported() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("spec.json");
    std::fs::copy(fixture(), &file).unwrap();
    let target = spec(&file);
    let (api, embedder) = explorer(data.path(), WordHash::new("words-v1"));

    api.build_index(&target, false, &|_, _| {}).await.unwrap();
    let unchanged = api.build_index(&target, false, &|_, _| {}).await.unwrap();
    assert_eq!((unchanged.embedded, unchanged.reused), (0, 8));

    // Edit one summary: the index is stale until rebuilt, and searches say so.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("uploads an image", "attach a photo to a pet");
    std::fs::write(&file, text).unwrap();
    let status = api.index_status(&target).await.unwrap();
    assert!(status.stale);
    assert!(status.notice.unwrap().contains("re-index"));
    let response = api
        .search(&target, &question("attach a photo", SearchMode::Semantic))
        .await
        .unwrap();
    assert_eq!(response.mode, SearchMode::Semantic);
    assert!(response.notice.unwrap().contains("stale"));

    let before = embedder.embedded.load(Ordering::SeqCst);
    let rebuilt = api.build_index(&target, false, &|_, _| {}).await.unwrap();
    assert_eq!((rebuilt.embedded, rebuilt.reused), (1, 7));
    let forced = api.build_index(&target, true, &|_, _| {}).await.unwrap();
    assert_eq!((forced.embedded, forced.reused), (8, 0));
    assert_eq!(embedder.embedded.load(Ordering::SeqCst), before + 1 + 8);
    assert!(!rebuilt.status.stale);
}

#[tokio::test]
async fn an_index_of_another_model_is_not_used_and_the_user_is_told_to_rebuild() {
    let data = tempfile::tempdir().unwrap();
    let target = spec(&fixture());
    let (old, _) = explorer(data.path(), WordHash::new("words-v1"));
    old.build_index(&target, false, &|_, _| {}).await.unwrap();

    let (api, _) = explorer(data.path(), WordHash::new("words-v2"));
    let status = api.index_status(&target).await.unwrap();
    assert!(status.indexed);
    assert!(status.notice.unwrap().contains("words-v1"));
    let response = api
        .search(&target, &question("delete a pet", SearchMode::Semantic))
        .await
        .unwrap();
    assert_eq!(response.mode, SearchMode::Keyword);
    let notice = response.notice.unwrap();
    assert!(
        notice.contains("built with") && notice.contains("rebuild"),
        "{notice}"
    );

    // Rebuilding with the new model embeds everything again (no vector reuse across models).
    let report = api.build_index(&target, false, &|_, _| {}).await.unwrap();
    assert_eq!(report.embedded, 8);
}

#[tokio::test]
async fn a_failed_rebuild_keeps_the_old_index_answering() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("spec.json");
    std::fs::copy(fixture(), &file).unwrap();
    let target = spec(&file);
    let (api, _) = explorer(data.path(), WordHash::new("words-v1"));
    let built = api.build_index(&target, false, &|_, _| {}).await.unwrap();

    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("List pets", "Browse every pet");
    std::fs::write(&file, text).unwrap();
    let mut failing = WordHash::new("words-v1");
    failing.fail = true;
    let (broken, _) = explorer(data.path(), failing);
    let error = broken
        .build_index(&target, false, &|_, _| {})
        .await
        .unwrap_err();
    assert!(error.to_string().contains("cannot reach"), "{error}");

    let status = api.index_status(&target).await.unwrap();
    assert_eq!(status.built_at, built.status.built_at);
    assert_eq!(status.vector_count, 8);
    let response = api
        .search(&target, &question("delete a pet", SearchMode::Semantic))
        .await
        .unwrap();
    assert_eq!(response.mode, SearchMode::Semantic);
}

#[tokio::test]
async fn a_second_build_of_the_same_index_is_refused_while_the_first_runs() {
    let data = tempfile::tempdir().unwrap();
    let target = spec(&fixture());
    let gate = Arc::new(Gate {
        entered: tokio::sync::Notify::new(),
        release: tokio::sync::Semaphore::new(0),
    });
    let mut gated = WordHash::new("words-v1");
    gated.gate = Some(gate.clone());
    let (api, _) = explorer(data.path(), gated);
    let api = Arc::new(api);

    let first = {
        let api = api.clone();
        let target = target.clone();
        tokio::spawn(async move { api.build_index(&target, false, &|_, _| {}).await })
    };
    gate.entered.notified().await;
    let second = api
        .build_index(&target, false, &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(second, ExplorerError::Busy(_)), "{second}");
    assert!(second.to_string().contains("already being built"));

    gate.release.add_permits(1);
    let report = first.await.unwrap().unwrap();
    assert_eq!(report.embedded, 8);
}
