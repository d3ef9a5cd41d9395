//! What a user of the knowledge base notices: saving, finding, changing and removing solutions;
//! clear errors for bad input; nothing lost when something fails; search that degrades to
//! keywords (and says so) without a model; a re-embedding that resumes where it stopped.

use crate::common;

use devlens_core::Report;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use devlens_embed::{BoxFuture, EmbedError, Embedder, Progress, Provider};
use devlens_kb::{
    AskRequest, KbError, KnowledgeBase, NewSolution, SearchMode, SearchOptions, SolutionPatch,
};

fn new(title: &str, text: &str, tags: &[&str]) -> NewSolution {
    NewSolution {
        title: title.into(),
        url: Some(format!("https://example.com/{}", title.len())),
        text: text.into(),
        summary: None,
        tags: tags.iter().map(|t| t.to_string()).collect(),
    }
}

async fn seeded(kb: &KnowledgeBase) -> Vec<String> {
    let mut ids = Vec::new();
    for s in [
        new(
            "Fix CORS preflight on PUT",
            "The browser sends an OPTIONS preflight before a PUT with a JSON body. Answer it with \
             Access-Control-Allow-Methods: PUT and Access-Control-Allow-Headers: content-type.",
            &["cors", "http"],
        ),
        new(
            "CSS grid items overflow their track",
            "Grid items default to min-width: auto, so long words push the track wider. Set \
             min-width: 0 on the item or use minmax(0, 1fr) for the column.",
            &["css", "layout"],
        ),
        new(
            "Jest fake timers and promises",
            "With jest.useFakeTimers(), awaited promises inside setTimeout callbacks never \
             resolve until you call await jest.runAllTimersAsync().",
            &["testing", "jest"],
        ),
    ] {
        ids.push(kb.add(s).await.unwrap().solution.id);
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_find_change_and_remove() {
    let Some(model) = common::test_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Ok(model));
    let ids = seeded(&kb).await;

    let found = kb
        .search(
            "my grid column grows when a word is very long",
            &SearchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(found.mode, SearchMode::Semantic);
    assert_eq!(found.results[0].id, ids[1], "{found:?}");
    assert!(found.results[0].similarity.unwrap() > 0.3);
    assert!(found.results[0].excerpt.contains("min-width"));

    // A question nothing answers: no results, and a reason.
    let none = kb
        .search("best pasta recipe for a crowd", &SearchOptions::default())
        .await
        .unwrap();
    assert!(none.results.is_empty());
    assert!(
        none.notice.as_deref().unwrap().contains("close enough"),
        "{none:?}"
    );

    // Keyword mode finds words; hybrid agrees on the obvious one.
    for mode in [SearchMode::Keyword, SearchMode::Hybrid] {
        let r = kb
            .search(
                "jest fake timers",
                &SearchOptions {
                    mode: Some(mode),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(r.mode, mode);
        assert_eq!(r.results[0].id, ids[2]);
    }

    // Changing the URL keeps the vectors; changing the text re-embeds.
    let saved = kb
        .update(
            &ids[0],
            SolutionPatch {
                url: Some(None),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(saved.solution.url, None);
    assert_eq!(saved.chunks, 0);
    let saved = kb
        .update(
            &ids[0],
            SolutionPatch {
                text: Some(
                    "Preflight: OPTIONS must list PUT in Access-Control-Allow-Methods.".into(),
                ),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(saved.embedded && saved.chunks == 1);
    assert!(saved.solution.updated_at >= saved.solution.created_at);
    assert_eq!(kb.get(&ids[0]).unwrap().text, saved.solution.text);

    let listed: Vec<String> = kb
        .list()
        .unwrap()
        .solutions
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(listed.len(), 3);

    let removed = kb.delete(&ids[2]).unwrap();
    assert_eq!(removed.title, "Jest fake timers and promises");
    assert!(matches!(
        kb.get(&ids[2]),
        Err(KbError::UnknownSolution { .. })
    ));
    assert!(matches!(
        kb.delete(&ids[2]),
        Err(KbError::UnknownSolution { .. })
    ));
    let r = kb
        .search(
            "jest fake timers",
            &SearchOptions {
                mode: Some(SearchMode::Keyword),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(r.results.iter().all(|h| h.id != ids[2]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Err("no model in this test".into()));
    let id = kb
        .add(new("Title", "Some text", &[]))
        .await
        .unwrap()
        .solution
        .id;
    let message = |e: KbError| e.to_string();
    let err = message(kb.add(new("", "text", &[])).await.unwrap_err());
    assert!(err.contains("title is empty"), "{err}");
    let err = message(kb.add(new("t", "  \n ", &[])).await.unwrap_err());
    assert!(err.contains("text is empty"), "{err}");
    let err = message(
        kb.search("   ", &SearchOptions::default())
            .await
            .unwrap_err(),
    );
    assert!(err.contains("query is empty"), "{err}");
    let err = message(
        kb.search(
            "x",
            &SearchOptions {
                top_k: Some(0),
                ..Default::default()
            },
        )
        .await
        .unwrap_err(),
    );
    assert!(err.contains("top_k"), "{err}");
    let err = message(
        kb.search(
            "x",
            &SearchOptions {
                similarity_threshold: Some(1.5),
                ..Default::default()
            },
        )
        .await
        .unwrap_err(),
    );
    assert!(err.contains("similarity_threshold"), "{err}");
    let err = message(
        kb.ask(&AskRequest {
            query: "x".into(),
            context_limit: Some(10),
            ..Default::default()
        })
        .await
        .unwrap_err(),
    );
    assert!(err.contains("context_limit"), "{err}");
    let err = message(kb.update(&id, SolutionPatch::default()).await.unwrap_err());
    assert!(err.contains("nothing to change"), "{err}");
    let err = message(kb.get("no-such-id").unwrap_err());
    assert!(err.contains("devlens kb list"), "{err}");

    // Malformed imports: nothing imported, nothing lost.
    let before = kb.export_json().unwrap();
    for (bad, expect) in [
        ("not json", "expected"),
        (r#"{"version":2,"solutions":[]}"#, "version 2"),
        (r#"{"version":1,"solutions":[{"id":"x"}]}"#, "missing field"),
        (
            r#"{"version":1,"solutions":[
              {"id":"a","title":"A","url":null,"text":"t","summary":null,"tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"},
              {"id":"a","title":"B","url":null,"text":"t","summary":null,"tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}]}"#,
            "appears twice",
        ),
        (
            r#"{"version":1,"solutions":[{"id":"b","title":"B","url":null,"text":"t","summary":null,"tags":[],"createdAt":"yesterday","updatedAt":"2026-01-01T00:00:00Z"}]}"#,
            "RFC 3339",
        ),
    ] {
        let err = message(kb.import_json(bad, "bad.json").unwrap_err());
        assert!(
            err.contains(expect) && err.contains("Nothing was imported"),
            "{err}"
        );
        assert_eq!(kb.export_json().unwrap(), before);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_and_import_round_trip_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Err("no model in this test".into()));
    let golden = common::golden_solutions();
    let report = kb.import_json(&golden, "solutions.json").unwrap();
    assert_eq!((report.imported, report.counts.created), (60, 60));
    let exported = kb.export_json().unwrap();
    let other_dir = tempfile::tempdir().unwrap();
    let other = common::kb_in(&other_dir, Err("no model in this test".into()));
    other.import_json(&exported, "export.json").unwrap();
    assert_eq!(other.export_json().unwrap(), exported);
    // Nothing is lost or altered: the same solutions as the file, in export order.
    let mut original: devlens_kb::ExportFile = serde_json::from_str(&golden).unwrap();
    original
        .solutions
        .sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
    let reparsed: devlens_kb::ExportFile = serde_json::from_str(&exported).unwrap();
    assert_eq!(reparsed, original);
    // Importing again changes nothing; an edited copy replaces by id.
    let again = kb.import_json(&exported, "export.json").unwrap();
    assert_eq!(again.counts.unchanged, 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_search_falls_back_to_keywords_and_reembed_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(
        &dir,
        Err("the model folder is missing: run `devlens model install`".into()),
    );
    let saved = kb
        .add(new(
            "Jest fake timers and promises",
            "Call await jest.runAllTimersAsync().",
            &["jest"],
        ))
        .await
        .unwrap();
    assert!(!saved.embedded);
    assert!(
        saved
            .notice
            .as_deref()
            .unwrap()
            .contains("devlens kb reembed")
    );
    let r = kb
        .search("fake timers", &SearchOptions::default())
        .await
        .unwrap();
    assert_eq!(r.mode, SearchMode::Keyword);
    assert!(
        r.notice.as_deref().unwrap().contains("model install"),
        "{r:?}"
    );
    assert_eq!(r.results.len(), 1);
    let err = kb.reembed(&|_, _| {}).await.unwrap_err().to_string();
    assert!(err.contains("cannot embed"), "{err}");

    let Some(model) = common::test_model() else {
        return;
    };
    let kb = common::kb_in(&dir, Ok(model));
    let r = kb
        .search("timers that never fire in tests", &SearchOptions::default())
        .await
        .unwrap();
    assert_eq!(r.mode, SearchMode::Keyword, "nothing is embedded yet");
    assert!(r.notice.as_deref().unwrap().contains("reembed"), "{r:?}");
    let report = kb.reembed(&|_, _| {}).await.unwrap();
    assert_eq!((report.embedded, report.up_to_date), (1, 0));
    let r = kb
        .search("timers that never fire in tests", &SearchOptions::default())
        .await
        .unwrap();
    assert_eq!(r.mode, SearchMode::Semantic);
    assert_eq!(r.results.len(), 1);
    assert_eq!(r.notice, None);
}

/// An embedder that works for `budget` calls and then fails as a dead server would.
#[derive(Debug)]
struct FailsAfter {
    inner: Arc<dyn Embedder>,
    budget: usize,
    calls: AtomicUsize,
}

impl Embedder for FailsAfter {
    fn provider(&self) -> Provider {
        self.inner.provider()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn dims(&self) -> usize {
        self.inner.dims()
    }
    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        if self.calls.fetch_add(1, Ordering::SeqCst) >= self.budget {
            return Box::pin(async {
                Err(EmbedError::Inference(
                    "the embedding server went away".into(),
                ))
            });
        }
        self.inner.embed_documents(texts, progress)
    }
    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        self.inner.embed_query(text)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_reembed_keeps_its_work_and_the_next_run_continues() {
    let Some(model) = common::test_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Err("not yet".into()));
    let solutions: Vec<serde_json::Value> = (0..40)
        .map(|i| {
            serde_json::json!({
                "id": format!("n{i:02}"), "title": format!("Note {i}"), "url": null,
                "text": format!("Short note number {i} about topic {}.", i % 7),
                "summary": null, "tags": [],
                "createdAt": format!("2026-01-01T00:00:{i:02}Z"),
                "updatedAt": format!("2026-01-01T00:00:{i:02}Z"),
            })
        })
        .collect();
    let file = serde_json::json!({"version": 1, "solutions": solutions}).to_string();
    kb.import_json(&file, "notes.json").unwrap();
    let failing: Arc<dyn Embedder> = Arc::new(FailsAfter {
        inner: model.clone(),
        budget: 1,
        calls: AtomicUsize::new(0),
    });
    let kb = common::kb_in(&dir, Ok(failing));
    let progress = std::sync::Mutex::new(Vec::new());
    let err = kb
        .reembed(&|done, total| progress.lock().unwrap().push((done, total)))
        .await;
    assert!(err.unwrap_err().to_string().contains("went away"));
    assert_eq!(
        progress.lock().unwrap().last(),
        Some(&(devlens_kb::REEMBED_BATCH, 40))
    );

    let kb = common::kb_in(&dir, Ok(model));
    let report = kb.reembed(&|_, _| {}).await.unwrap();
    assert_eq!(report.up_to_date, devlens_kb::REEMBED_BATCH);
    assert_eq!(report.embedded, 40 - devlens_kb::REEMBED_BATCH);
    assert_eq!(kb.reembed(&|_, _| {}).await.unwrap().embedded, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_solution_is_found_by_what_it_says_at_the_end() {
    let Some(model) = common::test_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Ok(model));
    let filler = "Our deployment notes cover the staging cluster, the release checklist, the \
                  on-call rotation and who approves database migrations. "
        .repeat(20);
    let text = format!(
        "{filler}\n\nFinally: when Safari shows a blank page for the service worker, unregister \
         it in Web Inspector and bump the cache name in sw.js."
    );
    assert!(text.len() > 2_500);
    let id = kb
        .add(new("Team runbook", &text, &["ops"]))
        .await
        .unwrap()
        .solution
        .id;
    let r = kb
        .search(
            "safari blank page caused by a stale service worker",
            &SearchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        r.results.first().map(|h| h.id.as_str()),
        Some(id.as_str()),
        "{r:?}"
    );
    assert!(
        r.results[0].excerpt.contains("Safari"),
        "{}",
        r.results[0].excerpt
    );
}

/// A stand-in for a remote provider's model: a fixed vector per text length, no model files.
#[derive(Debug)]
struct RemoteLike;

impl Embedder for RemoteLike {
    fn provider(&self) -> Provider {
        Provider::OpenAi
    }
    fn model(&self) -> &str {
        "text-embedding-3-small"
    }
    fn dims(&self) -> usize {
        4
    }
    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        _progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        let vectors = texts
            .iter()
            .map(|t| vec![1.0, (t.len() % 7) as f32, 0.5, 0.25])
            .collect();
        Box::pin(async move { Ok(vectors) })
    }
    fn embed_query<'a>(&'a self, _text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        Box::pin(async { Ok(vec![1.0, 0.0, 0.5, 0.25]) })
    }
}

/// An import counts as needing embeddings only what the knowledge base's own model has not
/// embedded — also before that model (here a remote one) is loaded.
#[tokio::test]
async fn an_import_counts_what_lacks_an_embedding_by_the_model_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Ok(Arc::new(RemoteLike)));
    let saved = kb
        .add(new(
            "Debounce input",
            "Wait 300 ms after the last key.",
            &[],
        ))
        .await
        .unwrap();
    assert!(saved.embedded);
    drop(kb);

    // Reopened as a server would: the embedder is not loaded until something needs it.
    let kb = KnowledgeBase::open(&devlens_core::Config::with_data_dir(dir.path())).unwrap();
    let file = serde_json::json!({"version": 1, "solutions": [{
        "id": "imported", "title": "Throttle scroll", "url": null,
        "text": "Use requestAnimationFrame.", "summary": null, "tags": [],
        "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
    }]})
    .to_string();
    let report = kb.import_json(&file, "more.json").unwrap();
    assert_eq!(report.need_embedding, 1, "{report:?}");
}

/// Counts the texts sent to the model.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn Embedder>,
    texts: AtomicUsize,
}

impl Embedder for Counting {
    fn provider(&self) -> Provider {
        self.inner.provider()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn dims(&self) -> usize {
        self.inner.dims()
    }
    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        self.inner.embed_documents(texts, progress)
    }
    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        self.inner.embed_query(text)
    }
}

/// Editing one paragraph of a long solution embeds that part again, not the whole text; what
/// the other parts say is still found by meaning, and so is the new paragraph.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_embeds_only_the_parts_it_changed() {
    let Some(model) = common::test_model() else {
        return;
    };
    let counting = Arc::new(Counting {
        inner: model,
        texts: AtomicUsize::new(0),
    });
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Ok(counting.clone()));
    let intro = "Service workers keep serving the old bundle after a deploy because the browser \
                 only swaps the worker when every tab using it has closed. "
        .repeat(4);
    let middle = "Version the cache name with the build hash and delete old caches in the \
                  activate event, so stale assets do not pile up in storage. "
        .repeat(4);
    let ending = "Show a reload banner when a new worker is waiting. ".repeat(8);
    let text = format!("{intro}\n\n{middle}\n\n{ending}");
    let saved = kb
        .add(new("PWA users stuck on an old release", &text, &["pwa"]))
        .await
        .unwrap();
    assert!(saved.chunks >= 3, "{saved:?}");
    assert_eq!(saved.reused_chunks, 0);
    let sent = counting.texts.load(Ordering::SeqCst);
    assert_eq!(sent, saved.chunks);

    let new_ending = "Call registration.waiting.postMessage('skipWaiting') from the banner's \
                      button and reload once controllerchange fires. "
        .repeat(4);
    let updated = kb
        .update(
            &saved.solution.id,
            SolutionPatch {
                text: Some(format!("{intro}\n\n{middle}\n\n{new_ending}")),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let embedded_now = counting.texts.load(Ordering::SeqCst) - sent;
    assert_eq!(
        (updated.reused_chunks, embedded_now),
        (updated.chunks - 1, 1),
        "{updated:?}"
    );
    assert!(
        updated.to_text().contains("unchanged kept their vectors"),
        "{}",
        updated.to_text()
    );

    for question in [
        "the browser keeps the previous service worker until all tabs close",
        "tell the waiting worker to skip waiting and reload on controller change",
    ] {
        let r = kb
            .search(
                question,
                &SearchOptions {
                    mode: Some(SearchMode::Semantic),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(r.results.len(), 1, "{question}: {r:?}");
    }

    // A new title is part of every chunk's embedded text: all of them are embedded again.
    let before = counting.texts.load(Ordering::SeqCst);
    let retitled = kb
        .update(
            &saved.solution.id,
            SolutionPatch {
                title: Some("Installable app users stay on an old version".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(retitled.reused_chunks, 0);
    assert_eq!(
        counting.texts.load(Ordering::SeqCst) - before,
        retitled.chunks
    );
}
