//! The debugger family's requests — breakpoints, stepping, the call stack, evaluation in a
//! call frame, pausing on exceptions — and what they run on the tab's debugger. A call made in
//! the wrong state answers with what to do first (e.g. "not paused: set a breakpoint with
//! `breakpoint`, then trigger it").

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use devlens_browser::{
    BreakpointList, BreakpointRequest, BreakpointSet, CallStack, DebuggerStatus, ExceptionPause,
    ExecutionOutcome, FrameEvaluation, PauseContext, StepDirection, Tab,
};

use crate::{App, AppError};

async fn debug_tab(app: &App, connection_id: &Option<String>) -> Result<Tab, AppError> {
    let id = connection_id
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    Ok(app.browser().tab(id).await?)
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DebugConnectionArgs {
    // Omit for the active one (chrome_list_connections says so, once for every page tool).
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
    // What each needs is on its arguments (set: url, lineNumber; remove: breakpointId).
    pub action: BreakpointAction,
    /// set: the script's URL or its end (`app.js`; `*` matches any), or a source-mapped original
    /// (`src/cart.ts`).
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
    // Continue a paused page. (The execution tool's description says what each does.)
    Resume,
    // Stop at the next JavaScript the page runs.
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
    /// The full pause context (default true); false: the new location only.
    #[serde(default)]
    pub include_context: Option<bool>,
    #[serde(default)]
    pub connection_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateInFrameArgs {
    pub expression: String,
    /// 0 (default): where execution stopped; call_stack lists the frames.
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
    /// Timeout in ms (default 10000, at most 60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub connection_id: Option<String>,
}

/// `enable_debug_tools`.
pub async fn enable(app: &App, args: DebugConnectionArgs) -> Result<DebuggerStatus, AppError> {
    Ok(debug_tab(app, &args.connection_id)
        .await?
        .enable_debugger()
        .await?)
}

/// What a `breakpoint` call answers. Serialized as the inner value.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum BreakpointOutcome {
    Set(BreakpointSet),
    /// Removed, or listed: the breakpoints now.
    List(BreakpointList),
}

impl devlens_core::Report for BreakpointOutcome {
    fn to_text(&self) -> String {
        match self {
            Self::Set(set) => set.to_text(),
            Self::List(list) => list.to_text(),
        }
    }
}

/// `breakpoint`: set, remove or list.
pub async fn breakpoint(app: &App, args: BreakpointArgs) -> Result<BreakpointOutcome, AppError> {
    let tab = debug_tab(app, &args.connection_id).await?;
    match args.action {
        BreakpointAction::Set => {
            let (Some(url), Some(line)) =
                (args.url.filter(|u| !u.trim().is_empty()), args.line_number)
            else {
                return Err(AppError::invalid(
                    "action `set` needs url (the script's URL or its end, e.g. app.js) and \
                     lineNumber (1-based)",
                ));
            };
            let request = BreakpointRequest {
                url,
                line,
                column: args.column_number,
                condition: args.condition,
            };
            Ok(BreakpointOutcome::Set(tab.set_breakpoint(&request).await?))
        }
        BreakpointAction::Remove => match args.breakpoint_id.filter(|b| !b.trim().is_empty()) {
            Some(id) => Ok(BreakpointOutcome::List(tab.remove_breakpoint(&id).await?)),
            None => Err(AppError::invalid(
                "action `remove` needs breakpointId (breakpoint action `list` shows the ids)",
            )),
        },
        BreakpointAction::List => Ok(BreakpointOutcome::List(tab.list_breakpoints())),
    }
}

/// `execution`: resume or pause.
pub async fn execution(app: &App, args: ExecutionArgs) -> Result<ExecutionOutcome, AppError> {
    let tab = debug_tab(app, &args.connection_id).await?;
    Ok(match args.action {
        ExecutionAction::Resume => tab.resume().await?,
        ExecutionAction::Pause => tab.pause().await?,
    })
}

/// `step`.
pub async fn step(app: &App, args: &StepArgs) -> Result<ExecutionOutcome, AppError> {
    let tab = debug_tab(app, &args.connection_id).await?;
    Ok(tab.step(args.direction).await?)
}

/// `call_stack`.
pub async fn call_stack(app: &App, args: DebugConnectionArgs) -> Result<CallStack, AppError> {
    Ok(debug_tab(app, &args.connection_id)
        .await?
        .call_stack()
        .await?)
}

/// `evaluate_in_frame`.
pub async fn evaluate_in_frame(
    app: &App,
    args: EvaluateInFrameArgs,
) -> Result<FrameEvaluation, AppError> {
    let tab = debug_tab(app, &args.connection_id).await?;
    Ok(tab
        .evaluate_in_frame(args.frame_index.unwrap_or(0), &args.expression)
        .await?)
}

/// `pause_on_exceptions`.
pub async fn pause_on_exceptions(
    app: &App,
    args: PauseOnExceptionsArgs,
) -> Result<DebuggerStatus, AppError> {
    let tab = debug_tab(app, &args.connection_id).await?;
    Ok(tab.pause_on_exceptions(args.state).await?)
}

/// `wait_for_pause`.
pub async fn wait_for_pause(app: &App, args: WaitForPauseArgs) -> Result<PauseContext, AppError> {
    let tab = debug_tab(app, &args.connection_id).await?;
    Ok(tab
        .wait_for_pause(args.timeout_ms.map(Duration::from_millis))
        .await?)
}
