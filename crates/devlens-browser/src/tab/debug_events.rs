//! The debugger's event pump: `Debugger.paused` / `resumed` / `scriptParsed` kept in the tab's
//! debugger record and its blocker, source maps loaded as scripts arrive, and breakpoints waiting
//! for an original source bound once its map is there.

use std::sync::{Arc, Weak};
use std::time::Duration;

use chromiumoxide::cdp::js_protocol::debugger::{
    EventPaused, EventResumed, EventScriptParsed, PausedReason,
};
use futures::StreamExt;
use futures::stream::{BoxStream, select_all};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::debugger::{
    BreakpointRequest, DebuggerState, NOT_PAUSED, PauseInfo, SCRIPT_URLS, UNKNOWN_SCRIPT_WAIT, num,
    pause_reason, state_error,
};
use crate::records::sourcemap::{MapState, ScriptMap};
use crate::records::{Blocker, TabState, sourcemap};
use crate::tab::cdp::Raw;
use crate::tab::sourcemaps;
use crate::tab::targets::Tab;
use crate::text::short_url;

pub(crate) enum DebugEvent {
    Paused(Arc<EventPaused>),
    Resumed,
    Script(Arc<EventScriptParsed>),
}

/// The listener: keeps the pause state and the tab's blocker in line with the page.
pub(crate) fn record(state: &TabState, event: DebugEvent) {
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
pub(crate) fn clear_paused(state: &TabState) {
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
        sourcemaps::load(&page, job.frame.as_deref(), &job.url, &job.map_url),
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
pub(crate) async fn wait_for_maps(
    state: &TabState,
    scripts: &[String],
    limit: Duration,
    unknown: bool,
) {
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
pub(crate) async fn stop_instrumentation_if_idle(page: &chromiumoxide::Page, state: &TabState) {
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
pub(crate) fn plan_original(
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
pub(crate) fn original_params(
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
pub(crate) fn record_bound(state: &TabState, id: &str, answer: &Value, page_url: &str) {
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
pub(crate) fn describe_location(
    d: &DebuggerState,
    l: &Value,
    page_url: &str,
) -> (String, Option<String>) {
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

impl Tab {
    pub(crate) async fn ensure_debugger(&self) -> Result<()> {
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
    pub(crate) fn paused_raw(&self) -> Result<Arc<Value>> {
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

    /// The current pause's number (pauses are counted from the first), or `None` while the
    /// page runs: how a live view tells a new pause (after a step) from the one it shows.
    pub fn pause_number(&self) -> Option<u64> {
        let d = self.state().debugger_mut();
        d.paused.is_some().then_some(d.pause_seq)
    }

    /// Waits (at most `limit`) for source maps still loading.
    pub(crate) async fn wait_maps(&self, limit: Duration) {
        wait_for_maps(self.state(), &[], limit, false).await;
    }

    /// Where a generated position comes from, when its script's source map knows.
    pub(crate) fn original_of(
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
    pub(crate) async fn original_source(&self, map: &ScriptMap, source: usize) -> Result<Arc<str>> {
        let url = map.map.sources.get(source).cloned().unwrap_or_default();
        if let Some(text) = self.state().debugger_mut().maps.fetched(&url) {
            return Ok(text);
        }
        let frame = self.state().page_state().main_frame.clone();
        let text = sourcemaps::original_text(self.page(), frame.as_deref(), map, source)
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
}
