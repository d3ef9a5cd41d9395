//! The real-world test data these tests read (`scripts/fetch-testdata` fetches it).

use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"))
}

/// The data set at `rel`, or `None` (after a notice) when it is missing and not required.
pub(crate) fn data_set(rel: &str) -> Option<PathBuf> {
    let path = testdata().join(rel);
    if path.exists() {
        return Some(path);
    }
    let required = std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("DEVLENS_REQUIRE_TESTDATA").is_ok_and(|v| v == "1");
    let msg = format!(
        "real-world test data missing: {} does not exist. Run `scripts/fetch-testdata` \
         (or set DEVLENS_TESTDATA to the folder that holds it).",
        path.display()
    );
    assert!(!required, "{msg}");
    eprintln!("SKIPPED: {msg}");
    None
}

pub(crate) fn files_under(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, exts, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(path);
        }
    }
}
