//! The embedded store's SQLite files (library docs, the knowledge base), all opened alike.

use std::path::Path;

use rusqlite::Connection;

/// Opens (creating the folder and file when needed) the SQLite database at `path` and applies
/// `schema`. WAL, so a long write (an ingest, a re-embedding) does not block readers (a server
/// answering queries meanwhile); a 10 s busy timeout for writers in other processes; foreign
/// keys on. The error is the message, for the caller's error type.
pub fn open(path: &Path, schema: &str) -> Result<Connection, String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    let conn = Connection::open(path).map_err(|e| e.to_string())?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(|e| e.to_string())?;
    conn.execute_batch(schema).map_err(|e| e.to_string())?;
    Ok(conn)
}

/// Runs SQLite or CPU work from async code: on a multi-threaded runtime the worker hands its
/// other tasks over first (`block_in_place`); elsewhere (a current-thread runtime, no runtime)
/// it just runs, as `block_in_place` would panic there.
pub fn blocking<T>(work: impl FnOnce() -> T) -> T {
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_thread {
        tokio::task::block_in_place(work)
    } else {
        work()
    }
}
