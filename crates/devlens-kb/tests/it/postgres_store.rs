//! The knowledge base on a team server's PostgreSQL (pgvector): it behaves as the embedded
//! store does — the same exports, the same semantic answers — and two servers on one database
//! see each other's writes at once. Against a real PostgreSQL this test starts.

use crate::common;
use crate::postgres;

use std::sync::Arc;

use devlens_core::Config;
use devlens_embed::{Embedder, LazyEmbedder};
use devlens_kb::{
    KbError, KnowledgeBase, NewSolution, PostgresStore, SearchMode, SearchOptions, SolutionPatch,
    SolutionStore,
};
use devlens_search::postgres::ServerDatabase;

fn kb_on(url: &str, embedder: Result<Arc<dyn Embedder>, String>) -> KnowledgeBase {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::with_data_dir(dir.path());
    let store = Arc::new(PostgresStore::new(ServerDatabase::open(url)));
    KnowledgeBase::with_store(store, &config, Arc::new(LazyEmbedder::ready(embedder)))
}

fn new(title: &str, text: &str, tags: &[&str]) -> NewSolution {
    NewSolution {
        title: title.into(),
        url: None,
        text: text.into(),
        summary: None,
        tags: tags.iter().map(|t| t.to_string()).collect(),
    }
}

fn mode(mode: SearchMode) -> SearchOptions {
    SearchOptions {
        mode: Some(mode),
        ..Default::default()
    }
}

/// A semantic answer as two stores must agree on it: the solutions in order, with their
/// similarity to four decimals.
fn semantic_answer(r: &devlens_kb::SearchResults) -> Vec<(String, Option<i64>)> {
    r.results
        .iter()
        .map(|x| (x.id.clone(), x.similarity.map(|s| (s * 1e4).round() as i64)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_golden_base_answers_on_postgres_as_it_does_embedded() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let Some(model) = common::test_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let embedded = common::kb_in(&dir, Ok(Arc::clone(&model)));
    let server = kb_on(&pg.database(), Ok(Arc::clone(&model)));
    let golden = common::golden_solutions();
    for kb in [&embedded, &server] {
        let report = kb.import_json(&golden, "solutions.json").unwrap();
        assert_eq!(report.counts.created, 60);
        kb.reembed(&|_, _| {}).await.unwrap();
    }
    // Nothing lost or altered: the exports are the same bytes.
    assert_eq!(
        server.export_json().unwrap(),
        embedded.export_json().unwrap()
    );

    // The same vectors, so the same semantic answers, scores included.
    let queries = common::golden_queries();
    let mut asked = 0;
    for line in queries
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let query = line.split('\t').next().unwrap();
        asked += 1;
        let a = embedded
            .search(query, &mode(SearchMode::Semantic))
            .await
            .unwrap();
        let b = server
            .search(query, &mode(SearchMode::Semantic))
            .await
            .unwrap();
        assert_eq!(semantic_answer(&a), semantic_answer(&b), "{query}");
        // Keywords rank in memory the same way over both stores: the same answers, scores
        // included (BM25 as FTS5 computes it, not PostgreSQL's ts_rank).
        let a = embedded
            .search(query, &mode(SearchMode::Keyword))
            .await
            .unwrap();
        let b = server
            .search(query, &mode(SearchMode::Keyword))
            .await
            .unwrap();
        let ranked = |r: &devlens_kb::SearchResults| {
            r.results
                .iter()
                .map(|x| (x.id.clone(), (x.score * 1e3).round() as i64))
                .collect::<Vec<_>>()
        };
        assert_eq!(ranked(&a), ranked(&b), "{query}");
    }
    assert!(asked >= 20, "{asked}");
    let hybrid = server
        .search(
            "grid column grows with a long word",
            &mode(SearchMode::Hybrid),
        )
        .await
        .unwrap();
    assert_eq!(hybrid.mode, SearchMode::Hybrid);
    assert!(!hybrid.results.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_database_see_each_others_writes_at_once() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let Some(model) = common::test_model() else {
        return;
    };
    let url = pg.database();
    let a = Arc::new(kb_on(&url, Ok(Arc::clone(&model))));
    let b = Arc::new(kb_on(&url, Ok(Arc::clone(&model))));

    // Both have searched (and cached their vectors) before anything is saved.
    for kb in [&a, &b] {
        let empty = kb
            .search("anything", &SearchOptions::default())
            .await
            .unwrap();
        assert!(empty.results.is_empty());
    }
    let saved = a
        .add(new(
            "CSS grid items overflow their track",
            "Grid items default to min-width: auto, so long words push the track wider. Set \
             min-width: 0 on the item or use minmax(0, 1fr) for the column.",
            &["css"],
        ))
        .await
        .unwrap()
        .solution;
    let found = b
        .search(
            "my grid column grows when a word is long",
            &SearchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        found.results.first().map(|r| r.id.as_str()),
        Some(saved.id.as_str())
    );

    // An edit on B is what A finds; a delete on A is gone on B.
    b.update(
        &saved.id,
        SolutionPatch {
            text: Some("Use `overflow-wrap: anywhere` on the grid item instead.".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let found = a
        .search("overflow-wrap anywhere", &mode(SearchMode::Keyword))
        .await
        .unwrap();
    assert_eq!(
        found.results.first().map(|r| r.id.as_str()),
        Some(saved.id.as_str())
    );
    assert!(a.get(&saved.id).unwrap().text.contains("overflow-wrap"));
    a.delete(&saved.id).unwrap();
    assert!(matches!(
        b.get(&saved.id),
        Err(KbError::UnknownSolution { .. })
    ));

    // Saves from both at once: every one lands, each found by the other server.
    let mut tasks = Vec::new();
    for i in 0..20 {
        for (side, kb) in [("a", &a), ("b", &b)] {
            let kb = Arc::clone(kb);
            tasks.push(tokio::spawn(async move {
                kb.add(new(
                    &format!("Note {side}{i}"),
                    &format!("Parallel save number {i} from server {side}: tag zebra{side}{i}."),
                    &[],
                ))
                .await
                .map(|s| s.solution.id)
            }));
        }
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(a.list().unwrap().solutions.len(), 40);
    assert_eq!(b.list().unwrap().solutions.len(), 40);
    let status = b.status().await.unwrap();
    assert_eq!((status.solutions, status.embedded), (40, 40), "{status:?}");
    let found = a
        .search("zebrab7", &mode(SearchMode::Keyword))
        .await
        .unwrap();
    assert_eq!(found.results[0].title, "Note b7");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_import_changes_nothing() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let kb = kb_on(&pg.database(), Err("no model in this test".into()));
    kb.import_json(&common::golden_solutions(), "solutions.json")
        .unwrap();
    let before = kb.export_json().unwrap();
    // PostgreSQL refuses a NUL character in text: the whole import is refused, the base kept.
    let bad = r#"{"version":1,"solutions":[
      {"id":"new-1","title":"Fine","url":null,"text":"fine","summary":null,"tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"},
      {"id":"new-2","title":"Bad","url":null,"text":"a\u0000b","summary":null,"tags":[],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}]}"#;
    let err = kb.import_json(bad, "bad.json").unwrap_err().to_string();
    assert!(err.contains("Nothing was"), "{err}");
    assert_eq!(kb.export_json().unwrap(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_says_what_to_check_and_hides_the_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let kb = kb_on(
        &format!("postgres://devlens:hunter2@127.0.0.1:{port}/devlens"),
        Err("no model".into()),
    );
    let err = kb.add(new("t", "x", &[])).await.unwrap_err().to_string();
    assert!(err.contains("Is PostgreSQL running"), "{err}");
    assert!(err.contains("DEVLENS_DATABASE_URL"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let err = kb_on("postgres://x:y@host:port/db", Err("no model".into()))
        .list()
        .unwrap_err()
        .to_string();
    assert!(err.contains("not valid"), "{err}");
}

/// Words hashed into 32 dimensions: similar texts get similar vectors, at no model's cost.
#[derive(Debug)]
struct WordHash;

impl Embedder for WordHash {
    fn provider(&self) -> devlens_embed::Provider {
        devlens_embed::Provider::Local
    }
    fn model(&self) -> &str {
        "word-hash"
    }
    fn dims(&self) -> usize {
        32
    }
    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        _progress: devlens_embed::Progress<'a>,
    ) -> devlens_embed::BoxFuture<'a, Result<Vec<Vec<f32>>, devlens_embed::EmbedError>> {
        Box::pin(async move { Ok(texts.iter().map(|t| word_hash(t)).collect()) })
    }
    fn embed_query<'a>(
        &'a self,
        text: &'a str,
    ) -> devlens_embed::BoxFuture<'a, Result<Vec<f32>, devlens_embed::EmbedError>> {
        Box::pin(async move { Ok(word_hash(text)) })
    }
}

fn word_hash(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; 32];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = word.to_lowercase().bytes().fold(2166136261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16777619)
        });
        v[(h % 32) as usize] += if h & 32 == 0 { 1.0 } else { -1.0 };
    }
    v[0] += 0.01;
    devlens_embed::l2_normalize(&mut v);
    v
}

/// A large import is written in a few statements per batch and its vectors are indexed once
/// afterwards: the same solutions, vectors and semantic answers as the embedded store's, the
/// HNSW index there again at the end; an import of the same file again changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_import_is_embedded_in_bulk_and_indexed_once() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let words = [
        "cors",
        "preflight",
        "grid",
        "flex",
        "hydration",
        "suspense",
        "router",
        "cache",
        "token",
        "cookie",
        "webpack",
        "vite",
        "jest",
        "fetch",
        "stream",
        "worker",
        "canvas",
        "locale",
    ];
    let solutions: Vec<serde_json::Value> = (0..1200)
        .map(|i| {
            let pick = |k: usize| words[(i * (k + 3) + k * 7) % words.len()];
            serde_json::json!({
                "id": format!("bulk{i:05}"),
                "title": format!("{} {} problem {i}", pick(0), pick(1)),
                "text": format!("When {} meets {} the {} breaks; fix number {i}.", pick(2), pick(3), pick(4)),
                "tags": [pick(5)],
                "createdAt": devlens_core::clock::rfc3339(1_767_225_600 + (i as u64 / 3) * 60),
                "updatedAt": devlens_core::clock::rfc3339(1_767_225_600 + (i as u64 / 3) * 60),
            })
        })
        .collect();
    let export = serde_json::json!({ "version": 1, "solutions": solutions }).to_string();
    let dir = tempfile::tempdir().unwrap();
    let embedded = common::kb_in(&dir, Ok(Arc::new(WordHash)));
    let database = pg.database();
    let server = kb_on(&database, Ok(Arc::new(WordHash)));
    for kb in [&embedded, &server] {
        let report = kb.import_json(&export, "bulk.json").unwrap();
        assert_eq!(report.counts.created, 1200);
        let embedded = kb.reembed(&|_, _| {}).await.unwrap();
        assert_eq!(embedded.embedded, 1200);
        assert_eq!(kb.status().await.unwrap().embedded, 1200);
    }
    let name = database.rsplit('/').next().unwrap();
    assert_eq!(
        pg.sql(
            name,
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'kb_chunks_ip_32'"
        ),
        "1",
        "the vector index is built again after the bulk write"
    );
    assert_eq!(
        server.export_json().unwrap(),
        embedded.export_json().unwrap()
    );
    for query in [
        "cors preflight",
        "vite worker stream",
        "grid canvas locale 17",
    ] {
        let a = embedded
            .search(query, &mode(SearchMode::Semantic))
            .await
            .unwrap();
        let b = server
            .search(query, &mode(SearchMode::Semantic))
            .await
            .unwrap();
        let ids = |r: &devlens_kb::SearchResults| {
            r.results
                .iter()
                .take(3)
                .map(|x| x.similarity.map(|s| (s * 1e3).round() as i64))
                .collect::<Vec<_>>()
        };
        assert!(!a.results.is_empty(), "{query}");
        assert_eq!(ids(&a), ids(&b), "{query}");
    }
    // The same file again: nothing created or replaced, nothing to embed.
    let again = server.import_json(&export, "bulk.json").unwrap();
    assert_eq!(again.counts.unchanged, 1200);
    assert_eq!(server.reembed(&|_, _| {}).await.unwrap().embedded, 0);
}

/// Three short solutions on different subjects, for the tests of the database's layout.
const THREE_NOTES: [(&str, &str); 3] = [
    (
        "CORS preflight fails",
        "The OPTIONS request needs Access-Control-Allow-Headers.",
    ),
    (
        "Grid item overflows",
        "Give the track minmax(0, 1fr) so long words wrap.",
    ),
    (
        "Jest timers hang",
        "Advance fake timers with runAllTimersAsync before awaiting.",
    ),
];

/// A database of kb migration 4 — the vector marks in kb_solutions' own columns, the vector index
/// by cosine distance — keeps its vectors current through the upgrade (the marks move to
/// kb_embedded, the index is built again by inner product): the same semantic answers, every
/// solution still embedded, nothing to re-embed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_stay_current_when_their_marks_move_to_a_table_of_their_own() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let database = pg.database();
    let name = database.rsplit('/').next().unwrap().to_string();
    let before = kb_on(&database, Ok(Arc::new(WordHash)));
    for (title, text) in THREE_NOTES {
        before.add(new(title, text, &[])).await.unwrap();
    }
    let asked = before
        .search("preflight headers", &mode(SearchMode::Semantic))
        .await
        .unwrap();
    assert!(!asked.results.is_empty());
    drop(before);
    // Back to the layout of kb migration 4, as a database written by an earlier release.
    pg.sql(
        &name,
        "ALTER TABLE kb_solutions ADD COLUMN embedded_hash TEXT, ADD COLUMN embedded_model TEXT, \
         ADD COLUMN embedded_dims INTEGER; \
         UPDATE kb_solutions s SET embedded_hash = e.hash, embedded_model = e.model, \
         embedded_dims = e.dims FROM kb_embedded e WHERE e.solution_seq = s.seq; \
         DROP TABLE kb_embedded; \
         DROP INDEX kb_chunks_ip_32; \
         CREATE INDEX kb_chunks_hnsw_32 ON kb_chunks USING hnsw \
         ((embedding::vector(32)) vector_cosine_ops) WHERE dims = 32; \
         ALTER TABLE kb_chunks ADD FOREIGN KEY (solution_seq) REFERENCES kb_solutions (seq) \
         ON DELETE CASCADE; \
         DELETE FROM devlens_migrations WHERE owner = 'kb' AND version IN (5, 6, 7)",
    );

    let after = kb_on(&database, Ok(Arc::new(WordHash)));
    let status = after.status().await.unwrap();
    assert_eq!((status.solutions, status.embedded), (3, 3));
    let again = after
        .search("preflight headers", &mode(SearchMode::Semantic))
        .await
        .unwrap();
    assert_eq!(semantic_answer(&again), semantic_answer(&asked));
    assert_eq!(after.reembed(&|_, _| {}).await.unwrap().embedded, 0);
    assert_eq!(
        pg.sql(
            &name,
            "SELECT count(*) FROM information_schema.columns \
             WHERE table_name = 'kb_solutions' AND column_name LIKE 'embedded%'"
        ),
        "0"
    );
    assert_eq!(
        pg.sql(
            &name,
            "SELECT string_agg(indexname, ' ') FROM pg_indexes \
             WHERE tablename = 'kb_chunks' AND indexdef LIKE '%hnsw%'"
        ),
        "kb_chunks_ip_32"
    );
    assert_eq!(vector_foreign_keys(&pg, &name), "0");
}

/// The foreign keys from the vector tables to kb_solutions (migration kb 7 drops them).
fn vector_foreign_keys(pg: &postgres::TestPostgres, database: &str) -> String {
    pg.sql(
        database,
        "SELECT count(*) FROM pg_constraint WHERE contype = 'f' \
         AND conrelid IN ('kb_chunks'::regclass, 'kb_embedded'::regclass)",
    )
}

/// A deleted solution takes its chunk vectors and what they were computed from with it, with no
/// foreign key to do it; the others keep theirs and are still found by meaning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_solution_takes_its_vectors_with_it() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let database = pg.database();
    let name = database.rsplit('/').next().unwrap().to_string();
    let kb = kb_on(&database, Ok(Arc::new(WordHash)));
    let mut ids = Vec::new();
    for (title, text) in THREE_NOTES {
        ids.push(kb.add(new(title, text, &[])).await.unwrap().solution.id);
    }
    assert_eq!(vector_foreign_keys(&pg, &name), "0");
    // (rows, rows whose solution is gone)
    let rows = |table: &str| -> (u64, u64) {
        let counted = pg.sql(
            &name,
            &format!(
                "SELECT count(*) || ' ' || count(*) FILTER (WHERE NOT EXISTS \
                 (SELECT 1 FROM kb_solutions s WHERE s.seq = t.solution_seq)) FROM {table} t"
            ),
        );
        let (all, orphaned) = counted.split_once(' ').unwrap();
        (all.parse().unwrap(), orphaned.parse().unwrap())
    };
    let (chunks_before, _) = rows("kb_chunks");
    assert_eq!(rows("kb_embedded"), (3, 0));

    kb.delete(&ids[1]).unwrap();
    assert_eq!(rows("kb_embedded"), (2, 0));
    let (chunks_after, orphaned) = rows("kb_chunks");
    assert_eq!(orphaned, 0);
    assert!(
        chunks_after < chunks_before,
        "{chunks_before} -> {chunks_after}"
    );
    let found = kb
        .search("preflight headers", &mode(SearchMode::Semantic))
        .await
        .unwrap();
    assert_eq!(found.results[0].id, ids[0]);
    assert!(found.results.iter().all(|r| r.id != ids[1]));
    let status = kb.status().await.unwrap();
    assert_eq!((status.solutions, status.embedded), (2, 2));
}

/// An import leaves the keyword entries (tsvectors) out; the first keyword query that needs the
/// database's own full text (a word outside ASCII) fills them first: the same entries, so the
/// same answers and scores, as solutions saved one at a time (which compute theirs as they
/// go). A replaced solution's entry is recomputed from its new text; a failed import leaves
/// every solution and entry as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyword_entries_an_import_leaves_out_are_filled_before_full_text_answers() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let file: devlens_kb::ExportFile = serde_json::from_str(&common::golden_solutions()).unwrap();
    let mut solutions = file.solutions;
    // Words outside ASCII in titles, tags, summaries and texts.
    for (i, s) in solutions.iter_mut().enumerate().take(12) {
        match i % 4 {
            0 => s.title.push_str(" — déploiement du café"),
            1 => s.tags.push("résumé".into()),
            2 => s.summary = Some("Ça marche : une façade naïve".into()),
            _ => s.text.push_str("\n\nÜber-Größe, straße, café."),
        }
    }
    let (imported_url, saved_url) = (pg.database(), pg.database());
    let imported = PostgresStore::new(ServerDatabase::open(&imported_url));
    let saved = PostgresStore::new(ServerDatabase::open(&saved_url));
    imported.import(&solutions).unwrap();
    for s in &solutions {
        saved.put(s, None).unwrap();
    }
    let entries = |url: &str| {
        pg.sql(
            url.rsplit('/').next().unwrap(),
            "SELECT id || ' ' || coalesce(keywords::text, 'missing') FROM kb_solutions \
             ORDER BY seq",
        )
    };
    assert!(entries(&imported_url).contains(" missing"));
    assert!(!entries(&saved_url).contains(" missing"));
    let terms = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    for words in [
        &["café", "cors"][..],
        &["déploiement"],
        &["résumé", "grid"],
        &["größe", "naïve", "fetch"],
    ] {
        let asked = terms(words);
        let answer = imported.keyword(&asked, 20).unwrap();
        assert!(!answer.is_empty(), "{words:?}");
        assert_eq!(answer, saved.keyword(&asked, 20).unwrap(), "{words:?}");
    }
    assert_eq!(entries(&imported_url), entries(&saved_url));

    // Replaced by an import: the old entry goes with the old text; the new one is the new
    // text's.
    let mut changed = solutions[5].clone();
    changed.text = "Now about the crème brûlée.".into();
    imported.import(std::slice::from_ref(&changed)).unwrap();
    saved.put(&changed, None).unwrap();
    assert!(entries(&imported_url).contains(" missing"));
    let asked = terms(&["brûlée"]);
    let answer = imported.keyword(&asked, 5).unwrap();
    assert_eq!(answer[0].0, changed.id);
    assert_eq!(answer, saved.keyword(&asked, 5).unwrap());
    assert_eq!(entries(&imported_url), entries(&saved_url));

    // A failed import (PostgreSQL refuses a NUL character in a new text) changes nothing.
    let before = entries(&imported_url);
    let mut replaced = solutions[1].clone();
    replaced.text = "Replaced, then rolled back.".into();
    let mut bad = solutions[2].clone();
    bad.id = "new-bad".into();
    bad.text = "a\u{0}b".into();
    assert!(imported.import(&[replaced, bad]).is_err());
    assert_eq!(entries(&imported_url), before);
    assert_eq!(
        imported.get(&solutions[1].id).unwrap().as_ref(),
        Some(&solutions[1])
    );
}
