//! The `devlens docs` commands, as a user or a script runs them: ingest, list, resolve, query and
//! eval, with the `--json` shapes of the CLI contract.

use crate::common;

use std::path::{Path, PathBuf};

use common::{devlens, model_dir, stdout_json, without_model};
use predicates::prelude::*;
use serde_json::Value;

/// A small docs folder in four formats.
fn widgets_docs(root: &Path) -> PathBuf {
    let docs = root.join("widgets-docs");
    std::fs::create_dir_all(docs.join("guide")).unwrap();
    std::fs::write(
        docs.join("index.md"),
        "# Widgets\n\nWidgets render dashboards.\n\n## Installation\n\nInstall the package with \
         npm.\n\n```bash\nnpm install @acme/widgets\n```\n\n## Configuration\n\nSet the theme \
         and the refresh interval in `widgets.config.js`.\n\n### Refresh interval\n\nThe \
         dashboard polls the server every `refreshMs` milliseconds.\n",
    )
    .unwrap();
    std::fs::write(
        docs.join("guide/charts.rst"),
        "Charts\n======\n\nLine charts\n-----------\n\nDraw a line chart with ``lineChart(data)``.\n\n\
         Example::\n\n    lineChart([1, 2, 3])\n",
    )
    .unwrap();
    std::fs::write(
        docs.join("guide/auth.html"),
        "<html><head><title>Auth</title></head><body><nav><a href='/'>Home</a></nav>\
         <h1>Authentication</h1><p>Widgets sign requests with an API token.</p>\
         <h2 id='token-rotation'>Token rotation</h2><p>Rotate the token every 90 days.</p>\
         </body></html>",
    )
    .unwrap();
    std::fs::write(
        docs.join("guide/faq.txt"),
        "Widgets work offline once loaded.",
    )
    .unwrap();
    docs
}

/// Runs devlens (no embedding model) with `args`, expects success, parses stdout as JSON.
fn json_out(data: &Path, args: &[&str]) -> Value {
    let mut cmd = devlens(data);
    without_model(&mut cmd, data);
    stdout_json(cmd.args(args))
}

/// [`json_out`] for a crawl of the local fixture `site`, which the user allows (the outbound guard
/// refuses hosts on this machine otherwise).
fn crawl_out(data: &Path, site: &str, args: &[&str]) -> Value {
    let mut cmd = devlens(data);
    without_model(&mut cmd, data);
    allow_site(&mut cmd, site);
    stdout_json(cmd.args(args))
}

/// Lets `cmd` fetch from the local fixture `site` (`http://127.0.0.1:PORT`).
fn allow_site(cmd: &mut assert_cmd::Command, site: &str) {
    cmd.env("DEVLENS_NETWORK_ALLOW", site.trim_start_matches("http://"));
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    keys
}

#[test]
fn add_list_resolve_query_with_the_contract_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let docs = widgets_docs(dir.path());
    let added = json_out(
        dir.path(),
        &[
            "docs",
            "add",
            "/acme/widgets",
            "--path",
            docs.to_str().unwrap(),
            "--name",
            "Widgets",
            "--description",
            "Dashboard widgets for the web",
            "--version",
            "2.1",
            "--json",
        ],
    );
    assert_eq!(added["pages"], 4);
    assert_eq!(added["embedded"], false);
    assert!(
        added["notice"]
            .as_str()
            .unwrap()
            .contains("keyword search only")
    );

    let list = json_out(dir.path(), &["docs", "list", "--json"]);
    let libraries = list["libraries"].as_array().unwrap();
    assert_eq!(libraries.len(), 1);
    assert_eq!(keys(&libraries[0]), ["id", "name", "snippets", "versions"]);
    assert_eq!(libraries[0]["id"], "/acme/widgets");
    assert_eq!(libraries[0]["versions"][0], "2.1");
    assert!(libraries[0]["snippets"].as_u64().unwrap() >= 8);

    for name in ["widgets", "@acme/widgets", "widgts", "Widgets.js"] {
        let resolved = json_out(dir.path(), &["docs", "resolve", name, "--json"]);
        let first = &resolved["matches"][0];
        assert_eq!(first["id"], "/acme/widgets", "{name}");
        assert_eq!(
            keys(first),
            ["description", "id", "name", "snippets", "versions"]
        );
        assert_eq!(first["description"], "Dashboard widgets for the web");
    }
    let none = json_out(dir.path(), &["docs", "resolve", "kubernetes", "--json"]);
    assert_eq!(none["matches"].as_array().unwrap().len(), 0);

    let answer = json_out(
        dir.path(),
        &[
            "docs",
            "query",
            "/acme/widgets",
            "how often does the dashboard refresh",
            "--max-results",
            "3",
            "--tokens",
            "1000",
            "--json",
        ],
    );
    assert_eq!(
        keys(&answer),
        [
            "context",
            "library",
            "notice",
            "query",
            "results",
            "total_tokens",
            "truncated"
        ]
    );
    assert_eq!(
        keys(&answer["library"]),
        ["description", "id", "name", "version"]
    );
    assert_eq!(answer["library"]["version"], "2.1");
    let first = &answer["results"][0];
    assert_eq!(
        first["metadata"]["section"],
        "Widgets > Configuration > Refresh interval"
    );
    assert_eq!(first["metadata"]["url"], "index.md#refresh-interval");
    assert_eq!(first["metadata"]["source"], "index.md");
    assert_eq!(first["metadata"]["type"], "text");
    assert!(answer["total_tokens"].as_u64().unwrap() <= 1000);
    assert!(answer["context"].as_str().unwrap().contains("refreshMs"));

    // Code is typed and can be left out.
    let code = json_out(
        dir.path(),
        &[
            "docs",
            "query",
            "/acme/widgets",
            "line chart example",
            "--json",
        ],
    );
    let example = code["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metadata"]["type"] == "example")
        .expect("the rst literal block after `Example::`");
    assert!(
        example["content"]
            .as_str()
            .unwrap()
            .contains("lineChart([1, 2, 3])")
    );
    let no_code = json_out(
        dir.path(),
        &[
            "docs",
            "query",
            "/acme/widgets",
            "line chart example",
            "--no-code",
            "--json",
        ],
    );
    assert!(
        no_code["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["metadata"]["type"] == "text")
    );

    // The HTML page: navigation dropped, the heading's own id as anchor.
    let html = json_out(
        dir.path(),
        &[
            "docs",
            "query",
            "/acme/widgets",
            "rotate the API token",
            "--json",
        ],
    );
    assert_eq!(
        html["results"][0]["metadata"]["url"],
        "guide/auth.html#token-rotation"
    );
    assert!(!html["context"].as_str().unwrap().contains("Home"));

    // Compact text by default.
    let mut cmd = devlens(dir.path());
    without_model(&mut cmd, dir.path());
    cmd.args(["docs", "query", "/acme/widgets", "install"])
        .assert()
        .success()
        .stdout(predicate::str::contains("npm install @acme/widgets"))
        .stdout(predicate::str::contains("note: keyword ranking only"));
}

#[test]
fn mistakes_say_what_to_do_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let docs = widgets_docs(dir.path());
    json_out(
        dir.path(),
        &[
            "docs",
            "add",
            "widgets",
            "--path",
            docs.to_str().unwrap(),
            "--json",
        ],
    );
    let run = |args: &[&str]| {
        let mut cmd = devlens(dir.path());
        without_model(&mut cmd, dir.path());
        cmd.args(args).assert()
    };
    run(&["docs", "query", "widgetz", "refresh"])
        .failure()
        .stderr(predicate::str::contains("library `widgetz` not found"))
        .stderr(predicate::str::contains("Closest ids: widgets"));
    run(&["docs", "query", "widgets", "refresh", "--version", "9"])
        .failure()
        .stderr(predicate::str::contains("it has: latest"));
    run(&["docs", "query", "widgets", "refresh", "--tokens", "999"])
        .failure()
        .stderr(predicate::str::contains("between 1000 and 8000"));
    run(&["docs", "query", "widgets", "zzzqqq xxyyzz"])
        .failure()
        .stderr(predicate::str::contains("no documentation found"))
        .stderr(predicate::str::contains("Widgets"));
    run(&["docs", "add", "Bad Id!", "--path", docs.to_str().unwrap()])
        .failure()
        .stderr(predicate::str::contains("invalid library id"));
    run(&["docs", "refine", "widgetz"])
        .failure()
        .stderr(predicate::str::contains("library `widgetz` is not stored"))
        .stderr(predicate::str::contains("devlens docs list"));
    // A failed re-ingest keeps what was stored.
    run(&["docs", "add", "widgets", "--path", "no/such/folder"])
        .failure()
        .stderr(predicate::str::contains("cannot read"));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    run(&["docs", "add", "widgets", "--path", empty.to_str().unwrap()])
        .failure()
        .stderr(predicate::str::contains("found no documentation files"));
    let answer = json_out(
        dir.path(),
        &["docs", "query", "widgets", "refresh interval", "--json"],
    );
    assert!(!answer["results"].as_array().unwrap().is_empty());
}

#[test]
fn reingesting_a_version_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let docs = widgets_docs(dir.path());
    let path = docs.to_str().unwrap();
    json_out(
        dir.path(),
        &["docs", "add", "widgets", "--path", path, "--json"],
    );
    std::fs::write(
        docs.join("index.md"),
        "# Widgets\n\n## Refresh interval\n\nWidgets now refresh through server push.\n",
    )
    .unwrap();
    json_out(
        dir.path(),
        &["docs", "add", "widgets", "--path", path, "--json"],
    );
    json_out(
        dir.path(),
        &[
            "docs",
            "add",
            "widgets",
            "--path",
            path,
            "--version",
            "1.0",
            "--json",
        ],
    );
    let answer = json_out(
        dir.path(),
        &["docs", "query", "widgets", "refresh", "--json"],
    );
    let context = answer["context"].as_str().unwrap();
    assert!(context.contains("server push"));
    assert!(!context.contains("refreshMs"), "the old page is gone");
    let list = json_out(dir.path(), &["docs", "list", "--json"]);
    assert_eq!(
        list["libraries"][0]["versions"],
        serde_json::json!(["1.0", "latest"])
    );
    json_out(
        dir.path(),
        &["docs", "remove", "widgets", "--version", "1.0", "--json"],
    );
    let list = json_out(dir.path(), &["docs", "list", "--json"]);
    assert_eq!(
        list["libraries"][0]["versions"],
        serde_json::json!(["latest"])
    );
}

/// With the local model, a question that shares no words with the answer still finds it.
#[test]
fn semantic_ranking_with_the_local_model() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let docs = widgets_docs(dir.path());
    let run = |args: &[&str]| -> Value {
        stdout_json(
            devlens(dir.path())
                .env("DEVLENS_MODEL_DIR", &model)
                .args(args),
        )
    };
    let added = run(&[
        "docs",
        "add",
        "widgets",
        "--path",
        docs.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(added["embedded"], true);
    let answer = run(&[
        "docs",
        "query",
        "widgets",
        "keeping credentials fresh",
        "--json",
    ]);
    assert!(answer.get("notice").is_none(), "{answer}");
    let sections: Vec<&str> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metadata"]["section"].as_str().unwrap())
        .collect();
    assert!(
        sections[..2].contains(&"Authentication > Token rotation"),
        "{sections:?}"
    );

    // Ingested again with one page changed: only that page's sections go through the model.
    std::fs::write(
        docs.join("guide/faq.txt"),
        "Widgets work offline once loaded, for up to a week.",
    )
    .unwrap();
    let again = run(&[
        "docs",
        "add",
        "widgets",
        "--path",
        docs.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(again["embedded_texts"], 1, "{again}");
    assert_eq!(
        again["reused_vectors"].as_u64().unwrap() + 1,
        added["embedded_texts"].as_u64().unwrap(),
        "{again}"
    );
    let answer = run(&[
        "docs",
        "query",
        "widgets",
        "keeping credentials fresh",
        "--json",
    ]);
    assert_eq!(
        answer["results"][0]["metadata"]["section"],
        "Authentication > Token rotation"
    );
}

#[test]
fn passage_vectors_can_be_left_out_for_a_faster_ingest() {
    let Some(model) = model_dir() else { return };
    let long = |what: &str| format!("{what} ").repeat(30);
    let add = |passages: Option<bool>| -> Value {
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("guide");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(
            docs.join("setup.md"),
            format!(
                "# Setup\n\n{}\n\n{}\n",
                long("Install the agent on every host."),
                long("Rotate its key when a host leaves.")
            ),
        )
        .unwrap();
        let config = dir.path().join("devlens.toml");
        let setting = passages.map_or(String::new(), |on| format!("passage_vectors = {on}\n"));
        std::fs::write(&config, format!("[docs]\n{setting}")).unwrap();
        stdout_json(
            devlens(dir.path())
                .env("DEVLENS_MODEL_DIR", &model)
                .env("DEVLENS_CONFIG", &config)
                .args([
                    "docs",
                    "add",
                    "guide",
                    "--path",
                    docs.to_str().unwrap(),
                    "--json",
                ]),
        )
    };
    let default = add(None);
    let sections_only = add(Some(false));
    assert_eq!(default["embedded"], true, "{default}");
    assert_eq!(sections_only["embedded"], true, "{sections_only}");
    // One text for the section, and by default one more per long paragraph.
    assert_eq!(sections_only["embedded_texts"], 1, "{sections_only}");
    assert_eq!(default["embedded_texts"], 3, "{default}");
}

#[test]
fn bench_reports_ingest_and_query_figures() {
    let dir = tempfile::tempdir().unwrap();
    let docs = widgets_docs(dir.path());
    let golden = dir.path().join("golden.tsv");
    std::fs::write(
        &golden,
        "# question, then parts of the expected section\n\
         how do I rotate the token\tToken rotation\n\
         draw a line chart\tLine charts\n",
    )
    .unwrap();
    let report = json_out(
        dir.path(),
        &[
            "docs",
            "bench",
            "--path",
            docs.to_str().unwrap(),
            "--golden",
            golden.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(report["pages"], 4, "{report}");
    assert!(report["sections"].as_u64().unwrap() >= 6, "{report}");
    assert!(report["pages_per_sec"].as_f64().unwrap() > 0.0, "{report}");
    let q = &report["queries"];
    assert_eq!(
        (q["n"].as_u64(), q["hit_at_k"].as_f64()),
        (Some(2), Some(1.0)),
        "{report}"
    );
    for key in [
        "uncached_p50_ms",
        "uncached_p95_ms",
        "cached_p50_ms",
        "cached_p95_ms",
    ] {
        assert!(q[key].as_f64().is_some(), "{key}: {report}");
    }
    // The user's registry was not touched.
    let list = json_out(dir.path(), &["docs", "list", "--json"]);
    assert_eq!(list["libraries"].as_array().unwrap().len(), 0);
}

/// The golden set on the real Node.js API docs (Debian's nodejs-doc, fetched by
/// scripts/fetch-testdata), hybrid ranking with the local model: hit@5 must reach 0.9.
#[test]
fn nodejs_golden_set_hit_at_5() {
    let testdata = std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"));
    let pages = testdata.join("nodejs-doc/md");
    if !pages.join("fs.md").is_file() {
        if std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() == Ok("1") {
            panic!("{} is missing; run scripts/fetch-testdata", pages.display());
        }
        eprintln!("skipped: no Node.js docs (run scripts/fetch-testdata)");
        return;
    }
    let Some(model) = model_dir() else { return };
    let golden =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../devlens-docs/tests/golden/nodejs.tsv");
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| -> Value {
        stdout_json(
            devlens(dir.path())
                .env("DEVLENS_MODEL_DIR", &model)
                .timeout(std::time::Duration::from_secs(900))
                .args(args),
        )
    };
    let added = run(&[
        "docs",
        "add",
        "nodejs",
        "--path",
        pages.to_str().unwrap(),
        "--name",
        "Node.js",
        "--json",
    ]);
    assert!(added["pages"].as_u64().unwrap() >= 60, "{added}");
    assert_eq!(added["embedded"], true);
    let report = run(&[
        "docs",
        "eval",
        "--library",
        "nodejs",
        "--golden",
        golden.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(keys(&report), ["hit_at_k", "mrr", "n", "p50_ms", "p95_ms"]);
    assert!(report["n"].as_u64().unwrap() >= 30);
    let hit = report["hit_at_k"].as_f64().unwrap();
    assert!(hit >= 0.9, "hit@5 {hit} < 0.9: {report}");

    // The quality gate of the blind Node.js set's dev half (crate::quality_gates says why only
    // dev halves), on the same ingest: hit@5 0.89 and MRR 0.58 when the gate was set.
    let blind = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../devlens-docs/tests/golden/blind/nodejs.dev.tsv");
    let report = run(&[
        "docs",
        "eval",
        "--library",
        "nodejs",
        "--golden",
        blind.to_str().unwrap(),
        "--json",
    ]);
    let fell = crate::quality_gates::below(
        "Node.js blind set, dev half",
        &report,
        &[("hit_at_k", 0.89), ("mrr", 0.58)],
    );
    assert!(fell.is_empty(), "{}\n{report}", fell.join("\n"));
}

#[test]
fn json_logs_carry_one_event_per_query_with_its_facts() {
    let dir = tempfile::tempdir().unwrap();
    let docs = widgets_docs(dir.path());
    json_out(
        dir.path(),
        &[
            "docs",
            "add",
            "widgets",
            "--path",
            docs.to_str().unwrap(),
            "--json",
        ],
    );
    let events = |args: &[&str], ok: bool| -> Vec<Value> {
        let mut cmd = devlens(dir.path());
        without_model(&mut cmd, dir.path());
        cmd.env("DEVLENS_LOG_FORMAT", "json")
            .env_remove("DEVLENS_LOG")
            .env_remove("RUST_LOG")
            .env_remove("DEVLENS_REDIS_URL")
            .args(args);
        let assert = if ok {
            cmd.assert().success()
        } else {
            cmd.assert().failure()
        };
        String::from_utf8_lossy(&assert.get_output().stderr)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| {
                e["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("query_docs"))
            })
            .collect()
    };
    let ok = events(
        &[
            "docs",
            "query",
            "widgets",
            "how do I rotate the token",
            "--json",
        ],
        true,
    );
    assert_eq!(ok.len(), 1, "{ok:?}");
    let f = &ok[0]["fields"];
    assert_eq!(f["library"], "widgets");
    assert_eq!(f["version"], "latest");
    assert_eq!(f["query"], "how do I rotate the token");
    assert!(f["results"].as_u64().unwrap() >= 1, "{f}");
    assert!(f["tokens"].as_u64().unwrap() > 0, "{f}");
    assert_eq!(f["cache"], "miss");
    assert!(f["latency_ms"].as_f64().unwrap() >= 0.0, "{f}");
    assert_eq!(ok[0]["level"], "INFO");

    let failed = events(&["docs", "query", "widgetz", "anything"], false);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["fields"]["library"], "widgetz");
    assert!(
        failed[0]["fields"]["error"]
            .as_str()
            .unwrap()
            .contains("not found")
    );
}

/// Serves `files` (path -> content type, body) on a local port; anything else is a 404. `SITE`
/// in a body becomes the server's own address.
fn serve_site(
    rt: &tokio::runtime::Runtime,
    files: Vec<(&'static str, &'static str, String)>,
) -> String {
    use axum::http::{HeaderMap, StatusCode, Uri, header};
    let files = std::sync::Arc::new(files);
    let router = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
        let files = std::sync::Arc::clone(&files);
        async move {
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or_default();
            match files.iter().find(|(path, _, _)| *path == uri.path()) {
                Some((_, ct, body)) => (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, *ct)],
                    body.replace("SITE", &format!("http://{host}")),
                ),
                None => (
                    StatusCode::NOT_FOUND,
                    [(header::CONTENT_TYPE, "text/plain")],
                    "not found".to_string(),
                ),
            }
        }
    });
    rt.block_on(common::serve_router(router))
}

#[test]
fn add_url_crawls_the_site_under_the_start_page() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let html = "text/html; charset=utf-8";
    let site = serve_site(
        &rt,
        vec![
            (
                "/docs/index.html",
                html,
                "<h1>Gadgets</h1><p>Gadgets glow in the dark. Read <a href='setup.html#top'>setup</a>, \
                 <a href=\"/docs/setup.html\">setup again</a>, the <a href='guide/'>guide</a>, \
                 <a href='missing.html'>a dead link</a>, <a href='data.json'>data</a>, \
                 <a href='logo.png'>the logo</a>, <a href='/blog/post.html'>the blog</a> and \
                 <a href='https://example.invalid/docs/x.html'>elsewhere</a>.</p>"
                    .into(),
            ),
            (
                "/docs/setup.html",
                html,
                "<h1>Setup</h1><p>Charge the gadget for an hour before first use.</p>".into(),
            ),
            (
                "/docs/guide/",
                "text/markdown",
                "# Guide\n\nPair gadgets over Bluetooth. More in [depth](deep.md).\n".into(),
            ),
            (
                "/docs/guide/deep.md",
                "text/markdown",
                "# Deep dive\n\nFirmware updates arrive monthly.\n".into(),
            ),
            ("/docs/data.json", "application/json", "{\"not\": \"docs\"}".into()),
            ("/blog/post.html", html, "<h1>Blog</h1><p>Out of scope.</p>".into()),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let start = format!("{site}/docs/index.html");
    let added = crawl_out(
        dir.path(),
        &site,
        &["docs", "add", "gadgets", "--url", &start, "--json"],
    );
    assert_eq!(added["pages"], 4, "{added}");
    let failed = added["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{added}");
    assert!(
        failed[0]
            .as_str()
            .unwrap()
            .contains("missing.html: HTTP 404")
    );
    let answer = json_out(
        dir.path(),
        &[
            "docs",
            "query",
            "gadgets",
            "how often do firmware updates arrive",
            "--json",
        ],
    );
    assert!(
        answer["context"].as_str().unwrap().contains("monthly"),
        "{answer}"
    );
    assert_eq!(
        answer["results"][0]["metadata"]["url"],
        format!("{site}/docs/guide/deep.md#deep-dive")
    );

    // One link deep: the guide's own link is not followed.
    let shallow = crawl_out(
        dir.path(),
        &site,
        &[
            "docs",
            "add",
            "shallow",
            "--url",
            &start,
            "--max-depth",
            "1",
            "--json",
        ],
    );
    assert_eq!(shallow["pages"], 3, "{shallow}");
    // Two pages at most, and the report says the crawl was cut short.
    let capped = crawl_out(
        dir.path(),
        &site,
        &[
            "docs",
            "add",
            "capped",
            "--url",
            &start,
            "--max-pages",
            "2",
            "--json",
        ],
    );
    assert_eq!(capped["pages"], 2, "{capped}");
    assert!(
        capped["notice"].as_str().unwrap().contains("--max-pages"),
        "{capped}"
    );

    // A start page that fails is an error that says what to do, and stores nothing.
    let mut cmd = devlens(dir.path());
    without_model(&mut cmd, dir.path());
    allow_site(&mut cmd, &site);
    cmd.args([
        "docs",
        "add",
        "broken",
        "--url",
        &format!("{site}/docs/nothing.html"),
    ])
    .assert()
    .failure()
    .stderr(predicate::str::contains("HTTP 404"))
    .stderr(predicate::str::contains("--path"));
    let mut cmd = devlens(dir.path());
    cmd.args(["docs", "add", "x", "--path", ".", "--max-pages", "3"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("cannot be used with '--max-pages"));
    let list = json_out(dir.path(), &["docs", "list", "--json"]);
    let ids: Vec<&str> = list["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["capped", "gadgets", "shallow"]);
}

/// The Node.js HTML docs served as a site: the crawl reaches every page from the index.
#[test]
fn add_url_crawls_the_nodejs_docs() {
    let testdata = std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"));
    let root = testdata.join("nodejs-doc/html");
    if !root.join("index.html").is_file() {
        if std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() == Ok("1") {
            panic!("{} is missing; run scripts/fetch-testdata", root.display());
        }
        eprintln!("skipped: no Node.js docs (run scripts/fetch-testdata)");
        return;
    }
    use axum::http::{StatusCode, Uri, header};
    let router = axum::Router::new().fallback(move |uri: Uri| {
        let root = root.clone();
        async move {
            let name = uri.path().trim_start_matches("/api/");
            let file = root.join(name);
            let safe = !name.is_empty() && !name.contains("..") && !name.contains('/');
            match std::fs::read(&file) {
                Ok(body) if safe && name.ends_with(".html") => {
                    (StatusCode::OK, [(header::CONTENT_TYPE, "text/html")], body)
                }
                _ => (
                    StatusCode::NOT_FOUND,
                    [(header::CONTENT_TYPE, "text/plain")],
                    b"not found".to_vec(),
                ),
            }
        }
    });
    let rt = tokio::runtime::Runtime::new().unwrap();
    let site = rt.block_on(common::serve_router(router));
    let dir = tempfile::tempdir().unwrap();
    let added = crawl_out(
        dir.path(),
        &site,
        &[
            "docs",
            "add",
            "nodejs",
            "--url",
            &format!("{site}/api/index.html"),
            "--json",
        ],
    );
    // Every page the index links to (policy.html is linked from none), all.html (linked, not
    // shipped by Debian) reported as failed.
    assert!(added["pages"].as_u64().unwrap() >= 60, "{added}");
    assert!(
        added["failed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().contains("/api/all.html: HTTP 404")),
        "{added}"
    );
    assert!(added["chunks"].as_u64().unwrap() > 3000, "{added}");
    let answer = json_out(
        dir.path(),
        &[
            "docs",
            "query",
            "nodejs",
            "read a file with promises",
            "--json",
        ],
    );
    let section = answer["results"][0]["metadata"]["section"]
        .as_str()
        .unwrap();
    assert!(section.to_lowercase().contains("file system"), "{section}");
}

/// The crawl keeps out of what the site's robots.txt disallows (the group naming devlens wins
/// over `*`), says how many links it left and the crawl delay it kept, refuses a disallowed start page with what to do, and
/// `--ignore-robots` crawls everything.
#[test]
fn add_url_keeps_to_what_robots_txt_allows() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let html = "text/html; charset=utf-8";
    let site = serve_site(
        &rt,
        vec![
            (
                "/robots.txt",
                "text/plain",
                "User-agent: *\nDisallow: /\n\nUser-agent: devlens\nDisallow: /docs/internal/\n\
                 Disallow: /*.txt$\nCrawl-delay: 0.2\n"
                    .into(),
            ),
            (
                "/docs/index.html",
                html,
                "<h1>Widgets</h1><p>Widgets hum softly. See <a href='usage.html'>usage</a>, \
                 <a href='internal/roadmap.html'>the roadmap</a> and \
                 <a href='notes.txt'>notes</a>.</p>"
                    .into(),
            ),
            (
                "/docs/usage.html",
                html,
                "<h1>Usage</h1><p>Turn the dial clockwise to start the widget.</p>".into(),
            ),
            (
                "/docs/internal/roadmap.html",
                html,
                "<h1>Roadmap</h1><p>Secret plans for next year.</p>".into(),
            ),
            (
                "/docs/notes.txt",
                "text/plain",
                "Notes about widgets.".into(),
            ),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let start = format!("{site}/docs/index.html");
    let added = crawl_out(
        dir.path(),
        &site,
        &["docs", "add", "widgets", "--url", &start, "--json"],
    );
    assert_eq!(added["pages"], 2, "{added}");
    let notice = added["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("2 links the site's robots.txt disallows"),
        "{added}"
    );
    assert!(notice.contains("one page every 0.2 s"), "{added}");
    let answer = json_out(
        dir.path(),
        &["docs", "query", "widgets", "secret plans roadmap", "--json"],
    );
    assert!(
        !answer["context"]
            .as_str()
            .unwrap_or_default()
            .contains("Secret plans"),
        "{answer}"
    );

    let all = crawl_out(
        dir.path(),
        &site,
        &[
            "docs",
            "add",
            "widgets-all",
            "--url",
            &start,
            "--ignore-robots",
            "--json",
        ],
    );
    assert_eq!(all["pages"], 4, "{all}");

    let mut cmd = devlens(dir.path());
    without_model(&mut cmd, dir.path());
    allow_site(&mut cmd, &site);
    cmd.args([
        "docs",
        "add",
        "internal",
        "--url",
        &format!("{site}/docs/internal/roadmap.html"),
    ])
    .assert()
    .failure()
    .stderr(predicate::str::contains("robots.txt"))
    .stderr(predicate::str::contains("--ignore-robots"));
}

/// Pages that only the sitemap lists (a navigation drawn by JavaScript) are read too: through
/// robots.txt's `Sitemap:` line and a sitemap index, within the crawl's scope.
#[test]
fn add_url_reads_the_pages_the_sitemap_lists() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let html = "text/html; charset=utf-8";
    let xml = "application/xml";
    let site = serve_site(
        &rt,
        vec![
            (
                "/robots.txt",
                "text/plain",
                "User-agent: *\nDisallow: /docs/drafts/\n\nSitemap: SITE/sitemap-index.xml\n"
                    .into(),
            ),
            (
                "/sitemap-index.xml",
                xml,
                "<sitemapindex><sitemap><loc>SITE/sitemaps/docs.xml</loc></sitemap></sitemapindex>"
                    .into(),
            ),
            (
                "/sitemaps/docs.xml",
                xml,
                "<urlset><url><loc>SITE/docs/index.html</loc></url>\
                 <url><loc>SITE/docs/api/gears.html</loc></url>\
                 <url><loc>SITE/docs/drafts/next.html</loc></url>\
                 <url><loc>SITE/blog/news.html</loc></url></urlset>"
                    .into(),
            ),
            (
                "/docs/index.html",
                html,
                "<h1>Gears</h1><div id=nav></div><p>Gears turn other gears.</p>".into(),
            ),
            (
                "/docs/api/gears.html",
                html,
                "<h1>Gear API</h1><p>Call spin() with the number of teeth to mesh.</p>".into(),
            ),
            (
                "/docs/drafts/next.html",
                html,
                "<h1>Draft</h1><p>Not ready.</p>".into(),
            ),
            (
                "/blog/news.html",
                html,
                "<h1>News</h1><p>Out of scope.</p>".into(),
            ),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let added = crawl_out(
        dir.path(),
        &site,
        &[
            "docs",
            "add",
            "gears",
            "--url",
            &format!("{site}/docs/index.html"),
            "--json",
        ],
    );
    assert_eq!(added["pages"], 2, "{added}");
    let notice = added["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("1 pages were added from the site's sitemap"),
        "{added}"
    );
    assert!(
        notice.contains("1 links the site's robots.txt disallows"),
        "{added}"
    );
    let answer = json_out(
        dir.path(),
        &[
            "docs",
            "query",
            "gears",
            "how do I mesh gears by teeth",
            "--json",
        ],
    );
    assert!(
        answer["context"].as_str().unwrap().contains("spin()"),
        "{answer}"
    );
}

/// Runs git in `dir` (no user configuration needed).
fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=devlens",
            "-c",
            "user.email=devlens@example.com",
        ])
        .args(["-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn add_git_clones_a_ref_and_reads_its_docs_folder() {
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("data");
    let repo = scratch.path().join("widgets");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(repo.join("docs")).unwrap();
    git(&repo, &["init", "--quiet", "-b", "main"]);
    std::fs::write(
        repo.join("README.md"),
        "# Widgets\n\nThe project's front page.\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("docs/refresh.md"),
        "# Refresh\n\nWidgets refresh every second.\n",
    )
    .unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "v1"]);
    git(&repo, &["tag", "v1.0"]);
    std::fs::write(
        repo.join("docs/refresh.md"),
        "# Refresh\n\nWidgets refresh every minute since 2.0.\n",
    )
    .unwrap();
    git(&repo, &["commit", "--quiet", "-am", "v2"]);
    let url = format!("file://{}", repo.display());

    // A tag and a docs folder: the tag is the version, only the folder is read.
    let v1 = json_out(
        &data,
        &[
            "docs", "add", "widgets", "--git", &url, "--ref", "v1.0", "--dir", "docs", "--json",
        ],
    );
    assert_eq!(v1["version"], "v1.0", "{v1}");
    assert_eq!(v1["pages"], 1, "{v1}");
    // The default branch: its name is the version; the whole repository is read.
    let main = json_out(&data, &["docs", "add", "widgets", "--git", &url, "--json"]);
    assert_eq!(main["version"], "main", "{main}");
    assert_eq!(main["pages"], 2, "{main}");
    for (version, says) in [("v1.0", "every second"), ("main", "every minute")] {
        let question = "how often do widgets refresh";
        let answer = json_out(
            &data,
            &[
                "docs",
                "query",
                "widgets",
                question,
                "--version",
                version,
                "--json",
            ],
        );
        assert!(
            answer["context"].as_str().unwrap().contains(says),
            "{answer}"
        );
    }

    // Mistakes: said before or after the clone, and nothing stored.
    for (args, said) in [
        (
            vec!["--git", url.as_str(), "--ref", "v9"],
            "is `v9` a branch or tag",
        ),
        (
            vec!["--git", url.as_str(), "--dir", "../etc"],
            "must be a folder inside the repository",
        ),
        (
            vec!["--git", url.as_str(), "--dir", "guide"],
            "has no folder `guide`",
        ),
        (vec!["--git", "ext::sh -c touch% /tmp/pwned"], "ext"),
        (vec!["--git", "ssh://git@example.com/a/b.git"], "not `ssh:`"),
        // Through the outbound guard: this machine and the cloud metadata address are not cloned.
        (
            vec!["--git", "http://127.0.0.1:9/a.git"],
            "Nothing was stored",
        ),
        (
            vec!["--git", "http://169.254.169.254/a.git"],
            "Nothing was stored",
        ),
    ] {
        let mut cmd = devlens(&data);
        without_model(&mut cmd, &data);
        cmd.args(["docs", "add", "gadgets"])
            .args(&args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(said));
    }
    let listed = json_out(&data, &["docs", "list", "--json"]);
    assert_eq!(listed["libraries"].as_array().unwrap().len(), 1, "{listed}");
}

#[test]
fn add_url_reads_the_sites_llms_txt_instead_of_crawling() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let html = "text/html; charset=utf-8";
    let text = "text/plain; charset=utf-8";
    let page = |body: &str| -> String { body.to_string() };
    // The short form: a list of the docs pages (one on another site, one robots.txt forbids).
    let short = serve_site(
        &rt,
        vec![
            (
                "/robots.txt",
                text,
                page("User-agent: *\nDisallow: /docs/private.md\n"),
            ),
            (
                "/docs/index.html",
                html,
                page(
                    "<h1>Gizmos</h1><p>See <a href='crawled.html'>a page only a crawl finds</a>.</p>",
                ),
            ),
            (
                "/docs/crawled.html",
                html,
                page("<h1>Crawled</h1><p>Only a crawl reads this.</p>"),
            ),
            (
                "/llms.txt",
                text,
                page(
                    "# Gizmos\n\n> Gizmos hum in the key of C.\n\n## Docs\n\n\
                     - [Humming](SITE/docs/humming.md): how gizmos hum\n\
                     - [Charging](/docs/charging.md): charging a gizmo\n\
                     - [Private](/docs/private.md)\n\
                     - [Elsewhere](https://example.invalid/x.md)\n",
                ),
            ),
            (
                "/docs/humming.md",
                "text/markdown",
                page("# Humming\n\nGizmos hum at 440 Hz.\n"),
            ),
            (
                "/docs/charging.md",
                "text/markdown",
                page("# Charging\n\nCharge gizmos overnight.\n"),
            ),
        ],
    );
    let data = tempfile::tempdir().unwrap();
    let added = crawl_out(
        data.path(),
        &short,
        &[
            "docs",
            "add",
            "gizmos",
            "--url",
            &format!("{short}/docs/index.html"),
            "--json",
        ],
    );
    assert_eq!(
        added["pages"], 3,
        "llms.txt and the two pages it lists: {added}"
    );
    let notice = added["notice"].as_str().unwrap();
    assert!(
        notice.contains(&format!(
            "read the 2 pages the site's {short}/llms.txt lists instead of crawling"
        )),
        "{notice}"
    );
    let answer = json_out(
        data.path(),
        &[
            "docs",
            "query",
            "gizmos",
            "what pitch do gizmos hum at",
            "--json",
        ],
    );
    assert!(
        answer["context"].as_str().unwrap().contains("440 Hz"),
        "{answer}"
    );
    // The page only a crawl would reach was not read.
    let mut cmd = devlens(data.path());
    without_model(&mut cmd, data.path());
    cmd.args(["docs", "query", "gizmos", "only a crawl reads this"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no documentation found"));

    // The full form: the whole docs in one request, found in the start page's folder.
    let full = serve_site(
        &rt,
        vec![
            (
                "/docs/index.html",
                html,
                page("<h1>Sprockets</h1><p>Start here.</p>"),
            ),
            (
                "/docs/llms-full.txt",
                text,
                page(
                    "# Sprockets\n\n## Turning\n\nSprockets turn clockwise.\n\n## Oiling\n\nOil them weekly.\n",
                ),
            ),
            // An app that answers every path with its page is no llms.txt.
            ("/llms.txt", html, page("<!doctype html><title>app</title>")),
        ],
    );
    let added = crawl_out(
        data.path(),
        &full,
        &[
            "docs",
            "add",
            "sprockets",
            "--url",
            &format!("{full}/docs/"),
            "--json",
        ],
    );
    assert_eq!(added["pages"], 1, "{added}");
    assert!(
        added["notice"]
            .as_str()
            .unwrap()
            .contains("llms-full.txt (all of its docs in one request)"),
        "{added}"
    );

    // Neither: the crawl it always was.
    let plain = serve_site(
        &rt,
        vec![
            (
                "/docs/index.html",
                html,
                page("<h1>Cogs</h1><p>See <a href='teeth.html'>teeth</a>.</p>"),
            ),
            (
                "/docs/teeth.html",
                html,
                page("<h1>Teeth</h1><p>Cogs have teeth.</p>"),
            ),
            ("/llms.txt", html, page("<!doctype html><title>app</title>")),
        ],
    );
    let added = crawl_out(
        data.path(),
        &plain,
        &[
            "docs",
            "add",
            "cogs",
            "--url",
            &format!("{plain}/docs/index.html"),
            "--json",
        ],
    );
    assert_eq!(added["pages"], 2, "{added}");
    assert!(
        added
            .get("notice")
            .is_none_or(|n| !n.as_str().unwrap().contains("llms")),
        "{added}"
    );
}
