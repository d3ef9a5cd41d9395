//! Finding operations from a question: BM25 keyword ranking over what an operation says about
//! itself (method, path, summary, tags, operationId, the first sentence of its description).
//!
//! `method` and `tag` are strict filters applied after recall: a question
//! recalls candidates by meaning, the filters then keep only what the caller allows.

use serde::Serialize;

use devlens_search::{Fusion, KeywordField, KeywordIndex, Retrieval, text::identifier_words};

pub use crate::model::first_sentence;
use crate::{ApiSpec, EndpointDetails, Operation, semantic::SemanticIndex};

/// HTTP methods a search can be restricted to.
pub const SEARCH_METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];
/// The most results one search returns.
pub const MAX_LIMIT: usize = 50;
/// Candidates recalled before strict method/tag filters apply.
const RECALL_FOR_FILTERS: usize = 1000;

pub use devlens_search::SearchMode;

/// The mode a search runs in when none is asked for: it ranked best on the golden set (see the
/// README's figures).
pub const DEFAULT_MODE: SearchMode = SearchMode::Hybrid;

/// A validated search: exactly one of a question or a tag, a method filter, a limit.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub query: Option<String>,
    pub tag: Option<String>,
    pub method: Option<String>,
    pub limit: usize,
    pub mode: Option<SearchMode>,
    /// Attach each hit's full endpoint details (saves the agent a call per hit).
    pub details: bool,
}

impl SearchRequest {
    /// Checks the rules of `search_api_documentation`; the error says how to call it right.
    pub fn new(
        query: Option<String>,
        tag: Option<String>,
        method: Option<String>,
        limit: Option<i64>,
        mode: Option<SearchMode>,
    ) -> Result<Self, String> {
        let query = query.filter(|q| !q.trim().is_empty());
        let tag = tag.filter(|t| !t.trim().is_empty());
        if query.is_some() == tag.is_some() {
            return Err(
                "give exactly one of `query` (a question, e.g. \"create an issue\") or `tag` \
                 (list a tag's endpoints); see list_api_tags for tag names"
                    .into(),
            );
        }
        let limit = match limit {
            None => return Err(format!("`limit` is required (1–{MAX_LIMIT})")),
            Some(n) if n < 1 || n > MAX_LIMIT as i64 => {
                return Err(format!(
                    "`limit` must be between 1 and {MAX_LIMIT}, got {n}"
                ));
            }
            Some(n) => n as usize,
        };
        let method = match method.filter(|m| !m.trim().is_empty()) {
            None => None,
            Some(m) => {
                let upper = m.trim().to_ascii_uppercase();
                if !SEARCH_METHODS.contains(&upper.as_str()) {
                    return Err(format!(
                        "`method` must be one of {}, got '{m}'",
                        SEARCH_METHODS.join(", ")
                    ));
                }
                Some(upper)
            }
        };
        Ok(Self {
            query,
            tag,
            method,
            limit,
            mode,
            details: false,
        })
    }
}

/// One ranked operation.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub operation_id: Option<String>,
    pub method: String,
    pub path: String,
    pub summary: Option<String>,
    pub score: f32,
    /// The full endpoint details, when the search asked for them (`details: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<EndpointDetails>,
}

/// What a search returns: which mode ran, why when it is not the one asked for, and the hits.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct SearchResponse {
    pub mode: SearchMode,
    pub notice: Option<String>,
    /// The second stage that ordered the results, when one did (`[search] rerank`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reranked: Option<Reranked>,
    pub results: Vec<SearchHit>,
}

/// Who put a search's results in their order after the first stage, and what it cost.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reranked {
    /// `cross-encoder`, `sampling` or `llm`.
    pub by: String,
    /// The model, when known (over sampling, as the client names it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How many of the first stage's best candidates it read.
    pub candidates: usize,
    /// How long the second stage took, in milliseconds.
    pub ms: u64,
}

impl devlens_core::Report for SearchResponse {
    /// Compact text for agents: one line a hit.
    fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(notice) = &self.notice {
            out.push_str(&format!("note: {notice}\n"));
        }
        if let Some(r) = &self.reranked {
            let model = r
                .model
                .as_ref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            out.push_str(&format!(
                "reranked by {}{model}: {} candidates in {} ms\n",
                r.by, r.candidates, r.ms
            ));
        }
        if self.results.is_empty() {
            out.push_str("no matching endpoints");
            return out;
        }
        for hit in &self.results {
            out.push_str(&format!("{} {}", hit.method, hit.path));
            if let Some(id) = &hit.operation_id {
                out.push_str(&format!("  ({id})"));
            }
            if let Some(summary) = &hit.summary {
                out.push_str(&format!(" — {summary}"));
            }
            out.push_str(&format!("  [{:.2}]\n", hit.score));
            if let Some(details) = &hit.details {
                out.push_str(&details.to_text());
                out.push_str("\n\n");
            }
        }
        out.truncate(out.trim_end().len());
        out
    }
}

const FIELDS: &[KeywordField] = &[
    KeywordField {
        name: "summary",
        boost: 3.0,
    },
    KeywordField {
        name: "operation_id",
        boost: 2.0,
    },
    KeywordField {
        name: "path",
        boost: 1.5,
    },
    KeywordField {
        name: "tags",
        boost: 1.5,
    },
    KeywordField {
        name: "description",
        boost: 1.0,
    },
    KeywordField {
        name: "method",
        boost: 0.5,
    },
];

fn document(op: &Operation) -> Vec<String> {
    vec![
        op.summary.clone().unwrap_or_default(),
        op.operation_id
            .as_deref()
            .map(identifier_words)
            .unwrap_or_default(),
        identifier_words(&op.path),
        op.tags
            .iter()
            .map(|t| identifier_words(t))
            .collect::<Vec<_>>()
            .join(" "),
        op.description
            .as_deref()
            .map(first_sentence)
            .unwrap_or_default(),
        op.method.to_ascii_lowercase(),
    ]
}

/// The semantic side of a search: the stored index, the question's vector, and where each index
/// row sits in the spec being searched (a stale index may lack or misplace operations).
#[derive(Debug)]
pub struct SemanticQuery {
    pub index: std::sync::Arc<SemanticIndex>,
    pub vector: Vec<f32>,
    pub rows: std::sync::Arc<[Option<usize>]>,
}

/// Semantic candidates a hybrid search re-scores.
const HYBRID_RECALL: usize = 100;
/// Hybrid score = cosine similarity + 0.1 × (BM25 score / the question's best BM25 score).
/// Measured on the golden set (`examples/embedding_text_variants.rs`): weights 0.05–0.2 all beat
/// both retrievers alone; reciprocal rank fusion did worse than semantic alone, because it gives
/// the weaker keyword ranking as much say as the stronger one.
const HYBRID_FUSION: Fusion = Fusion::KeywordBonus {
    keyword_weight: 0.1,
};

/// A spec's operations, indexed for keyword search. Built once per spec content.
#[derive(Debug)]
pub struct OperationIndex {
    keyword: KeywordIndex,
}

impl OperationIndex {
    pub fn build(spec: &ApiSpec) -> Result<Self, devlens_search::SearchError> {
        let keyword = KeywordIndex::build(FIELDS, spec.operations().iter().map(document))?;
        Ok(Self { keyword })
    }

    /// Runs a validated request against `spec` (the spec this index was built from) as `plan`
    /// says: in its mode, with its semantic side, carrying its notice.
    pub fn search(
        &self,
        spec: &ApiSpec,
        request: &SearchRequest,
        plan: &Retrieval<SemanticQuery>,
    ) -> Result<SearchResponse, devlens_search::SearchError> {
        let operations = spec.operations();
        let (mode, semantic) = match &plan.semantic {
            Some(sq) => (plan.mode, Some(sq)),
            None => (SearchMode::Keyword, None),
        };
        let allowed = |op: &Operation| {
            request
                .method
                .as_deref()
                .is_none_or(|m| op.method.eq_ignore_ascii_case(m))
                && request
                    .tag
                    .as_deref()
                    .is_none_or(|t| op.tags.iter().any(|x| x.eq_ignore_ascii_case(t)))
        };
        let filtered = request.method.is_some() || request.tag.is_some();
        let mut hits: Vec<(f32, usize)> = match (&request.query, mode, semantic) {
            (None, ..) => (0..operations.len())
                .filter(|&i| allowed(&operations[i]))
                .map(|i| (1.0, i))
                .collect(),
            (Some(query), SearchMode::Keyword, _) | (Some(query), _, None) => {
                // Filters come after recall, so a filtered search recalls deeper.
                let recall = if filtered {
                    (request.limit * 50).max(RECALL_FOR_FILTERS)
                } else {
                    request.limit
                };
                self.keyword_ranked(query, recall, operations, &allowed)?
            }
            (Some(_), SearchMode::Semantic, Some(sq)) => {
                semantic_ranked(sq, request.limit, operations, &allowed)
            }
            (Some(query), SearchMode::Hybrid, Some(sq)) => {
                let recall = HYBRID_RECALL.max(request.limit);
                let keyword_recall = if filtered {
                    (recall * 10).max(RECALL_FOR_FILTERS)
                } else {
                    recall
                };
                let scored = |ranked: Vec<(f32, usize)>| -> Vec<(u64, f32)> {
                    ranked.into_iter().map(|(s, i)| (i as u64, s)).collect()
                };
                let keyword =
                    scored(self.keyword_ranked(query, keyword_recall, operations, &allowed)?);
                let semantic = scored(semantic_ranked(sq, recall, operations, &allowed));
                HYBRID_FUSION
                    .fuse(&semantic, &keyword)
                    .into_iter()
                    .map(|(i, s)| (s, i as usize))
                    .collect()
            }
        };
        // Equal scores: prefer fewer path parameters, then shorter paths (the more specific,
        // more commonly wanted endpoint).
        hits.sort_by(|a, b| {
            let (pa, pb) = (&operations[a.1].path, &operations[b.1].path);
            b.0.total_cmp(&a.0)
                .then_with(|| path_params(pa).cmp(&path_params(pb)))
                .then_with(|| pa.len().cmp(&pb.len()))
        });
        let results = hits
            .into_iter()
            .take(request.limit)
            .map(|(score, i)| {
                let op = &operations[i];
                SearchHit {
                    operation_id: op.operation_id.clone(),
                    method: op.method.clone(),
                    path: op.path.clone(),
                    summary: op.shown_summary(),
                    score: (score * 1000.0).round() / 1000.0,
                    details: None,
                }
            })
            .collect();
        Ok(SearchResponse {
            mode,
            notice: plan.notice(),
            reranked: None,
            results,
        })
    }

    fn keyword_ranked(
        &self,
        query: &str,
        recall: usize,
        operations: &[Operation],
        allowed: &dyn Fn(&Operation) -> bool,
    ) -> Result<Vec<(f32, usize)>, devlens_search::SearchError> {
        Ok(self
            .keyword
            .search(query, recall)?
            .into_iter()
            .map(|hit| (hit.score, hit.doc as usize))
            .filter(|&(_, i)| operations.get(i).is_some_and(allowed))
            .collect())
    }
}

/// The second stage: `scores` (one per hit, from a reranker that read the question with each
/// hit's [`crate::semantic::endpoint_text`]) reorder the hits and become their scores; the first
/// `limit` are kept. The error says when the scores do not fit the hits (left as they were).
pub fn rerank_hits(
    response: &mut SearchResponse,
    scores: &[f32],
    limit: usize,
) -> Result<(), String> {
    let scores = devlens_search::rerank::reorder(&mut response.results, scores, limit)?;
    for (hit, score) in response.results.iter_mut().zip(scores) {
        hit.score = (score * 1000.0).round() / 1000.0;
    }
    Ok(())
}

fn semantic_ranked(
    sq: &SemanticQuery,
    limit: usize,
    operations: &[Operation],
    allowed: &dyn Fn(&Operation) -> bool,
) -> Vec<(f32, usize)> {
    let position = |row: u64| sq.rows.get(row as usize).copied().flatten();
    sq.index
        .rank(&sq.vector, limit, |row| {
            position(row).is_some_and(|i| allowed(&operations[i]))
        })
        .into_iter()
        .filter_map(|hit| position(hit.doc).map(|i| (hit.score, i)))
        .collect()
}

fn path_params(path: &str) -> usize {
    path.matches('{').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_rules_are_enforced_with_helpful_messages() {
        let ok = SearchRequest::new(
            Some("create pet".into()),
            None,
            Some("post".into()),
            Some(5),
            None,
        )
        .unwrap();
        assert_eq!(ok.method.as_deref(), Some("POST"));
        let both = SearchRequest::new(Some("x".into()), Some("pets".into()), None, Some(5), None);
        assert!(both.unwrap_err().contains("exactly one"));
        let neither = SearchRequest::new(None, Some("  ".into()), None, Some(5), None);
        assert!(neither.unwrap_err().contains("exactly one"));
        let no_limit = SearchRequest::new(Some("x".into()), None, None, None, None);
        assert!(no_limit.unwrap_err().contains("required"));
        let big = SearchRequest::new(Some("x".into()), None, None, Some(51), None);
        assert!(big.unwrap_err().contains("between 1 and 50"));
        let method = SearchRequest::new(Some("x".into()), None, Some("HEAD".into()), Some(5), None);
        assert!(method.unwrap_err().contains("GET, POST"));
    }

    #[test]
    fn first_sentence_stops_at_the_period_and_caps_length() {
        assert_eq!(first_sentence("Lists pets. Paged."), "Lists pets");
        assert_eq!(
            first_sentence("Version 1.2 of the API"),
            "Version 1.2 of the API"
        );
        assert_eq!(first_sentence(&"a".repeat(300)).len(), 200);
    }
}
