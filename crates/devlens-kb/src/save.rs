//! Saving: a solution is validated, cut into chunks, embedded (reusing the vectors of chunks an
//! edit left unchanged) and stored with its vectors in one write. Without an embedder it is
//! stored anyway, found by keywords, and the answer says how to embed it later.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use devlens_embed::Embedder;
use devlens_search::sqlite::blocking;

use crate::store::{self, ChunkVectors};
use crate::{
    Deleted, KbError, KnowledgeBase, NewSolution, Saved, Solution, SolutionList, SolutionPatch,
    SolutionSummary, chunk, solution,
};

/// Where a chunk's vector comes from when a solution is embedded.
enum VectorSource {
    /// Unchanged since the last save: its stored vector.
    Known(Vec<f32>),
    /// The model's answer for this index of the texts sent.
    Model(usize),
}

impl KnowledgeBase {
    /// Chunks and embeds solutions; `Err` carries the reason embeddings are unavailable.
    pub(crate) async fn embed(
        &self,
        embedder: &Arc<dyn Embedder>,
        solutions: &[&Solution],
    ) -> Result<Vec<ChunkVectors>, devlens_embed::EmbedError> {
        Ok(self
            .embed_reusing(embedder, solutions, &HashMap::new())
            .await?
            .0)
    }

    /// As [`Self::embed`], taking the vector of a chunk whose embedded text is a key of `known`
    /// from there instead of the model (an edit re-embeds only the chunks it changed). Also
    /// returns how many chunks were taken from `known`.
    async fn embed_reusing(
        &self,
        embedder: &Arc<dyn Embedder>,
        solutions: &[&Solution],
        known: &HashMap<String, Vec<f32>>,
    ) -> Result<(Vec<ChunkVectors>, usize), devlens_embed::EmbedError> {
        let mut texts = Vec::new();
        // Per solution, per chunk: its range and where its vector comes from.
        let mut layout: Vec<Vec<(Range<usize>, VectorSource)>> =
            Vec::with_capacity(solutions.len());
        for s in solutions {
            let ranges = chunk::chunk_ranges(&s.text, chunk::TARGET_CHARS);
            let mut chunks = Vec::with_capacity(ranges.len());
            for r in ranges {
                let text = chunk::embedding_text(&s.title, &s.tags, &s.text[r.clone()]);
                let source = match known.get(&text) {
                    Some(v) => VectorSource::Known(v.clone()),
                    None => {
                        texts.push(text);
                        VectorSource::Model(texts.len() - 1)
                    }
                };
                chunks.push((r, source));
            }
            layout.push(chunks);
        }
        let mut vectors: Vec<Option<Vec<f32>>> = if texts.is_empty() {
            Vec::new()
        } else {
            embedder
                .embed_documents(&texts, &|_, _| {})
                .await?
                .into_iter()
                .map(Some)
                .collect()
        };
        let mut out = Vec::with_capacity(solutions.len());
        let mut reused = 0;
        for (s, chunks) in solutions.iter().zip(layout) {
            let mut with_vectors = Vec::with_capacity(chunks.len());
            for (range, source) in chunks {
                let vector = match source {
                    VectorSource::Known(v) => {
                        reused += 1;
                        v
                    }
                    VectorSource::Model(i) => {
                        vectors.get_mut(i).and_then(Option::take).ok_or_else(|| {
                            devlens_embed::EmbedError::Inference("a chunk got no vector".into())
                        })?
                    }
                };
                with_vectors.push((range, vector));
            }
            out.push(ChunkVectors {
                content_hash: store::content_hash(s),
                model: embedder.model().to_string(),
                dims: embedder.dims(),
                chunks: with_vectors,
            });
        }
        Ok((out, reused))
    }

    /// Embeds `solution` and stores it with its vectors; when embeddings are unavailable it is
    /// stored anyway (keyword search finds it) and the notice says how to embed it later.
    /// `previous` is the stored version it replaces: its unchanged chunks keep their vectors.
    async fn store_with_vectors(
        &self,
        solution: Solution,
        previous: Option<&Solution>,
    ) -> Result<Saved, KbError> {
        let mut reused_chunks = 0;
        let (vectors, notice) = match self.embedder().await {
            Ok(embedder) => {
                let known = blocking(|| self.known_chunks(previous, embedder.as_ref()))?;
                match self.embed_reusing(&embedder, &[&solution], &known).await {
                    Ok((mut v, reused)) => {
                        reused_chunks = reused;
                        (v.pop(), None)
                    }
                    Err(e) if e.is_unavailable() => (
                        None,
                        Some(format!(
                            "saved without an embedding ({e}); keyword search finds it now, semantic \
                     search after `devlens kb reembed`"
                        )),
                    ),
                    Err(e) => return Err(e.into()),
                }
            }
            Err(reason) => (
                None,
                Some(format!(
                    "saved without an embedding: {reason}. Keyword search finds it now, semantic \
                 search after `devlens kb reembed`"
                )),
            ),
        };
        blocking(|| self.store.put(&solution, vectors.as_ref()))?;
        Ok(Saved {
            created: previous.is_none(),
            embedded: vectors.is_some(),
            chunks: vectors.as_ref().map_or(0, |v| v.chunks.len()),
            reused_chunks,
            solution,
            notice,
        })
    }

    /// The vectors of `previous`'s chunks by the text that was embedded for each, when they
    /// came from `embedder`'s model; nothing to reuse otherwise.
    fn known_chunks(
        &self,
        previous: Option<&Solution>,
        embedder: &dyn Embedder,
    ) -> Result<HashMap<String, Vec<f32>>, KbError> {
        let Some(old) = previous else {
            return Ok(HashMap::new());
        };
        let stored = self
            .store
            .solution_vectors(&old.id, embedder.model(), embedder.dims())?;
        Ok(stored
            .into_iter()
            .filter_map(|(range, vector)| {
                let chunk = old.text.get(range)?;
                Some((chunk::embedding_text(&old.title, &old.tags, chunk), vector))
            })
            .collect())
    }

    /// Saves a new solution (embedding it now).
    pub async fn add(&self, new: NewSolution) -> Result<Saved, KbError> {
        let new = solution::clean(new)?;
        let now = devlens_core::clock::now_rfc3339();
        let solution = Solution {
            id: solution::new_id(&new.title, &new.text),
            title: new.title,
            url: new.url,
            text: new.text,
            summary: new.summary,
            tags: new.tags,
            created_at: now.clone(),
            updated_at: now,
        };
        self.store_with_vectors(solution, None).await
    }

    /// Changes a stored solution; re-embeds it when its title, tags or text changed.
    pub async fn update(&self, id: &str, patch: SolutionPatch) -> Result<Saved, KbError> {
        let old = self.get(id)?;
        if patch.is_empty() {
            return Err(KbError::InvalidInput(
                "nothing to change: give a new title, text, url, summary or tags".into(),
            ));
        }
        let merged = solution::clean(NewSolution {
            title: patch.title.unwrap_or_else(|| old.title.clone()),
            url: patch.url.unwrap_or_else(|| old.url.clone()),
            text: patch.text.unwrap_or_else(|| old.text.clone()),
            summary: patch.summary.unwrap_or_else(|| old.summary.clone()),
            tags: patch.tags.unwrap_or_else(|| old.tags.clone()),
        })?;
        let mut solution = Solution {
            id: old.id.clone(),
            title: merged.title,
            url: merged.url,
            text: merged.text,
            summary: merged.summary,
            tags: merged.tags,
            created_at: old.created_at.clone(),
            updated_at: old.updated_at.clone(),
        };
        if solution == old {
            return Ok(Saved {
                created: false,
                solution,
                embedded: true,
                chunks: 0,
                reused_chunks: 0,
                notice: Some("nothing changed".into()),
            });
        }
        solution.updated_at = devlens_core::clock::now_rfc3339();
        if store::content_hash(&solution) == store::content_hash(&old) {
            // Only the URL or summary changed: the vectors still hold.
            blocking(|| self.store.put(&solution, None))?;
            return Ok(Saved {
                created: false,
                solution,
                embedded: true,
                chunks: 0,
                reused_chunks: 0,
                notice: None,
            });
        }
        self.store_with_vectors(solution, Some(&old)).await
    }

    pub fn get(&self, id: &str) -> Result<Solution, KbError> {
        let id = id.trim();
        blocking(|| self.store.get(id))?.ok_or_else(|| KbError::UnknownSolution { id: id.into() })
    }

    /// A solution for an agent to read: its text from character `offset`, at most
    /// [`crate::results::READ_TEXT_CHARS`] of it, saying where to continue.
    pub fn read(&self, id: &str, offset: usize) -> Result<crate::SolutionRead, KbError> {
        Ok(crate::SolutionRead::window(self.get(id)?, offset))
    }

    /// Every solution, newest first.
    pub fn list(&self) -> Result<SolutionList, KbError> {
        let all = blocking(|| self.store.all())?;
        Ok(SolutionList {
            solutions: all.into_iter().rev().map(SolutionSummary::from).collect(),
        })
    }

    /// Deletes a solution and says which it was.
    pub fn delete(&self, id: &str) -> Result<Deleted, KbError> {
        let solution = self.get(id)?;
        blocking(|| self.store.delete(&solution.id))?;
        Ok(Deleted {
            deleted: solution.id,
            title: solution.title,
        })
    }
}
