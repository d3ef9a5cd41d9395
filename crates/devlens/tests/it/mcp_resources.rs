//! MCP beyond tools, end to end over stdio with a real rmcp client: resources and templates
//! (a spec's operations and endpoints, a library's pages, a solution, a saved artifact),
//! prompts, completions, subscriptions and list changes, and logging.

#![allow(clippy::unwrap_used, deprecated)] // test code; logging and resources/subscribe are
// deprecated in the 2026-07-28 protocol but what 2025 clients use

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use rmcp::{
    ServiceError,
    model::{
        CompletionContext, GetPromptRequestParams, LoggingLevel, LoggingMessageNotificationParam,
        ReadResourceRequestParams, ResourceContents, ResourceUpdatedNotificationParam,
        SetLevelRequestParams, SubscribeRequestParams,
    },
    service::{NotificationContext, Peer, RoleClient},
};
use serde_json::json;
use tokio::sync::Notify;

use common::mcp::{call, connect, no_model, serve_command};
use common::{data_dir_with_petstore, devlens, without_model};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n not really an image";

/// Pets (the petstore project), the `/acme/widgets` docs, one solution and one screenshot.
fn data_dir() -> tempfile::TempDir {
    let dir = data_dir_with_petstore();
    common::add_widgets_docs(dir.path());
    let mut cmd = devlens(dir.path());
    without_model(&mut cmd, dir.path());
    cmd.args(["kb", "add", "--title", "Sticky header hides anchors"])
        .args([
            "--text",
            "Use scroll-margin-top on the targets.",
            "--tags",
            "css",
        ])
        .assert()
        .success();
    std::fs::create_dir_all(dir.path().join("artifacts")).unwrap();
    std::fs::write(dir.path().join("artifacts/shot.png"), PNG).unwrap();
    dir
}

/// Records the notifications the server sends.
#[derive(Debug, Clone, Default)]
struct Notes {
    updated: Arc<Mutex<Vec<String>>>,
    list_changed: Arc<Mutex<usize>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
    arrived: Arc<Notify>,
}

impl rmcp::ClientHandler for Notes {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
        self.arrived.notify_waiters();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        *self.list_changed.lock().unwrap() += 1;
        self.arrived.notify_waiters();
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
        self.arrived.notify_waiters();
    }
}

impl Notes {
    /// Waits until `done(self)` holds; false after 15 s.
    async fn wait(&self, done: impl Fn(&Notes) -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let arrived = self.arrived.notified();
            if done(self) {
                return true;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return done(self);
            }
        }
    }
}

async fn read(client: &Peer<RoleClient>, uri: &str) -> Result<Vec<ResourceContents>, ServiceError> {
    client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map(|r| r.contents)
}

async fn read_text(client: &Peer<RoleClient>, uri: &str) -> String {
    match read(client, uri)
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e}"))
        .remove(0)
    {
        ResourceContents::TextResourceContents { text, .. } => text,
        other => panic!("{uri}: not text: {other:?}"),
    }
}

/// The JSON-RPC error of a failed request: (code, message, data).
fn rpc_error(e: ServiceError) -> (i32, String, serde_json::Value) {
    match e {
        ServiceError::McpError(e) => (e.code.0, e.message.to_string(), e.data.unwrap_or_default()),
        other => panic!("not a JSON-RPC error: {other}"),
    }
}

#[tokio::test]
async fn resources_name_what_devlens_knows_and_read_as_markdown() {
    let dir = data_dir();
    let mut cmd = serve_command(dir.path(), &[]);
    no_model(&mut cmd, dir.path());
    let client = connect((), cmd).await;

    let listed = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    for uri in [
        "devlens://api",
        "devlens://api/pets/operations",
        "devlens://api/pets/index-status",
        "devlens://docs",
        "devlens://docs/%2Facme%2Fwidgets",
        "devlens://kb/solutions",
        "devlens://browser",
        "devlens://artifacts/shot.png",
    ] {
        assert!(uris.contains(&uri), "{uri} not in {uris:?}");
    }
    let shot = listed.iter().find(|r| r.uri.ends_with("shot.png")).unwrap();
    assert_eq!(shot.mime_type.as_deref(), Some("image/png"));
    assert_eq!(shot.size, Some(PNG.len() as u64));

    let templates = client.list_all_resource_templates().await.unwrap();
    let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(templates.contains(&"devlens://api/{project}/operations/{operationId}"));
    assert!(templates.contains(&"devlens://docs/{library}/pages/{page}"));

    let operations = read_text(&client, "devlens://api/pets/operations").await;
    assert!(operations.contains("## pets (4)"), "{operations}");
    assert!(
        operations.contains("- GET /pets `listPets`"),
        "{operations}"
    );
    let endpoint = read_text(&client, "devlens://api/pets/operations/showPetById").await;
    assert!(endpoint.starts_with("GET /pets/{petId}"), "{endpoint}");
    let tag = read_text(&client, "devlens://api/pets/tags/store").await;
    assert!(tag.contains("placeOrder"), "{tag}");
    assert!(read_text(&client, "devlens://api").await.contains("pets"));

    let outline = read_text(&client, "devlens://docs/%2Facme%2Fwidgets").await;
    assert!(outline.contains("- index.md"), "{outline}");
    assert!(outline.contains("Refresh interval"), "{outline}");
    let page = read_text(&client, "devlens://docs/%2Facme%2Fwidgets/pages/index.md").await;
    assert!(
        page.contains("```bash\nnpm install @acme/widgets"),
        "{page}"
    );
    assert!(page.contains("`refreshMs`"), "{page}");

    let solutions = read_text(&client, "devlens://kb/solutions").await;
    let id = solutions
        .split_whitespace()
        .find(|w| w.len() >= 8 && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .unwrap()
        .to_string();
    let solution = read_text(&client, &format!("devlens://kb/solutions/{id}")).await;
    assert!(solution.contains("scroll-margin-top"), "{solution}");

    match read(&client, "devlens://artifacts/shot.png")
        .await
        .unwrap()
        .remove(0)
    {
        ResourceContents::BlobResourceContents {
            blob, mime_type, ..
        } => {
            assert_eq!(mime_type.as_deref(), Some("image/png"));
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .unwrap();
            assert_eq!(bytes, PNG);
        }
        other => panic!("an image is a blob: {other:?}"),
    }
    let browser = read_text(&client, "devlens://browser").await;
    assert!(
        browser.contains("state: notConnected") || browser.contains("state:"),
        "{browser}"
    );

    // What is not there: invalid params with the URI (SEP-2164) and what to do.
    let (code, message, data) = rpc_error(read(&client, "test://static-text").await.unwrap_err());
    assert_eq!(
        (code, data["uri"].as_str()),
        (-32602, Some("test://static-text"))
    );
    assert!(message.contains("resources/list"), "{message}");
    let (code, message, _) = rpc_error(
        read(&client, "devlens://api/pets/operations/fetchUnicorn")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, -32602);
    assert!(message.contains("fetchUnicorn"), "{message}");
    let (code, message, _) = rpc_error(
        read(&client, "devlens://artifacts/../kb/kb.sqlite")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, -32602, "{message}");
    let (_, message, _) = rpc_error(
        read(&client, "devlens://docs/%2Facme%2Fwidgets/pages/intro.md")
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("index.md"),
        "names the pages there are: {message}"
    );

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn prompts_start_from_facts_and_completions_know_the_names() {
    let dir = data_dir();
    let mut cmd = serve_command(dir.path(), &[]);
    no_model(&mut cmd, dir.path());
    let client = connect((), cmd).await;

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "debug_page",
            "find_endpoint",
            "audit_page",
            "answer_from_docs",
            "save_fix"
        ]
    );
    assert!(prompts.iter().all(|p| p.description.is_some()));

    let get = |name: &str, args: serde_json::Value| {
        let params = GetPromptRequestParams::new(name)
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        client.get_prompt(params)
    };
    let text = |r: rmcp::model::GetPromptResult| {
        r.messages
            .iter()
            .filter_map(|m| m.content.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let found = text(
        get("find_endpoint", json!({"task": "list all pets"}))
            .await
            .unwrap(),
    );
    assert!(
        found.contains("listPets"),
        "the candidates are in the prompt: {found}"
    );
    let docs = text(
        get(
            "answer_from_docs",
            json!({"library": "/acme/widgets", "question": "how often does the dashboard refresh"}),
        )
        .await
        .unwrap(),
    );
    assert!(
        docs.contains("refreshMs"),
        "the docs context is in the prompt: {docs}"
    );
    let audit = text(
        get(
            "audit_page",
            json!({"url": "http://localhost:3000", "focus": "css"}),
        )
        .await
        .unwrap(),
    );
    assert!(
        audit.contains("inspect_css") && !audit.contains("audit_accessibility"),
        "{audit}"
    );

    let (code, message, _) = rpc_error(
        get("answer_from_docs", json!({"library": "/acme/widgets"}))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, -32602);
    assert!(message.contains("`question`"), "{message}");
    let (_, message, _) = rpc_error(
        get(
            "answer_from_docs",
            json!({"library": "/acme/widgts", "question": "x"}),
        )
        .await
        .unwrap_err(),
    );
    assert!(
        message.contains("/acme/widgets"),
        "suggests the library: {message}"
    );
    let (_, message, _) = rpc_error(
        get("audit_page", json!({"url": "x", "focus": "seo"}))
            .await
            .unwrap_err(),
    );
    assert!(message.contains("accessibility"), "{message}");
    let (_, message, _) = rpc_error(get("nope", json!({})).await.unwrap_err());
    assert!(message.contains("debug_page"), "{message}");

    let complete_prompt = |prompt: &'static str, arg: &'static str, value: &'static str| {
        client.complete_prompt_argument(prompt, arg, value, None)
    };
    assert_eq!(
        complete_prompt("find_endpoint", "project", "p")
            .await
            .unwrap()
            .values,
        ["pets"]
    );
    assert_eq!(
        complete_prompt("answer_from_docs", "library", "/ac")
            .await
            .unwrap()
            .values,
        ["/acme/widgets"]
    );
    assert_eq!(
        complete_prompt("audit_page", "focus", "per")
            .await
            .unwrap()
            .values,
        ["performance"]
    );
    assert_eq!(
        complete_prompt("save_fix", "tags", "react, c")
            .await
            .unwrap()
            .values,
        ["react, css"]
    );
    let context = |pairs: &[(&str, &str)]| {
        Some(CompletionContext::with_arguments(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<HashMap<_, _>>(),
        ))
    };
    let ops = |typed: &'static str| {
        client.complete_resource_argument(
            "devlens://api/{project}/operations/{operationId}",
            "operationId",
            typed,
            context(&[("project", "pets")]),
        )
    };
    assert_eq!(ops("sho").await.unwrap().values, ["showPetById"]);
    let all = ops("").await.unwrap();
    assert_eq!((all.values.len(), all.total), (5, Some(5)));
    let pages = client
        .complete_resource_argument(
            "devlens://docs/{library}/pages/{page}",
            "page",
            "",
            context(&[("library", "/acme/widgets")]),
        )
        .await
        .unwrap();
    assert_eq!(pages.values, ["index.md"]);
    let err = client
        .complete_prompt_argument("test_prompt_with_arguments", "arg1", "test", None)
        .await
        .unwrap_err();
    assert_eq!(rpc_error(err).0, -32602);

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn subscriptions_follow_changes_and_logging_sends_devlens_events() {
    let dir = data_dir();
    let mut cmd = serve_command(dir.path(), &[]);
    no_model(&mut cmd, dir.path());
    let notes = Notes::default();
    let client = connect(notes.clone(), cmd).await;

    client
        .subscribe(SubscribeRequestParams::new("devlens://kb/solutions"))
        .await
        .unwrap();
    let refused = client
        .subscribe(SubscribeRequestParams::new("test://watched-resource"))
        .await
        .unwrap_err();
    assert_eq!(rpc_error(refused).0, -32602);
    // Let the watcher take its first look, then change the knowledge base.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    call(
        &client,
        "save_solution",
        json!({"title": "Hydration mismatch", "text": "Render dates on the client only.", "tags": ["react"]}),
    )
    .await;
    assert!(
        notes
            .wait(|n| n
                .updated
                .lock()
                .unwrap()
                .iter()
                .any(|u| u == "devlens://kb/solutions"))
            .await,
        "an update for the solution list"
    );

    // The list: once the client has listed it, a new artifact changes it.
    client.list_all_resources().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    std::fs::write(dir.path().join("artifacts/trace.json"), "{}").unwrap();
    assert!(
        notes.wait(|n| *n.list_changed.lock().unwrap() > 0).await,
        "list_changed"
    );

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    call(
        &client,
        "query_docs",
        json!({"library_id": "/acme/nothing", "query": "refresh"}),
    )
    .await;
    assert!(
        notes
            .wait(|n| n.logs.lock().unwrap().iter().any(|l| {
                l.logger.as_deref() == Some("devlens_docs")
                    && l.data.to_string().contains("/acme/nothing")
            }))
            .await,
        "a log message from devlens_docs: {:?}",
        notes.logs.lock().unwrap()
    );
    // Above the level, nothing.
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Error))
        .await
        .unwrap();
    let before = notes.logs.lock().unwrap().len();
    call(
        &client,
        "query_docs",
        json!({"library_id": "/acme/nothing", "query": "again"}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(notes.logs.lock().unwrap().len(), before);

    client.cancel().await.unwrap();
}
