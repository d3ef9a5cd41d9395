//! Where semantic indexes persist: the seam and its two stores, as docs and kb keep theirs.

mod file;
mod postgres;

pub use file::FileIndexStore;
pub use postgres::PostgresIndexStore;

use devlens_search::StoreError;

use super::SemanticIndex;

/// Where semantic indexes persist, one per name: the seam between the explorer and its storage.
///
/// A save replaces the live index of a name atomically: readers see the old index until the new
/// one is whole, and a failed save leaves the old one in place. `version` is cheap and changes
/// whenever any process swaps an index in, so a server notices a CLI re-index beside it.
pub trait SemanticIndexStore: std::fmt::Debug + Send + Sync {
    /// The live version's label, or `None` when the name has no index.
    fn version(&self, name: &str) -> Result<Option<String>, StoreError>;
    fn load(&self, name: &str) -> Result<Option<SemanticIndex>, StoreError>;
    fn save(&self, name: &str, index: &SemanticIndex) -> Result<(), StoreError>;
    fn remove(&self, name: &str) -> Result<(), StoreError>;
}
