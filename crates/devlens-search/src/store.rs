//! The embedded store: named vector indexes as files under the data directory.
//!
//! Each index lives in `<root>/<name>/` as versions (`v-…/` holding `meta.json`, `items.json`
//! and `vectors.f32`) and a `CURRENT` file naming the live version. A save writes a complete new
//! version beside the old one and then replaces `CURRENT` atomically (write + rename), so readers
//! always see a whole index — the old one until the switch, the new one after — and a crash
//! mid-save leaves the old index in place. Superseded versions are removed after the switch.

use std::{
    io,
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use serde::{Serialize, de::DeserializeOwned};

use crate::VectorIndex;
use crate::crash::{self, crash_point};

const CURRENT: &str = "CURRENT";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("{path} is damaged ({reason}); rebuild the index")]
    Corrupt { path: PathBuf, reason: String },
    #[error("invalid index name '{0}'")]
    InvalidName(String),
    #[error("the index database failed: {0}")]
    Database(String),
}

/// A loaded index: its metadata, one item per vector, and the vectors.
#[derive(Debug, Clone)]
pub struct StoredIndex<M, I> {
    pub meta: M,
    pub items: Vec<I>,
    pub vectors: VectorIndex,
}

/// Indexes stored as files under one root directory.
#[derive(Debug, Clone)]
pub struct FileStore {
    root: PathBuf,
}

/// Writes `bytes` to `path` and flushes them to the disk.
fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    io::Write::write_all(&mut file, bytes)?;
    file.sync_all()
}

/// Flushes a folder's entries to the disk (best effort: not every system opens folders).
fn sync_dir(dir: &Path) {
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> StoreError + use<> {
    let path = path.to_path_buf();
    move |source| StoreError::Io {
        action,
        path,
        source,
    }
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(|e| StoreError::Corrupt {
        path: PathBuf::new(),
        reason: format!("cannot serialise: {e}"),
    })
}

impl FileStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    fn dir(&self, name: &str) -> Result<PathBuf, StoreError> {
        let ok = !name.is_empty()
            && name.len() <= 200
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
            && !name.starts_with('.');
        if ok {
            Ok(self.root.join(name))
        } else {
            Err(StoreError::InvalidName(name.to_string()))
        }
    }

    /// Whether an index of this name has a live version.
    pub fn exists(&self, name: &str) -> bool {
        self.dir(name)
            .map(|d| d.join(CURRENT).is_file())
            .unwrap_or(false)
    }

    /// Writes a new version of `name` and makes it the live one.
    pub fn save<M: Serialize, I: Serialize>(
        &self,
        name: &str,
        meta: &M,
        items: &[I],
        vectors: &VectorIndex,
    ) -> Result<(), StoreError> {
        let dir = self.dir(name)?;
        std::fs::create_dir_all(&dir).map_err(io_err("create", &dir))?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let version = format!("v-{nanos}-{}", std::process::id());
        let version_dir = dir.join(&version);
        std::fs::create_dir(&version_dir).map_err(io_err("create", &version_dir))?;

        // Every file reaches the disk before CURRENT names its version: after a power loss
        // CURRENT names a whole version, the old one or the new one.
        let write = |file: &str, bytes: &[u8]| -> Result<(), StoreError> {
            let path = version_dir.join(file);
            write_synced(&path, bytes).map_err(io_err("write", &path))
        };
        write("meta.json", &to_json(meta)?)?;
        write("items.json", &to_json(items)?)?;
        let mut raw = (vectors.dims() as u64).to_le_bytes().to_vec();
        raw.extend(crate::vector::to_le_bytes(vectors.as_flat()));
        write("vectors.f32", &raw)?;
        crash_point(crash::INDEX_VERSION_WRITTEN);

        // The switch: CURRENT is replaced by rename, which is atomic on one file system.
        let tmp = dir.join(format!(".{CURRENT}.{version}"));
        sync_dir(&version_dir);
        write_synced(&tmp, version.as_bytes()).map_err(io_err("write", &tmp))?;
        crash_point(crash::INDEX_CURRENT_PENDING);
        let current = dir.join(CURRENT);
        std::fs::rename(&tmp, &current).map_err(io_err("replace", &current))?;
        sync_dir(&dir);
        crash_point(crash::INDEX_SWITCHED);
        self.remove_old_versions(&dir, &version);
        Ok(())
    }

    /// The live version's label, or `None` when there is none: cheap to read, so a process can
    /// notice that another one (a CLI re-index beside a running server) swapped the index.
    pub fn current_version(&self, name: &str) -> Result<Option<String>, StoreError> {
        let current = self.dir(name)?.join(CURRENT);
        match std::fs::read_to_string(&current) {
            Ok(v) => Ok(Some(v.trim().to_string())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err("read", &current)(e)),
        }
    }

    /// Loads the live version of `name`, or `None` when there is none.
    pub fn load<M: DeserializeOwned, I: DeserializeOwned>(
        &self,
        name: &str,
    ) -> Result<Option<StoredIndex<M, I>>, StoreError> {
        match self.load_once(name) {
            // A save in another process may have removed the version we were reading: the
            // new one is live by then.
            Err(StoreError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                self.load_once(name)
            }
            other => other,
        }
    }

    fn load_once<M: DeserializeOwned, I: DeserializeOwned>(
        &self,
        name: &str,
    ) -> Result<Option<StoredIndex<M, I>>, StoreError> {
        let dir = self.dir(name)?;
        let current = dir.join(CURRENT);
        let version = match std::fs::read_to_string(&current) {
            Ok(v) => v.trim().to_string(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("read", &current)(e)),
        };
        let version_dir = dir.join(&version);
        let read = |file: &str| -> Result<Vec<u8>, StoreError> {
            let path = version_dir.join(file);
            std::fs::read(&path).map_err(io_err("read", &path))
        };
        let corrupt = |file: &str, reason: String| StoreError::Corrupt {
            path: version_dir.join(file),
            reason,
        };
        let meta = serde_json::from_slice(&read("meta.json")?)
            .map_err(|e| corrupt("meta.json", e.to_string()))?;
        let items: Vec<I> = serde_json::from_slice(&read("items.json")?)
            .map_err(|e| corrupt("items.json", e.to_string()))?;
        let raw = read("vectors.f32")?;
        let (header, body) = raw
            .split_first_chunk::<8>()
            .ok_or_else(|| corrupt("vectors.f32", "too short".into()))?;
        let dims = u64::from_le_bytes(*header) as usize;
        let data: Vec<f32> = crate::vector::from_le_bytes(body).collect();
        let vectors = VectorIndex::from_flat(dims, data)
            .filter(|v| v.len() == items.len())
            .ok_or_else(|| corrupt("vectors.f32", "vector count does not match items".into()))?;
        Ok(Some(StoredIndex {
            meta,
            items,
            vectors,
        }))
    }

    /// Deletes every version of `name`.
    pub fn remove(&self, name: &str) -> Result<(), StoreError> {
        let dir = self.dir(name)?;
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err("remove", &dir)(e)),
            _ => Ok(()),
        }
    }

    /// Best effort: an old version still open by a reader elsewhere is removed next time. What
    /// a killed save left (a half-written version, a `CURRENT` replacement never renamed) goes
    /// too, so crashes do not pile up files.
    fn remove_old_versions(&self, dir: &Path, live: &str) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let pending_current = format!(".{CURRENT}.");
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("v-") && name != live {
                let _ = std::fs::remove_dir_all(entry.path());
            } else if name.starts_with(&pending_current) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq)]
    struct Meta {
        model: String,
    }

    fn vectors(rows: &[[f32; 2]]) -> VectorIndex {
        let mut index = VectorIndex::new(2);
        for row in rows {
            index.push(row);
        }
        index
    }

    #[test]
    fn save_then_load_round_trips_and_replaces_the_old_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        assert!(store.load::<Meta, String>("api").unwrap().is_none());
        let meta = Meta { model: "m1".into() };
        store
            .save(
                "api",
                &meta,
                &["a".to_string(), "b".to_string()],
                &vectors(&[[1.0, 0.0], [0.0, 1.0]]),
            )
            .unwrap();
        store
            .save(
                "api",
                &Meta { model: "m2".into() },
                &["c".to_string()],
                &vectors(&[[0.6, 0.8]]),
            )
            .unwrap();
        let loaded = store.load::<Meta, String>("api").unwrap().unwrap();
        assert_eq!(loaded.meta.model, "m2");
        assert_eq!(loaded.items, vec!["c"]);
        assert_eq!(loaded.vectors.get(0).unwrap(), &[0.6, 0.8]);
        let versions = std::fs::read_dir(dir.path().join("api"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("v-")
            })
            .count();
        assert_eq!(versions, 1);
    }

    #[test]
    fn an_interrupted_save_leaves_the_live_index_intact() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        store
            .save(
                "api",
                &Meta { model: "m1".into() },
                &["a".to_string()],
                &vectors(&[[1.0, 0.0]]),
            )
            .unwrap();
        // A crash mid-build leaves a half-written version folder that CURRENT does not name.
        let half = dir.path().join("api/v-999-1");
        std::fs::create_dir(&half).unwrap();
        std::fs::write(half.join("meta.json"), b"{\"model\":").unwrap();
        // …and, killed between writing the new CURRENT and renaming it, a stray replacement.
        std::fs::write(dir.path().join("api/.CURRENT.v-999-1"), b"v-999-1").unwrap();
        let loaded = store.load::<Meta, String>("api").unwrap().unwrap();
        assert_eq!(loaded.meta.model, "m1");
        // The next save clears both.
        store
            .save(
                "api",
                &Meta { model: "m2".into() },
                &["b".to_string()],
                &vectors(&[[0.0, 1.0]]),
            )
            .unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir.path().join("api"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), 2, "{left:?}");
        assert_eq!(left[0], "CURRENT");
        assert!(
            left[1].starts_with("v-") && left[1] != "v-999-1",
            "{left:?}"
        );
    }

    #[test]
    fn damage_is_reported_not_panicked_on() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        store
            .save(
                "api",
                &Meta { model: "m1".into() },
                &["a".to_string()],
                &vectors(&[[1.0, 0.0]]),
            )
            .unwrap();
        let current = std::fs::read_to_string(dir.path().join("api/CURRENT")).unwrap();
        std::fs::write(
            dir.path().join("api").join(current).join("vectors.f32"),
            b"xx",
        )
        .unwrap();
        let err = store.load::<Meta, String>("api").unwrap_err().to_string();
        assert!(err.contains("rebuild"), "{err}");
        assert!(
            store
                .save("../evil", &1, &[1], &VectorIndex::new(1))
                .is_err()
        );
    }
}
