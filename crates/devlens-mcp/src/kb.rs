//! Knowledge base tools: `save_solution`, `search_solutions`, `ask_knowledge_base`,
//! `get_solution`, `delete_solution`.
//!
//! Thin adapters over [`devlens_app::kb`], whose argument types they take as they are; the
//! knowledge base itself is opened on first use and shared with the REST API.

use rmcp::{handler::server::wrapper::Parameters, model::CallToolResult, tool, tool_router};

use devlens_app::kb::{
    self, AskKnowledgeBase, GetSolution, SaveSolution, Saved, SearchSolutions, SolutionId,
};

use crate::{DevlensServer, reply::reply};

#[tool_router(router = kb_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Save a solution (fix, snippet, answer) to the knowledge base, to be found later by
    /// meaning. Give id to update a saved one.
    #[tool(
        name = "save_solution",
        annotations(
            title = "Save a solution",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn save_solution(&self, Parameters(args): Parameters<SaveSolution>) -> CallToolResult {
        // The agent sent the text: it gets back only the start of it.
        reply(kb::save(self.app(), args).await.map(Saved::with_text_cut))
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
    async fn search_solutions(
        &self,
        Parameters(args): Parameters<SearchSolutions>,
    ) -> CallToolResult {
        reply(kb::search(self.app(), &args).await)
    }

    /// Answer from the knowledge base: the best solutions as a numbered context with sources;
    /// answer from it citing [n].
    #[tool(
        name = "ask_knowledge_base",
        annotations(
            title = "Ask the knowledge base",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn ask_knowledge_base(
        &self,
        Parameters(args): Parameters<AskKnowledgeBase>,
    ) -> CallToolResult {
        reply(kb::ask(self.app(), args).await)
    }

    /// A saved solution: its fields and text (a long text comes in parts: the answer says the
    /// offset to read on from).
    #[tool(
        name = "get_solution",
        annotations(
            title = "Get a saved solution",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_solution(&self, Parameters(args): Parameters<GetSolution>) -> CallToolResult {
        reply(kb::read(self.app(), &args))
    }

    /// Delete a saved solution.
    #[tool(
        name = "delete_solution",
        annotations(
            title = "Delete a saved solution",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn delete_solution(&self, Parameters(args): Parameters<SolutionId>) -> CallToolResult {
        reply(kb::delete(self.app(), &args.id))
    }
}
