//! The one MCP test client: start `devlens serve` over stdio with a real rmcp client, call tools
//! and read their replies the way an agent sees them (text, structured content, `isError`).

use std::path::Path;

use rmcp::{
    ClientHandler, ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::{Peer, RoleClient, RunningService},
    transport::{ConfigureCommandExt, TokioChildProcess},
};
use serde_json::Value;

/// A session with a client that handles nothing itself.
pub type Client = RunningService<RoleClient, ()>;

/// `devlens serve <args>` with its data in `data_dir`, started there, cleared of the user's
/// environment (project, tool selection, config, workspace, browser path).
pub fn serve_command(data_dir: &Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = super::devlens_process(data_dir);
    cmd.arg("serve").args(args);
    cmd
}

/// Makes `cmd` find no embedding model anywhere (model dir and Hugging Face cache).
pub fn no_model(cmd: &mut tokio::process::Command, scratch: &Path) {
    cmd.env("DEVLENS_MODEL_DIR", scratch.join("no-model"))
        .env("HF_HOME", scratch.join("hf"))
        .env("HF_HUB_CACHE", scratch.join("hf/hub"))
        .env_remove("EMBEDDING_PROVIDER");
}

/// Starts `cmd` (see [`serve_command`]) and initializes a session with `handler` as the client.
pub async fn connect<H: ClientHandler>(
    handler: H,
    cmd: tokio::process::Command,
) -> RunningService<RoleClient, H> {
    let transport = TokioChildProcess::new(cmd.configure(|_| {})).expect("spawn devlens serve");
    handler
        .serve(transport)
        .await
        .expect("initialize over stdio")
}

/// `devlens serve <args>` on `data_dir` with a plain client.
pub async fn start(data_dir: &Path, args: &[&str]) -> Client {
    connect((), serve_command(data_dir, args)).await
}

/// A tool's answer as the agent sees it.
pub struct Reply {
    /// The text content blocks, joined by newlines.
    pub text: String,
    /// `structuredContent` (null when there is none).
    pub data: Value,
    /// `isError`.
    pub error: bool,
    pub result: CallToolResult,
}

/// The text content of a result, joined by newlines.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls `tool`; a protocol-level failure fails the test (a tool error is a [`Reply`]).
pub async fn call(client: &Peer<RoleClient>, tool: &str, args: Value) -> Reply {
    let arguments = args.as_object().cloned().unwrap_or_default();
    if std::env::var_os("MCP_TRACE").is_some() {
        eprintln!("→ {tool} {args}");
    }
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"));
    Reply {
        text: text_of(&result),
        data: result.structured_content.clone().unwrap_or(Value::Null),
        error: result.is_error == Some(true),
        result,
    }
}

/// A call that must succeed.
pub async fn ok(client: &Peer<RoleClient>, tool: &str, args: Value) -> Reply {
    let reply = call(client, tool, args.clone()).await;
    assert!(!reply.error, "{tool} {args} failed: {}", reply.text);
    reply
}

/// A call that must fail; its message.
pub async fn err(client: &Peer<RoleClient>, tool: &str, args: Value) -> String {
    let reply = call(client, tool, args.clone()).await;
    assert!(reply.error, "{tool} {args} should fail: {}", reply.text);
    reply.text
}

/// The dev panel page the viewer shows, checked the way every panel test checks it: an axe
/// audit in light and dark with no serious or critical violation, and a full-page screenshot of
/// each scheme kept as `target/tmp/test-artifacts/panel-<page>-<scheme>.png` for a person to look
/// at. Leaves the page in the light scheme.
pub async fn audit_panel_page(viewer: &Peer<RoleClient>, viewer_dir: &Path, page: &str) {
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    for scheme in ["light", "dark"] {
        ok(
            viewer,
            "emulate",
            serde_json::json!({"colorScheme": scheme}),
        )
        .await;
        let audit = ok(viewer, "audit_accessibility", serde_json::json!({})).await;
        let serious: Vec<&Value> = audit.data["violations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .collect();
        assert!(serious.is_empty(), "{page} {scheme}: {}", audit.text);
        let file = format!("panel-{page}-{scheme}.png");
        ok(
            viewer,
            "screenshot",
            serde_json::json!({"path": file, "fullPage": true}),
        )
        .await;
        // Started in its data dir, the viewer has no project workspace: a relative path goes
        // to its artifacts folder.
        std::fs::copy(
            viewer_dir.join("artifacts").join(&file),
            artifacts.join(&file),
        )
        .unwrap();
    }
    ok(
        viewer,
        "emulate",
        serde_json::json!({"colorScheme": "light"}),
    )
    .await;
}

/// A person's view of the dev panel: a devlens MCP client over `data_dir` with its own headless
/// Chromium launched, the viewport at 1280×800 (the screenshots' size).
pub async fn panel_viewer(data_dir: &Path) -> Client {
    let viewer = start(data_dir, &[]).await;
    ok(&viewer, "chrome", serde_json::json!({"action": "launch"})).await;
    ok(
        &viewer,
        "emulate",
        serde_json::json!({"viewport": {"width": 1280, "height": 800}}),
    )
    .await;
    viewer
}
