//! The console as a call reads it.

use crate::records::console::{ConsoleEntry, ConsoleLevel, ConsoleLogs, ConsoleQuery};
use crate::tab::targets::Tab;

impl Tab {
    /// The tab's console: filtered by level and text, the most recent `limit`, optionally only
    /// what arrived since the previous read. Every read moves the "last read" mark.
    pub fn console_logs(&self, query: &ConsoleQuery) -> ConsoleLogs {
        self.state().console_mut().query(query)
    }

    /// The current page's entries after entry `after` (the newest `limit`, and how many more
    /// there were), for an onlooker such as the dev panel's live view: unlike
    /// [`Self::console_logs`] this moves no "last read" mark, so the agent's reads are unchanged.
    pub fn console_after(&self, after: u64, limit: usize) -> (Vec<ConsoleEntry>, usize) {
        let console = self.state().console_mut();
        let from = (after + 1).max(console.page_start);
        console.since(from, ConsoleLevel::Debug, limit.max(1))
    }
}
