//! The dev panel's Knowledge base page in a real Chromium, as a person uses it: save a solution
//! through the form (bad input first: said beside the field, nothing lost), find it by meaning
//! while typing, ask and see a numbered source, edit it, delete one after a confirm, save the
//! settings into the config file (bad values refused beside the field), export and import,
//! re-embed with progress; an axe audit in light and dark, screenshots kept under
//! `target/tmp/test-artifacts/`. The endpoints the page reads are checked on their own too.

use crate::common;

use serde_json::{Value, json};

use common::mcp;

/// The config file the server reads (`./devlens.toml` in its working folder), with a comment
/// and another table that saving the settings must keep.
const CONFIG: &str = "# settings of this checkout\n[server]\nallowed_hosts = [\"devlens.local\"]\n\n\
                      [kb]\n# how many results\ntop_k = 5 # five is plenty\n";

const CORS_TITLE: &str = "Fix CORS preflight failing on PUT";
const CORS_TEXT: &str = "The browser sends an OPTIONS preflight before a cross-origin PUT. The \
                         server must answer it with Access-Control-Allow-Origin, \
                         Access-Control-Allow-Methods: PUT and Access-Control-Allow-Headers: \
                         Content-Type, otherwise the request is blocked.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_knowledge_base_page_saves_finds_asks_and_configures() {
    if !common::browser_available() {
        return;
    }
    let Some(model) = common::model_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config_file = dir.path().join("devlens.toml");
    std::fs::write(&config_file, CONFIG).unwrap();
    let mut server = common::devlens_process(dir.path());
    server.env("DEVLENS_MODEL_DIR", &model);
    let (_server, base) = common::serve_http(server).await;
    let http = crate::common::http::client();
    let solutions = || {
        let http = http.clone();
        let url = format!("{base}/api/kb/solutions");
        async move {
            let list: Value = http.get(url).send().await.unwrap().json().await.unwrap();
            list["solutions"].as_array().unwrap().clone()
        }
    };

    let viewer_dir = tempfile::tempdir().unwrap();
    let viewer = mcp::panel_viewer(viewer_dir.path()).await;
    let step = |tool: &'static str, args: Value| {
        let viewer = &viewer;
        async move { mcp::ok(viewer, tool, args).await }
    };
    let eval = |expression: String| {
        let viewer = &viewer;
        async move {
            let reply = mcp::ok(viewer, "evaluate", json!({ "expression": expression })).await;
            assert!(reply.data.get("error").is_none(), "{}", reply.text);
            reply.data["value"].clone()
        }
    };
    let fill = |element: &'static str, value: &str| {
        step(
            "fill_element",
            json!({ "element": element, "value": value }),
        )
    };
    step("navigate", json!({"url": format!("{base}/kb")})).await;
    step("wait_for", json!({"text": "No solutions yet"})).await;

    // Bad input: said beside the field, and what was typed stays.
    fill("#solution-text", CORS_TEXT).await;
    fill("#solution-url", "see the wiki page").await;
    step("click_element", json!({"element": "#save-solution"})).await;
    step("wait_for", json!({"text": "Give the solution a title"})).await;
    let beside = eval("document.querySelector('#solution-title-error').hidden".into()).await;
    assert_eq!(beside, json!(false));
    fill("#solution-title", CORS_TITLE).await;
    fill("#solution-tags", "cors, fetch").await;
    step("click_element", json!({"element": "#save-solution"})).await;
    step(
        "wait_for",
        json!({"text": "is not a URL", "timeoutMs": 60000}),
    )
    .await;
    let url_error = eval("document.querySelector('#solution-url-error').textContent".into()).await;
    assert!(
        url_error.as_str().unwrap().contains("see the wiki page"),
        "{url_error}"
    );
    let kept = eval("document.querySelector('#solution-text').value".into()).await;
    assert_eq!(kept, json!(CORS_TEXT), "a refused save keeps the text");
    assert!(
        solutions().await.is_empty(),
        "a refused save stores nothing"
    );

    // Saved through the form: listed.
    fill(
        "#solution-url",
        "https://developer.mozilla.org/docs/Web/HTTP/CORS",
    )
    .await;
    step("click_element", json!({"element": "#save-solution"})).await;
    step(
        "wait_for",
        json!({"text": format!("Saved \"{CORS_TITLE}\"."), "timeoutMs": 60000}),
    )
    .await;
    let listed = solutions().await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["tags"], json!(["cors", "fetch"]));
    let cors_id = listed[0]["id"].as_str().unwrap().to_string();
    // Two more, over REST, for search to choose between.
    for (title, text) in [
        (
            "Center a div with flexbox",
            "Give the parent display: flex, justify-content: center and align-items: center.",
        ),
        (
            "Debounce a search input",
            "Wait until the user stops typing for 300 ms before calling the API: clear the \
             previous timer on every keystroke.",
        ),
    ] {
        let saved = http
            .post(format!("{base}/api/kb/solutions"))
            .json(&json!({"title": title, "text": text, "tags": ["frontend"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(saved.status(), 201);
    }
    step("navigate", json!({"url": format!("{base}/kb")})).await;
    step("wait_for", json!({"text": "Center a div with flexbox"})).await;
    let rows = eval(
        "[...document.querySelectorAll('#solution-table tbody tr td:first-child')].map(td => td.textContent)"
            .into(),
    )
    .await;
    assert_eq!(
        rows[2],
        json!(CORS_TITLE),
        "newest first, the first saved last: {rows}"
    );

    // Found by meaning (no word in common with the title) while typing, with its relevance.
    step(
        "click_element",
        json!({"element": "input[name=mode][value=semantic]"}),
    )
    .await;
    fill("#kb-query", "browser blocks my request to another origin").await;
    step("wait_for", json!({"text": "(semantic)."})).await;
    let first = eval("document.querySelector('#search-results li').textContent".into()).await;
    let first = first.as_str().unwrap();
    assert!(first.contains(CORS_TITLE), "{first}");
    assert!(first.contains("% relevant"), "{first}");

    // Ask: the answer is the cited context, with numbered sources.
    fill("#ask-query", "Why does my cross-origin PUT fail?").await;
    step("click_element", json!({"element": "#ask"})).await;
    step("wait_for", json!({"text": "Cited context only"})).await;
    let sources = eval("document.querySelector('#answer-sources').textContent".into()).await;
    assert!(
        sources
            .as_str()
            .unwrap()
            .starts_with(&format!("[1] {CORS_TITLE}")),
        "{sources}"
    );

    // Edit: the form fills with the solution; the change is saved and listed.
    step(
        "click_element",
        json!({"element": format!("button[data-edit='{cors_id}']")}),
    )
    .await;
    step("wait_for", json!({"text": "Save changes"})).await;
    let title_now = eval("document.querySelector('#solution-title').value".into()).await;
    assert_eq!(title_now, json!(CORS_TITLE));
    fill(
        "#solution-title",
        "Fix CORS preflight failing on PUT and DELETE",
    )
    .await;
    step("click_element", json!({"element": "#save-solution"})).await;
    step(
        "wait_for",
        json!({"text": "Updated \"Fix CORS preflight failing on PUT and DELETE\"."}),
    )
    .await;
    let edited: Value = http
        .get(format!("{base}/api/kb/solutions/{cors_id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        edited["title"],
        "Fix CORS preflight failing on PUT and DELETE"
    );
    assert_eq!(edited["text"], CORS_TEXT, "fields not changed stay");

    // Settings: bad values refused beside their field, the file untouched.
    fill("#setting-top-k", "0").await;
    step("click_element", json!({"element": "#save-settings"})).await;
    step(
        "wait_for",
        json!({"text": "Top-k must be a whole number from 1 to 50"}),
    )
    .await;
    let beside = eval("document.querySelector('#setting-top-k-error').hidden".into()).await;
    assert_eq!(beside, json!(false));
    fill("#setting-top-k", "1").await;
    fill("#setting-threshold", "1.5").await;
    step("click_element", json!({"element": "#save-settings"})).await;
    step(
        "wait_for",
        json!({"text": "The similarity threshold must be a number from 0 to 1"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&config_file).unwrap(), CONFIG);
    // Good values: written into the file (its comments and other tables kept), used at once.
    fill("#setting-threshold", "0.2").await;
    step("click_element", json!({"element": "#setting-show-scores"})).await;
    step("click_element", json!({"element": "#save-settings"})).await;
    step("wait_for", json!({"text": "Settings saved."})).await;
    let written = std::fs::read_to_string(&config_file).unwrap();
    assert!(
        written.starts_with(
            "# settings of this checkout\n[server]\nallowed_hosts = [\"devlens.local\"]\n\n[kb]\n\
             # how many results\ntop_k = 1 # five is plenty\n"
        ),
        "{written}"
    );
    assert!(
        written.contains("similarity_threshold = 0.2\n"),
        "{written}"
    );
    assert!(
        written.contains("show_similarity_scores = false\n"),
        "{written}"
    );
    let found: Value = http
        .post(format!("{base}/api/kb/search"))
        .json(&json!({"query": "flexbox center CORS debounce", "mode": "keyword"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        found["results"].as_array().unwrap().len(),
        1,
        "the running server uses top_k = 1: {found}"
    );
    let shown = eval("document.querySelector('#search-results').textContent".into()).await;
    assert!(
        !shown.as_str().unwrap().contains("% relevant"),
        "scores hidden: {shown}"
    );

    // Delete, after a confirm: gone from the list.
    let center_id = solutions()
        .await
        .iter()
        .find(|s| s["title"] == "Center a div with flexbox")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let asked = step(
        "click_element",
        json!({"element": format!("button[data-delete='{center_id}']")}),
    )
    .await;
    assert_eq!(asked.data["dialog"]["kind"], "confirm", "{}", asked.text);
    step("handle_dialog", json!({"accept": true})).await;
    step(
        "wait_for",
        json!({"text": "Deleted \"Center a div with flexbox\"."}),
    )
    .await;
    let table = eval("document.querySelector('#solution-table').textContent".into()).await;
    assert!(!table.as_str().unwrap().contains("Center a div"), "{table}");
    assert_eq!(solutions().await.len(), 2);

    // Export (what the Export link downloads) and import it back as new solutions.
    let exported = eval("fetch('/api/kb/export').then(r => r.text())".into()).await;
    let exported: Value = serde_json::from_str(exported.as_str().unwrap()).unwrap();
    assert_eq!(exported["solutions"].as_array().unwrap().len(), 2);
    let mut copies = exported.clone();
    for (i, s) in copies["solutions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        s["id"] = json!(format!("copy-{i}"));
    }
    let choose = |text: String| {
        format!(
            "(() => {{ const input = document.querySelector('#import-file'); const files = new \
             DataTransfer(); files.items.add(new File([{}], 'devlens-kb.json', {{ type: \
             'application/json' }})); input.files = files.files; input.dispatchEvent(new \
             Event('change', {{ bubbles: true }})); return input.files.length; }})()",
            serde_json::to_string(&text).unwrap()
        )
    };
    // A broken file first: refused beside the field, nothing imported.
    assert_eq!(
        eval(choose("{\"version\": 1, \"solutions\": [".into())).await,
        json!(1)
    );
    step("click_element", json!({"element": "#import"})).await;
    step("wait_for", json!({"text": "Nothing was imported"})).await;
    assert_eq!(solutions().await.len(), 2);
    assert_eq!(eval(choose(copies.to_string())).await, json!(1));
    step("click_element", json!({"element": "#import"})).await;
    step(
        "wait_for",
        json!({"text": "Imported 2 solutions: 2 new, 0 replaced, 0 unchanged. 2 solutions need \
                        embedding before semantic search finds them"}),
    )
    .await;
    let round_trip: Value = http
        .get(format!("{base}/api/kb/export"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for copy in copies["solutions"].as_array().unwrap() {
        assert!(
            round_trip["solutions"].as_array().unwrap().contains(copy),
            "{copy} came back as it was exported"
        );
    }

    // Re-embed: the imported copies are embedded, with progress on the way.
    eval(
        "(() => { window.seen = []; new MutationObserver((records) => { for (const r of records) \
         for (const n of r.addedNodes) window.seen.push(n.textContent); }).observe(\
         document.querySelector('#reembed-status'), { childList: true }); return true; })()"
            .into(),
    )
    .await;
    step("click_element", json!({"element": "#reembed"})).await;
    step(
        "wait_for",
        json!({"text": "Embedded 2 solutions", "timeoutMs": 60000}),
    )
    .await;
    let seen = eval("window.seen".into()).await;
    assert!(
        seen.as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("Embedded 0 of 2 solutions")),
        "progress shown: {seen}"
    );
    let progress_hidden = eval("document.querySelector('#reembed-progress').hidden".into()).await;
    assert_eq!(progress_hidden, json!(true));
    step("wait_for", json!({"text": "4 solutions, 4 embedded"})).await;

    // Accessible, light and dark; screenshots for a person to look at.
    fill("#kb-query", "cross-origin request blocked").await;
    step("wait_for", json!({"text": "1 result (semantic)"})).await;
    mcp::audit_panel_page(&viewer, viewer_dir.path(), "kb").await;
    step("chrome_disconnect", json!({})).await;
    viewer.cancel().await.unwrap();

    // The endpoints on their own: the settings read back, a bad one refused over REST...
    let settings: Value = http
        .get(format!("{base}/api/kb/settings"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(settings["topK"], 1);
    assert_eq!(settings["showSimilarityScores"], false);
    assert_eq!(
        settings["configFile"],
        json!(config_file.display().to_string()),
        "the file the server read, in full"
    );
    let refused = http
        .put(format!("{base}/api/kb/settings"))
        .json(&json!({"topK": 51}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let unknown = http
        .put(format!("{base}/api/kb/settings"))
        .json(&json!({"top": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 400);
    assert!(unknown.text().await.unwrap().contains("topK"));
    let reset: Value = http
        .put(format!("{base}/api/kb/settings"))
        .json(&json!({"similarityThreshold": null, "topK": 5}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reset["similarityThreshold"], Value::Null);
    let written = std::fs::read_to_string(&config_file).unwrap();
    assert!(!written.contains("similarity_threshold"), "{written}");
    // ... and the re-embed stream: progress, then the report.
    let more = json!({"version": 1, "solutions": [{
        "id": "streamed", "title": "Stream progress with server-sent events",
        "url": null, "text": "Answer text/event-stream and write `event:` and `data:` lines.",
        "summary": null, "tags": [], "createdAt": "2026-01-02T03:04:05Z",
        "updatedAt": "2026-01-02T03:04:05Z"
    }]});
    let imported = http
        .post(format!("{base}/api/kb/import"))
        .body(more.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(imported.status(), 200);
    let stream = http
        .post(format!("{base}/api/kb/reembed/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let body = stream.text().await.unwrap();
    assert!(
        body.contains("event: progress\ndata: {\"done\":0,\"total\":1}"),
        "{body}"
    );
    assert!(
        body.contains("event: progress\ndata: {\"done\":1,\"total\":1}"),
        "{body}"
    );
    assert!(body.contains("event: done\ndata: {\"model\":"), "{body}");
}
