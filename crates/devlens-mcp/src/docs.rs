//! Library docs tools: `resolve_library_id` and `query_docs`, a local Context7.
//!
//! Thin adapters over [`devlens_docs::Docs`], which the application layer opens on first use and
//! shares with the REST API.

use rmcp::{
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::CallToolResult,
    schemars::{self, JsonSchema},
    tool, tool_router,
};
use serde::Deserialize;

use devlens_docs::{QueryDocsInput, Resolved};

use crate::{DevlensServer, reply::reply};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResolveArgs {
    /// The library or package name as you know it, e.g. "react", "vue", "@vue/runtime-core",
    /// "node:fs". Spelling mistakes are tolerated.
    pub library_name: String,
    /// What you want to do with it; breaks ties between similar names.
    #[serde(default)]
    pub query: Option<String>,
}

#[tool_router(router = docs_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Find the id of a library whose docs devlens has ingested, from its name or a package
    /// name. Call this before query_docs unless you already know the id.
    #[tool(
        name = "resolve_library_id",
        annotations(title = "Resolve a library id", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<Resolved>()
    )]
    async fn resolve_library_id(
        &self,
        Parameters(args): Parameters<ResolveArgs>,
    ) -> CallToolResult {
        let resolved = self
            .app()
            .docs()
            .and_then(|docs| docs.resolve(&args.library_name, args.query.as_deref()));
        reply(resolved)
    }

    /// Answer a question from a library's docs: the best sections and code examples, assembled
    /// best-first into `context` within `context_limit` tokens (cl100k). Get library_id from
    /// resolve_library_id.
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
        let answer = match self.app().docs() {
            Ok(docs) => docs.query(&input).await,
            Err(e) => Err(e),
        };
        reply(answer)
    }
}
