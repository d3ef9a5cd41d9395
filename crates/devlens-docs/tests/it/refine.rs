//! A version answers once its section vectors are stored; its chunks' own vectors follow in
//! batches. What a user notices: the answer (and the list) says while they are missing, an
//! interrupted refinement resumes where it stopped and ends exactly as a one-shot ingest does —
//! same vectors, none twice, nothing embedded twice — on the embedded store and on PostgreSQL.

use crate::postgres;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use devlens_core::{Config, Report};
use devlens_docs::store::{LoadedVersion, PassageBatch};
use devlens_docs::{
    Docs, DocsSource, IngestRequest, PostgresDocsStore, QueryDocsInput, RefineProgress,
};
use devlens_embed::{BoxFuture, EmbedError, Embedder, LazyEmbedder, Progress, Provider};
use devlens_search::postgres::ServerDatabase;

const DIMS: usize = 64;

/// A deterministic embedder (hashed words) that counts the texts it embeds.
#[derive(Debug, Default)]
struct WordHash {
    embedded: AtomicUsize,
}

impl WordHash {
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
        "word-hash"
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
            self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
            progress(texts.len(), texts.len());
            Ok(texts.iter().map(|t| Self::vector(t)).collect())
        })
    }
    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        Box::pin(async move { Ok(Self::vector(text)) })
    }
}

/// Three pages whose sections run to several paragraphs: prose chunks of their own.
fn pages(root: &Path) -> PathBuf {
    let pages = root.join("pages");
    std::fs::create_dir_all(&pages).unwrap();
    let topics = [
        ("Files", "reading", "descriptor", "watcher"),
        ("Timers", "scheduling", "interval", "immediate"),
        ("Streams", "piping", "backpressure", "highWaterMark"),
    ];
    for (page, (title, verb, noun, later)) in topics.iter().enumerate() {
        let mut text = format!("# {title}\n\n");
        for section in 0..3 {
            text.push_str(&format!("## {title} part {section}\n\n"));
            for paragraph in 0..4 {
                let sentence = format!(
                    "The {noun} used for {verb} number {paragraph} in section {section} of page \
                     {page} behaves as the {title} guide explains at length. "
                );
                text.push_str(&sentence.repeat(6));
                if paragraph == 3 && section == 2 {
                    text.push_str(&format!(
                        "Only this paragraph mentions the {later} option, which tunes it."
                    ));
                }
                text.push_str("\n\n");
            }
        }
        std::fs::write(pages.join(format!("{}.md", title.to_lowercase())), text).unwrap();
    }
    pages
}

fn request(path: &Path) -> IngestRequest {
    IngestRequest {
        id: "/acme/node".into(),
        source: DocsSource::Path(path.to_path_buf()),
        version: Some("1.0".into()),
        name: None,
        description: None,
    }
}

fn question(query: &str) -> QueryDocsInput {
    QueryDocsInput {
        library_id: "/acme/node".into(),
        query: query.into(),
        version: None,
        max_results: Some(10),
        include_code: None,
        context_limit: None,
    }
}

fn docs_at(file: &Path, embedder: &Arc<WordHash>) -> Docs {
    Docs::with_embedder(file, Some(Arc::clone(embedder) as Arc<dyn Embedder>))
        .unwrap()
        .with_refine_batch(4)
}

/// Every vector of a version, in a comparable shape: sections, then (chunk, own vector).
fn vectors_of(loaded: LoadedVersion) -> (Vec<f32>, Vec<usize>, Vec<f32>) {
    let v = loaded.vectors.expect("vectors");
    (v.sections, v.passage_chunks, v.passages)
}

const QUESTIONS: [&str; 3] = [
    "which option tunes the watcher",
    "timers immediate option",
    "highWaterMark backpressure",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_answers_before_its_chunk_vectors_and_ends_as_a_one_shot_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let pages = pages(dir.path());

    // The reference: one call that returns with every vector.
    let one_shot_embedder = Arc::new(WordHash::default());
    let one_shot = docs_at(&dir.path().join("one-shot.sqlite"), &one_shot_embedder);
    let whole = one_shot
        .ingest(&request(&pages), &|_, _, _| {})
        .await
        .unwrap();
    assert!(whole.refining.is_none(), "{whole:?}");
    assert!(whole.searchable_seconds <= whole.seconds);

    let embedder = Arc::new(WordHash::default());
    let docs = docs_at(&dir.path().join("docs.sqlite"), &embedder);
    let searchable = docs
        .ingest_searchable(&request(&pages), &|_, _, _| {})
        .await
        .unwrap();
    let Some(RefineProgress { stored: 0, planned }) = searchable.refining else {
        panic!("{searchable:?}")
    };
    assert!(planned >= 10, "{searchable:?}");
    assert!(
        searchable.to_text().contains("`devlens docs refine`"),
        "{}",
        searchable.to_text()
    );
    // It answers, and says its answers are still improving.
    let early = docs.query(&question(QUESTIONS[0])).await.unwrap();
    assert!(!early.results.is_empty());
    assert_eq!(early.refining, searchable.refining);
    assert!(
        early.to_text().contains(&format!(
            "still adding passage vectors: 0 of {planned} done"
        )),
        "{}",
        early.to_text()
    );
    let listed = docs.list().unwrap();
    assert_eq!(listed.libraries[0].refining.len(), 1);
    assert!(
        listed
            .to_text()
            .contains("1.0: still adding passage vectors")
    );

    let seen = std::sync::Mutex::new(Vec::new());
    let refined = docs
        .refine("/acme/node", "1.0", &|stored, planned| {
            seen.lock().unwrap().push((stored, planned))
        })
        .await;
    let refined = refined.unwrap();
    assert_eq!((refined.stored, refined.planned), (planned, planned));
    assert!(refined.refining.is_none());
    // Batch by batch, each one stored on its own.
    let seen = seen.into_inner().unwrap();
    assert!(seen.len() > 2, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    assert!(docs.refinements().unwrap().is_empty());
    assert!(docs.list().unwrap().libraries[0].refining.is_empty());

    // Exactly the one-shot ingest's vectors, fingerprint, embedding work and answers.
    let load = |d: &Docs| {
        d.store()
            .load_version("/acme/node", "1.0")
            .unwrap()
            .unwrap()
    };
    assert_eq!(vectors_of(load(&docs)), vectors_of(load(&one_shot)));
    let stamp = |d: &Docs| d.store().stamp("/acme/node", "1.0").unwrap().unwrap();
    assert!(stamp(&docs).fingerprint.is_some());
    assert_eq!(stamp(&docs).fingerprint, stamp(&one_shot).fingerprint);
    assert_eq!(
        embedder.embedded.load(Ordering::SeqCst),
        one_shot_embedder.embedded.load(Ordering::SeqCst)
    );
    for q in QUESTIONS {
        let a = docs.query(&question(q)).await.unwrap();
        let b = one_shot.query(&question(q)).await.unwrap();
        assert_eq!(a, b, "{q}");
        assert!(a.refining.is_none());
    }

    // Unchanged docs again: every vector reused, nothing left to add.
    let again = docs
        .ingest_searchable(&request(&pages), &|_, _, _| {})
        .await
        .unwrap();
    assert_eq!(again.embedded_texts, 0);
    assert!(again.refining.is_none(), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_refinement_resumes_and_ends_with_the_same_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let pages = pages(dir.path());
    let one_shot_embedder = Arc::new(WordHash::default());
    let one_shot = docs_at(&dir.path().join("one-shot.sqlite"), &one_shot_embedder);
    one_shot
        .ingest(&request(&pages), &|_, _, _| {})
        .await
        .unwrap();

    let file = dir.path().join("docs.sqlite");
    let first_embedder = Arc::new(WordHash::default());
    {
        let docs = docs_at(&file, &first_embedder);
        docs.ingest_searchable(&request(&pages), &|_, _, _| {})
            .await
            .unwrap();
        // Two batches, then the process is gone.
        let partial = docs
            .refine_batches("/acme/node", "1.0", 2, &|_, _| {})
            .await
            .unwrap();
        let progress = partial.refining.expect("unfinished");
        assert!(progress.stored > 0 && progress.stored < progress.planned);
        // A half-refined version answers, each chunk once, and says how far it is.
        for q in QUESTIONS {
            let answer = docs.query(&question(q)).await.unwrap();
            assert_eq!(answer.refining, Some(progress));
            let mut sections: Vec<(&str, &str)> = answer
                .results
                .iter()
                .map(|r| (r.metadata.url.as_str(), r.content.as_str()))
                .collect();
            let n = sections.len();
            sections.sort();
            sections.dedup();
            assert_eq!(sections.len(), n, "a chunk answered twice: {answer:?}");
        }
        let loaded = docs
            .store()
            .load_version("/acme/node", "1.0")
            .unwrap()
            .unwrap();
        let vectors = loaded.vectors.unwrap();
        assert_eq!(vectors.passage_chunks.len(), progress.stored);
    }

    // The next process resumes: only what is missing is embedded.
    let second_embedder = Arc::new(WordHash::default());
    let docs = docs_at(&file, &second_embedder);
    assert_eq!(docs.refinements().unwrap().len(), 1);
    let done = docs.refine_all(&|_, _, _| {}).await.unwrap();
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    assert!(docs.refinements().unwrap().is_empty());
    assert_eq!(
        first_embedder.embedded.load(Ordering::SeqCst)
            + second_embedder.embedded.load(Ordering::SeqCst),
        one_shot_embedder.embedded.load(Ordering::SeqCst),
        "a text was embedded twice"
    );
    let load = |d: &Docs| {
        d.store()
            .load_version("/acme/node", "1.0")
            .unwrap()
            .unwrap()
    };
    assert_eq!(vectors_of(load(&docs)), vectors_of(load(&one_shot)));
    let stamp = |d: &Docs| d.store().stamp("/acme/node", "1.0").unwrap().unwrap();
    assert_eq!(stamp(&docs).fingerprint, stamp(&one_shot).fingerprint);
    for q in QUESTIONS {
        assert_eq!(
            docs.query(&question(q)).await.unwrap(),
            one_shot.query(&question(q)).await.unwrap()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_refinement_finishes_and_a_replaced_version_takes_no_stale_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let pages = pages(dir.path());
    let embedder = Arc::new(WordHash::default());
    let docs = docs_at(&dir.path().join("docs.sqlite"), &embedder).with_background_refinement(true);
    let report = docs.ingest(&request(&pages), &|_, _, _| {}).await.unwrap();
    assert!(report.background, "{report:?}");
    assert!(
        report.to_text().contains("being added in the background"),
        "{}",
        report.to_text()
    );
    // Its answers are whole once the background task is done.
    let mut waited = 0;
    while !docs.refinements().unwrap().is_empty() {
        assert!(waited < 600, "the background refinement did not finish");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        waited += 1;
    }
    assert!(
        docs.query(&question(QUESTIONS[0]))
            .await
            .unwrap()
            .refining
            .is_none()
    );

    // Vectors computed for a generation that was replaced meanwhile are not stored.
    let stale = docs.store().stamp("/acme/node", "1.0").unwrap().unwrap();
    std::fs::write(pages.join("extra.md"), "# Extra\n\nOne more page.\n").unwrap();
    docs.ingest(&request(&pages), &|_, _, _| {}).await.unwrap();
    let batch = PassageBatch {
        library_id: "/acme/node",
        version: "1.0",
        generation: stale.generation,
        passages: &[(0, vec![1.0; DIMS])],
        planned: 1,
        fingerprint: None,
    };
    assert_eq!(docs.store().add_passages(&batch).unwrap(), None);
}

/// The same on PostgreSQL: a searchable version, interrupted, resumed by another server, ends
/// with the embedded store's vectors and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_refinement_resumed_by_another_server_ends_as_embedded() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pages = pages(dir.path());
    let embedded = docs_at(
        &dir.path().join("docs.sqlite"),
        &Arc::new(WordHash::default()),
    );
    embedded
        .ingest(&request(&pages), &|_, _, _| {})
        .await
        .unwrap();

    let url = pg.database();
    let server = |embedder: &Arc<WordHash>| {
        let config = Config::with_data_dir(dir.path());
        Docs::with_store(
            Arc::new(PostgresDocsStore::new(ServerDatabase::open(&url))),
            &config,
            Arc::new(LazyEmbedder::ready(Ok(
                Arc::clone(embedder) as Arc<dyn Embedder>
            ))),
        )
        .unwrap()
        .with_refine_batch(4)
    };
    let a = server(&Arc::new(WordHash::default()));
    let b = server(&Arc::new(WordHash::default()));
    let searchable = a
        .ingest_searchable(&request(&pages), &|_, _, _| {})
        .await
        .unwrap();
    let planned = searchable.refining.expect("chunk vectors to add").planned;
    a.refine_batches("/acme/node", "1.0", 1, &|_, _| {})
        .await
        .unwrap();
    let half = b.query(&question(QUESTIONS[0])).await.unwrap();
    let progress = half.refining.expect("still refining");
    assert!(
        progress.stored > 0 && progress.stored < planned,
        "{progress:?}"
    );
    assert_eq!(b.list().unwrap().libraries[0].refining.len(), 1);

    let done = b.refine_all(&|_, _, _| {}).await.unwrap();
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    assert!(a.refinements().unwrap().is_empty());
    let load = |d: &Docs| {
        d.store()
            .load_version("/acme/node", "1.0")
            .unwrap()
            .unwrap()
    };
    assert_eq!(vectors_of(load(&a)), vectors_of(load(&embedded)));
    let stamp = |d: &Docs| d.store().stamp("/acme/node", "1.0").unwrap().unwrap();
    assert_eq!(stamp(&a).fingerprint, stamp(&embedded).fingerprint);
    for q in QUESTIONS {
        let answer = a.query(&question(q)).await.unwrap();
        assert!(answer.refining.is_none());
        assert_eq!(answer, embedded.query(&question(q)).await.unwrap(), "{q}");
    }
}
