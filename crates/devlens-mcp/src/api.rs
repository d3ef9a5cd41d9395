//! API tools: explore the team's OpenAPI specs (tags, endpoints, details, search), check
//! traffic against them, call endpoints, write code samples.
//!
//! Thin adapters over [`devlens_app::api`] and [`devlens_app::contract`], whose argument types
//! they take as they are; what only this surface knows — the session's workspace, whether the
//! call came over HTTP, the token's scope — is resolved here.

use rmcp::{
    RoleServer,
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::{CallToolResult, ProgressNotificationParam},
    service::RequestContext,
    tool, tool_router,
};

use devlens_app::AppError;
use devlens_app::api::{
    self, BuildIndexArgs, EndpointArgs, EndpointPage, IndexReport, IndexStatus, ListEndpoints,
    SearchArgs, SemanticSearchArgs, SpecArgs, SpecSelector, TagList,
};
use devlens_app::contract::{self, CallEndpointArgs, CheckTrafficArgs};
use devlens_app::tokens::Scope;

use crate::{DevlensServer, reply::reply};

impl DevlensServer {
    /// The spec `target` names: a `spec` file only inside this session's workspace, and no URL
    /// over HTTP.
    async fn selector(
        &self,
        target: &SpecArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<SpecSelector, AppError> {
        let over_http = context.extensions.get::<http::request::Parts>().is_some();
        target
            .confined_selector(|| self.workspace(context), over_http)
            .await
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
    async fn list_api_tags(
        &self,
        Parameters(args): Parameters<SpecArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let tags = async { api::tags(self.app(), &self.selector(&args, &context).await?).await };
        reply(tags.await)
    }

    /// List a tag's endpoints: method, path, operationId and summary. Paged.
    #[tool(
        name = "list_endpoints_by_tag",
        annotations(title = "List endpoints of a tag", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<EndpointPage>()
    )]
    async fn list_endpoints_by_tag(
        &self,
        Parameters(mut args): Parameters<ListEndpoints>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        // A model reads every line it is sent: its pages are shorter than a person's (200).
        args.limit.get_or_insert(api::DEFAULT_PAGE);
        let page = async {
            let selector = self.selector(&args.target, &context).await?;
            api::endpoints(self.app(), &selector, &args).await
        };
        reply(page.await)
    }

    /// Everything needed to call one endpoint: parameters, request body and success response
    /// schemas, $refs resolved. Name it by operationId or method + path.
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
        Parameters(args): Parameters<EndpointArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let details = async {
            let endpoint = args.endpoint()?;
            let selector = self.selector(&args.target, &context).await?;
            api::details(self.app(), &selector, &endpoint).await
        };
        reply(details.await)
    }

    /// Find endpoints for a question (ranked), or list a tag's endpoints; optionally keep only
    /// one HTTP method. Give exactly one of query or tag.
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
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let found = async {
            let request = args.request()?;
            let selector = self.selector(&args.target, &context).await?;
            let caller = crate::sampling::caller_model(&context);
            api::search_for(self.app(), &selector, &request, &caller).await
        };
        reply(found.await)
    }

    /// search_api_documentation in semantic mode: endpoints by meaning (exactly one of query or
    /// tag). Without a semantic index it ranks by keywords and says so.
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
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let found = async {
            let request = args.request()?;
            let selector = self.selector(&args.target, &context).await?;
            let caller = crate::sampling::caller_model(&context);
            api::search_for(self.app(), &selector, &request, &caller).await
        };
        reply(found.await)
    }

    /// Build or rebuild the semantic index of a project's spec (unchanged endpoints keep their
    /// vectors; progress given a progressToken). Searches use the old index until the new one is
    /// done.
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
        let result = async {
            let selector = self.selector(&args.target, &context).await?;
            api::build_index(self.app(), &selector, &args, &progress).await
        }
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
        Parameters(args): Parameters<SpecArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let status = async {
            let selector = self.selector(&args, &context).await?;
            api::index_status(self.app(), &selector).await
        };
        reply(status.await)
    }

    /// Check the tab's API calls (or a HAR file) against the OpenAPI spec: undocumented endpoints
    /// and statuses, schema drift (missing required fields, wrong types, values outside an enum,
    /// extra fields) with operationId, JSON pointer and value.
    #[tool(
        name = "check_api_traffic",
        annotations(
            title = "Check API traffic against the spec",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn check_api_traffic(
        &self,
        Parameters(args): Parameters<CheckTrafficArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let checked = async {
            let selector = self.selector(&args.target, &context).await?;
            contract::check_traffic(self.app(), args.into_request(selector)).await
        };
        reply(checked.await)
    }

    /// Call an endpoint by operationId with the project's base URL and credentials (from the
    /// environment, never shown); arguments and answer are checked against the spec. Methods other
    /// than GET/HEAD/OPTIONS are a dry run (curl) unless execute is true.
    #[tool(
        name = "call_endpoint",
        annotations(
            title = "Call an API endpoint",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn call_endpoint(
        &self,
        Parameters(args): Parameters<CallEndpointArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        // A read token (over HTTP) gets the dry run only: the request is shown, nothing sent,
        // and `execute: true` is refused.
        let read_only = crate::token_scope(&context) == Some(Scope::Read);
        let outcome = async {
            let endpoint = args.endpoint()?;
            let selector = self.selector(&args.target, &context).await?;
            let request = args.into_request(selector, endpoint, read_only);
            contract::call_endpoint(self.app(), request).await
        };
        reply(outcome.await)
    }

    /// Code for one endpoint: a TypeScript fetch function with types generated from the spec's
    /// schemas, and a curl line with an example body.
    #[tool(
        name = "get_code_sample",
        annotations(
            title = "Code sample for an endpoint",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_code_sample(
        &self,
        Parameters(args): Parameters<EndpointArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let sample = async {
            let endpoint = args.endpoint()?;
            let selector = self.selector(&args.target, &context).await?;
            contract::code_sample(self.app(), &selector, &endpoint).await
        };
        reply(sample.await)
    }
}
