//! Live API traffic against the contract, end to end: a fixture Shop API (axum, here) whose
//! answers break its spec (crates/devlens-openapi/tests/fixtures/shop.yaml) in each way a
//! front end meets — a wrong type, a value outside an enum, a missing required field, an extra
//! field, an undocumented status, an undocumented endpoint and method — and a page that calls
//! it. A real Chromium loads the page; `check_api_traffic` over MCP must name exactly those
//! findings; a HAR file of the same session (recorded by the fixture) must give the same ones
//! on the CLI. `call_endpoint` is driven with each kind of credential against the fixture.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::{
    Router,
    body::Bytes,
    extract::{Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{Html, IntoResponse, Response},
    routing::get,
};
use serde_json::{Value, json};

use common::mcp;

const SHOP_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><title>Shop</title></head>
<body><main><h1>Shop</h1><p id="status">loading</p></main>
<script>
(async () => {
  const get = (url) => fetch(url).then((r) => r.text());
  await get('/api/products?limit=10&sort=price');
  await get('/api/products/7');
  await get('/api/products/999');
  await fetch('/api/orders', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({productId: 1, quantity: 0, gift: true})}).then((r) => r.text());
  await get('/api/cart');
  await get('/api/recommendations');
  await fetch('/api/cart', {method: 'DELETE'});
  document.getElementById('status').textContent = 'all calls done';
})();
</script></body></html>"#;

/// One exchange as the fixture saw it, for the HAR file of the session.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    url: String,
    request_type: Option<String>,
    request_body: String,
    status: u16,
    response_type: String,
    response_body: String,
}

type Log = Arc<Mutex<Vec<Seen>>>;

fn json_answer(status: u16, body: Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The Shop API as deployed: each answer breaks the spec in one known way.
async fn shop_api(method: &str, path: &str, headers: &HeaderMap) -> Response {
    match (method, path) {
        ("GET", "/api/products") => json_answer(
            200,
            json!([
                {"id": 1, "name": "Lamp", "price": 20, "status": "available"},
                {"id": 2, "name": "Desk", "price": "99.00", "status": "discontinued"}
            ]),
        ),
        ("GET", "/api/products/7") => {
            json_answer(200, json!({"id": 7, "price": 5, "status": "available"}))
        }
        ("GET", "/api/products/999") => json_answer(418, json!({"message": "I am a teapot"})),
        ("POST", "/api/orders") => json_answer(
            201,
            json!({"id": "o-1", "productId": 1, "quantity": 1, "total": 20}),
        ),
        ("GET", "/api/cart") => {
            json_answer(200, json!({"items": [], "total": 0, "coupon": "SPRING"}))
        }
        ("GET", "/api/recommendations") => json_answer(200, json!([])),
        ("DELETE", "/api/cart") => StatusCode::NO_CONTENT.into_response(),
        ("GET", "/api/whoami") => {
            let auth = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let key = headers
                .get("x-shop-key")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            // "ada:open-sesame" in base64.
            if auth == "Bearer t0ken-bearer" {
                json_answer(200, json!({"user": "ada", "via": "bearer"}))
            } else if key == "t0ken-key" {
                json_answer(200, json!({"user": "ada", "via": "api-key"}))
            } else if auth == "Basic YWRhOm9wZW4tc2VzYW1l" {
                json_answer(200, json!({"user": "ada", "via": "basic"}))
            } else {
                StatusCode::UNAUTHORIZED.into_response()
            }
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Serves the page and the API, recording every exchange.
async fn serve_shop() -> (String, Log) {
    let log: Log = Arc::default();
    async fn handle(State(log): State<Log>, request: Request) -> Response {
        let method = request.method().to_string();
        let uri = request.uri().clone();
        let headers = request.headers().clone();
        let request_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body: Bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
            .await
            .unwrap_or_default();
        let response = if uri.path() == "/" {
            Html(SHOP_PAGE).into_response()
        } else {
            shop_api(&method, uri.path(), &headers).await
        };
        let (parts, body_out) = response.into_parts();
        let bytes = axum::body::to_bytes(body_out, 1 << 20)
            .await
            .unwrap_or_default();
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("127.0.0.1")
            .to_string();
        log.lock().unwrap().push(Seen {
            method,
            url: format!("http://{host}{uri}"),
            request_type,
            request_body: String::from_utf8_lossy(&body).into_owned(),
            status: parts.status.as_u16(),
            response_type: parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string(),
            response_body: String::from_utf8_lossy(&bytes).into_owned(),
        });
        Response::from_parts(parts, axum::body::Body::from(bytes))
    }
    let router = Router::new()
        .route("/", get(handle))
        .fallback(handle)
        .with_state(Arc::clone(&log));
    (common::serve_router(router).await, log)
}

/// The session as a HAR 1.2 file, the way DevTools writes one.
fn har_of(log: &[Seen]) -> Value {
    let entries: Vec<Value> = log
        .iter()
        .filter(|s| !s.url.ends_with("/favicon.ico"))
        .map(|s| {
            let mut request = json!({"method": s.method, "url": s.url, "httpVersion": "HTTP/1.1", "headers": [], "queryString": []});
            if let Some(t) = &s.request_type {
                request["postData"] = json!({"mimeType": t, "text": s.request_body});
            }
            json!({
                "_resourceType": if s.url.ends_with('/') { "document" } else { "fetch" },
                "request": request,
                "response": {"status": s.status, "httpVersion": "HTTP/1.1", "headers": [],
                              "content": {"size": s.response_body.len(), "mimeType": s.response_type, "text": s.response_body}}
            })
        })
        .collect();
    json!({"log": {"version": "1.2", "creator": {"name": "fixture", "version": "1"}, "entries": entries}})
}

fn shop_spec() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../devlens-openapi/tests/fixtures/shop.yaml")
        .display()
        .to_string()
}

/// (operationId, kind, where) of each finding, sorted: what the two checks are compared by.
fn findings_of(report: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = report["operations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|op| {
            let id = op["operationId"].as_str().unwrap_or("").to_string();
            op["findings"].as_array().unwrap().iter().map(move |f| {
                let at = f["pointer"]
                    .as_str()
                    .or(f["parameter"].as_str())
                    .unwrap_or("")
                    .to_string();
                (id.clone(), f["kind"].as_str().unwrap().to_string(), at)
            })
        })
        .collect();
    out.sort();
    out
}

fn undocumented_of(report: &Value) -> Vec<(String, String)> {
    report["undocumented"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["method"].as_str().unwrap().to_string(),
                u["path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_traffic_and_its_har_file_name_the_same_drift() {
    if !common::browser_available() {
        return;
    }
    let (base, log) = serve_shop().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("projects.json"),
        json!({"projects": [{"name": "shop", "spec": shop_spec()}], "defaultProject": "shop"})
            .to_string(),
    )
    .unwrap();
    let client = mcp::start(dir.path(), &[]).await;
    mcp::ok(&client, "chrome", json!({"action": "launch"})).await;
    mcp::ok(&client, "navigate", json!({"url": format!("{base}/")})).await;
    mcp::ok(
        &client,
        "wait_for",
        json!({"text": "all calls done", "timeoutMs": 15000}),
    )
    .await;

    let reply = mcp::ok(&client, "check_api_traffic", json!({})).await;
    let live = reply.data.clone();
    let expected = vec![
        (
            "createOrder".into(),
            "constraint".into(),
            "/quantity".into(),
        ),
        ("createOrder".into(), "extra-field".into(), "/gift".into()),
        ("getCart".into(), "extra-field".into(), "/coupon".into()),
        (
            "getProduct".into(),
            "missing-required".into(),
            "/name".into(),
        ),
        (
            "getProduct".into(),
            "undocumented-status".into(),
            String::new(),
        ),
        (
            "listProducts".into(),
            "enum-value".into(),
            "/1/status".into(),
        ),
        (
            "listProducts".into(),
            "unknown-parameter".into(),
            "query.sort".into(),
        ),
        (
            "listProducts".into(),
            "wrong-type".into(),
            "/1/price".into(),
        ),
    ];
    assert_eq!(findings_of(&live), expected, "{}", reply.text);
    assert_eq!(
        undocumented_of(&live),
        vec![
            ("GET".to_string(), "/recommendations".to_string()),
            ("DELETE".to_string(), "/cart".to_string())
        ],
        "{}",
        reply.text
    );
    assert_eq!(live["checked"], 5, "{}", reply.text);
    // What an agent reads: the operation, where, what the spec wants and what came back.
    assert!(
        reply
            .text
            .contains("listProducts GET /products — 1 call (200)"),
        "{}",
        reply.text
    );
    assert!(
        reply
            .text
            .contains("response 200 /1/price: wrong type — type number; seen \"99.00\""),
        "{}",
        reply.text
    );
    assert!(
        reply
            .text
            .contains("response 418: undocumented status — one of 200, 404; seen 418"),
        "{}",
        reply.text
    );
    assert!(
        reply.text.contains("request /gift: extra field"),
        "{}",
        reply.text
    );
    assert!(
        reply
            .text
            .contains("DELETE /cart — 1 call (204); the path is documented for GET only"),
        "{}",
        reply.text
    );

    // The HAR file of the same session: the same findings, on the CLI, which exits 1.
    let har = dir.path().join("session.har");
    let seen = log.lock().unwrap().clone();
    std::fs::write(&har, har_of(&seen).to_string()).unwrap();
    let out = common::devlens(dir.path())
        .args(["api", "check-traffic", "--json", "--har"])
        .arg(&har)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_har: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(findings_of(&from_har), expected);
    assert_eq!(undocumented_of(&from_har), undocumented_of(&live));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "the traffic differs from the spec (8 finding(s), 2 undocumented endpoint(s))"
        )
    );

    // Over MCP the HAR path is confined to the workspace like any other path.
    let refused = mcp::err(&client, "check_api_traffic", json!({"har": "/etc/passwd"})).await;
    assert!(refused.contains("refused"), "{refused}");
    // (The data dir, with its projects.json, is out of reach: a JSON file of the artifacts
    // folder, which tools may read, stands in.)
    let not_har = dir.path().join("artifacts/not-a-har.json");
    std::fs::write(&not_har, r#"{"projects": []}"#).unwrap();
    let message = mcp::err(
        &client,
        "check_api_traffic",
        json!({"har": not_har.display().to_string()}),
    )
    .await;
    assert!(
        message.contains("not a readable HAR file") && message.contains("log.entries"),
        "{message}"
    );
    mcp::ok(&client, "chrome_disconnect", json!({})).await;
    client.cancel().await.unwrap();
}

/// A data dir whose devlens.toml declares the Shop API three times, once per kind of credential.
fn shop_projects(base: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let spec = shop_spec();
    std::fs::write(
        dir.path().join("devlens.toml"),
        format!(
            r#"active_project = "shop-bearer"

[[projects]]
name = "shop-bearer"
spec = "{spec}"
base_url = "{base}/api"
auth = {{ type = "bearer", token_env = "SHOP_TOKEN" }}

[[projects]]
name = "shop-key"
spec = "{spec}"
base_url = "{base}/api"
auth = {{ type = "api-key" }}

[[projects]]
name = "shop-basic"
spec = "{spec}"
base_url = "{base}/api"
auth = {{ type = "basic", username_env = "SHOP_USER", password_env = "SHOP_PASSWORD" }}
"#
        ),
    )
    .unwrap();
    dir
}

fn devlens_in(dir: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = common::devlens(dir);
    cmd.env("DEVLENS_CONFIG", dir.join("devlens.toml"))
        .env_remove("SHOP_TOKEN")
        .env_remove("DEVLENS_SHOP_KEY_API_KEY");
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_authenticate_with_each_kind_and_never_show_the_secret() {
    let (base, log) = serve_shop().await;
    let dir = shop_projects(&base);
    for (project, env, via) in [
        (
            "shop-bearer",
            vec![("SHOP_TOKEN", "t0ken-bearer")],
            "bearer",
        ),
        (
            "shop-key",
            vec![("DEVLENS_SHOP_KEY_API_KEY", "t0ken-key")],
            "api-key",
        ),
        (
            "shop-basic",
            vec![("SHOP_USER", "ada"), ("SHOP_PASSWORD", "open-sesame")],
            "basic",
        ),
    ] {
        let mut cmd = devlens_in(dir.path());
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let out = cmd
            .args(["api", "call", "whoAmI", "--project", project])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{project}: {stdout}{stderr}");
        assert!(stdout.contains("→ 200"), "{project}: {stdout}");
        assert!(
            stdout.contains(&format!("\"via\":\"{via}\"")),
            "{project}: {stdout}"
        );
        assert!(
            stdout.contains("The answer matches the spec."),
            "{project}: {stdout}"
        );
        for (_, secret) in &env {
            if *secret != "ada" {
                assert!(
                    !stdout.contains(secret) && !stderr.contains(secret),
                    "{project} leaked its secret: {stdout}{stderr}"
                );
            }
        }
    }
    // The shown request names the variable.
    let out = devlens_in(dir.path())
        .env("SHOP_TOKEN", "t0ken-bearer")
        .args([
            "api",
            "call",
            "whoAmI",
            "--project",
            "shop-bearer",
            "--dry-run",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("-H \"Authorization: Bearer $SHOP_TOKEN\""),
        "{stdout}"
    );
    // A variable the project names but the environment lacks: said, and nothing is sent.
    let before = log.lock().unwrap().len();
    let out = devlens_in(dir.path())
        .args(["api", "call", "whoAmI", "--project", "shop-bearer"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("SHOP_TOKEN, which is not set"), "{stderr}");
    assert_eq!(log.lock().unwrap().len(), before);

    // Bad arguments: refused before sending, with the endpoint's contract.
    let out = devlens_in(dir.path())
        .env("SHOP_TOKEN", "t0ken-bearer")
        .args([
            "api",
            "call",
            "createOrder",
            "--body",
            r#"{"quantity": "two"}"#,
            "--execute",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("POST /orders (createOrder)"), "{stderr}");
    assert!(stderr.contains("required field `productId`"), "{stderr}");
    assert!(
        stderr.contains("/quantity: wrong type — type integer; given \"two\""),
        "{stderr}"
    );
    assert!(stderr.contains("The endpoint's contract:"), "{stderr}");
    assert_eq!(log.lock().unwrap().len(), before);

    // A write is a dry run unless asked; asked, it is sent and its answer checked.
    let body = r#"{"productId": 1, "quantity": 1}"#;
    let out = devlens_in(dir.path())
        .env("SHOP_TOKEN", "t0ken-bearer")
        .args(["api", "call", "createOrder", "--body", body])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("Dry run (not sent): POST "), "{stdout}");
    assert!(
        stdout.contains("--data-raw '{\"productId\":1,\"quantity\":1}'"),
        "{stdout}"
    );
    assert_eq!(log.lock().unwrap().len(), before);
    let out = devlens_in(dir.path())
        .env("SHOP_TOKEN", "t0ken-bearer")
        .args([
            "api",
            "call",
            "createOrder",
            "--execute",
            "--json",
            "--body",
            body,
        ])
        .output()
        .unwrap();
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["response"]["status"], 201, "{outcome}");
    assert_eq!(outcome["executed"], true);
    assert!(outcome.get("findings").is_none(), "{outcome}");
    // An answer that breaks the spec is reported on the call.
    let out = devlens_in(dir.path())
        .env("SHOP_TOKEN", "t0ken-bearer")
        .args(["api", "call", "getProduct", "--param", "productId=999"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("response 418: undocumented status"),
        "{stdout}"
    );

    // Code samples on the CLI.
    let out = devlens_in(dir.path())
        .args(["api", "sample", "createOrder"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("const BASE_URL = \"{base}/api\";")),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "export async function createOrder(body: NewOrder, init?: RequestInit): Promise<Order>"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("curl -X POST"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_checks_the_running_servers_tab() {
    if !common::browser_available() {
        return;
    }
    let (site, _log) = serve_shop().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("projects.json"),
        json!({"projects": [{"name": "shop", "spec": shop_spec(), "baseUrl": format!("{site}/api")}], "defaultProject": "shop"})
            .to_string(),
    )
    .unwrap();
    let (_server, base) = common::serve_http(common::devlens_process(dir.path())).await;
    let run = |args: &[&str]| {
        common::devlens(dir.path())
            .env("DEVLENS_SERVER", &base)
            .args(args)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap()
    };
    for args in [
        vec!["browser", "launch"],
        vec!["browser", "navigate", &format!("{site}/")],
        vec!["browser", "wait", "all calls done"],
    ] {
        let out = run(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run(&["api", "check-traffic"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The project's base URL, not the spec's servers, says where the API is.
    assert!(
        stdout.contains(&format!("API base: {site}/api")),
        "{stdout}"
    );
    assert!(stdout.contains("Checked 5 calls against Shop API 1.2.0 (4 operations): 8 findings, 2 undocumented endpoints"), "{stdout}");

    // The dev panel shows the same check, in a browser of its own.
    let viewer_dir = tempfile::tempdir().unwrap();
    let viewer = mcp::start(viewer_dir.path(), &[]).await;
    mcp::ok(&viewer, "chrome", json!({"action": "launch"})).await;
    mcp::ok(
        &viewer,
        "emulate",
        json!({"viewport": {"width": 1280, "height": 800}}),
    )
    .await;
    mcp::ok(
        &viewer,
        "navigate",
        json!({"url": format!("{base}/traffic")}),
    )
    .await;
    mcp::ok(
        &viewer,
        "wait_for",
        json!({"selector": "#project option[value=shop]", "state": "attached"}),
    )
    .await;
    // Bad input is answered beside the form, and nothing is sent.
    mcp::ok(
        &viewer,
        "fill_element",
        json!({"element": "#base-url", "value": "localhost:8080"}),
    )
    .await;
    mcp::ok(&viewer, "click_element", json!({"element": "#check"})).await;
    mcp::ok(
        &viewer,
        "wait_for",
        json!({"text": "must start with http:// or https://"}),
    )
    .await;
    mcp::ok(
        &viewer,
        "fill_element",
        json!({"element": "#base-url", "value": ""}),
    )
    .await;
    mcp::ok(
        &viewer,
        "fill_element",
        json!({"element": "#har", "value": "missing/session.har"}),
    )
    .await;
    mcp::ok(&viewer, "click_element", json!({"element": "#check"})).await;
    mcp::ok(
        &viewer,
        "wait_for",
        json!({"text": "cannot read the HAR file"}),
    )
    .await;
    mcp::ok(
        &viewer,
        "fill_element",
        json!({"element": "#har", "value": ""}),
    )
    .await;
    mcp::ok(
        &viewer,
        "select_option",
        json!({"element": "#project", "values": ["shop"]}),
    )
    .await;
    mcp::ok(&viewer, "click_element", json!({"element": "#check"})).await;
    mcp::ok(
        &viewer,
        "wait_for",
        json!({"text": "8 findings, 2 undocumented endpoints"}),
    )
    .await;
    let page = mcp::ok(&viewer, "snapshot", json!({})).await.text;
    for expected in [
        "Checked 5 calls against Shop API 1.2.0",
        "listProducts GET /products",
        "/1/price",
        "\"99.00\"",
        "the path is documented for GET only",
    ] {
        assert!(
            page.contains(expected),
            "{expected} not in the panel:\n{page}"
        );
    }
    // Accessible, light and dark; the screenshots are kept for a person to look at.
    let artifacts = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    for scheme in ["light", "dark"] {
        mcp::ok(&viewer, "emulate", json!({"colorScheme": scheme})).await;
        let audit = mcp::ok(&viewer, "audit_accessibility", json!({})).await;
        let serious: Vec<&Value> = audit.data["violations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .collect();
        assert!(serious.is_empty(), "{scheme}: {}", audit.text);
        let file = format!("panel-api-traffic-{scheme}.png");
        mcp::ok(
            &viewer,
            "screenshot",
            json!({"path": file, "fullPage": true}),
        )
        .await;
        // Started in its data dir, the viewer has no project workspace: a relative path goes
        // to its artifacts folder.
        let saved = viewer_dir.path().join("artifacts").join(&file);
        std::fs::copy(saved, artifacts.join(&file)).unwrap();
    }
    mcp::ok(&viewer, "chrome_disconnect", json!({})).await;
    viewer.cancel().await.unwrap();

    let out = run(&["browser", "close"]);
    assert!(out.status.success());
}
