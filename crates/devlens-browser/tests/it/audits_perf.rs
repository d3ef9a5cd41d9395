//! Performance against a real page with a known long task, layout shift and slow click
//! handler: vitals of the load and of an interaction, a trace of a reload and of an action
//! reduced to findings with their sources, a CPU profile, and the bad inputs.

use crate::common;

use common::{Env, with_browser};
use devlens_browser::audit::perf::{Phase, Recorded};
use devlens_browser::{ClickOptions, ElementTarget};

/// Chrome traces one recording at a time, browser-wide: the tests that trace take turns.
static TRACING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn done<T>(r: Recorded<T>) -> T {
    match r {
        Recorded::Done(t) => t,
        Recorded::Started(_) => panic!("expected a finished recording"),
    }
}

#[test]
fn vitals_of_a_load_and_an_interaction() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/perf.html").await;
        let v = tab.vitals(true).await.expect("vitals");
        let text = v.to_text();
        assert!(v.fcp_ms.is_some() && v.ttfb_ms.is_some(), "{text}");
        assert!(v.lcp.is_some(), "{text}");
        assert!(v.cls > 0.05, "the banner shifts the page: {text}");
        assert!(v.shifts.iter().any(|s| !s.elements.is_empty()), "{text}");
        assert!(v.long_tasks >= 1 && v.tbt_ms > 0.0, "{text}");
        assert!(
            v.slow_frames.iter().flat_map(|f| &f.scripts).any(|s| s
                .location
                .url
                .ends_with("perf.js")
                && s.location.line == 22),
            "the startup task's function in perf.js:\n{text}"
        );
        assert!(
            v.inp.is_none() && text.contains("no interaction yet"),
            "{text}"
        );
        tab.click(
            &ElementTarget::Selector("#slow".into()),
            &ClickOptions::default(),
        )
        .await
        .expect("click");
        let after = tab.vitals(false).await.expect("vitals after a click");
        let inp = after
            .inp
            .clone()
            .unwrap_or_else(|| panic!("INP after the click: {}", after.to_text()));
        assert!(inp.duration >= 150.0, "{}", after.to_text());
        assert_eq!(
            inp.target.as_deref(),
            Some("button#slow"),
            "{}",
            after.to_text()
        );
    });
}

#[test]
fn a_trace_of_a_reload_names_its_problems() {
    with_browser(|env: Env| async move {
        let _turn = TRACING.lock().await;
        let tab = env.open("/pages/perf.html").await;
        let dir = tempfile::tempdir().expect("dir");
        let saved = dir.path().join("load.json");
        let report = done(tab.trace(Phase::Reload, Some(&saved)).await.expect("trace"));
        let text = report.to_text();
        let f = &report.findings;
        assert!(f.marks.iter().any(|(n, _)| n == "FCP"), "{text}");
        let task = f
            .long_tasks
            .iter()
            .find(|t| {
                t.functions
                    .iter()
                    .any(|c| c.location.function == "startupWork")
            })
            .unwrap_or_else(|| panic!("the startup task:\n{text}"));
        assert!(task.duration_ms >= 120.0, "{text}");
        // The entry point, and below it (sampled) the function the time went to.
        let entry = task
            .functions
            .iter()
            .find(|c| c.location.function == "startupWork")
            .expect("entry");
        assert!(
            entry.location.url.ends_with("perf.js") && entry.location.line == 22,
            "{entry:?}"
        );
        // (When V8 inlines busyWork, the samples name startupWork itself: nothing to add.)
        if let Some(hot) = task.functions.iter().find(|c| c.kind == "self time") {
            assert_eq!(
                (hot.location.function.as_str(), hot.location.line),
                ("busyWork", 2),
                "{text}"
            );
        }
        assert!(f.total_blocking_ms >= 70.0, "{text}");
        assert!(
            f.render_blocking
                .iter()
                .any(|r| r.url.ends_with("perf.css")),
            "{text}"
        );
        assert!(f.cls > 0.05 && !f.layout_shifts.is_empty(), "{text}");
        assert!(!f.layout_shifts[0].elements.is_empty(), "{text}");
        // The page's scripts show as scripting time; whether it tops "other" (Chrome's own
        // work, which grows on a busy machine) is not the page's doing.
        assert!(
            f.main_thread
                .iter()
                .any(|c| c.category == "scripting" && c.ms >= 70.0),
            "{text}"
        );
        assert!(f.requests >= 3, "{text}");
        let raw = std::fs::read_to_string(&saved).expect("saved trace");
        assert!(
            raw.trim_start().starts_with('{') && raw.contains("traceEvents"),
            "DevTools' format"
        );
        assert!(text.len() < 3_000, "compact: {}\n{text}", text.len());
    });
}

#[test]
fn a_trace_and_a_profile_around_an_action() {
    with_browser(|env: Env| async move {
        let _turn = TRACING.lock().await;
        let tab = env.open("/pages/perf.html").await;
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        assert!(matches!(
            tab.trace(Phase::Start, None).await.expect("start"),
            Recorded::Started(_)
        ));
        let again = tab
            .trace(Phase::Start, None)
            .await
            .expect_err("already recording");
        assert!(again.to_string().contains("already recording"), "{again}");
        tab.click(
            &ElementTarget::Selector("#slow".into()),
            &ClickOptions::default(),
        )
        .await
        .expect("click");
        let report = done(tab.trace(Phase::Stop, None).await.expect("stop"));
        let text = report.to_text();
        assert!(
            report
                .findings
                .long_tasks
                .iter()
                .any(|t| t.duration_ms >= 150.0
                    && t.functions
                        .iter()
                        .any(|c| c.location.function == "onSlowClick" && c.location.line == 16)),
            "the click handler:\n{text}"
        );
        let err = tab
            .trace(Phase::Stop, None)
            .await
            .expect_err("nothing recording");
        assert!(err.to_string().contains("no trace is recording"), "{err}");

        assert!(matches!(
            tab.cpu_profile(Phase::Start, None).await.expect("start"),
            Recorded::Started(_)
        ));
        tab.click(
            &ElementTarget::Selector("#slow".into()),
            &ClickOptions::default(),
        )
        .await
        .expect("click");
        let profile = done(
            tab.cpu_profile(Phase::Stop, Some(5))
                .await
                .expect("profile"),
        );
        // V8 may inline busyWork into the handler: either is where the time went. A builtin the
        // loop calls (`performance.now`, no script URL) can take as much self time on a loaded
        // machine, so the page's own top function is the one that counts.
        let top = profile
            .functions
            .iter()
            .find(|f| !f.location.url.is_empty())
            .expect("a function of the page's script");
        assert!(
            matches!(
                (top.location.function.as_str(), top.location.line),
                ("busyWork", 2) | ("onSlowClick", 16)
            ),
            "{}",
            profile.to_text()
        );
        assert!(top.total_ms >= 100.0, "{}", profile.to_text());
        let err = tab
            .cpu_profile(Phase::Stop, None)
            .await
            .expect_err("nothing recording");
        assert!(err.to_string().contains("no profile is recording"), "{err}");
    });
}

/// Minified code with a source map: the profile and the trace name the original source.
#[test]
fn profiles_and_traces_are_source_mapped() {
    with_browser(|env: Env| async move {
        let _turn = TRACING.lock().await;
        let tab = env.open("/pages/mapped.html").await;
        assert!(matches!(
            tab.cpu_profile(Phase::Start, None).await.expect("start"),
            Recorded::Started(_)
        ));
        tab.click(
            &ElementTarget::Selector("#slow".into()),
            &ClickOptions::default(),
        )
        .await
        .expect("click");
        let profile = done(tab.cpu_profile(Phase::Stop, None).await.expect("profile"));
        let text = profile.to_text();
        let top = &profile.functions[0];
        assert!(top.location.url.ends_with("mapped.js"), "{text}");
        let original = top
            .location
            .original
            .as_deref()
            .unwrap_or_else(|| panic!("not mapped:\n{text}"));
        assert!(original.contains("src/checkout.ts:"), "{text}");

        tab.trace(Phase::Start, None).await.expect("start");
        tab.click(
            &ElementTarget::Selector("#slow".into()),
            &ClickOptions::default(),
        )
        .await
        .expect("click");
        let report = done(tab.trace(Phase::Stop, None).await.expect("stop"));
        let text = report.to_text();
        let handler = report
            .findings
            .long_tasks
            .iter()
            .flat_map(|t| &t.functions)
            .find(|f| f.kind == "click")
            .or_else(|| {
                report
                    .findings
                    .long_tasks
                    .iter()
                    .flat_map(|t| &t.functions)
                    .next()
            })
            .unwrap_or_else(|| panic!("a long task with code:\n{text}"));
        assert!(
            handler
                .location
                .original
                .as_deref()
                .is_some_and(|o| o.contains("src/checkout.ts:")),
            "{text}"
        );
        assert!(text.contains("checkout.ts:"), "{text}");
    });
}
