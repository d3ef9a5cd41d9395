//! The browser tools end to end: a real rmcp client drives `devlens serve` over stdio, which
//! drives a real headless Chromium against fixture pages served on 127.0.0.1 by this test.
//!
//! One Chromium for the whole file. Without Chromium the test prints a skip notice and passes,
//! unless DEVLENS_REQUIRE_BROWSER=1, where it fails saying what is missing.

use std::time::Duration;

use axum::{
    Json, Router,
    http::StatusCode,
    response::{Html, IntoResponse},
    routing::get,
};
use base64::Engine as _;
use rmcp::{
    ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::{RoleClient, RunningService},
    transport::{ConfigureCommandExt, TokioChildProcess},
};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

const HOME: &str = r#"<!doctype html>
<html><head><title>Fixture Shop</title></head>
<body>
  <h1>Fixture Shop</h1>
  <label for="name">Name</label> <input id="name" name="name">
  <button id="save" type="button">Save</button>
  <p id="out"></p>
  <a href="/second">Second page</a>
  <script>
    console.error("boot failed: missing config");
    fetch("/api/missing").then(r => r.text());
    document.getElementById("save").addEventListener("click", () => {
      document.getElementById("out").textContent = "Saved: " + document.getElementById("name").value;
    });
  </script>
</body></html>"#;

const SECOND: &str = r#"<!doctype html>
<html><head><title>Second page</title></head><body><h1>Second</h1></body></html>"#;

fn router() -> Router {
    Router::new()
        .route("/", get(|| async { Html(HOME) }))
        .route("/second", get(|| async { Html(SECOND) }))
        .route(
            "/api/missing",
            get(|| async {
                (StatusCode::NOT_FOUND, Json(json!({"error": "not here"}))).into_response()
            }),
        )
}

async fn fixture_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind fixture server");
    let addr = listener.local_addr().expect("fixture address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router()).await;
    });
    format!("http://{addr}")
}

/// True when Chromium is available; otherwise skips (or fails under DEVLENS_REQUIRE_BROWSER=1).
fn browser_available() -> bool {
    match devlens_mcp::devlens_browser::find_chrome(None) {
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

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let arguments = args.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls a tool that must succeed; returns its text and structured content.
async fn ok(client: &Client, tool: &str, args: Value) -> (String, Value, CallToolResult) {
    let result = call(client, tool, args).await;
    let text = text_of(&result);
    assert_ne!(result.is_error, Some(true), "{tool} failed: {text}");
    let value = result.structured_content.clone().unwrap_or(Value::Null);
    (text, value, result)
}

/// Calls a tool that must fail; returns the message.
async fn err(client: &Client, tool: &str, args: Value) -> String {
    let result = call(client, tool, args).await;
    let text = text_of(&result);
    assert_eq!(result.is_error, Some(true), "{tool} should fail: {text}");
    text
}

/// The (width, height) of a PNG, checking its signature, header and end.
fn png_size(data: &[u8]) -> (u32, u32) {
    assert!(data.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert_eq!(&data[12..16], b"IHDR", "PNG without a header");
    assert!(data.ends_with(&[0xAE, 0x42, 0x60, 0x82]), "PNG cut short");
    let be = |at: usize| u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    (be(16), be(20))
}

/// The one image of a result, decoded.
fn image_of(result: &CallToolResult) -> Vec<u8> {
    let images: Vec<_> = result.content.iter().filter_map(|c| c.as_image()).collect();
    assert_eq!(images.len(), 1, "expected one image");
    assert_eq!(images[0].mime_type, "image/png");
    base64::engine::general_purpose::STANDARD
        .decode(&images[0].data)
        .expect("image data is base64")
}

/// Whether something still answers at a DevTools endpoint.
async fn devtools_answers(endpoint: &str) -> bool {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .expect("http client");
    client
        .get(format!("{}/json/version", endpoint.trim_end_matches('/')))
        .send()
        .await
        .is_ok()
}

/// Whether a process runs (a zombie waiting to be reaped does not count). Linux only; elsewhere
/// the DevTools endpoint check stands alone.
fn process_running(pid: u64) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_tools_drive_a_real_chromium() {
    if !browser_available() {
        return;
    }
    let base = fixture_server().await;
    let data_dir = tempfile::tempdir().expect("temp dir");
    let bin = assert_cmd::cargo::cargo_bin("devlens");
    let dir = data_dir.path().to_path_buf();
    let transport = TokioChildProcess::new(tokio::process::Command::new(bin).configure(|cmd| {
        cmd.arg("serve")
            .env("DEVLENS_DATA_DIR", &dir)
            .env_remove("DEVLENS_PROJECT")
            .env_remove("PROJECT_NAME")
            .current_dir(&dir);
    }))
    .expect("spawn devlens serve");
    let client: Client = ().serve(transport).await.expect("initialize over stdio");

    let tools = client.list_all_tools().await.expect("tools/list");
    for name in [
        "chrome",
        "chrome_list_connections",
        "chrome_disconnect",
        "target",
        "navigate",
        "query_elements",
        "snapshot",
        "click_element",
        "fill_element",
        "type_text",
        "press_key",
        "hover",
        "select_option",
        "scroll",
        "wait_for",
        "handle_dialog",
        "get_console_logs",
        "list_network_requests",
        "get_network_request",
        "screenshot",
        "evaluate",
        "inject_css",
        "emulate",
    ] {
        assert!(tools.iter().any(|t| t.name == name), "{name} is not listed");
    }

    // Before any browser: a page tool says how to get one.
    let message = err(&client, "navigate", json!({"url": base})).await;
    assert!(message.contains("no browser connected"), "{message}");
    assert!(message.contains("launch"), "{message}");

    let (_, conn, _) = ok(&client, "chrome", json!({"action": "launch"})).await;
    let endpoint = conn["endpoint"].as_str().expect("endpoint").to_string();
    let pid = conn["pid"].as_u64();
    assert_eq!(conn["kind"], "launched", "{conn}");
    assert!(devtools_answers(&endpoint).await);
    let (text, _, _) = ok(&client, "chrome_list_connections", json!({})).await;
    assert!(text.contains(conn["id"].as_str().unwrap()), "{text}");

    // Navigate: final URL, status, title, and the console error of the load.
    let (text, nav, _) = ok(&client, "navigate", json!({"url": format!("{base}/")})).await;
    assert_eq!(nav["status"], 200, "{text}");
    assert_eq!(nav["title"], "Fixture Shop", "{text}");
    assert!(text.contains("boot failed: missing config"), "{text}");

    let (text, list, _) = ok(&client, "query_elements", json!({"selector": "button"})).await;
    assert!(text.contains("Save"), "{text}");
    assert_eq!(list["elements"][0]["tag"], "button", "{list}");
    let message = err(&client, "query_elements", json!({"selector": "li["})).await;
    assert!(message.contains("not a valid CSS selector"), "{message}");

    // Fill by selector, click by snapshot ref, see the page react.
    ok(
        &client,
        "fill_element",
        json!({"element": "#name", "value": "Ada"}),
    )
    .await;
    let (snapshot, _, _) = ok(&client, "snapshot", json!({})).await;
    let save = snapshot
        .lines()
        .find(|l| l.contains("button \"Save\""))
        .and_then(|l| l.split("[ref=").nth(1))
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no ref for the Save button in\n{snapshot}"))
        .to_string();
    ok(&client, "click_element", json!({"element": save})).await;
    let (text, _, _) = ok(&client, "wait_for", json!({"text": "Saved: Ada"})).await;
    assert!(text.contains("Saved: Ada"), "{text}");
    let message = err(&client, "click_element", json!({"element": "#nope"})).await;
    assert!(message.contains("no element matches"), "{message}");

    let (text, logs, _) = ok(&client, "get_console_logs", json!({"level": "error"})).await;
    assert!(text.contains("boot failed: missing config"), "{text}");
    assert_eq!(logs["entries"][0]["level"], "error", "{logs}");

    // The failing request, listed and then read in full. (Chrome's own favicon request may fail
    // too, whenever it happens to run: the URL filter leaves it out.)
    let (text, page, _) = ok(
        &client,
        "list_network_requests",
        json!({"failedOnly": true, "urlContains": "/api/"}),
    )
    .await;
    assert!(
        text.contains("/api/missing") && text.contains("404"),
        "{text}"
    );
    let requests = page["requests"].as_array().expect("requests");
    assert_eq!(requests.len(), 1, "{text}");
    let id = requests[0]["id"].as_u64().expect("request id");
    let (text, _, _) = ok(&client, "get_network_request", json!({"id": id})).await;
    assert!(text.contains("not here"), "{text}");
    let message = err(&client, "get_network_request", json!({"id": 99_999})).await;
    assert!(message.contains("no request"), "{message}");

    // A screenshot comes back as a PNG image of the size the text reports.
    let (text, shot, result) = ok(&client, "screenshot", json!({})).await;
    let png = image_of(&result);
    let (width, height) = png_size(&png);
    assert_eq!(
        (u64::from(width), u64::from(height)),
        (
            shot["width"].as_u64().unwrap(),
            shot["height"].as_u64().unwrap()
        ),
        "{text}"
    );
    assert!(text.contains(&format!("PNG {width}x{height}")), "{text}");
    let saved = data_dir.path().join("shots/page.png");
    let (text, _, result) = ok(
        &client,
        "screenshot",
        json!({"path": saved.display().to_string()}),
    )
    .await;
    assert!(result.content.iter().all(|c| c.as_image().is_none()));
    assert!(text.contains("saved to"), "{text}");
    png_size(&std::fs::read(&saved).expect("saved screenshot"));

    // Live code: a value, a thrown error, CSS with a screenshot of the effect.
    let (_, value, _) = ok(&client, "evaluate", json!({"expression": "document.title"})).await;
    assert_eq!(value["value"], "Fixture Shop", "{value}");
    let (text, value, _) = ok(
        &client,
        "evaluate",
        json!({"expression": "throw new Error('kaput')"}),
    )
    .await;
    assert!(text.contains("threw") && text.contains("kaput"), "{text}");
    assert!(
        value["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("kaput")),
        "{value}"
    );
    let (text, css, result) = ok(
        &client,
        "inject_css",
        json!({"css": "h1 { color: red }", "screenshot": true}),
    )
    .await;
    assert_eq!(css["matchedElements"], 1, "{text}");
    png_size(&image_of(&result));

    // Tabs: open one, see both, close it by title.
    let (text, _, _) = ok(
        &client,
        "target",
        json!({"action": "new", "url": format!("{base}/second")}),
    )
    .await;
    assert!(text.contains("Second page"), "{text}");
    let (text, tabs, _) = ok(&client, "target", json!({"action": "list"})).await;
    assert_eq!(tabs["tabs"].as_array().map(Vec::len), Some(2), "{text}");
    let (text, tabs, _) = ok(
        &client,
        "target",
        json!({"action": "close", "title": "Second"}),
    )
    .await;
    assert_eq!(tabs["tabs"].as_array().map(Vec::len), Some(1), "{text}");
    assert!(text.contains("Fixture Shop"), "{text}");
    let message = err(
        &client,
        "target",
        json!({"action": "switch", "title": "Nope"}),
    )
    .await;
    assert!(message.contains("no tab matches"), "{message}");

    // Disconnecting a launched browser closes it: nothing answers at its endpoint any more.
    let (text, gone, _) = ok(&client, "chrome_disconnect", json!({})).await;
    assert_eq!(gone["browserClosed"], true, "{text}");
    let mut closed = false;
    for _ in 0..50 {
        if !devtools_answers(&endpoint).await {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(closed, "the browser still answers at {endpoint}");
    if let Some(pid) = pid {
        let mut exited = false;
        for _ in 0..50 {
            if !process_running(pid) {
                exited = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(exited, "the browser process {pid} is still running");
    }
    let (text, list, _) = ok(&client, "chrome_list_connections", json!({})).await;
    assert_eq!(
        list["connections"].as_array().map(Vec::len),
        Some(0),
        "{text}"
    );
    let message = err(&client, "snapshot", json!({})).await;
    assert!(message.contains("launch"), "{message}");

    client.cancel().await.expect("close");
}
