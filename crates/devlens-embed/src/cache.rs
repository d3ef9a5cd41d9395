//! A bounded LRU cache of query embeddings.
//!
//! Agents ask the same question again and again (and a remote query costs a round trip and
//! money), so `embed_query` results are kept; documents are embedded once per index build and go
//! straight through. The cache is the `lru` crate's (the docs answer cache uses it too).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;

use crate::{BoxFuture, EmbedError, Embedder, Progress, Provider};

/// The provider, model and size are part of the key, so one cache can never serve a vector from
/// another model.
type Key = (Provider, String, usize, String);

/// Wraps any [`Embedder`] and remembers its last `capacity` distinct query embeddings.
#[derive(Debug)]
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    entries: Mutex<Entries>,
}

#[derive(Debug)]
struct Entries {
    /// `None` for a capacity of 0: nothing is kept.
    lru: Option<LruCache<Key, Arc<[f32]>>>,
    hits: u64,
    misses: u64,
}

impl CachedEmbedder {
    pub const DEFAULT_CAPACITY: usize = 1_024;

    pub fn new(inner: Arc<dyn Embedder>) -> Self {
        Self::with_capacity(inner, Self::DEFAULT_CAPACITY)
    }

    pub fn with_capacity(inner: Arc<dyn Embedder>, capacity: usize) -> Self {
        Self {
            inner,
            entries: Mutex::new(Entries {
                lru: NonZeroUsize::new(capacity).map(LruCache::new),
                hits: 0,
                misses: 0,
            }),
        }
    }

    /// The wrapped embedder.
    pub fn inner(&self) -> &Arc<dyn Embedder> {
        &self.inner
    }

    /// Cached queries right now.
    pub fn len(&self) -> usize {
        self.lock().lru.as_ref().map_or(0, LruCache::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(hits, misses)` since creation, for status output and tests.
    pub fn stats(&self) -> (u64, u64) {
        let entries = self.lock();
        (entries.hits, entries.misses)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic while holding the lock cannot leave the map inconsistent: keep using it.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn key(&self, text: &str) -> Key {
        (
            self.inner.provider(),
            self.inner.model().to_owned(),
            self.inner.dims(),
            text.to_owned(),
        )
    }
}

impl Entries {
    fn get(&mut self, key: &Key) -> Option<Arc<[f32]>> {
        match self.lru.as_mut().and_then(|lru| lru.get(key)) {
            Some(vector) => {
                self.hits += 1;
                Some(vector.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    fn insert(&mut self, key: Key, vector: Arc<[f32]>) {
        if let Some(lru) = self.lru.as_mut() {
            lru.put(key, vector);
        }
    }
}

impl Embedder for CachedEmbedder {
    fn provider(&self) -> Provider {
        self.inner.provider()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn dims(&self) -> usize {
        self.inner.dims()
    }

    fn engine(&self) -> Option<String> {
        self.inner.engine()
    }

    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        self.inner.embed_documents(texts, progress)
    }

    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        Box::pin(async move {
            let key = self.key(text);
            if let Some(hit) = self.lock().get(&key) {
                return Ok(hit.to_vec());
            }
            let vector = self.inner.embed_query(text).await?;
            // The size may only be known now (remote models learn it from the first answer).
            let key = (key.0, key.1, vector.len(), key.3);
            self.lock().insert(key, Arc::from(vector.as_slice()));
            Ok(vector)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Counts calls and returns a vector derived from the text.
    #[derive(Debug, Default)]
    struct Counting {
        calls: AtomicUsize,
    }

    impl Embedder for Counting {
        fn provider(&self) -> Provider {
            Provider::Local
        }
        fn model(&self) -> &str {
            "counting"
        }
        fn dims(&self) -> usize {
            2
        }
        fn embed_documents<'a>(
            &'a self,
            texts: &'a [String],
            _progress: Progress<'a>,
        ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
            Box::pin(async move { Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect()) })
        }
        fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { Ok(vec![text.len() as f32, 1.0]) })
        }
    }

    #[tokio::test]
    async fn repeated_queries_hit_and_the_oldest_entry_is_evicted() {
        let inner = Arc::new(Counting::default());
        let cached = CachedEmbedder::with_capacity(inner.clone(), 2);
        let a = cached.embed_query("a").await.unwrap();
        assert_eq!(cached.embed_query("a").await.unwrap(), a);
        assert_eq!(inner.calls.load(Ordering::SeqCst), 1);

        cached.embed_query("bb").await.unwrap();
        cached.embed_query("a").await.unwrap(); // "a" is now the most recent
        cached.embed_query("ccc").await.unwrap(); // evicts "bb"
        assert_eq!(cached.len(), 2);
        assert_eq!(inner.calls.load(Ordering::SeqCst), 3);
        cached.embed_query("a").await.unwrap();
        assert_eq!(inner.calls.load(Ordering::SeqCst), 3, "a stayed cached");
        cached.embed_query("bb").await.unwrap();
        assert_eq!(inner.calls.load(Ordering::SeqCst), 4, "bb was evicted");
        assert_eq!(cached.stats(), (3, 4));
    }

    #[tokio::test]
    async fn documents_bypass_the_cache() {
        let inner = Arc::new(Counting::default());
        let cached = CachedEmbedder::new(inner);
        let texts = vec!["x".to_owned(), "yy".to_owned()];
        let out = cached.embed_documents(&texts, &|_, _| {}).await.unwrap();
        assert_eq!(out.len(), 2);
        assert!(cached.is_empty());
    }
}
