//! The Chrome extension on its own, in a real headless Chromium with **no devlens server
//! running**: it saves a page and a selection into its own knowledge base (IndexedDB), finds
//! them by meaning and by keywords, asks (saying no model could answer), exports and imports in
//! the server's format; its vectors and chunks agree with the server's for the same texts; and a
//! folder without the model still saves and searches, by keywords, saying why.

use crate::common;
use crate::extension::{ARTICLE, Driver, extension_path, launch_chromium};

use std::path::Path;

use serde_json::{Value, json};

/// Texts whose vectors must agree between the browser and the server: prose, code, accents,
/// CJK, punctuation runs, special tokens written out, and one past the 256-token truncation.
fn agreement_texts() -> Vec<String> {
    vec![
        "Smooth resizing without jank\nThrottle the resize handler to one call per frame.".into(),
        "fn main() { println!(\"{}\", a.iter().map(|x| x * 2).sum::<i32>()); }".into(),
        "Café crème brûlée: naïve façade — Ångström, Ελληνικά, ΟΔΟΣ ΣΟΦΟΚΛΕΟΥΣ, Привет мир.".into(),
        "日本語のテキストと中文文本 mixed with English words".into(),
        "Why?!... (see [MDN]: https://developer.mozilla.org/en-US/docs/Web/API) #tag @user $var"
            .into(),
        "literal [SEP] and [CLS] tokens in [UNK] text".into(),
        "useEffect cleanup ".repeat(120),
        "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopic"
            .into(),
    ]
}

/// Texts whose chunking must be the server's byte for byte.
fn chunking_texts() -> Vec<String> {
    let mut long_line = String::new();
    for i in 0..80 {
        long_line.push_str(&format!("Sentence number {i} says something. "));
    }
    vec![
        format!(
            "# Title\n\nFirst paragraph.\n\n```js\nconst a = 1;\n\nconst b = 2;\n```\n\n{}",
            "Another paragraph with words. ".repeat(40)
        ),
        long_line,
        "é".repeat(900),
        format!("{}\n\n{}", "naïve café ".repeat(70), "日本語".repeat(200)),
        "x".repeat(2000),
        "  leading spaces\n\n\n   and blank lines   \n\n\ttabs\tinside\n".into(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_saves_searches_asks_and_moves_its_solutions_with_no_server() {
    if !common::browser_available() {
        return;
    }
    let Some(model) = common::model_dir() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let dir = extension_path(data.path());
    for name in [
        "model/model.onnx",
        "model/tokenizer.json",
        "model/model.json",
    ] {
        assert!(dir.join(name).is_file(), "{name} missing");
    }
    let installed =
        common::stdout_json(common::devlens(data.path()).args(["extension", "path", "--json"]));
    let size = installed["bytes"].as_u64().unwrap();
    assert!(size < 40_000_000, "the extension folder is {size} bytes");

    let site = common::serve_router(axum::Router::new().route(
        "/article",
        axum::routing::get(|| async { axum::response::Html(ARTICLE) }),
    ))
    .await;
    let article_url = format!("{site}/article");

    let chromium = launch_chromium(&dir).await;
    let extension = format!("chrome-extension://{}", chromium.extension_id);
    let driver = Driver::connect(&chromium).await;
    let step = |tool: &'static str, args: Value| {
        let driver = &driver;
        async move { driver.step(tool, args).await }
    };
    let value = |expression: String| {
        let driver = &driver;
        async move { driver.value(&expression).await }
    };

    // The popup, aimed at the article's tab: the model loads in the browser, the page is saved
    // there, nothing is paired and no server runs.
    step("target", json!({"action": "new", "url": &article_url})).await;
    step(
        "target",
        json!({"action": "new", "url": format!("{extension}/options.html")}),
    )
    .await;
    let tab = value(format!(
        "(await chrome.tabs.query({{}})).find((t) => t.url === '{article_url}').id"
    ))
    .await;
    step(
        "navigate",
        json!({"url": format!("{extension}/popup.html?tab={tab}")}),
    )
    .await;
    step(
        "wait_for",
        json!({"text": "Saved in this browser only", "timeoutMs": 60000}),
    )
    .await;
    step(
        "wait_for",
        json!({"text": "Search by meaning ready", "timeoutMs": 60000}),
    )
    .await;
    step(
        "wait_for",
        json!({"text": "Main text:", "timeoutMs": 60000}),
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#tags", "value": "performance, CSS"}),
    )
    .await;
    step("click_element", json!({"element": "#save"})).await;
    step(
        "wait_for",
        json!({"text": "in this browser (searchable by meaning)", "timeoutMs": 60000}),
    )
    .await;

    // By meaning (the default), with relevance in percent.
    let question = "my page lags while the user drags the browser window bigger";
    step(
        "fill_element",
        json!({"element": "#query", "value": question}),
    )
    .await;
    step(
        "click_element",
        json!({"element": "#search-form button[type=submit]"}),
    )
    .await;
    step(
        "wait_for",
        json!({"text": "found by meaning", "timeoutMs": 60000}),
    )
    .await;
    let first = value("document.querySelector('#results li').textContent".into()).await;
    let first = first.as_str().unwrap();
    assert!(
        first.starts_with("Smooth resizing without jank") && first.contains("% relevant"),
        "{first}"
    );
    // By keywords, with the toggle.
    step(
        "click_element",
        json!({"element": "input[name=mode][value=keyword]"}),
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#query", "value": "ResizeObserver"}),
    )
    .await;
    step(
        "click_element",
        json!({"element": "#search-form button[type=submit]"}),
    )
    .await;
    step(
        "wait_for",
        json!({"text": "found by keywords", "timeoutMs": 60000}),
    )
    .await;
    let first = value("document.querySelector('#results li').textContent".into()).await;
    assert!(
        first
            .as_str()
            .unwrap()
            .starts_with("Smooth resizing without jank"),
        "{first}"
    );
    step(
        "click_element",
        json!({"element": "input[name=mode][value=semantic]"}),
    )
    .await;

    // Ask: no built-in model headless, no server paired → the cited sources, and it says so.
    step(
        "fill_element",
        json!({"element": "#question", "value": "How do I stop the page stuttering while the window is resized?"}),
    )
    .await;
    step(
        "click_element",
        json!({"element": "#ask-form button[type=submit]"}),
    )
    .await;
    step(
        "wait_for",
        json!({"text": "no devlens server is paired", "timeoutMs": 60000}),
    )
    .await;
    let context = value("document.querySelector('#context').textContent".into()).await;
    assert!(
        context.as_str().unwrap().starts_with("[1] Smooth resizing"),
        "{context}"
    );

    // The context menu's selection, saved through the engine as the service worker does.
    let saved = value(format!(
        "const {{ saveSelection }} = await import('/menu.js'); const {{ engine }} = await import('/engine.js'); \
         const r = await engine('save', saveSelection({{selectionText: 'Prefer a ResizeObserver when only one element matters.', pageUrl: '{article_url}'}}, {{title: 'Resize notes'}})); \
         [r.embedded, r.solution.tags, r.solution.url]"
    ))
    .await;
    assert_eq!(saved, json!([true, ["selection"], article_url]));

    // Export in the server's format; import it back after deleting everything.
    let exported =
        value("const { engine } = await import('/engine.js'); await engine('export')".into()).await;
    assert_eq!(exported["version"], 1);
    let solutions = exported["solutions"].as_array().unwrap();
    assert_eq!(solutions.len(), 2, "{exported}");
    let file: devlens_kb::ExportFile = serde_json::from_value(exported.clone())
        .unwrap_or_else(|e| panic!("the server reads the extension's export: {e}"));
    assert!(file.solutions[0].text.contains("requestAnimationFrame"));
    let moved = value(format!(
        "const {{ engine }} = await import('/engine.js'); const file = {exported}; \
         for (const s of file.solutions) await engine('remove', {{ id: s.id }}); \
         const empty = (await engine('status')).solutions; \
         const first = await engine('import', {{ file }}); const again = await engine('import', {{ file }}); \
         let bad = ''; try {{ await engine('import', {{ file: {{ version: 1, solutions: [{{ id: 'x y', title: 't', text: 'b' }}] }} }}); }} catch (e) {{ bad = e.message; }} \
         [empty, first, again, bad, (await engine('status')).solutions]"
    ))
    .await;
    assert_eq!(moved[0], 0);
    assert_eq!(
        moved[1],
        json!({"created": 2, "replaced": 0, "unchanged": 0})
    );
    assert_eq!(
        moved[2],
        json!({"created": 0, "replaced": 0, "unchanged": 2})
    );
    assert!(
        moved[3]
            .as_str()
            .unwrap()
            .contains("the id must be letters, digits"),
        "{moved}"
    );
    assert_eq!(moved[4], 2);
    // Imported solutions are embedded in the background, then found by meaning again.
    let refound = value(format!(
        "const {{ engine }} = await import('/engine.js'); \
         for (let i = 0; i < 300 && (await engine('status')).embedded < 2; i++) await new Promise((r) => setTimeout(r, 100)); \
         (await engine('search', {{ query: {question:?} }})).results.map((r) => r.title)"
    ))
    .await;
    assert_eq!(refound[0], "Smooth resizing without jank", "{refound}");

    // The browser's vectors are the server's: same tokens, same int8 model, same pooling.
    let texts = agreement_texts();
    let browser = value(format!(
        "const {{ engine }} = await import('/engine.js'); \
         (await engine('embed', {{ texts: {} }})).map((v) => btoa(String.fromCharCode(...new Uint8Array(new Float32Array(v).buffer))))",
        serde_json::to_string(&texts).unwrap()
    ))
    .await;
    let options = devlens_embed::EngineOptions {
        choice: devlens_embed::EngineChoice::Onnx,
        onnxruntime: std::env::var_os("ORT_DYLIB_PATH").map(Into::into),
        onnx_model: None,
    };
    let server = devlens_embed::LocalBert::load_with(
        &model,
        devlens_embed::DEFAULT_LOCAL_MODEL,
        8,
        &options,
    )
    .unwrap();
    use devlens_embed::Embedder;
    // One text at a time on both sides: the int8 model quantises its activations per run, so a
    // vector computed in a batch depends (at cosine ~0.99) on the texts beside it.
    let mut server_vectors = Vec::new();
    for text in &texts {
        server_vectors.push(server.embed_query(text).await.unwrap());
    }
    // The same token ids and integer arithmetic: most texts agree exactly; the float kernels
    // between the int8 layers (GELU, layer norm, softmax) differ between the native and the
    // WebAssembly builds, and a rounding they flip in the next layer's quantisation moves a few
    // texts to ~0.99 (120 documentation lines: median 1.0, 106 at ≥ 0.999, lowest 0.992).
    let mut cosines = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let bytes = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            browser[i].as_str().unwrap(),
        )
        .unwrap();
        let b: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // Both are L2-normalised: the dot product is the cosine.
        let c = devlens_embed::dot(&b, &server_vectors[i]);
        assert!(c >= 0.99, "cosine {c} for {text:?}");
        cosines.push(c);
    }
    cosines.sort_by(f32::total_cmp);
    let median = cosines[cosines.len() / 2];
    assert!(median >= 0.9999, "median cosine {median}: {cosines:?}");
    // ...computed on the same chunks of a text.
    let chunk_texts = chunking_texts();
    let browser_chunks = value(format!(
        "const {{ chunkRanges }} = await import('/chunk.js'); {}.map((t) => chunkRanges(t).map((c) => [c.byteStart, c.byteEnd]))",
        serde_json::to_string(&chunk_texts).unwrap()
    ))
    .await;
    for (i, text) in chunk_texts.iter().enumerate() {
        let server_chunks: Vec<[usize; 2]> =
            devlens_kb::chunk::chunk_ranges(text, devlens_kb::chunk::TARGET_CHARS)
                .into_iter()
                .map(|r| [r.start, r.end])
                .collect();
        assert_eq!(
            browser_chunks[i],
            json!(server_chunks),
            "chunks of text {i} differ"
        );
    }

    driver.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_its_model_the_extension_saves_and_searches_by_keywords_and_says_why() {
    if !common::browser_available() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let installed = extension_path(data.path());
    // The folder as it is where no local model is installed: no model/.
    let dir = data.path().join("no-model");
    copy_dir(&installed, &dir, &|p| {
        p.starts_with(installed.join("model"))
    });
    let chromium = launch_chromium(&dir).await;
    let extension = format!("chrome-extension://{}", chromium.extension_id);
    let driver = Driver::connect(&chromium).await;
    driver
        .step(
            "target",
            json!({"action": "new", "url": format!("{extension}/options.html")}),
        )
        .await;
    driver
        .step(
            "wait_for",
            json!({"text": "The embedding model did not load", "timeoutMs": 60000}),
        )
        .await;
    let shown = driver
        .value("document.querySelector('#local-model').textContent")
        .await;
    assert!(
        shown.as_str().unwrap().contains("devlens extension path"),
        "the message says how to get the model: {shown}"
    );
    let outcome = driver.value("const { engine } = await import('/engine.js'); \
            const saved = await engine('save', { title: 'Fix CORS preflight on PUT', text: 'Answer OPTIONS with Access-Control-Allow-Methods: PUT.', tags: ['http'] }); \
            const found = await engine('search', { query: 'CORS preflight' }); \
            [saved.embedded, saved.notice, found.mode, found.notice, found.results.map((r) => r.title)]").await;
    assert_eq!(outcome[0], false);
    assert!(
        outcome[1]
            .as_str()
            .unwrap()
            .contains("Searchable by keywords only"),
        "{outcome}"
    );
    assert_eq!(outcome[2], "keyword");
    assert!(
        outcome[3]
            .as_str()
            .unwrap()
            .starts_with("Searched by keywords"),
        "{outcome}"
    );
    assert_eq!(outcome[4], json!(["Fix CORS preflight on PUT"]));
    driver.close().await;
}

fn copy_dir(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let path = entry.path();
        if skip(&path) {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.metadata().unwrap().is_dir() {
            copy_dir(&path, &target, skip);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}
