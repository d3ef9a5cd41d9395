//! Performance recordings reduced to what an agent acts on, without the protocol: a trace
//! (Chrome's trace event format, as `Tracing` streams it and DevTools opens it) becomes
//! findings — main-thread time by category, long tasks with the functions they ran, requests
//! that blocked rendering, the slowest and largest requests, layout shifts and the load's
//! marks; a CPU profile (`Profiler.stop`) becomes the functions with the most self time.

use std::collections::HashMap;
use std::io::Read;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A task this long blocks input (the RAIL and web-vitals threshold).
pub(crate) const LONG_TASK_MS: f64 = 50.0;
/// Items per finding list.
const TOP: usize = 5;

/// One trace event; only the fields the reduction reads.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct TraceEvent {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub ph: String,
    #[serde(default)]
    pub ts: f64,
    #[serde(default)]
    pub dur: Option<f64>,
    #[serde(default)]
    pub pid: i64,
    #[serde(default)]
    pub tid: i64,
    #[serde(default)]
    pub args: Value,
    /// Links a CPU profile's chunks to it.
    #[serde(default)]
    pub id: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TraceFile {
    Object {
        #[serde(rename = "traceEvents")]
        trace_events: Vec<TraceEvent>,
    },
    Array(Vec<TraceEvent>),
}

/// Reads a trace file (`{"traceEvents": [...]}` or a bare array).
pub(crate) fn read_trace(reader: impl Read) -> Result<Vec<TraceEvent>, String> {
    let file: TraceFile = serde_json::from_reader(std::io::BufReader::new(reader))
        .map_err(|e| format!("not a trace file: {e}"))?;
    Ok(match file {
        TraceFile::Object { trace_events } => trace_events,
        TraceFile::Array(events) => events,
    })
}

/// A place in a script: `url:line:column` (1-based), mapped to its original source when a
/// source map knows it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CodeLocation {
    pub function: String,
    pub url: String,
    /// 1-based.
    pub line: u32,
    /// 1-based.
    pub column: u32,
    /// Where it comes from, per the script's source map: `src/App.tsx:12:5`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
}

impl CodeLocation {
    /// A profile's `callFrame` (0-based line and column).
    fn of_call_frame(f: &Value) -> Self {
        Self {
            function: f["functionName"].as_str().unwrap_or_default().to_string(),
            url: f["url"].as_str().unwrap_or_default().to_string(),
            line: f["lineNumber"].as_i64().unwrap_or(0).max(0) as u32 + 1,
            column: f["columnNumber"].as_i64().unwrap_or(0).max(0) as u32 + 1,
            original: None,
        }
    }

    pub fn to_text(&self) -> String {
        let name = if self.function.is_empty() {
            "(anonymous)"
        } else {
            &self.function
        };
        let file = self.url.rsplit('/').next().unwrap_or(&self.url);
        match &self.original {
            Some(o) => format!("{name} {o}"),
            None if self.url.is_empty() => name.to_string(),
            None => format!("{name} {file}:{}:{}", self.line, self.column),
        }
    }
}

/// Time spent doing one kind of work.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CategoryTime {
    /// scripting, rendering, painting, loading, gc, other.
    pub category: String,
    pub ms: f64,
}

/// A task that held the main thread for 50 ms or more.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LongTask {
    /// Start, from the recording's start (or the navigation's).
    pub start_ms: f64,
    pub duration_ms: f64,
    /// What it ran, longest first: the script entry points (event handlers, timers,
    /// evaluated scripts) with their time.
    pub functions: Vec<TimedCode>,
}

/// Code and the time it took.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimedCode {
    /// `click`, `setTimeout`, `script` … what ran it.
    pub kind: String,
    pub location: CodeLocation,
    pub ms: f64,
}

/// A request, as a trace saw it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TracedRequest {
    pub url: String,
    /// From sending to the last byte.
    pub ms: f64,
    /// Bytes over the wire.
    pub bytes: u64,
    /// When it finished, from the start.
    pub end_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub render_blocking: bool,
}

/// A layout shift and what moved.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LayoutShift {
    pub at_ms: f64,
    pub score: f64,
    /// The elements that moved (described by the caller from `nodeIds`).
    pub elements: Vec<String>,
    #[serde(skip)]
    pub node_ids: Vec<i64>,
    /// A request that finished just before and may have caused it (an image without a size,
    /// a font, an injected ad).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub likely_cause: Option<String>,
}

/// A trace reduced to findings.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceFindings {
    /// The recording's length.
    pub duration_ms: f64,
    /// First contentful paint, largest contentful paint, DOMContentLoaded and load, from the
    /// navigation's start (when the recording holds a navigation).
    pub marks: Vec<(String, f64)>,
    /// Main-thread time by kind of work, most first.
    pub main_thread: Vec<CategoryTime>,
    /// Total blocking time: the part of each long task over 50 ms.
    pub total_blocking_ms: f64,
    pub long_tasks: Vec<LongTask>,
    pub render_blocking: Vec<TracedRequest>,
    pub slowest_requests: Vec<TracedRequest>,
    pub largest_requests: Vec<TracedRequest>,
    pub requests: usize,
    /// Cumulative layout shift (largest session window).
    pub cls: f64,
    pub layout_shifts: Vec<LayoutShift>,
}

/// A JSON array's items, none when it is missing or not an array.
fn items(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn ms(us: f64) -> f64 {
    (us / 100.0).round() / 10.0
}

/// The category DevTools' summary puts a main-thread event in.
fn category(name: &str) -> &'static str {
    match name {
        "FunctionCall"
        | "EvaluateScript"
        | "v8.compile"
        | "v8.compileModule"
        | "V8.CompileCode"
        | "v8.run"
        | "v8.evaluateModule"
        | "TimerFire"
        | "EventDispatch"
        | "FireAnimationFrame"
        | "FireIdleCallback"
        | "RunMicrotasks"
        | "V8.Execute"
        | "XHRReadyStateChange"
        | "XHRLoad"
        | "v8.produceCache"
        | "v8.produceModuleCache"
        | "CompileScript"
        | "CompileModule"
        | "ParseScriptOnBackground"
        | "V8.ScriptCompiler" => "scripting",
        "Layout"
        | "UpdateLayoutTree"
        | "RecalculateStyles"
        | "UpdateLayerTree"
        | "PrePaint"
        | "HitTest"
        | "ScheduleStyleRecalculation"
        | "InvalidateLayout"
        | "Layerize"
        | "IntersectionObserverController::computeIntersections" => "rendering",
        "Paint" | "PaintImage" | "CompositeLayers" | "Commit" | "Decode Image"
        | "ImageDecodeTask" | "RasterTask" | "UpdateLayer" | "PaintSetup" => "painting",
        "ParseHTML"
        | "ParseAuthorStyleSheet"
        | "ResourceReceivedData"
        | "ResourceSendRequest"
        | "ResourceReceiveResponse"
        | "ResourceFinish" => "loading",
        n if n.contains("GC") || n.starts_with("V8.GC") || n == "BlinkGC.AtomicPhase" => "gc",
        _ => "other",
    }
}

/// Entry points of script work, and what ran them.
fn script_entry(ev: &TraceEvent) -> Option<String> {
    let data = &ev.args["data"];
    match ev.name.as_str() {
        "FunctionCall" => Some("call".into()),
        "EvaluateScript" => Some("script".into()),
        "v8.evaluateModule" => Some("module".into()),
        "TimerFire" => Some("timer".into()),
        "FireAnimationFrame" => Some("requestAnimationFrame".into()),
        "FireIdleCallback" => Some("requestIdleCallback".into()),
        "EventDispatch" => Some(data["type"].as_str().unwrap_or("event").to_string()),
        _ => None,
    }
}

/// Where a script event ran, when it says.
fn event_location(ev: &TraceEvent) -> Option<CodeLocation> {
    let data = &ev.args["data"];
    let url = data["url"].as_str().unwrap_or_default();
    if url.is_empty() {
        return None;
    }
    // Trace events count lines and columns from 1 (FunctionCall) or give the script start.
    let line = data["lineNumber"].as_u64().unwrap_or(1).max(1) as u32;
    let column = data["columnNumber"].as_u64().unwrap_or(1).max(1) as u32;
    Some(CodeLocation {
        function: data["functionName"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        url: url.to_string(),
        line,
        column,
        original: None,
    })
}

/// The main thread's CPU samples in the trace: (time, function location), time-ordered.
fn main_samples(events: &[TraceEvent], main: Option<(i64, i64)>) -> Vec<(f64, CodeLocation)> {
    let Some((pid, tid)) = main else {
        return Vec::new();
    };
    let mut starts: HashMap<String, f64> = HashMap::new();
    let mut frames: HashMap<(String, i64), CodeLocation> = HashMap::new();
    let mut clock: HashMap<String, f64> = HashMap::new();
    let mut out = Vec::new();
    // The profile is announced on the thread it samples; its chunks come from the sampler's.
    for e in events.iter().filter(|e| e.pid == pid) {
        let id = e.id.as_ref().map(|v| v.to_string()).unwrap_or_default();
        let data = &e.args["data"];
        match e.name.as_str() {
            "Profile" if e.tid == tid => {
                starts.insert(id, data["startTime"].as_f64().unwrap_or(e.ts));
            }
            "ProfileChunk" => {
                let profile = &data["cpuProfile"];
                for n in profile["nodes"].as_array().into_iter().flatten() {
                    let f = &n["callFrame"];
                    if let Some(node) = n["id"].as_i64() {
                        frames.insert((id.clone(), node), CodeLocation::of_call_frame(f));
                    }
                }
                let Some(start) = starts.get(&id).copied() else {
                    continue;
                };
                let t = clock.entry(id.clone()).or_insert(start);
                let deltas = items(&data["timeDeltas"]);
                let samples = items(&profile["samples"]);
                for (sample, delta) in samples.iter().zip(deltas) {
                    *t += delta.as_f64().unwrap_or(0.0);
                    if let Some(loc) = sample.as_i64().and_then(|n| frames.get(&(id.clone(), n))) {
                        out.push((*t, loc.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The function with the most sampled time in `[start, end)`, and that time in µs.
fn hottest(samples: &[(f64, CodeLocation)], start: f64, end: f64) -> Option<(CodeLocation, f64)> {
    let from = samples.partition_point(|(t, _)| *t < start);
    let window = &samples[from..];
    let mut time: Vec<(&CodeLocation, f64)> = Vec::new();
    for (i, (t, loc)) in window.iter().enumerate() {
        if *t >= end {
            break;
        }
        if loc.url.is_empty() || loc.function.starts_with('(') {
            continue;
        }
        let next = window.get(i + 1).map_or(*t, |(n, _)| *n).min(end);
        match time.iter_mut().find(|(l, _)| *l == loc) {
            Some(entry) => entry.1 += next - t,
            None => time.push((loc, next - t)),
        }
    }
    time.into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(l, t)| (l.clone(), t))
}

/// The renderer process and main thread of the page's main frame.
fn main_thread(events: &[TraceEvent]) -> Option<(i64, i64)> {
    let mut pid = None;
    for ev in events {
        let data = &ev.args["data"];
        match ev.name.as_str() {
            "TracingStartedInBrowser" => {
                for f in data["frames"].as_array().into_iter().flatten() {
                    let top = f["isOutermostMainFrame"]
                        .as_bool()
                        .unwrap_or(f.get("parent").is_none());
                    if top && let Some(p) = f["processId"].as_i64() {
                        pid = Some(p);
                    }
                }
            }
            "FrameCommittedInBrowser" => {
                let top = data.get("parent").is_none() || data["parent"].is_null();
                if top && let Some(p) = data["processId"].as_i64() {
                    pid = Some(p);
                }
            }
            _ => {}
        }
    }
    let thread = |pid: Option<i64>| {
        events.iter().find(|ev| {
            ev.ph == "M"
                && ev.name == "thread_name"
                && ev.args["name"].as_str() == Some("CrRendererMain")
                && pid.is_none_or(|p| ev.pid == p)
        })
    };
    thread(pid)
        .or_else(|| thread(None))
        .map(|ev| (ev.pid, ev.tid))
}

/// Reduces a trace to findings.
pub(crate) fn reduce(mut events: Vec<TraceEvent>) -> TraceFindings {
    events.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    let first = events
        .iter()
        .find(|e| e.ts > 0.0 && e.ph != "M")
        .map_or(0.0, |e| e.ts);
    let last = events
        .iter()
        .filter(|e| e.ph != "M")
        .map(|e| e.ts + e.dur.unwrap_or(0.0))
        .fold(first, f64::max);
    let main = main_thread(&events);
    let on_main = |e: &TraceEvent| main.is_some_and(|(p, t)| e.pid == p && e.tid == t);

    // The navigation's start, when the recording holds one: times are counted from it.
    let nav_start = events
        .iter()
        .rfind(|e| {
            let data = &e.args["data"];
            e.name == "navigationStart"
                && main.is_none_or(|(p, _)| e.pid == p)
                && data["isOutermostMainFrame"].as_bool() != Some(false)
                && data["documentLoaderURL"]
                    .as_str()
                    .is_none_or(|u| !u.is_empty())
        })
        .map(|e| e.ts);
    let origin = nav_start.unwrap_or(first);
    let since = |ts: f64| ms(ts - origin);

    let mut marks = Vec::new();
    if nav_start.is_some() {
        let mut lcp = None;
        for e in &events {
            if main.is_some_and(|(p, _)| e.pid != p) || Some(e.ts) < nav_start {
                continue;
            }
            match e.name.as_str() {
                "firstContentfulPaint"
                    if !marks.iter().any(|(n, _): &(String, f64)| n == "FCP") =>
                {
                    marks.push(("FCP".to_string(), since(e.ts)));
                }
                "largestContentfulPaint::Candidate" => lcp = Some(since(e.ts)),
                "MarkDOMContent"
                    if e.args["data"]["isOutermostMainFrame"].as_bool() != Some(false) =>
                {
                    marks.push(("DOMContentLoaded".to_string(), since(e.ts)));
                }
                "MarkLoad" if e.args["data"]["isOutermostMainFrame"].as_bool() != Some(false) => {
                    marks.push(("load".to_string(), since(e.ts)));
                }
                _ => {}
            }
        }
        if let Some(l) = lcp {
            marks.push(("LCP".to_string(), l));
        }
        marks.sort_by(|a, b| a.1.total_cmp(&b.1));
    }

    // Self time of each main-thread event, by nesting.
    let complete: Vec<&TraceEvent> = events
        .iter()
        .filter(|e| on_main(e) && e.ph == "X" && e.dur.is_some())
        .collect();
    let mut by_category: HashMap<&'static str, f64> = HashMap::new();
    let mut stack: Vec<(f64, &'static str, f64)> = Vec::new(); // (end, category, self)
    let flush = |entry: (f64, &'static str, f64), acc: &mut HashMap<&'static str, f64>| {
        *acc.entry(entry.1).or_default() += entry.2.max(0.0);
    };
    for e in &complete {
        let dur = e.dur.unwrap_or(0.0);
        while stack.last().is_some_and(|top| top.0 <= e.ts) {
            if let Some(top) = stack.pop() {
                flush(top, &mut by_category);
            }
        }
        if let Some(parent) = stack.last_mut() {
            parent.2 -= dur;
        }
        let cat = category(&e.name);
        // Work inside a script call is scripting unless it is its own kind of work.
        let cat = match (cat, stack.last()) {
            ("other", Some(parent)) => parent.1,
            (c, _) => c,
        };
        stack.push((e.ts + dur, cat, dur));
    }
    while let Some(top) = stack.pop() {
        flush(top, &mut by_category);
    }
    let mut main_thread: Vec<CategoryTime> = by_category
        .into_iter()
        .filter(|(_, us)| *us >= 100.0)
        .map(|(c, us)| CategoryTime {
            category: c.to_string(),
            ms: ms(us),
        })
        .collect();
    main_thread.sort_by(|a, b| b.ms.total_cmp(&a.ms));

    // Long tasks and the script entry points inside them.
    let samples = main_samples(&events, main);
    let mut long_tasks = Vec::new();
    let mut total_blocking = 0.0;
    for task in complete.iter().filter(|e| {
        (e.name == "RunTask" || e.name == "ThreadControllerImpl::RunTask")
            && e.dur.unwrap_or(0.0) >= LONG_TASK_MS * 1000.0
    }) {
        let dur = task.dur.unwrap_or(0.0);
        let end = task.ts + dur;
        // Nested RunTasks (a task runner inside a task) count once.
        if long_tasks
            .iter()
            .any(|(s, e, _): &(f64, f64, LongTask)| task.ts >= *s && end <= *e)
        {
            continue;
        }
        total_blocking += dur / 1000.0 - LONG_TASK_MS;
        let mut functions: Vec<TimedCode> = Vec::new();
        for inner in complete.iter().filter(|e| e.ts >= task.ts && e.ts < end) {
            let (Some(kind), Some(location)) = (script_entry(inner), event_location(inner)) else {
                continue;
            };
            let t = ms(inner.dur.unwrap_or(0.0));
            match functions.iter_mut().find(|f| f.location == location) {
                // An entry point nested in one already counted is part of its time.
                Some(_) => {}
                None => functions.push(TimedCode {
                    kind,
                    location,
                    ms: t,
                }),
            }
        }
        functions.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        functions.truncate(3);
        // Below the entry point: where the task actually spent its time, from the samples.
        if let Some((location, us)) = hottest(&samples, task.ts, end)
            && us >= 1000.0
            && !functions.iter().any(|f| f.location == location)
        {
            functions.insert(
                0,
                TimedCode {
                    kind: "self time".into(),
                    location,
                    ms: ms(us),
                },
            );
        }
        long_tasks.push((
            task.ts,
            end,
            LongTask {
                start_ms: since(task.ts),
                duration_ms: ms(dur),
                functions,
            },
        ));
    }
    let mut long_tasks: Vec<LongTask> = long_tasks.into_iter().map(|(_, _, t)| t).collect();
    long_tasks.sort_by(|a, b| b.duration_ms.total_cmp(&a.duration_ms));
    long_tasks.truncate(TOP);

    // Requests.
    #[derive(Default)]
    struct Req {
        url: String,
        start: f64,
        end: Option<f64>,
        bytes: u64,
        status: Option<u16>,
        blocking: bool,
        mime: String,
    }
    let mut requests: HashMap<String, Req> = HashMap::new();
    for e in &events {
        let data = &e.args["data"];
        let Some(id) = data["requestId"].as_str() else {
            continue;
        };
        match e.name.as_str() {
            "ResourceSendRequest" => {
                let r = requests.entry(id.to_string()).or_default();
                r.url = data["url"].as_str().unwrap_or_default().to_string();
                r.start = e.ts;
                // What DevTools' render-blocking insight counts: a script late in the body
                // blocks the parser ("in_body_parser_blocking"), not the first render.
                r.blocking = data["renderBlocking"].as_str() == Some("blocking");
            }
            "ResourceReceiveResponse" => {
                if let Some(r) = requests.get_mut(id) {
                    r.status = data["statusCode"].as_u64().map(|s| s as u16);
                    r.mime = data["mimeType"].as_str().unwrap_or_default().to_string();
                }
            }
            "ResourceFinish" => {
                if let Some(r) = requests.get_mut(id) {
                    r.bytes = data["encodedDataLength"].as_u64().unwrap_or(0);
                    // finishTime shares the trace's clock, except where it does not (a navigation
                    // request started before the recording): then the event's own time.
                    r.end = Some(match data["finishTime"].as_f64() {
                        Some(t) if t * 1_000_000.0 >= r.start && t > 0.0 => t * 1_000_000.0,
                        _ => e.ts,
                    });
                }
            }
            _ => {}
        }
    }
    let mut finished: Vec<(f64, String, TracedRequest)> = requests
        .into_values()
        .filter(|r| !r.url.is_empty() && !r.url.starts_with("data:"))
        .map(|r| {
            let end = r.end.unwrap_or(last).max(r.start);
            (
                end,
                r.mime,
                TracedRequest {
                    url: r.url,
                    ms: ms(end - r.start),
                    bytes: r.bytes,
                    end_ms: since(end),
                    status: r.status,
                    render_blocking: r.blocking,
                },
            )
        })
        .collect();
    finished.sort_by(|a, b| a.0.total_cmp(&b.0));
    let request_count = finished.len();
    let mut render_blocking: Vec<TracedRequest> = finished
        .iter()
        .filter(|(_, _, r)| r.render_blocking)
        .map(|(_, _, r)| r.clone())
        .collect();
    render_blocking.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    render_blocking.truncate(TOP);
    let mut slowest: Vec<TracedRequest> = finished.iter().map(|(_, _, r)| r.clone()).collect();
    slowest.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    slowest.truncate(TOP);
    let mut largest: Vec<TracedRequest> = finished
        .iter()
        .filter(|(_, _, r)| r.bytes > 0)
        .map(|(_, _, r)| r.clone())
        .collect();
    largest.sort_by_key(|r| std::cmp::Reverse(r.bytes));
    largest.truncate(TOP);

    // Layout shifts of the main frame, and CLS by session windows (1 s gap, 5 s cap).
    let mut layout_shifts = Vec::new();
    let (mut cls, mut window, mut window_start, mut prev) = (0.0_f64, 0.0_f64, f64::MIN, f64::MIN);
    for e in events.iter().filter(|e| e.name == "LayoutShift") {
        if main.is_some_and(|(p, _)| e.pid != p) {
            continue;
        }
        let data = &e.args["data"];
        if data["had_recent_input"].as_bool() == Some(true) {
            continue;
        }
        let score = data["weighted_score_delta"]
            .as_f64()
            .or_else(|| data["score"].as_f64())
            .unwrap_or(0.0);
        if e.ts - prev > 1_000_000.0 || e.ts - window_start > 5_000_000.0 {
            window = 0.0;
            window_start = e.ts;
        }
        window += score;
        prev = e.ts;
        cls = cls.max(window);
        let node_ids: Vec<i64> = data["impacted_nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n["node_id"].as_i64())
            .take(5)
            .collect();
        // An image or a font that arrived within the 500 ms before the shift (an image
        // without a size, a web font swapping in).
        let likely_cause = finished
            .iter()
            .rev()
            .find(|(end, mime, _)| {
                *end <= e.ts
                    && e.ts - *end <= 500_000.0
                    && (mime.starts_with("image/") || mime.contains("font"))
            })
            .map(|(_, _, r)| r.url.clone());
        layout_shifts.push(LayoutShift {
            at_ms: since(e.ts),
            score: (score * 10_000.0).round() / 10_000.0,
            elements: Vec::new(),
            node_ids,
            likely_cause,
        });
    }
    layout_shifts.sort_by(|a, b| b.score.total_cmp(&a.score));
    layout_shifts.truncate(TOP);

    TraceFindings {
        duration_ms: ms(last - first),
        marks,
        main_thread,
        total_blocking_ms: (total_blocking * 10.0).round() / 10.0,
        long_tasks,
        render_blocking,
        slowest_requests: slowest,
        largest_requests: largest,
        requests: request_count,
        cls: (cls * 10_000.0).round() / 10_000.0,
        layout_shifts,
    }
}

fn short_url(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or(rest, |i| &rest[i..]);
    crate::text::truncate(path, 80)
}

impl TraceFindings {
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!("trace of {} ms", self.duration_ms);
        if !self.marks.is_empty() {
            let marks: Vec<String> = self
                .marks
                .iter()
                .map(|(n, t)| format!("{n} {t} ms"))
                .collect();
            let _ = write!(out, ": {}", marks.join(", "));
        }
        let _ = write!(
            out,
            "\nmain thread: {}",
            self.main_thread
                .iter()
                .map(|c| format!("{} {} ms", c.category, c.ms))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = write!(
            out,
            "\nlong tasks: {} (total blocking time {} ms)",
            self.long_tasks.len(),
            self.total_blocking_ms
        );
        for t in &self.long_tasks {
            let _ = write!(out, "\n  {} ms at {} ms", t.duration_ms, t.start_ms);
            for f in &t.functions {
                let _ = write!(
                    out,
                    "\n    {} {} ms ({})",
                    f.location.to_text(),
                    f.ms,
                    f.kind
                );
            }
        }
        if self.cls > 0.0 || !self.layout_shifts.is_empty() {
            let _ = write!(out, "\nlayout shifts: CLS {}", self.cls);
            for s in &self.layout_shifts {
                let _ = write!(
                    out,
                    "\n  {} at {} ms: {}",
                    s.score,
                    s.at_ms,
                    s.elements.join(", ")
                );
                if let Some(c) = &s.likely_cause {
                    let _ = write!(out, " (after {} loaded)", short_url(c));
                }
            }
        }
        let _ = write!(out, "\nrequests: {}", self.requests);
        if !self.render_blocking.is_empty() {
            out.push_str("\nrender-blocking:");
            for r in &self.render_blocking {
                let _ = write!(
                    out,
                    "\n  {} {} ms, {} (done at {} ms)",
                    short_url(&r.url),
                    r.ms,
                    crate::text::bytes(r.bytes),
                    r.end_ms
                );
            }
        }
        if !self.slowest_requests.is_empty() {
            out.push_str("\nslowest:");
            for r in self.slowest_requests.iter().take(3) {
                let _ = write!(out, "\n  {} {} ms", short_url(&r.url), r.ms);
            }
        }
        if !self.largest_requests.is_empty() {
            out.push_str("\nlargest:");
            for r in self.largest_requests.iter().take(3) {
                let _ = write!(
                    out,
                    "\n  {} {}",
                    short_url(&r.url),
                    crate::text::bytes(r.bytes)
                );
            }
        }
        out
    }
}

/// The functions a CPU profile spent the most time in.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileFindings {
    pub duration_ms: f64,
    /// Time the page's JavaScript ran (not idle, not the engine's own work).
    pub busy_ms: f64,
    /// Garbage collection.
    pub gc_ms: f64,
    /// By self time, most first.
    pub functions: Vec<ProfiledFunction>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfiledFunction {
    pub location: CodeLocation,
    pub self_ms: f64,
    /// Time in it and what it called.
    pub total_ms: f64,
}

impl ProfileFindings {
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!(
            "CPU profile of {} ms: JavaScript {} ms, GC {} ms",
            self.duration_ms, self.busy_ms, self.gc_ms
        );
        for f in &self.functions {
            let _ = write!(
                out,
                "\n  {} ms self, {} ms total  {}",
                f.self_ms,
                f.total_ms,
                f.location.to_text()
            );
        }
        out
    }
}

/// Reduces a `Profiler.stop` profile to its top functions by self time.
pub(crate) fn reduce_profile(profile: &Value, top: usize) -> ProfileFindings {
    let nodes = items(&profile["nodes"]);
    let samples = items(&profile["samples"]);
    let deltas = items(&profile["timeDeltas"]);
    let index: HashMap<i64, usize> = nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n["id"].as_i64().map(|id| (id, i)))
        .collect();
    let mut parent: Vec<Option<usize>> = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for c in n["children"].as_array().into_iter().flatten() {
            if let Some(&ci) = c.as_i64().and_then(|c| index.get(&c)) {
                parent[ci] = Some(i);
            }
        }
    }
    // A sample's time is the gap to the next sample.
    let mut self_us = vec![0.0_f64; nodes.len()];
    for (i, s) in samples.iter().enumerate() {
        let gap = deltas
            .get(i + 1)
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
            .max(0.0);
        if let Some(&n) = s.as_i64().and_then(|s| index.get(&s)) {
            self_us[n] += gap;
        }
    }
    let key = |n: &Value| CodeLocation::of_call_frame(&n["callFrame"]);
    let (mut busy, mut gc) = (0.0, 0.0);
    let mut by_function: Vec<(CodeLocation, f64, f64)> = Vec::new();
    let mut slot: HashMap<(String, String, u32, u32), usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let loc = key(n);
        match loc.function.as_str() {
            "(idle)" | "(program)" | "(root)" => continue,
            "(garbage collector)" => {
                gc += self_us[i];
                continue;
            }
            _ => busy += self_us[i],
        }
        let k = (loc.function.clone(), loc.url.clone(), loc.line, loc.column);
        let at = *slot.entry(k).or_insert_with(|| {
            by_function.push((loc, 0.0, 0.0));
            by_function.len() - 1
        });
        by_function[at].1 += self_us[i];
    }
    // Total time: a node's self time counts for it and every different function above it.
    for (i, own) in self_us.iter().enumerate() {
        if *own == 0.0 {
            continue;
        }
        let mut seen: Vec<usize> = Vec::new();
        let mut at = Some(i);
        while let Some(j) = at {
            let loc = key(&nodes[j]);
            let k = (loc.function, loc.url, loc.line, loc.column);
            if let Some(&s) = slot.get(&k)
                && !seen.contains(&s)
            {
                by_function[s].2 += own;
                seen.push(s);
            }
            at = parent[j];
        }
    }
    by_function.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_function.truncate(top);
    let start = profile["startTime"].as_f64().unwrap_or(0.0);
    let end = profile["endTime"].as_f64().unwrap_or(start);
    ProfileFindings {
        duration_ms: ms(end - start),
        busy_ms: ms(busy),
        gc_ms: ms(gc),
        functions: by_function
            .into_iter()
            .filter(|(_, s, _)| *s > 0.0)
            .map(|(location, s, t)| ProfiledFunction {
                location,
                self_ms: ms(s),
                total_ms: ms(t),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(name: &str, ts: f64, dur: Option<f64>, args: Value) -> TraceEvent {
        TraceEvent {
            name: name.into(),
            ph: if dur.is_some() {
                "X".into()
            } else {
                "I".into()
            },
            ts,
            dur,
            pid: 1,
            tid: 7,
            args,
            id: None,
        }
    }

    #[test]
    fn a_trace_becomes_findings() {
        let mut events = vec![
            TraceEvent {
                name: "thread_name".into(),
                ph: "M".into(),
                ts: 0.0,
                dur: None,
                pid: 1,
                tid: 7,
                args: json!({"name": "CrRendererMain"}),
                id: None,
            },
            ev("navigationStart", 1_000_000.0, None, json!({})),
            ev(
                "ResourceSendRequest",
                1_001_000.0,
                None,
                json!({"data": {"requestId": "1", "url": "http://x/app.css", "renderBlocking": "blocking"}}),
            ),
            ev(
                "ResourceFinish",
                1_201_000.0,
                None,
                json!({"data": {"requestId": "1", "encodedDataLength": 2048}}),
            ),
            ev("RunTask", 1_300_000.0, Some(120_000.0), json!({})),
            ev(
                "FunctionCall",
                1_300_100.0,
                Some(119_000.0),
                json!({"data": {"functionName": "busy", "url": "http://x/app.js", "lineNumber": 12, "columnNumber": 3}}),
            ),
            ev("Layout", 1_420_200.0, Some(5_000.0), json!({})),
            ev(
                "LayoutShift",
                1_500_000.0,
                None,
                json!({"data": {"weighted_score_delta": 0.25, "impacted_nodes": [{"node_id": 42}]}}),
            ),
            ev("firstContentfulPaint", 1_250_000.0, None, json!({})),
        ];
        events.reverse();
        let f = reduce(events);
        assert_eq!(f.long_tasks.len(), 1);
        assert_eq!(f.long_tasks[0].duration_ms, 120.0);
        assert_eq!(f.total_blocking_ms, 70.0);
        let top = &f.long_tasks[0].functions[0];
        assert_eq!(
            (top.location.function.as_str(), top.location.line),
            ("busy", 12)
        );
        assert_eq!(f.render_blocking.len(), 1);
        assert_eq!(f.render_blocking[0].ms, 200.0);
        assert_eq!(f.cls, 0.25);
        assert_eq!(f.layout_shifts[0].node_ids, [42]);
        assert_eq!(f.marks[0], ("FCP".to_string(), 250.0));
        assert_eq!(f.main_thread[0].category, "scripting");
        assert_eq!(f.main_thread[0].ms, 119.0);
        let text = f.to_text();
        assert!(text.contains("busy app.js:12:3"), "{text}");
    }

    #[test]
    fn a_profile_ranks_functions_by_self_time() {
        let profile = json!({
            "nodes": [
                {"id": 1, "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1, "columnNumber": -1}, "children": [2, 4]},
                {"id": 2, "callFrame": {"functionName": "outer", "url": "http://x/a.js", "lineNumber": 0, "columnNumber": 0}, "children": [3]},
                {"id": 3, "callFrame": {"functionName": "inner", "url": "http://x/a.js", "lineNumber": 9, "columnNumber": 4}},
                {"id": 4, "callFrame": {"functionName": "(idle)", "url": "", "lineNumber": -1, "columnNumber": -1}}
            ],
            "samples": [3, 3, 2, 4, 3],
            "timeDeltas": [0, 1000, 1000, 1000, 1000],
            "startTime": 0, "endTime": 5000
        });
        let p = reduce_profile(&profile, 5);
        assert_eq!(p.functions[0].location.function, "inner");
        assert_eq!(p.functions[0].self_ms, 2.0);
        assert_eq!(p.functions[0].location.line, 10);
        assert_eq!(p.functions[1].location.function, "outer");
        assert_eq!(p.functions[1].total_ms, 3.0);
        assert_eq!(p.busy_ms, 3.0);
    }
}
