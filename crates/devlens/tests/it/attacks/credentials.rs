//! A project's credentials sent where a caller says: `POST /api/call` with a `baseUrl` of the
//! caller's choosing, by a read token, for a project a cloned repository declares. Beside them,
//! what must keep working: a call to the project's own backend on `127.0.0.1:<port>` with its
//! token.

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::{Router, extract::State, http::HeaderMap, routing::any};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::{self, http as rest};

/// The project's token, as the environment holds it.
const TOKEN: &str = "s3cret-shop-token";

/// What a listener saw: each request's path and its `Authorization` header.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A listener on a free port that records every request and answers `[]`.
async fn listener() -> (String, Seen) {
    let seen: Seen = Arc::default();
    async fn record(
        State(seen): State<Seen>,
        headers: HeaderMap,
        uri: axum::http::Uri,
    ) -> axum::Json<Value> {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        seen.lock().unwrap().push((uri.path().to_string(), auth));
        axum::Json(json!([]))
    }
    let router = Router::new()
        .fallback(any(record))
        .with_state(Arc::clone(&seen));
    (common::serve_router(router).await, seen)
}

/// A data dir with a devlens.toml (named with DEVLENS_CONFIG: the user's) declaring the shop
/// project, whose backend runs at `backend`; `server` lines go under `[server]`.
fn shop(backend: &str, server: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("devlens.toml"),
        format!(
            "[[projects]]\nname = \"shop\"\nspec = \"{}\"\nbase_url = \"{backend}/v1\"\n\
             [server]\n{server}\n",
            common::petstore()
        ),
    )
    .unwrap();
    dir
}

fn configured(dir: &Path) -> tokio::process::Command {
    let mut cmd = rest::command(dir);
    cmd.env("DEVLENS_CONFIG", dir.join("devlens.toml"))
        .env("DEVLENS_SHOP_TOKEN", TOKEN)
        .env_remove("DEVLENS_NETWORK_ALLOW");
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_base_url_gets_no_credentials() {
    let (backend, at_backend) = listener().await;
    let (elsewhere, at_elsewhere) = listener().await;
    let dir = shop(&backend, "");
    let server = rest::start(configured(dir.path())).await;
    let web = crate::common::http::client();
    let call = |base_url: Option<&str>| {
        let mut body = json!({ "project": "shop", "operationId": "listPets" });
        if let Some(base) = base_url {
            body["baseUrl"] = json!(base);
        }
        web.post(format!("{}/api/call", server.base)).json(&body)
    };

    // The attack: another port of this machine, named by the caller. Not the project's host and
    // private: the outbound guard refuses it, and nothing reaches it.
    let message = rest::error(call(Some(&elsewhere)), StatusCode::FORBIDDEN).await;
    assert!(message.contains("private address"), "{message}");
    assert!(message.contains("[network] allow"), "{message}");
    assert!(at_elsewhere.lock().unwrap().is_empty(), "nothing was sent");

    // The project's own backend on loopback: sent, with its token.
    let answer = rest::ok(call(None)).await;
    assert_eq!(answer["executed"], true, "{answer}");
    assert_eq!(
        at_backend.lock().unwrap().as_slice(),
        &[("/v1/pets".to_string(), Some(format!("Bearer {TOKEN}")))]
    );
    assert!(
        !answer.to_string().contains(TOKEN),
        "the secret is never shown"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_foreign_host_is_called_without_the_projects_credentials() {
    let (backend, _) = listener().await;
    let (elsewhere, at_elsewhere) = listener().await;
    let dir = shop(&backend, "");
    let port = elsewhere.rsplit(':').next().unwrap();
    let out = common::devlens(dir.path())
        .env("DEVLENS_CONFIG", dir.path().join("devlens.toml"))
        .env("DEVLENS_SHOP_TOKEN", TOKEN)
        .env("DEVLENS_NETWORK_ALLOW", format!("127.0.0.1:{port}"))
        .args([
            "api",
            "call",
            "--project",
            "shop",
            "listPets",
            "--base-url",
            &elsewhere,
            "--json",
        ])
        .assert()
        .success();
    let answer: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let note = answer["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("without the project's credentials") && note.contains(&backend),
        "{answer}"
    );
    assert_eq!(
        at_elsewhere.lock().unwrap().as_slice(),
        &[("/pets".to_string(), None)],
        "sent, but without Authorization"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_token_gets_the_dry_run_only() {
    let (backend, at_backend) = listener().await;
    let dir = shop(&backend, "require_token = true");
    let read = {
        let out = common::devlens(dir.path())
            .args(["token", "create", "--scope", "read", "--json"])
            .assert()
            .success();
        let made: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        made["token"].as_str().unwrap().to_string()
    };
    let server = rest::start(configured(dir.path())).await;
    let answer = rest::ok(
        crate::common::http::client()
            .post(format!("{}/api/call", server.base))
            .bearer_auth(&read)
            .json(&json!({ "project": "shop", "operationId": "listPets" })),
    )
    .await;
    assert_eq!(answer["executed"], false, "{answer}");
    assert!(
        answer["note"]
            .as_str()
            .is_some_and(|n| n.contains("may only read")),
        "{answer}"
    );
    assert!(answer["curl"].is_string(), "the request is still shown");
    assert!(at_backend.lock().unwrap().is_empty(), "nothing was sent");

    // The same over MCP: the tool is listed for a read token, answers with the dry run, and
    // refuses `execute: true`.
    use rmcp::ServiceExt as _;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base))
        .auth_header(read.clone());
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "call_endpoint"));
    let dry = common::mcp::ok(
        &client,
        "call_endpoint",
        json!({ "project": "shop", "operationId": "listPets" }),
    )
    .await;
    assert_eq!(dry.data["executed"], false, "{}", dry.text);
    assert!(dry.text.contains("may only read"), "{}", dry.text);
    let refused = common::mcp::err(
        &client,
        "call_endpoint",
        json!({ "project": "shop", "operationId": "listPets", "execute": true }),
    )
    .await;
    assert!(refused.contains("may only read"), "{refused}");
    assert!(
        at_backend.lock().unwrap().is_empty(),
        "nothing was sent over MCP either"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_from_an_untrusted_repository_gets_no_credentials() {
    let (backend, at_backend) = listener().await;
    let data = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    std::fs::copy(common::petstore(), repo.path().join("petstore.json")).unwrap();
    // The repository names the project the user keeps credentials for, pointing at its own
    // host (here: a loopback listener standing for it).
    std::fs::write(
        repo.path().join("devlens.toml"),
        format!(
            "[[projects]]\nname = \"shop\"\nspec = \"petstore.json\"\nbase_url = \"{backend}/v1\"\n\
             auth = {{ type = \"bearer\", token_env = \"DEVLENS_SHOP_TOKEN\" }}\n"
        ),
    )
    .unwrap();
    let call = || {
        let mut cmd = common::devlens(data.path());
        cmd.current_dir(repo.path())
            .env("DEVLENS_SHOP_TOKEN", TOKEN)
            .args(["api", "call", "--project", "shop", "listPets", "--json"]);
        cmd
    };
    let out = call().assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("is not trusted") && stderr.contains("[[projects]] auth of shop"),
        "{stderr}"
    );
    let answer: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(
        answer["note"]
            .as_str()
            .is_some_and(|n| n.contains("devlens trust")),
        "{answer}"
    );
    assert_eq!(
        at_backend.lock().unwrap().as_slice(),
        &[("/v1/pets".to_string(), None)]
    );

    // Once the user trusts the file, its project is theirs.
    common::devlens(data.path())
        .current_dir(repo.path())
        .arg("trust")
        .assert()
        .success();
    call().assert().success();
    assert_eq!(
        at_backend.lock().unwrap().last().cloned(),
        Some(("/v1/pets".to_string(), Some(format!("Bearer {TOKEN}"))))
    );
}
