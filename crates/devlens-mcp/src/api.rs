//! API tools: explore the team's OpenAPI specs (tags, endpoints, details, search).
//!
//! Thin adapters over [`devlens_openapi::explorer::ApiExplorer`].

use rmcp::{
    RoleServer,
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::{CallToolResult, ProgressNotificationParam},
    schemars::{self, JsonSchema},
    service::RequestContext,
    tool, tool_router,
};
use serde::Deserialize;

use devlens_app::api::{SearchInput, endpoint_ref, search_request, spec_selector};

use devlens_app::AppError;
use devlens_openapi::{
    explorer::{EndpointPage, IndexReport, IndexStatus, SpecSelector, TagList},
    search::{SearchMode, SearchResponse},
};

use crate::{DevlensServer, reply::reply};

/// Which spec: a configured project (default: the active one) or a spec location.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpecArgs {
    /// Project name from projects.json / devlens.toml. Omit to use the active project.
    #[serde(default, alias = "project")]
    pub project_name: Option<String>,
    /// A spec file path or http(s) URL, instead of a project.
    #[serde(default)]
    pub spec: Option<String>,
}

impl SpecArgs {
    fn selector(&self) -> SpecSelector {
        spec_selector(self.project_name.clone(), self.spec.clone())
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTagsArgs {
    #[serde(flatten)]
    pub target: SpecArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListEndpointsArgs {
    /// Tag name, as listed by list_api_tags.
    pub tag: String,
    /// Skip this many endpoints (paging).
    #[serde(default)]
    pub offset: Option<usize>,
    /// At most this many endpoints (default 100).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointDetailsArgs {
    /// The operationId, e.g. "issues/create". Or give method and path.
    #[serde(default)]
    pub operation_id: Option<String>,
    /// HTTP method, with path.
    #[serde(default)]
    pub method: Option<String>,
    /// Path template as in the spec, e.g. "/repos/{owner}/{repo}/issues".
    #[serde(default)]
    pub path: Option<String>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SearchArgs {
    /// A natural-language question, e.g. "add a label to an issue". Exactly one of query or tag.
    #[serde(default)]
    pub query: Option<String>,
    /// List this tag's endpoints instead of searching. Exactly one of query or tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Keep only this method: GET, POST, PUT, PATCH or DELETE.
    #[serde(default)]
    pub method: Option<String>,
    /// How many results, 1 to 50.
    pub limit: i64,
    /// hybrid (default: meaning plus keywords, ranked best), semantic, or keyword. Without a
    /// semantic index, keyword ranking runs and the result says why.
    #[serde(default)]
    pub mode: Option<String>,
    /// Attach each hit's full endpoint details (parameters, body, response).
    #[serde(default)]
    pub details: Option<bool>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SemanticSearchArgs {
    /// A natural-language question, e.g. "add a label to an issue". Exactly one of query or tag.
    #[serde(default)]
    pub query: Option<String>,
    /// List this tag's endpoints instead of searching. Exactly one of query or tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Keep only this method: GET, POST, PUT, PATCH or DELETE.
    #[serde(default)]
    pub method: Option<String>,
    /// How many results, 1 to 50 (default 10).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Attach each hit's full endpoint details (parameters, body, response).
    #[serde(default)]
    pub details: Option<bool>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IndexArgs {
    #[serde(flatten)]
    pub target: SpecArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BuildIndexArgs {
    /// Embed every endpoint again instead of reusing the vectors of unchanged ones.
    #[serde(default)]
    pub force_rebuild: Option<bool>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

impl DevlensServer {
    /// Runs a search as `input` asks, or says why it is invalid.
    async fn run_search(
        &self,
        target: &SpecArgs,
        input: SearchInput,
    ) -> Result<SearchResponse, AppError> {
        let request = search_request(input)?;
        Ok(self
            .app()
            .api()
            .search(&target.selector(), &request)
            .await?)
    }
}

/// Forwards `(done, total)` progress to the client as `notifications/progress`, when the call
/// carried a progress token.
fn progress_sender(
    context: &RequestContext<RoleServer>,
) -> (
    impl Fn(usize, usize) + Send + Sync + use<>,
    Option<tokio::task::JoinHandle<()>>,
) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, usize)>();
    let forwarder = context.meta.get_progress_token().map(|token| {
        let peer = context.peer.clone();
        tokio::spawn(async move {
            while let Some((done, total)) = rx.recv().await {
                let param = ProgressNotificationParam::new(token.clone(), done as f64)
                    .with_total(total as f64)
                    .with_message(format!("embedded {done} of {total} endpoints"));
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        })
    });
    let send = move |done: usize, total: usize| {
        let _ = tx.send((done, total));
    };
    (send, forwarder)
}

#[tool_router(router = api_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// List the API's tags with their descriptions and how many endpoints each has.
    #[tool(
        name = "list_api_tags",
        annotations(title = "List API tags", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<TagList>()
    )]
    async fn list_api_tags(&self, Parameters(args): Parameters<ListTagsArgs>) -> CallToolResult {
        reply(self.app().api().tags(&args.target.selector()).await)
    }

    /// List a tag's endpoints: method, path, operationId and summary. Paged (default 100).
    #[tool(
        name = "list_endpoints_by_tag",
        annotations(title = "List endpoints of a tag", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<EndpointPage>()
    )]
    async fn list_endpoints_by_tag(
        &self,
        Parameters(args): Parameters<ListEndpointsArgs>,
    ) -> CallToolResult {
        let limit = args
            .limit
            .unwrap_or(devlens_openapi::explorer::DEFAULT_PAGE);
        let page = self
            .app()
            .api()
            .endpoints(
                &args.target.selector(),
                &args.tag,
                args.offset.unwrap_or(0),
                Some(limit),
            )
            .await;
        reply(page)
    }

    /// Everything needed to call one endpoint: parameters, request body and success response
    /// schemas with $refs resolved, compact. Name it by operationId or by method + path.
    #[tool(
        name = "get_endpoint_details",
        annotations(
            title = "Endpoint details",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_endpoint_details(
        &self,
        Parameters(args): Parameters<EndpointDetailsArgs>,
    ) -> CallToolResult {
        let details = async {
            let endpoint = endpoint_ref(args.operation_id, args.method, args.path)?;
            let selector = args.target.selector();
            Ok::<_, AppError>(self.app().api().details(&selector, &endpoint).await?)
        };
        reply(details.await)
    }

    /// Find endpoints for a question (ranked), or list a tag's endpoints; optionally keep only
    /// one HTTP method. Give exactly one of query or tag, and a limit (1-50).
    #[tool(
        name = "search_api_documentation",
        annotations(
            title = "Search the API",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn search_api_documentation(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> CallToolResult {
        let input = SearchInput {
            query: args.query,
            tag: args.tag,
            method: args.method,
            limit: Some(args.limit),
            mode: args.mode,
            details: args.details.unwrap_or(false),
        };
        reply(self.run_search(&args.target, input).await)
    }

    /// Find endpoints by meaning (embeddings): the same as search_api_documentation in semantic
    /// mode. Falls back to keyword ranking, and says so, when no semantic index is built.
    #[tool(
        name = "semantic_search_api_documentation",
        annotations(
            title = "Semantic API search",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn semantic_search_api_documentation(
        &self,
        Parameters(args): Parameters<SemanticSearchArgs>,
    ) -> CallToolResult {
        let input = SearchInput {
            query: args.query,
            tag: args.tag,
            method: args.method,
            limit: Some(args.limit.unwrap_or(10)),
            mode: Some(SearchMode::Semantic.as_str().to_string()),
            details: args.details.unwrap_or(false),
        };
        reply(self.run_search(&args.target, input).await)
    }

    /// Build or rebuild the semantic search index of a project's spec (embeds every endpoint;
    /// unchanged endpoints reuse their vectors). Sends progress notifications when the call
    /// carries a progressToken. Searches keep using the previous index until the new one is
    /// complete.
    #[tool(
        name = "build_api_embedding_index",
        annotations(title = "Build the semantic API index", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<IndexReport>()
    )]
    async fn build_api_embedding_index(
        &self,
        Parameters(args): Parameters<BuildIndexArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let (progress, forwarder) = progress_sender(&context);
        let result = self
            .app()
            .api()
            .build_index(
                &args.target.selector(),
                args.force_rebuild.unwrap_or(false),
                &progress,
            )
            .await;
        drop(progress);
        if let Some(forwarder) = forwarder {
            // Every progress notification goes out before the result.
            let _ = forwarder.await;
        }
        reply(result)
    }

    /// Whether a project's semantic index exists, what built it, and whether it is stale (the
    /// spec changed since).
    #[tool(
        name = "get_api_index_status",
        annotations(title = "Semantic API index status", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<IndexStatus>()
    )]
    async fn get_api_index_status(
        &self,
        Parameters(args): Parameters<IndexArgs>,
    ) -> CallToolResult {
        reply(self.app().api().index_status(&args.target.selector()).await)
    }
}
