//! Breakpoints: by script URL (or its end) and line, or in an original source through its
//! source map — bound now, or as soon as the map of the script that has it arrives.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::debugger::{
    BreakpointInfo, BreakpointList, BreakpointRequest, BreakpointSet, MAP_WAIT, state_error,
    url_regex,
};
use crate::records::sourcemap::ScriptMap;
use crate::tab::cdp::Raw;
use crate::tab::debug_events::{
    describe_location, original_params, plan_original, record_bound, stop_instrumentation_if_idle,
};
use crate::tab::targets::Tab;
use crate::text::short_url;

impl Tab {
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

    pub(crate) fn locations(&self, locations: Option<&Value>) -> Vec<String> {
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
}
