//! The knowledge base REST endpoints end to end against `devlens serve --http 127.0.0.1:0`:
//! create, list, read, update, delete, search, ask, export → import into another data dir, and
//! the bad requests (unknown ids, malformed bodies and imports that change nothing).

use crate::common;

use common::http::{self, Server, error, send};

use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn serve(data_dir: &Path, model_dir: &Path) -> Server {
    let mut cmd = http::command(data_dir);
    cmd.env("DEVLENS_MODEL_DIR", model_dir);
    http::start(cmd).await
}

#[tokio::test]
async fn solutions_search_ask_and_export_import_over_rest() {
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &model).await;
    let api = format!("{}/api/kb", server.base);
    let http = crate::common::http::client();

    let mut ids = Vec::new();
    for (title, text, url, tags) in [
        (
            "Fix CORS preflight failing on PUT",
            "Answer the OPTIONS preflight with Access-Control-Allow-Origin set to the exact \
             origin and Access-Control-Allow-Credentials: true when the request sends cookies.",
            Some("https://example.com/cors"),
            vec!["cors"],
        ),
        (
            "Center a div with CSS grid",
            "On the parent: display: grid; place-items: center.",
            None,
            vec!["css"],
        ),
        (
            "Debounce a search input",
            "Wait 300 ms after the last keystroke before sending the search request; cancel \
             the pending timer on every keystroke.",
            None,
            vec![],
        ),
    ] {
        let (status, saved) = send(
            http.post(format!("{api}/solutions"))
                .json(&json!({"title": title, "text": text, "url": url, "tags": tags})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{saved}");
        assert_eq!(saved["embedded"], true);
        ids.push(saved["solution"]["id"].as_str().unwrap().to_string());
    }

    let (status, list) = send(http.get(format!("{api}/solutions"))).await;
    assert_eq!(status, StatusCode::OK);
    let listed = list["solutions"].as_array().unwrap();
    assert_eq!(listed.len(), 3);
    let cors = listed.iter().find(|s| s["id"] == ids[0].as_str()).unwrap();
    assert_eq!(cors["title"], "Fix CORS preflight failing on PUT");
    assert_eq!(cors["url"], "https://example.com/cors");
    assert_eq!(cors["tags"], json!(["cors"]));
    assert!(cors["createdAt"].is_string());
    assert!(cors.get("text").is_none(), "the list is a summary");

    let (status, found) = send(
        http.post(format!("{api}/search"))
            .json(&json!({"query": "wait until the user stops typing", "topK": 2})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["results"][0]["id"], ids[2].as_str(), "{found}");
    let (_, found) = send(
        http.post(format!("{api}/search"))
            .json(&json!({"query": "place-items", "mode": "keyword"})),
    )
    .await;
    assert_eq!(found["mode"], "keyword");
    assert_eq!(found["results"][0]["id"], ids[1].as_str(), "{found}");

    let (status, answer) = send(http.post(format!("{api}/ask")).json(
        &json!({"query": "cookies on a cross-origin PUT are rejected", "contextLimit": 500}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["sources"][0]["n"], 1);
    assert_eq!(answer["sources"][0]["id"], ids[0].as_str());
    assert_eq!(answer["sources"][0]["url"], "https://example.com/cors");
    assert!(
        answer["context"]
            .as_str()
            .unwrap()
            .starts_with("[1] Fix CORS preflight failing on PUT\nSource: https://example.com/cors")
    );
    assert!(answer["totalTokens"].as_u64().unwrap() <= 500);

    // Read, update (only what is given; null removes the URL), read again.
    let (status, solution) = send(http.get(format!("{api}/solutions/{}", ids[0]))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(solution["text"].as_str().unwrap().contains("OPTIONS"));
    let (status, saved) = send(
        http.put(format!("{api}/solutions/{}", ids[0]))
            .json(&json!({"tags": ["cors", "cookies"], "url": null})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    assert_eq!(saved["solution"]["tags"], json!(["cors", "cookies"]));
    assert!(saved["solution"]["url"].is_null());
    assert_eq!(
        saved["solution"]["title"],
        "Fix CORS preflight failing on PUT"
    );

    // Bad input.
    let unknown = error(
        http.get(format!("{api}/solutions/nope123")),
        StatusCode::NOT_FOUND,
    )
    .await;
    assert!(
        unknown.contains("no saved solution has the id `nope123`"),
        "{unknown}"
    );
    error(
        http.put(format!("{api}/solutions/nope123"))
            .json(&json!({"title": "x"})),
        StatusCode::NOT_FOUND,
    )
    .await;
    error(
        http.delete(format!("{api}/solutions/nope123")),
        StatusCode::NOT_FOUND,
    )
    .await;
    let missing = error(
        http.post(format!("{api}/solutions"))
            .json(&json!({"title": "no text"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(missing.contains("\"text\""), "{missing}");
    let empty = error(
        http.post(format!("{api}/search"))
            .json(&json!({"query": ""})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(empty.contains("the query is empty"), "{empty}");
    let mode = error(
        http.post(format!("{api}/search"))
            .json(&json!({"query": "x", "mode": "vector"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(mode.contains("semantic"), "{mode}");

    // Export, then import into a second data dir: the same solutions, byte for byte.
    let export = http
        .get(format!("{api}/export"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let exported: Value = serde_json::from_str(&export).unwrap();
    assert_eq!(exported["solutions"].as_array().unwrap().len(), 3);

    let other_dir = tempfile::tempdir().unwrap();
    let other = serve(other_dir.path(), &model).await;
    let other_api = format!("{}/api/kb", other.base);
    let (status, report) = send(
        http.post(format!("{other_api}/import"))
            .body(export.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["imported"], 3);
    let round_trip = http
        .get(format!("{other_api}/export"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&round_trip).unwrap(),
        exported,
        "import then export round-trips"
    );

    // A malformed import and one with a bad solution change nothing.
    let malformed = error(
        http.post(format!("{other_api}/import"))
            .body("{\"version\": 1, \"solutions\": ["),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(malformed.contains("Nothing was imported"), "{malformed}");
    let mut bad = exported.clone();
    bad["solutions"][0]["title"] = json!("Replaced title");
    bad["solutions"][1]["id"] = json!("not an id!");
    let partial = error(
        http.post(format!("{other_api}/import"))
            .body(bad.to_string()),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(partial.contains("solutions[1]"), "{partial}");
    let (_, list) = send(http.get(format!("{other_api}/solutions"))).await;
    assert_eq!(list["solutions"].as_array().unwrap().len(), 3);
    assert!(
        !list.to_string().contains("Replaced title"),
        "nothing of a failed import is kept"
    );

    // Imports are found by keyword at once and by meaning after a reembed.
    let (status, reembedded) = send(http.post(format!("{other_api}/reembed"))).await;
    assert_eq!(status, StatusCode::OK, "{reembedded}");
    assert_eq!(reembedded["embedded"], 3);
    let (_, kb_status) = send(http.get(format!("{other_api}/status"))).await;
    assert_eq!(kb_status["solutions"], 3);
    assert_eq!(kb_status["embedded"], 3);
    let (_, found) = send(
        http.post(format!("{other_api}/search"))
            .json(&json!({"query": "wait until the user stops typing"})),
    )
    .await;
    assert_eq!(found["results"][0]["id"], ids[2].as_str(), "{found}");
    assert!(found["notice"].is_null(), "{found}");

    // Delete, then it is gone.
    let (status, deleted) = send(http.delete(format!("{api}/solutions/{}", ids[1]))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(deleted["deleted"], ids[1].as_str());
    error(
        http.get(format!("{api}/solutions/{}", ids[1])),
        StatusCode::NOT_FOUND,
    )
    .await;
}
