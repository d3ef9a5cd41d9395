//! MCP logging: a client that calls `logging/setLevel` receives devlens' own log events at that
//! level and above as `notifications/message` (logger = the crate, data = the message and its
//! fields) — the events of its own session only. The events are those the process logs anyway
//! (`DEVLENS_LOG` decides; info and up by default): a [`LogFeed`] layer in the process's tracing
//! subscriber hands each to the session it belongs to.
//!
//! Which session an event belongs to: the server enters [`SessionLog::span`] around each request
//! it handles (a tool call, a resource read, a prompt, a completion); the span carries the
//! session's key, and the layer finds it in the event's span scope. An event is delivered to the
//! session of that key only — over Streamable HTTP, where many clients (and token holders) share
//! one process, a session never sees another's paths, queries or project names. An event logged
//! outside any session (start-up, a background task, the browser's event pumps) goes to the
//! stdio session only: there is one client there, the user's own agent. Work a handler moves to
//! another task or thread without its span is not attributed, so it goes to stdio only too.
//!
//! Deprecated in the 2026-07-28 protocol (SEP-2577), still what clients of the 2025 versions
//! use; rmcp marks its types deprecated, hence the `allow`s.
#![allow(deprecated)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::{
    model::{LoggingLevel, LoggingMessageNotificationParam},
    service::{Peer, RoleServer},
};
use serde_json::json;
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing_subscriber::registry::LookupSpan;

/// How many events a slow session may fall behind before it misses some.
const BACKLOG: usize = 256;
/// How often a quiet session's forwarder checks that its client is still there.
const CHECK_EVERY: Duration = Duration::from_secs(30);
/// The name and target of the span that attributes events to a session.
const SPAN_NAME: &str = "mcp_session";
const SPAN_TARGET: &str = "devlens_mcp::session";
/// The span field holding the session's key.
const SESSION_FIELD: &str = "session";
/// A level no MCP level reaches: the session set none.
const NO_LEVEL: u8 = u8::MAX;

/// Keys for sessions, unique in the process.
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// One log event, as sessions receive it.
#[derive(Debug, Clone)]
pub(crate) struct LogRecord {
    level: tracing::Level,
    target: String,
    message: String,
}

/// The process's log events for MCP sessions. Clone it into [`crate::McpOptions`] and install
/// [`LogFeed::layer`] in the tracing subscriber.
#[derive(Debug, Clone, Default)]
pub struct LogFeed {
    listeners: Arc<Listeners>,
}

/// The sessions that set a level, by key.
#[derive(Debug, Default)]
struct Listeners {
    by_session: Mutex<HashMap<u64, Listener>>,
    /// How many there are: events are not even formatted while nobody listens.
    count: AtomicUsize,
}

/// One listening session: where its events go, the least severe it wants, whether it is the
/// stdio session (which also gets the events of no session), and how many it missed.
#[derive(Debug)]
struct Listener {
    sender: mpsc::Sender<LogRecord>,
    min_rank: Arc<AtomicU8>,
    stdio: bool,
    dropped: Arc<AtomicU64>,
}

impl Listener {
    fn offer(&self, record: &LogRecord) {
        if rank(mcp_level(record.level)) < self.min_rank.load(Ordering::Relaxed) {
            return;
        }
        if let Err(mpsc::error::TrySendError::Full(_)) = self.sender.try_send(record.clone()) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What a session reads its events from.
#[derive(Debug)]
struct Subscription {
    events: mpsc::Receiver<LogRecord>,
    dropped: Arc<AtomicU64>,
}

impl LogFeed {
    /// The tracing layer that feeds sessions.
    pub fn layer(&self) -> LogFeedLayer {
        LogFeedLayer {
            listeners: Arc::clone(&self.listeners),
        }
    }

    /// Starts delivering the events of session `key` (and, for the stdio session, those of no
    /// session) at `min_rank` and above; replaces an earlier subscription of `key`.
    fn subscribe(&self, key: u64, stdio: bool, min_rank: Arc<AtomicU8>) -> Subscription {
        let (sender, events) = mpsc::channel(BACKLOG);
        let dropped = Arc::new(AtomicU64::new(0));
        let listener = Listener {
            sender,
            min_rank,
            stdio,
            dropped: Arc::clone(&dropped),
        };
        let mut by_session = self.listeners.lock();
        by_session.insert(key, listener);
        self.listeners
            .count
            .store(by_session.len(), Ordering::Relaxed);
        Subscription { events, dropped }
    }

    /// Stops delivering to session `key`.
    fn unsubscribe(&self, key: u64) {
        let mut by_session = self.listeners.lock();
        by_session.remove(&key);
        self.listeners
            .count
            .store(by_session.len(), Ordering::Relaxed);
    }
}

impl Listeners {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Listener>> {
        self.by_session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands `record` to the session it belongs to, or to the stdio session when it belongs to
    /// none.
    fn deliver(&self, record: &LogRecord, session: Option<u64>) {
        let by_session = self.lock();
        match session {
            Some(key) => {
                if let Some(listener) = by_session.get(&key) {
                    listener.offer(record);
                }
            }
            None => by_session
                .values()
                .filter(|listener| listener.stdio)
                .for_each(|listener| listener.offer(record)),
        }
    }
}

/// The key a session's span carries, kept in the span's extensions.
#[derive(Debug, Clone, Copy)]
struct SessionKey(u64);

/// A tracing layer sending devlens' events to the session they belong to.
#[derive(Debug)]
pub struct LogFeedLayer {
    listeners: Arc<Listeners>,
}

impl<S> tracing_subscriber::Layer<S> for LogFeedLayer
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let metadata = attrs.metadata();
        if metadata.name() != SPAN_NAME || metadata.target() != SPAN_TARGET {
            return;
        }
        let mut key = KeyVisitor(None);
        attrs.record(&mut key);
        if let (Some(key), Some(span)) = (key.0, ctx.span(id)) {
            span.extensions_mut().insert(SessionKey(key));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: tracing_subscriber::layer::Context<'_, S>) {
        // Only devlens' own events (rmcp's would report the sending of these very
        // notifications), and nothing at all while no session listens.
        let target = event.metadata().target();
        if self.listeners.count.load(Ordering::Relaxed) == 0 || !target.starts_with("devlens") {
            return;
        }
        // The innermost session span around the event, if any.
        let session = ctx.event_scope(event).and_then(|scope| {
            scope
                .into_iter()
                .find_map(|span| span.extensions().get::<SessionKey>().map(|k| k.0))
        });
        let mut visitor = MessageVisitor::default();
        event.record(&mut visitor);
        let record = LogRecord {
            level: *event.metadata().level(),
            target: target.split("::").next().unwrap_or(target).to_string(),
            message: visitor.finish(),
        };
        self.listeners.deliver(&record, session);
    }
}

/// Reads the session key of a session span.
struct KeyVisitor(Option<u64>);

impl Visit for KeyVisitor {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == SESSION_FIELD {
            self.0 = Some(value);
        }
    }

    fn record_debug(&mut self, _field: &Field, _value: &dyn std::fmt::Debug) {}
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

/// One session's logging: its key, the level it set, and the task that forwards its events.
#[derive(Debug)]
pub(crate) struct SessionLog {
    key: u64,
    /// The session is the stdio one (see [`SessionLog::serve_stdio`]).
    stdio: AtomicBool,
    min_rank: Arc<AtomicU8>,
    /// The feed this session subscribed to, once it set a level.
    subscribed: Mutex<Option<LogFeed>>,
}

impl Default for SessionLog {
    fn default() -> Self {
        Self {
            key: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
            stdio: AtomicBool::new(false),
            min_rank: Arc::new(AtomicU8::new(NO_LEVEL)),
            subscribed: Mutex::new(None),
        }
    }
}

impl Drop for SessionLog {
    fn drop(&mut self) {
        let feed = self
            .subscribed
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(feed) = feed {
            feed.unsubscribe(self.key);
        }
    }
}

impl SessionLog {
    /// The span to enter around the work of one of this session's requests: the events logged
    /// inside go to this session (at error level so that any `DEVLENS_LOG` keeping devlens'
    /// events keeps the span too).
    pub(crate) fn span(&self) -> tracing::Span {
        tracing::error_span!(target: SPAN_TARGET, SPAN_NAME, session = self.key)
    }

    /// Marks this session as the stdio one, which also receives the events of no session.
    pub(crate) fn serve_stdio(&self) {
        self.stdio.store(true, Ordering::Relaxed);
    }

    /// Sets the level; the first call starts forwarding this session's events from `feed` to
    /// `peer`.
    pub(crate) fn set_level(
        &self,
        level: LoggingLevel,
        feed: Option<&LogFeed>,
        peer: Peer<RoleServer>,
    ) {
        self.min_rank.store(rank(level), Ordering::Relaxed);
        let Some(feed) = feed else { return };
        let mut subscribed = self.subscribed.lock().unwrap_or_else(|p| p.into_inner());
        if subscribed.is_some() {
            return;
        }
        *subscribed = Some(feed.clone());
        let Subscription {
            mut events,
            dropped,
        } = feed.subscribe(
            self.key,
            self.stdio.load(Ordering::Relaxed),
            Arc::clone(&self.min_rank),
        );
        let (feed, key) = (feed.clone(), self.key);
        tokio::spawn(async move {
            loop {
                let record = match tokio::time::timeout(CHECK_EVERY, events.recv()).await {
                    Ok(Some(record)) => record,
                    // Unsubscribed: the session ended.
                    Ok(None) => break,
                    Err(_quiet) if peer.is_transport_closed() => break,
                    Err(_quiet) => continue,
                };
                if peer.is_transport_closed() {
                    break;
                }
                let missed = dropped.swap(0, Ordering::Relaxed);
                if missed > 0 {
                    let mut param = LoggingMessageNotificationParam::new(
                        LoggingLevel::Warning,
                        json!(format!(
                            "{missed} log messages were dropped (too many at once)"
                        )),
                    );
                    param.logger = Some("devlens".into());
                    if peer.notify_logging_message(param).await.is_err() {
                        break;
                    }
                }
                let mut param = LoggingMessageNotificationParam::new(
                    mcp_level(record.level),
                    json!(record.message),
                );
                param.logger = Some(record.target);
                if peer.notify_logging_message(param).await.is_err() {
                    break;
                }
            }
            feed.unsubscribe(key);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt as _;

    fn listen(feed: &LogFeed, log: &SessionLog, level: LoggingLevel) -> Subscription {
        log.min_rank.store(rank(level), Ordering::Relaxed);
        feed.subscribe(
            log.key,
            log.stdio.load(Ordering::Relaxed),
            Arc::clone(&log.min_rank),
        )
    }

    fn drain(subscription: &mut Subscription) -> Vec<String> {
        let mut messages = Vec::new();
        while let Ok(record) = subscription.events.try_recv() {
            messages.push(format!("{} {}", record.target, record.message));
        }
        messages
    }

    #[test]
    fn devlens_events_reach_their_session_with_their_fields() {
        let feed = LogFeed::default();
        let log = SessionLog::default();
        let mut events = listen(&feed, &log, LoggingLevel::Info);
        let subscriber = tracing_subscriber::registry().with(feed.layer());
        tracing::subscriber::with_default(subscriber, || {
            let _in_session = log.span().entered();
            tracing::info!(target: "devlens_app::docs", library = "react", "query answered");
            tracing::warn!(target: "rmcp::service", "not ours");
            tracing::debug!(target: "devlens_app::docs", "below the level");
        });
        assert_eq!(
            drain(&mut events),
            ["devlens_app query answered library=react"],
            "other crates' events and those below the level are not sent"
        );
        assert!(rank(mcp_level(tracing::Level::ERROR)) > rank(LoggingLevel::Warning));
    }

    #[test]
    fn a_session_gets_its_own_events_and_only_stdio_gets_those_of_no_session() {
        let feed = LogFeed::default();
        let (a, b, stdio) = (
            SessionLog::default(),
            SessionLog::default(),
            SessionLog::default(),
        );
        stdio.serve_stdio();
        let mut to_a = listen(&feed, &a, LoggingLevel::Debug);
        let mut to_b = listen(&feed, &b, LoggingLevel::Debug);
        let mut to_stdio = listen(&feed, &stdio, LoggingLevel::Debug);
        let subscriber = tracing_subscriber::registry().with(feed.layer());
        tracing::subscriber::with_default(subscriber, || {
            a.span().in_scope(|| {
                // Nested spans of the work keep the session.
                let _inner = tracing::info_span!("query").entered();
                tracing::info!(target: "devlens_app::docs", path = "/home/a/secret.md", "read by A");
            });
            b.span()
                .in_scope(|| tracing::info!(target: "devlens_app::kb", "searched by B"));
            stdio
                .span()
                .in_scope(|| tracing::info!(target: "devlens_app", "asked over stdio"));
            tracing::info!(target: "devlens", "started");
        });
        assert_eq!(
            drain(&mut to_a),
            ["devlens_app read by A path=/home/a/secret.md"]
        );
        assert_eq!(drain(&mut to_b), ["devlens_app searched by B"]);
        assert_eq!(
            drain(&mut to_stdio),
            ["devlens_app asked over stdio", "devlens started"]
        );
    }

    #[test]
    fn an_ended_session_gets_nothing_more() {
        let feed = LogFeed::default();
        let log = SessionLog::default();
        let mut events = listen(&feed, &log, LoggingLevel::Info);
        *log.subscribed.lock().unwrap() = Some(feed.clone());
        let subscriber = tracing_subscriber::registry().with(feed.layer());
        tracing::subscriber::with_default(subscriber, || {
            let span = log.span();
            span.in_scope(|| tracing::info!(target: "devlens_app::docs", "on time"));
            drop(log);
            assert_eq!(feed.listeners.count.load(Ordering::Relaxed), 0);
            span.in_scope(|| tracing::info!(target: "devlens_app::docs", "late"));
        });
        assert_eq!(drain(&mut events), ["devlens_app on time"]);
    }

    #[test]
    fn a_flood_drops_events_and_counts_them() {
        let feed = LogFeed::default();
        let log = SessionLog::default();
        let mut events = listen(&feed, &log, LoggingLevel::Info);
        let subscriber = tracing_subscriber::registry().with(feed.layer());
        tracing::subscriber::with_default(subscriber, || {
            let _in_session = log.span().entered();
            for n in 0..(BACKLOG + 5) {
                tracing::info!(target: "devlens_app::docs", n, "event");
            }
        });
        assert_eq!(drain(&mut events).len(), BACKLOG);
        assert_eq!(events.dropped.load(Ordering::Relaxed), 5);
    }
}
