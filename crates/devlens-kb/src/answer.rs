//! The answer side of `ask_knowledge_base`: retrieved solutions as a numbered, cited context
//! within a token budget, and the prompt that makes an LLM answer from it.
//!
//! The context is always returned, because the calling agent is usually an LLM itself and
//! answers better from the sources than from a second model's summary of them. The budget is
//! counted in cl100k tokens (exact for OpenAI models, close for others) and never exceeded.

use std::ops::Range;

use serde::Serialize;

use devlens_search::sqlite::blocking;
use devlens_search::tokens;

use crate::{
    AskAnswer, AskRequest, ChatClient, KbError, KnowledgeBase, SearchOptions, Solution, llm,
};

/// Default budget of the context, in cl100k tokens.
pub const DEFAULT_CONTEXT_TOKENS: usize = 3_000;
/// Bounds of a caller's budget.
pub const MIN_CONTEXT_TOKENS: usize = 200;
pub const MAX_CONTEXT_TOKENS: usize = 32_000;

/// What every later source is guaranteed before an earlier one may use the rest, so the
/// second-best source is not crowded out by a long first one.
const RESERVE_PER_SOURCE: usize = 150;

/// A numbered source of the context.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// The number the context and the answer cite it by: `[n]`.
    pub n: usize,
    pub id: String,
    pub title: String,
    pub url: Option<String>,
    /// Relevance in percent: cosine similarity × 100 (semantic, hybrid); in keyword mode the
    /// BM25 score relative to the best match.
    pub relevance: u32,
}

/// A retrieved solution handed to [`assemble`].
#[derive(Debug, Clone)]
pub struct Retrieved<'a> {
    pub solution: &'a Solution,
    pub relevance: u32,
    /// The best-matching part of the text, shown first when the whole text does not fit.
    pub best_chunk: Option<Range<usize>>,
}

/// The assembled context.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub text: String,
    pub sources: Vec<Source>,
    pub tokens: usize,
    /// A source was shortened or left out to stay within the budget.
    pub truncated: bool,
}

fn header(n: usize, s: &Solution, relevance: u32) -> String {
    let origin = s.url.as_deref().unwrap_or("saved note, no URL");
    format!(
        "[{n}] {}\nSource: {origin} · relevance {relevance}%\n",
        s.title
    )
}

/// Numbers the solutions best first and fills the budget: each gets its whole text when it
/// fits, else the text from its best chunk on, cut to what is left (keeping a reserve for each
/// later source). Never more than `limit` tokens.
pub fn assemble(retrieved: &[Retrieved<'_>], limit: usize) -> Context {
    const SEPARATOR: &str = "\n\n";
    let separator_tokens = tokens::count(SEPARATOR);
    let mut text = String::new();
    let mut used = 0usize;
    let mut sources = Vec::new();
    let mut truncated = false;
    for (i, r) in retrieved.iter().enumerate() {
        let n = sources.len() + 1;
        let head = header(n, r.solution, r.relevance);
        let joint = if text.is_empty() { 0 } else { separator_tokens };
        let head_tokens = tokens::count(&head);
        let later = retrieved.len() - i - 1;
        let remaining = limit.saturating_sub(used + joint + head_tokens);
        let reserve = later * RESERVE_PER_SOURCE.min(limit / retrieved.len().max(1));
        let allowance = remaining.saturating_sub(reserve);
        if used + joint + head_tokens > limit || allowance < 20 {
            truncated = true;
            // A later, shorter source might still fit; keep trying.
            continue;
        }
        let body = r.solution.text.trim();
        let body_tokens = tokens::count(body);
        let content = if body_tokens <= allowance {
            body.to_string()
        } else {
            truncated = true;
            let from = r
                .best_chunk
                .as_ref()
                .map(|c| c.start)
                .filter(|&s| s < body.len() && body.is_char_boundary(s))
                .unwrap_or(0);
            let lead = if from > 0 { "… " } else { "" };
            let cut = tokens::truncate(&body[from..], allowance.saturating_sub(4));
            format!("{lead}{}…", cut.trim_end())
        };
        let block = format!("{head}{content}");
        let block_tokens = tokens::count(&block);
        if used + joint + block_tokens > limit {
            truncated = true;
            continue;
        }
        if !text.is_empty() {
            text.push_str(SEPARATOR);
        }
        text.push_str(&block);
        used = tokens::count(&text);
        sources.push(Source {
            n,
            id: r.solution.id.clone(),
            title: r.solution.title.clone(),
            url: r.solution.url.clone(),
            relevance: r.relevance,
        });
    }
    Context {
        tokens: used,
        text,
        sources,
        truncated,
    }
}

/// The rules an answering model follows: grounded in the sources, citing them, saying what they
/// do not cover.
pub const SYSTEM_PROMPT: &str = "You answer a developer's question using only the numbered \
sources from their saved knowledge base. Cite every source you use as [1], [2], … right after \
the statement it supports. If the sources do not cover the question, or only part of it, say so \
plainly and say what is missing; never invent an answer the sources do not support. Include \
relevant code from the sources when it helps. Be concise but thorough.";

/// The user message: the sources, then the question.
pub fn user_prompt(query: &str, context: &str) -> String {
    format!("Sources from the knowledge base:\n\n{context}\n\nQuestion: {query}")
}

impl KnowledgeBase {
    /// Retrieves solutions for `request.query` and assembles them into a numbered context;
    /// generates an answer from it when asked (or `[kb] auto_generate_answer`) and an LLM
    /// endpoint is configured.
    pub async fn ask(&self, request: &AskRequest) -> Result<AskAnswer, KbError> {
        let limit = request.context_limit.unwrap_or(DEFAULT_CONTEXT_TOKENS);
        if !(MIN_CONTEXT_TOKENS..=MAX_CONTEXT_TOKENS).contains(&limit) {
            return Err(KbError::InvalidInput(format!(
                "context_limit must be between {} and {} tokens (got {limit})",
                MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS
            )));
        }
        let generate = request
            .generate_answer
            .or(self.settings().auto_generate_answer)
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
        let retrieved: Vec<Retrieved<'_>> = found
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
                Some(Retrieved {
                    solution,
                    relevance,
                    best_chunk: chunk.clone(),
                })
            })
            .collect();
        let context = assemble(&retrieved, limit);
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
                        .complete(SYSTEM_PROMPT, &user_prompt(&found.query, &context.text))
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
}

fn push_note(notice: &mut Option<String>, note: String) {
    *notice = Some(match notice.take() {
        Some(n) => format!("{n}; {note}"),
        None => note,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solution(id: &str, text: &str) -> Solution {
        Solution {
            id: id.into(),
            title: format!("Title {id}"),
            url: Some(format!("https://example.com/{id}")),
            text: text.into(),
            summary: None,
            tags: vec![],
            created_at: "2026-01-01T00:00:00Z".into(),
            updated_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn numbered_sources_within_the_budget() {
        let long = "word ".repeat(5_000);
        let a = solution("a", &long);
        let b = solution("b", "Short answer.");
        let retrieved = [
            Retrieved {
                solution: &a,
                relevance: 80,
                best_chunk: Some(100..200),
            },
            Retrieved {
                solution: &b,
                relevance: 60,
                best_chunk: None,
            },
        ];
        for limit in [200, 500, 3_000] {
            let c = assemble(&retrieved, limit);
            assert!(c.tokens <= limit, "{} > {limit}", c.tokens);
            assert_eq!(tokens::count(&c.text), c.tokens);
            assert!(c.truncated);
            assert_eq!(c.sources.len(), 2, "{limit}: {}", c.text);
            assert!(
                c.text
                    .starts_with("[1] Title a\nSource: https://example.com/a · relevance 80%\n… ")
            );
            assert!(c.text.contains("[2] Title b"));
            assert!(c.text.ends_with("Short answer."));
        }
        let c = assemble(&retrieved[1..], 3_000);
        assert!(!c.truncated);
        assert_eq!(c.sources[0].n, 1);
    }
}
