//! Library documentation for devlens: a local, offline Context7.
//!
//! Ingest a library's docs (Markdown, MDX, reStructuredText, HTML, plain text) from a folder or
//! a URL; find a library's id from what people call it ([`Docs::resolve`]); answer a question
//! with the best sections and code examples assembled within an exact cl100k token budget
//! ([`Docs::query`], seed 003's `query_docs`).
//!
//! - Parsing turns every format into the same [`blocks::Block`]s; [`chunk`] cuts them into chunks
//!   that keep their heading path (`h1 > h2 > h3`), with code blocks whole.
//! - The [`registry`] is one SQLite file under the data dir: a version is replaced in one
//!   transaction, embeddings included, so queries never re-embed the docs.
//! - [`search`] ranks a version with BM25 and, when the chunks were embedded, cosine similarity,
//!   fused by reciprocal rank; without an embedding model ingestion and queries fall back to
//!   keyword ranking and say so.
//! - [`query::assemble`] fills the context best-first and never exceeds the limit.

pub mod blocks;
pub mod chunk;
pub mod crawl;
mod error;
pub mod eval;
mod html;
pub mod ingest;
mod markdown;
pub mod metrics;
pub mod query;
pub mod redis;
pub mod registry;
pub mod resolve;
pub mod robots;
mod rst;
pub mod search;
pub mod sitemap;
pub use devlens_search::tokens;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use devlens_core::{Config, DataDir};
use devlens_embed::{Embedder, LazyEmbedder};
use devlens_search::sqlite::blocking;

pub use chunk::ChunkKind;
pub use error::DocsError;
pub use eval::{EvalReport, GoldenQuestion, parse_golden};
pub use query::{QueryDocsInput, QueryDocsOutput, QueryRequest};
pub use registry::{LibraryInfo, Registry};
pub use resolve::{LibraryMatch, Resolved};

use crate::query::{Candidate, LibrarySummary};
use crate::registry::NewVersion;
use crate::search::VersionIndex;

/// The version label used when none is given at ingestion.
pub const DEFAULT_VERSION: &str = "latest";

/// Where the docs of a library come from.
#[derive(Debug, Clone)]
pub enum DocsSource {
    /// A folder (read recursively) or one file.
    Path(PathBuf),
    /// A docs site crawled from this page with the default limits.
    Url(String),
    /// A docs site crawled from `url` within `limits`.
    Crawl {
        url: String,
        limits: crawl::CrawlLimits,
    },
}

/// `devlens docs add`.
#[derive(Debug, Clone)]
pub struct IngestRequest {
    pub id: String,
    pub source: DocsSource,
    pub version: Option<String>,
    pub name: Option<String>,
    pub description: Option<String>,
}

/// What ingestion is doing, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngestStage {
    Reading,
    Embedding,
}

/// What an ingest stored.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IngestReport {
    pub id: String,
    pub name: String,
    pub version: String,
    pub pages: usize,
    pub chunks: usize,
    /// Sections (page and heading path) the chunks belong to.
    pub sections: usize,
    pub duplicates: usize,
    /// Files passed over (not a docs format, too large, not UTF-8).
    pub skipped: usize,
    /// Pages of a crawl that could not be fetched (`url: reason`), skipped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// Whether the chunks were embedded (semantic ranking available).
    pub embedded: bool,
    /// Distinct section texts run through the model in this ingest.
    pub embedded_texts: usize,
    /// Section texts whose vectors came from the stored docs instead (unchanged sections).
    pub reused_vectors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl IngestReport {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} {}: {} pages, {} chunks ({} duplicates dropped, {} files skipped) in {:.1} s, {}",
            self.id,
            self.version,
            self.pages,
            self.chunks,
            self.duplicates,
            self.skipped,
            self.seconds,
            match &self.model {
                Some(m) => format!("embedded with {m}"),
                None => "keyword search only".into(),
            }
        );
        if !self.failed.is_empty() {
            out.push_str(&format!(
                "\n{} pages could not be fetched and were skipped:",
                self.failed.len()
            ));
            for f in self.failed.iter().take(10) {
                out.push_str(&format!("\n  {f}"));
            }
            if self.failed.len() > 10 {
                out.push_str(&format!("\n  … and {} more", self.failed.len() - 10));
            }
        }
        if let Some(notice) = &self.notice {
            out.push_str(&format!("\nnote: {notice}"));
        }
        out
    }
}

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

/// How many answers the in-process cache keeps (the least recently used go first).
pub const CACHE_CAPACITY: usize = 1024;

/// A cached answer is valid for exactly this request against exactly this stored generation of
/// the version: re-ingesting (in any process) changes the generation, so stale answers are never
/// served and need no invalidation.
type CacheKey = (QueryRequest, i64);

/// The library docs: registry, loaded search indexes, the embedder and the answer cache.
pub struct Docs {
    registry: Arc<Registry>,
    embedder: LazyEmbedder,
    indexes: Mutex<HashMap<(String, String), Arc<VersionIndex>>>,
    cache: Mutex<lru::LruCache<CacheKey, Arc<QueryDocsOutput>>>,
    /// The shared second tier, when a Redis URL is configured.
    redis: Option<redis::RedisCache>,
    cache_stats: CacheStats,
    metrics: metrics::QueryMetrics,
}

/// Counts of the answer cache, for metrics.
#[derive(Debug, Default)]
pub struct CacheStats {
    /// Answers from the in-process cache.
    pub hits: std::sync::atomic::AtomicU64,
    /// Answers from the shared Redis cache.
    pub redis_hits: std::sync::atomic::AtomicU64,
    /// Answers computed (found in neither tier).
    pub misses: std::sync::atomic::AtomicU64,
}

/// Where an answer came from, as logged (`cache` field) and counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheOutcome {
    /// The in-process cache.
    Hit,
    /// The shared Redis cache.
    Redis,
    /// Computed.
    Miss,
}

impl CacheOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Redis => "redis",
            Self::Miss => "miss",
        }
    }
}

/// The Redis URL to use: `DEVLENS_REDIS_URL`, else `[docs] redis_url`; empty means none.
pub fn redis_url(config: &Config) -> Option<String> {
    std::env::var("DEVLENS_REDIS_URL")
        .ok()
        .or_else(|| config.file.docs.redis_url.clone())
        .filter(|u| !u.trim().is_empty())
}

/// The CA to trust besides the system's for `rediss://`: `DEVLENS_REDIS_CA_FILE`, else
/// `[docs] redis_ca_file`.
pub fn redis_ca_file(config: &Config) -> Option<PathBuf> {
    std::env::var_os("DEVLENS_REDIS_CA_FILE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| config.file.docs.redis_ca_file.clone())
}

fn new_cache() -> Mutex<lru::LruCache<CacheKey, Arc<QueryDocsOutput>>> {
    let capacity =
        std::num::NonZeroUsize::new(CACHE_CAPACITY).unwrap_or(std::num::NonZeroUsize::MIN);
    Mutex::new(lru::LruCache::new(capacity))
}

impl std::fmt::Debug for Docs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Docs")
            .field("registry", &self.registry.path())
            .finish()
    }
}

/// Where the registry lives under a data dir.
pub fn registry_path(data_dir: &DataDir) -> PathBuf {
    data_dir.subdir("docs").join("docs.sqlite")
}

impl Docs {
    /// The docs of the configured data dir, with the configured embedder (loaded on first use).
    pub fn open(config: &Config) -> Result<Self, DocsError> {
        let redis = redis_url(config)
            .map(|url| {
                redis::RedisCache::new(
                    redis::RedisTarget::parse(&url)?,
                    redis_ca_file(config).as_deref(),
                )
            })
            .transpose()?;
        let registry = Registry::open(&registry_path(&config.data_dir))?;
        Ok(Self {
            registry: Arc::new(registry),
            embedder: LazyEmbedder::new(config.file.embedding.clone(), config.data_dir.clone()),
            indexes: Mutex::new(HashMap::new()),
            cache: new_cache(),
            redis,
            cache_stats: CacheStats::default(),
            metrics: metrics::QueryMetrics::default(),
        })
    }

    /// The docs of `config`'s data dir, opened once per process and data dir and shared: the
    /// MCP tools, the REST API and every session use one registry connection and one set of
    /// loaded indexes.
    pub fn shared(config: &Config) -> Result<Arc<Self>, DocsError> {
        static OPENED: std::sync::OnceLock<Mutex<HashMap<PathBuf, Arc<Docs>>>> =
            std::sync::OnceLock::new();
        let mut opened = OPENED
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let key = config.data_dir.root().to_path_buf();
        if let Some(docs) = opened.get(&key) {
            return Ok(Arc::clone(docs));
        }
        let docs = Arc::new(Self::open(config)?);
        opened.insert(key, Arc::clone(&docs));
        Ok(docs)
    }

    /// Docs over `registry_file` with a given embedder (`None`: keyword search only).
    pub fn with_embedder(
        registry_file: &Path,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, DocsError> {
        let registry = Registry::open(registry_file)?;
        Ok(Self {
            registry: Arc::new(registry),
            embedder: LazyEmbedder::ready(
                embedder.ok_or_else(|| "no embedding model was given".to_string()),
            ),
            indexes: Mutex::new(HashMap::new()),
            cache: new_cache(),
            redis: None,
            cache_stats: CacheStats::default(),
            metrics: metrics::QueryMetrics::default(),
        })
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

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The embedder, or why there is none.
    pub async fn embedder(&self) -> Result<Arc<dyn Embedder>, String> {
        self.embedder.get().await
    }

    /// Every library, by id.
    pub fn list(&self) -> Result<Vec<LibraryInfo>, DocsError> {
        self.registry.libraries()
    }

    /// The libraries `name` may mean, best first.
    pub fn resolve(&self, name: &str, query: Option<&str>) -> Result<Vec<LibraryMatch>, DocsError> {
        if name.trim().is_empty() {
            return Err(DocsError::InvalidInput(
                "libraryName is required: the library or package name, e.g. `react` or \
                 `@vue/runtime-core`"
                    .into(),
            ));
        }
        Ok(resolve::resolve(&self.registry.libraries()?, name, query))
    }

    /// Reads, chunks, embeds and stores a library version, replacing what was stored under the
    /// same id and version only once everything is ready.
    pub async fn ingest(
        &self,
        request: &IngestRequest,
        progress: &(dyn Fn(IngestStage, usize, usize) + Sync),
    ) -> Result<IngestReport, DocsError> {
        let started = Instant::now();
        let id = validate_id(&request.id)?;
        let version = request
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .unwrap_or(DEFAULT_VERSION)
            .to_string();
        if version.len() > 100 || version.chars().any(char::is_control) {
            return Err(DocsError::InvalidInput(format!(
                "invalid version `{version}`: use a short label such as `18.20` or `latest`"
            )));
        }
        let mut failed = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        let (pages, source_label) = match &request.source {
            DocsSource::Path(path) => {
                let root = path.clone();
                let reading = |done, total| progress(IngestStage::Reading, done, total);
                // Parsing and token counting are CPU work; a blocking section keeps it simple
                // (the CLI awaits it, a server calls ingest rarely).
                let pages = blocking(|| ingest::read_folder(&root, &reading))?;
                let label = std::fs::canonicalize(path)
                    .unwrap_or_else(|_| path.clone())
                    .display()
                    .to_string();
                (pages, label)
            }
            DocsSource::Url(url) | DocsSource::Crawl { url, .. } => {
                let limits = match &request.source {
                    DocsSource::Crawl { limits, .. } => *limits,
                    _ => crawl::CrawlLimits::default(),
                };
                let reading = |done, total| progress(IngestStage::Reading, done, total);
                let outcome = crawl::crawl(url, limits, &reading).await?;
                failed = outcome.failed;
                if outcome.left_over > 0 {
                    notes.push(format!(
                        "stopped at {} pages (--max-pages); {} more links were not followed",
                        limits.max_pages, outcome.left_over
                    ));
                }
                if outcome.disallowed > 0 {
                    notes.push(format!(
                        "{} links the site's robots.txt disallows were not followed \
                         (--ignore-robots follows them on a site of your own)",
                        outcome.disallowed
                    ));
                }
                if outcome.from_sitemap > 0 {
                    notes.push(format!(
                        "{} pages were added from the site's sitemap, beyond the start page's \
                         links",
                        outcome.from_sitemap
                    ));
                }
                if let Some(delay) = outcome.crawl_delay {
                    notes.push(format!(
                        "the site's robots.txt asks for a crawl delay: one page every {:.1} s",
                        delay.as_secs_f64()
                    ));
                }
                (outcome.pages, url.clone())
            }
        };
        let name = request
            .name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .or_else(|| self.registry.library(&id).ok().flatten().map(|l| l.name))
            .unwrap_or_else(|| id.rsplit('/').next().unwrap_or(&id).to_string());

        let mut embedded_texts = 0;
        let mut reused_vectors = 0;
        let (embeddings, model, notice) = match self.embedder().await {
            Ok(embedder) => {
                let (texts, rows) = embedding_texts(&pages.chunks);
                // Vectors of texts the stored docs already have (the version being replaced, else
                // the library's newest) are reused: re-ingesting unchanged docs embeds nothing.
                let registry = Arc::clone(&self.registry);
                let known = blocking(|| {
                    reusable_vectors(&registry, &id, &version, embedder.model(), &texts)
                });
                let missing: Vec<String> = texts
                    .iter()
                    .filter(|t| !known.contains_key(t.as_str()))
                    .cloned()
                    .collect();
                reused_vectors = texts.len() - missing.len();
                embedded_texts = missing.len();
                let embedding = |done, total| progress(IngestStage::Embedding, done, total);
                let embedded = if missing.is_empty() {
                    Ok(Vec::new())
                } else {
                    embedder.embed_documents(&missing, &embedding).await
                };
                match embedded {
                    Ok(vectors) if vectors.len() == missing.len() => {
                        let fresh: HashMap<&str, &Vec<f32>> =
                            missing.iter().map(String::as_str).zip(&vectors).collect();
                        // Every text is either known or fresh, by construction.
                        let by_text: Option<Vec<&Vec<f32>>> = texts
                            .iter()
                            .map(|t| {
                                known
                                    .get(t.as_str())
                                    .or_else(|| fresh.get(t.as_str()).copied())
                            })
                            .collect();
                        let per_chunk: Option<Vec<Vec<f32>>> = by_text
                            .map(|by_text| rows.iter().map(|&r| by_text[r].clone()).collect());
                        (per_chunk, Some(embedder.model().to_string()), None)
                    }
                    Ok(vectors) => {
                        return Err(DocsError::InvalidInput(format!(
                            "the embedder returned {} vectors for {} texts; nothing was stored",
                            vectors.len(),
                            missing.len()
                        )));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Err(why) => (
                None,
                None,
                Some(format!(
                    "stored for keyword search only: {why}. Ingest again once the model is \
                     installed for semantic ranking"
                )),
            ),
        };
        notes.extend(notice);
        let notice = (!notes.is_empty()).then(|| notes.join("; "));
        let registry = Arc::clone(&self.registry);
        let new = NewVersion {
            library_id: &id,
            name: &name,
            description: request.description.as_deref(),
            version: &version,
            source: &source_label,
            pages: pages.pages,
            chunks: &pages.chunks,
            embeddings: match (&model, &embeddings) {
                (Some(m), Some(v)) => Some((m.as_str(), v.as_slice())),
                _ => None,
            },
        };
        blocking(|| registry.replace_version(&new))?;
        Ok(IngestReport {
            id,
            name,
            version,
            pages: pages.pages,
            chunks: pages.chunks.len(),
            sections: pages
                .chunks
                .iter()
                .map(|c| (c.source.as_str(), c.section.as_str()))
                .collect::<std::collections::HashSet<_>>()
                .len(),
            duplicates: pages.duplicates,
            skipped: pages.skipped.len(),
            failed,
            embedded: model.is_some(),
            embedded_texts,
            reused_vectors,
            model,
            seconds: started.elapsed().as_secs_f64(),
            notice,
        })
    }

    /// The library and version a request is about, or an error naming what exists.
    fn locate(&self, id: &str, version: Option<&str>) -> Result<(LibraryInfo, String), DocsError> {
        let libraries = self.registry.libraries()?;
        let Some(library) = libraries.iter().find(|l| l.id == id).cloned() else {
            let mut closest: Vec<String> = resolve::resolve(&libraries, id, None)
                .into_iter()
                .map(|m| m.id)
                .take(5)
                .collect();
            if closest.is_empty() {
                closest =
                    devlens_core::suggest::closest(id, libraries.iter().map(|l| l.id.as_str()), 5);
            }
            return Err(DocsError::UnknownLibrary {
                id: id.to_string(),
                closest,
            });
        };
        let version = match version {
            Some(v) if library.versions.iter().any(|x| x == v) => v.to_string(),
            Some(v) => {
                return Err(DocsError::UnknownVersion {
                    id: id.to_string(),
                    version: v.to_string(),
                    available: library.versions.clone(),
                });
            }
            None => library
                .versions
                .first()
                .cloned()
                .ok_or_else(|| DocsError::UnknownLibrary {
                    id: id.to_string(),
                    closest: Vec::new(),
                })?,
        };
        Ok((library, version))
    }

    /// The search index of a version, built from the registry on first use and again whenever
    /// the version was re-ingested (by any process).
    fn index(&self, id: &str, version: &str) -> Result<Arc<VersionIndex>, DocsError> {
        let key = (id.to_string(), version.to_string());
        let generation = self.registry.generation(id, version)?;
        {
            let indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(index) = indexes.get(&key)
                && Some(index.generation) == generation
            {
                return Ok(Arc::clone(index));
            }
        }
        let loaded =
            self.registry
                .load_version(id, version)?
                .ok_or_else(|| DocsError::UnknownVersion {
                    id: id.to_string(),
                    version: version.to_string(),
                    available: Vec::new(),
                })?;
        let index = Arc::new(VersionIndex::build(loaded)?);
        self.indexes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, Arc::clone(&index));
        Ok(index)
    }

    /// Answers seed 003's `query_docs`.
    pub async fn query(&self, input: &QueryDocsInput) -> Result<QueryDocsOutput, DocsError> {
        let started = Instant::now();
        let result = match input.validate() {
            Ok(request) => self.query_traced(&request).await,
            Err(e) => Err(e),
        };
        let seconds = started.elapsed().as_secs_f64();
        self.metrics
            .record(seconds, result.as_ref().ok().map(|o| o.0.total_tokens));
        // One event per query, its facts as fields (`DEVLENS_LOG_FORMAT=json` makes them JSON).
        let latency_ms = (seconds * 1e6).round() / 1e3;
        match &result {
            Ok((o, cache)) => tracing::info!(
                library = %o.library.id,
                version = %o.library.version,
                query = %input.query,
                results = o.results.len(),
                tokens = o.total_tokens,
                cache = cache.as_str(),
                latency_ms,
                "query_docs"
            ),
            Err(e) => tracing::info!(
                library = %input.library_id,
                version = input.version.as_deref().unwrap_or(""),
                query = %input.query,
                results = 0,
                tokens = 0,
                latency_ms,
                error = %e,
                "query_docs failed"
            ),
        }
        result.map(|(o, _)| o)
    }

    /// `query_docs` metrics in the Prometheus text format.
    pub fn metrics_text(&self) -> String {
        use std::sync::atomic::Ordering::Relaxed;
        self.metrics.render(&metrics::CacheCounts {
            memory_hits: self.cache_stats.hits.load(Relaxed),
            redis_hits: self.cache_stats.redis_hits.load(Relaxed),
            misses: self.cache_stats.misses.load(Relaxed),
            redis_errors: self.redis.as_ref().map(|r| r.stats.errors.load(Relaxed)),
        })
    }

    /// How often the answer cache answered.
    pub fn cache_stats(&self) -> &CacheStats {
        &self.cache_stats
    }

    /// [`Self::query`] for an already validated request, answered from the cache when the same
    /// request was answered before against the same stored docs.
    pub async fn query_request(
        &self,
        request: &QueryRequest,
    ) -> Result<QueryDocsOutput, DocsError> {
        self.query_traced(request).await.map(|(o, _)| o)
    }

    /// [`Self::query_request`], saying which cache tier answered. In-process first (fastest),
    /// then the shared Redis tier, then computed and stored in both.
    pub async fn query_traced(
        &self,
        request: &QueryRequest,
    ) -> Result<(QueryDocsOutput, CacheOutcome), DocsError> {
        use std::sync::atomic::Ordering::Relaxed;
        let (library, version) = self.locate(&request.library_id, request.version.as_deref())?;
        let stamp = self.registry.stamp(&library.id, &version)?;
        let key: CacheKey = (
            QueryRequest {
                version: Some(version.clone()),
                ..request.clone()
            },
            stamp.as_ref().map_or(0, |s| s.generation),
        );
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        if let Some(answer) = cached {
            self.cache_stats.hits.fetch_add(1, Relaxed);
            return Ok(((*answer).clone(), CacheOutcome::Hit));
        }
        // Versions stored before fingerprints existed are not shared: their answers could not
        // be told apart from another registry's.
        let shared = match (&self.redis, stamp.and_then(|s| s.fingerprint)) {
            (Some(redis), Some(fingerprint)) => {
                Some((redis, shared_key(&fingerprint, &library, &key.0)))
            }
            _ => None,
        };
        if let Some((redis, redis_key)) = &shared
            && let Some(bytes) = redis.get(redis_key).await
            && let Ok(answer) = serde_json::from_slice::<QueryDocsOutput>(&bytes)
        {
            self.cache_stats.redis_hits.fetch_add(1, Relaxed);
            self.cache
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .put(key, Arc::new(answer.clone()));
            return Ok((answer, CacheOutcome::Redis));
        }
        self.cache_stats.misses.fetch_add(1, Relaxed);
        let (answer, degraded) = self.answer(request, library, version).await?;
        // A keyword-only answer given because the model could not be used is not kept: the
        // next query may have it.
        if !degraded {
            if let Some((redis, redis_key)) = &shared
                && let Ok(bytes) = serde_json::to_vec(&answer)
            {
                redis.set(redis_key, &bytes, redis::ANSWER_TTL).await;
            }
            self.cache
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .put(key, Arc::new(answer.clone()));
        }
        Ok((answer, CacheOutcome::Miss))
    }

    /// Ranks and assembles an answer, without the cache; `true` when the docs have embeddings
    /// but the question could not be embedded (a keyword-only answer that may not last).
    async fn answer(
        &self,
        request: &QueryRequest,
        library: LibraryInfo,
        version: String,
    ) -> Result<(QueryDocsOutput, bool), DocsError> {
        let index = blocking(|| self.index(&library.id, &version))?;

        let mut notice = None;
        let query_vector = match index.model() {
            None => {
                notice = Some(
                    "keyword ranking only: these docs were ingested without an embedding model; \
                     install it (`devlens model install`) and run `devlens docs add` again"
                        .to_string(),
                );
                None
            }
            Some(model) => match self.embedder().await {
                Ok(embedder) if embedder.model() == model => {
                    match embedder.embed_query(&request.query).await {
                        Ok(v) => Some(v),
                        Err(e) => {
                            notice = Some(format!("keyword ranking only: {e}"));
                            None
                        }
                    }
                }
                Ok(embedder) => {
                    notice = Some(format!(
                        "keyword ranking only: the docs were embedded with `{model}` but the \
                         current model is `{}`; run `devlens docs add` again",
                        embedder.model()
                    ));
                    None
                }
                Err(why) => {
                    notice = Some(format!("keyword ranking only: {why}"));
                    None
                }
            },
        };
        let ranked = index.rank(
            &request.query,
            query_vector.as_deref(),
            request.include_code,
            request.max_results,
        )?;
        if ranked.is_empty() {
            return Err(DocsError::NoResults {
                library: library.id.clone(),
                suggestions: no_result_suggestions(&index, request),
            });
        }
        let candidates: Vec<Candidate<'_>> = ranked
            .iter()
            .filter_map(|r| {
                index.chunks.get(r.chunk).map(|chunk| Candidate {
                    chunk,
                    relevance: r.relevance,
                })
            })
            .collect();
        let assembled = query::assemble(
            &library.name,
            &request.query,
            &candidates,
            request.context_limit,
        );
        let degraded = index.model().is_some() && query_vector.is_none();
        let output = QueryDocsOutput {
            library: LibrarySummary {
                id: library.id,
                name: library.name,
                version,
                description: library.description,
            },
            query: request.query.clone(),
            results: assembled.results,
            context: assembled.context,
            total_tokens: assembled.total_tokens,
            truncated: assembled.truncated,
            notice,
        };
        Ok((output, degraded))
    }

    /// Scores retrieval for `library` on `golden`: hit@k, MRR and latency (every query runs
    /// uncached).
    pub async fn eval(
        &self,
        library: &str,
        golden: &[GoldenQuestion],
        k: usize,
    ) -> Result<EvalReport, DocsError> {
        let mut latencies = Vec::with_capacity(golden.len());
        let mut hits = 0usize;
        let mut reciprocal = 0.0f64;
        let mut misses = Vec::new();
        let mut notice = None;
        for question in golden {
            let input = QueryDocsInput {
                library_id: library.to_string(),
                query: question.query.clone(),
                version: None,
                max_results: Some(k),
                include_code: Some(true),
                context_limit: Some(query::MAX_CONTEXT_LIMIT),
            };
            let started = Instant::now();
            let answer = match input.validate() {
                Ok(request) => match self.locate(&request.library_id, None) {
                    Ok((lib, version)) => self.answer(&request, lib, version).await.map(|a| a.0),
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            let sections: Vec<String> = match answer {
                Ok(out) => {
                    notice = notice.or(out.notice);
                    out.results
                        .into_iter()
                        .map(|r| r.metadata.section)
                        .collect()
                }
                Err(DocsError::NoResults { .. }) => Vec::new(),
                Err(e) => return Err(e),
            };
            match question.rank_in(sections.iter().map(String::as_str)) {
                Some(rank) => {
                    hits += 1;
                    reciprocal += 1.0 / rank as f64;
                }
                None => misses.push((question.query.clone(), sections)),
            }
        }
        // Then once more through the cache (a first pass fills it), to time cached answers.
        let mut cached = Vec::with_capacity(golden.len());
        for pass in 0..2 {
            for question in golden {
                let input = QueryDocsInput {
                    library_id: library.to_string(),
                    query: question.query.clone(),
                    version: None,
                    max_results: Some(k),
                    include_code: Some(true),
                    context_limit: Some(query::MAX_CONTEXT_LIMIT),
                };
                let started = Instant::now();
                // Not `query`: an eval is no traffic to log or count in the metrics.
                if let Ok(request) = input.validate() {
                    let _ = self.query_traced(&request).await;
                }
                if pass == 1 {
                    cached.push(started.elapsed().as_secs_f64() * 1000.0);
                }
            }
        }
        let n = golden.len().max(1) as f64;
        Ok(EvalReport {
            cached_ms: Some((
                eval::percentile(&cached, 0.5),
                eval::percentile(&cached, 0.95),
            )),
            n: golden.len(),
            hit_at_k: hits as f64 / n,
            mrr: reciprocal / n,
            p50_ms: eval::percentile(&latencies, 0.5),
            p95_ms: eval::percentile(&latencies, 0.95),
            k,
            misses,
            notice,
        })
    }
}

/// The Redis key of an answer: the version's content fingerprint, what the answer shows of the
/// library (its name and description can change without the version changing), the request,
/// and this build's version (ranking may differ between releases).
fn shared_key(fingerprint: &str, library: &LibraryInfo, request: &QueryRequest) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for field in [
        env!("CARGO_PKG_VERSION"),
        fingerprint,
        &library.name,
        &library.description,
        request.version.as_deref().unwrap_or(""),
        &request.query,
        &request.max_results.to_string(),
        &request.include_code.to_string(),
        &request.context_limit.to_string(),
    ] {
        h.update((field.len() as u64).to_le_bytes());
        h.update(field.as_bytes());
    }
    format!("devlens:docs:answer:{}", hex::encode(&h.finalize()[..20]))
}

/// The texts to embed for `chunks` and, per chunk, which of them is its vector.
///
/// One text per section (page and heading path), shared by the section's chunks: the heading
/// path and the first words of the section's prose say what it is about, and embedding thousands
/// of full chunks with a local model takes minutes where this takes a fraction (a BERT forward
/// pass costs more than linearly in length, and sections are fewer than chunks). Keyword ranking
/// still tells a section's chunks apart.
pub fn embedding_texts(chunks: &[registry::StoredChunk]) -> (Vec<String>, Vec<usize>) {
    // Measured on the Node.js docs: 100 characters saved ~6% of the model's CPU time (same
    // hit@5), the last two heading levels only ~12% but cost hit@5 (0.925 -> 0.900); per-text
    // overhead, not length, dominates at these sizes.
    const PROSE_CHARS: usize = 160;
    let mut texts: Vec<String> = Vec::new();
    let mut of_section: HashMap<(&str, &str), usize> = HashMap::new();
    // Sections that read the same share one text (and one forward pass).
    let mut of_text: HashMap<String, usize> = HashMap::new();
    // The first prose of each section, for sections whose first chunk is code.
    let mut prose: HashMap<(&str, &str), &str> = HashMap::new();
    for c in chunks.iter().filter(|c| c.kind == ChunkKind::Text) {
        prose
            .entry((c.source.as_str(), c.section.as_str()))
            .or_insert(c.content.as_str());
    }
    let mut rows = Vec::with_capacity(chunks.len());
    for c in chunks {
        let key = (c.source.as_str(), c.section.as_str());
        let row = *of_section.entry(key).or_insert_with(|| {
            let body = prose.get(&key).copied().unwrap_or(c.content.as_str());
            let body = summary(body);
            let mut cut = PROSE_CHARS.min(body.len());
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            let text = format!("{}: {}", c.section, &body[..cut]);
            *of_text.entry(text).or_insert_with_key(|text| {
                texts.push(text.clone());
                texts.len() - 1
            })
        });
        rows.push(row);
    }
    (texts, rows)
}

/// Vectors for `texts` found in the stored docs of `id` embedded with `model`: the version being
/// replaced, else the library's newest. Keyed by the exact text embedded, so a vector is reused
/// only where the model would compute the same one. Nothing is an error here: a registry that
/// cannot be read just means embedding everything.
fn reusable_vectors(
    registry: &Registry,
    id: &str,
    version: &str,
    model: &str,
    texts: &[String],
) -> HashMap<String, Vec<f32>> {
    let mut out = HashMap::new();
    let newest = registry
        .library(id)
        .ok()
        .flatten()
        .and_then(|l| l.versions.first().cloned());
    let source = match registry.generation(id, version) {
        Ok(Some(_)) => Some(version.to_string()),
        _ => newest,
    };
    let Some(Ok(Some(old))) = source.map(|v| registry.load_version(id, &v)) else {
        return out;
    };
    let Some((old_model, dims, flat)) = old.vectors else {
        return out;
    };
    if old_model != model || dims == 0 {
        return out;
    }
    let wanted: std::collections::HashSet<&str> = texts.iter().map(String::as_str).collect();
    let (old_texts, rows) = embedding_texts(&old.chunks);
    for (chunk, &row) in rows.iter().enumerate() {
        let text = &old_texts[row];
        if wanted.contains(text.as_str())
            && !out.contains_key(text)
            && let Some(v) = flat.get(chunk * dims..(chunk + 1) * dims)
        {
            out.insert(text.clone(), v.to_vec());
        }
    }
    out
}

/// The sentences of a section's prose, without the parameter and option lists that API
/// references put first (`- path {string}`): those say little about what a section is for. Falls
/// back to the whole text when it is all list.
fn summary(prose: &str) -> String {
    let sentences: Vec<&str> = prose
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with(['-', '*', '|', '>', '+'])
                && !l.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
        .collect();
    if sentences.is_empty() {
        prose.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        sentences.join(" ")
    }
}

fn no_result_suggestions(index: &VersionIndex, request: &QueryRequest) -> Vec<String> {
    let mut suggestions =
        vec!["use other keywords, or describe the task in plain words".to_string()];
    if !request.include_code {
        suggestions.push("allow code examples (include_code: true)".into());
    }
    let mut topics: Vec<&str> = index
        .chunks
        .iter()
        .map(|c| c.section.split(" > ").next().unwrap_or(&c.section))
        .collect();
    topics.dedup();
    let mut unique: Vec<&str> = Vec::new();
    for t in topics {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    if !unique.is_empty() {
        let shown: Vec<&str> = unique.iter().take(12).copied().collect();
        suggestions.push(format!("ask about one of its topics: {}", shown.join(", ")));
    }
    suggestions
}
