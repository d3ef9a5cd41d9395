//! The server store's database: PostgreSQL with pgvector, shared by every corpus.
//!
//! A team server keeps the knowledge base, library docs and API indexes in one database
//! (`[store] url = "postgres://…"` or `DEVLENS_DATABASE_URL`), so several devlens servers see
//! each other's writes at once. [`ServerDatabase`] owns the connection pool and runs the
//! migrations: the shared part here (`migrations/*.sql`, embedded), and each corpus's own
//! [`Schema`], which lives beside its store's SQL in its crate and is applied when that store
//! first connects; each corpus implements its store trait on top of it.
//!
//! The store traits are synchronous (the embedded SQLite stores are), so queries run on a small
//! runtime of the database's own: the pool's connection tasks live there, and a store call
//! blocks its caller until the answer is in — from plain threads and from async code alike
//! (on a multi-threaded runtime the worker hands its other tasks over first, as for SQLite).

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use deadpool_postgres::{Client, Transaction};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
pub use pgvector::Vector;
pub use tokio_postgres::{self, types::ToSql};

/// A part of the server database that one crate owns: its tables, created and changed by its
/// migrations, which live beside the crate's SQL (`<crate>/migrations/*.sql`, embedded). The
/// runner here applies each owner's migrations the first time a store of that owner connects,
/// and records them per owner in `devlens_migrations`.
#[derive(Debug)]
pub struct Schema {
    /// Who owns these tables: `devlens` (the shared part below), `kb`, `docs`, `api`.
    pub owner: &'static str,
    /// In order; versions count from 1 per owner.
    pub migrations: &'static [Migration],
}

/// One step of a [`Schema`]: plain SQL, so `psql -f` applies the files too.
#[derive(Debug)]
pub struct Migration {
    pub version: i64,
    pub description: &'static str,
    pub sql: &'static str,
}

/// What every corpus shares: the pgvector extension and the generation counters. Applied before
/// any owner's own migrations.
pub const SHARED_SCHEMA: Schema = Schema {
    owner: "devlens",
    migrations: &[Migration {
        version: 1,
        description: "pgvector, generations",
        sql: include_str!("../migrations/0001_shared.sql"),
    }],
};

/// The one migration every corpus shared before each crate owned its own (`version`, checksum
/// of its text): a database that has them holds every owner's tables as these first versions
/// create them, and its bookkeeping is rewritten per owner ([`adopt_single_schema`]).
const SINGLE_SCHEMA_MIGRATIONS: &[(i64, &str)] =
    &[(1, "612d0cf1c79fab10"), (2, "2a9682f98d2e9761")];

/// The checksum of an owner's migration that [`adopt_single_schema`] recorded: the owner's first
/// run replaces it with its text's.
const ADOPTED: &str = "adopted";

/// One key for every devlens: servers starting together migrate one after the other.
const MIGRATION_LOCK: i64 = 0x0064_6576_6c65_6e73;

/// How many candidates an HNSW search walks (pgvector's default, 40, would cap every nearest
/// query at 40 rows).
pub const HNSW_EF_SEARCH: usize = 200;

/// The pool's size: a server's requests are short; long writes (an ingest) hold one.
const POOL_SIZE: usize = 8;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a call waits for a free connection before saying the database is busy.
const WAIT_TIMEOUT: Duration = Duration::from_secs(60);

/// The database of a devlens team server.
pub struct ServerDatabase {
    location: String,
    /// The pool and the runtime its connections live on, or why there are none (a malformed
    /// URL): every call then answers with that reason.
    state: Result<(Pool, tokio::runtime::Runtime), String>,
    /// The owners whose schema this process has checked (a failure is tried again on the next
    /// call: the database may come up later).
    migrated: Mutex<HashSet<&'static str>>,
}

impl std::fmt::Debug for ServerDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerDatabase")
            .field("location", &self.location)
            .finish()
    }
}

impl Drop for ServerDatabase {
    fn drop(&mut self) {
        // Dropping a runtime blocks on its tasks, which panics inside async code.
        let state = std::mem::replace(&mut self.state, Err(String::new()));
        if let Ok((pool, runtime)) = state {
            pool.close();
            runtime.shutdown_background();
        }
    }
}

impl ServerDatabase {
    /// Prepares a pool for the database at `url` (`postgres://user:password@host:port/db`).
    /// Nothing connects yet: the first call does, and applies the migrations. A malformed URL
    /// is reported by every call (and by [`ServerDatabase::check`], which a server runs at start).
    pub fn open(url: &str) -> Arc<Self> {
        Arc::new(Self {
            location: redacted(url),
            state: pool_for(url),
            migrated: Mutex::new(HashSet::new()),
        })
    }

    /// The database's address without its password, for messages and status.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Runs `work` (queries on [`ServerDatabase::client`]) to completion and returns its
    /// output, from sync or async callers.
    pub fn block_on<F: Future>(&self, work: F) -> F::Output {
        crate::sqlite::blocking(|| {
            // Connections are made (and their tasks spawned) on the database's runtime, whose
            // worker drives their sockets; the caller's thread only polls the queries.
            let _inside = self.state.as_ref().ok().map(|(_, runtime)| runtime.enter());
            futures::executor::block_on(work)
        })
    }

    /// A pooled connection, with the shared schema and `schema` (the caller's own tables)
    /// migrated first.
    pub async fn client(&self, schema: &'static Schema) -> Result<Client, String> {
        let pool = match &self.state {
            Ok((pool, _)) => pool,
            Err(why) => return Err(why.clone()),
        };
        let mut client = pool.get().await.map_err(|e| self.pool_error(e))?;
        for schema in [&SHARED_SCHEMA, schema] {
            let ready = self
                .migrated
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(schema.owner);
            if !ready {
                migrate(&mut client, schema)
                    .await
                    .map_err(|e| format!("{}: {e}", self.location))?;
                self.migrated
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(schema.owner);
            }
        }
        Ok(client)
    }

    /// Connects and applies the shared schema now: a server checks its database at start (each
    /// store applies its own tables' migrations when it first connects).
    pub fn check(&self) -> Result<(), String> {
        self.block_on(async { self.client(&SHARED_SCHEMA).await.map(drop) })
    }

    /// What the database takes on disk, in bytes (`pg_database_size`).
    pub fn size_bytes(&self) -> Result<i64, String> {
        self.block_on(async {
            let client = self.client(&SHARED_SCHEMA).await?;
            client
                .query_one("SELECT pg_database_size(current_database())", &[])
                .await
                .map(|row| row.get(0))
                .map_err(|e| self.describe(&e))
        })
    }

    /// A database error in words: the server's message, detail and hint when it sent them.
    pub fn describe(&self, e: &tokio_postgres::Error) -> String {
        format!("{} ({})", describe(e), self.location)
    }

    fn pool_error(&self, e: deadpool_postgres::PoolError) -> String {
        use deadpool_postgres::PoolError;
        match e {
            PoolError::Backend(e) => format!(
                "cannot use the database at {}: {}. Is PostgreSQL running there, and are the \
                 URL's user, password and database right? ([store] url or DEVLENS_DATABASE_URL)",
                self.location,
                describe(&e)
            ),
            PoolError::Timeout(_) => format!(
                "the database at {} did not answer in time (all {POOL_SIZE} connections busy or \
                 the server unreachable); try again, or check that PostgreSQL is up",
                self.location
            ),
            other => format!("cannot use the database at {}: {other}", self.location),
        }
    }
}

/// The pool (no connection made yet) and its runtime for `url`.
fn pool_for(url: &str) -> Result<(Pool, tokio::runtime::Runtime), String> {
    let location = redacted(url);
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
        format!(
            "the database URL {location} is not valid ({e}); expected \
             postgres://USER:PASSWORD@HOST:PORT/DATABASE in [store] url or DEVLENS_DATABASE_URL"
        )
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    config.application_name("devlens");
    // Every session walks enough HNSW candidates for a knowledge-base search (its depth times
    // the chunks per solution it allows for) without a SET per query.
    let options = match config.get_options() {
        Some(given) => format!("{given} -c hnsw.ef_search={HNSW_EF_SEARCH}"),
        None => format!("-c hnsw.ef_search={HNSW_EF_SEARCH}"),
    };
    config.options(&options);
    let manager = Manager::from_config(
        config,
        tls_connector()?,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(POOL_SIZE)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(WAIT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| format!("cannot set up a connection pool for {location}: {e}"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("devlens-postgres")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the database runtime: {e}"))?;
    Ok((pool, runtime))
}

/// A database error in words.
pub fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut text = format!("{} ({})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                text.push_str(&format!("; {detail}"));
            }
            if let Some(hint) = db.hint() {
                text.push_str(&format!("; hint: {hint}"));
            }
            text
        }
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(inner) = source {
                text.push_str(&format!(": {inner}"));
                source = inner.source();
            }
            text
        }
    }
}

/// TLS for `sslmode=prefer` (the default) and `require`: the system's trusted roots. A server
/// without TLS (a local one) is reached in the clear under `prefer`, as psql does.
fn tls_connector() -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    // ring, devlens' one crypto provider (devlens_core::tls says why); the connector needs it.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_platform_verifier())
        .map_err(|e| format!("cannot set up TLS for the database: {e}"))?
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// `url` with its password replaced: what messages, logs and status show.
pub fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            // Query parameters may carry a password too (`?password=`).
            if parsed.query().is_some() {
                parsed.set_query(None);
            }
            parsed.to_string()
        }
        // Key-value form (`host=… password=…`): only the host is safe to show.
        Err(_) => url
            .split_whitespace()
            .filter(|kv| kv.starts_with("host=") || kv.starts_with("dbname="))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Applies the migrations of `schema` this database lacks, in one transaction under an advisory
/// lock, and refuses a database a newer devlens migrated (its schema may not be what this one
/// expects).
async fn migrate(client: &mut Client, schema: &Schema) -> Result<(), String> {
    let pg = |e: tokio_postgres::Error| describe(&e);
    let tx = client.transaction().await.map_err(pg)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg)?;
    let single_schema = tx
        .query_opt(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() \
             AND table_name = 'devlens_migrations'",
            &[],
        )
        .await
        .map_err(pg)?
        .is_some()
        && tx
            .query_opt(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() \
                 AND table_name = 'devlens_migrations' AND column_name = 'owner'",
                &[],
            )
            .await
            .map_err(pg)?
            .is_none();
    if single_schema {
        adopt_single_schema(&tx).await?;
    }
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS devlens_migrations (
            owner TEXT NOT NULL,
            version BIGINT NOT NULL,
            description TEXT NOT NULL,
            checksum TEXT NOT NULL,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (owner, version)
        )",
    )
    .await
    .map_err(pg)?;
    let applied: Vec<(i64, String)> = tx
        .query(
            "SELECT version, checksum FROM devlens_migrations WHERE owner = $1",
            &[&schema.owner],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let owner = schema.owner;
    let newest_known = schema.migrations.last().map_or(0, |m| m.version);
    if let Some((newer, _)) = applied.iter().find(|(v, _)| *v > newest_known) {
        return Err(format!(
            "the database was set up by a newer devlens (the {owner} schema is at version \
             {newer}, this one knows up to {newest_known}); upgrade devlens on this machine"
        ));
    }
    for Migration {
        version,
        description,
        sql,
    } in schema.migrations
    {
        let checksum = checksum(sql);
        match applied.iter().find(|(v, _)| v == version) {
            Some((_, stored)) if *stored == checksum => continue,
            // The owner's text is known only to the owner's crate: the first run after the
            // adoption records it.
            Some((_, stored)) if stored == ADOPTED => {
                tx.execute(
                    "UPDATE devlens_migrations SET checksum = $3, description = $4 \
                     WHERE owner = $1 AND version = $2",
                    &[&owner, version, &checksum, description],
                )
                .await
                .map_err(pg)?;
                continue;
            }
            Some(_) => {
                return Err(format!(
                    "the database's {owner} schema version {version} ({description}) differs \
                     from this devlens's; it was set up by another build of devlens"
                ));
            }
            None => {}
        }
        tx.batch_execute(sql).await.map_err(|e| {
            let why = describe(&e);
            if why.contains("extension \"vector\"") {
                format!(
                    "cannot enable pgvector ({why}): install the pgvector extension on the \
                     PostgreSQL server, or have a superuser run CREATE EXTENSION vector"
                )
            } else {
                format!("cannot apply the {owner} schema version {version} ({description}): {why}")
            }
        })?;
        record(&tx, owner, *version, description, &checksum).await?;
    }
    tx.commit().await.map_err(pg)
}

async fn record(
    tx: &Transaction<'_>,
    owner: &str,
    version: i64,
    description: &str,
    checksum: &str,
) -> Result<(), String> {
    tx.execute(
        "INSERT INTO devlens_migrations (owner, version, description, checksum) \
         VALUES ($1, $2, $3, $4)",
        &[&owner, &version, &description, &checksum],
    )
    .await
    .map(drop)
    .map_err(|e| describe(&e))
}

/// The owners' migrations that the single shared migration of `version` made: its tables are
/// theirs, as those versions create them.
fn single_schema_covers(version: i64) -> &'static [(&'static str, i64)] {
    match version {
        1 => &[("devlens", 1), ("kb", 1), ("docs", 1), ("api", 1)],
        2 => &[("docs", 2)],
        _ => &[],
    }
}

/// Rewrites the bookkeeping of a database set up when one migration held every corpus's tables
/// (`devlens_migrations` without owners) into per-owner rows; the tables are left as they are
/// (the owners' first versions create exactly them). Rows it does not recognise are refused.
async fn adopt_single_schema(tx: &Transaction<'_>) -> Result<(), String> {
    let pg = |e: tokio_postgres::Error| describe(&e);
    let rows: Vec<(i64, String)> = tx
        .query("SELECT version, checksum FROM devlens_migrations", &[])
        .await
        .map_err(pg)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    for (version, checksum) in &rows {
        if !SINGLE_SCHEMA_MIGRATIONS.contains(&(*version, checksum.as_str())) {
            return Err(format!(
                "the database's schema version {version} is not one this devlens knows; it was \
                 set up by a newer or another build of devlens"
            ));
        }
    }
    tx.batch_execute("ALTER TABLE devlens_migrations RENAME TO devlens_migrations_single")
        .await
        .map_err(pg)?;
    tx.batch_execute(
        "CREATE TABLE devlens_migrations (
            owner TEXT NOT NULL,
            version BIGINT NOT NULL,
            description TEXT NOT NULL,
            checksum TEXT NOT NULL,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (owner, version)
        )",
    )
    .await
    .map_err(pg)?;
    for (version, _) in &rows {
        for (owner, owner_version) in single_schema_covers(*version) {
            let description = "made by the single shared migration";
            record(tx, owner, *owner_version, description, ADOPTED).await?;
        }
    }
    tx.batch_execute("DROP TABLE devlens_migrations_single")
        .await
        .map_err(pg)
}

fn checksum(sql: &str) -> String {
    // FNV-1a: enough to tell two texts of a migration apart; nothing adversarial here.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in sql.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Marks a write to `corpus` (`kb`, `docs`) inside the transaction that makes it: other servers
/// compare the generation with the one they read to know when to reload.
pub async fn bump_generation(
    tx: &Transaction<'_>,
    corpus: &str,
) -> Result<(), tokio_postgres::Error> {
    // Prepared once per connection: a long write (a re-embed) bumps it for every batch.
    let bump = tx
        .prepare_cached("UPDATE devlens_generations SET value = value + 1 WHERE corpus = $1")
        .await?;
    tx.execute(&bump, &[&corpus]).await.map(|_| ())
}

/// The name of `table`'s HNSW index for vectors of `dims` dimensions.
pub fn hnsw_index_name(table: &str, dims: usize) -> String {
    format!("{table}_ip_{dims}")
}

/// Creates, once per database and dimension count, the HNSW index of `table`'s `embedding`
/// column for vectors of `dims` dimensions (pgvector indexes a fixed dimension; the column has
/// none, since the model is a setting). Cheap when it exists.
///
/// By inner product (`<#>`), not cosine distance: devlens stores unit vectors (every embedder's
/// are normalised), whose inner product is their cosine similarity, and pgvector 0.6 computes it
/// with one sum where cosine takes three — a 100,000-vector build 10% faster here, the same
/// ranking.
pub async fn ensure_hnsw_index(
    client: &Client,
    table: &str,
    dims: usize,
) -> Result<(), tokio_postgres::Error> {
    debug_assert!(table.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
    let sql = format!(
        "CREATE INDEX IF NOT EXISTS {} ON {table} USING hnsw \
         ((embedding::vector({dims})) vector_ip_ops) WHERE dims = {dims}",
        hnsw_index_name(table, dims)
    );
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    let result = client.batch_execute(&sql).await;
    client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redacted("postgres://devlens:s3cret@db.example.com:5432/devlens"),
            "postgres://devlens:***@db.example.com:5432/devlens"
        );
        assert_eq!(
            redacted("postgres://db.example.com/devlens?password=s3cret"),
            "postgres://db.example.com/devlens"
        );
        assert_eq!(
            redacted("host=db user=x password=s3cret dbname=devlens"),
            "host=db dbname=devlens"
        );
    }

    #[test]
    fn a_bad_url_says_what_is_expected() {
        let err = ServerDatabase::open("postgres://u:pw@host:notaport/db")
            .check()
            .unwrap_err();
        assert!(err.contains("postgres://USER:PASSWORD@HOST"), "{err}");
        assert!(!err.contains("pw@"), "{err}");
    }
}
