//! Hybrid retrieval, the part every corpus shares: which [`SearchMode`] runs, the fall back from
//! meaning to keywords (with the notice that says why), and how two rankings become one
//! ([`Fusion`]).
//!
//! A corpus keeps what is specific to it: what it embeds, its keyword fields, its filters, its
//! thresholds. It asks [`Retrieval::plan`] what to run given the mode asked for and whether its
//! semantic side could be made ready (an index, the question's vector), runs the rankings the
//! plan names, and fuses them with its [`Fusion`]. Semantic search degrades, never fails: when
//! the semantic side is missing the plan says keyword, and the notice tells the user why and
//! what to do.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::fusion::reciprocal_rank_fusion;

/// How results are ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// By words: BM25.
    Keyword,
    /// By meaning: cosine similarity of embeddings.
    Semantic,
    /// Both, fused.
    Hybrid,
}

impl SearchMode {
    pub const ALL: [SearchMode; 3] = [Self::Semantic, Self::Keyword, Self::Hybrid];

    /// `keyword`, `semantic` or `hybrid` (any case); the error says which names exist.
    pub fn parse(input: &str) -> Result<Self, String> {
        let name = input.trim();
        Self::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("unknown search mode '{name}': use semantic, keyword or hybrid"))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keyword => "keyword",
            Self::Semantic => "semantic",
            Self::Hybrid => "hybrid",
        }
    }

    /// Whether this mode ranks by embeddings (and so needs a semantic side).
    pub fn uses_embeddings(self) -> bool {
        self != Self::Keyword
    }
}

impl std::fmt::Display for SearchMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a search runs: the mode, the semantic side it ranks with (when the mode uses one), and
/// the notes the answer carries (why it fell back, caveats of the semantic side).
#[derive(Debug)]
pub struct Retrieval<S> {
    /// The mode that runs: the one asked for, or keyword when the semantic side was missing.
    pub mode: SearchMode,
    /// The semantic side, when the mode that runs uses one.
    pub semantic: Option<S>,
    notes: Vec<String>,
}

/// The words that start the notice of a search that fell back to keyword ranking.
pub const KEYWORD_FALLBACK: &str = "keyword ranking only";

impl<S> Retrieval<S> {
    /// Plans a search in mode `asked`. `semantic` makes its semantic side ready (an index, the
    /// question's vector) or says why it cannot, in words that say what to do; it is called only
    /// when `asked` uses embeddings. Without it the search ranks by keywords and notes why.
    pub async fn plan<F, Fut>(asked: SearchMode, semantic: F) -> Self
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<S, String>>,
    {
        if !asked.uses_embeddings() {
            return Self::keyword();
        }
        Self::with(asked, semantic().await)
    }

    /// Plans a search in mode `asked` whose semantic side is already known.
    pub fn with(asked: SearchMode, semantic: Result<S, String>) -> Self {
        match semantic {
            _ if !asked.uses_embeddings() => Self::keyword(),
            Ok(side) => Self {
                mode: asked,
                semantic: Some(side),
                notes: Vec::new(),
            },
            Err(why) => Self {
                mode: SearchMode::Keyword,
                semantic: None,
                notes: vec![format!("{KEYWORD_FALLBACK}: {why}")],
            },
        }
    }

    /// A keyword search, as asked: no notes.
    pub fn keyword() -> Self {
        Self {
            mode: SearchMode::Keyword,
            semantic: None,
            notes: Vec::new(),
        }
    }

    /// Adds a caveat the answer carries (a stale index, solutions not embedded yet).
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// The notes joined into the answer's `notice`, or `None`.
    pub fn notice(&self) -> Option<String> {
        (!self.notes.is_empty()).then(|| self.notes.join("; "))
    }

    /// Whether the search fell back from a mode that uses embeddings.
    pub fn fell_back(&self) -> bool {
        self.semantic.is_none() && self.notes.iter().any(|n| n.starts_with(KEYWORD_FALLBACK))
    }
}

/// How a semantic and a keyword ranking become one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal rank fusion: each list gives `1 / (k + rank)`. Scale-free; a small `k` lets
    /// the first few places of each list dominate.
    ReciprocalRank { k: f32 },
    /// The semantic candidates re-scored: cosine + `keyword_weight` × (BM25 / the question's best
    /// BM25). Keyword-only documents are not added. Better than rank fusion where the semantic
    /// ranking is much the stronger, because it lets keywords break near-ties without giving
    /// the weaker list an equal say.
    KeywordBonus { keyword_weight: f32 },
}

/// One ranked document: its id in the corpus and its score.
pub type Scored = (u64, f32);

impl Fusion {
    /// Fuses `semantic` and `keyword` (each best first) into one list, best first. Ties keep the
    /// order the documents first appear in (semantic, then keyword) for [`Self::KeywordBonus`],
    /// and the lower id first for [`Self::ReciprocalRank`].
    pub fn fuse(self, semantic: &[Scored], keyword: &[Scored]) -> Vec<Scored> {
        match self {
            Self::ReciprocalRank { k } => {
                let semantic: Vec<u64> = semantic.iter().map(|s| s.0).collect();
                let keyword: Vec<u64> = keyword.iter().map(|s| s.0).collect();
                let lists: Vec<(&[u64], f32)> =
                    [(semantic.as_slice(), 1.0), (keyword.as_slice(), 1.0)]
                        .into_iter()
                        .filter(|(list, _)| !list.is_empty())
                        .collect();
                reciprocal_rank_fusion(&lists, k)
            }
            Self::KeywordBonus { keyword_weight } => {
                let best = keyword
                    .first()
                    .map(|k| k.1)
                    .filter(|s| *s > 0.0)
                    .unwrap_or(1.0);
                let bonus: HashMap<u64, f32> =
                    keyword.iter().map(|&(d, s)| (d, s / best)).collect();
                semantic
                    .iter()
                    .map(|&(doc, cosine)| {
                        let extra = bonus.get(&doc).copied().unwrap_or(0.0);
                        (doc, cosine + keyword_weight * extra)
                    })
                    .collect()
            }
        }
    }

    /// The best fused score possible for `lists` non-empty rankings: first in every one. Divides
    /// reciprocal-rank scores into a 0–1 relevance.
    pub fn perfect_score(self, lists: usize) -> f32 {
        match self {
            Self::ReciprocalRank { k } => lists as f32 / (k + 1.0),
            Self::KeywordBonus { keyword_weight } => 1.0 + keyword_weight,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_any_case_and_a_wrong_name_lists_the_right_ones() {
        assert_eq!(SearchMode::parse(" Hybrid ").unwrap(), SearchMode::Hybrid);
        assert_eq!(SearchMode::parse("keyword").unwrap(), SearchMode::Keyword);
        let err = SearchMode::parse("fuzzy").unwrap_err();
        assert!(
            err.contains("'fuzzy'") && err.contains("semantic, keyword or hybrid"),
            "{err}"
        );
        assert_eq!(
            serde_json::to_value(SearchMode::Semantic).unwrap(),
            serde_json::json!("semantic")
        );
    }

    #[tokio::test]
    async fn a_missing_semantic_side_falls_back_to_keywords_and_says_why() {
        let plan: Retrieval<()> = Retrieval::plan(SearchMode::Hybrid, || async {
            Err("no index: build it".into())
        })
        .await;
        assert_eq!(plan.mode, SearchMode::Keyword);
        assert!(plan.fell_back());
        assert_eq!(
            plan.notice().as_deref(),
            Some("keyword ranking only: no index: build it")
        );

        let ready = Retrieval::with(SearchMode::Semantic, Ok(7));
        assert_eq!(
            (ready.mode, ready.semantic),
            (SearchMode::Semantic, Some(7))
        );
        assert_eq!(ready.notice(), None);
    }

    #[tokio::test]
    async fn a_keyword_search_never_makes_the_semantic_side_ready() {
        let plan: Retrieval<()> = Retrieval::plan(SearchMode::Keyword, || async {
            panic!("the semantic side of a keyword search was asked for")
        })
        .await;
        assert_eq!(plan.mode, SearchMode::Keyword);
        assert!(!plan.fell_back());
        assert_eq!(plan.notice(), None);
    }

    #[test]
    fn notes_add_up_in_the_notice() {
        let mut plan = Retrieval::with(SearchMode::Hybrid, Ok(()));
        plan.note("the index is stale");
        plan.note("2 of 5 have no embedding");
        assert_eq!(
            plan.notice().as_deref(),
            Some("the index is stale; 2 of 5 have no embedding")
        );
    }

    #[test]
    fn rank_fusion_rewards_documents_both_lists_rank_well() {
        let fused = Fusion::ReciprocalRank { k: 10.0 }.fuse(
            &[(2, 0.9), (4, 0.8), (1, 0.5)],
            &[(1, 9.0), (2, 8.0), (3, 1.0)],
        );
        let order: Vec<u64> = fused.iter().map(|f| f.0).collect();
        assert_eq!(&order[..2], &[2, 1]);
        assert_eq!(order.len(), 4);
        let perfect = Fusion::ReciprocalRank { k: 10.0 }.perfect_score(2);
        assert!(fused[0].1 <= perfect);
    }

    #[test]
    fn a_keyword_bonus_breaks_near_ties_among_semantic_candidates_only() {
        let fused = Fusion::KeywordBonus {
            keyword_weight: 0.1,
        }
        .fuse(&[(1, 0.80), (2, 0.79)], &[(2, 4.0), (9, 2.0)]);
        // 2 gets the full bonus (the best keyword match), 1 none; 9 had no semantic score.
        assert_eq!(fused.len(), 2);
        let two = fused.iter().find(|f| f.0 == 2).unwrap().1;
        assert!((two - 0.89).abs() < 1e-6, "{two}");
        assert!(fused.iter().all(|f| f.0 != 9));
    }
}
