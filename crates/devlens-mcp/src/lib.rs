//! The devlens MCP server.
//!
//! Each tool family lives in its own module as a thin adapter: it takes the family's argument
//! types from `devlens-app`, resolves what only this surface knows (the session's workspace,
//! whether the call came over HTTP, the token's scope), makes one call into `devlens-app`, and
//! shapes the reply (compact text for the model, `structuredContent` for programs). Nothing here
//! parses specs or ranks results, and no domain crate is named: `devlens-app` is the one door.
//!
//! Argument errors come back as `isError` tool results rather than JSON-RPC errors: MCP clients
//! hide protocol errors from the model, and the model is the one who can fix its call.

mod api;
mod audit;
mod browser;
mod completions;
mod debugger;
mod docs;
mod families;
mod kb;
mod logging;
mod prompts;
mod reply;
mod resources;
mod sampling;
mod schema;
mod visibility;
mod workspace;

use std::sync::Arc;

#[allow(deprecated)] // SetLevelRequestParams: logging, for the 2025 protocols' clients
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, tool::ToolCallContext},
    model::{
        CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
        ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
        ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SetLevelRequestParams,
        SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};

use devlens_app::{App, tokens::Scope, workspace::Workspace};
use tracing::Instrument as _;

pub use devlens_app;
pub use families::{ToolFamilies, ToolFamily};
pub use logging::{LogFeed, LogFeedLayer};
pub use rmcp;
pub use visibility::{ToolState, listed_in};

use visibility::Visibility;

/// How rmcp words an argument that does not deserialize.
const DESERIALIZE_PREFIX: &str = "failed to deserialize parameters:";

/// What the server tells the model about each family it offers.
const API_INSTRUCTIONS: &str = "devlens gives you the team's HTTP APIs from their OpenAPI specs. \
Find an endpoint with search_api_documentation (a question) or list_api_tags then \
list_endpoints_by_tag; read get_endpoint_details before writing a request. Search ranks by \
meaning and keywords once build_api_embedding_index has run for the project (see \
get_api_index_status); until then it ranks by keywords and says so. check_api_traffic compares \
the browser tab's API calls (or a HAR file) with the spec; call_endpoint calls an operation with \
arguments checked first (writes are a dry run unless execute is true); get_code_sample writes a \
typed fetch function. API tools use the active project unless you pass projectName (another \
configured project) or spec (a spec file or URL).";
const BROWSER_INSTRUCTIONS: &str = "To see and drive a web page, start a browser with chrome \
(action launch, or connect to a running Chrome), then navigate, look with snapshot or \
query_elements, act with click_element / fill_element / type_text (refs from the snapshot or CSS \
selectors), and check get_console_logs, list_network_requests, screenshot and evaluate; target \
manages tabs, and page tools take connectionId when several browsers are connected. To find why a \
page is inaccessible, slow or mis-styled: audit_accessibility, audit_performance (vitals, trace, \
profile, memory), inspect_css (why a style applies or not), inspect_app_state (React/Vue tree, \
props, state, stores).";
const DEBUGGER_INSTRUCTIONS: &str = "To debug the page's JavaScript, set a breakpoint (url such as \
app.js, lineNumber) and trigger it with click_element, navigate or evaluate: the call returns with \
where the page paused (source, call stack, locals, console). Then step (over/into/out), \
evaluate_in_frame, call_stack, and execution resume; pause_on_exceptions stops on thrown errors.";
const DOCS_INSTRUCTIONS: &str = "For a library's documentation, call resolve_library_id with its \
name (or package name) to get its id, then query_docs with that id and your question: it answers \
with the best sections and code examples within context_limit tokens. The project's own \
dependencies resolve too (ids like /npm/express) and are answered at the installed version.";
const KB_INSTRUCTIONS: &str = "The knowledge base holds solutions the team saved: before solving \
a problem from scratch, search_solutions or ask_knowledge_base (a numbered context to answer \
from, citing [n]); save_solution keeps a fix worth reusing.";
const WORKSPACE_INSTRUCTIONS: &str = "The project's files: list_files and search_files to find \
code, read_file to read it, edit_file (exact oldText -> newText, or a diff) and write_file to \
change it; paths are relative to the workspace and cannot leave it.";
const DYNAMIC_INSTRUCTIONS: &str = "The tool list follows the browser: more tools appear once a \
browser is connected, after enable_debug_tools, and while the page is paused (the server sends \
tools/list_changed).";
const VISIBILITY_INSTRUCTIONS: &str = "hide_tools takes tools you do not need out of the list; \
show_tools brings them back.";

/// What only the MCP surface decides: which tool families a server offers and whether its tool
/// list follows the browser's state.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// The tool families every session offers.
    pub families: ToolFamilies,
    /// The tool list follows the browser's state (`--dynamic-tools`); otherwise it is fixed
    /// (but for hide_tools / show_tools).
    pub dynamic_tools: bool,
    /// A session works in its client's first file root (MCP roots) when it names one: the server
    /// was not given `--workspace`.
    pub workspace_from_roots: bool,
    /// The process's log events, for sessions that call `logging/setLevel`.
    pub log_feed: Option<LogFeed>,
}

/// The MCP server. Cheap to clone: one per session over Streamable HTTP, all sharing `Services`.
#[derive(Debug, Clone)]
pub struct DevlensServer {
    app: Arc<App>,
    options: Arc<McpOptions>,
    tool_router: ToolRouter<Self>,
    /// Every tool this server offers, schemas compacted once (see `schema`).
    tool_list: Arc<[Tool]>,
    /// What this session lists (hidden tools, the state): one per session, shared by clones.
    visibility: Arc<Visibility>,
    /// The workspace this session works in, once known (see [`workspace`]).
    session_workspace: Arc<std::sync::Mutex<Option<Arc<Workspace>>>>,
    /// The resources this session follows (`resources/subscribe`).
    subscriptions: Arc<resources::Subscriptions>,
    /// Set once the client listed resources: only then is the list watched for changes.
    resources_listed: Arc<std::sync::atomic::AtomicBool>,
    /// The level this session set with `logging/setLevel`.
    log: Arc<logging::SessionLog>,
}

impl DevlensServer {
    pub fn new(app: Arc<App>, options: Arc<McpOptions>) -> Self {
        let mut tool_router = ToolRouter::new();
        for family in ToolFamily::ALL {
            if options.families.contains(family) {
                tool_router += Self::family_tools(family);
            }
        }
        tool_router += Self::visibility_tools();
        let tool_list = tool_router
            .list_all()
            .into_iter()
            .map(compact_tool)
            .collect();
        let visibility = Arc::new(Visibility::new(options.dynamic_tools));
        Self {
            app,
            options,
            tool_router,
            tool_list,
            visibility,
            session_workspace: Arc::default(),
            subscriptions: Arc::default(),
            resources_listed: Arc::default(),
            log: Arc::default(),
        }
    }

    /// The services the tools call.
    pub fn app(&self) -> &App {
        &self.app
    }

    pub fn options(&self) -> &McpOptions {
        &self.options
    }

    fn session_workspace(&self) -> Option<Arc<Workspace>> {
        self.session_workspace
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn set_session_workspace(&self, ws: Option<Arc<Workspace>>) {
        *self
            .session_workspace
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = ws;
    }

    /// Every tool this server offers.
    pub fn tools(&self) -> Vec<Tool> {
        self.tool_list.to_vec()
    }

    fn family_tools(family: ToolFamily) -> ToolRouter<Self> {
        match family {
            ToolFamily::Api => Self::api_tools(),
            ToolFamily::Browser => Self::browser_tools() + Self::audit_tools(),
            ToolFamily::Debugger => Self::debugger_tools(),
            ToolFamily::Docs => Self::docs_tools(),
            ToolFamily::Kb => Self::kb_tools(),
            ToolFamily::Workspace => Self::workspace_tools(),
        }
    }

    /// The instructions for the families this server offers.
    fn instructions(&self) -> String {
        let families = &self.options.families;
        [
            (ToolFamily::Api, API_INSTRUCTIONS),
            (ToolFamily::Browser, BROWSER_INSTRUCTIONS),
            (ToolFamily::Debugger, DEBUGGER_INSTRUCTIONS),
            (ToolFamily::Docs, DOCS_INSTRUCTIONS),
            (ToolFamily::Kb, KB_INSTRUCTIONS),
            (ToolFamily::Workspace, WORKSPACE_INSTRUCTIONS),
        ]
        .into_iter()
        .filter(|(family, _)| families.contains(*family))
        .map(|(_, text)| text)
        .chain(self.visibility.dynamic().then_some(DYNAMIC_INSTRUCTIONS))
        .chain([VISIBILITY_INSTRUCTIONS])
        .collect::<Vec<_>>()
        .join(" ")
    }

    /// Serves MCP over stdin/stdout until the client closes the stream.
    pub async fn serve_stdio(self) -> Result<(), std::io::Error> {
        // The one client here is the user's own agent: it also gets the log events of no
        // session (start-up, background work).
        self.log.serve_stdio();
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }
}

/// The family a tool of any family belongs to.
fn family_of(tool: &str) -> Option<ToolFamily> {
    ToolFamily::ALL
        .into_iter()
        .find(|family| DevlensServer::family_tools(*family).has_route(tool))
}

/// `tool` with the lean schemas of [`schema`], its description's wrapped lines joined and only
/// the annotations that differ from MCP's defaults.
fn compact_tool(mut tool: Tool) -> Tool {
    if let Some(description) = &mut tool.description
        && description.contains('\n')
    {
        *description = schema::unwrap_lines(description).into();
    }
    schema::compact_input_schema(Arc::make_mut(&mut tool.input_schema));
    if let Some(output) = &mut tool.output_schema {
        schema::compact_output_schema(Arc::make_mut(output));
    }
    if let Some(annotations) = &mut tool.annotations {
        lean_annotations(annotations);
    }
    tool
}

/// Drops the hints that say what MCP assumes when a hint is absent — not read-only, destructive,
/// not idempotent, open world — and, on a read-only tool, the two hints MCP defines only for
/// tools that change something (destructive, idempotent). A client reads the same annotations;
/// every tool stops paying ~50 bytes for them.
fn lean_annotations(annotations: &mut rmcp::model::ToolAnnotations) {
    let read_only = annotations.read_only_hint == Some(true);
    if annotations.read_only_hint == Some(false) {
        annotations.read_only_hint = None;
    }
    if read_only || annotations.destructive_hint == Some(true) {
        annotations.destructive_hint = None;
    }
    if read_only || annotations.idempotent_hint == Some(false) {
        annotations.idempotent_hint = None;
    }
    if annotations.open_world_hint == Some(true) {
        annotations.open_world_hint = None;
    }
}

/// Resources per `resources/list` page.
const RESOURCE_PAGE: usize = 100;

/// One page of `all` from an opaque cursor (the offset), and the next page's cursor.
fn page_of<T>(all: Vec<T>, cursor: Option<&str>) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(c) => c.parse::<usize>().map_err(|_| {
            ErrorData::invalid_params(
                format!("invalid cursor `{c}`: pass the nextCursor of the previous page"),
                None,
            )
        })?,
    };
    let total = all.len();
    let page: Vec<T> = all.into_iter().skip(start).take(RESOURCE_PAGE).collect();
    let end = start.saturating_add(page.len());
    Ok((page, (end < total).then(|| end.to_string())))
}

impl DevlensServer {
    /// Whether `uri` is a resource this server can follow.
    fn check_subscribable(&self, uri: &str) -> Result<(), ErrorData> {
        match resources::Address::parse(uri) {
            Some(address) if self.options.families.contains(address.family()) => Ok(()),
            _ => Err(resources::not_found(
                uri,
                format!(
                    "cannot subscribe to `{uri}`: not a devlens resource this server offers \
                     (resources/list and resources/templates/list name them)"
                ),
            )),
        }
    }

    /// Follows the resource list and this session's subscriptions for a client that began
    /// with `initialize`, until it goes away.
    fn watch_resources_for_peer(&self, peer: rmcp::service::Peer<RoleServer>) {
        let server = self.clone();
        tokio::spawn(async move {
            let listed = Arc::clone(&server.resources_listed);
            let subscriptions = Arc::clone(&server.subscriptions);
            let list_peer = peer.clone();
            let update_peer = peer.clone();
            server
                .watch_resources(
                    move || subscriptions.list(),
                    move || listed.load(std::sync::atomic::Ordering::Relaxed),
                    || peer.is_transport_closed(),
                    move || {
                        let peer = list_peer.clone();
                        async move { peer.notify_resource_list_changed().await.is_ok() }
                    },
                    move |uri| {
                        let peer = update_peer.clone();
                        async move {
                            peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                                .await
                                .is_ok()
                        }
                    },
                )
                .await;
        });
    }
}

impl ServerHandler for DevlensServer {
    fn get_info(&self) -> ServerConfig {
        // listChanged in both modes: hide_tools / show_tools change the list on request.
        #[allow(deprecated)]
        // logging: deprecated by the 2026-07-28 protocol, used by older clients
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("devlens", env!("CARGO_PKG_VERSION"))
                    .with_title("devlens")
                    .with_description("Browser, API, docs and knowledge tools for front-end work"),
            )
            .with_instructions(self.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut listed = self.listed_tools().await;
        // A read token is shown only what it may call.
        if token_scope(&context) == Some(Scope::Read) {
            listed.retain(read_token_may_call);
        }
        self.visibility
            .record_listed(listed.iter().map(|t| t.name.to_string()).collect());
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.watch_resources_for_peer(context.peer.clone());
        self.announce_to_peer(context.peer);
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.resources_listed
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let all = self.list_resources_now();
        let (page, next) = page_of(all, request.and_then(|r| r.cursor).as_deref())?;
        let mut result = ListResourcesResult::with_all_items(page);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            self.resource_templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = self
            .read_resource_now(&request.uri)
            .instrument(self.log.span())
            .await?;
        Ok(ReadResourceResult::new(contents).into())
    }

    #[allow(deprecated)] // the 2025 protocols' subscriptions; 2026-07-28 clients use listen
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.check_subscribable(&request.uri)?;
        self.subscriptions.add(&request.uri)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(self.prompt_list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Ok(self
            .prompt(&request.name, request.arguments)
            .instrument(self.log.span())
            .await?
            .into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let context = request
            .context
            .and_then(|c| c.arguments)
            .unwrap_or_default();
        let info = self
            .complete_argument(
                &request.r#ref,
                &request.argument.name,
                &request.argument.value,
                &context,
            )
            .instrument(self.log.span())
            .await?;
        Ok(CompleteResult::new(info))
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log
            .set_level(request.level, self.options.log_feed.as_ref(), context.peer);
        Ok(())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        // Asked again on the next file call.
        self.set_session_workspace(None);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Called just before the acknowledgment: the announcer starts from this moment.
        self.visibility.listen_requested();
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| self.check_subscribable(uri).is_ok())
            .cloned()
            .collect();
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .resources_list_changed()
                .resource_subscriptions(uris)
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let accepted = context.accepted().clone();
        let sink = context.sink();
        let tools = async {
            if accepted.tools_list_changed == Some(true) {
                self.announce_to_subscription(sink).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let uris = accepted.resource_subscriptions.clone().unwrap_or_default();
        let list_changed = accepted.resources_list_changed == Some(true);
        let resources = async {
            if uris.is_empty() && !list_changed {
                return std::future::pending::<()>().await;
            }
            self.watch_resources(
                || uris.clone(),
                || list_changed,
                || false,
                || async { sink.notify_resource_list_changed().await.is_ok() },
                |uri| async move { sink.notify_resource_updated(uri).await.is_ok() },
            )
            .await;
        };
        tokio::select! {
            _ = tools => {}
            _ = resources => {}
            _ = context.cancelled() => {}
        }
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_list.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        if !self.tool_router.has_route(&name) {
            let message = match family_of(&name) {
                Some(family) => format!(
                    "tool '{name}' belongs to the {family} tools, which this server was started \
                     without (it offers {}); restart it with --tools {},{family}",
                    self.options.families.names(),
                    self.options.families.names().replace(", ", ",")
                ),
                None => {
                    format!(
                        "unknown tool '{name}': call tools/list to see the tools devlens offers"
                    )
                }
            };
            return Err(ErrorData::invalid_params(message, None));
        }
        if self.is_hidden(&name) {
            return Ok(visibility::hidden_tool_reply(&name).into());
        }
        if let Some(refusal) = self.scope_refusal(&name, &context) {
            return Ok(refusal.into());
        }
        let call = ToolCallContext::new(self, request, context);
        // What the tool logs goes to this session alone (see `logging`).
        let response = self
            .tool_router
            .call(call)
            .instrument(self.log.span())
            .await;
        // A call can change the state (a launch, enable_debug_tools, a click that hits a
        // breakpoint): announce it now rather than at the next poll.
        if self.visibility.dynamic() {
            self.refresh_tool_list(false).await;
        }
        let mut response = response?;
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

impl DevlensServer {
    /// A tool a read-only token may not call: over HTTP, the server's token check puts the
    /// token's scope in the request, and a read token may call only the tools annotated
    /// read-only (and hide_tools / show_tools, which change this session's list alone). Over
    /// stdio, or on a server that requires no token, there is no scope and nothing is refused.
    fn scope_refusal(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<rmcp::model::CallToolResult> {
        if token_scope(context)? == Scope::Write {
            return None;
        }
        let allowed = self
            .tool_list
            .iter()
            .find(|tool| tool.name == name)
            .is_some_and(read_token_may_call)
            || visibility::META_TOOLS.contains(&name)
            || DRY_RUN_FOR_READ_TOKENS.contains(&name);
        (!allowed).then(|| {
            reply::failure(format!(
                "{name} changes state, and the token this client connected with may only read \
                 (scope read). Ask the server's owner for a write token (`devlens token create \
                 --scope write`) and put it in this MCP server's Authorization header."
            ))
        })
    }
}

/// The scope of the token an HTTP request came with; `None` over stdio or on a server that
/// requires no token.
fn token_scope(context: &RequestContext<RoleServer>) -> Option<Scope> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<Scope>()
        .copied()
}

/// Tools a read token may call as a dry run only: they show the request and send nothing
/// (`call_endpoint` with a read token).
const DRY_RUN_FOR_READ_TOKENS: &[&str] = &["call_endpoint"];

/// Whether a read-only token may call `tool`: the tools annotated read-only, hide_tools /
/// show_tools (which change this session's list alone) and the dry runs of
/// [`DRY_RUN_FOR_READ_TOKENS`].
fn read_token_may_call(tool: &Tool) -> bool {
    visibility::META_TOOLS.contains(&tool.name.as_ref())
        || DRY_RUN_FOR_READ_TOKENS.contains(&tool.name.as_ref())
        || tool
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.read_only_hint)
            == Some(true)
}

/// The MCP Streamable HTTP service (mount it at `/mcp`): one [`DevlensServer`] per session, all
/// sharing `app`. Requests whose `Host` is not in `allowed_hosts` are refused (DNS rebinding);
/// cancelling `shutdown` ends every session.
pub fn streamable_http(
    app: Arc<App>,
    options: Arc<McpOptions>,
    allowed_hosts: Vec<String>,
    shutdown: tokio_util::sync::CancellationToken,
) -> StreamableHttpService<DevlensServer, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts)
        .with_cancellation_token(shutdown);
    StreamableHttpService::new(
        move || Ok(DevlensServer::new(Arc::clone(&app), Arc::clone(&options))),
        Default::default(),
        config,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_keep_only_what_differs_from_mcp_defaults() {
        let mut click = rmcp::model::ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true);
        lean_annotations(&mut click);
        assert_eq!(
            serde_json::to_value(&click).unwrap(),
            serde_json::json!({}),
            "every hint is MCP's default"
        );
        let mut read = rmcp::model::ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false);
        lean_annotations(&mut read);
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            serde_json::json!({"readOnlyHint": true, "openWorldHint": false})
        );
        let mut emulate = rmcp::model::ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(true)
            .open_world(false);
        lean_annotations(&mut emulate);
        assert_eq!(
            serde_json::to_value(&emulate).unwrap(),
            serde_json::json!({"destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
        );
    }

    #[test]
    fn resource_pages_follow_the_cursor_and_a_bad_cursor_says_what_to_pass() {
        let all: Vec<usize> = (0..250).collect();
        let (first, next) = page_of(all.clone(), None).unwrap();
        assert_eq!((first.len(), next.as_deref()), (100, Some("100")));
        let (last, next) = page_of(all.clone(), Some("200")).unwrap();
        assert_eq!((last.len(), next), (50, None));
        let err = page_of(all, Some("abc")).unwrap_err();
        assert!(err.message.contains("nextCursor"), "{}", err.message);
    }
}
