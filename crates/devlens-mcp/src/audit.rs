//! Audit tools, part of the browser family: accessibility (axe-core), performance (vitals,
//! trace, CPU profile, memory), an element's CSS cascade and the app's framework state. Thin
//! adapters over `devlens_app::audit`.

use rmcp::{handler::server::wrapper::Parameters, model::CallToolResult, tool, tool_router};

use devlens_app::audit::{self, AccessibilityArgs, AppStateArgs, CssArgs, PerformanceArgs};

use crate::{DevlensServer, reply::reply};

#[tool_router(router = audit_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// axe-core accessibility audit of the page and its frames (or one element: scope): violations
    /// by impact, each with elements' selectors, refs, HTML and how to fix them.
    #[tool(
        name = "audit_accessibility",
        annotations(
            title = "Accessibility audit",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn audit_accessibility(
        &self,
        Parameters(args): Parameters<AccessibilityArgs>,
    ) -> CallToolResult {
        reply(audit::accessibility(self.app(), args).await)
    }

    /// Page performance. vitals: LCP, CLS, INP, TBT and what causes them. trace: a reload (or start
    /// … stop around your actions) as long tasks, render-blocking and slow requests, layout shifts.
    /// profile: top functions by CPU time. memory: heap, DOM nodes, listeners. Emulated throttling
    /// applies.
    #[tool(
        name = "audit_performance",
        annotations(
            title = "Performance",
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn audit_performance(
        &self,
        Parameters(args): Parameters<PerformanceArgs>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> CallToolResult {
        let report = async {
            let ws = self.workspace(&context).await?;
            audit::performance(self.app(), &ws, args).await
        };
        reply(report.await)
    }

    /// The app's state: frameworks and versions (default); the React/Vue component tree around an
    /// element; a component's props, state, hooks; Redux, Zustand, Pinia stores; globals the app
    /// added. Paged, secrets redacted.
    #[tool(
        name = "inspect_app_state",
        annotations(title = "App state", read_only_hint = true, open_world_hint = false)
    )]
    async fn inspect_app_state(
        &self,
        Parameters(args): Parameters<AppStateArgs>,
    ) -> CallToolResult {
        reply(audit::app_state(self.app(), args).await)
    }

    /// Why an element looks as it does: computed values and, per property, the competing
    /// declarations, which won and why (specificity, order, !important, inline, inherited,
    /// invalid), with source-mapped file:line.
    #[tool(
        name = "inspect_css",
        annotations(title = "CSS cascade", read_only_hint = true, open_world_hint = false)
    )]
    async fn inspect_css(&self, Parameters(args): Parameters<CssArgs>) -> CallToolResult {
        reply(audit::css(self.app(), args).await)
    }
}
