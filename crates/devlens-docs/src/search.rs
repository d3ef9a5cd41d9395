//! Hybrid retrieval over one library version: BM25 over heading paths and content, cosine over
//! the stored chunk embeddings, fused by reciprocal rank.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use devlens_search::fusion::reciprocal_rank_fusion;
use devlens_search::{KeywordField, KeywordIndex, VectorIndex};

use crate::ChunkKind;
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
    // The names a section's code examples use: "deep copy an object" finds the prose beside
    // `structuredClone(value)`.
    KeywordField {
        name: "code names",
        boost: 1.0,
    },
];

/// Candidates each retriever contributes before fusion.
const DEPTH: usize = 100;
/// Reciprocal rank fusion with `k` smaller than the paper's 60: only the first few results are
/// returned, so the top of each list should count most. On the Node.js golden set (40 questions)
/// hit@5 was 0.875 with k = 60 or 30 and 0.925 with k = 5, 10 or 20.
const FUSION_K: f32 = 10.0;
/// The semantic list counts twice the keyword list: with a vector per prose chunk it is the
/// stronger ranking on questions worded unlike the docs. On the blind dev halves, weights 1–3 with
/// k = 5–20 all scored within two questions of each other; these are the values chosen before.
const SEMANTIC_WEIGHT: f32 = 2.0;
const KEYWORD_WEIGHT: f32 = 1.0;
/// At most this many code names per section in the keyword field.
const MAX_CODE_NAMES: usize = 200;
/// Below this cosine a semantic-only hit is noise, not an answer.
const MIN_COSINE: f32 = 0.2;

/// A loaded, searchable version.
#[derive(Debug)]
pub struct VersionIndex {
    pub generation: i64,
    /// Batches of chunk vectors the version had when loaded.
    pub revision: i64,
    pub chunks: Vec<StoredChunk>,
    /// Shared with the index of the same generation at an earlier revision: chunk vectors
    /// added later change no text.
    keyword: Arc<KeywordIndex>,
    /// The model that embedded the chunks, and their vectors.
    vectors: Option<(String, ChunkVectors)>,
}

/// Every chunk's section vector (rows `0..chunks`), then the chunks' own vectors, each row
/// after that belonging to the chunk `passage_chunks[row - chunks]`.
#[derive(Debug)]
struct ChunkVectors {
    index: VectorIndex,
    chunks: usize,
    passage_chunks: Vec<usize>,
}

impl ChunkVectors {
    fn chunk_of(&self, row: u64) -> usize {
        let row = row as usize;
        if row < self.chunks {
            row
        } else {
            self.passage_chunks
                .get(row - self.chunks)
                .copied()
                .unwrap_or(usize::MAX)
        }
    }

    /// Chunks by their best cosine (of their section's vector and their own), best first.
    fn search(&self, query: &[f32], limit: usize, keep: impl Fn(u64) -> bool) -> Vec<(u64, f32)> {
        let rows = self
            .index
            .search(query, limit * 2, |row| keep(self.chunk_of(row) as u64));
        let mut seen = HashSet::new();
        rows.into_iter()
            .map(|hit| (self.chunk_of(hit.doc) as u64, hit.score))
            .filter(|(chunk, _)| seen.insert(*chunk))
            .take(limit)
            .collect()
    }
}

/// A ranked chunk and its fused relevance in 0..=1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub chunk: usize,
    pub relevance: f32,
}

impl VersionIndex {
    pub fn build(loaded: LoadedVersion) -> Result<Self, DocsError> {
        Self::build_after(loaded, None)
    }

    /// [`Self::build`], keeping the keyword index of `earlier` when it was loaded from the same
    /// generation (the chunks are the same; only chunk vectors were added since).
    pub fn build_after(
        loaded: LoadedVersion,
        earlier: Option<&VersionIndex>,
    ) -> Result<Self, DocsError> {
        let keyword = match earlier {
            Some(e) if e.generation == loaded.generation && e.chunks == loaded.chunks => {
                Arc::clone(&e.keyword)
            }
            _ => Arc::new(Self::keyword_index(&loaded.chunks)?),
        };
        let chunks = loaded.chunks.len();
        let vectors = loaded.vectors.and_then(|v| {
            let mut flat = v.sections;
            flat.extend_from_slice(&v.passages);
            VectorIndex::from_flat(v.dims, flat)
                .filter(|index| index.len() == chunks + v.passage_chunks.len())
                .map(|index| {
                    (
                        v.model,
                        ChunkVectors {
                            index,
                            chunks,
                            passage_chunks: v.passage_chunks,
                        },
                    )
                })
        });
        Ok(Self {
            generation: loaded.generation,
            revision: loaded.revision,
            chunks: loaded.chunks,
            keyword,
            vectors,
        })
    }

    fn keyword_index(chunks: &[StoredChunk]) -> Result<KeywordIndex, DocsError> {
        let code_names = code_names(chunks);
        Ok(KeywordIndex::build(
            FIELDS,
            chunks.iter().map(|c| {
                let names = code_names
                    .get(&(c.source.as_str(), c.section.as_str()))
                    .map_or("", String::as_str);
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
                    format!("{names} {}", devlens_search::text::identifier_words(names)),
                ]
            }),
        )?)
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
                .filter(|&(_, score)| score >= MIN_COSINE)
                .map(|(chunk, _)| chunk)
                .collect(),
            _ => Vec::new(),
        };
        let lists: Vec<(&[u64], f32)> = [
            (semantic.as_slice(), SEMANTIC_WEIGHT),
            (keyword.as_slice(), KEYWORD_WEIGHT),
        ]
        .into_iter()
        .filter(|(list, _)| !list.is_empty())
        .collect();
        // The best score possible: first in every list that has anything.
        let perfect: f32 = lists.iter().map(|(_, w)| w / (FUSION_K + 1.0)).sum();
        let fused: Vec<Ranked> = reciprocal_rank_fusion(&lists, FUSION_K)
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

/// The names a section's code examples use, by section (page and heading path): words of code
/// that look like identifiers (`structuredClone`, `os.path.join`), each once, in order.
fn code_names(chunks: &[StoredChunk]) -> HashMap<(&str, &str), String> {
    let mut names: HashMap<(&str, &str), (String, HashSet<&str>)> = HashMap::new();
    for c in chunks.iter().filter(|c| c.kind != ChunkKind::Text) {
        let (text, seen) = names
            .entry((c.source.as_str(), c.section.as_str()))
            .or_default();
        let words = c
            .content
            .split(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '.' || ch == '$'))
            .map(|w| w.trim_matches('.'))
            .filter(|w| w.len() >= 3 && w.chars().next().is_some_and(|ch| !ch.is_ascii_digit()));
        for word in words {
            if seen.len() >= MAX_CODE_NAMES {
                break;
            }
            if seen.insert(word) {
                text.push_str(word);
                text.push(' ');
            }
        }
    }
    names.into_iter().map(|(k, (text, _))| (k, text)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::LoadedVectors;

    fn chunk(section: &str, kind: ChunkKind, content: &str) -> StoredChunk {
        StoredChunk::of_page(section, kind, content)
    }

    fn unit(axis: usize) -> Vec<f32> {
        let mut v = vec![0.0; 4];
        v[axis] = 1.0;
        v
    }

    #[test]
    fn a_later_paragraph_is_found_by_its_own_vector() {
        let chunks = vec![
            chunk("Guide > Files", ChunkKind::Text, "Reading files."),
            chunk(
                "Guide > Files",
                ChunkKind::Text,
                "Watching a folder for changes.",
            ),
            chunk("Guide > Timers", ChunkKind::Text, "Running code later."),
        ];
        // Both sections point away from the question; the second chunk's own vector points at it.
        let sections = [unit(1), unit(1), unit(2)].concat();
        let index = VersionIndex::build(LoadedVersion {
            generation: 1,
            revision: 0,
            chunks,
            vectors: Some(LoadedVectors {
                model: "m".into(),
                dims: 4,
                sections,
                passage_chunks: vec![1],
                passages: unit(0),
            }),
        })
        .unwrap();
        let ranked = index.rank("notify me", Some(&unit(0)), false, 3).unwrap();
        assert_eq!(ranked[0].chunk, 1, "{ranked:?}");
        assert!(ranked[0].relevance > 0.0 && ranked[0].relevance <= 1.0);
    }

    #[test]
    fn prose_is_found_by_the_names_its_section_s_code_uses() {
        let chunks = vec![
            chunk(
                "Globals > Cloning",
                ChunkKind::Text,
                "Copies a value deeply.",
            ),
            chunk(
                "Globals > Cloning",
                ChunkKind::Code,
                "```js\nconst copy = structuredClone(original);\n```",
            ),
            chunk("Globals > Timers", ChunkKind::Text, "Schedules work."),
        ];
        let index = VersionIndex::build(LoadedVersion {
            generation: 1,
            revision: 0,
            chunks,
            vectors: None,
        })
        .unwrap();
        // Without code in the results, the prose beside the example answers.
        let ranked = index.rank("structuredClone", None, false, 3).unwrap();
        assert_eq!(ranked.first().map(|r| r.chunk), Some(0), "{ranked:?}");
    }
}
