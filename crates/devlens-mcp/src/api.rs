//! API tools: explore the team's OpenAPI specs (tags, endpoints, details, search).
//!
//! Thin adapters over [`devlens_openapi::explorer::ApiExplorer`].

use rmcp::{
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::CallToolResult,
    schemars::{self, JsonSchema},
    tool, tool_router,
};
use serde::Deserialize;

use devlens_openapi::{
    EndpointDetails, EndpointRef,
    explorer::{EndpointPage, SpecSelector, TagList},
    search::{SearchMode, SearchRequest, SearchResponse},
};

use crate::{
    DevlensServer,
    reply::{failure, structured},
};

/// Which spec: a configured project (default: the active one) or a spec location.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpecArgs {
    /// Project name from projects.json / devlens.toml. Omit to use the active project.
    #[serde(default, alias = "project")]
    pub project_name: Option<String>,
    /// A spec file path or http(s) URL, instead of a project.
    #[serde(default)]
    pub spec: Option<String>,
}

impl SpecArgs {
    fn selector(&self) -> SpecSelector {
        SpecSelector {
            project: self.project_name.clone(),
            spec: self.spec.clone(),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListTagsArgs {
    #[serde(flatten)]
    pub target: SpecArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListEndpointsArgs {
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
pub struct EndpointDetailsArgs {
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
pub struct SearchArgs {
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
    /// keyword, semantic or hybrid (default: the best available).
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(flatten)]
    pub target: SpecArgs,
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
        match self.services().api.tags(&args.target.selector()).await {
            Ok(list) => structured(list.to_text(), &list),
            Err(e) => failure(e),
        }
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
        let limit = Some(
            args.limit
                .unwrap_or(devlens_openapi::explorer::DEFAULT_PAGE),
        );
        let result = self
            .services()
            .api
            .endpoints(
                &args.target.selector(),
                &args.tag,
                args.offset.unwrap_or(0),
                limit,
            )
            .await;
        match result {
            Ok(page) => structured(page.to_text(), &page),
            Err(e) => failure(e),
        }
    }

    /// Everything needed to call one endpoint: parameters, request body and success response
    /// schemas with $refs resolved, compact. Name it by operationId or by method + path.
    #[tool(
        name = "get_endpoint_details",
        annotations(title = "Endpoint details", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<EndpointDetails>()
    )]
    async fn get_endpoint_details(
        &self,
        Parameters(args): Parameters<EndpointDetailsArgs>,
    ) -> CallToolResult {
        let endpoint = match (&args.operation_id, &args.method, &args.path) {
            (Some(id), None, None) if !id.trim().is_empty() => {
                EndpointRef::OperationId(id.trim().to_string())
            }
            (None, Some(method), Some(path)) => {
                EndpointRef::method_path(method.trim(), path.trim())
            }
            _ => {
                return failure(
                    "give either `operationId`, or both `method` and `path` \
                     (find them with search_api_documentation or list_endpoints_by_tag)",
                );
            }
        };
        match self
            .services()
            .api
            .details(&args.target.selector(), &endpoint)
            .await
        {
            Ok(details) => structured(details.to_text(), &details),
            Err(e) => failure(e),
        }
    }

    /// Find endpoints for a question (ranked), or list a tag's endpoints; optionally keep only
    /// one HTTP method. Give exactly one of query or tag, and a limit (1-50).
    #[tool(
        name = "search_api_documentation",
        annotations(title = "Search the API", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SearchResponse>()
    )]
    async fn search_api_documentation(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> CallToolResult {
        let mode = match args.mode.as_deref().map(SearchMode::parse).transpose() {
            Ok(mode) => mode,
            Err(message) => return failure(message),
        };
        let request =
            match SearchRequest::new(args.query, args.tag, args.method, Some(args.limit), mode) {
                Ok(request) => request,
                Err(message) => return failure(message),
            };
        match self
            .services()
            .api
            .search(&args.target.selector(), &request)
            .await
        {
            Ok(response) => structured(response.to_text(), &response),
            Err(e) => failure(e),
        }
    }
}
