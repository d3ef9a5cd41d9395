//! Finding saved solutions: by meaning (`semantic`, the default), by words (`keyword`, BM25), or
//! both fused (`hybrid`).
//!
//! Semantic search scores a solution by its best chunk's cosine similarity to the question and
//! keeps those at or above a threshold, so a question the knowledge base cannot answer gets an
//! empty result with an explanation rather than five unrelated solutions.

use std::collections::HashMap;
use std::ops::Range;

use std::sync::Arc;
use std::time::Instant;

use devlens_embed::Embedder;
use devlens_search::quantized::Int8Rows;
use devlens_search::sqlite::blocking;
use devlens_search::{Fusion, Retrieval};

use crate::store::{LoadedVectors, SolutionStore};
use crate::{
    DEFAULT_TOP_K, EXCERPT_CHARS, KbError, KnowledgeBase, MAX_TOP_K, SearchHit, SearchOptions,
    SearchResults,
};

pub use devlens_search::SearchMode;

/// The mode a search runs in when neither the call nor `[kb] search_mode` names one: by
/// meaning, so a question in other words than the solution's still finds it.
pub const DEFAULT_MODE: SearchMode = SearchMode::Semantic;

/// The similarity threshold semantic search uses unless told otherwise, per embedding model.
///
/// Measured with `devlens kb eval` on the committed golden set (see the README): the value that
/// keeps the answer of on-topic questions while returning nothing for most questions the
/// knowledge base cannot answer. Models not measured here get [`UNCALIBRATED_THRESHOLD`].
pub fn calibrated_threshold(model: &str) -> f32 {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    match name.as_str() {
        "all-minilm-l6-v2" => MINILM_THRESHOLD,
        _ => UNCALIBRATED_THRESHOLD,
    }
}

/// all-MiniLM-L6-v2 (the local default).
pub const MINILM_THRESHOLD: f32 = 0.30;
/// For models without a measured value: low enough to keep real matches of the common OpenAI
/// and Ollama embedding models; set `[kb] similarity_threshold` for yours.
pub const UNCALIBRATED_THRESHOLD: f32 = 0.3;

/// From this many chunk vectors on, a semantic search scans 8-bit codes first (a quarter of
/// the memory to read) and scores exactly only the solutions that can be among the best;
/// below it one exact pass is as fast.
pub(crate) const QUANTIZE_FROM_ROWS: usize = 4096;

/// How many candidates each ranking contributes to hybrid fusion.
pub(crate) const FUSION_DEPTH: usize = 50;
/// In hybrid mode the best keyword match is kept even somewhat below the similarity threshold
/// (by at most this much): an exact error code or API name in the question is evidence of its
/// own. Far below it, it is a coincidence of words.
pub(crate) const KEYWORD_RESCUE_MARGIN: f32 = 0.1;
/// Reciprocal rank fusion with a small constant, so the first few places of each list dominate
/// (as in the docs corpus, where it ranked best).
const HYBRID_FUSION: Fusion = Fusion::ReciprocalRank { k: 10.0 };

/// English words that say nothing about a topic; left out of keyword queries so "how do I …"
/// does not match every solution.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "but", "by", "can", "could", "did", "do", "does", "doing", "for", "from",
    "get", "gets", "getting", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it",
    "its", "just", "me", "my", "no", "not", "of", "on", "or", "our", "should", "so", "some",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "up", "was",
    "we", "what", "when", "where", "which", "while", "who", "why", "will", "with", "would", "you",
    "your",
];

/// The words of a question worth matching, lower-cased, code names split too.
pub(crate) fn query_terms(query: &str) -> Vec<String> {
    let split = devlens_search::text::identifier_words(query);
    let mut terms: Vec<String> = Vec::new();
    let mut all: Vec<String> = Vec::new();
    for word in query
        .split(|c: char| !c.is_alphanumeric())
        .chain(split.split(' '))
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if !all.contains(&word) {
            all.push(word.clone());
        }
        if !STOP_WORDS.contains(&word.as_str()) && !terms.contains(&word) {
            terms.push(word);
        }
    }
    // A question made only of stop words ("how to do it") still searches for them.
    let mut chosen = if terms.is_empty() { all } else { terms };
    chosen.truncate(32);
    chosen
}

/// The chunk vectors of one model, loaded from the store and kept until anything is written.
#[derive(Debug, Default)]
pub(crate) struct VectorCache {
    pub generation: i64,
    pub model: String,
    pub dims: usize,
    /// Solutions in the store, with vectors or without.
    pub total: usize,
    /// Solution ids; `owner[row]` indexes into it.
    pub ids: Vec<String>,
    /// Where each id is in `ids`: hybrid fusion looks keyword hits up without a map per query.
    pub slot_of: HashMap<String, u32>,
    pub owner: Vec<u32>,
    pub ranges: Vec<Range<usize>>,
    pub data: Vec<f32>,
    /// The vectors in 8-bit codes, for a first pass over a large cache.
    pub codes: Option<Int8Rows>,
}

impl VectorCache {
    pub(crate) fn new(generation: i64, model: &str, dims: usize, loaded: LoadedVectors) -> Self {
        let mut cache = Self {
            generation,
            model: model.to_string(),
            dims,
            data: loaded.data,
            ..Self::default()
        };
        for (id, range) in loaded.rows {
            let next = cache.ids.len() as u32;
            let slot = *cache.slot_of.entry(id.clone()).or_insert_with(|| {
                cache.ids.push(id);
                next
            });
            cache.owner.push(slot);
            cache.ranges.push(range);
        }
        if cache.ranges.len() >= QUANTIZE_FROM_ROWS {
            cache.codes = Some(Int8Rows::new(dims, &cache.data));
        }
        cache
    }

    /// The ranking a store that searches vectors itself answered: the matched solutions only
    /// (no vectors), best first.
    pub(crate) fn of_matches(
        near: Vec<crate::store::NearChunk>,
    ) -> (Arc<Self>, Vec<SemanticMatch>) {
        let mut cache = Self::default();
        let mut matches = Vec::with_capacity(near.len());
        for (id, chunk, score) in near {
            matches.push(SemanticMatch {
                solution: cache.ids.len() as u32,
                score,
                chunk,
            });
            cache.slot_of.insert(id.clone(), cache.ids.len() as u32);
            cache.ids.push(id);
        }
        (Arc::new(cache), matches)
    }

    /// Solutions with vectors.
    pub(crate) fn solutions(&self) -> usize {
        self.ids.len()
    }

    /// The `limit` solutions most similar to `query` (a solution scoring as its best chunk),
    /// best first, with that chunk's range. Exactly what scoring every chunk would return: a
    /// large cache is first scanned in 8-bit codes, and only solutions that might be among the
    /// best are scored exactly.
    pub(crate) fn rank(&self, query: &[f32], limit: usize) -> Vec<SemanticMatch> {
        if query.len() != self.dims || self.dims == 0 || limit == 0 {
            return Vec::new();
        }
        let candidates = self.candidates(query, limit);
        // Best score and row per solution, in two flat arrays: one pass, no allocation per row.
        let mut best_score = vec![f32::NEG_INFINITY; self.ids.len()];
        let mut best_row = vec![0u32; self.ids.len()];
        for (row, vector) in self.data.chunks_exact(self.dims).enumerate() {
            let slot = self.owner[row] as usize;
            if candidates.as_ref().is_some_and(|keep| !keep[slot]) {
                continue;
            }
            let score = devlens_search::vector::dot(vector, query);
            if score > best_score[slot] {
                best_score[slot] = score;
                best_row[slot] = row as u32;
            }
        }
        let mut order: Vec<u32> = match &candidates {
            Some(keep) => (0..self.ids.len() as u32)
                .filter(|s| keep[*s as usize])
                .collect(),
            None => (0..self.ids.len() as u32).collect(),
        };
        let by_score = |a: &u32, b: &u32| {
            best_score[*b as usize]
                .total_cmp(&best_score[*a as usize])
                .then(a.cmp(b))
        };
        // Only the first `limit` need sorting: select them, then order those.
        if order.len() > limit {
            order.select_nth_unstable_by(limit - 1, by_score);
            order.truncate(limit);
        }
        order.sort_unstable_by(by_score);
        order
            .into_iter()
            .map(|solution| SemanticMatch {
                solution,
                score: best_score[solution as usize],
                chunk: self.ranges[best_row[solution as usize] as usize].clone(),
            })
            .collect()
    }

    /// Which solutions can be among the `limit` best, from the 8-bit codes; `None` (all) for a
    /// cache too small to have codes. A solution is left out only when even the highest score
    /// its codes allow is below the lowest score of `limit` others.
    fn candidates(&self, query: &[f32], limit: usize) -> Option<Vec<bool>> {
        let codes = self.codes.as_ref()?;
        let coded_query = codes.query(query)?;
        let solutions = self.ids.len();
        if limit >= solutions {
            return None;
        }
        let mut low = vec![f32::NEG_INFINITY; solutions];
        let mut high = vec![f32::NEG_INFINITY; solutions];
        codes.scan(&coded_query, |row, approx| {
            let slot = self.owner[row] as usize;
            low[slot] = low[slot].max(approx.low());
            high[slot] = high[slot].max(approx.high());
        });
        let (_, bar, _) = low.select_nth_unstable_by(limit - 1, |a, b| b.total_cmp(a));
        let bar = *bar;
        Some(high.into_iter().map(|h| h >= bar).collect())
    }
}

/// One solution's semantic score.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SemanticMatch {
    pub solution: u32,
    pub score: f32,
    pub chunk: Range<usize>,
}

/// A solution as a search ranked it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ranked {
    pub id: String,
    /// Mode-specific: cosine (semantic), BM25 (keyword), fused rank score (hybrid).
    pub score: f32,
    pub similarity: Option<f32>,
    pub chunk: Option<Range<usize>>,
}

/// BM25 order, as the store returned it.
pub(crate) fn keyword_ranked(keyword: &[(String, f32)]) -> Vec<Ranked> {
    keyword
        .iter()
        .map(|(id, score)| Ranked {
            id: id.clone(),
            score: *score,
            similarity: None,
            chunk: None,
        })
        .collect()
}

/// The `top_k` most similar solutions at or above `threshold`.
pub(crate) fn semantic_ranked(
    cache: &VectorCache,
    matches: &[SemanticMatch],
    threshold: f32,
    top_k: usize,
) -> Vec<Ranked> {
    matches
        .iter()
        .filter(|m| m.score >= threshold)
        .take(top_k)
        .map(|m| Ranked {
            id: cache.ids[m.solution as usize].clone(),
            score: m.score,
            similarity: Some(m.score),
            chunk: Some(m.chunk.clone()),
        })
        .collect()
}

/// Semantic and keyword rankings fused by reciprocal rank. The threshold gates meaning, except
/// that the best keyword match is kept a little below it ([`KEYWORD_RESCUE_MARGIN`]).
pub(crate) fn hybrid_ranked(
    cache: &VectorCache,
    matches: &[SemanticMatch],
    keyword: &[(String, f32)],
    threshold: f32,
    top_k: usize,
) -> Vec<Ranked> {
    let semantic_ids: Vec<u64> = matches
        .iter()
        .take(FUSION_DEPTH)
        .map(|m| m.solution as u64)
        .collect();
    // Keyword hits without vectors (not embedded yet) get slots past the cache's.
    let mut extra: Vec<&str> = Vec::new();
    let keyword_ids: Vec<u64> = keyword
        .iter()
        .map(|(id, _)| match cache.slot_of.get(id.as_str()) {
            Some(&slot) => u64::from(slot),
            None => {
                extra.push(id);
                (cache.ids.len() + extra.len() - 1) as u64
            }
        })
        .collect();
    let by_slot: HashMap<u64, &SemanticMatch> =
        matches.iter().map(|m| (m.solution as u64, m)).collect();
    let scored = |ids: &[u64]| -> Vec<(u64, f32)> { ids.iter().map(|&id| (id, 0.0)).collect() };
    let fused = HYBRID_FUSION.fuse(&scored(&semantic_ids), &scored(&keyword_ids));
    let keyword_best = keyword_ids.first().copied();
    let mut ranked = Vec::new();
    for (slot, score) in fused {
        let semantic_match = by_slot.get(&slot);
        let similarity = semantic_match.map(|m| m.score);
        let rescued = keyword_best == Some(slot)
            && similarity.is_none_or(|s| s >= threshold - KEYWORD_RESCUE_MARGIN);
        if !(similarity.is_some_and(|s| s >= threshold) || rescued) {
            continue;
        }
        let slot = slot as usize;
        let id = match cache.ids.get(slot) {
            Some(id) => id.clone(),
            None => extra[slot - cache.ids.len()].to_string(),
        };
        ranked.push(Ranked {
            id,
            score,
            similarity,
            chunk: semantic_match.map(|m| m.chunk.clone()),
        });
        if ranked.len() == top_k {
            break;
        }
    }
    ranked
}

/// The text shown under a result: the best chunk (semantic) or the first place a query word
/// appears (keyword), whitespace collapsed, about `max` characters.
pub(crate) fn excerpt(
    text: &str,
    chunk: Option<Range<usize>>,
    terms: &[String],
    max: usize,
) -> String {
    let start = match chunk {
        Some(r) if r.start < text.len() && text.is_char_boundary(r.start) => r.start,
        _ => {
            let lower = text.to_lowercase();
            // Lower-casing can change byte lengths; only trust a position on the same boundary.
            terms
                .iter()
                .filter_map(|t| lower.find(t.as_str()))
                .min()
                .filter(|&i| lower.len() == text.len() && text.is_char_boundary(i))
                .map(|i| {
                    // Start at the line or sentence the match is in, unless that is far back.
                    let sentence = text[..i].rfind(['\n', '.']).map_or(0, |p| p + 1);
                    if i - sentence <= max / 2 {
                        return sentence;
                    }
                    let from = (i - max / 3..=i)
                        .find(|&j| text.is_char_boundary(j))
                        .unwrap_or(i);
                    text[from..i].find(' ').map_or(from, |p| from + p + 1)
                })
                .unwrap_or(0)
        }
    };
    let mut out = String::new();
    let mut words = text[start..].split_whitespace();
    for word in words.by_ref() {
        if out.chars().count() + word.chars().count() + 1 > max {
            out.push('…');
            return out;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The question's semantic ranking: the vectors it ranked, its best matches, the threshold.
struct SemanticRanking {
    cache: Arc<VectorCache>,
    matches: Vec<SemanticMatch>,
    threshold: f32,
}

/// The question's semantic side before ranking: its vector and where it is ranked.
struct SemanticQuery {
    /// The in-memory copy of every vector; `None` where the store searches vectors itself.
    cache: Option<Arc<VectorCache>>,
    vector: Vec<f32>,
    model: String,
    dims: usize,
    threshold: f32,
    /// How many solutions to rank.
    depth: usize,
}

/// What the semantic side of a search can offer.
enum SemanticSide {
    /// The question, ready to rank, and a caveat for the answer (solutions without embeddings).
    Ready(SemanticQuery, Option<String>),
    /// Why there is none.
    Missing(String),
    /// Nothing is saved at all.
    EmptyBase,
}

impl KnowledgeBase {
    pub(crate) fn mode(&self, asked: Option<SearchMode>) -> SearchMode {
        asked
            .or_else(|| {
                self.settings()
                    .search_mode
                    .as_deref()
                    .and_then(|m| SearchMode::parse(m).ok())
            })
            .unwrap_or(DEFAULT_MODE)
    }

    pub(crate) fn top_k(&self, asked: Option<usize>) -> Result<usize, KbError> {
        let k = asked.or(self.settings().top_k).unwrap_or(DEFAULT_TOP_K);
        if k == 0 || k > MAX_TOP_K {
            return Err(KbError::InvalidInput(format!(
                "top_k must be between 1 and {MAX_TOP_K} (got {k})"
            )));
        }
        Ok(k)
    }

    pub(crate) fn threshold(&self, asked: Option<f32>, model: &str) -> Result<f32, KbError> {
        let t = asked
            .or(self.settings().similarity_threshold)
            .unwrap_or_else(|| calibrated_threshold(model));
        if !(-1.0..=1.0).contains(&t) || t.is_nan() {
            return Err(KbError::InvalidInput(format!(
                "similarity_threshold must be between -1 and 1 (cosine similarity; got {t})"
            )));
        }
        Ok(t)
    }

    /// The chunk vectors of `embedder`'s model, reloaded when anything was written since.
    fn vector_cache(
        &self,
        embedder: &dyn Embedder,
        generation: i64,
    ) -> Result<Arc<VectorCache>, KbError> {
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

    /// Solutions in all and with current vectors of `model`, counted again only when anything
    /// was written since.
    fn counts_now(&self, model: &str, generation: i64) -> Result<crate::store::Counts, KbError> {
        let mut slot = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, m, counts)) = slot.as_ref()
            && *g == generation
            && m == model
        {
            return Ok(*counts);
        }
        let counts = self.store.counts(Some(model))?;
        *slot = Some((generation, model.to_string(), counts));
        Ok(counts)
    }

    /// Whether `[kb] show_similarity_scores` asks for scores in result texts.
    fn show_scores(&self) -> bool {
        self.settings().show_similarity_scores.unwrap_or(true)
    }

    /// The semantic side of a search: the question's vector and the vectors to rank it over,
    /// or why there is none (in words that say what to do). A failure that is not about
    /// embeddings being unavailable is an error.
    async fn semantic_side(
        &self,
        query: &str,
        threshold: Option<f32>,
        top_k: usize,
        generation: i64,
    ) -> Result<SemanticSide, KbError> {
        let embedder = match self.embedder().await {
            Ok(embedder) => embedder,
            Err(reason) => {
                return Ok(SemanticSide::Missing(format!(
                    "semantic search is unavailable ({reason})"
                )));
            }
        };
        // Solutions in all, and with current vectors: from the store when it searches vectors
        // itself, else from the in-memory copy (loaded when anything changed).
        let cache = if self.store.searches_vectors() {
            None
        } else {
            Some(blocking(|| {
                self.vector_cache(embedder.as_ref(), generation)
            })?)
        };
        let (total, embedded) = match &cache {
            Some(cache) => (cache.total, cache.solutions()),
            None => {
                let counts = blocking(|| self.counts_now(embedder.model(), generation))?;
                (counts.solutions, counts.embedded)
            }
        };
        if total == 0 {
            return Ok(SemanticSide::EmptyBase);
        }
        if embedded == 0 {
            return Ok(SemanticSide::Missing(format!(
                "no solution has an embedding from {} yet: run `devlens kb reembed`",
                embedder.model()
            )));
        }
        let vector = match embedder.embed_query(query).await {
            Ok(vector) => vector,
            Err(e) if e.is_unavailable() => {
                return Ok(SemanticSide::Missing(format!(
                    "semantic search is unavailable ({e})"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let threshold = self.threshold(threshold, embedder.model())?;
        let caveat = (embedded < total).then(|| {
            format!(
                "{} of {} solutions have no current embedding and are found by keyword only: \
                 run `devlens kb reembed`",
                total - embedded,
                total
            )
        });
        Ok(SemanticSide::Ready(
            SemanticQuery {
                cache,
                vector,
                model: embedder.model().to_string(),
                dims: embedder.dims(),
                threshold,
                // Enough for the results, for hybrid fusion and for the eval's threshold sweep.
                depth: top_k.max(FUSION_DEPTH),
            },
            caveat,
        ))
    }

    /// Ranks the question over the chunk vectors: the in-memory copy, or the store's own
    /// vector search.
    fn rank_vectors(&self, query: SemanticQuery) -> Result<SemanticRanking, KbError> {
        let (cache, matches) = match query.cache {
            Some(cache) => {
                let matches = cache.rank(&query.vector, query.depth);
                (cache, matches)
            }
            None => VectorCache::of_matches(self.store.nearest(
                &query.model,
                query.dims,
                &query.vector,
                query.depth,
            )?),
        };
        Ok(SemanticRanking {
            cache,
            matches,
            threshold: query.threshold,
        })
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
        let terms = query_terms(query);
        let started = Instant::now();
        // Read once for every part of this search (the vectors, the counts, the keyword copy):
        // on PostgreSQL each read is a round trip.
        let generation = blocking(|| self.store.generation())?;

        // Semantic ranking, unless keyword search was asked for or embeddings are unavailable.
        let mut caveat = None;
        let semantic = if asked.uses_embeddings() {
            match self
                .semantic_side(query, options.similarity_threshold, top_k, generation)
                .await?
            {
                SemanticSide::EmptyBase => return Ok(self.empty_result(query, asked)),
                SemanticSide::Missing(why) => Err(why),
                SemanticSide::Ready(ranking, note) => {
                    caveat = note;
                    Ok(ranking)
                }
            }
        } else {
            Err(String::new())
        };
        let mut plan = Retrieval::with(asked, semantic);
        if let Some(note) = caveat {
            plan.note(note);
        }
        let ran = plan.mode;
        let keyword_depth = match ran {
            SearchMode::Semantic => None,
            SearchMode::Keyword => Some(top_k),
            SearchMode::Hybrid => Some(FUSION_DEPTH),
        };
        // Both rankings at once when there are both: the keyword copy ranks on a second thread
        // while the vectors are ranked here (on PostgreSQL, while this thread waits for the
        // database).
        let terms_asked = terms.as_slice();
        let keyword_side = || match keyword_depth {
            Some(depth) => {
                self.keywords
                    .search_at(self.store.as_ref(), generation, terms_asked, depth)
            }
            None => Ok(Vec::new()),
        };
        let semantic_query = plan.semantic.take();
        let (semantic, keyword) = blocking(|| match (semantic_query, keyword_depth) {
            (Some(query), Some(_)) => std::thread::scope(|scope| {
                let keyword = scope.spawn(keyword_side);
                let semantic = self.rank_vectors(query).map(Some);
                let keyword = keyword
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (semantic, keyword)
            }),
            (query, _) => (
                query.map(|q| self.rank_vectors(q)).transpose(),
                keyword_side(),
            ),
        });
        let semantic = semantic?;
        let keyword = keyword?;

        let mut threshold_used = None;
        let ranked = match &semantic {
            None => {
                if keyword.is_empty() {
                    let total = blocking(|| self.store.counts(None))?.solutions;
                    if total == 0 {
                        return Ok(self.empty_result(query, asked));
                    }
                    plan.note(format!(
                        "no saved solution contains any of the words {}; rephrase, or try \
                         semantic search",
                        terms
                            .iter()
                            .map(|t| format!("`{t}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                keyword_ranked(&keyword)
            }
            Some(side) => {
                threshold_used = Some(side.threshold);
                let ranked = if ran == SearchMode::Hybrid {
                    hybrid_ranked(&side.cache, &side.matches, &keyword, side.threshold, top_k)
                } else {
                    semantic_ranked(&side.cache, &side.matches, side.threshold, top_k)
                };
                if ranked.is_empty() {
                    let note = below_threshold_notice(
                        &side.cache,
                        &side.matches,
                        side.threshold,
                        self.store.as_ref(),
                    );
                    plan.note(note);
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
                excerpt: excerpt(&s.text, r.chunk.clone(), &terms, EXCERPT_CHARS),
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
            notice: plan.notice(),
            threshold: threshold_used,
            results,
            chunks,
            show_scores: self.show_scores(),
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
            show_scores: self.show_scores(),
        }
    }
}

/// Why a semantic search returned nothing: the closest solution and its score.
fn below_threshold_notice(
    cache: &VectorCache,
    matches: &[SemanticMatch],
    threshold: f32,
    store: &dyn SolutionStore,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_terms_drop_filler_and_split_code_names() {
        assert_eq!(
            query_terms("How do I fix useEffect cleanup?"),
            vec!["fix", "useeffect", "cleanup", "use", "effect"]
        );
        assert_eq!(query_terms("how to do it"), vec!["how", "to", "do", "it"]);
        assert!(query_terms("  ?! ").is_empty());
    }

    #[test]
    fn modes_parse_and_thresholds_follow_the_model() {
        assert_eq!(SearchMode::parse(" Hybrid"), Ok(SearchMode::Hybrid));
        assert!(SearchMode::parse("vector").is_err());
        assert_eq!(
            calibrated_threshold("sentence-transformers/all-MiniLM-L6-v2"),
            MINILM_THRESHOLD
        );
        assert_eq!(
            calibrated_threshold("text-embedding-3-small"),
            UNCALIBRATED_THRESHOLD
        );
    }

    #[test]
    fn a_solution_scores_as_its_best_chunk() {
        let loaded = LoadedVectors {
            rows: vec![("a".into(), 0..5), ("a".into(), 5..9), ("b".into(), 0..3)],
            data: vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8],
        };
        let cache = VectorCache::new(1, "m", 2, loaded);
        let ranked = cache.rank(&[0.0, 1.0], 10);
        assert_eq!(ranked[0].solution, 0);
        assert_eq!(ranked[0].chunk, 5..9);
        assert!((ranked[1].score - 0.8).abs() < 1e-6);
        assert!(cache.rank(&[1.0], 10).is_empty());
        assert_eq!(cache.rank(&[0.0, 1.0], 1).len(), 1);
    }

    #[test]
    fn the_coded_first_pass_ranks_exactly_as_scoring_every_chunk() {
        let dims = 24;
        let mut state = 11u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        // 5,000 chunks of 2,000 solutions (one to four chunks each), near-duplicates included.
        let mut loaded = LoadedVectors::default();
        let mut solution = 0;
        while loaded.rows.len() < 5000 {
            for chunk in 0..(solution % 4 + 1) {
                let mut v: Vec<f32> = (0..dims).map(|_| next()).collect();
                if solution % 50 == 7 {
                    v = loaded.data[..dims].to_vec();
                    v[0] += 1e-4 * chunk as f32;
                }
                devlens_search::vector::normalize(&mut v);
                loaded
                    .rows
                    .push((format!("s{solution}"), chunk * 10..chunk * 10 + 9));
                loaded.data.extend(v);
            }
            solution += 1;
        }
        let coded = VectorCache::new(1, "m", dims, loaded);
        assert!(coded.codes.is_some());
        let exact = VectorCache {
            codes: None,
            ..VectorCache::new(
                1,
                "m",
                dims,
                LoadedVectors {
                    rows: coded
                        .owner
                        .iter()
                        .zip(&coded.ranges)
                        .map(|(o, r)| (coded.ids[*o as usize].clone(), r.clone()))
                        .collect(),
                    data: coded.data.clone(),
                },
            )
        };
        for q in 0..30 {
            let mut query: Vec<f32> = (0..dims).map(|_| next()).collect();
            if q == 0 {
                query = coded.data[..dims].to_vec();
            }
            devlens_search::vector::normalize(&mut query);
            for limit in [1, 5, 50] {
                assert_eq!(
                    coded.rank(&query, limit),
                    exact.rank(&query, limit),
                    "query {q}"
                );
            }
        }
    }

    #[test]
    fn excerpts_start_at_the_match_and_stay_short() {
        let text = "Intro line.\nThe fix: set credentials to include. More words follow here.";
        let e = excerpt(text, None, &["credentials".into()], 30);
        assert!(e.starts_with("The fix"), "{e}");
        assert!(e.ends_with('…') && e.chars().count() <= 31, "{e}");
        assert_eq!(
            excerpt(text, Some(12..20), &[], 200),
            "The fix: set credentials to include. More words follow here."
        );
    }
}
