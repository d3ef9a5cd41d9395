//! What a team server's database holds, counted by the stores that own its tables.

use std::sync::Arc;

use serde::Serialize;

use devlens_openapi::semantic::PostgresIndexStore;
use devlens_search::postgres::ServerDatabase;

use crate::AppError;

/// What the server database holds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreCounts {
    pub api_indexes: i64,
    pub docs_libraries: i64,
    pub docs_chunks: i64,
    pub solutions: i64,
    /// What the database takes on disk.
    pub size_mib: f64,
}

/// API indexes, docs libraries and chunks, solutions, and the database's size, each counted by
/// the store that owns its tables (which applies its migrations first).
pub fn counts(db: &Arc<ServerDatabase>) -> Result<StoreCounts, AppError> {
    let failed = |message: String| AppError::new(devlens_core::ErrorKind::Upstream, message);
    let api_indexes = PostgresIndexStore::new(Arc::clone(db))
        .count()
        .map_err(|e| failed(e.to_string()))?;
    let (docs_libraries, docs_chunks) =
        devlens_docs::PostgresDocsStore::new(Arc::clone(db)).counts()?;
    let solutions = devlens_kb::PostgresStore::new(Arc::clone(db)).count()?;
    let size = db.size_bytes().map_err(failed)?;
    Ok(StoreCounts {
        api_indexes,
        docs_libraries,
        docs_chunks,
        solutions,
        size_mib: size as f64 / 1048576.0,
    })
}
