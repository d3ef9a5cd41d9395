//! Tool visibility end to end: a real rmcp client drives `devlens serve` over stdio.
//!
//! With `--dynamic-tools` the list follows the browser through its four states (not
//! connected, connected, debugging, paused) and the client hears `tools/list_changed` each time,
//! also when the state changes by itself (a breakpoint hit by a timer, the browser killed from
//! outside). Without it the list stays put and wrong-state calls say what to do first.
//! hide_tools / show_tools work in both modes.
//!
//! The browser parts need Chromium: without it they print a skip notice and pass, unless
//! DEVLENS_REQUIRE_BROWSER=1, where they fail saying what is missing.

use crate::common;

use common::mcp::{err, ok};

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::{
    ClientServiceExt,
    model::{ProtocolVersion, ServerNotification, SubscriptionFilter},
    service::{NotificationContext, RoleClient, RunningService},
    transport::{ConfigureCommandExt, TokioChildProcess},
};
use serde_json::json;
use tokio::sync::Notify;

/// Counts the `notifications/tools/list_changed` the server sends.
#[derive(Debug, Clone, Default)]
struct ListChanges {
    count: Arc<AtomicUsize>,
    notify: Arc<Notify>,
}

impl rmcp::ClientHandler for ListChanges {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}

impl ListChanges {
    fn seen(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Waits until more than `before` notifications arrived; false after `within`.
    async fn after(&self, before: usize, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let notified = self.notify.notified();
            if self.seen() > before {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.seen() > before;
            }
        }
    }
}

type Client = RunningService<RoleClient, ListChanges>;

const APP_JS: &str = r#"function price(qty, unit) {
  const total = qty * unit;
  return total * 1.2;
}
document.getElementById("buy").addEventListener("click", () => {
  document.getElementById("out").textContent = String(price(3, 10));
});
"#;

const PAGE: &str = r#"<!doctype html><html><head><meta charset=utf-8><title>Shop</title></head>
<body><button id="buy">Buy</button><p id="out"></p>
<script src="/static/app.js"></script></body></html>"#;

async fn fixture_server() -> String {
    common::serve_page_with_script(PAGE, APP_JS).await
}

/// `devlens serve` with the given extra arguments and environment, and a client that counts
/// list changes (the 2025-11-25 `initialize` handshake).
async fn start(args: &[&str], env: &[(&str, &str)]) -> (Client, ListChanges, tempfile::TempDir) {
    start_with(args, env, rmcp::ClientLifecycleMode::Initialize).await
}

async fn start_with(
    args: &[&str],
    env: &[(&str, &str)],
    lifecycle: rmcp::ClientLifecycleMode,
) -> (Client, ListChanges, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = assert_cmd::cargo::cargo_bin("devlens");
    let data_dir = dir.path().to_path_buf();
    let transport = TokioChildProcess::new(tokio::process::Command::new(bin).configure(|cmd| {
        cmd.arg("serve")
            .args(args)
            .env("DEVLENS_DATA_DIR", &data_dir)
            .env_remove("DEVLENS_TOOLS")
            .env_remove("DEVLENS_DYNAMIC_TOOLS")
            .env_remove("CHROME_PATH")
            .current_dir(&data_dir);
        for (key, value) in env {
            cmd.env(key, value);
        }
    }))
    .expect("spawn devlens serve");
    let changes = ListChanges::default();
    let client = changes
        .clone()
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("start a session over stdio");
    (client, changes, dir)
}

async fn listed(client: &Client) -> BTreeSet<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// The list has every tool of `present` and none of `absent`.
fn assert_lists(list: &BTreeSet<String>, state: &str, present: &[&str], absent: &[&str]) {
    for name in present {
        assert!(
            list.contains(*name),
            "{state}: {name} is not listed: {list:?}"
        );
    }
    for name in absent {
        assert!(!list.contains(*name), "{state}: {name} is listed: {list:?}");
    }
}

const ALWAYS: &[&str] = &[
    "chrome",
    "chrome_list_connections",
    "hide_tools",
    "show_tools",
    "list_api_tags",
    "search_api_documentation",
];
const PAGE_TOOLS: &[&str] = &["navigate", "snapshot", "click_element", "evaluate"];
const WAIT: Duration = Duration::from_secs(10);

/// Waits for tools/list_changed notifications after the first `before` until the list has
/// every tool of `present` and none of `absent`; returns it. (A notification of an earlier
/// change may still be on its way, so one notification alone proves nothing.)
async fn expect_list(
    client: &Client,
    changes: &ListChanges,
    mut before: usize,
    state: &str,
    present: &[&str],
    absent: &[&str],
) -> BTreeSet<String> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        assert!(
            changes.after(before, left).await,
            "{state}: no tools/list_changed (list now: {:?})",
            listed(client).await
        );
        before = changes.seen();
        let list = listed(client).await;
        let fits =
            present.iter().all(|t| list.contains(*t)) && absent.iter().all(|t| !list.contains(*t));
        if fits {
            return list;
        }
        if tokio::time::Instant::now() >= deadline {
            assert_lists(&list, state, present, absent);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_tool_list_follows_the_browser_through_the_four_states() {
    if !common::browser_available() {
        return;
    }
    let base = fixture_server().await;
    // The environment variable turns it on as well as the flag.
    let (client, changes, _dir) = start(&[], &[("DEVLENS_DYNAMIC_TOOLS", "1")]).await;
    let capabilities = client
        .peer_info()
        .map(|i| i.capabilities.clone())
        .expect("server info");
    assert_eq!(
        capabilities.tools.and_then(|t| t.list_changed),
        Some(true),
        "listChanged is advertised"
    );

    // Not connected: entry tools and the always-on ones.
    let list = listed(&client).await;
    assert_lists(
        &list,
        "not connected",
        ALWAYS,
        &[
            "navigate",
            "snapshot",
            "target",
            "enable_debug_tools",
            "breakpoint",
            "step",
        ],
    );
    // A tool the state leaves out still answers, with what to do first.
    let message = err(&client, "snapshot", json!({})).await;
    assert!(message.contains("chrome action `launch`"), "{message}");

    // Connected: page tools and enable_debug_tools.
    let before = changes.seen();
    let launched = ok(&client, "chrome", json!({ "action": "launch" })).await;
    expect_list(
        &client,
        &changes,
        before,
        "connected",
        &[
            ALWAYS,
            PAGE_TOOLS,
            &["target", "get_console_logs", "enable_debug_tools"],
        ]
        .concat(),
        &["breakpoint", "execution", "step", "call_stack"],
    )
    .await;
    ok(&client, "navigate", json!({ "url": format!("{base}/") })).await;
    let message = err(&client, "step", json!({ "direction": "over" })).await;
    assert!(message.contains("not paused"), "{message}");

    // Debugging: breakpoints, pausing, exceptions.
    let before = changes.seen();
    ok(&client, "enable_debug_tools", json!({})).await;
    let debugging_tools: &[&str] = &[
        "breakpoint",
        "execution",
        "pause_on_exceptions",
        "wait_for_pause",
    ];
    expect_list(
        &client,
        &changes,
        before,
        "debugging",
        &[ALWAYS, PAGE_TOOLS, debugging_tools].concat(),
        &[
            "enable_debug_tools",
            "step",
            "call_stack",
            "evaluate_in_frame",
        ],
    )
    .await;

    // Paused by a click: stepping tools; page tools that wait on the page are out of the way.
    let set = ok(
        &client,
        "breakpoint",
        json!({ "action": "set", "url": "app.js", "lineNumber": 2 }),
    )
    .await;
    let breakpoint_id = set.data["breakpoint"]["id"]
        .as_str()
        .expect("breakpoint id")
        .to_string();
    let before = changes.seen();
    let clicked = ok(&client, "click_element", json!({ "element": "#buy" })).await;
    assert!(clicked.text.contains("Paused"), "{}", clicked.text);
    let paused_tools: &[&str] = &[
        "step",
        "call_stack",
        "evaluate_in_frame",
        "execution",
        "breakpoint",
        "get_console_logs",
        "snapshot",
        "screenshot",
    ];
    expect_list(
        &client,
        &changes,
        before,
        "paused",
        &[ALWAYS, paused_tools].concat(),
        &[
            "click_element",
            "query_elements",
            "navigate",
            "enable_debug_tools",
        ],
    )
    .await;
    ok(&client, "step", json!({ "direction": "over" })).await;

    // Resumed: back to debugging.
    let before = changes.seen();
    ok(&client, "execution", json!({ "action": "resume" })).await;
    expect_list(
        &client,
        &changes,
        before,
        "debugging again",
        debugging_tools,
        &["step"],
    )
    .await;

    // A pause nobody called for: a timer hits the breakpoint after the call returned.
    ok(
        &client,
        "evaluate",
        json!({ "expression": "setTimeout(() => price(1, 1), 800); 'scheduled'" }),
    )
    .await;
    let list = listed(&client).await;
    assert!(!list.contains("step"), "not paused yet: {list:?}");
    let before = changes.seen();
    expect_list(
        &client,
        &changes,
        before,
        "paused by a timer",
        &["step", "call_stack"],
        &["click_element"],
    )
    .await;
    ok(
        &client,
        "breakpoint",
        json!({ "action": "remove", "breakpointId": breakpoint_id }),
    )
    .await;
    let before = changes.seen();
    ok(&client, "execution", json!({ "action": "resume" })).await;
    expect_list(
        &client,
        &changes,
        before,
        "resumed",
        debugging_tools,
        &["step"],
    )
    .await;

    // The browser dies outside devlens: back to the entry tools.
    let pid = launched.data["pid"].as_u64().expect("launched browser pid");
    let before = changes.seen();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    expect_list(
        &client,
        &changes,
        before,
        "not connected again",
        ALWAYS,
        &["navigate", "snapshot", "breakpoint", "step"],
    )
    .await;
    let message = err(&client, "snapshot", json!({})).await;
    assert!(message.contains("closed or crashed"), "{message}");

    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_tool_list_stays_put_and_wrong_state_calls_say_what_to_do_first() {
    let (client, changes, _dir) = start(&["--tools", "browser,debugger"], &[]).await;
    let all = listed(&client).await;
    assert_lists(
        &all,
        "fixed",
        &[
            PAGE_TOOLS,
            &[
                "chrome",
                "enable_debug_tools",
                "breakpoint",
                "step",
                "hide_tools",
                "show_tools",
            ],
        ]
        .concat(),
        &["list_api_tags"],
    );

    // Not connected: every page and debugger tool says how to start.
    for (tool, args) in [
        ("snapshot", json!({})),
        ("navigate", json!({ "url": "about:blank" })),
        ("enable_debug_tools", json!({})),
        ("breakpoint", json!({ "action": "list" })),
        ("step", json!({ "direction": "over" })),
        ("call_stack", json!({})),
        ("execution", json!({ "action": "resume" })),
        ("evaluate_in_frame", json!({ "expression": "1" })),
    ] {
        let message = err(&client, tool, args).await;
        assert!(
            message.contains("no browser connected") && message.contains("chrome action `launch`"),
            "{tool}: {message}"
        );
    }

    if common::browser_available() {
        let base = fixture_server().await;
        ok(&client, "chrome", json!({ "action": "launch" })).await;
        ok(&client, "navigate", json!({ "url": format!("{base}/") })).await;
        // Connected, debugger off or on but not paused: say how to get a pause.
        for (tool, args) in [
            ("step", json!({ "direction": "over" })),
            ("call_stack", json!({})),
            ("evaluate_in_frame", json!({ "expression": "1" })),
            ("execution", json!({ "action": "resume" })),
        ] {
            let message = err(&client, tool, args).await;
            assert!(
                message.contains("not paused") && message.contains("`breakpoint`"),
                "{tool}: {message}"
            );
        }
        ok(&client, "enable_debug_tools", json!({})).await;
        let message = err(&client, "step", json!({ "direction": "into" })).await;
        assert!(message.contains("not paused"), "{message}");

        // Paused: tools that would wait on the page answer at once with what to do.
        ok(
            &client,
            "breakpoint",
            json!({ "action": "set", "url": "app.js", "lineNumber": 2 }),
        )
        .await;
        ok(&client, "click_element", json!({ "element": "#buy" })).await;
        for (tool, args) in [
            ("click_element", json!({ "element": "#buy" })),
            ("query_elements", json!({ "selector": "button" })),
            ("fill_element", json!({ "element": "#out", "value": "x" })),
            ("type_text", json!({ "text": "abc" })),
            ("inject_css", json!({ "css": "p { color: red }" })),
            ("navigate", json!({ "action": "reload" })),
        ] {
            let started = std::time::Instant::now();
            let message = err(&client, tool, args).await;
            assert!(
                message.contains("paused") && message.contains("`execution` action resume"),
                "{tool}: {message}"
            );
            assert!(started.elapsed() < Duration::from_secs(5), "{tool} waited");
        }
        let seen = ok(&client, "snapshot", json!({})).await;
        assert!(seen.text.contains("button \"Buy\""), "{}", seen.text);
        ok(&client, "execution", json!({ "action": "resume" })).await;
        ok(&client, "click_element", json!({ "element": "#out" })).await;
        assert_eq!(listed(&client).await, all, "the list does not move");
        ok(&client, "chrome_disconnect", json!({})).await;
    }
    assert!(
        !changes.after(0, Duration::from_millis(600)).await,
        "no tools/list_changed without --dynamic-tools unless asked for"
    );
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hide_and_show_tools_by_name_glob_and_family() {
    let (client, changes, _dir) = start(&[], &[]).await;
    let all = listed(&client).await;

    let hidden = ok(
        &client,
        "hide_tools",
        json!({ "tools": ["*css*", "chrome_*", "snapshot"] }),
    )
    .await;
    for name in ["inject_css", "remove_css", "chrome_disconnect", "snapshot"] {
        assert!(hidden.text.contains(name), "{}", hidden.text);
    }
    assert!(
        changes.after(0, WAIT).await,
        "hide_tools announces the change"
    );
    let list = listed(&client).await;
    assert_lists(
        &list,
        "after hide",
        &["chrome", "screenshot", "hide_tools", "show_tools"],
        &[
            "inject_css",
            "remove_css",
            "chrome_list_connections",
            "chrome_disconnect",
            "snapshot",
        ],
    );
    assert_eq!(hidden.data["listed"], list.len());

    // A hidden tool says so and how to get it back.
    let message = err(&client, "inject_css", json!({ "css": "p {}" })).await;
    assert!(
        message.contains("hidden") && message.contains("show_tools"),
        "{message}"
    );

    // Refusals change nothing.
    let message = err(&client, "hide_tools", json!({ "tools": ["show_tools"] })).await;
    assert!(message.contains("cannot be hidden"), "{message}");
    let message = err(
        &client,
        "hide_tools",
        json!({ "tools": ["snapshto", "navigate"] }),
    )
    .await;
    assert!(
        message.contains("did you mean") && message.contains("snapshot"),
        "{message}"
    );
    let message = err(&client, "hide_tools", json!({ "tools": ["browser_*"] })).await;
    assert!(message.contains("\"browser\""), "{message}");
    let message = err(&client, "show_tools", json!({ "tools": ["nothing*"] })).await;
    assert!(message.contains("matches no tool"), "{message}");
    assert!(listed(&client).await.contains("navigate"), "all or nothing");
    // A glob that also matches the meta tools leaves them listed.
    let before = changes.seen();
    let kept = ok(&client, "hide_tools", json!({ "tools": ["*_tools"] })).await;
    assert!(kept.text.contains("stay listed"), "{}", kept.text);
    assert!(changes.after(before, WAIT).await, "enable_debug_tools went");
    assert!(listed(&client).await.contains("show_tools"));

    // A family by name.
    let before = changes.seen();
    ok(&client, "hide_tools", json!({ "tools": ["debugger"] })).await;
    assert!(changes.after(before, WAIT).await);
    assert_lists(
        &listed(&client).await,
        "debugger hidden",
        &["navigate"],
        &["step", "breakpoint"],
    );

    // Show one, then everything. (Each change is announced; wait for one before counting the
    // next, or a late announcement counts for the wrong step.)
    let before = changes.seen();
    let shown = ok(&client, "show_tools", json!({ "tools": ["snapshot"] })).await;
    assert!(shown.text.contains("shown: snapshot"), "{}", shown.text);
    assert!(changes.after(before, WAIT).await);
    let before = changes.seen();
    ok(&client, "show_tools", json!({ "tools": ["*"] })).await;
    assert!(changes.after(before, WAIT).await);
    assert_eq!(listed(&client).await, all);
    // Nothing changed, nothing announced.
    let before = changes.seen();
    let again = ok(&client, "show_tools", json!({ "tools": ["*css*"] })).await;
    assert!(again.text.contains("were not hidden"), "{}", again.text);
    assert!(!changes.after(before, Duration::from_millis(600)).await);
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_of_2026_07_28_hear_list_changes_only_on_a_subscription() {
    let lifecycle = rmcp::ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let (client, changes, _dir) = start_with(&["--dynamic-tools"], &[], lifecycle).await;
    let mut subscription = client
        .peer()
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .expect("subscriptions/listen");
    assert_eq!(
        subscription.acknowledged().tools_list_changed,
        Some(true),
        "the server accepts toolsListChanged"
    );
    // (Not connected: snapshot is not listed anyway, so hiding it changes nothing to announce.)
    ok(&client, "hide_tools", json!({ "tools": ["snapshot"] })).await;
    ok(&client, "hide_tools", json!({ "tools": ["list_api_tags"] })).await;
    let heard = tokio::time::timeout(WAIT, subscription.next())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "no notification on the subscription (handler saw {})",
                changes.seen()
            )
        })
        .expect("subscription stream");
    assert!(
        matches!(
            heard,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{heard:?}"
    );
    assert!(!listed(&client).await.contains("list_api_tags"));
    // Nothing outside the subscription: the stateless protocol has no unsolicited lists.
    assert_eq!(changes.seen(), 0);
    client.cancel().await.expect("close");
}
