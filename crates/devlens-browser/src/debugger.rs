//! A real JavaScript debugger on a tab: breakpoints, stepping, the call stack, locals, evaluation
//! in a call frame and pausing on exceptions — each pause answered with a [`PauseContext`].
//!
//! The Debugger domain is enabled on first use (it costs the page a little: every script is
//! reported). A listener task then follows `Debugger.paused` / `Debugger.resumed` and sets the
//! tab's [`Blocker::Paused`], so an action that runs into a breakpoint (a click, an evaluate)
//! returns at once with the pause context instead of waiting for a resume, while calls that do
//! not need the page's main thread keep answering.
//!
//! A pause is only useful with its surroundings, so every pause and every step answers with the
//! same compact [`PauseContext`]: where (file:line:col, function), the source lines around it,
//! the call stack, the local variables (marked when a step changed them) and the last console
//! messages. Its size is bounded whatever the page does.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Weak};
use std::time::Duration;

use chromiumoxide::cdp::js_protocol::debugger::{
    EventPaused, EventResumed, EventScriptParsed, PausedReason,
};
use futures::StreamExt;
use futures::stream::{BoxStream, select_all};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::cdp::Raw;
use crate::console::{ConsoleEntry, ConsoleLevel, format_value};
use crate::error::{BrowserError, Result};
use crate::sourcemap::{self, MapState, ScriptMap, ScriptMaps};
use crate::targets::{Blocker, Tab, TabState};
use crate::text::{collapse, short_url, truncate};

/// How long a step may take to pause again before it counts as "ran to the end".
const STEP_WAIT: Duration = Duration::from_secs(3);
/// After a resume, how long to watch for the next pause (another breakpoint right away).
const RESUME_WATCH: Duration = Duration::from_millis(400);
/// How long `pause` waits for the page to run some JavaScript and stop.
const PAUSE_WAIT: Duration = Duration::from_secs(2);
/// Default and longest wait for a pause.
pub const DEFAULT_PAUSE_WAIT: Duration = Duration::from_secs(10);
pub const MAX_PAUSE_WAIT: Duration = Duration::from_secs(60);
/// Bounds of a pause context.
const CONTEXT_FRAMES: usize = 5;
const STACK_FRAMES: usize = 20;
const CONTEXT_LOCALS: usize = 10;
const CONTEXT_CONSOLE: usize = 3;
const SOURCE_RADIUS: u32 = 2;
const SOURCE_LINE_CHARS: usize = 160;
const VALUE_CHARS: usize = 80;
const EVAL_VALUE_CHARS: usize = 2000;
/// Script sources kept for excerpts.
const SOURCE_CACHE: usize = 16;
/// Script URLs remembered (scriptParsed), for frames without a URL and for suggestions.
const SCRIPT_URLS: usize = 2000;
/// Steps taken through bundle code without a mapping before showing where it stopped anyway.
const GLUE_STEPS: usize = 10;
/// How long an instrumentation pause waits for its script's `scriptParsed` to be handled.
const UNKNOWN_SCRIPT_WAIT: Duration = Duration::from_secs(1);
/// How long setting a breakpoint or showing a pause waits for source maps still loading.
const MAP_WAIT: Duration = Duration::from_secs(3);

/// What a tab's debugger knows; lives in the tab's state next to the console and network log.
#[derive(Debug, Default)]
pub(crate) struct DebuggerState {
    enabled: bool,
    listener: Option<JoinHandle<()>>,
    breakpoints: Vec<BreakpointInfo>,
    /// Chrome's breakpoint ids (long, with the URL regex in them) by our short ones; one of
    /// ours set in an original source can be several of Chrome's (one per generated place).
    chrome_ids: HashMap<String, Vec<String>>,
    /// Breakpoints whose URL matched no script nor original source yet: bound in original
    /// sources when a source map that has them loads.
    pending: Vec<(String, BreakpointRequest)>,
    /// While breakpoints are pending: Chrome's id of the instrumentation breakpoint that stops
    /// each script with a source map before it runs, so they bind before its first line.
    instrumentation: Option<String>,
    /// One binding of pending breakpoints at a time (a map load and an instrumentation pause
    /// can both try); the second waits until the first is done.
    binding: Arc<tokio::sync::Mutex<()>>,
    maps: ScriptMaps,
    next_breakpoint: u64,
    /// The `Debugger.paused` parameters of the current pause.
    paused: Option<Arc<Value>>,
    /// `Debugger.resumed` events still to come for resumes devlens made (and already
    /// recorded). Each event type has its own stream, so a resume can be read after the pause
    /// that followed it; those must not clear the new pause.
    resumes_expected: u32,
    /// Counts pauses, so a waiter can tell a new pause from the one it saw.
    pause_seq: u64,
    exceptions: ExceptionPause,
    /// Locals of the last context shown: which function, and name → value.
    last_locals: Option<(String, HashMap<String, String>)>,
    sources: Vec<(String, Arc<str>)>,
    scripts: HashMap<String, String>,
}

impl Drop for DebuggerState {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
    }
}

/// The blocker a pause sets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PauseInfo {
    pub reason: String,
    pub seq: u64,
}

/// When the page stops on a thrown exception.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ExceptionPause {
    /// Never.
    #[default]
    None,
    /// Only on exceptions nothing catches.
    Uncaught,
    /// On every thrown exception, caught or not.
    All,
}

impl ExceptionPause {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Uncaught => "uncaught",
            Self::All => "all",
        }
    }
}

/// Which way to step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepDirection {
    /// To the next statement in this function (calls run without stopping).
    Over,
    /// Into the function called on this line.
    Into,
    /// To the caller, after this function returns.
    Out,
}

impl StepDirection {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Over => "over",
            Self::Into => "into",
            Self::Out => "out",
        }
    }

    fn method(self) -> &'static str {
        match self {
            Self::Over => "Debugger.stepOver",
            Self::Into => "Debugger.stepInto",
            Self::Out => "Debugger.stepOut",
        }
    }
}

/// Where to put a breakpoint.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointRequest {
    /// A full URL, or the end of one (`app.js`, `/js/app.js`); `*` matches anything. An
    /// original source of a source-mapped bundle works too (`src/cart.ts`).
    pub url: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (default: the first statement on the line).
    #[serde(default)]
    pub column: Option<u32>,
    /// A JavaScript expression; the breakpoint only pauses when it is truthy.
    #[serde(default)]
    pub condition: Option<String>,
}

/// A breakpoint devlens set.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointInfo {
    pub id: String,
    /// What the breakpoint was asked for: the URL or its pattern.
    pub url: String,
    /// 1-based.
    pub line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Where it landed (`url:line:col`, 1-based; in the original source for a source-mapped
    /// one); empty until a script matches.
    pub locations: Vec<String>,
    /// For a breakpoint in an original source: where it landed in the generated scripts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub generated: Vec<String>,
}

impl BreakpointInfo {
    pub fn to_line(&self) -> String {
        let mut out = format!("{} {}:{}", self.id, self.url, self.line);
        if let Some(c) = self.column {
            let _ = write!(out, ":{c}");
        }
        if let Some(c) = &self.condition {
            let _ = write!(out, " if {}", truncate(c, 80));
        }
        if self.locations.is_empty() {
            out.push_str(" (not bound: no loaded script matches yet)");
        } else {
            let _ = write!(out, " → {}", self.locations.join(", "));
        }
        if !self.generated.is_empty() {
            let _ = write!(out, " (generated {})", self.generated.join(", "));
        }
        out
    }
}

/// A breakpoint just set, with what to do next.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointSet {
    pub breakpoint: BreakpointInfo,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl BreakpointSet {
    pub fn to_text(&self) -> String {
        let mut out = format!("breakpoint set: {}", self.breakpoint.to_line());
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

/// The breakpoints of a tab.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointList {
    pub breakpoints: Vec<BreakpointInfo>,
    pub pause_on_exceptions: ExceptionPause,
    pub paused: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<String>,
}

impl BreakpointList {
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(id) = &self.removed {
            let _ = writeln!(out, "removed breakpoint {id}");
        }
        if self.breakpoints.is_empty() {
            out.push_str("no breakpoints");
        } else {
            let _ = write!(out, "{} breakpoint(s):", self.breakpoints.len());
            for b in &self.breakpoints {
                let _ = write!(out, "\n  {}", b.to_line());
            }
        }
        let _ = write!(
            out,
            "\npause on exceptions: {}; page {}",
            self.pause_on_exceptions.as_str(),
            if self.paused { "paused" } else { "running" }
        );
        out
    }
}

/// A place in the source.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceLocation {
    /// Same-origin URLs shortened to their path.
    pub url: String,
    /// 1-based.
    pub line: u32,
    /// 1-based.
    pub column: u32,
    /// The function, `(anonymous)` when it has no name.
    pub function: String,
    /// Where this is in the script Chrome runs, when a source map led to the original source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated: Option<GeneratedLocation>,
}

/// A place in a generated (bundled) script.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GeneratedLocation {
    pub url: String,
    /// 1-based.
    pub line: u32,
    /// 1-based.
    pub column: u32,
}

impl SourceLocation {
    pub fn to_text(&self) -> String {
        format!(
            "{} ({}:{}:{})",
            self.function, self.url, self.line, self.column
        )
    }

    /// With the generated place, for the one location a pause names first.
    pub fn to_text_with_generated(&self) -> String {
        let mut out = self.to_text();
        if let Some(g) = &self.generated {
            out.pop();
            let _ = write!(out, "; generated {}:{}:{})", g.url, g.line, g.column);
        }
        out
    }
}

/// One line of a source excerpt.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceLine {
    pub line: u32,
    pub text: String,
    /// The line execution stopped on.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub current: bool,
}

/// One call frame.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StackFrame {
    /// The frame index `evaluate_in_frame` takes (0 = where execution stopped).
    pub index: usize,
    #[serde(flatten)]
    pub location: SourceLocation,
}

/// A local variable.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    pub name: String,
    /// Compact and truncated.
    pub value: String,
    /// The last step changed it (or introduced it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub changed: bool,
}

/// Where a paused page stopped, and what an agent needs to reason about it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PauseContext {
    /// `breakpoint`, `step`, `exception`, `promiseRejection`, `debugger statement`, `pause`, …
    pub reason: String,
    pub location: SourceLocation,
    /// Breakpoints that caused the pause.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hit_breakpoints: Vec<String>,
    /// The exception, when the page paused on one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    /// A few lines around the current one.
    pub source: Vec<SourceLine>,
    /// Innermost first, at most 5.
    pub call_stack: Vec<StackFrame>,
    #[serde(skip_serializing_if = "is_zero")]
    pub frames_omitted: usize,
    /// The innermost scopes' variables (block and function), at most 10.
    pub locals: Vec<Variable>,
    #[serde(skip_serializing_if = "is_zero")]
    pub locals_omitted: usize,
    /// The last console messages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub console: Vec<ConsoleEntry>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl PauseContext {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "Paused ({}) at {}",
            self.reason,
            self.location.to_text_with_generated()
        );
        if !self.hit_breakpoints.is_empty() {
            let _ = write!(out, " — breakpoint {}", self.hit_breakpoints.join(", "));
        }
        if let Some(e) = &self.exception {
            let _ = write!(out, "\nexception: {e}");
        }
        if !self.source.is_empty() {
            let width = self
                .source
                .iter()
                .map(|l| l.line.to_string().len())
                .max()
                .unwrap_or(1);
            for l in &self.source {
                let mark = if l.current { "→" } else { " " };
                let _ = write!(out, "\n{mark} {:>width$} | {}", l.line, l.text);
            }
        }
        out.push_str("\nCall stack:");
        for f in &self.call_stack {
            let _ = write!(out, "\n  #{} {}", f.index, f.location.to_text());
        }
        if self.frames_omitted > 0 {
            let _ = write!(
                out,
                "\n  … {} more frame(s) (call_stack lists them)",
                self.frames_omitted
            );
        }
        if self.locals.is_empty() {
            out.push_str("\nLocals: none");
        } else {
            out.push_str("\nLocals:");
            for v in &self.locals {
                let changed = if v.changed { "  (changed)" } else { "" };
                let _ = write!(out, "\n  {} = {}{changed}", v.name, v.value);
            }
            if self.locals_omitted > 0 {
                let _ = write!(
                    out,
                    "\n  … {} more (read them with evaluate_in_frame)",
                    self.locals_omitted
                );
            }
        }
        if !self.console.is_empty() {
            out.push_str("\nConsole (latest):");
            for e in &self.console {
                let _ = write!(
                    out,
                    "\n  {}",
                    truncate(e.to_text().lines().next().unwrap_or(""), 200)
                );
            }
        }
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

/// The answer of `resume`, `pause` and `step`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionOutcome {
    /// What was done, e.g. `stepped over`, `resumed`.
    pub action: String,
    /// Where the page is paused now; absent when it is running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<PauseContext>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ExecutionOutcome {
    pub fn to_text(&self) -> String {
        let mut out = self.action.clone();
        match &self.paused {
            Some(ctx) => {
                out.push('\n');
                out.push_str(&ctx.to_text());
            }
            None => out.push_str(" — the page is running"),
        }
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

/// The full call stack of a paused page.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallStack {
    pub reason: String,
    pub frames: Vec<StackFrame>,
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted: usize,
}

impl CallStack {
    pub fn to_text(&self) -> String {
        let mut out = format!("Call stack (paused: {}):", self.reason);
        for f in &self.frames {
            let _ = write!(out, "\n  #{} {}", f.index, f.location.to_text());
        }
        if self.omitted > 0 {
            let _ = write!(out, "\n  … {} deeper frame(s) not shown", self.omitted);
        }
        out
    }
}

/// The value of an expression evaluated in a call frame.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FrameEvaluation {
    pub frame: usize,
    pub function: String,
    /// Compact text of the value (truncated).
    pub value: String,
    /// The JavaScript type (`number`, `object`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// The error the expression threw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl FrameEvaluation {
    pub fn to_text(&self) -> String {
        match &self.error {
            Some(e) => format!("threw in frame #{} {}: {e}", self.frame, self.function),
            None => format!(
                "in frame #{} {}: ({}) {}",
                self.frame, self.function, self.kind, self.value
            ),
        }
    }
}

/// The debugger's state after enabling it or changing exception pausing.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DebuggerStatus {
    pub enabled: bool,
    pub paused: bool,
    pub breakpoints: usize,
    pub pause_on_exceptions: ExceptionPause,
    /// Scripts the page has loaded (a few, for breakpoint URLs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub scripts_omitted: usize,
    /// Original sources the loaded scripts' source maps name (a few).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub sources_omitted: usize,
}

impl DebuggerStatus {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "debugger on: {} breakpoint(s), pause on exceptions: {}, page {}",
            self.breakpoints,
            self.pause_on_exceptions.as_str(),
            if self.paused { "paused" } else { "running" }
        );
        if !self.scripts.is_empty() {
            let _ = write!(out, "\nscripts: {}", self.scripts.join(", "));
            if self.scripts_omitted > 0 {
                let _ = write!(out, " … and {} more", self.scripts_omitted);
            }
        }
        if !self.sources.is_empty() {
            let _ = write!(
                out,
                "\noriginal sources (source maps): {}",
                self.sources.join(", ")
            );
            if self.sources_omitted > 0 {
                let _ = write!(out, " … and {} more", self.sources_omitted);
            }
        }
        if !self.paused {
            out.push_str(
                "\nnext: set a breakpoint with `breakpoint` (url like app.js, lineNumber), then \
                 trigger it (click, navigate, evaluate)",
            );
        }
        out
    }
}

fn state_error(message: impl Into<String>) -> BrowserError {
    BrowserError::InvalidInput(message.into())
}

const NOT_PAUSED: &str = "not paused: set a breakpoint with `breakpoint` (or `execution` action \
pause, or pause_on_exceptions), then trigger it with a click, navigate or evaluate";

impl TabState {
    pub(crate) fn debugger_mut(&self) -> std::sync::MutexGuard<'_, DebuggerState> {
        self.debugger.lock().unwrap_or_else(|e| e.into_inner())
    }
}

enum DebugEvent {
    Paused(Arc<EventPaused>),
    Resumed,
    Script(Arc<EventScriptParsed>),
}

/// The listener: keeps the pause state and the tab's blocker in line with the page.
fn record(state: &TabState, event: DebugEvent) {
    match event {
        DebugEvent::Paused(ev) => {
            let value = serde_json::to_value(&*ev).unwrap_or(Value::Null);
            let reason = pause_reason(&value);
            let seq = {
                let mut d = state.debugger_mut();
                d.pause_seq += 1;
                d.paused = Some(Arc::new(value));
                d.pause_seq
            };
            state
                .blocker
                .send_replace(Some(Blocker::Paused(PauseInfo { reason, seq })));
        }
        DebugEvent::Resumed => {
            {
                let mut d = state.debugger_mut();
                if d.resumes_expected > 0 {
                    d.resumes_expected -= 1;
                    return;
                }
                d.paused = None;
            }
            clear_paused(state);
        }
        DebugEvent::Script(ev) => {
            if ev.url.is_empty() || ev.url.contains("____chromiumoxide") {
                return;
            }
            let mut d = state.debugger_mut();
            if d.scripts.len() < SCRIPT_URLS {
                d.scripts
                    .insert(ev.script_id.inner().to_string(), ev.url.clone());
            }
        }
    }
}

/// Takes a pause blocker off the tab (a dialog stays).
fn clear_paused(state: &TabState) {
    state.blocker.send_if_modified(|b| {
        if matches!(b, Some(Blocker::Paused(_))) {
            *b = None;
            true
        } else {
            false
        }
    });
}

/// A script's source map to load.
struct MapJob {
    script: String,
    url: String,
    map_url: String,
    frame: Option<String>,
}

/// The map a parsed script names, unless it is known already.
fn map_job(state: &TabState, ev: &EventScriptParsed) -> Option<MapJob> {
    let map_url = ev.source_map_url.as_deref().filter(|u| !u.is_empty())?;
    if ev.url.is_empty() || ev.url.contains("____chromiumoxide") {
        return None;
    }
    let script = ev.script_id.inner().to_string();
    if !state.debugger_mut().maps.start(&script) {
        return None;
    }
    let frame = ev
        .execution_context_aux_data
        .as_ref()
        .and_then(|d| d.get("frameId"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| state.page_state().main_frame.clone());
    Some(MapJob {
        script,
        url: ev.url.clone(),
        map_url: map_url.to_string(),
        frame,
    })
}

/// Loads a script's map, then binds breakpoints that were waiting for its original sources.
async fn load_script_map(page: chromiumoxide::Page, weak: Weak<TabState>, job: MapJob) {
    let Some(limiter) = weak
        .upgrade()
        .map(|s| s.debugger_mut().maps.limiter.clone())
    else {
        return;
    };
    let Ok(_permit) = limiter.acquire_owned().await else {
        return;
    };
    let loaded = tokio::time::timeout(
        sourcemap::LOAD_WAIT,
        sourcemap::load(&page, job.frame.as_deref(), &job.url, &job.map_url),
    )
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "loading the source map took over {} s",
            sourcemap::LOAD_WAIT.as_secs()
        ))
    });
    let Some(state) = weak.upgrade() else { return };
    let map = match loaded {
        Ok(map) => Arc::new(ScriptMap {
            script_url: job.url,
            map,
        }),
        Err(e) => {
            tracing::debug!(script = %job.url, "source map not loaded: {e}");
            state
                .debugger_mut()
                .maps
                .finish(&job.script, MapState::Failed(e));
            return;
        }
    };
    state
        .debugger_mut()
        .maps
        .finish(&job.script, MapState::Ready(map.clone()));
    bind_pending(&page, &state, &map).await;
}

/// A script with a source map is about to run while breakpoints are pending: once its map has
/// loaded and they are bound, let it run.
async fn before_mapped_script(
    page: chromiumoxide::Page,
    weak: Weak<TabState>,
    ev: Arc<EventPaused>,
) {
    let script = ev
        .data
        .as_ref()
        .and_then(|d| d.get("scriptId"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some(state) = weak.upgrade() else { return };
    // Events come on one stream per type: the script's `scriptParsed` (which starts the load)
    // may not have been handled yet — briefly; a script devlens loads no map for (no URL)
    // must not wait long.
    wait_for_maps(
        &state,
        std::slice::from_ref(&script),
        UNKNOWN_SCRIPT_WAIT,
        true,
    )
    .await;
    wait_for_maps(
        &state,
        std::slice::from_ref(&script),
        sourcemap::LOAD_WAIT,
        false,
    )
    .await;
    let map = state.debugger_mut().maps.get(&script);
    if let Some(map) = map {
        bind_pending(&page, &state, &map).await;
    }
    state.debugger_mut().resumes_expected += 1;
    if page
        .execute(Raw::new("Debugger.resume", json!({})))
        .await
        .is_err()
    {
        let mut d = state.debugger_mut();
        d.resumes_expected = d.resumes_expected.saturating_sub(1);
    }
}

/// Waits until none of `scripts` (all scripts when empty) has its map loading — or, with
/// `unknown`, until each is at least known — at most `limit`.
async fn wait_for_maps(state: &TabState, scripts: &[String], limit: Duration, unknown: bool) {
    let busy = |d: &DebuggerState| {
        if scripts.is_empty() {
            d.maps.loading()
        } else if unknown {
            scripts.iter().any(|s| d.maps.is_unknown(s))
        } else {
            scripts.iter().any(|s| d.maps.is_loading(s))
        }
    };
    let mut changed = {
        let d = state.debugger_mut();
        if !busy(&d) {
            return;
        }
        d.maps.subscribe()
    };
    let _ = tokio::time::timeout(limit, async {
        while changed.changed().await.is_ok() {
            if !busy(&state.debugger_mut()) {
                break;
            }
        }
    })
    .await;
}

/// Binds the breakpoints waiting for an original source this map has.
async fn bind_pending(page: &chromiumoxide::Page, state: &TabState, map: &ScriptMap) {
    let binding = state.debugger_mut().binding.clone();
    let _one_at_a_time = binding.lock().await;
    let todo: Vec<(String, BreakpointRequest, usize)> = {
        let mut d = state.debugger_mut();
        let mut todo = Vec::new();
        d.pending
            .retain(|(id, req)| match map.map.find_source(&req.url) {
                Some(i) => {
                    todo.push((id.clone(), req.clone(), i));
                    false
                }
                None => true,
            });
        todo
    };
    let page_url = state.page_state().url.clone();
    for (id, req, source) in todo {
        let Some((_, places)) = plan_original(map, source, &req) else {
            continue;
        };
        for p in places {
            let params = original_params(map, p, &req);
            if let Ok(v) = page
                .execute(Raw::new("Debugger.setBreakpointByUrl", params))
                .await
            {
                record_bound(state, &id, &v.result, &page_url);
            }
        }
    }
    stop_instrumentation_if_idle(page, state).await;
}

/// Takes the instrumentation breakpoint away once no breakpoint is pending.
async fn stop_instrumentation_if_idle(page: &chromiumoxide::Page, state: &TabState) {
    let id = {
        let mut d = state.debugger_mut();
        if !d.pending.is_empty() {
            return;
        }
        d.instrumentation.take()
    };
    if let Some(id) = id {
        let _ = page
            .execute(Raw::new(
                "Debugger.removeBreakpoint",
                json!({ "breakpointId": id }),
            ))
            .await;
    }
}

/// Generated places of an original line (and column), 0-based, and the line they are on.
fn plan_original(
    map: &ScriptMap,
    source: usize,
    req: &BreakpointRequest,
) -> Option<(u32, Vec<sourcemap::GeneratedPosition>)> {
    map.map.generated(
        source,
        req.line.saturating_sub(1),
        req.column.map(|c| c.saturating_sub(1)),
        5,
    )
}

/// `Debugger.setBreakpointByUrl` at a generated place: by the exact script URL, so it binds
/// again when the page reloads the same bundle.
fn original_params(
    map: &ScriptMap,
    at: sourcemap::GeneratedPosition,
    req: &BreakpointRequest,
) -> Value {
    let mut params = json!({
        "url": map.script_url,
        "lineNumber": at.line,
        "columnNumber": at.column,
    });
    if let Some(c) = &req.condition {
        params["condition"] = json!(c);
    }
    params
}

/// Records a Chrome breakpoint set for one of ours, with where it landed.
fn record_bound(state: &TabState, id: &str, answer: &Value, page_url: &str) {
    let chrome = answer
        .get("breakpointId")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut d = state.debugger_mut();
    let places: Vec<(String, Option<String>)> = answer
        .get("locations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(5)
        .map(|l| describe_location(&d, l, page_url))
        .collect();
    d.chrome_ids.entry(id.to_string()).or_default().push(chrome);
    if let Some(b) = d.breakpoints.iter_mut().find(|b| b.id == id) {
        for (generated, original) in places {
            match original {
                Some(o) => {
                    if !b.locations.contains(&o) {
                        b.locations.push(o);
                    }
                    if !b.generated.contains(&generated) {
                        b.generated.push(generated);
                    }
                }
                None => {
                    if !b.locations.contains(&generated) {
                        b.locations.push(generated);
                    }
                }
            }
        }
    }
}

/// A protocol location as `url:line:col` (1-based), and the original place a source map gives.
fn describe_location(d: &DebuggerState, l: &Value, page_url: &str) -> (String, Option<String>) {
    let script = l.get("scriptId").and_then(Value::as_str).unwrap_or("");
    let (line0, col0) = (num(l, "lineNumber") as u32, num(l, "columnNumber") as u32);
    let url = d
        .scripts
        .get(script)
        .map(|u| short_url(u, page_url))
        .unwrap_or_else(|| format!("script {script}"));
    let generated = format!("{url}:{}:{}", line0 + 1, col0 + 1);
    let original = d.maps.get(script).and_then(|m| {
        let o = m.map.original(line0, col0)?;
        Some(format!(
            "{}:{}:{}",
            short_url(m.map.sources.get(o.source)?, page_url),
            o.line + 1,
            o.column + 1
        ))
    });
    (generated, original)
}

/// A readable pause reason from `Debugger.paused`.
fn pause_reason(paused: &Value) -> String {
    let reason = paused
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("other");
    let hit = paused
        .get("hitBreakpoints")
        .and_then(Value::as_array)
        .is_some_and(|h| !h.is_empty());
    match reason {
        "other" if hit => "breakpoint".into(),
        "other" => "debugger statement or pause".into(),
        r => r.to_string(),
    }
}

/// `app.js` → a regex that matches URLs ending in `app.js` (before any query or fragment).
pub(crate) fn url_regex(pattern: &str) -> String {
    let mut escaped = String::new();
    for c in pattern.chars() {
        match c {
            '*' => escaped.push_str(".*"),
            '.' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '^' | '$' | '|' | '\\' => {
                escaped.push('\\');
                escaped.push(c);
            }
            c => escaped.push(c),
        }
    }
    let start = if pattern.contains("://") || pattern.starts_with('/') || pattern.starts_with('*') {
        if pattern.contains("://") { "^" } else { "" }
    } else {
        "(^|/)"
    };
    format!("{start}{escaped}([?#].*)?$")
}

impl Tab {
    /// Turns the debugger on for this tab (idempotent). Other debugger calls do it themselves.
    pub async fn enable_debugger(&self) -> Result<DebuggerStatus> {
        self.ensure_debugger().await?;
        // The status names the original sources: let the loaded scripts' maps arrive.
        self.wait_maps(MAP_WAIT).await;
        Ok(self.debugger_status())
    }

    fn debugger_status(&self) -> DebuggerStatus {
        let d = self.state().debugger_mut();
        let page_url = self.url();
        let mut scripts: Vec<String> = d
            .scripts
            .values()
            .map(|u| short_url(u, &page_url))
            .collect();
        scripts.sort();
        scripts.dedup();
        let omitted = scripts.len().saturating_sub(10);
        scripts.truncate(10);
        let mut sources: Vec<String> = d
            .maps
            .sources()
            .iter()
            .map(|u| short_url(u, &page_url))
            .collect();
        let sources_omitted = sources.len().saturating_sub(10);
        sources.truncate(10);
        DebuggerStatus {
            enabled: d.enabled,
            paused: d.paused.is_some(),
            breakpoints: d.breakpoints.len(),
            pause_on_exceptions: d.exceptions,
            scripts,
            scripts_omitted: omitted,
            sources,
            sources_omitted,
        }
    }

    async fn ensure_debugger(&self) -> Result<()> {
        self.check_alive()?;
        if self.state().debugger_mut().enabled {
            return Ok(());
        }
        let page = self.page();
        let streams: Vec<BoxStream<'static, DebugEvent>> = vec![
            page.event_listener::<EventPaused>()
                .await
                .map_err(|e| self.map_err("watching the debugger", e))?
                .map(DebugEvent::Paused)
                .boxed(),
            page.event_listener::<EventResumed>()
                .await
                .map_err(|e| self.map_err("watching the debugger", e))?
                .map(|_| DebugEvent::Resumed)
                .boxed(),
            page.event_listener::<EventScriptParsed>()
                .await
                .map_err(|e| self.map_err("watching the debugger", e))?
                .map(DebugEvent::Script)
                .boxed(),
        ];
        let weak: Weak<TabState> = Arc::downgrade(&self.inner.state);
        let page = page.clone();
        let mut events = select_all(streams);
        let listener = tokio::spawn(async move {
            while let Some(event) = events.next().await {
                let Some(state) = weak.upgrade() else { break };
                // Not a pause for the user: a script with a map is about to run while
                // breakpoints wait for it.
                if let DebugEvent::Paused(ev) = &event
                    && ev.reason == PausedReason::Instrumentation
                {
                    tokio::spawn(before_mapped_script(page.clone(), weak.clone(), ev.clone()));
                    continue;
                }
                // Maps load beside the listener, which must keep up with pauses.
                if let DebugEvent::Script(ev) = &event
                    && let Some(job) = map_job(&state, ev)
                {
                    tokio::spawn(load_script_map(page.clone(), weak.clone(), job));
                }
                record(&state, event);
            }
        });
        {
            let mut d = self.state().debugger_mut();
            if d.enabled {
                // Another call won the race; keep its listener.
                listener.abort();
                return Ok(());
            }
            d.listener = Some(listener);
            d.enabled = true;
        }
        if let Err(e) = self.call(Raw::new("Debugger.enable", json!({}))).await {
            let mut d = self.state().debugger_mut();
            d.enabled = false;
            if let Some(l) = d.listener.take() {
                l.abort();
            }
            return Err(e);
        }
        // Enabling reports every loaded script just before it answers; let the listener see
        // them (and start loading their source maps) before a breakpoint looks for them.
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(())
    }

    /// The current pause's raw parameters, or the state-aware "not paused" error.
    fn paused_raw(&self) -> Result<Arc<Value>> {
        self.check_alive()?;
        let d = self.state().debugger_mut();
        if !d.enabled {
            return Err(state_error(format!(
                "the debugger is not on for this tab; {NOT_PAUSED}"
            )));
        }
        d.paused.clone().ok_or_else(|| state_error(NOT_PAUSED))
    }

    /// Whether the debugger is on for this tab (enabled by a debugger call, not yet off).
    pub fn debugger_enabled(&self) -> bool {
        self.state().debugger_mut().enabled
    }

    /// Whether the page is paused in the debugger.
    pub fn is_paused(&self) -> bool {
        self.state().debugger_mut().paused.is_some()
    }

    /// Sets a breakpoint by URL (full, or a suffix/pattern like `app.js`) and 1-based line.
    pub async fn set_breakpoint(&self, req: &BreakpointRequest) -> Result<BreakpointSet> {
        let url = req.url.trim();
        if url.is_empty() {
            return Err(BrowserError::InvalidInput(
                "give url: the script's URL or the end of it (e.g. app.js)".into(),
            ));
        }
        if req.line == 0 {
            return Err(BrowserError::InvalidInput(
                "lineNumber is 1-based: the first line is 1".into(),
            ));
        }
        if req.column == Some(0) {
            return Err(BrowserError::InvalidInput(
                "columnNumber is 1-based: the first column is 1".into(),
            ));
        }
        self.ensure_debugger().await?;
        let condition = req
            .condition
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        let req = BreakpointRequest {
            url: url.to_string(),
            line: req.line,
            column: req.column,
            condition: condition.clone(),
        };
        // An original source of a loaded bundle (src/cart.ts): set where its code runs.
        self.wait_maps(MAP_WAIT).await;
        let mapped = self.state().debugger_mut().maps.find(url);
        if !mapped.is_empty() {
            return self.set_original_breakpoint(&req, mapped).await;
        }
        let mut params = json!({
            "urlRegex": url_regex(url),
            "lineNumber": req.line - 1,
        });
        if let Some(c) = req.column {
            params["columnNumber"] = json!(c - 1);
        }
        if let Some(c) = &condition {
            params["condition"] = json!(c);
        }
        let v = self
            .call(Raw::new("Debugger.setBreakpointByUrl", params))
            .await
            .map_err(|e| match e {
                BrowserError::Protocol { message, .. } if message.contains("already exists") => {
                    BrowserError::InvalidInput(format!(
                        "a breakpoint at {url}:{} already exists (breakpoint action `list` shows it)",
                        req.line
                    ))
                }
                other => other,
            })?;
        let chrome_id = v
            .get("breakpointId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let id = {
            let mut d = self.state().debugger_mut();
            d.next_breakpoint += 1;
            let id = d.next_breakpoint.to_string();
            d.chrome_ids.insert(id.clone(), vec![chrome_id]);
            id
        };
        let locations = self.locations(v.get("locations"));
        let info = BreakpointInfo {
            id,
            url: url.to_string(),
            line: req.line,
            column: req.column,
            condition,
            locations,
            generated: Vec::new(),
        };
        let mut notes = Vec::new();
        if info.locations.is_empty() {
            // It may name an original source of a bundle that loads later.
            self.state()
                .debugger_mut()
                .pending
                .push((info.id.clone(), req.clone()));
            self.watch_mapped_scripts().await;
            let status = self.debugger_status();
            let known = status.scripts;
            notes.push(if known.is_empty() {
                "no script matches yet; it binds when one loads (reload the page if the script \
                 ran already)"
                    .to_string()
            } else {
                format!(
                    "no loaded script matches `{url}` at line {}; it binds if one loads later. \
                     Loaded scripts: {}",
                    req.line,
                    known.join(", ")
                )
            });
            if !status.sources.is_empty() {
                notes.push(format!(
                    "no original source (source maps) matches `{url}` either; known: {}",
                    status.sources.join(", ")
                ));
            }
        } else {
            notes.push(
                "trigger it (click, navigate, evaluate): the call returns with the pause context"
                    .into(),
            );
        }
        self.state().debugger_mut().breakpoints.push(info.clone());
        Ok(BreakpointSet {
            breakpoint: info,
            notes,
        })
    }

    fn locations(&self, locations: Option<&Value>) -> Vec<String> {
        let page_url = self.url();
        let d = self.state().debugger_mut();
        locations
            .and_then(Value::as_array)
            .map(|ls| {
                ls.iter()
                    .take(5)
                    .map(|l| describe_location(&d, l, &page_url).0)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Sets a breakpoint in an original source at the generated places its source maps give.
    async fn set_original_breakpoint(
        &self,
        req: &BreakpointRequest,
        mapped: Vec<(Arc<ScriptMap>, usize)>,
    ) -> Result<BreakpointSet> {
        let page_url = self.url();
        let plans: Vec<_> = mapped
            .iter()
            .filter_map(|(map, source)| Some((map, *source, plan_original(map, *source, req)?)))
            .collect();
        let Some((_, first_source, (landed, _))) = plans.first().map(|p| (p.0, p.1, &p.2)) else {
            let (map, source) = &mapped[0];
            let name = short_url(&map.map.sources[*source], &page_url);
            return Err(BrowserError::InvalidInput(format!(
                "{name} has no code at line {}{} by its source map (from {}); pick a line with \
                 a statement",
                req.line,
                req.column.map(|c| format!(":{c}")).unwrap_or_default(),
                short_url(&map.script_url, &page_url),
            )));
        };
        let landed = *landed;
        let source_name = short_url(&plans[0].0.map.sources[first_source], &page_url);
        let id = {
            let mut d = self.state().debugger_mut();
            d.next_breakpoint += 1;
            let id = d.next_breakpoint.to_string();
            d.breakpoints.push(BreakpointInfo {
                id: id.clone(),
                url: req.url.clone(),
                line: req.line,
                column: req.column,
                condition: req.condition.clone(),
                locations: Vec::new(),
                generated: Vec::new(),
            });
            d.chrome_ids.insert(id.clone(), Vec::new());
            id
        };
        for (map, _, (_, places)) in &plans {
            for p in places {
                let answer = self
                    .call(Raw::new(
                        "Debugger.setBreakpointByUrl",
                        original_params(map, *p, req),
                    ))
                    .await;
                match answer {
                    Ok(v) => record_bound(self.state(), &id, &v, &page_url),
                    Err(e) => {
                        // Leave nothing half set.
                        let _ = self.remove_breakpoint(&id).await;
                        return Err(match e {
                            BrowserError::Protocol { message, .. }
                                if message.contains("already exists") =>
                            {
                                BrowserError::InvalidInput(format!(
                                    "a breakpoint at {}:{} already exists (breakpoint action \
                                     `list` shows it)",
                                    req.url, req.line
                                ))
                            }
                            other => other,
                        });
                    }
                }
            }
        }
        let info = self
            .state()
            .debugger_mut()
            .breakpoints
            .iter()
            .find(|b| b.id == id)
            .cloned()
            .ok_or_else(|| state_error("the breakpoint went away while it was being set"))?;
        let mut notes = Vec::new();
        if landed + 1 != req.line {
            notes.push(format!(
                "line {} of {source_name} has no code; set on line {}, the next one with code",
                req.line,
                landed + 1
            ));
        }
        if info.locations.is_empty() {
            notes.push(format!(
                "{source_name} (source-mapped) has no loaded code at line {} now; it binds when \
                 the bundle runs again (reload)",
                landed + 1
            ));
        } else {
            notes.push(
                "trigger it (click, navigate, evaluate): the call returns with the pause context"
                    .into(),
            );
        }
        Ok(BreakpointSet {
            breakpoint: info,
            notes,
        })
    }

    /// Stops each script with a source map before it runs (while breakpoints are pending), so
    /// a breakpoint in its original sources binds before its first line.
    async fn watch_mapped_scripts(&self) {
        if self.state().debugger_mut().instrumentation.is_some() {
            return;
        }
        match self
            .call(Raw::new(
                "Debugger.setInstrumentationBreakpoint",
                json!({ "instrumentation": "beforeScriptWithSourceMapExecution" }),
            ))
            .await
        {
            Ok(v) => {
                let id = v
                    .get("breakpointId")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let stale = {
                    let mut d = self.state().debugger_mut();
                    if d.instrumentation.is_some() {
                        id
                    } else {
                        d.instrumentation = id;
                        None
                    }
                };
                if let Some(id) = stale {
                    let _ = self
                        .call(Raw::new(
                            "Debugger.removeBreakpoint",
                            json!({ "breakpointId": id }),
                        ))
                        .await;
                }
            }
            // Older browsers: pending breakpoints still bind, only after the script's first run.
            Err(e) => tracing::debug!("no instrumentation breakpoint: {e}"),
        }
    }

    /// Waits (at most `limit`) for source maps still loading.
    async fn wait_maps(&self, limit: Duration) {
        wait_for_maps(self.state(), &[], limit, false).await;
    }

    /// Where a generated position comes from, when its script's source map knows.
    fn original_of(
        &self,
        script: &str,
        line0: u32,
        col0: u32,
    ) -> Option<(Arc<ScriptMap>, sourcemap::OriginalPosition)> {
        let map = self.state().debugger_mut().maps.get(script)?;
        let pos = map.map.original(line0, col0)?;
        Some((map, pos))
    }

    /// The text of an original source, for excerpts.
    async fn original_source(&self, map: &ScriptMap, source: usize) -> Result<Arc<str>> {
        let url = map.map.sources.get(source).cloned().unwrap_or_default();
        if let Some(text) = self.state().debugger_mut().maps.fetched(&url) {
            return Ok(text);
        }
        let frame = self.state().page_state().main_frame.clone();
        let text = sourcemap::original_text(self.page(), frame.as_deref(), map, source)
            .await
            .map_err(|e| BrowserError::protocol("loading an original source", e))?;
        if map.map.contents.get(source).is_none_or(Option::is_none) {
            self.state()
                .debugger_mut()
                .maps
                .remember_fetched(&url, text.clone());
        }
        Ok(text)
    }

    /// Removes a breakpoint by id.
    pub async fn remove_breakpoint(&self, id: &str) -> Result<BreakpointList> {
        let id = id.trim();
        let known: Vec<String> = self
            .state()
            .debugger_mut()
            .breakpoints
            .iter()
            .map(|b| b.id.clone())
            .collect();
        if !known.iter().any(|k| k == id) {
            return Err(BrowserError::InvalidInput(if known.is_empty() {
                format!("no breakpoint `{id}`: this tab has no breakpoints")
            } else {
                format!(
                    "no breakpoint `{id}`; the tab's breakpoints: {} (breakpoint action `list`)",
                    known.join(", ")
                )
            }));
        }
        self.ensure_debugger().await?;
        let chrome_ids = self
            .state()
            .debugger_mut()
            .chrome_ids
            .get(id)
            .cloned()
            .unwrap_or_default();
        for chrome_id in chrome_ids {
            self.call(Raw::new(
                "Debugger.removeBreakpoint",
                json!({ "breakpointId": chrome_id }),
            ))
            .await?;
        }
        {
            let mut d = self.state().debugger_mut();
            d.breakpoints.retain(|b| b.id != id);
            d.chrome_ids.remove(id);
            d.pending.retain(|(p, _)| p != id);
        }
        stop_instrumentation_if_idle(self.page(), self.state()).await;
        let mut list = self.list_breakpoints();
        list.removed = Some(id.to_string());
        Ok(list)
    }

    /// The tab's breakpoints.
    pub fn list_breakpoints(&self) -> BreakpointList {
        let d = self.state().debugger_mut();
        BreakpointList {
            breakpoints: d.breakpoints.clone(),
            pause_on_exceptions: d.exceptions,
            paused: d.paused.is_some(),
            removed: None,
        }
    }

    /// Whether to stop on thrown exceptions.
    pub async fn pause_on_exceptions(&self, state: ExceptionPause) -> Result<DebuggerStatus> {
        self.ensure_debugger().await?;
        self.call(Raw::new(
            "Debugger.setPauseOnExceptions",
            json!({ "state": state.as_str() }),
        ))
        .await?;
        self.state().debugger_mut().exceptions = state;
        Ok(self.debugger_status())
    }

    fn pause_seq(&self) -> u64 {
        self.state().debugger_mut().pause_seq
    }

    /// Waits until a pause newer than `seq` happens (true) or `limit` passes (false).
    async fn wait_pause_after(&self, seq: u64, limit: Duration) -> bool {
        let mut blocker = self.state().blocker.subscribe();
        let waited = tokio::time::timeout(
            limit,
            blocker.wait_for(|b| matches!(b, Some(Blocker::Paused(p)) if p.seq > seq)),
        )
        .await;
        matches!(waited, Ok(Ok(_)))
    }

    /// Waits for the page to pause (a breakpoint, an exception, a `debugger` statement) and
    /// returns where. Already paused: answers at once.
    pub async fn wait_for_pause(&self, timeout: Option<Duration>) -> Result<PauseContext> {
        self.ensure_debugger().await?;
        let limit = timeout.unwrap_or(DEFAULT_PAUSE_WAIT).min(MAX_PAUSE_WAIT);
        if !self.is_paused() && !self.wait_pause_after(self.pause_seq(), limit).await {
            let list = self.list_breakpoints();
            return Err(BrowserError::Timeout {
                what: "the page to pause".into(),
                after: limit,
                hint: Some(format!(
                    "Nothing paused: {} breakpoint(s) set, pause on exceptions {}. Trigger the \
                     code (click, navigate, evaluate) or check the breakpoint binds \
                     (breakpoint action `list`).",
                    list.breakpoints.len(),
                    list.pause_on_exceptions.as_str()
                )),
            });
        }
        self.pause_context().await
    }

    /// Where the paused page stopped, with source, stack, locals and console.
    pub async fn pause_context(&self) -> Result<PauseContext> {
        self.build_context(false).await
    }

    /// The pause context when the page is paused, for the answers of actions.
    pub(crate) async fn pause_context_if_paused(&self) -> Option<PauseContext> {
        if self.is_paused() {
            self.build_context(false).await.ok()
        } else {
            None
        }
    }

    async fn build_context(&self, compare: bool) -> Result<PauseContext> {
        let paused = self.paused_raw()?;
        // Only the maps of the scripts on the stack matter here.
        let stack_scripts: Vec<String> = paused
            .get("callFrames")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(CONTEXT_FRAMES)
            .filter_map(|f| f.pointer("/location/scriptId").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        if !stack_scripts.is_empty() {
            wait_for_maps(self.state(), &stack_scripts, MAP_WAIT, false).await;
        }
        let page_url = self.url();
        let frames = paused
            .get("callFrames")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let Some(top) = frames.first() else {
            return Err(state_error(
                "the page paused without a call frame; resume with `execution` action resume",
            ));
        };
        let location = self.frame_location(top, &page_url);
        let call_stack: Vec<StackFrame> = frames
            .iter()
            .take(CONTEXT_FRAMES)
            .enumerate()
            .map(|(index, f)| StackFrame {
                index,
                location: self.frame_location(f, &page_url),
            })
            .collect();
        let script = top
            .pointer("/location/scriptId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let line0 = num(top, "/location/lineNumber") as u32;
        let col0 = num(top, "/location/columnNumber") as usize;
        let mut notes = Vec::new();
        let mut source = None;
        if let Some((map, pos)) = self.original_of(&script, line0, col0 as u32) {
            match self.original_source(&map, pos.source).await {
                Ok(text) => source = Some(excerpt(&text, pos.line, pos.column as usize)),
                Err(e) => notes.push(format!(
                    "the original source is not available ({e}); the excerpt is the generated \
                     script at {}",
                    location
                        .generated
                        .as_ref()
                        .map(|g| format!("{}:{}", g.url, g.line))
                        .unwrap_or_default()
                )),
            }
        } else if let Some(e) = self.state().debugger_mut().maps.failure(&script) {
            notes.push(format!("the script's source map did not load: {e}"));
        }
        let source = match source {
            Some(s) => s,
            None => match self.script_source(&script).await {
                Ok(text) => excerpt(&text, line0, col0),
                Err(e) => {
                    notes.push(format!("no source: {e}"));
                    Vec::new()
                }
            },
        };
        let (mut locals, locals_omitted) = self.frame_locals(top).await;
        let key = frame_key(top);
        {
            let mut d = self.state().debugger_mut();
            if compare
                && let Some((prev_key, prev)) = &d.last_locals
                && *prev_key == key
            {
                for v in &mut locals {
                    v.changed = prev.get(&v.name) != Some(&v.value);
                }
            }
            d.last_locals = Some((
                key,
                locals
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
            ));
        }
        let console = {
            let c = self.state().console_mut();
            c.since(0, ConsoleLevel::Debug, CONTEXT_CONSOLE).0
        };
        let hit_breakpoints = {
            let d = self.state().debugger_mut();
            paused
                .get("hitBreakpoints")
                .and_then(Value::as_array)
                .map(|h| {
                    h.iter()
                        .filter_map(Value::as_str)
                        .map(|chrome| {
                            d.chrome_ids
                                .iter()
                                .find(|(_, cs)| cs.iter().any(|c| c == chrome))
                                .map(|(id, _)| id.clone())
                                .unwrap_or_else(|| chrome.to_string())
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let reason = pause_reason(&paused);
        let exception = matches!(reason.as_str(), "exception" | "promiseRejection")
            .then(|| paused.get("data"))
            .flatten()
            .filter(|d| d.get("type").is_some())
            .map(|d| truncate(&collapse(&format_value(d, true)), 300));
        notes.push(
            "next: step (over|into|out), execution resume, evaluate_in_frame, call_stack".into(),
        );
        Ok(PauseContext {
            reason,
            location,
            hit_breakpoints,
            exception,
            source,
            call_stack,
            frames_omitted: frames.len().saturating_sub(CONTEXT_FRAMES),
            locals,
            locals_omitted,
            console,
            notes,
        })
    }

    fn frame_location(&self, frame: &Value, page_url: &str) -> SourceLocation {
        let mut url = frame
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if url.is_empty() {
            let script = frame
                .pointer("/location/scriptId")
                .and_then(Value::as_str)
                .unwrap_or("");
            url = self
                .state()
                .debugger_mut()
                .scripts
                .get(script)
                .cloned()
                .unwrap_or_else(|| format!("script {script}"));
        }
        let function = frame
            .get("functionName")
            .and_then(Value::as_str)
            .filter(|f| !f.is_empty())
            .unwrap_or("(anonymous)")
            .to_string();
        let script = frame
            .pointer("/location/scriptId")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (line0, col0) = (
            num(frame, "/location/lineNumber") as u32,
            num(frame, "/location/columnNumber") as u32,
        );
        let mut location = SourceLocation {
            url: short_url(&url, page_url),
            line: line0 + 1,
            column: col0 + 1,
            function,
            generated: None,
        };
        // Speak in the files the developer wrote; keep where Chrome runs it.
        if let Some((map, pos)) = self.original_of(script, line0, col0)
            && let Some(source) = map.map.sources.get(pos.source)
        {
            location.generated = Some(GeneratedLocation {
                url: std::mem::replace(&mut location.url, short_url(source, page_url)),
                line: location.line,
                column: location.column,
            });
            location.line = pos.line + 1;
            location.column = pos.column + 1;
        }
        location
    }

    async fn script_source(&self, script: &str) -> Result<Arc<str>> {
        if let Some((_, s)) = self
            .state()
            .debugger_mut()
            .sources
            .iter()
            .find(|(id, _)| id == script)
        {
            return Ok(s.clone());
        }
        let v = self
            .call(Raw::new(
                "Debugger.getScriptSource",
                json!({ "scriptId": script }),
            ))
            .await?;
        let text: Arc<str> = v
            .get("scriptSource")
            .and_then(Value::as_str)
            .unwrap_or("")
            .into();
        let mut d = self.state().debugger_mut();
        if d.sources.len() >= SOURCE_CACHE {
            d.sources.remove(0);
        }
        d.sources.push((script.to_string(), text.clone()));
        Ok(text)
    }

    /// Variables of the innermost block and function scopes.
    async fn frame_locals(&self, frame: &Value) -> (Vec<Variable>, usize) {
        let scopes = frame
            .get("scopeChain")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut vars: Vec<Variable> = Vec::new();
        let mut total = 0;
        for scope in scopes.iter().take_while(|s| {
            matches!(
                s.get("type").and_then(Value::as_str),
                Some("block" | "local" | "catch")
            )
        }) {
            let Some(object) = scope.pointer("/object/objectId").and_then(Value::as_str) else {
                continue;
            };
            let Ok(v) = self
                .call(Raw::new(
                    "Runtime.getProperties",
                    json!({ "objectId": object, "ownProperties": true, "generatePreview": true }),
                ))
                .await
            else {
                continue;
            };
            for p in v
                .get("result")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = p.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if vars.iter().any(|v| v.name == name) {
                    continue;
                }
                total += 1;
                if vars.len() < CONTEXT_LOCALS {
                    let value = p
                        .get("value")
                        .map(|v| truncate(&collapse(&format_value(v, false)), VALUE_CHARS))
                        .unwrap_or_else(|| "<uninitialized>".into());
                    vars.push(Variable {
                        name: name.to_string(),
                        value,
                        changed: false,
                    });
                }
            }
        }
        let omitted = total - vars.len();
        (vars, omitted)
    }

    /// Sends a command that resumes the page (resume, a step) and records the resume now: its
    /// `Debugger.resumed` event may be read after the pause that follows it.
    async fn send_resuming(&self, cmd: Raw) -> Result<()> {
        {
            let mut d = self.state().debugger_mut();
            d.resumes_expected += 1;
            d.paused = None;
        }
        clear_paused(self.state());
        if let Err(e) = self.call(cmd).await {
            let mut d = self.state().debugger_mut();
            d.resumes_expected = d.resumes_expected.saturating_sub(1);
            return Err(e);
        }
        Ok(())
    }

    /// Resumes a paused page. When it pauses again at once (another breakpoint), says where.
    pub async fn resume(&self) -> Result<ExecutionOutcome> {
        self.paused_raw()?;
        let seq = self.pause_seq();
        self.send_resuming(Raw::new("Debugger.resume", json!({})))
            .await?;
        let paused = if self.wait_pause_after(seq, RESUME_WATCH).await {
            Some(self.build_context(false).await?)
        } else {
            None
        };
        Ok(ExecutionOutcome {
            action: "resumed".into(),
            paused,
            notes: Vec::new(),
        })
    }

    /// Pauses the page at the next JavaScript it runs.
    pub async fn pause(&self) -> Result<ExecutionOutcome> {
        self.ensure_debugger().await?;
        if self.is_paused() {
            return Ok(ExecutionOutcome {
                action: "already paused".into(),
                paused: Some(self.build_context(false).await?),
                notes: Vec::new(),
            });
        }
        let seq = self.pause_seq();
        self.call(Raw::new("Debugger.pause", json!({}))).await?;
        if self.wait_pause_after(seq, PAUSE_WAIT).await {
            return Ok(ExecutionOutcome {
                action: "paused".into(),
                paused: Some(self.build_context(false).await?),
                notes: Vec::new(),
            });
        }
        Ok(ExecutionOutcome {
            action: "pause requested".into(),
            paused: None,
            notes: vec![format!(
                "the page ran no JavaScript within {} s, so nothing stopped yet; it pauses at \
                 the next script it runs (trigger one with a click or evaluate)",
                PAUSE_WAIT.as_secs()
            )],
        })
    }

    /// Steps over, into or out of the current statement; answers with the new pause context,
    /// variables the step changed marked.
    pub async fn step(&self, direction: StepDirection) -> Result<ExecutionOutcome> {
        self.paused_raw()?;
        let action = format!("stepped {}", direction.as_str());
        // A step in a bundle can stop in glue code its source map leaves out; step on, as
        // DevTools does, until the code maps again (or is not source-mapped at all).
        for _ in 0..=GLUE_STEPS {
            let seq = self.pause_seq();
            self.send_resuming(Raw::new(direction.method(), json!({})))
                .await?;
            if !self.wait_pause_after(seq, STEP_WAIT).await {
                return Ok(ExecutionOutcome {
                    action,
                    paused: None,
                    notes: vec![format!(
                        "the script ran to its end: nothing paused within {} s",
                        STEP_WAIT.as_secs()
                    )],
                });
            }
            if !self.stopped_in_unmapped_code() {
                break;
            }
        }
        Ok(ExecutionOutcome {
            action,
            paused: Some(self.build_context(true).await?),
            notes: Vec::new(),
        })
    }

    /// The page stopped (not at a breakpoint) where its script's source map maps nothing.
    fn stopped_in_unmapped_code(&self) -> bool {
        let d = self.state().debugger_mut();
        let Some(paused) = d.paused.clone() else {
            return false;
        };
        if paused
            .get("hitBreakpoints")
            .and_then(Value::as_array)
            .is_some_and(|h| !h.is_empty())
        {
            return false;
        }
        let Some(top) = paused.pointer("/callFrames/0") else {
            return false;
        };
        let script = top
            .pointer("/location/scriptId")
            .and_then(Value::as_str)
            .unwrap_or("");
        d.maps.get(script).is_some_and(|m| {
            m.map
                .original(
                    num(top, "/location/lineNumber") as u32,
                    num(top, "/location/columnNumber") as u32,
                )
                .is_none()
        })
    }

    /// The call stack of the paused page (up to 20 frames).
    pub async fn call_stack(&self) -> Result<CallStack> {
        let paused = self.paused_raw()?;
        let page_url = self.url();
        let frames = paused
            .get("callFrames")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(CallStack {
            reason: pause_reason(&paused),
            frames: frames
                .iter()
                .take(STACK_FRAMES)
                .enumerate()
                .map(|(index, f)| StackFrame {
                    index,
                    location: self.frame_location(f, &page_url),
                })
                .collect(),
            omitted: frames.len().saturating_sub(STACK_FRAMES),
        })
    }

    /// Evaluates an expression in a call frame of the paused page (0 = the innermost), seeing
    /// its locals and closures.
    pub async fn evaluate_in_frame(
        &self,
        frame: usize,
        expression: &str,
    ) -> Result<FrameEvaluation> {
        if expression.trim().is_empty() {
            return Err(BrowserError::InvalidInput(
                "give an expression to evaluate, e.g. `items.length`".into(),
            ));
        }
        let paused = self.paused_raw()?;
        let frames = paused
            .get("callFrames")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let Some(f) = frames.get(frame) else {
            return Err(BrowserError::InvalidInput(format!(
                "no frame #{frame}: the stack has {} frame(s), 0 to {} (call_stack lists them)",
                frames.len(),
                frames.len().saturating_sub(1)
            )));
        };
        let call_frame_id = f.get("callFrameId").and_then(Value::as_str).unwrap_or("");
        let v = self
            .call(Raw::new(
                "Debugger.evaluateOnCallFrame",
                json!({
                    "callFrameId": call_frame_id,
                    "expression": expression,
                    "generatePreview": true,
                    "timeout": 5000,
                }),
            ))
            .await?;
        let result = v.get("result").cloned().unwrap_or(Value::Null);
        let error = v.get("exceptionDetails").map(|d| {
            let (text, _, _) = crate::events::exception_parts(d, &self.url());
            truncate(&text, 500)
        });
        let function = self.frame_location(f, &self.url()).function;
        Ok(FrameEvaluation {
            frame,
            function,
            value: truncate(&format_value(&result, false), EVAL_VALUE_CHARS),
            kind: result
                .get("subtype")
                .or_else(|| result.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("undefined")
                .to_string(),
            error,
        })
    }
}

fn num(v: &Value, pointer: &str) -> u64 {
    let field = if pointer.starts_with('/') {
        v.pointer(pointer)
    } else {
        v.get(pointer)
    };
    field.and_then(Value::as_u64).unwrap_or(0)
}

/// Identifies the function a frame runs, across pauses.
fn frame_key(frame: &Value) -> String {
    format!(
        "{}:{}:{}",
        frame
            .pointer("/functionLocation/scriptId")
            .or_else(|| frame.pointer("/location/scriptId"))
            .and_then(Value::as_str)
            .unwrap_or(""),
        num(frame, "/functionLocation/lineNumber"),
        num(frame, "/functionLocation/columnNumber"),
    )
}

/// The lines around a 0-based line; long (minified) lines cut to a window around the column.
fn excerpt(source: &str, line0: u32, col0: usize) -> Vec<SourceLine> {
    let first = line0.saturating_sub(SOURCE_RADIUS);
    source
        .lines()
        .enumerate()
        .skip(first as usize)
        .take((line0 - first + SOURCE_RADIUS + 1) as usize)
        .map(|(i, text)| {
            let current = i as u32 == line0;
            let text = text.trim_end();
            let chars = text.chars().count();
            let text = if chars <= SOURCE_LINE_CHARS {
                text.to_string()
            } else {
                let center = if current { col0 } else { 0 };
                let start = center.saturating_sub(SOURCE_LINE_CHARS / 2);
                let body: String = text.chars().skip(start).take(SOURCE_LINE_CHARS).collect();
                format!(
                    "{}{body}{}",
                    if start > 0 { "…" } else { "" },
                    if start + SOURCE_LINE_CHARS < chars {
                        "…"
                    } else {
                        ""
                    }
                )
            };
            SourceLine {
                line: i as u32 + 1,
                text,
                current,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, url: &str) -> bool {
        // A tiny check without a regex engine: the patterns we build are simple enough to
        // verify by their parts.
        let re = url_regex(pattern);
        re.ends_with("([?#].*)?$") && {
            let core = &re[..re.len() - "([?#].*)?$".len()];
            let core = core.replace("\\.", ".");
            let url = url.split(['?', '#']).next().unwrap_or(url);
            match core.strip_prefix("(^|/)") {
                Some(rest) => url == rest || url.ends_with(&format!("/{rest}")),
                None => match core.strip_prefix('^') {
                    Some(rest) => url == rest,
                    None => url.ends_with(&core),
                },
            }
        }
    }

    #[test]
    fn url_patterns_match_suffixes_and_full_urls() {
        assert_eq!(url_regex("app.js"), r"(^|/)app\.js([?#].*)?$");
        assert!(matches("app.js", "http://localhost:3000/js/app.js?v=2"));
        assert!(!matches("app.js", "http://localhost:3000/js/myapp.js"));
        assert!(matches("/js/app.js", "http://x/js/app.js"));
        assert!(matches("http://x/app.js", "http://x/app.js"));
        assert_eq!(url_regex("*/app.js"), r".*/app\.js([?#].*)?$");
    }

    #[test]
    fn excerpts_mark_the_line_and_cut_minified_code() {
        let src = "a\nb\nc\nd\ne\nf";
        let lines = excerpt(src, 2, 0);
        assert_eq!(lines.len(), 5);
        assert!(lines[2].current && lines[2].line == 3);
        let long = format!("{}X{}", "a".repeat(500), "b".repeat(500));
        let lines = excerpt(&long, 0, 500);
        assert!(lines[0].text.contains('X') && lines[0].text.chars().count() <= 162);
    }
}
