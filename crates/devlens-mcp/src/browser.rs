//! Browser tools: drive a real Chrome over the DevTools Protocol — connections, tabs, page view,
//! actions, console, network, screenshots, live code, emulation.
//!
//! Thin adapters over [`devlens_app::browser`]: each handler passes its arguments (the
//! application layer's own types) to one call there, and turns the result into compact text plus
//! `structuredContent` (screenshots as MCP image content). Every tool that acts on a page takes
//! an optional `connectionId`; without it the active connection and its active tab are used.

use rmcp::{handler::server::wrapper::Parameters, model::CallToolResult, tool, tool_router};

use devlens_app::browser::{
    self as browser, ChromeArgs, ClickArgs, ConnectionArgs, ConsoleArgs, ElementArgs, EmulateArgs,
    EvaluateArgs, FillArgs, HandleDialogArgs, InjectCssArgs, NavigateArgs, NetworkArgs,
    NetworkRequestArgs, PressKeyArgs, QueryElementsArgs, RemoveCssArgs, ScreenshotArgs, ScrollArgs,
    SelectOptionArgs, SnapshotArgs, TargetArgs, TypeTextArgs, WaitForArgs, WithScreenshot,
};
use devlens_app::{AppError, Report};

use crate::{
    DevlensServer,
    reply::{failure, image_block, reply, structured, with_image},
};

/// As [`reply`], with the screenshot taken afterwards as an image block (or a note saying why
/// there is none).
fn respond_shown<T: Report>(result: Result<WithScreenshot<T>, AppError>) -> CallToolResult {
    match result {
        Ok(shown) => with_image(
            structured(shown.result.to_text(), &shown.result),
            shown.screenshot,
        ),
        Err(e) => failure(e),
    }
}

#[tool_router(router = browser_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// launch: a browser devlens owns (headless by default; closed when devlens exits); connect: a
    /// running Chrome started with --remote-debugging-port. The new connection becomes active.
    #[tool(
        name = "chrome",
        annotations(
            title = "Launch or connect Chrome",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn chrome(&self, Parameters(args): Parameters<ChromeArgs>) -> CallToolResult {
        reply(browser::chrome(self.app(), args).await)
    }

    /// The browser connections: id, launched or connected, endpoint, tabs, which is active.
    /// Page tools act on the active one; give connectionId for another.
    #[tool(
        name = "chrome_list_connections",
        annotations(
            title = "List browser connections",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn chrome_list_connections(&self) -> CallToolResult {
        reply(Ok::<_, AppError>(browser::connections(self.app())))
    }

    /// Close a connection (default: the active one). A browser devlens launched is closed; a
    /// browser devlens connected to keeps running.
    #[tool(
        name = "chrome_disconnect",
        annotations(
            title = "Disconnect a browser",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn chrome_disconnect(
        &self,
        Parameters(args): Parameters<ConnectionArgs>,
    ) -> CallToolResult {
        reply(browser::disconnect(self.app(), args).await)
    }

    /// Tabs: list, switch (later calls act on it), new (optionally loading url; it becomes active)
    /// or close (default: the active one). Name a tab by index, title, url or id.
    #[tool(
        name = "target",
        annotations(
            title = "Browser tabs",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn target(&self, Parameters(args): Parameters<TargetArgs>) -> CallToolResult {
        reply(browser::target(self.app(), args).await)
    }

    /// Load a URL, or go back, forward or reload. Answers with the final URL, HTTP status, title,
    /// and the load's console errors and failed requests.
    #[tool(
        name = "navigate",
        annotations(
            title = "Navigate",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn navigate(&self, Parameters(args): Parameters<NavigateArgs>) -> CallToolResult {
        reply(browser::navigate(self.app(), args).await)
    }

    /// Find elements by CSS selector: compact summaries (tag, id, classes, role, text, key
    /// attributes, visibility, box). Searches open shadow roots and same-origin iframes if the page
    /// has no match.
    #[tool(
        name = "query_elements",
        annotations(
            title = "Query elements",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn query_elements(
        &self,
        Parameters(args): Parameters<QueryElementsArgs>,
    ) -> CallToolResult {
        reply(browser::query_elements(self.app(), args).await)
    }

    /// The page's accessibility tree as compact text; interactive elements get refs (e12) that
    /// the action tools accept. Paged.
    #[tool(
        name = "snapshot",
        annotations(
            title = "Page snapshot",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn snapshot(&self, Parameters(args): Parameters<SnapshotArgs>) -> CallToolResult {
        reply(browser::snapshot(self.app(), args).await)
    }

    /// Click an element (ref or CSS selector) with real mouse events; answers with what changed:
    /// navigation, console errors, failed requests, a dialog, new tabs.
    #[tool(
        name = "click_element",
        annotations(
            title = "Click",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn click_element(&self, Parameters(args): Parameters<ClickArgs>) -> CallToolResult {
        reply(browser::click(self.app(), args).await)
    }

    /// Replace the value of a text field, textarea, contenteditable or select, as typing would.
    #[tool(
        name = "fill_element",
        annotations(
            title = "Fill a field",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn fill_element(&self, Parameters(args): Parameters<FillArgs>) -> CallToolResult {
        reply(browser::fill(self.app(), args).await)
    }

    /// Type text key by key into the focused element (or element), optionally pressing Enter.
    #[tool(
        name = "type_text",
        annotations(
            title = "Type text",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn type_text(&self, Parameters(args): Parameters<TypeTextArgs>) -> CallToolResult {
        reply(browser::type_text(self.app(), args).await)
    }

    /// Press a key or combination (Enter, Escape, ArrowDown, Control+A, Shift+Tab).
    #[tool(
        name = "press_key",
        annotations(
            title = "Press a key",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn press_key(&self, Parameters(args): Parameters<PressKeyArgs>) -> CallToolResult {
        reply(browser::press_key(self.app(), args).await)
    }

    /// Move the mouse over an element (hover styles, menus, tooltips).
    #[tool(
        name = "hover",
        annotations(
            title = "Hover",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn hover(&self, Parameters(args): Parameters<ElementArgs>) -> CallToolResult {
        reply(browser::hover(self.app(), args).await)
    }

    /// Select options of a <select> by value or visible label.
    #[tool(
        name = "select_option",
        annotations(
            title = "Select an option",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn select_option(
        &self,
        Parameters(args): Parameters<SelectOptionArgs>,
    ) -> CallToolResult {
        reply(browser::select_option(self.app(), args).await)
    }

    /// Scroll an element into view, or the page (or a scrollable element) in a direction.
    #[tool(
        name = "scroll",
        annotations(
            title = "Scroll",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn scroll(&self, Parameters(args): Parameters<ScrollArgs>) -> CallToolResult {
        reply(browser::scroll(self.app(), args).await)
    }

    /// Wait until text appears or disappears, a selector reaches a state, the URL contains
    /// something, or the network is idle (exactly one).
    #[tool(
        name = "wait_for",
        annotations(
            title = "Wait for",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn wait_for(&self, Parameters(args): Parameters<WaitForArgs>) -> CallToolResult {
        reply(browser::wait_for(self.app(), args).await)
    }

    /// Accept or dismiss the open JavaScript dialog (alert, confirm, prompt, beforeunload).
    #[tool(
        name = "handle_dialog",
        annotations(
            title = "Handle a dialog",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn handle_dialog(
        &self,
        Parameters(args): Parameters<HandleDialogArgs>,
    ) -> CallToolResult {
        reply(browser::handle_dialog(self.app(), args).await)
    }

    /// The tab's console: messages, errors with their stack, uncaught exceptions.
    #[tool(
        name = "get_console_logs",
        annotations(
            title = "Console logs",
            read_only_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn get_console_logs(&self, Parameters(args): Parameters<ConsoleArgs>) -> CallToolResult {
        reply(browser::console_logs(self.app(), args).await)
    }

    /// The tab's requests (current page): id, method, status, type, URL, duration, size; paged.
    /// Static resources that loaded fine only with includeStatic.
    #[tool(
        name = "list_network_requests",
        annotations(
            title = "Network requests",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_network_requests(
        &self,
        Parameters(args): Parameters<NetworkArgs>,
    ) -> CallToolResult {
        reply(browser::network_requests(self.app(), args).await)
    }

    /// One request: headers, request body, response body (bounded by maxBodyBytes, or saved to
    /// a file with saveResponseBodyTo).
    #[tool(
        name = "get_network_request",
        annotations(
            title = "Network request details",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_network_request(
        &self,
        Parameters(args): Parameters<NetworkRequestArgs>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> CallToolResult {
        let details = async {
            let ws = self.workspace(&context).await?;
            browser::network_request(self.app(), &ws, args).await
        };
        reply(details.await)
    }

    /// Capture the viewport, the full page or one element as PNG (default) or JPEG: the image, or
    /// with path, saved there.
    #[tool(
        name = "screenshot",
        annotations(
            title = "Screenshot",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn screenshot(
        &self,
        Parameters(args): Parameters<ScreenshotArgs>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> CallToolResult {
        let shot = async {
            let ws = self.workspace(&context).await?;
            browser::screenshot(self.app(), &ws, args).await
        };
        match shot.await {
            Ok(shot) => {
                let mut result = structured(shot.to_text(), &shot);
                if shot.path.is_none() {
                    result.content.push(image_block(&shot));
                }
                result
            }
            Err(e) => failure(e),
        }
    }

    /// Run JavaScript in the page like the DevTools console: the last expression's value as JSON,
    /// the console output it produced, a thrown error with its stack.
    #[tool(
        name = "evaluate",
        annotations(
            title = "Evaluate JavaScript",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn evaluate(&self, Parameters(args): Parameters<EvaluateArgs>) -> CallToolResult {
        respond_shown(browser::evaluate(self.app(), args).await)
    }

    /// Add a stylesheet to the page and say how many elements its rules match. remove_css takes
    /// it away again.
    #[tool(
        name = "inject_css",
        annotations(
            title = "Inject CSS",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn inject_css(&self, Parameters(args): Parameters<InjectCssArgs>) -> CallToolResult {
        respond_shown(browser::inject_css(self.app(), args).await)
    }

    /// Remove a stylesheet inject_css added.
    #[tool(
        name = "remove_css",
        annotations(
            title = "Remove injected CSS",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn remove_css(&self, Parameters(args): Parameters<RemoveCssArgs>) -> CallToolResult {
        respond_shown(browser::remove_css(self.app(), args).await)
    }

    /// Emulate a device: viewport, prefers-color-scheme, CPU slowdown, network throttling. Settings
    /// stay on the tab until changed or reset; no arguments: shows what is in effect.
    #[tool(
        name = "emulate",
        annotations(
            title = "Emulate a device",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn emulate(&self, Parameters(args): Parameters<EmulateArgs>) -> CallToolResult {
        reply(browser::emulate(self.app(), args).await)
    }
}
