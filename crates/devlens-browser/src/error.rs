//! The one error type of this crate.
//!
//! Every message is read by a person or an agent as is, so each says what went wrong and what to
//! do next: how to connect, which tab to pick, which selector was probably meant, what a wait was
//! waiting for.

use std::fmt;
use std::time::Duration;

use devlens_core::{Classify, ErrorKind};

/// Everything a browser call can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserError {
    /// No connection exists yet.
    #[error(
        "no browser connected. Launch one (chrome action `launch`, headless by default) or connect to a running Chrome started with --remote-debugging-port=9222 (chrome action `connect`, port 9222)."
    )]
    NotConnected,

    /// A connection id that is not (or no longer) known.
    #[error("no connection `{id}`.{}", known_list(known))]
    UnknownConnection { id: String, known: Vec<String> },

    /// The requested connection id is already taken.
    #[error("connection id `{id}` is already in use: pick another id or disconnect `{id}` first.")]
    ConnectionExists { id: String },

    /// No Chrome/Chromium executable could be found.
    #[error(
        "Chrome/Chromium not found (looked at CHROME_PATH, {searched} on PATH and the usual install locations). Install Chromium (e.g. `apt-get install chromium`) or pass the executable with --chrome-path / CHROME_PATH."
    )]
    ChromeNotFound { searched: String },

    /// An explicit executable path that does not point to a file.
    #[error(
        "Chrome executable `{path}` ({origin}) does not exist or is not a file. Fix the path, or leave it out to let devlens look for Chromium."
    )]
    ChromePathInvalid { path: String, origin: &'static str },

    /// The browser process started but never offered a DevTools endpoint, or exited at once.
    #[error(
        "could not launch Chrome ({executable}): {reason}.{}",
        stderr_tail(stderr)
    )]
    LaunchFailed {
        executable: String,
        reason: String,
        stderr: Vec<String>,
    },

    /// Nothing (usable) answers at a DevTools endpoint.
    #[error(
        "cannot connect to Chrome at {endpoint}: {reason}. Start Chrome with --remote-debugging-port=9222 (and a separate --user-data-dir if it is already running), check host and port, or launch a browser instead."
    )]
    ConnectFailed { endpoint: String, reason: String },

    /// The browser behind a connection has closed or crashed.
    #[error(
        "the browser of connection `{connection}` has closed or crashed. Disconnect it and launch or connect again."
    )]
    BrowserGone { connection: String },

    /// The tab a call was about has been closed.
    #[error(
        "tab {tab} has been closed. List the tabs and switch to another one (or open a new tab)."
    )]
    TabGone { tab: String },

    /// The connection has no page tab at all.
    #[error("connection `{connection}` has no open tab. Open one with target action `new`.")]
    NoTab { connection: String },

    /// No tab matches a title, URL, index or id.
    #[error("no tab matches {query}. Open tabs:{}", tab_lines(tabs))]
    UnknownTab { query: String, tabs: Vec<String> },

    /// A title or URL matches more than one tab.
    #[error("{query} matches {} tabs:{} Pass an index instead.", tabs.len(), tab_lines(tabs))]
    AmbiguousTab { query: String, tabs: Vec<String> },

    /// A CSS selector that matched no element.
    #[error("no element matches `{selector}`.{}", Suggestions(suggestions))]
    ElementNotFound {
        selector: String,
        suggestions: Vec<String>,
    },

    /// A CSS selector the browser cannot parse.
    #[error("`{selector}` is not a valid CSS selector: {reason}")]
    InvalidSelector { selector: String, reason: String },

    /// A snapshot ref that is unknown or whose element is gone.
    #[error(
        "ref `{reference}` {reason}. Take a new snapshot and use a ref from it, or pass a CSS selector."
    )]
    StaleRef { reference: String, reason: String },

    /// A cross-site iframe a ref pointed into has gone.
    #[error(
        "the iframe this element was in has gone (it navigated or was removed). Take a new snapshot."
    )]
    FrameGone,

    /// The element exists but cannot take the action.
    #[error("cannot {action} {element}: {reason}")]
    NotInteractable {
        action: &'static str,
        element: String,
        reason: String,
    },

    /// Something awaited did not happen in time.
    #[error("timed out after {} waiting for {what}.{}", secs(*after), hint_text(hint))]
    Timeout {
        what: String,
        after: Duration,
        hint: Option<String>,
    },

    /// A navigation the browser could not complete (DNS, refused connection, ...).
    #[error("could not load {url}: {error}. {hint}")]
    NavigationFailed {
        url: String,
        error: String,
        hint: &'static str,
    },

    /// A JavaScript dialog blocks the page.
    #[error(
        "a {kind} dialog is open (\"{message}\") and blocks the page. Accept or dismiss it first (handle_dialog)."
    )]
    DialogOpen { kind: String, message: String },

    /// No dialog to handle.
    #[error("no dialog is open on this tab.")]
    NoDialog,

    /// A network request id that the log does not hold.
    #[error(
        "no request `{id}` in this tab's network log (it holds the last {capacity} requests). List the requests to see their ids."
    )]
    UnknownRequest { id: String, capacity: usize },

    /// Arguments that do not make sense together or are out of range.
    #[error("{0}")]
    InvalidInput(String),

    /// Writing a file (screenshot, response body) failed.
    #[error("cannot write {path}: {reason}. Check that the directory exists and is writable.")]
    WriteFailed { path: String, reason: String },

    /// The browser rejected a protocol command in a way the caller cannot fix.
    #[error("the browser refused {what}: {message}")]
    Protocol { what: String, message: String },
}

pub type Result<T, E = BrowserError> = std::result::Result<T, E>;

impl BrowserError {
    pub(crate) fn protocol(what: impl Into<String>, message: impl fmt::Display) -> Self {
        Self::Protocol {
            what: what.into(),
            message: message.to_string(),
        }
    }
}

impl Classify for BrowserError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::NotConnected | Self::NoTab { .. } | Self::DialogOpen { .. } | Self::NoDialog => {
                ErrorKind::Precondition
            }
            Self::UnknownConnection { .. }
            | Self::UnknownTab { .. }
            | Self::ElementNotFound { .. }
            | Self::StaleRef { .. }
            | Self::FrameGone
            | Self::UnknownRequest { .. } => ErrorKind::NotFound,
            Self::ConnectionExists { .. }
            | Self::AmbiguousTab { .. }
            | Self::InvalidSelector { .. }
            | Self::InvalidInput(_)
            | Self::ChromePathInvalid { .. } => ErrorKind::InvalidInput,
            Self::BrowserGone { .. } | Self::TabGone { .. } => ErrorKind::Gone,
            Self::Timeout { .. } => ErrorKind::Timeout,
            Self::NotInteractable { .. } | Self::NavigationFailed { .. } => {
                ErrorKind::Unprocessable
            }
            // The machine or the browser process is the problem.
            Self::ChromeNotFound { .. }
            | Self::LaunchFailed { .. }
            | Self::ConnectFailed { .. } => ErrorKind::Unavailable,
            Self::WriteFailed { .. } | Self::Protocol { .. } => ErrorKind::Internal,
        }
    }
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        " There are no connections: launch or connect a browser first.".into()
    } else {
        format!(" Connections: {}.", known.join(", "))
    }
}

fn tab_lines(tabs: &[String]) -> String {
    if tabs.is_empty() {
        return " none.".into();
    }
    let mut out = String::new();
    for t in tabs {
        out.push_str("\n  ");
        out.push_str(t);
    }
    out.push('\n');
    out
}

fn stderr_tail(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    format!(" Browser output:\n  {}", lines.join("\n  "))
}

fn secs(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

fn hint_text(hint: &Option<String>) -> String {
    hint.as_ref().map(|h| format!(" {h}")).unwrap_or_default()
}

/// Renders the "did you mean" tail of [`BrowserError::ElementNotFound`].
struct Suggestions<'a>(&'a [String]);

impl fmt::Display for Suggestions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            [] => f.write_str(
                " Check the selector with query_elements, or take a snapshot and use a ref.",
            ),
            [one] => write!(f, " Did you mean `{one}`?"),
            many => {
                f.write_str(" Did you mean one of: ")?;
                for (i, s) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{s}`")?;
                }
                f.write_str("?")
            }
        }
    }
}

/// A short hint for a Chromium network error code.
pub(crate) fn net_error_hint(error: &str) -> &'static str {
    if error.contains("CONNECTION_REFUSED") {
        "Nothing listens there: is the dev server running, and on that port?"
    } else if error.contains("NAME_NOT_RESOLVED") {
        "The host name does not resolve: check the spelling."
    } else if error.contains("INTERNET_DISCONNECTED") {
        "The network is offline (network emulation may be set to offline)."
    } else if error.contains("CERT") || error.contains("SSL") {
        "TLS failed: check the certificate or use http:// for a local server."
    } else if error.contains("TIMED_OUT") {
        "The server did not answer in time."
    } else if error.contains("ABORTED") {
        "The navigation was cancelled (another navigation or a download replaced it)."
    } else {
        "Check the URL and that the server is reachable."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_do() {
        let e = BrowserError::ElementNotFound {
            selector: "#sumbit".into(),
            suggestions: vec!["#submit".into()],
        };
        assert_eq!(
            e.to_string(),
            "no element matches `#sumbit`. Did you mean `#submit`?"
        );
        let e = BrowserError::Timeout {
            what: "text \"Done\" to appear".into(),
            after: Duration::from_millis(1500),
            hint: Some("The page shows \"Loading\".".into()),
        };
        assert_eq!(
            e.to_string(),
            "timed out after 1.5 s waiting for text \"Done\" to appear. The page shows \"Loading\"."
        );
        assert!(BrowserError::NotConnected.to_string().contains("launch"));
        let e = BrowserError::UnknownConnection {
            id: "x".into(),
            known: vec![],
        };
        assert!(e.to_string().contains("no connections"));
        let e = BrowserError::AmbiguousTab {
            query: "title \"App\"".into(),
            tabs: vec!["[0] App — a".into(), "[1] App — b".into()],
        };
        assert!(e.to_string().contains("matches 2 tabs"));
    }
}
