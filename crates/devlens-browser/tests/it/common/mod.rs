//! What the browser tests share: a runtime, fixture pages served on 127.0.0.1, and one headless
//! Chromium per test binary (each test works in its own tab).
//!
//! Without Chromium the tests print a skip notice and pass, unless DEVLENS_REQUIRE_BROWSER=1
//! (CI), where they fail saying what is missing.

// Shared by several test crates, each using a part; test code may unwrap.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::extract::Query;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use axum::{Json, Router};
use devlens_browser::{BrowserSessions, LaunchOptions, Navigation, Tab, TabSelector};
use tokio::sync::OnceCell;

pub const CONN: &str = "shared";

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("test runtime")
});

static SERVER: OnceCell<String> = OnceCell::const_new();
static BROWSER: OnceCell<Arc<BrowserSessions>> = OnceCell::const_new();

/// True when a browser is available; otherwise skips (or fails under
/// DEVLENS_REQUIRE_BROWSER=1).
pub fn browser_available() -> bool {
    match devlens_browser::find_chrome(None) {
        Ok(_) => true,
        Err(e) => {
            if std::env::var("DEVLENS_REQUIRE_BROWSER").as_deref() == Ok("1") {
                panic!("DEVLENS_REQUIRE_BROWSER=1 but no browser: {e}");
            }
            eprintln!("skipping browser test: {e}");
            false
        }
    }
}

/// Runs a future on the shared runtime.
pub fn block_on<F: Future>(f: F) -> F::Output {
    RUNTIME.block_on(f)
}

/// The test environment: the fixture server and the shared browser.
pub struct Env {
    pub sessions: Arc<BrowserSessions>,
    pub base: String,
}

impl Env {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A new tab of the shared browser showing `path`.
    pub async fn open(&self, path: &str) -> Tab {
        let opened = self
            .sessions
            .new_tab(Some(CONN), None)
            .await
            .expect("open a tab");
        let tab = self
            .sessions
            .tab_by(Some(CONN), &TabSelector::Id(opened.tab.id.clone()))
            .await
            .expect("tab handle");
        tab.navigate(&Navigation::Url(self.url(path)), None)
            .await
            .expect("load fixture page");
        tab
    }
}

/// Runs a test body with the shared browser, or skips it when there is no browser.
pub fn with_browser<F, Fut>(body: F)
where
    F: FnOnce(Env) -> Fut,
    Fut: Future<Output = ()>,
{
    if !browser_available() {
        return;
    }
    block_on(async {
        let base = server().await;
        let sessions = BROWSER
            .get_or_init(|| async {
                let sessions = Arc::new(BrowserSessions::new());
                sessions
                    .launch(&LaunchOptions {
                        connection_id: Some(CONN.into()),
                        ..Default::default()
                    })
                    .await
                    .expect("launch the shared browser");
                sessions
            })
            .await
            .clone();
        let start = std::time::Instant::now();
        body(Env { sessions, base }).await;
        eprintln!(
            "TIMING {:?} {:?}",
            std::thread::current().name(),
            start.elapsed()
        );
    });
}

/// A local port nothing listens on (connections to it are refused).
pub fn refused_port() -> u16 {
    static PORT: LazyLock<u16> = LazyLock::new(|| {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port")
    });
    *PORT
}

/// The fixture server's base URL (started once).
pub async fn server() -> String {
    SERVER
        .get_or_init(|| async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind fixture server");
            let addr = listener.local_addr().expect("address");
            tokio::spawn(async move {
                let _ = axum::serve(listener, router()).await;
            });
            format!("http://{addr}")
        })
        .await
        .clone()
}

/// The folder `scripts/fetch-testdata` fills (DEVLENS_TESTDATA, else the repository's .testdata).
pub fn testdata() -> std::path::PathBuf {
    std::env::var_os("DEVLENS_TESTDATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"))
}

/// True when the test data at `rel` exists; otherwise skips (or fails under
/// DEVLENS_REQUIRE_TESTDATA=1).
pub fn testdata_present(rel: &str) -> bool {
    let path = testdata().join(rel);
    if path.exists() {
        return true;
    }
    let msg = format!(
        "test data missing: {} does not exist; run scripts/fetch-testdata",
        path.display()
    );
    assert!(
        std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() != Ok("1"),
        "{msg}"
    );
    eprintln!("skipping: {msg}");
    false
}

/// A file under `root` (no `..`), with its content type by extension.
fn static_file(root: &std::path::Path, rel: &str) -> axum::response::Response {
    if rel.split('/').any(|s| s == ".." || s.is_empty()) {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let path = root.join(rel);
    let Ok(body) = std::fs::read(&path) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let kind = match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript",
        "css" => "text/css",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "application/octet-stream",
    };
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head><body>{body}</body></html>"
    ))
}

fn router() -> Router {
    Router::new()
        .route("/", get(|| async { page("Home", "<h1>Home</h1><a href=\"/form\">Form</a>") }))
        .route("/errors", get(|| async {
            page("Errors page", &ERRORS.replace("REFUSED", &refused_port().to_string()))
        }))
        .route("/app.js", get(|| async {
            ([(header::CONTENT_TYPE, "text/javascript")], APP_JS)
        }))
        .route("/form", get(|| async { page("Sign up", FORM) }))
        .route("/submit", get(submit))
        .route("/elements", get(|| async { page("Elements", &elements()) }))
        .route("/orders", get(|| async { page("Orders", &orders(1000)) }))
        .route("/actions", get(|| async { page("Actions", ACTIONS) }))
        .route("/long", get(|| async {
            page("Long", "<div id=tall style=\"height:3000px;background:linear-gradient(red,blue)\"></div>")
        }))
        .route("/api/data", get(|| async { Json(serde_json::json!({"items": [1, 2, 3], "ok": true})) }))
        .route("/api/big", get(|| async {
            let items: Vec<String> = (0..2000).map(|i| format!("item-{i:05}")).collect();
            Json(serde_json::json!({ "items": items }))
        }))
        .route("/api/echo", post(|body: String| async move { body }))
        .route("/api/slow", get(|| async {
            tokio::time::sleep(Duration::from_millis(400)).await;
            "slow done"
        }))
        .route("/api/fail", get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom") }))
        // A resource that never finishes: its page never fires `load`.
        .route("/api/hang", get(|| async {
            tokio::time::sleep(Duration::from_secs(120)).await;
            "too late"
        }))
        .route("/inner", get(|Query(q): Query<HashMap<String, String>>| async move {
            let label = q.get("label").cloned().unwrap_or_default();
            page(&format!("{label} frame"), &format!(
                "<button id=b onclick=\"this.textContent = '{label} clicked'\">{label} button</button>\
                 <input id=f aria-label=\"{label} field\">"
            ))
        }))
        // Fixture pages under tests/fixtures/pages/, and libraries fetched into the test data
        // (`scripts/fetch-testdata`), e.g. /lib/react/package/umd/react.production.min.js.
        .route("/pages/{*path}", get(|axum::extract::Path(p): axum::extract::Path<String>| async move {
            static_file(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pages"), &p)
        }))
        .route("/lib/{*path}", get(|axum::extract::Path(p): axum::extract::Path<String>| async move {
            static_file(&testdata(), &p)
        }))
        .route("/frames", get(|| async {
            // localhost is another site than 127.0.0.1: Chrome gives that frame its own process.
            let cross = SERVER.get().map(|b| b.replace("127.0.0.1", "localhost")).unwrap_or_default();
            page("Frames", &FRAMES.replace("CROSS", &cross))
        }))
}

const FRAMES: &str = r#"
<h1>Frames</h1>
<iframe id="same" src="/inner?label=Same" width="300" height="80"></iframe>
<iframe id="cross" src="CROSS/inner?label=Cross" width="300" height="80"></iframe>
<div id="host"></div>
<script>
  document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML =
    '<button class="shadow-btn" onclick="this.textContent = \'Shadow clicked\'">Shadow button</button>';
</script>
"#;

async fn submit(Query(q): Query<HashMap<String, String>>) -> impl IntoResponse {
    let mut keys: Vec<_> = q.iter().collect();
    keys.sort();
    let text: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
    page(
        "Thanks",
        &format!("<h1>Thanks</h1><p id=result>{}</p>", text.join(";")),
    )
}

const ERRORS: &str = r#"
<h1>Errors</h1>
<script src="/app.js"></script>
<script>
  console.warn('careful now');
  console.log('hello %s', 'world', { answer: 42 });
  fetch('/api/missing');
  fetch('/api/data');
</script>
<img src="http://127.0.0.1:REFUSED/unreachable.png" alt="broken">
"#;

const APP_JS: &str = r#"
function report() { console.error('boom from app', { code: 42 }); }
report();
window.addEventListener('load', function onLoad() { notDefinedAnywhere(); });
"#;

const FORM: &str = r#"
<h1>Sign up</h1>
<form action="/submit" method="get">
  <label>Email <input name="email" type="email" required></label>
  <label>Password <input name="password" type="password"></label>
  <label>Plan <select name="plan"><option value="free">Free</option><option value="pro">Pro plan</option></select></label>
  <label><input type="checkbox" name="terms" value="yes"> I agree</label>
  <textarea name="note" aria-label="Note"></textarea>
  <input name="short" maxlength="3" aria-label="Short">
  <button type="submit" id="submit">Create account</button>
</form>
"#;

const ACTIONS: &str = r#"
<button id="later" onclick="setTimeout(() => { document.getElementById('out').textContent = 'Done later'; }, 300)">Later</button>
<p id="out">Waiting</p>
<button id="ask" onclick="document.getElementById('answer').textContent = confirm('Delete item?') ? 'deleted' : 'kept'">Delete</button>
<p id="answer">none</p>
<div id="hoverme" onmouseenter="this.textContent = 'hovered!'">Hover me</div>
<button id="hidden-btn" style="display:none">Hidden</button>
<div style="position:relative; display:inline-block"><button id="covered">Covered</button><div id="overlay" style="position:absolute; inset:0; background:rgba(0,0,0,.1)"></div></div>
<input id="search" aria-label="Search" onkeydown="if (event.key === 'Enter') document.getElementById('searched').textContent = 'searched:' + this.value">
<p id="searched"></p>
<button id="err" onclick="nope()">Break</button>
<button id="fetch404" onclick="fetch('/api/missing')">Fetch missing</button>
<button id="slow" onclick="fetch('/api/slow').then(r => r.text()).then(t => document.getElementById('out').textContent = t)">Slow</button>
<a id="go" href="/form">Go to form</a>
<a id="popup" href="/form" target="_blank">Open form in new tab</a>
<div id="spacer" style="height:2000px"></div>
<button id="bottom">Bottom</button>
"#;

/// A big page (7,000 elements): a form, a select, an iframe and a table of `rows` orders.
fn orders(rows: usize) -> String {
    let mut body = String::from(
        "<main><h1>Orders</h1><label>Filter <input type=\"search\" name=\"q\"></label>\
         <label>Status <select name=\"status\">",
    );
    for s in [
        "any",
        "paid",
        "shipped",
        "pending",
        "refunded",
        "cancelled",
        "held",
        "lost",
        "returned",
        "disputed",
        "archived",
        "draft",
    ] {
        body.push_str(&format!("<option>{s}</option>"));
    }
    body.push_str("</select></label><iframe src=\"/inner?label=Help\" width=\"300\" height=\"80\"></iframe>\
        <table><caption>All orders</caption><thead><tr><th>Order</th><th>Customer</th><th>Status</th>\
        <th>Total</th><th>Details</th></tr></thead><tbody>");
    for i in 0..rows {
        let id = 100_001 + i;
        body.push_str(&format!(
            "<tr><td>{id}</td><td>Customer {}</td><td>paid</td><td>{}.99</td>\
             <td><a href=\"/orders/{id}\">Order {id}</a></td></tr>",
            i % 7,
            i % 100
        ));
    }
    body.push_str("</tbody></table></main>");
    body
}

fn elements() -> String {
    let mut items = String::new();
    for i in 1..=30 {
        let hidden = if i % 5 == 0 {
            " style=\"display:none\""
        } else {
            ""
        };
        let special = if i % 7 == 0 { " special" } else { "" };
        items.push_str(&format!(
            "<li class=\"item{special}\" data-n=\"{i}\"{hidden}>Item {i}</li>"
        ));
    }
    format!(
        "<ul id=\"list\">{items}</ul><button id=\"submit\" class=\"btn primary\">Submit</button>"
    )
}

/// PNG or JPEG pixel size.
pub fn image_size(data: &[u8]) -> (u32, u32) {
    devlens_browser::image_size(data).expect("a PNG or JPEG")
}
