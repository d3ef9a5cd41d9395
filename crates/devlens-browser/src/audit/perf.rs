//! Performance: web vitals of a load or of the interactions since, a trace reduced to
//! findings, and a CPU profile — of a reload, or between a `start` and a `stop` around whatever
//! the agent does meanwhile (clicks, typing, navigation). The tab's emulated CPU and network
//! throttling apply.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::tracing::EventTracingComplete;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::act::navigate::Navigation;
use crate::error::{BrowserError, Result};
use crate::records::sourcemap::SourceMap;
use crate::records::trace::{self, CodeLocation, ProfileFindings, TraceFindings};
use crate::tab::artifacts::StreamedFile;
use crate::tab::cdp::Raw;
use crate::tab::sourcemaps;
use crate::tab::targets::Tab;

/// What a recording does: around a reload (default), or start now / stop and report.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    #[default]
    Reload,
    Start,
    Stop,
}

/// How long a reload may take before the recording stops anyway.
const LOAD_LIMIT: Duration = Duration::from_secs(30);
/// After the load, how long the page must stay quiet (no new entries) before measuring.
const SETTLE: Duration = Duration::from_millis(500);
const SETTLE_LIMIT: Duration = Duration::from_secs(5);
/// Functions a profile lists by default and at most.
const DEFAULT_TOP: usize = 10;
const MAX_TOP: usize = 30;

/// Categories DevTools' performance panel records; the CPU sampler names the function a long
/// task spent its time in, below the entry point the timeline events give.
const TRACE_CATEGORIES: &[&str] = &[
    "disabled-by-default-v8.cpu_profiler",
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.frame",
    "devtools.timeline.frame",
    "toplevel",
    "blink.user_timing",
    "loading",
    "rail",
    "latencyInfo",
    "v8.execute",
];

/// Observes the page's performance entries from the first byte; kept on a hidden global.
const VITALS_SCRIPT: &str = r#"
(() => {
  if (window.__devlensVitals) return;
  const v = { lcp: null, cls: 0, shifts: [], fcp: null, interactions: new Map(), longTasks: [], frames: [] };
  Object.defineProperty(window, '__devlensVitals', { value: v, enumerable: false });
  v.changed = performance.now();
  const describe = (n) => {
    if (!n || n.nodeType !== 1) return null;
    let s = n.tagName.toLowerCase();
    if (n.id) s += '#' + n.id;
    else if (n.classList.length) s += '.' + Array.from(n.classList).slice(0, 2).join('.');
    return s;
  };
  const observe = (type, cb, extra) => {
    try {
      new PerformanceObserver((list) => { v.changed = performance.now(); list.getEntries().forEach(cb); })
        .observe(Object.assign({ type, buffered: true }, extra || {}));
    } catch (e) {}
  };
  observe('paint', (e) => { if (e.name === 'first-contentful-paint') v.fcp = e.startTime; });
  observe('largest-contentful-paint', (e) => {
    v.lcp = { time: e.startTime, element: describe(e.element), url: e.url || null, size: e.size };
  });
  let win = 0, winStart = -1e9, prev = -1e9;
  observe('layout-shift', (e) => {
    if (e.hadRecentInput) return;
    if (e.startTime - prev > 1000 || e.startTime - winStart > 5000) { win = 0; winStart = e.startTime; }
    win += e.value; prev = e.startTime; v.cls = Math.max(v.cls, win);
    v.shifts.push({ time: e.startTime, value: e.value,
      elements: (e.sources || []).map((s) => describe(s.node)).filter(Boolean).slice(0, 3) });
  });
  const interaction = (e) => {
    const id = e.interactionId || (e.entryType === 'first-input' ? -1 : 0);
    if (!id) return;
    const old = v.interactions.get(id);
    const target = describe(e.target) || (old && old.target);
    if (old && old.duration >= e.duration) { old.target = old.target || target; return; }
    v.interactions.set(id, { duration: e.duration, type: e.name, target,
      time: e.startTime, inputDelay: e.processingStart - e.startTime,
      processing: e.processingEnd - e.processingStart,
      presentation: e.startTime + e.duration - e.processingEnd });
  };
  observe('event', interaction, { durationThreshold: 16 });
  observe('first-input', interaction);
  observe('longtask', (e) => v.longTasks.push({ time: e.startTime, duration: e.duration }));
  observe('long-animation-frame', (e) => v.frames.push({ time: e.startTime, duration: e.duration,
    blocking: e.blockingDuration,
    scripts: (e.scripts || []).slice(0, 5).map((s) => ({ fn: s.sourceFunctionName || '', url: s.sourceURL || '',
      pos: s.sourceCharPosition, invoker: s.invoker || '', duration: s.duration })) }));
})()
"#;

/// The vitals so far, with web-vitals' semantics (INP: the worst interaction, one skipped per 50).
const READ_VITALS: &str = r#"
(() => {
  const v = window.__devlensVitals;
  if (!v) return null;
  const nav = performance.getEntriesByType('navigation')[0];
  const ttfb = nav ? Math.max(nav.responseStart - (nav.activationStart || 0), 0) : null;
  const all = Array.from(v.interactions.values()).sort((a, b) => b.duration - a.duration);
  const inp = all.length ? all[Math.min(Math.floor(all.length / 50), all.length - 1)] : null;
  let tbt = 0;
  // Lighthouse's rule: the part of each long task after FCP, less 50 ms.
  for (const t of v.longTasks) {
    const start = v.fcp === null ? t.time : Math.max(t.time, v.fcp);
    tbt += Math.max(0, t.time + t.duration - start - 50);
  }
  return { url: location.href, ttfb, fcp: v.fcp, lcp: v.lcp, cls: v.cls,
    shifts: v.shifts.sort((a, b) => b.value - a.value).slice(0, 5),
    inp, interactions: all.length, tbt, longTasks: v.longTasks.length,
    frames: v.frames.sort((a, b) => b.blocking - a.blocking).slice(0, 5),
    quietMs: performance.now() - v.changed };
})()
"#;

/// Largest contentful paint and its element.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LcpEntry {
    #[serde(rename = "time")]
    pub ms: f64,
    pub element: Option<String>,
    /// The image's URL when the element is an image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A layout shift and the elements that moved.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShiftEntry {
    #[serde(rename = "time")]
    pub at_ms: f64,
    pub value: f64,
    pub elements: Vec<String>,
}

/// The slowest interaction (INP).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InteractionEntry {
    pub duration: f64,
    /// `pointerdown`, `click`, `keydown` …
    #[serde(rename = "type")]
    pub event: String,
    pub target: Option<String>,
    pub input_delay: f64,
    pub processing: f64,
    pub presentation: f64,
}

/// A long animation frame and the scripts that made it long.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlowFrame {
    pub at_ms: f64,
    pub duration_ms: f64,
    /// Time over 50 ms that blocked input.
    pub blocking_ms: f64,
    pub scripts: Vec<SlowScript>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlowScript {
    /// What ran it: `BUTTON#go.onclick`, `TimerHandler:setTimeout`, a script URL …
    pub invoker: String,
    pub location: CodeLocation,
    pub ms: f64,
}

/// Web vitals of the page's load and the interactions since.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Vitals {
    pub url: String,
    /// Time to first byte.
    pub ttfb_ms: Option<f64>,
    /// First contentful paint.
    pub fcp_ms: Option<f64>,
    pub lcp: Option<LcpEntry>,
    /// Cumulative layout shift (largest session window).
    pub cls: f64,
    /// The largest shifts.
    pub shifts: Vec<ShiftEntry>,
    /// Interaction to next paint; none until the page has been interacted with.
    pub inp: Option<InteractionEntry>,
    pub interactions: usize,
    /// Total blocking time after the first contentful paint.
    pub tbt_ms: f64,
    pub long_tasks: usize,
    /// The long animation frames that blocked most, with their scripts.
    pub slow_frames: Vec<SlowFrame>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// web-vitals' thresholds: good up to the first, poor from the second.
fn rate(value: f64, good: f64, poor: f64) -> &'static str {
    if value <= good {
        "good"
    } else if value <= poor {
        "needs improvement"
    } else {
        "poor"
    }
}

impl Vitals {
    pub fn to_text(&self) -> String {
        let mut out = format!("vitals of {}", self.url);
        if let Some(l) = &self.lcp {
            let _ = write!(out, "\nLCP {:.0} ms ({})", l.ms, rate(l.ms, 2500.0, 4000.0));
            if let Some(e) = &l.element {
                let _ = write!(out, ": {e}");
            }
            if let Some(u) = &l.url {
                let _ = write!(out, " {u}");
            }
        }
        let _ = write!(out, "\nCLS {:.3} ({})", self.cls, rate(self.cls, 0.1, 0.25));
        for s in &self.shifts {
            let _ = write!(
                out,
                "\n  {:.3} at {:.0} ms: {}",
                s.value,
                s.at_ms,
                s.elements.join(", ")
            );
        }
        match &self.inp {
            Some(i) => {
                let _ = write!(
                    out,
                    "\nINP {:.0} ms ({}): {} on {} (input delay {:.0}, processing {:.0}, presentation {:.0}); {} interaction(s)",
                    i.duration,
                    rate(i.duration, 200.0, 500.0),
                    i.event,
                    i.target.as_deref().unwrap_or("?"),
                    i.input_delay,
                    i.processing,
                    i.presentation,
                    self.interactions
                );
            }
            None => out.push_str(
                "\nINP: no interaction yet (interact, then measure again without reload)",
            ),
        }
        let _ = write!(
            out,
            "\nTBT {:.0} ms, {} long task(s)",
            self.tbt_ms, self.long_tasks
        );
        if let Some(f) = self.fcp_ms {
            let _ = write!(out, "; FCP {f:.0} ms ({})", rate(f, 1800.0, 3000.0));
        }
        if let Some(t) = self.ttfb_ms {
            let _ = write!(out, "; TTFB {t:.0} ms");
        }
        for f in &self.slow_frames {
            let _ = write!(
                out,
                "\nslow frame at {:.0} ms: {:.0} ms ({:.0} blocking)",
                f.at_ms, f.duration_ms, f.blocking_ms
            );
            for s in &f.scripts {
                let _ = write!(
                    out,
                    "\n  {} {:.0} ms ({})",
                    s.location.to_text(),
                    s.ms,
                    s.invoker
                );
            }
        }
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

/// A trace's findings, or the news that one is recording.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceReport {
    #[serde(flatten)]
    pub findings: TraceFindings,
    /// Where the raw trace was saved (DevTools' Performance panel opens it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved: Option<PathBuf>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl TraceReport {
    pub fn to_text(&self) -> String {
        let mut out = self.findings.to_text();
        if let Some(p) = &self.saved {
            let _ = write!(
                out,
                "\nsaved to {} (open it in DevTools' Performance panel)",
                p.display()
            );
        }
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

/// A recording started with `phase: start`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordingStarted {
    /// trace or profile.
    pub recording: String,
}

impl RecordingStarted {
    pub fn to_text(&self) -> String {
        format!(
            "{} recording: act on the page now (click, type, navigate), then call again with phase stop",
            self.recording
        )
    }
}

/// What a trace or profile call answers.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Recorded<T> {
    Started(RecordingStarted),
    Done(T),
}

impl Tab {
    /// Web vitals of a fresh load (`reload`), or of the page as it is, with the interactions
    /// since it loaded.
    pub async fn vitals(&self, reload: bool) -> Result<Vitals> {
        self.guard_running("measuring vitals")?;
        let mut notes = Vec::new();
        if reload {
            let added = self
                .call(Raw::new(
                    "Page.addScriptToEvaluateOnNewDocument",
                    json!({ "source": VITALS_SCRIPT }),
                ))
                .await?;
            let reloaded = self.navigate(&Navigation::Reload, Some(LOAD_LIMIT)).await;
            if let Some(id) = added["identifier"].as_str() {
                let _ = self
                    .call(Raw::new(
                        "Page.removeScriptToEvaluateOnNewDocument",
                        json!({ "identifier": id }),
                    ))
                    .await;
            }
            reloaded?;
        } else {
            // Buffered observers still see the load's paints, shifts and interactions.
            let v = self.eval_raw(VITALS_SCRIPT, true).await?;
            if v.get("exceptionDetails").is_some() {
                return Err(BrowserError::protocol(
                    "starting the vitals observers",
                    "the page refused the script",
                ));
            }
            notes.push("measured the page as it is; long tasks before this call are not counted (measure with reload for a load)".into());
        }
        let raw = self.settled_vitals().await?;
        let mut vitals = Vitals {
            url: raw["url"].as_str().unwrap_or_default().to_string(),
            ttfb_ms: raw["ttfb"].as_f64().map(round1),
            fcp_ms: raw["fcp"].as_f64().map(round1),
            lcp: serde_json::from_value(raw["lcp"].clone()).ok(),
            cls: (raw["cls"].as_f64().unwrap_or(0.0) * 10_000.0).round() / 10_000.0,
            shifts: serde_json::from_value(raw["shifts"].clone()).unwrap_or_default(),
            inp: serde_json::from_value(raw["inp"].clone()).ok(),
            interactions: raw["interactions"].as_u64().unwrap_or(0) as usize,
            tbt_ms: round1(raw["tbt"].as_f64().unwrap_or(0.0)),
            long_tasks: raw["longTasks"].as_u64().unwrap_or(0) as usize,
            slow_frames: Vec::new(),
            notes,
        };
        let mut maps = MapCache::default();
        for f in raw["frames"].as_array().into_iter().flatten() {
            let mut scripts = Vec::new();
            for s in f["scripts"].as_array().into_iter().flatten() {
                let url = s["url"].as_str().unwrap_or_default().to_string();
                let pos = s["pos"].as_i64().unwrap_or(-1);
                let (line, column) = self.char_position(&mut maps, &url, pos).await;
                let mut location = CodeLocation {
                    function: s["fn"].as_str().unwrap_or_default().to_string(),
                    url,
                    line,
                    column,
                    original: None,
                };
                self.map_location(&mut maps, &mut location).await;
                scripts.push(SlowScript {
                    invoker: s["invoker"].as_str().unwrap_or_default().to_string(),
                    location,
                    ms: round1(s["duration"].as_f64().unwrap_or(0.0)),
                });
            }
            vitals.slow_frames.push(SlowFrame {
                at_ms: round1(f["time"].as_f64().unwrap_or(0.0)),
                duration_ms: round1(f["duration"].as_f64().unwrap_or(0.0)),
                blocking_ms: round1(f["blocking"].as_f64().unwrap_or(0.0)),
                scripts,
            });
        }
        vitals.slow_frames.retain(|f| f.blocking_ms > 0.0);
        Ok(vitals)
    }

    /// Reads the vitals once the page has been quiet for a moment (late paints and shifts).
    async fn settled_vitals(&self) -> Result<Value> {
        let start = Instant::now();
        loop {
            let v = self.eval_raw(READ_VITALS, true).await?;
            let raw = v["result"]["value"].clone();
            if raw.is_null() {
                return Err(BrowserError::protocol(
                    "reading the vitals",
                    "the page has no vitals observer (it navigated meanwhile?); measure again",
                ));
            }
            let quiet = raw["quietMs"].as_f64().unwrap_or(f64::MAX);
            if quiet >= SETTLE.as_millis() as f64 || start.elapsed() >= SETTLE_LIMIT {
                return Ok(raw);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Records a trace: around a reload, or from `start` to `stop`. The raw trace is kept at
    /// `save_to` when given.
    pub async fn trace(
        &self,
        phase: Phase,
        save_to: Option<&Path>,
    ) -> Result<Recorded<TraceReport>> {
        self.guard_running("tracing")?;
        match phase {
            Phase::Start => {
                self.start_tracing().await?;
                Ok(Recorded::Started(RecordingStarted {
                    recording: "trace".into(),
                }))
            }
            Phase::Stop => Ok(Recorded::Done(
                self.stop_tracing(save_to, Vec::new()).await?,
            )),
            Phase::Reload => {
                self.start_tracing().await?;
                let mut notes = Vec::new();
                if let Err(e) = self.navigate(&Navigation::Reload, Some(LOAD_LIMIT)).await {
                    notes.push(format!("the reload did not finish: {e}"));
                }
                // Late work after load (lazy images, hydration) belongs to the load.
                tokio::time::sleep(Duration::from_millis(500)).await;
                Ok(Recorded::Done(self.stop_tracing(save_to, notes).await?))
            }
        }
    }

    async fn start_tracing(&self) -> Result<()> {
        let started = self
            .call(Raw::new(
                "Tracing.start",
                json!({
                    "traceConfig": {
                        "recordMode": "recordAsMuchAsPossible",
                        "includedCategories": TRACE_CATEGORIES,
                        "excludedCategories": ["*"],
                    },
                    "transferMode": "ReturnAsStream",
                    "streamFormat": "json",
                    "streamCompression": "none",
                }),
            ))
            .await;
        match started {
            Err(BrowserError::Protocol { message, .. }) if message.contains("already") => {
                Err(BrowserError::InvalidInput(
                    "a trace is already recording (Chrome records one at a time, in any tab): stop it first (phase stop)".into(),
                ))
            }
            other => other.map(drop),
        }
    }

    async fn stop_tracing(
        &self,
        save_to: Option<&Path>,
        mut notes: Vec<String>,
    ) -> Result<TraceReport> {
        let mut complete = self
            .page()
            .event_listener::<EventTracingComplete>()
            .await
            .map_err(|e| self.map_err("Tracing.end", e))?;
        match self.call(Raw::new("Tracing.end", json!({}))).await {
            Err(BrowserError::Protocol { message, .. }) if message.contains("not started") => {
                return Err(BrowserError::InvalidInput(
                    "no trace is recording: start one with phase start, or trace a reload (phase reload)".into(),
                ));
            }
            other => other.map(drop)?,
        }
        let done = tokio::time::timeout(crate::tab::cdp::REQUEST_TIMEOUT, complete.next())
            .await
            .ok()
            .flatten()
            .ok_or_else(|| BrowserError::protocol("Tracing.end", "the trace never arrived"))?;
        if done.data_loss_occurred {
            notes.push("Chrome's trace buffer overflowed: the start of the recording is missing; record a shorter span".into());
        }
        let handle = done
            .stream
            .as_ref()
            .map(|h| h.inner().clone())
            .ok_or_else(|| BrowserError::protocol("Tracing.end", "no trace stream"))?;
        // The trace goes to a file as it streams: it is read back once, never held twice.
        let mut out = self.stream_file(save_to).await?;
        self.read_stream(&handle, &mut out).await?;
        let file = out.finish().await?;
        let events = tokio::task::spawn_blocking(move || trace::read_trace(file))
            .await
            .map_err(|e| BrowserError::protocol("reading the trace", e.to_string()))?
            .map_err(|e| BrowserError::protocol("reading the trace", e))?;
        let mut findings = tokio::task::spawn_blocking(move || trace::reduce(events))
            .await
            .map_err(|e| BrowserError::protocol("reducing the trace", e.to_string()))?;
        for shift in &mut findings.layout_shifts {
            for id in &shift.node_ids {
                if let Some(d) = self.describe_backend(*id).await {
                    shift.elements.push(d);
                }
            }
        }
        let mut maps = MapCache::default();
        for task in &mut findings.long_tasks {
            for f in &mut task.functions {
                self.map_location(&mut maps, &mut f.location).await;
            }
        }
        Ok(TraceReport {
            findings,
            saved: save_to.map(Path::to_path_buf),
            notes,
        })
    }

    async fn read_stream(&self, handle: &str, out: &mut StreamedFile) -> Result<()> {
        loop {
            let chunk = self
                .call(Raw::new(
                    "IO.read",
                    json!({ "handle": handle, "size": 1 << 20 }),
                ))
                .await?;
            let data = chunk["data"].as_str().unwrap_or_default();
            if chunk["base64Encoded"].as_bool() == Some(true) {
                let bytes = crate::records::sourcemap::base64_decode(data)
                    .map_err(|e| BrowserError::protocol("reading the trace", e))?;
                out.write(&bytes).await?;
            } else {
                out.write(data.as_bytes()).await?;
            }
            if chunk["eof"].as_bool() != Some(false) {
                break;
            }
        }
        let _ = self
            .call(Raw::new("IO.close", json!({ "handle": handle })))
            .await;
        Ok(())
    }

    /// `tag#id.class` of a node by backend id, when it still exists.
    async fn describe_backend(&self, backend: i64) -> Option<String> {
        let v = self
            .call(Raw::new(
                "DOM.describeNode",
                json!({ "backendNodeId": backend }),
            ))
            .await
            .ok()?;
        let node = &v["node"];
        let mut s = node["localName"]
            .as_str()
            .filter(|n| !n.is_empty())?
            .to_string();
        let attrs: Vec<&str> = node["attributes"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for pair in attrs.chunks(2) {
            match pair {
                ["id", id] if !id.is_empty() => {
                    let _ = write!(s, "#{id}");
                    return Some(s);
                }
                ["class", c] => {
                    for class in c.split_whitespace().take(2) {
                        let _ = write!(s, ".{class}");
                    }
                }
                _ => {}
            }
        }
        Some(s)
    }

    /// Records a CPU profile: around a reload, or from `start` to `stop`.
    pub async fn cpu_profile(
        &self,
        phase: Phase,
        top: Option<usize>,
    ) -> Result<Recorded<ProfileFindings>> {
        self.guard_running("profiling")?;
        let top = top.unwrap_or(DEFAULT_TOP).clamp(1, MAX_TOP);
        match phase {
            Phase::Start => {
                self.start_profiler().await?;
                Ok(Recorded::Started(RecordingStarted {
                    recording: "profile".into(),
                }))
            }
            Phase::Stop => Ok(Recorded::Done(self.stop_profiler(top).await?)),
            Phase::Reload => {
                self.start_profiler().await?;
                let reloaded = self.navigate(&Navigation::Reload, Some(LOAD_LIMIT)).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
                let found = self.stop_profiler(top).await;
                reloaded?;
                Ok(Recorded::Done(found?))
            }
        }
    }

    async fn start_profiler(&self) -> Result<()> {
        self.call(Raw::new("Profiler.enable", json!({}))).await?;
        // 100 µs samples: short functions show up without flooding the profile.
        self.call(Raw::new(
            "Profiler.setSamplingInterval",
            json!({ "interval": 100 }),
        ))
        .await?;
        self.call(Raw::new("Profiler.start", json!({})))
            .await
            .map(drop)
    }

    async fn stop_profiler(&self, top: usize) -> Result<ProfileFindings> {
        let stopped = match self.call(Raw::new("Profiler.stop", json!({}))).await {
            Err(BrowserError::Protocol { message, .. })
                if message.contains("No recording") || message.contains("not started") =>
            {
                return Err(BrowserError::InvalidInput(
                    "no profile is recording: start one with phase start, or profile a reload (phase reload)".into(),
                ));
            }
            other => other?,
        };
        let mut found = trace::reduce_profile(&stopped["profile"], top);
        let mut maps = MapCache::default();
        for f in &mut found.functions {
            self.map_location(&mut maps, &mut f.location).await;
        }
        Ok(found)
    }

    /// 1-based line and column of a character offset in a script (long animation frames give
    /// offsets).
    async fn char_position(&self, maps: &mut MapCache, url: &str, pos: i64) -> (u32, u32) {
        if pos < 0 || url.is_empty() {
            return (0, 0);
        }
        let text = match maps.texts.get(url) {
            Some(t) => t.clone(),
            None => {
                let frame = self.state().page_state().main_frame.clone();
                let t = sourcemaps::script_text(self.page(), frame.as_deref(), url)
                    .await
                    .ok();
                maps.texts.insert(url.to_string(), t.clone());
                t
            }
        };
        let Some(text) = text else { return (0, 0) };
        let mut line = 1;
        let mut column = 1;
        for (i, c) in text.chars().enumerate() {
            if i as i64 >= pos {
                break;
            }
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        (line, column)
    }

    /// Fills `original` from the script's source map: the debugger's when it has loaded one,
    /// else the map the script names.
    async fn map_location(&self, maps: &mut MapCache, loc: &mut CodeLocation) {
        if loc.url.is_empty() || loc.line == 0 {
            return;
        }
        let (line0, col0) = (loc.line - 1, loc.column.saturating_sub(1));
        if let Some((map, pos)) = self.original_of(&loc.url, line0, col0) {
            let source = map.map.sources.get(pos.source).cloned().unwrap_or_default();
            loc.original = Some(format!(
                "{}:{}:{}",
                short_source(&source),
                pos.line + 1,
                pos.column + 1
            ));
            return;
        }
        if !maps.maps.contains_key(&loc.url) {
            let frame = self.state().page_state().main_frame.clone();
            let map = sourcemaps::script_map(self.page(), frame.as_deref(), &loc.url)
                .await
                .ok();
            maps.maps.insert(loc.url.clone(), map);
        }
        if let Some(Some(map)) = maps.maps.get(&loc.url)
            && let Some(pos) = map.original(line0, col0)
        {
            let source = map.sources.get(pos.source).cloned().unwrap_or_default();
            loc.original = Some(format!(
                "{}:{}:{}",
                short_source(&source),
                pos.line + 1,
                pos.column + 1
            ));
        }
    }
}

/// Source maps and script texts loaded during one call.
#[derive(Default)]
struct MapCache {
    maps: HashMap<String, Option<SourceMap>>,
    texts: HashMap<String, Option<String>>,
}

/// `webpack://app/./src/App.tsx` → `src/App.tsx`; a URL → its path.
fn short_source(source: &str) -> String {
    let rest = source.split_once("://").map_or(source, |(_, r)| r);
    let path = match source.split_once("://") {
        Some(_) => rest.find('/').map_or(rest, |i| &rest[i + 1..]),
        None => rest,
    };
    path.trim_start_matches("./").to_string()
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_read_short() {
        assert_eq!(short_source("webpack://app/./src/App.tsx"), "src/App.tsx");
        assert_eq!(
            short_source("http://127.0.0.1:5173/src/main.ts"),
            "src/main.ts"
        );
        assert_eq!(short_source("src/x.js"), "src/x.js");
    }

    #[test]
    fn ratings_follow_web_vitals() {
        assert_eq!(rate(2400.0, 2500.0, 4000.0), "good");
        assert_eq!(rate(0.2, 0.1, 0.25), "needs improvement");
        assert_eq!(rate(600.0, 200.0, 500.0), "poor");
    }
}
