//! Which tools a session lists, and telling the client when that changes.
//!
//! Two things shape the list. `hide_tools` / `show_tools` (in every mode) take tools out of this
//! session's list and put them back: agents pay for every definition on every turn. With
//! `--dynamic-tools` the list also follows the browser: entry tools before a browser
//! is connected, page tools once one is, debugger controls once the debugger is on, stepping
//! while paused — the model reads only what it can use now. Tools the state leaves out still
//! answer a call, with what to do first; tools the user hid answer that they are hidden.
//!
//! The state also changes without a call (a breakpoint hit by a timer, a browser closed
//! elsewhere), so each session polls it and announces changes with
//! `notifications/tools/list_changed`: through the peer for sessions opened with `initialize`,
//! through `subscriptions/listen` for 2026-07-28 clients that opted in. Without the flag the list
//! changes only when the client itself calls hide_tools or show_tools, so clients that never
//! asked for a moving list never get one.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::{
    handler::server::wrapper::Parameters,
    model::{CallToolResult, Tool},
    schemars::{self, JsonSchema},
    service::{Peer, RoleServer, SubscriptionSink},
    tool, tool_router,
};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use devlens_app::BrowserSessions;

use crate::{
    DevlensServer, ToolFamily,
    reply::{failure, structured},
};

/// How often a session with `--dynamic-tools` looks at the browser's state. Cheap: it reads
/// flags the browser's event tasks keep up to date.
const POLL: Duration = Duration::from_millis(250);
/// How often a session without it checks whether its client went away.
const IDLE_POLL: Duration = Duration::from_secs(2);

/// The tools that cannot be hidden: they are how hidden tools come back.
pub(crate) const META_TOOLS: [&str; 2] = ["hide_tools", "show_tools"];

/// Where the browser stands, as far as the tool list is concerned (four states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolState {
    /// No live browser connection.
    NotConnected,
    /// A browser, with the debugger off on the active tab.
    Connected,
    /// The debugger is on for the active tab; the page runs.
    Debugging,
    /// The active tab is paused in the debugger.
    Paused,
}

impl ToolState {
    pub const ALL: [ToolState; 4] = [
        ToolState::NotConnected,
        ToolState::Connected,
        ToolState::Debugging,
        ToolState::Paused,
    ];

    /// Reads the state; no protocol traffic unless the active tab has to be found again.
    pub async fn of(browser: &BrowserSessions) -> Self {
        if !browser.connections().connections.iter().any(|c| c.alive) {
            return Self::NotConnected;
        }
        // Page and debugger tools act on the active tab of the active connection.
        match browser.tab(None).await {
            Ok(tab) if tab.is_paused() => Self::Paused,
            Ok(tab) if tab.debugger_enabled() => Self::Debugging,
            _ => Self::Connected,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::NotConnected => "not connected",
            Self::Connected => "connected",
            Self::Debugging => "debugging",
            Self::Paused => "paused",
        }
    }

    /// What gets a session into this state.
    fn how_to_reach(self) -> &'static str {
        match self {
            Self::NotConnected => "before a browser is connected",
            Self::Connected => "once a browser is connected (chrome action launch or connect)",
            Self::Debugging => "once the debugger is on (enable_debug_tools)",
            Self::Paused => "while the page is paused (a breakpoint hit, execution action pause)",
        }
    }
}

impl fmt::Display for ToolState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

use ToolState::{Connected, Debugging, NotConnected, Paused};

/// The states each browser, debugger and knowledge base tool is listed in under
/// `--dynamic-tools`. Tools not here (API and docs tools, hide_tools, show_tools) are listed in
/// every state. README's table is this.
const LISTED_IN: &[(&[&str], &[ToolState])] = &[
    // Starting or finding a browser is always possible.
    (
        &["chrome", "chrome_list_connections"],
        &[NotConnected, Connected, Debugging, Paused],
    ),
    // Tabs and what the page recorded answer while it is paused, too.
    (
        &[
            "chrome_disconnect",
            "target",
            "get_console_logs",
            "list_network_requests",
            "get_network_request",
        ],
        &[Connected, Debugging, Paused],
    ),
    // Looking at the page works while it is paused.
    (&["snapshot", "screenshot"], &[Connected, Debugging, Paused]),
    // Acting on the page needs it running (a paused page refuses, saying to resume): out of
    // the way while paused.
    (
        &[
            "navigate",
            "query_elements",
            "click_element",
            "fill_element",
            "type_text",
            "press_key",
            "hover",
            "select_option",
            "scroll",
            "wait_for",
            "handle_dialog",
            "evaluate",
            "inject_css",
            "remove_css",
            "emulate",
            "audit_accessibility",
            "audit_performance",
            "inspect_css",
            "inspect_app_state",
        ],
        &[Connected, Debugging],
    ),
    (&["enable_debug_tools"], &[Connected]),
    (&["breakpoint", "execution"], &[Debugging, Paused]),
    (&["pause_on_exceptions", "wait_for_pause"], &[Debugging]),
    (&["step", "call_stack", "evaluate_in_frame"], &[Paused]),
    // The knowledge base does not depend on the browser.
    (
        &[
            "save_solution",
            "search_solutions",
            "ask_knowledge_base",
            "get_solution",
            "delete_solution",
        ],
        &[NotConnected, Connected, Debugging, Paused],
    ),
];

/// The states `tool` is listed in under `--dynamic-tools`.
pub fn listed_in(tool: &str) -> &'static [ToolState] {
    LISTED_IN
        .iter()
        .find(|(tools, _)| tools.contains(&tool))
        .map(|(_, states)| *states)
        .unwrap_or(&ToolState::ALL)
}

/// What one session lists: the tools it hid, and the list its client last saw.
#[derive(Debug)]
pub(crate) struct Visibility {
    dynamic: bool,
    hidden: Mutex<BTreeSet<String>>,
    /// The names the client was last given or told about; `None` before it asked.
    seen: Mutex<Option<Vec<String>>>,
    /// Counts list changes; the session's announcers wait on it.
    changes: watch::Sender<u64>,
    /// The count when the latest `subscriptions/listen` was accepted.
    listen_from: AtomicU64,
}

impl Visibility {
    pub(crate) fn new(dynamic: bool) -> Self {
        Self {
            dynamic,
            hidden: Mutex::default(),
            seen: Mutex::default(),
            changes: watch::Sender::new(0),
            listen_from: AtomicU64::new(0),
        }
    }

    pub(crate) fn dynamic(&self) -> bool {
        self.dynamic
    }

    // A poisoned lock only means a panic elsewhere mid-update; the set is still usable.
    fn hidden_set(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.hidden.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn is_hidden(&self, tool: &str) -> bool {
        self.hidden_set().contains(tool)
    }

    /// The tools of `all` to list in `state` (`None`: a fixed list), minus the hidden ones.
    pub(crate) fn select(&self, all: &[Tool], state: Option<ToolState>) -> Vec<Tool> {
        let hidden = self.hidden_set();
        all.iter()
            .filter(|t| !hidden.contains(t.name.as_ref()))
            .filter(|t| state.is_none_or(|s| listed_in(&t.name).contains(&s)))
            .cloned()
            .collect()
    }

    /// Records the list the client now has or should have; a list that differs from the one
    /// it had is announced. `asked`: the client changed it (hide/show), so it is announced even
    /// before the client ever listed; otherwise the first list is only a baseline.
    pub(crate) fn record(&self, names: Vec<String>, asked: bool) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let changed = match seen.as_ref() {
            Some(s) => *s != names,
            None => asked,
        };
        *seen = Some(names);
        drop(seen);
        if changed {
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// Marks that the client has the current list without being told (it just listed).
    pub(crate) fn record_listed(&self, names: Vec<String>) {
        *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = Some(names);
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// How many changes there have been.
    pub(crate) fn version(&self) -> u64 {
        *self.changes.borrow()
    }

    /// A `subscriptions/listen` is about to be acknowledged: its announcer starts from here, so
    /// a change the client makes right after the acknowledgment is not missed.
    pub(crate) fn listen_requested(&self) {
        self.listen_from.store(self.version(), Ordering::SeqCst);
    }

    pub(crate) fn listen_from(&self) -> u64 {
        self.listen_from.load(Ordering::SeqCst)
    }

    /// Hides the tools `entries` name (names, globs, family names) among `offered`. All or
    /// nothing: an entry that matches no tool changes nothing and comes back in the error.
    pub(crate) fn hide(
        &self,
        offered: &[&str],
        entries: &[String],
    ) -> Result<Change, Vec<Unmatched>> {
        let resolved = resolve(offered, entries)?;
        let mut change = Change::default();
        let mut hidden = self.hidden_set();
        for name in resolved {
            if META_TOOLS.contains(&name.as_str()) {
                change.kept.push(name);
            } else if hidden.insert(name.clone()) {
                change.changed.push(name);
            } else {
                change.unchanged.push(name);
            }
        }
        change.hidden = hidden.iter().cloned().collect();
        Ok(change)
    }

    /// Shows hidden tools again (same entries as `hide`).
    pub(crate) fn show(
        &self,
        offered: &[&str],
        entries: &[String],
    ) -> Result<Change, Vec<Unmatched>> {
        let resolved = resolve(offered, entries)?;
        let mut change = Change::default();
        let mut hidden = self.hidden_set();
        for name in resolved {
            if hidden.remove(&name) {
                change.changed.push(name);
            } else {
                change.unchanged.push(name);
            }
        }
        change.hidden = hidden.iter().cloned().collect();
        Ok(change)
    }
}

/// What hide or show did.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Change {
    /// Tools this call hid (or showed).
    pub changed: Vec<String>,
    /// Tools that already were hidden (or listed).
    pub unchanged: Vec<String>,
    /// hide_tools / show_tools, matched by a pattern and left listed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// Every tool hidden in this session now.
    pub hidden: Vec<String>,
    /// How many tools the session lists now.
    pub listed: usize,
    /// Shown tools the current state leaves out of the list, with when they are listed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub listed_later: Vec<String>,
}

/// An entry of hide_tools / show_tools that names no tool.
#[derive(Debug, PartialEq)]
pub(crate) struct Unmatched {
    pub entry: String,
    pub reason: String,
}

/// `*` (any run) and `?` (one character), case-insensitive.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let n: Vec<char> = name.to_lowercase().chars().collect();
    // Iterative matching with one backtrack point: linear in practice, no recursion.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?'])
}

/// The offered tools `entries` name, in offered order, or every entry that names none.
fn resolve(offered: &[&str], entries: &[String]) -> Result<Vec<String>, Vec<Unmatched>> {
    let mut picked: BTreeSet<&str> = BTreeSet::new();
    let mut unmatched = Vec::new();
    for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let family = ToolFamily::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(entry));
        let matches: Vec<&str> = match family {
            // A family name stands for its tools.
            Some(family) => offered
                .iter()
                .copied()
                .filter(|t| crate::family_of(t) == Some(family))
                .collect(),
            None if is_glob(entry) => offered
                .iter()
                .copied()
                .filter(|t| glob_match(entry, t))
                .collect(),
            None => offered
                .iter()
                .copied()
                .filter(|t| t.eq_ignore_ascii_case(entry))
                .collect(),
        };
        if matches.is_empty() {
            unmatched.push(Unmatched {
                entry: entry.to_string(),
                reason: why_unmatched(offered, entry, family),
            });
        }
        picked.extend(matches);
    }
    if !unmatched.is_empty() {
        return Err(unmatched);
    }
    Ok(offered
        .iter()
        .filter(|t| picked.contains(*t))
        .map(|t| t.to_string())
        .collect())
}

/// Why `entry` matched nothing, with the names it was probably after.
fn why_unmatched(offered: &[&str], entry: &str, family: Option<ToolFamily>) -> String {
    if let Some(family) = family {
        return format!("this server was started without the {family} tools");
    }
    if let Some(family) = crate::family_of(entry) {
        return format!(
            "`{entry}` is one of the {family} tools, which this server was started without"
        );
    }
    let bare: String = entry
        .chars()
        .map(|c| if matches!(c, '*' | '?') { ' ' } else { c })
        .collect();
    let bare = bare.trim_matches([' ', '_']).to_string();
    if let Some(family) = ToolFamily::ALL
        .into_iter()
        .find(|f| f.name().eq_ignore_ascii_case(&bare))
    {
        return format!(
            "no tool name starts with a family; give the family itself (\"{family}\") for all \
             its tools"
        );
    }
    let close = devlens_core::suggest::closest(&bare, offered.iter().copied(), 4);
    if close.is_empty() {
        "no tool matches; tools/list shows the names".to_string()
    } else {
        format!("did you mean {}?", close.join(", "))
    }
}

/// The error text for entries that matched nothing.
fn unmatched_message(tool: &str, unmatched: &[Unmatched]) -> String {
    let lines: Vec<String> = unmatched
        .iter()
        .map(|u| format!("`{}` matches no tool: {}", u.entry, u.reason))
        .collect();
    format!(
        "{tool} changed nothing. {}. Give tool names, globs (\"*css*\", \"chrome_*\") or a \
         family (api, browser, debugger, docs, kb, workspace).",
        lines.join("; ")
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ToolsArgs {
    /// Names, globs ("*css*", "chrome_*") or families (api, browser, debugger, docs, kb,
    /// workspace).
    #[serde(default)]
    pub tools: Vec<String>,
}

impl DevlensServer {
    /// The state the list follows, or `None` for a fixed list.
    async fn tool_state(&self) -> Option<ToolState> {
        if self.visibility.dynamic() {
            Some(ToolState::of(self.app().browser()).await)
        } else {
            None
        }
    }

    /// The tools this session lists now.
    pub async fn listed_tools(&self) -> Vec<Tool> {
        let state = self.tool_state().await;
        self.visibility.select(&self.tool_list, state)
    }

    /// Looks at the list again and announces it if it changed; returns it. `asked`: the
    /// client changed it itself (see [`Visibility::record`]).
    pub(crate) async fn refresh_tool_list(&self, asked: bool) -> Vec<Tool> {
        let listed = self.listed_tools().await;
        self.visibility
            .record(listed.iter().map(|t| t.name.to_string()).collect(), asked);
        listed
    }

    /// `tool` was hidden by hide_tools in this session.
    pub(crate) fn is_hidden(&self, tool: &str) -> bool {
        self.visibility.is_hidden(tool)
    }

    fn offered_names(&self) -> Vec<&str> {
        self.tool_list.iter().map(|t| t.name.as_ref()).collect()
    }

    /// Announces list changes to a client that began with `initialize`, until it goes away.
    pub(crate) fn announce_to_peer(&self, peer: Peer<RoleServer>) {
        let server = self.clone();
        tokio::spawn(async move {
            server
                .announce(
                    // The session began when this server was made for it.
                    0,
                    || peer.is_transport_closed(),
                    |_| async { peer.notify_tool_list_changed().await.is_ok() },
                )
                .await;
        });
    }

    /// Announces list changes on one `subscriptions/listen` stream until it ends.
    pub(crate) async fn announce_to_subscription(&self, sink: &SubscriptionSink) {
        self.announce(
            self.visibility.listen_from(),
            || false,
            |_| async { sink.notify_tool_list_changed().await.is_ok() },
        )
        .await;
    }

    /// Polls the state (with --dynamic-tools) and calls `notify` for each change after the
    /// `since`th, until `closed` says the client is gone or a notification cannot be delivered.
    async fn announce<F, Fut>(&self, since: u64, closed: impl Fn() -> bool, notify: F)
    where
        F: Fn(()) -> Fut,
        Fut: Future<Output = bool>,
    {
        let mut changes = self.visibility.subscribe();
        if *changes.borrow() != since {
            // Changed between the start of the session and this task's first look.
            changes.mark_changed();
        }
        // The baseline: what the client has now, if it has not listed yet.
        self.refresh_tool_list(false).await;
        let mut tick = tokio::time::interval(if self.visibility.dynamic() {
            POLL
        } else {
            IDLE_POLL
        });
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() || !notify(()).await {
                        break;
                    }
                }
                _ = tick.tick() => {
                    if closed() {
                        break;
                    }
                    if self.visibility.dynamic() {
                        self.refresh_tool_list(false).await;
                    }
                }
            }
        }
    }

    /// The reply to hide_tools / show_tools.
    async fn visibility_reply(
        &self,
        tool: &str,
        outcome: Result<Change, Vec<Unmatched>>,
    ) -> CallToolResult {
        let mut change = match outcome {
            Ok(change) => change,
            Err(unmatched) => return failure(unmatched_message(tool, &unmatched)),
        };
        let listed = self.refresh_tool_list(!change.changed.is_empty()).await;
        change.listed = listed.len();
        if tool == "show_tools"
            && let Some(state) = self.tool_state().await
        {
            change.listed_later = change
                .changed
                .iter()
                .filter(|t| !listed.iter().any(|l| l.name == **t))
                .map(|t| {
                    let when: Vec<&str> = listed_in(t).iter().map(|s| s.how_to_reach()).collect();
                    format!("{t} (listed {}; now {state})", when.join(" or "))
                })
                .collect();
        }
        structured(change_text(tool, &change), &change)
    }
}

fn names(list: &[String]) -> String {
    list.join(", ")
}

fn change_text(tool: &str, c: &Change) -> String {
    let hide = tool == "hide_tools";
    let mut parts = Vec::new();
    if !c.changed.is_empty() {
        parts.push(format!(
            "{} {}",
            if hide { "hidden:" } else { "shown:" },
            names(&c.changed)
        ));
    }
    if !c.unchanged.is_empty() {
        parts.push(format!(
            "{} {}",
            if hide {
                "already hidden:"
            } else {
                "were not hidden:"
            },
            names(&c.unchanged)
        ));
    }
    if !c.kept.is_empty() {
        parts.push(format!(
            "{} stay listed (they bring hidden tools back)",
            names(&c.kept)
        ));
    }
    if !c.listed_later.is_empty() {
        parts.push(format!("not listed yet: {}", names(&c.listed_later)));
    }
    let mut text = parts.join(". ");
    text.push_str(&format!(". {} tools listed", c.listed));
    if c.hidden.is_empty() {
        text.push_str(", none hidden.");
    } else {
        text.push_str(&format!(
            "; hidden: {}. show_tools {{\"tools\": [\"*\"]}} shows them all.",
            names(&c.hidden)
        ));
    }
    text
}

/// The answer to a call of a tool hidden in this session.
pub(crate) fn hidden_tool_reply(tool: &str) -> CallToolResult {
    failure(format!(
        "tool `{tool}` is hidden in this session (hide_tools). Call show_tools with \
         {{\"tools\": [\"{tool}\"]}} to use it again."
    ))
}

#[tool_router(router = visibility_tools, vis = "pub(crate)")]
impl DevlensServer {
    /// Take tools out of this session's tool list; they refuse calls until show_tools brings them
    /// back.
    #[tool(
        name = "hide_tools",
        annotations(
            title = "Hide tools",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn hide_tools(&self, Parameters(args): Parameters<ToolsArgs>) -> CallToolResult {
        if args.tools.iter().all(|t| t.trim().is_empty()) {
            return failure(
                "give tools: names, globs (\"*css*\", \"chrome_*\") or a family (api, browser, \
                 debugger, docs, kb, workspace)",
            );
        }
        if let Some(meta) = args
            .tools
            .iter()
            .map(|t| t.trim())
            .find(|t| META_TOOLS.iter().any(|m| m.eq_ignore_ascii_case(t)))
        {
            return failure(format!(
                "{meta} cannot be hidden: hide_tools and show_tools are how hidden tools come \
                 back. Nothing was hidden."
            ));
        }
        let outcome = self.visibility.hide(&self.offered_names(), &args.tools);
        self.visibility_reply("hide_tools", outcome).await
    }

    /// Put hidden tools back in this session's tool list ("*": all).
    #[tool(
        name = "show_tools",
        annotations(
            title = "Show hidden tools",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn show_tools(&self, Parameters(args): Parameters<ToolsArgs>) -> CallToolResult {
        if args.tools.iter().all(|t| t.trim().is_empty()) {
            return failure(
                "give tools: names, globs (\"*css*\"), a family, or [\"*\"] for every hidden tool",
            );
        }
        let outcome = self.visibility.show(&self.offered_names(), &args.tools);
        self.visibility_reply("show_tools", outcome).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFERED: &[&str] = &[
        "chrome",
        "chrome_list_connections",
        "inject_css",
        "remove_css",
        "snapshot",
        "screenshot",
        "hide_tools",
        "show_tools",
        "enable_debug_tools",
    ];

    fn entries(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn globs_match_runs_and_single_characters() {
        assert!(glob_match("*css*", "inject_css"));
        assert!(glob_match("chrome_*", "chrome_list_connections"));
        assert!(!glob_match("chrome_*", "chrome"));
        assert!(glob_match("s?apshot", "snapshot"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("*_*_*", "a_b_c"));
        assert!(!glob_match("*_*_*", "a_b"));
        assert!(glob_match("SNAP*", "snapshot"));
    }

    #[test]
    fn hide_and_show_by_name_and_glob_keep_the_meta_tools() {
        let v = Visibility::new(false);
        let change = v.hide(OFFERED, &entries(&["*css*", "snapshot"])).unwrap();
        assert_eq!(change.changed, ["inject_css", "remove_css", "snapshot"]);
        assert!(v.is_hidden("remove_css"));
        let change = v.hide(OFFERED, &entries(&["*_tools"])).unwrap();
        assert_eq!(change.changed, ["enable_debug_tools"]);
        assert_eq!(change.kept, ["hide_tools", "show_tools"]);
        assert!(!v.is_hidden("hide_tools"));
        let change = v.show(OFFERED, &entries(&["*"])).unwrap();
        assert_eq!(change.changed.len(), 4);
        assert!(change.hidden.is_empty());
    }

    #[test]
    fn entries_that_match_nothing_change_nothing_and_say_what_was_meant() {
        let v = Visibility::new(false);
        let errors = v
            .hide(OFFERED, &entries(&["snapshto", "inject_css"]))
            .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].reason.contains("snapshot"), "{:?}", errors[0]);
        assert!(!v.is_hidden("inject_css"), "all or nothing");
        let errors = v.hide(OFFERED, &entries(&["browser_*"])).unwrap_err();
        assert!(errors[0].reason.contains("\"browser\""), "{:?}", errors[0]);
    }

    #[test]
    fn every_state_lists_the_always_on_tools() {
        for state in ToolState::ALL {
            assert!(listed_in("hide_tools").contains(&state));
            assert!(listed_in("list_api_tags").contains(&state));
            assert!(listed_in("chrome").contains(&state));
            assert!(listed_in("ask_knowledge_base").contains(&state));
        }
        assert_eq!(listed_in("step"), [Paused]);
        assert_eq!(listed_in("enable_debug_tools"), [Connected]);
    }

    #[test]
    fn every_browser_debugger_and_kb_tool_has_its_states() {
        for family in [ToolFamily::Browser, ToolFamily::Debugger, ToolFamily::Kb] {
            for tool in DevlensServer::family_tools(family).list_all() {
                assert!(
                    LISTED_IN
                        .iter()
                        .any(|(tools, _)| tools.contains(&tool.name.as_ref())),
                    "{} is missing from LISTED_IN (and README's state table)",
                    tool.name
                );
            }
        }
    }

    #[test]
    fn the_list_is_announced_only_when_it_changes() {
        let v = Visibility::new(true);
        let rx = v.subscribe();
        v.record(entries(&["a"]), false);
        assert!(!rx.has_changed().unwrap(), "the first list is a baseline");
        v.record(entries(&["a"]), false);
        assert!(!rx.has_changed().unwrap());
        v.record(entries(&["a", "b"]), false);
        assert!(rx.has_changed().unwrap());
        // A change the client asked for is announced even before it first listed.
        let v = Visibility::new(false);
        let rx = v.subscribe();
        v.record(entries(&["a"]), true);
        assert!(rx.has_changed().unwrap());
    }
}
