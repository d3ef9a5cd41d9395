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

use devlens_app::api::{
    SearchInput, confined_spec_selector, endpoint_ref, search_request, spec_selector,
};

use devlens_app::AppError;
use devlens_app::browser::ConnectionArgs;
use devlens_app::contract::{
    CallEndpoint, CheckTraffic, TrafficSource, call_endpoint, check_traffic, code_sample,
};
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
    /// At most this many endpoints (default 100, at most 200; nextOffset pages on).
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckTrafficArgs {
    /// A HAR file (workspace-relative) to check instead of the browser tab's live traffic.
    #[serde(default)]
    pub har: Option<String>,
    /// Where the API runs, e.g. "http://127.0.0.1:8080/api". Default: the project's base_url,
    /// else the spec's servers (their paths on the page's own origin too).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Also the requests of pages the tab showed before the current one.
    #[serde(default)]
    pub include_previous_pages: Option<bool>,
    /// The browser connection (omit for the active one).
    #[serde(default)]
    pub connection_id: Option<String>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallEndpointArgs {
    /// The operationId, e.g. "createOrder". Or give method and path.
    #[serde(default)]
    pub operation_id: Option<String>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    /// Parameters by name (path, query, header alike), e.g. {"productId": 7, "limit": 10}.
    #[serde(default)]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
    /// The request body (JSON).
    #[serde(default)]
    pub body: Option<serde_json::Value>,
    /// Extra request headers.
    #[serde(default)]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// Overrides the project's base URL.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Send it. Default: GET/HEAD/OPTIONS are sent, other methods shown as a dry run (curl).
    #[serde(default)]
    pub execute: Option<bool>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

impl DevlensServer {
    /// The spec `target` names: a `spec` file only inside this session's workspace, and no URL
    /// over HTTP (devlens_app::api::confined_spec_selector).
    async fn selector(
        &self,
        target: &SpecArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<SpecSelector, AppError> {
        if target.spec.as_deref().is_none_or(|s| s.trim().is_empty()) {
            return Ok(target.selector());
        }
        let workspace = self.workspace(context).await?;
        let over_http = context.extensions.get::<http::request::Parts>().is_some();
        confined_spec_selector(
            target.project_name.clone(),
            target.spec.clone(),
            &workspace,
            over_http,
        )
    }

    /// Runs a search as `input` asks, or says why it is invalid.
    async fn run_search(
        &self,
        target: &SpecArgs,
        input: SearchInput,
        context: &RequestContext<RoleServer>,
    ) -> Result<SearchResponse, AppError> {
        let request = search_request(input)?;
        let selector = self.selector(target, context).await?;
        Ok(self.app().api().search(&selector, &request).await?)
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
        Parameters(args): Parameters<ListTagsArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let tags = async {
            let selector = self.selector(&args.target, &context).await?;
            Ok::<_, AppError>(self.app().api().tags(&selector).await?)
        };
        reply(tags.await)
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
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let limit = args
            .limit
            .unwrap_or(devlens_openapi::explorer::DEFAULT_PAGE);
        let page = async {
            let selector = self.selector(&args.target, &context).await?;
            Ok::<_, AppError>(
                self.app()
                    .api()
                    .endpoints(&selector, &args.tag, args.offset.unwrap_or(0), Some(limit))
                    .await?,
            )
        };
        reply(page.await)
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
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let details = async {
            let endpoint = endpoint_ref(args.operation_id, args.method, args.path)?;
            let selector = self.selector(&args.target, &context).await?;
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
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let input = SearchInput {
            query: args.query,
            tag: args.tag,
            method: args.method,
            limit: Some(args.limit),
            mode: args.mode,
            details: args.details.unwrap_or(false),
        };
        reply(self.run_search(&args.target, input, &context).await)
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
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let input = SearchInput {
            query: args.query,
            tag: args.tag,
            method: args.method,
            limit: Some(args.limit.unwrap_or(10)),
            mode: Some(SearchMode::Semantic.as_str().to_string()),
            details: args.details.unwrap_or(false),
        };
        reply(self.run_search(&args.target, input, &context).await)
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
        let result = async {
            let selector = self.selector(&args.target, &context).await?;
            Ok::<_, AppError>(
                self.app()
                    .api()
                    .build_index(&selector, args.force_rebuild.unwrap_or(false), &progress)
                    .await?,
            )
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
        Parameters(args): Parameters<IndexArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let status = async {
            let selector = self.selector(&args.target, &context).await?;
            Ok::<_, AppError>(self.app().api().index_status(&selector).await?)
        };
        reply(status.await)
    }

    /// Check the browser tab's API calls (or a HAR file) against the project's OpenAPI spec:
    /// undocumented endpoints and statuses, and schema drift (missing required fields, wrong
    /// types, values outside an enum, extra fields), each with operationId, JSON pointer and
    /// the value seen.
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
        let source = match args
            .har
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
        {
            Some(path) => TrafficSource::HarPath(path),
            None => TrafficSource::Browser {
                connection: ConnectionArgs {
                    connection_id: args.connection_id,
                },
                include_previous_pages: args.include_previous_pages.unwrap_or(false),
            },
        };
        let checked = async {
            let request = CheckTraffic {
                selector: self.selector(&args.target, &context).await?,
                base_url: args.base_url,
                source,
            };
            check_traffic(self.app(), request).await
        };
        reply(checked.await)
    }

    /// Call an endpoint by operationId: arguments are checked against the spec first (the
    /// contract comes with any error), the request is built with the project's base URL and
    /// credentials (from the environment, never shown), and the answer is checked against the
    /// spec. GET is sent; other methods are a dry run (curl) unless execute is true.
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
        let read_only = crate::token_scope(&context) == Some(devlens_app::tokens::Scope::Read);
        let outcome = async {
            let endpoint = endpoint_ref(args.operation_id, args.method, args.path)?;
            let request = CallEndpoint {
                selector: self.selector(&args.target, &context).await?,
                endpoint: Some(endpoint),
                params: args.params.unwrap_or_default(),
                headers: args.headers.unwrap_or_default().into_iter().collect(),
                body: args.body,
                content_type: None,
                base_url: args.base_url,
                execute: args.execute,
                dry_run_only: read_only,
            };
            call_endpoint(self.app(), request).await
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
        Parameters(args): Parameters<EndpointDetailsArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let sample = async {
            let endpoint = endpoint_ref(args.operation_id, args.method, args.path)?;
            let selector = self.selector(&args.target, &context).await?;
            code_sample(self.app(), &selector, &endpoint).await
        };
        reply(sample.await)
    }
}
