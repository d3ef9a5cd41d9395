//! The dev panel's API page in a real Chromium, as a person uses it: add a project (bad input
//! first), re-index it and see its badge change, re-index all, search and open a hit; an axe
//! audit in light and dark, screenshots kept under `target/tmp/test-artifacts/`. The re-index
//! stream the page reads is checked on its own too.

use crate::common;

use serde_json::{Value, json};

use common::mcp;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_page_adds_indexes_and_searches() {
    if !common::browser_available() {
        return;
    }
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The project's folder, beside the data dir: over HTTP a spec file must lie in it.
    let workspace = tempfile::tempdir().unwrap();
    let mut server = common::devlens_process(dir.path());
    server
        .env("DEVLENS_MODEL_DIR", &model)
        .env("DEVLENS_WORKSPACE", workspace.path())
        // The unreachable spec URL below is on this machine: allowed, so the fetch is tried.
        .env("DEVLENS_NETWORK_ALLOW", "127.0.0.1:9");
    let (_server, base) = common::serve_http(server).await;
    let http = crate::common::http::client();
    // The project's spec is a copy, so the test can change it and see the index go stale.
    let spec_file = workspace.path().join("petstore.json");
    std::fs::copy(common::petstore(), &spec_file).unwrap();

    let viewer_dir = tempfile::tempdir().unwrap();
    let viewer = mcp::panel_viewer(viewer_dir.path()).await;
    let step = |tool: &'static str, args: Value| {
        let viewer = &viewer;
        async move { mcp::ok(viewer, tool, args).await }
    };
    step("navigate", json!({"url": format!("{base}/")})).await;
    step("wait_for", json!({"text": "No projects yet"})).await;

    // Bad input: said beside the field; nothing is stored.
    step("click_element", json!({"element": "#add"})).await;
    step("wait_for", json!({"text": "Give the project a name"})).await;
    step(
        "fill_element",
        json!({"element": "#new-name", "value": "pets"}),
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#new-spec", "value": "http://127.0.0.1:9/openapi.json"}),
    )
    .await;
    step("click_element", json!({"element": "#add"})).await;
    step(
        "wait_for",
        json!({"text": "cannot fetch http://127.0.0.1:9/openapi.json"}),
    )
    .await;
    let projects: Value = http
        .get(format!("{base}/api/projects"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        projects["projects"],
        json!([]),
        "a spec that does not load adds nothing"
    );

    // A project whose spec loads: listed, its index not built yet.
    step(
        "fill_element",
        json!({"element": "#new-spec", "value": spec_file.display().to_string()}),
    )
    .await;
    step("click_element", json!({"element": "#add"})).await;
    step("wait_for", json!({"text": "Added pets."})).await;
    step("wait_for", json!({"text": "Not built"})).await;

    // Re-index: the badge goes from "Not built" to "Indexed", with the count.
    step(
        "click_element",
        json!({"element": "details[data-project=pets] summary"}),
    )
    .await;
    step(
        "click_element",
        json!({"element": "details[data-project=pets] button"}),
    )
    .await;
    step(
        "wait_for",
        json!({"text": "Indexed 5 endpoints in", "timeoutMs": 60000}),
    )
    .await;
    // The message comes first; the badge follows once the panel has read the index's status
    // again (one more request, which a loaded machine can delay).
    let mut badge = String::new();
    for _ in 0..120 {
        badge = step("evaluate", json!({"expression": "document.querySelector('details[data-project=pets] .badge').textContent"})).await.text;
        if badge.contains("Indexed") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert!(badge.contains("Indexed"), "{badge}");
    let facts = step("snapshot", json!({})).await.text;
    assert!(
        facts.contains("Vectors") && facts.contains("all-MiniLM-L6-v2"),
        "{facts}"
    );

    step("click_element", json!({"element": "#reindex-all"})).await;
    step(
        "wait_for",
        json!({"text": "Re-indexed 1 of 1 project.", "timeoutMs": 60000}),
    )
    .await;

    // Search by meaning and open a hit into its details.
    step(
        "fill_element",
        json!({"element": "#query", "value": "adopt a dog"}),
    )
    .await;
    step(
        "click_element",
        json!({"element": "input[name=mode][value=semantic]"}),
    )
    .await;
    step(
        "click_element",
        json!({"element": "#search-form button[type=submit]"}),
    )
    .await;
    step("wait_for", json!({"text": "results (semantic)"})).await;
    let first = step(
        "evaluate",
        json!({"expression": "document.querySelector('#results li summary').textContent"}),
    )
    .await;
    assert!(first.text.contains("POST /pets"), "{}", first.text);
    step("click_element", json!({"element": "#results li summary"})).await;
    step(
        "wait_for",
        json!({"text": "Request body (application/json"}),
    )
    .await;

    // The spec changes: the index is stale, and the page says so after a reload.
    let mut spec: Value =
        serde_json::from_str(&std::fs::read_to_string(&spec_file).unwrap()).unwrap();
    spec["info"]["title"] = json!("Petstore, changed");
    spec["paths"]["/pets"]["post"]["summary"] = json!("Add a pet to the store");
    std::fs::write(&spec_file, serde_json::to_vec_pretty(&spec).unwrap()).unwrap();
    step("navigate", json!({"url": format!("{base}/")})).await;
    // The page lists its projects after it loads, as a person sees it: wait for the badge.
    step("wait_for", json!({"text": "Stale"})).await;
    step(
        "click_element",
        json!({"element": "details[data-project=pets] summary"}),
    )
    .await;
    step(
        "wait_for",
        json!({"text": "The spec changed since this index was built"}),
    )
    .await;
    let badge = step("evaluate", json!({"expression": "document.querySelector('details[data-project=pets] .badge').textContent"})).await;
    assert!(badge.text.contains("Stale"), "{}", badge.text);

    // Accessible, light and dark; screenshots for a person to look at.
    mcp::audit_panel_page(&viewer, viewer_dir.path(), "api").await;
    step("chrome_disconnect", json!({})).await;
    viewer.cancel().await.unwrap();

    // The stream the page reads: progress events, then the report.
    let stream = http
        .post(format!(
            "{base}/api/embed/reindex/stream?project=pets&force=true"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let body = stream.text().await.unwrap();
    assert!(body.contains("event: progress\ndata: {\"done\":"), "{body}");
    assert!(
        body.contains("event: done\ndata: {\"indexed\":true"),
        "{body}"
    );
    let unknown = http
        .post(format!("{base}/api/embed/reindex/stream?project=nope"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        unknown.contains("event: error") && unknown.contains("nope"),
        "{unknown}"
    );
    // Re-index all: each project started, progressing and finished, then the summary.
    let all = http
        .post(format!("{base}/api/embed/reindex-all/stream?force=true"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for event in ["started", "progress", "finished"] {
        assert!(
            all.contains(&format!("event: {event}\ndata: {{")),
            "{event}: {all}"
        );
    }
    assert!(all.contains("\"built\":1"), "{all}");
    // Projects over REST: make active, remove.
    let added = http
        .post(format!("{base}/api/projects"))
        .json(&json!({"name": "pets2", "spec": spec_file}))
        .send()
        .await
        .unwrap();
    assert_eq!(added.status(), 201);
    let active: Value = http
        .post(format!("{base}/api/projects/pets2/activate"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(active["active"], "pets2");
    let removed = http
        .delete(format!("{base}/api/projects/pets2"))
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 200);
    let bad = http
        .post(format!("{base}/api/projects"))
        .json(&json!({"name": "bad name!", "spec": common::petstore()}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
}
