//! The browser as a way out of the workspace: an agent — or a page talking it into it — asking
//! devlens' Chrome to show a local file outside the workspace (`/etc/passwd`, `~/.ssh`) and
//! reading it back with `snapshot`. Each test drives a real `devlens serve` over MCP with a real
//! headless Chromium; without Chromium they print a skip notice and pass, unless
//! DEVLENS_REQUIRE_BROWSER=1.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::{self, mcp};

/// A server working in `workspace` (explicitly, as `serve --workspace` does), with a browser
/// launched.
async fn serve_with_browser(data_dir: &Path, workspace: &Path) -> mcp::Client {
    let cmd = mcp::serve_command(data_dir, &["--workspace", &workspace.display().to_string()]);
    let client = mcp::connect((), cmd).await;
    let launched = mcp::ok(&client, "chrome", json!({ "action": "launch" })).await;
    // The launch answer says whether Chrome runs in its sandbox (here: root or not).
    let expected = devlens_browser::SandboxState::decide(
        devlens_browser::Sandbox::Auto,
        devlens_browser::running_as_root(),
    );
    assert!(
        launched.text.contains(expected.describe()),
        "{}",
        launched.text
    );
    client
}

/// A workspace with a page, a symlink out, and a secret outside it.
struct Files {
    _dir: tempfile::TempDir,
    data: PathBuf,
    workspace: PathBuf,
    secret: PathBuf,
}

impl Files {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let workspace = dir.path().join("project");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&workspace).unwrap();
        let workspace = std::fs::canonicalize(&workspace).unwrap();
        let secret = std::fs::canonicalize(dir.path())
            .unwrap()
            .join("id_ed25519");
        std::fs::write(&secret, "-----BEGIN OPENSSH PRIVATE KEY----- SECRET-4711").unwrap();
        std::fs::write(
            workspace.join("index.html"),
            format!(
                "<!doctype html><title>Project page</title><h1>inside the workspace</h1>\
                 <iframe src=\"file://{}\"></iframe>",
                secret.display()
            ),
        )
        .unwrap();
        std::os::unix::fs::symlink(&secret, workspace.join("key-link")).unwrap();
        Self {
            _dir: dir,
            data,
            workspace,
            secret,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn navigate_and_new_tabs_open_no_local_file_outside_the_workspace() {
    if !common::browser_available() {
        return;
    }
    let files = Files::new();
    let client = serve_with_browser(&files.data, &files.workspace).await;
    let secret = files.secret.display().to_string();
    let ws = files.workspace.display().to_string();
    for url in [
        "file:///etc/passwd".to_string(),
        "FILE:///etc/passwd".to_string(),
        "file://localhost/etc/passwd".to_string(),
        "file:///etc/%70asswd".to_string(),
        " file:///etc/passwd".to_string(),
        format!(
            "file://{ws}/../{}",
            files.secret.file_name().unwrap().display()
        ),
        format!("file://{secret}"),
        format!("file://{ws}/key-link"),
    ] {
        let refused = mcp::err(&client, "navigate", json!({ "url": url })).await;
        assert!(refused.contains("was not opened"), "{url}: {refused}");
        assert!(
            refused.contains(&ws),
            "{url}: names the workspace: {refused}"
        );
        let refused = mcp::err(&client, "target", json!({ "action": "new", "url": url })).await;
        assert!(refused.contains("was not opened"), "{url}: {refused}");
    }
    // A scheme that would show a file past the check is not opened at all.
    let refused = mcp::err(
        &client,
        "navigate",
        json!({ "url": "view-source:file:///etc/passwd" }),
    )
    .await;
    assert!(refused.contains("are not opened"), "{refused}");
    let shown = mcp::ok(&client, "snapshot", json!({})).await;
    assert!(!shown.text.contains("root:"), "{}", shown.text);

    // A file inside the workspace opens, and reads back.
    let page = format!("file://{ws}/index.html");
    let loaded = mcp::ok(&client, "navigate", json!({ "url": page })).await;
    assert!(loaded.text.contains("Project page"), "{}", loaded.text);
    let shown = mcp::ok(&client, "snapshot", json!({})).await;
    assert!(
        shown.text.contains("inside the workspace"),
        "{}",
        shown.text
    );
    // Its iframe of the key outside is not loaded.
    assert!(!shown.text.contains("SECRET-4711"), "{}", shown.text);
    let opened = mcp::ok(&client, "target", json!({ "action": "new", "url": page })).await;
    assert!(opened.text.contains("Project page"), "{}", opened.text);
    mcp::ok(&client, "chrome_disconnect", json!({})).await;
    client.cancel().await.unwrap();
}

/// Past the `navigate` check: the workspace page's own script sends the tab to the key, or the
/// agent does it with `evaluate`. The browser refuses the load itself.
#[tokio::test(flavor = "multi_thread")]
async fn a_workspace_page_cannot_send_the_tab_to_a_file_outside() {
    if !common::browser_available() {
        return;
    }
    let files = Files::new();
    let client = serve_with_browser(&files.data, &files.workspace).await;
    let page = format!("file://{}/index.html", files.workspace.display());
    mcp::ok(&client, "navigate", json!({ "url": page })).await;
    let key = format!("file://{}", files.secret.display());
    mcp::ok(
        &client,
        "evaluate",
        json!({ "expression": format!("location.href = {key:?}; 1") }),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let shown = mcp::ok(&client, "snapshot", json!({})).await;
    assert!(!shown.text.contains("SECRET-4711"), "{}", shown.text);
    let read = mcp::ok(
        &client,
        "evaluate",
        json!({ "expression": "document.documentElement.innerText" }),
    )
    .await;
    assert!(!read.text.contains("SECRET-4711"), "{}", read.text);
    mcp::ok(&client, "chrome_disconnect", json!({})).await;
    client.cancel().await.unwrap();
}
