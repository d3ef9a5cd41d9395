//! `query_docs`: its input and output, and the context assembled within a token budget.

use serde::{Deserialize, Serialize};

use std::sync::Arc;
use std::time::Instant;

use devlens_search::sqlite::blocking;
use devlens_search::{Retrieval, SearchMode};

use crate::chunk::ChunkKind;
use crate::search::VersionIndex;
use crate::store::{LibraryInfo, RefineProgress, StoredChunk};
use crate::tokens;
use crate::{Docs, DocsError, resolve};

pub const DEFAULT_MAX_RESULTS: usize = 5;
pub const MAX_MAX_RESULTS: usize = 20;
pub const DEFAULT_CONTEXT_LIMIT: usize = 4000;
pub const MIN_CONTEXT_LIMIT: usize = 1000;
pub const MAX_CONTEXT_LIMIT: usize = 8000;
pub const MAX_QUERY_CHARS: usize = 1000;

/// The input of `query_docs` (the shape Context7's tool takes).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct QueryDocsInput {
    /// From resolve_library_id, e.g. `react` or `/facebook/react`.
    pub library_id: String,
    /// The question, in natural language (at most 1000 characters).
    pub query: String,
    /// A version (default: the latest ingested).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Results, 1–20 (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<usize>,
    /// Include code examples (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_code: Option<bool>,
    /// Token budget (cl100k), 1000–8000 (default 4000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_limit: Option<usize>,
}

/// A validated [`QueryDocsInput`] with its defaults applied.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueryRequest {
    pub library_id: String,
    pub query: String,
    pub version: Option<String>,
    pub max_results: usize,
    pub include_code: bool,
    pub context_limit: usize,
}

impl QueryDocsInput {
    /// Checks the ranges and applies the defaults.
    pub fn validate(&self) -> Result<QueryRequest, DocsError> {
        let bad = |m: String| Err(DocsError::InvalidInput(m));
        let library_id = self.library_id.trim();
        if library_id.is_empty() {
            return bad(
                "library_id is required: find it with resolve_library_id (or `devlens docs \
                 resolve NAME`)"
                    .into(),
            );
        }
        let query = self.query.trim();
        if query.is_empty() {
            return bad("query is required: ask a question about the library".into());
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return bad(format!(
                "query is too long ({} characters, at most {MAX_QUERY_CHARS}); shorten it to the \
                 question itself",
                query.chars().count()
            ));
        }
        let max_results = self.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
        if !(1..=MAX_MAX_RESULTS).contains(&max_results) {
            return bad(format!(
                "max_results must be between 1 and {MAX_MAX_RESULTS}, got {max_results}"
            ));
        }
        let context_limit = self.context_limit.unwrap_or(DEFAULT_CONTEXT_LIMIT);
        if !(MIN_CONTEXT_LIMIT..=MAX_CONTEXT_LIMIT).contains(&context_limit) {
            return bad(format!(
                "context_limit must be between {MIN_CONTEXT_LIMIT} and {MAX_CONTEXT_LIMIT} \
                 tokens, got {context_limit}"
            ));
        }
        Ok(QueryRequest {
            library_id: library_id.to_string(),
            query: query.to_string(),
            version: self
                .version
                .as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string),
            max_results,
            include_code: self.include_code.unwrap_or(true),
            context_limit,
        })
    }
}

/// `library` of the output.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LibrarySummary {
    pub id: String,
    pub name: String,
    pub version: String,
    pub description: String,
}

/// Where a result comes from and how it ranked.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ResultMetadata {
    /// The file (relative to the ingested folder) or page URL.
    pub source: String,
    /// A link to the section: the page plus `#anchor`.
    pub url: String,
    /// The heading path, `Title > Section > Subsection`.
    pub section: String,
    #[serde(rename = "type")]
    pub kind: ChunkKind,
    /// Fused rank relevance, 0–1 (1: first for both keyword and semantic ranking).
    pub relevance_score: f32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct QueryResult {
    pub content: String,
    pub metadata: ResultMetadata,
}

/// The output of `query_docs`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct QueryDocsOutput {
    pub library: LibrarySummary,
    pub query: String,
    /// The results in the context, best first.
    pub results: Vec<QueryResult>,
    /// The results assembled for a model to read, best first.
    pub context: String,
    /// cl100k_base tokens of `context`; never more than `context_limit`.
    pub total_tokens: usize,
    /// Whether results that ranked in the top `max_results` were left out or cut to fit.
    pub truncated: bool,
    /// Set when the answer is keyword-only (no embedding model) or otherwise degraded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Set while the version's chunks are still getting vectors of their own: answers found by
    /// a later paragraph of a long section improve when it finishes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refining: Option<RefineProgress>,
}

impl devlens_core::Report for QueryDocsOutput {
    /// Compact text: the context, then one line per result, then the budget line.
    fn to_text(&self) -> String {
        let mut out = self.context.trim_end().to_string();
        out.push_str(&format!(
            "\n\n[{} results, {} tokens{}; {} {}]",
            self.results.len(),
            self.total_tokens,
            if self.truncated { ", truncated" } else { "" },
            self.library.id,
            self.library.version
        ));
        if let Some(notice) = &self.notice {
            out.push_str(&format!("\nnote: {notice}"));
        }
        if let Some(refining) = &self.refining {
            out.push_str(&format!("\nnote: {}", refining_note(refining)));
        }
        out
    }
}

/// What a user reads while a version's chunk vectors are still being added.
pub fn refining_note(progress: &RefineProgress) -> String {
    format!(
        "still adding passage vectors: {} of {} done; answers improve when it finishes \
         (`devlens docs refine` finishes it now)",
        grouped(progress.stored),
        grouped(progress.planned)
    )
}

/// `n` with thousands separated by commas (`4,452`).
pub(crate) fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A candidate handed to [`assemble`]: a chunk and its relevance.
pub struct Candidate<'a> {
    pub chunk: &'a StoredChunk,
    pub relevance: f32,
}

/// The assembled context and the results it holds.
pub struct Assembled {
    pub context: String,
    pub results: Vec<QueryResult>,
    pub total_tokens: usize,
    pub truncated: bool,
}

fn header(library_name: &str, query: &str) -> String {
    format!("# {library_name} documentation\n\nQuery: {query}\n\n")
}

fn section_text(chunk: &StoredChunk, content: &str) -> String {
    format!(
        "## {}\nSource: {}\n\n{}\n\n---\n\n",
        chunk.section, chunk.url, content
    )
}

/// Assembles `candidates` (best first) into a context of at most `limit` cl100k tokens.
///
/// Each candidate goes in whole if it fits; one that does not is skipped for the next (and the
/// answer marked truncated), except that the best candidate is cut to fit rather than leave the
/// context empty. Token counts of pieces do not always add up to the count of their
/// concatenation (BPE merges across the seam), so the final text is counted again and trailing
/// sections dropped until it fits: the limit holds by construction.
pub fn assemble(
    library_name: &str,
    query: &str,
    candidates: &[Candidate<'_>],
    limit: usize,
) -> Assembled {
    let head = header(library_name, query);
    let head = if tokens::count(&head) > limit / 2 {
        // Only a pathological query gets here (limits start at 1000 tokens).
        header(library_name, &tokens::truncate(query, limit / 4))
    } else {
        head
    };
    // (text of the section, result)
    let mut parts: Vec<(String, QueryResult)> = Vec::new();
    let mut used = tokens::count(&head);
    let mut truncated = false;
    // Slack for the seams between sections.
    const SEAM: usize = 2;

    for candidate in candidates {
        let chunk = candidate.chunk;
        let text = section_text(chunk, &chunk.content);
        let n = tokens::count(&text);
        let (text, content, n) = if used + n + SEAM <= limit {
            (text, chunk.content.clone(), n)
        } else if parts.is_empty() {
            // Cut the best result rather than answer with nothing.
            let overhead = tokens::count(&section_text(chunk, "")) + 8;
            let room = limit.saturating_sub(used + overhead + SEAM);
            let cut = format!("{}\n…", tokens::truncate(&chunk.content, room));
            let text = section_text(chunk, &cut);
            let n = tokens::count(&text);
            truncated = true;
            if used + n + SEAM > limit {
                continue;
            }
            (text, cut, n)
        } else {
            truncated = true;
            continue;
        };
        used += n + SEAM;
        parts.push((
            text,
            QueryResult {
                content,
                metadata: ResultMetadata {
                    source: chunk.source.clone(),
                    url: chunk.url.clone(),
                    section: chunk.section.clone(),
                    kind: chunk.kind,
                    relevance_score: (candidate.relevance * 1000.0).round() / 1000.0,
                },
            },
        ));
    }

    loop {
        let context: String = std::iter::once(head.as_str())
            .chain(parts.iter().map(|(t, _)| t.as_str()))
            .collect();
        let total = tokens::count(&context);
        if total <= limit || parts.is_empty() {
            return Assembled {
                total_tokens: total,
                context,
                results: parts.into_iter().map(|(_, r)| r).collect(),
                truncated,
            };
        }
        parts.pop();
        truncated = true;
    }
}

impl Docs {
    /// The library and version a request is about, or an error naming what exists.
    pub(crate) fn locate(
        &self,
        id: &str,
        version: Option<&str>,
    ) -> Result<(LibraryInfo, String), DocsError> {
        let libraries = self.store.libraries()?;
        let Some(library) = libraries.iter().find(|l| l.id == id).cloned() else {
            let mut closest: Vec<String> = resolve::resolve(&libraries, id, None)
                .into_iter()
                .map(|m| m.id)
                .take(5)
                .collect();
            if closest.is_empty() {
                closest =
                    devlens_core::suggest::closest(id, libraries.iter().map(|l| l.id.as_str()), 5);
            }
            return Err(DocsError::UnknownLibrary {
                id: id.to_string(),
                closest,
            });
        };
        let version = match version {
            Some(v) if library.versions.iter().any(|x| x == v) => v.to_string(),
            Some(v) => {
                return Err(DocsError::UnknownVersion {
                    id: id.to_string(),
                    version: v.to_string(),
                    available: library.versions.clone(),
                });
            }
            None => library
                .versions
                .first()
                .cloned()
                .ok_or_else(|| DocsError::UnknownLibrary {
                    id: id.to_string(),
                    closest: Vec::new(),
                })?,
        };
        Ok((library, version))
    }

    /// The search index of a version, built from the registry on first use and again whenever
    /// the version was re-ingested (by any process).
    pub(crate) fn index(&self, id: &str, version: &str) -> Result<Arc<VersionIndex>, DocsError> {
        let key = (id.to_string(), version.to_string());
        let stamp = self
            .store
            .stamp(id, version)?
            .map(|s| (s.generation, s.revision));
        let earlier = {
            let indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
            match indexes.get(&key) {
                Some(index) if Some((index.generation, index.revision)) == stamp => {
                    return Ok(Arc::clone(index));
                }
                other => other.cloned(),
            }
        };
        let loaded =
            self.store
                .load_version(id, version)?
                .ok_or_else(|| DocsError::UnknownVersion {
                    id: id.to_string(),
                    version: version.to_string(),
                    available: Vec::new(),
                })?;
        // Chunk vectors added since the last load: the keyword index stays.
        let index = Arc::new(VersionIndex::build_after(loaded, earlier.as_deref())?);
        self.indexes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, Arc::clone(&index));
        Ok(index)
    }

    /// Answers `query_docs`: the best sections and code examples within the token budget.
    pub async fn query(&self, input: &QueryDocsInput) -> Result<QueryDocsOutput, DocsError> {
        let started = Instant::now();
        let result = match input.validate() {
            Ok(request) => self.query_traced(&request).await,
            Err(e) => Err(e),
        };
        let seconds = started.elapsed().as_secs_f64();
        self.metrics
            .record(seconds, result.as_ref().ok().map(|o| o.0.total_tokens));
        // One event per query, its facts as fields (`DEVLENS_LOG_FORMAT=json` makes them JSON).
        let latency_ms = (seconds * 1e6).round() / 1e3;
        match &result {
            Ok((o, cache)) => tracing::info!(
                library = %o.library.id,
                version = %o.library.version,
                query = %input.query,
                results = o.results.len(),
                tokens = o.total_tokens,
                cache = cache.as_str(),
                latency_ms,
                "query_docs"
            ),
            Err(e) => tracing::info!(
                library = %input.library_id,
                version = input.version.as_deref().unwrap_or(""),
                query = %input.query,
                results = 0,
                tokens = 0,
                latency_ms,
                error = %e,
                "query_docs failed"
            ),
        }
        result.map(|(o, _)| o)
    }

    /// The question's vector for docs embedded by `model`, or why there is none (in words that
    /// say what to do).
    async fn question_vector(&self, model: Option<&str>, query: &str) -> Result<Vec<f32>, String> {
        let Some(model) = model else {
            return Err(
                "these docs were ingested without an embedding model; install it \
                        (`devlens model install`) and run `devlens docs add` again"
                    .to_string(),
            );
        };
        let embedder = self.embedder().await?;
        if embedder.model() != model {
            return Err(format!(
                "the docs were embedded with `{model}` but the current model is `{}`; run \
                 `devlens docs add` again",
                embedder.model()
            ));
        }
        embedder.embed_query(query).await.map_err(|e| e.to_string())
    }

    /// Ranks and assembles an answer, without the cache; `true` when the docs have embeddings
    /// but the question could not be embedded (a keyword-only answer that may not last).
    pub(crate) async fn answer(
        &self,
        request: &QueryRequest,
        library: LibraryInfo,
        version: String,
    ) -> Result<(QueryDocsOutput, bool), DocsError> {
        let index = blocking(|| self.index(&library.id, &version))?;

        // The docs always rank both ways when they can: a question's words and its meaning.
        let plan = Retrieval::plan(SearchMode::Hybrid, || {
            self.question_vector(index.model(), &request.query)
        })
        .await;
        let notice = plan.notice();
        let query_vector = plan.semantic;
        let ranked = index.rank(
            &request.query,
            query_vector.as_deref(),
            request.include_code,
            request.max_results,
        )?;
        if ranked.is_empty() {
            return Err(DocsError::NoResults {
                library: library.id.clone(),
                suggestions: no_result_suggestions(&index, request),
            });
        }
        let candidates: Vec<Candidate<'_>> = ranked
            .iter()
            .filter_map(|r| {
                index.chunks.get(r.chunk).map(|chunk| Candidate {
                    chunk,
                    relevance: r.relevance,
                })
            })
            .collect();
        let assembled = assemble(
            &library.name,
            &request.query,
            &candidates,
            request.context_limit,
        );
        let degraded = index.model().is_some() && query_vector.is_none();
        let output = QueryDocsOutput {
            library: LibrarySummary {
                id: library.id,
                name: library.name,
                version,
                description: library.description,
            },
            query: request.query.clone(),
            results: assembled.results,
            context: assembled.context,
            total_tokens: assembled.total_tokens,
            truncated: assembled.truncated,
            notice,
            refining: None,
        };
        Ok((output, degraded))
    }
}

fn no_result_suggestions(index: &VersionIndex, request: &QueryRequest) -> Vec<String> {
    let mut suggestions =
        vec!["use other keywords, or describe the task in plain words".to_string()];
    if !request.include_code {
        suggestions.push("allow code examples (include_code: true)".into());
    }
    let mut topics: Vec<&str> = index
        .chunks
        .iter()
        .map(|c| c.section.split(" > ").next().unwrap_or(&c.section))
        .collect();
    topics.dedup();
    let mut unique: Vec<&str> = Vec::new();
    for t in topics {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    if !unique.is_empty() {
        let shown: Vec<&str> = unique.iter().take(12).copied().collect();
        suggestions.push(format!("ask about one of its topics: {}", shown.join(", ")));
    }
    suggestions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(section: &str, content: &str) -> StoredChunk {
        StoredChunk {
            section: section.into(),
            anchor: String::new(),
            kind: ChunkKind::Text,
            language: None,
            source: "a.md".into(),
            url: "a.md#x".into(),
            content: content.into(),
            tokens: tokens::count(content),
            hash: String::new(),
        }
    }

    #[test]
    fn validation_applies_defaults_and_ranges() {
        let input = QueryDocsInput {
            library_id: " react ".into(),
            query: "hooks".into(),
            version: Some(" ".into()),
            max_results: None,
            include_code: None,
            context_limit: None,
        };
        let req = input.validate().unwrap();
        assert_eq!(req.library_id, "react");
        assert_eq!(req.version, None);
        assert_eq!(
            (req.max_results, req.include_code, req.context_limit),
            (5, true, 4000)
        );
        for (max, limit) in [
            (Some(0), None),
            (Some(21), None),
            (None, Some(999)),
            (None, Some(8001)),
        ] {
            let bad = QueryDocsInput {
                max_results: max,
                context_limit: limit,
                ..input.clone()
            };
            let err = bad.validate().unwrap_err().to_string();
            assert!(err.contains("between"), "{err}");
        }
        let long = QueryDocsInput {
            query: "x".repeat(1001),
            ..input.clone()
        };
        assert!(long.validate().is_err());
        let empty = QueryDocsInput {
            library_id: "".into(),
            ..input
        };
        assert!(
            empty
                .validate()
                .unwrap_err()
                .to_string()
                .contains("resolve_library_id")
        );
    }

    #[test]
    fn best_first_skips_what_does_not_fit_and_never_exceeds() {
        let big = chunk("Big", &"alpha beta gamma ".repeat(400));
        let small = chunk("Small", "a short answer");
        let huge = chunk("Huge", &"delta ".repeat(5000));
        let candidates = [
            Candidate {
                chunk: &small,
                relevance: 1.0,
            },
            Candidate {
                chunk: &big,
                relevance: 0.9,
            },
            Candidate {
                chunk: &small,
                relevance: 0.8,
            },
        ];
        let a = assemble("Lib", "q", &candidates, 1000);
        assert!(a.total_tokens <= 1000);
        assert_eq!(a.total_tokens, tokens::count(&a.context));
        assert!(a.truncated);
        assert_eq!(a.results.len(), 2);
        assert_eq!(a.results[0].metadata.section, "Small");
        // The best result is cut rather than dropped.
        let a = assemble(
            "Lib",
            "q",
            &[Candidate {
                chunk: &huge,
                relevance: 1.0,
            }],
            1000,
        );
        assert!(
            a.truncated && a.results.len() == 1 && a.total_tokens <= 1000,
            "{}",
            a.total_tokens
        );
        let a = assemble(
            "Lib",
            "q",
            &[Candidate {
                chunk: &small,
                relevance: 1.0,
            }],
            1000,
        );
        assert!(!a.truncated);
        assert!(
            a.context
                .contains("## Small\nSource: a.md#x\n\na short answer")
        );
    }
}
