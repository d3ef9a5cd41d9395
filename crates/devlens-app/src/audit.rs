//! Front-end audits and inspection, as every surface asks for them: accessibility, performance
//! (vitals, trace, CPU profile, memory), the CSS cascade of an element and the app's framework
//! state. Four tools in all; what differs between a vitals read and a trace is an argument, not
//! another tool an agent pays for on every turn.

use serde::{Deserialize, Serialize};

use devlens_browser::audit::a11y::{A11yOptions, A11yReport};
use devlens_browser::audit::css::{CssQuery, CssReport};
use devlens_browser::audit::memory::{MemoryOptions, MemoryReport};
use devlens_browser::audit::perf::{Phase, Recorded, TraceReport, Vitals};
use devlens_browser::audit::state::{AppState, StateQuery};
use devlens_browser::records::trace::ProfileFindings;
use devlens_core::Report;
use devlens_workspace::Workspace;
use schemars::JsonSchema;

use crate::AppError;
use crate::browser::{ConnectionArgs, output_path, tab};

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessibilityArgs {
    #[serde(flatten)]
    pub options: A11yOptions,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

/// `audit_accessibility`.
pub async fn accessibility(
    app: &crate::App,
    args: AccessibilityArgs,
) -> Result<A11yReport, AppError> {
    Ok(tab(app, &args.connection)
        .await?
        .audit_accessibility(&args.options)
        .await?)
}

/// What `audit_performance` measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// LCP, CLS, INP, TBT, FCP, TTFB and the slow frames' scripts.
    #[default]
    Vitals,
    /// A trace reduced to findings.
    Trace,
    /// A CPU profile's top functions.
    Profile,
    /// JS heap, DOM nodes, listeners; with heapSnapshot what holds the memory.
    Memory,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerformanceArgs {
    /// Default vitals.
    #[serde(default)]
    pub measure: Measure,
    /// trace/profile: reload (default: record a reload), or start then stop. vitals: reload
    /// measures a fresh load; start/stop read the page as is, with its interactions.
    #[serde(default)]
    pub phase: Option<Phase>,
    /// trace: also save the raw trace here (DevTools opens it).
    #[serde(default)]
    pub save_trace: Option<String>,
    /// profile, memory: functions or constructors listed (default 10).
    #[serde(default)]
    pub top: Option<usize>,
    /// memory: also a heap snapshot (retained sizes, detached DOM).
    #[serde(default)]
    pub heap_snapshot: bool,
    /// memory: keep the raw heap snapshot here (DevTools opens it).
    #[serde(default)]
    pub save_snapshot: Option<String>,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

/// What `audit_performance` answers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PerformanceReport {
    Vitals(Vitals),
    Trace(Recorded<TraceReport>),
    Profile(Recorded<ProfileFindings>),
    Memory(MemoryReport),
}

impl Report for PerformanceReport {
    fn to_text(&self) -> String {
        match self {
            Self::Vitals(v) => v.to_text(),
            Self::Trace(Recorded::Done(t)) => t.to_text(),
            Self::Profile(Recorded::Done(p)) => p.to_text(),
            Self::Memory(m) => m.to_text(),
            Self::Trace(Recorded::Started(s)) | Self::Profile(Recorded::Started(s)) => s.to_text(),
        }
    }
}

/// `audit_performance`. Paths a trace or heap snapshot is saved to are confined to the
/// workspace or the artifacts folder.
pub async fn performance(
    app: &crate::App,
    ws: &Workspace,
    args: PerformanceArgs,
) -> Result<PerformanceReport, AppError> {
    if args.save_trace.is_some() && args.measure != Measure::Trace {
        return Err(AppError::invalid(
            "saveTrace belongs to measure trace".to_string(),
        ));
    }
    if (args.save_snapshot.is_some() || args.heap_snapshot) && args.measure != Measure::Memory {
        return Err(AppError::invalid(
            "heapSnapshot and saveSnapshot belong to measure memory".to_string(),
        ));
    }
    let save = output_path(ws, args.save_trace)?;
    let save_snapshot = output_path(ws, args.save_snapshot)?;
    // Checked again as the trace or snapshot is written: see `Tab::writing_in`.
    let tab = tab(app, &args.connection).await?.writing_in(ws.places());
    let phase = args.phase.unwrap_or_default();
    Ok(match args.measure {
        Measure::Vitals => PerformanceReport::Vitals(tab.vitals(phase == Phase::Reload).await?),
        Measure::Trace => PerformanceReport::Trace(tab.trace(phase, save.as_deref()).await?),
        Measure::Profile => PerformanceReport::Profile(tab.cpu_profile(phase, args.top).await?),
        Measure::Memory => PerformanceReport::Memory(
            tab.memory(&MemoryOptions {
                heap_snapshot: args.heap_snapshot,
                top: args.top,
                save_to: save_snapshot,
            })
            .await?,
        ),
    })
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppStateArgs {
    #[serde(flatten)]
    pub query: StateQuery,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

/// `inspect_app_state`.
pub async fn app_state(app: &crate::App, args: AppStateArgs) -> Result<AppState, AppError> {
    Ok(tab(app, &args.connection)
        .await?
        .app_state(&args.query)
        .await?)
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CssArgs {
    #[serde(flatten)]
    pub query: CssQuery,
    #[serde(flatten)]
    pub connection: ConnectionArgs,
}

/// `inspect_css`.
pub async fn css(app: &crate::App, args: CssArgs) -> Result<CssReport, AppError> {
    Ok(tab(app, &args.connection).await?.css(&args.query).await?)
}
