//! Crash safety: `kill -9` a long write (an API index build, a docs ingest, a knowledge-base
//! import, a re-embedding) midway, start again, and check what a user would: the previous state
//! still answers, nothing is torn (status commands succeed), and the same command run again
//! completes.
//!
//! Most tests watch the process's progress (its stderr lines, or the SQLite write-ahead log
//! growing) and send SIGKILL once the work is under way, so the kill lands mid-write however
//! fast the machine is; no assertion depends on timing. A run that finishes before the kill is
//! a failure of the test's input size, said as such. The write phases (the API index's version
//! files and `CURRENT`, the docs store's transaction) are too short to aim a signal at, so two
//! tests stop the process at named points inside them (`DEVLENS_CRASH_AT`, devlens-search's
//! crash.rs): an abort, which leaves the files as a kill there would.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{devlens, model_dir};

/// How long a killed command may take to reach the point where it is killed: generous, as the
/// machine may be busy; a run that needs longer fails with what it was waiting for.
const REACH_TIMEOUT: Duration = Duration::from_secs(240);

/// The devlens binary with a private data dir and the local model, as a plain process whose
/// stderr the test reads.
fn devlens_child(data_dir: &Path, model: &Path, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("devlens"))
        .args(args)
        .env("DEVLENS_DATA_DIR", data_dir)
        .env("DEVLENS_MODEL_DIR", model)
        .env("NO_COLOR", "1")
        .env_remove("EMBEDDING_PROVIDER")
        .env_remove("DEVLENS_PROJECT")
        .env_remove("PROJECT_NAME")
        .env_remove("DEVLENS_CONFIG")
        .env_remove("DEVLENS_PROJECTS_FILE")
        .env_remove("DEVLENS_SERVER")
        .env_remove("DEVLENS_DATABASE_URL")
        .current_dir(data_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn devlens")
}

/// Sends SIGKILL to `child` once `ready` says the work is under way: `ready` sees each stderr
/// line as it comes (and `None` every few milliseconds, to poll the data dir). Returns the
/// stderr read so far. Fails the test when the command exits first.
fn kill_when(mut child: Child, what: &str, mut ready: impl FnMut(Option<&str>) -> bool) -> String {
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let started = Instant::now();
    let mut seen = String::new();
    loop {
        let line = match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(line) => Some(line),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
        };
        if let Some(line) = &line {
            seen.push_str(line);
            seen.push('\n');
        }
        if ready(line.as_deref()) {
            child.kill().expect("SIGKILL");
            let status = child.wait().expect("wait");
            assert!(
                !status.success(),
                "{what}: exited successfully though it was killed"
            );
            return seen;
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            // Lines still in the pipe may say the work was under way; read them.
            while let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
                seen.push_str(&line);
                seen.push('\n');
            }
            panic!(
                "{what} exited ({status}) before it could be killed midway: make its input \
                 bigger. stderr:\n{seen}"
            );
        }
        assert!(
            started.elapsed() < REACH_TIMEOUT,
            "{what} did not reach the kill point in {REACH_TIMEOUT:?}; stderr:\n{seen}"
        );
    }
}

/// A progress line `<label>: done/total` with `0 < done < total`: the work is under way and
/// not finished.
fn midway(line: Option<&str>, label: &str) -> bool {
    let Some(rest) = line.and_then(|l| l.strip_prefix(label)) else {
        return false;
    };
    let Some((done, total)) = rest.trim().trim_start_matches(':').trim().split_once('/') else {
        return false;
    };
    match (done.trim().parse::<usize>(), total.trim().parse::<usize>()) {
        (Ok(done), Ok(total)) => done > 0 && done < total,
        _ => false,
    }
}

/// Runs devlens with the model; its stdout, or the test fails with its stderr.
fn run_ok(data_dir: &Path, model: &Path, args: &[&str]) -> String {
    let output = devlens(data_dir)
        .env("DEVLENS_MODEL_DIR", model)
        .env_remove("EMBEDDING_PROVIDER")
        .args(args)
        .output()
        .expect("run devlens");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "devlens {args:?} failed after the kill: {stderr}"
    );
    for damaged in ["damaged", "corrupt", "malformed", "locked"] {
        assert!(
            !stderr.to_lowercase().contains(damaged),
            "devlens {args:?} reports {damaged}: {stderr}"
        );
    }
    String::from_utf8(output.stdout).expect("utf-8 stdout")
}

fn run_json(data_dir: &Path, model: &Path, args: &[&str]) -> Value {
    let stdout = run_ok(data_dir, model, args);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
}

// --- API index ------------------------------------------------------------------------------

/// An OpenAPI document with the `old` operations (pets) and `extra` generated ones.
fn spec_with(extra: usize) -> Value {
    let mut paths = serde_json::Map::new();
    for (path, id, summary) in [
        ("/pets", "listPets", "List all pets in the shop"),
        ("/pets/{petId}", "showPetById", "Info for a specific pet"),
        ("/owners", "listOwners", "List the owners of pets"),
        ("/vets/{vetId}", "showVet", "A veterinarian's opening hours"),
    ] {
        paths.insert(
            path.into(),
            json!({ "get": { "operationId": id, "summary": summary, "tags": ["pets"],
                             "responses": { "200": { "description": "ok" } } } }),
        );
    }
    for i in 0..extra {
        paths.insert(
            format!("/warehouses/{i}/shelves/{{shelfId}}"),
            json!({ "get": {
                "operationId": format!("shelf{i}"),
                "summary": format!("Inventory of shelf {i} in warehouse section {}", i % 97),
                "description": format!("Counts the boxes stored on shelf {i}; pallets arrive \
                                        every {} minutes.", i % 13),
                "tags": [format!("warehouse{}", i % 40)],
                "responses": { "200": { "description": "ok" } } } }),
        );
    }
    json!({ "openapi": "3.0.3", "info": { "title": "Shop", "version": "1" }, "paths": paths })
}

fn write_spec(path: &Path, extra: usize) {
    std::fs::write(path, serde_json::to_vec(&spec_with(extra)).unwrap()).unwrap();
}

/// The project `shop` on a 4-operation spec (`shop.json` in `data`, returned).
fn shop_project(data: &Path) -> PathBuf {
    let spec = data.join("shop.json");
    write_spec(&spec, 0);
    std::fs::write(
        data.join("projects.json"),
        json!({ "projects": [{ "name": "shop", "swaggerUrl": spec.display().to_string() }] })
            .to_string(),
    )
    .unwrap();
    spec
}

fn versions_of(index_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(index_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("v-"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_killed_api_index_build_leaves_the_old_index_answering() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let spec = shop_project(data);
    run_ok(data, &model, &["api", "index", "--project", "shop"]);
    let index_dir = data.join("indexes/api/project-shop");
    let old_versions = versions_of(&index_dir);
    assert_eq!(old_versions.len(), 1);

    // The spec grows; its re-index is killed while it embeds.
    write_spec(&spec, 600);
    let child = devlens_child(data, &model, &["api", "index", "--project", "shop"]);
    let stderr = kill_when(child, "api index", |line| {
        midway(line, "embedding endpoints")
    });
    assert!(stderr.contains("embedding endpoints"), "{stderr}");

    // The old index is live and whole: status reads it, semantic search answers from it.
    let status = run_json(
        data,
        &model,
        &["api", "status", "--project", "shop", "--json"],
    );
    assert_eq!(status["indexed"], true, "{status}");
    assert_eq!(status["vectorCount"], 4, "{status}");
    assert_eq!(status["stale"], true, "the spec changed since: {status}");
    let found = run_json(
        data,
        &model,
        &[
            "api",
            "search",
            "--project",
            "shop",
            "--query",
            "when is the vet open",
            "--mode",
            "semantic",
            "--json",
        ],
    );
    let first = &found["results"][0];
    assert_eq!(first["operationId"], "showVet", "{found}");
    assert_eq!(
        versions_of(&index_dir),
        old_versions,
        "the killed build left nothing live"
    );

    // The same command again completes, and leaves one version (the killed one's half-written
    // folder and temporary files are cleared).
    run_ok(data, &model, &["api", "index", "--project", "shop"]);
    let status = run_json(
        data,
        &model,
        &["api", "status", "--project", "shop", "--json"],
    );
    assert_eq!(status["vectorCount"], 604, "{status}");
    assert_eq!(status["stale"], false, "{status}");
    let left: Vec<String> = std::fs::read_dir(&index_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left.len(),
        2,
        "CURRENT and one version, nothing else: {left:?}"
    );
}

/// Runs devlens with `DEVLENS_CRASH_AT=point`: the process must die at that point of its
/// write, as a kill landing exactly there would (an abort: nothing flushed, nothing cleaned).
fn run_stopped_at(data_dir: &Path, model: &Path, point: &str, args: &[&str]) {
    use std::os::unix::process::ExitStatusExt as _;
    let output = devlens(data_dir)
        .env("DEVLENS_MODEL_DIR", model)
        .env_remove("EMBEDDING_PROVIDER")
        .env("DEVLENS_CRASH_AT", point)
        .args(args)
        .output()
        .expect("run devlens");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.signal(),
        Some(6),
        "devlens {args:?} should have stopped at {point} (SIGABRT): {:?}\n{stderr}",
        output.status
    );
    assert!(
        stderr.contains(&format!("DEVLENS_CRASH_AT={point}")),
        "{stderr}"
    );
}

fn live_version(index_dir: &Path) -> String {
    std::fs::read_to_string(index_dir.join("CURRENT"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn an_api_index_build_stopped_inside_its_writes_leaves_one_whole_index() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let spec = shop_project(data);
    let index = ["api", "index", "--project", "shop"];
    let status = ["api", "status", "--project", "shop", "--json"];
    run_ok(data, &model, &index);
    let index_dir = data.join("indexes/api/project-shop");
    let old = live_version(&index_dir);
    write_spec(&spec, 20);

    // Stopped with the new version's files written but CURRENT not yet replaced (or replaced
    // only as a temporary file): the old index is the one that answers, whole.
    for point in ["index-version-written", "index-current-pending"] {
        run_stopped_at(data, &model, point, &index);
        assert_eq!(live_version(&index_dir), old, "{point}");
        let now = run_json(data, &model, &status);
        assert_eq!(now["vectorCount"], 4, "{point}: {now}");
        assert_eq!(now["stale"], true, "{point}: {now}");
        let found = run_json(
            data,
            &model,
            &[
                "api",
                "search",
                "--project",
                "shop",
                "--query",
                "when is the vet open",
                "--mode",
                "semantic",
                "--json",
            ],
        );
        assert_eq!(
            found["results"][0]["operationId"], "showVet",
            "{point}: {found}"
        );
    }

    // Stopped right after the switch: the new index answers; the old version is left over.
    run_stopped_at(data, &model, "index-switched", &index);
    assert_ne!(live_version(&index_dir), old);
    let now = run_json(data, &model, &status);
    assert_eq!(
        (now["vectorCount"].as_u64(), now["stale"].as_bool()),
        (Some(24), Some(false)),
        "{now}"
    );

    // A build run to the end clears what the stopped ones left: CURRENT and one version.
    run_ok(
        data,
        &model,
        &["api", "index", "--project", "shop", "--force"],
    );
    let now = run_json(data, &model, &status);
    assert_eq!(now["vectorCount"], 24, "{now}");
    let left: Vec<String> = std::fs::read_dir(&index_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left.len(),
        2,
        "CURRENT and one version, nothing else: {left:?}"
    );
}

// --- docs -----------------------------------------------------------------------------------

/// A one-page docs folder (`old-docs` in `data`, returned) whose page answers with "zebrafish".
fn zebrafish_docs(data: &Path) -> PathBuf {
    let old = data.join("old-docs");
    std::fs::create_dir(&old).unwrap();
    std::fs::write(
        old.join("index.md"),
        "# Widgets\n\n## Refresh interval\n\nThe zebrafish dashboard polls the server every \
         `refreshMs` milliseconds.\n",
    )
    .unwrap();
    old
}

fn write_big_docs(folder: &Path, files: usize) {
    for i in 0..files {
        let sub = folder.join(format!("part{}", i % 20));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("page{i}.md")),
            format!(
                "# Page {i}\n\nThe gearbox module {i} turns the crank {} times a minute.\n\n\
                 ## Tuning {i}\n\nSet `ratio{i}` to {} for a slower crank; the governor keeps \
                 it under {} rotations.\n\n```js\ngearbox.tune({{ ratio: {} }});\n```\n",
                i % 17,
                i % 5 + 1,
                i * 3,
                i % 7
            ),
        )
        .unwrap();
    }
}

#[test]
fn a_killed_docs_ingest_leaves_the_old_version_answering() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let old = zebrafish_docs(data);
    run_ok(
        data,
        &model,
        &[
            "docs",
            "add",
            "/acme/widgets",
            "--path",
            old.to_str().unwrap(),
        ],
    );
    let before = run_json(data, &model, &["docs", "list", "--json"]);

    let big = data.join("big-docs");
    write_big_docs(&big, 300);
    let child = devlens_child(
        data,
        &model,
        &[
            "docs",
            "add",
            "/acme/widgets",
            "--path",
            big.to_str().unwrap(),
        ],
    );
    kill_when(child, "docs add", |line| midway(line, "embedding chunks"));

    let after = run_json(data, &model, &["docs", "list", "--json"]);
    assert_eq!(after, before, "the library is as it was");
    let answer = run_ok(
        data,
        &model,
        &[
            "docs",
            "query",
            "/acme/widgets",
            "how often does the dashboard poll",
        ],
    );
    assert!(answer.contains("zebrafish"), "{answer}");

    run_ok(
        data,
        &model,
        &[
            "docs",
            "add",
            "/acme/widgets",
            "--path",
            big.to_str().unwrap(),
        ],
    );
    let answer = run_ok(
        data,
        &model,
        &["docs", "query", "/acme/widgets", "gearbox 123 crank ratio"],
    );
    assert!(answer.contains("gearbox"), "{answer}");
    assert!(!answer.contains("zebrafish"), "{answer}");
}

fn as_args(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn a_docs_ingest_stopped_before_its_commit_leaves_the_old_version_answering() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let old = zebrafish_docs(data);
    let add = |path: &Path| {
        vec![
            "docs".to_string(),
            "add".into(),
            "/acme/widgets".into(),
            "--path".into(),
            path.display().to_string(),
        ]
    };
    run_ok(data, &model, &as_args(&add(&old)));
    let before = run_json(data, &model, &["docs", "list", "--json"]);

    // Every row of the new version is inserted; the transaction is never committed.
    let big = data.join("big-docs");
    write_big_docs(&big, 20);
    run_stopped_at(data, &model, "docs-before-commit", &as_args(&add(&big)));
    let after = run_json(data, &model, &["docs", "list", "--json"]);
    assert_eq!(after, before, "the library is as it was");
    let answer = run_ok(
        data,
        &model,
        &[
            "docs",
            "query",
            "/acme/widgets",
            "how often does the dashboard poll",
        ],
    );
    assert!(answer.contains("zebrafish"), "{answer}");

    run_ok(data, &model, &as_args(&add(&big)));
    let answer = run_ok(
        data,
        &model,
        &["docs", "query", "/acme/widgets", "gearbox 13 crank ratio"],
    );
    assert!(answer.contains("gearbox"), "{answer}");
    assert!(!answer.contains("zebrafish"), "{answer}");
}

/// Pages whose sections run to several paragraphs, so their chunks get vectors of their own
/// after the version is searchable; one paragraph says "gearbox".
fn long_docs(folder: &Path) {
    std::fs::create_dir_all(folder).unwrap();
    for page in 0..3 {
        let mut text = format!("# Machines {page}\n\n");
        for section in 0..3 {
            text.push_str(&format!("## Part {section}\n\n"));
            for paragraph in 0..3 {
                text.push_str(&format!(
                    "Paragraph {paragraph} of part {section} on page {page} explains how the \
                     machine is assembled, oiled and checked before it is switched on. "
                ));
                text.push_str(&"Every step is written down in the log. ".repeat(5));
                text.push_str("\n\n");
            }
        }
        text.push_str("The gearbox crank ratio is set last.\n");
        std::fs::write(folder.join(format!("machines{page}.md")), text).unwrap();
    }
}

#[test]
fn a_docs_ingest_stopped_while_adding_chunk_vectors_leaves_the_version_searchable() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let docs = data.join("long-docs");
    long_docs(&docs);
    let add = [
        "docs",
        "add",
        "/acme/machines",
        "--path",
        docs.to_str().unwrap(),
    ];
    // The version is stored with its section vectors; the first batch of chunk vectors is
    // written, its transaction never committed.
    run_stopped_at(data, &model, "docs-refine-before-commit", &add);
    let listed = run_json(data, &model, &["docs", "list", "--json"]);
    let refining = &listed["libraries"][0]["refining"][0];
    assert_eq!(refining["stored"], 0, "{listed}");
    assert!(refining["planned"].as_u64().unwrap() > 0, "{listed}");
    let answer = run_ok(
        data,
        &model,
        &["docs", "query", "/acme/machines", "gearbox crank ratio"],
    );
    assert!(answer.contains("gearbox"), "{answer}");
    assert!(
        answer.contains("still adding passage vectors: 0 of"),
        "{answer}"
    );

    // `docs refine` adds what is missing; the answer no longer says it is unfinished.
    let refined = run_ok(data, &model, &["docs", "refine"]);
    assert!(refined.contains("/acme/machines latest"), "{refined}");
    let listed = run_json(data, &model, &["docs", "list", "--json"]);
    assert!(listed["libraries"][0].get("refining").is_none(), "{listed}");
    let answer = run_ok(
        data,
        &model,
        &["docs", "query", "/acme/machines", "gearbox crank ratio"],
    );
    assert!(answer.contains("gearbox"), "{answer}");
    assert!(!answer.contains("still adding"), "{answer}");
}

// --- knowledge base -------------------------------------------------------------------------

fn export_of(solutions: impl Iterator<Item = Value>) -> String {
    json!({ "version": 1, "solutions": solutions.collect::<Vec<_>>() }).to_string()
}

fn solution(id: &str, title: &str, text: String) -> Value {
    json!({
        "id": id, "title": title, "url": null, "text": text, "summary": null,
        "tags": ["crash"], "createdAt": "2025-01-02T03:04:05Z", "updatedAt": "2025-01-02T03:04:05Z"
    })
}

fn many_solutions(count: usize, prefix: &str, text_len: usize) -> impl Iterator<Item = Value> {
    (0..count).map(move |i| {
        let mut text = format!("Fix {i}: the {prefix} flexbox column {i} overflows; ");
        while text.len() < text_len {
            text.push_str(&format!(
                "set min-width {} on item {i} of {prefix}. ",
                i % 11
            ));
        }
        solution(&format!("{prefix}-{i}"), &format!("{prefix} fix {i}"), text)
    })
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn kb_file(data: &Path) -> PathBuf {
    data.join("kb/kb.sqlite")
}

#[test]
fn a_killed_kb_import_leaves_exactly_the_old_solutions() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let small = data.join("small.json");
    std::fs::write(&small, export_of(many_solutions(3, "old", 200))).unwrap();
    run_ok(data, &model, &["kb", "import", small.to_str().unwrap()]);
    let before = run_ok(data, &model, &["kb", "export"]);

    let big = data.join("big.json");
    std::fs::write(&big, export_of(many_solutions(15_000, "new", 1500))).unwrap();
    let wal = kb_file(data).with_extension("sqlite-wal");
    let wal_before = file_len(&wal);
    let child = devlens_child(data, &model, &["kb", "import", big.to_str().unwrap()]);
    // The import is one transaction; its pages spill into the write-ahead log as it goes.
    kill_when(child, "kb import", |_| {
        file_len(&wal) > wal_before + 4 * 1024 * 1024
    });

    let status = run_json(data, &model, &["kb", "status", "--json"]);
    assert_eq!(status["solutions"], 3, "{status}");
    assert_eq!(run_ok(data, &model, &["kb", "export"]), before);

    let imported = run_json(
        data,
        &model,
        &["kb", "import", big.to_str().unwrap(), "--json"],
    );
    assert_eq!(imported["created"], 15_000, "{imported}");
    let status = run_json(data, &model, &["kb", "status", "--json"]);
    assert_eq!(status["solutions"], 15_003, "{status}");
}

#[test]
fn a_killed_reembed_keeps_the_solutions_and_its_finished_batches() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let export = data.join("kb.json");
    std::fs::write(&export, export_of(many_solutions(400, "css", 300))).unwrap();
    run_ok(data, &model, &["kb", "import", export.to_str().unwrap()]);
    let before = run_ok(data, &model, &["kb", "export"]);

    let child = devlens_child(data, &model, &["kb", "reembed"]);
    kill_when(child, "kb reembed", |line| {
        midway(line, "embedding solutions")
    });

    assert_eq!(run_ok(data, &model, &["kb", "export"]), before);
    let status = run_json(data, &model, &["kb", "status", "--json"]);
    assert_eq!(status["solutions"], 400, "{status}");
    let kept = status["embedded"].as_u64().unwrap();
    assert!(kept < 400, "{status}");
    let found = run_ok(data, &model, &["kb", "search", "flexbox column overflows"]);
    assert!(found.contains("css fix"), "{found}");

    // The next run continues where the killed one stopped.
    let report = run_json(data, &model, &["kb", "reembed", "--json"]);
    assert_eq!(report["upToDate"].as_u64(), Some(kept), "{report}");
    assert_eq!(report["embedded"].as_u64(), Some(400 - kept), "{report}");
    let status = run_json(data, &model, &["kb", "status", "--json"]);
    assert_eq!(status["embedded"], 400, "{status}");
}
