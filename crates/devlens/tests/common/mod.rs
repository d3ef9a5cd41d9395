//! Shared set-up for the end-to-end tests: a private data directory and the fixture spec.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn petstore() -> String {
    fixture("petstore.json").display().to_string()
}

/// A data directory with one project, `pets`, pointing at the petstore fixture.
pub fn data_dir_with_petstore() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let projects = serde_json::json!({
        "projects": [{ "name": "pets", "swaggerUrl": petstore() }]
    });
    std::fs::write(
        dir.path().join("projects.json"),
        serde_json::to_string(&projects).expect("json"),
    )
    .expect("write projects.json");
    dir
}

/// The devlens command with a private data dir, cleared of the user's environment.
pub fn devlens(data_dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("devlens").expect("devlens binary");
    cmd.env("DEVLENS_DATA_DIR", data_dir)
        .env_remove("DEVLENS_PROJECT")
        .env_remove("PROJECT_NAME")
        .env_remove("DEVLENS_CONFIG")
        .env_remove("DEVLENS_PROJECTS_FILE")
        .current_dir(data_dir);
    cmd
}
