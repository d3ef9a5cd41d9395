//! Knowledge base tools: `save_solution`, `search_solutions`, `ask_knowledge_base`,
//! `get_solution`, `delete_solution` (seed 002).
//!
//! Thin adapters over [`devlens_kb::KnowledgeBase`]: they turn arguments into the crate's
//! requests and its results into compact text plus `structuredContent`. The knowledge base is
//! opened on first use and shared per data dir by [`Services::knowledge_base`], so the MCP
//! sessions and the REST API use one SQLite connection, one loaded model and one vector cache.

use std::fmt::Write as _;
use std::sync::Arc;

use rmcp::{
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::CallToolResult,
    schemars::{self, JsonSchema},
    tool, tool_router,
};
use serde::{Deserialize, Serialize};

use devlens_kb::{
    AskAnswer, AskRequest, KbError, KnowledgeBase, NewSolution, Saved, SearchMode, SearchOptions,
    SearchResults, Solution, SolutionPatch,
};

use crate::{
    DevlensServer, Services,
    reply::{failure, structured},
};

impl Services {
    /// The knowledge base of the configured data dir, opened on first use (creating
    /// `<data dir>/kb/kb.sqlite`) and shared by every caller in this process.
    pub fn knowledge_base(&self) -> Result<Arc<KnowledgeBase>, KbError> {
        KnowledgeBase::shared(self.api.config())
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SaveArgs {
    /// Update this saved solution: only the fields given change. Omit to save a new one.
    #[serde(default)]
    pub id: Option<String>,
    /// A short title, e.g. "Fix CORS preflight on PUT" (required for a new solution).
    #[serde(default)]
    pub title: Option<String>,
    /// The solution itself: explanation, code, steps (required for a new solution).
    #[serde(default)]
    pub text: Option<String>,
    /// Where it came from. "" removes it on update.
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// One line. "" removes it on update.
    #[serde(default)]
    pub summary: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// The problem in your words, e.g. "CORS error on PUT with credentials".
    pub query: String,
    /// semantic (default, by meaning), keyword, or hybrid.
    #[serde(default)]
    pub mode: Option<SearchMode>,
    /// Results, 1–50 (default 5).
    #[serde(default, alias = "topK")]
    pub top_k: Option<usize>,
    /// Minimum cosine similarity, -1–1 (default calibrated for the model).
    #[serde(default, alias = "similarityThreshold")]
    pub similarity_threshold: Option<f32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskArgs {
    /// The question.
    pub query: String,
    /// Sources to retrieve, 1–50 (default 5).
    #[serde(default, alias = "topK")]
    pub top_k: Option<usize>,
    /// Also have the configured LLM write a cited answer.
    #[serde(default, alias = "generateAnswer")]
    pub generate_answer: Option<bool>,
    /// semantic (default), keyword, or hybrid.
    #[serde(default)]
    pub mode: Option<SearchMode>,
    /// Token budget of the context, 200–32000 (default 3000).
    #[serde(default, alias = "contextLimit")]
    pub context_limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IdArgs {
    /// The solution's id, from search_solutions or ask_knowledge_base.
    pub id: String,
}

/// What `save_solution` returns.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SaveOutput {
    /// Whether a new solution was created (otherwise one was updated).
    pub created: bool,
    pub solution: Solution,
    /// Semantic search finds it (otherwise keyword search only, until a reembed).
    pub embedded: bool,
    pub chunks: usize,
    /// Chunks an update left unchanged: they kept their vectors.
    #[serde(skip_serializing_if = "is_zero")]
    pub reused_chunks: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What `delete_solution` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DeleteOutput {
    /// The id of the deleted solution.
    pub deleted: String,
    pub title: String,
}

/// `""` means "remove" for the optional fields of an update.
fn clearable(value: Option<String>) -> Option<Option<String>> {
    value.map(|v| (!v.trim().is_empty()).then_some(v))
}

/// The shared text of a save (`devlens kb add` prints the same), worded for an update too.
fn save_text(output: &SaveOutput) -> String {
    let text = Saved {
        solution: output.solution.clone(),
        embedded: output.embedded,
        chunks: output.chunks,
        reused_chunks: output.reused_chunks,
        notice: output.notice.clone(),
    }
    .to_text();
    match text.strip_prefix("saved ") {
        Some(rest) if !output.created => format!("updated {rest}"),
        _ => text,
    }
}

/// The numbered context, then the generated answer, then the notice. (`AskAnswer::to_text`, the
/// CLI's, puts the answer first; an agent answers from the context, so it leads here.)
fn ask_text(answer: &AskAnswer) -> String {
    let mut text = if answer.sources.is_empty() {
        "no saved solution matches the question".to_string()
    } else {
        answer.context.clone()
    };
    if let Some(generated) = &answer.answer {
        let by = answer
            .answered_by
            .as_deref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default();
        let _ = write!(text, "\n\nAnswer{by}:\n{generated}");
    }
    if let Some(notice) = &answer.notice {
        let _ = write!(text, "\n\nnote: {notice}");
    }
    text
}

impl DevlensServer {
    fn kb(&self) -> Result<Arc<KnowledgeBase>, KbError> {
        self.services().knowledge_base()
    }

    async fn save(&self, args: SaveArgs) -> Result<SaveOutput, KbError> {
        let kb = self.kb()?;
        let saved = match args.id.as_deref().map(str::trim) {
            Some(id) if !id.is_empty() => {
                let patch = SolutionPatch {
                    title: args.title,
                    url: clearable(args.url),
                    text: args.text,
                    summary: clearable(args.summary),
                    tags: args.tags,
                };
                let saved = kb.update(id, patch).await?;
                (false, saved)
            }
            _ => {
                let (Some(title), Some(text)) = (args.title, args.text) else {
                    return Err(KbError::InvalidInput(
                        "a new solution needs a title and a text (or give the id of a saved \
                         solution to update it)"
                            .into(),
                    ));
                };
                let new = NewSolution {
                    title,
                    url: args.url,
                    text,
                    summary: args.summary,
                    tags: args.tags.unwrap_or_default(),
                };
                (true, kb.add(new).await?)
            }
        };
        let (created, saved) = saved;
        Ok(SaveOutput {
            created,
            solution: saved.solution,
            embedded: saved.embedded,
            chunks: saved.chunks,
            reused_chunks: saved.reused_chunks,
            notice: saved.notice,
        })
    }
}

#[tool_router(router = kb_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Save a solution (fix, snippet, answer) to the knowledge base, to be found later by
    /// meaning. Give id to update a saved one.
    #[tool(
        name = "save_solution",
        annotations(title = "Save a solution", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<SaveOutput>()
    )]
    async fn save_solution(&self, Parameters(args): Parameters<SaveArgs>) -> CallToolResult {
        match self.save(args).await {
            Ok(output) => structured(save_text(&output), &output),
            Err(e) => failure(e),
        }
    }

    /// Search saved solutions: best first, with score and excerpt.
    #[tool(
        name = "search_solutions",
        annotations(title = "Search saved solutions", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SearchResults>()
    )]
    async fn search_solutions(&self, Parameters(args): Parameters<SearchArgs>) -> CallToolResult {
        let kb = match self.kb() {
            Ok(kb) => kb,
            Err(e) => return failure(e),
        };
        let options = SearchOptions {
            mode: args.mode,
            top_k: args.top_k,
            similarity_threshold: args.similarity_threshold,
        };
        match kb.search(&args.query, &options).await {
            Ok(found) => {
                let scores = self
                    .services()
                    .api
                    .config()
                    .file
                    .kb
                    .show_similarity_scores
                    .unwrap_or(true);
                structured(found.to_text(scores), &found)
            }
            Err(e) => failure(e),
        }
    }

    /// Answer from the knowledge base: the best solutions as a numbered context with sources;
    /// answer from it citing [n]. generate_answer also has the configured LLM answer.
    #[tool(
        name = "ask_knowledge_base",
        annotations(title = "Ask the knowledge base", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<AskAnswer>()
    )]
    async fn ask_knowledge_base(&self, Parameters(args): Parameters<AskArgs>) -> CallToolResult {
        let kb = match self.kb() {
            Ok(kb) => kb,
            Err(e) => return failure(e),
        };
        let request = AskRequest {
            query: args.query,
            top_k: args.top_k,
            mode: args.mode,
            similarity_threshold: None,
            generate_answer: args.generate_answer,
            context_limit: args.context_limit,
        };
        match kb.ask(&request).await {
            Ok(answer) => structured(ask_text(&answer), &answer),
            Err(e) => failure(e),
        }
    }

    /// A saved solution in full.
    #[tool(
        name = "get_solution",
        annotations(title = "Get a saved solution", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<Solution>()
    )]
    async fn get_solution(&self, Parameters(args): Parameters<IdArgs>) -> CallToolResult {
        match self.kb().and_then(|kb| kb.get(&args.id)) {
            Ok(solution) => structured(solution.to_text(), &solution),
            Err(e) => failure(e),
        }
    }

    /// Delete a saved solution.
    #[tool(
        name = "delete_solution",
        annotations(title = "Delete a saved solution", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<DeleteOutput>()
    )]
    async fn delete_solution(&self, Parameters(args): Parameters<IdArgs>) -> CallToolResult {
        match self.kb().and_then(|kb| kb.delete(&args.id)) {
            Ok(solution) => {
                let output = DeleteOutput {
                    deleted: solution.id,
                    title: solution.title,
                };
                structured(
                    format!("Deleted {} \"{}\".", output.deleted, output.title),
                    &output,
                )
            }
            Err(e) => failure(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_strings_clear_optional_fields_on_update() {
        assert_eq!(clearable(None), None);
        assert_eq!(clearable(Some(" ".into())), Some(None));
        assert_eq!(clearable(Some("x".into())), Some(Some("x".into())));
    }
}
