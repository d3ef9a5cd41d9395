//! Library docs tools: `resolve_library_id` and `query_docs`, a local Context7.
//!
//! Thin adapters over [`devlens_app::docs`], whose argument types they take as they are; the
//! docs themselves are opened on first use and shared with the REST API.

use rmcp::{
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::CallToolResult,
    tool, tool_router,
};

use devlens_app::docs::{self, QueryDocsInput, ResolveLibrary, Resolved};

use crate::{DevlensServer, reply::reply};

#[tool_router(router = docs_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Find a library's id from its name or package name: libraries with ingested docs, and the
    /// project's own dependencies (with the installed version). Call before query_docs unless you
    /// know the id.
    #[tool(
        name = "resolve_library_id",
        annotations(title = "Resolve a library id", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<Resolved>()
    )]
    async fn resolve_library_id(
        &self,
        Parameters(args): Parameters<ResolveLibrary>,
    ) -> CallToolResult {
        reply(docs::resolve(self.app(), &args))
    }

    /// Answer a question from a library's docs: the best sections and code examples, best-first,
    /// within context_limit tokens. Get library_id from resolve_library_id.
    #[tool(
        name = "query_docs",
        annotations(
            title = "Query library docs",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn query_docs(&self, Parameters(input): Parameters<QueryDocsInput>) -> CallToolResult {
        reply(docs::query(self.app(), &input).await)
    }
}
