//! The HTTP server (REST, `/mcp`, the panel) attacked from the browser and by token holders:
//! a page on another port of this machine (a dev server, a malicious dependency's page) writing
//! files, reading through `<img>`/`<script>` tags, firing body-less POSTs; one token holder
//! signing in in a loop to end everyone's panel sessions; one MCP session reading another's log
//! events. Beside them, what must keep working: the panel from its own origin, a paired
//! extension.

// Test code: a panic is a failed assertion. Logging is deprecated by the 2026-07-28 protocol
// but what 2025 clients use.
#![allow(clippy::unwrap_used, deprecated)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::{StatusCode, header};
use rmcp::{
    ServiceExt,
    model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams},
    service::{NotificationContext, RoleClient, RunningService},
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::common::{self, http as rest};

/// A dev server's page on this machine: same site as devlens (ports do not count for a site),
/// another origin.
const DEV_SERVER: &str = "http://localhost:5173";

/// A server on `data_dir` (with the petstore project) whose `devlens.toml` holds `server`
/// lines, working in `workspace`.
async fn serve(data_dir: &Path, workspace: &Path, server: &str) -> rest::Server {
    std::fs::write(
        data_dir.join("devlens.toml"),
        format!("[server]\n{server}\n"),
    )
    .unwrap();
    let mut cmd = rest::command(data_dir);
    cmd.env("DEVLENS_WORKSPACE", workspace);
    rest::start(cmd).await
}

/// `devlens token create --scope SCOPE --json`: the token's secret.
fn create_token(data_dir: &Path, scope: &str, name: &str) -> String {
    let out = common::devlens(data_dir)
        .args([
            "token", "create", "--scope", scope, "--name", name, "--json",
        ])
        .assert()
        .success();
    let made: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    made["token"].as_str().unwrap().to_string()
}

/// The refusal of a request the guard stopped: 403, kind forbidden, its message.
async fn refused(request: reqwest::RequestBuilder) -> String {
    rest::error(request, StatusCode::FORBIDDEN).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_on_another_localhost_port_cannot_write_a_file() {
    let dir = common::data_dir_with_petstore();
    let workspace = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), workspace.path(), "").await;
    let base = &server.base;
    let http = crate::common::http::client();
    let write = format!("{base}/api/workspace/write");
    let planted = workspace.path().join("planted.js");

    // fetch() from the dev server's page: JSON, the page's origin, same-site.
    let message = refused(
        http.post(&write)
            .header(header::ORIGIN, DEV_SERVER)
            .header("Sec-Fetch-Site", "same-site")
            .header("Sec-Fetch-Mode", "cors")
            .json(&json!({"path": "planted.js", "content": "steal()"})),
    )
    .await;
    assert!(message.contains(DEV_SERVER), "{message}");
    assert!(
        message.contains("allowed_origins"),
        "says what to do: {message}"
    );
    // A form of that page (text/plain needs no preflight), and another name for this machine.
    for origin in [DEV_SERVER, "http://127.0.0.1:5173", "http://[::1]:3000"] {
        refused(
            http.post(&write)
                .header(header::ORIGIN, origin)
                .header(header::CONTENT_TYPE, "text/plain")
                .body(r#"{"path": "planted.js", "content": "steal()"}"#),
        )
        .await;
    }
    // Over MCP, from the same page.
    let status = http
        .post(format!("{base}/mcp"))
        .header(header::ORIGIN, DEV_SERVER)
        .header(header::ACCEPT, "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "write_file", "arguments": {"path": "planted.js", "content": "x"}}}))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(!planted.exists(), "nothing was written");

    // What the guard is for: the same write from the panel's own origin goes through.
    rest::ok(
        http.post(&write)
            .header(header::ORIGIN, base.as_str())
            .header("Sec-Fetch-Site", "same-origin")
            .json(&json!({"path": "planted.js", "content": "fine()"})),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&planted).unwrap(), "fine()");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_same_site_request_without_an_origin_is_refused() {
    let dir = common::data_dir_with_petstore();
    let workspace = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), workspace.path(), "").await;
    let base = &server.base;
    let http = crate::common::http::client();
    // <img src>, <script src>, <link href> on the dev server's page: no Origin, same-site.
    for (path, dest) in [
        ("/api/kb/export", "script"),
        ("/api/extension", "image"),
        ("/api/workspace/file?path=devlens.toml", "script"),
        ("/metrics", "image"),
        ("/mcp", "empty"),
    ] {
        let message = refused(
            http.get(format!("{base}{path}"))
                .header("Sec-Fetch-Site", "same-site")
                .header("Sec-Fetch-Mode", "no-cors")
                .header("Sec-Fetch-Dest", dest),
        )
        .await;
        assert!(message.contains("Sec-Fetch-Site: same-site"), "{message}");
        assert!(message.contains(&format!("{base}/")), "{message}");
    }
    // A link from another site to the API is refused too; to a panel page it opens the page.
    let link = |path: &str| {
        http.get(format!("{base}{path}"))
            .header("Sec-Fetch-Site", "cross-site")
            .header("Sec-Fetch-Mode", "navigate")
            .header("Sec-Fetch-Dest", "document")
    };
    refused(link("/api/extension")).await;
    let page = link("/kb").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("<title>devlens"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_less_post_from_another_origin_is_refused() {
    let dir = common::data_dir_with_petstore();
    let workspace = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), workspace.path(), "").await;
    let base = &server.base;
    let http = crate::common::http::client();
    // `<form method=post action=…>` with the arguments in the URL and no body at all.
    for path in [
        "/api/embed/reindex?project=pets&force=true",
        "/api/embed/reindex-all",
        "/api/projects/pets/activate",
        "/api/extension/token",
    ] {
        for origin in [DEV_SERVER, "null", "http://evil.example"] {
            let message = refused(
                http.post(format!("{base}{path}"))
                    .header(header::ORIGIN, origin)
                    .header("Sec-Fetch-Site", "cross-site")
                    .header("Sec-Fetch-Mode", "navigate"),
            )
            .await;
            assert!(message.contains("is not allowed"), "{path}: {message}");
        }
    }
    // The pairing token did not change.
    let before = rest::ok(http.get(format!("{base}/api/extension"))).await;
    let _ = http
        .post(format!("{base}/api/extension/token"))
        .header(header::ORIGIN, DEV_SERVER)
        .send()
        .await
        .unwrap();
    let after = rest::ok(http.get(format!("{base}/api/extension"))).await;
    assert_eq!(before["token"], after["token"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_less_post_needs_a_write_token() {
    let dir = common::data_dir_with_petstore();
    let read = create_token(dir.path(), "read", "reader");
    let workspace = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), workspace.path(), "require_token = true").await;
    let base = &server.base;
    let http = crate::common::http::client();
    let reindex = format!("{base}/api/embed/reindex?project=pets&force=true");
    rest::error(http.post(&reindex), StatusCode::UNAUTHORIZED).await;
    let message = rest::error(
        http.post(&reindex).bearer_auth(&read),
        StatusCode::FORBIDDEN,
    )
    .await;
    assert!(message.contains("write token"), "{message}");
    rest::error(
        http.post(format!("{base}/api/projects/pets/activate"))
            .bearer_auth(&read),
        StatusCode::FORBIDDEN,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_panel_from_its_own_origin_still_works() {
    let dir = common::data_dir_with_petstore();
    let workspace = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), workspace.path(), "").await;
    let base = &server.base;
    let http = crate::common::http::client();
    // The person opens the panel, which loads its assets and reads and writes with fetch().
    let page = http
        .get(format!("{base}/"))
        .header("Sec-Fetch-Site", "none")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-Dest", "document")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let asset = http
        .get(format!("{base}/panel/common.js"))
        .header("Sec-Fetch-Site", "same-origin")
        .header("Sec-Fetch-Mode", "cors")
        .header("Sec-Fetch-Dest", "script")
        .send()
        .await
        .unwrap();
    assert_eq!(asset.status(), StatusCode::OK);
    let projects = rest::ok(
        http.get(format!("{base}/api/projects"))
            .header("Sec-Fetch-Site", "same-origin")
            .header("Sec-Fetch-Mode", "cors"),
    )
    .await;
    assert!(projects.to_string().contains("pets"), "{projects}");
    let (status, saved) = rest::send(
        http.post(format!("{base}/api/kb/solutions"))
            .header(header::ORIGIN, base.as_str())
            .header("Sec-Fetch-Site", "same-origin")
            .json(&json!({"title": "Saved from the panel", "text": "Its own origin."})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{saved}");
    // Its server-sent events too (the panel's re-index bar): a body-less POST of its own.
    let status = http
        .post(format!("{base}/api/embed/reindex/stream?project=pets"))
        .header(header::ORIGIN, base.as_str())
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::OK);
    // curl, the CLI and MCP clients send no Origin and no Sec-Fetch-*: unchanged.
    rest::ok(http.get(format!("{base}/api/projects"))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paired_extension_still_works_and_an_unpaired_one_does_not() {
    let dir = common::data_dir_with_petstore();
    let workspace = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), workspace.path(), "").await;
    let base = &server.base;
    let http = crate::common::http::client();
    let paired = "chrome-extension://abcdefghijklmnopabcdefghijklmnop";
    let stranger = "chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba";
    let search = |origin: &str| {
        http.post(format!("{base}/api/kb/search"))
            .header(header::ORIGIN, origin)
            .header("Sec-Fetch-Site", "none")
            .header("Sec-Fetch-Mode", "cors")
            .json(&json!({"query": "resize"}))
    };
    let message = refused(search(paired)).await;
    assert!(message.contains("not paired"), "{message}");
    let token = rest::ok(http.get(format!("{base}/api/extension"))).await["token"]
        .as_str()
        .unwrap()
        .to_string();
    rest::ok(
        http.post(format!("{base}/api/extension/pair"))
            .header(header::ORIGIN, paired)
            .json(&json!({ "token": token })),
    )
    .await;
    rest::ok(search(paired)).await;
    let (status, saved) = rest::send(
        http.post(format!("{base}/api/kb/solutions"))
            .header(header::ORIGIN, paired)
            .json(&json!({"title": "Saved by the extension", "text": "Paired."})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{saved}");
    refused(search(stranger)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_tokens_sign_ins_do_not_end_another_tokens_session() {
    let dir = common::data_dir_with_petstore();
    let alice = create_token(dir.path(), "read", "alice");
    let mallory = create_token(dir.path(), "read", "mallory");
    let workspace = tempfile::tempdir().unwrap();
    let server = serve(
        dir.path(),
        workspace.path(),
        "require_token = true\nrate_limit_per_minute = 0",
    )
    .await;
    let base = &server.base;
    let http = crate::common::http::client();
    let sign_in = |token: &str| {
        let request = http
            .post(format!("{base}/api/auth/session"))
            .json(&json!({ "token": token }));
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
            cookie.split(';').next().unwrap().to_string()
        }
    };
    let with_cookie = |cookie: &str| {
        http.get(format!("{base}/api/projects"))
            .header(header::COOKIE, cookie)
    };
    let kept = sign_in(&alice).await;
    let first = sign_in(&mallory).await;
    let mut last = String::new();
    for _ in 0..1_000 {
        last = sign_in(&mallory).await;
    }
    rest::ok(with_cookie(&kept)).await;
    rest::ok(with_cookie(&last)).await;
    // What the loop ended: the looping token's own oldest sessions.
    rest::error(with_cookie(&first), StatusCode::UNAUTHORIZED).await;
}

/// Records the log notifications a session receives.
#[derive(Debug, Clone, Default)]
struct Logs {
    received: Arc<Mutex<Vec<String>>>,
    arrived: Arc<Notify>,
}

impl rmcp::ClientHandler for Logs {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.received.lock().unwrap().push(params.data.to_string());
        self.arrived.notify_waiters();
    }
}

impl Logs {
    fn any(&self, needle: &str) -> bool {
        self.received
            .lock()
            .unwrap()
            .iter()
            .any(|message| message.contains(needle))
    }

    /// Waits (at most 15 s) until a received message contains `needle`.
    async fn wait_for(&self, needle: &str) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let arrived = self.arrived.notified();
            if self.any(needle) {
                return true;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return self.any(needle);
            }
        }
    }
}

/// An MCP session over Streamable HTTP with `token`, recording its log notifications.
async fn session(base: &str, token: &str) -> (RunningService<RoleClient, Logs>, Logs) {
    let logs = Logs::default();
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header(token);
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        logs.clone()
            .serve(StreamableHttpClientTransport::from_config(config)),
    )
    .await
    .expect("the MCP handshake ended in time")
    .unwrap();
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    (client, logs)
}

#[tokio::test(flavor = "multi_thread")]
async fn log_notifications_go_to_their_own_session_only() {
    let dir = common::data_dir_with_petstore();
    let first = create_token(dir.path(), "read", "first");
    let second = create_token(dir.path(), "read", "second");
    let workspace = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), workspace.path(), "require_token = true").await;
    let (a, a_logs) = session(&server.base, &first).await;
    let (b, b_logs) = session(&server.base, &second).await;

    // A asks something; devlens logs the question (a library, a query) — for A.
    common::mcp::call(
        &a,
        "query_docs",
        json!({"library_id": "/acme/secret-project-a", "query": "salary table"}),
    )
    .await;
    assert!(
        a_logs.wait_for("/acme/secret-project-a").await,
        "A receives its own events: {:?}",
        a_logs.received.lock().unwrap()
    );
    // B's own event, logged after A's: had A's been sent to B, it would have come first.
    common::mcp::call(
        &b,
        "query_docs",
        json!({"library_id": "/acme/project-b", "query": "anything"}),
    )
    .await;
    assert!(
        b_logs.wait_for("/acme/project-b").await,
        "B receives its own events: {:?}",
        b_logs.received.lock().unwrap()
    );
    assert!(
        !b_logs.any("secret-project-a") && !b_logs.any("salary"),
        "B received A's events: {:?}",
        b_logs.received.lock().unwrap()
    );
    assert!(
        !a_logs.any("project-b"),
        "A received B's events: {:?}",
        a_logs.received.lock().unwrap()
    );
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}
