//! Debugger tools: breakpoints, stepping, the call stack, evaluation in a call frame, pausing on
//! exceptions — each pause answered with the page's pause context.
//!
//! Thin adapters over [`devlens_app::debugger`] (the browser tab's debugger). Every tool is listed
//! unless `--dynamic-tools` (see `visibility`), and either way a call made in the wrong state
//! answers with what to do first, e.g. "not paused: set a breakpoint with `breakpoint`, then
//! trigger it".

use rmcp::{handler::server::wrapper::Parameters, model::CallToolResult, tool, tool_router};

use devlens_app::debugger::{
    self as debugger, BreakpointArgs, DebugConnectionArgs, EvaluateInFrameArgs, ExecutionArgs,
    PauseOnExceptionsArgs, StepArgs, WaitForPauseArgs,
};

use crate::{
    DevlensServer,
    reply::{reply, structured},
};

#[tool_router(router = debugger_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Turn the JavaScript debugger on for the active tab (other debugger tools do so on first
    /// use); lists breakpoints, exception pausing, scripts and their original sources.
    #[tool(
        name = "enable_debug_tools",
        annotations(
            title = "Enable the debugger",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn enable_debug_tools(
        &self,
        Parameters(args): Parameters<DebugConnectionArgs>,
    ) -> CallToolResult {
        reply(debugger::enable(self.app(), args).await)
    }

    /// Set a breakpoint by script URL and 1-based line (optional condition), remove one by id, or
    /// list them. Then trigger the code (click_element, navigate, evaluate): the call returns where
    /// the page paused.
    #[tool(
        name = "breakpoint",
        annotations(
            title = "Breakpoints",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn breakpoint(&self, Parameters(args): Parameters<BreakpointArgs>) -> CallToolResult {
        reply(debugger::breakpoint(self.app(), args).await)
    }

    /// Resume a paused page, or pause a running one at its next JavaScript. Answers with the pause
    /// context when paused.
    #[tool(
        name = "execution",
        annotations(
            title = "Resume or pause",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn execution(&self, Parameters(args): Parameters<ExecutionArgs>) -> CallToolResult {
        reply(debugger::execution(self.app(), args).await)
    }

    /// Step over, into or out of the current statement of the paused page: answers with the new
    /// pause context, changed variables marked.
    #[tool(
        name = "step",
        annotations(
            title = "Step",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn step(&self, Parameters(args): Parameters<StepArgs>) -> CallToolResult {
        match debugger::step(self.app(), &args).await {
            Ok(outcome) if args.include_context == Some(false) => {
                let text = match &outcome.paused {
                    Some(ctx) => format!("{} → {}", outcome.action, ctx.location.to_text()),
                    None => outcome.to_text(),
                };
                structured(text, &outcome)
            }
            other => reply(other),
        }
    }

    /// The call stack of the paused page (up to 20 frames) with the frame indexes
    /// evaluate_in_frame takes.
    #[tool(
        name = "call_stack",
        annotations(
            title = "Call stack",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn call_stack(
        &self,
        Parameters(args): Parameters<DebugConnectionArgs>,
    ) -> CallToolResult {
        reply(debugger::call_stack(self.app(), args).await)
    }

    /// Evaluate JavaScript in a call frame of the paused page (default the innermost), seeing its
    /// locals and closures. For the global scope use evaluate.
    #[tool(
        name = "evaluate_in_frame",
        annotations(
            title = "Evaluate in a call frame",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn evaluate_in_frame(
        &self,
        Parameters(args): Parameters<EvaluateInFrameArgs>,
    ) -> CallToolResult {
        reply(debugger::evaluate_in_frame(self.app(), args).await)
    }

    /// Pause when the page throws. The action that threw returns with the pause context, the
    /// exception included.
    #[tool(
        name = "pause_on_exceptions",
        annotations(
            title = "Pause on exceptions",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn pause_on_exceptions(
        &self,
        Parameters(args): Parameters<PauseOnExceptionsArgs>,
    ) -> CallToolResult {
        reply(debugger::pause_on_exceptions(self.app(), args).await)
    }

    /// Wait until the page pauses (a breakpoint hit by a timer or request, an exception) and answer
    /// with the pause context, at once if already paused.
    #[tool(
        name = "wait_for_pause",
        annotations(
            title = "Wait for a pause",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn wait_for_pause(
        &self,
        Parameters(args): Parameters<WaitForPauseArgs>,
    ) -> CallToolResult {
        reply(debugger::wait_for_pause(self.app(), args).await)
    }
}
