//! The debugger tools end to end: a real rmcp client drives `devlens serve` over stdio, which
//! launches a headless Chromium and debugs a fixture page served on 127.0.0.1 by this test.
//!
//! Without Chromium the test prints a skip notice and passes, unless DEVLENS_REQUIRE_BROWSER=1,
//! where it fails saying what is missing.

use crate::common;

use common::mcp::{err, ok};

use std::time::{Duration, Instant};

use rmcp::{
    ServiceExt,
    service::{RoleClient, RunningService},
    transport::{ConfigureCommandExt, TokioChildProcess},
};
use serde_json::json;

type Client = RunningService<RoleClient, ()>;

const DEBUGGER_TOOLS: &[&str] = &[
    "enable_debug_tools",
    "breakpoint",
    "execution",
    "step",
    "call_stack",
    "evaluate_in_frame",
    "pause_on_exceptions",
    "wait_for_pause",
];

const APP_JS: &str = r#"function price(qty, unit) {
  const total = qty * unit;
  const taxed = total * 1.2;
  return taxed;
}
document.getElementById("buy").addEventListener("click", () => {
  const qty = 3;
  document.getElementById("out").textContent = String(price(qty, 10));
});
"#;

const PAGE: &str = r#"<!doctype html><html><head><meta charset=utf-8><title>Shop</title></head>
<body><button id="buy">Buy</button><p id="out"></p>
<script src="/static/app.js"></script></body></html>"#;

async fn fixture_server() -> String {
    common::serve_page_with_script(PAGE, APP_JS).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugger_tools_over_mcp_breakpoint_click_step_evaluate_resume() {
    if !common::browser_available() {
        return;
    }
    let base = fixture_server().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = assert_cmd::cargo::cargo_bin("devlens");
    let data_dir = dir.path().to_path_buf();
    let transport = TokioChildProcess::new(tokio::process::Command::new(bin).configure(|cmd| {
        cmd.args(["serve", "--tools", "browser,debugger"])
            .env("DEVLENS_DATA_DIR", &data_dir)
            .env_remove("DEVLENS_TOOLS")
            .env_remove("CHROME_PATH")
            .current_dir(&data_dir);
    }))
    .expect("spawn devlens serve");
    let client: Client = ().serve(transport).await.expect("initialize over stdio");

    let tools = client.list_all_tools().await.expect("tools/list");
    for name in DEBUGGER_TOOLS {
        assert!(
            tools.iter().any(|t| t.name == *name),
            "{name} is not listed"
        );
    }
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(instructions.contains("breakpoint"), "{instructions}");

    // Nothing connected yet: the debugger says how to start.
    let message = err(&client, "call_stack", json!({})).await;
    assert!(message.contains("chrome"), "{message}");

    ok(&client, "chrome", json!({ "action": "launch" })).await;
    ok(
        &client,
        "target",
        json!({ "action": "new", "url": format!("{base}/") }),
    )
    .await;

    // Connected, not paused: a state-aware answer.
    let message = err(&client, "step", json!({ "direction": "over" })).await;
    assert!(
        message.contains("not paused") && message.contains("`breakpoint`"),
        "{message}"
    );
    let status = ok(&client, "enable_debug_tools", json!({})).await;
    assert!(status.text.contains("/static/app.js"), "{}", status.text);
    let message = err(
        &client,
        "breakpoint",
        json!({ "action": "set", "url": "app.js" }),
    )
    .await;
    assert!(message.contains("lineNumber"), "{message}");

    let set = ok(
        &client,
        "breakpoint",
        json!({ "action": "set", "url": "app.js", "lineNumber": 2 }),
    )
    .await;
    let id = set.data["breakpoint"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert!(set.text.contains("/static/app.js:2:"), "{}", set.text);

    // The click returns promptly with the pause context.
    let start = Instant::now();
    let clicked = ok(&client, "click_element", json!({ "element": "#buy" })).await;
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "{:?}",
        start.elapsed()
    );
    assert!(
        clicked.text.contains("Paused (breakpoint)"),
        "{}",
        clicked.text
    );
    assert!(
        clicked.text.contains("price (/static/app.js:2:"),
        "{}",
        clicked.text
    );
    assert!(clicked.text.contains("qty = 3"), "{}", clicked.text);
    assert_eq!(clicked.data["paused"]["location"]["line"], 2);

    let stack = ok(&client, "call_stack", json!({})).await;
    assert_eq!(
        stack.data["frames"][0]["function"], "price",
        "{}",
        stack.text
    );

    let stepped = ok(&client, "step", json!({ "direction": "over" })).await;
    assert!(
        stepped.text.contains("total = 30  (changed)"),
        "{}",
        stepped.text
    );
    let short = ok(
        &client,
        "step",
        json!({ "direction": "over", "includeContext": false }),
    )
    .await;
    assert!(
        short
            .text
            .starts_with("stepped over → price (/static/app.js:4:"),
        "{}",
        short.text
    );
    assert!(!short.text.contains("Locals"), "{}", short.text);

    let value = ok(
        &client,
        "evaluate_in_frame",
        json!({ "expression": "taxed + 1" }),
    )
    .await;
    assert_eq!(value.data["value"], "37", "{}", value.text);
    let value = ok(
        &client,
        "evaluate_in_frame",
        json!({ "expression": "qty", "frameIndex": 1 }),
    )
    .await;
    assert_eq!(value.data["value"], "3", "{}", value.text);

    ok(
        &client,
        "breakpoint",
        json!({ "action": "remove", "breakpointId": id }),
    )
    .await;
    let resumed = ok(&client, "execution", json!({ "action": "resume" })).await;
    assert!(
        resumed.text.contains("the page is running"),
        "{}",
        resumed.text
    );
    let out = ok(
        &client,
        "evaluate",
        json!({ "expression": "document.getElementById('out').textContent" }),
    )
    .await;
    assert_eq!(out.data["value"], "36", "{}", out.text);

    // An evaluate that runs into a breakpoint answers at once with the pause context.
    let set = ok(
        &client,
        "breakpoint",
        json!({ "action": "set", "url": "app.js", "lineNumber": 2 }),
    )
    .await;
    let evaluated = ok(&client, "evaluate", json!({ "expression": "price(1, 2)" })).await;
    assert!(
        evaluated
            .text
            .starts_with("still running: it stopped in the debugger\nPaused (breakpoint) at price"),
        "{}",
        evaluated.text
    );
    assert_eq!(evaluated.data["paused"]["location"]["line"], 2);
    ok(
        &client,
        "breakpoint",
        json!({ "action": "remove", "breakpointId": set.data["breakpoint"]["id"] }),
    )
    .await;
    ok(&client, "execution", json!({ "action": "resume" })).await;

    let message = err(&client, "execution", json!({ "action": "resume" })).await;
    assert!(message.contains("not paused"), "{message}");
    let exceptions = ok(
        &client,
        "pause_on_exceptions",
        json!({ "state": "uncaught" }),
    )
    .await;
    assert!(
        exceptions.text.contains("pause on exceptions: uncaught"),
        "{}",
        exceptions.text
    );

    ok(&client, "chrome_disconnect", json!({})).await;
    client.cancel().await.expect("close");
}
