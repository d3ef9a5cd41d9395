//! A cloned repository's `./devlens.toml` naming an executable for devlens to run, and the
//! rest of what an untrusted file may not set. Beside it, what must keep working: the same file
//! after `devlens trust`, and the harmless keys of an untrusted file.

use std::path::Path;

use serde_json::json;

use crate::common::{self, mcp};

/// A repository whose devlens.toml names `./x.sh` as Chrome; the script leaves a marker file
/// when it runs. Returns the marker's path.
fn hostile_repository(repo: &Path) -> std::path::PathBuf {
    let marker = repo.join("x.sh.ran");
    let script = repo.join("x.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        repo.join("devlens.toml"),
        "[browser]\nchrome_path = \"./x.sh\"\n\n[kb]\ntop_k = 3\n",
    )
    .unwrap();
    marker
}

/// `chrome` launch over MCP stdio, started in `repo`; no browser anywhere else (CHROME_PATH
/// names nothing), so a launch that does not use the repository's script fails fast.
async fn launch_in(data: &Path, repo: &Path) -> String {
    let mut cmd = mcp::serve_command(data, &["--tools", "browser"]);
    cmd.current_dir(repo)
        .env("CHROME_PATH", repo.join("no-chrome-here"));
    let client = mcp::connect((), cmd).await;
    let reply = mcp::call(&client, "chrome", json!({ "action": "launch" })).await;
    client.cancel().await.unwrap();
    assert!(reply.error, "no browser can start here: {}", reply.text);
    reply.text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_config_runs_nothing_until_devlens_trust() {
    let data = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let marker = hostile_repository(repo.path());

    let message = launch_in(data.path(), repo.path()).await;
    assert!(!marker.exists(), "the repository's script ran: {message}");
    assert!(message.contains("no-chrome-here"), "{message}");

    // Any command says what was ignored and how to trust the file.
    let out = common::devlens(data.path())
        .current_dir(repo.path())
        .args(["project", "list"])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("is not trusted")
            && stderr.contains("[browser]")
            && stderr.contains("devlens trust"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("[kb]"),
        "harmless keys still apply: {stderr}"
    );

    // The user reviews the file and trusts it: now it is theirs.
    let out = common::devlens(data.path())
        .current_dir(repo.path())
        .arg("trust")
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains("[browser]"),
        "says what now applies: {stdout}"
    );
    launch_in(data.path(), repo.path()).await;
    assert!(marker.exists(), "the trusted file's chrome_path is used");

    // A changed file needs trust again.
    std::fs::remove_file(&marker).unwrap();
    let config = repo.path().join("devlens.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("# changed\n");
    std::fs::write(&config, text).unwrap();
    launch_in(data.path(), repo.path()).await;
    assert!(!marker.exists(), "a changed file is untrusted again");
}

#[cfg(unix)]
#[test]
fn the_data_dir_and_its_secrets_are_the_owners_only() {
    use std::os::unix::fs::PermissionsExt;
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("devlens-data");
    // The data dir does not exist yet: the first command makes it.
    common::devlens(&data)
        .current_dir(parent.path())
        .args(["token", "create", "--scope", "read"])
        .assert()
        .success();
    common::devlens(&data)
        .args(["extension", "token"])
        .assert()
        .success();
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("devlens.toml"), "[kb]\ntop_k = 3\n").unwrap();
    common::devlens(&data)
        .current_dir(repo.path())
        .arg("trust")
        .assert()
        .success();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    for secret in ["tokens.json", "extension.json", "trusted-configs.json"] {
        assert_eq!(mode(&data.join(secret)), 0o600, "{secret}");
    }
}
