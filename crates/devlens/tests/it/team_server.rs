//! A team server: two `devlens serve --http` processes, each with its own data dir, on one
//! PostgreSQL + pgvector database (`DEVLENS_DATABASE_URL`). What one writes the other serves at
//! once — a solution, an API index, a docs library; a re-index on one while the other searches
//! costs no search; a writer killed mid-write leaves the old state or the new one, never a half.
//! Against a real PostgreSQL this test starts, with the real local model.

use crate::common;
use crate::postgres;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use common::http::{self, ok};

/// A devlens command on the team database, with its own data dir holding the `pets` project and
/// the local model.
fn on_database(data_dir: &Path, url: &str, model: &Path) -> tokio::process::Command {
    let mut cmd = common::devlens_process(data_dir);
    cmd.env("DEVLENS_DATABASE_URL", url)
        .env("DEVLENS_MODEL_DIR", model)
        .env_remove("EMBEDDING_PROVIDER");
    cmd
}

/// `devlens store check --json` on the database: what it counts.
async fn store_check(data_dir: &Path, url: &str, model: &Path) -> Value {
    let out = on_database(data_dir, url, model)
        .args(["store", "check", "--json"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn setup() -> Option<(postgres::TestPostgres, PathBuf)> {
    let pg = postgres::TestPostgres::start()?;
    let model = common::model_dir()?;
    Some((pg, model))
}

fn widgets_docs(dir: &Path, text: &str) -> PathBuf {
    let pages = dir.join("widgets-docs");
    let _ = std::fs::remove_dir_all(&pages);
    std::fs::create_dir_all(&pages).unwrap();
    std::fs::write(pages.join("widgets.md"), text).unwrap();
    pages
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_database_serve_each_others_writes() {
    let Some((pg, model)) = setup() else {
        return;
    };
    let url = pg.database();
    let (dir_a, dir_b) = (
        common::data_dir_with_petstore(),
        common::data_dir_with_petstore(),
    );
    // A's project folder, beside its data dir: over HTTP, docs are added from there.
    let workspace_a = tempfile::tempdir().unwrap();
    let mut serve_a = on_database(dir_a.path(), &url, &model);
    serve_a.env("DEVLENS_WORKSPACE", workspace_a.path());
    let a = http::start(serve_a).await;
    let b = http::start(on_database(dir_b.path(), &url, &model)).await;
    let client = crate::common::http::client();

    // The knowledge base: saved on A, found by meaning on B.
    let saved = ok(client
        .post(format!("{}/api/kb/solutions", a.base))
        .json(&json!({
            "title": "CSS grid items overflow their track",
            "text": "Grid items default to min-width: auto, so long words push the track wider. \
                     Set min-width: 0 on the item or use minmax(0, 1fr) for the column.",
            "tags": ["css"]
        })))
    .await;
    let id = saved["solution"]["id"].as_str().unwrap().to_string();
    let found = ok(client
        .post(format!("{}/api/kb/search", b.base))
        .json(&json!({"query": "my grid column grows when a word is long"})))
    .await;
    assert_eq!(found["results"][0]["id"], id.as_str(), "{found}");
    assert_eq!(found["mode"], "semantic", "{found}");

    // The API index: built on A, serving semantic search on B.
    let status = ok(client.get(format!("{}/api/embed/status?project=pets", b.base))).await;
    assert_eq!(status["indexed"], false, "{status}");
    ok(client.post(format!("{}/api/embed/reindex?project=pets", a.base))).await;
    let status = ok(client.get(format!("{}/api/embed/status?project=pets", b.base))).await;
    assert_eq!(status["indexed"], true, "{status}");
    assert_eq!(status["stale"], false, "{status}");
    let search = |base: String| {
        let client = client.clone();
        async move {
            ok(client.post(format!("{base}/api/embed/search")).json(
                &json!({"project": "pets", "query": "put a new animal up for sale", "limit": 5}),
            ))
            .await
        }
    };
    let hits = search(b.base.clone()).await;
    assert_eq!(hits["mode"], "semantic", "{hits}");
    assert!(hits["notice"].is_null(), "{hits}");
    assert_eq!(hits["results"][0]["operationId"], "createPet", "{hits}");

    // Library docs: added on A, answering on B.
    let docs = widgets_docs(
        workspace_a.path(),
        "# Widgets\n\n## Refresh\n\nWidgets refresh every second.\n",
    );
    ok(client
        .post(format!("{}/api/docs/libraries", a.base))
        .json(&json!({"id": "widgets", "path": docs.display().to_string()})))
    .await;
    let answer = ok(client.get(format!(
        "{}/api/docs/query?library_id=widgets&query=how+often+do+widgets+refresh",
        b.base
    )))
    .await;
    assert!(
        answer["context"].as_str().unwrap().contains("every second"),
        "{answer}"
    );

    // Re-indexing on A while B searches: every search answers, semantically, from a whole index.
    let rebuilds = {
        let (client, base) = (client.clone(), a.base.clone());
        tokio::spawn(async move {
            for _ in 0..3 {
                ok(client.post(format!("{base}/api/embed/reindex?project=pets&force=true"))).await;
            }
        })
    };
    let mut searches = 0;
    while !rebuilds.is_finished() || searches < 20 {
        let hits = search(b.base.clone()).await;
        assert_eq!(hits["mode"], "semantic", "{hits}");
        assert_eq!(hits["results"][0]["operationId"], "createPet", "{hits}");
        searches += 1;
    }
    rebuilds.await.unwrap();

    // A delete on B is gone on A.
    ok(client.delete(format!("{}/api/kb/solutions/{id}", b.base))).await;
    let (status, _) = http::send(client.get(format!("{}/api/kb/solutions/{id}", a.base))).await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);

    // `devlens store check` counts what the two servers wrote, through the stores that own it.
    let check = store_check(dir_a.path(), &url, &model).await;
    assert_eq!(check["store"], "postgres", "{check}");
    assert_eq!(check["apiIndexes"], 1, "{check}");
    assert_eq!(check["docsLibraries"], 1, "{check}");
    assert!(check["docsChunks"].as_i64().unwrap() > 0, "{check}");
    assert_eq!(
        check["solutions"], 0,
        "the one solution was deleted: {check}"
    );
    assert!(check["sizeMib"].as_f64().unwrap() > 1.0, "{check}");
}

/// A database set up when one migration held every corpus's tables (devlens before each crate
/// owned its migrations) upgrades in place: its data stays, the stores work on it, and the
/// bookkeeping becomes one row per owner and version, each with its text's checksum.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_from_the_single_migration_upgrades_to_each_crates_migrations() {
    let Some((pg, model)) = setup() else {
        return;
    };
    let url = pg.database();
    let database = url.rsplit('/').next().unwrap().to_string();
    let legacy = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/legacy-server-store");
    for file in ["0001_server_store.sql", "0002_docs_passage_vectors.sql"] {
        pg.sql(
            &database,
            &std::fs::read_to_string(legacy.join(file)).unwrap(),
        );
    }
    pg.sql(
        &database,
        "CREATE TABLE devlens_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, \
         checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now()); \
         INSERT INTO devlens_migrations (version, description, checksum) VALUES \
         (1, 'server store', '612d0cf1c79fab10'), (2, 'docs passage vectors', '2a9682f98d2e9761'); \
         INSERT INTO kb_solutions (id, title, text, tags, created_at, updated_at, content_hash, \
         keywords) VALUES ('legacy-1', 'Kept across the upgrade', 'Written before it.', '[]', \
         '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'h', \
         to_tsvector('simple', 'Kept across the upgrade'))",
    );
    let dir = common::data_dir_with_petstore();
    for _ in 0..2 {
        let check = store_check(dir.path(), &url, &model).await;
        assert_eq!(check["solutions"], 1, "{check}");
        assert_eq!(check["apiIndexes"], 0, "{check}");
        assert_eq!(check["docsLibraries"], 0, "{check}");
    }
    assert_eq!(
        pg.sql(
            &database,
            "SELECT owner || ' ' || version || ' ' || (checksum ~ '^[0-9a-f]{16}$') \
             FROM devlens_migrations ORDER BY owner, version"
        ),
        "api 1 true\ndevlens 1 true\ndocs 1 true\ndocs 2 true\ndocs 3 true\nkb 1 true\nkb 2 true\nkb 3 true\nkb 4 true\nkb 5 true\nkb 6 true\nkb 7 true"
    );
    assert_eq!(
        pg.sql(&database, "SELECT title FROM kb_solutions"),
        "Kept across the upgrade"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_killed_mid_ingest_leaves_the_other_server_serving_the_old_docs() {
    use std::os::unix::process::ExitStatusExt as _;
    let Some((pg, model)) = setup() else {
        return;
    };
    // The new docs: Node.js's File system page (scripts/fetch-testdata), one big page.
    let fs_page = std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"))
        .join("nodejs-doc/md/fs.md");
    if !fs_page.is_file() {
        assert!(
            std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() != Ok("1"),
            "nodejs-doc is missing: run scripts/fetch-testdata"
        );
        return;
    }
    let url = pg.database();
    let database = url.rsplit('/').next().unwrap().to_string();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let b = http::start(on_database(dir_b.path(), &url, &model)).await;
    let client = crate::common::http::client();

    // The old state: "node" from one small page.
    let old = widgets_docs(
        dir_a.path(),
        "# Node\n\n## Files\n\nAn old page: read a file into a string with the legacy reader.\n",
    );
    let node = dir_a.path().join("node-docs");
    std::fs::create_dir_all(&node).unwrap();
    std::fs::copy(&fs_page, node.join("fs.md")).unwrap();
    let add = |path: &Path| {
        let mut cmd = on_database(dir_a.path(), &url, &model);
        cmd.args(["docs", "add", "node", "--path"])
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    };
    assert!(add(&old).status().await.unwrap().success());
    let ask = || {
        client.get(format!(
            "{}/api/docs/query?library_id=node&query=read+a+file+into+a+string",
            b.base
        ))
    };
    let before = ok(ask()).await;

    // The new state, killed inside its transaction: every chunk inserted, nothing committed. The
    // process stops at devlens-search's crash point there (`DEVLENS_CRASH_AT`) as a kill -9
    // landing at that moment would: no timing to race, however fast the machine.
    let killed = add(&node)
        .env("DEVLENS_CRASH_AT", "docs-before-commit")
        .stderr(Stdio::piped())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&killed.stderr);
    assert_eq!(
        killed.status.signal(),
        Some(6),
        "the ingest should have stopped before its commit (SIGABRT): {stderr}"
    );
    assert!(
        stderr.contains("DEVLENS_CRASH_AT=docs-before-commit"),
        "{stderr}"
    );

    // Nothing half-written: every version has exactly the chunks it says, and B answers as
    // before (its answer built from the same, old, docs).
    let consistent = |pg: &postgres::TestPostgres| {
        pg.sql(
            &database,
            "SELECT count(*) FROM docs_versions v WHERE chunk_count <> (SELECT count(*) \
             FROM docs_chunks c WHERE c.library_id = v.library_id AND c.version = v.version)",
        )
    };
    // The killed connection's transaction is rolled back once the server notices.
    let mut waited = 0;
    while pg.sql(
        &database,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'devlens' \
         AND state LIKE '%transaction%'",
    ) != "0"
        && waited < 200
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    assert_eq!(consistent(&pg), "0");
    let after_kill: Value = ok(ask()).await;

    // The same command again completes, and B serves the new docs.
    assert!(add(&node).status().await.unwrap().success());
    assert_eq!(consistent(&pg), "0");
    let after: Value = ok(ask()).await;
    let context = after["context"].as_str().unwrap();
    assert!(
        context.contains("readFile") && !context.contains("legacy reader"),
        "{after}"
    );
    // What B served right after the kill was the old state, whole: the kill landed before the
    // commit.
    assert!(
        before["context"] == after_kill["context"] && before["results"] == after_kill["results"],
        "after the kill B did not serve the old docs: {after_kill}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_database_is_unreachable_says_so_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = common::devlens_process(dir.path());
    let out = cmd
        .env(
            "DEVLENS_DATABASE_URL",
            format!("postgres://devlens:hunter2@127.0.0.1:{port}/devlens"),
        )
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Is PostgreSQL running"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn a_scale_run_with_a_bad_corpus_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("notes.txt");
    std::fs::write(&corpus, "not an export").unwrap();
    // The parent runs each side in a child: the child's error must reach the user.
    let out = common::devlens(dir.path())
        .args(["store", "bench", "--solutions", "10", "--kb-corpus"])
        .arg(&corpus)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("notes.txt is not a knowledge-base export file"),
        "{stderr}"
    );
}
