//! The debugger against a real headless Chromium: breakpoints hit by a click, the pause context
//! (source, stack, locals, console), stepping with changed variables, evaluation in a frame,
//! pausing on an uncaught exception, and the answers of calls made in the wrong state.
//!
//! Source maps: a bundle of the original modules in `fixtures/sourcemap/src`, made by this file
//! (concatenated into one function, indented, with a header line per module) with a map it
//! computes from that known line correspondence — one bundle with an external map carrying
//! `sourcesContent`, one with an inline `data:` map without it (the originals are fetched).
//!
//! The fixture pages are served by this file (one small server); the browser is the shared one
//! of `common`.

use crate::common;

use std::time::{Duration, Instant};

use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use common::{CONN, Env, with_browser};
use devlens_browser::ClickOptions;
use devlens_browser::{
    BreakpointRequest, BrowserError, ElementTarget, EvaluateOptions, ExceptionPause, Navigation,
    PauseContext, StepDirection, Tab, TabSelector, WaitCondition,
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

const PRICE_JS: &str = include_str!("../fixtures/sourcemap/src/price.js");
const CART_JS: &str = include_str!("../fixtures/sourcemap/src/cart.js");
const DISCOUNT_JS: &str = include_str!("../fixtures/sourcemap/src/discount.js");

const SM_PAGE: &str = r#"<!doctype html><html><head><meta charset=utf-8><title>Source maps</title></head>
<body><button id="checkout">Checkout</button> <button id="discount">Discount</button><p id="total"></p>
<script src="/sm/dist/bundle.js"></script><script src="/sm/dist/extra.js"></script></body></html>"#;

/// Base64 VLQ, as bundlers write mappings.
fn vlq(out: &mut String, fields: &[i64]) {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for &f in fields {
        let mut v = if f < 0 { ((-f) << 1) | 1 } else { f << 1 };
        loop {
            let mut digit = (v & 31) as usize;
            v >>= 5;
            if v > 0 {
                digit |= 32;
            }
            out.push(B64[digit] as char);
            if v == 0 {
                break;
            }
        }
    }
}

fn base64(data: &[u8]) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A tiny bundler: the modules inside one arrow function, each line indented by two spaces
/// under a `// name` header, so bundle line = original line + an offset and column + 2. The
/// map has a segment at the start of every word of every line. Returns the bundle (without
/// the sourceMappingURL comment) and the map's JSON.
fn bundle(modules: &[(&str, &str)], with_content: bool, root: &str) -> (String, String) {
    let mut js = String::from("(() => {\n");
    let mut mappings = String::from(";");
    let (mut prev_source, mut prev_line, mut prev_col) = (0i64, 0i64, 0i64);
    for (index, (name, text)) in modules.iter().enumerate() {
        js.push_str(&format!("  // {name}\n"));
        mappings.push(';');
        for (line, code) in text.lines().enumerate() {
            js.push_str("  ");
            js.push_str(code);
            js.push('\n');
            let mut first = true;
            let mut prev_gen = 0i64;
            let bytes = code.as_bytes();
            for col in 0..bytes.len() {
                let starts_word = bytes[col] != b' ' && (col == 0 || bytes[col - 1] == b' ');
                if !starts_word {
                    continue;
                }
                if !first {
                    mappings.push(',');
                }
                first = false;
                let generated = col as i64 + 2;
                vlq(
                    &mut mappings,
                    &[
                        generated - prev_gen,
                        index as i64 - prev_source,
                        line as i64 - prev_line,
                        col as i64 - prev_col,
                    ],
                );
                (prev_gen, prev_source, prev_line, prev_col) =
                    (generated, index as i64, line as i64, col as i64);
            }
            mappings.push(';');
        }
    }
    js.push_str("})();\n");
    let mut map = serde_json::json!({
        "version": 3,
        "file": "bundle.js",
        "sourceRoot": root,
        "sources": modules.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        "names": [],
        "mappings": mappings,
    });
    if with_content {
        map["sourcesContent"] = modules.iter().map(|(_, t)| *t).collect();
    }
    (js, map.to_string())
}

/// The bundle line (1-based) of a module's line: the wrapper line, then per module a header
/// and its lines.
fn bundle_line(modules: &[&str], module: usize, line: u32) -> u32 {
    let before: usize = modules[..module]
        .iter()
        .map(|t| t.lines().count() + 1)
        .sum();
    1 + before as u32 + 1 + line
}

fn js(body: String) -> axum::response::Response {
    ([(header::CONTENT_TYPE, "application/javascript")], body).into_response()
}

async fn server() -> String {
    SERVER
        .get_or_init(|| async {
            let router = Router::new()
                .route("/debug", get(|| async { Html(PAGE) }))
                .route("/sm/page", get(|| async { Html(SM_PAGE) }))
                .route(
                    "/sm/dist/bundle.js",
                    get(|| async {
                        let (code, _) = bundle(
                            &[("../src/price.js", PRICE_JS), ("../src/cart.js", CART_JS)],
                            true,
                            "",
                        );
                        js(format!("{code}//# sourceMappingURL=bundle.js.map\n"))
                    }),
                )
                .route(
                    "/sm/dist/bundle.js.map",
                    get(|| async {
                        bundle(
                            &[("../src/price.js", PRICE_JS), ("../src/cart.js", CART_JS)],
                            true,
                            "",
                        )
                        .1
                    }),
                )
                .route(
                    "/sm/dist/extra.js",
                    get(|| async {
                        let (code, map) = bundle(&[("discount.js", DISCOUNT_JS)], false, "/sm/src/");
                        js(format!(
                            "{code}//# sourceMappingURL=data:application/json;charset=utf-8;base64,{}\n",
                            base64(map.as_bytes())
                        ))
                    }),
                )
                .route("/sm/src/price.js", get(|| async { js(PRICE_JS.into()) }))
                .route("/sm/src/cart.js", get(|| async { js(CART_JS.into()) }))
                .route("/sm/src/discount.js", get(|| async { js(DISCOUNT_JS.into()) }))
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
/// A breakpoint at `url`:`line` (1-based), which must be accepted.
async fn break_at(tab: &Tab, url: &str, line: u32) -> devlens_browser::BreakpointSet {
    tab.set_breakpoint(&BreakpointRequest {
        url: url.into(),
        line,
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("set a breakpoint at {url}:{line}: {e}"))
}

async fn open(env: &Env) -> Tab {
    open_at(env, "/debug").await
}

async fn open_at(env: &Env, path: &str) -> Tab {
    let url = format!("{}{path}", server().await);
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

fn local<'a>(ctx: &'a PauseContext, name: &str) -> Option<&'a devlens_browser::Variable> {
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
        let set = break_at(&tab, "app.js", 6).await;
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
        let set = break_at(&tab, "missing.js", 3).await;
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

#[test]
fn breakpoints_in_original_sources_of_a_source_mapped_bundle() {
    with_browser(|env: Env| async move {
        let tab = open_at(&env, "/sm/page").await;
        let modules = [PRICE_JS, CART_JS];
        let status = tab.enable_debugger().await.expect("debugger on");
        assert!(
            status.sources.iter().any(|s| s == "/sm/src/cart.js"),
            "{}",
            status.to_text()
        );

        // By the original file (a suffix) and line: `sum += price(item);`.
        let set = break_at(&tab, "src/cart.js", 5).await;
        let bp = set.breakpoint.clone();
        let text = set.to_text();
        assert_eq!(
            bp.locations,
            vec!["/sm/src/cart.js:5:5".to_string()],
            "{text}"
        );
        let generated_line = bundle_line(&modules, 1, 5);
        assert_eq!(
            bp.generated,
            vec![format!("/sm/dist/bundle.js:{generated_line}:7")],
            "{text}"
        );
        let list = tab.list_breakpoints().to_text();
        assert!(
            list.contains("src/cart.js:5 → /sm/src/cart.js:5:5 (generated /sm/dist/bundle.js:"),
            "{list}"
        );

        // The click stops in the original source, with its lines.
        let outcome = tab
            .click(&sel("#checkout"), &ClickOptions::default())
            .await
            .expect("click");
        let ctx = outcome.paused.as_deref().expect("paused by the breakpoint");
        let text = ctx.to_text();
        assert_eq!(ctx.hit_breakpoints, vec![bp.id.clone()], "{text}");
        assert_eq!(ctx.location.url, "/sm/src/cart.js", "{text}");
        assert_eq!(
            (ctx.location.line, ctx.location.function.as_str()),
            (5, "cartTotal")
        );
        let generated = ctx.location.generated.as_ref().expect("generated place");
        assert_eq!(
            (generated.url.as_str(), generated.line),
            ("/sm/dist/bundle.js", generated_line)
        );
        let current = ctx.source.iter().find(|l| l.current).expect("current line");
        assert_eq!(
            (current.line, current.text.as_str()),
            (5, "    sum += price(item);")
        );
        assert!(text.contains("→ 5 |     sum += price(item);"), "{text}");
        assert!(text.contains("generated /sm/dist/bundle.js:"), "{text}");
        assert_eq!(
            local(ctx, "sum").map(|v| v.value.as_str()),
            Some("0"),
            "{text}"
        );
        assert!(
            local(ctx, "item").is_some_and(|v| v.value.contains("pen")),
            "{text}"
        );
        // The call stack is in original sources too: the click handler on cart.js line 15.
        let caller = &ctx.call_stack[1].location;
        assert_eq!(
            (caller.url.as_str(), caller.line),
            ("/sm/src/cart.js", 15),
            "{text}"
        );
        let stack = tab.call_stack().await.expect("call stack");
        assert_eq!(stack.frames[1].location.line, 15, "{}", stack.to_text());

        // Into price() (another module), then over its lines.
        let ctx = step(&tab, StepDirection::Into).await;
        let text = ctx.to_text();
        assert_eq!(ctx.location.url, "/sm/src/price.js", "{text}");
        assert_eq!(
            (ctx.location.line, ctx.location.function.as_str()),
            (3, "price")
        );
        assert!(text.contains("→ 3 |   const unit = item.cents;"), "{text}");
        assert_eq!(ctx.call_stack[1].location.url, "/sm/src/cart.js", "{text}");
        let ctx = step(&tab, StepDirection::Over).await;
        assert_eq!(ctx.location.line, 4, "{}", ctx.to_text());
        let unit = local(&ctx, "unit").expect("unit");
        assert_eq!(unit.value, "150");
        assert!(unit.changed, "{}", ctx.to_text());
        // Out: back in cartTotal (after the `+=`, V8 stops at the loop's next step).
        let ctx = step(&tab, StepDirection::Out).await;
        assert_eq!(ctx.location.url, "/sm/src/cart.js", "{}", ctx.to_text());
        assert!((4..=5).contains(&ctx.location.line), "{}", ctx.to_text());
        assert_eq!(ctx.location.function, "cartTotal");

        // Remove it and run on: the handler finishes.
        let list = tab.remove_breakpoint(&bp.id).await.expect("remove");
        assert!(list.breakpoints.is_empty(), "{}", list.to_text());
        tab.resume().await.expect("resume");
        let total = tab
            .evaluate(
                "document.getElementById('total').textContent",
                &EvaluateOptions::default(),
            )
            .await
            .expect("evaluate");
        assert_eq!(total.value, serde_json::json!("700"));

        // A line without code slides to the next one; past the end is an error that says so;
        // an unknown source names the known ones.
        let set = break_at(&tab, "cart.js", 9).await;
        assert_eq!(
            set.breakpoint.locations,
            vec!["/sm/src/cart.js:10:1".to_string()]
        );
        assert!(
            set.notes.iter().any(|n| n.contains("set on line 10")),
            "{}",
            set.to_text()
        );
        tab.remove_breakpoint(&set.breakpoint.id)
            .await
            .expect("remove");
        let err = tab
            .set_breakpoint(&BreakpointRequest {
                url: "src/price.js".into(),
                line: 40,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("has no code at line 40"), "{err}");
        let set = break_at(&tab, "src/nope.ts", 1).await;
        assert!(set.breakpoint.locations.is_empty());
        assert!(
            set.notes.iter().any(|n| n.contains("/sm/src/price.js")),
            "{}",
            set.to_text()
        );
    });
}

#[test]
fn a_breakpoint_in_a_source_not_loaded_yet_binds_when_its_bundle_loads() {
    with_browser(|env: Env| async move {
        let tab = open(&env).await;
        // Set before the page with the bundle loads: nothing knows src/discount.js yet.
        let set = break_at(&tab, "src/discount.js", 3).await;
        assert!(set.breakpoint.locations.is_empty(), "{}", set.to_text());
        let id = set.breakpoint.id.clone();
        // Line 7 runs as soon as the bundle loads: it still binds in time (the bundle waits
        // for its map while breakpoints are pending).
        let on_load = break_at(&tab, "src/discount.js", 7).await;
        let outcome = tab
            .navigate(
                &Navigation::Url(format!("{}/sm/page", server().await)),
                None,
            )
            .await
            .expect("load the bundle page");
        let text = outcome.to_text();
        let ctx = outcome.paused.as_deref().expect("paused while loading");
        assert_eq!(ctx.location.url, "/sm/src/discount.js", "{text}");
        assert_eq!(ctx.location.line, 7, "{text}");
        assert_eq!(
            ctx.hit_breakpoints,
            vec![on_load.breakpoint.id.clone()],
            "{text}"
        );
        tab.remove_breakpoint(&on_load.breakpoint.id)
            .await
            .expect("remove");
        tab.resume().await.expect("resume");
        // The inline map loads beside the page; the breakpoint binds when it has.
        let start = Instant::now();
        let bp = loop {
            let list = tab.list_breakpoints();
            let bp = list.breakpoints.iter().find(|b| b.id == id).cloned();
            if let Some(bp) = bp.filter(|b| !b.generated.is_empty()) {
                break bp;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{}",
                list.to_text()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        // V8 binds it at the line's first breakable position (the call), past `const`.
        assert_eq!(bp.locations.len(), 1, "{}", bp.to_line());
        assert!(
            bp.locations[0].starts_with("/sm/src/discount.js:3:"),
            "{}",
            bp.to_line()
        );
        let extra_line = bundle_line(&[DISCOUNT_JS], 0, 3);
        assert!(
            bp.generated[0].starts_with(&format!("/sm/dist/extra.js:{extra_line}:")),
            "{}",
            bp.to_line()
        );

        let outcome = tab
            .click(&sel("#discount"), &ClickOptions::default())
            .await
            .expect("click");
        let ctx = outcome.paused.as_deref().expect("paused");
        let text = ctx.to_text();
        assert_eq!(ctx.location.url, "/sm/src/discount.js", "{text}");
        assert_eq!(
            (ctx.location.line, ctx.location.function.as_str()),
            (3, "discount")
        );
        // No sourcesContent in this map: the original was fetched from its URL.
        assert!(
            text.contains("→ 3 |   const off = Math.round((cents * percent) / 100);"),
            "{text}"
        );
        assert_eq!(local(ctx, "percent").map(|v| v.value.as_str()), Some("15"));
        tab.remove_breakpoint(&id).await.expect("remove");
        tab.resume().await.expect("resume");
    });
}

#[test]
fn wait_for_stops_when_the_page_pauses_and_refuses_on_a_paused_page() {
    with_browser(|env: Env| async move {
        let tab = open(&env).await;
        let set = break_at(&tab, "app.js", 2).await;
        // A timer runs into the breakpoint while we wait for text that never comes.
        tab.evaluate(
            "setTimeout(() => add(1, 2), 300); 'armed'",
            &EvaluateOptions::default(),
        )
        .await
        .expect("arm the timer");
        let start = Instant::now();
        let outcome = tab
            .wait_for(
                &WaitCondition::Text("never there".into()),
                Some(Duration::from_secs(20)),
            )
            .await
            .expect("wait");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "waited {:?} for a paused page",
            start.elapsed()
        );
        let text = outcome.to_text();
        assert!(!outcome.met, "{text}");
        let ctx = outcome.paused.as_deref().expect("the pause is reported");
        assert_eq!(
            (ctx.location.line, ctx.location.function.as_str()),
            (2, "add"),
            "{text}"
        );
        assert!(text.contains("stopped waiting for"), "{text}");

        // Waiting on a page that is already paused is refused at once.
        let start = Instant::now();
        let err = tab
            .wait_for(&WaitCondition::NetworkIdle, Some(Duration::from_secs(20)))
            .await
            .unwrap_err();
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        assert!(err.to_string().contains("resume it first"), "{err}");

        tab.remove_breakpoint(&set.breakpoint.id)
            .await
            .expect("remove");
        tab.resume().await.expect("resume");
        let outcome = tab
            .wait_for(&WaitCondition::NetworkIdle, None)
            .await
            .expect("wait after resuming");
        assert!(outcome.met, "{}", outcome.to_text());
    });
}

#[test]
fn navigate_and_evaluate_that_hit_a_breakpoint_answer_with_the_pause() {
    with_browser(|env: Env| async move {
        let tab = open(&env).await;
        // Line 13 runs while the page loads.
        let set = break_at(&tab, "app.js", 13).await;
        let start = Instant::now();
        let outcome = tab
            .navigate(&Navigation::Reload, None)
            .await
            .expect("reload");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        let text = outcome.to_text();
        let ctx = outcome.paused.as_deref().expect("paused while loading");
        assert_eq!(ctx.location.line, 13, "{text}");
        assert!(!outcome.loaded, "{text}");
        assert!(text.contains("paused in the debugger"), "{text}");
        // Other calls keep answering; navigating again says to resume first.
        assert!(tab.info().await.is_ok());
        let err = tab.navigate(&Navigation::Reload, None).await.unwrap_err();
        assert!(err.to_string().contains("resume it first"), "{err}");
        tab.resume().await.expect("resume");

        // The same through a URL navigation.
        let outcome = tab
            .navigate(&Navigation::Url(format!("{}/debug", server().await)), None)
            .await
            .expect("navigate");
        let ctx = outcome.paused.as_deref().expect("paused while loading");
        assert_eq!(ctx.location.line, 13, "{}", outcome.to_text());
        tab.remove_breakpoint(&set.breakpoint.id)
            .await
            .expect("remove");
        tab.resume().await.expect("resume");

        // An evaluate that calls into a breakpoint returns with where it stopped.
        let set = break_at(&tab, "app.js", 2).await;
        let start = Instant::now();
        let eval = tab
            .evaluate("add(2, 3)", &EvaluateOptions::default())
            .await
            .expect("evaluate");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        let text = eval.to_text();
        let ctx = eval.paused.as_deref().expect("paused in add");
        assert_eq!(
            (ctx.location.function.as_str(), ctx.location.line),
            ("add", 2),
            "{text}"
        );
        assert_eq!(
            local(ctx, "b").map(|v| v.value.as_str()),
            Some("3"),
            "{text}"
        );
        assert!(
            text.starts_with("still running: it stopped in the debugger"),
            "{text}"
        );
        // While paused, evaluate still answers (in global scope).
        let two = tab
            .evaluate("1 + 1", &EvaluateOptions::default())
            .await
            .expect("evaluate while paused");
        assert_eq!(two.value, serde_json::json!(2), "{}", two.to_text());
        tab.remove_breakpoint(&set.breakpoint.id)
            .await
            .expect("remove");
        tab.resume().await.expect("resume");
    });
}
