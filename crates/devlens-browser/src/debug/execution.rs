//! Running and stopping the page: turning the debugger on, resuming, pausing, stepping,
//! pausing on exceptions, waiting for a pause.

use std::time::Duration;

use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::Blocker;
use crate::records::debugger::{
    DEFAULT_PAUSE_WAIT, DebuggerStatus, ExceptionPause, ExecutionOutcome, GLUE_STEPS, MAP_WAIT,
    MAX_PAUSE_WAIT, PAUSE_WAIT, PauseContext, RESUME_WATCH, STEP_WAIT, StepDirection, num,
};
use crate::tab::cdp::Raw;
use crate::tab::debug_events::clear_paused;
use crate::tab::targets::Tab;
use crate::text::short_url;

impl Tab {
    /// Turns the debugger on for this tab (idempotent). Other debugger calls do it themselves.
    pub async fn enable_debugger(&self) -> Result<DebuggerStatus> {
        self.ensure_debugger().await?;
        // The status names the original sources: let the loaded scripts' maps arrive.
        self.wait_maps(MAP_WAIT).await;
        Ok(self.debugger_status())
    }

    pub(crate) fn debugger_status(&self) -> DebuggerStatus {
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

    pub(crate) fn pause_seq(&self) -> u64 {
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
}
