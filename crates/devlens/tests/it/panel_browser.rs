//! The dev panel's Browser and Status pages in a real Chromium, as a person beside the agent
//! uses them. A `devlens serve --http` launches its own browser through its REST API (the
//! agent's browser) and loads a fixture page that logs and fetches; a second browser (the
//! viewer, driven over MCP) watches the panel: no browser at first, then the connection, the
//! tab, the console and the requests appearing live — a message logged after the panel opened
//! shows without a reload —, a breakpoint's pause with its stack and locals, Resume, a
//! screenshot. The Status page shows the model, its engine and the index counts. Each page is
//! audited with axe in light and dark; screenshots are kept under `target/tmp/test-artifacts/`.

use crate::common;

use serde_json::{Value, json};

use common::mcp;

/// The agent's page: logs when it starts, fetches JSON, and has a function to break in.
const FIXTURE_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><title>Fixture shop</title><script src="/app.js"></script></head>
<body><h1>Fixture shop</h1></body></html>"#;

/// `total` is on line 3: the breakpoint's line.
const FIXTURE_SCRIPT: &str = r#"function total(price, quantity) {
  const subtotal = price * quantity;
  const withTax = subtotal * 1.2;
  return withTax;
}
console.log('fixture ready');
fetch('/api/items').then((r) => r.json()).then((items) => console.log('items loaded', items.length));
"#;

async fn fixture_server() -> String {
    use axum::{http::header, response::Html, response::IntoResponse, routing::get};
    let router = axum::Router::new()
        .route("/", get(|| async { Html(FIXTURE_PAGE) }))
        .route(
            "/app.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/javascript")],
                    FIXTURE_SCRIPT,
                )
                    .into_response()
            }),
        )
        .route(
            "/api/items",
            get(|| async { axum::Json(json!([{"id": 1}, {"id": 2}])) }),
        );
    common::serve_router(router).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_page_shows_the_agents_browser_live_and_the_status_page_the_indexes() {
    if !common::browser_available() {
        return;
    }
    let Some(model) = common::model_dir() else {
        return;
    };
    let fixture = fixture_server().await;
    let dir = tempfile::tempdir().unwrap();
    common::add_widgets_docs(dir.path());
    // The project's folder, beside the data dir: over HTTP a spec file must lie in it.
    let workspace = tempfile::tempdir().unwrap();
    let spec = workspace.path().join("petstore.json");
    std::fs::copy(common::petstore(), &spec).unwrap();
    let mut server = common::devlens_process(dir.path());
    server
        .env("DEVLENS_MODEL_DIR", &model)
        .env("DEVLENS_WORKSPACE", workspace.path());
    let (_server, base) = common::serve_http(server).await;
    let http = crate::common::http::client();
    let post = |path: &str, body: Value| {
        let request = http.post(format!("{base}{path}")).json(&body);
        async move { common::http::ok(request).await }
    };

    let viewer_dir = tempfile::tempdir().unwrap();
    let viewer = mcp::panel_viewer(viewer_dir.path()).await;
    let step = |tool: &'static str, args: Value| {
        let viewer = &viewer;
        async move { mcp::ok(viewer, tool, args).await }
    };

    // No browser yet: the page says so and how to start one.
    step("navigate", json!({"url": format!("{base}/browser")})).await;
    step("wait_for", json!({"text": "No browser is connected"})).await;
    let said = step(
        "evaluate",
        json!({"expression": "document.querySelector('#no-browser').innerText"}),
    )
    .await;
    assert!(
        said.text.contains("devlens browser launch") && said.text.contains("chrome"),
        "{}",
        said.text
    );

    // The agent's browser starts and loads the fixture: the open panel shows it all, live.
    post("/api/browser/chrome", json!({"action": "launch"})).await;
    step("wait_for", json!({"text": "c1 (active)"})).await;
    post(
        "/api/browser/navigate",
        json!({"url": format!("{fixture}/")}),
    )
    .await;
    step("wait_for", json!({"text": "Fixture shop"})).await;
    step("wait_for", json!({"text": "fixture ready"})).await;
    step("wait_for", json!({"text": "items loaded 2"})).await;
    step("wait_for", json!({"text": "/api/items"})).await;
    let row = step(
        "evaluate",
        json!({"expression": "[...document.querySelectorAll('#network tbody tr')].map((r) => r.innerText).join('\\n')"}),
    )
    .await;
    assert!(
        row.text.contains("GET") && row.text.contains("200") && row.text.contains("Fetch"),
        "{}",
        row.text
    );

    // Logged and fetched after the panel opened: shown without a reload.
    post(
        "/api/browser/evaluate",
        json!({"expression": "console.warn('logged after the panel opened'); fetch('/api/items?again=1')"}),
    )
    .await;
    step("wait_for", json!({"text": "logged after the panel opened"})).await;
    step("wait_for", json!({"text": "again=1"})).await;
    // Watching moved none of the agent's marks: its "since last read" still has everything.
    let unread = post(
        "/api/browser/get_console_logs",
        json!({"sinceLastRead": true}),
    )
    .await;
    assert_eq!(unread["entries"].as_array().unwrap().len(), 3, "{unread}");

    // A screenshot of the agent's tab, on the page.
    step("click_element", json!({"element": "#shoot"})).await;
    step("wait_for", json!({"selector": "#shot", "state": "visible"})).await;
    let shot = step(
        "evaluate",
        json!({"expression": "document.querySelector('#shot').naturalWidth"}),
    )
    .await;
    assert!(
        shot.data["value"].as_u64().unwrap_or(0) > 100,
        "{}",
        shot.text
    );

    // A breakpoint pauses the page: where, the stack and the locals appear.
    post(
        "/api/debugger/breakpoint",
        json!({"action": "set", "url": "app.js", "lineNumber": 3}),
    )
    .await;
    let paused = post(
        "/api/browser/evaluate",
        json!({"expression": "total(20, 3)"}),
    )
    .await;
    assert!(paused.to_string().contains("breakpoint"), "{paused}");
    step("wait_for", json!({"text": "Paused (breakpoint) at total"})).await;
    let locals = step(
        "evaluate",
        json!({"expression": "document.querySelector('#pause-locals').innerText"}),
    )
    .await;
    assert!(
        locals.data["value"].as_str().is_some_and(|table| table
            .lines()
            .any(|row| row.split_whitespace().eq(["subtotal", "60"]))),
        "{}",
        locals.text
    );
    let source = step(
        "evaluate",
        json!({"expression": "document.querySelector('#pause-source').textContent"}),
    )
    .await;
    assert!(
        source.text.contains("→ 3 |   const withTax"),
        "{}",
        source.text
    );
    mcp::audit_panel_page(&viewer, viewer_dir.path(), "browser").await;

    // Step over from the panel: the next line; Resume: running again.
    step("click_element", json!({"element": "[data-step=over]"})).await;
    step("wait_for", json!({"text": "→ 4 |"})).await;
    step("click_element", json!({"element": "#resume"})).await;
    step("wait_for", json!({"text": "The page is running"})).await;
    let (status, after) = common::http::send(
        http.post(format!("{base}/api/debugger/call_stack"))
            .json(&json!({})),
    )
    .await;
    assert!(!status.is_success(), "the page still paused: {after}");

    // The stream the page reads, on its own: the browser view first.
    let mut events = http
        .get(format!("{base}/api/browser/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    let first = String::from_utf8(events.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    assert!(
        first.starts_with("event: browser\ndata: {\"connected\":true"),
        "{first}"
    );
    drop(events);

    // The Status page: the model and its engine, each index's size, the metrics.
    let project = http
        .post(format!("{base}/api/projects"))
        .json(&json!({"name": "pets", "spec": spec}))
        .send()
        .await
        .unwrap();
    assert_eq!(project.status(), 201);
    post("/api/embed/reindex?project=pets", json!({})).await;
    post(
        "/api/kb/solutions",
        json!({"title": "Retry a flaky fetch", "text": "Wrap fetch in a retry with backoff."}),
    )
    .await;
    common::http::ok(http.get(format!(
        "{base}/api/docs/query?library_id=/acme/widgets&query=refresh%20interval"
    )))
    .await;
    step("navigate", json!({"url": format!("{base}/status")})).await;
    step(
        "wait_for",
        // Not just "The model loads": the page's "Reading the status (the model loads if it has
        // not yet)…" matches that too, before the status is there.
        json!({"text": "The model loads: semantic search is on.", "timeoutMs": 30000}),
    )
    .await;
    let facts = step(
        "evaluate",
        json!({"expression": "document.querySelector('#model-facts').innerText"}),
    )
    .await;
    assert!(
        facts.text.contains("all-MiniLM-L6-v2") && facts.text.contains("384"),
        "{}",
        facts.text
    );
    assert!(
        facts.text.contains("Engine")
            && (facts.text.contains("candle") || facts.text.contains("ONNX Runtime")),
        "{}",
        facts.text
    );
    assert!(
        facts.text.contains(&model.display().to_string()),
        "{}",
        facts.text
    );
    let indexes = step(
        "evaluate",
        json!({"expression": "document.querySelector('section[aria-labelledby=indexes-heading]').innerText"}),
    )
    .await;
    for expected in [
        "pets (active)",
        "built",
        "5",
        "1 library",
        "/acme/widgets",
        "1 solution",
    ] {
        assert!(
            indexes.text.contains(expected),
            "{expected}: {}",
            indexes.text
        );
    }
    let metrics = step(
        "evaluate",
        json!({"expression": "document.querySelector('#metrics').innerText"}),
    )
    .await;
    assert!(
        metrics.text.contains("devlens_docs_queries_total") && metrics.text.contains("1 observed"),
        "{}",
        metrics.text
    );
    mcp::audit_panel_page(&viewer, viewer_dir.path(), "status").await;
    step("chrome_disconnect", json!({})).await;
    viewer.cancel().await.unwrap();

    // The same status as text, for a terminal.
    let text = http
        .get(format!("{base}/api/status"))
        .header("accept", "text/plain")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("embedding: local `") && text.contains("knowledge base: 1 solution ("),
        "{text}"
    );
}
