//! The team server's store: one row per index name in PostgreSQL.

use std::sync::{Arc, Mutex};

use devlens_search::postgres::{Migration, Schema};
use devlens_search::{StoreError, VectorIndex};

use super::SemanticIndexStore;
use crate::semantic::{IndexMeta, IndexedEndpoint, SemanticIndex};

/// The API indexes' table in the server database.
pub(crate) const SCHEMA: Schema = Schema {
    owner: "api",
    migrations: &[Migration {
        version: 1,
        description: "API indexes",
        sql: include_str!("../../../migrations/0001_api_indexes.sql"),
    }],
};

/// Semantic indexes in a team server's database (`api_indexes`, this crate's migrations): one
/// row per name, replaced whole by one statement, so every server sharing the database sees the
/// old index or the new one; the row's version changes with each save, as `CURRENT` does for
/// the file store.
#[derive(Debug, Clone)]
pub struct PostgresIndexStore {
    db: Arc<devlens_search::postgres::ServerDatabase>,
}

impl PostgresIndexStore {
    pub fn new(db: Arc<devlens_search::postgres::ServerDatabase>) -> Self {
        Self { db }
    }

    /// How many API indexes the database holds.
    pub fn count(&self) -> Result<i64, StoreError> {
        self.read(async |c| {
            let row = c.query_one("SELECT count(*) FROM api_indexes", &[]).await?;
            Ok(row.get(0))
        })
    }

    fn read<T>(
        &self,
        work: impl AsyncFnOnce(
            &devlens_search::postgres::Client,
        ) -> Result<T, devlens_search::postgres::tokio_postgres::Error>,
    ) -> Result<T, StoreError> {
        self.db.block_on(async {
            let client = self
                .db
                .client(&SCHEMA)
                .await
                .map_err(StoreError::Database)?;
            work(&client)
                .await
                .map_err(|e| StoreError::Database(self.db.describe(&e)))
        })
    }
}

impl SemanticIndexStore for PostgresIndexStore {
    fn version(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.read(async |c| {
            c.query_opt("SELECT version FROM api_indexes WHERE name = $1", &[&name])
                .await
                .map(|r| r.map(|r| r.get(0)))
        })
    }

    fn load(&self, name: &str) -> Result<Option<SemanticIndex>, StoreError> {
        let row = self.read(async |c| {
            c.query_opt(
                "SELECT meta, items, dims, vectors FROM api_indexes WHERE name = $1",
                &[&name],
            )
            .await
        })?;
        let Some(row) = row else { return Ok(None) };
        let corrupt = |reason: String| StoreError::Corrupt {
            path: std::path::PathBuf::from(format!("api_indexes/{name}")),
            reason,
        };
        let meta: IndexMeta =
            serde_json::from_str(row.get(0)).map_err(|e| corrupt(format!("meta: {e}")))?;
        let items: Vec<IndexedEndpoint> =
            serde_json::from_str(row.get(1)).map_err(|e| corrupt(format!("items: {e}")))?;
        let dims = row.get::<_, i32>(2).max(0) as usize;
        let raw: &[u8] = row.get(3);
        let data: Vec<f32> = devlens_search::vector::from_le_bytes(raw).collect();
        let vectors = VectorIndex::from_flat(dims, data)
            .filter(|v| v.len() == items.len())
            .ok_or_else(|| corrupt("vector count does not match items".into()))?;
        Ok(Some(SemanticIndex {
            meta,
            items,
            vectors,
            rows_cache: Mutex::new(None),
        }))
    }

    fn save(&self, name: &str, index: &SemanticIndex) -> Result<(), StoreError> {
        let to_json = |what: &str, value: Result<String, serde_json::Error>| {
            value.map_err(|e| StoreError::Database(format!("cannot serialise the {what}: {e}")))
        };
        let meta = to_json("metadata", serde_json::to_string(&index.meta))?;
        let items = to_json("endpoints", serde_json::to_string(&index.items))?;
        let raw = devlens_search::vector::to_le_bytes(index.vectors.as_flat());
        let dims = index.vectors.dims() as i32;
        self.read(async |c| {
            c.execute(
                "INSERT INTO api_indexes (name, version, meta, items, dims, vectors) \
                 VALUES ($1, gen_random_uuid()::text, $2, $3, $4, $5) \
                 ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, \
                 meta = EXCLUDED.meta, items = EXCLUDED.items, dims = EXCLUDED.dims, \
                 vectors = EXCLUDED.vectors, saved_at = now()",
                &[&name, &meta, &items, &dims, &raw],
            )
            .await
            .map(drop)
        })
    }

    fn remove(&self, name: &str) -> Result<(), StoreError> {
        self.read(async |c| {
            c.execute("DELETE FROM api_indexes WHERE name = $1", &[&name])
                .await
                .map(drop)
        })
    }
}
