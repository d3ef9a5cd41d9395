//! The knowledge base: solutions a developer saved (snippets, answers, pages), found again by
//! meaning, and handed to an agent as a numbered, cited context — or answered from directly by a
//! configured LLM.
//!
//! - [`Solution`]s live in one SQLite file with their chunk embeddings and an FTS5 keyword
//!   index ([`store`]); every write is one transaction, so a failed save or import loses nothing.
//! - Long texts are cut into chunks that are all embedded ([`chunk`]); a solution scores as its
//!   best chunk.
//! - [`KnowledgeBase::search`]: `semantic` (default), `keyword` or `hybrid`, with a similarity
//!   threshold calibrated per model; without embeddings it falls back to keyword search and says
//!   so.
//! - [`KnowledgeBase::ask`]: the retrieved solutions as a token-bounded context with numbered
//!   sources, and, when an OpenAI-compatible endpoint is configured, an answer that cites them
//!   ([`answer`], [`llm`]).

pub mod answer;
pub mod chunk;
mod error;
pub mod eval;
pub mod llm;
pub mod search;
mod solution;
pub mod store;

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use devlens_core::{Config, DataDir, KbSettings, LlmSettings};
use devlens_embed::{Embedder, LazyEmbedder};
use devlens_search::sqlite::blocking;

pub use answer::{Context, Source};
pub use error::KbError;
pub use llm::ChatClient;
pub use search::{SearchMode, calibrated_threshold};
pub use solution::{EXPORT_VERSION, ExportFile, NewSolution, Solution, SolutionPatch, valid_id};
pub use store::ImportCounts;

use crate::search::VectorCache;
use crate::store::{ChunkVectors, Store};

/// Where the knowledge base lives under the data dir.
pub fn store_path(data_dir: &DataDir) -> PathBuf {
    data_dir.subdir("kb").join("kb.sqlite")
}

/// Results per search unless asked otherwise (seed 002's `topKResults`).
pub const DEFAULT_TOP_K: usize = 5;
/// The most results one search returns.
pub const MAX_TOP_K: usize = 50;
/// Characters of text shown under each search result.
pub const EXCERPT_CHARS: usize = 240;
/// Solutions embedded per transaction by `reembed`: the unit of progress that survives an
/// interruption.
pub const REEMBED_BATCH: usize = 32;

/// The knowledge base: the store, the embedder, the vectors in memory and the settings.
pub struct KnowledgeBase {
    store: Store,
    settings: KbSettings,
    llm: LlmSettings,
    embedder: LazyEmbedder,
    vectors: Mutex<Option<Arc<VectorCache>>>,
}

impl std::fmt::Debug for KnowledgeBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeBase")
            .field("store", &self.store.path())
            .finish()
    }
}

/// What a save stored.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Saved {
    pub solution: Solution,
    /// Whether it was embedded now (semantic search finds it).
    pub embedded: bool,
    pub chunks: usize,
    /// Of `chunks`, those an edit left unchanged: they kept their vectors instead of being
    /// embedded again.
    #[serde(skip_serializing_if = "is_zero")]
    pub reused_chunks: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Per-call search settings; `None` takes the `[kb]` setting, then the default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchOptions {
    pub mode: Option<SearchMode>,
    pub top_k: Option<usize>,
    pub similarity_threshold: Option<f32>,
}

/// One search result.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub id: String,
    pub title: String,
    pub url: Option<String>,
    pub tags: Vec<String>,
    /// Semantic: cosine similarity. Keyword: BM25. Hybrid: the fused rank score.
    pub score: f32,
    /// Cosine similarity of the best chunk, where embeddings were used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
    pub excerpt: String,
    pub created_at: String,
}

/// What a search found, and how.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResults {
    pub query: String,
    /// The mode that ran (keyword when semantic search was unavailable).
    pub mode: SearchMode,
    /// Why the mode differs from the one asked for, why nothing was found, or what is missing.
    pub notice: Option<String>,
    /// The similarity threshold applied (semantic and hybrid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f32>,
    pub results: Vec<SearchHit>,
    #[serde(skip)]
    chunks: Vec<Option<std::ops::Range<usize>>>,
}

/// `ask_knowledge_base`'s input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AskRequest {
    pub query: String,
    pub top_k: Option<usize>,
    pub mode: Option<SearchMode>,
    pub similarity_threshold: Option<f32>,
    /// `None`: the `[kb] auto_generate_answer` setting.
    pub generate_answer: Option<bool>,
    /// Token budget of the context [default: [`answer::DEFAULT_CONTEXT_TOKENS`]].
    pub context_limit: Option<usize>,
}

/// `ask_knowledge_base`'s answer.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskAnswer {
    pub query: String,
    pub mode: SearchMode,
    pub notice: Option<String>,
    /// The sources, numbered, within the token budget: answer from these and cite them as [n].
    pub context: String,
    pub sources: Vec<Source>,
    pub total_tokens: usize,
    pub truncated: bool,
    /// The generated answer, when asked for and an LLM endpoint is configured.
    pub answer: Option<String>,
    /// The model that wrote `answer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
}

/// What `reembed` did.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ReembedReport {
    pub model: String,
    pub embedded: usize,
    /// Solutions that already had current embeddings.
    pub up_to_date: usize,
    pub chunks: usize,
    pub seconds: f64,
}

/// What an import did.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub imported: usize,
    #[serde(flatten)]
    pub counts: ImportCounts,
    /// Solutions semantic search cannot see until `devlens kb reembed` runs.
    pub need_embedding: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// The knowledge base's state, for `status` output and the dev panel.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KbStatus {
    pub path: PathBuf,
    pub solutions: usize,
    pub embedded: usize,
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedder_unavailable: Option<String>,
    pub search_mode: SearchMode,
    pub similarity_threshold: Option<f32>,
    pub top_k: usize,
    pub llm_model: Option<String>,
}

impl Saved {
    pub fn to_text(&self) -> String {
        let s = &self.solution;
        let mut out = format!(
            "saved {} \"{}\"{}",
            s.id,
            s.title,
            if self.embedded && self.chunks > 0 && self.reused_chunks > 0 {
                format!(
                    " ({} chunks: {} embedded, {} unchanged kept their vectors)",
                    self.chunks,
                    self.chunks - self.reused_chunks,
                    self.reused_chunks
                )
            } else if self.embedded && self.chunks > 0 {
                format!(" ({} chunks embedded)", self.chunks)
            } else {
                String::new()
            }
        );
        if let Some(n) = &self.notice {
            out.push_str(&format!("\nnote: {n}"));
        }
        out
    }
}

impl SearchResults {
    /// One block per result: rank, title, score (when `show_scores`), tags and id; the URL; the
    /// excerpt. Then the notice.
    pub fn to_text(&self, show_scores: bool) -> String {
        let mut out = String::new();
        for (i, hit) in self.results.iter().enumerate() {
            let score = match (show_scores, hit.similarity) {
                (false, _) => String::new(),
                (true, Some(sim)) => format!("  {:.0}%", sim.max(0.0) * 100.0),
                (true, None) => format!("  score {:.2}", hit.score),
            };
            let tags = if hit.tags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", hit.tags.join(", "))
            };
            out.push_str(&format!(
                "{}. {}{score}{tags}  ({})\n",
                i + 1,
                hit.title,
                hit.id
            ));
            if let Some(url) = &hit.url {
                out.push_str(&format!("   {url}\n"));
            }
            out.push_str(&format!("   {}\n", hit.excerpt));
        }
        if self.results.is_empty() && self.notice.is_none() {
            out.push_str("no matching solution\n");
        }
        if let Some(n) = &self.notice {
            out.push_str(&format!("note ({} search): {n}\n", self.mode));
        }
        out.trim_end().to_string()
    }
}

impl AskAnswer {
    /// The generated answer (when there is one), then the numbered sources, then the notice.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(answer) = &self.answer {
            out.push_str(answer);
            out.push_str("\n\n---\n");
        }
        if self.sources.is_empty() {
            out.push_str("no saved solution matches the question\n");
        } else {
            out.push_str(&self.context);
            out.push('\n');
        }
        if let Some(n) = &self.notice {
            out.push_str(&format!("note: {n}\n"));
        }
        out.trim_end().to_string()
    }
}

/// Where a chunk's vector comes from when a solution is embedded.
enum VectorSource {
    /// Unchanged since the last save: its stored vector.
    Known(Vec<f32>),
    /// The model's answer for this index of the texts sent.
    Model(usize),
}

impl KnowledgeBase {
    /// Opens (creating if needed) the knowledge base of `config`'s data dir.
    pub fn open(config: &Config) -> Result<Self, KbError> {
        Self::open_at(&store_path(&config.data_dir), config)
    }

    /// The knowledge base of `config`'s data dir, opened once per process and shared by every
    /// caller (MCP tools, REST), so they share one vector cache and one embedder. A failure is
    /// not remembered: the next call tries again, so fixing the cause needs no restart.
    pub fn shared(config: &Config) -> Result<Arc<Self>, KbError> {
        type Opened = Mutex<std::collections::HashMap<PathBuf, Arc<KnowledgeBase>>>;
        static OPENED: std::sync::OnceLock<Opened> = std::sync::OnceLock::new();
        let path = store_path(&config.data_dir);
        let mut opened = OPENED
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(kb) = opened.get(&path) {
            return Ok(Arc::clone(kb));
        }
        let kb = Arc::new(Self::open_at(&path, config)?);
        opened.insert(path, Arc::clone(&kb));
        Ok(kb)
    }

    /// Opens the knowledge base in the file `path` with `config`'s settings.
    pub fn open_at(path: &Path, config: &Config) -> Result<Self, KbError> {
        let mut embedding = config.file.embedding.clone();
        if embedding.model_dir.is_some() {
            embedding.model_dir = embedding.model_dir.map(|d| config.base_dir().join(d));
        }
        Ok(Self {
            store: Store::open(path)?,
            settings: config.file.kb.clone(),
            llm: config.file.llm.clone(),
            embedder: LazyEmbedder::new(embedding, config.data_dir.clone()),
            vectors: Mutex::new(None),
        })
    }

    /// Uses `embedder` (or, with `Err(reason)`, none) instead of the configured one: tests, and
    /// hosts that already loaded a model.
    pub fn with_embedder(self, embedder: Result<Arc<dyn Embedder>, String>) -> Self {
        Self {
            embedder: LazyEmbedder::ready(embedder),
            ..self
        }
    }

    /// Replaces the `[llm]` settings (tests, and hosts that configure the endpoint themselves).
    pub fn with_llm(self, llm: LlmSettings) -> Self {
        Self { llm, ..self }
    }

    pub fn path(&self) -> &Path {
        self.store.path()
    }

    /// The embedder, loaded on first use, or why there is none.
    pub async fn embedder(&self) -> Result<Arc<dyn Embedder>, String> {
        self.embedder.get().await
    }

    /// Chunks and embeds solutions; `Err` carries the reason embeddings are unavailable.
    async fn embed(
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

    /// Every solution, newest first.
    pub fn list(&self) -> Result<Vec<Solution>, KbError> {
        let mut all = blocking(|| self.store.all())?;
        all.reverse();
        Ok(all)
    }

    /// Deletes a solution and returns what it was.
    pub fn delete(&self, id: &str) -> Result<Solution, KbError> {
        let solution = self.get(id)?;
        blocking(|| self.store.delete(&solution.id))?;
        Ok(solution)
    }

    fn mode(&self, asked: Option<SearchMode>) -> SearchMode {
        asked
            .or_else(|| {
                self.settings
                    .search_mode
                    .as_deref()
                    .and_then(SearchMode::parse)
            })
            .unwrap_or_default()
    }

    fn top_k(&self, asked: Option<usize>) -> Result<usize, KbError> {
        let k = asked.or(self.settings.top_k).unwrap_or(DEFAULT_TOP_K);
        if k == 0 || k > MAX_TOP_K {
            return Err(KbError::InvalidInput(format!(
                "top_k must be between 1 and {MAX_TOP_K} (got {k})"
            )));
        }
        Ok(k)
    }

    fn threshold(&self, asked: Option<f32>, model: &str) -> Result<f32, KbError> {
        let t = asked
            .or(self.settings.similarity_threshold)
            .unwrap_or_else(|| calibrated_threshold(model));
        if !(-1.0..=1.0).contains(&t) || t.is_nan() {
            return Err(KbError::InvalidInput(format!(
                "similarity_threshold must be between -1 and 1 (cosine similarity; got {t})"
            )));
        }
        Ok(t)
    }

    /// The chunk vectors of `embedder`'s model, reloaded when anything was written since.
    fn vector_cache(&self, embedder: &dyn Embedder) -> Result<Arc<VectorCache>, KbError> {
        let generation = self.store.generation()?;
        let dims = embedder.dims();
        let mut slot = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cache) = slot.as_ref()
            && cache.generation == generation
            && cache.model == embedder.model()
            && cache.dims == dims
        {
            return Ok(cache.clone());
        }
        let loaded = self.store.vectors(embedder.model(), dims)?;
        let mut cache = VectorCache::new(generation, embedder.model(), dims, loaded);
        // Counted with the vectors, at the same generation: searches need not count again.
        cache.total = self.store.counts(None)?.solutions;
        let cache = Arc::new(cache);
        *slot = Some(cache.clone());
        Ok(cache)
    }

    /// Finds saved solutions for `query`.
    pub async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, KbError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(KbError::InvalidInput(
                "the query is empty: describe the problem, e.g. \"CORS error on PUT with credentials\"".into(),
            ));
        }
        let asked = self.mode(options.mode);
        let top_k = self.top_k(options.top_k)?;
        if options.similarity_threshold.is_some() {
            self.threshold(options.similarity_threshold, "")?;
        }
        let terms = search::query_terms(query);
        let started = Instant::now();
        let mut notes: Vec<String> = Vec::new();

        // Semantic ranking, unless keyword search was asked for or embeddings are unavailable.
        let mut semantic: Option<(Arc<VectorCache>, Vec<search::SemanticMatch>, f32)> = None;
        if asked != SearchMode::Keyword {
            match self.embedder().await {
                Err(reason) => notes.push(format!(
                    "semantic search is unavailable ({reason}); showing keyword matches"
                )),
                Ok(embedder) => {
                    let cache = blocking(|| self.vector_cache(embedder.as_ref()))?;
                    if cache.total == 0 {
                        return Ok(self.empty_result(query, asked));
                    }
                    if cache.solutions() == 0 {
                        notes.push(format!(
                            "no solution has an embedding from {} yet: run `devlens kb reembed`; \
                             showing keyword matches",
                            embedder.model()
                        ));
                    } else {
                        match embedder.embed_query(query).await {
                            Ok(q) => {
                                let threshold =
                                    self.threshold(options.similarity_threshold, embedder.model())?;
                                if cache.solutions() < cache.total {
                                    notes.push(format!(
                                        "{} of {} solutions have no current embedding and are found \
                                         by keyword only: run `devlens kb reembed`",
                                        cache.total - cache.solutions(),
                                        cache.total
                                    ));
                                }
                                // Enough for the results, for hybrid fusion and for the eval's
                                // threshold sweep.
                                let ranked = cache.rank(&q, top_k.max(search::FUSION_DEPTH));
                                semantic = Some((cache, ranked, threshold));
                            }
                            Err(e) if e.is_unavailable() => notes.push(format!(
                                "semantic search is unavailable ({e}); showing keyword matches"
                            )),
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
            }
        }
        let ran = match (&semantic, asked) {
            (None, _) => SearchMode::Keyword,
            (Some(_), mode) => mode,
        };
        let keyword = if ran == SearchMode::Semantic {
            Vec::new()
        } else {
            let depth = if ran == SearchMode::Keyword {
                top_k
            } else {
                search::FUSION_DEPTH
            };
            let expr = search::fts_query(&terms);
            if expr.is_empty() {
                Vec::new()
            } else {
                blocking(|| self.store.keyword(&expr, depth))?
            }
        };

        let mut threshold_used = None;
        let ranked = match &semantic {
            None => {
                if keyword.is_empty() {
                    let total = blocking(|| self.store.counts(None))?.solutions;
                    if total == 0 {
                        return Ok(self.empty_result(query, asked));
                    }
                    notes.push(format!(
                        "no saved solution contains any of the words {}; rephrase, or try \
                         semantic search",
                        terms
                            .iter()
                            .map(|t| format!("`{t}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                search::keyword_ranked(&keyword)
            }
            Some((cache, matches, threshold)) => {
                threshold_used = Some(*threshold);
                let ranked = if ran == SearchMode::Hybrid {
                    search::hybrid_ranked(cache, matches, &keyword, *threshold, top_k)
                } else {
                    search::semantic_ranked(cache, matches, *threshold, top_k)
                };
                if ranked.is_empty() {
                    notes.push(below_threshold_notice(
                        cache,
                        matches,
                        *threshold,
                        &self.store,
                    ));
                }
                ranked
            }
        };
        let ids: Vec<&str> = ranked.iter().take(top_k).map(|r| r.id.as_str()).collect();
        let solutions = blocking(|| self.store.get_many(&ids))?;
        let mut results = Vec::with_capacity(ranked.len());
        let mut chunks = Vec::with_capacity(ranked.len());
        for r in ranked.into_iter().take(top_k) {
            let Some(s) = solutions.iter().find(|s| s.id == r.id) else {
                continue;
            };
            results.push(SearchHit {
                excerpt: search::excerpt(&s.text, r.chunk.clone(), &terms, EXCERPT_CHARS),
                id: s.id.clone(),
                title: s.title.clone(),
                url: s.url.clone(),
                tags: s.tags.clone(),
                score: r.score,
                similarity: r.similarity,
                created_at: s.created_at.clone(),
            });
            chunks.push(r.chunk);
        }
        tracing::info!(
            target: "devlens::kb",
            query,
            mode = ran.as_str(),
            results = results.len(),
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
            "kb search"
        );
        Ok(SearchResults {
            query: query.to_string(),
            mode: ran,
            notice: (!notes.is_empty()).then(|| notes.join("; ")),
            threshold: threshold_used,
            results,
            chunks,
        })
    }

    fn empty_result(&self, query: &str, mode: SearchMode) -> SearchResults {
        SearchResults {
            query: query.to_string(),
            mode,
            notice: Some(
                "the knowledge base is empty: save solutions with `devlens kb add` (or the \
                 save_solution tool), or import an export with `devlens kb import`"
                    .into(),
            ),
            threshold: None,
            results: Vec::new(),
            chunks: Vec::new(),
        }
    }

    /// Retrieves solutions for `request.query` and assembles them into a numbered context;
    /// generates an answer from it when asked (or `[kb] auto_generate_answer`) and an LLM
    /// endpoint is configured.
    pub async fn ask(&self, request: &AskRequest) -> Result<AskAnswer, KbError> {
        let limit = request
            .context_limit
            .unwrap_or(answer::DEFAULT_CONTEXT_TOKENS);
        if !(answer::MIN_CONTEXT_TOKENS..=answer::MAX_CONTEXT_TOKENS).contains(&limit) {
            return Err(KbError::InvalidInput(format!(
                "context_limit must be between {} and {} tokens (got {limit})",
                answer::MIN_CONTEXT_TOKENS,
                answer::MAX_CONTEXT_TOKENS
            )));
        }
        let generate = request
            .generate_answer
            .or(self.settings.auto_generate_answer)
            .unwrap_or(false);
        // Check the endpoint before searching: a misconfiguration is the caller's to fix first.
        let client = if generate {
            ChatClient::from_settings(&self.llm, &|name| std::env::var(name).ok())?
        } else {
            None
        };
        let found = self
            .search(
                &request.query,
                &SearchOptions {
                    mode: request.mode,
                    top_k: request.top_k,
                    similarity_threshold: request.similarity_threshold,
                },
            )
            .await?;
        let solutions = blocking(|| {
            self.store.get_many(
                &found
                    .results
                    .iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>(),
            )
        })?;
        let best_keyword = found.results.iter().map(|r| r.score).fold(0.0f32, f32::max);
        let retrieved: Vec<answer::Retrieved<'_>> = found
            .results
            .iter()
            .zip(&found.chunks)
            .filter_map(|(hit, chunk)| {
                let solution = solutions.iter().find(|s| s.id == hit.id)?;
                let relevance = match hit.similarity {
                    Some(sim) => (sim.clamp(0.0, 1.0) * 100.0).round() as u32,
                    None if best_keyword > 0.0 => (hit.score / best_keyword * 100.0).round() as u32,
                    None => 0,
                };
                Some(answer::Retrieved {
                    solution,
                    relevance,
                    best_chunk: chunk.clone(),
                })
            })
            .collect();
        let context = answer::assemble(&retrieved, limit);
        let mut notice = found.notice.clone();
        let mut answer_text = None;
        let mut answered_by = None;
        if generate {
            match (&client, context.sources.is_empty()) {
                (None, _) => push_note(
                    &mut notice,
                    format!(
                        "no answer generated: no LLM endpoint is configured; {}",
                        llm::HOW_TO_CONFIGURE
                    ),
                ),
                (Some(_), true) => push_note(
                    &mut notice,
                    "no answer generated: no saved solution matches the question".into(),
                ),
                (Some(client), false) => {
                    let text = client
                        .complete(
                            answer::SYSTEM_PROMPT,
                            &answer::user_prompt(&found.query, &context.text),
                        )
                        .await?;
                    answer_text = Some(text);
                    answered_by = Some(client.model().to_string());
                }
            }
        }
        Ok(AskAnswer {
            query: found.query,
            mode: found.mode,
            notice,
            context: context.text,
            sources: context.sources,
            total_tokens: context.tokens,
            truncated: context.truncated,
            answer: answer_text,
            answered_by,
        })
    }

    /// Every solution in the export format.
    pub fn export(&self) -> Result<ExportFile, KbError> {
        Ok(ExportFile {
            version: EXPORT_VERSION,
            solutions: blocking(|| self.store.all())?,
        })
    }

    /// The export as pretty JSON (what `devlens kb export` writes).
    pub fn export_json(&self) -> Result<String, KbError> {
        let file = self.export()?;
        serde_json::to_string_pretty(&file)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| KbError::InvalidInput(format!("cannot serialise the export: {e}")))
    }

    /// Imports an export file: every solution or, when anything is wrong with the file, none.
    /// Solutions whose id exists are replaced; embeddings come from `reembed`.
    pub fn import_json(&self, json: &str, source_name: &str) -> Result<ImportReport, KbError> {
        let fail = |problems: String| KbError::Import {
            source_name: source_name.to_string(),
            problems,
        };
        let file: ExportFile = serde_json::from_str(json).map_err(|e| fail(e.to_string()))?;
        if file.version != EXPORT_VERSION {
            return Err(fail(format!(
                "it is format version {}, this devlens reads version {EXPORT_VERSION}",
                file.version
            )));
        }
        let mut problems = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, s) in file.solutions.iter().enumerate() {
            let at = format!("solutions[{i}] (id `{}`)", s.id);
            if !valid_id(&s.id) {
                problems.push(format!(
                    "{at}: the id must be 1–64 letters, digits, `-` or `_`"
                ));
            }
            if !seen.insert(s.id.as_str()) {
                problems.push(format!("{at}: the id appears twice"));
            }
            let cleaned = solution::clean(NewSolution {
                title: s.title.clone(),
                url: s.url.clone(),
                text: s.text.clone(),
                summary: s.summary.clone(),
                tags: s.tags.clone(),
            });
            if let Err(e) = cleaned {
                problems.push(format!("{at}: {e}"));
            }
            for (name, ts) in [("createdAt", &s.created_at), ("updatedAt", &s.updated_at)] {
                if !solution::valid_timestamp(ts) {
                    problems.push(format!("{at}: {name} `{ts}` is not an RFC 3339 timestamp"));
                }
            }
            if problems.len() >= 5 {
                break;
            }
        }
        if !problems.is_empty() {
            return Err(fail(problems.join("; ")));
        }
        let counts = blocking(|| self.store.import(&file.solutions))?;
        let need_embedding = blocking(|| {
            let model = self.embedding_model_hint();
            self.store.counts(model.as_deref())
        })
        .map(|c| c.solutions - c.embedded)?;
        Ok(ImportReport {
            imported: file.solutions.len(),
            counts,
            need_embedding,
            notice: (need_embedding > 0).then(|| {
                format!(
                    "{need_embedding} solutions have no current embedding: run `devlens kb reembed` \
                     so semantic search finds them (keyword search already does)"
                )
            }),
        })
    }

    /// The model a current embedding is made by, without loading the embedder: the loaded
    /// embedder's, else the cached vectors', else the one most solutions were embedded with (a
    /// remote provider's, say), else the local default.
    fn embedding_model_hint(&self) -> Option<String> {
        self.embedder
            .loaded_model()
            .or_else(|| {
                let c = self.vectors.lock().ok()?;
                c.as_ref().map(|c| c.model.clone())
            })
            .or_else(|| self.store.prevailing_model().ok().flatten())
            .or_else(|| Some(devlens_embed::DEFAULT_LOCAL_MODEL.to_string()))
    }

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
            path: self.store.path().to_path_buf(),
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

fn push_note(notice: &mut Option<String>, note: String) {
    *notice = Some(match notice.take() {
        Some(n) => format!("{n}; {note}"),
        None => note,
    });
}

/// Why a semantic search returned nothing: the closest solution and its score.
fn below_threshold_notice(
    cache: &VectorCache,
    matches: &[search::SemanticMatch],
    threshold: f32,
    store: &Store,
) -> String {
    let best = matches.first().and_then(|m| {
        let id = cache.ids.get(m.solution as usize)?;
        let title = store.get(id).ok().flatten()?.title;
        Some(format!("the closest is \"{title}\" at {:.2}", m.score))
    });
    format!(
        "no saved solution is close enough in meaning (similarity threshold {threshold:.2}{}). \
         Rephrase the question, try mode `keyword` or `hybrid`, or lower similarity_threshold",
        best.map(|b| format!("; {b}")).unwrap_or_default()
    )
}
