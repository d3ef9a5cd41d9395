//! What the knowledge base's operations take and answer: serializable for programs, compact text
//! ([`Report`]) for people and agents. The CLI, the MCP tools and the REST API all answer with
//! these, so the same request gets the same answer on each.

use std::fmt::Write as _;

use serde::Serialize;

use devlens_core::Report;

use crate::{ImportCounts, SearchMode, Solution, Source};

/// What a save stored.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Saved {
    /// Whether a new solution was created (otherwise one was updated).
    pub created: bool,
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

impl Saved {
    /// The answer for an agent, who sent the text and pays for every token of it coming back:
    /// the solution's text cut to its first [`READ_TEXT_CHARS`] characters, with a notice saying
    /// so and where the rest is read.
    pub fn with_text_cut(mut self) -> Self {
        let read = SolutionRead::window(self.solution, 0);
        if read.next_offset.is_some() {
            let cut = format!(
                "the text ({} characters) is shown up to character {READ_TEXT_CHARS}: \
                 get_solution reads on from an offset",
                read.text_chars
            );
            self.notice = Some(match self.notice.take() {
                Some(n) => format!("{n}; {cut}"),
                None => cut,
            });
        }
        self.solution = read.solution;
        self
    }
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
    /// The best chunk of each result, where embeddings ranked it.
    #[serde(skip)]
    pub(crate) chunks: Vec<Option<std::ops::Range<usize>>>,
    /// Whether the text shows relevance scores (`[kb] show_similarity_scores`).
    #[serde(skip)]
    pub(crate) show_scores: bool,
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
    /// Where the store lives.
    pub path: String,
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

impl Report for Saved {
    fn to_text(&self) -> String {
        let s = &self.solution;
        let mut out = format!(
            "{} {} \"{}\"{}",
            if self.created { "saved" } else { "updated" },
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

impl Report for SearchResults {
    /// One block per result: rank, title, score (when shown), tags and id; the URL; the
    /// excerpt. Then the notice.
    fn to_text(&self) -> String {
        let show_scores = self.show_scores;
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

impl Report for AskAnswer {
    /// The generated answer (when there is one, with the model that wrote it), then the
    /// numbered sources an agent answers from, then the notice.
    fn to_text(&self) -> String {
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

/// One solution in a list: what identifies it, without its text.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SolutionSummary {
    pub id: String,
    pub title: String,
    pub url: Option<String>,
    pub tags: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<Solution> for SolutionSummary {
    fn from(s: Solution) -> Self {
        Self {
            id: s.id,
            title: s.title,
            url: s.url,
            tags: s.tags,
            created_at: s.created_at,
            updated_at: s.updated_at,
        }
    }
}

/// Every solution, newest first.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct SolutionList {
    pub solutions: Vec<SolutionSummary>,
}

impl Report for SolutionList {
    fn to_text(&self) -> String {
        if self.solutions.is_empty() {
            return "no solutions yet: save one with `devlens kb add --title T --text TEXT` (or \
                    the save_solution tool)"
                .into();
        }
        self.solutions
            .iter()
            .map(|s| {
                let tags = if s.tags.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", s.tags.join(", "))
                };
                let day = s.created_at.get(..10).unwrap_or(&s.created_at);
                format!("{}  {day}  {}{tags}", s.id, s.title)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// What a delete removed.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Deleted {
    /// The id of the deleted solution.
    pub deleted: String,
    pub title: String,
}

impl Report for Deleted {
    fn to_text(&self) -> String {
        format!("Deleted {} \"{}\".", self.deleted, self.title)
    }
}

impl Report for Solution {
    /// The solution for reading: title and id, URL, tags, summary, dates, then the text.
    fn to_text(&self) -> String {
        let mut out = format!("{} [{}]\n", self.title, self.id);
        if let Some(url) = &self.url {
            out.push_str(&format!("{url}\n"));
        }
        if !self.tags.is_empty() {
            out.push_str(&format!("tags: {}\n", self.tags.join(", ")));
        }
        if let Some(summary) = &self.summary {
            out.push_str(&format!("summary: {summary}\n"));
        }
        out.push_str(&format!("saved {}", self.created_at));
        if self.updated_at != self.created_at {
            out.push_str(&format!(", updated {}", self.updated_at));
        }
        out.push_str("\n\n");
        out.push_str(&self.text);
        out
    }
}

/// The most characters of a solution's text one read answers with (about 5,000 tokens): a
/// solution may hold up to a megabyte, which would fill an agent's context in one call.
pub const READ_TEXT_CHARS: usize = 20_000;

/// A solution as an agent reads it (`get_solution`): its fields, with `text` holding at most
/// [`READ_TEXT_CHARS`] characters from `textOffset`, and where to continue when it goes on.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SolutionRead {
    #[serde(flatten)]
    pub solution: Solution,
    /// Characters in the whole text.
    pub text_chars: usize,
    /// The character of the whole text `text` starts at.
    pub text_offset: usize,
    /// When the text goes on: the offset to read the rest from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

impl SolutionRead {
    /// `solution` with its text cut to the window starting at character `offset`.
    pub fn window(mut solution: Solution, offset: usize) -> Self {
        let text_chars = solution.text.chars().count();
        let start = offset.min(text_chars);
        let end = start.saturating_add(READ_TEXT_CHARS).min(text_chars);
        if start > 0 || end < text_chars {
            solution.text = solution
                .text
                .chars()
                .skip(start)
                .take(end - start)
                .collect();
        }
        Self {
            solution,
            text_chars,
            text_offset: start,
            next_offset: (end < text_chars).then_some(end),
        }
    }
}

impl Report for SolutionRead {
    /// As [`Solution`]'s text, then where the text was cut and how to read on.
    fn to_text(&self) -> String {
        let mut out = self.solution.to_text();
        let shown = self.solution.text.chars().count();
        if self.text_offset > 0 || self.next_offset.is_some() {
            let _ = write!(
                out,
                "\n[text cut: characters {}–{} of {} shown",
                self.text_offset,
                self.text_offset + shown,
                self.text_chars
            );
            match self.next_offset {
                Some(next) => {
                    let _ = write!(out, "; call get_solution with offset {next} for the rest]");
                }
                None => out.push(']'),
            }
        }
        out
    }
}

impl Report for ImportReport {
    fn to_text(&self) -> String {
        let mut out = format!(
            "imported {} solutions: {} new, {} replaced, {} unchanged",
            self.imported, self.counts.created, self.counts.replaced, self.counts.unchanged
        );
        if let Some(n) = &self.notice {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

impl Report for ReembedReport {
    fn to_text(&self) -> String {
        format!(
            "embedded {} solutions ({} chunks) with {} in {:.1} s; {} were up to date",
            self.embedded, self.chunks, self.model, self.seconds, self.up_to_date
        )
    }
}

impl Report for KbStatus {
    fn to_text(&self) -> String {
        let mut out = format!(
            "{} solutions, {} with current embeddings ({})\nsearch: {} mode, top {}{}\n\
             answers: {}\nstore: {}",
            self.solutions,
            self.embedded,
            self.model.as_deref().unwrap_or("no embedding model"),
            self.search_mode,
            self.top_k,
            self.similarity_threshold
                .map(|t| format!(", threshold {t:.2}"))
                .unwrap_or_default(),
            self.llm_model
                .as_deref()
                .map(|m| format!("generated by {m}"))
                .unwrap_or_else(|| "no LLM endpoint configured (context only)".into()),
            self.path
        );
        if let Some(reason) = &self.embedder_unavailable {
            let _ = write!(out, "\nnote: semantic search unavailable: {reason}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solution(text: String) -> Solution {
        Solution {
            id: "big".into(),
            title: "Big".into(),
            url: None,
            text,
            summary: None,
            tags: Vec::new(),
            created_at: "2025-01-01T00:00:00Z".into(),
            updated_at: "2025-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_long_text_is_read_in_windows_that_say_where_to_go_on() {
        // Multi-byte characters: windows count characters, never cut one in half.
        let text = "é".repeat(READ_TEXT_CHARS + 10);
        let first = SolutionRead::window(solution(text.clone()), 0);
        assert_eq!(first.solution.text.chars().count(), READ_TEXT_CHARS);
        assert_eq!(first.next_offset, Some(READ_TEXT_CHARS));
        assert!(
            first
                .to_text()
                .contains(&format!("offset {READ_TEXT_CHARS} for the rest")),
            "{}",
            first.to_text()
        );
        let rest = SolutionRead::window(solution(text), READ_TEXT_CHARS);
        assert_eq!(rest.solution.text, "é".repeat(10));
        assert_eq!(rest.next_offset, None);
        let past = SolutionRead::window(solution("short".into()), 99);
        assert_eq!((past.solution.text.as_str(), past.text_offset), ("", 5));
        let saved = Saved {
            created: true,
            solution: solution("x".repeat(READ_TEXT_CHARS * 3)),
            embedded: false,
            chunks: 0,
            reused_chunks: 0,
            notice: None,
        }
        .with_text_cut();
        assert_eq!(saved.solution.text.len(), READ_TEXT_CHARS);
        assert!(
            saved.to_text().contains("get_solution reads on"),
            "{}",
            saved.to_text()
        );
        let whole = SolutionRead::window(solution("short".into()), 0);
        assert!(!whole.to_text().contains("cut"), "{}", whole.to_text());
    }
}
