//! `[search] rerank = "sampling"` end to end: the official MCP TypeScript SDK as the client,
//! answering devlens' `sampling/createMessage` from a script (tests/fixtures/
//! sampling-client.mjs), over stdio and over Streamable HTTP. A sensible answer reorders the
//! API search; garbage, silence and a client without the capability leave the first stage's
//! order, and the answer says why. The `[llm]` endpoint's second stage is tested in
//! devlens-openapi (tests/it/rerank.rs); here the CLI's `api eval --rerank` against a fake one.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common;

/// The SDK's node_modules (the conformance suite's, which scripts/fetch-testdata installs) and
/// a node to run it; `None` means skip, unless DEVLENS_REQUIRE_TESTDATA=1.
fn sdk_and_node() -> Option<(PathBuf, PathBuf)> {
    let testdata = std::env::var_os("DEVLENS_TESTDATA").map(PathBuf::from);
    let sdk = testdata
        .as_ref()
        .map(|t| t.join("conformance/node_modules"))
        .filter(|dir| dir.join("@modelcontextprotocol/sdk/package.json").is_file());
    let node = testdata
        .as_ref()
        .map(|t| t.join("node22/node_modules/node/bin/node"))
        .filter(|node| node.is_file())
        .unwrap_or_else(|| PathBuf::from("node"));
    let has_node = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    match sdk {
        Some(sdk) if has_node => Some((sdk, node)),
        _ if std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() == Ok("1") => {
            panic!("no @modelcontextprotocol/sdk (or no node): run scripts/fetch-testdata")
        }
        _ => {
            eprintln!("skipped: no MCP TypeScript SDK (run scripts/fetch-testdata)");
            None
        }
    }
}

/// A data dir with the petstore project and a devlens.toml choosing sampling, with `timeout`
/// seconds for the client's model; returns the dir and the config file.
fn sampling_server(timeout: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = common::data_dir_with_petstore();
    let config = dir.path().join("devlens.toml");
    std::fs::write(
        &config,
        format!("[search]\nrerank = \"sampling\"\nrerank_timeout_secs = {timeout}\n"),
    )
    .unwrap();
    (dir, config)
}

/// What the scripted client saw: the tool's text and structured answer, and the sampling
/// requests devlens sent it.
struct Seen {
    text: String,
    structured: Value,
    sampled: Vec<Value>,
}

/// Runs the scripted client for `scenario`, over stdio (devlens started by the client with its
/// data in `data_dir` and `config`) or at `url` (Streamable HTTP).
async fn ask(
    (sdk, node): &(PathBuf, PathBuf),
    scenario: &str,
    server: Server<'_>,
    question: &str,
) -> Seen {
    let script = common::fixture("sampling-client.mjs");
    let mut cmd = match server {
        // The client starts devlens with this process's environment: make it the tests' one.
        Server::Stdio { data_dir, config } => {
            let mut cmd = common::devlens_process(data_dir);
            common::mcp::no_model(&mut cmd, data_dir);
            cmd.env("DEVLENS_CONFIG", config);
            let bin = assert_cmd::cargo::cargo_bin("devlens");
            let mut node_cmd = tokio::process::Command::new(node);
            for (key, value) in cmd.as_std().get_envs() {
                match value {
                    Some(value) => node_cmd.env(key, value),
                    None => node_cmd.env_remove(key),
                };
            }
            node_cmd
                .current_dir(data_dir)
                .arg(&script)
                .arg(sdk)
                .arg(scenario)
                .arg("stdio")
                .arg(bin);
            node_cmd
        }
        Server::Http { url } => {
            let mut node_cmd = tokio::process::Command::new(node);
            node_cmd
                .arg(&script)
                .arg(sdk)
                .arg(scenario)
                .arg("http")
                .arg(url);
            node_cmd
        }
    };
    let output = cmd.arg(question).output().await.expect("run node");
    assert!(
        output.status.success(),
        "{scenario}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&output.stdout));
    });
    assert_eq!(seen["isError"], false, "{seen}");
    Seen {
        text: seen["text"].as_str().unwrap().to_string(),
        structured: seen["structured"].clone(),
        sampled: seen["sampled"].as_array().unwrap().clone(),
    }
}

enum Server<'a> {
    Stdio {
        data_dir: &'a Path,
        config: &'a Path,
    },
    Http {
        url: &'a str,
    },
}

fn ids(structured: &Value) -> Vec<String> {
    structured["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["operationId"].as_str().unwrap().to_string())
        .collect()
}

/// The first stage's order, then placeOrder and deletePet moved first.
fn with_sensible_order(first_stage: &[String]) -> Vec<String> {
    let picked = ["placeOrder", "deletePet"];
    picked
        .iter()
        .map(|id| id.to_string())
        .chain(
            first_stage
                .iter()
                .filter(|id| !picked.contains(&id.as_str()))
                .cloned(),
        )
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_model_orders_the_candidates_over_stdio_and_falls_back_when_it_cannot() {
    let Some(client) = sdk_and_node() else {
        return;
    };
    let (dir, config) = sampling_server(1);
    let stdio = || Server::Stdio {
        data_dir: dir.path(),
        config: &config,
    };

    // (d) A client without the capability: the first stage, and why.
    let plain = ask(&client, "none", stdio(), "pet").await;
    assert!(plain.sampled.is_empty());
    let first_stage = ids(&plain.structured);
    assert_eq!(first_stage.len(), 5, "{}", plain.text);
    assert_ne!(
        first_stage[0], "placeOrder",
        "the first stage ranks another first"
    );
    assert_eq!(
        plain.structured["notice"],
        "not reranked by sampling: this MCP client did not declare the sampling capability; \
         the first stage's order is kept"
    );
    assert!(plain.structured.get("reranked").is_none());

    // (a) A sensible answer reorders, and the answer says by whom and how long it took.
    let sensible = ask(&client, "sensible", stdio(), "pet").await;
    assert_eq!(ids(&sensible.structured), with_sensible_order(&first_stage));
    assert!(sensible.structured["notice"].is_null(), "{}", sensible.text);
    let reranked = &sensible.structured["reranked"];
    assert_eq!(reranked["by"], "sampling");
    assert_eq!(reranked["model"], "scripted-model");
    assert_eq!(reranked["candidates"], 5);
    assert!(reranked["ms"].is_u64());
    assert!(
        sensible
            .text
            .starts_with("reranked by sampling (scripted-model): 5 candidates in "),
        "{}",
        sensible.text
    );
    // One strict, short request: numbered compact lines and a token budget.
    assert_eq!(sensible.sampled.len(), 1);
    let request = &sensible.sampled[0];
    assert_eq!(request["maxTokens"], 200);
    assert_eq!(request["temperature"], 0.0);
    assert!(
        request["systemPrompt"]
            .as_str()
            .unwrap()
            .contains("Reply with only a JSON array")
    );
    let user = request["user"].as_str().unwrap();
    assert!(
        user.starts_with("Question: pet\n\nCandidates:\n1 "),
        "{user}"
    );
    assert!(
        user.contains(" placeOrder: Place an order for a pet\n"),
        "{user}"
    );

    // (b) Garbage: the first stage's order, and the notice quotes what came back.
    let garbage = ask(&client, "garbage", stdio(), "pet").await;
    first_stage_kept(
        &garbage,
        &first_stage,
        "not reranked by sampling: its answer named none of the 5 candidates (\"As an AI model",
    );

    // (c) A model that never answers: the timeout (1 s here) passes, the first stage stands.
    let silent = ask(&client, "silent", stdio(), "pet").await;
    first_stage_kept(
        &silent,
        &first_stage,
        "not reranked by sampling: no answer within 1 s (raise [search] rerank_timeout_secs",
    );
}

/// The client was asked once, yet the answer is the first stage's, unreranked, with a notice
/// that starts with `notice`.
fn first_stage_kept(seen: &Seen, first_stage: &[String], notice: &str) {
    assert_eq!(seen.sampled.len(), 1, "it was asked");
    assert_eq!(ids(&seen.structured), first_stage);
    assert!(seen.structured.get("reranked").is_none());
    let said = seen.structured["notice"].as_str().unwrap();
    assert!(said.starts_with(notice), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_model_orders_the_candidates_over_streamable_http() {
    let Some(client) = sdk_and_node() else {
        return;
    };
    let (dir, config) = sampling_server(30);
    let mut cmd = common::http::command(dir.path());
    cmd.env("DEVLENS_CONFIG", &config);
    let server = common::http::start(cmd).await;
    let url = format!("{}/mcp", server.base);
    let http = || Server::Http { url: &url };

    let plain = ask(&client, "none", http(), "pet").await;
    let first_stage = ids(&plain.structured);
    assert!(
        plain.structured["notice"]
            .as_str()
            .unwrap()
            .contains("did not declare the sampling capability")
    );
    let sensible = ask(&client, "sensible", http(), "pet").await;
    assert_eq!(sensible.sampled.len(), 1);
    assert_eq!(ids(&sensible.structured), with_sensible_order(&first_stage));
    assert_eq!(sensible.structured["reranked"]["by"], "sampling");
    let garbage = ask(&client, "garbage", http(), "pet").await;
    assert_eq!(ids(&garbage.structured), first_stage);
    assert!(
        garbage.structured["notice"]
            .as_str()
            .unwrap()
            .contains("its answer named none of the 5 candidates")
    );

    // The REST API has no MCP client: the first stage, and why.
    let web = common::http::client();
    let answer = common::http::ok(web.get(format!(
        "{}/api/search?project=pets&query=pet&limit=5&mode=keyword",
        server.base
    )))
    .await;
    assert_eq!(ids(&answer), first_stage);
    assert!(
        answer["notice"]
            .as_str()
            .unwrap()
            .contains("only an MCP client can lend its model"),
        "{answer}"
    );
}

/// `api eval --rerank llm`: what a user with an `[llm]` endpoint runs to measure the second
/// stage on a golden set; here against a fake endpoint that always puts placeOrder first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_eval_measures_the_llm_second_stage() {
    use axum::{Json, routing::post};
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(|Json(body): Json<Value>| async move {
            let user = body["messages"][1]["content"].as_str().unwrap_or_default();
            let number = user
                .lines()
                .find(|line| line.contains("placeOrder"))
                .and_then(|line| line.split(' ').next())
                .unwrap_or("0")
                .to_string();
            Json(json!({"choices": [{"message": {"content": format!("[{number}]")}}]}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let dir = common::data_dir_with_petstore();
    let golden = dir.path().join("golden.tsv");
    std::fs::write(&golden, "buy a pet\tplaceOrder\nremove a pet\tdeletePet\n").unwrap();
    let config = dir.path().join("devlens.toml");
    std::fs::write(
        &config,
        format!("[llm]\nbase_url = \"{base}\"\nmodel = \"ranker\"\n"),
    )
    .unwrap();
    let eval = |rerank: Option<&str>| {
        let mut cmd = common::devlens(dir.path());
        common::without_model(&mut cmd, dir.path());
        cmd.env("DEVLENS_CONFIG", &config)
            .args([
                "api",
                "eval",
                "--project",
                "pets",
                "--mode",
                "keyword",
                "--json",
            ])
            .arg("--golden")
            .arg(&golden);
        if let Some(stage) = rerank {
            cmd.args(["--rerank", stage]);
        }
        common::stdout_json(&mut cmd)
    };
    let before = eval(None);
    assert!(before.get("rerank").is_none(), "{before}");
    let after = eval(Some("llm"));
    let rerank = &after["rerank"];
    assert_eq!(rerank["by"], "llm (ranker)", "{after}");
    assert_eq!(rerank["reranked"], 2);
    assert!(rerank["p50_ms"].is_number());
    // The fake model puts placeOrder first for every question: right once, wrong once.
    assert_eq!(after["top1"], 0.5, "{after}");

    // Sampling needs an MCP client: the CLI falls back, and says so.
    let sampling = eval(Some("sampling"));
    assert!(sampling.get("rerank").is_none());
    assert!(
        sampling["notice"]
            .as_str()
            .unwrap()
            .contains("not reranked by sampling"),
        "{sampling}"
    );
    // A stage that cannot be chosen is a clear error.
    let mut cmd = common::devlens(dir.path());
    cmd.args([
        "api",
        "eval",
        "--project",
        "pets",
        "--rerank",
        "gpt",
        "--golden",
    ])
    .arg(&golden)
    .assert()
    .failure()
    .stderr(predicates::str::contains("unknown rerank `gpt`"));
}
