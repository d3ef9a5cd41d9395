//! End to end over MCP: a real rmcp client drives `devlens serve` over stdio and over Streamable
//! HTTP, lists the tools and calls every one of them, good calls and bad ones.

use crate::common;

use common::mcp::{call, text_of};

use rmcp::{
    ServiceExt,
    model::{CallToolRequestParams, Tool},
    service::{RoleClient, RunningService},
    transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess},
};
use serde_json::{Value, json};

use common::data_dir_with_petstore;

const API_TOOLS: &[&str] = &[
    "list_api_tags",
    "list_endpoints_by_tag",
    "get_endpoint_details",
    "search_api_documentation",
];

type Client = RunningService<RoleClient, ()>;

fn check_tool_list(tools: &[Tool]) {
    for name in API_TOOLS {
        let tool = tools
            .iter()
            .find(|t| t.name == *name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{name}");
        // Output schemas only where the structured answer is the point and small; where the
        // text is the answer, none (clients compile every schema on every start).
        assert_eq!(
            tool.output_schema.is_some(),
            matches!(*name, "list_api_tags" | "list_endpoints_by_tag"),
            "{name}: outputSchema"
        );
        assert!(
            tool.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_'),
            "{name} is not snake_case"
        );
    }
}

async fn exercise_every_tool(client: &Client) {
    check_tool_list(&client.list_all_tools().await.expect("tools/list"));

    let tags = call(client, "list_api_tags", json!({})).await;
    assert!(!tags.error, "{}", tags.text);
    assert!(tags.text.contains("pets (4)"));
    let structured = tags.result.structured_content.expect("structuredContent");
    assert_eq!(structured["tags"][0]["name"], "pets");

    let endpoints = call(
        client,
        "list_endpoints_by_tag",
        json!({"tag": "pets", "projectName": "pets", "limit": 2}),
    )
    .await;
    assert!(!endpoints.error, "{}", endpoints.text);
    let page = endpoints
        .result
        .structured_content
        .expect("structuredContent");
    assert_eq!(page["endpoints"].as_array().unwrap().len(), 2);
    assert_eq!(page["total"], 4);
    assert_eq!(page["nextOffset"], 2);

    let details = call(
        client,
        "get_endpoint_details",
        json!({"operationId": "createPet"}),
    )
    .await;
    assert!(!details.error, "{}", details.text);
    let value = details
        .result
        .structured_content
        .expect("structuredContent");
    assert_eq!(value["method"], "POST");
    assert_eq!(
        value["requestBody"]["schema"]["properties"]["name"]["type"],
        "string"
    );

    let by_path = call(
        client,
        "get_endpoint_details",
        json!({"method": "DELETE", "path": "/pets/{petId}"}),
    )
    .await;
    assert_eq!(
        by_path.result.structured_content.unwrap()["operationId"],
        "deletePet"
    );

    let search = call(
        client,
        "search_api_documentation",
        json!({"query": "place an order", "limit": 3}),
    )
    .await;
    assert!(!search.error, "{}", search.text);
    let value = search.result.structured_content.expect("structuredContent");
    assert_eq!(value["results"][0]["operationId"], "placeOrder");
    assert_eq!(value["mode"], "keyword");

    // Bad calls come back as tool errors the model can read and fix.
    let both = call(
        client,
        "search_api_documentation",
        json!({"query": "pets", "tag": "pets", "limit": 3}),
    )
    .await;
    assert!(both.error);
    assert!(both.text.contains("exactly one"));

    let wrong_type = call(
        client,
        "search_api_documentation",
        json!({"query": "pets", "limit": "many"}),
    )
    .await;
    assert!(wrong_type.error);
    assert!(
        wrong_type.text.contains("invalid arguments"),
        "{}",
        wrong_type.text
    );

    let missing_limit = call(client, "search_api_documentation", json!({"query": "pets"})).await;
    assert!(missing_limit.error);

    let unknown_op = call(
        client,
        "get_endpoint_details",
        json!({"operationId": "showPet"}),
    )
    .await;
    assert!(unknown_op.error);
    assert!(
        unknown_op.text.contains("showPetById"),
        "{}",
        unknown_op.text
    );

    let unknown_project = call(client, "list_api_tags", json!({"projectName": "nope"})).await;
    assert!(unknown_project.error);
    assert!(unknown_project.text.contains("unknown project"));

    let unknown_tag = call(client, "list_endpoints_by_tag", json!({"tag": "pet"})).await;
    assert!(unknown_tag.error);
    assert!(unknown_tag.text.contains("pets"), "{}", unknown_tag.text);
}

#[tokio::test]
async fn every_tool_over_stdio() {
    let dir = data_dir_with_petstore();
    let bin = assert_cmd::cargo::cargo_bin("devlens");
    let data_dir = dir.path().to_path_buf();
    let transport = TokioChildProcess::new(tokio::process::Command::new(bin).configure(|cmd| {
        cmd.arg("serve")
            .env("DEVLENS_DATA_DIR", &data_dir)
            .env_remove("DEVLENS_PROJECT")
            .env_remove("PROJECT_NAME")
            .current_dir(&data_dir);
    }))
    .expect("spawn devlens serve");
    let client = ().serve(transport).await.expect("initialize over stdio");
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("devlens")
    );
    // Every client reads (and the TypeScript SDK compiles) every definition on every start:
    // all families together stay under 60 KB.
    let tools = client.list_all_tools().await.expect("tools/list");
    let bytes = serde_json::to_string(&tools).unwrap().len();
    // The audits (accessibility, performance, CSS, app state) may add 2,500 tokens: ~10 KB.
    let audits: Vec<_> = tools
        .iter()
        .filter(|t| t.name.starts_with("audit_") || t.name.starts_with("inspect_"))
        .collect();
    let audit_bytes = serde_json::to_string(&audits).unwrap().len();
    eprintln!(
        "{} tools, {bytes} bytes; audits {} tools, {audit_bytes} bytes",
        tools.len(),
        audits.len()
    );
    assert!(
        audit_bytes < 10_000,
        "{audit_bytes} bytes of audit tool definitions"
    );
    assert!(
        tools.len() > 40 && bytes < 62_000,
        "{} tools, {bytes} bytes of definitions",
        tools.len()
    );
    exercise_every_tool(&client).await;
    client.cancel().await.expect("close");
}

/// What every client pays for the tool list (issue 38): all families' definitions stay within
/// the 45 KB (61.8 KB before the trimming), and no tool, parameter (nested ones as
/// `parent.child`) or enum value offered before the list was trimmed has gone
/// (tests/fixtures/tool-parameters.txt).
#[tokio::test]
async fn tool_definitions_stay_lean_and_complete() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = common::mcp::start(dir.path(), &[]).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    client.cancel().await.expect("close");

    let bytes = serde_json::to_string(&tools).unwrap().len();
    assert!(
        bytes <= 45_000,
        "{} tools, {bytes} bytes of definitions (at most 45,000: every client reads them on \
         every start, and the model on every turn)",
        tools.len()
    );

    let mut offered = std::collections::BTreeSet::new();
    for tool in &tools {
        offered.insert(tool.name.to_string());
        let schema = Value::Object((*tool.input_schema).clone());
        parameter_names(
            &tool.name,
            &schema,
            &schema,
            "",
            &mut Vec::new(),
            &mut offered,
        );
    }
    let before = std::fs::read_to_string(common::fixture("tool-parameters.txt")).unwrap();
    let lost: Vec<&str> = before
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter(|line| !offered.contains(*line))
        .collect();
    assert!(
        lost.is_empty(),
        "tools, parameters or values no longer offered: {lost:#?}"
    );
}

/// Collects `tool path` for every property of `schema` (nested: `parent.child`, through
/// arrays, alternatives and `$defs` references) and `tool path=value` for every enum value.
fn parameter_names<'a>(
    tool: &str,
    root: &'a Value,
    schema: &'a Value,
    path: &str,
    seen: &mut Vec<&'a str>,
    out: &mut std::collections::BTreeSet<String>,
) {
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
        && !seen.contains(&name)
    {
        seen.push(name);
        parameter_names(tool, root, &root["$defs"][name], path, seen, out);
        seen.pop();
    }
    let values = schema["enum"].as_array().into_iter().flatten();
    for value in values.chain(schema.get("const")).filter_map(Value::as_str) {
        out.insert(format!("{tool} {path}={value}"));
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            let nested = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            out.insert(format!("{tool} {nested}"));
            parameter_names(tool, root, property, &nested, seen, out);
        }
    }
    if schema["items"].is_object() {
        parameter_names(tool, root, &schema["items"], path, seen, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for alternative in schema[key].as_array().into_iter().flatten() {
            parameter_names(tool, root, alternative, path, seen, out);
        }
    }
}

/// Starts `devlens serve --http 127.0.0.1:0` and reads the address it announces on stderr.
async fn spawn_http_server(data_dir: &std::path::Path) -> (tokio::process::Child, String) {
    let bin = assert_cmd::cargo::cargo_bin("devlens");
    let mut cmd = tokio::process::Command::new(bin);
    cmd.env("DEVLENS_DATA_DIR", data_dir)
        .env_remove("DEVLENS_PROJECT")
        .env_remove("PROJECT_NAME")
        .current_dir(data_dir);
    let (child, base) = common::serve_http(cmd).await;
    (child, base)
}

#[tokio::test]
async fn every_tool_over_streamable_http_and_the_rest_api() {
    let dir = data_dir_with_petstore();
    let (_server, base) = spawn_http_server(dir.path()).await;

    let transport = StreamableHttpClientTransport::from_uri(format!("{base}/mcp"));
    let client = ().serve(transport).await.expect("initialize over HTTP");
    exercise_every_tool(&client).await;
    client.cancel().await.expect("close");

    let http = crate::common::http::client();
    let tags: Value = http
        .get(format!("{base}/api/tags?project=pets"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tags["tags"][1]["name"], "store");

    let search = http
        .post(format!("{base}/api/search"))
        .json(&json!({"projectName": "pets", "query": "remove a pet", "method": "DELETE", "limit": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(search.status(), 200);
    let search: Value = search.json().await.unwrap();
    assert_eq!(search["results"][0]["operationId"], "deletePet");

    let missing = http
        .get(format!("{base}/api/endpoint?project=pets&operationId=nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let bad = http
        .get(format!("{base}/api/search?project=pets&limit=5"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("exactly one"));

    // DNS rebinding and cross-origin requests are refused on every route.
    for path in ["/api/tags", "/mcp"] {
        let foreign_host = http
            .get(format!("{base}{path}"))
            .header("Host", "evil.example.com")
            .send()
            .await
            .unwrap();
        assert_eq!(foreign_host.status(), 403, "{path}");
        let foreign_origin = http
            .get(format!("{base}{path}"))
            .header("Origin", "http://evil.example.com")
            .send()
            .await
            .unwrap();
        assert_eq!(foreign_origin.status(), 403, "{path}");
    }
}

/// The JSON-RPC message of a Streamable HTTP reply, whether sent as JSON or as an SSE stream.
async fn rpc_reply(response: reqwest::Response) -> Value {
    let is_sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let body = response.text().await.expect("body");
    if !is_sse {
        return serde_json::from_str(&body).expect("JSON body");
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
        .expect("a JSON-RPC reply in the event stream")
}

#[tokio::test]
async fn speaks_the_2025_11_25_handshake_and_2026_07_28_stateless_requests() {
    let dir = data_dir_with_petstore();
    let (_server, base) = spawn_http_server(dir.path()).await;
    let http = crate::common::http::client();
    let post = |body: Value, version: &str, method: &str| {
        http.post(format!("{base}/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", version)
            .header("Mcp-Method", method)
            .json(&body)
    };

    let init = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}}}),
        "2025-11-25",
        "initialize",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let reply = rpc_reply(init).await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    assert_eq!(reply["result"]["serverInfo"]["name"], "devlens");

    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let discover = post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": meta}}),
        "2026-07-28",
        "server/discover",
    )
    .send()
    .await
    .unwrap();
    let reply = rpc_reply(discover).await;
    let versions = reply["result"]["supportedVersions"].to_string();
    assert!(
        versions.contains("2026-07-28") && versions.contains("2025-11-25"),
        "{reply}"
    );

    let call = post(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "list_api_tags", "arguments": {"projectName": "pets"}, "_meta": meta}}),
        "2026-07-28",
        "tools/call",
    )
    .header("Mcp-Name", "list_api_tags")
    .send()
    .await
    .unwrap();
    let reply = rpc_reply(call).await;
    assert_eq!(
        reply["result"]["structuredContent"]["tags"][0]["name"], "pets",
        "{reply}"
    );
}

/// `(progress, total)` of one progress notification.
type ProgressStep = (f64, Option<f64>);

/// Records `notifications/progress` the server sends.
#[derive(Debug, Clone, Default)]
struct ProgressLog(std::sync::Arc<std::sync::Mutex<Vec<ProgressStep>>>);

impl rmcp::ClientHandler for ProgressLog {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push((params.progress, params.total));
    }
}

#[tokio::test]
async fn semantic_index_tools_with_progress_over_stdio() {
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = data_dir_with_petstore();
    let bin = assert_cmd::cargo::cargo_bin("devlens");
    let data_dir = dir.path().to_path_buf();
    let transport = TokioChildProcess::new(tokio::process::Command::new(bin).configure(|cmd| {
        cmd.arg("serve")
            .env("DEVLENS_DATA_DIR", &data_dir)
            .env("DEVLENS_MODEL_DIR", &model)
            .env_remove("EMBEDDING_PROVIDER")
            .env_remove("DEVLENS_PROJECT")
            .env_remove("PROJECT_NAME")
            .current_dir(&data_dir);
    }))
    .expect("spawn devlens serve");
    let progress = ProgressLog::default();
    let client = progress
        .clone()
        .serve(transport)
        .await
        .expect("initialize over stdio");
    let tools = client.list_all_tools().await.expect("tools/list");
    for (name, schema) in [
        ("build_api_embedding_index", true),
        ("get_api_index_status", true),
        ("semantic_search_api_documentation", false),
    ] {
        let tool = tools.iter().find(|t| t.name == name).expect(name);
        assert_eq!(tool.output_schema.is_some(), schema, "{name}");
    }

    let status = call(&client, "get_api_index_status", json!({})).await;
    assert!(!status.error, "{}", status.text);
    assert_eq!(status.result.structured_content.unwrap()["indexed"], false);
    let fallback = call(
        &client,
        "search_api_documentation",
        json!({"query": "get rid of a pet", "limit": 3}),
    )
    .await;
    let value = fallback
        .result
        .structured_content
        .expect("structuredContent");
    assert_eq!(value["mode"], "keyword");
    assert!(
        value["notice"]
            .as_str()
            .unwrap()
            .contains("build_api_embedding_index")
    );

    let mut request = CallToolRequestParams::new("build_api_embedding_index")
        .with_arguments(json!({"projectName": "pets"}).as_object().cloned().unwrap());
    request.meta = Some(rmcp::model::RequestMetaObject::with_progress_token(
        rmcp::model::ProgressToken(rmcp::model::NumberOrString::String("build-1".into())),
    ));
    let built = client.call_tool(request).await.expect("build");
    assert_ne!(built.is_error, Some(true), "{}", text_of(&built));
    let report = built.structured_content.expect("structuredContent");
    assert_eq!(report["embedded"], 5);
    assert_eq!(report["indexed"], true);
    let seen = progress.0.lock().unwrap().clone();
    assert!(!seen.is_empty(), "no progress notifications");
    assert_eq!(seen.last().copied(), Some((5.0, Some(5.0))));

    let found = call(
        &client,
        "semantic_search_api_documentation",
        json!({"query": "bring a new dog home", "limit": 2, "details": true}),
    )
    .await;
    assert!(!found.error, "{}", found.text);
    let value = found.result.structured_content.expect("structuredContent");
    assert_eq!(value["mode"], "semantic");
    assert_eq!(value["results"][0]["operationId"], "createPet");
    assert_eq!(value["results"][0]["details"]["method"], "POST");

    let hybrid = call(
        &client,
        "search_api_documentation",
        json!({"query": "get rid of a pet", "limit": 3}),
    )
    .await;
    let value = hybrid.result.structured_content.expect("structuredContent");
    assert_eq!(value["mode"], "hybrid");
    assert_eq!(value["results"][0]["operationId"], "deletePet");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn semantic_index_over_the_rest_api() {
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = data_dir_with_petstore();
    // The server inherits DEVLENS_MODEL_DIR from the test's environment (scripts/test sets it).
    assert!(model.is_dir());
    let (_server, base) = spawn_http_server(dir.path()).await;
    let http = crate::common::http::client();

    let status: Value = http
        .get(format!("{base}/api/embed/status?project=pets"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["indexed"], false);

    let built = http
        .post(format!("{base}/api/embed/reindex?project=pets"))
        .send()
        .await
        .unwrap();
    assert_eq!(built.status(), 200);
    let built: Value = built.json().await.unwrap();
    assert_eq!(built["vectorCount"], 5);

    let found: Value = http
        .post(format!("{base}/api/embed/search"))
        .json(&json!({"projectName": "pets", "query": "bring a new dog home", "limit": 2}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(found["mode"], "semantic");
    assert_eq!(found["results"][0]["operationId"], "createPet");

    let unknown = http
        .post(format!("{base}/api/embed/reindex?project=nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn tool_families_pick_what_a_session_offers_and_say_how_to_get_the_rest() {
    let dir = data_dir_with_petstore();
    let bin = assert_cmd::cargo::cargo_bin("devlens");
    let data_dir = dir.path().to_path_buf();
    let transport = TokioChildProcess::new(tokio::process::Command::new(bin).configure(|cmd| {
        cmd.args(["serve", "--tools", "api"])
            .env("DEVLENS_DATA_DIR", &data_dir)
            .env_remove("DEVLENS_PROJECT")
            .env_remove("DEVLENS_TOOLS")
            .current_dir(&data_dir);
    }))
    .expect("spawn devlens serve --tools api");
    let client = ().serve(transport).await.expect("initialize over stdio");
    let tools = client.list_all_tools().await.expect("tools/list");
    check_tool_list(&tools);
    assert!(
        tools
            .iter()
            .all(|t| !["chrome", "navigate", "snapshot"].contains(&&*t.name)),
        "browser tools are left out"
    );
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(instructions.contains("search_api_documentation"));
    assert!(!instructions.contains("navigate"), "{instructions}");

    // Optional arguments are listed without null alternatives or Rust integer formats.
    let search = tools
        .iter()
        .find(|t| t.name == "list_endpoints_by_tag")
        .expect("listed");
    let schema = Value::Object((*search.input_schema).clone()).to_string();
    for noise in ["\"null\"", "uint", "$schema"] {
        assert!(!schema.contains(noise), "{noise} in {schema}");
    }

    let error = client
        .call_tool(CallToolRequestParams::new("navigate"))
        .await
        .expect_err("navigate is not offered");
    let message = error.to_string();
    assert!(
        message.contains("browser tools") && message.contains("--tools api,browser"),
        "{message}"
    );
    client.cancel().await.expect("close");

    // A family that does not exist stops the server before it serves, naming the families.
    assert_cmd::Command::cargo_bin("devlens")
        .unwrap()
        .args(["serve", "--tools", "browser,dom"])
        .env("DEVLENS_DATA_DIR", dir.path())
        .assert()
        .failure()
        .stderr(predicates::str::contains("unknown tool family `dom`"));
}
