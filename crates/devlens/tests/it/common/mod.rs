//! Shared set-up for the end-to-end tests: a private data directory and the fixture spec.

// Shared by several test crates, each using a part; test code may unwrap.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

pub mod http;
pub mod mcp;

use std::path::{Path, PathBuf};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn petstore() -> String {
    fixture("petstore.json").display().to_string()
}

/// A data directory with one project, `pets`, pointing at the petstore fixture.
pub fn data_dir_with_petstore() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let projects = serde_json::json!({
        "projects": [{ "name": "pets", "swaggerUrl": petstore() }]
    });
    std::fs::write(
        dir.path().join("projects.json"),
        serde_json::to_string(&projects).expect("json"),
    )
    .expect("write projects.json");
    dir
}

/// The devlens process with its data in `data_dir`, started there, cleared of the user's
/// environment (project, tool selection, config, workspace, browser path).
pub fn devlens_process(data_dir: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("devlens"));
    cmd.env("DEVLENS_DATA_DIR", data_dir)
        .env_remove("DEVLENS_PROJECT")
        .env_remove("PROJECT_NAME")
        .env_remove("DEVLENS_TOOLS")
        .env_remove("DEVLENS_DYNAMIC_TOOLS")
        .env_remove("DEVLENS_CONFIG")
        .env_remove("DEVLENS_PROJECTS_FILE")
        .env_remove("DEVLENS_WORKSPACE")
        .env_remove("CHROME_PATH")
        .env_remove("DEVLENS_SERVER")
        .env_remove("DEVLENS_DATABASE_URL")
        .current_dir(data_dir);
    cmd
}

/// The devlens command with a private data dir, cleared of the user's environment.
pub fn devlens(data_dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("devlens").expect("devlens binary");
    cmd.env("DEVLENS_DATA_DIR", data_dir)
        .env_remove("DEVLENS_PROJECT")
        .env_remove("PROJECT_NAME")
        .env_remove("DEVLENS_CONFIG")
        .env_remove("DEVLENS_PROJECTS_FILE")
        .env_remove("DEVLENS_SERVER")
        .env_remove("DEVLENS_DATABASE_URL")
        .current_dir(data_dir);
    cmd
}

/// Runs `cmd`, expects success, parses stdout as JSON.
pub fn stdout_json(cmd: &mut assert_cmd::Command) -> serde_json::Value {
    let output = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&output).expect("stdout is JSON")
}

/// The local embedding model folder for tests that need the real model: `DEVLENS_MODEL_DIR`
/// (scripts/test points it at the fetched model). `None` means skip — unless
/// `DEVLENS_REQUIRE_TESTDATA=1`, where a missing model fails the test.
pub fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("DEVLENS_MODEL_DIR").map(PathBuf::from);
    let usable = dir.as_ref().is_some_and(|d| {
        d.join("model.safetensors").is_file() && d.join("tokenizer.json").is_file()
    });
    if usable {
        return dir;
    }
    if std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() == Ok("1") {
        panic!("DEVLENS_MODEL_DIR does not hold the embedding model; run scripts/fetch-testdata");
    }
    eprintln!("skipped: no embedding model (set DEVLENS_MODEL_DIR, see scripts/fetch-testdata)");
    None
}

/// Makes `cmd` find no embedding model anywhere (model dir and Hugging Face cache).
pub fn without_model(cmd: &mut assert_cmd::Command, scratch: &Path) {
    cmd.env("DEVLENS_MODEL_DIR", scratch.join("no-model"))
        .env("HF_HOME", scratch.join("hf"))
        .env("HF_HUB_CACHE", scratch.join("hf/hub"))
        .env_remove("EMBEDDING_PROVIDER");
}

/// Ingests the `/acme/widgets` docs (one page: installation, refresh interval) into `data_dir`.
pub fn add_widgets_docs(data_dir: &Path) {
    let docs = data_dir.join("docs-src");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("index.md"),
        "# Widgets\n\nWidgets render dashboards.\n\n## Installation\n\n```bash\nnpm install \
         @acme/widgets\n```\n\n## Refresh interval\n\nThe dashboard polls the server every \
         `refreshMs` milliseconds.\n",
    )
    .unwrap();
    let mut cmd = devlens(data_dir);
    without_model(&mut cmd, data_dir);
    cmd.args(["docs", "add", "/acme/widgets", "--path"])
        .arg(&docs)
        .args(["--name", "Widgets", "--description", "Dashboard widgets"])
        .assert()
        .success();
}

/// Whether a Chromium is there to test against; with `DEVLENS_REQUIRE_BROWSER=1` a missing
/// browser fails the test instead of skipping it.
pub fn browser_available() -> bool {
    match devlens_browser::find_chrome(None) {
        Ok(_) => true,
        Err(e) => {
            if std::env::var("DEVLENS_REQUIRE_BROWSER").as_deref() == Ok("1") {
                panic!("DEVLENS_REQUIRE_BROWSER=1 but no browser: {e}");
            }
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// Serves `router` on a free 127.0.0.1 port for the rest of the test; returns its base URL.
pub async fn serve_router(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}")
}

/// Serves `page` at `/` and `script` at `/static/app.js` (the page loads it) on a free port;
/// returns the base URL.
pub async fn serve_page_with_script(page: &'static str, script: &'static str) -> String {
    use axum::{http::header, response::Html, response::IntoResponse, routing::get};
    let router = axum::Router::new()
        .route("/", get(move || async move { Html(page) }))
        .route(
            "/static/app.js",
            get(move || async move {
                ([(header::CONTENT_TYPE, "application/javascript")], script).into_response()
            }),
        );
    serve_router(router).await
}

/// Runs `cmd` with `serve --http 127.0.0.1:0` added, waits for the address it announces on
/// stderr, and returns the child (killed when dropped) and the base URL (without `/mcp`).
pub async fn serve_http(cmd: tokio::process::Command) -> (tokio::process::Child, String) {
    serve_http_at(cmd, "127.0.0.1:0").await
}

/// [`serve_http`] on `address` (a server restarted where its clients expect it).
pub async fn serve_http_at(
    mut cmd: tokio::process::Command,
    address: &str,
) -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = cmd
        .args(["serve", "--http", address])
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn devlens serve --http");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let base = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.expect("read stderr") {
            if let Some(rest) = line.split("MCP on ").nth(1) {
                return rest.trim().trim_end_matches("/mcp").to_string();
            }
        }
        panic!("server exited without announcing its address");
    })
    .await
    .expect("server announced its address in time");
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, base)
}
