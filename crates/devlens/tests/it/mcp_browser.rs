//! The browser tools end to end: a real rmcp client drives `devlens serve` over stdio, which
//! drives a real headless Chromium against fixture pages served on 127.0.0.1 by this test.
//!
//! Most tests share one server and one launched Chromium (connection `main`) and take turns,
//! each in a tab of its own (the active tab belongs to the connection, so two tests at once
//! would steer each other's tab). Two tests start what they need themselves: the connection
//! lifecycle (nothing connected → launch → disconnect closes the browser) and connecting to a
//! Chromium the test starts with a tab already open.
//!
//! Without Chromium every test prints a skip notice and passes, unless
//! DEVLENS_REQUIRE_BROWSER=1, where it fails saying what is missing. MCP_TRACE=1 prints every
//! tool call (with --nocapture) to see where a test stopped.

use crate::common;

use common::mcp::{self, Client, Reply};

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use axum::{
    Json, Router,
    extract::Query,
    http::{StatusCode, header},
    response::{Html, IntoResponse},
    routing::get,
};
use base64::Engine as _;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tokio::sync::{Mutex, OnceCell};

/// Every browser tool the server must list.
const TOOLS: &[&str] = &[
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
    "remove_css",
    "emulate",
    "audit_accessibility",
    "audit_performance",
    "inspect_app_state",
    "inspect_css",
];

// ---------------------------------------------------------------------------------------------
// Fixture pages

/// A page with an image without alt text and a click handler that blocks for 120 ms.
const AUDIT: &str = r#"<!doctype html>
<html lang="en"><head><title>Audit me</title></head>
<body><main>
  <h1>Audit me</h1>
  <img src="/nope.png" width="10" height="10">
  <button id="slow" onclick="const end = performance.now() + 120; while (performance.now() < end) {}">Slow</button>
</main></body></html>"#;

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
    fetch("/api/data").then(r => r.text());
    window.addEventListener("load", function onLoad() { setTimeout(function later() { missingFn(); }, 0); });
    document.getElementById("save").addEventListener("click", () => {
      document.getElementById("out").textContent = "Saved: " + document.getElementById("name").value;
    });
  </script>
</body></html>"#;

const SECOND: &str = r#"<!doctype html>
<html><head><title>Second page</title></head><body><h1>Second</h1></body></html>"#;

const FORM: &str = r#"<!doctype html>
<html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form action="/submit" method="get">
  <label>Email <input name="email" type="email"></label>
  <label>Plan <select name="plan"><option value="free">Free</option><option value="pro">Pro plan</option></select></label>
  <label><input type="checkbox" name="terms" value="yes"> I agree</label>
  <label>Note <textarea name="note"></textarea></label>
  <button type="submit">Create account</button>
</form>
</body></html>"#;

const ACTIONS: &str = r#"<!doctype html>
<html><head><title>Actions</title>
<style>
  .menu { position: relative; }
  .menu .sub { display: none; position: absolute; top: 100%; left: 0; margin: 0; background: #ffd; }
  .menu:hover .sub { display: block; }
</style></head><body>
<div class="menu" style="display:inline-block; padding:8px; background:#eee">Menu
  <ul class="sub"><li>Menu item</li></ul>
</div>
<button id="later" onclick="setTimeout(() => { document.getElementById('out').textContent = 'Done later'; const p = document.createElement('p'); p.id = 'late-el'; p.textContent = 'late element'; document.body.appendChild(p); }, 300)">Later</button>
<p id="out">Waiting</p>
<button id="slow" onclick="fetch('/api/slow').then(r => r.text()).then(t => document.getElementById('fetched').textContent = t)">Slow</button>
<p id="fetched"></p>
<button id="alert" onclick="alert('Saved!'); document.getElementById('answer').textContent = 'alerted'">Alert</button>
<button id="ask" onclick="document.getElementById('answer').textContent = confirm('Delete item?') ? 'deleted' : 'kept'">Delete</button>
<button id="greet" onclick="document.getElementById('answer').textContent = 'Hi ' + prompt('Your name?', 'Ann')">Greet</button>
<p id="answer">none</p>
<input id="search" aria-label="Search" onkeydown="if (event.key === 'Enter') document.getElementById('searched').textContent = 'searched:' + this.value">
<p id="searched"></p>
<div id="spacer" style="height:3000px"></div>
<button id="bottom">Bottom</button>
</body></html>"#;

const STYLED: &str = r#"<!doctype html>
<html><head><title>Styled</title>
<style>body { margin: 0; } #card { width: 120px; height: 80px; background: rgb(0, 136, 204); }</style>
</head><body>
<div id="card">Card</div>
<div style="height:2000px"></div>
</body></html>"#;

fn titled(title: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>\
         <button onclick=\"this.textContent = 'pressed'\">Press</button></body></html>"
    ))
}

/// A frame document: a button that says when it was clicked, and a field.
fn inner(label: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html><head><title>{label} frame</title></head><body style=\"margin:4px\">\
         <button id=\"b\" onclick=\"this.textContent = '{label} clicked'\">{label} button</button>\
         <input id=\"f\" aria-label=\"{label} field\"></body></html>"
    ))
}

/// A page with a same-origin iframe, a same-site cross-origin one (another port: Chrome renders
/// it in the page's process), a cross-site one (`localhost`: its own process) and an open
/// shadow root.
fn frames_page(other: &str, cross: &str) -> Html<String> {
    Html(format!(
        r#"<!doctype html><html><head><title>Frames</title></head><body>
<h1>Frames</h1>
<iframe id="same" src="/inner?label=Same" width="300" height="80"></iframe>
<iframe id="site" src="{other}/inner?label=Sibling" width="300" height="80"></iframe>
<iframe id="cross" src="{cross}/inner?label=Cross" width="300" height="80"></iframe>
<div id="host"></div>
<script>
  document.getElementById('host').attachShadow({{ mode: 'open' }}).innerHTML =
    '<button class="shadow-btn" onclick="this.textContent = \'Shadow clicked\'">Shadow button</button>' +
    '<input class="shadow-input" aria-label="Shadow field">';
</script>
</body></html>"#
    ))
}

async fn submit(Query(q): Query<HashMap<String, String>>) -> Html<String> {
    let mut pairs: Vec<_> = q.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.sort();
    Html(format!(
        "<!doctype html><html><head><title>Thanks</title></head><body><h1>Thanks</h1>\
         <p id=\"result\">{}</p></body></html>",
        pairs.join(";")
    ))
}

/// The JSON `/api/data` answers: large enough that a small maxBodyBytes cuts it.
fn data_body() -> Value {
    let items: Vec<String> = (0..200).map(|i| format!("item-{i:03}")).collect();
    json!({ "items": items, "ok": true })
}

fn router(other: String, cross: String) -> Router {
    Router::new()
        .route("/", get(|| async { Html(HOME) }))
        .route("/second", get(|| async { Html(SECOND) }))
        .route("/form", get(|| async { Html(FORM) }))
        .route("/submit", get(submit))
        .route("/actions", get(|| async { Html(ACTIONS) }))
        .route("/styled", get(|| async { Html(STYLED) }))
        .route("/audit", get(|| async { Html(AUDIT) }))
        .route(
            "/titled",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                titled(q.get("t").map(String::as_str).unwrap_or("Untitled"))
            }),
        )
        .route(
            "/inner",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                inner(q.get("label").map(String::as_str).unwrap_or("Inner"))
            }),
        )
        .route(
            "/frames",
            get(move || async move { frames_page(&other, &cross) }),
        )
        .route(
            "/api/missing",
            get(|| async {
                (StatusCode::NOT_FOUND, Json(json!({"error": "not here"}))).into_response()
            }),
        )
        .route(
            "/api/data",
            get(|| async { ([("x-fixture", "data")], Json(data_body())).into_response() }),
        )
        .route(
            "/api/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(400)).await;
                ([(header::CONTENT_TYPE, "text/plain")], "slow done")
            }),
        )
}

/// Where the fixture pages are: `base` and `other` are two ports of 127.0.0.1 (same site,
/// different origins); `cross` is `other` under the name localhost (another site).
struct Fixtures {
    base: String,
    other: String,
    cross: String,
}

impl Fixtures {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

async fn fixtures() -> Fixtures {
    let a = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind fixture server");
    let b = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind second fixture server");
    let base = format!("http://{}", a.local_addr().expect("address"));
    let port = b.local_addr().expect("address").port();
    let other = format!("http://127.0.0.1:{port}");
    let cross = format!("http://localhost:{port}");
    for listener in [a, b] {
        let app = router(other.clone(), cross.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
    }
    Fixtures { base, other, cross }
}

// ---------------------------------------------------------------------------------------------
// The MCP side

/// `devlens serve` over stdio, with its data in `dir`.
async fn serve(dir: &Path) -> Client {
    mcp::start(dir, &[]).await
}

/// Calls tools; page tools get `conn` as their connectionId unless the call names one.
#[derive(Clone, Copy)]
struct On<'a> {
    client: &'a Client,
    conn: Option<&'a str>,
}

impl On<'_> {
    async fn call(&self, tool: &str, mut args: Value) -> Reply {
        if let (Some(conn), Some(map)) = (self.conn, args.as_object_mut())
            && !matches!(tool, "chrome" | "chrome_list_connections")
            && !map.contains_key("connectionId")
        {
            map.insert("connectionId".into(), json!(conn));
        }
        mcp::call(self.client, tool, args).await
    }

    /// A call that must succeed.
    async fn ok(&self, tool: &str, args: Value) -> Reply {
        let reply = self.call(tool, args.clone()).await;
        assert!(!reply.error, "{tool} {args} failed: {}", reply.text);
        reply
    }

    /// A call that must fail; its message.
    async fn err(&self, tool: &str, args: Value) -> String {
        let reply = self.call(tool, args.clone()).await;
        assert!(reply.error, "{tool} {args} should fail: {}", reply.text);
        reply.text
    }

    /// The value of a JavaScript expression in the active tab.
    async fn eval(&self, expression: &str) -> Value {
        let reply = self
            .ok("evaluate", json!({ "expression": expression }))
            .await;
        assert!(
            reply.data.get("error").is_none(),
            "{expression} threw: {}",
            reply.text
        );
        reply.data["value"].clone()
    }

    /// Opens `url` in a new tab of the connection (it becomes the active one).
    async fn open(&self, url: &str) -> Reply {
        self.ok("target", json!({ "action": "new", "url": url }))
            .await
    }

    /// Closes the active tab.
    async fn close_tab(&self) {
        self.ok("target", json!({ "action": "close" })).await;
    }
}

/// The ref of the first snapshot line containing `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    snapshot
        .lines()
        .find(|l| l.contains(needle))
        .and_then(|l| l.split("[ref=").nth(1))
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no ref on a line with {needle} in\n{snapshot}"))
        .to_string()
}

/// The one image of a result: (MIME type, bytes).
fn image_of(result: &CallToolResult) -> (String, Vec<u8>) {
    let images: Vec<_> = result.content.iter().filter_map(|c| c.as_image()).collect();
    assert_eq!(images.len(), 1, "expected one image");
    let data = base64::engine::general_purpose::STANDARD
        .decode(&images[0].data)
        .expect("image data is base64");
    (images[0].mime_type.clone(), data)
}

/// The (width, height) of a PNG, checking its signature, header and end.
fn png_size(data: &[u8]) -> (u32, u32) {
    assert!(data.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert_eq!(&data[12..16], b"IHDR", "PNG without a header");
    assert!(data.ends_with(&[0xAE, 0x42, 0x60, 0x82]), "PNG cut short");
    let be = |at: usize| u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    (be(16), be(20))
}

/// The (width, height) of a JPEG, from its start-of-frame segment; checks start and end marks.
fn jpeg_size(data: &[u8]) -> (u32, u32) {
    assert!(data.starts_with(&[0xFF, 0xD8]), "not a JPEG");
    assert!(data.ends_with(&[0xFF, 0xD9]), "JPEG cut short");
    let mut i = 2;
    while i + 9 < data.len() {
        assert_eq!(data[i], 0xFF, "JPEG segment without a marker at {i}");
        let marker = data[i + 1];
        let len = usize::from(u16::from_be_bytes([data[i + 2], data[i + 3]]));
        if matches!(marker, 0xC0..=0xC2) {
            let h = u16::from_be_bytes([data[i + 5], data[i + 6]]);
            let w = u16::from_be_bytes([data[i + 7], data[i + 8]]);
            return (u32::from(w), u32::from(h));
        }
        i += 2 + len;
    }
    panic!("JPEG without a frame header");
}

fn reported_size(data: &Value) -> (u32, u32) {
    let n = |k: &str| data[k].as_u64().and_then(|n| u32::try_from(n).ok());
    (n("width").expect("width"), n("height").expect("height"))
}

/// Whether something still answers at a DevTools endpoint.
async fn devtools_answers(endpoint: &str) -> bool {
    let client = crate::common::http::builder()
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

/// Polls `check` every 100 ms for up to `secs` seconds.
async fn eventually<F, Fut>(secs: u64, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..secs * 10 {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

// ---------------------------------------------------------------------------------------------
// The shared server and browser

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("test runtime")
});

/// One `devlens serve` with one launched Chromium (connection `main`), for the tests that take
/// turns on it.
struct Shared {
    client: Client,
    fx: Fixtures,
    _dir: tempfile::TempDir,
    workspace: tempfile::TempDir,
    turn: Mutex<()>,
}

static SHARED: OnceCell<Shared> = OnceCell::const_new();

const MAIN: &str = "main";

/// Runs a test body on the shared server, alone (or skips it when there is no browser).
fn with_shared<F>(body: F)
where
    F: for<'a> FnOnce(
        On<'a>,
        &'a Fixtures,
        &'a Path,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + 'a>>,
{
    if !common::browser_available() {
        return;
    }
    RUNTIME.block_on(async {
        let shared = SHARED
            .get_or_init(|| async {
                let fx = fixtures().await;
                let dir = tempfile::tempdir().expect("temp dir");
                // The project's folder, beside the data dir: where the tools save files.
                let workspace = tempfile::tempdir().expect("temp dir");
                let client = mcp::start(
                    dir.path(),
                    &["--workspace", &workspace.path().display().to_string()],
                )
                .await;
                let on = On {
                    client: &client,
                    conn: None,
                };
                on.ok(
                    "chrome",
                    json!({ "action": "launch", "connectionId": MAIN }),
                )
                .await;
                Shared {
                    client,
                    fx,
                    _dir: dir,
                    workspace,
                    turn: Mutex::new(()),
                }
            })
            .await;
        let _turn = shared.turn.lock().await;
        let on = On {
            client: &shared.client,
            conn: Some(MAIN),
        };
        body(on, &shared.fx, shared.workspace.path()).await;
    });
}

// ---------------------------------------------------------------------------------------------
// Tests

/// Nothing connected: every page tool says how to connect; a launched browser works through the
/// default (active) connection, and disconnecting it closes it — process and endpoint.
#[test]
fn connection_lifecycle_from_nothing_to_launch_to_disconnect() {
    if !common::browser_available() {
        return;
    }
    RUNTIME.block_on(async {
        let fx = fixtures().await;
        let dir = tempfile::tempdir().expect("temp dir");
        let client = serve(dir.path()).await;
        let t = On {
            client: &client,
            conn: None,
        };

        let tools = client.list_all_tools().await.expect("tools/list");
        for name in TOOLS {
            assert!(
                tools.iter().any(|t| t.name == *name),
                "{name} is not listed"
            );
        }

        for (tool, args) in [
            ("navigate", json!({ "url": fx.url("/") })),
            ("snapshot", json!({})),
            ("click_element", json!({ "element": "#save" })),
            ("target", json!({ "action": "list" })),
        ] {
            let message = t.err(tool, args).await;
            assert!(
                message.contains("no browser connected"),
                "{tool}: {message}"
            );
            assert!(
                message.contains("launch") && message.contains("--remote-debugging-port"),
                "{tool}: {message}"
            );
        }
        let list = t.ok("chrome_list_connections", json!({})).await;
        assert_eq!(list.data["connections"], json!([]), "{}", list.text);
        let refused = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let message = t
            .err(
                "chrome",
                json!({ "action": "connect", "endpoint": refused.to_string() }),
            )
            .await;
        assert!(message.contains("cannot connect to Chrome"), "{message}");
        assert!(message.contains("--remote-debugging-port"), "{message}");
        let message = t.err("chrome", json!({ "action": "connect" })).await;
        assert!(message.contains("give endpoint"), "{message}");

        let conn = t.ok("chrome", json!({ "action": "launch" })).await;
        assert_eq!(conn.data["kind"], "launched", "{}", conn.text);
        let endpoint = conn.data["endpoint"]
            .as_str()
            .expect("endpoint")
            .to_string();
        let id = conn.data["id"].as_str().expect("id").to_string();
        let pid = conn.data["pid"].as_u64();
        assert!(devtools_answers(&endpoint).await);
        let list = t.ok("chrome_list_connections", json!({})).await;
        assert!(list.text.contains(&id), "{}", list.text);
        assert_eq!(list.data["connections"][0]["active"], true, "{}", list.text);

        // Without connectionId, page tools use the active connection and its active tab.
        let nav = t.ok("navigate", json!({ "url": fx.url("/second") })).await;
        assert_eq!(nav.data["title"], "Second page", "{}", nav.text);

        let gone = t.ok("chrome_disconnect", json!({})).await;
        assert_eq!(gone.data["browserClosed"], true, "{}", gone.text);
        let at = endpoint.as_str();
        assert!(
            eventually(10, move || async move { !devtools_answers(at).await }).await,
            "the browser still answers at {endpoint}"
        );
        if let Some(pid) = pid {
            assert!(
                eventually(10, || async move { !process_running(pid) }).await,
                "the browser process {pid} is still running"
            );
        }
        let list = t.ok("chrome_list_connections", json!({})).await;
        assert_eq!(list.data["connections"], json!([]), "{}", list.text);
        let message = t.err("snapshot", json!({})).await;
        assert!(message.contains("launch"), "{message}");
        let message = t.err("chrome_disconnect", json!({})).await;
        assert!(message.contains("no browser connected"), "{message}");

        client.cancel().await.expect("close");
    });
}

/// The page view (navigate report, query_elements, snapshot refs), fill + click, the console
/// (errors with stacks, since-last-read) and the network log (a failing request, headers, a
/// bounded body, a body saved to a file).
#[test]
fn page_view_console_and_network() {
    with_shared(|t, fx, dir| {
        Box::pin(async move {
            t.open(&fx.url("/second")).await;
            let nav = t.ok("navigate", json!({ "url": fx.url("/") })).await;
            assert_eq!(nav.data["status"], 200, "{}", nav.text);
            assert_eq!(nav.data["title"], "Fixture Shop", "{}", nav.text);
            assert!(
                nav.text.contains("boot failed: missing config"),
                "{}",
                nav.text
            );

            let list = t
                .ok("query_elements", json!({ "selector": "button" }))
                .await;
            assert!(list.text.contains("Save"), "{}", list.text);
            assert_eq!(list.data["elements"][0]["tag"], "button", "{}", list.text);
            assert_eq!(
                list.data["elements"][0]["selector"], "#save",
                "{}",
                list.text
            );
            let message = t.err("query_elements", json!({ "selector": "li[" })).await;
            assert!(message.contains("not a valid CSS selector"), "{message}");
            let none = t.ok("query_elements", json!({ "selector": "#svae" })).await;
            assert!(
                none.text.contains("no element matches `#svae`"),
                "{}",
                none.text
            );
            assert!(none.text.contains("#save"), "close matches: {}", none.text);

            // Fill by selector, click by snapshot ref, see the page react.
            t.ok(
                "fill_element",
                json!({ "element": "#name", "value": "Ada" }),
            )
            .await;
            let snapshot = t.ok("snapshot", json!({})).await;
            assert!(
                snapshot.text.contains("heading \"Fixture Shop\""),
                "{}",
                snapshot.text
            );
            let save = ref_of(&snapshot.text, "button \"Save\"");
            let click = t.ok("click_element", json!({ "element": save })).await;
            assert!(click.text.contains("clicked button#save"), "{}", click.text);
            let wait = t.ok("wait_for", json!({ "text": "Saved: Ada" })).await;
            assert_eq!(wait.data["met"], true, "{}", wait.text);
            let message = t.err("click_element", json!({ "element": "#svae" })).await;
            assert!(message.contains("no element matches `#svae`"), "{message}");
            assert!(
                message.contains("Did you mean") && message.contains("`#save`"),
                "{message}"
            );
            let message = t.err("click_element", json!({ "element": "e99999" })).await;
            assert!(message.contains("new snapshot"), "{message}");

            // Console: the error of the load and an uncaught exception with its stack.
            let logs = t.ok("get_console_logs", json!({ "level": "error" })).await;
            assert!(
                logs.text.contains("boot failed: missing config"),
                "{}",
                logs.text
            );
            assert!(
                logs.text.contains("missingFn is not defined"),
                "{}",
                logs.text
            );
            let uncaught = logs.data["entries"]
                .as_array()
                .and_then(|e| {
                    e.iter()
                        .find(|e| e["text"].as_str().is_some_and(|t| t.contains("missingFn")))
                })
                .unwrap_or_else(|| panic!("no uncaught error in {}", logs.text));
            assert_eq!(uncaught["uncaught"], true, "{uncaught}");
            assert!(
                uncaught["source"]
                    .as_str()
                    .is_some_and(|s| s.contains(":13:")),
                "where it was thrown: {uncaught}"
            );
            assert!(
                logs.data["entries"]
                    .as_array()
                    .is_some_and(|e| e.iter().all(|e| e["level"] == "error")),
                "{}",
                logs.text
            );
            t.eval("console.warn('after the read'); 1").await;
            let fresh = t
                .ok("get_console_logs", json!({ "sinceLastRead": true }))
                .await;
            assert!(fresh.text.contains("after the read"), "{}", fresh.text);
            assert!(!fresh.text.contains("boot failed"), "{}", fresh.text);

            // The failing request, listed and read in full. (Chrome's own favicon request may
            // fail too, whenever it happens to run: the URL filter leaves it out.)
            let failed = t
                .ok(
                    "list_network_requests",
                    json!({ "failedOnly": true, "urlContains": "/api/" }),
                )
                .await;
            assert!(
                failed.text.contains("/api/missing") && failed.text.contains("404"),
                "{}",
                failed.text
            );
            let requests = failed.data["requests"].as_array().expect("requests");
            assert_eq!(requests.len(), 1, "{}", failed.text);
            let id = requests[0]["id"].as_u64().expect("request id");
            let details = t.ok("get_network_request", json!({ "id": id })).await;
            assert!(details.text.contains("not here"), "{}", details.text);
            assert!(details.text.contains("status: 404"), "{}", details.text);
            let message = t.err("get_network_request", json!({ "id": 99_999 })).await;
            assert!(message.contains("no request"), "{message}");

            // A large response: headers, a body cut where asked, the whole body in a file.
            let data = t
                .ok(
                    "list_network_requests",
                    json!({ "urlContains": "/api/data" }),
                )
                .await;
            let id = data.data["requests"][0]["id"].as_u64().expect("request id");
            let details = t
                .ok(
                    "get_network_request",
                    json!({ "id": format!("#{id}"), "maxBodyBytes": 64 }),
                )
                .await;
            assert!(details.text.contains("x-fixture: data"), "{}", details.text);
            assert!(details.text.contains("cut at"), "{}", details.text);
            let body = &details.data["responseBody"];
            assert_eq!(body["truncated"], true, "{}", details.text);
            assert!(
                body["text"].as_str().is_some_and(|t| t.len() <= 64),
                "{}",
                details.text
            );
            let file = dir.join("bodies/data.json");
            let saved = t
                .ok(
                    "get_network_request",
                    json!({ "id": id, "saveResponseBodyTo": file.display().to_string(), "headers": false }),
                )
                .await;
            assert!(saved.text.contains("saved to"), "{}", saved.text);
            assert!(!saved.text.contains("x-fixture"), "{}", saved.text);
            let written: Value =
                serde_json::from_slice(&std::fs::read(&file).expect("saved body")).expect("JSON");
            assert_eq!(written, data_body());

            t.close_tab().await;
        })
    });
}

/// A form filled field by field — text, select, checkbox, textarea typed key by key — and
/// submitted with Enter; type_text with submit; select_option's answer for a missing option.
#[test]
fn form_fill_select_type_and_submit() {
    with_shared(|t, fx, _| {
        Box::pin(async move {
            t.open(&fx.url("/form")).await;
            t.ok(
                "fill_element",
                json!({ "element": "input[name=email]", "value": "ada@example.com" }),
            )
            .await;
            let picked = t
                .ok(
                    "select_option",
                    json!({ "element": "select[name=plan]", "values": ["Pro plan"] }),
                )
                .await;
            assert!(picked.text.contains("Pro plan"), "{}", picked.text);
            let message = t
                .err(
                    "select_option",
                    json!({ "element": "select[name=plan]", "values": ["Gold"] }),
                )
                .await;
            assert!(message.contains("no option \"Gold\""), "{message}");
            assert!(
                message.contains("Free"),
                "the options are listed: {message}"
            );
            let snapshot = t.ok("snapshot", json!({ "interactiveOnly": true })).await;
            let terms = ref_of(&snapshot.text, "checkbox \"I agree\"");
            t.ok("click_element", json!({ "element": terms })).await;
            t.ok(
                "type_text",
                json!({ "element": "textarea[name=note]", "text": "Hello there" }),
            )
            .await;
            let sent = t
                .ok(
                    "press_key",
                    json!({ "key": "Enter", "element": "input[name=email]" }),
                )
                .await;
            assert!(sent.text.contains("/submit?"), "{}", sent.text);
            assert_eq!(sent.data["status"], 200, "{}", sent.text);
            assert_eq!(sent.data["title"], "Thanks", "{}", sent.text);
            assert_eq!(
                t.eval("document.getElementById('result').textContent")
                    .await,
                "email=ada@example.com;note=Hello there;plan=pro;terms=yes"
            );

            t.ok("navigate", json!({ "url": fx.url("/actions") })).await;
            t.ok(
                "type_text",
                json!({ "element": "#search", "text": "shoes", "submit": true }),
            )
            .await;
            t.ok("wait_for", json!({ "text": "searched:shoes" })).await;
            let message = t.err("press_key", json!({ "key": "Hyperspace" })).await;
            assert!(message.contains("Hyperspace"), "{message}");
            t.close_tab().await;
        })
    });
}

/// Hover reveals hover-only content; scroll by direction and into view; wait_for text, a
/// selector, network idle, and a timeout that says what it waited for; dialogs reported by the
/// action that opened them, then accepted or dismissed.
#[test]
fn hover_scroll_wait_and_dialogs() {
    with_shared(|t, fx, _| {
        Box::pin(async move {
            t.open(&fx.url("/actions")).await;

            let hidden = t
                .ok(
                    "query_elements",
                    json!({ "selector": ".sub li", "visible": true }),
                )
                .await;
            assert_eq!(hidden.data["total"], 0, "{}", hidden.text);
            let hovered = t.ok("hover", json!({ "element": ".menu" })).await;
            assert!(hovered.text.contains("hovered"), "{}", hovered.text);
            let shown = t
                .ok(
                    "query_elements",
                    json!({ "selector": ".sub li", "visible": true }),
                )
                .await;
            assert_eq!(shown.data["total"], 1, "{}", shown.text);
            assert!(shown.text.contains("Menu item"), "{}", shown.text);

            let down = t.ok("scroll", json!({ "direction": "bottom" })).await;
            assert!(
                down.text.contains("scrolled to the bottom"),
                "{}",
                down.text
            );
            assert_eq!(t.eval("scrollY > 2000").await, true);
            t.ok("scroll", json!({ "direction": "top" })).await;
            assert_eq!(t.eval("scrollY").await, 0);
            t.ok("scroll", json!({ "element": "#bottom" })).await;
            assert_eq!(
                t.eval("(() => { const r = document.getElementById('bottom').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()").await,
                true
            );
            let message = t.err("scroll", json!({})).await;
            assert!(message.contains("direction"), "{message}");

            // wait_for: text, selector, network idle, and a timeout saying what it awaited.
            t.ok("click_element", json!({ "element": "#later" })).await;
            let text = t.ok("wait_for", json!({ "text": "Done later" })).await;
            assert_eq!(text.data["met"], true, "{}", text.text);
            let selector = t.ok("wait_for", json!({ "selector": "#late-el" })).await;
            assert!(
                selector.text.contains("`#late-el` to be visible"),
                "{}",
                selector.text
            );
            t.ok("click_element", json!({ "element": "#slow" })).await;
            let idle = t
                .ok(
                    "wait_for",
                    json!({ "networkIdle": true, "timeoutMs": 10000 }),
                )
                .await;
            assert_eq!(idle.data["met"], true, "{}", idle.text);
            assert_eq!(
                t.eval("document.getElementById('fetched').textContent")
                    .await,
                "slow done"
            );
            let message = t
                .err(
                    "wait_for",
                    json!({ "text": "Never shown", "timeoutMs": 300 }),
                )
                .await;
            assert!(message.contains("timed out after"), "{message}");
            assert!(
                message.contains("text \"Never shown\" to appear"),
                "{message}"
            );
            let message = t
                .err(
                    "wait_for",
                    json!({ "selector": "#nowhere", "timeoutMs": 300 }),
                )
                .await;
            assert!(message.contains("`#nowhere` to be visible"), "{message}");
            let message = t.err("wait_for", json!({})).await;
            assert!(message.contains("exactly one condition"), "{message}");

            // Dialogs: the action reports the dialog; the page waits until it is handled.
            let alert = t.ok("click_element", json!({ "element": "#alert" })).await;
            assert_eq!(alert.data["dialog"]["kind"], "alert", "{}", alert.text);
            assert!(
                alert.text.contains("alert dialog open: \"Saved!\""),
                "{}",
                alert.text
            );
            let message = t.err("snapshot", json!({})).await;
            assert!(
                message.contains("dialog is open") && message.contains("handle_dialog"),
                "{message}"
            );
            t.ok("handle_dialog", json!({ "accept": true })).await;
            assert_eq!(
                t.eval("document.getElementById('answer').textContent")
                    .await,
                "alerted"
            );
            let confirm = t.ok("click_element", json!({ "element": "#ask" })).await;
            assert_eq!(
                confirm.data["dialog"]["kind"], "confirm",
                "{}",
                confirm.text
            );
            assert_eq!(
                confirm.data["dialog"]["message"], "Delete item?",
                "{}",
                confirm.text
            );
            t.ok("handle_dialog", json!({ "accept": false })).await;
            assert_eq!(
                t.eval("document.getElementById('answer').textContent")
                    .await,
                "kept"
            );
            t.ok("click_element", json!({ "element": "#ask" })).await;
            t.ok("handle_dialog", json!({ "accept": true })).await;
            assert_eq!(
                t.eval("document.getElementById('answer').textContent")
                    .await,
                "deleted"
            );
            let prompt = t.ok("click_element", json!({ "element": "#greet" })).await;
            assert_eq!(prompt.data["dialog"]["kind"], "prompt", "{}", prompt.text);
            t.ok(
                "handle_dialog",
                json!({ "accept": true, "promptText": "Bob" }),
            )
            .await;
            assert_eq!(
                t.eval("document.getElementById('answer').textContent")
                    .await,
                "Hi Bob"
            );
            let message = t.err("handle_dialog", json!({ "accept": true })).await;
            assert!(message.contains("no dialog is open"), "{message}");
            t.close_tab().await;
        })
    });
}

/// navigate back / forward / reload and a failed load; tabs listed, switched, opened and closed
/// by index, title and URL; a tab that closed itself says what to do.
#[test]
fn navigation_history_and_tabs() {
    with_shared(|t, fx, _| {
        Box::pin(async move {
            t.open(&fx.url("/titled?t=Alpha")).await;
            let second = t.ok("navigate", json!({ "url": fx.url("/second") })).await;
            assert_eq!(second.data["title"], "Second page", "{}", second.text);
            let back = t.ok("navigate", json!({ "action": "back" })).await;
            assert_eq!(back.data["title"], "Alpha", "{}", back.text);
            let forward = t.ok("navigate", json!({ "action": "forward" })).await;
            assert_eq!(forward.data["title"], "Second page", "{}", forward.text);
            t.eval("window.marker = 1; 1").await;
            let reload = t.ok("navigate", json!({ "action": "reload" })).await;
            assert_eq!(reload.data["status"], 200, "{}", reload.text);
            assert_eq!(t.eval("typeof window.marker").await, "undefined");
            let refused = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let message = t
                .err(
                    "navigate",
                    json!({ "url": format!("http://127.0.0.1:{refused}/") }),
                )
                .await;
            assert!(message.contains("ERR_CONNECTION_REFUSED"), "{message}");
            assert!(message.contains("dev server running"), "{message}");
            t.ok("navigate", json!({ "url": fx.url("/titled?t=Alpha") }))
                .await;
            let message = t.err("navigate", json!({})).await;
            assert!(message.contains("give either url"), "{message}");

            // Tabs: Alpha (this one), Beta and Gamma.
            let beta = t.open(&fx.url("/titled?t=Beta")).await;
            assert!(beta.text.contains("Beta"), "{}", beta.text);
            t.open(&fx.url("/titled?t=Gamma")).await;
            let list = t.ok("target", json!({ "action": "list" })).await;
            let tabs = list.data["tabs"].as_array().expect("tabs").clone();
            let index_of = |title: &str| {
                tabs.iter()
                    .find(|t| t["title"] == title)
                    .and_then(|t| t["index"].as_u64())
                    .unwrap_or_else(|| panic!("no tab {title} in {}", list.text))
            };
            let gamma = tabs.iter().find(|t| t["title"] == "Gamma").expect("Gamma");
            assert_eq!(gamma["active"], true, "{}", list.text);

            let switched = t
                .ok(
                    "target",
                    json!({ "action": "switch", "index": index_of("Alpha") }),
                )
                .await;
            assert!(switched.text.contains("switched to"), "{}", switched.text);
            assert_eq!(t.eval("document.title").await, "Alpha");
            t.ok("target", json!({ "action": "switch", "title": "beta" }))
                .await;
            assert_eq!(t.eval("document.title").await, "Beta");
            t.ok("target", json!({ "action": "switch", "url": "t=Gamma" }))
                .await;
            assert_eq!(t.eval("document.title").await, "Gamma");
            let message = t
                .err("target", json!({ "action": "switch", "title": "Nope" }))
                .await;
            assert!(message.contains("no tab matches"), "{message}");
            let message = t.err("target", json!({ "action": "switch" })).await;
            assert!(message.contains("say which tab"), "{message}");

            let closed = t
                .ok("target", json!({ "action": "close", "url": "t=Gamma" }))
                .await;
            assert!(!closed.text.contains("Gamma"), "{}", closed.text);
            let closed = t
                .ok("target", json!({ "action": "close", "title": "Beta" }))
                .await;
            assert!(!closed.text.contains("Beta"), "{}", closed.text);
            let list = t.ok("target", json!({ "action": "list" })).await;
            let alpha = list.data["tabs"]
                .as_array()
                .and_then(|tabs| tabs.iter().find(|t| t["title"] == "Alpha"))
                .and_then(|t| t["index"].as_u64())
                .unwrap_or_else(|| panic!("Alpha is gone: {}", list.text));
            t.ok("target", json!({ "action": "close", "index": alpha }))
                .await;

            // A tab closed behind devlens' back: the next call says so and what to do.
            let doomed = t.open(&fx.url("/titled?t=Doomed")).await;
            let id = doomed.data["tab"]["id"]
                .as_str()
                .expect("tab id")
                .to_string();
            let conns = t.ok("chrome_list_connections", json!({})).await;
            let endpoint = conns.data["connections"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["id"] == MAIN))
                .and_then(|c| c["endpoint"].as_str())
                .expect("endpoint")
                .to_string();
            reqwest::get(format!("{endpoint}/json/close/{id}"))
                .await
                .expect("close the tab over HTTP");
            let mut message = String::new();
            for _ in 0..50 {
                let reply = t.call("snapshot", json!({})).await;
                if reply.error {
                    message = reply.text;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            assert!(message.contains("has been closed"), "{message}");
            assert!(message.contains("switch to another one"), "{message}");
        })
    });
}

/// Screenshots (viewport, element, full page, JPEG, to a file) decode with the size they
/// report; evaluate gives values, console output and thrown errors with stacks; injected CSS
/// shows in computed styles and remove_css takes it away.
#[test]
fn screenshots_and_live_code() {
    with_shared(|t, fx, dir| {
        Box::pin(async move {
            t.open(&fx.url("/styled")).await;

            let shot = t.ok("screenshot", json!({})).await;
            let (mime, png) = image_of(&shot.result);
            assert_eq!(mime, "image/png");
            assert_eq!(png_size(&png), reported_size(&shot.data), "{}", shot.text);
            let (width, _) = png_size(&png);
            assert!(
                shot.text.contains(&format!("PNG {width}x")),
                "{}",
                shot.text
            );

            let card = t.ok("screenshot", json!({ "element": "#card" })).await;
            assert_eq!(
                png_size(&image_of(&card.result).1),
                (120, 80),
                "{}",
                card.text
            );
            let full = t.ok("screenshot", json!({ "fullPage": true })).await;
            let (full_w, full_h) = png_size(&image_of(&full.result).1);
            assert!(full_w > 100 && full_w <= width, "{}", full.text);
            assert!(
                full_h >= 2080,
                "full page is {full_h} px tall: {}",
                full.text
            );
            let jpeg = t
                .ok("screenshot", json!({ "format": "jpeg", "quality": 50 }))
                .await;
            let (mime, data) = image_of(&jpeg.result);
            assert_eq!(mime, "image/jpeg");
            assert_eq!(jpeg_size(&data), reported_size(&jpeg.data), "{}", jpeg.text);
            let message = t
                .err(
                    "screenshot",
                    json!({ "element": "#card", "fullPage": true }),
                )
                .await;
            assert!(message.contains("not both"), "{message}");
            let saved = dir.join("shots/card.png");
            let file = t
                .ok(
                    "screenshot",
                    json!({ "element": "#card", "path": saved.display().to_string() }),
                )
                .await;
            assert!(file.result.content.iter().all(|c| c.as_image().is_none()));
            assert!(file.text.contains("saved to"), "{}", file.text);
            assert_eq!(png_size(&std::fs::read(&saved).expect("saved")), (120, 80));
            let message = t.err("screenshot", json!({ "element": "#nope" })).await;
            assert!(message.contains("no element matches"), "{message}");

            // evaluate: JSON values, console output, a thrown error with its stack.
            let value = t
                .ok(
                    "evaluate",
                    json!({ "expression": "({ n: 1, list: [1, 2], s: 'x', nested: { ok: true } })" }),
                )
                .await;
            assert_eq!(
                value.data["value"],
                json!({ "n": 1, "list": [1, 2], "s": "x", "nested": { "ok": true } }),
                "{}",
                value.text
            );
            let logged = t
                .ok(
                    "evaluate",
                    json!({ "expression": "console.log('from eval', 42); console.error('bad thing'); 7" }),
                )
                .await;
            assert_eq!(logged.data["value"], 7, "{}", logged.text);
            assert!(logged.text.contains("from eval 42"), "{}", logged.text);
            assert!(logged.text.contains("bad thing"), "{}", logged.text);
            let thrown = t
                .ok(
                    "evaluate",
                    json!({ "expression": "function explode() { throw new Error('kaput') }\nexplode()" }),
                )
                .await;
            assert!(
                thrown.text.contains("threw") && thrown.text.contains("kaput"),
                "{}",
                thrown.text
            );
            let stack = thrown.data["error"]["stack"].as_array().expect("a stack");
            assert!(
                stack
                    .iter()
                    .any(|f| f.as_str().is_some_and(|f| f.contains("explode"))),
                "{}",
                thrown.text
            );
            let awaited = t
                .ok(
                    "evaluate",
                    json!({ "expression": "await new Promise(r => setTimeout(() => r('late'), 50))" }),
                )
                .await;
            assert_eq!(awaited.data["value"], "late", "{}", awaited.text);
            let message = t
                .err(
                    "evaluate",
                    json!({ "expression": "while (true) {}", "timeoutMs": 500 }),
                )
                .await;
            assert!(
                message.contains("timed out") && message.contains("stopped"),
                "{message}"
            );
            assert_eq!(t.eval("1 + 1").await, 2, "the page answers again");

            // inject_css: the effect is visible in the computed style; remove_css undoes it.
            let color = "getComputedStyle(document.getElementById('card')).backgroundColor";
            let css = t
                .ok(
                    "inject_css",
                    json!({ "css": "#card { background: rgb(255, 0, 0) !important }", "screenshot": true }),
                )
                .await;
            assert_eq!(css.data["matchedElements"], 1, "{}", css.text);
            png_size(&image_of(&css.result).1);
            assert_eq!(t.eval(color).await, "rgb(255, 0, 0)");
            let id = css.data["id"].as_str().expect("style id").to_string();
            let removed = t.ok("remove_css", json!({ "id": id })).await;
            assert!(
                removed.text.contains(&format!("removed {id}")),
                "{}",
                removed.text
            );
            assert_eq!(removed.data["remaining"], json!([]), "{}", removed.text);
            assert_eq!(t.eval(color).await, "rgb(0, 136, 204)");
            let message = t.err("remove_css", json!({ "id": id })).await;
            assert!(message.contains("no stylesheet"), "{message}");
            let message = t.err("inject_css", json!({ "css": "  " })).await;
            assert!(message.contains("give the CSS"), "{message}");
            t.close_tab().await;
        })
    });
}

/// emulate: the viewport is what the page measures (and what a screenshot shows), the color
/// scheme is what matchMedia answers, CPU and network throttling are accepted and reported,
/// reset undoes everything.
#[test]
fn emulation_changes_what_the_page_sees() {
    with_shared(|t, fx, _| {
        Box::pin(async move {
            t.open(&fx.url("/styled")).await;
            let before = t.eval("[innerWidth, innerHeight]").await;

            let set = t
                .ok(
                    "emulate",
                    json!({ "viewport": { "width": 500, "height": 700 }, "colorScheme": "dark" }),
                )
                .await;
            assert!(set.text.contains("viewport 500x700"), "{}", set.text);
            assert!(
                set.text.contains("prefers-color-scheme: dark"),
                "{}",
                set.text
            );
            assert_eq!(t.eval("[innerWidth, innerHeight]").await, json!([500, 700]));
            assert_eq!(
                t.eval("matchMedia('(prefers-color-scheme: dark)').matches")
                    .await,
                true
            );
            let shot = t.ok("screenshot", json!({})).await;
            assert_eq!(
                png_size(&image_of(&shot.result).1),
                (500, 700),
                "{}",
                shot.text
            );

            let throttled = t
                .ok("emulate", json!({ "cpuSlowdown": 4, "network": "slow-3g" }))
                .await;
            assert!(
                throttled.text.contains("CPU 4x slower"),
                "{}",
                throttled.text
            );
            assert!(throttled.text.contains("slow 3G"), "{}", throttled.text);
            assert!(
                throttled.text.contains("viewport 500x700"),
                "settings add up: {}",
                throttled.text
            );
            let custom = t
                .ok(
                    "emulate",
                    json!({ "network": { "custom": { "latencyMs": 100, "downloadKbps": 1000, "uploadKbps": 500 } } }),
                )
                .await;
            assert!(custom.text.contains("100 ms latency"), "{}", custom.text);
            let now = t.ok("emulate", json!({})).await;
            assert!(now.text.contains("CPU 4x slower"), "{}", now.text);
            let message = t.err("emulate", json!({ "network": "warp-speed" })).await;
            assert!(message.contains("unknown network profile"), "{message}");

            t.ok("emulate", json!({ "reset": true })).await;
            assert_eq!(t.eval("[innerWidth, innerHeight]").await, before);
            assert_eq!(
                t.eval("matchMedia('(prefers-color-scheme: dark)').matches")
                    .await,
                false
            );
            t.close_tab().await;
        })
    });
}

/// A Chromium started by the test with a tab already open: devlens connects to it, lists and
/// uses that tab, disconnects leaving it running — and once it is gone, says to reconnect.
#[test]
fn connect_to_a_running_chromium_with_a_tab_opened_before() {
    with_shared(|t, fx, dir| {
        Box::pin(async move {
            let profile = dir.join("external-profile");
            let chrome = devlens_browser::find_chrome(None).expect("chromium");
            let child = std::process::Command::new(chrome)
                .args([
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                    "--remote-debugging-port=0",
                ])
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg(fx.url("/titled?t=Opened%20before"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("start chromium");
            let mut chromium = KillOnDrop(child);
            let port_file = profile.join("DevToolsActivePort");
            let written = port_file.as_path();
            // The file appears before its port is in it: wait for the port itself.
            let port_in = |path: &std::path::Path| {
                std::fs::read_to_string(path).ok().and_then(|s| {
                    s.lines()
                        .next()
                        .filter(|l| !l.trim().is_empty())
                        .map(str::to_string)
                })
            };
            assert!(
                eventually(20, move || async move { port_in(written).is_some() }).await,
                "Chromium wrote no port to DevToolsActivePort"
            );
            let port = port_in(&port_file).expect("a port");

            let ext = On {
                client: t.client,
                conn: Some("ext"),
            };
            let conn = t
                .ok(
                    "chrome",
                    json!({ "action": "connect", "endpoint": format!("127.0.0.1:{port}"), "connectionId": "ext" }),
                )
                .await;
            assert_eq!(conn.data["kind"], "connected", "{}", conn.text);
            let mut list = String::new();
            for _ in 0..50 {
                list = ext.ok("target", json!({ "action": "list" })).await.text;
                if list.contains("Opened before") {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            assert!(list.contains("Opened before"), "{list}");
            ext.ok(
                "target",
                json!({ "action": "switch", "title": "opened before" }),
            )
            .await;
            // Once, under a full test run's load, the first evaluate after the switch read an
            // empty title (not reproduced since): look again briefly before judging.
            let mut title = ext.eval("document.title").await;
            for _ in 0..20 {
                if title == "Opened before" {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                title = ext.eval("document.title").await;
            }
            assert_eq!(title, "Opened before");
            let snapshot = ext.ok("snapshot", json!({})).await;
            let press = ref_of(&snapshot.text, "button \"Press\"");
            ext.ok("click_element", json!({ "element": press })).await;
            assert_eq!(
                ext.eval("document.querySelector('button').textContent")
                    .await,
                "pressed"
            );

            let all = t.ok("chrome_list_connections", json!({})).await;
            let ids: Vec<&str> = all.data["connections"]
                .as_array()
                .expect("connections")
                .iter()
                .filter_map(|c| c["id"].as_str())
                .collect();
            assert!(ids.contains(&MAIN) && ids.contains(&"ext"), "{}", all.text);

            // Disconnecting leaves a browser devlens did not launch running.
            let gone = ext.ok("chrome_disconnect", json!({})).await;
            assert_eq!(gone.data["browserClosed"], false, "{}", gone.text);
            let endpoint = format!("http://127.0.0.1:{port}");
            assert!(devtools_answers(&endpoint).await, "the browser was closed");
            let message = ext.err("snapshot", json!({})).await;
            assert!(message.contains("no connection `ext`"), "{message}");

            // Once the browser is gone, calls on its connection say to reconnect.
            t.ok(
                "chrome",
                json!({ "action": "connect", "endpoint": endpoint, "connectionId": "ext2" }),
            )
            .await;
            let ext2 = On {
                client: t.client,
                conn: Some("ext2"),
            };
            ext2.ok(
                "target",
                json!({ "action": "switch", "title": "opened before" }),
            )
            .await;
            chromium.kill();
            let mut message = String::new();
            for _ in 0..50 {
                let reply = ext2.call("evaluate", json!({ "expression": "1" })).await;
                if reply.error {
                    message = reply.text;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            assert!(
                message.contains("has closed or crashed") && message.contains("connect again"),
                "{message}"
            );
            ext2.ok("chrome_disconnect", json!({})).await;
        })
    });
}

/// Iframes (same-origin, same-site cross-origin, cross-site) and an open shadow root: their
/// content is in the snapshot with refs that actions use; query_elements and selectors reach
/// into shadow roots and same-origin frames.
#[test]
fn iframes_and_shadow_dom() {
    with_shared(|t, fx, _| {
        Box::pin(async move {
            t.open(&fx.url("/frames")).await;

            let snapshot = t.ok("snapshot", json!({})).await;
            let text = &snapshot.text;
            for line in [
                "iframe \"Same frame\"",
                "iframe \"Sibling frame\"",
                "iframe \"Cross frame\"",
                &format!("{}/inner?label=Cross", fx.cross),
                &format!("{}/inner?label=Sibling", fx.other),
            ] {
                assert!(text.contains(line), "no {line} in\n{text}");
            }
            // Each frame's content sits under its iframe line, indented.
            let lines: Vec<&str> = text.lines().collect();
            let at = |needle: &str| {
                lines
                    .iter()
                    .position(|l| l.contains(needle))
                    .unwrap_or_else(|| panic!("no {needle} in\n{text}"))
            };
            assert_eq!(
                at("iframe \"Cross frame\"") + 1,
                at("button \"Cross button\""),
                "{text}"
            );
            assert!(
                lines[at("button \"Cross button\"")].starts_with("  "),
                "{text}"
            );

            for label in ["Same", "Sibling", "Cross"] {
                let button = ref_of(text, &format!("button \"{label} button\""));
                let click = t.ok("click_element", json!({ "element": button })).await;
                assert!(
                    click.text.contains(&format!("{label} button")),
                    "{}",
                    click.text
                );
                let field = ref_of(text, &format!("textbox \"{label} field\""));
                t.ok(
                    "fill_element",
                    json!({ "element": field, "value": format!("typed in {label}") }),
                )
                .await;
            }
            let after = t.ok("snapshot", json!({})).await;
            for label in ["Same", "Sibling", "Cross"] {
                assert!(
                    after.text.contains(&format!("button \"{label} clicked\"")),
                    "the click reached the {label} frame:\n{}",
                    after.text
                );
                assert!(
                    after.text.contains(&format!("value=\"typed in {label}\"")),
                    "the fill reached the {label} frame:\n{}",
                    after.text
                );
            }
            let cross = ref_of(&after.text, "button \"Cross clicked\"");
            let shot = t.ok("screenshot", json!({ "element": cross })).await;
            let (w, h) = png_size(&image_of(&shot.result).1);
            assert!((40..300).contains(&w) && (10..60).contains(&h), "{w}x{h}");

            // Shadow DOM: in the snapshot, and found by selectors.
            let shadow = ref_of(&after.text, "button \"Shadow button\"");
            t.ok("click_element", json!({ "element": shadow })).await;
            let shadow_text = "document.getElementById('host').shadowRoot.querySelector('.shadow-btn').textContent";
            assert_eq!(t.eval(shadow_text).await, "Shadow clicked");
            let found = t
                .ok("query_elements", json!({ "selector": ".shadow-input" }))
                .await;
            assert_eq!(found.data["total"], 1, "{}", found.text);
            assert!(found.text.contains("shadow roots"), "{}", found.text);
            let selector = found.data["elements"][0]["selector"]
                .as_str()
                .expect("selector")
                .to_string();
            assert!(selector.contains(">>>"), "{selector}");
            t.ok(
                "fill_element",
                json!({ "element": selector, "value": "deep" }),
            )
            .await;
            assert_eq!(
                t.eval("document.getElementById('host').shadowRoot.querySelector('.shadow-input').value").await,
                "deep"
            );
            t.ok("wait_for", json!({ "selector": "#host >>> .shadow-btn" }))
                .await;

            // Same-origin frames are searched too; cross-origin ones only by snapshot ref.
            let in_frame = t.ok("query_elements", json!({ "selector": "#b" })).await;
            assert_eq!(in_frame.data["total"], 1, "{}", in_frame.text);
            assert!(in_frame.text.contains("Same clicked"), "{}", in_frame.text);
            let selector = in_frame.data["elements"][0]["selector"]
                .as_str()
                .expect("selector")
                .to_string();
            assert_eq!(selector, "#same >>> #b");
            t.ok(
                "type_text",
                json!({ "element": "#same >>> #f", "text": "!" }),
            )
            .await;
            assert_eq!(
                t.eval("document.getElementById('same').contentDocument.getElementById('f').value")
                    .await,
                "typed in Same!"
            );
            let all = t
                .ok(
                    "query_elements",
                    json!({ "selector": "button", "pierce": true, "limit": 20 }),
                )
                .await;
            assert!(
                all.text.contains("Shadow clicked") && all.text.contains("Same clicked"),
                "{}",
                all.text
            );
            t.close_tab().await;
        })
    });
}

/// Kills a child process when dropped (a failed test leaves no Chromium behind).
struct KillOnDrop(std::process::Child);

impl KillOnDrop {
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The audit tools over MCP: compact text with structured content, a trace saved inside the
/// workspace (and refused outside it), and a clear answer for a stop without a start.
#[test]
fn audits_over_mcp() {
    with_shared(|t, fx, dir| {
        Box::pin(async move {
            t.open(&fx.url("/audit")).await;
            let a11y = t.ok("audit_accessibility", json!({})).await;
            assert!(a11y.text.contains("image-alt"), "{}", a11y.text);
            assert_eq!(
                a11y.data["violations"][0]["id"], "image-alt",
                "{}",
                a11y.data
            );
            let scoped = t
                .err("audit_accessibility", json!({ "scope": "#nowhere" }))
                .await;
            assert!(scoped.contains("#nowhere"), "{scoped}");

            let saved = dir.join("traces/load.json");
            let trace = t
                .ok(
                    "audit_performance",
                    json!({ "measure": "trace", "saveTrace": saved.display().to_string() }),
                )
                .await;
            assert!(trace.text.starts_with("trace of"), "{}", trace.text);
            assert!(std::fs::metadata(&saved).expect("saved trace").len() > 1000);
            let outside = t
                .err(
                    "audit_performance",
                    json!({ "measure": "trace", "saveTrace": "/etc/devlens-trace.json" }),
                )
                .await;
            assert!(outside.contains("outside"), "{outside}");

            let started = t
                .ok(
                    "audit_performance",
                    json!({ "measure": "profile", "phase": "start" }),
                )
                .await;
            assert!(started.text.contains("phase stop"), "{}", started.text);
            t.ok("click_element", json!({ "element": "#slow" })).await;
            let profile = t
                .ok(
                    "audit_performance",
                    json!({ "measure": "profile", "phase": "stop" }),
                )
                .await;
            assert!(profile.text.starts_with("CPU profile"), "{}", profile.text);
            let none = t
                .err(
                    "audit_performance",
                    json!({ "measure": "profile", "phase": "stop" }),
                )
                .await;
            assert!(none.contains("no profile is recording"), "{none}");

            let css = t
                .ok(
                    "inspect_css",
                    json!({ "element": "#slow", "properties": ["display"] }),
                )
                .await;
            assert!(css.text.contains("display"), "{}", css.text);
            let nothing = t.err("inspect_css", json!({ "element": "#nowhere" })).await;
            assert!(nothing.contains("#nowhere"), "{nothing}");

            let state = t.ok("inspect_app_state", json!({})).await;
            assert!(state.text.contains("no framework"), "{}", state.text);
            let tree = t.err("inspect_app_state", json!({ "view": "tree" })).await;
            assert!(tree.contains("React") && tree.contains("Vue"), "{tree}");
            let globals = t
                .ok("inspect_app_state", json!({ "view": "globals" }))
                .await;
            assert!(!globals.text.contains("localStorage"), "{}", globals.text);

            let memory = t
                .ok(
                    "audit_performance",
                    json!({ "measure": "memory", "heapSnapshot": true, "top": 5 }),
                )
                .await;
            assert!(memory.text.contains("largest retainers"), "{}", memory.text);
            assert!(
                memory.data["heap"]["constructors"]
                    .as_array()
                    .is_some_and(|c| c.len() == 5),
                "{}",
                memory.data
            );
            let misplaced = t
                .err(
                    "audit_performance",
                    json!({ "measure": "trace", "heapSnapshot": true }),
                )
                .await;
            assert!(misplaced.contains("measure memory"), "{misplaced}");

            let vitals = t.ok("audit_performance", json!({ "phase": "stop" })).await;
            assert!(vitals.text.contains("INP"), "{}", vitals.text);
            assert!(vitals.data["cls"].is_number(), "{}", vitals.data);
        })
    });
}
