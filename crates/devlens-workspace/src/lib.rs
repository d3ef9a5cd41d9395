//! The workspace: the project folder an agent works in, and the one gate every path a devlens
//! tool touches goes through.
//!
//! - [`confine`]: a path is resolved inside the workspace or devlens' data directory, with
//!   symlinks followed and `..` resolved, or refused with a message saying where files may go;
//!   `.git/` is never written; a read-only workspace is never written.
//! - [`read`], [`list`], [`search`]: text files by line range (binary files refused with what
//!   they are), files listed with `.gitignore` semantics, contents searched with ripgrep's
//!   searcher — all bounded.
//! - [`write`]: files written atomically, edits by exact replacement (refusing zero or several
//!   matches) or by unified diff, each answered with the diff. A file changed on disk after
//!   devlens read it is not overwritten by an edit based on the old content.
//!
//! [`Workspace`] is the façade; it is synchronous (file work is short and bounded), so async
//! callers run it on a blocking thread.

pub mod confine;
mod error;
pub mod list;
mod locate;
pub mod read;
pub mod search;
pub mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

pub use confine::{ARTIFACTS_DIR, Access, Places, Resolved};
pub use error::WorkspaceError;
pub use list::FileList;
pub use read::FileContent;
pub use search::{SearchMatches, SearchQuery};
pub use write::{Edit, FileChange};

/// The version of some content: a short hash, enough to tell edits apart.
pub fn content_version(bytes: &[u8]) -> String {
    let mut hasher = VersionHasher::default();
    hasher.update(bytes);
    hasher.finish()
}

/// [`content_version`] over content read in pieces.
#[derive(Default)]
pub(crate) struct VersionHasher(Sha256);

impl VersionHasher {
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub(crate) fn finish(self) -> String {
        hex::encode(&self.0.finalize()[..8])
    }
}

/// The workspace: its places, what devlens last read or wrote of each file, and one lock per
/// file being written.
#[derive(Debug)]
pub struct Workspace {
    places: Places,
    /// Path → the version devlens last read or wrote: an edit of a file that changed since is
    /// refused.
    known: Mutex<HashMap<PathBuf, String>>,
    /// Path → its writer lock: two edits of one file run one after the other, so neither is
    /// lost.
    writing: Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>,
}

impl Workspace {
    /// The workspace at `root`, with devlens' data directory at `data_dir` as the other place
    /// files may be written (screenshots, saved bodies, traces).
    pub fn open(root: &Path, data_dir: &Path, read_only: bool) -> Result<Self, WorkspaceError> {
        Ok(Self {
            places: Places::new(root, data_dir, read_only)?,
            known: Mutex::new(HashMap::new()),
            writing: Mutex::new(HashMap::new()),
        })
    }

    /// No project folder: tools may only write screenshots, traces and saved bodies into the
    /// artifacts folder of the data dir at `data_dir`; file tools answer `why`.
    pub fn artifacts_only(data_dir: &Path, why: String) -> Result<Self, WorkspaceError> {
        Ok(Self {
            places: Places::artifacts_only(data_dir, why)?,
            known: Mutex::new(HashMap::new()),
            writing: Mutex::new(HashMap::new()),
        })
    }

    /// Why there is no project folder (only the artifacts folder), when there is none.
    pub fn missing_project(&self) -> Option<&str> {
        self.places.missing_workspace()
    }

    /// Where paths may lead.
    pub fn places(&self) -> &Places {
        &self.places
    }

    /// The workspace's root folder (canonical).
    pub fn root(&self) -> &Path {
        self.places.workspace()
    }

    pub fn is_read_only(&self) -> bool {
        !self.places.workspace_writable()
    }

    /// Resolves a path any tool was given, for `access`.
    pub fn resolve(&self, path: &str, access: Access) -> Result<Resolved, WorkspaceError> {
        self.places.resolve(path, access)
    }

    fn remember(&self, path: &Path, version: &str) {
        self.known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.to_path_buf(), version.to_string());
    }

    fn known_version(&self, path: &Path) -> Option<String> {
        self.known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(path)
            .cloned()
    }

    fn writer_lock(&self, path: &Path) -> Arc<Mutex<()>> {
        let mut locks = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(locks.entry(path.to_path_buf()).or_default())
    }

    /// Lines `start_line..` (1-based, default 1) of a text file, at most `limit` (default
    /// [`read::DEFAULT_LINES`]).
    pub fn read_file(
        &self,
        path: &str,
        start_line: Option<usize>,
        limit: Option<usize>,
    ) -> Result<FileContent, WorkspaceError> {
        let resolved = self.resolve(path, Access::Read)?;
        if !resolved.path.exists() {
            return Err(WorkspaceError::NotFound {
                path: resolved.display,
                hint: "Check the name with list_files (or search_files for what it holds).".into(),
            });
        }
        let content = read::read_lines(
            &resolved.path,
            &resolved.display,
            start_line.unwrap_or(1),
            limit.unwrap_or(read::DEFAULT_LINES),
        )?;
        self.remember(&resolved.path, &content.version);
        Ok(content)
    }

    /// The files under `dir` (default: the whole workspace) matching `globs`, paged.
    pub fn list_files(
        &self,
        dir: Option<&str>,
        globs: &[String],
        offset: Option<usize>,
        limit: Option<usize>,
    ) -> Result<FileList, WorkspaceError> {
        let start = self.folder(dir)?;
        list::list(
            self.root(),
            &start,
            globs,
            offset.unwrap_or(0),
            limit.unwrap_or(list::DEFAULT_LIST),
        )
    }

    /// Lines matching `query` in the files under `dir` (default: the whole workspace).
    pub fn search_files(
        &self,
        dir: Option<&str>,
        query: &SearchQuery,
    ) -> Result<SearchMatches, WorkspaceError> {
        let start = self.folder(dir)?;
        search::search(self.root(), &start, query)
    }

    fn folder(&self, dir: Option<&str>) -> Result<PathBuf, WorkspaceError> {
        let Some(dir) = dir.filter(|d| !d.trim().is_empty()) else {
            return Ok(self.root().to_path_buf());
        };
        let resolved = self.resolve(dir, Access::Read)?;
        if !resolved.path.starts_with(self.root()) {
            return Err(WorkspaceError::InvalidInput(format!(
                "{} is outside the workspace: list and search look inside it only",
                resolved.display
            )));
        }
        if !resolved.path.is_dir() {
            return Err(WorkspaceError::NotFound {
                path: resolved.display,
                hint: "Give a folder of the workspace, or leave it out to search all of it.".into(),
            });
        }
        Ok(resolved.path)
    }

    /// Creates or replaces a file with `content` (missing folders are created, inside the
    /// allowed places only).
    pub fn write_file(&self, path: &str, content: &str) -> Result<FileChange, WorkspaceError> {
        let resolved = self.resolve(path, Access::Write)?;
        if content.len() > write::MAX_WRITE_BYTES {
            return Err(WorkspaceError::InvalidInput(format!(
                "the content is {} bytes; devlens writes at most {} bytes per file",
                content.len(),
                write::MAX_WRITE_BYTES
            )));
        }
        if resolved.path.is_dir() {
            return Err(WorkspaceError::InvalidInput(format!(
                "{} is a folder: name a file in it",
                resolved.display
            )));
        }
        let lock = self.writer_lock(&resolved.path);
        let _writing = lock.lock().unwrap_or_else(|p| p.into_inner());
        let before = match std::fs::read(&resolved.path) {
            Ok(bytes) => {
                self.check_unchanged(&resolved, &bytes)?;
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(WorkspaceError::io("read", &resolved.display, &e)),
        };
        if let Some(parent) = resolved.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| WorkspaceError::io("create the folder of", &resolved.display, &e))?;
        }
        write::write_atomic(&resolved.path, &resolved.display, content.as_bytes())?;
        let version = content_version(content.as_bytes());
        self.remember(&resolved.path, &version);
        let (diff, lines_added, lines_removed) =
            write::diff(&resolved.display, before.as_deref().unwrap_or(""), content);
        Ok(FileChange {
            path: resolved.display,
            created: before.is_none(),
            bytes: content.len(),
            lines_added,
            lines_removed,
            replacements: None,
            diff,
            version,
        })
    }

    /// Edits a text file. `expected_version` (from read_file) makes sure the file is the one
    /// the edit was made for; without it, a file devlens read before must not have changed
    /// since.
    pub fn edit_file(
        &self,
        path: &str,
        edit: &Edit,
        expected_version: Option<&str>,
    ) -> Result<FileChange, WorkspaceError> {
        let resolved = self.resolve(path, Access::Write)?;
        let lock = self.writer_lock(&resolved.path);
        let _writing = lock.lock().unwrap_or_else(|p| p.into_inner());
        let (before, version) = read::read_whole(&resolved.path, &resolved.display)?;
        let expected = expected_version
            .map(str::to_string)
            .or_else(|| self.known_version(&resolved.path));
        if expected.is_some_and(|v| v != version) {
            return Err(WorkspaceError::Changed {
                path: resolved.display,
            });
        }
        let (after, replacements) = write::apply(&before, edit, &resolved.display)?;
        if after.len() > write::MAX_WRITE_BYTES {
            return Err(WorkspaceError::InvalidInput(format!(
                "the edited file would be {} bytes; devlens writes at most {} bytes per file",
                after.len(),
                write::MAX_WRITE_BYTES
            )));
        }
        write::write_atomic(&resolved.path, &resolved.display, after.as_bytes())?;
        let new_version = content_version(after.as_bytes());
        self.remember(&resolved.path, &new_version);
        let (diff, lines_added, lines_removed) = write::diff(&resolved.display, &before, &after);
        Ok(FileChange {
            path: resolved.display,
            created: false,
            bytes: after.len(),
            lines_added,
            lines_removed,
            replacements,
            diff,
            version: new_version,
        })
    }

    /// A file devlens read or wrote before must still hold what it did then.
    fn check_unchanged(&self, resolved: &Resolved, bytes: &[u8]) -> Result<(), WorkspaceError> {
        match self.known_version(&resolved.path) {
            Some(known) if known != content_version(bytes) => Err(WorkspaceError::Changed {
                path: resolved.display.clone(),
            }),
            _ => Ok(()),
        }
    }
}
