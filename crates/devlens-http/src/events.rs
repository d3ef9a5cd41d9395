//! Long operations answered as server-sent events, so a page can show progress while they run
//! (a re-index, a docs ingest, a re-embed): named events with JSON data, closed by `done` (the
//! operation's report) or `error` (`{error, kind}`, as any failure answers).
//!
//! The work runs in its own task: a client that goes away does not cancel a build half-way (the
//! stores swap in complete results only, so it finishes or leaves the old state serving).

use std::{convert::Infallible, future::Future};

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use serde::Serialize;
use serde_json::json;
use tokio::sync::mpsc;

use devlens_core::Classify;

/// Sends the events of one stream; cheap to clone into progress callbacks.
#[derive(Clone)]
pub(crate) struct EventSender(mpsc::UnboundedSender<Event>);

impl EventSender {
    /// Sends `data` as the event `name` (dropped quietly once the client has gone).
    pub(crate) fn send(&self, name: &str, data: &impl Serialize) {
        let data = serde_json::to_string(data).unwrap_or_else(|_| "null".into());
        let _ = self.0.send(Event::default().event(name).data(data));
    }

    /// A progress callback for counted work: each call sends `progress` with `{done, total}`.
    pub(crate) fn counter(&self) -> impl Fn(usize, usize) + Send + Sync + 'static {
        let events = self.clone();
        move |done, total| events.send("progress", &json!({ "done": done, "total": total }))
    }

    /// Ends the stream with `done` and the report, or `error` with the message and its kind.
    pub(crate) fn finish<T: Serialize, E: Classify + std::fmt::Display>(
        &self,
        result: Result<T, E>,
    ) {
        match result {
            Ok(report) => self.send("done", &report),
            Err(e) => self.send(
                "error",
                &json!({ "error": e.to_string(), "kind": e.kind() }),
            ),
        }
    }
}

/// Runs `work` in its own task and answers what it sends as server-sent events.
pub(crate) fn stream<F, Fut>(work: F) -> Sse<impl Stream<Item = Result<Event, Infallible>>>
where
    F: FnOnce(EventSender) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<Event>();
    tokio::spawn(work(EventSender(tx)));
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|event| (Ok(event), rx))
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}
