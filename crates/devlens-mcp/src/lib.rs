//! The devlens MCP server.
//!
//! Each tool family lives in its own module as a thin adapter: it validates the arguments, calls
//! a domain crate, and shapes the reply (compact text for the model, `structuredContent` for
//! programs). Nothing here parses specs or ranks results.
//!
//! Argument errors come back as `isError` tool results rather than JSON-RPC errors: MCP clients
//! hide protocol errors from the model, and the model is the one who can fix its call.

mod api;
mod browser;
mod reply;

use std::sync::Arc;

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, tool::ToolCallContext},
    model::{
        CallToolRequestParams, CallToolResponse, ContentBlock, Implementation, ListToolsResult,
        PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    },
    service::RequestContext,
};

use devlens_openapi::explorer::ApiExplorer;

pub use devlens_browser;
pub use rmcp;

/// How rmcp words an argument that does not deserialize.
const DESERIALIZE_PREFIX: &str = "failed to deserialize parameters:";

const INSTRUCTIONS: &str = "devlens gives you the team's HTTP APIs from their OpenAPI specs. \
Find an endpoint with search_api_documentation (a question) or list_api_tags then \
list_endpoints_by_tag; read get_endpoint_details before writing a request. Search ranks by \
meaning and keywords once build_api_embedding_index has run for the project (see \
get_api_index_status); until then it ranks by keywords and says so. API tools use the active \
project unless you pass projectName. To see and drive a web page, start a browser with chrome \
(action launch, or connect to a running Chrome), then navigate, look with snapshot or \
query_elements, act with click_element / fill_element / type_text (refs from the snapshot or CSS \
selectors), and check get_console_logs, list_network_requests, screenshot and evaluate; target \
manages tabs, and page tools take connectionId when several browsers are connected.";

/// What the tools share: the domain services.
#[derive(Debug)]
pub struct Services {
    pub api: ApiExplorer,
    /// Browser connections; call `browser.shutdown()` when the server exits.
    pub browser: devlens_browser::BrowserSessions,
}

/// The MCP server. Cheap to clone: one per session over Streamable HTTP, all sharing `Services`.
#[derive(Debug, Clone)]
pub struct DevlensServer {
    services: Arc<Services>,
    tool_router: ToolRouter<Self>,
}

impl DevlensServer {
    pub fn new(services: Arc<Services>) -> Self {
        Self {
            services,
            tool_router: Self::api_tools() + Self::browser_tools(),
        }
    }

    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Every tool this server offers.
    pub fn tools(&self) -> Vec<Tool> {
        self.tool_router.list_all()
    }

    /// Serves MCP over stdin/stdout until the client closes the stream.
    pub async fn serve_stdio(self) -> Result<(), std::io::Error> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }
}

impl ServerHandler for DevlensServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("devlens", env!("CARGO_PKG_VERSION"))
                    .with_title("devlens")
                    .with_description("Browser, API, docs and knowledge tools for front-end work"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        if !self.tool_router.has_route(&name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{name}': call tools/list to see the tools devlens offers"),
                None,
            ));
        }
        let call = ToolCallContext::new(self, request, context);
        let mut response = self.tool_router.call(call).await?;
        // rmcp reports arguments that do not deserialize as a tool error; say how to fix them.
        if let CallToolResponse::Complete(result) = &mut response
            && result.is_error == Some(true)
        {
            for block in &mut result.content {
                let detail = block
                    .as_text()
                    .and_then(|t| t.text.strip_prefix(DESERIALIZE_PREFIX))
                    .map(str::to_string);
                if let Some(detail) = detail {
                    *block = ContentBlock::text(format!(
                        "invalid arguments for {name}:{detail}. Check the tool's input schema."
                    ));
                }
            }
        }
        Ok(response)
    }
}
