//! Where library docs persist: the [`DocsStore`] seam and what crosses it.
//!
//! [`crate::Docs`] reads, chunks, embeds, ranks and assembles; a store keeps libraries, their
//! versions and every chunk with its vector. The embedded store is [`SqliteDocsStore`] (one
//! SQLite file); a server store (PostgreSQL) implements the same trait.
//!
//! What every implementation keeps: replacing a version is atomic (readers see the old version
//! or the new one, never a mix, and a failure leaves the old one); a version's generation
//! changes with every replacement, by any process, so loaded search indexes know when to
//! reload.

mod postgres;
mod sqlite;

use serde::Serialize;

pub use postgres::PostgresDocsStore;
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
    /// One vector per chunk, and the model that made them; `None` when no model was available.
    pub embeddings: Option<(&'a str, &'a [Vec<f32>])>,
}

/// What identifies the stored state of a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionStamp {
    /// Changes on every re-ingest, in this registry only.
    pub generation: i64,
    pub fingerprint: Option<String>,
}

/// A digest of everything a version's answers are made of: its id and version label, model,
/// and every chunk with its vector. Two registries that ingested the same docs with the same
/// model agree on it (so servers with their own data dirs share cached answers); re-ingesting
/// changed docs changes it (so the old answers are unreachable everywhere).
pub fn fingerprint(new: &NewVersion<'_>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    // Length-prefixed fields: no two different versions hash the same bytes.
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"devlens-docs version fingerprint 1");
    field(new.library_id.as_bytes());
    field(new.version.as_bytes());
    field(new.embeddings.map_or("", |(m, _)| m).as_bytes());
    for (i, c) in new.chunks.iter().enumerate() {
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
        if let Some(v) = new.embeddings.and_then(|(_, vs)| vs.get(i)) {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            field(&bytes);
        }
    }
    hex::encode(h.finalize())
}

/// A version read back for searching.
#[derive(Debug)]
pub struct LoadedVersion {
    pub generation: i64,
    pub chunks: Vec<StoredChunk>,
    /// Row-major vectors (one per chunk) and their model, when the version has embeddings.
    pub vectors: Option<(String, usize, Vec<f32>)>,
}
