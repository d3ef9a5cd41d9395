//! The workspace widened or escaped: an MCP client over Streamable HTTP (any local process can
//! be one) that names `file:///` as its root, a server asked to work in `/` or in its own data
//! dir, a tool asked to rewrite `devlens.toml`. Beside them, what must keep working: a client
//! root inside the server's workspace narrows it; a server started in `/` by an MCP client still
//! serves, its file tools saying what to pass.

// Roots are deprecated by the newest protocol revision; clients in use still send them.
#![allow(deprecated)]

use std::path::{Path, PathBuf};

use rmcp::{
    ClientHandler, ServiceExt,
    model::{ClientCapabilities, ClientConfig, Implementation, ListRootsResult, Root},
    service::{RequestContext, RoleClient},
    transport::StreamableHttpClientTransport,
};
use serde_json::json;

use crate::common::{self, http as rest, mcp};

/// A client whose answer to `roots/list` is `root`.
#[derive(Clone)]
struct Roots {
    root: String,
}

impl ClientHandler for Roots {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_roots().build(),
            Implementation::new("roots-attack", "1"),
        )
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        Ok(ListRootsResult::new(vec![Root::new(self.root.clone())]))
    }
}

/// A project folder with one file, and an outside file beside it.
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("app");
    std::fs::create_dir_all(root.join("web")).unwrap();
    std::fs::write(root.join("README.md"), "the app\n").unwrap();
    std::fs::write(root.join("web/index.html"), "<h1>web</h1>\n").unwrap();
    let outside = dir.path().join("secret.txt");
    std::fs::write(&outside, "do not read\n").unwrap();
    (dir, root, outside)
}

/// `devlens serve --http` started in `cwd` with no `--workspace`.
async fn serve_in(data: &Path, cwd: &Path) -> rest::Server {
    let mut cmd = rest::command(data);
    cmd.current_dir(cwd);
    rest::start(cmd).await
}

async fn connect_with_root(
    server: &rest::Server,
    root: String,
) -> rmcp::service::RunningService<RoleClient, Roots> {
    Roots { root }
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{}/mcp",
            server.base
        )))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_of_file_slash_over_http_does_not_widen_the_workspace() {
    let data = tempfile::tempdir().unwrap();
    let (_dir, root, outside) = project();
    let server = serve_in(data.path(), &root).await;
    let client = connect_with_root(&server, "file:///".into()).await;

    let message = mcp::err(&client, "read_file", json!({ "path": "/etc/passwd" })).await;
    assert!(message.contains("was refused"), "{message}");
    let message = mcp::err(
        &client,
        "read_file",
        json!({ "path": outside.display().to_string() }),
    )
    .await;
    assert!(message.contains("was refused"), "{message}");
    let target = outside.with_file_name("planted.txt");
    let message = mcp::err(
        &client,
        "write_file",
        json!({ "path": target.display().to_string(), "content": "x" }),
    )
    .await;
    assert!(message.contains("was refused"), "{message}");
    assert!(!target.exists(), "nothing written outside");

    // The server's own workspace (the folder it was started in) still works.
    let read = mcp::ok(&client, "read_file", json!({ "path": "README.md" })).await;
    assert!(read.text.contains("the app"), "{}", read.text);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_inside_the_servers_workspace_narrows_it_over_http() {
    let data = tempfile::tempdir().unwrap();
    let (_dir, root, _) = project();
    let server = serve_in(data.path(), &root).await;
    let client = connect_with_root(&server, format!("file://{}", root.join("web").display())).await;
    let read = mcp::ok(&client, "read_file", json!({ "path": "index.html" })).await;
    assert!(read.text.contains("<h1>web</h1>"), "{}", read.text);
    let message = mcp::err(&client, "read_file", json!({ "path": "../README.md" })).await;
    assert!(message.contains("was refused"), "{message}");
    client.cancel().await.unwrap();
}

#[test]
fn a_workspace_that_opens_the_disk_or_the_data_dir_is_refused_at_start() {
    let data = tempfile::tempdir().unwrap();
    for (workspace, says) in [
        (PathBuf::from("/"), "root of the file system"),
        (data.path().to_path_buf(), "data directory"),
    ] {
        let out = common::devlens(data.path())
            .args(["serve", "--http", "127.0.0.1:0", "--workspace"])
            .arg(&workspace)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            stderr.contains(says) && stderr.contains("--workspace DIR"),
            "{}: {stderr}",
            workspace.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn started_in_the_root_folder_the_server_serves_but_file_tools_say_what_to_pass() {
    let data = tempfile::tempdir().unwrap();
    let mut cmd = mcp::serve_command(data.path(), &["--tools", "workspace"]);
    cmd.current_dir("/");
    let client = mcp::connect((), cmd).await;
    let message = mcp::err(&client, "list_files", json!({})).await;
    assert!(
        message.contains("no workspace") && message.contains("--workspace DIR"),
        "{message}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_never_write_devlens_toml() {
    let data = tempfile::tempdir().unwrap();
    let (_dir, root, _) = project();
    let mut cmd = mcp::serve_command(data.path(), &["--tools", "workspace"]);
    cmd.current_dir(&root);
    let client = mcp::connect((), cmd).await;
    let message = mcp::err(
        &client,
        "write_file",
        json!({ "path": "devlens.toml", "content": "[browser]\nchrome_path = \"./x.sh\"\n" }),
    )
    .await;
    assert!(message.contains("devlens trust"), "{message}");
    assert!(!root.join("devlens.toml").exists());
    client.cancel().await.unwrap();
}
