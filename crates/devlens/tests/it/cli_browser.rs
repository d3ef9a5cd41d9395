//! The `devlens browser` commands as a user or a script runs them: each launches headless
//! Chromium for itself (or attaches to one with --connect) against fixture pages this test serves
//! on 127.0.0.1.
//!
//! Without Chromium the tests print a skip notice and pass, unless DEVLENS_REQUIRE_BROWSER=1,
//! where they fail saying what is missing.

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::{
    Json, Router,
    http::StatusCode,
    response::{Html, IntoResponse},
    routing::get,
};
use common::devlens;
use predicates::prelude::*;
use serde_json::{Value, json};

const HOME: &str = r#"<!doctype html>
<html><head><title>Fixture Shop</title>
<style>body { margin: 0 } #banner { width: 300px; height: 120px; background: #c33 }</style></head>
<body>
  <div id="banner"></div>
  <h1>Fixture Shop</h1>
  <label for="name">Name</label> <input id="name" name="name" placeholder="Your name">
  <button id="save" type="button">Save</button>
  <button class="danger" type="button">Delete all</button>
  <a href="/second">Second page</a>
  <script>
    console.error("boot failed: missing config");
    console.log("hello from the page");
    window.addEventListener("load", () => fetch("/api/missing").then(r => r.text()));
  </script>
</body></html>"#;

fn router() -> Router {
    Router::new()
        .route("/", get(|| async { Html(HOME) }))
        .route(
            "/second",
            get(|| async { Html("<title>Second page</title><h1>Second</h1>") }),
        )
        .route(
            "/gone",
            get(|| async { (StatusCode::NOT_FOUND, Html("<h1>Not here</h1>")).into_response() }),
        )
        .route(
            "/api/missing",
            get(|| async {
                (StatusCode::NOT_FOUND, Json(json!({"error": "not here"}))).into_response()
            }),
        )
}

/// The fixture site, started once for all tests on its own runtime thread.
fn site() -> &'static str {
    static SITE: OnceLock<String> = OnceLock::new();
    SITE.get_or_init(|| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind fixture server");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("fixture address");
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("fixture runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let _ = axum::serve(listener, router()).await;
            });
        });
        format!("http://{addr}")
    })
}

fn browser_json(dir: &Path, args: &[&str]) -> Value {
    let output = devlens(dir)
        .arg("browser")
        .args(args)
        .arg("--json")
        .timeout(Duration::from_secs(90))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&output).expect("stdout is JSON")
}

#[test]
fn open_reports_status_title_console_errors_and_failed_requests() {
    if !common::browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let load = browser_json(dir.path(), &["open", site()]);
    assert_eq!(load["status"], 200);
    assert_eq!(load["title"], "Fixture Shop");
    assert!(
        load["consoleErrors"].to_string().contains("boot failed"),
        "{load}"
    );

    // A document answering 404 is reported, and the exit status says it failed.
    devlens(dir.path())
        .args(["browser", "open", &format!("{}/gone", site())])
        .timeout(Duration::from_secs(90))
        .assert()
        .failure()
        .stdout(predicate::str::contains("404"))
        .stderr(predicate::str::contains("HTTP 404"));
}

#[test]
fn query_snapshot_and_eval_read_the_page() {
    if !common::browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = site();

    let found = browser_json(
        dir.path(),
        &["query", "--url", url, "button", "--text", "delete"],
    );
    let elements = found["elements"].as_array().expect("elements");
    assert_eq!(elements.len(), 1, "{found}");
    assert!(elements[0].to_string().contains("Delete all"), "{found}");

    // Nothing matched: said plainly, with nearby selectors to try.
    devlens(dir.path())
        .args(["browser", "query", "--url", url, "#sav"])
        .timeout(Duration::from_secs(90))
        .assert()
        .stdout(predicate::str::contains("#save"));

    devlens(dir.path())
        .args(["browser", "snapshot", "--url", url, "--interactive"])
        .timeout(Duration::from_secs(90))
        .assert()
        .success()
        .stdout(
            predicate::str::contains(r#"button "Save" [ref="#)
                .and(predicate::str::contains(r#"textbox "Name""#)),
        );

    let value = browser_json(
        dir.path(),
        &[
            "eval",
            "--url",
            url,
            "document.querySelectorAll('button').length",
        ],
    );
    assert_eq!(value["value"], 2);

    devlens(dir.path())
        .args(["browser", "eval", "--url", url, "null.length"])
        .timeout(Duration::from_secs(90))
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("the code threw").and(predicate::str::contains("TypeError")),
        );
}

#[test]
fn console_and_network_include_what_happened_after_load() {
    if !common::browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = site();

    let logs = browser_json(dir.path(), &["console", "--url", url, "--level", "error"]);
    let text = logs.to_string();
    assert!(text.contains("boot failed"), "{logs}");
    assert!(
        !text.contains("hello from the page"),
        "level filter: {logs}"
    );

    // The fetch starts after `load`; the command waits for it.
    let failed = browser_json(dir.path(), &["network", "--url", url, "--failed"]);
    let requests = failed["requests"].as_array().expect("requests");
    let missing = requests
        .iter()
        .find(|r| r["url"].as_str().unwrap().ends_with("/api/missing"))
        .unwrap_or_else(|| panic!("the failed fetch is listed: {failed}"));
    assert_eq!(missing["status"], 404);
    assert!(
        requests.iter().all(|r| r["status"].as_u64() != Some(200)),
        "only failed requests: {failed}"
    );
}

#[test]
fn screenshot_is_written_with_the_window_size_or_the_element_size() {
    if !common::browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.png");
    let shot = browser_json(
        dir.path(),
        &[
            "--window",
            "800x600",
            "screenshot",
            "--url",
            site(),
            "--out",
            page.to_str().unwrap(),
        ],
    );
    let bytes = std::fs::read(&page).expect("screenshot file");
    assert_eq!(
        devlens_browser::image_size(&bytes),
        Some((800, 600)),
        "{shot}"
    );

    let banner = dir.path().join("banner.jpg");
    browser_json(
        dir.path(),
        &[
            "screenshot",
            "--url",
            site(),
            "--element",
            "#banner",
            "--out",
            banner.to_str().unwrap(),
        ],
    );
    let bytes = std::fs::read(&banner).expect("element screenshot file");
    assert!(
        bytes.starts_with(&[0xFF, 0xD8]),
        "a .jpg is written as JPEG"
    );
    assert_eq!(devlens_browser::image_size(&bytes), Some((300, 120)));
}

/// A Chromium started by the test, as a developer starts theirs with a debugging port.
struct RunningChrome {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl RunningChrome {
    fn start(url: &str) -> Self {
        let chrome = devlens_browser::find_chrome(None).expect("chromium");
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new(chrome)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        // Chrome writes the port it picked into the profile.
        let port_file = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|s| s.lines().next()?.trim().parse().ok())
            {
                break port;
            }
            assert!(
                Instant::now() < deadline,
                "chromium wrote no DevToolsActivePort"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        Self {
            child,
            port,
            _profile: profile,
        }
    }

    fn still_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for RunningChrome {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn connect_uses_a_running_chrome_and_its_open_tab_and_leaves_it_running() {
    if !common::browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut chrome = RunningChrome::start(site());
    let port = chrome.port.to_string();

    // The tab was open before devlens connected.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tabs = browser_json(dir.path(), &["--connect", &port, "tabs"]);
        if tabs.to_string().contains("Fixture Shop") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the open tab never showed: {tabs}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // No --url: the command looks at the page as it is in that tab.
    let value = browser_json(
        dir.path(),
        &[
            "--connect",
            &port,
            "--tab",
            "Fixture",
            "eval",
            "document.title",
        ],
    );
    assert_eq!(value["value"], "Fixture Shop");
    assert!(
        chrome.still_running(),
        "a connected browser is left running"
    );

    devlens(dir.path())
        .args([
            "browser",
            "--connect",
            &port,
            "--tab",
            "no such tab",
            "eval",
            "1",
        ])
        .timeout(Duration::from_secs(90))
        .assert()
        .failure()
        .stderr(predicate::str::contains("Fixture Shop"));
}

#[test]
fn bad_arguments_say_what_to_do_before_any_browser_starts() {
    let dir = tempfile::tempdir().unwrap();
    // Without --url or --connect a page command acts on a running server's browser; with none
    // running (a port nothing listens on), it says how to start one or run one-shot.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    for args in [&["browser", "query", "button"][..], &["browser", "tabs"]] {
        devlens(dir.path())
            .env("DEVLENS_SERVER", dead.to_string())
            .args(args)
            .assert()
            .code(4)
            .stderr(
                predicate::str::contains("devlens serve --http")
                    .and(predicate::str::contains("--url"))
                    .and(predicate::str::contains("--connect")),
            );
    }
    devlens(dir.path())
        .args([
            "browser",
            "console",
            "--url",
            "http://127.0.0.1:9",
            "--level",
            "loud",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("error, warn, info, log or debug"));
    devlens(dir.path())
        .args(["browser", "--window", "huge", "open", "http://127.0.0.1:9"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("WIDTHxHEIGHT"));
    devlens(dir.path())
        .args([
            "browser",
            "--chrome-path",
            "/nonexistent/chrome",
            "open",
            "http://127.0.0.1:9",
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .failure()
        .stderr(predicate::str::contains("/nonexistent/chrome"));
    devlens(dir.path())
        .args(["browser", "--connect", "127.0.0.1:9", "tabs"])
        .timeout(Duration::from_secs(60))
        .assert()
        .failure()
        .stderr(predicate::str::contains("127.0.0.1:9"));
}

#[test]
fn audit_one_shots_report_and_fail_on_violations() {
    if !common::browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The fixture page has no `lang`: a serious violation, so the exit status says it failed.
    devlens(dir.path())
        .args(["browser", "audit", "a11y", site()])
        .timeout(Duration::from_secs(90))
        .assert()
        .failure()
        .stdout(predicate::str::contains("html-has-lang"))
        .stderr(predicate::str::contains("accessibility rule(s) violated"));
    let trace = browser_json(dir.path(), &["audit", "perf", site()]);
    assert!(trace["mainThread"].is_array(), "{trace}");
    assert!(trace["requests"].as_u64().unwrap() >= 1, "{trace}");
    let css = browser_json(
        dir.path(),
        &[
            "audit",
            "css",
            site(),
            "--element",
            "#banner",
            "--properties",
            "width",
        ],
    );
    assert!(css.to_string().contains("300px"), "{css}");
    let state = browser_json(dir.path(), &["audit", "state", site(), "--view", "globals"]);
    assert!(state["view"] == "globals", "{state}");
    devlens(dir.path())
        .args([
            "browser",
            "audit",
            "state",
            "http://127.0.0.1:9",
            "--view",
            "redux",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "frameworks, tree, component, stores or globals",
        ));
    devlens(dir.path())
        .args(["browser", "audit", "a11y"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("URL").and(predicate::str::contains("--connect")));
    devlens(dir.path())
        .args([
            "browser",
            "audit",
            "perf",
            "http://127.0.0.1:9",
            "--measure",
            "speed",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("trace, vitals, profile or memory"));
}
