//! Confinement: where a path a tool names may lead.
//!
//! Every path argument of every tool — a file to read or edit, a screenshot or a response body
//! to save, a trace to write — goes through [`Places::resolve`]. A page the agent reads can try
//! to talk it into writing an attacker's bytes anywhere (a shell start-up file, an SSH key), so a
//! path is accepted only when, with every symlink followed, it lies inside one of the allowed
//! places: the workspace, or the `artifacts/` folder of devlens' data directory — never the rest
//! of the data directory, whose databases, configuration and ONNX Runtime library a write
//! could corrupt or replace. How:
//!
//! - the longest part of the path that exists is canonicalised (symlinks and `..` resolved by
//!   the file system itself), and what follows must be plain names — no `..` past a folder that
//!   does not exist, where it could not be checked;
//! - the result must start with a canonical place; a symlink inside the workspace that points
//!   out is followed and refused like the path it points to;
//! - writes never go into a `.git` folder (its hooks run code), nor into a file named
//!   `devlens.toml` (devlens' own settings: a tool must not change what devlens trusts or runs),
//!   nor into a read-only workspace;
//! - NUL bytes, backslashes (a Windows-style `..\\..\\` would be one odd name here, and is
//!   almost always an escape attempt) and paths over 4,096 bytes are refused before any of it.
//!
//! A file is written through a temporary file beside it and a rename, which replaces a symlink
//! itself rather than following it: a link swapped in after the check cannot redirect the write.

use std::path::{Component, Path, PathBuf};

use crate::WorkspaceError;

/// The folder of the data directory that tools may write to (screenshots, saved bodies, traces).
pub const ARTIFACTS_DIR: &str = "artifacts";

/// The longest path accepted, in bytes (Linux's PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4096;

/// What a path is resolved for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reading an existing file or folder.
    Read,
    /// Creating or replacing a file.
    Write,
}

/// One allowed place.
#[derive(Debug, Clone)]
struct Place {
    /// What the place is called in messages ("the workspace").
    name: &'static str,
    /// Canonical.
    root: PathBuf,
    writable: bool,
}

/// The places paths may lead to; relative paths are relative to the first (the workspace).
#[derive(Debug, Clone)]
pub struct Places {
    places: Vec<Place>,
    /// Set when there is no project folder, only the artifacts folder (which then stands first,
    /// for relative paths): why there is none.
    no_workspace: Option<String>,
}

/// A path that passed confinement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Absolute, canonical up to its last existing folder.
    pub path: PathBuf,
    /// As shown to users: relative to the place it is in.
    pub display: String,
}

impl Places {
    /// The workspace at `workspace` (it must exist) and the artifacts folder of the data dir at
    /// `data_dir` (`<data_dir>/artifacts`, created if missing). `read_only` keeps tools from
    /// writing in the workspace; the artifacts folder stays writable, so screenshots can still
    /// be saved.
    ///
    /// A workspace that would hand tools the whole disk or devlens' own data is refused: the
    /// file system's root, the user's home folder itself, a folder that holds the data dir, or
    /// one inside it.
    pub fn new(workspace: &Path, data_dir: &Path, read_only: bool) -> Result<Self, WorkspaceError> {
        let root = std::fs::canonicalize(workspace).map_err(|e| {
            WorkspaceError::InvalidInput(format!(
                "the workspace {} cannot be used ({e}): pass an existing folder with --workspace \
                 DIR",
                workspace.display()
            ))
        })?;
        if !root.is_dir() {
            return Err(WorkspaceError::InvalidInput(format!(
                "the workspace {} is not a folder: pass one with --workspace DIR",
                workspace.display()
            )));
        }
        let artifacts = data_dir.join(ARTIFACTS_DIR);
        std::fs::create_dir_all(&artifacts)
            .map_err(|e| WorkspaceError::io("create", &artifacts.display().to_string(), &e))?;
        let data = std::fs::canonicalize(&artifacts)
            .map_err(|e| WorkspaceError::io("open", &artifacts.display().to_string(), &e))?;
        if let Some(why) = unfit_workspace(&root, data.parent().unwrap_or(&data)) {
            return Err(WorkspaceError::InvalidInput(format!(
                "{} cannot be the workspace: {why}. Pass the project's own folder with \
                --workspace DIR (or `[workspace] root` in your devlens.toml)",
                workspace.display()
            )));
        }
        Ok(Self {
            places: vec![
                Place {
                    name: "the workspace",
                    root,
                    writable: !read_only,
                },
                Place {
                    name: "devlens' artifacts folder",
                    root: data,
                    writable: true,
                },
            ],
            no_workspace: None,
        })
    }

    /// No project folder, only the artifacts folder of the data dir at `data_dir` (screenshots,
    /// traces and saved bodies still have a place); `why` says why there is no workspace, in
    /// every refusal.
    pub fn artifacts_only(data_dir: &Path, why: String) -> Result<Self, WorkspaceError> {
        let artifacts = data_dir.join(ARTIFACTS_DIR);
        std::fs::create_dir_all(&artifacts)
            .map_err(|e| WorkspaceError::io("create", &artifacts.display().to_string(), &e))?;
        let root = std::fs::canonicalize(&artifacts)
            .map_err(|e| WorkspaceError::io("open", &artifacts.display().to_string(), &e))?;
        let place = Place {
            name: "devlens' artifacts folder",
            root,
            writable: true,
        };
        Ok(Self {
            places: vec![place.clone(), place],
            no_workspace: Some(why),
        })
    }

    /// Why there is no project folder, when there is none (only the artifacts folder).
    pub fn missing_workspace(&self) -> Option<&str> {
        self.no_workspace.as_deref()
    }

    /// The workspace's canonical root.
    pub fn workspace(&self) -> &Path {
        &self.places[0].root
    }

    /// The artifacts folder's canonical root (`<data dir>/artifacts`).
    pub fn artifacts(&self) -> &Path {
        &self.places[1].root
    }

    /// Whether tools may write in the workspace.
    pub fn workspace_writable(&self) -> bool {
        self.places[0].writable
    }

    /// Where files may go, for messages.
    pub fn where_files_may_go(&self) -> String {
        if let Some(why) = &self.no_workspace {
            return format!(
                "There is no workspace ({why}); files may be written only in devlens' artifacts \
                 folder ({}).",
                self.artifacts().display()
            );
        }
        let writable: Vec<String> = self
            .places
            .iter()
            .filter(|p| p.writable)
            .map(|p| format!("{} ({})", p.name, p.root.display()))
            .collect();
        format!(
            "Files may be read in the workspace ({}) and written in {}; give a path relative to \
             the workspace, or an absolute one inside these.",
            self.workspace().display(),
            writable.join(" or ")
        )
    }

    /// Resolves `input` for `access`, or says why it may not be used and where files may go.
    pub fn resolve(&self, input: &str, access: Access) -> Result<Resolved, WorkspaceError> {
        let refuse = |why: &str| {
            WorkspaceError::refused(format!(
                "the path `{}` was refused: {why}. {}",
                shown(input),
                self.where_files_may_go()
            ))
        };
        if input.trim().is_empty() {
            return Err(refuse("it is empty"));
        }
        if input.contains('\0') {
            return Err(refuse("it holds a NUL byte"));
        }
        if input.len() > MAX_PATH_BYTES {
            return Err(refuse(&format!("it is longer than {MAX_PATH_BYTES} bytes")));
        }
        if input.contains('\\') {
            return Err(refuse("it holds a backslash; separate folders with `/`"));
        }
        let given = Path::new(input);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.workspace().join(given)
        };
        let path = canonical_as_far_as_it_exists(&joined).map_err(|why| refuse(&why))?;
        let Some(place) = self.places.iter().find(|p| path.starts_with(&p.root)) else {
            return Err(refuse(
                "it leads outside the workspace and devlens' artifacts folder",
            ));
        };
        if access == Access::Write {
            if !place.writable {
                return Err(WorkspaceError::ReadOnly { path: shown(input) });
            }
            let inside = path.strip_prefix(&place.root).unwrap_or(&path);
            if inside.components().any(|c| c.as_os_str() == ".git") {
                return Err(refuse(
                    "files inside `.git/` are not written (its hooks run code)",
                ));
            }
            if path.file_name().is_some_and(|n| n == CONFIG_FILE_NAME) {
                return Err(refuse(
                    "devlens.toml is devlens' own configuration, which tools do not write; \
                    edit it yourself (and run `devlens trust` after reviewing it)",
                ));
            }
            if path == place.root {
                return Err(refuse("it is a folder, not a file"));
            }
        }
        let display = match path.strip_prefix(self.workspace()) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        };
        Ok(Resolved { path, display })
    }
}

/// devlens' configuration file, which tools never write.
const CONFIG_FILE_NAME: &str = "devlens.toml";

/// Why the canonical folder `root` may not be a workspace, when it may not; `data_dir` is
/// devlens' canonical data directory.
fn unfit_workspace(root: &Path, data_dir: &Path) -> Option<String> {
    if root.parent().is_none() {
        return Some(
            "it is the root of the file system, which would open every file to tools".into(),
        );
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| std::fs::canonicalize(h).ok());
    if home.as_deref() == Some(root) {
        return Some(
            "it is your home folder, which would open your keys, tokens and shell start-up files \
            to tools"
                .into(),
        );
    }
    if data_dir.starts_with(root) {
        return Some(format!(
            "it holds devlens' data directory ({}), whose tokens, settings and databases tools \
            must not reach",
            data_dir.display()
        ));
    }
    if root.starts_with(data_dir) {
        return Some(format!(
            "it is inside devlens' data directory ({})",
            data_dir.display()
        ));
    }
    None
}

/// `input` for a message: bounded, with control characters shown escaped.
fn shown(input: &str) -> String {
    let mut s: String = input
        .chars()
        .take(200)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if input.chars().count() > 200 {
        s.push('…');
    }
    s
}

/// Symlinks followed in one resolution, at most (as the kernel's limit).
const MAX_LINK_HOPS: usize = 40;

/// `path` with its longest existing ancestor canonicalised and the rest appended; the rest must
/// be plain names. A dangling symlink on the way is followed by hand (canonicalisation cannot),
/// so a link to a file or folder that does not exist yet cannot carry a write outside.
fn canonical_as_far_as_it_exists(path: &Path) -> Result<PathBuf, String> {
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_LINK_HOPS {
        let mut existing = current.as_path();
        let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
        let followed = loop {
            if let Ok(canonical) = std::fs::canonicalize(existing) {
                let mut out = canonical;
                for name in rest.iter().rev() {
                    out.push(name);
                }
                return Ok(out);
            }
            let is_link = std::fs::symlink_metadata(existing).is_ok_and(|m| m.is_symlink());
            if is_link {
                let target = std::fs::read_link(existing)
                    .map_err(|e| format!("a symlink on it cannot be read ({e})"))?;
                let mut next = match existing.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
                for name in rest.iter().rev() {
                    next.push(name);
                }
                break next;
            }
            let Some(parent) = existing.parent() else {
                return Err("none of it exists".into());
            };
            match existing.components().next_back() {
                Some(Component::Normal(name)) => rest.push(name),
                Some(Component::CurDir) => {}
                Some(Component::ParentDir) => {
                    return Err(
                        "it goes up (`..`) from a folder that does not exist, which cannot be \
                         checked"
                            .into(),
                    );
                }
                _ => return Err("it is not a file path".into()),
            }
            existing = parent;
        };
        current = followed;
    }
    Err("it goes through too many symlinks".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(read_only: bool) -> (tempfile::TempDir, Places) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/src")).unwrap();
        std::fs::write(dir.path().join("ws/src/app.js"), "x").unwrap();
        let places =
            Places::new(&dir.path().join("ws"), &dir.path().join("data"), read_only).unwrap();
        (dir, places)
    }

    #[test]
    fn paths_inside_resolve_relative_to_the_workspace() {
        let (_dir, places) = places(false);
        let read = places.resolve("src/app.js", Access::Read).unwrap();
        assert_eq!(read.display, "src/app.js");
        assert!(read.path.starts_with(places.workspace()));
        let new = places
            .resolve("src/new/deep/file.ts", Access::Write)
            .unwrap();
        assert_eq!(new.display, "src/new/deep/file.ts");
        let back = places.resolve("src/../src/app.js", Access::Read).unwrap();
        assert_eq!(back.display, "src/app.js");
        let data = places
            .resolve(
                &places.artifacts().join("shot.png").display().to_string(),
                Access::Write,
            )
            .unwrap();
        assert!(data.path.starts_with(places.artifacts()));
    }

    #[test]
    fn the_rest_of_the_data_dir_is_out_of_reach() {
        let (dir, places) = places(false);
        for inside_data in [
            "kb.sqlite",
            "onnxruntime/libonnxruntime.so",
            "projects.json",
        ] {
            let path = dir
                .path()
                .join("data")
                .join(inside_data)
                .display()
                .to_string();
            let err = places
                .resolve(&path, Access::Write)
                .unwrap_err()
                .to_string();
            assert!(err.contains("was refused"), "{path}: {err}");
            assert!(places.resolve(&path, Access::Read).is_err(), "{path}");
        }
        let err = places
            .resolve("../data/kb.sqlite", Access::Write)
            .unwrap_err()
            .to_string();
        assert!(err.contains("artifacts"), "{err}");
    }

    #[test]
    fn escapes_and_malformed_paths_are_refused_with_where_files_may_go() {
        let (dir, places) = places(false);
        std::os::unix::fs::symlink("/etc", places.workspace().join("etc-link")).unwrap();
        std::os::unix::fs::symlink(dir.path(), places.workspace().join("parent-link")).unwrap();
        for bad in [
            "../outside.txt",
            "src/../../outside.txt",
            "/etc/passwd",
            "/tmp/x",
            "etc-link/passwd",
            "parent-link/outside.txt",
            "nope/../../outside.txt",
            "a\0b",
            "..\\..\\etc\\passwd",
            "",
            &"a/".repeat(3000),
        ] {
            let err = places.resolve(bad, Access::Write).unwrap_err().to_string();
            assert!(err.contains("was refused"), "{bad}: {err}");
            assert!(err.contains("Files may be read in the workspace"), "{err}");
        }
        assert!(places.resolve("../outside.txt", Access::Read).is_err());
    }

    #[test]
    fn git_folders_are_not_written_and_a_read_only_workspace_only_allows_the_artifacts_folder() {
        let (_dir, places) = places(false);
        std::fs::create_dir_all(places.workspace().join(".git/hooks")).unwrap();
        let err = places
            .resolve(".git/hooks/pre-commit", Access::Write)
            .unwrap_err()
            .to_string();
        assert!(err.contains(".git/"), "{err}");
        assert!(places.resolve(".git/HEAD", Access::Read).is_ok());

        let (_dir, read_only) = super::tests::places(true);
        let err = read_only
            .resolve("src/app.js", Access::Write)
            .unwrap_err()
            .to_string();
        assert!(err.contains("read-only"), "{err}");
        let shot = read_only.artifacts().join("s.png").display().to_string();
        assert!(read_only.resolve(&shot, Access::Write).is_ok());
    }

    #[test]
    fn devlens_toml_is_never_written_by_a_tool() {
        let (_dir, places) = places(false);
        for path in ["devlens.toml", "sub/devlens.toml"] {
            let err = places.resolve(path, Access::Write).unwrap_err().to_string();
            assert!(err.contains("devlens trust"), "{path}: {err}");
        }
        assert!(places.resolve("devlens.toml.bak", Access::Write).is_ok());
    }

    #[test]
    fn a_workspace_that_opens_the_disk_or_the_data_dir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("docs")).unwrap();
        for (root, says) in [
            (Path::new("/").to_path_buf(), "root of the file system"),
            (dir.path().to_path_buf(), "data directory"),
            (data.clone(), "data directory"),
            (data.join("docs"), "inside devlens' data directory"),
        ] {
            let err = Places::new(&root, &data, false).unwrap_err().to_string();
            assert!(err.contains(says), "{}: {err}", root.display());
            assert!(err.contains("--workspace DIR"), "{err}");
        }
        if let Some(home) = std::env::var_os("HOME").filter(|h| Path::new(h).is_dir()) {
            let err = Places::new(Path::new(&home), &data, false)
                .unwrap_err()
                .to_string();
            assert!(err.contains("home folder"), "{err}");
        }
    }
}
