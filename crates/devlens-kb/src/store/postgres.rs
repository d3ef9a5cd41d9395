//! The server [`SolutionStore`]: PostgreSQL with pgvector (the `kb_*` tables, created by this
//! crate's `migrations/`, which devlens-search's runner applies when the store first connects).
//!
//! The same promises as the SQLite store: a solution, its chunk vectors and its keyword entry
//! change in one transaction, an import is all or nothing, and the generation (a row bumped in
//! the writing transaction) tells every server sharing the database when to reload. Keywords are
//! PostgreSQL full text (title weighted over tags over text) instead of FTS5's BM25.
//!
//! Keyword queries rank in memory ([`crate::keywords`]); the full text here answers only those
//! the in-memory copy cannot score (a word outside ASCII). So an import writes its solutions
//! without their tsvector (computing them was most of a large import's time) and the first
//! such query fills every missing one before it asks (`fill_keywords`): the same entries, so
//! the same answers, as if the import had computed them.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use devlens_search::postgres::{
    Client, Migration, Schema, ServerDatabase, Transaction, Vector, bump_generation, tokio_postgres,
};

use super::{
    ChunkVector, ChunkVectors, Counts, ImportCounts, LoadedVectors, NearChunk, SolutionCursor,
    SolutionStore, content_hash,
};
use crate::{KbError, Solution};

/// The knowledge base's tables in the server database.
pub(crate) const SCHEMA: Schema = Schema {
    owner: "kb",
    migrations: &[
        Migration {
            version: 1,
            description: "solutions and chunk vectors",
            sql: include_str!("../../migrations/0001_solutions.sql"),
        },
        Migration {
            version: 2,
            description: "tombstones of deleted solutions",
            sql: include_str!("../../migrations/0002_tombstones.sql"),
        },
        Migration {
            version: 3,
            description: "the order re-embedding walks solutions in",
            sql: include_str!("../../migrations/0003_created_order.sql"),
        },
        Migration {
            version: 4,
            description: "keyword entries an import leaves for the first query needing them",
            sql: include_str!("../../migrations/0004_keywords_later.sql"),
        },
        Migration {
            version: 5,
            description: "what vectors were computed from, in a narrow table",
            sql: include_str!("../../migrations/0005_embedded_marks.sql"),
        },
        Migration {
            version: 6,
            description: "the vector index by inner product",
            sql: include_str!("../../migrations/0006_inner_product_index.sql"),
        },
        Migration {
            version: 7,
            description: "vectors deleted with their solution, without foreign keys",
            sql: include_str!("../../migrations/0007_vectors_deleted_with_their_solution.sql"),
        },
    ],
};

/// PostgreSQL's full text refuses a document over 1 MB; the keyword entry keeps the start of a
/// longer text (vectors cover all of it).
const MAX_KEYWORD_TEXT: usize = 400_000;

const COLUMNS: &str = "id, title, url, text, summary, tags, created_at, updated_at";

/// The knowledge base in a team server's database.
#[derive(Debug)]
pub struct PostgresStore {
    db: Arc<ServerDatabase>,
    /// Dimension counts whose HNSW index this process has made sure of.
    indexed_dims: Mutex<HashSet<usize>>,
    /// Dimension counts whose HNSW index is set aside during a bulk write of vectors.
    bulk_dims: Mutex<HashSet<usize>>,
}

/// From this many solutions to embed at once (and at least a quarter as many as already have
/// vectors), a re-embed builds the HNSW index once afterwards instead of growing it row by row:
/// measured with pgvector 0.6.2, an insert into the graph costs about ten times its share of a
/// build from scratch.
const BULK_INDEX_MIN: usize = 1_000;

fn row_to_solution(r: &tokio_postgres::Row) -> Solution {
    let tags: String = r.get(5);
    Solution {
        id: r.get(0),
        title: r.get(1),
        url: r.get(2),
        text: r.get(3),
        summary: r.get(4),
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        created_at: r.get(6),
        updated_at: r.get(7),
    }
}

/// What the keyword index holds besides title and tags (as the SQLite store's FTS body), cut
/// to what a tsvector takes.
fn keyword_body(s: &Solution) -> String {
    let [_, _, mut body] = super::keyword_columns(s);
    if body.len() > MAX_KEYWORD_TEXT {
        let mut end = MAX_KEYWORD_TEXT;
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        body.truncate(end);
    }
    body
}

/// A `websearch_to_tsquery` text matching any of the terms (quotes and signs dropped, so no
/// term is read as syntax).
fn any_of(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| {
            t.chars()
                .filter(|c| !matches!(c, '"' | '-' | '\''))
                .collect::<String>()
        })
        .filter(|t| !t.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" or ")
}

const KEYWORDS_SQL: &str = "setweight(to_tsvector('english', $1), 'A') || \
     setweight(to_tsvector('english', $2), 'B') || setweight(to_tsvector('english', $3), 'C')";

impl PostgresStore {
    pub fn new(db: Arc<ServerDatabase>) -> Self {
        Self {
            db,
            indexed_dims: Mutex::new(HashSet::new()),
            bulk_dims: Mutex::new(HashSet::new()),
        }
    }

    /// How many solutions the database holds.
    pub fn count(&self) -> Result<i64, KbError> {
        self.read(async |c| {
            let row = c
                .query_one("SELECT count(*) FROM kb_solutions", &[])
                .await?;
            Ok(row.get(0))
        })
    }

    fn err(&self, message: impl Into<String>) -> KbError {
        KbError::Database {
            location: self.db.location().to_string(),
            message: message.into(),
        }
    }

    fn pg(&self, e: tokio_postgres::Error) -> KbError {
        self.err(devlens_search::postgres::describe(&e))
    }

    /// A connection, or the reason there is none.
    async fn client(&self) -> Result<Client, KbError> {
        self.db
            .client(&SCHEMA)
            .await
            .map_err(|message| self.err(message))
    }

    /// Runs a read on one connection.
    fn read<T>(
        &self,
        work: impl AsyncFnOnce(&Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, KbError> {
        self.db.block_on(async {
            let client = self.client().await?;
            work(&client).await.map_err(|e| self.pg(e))
        })
    }

    /// Runs `work` in one transaction that also bumps the generation.
    fn write<T>(
        &self,
        work: impl AsyncFnOnce(&Transaction<'_>) -> Result<T, KbError>,
    ) -> Result<T, KbError> {
        self.transaction(async |tx| {
            let out = work(tx).await?;
            bump_generation(tx, "kb").await.map_err(|e| self.pg(e))?;
            Ok(out)
        })
    }

    /// Runs `work` in one transaction, committed when it succeeds: a write that bumps the
    /// generation itself.
    fn transaction<T>(
        &self,
        work: impl AsyncFnOnce(&Transaction<'_>) -> Result<T, KbError>,
    ) -> Result<T, KbError> {
        self.db.block_on(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| self.pg(e))?;
            let out = work(&tx).await?;
            tx.commit().await.map_err(|e| self.pg(e))?;
            Ok(out)
        })
    }

    /// Makes sure the HNSW index for `dims`-long vectors exists before any is stored.
    async fn ensure_index(&self, dims: usize) -> Result<(), KbError> {
        let holds = |set: &Mutex<HashSet<usize>>| {
            set.lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&dims)
        };
        if holds(&self.indexed_dims) || holds(&self.bulk_dims) {
            return Ok(());
        }
        let client = self.client().await?;
        devlens_search::postgres::ensure_hnsw_index(&client, "kb_chunks", dims)
            .await
            .map_err(|e| self.pg(e))?;
        self.indexed_dims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(dims);
        Ok(())
    }

    async fn put_in(
        &self,
        tx: &Transaction<'_>,
        s: &Solution,
        vectors: Option<&ChunkVectors>,
    ) -> Result<(bool, bool), KbError> {
        let pg = |e| self.pg(e);
        let hash = content_hash(s);
        // Saved again: no longer deleted.
        tx.execute("DELETE FROM kb_tombstones WHERE id = $1", &[&s.id])
            .await
            .map_err(pg)?;
        let existing = tx
            .query_opt(
                &format!(
                    "SELECT {COLUMNS}, seq, content_hash FROM kb_solutions WHERE id = $1 FOR UPDATE"
                ),
                &[&s.id],
            )
            .await
            .map_err(pg)?
            .map(|r| {
                let seq: i64 = r.get(8);
                let old_hash: String = r.get(9);
                (seq, old_hash, row_to_solution(&r))
            });
        let tags = tags_json(s);
        let tag_words = s.tags.join(" ");
        let body = keyword_body(s);
        match &existing {
            Some((_, _, old)) if old == s => return Ok((true, false)),
            Some((seq, _, _)) => {
                tx.execute(
                    &format!(
                        "UPDATE kb_solutions SET title = $4, url = $5, text = $6, summary = $7, \
                         tags = $8, created_at = $9, updated_at = $10, content_hash = $11, \
                         keywords = {KEYWORDS_SQL} WHERE seq = $12"
                    ),
                    &[
                        &s.title,
                        &tag_words,
                        &body,
                        &s.title,
                        &s.url,
                        &s.text,
                        &s.summary,
                        &tags,
                        &s.created_at,
                        &s.updated_at,
                        &hash,
                        seq,
                    ],
                )
                .await
                .map_err(pg)?;
            }
            None => {
                tx.execute(
                    &format!(
                        "INSERT INTO kb_solutions (id, title, url, text, summary, tags, \
                         created_at, updated_at, content_hash, keywords) VALUES \
                         ($4, $5, $6, $7, $8, $9, $10, $11, $12, {KEYWORDS_SQL})"
                    ),
                    &[
                        &s.title,
                        &tag_words,
                        &body,
                        &s.id,
                        &s.title,
                        &s.url,
                        &s.text,
                        &s.summary,
                        &tags,
                        &s.created_at,
                        &s.updated_at,
                        &hash,
                    ],
                )
                .await
                .map_err(pg)?;
            }
        }
        if let Some(v) = vectors.filter(|v| v.content_hash == hash) {
            replace_vectors(tx, &VectorRows::of(&[(s.id.as_str(), v)]))
                .await
                .map_err(pg)?;
        }
        let content_changed = existing
            .as_ref()
            .is_none_or(|(_, old_hash, _)| *old_hash != hash);
        Ok((existing.is_some(), content_changed))
    }
}

impl PostgresStore {
    /// Imports solutions with distinct ids in a few statements: tombstones of their ids out,
    /// the changed ones updated, the unchanged left alone, the new ones kept in `created` for
    /// [`copy_new`] (as [`PostgresStore::put_in`] one at a time, without a round trip per
    /// solution). Keyword entries are left to [`PostgresStore::fill_keywords`].
    async fn import_part<'s>(
        &self,
        tx: &Transaction<'_>,
        part: &'s [Solution],
        counts: &mut ImportCounts,
        created: &mut Vec<&'s Solution>,
    ) -> Result<(), KbError> {
        let pg = |e| self.pg(e);
        let ids: Vec<&str> = part.iter().map(|s| s.id.as_str()).collect();
        tx.execute("DELETE FROM kb_tombstones WHERE id = ANY($1)", &[&ids])
            .await
            .map_err(pg)?;
        let existing: HashMap<String, (i64, Solution)> = tx
            .query(
                &format!(
                    "SELECT {COLUMNS}, seq FROM kb_solutions WHERE id = ANY($1) \
                     ORDER BY seq FOR UPDATE"
                ),
                &[&ids],
            )
            .await
            .map_err(pg)?
            .iter()
            .map(|r| (r.get(0), (r.get(8), row_to_solution(r))))
            .collect();
        let mut changed = Vec::new();
        for s in part {
            match existing.get(&s.id) {
                None => created.push(s),
                Some((_, old)) if old == s => counts.unchanged += 1,
                Some((seq, _)) => changed.push((*seq, s)),
            }
        }
        counts.replaced += changed.len();
        if !changed.is_empty() {
            let rows = RowColumns::of(&changed);
            tx.execute(
                &format!(
                    "UPDATE kb_solutions s SET title = t.title, url = t.url, text = t.text, \
                     summary = t.summary, tags = t.tags, created_at = t.created_at, \
                     updated_at = t.updated_at, content_hash = t.hash, keywords = NULL \
                     FROM {UNNEST_ROWS} WHERE s.seq = t.seq"
                ),
                &rows.params(),
            )
            .await
            .map_err(pg)?;
        }
        Ok(())
    }

    /// Computes the keyword entries imports left out, a batch at a time, so that the full text
    /// covers every solution: each what [`PostgresStore::put_in`] would have written (the same
    /// columns of the same text), and only while the solution is still the one read. Not a
    /// write of anything a reader sees: the generation stays.
    async fn fill_keywords(&self, c: &Client) -> Result<(), tokio_postgres::Error> {
        let missing = c
            .prepare_cached(&format!(
                "SELECT {COLUMNS}, seq, content_hash FROM kb_solutions WHERE keywords IS NULL \
                 ORDER BY seq LIMIT {KEYWORD_FILL_ROWS}"
            ))
            .await?;
        let fill = c
            .prepare_cached(&format!(
                "UPDATE kb_solutions s SET keywords = {KEYWORDS_OF_ROW} \
                 FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], \
                 $6::text[]) AS t(seq, hash, summary, title, tag_words, body) \
                 WHERE s.seq = t.seq AND s.keywords IS NULL AND s.content_hash = t.hash \
                 AND s.summary IS NOT DISTINCT FROM t.summary"
            ))
            .await?;
        // Rows rewritten between the read and the fill (by another import) are read again,
        // but not forever.
        let mut idle = 0;
        while idle < 3 {
            let rows = c.query(&missing, &[]).await?;
            if rows.is_empty() {
                break;
            }
            let solutions: Vec<Solution> = rows.iter().map(row_to_solution).collect();
            let seqs: Vec<i64> = rows.iter().map(|r| r.get(8)).collect();
            let hashes: Vec<&str> = rows.iter().map(|r| r.get(9)).collect();
            let summaries: Vec<Option<&str>> =
                solutions.iter().map(|s| s.summary.as_deref()).collect();
            let titles: Vec<&str> = solutions.iter().map(|s| s.title.as_str()).collect();
            let tag_words: Vec<String> = solutions.iter().map(|s| s.tags.join(" ")).collect();
            let bodies: Vec<String> = solutions.iter().map(keyword_body).collect();
            let filled = c
                .execute(
                    &fill,
                    &[&seqs, &hashes, &summaries, &titles, &tag_words, &bodies],
                )
                .await?;
            if filled == 0 {
                idle += 1;
            }
        }
        Ok(())
    }
}

/// Inserts new solutions in one binary COPY, in their order (their `seq`s follow it), without
/// keyword entries.
async fn copy_new(
    tx: &Transaction<'_>,
    created: &[&Solution],
) -> Result<(), tokio_postgres::Error> {
    use tokio_postgres::binary_copy::BinaryCopyInWriter;
    use tokio_postgres::types::Type;
    if created.is_empty() {
        return Ok(());
    }
    let sink = tx
        .copy_in(
            "COPY kb_solutions (id, title, url, text, summary, tags, created_at, updated_at, \
             content_hash) FROM STDIN (FORMAT binary)",
        )
        .await?;
    let mut writer = std::pin::pin!(BinaryCopyInWriter::new(sink, &[Type::TEXT; 9]));
    for s in created {
        let tags = tags_json(s);
        let hash = content_hash(s);
        writer
            .as_mut()
            .write(&[
                &s.id,
                &s.title,
                &s.url,
                &s.text,
                &s.summary,
                &tags,
                &s.created_at,
                &s.updated_at,
                &hash,
            ])
            .await?;
    }
    writer.finish().await.map(drop)
}

fn tags_json(s: &Solution) -> String {
    serde_json::to_string(&s.tags).unwrap_or_else(|_| "[]".into())
}

/// Solutions as one array per column, for [`UNNEST_ROWS`].
struct RowColumns<'a> {
    seqs: Vec<i64>,
    ids: Vec<&'a str>,
    titles: Vec<&'a str>,
    urls: Vec<Option<&'a str>>,
    texts: Vec<&'a str>,
    summaries: Vec<Option<&'a str>>,
    tags: Vec<String>,
    created: Vec<&'a str>,
    updated: Vec<&'a str>,
    hashes: Vec<String>,
}

impl<'a> RowColumns<'a> {
    fn of(rows: &[(i64, &'a Solution)]) -> Self {
        Self {
            seqs: rows.iter().map(|(seq, _)| *seq).collect(),
            ids: rows.iter().map(|(_, s)| s.id.as_str()).collect(),
            titles: rows.iter().map(|(_, s)| s.title.as_str()).collect(),
            urls: rows.iter().map(|(_, s)| s.url.as_deref()).collect(),
            texts: rows.iter().map(|(_, s)| s.text.as_str()).collect(),
            summaries: rows.iter().map(|(_, s)| s.summary.as_deref()).collect(),
            tags: rows.iter().map(|(_, s)| tags_json(s)).collect(),
            created: rows.iter().map(|(_, s)| s.created_at.as_str()).collect(),
            updated: rows.iter().map(|(_, s)| s.updated_at.as_str()).collect(),
            hashes: rows.iter().map(|(_, s)| content_hash(s)).collect(),
        }
    }

    fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 10] {
        [
            &self.seqs,
            &self.ids,
            &self.titles,
            &self.urls,
            &self.texts,
            &self.summaries,
            &self.tags,
            &self.created,
            &self.updated,
            &self.hashes,
        ]
    }
}

/// Rows from [`RowColumns::params`].
const UNNEST_ROWS: &str = "UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], \
     $6::text[], $7::text[], $8::text[], $9::text[], $10::text[]) \
     AS t(seq, id, title, url, text, summary, tags, created_at, updated_at, hash)";

/// [`KEYWORDS_SQL`] of a row with `title`, `tag_words` and `body` columns.
const KEYWORDS_OF_ROW: &str = "setweight(to_tsvector('english', t.title), 'A') || \
     setweight(to_tsvector('english', t.tag_words), 'B') || \
     setweight(to_tsvector('english', t.body), 'C')";

/// Solutions per statement of an import: large enough that round trips do not matter, small
/// enough that one statement's arrays stay a few megabytes.
const IMPORT_STATEMENT_ROWS: usize = 500;

/// Keyword entries computed per statement when filling those imports left out.
const KEYWORD_FILL_ROWS: usize = 500;

/// Deletes `id`, its chunk vectors and its mark (kb_embedded) when it exists and, with
/// `expected`, its `updated_at` is still that; records its tombstone at `deleted_at`. Whether it
/// deleted. Separate statements, not one with data-modifying CTEs: those share one snapshot,
/// which would miss vectors a re-embed committed while this waited for the solution's row.
async fn delete_in(
    tx: &Transaction<'_>,
    id: &str,
    expected: Option<&str>,
    deleted_at: &str,
) -> Result<bool, tokio_postgres::Error> {
    let deleted: Option<i64> = tx
        .query_opt(
            "DELETE FROM kb_solutions WHERE id = $1 AND ($2::text IS NULL OR updated_at = $2) \
             RETURNING seq",
            &[&id, &expected],
        )
        .await?
        .map(|r| r.get(0));
    let Some(seq) = deleted else {
        return Ok(false);
    };
    // After the solution's row is locked (deleted here): a re-embed that stored vectors for it
    // meanwhile has committed them, and these statements' snapshots see them. No foreign key
    // does it (migration kb 7).
    tx.execute("DELETE FROM kb_chunks WHERE solution_seq = $1", &[&seq])
        .await?;
    tx.execute("DELETE FROM kb_embedded WHERE solution_seq = $1", &[&seq])
        .await?;
    tx.execute(
        "INSERT INTO kb_tombstones (id, deleted_at) VALUES ($1, $2) \
         ON CONFLICT (id) DO UPDATE SET deleted_at = excluded.deleted_at",
        &[&id, &deleted_at],
    )
    .await?;
    Ok(true)
}

/// Each solution's chunk vectors as columns, for [`replace_vectors`].
struct VectorRows<'a> {
    ids: Vec<&'a str>,
    hashes: Vec<&'a str>,
    models: Vec<&'a str>,
    sizes: Vec<i32>,
    owners: Vec<&'a str>,
    owner_hashes: Vec<&'a str>,
    positions: Vec<i32>,
    starts: Vec<i32>,
    ends: Vec<i32>,
    dims: Vec<i32>,
    embeddings: Vec<Vector>,
}

impl<'a> VectorRows<'a> {
    fn of(batch: &[(&'a str, &'a ChunkVectors)]) -> Self {
        let mut rows = Self {
            ids: batch.iter().map(|(id, _)| *id).collect(),
            hashes: batch.iter().map(|(_, v)| v.content_hash.as_str()).collect(),
            models: batch.iter().map(|(_, v)| v.model.as_str()).collect(),
            sizes: batch.iter().map(|(_, v)| v.dims as i32).collect(),
            owners: Vec::new(),
            owner_hashes: Vec::new(),
            positions: Vec::new(),
            starts: Vec::new(),
            ends: Vec::new(),
            dims: Vec::new(),
            embeddings: Vec::new(),
        };
        for (id, v) in batch {
            for (position, (range, embedding)) in v.chunks.iter().enumerate() {
                rows.owners.push(id);
                rows.owner_hashes.push(v.content_hash.as_str());
                rows.positions.push(position as i32);
                rows.starts.push(range.start as i32);
                rows.ends.push(range.end as i32);
                rows.dims.push(v.dims as i32);
                rows.embeddings.push(Vector::from(embedding.clone()));
            }
        }
        rows
    }
}

/// Replaces the chunk vectors of each solution whose content is still the one they were
/// computed from (matched by id and content hash in the database) and records what they were
/// computed from: three statements sent at once, one round trip however many solutions there
/// are. How many solutions got theirs.
async fn replace_vectors(
    tx: &Transaction<'_>,
    rows: &VectorRows<'_>,
) -> Result<usize, tokio_postgres::Error> {
    let clear = tx
        .prepare_cached(
            "DELETE FROM kb_chunks c USING kb_solutions s, \
             UNNEST($1::text[], $2::text[]) AS t(id, hash) \
             WHERE s.id = t.id AND s.content_hash = t.hash AND c.solution_seq = s.seq",
        )
        .await?;
    let insert = tx
        .prepare_cached(
            "INSERT INTO kb_chunks (solution_seq, position, start_byte, end_byte, dims, \
             embedding) SELECT s.seq, t.position, t.start_byte, t.end_byte, t.dims, t.embedding \
             FROM UNNEST($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::int[], \
             $7::vector[]) AS t(id, hash, position, start_byte, end_byte, dims, embedding) \
             JOIN kb_solutions s ON s.id = t.id AND s.content_hash = t.hash",
        )
        .await?;
    let mark = tx
        .prepare_cached(
            "INSERT INTO kb_embedded (solution_seq, hash, model, dims) \
             SELECT s.seq, t.hash, t.model, t.dims \
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::int[]) \
             AS t(id, hash, model, dims) \
             JOIN kb_solutions s ON s.id = t.id AND s.content_hash = t.hash \
             ON CONFLICT (solution_seq) DO UPDATE SET hash = excluded.hash, \
             model = excluded.model, dims = excluded.dims",
        )
        .await?;
    let by_id: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&rows.ids, &rows.hashes];
    let chunks: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
        &rows.owners,
        &rows.owner_hashes,
        &rows.positions,
        &rows.starts,
        &rows.ends,
        &rows.dims,
        &rows.embeddings,
    ];
    let marks: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
        [&rows.ids, &rows.hashes, &rows.models, &rows.sizes];
    // Polled in this order, so sent in it: the database runs them one after the other.
    let (_, _, marked) = futures::try_join!(
        tx.execute(&clear, &by_id),
        tx.execute(&insert, &chunks),
        tx.execute(&mark, &marks),
    )?;
    Ok(marked as usize)
}

/// A batch of vectors: the solutions' rows locked, their vectors replaced
/// ([`replace_vectors`]), the generation bumped — sent at once, one round trip for the batch.
/// How many solutions got theirs.
async fn store_vectors(
    tx: &Transaction<'_>,
    batch: &[(&str, &ChunkVectors)],
    relaxed: bool,
) -> Result<usize, tokio_postgres::Error> {
    let rows = VectorRows::of(batch);
    let lock = tx
        .prepare_cached(
            "SELECT s.seq FROM kb_solutions s JOIN UNNEST($1::text[], $2::text[]) AS t(id, hash) \
             ON s.id = t.id AND s.content_hash = t.hash ORDER BY s.seq FOR UPDATE OF s",
        )
        .await?;
    // A re-embed of many solutions commits each batch without waiting for its flush to disk: a
    // crash loses at most the last batches (never half of one), which the next re-embed
    // computes again.
    let relax = async {
        if relaxed {
            tx.batch_execute("SET LOCAL synchronous_commit = off").await
        } else {
            Ok(())
        }
    };
    let by_id: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&rows.ids, &rows.hashes];
    // Polled in this order, so sent in it.
    let (_, _, marked, _) = futures::try_join!(
        relax,
        tx.query(&lock, &by_id),
        replace_vectors(tx, &rows),
        bump_generation(tx, "kb"),
    )?;
    Ok(marked)
}

impl SolutionStore for PostgresStore {
    fn location(&self) -> String {
        self.db.location().to_string()
    }

    fn generation(&self) -> Result<i64, KbError> {
        // Every search starts with it: prepared once per connection, one round trip after.
        self.read(async |c| {
            let statement = c
                .prepare_cached("SELECT value FROM devlens_generations WHERE corpus = 'kb'")
                .await?;
            c.query_one(&statement, &[]).await.map(|r| r.get(0))
        })
    }

    fn put(
        &self,
        solution: &Solution,
        vectors: Option<&ChunkVectors>,
    ) -> Result<(bool, bool), KbError> {
        if let Some(v) = vectors {
            self.db.block_on(self.ensure_index(v.dims))?;
        }
        self.write(async |tx| self.put_in(tx, solution, vectors).await)
    }

    fn set_vectors(&self, batch: &[(String, ChunkVectors)]) -> Result<usize, KbError> {
        let dims: HashSet<usize> = batch.iter().map(|(_, v)| v.dims).collect();
        for d in dims {
            self.db.block_on(self.ensure_index(d))?;
        }
        // An id given twice: its last vectors, as one at a time would have left.
        let mut seen = HashSet::new();
        let mut chosen: Vec<(&str, &ChunkVectors)> = batch
            .iter()
            .rev()
            .filter(|(id, _)| seen.insert(id.as_str()))
            .map(|(id, v)| (id.as_str(), v))
            .collect();
        chosen.reverse();
        let relaxed = {
            let bulk = self.bulk_dims.lock().unwrap_or_else(|p| p.into_inner());
            chosen.iter().all(|(_, v)| bulk.contains(&v.dims))
        };
        self.transaction(async |tx| {
            store_vectors(tx, &chosen, relaxed)
                .await
                .map_err(|e| self.pg(e))
        })
    }

    fn get(&self, id: &str) -> Result<Option<Solution>, KbError> {
        self.read(async |c| {
            c.query_opt(
                &format!("SELECT {COLUMNS} FROM kb_solutions WHERE id = $1"),
                &[&id],
            )
            .await
            .map(|r| r.as_ref().map(row_to_solution))
        })
    }

    fn get_many(&self, ids: &[&str]) -> Result<Vec<Solution>, KbError> {
        let ids: Vec<&str> = ids.to_vec();
        self.read(async |c| {
            let statement = c
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM kb_solutions WHERE id = ANY($1)"
                ))
                .await?;
            c.query(&statement, &[&ids])
                .await
                .map(|rows| rows.iter().map(row_to_solution).collect())
        })
    }

    fn all(&self) -> Result<Vec<Solution>, KbError> {
        self.read(async |c| {
            c.query(
                &format!("SELECT {COLUMNS} FROM kb_solutions ORDER BY created_at, seq"),
                &[],
            )
            .await
            .map(|rows| rows.iter().map(row_to_solution).collect())
        })
    }

    fn delete(&self, id: &str) -> Result<bool, KbError> {
        let now = devlens_core::clock::now_rfc3339();
        self.write(async |tx| delete_in(tx, id, None, &now).await.map_err(|e| self.pg(e)))
    }

    fn put_if(
        &self,
        solution: &Solution,
        vectors: Option<&ChunkVectors>,
        expected: Option<&str>,
    ) -> Result<Option<(bool, bool)>, KbError> {
        if let Some(v) = vectors {
            self.db.block_on(self.ensure_index(v.dims))?;
        }
        self.write(async |tx| {
            let stored: Option<String> = tx
                .query_opt(
                    "SELECT updated_at FROM kb_solutions WHERE id = $1 FOR UPDATE",
                    &[&solution.id],
                )
                .await
                .map_err(|e| self.pg(e))?
                .map(|r| r.get(0));
            if stored.as_deref() != expected {
                return Ok(None);
            }
            self.put_in(tx, solution, vectors).await.map(Some)
        })
    }

    fn delete_if(&self, id: &str, expected: &str, deleted_at: &str) -> Result<bool, KbError> {
        self.write(async |tx| {
            delete_in(tx, id, Some(expected), deleted_at)
                .await
                .map_err(|e| self.pg(e))
        })
    }

    fn tombstone(&self, id: &str) -> Result<Option<String>, KbError> {
        self.read(async |c| {
            c.query_opt("SELECT deleted_at FROM kb_tombstones WHERE id = $1", &[&id])
                .await
                .map(|r| r.map(|r| r.get(0)))
        })
    }

    fn tombstones(&self) -> Result<Vec<(String, String)>, KbError> {
        self.read(async |c| {
            c.query("SELECT id, deleted_at FROM kb_tombstones ORDER BY id", &[])
                .await
                .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn versions(&self) -> Result<Vec<(String, String)>, KbError> {
        self.read(async |c| {
            c.query(
                "SELECT id, updated_at FROM kb_solutions ORDER BY created_at, seq",
                &[],
            )
            .await
            .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn keyword_versions(&self) -> Result<Vec<(String, u64)>, KbError> {
        self.read(async |c| {
            c.query(
                "SELECT id, content_hash, updated_at, summary FROM kb_solutions",
                &[],
            )
            .await
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        let summary: Option<String> = r.get(3);
                        (
                            r.get(0),
                            super::keyword_version(r.get(1), r.get(2), summary.as_deref()),
                        )
                    })
                    .collect()
            })
        })
    }

    fn import(&self, solutions: &[Solution]) -> Result<ImportCounts, KbError> {
        let mut ids = HashSet::new();
        let distinct = solutions.iter().all(|s| ids.insert(s.id.as_str()));
        self.write(async |tx| {
            let mut counts = ImportCounts::default();
            if !distinct {
                // An id twice in one file: one at a time, so the later copy replaces the
                // earlier as it would have been saved.
                for s in solutions {
                    match self.put_in(tx, s, None).await? {
                        (false, _) => counts.created += 1,
                        (true, true) => counts.replaced += 1,
                        (true, false) => counts.unchanged += 1,
                    }
                }
                return Ok(counts);
            }
            let mut created = Vec::new();
            for part in solutions.chunks(IMPORT_STATEMENT_ROWS) {
                self.import_part(tx, part, &mut counts, &mut created)
                    .await?;
            }
            counts.created = created.len();
            copy_new(tx, &created).await.map_err(|e| self.pg(e))?;
            Ok(counts)
        })
    }

    fn needing_vectors(
        &self,
        model: &str,
        after: Option<&SolutionCursor>,
        limit: usize,
    ) -> Result<Vec<Solution>, KbError> {
        let limit = limit.min(i64::MAX as usize) as i64;
        let (created, id) = after.map_or(("", ""), |(c, i)| (c.as_str(), i.as_str()));
        self.read(async |c| {
            // Walks kb_solutions_created_id from the cursor, in byte order (the "C" collation,
            // as SQLite's) so "" sorts before any id whatever the database's collation.
            // Prepared once per connection: a re-embed asks it for every batch.
            let walk = c
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM kb_solutions s \
                     WHERE (created_at COLLATE \"C\", id COLLATE \"C\") > ($3, $4) \
                     AND NOT EXISTS (SELECT 1 FROM kb_embedded e WHERE e.solution_seq = s.seq \
                     AND e.model = $1 AND e.hash = s.content_hash) \
                     ORDER BY created_at COLLATE \"C\", id COLLATE \"C\" LIMIT $2"
                ))
                .await?;
            c.query(&walk, &[&model, &limit, &created, &id])
                .await
                .map(|rows| rows.iter().map(row_to_solution).collect())
        })
    }

    fn prevailing_model(&self) -> Result<Option<String>, KbError> {
        self.read(async |c| {
            c.query_opt(
                "SELECT model FROM kb_embedded GROUP BY model ORDER BY count(*) DESC, model \
                 LIMIT 1",
                &[],
            )
            .await
            .map(|r| r.map(|r| r.get(0)))
        })
    }

    fn counts(&self, model: Option<&str>) -> Result<Counts, KbError> {
        self.read(async |c| {
            let row = c
                .query_one(
                    "SELECT (SELECT count(*) FROM kb_solutions), \
                     (SELECT count(*) FROM kb_embedded e JOIN kb_solutions s \
                     ON s.seq = e.solution_seq WHERE e.model = $1 AND e.hash = s.content_hash)",
                    &[&model],
                )
                .await?;
            Ok(Counts {
                solutions: row.get::<_, i64>(0) as usize,
                embedded: row.get::<_, i64>(1) as usize,
            })
        })
    }

    fn keyword(&self, terms: &[String], limit: usize) -> Result<Vec<(String, f32)>, KbError> {
        let query = any_of(terms);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let limit = limit.min(i64::MAX as usize) as i64;
        self.read(async |c| {
            self.fill_keywords(c).await?;
            c.query(
                "SELECT id, ts_rank(keywords, q) FROM kb_solutions, \
                 websearch_to_tsquery('english', $1) q WHERE keywords @@ q \
                 ORDER BY ts_rank(keywords, q) DESC, seq LIMIT $2",
                &[&query, &limit],
            )
            .await
            .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn solution_vectors(
        &self,
        id: &str,
        model: &str,
        dims: usize,
    ) -> Result<Vec<ChunkVector>, KbError> {
        let dims = dims as i32;
        self.read(async |c| {
            c.query(
                "SELECT c.start_byte, c.end_byte, c.embedding FROM kb_chunks c \
                 JOIN kb_solutions s ON s.seq = c.solution_seq \
                 JOIN kb_embedded e ON e.solution_seq = s.seq \
                 WHERE s.id = $1 AND e.model = $2 AND e.dims = $3 \
                 AND e.hash = s.content_hash AND c.dims = $3 ORDER BY c.position",
                &[&id, &model, &dims],
            )
            .await
            .map(|rows| rows.iter().map(chunk_vector).collect())
        })
    }

    fn vectors(&self, model: &str, dims: usize) -> Result<LoadedVectors, KbError> {
        let dims = dims as i32;
        self.read(async |c| {
            let rows = c
                .query(
                    "SELECT s.id, c.start_byte, c.end_byte, c.embedding FROM kb_chunks c \
                     JOIN kb_solutions s ON s.seq = c.solution_seq \
                     JOIN kb_embedded e ON e.solution_seq = s.seq \
                     WHERE e.model = $1 AND e.dims = $2 AND c.dims = $2 \
                     AND e.hash = s.content_hash ORDER BY c.solution_seq, c.position",
                    &[&model, &dims],
                )
                .await?;
            let mut loaded = LoadedVectors {
                rows: Vec::with_capacity(rows.len()),
                data: Vec::with_capacity(rows.len() * dims as usize),
            };
            for r in &rows {
                let vector: Vector = r.get(3);
                loaded.rows.push((r.get(0), byte_range(r, 1)));
                loaded.data.extend_from_slice(vector.as_slice());
            }
            Ok(loaded)
        })
    }

    fn begin_bulk_vectors(&self, dims: usize, solutions: usize) -> Result<(), KbError> {
        if solutions < BULK_INDEX_MIN {
            return Ok(());
        }
        let stored: i64 = self.read(async |c| {
            c.query_one(
                "SELECT count(DISTINCT solution_seq) FROM kb_chunks WHERE dims = $1",
                &[&(dims as i32)],
            )
            .await
            .map(|r| r.get(0))
        })?;
        if solutions.saturating_mul(4) < stored as usize {
            return Ok(());
        }
        self.bulk_dims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(dims);
        self.indexed_dims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&dims);
        self.read(async |c| {
            c.batch_execute(&format!(
                "DROP INDEX IF EXISTS {}",
                devlens_search::postgres::hnsw_index_name("kb_chunks", dims)
            ))
            .await
        })
    }

    fn end_bulk_vectors(&self, dims: usize) -> Result<(), KbError> {
        let was_bulk = self
            .bulk_dims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&dims);
        if !was_bulk {
            return Ok(());
        }
        // pgvector builds the graph in memory when it fits in maintenance_work_mem, many times
        // faster than on disk: room for every vector and its neighbours, for this session only.
        let vectors: i64 = self.read(async |c| {
            c.query_one(
                "SELECT count(*) FROM kb_chunks WHERE dims = $1",
                &[&(dims as i32)],
            )
            .await
            .map(|r| r.get(0))
        })?;
        let megabytes = ((vectors as usize * (dims * 4 + 600) * 3 / 2) >> 20).clamp(64, 2048);
        self.db.block_on(async {
            let client = self.client().await?;
            client
                .batch_execute(&format!("SET maintenance_work_mem = '{megabytes}MB'"))
                .await
                .map_err(|e| self.pg(e))?;
            let built = devlens_search::postgres::ensure_hnsw_index(&client, "kb_chunks", dims)
                .await
                .map_err(|e| self.pg(e));
            let reset = client
                .batch_execute("RESET maintenance_work_mem")
                .await
                .map_err(|e| self.pg(e));
            built.and(reset)
        })?;
        self.indexed_dims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(dims);
        Ok(())
    }

    fn searches_vectors(&self) -> bool {
        true
    }

    fn nearest(
        &self,
        model: &str,
        dims: usize,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<NearChunk>, KbError> {
        if query.len() != dims || dims == 0 || limit == 0 {
            return Ok(Vec::new());
        }
        // The expression and the operator must be the index's (kb_chunks_ip_<dims>: inner
        // product, the cosine similarity of unit vectors) for the planner to use it; dims is a
        // number, never text from outside.
        // More than the session's ef_search would not come back from the index anyway.
        let candidates =
            (limit * CANDIDATES_PER_RESULT).min(devlens_search::postgres::HNSW_EF_SEARCH) as i64;
        // The candidates' best chunks, best first, then a lookup by key per candidate until
        // `limit` current ones are found: ordered in a subquery (whose order the outer query
        // keeps), the nested loop stops at the limit instead of looking up every candidate.
        // `OFFSET 0` keeps the planner from flattening the steps: misjudging the filters on
        // kb_solutions, it would otherwise scan the whole table once per candidate. Prepared
        // once per connection: parsing and planning it cost more than a millisecond a search.
        let sql = format!(
            "WITH nearest AS MATERIALIZED ( \
                SELECT solution_seq, start_byte, end_byte, \
                    (-(embedding::vector({dims}) <#> $1))::real AS similarity \
                FROM kb_chunks WHERE dims = {dims} \
                ORDER BY embedding::vector({dims}) <#> $1 LIMIT $2 \
             ) \
             SELECT s.id, b.start_byte, b.end_byte, b.similarity FROM ( \
                SELECT * FROM ( \
                    SELECT DISTINCT ON (solution_seq) solution_seq, start_byte, end_byte, \
                        similarity \
                    FROM nearest ORDER BY solution_seq, similarity DESC \
                ) best ORDER BY similarity DESC, solution_seq OFFSET 0 \
             ) b \
             CROSS JOIN LATERAL (SELECT s.id FROM kb_solutions s \
                JOIN kb_embedded e ON e.solution_seq = s.seq \
                WHERE s.seq = b.solution_seq AND e.model = $3 \
                AND e.dims = {dims} AND e.hash = s.content_hash OFFSET 0) s \
             ORDER BY b.similarity DESC, b.solution_seq LIMIT $4"
        );
        let query = Vector::from(query.to_vec());
        let limit = limit as i64;
        self.read(async |c| {
            let statement = c.prepare_cached(&sql).await?;
            c.query(&statement, &[&query, &candidates, &model, &limit])
                .await
                .map(|rows| {
                    rows.iter()
                        .map(|r| (r.get(0), byte_range(r, 1), r.get(3)))
                        .collect()
                })
        })
    }
}

/// How many nearest chunks the HNSW index hands over per solution asked for: a solution has
/// several chunks, and candidates of another model or of an edited text are filtered after.
const CANDIDATES_PER_RESULT: usize = 4;

fn byte_range(r: &tokio_postgres::Row, first: usize) -> Range<usize> {
    let start: i32 = r.get(first);
    let end: i32 = r.get(first + 1);
    start.max(0) as usize..end.max(0) as usize
}

fn chunk_vector(r: &tokio_postgres::Row) -> ChunkVector {
    let vector: Vector = r.get(2);
    (byte_range(r, 0), vector.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_terms_cannot_be_read_as_query_syntax() {
        assert_eq!(
            any_of(&["\"use\"".into(), "-effect".into(), "it's".into()]),
            "use or effect or its"
        );
        assert_eq!(any_of(&["\"\"".into()]), "");
    }
}
