//! The REST surface of every tool family against `devlens serve --http 127.0.0.1:0`: the API
//! explorer, library docs, workspace files, and the browser with its debugger — the answers an
//! MCP client gets, as JSON, and every failure as `{"error", "kind"}` with the status its kind
//! maps to. (The knowledge base has its own file, http_kb.rs.)

use crate::common;

use std::path::Path;

use axum::{Router, http::header, response::Html, response::IntoResponse, routing::get};
use reqwest::StatusCode;
use serde_json::json;

use common::http::{self, error, ok, send};

#[tokio::test]
async fn api_explorer_over_rest() {
    let dir = common::data_dir_with_petstore();
    let server = http::start(http::command(dir.path())).await;
    let api = format!("{}/api", server.base);
    let web = crate::common::http::client();

    let projects = ok(web.get(format!("{api}/projects"))).await;
    assert_eq!(projects["projects"][0]["name"], "pets", "{projects}");

    let page = ok(web.get(format!("{api}/endpoints?project=pets&tag=pets"))).await;
    let ids: Vec<&str> = page["endpoints"]
        .as_array()
        .unwrap_or_else(|| panic!("{page}"))
        .iter()
        .filter_map(|e| e["operationId"].as_str())
        .collect();
    assert!(ids.contains(&"showPetById"), "{page}");

    // The same endpoint named two ways gives the same details.
    let by_id = ok(web.get(format!(
        "{api}/endpoint?project=pets&operationId=showPetById"
    )))
    .await;
    let by_path = ok(web.get(format!(
        "{api}/endpoint?project=pets&method=get&path=/pets/{{petId}}"
    )))
    .await;
    assert_eq!(by_id, by_path);
    assert_eq!(by_id["operationId"], "showPetById");

    let found = ok(web.post(format!("{api}/search")).json(
        &json!({"projectName": "pets", "query": "remove a pet", "limit": 3, "mode": "keyword"}),
    ))
    .await;
    assert_eq!(found["results"][0]["operationId"], "deletePet", "{found}");

    // Failures: the status of their kind and a message that says what to do.
    let unknown = error(
        web.get(format!("{api}/endpoint?project=pets&operationId=showPet")),
        StatusCode::NOT_FOUND,
    )
    .await;
    assert!(unknown.contains("showPetById"), "{unknown}");
    let both = error(
        web.get(format!(
            "{api}/endpoint?project=pets&operationId=x&method=get&path=/pets"
        )),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(
        both.contains("operationId") && both.contains("method"),
        "{both}"
    );
    let mode = error(
        web.get(format!(
            "{api}/search?project=pets&query=pets&limit=3&mode=fuzzy"
        )),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(mode.contains("semantic, keyword or hybrid"), "{mode}");
    let no_project = error(
        web.get(format!("{api}/tags?project=nope")),
        StatusCode::NOT_FOUND,
    )
    .await;
    assert!(no_project.contains("unknown project"), "{no_project}");
    let no_tag = error(
        web.get(format!("{api}/endpoints?project=pets")),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(no_tag.contains("/api/tags"), "{no_tag}");
    // Malformed input is a JSON error too, not a framework's plain text.
    let malformed = error(
        web.post(format!("{api}/search"))
            .header("content-type", "application/json")
            .body("{\"query\": "),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(malformed.contains("JSON"), "{malformed}");
    let wrong_type = error(
        web.get(format!("{api}/endpoints?project=pets&tag=pets&limit=many")),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(wrong_type.contains("limit"), "{wrong_type}");
}

/// A folder of Markdown docs for one library.
fn widget_docs(root: &Path) -> std::path::PathBuf {
    let docs = root.join("widget-docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("install.md"),
        "# Installing\n\nRun `npm install @acme/widgets` and import the Grid component.\n\n\
         # Refreshing\n\nA widget refreshes every `refreshMs` milliseconds (default 30000).\n",
    )
    .unwrap();
    docs
}

#[tokio::test]
async fn library_docs_over_rest() {
    let dir = tempfile::tempdir().unwrap();
    // Over HTTP, docs are added from the server's workspace (a folder beside its data dir).
    let workspace = tempfile::tempdir().unwrap();
    let docs = widget_docs(workspace.path());
    let mut cmd = http::command(dir.path());
    cmd.env("DEVLENS_WORKSPACE", workspace.path());
    let server = http::start(cmd).await;
    let api = format!("{}/api/docs", server.base);
    let web = crate::common::http::client();

    let added = ok(web.post(format!("{api}/libraries")).json(&json!({
        "id": "/acme/widgets",
        "path": docs,
        "version": "2.1.0",
        "name": "Widgets",
    })))
    .await;
    assert!(added["chunks"].as_u64().unwrap_or(0) >= 2, "{added}");

    let listed = ok(web.get(format!("{api}/libraries"))).await;
    assert_eq!(listed["libraries"][0]["id"], "/acme/widgets", "{listed}");
    let resolved = ok(web.get(format!("{api}/resolve?libraryName=widgets"))).await;
    assert_eq!(resolved["matches"][0]["id"], "/acme/widgets", "{resolved}");

    let answer = ok(web.post(format!("{api}/query")).json(&json!({
        "library_id": "/acme/widgets",
        "query": "how often does a widget refresh",
    })))
    .await;
    assert!(
        answer["context"]
            .as_str()
            .unwrap_or("")
            .contains("refreshMs"),
        "{answer}"
    );

    let unknown = error(
        web.get(format!("{api}/query?library_id=/acme/nope&query=x")),
        StatusCode::NOT_FOUND,
    )
    .await;
    assert!(unknown.contains("/acme/widgets"), "{unknown}");
    let two_sources = error(
        web.post(format!("{api}/libraries")).json(&json!({
            "id": "/acme/other",
            "path": docs,
            "url": "https://example.com/docs",
        })),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(two_sources.contains("url"), "{two_sources}");
    let no_folder = error(
        web.post(format!("{api}/libraries")).json(&json!({
            "id": "/acme/other",
            "path": workspace.path().join("missing"),
        })),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(no_folder.contains("missing"), "{no_folder}");
    // The failed adds changed nothing.
    let listed = ok(web.get(format!("{api}/libraries"))).await;
    assert_eq!(listed["libraries"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn workspace_files_over_rest() {
    let dir = tempfile::tempdir().unwrap();
    // The project's folder lies beside the data dir: a workspace may not hold it.
    let projects = tempfile::tempdir().unwrap();
    let root = projects.path().join("app");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/App.jsx"),
        "export function App() {\n  return <h1>Hello</h1>;\n}\n",
    )
    .unwrap();
    let mut cmd = http::command(dir.path());
    cmd.env("DEVLENS_WORKSPACE", &root);
    let server = http::start(cmd).await;
    let api = format!("{}/api/workspace", server.base);
    let web = crate::common::http::client();

    let listed = ok(web.get(format!("{api}/files"))).await;
    assert_eq!(listed["files"][0]["path"], "src/App.jsx", "{listed}");
    let read = ok(web.get(format!("{api}/file?path=src/App.jsx&startLine=2&limit=1"))).await;
    assert_eq!(read["text"], "  return <h1>Hello</h1>;\n", "{read}");
    let found = ok(web
        .post(format!("{api}/search"))
        .json(&json!({"pattern": "<h1>", "literal": true})))
    .await;
    assert_eq!(found["files"][0]["lines"][0]["line"], 2, "{found}");

    let edited = ok(web.post(format!("{api}/edit")).json(&json!({
        "path": "src/App.jsx",
        "oldText": "Hello",
        "newText": "Hello, world",
        "expectedVersion": read["version"],
    })))
    .await;
    assert_eq!(edited["linesAdded"], 1, "{edited}");
    assert!(
        std::fs::read_to_string(root.join("src/App.jsx"))
            .unwrap()
            .contains("Hello, world")
    );
    let written = ok(web
        .post(format!("{api}/write"))
        .json(&json!({"path": "src/Title.jsx", "content": "export const Title = 1;\n"})))
    .await;
    assert_eq!(written["created"], true, "{written}");

    let stale = error(
        web.post(format!("{api}/edit")).json(&json!({
            "path": "src/App.jsx",
            "oldText": "world",
            "newText": "there",
            "expectedVersion": read["version"],
        })),
        StatusCode::CONFLICT,
    )
    .await;
    assert!(stale.contains("changed on disk"), "{stale}");
    let outside = error(
        web.post(format!("{api}/write"))
            .json(&json!({"path": "../escape.txt", "content": "x"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(outside.contains("was refused"), "{outside}");
    assert!(!projects.path().join("escape.txt").exists());
    let missing = error(
        web.get(format!("{api}/file?path=src/Nope.jsx")),
        StatusCode::NOT_FOUND,
    )
    .await;
    assert!(missing.contains("src/Nope.jsx"), "{missing}");
    let no_pattern = error(
        web.post(format!("{api}/search"))
            .json(&json!({"literal": true})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(no_pattern.contains("pattern"), "{no_pattern}");
}

const APP_JS: &str = r#"function price(qty, unit) {
  const total = qty * unit;
  return total * 1.2;
}
document.getElementById("buy").addEventListener("click", () => {
  console.error("bought", 3);
  document.getElementById("out").textContent = String(price(3, 10));
});
"#;

const PAGE: &str = r#"<!doctype html><html><head><meta charset=utf-8><title>Shop</title></head>
<body><button id="buy">Buy</button><p id="out"></p>
<script src="/static/app.js"></script></body></html>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_and_debugger_over_rest() {
    if !common::browser_available() {
        return;
    }
    let site = common::serve_router(
        Router::new()
            .route("/", get(|| async { Html(PAGE) }))
            .route(
                "/static/app.js",
                get(|| async {
                    ([(header::CONTENT_TYPE, "application/javascript")], APP_JS).into_response()
                }),
            ),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let projects = tempfile::tempdir().unwrap();
    let root = projects.path().join("app");
    std::fs::create_dir_all(&root).unwrap();
    let mut cmd = http::command(dir.path());
    cmd.env("DEVLENS_WORKSPACE", &root);
    let server = http::start(cmd).await;
    let browser = format!("{}/api/browser", server.base);
    let debugger = format!("{}/api/debugger", server.base);
    let web = crate::common::http::client();
    let post = |url: String, body: serde_json::Value| web.post(url).json(&body);

    // Before a browser: the failure says how to get one.
    let none = error(
        post(format!("{browser}/navigate"), json!({"url": site})),
        StatusCode::CONFLICT,
    )
    .await;
    assert!(none.contains("chrome"), "{none}");

    let launched = ok(post(
        format!("{browser}/chrome"),
        json!({"action": "launch"}),
    ))
    .await;
    assert_eq!(launched["kind"], "launched", "{launched}");
    let connections = ok(web.get(format!("{browser}/connections"))).await;
    assert_eq!(
        connections["connections"][0]["active"], true,
        "{connections}"
    );

    let nav = ok(post(format!("{browser}/navigate"), json!({"url": site}))).await;
    assert_eq!(nav["status"], 200, "{nav}");
    assert_eq!(nav["title"], "Shop", "{nav}");
    let found = ok(post(
        format!("{browser}/query_elements"),
        json!({"selector": "button"}),
    ))
    .await;
    assert_eq!(found["elements"][0]["selector"], "#buy", "{found}");
    ok(post(
        format!("{browser}/click_element"),
        json!({"element": "#buy"}),
    ))
    .await;
    let logs = ok(post(format!("{browser}/get_console_logs"), json!({}))).await;
    assert!(logs.to_string().contains("bought"), "{logs}");
    let value = ok(post(
        format!("{browser}/evaluate"),
        json!({"expression": "document.getElementById('out').textContent"}),
    ))
    .await;
    assert_eq!(value["value"], "36", "{value}");

    // A screenshot goes into the workspace (or the artifacts folder), never elsewhere.
    let elsewhere = tempfile::tempdir().unwrap();
    let shot = ok(post(
        format!("{browser}/screenshot"),
        json!({"path": "shots/shop.png"}),
    ))
    .await;
    assert!(root.join("shots/shop.png").is_file(), "{shot}");
    let outside = error(
        post(
            format!("{browser}/screenshot"),
            json!({"path": elsewhere.path().join("shop.png")}),
        ),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(outside.contains("was refused"), "{outside}");
    assert!(!elsewhere.path().join("shop.png").exists());
    let unknown_field = error(
        post(format!("{browser}/navigate"), json!({"adress": site})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(
        unknown_field.contains("adress") || unknown_field.contains("url"),
        "{unknown_field}"
    );

    // The debugger: a breakpoint pauses the click; the pause shows; resume finishes it.
    ok(post(format!("{debugger}/enable"), json!({}))).await;
    let set = ok(post(
        format!("{debugger}/breakpoint"),
        json!({"action": "set", "url": "app.js", "lineNumber": 2}),
    ))
    .await;
    assert!(set["breakpoint"]["id"].is_string(), "{set}");
    let clicked = ok(post(
        format!("{browser}/click_element"),
        json!({"element": "#buy"}),
    ))
    .await;
    assert_eq!(clicked["paused"]["location"]["line"], 2, "{clicked}");
    let stack = ok(post(format!("{debugger}/call_stack"), json!({}))).await;
    assert_eq!(stack["frames"][0]["function"], "price", "{stack}");
    ok(post(
        format!("{debugger}/execution"),
        json!({"action": "resume"}),
    ))
    .await;
    let not_paused = error(
        post(format!("{debugger}/execution"), json!({"action": "resume"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(not_paused.contains("not paused"), "{not_paused}");

    let (status, closed) = send(post(format!("{browser}/disconnect"), json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{closed}");
    assert_eq!(closed["browserClosed"], true, "{closed}");
}
