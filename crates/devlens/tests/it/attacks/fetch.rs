//! Fetching what a caller names, attacked from outside: a docs crawl of the cloud metadata
//! service (whose answer would be served to every reader of `query_docs`) or of a service on
//! this machine, on the CLI and over REST, and a spec URL there. Each is refused with the outbound
//! guard's sentence and stores nothing. Beside them, what must keep working: a local docs site the
//! user allowed with `DEVLENS_NETWORK_ALLOW`, and a registered project's spec on this machine.

use std::path::Path;

use predicates::prelude::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::{self, http as rest};

const METADATA: &str = "http://169.254.169.254/latest/meta-data/";

/// The devlens command on `data_dir`, without a model and without an allow list of the
/// caller's environment.
fn devlens(data_dir: &Path) -> assert_cmd::Command {
    let mut cmd = common::devlens(data_dir);
    common::without_model(&mut cmd, data_dir);
    cmd.env_remove("DEVLENS_NETWORK_ALLOW");
    cmd
}

/// `devlens docs list --json`: the library ids.
fn library_ids(data_dir: &Path) -> Vec<String> {
    let out = devlens(data_dir)
        .args(["docs", "list", "--json"])
        .assert()
        .success();
    let list: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    list["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect()
}

/// A two-page docs site on 127.0.0.1; its base URL.
async fn docs_site() -> String {
    use axum::http::{StatusCode, Uri, header};
    let router = axum::Router::new().fallback(|uri: Uri| async move {
        let html = "text/html; charset=utf-8";
        match uri.path() {
            "/docs/index.html" => (
                StatusCode::OK,
                [(header::CONTENT_TYPE, html)],
                "<h1>Sprockets</h1><p>Sprockets mesh with gears. See <a href='setup.html'>setup</a>.</p>",
            ),
            "/docs/setup.html" => (
                StatusCode::OK,
                [(header::CONTENT_TYPE, html)],
                "<h1>Setup</h1><p>Oil the sprocket before first use.</p>",
            ),
            _ => (
                StatusCode::NOT_FOUND,
                [(header::CONTENT_TYPE, "text/plain")],
                "not found",
            ),
        }
    });
    common::serve_router(router).await
}

/// `host:port` of a base URL.
fn authority(base: &str) -> &str {
    base.trim_start_matches("http://")
}

#[test]
fn a_docs_crawl_of_the_metadata_service_is_refused_on_the_cli_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    devlens(dir.path())
        .args(["docs", "add", "meta", "--url", METADATA])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "devlens does not fetch http://169.254.169.254/latest/meta-data/",
        ))
        .stderr(predicate::str::contains("refused always"));
    // Allowing it changes nothing: metadata addresses are refused whatever is allowed.
    devlens(dir.path())
        .env("DEVLENS_NETWORK_ALLOW", "169.254.169.254")
        .args(["docs", "add", "meta", "--url", METADATA, "--ignore-robots"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("refused always"));
    assert!(library_ids(dir.path()).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_docs_crawl_of_the_metadata_service_is_refused_over_rest_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = rest::command(dir.path());
    cmd.env_remove("DEVLENS_NETWORK_ALLOW");
    let server = rest::start(cmd).await;
    let web = crate::common::http::client();
    let libraries = format!("{}/api/docs/libraries", server.base);

    let refused = rest::error(
        web.post(&libraries)
            .json(&json!({"id": "meta", "url": METADATA})),
        StatusCode::FORBIDDEN,
    )
    .await;
    assert!(
        refused.contains("169.254.169.254") && refused.contains("refused always"),
        "{refused}"
    );
    // The streamed ingest says the same in its error event.
    let streamed = web
        .post(format!(
            "{libraries}/stream?id=meta&url={}",
            url::form_urlencoded::byte_serialize(METADATA.as_bytes()).collect::<String>()
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        streamed.contains("event: error")
            && streamed.contains("refused always")
            && streamed.contains("\"kind\":\"forbidden\""),
        "{streamed}"
    );
    // A service on this machine nobody allowed: refused, with how to allow it.
    let private = rest::error(
        web.post(&libraries)
            .json(&json!({"id": "redis", "url": "http://127.0.0.1:6379/"})),
        StatusCode::FORBIDDEN,
    )
    .await;
    assert!(
        private.contains("DEVLENS_NETWORK_ALLOW=127.0.0.1:6379"),
        "{private}"
    );
    // Limits beyond their ceiling are refused before anything is fetched.
    let too_many = rest::error(
        web.post(&libraries)
            .json(&json!({"id": "big", "url": "https://example.com/docs/", "maxPages": 100000})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(too_many.contains("5000"), "{too_many}");

    let listed = rest::ok(web.get(&libraries)).await;
    assert_eq!(listed["libraries"], json!([]), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_docs_site_is_crawled_once_the_user_allows_it() {
    let site = docs_site().await;
    let start = format!("{site}/docs/index.html");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_path_buf();
    let start_cli = start.clone();
    let site_cli = site.clone();
    tokio::task::spawn_blocking(move || {
        // Not allowed: refused, with the entry that would allow it.
        devlens(&data)
            .args(["docs", "add", "sprockets", "--url", &start_cli])
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!(
                "DEVLENS_NETWORK_ALLOW={}",
                authority(&site_cli)
            )));
        // Allowed: crawled.
        let out = devlens(&data)
            .env("DEVLENS_NETWORK_ALLOW", authority(&site_cli))
            .args(["docs", "add", "sprockets", "--url", &start_cli, "--json"])
            .assert()
            .success();
        let added: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(added["pages"], 2, "{added}");
        assert_eq!(library_ids(&data), ["sprockets"]);
    })
    .await
    .unwrap();

    // The same over REST, from a server the user started with the allow list.
    let other = tempfile::tempdir().unwrap();
    let mut cmd = rest::command(other.path());
    cmd.env("DEVLENS_NETWORK_ALLOW", authority(&site));
    let server = rest::start(cmd).await;
    let added = rest::ok(
        crate::common::http::client()
            .post(format!("{}/api/docs/libraries", server.base))
            .json(&json!({"id": "sprockets", "url": start})),
    )
    .await;
    assert_eq!(added["pages"], 2, "{added}");
}

#[tokio::test(flavor = "multi_thread")]
async fn spec_urls_on_the_metadata_service_or_this_machine_need_a_configured_target() {
    use axum::http::{StatusCode, header};
    let petstore = std::fs::read(common::fixture("petstore.json")).unwrap();
    let router = axum::Router::new().route(
        "/openapi.json",
        axum::routing::get(move || {
            let petstore = petstore.clone();
            async move {
                (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, "application/json")],
                    petstore,
                )
            }
        }),
    );
    let api = common::serve_router(router).await;
    let spec_url = format!("{api}/openapi.json");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("projects.json"),
        json!({"projects": [{"name": "local", "swaggerUrl": spec_url}]}).to_string(),
    )
    .unwrap();
    let data = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        devlens(&data)
            .args([
                "api",
                "tags",
                "--spec",
                "http://169.254.169.254/latest/meta-data/openapi.json",
            ])
            .assert()
            .failure()
            .stderr(predicate::str::contains("refused always"));
        // Named by a caller, the spec on this machine is refused...
        devlens(&data)
            .args(["api", "tags", "--spec", &spec_url])
            .assert()
            .failure()
            .stderr(predicate::str::contains("private address"));
        // ...registered by the user as a project's spec, it is a configured target.
        devlens(&data)
            .args(["api", "tags", "--project", "local"])
            .assert()
            .success();
    })
    .await
    .unwrap();
}
