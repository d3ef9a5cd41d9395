//! An embedder loaded on first use: what every corpus holds, because loading the local model
//! reads ~90 MB and most commands never need it. One is shared by every corpus of a process, so
//! the model is loaded once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use devlens_core::{Classify, DataDir, EmbeddingSettings, ErrorKind};

use crate::{Embedder, embedder_from_settings};

/// How long a failed load is remembered before the next use tries again: long enough that a
/// search without a model does not re-read folders on every call, short enough that installing
/// the model under a running server takes effect without a restart.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(10);

/// Why there is no embedder: the message (what to do) and its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFailure {
    pub message: String,
    pub kind: ErrorKind,
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LoadFailure {}

impl Classify for LoadFailure {
    fn kind(&self) -> ErrorKind {
        self.kind
    }
}

type Loaded = Result<Arc<dyn Embedder>, LoadFailure>;

/// The configured embedder, built on the first [`LazyEmbedder::get`]. A failure (no model, no
/// key) is the reason for keyword-only results until [`RETRY_AFTER`] has passed.
#[derive(Debug)]
pub struct LazyEmbedder {
    source: Option<(EmbeddingSettings, DataDir)>,
    slot: tokio::sync::Mutex<Option<(Loaded, Instant)>>,
}

impl LazyEmbedder {
    /// Builds the embedder `settings` describe when first asked.
    pub fn new(settings: EmbeddingSettings, data_dir: DataDir) -> Self {
        Self {
            source: Some((settings, data_dir)),
            slot: tokio::sync::Mutex::new(None),
        }
    }

    /// An embedder given up front, or (`Err(reason)`) none: tests, and hosts that already
    /// loaded a model. Never reloaded.
    pub fn ready(embedder: Result<Arc<dyn Embedder>, String>) -> Self {
        let loaded = embedder.map_err(|message| LoadFailure {
            message,
            kind: ErrorKind::Unavailable,
        });
        Self {
            source: None,
            slot: tokio::sync::Mutex::new(Some((loaded, Instant::now()))),
        }
    }

    /// The embedder, loaded now if it was not yet, or why there is none.
    pub async fn get(&self) -> Result<Arc<dyn Embedder>, String> {
        self.load().await.map_err(|e| e.message)
    }

    /// As [`Self::get`], with the failure's kind.
    pub async fn load(&self) -> Loaded {
        let mut slot = self.slot.lock().await;
        if let Some((loaded, at)) = slot.as_ref() {
            let retry = loaded.is_err() && self.source.is_some() && at.elapsed() >= RETRY_AFTER;
            if !retry {
                return loaded.clone();
            }
        }
        let Some((settings, data_dir)) = self.source.clone() else {
            return Err(LoadFailure {
                message: "no embedder was given".into(),
                kind: ErrorKind::Unavailable,
            });
        };
        // Loading the local model reads ~90 MB: off the async threads.
        let loaded =
            tokio::task::spawn_blocking(move || embedder_from_settings(&settings, &data_dir))
                .await
                .map_err(|e| LoadFailure {
                    message: format!("model loading was cancelled: {e}"),
                    kind: ErrorKind::Internal,
                })
                .and_then(|r| {
                    r.map_err(|e| LoadFailure {
                        message: e.to_string(),
                        kind: e.kind(),
                    })
                });
        *slot = Some((loaded.clone(), Instant::now()));
        loaded
    }

    /// The model name, if the embedder is loaded already (never loads it).
    pub fn loaded_model(&self) -> Option<String> {
        let slot = self.slot.try_lock().ok()?;
        slot.as_ref()?
            .0
            .as_ref()
            .ok()
            .map(|e| e.model().to_string())
    }
}
