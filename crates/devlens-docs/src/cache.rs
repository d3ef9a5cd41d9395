//! The answer cache: the same `query_docs` request against the same stored docs gets the same
//! answer, from memory first, then from a Redis server several devlens servers share, else
//! computed and kept in both. A cached answer is keyed by the version's generation (in-process)
//! or its content fingerprint (shared), so re-ingesting makes old answers unreachable without
//! any invalidation.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use devlens_core::Config;

use crate::query::QueryRequest;
use crate::store::LibraryInfo;
use crate::{Docs, DocsError, QueryDocsOutput, metrics, redis};

/// How many answers the in-process cache keeps (the least recently used go first).
pub const CACHE_CAPACITY: usize = 1024;

/// A cached answer is valid for exactly this request against exactly this stored generation and
/// revision of the version: re-ingesting (in any process) changes the generation, adding chunk
/// vectors the revision, so stale answers are never served and need no invalidation.
pub(crate) type CacheKey = (QueryRequest, i64, i64);

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

pub(crate) fn new_cache() -> Mutex<lru::LruCache<CacheKey, Arc<QueryDocsOutput>>> {
    let capacity =
        std::num::NonZeroUsize::new(CACHE_CAPACITY).unwrap_or(std::num::NonZeroUsize::MIN);
    Mutex::new(lru::LruCache::new(capacity))
}

impl Docs {
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
        let stamp = self.store.stamp(&library.id, &version)?;
        let key: CacheKey = (
            QueryRequest {
                version: Some(version.clone()),
                ..request.clone()
            },
            stamp.as_ref().map_or(0, |s| s.generation),
            // Chunk vectors added to the version since make another answer.
            stamp.as_ref().map_or(0, |s| s.revision),
        );
        let refining = stamp.as_ref().and_then(|s| s.refining);
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
        let (mut answer, degraded) = self.answer(request, library, version).await?;
        answer.refining = refining;
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
