//! Debugger tools: breakpoints, stepping, the call stack, evaluation in a call frame, pausing on
//! exceptions — each pause answered with the page's pause context.
//!
//! Thin adapters over the `debugger` methods of [`devlens_browser::Tab`]. Every tool is listed
//! unless `--dynamic-tools` (see `visibility`), and either way a call made in the wrong state
//! answers with what to do first, e.g. "not paused: set a breakpoint with `breakpoint`, then
//! trigger it".

use std::time::Duration;

use rmcp::{
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::CallToolResult,
    schemars::{self, JsonSchema},
    tool, tool_router,
};
use serde::Deserialize;

use devlens_browser::{
    BreakpointList, BreakpointRequest, BreakpointSet, CallStack, DebuggerStatus, ExceptionPause,
    ExecutionOutcome, FrameEvaluation, PauseContext, StepDirection, Tab,
};

use crate::{
    DevlensServer,
    reply::{failure, respond, structured, textual},
};

textual!(
    BreakpointList,
    BreakpointSet,
    CallStack,
    DebuggerStatus,
    ExecutionOutcome,
    FrameEvaluation,
    PauseContext,
);

fn connection(id: &Option<String>) -> Option<&str> {
    id.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DebugConnectionArgs {
    /// The connection to use (from chrome_list_connections). Omit for the active one.
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BreakpointAction {
    Set,
    Remove,
    List,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointArgs {
    /// set: needs url and lineNumber; remove: needs breakpointId; list: nothing.
    pub action: BreakpointAction,
    /// set: the script's full URL or its end (`app.js`, `/js/app.js`), or an original source
    /// of a source-mapped bundle (`src/cart.ts`); `*` matches anything.
    #[serde(default)]
    pub url: Option<String>,
    /// set: 1-based line.
    #[serde(default)]
    pub line_number: Option<u32>,
    /// set: 1-based column (default: the first statement on the line).
    #[serde(default)]
    pub column_number: Option<u32>,
    /// set: pause only when this JavaScript expression is truthy.
    #[serde(default)]
    pub condition: Option<String>,
    /// remove: the id `set` or `list` gave.
    #[serde(default)]
    pub breakpoint_id: Option<String>,
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionAction {
    /// Continue a paused page.
    Resume,
    /// Stop at the next JavaScript the page runs.
    Pause,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionArgs {
    pub action: ExecutionAction,
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepArgs {
    /// over: next statement; into: into the call on this line; out: back to the caller.
    pub direction: StepDirection,
    /// Answer with the full pause context (source, stack, locals, console). Default true;
    /// false answers with the new location only.
    #[serde(default)]
    pub include_context: Option<bool>,
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateInFrameArgs {
    /// JavaScript evaluated in the call frame: it sees the frame's locals and closures.
    pub expression: String,
    /// The frame (0 = where execution stopped; call_stack lists them). Default 0.
    #[serde(default)]
    pub frame_index: Option<usize>,
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PauseOnExceptionsArgs {
    /// none, uncaught (exceptions nothing catches) or all (caught ones too).
    pub state: ExceptionPause,
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WaitForPauseArgs {
    /// Give up after this many milliseconds (default 10000, at most 60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub connection_id: Option<String>,
}

impl DevlensServer {
    async fn debug_tab(&self, connection_id: &Option<String>) -> Result<Tab, CallToolResult> {
        self.app()
            .browser()
            .tab(connection(connection_id))
            .await
            .map_err(failure)
    }
}

macro_rules! on_debug_tab {
    ($self:ident, $conn:expr, |$tab:ident| $call:expr) => {
        match $self.debug_tab($conn).await {
            Ok($tab) => respond($call),
            Err(reply) => reply,
        }
    };
}

#[tool_router(router = debugger_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Turn the JavaScript debugger on for the active tab (other debugger tools do it on first
    /// use): says the breakpoints, exception pausing, the scripts loaded and their original
    /// sources (source maps).
    #[tool(
        name = "enable_debug_tools",
        annotations(title = "Enable the debugger", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<DebuggerStatus>()
    )]
    async fn enable_debug_tools(
        &self,
        Parameters(args): Parameters<DebugConnectionArgs>,
    ) -> CallToolResult {
        on_debug_tab!(self, &args.connection_id, |tab| tab.enable_debugger().await)
    }

    /// Breakpoints: set one by script URL (or its end, e.g. app.js; with source maps, the
    /// original file, e.g. src/cart.ts) and 1-based line, with an optional condition; remove
    /// one by id; list them. Then trigger the code (click_element,
    /// navigate, evaluate): the call returns with where the page paused.
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
        let tab = match self.debug_tab(&args.connection_id).await {
            Ok(tab) => tab,
            Err(reply) => return reply,
        };
        match args.action {
            BreakpointAction::Set => {
                let (Some(url), Some(line)) =
                    (args.url.filter(|u| !u.trim().is_empty()), args.line_number)
                else {
                    return failure(
                        "action `set` needs url (the script's URL or its end, e.g. app.js) and \
                         lineNumber (1-based)",
                    );
                };
                let request = BreakpointRequest {
                    url,
                    line,
                    column: args.column_number,
                    condition: args.condition,
                };
                respond(tab.set_breakpoint(&request).await)
            }
            BreakpointAction::Remove => match args.breakpoint_id.filter(|b| !b.trim().is_empty()) {
                Some(id) => respond(tab.remove_breakpoint(&id).await),
                None => failure(
                    "action `remove` needs breakpointId (breakpoint action `list` shows the ids)",
                ),
            },
            BreakpointAction::List => respond(Ok(tab.list_breakpoints())),
        }
    }

    /// Resume a paused page, or pause a running one at the next JavaScript it runs. Answers
    /// with the pause context when the page is (still or again) paused.
    #[tool(
        name = "execution",
        annotations(title = "Resume or pause", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<ExecutionOutcome>()
    )]
    async fn execution(&self, Parameters(args): Parameters<ExecutionArgs>) -> CallToolResult {
        on_debug_tab!(self, &args.connection_id, |tab| match args.action {
            ExecutionAction::Resume => tab.resume().await,
            ExecutionAction::Pause => tab.pause().await,
        })
    }

    /// Step over, into or out of the current statement of a paused page. Answers with the new
    /// pause context; variables the step changed are marked.
    #[tool(
        name = "step",
        annotations(title = "Step", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<ExecutionOutcome>()
    )]
    async fn step(&self, Parameters(args): Parameters<StepArgs>) -> CallToolResult {
        let tab = match self.debug_tab(&args.connection_id).await {
            Ok(tab) => tab,
            Err(reply) => return reply,
        };
        match tab.step(args.direction).await {
            Ok(outcome) if args.include_context == Some(false) => {
                let text = match &outcome.paused {
                    Some(ctx) => format!("{} → {}", outcome.action, ctx.location.to_text()),
                    None => outcome.to_text(),
                };
                structured(text, &outcome)
            }
            other => respond(other),
        }
    }

    /// The call stack of the paused page (up to 20 frames) with the frame indexes
    /// evaluate_in_frame takes.
    #[tool(
        name = "call_stack",
        annotations(title = "Call stack", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<CallStack>()
    )]
    async fn call_stack(
        &self,
        Parameters(args): Parameters<DebugConnectionArgs>,
    ) -> CallToolResult {
        on_debug_tab!(self, &args.connection_id, |tab| tab.call_stack().await)
    }

    /// Evaluate JavaScript in a call frame of the paused page (default the innermost): it sees
    /// that frame's local variables and closures. For the page's global scope use evaluate.
    #[tool(
        name = "evaluate_in_frame",
        annotations(title = "Evaluate in a call frame", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false),
        output_schema = schema_for_output::<FrameEvaluation>()
    )]
    async fn evaluate_in_frame(
        &self,
        Parameters(args): Parameters<EvaluateInFrameArgs>,
    ) -> CallToolResult {
        on_debug_tab!(self, &args.connection_id, |tab| tab
            .evaluate_in_frame(args.frame_index.unwrap_or(0), &args.expression)
            .await)
    }

    /// Pause when the page throws: none, uncaught, or all exceptions. The action that threw
    /// returns with the pause context, the exception included.
    #[tool(
        name = "pause_on_exceptions",
        annotations(title = "Pause on exceptions", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<DebuggerStatus>()
    )]
    async fn pause_on_exceptions(
        &self,
        Parameters(args): Parameters<PauseOnExceptionsArgs>,
    ) -> CallToolResult {
        on_debug_tab!(self, &args.connection_id, |tab| tab
            .pause_on_exceptions(args.state)
            .await)
    }

    /// Wait until the page pauses (a breakpoint hit by a timer or a request, an exception)
    /// and answer with the pause context; already paused: answers at once.
    #[tool(
        name = "wait_for_pause",
        annotations(title = "Wait for a pause", read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<PauseContext>()
    )]
    async fn wait_for_pause(
        &self,
        Parameters(args): Parameters<WaitForPauseArgs>,
    ) -> CallToolResult {
        on_debug_tab!(self, &args.connection_id, |tab| tab
            .wait_for_pause(args.timeout_ms.map(Duration::from_millis))
            .await)
    }
}
