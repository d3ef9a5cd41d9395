//! Where the knowledge base persists: the [`SolutionStore`] seam and what crosses it.
//!
//! The knowledge base ([`crate::KnowledgeBase`]) decides what to chunk, embed, rank and answer;
//! a store only keeps solutions, their chunk vectors and a keyword index, and answers the few
//! questions ranking needs. The embedded store is [`SqliteStore`] (one SQLite file); a server
//! store (PostgreSQL) implements the same trait.
//!
//! What every implementation keeps:
//! - every write is atomic: a solution, its vectors and its keyword entry change together or not
//!   at all, and an import is all or nothing;
//! - [`SolutionStore::generation`] changes with every write, by any process, so in-memory vector
//!   caches know when to reload;
//! - vectors are current only while the solution's [`content_hash`] equals the hash they were
//!   computed from: an edit makes them stale until they are replaced;
//! - a deleted solution leaves a tombstone (its id and when it was deleted), in the deleting
//!   transaction, which saving a solution with that id again removes: a copy of the knowledge
//!   base elsewhere (the extension's, [`crate::sync`]) learns of deletions from them.

mod postgres;
mod sqlite;

use std::ops::Range;

pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

use crate::{KbError, Solution};

/// One chunk's byte range in its solution's text, and its vector.
pub type ChunkVector = (Range<usize>, Vec<f32>);

/// Vectors of one solution's chunks, and what they were computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkVectors {
    pub content_hash: String,
    pub model: String,
    pub dims: usize,
    pub chunks: Vec<ChunkVector>,
}

/// Every current chunk vector of one model, for the in-memory index.
#[derive(Debug, Default)]
pub struct LoadedVectors {
    /// Per row: the solution's id and the chunk's byte range in its text.
    pub rows: Vec<(String, Range<usize>)>,
    pub data: Vec<f32>,
}

/// How an import changed the knowledge base.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportCounts {
    pub created: usize,
    pub replaced: usize,
    pub unchanged: usize,
}

/// Solution counts for status output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub solutions: usize,
    /// Solutions with current vectors (of the model asked about).
    pub embedded: usize,
}

/// The persistence of the knowledge base.
pub trait SolutionStore: std::fmt::Debug + Send + Sync {
    /// Where the store lives (a file, a database without its password), for status and
    /// messages.
    fn location(&self) -> String;
    /// Changes whenever anything is written, by any process.
    fn generation(&self) -> Result<i64, KbError>;
    /// Inserts or replaces a solution (by id) with its keyword entry and, when given (and
    /// computed from its current content), its vectors. Returns whether it existed and whether
    /// its content changed.
    fn put(
        &self,
        solution: &Solution,
        vectors: Option<&ChunkVectors>,
    ) -> Result<(bool, bool), KbError>;
    /// Stores vectors computed for solutions, in one transaction; vectors of a solution whose
    /// content changed meanwhile are dropped. Returns how many solutions got theirs.
    fn set_vectors(&self, batch: &[(String, ChunkVectors)]) -> Result<usize, KbError>;
    fn get(&self, id: &str) -> Result<Option<Solution>, KbError>;
    /// The solutions of `ids` that exist, in no particular order.
    fn get_many(&self, ids: &[&str]) -> Result<Vec<Solution>, KbError>;
    /// Every solution, oldest first (those saved in the same second in the order they were
    /// saved).
    fn all(&self) -> Result<Vec<Solution>, KbError>;
    /// Deletes a solution with its vectors, recording its tombstone (deleted now); whether it
    /// existed.
    fn delete(&self, id: &str) -> Result<bool, KbError>;
    /// As [`SolutionStore::put`], only while the stored solution's `updated_at` is still
    /// `expected` (`None`: only while there is no solution with its id), checked in the writing
    /// transaction. `None` when it was not: nothing was written.
    fn put_if(
        &self,
        solution: &Solution,
        vectors: Option<&ChunkVectors>,
        expected: Option<&str>,
    ) -> Result<Option<(bool, bool)>, KbError>;
    /// Deletes `id` with its vectors and records its tombstone at `deleted_at`, only while its
    /// `updated_at` is still `expected`; whether it did.
    fn delete_if(&self, id: &str, expected: &str, deleted_at: &str) -> Result<bool, KbError>;
    /// When `id` was deleted, if it was and no solution with its id was saved since.
    fn tombstone(&self, id: &str) -> Result<Option<String>, KbError>;
    /// Every tombstone: `(id, deleted_at)`, by id.
    fn tombstones(&self) -> Result<Vec<(String, String)>, KbError>;
    /// Every solution's id and `updated_at`, in [`SolutionStore::all`]'s order, without their
    /// texts.
    fn versions(&self) -> Result<Vec<(String, String)>, KbError>;
    /// Puts every solution (replacing those whose id exists, removing tombstones of their ids)
    /// in one transaction.
    fn import(&self, solutions: &[Solution]) -> Result<ImportCounts, KbError>;
    /// Up to `limit` solutions without current vectors of `model`, oldest first (by
    /// `created_at`, then id), only those after `after` (a `(created_at, id)` the previous
    /// batch ended with) when given: a walk through a large store reads each solution once
    /// instead of scanning from the start for every batch.
    fn needing_vectors(
        &self,
        model: &str,
        after: Option<&SolutionCursor>,
        limit: usize,
    ) -> Result<Vec<Solution>, KbError>;
    /// The model most solutions were embedded with, if any were.
    fn prevailing_model(&self) -> Result<Option<String>, KbError>;
    /// How many solutions there are, and how many have current vectors of `model`.
    fn counts(&self, model: Option<&str>) -> Result<Counts, KbError>;
    /// Every solution's id and what its keyword entry was made from, as a
    /// [`keyword_version`]: the in-memory keyword copy ([`crate::keywords`]) re-reads only the
    /// solutions whose version changed.
    fn keyword_versions(&self) -> Result<Vec<(String, u64)>, KbError>;
    /// BM25 over title (counting most), tags and text for any of `terms`, best first.
    fn keyword(&self, terms: &[String], limit: usize) -> Result<Vec<(String, f32)>, KbError>;
    /// The chunk vectors of `id`'s current text by `model` with `dims` dimensions, as byte
    /// ranges of that text; empty when it has none, or only ones of an earlier text.
    fn solution_vectors(
        &self,
        id: &str,
        model: &str,
        dims: usize,
    ) -> Result<Vec<ChunkVector>, KbError>;
    /// Every current chunk vector computed by `model` with `dims` dimensions.
    fn vectors(&self, model: &str, dims: usize) -> Result<LoadedVectors, KbError>;
    /// About to store vectors of `dims` dimensions for `solutions` solutions in a row (a
    /// re-embed): a store that keeps a vector index may set it aside and build it once in
    /// [`SolutionStore::end_bulk_vectors`], which is faster than growing it row by row. Stored
    /// vectors stay findable meanwhile (by a slower exact scan).
    fn begin_bulk_vectors(&self, _dims: usize, _solutions: usize) -> Result<(), KbError> {
        Ok(())
    }
    /// The bulk write [`SolutionStore::begin_bulk_vectors`] announced is over (or failed): the
    /// store's vector index is whole again.
    fn end_bulk_vectors(&self, _dims: usize) -> Result<(), KbError> {
        Ok(())
    }
    /// Whether the store finds nearest vectors itself ([`SolutionStore::nearest`], a database
    /// with a vector index) instead of the knowledge base ranking a copy of every vector in
    /// memory. A server sharing its database with others then never reloads all vectors
    /// because one solution changed elsewhere.
    fn searches_vectors(&self) -> bool {
        false
    }
    /// The `limit` solutions whose current chunk vectors (by `model`, `dims` long) are nearest
    /// to `query`, best first: each with its best chunk's byte range and cosine similarity.
    /// Only stores that [search vectors](SolutionStore::searches_vectors) answer it.
    fn nearest(
        &self,
        _model: &str,
        _dims: usize,
        _query: &[f32],
        _limit: usize,
    ) -> Result<Vec<NearChunk>, KbError> {
        Ok(Vec::new())
    }
}

/// Where a walk through the solutions stands: the last one's `created_at` and id.
pub type SolutionCursor = (String, String);

/// A solution's chunk nearest to a query: its id, byte range and cosine similarity.
pub type NearChunk = (String, Range<usize>, f32);

/// The hash of what a solution's embeddings are computed from.
/// What a solution's keyword entry is made of: its title, its tags, and its summary and text
/// with code names split into words (`useEffect` also as `use effect`, so a question in words
/// finds them), in the columns the stores index (weights 4, 2, 1).
pub fn keyword_columns(s: &Solution) -> [String; 3] {
    let mut body = String::with_capacity(s.text.len() * 2);
    if let Some(summary) = &s.summary {
        body.push_str(summary);
        body.push('\n');
    }
    body.push_str(&s.text);
    body.push('\n');
    body.push_str(&devlens_search::text::identifier_words(&s.text));
    [s.title.clone(), s.tags.join(" "), body]
}

/// A solution's keyword version, from what its keyword entry depends on: its stored content
/// hash (title, tags, text), `updated_at` and summary. Compared within one process only.
pub fn keyword_version(content_hash: &str, updated_at: &str, summary: Option<&str>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (content_hash, updated_at, summary).hash(&mut hasher);
    hasher.finish()
}

pub fn content_hash(s: &Solution) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    // The chunk size is part of it: changing how texts are cut makes old vectors stale.
    hash.update(crate::chunk::TARGET_CHARS.to_le_bytes());
    for part in [s.title.as_str(), &s.tags.join(","), &s.text] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hex::encode(&hash.finalize()[..16])
}
