//! The `devlens kb` commands, as a user or a script runs them, with the `--json` shapes of the
//! CLI contract.

use crate::common;

use std::path::Path;

use common::{devlens, model_dir, without_model};
use predicates::prelude::*;
use serde_json::Value;

fn with_model(data: &Path, model: &Path) -> assert_cmd::Command {
    let mut cmd = devlens(data);
    cmd.env("DEVLENS_MODEL_DIR", model)
        .env_remove("EMBEDDING_PROVIDER");
    cmd
}

fn no_model(data: &Path) -> assert_cmd::Command {
    let mut cmd = devlens(data);
    without_model(&mut cmd, data);
    cmd
}

fn json(cmd: &mut assert_cmd::Command, args: &[&str]) -> Value {
    let out = cmd
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("stdout is JSON")
}

fn keys(value: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

#[test]
fn the_commands_answer_in_the_contract_shapes() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let cmd = || with_model(data, &model);

    let saved = json(
        &mut cmd(),
        &[
            "kb",
            "add",
            "--title",
            "Fix CORS preflight on PUT",
            "--url",
            "https://stackoverflow.com/q/1",
            "--tags",
            "cors,http",
            "--json",
            "--text",
            "The browser sends an OPTIONS preflight before a PUT with a JSON body. Answer it with \
             Access-Control-Allow-Methods: PUT.",
        ],
    );
    let cors_id = saved["solution"]["id"].as_str().unwrap().to_string();
    assert_eq!(saved["embedded"], true);
    std::fs::write(
        data.join("grid.md"),
        "Grid items default to min-width: auto, so a long word widens the track. Use \
         minmax(0, 1fr).",
    )
    .unwrap();
    cmd()
        .args([
            "kb",
            "add",
            "--title",
            "Grid column too wide",
            "--file",
            "grid.md",
            "--tags",
            "css",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("saved "));
    cmd()
        .args(["kb", "add", "--title", "Jest fake timers", "--file", "-"])
        .write_stdin("Awaited promises in timers need await jest.runAllTimersAsync().")
        .assert()
        .success();

    let list = json(&mut cmd(), &["kb", "list", "--json"]);
    assert_eq!(keys(&list), ["solutions"]);
    let solutions = list["solutions"].as_array().unwrap();
    assert_eq!(solutions.len(), 3);
    assert_eq!(
        keys(&solutions[2]),
        ["createdAt", "id", "tags", "title", "updatedAt", "url"]
    );

    let found = json(
        &mut cmd(),
        &[
            "kb",
            "search",
            "the server refuses my PUT from the browser",
            "--json",
        ],
    );
    assert_eq!(found["mode"], "semantic");
    assert!(found["notice"].is_null());
    let first = &found["results"][0];
    assert_eq!(first["id"], cors_id.as_str());
    for key in ["id", "title", "url", "score", "excerpt"] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
    let keyword = json(
        &mut cmd(),
        &[
            "kb", "search", "minmax", "--mode", "keyword", "--top-k", "1", "--json",
        ],
    );
    assert_eq!(keyword["mode"], "keyword");
    assert_eq!(keyword["results"].as_array().unwrap().len(), 1);
    assert_eq!(keyword["results"][0]["title"], "Grid column too wide");

    let asked = json(
        &mut cmd(),
        &["kb", "ask", "PUT request blocked by CORS", "--json"],
    );
    for key in ["context", "sources", "answer"] {
        assert!(asked.get(key).is_some(), "{key} missing in {asked}");
    }
    assert_eq!(
        keys(&asked["sources"][0]),
        ["id", "n", "relevance", "title", "url"]
    );
    assert!(
        asked["context"]
            .as_str()
            .unwrap()
            .starts_with("[1] Fix CORS preflight on PUT")
    );
    assert!(asked["answer"].is_null());

    cmd()
        .args(["kb", "edit", &cors_id, "--tags", "cors"])
        .assert()
        .success();
    cmd()
        .args(["kb", "show", &cors_id])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("tags: cors\n")
                .and(predicate::str::contains("OPTIONS preflight")),
        );
    let status = json(&mut cmd(), &["kb", "status", "--json"]);
    assert_eq!(
        (status["solutions"].as_u64(), status["embedded"].as_u64()),
        (Some(3), Some(3))
    );
    cmd().args(["kb", "rm", &cors_id]).assert().success();
    cmd()
        .args(["kb", "show", &cors_id])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no saved solution has the id"));
}

#[test]
fn export_import_round_trip_and_a_bad_file_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    for (title, text) in [("First note", "Alpha text."), ("Second note", "Beta text.")] {
        no_model(data)
            .args(["kb", "add", "--title", title, "--text", text])
            .assert()
            .success()
            .stdout(predicate::str::contains("saved without an embedding"));
    }
    no_model(data)
        .args(["kb", "export", "--out", "kb.json"])
        .assert()
        .success();
    let exported = std::fs::read_to_string(data.join("kb.json")).unwrap();
    let stdout_export = no_model(data)
        .args(["kb", "export"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(stdout_export).unwrap(), exported);

    let other = tempfile::tempdir().unwrap();
    let report = json(
        &mut no_model(other.path()),
        &[
            "kb",
            "import",
            data.join("kb.json").to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(
        (report["imported"].as_u64(), report["created"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(report["needEmbedding"].as_u64(), Some(2));
    let again = no_model(other.path())
        .args(["kb", "export"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(again).unwrap(), exported);

    std::fs::write(
        data.join("bad.json"),
        "{\"version\":1,\"solutions\":[{\"id\":\"x\"}]}",
    )
    .unwrap();
    no_model(data)
        .args(["kb", "import", "bad.json"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("Nothing was imported"));
    no_model(data)
        .args(["kb", "import", "-"])
        .write_stdin("not json at all")
        .assert()
        .failure()
        .stderr(predicate::str::contains("cannot import stdin"));
    let list = json(&mut no_model(data), &["kb", "list", "--json"]);
    assert_eq!(list["solutions"].as_array().unwrap().len(), 2);
}

#[test]
fn without_a_model_search_says_it_used_keywords_and_bad_input_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    no_model(data)
        .args([
            "kb",
            "add",
            "--title",
            "Jest fake timers",
            "--text",
            "Use jest.runAllTimersAsync().",
        ])
        .assert()
        .success();
    let found = json(
        &mut no_model(data),
        &["kb", "search", "fake timers", "--json"],
    );
    assert_eq!(found["mode"], "keyword");
    assert!(
        found["notice"]
            .as_str()
            .unwrap()
            .contains("devlens model install"),
        "{found}"
    );
    assert_eq!(found["results"].as_array().unwrap().len(), 1);

    no_model(data)
        .args(["kb", "search", "x", "--mode", "fuzzy"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("use semantic, keyword or hybrid"));
    no_model(data)
        .args(["kb", "add", "--title", "No text"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--text TEXT or --file F"));
    no_model(data)
        .args(["kb", "search", "  "])
        .assert()
        .failure()
        .stderr(predicate::str::contains("the query is empty"));
    no_model(data)
        .args(["kb", "reembed"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("devlens model install"));
}

/// `devlens kb bench` (devlens-bench) end to end on the golden corpus and a small generated
/// knowledge base: every figure of its report is there, every mode searched every question, and
/// it worked in a knowledge base of its own, never the user's.
#[test]
fn bench_reports_saves_edits_and_searches_in_a_scratch_knowledge_base() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    // A slice of the golden set: the report's shape is under test, not its figures (the whole
    // set made this the slowest test of the suite, a minute in a debug build).
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../devlens-kb/tests/golden");
    let mut corpus: Value =
        serde_json::from_str(&std::fs::read_to_string(golden.join("solutions.json")).unwrap())
            .unwrap();
    corpus["solutions"].as_array_mut().unwrap().truncate(12);
    let corpus_file = dir.path().join("corpus.json");
    std::fs::write(&corpus_file, corpus.to_string()).unwrap();
    let questions: Vec<String> = std::fs::read_to_string(golden.join("queries.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .take(10)
        .map(str::to_string)
        .collect();
    let queries_file = dir.path().join("queries.tsv");
    std::fs::write(&queries_file, questions.join("\n")).unwrap();
    let report = json(
        &mut with_model(data, &model),
        &[
            "kb",
            "bench",
            "--corpus",
            corpus_file.to_str().unwrap(),
            "--queries",
            queries_file.to_str().unwrap(),
            "--solutions",
            "30",
            "--json",
        ],
    );
    assert_eq!(
        keys(&report),
        [
            "corpus",
            "edits",
            "engine",
            "model",
            "modelLoadMs",
            "saves",
            "search"
        ]
    );
    assert_eq!(report["saves"]["n"], 12, "{report}");
    assert_eq!(report["edits"]["n"], 12, "{report}");
    // An edit that adds a paragraph at the end embeds some chunks again, not all of them.
    let (again, all) = (
        report["edits"]["embeddedChunks"].as_u64().unwrap(),
        report["edits"]["chunks"].as_u64().unwrap(),
    );
    assert!(again > 0 && again < all, "{report}");
    assert_eq!(report["corpus"]["solutions"], 30, "{report}");
    assert_eq!(report["corpus"]["embedded"], 30, "{report}");
    let questions = questions.len() as u64;
    let modes: Vec<&str> = report["search"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            assert_eq!(m["queries"].as_u64(), Some(questions), "{report}");
            assert!(m["p50Ms"].as_f64().unwrap() > 0.0, "{report}");
            m["mode"].as_str().unwrap()
        })
        .collect();
    assert_eq!(modes, ["semantic", "keyword", "hybrid"], "{report}");
    // The user's knowledge base was not touched.
    let list = json(&mut with_model(data, &model), &["kb", "list", "--json"]);
    assert_eq!(list["solutions"].as_array().unwrap().len(), 0, "{list}");
}
