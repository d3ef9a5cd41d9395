//! The accessibility audit against real pages: the exact axe rule ids of a page with known
//! failures (and none on a clean page), elements given back with refs that other tools accept,
//! frames audited, options checked, and the bad inputs (a paused page, a scope that matches
//! nothing, an unknown tag) answered clearly.

use crate::common;

use common::{Env, with_browser};
use devlens_browser::audit::a11y::A11yOptions;
use devlens_browser::{BrowserError, ElementQuery};

fn ids(report: &devlens_browser::audit::a11y::A11yReport) -> Vec<&str> {
    report.violations.iter().map(|v| v.id.as_str()).collect()
}

#[test]
fn finds_the_known_failures_with_refs_and_frames() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/a11y-bad.html").await;
        let report = tab
            .audit_accessibility(&A11yOptions::default())
            .await
            .expect("audit");
        let text = report.to_text();
        let found = ids(&report);
        for rule in [
            "image-alt",
            "label",
            "button-name",
            "color-contrast",
            "heading-order",
        ] {
            assert!(
                found.contains(&rule),
                "{rule} missing from {found:?}\n{text}"
            );
        }
        // Deprecated in axe 4.x, so a duplicate id only shows through ARIA, as needing review.
        assert!(
            report
                .needs_review
                .iter()
                .any(|r| r.id == "duplicate-id-aria"),
            "{text}"
        );
        // Most severe first.
        let ranks: Vec<&str> = report
            .violations
            .iter()
            .map(|v| v.impact.as_str())
            .collect();
        assert_eq!(ranks.first(), Some(&"critical"), "{text}");
        assert!(report.frames >= 2, "the iframe is audited too: {text}");
        let alt = report
            .violations
            .iter()
            .find(|v| v.id == "image-alt")
            .expect("image-alt");
        assert_eq!(alt.count, 2, "the page's image and the frame's: {text}");
        assert!(
            alt.nodes.iter().any(|n| n
                .frame
                .as_deref()
                .is_some_and(|f| f.ends_with("a11y-frame.html"))),
            "{text}"
        );
        assert!(alt.tags.iter().any(|t| t == "wcag2a"), "{:?}", alt.tags);
        let input = &report
            .violations
            .iter()
            .find(|v| v.id == "label")
            .expect("label")
            .nodes[0];
        assert_eq!(input.selector, "#zip");
        assert!(input.html.starts_with("<input"), "{}", input.html);
        assert!(
            !input.failure.is_empty() && !input.failure.starts_with("Fix"),
            "{}",
            input.failure
        );
        // The ref names the same element for the other tools.
        let reference = input.reference.clone().expect("a ref");
        let list = tab
            .query_elements(&ElementQuery {
                selector: "#zip".into(),
                ..Default::default()
            })
            .await
            .expect("query");
        assert_eq!(list.elements.len(), 1);
        tab.fill(&devlens_browser::ElementTarget::Ref(reference), "10115")
            .await
            .expect("fill by the audit's ref");
        assert!(
            text.contains("critical:") && text.contains("image-alt"),
            "{text}"
        );
        assert!(text.len() < 4_000, "compact: {} chars\n{text}", text.len());
    });
}

#[test]
fn a_clean_page_has_no_violations() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/a11y-clean.html").await;
        let report = tab
            .audit_accessibility(&A11yOptions::default())
            .await
            .expect("audit");
        assert!(report.violations.is_empty(), "{}", report.to_text());
        assert!(report.passed > 10, "{}", report.to_text());
        assert!(report.to_text().contains("no violations"));
    });
}

#[test]
fn options_narrow_the_audit() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/a11y-bad.html").await;
        // Only WCAG A rules: the best-practice heading order is not among them.
        let wcag = tab
            .audit_accessibility(&A11yOptions {
                tags: vec!["wcag2a".into()],
                ..Default::default()
            })
            .await
            .expect("tags");
        assert!(!ids(&wcag).contains(&"heading-order"), "{}", wcag.to_text());
        assert!(ids(&wcag).contains(&"image-alt"));
        // A deprecated rule asked for by id runs.
        let dup = tab
            .audit_accessibility(&A11yOptions {
                rules: vec!["duplicate-id".into()],
                ..Default::default()
            })
            .await
            .expect("rules");
        assert_eq!(ids(&dup), ["duplicate-id"], "{}", dup.to_text());
        let excluded = tab
            .audit_accessibility(&A11yOptions {
                exclude: vec!["color-contrast".into()],
                ..Default::default()
            })
            .await
            .expect("exclude");
        assert!(!ids(&excluded).contains(&"color-contrast"));
        // A scope: only the form.
        let form = tab
            .audit_accessibility(&A11yOptions {
                scope: Some("form".into()),
                ..Default::default()
            })
            .await
            .expect("scope");
        let mut found = ids(&form);
        found.sort_unstable();
        assert_eq!(found, ["button-name", "label"], "{}", form.to_text());
        // Scoped by a snapshot ref.
        let snapshot = tab.snapshot(&Default::default()).await.expect("snapshot");
        let text = snapshot.to_text();
        let line = text
            .lines()
            .find(|l| l.contains("textbox"))
            .expect("the input in the snapshot");
        let reference = line
            .split("[ref=")
            .nth(1)
            .and_then(|s| s.split(']').next())
            .expect("ref")
            .to_string();
        let by_ref = tab
            .audit_accessibility(&A11yOptions {
                scope: Some(reference),
                ..Default::default()
            })
            .await
            .expect("scope by ref");
        assert_eq!(ids(&by_ref), ["label"], "{}", by_ref.to_text());
    });
}

#[test]
fn bad_input_is_answered_clearly() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/a11y-bad.html").await;
        let err = tab
            .audit_accessibility(&A11yOptions {
                scope: Some("#nowhere".into()),
                ..Default::default()
            })
            .await
            .expect_err("no such element");
        assert!(matches!(err, BrowserError::ElementNotFound { .. }), "{err}");
        let err = tab
            .audit_accessibility(&A11yOptions {
                tags: vec!["wcag2aaa-typo".into()],
                ..Default::default()
            })
            .await
            .expect_err("unknown tag");
        assert!(err.to_string().contains("no tag `wcag2aaa-typo`"), "{err}");
        let err = tab
            .audit_accessibility(&A11yOptions {
                rules: vec!["image-alt".into()],
                tags: vec!["wcag2a".into()],
                ..Default::default()
            })
            .await
            .expect_err("both");
        assert!(err.to_string().contains("either tags or rules"), "{err}");
        tab.enable_debugger().await.expect("debugger");
        tab.evaluate("setTimeout(() => { debugger; }, 10)", &Default::default())
            .await
            .expect("schedule a pause");
        tab.wait_for_pause(Some(std::time::Duration::from_secs(10)))
            .await
            .expect("paused");
        let err = tab
            .audit_accessibility(&A11yOptions::default())
            .await
            .expect_err("paused");
        assert!(err.to_string().contains("paused"), "{err}");
        tab.resume().await.expect("resume");
    });
}

#[test]
fn a_page_still_loading_is_audited_as_it_is_with_a_note() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/a11y-clean.html").await;
        let _ = tab
            .navigate(
                &devlens_browser::Navigation::Url(env.url("/pages/a11y-loading.html")),
                Some(std::time::Duration::from_millis(500)),
            )
            .await;
        let started = std::time::Instant::now();
        let report = tab
            .audit_accessibility(&A11yOptions::default())
            .await
            .expect("audit");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "nothing hangs"
        );
        let text = report.to_text();
        assert!(ids(&report).contains(&"image-alt"), "{text}");
        assert!(
            report.notes.iter().any(|n| n.contains("still loading")),
            "{text}"
        );
    });
}
