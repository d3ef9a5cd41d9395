//! The embedded [`SolutionStore`]: one SQLite file (`<data dir>/kb/kb.sqlite`).
//!
//! One file holds the solutions, their chunks' embeddings and an FTS5 keyword index, so a save is
//! one transaction: the solution, its vectors and its keyword entry appear together or not at all,
//! and a failed import leaves everything as it was. FTS5 rather than the in-memory tantivy index
//! the other corpora build: saved solutions change one at a time, all day, and FTS5 updates in
//! place inside the same transaction instead of rebuilding.
//!
//! A solution's `content_hash` covers what its embeddings are computed from; `embedded_hash` and
//! `embedded_model` say what they were computed from. Where they differ the vectors are stale:
//! searches skip them and `reembed` replaces them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use devlens_search::vector::{from_le_bytes, to_le_bytes};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::{
    ChunkVector, ChunkVectors, Counts, ImportCounts, LoadedVectors, SolutionCursor, SolutionStore,
    content_hash,
};
use crate::{KbError, Solution};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS solutions (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    url TEXT,
    text TEXT NOT NULL,
    summary TEXT,
    tags TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    embedded_hash TEXT,
    embedded_model TEXT,
    embedded_dims INTEGER
);
-- The order re-embedding walks solutions in (needing_vectors).
CREATE INDEX IF NOT EXISTS solutions_created ON solutions (created_at, id);
CREATE TABLE IF NOT EXISTS chunks (
    solution_seq INTEGER NOT NULL REFERENCES solutions(seq) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    embedding BLOB NOT NULL,
    PRIMARY KEY (solution_seq, position)
);
CREATE VIRTUAL TABLE IF NOT EXISTS solutions_fts USING fts5(
    title, tags, body, tokenize = 'porter unicode61'
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('generation', 0);
-- When a solution was deleted (RFC 3339, UTC), until one with its id is saved again: what a copy
-- elsewhere (the Chrome extension's) learns of a deletion from when it syncs. Files written
-- before sync get the table when they are next opened.
CREATE TABLE IF NOT EXISTS tombstones (id TEXT PRIMARY KEY, deleted_at TEXT NOT NULL);
";

/// The knowledge base in one SQLite file.
pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish()
    }
}

const COLUMNS: &str = "id, title, url, text, summary, tags, created_at, updated_at";

fn row_to_solution(r: &rusqlite::Row<'_>) -> rusqlite::Result<Solution> {
    let tags: String = r.get(5)?;
    Ok(Solution {
        id: r.get(0)?,
        title: r.get(1)?,
        url: r.get(2)?,
        text: r.get(3)?,
        summary: r.get(4)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
    })
}

impl SqliteStore {
    pub fn open(path: &Path) -> Result<Self, KbError> {
        let conn =
            devlens_search::sqlite::open(path, SCHEMA).map_err(|message| KbError::Store {
                path: path.to_path_buf(),
                message,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> KbError {
        KbError::Store {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions roll
        // back on drop), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `work` in one write transaction that also bumps the generation, so every process
    /// that caches vectors sees the change.
    fn write<T>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> Result<T, KbError>,
    ) -> Result<T, KbError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let out = work(&tx)?;
        tx.execute(
            "UPDATE meta SET value = value + 1 WHERE key = 'generation'",
            [],
        )
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(out)
    }

    fn put_in(
        &self,
        tx: &Transaction<'_>,
        s: &Solution,
        vectors: Option<&ChunkVectors>,
    ) -> Result<(bool, bool), KbError> {
        let e = |e: rusqlite::Error| self.err(e);
        let hash = content_hash(s);
        // Saved again: no longer deleted.
        tx.execute("DELETE FROM tombstones WHERE id = ?1", [&s.id])
            .map_err(e)?;
        let existing: Option<(i64, String, Solution)> = tx
            .query_row(
                &format!("SELECT seq, content_hash, {COLUMNS} FROM solutions WHERE id = ?1"),
                [&s.id],
                |r| {
                    let seq: i64 = r.get(0)?;
                    let hash: String = r.get(1)?;
                    let tags: String = r.get(7)?;
                    Ok((
                        seq,
                        hash,
                        Solution {
                            id: r.get(2)?,
                            title: r.get(3)?,
                            url: r.get(4)?,
                            text: r.get(5)?,
                            summary: r.get(6)?,
                            tags: serde_json::from_str(&tags).unwrap_or_default(),
                            created_at: r.get(8)?,
                            updated_at: r.get(9)?,
                        },
                    ))
                },
            )
            .optional()
            .map_err(e)?;
        let tags = serde_json::to_string(&s.tags).unwrap_or_else(|_| "[]".into());
        let seq = match &existing {
            Some((_, _, old)) if old == s => return Ok((true, false)),
            Some((seq, _, _)) => {
                tx.execute(
                    "UPDATE solutions SET title = ?2, url = ?3, text = ?4, summary = ?5, tags = ?6, \
                     created_at = ?7, updated_at = ?8, content_hash = ?9 WHERE seq = ?1",
                    params![seq, s.title, s.url, s.text, s.summary, tags, s.created_at, s.updated_at, hash],
                )
                .map_err(e)?;
                tx.execute("DELETE FROM solutions_fts WHERE rowid = ?1", [seq])
                    .map_err(e)?;
                *seq
            }
            None => {
                tx.execute(
                    "INSERT INTO solutions (id, title, url, text, summary, tags, created_at, \
                     updated_at, content_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        s.id,
                        s.title,
                        s.url,
                        s.text,
                        s.summary,
                        tags,
                        s.created_at,
                        s.updated_at,
                        hash
                    ],
                )
                .map_err(e)?;
                tx.last_insert_rowid()
            }
        };
        let [title, tag_words, body] = super::keyword_columns(s);
        tx.execute(
            "INSERT INTO solutions_fts (rowid, title, tags, body) VALUES (?1, ?2, ?3, ?4)",
            params![seq, title, tag_words, body],
        )
        .map_err(e)?;
        if let Some(v) = vectors.filter(|v| v.content_hash == hash) {
            Self::replace_vectors(tx, seq, v).map_err(e)?;
        }
        let content_changed = existing
            .as_ref()
            .is_none_or(|(_, old_hash, _)| *old_hash != hash);
        Ok((existing.is_some(), content_changed))
    }

    /// The stored `updated_at` of `id`, inside a write.
    fn updated_at_in(&self, tx: &Transaction<'_>, id: &str) -> Result<Option<String>, KbError> {
        tx.query_row(
            "SELECT updated_at FROM solutions WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| self.err(e))
    }

    /// Deletes the solution at `seq` (its vectors go with it) and records its tombstone.
    fn delete_in(
        &self,
        tx: &Transaction<'_>,
        seq: i64,
        id: &str,
        deleted_at: &str,
    ) -> Result<(), KbError> {
        let e = |e: rusqlite::Error| self.err(e);
        tx.execute("DELETE FROM solutions_fts WHERE rowid = ?1", [seq])
            .map_err(e)?;
        tx.execute("DELETE FROM solutions WHERE seq = ?1", [seq])
            .map_err(e)?;
        tx.execute(
            "INSERT INTO tombstones (id, deleted_at) VALUES (?1, ?2) \
             ON CONFLICT (id) DO UPDATE SET deleted_at = excluded.deleted_at",
            params![id, deleted_at],
        )
        .map_err(e)?;
        Ok(())
    }

    fn replace_vectors(tx: &Transaction<'_>, seq: i64, v: &ChunkVectors) -> rusqlite::Result<()> {
        tx.execute("DELETE FROM chunks WHERE solution_seq = ?1", [seq])?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO chunks (solution_seq, position, start, end, embedding) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for (position, (range, vector)) in v.chunks.iter().enumerate() {
            insert.execute(params![
                seq,
                position as i64,
                range.start as i64,
                range.end as i64,
                to_le_bytes(vector)
            ])?;
        }
        tx.execute(
            "UPDATE solutions SET embedded_hash = ?2, embedded_model = ?3, embedded_dims = ?4 WHERE seq = ?1",
            params![seq, v.content_hash, v.model, v.dims as i64],
        )?;
        Ok(())
    }
}

impl SolutionStore for SqliteStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    /// Changes whenever anything is written, by any process.
    fn generation(&self) -> Result<i64, KbError> {
        self.lock()
            .query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| {
                r.get(0)
            })
            .map_err(|e| self.err(e))
    }

    /// Inserts or replaces a solution (by id) with its keyword entry and, when given, its
    /// vectors. Returns whether it existed and whether its content changed.
    fn put(
        &self,
        solution: &Solution,
        vectors: Option<&ChunkVectors>,
    ) -> Result<(bool, bool), KbError> {
        self.write(|tx| self.put_in(tx, solution, vectors))
    }

    /// Stores vectors for solutions whose content is still what they were computed from (a
    /// solution edited meanwhile is left for the next run). Returns how many were stored.
    fn set_vectors(&self, batch: &[(String, ChunkVectors)]) -> Result<usize, KbError> {
        self.write(|tx| {
            let mut stored = 0;
            for (id, v) in batch {
                let seq: Option<i64> = tx
                    .query_row(
                        "SELECT seq FROM solutions WHERE id = ?1 AND content_hash = ?2",
                        params![id, v.content_hash],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(|e| self.err(e))?;
                if let Some(seq) = seq {
                    Self::replace_vectors(tx, seq, v).map_err(|e| self.err(e))?;
                    stored += 1;
                }
            }
            Ok(stored)
        })
    }

    fn get(&self, id: &str) -> Result<Option<Solution>, KbError> {
        self.lock()
            .query_row(
                &format!("SELECT {COLUMNS} FROM solutions WHERE id = ?1"),
                [id],
                row_to_solution,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Several solutions by id, in the order asked (unknown ids are left out).
    fn get_many(&self, ids: &[&str]) -> Result<Vec<Solution>, KbError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM solutions WHERE id = ?1"))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(s) = stmt
                .query_row([id], row_to_solution)
                .optional()
                .map_err(|e| self.err(e))?
            {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// Every solution, oldest first (ties by id): the export order.
    fn all(&self) -> Result<Vec<Solution>, KbError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM solutions ORDER BY created_at, seq"
            ))
            .map_err(|e| self.err(e))?;
        stmt.query_map([], row_to_solution)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn delete(&self, id: &str) -> Result<bool, KbError> {
        let now = devlens_core::clock::now_rfc3339();
        self.write(|tx| {
            let seq: Option<i64> = tx
                .query_row("SELECT seq FROM solutions WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(|e| self.err(e))?;
            let Some(seq) = seq else { return Ok(false) };
            self.delete_in(tx, seq, id, &now)?;
            Ok(true)
        })
    }

    fn put_if(
        &self,
        solution: &Solution,
        vectors: Option<&ChunkVectors>,
        expected: Option<&str>,
    ) -> Result<Option<(bool, bool)>, KbError> {
        self.write(|tx| {
            if self.updated_at_in(tx, &solution.id)?.as_deref() != expected {
                return Ok(None);
            }
            self.put_in(tx, solution, vectors).map(Some)
        })
    }

    fn delete_if(&self, id: &str, expected: &str, deleted_at: &str) -> Result<bool, KbError> {
        self.write(|tx| {
            let row: Option<(i64, String)> = tx
                .query_row(
                    "SELECT seq, updated_at FROM solutions WHERE id = ?1",
                    [id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(|e| self.err(e))?;
            match row {
                Some((seq, updated_at)) if updated_at == expected => {
                    self.delete_in(tx, seq, id, deleted_at)?;
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
    }

    fn tombstone(&self, id: &str) -> Result<Option<String>, KbError> {
        self.lock()
            .query_row(
                "SELECT deleted_at FROM tombstones WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    fn tombstones(&self) -> Result<Vec<(String, String)>, KbError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare("SELECT id, deleted_at FROM tombstones ORDER BY id")
            .map_err(|e| self.err(e))?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn versions(&self) -> Result<Vec<(String, String)>, KbError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare("SELECT id, updated_at FROM solutions ORDER BY created_at, seq")
            .map_err(|e| self.err(e))?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn keyword_versions(&self) -> Result<Vec<(String, u64)>, KbError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare("SELECT id, content_hash, updated_at, summary FROM solutions")
            .map_err(|e| self.err(e))?;
        stmt.query_map([], |r| {
            let summary: Option<String> = r.get(3)?;
            Ok((
                r.get(0)?,
                super::keyword_version(
                    &r.get::<_, String>(1)?,
                    &r.get::<_, String>(2)?,
                    summary.as_deref(),
                ),
            ))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.err(e))
    }

    /// Writes every solution in one transaction: all of them or, on any failure, none.
    fn import(&self, solutions: &[Solution]) -> Result<ImportCounts, KbError> {
        self.write(|tx| {
            let mut counts = ImportCounts::default();
            for s in solutions {
                match self.put_in(tx, s, None)? {
                    (false, _) => counts.created += 1,
                    (true, true) => counts.replaced += 1,
                    (true, false) => counts.unchanged += 1,
                }
            }
            Ok(counts)
        })
    }

    /// Solutions without current vectors of `model`, oldest first, at most `limit`.
    fn needing_vectors(
        &self,
        model: &str,
        after: Option<&SolutionCursor>,
        limit: usize,
    ) -> Result<Vec<Solution>, KbError> {
        let conn = self.lock();
        // Walks solutions_created from the cursor; the empty string sorts before any id.
        let (created, id) = after.map_or(("", ""), |(c, i)| (c.as_str(), i.as_str()));
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM solutions INDEXED BY solutions_created \
                 WHERE (created_at, id) > (?3, ?4) \
                 AND (embedded_model IS NOT ?1 OR embedded_hash IS NOT content_hash) \
                 ORDER BY created_at, id LIMIT ?2"
            ))
            .map_err(|e| self.err(e))?;
        stmt.query_map(params![model, limit as i64, created, id], row_to_solution)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    /// The model most embedded solutions were embedded with, if any.
    fn prevailing_model(&self) -> Result<Option<String>, KbError> {
        let conn = self.lock();
        conn.query_row(
            "SELECT embedded_model FROM solutions WHERE embedded_model IS NOT NULL \
             GROUP BY embedded_model ORDER BY count(*) DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| self.err(e))
    }

    fn counts(&self, model: Option<&str>) -> Result<Counts, KbError> {
        let conn = self.lock();
        if model.is_none() {
            // SQLite counts through the smallest index (the ids'), without reading the texts.
            return conn
                .query_row("SELECT count(*) FROM solutions", [], |r| {
                    Ok(Counts {
                        solutions: r.get::<_, i64>(0)? as usize,
                        embedded: 0,
                    })
                })
                .map_err(|e| self.err(e));
        }
        conn.query_row(
            "SELECT count(*), coalesce(sum(embedded_model IS ?1 AND embedded_hash = content_hash), 0) \
             FROM solutions",
            [model],
            |r| {
                Ok(Counts {
                    solutions: r.get::<_, i64>(0)? as usize,
                    embedded: r.get::<_, i64>(1)? as usize,
                })
            },
        )
        .map_err(|e| self.err(e))
    }

    fn keyword(&self, terms: &[String], limit: usize) -> Result<Vec<(String, f32)>, KbError> {
        let match_expr = fts_query(terms);
        if match_expr.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                // Ranked in the FTS table alone, joined for the ids of the best only.
                "SELECT s.id, -r.score FROM (SELECT rowid, bm25(solutions_fts, 4.0, 2.0, 1.0) \
                 AS score FROM solutions_fts WHERE solutions_fts MATCH ?1 ORDER BY score \
                 LIMIT ?2) r JOIN solutions s ON s.seq = r.rowid ORDER BY r.score",
            )
            .map_err(|e| self.err(e))?;
        stmt.query_map(params![match_expr, limit as i64], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)? as f32))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.err(e))
    }

    /// The chunk vectors of `id`'s current text (by `model` with `dims` dimensions), as byte
    /// ranges of that text; empty when it has none, or only ones of an earlier text.
    fn solution_vectors(
        &self,
        id: &str,
        model: &str,
        dims: usize,
    ) -> Result<Vec<ChunkVector>, KbError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT c.start, c.end, c.embedding FROM chunks c \
                 JOIN solutions s ON s.seq = c.solution_seq \
                 WHERE s.id = ?1 AND s.embedded_model = ?2 AND s.embedded_dims = ?3 \
                 AND s.embedded_hash = s.content_hash ORDER BY c.position",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![id, model, dims as i64], |r| {
                let start: i64 = r.get(0)?;
                let end: i64 = r.get(1)?;
                let blob: Vec<u8> = r.get(2)?;
                Ok((start as usize..end as usize, blob))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (range, blob) = row.map_err(|e| self.err(e))?;
            if blob.len() == dims * 4 {
                out.push((range, from_le_bytes(&blob).collect()));
            }
        }
        Ok(out)
    }

    /// Every current chunk vector computed by `model` with `dims` dimensions.
    fn vectors(&self, model: &str, dims: usize) -> Result<LoadedVectors, KbError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT s.id, c.start, c.end, c.embedding FROM chunks c \
                 JOIN solutions s ON s.seq = c.solution_seq \
                 WHERE s.embedded_model = ?1 AND s.embedded_dims = ?2 \
                 AND s.embedded_hash = s.content_hash ORDER BY c.solution_seq, c.position",
            )
            .map_err(|e| self.err(e))?;
        let mut loaded = LoadedVectors::default();
        let mut rows = stmt
            .query(params![model, dims as i64])
            .map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let blob: Vec<u8> = r.get(3).map_err(|e| self.err(e))?;
            if blob.len() != dims * 4 {
                continue;
            }
            let start: i64 = r.get(1).map_err(|e| self.err(e))?;
            let end: i64 = r.get(2).map_err(|e| self.err(e))?;
            loaded.rows.push((
                r.get(0).map_err(|e| self.err(e))?,
                start as usize..end as usize,
            ));
            loaded.data.extend(from_le_bytes(&blob));
        }
        Ok(loaded)
    }
}

/// An FTS5 query matching any of the terms (each quoted, so no term is read as syntax).
fn fts_query(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_terms_are_quoted_so_none_is_read_as_syntax() {
        assert_eq!(fts_query(&["a\"b".into(), "c".into()]), "\"ab\" OR \"c\"");
    }
}
