//! Library documentation for devlens: a local, offline Context7.
//!
//! Ingest a library's docs (Markdown, MDX, reStructuredText, HTML, plain text) from a folder or
//! a URL; find a library's id from what people call it ([`Docs::resolve`]); answer a question
//! with the best sections and code examples assembled within an exact cl100k token budget
//! ([`Docs::query`], the `query_docs` tool).
//!
//! - Reading ([`read`], [`crawl`]) turns every format into the same [`blocks::Block`]s;
//!   [`chunk`] cuts them into chunks that keep their heading path (`h1 > h2 > h3`), with code
//!   blocks whole. [`ingest`] embeds them and stores a version.
//! - A [`DocsStore`] keeps libraries, versions and chunks with their vectors ([`store`];
//!   embedded: one SQLite file under the data dir): a version is replaced in one transaction
//!   once its section vectors are computed, so queries never re-embed the docs; its chunks' own
//!   vectors follow in batches of their own transactions ([`refine`]: before `docs add`
//!   returns, in the background in a server, resumed after a kill).
//! - [`search`] ranks a version with BM25 and, when the chunks were embedded, cosine similarity,
//!   fused by reciprocal rank; without an embedding model ingestion and queries fall back to
//!   keyword ranking and say so. [`query`] assembles the context best-first and never exceeds
//!   the limit; [`cache`] keeps answers (in memory, and in Redis when several servers share).

pub mod blocks;
pub mod browse;
pub mod cache;
pub mod chunk;
pub mod crawl;
mod dependency_docs;
pub mod deps;
mod dts;
mod error;
pub mod eval;
pub mod git;
mod html;
pub mod ingest;
mod markdown;
pub mod metrics;
pub mod package;
mod pydoc;
mod pymeta;
pub mod query;
pub mod read;
pub mod redis;
pub mod refine;
pub mod resolve;
pub mod robots;
mod rst;
mod rustdoc;
pub mod search;
pub mod sitemap;
pub mod store;
pub use devlens_search::tokens;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use devlens_core::outbound::OutboundPolicy;
use devlens_core::{Config, DataDir, Report};
use devlens_embed::{Embedder, LazyEmbedder};

pub use browse::{DocsPage, LibraryOutline, PageOutline, PageSection};
pub use cache::{CACHE_CAPACITY, CacheOutcome, CacheStats, redis_ca_file, redis_url};
pub use chunk::ChunkKind;
pub use dependency_docs::{DependencyList, ListedDependency};
pub use deps::{Dependency, Ecosystem, WorkspaceDeps};
pub use error::DocsError;
pub use eval::{EvalReport, GoldenQuestion, parse_golden};
pub use git::GitSource;
pub use ingest::{DocsSource, EmbeddingPlan, IngestReport, IngestRequest, IngestStage};
pub use query::{QueryDocsInput, QueryDocsOutput, QueryRequest, refining_note};
pub use refine::{RefineAll, RefineReport};
pub use resolve::{LibraryMatch, Resolved};
pub use store::{
    DocsStore, LibraryInfo, PostgresDocsStore, RefineProgress, Refinement, SqliteDocsStore,
};

use crate::cache::{CacheKey, new_cache};
use crate::search::VersionIndex;

/// The version label used when none is given at ingestion.
pub const DEFAULT_VERSION: &str = "latest";

/// Checks a library id: a slug (`react`) or a Context7-style path (`/facebook/react`).
pub fn validate_id(id: &str) -> Result<String, DocsError> {
    let trimmed = id.trim();
    let body = trimmed.strip_prefix('/').unwrap_or(trimmed);
    let ok = !body.is_empty()
        && body.len() <= 200
        && body.split('/').all(|segment| {
            !segment.is_empty()
                && !segment.starts_with('.')
                && segment.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
                })
        });
    if ok {
        Ok(trimmed.to_string())
    } else {
        Err(DocsError::InvalidId { id: id.to_string() })
    }
}

/// Where the embedded store lives under a data dir.
pub fn registry_path(data_dir: &DataDir) -> PathBuf {
    data_dir.subdir("docs").join("docs.sqlite")
}

/// The library docs: the store, loaded search indexes, the embedder and the answer cache.
pub struct Docs {
    store: Arc<dyn DocsStore>,
    embedder: Arc<LazyEmbedder>,
    indexes: Mutex<HashMap<(String, String), Arc<VersionIndex>>>,
    cache: Mutex<lru::LruCache<CacheKey, Arc<QueryDocsOutput>>>,
    /// The shared second tier, when a Redis URL is configured.
    redis: Option<redis::RedisCache>,
    cache_stats: CacheStats,
    metrics: metrics::QueryMetrics,
    /// Whether an ingest embeds each prose chunk besides its section (`[docs] passage_vectors`).
    passage_vectors: bool,
    /// Adds chunk vectors after a version is searchable.
    refiner: refine::Refiner,
    /// Whether an ingest leaves them to a background task (a server) or waits for them.
    background_refinement: bool,
    /// What a crawl may fetch: public hosts, plus the private ones the user allowed.
    outbound: OutboundPolicy,
    /// The workspaces' lock files, parsed once per change.
    locks: deps::LockCache,
    /// One on-demand ingest of a dependency at a time (two first questions read it once).
    dependency_ingest: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Docs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Docs").field("store", &self.store).finish()
    }
}

/// One library in a list.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ListedLibrary {
    pub id: String,
    pub name: String,
    /// Newest first.
    pub versions: Vec<String>,
    /// Chunks (text, code and examples) of the newest version.
    pub snippets: usize,
    /// Versions whose chunks are still getting vectors of their own, and how far they are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refining: Vec<RefiningVersion>,
}

/// A version still getting its chunk vectors.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RefiningVersion {
    pub version: String,
    #[serde(flatten)]
    pub progress: RefineProgress,
}

/// Every library, by id (`devlens docs list`, `GET /api/docs/libraries`).
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct LibraryList {
    pub libraries: Vec<ListedLibrary>,
}

impl Report for LibraryList {
    fn to_text(&self) -> String {
        if self.libraries.is_empty() {
            return "no libraries yet: add one with `devlens docs add ID --path DIR`".to_string();
        }
        self.libraries
            .iter()
            .map(|l| {
                let mut line = format!(
                    "{}  {}  [{}]  {} snippets",
                    l.id,
                    l.name,
                    l.versions.join(", "),
                    l.snippets
                );
                for r in &l.refining {
                    line.push_str(&format!(
                        "\n  {}: still adding passage vectors, {} of {} done",
                        r.version,
                        query::grouped(r.progress.stored),
                        query::grouped(r.progress.planned)
                    ));
                }
                line
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Docs {
    /// The docs of the configured data dir (the embedded store), with the configured embedder
    /// (loaded on first use) and the configured Redis cache.
    pub fn open(config: &Config) -> Result<Self, DocsError> {
        let embedder = Arc::new(LazyEmbedder::new(
            config.file.embedding.clone(),
            config.data_dir.clone(),
        ));
        let store = SqliteDocsStore::open(&registry_path(&config.data_dir))?;
        Self::with_store(Arc::new(store), config, embedder)
    }

    /// The docs in `store`, embedding with `embedder` (which a host may share with its other
    /// corpora), with the Redis cache `config` names.
    pub fn with_store(
        store: Arc<dyn DocsStore>,
        config: &Config,
        embedder: Arc<LazyEmbedder>,
    ) -> Result<Self, DocsError> {
        let redis = redis_url(config)
            .map(|url| {
                redis::RedisCache::new(
                    redis::RedisTarget::parse(&url)?,
                    redis_ca_file(config).as_deref(),
                )
            })
            .transpose()?;
        Ok(Self {
            refiner: refine::Refiner::new(Arc::clone(&store), Arc::clone(&embedder)),
            background_refinement: false,
            store,
            embedder,
            indexes: Mutex::new(HashMap::new()),
            cache: new_cache(),
            redis,
            cache_stats: CacheStats::default(),
            metrics: metrics::QueryMetrics::default(),
            passage_vectors: config.file.docs.embeds_passages(),
            outbound: config.outbound(),
            locks: deps::LockCache::default(),
            dependency_ingest: tokio::sync::Mutex::new(()),
        })
    }

    /// Docs over the store file `registry_file` with a given embedder (`None`: keyword search
    /// only) and no Redis cache; a crawl fetches public hosts only (see [`Docs::with_outbound`]).
    pub fn with_embedder(
        registry_file: &Path,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, DocsError> {
        let store: Arc<dyn DocsStore> = Arc::new(SqliteDocsStore::open(registry_file)?);
        let embedder = Arc::new(LazyEmbedder::ready(
            embedder.ok_or_else(|| "no embedding model was given".to_string()),
        ));
        Ok(Self {
            refiner: refine::Refiner::new(Arc::clone(&store), Arc::clone(&embedder)),
            background_refinement: false,
            store,
            embedder,
            indexes: Mutex::new(HashMap::new()),
            cache: new_cache(),
            redis: None,
            cache_stats: CacheStats::default(),
            metrics: metrics::QueryMetrics::default(),
            passage_vectors: true,
            outbound: OutboundPolicy::public_only(),
            locks: deps::LockCache::default(),
            dependency_ingest: tokio::sync::Mutex::new(()),
        })
    }

    /// Crawls through `policy` (which private hosts a crawl may fetch) instead of the one the
    /// configuration gives.
    pub fn with_outbound(mut self, policy: OutboundPolicy) -> Self {
        self.outbound = policy;
        self
    }

    /// Embeds prose chunks besides their sections (`true`, the default) or sections only.
    pub fn with_passage_vectors(mut self, on: bool) -> Self {
        self.passage_vectors = on;
        self
    }

    /// Shares answers through the Redis server at `url` (`redis://[:password@]host[:port][/db]`,
    /// `rediss://` for TLS, trusting `ca_file` besides the system's roots) besides the in-process
    /// cache.
    pub fn with_redis(mut self, url: &str, ca_file: Option<&Path>) -> Result<Self, DocsError> {
        self.redis = Some(redis::RedisCache::new(
            redis::RedisTarget::parse(url)?,
            ca_file,
        )?);
        Ok(self)
    }

    /// The shared cache, when one is configured.
    pub fn redis(&self) -> Option<&redis::RedisCache> {
        self.redis.as_ref()
    }

    /// Where the docs are stored.
    pub fn store(&self) -> &dyn DocsStore {
        self.store.as_ref()
    }

    /// The embedder, or why there is none.
    pub async fn embedder(&self) -> Result<Arc<dyn Embedder>, String> {
        self.embedder.get().await
    }

    /// Every library, by id.
    pub fn list(&self) -> Result<LibraryList, DocsError> {
        let refinements = self.store.refinements()?;
        Ok(LibraryList {
            libraries: self
                .store
                .libraries()?
                .into_iter()
                .map(|l| ListedLibrary {
                    refining: refinements
                        .iter()
                        .filter(|r| r.library_id == l.id)
                        .map(|r| RefiningVersion {
                            version: r.version.clone(),
                            progress: r.progress,
                        })
                        .collect(),
                    id: l.id,
                    name: l.name,
                    versions: l.versions,
                    snippets: l.snippets,
                })
                .collect(),
        })
    }

    /// The libraries `name` may mean, best first.
    pub fn resolve(&self, name: &str, query: Option<&str>) -> Result<Resolved, DocsError> {
        if name.trim().is_empty() {
            return Err(DocsError::InvalidInput(
                "libraryName is required: the library or package name, e.g. `react` or \
                 `@vue/runtime-core`"
                    .into(),
            ));
        }
        Ok(Resolved {
            matches: resolve::resolve(&self.store.libraries()?, name, query),
            name: name.to_string(),
        })
    }

    /// Removes a library (every version), or one version of it. Returns whether anything was
    /// there.
    pub fn remove(&self, id: &str, version: Option<&str>) -> Result<bool, DocsError> {
        self.store.remove(id, version)
    }
}
