//! Load, bounded in count and time, on loopback: many MCP sessions over Streamable HTTP at once
//! while the server rebuilds a big semantic index, and two sessions driving one browser tab.
//! What a user notices: every call answers (no error, no hang), answers stay right, and the
//! latencies (printed, not asserted: timing belongs to benchmarks) stay usable.

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rmcp::{ServiceExt, transport::StreamableHttpClientTransport};
use serde_json::json;

use common::mcp;

/// Sessions at once, as the issue asks.
const SESSIONS: usize = 50;
/// The whole run's bound: past it the test fails as a hang.
const RUN_LIMIT: Duration = Duration::from_secs(600);

fn github_spec() -> Option<PathBuf> {
    let testdata = std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"));
    let spec = testdata.join("octokit-openapi/package/generated/api.github.com.json");
    if spec.is_file() {
        return Some(spec);
    }
    assert!(
        std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() != Ok("1"),
        "{} is missing: run scripts/fetch-testdata",
        spec.display()
    );
    None
}

fn percentile(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    samples[rank - 1]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_sessions_search_and_query_while_a_big_index_is_rebuilt() {
    let Some(model) = common::model_dir() else {
        return;
    };
    let Some(github) = github_spec() else {
        return;
    };
    let dir = common::data_dir_with_petstore();
    let projects = json!({"projects": [
        {"name": "pets", "swaggerUrl": common::petstore()},
        {"name": "gh", "swaggerUrl": github.display().to_string()},
    ]});
    std::fs::write(
        dir.path().join("projects.json"),
        serde_json::to_string(&projects).unwrap(),
    )
    .unwrap();
    common::add_widgets_docs(dir.path());
    let mut cmd = common::devlens_process(dir.path());
    cmd.env("DEVLENS_MODEL_DIR", &model)
        .env_remove("EMBEDDING_PROVIDER");
    let (_server, base) = common::serve_http(cmd).await;
    let http = crate::common::http::client();
    common::http::ok(http.post(format!("{base}/api/embed/reindex?project=pets"))).await;

    // The rebuild: GitHub's 1,223 operations, embedded afresh, while the sessions work.
    let rebuild = {
        let (http, base) = (http.clone(), base.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            common::http::ok(http.post(format!("{base}/api/embed/reindex?project=gh&force=true")))
                .await;
            started.elapsed()
        })
    };

    let run = async {
        let mut sessions = Vec::new();
        for i in 0..SESSIONS {
            let base = base.clone();
            sessions.push(tokio::spawn(async move {
                let client = ()
                    .serve(StreamableHttpClientTransport::from_uri(format!("{base}/mcp")))
                    .await
                    .expect("initialize over HTTP");
                let mut latencies = Vec::new();
                let mut errors = Vec::new();
                for round in 0..6 {
                    let (tool, args) = if (i + round) % 2 == 0 {
                        (
                            "search_api_documentation",
                            json!({"projectName": "pets", "query": "remove a pet from the store", "limit": 3}),
                        )
                    } else {
                        (
                            "query_docs",
                            json!({"library_id": "/acme/widgets", "query": "how often does the dashboard refresh", "context_limit": 1000}),
                        )
                    };
                    let started = Instant::now();
                    let reply = mcp::call(&client, tool, args).await;
                    latencies.push(started.elapsed().as_secs_f64() * 1000.0);
                    let right = match tool {
                        "query_docs" => reply.text.contains("refreshMs"),
                        _ => reply.text.contains("/pets/{petId}"),
                    };
                    if reply.error || !right {
                        errors.push(format!("{tool}: {}", reply.text));
                    }
                }
                client.cancel().await.expect("close the session");
                (latencies, errors)
            }));
        }
        let mut latencies = Vec::new();
        let mut errors = Vec::new();
        for session in sessions {
            let (l, e) = session.await.expect("a session task");
            latencies.extend(l);
            errors.extend(e);
        }
        (latencies, errors)
    };
    let (mut latencies, errors) = tokio::time::timeout(RUN_LIMIT, run)
        .await
        .expect("the sessions finished in time");
    let rebuilt_in = tokio::time::timeout(RUN_LIMIT, rebuild)
        .await
        .expect("the rebuild finished in time")
        .unwrap();
    assert!(
        errors.is_empty(),
        "{} errors: {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    assert_eq!(latencies.len(), SESSIONS * 6);
    eprintln!(
        "load: {} calls from {SESSIONS} sessions during a {:.1} s rebuild: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        latencies.len(),
        rebuilt_in.as_secs_f64(),
        percentile(&mut latencies, 0.50),
        percentile(&mut latencies, 0.95),
        percentile(&mut latencies, 1.0),
    );
    // The rebuilt index serves.
    let status = common::http::ok(http.get(format!("{base}/api/embed/status?project=gh"))).await;
    assert_eq!(status["indexed"], true, "{status}");
    assert_eq!(status["vectorCount"], 1223, "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sessions_driving_one_tab_take_turns_and_lose_nothing() {
    if !common::browser_available() {
        return;
    }
    let page = common::serve_page_with_script(
        "<!doctype html><title>Counter</title><button id=add>add</button>\
         <script src=/static/app.js></script>",
        "window.clicks = 0; document.getElementById('add').onclick = () => { window.clicks += 1; };",
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = common::devlens_process(dir.path());
    mcp::no_model(&mut cmd, dir.path());
    let (_server, base) = common::serve_http(cmd).await;
    let connect = || async {
        ().serve(StreamableHttpClientTransport::from_uri(format!(
            "{base}/mcp"
        )))
        .await
        .expect("initialize over HTTP")
    };
    let (a, b) = (connect().await, connect().await);
    mcp::ok(
        &a,
        "chrome",
        json!({"action": "launch", "connectionId": "shared"}),
    )
    .await;
    mcp::ok(
        &a,
        "navigate",
        json!({"connectionId": "shared", "url": page}),
    )
    .await;

    // Both sessions click and read the same tab at once, 20 times each.
    let drive = |client: &'static mcp::Client, who: &'static str| async move {
        for i in 0..20 {
            let click = mcp::call(
                client,
                "click_element",
                json!({"connectionId": "shared", "element": "#add"}),
            )
            .await;
            assert!(!click.error, "{who} click {i}: {}", click.text);
            let read = mcp::call(
                client,
                "evaluate",
                json!({"connectionId": "shared", "expression": "window.clicks"}),
            )
            .await;
            assert!(!read.error, "{who} read {i}: {}", read.text);
        }
    };
    let a: &'static mcp::Client = Box::leak(Box::new(a));
    let b: &'static mcp::Client = Box::leak(Box::new(b));
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(240), async {
        tokio::join!(drive(a, "a"), drive(b, "b"))
    })
    .await
    .expect("no deadlock: both sessions finished");
    eprintln!(
        "two sessions, one tab: 80 calls in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // Every click landed once: the actions were serialized, none lost.
    let total = mcp::ok(
        a,
        "evaluate",
        json!({"connectionId": "shared", "expression": "window.clicks"}),
    )
    .await;
    assert_eq!(total.text.trim(), "40", "{}", total.text);
    mcp::ok(a, "chrome_disconnect", json!({"connectionId": "shared"})).await;
}
