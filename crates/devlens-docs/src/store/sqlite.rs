//! The embedded [`DocsStore`]: one SQLite file (`<data dir>/docs/docs.sqlite`) holding
//! libraries, their versions and every chunk with its embedding.
//!
//! SQLite because the registry must survive concurrent use (a CLI ingest beside a running server)
//! and never be half-written: re-ingesting a version deletes and inserts its rows in one
//! transaction, so readers see the old version or the new one, never a mix, and a failure
//! leaves the old one. The search indexes are derived from these rows when a version is first
//! queried (BM25 in RAM, vectors read back), so there is no second copy to keep consistent.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use devlens_search::vector::to_le_bytes;
use rusqlite::{Connection, OptionalExtension, params};

use super::{
    DocsStore, LibraryInfo, LoadedVersion, NewVersion, PassageBatch, Refinement, StoredChunk,
    VectorsReader, VersionStamp, refine_progress, stored_fingerprint, vector_from_bytes,
};
use crate::DocsError;
use crate::chunk::ChunkKind;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS libraries (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    library_id TEXT NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
    version TEXT NOT NULL,
    source TEXT NOT NULL,
    pages INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL,
    model TEXT,
    dims INTEGER NOT NULL DEFAULT 0,
    generation INTEGER NOT NULL,
    ingested_at TEXT NOT NULL,
    fingerprint TEXT,
    passages_planned INTEGER NOT NULL DEFAULT 0,
    passages_stored INTEGER NOT NULL DEFAULT 0,
    revision INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (library_id, version)
);
CREATE TABLE IF NOT EXISTS chunks (
    library_id TEXT NOT NULL,
    version TEXT NOT NULL,
    position INTEGER NOT NULL,
    section TEXT NOT NULL,
    anchor TEXT NOT NULL,
    kind TEXT NOT NULL,
    language TEXT,
    source TEXT NOT NULL,
    url TEXT NOT NULL,
    content TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    hash TEXT NOT NULL,
    embedding BLOB,
    passage_embedding BLOB,
    PRIMARY KEY (library_id, version, position),
    FOREIGN KEY (library_id, version) REFERENCES versions(library_id, version) ON DELETE CASCADE
);
";

/// The registry file and one connection to it.
#[derive(Debug)]
pub struct SqliteDocsStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SqliteDocsStore {
    /// Opens (creating when needed) the registry at `path`.
    pub fn open(path: &Path) -> Result<Self, DocsError> {
        let err = |e: &dyn std::fmt::Display| DocsError::Store {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let conn = devlens_search::sqlite::open(path, SCHEMA).map_err(|e| err(&e))?;
        // Registries written before the shared cache have no fingerprint column.
        if conn
            .prepare("SELECT fingerprint FROM versions LIMIT 0")
            .is_err()
        {
            conn.execute_batch("ALTER TABLE versions ADD COLUMN fingerprint TEXT")
                .map_err(|e| err(&e))?;
        }
        // Nor have those written before chunks had vectors of their own.
        if conn
            .prepare("SELECT passage_embedding FROM chunks LIMIT 0")
            .is_err()
        {
            conn.execute_batch("ALTER TABLE chunks ADD COLUMN passage_embedding BLOB")
                .map_err(|e| err(&e))?;
        }
        // Nor those written before chunk vectors were added after a version was searchable:
        // their versions are whole (nothing planned beyond what they hold).
        if conn
            .prepare("SELECT passages_planned FROM versions LIMIT 0")
            .is_err()
        {
            conn.execute_batch(
                "ALTER TABLE versions ADD COLUMN passages_planned INTEGER NOT NULL DEFAULT 0;
                 ALTER TABLE versions ADD COLUMN passages_stored INTEGER NOT NULL DEFAULT 0;
                 ALTER TABLE versions ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;",
            )
            .map_err(|e| err(&e))?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    fn store_err(&self, e: impl std::fmt::Display) -> DocsError {
        DocsError::Store {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl DocsStore for SqliteDocsStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    /// Every library, by id.
    fn libraries(&self) -> Result<Vec<LibraryInfo>, DocsError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT id, name, description, source, updated_at FROM libraries ORDER BY id")
            .map_err(|e| self.store_err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(LibraryInfo {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    description: r.get(2)?,
                    source: r.get(3)?,
                    versions: Vec::new(),
                    snippets: 0,
                    updated_at: r.get(4)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.store_err(e))?;
        let mut versions = conn
            .prepare(
                "SELECT version, chunk_count FROM versions WHERE library_id = ?1 \
                 ORDER BY generation DESC",
            )
            .map_err(|e| self.store_err(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for mut lib in rows {
            let list = versions
                .query_map([&lib.id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
                })
                .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
                .map_err(|e| self.store_err(e))?;
            lib.snippets = list.first().map(|v| v.1 as usize).unwrap_or(0);
            lib.versions = list.into_iter().map(|v| v.0).collect();
            out.push(lib);
        }
        Ok(out)
    }

    fn library(&self, id: &str) -> Result<Option<LibraryInfo>, DocsError> {
        Ok(self.libraries()?.into_iter().find(|l| l.id == id))
    }

    /// The generation of a stored version: changes whenever the version is re-ingested, by this
    /// process or another.
    fn generation(&self, id: &str, version: &str) -> Result<Option<i64>, DocsError> {
        self.conn()
            .query_row(
                "SELECT generation FROM versions WHERE library_id = ?1 AND version = ?2",
                params![id, version],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.store_err(e))
    }

    /// The generation and content fingerprint of a stored version (see [`super::fingerprint`]); the
    /// fingerprint is `None` for versions stored before fingerprints were kept.
    fn stamp(&self, id: &str, version: &str) -> Result<Option<VersionStamp>, DocsError> {
        self.conn()
            .query_row(
                "SELECT generation, fingerprint, revision, passages_stored, passages_planned \
                 FROM versions WHERE library_id = ?1 AND version = ?2",
                params![id, version],
                |r| {
                    Ok(VersionStamp {
                        generation: r.get(0)?,
                        fingerprint: r.get(1)?,
                        revision: r.get(2)?,
                        refining: refine_progress(r.get(3)?, r.get(4)?),
                    })
                },
            )
            .optional()
            .map_err(|e| self.store_err(e))
    }

    /// Stores a version, replacing what was stored under the same library and version, in one
    /// transaction. Returns the new generation.
    fn replace_version(&self, new: &NewVersion<'_>) -> Result<i64, DocsError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.store_err(e))?;
        let now = devlens_core::clock::now_rfc3339();
        let generation: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(generation), 0) + 1 FROM versions",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.store_err(e))?;
        tx.execute(
            "INSERT INTO libraries (id, name, description, source, created_at, updated_at)
             VALUES (?1, ?2, COALESCE(?3, ''), ?4, ?5, ?5)
             ON CONFLICT(id) DO UPDATE SET name = ?2,
                description = COALESCE(?3, libraries.description), source = ?4, updated_at = ?5",
            params![new.library_id, new.name, new.description, new.source, now],
        )
        .map_err(|e| self.store_err(e))?;
        tx.execute(
            "DELETE FROM versions WHERE library_id = ?1 AND version = ?2",
            params![new.library_id, new.version],
        )
        .map_err(|e| self.store_err(e))?;
        let (model, dims) = match new.embeddings {
            Some(e) => (Some(e.model), e.sections.first().map_or(0, Vec::len)),
            None => (None, 0),
        };
        let progress = new.embeddings.map(|e| e.progress()).unwrap_or_default();
        tx.execute(
            "INSERT INTO versions (library_id, version, source, pages, chunk_count, model, dims,
                generation, ingested_at, fingerprint, passages_planned, passages_stored)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                new.library_id,
                new.version,
                new.source,
                new.pages as i64,
                new.chunks.len() as i64,
                model,
                dims as i64,
                generation,
                now,
                stored_fingerprint(new),
                progress.planned as i64,
                progress.stored as i64
            ],
        )
        .map_err(|e| self.store_err(e))?;
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO chunks (library_id, version, position, section, anchor, kind,
                        language, source, url, content, tokens, hash, embedding,
                        passage_embedding)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                )
                .map_err(|e| self.store_err(e))?;
            for (position, chunk) in new.chunks.iter().enumerate() {
                let blob: Option<Vec<u8>> = new
                    .embeddings
                    .and_then(|e| e.sections.get(position))
                    .map(|v| to_le_bytes(v));
                let passage: Option<Vec<u8>> = new
                    .embeddings
                    .and_then(|e| e.passages.get(position))
                    .and_then(Option::as_ref)
                    .map(|v| to_le_bytes(v));
                insert
                    .execute(params![
                        new.library_id,
                        new.version,
                        position as i64,
                        chunk.section,
                        chunk.anchor,
                        chunk.kind.as_str(),
                        chunk.language,
                        chunk.source,
                        chunk.url,
                        chunk.content,
                        chunk.tokens as i64,
                        chunk.hash,
                        blob,
                        passage
                    ])
                    .map_err(|e| self.store_err(e))?;
            }
        }
        devlens_search::crash::crash_point(devlens_search::crash::DOCS_BEFORE_COMMIT);
        tx.commit().map_err(|e| self.store_err(e))?;
        Ok(generation)
    }

    /// Reads a version's chunks (in position order) and vectors.
    fn load_version(&self, id: &str, version: &str) -> Result<Option<LoadedVersion>, DocsError> {
        let conn = self.conn();
        // One read transaction: chunks and generation from the same snapshot.
        let tx = conn
            .unchecked_transaction()
            .map_err(|e| self.store_err(e))?;
        let Some((generation, model, dims, revision)) = tx
            .query_row(
                "SELECT generation, model, dims, revision FROM versions \
                 WHERE library_id = ?1 AND version = ?2",
                params![id, version],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, i64>(2)? as usize,
                        r.get::<_, i64>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.store_err(e))?
        else {
            return Ok(None);
        };
        let mut stmt = tx
            .prepare(
                "SELECT section, anchor, kind, language, source, url, content, tokens, hash,
                    embedding, passage_embedding FROM chunks WHERE library_id = ?1 AND version = ?2
                    ORDER BY position",
            )
            .map_err(|e| self.store_err(e))?;
        let mut chunks = Vec::new();
        let mut vectors = VectorsReader::new(model, dims);
        let mut rows = stmt
            .query(params![id, version])
            .map_err(|e| self.store_err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.store_err(e))? {
            let kind: String = r.get(2).map_err(|e| self.store_err(e))?;
            let get = |i: usize| -> Result<String, DocsError> {
                r.get::<_, String>(i).map_err(|e| self.store_err(e))
            };
            chunks.push(StoredChunk {
                section: get(0)?,
                anchor: get(1)?,
                kind: ChunkKind::parse(&kind).unwrap_or(ChunkKind::Text),
                language: r.get(3).map_err(|e| self.store_err(e))?,
                source: get(4)?,
                url: get(5)?,
                content: get(6)?,
                tokens: r.get::<_, i64>(7).map_err(|e| self.store_err(e))? as usize,
                hash: get(8)?,
            });
            if vectors.wanted() {
                let section: Option<Vec<u8>> = r.get(9).map_err(|e| self.store_err(e))?;
                let passage: Option<Vec<u8>> = r.get(10).map_err(|e| self.store_err(e))?;
                let section = section.and_then(|b| vector_from_bytes(&b, dims));
                let passage = passage.and_then(|b| vector_from_bytes(&b, dims));
                vectors.push(section.as_deref(), passage.as_deref());
            }
        }
        Ok(Some(LoadedVersion {
            generation,
            revision,
            chunks,
            vectors: vectors.finish(),
        }))
    }

    /// Removes a library (every version), or one version of it. Returns whether anything was
    /// there.
    fn remove(&self, id: &str, version: Option<&str>) -> Result<bool, DocsError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.store_err(e))?;
        let n = match version {
            Some(v) => tx.execute(
                "DELETE FROM versions WHERE library_id = ?1 AND version = ?2",
                params![id, v],
            ),
            None => tx.execute("DELETE FROM libraries WHERE id = ?1", params![id]),
        }
        .map_err(|e| self.store_err(e))?;
        tx.commit().map_err(|e| self.store_err(e))?;
        Ok(n > 0)
    }

    fn refinements(&self) -> Result<Vec<Refinement>, DocsError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT library_id, version, generation, passages_stored, passages_planned \
                 FROM versions WHERE passages_stored < passages_planned ORDER BY generation",
            )
            .map_err(|e| self.store_err(e))?;
        stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| self.store_err(e))
        .map(|rows| {
            rows.into_iter()
                .filter_map(|(library_id, version, generation, stored, planned)| {
                    Some(Refinement {
                        library_id,
                        version,
                        generation,
                        progress: refine_progress(stored, planned)?,
                    })
                })
                .collect()
        })
    }

    fn add_passages(&self, batch: &PassageBatch<'_>) -> Result<Option<Refinement>, DocsError> {
        let mut conn = self.conn();
        // Written from the start: the generation read below stays the stored one until commit.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| self.store_err(e))?;
        let key = params![batch.library_id, batch.version];
        let generation: Option<i64> = tx
            .query_row(
                "SELECT generation FROM versions WHERE library_id = ?1 AND version = ?2",
                key,
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.store_err(e))?;
        if generation != Some(batch.generation) {
            return Ok(None);
        }
        {
            let mut update = tx
                .prepare(
                    "UPDATE chunks SET passage_embedding = ?4 WHERE library_id = ?1 \
                     AND version = ?2 AND position = ?3 AND passage_embedding IS NULL",
                )
                .map_err(|e| self.store_err(e))?;
            for (position, vector) in batch.passages {
                update
                    .execute(params![
                        batch.library_id,
                        batch.version,
                        *position as i64,
                        to_le_bytes(vector)
                    ])
                    .map_err(|e| self.store_err(e))?;
            }
        }
        // Counted from the rows, not added up: a vector another refiner stored first counts once.
        let stored: i64 = tx
            .query_row(
                "SELECT count(*) FROM chunks WHERE library_id = ?1 AND version = ?2 \
                 AND passage_embedding IS NOT NULL",
                key,
                |r| r.get(0),
            )
            .map_err(|e| self.store_err(e))?;
        let planned: i64 = tx
            .query_row(
                "UPDATE versions SET passages_stored = ?3, passages_planned = ?5, \
                 revision = revision + 1, \
                 fingerprint = CASE WHEN ?3 >= ?5 THEN ?4 ELSE NULL END \
                 WHERE library_id = ?1 AND version = ?2 RETURNING passages_planned",
                params![
                    batch.library_id,
                    batch.version,
                    stored,
                    batch.fingerprint,
                    batch.planned as i64
                ],
                |r| r.get(0),
            )
            .map_err(|e| self.store_err(e))?;
        devlens_search::crash::crash_point(super::REFINE_BEFORE_COMMIT);
        tx.commit().map_err(|e| self.store_err(e))?;
        Ok(Some(Refinement {
            library_id: batch.library_id.to_string(),
            version: batch.version.to_string(),
            generation: batch.generation,
            progress: super::RefineProgress {
                stored: stored.max(0) as usize,
                planned: planned.max(0) as usize,
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ChunkEmbeddings;

    #[test]
    fn a_registry_from_before_chunk_vectors_opens_and_keeps_its_docs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.sqlite");
        let chunks = vec![
            StoredChunk::of_page("Guide", ChunkKind::Text, "First."),
            StoredChunk::of_page("Guide", ChunkKind::Text, "Second."),
        ];
        let sections = vec![vec![1.0, 0.0], vec![1.0, 0.0]];
        let new = NewVersion {
            library_id: "lib",
            name: "lib",
            description: None,
            version: "1",
            source: "here",
            pages: 1,
            chunks: &chunks,
            embeddings: Some(ChunkEmbeddings {
                model: "m",
                sections: &sections,
                passages: &[None, None],
                planned: 0,
            }),
        };
        SqliteDocsStore::open(&path)
            .unwrap()
            .replace_version(&new)
            .unwrap();
        // The registry as an older devlens left it: no column for a chunk's own vector.
        Connection::open(&path)
            .unwrap()
            .execute_batch("ALTER TABLE chunks DROP COLUMN passage_embedding")
            .unwrap();

        let store = SqliteDocsStore::open(&path).unwrap();
        let loaded = store.load_version("lib", "1").unwrap().unwrap();
        assert_eq!(loaded.chunks, chunks);
        let vectors = loaded.vectors.unwrap();
        assert_eq!(vectors.section(1), Some(&[1.0, 0.0][..]));
        assert_eq!(vectors.passage(1), None);

        // And it stores chunk vectors from now on.
        let passages = vec![None, Some(vec![0.0, 1.0])];
        let again = NewVersion {
            embeddings: Some(ChunkEmbeddings {
                model: "m",
                sections: &sections,
                passages: &passages,
                planned: 1,
            }),
            ..new
        };
        store.replace_version(&again).unwrap();
        let vectors = store
            .load_version("lib", "1")
            .unwrap()
            .unwrap()
            .vectors
            .unwrap();
        assert_eq!(vectors.passage(0), None);
        assert_eq!(vectors.passage(1), Some(&[0.0, 1.0][..]));
    }
}
