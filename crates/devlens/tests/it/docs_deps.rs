//! Docs of the project's own dependencies, as a user meets them in a front-end project: `devlens
//! docs deps` lists what package.json and its lock file name at the installed versions,
//! `resolve` finds them before anyone added them, and the first `query` about one reads its
//! README, docs and type declarations from node_modules (and says so).

use crate::common;

use std::path::{Path, PathBuf};

use common::{devlens, model_dir, stdout_json};
use serde_json::Value;

/// A project scripts/fetch-testdata installs into .testdata/`name` (from tests/`name`), when
/// `marker` is there.
fn fixture_project(name: &str, marker: &str) -> Option<PathBuf> {
    let testdata = std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"));
    let project = testdata.join(name);
    if project.join(marker).is_file() {
        return Some(project);
    }
    if std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() == Ok("1") {
        panic!(
            "{} is missing; run scripts/fetch-testdata",
            project.display()
        );
    }
    eprintln!("skipped: no {name} (run scripts/fetch-testdata)");
    None
}

/// The npm project (tests/npm-project, installed with `npm ci`).
fn npm_project() -> Option<PathBuf> {
    fixture_project("npm-project", "node_modules/zod/package.json")
}

/// The Python project (tests/py-project: a .venv with rich and httpx).
fn py_project() -> Option<PathBuf> {
    fixture_project("py-project", ".venv/pyvenv.cfg")
}

/// devlens run in `project` (its workspace) with the data dir `data`.
fn in_project(data: &Path, project: &Path, model: &Path) -> assert_cmd::Command {
    let mut cmd = devlens(data);
    cmd.current_dir(project).env("DEVLENS_MODEL_DIR", model);
    cmd
}

fn run(data: &Path, project: &Path, model: &Path, args: &[&str]) -> Value {
    stdout_json(in_project(data, project, model).args(args))
}

fn sections(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metadata"]["section"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn dependencies_resolve_and_answer_at_their_installed_versions() {
    let Some(project) = npm_project() else { return };
    let Some(model) = model_dir() else { return };
    let data = tempfile::tempdir().unwrap();
    let data = data.path();

    let deps = run(data, &project, &model, &["docs", "deps", "--json"]);
    let listed: Vec<(String, String, bool)> = deps["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["installed"].as_str().unwrap().to_string(),
                d["ingested"].as_bool().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("@types/express", "5.0.0"),
        ("axios", "1.7.9"),
        ("commander", "12.1.0"),
        ("date-fns", "4.1.0"),
        ("express", "4.21.2"),
        ("got", "14.4.5"),
        ("zod", "3.24.1"),
    ];
    assert_eq!(
        listed,
        expected
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string(), false))
            .collect::<Vec<_>>()
    );
    assert!(deps.get("problems").is_none(), "{deps}");

    // Found by name before anyone added it, with the version the project runs.
    let resolved = run(
        data,
        &project,
        &model,
        &["docs", "resolve", "axios", "--json"],
    );
    assert_eq!(resolved["matches"][0]["id"], "/npm/axios", "{resolved}");
    assert_eq!(resolved["matches"][0]["installed_version"], "1.7.9");

    // The first question reads it from node_modules and says so; the next answers from the store.
    let question = "run a function before every request to attach a token";
    let first = run(
        data,
        &project,
        &model,
        &["docs", "query", "/npm/axios", question, "--json"],
    );
    let notice = first["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("read axios 1.7.9 from node_modules/axios"),
        "{first}"
    );
    assert_eq!(first["library"]["version"], "1.7.9");
    assert!(
        sections(&first).iter().any(|s| s.contains("Interceptors")),
        "{:?}",
        sections(&first)
    );
    let again = run(
        data,
        &project,
        &model,
        &["docs", "query", "/npm/axios", question, "--json"],
    );
    assert!(again.get("notice").is_none(), "{again}");
    assert_eq!(sections(&again), sections(&first));

    // A version the project does not have: the answer says which one it has.
    in_project(data, &project, &model)
        .args([
            "docs",
            "query",
            "/npm/axios",
            question,
            "--version",
            "0.27.2",
        ])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "the workspace has axios 1.7.9 installed, not 0.27.2",
        ));

    // A package whose docs are only its type declarations: sections named after the symbols.
    let types = run(
        data,
        &project,
        &model,
        &[
            "docs",
            "query",
            "/npm/types/express",
            "serve static files from a folder",
            "--json",
        ],
    );
    assert!(
        sections(&types).iter().any(|s| s.ends_with("e.static")),
        "{:?}",
        sections(&types)
    );
    assert!(
        types["context"]
            .as_str()
            .unwrap()
            .contains("serves static files")
    );

    let deps = run(data, &project, &model, &["docs", "deps", "--json"]);
    let ingested: Vec<&str> = deps["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["ingested"] == true)
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(ingested, ["@types/express", "axios"]);

    // `--ingest` reads the rest at once; then the quality gate of the blind golden sets' dev
    // halves (the test halves are reported in docs/library-docs.md, never gated or tuned on):
    // 20 of 24 hits at 5 when the gate was set.
    let done = run(
        data,
        &project,
        &model,
        &["docs", "deps", "--ingest", "--json"],
    );
    assert_eq!(done["already"], 2, "{done}");
    assert_eq!(done["ingested"].as_array().unwrap().len(), 5, "{done}");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../devlens-docs/tests/golden/deps");
    let mut hits = 0.0;
    let mut questions = 0;
    for library in ["axios", "commander", "zod", "date-fns"] {
        let file = golden.join(format!("{library}.dev.tsv"));
        let id = format!("/npm/{library}");
        let report = run(
            data,
            &project,
            &model,
            &[
                "docs",
                "eval",
                "--library",
                &id,
                "--golden",
                file.to_str().unwrap(),
                "--json",
            ],
        );
        let n = report["n"].as_u64().unwrap() as usize;
        hits += report["hit_at_k"].as_f64().unwrap() * n as f64;
        questions += n;
    }
    assert_eq!(questions, 24);
    assert!(
        hits.round() >= 20.0,
        "{hits} of {questions} dev questions hit at 5 (gate: 20)"
    );
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project depending on `widgets`, installed at `version` with `readme`.
fn install_widgets(project: &Path, version: &str, readme: &str) {
    write(
        project,
        "package-lock.json",
        &format!(
            r#"{{"lockfileVersion": 3, "packages": {{"": {{"name": "app"}},
                "node_modules/widgets": {{"version": "{version}"}}}}}}"#
        ),
    );
    write(
        project,
        "node_modules/widgets/package.json",
        &format!(
            r#"{{"name": "widgets", "version": "{version}", "description": "Dashboard widgets"}}"#
        ),
    );
    write(project, "node_modules/widgets/README.md", readme);
}

#[test]
fn a_new_install_is_read_at_its_version_and_a_broken_lock_file_is_named() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (data, project) = (dir.path().join("data"), dir.path().join("app"));
    write(
        &project,
        "package.json",
        r#"{"name": "app", "dependencies": {"widgets": "^1.0.0"}}"#,
    );
    install_widgets(
        &project,
        "1.0.0",
        "# Widgets\n\n## Refresh\n\nWidgets refresh every second.\n",
    );
    let ask = |question: &str| {
        run(
            &data,
            &project,
            &model,
            &["docs", "query", "/npm/widgets", question, "--json"],
        )
    };
    let first = ask("how often do widgets refresh");
    assert!(
        first["context"].as_str().unwrap().contains("every second"),
        "{first}"
    );
    assert!(
        first["notice"]
            .as_str()
            .unwrap()
            .contains("read widgets 1.0.0")
    );

    // `npm install` brings 2.0.0: the next question reads it, and 1.0.0 stays stored.
    install_widgets(
        &project,
        "2.0.0",
        "# Widgets\n\n## Refresh\n\nWidgets refresh every minute since 2.0.\n",
    );
    let second = ask("how often do widgets refresh");
    assert!(
        second["context"].as_str().unwrap().contains("every minute"),
        "{second}"
    );
    assert!(
        second["notice"]
            .as_str()
            .unwrap()
            .contains("read widgets 2.0.0")
    );
    let list = run(&data, &project, &model, &["docs", "list", "--json"]);
    assert_eq!(
        list["libraries"][0]["versions"],
        serde_json::json!(["2.0.0", "1.0.0"]),
        "{list}"
    );

    // A package linked from outside the workspace (`npm link`) is named and not read.
    let elsewhere = dir.path().join("elsewhere");
    write(
        &elsewhere,
        "package.json",
        r#"{"name": "secret", "version": "9.9.9"}"#,
    );
    write(&elsewhere, "README.md", "# Secret\n\nNot the project's.\n");
    write(
        &project,
        "package.json",
        r#"{"name": "app", "dependencies": {"widgets": "^2.0.0", "secret": "*"}}"#,
    );
    std::os::unix::fs::symlink(&elsewhere, project.join("node_modules/secret")).unwrap();
    let deps = run(&data, &project, &model, &["docs", "deps", "--json"]);
    assert!(
        deps["problems"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("secret is linked to a folder outside the workspace"),
        "{deps}"
    );
    assert!(deps["dependencies"][0].get("installed").is_none(), "{deps}");
    in_project(&data, &project, &model)
        .args(["docs", "query", "/npm/secret", "what is it"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("is not installed"));
    write(
        &project,
        "package.json",
        r#"{"name": "app", "dependencies": {"widgets": "^2.0.0"}}"#,
    );

    // Outside any project: says what to do.
    in_project(&data, &data, &model)
        .args(["docs", "deps"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("there is no project folder"));

    // A lock file that cannot be parsed is named with its line; the install still answers.
    write(
        &project,
        "package-lock.json",
        "{\n  \"packages\": {\n    oops\n}\n",
    );
    let deps = run(&data, &project, &model, &["docs", "deps", "--json"]);
    assert_eq!(deps["problems"][0]["file"], "package-lock.json", "{deps}");
    assert!(
        deps["problems"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("line 3:"),
        "{deps}"
    );
    assert_eq!(deps["dependencies"][0]["installed"], "2.0.0");
    let text = in_project(&data, &project, &model)
        .args(["docs", "deps"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("/npm/widgets  widgets  2.0.0  npm  [ingested]"),
        "{text}"
    );
    assert!(
        text.contains("warning: package-lock.json: line 3:"),
        "{text}"
    );
}

#[test]
fn python_dependencies_are_read_from_the_projects_virtualenv() {
    let Some(project) = py_project() else { return };
    let Some(model) = model_dir() else { return };
    let data = tempfile::tempdir().unwrap();
    let data = data.path();
    let python = |args: &[&str]| {
        stdout_json(
            in_project(data, &project, &model)
                .env_remove("VIRTUAL_ENV")
                .args(args),
        )
    };

    let deps = python(&["docs", "deps", "--json"]);
    let listed: Vec<(String, Option<String>, bool)> = deps["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap().to_string(),
                d["installed"].as_str().map(str::to_string),
                d["dev"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("/pypi/httpx".to_string(), Some("0.28.1".to_string()), false),
            ("/pypi/pytest".to_string(), None, true),
            ("/pypi/rich".to_string(), Some("13.9.4".to_string()), false),
        ]
    );
    assert_eq!(deps["dependencies"][0]["declared"], "[http2]==0.28.1");

    // The long description and the modules' docstrings: sections named after the classes.
    let answer = python(&[
        "docs",
        "query",
        "/pypi/rich",
        "print a table with columns",
        "--json",
    ]);
    assert!(
        answer["notice"]
            .as_str()
            .unwrap_or_default()
            .contains("read rich 13.9.4 from the virtualenv's site-packages"),
        "{answer}"
    );
    assert!(
        sections(&answer)
            .iter()
            .any(|s| s.starts_with("rich.table > Table")),
        "{:?}",
        sections(&answer)
    );

    // Declared, not installed: says what to do.
    in_project(data, &project, &model)
        .env_remove("VIRTUAL_ENV")
        .args(["docs", "query", "/pypi/pytest", "run one test"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("is not installed"));

    // A pyproject.toml that cannot be parsed is named with its line.
    let broken = tempfile::tempdir().unwrap();
    write(
        broken.path(),
        "pyproject.toml",
        "[project]\nname = \"x\"\ndependencies = [\n  \"rich\",\n",
    );
    let deps = stdout_json(
        in_project(data, broken.path(), &model)
            .env_remove("VIRTUAL_ENV")
            .args(["docs", "deps", "--json"]),
    );
    assert_eq!(deps["problems"][0]["file"], "pyproject.toml", "{deps}");
    assert!(
        deps["problems"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("line "),
        "{deps}"
    );
}

/// The version of registry crate `name` in devlens' own Cargo.lock: its sources are in Cargo's
/// registry cache wherever devlens was built.
fn workspace_lock_version(name: &str) -> String {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"))
            .unwrap();
    let at = lock
        .find(&format!("name = \"{name}\"\nversion = \""))
        .unwrap_or_else(|| panic!("{name} is not in Cargo.lock"));
    let rest = &lock[at + format!("name = \"{name}\"\nversion = \"").len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

#[test]
fn crates_are_read_from_cargos_registry_cache() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (data, project) = (dir.path().join("data"), dir.path().join("app"));
    let base64 = workspace_lock_version("base64");
    let percent = workspace_lock_version("percent-encoding");
    write(
        &project,
        "Cargo.toml",
        &format!(
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nbase64 = \"{base64}\"\n\
             percent-encoding = \"{percent}\"\nlocal = {{ path = \"../local\" }}\n"
        ),
    );
    let registry = "registry+https://github.com/rust-lang/crates.io-index";
    write(
        &project,
        "Cargo.lock",
        &format!(
            "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n\n[[package]]\n\
             name = \"base64\"\nversion = \"{base64}\"\nsource = \"{registry}\"\n\n[[package]]\n\
             name = \"percent-encoding\"\nversion = \"{percent}\"\nsource = \"{registry}\"\n"
        ),
    );
    let deps = run(&data, &project, &model, &["docs", "deps", "--json"]);
    let listed: Vec<(&str, &str)> = deps["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["id"].as_str().unwrap(), d["installed"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("/crates/base64", base64.as_str()),
            ("/crates/percent-encoding", percent.as_str())
        ],
        "a path dependency is not a library: {deps}"
    );
    let answer = run(
        &data,
        &project,
        &model,
        &[
            "docs",
            "query",
            "/crates/base64",
            "decode a base64 string into bytes",
            "--json",
        ],
    );
    assert!(
        answer["notice"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("read base64 {base64} from Cargo's registry cache")),
        "{answer}"
    );
    assert!(
        sections(&answer)
            .iter()
            .any(|s| s.starts_with("base64::") && s.contains("decode")),
        "{:?}",
        sections(&answer)
    );
}
