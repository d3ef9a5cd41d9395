//! The debugger against a real headless Chromium: breakpoints hit by a click, the pause context
//! (source, stack, locals, console), stepping with changed variables, evaluation in a frame,
//! pausing on an uncaught exception, and the answers of calls made in the wrong state.
//!
//! The fixture pages are served by this file (one small server); the browser is the shared one
//! of `common`.

mod common;

use std::time::{Duration, Instant};

use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use common::{CONN, Env, with_browser};
use devlens_browser::actions::ClickOptions;
use devlens_browser::{
    BreakpointRequest, BrowserError, ElementTarget, EvaluateOptions, ExceptionPause, PauseContext,
    StepDirection, Tab, TabSelector,
};
use tokio::sync::OnceCell;

/// Line numbers below are 1-based, as the tools take them.
const APP_JS: &str = r#"function add(a, b) {
  const sum = a + b;
  return sum;
}
function total(items) {
  let acc = 0;
  for (const x of items) {
    acc = add(acc, x);
  }
  console.log("total", acc);
  return acc;
}
document.getElementById("go").addEventListener("click", () => {
  const items = [1, 2, 3];
  const result = total(items);
  document.getElementById("out").textContent = String(result);
});
document.getElementById("boom").addEventListener("click", () => {
  const config = null;
  return config.value;
});
"#;

const PAGE: &str = r#"<!doctype html><html><head><meta charset=utf-8><title>Debugger fixture</title></head>
<body><button id="go">Go</button> <button id="boom">Boom</button><p id="out"></p>
<script src="/js/app.js"></script><script>console.log("page ready");</script></body></html>"#;

static SERVER: OnceCell<String> = OnceCell::const_new();

async fn server() -> String {
    SERVER
        .get_or_init(|| async {
            let router = Router::new()
                .route("/debug", get(|| async { Html(PAGE) }))
                .route(
                    "/js/app.js",
                    get(|| async {
                        ([(header::CONTENT_TYPE, "application/javascript")], APP_JS).into_response()
                    }),
                );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind the fixture server");
            let addr = listener.local_addr().expect("address");
            tokio::spawn(async move {
                let _ = axum::serve(listener, router).await;
            });
            format!("http://{addr}")
        })
        .await
        .clone()
}

/// A new tab of the shared browser showing the debugger fixture.
async fn open(env: &Env) -> Tab {
    let url = format!("{}/debug", server().await);
    let opened = env
        .sessions
        .new_tab(Some(CONN), Some(&url))
        .await
        .expect("open the fixture");
    env.sessions
        .tab_by(Some(CONN), &TabSelector::Id(opened.tab.id))
        .await
        .expect("tab handle")
}

fn sel(s: &str) -> ElementTarget {
    ElementTarget::Selector(s.into())
}

fn local<'a>(ctx: &'a PauseContext, name: &str) -> Option<&'a devlens_browser::debugger::Variable> {
    ctx.locals.iter().find(|v| v.name == name)
}

async fn step(tab: &Tab, direction: StepDirection) -> PauseContext {
    let outcome = tab.step(direction).await.expect("step");
    let text = outcome.to_text();
    outcome
        .paused
        .unwrap_or_else(|| panic!("not paused after a step: {text}"))
}

#[test]
fn a_click_hits_a_breakpoint_and_steps_show_what_changed() {
    with_browser(|env: Env| async move {
        let tab = open(&env).await;
        let set = tab
            .set_breakpoint(&BreakpointRequest {
                url: "app.js".into(),
                line: 6,
                ..Default::default()
            })
            .await
            .expect("set a breakpoint");
        let bp = set.breakpoint.clone();
        assert!(
            bp.locations.iter().any(|l| l.contains("/js/app.js:6:")),
            "{}",
            set.to_text()
        );

        // The click returns at once with where the page stopped.
        let start = Instant::now();
        let outcome = tab
            .click(&sel("#go"), &ClickOptions::default())
            .await
            .expect("click");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        let ctx = outcome.paused.as_deref().expect("paused by the breakpoint");
        let text = outcome.to_text();
        assert_eq!(ctx.reason, "breakpoint", "{text}");
        assert_eq!(ctx.hit_breakpoints, vec![bp.id.clone()]);
        assert_eq!(ctx.location.function, "total");
        assert_eq!(ctx.location.line, 6);
        assert!(ctx.location.url.ends_with("/js/app.js"), "{text}");
        let current = ctx.source.iter().find(|l| l.current).expect("current line");
        assert_eq!(current.text.trim(), "let acc = 0;");
        assert_eq!(ctx.source.len(), 5, "{text}");
        assert_eq!(ctx.call_stack[0].location.function, "total");
        assert_eq!(ctx.call_stack[1].location.line, 15, "{text}");
        assert_eq!(
            local(ctx, "items").map(|v| v.value.as_str()),
            Some("[1, 2, 3]"),
            "{text}"
        );
        assert!(ctx.console.iter().any(|e| e.text == "page ready"), "{text}");
        assert!(text.contains("→ 6 |   let acc = 0;"), "{text}");
        assert_eq!(bp.id, "1", "short ids");

        // Other calls keep answering while the page is paused.
        assert!(tab.is_paused());
        assert!(tab.info().await.expect("tab info").url.ends_with("/debug"));
        assert_eq!(tab.list_breakpoints().breakpoints.len(), 1);
        let stack = tab.call_stack().await.expect("call stack");
        assert_eq!(stack.frames.len(), 2, "{}", stack.to_text());

        // Step over `let acc = 0`: acc changed.
        let ctx = step(&tab, StepDirection::Over).await;
        assert_eq!(ctx.location.line, 7, "{}", ctx.to_text());
        let acc = local(&ctx, "acc").expect("acc");
        assert_eq!(acc.value, "0");
        assert!(acc.changed, "{}", ctx.to_text());
        assert!(!local(&ctx, "items").expect("items").changed);

        // Into the loop body, then into add().
        let mut ctx = step(&tab, StepDirection::Over).await;
        for _ in 0..3 {
            if ctx.location.line == 8 {
                break;
            }
            ctx = step(&tab, StepDirection::Over).await;
        }
        assert_eq!(ctx.location.line, 8, "{}", ctx.to_text());
        let ctx = step(&tab, StepDirection::Into).await;
        assert_eq!(ctx.location.function, "add", "{}", ctx.to_text());
        assert_eq!(ctx.location.line, 2);
        assert_eq!(local(&ctx, "a").map(|v| v.value.as_str()), Some("0"));
        assert_eq!(local(&ctx, "b").map(|v| v.value.as_str()), Some("1"));

        // Evaluate in the innermost frame and in the caller's.
        let e = tab.evaluate_in_frame(0, "a + b + 100").await.expect("eval");
        assert_eq!(e.value, "101", "{}", e.to_text());
        let e = tab
            .evaluate_in_frame(1, "items.length")
            .await
            .expect("eval");
        assert_eq!((e.function.as_str(), e.value.as_str()), ("total", "3"));
        let e = tab.evaluate_in_frame(0, "nope.x").await.expect("eval");
        assert!(
            e.error
                .as_deref()
                .is_some_and(|m| m.contains("nope is not defined")),
            "{}",
            e.to_text()
        );
        let err = tab.evaluate_in_frame(9, "1").await.unwrap_err();
        assert!(err.to_string().contains("no frame #9"), "{err}");

        // Step out: back in total, after the call to add.
        let ctx = step(&tab, StepDirection::Out).await;
        assert_eq!(ctx.location.function, "total", "{}", ctx.to_text());
        assert!((7..=8).contains(&ctx.location.line), "{}", ctx.to_text());
        assert_eq!(local(&ctx, "acc").map(|v| v.value.as_str()), Some("1"));

        // Remove the breakpoint and resume: the handler runs to its end.
        let list = tab.remove_breakpoint(&bp.id).await.expect("remove");
        assert!(list.breakpoints.is_empty(), "{}", list.to_text());
        let resumed = tab.resume().await.expect("resume");
        assert!(resumed.paused.is_none(), "{}", resumed.to_text());
        assert!(!tab.is_paused());
        let out = tab
            .evaluate(
                "document.getElementById('out').textContent",
                &EvaluateOptions::default(),
            )
            .await
            .expect("evaluate");
        assert_eq!(out.value, serde_json::json!("6"));

        // No breakpoint any more: the next click runs through.
        let outcome = tab
            .click(&sel("#go"), &ClickOptions::default())
            .await
            .expect("click");
        assert!(outcome.paused.is_none(), "{}", outcome.to_text());
    });
}

#[test]
fn pauses_on_an_uncaught_exception_with_its_message() {
    with_browser(|env: Env| async move {
        let tab = open(&env).await;
        let status = tab
            .pause_on_exceptions(ExceptionPause::Uncaught)
            .await
            .expect("pause on exceptions");
        assert_eq!(status.pause_on_exceptions, ExceptionPause::Uncaught);
        let outcome = tab
            .click(&sel("#boom"), &ClickOptions::default())
            .await
            .expect("click");
        let ctx = outcome.paused.as_deref().expect("paused on the exception");
        assert_eq!(ctx.reason, "exception", "{}", ctx.to_text());
        assert_eq!(ctx.location.line, 20);
        assert!(
            ctx.exception
                .as_deref()
                .is_some_and(|e| e.contains("TypeError")),
            "{}",
            ctx.to_text()
        );
        assert_eq!(local(ctx, "config").map(|v| v.value.as_str()), Some("null"));
        tab.resume().await.expect("resume");
        tab.pause_on_exceptions(ExceptionPause::None)
            .await
            .expect("stop pausing on exceptions");
        let outcome = tab
            .click(&sel("#boom"), &ClickOptions::default())
            .await
            .expect("click");
        assert!(outcome.paused.is_none(), "{}", outcome.to_text());
    });
}

#[test]
fn calls_in_the_wrong_state_say_what_to_do_first() {
    with_browser(|env: Env| async move {
        let tab = open(&env).await;
        for err in [
            tab.resume().await.unwrap_err(),
            tab.step(StepDirection::Over).await.unwrap_err(),
            tab.call_stack().await.unwrap_err(),
            tab.evaluate_in_frame(0, "1").await.unwrap_err(),
        ] {
            let m = err.to_string();
            assert!(
                m.contains("not paused") && m.contains("`breakpoint`"),
                "{m}"
            );
        }
        let err = tab
            .set_breakpoint(&BreakpointRequest {
                url: "app.js".into(),
                line: 0,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("1-based"), "{err}");

        // A script that is not there: set, but unbound, and the loaded scripts are named.
        let set = tab
            .set_breakpoint(&BreakpointRequest {
                url: "missing.js".into(),
                line: 3,
                ..Default::default()
            })
            .await
            .expect("set");
        assert!(set.breakpoint.locations.is_empty());
        assert!(
            set.notes.iter().any(|n| n.contains("/js/app.js")),
            "{}",
            set.to_text()
        );
        let err = tab.remove_breakpoint("nope").await.unwrap_err();
        assert!(err.to_string().contains(&set.breakpoint.id), "{err}");

        // Waiting for a pause that never comes says what was set.
        let err = tab
            .wait_for_pause(Some(Duration::from_millis(300)))
            .await
            .unwrap_err();
        assert!(matches!(err, BrowserError::Timeout { .. }), "{err}");
        assert!(err.to_string().contains("1 breakpoint(s)"), "{err}");

        // A conditional breakpoint only pauses when its condition holds.
        tab.set_breakpoint(&BreakpointRequest {
            url: "app.js".into(),
            line: 2,
            condition: Some("b === 3".into()),
            ..Default::default()
        })
        .await
        .expect("conditional breakpoint");
        let outcome = tab
            .click(&sel("#go"), &ClickOptions::default())
            .await
            .expect("click");
        let ctx = outcome.paused.as_deref().expect("paused on b === 3");
        assert_eq!(local(ctx, "b").map(|v| v.value.as_str()), Some("3"));
        assert_eq!(local(ctx, "a").map(|v| v.value.as_str()), Some("3"));
        // execution pause while paused answers with where it is.
        let again = tab.pause().await.expect("pause");
        assert!(again.paused.is_some(), "{}", again.to_text());
        tab.resume().await.expect("resume");
    });
}
