//! The embedded store: one index per name as versioned files (devlens-search's `FileStore`).

use std::sync::Mutex;

use devlens_search::{FileStore, StoreError};

use super::SemanticIndexStore;
use crate::semantic::{IndexMeta, IndexedEndpoint, SemanticIndex};

/// Semantic indexes as files under one folder (the data dir's `indexes/api`): the embedded store.
#[derive(Debug, Clone)]
pub struct FileIndexStore {
    files: FileStore,
}

impl FileIndexStore {
    pub fn new(root: impl Into<std::path::PathBuf>) -> Self {
        Self {
            files: FileStore::new(root),
        }
    }
}

impl SemanticIndexStore for FileIndexStore {
    fn version(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.files.current_version(name)
    }

    fn load(&self, name: &str) -> Result<Option<SemanticIndex>, StoreError> {
        Ok(self
            .files
            .load::<IndexMeta, IndexedEndpoint>(name)?
            .map(|stored| SemanticIndex {
                meta: stored.meta,
                items: stored.items,
                vectors: stored.vectors,
                rows_cache: Mutex::new(None),
            }))
    }

    fn save(&self, name: &str, index: &SemanticIndex) -> Result<(), StoreError> {
        self.files
            .save(name, &index.meta, &index.items, &index.vectors)
    }

    fn remove(&self, name: &str) -> Result<(), StoreError> {
        self.files.remove(name)
    }
}
