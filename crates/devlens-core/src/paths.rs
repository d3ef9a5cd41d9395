//! Where devlens keeps what it stores. Everything lives under one data directory so a user can
//! back it up, move it, or delete it in one go.

use std::path::{Path, PathBuf};

use crate::CoreError;

/// The data directory: `--data-dir`, else `DEVLENS_DATA_DIR`, else the platform's data directory
/// (`$XDG_DATA_HOME/devlens` or `~/.local/share/devlens` on Linux).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// Resolves the directory without creating it.
    pub fn resolve(explicit: Option<&Path>) -> Result<Self, CoreError> {
        if let Some(path) = explicit {
            return Ok(Self::at(path));
        }
        if let Some(path) = std::env::var_os("DEVLENS_DATA_DIR").filter(|v| !v.is_empty()) {
            return Ok(Self::at(Path::new(&path)));
        }
        dirs::data_dir()
            .map(|dir| Self::at(&dir.join("devlens")))
            .ok_or(CoreError::NoDataDir)
    }

    pub fn at(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The projects file devlens manages (`projects.json`).
    pub fn projects_file(&self) -> PathBuf {
        self.root.join("projects.json")
    }

    /// The configuration file that lives with the data (`devlens.toml`).
    pub fn config_file(&self) -> PathBuf {
        self.root.join("devlens.toml")
    }

    /// Small mutable state, such as the active project.
    pub fn state_file(&self) -> PathBuf {
        self.root.join("state.json")
    }

    /// A sub-directory for one kind of stored data (`indexes`, `models`, …).
    pub fn subdir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Creates the directory (and parents) if needed, readable by its owner only: it holds
    /// tokens, pairing secrets and everything saved.
    pub fn ensure(&self) -> Result<(), CoreError> {
        let write_err = |source| CoreError::Write {
            path: self.root.clone(),
            source,
        };
        if let Some(parent) = self.root.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(write_err)?;
        }
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&self.root) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && self.root.is_dir() => {
                owner_only_dir(&self.root);
                Ok(())
            }
            Err(e) => Err(write_err(e)),
        }
    }
}

/// Narrows a folder devlens owns to its owner (a data dir made by an older devlens, or by hand,
/// may be readable by every user of the machine). Best effort: a folder of another user is left
/// as it is.
fn owner_only_dir(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(dir)
            && meta.permissions().mode() & 0o077 != 0
        {
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, flushed to the disk, then a
/// rename, so a reader never sees half a file and a crash — of the process or of the machine —
/// leaves the old one or the new one whole.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CoreError> {
    replace_file(path, bytes, Visibility::Default)
}

/// [`write_atomic`] for a file that holds a secret (tokens, pairing secrets, trust records): it
/// is created readable by its owner only — from its first byte, not narrowed after.
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<(), CoreError> {
    replace_file(path, bytes, Visibility::OwnerOnly)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visibility {
    Default,
    OwnerOnly,
}

fn replace_file(path: &Path, bytes: &[u8], visibility: Visibility) -> Result<(), CoreError> {
    let write_err = |source| CoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(write_err)?;
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Unique per process and write: two writers of one file never share a temporary file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{file_name}.tmp-{}-{n}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    write_new_synced(&tmp, bytes, visibility).map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        write_err(source)
    })?;
    std::fs::rename(&tmp, path).map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        write_err(source)
    })?;
    if let Some(parent) = path.parent() {
        sync_dir(parent);
    }
    Ok(())
}

/// Writes `bytes` to `path` and flushes them to the disk before returning: a rename that
/// follows then never leaves an empty or half-written file behind a power loss.
pub fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Creates `path` (it must not exist: a link planted there is not followed), writes `bytes` and
/// flushes them.
fn write_new_synced(path: &Path, bytes: &[u8], visibility: Visibility) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if visibility == Visibility::OwnerOnly {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    #[cfg(not(unix))]
    let _ = visibility;
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Flushes a folder's entries (a rename just made in it) to the disk. Best effort: where a
/// folder cannot be opened as a file, the rename is as durable as the system makes it.
pub fn sync_dir(dir: &Path) {
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_dir_wins_and_subpaths_live_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::resolve(Some(dir.path())).unwrap();
        assert_eq!(data.root(), dir.path());
        assert!(data.projects_file().starts_with(dir.path()));
        assert!(data.subdir("indexes").starts_with(dir.path()));
    }

    #[test]
    fn atomic_write_replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/state.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let entries = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(entries, 1);
    }

    #[cfg(unix)]
    #[test]
    fn secrets_and_the_data_dir_are_the_owners_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::at(&dir.path().join("devlens"));
        data.ensure().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(data.root()), 0o700);
        let secret = data.root().join("tokens.json");
        write_atomic_private(&secret, b"{}").unwrap();
        assert_eq!(mode(&secret), 0o600);
        write_atomic_private(&secret, b"{\"a\":1}").unwrap();
        assert_eq!(mode(&secret), 0o600);
        // A data dir made open by someone else is narrowed.
        std::fs::set_permissions(data.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
        data.ensure().unwrap();
        assert_eq!(mode(data.root()), 0o700);
    }
}
