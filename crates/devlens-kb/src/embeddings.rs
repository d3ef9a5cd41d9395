//! Keeping embeddings current: `reembed` embeds what lacks a current embedding (after an
//! import, an edit without a model, or a model change), in batches that each commit, so an
//! interrupted run keeps its work; `status` says how far along the store is.

use std::time::Instant;

use devlens_search::sqlite::blocking;

use crate::store::ChunkVectors;
use crate::{ChatClient, KbError, KbStatus, KnowledgeBase, REEMBED_BATCH, ReembedReport, Solution};

impl KnowledgeBase {
    /// Embeds every solution lacking a current embedding (new imports, edits, another model),
    /// [`REEMBED_BATCH`] at a time, each batch committed: an interrupted run keeps what it did
    /// and the next run continues from there. `progress(done, total)`.
    pub async fn reembed(
        &self,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<ReembedReport, KbError> {
        let started = Instant::now();
        let embedder = self
            .embedder()
            .await
            .map_err(KbError::EmbedderUnavailable)?;
        let model = embedder.model().to_string();
        let counts = blocking(|| self.store.counts(Some(&model)))?;
        let total = counts.solutions - counts.embedded;
        let mut done = 0;
        let mut chunks = 0;
        progress(0, total);
        loop {
            let batch = blocking(|| self.store.needing_vectors(&model, REEMBED_BATCH))?;
            if batch.is_empty() {
                break;
            }
            let refs: Vec<&Solution> = batch.iter().collect();
            let vectors = self.embed(&embedder, &refs).await?;
            chunks += vectors.iter().map(|v| v.chunks.len()).sum::<usize>();
            let pairs: Vec<(String, ChunkVectors)> =
                batch.iter().map(|s| s.id.clone()).zip(vectors).collect();
            let stored = blocking(|| self.store.set_vectors(&pairs))?;
            if stored == 0 {
                // Every solution of the batch changed while it was embedded; the next query
                // picks up their new content.
                continue;
            }
            done += stored;
            progress(done.min(total), total);
        }
        Ok(ReembedReport {
            model,
            embedded: done,
            up_to_date: counts.embedded,
            chunks,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Counts, the model, the effective settings.
    pub async fn status(&self) -> Result<KbStatus, KbError> {
        let embedder = self.embedder().await;
        let model = embedder.as_ref().ok().map(|e| e.model().to_string());
        let counts = blocking(|| self.store.counts(model.as_deref()))?;
        let llm = ChatClient::from_settings(&self.llm, &|name| std::env::var(name).ok())
            .ok()
            .flatten();
        Ok(KbStatus {
            path: self.store.location(),
            solutions: counts.solutions,
            embedded: counts.embedded,
            similarity_threshold: model
                .as_deref()
                .map(|m| self.threshold(None, m))
                .transpose()?,
            model,
            embedder_unavailable: embedder.err(),
            search_mode: self.mode(None),
            top_k: self.top_k(None)?,
            llm_model: llm.map(|c| c.model().to_string()),
        })
    }
}
