//! Floor 0, the tab's records: plain data without the DevTools Protocol. The tab core's event
//! pumps write into them; every call on a tab reads them. Nothing here talks to a browser, so all
//! of it is unit-tested without one.
//!
//! - [`console`]: the bounded console ring buffer and how console values are shown;
//! - [`network`]: the bounded network log;
//! - [`debugger`]: the debugger's state and the shapes its answers take;
//! - [`sourcemap`]: source maps parsed, and the maps of a tab's scripts;
//! - [`emulation`]: what a tab emulates; [`refs`]: snapshot refs;
//! - [`trace`]: a performance trace and a CPU profile reduced to findings; [`heap`]: a heap
//!   snapshot summarised (constructors by retained size, detached DOM);
//! - here: [`TabState`], which holds one of each per tab, the page's state, and what blocks it.

pub mod console;
pub mod debugger;
pub mod emulation;
pub mod heap;
pub mod network;
pub mod refs;
pub mod sourcemap;
pub mod trace;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use self::console::ConsoleBuffer;
use self::debugger::{DebuggerState, PauseInfo};
use self::emulation::EmulationState;
use self::network::NetworkLog;
use self::refs::RefMap;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// A JavaScript dialog (alert, confirm, prompt, beforeunload) that is open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DialogInfo {
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_prompt: Option<String>,
}

/// Something that stops the page's main thread; blocking calls are raced against it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Blocker {
    Dialog(DialogInfo),
    /// The page is paused in the debugger.
    Paused(PauseInfo),
}

/// What a tab knows about its current document.
#[derive(Debug, Default)]
pub(crate) struct PageState {
    pub main_frame: Option<String>,
    pub url: String,
    /// Main-frame document navigations seen (the network log's page index).
    pub navigations: u64,
    /// `load` events seen.
    pub loads: u64,
    /// The main frame is loading.
    pub loading: bool,
    /// Navigations of the main frame the page asked for (a link, a form, `location = …`):
    /// reported before the navigation starts loading, so an action can wait for it.
    pub navigation_requests: u64,
    /// Same-document navigations (hash links, `history.pushState`).
    pub same_document: u64,
    pub dialog: Option<DialogInfo>,
    /// Snapshot refs of the current document.
    pub refs: RefMap,
    pub emulation: EmulationState,
    /// Numbers the `<style>` elements inject_css adds.
    pub css_counter: u64,
    /// Sessions devlens attached to cross-site iframes: target id → session id.
    pub remote_sessions: HashMap<String, String>,
}

impl PageState {
    /// A new document replaced the old one: what pointed into the old one is void.
    pub(crate) fn on_new_document(&mut self) {
        self.refs.clear();
        self.remote_sessions.clear();
    }
}

/// How long a call waits for the collector to catch up before it goes on without.
const CATCH_UP_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Everything a tab records, shared by its collector task and the calls on it.
#[derive(Debug)]
pub(crate) struct TabState {
    pub console: Mutex<ConsoleBuffer>,
    pub network: Mutex<NetworkLog>,
    pub page: Mutex<PageState>,
    pub debugger: Mutex<DebuggerState>,
    /// The current blocker, if any; blocking calls watch it.
    pub blocker: watch::Sender<Option<Blocker>>,
    pub closed: AtomicBool,
    /// Says `true` once the tab is gone, so calls in flight stop waiting for it.
    pub closed_signal: watch::Sender<bool>,
    /// How many times a call asked the collector to catch up, and how many it has answered:
    /// see [`TabState::catch_up`].
    pub catch_up_asked: watch::Sender<u64>,
    pub caught_up: watch::Sender<u64>,
}

impl TabState {
    pub(crate) fn new(console_capacity: usize, network_capacity: usize) -> Self {
        Self {
            console: Mutex::new(ConsoleBuffer::new(console_capacity)),
            network: Mutex::new(NetworkLog::new(network_capacity)),
            page: Mutex::new(PageState::default()),
            debugger: Mutex::default(),
            blocker: watch::Sender::new(None),
            closed: AtomicBool::new(false),
            closed_signal: watch::Sender::new(false),
            catch_up_asked: watch::Sender::new(0),
            caught_up: watch::Sender::new(0),
        }
    }

    /// Waits until the collector has recorded every event already handed to it. The collector
    /// answers only when no event is waiting, so what the browser sent before this call is in
    /// the records afterwards. Bounded: a closed tab or a starved collector do not hold a call.
    pub(crate) async fn catch_up(&self) {
        let mut asked = 0;
        self.catch_up_asked.send_modify(|n| {
            *n += 1;
            asked = *n;
        });
        let mut caught_up = self.caught_up.subscribe();
        let mut closed = self.closed_signal.subscribe();
        tokio::select! {
            _ = caught_up.wait_for(|n| *n >= asked) => {}
            _ = closed.wait_for(|closed| *closed) => {}
            _ = tokio::time::sleep(CATCH_UP_LIMIT) => {}
        }
    }

    /// The tab has gone (closed by devlens, by the page, or by someone else).
    pub(crate) fn mark_closed(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.closed_signal.send_replace(true);
        }
    }

    // A poisoned lock only means a panic elsewhere mid-update; the data is still usable.
    pub(crate) fn page_state(&self) -> MutexGuard<'_, PageState> {
        self.page.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn console_mut(&self) -> MutexGuard<'_, ConsoleBuffer> {
        self.console.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn network_mut(&self) -> MutexGuard<'_, NetworkLog> {
        self.network.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn debugger_mut(&self) -> std::sync::MutexGuard<'_, DebuggerState> {
        self.debugger.lock().unwrap_or_else(|e| e.into_inner())
    }
}
