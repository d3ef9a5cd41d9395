//! Search machinery every devlens corpus shares (API operations, library docs, saved solutions).
//!
//! Corpora describe their documents as a few weighted text fields; this crate ranks them. Today it
//! holds the BM25 keyword index (tantivy, in RAM: the corpora we index are at most tens of
//! thousands of short documents, so building in memory takes milliseconds and needs no files to
//! keep consistent), an exact vector index, and [`hybrid`] retrieval: the one [`SearchMode`],
//! the fall back from meaning to keywords with its notice, and fusion. They speak the same
//! document ids: a document's position in the corpus.

pub mod bm25;
pub mod crash;
pub mod fusion;
pub mod golden;
pub mod hybrid;
pub mod keyword;
pub mod listwise;
pub mod postgres;
pub mod quantized;
pub mod rerank;
pub mod sqlite;
pub mod store;
pub mod text;
pub mod tokens;
pub mod vector;

pub use fusion::reciprocal_rank_fusion;
pub use hybrid::{Fusion, Retrieval, SearchMode};
pub use keyword::{KeywordField, KeywordHit, KeywordIndex};
pub use store::{FileStore, StoreError, StoredIndex};
pub use vector::{VectorHit, VectorIndex};

/// Errors of building or querying an index.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("keyword index error: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error("a document has {got} fields but the index declares {expected}")]
    FieldCount { expected: usize, got: usize },
}
