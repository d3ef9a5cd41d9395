//! An embedder loaded on first use: what every corpus holds, because loading the local model
//! reads ~90 MB and most commands never need it.

use std::sync::Arc;

use devlens_core::{DataDir, EmbeddingSettings};

use crate::{Embedder, embedder_from_settings};

/// The configured embedder, built on the first [`LazyEmbedder::get`]. A failure (no model, no
/// key) is remembered as the reason for keyword-only results rather than retried on every call.
#[derive(Debug)]
pub struct LazyEmbedder {
    source: Option<(EmbeddingSettings, DataDir)>,
    slot: tokio::sync::Mutex<Option<Result<Arc<dyn Embedder>, String>>>,
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
    /// loaded a model.
    pub fn ready(embedder: Result<Arc<dyn Embedder>, String>) -> Self {
        Self {
            source: None,
            slot: tokio::sync::Mutex::new(Some(embedder)),
        }
    }

    /// The embedder, loaded now if it was not yet, or why there is none.
    pub async fn get(&self) -> Result<Arc<dyn Embedder>, String> {
        let mut slot = self.slot.lock().await;
        if let Some(result) = slot.as_ref() {
            return result.clone();
        }
        let Some((settings, data_dir)) = self.source.clone() else {
            return Err("no embedder was given".into());
        };
        // Loading the local model reads ~90 MB: off the async threads.
        let result =
            tokio::task::spawn_blocking(move || embedder_from_settings(&settings, &data_dir))
                .await
                .map_err(|e| format!("model loading was cancelled: {e}"))
                .and_then(|r| r.map_err(|e| e.to_string()));
        *slot = Some(result.clone());
        result
    }

    /// The model name, if the embedder is loaded already (never loads it).
    pub fn loaded_model(&self) -> Option<String> {
        let slot = self.slot.try_lock().ok()?;
        slot.as_ref()?.as_ref().ok().map(|e| e.model().to_string())
    }
}
