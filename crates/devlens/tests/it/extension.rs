//! The devlens Chrome extension, loaded unpacked into a real headless Chromium from the folder
//! `devlens extension path` prints: a wrong token is refused and an unpaired extension too; it
//! pairs from its options page, the popup saves a page's main text (not its navigation or
//! footer), which semantic search then finds by meaning; asking says it fell back because
//! headless Chromium has no built-in model; the DevTools panel frames the server's panel; the
//! panel's Extension page lists the pairing and revokes it. Axe audits in light and dark and
//! screenshots go to `target/tmp/test-artifacts/`.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use common::mcp;

/// `devlens extension path` for `data_dir`: the folder it printed.
pub(crate) fn extension_path(data_dir: &Path) -> PathBuf {
    let out = common::devlens(data_dir)
        .args(["extension", "path"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn repository_extension() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension")
}

#[test]
fn extension_path_writes_the_files_and_prints_the_folder() {
    let data = tempfile::tempdir().unwrap();
    let dir = extension_path(data.path());
    assert_eq!(dir, data.path().join("extension"));
    for name in ["manifest.json", "popup.html", "background.js", "options.js"] {
        assert_eq!(
            std::fs::read_to_string(dir.join(name)).unwrap(),
            std::fs::read_to_string(repository_extension().join(name)).unwrap(),
            "{name}"
        );
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["manifest_version"], 3);

    // An outdated copy is refreshed; the JSON says what was written.
    std::fs::write(dir.join("popup.js"), "// old").unwrap();
    let out = common::devlens(data.path())
        .args(["extension", "path", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["written"], json!(["popup.js"]));
    assert_ne!(
        std::fs::read_to_string(dir.join("popup.js")).unwrap(),
        "// old"
    );
}

#[test]
fn the_token_command_prints_the_token_the_server_checks() {
    let data = tempfile::tempdir().unwrap();
    let first = common::devlens(data.path())
        .args(["extension", "token", "--json"])
        .output()
        .unwrap();
    let first: Value = serde_json::from_slice(&first.stdout).unwrap();
    let token = first["token"].as_str().unwrap().to_string();
    assert_eq!(token.len(), 32);
    let text = common::devlens(data.path())
        .args(["extension", "token"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains(&token) && text.contains("No extension is paired yet"),
        "{text}"
    );
    let renewed = common::devlens(data.path())
        .args(["extension", "token", "--new", "--json"])
        .output()
        .unwrap();
    let renewed: Value = serde_json::from_slice(&renewed.stdout).unwrap();
    assert_ne!(renewed["token"], first["token"]);
}

#[test]
fn the_extension_prompts_like_kb_ask_generate() {
    let ask = std::fs::read_to_string(repository_extension().join("ask.js")).unwrap();
    assert!(
        ask.contains(devlens_kb::answer::SYSTEM_PROMPT),
        "extension/ask.js must carry devlens-kb's SYSTEM_PROMPT word for word"
    );
    let user = devlens_kb::answer::user_prompt("QUERY", "CONTEXT")
        .replace("CONTEXT", "${context}")
        .replace("QUERY", "${query}")
        .replace('\n', "\\n");
    assert!(
        ask.contains(&format!("`{user}`")),
        "user prompt differs: {user}"
    );
}

/// A headless Chromium with the extension in `dir` loaded; killed when dropped.
pub(crate) struct Chromium {
    _child: tokio::process::Child,
    _profile: tempfile::TempDir,
    pub(crate) port: u16,
    pub(crate) extension_id: String,
}

pub(crate) async fn launch_chromium(dir: &Path) -> Chromium {
    let chrome = devlens_browser::find_chrome(None).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let child = tokio::process::Command::new(chrome)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--load-extension={}", dir.display()))
        .arg(format!("--disable-extensions-except={}", dir.display()))
        .arg("about:blank")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Chromium writes the port it picked into the profile.
    let active_port = profile.path().join("DevToolsActivePort");
    let port = poll("Chromium's DevTools port", || {
        let text = std::fs::read_to_string(&active_port).ok()?;
        text.lines().next()?.trim().parse::<u16>().ok()
    })
    .await;
    // The extension's id is in its service worker's URL.
    let http = crate::common::http::client();
    let mut extension_id = None;
    for _ in 0..300 {
        let targets: Value = match http
            .get(format!("http://127.0.0.1:{port}/json/list"))
            .send()
            .await
        {
            Ok(r) => r.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        extension_id = targets.as_array().into_iter().flatten().find_map(|t| {
            let url = t["url"].as_str()?;
            let rest = url.strip_prefix("chrome-extension://")?;
            rest.ends_with("/background.js")
                .then(|| rest.split('/').next().unwrap().to_string())
        });
        if extension_id.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Chromium {
        _child: child,
        _profile: profile,
        port,
        extension_id: extension_id.expect("the extension's service worker started"),
    }
}

/// A devlens MCP client (its own data dir) driving `chromium` through the browser tools.
pub(crate) struct Driver {
    pub(crate) viewer: mcp::Client,
    _dir: tempfile::TempDir,
}

impl Driver {
    pub(crate) async fn connect(chromium: &Chromium) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let viewer = mcp::start(dir.path(), &[]).await;
        let driver = Self { viewer, _dir: dir };
        driver
            .step(
                "chrome",
                json!({"action": "connect", "endpoint": format!("127.0.0.1:{}", chromium.port)}),
            )
            .await;
        driver
    }

    pub(crate) async fn step(&self, tool: &str, args: Value) -> mcp::Reply {
        mcp::ok(&self.viewer, tool, args).await
    }

    /// The value of `expression` in the current page; long scripts and large values allowed.
    pub(crate) async fn value(&self, expression: &str) -> Value {
        self.step(
            "evaluate",
            json!({"expression": expression, "timeoutMs": 60000, "maxValueBytes": 262144}),
        )
        .await
        .data["value"]
            .clone()
    }

    pub(crate) async fn close(self) {
        self.step("chrome_disconnect", json!({})).await;
        self.viewer.cancel().await.unwrap();
    }
}

/// Polls `probe` until it answers (at most 30 s).
pub(crate) async fn poll<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    for _ in 0..300 {
        if let Some(value) = probe() {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what} did not appear");
}

pub(crate) const ARTICLE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Smooth resizing without jank</title></head>
<body>
<header><a href="/">Example Corp</a>
  <nav><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/login">Sign in</a></nav></header>
<main>
  <article>
    <h1>Smooth resizing without jank</h1>
    <p>Running expensive layout work on every <code>resize</code> event makes the page stutter:
    the browser fires the event many times per second while the user drags the window edge.</p>
    <h2>Throttle the handler to one call per frame</h2>
    <p>Schedule the work with <code>requestAnimationFrame</code> and skip events that arrive
    before the frame runs, so the handler measures and writes the layout once per frame.</p>
    <pre>let queued = false;
window.addEventListener('resize', () => {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => { queued = false; relayout(); });
});</pre>
    <ul><li>Read all sizes first, then write styles, to avoid forced synchronous layout.</li>
    <li>Prefer a ResizeObserver when only one element's size matters.</li></ul>
  </article>
  <aside><h2>Related posts</h2><p>Ten tips for Vue forms that nobody reads at all.</p></aside>
</main>
<footer><p>© 2026 Example Corp. All rights reserved. Privacy policy.</p></footer>
</body></html>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_pairs_saves_searches_and_asks() {
    if !common::browser_available() {
        return;
    }
    let Some(model) = common::model_dir() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let dir = extension_path(data.path());
    let mut server = common::devlens_process(data.path());
    server.env("DEVLENS_MODEL_DIR", &model);
    let (_server, base) = common::serve_http(server).await;
    let http = crate::common::http::client();
    // Something else in the knowledge base, so finding the page by meaning means something.
    let other = http
        .post(format!("{base}/api/kb/solutions"))
        .json(&json!({
            "title": "Allow CORS in an axum server",
            "text": "Add tower-http's CorsLayer with the allowed origins and methods to the router.",
            "tags": ["rust"]
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 201);

    let site = common::serve_router(axum::Router::new().route(
        "/article",
        axum::routing::get(|| async { axum::response::Html(ARTICLE) }),
    ))
    .await;
    let article_url = format!("{site}/article");

    let chromium = launch_chromium(&dir).await;
    let id = chromium.extension_id.clone();
    let extension = format!("chrome-extension://{id}");

    let viewer_dir = tempfile::tempdir().unwrap();
    let viewer = mcp::start(viewer_dir.path(), &[]).await;
    let step = |tool: &'static str, args: Value| {
        let viewer = &viewer;
        async move { mcp::ok(viewer, tool, args).await }
    };
    let value = |expression: String| {
        let viewer = &viewer;
        async move {
            mcp::ok(viewer, "evaluate", json!({ "expression": expression }))
                .await
                .data["value"]
                .clone()
        }
    };
    step(
        "chrome",
        json!({"action": "connect", "endpoint": format!("127.0.0.1:{}", chromium.port)}),
    )
    .await;

    // Options page: a wrong token is refused beside the field.
    step(
        "target",
        json!({"action": "new", "url": format!("{extension}/options.html")}),
    )
    .await;
    step(
        "emulate",
        json!({"viewport": {"width": 1280, "height": 800}}),
    )
    .await;
    step("wait_for", json!({"text": "Not paired yet"})).await;
    step(
        "fill_element",
        json!({"element": "#server", "value": format!("{base}/")}),
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#token", "value": "00000000000000000000000000000000"}),
    )
    .await;
    step("click_element", json!({"element": "#pair"})).await;
    step("wait_for", json!({"text": "The pairing token is wrong"})).await;
    let beside = value("document.querySelector('#token-error').textContent".into()).await;
    assert!(
        beside.as_str().unwrap().contains("Extension page"),
        "{beside}"
    );

    // Unpaired, the extension is refused: its POSTs by origin, its GETs for naming none.
    let refused = value(format!(
        "const r = await fetch('{base}/api/kb/search', {{method: 'POST', headers: {{'Content-Type': 'application/json'}}, body: JSON.stringify({{query: 'resize'}})}}); [r.status, (await r.json()).error]"
    ))
    .await;
    assert_eq!(refused[0], 403, "{refused}");
    assert!(
        refused[1].as_str().unwrap().contains("not paired"),
        "{refused}"
    );
    let anonymous = value(format!("(await fetch('{base}/api/kb/solutions')).status")).await;
    assert_eq!(anonymous, 403);
    let wrong = http
        .post(format!("{base}/api/extension/pair"))
        .header("Origin", &extension)
        .json(&json!({"token": "nope"}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);

    // The right token pairs; the panel may now be framed by the extension.
    let status: Value = http
        .get(format!("{base}/api/extension"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = status["token"].as_str().unwrap();
    step("fill_element", json!({"element": "#token", "value": token})).await;
    step("click_element", json!({"element": "#pair"})).await;
    step(
        "wait_for",
        json!({"text": "Paired with the devlens server"}),
    )
    .await;
    let csp = http.get(format!("{base}/")).send().await.unwrap();
    let csp = csp.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains(&format!("frame-ancestors 'self' {extension}")),
        "{csp}"
    );

    // The popup, aimed at the article's tab, saves the page's main text.
    step("target", json!({"action": "new", "url": &article_url})).await;
    step("target", json!({"action": "switch", "url": "options.html"})).await;
    let tab = value(format!(
        "(await chrome.tabs.query({{}})).find((t) => t.url === '{article_url}').id"
    ))
    .await;
    step(
        "navigate",
        json!({"url": format!("{extension}/popup.html?tab={tab}")}),
    )
    .await;
    step("wait_for", json!({"text": "Main text:"})).await;
    let title = value("document.querySelector('#title').value".into()).await;
    assert_eq!(title, "Smooth resizing without jank");
    step(
        "fill_element",
        json!({"element": "#tags", "value": "performance, CSS"}),
    )
    .await;
    step("click_element", json!({"element": "#save"})).await;
    step("wait_for", json!({"text": "searchable by meaning"})).await;
    // Saved in the browser, then synced to the paired server.
    let mut saved = Value::Null;
    for _ in 0..300 {
        let list: Value = http
            .get(format!("{base}/api/kb/solutions"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if let Some(found) = list["solutions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["url"] == article_url.as_str())
        {
            saved = found.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!saved.is_null(), "the page was synced to the server");
    let saved: Value = http
        .get(format!(
            "{base}/api/kb/solutions/{}",
            saved["id"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let text = saved["text"].as_str().unwrap();
    for wanted in [
        "# Smooth resizing",
        "requestAnimationFrame(() =>",
        "- Prefer a ResizeObserver",
    ] {
        assert!(text.contains(wanted), "{wanted} missing from {text}");
    }
    for boilerplate in [
        "Sign in",
        "All rights reserved",
        "Related posts",
        "Example Corp",
    ] {
        assert!(!text.contains(boilerplate), "{boilerplate} saved: {text}");
    }
    assert_eq!(saved["tags"], json!(["performance", "css"]));

    // Found by meaning: in the popup, with relevance in percent, and over the API.
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
    step("wait_for", json!({"text": "% relevant"})).await;
    let first = value("document.querySelector('#results li').textContent".into()).await;
    assert!(
        first
            .as_str()
            .unwrap()
            .starts_with("Smooth resizing without jank"),
        "{first}"
    );
    let found: Value = http
        .post(format!("{base}/api/kb/search"))
        .json(&json!({"query": question, "mode": "semantic"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(found["results"][0]["id"], saved["id"], "{found}");
    // ...and in the dev panel's knowledge-base page, searching by meaning as a person types.
    step(
        "target",
        json!({"action": "new", "url": format!("{base}/kb")}),
    )
    .await;
    step("wait_for", json!({"text": "Search the solutions"})).await;
    step(
        "click_element",
        json!({"element": "input[name=mode][value=semantic]"}),
    )
    .await;
    step(
        "fill_element",
        json!({"element": "#kb-query", "value": question}),
    )
    .await;
    step("wait_for", json!({"text": "(semantic)."})).await;
    let in_panel = value("document.querySelector('#search-results li').textContent".into()).await;
    assert!(
        in_panel
            .as_str()
            .unwrap()
            .contains("Smooth resizing without jank"),
        "{in_panel}"
    );
    step("target", json!({"action": "switch", "url": "popup.html"})).await;

    // Ask: no built-in model in headless Chromium; paired, the server is asked, which has no
    // LLM → the sources, said so.
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
        json!({"text": "Fell back to the sources alone"}),
    )
    .await;
    let note = value("document.querySelector('#produced-by').textContent".into()).await;
    // Chromium 156 has `LanguageModel` in extension pages, answering "unavailable" headless.
    let note = note.as_str().unwrap();
    assert!(
        note.contains("Chrome's built-in model is unavailable")
            || note.contains("does not offer Chrome's built-in model"),
        "{note}"
    );
    let sources = value("document.querySelector('#sources').textContent".into()).await;
    assert!(
        sources.as_str().unwrap().contains("Smooth resizing"),
        "{sources}"
    );
    let context = value("document.querySelector('#context').textContent".into()).await;
    assert!(
        context.as_str().unwrap().starts_with("[1] Smooth resizing"),
        "{context}"
    );

    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    // Started in its data dir, the viewer has no project workspace: a relative path goes to its
    // artifacts folder.
    let keep = |file: &str| {
        std::fs::copy(
            viewer_dir.path().join("artifacts").join(file),
            artifacts.join(file),
        )
        .unwrap();
    };
    step(
        "emulate",
        json!({"viewport": {"width": 1280, "height": 800}}),
    )
    .await;
    step(
        "screenshot",
        json!({"path": "extension-popup.png", "fullPage": true}),
    )
    .await;
    keep("extension-popup.png");

    // The context-menu entry's code path: the selection, tagged, with the page's title and URL.
    let menu = value(format!(
        "const m = await import('/menu.js'); const s = m.saveSelection({{selectionText: 'Prefer a ResizeObserver when only one element matters.', pageUrl: '{article_url}'}}, {{title: 'Smooth resizing without jank'}}); [s.tags, s.url, s.text]"
    ))
    .await;
    assert_eq!(
        menu,
        json!([
            ["selection"],
            article_url,
            "Prefer a ResizeObserver when only one element matters."
        ])
    );

    // The DevTools panel's page frames the server's panel (frame-ancestors allows the extension).
    step(
        "navigate",
        json!({"url": format!("{extension}/panel.html")}),
    )
    .await;
    let framed = poll_targets(chromium.port, &format!("{base}/")).await;
    assert!(framed, "the panel loaded inside the extension's frame");
    step(
        "screenshot",
        json!({"path": "extension-devtools-panel.png"}),
    )
    .await;
    keep("extension-devtools-panel.png");

    // The panel's Extension page: the pairing listed; accessible in light and dark; revoke.
    step(
        "target",
        json!({"action": "new", "url": format!("{base}/extension")}),
    )
    .await;
    step(
        "emulate",
        json!({"viewport": {"width": 1280, "height": 800}}),
    )
    .await;
    step("wait_for", json!({"text": extension.clone()})).await;
    let shown = value("document.querySelector('#token').textContent".into()).await;
    assert_eq!(shown, token);
    mcp::audit_panel_page(&viewer, viewer_dir.path(), "extension").await;
    step(
        "click_element",
        json!({"element": format!("button[aria-label='Revoke {extension}']")}),
    )
    .await;
    step("wait_for", json!({"text": "No extension is paired yet."})).await;
    step("target", json!({"action": "switch", "url": "panel.html"})).await;
    let after = value(format!(
        "(await fetch('{base}/api/kb/search', {{method: 'POST', headers: {{'Content-Type': 'application/json'}}, body: JSON.stringify({{query: 'resize'}})}})).status"
    ))
    .await;
    assert_eq!(after, 403, "a revoked extension is refused again");

    step("chrome_disconnect", json!({})).await;
    viewer.cancel().await.unwrap();
}

/// Whether a frame showing `url` appears among the browser's targets (cross-origin frames are
/// targets of their own; a frame the CSP refused shows an error page instead).
async fn poll_targets(port: u16, url: &str) -> bool {
    let http = crate::common::http::client();
    for _ in 0..300 {
        let targets: Value = http
            .get(format!("http://127.0.0.1:{port}/json/list"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let found = targets
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["type"] == "iframe" && t["url"] == url);
        if found {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}
