//! The knowledge base tools end to end: a real rmcp client drives `devlens serve --tools kb` over
//! stdio — save, search, ask, get, update, delete, and the bad calls an agent makes.

use crate::common;

use common::mcp::{Client, Reply, connect, err, no_model, ok, serve_command};

use std::{collections::BTreeSet, path::Path};

use serde_json::json;

/// `devlens serve --tools kb` on `data_dir`, with the embedding model in `model_dir` (or none).
async fn start(data_dir: &Path, model_dir: Option<&Path>) -> Client {
    let mut cmd = serve_command(data_dir, &["--tools", "kb"]);
    no_model(&mut cmd, data_dir);
    if let Some(model_dir) = model_dir {
        cmd.env("DEVLENS_MODEL_DIR", model_dir);
    }
    connect((), cmd).await
}

const KB_TOOLS: [&str; 5] = [
    "save_solution",
    "search_solutions",
    "ask_knowledge_base",
    "get_solution",
    "delete_solution",
];

#[tokio::test]
async fn save_search_ask_update_and_delete_over_stdio() {
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let client = start(dir.path(), Some(&model)).await;

    let listed: BTreeSet<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    let mut expected: BTreeSet<String> = KB_TOOLS.iter().map(|t| t.to_string()).collect();
    expected.extend(["hide_tools".to_string(), "show_tools".to_string()]);
    assert_eq!(listed, expected, "--tools kb: the five and the meta tools");

    let Reply {
        data: cors, text, ..
    } = ok(
        &client,
        "save_solution",
        json!({
            "title": "Fix CORS preflight failing on PUT",
            "text": "The browser sends an OPTIONS preflight before a cross-origin PUT with \
                     credentials. The server must answer it with Access-Control-Allow-Origin set \
                     to the exact origin (not *), Access-Control-Allow-Credentials: true and \
                     Access-Control-Allow-Methods including PUT.",
            "url": "https://example.com/cors",
            "tags": ["cors", "http"]
        }),
    )
    .await;
    let cors_id = cors["solution"]["id"].as_str().unwrap().to_string();
    assert_eq!(cors["created"], true);
    assert_eq!(cors["embedded"], true, "{text}");
    assert!(text.contains(&cors_id), "{text}");
    let Reply { data: grid, .. } = ok(
        &client,
        "save_solution",
        json!({
            "title": "Center a div with CSS grid",
            "text": "On the parent: display: grid; place-items: center; min-height: 100vh. \
                     Works for any child size.",
            "tags": ["css"]
        }),
    )
    .await;
    let grid_id = grid["solution"]["id"].as_str().unwrap().to_string();
    let Reply { data: effect, .. } = ok(
        &client,
        "save_solution",
        json!({
            "title": "React useEffect cleanup prevents leaks",
            "text": "Return a cleanup function from useEffect that unsubscribes listeners, \
                     clears intervals and aborts fetches, so nothing updates state after the \
                     component unmounts.",
            "tags": ["react"]
        }),
    )
    .await;
    let effect_id = effect["solution"]["id"].as_str().unwrap().to_string();

    let Reply {
        data: found, text, ..
    } = ok(
        &client,
        "search_solutions",
        json!({"query": "browser blocks my cross-origin request with credentials"}),
    )
    .await;
    assert_eq!(found["results"][0]["id"], cors_id.as_str(), "{text}");
    assert_eq!(found["mode"], "semantic");
    assert!(
        text.starts_with("1. Fix CORS preflight failing on PUT"),
        "{text}"
    );

    let Reply {
        data: answer, text, ..
    } = ok(
        &client,
        "ask_knowledge_base",
        json!({"query": "how do I stop state updates after my component unmounts?", "top_k": 2}),
    )
    .await;
    assert_eq!(answer["sources"][0]["n"], 1);
    assert_eq!(answer["sources"][0]["id"], effect_id.as_str(), "{text}");
    assert!(
        text.starts_with("[1] React useEffect cleanup prevents leaks\nSource: "),
        "{text}"
    );
    assert!(text.contains("relevance"), "{text}");
    assert!(answer["answer"].is_null());

    let Reply {
        data: solution,
        text,
        ..
    } = ok(&client, "get_solution", json!({"id": grid_id})).await;
    assert_eq!(solution["title"], "Center a div with CSS grid");
    assert!(text.contains("place-items: center"), "{text}");

    // Only the fields given change.
    let Reply {
        data: updated,
        text,
        ..
    } = ok(
        &client,
        "save_solution",
        json!({"id": grid_id, "title": "Center anything with CSS grid"}),
    )
    .await;
    assert_eq!(updated["created"], false);
    assert!(text.starts_with("updated "), "{text}");
    let Reply { data: solution, .. } = ok(&client, "get_solution", json!({"id": grid_id})).await;
    assert_eq!(solution["title"], "Center anything with CSS grid");
    assert_eq!(solution["tags"], json!(["css"]));
    assert!(
        solution["text"]
            .as_str()
            .unwrap()
            .starts_with("On the parent")
    );

    let Reply { data: deleted, .. } = ok(&client, "delete_solution", json!({"id": cors_id})).await;
    assert_eq!(deleted["deleted"], cors_id.as_str());
    let gone = err(&client, "get_solution", json!({"id": cors_id})).await;
    assert!(
        gone.contains(&format!("no saved solution has the id `{cors_id}`")),
        "{gone}"
    );
    let gone = err(&client, "delete_solution", json!({"id": cors_id})).await;
    assert!(gone.contains("no saved solution has the id"), "{gone}");

    // Bad calls say what to do.
    let empty = err(&client, "search_solutions", json!({"query": "  "})).await;
    assert!(empty.contains("the query is empty"), "{empty}");
    let empty = err(&client, "ask_knowledge_base", json!({"query": ""})).await;
    assert!(empty.contains("the query is empty"), "{empty}");
    let incomplete = err(&client, "save_solution", json!({"title": "no text"})).await;
    assert!(
        incomplete.contains("needs a title and a text"),
        "{incomplete}"
    );
    let mode = err(
        &client,
        "search_solutions",
        json!({"query": "grid", "mode": "vector"}),
    )
    .await;
    assert!(
        mode.contains("invalid arguments for search_solutions"),
        "{mode}"
    );
    let many = err(
        &client,
        "search_solutions",
        json!({"query": "grid", "top_k": 500}),
    )
    .await;
    assert!(many.contains("top_k must be between 1 and 50"), "{many}");

    client.cancel().await.expect("close");
}

#[tokio::test]
async fn a_knowledge_base_that_cannot_open_is_a_tool_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the kb folder should be.
    std::fs::write(dir.path().join("kb"), "not a folder").unwrap();
    let client = start(dir.path(), None).await;
    for _ in 0..2 {
        let error = err(&client, "search_solutions", json!({"query": "cors"})).await;
        assert!(error.contains("the knowledge base"), "{error}");
    }
    let error = err(&client, "save_solution", json!({"title": "t", "text": "x"})).await;
    assert!(error.contains("Nothing was changed"), "{error}");
    client.cancel().await.expect("close");
}
