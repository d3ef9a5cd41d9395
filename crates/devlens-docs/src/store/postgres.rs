//! The server [`DocsStore`]: PostgreSQL with pgvector (the `docs_*` tables, created by this
//! crate's `migrations/`, which devlens-search's runner applies when the store first connects).
//!
//! As with SQLite, replacing a version deletes and inserts its rows in one transaction: every
//! server sharing the database sees the old version or the new one, and a failed or killed
//! ingest leaves the old one. Generations come from a sequence, so two servers ingesting at once
//! never hand out the same one.

use std::sync::Arc;

use devlens_search::postgres::{
    Client, Migration, Schema, ServerDatabase, Vector, bump_generation, tokio_postgres,
};

use super::{
    DocsStore, LibraryInfo, LoadedVersion, NewVersion, PassageBatch, RefineProgress, Refinement,
    StoredChunk, VectorsReader, VersionStamp, refine_progress, stored_fingerprint,
};
use crate::DocsError;
use crate::chunk::ChunkKind;

/// The docs tables in the server database.
pub(crate) const SCHEMA: Schema = Schema {
    owner: "docs",
    migrations: &[
        Migration {
            version: 1,
            description: "libraries, versions, chunks",
            sql: include_str!("../../migrations/0001_docs.sql"),
        },
        Migration {
            version: 2,
            description: "passage vectors",
            sql: include_str!("../../migrations/0002_passage_vectors.sql"),
        },
        Migration {
            version: 3,
            description: "chunk vectors added after a version is searchable",
            sql: include_str!("../../migrations/0003_refinement.sql"),
        },
    ],
};

/// Rows per insert: big enough to keep round trips few, small enough to keep one statement's
/// parameters in memory twice over.
const INSERT_BATCH: usize = 2_000;

/// Library docs in a team server's database.
#[derive(Debug)]
pub struct PostgresDocsStore {
    db: Arc<ServerDatabase>,
}

impl PostgresDocsStore {
    pub fn new(db: Arc<ServerDatabase>) -> Self {
        Self { db }
    }

    /// How many libraries and chunks the database holds (every version's).
    pub fn counts(&self) -> Result<(i64, i64), DocsError> {
        self.read(async |c| {
            let row = c
                .query_one(
                    "SELECT (SELECT count(*) FROM docs_libraries), (SELECT count(*) FROM docs_chunks)",
                    &[],
                )
                .await?;
            Ok((row.get(0), row.get(1)))
        })
    }

    fn err(&self, message: impl Into<String>) -> DocsError {
        DocsError::Database {
            location: self.db.location().to_string(),
            message: message.into(),
        }
    }

    fn pg(&self, e: tokio_postgres::Error) -> DocsError {
        self.err(devlens_search::postgres::describe(&e))
    }

    async fn client(&self) -> Result<Client, DocsError> {
        self.db
            .client(&SCHEMA)
            .await
            .map_err(|message| self.err(message))
    }

    fn read<T>(
        &self,
        work: impl AsyncFnOnce(&Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, DocsError> {
        self.db.block_on(async {
            let client = self.client().await?;
            work(&client).await.map_err(|e| self.pg(e))
        })
    }
}

impl DocsStore for PostgresDocsStore {
    fn location(&self) -> String {
        self.db.location().to_string()
    }

    fn libraries(&self) -> Result<Vec<LibraryInfo>, DocsError> {
        self.read(async |c| {
            let libraries = c
                .query(
                    "SELECT id, name, description, source, updated_at FROM docs_libraries \
                     ORDER BY id",
                    &[],
                )
                .await?;
            let versions = c
                .query(
                    "SELECT library_id, version, chunk_count FROM docs_versions \
                     ORDER BY library_id, generation DESC",
                    &[],
                )
                .await?;
            Ok(libraries
                .iter()
                .map(|r| {
                    let id: String = r.get(0);
                    let mine: Vec<(String, i32)> = versions
                        .iter()
                        .filter(|v| v.get::<_, &str>(0) == id)
                        .map(|v| (v.get(1), v.get(2)))
                        .collect();
                    LibraryInfo {
                        name: r.get(1),
                        description: r.get(2),
                        source: r.get(3),
                        updated_at: r.get(4),
                        snippets: mine.first().map_or(0, |v| v.1.max(0) as usize),
                        versions: mine.into_iter().map(|v| v.0).collect(),
                        id,
                    }
                })
                .collect())
        })
    }

    fn library(&self, id: &str) -> Result<Option<LibraryInfo>, DocsError> {
        Ok(self.libraries()?.into_iter().find(|l| l.id == id))
    }

    fn generation(&self, id: &str, version: &str) -> Result<Option<i64>, DocsError> {
        Ok(self.stamp(id, version)?.map(|s| s.generation))
    }

    fn stamp(&self, id: &str, version: &str) -> Result<Option<VersionStamp>, DocsError> {
        self.read(async |c| {
            c.query_opt(
                "SELECT generation, fingerprint, revision, passages_stored, passages_planned \
                 FROM docs_versions WHERE library_id = $1 AND version = $2",
                &[&id, &version],
            )
            .await
            .map(|r| {
                r.map(|r| VersionStamp {
                    generation: r.get(0),
                    fingerprint: r.get(1),
                    revision: r.get(2),
                    refining: refine_progress(r.get::<_, i32>(3).into(), r.get::<_, i32>(4).into()),
                })
            })
        })
    }

    fn replace_version(&self, new: &NewVersion<'_>) -> Result<i64, DocsError> {
        let now = devlens_core::clock::now_rfc3339();
        let fingerprint = stored_fingerprint(new);
        let (model, dims) = match new.embeddings {
            Some(e) => (Some(e.model), e.sections.first().map_or(0, Vec::len)),
            None => (None, 0),
        };
        let progress = new.embeddings.map(|e| e.progress()).unwrap_or_default();
        let planned = progress.planned.min(i32::MAX as usize) as i32;
        let stored = progress.stored.min(i32::MAX as usize) as i32;
        self.db.block_on(async {
            let pg = |e| self.pg(e);
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(pg)?;
            let generation: i64 = tx
                .query_one("SELECT nextval('docs_version_generation')", &[])
                .await
                .map_err(pg)?
                .get(0);
            tx.execute(
                "INSERT INTO docs_libraries (id, name, description, source, created_at, updated_at) \
                 VALUES ($1, $2, COALESCE($3, ''), $4, $5, $5) \
                 ON CONFLICT (id) DO UPDATE SET name = $2, \
                 description = COALESCE($3, docs_libraries.description), source = $4, \
                 updated_at = $5",
                &[&new.library_id, &new.name, &new.description, &new.source, &now],
            )
            .await
            .map_err(pg)?;
            tx.execute(
                "DELETE FROM docs_versions WHERE library_id = $1 AND version = $2",
                &[&new.library_id, &new.version],
            )
            .await
            .map_err(pg)?;
            tx.execute(
                "INSERT INTO docs_versions (library_id, version, source, pages, chunk_count, \
                 model, dims, generation, ingested_at, fingerprint, passages_planned, \
                 passages_stored) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                &[
                    &new.library_id,
                    &new.version,
                    &new.source,
                    &(new.pages.min(i32::MAX as usize) as i32),
                    &(new.chunks.len() as i32),
                    &model,
                    &(dims as i32),
                    &generation,
                    &now,
                    &fingerprint,
                    &planned,
                    &stored,
                ],
            )
            .await
            .map_err(pg)?;
            let insert = tx
                .prepare(
                    "INSERT INTO docs_chunks (library_id, version, position, section, anchor, \
                     kind, language, source, url, content, tokens, hash, embedding, \
                     passage_embedding) \
                     SELECT $1, $2, * FROM UNNEST($3::int[], $4::text[], $5::text[], \
                     $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[], \
                     $12::text[], $13::vector[], $14::vector[])",
                )
                .await
                .map_err(pg)?;
            for (batch, chunks) in new.chunks.chunks(INSERT_BATCH).enumerate() {
                let first = batch * INSERT_BATCH;
                let positions: Vec<i32> = (first..first + chunks.len()).map(|p| p as i32).collect();
                let column = |f: fn(&StoredChunk) -> &str| -> Vec<&str> {
                    chunks.iter().map(f).collect()
                };
                let languages: Vec<Option<&str>> =
                    chunks.iter().map(|c| c.language.as_deref()).collect();
                let tokens: Vec<i32> = chunks
                    .iter()
                    .map(|c| c.tokens.min(i32::MAX as usize) as i32)
                    .collect();
                let embeddings: Vec<Option<Vector>> = (first..first + chunks.len())
                    .map(|i| {
                        new.embeddings
                            .and_then(|e| e.sections.get(i))
                            .map(|v| Vector::from(v.clone()))
                    })
                    .collect();
                let passages: Vec<Option<Vector>> = (first..first + chunks.len())
                    .map(|i| {
                        new.embeddings
                            .and_then(|e| e.passages.get(i))
                            .and_then(Option::as_ref)
                            .map(|v| Vector::from(v.clone()))
                    })
                    .collect();
                tx.execute(
                    &insert,
                    &[
                        &new.library_id,
                        &new.version,
                        &positions,
                        &column(|c| &c.section),
                        &column(|c| &c.anchor),
                        &column(|c| c.kind.as_str()),
                        &languages,
                        &column(|c| &c.source),
                        &column(|c| &c.url),
                        &column(|c| &c.content),
                        &tokens,
                        &column(|c| &c.hash),
                        &embeddings,
                        &passages,
                    ],
                )
                .await
                .map_err(pg)?;
            }
            bump_generation(&tx, "docs").await.map_err(pg)?;
            devlens_search::crash::crash_point(devlens_search::crash::DOCS_BEFORE_COMMIT);
            tx.commit().await.map_err(pg)?;
            Ok(generation)
        })
    }

    fn load_version(&self, id: &str, version: &str) -> Result<Option<LoadedVersion>, DocsError> {
        self.db.block_on(async {
            let pg = |e| self.pg(e);
            let mut client = self.client().await?;
            // One snapshot: the version row and its chunks as of the same moment.
            let tx = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(pg)?;
            let Some(head) = tx
                .query_opt(
                    "SELECT generation, model, dims, revision FROM docs_versions \
                     WHERE library_id = $1 AND version = $2",
                    &[&id, &version],
                )
                .await
                .map_err(pg)?
            else {
                return Ok(None);
            };
            let generation: i64 = head.get(0);
            let model: Option<String> = head.get(1);
            let dims = head.get::<_, i32>(2).max(0) as usize;
            let revision: i64 = head.get(3);
            let rows = tx
                .query(
                    "SELECT section, anchor, kind, language, source, url, content, tokens, hash, \
                     embedding, passage_embedding FROM docs_chunks \
                     WHERE library_id = $1 AND version = $2 ORDER BY position",
                    &[&id, &version],
                )
                .await
                .map_err(pg)?;
            tx.commit().await.map_err(pg)?;
            let mut chunks = Vec::with_capacity(rows.len());
            let mut vectors = VectorsReader::new(model, dims);
            for r in &rows {
                let kind: &str = r.get(2);
                chunks.push(StoredChunk {
                    section: r.get(0),
                    anchor: r.get(1),
                    kind: ChunkKind::parse(kind).unwrap_or(ChunkKind::Text),
                    language: r.get(3),
                    source: r.get(4),
                    url: r.get(5),
                    content: r.get(6),
                    tokens: r.get::<_, i32>(7).max(0) as usize,
                    hash: r.get(8),
                });
                if vectors.wanted() {
                    let section = r.get::<_, Option<Vector>>(9);
                    let passage = r.get::<_, Option<Vector>>(10);
                    vectors.push(
                        section.as_ref().map(Vector::as_slice),
                        passage.as_ref().map(Vector::as_slice),
                    );
                }
            }
            Ok(Some(LoadedVersion {
                generation,
                revision,
                chunks,
                vectors: vectors.finish(),
            }))
        })
    }

    fn remove(&self, id: &str, version: Option<&str>) -> Result<bool, DocsError> {
        self.db.block_on(async {
            let pg = |e| self.pg(e);
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(pg)?;
            let removed = match version {
                Some(v) => {
                    tx.execute(
                        "DELETE FROM docs_versions WHERE library_id = $1 AND version = $2",
                        &[&id, &v],
                    )
                    .await
                }
                None => {
                    tx.execute("DELETE FROM docs_libraries WHERE id = $1", &[&id])
                        .await
                }
            }
            .map_err(pg)?;
            bump_generation(&tx, "docs").await.map_err(pg)?;
            tx.commit().await.map_err(pg)?;
            Ok(removed > 0)
        })
    }

    fn refinements(&self) -> Result<Vec<Refinement>, DocsError> {
        self.read(async |c| {
            let rows = c
                .query(
                    "SELECT library_id, version, generation, passages_stored, passages_planned \
                     FROM docs_versions WHERE passages_stored < passages_planned \
                     ORDER BY generation",
                    &[],
                )
                .await?;
            Ok(rows
                .iter()
                .filter_map(|r| {
                    Some(Refinement {
                        library_id: r.get(0),
                        version: r.get(1),
                        generation: r.get(2),
                        progress: refine_progress(
                            r.get::<_, i32>(3).into(),
                            r.get::<_, i32>(4).into(),
                        )?,
                    })
                })
                .collect())
        })
    }

    fn add_passages(&self, batch: &PassageBatch<'_>) -> Result<Option<Refinement>, DocsError> {
        self.db.block_on(async {
            let pg = |e| self.pg(e);
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(pg)?;
            // The version's row locked for the batch: a re-ingest or removal waits for it, and
            // one that came first is seen here.
            let generation: Option<i64> = tx
                .query_opt(
                    "SELECT generation FROM docs_versions WHERE library_id = $1 AND version = $2 \
                     FOR UPDATE",
                    &[&batch.library_id, &batch.version],
                )
                .await
                .map_err(pg)?
                .map(|r| r.get(0));
            if generation != Some(batch.generation) {
                return Ok(None);
            }
            let positions: Vec<i32> = batch
                .passages
                .iter()
                .map(|(p, _)| (*p).min(i32::MAX as usize) as i32)
                .collect();
            let vectors: Vec<Vector> = batch
                .passages
                .iter()
                .map(|(_, v)| Vector::from(v.clone()))
                .collect();
            tx.execute(
                "UPDATE docs_chunks c SET passage_embedding = n.v \
                 FROM UNNEST($3::int[], $4::vector[]) AS n(p, v) \
                 WHERE c.library_id = $1 AND c.version = $2 AND c.position = n.p \
                 AND c.passage_embedding IS NULL",
                &[&batch.library_id, &batch.version, &positions, &vectors],
            )
            .await
            .map_err(pg)?;
            // Counted from the rows: a vector another server stored first counts once.
            let row = tx
                .query_one(
                    "UPDATE docs_versions SET passages_stored = (SELECT count(*) FROM docs_chunks \
                     WHERE library_id = $1 AND version = $2 AND passage_embedding IS NOT NULL), \
                     passages_planned = $3, revision = revision + 1 \
                     WHERE library_id = $1 AND version = $2 \
                     RETURNING passages_stored, passages_planned",
                    &[
                        &batch.library_id,
                        &batch.version,
                        &(batch.planned.min(i32::MAX as usize) as i32),
                    ],
                )
                .await
                .map_err(pg)?;
            let progress = RefineProgress {
                stored: row.get::<_, i32>(0).max(0) as usize,
                planned: row.get::<_, i32>(1).max(0) as usize,
            };
            let fingerprint = batch.fingerprint.filter(|_| !progress.pending());
            tx.execute(
                "UPDATE docs_versions SET fingerprint = $3 WHERE library_id = $1 AND version = $2",
                &[&batch.library_id, &batch.version, &fingerprint],
            )
            .await
            .map_err(pg)?;
            bump_generation(&tx, "docs").await.map_err(pg)?;
            devlens_search::crash::crash_point(super::REFINE_BEFORE_COMMIT);
            tx.commit().await.map_err(pg)?;
            Ok(Some(Refinement {
                library_id: batch.library_id.to_string(),
                version: batch.version.to_string(),
                generation: batch.generation,
                progress,
            }))
        })
    }
}
