//! Drive and debug a real Chrome over the DevTools Protocol.
//!
//! [`BrowserSessions`] holds any number of browser connections (launched or attached), each
//! keyed by a `connection_id` and holding its tabs. [`BrowserSessions::tab`] hands out a [`Tab`],
//! and everything a page can do is a method on it, one module per concern:
//!
//! | module | what |
//! | --- | --- |
//! | [`launch`] | finding Chrome, starting it under a guard that stops it when devlens exits |
//! | [`session`] | connections: launch, connect, list, disconnect |
//! | [`targets`] | tabs: list, switch, open, close; the per-tab state |
//! | [`navigate`] | go to a URL, back, forward, reload — with a "smart" report of the load |
//! | [`dom`] | `query_elements`: compact, bounded element summaries |
//! | [`snapshot`] | the accessibility tree as compact text (iframes included), with short refs for actions |
//! | `frames` | in-process and cross-site iframes: which session reaches a node, frame offsets |
//! | [`actions`] | click, fill, type, press, hover, select, scroll, wait, dialogs |
//! | [`console`] | the bounded console ring buffer of each tab |
//! | [`network`] | the bounded network log of each tab, bodies on demand |
//! | [`screenshot`] | viewport, full page, element; PNG or JPEG |
//! | [`live`] | evaluate JavaScript, inject CSS |
//! | [`emulation`] | viewport, color scheme, CPU and network throttling |
//!
//! Results are compact, bounded and pageable by default: agents pay for every token. Each result
//! type is `Serialize` for structured output and has `to_text()` for the model. Failures are
//! [`BrowserError`]s whose messages say what to do next.
//!
//! Anything that can block the page's main thread — a click that opens `alert()`, or (later) hits
//! a breakpoint — runs as its own task and is raced against the tab's blockers, so the call
//! returns at once with what blocked it instead of hanging. The debugger slots in there: a
//! `Blocker::Paused` variant set from `Debugger.paused`, its state next to the console and the
//! network log in the tab's state, and its methods in a `debugger` module on [`Tab`].

pub mod actions;
mod cdp;
pub mod console;
pub mod debugger;
pub mod dom;
pub mod emulation;
pub mod error;
mod events;
mod frames;
pub mod launch;
pub mod live;
pub mod navigate;
pub mod network;
pub mod screenshot;
pub mod session;
pub mod snapshot;
mod sourcemap;
pub mod targets;
mod text;

use std::time::Duration;

pub use actions::{
    ActionOutcome, ClickOptions, DialogInfo, ElementState, MouseButton, ScrollDirection,
    ScrollRequest, WaitCondition, WaitOutcome,
};
pub use console::{ConsoleEntry, ConsoleLevel, ConsoleLogs, ConsoleQuery};
pub use debugger::{
    BreakpointInfo, BreakpointList, BreakpointRequest, BreakpointSet, CallStack, DebuggerStatus,
    ExceptionPause, ExecutionOutcome, FrameEvaluation, GeneratedLocation, PauseContext,
    StepDirection,
};
pub use dom::{ElementList, ElementQuery, ElementSummary, ElementTarget};
pub use emulation::{ColorScheme, EmulationRequest, EmulationState, NetworkProfile, ViewportSize};
pub use error::{BrowserError, Result};
pub use launch::{ConnectOptions, LaunchOptions, find_chrome};
pub use live::{CssInjection, CssRemoval, EvaluateOptions, Evaluation, ThrownError};
pub use navigate::{Navigation, NavigationOutcome};
pub use network::{
    BodyOptions, MessageBody, NetworkEntry, NetworkPage, NetworkQuery, RequestDetails,
};
pub use screenshot::{ImageFormat, Screenshot, ScreenshotRequest, ScreenshotScope};
pub use session::{
    BrowserSessions, ConnectionInfo, ConnectionKind, ConnectionList, Disconnected, SessionOptions,
};
pub use snapshot::{Snapshot, SnapshotOptions};
pub use targets::{NewTab, Tab, TabInfo, TabList, TabSelector};

/// How long a single protocol command may take before the browser counts as unresponsive.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
