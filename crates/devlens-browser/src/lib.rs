//! Drive and debug a real Chrome over the DevTools Protocol.
//!
//! [`BrowserSessions`] holds any number of browser connections (launched or attached), each
//! keyed by a `connection_id` and holding its tabs. [`BrowserSessions::tab`] hands out a [`Tab`],
//! and everything a page can do is a method on it.
//!
//! The crate is built in floors; a module imports only from its own floor and the floors below
//! (a test, `floors::tests`, reads every `use crate::…` and fails on an import that points up or
//! closes a circle):
//!
//! | floor | modules | what |
//! | --- | --- | --- |
//! | 0 records | [`records`], [`error`], `text` | plain data without the protocol: console buffer, network log, debugger state and answers, source maps, emulation, snapshot refs, the tab's state |
//! | 1 tab core | [`tab`] | launching and connecting, sessions, tabs, the protocol plumbing, the event pumps that keep the records |
//! | 2 page reads | [`page`] | DOM and frames, snapshot, console and network reads, screenshots, emulation, a paused page's context |
//! | 3 effects | [`effects`] | what an action or a navigation changed, and racing a call against what blocks the page |
//! | 4 acting | [`act`], [`debug`] | input, waits, dialogs, navigation, live code; breakpoints and execution control |
//! | 5 audits | [`audit`] | accessibility (axe-core), performance (vitals, trace, CPU profile, memory), the CSS cascade, app state |
//!
//! Results are compact, bounded and pageable by default: agents pay for every token. Each result
//! type is `Serialize` for structured output and has compact text for the model. Failures are
//! [`BrowserError`]s whose messages say what to do next.
//!
//! Anything that can block the page's main thread — a click that opens `alert()` or hits a
//! breakpoint — runs as its own task and is raced against the tab's blockers, so the call
//! returns at once with what blocked it instead of hanging.

pub mod act;
pub mod audit;
pub mod debug;
pub mod effects;
pub mod error;
#[cfg(test)]
mod floors;
pub mod page;
pub mod records;
pub mod tab;
mod text;

pub use act::hot::{Arrival, DevServer, FileWatch, PageUpdate, StyleProbe, UpdateOptions};
pub use act::input::{ClickOptions, MouseButton, ScrollDirection, ScrollRequest};
pub use act::live::{CssInjection, CssRemoval, EvaluateOptions, Evaluation, ThrownError};
pub use act::navigate::{Navigation, NewTab};
pub use act::waits::{ElementState, WaitCondition, WaitOutcome};
pub use effects::{ActionOutcome, NavigationOutcome};
pub use error::{BrowserError, Result};
pub use page::dom::{ElementList, ElementQuery, ElementSummary, ElementTarget};
pub use page::screenshot::{
    ImageFormat, Screenshot, ScreenshotRequest, ScreenshotScope, image_size,
};
pub use page::snapshot::{Snapshot, SnapshotOptions};
pub use records::DialogInfo;
pub use records::console::{ConsoleEntry, ConsoleLevel, ConsoleLogs, ConsoleQuery};
pub use records::debugger::{
    BreakpointInfo, BreakpointList, BreakpointRequest, BreakpointSet, CallStack, DebuggerStatus,
    ExceptionPause, ExecutionOutcome, FrameEvaluation, GeneratedLocation, PauseContext,
    StepDirection, Variable,
};
pub use records::emulation::{
    ColorScheme, EmulationRequest, EmulationState, NetworkProfile, ViewportSize,
};
pub use records::network::{
    BodyOptions, MessageBody, NetworkEntry, NetworkPage, NetworkQuery, RequestDetails,
};
pub use tab::files::{file_allowed, file_url_path};
pub use tab::launch::{
    ConnectOptions, LaunchOptions, Sandbox, SandboxState, find_chrome, running_as_root,
};
pub use tab::session::{
    BrowserSessions, ConnectionInfo, ConnectionKind, ConnectionList, Disconnected, SessionOptions,
};
pub use tab::targets::{Tab, TabInfo, TabList, TabSelector, TabTurn};

/// [`devlens_core::Report`] for the results whose compact text is their own `to_text()`: what
/// every surface prints (the MCP reply's text, the HTTP API's `text/plain` answer, the CLI).
macro_rules! report_by_to_text {
    ($($t:ty),* $(,)?) => {$(
        impl devlens_core::Report for $t {
            fn to_text(&self) -> String {
                <$t>::to_text(self)
            }
        }
    )*};
}

report_by_to_text!(
    ConnectionInfo,
    ConnectionList,
    Disconnected,
    TabList,
    NewTab,
    NavigationOutcome,
    ElementList,
    Snapshot,
    ActionOutcome,
    WaitOutcome,
    ConsoleLogs,
    NetworkPage,
    RequestDetails,
    Screenshot,
    Evaluation,
    CssInjection,
    CssRemoval,
    EmulationState,
    BreakpointList,
    BreakpointSet,
    CallStack,
    DebuggerStatus,
    ExecutionOutcome,
    FrameEvaluation,
    PauseContext,
    audit::a11y::A11yReport,
    audit::state::AppState,
    audit::css::CssReport,
);
