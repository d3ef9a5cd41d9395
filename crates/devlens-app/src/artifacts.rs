//! What the tools saved in devlens' artifacts folder (`<data dir>/artifacts/`): screenshots,
//! traces, heap snapshots. Listed and read back by name, never outside that folder.

use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use devlens_workspace::ARTIFACTS_DIR;

use crate::{App, AppError};

/// How many files a listing names (newest first).
const LIST_LIMIT: usize = 200;
/// The largest file read back whole; bigger ones are named with their path.
pub const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// One saved file.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// The path below the artifacts folder, `/`-separated.
    pub name: String,
    pub size: u64,
    pub mime_type: &'static str,
    /// Seconds since the Unix epoch.
    pub modified: u64,
}

fn root(app: &App) -> PathBuf {
    app.config().data_dir.root().join(ARTIFACTS_DIR)
}

/// The saved files, newest first (at most 200).
pub fn list(app: &App) -> Vec<Artifact> {
    let root = root(app);
    let mut found = Vec::new();
    let mut dirs = vec![root.clone()];
    // Bounded walk: a folder someone filled with thousands of files must not stall a listing.
    let mut seen = 0usize;
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > 10 * LIST_LIMIT {
                break;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let path = entry.path();
            if meta.is_dir() {
                dirs.push(path);
            } else if meta.is_file()
                && let Some(name) = relative_name(&root, &path)
            {
                found.push(artifact(name, &meta));
            }
        }
    }
    found.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.name.cmp(&b.name)));
    found.truncate(LIST_LIMIT);
    found
}

/// A saved file's description and bytes. `name` is as [`list`] gives it.
pub fn read(app: &App, name: &str) -> Result<(Artifact, Vec<u8>), AppError> {
    let root = root(app);
    let path = locate(&root, name)?;
    let meta = std::fs::metadata(&path).map_err(|_| not_found(name))?;
    if !meta.is_file() {
        return Err(not_found(name));
    }
    if meta.len() > READ_LIMIT {
        return Err(AppError::invalid(format!(
            "artifact `{name}` is {} MB, more than the {} MB read whole; open it at {}",
            meta.len() / (1024 * 1024),
            READ_LIMIT / (1024 * 1024),
            path.display()
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| {
        AppError::new(
            devlens_core::ErrorKind::Internal,
            format!("cannot read artifact `{name}`: {e}"),
        )
    })?;
    Ok((artifact(name.to_string(), &meta), bytes))
}

/// Where `name` is, if it names a file inside the artifacts folder (links included).
fn locate(root: &Path, name: &str) -> Result<PathBuf, AppError> {
    let relative = Path::new(name);
    let plain = !name.is_empty()
        && !name.contains('\0')
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(AppError::invalid(format!(
            "`{name}` is not an artifact name: give a path below the artifacts folder as the \
             artifact list shows it (e.g. `shot.png`)"
        )));
    }
    let path = std::fs::canonicalize(root.join(relative)).map_err(|_| not_found(name))?;
    let root = std::fs::canonicalize(root).map_err(|_| not_found(name))?;
    if path.starts_with(&root) {
        Ok(path)
    } else {
        Err(not_found(name))
    }
}

fn not_found(name: &str) -> AppError {
    AppError::new(
        devlens_core::ErrorKind::NotFound,
        format!("no artifact `{name}`: the artifact list names the saved files"),
    )
}

fn relative_name(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

fn artifact(name: String, meta: &std::fs::Metadata) -> Artifact {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    Artifact {
        mime_type: mime_type(&name),
        name,
        size: meta.len(),
        modified,
    }
}

/// The media type a client needs to show a saved file.
pub fn mime_type(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "json" | "heapsnapshot" | "cpuprofile" | "har" => "application/json",
        "html" | "htm" => "text/html",
        "md" => "text/markdown",
        "txt" | "log" => "text/plain",
        _ => "application/octet-stream",
    }
}

/// Whether a client can be given the file as text rather than base64.
pub fn is_text(mime_type: &str) -> bool {
    mime_type.starts_with("text/") || mime_type == "application/json"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_inside_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("artifacts");
        std::fs::create_dir_all(root.join("traces")).unwrap();
        std::fs::write(root.join("traces/a.json"), "{}").unwrap();
        std::fs::write(dir.path().join("secret.sqlite"), "x").unwrap();
        assert!(locate(&root, "traces/a.json").is_ok());
        for bad in [
            "../secret.sqlite",
            "/etc/passwd",
            "",
            "a\0b",
            "traces/../../secret.sqlite",
        ] {
            assert!(locate(&root, bad).is_err(), "{bad}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.sqlite"), root.join("link"))
                .unwrap();
            let err = locate(&root, "link").unwrap_err();
            assert_eq!(
                devlens_core::Classify::kind(&err),
                devlens_core::ErrorKind::NotFound
            );
        }
    }

    #[test]
    fn media_types_follow_the_extension() {
        assert_eq!(mime_type("shot.PNG"), "image/png");
        assert_eq!(mime_type("trace.json"), "application/json");
        assert_eq!(mime_type("heap.heapsnapshot"), "application/json");
        assert!(is_text(mime_type("notes.md")));
        assert!(!is_text(mime_type("shot.png")));
    }
}
