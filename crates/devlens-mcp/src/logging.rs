//! MCP logging: a client that calls `logging/setLevel` receives devlens' own log events at that
//! level and above as `notifications/message` (logger = the crate, data = the message and its
//! fields). The events are those the process logs anyway (`DEVLENS_LOG` decides; info and up
//! by default): a [`LogFeed`] layer in the process's tracing subscriber fans them out to the
//! sessions that asked.
//!
//! Deprecated in the 2026-07-28 protocol (SEP-2577), still what clients of the 2025 versions
//! use; rmcp marks its types deprecated, hence the `allow`s.
#![allow(deprecated)]

use std::fmt::Write as _;
use std::sync::Mutex;

use rmcp::{
    model::{LoggingLevel, LoggingMessageNotificationParam},
    service::{Peer, RoleServer},
};
use serde_json::json;
use tokio::sync::broadcast;
use tracing::field::{Field, Visit};

/// How many events a slow session may fall behind before it misses some.
const BACKLOG: usize = 256;

/// One log event, as sessions receive it.
#[derive(Debug, Clone)]
pub(crate) struct LogRecord {
    level: tracing::Level,
    target: String,
    message: String,
}

/// The process's log events for MCP sessions. Clone it into [`crate::McpOptions`] and install
/// [`LogFeed::layer`] in the tracing subscriber.
#[derive(Debug, Clone)]
pub struct LogFeed {
    sender: broadcast::Sender<LogRecord>,
}

impl Default for LogFeed {
    fn default() -> Self {
        Self {
            sender: broadcast::channel(BACKLOG).0,
        }
    }
}

impl LogFeed {
    /// The tracing layer that feeds sessions.
    pub fn layer(&self) -> LogFeedLayer {
        LogFeedLayer {
            sender: self.sender.clone(),
        }
    }

    fn subscribe(&self) -> broadcast::Receiver<LogRecord> {
        self.sender.subscribe()
    }
}

/// A tracing layer sending devlens' events to the sessions that set a level.
#[derive(Debug)]
pub struct LogFeedLayer {
    sender: broadcast::Sender<LogRecord>,
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for LogFeedLayer {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        // Only devlens' own events (rmcp's would report the sending of these very
        // notifications), and nothing at all while no session listens.
        let target = event.metadata().target();
        if self.sender.receiver_count() == 0 || !target.starts_with("devlens") {
            return;
        }
        let mut visitor = MessageVisitor::default();
        event.record(&mut visitor);
        let _ = self.sender.send(LogRecord {
            level: *event.metadata().level(),
            target: target.split("::").next().unwrap_or(target).to_string(),
            message: visitor.finish(),
        });
    }
}

#[derive(Default)]
struct MessageVisitor {
    message: String,
    fields: String,
}

impl MessageVisitor {
    fn finish(self) -> String {
        if self.fields.is_empty() {
            self.message
        } else if self.message.is_empty() {
            self.fields.trim_start().to_string()
        } else {
            format!("{}{}", self.message, self.fields)
        }
    }
}

impl Visit for MessageVisitor {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

/// MCP's level for a tracing level.
fn mcp_level(level: tracing::Level) -> LoggingLevel {
    match level {
        tracing::Level::ERROR => LoggingLevel::Error,
        tracing::Level::WARN => LoggingLevel::Warning,
        tracing::Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// Severity rank of an MCP level (the enum has no order of its own).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// One session's logging: the level it set, and the task that forwards events to it.
#[derive(Debug, Default)]
pub(crate) struct SessionLog {
    level: Mutex<Option<u8>>,
    forwarding: Mutex<bool>,
}

impl SessionLog {
    /// Sets the level; the first call starts forwarding `feed`'s events to `peer`.
    pub(crate) fn set_level(
        self: &std::sync::Arc<Self>,
        level: LoggingLevel,
        feed: Option<&LogFeed>,
        peer: Peer<RoleServer>,
    ) {
        *self.level.lock().unwrap_or_else(|p| p.into_inner()) = Some(rank(level));
        let Some(feed) = feed else { return };
        let mut forwarding = self.forwarding.lock().unwrap_or_else(|p| p.into_inner());
        if *forwarding {
            return;
        }
        *forwarding = true;
        let mut events = feed.subscribe();
        let session = std::sync::Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let record = match events.recv().await {
                    Ok(record) => record,
                    Err(broadcast::error::RecvError::Lagged(missed)) => LogRecord {
                        level: tracing::Level::WARN,
                        target: "devlens".into(),
                        message: format!("{missed} log messages were dropped (too many at once)"),
                    },
                    Err(broadcast::error::RecvError::Closed) => break,
                };
                if peer.is_transport_closed() {
                    break;
                }
                let level = mcp_level(record.level);
                let wanted = *session.level.lock().unwrap_or_else(|p| p.into_inner());
                if wanted.is_none_or(|min| rank(level) < min) {
                    continue;
                }
                let mut param = LoggingMessageNotificationParam::new(level, json!(record.message));
                param.logger = Some(record.target);
                if peer.notify_logging_message(param).await.is_err() {
                    break;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt as _;

    #[test]
    fn devlens_events_reach_listeners_with_their_fields() {
        let feed = LogFeed::default();
        let mut events = feed.subscribe();
        let subscriber = tracing_subscriber::registry().with(feed.layer());
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(target: "devlens_docs::query", library = "react", "query answered");
            tracing::warn!(target: "rmcp::service", "not ours");
        });
        let record = events.try_recv().unwrap();
        assert_eq!(record.target, "devlens_docs");
        assert_eq!(record.message, "query answered library=react");
        assert!(
            events.try_recv().is_err(),
            "other crates' events are not sent"
        );
        assert!(rank(mcp_level(tracing::Level::ERROR)) > rank(LoggingLevel::Warning));
    }
}
