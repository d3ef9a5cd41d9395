//! Two-way sync with the extension's copy of the knowledge base, on the embedded store and on a
//! real PostgreSQL: what a first sync pulls, created / edited / deleted solutions applied, the
//! server's deletions reaching the extension, last writer wins per solution with the conflict
//! noted, bad changes rejected alone, and vectors stored as sent (no second embedding) only
//! when they are the server's model's.

use crate::common;
use crate::postgres;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use devlens_core::Config;
use devlens_embed::{BoxFuture, EmbedError, Embedder, LazyEmbedder, Progress, Provider};
use devlens_kb::chunk::{TARGET_CHARS, chunk_ranges, embedding_text};
use devlens_kb::{
    KnowledgeBase, NewSolution, PostgresStore, SolutionPatch, SolutionStore, SqliteStore,
    SyncOutcome, SyncRequest,
};
use devlens_search::postgres::ServerDatabase;
use serde_json::{Value, json};

/// A timestamp `offset` seconds from now.
fn at(offset: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    devlens_core::clock::rfc3339((now + offset) as u64)
}

/// A timestamp `offset` seconds from now with milliseconds, as the extension (JavaScript's
/// `toISOString`) writes them.
fn js_at(offset: i64) -> String {
    at(offset).replace('Z', ".250Z")
}

fn new(title: &str, text: &str) -> NewSolution {
    NewSolution {
        title: title.into(),
        text: text.into(),
        ..Default::default()
    }
}

fn request(changes: Vec<Value>, known: &[(&str, &str)]) -> SyncRequest {
    SyncRequest {
        changes,
        known: known
            .iter()
            .map(|(id, t)| (id.to_string(), t.to_string()))
            .collect(),
        ..Default::default()
    }
}

/// A solution as the extension sends it.
fn saved(id: &str, title: &str, text: &str, updated: &str, base: Option<&str>) -> Value {
    json!({
        "id": id, "title": title, "url": null, "text": text, "summary": null, "tags": [],
        "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": updated, "base": base,
    })
}

fn deletion(id: &str, when: &str, base: Option<&str>) -> Value {
    json!({"id": id, "deleted": true, "updatedAt": when, "base": base})
}

async fn sync(kb: &KnowledgeBase, request: SyncRequest) -> (SyncOutcome, Value) {
    let outcome = kb.sync(request).await.unwrap();
    let json = serde_json::to_value(&outcome.report).unwrap();
    (outcome, json)
}

/// The ids of the answer's changes, each with `deleted` when it is a deletion.
fn sent(report: &Value) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["deleted"] == true))
        .collect();
    out.sort();
    out
}

fn applied(report: &Value) -> [u64; 4] {
    let a = &report["applied"];
    ["created", "updated", "deleted", "unchanged"].map(|k| a[k].as_u64().unwrap())
}

fn change<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("{id} not among the changes: {report}"))
}

/// The rules, on whichever store `kb` is on (`store` is the same store, to look at tombstones).
async fn the_rules_hold(kb: &KnowledgeBase, store: &dyn SolutionStore) {
    let a = kb.add(new("Alpha", "First text.")).await.unwrap().solution;
    let b = kb.add(new("Beta", "Second text.")).await.unwrap().solution;
    let c = kb.add(new("Gamma", "Third text.")).await.unwrap().solution;

    // A first sync pulls everything; nothing the server had changes.
    let (outcome, r) = sync(kb, request(vec![], &[])).await;
    let mut everything = vec![
        (a.id.clone(), false),
        (b.id.clone(), false),
        (c.id.clone(), false),
    ];
    everything.sort();
    assert_eq!(sent(&r), everything);
    assert_eq!(applied(&r), [0, 0, 0, 0]);
    assert_eq!(change(&r, &a.id)["text"], "First text.");
    assert!(r["model"].is_null() && r["conflicts"] == json!([]) && r["rejected"] == json!([]));
    assert!(outcome.unembedded.is_empty());

    // The extension creates one, edits one, deletes one; the third it holds unchanged.
    let edited_at = js_at(-5);
    let deleted_at = js_at(-4);
    let (outcome, r) = sync(
        kb,
        request(
            vec![
                saved("ext-1", "Delta", "Made in the browser.", &js_at(-6), None),
                saved(
                    &a.id,
                    "Alpha",
                    "First text, edited in the browser.",
                    &edited_at,
                    Some(&a.updated_at),
                ),
                deletion(&b.id, &deleted_at, Some(&b.updated_at)),
            ],
            &[(&c.id, &c.updated_at)],
        ),
    )
    .await;
    assert_eq!(applied(&r), [1, 1, 1, 0], "{r}");
    assert_eq!(sent(&r), vec![], "nothing new for the extension: {r}");
    assert_eq!(r["conflicts"], json!([]));
    let delta = kb.get("ext-1").unwrap();
    assert_eq!(
        (delta.title.as_str(), delta.created_at.as_str()),
        ("Delta", "2026-01-01T00:00:00.000Z")
    );
    let alpha = kb.get(&a.id).unwrap();
    assert_eq!(
        (alpha.text.as_str(), alpha.updated_at.as_str()),
        ("First text, edited in the browser.", edited_at.as_str())
    );
    assert!(kb.get(&b.id).is_err());
    assert_eq!(store.tombstone(&b.id).unwrap(), Some(deleted_at.clone()));
    assert_eq!(
        {
            let mut u = outcome.unembedded.clone();
            u.sort();
            u
        },
        {
            let mut u = vec!["ext-1".to_string(), a.id.clone()];
            u.sort();
            u
        },
        "without a model, what came without vectors waits for one"
    );

    // The same request again changes nothing (a retry after a lost answer).
    let (_, again) = sync(
        kb,
        request(
            vec![
                saved(
                    &a.id,
                    "Alpha",
                    "First text, edited in the browser.",
                    &edited_at,
                    Some(&a.updated_at),
                ),
                deletion(&b.id, &deleted_at, Some(&b.updated_at)),
            ],
            &[],
        ),
    )
    .await;
    assert_eq!(applied(&again), [0, 0, 0, 2], "{again}");

    // A deletion on the server reaches the extension, with when it happened.
    kb.delete(&c.id).unwrap();
    let tombstone = store.tombstone(&c.id).unwrap().unwrap();
    let (_, r) = sync(
        kb,
        request(
            vec![],
            &[
                (&c.id, &c.updated_at),
                (&a.id, &edited_at),
                ("ext-1", &delta.updated_at),
                ("never-here", "2026-01-01T00:00:00Z"),
            ],
        ),
    )
    .await;
    assert_eq!(
        sent(&r),
        vec![(c.id.clone(), true), ("never-here".to_string(), true)]
    );
    assert_eq!(change(&r, &c.id)["updatedAt"], tombstone.as_str());
    assert_eq!(applied(&r), [0, 0, 0, 0]);

    // Both sides edited: the later edit wins and the conflict is noted either way.
    let server_edit = kb
        .update(
            &a.id,
            SolutionPatch {
                text: Some("Edited on the server.".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .solution;
    let later = js_at(3600);
    let (_, r) = sync(
        kb,
        request(
            vec![saved(
                &a.id,
                "Alpha",
                "Edited in the browser, later.",
                &later,
                Some(&edited_at),
            )],
            &[],
        ),
    )
    .await;
    assert_eq!(applied(&r), [0, 1, 0, 0], "{r}");
    assert_eq!(r["conflicts"][0]["kept"], "extension", "{r}");
    assert_eq!(r["conflicts"][0]["id"], a.id.as_str());
    assert!(
        r["conflicts"][0]["why"]
            .as_str()
            .unwrap()
            .contains("the extension's edit is later"),
        "{r}"
    );
    assert_eq!(kb.get(&a.id).unwrap().text, "Edited in the browser, later.");
    assert!(server_edit.updated_at < later);

    let server_edit = kb
        .update(
            "ext-1",
            SolutionPatch {
                title: Some("Delta, renamed on the server".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .solution;
    let (_, r) = sync(
        kb,
        request(
            vec![saved(
                "ext-1",
                "Delta, renamed in the browser",
                "Made in the browser.",
                &js_at(-3),
                Some(&delta.updated_at),
            )],
            &[],
        ),
    )
    .await;
    assert_eq!(applied(&r), [0, 0, 0, 1], "{r}");
    assert_eq!(r["conflicts"][0]["kept"], "server", "{r}");
    assert_eq!(
        r["conflicts"][0]["title"], "Delta, renamed on the server",
        "{r}"
    );
    let back = change(&r, "ext-1");
    assert_eq!(back["title"], "Delta, renamed on the server");
    assert_eq!(back["updatedAt"], server_edit.updated_at.as_str());
    assert_eq!(kb.get("ext-1").unwrap(), server_edit);

    // A deletion older than the server's edit loses; one newer wins.
    let (_, r) = sync(
        kb,
        request(
            vec![deletion("ext-1", &js_at(-3600), Some(&delta.updated_at))],
            &[],
        ),
    )
    .await;
    assert_eq!(r["conflicts"][0]["kept"], "server", "{r}");
    assert_eq!(change(&r, "ext-1")["deleted"], Value::Null);
    assert!(kb.get("ext-1").is_ok());
    let (_, r) = sync(
        kb,
        request(
            vec![deletion("ext-1", &js_at(60), Some(&delta.updated_at))],
            &[],
        ),
    )
    .await;
    assert_eq!(applied(&r), [0, 0, 1, 0], "{r}");
    assert_eq!(r["conflicts"][0]["kept"], "deleted", "{r}");
    assert!(kb.get("ext-1").is_err());

    // An edit older than the server's deletion stays deleted; a newer one restores it.
    let (_, r) = sync(
        kb,
        request(
            vec![saved(
                &c.id,
                "Gamma",
                "Edited before the deletion.",
                &at(-7200),
                Some(&c.updated_at),
            )],
            &[],
        ),
    )
    .await;
    assert_eq!(r["conflicts"][0]["kept"], "deleted", "{r}");
    assert_eq!(change(&r, &c.id)["deleted"], true);
    assert_eq!(change(&r, &c.id)["updatedAt"], tombstone.as_str());
    assert!(kb.get(&c.id).is_err());
    let (_, r) = sync(
        kb,
        request(
            vec![saved(
                &c.id,
                "Gamma",
                "Edited after the deletion.",
                &js_at(120),
                Some(&c.updated_at),
            )],
            &[],
        ),
    )
    .await;
    assert_eq!(applied(&r), [1, 0, 0, 0], "{r}");
    assert_eq!(r["conflicts"][0]["kept"], "extension", "{r}");
    assert_eq!(kb.get(&c.id).unwrap().text, "Edited after the deletion.");
    assert_eq!(store.tombstone(&c.id).unwrap(), None, "saved again");

    // The same content with other timestamps changes nothing: the extension takes the
    // server's. A cleaned save goes back as stored.
    let alpha = kb.get(&a.id).unwrap();
    let (_, r) = sync(
        kb,
        request(
            vec![
                saved(&a.id, "Alpha", &alpha.text, &js_at(-1), None),
                json!({
                    "id": "ext-2", "title": "  Tidy   me ", "text": "Body\n\n", "tags": ["CSS", "#css"],
                    "createdAt": js_at(-2), "updatedAt": js_at(-2), "base": null,
                }),
            ],
            &[],
        ),
    )
    .await;
    assert_eq!(applied(&r), [1, 0, 0, 1], "{r}");
    assert_eq!(change(&r, &a.id)["updatedAt"], alpha.updated_at.as_str());
    let tidy = change(&r, "ext-2");
    assert_eq!(
        (&tidy["title"], &tidy["text"], &tidy["tags"]),
        (&json!("Tidy me"), &json!("Body"), &json!(["css"]))
    );

    // Bad changes are rejected one by one; the good one beside them applies, nothing is lost.
    let before = kb.export_json().unwrap();
    let (_, r) = sync(
        kb,
        request(
            vec![
                json!(42),
                saved("a b", "Bad id", "x", &js_at(0), None),
                saved("ext-3", "Bad time", "x", "yesterday", None),
                saved("ext-4", "", "No title", &js_at(0), None),
                saved("ext-5", "From the future", "x", &at(5 * 86_400), None),
                json!({"id": "ext-6", "title": "Unknown field", "text": "x", "tags": [],
                       "createdAt": js_at(0), "updatedAt": js_at(0), "base": null, "colour": "red"}),
                json!({"id": "ext-7", "deleted": true}),
                saved("ext-8", "Fine", "Kept.", &js_at(0), None),
                saved("ext-8", "Fine twice", "Again.", &js_at(0), None),
            ],
            &[("bad id!", "2026-01-01T00:00:00Z")],
        ),
    )
    .await;
    assert_eq!(applied(&r), [1, 0, 0, 0], "{r}");
    let rejected: Vec<(Value, String)> = r["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["id"].clone(), x["why"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(rejected.len(), 9, "{rejected:?}");
    for (id, expect) in [
        (Value::Null, "must be an object"),
        (json!("a b"), "not a solution id"),
        (json!("ext-3"), "RFC 3339"),
        (json!("ext-4"), "title is empty"),
        (json!("ext-5"), "ahead of the server's clock"),
        (json!("ext-6"), "colour"),
        (json!("ext-7"), "updatedAt"),
        (json!("ext-8"), "more than one change"),
        (json!("bad id!"), "not a solution id"),
    ] {
        assert!(
            rejected
                .iter()
                .any(|(i, why)| *i == id && why.contains(expect)),
            "{id} {expect}: {rejected:?}"
        );
    }
    assert_eq!(kb.get("ext-8").unwrap().text, "Kept.");
    let after = kb.export_json().unwrap();
    let removed_ext8 = {
        let mut file: Value = serde_json::from_str(&after).unwrap();
        file["solutions"]
            .as_array_mut()
            .unwrap()
            .retain(|s| s["id"] != "ext-8");
        file
    };
    assert_eq!(
        removed_ext8,
        serde_json::from_str::<Value>(&before).unwrap(),
        "nothing else changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_rules_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("kb.sqlite")).unwrap());
    let kb = KnowledgeBase::with_store(
        store.clone(),
        &Config::with_data_dir(dir.path()),
        Arc::new(LazyEmbedder::ready(Err("no model in this test".into()))),
    );
    the_rules_hold(&kb, store.as_ref()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_rules_on_postgres() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(PostgresStore::new(ServerDatabase::open(&pg.database())));
    let kb = KnowledgeBase::with_store(
        store.clone(),
        &Config::with_data_dir(dir.path()),
        Arc::new(LazyEmbedder::ready(Err("no model in this test".into()))),
    );
    the_rules_hold(&kb, store.as_ref()).await;
}

/// Every delete leaves a tombstone and every save of the id (one by one or by import) clears
/// it; conditional writes write only over the version they expect.
fn tombstones_and_conditional_writes(store: &dyn SolutionStore) {
    let s = devlens_kb::Solution {
        id: "t-1".into(),
        title: "Tomb".into(),
        url: None,
        text: "Stone.".into(),
        summary: None,
        tags: vec![],
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_at: "2026-01-01T00:00:00Z".into(),
    };
    store.put(&s, None).unwrap();
    assert_eq!(store.tombstone("t-1").unwrap(), None);
    assert!(store.delete("t-1").unwrap());
    let when = store.tombstone("t-1").unwrap().unwrap();
    assert!(when.ends_with('Z') && when.len() == 20, "{when}");
    assert_eq!(store.tombstones().unwrap(), vec![("t-1".into(), when)]);
    store.import(std::slice::from_ref(&s)).unwrap();
    assert_eq!(store.tombstone("t-1").unwrap(), None);

    let newer = devlens_kb::Solution {
        text: "Newer.".into(),
        updated_at: "2026-01-02T00:00:00Z".into(),
        ..s.clone()
    };
    assert_eq!(store.put_if(&newer, None, None).unwrap(), None, "it exists");
    assert_eq!(
        store
            .put_if(&newer, None, Some("2025-01-01T00:00:00Z"))
            .unwrap(),
        None
    );
    assert_eq!(store.get("t-1").unwrap(), Some(s.clone()));
    assert_eq!(
        store.put_if(&newer, None, Some(&s.updated_at)).unwrap(),
        Some((true, true))
    );
    assert!(
        !store
            .delete_if("t-1", &s.updated_at, "2026-01-03T00:00:00Z")
            .unwrap()
    );
    assert!(
        store
            .delete_if("t-1", &newer.updated_at, "2026-01-03T00:00:00Z")
            .unwrap()
    );
    assert_eq!(
        store.tombstone("t-1").unwrap().as_deref(),
        Some("2026-01-03T00:00:00Z")
    );
    assert_eq!(
        store.versions().unwrap(),
        Vec::<(String, String)>::new(),
        "gone"
    );
    assert_eq!(
        store.put_if(&s, None, None).unwrap(),
        Some((false, true)),
        "created again"
    );
    assert_eq!(store.tombstone("t-1").unwrap(), None);
    assert_eq!(
        store.versions().unwrap(),
        vec![("t-1".to_string(), s.updated_at.clone())]
    );
}

#[test]
fn tombstones_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    tombstones_and_conditional_writes(&SqliteStore::open(&dir.path().join("kb.sqlite")).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tombstones_on_postgres() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let store = PostgresStore::new(ServerDatabase::open(&pg.database()));
    tombstones_and_conditional_writes(&store);
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

fn encode(v: &[f32]) -> String {
    STANDARD.encode(v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
}

fn decode(s: &Value) -> Vec<f32> {
    STANDARD
        .decode(s.as_str().unwrap())
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Vectors the extension computed with the server's model, for the server's chunks, are stored
/// as they are and never embedded again; of another model (or cut otherwise) they are not
/// used and the server embeds the solution itself. The server's go back when asked for.
async fn vectors_travel(kb: &KnowledgeBase, counting: &Counting) {
    let model = counting.model().to_string();
    let dims = counting.dims();
    let on_server = kb
        .add(new(
            "Debounce a search input",
            "Wait 300 ms after the last keystroke before sending the request.",
        ))
        .await
        .unwrap()
        .solution;
    let embedded_before = counting.texts.load(Ordering::SeqCst);

    let paragraph = "Service workers keep serving the old bundle until every tab closes. ";
    // As a save leaves it (no trailing space): vectors are of the text as stored.
    let text = format!(
        "{}\n\n{}",
        paragraph.repeat(8),
        "Version the cache name with the build hash. ".repeat(12)
    )
    .trim_end()
    .to_string();
    let ranges = chunk_ranges(&text, TARGET_CHARS);
    assert!(ranges.len() >= 2, "{ranges:?}");
    // Unit vectors no model would produce: kept exactly only if stored as sent.
    let chunk_vectors: Vec<Vec<f32>> = (0..ranges.len())
        .map(|i| {
            let mut v = vec![0.0f32; dims];
            v[i] = 0.6;
            v[i + 1] = 0.8;
            v
        })
        .collect();
    let wire = json!({"chunks": ranges.iter().zip(&chunk_vectors).map(|(r, v)| {
        json!({"start": r.start, "end": r.end, "vector": encode(v)})
    }).collect::<Vec<_>>()});
    let mut with_vectors = saved(
        "pwa-1",
        "PWA stuck on an old release",
        &text,
        &js_at(-1),
        None,
    );
    with_vectors["vectors"] = wire.clone();
    let mut other_model = saved("pwa-2", "PWA stuck, other model", &text, &js_at(-1), None);
    other_model["vectors"] = wire.clone();
    let mut cut_otherwise = saved("pwa-3", "PWA stuck, cut otherwise", &text, &js_at(-1), None);
    cut_otherwise["vectors"] =
        json!({"chunks": [{"start": 0, "end": text.len(), "vector": encode(&chunk_vectors[0])}]});

    let same = |changes: Vec<Value>| SyncRequest {
        model: Some(model.clone()),
        dims: Some(dims),
        changes,
        want_vectors: true,
        ..Default::default()
    };
    let (outcome, r) = sync(kb, same(vec![with_vectors.clone(), cut_otherwise])).await;
    assert_eq!(applied(&r), [2, 0, 0, 0], "{r}");
    assert_eq!(r["model"], model.as_str());
    assert_eq!(r["dims"], dims);
    assert_eq!(outcome.unembedded, vec!["pwa-3".to_string()]);
    assert!(
        r["notice"].as_str().unwrap().contains("vectors of 1"),
        "{r}"
    );
    // The one the extension lacks comes with the server's vectors.
    let server_copy = change(&r, &on_server.id);
    assert_eq!(
        server_copy["vectors"]["chunks"]
            .as_array()
            .map(|c| c.len())
            .unwrap(),
        1
    );
    assert_eq!(
        decode(&server_copy["vectors"]["chunks"][0]["vector"]).len(),
        dims
    );

    let (outcome, r) = sync(
        kb,
        SyncRequest {
            model: Some("another/model".into()),
            dims: Some(dims),
            changes: vec![other_model],
            want_vectors: true,
            known: [(on_server.id.clone(), on_server.updated_at.clone())].into(),
        },
    )
    .await;
    assert_eq!(outcome.unembedded, vec!["pwa-2".to_string()]);
    assert!(
        r["changes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c.get("vectors").is_none()),
        "no vectors for another model: {r}"
    );
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        embedded_before,
        "a sync embeds nothing itself"
    );
    assert_eq!(
        kb.embed_missing(&["pwa-1".into(), "pwa-2".into(), "pwa-3".into()])
            .await
            .unwrap(),
        2,
        "pwa-1 has its vectors already"
    );
    assert_eq!(
        counting.texts.load(Ordering::SeqCst) - embedded_before,
        2 * ranges.len()
    );

    // A fresh extension gets pwa-1's vectors exactly as they were sent, the others' as the
    // server embedded them.
    let (_, r) = sync(kb, same(vec![])).await;
    let got: Vec<Vec<f32>> = change(&r, "pwa-1")["vectors"]["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| decode(&c["vector"]))
        .collect();
    assert_eq!(got, chunk_vectors);
    let theirs = &change(&r, "pwa-2")["vectors"]["chunks"];
    assert_eq!(theirs.as_array().unwrap().len(), ranges.len());
    assert_ne!(decode(&theirs[0]["vector"]), chunk_vectors[0]);
    assert_eq!(theirs[1]["start"], ranges[1].start);
    // The model's vectors are of `embedding_text(title, tags, chunk)`.
    let expected = counting
        .inner
        .embed_documents(
            &[embedding_text(
                "PWA stuck, other model",
                &[],
                &text[ranges[0].clone()],
            )],
            &|_, _| {},
        )
        .await
        .unwrap();
    let similarity: f32 = expected[0]
        .iter()
        .zip(decode(&theirs[0]["vector"]))
        .map(|(a, b)| a * b)
        .sum();
    // (Not bit for bit: a text embedded in a batch is padded to the batch's longest.)
    assert!(similarity > 0.99, "{similarity}");

    // Malformed vectors reject the change.
    let mut broken = saved("pwa-4", "Broken vectors", "Short.", &js_at(0), None);
    broken["vectors"] =
        json!({"chunks": [{"start": 0, "end": 99, "vector": encode(&chunk_vectors[0])}]});
    let (_, r) = sync(kb, same(vec![broken])).await;
    assert_eq!(r["rejected"][0]["id"], "pwa-4", "{r}");
    assert!(kb.get("pwa-4").is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_from_the_same_model_are_kept_as_sent() {
    let Some(model) = common::test_model() else {
        return;
    };
    let counting = Arc::new(Counting {
        inner: model,
        texts: AtomicUsize::new(0),
    });
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Ok(counting.clone()));
    vectors_travel(&kb, &counting).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_from_the_same_model_are_kept_as_sent_on_postgres() {
    let Some(pg) = postgres::TestPostgres::start() else {
        return;
    };
    let Some(model) = common::test_model() else {
        return;
    };
    let counting = Arc::new(Counting {
        inner: model,
        texts: AtomicUsize::new(0),
    });
    let dir = tempfile::tempdir().unwrap();
    let kb = KnowledgeBase::with_store(
        Arc::new(PostgresStore::new(ServerDatabase::open(&pg.database()))),
        &Config::with_data_dir(dir.path()),
        Arc::new(LazyEmbedder::ready(Ok(counting.clone()))),
    );
    vectors_travel(&kb, &counting).await;
}
