//! Adding a version's chunk vectors after it is searchable.
//!
//! An ingest stores a version once its section vectors are computed: it answers from then on,
//! as with `[docs] passage_vectors = false`. Each prose chunk's own vector (its heading path and
//! text: what finds an answer in a later paragraph of a long section) costs most of an ingest's
//! model time, so those come afterwards, in batches, each stored in its own transaction
//! ([`DocsStore::add_passages`]). A process killed meanwhile leaves a searchable version and every
//! finished batch; the next refinement (`devlens docs refine`, a server opening the docs, the
//! next ingest) computes only what is missing, in the same batches an uninterrupted run would
//! have made. Queries use whatever chunk vectors exist (a chunk scores by the better of its
//! section's vector and its own, crate::search) and say while some are missing.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::Serialize;

use devlens_core::Report;
use devlens_embed::LazyEmbedder;
use devlens_search::sqlite::blocking;

use crate::ingest::EmbeddingPlan;
use crate::query::grouped;
use crate::store::{
    ChunkEmbeddings, DocsStore, PassageBatch, RefineProgress, Refinement, fingerprint_of,
};
use crate::{Docs, DocsError};

/// Texts per batch of chunk vectors: a few seconds of the model on two cores, so a kill loses
/// little and queries see the vectors grow; big enough that a batch still sorts its texts into
/// well-filled forward passes.
pub const REFINE_BATCH: usize = 256;

/// What a refinement of one version did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RefineReport {
    pub id: String,
    pub version: String,
    /// Chunk texts run through the model now.
    pub embedded_texts: usize,
    /// Set while chunk vectors are still missing (the refinement stopped early).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refining: Option<RefineProgress>,
    /// Chunks with a vector of their own, of those planned, when it ended.
    pub stored: usize,
    pub planned: usize,
    /// The version was re-ingested or removed meanwhile: what was computed was not stored.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub superseded: bool,
    pub seconds: f64,
}

impl Report for RefineReport {
    fn to_text(&self) -> String {
        if self.superseded {
            return format!(
                "{} {}: re-ingested or removed meanwhile; nothing more to add",
                self.id, self.version
            );
        }
        format!(
            "{} {}: {} of {} passage vectors stored ({} texts embedded in {:.1} s){}",
            self.id,
            self.version,
            grouped(self.stored),
            grouped(self.planned),
            self.embedded_texts,
            self.seconds,
            if self.refining.is_some() {
                "; not finished"
            } else {
                ""
            }
        )
    }
}

/// `devlens docs refine`: every version refined.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RefineAll {
    pub refined: Vec<RefineReport>,
    /// `id version: why`, for versions that could not be refined.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

impl Report for RefineAll {
    fn to_text(&self) -> String {
        let mut lines: Vec<String> = self.refined.iter().map(Report::to_text).collect();
        if self.refined.is_empty() && self.failed.is_empty() {
            lines.push("every version has all its passage vectors".into());
        }
        lines.extend(self.failed.iter().map(|f| format!("could not refine {f}")));
        lines.join("\n")
    }
}

/// What refining needs, shareable with a background task.
#[derive(Clone)]
pub(crate) struct Refiner {
    pub(crate) store: Arc<dyn DocsStore>,
    pub(crate) embedder: Arc<LazyEmbedder>,
    /// Texts per batch.
    pub(crate) batch: usize,
    /// One background task at a time; `again` makes the running one look once more.
    running: Arc<AtomicBool>,
    again: Arc<AtomicBool>,
}

impl Refiner {
    pub(crate) fn new(store: Arc<dyn DocsStore>, embedder: Arc<LazyEmbedder>) -> Self {
        Self {
            store,
            embedder,
            batch: REFINE_BATCH,
            running: Arc::new(AtomicBool::new(false)),
            again: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Adds the missing chunk vectors of `id` `version`, at most `max_batches` batches of them.
    pub(crate) async fn refine(
        &self,
        id: &str,
        version: &str,
        max_batches: Option<usize>,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<RefineReport, DocsError> {
        let started = Instant::now();
        let store = Arc::clone(&self.store);
        let stamp = blocking(|| store.stamp(id, version))?;
        let loaded = blocking(|| store.load_version(id, version))?;
        let (Some(stamp), Some(loaded)) = (stamp, loaded) else {
            return Err(DocsError::UnknownVersion {
                id: id.to_string(),
                version: version.to_string(),
                available: Vec::new(),
            });
        };
        let mut report = RefineReport {
            id: id.to_string(),
            version: version.to_string(),
            embedded_texts: 0,
            refining: stamp.refining,
            stored: stamp.refining.map_or(0, |r| r.stored),
            planned: stamp.refining.map_or(0, |r| r.planned),
            superseded: false,
            seconds: 0.0,
        };
        // Nothing planned beyond what is stored, or keyword search only: nothing to add.
        let (Some(_), Some(vectors)) = (stamp.refining, loaded.vectors) else {
            report.refining = None;
            report.seconds = started.elapsed().as_secs_f64();
            return Ok(report);
        };
        if loaded.generation != stamp.generation {
            // Re-ingested between the two reads: the next refinement sees the new one.
            report.superseded = true;
            return Ok(report);
        }
        let embedder = self.embedder.get().await.map_err(|why| {
            DocsError::InvalidInput(format!("no embedding model to add passage vectors: {why}"))
        })?;
        if embedder.model() != vectors.model {
            return Err(DocsError::InvalidInput(format!(
                "{id} {version} was embedded with `{}` but the current model is `{}`; run \
                 `devlens docs add` again to embed it with the current one",
                vectors.model,
                embedder.model()
            )));
        }
        let chunks = &loaded.chunks;
        let plan = EmbeddingPlan::of(chunks, true);
        let planned = plan.passages.iter().filter(|p| p.is_some()).count();
        // The vector of each chunk text, where one is known: stored with a chunk, or the same
        // text as a section's.
        let mut by_row: HashMap<usize, Vec<f32>> = HashMap::new();
        let mut waiting: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (chunk, row) in plan.passages.iter().enumerate() {
            let Some(row) = *row else { continue };
            match vectors.passage(chunk) {
                Some(v) => {
                    by_row.entry(row).or_insert_with(|| v.to_vec());
                }
                None => waiting.entry(row).or_default().push(chunk),
            }
        }
        for (chunk, &row) in plan.sections.iter().enumerate() {
            if waiting.contains_key(&row)
                && let Some(v) = vectors.section(chunk)
            {
                by_row.entry(row).or_insert_with(|| v.to_vec());
            }
        }
        // Longest first, as the model batches best; the same order on every run, so a resumed
        // refinement makes the batches an uninterrupted one would have.
        let mut todo: Vec<usize> = waiting
            .keys()
            .copied()
            .filter(|row| !by_row.contains_key(row))
            .collect();
        todo.sort_by_key(|&row| (std::cmp::Reverse(plan.texts[row].len()), row));
        // Chunks whose text has a vector already go with the first batch.
        let mut ready: Vec<(usize, Vec<f32>)> = waiting
            .iter()
            .filter_map(|(row, chunks)| by_row.get(row).map(|v| (chunks, v)))
            .flat_map(|(chunks, v)| chunks.iter().map(move |&c| (c, v.clone())))
            .collect();
        let batches: Vec<&[usize]> = if todo.is_empty() {
            vec![&[]]
        } else {
            todo.chunks(self.batch.max(1)).collect()
        };
        let last = batches.len() - 1;
        for (n, rows) in batches.into_iter().enumerate() {
            if max_batches.is_some_and(|max| n >= max) {
                break;
            }
            let texts: Vec<String> = rows.iter().map(|&r| plan.texts[r].clone()).collect();
            let fresh = if texts.is_empty() {
                Vec::new()
            } else {
                embedder.embed_documents(&texts, &|_, _| {}).await?
            };
            if fresh.len() != texts.len() {
                return Err(DocsError::InvalidInput(format!(
                    "the embedder returned {} vectors for {} texts; nothing more was stored",
                    fresh.len(),
                    texts.len()
                )));
            }
            report.embedded_texts += texts.len();
            for (&row, v) in rows.iter().zip(fresh) {
                for &chunk in waiting.get(&row).into_iter().flatten() {
                    ready.push((chunk, v.clone()));
                }
                by_row.insert(row, v);
            }
            // With the last batch the version is whole: its fingerprint, as a one-shot ingest
            // computes it.
            let fingerprint = (n == last).then(|| {
                let sections: Vec<Vec<f32>> = (0..chunks.len())
                    .map(|c| vectors.section(c).map(<[f32]>::to_vec).unwrap_or_default())
                    .collect();
                let passages: Vec<Option<Vec<f32>>> = plan
                    .passages
                    .iter()
                    .map(|row| row.and_then(|r| by_row.get(&r).cloned()))
                    .collect();
                fingerprint_of(
                    id,
                    version,
                    chunks,
                    Some(ChunkEmbeddings {
                        model: &vectors.model,
                        sections: &sections,
                        passages: &passages,
                        planned,
                    }),
                )
            });
            let batch = PassageBatch {
                library_id: id,
                version,
                generation: loaded.generation,
                passages: &ready,
                planned,
                fingerprint: fingerprint.as_deref(),
            };
            let stored = blocking(|| store.add_passages(&batch))?;
            ready.clear();
            match stored {
                Some(Refinement { progress: p, .. }) => {
                    report.stored = p.stored;
                    report.planned = p.planned;
                    report.refining = p.pending().then_some(p);
                    progress(p.stored, p.planned);
                }
                None => {
                    report.superseded = true;
                    break;
                }
            }
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Refines every version still missing chunk vectors, oldest first.
    pub(crate) async fn refine_all(
        &self,
        progress: &(dyn Fn(&str, usize, usize) + Sync),
    ) -> Result<RefineAll, DocsError> {
        let store = Arc::clone(&self.store);
        let pending = blocking(|| store.refinements())?;
        let mut out = RefineAll {
            refined: Vec::new(),
            failed: Vec::new(),
        };
        for r in pending {
            let label = format!("{} {}", r.library_id, r.version);
            let each = |stored, planned| progress(&label, stored, planned);
            match self.refine(&r.library_id, &r.version, None, &each).await {
                Ok(report) => out.refined.push(report),
                Err(e) => out.failed.push(format!("{label}: {e}")),
            }
        }
        Ok(out)
    }

    /// Refines every pending version in a task on the current runtime, unless one runs already
    /// (which then looks once more when it is done). Returns whether a task runs.
    pub(crate) fn spawn(&self) -> bool {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        self.again.store(true, Ordering::SeqCst);
        if self.running.swap(true, Ordering::SeqCst) {
            return true;
        }
        let refiner = self.clone();
        runtime.spawn(async move {
            loop {
                refiner.again.store(false, Ordering::SeqCst);
                match refiner.refine_all(&|_, _, _| {}).await {
                    Ok(all) => {
                        for r in &all.refined {
                            tracing::info!(
                                library = %r.id,
                                version = %r.version,
                                embedded = r.embedded_texts,
                                stored = r.stored,
                                planned = r.planned,
                                seconds = r.seconds,
                                "docs passage vectors added"
                            );
                        }
                        for f in &all.failed {
                            tracing::warn!("docs passage vectors not added: {f}");
                        }
                    }
                    Err(e) => tracing::warn!("docs passage vectors: {e}"),
                }
                refiner.running.store(false, Ordering::SeqCst);
                // Work that arrived while the last round ran, unless another task took it.
                if !refiner.again.load(Ordering::SeqCst)
                    || refiner.running.swap(true, Ordering::SeqCst)
                {
                    break;
                }
            }
        });
        true
    }
}

impl Docs {
    /// Adds the missing chunk vectors of a version, batch by batch (each stored in its own
    /// transaction); `progress(stored, planned)` after each. Nothing already stored is computed
    /// again. A version with nothing missing is left as it is.
    pub async fn refine(
        &self,
        id: &str,
        version: &str,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<RefineReport, DocsError> {
        self.refiner.refine(id, version, None, progress).await
    }

    /// [`Docs::refine`], stopping after `max_batches` batches (as an interrupted refinement
    /// would).
    pub async fn refine_batches(
        &self,
        id: &str,
        version: &str,
        max_batches: usize,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<RefineReport, DocsError> {
        self.refiner
            .refine(id, version, Some(max_batches), progress)
            .await
    }

    /// Refines every version still missing chunk vectors (`devlens docs refine`);
    /// `progress("id version", stored, planned)`.
    pub async fn refine_all(
        &self,
        progress: &(dyn Fn(&str, usize, usize) + Sync),
    ) -> Result<RefineAll, DocsError> {
        self.refiner.refine_all(progress).await
    }

    /// The versions still missing chunk vectors.
    pub fn refinements(&self) -> Result<Vec<Refinement>, DocsError> {
        self.store.refinements()
    }

    /// Refines every pending version in a background task on the current tokio runtime (none
    /// outside one). Returns whether such a task runs.
    pub fn refine_in_background(&self) -> bool {
        self.refiner.spawn()
    }

    /// Whether an ingest leaves its chunk vectors to a background task (a long-lived process,
    /// [`Docs::with_background_refinement`]) rather than adding them before it returns.
    pub fn refines_in_background(&self) -> bool {
        self.background_refinement
    }

    /// Adds chunk vectors after an ingest returns, in a background task (`true`: a server), or
    /// before it returns (`false`, the default: the CLI).
    pub fn with_background_refinement(mut self, on: bool) -> Self {
        self.background_refinement = on;
        self
    }

    /// Chunk texts per batch of a refinement (each batch is one transaction).
    pub fn with_refine_batch(mut self, texts: usize) -> Self {
        self.refiner.batch = texts.max(1);
        self
    }
}
