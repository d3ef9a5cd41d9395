//! Knowledge base tools: `save_solution`, `search_solutions`, `ask_knowledge_base`,
//! `get_solution`, `delete_solution`.
//!
//! Thin adapters over [`devlens_kb::KnowledgeBase`], which the application layer opens on first
//! use and shares with the REST API: they turn arguments into the application's requests and
//! its results into compact text plus `structuredContent`.

use rmcp::{
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::CallToolResult,
    schemars::{self, JsonSchema},
    tool, tool_router,
};
use serde::Deserialize;

use devlens_app::{AppError, kb::SaveSolution};
use devlens_kb::{AskRequest, Deleted, Saved, SearchMode, SearchOptions, SolutionRead};

use crate::{DevlensServer, reply::reply};

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SaveArgs {
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
pub(crate) struct SearchArgs {
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
pub(crate) struct AskArgs {
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
pub(crate) struct IdArgs {
    /// The solution's id, from search_solutions or ask_knowledge_base.
    pub id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct GetArgs {
    /// The solution's id, from search_solutions or ask_knowledge_base.
    pub id: String,
    /// Read the text from this character on: the nextOffset of a previous answer whose text was
    /// cut (default 0).
    #[serde(default)]
    pub offset: Option<usize>,
}

#[tool_router(router = kb_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Save a solution (fix, snippet, answer) to the knowledge base, to be found later by
    /// meaning. Give id to update a saved one.
    #[tool(
        name = "save_solution",
        annotations(title = "Save a solution", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<Saved>()
    )]
    async fn save_solution(&self, Parameters(args): Parameters<SaveArgs>) -> CallToolResult {
        let save = SaveSolution {
            id: args.id,
            title: args.title,
            text: args.text,
            url: args.url,
            summary: args.summary,
            tags: args.tags,
        };
        let saved = async {
            let kb = self.app().kb()?;
            save.run(&kb).await
        };
        reply(saved.await.map(Saved::with_text_cut))
    }

    /// Search saved solutions: best first, with score and excerpt.
    #[tool(
        name = "search_solutions",
        annotations(
            title = "Search saved solutions",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn search_solutions(&self, Parameters(args): Parameters<SearchArgs>) -> CallToolResult {
        let options = SearchOptions {
            mode: args.mode,
            top_k: args.top_k,
            similarity_threshold: args.similarity_threshold,
        };
        let found = async {
            let kb = self.app().kb()?;
            Ok::<_, AppError>(kb.search(&args.query, &options).await?)
        };
        reply(found.await)
    }

    /// Answer from the knowledge base: the best solutions as a numbered context with sources;
    /// answer from it citing [n]. generate_answer also has the configured LLM answer.
    #[tool(
        name = "ask_knowledge_base",
        annotations(
            title = "Ask the knowledge base",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn ask_knowledge_base(&self, Parameters(args): Parameters<AskArgs>) -> CallToolResult {
        let request = AskRequest {
            query: args.query,
            top_k: args.top_k,
            mode: args.mode,
            similarity_threshold: None,
            generate_answer: args.generate_answer,
            context_limit: args.context_limit,
        };
        let answer = async {
            let kb = self.app().kb()?;
            Ok::<_, AppError>(kb.ask(&request).await?)
        };
        reply(answer.await)
    }

    /// A saved solution: its fields and text (a long text comes in parts: the answer says the
    /// offset to read on from).
    #[tool(
        name = "get_solution",
        annotations(title = "Get a saved solution", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SolutionRead>()
    )]
    async fn get_solution(&self, Parameters(args): Parameters<GetArgs>) -> CallToolResult {
        let offset = args.offset.unwrap_or(0);
        reply(self.app().kb().and_then(|kb| kb.read(&args.id, offset)))
    }

    /// Delete a saved solution.
    #[tool(
        name = "delete_solution",
        annotations(title = "Delete a saved solution", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<Deleted>()
    )]
    async fn delete_solution(&self, Parameters(args): Parameters<IdArgs>) -> CallToolResult {
        reply(self.app().kb().and_then(|kb| kb.delete(&args.id)))
    }
}
