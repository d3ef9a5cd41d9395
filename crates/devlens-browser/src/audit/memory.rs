//! Memory: what the page holds now (JS heap, DOM nodes, event listeners) and, on request, a heap
//! snapshot summarised — constructors by retained size and detached DOM trees, the usual leaks.
//! The snapshot streams to a file (kept when asked, for DevTools' Memory panel) and is read back
//! once.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::cdp::js_protocol::heap_profiler::EventAddHeapSnapshotChunk;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{BrowserError, Result};
use crate::records::heap::{self, HeapSummary};
use crate::tab::artifacts::StreamedFile;
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;

/// Constructors listed by default and at most.
const DEFAULT_TOP: usize = 10;
const MAX_TOP: usize = 50;
/// A snapshot of a large app takes a while.
const SNAPSHOT_LIMIT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct MemoryOptions {
    /// Also take a heap snapshot: top constructors by retained size, detached DOM trees.
    pub heap_snapshot: bool,
    /// Constructors listed (default 10, at most 50).
    pub top: Option<usize>,
    /// Keep the raw snapshot here (DevTools' Memory panel opens it).
    #[serde(skip)]
    pub save_to: Option<PathBuf>,
}

/// What the page holds. The counters are the tab's renderer process's: tabs of the same site
/// that share it are counted too.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryReport {
    pub js_heap_used_bytes: u64,
    pub js_heap_total_bytes: u64,
    pub dom_nodes: u64,
    pub event_listeners: u64,
    pub documents: u64,
    pub frames: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap: Option<HeapSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved: Option<PathBuf>,
}

impl MemoryReport {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "JS heap {} used of {}; {} DOM nodes, {} event listeners, {} document(s), {} frame(s) in the tab's renderer",
            crate::text::bytes(self.js_heap_used_bytes),
            crate::text::bytes(self.js_heap_total_bytes),
            self.dom_nodes,
            self.event_listeners,
            self.documents,
            self.frames
        );
        match &self.heap {
            Some(h) => {
                let _ = write!(out, "\n{}", h.to_text());
            }
            None => out.push_str("\n(heapSnapshot: true for what holds the memory)"),
        }
        if let Some(p) = &self.saved {
            let _ = write!(
                out,
                "\nsnapshot saved to {} (DevTools' Memory panel opens it)",
                p.display()
            );
        }
        out
    }
}

impl Tab {
    /// The page's memory, with a heap snapshot summary when asked.
    pub async fn memory(&self, options: &MemoryOptions) -> Result<MemoryReport> {
        self.guard_running("reading memory")?;
        self.call(Raw::new("Performance.enable", json!({}))).await?;
        let metrics = self
            .call(Raw::new("Performance.getMetrics", json!({})))
            .await?;
        let metric = |name: &str| {
            metrics["metrics"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|m| m["name"].as_str() == Some(name))
                .and_then(|m| m["value"].as_f64())
                .unwrap_or(0.0) as u64
        };
        let mut report = MemoryReport {
            js_heap_used_bytes: metric("JSHeapUsedSize"),
            js_heap_total_bytes: metric("JSHeapTotalSize"),
            dom_nodes: metric("Nodes"),
            event_listeners: metric("JSEventListeners"),
            documents: metric("Documents"),
            frames: metric("Frames"),
            heap: None,
            saved: None,
        };
        if options.heap_snapshot {
            let top = options.top.unwrap_or(DEFAULT_TOP).clamp(1, MAX_TOP);
            let mut out = self.stream_file(options.save_to.as_deref()).await?;
            self.take_heap_snapshot(&mut out).await?;
            let file = out.finish().await?;
            let summary = tokio::task::spawn_blocking(move || heap::summarize(file, top))
                .await
                .map_err(|e| {
                    BrowserError::protocol("reading the heap snapshot", e.to_string())
                })??;
            report.heap = Some(summary);
            report.saved = options.save_to.clone();
        } else if options.save_to.is_some() {
            return Err(BrowserError::InvalidInput(
                "a snapshot is saved only when one is taken: add heapSnapshot: true".into(),
            ));
        }
        Ok(report)
    }

    /// Streams a heap snapshot into `out` chunk by chunk.
    async fn take_heap_snapshot(&self, out: &mut StreamedFile) -> Result<()> {
        let mut chunks = self
            .page()
            .event_listener::<EventAddHeapSnapshotChunk>()
            .await
            .map_err(|e| self.map_err("HeapProfiler.takeHeapSnapshot", e))?;
        self.call(Raw::new("HeapProfiler.enable", json!({})))
            .await?;
        let tab = self.clone();
        let taking = tokio::spawn(async move {
            tab.call(Raw::new(
                "HeapProfiler.takeHeapSnapshot",
                json!({ "reportProgress": false, "captureNumericValue": false }),
            ))
            .await
        });
        let mut done = false;
        let deadline = tokio::time::Instant::now() + SNAPSHOT_LIMIT;
        loop {
            // Chunks arrive before the command's answer; after it, the last ones drain.
            let wait = if done {
                Duration::from_millis(200)
            } else {
                Duration::from_millis(500)
            };
            match tokio::time::timeout(wait, chunks.next()).await {
                Ok(Some(chunk)) => out.write(chunk.chunk.as_bytes()).await?,
                Ok(None) => break,
                Err(_) if done => break,
                Err(_) => {
                    if taking.is_finished() {
                        done = true;
                    } else if tokio::time::Instant::now() > deadline {
                        taking.abort();
                        return Err(BrowserError::Timeout {
                            what: "the heap snapshot".into(),
                            after: SNAPSHOT_LIMIT,
                            hint: Some("The page's heap is very large; take it from DevTools' Memory panel.".into()),
                        });
                    }
                }
            }
            if !done && taking.is_finished() {
                done = true;
            }
        }
        match taking.await {
            Ok(answer) => answer.map(drop)?,
            Err(e) => {
                return Err(BrowserError::protocol(
                    "HeapProfiler.takeHeapSnapshot",
                    e.to_string(),
                ));
            }
        }
        Ok(())
    }
}
