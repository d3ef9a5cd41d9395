//! The tabs a connection has attached: each with its page handle, its records and the task that
//! keeps them.

use std::sync::Arc;

use chromiumoxide::Page;
use tokio::task::JoinHandle;

use crate::records::TabState;

/// One attached page target.
#[derive(Debug)]
pub(crate) struct TabInner {
    pub target_id: String,
    pub page: Page,
    pub state: Arc<TabState>,
    pub(crate) collector: JoinHandle<()>,
    /// Whose turn it is to act on the tab: input and navigation from any session, one at a
    /// time (two sessions' clicks interleaving their mouse events would lose one).
    pub(crate) turn: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for TabInner {
    fn drop(&mut self) {
        self.collector.abort();
    }
}

/// The tabs of a connection, in the order they were first seen.
#[derive(Debug, Default)]
pub(crate) struct TabRegistry {
    pub tabs: Vec<Arc<TabInner>>,
    pub active: Option<String>,
    /// Tabs devlens closed: Chrome lists them a moment longer; never attach to them again.
    pub closed: Vec<String>,
}
