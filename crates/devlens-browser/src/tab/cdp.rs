//! Untyped protocol calls and error mapping.
//!
//! chromiumoxide's typed commands deserialize responses into structs generated from one protocol
//! revision; a response with a field or enum value the crate does not know (the accessibility tree
//! is full of them) fails as a whole. [`Raw`] sends any method and returns the JSON as is, so the
//! calls this crate depends on keep working when Chrome moves on.

use chromiumoxide::error::CdpError;
use chromiumoxide::types::{Command, Method, MethodId};
use serde::Serialize;
use serde_json::Value;

use crate::error::BrowserError;

/// How long a single protocol command may take before the browser counts as unresponsive.
pub(crate) const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A protocol command with JSON params and a JSON result.
#[derive(Debug, Clone)]
pub(crate) struct Raw {
    pub method: &'static str,
    pub params: Value,
}

impl Raw {
    pub(crate) fn new(method: &'static str, params: Value) -> Self {
        Self { method, params }
    }
}

impl Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl Method for Raw {
    fn identifier(&self) -> MethodId {
        self.method.into()
    }
}

impl Command for Raw {
    type Response = Value;
}

/// What went wrong with a protocol call, before the caller adds its context.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The websocket or the handler is gone: the browser closed or crashed.
    Disconnected,
    /// The target (tab) the session belonged to is gone.
    TargetGone,
    /// No answer within the request timeout.
    Timeout,
    /// Chrome answered with an error.
    Rejected(String),
}

impl CallFailure {
    pub(crate) fn classify(err: &CdpError) -> Self {
        match err {
            CdpError::Ws(_)
            | CdpError::ChannelSendError(_)
            | CdpError::NoResponse
            | CdpError::Io(_) => Self::Disconnected,
            CdpError::Timeout => Self::Timeout,
            CdpError::Chrome(e) => {
                let m = e.message.as_str();
                if m.contains("No target with given id")
                    || m.contains("Session with given id not found")
                    || m.contains("Target closed")
                    || m.contains("No session with given id")
                {
                    Self::TargetGone
                } else {
                    Self::Rejected(e.message.clone())
                }
            }
            other => Self::Rejected(other.to_string()),
        }
    }
}

/// A protocol error message without the JSON-RPC code noise.
pub(crate) fn short_message(err: &CdpError) -> String {
    match err {
        CdpError::Chrome(e) => e.message.clone(),
        other => other.to_string(),
    }
}

/// Maps a failure that is not about a specific tab (browser-level calls).
pub(crate) fn browser_error(connection: &str, what: &str, err: CdpError) -> BrowserError {
    match CallFailure::classify(&err) {
        CallFailure::Disconnected => BrowserError::BrowserGone {
            connection: connection.to_string(),
        },
        // A browser-level call about a tab that no longer exists; the caller knows which.
        CallFailure::TargetGone => BrowserError::protocol(what, "the tab no longer exists"),
        CallFailure::Timeout => BrowserError::Timeout {
            what: format!("the browser to answer {what}"),
            after: REQUEST_TIMEOUT,
            hint: Some("The browser may be hung; disconnect and launch again.".into()),
        },
        CallFailure::Rejected(m) => BrowserError::protocol(what, m),
    }
}
