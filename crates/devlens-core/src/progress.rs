//! A progress line on stderr for long commands (index builds, ingestion): redrawn in place on a
//! terminal, a log line every tenth otherwise (CI logs stay short).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

pub struct ProgressLine {
    label: &'static str,
    terminal: bool,
    /// Last tenth reported when not on a terminal.
    last_tenth: Mutex<Option<usize>>,
}

impl ProgressLine {
    pub fn new(label: &'static str) -> Self {
        Self {
            label,
            terminal: std::io::stderr().is_terminal(),
            last_tenth: Mutex::new(None),
        }
    }

    pub fn update(&self, done: usize, total: usize) {
        if total == 0 {
            return;
        }
        if self.terminal {
            const WIDTH: usize = 30;
            let filled = done * WIDTH / total;
            eprint!(
                "\r{} [{}{}] {done}/{total}",
                self.label,
                "#".repeat(filled),
                " ".repeat(WIDTH - filled)
            );
            let _ = std::io::stderr().flush();
        } else {
            let tenth = done * 10 / total;
            let mut last = self.last_tenth.lock().unwrap_or_else(|p| p.into_inner());
            if *last != Some(tenth) {
                *last = Some(tenth);
                eprintln!("{}: {done}/{total}", self.label);
            }
        }
    }

    /// Starts a new part of the work (e.g. the next project): says `message` on its own line and
    /// counts afresh.
    pub fn set_message(&self, message: &str) {
        if self.terminal {
            eprint!("\r\x1b[2K");
        }
        eprintln!("{message}");
        *self.last_tenth.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    pub fn finish(&self) {
        if self.terminal {
            eprintln!();
        }
    }
}
