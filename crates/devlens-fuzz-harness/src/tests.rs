//! Every target's body over a few plain seeds and some junk — a smoke run, not fuzzing (that is
//! `scripts/fuzz`) — and the fuzz workspace checked against [`TARGETS`], so a target renamed or
//! added on one side only fails here.

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

use std::path::{Path, PathBuf};

use super::TARGETS;

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo_file(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One tool call of `app_tool_args`: the tool's number, then its arguments.
fn tool_call(tool: u8, arguments: &str) -> Vec<u8> {
    let mut input = vec![tool];
    input.extend_from_slice(arguments.as_bytes());
    input
}

/// Inputs that reach each target's work, not only its first check.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let text = |s: &str| s.as_bytes().to_vec();
    match target {
        "openapi_spec" => vec![
            text(&read("crates/devlens/tests/fixtures/petstore.json")),
            text(
                "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths:\n  /pets/{id}:\n    get:\n      \
                 operationId: getPet\n      parameters: [{name: id, in: path, required: true, type: \
                 string}]\n      responses: {'200': {description: ok}}\n",
            ),
        ],
        "openapi_multi_file" => vec![text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      \
             responses:\n        '200':\n          $ref: 'other.yaml#/components/responses/Fine'\n\
             \n---8<---\ncomponents:\n  responses:\n    Fine:\n      description: fine\n",
        )],
        "docs_markdown" => vec![text(
            "# Widgets\n\nWidgets render dashboards.\n\n## Install\n\n```bash\nnpm i widgets\n```\n\n\
             | a | b |\n| - | - |\n| 1 | 2 |\n",
        )],
        "docs_rst" => vec![text(
            "Charts\n======\n\nLine charts\n-----------\n\nDraw one with ``lineChart(data)``.\n\n\
             Example::\n\n    lineChart([1, 2, 3])\n",
        )],
        "docs_html" => vec![text(
            "<html><head><title>Auth</title></head><body><nav><a href='/'>Home</a></nav>\
             <h1>Authentication</h1><p>Sign requests with a token.</p><pre><code>curl -H x</code>\
             </pre><h2 id='rotation'>Rotation</h2><p>Rotate it.</p></body></html>",
        )],
        "docs_robots" => vec![text(
            "User-agent: *\nDisallow: /private\nAllow: /docs/\n\nUser-agent: devlens\nDisallow: \
             /*.pdf$\n",
        )],
        "docs_sitemap" => vec![text(
            "<?xml version=\"1.0\"?><urlset><url><loc>https://example.com/docs/a?x=1&amp;y=2</loc>\
             </url><url><loc><![CDATA[https://example.com/docs/b]]></loc></url></urlset>",
        )],
        "browser_sourcemap" => vec![text(
            "http://localhost/static/app.js.map\n{\"version\":3,\"file\":\"app.js\",\"sourceRoot\":\
             \"\",\"sources\":[\"src/app.ts\"],\"names\":[\"cart\"],\"mappings\":\"AAAA,SAASA;AACT\"}",
        )],
        "kb_import" => vec![text(
            r#"{"version":1,"solutions":[{"id":"abc123","title":"CORS preflight on PUT","url":null,
            "text":"Answer OPTIONS with the allowed methods.","summary":null,"tags":["http"],
            "createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z"}]}"#,
        )],
        "app_tool_args" => vec![
            tool_call(0, r#"{"query":"list pets","limit":5}"#),
            tool_call(2, r#"{"path":"src/app.ts"}"#),
            tool_call(3, r#"{"path":"src"}"#),
            tool_call(4, r#"{"pattern":"TODO"}"#),
            tool_call(6, r#"{"path":"x","oldText":"line two","newText":"line 2"}"#),
            tool_call(9, r#"{"url":"http://127.0.0.1:9/"}"#),
            tool_call(36, r#"{}"#),
        ],
        other => panic!("no seeds for the target `{other}`: add some here"),
    }
}

#[test]
fn every_target_runs_its_seeds_and_junk() {
    for (name, run) in TARGETS {
        for seed in seeds(name) {
            run(&seed);
        }
        for junk in [
            &b""[..],
            b"\xff\xfe\x00",
            b"{",
            b"[[[[[[[[",
            b"\n---8<---\n",
        ] {
            run(junk);
        }
    }
}

/// The `[[bin]]` names of fuzz/Cargo.toml.
fn fuzz_binaries() -> Vec<String> {
    let manifest = read("fuzz/Cargo.toml");
    let mut lines = manifest.lines();
    let mut names = Vec::new();
    while let Some(line) = lines.next() {
        if line.trim() == "[[bin]]" {
            let name = lines.next().unwrap_or_default();
            let name = name
                .strip_prefix("name = \"")
                .and_then(|n| n.strip_suffix('"'))
                .unwrap_or_else(|| panic!("a [[bin]] starts with its name: {name}"));
            names.push(name.to_string());
        }
    }
    names.sort();
    names
}

#[test]
fn the_fuzz_workspace_wraps_every_target_and_nothing_else() {
    let mut targets: Vec<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    targets.sort();
    assert_eq!(fuzz_binaries(), targets, "fuzz/Cargo.toml's [[bin]]s");
    let script = read("scripts/fuzz");
    for name in &targets {
        let source = read(&format!("fuzz/fuzz_targets/{name}.rs"));
        let call = format!(
            "libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::{name}::run(data));"
        );
        assert!(
            source.lines().any(|l| l == call),
            "fuzz/fuzz_targets/{name}.rs should be `{call}`"
        );
        assert!(
            script.contains(&format!("[{name}]=")),
            "scripts/fuzz gives `{name}` no MAX_LEN"
        );
    }
}
