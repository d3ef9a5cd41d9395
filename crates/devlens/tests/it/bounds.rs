//! Bounded answers: every tool family's worst case through the MCP server, as an agent calls it.
//! The answer (its text and its structured content together) stays under the family's bound
//! (docs/hardening.md, "Bounds") and says that it was cut — with how to read on where more can
//! be read.
//!
//! Inputs: a spec with a 2 MB description, a 200 KB summary and 3,000 endpoints under one tag; a
//! docs page with a 2 MB section; a 1 MB solution; a 100 MB workspace file (and one 20 MB line);
//! a page logging a 5 MB console message, making 10,000 requests and serving a 5 MB body.

use crate::common;

use std::path::Path;

use serde_json::json;

use common::mcp::{self, Reply};

/// What an agent receives: the text blocks and the structured content.
fn size(reply: &Reply) -> usize {
    let structured = if reply.data.is_null() {
        0
    } else {
        reply.data.to_string().len()
    };
    reply.text.len() + structured
}

fn assert_within(what: &str, reply: &Reply, bound: usize) {
    assert!(!reply.error, "{what} failed: {}", reply.text);
    let got = size(reply);
    assert!(
        got <= bound,
        "{what}: {got} bytes, over its bound of {bound}; starts: {}",
        reply.text.chars().take(300).collect::<String>()
    );
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// `devlens serve` over stdio on `data_dir`, without an embedding model, `workspace` as its
/// workspace.
async fn server(data_dir: &Path, workspace: &Path) -> mcp::Client {
    let mut cmd = mcp::serve_command(
        data_dir,
        &["--workspace", workspace.to_str().expect("utf-8 path")],
    );
    mcp::no_model(&mut cmd, data_dir);
    mcp::connect((), cmd).await
}

// --- API ------------------------------------------------------------------------------------

/// The huge operation's summary as devlens shows it: cut after one of its own words, marked.
fn cut_summary(text: &str) -> bool {
    text.contains("Huge operation summary words")
        && (text.contains("summary…") || text.contains("words…"))
        && !text.contains(&"summary words ".repeat(200))
}

fn huge_spec(path: &Path) {
    let mut paths = serde_json::Map::new();
    paths.insert(
        "/huge/{id}".into(),
        json!({ "get": {
            "operationId": "hugeOperation",
            "summary": format!("Huge operation {}", "summary words ".repeat(15_000)),
            "description": "A very long description. ".repeat(80_000),
            "tags": ["huge"],
            "parameters": [{ "name": "id", "in": "path", "required": true,
                             "description": "the id ".repeat(50_000),
                             "schema": { "type": "string", "enum": (0..20_000).map(|i| format!("v{i}")).collect::<Vec<_>>() } }],
            "responses": { "200": { "description": "ok ".repeat(50_000) } } } }),
    );
    for i in 0..3000 {
        paths.insert(
            format!("/bulk/{i}"),
            json!({ "get": { "operationId": format!("bulk{i}"),
                             "summary": format!("Bulk operation {i} {}", "padding ".repeat(200)),
                             "tags": ["bulk"],
                             "responses": { "200": { "description": "ok" } } } }),
        );
    }
    let spec = json!({
        "openapi": "3.0.3",
        "info": { "title": "Huge", "version": "1", "description": "info ".repeat(400_000) },
        "tags": [{ "name": "huge", "description": "tag description ".repeat(60_000) }],
        "paths": paths,
    });
    std::fs::write(path, serde_json::to_vec(&spec).unwrap()).unwrap();
}

/// API: details cut their texts, searches cut summaries, pages stop at their maximum.
#[test]
fn api_answers_stay_bounded_on_a_huge_spec() {
    let dir = tempfile::tempdir().unwrap();
    // A spec a tool names must be in the workspace, which cannot be the data dir.
    let workspace = tempfile::tempdir().unwrap();
    let spec = workspace.path().join("huge.json");
    huge_spec(&spec);
    let spec = spec.display().to_string();
    runtime().block_on(async {
        let client = server(dir.path(), workspace.path()).await;
        let details = mcp::call(
            &client,
            "get_endpoint_details",
            json!({ "spec": spec, "operationId": "hugeOperation" }),
        )
        .await;
        assert_within("get_endpoint_details", &details, 48 * 1024);
        // The summary is cut at a word of its own, marked.
        assert!(
            cut_summary(&details.text),
            "says it was cut: {}",
            details.text
        );

        let found = mcp::call(
            &client,
            "search_api_documentation",
            json!({ "spec": spec, "query": "huge bulk operation summary", "limit": 50, "mode": "keyword" }),
        )
        .await;
        assert_within("search_api_documentation", &found, 128 * 1024);
        assert!(found.text.contains("Huge operation"), "{}", found.text);
        assert!(cut_summary(&found.text), "says it was cut: {}", found.text);

        let with_details = mcp::call(
            &client,
            "search_api_documentation",
            json!({ "spec": spec, "query": "huge operation", "limit": 50, "mode": "keyword", "details": true }),
        )
        .await;
        assert_within("search_api_documentation with details", &with_details, 512 * 1024);

        let page = mcp::call(
            &client,
            "list_endpoints_by_tag",
            json!({ "spec": spec, "tag": "bulk", "limit": 1_000_000 }),
        )
        .await;
        // At most 200 endpoints of at most ~400 characters, in the text and the structured content.
        assert_within("list_endpoints_by_tag", &page, 200 * 400 * 2);
        assert!(page.data["nextOffset"].is_u64(), "says where to read on: {}", page.data);

        let tags = mcp::call(&client, "list_api_tags", json!({ "spec": spec })).await;
        assert_within("list_api_tags", &tags, 16 * 1024);
        client.cancel().await.ok();
    });
}

// --- docs -----------------------------------------------------------------------------------

/// Docs: a 2 MB section comes back within the query's token budget.
#[test]
fn docs_answers_stay_bounded_on_a_huge_section() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs-src");
    std::fs::create_dir(&docs).unwrap();
    let mut page = String::from("# Giant\n\n## Everything at once\n\n");
    for i in 0..20_000 {
        page.push_str(&format!(
            "The giant section keeps going with sentence {i} about refresh intervals and caching.\n"
        ));
    }
    page.push_str("\n```js\n");
    page.push_str(&"giant.refresh({ everyMs: 1000 });\n".repeat(30_000));
    page.push_str("```\n");
    assert!(page.len() > 2_000_000);
    std::fs::write(docs.join("index.md"), page).unwrap();
    let mut add = common::devlens(dir.path());
    common::without_model(&mut add, dir.path());
    add.args(["docs", "add", "/acme/giant", "--path"])
        .arg(&docs)
        .assert()
        .success();
    runtime().block_on(async {
        let workspace = tempfile::tempdir().unwrap();
        let client = server(dir.path(), workspace.path()).await;
        let answer = mcp::call(
            &client,
            "query_docs",
            json!({ "library_id": "/acme/giant", "query": "giant refresh intervals", "max_results": 20, "context_limit": 8000 }),
        )
        .await;
        // 8,000 cl100k tokens are rarely over 4 bytes each; text and structured content both
        // carry the context.
        assert_within("query_docs", &answer, 2 * 8000 * 6 + 16 * 1024);
        let resolved = mcp::call(
            &client,
            "resolve_library_id",
            json!({ "libraryName": "giant" }),
        )
        .await;
        assert_within("resolve_library_id", &resolved, 16 * 1024);
        client.cancel().await.ok();
    });
}

// --- knowledge base -------------------------------------------------------------------------

/// Knowledge base: a 1 MB solution is read in windows; searches and answers stay short.
#[test]
fn kb_answers_stay_bounded_on_a_one_megabyte_solution() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 999_000 {
        text.push_str(&format!(
            "Step {i}: flush the grid cache before the layout pass. "
        ));
        i += 1;
    }
    runtime().block_on(async {
        let workspace = tempfile::tempdir().unwrap();
        let client = server(dir.path(), workspace.path()).await;
        let saved = mcp::call(
            &client,
            "save_solution",
            json!({ "title": "Grid cache flush", "text": text, "tags": ["css"] }),
        )
        .await;
        // The text comes back cut to 20,000 characters (the agent sent it), saying so.
        assert_within("save_solution", &saved, 32 * 1024);
        assert!(
            saved.text.contains("get_solution reads on"),
            "{}",
            saved.text
        );
        let id = saved.data["solution"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no id: {}", saved.data))
            .to_string();

        let read = mcp::call(&client, "get_solution", json!({ "id": id })).await;
        assert_within("get_solution", &read, 128 * 1024);
        let next = read.data["nextOffset"]
            .as_u64()
            .unwrap_or_else(|| panic!("no nextOffset: {}", read.text));
        assert!(
            read.text.contains(&format!("offset {next}")),
            "says how to read on: {}",
            &read.text[read.text.len().saturating_sub(300)..]
        );
        let rest = mcp::call(&client, "get_solution", json!({ "id": id, "offset": next })).await;
        assert_within("get_solution at an offset", &rest, 128 * 1024);
        assert_eq!(
            rest.data["textOffset"].as_u64(),
            Some(next),
            "{}",
            rest.data
        );
        let first_of_rest: String = text.chars().skip(next as usize).take(40).collect();
        assert!(
            rest.data["text"]
                .as_str()
                .is_some_and(|t| t.starts_with(&first_of_rest)),
            "the window continues where the last one stopped"
        );

        let found = mcp::call(
            &client,
            "search_solutions",
            json!({ "query": "flush grid cache", "mode": "keyword" }),
        )
        .await;
        assert_within("search_solutions", &found, 16 * 1024);
        assert!(found.text.contains("Grid cache flush"), "{}", found.text);
        let asked = mcp::call(
            &client,
            "ask_knowledge_base",
            json!({ "query": "how do I flush the grid cache", "mode": "keyword" }),
        )
        .await;
        // The default context budget is 3,000 tokens, in the text and the structured content.
        assert_within("ask_knowledge_base", &asked, 2 * 3000 * 6 + 16 * 1024);
        client.cancel().await.ok();
    });
}

// --- workspace ------------------------------------------------------------------------------

/// Workspace: a 100 MB file is read a window at a time, a 20 MB line is cut, a search that
/// matches every line stops at its maximum.
#[test]
fn workspace_answers_stay_bounded_on_a_hundred_megabyte_file() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    {
        let file = std::fs::File::create(workspace.join("big.log")).unwrap();
        let mut out = std::io::BufWriter::new(file);
        let line = format!("{} needle\n", "x".repeat(92));
        for _ in 0..(100 * 1024 * 1024 / line.len()) {
            out.write_all(line.as_bytes()).unwrap();
        }
    }
    std::fs::write(
        workspace.join("bundle.min.js"),
        "y".repeat(20 * 1024 * 1024),
    )
    .unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    runtime().block_on(async {
        let client = server(&data, &workspace).await;
        let read = mcp::call(
            &client,
            "read_file",
            json!({ "path": "big.log", "limit": 10_000 }),
        )
        .await;
        // 256 KB of text, in the text (numbered) and the structured content.
        assert_within("read_file", &read, 2 * 256 * 1024 + 128 * 1024);
        assert!(
            read.text.contains("continue with startLine"),
            "{}",
            &read.text[read.text.len() - 200..]
        );

        let line = mcp::call(&client, "read_file", json!({ "path": "bundle.min.js" })).await;
        assert_within("read_file of one long line", &line, 16 * 1024);
        assert!(
            line.text.contains("were cut"),
            "{}",
            &line.text[line.text.len() - 200..]
        );

        let search = mcp::call(
            &client,
            "search_files",
            json!({ "pattern": "needle", "maxMatches": 500 }),
        )
        .await;
        assert_within("search_files", &search, 512 * 1024);

        let list = mcp::call(&client, "list_files", json!({ "limit": 2000 })).await;
        assert_within("list_files", &list, 64 * 1024);
        client.cancel().await.ok();
    });
}

// --- browser --------------------------------------------------------------------------------

const NOISY_PAGE: &str = r#"<!doctype html>
<html><head><title>noisy</title></head><body><h1>Noisy</h1>
<script>
console.log('console-start ' + 'z'.repeat(5 * 1024 * 1024));
(async () => {
  for (let batch = 0; batch < 20; batch++) {
    await Promise.all(Array.from({ length: 100 }, (_, i) =>
      fetch('/ping?n=' + (batch * 100 + i) + '&pad=' + 'p'.repeat(300)).then(r => r.text())));
  }
  await fetch('/big').then(r => r.text());
  document.body.insertAdjacentHTML('beforeend', '<p>all-requests-done</p>');
})();
</script></body></html>"#;

/// Browser: a 5 MB console message, 2,000 requests (twice the 1,000 a tab keeps) and a 5 MB
/// response body.
#[test]
fn browser_answers_stay_bounded_on_a_noisy_page() {
    if !common::browser_available() {
        return;
    }
    use axum::{http::header, response::Html, response::IntoResponse, routing::get};
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let router = axum::Router::new()
            .route("/", get(|| async { Html(NOISY_PAGE) }))
            .route("/ping", get(|| async { "pong" }))
            .route(
                "/big",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        format!("[{}0]", "1234567,".repeat(640 * 1024)),
                    )
                        .into_response()
                }),
            );
        let base = common::serve_router(router).await;
        let workspace = tempfile::tempdir().unwrap();
        let client = server(dir.path(), workspace.path()).await;
        let launched = mcp::call(&client, "chrome", json!({ "action": "launch" })).await;
        assert!(!launched.error, "{}", launched.text);
        let nav = mcp::call(&client, "navigate", json!({ "url": format!("{base}/") })).await;
        assert_within("navigate", &nav, 64 * 1024);
        // Waits of at most a minute each, as often as the page needs on a busy machine.
        let mut waited = 0;
        loop {
            let done = mcp::call(
                &client,
                "wait_for",
                json!({ "text": "all-requests-done", "timeoutMs": 60_000 }),
            )
            .await;
            if done.data["met"] == true {
                break;
            }
            waited += 1;
            assert!(
                waited < 5,
                "the page never finished its requests: {}",
                done.text
            );
        }

        let logs = mcp::call(&client, "get_console_logs", json!({ "limit": 1_000_000 })).await;
        assert_within("get_console_logs", &logs, 1024 * 1024);
        assert!(
            logs.text.contains("console-start"),
            "{}",
            &logs.text[..logs.text.len().min(300)]
        );
        // The 5 MB message is cut to its first 1,000 characters, the last one the mark.
        let cut = format!("console-start {}…", "z".repeat(985));
        assert!(logs.text.contains(&cut), "says it was cut");
        assert!(
            !logs.text.contains(&"z".repeat(986)),
            "cut at 1,000 characters"
        );
        let one = mcp::call(
            &client,
            "get_console_logs",
            json!({ "contains": "console-start" }),
        )
        .await;
        assert_within("get_console_logs of the 5 MB message", &one, 8 * 1024);

        let requests = mcp::call(
            &client,
            "list_network_requests",
            json!({ "limit": 1_000_000 }),
        )
        .await;
        assert_within("list_network_requests", &requests, 1024 * 1024);
        let big = mcp::call(
            &client,
            "list_network_requests",
            json!({ "urlContains": "/big" }),
        )
        .await;
        let id = big.data["requests"][0]["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("no /big request: {}", big.text));
        let body = mcp::call(&client, "get_network_request", json!({ "id": id })).await;
        assert_within(
            "get_network_request of a 5 MB body",
            &body,
            2 * 256 * 1024 + 64 * 1024,
        );
        assert!(
            body.text.to_lowercase().contains("truncated") || body.text.contains("cut"),
            "says the body was cut: {}",
            &body.text[..body.text.len().min(500)]
        );

        let value = mcp::call(
            &client,
            "evaluate",
            json!({ "expression": "'w'.repeat(5 * 1024 * 1024)" }),
        )
        .await;
        assert_within("evaluate of a 5 MB string", &value, 64 * 1024);
        let snapshot = mcp::call(&client, "snapshot", json!({})).await;
        assert_within("snapshot", &snapshot, 256 * 1024);
        let _ = mcp::call(&client, "chrome_disconnect", json!({})).await;
        client.cancel().await.ok();
    });
}
