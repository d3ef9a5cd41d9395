//! The console as a call reads it.

use crate::records::console::{ConsoleLogs, ConsoleQuery};
use crate::tab::targets::Tab;

impl Tab {
    /// The tab's console: filtered by level and text, the most recent `limit`, optionally only
    /// what arrived since the previous read. Every read moves the "last read" mark.
    pub fn console_logs(&self, query: &ConsoleQuery) -> ConsoleLogs {
        self.state().console_mut().query(query)
    }
}
