//! The workspace tools end to end: a real rmcp client drives `devlens serve --tools workspace`
//! over stdio — read, list, search, write and edit a project's files — and every path that tries
//! to leave the project is refused with nothing written. A client that names its project (MCP
//! roots) gets that folder as its workspace. The CLI and the REST API answer the same.

#![allow(clippy::unwrap_used)]
// test code: a panic is a failed assertion

// Roots are deprecated by the newest protocol revision; clients in use still send them.
#![allow(deprecated)]

use crate::common;

use common::mcp::{Reply, connect, err, ok, serve_command};

use std::path::{Path, PathBuf};

use rmcp::{
    ClientHandler, ServiceExt,
    model::{ClientCapabilities, ClientConfig, Implementation, ListRootsResult, Root},
    service::{RequestContext, RoleClient, RunningService},
    transport::{ConfigureCommandExt, TokioChildProcess},
};
use serde_json::json;

/// A client that names `root` as its project (or none).
#[derive(Clone, Default)]
struct Project {
    root: Option<PathBuf>,
}

impl ClientHandler for Project {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.root.is_some() {
            ClientCapabilities::builder().enable_roots().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("workspace-test", "1"))
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .root
            .iter()
            .map(|r| Root::new(format!("file://{}", r.display())))
            .collect();
        Ok(ListRootsResult::new(roots))
    }
}

type Client = RunningService<RoleClient, Project>;

/// `devlens serve --tools workspace [extra args]`, started in `cwd`.
async fn start(data: &Path, cwd: &Path, extra: &[&str], client: Project) -> Client {
    let args: Vec<&str> = ["--tools", "workspace"]
        .iter()
        .chain(extra)
        .copied()
        .collect();
    let mut cmd = serve_command(data, &args);
    cmd.current_dir(cwd);
    connect(client, cmd).await
}

/// A small front-end project beside a folder it must not reach.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("app");
    std::fs::create_dir_all(root.join("src/components")).unwrap();
    std::fs::create_dir_all(root.join("node_modules/react")).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::write(root.join(".gitignore"), "node_modules/\n").unwrap();
    std::fs::write(root.join("node_modules/react/index.js"), "useState").unwrap();
    std::fs::write(
        root.join("src/components/Counter.jsx"),
        "import { useState } from 'react';\n\nexport function Counter() {\n  const [n, setN] = \
         useState(0);\n  return <button onClick={() => setN(n + 1)}>{n}</button>;\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/main.jsx"),
        "import { Counter } from './components/Counter';\n",
    )
    .unwrap();
    (dir, root)
}

#[tokio::test]
async fn read_list_search_write_and_edit_inside_the_workspace_only() {
    let (dir, root) = project();
    let data = dir.path().join("data");
    let root_arg = root.display().to_string();
    let client = start(
        &data,
        dir.path(),
        &["--workspace", &root_arg],
        Project::default(),
    )
    .await;

    let Reply { text: listed, .. } = ok(&client, "list_files", json!({})).await;
    assert_eq!(
        listed, ".gitignore\nsrc/components/Counter.jsx\nsrc/main.jsx",
        "node_modules is gitignored"
    );
    let Reply { text: found, .. } = ok(
        &client,
        "search_files",
        json!({"pattern": "useState\\(", "globs": ["*.jsx"]}),
    )
    .await;
    assert_eq!(
        found,
        "src/components/Counter.jsx:4:  const [n, setN] = useState(0);"
    );
    let Reply {
        data: read, text, ..
    } = ok(
        &client,
        "read_file",
        json!({"path": "src/components/Counter.jsx", "startLine": 3, "limit": 2}),
    )
    .await;
    assert!(
        text.starts_with("   3\texport function Counter() {\n   4\t"),
        "{text}"
    );
    let version = read["version"].as_str().unwrap().to_string();

    let Reply {
        data: edited, text, ..
    } = ok(
        &client,
        "edit_file",
        json!({
            "path": "src/components/Counter.jsx",
            "oldText": "useState(0)",
            "newText": "useState(10)",
            "expectedVersion": version,
        }),
    )
    .await;
    assert!(text.contains("-  const [n, setN] = useState(0);"), "{text}");
    assert!(
        text.contains("+  const [n, setN] = useState(10);"),
        "{text}"
    );
    assert_eq!(edited["linesAdded"], 1);
    // The same version again: the file changed since, so the edit is refused.
    let stale = err(
        &client,
        "edit_file",
        json!({
            "path": "src/components/Counter.jsx",
            "oldText": "useState(10)",
            "newText": "useState(20)",
            "expectedVersion": version,
        }),
    )
    .await;
    assert!(stale.contains("changed on disk"), "{stale}");
    let twice = err(
        &client,
        "edit_file",
        json!({"path": "src/components/Counter.jsx", "oldText": "n", "newText": "m"}),
    )
    .await;
    assert!(
        twice.contains("occurs") && twice.contains("replaceAll"),
        "{twice}"
    );

    let Reply { data: created, .. } = ok(
        &client,
        "write_file",
        json!({"path": "src/components/Title.jsx", "content": "export const Title = () => <h1/>;\n"}),
    )
    .await;
    assert_eq!(created["created"], true);
    assert!(root.join("src/components/Title.jsx").is_file());

    // A page check that cannot be done is refused before anything is written.
    let no_selector = err(
        &client,
        "write_file",
        json!({"path": "src/Other.jsx", "content": "x", "page": {"style": {"selector": " "}}}),
    )
    .await;
    assert!(no_selector.contains("page.style.selector"), "{no_selector}");
    let misspelt = err(
        &client,
        "write_file",
        json!({"path": "src/Other.jsx", "content": "x", "page": {"screenshots": true}}),
    )
    .await;
    assert!(misspelt.contains("screenshots"), "{misspelt}");
    assert!(!root.join("src/Other.jsx").exists());

    // Every way out is refused, and says where files may go.
    for path in [
        "../home/.bashrc",
        "/etc/passwd",
        &dir.path().join("home/.profile").display().to_string(),
        "src/../../home/x",
        ".git/hooks/pre-commit",
        "..\\home\\x",
    ] {
        let refused = err(&client, "write_file", json!({"path": path, "content": "x"})).await;
        assert!(refused.contains("was refused"), "{path}: {refused}");
    }
    let refused = err(&client, "read_file", json!({"path": "../home"})).await;
    assert!(
        refused.contains("Files may be read in the workspace"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("home")).unwrap().count(),
        0
    );
    client.cancel().await.ok();

    // Read-only: reads work, writes say why they do not.
    let client = start(
        &data,
        dir.path(),
        &["--workspace", &root_arg, "--read-only-workspace"],
        Project::default(),
    )
    .await;
    ok(&client, "read_file", json!({"path": "src/main.jsx"})).await;
    let refused = err(
        &client,
        "write_file",
        json!({"path": "src/main.jsx", "content": "x"}),
    )
    .await;
    assert!(refused.contains("--read-only-workspace"), "{refused}");
    client.cancel().await.ok();
}

#[tokio::test]
async fn a_client_that_names_its_project_works_in_it() {
    let (dir, root) = project();
    let elsewhere = dir.path().join("home");
    // Started elsewhere, without --workspace: the client's root decides.
    let client = start(
        &dir.path().join("data"),
        &elsewhere,
        &[],
        Project {
            root: Some(root.clone()),
        },
    )
    .await;
    let Reply { text: listed, .. } = ok(&client, "list_files", json!({"globs": ["*.jsx"]})).await;
    assert_eq!(listed, "src/components/Counter.jsx\nsrc/main.jsx");
    client.cancel().await.ok();

    // Without roots, the directory devlens was started in.
    std::fs::write(elsewhere.join("notes.md"), "# notes\n").unwrap();
    let client = start(
        &dir.path().join("data"),
        &elsewhere,
        &[],
        Project::default(),
    )
    .await;
    let Reply { text: listed, .. } = ok(&client, "list_files", json!({})).await;
    assert_eq!(listed, "notes.md");
    client.cancel().await.ok();
}

#[test]
fn the_cli_reads_lists_and_searches_what_the_tools_see() {
    let (dir, root) = project();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let cli = |args: &[&str]| {
        let mut cmd = common::devlens(&dir.path().join("data"));
        cmd.args(["workspace", "--workspace"]).arg(&root).args(args);
        cmd
    };
    cli(&["list", "--glob", "*.jsx"])
        .assert()
        .success()
        .stdout("src/components/Counter.jsx\nsrc/main.jsx\n");
    cli(&["search", "Counter", "--literal", "--glob", "main.jsx"])
        .assert()
        .success()
        .stdout("src/main.jsx:1:import { Counter } from './components/Counter';\n");
    cli(&["read", "src/main.jsx", "--json"])
        .assert()
        .success()
        .stdout(predicates::str::contains("\"totalLines\": 1"));
    // Bad input: an exit status of 2 and what to do.
    cli(&["read", "../home"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("was refused"));
    cli(&["read", "missing.js"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("does not exist"));
}

#[tokio::test]
async fn browser_tools_cannot_write_outside_or_run_a_program_of_their_choosing() {
    let (dir, root) = project();
    let root_arg = root.display().to_string();
    let mut cmd = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("devlens"));
    cmd.env("DEVLENS_DATA_DIR", dir.path().join("data"))
        .env_remove("DEVLENS_CONFIG")
        .env_remove("DEVLENS_TOOLS")
        .current_dir(dir.path());
    let transport = TokioChildProcess::new(cmd.configure(|cmd| {
        cmd.args(["serve", "--tools", "browser", "--workspace", &root_arg]);
    }))
    .expect("spawn devlens serve");
    let client: Client = Project::default()
        .serve(transport)
        .await
        .expect("initialize");

    let refused = err(
        &client,
        "chrome",
        json!({"action": "launch", "chromePath": "/bin/sh"}),
    )
    .await;
    assert!(refused.contains("allowed_chrome_paths"), "{refused}");
    let refused = err(
        &client,
        "chrome",
        json!({"action": "launch", "userDataDir": dir.path().join("home").display().to_string()}),
    )
    .await;
    assert!(refused.contains("allowed_user_data_dirs"), "{refused}");
    // A screenshot or a response body saved outside is refused before any browser is asked.
    let outside = dir.path().join("home/.bashrc").display().to_string();
    for (tool, args) in [
        ("screenshot", json!({"path": outside})),
        ("screenshot", json!({"path": "../home/shot.png"})),
        (
            "get_network_request",
            json!({"id": 1, "saveResponseBodyTo": outside}),
        ),
        (
            "get_network_request",
            json!({"id": 1, "saveResponseBodyTo": "../home/.profile"}),
        ),
    ] {
        let refused = err(&client, tool, args).await;
        assert!(refused.contains("was refused"), "{tool}: {refused}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path().join("home")).unwrap().count(),
        0
    );
    client.cancel().await.ok();
}
