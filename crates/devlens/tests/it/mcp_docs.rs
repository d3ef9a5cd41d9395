//! The library docs tools end to end: a real rmcp client drives `devlens serve` over stdio
//! (`resolve_library_id`, `query_docs`, good calls and bad ones), and the REST endpoints answer
//! the same over HTTP.

use crate::common;

use common::mcp::call;

use std::path::Path;

use rmcp::{
    ServiceExt,
    transport::{ConfigureCommandExt, TokioChildProcess},
};
use serde_json::{Value, json};

/// A data dir holding one ingested library, `/acme/widgets`.
fn data_dir_with_widgets() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::add_widgets_docs(dir.path());
    dir
}

fn server_command(data_dir: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("devlens"));
    cmd.env("DEVLENS_DATA_DIR", data_dir)
        .env("DEVLENS_MODEL_DIR", data_dir.join("no-model"))
        .env("HF_HOME", data_dir.join("hf"))
        .env("HF_HUB_CACHE", data_dir.join("hf/hub"))
        .env_remove("EMBEDDING_PROVIDER")
        .env_remove("DEVLENS_TOOLS")
        .current_dir(data_dir);
    cmd
}

#[tokio::test]
async fn resolve_and_query_over_stdio() {
    let dir = data_dir_with_widgets();
    let transport = TokioChildProcess::new(server_command(dir.path()).configure(|cmd| {
        cmd.arg("serve");
    }))
    .expect("spawn devlens serve");
    let client = ().serve(transport).await.expect("initialize over stdio");

    let tools = client.list_all_tools().await.expect("tools/list");
    for name in ["resolve_library_id", "query_docs"] {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        assert_eq!(
            tool.output_schema.is_some(),
            name == "resolve_library_id",
            "{name}: outputSchema only where the structured answer is the point"
        );
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{name}");
    }
    let query_docs = tools.iter().find(|t| t.name == "query_docs").unwrap();
    let properties = query_docs.input_schema["properties"].as_object().unwrap();
    for field in [
        "library_id",
        "query",
        "version",
        "max_results",
        "include_code",
        "context_limit",
    ] {
        assert!(
            properties.contains_key(field),
            "query_docs input lacks {field}"
        );
    }

    let resolved = call(
        &client,
        "resolve_library_id",
        json!({"libraryName": "@acme/widget"}),
    )
    .await;
    assert_ne!(resolved.result.is_error, Some(true), "{}", resolved.text);
    let matches = &resolved.result.structured_content.as_ref().unwrap()["matches"];
    assert_eq!(matches[0]["id"], "/acme/widgets");
    assert!(resolved.text.contains("/acme/widgets"));

    let answer = call(
        &client,
        "query_docs",
        json!({"library_id": "/acme/widgets", "query": "how often does it refresh", "context_limit": 1000}),
    )
    .await;
    assert_ne!(answer.result.is_error, Some(true), "{}", answer.text);
    let output = answer.result.structured_content.as_ref().unwrap();
    assert_eq!(output["library"]["name"], "Widgets");
    assert_eq!(
        output["results"][0]["metadata"]["section"],
        "Widgets > Refresh interval"
    );
    assert!(output["total_tokens"].as_u64().unwrap() <= 1000);
    assert!(output["notice"].as_str().unwrap().contains("keyword"));
    assert!(answer.text.contains("refreshMs"));

    let unknown = call(
        &client,
        "query_docs",
        json!({"library_id": "widgts", "query": "refresh"}),
    )
    .await;
    assert_eq!(unknown.result.is_error, Some(true));
    assert!(
        unknown.text.contains("Closest ids: /acme/widgets"),
        "{}",
        unknown.text
    );
    let small = call(
        &client,
        "query_docs",
        json!({"library_id": "/acme/widgets", "query": "refresh", "context_limit": 50}),
    )
    .await;
    assert_eq!(small.result.is_error, Some(true));
    assert!(small.text.contains("between 1000 and 8000"));
    let missing = call(&client, "query_docs", json!({"query": "refresh"})).await;
    assert_eq!(missing.result.is_error, Some(true));

    client.cancel().await.expect("close");
}

#[tokio::test]
async fn rest_endpoints_answer_the_same() {
    let dir = data_dir_with_widgets();
    let (mut child, base) = common::serve_http(server_command(dir.path())).await;

    let http = crate::common::http::client();
    let list: Value = http
        .get(format!("{base}/api/docs/libraries"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["libraries"][0]["id"], "/acme/widgets");
    let resolved: Value = http
        .get(format!("{base}/api/docs/resolve?libraryName=widgets"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resolved["matches"][0]["id"], "/acme/widgets");
    let answer: Value = http
        .post(format!("{base}/api/docs/query"))
        .json(&json!({"library_id": "/acme/widgets", "query": "install the package"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        answer["context"]
            .as_str()
            .unwrap()
            .contains("npm install @acme/widgets")
    );
    let unknown = http
        .get(format!("{base}/api/docs/query?library_id=nope&query=x"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let bad = http
        .post(format!("{base}/api/docs/query"))
        .json(&json!({"library_id": "/acme/widgets", "query": "x", "max_results": 99}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("between 1 and 20"));
    let metrics = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("devlens_docs_queries_total 3\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("devlens_docs_query_errors_total 2\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("devlens_docs_query_duration_seconds_count 3\n"),
        "{metrics}"
    );
    child.kill().await.ok();
}
