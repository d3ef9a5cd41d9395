//! The live-coding loop end to end: a real Vite dev server (pinned, from npm) serves a small app
//! from the workspace, Chromium shows it, and an MCP client edits the app's files through
//! devlens — a style change arrives as a hot update with the new computed style, a syntax error
//! as the dev server's overlay naming the workspace file, the fix as the overlay gone. A page
//! without a dev server is reloaded by devlens itself, and its console error names the file.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::{Router, extract::State, http::header, response::IntoResponse, routing::get};
use serde_json::{Value, json};

use common::mcp::{self, Client, Reply, ok};

/// The pinned Vite `scripts/fetch-testdata` installs; `None` means skip (or fail when
/// `DEVLENS_REQUIRE_TESTDATA=1`).
fn vite_bin() -> Option<PathBuf> {
    let testdata = std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"));
    let bin = testdata.join("vite/node_modules/vite/bin/vite.js");
    if bin.is_file() {
        return Some(bin);
    }
    if std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() == Ok("1") {
        panic!("{} is missing; run scripts/fetch-testdata", bin.display());
    }
    eprintln!("skipped: no Vite (run scripts/fetch-testdata)");
    None
}

/// Copies the fixture app into `to`.
fn copy_app(to: &Path) {
    let from = common::fixture("vite-app");
    for file in ["index.html", "src/main.js", "src/label.js", "src/style.css"] {
        std::fs::create_dir_all(to.join(file).parent().unwrap()).unwrap();
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
}

/// `vite <root>` on a free port; killed when dropped.
async fn start_vite(bin: &Path, root: &Path) -> (tokio::process::Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new("node")
        .arg(bin)
        .arg(root)
        .args([
            "--port",
            &port.to_string(),
            "--strictPort",
            "--host",
            "127.0.0.1",
        ])
        .args(["--clearScreen", "false", "--logLevel", "warn"])
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start vite");
    let base = format!("http://127.0.0.1:{port}/");
    let web = crate::common::http::client();
    for _ in 0..200 {
        if web
            .get(&base)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return (child, base);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("vite did not answer at {base}");
}

/// `devlens serve --tools workspace,browser --workspace <root>` over stdio.
async fn devlens(data: &Path, root: &Path) -> Client {
    std::fs::create_dir_all(data).unwrap();
    let root = root.display().to_string();
    mcp::start(
        data,
        &["--tools", "workspace,browser", "--workspace", &root],
    )
    .await
}

fn page(reply: &Reply) -> &Value {
    &reply.data["page"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_reach_a_vite_page_as_hot_updates_overlays_and_recoveries() {
    let Some(vite) = vite_bin() else { return };
    if !common::browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("app");
    copy_app(&root);
    let (_vite, url) = start_vite(&vite, &root).await;
    let client = devlens(&dir.path().join("data"), &root).await;
    ok(&client, "chrome", json!({"action": "launch"})).await;
    let nav = ok(&client, "navigate", json!({"url": url})).await;
    assert_eq!(nav.data["title"], "Counter", "{}", nav.text);

    // A style change: Vite swaps the stylesheet in place; the new color shows.
    let styled = ok(
        &client,
        "edit_file",
        json!({
            "path": "src/style.css",
            "oldText": "rgb(0, 0, 255)",
            "newText": "rgb(255, 0, 0)",
            "page": {"style": {"selector": "h1", "properties": ["color"]}},
        }),
    )
    .await;
    assert_eq!(page(&styled)["arrival"], "hotUpdate", "{}", styled.text);
    assert_eq!(page(&styled)["devServer"], "vite", "{}", styled.text);
    assert_eq!(
        page(&styled)["style"]["color"],
        "rgb(255, 0, 0)",
        "{}",
        styled.text
    );
    assert!(styled.text.contains("hot update (Vite)"), "{}", styled.text);
    assert!(styled.text.contains("No console errors"), "{}", styled.text);

    // A syntax error the browser meets: the console error names the workspace file and line.
    let thrown = ok(
        &client,
        "edit_file",
        json!({"path": "src/main.js", "oldText": "let count = 0;", "newText": "let count = ;"}),
    )
    .await;
    assert_eq!(
        page(&thrown)["arrival"],
        "devServerReload",
        "{}",
        thrown.text
    );
    assert!(thrown.text.contains("SyntaxError"), "{}", thrown.text);
    assert_eq!(
        thrown.data["errorSources"],
        json!(["src/main.js:5"]),
        "{}",
        thrown.text
    );
    ok(
        &client,
        "edit_file",
        json!({"path": "src/main.js", "oldText": "let count = ;", "newText": "let count = 0;"}),
    )
    .await;

    // A syntax error the dev server meets: it refuses the module and shows its overlay, which
    // names the workspace file.
    let broken = ok(
        &client,
        "edit_file",
        json!({"path": "src/main.js", "oldText": "import { label }", "newText": "import { label"}),
    )
    .await;
    let overlay = page(&broken)["overlay"].as_str().unwrap_or_default();
    assert!(overlay.contains("main.js"), "{}", broken.text);
    assert!(broken.text.contains("Error overlay:"), "{}", broken.text);
    let sources: Vec<&str> = broken.data["errorSources"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        sources.iter().any(|s| s.starts_with("src/main.js")),
        "{sources:?}\n{}",
        broken.text
    );

    // The fix: the page recovers and the overlay is gone.
    let fixed = ok(
        &client,
        "edit_file",
        json!({"path": "src/main.js", "oldText": "import { label", "newText": "import { label }"}),
    )
    .await;
    assert!(page(&fixed)["overlay"].is_null(), "{}", fixed.text);
    assert_eq!(page(&fixed)["overlayCleared"], true, "{}", fixed.text);
    assert!(
        fixed.text.contains("The error overlay is gone."),
        "{}",
        fixed.text
    );
    ok(&client, "click_element", json!({"element": "#inc"})).await;
    let label = ok(
        &client,
        "evaluate",
        json!({"expression": "document.getElementById('inc').textContent"}),
    )
    .await;
    assert_eq!(label.data["value"], "clicked 1", "{}", label.text);

    // A file the page does not load: just written, nothing awaited.
    let notes = ok(
        &client,
        "write_file",
        json!({"path": "NOTES.md", "content": "# notes\n"}),
    )
    .await;
    assert!(page(&notes).is_null(), "{}", notes.text);
    // Turned off: written without waiting.
    let quiet = ok(
        &client,
        "edit_file",
        json!({"path": "src/label.js", "oldText": "clicked", "newText": "pressed", "page": {"wait": false}}),
    )
    .await;
    assert!(page(&quiet).is_null(), "{}", quiet.text);
    client.cancel().await.ok();
}

/// Serves `root` as it is on disk now, with no dev server.
async fn serve_folder(root: PathBuf) -> String {
    async fn file(State(root): State<PathBuf>, uri: axum::http::Uri) -> impl IntoResponse {
        let path = match uri.path() {
            "/" => "index.html".to_string(),
            p => p.trim_start_matches('/').to_string(),
        };
        let kind = if path.ends_with(".js") {
            "text/javascript"
        } else {
            "text/html"
        };
        match std::fs::read(root.join(&path)) {
            Ok(body) => ([(header::CONTENT_TYPE, kind)], body).into_response(),
            Err(_) => axum::http::StatusCode::NOT_FOUND.into_response(),
        }
    }
    common::serve_router(Router::new().fallback(get(file)).with_state(root)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_without_a_dev_server_is_reloaded_and_its_errors_name_the_file() {
    if !common::browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("index.html"),
        "<!doctype html><title>Plain</title><p id=out></p><script src=\"/app.js\"></script>",
    )
    .unwrap();
    std::fs::write(
        root.join("app.js"),
        "document.getElementById('out').textContent = 'one';\n",
    )
    .unwrap();
    let base = serve_folder(root.clone()).await;
    let client = devlens(&dir.path().join("data"), &root).await;
    ok(&client, "chrome", json!({"action": "launch"})).await;
    ok(&client, "navigate", json!({"url": base})).await;

    let changed = ok(
        &client,
        "write_file",
        json!({
            "path": "app.js",
            "content": "document.getElementById('out').textContent = 'two';\nconsole.error('missing config');\n",
        }),
    )
    .await;
    assert_eq!(page(&changed)["arrival"], "reloaded", "{}", changed.text);
    assert!(
        changed.text.contains("reloaded by devlens"),
        "{}",
        changed.text
    );
    assert!(changed.text.contains("missing config"), "{}", changed.text);
    assert_eq!(
        changed.data["errorSources"],
        json!(["app.js:2"]),
        "{}",
        changed.text
    );
    let out = ok(
        &client,
        "evaluate",
        json!({"expression": "document.getElementById('out').textContent"}),
    )
    .await;
    assert_eq!(out.data["value"], "two", "{}", out.text);
    client.cancel().await.ok();
}
