//! Tokens and limits end to end against a real `devlens serve --http`: a server that requires
//! tokens refuses calls without one (401 saying how to get and pass one, with the MCP metadata
//! address), refuses a read token's writes over REST and MCP (403, a tool error), lets a write
//! token do everything, forgets a revoked token at once, signs the panel in with a cookie that
//! event streams carry; a server beyond loopback will not start without a token; and every
//! server answers 429 past its rate limit, 413 past its body cap, 503 past its timeout (streams
//! excepted), compressed when asked, event streams still event by event.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::http::{self, Server, send};
use reqwest::{StatusCode, header};
use rmcp::{
    ServiceExt,
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};

/// A server on `data_dir` (with the petstore project) whose `devlens.toml` holds `server`
/// (the `[server]` table's lines).
async fn serve_with(data_dir: &Path, server: &str) -> Server {
    std::fs::write(
        data_dir.join("devlens.toml"),
        format!("[server]\n{server}\n"),
    )
    .unwrap();
    http::start(http::command(data_dir)).await
}

/// `devlens token create --scope SCOPE --json`: the token's id and secret.
fn create_token(data_dir: &Path, scope: &str, name: &str) -> (String, String) {
    let out = common::devlens(data_dir)
        .args([
            "token", "create", "--scope", scope, "--name", name, "--json",
        ])
        .assert()
        .success();
    let made: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(made["scope"], scope);
    (
        made["id"].as_str().unwrap().to_string(),
        made["token"].as_str().unwrap().to_string(),
    )
}

/// An MCP client over HTTP sending `token` as its bearer token.
async fn mcp_client(
    base: &str,
    token: &str,
) -> Result<rmcp::service::RunningService<rmcp::RoleClient, ()>, String> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header(token);
    let connect = ().serve(StreamableHttpClientTransport::from_config(config));
    tokio::time::timeout(Duration::from_secs(30), connect)
        .await
        .expect("the MCP handshake ended in time")
        .map_err(|e| e.to_string())
}

fn challenge(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_requires_tokens_checks_them_on_rest_and_mcp() {
    let dir = common::data_dir_with_petstore();
    let (read_id, read) = create_token(dir.path(), "read", "reader");
    let (_, write) = create_token(dir.path(), "write", "writer");
    let server = serve_with(dir.path(), "require_token = true").await;
    let base = &server.base;
    let http = crate::common::http::client();

    // No token: 401, what to do, and where the metadata is.
    let response = http
        .get(format!("{base}/api/projects"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge(&response),
        format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource\"")
    );
    let body: Value = response.json().await.unwrap();
    let message = body["error"].as_str().unwrap();
    assert!(message.contains("devlens token create"), "{message}");
    assert!(message.contains("Authorization: Bearer"), "{message}");
    assert_eq!(body["kind"], "unauthorized");
    for path in ["/metrics", "/api/status", "/api/kb/solutions"] {
        let status = http
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
    }

    // A wrong token: 401, said to be invalid.
    let response = http
        .get(format!("{base}/api/projects"))
        .bearer_auth("dlt_not-a-token")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("error=\"invalid_token\""));
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("not valid"),
        "{body}"
    );

    // Public: health, the panel's pages, the protected resource metadata (RFC 9728).
    assert_eq!(
        http.get(format!("{base}/api/health"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        http.get(format!("{base}/kb"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let metadata = http::ok(http.get(format!("{base}{path}"))).await;
        assert_eq!(metadata["resource"], format!("{base}/mcp"), "{path}");
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
        assert_eq!(metadata["scopes_supported"], json!(["read", "write"]));
        assert_eq!(metadata["resource_name"], "devlens");
    }

    // A read token reads, searches with POST too ...
    let found = http::ok(
        http.get(format!(
            "{base}/api/search?project=pets&query=find%20pets&mode=keyword&limit=5"
        ))
        .bearer_auth(&read),
    )
    .await;
    assert!(!found["results"].as_array().unwrap().is_empty(), "{found}");
    http::ok(
        http.post(format!("{base}/api/search"))
            .bearer_auth(&read)
            .json(&json!({"project": "pets", "query": "pets", "mode": "keyword", "limit": 5})),
    )
    .await;
    // ... but does not write: 403 naming the scope it needs.
    let response = http
        .post(format!("{base}/api/kb/solutions"))
        .bearer_auth(&read)
        .json(&json!({"title": "t", "text": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(challenge(&response).contains("insufficient_scope"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["kind"], "forbidden");
    let message = body["error"].as_str().unwrap();
    assert!(message.contains("write token"), "{message}");
    assert!(message.contains(&read_id), "names the token: {message}");
    assert!(!message.contains(&read), "never the secret: {message}");
    let message = http::error(
        http.post(format!("{base}/api/call"))
            .bearer_auth(&read)
            .json(&json!({"project": "pets", "operationId": "addPet", "execute": true})),
        StatusCode::FORBIDDEN,
    )
    .await;
    assert!(message.contains("execute"), "{message}");

    // A write token writes.
    let (status, saved) = send(
        http.post(format!("{base}/api/kb/solutions"))
            .bearer_auth(&write)
            .json(&json!({"title": "Token-guarded note", "text": "Saved with a write token."})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{saved}");

    // MCP: no client gets in without a token; a read token calls read-only tools only.
    assert!(mcp_client(base, "dlt_wrong").await.is_err());
    let reader = mcp_client(base, &read).await.unwrap();
    // A read token is shown the tools it may call: the read-only ones (and hide/show_tools).
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    let read_tools = names(reader.list_all_tools().await.unwrap());
    assert!(
        read_tools.iter().any(|t| t == "search_api_documentation")
            && read_tools.iter().any(|t| t == "hide_tools"),
        "{read_tools:?}"
    );
    assert!(
        !read_tools.iter().any(|t| t == "save_solution"),
        "{read_tools:?}"
    );
    let search = common::mcp::ok(
        &reader,
        "search_api_documentation",
        json!({"projectName": "pets", "query": "find pets", "mode": "keyword", "limit": 5}),
    )
    .await;
    assert!(search.text.contains("/pet"), "{}", search.text);
    let refused =
        common::mcp::err(&reader, "save_solution", json!({"title": "x", "text": "y"})).await;
    assert!(refused.contains("write token"), "{refused}");
    reader.cancel().await.unwrap();
    let writer = mcp_client(base, &write).await.unwrap();
    let write_tools = names(writer.list_all_tools().await.unwrap());
    assert!(
        write_tools.iter().any(|t| t == "save_solution") && write_tools.len() > read_tools.len(),
        "{write_tools:?}"
    );
    common::mcp::ok(
        &writer,
        "save_solution",
        json!({"title": "Saved over MCP", "text": "With a write token."}),
    )
    .await;
    writer.cancel().await.unwrap();

    // The list shows ids and last four characters, never a token.
    let out = common::devlens(dir.path())
        .args(["token", "list"])
        .assert()
        .success();
    let listed = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        listed.contains(&read_id) && listed.contains("reader"),
        "{listed}"
    );
    assert!(listed.contains(&read[read.len() - 4..]), "{listed}");
    assert!(
        !listed.contains(&read) && !listed.contains(&write),
        "{listed}"
    );

    // The CLI's client side sends DEVLENS_TOKEN (or --token): without it the server's 401
    // message; with it the call gets through (to say no browser is connected).
    let check_traffic = |token: Option<&str>| {
        let mut cmd = common::devlens(dir.path());
        cmd.args([
            "api",
            "check-traffic",
            "--project",
            "pets",
            "--server",
            base,
        ])
        .env_remove("DEVLENS_TOKEN");
        if let Some(token) = token {
            cmd.env("DEVLENS_TOKEN", token);
        }
        let out = cmd.assert().failure();
        let output = out.get_output();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = check_traffic(None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("requires a token"), "{stderr}");
    let (_, stderr) = check_traffic(Some(&read));
    assert!(!stderr.contains("token"), "{stderr}");
    assert!(stderr.contains("browser"), "{stderr}");

    // Revoked: refused by the running server at once.
    common::devlens(dir.path())
        .args(["token", "revoke", &read_id])
        .assert()
        .success();
    let status = http
        .get(format!("{base}/api/projects"))
        .bearer_auth(&read)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_panel_signs_in_with_a_cookie_that_event_streams_carry() {
    let dir = common::data_dir_with_petstore();
    let (_, read) = create_token(dir.path(), "read", "panel");
    let server = serve_with(dir.path(), "require_token = true").await;
    let base = &server.base;
    let http = crate::common::http::client();

    let state = http::ok(http.get(format!("{base}/api/auth/session"))).await;
    assert_eq!(state, json!({"required": true, "signedIn": false}));
    let message = http::error(
        http.post(format!("{base}/api/auth/session"))
            .json(&json!({"token": "dlt_wrong"})),
        StatusCode::UNAUTHORIZED,
    )
    .await;
    assert!(message.contains("not valid"), "{message}");

    let response = http
        .post(format!("{base}/api/auth/session"))
        .json(&json!({"token": read}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let set_cookie = response
        .headers()
        .get(header::SET_COOKIE)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(set_cookie.contains("HttpOnly"), "{set_cookie}");
    assert!(set_cookie.contains("SameSite=Strict"), "{set_cookie}");
    assert!(
        !set_cookie.contains(&read),
        "the cookie is a session, not the token"
    );
    let cookie = set_cookie.split(';').next().unwrap().to_string();
    let signed_in: Value = response.json().await.unwrap();
    assert_eq!(signed_in["signedIn"], true);
    assert_eq!(signed_in["scope"], "read");

    // The browser page's event stream, with the cookie only.
    let mut events = http
        .get(format!("{base}/api/browser/events"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    let first = tokio::time::timeout(Duration::from_secs(20), events.chunk())
        .await
        .expect("an event in time")
        .unwrap()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&first).contains("event: browser"),
        "{first:?}"
    );
    drop(events);
    assert_eq!(
        http.get(format!("{base}/api/browser/events"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::UNAUTHORIZED,
        "not without the cookie"
    );
    // A session is as good as its token: reads yes, writes no.
    assert_eq!(
        http.post(format!("{base}/api/kb/solutions"))
            .header(header::COOKIE, &cookie)
            .json(&json!({"title": "t", "text": "x"}))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::FORBIDDEN
    );

    // Signing out ends the session.
    let response = http
        .delete(format!("{base}/api/auth/session"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert!(
        response.headers()[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(
        http.get(format!("{base}/api/projects"))
            .header(header::COOKIE, &cookie)
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::UNAUTHORIZED
    );
}

/// Runs `devlens serve --http 0.0.0.0:0` on `data_dir`; the child and the address it announced
/// (as 127.0.0.1), or the child's exit status and stderr when it stops before announcing.
async fn serve_beyond_loopback(
    data_dir: &Path,
) -> Result<(tokio::process::Child, String), (std::process::ExitStatus, String)> {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = http::command(data_dir)
        .args(["serve", "--http", "0.0.0.0:0"])
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut stderr = String::new();
    let announced = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            stderr.push_str(&line);
            stderr.push('\n');
            if let Some(rest) = line.split("MCP on ").nth(1) {
                return Some(rest.trim().trim_end_matches("/mcp").to_string());
            }
        }
        None
    })
    .await
    .expect("the server started or stopped in time");
    match announced {
        Some(base) => {
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            Ok((child, base.replace("0.0.0.0", "127.0.0.1")))
        }
        None => Err((child.wait().await.unwrap(), stderr)),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn beyond_loopback_the_server_starts_only_with_a_token() {
    let dir = common::data_dir_with_petstore();
    let Err((status, stderr)) = serve_beyond_loopback(dir.path()).await else {
        panic!("served beyond loopback without a token");
    };
    assert!(!status.success());
    assert!(
        stderr.contains("devlens token create --scope write"),
        "{stderr}"
    );

    let (_, write) = create_token(dir.path(), "write", "team");
    let (mut child, base) = serve_beyond_loopback(dir.path())
        .await
        .unwrap_or_else(|(status, stderr)| panic!("{status}: {stderr}"));
    let http = crate::common::http::client();
    let status = http
        .get(format!("{base}/api/projects"))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "tokens are not optional here"
    );
    http::ok(http.get(format!("{base}/api/projects")).bearer_auth(&write)).await;
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn past_the_rate_limit_calls_get_429_with_retry_after_per_token() {
    let dir = common::data_dir_with_petstore();
    let (_, first) = create_token(dir.path(), "read", "first");
    let (_, second) = create_token(dir.path(), "read", "second");
    let server = serve_with(
        dir.path(),
        "require_token = true\nrate_limit_per_minute = 3",
    )
    .await;
    let http = crate::common::http::client();
    let projects = format!("{}/api/projects", server.base);
    for _ in 0..3 {
        http::ok(http.get(&projects).bearer_auth(&first)).await;
    }
    let response = http
        .get(&projects)
        .bearer_auth(&first)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let body: Value = response.json().await.unwrap();
    let message = body["error"].as_str().unwrap();
    assert!(message.contains("rate_limit_per_minute"), "{message}");
    assert!(message.contains("Try again in"), "{message}");
    // Another token has its own allowance.
    http::ok(http.get(&projects).bearer_auth(&second)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_past_the_cap_get_413_and_slow_calls_503_but_streams_run_on() {
    // A docs site that never answers, on this machine: allowed, so the crawl waits on it.
    let silent = common::serve_router(axum::Router::new().fallback(|| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        "too late"
    }))
    .await;
    let silent_host = silent
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let dir = common::data_dir_with_petstore();
    let server = serve_with(
        dir.path(),
        &format!(
            "max_body_mb = 1\nrequest_timeout_secs = 1\n\n[network]\nallow = [\"{silent_host}\"]"
        ),
    )
    .await;
    let base = &server.base;
    let http = crate::common::http::client();

    let big = format!(
        "{{\"version\": 1, \"solutions\": [], \"pad\": \"{}\"}}",
        "x".repeat(2 << 20)
    );
    let (status, body) = send(http.post(format!("{base}/api/kb/import")).body(big)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let message = body["error"].as_str().unwrap();
    assert!(
        message.contains("max_body_mb") && message.contains("1.0 MB"),
        "{message}"
    );
    // Under the cap, the same route works.
    http::ok(
        http.post(format!("{base}/api/kb/import"))
            .body(r#"{"version": 1, "solutions": []}"#),
    )
    .await;

    // A docs crawl of a site that never answers runs past the 1 s timeout.
    let started = std::time::Instant::now();
    let (status, body) = send(
        http.post(format!("{base}/api/docs/libraries"))
            .json(&json!({"id": "/slow/site", "url": silent})),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let message = body["error"].as_str().unwrap();
    assert!(message.contains("request_timeout_secs"), "{message}");

    // An event stream outlives the timeout: still open after 3 s.
    let mut events = http
        .get(format!("{base}/api/browser/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    let first = events.chunk().await.unwrap();
    assert!(first.is_some(), "the first event");
    let quiet = tokio::time::timeout(Duration::from_secs(3), events.chunk()).await;
    assert!(quiet.is_err(), "the stream ended: {quiet:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_are_compressed_when_asked_and_event_streams_are_not() {
    let dir = common::data_dir_with_petstore();
    let server = serve_with(dir.path(), "").await;
    let base = &server.base;
    let http = crate::common::http::client();

    let plain = http
        .get(format!("{base}/panel/common.js"))
        .send()
        .await
        .unwrap();
    assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
    let plain_len = plain.bytes().await.unwrap().len();
    for encoding in ["gzip", "br"] {
        let packed = http
            .get(format!("{base}/panel/common.js"))
            .header(header::ACCEPT_ENCODING, encoding)
            .send()
            .await
            .unwrap();
        assert_eq!(packed.headers()[header::CONTENT_ENCODING], encoding);
        let packed_len = packed.bytes().await.unwrap().len();
        assert!(
            packed_len * 2 < plain_len,
            "{encoding}: {packed_len} vs {plain_len}"
        );
    }
    let json = http
        .get(format!("{base}/api/projects"))
        .header(header::ACCEPT_ENCODING, "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(json.headers()[header::CONTENT_ENCODING], "gzip");

    // The browser page's stream never ends; compressed, its events would wait in the encoder.
    let mut events = http
        .get(format!("{base}/api/browser/events"))
        .header(header::ACCEPT_ENCODING, "gzip, br")
        .send()
        .await
        .unwrap();
    assert!(events.headers().get(header::CONTENT_ENCODING).is_none());
    let first = tokio::time::timeout(Duration::from_secs(20), events.chunk())
        .await
        .expect("the first event arrives on its own")
        .unwrap()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&first).contains("event: browser"),
        "{first:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_panel_shows_a_sign_in_form_and_works_once_signed_in() {
    if !common::browser_available() {
        return;
    }
    let dir = common::data_dir_with_petstore();
    let (_, read) = create_token(dir.path(), "read", "person");
    let server = serve_with(dir.path(), "require_token = true").await;
    let base = &server.base;

    let viewer_dir = tempfile::tempdir().unwrap();
    let viewer = common::mcp::panel_viewer(viewer_dir.path()).await;
    let step = |tool: &'static str, args: Value| {
        let viewer = &viewer;
        async move { common::mcp::ok(viewer, tool, args).await }
    };
    step("navigate", json!({"url": format!("{base}/status")})).await;
    step(
        "wait_for",
        json!({"text": "This devlens server requires a token"}),
    )
    .await;
    common::mcp::audit_panel_page(&viewer, viewer_dir.path(), "sign-in").await;

    // A wrong token is said beside the form.
    step(
        "fill_element",
        json!({"element": "#sign-in-token", "value": "dlt_wrong"}),
    )
    .await;
    step(
        "click_element",
        json!({"element": "form#sign-in-form button"}),
    )
    .await;
    step("wait_for", json!({"text": "That token is not valid"})).await;

    step(
        "fill_element",
        json!({"element": "#sign-in-token", "value": read}),
    )
    .await;
    step(
        "click_element",
        json!({"element": "form#sign-in-form button"}),
    )
    .await;
    // The page itself, its data read with the session cookie.
    step("wait_for", json!({"text": "Embedding model"})).await;
    step("wait_for", json!({"text": "Signed in: person (read)"})).await;
    step("wait_for", json!({"text": "pets"})).await;
    common::mcp::audit_panel_page(&viewer, viewer_dir.path(), "signed-in").await;

    step("click_element", json!({"element": "#sign-out"})).await;
    step(
        "wait_for",
        json!({"text": "This devlens server requires a token"}),
    )
    .await;
    viewer.cancel().await.unwrap();
}
