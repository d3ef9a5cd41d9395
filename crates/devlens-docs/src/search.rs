//! Hybrid retrieval over one library version: BM25 over heading paths and content, cosine over
//! the stored chunk embeddings, fused by reciprocal rank.

use devlens_search::{Fusion, KeywordField, KeywordIndex, VectorIndex};

use crate::DocsError;
use crate::store::{LoadedVersion, StoredChunk};

const FIELDS: &[KeywordField] = &[
    // The heading path says what a chunk is about; a match there counts most.
    KeywordField {
        name: "section",
        boost: 2.0,
    },
    KeywordField {
        name: "content",
        boost: 1.0,
    },
];

/// Candidates each retriever contributes before fusion.
const DEPTH: usize = 100;
/// Reciprocal rank fusion with `k` smaller than the paper's 60: only the first few results are
/// returned, so the top of each list should count most. On the Node.js golden set (40 questions)
/// hit@5 was 0.875 with k = 60 or 30 and 0.925 with k = 5, 10 or 20.
const HYBRID_FUSION: Fusion = Fusion::ReciprocalRank { k: 10.0 };
/// Below this cosine a semantic-only hit is noise, not an answer.
const MIN_COSINE: f32 = 0.2;

/// A loaded, searchable version.
#[derive(Debug)]
pub struct VersionIndex {
    pub generation: i64,
    pub chunks: Vec<StoredChunk>,
    keyword: KeywordIndex,
    /// The model that embedded the chunks, and their vectors.
    vectors: Option<(String, VectorIndex)>,
}

/// A ranked chunk and its fused relevance in 0..=1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub chunk: usize,
    pub relevance: f32,
}

impl VersionIndex {
    pub fn build(loaded: LoadedVersion) -> Result<Self, DocsError> {
        let keyword = KeywordIndex::build(
            FIELDS,
            loaded.chunks.iter().map(|c| {
                vec![
                    format!(
                        "{} {}",
                        c.section,
                        devlens_search::text::identifier_words(&c.section)
                    ),
                    format!(
                        "{} {}",
                        c.content,
                        devlens_search::text::identifier_words(&c.content)
                    ),
                ]
            }),
        )?;
        let vectors = loaded.vectors.and_then(|(model, dims, flat)| {
            VectorIndex::from_flat(dims, flat)
                .filter(|v| v.len() == loaded.chunks.len())
                .map(|v| (model, v))
        });
        Ok(Self {
            generation: loaded.generation,
            chunks: loaded.chunks,
            keyword,
            vectors,
        })
    }

    /// The model whose vectors this version holds, if any.
    pub fn model(&self) -> Option<&str> {
        self.vectors.as_ref().map(|(m, _)| m.as_str())
    }

    /// Chunks for `query`, best first. `query_vector` (from the model in [`Self::model`]) adds
    /// semantic ranking; without it the ranking is BM25 alone.
    pub fn rank(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        include_code: bool,
        limit: usize,
    ) -> Result<Vec<Ranked>, DocsError> {
        let keep = |doc: u64| {
            include_code
                || self
                    .chunks
                    .get(doc as usize)
                    .is_some_and(|c| !c.kind.is_code())
        };
        let keyword: Vec<u64> = self
            .keyword
            .search(query, DEPTH)?
            .into_iter()
            .map(|h| h.doc)
            .filter(|&d| keep(d))
            .collect();
        let semantic: Vec<u64> = match (query_vector, &self.vectors) {
            (Some(q), Some((_, vectors))) => vectors
                .search(q, DEPTH, keep)
                .into_iter()
                .filter(|h| h.score >= MIN_COSINE)
                .map(|h| h.doc)
                .collect(),
            _ => Vec::new(),
        };
        // The best score possible: first in every list that has anything.
        let lists = [&keyword, &semantic]
            .iter()
            .filter(|l| !l.is_empty())
            .count();
        let perfect = HYBRID_FUSION.perfect_score(lists);
        let scored = |docs: &[u64]| -> Vec<(u64, f32)> { docs.iter().map(|&d| (d, 0.0)).collect() };
        let fused: Vec<Ranked> = HYBRID_FUSION
            .fuse(&scored(&semantic), &scored(&keyword))
            .into_iter()
            .map(|(doc, score)| Ranked {
                chunk: doc as usize,
                relevance: if perfect > 0.0 { score / perfect } else { 0.0 },
            })
            .collect();
        Ok(self.diversify(fused, limit))
    }

    /// The first `limit` of `ranked`, one chunk per section first: five answers from five
    /// sections cover a question better than three chunks of one. Further chunks of a section
    /// fill the places left, in rank order.
    fn diversify(&self, ranked: Vec<Ranked>, limit: usize) -> Vec<Ranked> {
        let mut seen = std::collections::HashSet::new();
        let (mut first, mut rest): (Vec<Ranked>, Vec<Ranked>) = ranked.into_iter().partition(|r| {
            self.chunks
                .get(r.chunk)
                .is_some_and(|c| seen.insert((c.source.as_str(), c.section.as_str())))
        });
        first.truncate(limit);
        let missing = limit - first.len();
        first.extend(rest.drain(..missing.min(rest.len())));
        first.sort_by(|a, b| b.relevance.total_cmp(&a.relevance));
        first
    }
}
