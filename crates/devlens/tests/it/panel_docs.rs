//! The dev panel's Docs page in a real Chromium, as a person uses it: bad input first (said
//! beside the field, nothing stored), add a folder of Markdown and watch the progress, see the
//! library listed, a failed re-add that leaves it serving, ask it a question within a token
//! budget, remove it; an axe audit in light and dark, screenshots kept under
//! `target/tmp/test-artifacts/`. The ingest stream and the remove route are checked on their own.

use crate::common;

use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};

use common::{http, mcp};

/// A small library's docs: three pages, with prose, headings and code blocks.
fn write_widgets_docs(root: &Path) {
    std::fs::create_dir_all(root.join("guide")).unwrap();
    std::fs::write(
        root.join("index.md"),
        "# Widgets\n\nWidgets render dashboards from live data.\n\n## Concepts\n\nA widget \
         shows one metric; a board holds widgets.\n",
    )
    .unwrap();
    std::fs::write(
        root.join("guide/install.md"),
        "# Installation\n\nInstall the package from npm, then import the board.\n\n```bash\nnpm \
         install @acme/widgets\n```\n\n## Usage\n\nMount a board:\n\n```js\nimport { Board } \
         from '@acme/widgets';\nnew Board('#app').mount();\n```\n",
    )
    .unwrap();
    std::fs::write(
        root.join("guide/refresh.md"),
        "# Refresh interval\n\nThe board polls the server every `refreshMs` milliseconds \
         (default 5000). Set it lower for live dashboards.\n",
    )
    .unwrap();
}

/// `base` + `path` with the query parameters `pairs`, encoded.
fn url(base: &str, path: &str, pairs: &[(&str, &str)]) -> reqwest::Url {
    reqwest::Url::parse_with_params(&format!("{base}{path}"), pairs).unwrap()
}

async fn library_ids(client: &reqwest::Client, base: &str) -> Vec<String> {
    let list = http::ok(client.get(format!("{base}/api/docs/libraries"))).await;
    list["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_page_adds_asks_and_removes_library_docs() {
    if !common::browser_available() {
        return;
    }
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Over HTTP, docs folders come from the server's workspace (a folder beside its data dir).
    let workspace = tempfile::tempdir().unwrap();
    let docs_folder = workspace.path().join("widgets-docs");
    write_widgets_docs(&docs_folder);
    let missing_folder = workspace.path().join("no-such-folder");
    // The project depends on an installed package whose docs nobody added.
    std::fs::write(
        workspace.path().join("package.json"),
        r#"{"name": "app", "dependencies": {"gadgets": "^3.1.0"}}"#,
    )
    .unwrap();
    let gadgets = workspace.path().join("node_modules/gadgets");
    std::fs::create_dir_all(&gadgets).unwrap();
    std::fs::write(
        gadgets.join("package.json"),
        r#"{"name": "gadgets", "version": "3.1.0"}"#,
    )
    .unwrap();
    std::fs::write(
        gadgets.join("README.md"),
        "# Gadgets\n\n## Blinking\n\nA gadget blinks twice when it is ready.\n",
    )
    .unwrap();
    let mut server = common::devlens_process(dir.path());
    server
        .env("DEVLENS_MODEL_DIR", &model)
        .env("DEVLENS_WORKSPACE", workspace.path());
    // The unreachable site below is on this machine: allowed, so the crawl tries it.
    server.env("DEVLENS_NETWORK_ALLOW", "127.0.0.1:9");
    let (_server, base) = common::serve_http(server).await;
    let client = crate::common::http::client();

    let viewer_dir = tempfile::tempdir().unwrap();
    let viewer = mcp::panel_viewer(viewer_dir.path()).await;
    let step = |tool: &'static str, args: Value| {
        let viewer = &viewer;
        async move { mcp::ok(viewer, tool, args).await }
    };
    let value = |expression: &'static str| {
        let viewer = &viewer;
        async move {
            mcp::ok(viewer, "evaluate", json!({ "expression": expression }))
                .await
                .data["value"]
                .clone()
        }
    };
    step("navigate", json!({"url": format!("{base}/docs")})).await;
    step("wait_for", json!({"text": "No libraries yet"})).await;
    step("wait_for", json!({"text": "/npm/gadgets"})).await;
    let deps = value("document.querySelector('#deps-table').textContent").await;
    let deps = deps.as_str().unwrap();
    assert!(
        deps.contains("3.1.0") && deps.contains("read on the first question"),
        "{deps}"
    );

    // Bad input: each said beside its field; nothing is stored.
    step("click_element", json!({"element": "#add"})).await;
    step("wait_for", json!({"text": "Give the library an id"})).await;
    assert_eq!(
        value("document.querySelector('#docs-id').getAttribute('aria-invalid')").await,
        "true"
    );
    step(
        "fill_element",
        json!({"element": "#docs-id", "value": "/acme/widgets"}),
    )
    .await;
    step("click_element", json!({"element": "#add"})).await;
    step("wait_for", json!({"text": "Give the source"})).await;
    step(
        "fill_element",
        json!({"element": "#docs-source", "value": missing_folder.display().to_string()}),
    )
    .await;
    step("click_element", json!({"element": "#add"})).await;
    step(
        "wait_for",
        json!({"text": "Check that it exists and is readable"}),
    )
    .await;
    let beside = value("document.querySelector('#docs-source-error').textContent").await;
    assert!(
        beside.as_str().unwrap().contains("no-such-folder"),
        "{beside}"
    );
    step(
        "fill_element",
        json!({"element": "#docs-source", "value": "http://127.0.0.1:9/docs/"}),
    )
    .await;
    step("click_element", json!({"element": "#add"})).await;
    step(
        "wait_for",
        json!({"text": "cannot fetch http://127.0.0.1:9/", "timeoutMs": 30000}),
    )
    .await;
    assert!(
        value("document.querySelector('#docs-source-error').textContent")
            .await
            .as_str()
            .unwrap()
            .contains("cannot fetch http://127.0.0.1:9/")
    );
    assert!(
        library_ids(&client, &base).await.is_empty(),
        "failed adds store nothing"
    );
    assert!(
        value("document.querySelector('#library-table').textContent")
            .await
            .as_str()
            .unwrap()
            .contains("No libraries yet")
    );

    // A folder of Markdown: the progress line moves through reading and embedding (every text
    // it showed is recorded), then says what was added; the library is listed.
    value(
        "(() => { window.shownStatus = []; new MutationObserver((records) => { for (const r of \
         records) for (const n of r.addedNodes) window.shownStatus.push(n.textContent); })\
         .observe(document.querySelector('#add-status'), { childList: true }); return true; })()",
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#docs-source", "value": docs_folder.display().to_string()}),
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#docs-name", "value": "Acme Widgets"}),
    )
    .await;
    step("click_element", json!({"element": "#add"})).await;
    step(
        "wait_for",
        json!({"text": "Added /acme/widgets latest: 3 pages", "timeoutMs": 60000}),
    )
    .await;
    let shown = value("window.shownStatus.join('\\n')").await;
    let shown = shown.as_str().unwrap();
    assert!(shown.contains("Reading pages: 3 of 3"), "{shown}");
    assert!(shown.contains("Embedding sections:"), "{shown}");
    assert!(
        shown.contains("embedded with sentence-transformers/all-MiniLM-L6-v2"),
        "{shown}"
    );
    assert_eq!(
        value("document.querySelector('#docs-source-error').hidden").await,
        true,
        "the earlier error is gone"
    );
    step("wait_for", json!({"text": "Acme Widgets"})).await;
    let row = value("document.querySelector('#library-table tbody tr').textContent").await;
    let row = row.as_str().unwrap();
    assert!(
        row.contains("/acme/widgets") && row.contains("latest"),
        "{row}"
    );

    // A re-add that fails leaves the stored docs listed and answering.
    step(
        "fill_element",
        json!({"element": "#docs-source", "value": missing_folder.display().to_string()}),
    )
    .await;
    step("click_element", json!({"element": "#add"})).await;
    step(
        "wait_for",
        json!({"text": "Nothing was added; the stored docs are unchanged."}),
    )
    .await;
    assert_eq!(library_ids(&client, &base).await, ["/acme/widgets"]);
    let still = http::ok(client.post(format!("{base}/api/docs/query")).json(
        &json!({"library_id": "/acme/widgets", "query": "refresh interval", "context_limit": 1000}),
    ))
    .await;
    assert!(
        still["context"].as_str().unwrap().contains("refreshMs"),
        "{still}"
    );

    // Ask: bad input beside the fields, then a question within a 1000-token budget.
    step("click_element", json!({"element": "#ask"})).await;
    step("wait_for", json!({"text": "Type a question"})).await;
    step(
        "fill_element",
        json!({"element": "#ask-query", "value": "how do I install widgets with npm"}),
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#ask-budget", "value": "50"}),
    )
    .await;
    step("click_element", json!({"element": "#ask"})).await;
    step(
        "wait_for",
        json!({"text": "The token budget is a whole number from 1000 to 8000"}),
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#ask-budget", "value": "1000"}),
    )
    .await;
    step("click_element", json!({"element": "#ask"})).await;
    step("wait_for", json!({"text": "tokens of 1000"})).await;
    let status = value("document.querySelector('#ask-status').textContent").await;
    let status = status.as_str().unwrap();
    assert!(status.contains("from /acme/widgets latest"), "{status}");
    let tokens: usize = status
        .split(": ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no token count in {status:?}"));
    assert!(tokens > 0 && tokens <= 1000, "{status}");
    let headings =
        value("[...document.querySelectorAll('#answer h3')].map((h) => h.textContent).join('\\n')")
            .await;
    assert!(
        headings.as_str().unwrap().contains("Installation"),
        "{headings}"
    );
    let code = value(
        "[...document.querySelectorAll('#answer pre code')].map((c) => c.textContent).join('\\n')",
    )
    .await;
    assert!(
        code.as_str().unwrap().contains("npm install @acme/widgets"),
        "code blocks are shown as code: {code}"
    );
    assert!(
        !code.as_str().unwrap().contains("```"),
        "the fences are not shown: {code}"
    );
    assert!(
        value("document.querySelector('#context').textContent")
            .await
            .as_str()
            .unwrap()
            .contains("# Acme Widgets documentation")
    );
    step(
        "click_element",
        json!({"element": "#context-details summary"}),
    )
    .await;

    // Accessible, light and dark; screenshots for a person to look at.
    mcp::audit_panel_page(&viewer, viewer_dir.path(), "docs").await;

    // Remove, after the confirmation.
    let asked = step(
        "click_element",
        json!({"element": "#library-table tbody button"}),
    )
    .await;
    assert_eq!(asked.data["dialog"]["kind"], "confirm", "{}", asked.text);
    step("handle_dialog", json!({"accept": true})).await;
    step("wait_for", json!({"text": "Removed /acme/widgets."})).await;
    step("wait_for", json!({"text": "No libraries yet"})).await;
    assert!(library_ids(&client, &base).await.is_empty());

    // The dependency is askable before anyone added it: the first question reads it.
    value(
        "(() => { const s = document.querySelector('#ask-library'); s.value = '/npm/gadgets'; \
         s.dispatchEvent(new Event('change')); return s.value; })()",
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#ask-query", "value": "when does a gadget blink"}),
    )
    .await;
    step("click_element", json!({"element": "#ask"})).await;
    step(
        "wait_for",
        json!({"text": "from /npm/gadgets 3.1.0", "timeoutMs": 60000}),
    )
    .await;
    let notice = value("document.querySelector('#ask-notice').textContent").await;
    assert!(
        notice
            .as_str()
            .unwrap()
            .contains("read gadgets 3.1.0 from node_modules/gadgets"),
        "{notice}"
    );
    step("wait_for", json!({"text": "stored"})).await;
    assert_eq!(library_ids(&client, &base).await, ["/npm/gadgets"]);
    let deps = http::ok(client.get(format!("{base}/api/docs/deps"))).await;
    assert_eq!(deps["dependencies"][0]["id"], "/npm/gadgets", "{deps}");
    assert_eq!(deps["dependencies"][0]["installed"], "3.1.0", "{deps}");
    assert_eq!(deps["dependencies"][0]["ingested"], true, "{deps}");
    http::ok(client.delete(url(&base, "/api/docs/libraries", &[("id", "/npm/gadgets")]))).await;
    step("chrome_disconnect", json!({})).await;
    viewer.cancel().await.unwrap();

    // The stream the page reads: progress per stage, then the report.
    let folder = docs_folder.display().to_string();
    let stream = client
        .post(url(
            &base,
            "/api/docs/libraries/stream",
            &[
                ("id", "widgets"),
                ("path", folder.as_str()),
                ("version", "2.0"),
            ],
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let body = stream.text().await.unwrap();
    assert!(
        body.contains("event: progress\ndata: {\"stage\":\"reading\",\"done\":1,\"total\":3}"),
        "{body}"
    );
    assert!(
        body.contains(
            "event: done\ndata: {\"id\":\"widgets\",\"name\":\"widgets\",\"version\":\"2.0\""
        ),
        "{body}"
    );
    let failed = client
        .post(url(
            &base,
            "/api/docs/libraries/stream",
            &[("id", "widgets"), ("url", "http://127.0.0.1:9/")],
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        failed.contains("event: error") && failed.contains("\"kind\":\"upstream\""),
        "{failed}"
    );
    let no_source = http::error(
        client.post(url(
            &base,
            "/api/docs/libraries/stream",
            &[("id", "widgets")],
        )),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(
        no_source.contains("give exactly one of `path`"),
        "{no_source}"
    );
    assert_eq!(library_ids(&client, &base).await, ["widgets"]);

    // Remove over REST: a version, what is not there, the library.
    let removed = http::ok(client.delete(url(
        &base,
        "/api/docs/libraries",
        &[("id", "widgets"), ("version", "2.0")],
    )))
    .await;
    assert_eq!(
        removed,
        json!({"id": "widgets", "version": "2.0", "removed": true})
    );
    let gone = http::error(
        client.delete(url(
            &base,
            "/api/docs/libraries",
            &[("id", "widgets"), ("version", "2.0")],
        )),
        StatusCode::NOT_FOUND,
    )
    .await;
    assert!(
        gone.contains("nothing to remove: library `widgets` version `2.0`"),
        "{gone}"
    );
    http::ok(client.delete(url(&base, "/api/docs/libraries", &[("id", "widgets")]))).await;
    assert!(library_ids(&client, &base).await.is_empty());
}
