//! Where library docs persist: the [`DocsStore`] seam and what crosses it.
//!
//! [`crate::Docs`] reads, chunks, embeds, ranks and assembles; a store keeps libraries, their
//! versions and every chunk with its vector. The embedded store is [`SqliteDocsStore`] (one
//! SQLite file); a server store (PostgreSQL) implements the same trait.
//!
//! What every implementation keeps: replacing a version is atomic (readers see the old version
//! or the new one, never a mix, and a failure leaves the old one); a version's generation
//! changes with every replacement, by any process, so loaded search indexes know when to
//! reload. A version may be stored searchable before every chunk has its own vector (its
//! section vectors are all there): the chunk vectors come later in batches
//! ([`DocsStore::add_passages`]), each its own transaction, which leaves the generation (and
//! so the order of versions) alone and counts up the version's revision instead.

mod postgres;
mod sqlite;

use devlens_search::vector::{from_le_bytes, to_le_bytes};
use serde::Serialize;

pub use postgres::PostgresDocsStore;

/// The crash point inside a batch of chunk vectors: written, not yet committed
/// (`DEVLENS_CRASH_AT`, devlens-search's crash.rs).
pub const REFINE_BEFORE_COMMIT: &str = "docs-refine-before-commit";
pub use sqlite::SqliteDocsStore;

use crate::DocsError;
use crate::chunk::ChunkKind;

/// The persistence of library docs.
pub trait DocsStore: std::fmt::Debug + Send + Sync {
    /// Where the store lives (a file, a database without its password), for messages.
    fn location(&self) -> String;
    /// Every library, by id.
    fn libraries(&self) -> Result<Vec<LibraryInfo>, DocsError>;
    fn library(&self, id: &str) -> Result<Option<LibraryInfo>, DocsError>;
    /// The generation of a stored version: changes whenever it is replaced.
    fn generation(&self, id: &str, version: &str) -> Result<Option<i64>, DocsError>;
    /// What identifies the stored state of a version (its generation and fingerprint).
    fn stamp(&self, id: &str, version: &str) -> Result<Option<VersionStamp>, DocsError>;
    /// Replaces (or adds) a version with its chunks and vectors, atomically. Returns its new
    /// generation.
    fn replace_version(&self, new: &NewVersion<'_>) -> Result<i64, DocsError>;
    /// A version's chunks and vectors, for searching.
    fn load_version(&self, id: &str, version: &str) -> Result<Option<LoadedVersion>, DocsError>;
    /// Removes a library (every version), or one version of it. Returns whether anything was
    /// there.
    fn remove(&self, id: &str, version: Option<&str>) -> Result<bool, DocsError>;
    /// The versions whose chunks are still getting vectors of their own (fewer stored than
    /// planned), in the order they were stored.
    fn refinements(&self) -> Result<Vec<Refinement>, DocsError>;
    /// Stores chunk vectors of one generation of a version, in one transaction: only where a
    /// chunk has none yet (two refiners of the same version store each vector once). Returns
    /// the version's refinement afterwards, or `None` when the version is no longer that
    /// generation (re-ingested or removed meanwhile): then nothing is stored.
    fn add_passages(&self, batch: &PassageBatch<'_>) -> Result<Option<Refinement>, DocsError>;
}

/// How far a version's chunk vectors are: `stored` of `planned` chunks have theirs.
#[derive(
    Debug, Clone, Copy, Default, Serialize, serde::Deserialize, PartialEq, Eq, schemars::JsonSchema,
)]
pub struct RefineProgress {
    pub stored: usize,
    pub planned: usize,
}

impl RefineProgress {
    /// Whether chunk vectors are still missing.
    pub fn pending(&self) -> bool {
        self.stored < self.planned
    }
}

/// A version and how far its chunk vectors are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refinement {
    pub library_id: String,
    pub version: String,
    /// The generation the vectors belong to.
    pub generation: i64,
    pub progress: RefineProgress,
}

/// Chunk vectors to add to a stored version.
#[derive(Debug)]
pub struct PassageBatch<'a> {
    pub library_id: &'a str,
    pub version: &'a str,
    /// The generation they were computed for: a version replaced since takes none of them.
    pub generation: i64,
    /// (chunk position, its own vector).
    pub passages: &'a [(usize, Vec<f32>)],
    /// How many chunks of the version get a vector of their own in all, as the refiner plans
    /// them.
    pub planned: usize,
    /// The version's [`fingerprint`] once every planned vector is stored; until then a version
    /// has none (its answers are not shared between servers while it changes).
    pub fingerprint: Option<&'a str>,
}

/// A library as listed and resolved.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryInfo {
    pub id: String,
    pub name: String,
    pub description: String,
    pub source: String,
    /// Newest first.
    pub versions: Vec<String>,
    /// Chunks (text, code and examples) of the newest version.
    pub snippets: usize,
    pub updated_at: String,
}

/// A chunk as stored and returned.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredChunk {
    pub section: String,
    pub anchor: String,
    pub kind: ChunkKind,
    pub language: Option<String>,
    /// The file it came from, relative to the ingested folder (or the URL).
    pub source: String,
    pub url: String,
    pub content: String,
    pub tokens: usize,
    pub hash: String,
}

#[cfg(test)]
impl StoredChunk {
    /// A chunk of `page.md` for unit tests.
    pub(crate) fn of_page(section: &str, kind: ChunkKind, content: &str) -> Self {
        Self {
            section: section.into(),
            anchor: String::new(),
            kind,
            language: None,
            source: "page.md".into(),
            url: String::new(),
            content: content.into(),
            tokens: 1,
            hash: content.into(),
        }
    }
}

/// What to store for one version.
#[derive(Debug)]
pub struct NewVersion<'a> {
    pub library_id: &'a str,
    pub name: &'a str,
    pub description: Option<&'a str>,
    pub version: &'a str,
    pub source: &'a str,
    pub pages: usize,
    pub chunks: &'a [StoredChunk],
    /// The chunks' vectors; `None` when no model was available.
    pub embeddings: Option<ChunkEmbeddings<'a>>,
}

/// The vectors of a version's chunks, as stored.
#[derive(Debug, Clone, Copy)]
pub struct ChunkEmbeddings<'a> {
    /// The model that made them.
    pub model: &'a str,
    /// One per chunk: the vector of its section's text (heading path and first prose).
    pub sections: &'a [Vec<f32>],
    /// Per chunk, the vector of its own text where it has one (prose): an answer in a later
    /// paragraph of a long section is found by it.
    pub passages: &'a [Option<Vec<f32>>],
    /// How many chunks get a vector of their own in all: those in `passages` and those still
    /// to come ([`DocsStore::add_passages`]). While fewer are stored the version has no
    /// fingerprint.
    pub planned: usize,
}

impl ChunkEmbeddings<'_> {
    /// The chunk vectors stored with the version, of those planned.
    pub fn progress(&self) -> RefineProgress {
        RefineProgress {
            stored: self.passages.iter().filter(|p| p.is_some()).count(),
            planned: self.planned,
        }
    }
}

/// What identifies the stored state of a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionStamp {
    /// Changes on every re-ingest, in this registry only.
    pub generation: i64,
    pub fingerprint: Option<String>,
    /// Counts the batches of chunk vectors added to this generation: with the generation it
    /// says what a loaded index or a cached answer was made from.
    pub revision: i64,
    /// While chunk vectors are still missing: how far they are.
    pub refining: Option<RefineProgress>,
}

/// A digest of everything a version's answers are made of: its id and version label, model,
/// and every chunk with its vector. Two registries that ingested the same docs with the same
/// model agree on it (so servers with their own data dirs share cached answers); re-ingesting
/// changed docs changes it (so the old answers are unreachable everywhere).
pub fn fingerprint(new: &NewVersion<'_>) -> String {
    fingerprint_of(new.library_id, new.version, new.chunks, new.embeddings)
}

/// The [`fingerprint`] of a version's id, label, chunks and vectors (the same whether its chunk
/// vectors were stored at once or added later).
pub fn fingerprint_of(
    library_id: &str,
    version: &str,
    chunks: &[StoredChunk],
    embeddings: Option<ChunkEmbeddings<'_>>,
) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    // Length-prefixed fields: no two different versions hash the same bytes.
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"devlens-docs version fingerprint 1");
    field(library_id.as_bytes());
    field(version.as_bytes());
    field(embeddings.map_or("", |e| e.model).as_bytes());
    for (i, c) in chunks.iter().enumerate() {
        for text in [
            &c.section,
            &c.anchor,
            c.kind.as_str(),
            c.language.as_deref().unwrap_or(""),
            &c.source,
            &c.url,
            &c.content,
        ] {
            field(text.as_bytes());
        }
        field(&(c.tokens as u64).to_le_bytes());
        if let Some(v) = embeddings.and_then(|e| e.sections.get(i)) {
            field(&to_le_bytes(v));
        }
        // Only where there is one: versions stored without passages keep their fingerprint.
        if let Some(Some(v)) = embeddings.and_then(|e| e.passages.get(i)) {
            field(b"passage");
            field(&to_le_bytes(v));
        }
    }
    hex::encode(h.finalize())
}

/// A version read back for searching.
#[derive(Debug)]
pub struct LoadedVersion {
    pub generation: i64,
    /// Batches of chunk vectors added since (see [`VersionStamp::revision`]).
    pub revision: i64,
    pub chunks: Vec<StoredChunk>,
    /// The chunks' vectors, when the version has embeddings.
    pub vectors: Option<LoadedVectors>,
}

/// A version's vectors read back.
#[derive(Debug)]
pub struct LoadedVectors {
    pub model: String,
    pub dims: usize,
    /// Row-major, one per chunk: its section's vector.
    pub sections: Vec<f32>,
    /// The chunks that have a vector of their own, in order, and those vectors (row-major).
    pub passage_chunks: Vec<usize>,
    pub passages: Vec<f32>,
}

impl LoadedVectors {
    /// The section vector of chunk `i`.
    pub fn section(&self, i: usize) -> Option<&[f32]> {
        self.sections.get(i * self.dims..(i + 1) * self.dims)
    }

    /// Chunk `i`'s own vector, if it has one.
    pub fn passage(&self, i: usize) -> Option<&[f32]> {
        let row = self.passage_chunks.binary_search(&i).ok()?;
        self.passages.get(row * self.dims..(row + 1) * self.dims)
    }
}

/// Gathers a version's vectors while its chunks are read in order: every chunk must have its
/// section vector (of the version's dimensions), or the version is searched by keywords alone.
pub(crate) struct VectorsReader {
    model: Option<String>,
    dims: usize,
    complete: bool,
    chunks: usize,
    sections: Vec<f32>,
    passage_chunks: Vec<usize>,
    passages: Vec<f32>,
}

impl VectorsReader {
    pub(crate) fn new(model: Option<String>, dims: usize) -> Self {
        Self {
            complete: model.is_some() && dims > 0,
            model,
            dims,
            chunks: 0,
            sections: Vec::new(),
            passage_chunks: Vec::new(),
            passages: Vec::new(),
        }
    }

    /// Whether the next chunk's vectors are still of use.
    pub(crate) fn wanted(&self) -> bool {
        self.complete
    }

    /// The next chunk's vectors.
    pub(crate) fn push(&mut self, section: Option<&[f32]>, passage: Option<&[f32]>) {
        match section.filter(|v| v.len() == self.dims) {
            Some(v) if self.complete => self.sections.extend_from_slice(v),
            _ => self.complete = false,
        }
        if let Some(v) = passage.filter(|v| v.len() == self.dims) {
            self.passage_chunks.push(self.chunks);
            self.passages.extend_from_slice(v);
        }
        self.chunks += 1;
    }

    pub(crate) fn finish(self) -> Option<LoadedVectors> {
        match self.model {
            Some(model) if self.complete => Some(LoadedVectors {
                model,
                dims: self.dims,
                sections: self.sections,
                passage_chunks: self.passage_chunks,
                passages: self.passages,
            }),
            _ => None,
        }
    }
}

/// The stored fingerprint of a version whose chunk vectors are `progress`: none while some are
/// still to come.
pub(crate) fn stored_fingerprint(new: &NewVersion<'_>) -> Option<String> {
    match new.embeddings.map(|e| e.progress()) {
        Some(p) if p.pending() => None,
        _ => Some(fingerprint(new)),
    }
}

/// How far a version's chunk vectors are, from its row's counts.
pub(crate) fn refine_progress(stored: i64, planned: i64) -> Option<RefineProgress> {
    let progress = RefineProgress {
        stored: stored.max(0) as usize,
        planned: planned.max(0) as usize,
    };
    progress.pending().then_some(progress)
}

/// A blob read back as a vector of `dims`; `None` when it has another length.
pub(crate) fn vector_from_bytes(bytes: &[u8], dims: usize) -> Option<Vec<f32>> {
    (bytes.len() == dims * 4).then(|| from_le_bytes(bytes).collect())
}
