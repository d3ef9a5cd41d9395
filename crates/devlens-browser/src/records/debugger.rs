//! The debugger's record of a tab and the shapes its answers take: breakpoints (set, bound,
//! pending an original source), the current pause, the scripts and their source maps, and
//! [`PauseContext`], [`ExecutionOutcome`], [`CallStack`], [`FrameEvaluation`],
//! [`DebuggerStatus`].
//!
//! A pause is only useful with its surroundings, so every pause and every step answers with the
//! same compact [`PauseContext`]: where (file:line:col, function), the source lines around it,
//! the call stack, the local variables (marked when a step changed them) and the last console
//! messages. Its size is bounded whatever the page does; the bounds live here.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::error::BrowserError;
use crate::records::console::ConsoleEntry;
use crate::records::sourcemap::ScriptMaps;
use crate::text::truncate;

/// How long a step may take to pause again before it counts as "ran to the end".
pub(crate) const STEP_WAIT: Duration = Duration::from_secs(3);
/// After a resume, how long to watch for the next pause (another breakpoint right away).
pub(crate) const RESUME_WATCH: Duration = Duration::from_millis(400);
/// How long `pause` waits for the page to run some JavaScript and stop.
pub(crate) const PAUSE_WAIT: Duration = Duration::from_secs(2);
/// Default and longest wait for a pause.
pub const DEFAULT_PAUSE_WAIT: Duration = Duration::from_secs(10);
pub const MAX_PAUSE_WAIT: Duration = Duration::from_secs(60);
/// Bounds of a pause context.
pub(crate) const CONTEXT_FRAMES: usize = 5;
pub(crate) const STACK_FRAMES: usize = 20;
pub(crate) const CONTEXT_LOCALS: usize = 10;
pub(crate) const CONTEXT_CONSOLE: usize = 3;
const SOURCE_RADIUS: u32 = 2;
const SOURCE_LINE_CHARS: usize = 160;
pub(crate) const VALUE_CHARS: usize = 80;
pub(crate) const EVAL_VALUE_CHARS: usize = 2000;
/// Script sources kept for excerpts.
pub(crate) const SOURCE_CACHE: usize = 16;
/// Script URLs remembered (scriptParsed), for frames without a URL and for suggestions.
pub(crate) const SCRIPT_URLS: usize = 2000;
/// Steps taken through bundle code without a mapping before showing where it stopped anyway.
pub(crate) const GLUE_STEPS: usize = 10;
/// How long an instrumentation pause waits for its script's `scriptParsed` to be handled.
pub(crate) const UNKNOWN_SCRIPT_WAIT: Duration = Duration::from_secs(1);
/// How long setting a breakpoint or showing a pause waits for source maps still loading.
pub(crate) const MAP_WAIT: Duration = Duration::from_secs(3);

/// What a tab's debugger knows; lives in the tab's state next to the console and network log.
#[derive(Debug, Default)]
pub(crate) struct DebuggerState {
    pub(crate) enabled: bool,
    pub(crate) listener: Option<JoinHandle<()>>,
    pub(crate) breakpoints: Vec<BreakpointInfo>,
    /// Chrome's breakpoint ids (long, with the URL regex in them) by our short ones; one of
    /// ours set in an original source can be several of Chrome's (one per generated place).
    pub(crate) chrome_ids: HashMap<String, Vec<String>>,
    /// Breakpoints whose URL matched no script nor original source yet: bound in original
    /// sources when a source map that has them loads.
    pub(crate) pending: Vec<(String, BreakpointRequest)>,
    /// While breakpoints are pending: Chrome's id of the instrumentation breakpoint that stops
    /// each script with a source map before it runs, so they bind before its first line.
    pub(crate) instrumentation: Option<String>,
    /// One binding of pending breakpoints at a time (a map load and an instrumentation pause
    /// can both try); the second waits until the first is done.
    pub(crate) binding: Arc<tokio::sync::Mutex<()>>,
    pub(crate) maps: ScriptMaps,
    pub(crate) next_breakpoint: u64,
    /// The `Debugger.paused` parameters of the current pause.
    pub(crate) paused: Option<Arc<Value>>,
    /// `Debugger.resumed` events still to come for resumes devlens made (and already
    /// recorded). Each event type has its own stream, so a resume can be read after the pause
    /// that followed it; those must not clear the new pause.
    pub(crate) resumes_expected: u32,
    /// Counts pauses, so a waiter can tell a new pause from the one it saw.
    pub(crate) pause_seq: u64,
    pub(crate) exceptions: ExceptionPause,
    /// Locals of the last context shown: which function, and name → value.
    pub(crate) last_locals: Option<(String, HashMap<String, String>)>,
    pub(crate) sources: Vec<(String, Arc<str>)>,
    pub(crate) scripts: HashMap<String, String>,
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

    pub(crate) fn method(self) -> &'static str {
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

pub(crate) fn is_zero(n: &usize) -> bool {
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

pub(crate) fn state_error(message: impl Into<String>) -> BrowserError {
    BrowserError::InvalidInput(message.into())
}

pub(crate) const NOT_PAUSED: &str = "not paused: set a breakpoint with `breakpoint` (or `execution` action \
pause, or pause_on_exceptions), then trigger it with a click, navigate or evaluate";

/// A readable pause reason from `Debugger.paused`.
pub(crate) fn pause_reason(paused: &Value) -> String {
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

pub(crate) fn num(v: &Value, pointer: &str) -> u64 {
    let field = if pointer.starts_with('/') {
        v.pointer(pointer)
    } else {
        v.get(pointer)
    };
    field.and_then(Value::as_u64).unwrap_or(0)
}

/// Identifies the function a frame runs, across pauses.
pub(crate) fn frame_key(frame: &Value) -> String {
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
pub(crate) fn excerpt(source: &str, line0: u32, col0: usize) -> Vec<SourceLine> {
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
