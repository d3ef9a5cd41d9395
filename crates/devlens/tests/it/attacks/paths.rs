//! Files and addresses named in requests: a read token's `spec=` pointing at a secret file or
//! a URL of its choosing, docs added over HTTP from any folder. Beside them, what must keep
//! working: a spec in the workspace, a project by name, docs from a folder in the workspace.

use reqwest::StatusCode;
use serde_json::json;

use crate::common::{self, http as rest, mcp};

/// A server on the petstore data dir, working in a project folder that holds a spec and docs.
async fn server() -> (tempfile::TempDir, tempfile::TempDir, rest::Server) {
    let data = common::data_dir_with_petstore();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::copy(common::petstore(), workspace.path().join("api.json")).unwrap();
    std::fs::create_dir_all(workspace.path().join("docs")).unwrap();
    std::fs::write(
        workspace.path().join("docs/guide.md"),
        "# Guide\n\nWidgets are configured with `widget.toml`.\n",
    )
    .unwrap();
    let mut cmd = rest::command(data.path());
    cmd.env("DEVLENS_WORKSPACE", workspace.path());
    let server = rest::start(cmd).await;
    (data, workspace, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spec_over_http_is_a_project_or_a_workspace_file() {
    let (_data, _workspace, server) = server().await;
    let web = crate::common::http::client();
    let tags = |spec: &str| {
        let spec: String = url::form_urlencoded::byte_serialize(spec.as_bytes()).collect();
        web.get(format!("{}/api/tags?spec={spec}", server.base))
    };
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), std::fs::read(common::petstore()).unwrap()).unwrap();
    let message = rest::error(
        tags(&outside.path().display().to_string()),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(message.contains("was refused"), "{message}");
    let message = rest::error(
        tags("https://example.com/openapi.json"),
        StatusCode::FORBIDDEN,
    )
    .await;
    assert!(message.contains("devlens project add"), "{message}");

    let listed = rest::ok(tags("api.json")).await;
    assert!(listed.to_string().contains("pets"), "{listed}");
    let listed = rest::ok(web.get(format!("{}/api/tags?project=pets", server.base))).await;
    assert!(listed.to_string().contains("pets"), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docs_over_http_come_from_the_workspace_only() {
    let (data, _workspace, server) = server().await;
    let web = crate::common::http::client();
    let secrets = tempfile::tempdir().unwrap();
    std::fs::write(secrets.path().join("notes.md"), "# Keys\n\nsecret\n").unwrap();
    let add = |path: String| {
        web.post(format!("{}/api/docs/libraries", server.base))
            .json(&json!({ "id": "stolen", "path": path }))
    };
    let message = rest::error(
        add(secrets.path().display().to_string()),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(message.contains("[docs] roots"), "{message}");
    let listed = common::devlens(data.path())
        .args(["docs", "list", "--json"])
        .assert()
        .success();
    assert!(
        !String::from_utf8_lossy(&listed.get_output().stdout).contains("stolen"),
        "nothing stored"
    );
    let added = rest::ok(add("docs".into())).await;
    assert!(added.to_string().contains("stolen"), "{added}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spec_over_stdio_stays_in_the_workspace_too() {
    let data = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::copy(common::petstore(), workspace.path().join("api.json")).unwrap();
    let mut cmd = mcp::serve_command(data.path(), &["--tools", "api"]);
    cmd.current_dir(workspace.path());
    let client = mcp::connect((), cmd).await;
    let message = mcp::err(
        &client,
        "list_api_tags",
        json!({ "spec": common::petstore() }),
    )
    .await;
    assert!(message.contains("was refused"), "{message}");
    let listed = mcp::ok(&client, "list_api_tags", json!({ "spec": "api.json" })).await;
    assert!(listed.text.contains("pets"), "{}", listed.text);
    client.cancel().await.unwrap();
}
