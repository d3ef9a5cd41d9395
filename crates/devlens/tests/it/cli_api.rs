//! The `devlens api` and `devlens project` commands, as a user or a script runs them.

use crate::common;

use common::{data_dir_with_petstore, devlens, fixture, petstore};
use predicates::prelude::*;
use serde_json::{Value, json};

/// Runs devlens with `args`, expects success, and parses stdout as JSON.
fn json_stdout(dir: &std::path::Path, args: &[&str]) -> Value {
    let output = devlens(dir)
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&output).expect("stdout is JSON")
}

#[test]
fn tags_lists_names_descriptions_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let value = json_stdout(
        dir.path(),
        &["api", "tags", "--spec", &petstore(), "--json"],
    );
    let tags = value["tags"].as_array().unwrap();
    assert_eq!(tags[0]["name"], "pets");
    assert_eq!(tags[0]["endpoints"], 4);
    assert_eq!(tags[1]["name"], "store");
    assert!(
        tags[0]["description"]
            .as_str()
            .unwrap()
            .starts_with("Everything")
    );

    devlens(dir.path())
        .args(["api", "tags", "--spec", &petstore()])
        .assert()
        .success()
        .stdout(predicate::str::contains("pets (4)"));
}

#[test]
fn endpoints_of_a_tag_with_the_contract_shape() {
    let dir = tempfile::tempdir().unwrap();
    let value = json_stdout(
        dir.path(),
        &[
            "api",
            "endpoints",
            "--spec",
            &petstore(),
            "--tag",
            "pets",
            "--json",
        ],
    );
    let endpoints = value["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 4);
    assert_eq!(endpoints[0]["method"], "GET");
    assert_eq!(endpoints[0]["path"], "/pets");
    assert_eq!(endpoints[0]["operationId"], "listPets");
    assert_eq!(endpoints[0]["summary"], "List all pets");
}

#[test]
fn show_resolves_refs_by_operation_id_and_by_method_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let details = json_stdout(
        dir.path(),
        &[
            "api",
            "show",
            "--spec",
            &petstore(),
            "--operation-id",
            "createPet",
            "--json",
        ],
    );
    assert_eq!(details["method"], "POST");
    assert_eq!(details["path"], "/pets");
    let body = &details["requestBody"];
    assert_eq!(body["contentType"], "application/json");
    assert_eq!(body["schema"]["properties"]["name"]["type"], "string");
    assert!(details["responses"]["201"]["schema"].is_object());

    let details = json_stdout(
        dir.path(),
        &[
            "api",
            "show",
            "--spec",
            &petstore(),
            "--method",
            "get",
            "--path",
            "/pets/{petId}",
            "--json",
        ],
    );
    assert_eq!(details["operationId"], "showPetById");
    let params = details["parameters"].as_array().unwrap();
    assert_eq!(params[0]["name"], "petId");
    assert_eq!(params[0]["in"], "path");
    assert_eq!(params[0]["required"], true);
    // Pet.parent refers to Pet: the cycle is marked, not expanded forever.
    let text = serde_json::to_string(&details["responses"]).unwrap();
    assert!(text.contains("cycle") || text.contains("$ref"), "{text}");
}

#[test]
fn search_ranks_by_question_and_filters_by_method() {
    let dir = tempfile::tempdir().unwrap();
    let value = json_stdout(
        dir.path(),
        &[
            "api",
            "search",
            "--spec",
            &petstore(),
            "--query",
            "adopt a pet",
            "--json",
        ],
    );
    assert_eq!(value["mode"], "keyword");
    assert_eq!(value["results"][0]["operationId"], "createPet");
    assert!(value["results"][0]["score"].as_f64().unwrap() > 0.0);

    let value = json_stdout(
        dir.path(),
        &[
            "api",
            "search",
            "--spec",
            &petstore(),
            "--tag",
            "pets",
            "--method",
            "DELETE",
            "--json",
        ],
    );
    let results = value["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["operationId"], "deletePet");
}

#[test]
fn projects_replace_spec_and_the_active_project_is_used_by_default() {
    let dir = tempfile::tempdir().unwrap();
    devlens(dir.path())
        .args(["project", "add", "petstore", &petstore()])
        .assert()
        .success();
    devlens(dir.path())
        .args(["api", "tags", "--project", "petstore"])
        .assert()
        .success()
        .stdout(predicate::str::contains("pets (4)"));
    // The only project is the active one.
    devlens(dir.path())
        .args(["api", "tags"])
        .assert()
        .success()
        .stdout(predicate::str::contains("store (1)"));
    devlens(dir.path())
        .args(["project", "list", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"active\": \"petstore\""));
}

#[test]
fn unknown_operation_id_suggests_close_ones() {
    let dir = data_dir_with_petstore();
    devlens(dir.path())
        .args([
            "api",
            "show",
            "--project",
            "pets",
            "--operation-id",
            "listPet",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("listPets"));
}

#[test]
fn unknown_project_and_missing_project_say_what_to_do() {
    let dir = data_dir_with_petstore();
    devlens(dir.path())
        .args(["api", "tags", "--project", "petz"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("unknown project 'petz'"))
        .stderr(predicate::str::contains("pets"));
    let empty = tempfile::tempdir().unwrap();
    devlens(empty.path())
        .args(["api", "tags"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("devlens project add"));
}

#[test]
fn malformed_yaml_reports_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    devlens(dir.path())
        .args([
            "api",
            "tags",
            "--spec",
            &fixture("broken.yaml").display().to_string(),
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("line"))
        .stderr(predicate::str::contains("column"));
}

#[test]
fn missing_file_and_unreachable_url_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    devlens(dir.path())
        .args(["api", "tags", "--spec", "no/such/spec.json"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("not found"));
    devlens(dir.path())
        .args(["api", "tags", "--spec", "http://127.0.0.1:9/openapi.json"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("127.0.0.1:9"));
}

#[test]
fn a_document_that_is_not_openapi_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("package.json");
    std::fs::write(&path, r#"{"name": "not-a-spec", "version": "1.0.0"}"#).unwrap();
    devlens(dir.path())
        .args(["api", "tags", "--spec", &path.display().to_string()])
        .assert()
        .failure()
        .stderr(predicate::str::contains("OpenAPI"));
}

#[test]
fn search_arguments_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    devlens(dir.path())
        .args([
            "api",
            "search",
            "--spec",
            &petstore(),
            "--query",
            "pets",
            "--limit",
            "99",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("between 1 and 50"));
    devlens(dir.path())
        .args([
            "api",
            "search",
            "--spec",
            &petstore(),
            "--query",
            "pets",
            "--method",
            "HEAD",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("GET, POST, PUT, PATCH, DELETE"));
    devlens(dir.path())
        .args([
            "api",
            "search",
            "--spec",
            &petstore(),
            "--query",
            "pets",
            "--mode",
            "fuzzy",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("semantic, keyword or hybrid"));
}

#[test]
fn bench_reports_load_index_memory_and_latency() {
    let dir = tempfile::tempdir().unwrap();
    let report = json_stdout(
        dir.path(),
        &[
            "api",
            "bench",
            "--spec",
            &petstore(),
            "--runs",
            "2",
            "--queries",
            "20",
            "--json",
        ],
    );
    assert_eq!(report["operations"], 5);
    assert_eq!(report["queries"], 20);
    assert!(report["peakRssMib"].as_f64().unwrap() > 0.0);
}

#[test]
fn semantic_index_build_status_search_and_eval_with_the_local_model() {
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let output = devlens(dir.path())
            .env("DEVLENS_MODEL_DIR", &model)
            .env_remove("EMBEDDING_PROVIDER")
            .args(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice::<Value>(&output).expect("stdout is JSON")
    };
    let spec = petstore();

    let status = run(&["api", "status", "--spec", &spec, "--json"]);
    assert_eq!(status["indexed"], false);

    let built = run(&["api", "index", "--spec", &spec, "--json"]);
    assert_eq!(built["embedded"], 5);
    assert_eq!(built["vectorCount"], 5);
    assert_eq!(built["dims"], 384);
    assert_eq!(built["provider"], "local");
    let again = run(&["api", "index", "--spec", &spec, "--json"]);
    assert_eq!(
        (again["embedded"].clone(), again["reused"].clone()),
        (json!(0), json!(5))
    );

    let status = run(&["api", "status", "--spec", &spec, "--json"]);
    for key in [
        "indexed",
        "vectorCount",
        "dims",
        "model",
        "builtAt",
        "swaggerHash",
        "stale",
    ] {
        assert!(status.get(key).is_some(), "status lacks {key}: {status}");
    }
    assert_eq!(status["stale"], false);

    // Wording that shares no keyword with the summary ("Adopt a new pet into the store").
    let found = run(&[
        "api",
        "search",
        "--spec",
        &spec,
        "--query",
        "bring a new dog home",
        "--mode",
        "semantic",
        "--limit",
        "2",
        "--details",
        "--json",
    ]);
    assert_eq!(found["mode"], "semantic");
    assert_eq!(found["results"][0]["operationId"], "createPet");
    assert_eq!(found["results"][0]["details"]["method"], "POST");
    let hybrid = run(&[
        "api",
        "search",
        "--spec",
        &spec,
        "--query",
        "get rid of a pet",
        "--json",
    ]);
    assert_eq!(hybrid["mode"], "hybrid");
    assert_eq!(hybrid["results"][0]["operationId"], "deletePet");

    let golden = dir.path().join("golden.tsv");
    std::fs::write(
        &golden,
        "# question, TAB, answers\nget rid of a pet\tdeletePet\nbuy something for my pet\tplaceOrder\n",
    )
    .unwrap();
    let golden = golden.display().to_string();
    for mode in ["keyword", "semantic", "hybrid"] {
        let report = run(&[
            "api", "eval", "--spec", &spec, "--golden", &golden, "--mode", mode, "--json",
        ]);
        for key in ["n", "top1", "top3", "top5", "mrr", "p50_ms", "p95_ms"] {
            assert!(report.get(key).is_some(), "eval lacks {key}: {report}");
        }
        assert_eq!(report["n"], 2);
        assert_eq!(report["mode"], mode);
    }
}

#[test]
fn without_a_model_search_falls_back_and_index_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let spec = petstore();
    let mut search = devlens(dir.path());
    common::without_model(&mut search, dir.path());
    let output = search
        .args([
            "api",
            "search",
            "--spec",
            &spec,
            "--query",
            "remove a pet",
            "--mode",
            "semantic",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let value: Value = serde_json::from_slice(&output).unwrap();
    assert_eq!(value["mode"], "keyword");
    assert!(
        value["notice"]
            .as_str()
            .unwrap()
            .contains("devlens api index")
    );
    assert_eq!(value["results"][0]["operationId"], "deletePet");

    let mut index = devlens(dir.path());
    common::without_model(&mut index, dir.path());
    index
        .args(["api", "index", "--spec", &spec])
        .assert()
        .failure()
        .stderr(predicate::str::contains("devlens model install"));

    let mut status = devlens(dir.path());
    common::without_model(&mut status, dir.path());
    status
        .args(["model", "status"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("not installed"));
}

#[test]
fn model_install_from_a_folder_and_bad_golden_files() {
    let dir = tempfile::tempdir().unwrap();
    if let Some(model) = common::model_dir() {
        let mut install = devlens(dir.path());
        common::without_model(&mut install, dir.path());
        let output = install
            .args(["model", "install", "--from"])
            .arg(&model)
            .arg("--json")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let value: Value = serde_json::from_slice(&output).unwrap();
        assert_eq!(value["installed"], true);
        assert_eq!(value["dims"], 384);
        assert!(
            dir.path()
                .join("models/all-MiniLM-L6-v2/model.safetensors")
                .is_file()
        );
    }
    let mut bad = devlens(dir.path());
    common::without_model(&mut bad, dir.path());
    bad.args(["model", "install", "--from", "nowhere"])
        .assert()
        .failure();

    let golden = dir.path().join("golden.tsv");
    std::fs::write(&golden, "a question without answers\n").unwrap();
    devlens(dir.path())
        .args(["api", "eval", "--spec", &petstore(), "--golden"])
        .arg(&golden)
        .assert()
        .failure()
        .stderr(predicate::str::contains("line 1"));
}

#[test]
fn index_all_builds_every_project_and_says_which_failed() {
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = data_dir_with_petstore();
    let spec = dir.path().join("gone.json");
    std::fs::copy(petstore(), &spec).unwrap();
    devlens(dir.path())
        .args(["project", "add", "gone", &spec.display().to_string()])
        .assert()
        .success();
    std::fs::remove_file(&spec).unwrap();
    let output = devlens(dir.path())
        .env("DEVLENS_MODEL_DIR", &model)
        .env_remove("EMBEDDING_PROVIDER")
        .args(["api", "index", "--all"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(output).unwrap();
    assert!(text.starts_with("re-indexed 1 of 2 projects"), "{text}");
    assert!(
        text.contains("pets: 5 vectors (5 embedded, 0 reused)"),
        "{text}"
    );
    assert!(text.contains("gone: failed:"), "{text}");
    devlens(dir.path())
        .args(["api", "index", "--all", "--project", "pets"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("cannot be used with"));
}
