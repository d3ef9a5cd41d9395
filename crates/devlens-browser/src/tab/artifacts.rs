//! Files a tab writes — screenshots, response bodies, traces, heap snapshots — all through
//! devlens-workspace's one atomic writer ([`AtomicFile`]): a fresh temporary file in the
//! destination's folder, renamed over the destination at the end. A symlink swapped in at the
//! path after the caller checked it is replaced, never followed; on a handle confined with
//! [`Tab::writing_in`], a folder that left the allowed places by then (swapped for a symlink,
//! moved) makes the write fail with nothing written there.

use std::io::{Seek as _, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use devlens_workspace::write::{AtomicFile, write_confined};
use devlens_workspace::{Places, WorkspaceError};
use tokio::io::AsyncWriteExt as _;

use crate::error::{BrowserError, Result};
use crate::tab::targets::Tab;

impl Tab {
    /// This tab, writing files only inside `places`: every file a call on the returned handle
    /// saves is checked, as it is written, to still be inside them. What a server hands its
    /// tools; a handle without it writes where the caller says (the CLI's own `--out`).
    pub fn writing_in(mut self, places: &Places) -> Self {
        self.writes = Some(Arc::new(places.clone()));
        self
    }

    /// Writes `bytes` to `path` whole or not at all; gives the bytes back.
    pub(crate) async fn save_file(&self, path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>> {
        let places = self.writes.clone();
        let target = path.to_path_buf();
        tokio::task::spawn_blocking(move || {
            write_confined(&target, places.as_deref(), &bytes).map(|()| bytes)
        })
        .await
        .map_err(|e| write_failed(path, e.to_string()))?
        .map_err(|e| from_workspace(path, e))
    }

    /// A file that is written piece by piece (a trace, a heap snapshot): into `path` when given,
    /// else into an anonymous temporary file that is only read back.
    pub(crate) async fn stream_file(&self, path: Option<&Path>) -> Result<StreamedFile> {
        let shown = path.map_or_else(|| "a temporary file".into(), |p| p.display().to_string());
        let fail = |e: std::io::Error| BrowserError::WriteFailed {
            path: shown.clone(),
            reason: e.to_string(),
        };
        let (saved, file) = match path {
            Some(path) => {
                let places = self.writes.clone();
                let target = path.to_path_buf();
                let atomic = tokio::task::spawn_blocking(move || {
                    AtomicFile::create(&target, places.as_deref())
                })
                .await
                .map_err(|e| write_failed(path, e.to_string()))?
                .map_err(|e| from_workspace(path, e))?;
                let handle = atomic.file().try_clone().map_err(fail)?;
                (Some(atomic), handle)
            }
            None => (None, tempfile::tempfile().map_err(fail)?),
        };
        let out = tokio::fs::File::from_std(file.try_clone().map_err(fail)?);
        Ok(StreamedFile {
            out,
            saved,
            file,
            shown,
        })
    }
}

/// A file being streamed by [`Tab::stream_file`].
pub(crate) struct StreamedFile {
    out: tokio::fs::File,
    /// The destination being written; `None` for a temporary file.
    saved: Option<AtomicFile>,
    /// The file itself, for reading it back.
    file: std::fs::File,
    shown: String,
}

impl StreamedFile {
    pub(crate) async fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .await
            .map_err(|e| BrowserError::WriteFailed {
                path: self.shown.clone(),
                reason: e.to_string(),
            })
    }

    /// Finishes the file (the destination takes its place when one was given) and returns it,
    /// positioned at its start, for reading it back — never reopened by its path, which may
    /// have changed meanwhile.
    pub(crate) async fn finish(mut self) -> Result<std::fs::File> {
        let shown = self.shown.clone();
        let fail = |e: std::io::Error| BrowserError::WriteFailed {
            path: shown.clone(),
            reason: e.to_string(),
        };
        self.out.flush().await.map_err(fail)?;
        drop(self.out);
        if let Some(atomic) = self.saved.take() {
            let path = std::path::PathBuf::from(&self.shown);
            tokio::task::spawn_blocking(move || atomic.commit())
                .await
                .map_err(|e| write_failed(&path, e.to_string()))?
                .map_err(|e| from_workspace(&path, e))?;
        }
        self.file.seek(SeekFrom::Start(0)).map_err(fail)?;
        Ok(self.file)
    }
}

fn write_failed(path: &Path, reason: String) -> BrowserError {
    BrowserError::WriteFailed {
        path: path.display().to_string(),
        reason,
    }
}

/// A refusal (the path left the allowed places) is the caller's to fix and says how; anything
/// else is a failed write.
fn from_workspace(path: &Path, e: WorkspaceError) -> BrowserError {
    match e {
        WorkspaceError::Refused { message } => BrowserError::InvalidInput(message),
        WorkspaceError::Io { reason, .. } => write_failed(path, reason),
        other => write_failed(path, other.to_string()),
    }
}
