//! Keeping embeddings current: `reembed` embeds what lacks a current embedding (after an
//! import, an edit without a model, or a model change), in batches that each commit, so an
//! interrupted run keeps its work; `status` says how far along the store is.

use std::time::Instant;

use devlens_search::sqlite::blocking;

use crate::store::{ChunkVectors, SolutionCursor, SolutionStore};
use crate::{ChatClient, KbError, KbStatus, KnowledgeBase, REEMBED_BATCH, ReembedReport, Solution};

/// A bulk write of vectors in progress; ends it when dropped before it ended.
struct BulkVectors<'a> {
    store: &'a dyn SolutionStore,
    dims: usize,
    ended: bool,
}

impl Drop for BulkVectors<'_> {
    fn drop(&mut self) {
        if !self.ended
            && let Err(e) = blocking(|| self.store.end_bulk_vectors(self.dims))
        {
            tracing::warn!(target: "devlens::kb", "cannot rebuild the vector index: {e}");
        }
    }
}

impl KnowledgeBase {
    /// Embeds every solution lacking a current embedding (new imports, edits, another model),
    /// [`REEMBED_BATCH`] at a time, eight such batches per committed transaction: an
    /// interrupted run keeps what it stored and the next run continues from there.
    /// `progress(done, total)`.
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
        let dims = embedder.dims();
        blocking(|| self.store.begin_bulk_vectors(dims, total))?;
        // Ends the bulk write however the walk ends: finished, failed or dropped midway.
        let mut bulk = BulkVectors {
            store: self.store.as_ref(),
            dims,
            ended: false,
        };
        let walked = self
            .reembed_walk(&embedder, &model, total, &mut done, &mut chunks, progress)
            .await;
        bulk.ended = true;
        let rebuilt = blocking(|| self.store.end_bulk_vectors(dims));
        walked?;
        rebuilt?;
        Ok(ReembedReport {
            model,
            embedded: done,
            up_to_date: counts.embedded,
            chunks,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// [`KnowledgeBase::reembed`]'s walk: every solution lacking current vectors, embedded a
    /// batch at a time and stored [`REEMBED_WRITE`] solutions per transaction. A write runs on
    /// a thread of its own while the next solutions are read and embedded: a database server
    /// stores one part while devlens embeds the next.
    async fn reembed_walk(
        &self,
        embedder: &std::sync::Arc<dyn devlens_embed::Embedder>,
        model: &str,
        total: usize,
        done: &mut usize,
        chunks: &mut usize,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<(), KbError> {
        let mut writes = VectorWrites {
            store: self.store.clone(),
            embedded: Vec::new(),
            writing: None,
            done,
            total,
            progress,
        };
        let walked = self
            .reembed_batches(embedder, model, chunks, &mut writes)
            .await;
        // What was embedded is kept however the walk ends, and nothing is left writing: the
        // caller rebuilds the vector index next.
        let written = writes.flush();
        walked?;
        written
    }

    async fn reembed_batches(
        &self,
        embedder: &std::sync::Arc<dyn devlens_embed::Embedder>,
        model: &str,
        chunks: &mut usize,
        writes: &mut VectorWrites<'_>,
    ) -> Result<(), KbError> {
        // One walk through the solutions from a cursor, then one more from the start for those
        // edited behind it meanwhile.
        let mut after: Option<SolutionCursor> = None;
        let mut second_walk = false;
        loop {
            // Read a transaction's worth at once (one statement instead of eight), embedded
            // REEMBED_BATCH at a time.
            let page = blocking(|| {
                self.store
                    .needing_vectors(model, after.as_ref(), REEMBED_WRITE)
            })?;
            let Some(last) = page.last() else {
                if second_walk || after.is_none() {
                    break;
                }
                // The walk from the start must not find solutions still being written.
                writes.flush()?;
                second_walk = true;
                after = None;
                continue;
            };
            after = Some((last.created_at.clone(), last.id.clone()));
            for batch in page.chunks(REEMBED_BATCH) {
                let refs: Vec<&Solution> = batch.iter().collect();
                let vectors = self.embed(embedder, &refs).await?;
                *chunks += vectors.iter().map(|v| v.chunks.len()).sum::<usize>();
                // Solutions that change while they are embedded are left for the next run (or
                // the walk from the start).
                writes
                    .embedded
                    .extend(batch.iter().map(|s| s.id.clone()).zip(vectors));
                if writes.embedded.len() >= REEMBED_WRITE {
                    writes.start()?;
                }
            }
        }
        Ok(())
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

/// Solutions embedded per transaction of a re-embed: a transaction per embedding batch
/// ([`REEMBED_BATCH`]) cost PostgreSQL more in statements and commits than the rows themselves.
const REEMBED_WRITE: usize = 8 * REEMBED_BATCH;

/// A re-embed's vectors on their way to the store: those embedded and not yet written, and the
/// write in flight (one at a time, on a thread of its own).
struct VectorWrites<'a> {
    store: std::sync::Arc<dyn SolutionStore>,
    embedded: Vec<(String, ChunkVectors)>,
    writing: Option<std::thread::JoinHandle<Result<usize, KbError>>>,
    done: &'a mut usize,
    total: usize,
    progress: &'a (dyn Fn(usize, usize) + Sync),
}

impl VectorWrites<'_> {
    /// Waits for the write in flight and writes what is embedded on a thread of its own.
    fn start(&mut self) -> Result<(), KbError> {
        self.finish()?;
        let store = self.store.clone();
        let part = std::mem::take(&mut self.embedded);
        self.writing = Some(std::thread::spawn(move || store.set_vectors(&part)));
        Ok(())
    }

    /// Waits for the write in flight, if any, and counts what it stored.
    fn finish(&mut self) -> Result<(), KbError> {
        let Some(thread) = self.writing.take() else {
            return Ok(());
        };
        let stored =
            blocking(|| thread.join()).unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        *self.done += stored;
        (self.progress)((*self.done).min(self.total), self.total);
        Ok(())
    }

    /// Writes everything embedded and waits until it is stored.
    fn flush(&mut self) -> Result<(), KbError> {
        if !self.embedded.is_empty() {
            self.start()?;
        }
        self.finish()
    }
}
