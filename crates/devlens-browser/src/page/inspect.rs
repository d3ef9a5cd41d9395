//! Inspecting a paused page: the pause context (where, the source around it, the call stack,
//! locals, recent console), the call stack, and evaluation in a call frame.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::console::{ConsoleLevel, format_value};
use crate::records::debugger::{
    CONTEXT_CONSOLE, CONTEXT_FRAMES, CONTEXT_LOCALS, CallStack, EVAL_VALUE_CHARS, FrameEvaluation,
    GeneratedLocation, MAP_WAIT, PauseContext, SOURCE_CACHE, STACK_FRAMES, SourceLocation,
    StackFrame, VALUE_CHARS, Variable, excerpt, frame_key, num, pause_reason, state_error,
};
use crate::tab::cdp::Raw;
use crate::tab::debug_events::wait_for_maps;
use crate::tab::targets::Tab;
use crate::text::{collapse, short_url, truncate};

impl Tab {
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

    /// The pause context for an onlooker (the dev panel): the same answer as
    /// [`Self::pause_context`], but the locals it saw are not remembered, so the agent's next
    /// step still marks what that step changed.
    pub async fn peek_pause_context(&self) -> Result<PauseContext> {
        self.context(false, false).await
    }

    pub(crate) async fn build_context(&self, compare: bool) -> Result<PauseContext> {
        self.context(compare, true).await
    }

    /// `compare`: mark the locals that changed since the last remembered context; `remember`:
    /// remember these locals for the next comparison.
    async fn context(&self, compare: bool, remember: bool) -> Result<PauseContext> {
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
            if remember {
                d.last_locals = Some((
                    key,
                    locals
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect(),
                ));
            }
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

    pub(crate) fn frame_location(&self, frame: &Value, page_url: &str) -> SourceLocation {
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
            let (text, _, _) = crate::records::console::exception_parts(d, &self.url());
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
