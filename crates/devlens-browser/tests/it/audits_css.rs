//! The CSS inspection against a real Chromium: a cascade fixture where each rule wins or loses
//! for one reason (specificity, order, `!important`, the style attribute, inheritance, an
//! invalid value), a stylesheet "compiled from Sass" with a hand-written source map, and bad
//! input that gets a clear answer at once.

use crate::common;

use std::time::{Duration, Instant};

use common::{Env, with_browser};
use devlens_browser::BrowserError;
use devlens_browser::audit::css::{CssQuery, CssReport};

fn query(element: &str, properties: &[&str]) -> CssQuery {
    CssQuery {
        element: element.into(),
        properties: properties.iter().map(|p| p.to_string()).collect(),
        ..Default::default()
    }
}

/// The report's text lines under `property:` (its declarations), as one string.
fn section(report: &CssReport, property: &str) -> String {
    let text = report.to_text();
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{property}: ")));
    let head = lines
        .next()
        .unwrap_or_else(|| panic!("no {property} in\n{text}"));
    let body: Vec<&str> = lines.take_while(|l| l.starts_with("  ")).collect();
    format!("{head}\n{}", body.join("\n"))
}

#[test]
fn each_losing_declaration_says_what_beat_it() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/cascade.html").await;
        let props = [
            "color",
            "background-color",
            "cursor",
            "margin-left",
            "width",
        ];
        let report = tab.css(&query("#save", &props)).await.unwrap();
        assert_eq!(report.element, "button#save.btn.primary");

        let color = section(&report, "color");
        assert!(color.starts_with("color: rgb(255, 0, 0)\n  ✓ .btn.primary { color: red }  /pages/cascade.css:5 (0,2,0)\n"), "{color}");
        assert!(color.contains("✗ .btn { color: blue }  /pages/cascade.css:4 (0,1,0) — overridden by `.btn.primary` at cascade.css:5 (specificity 0,2,0 > 0,1,0)"), "{color}");
        assert!(
            color.contains(
                "{ color: buttontext }  user-agent — browser default, overridden by `.btn.primary`"
            ),
            "{color}"
        );
        // The panel's colour reaches the button only through inheritance, which loses.
        assert!(color.contains("✗ .panel { color: rgb(0, 128, 0) }  /pages/cascade.css:2 (0,1,0) — inherited values lose to any declaration on the element itself"), "{color}");

        let background = section(&report, "background-color");
        assert!(
            background.contains("✓ .primary { background-color: yellow }  /pages/cascade.css:8"),
            "{background}"
        );
        assert!(background.contains("✗ .btn { background-color: white }  /pages/cascade.css:7 (0,1,0) — overridden by `.primary`, a later rule of equal specificity (cascade.css:8 after :7)"), "{background}");

        let cursor = section(&report, "cursor");
        assert!(cursor.contains("✓ button { cursor: pointer !important }  /pages/cascade.css:10 (0,0,1) — !important"), "{cursor}");
        assert!(cursor.contains("✗ #save { cursor: wait }  /pages/cascade.css:11 (1,0,0) — loses to !important in `button` at cascade.css:10"), "{cursor}");

        let margin = section(&report, "margin-left");
        assert!(
            margin.starts_with(
                "margin-left: 7px\n  ✓ element.style { margin-left: 7px } — inline style"
            ),
            "{margin}"
        );
        assert!(margin.contains("✗ #save { margin-left: 20px }  /pages/cascade.css:13 (1,0,0) — loses to the inline style"), "{margin}");

        let width = section(&report, "width");
        assert!(width.contains("(no declaration applies"), "{width}");
        assert!(
            width.contains(
                "✗ .btn { width: banana }  /pages/cascade.css:15 (0,1,0) — invalid value"
            ),
            "{width}"
        );

        // The matched rules, highest precedence first, with the browser's own counted.
        let rules = report.to_text();
        let rules = rules
            .split("rules, highest precedence first:")
            .nth(1)
            .unwrap();
        assert!(rules.starts_with("\n  element.style { margin-left }\n  #save { margin-left }  /pages/cascade.css:13 (1,0,0)\n  #save { cursor }  /pages/cascade.css:11"), "{rules}");
        assert!(rules.contains("user-agent rules"), "{rules}");
    });
}

#[test]
fn inherited_values_name_the_ancestor_they_come_from() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/cascade.html").await;
        let props = ["color", "font-family", "text-transform", "border-top-style"];
        let report = tab.css(&query(".note", &props)).await.unwrap();
        let color = section(&report, "color");
        assert!(color.starts_with("color: rgb(0, 128, 0)\n  ✓ .panel { color: rgb(0, 128, 0) }  /pages/cascade.css:2 (0,1,0) — inherited from div.panel"), "{color}");
        let font = section(&report, "font-family");
        assert!(
            font.contains("✓ .panel { font-family: Georgia, serif }")
                && font.contains("inherited from div.panel"),
            "{font}"
        );
        // A rule of the page's own <style> element: its line in the HTML.
        let transform = section(&report, "text-transform");
        assert!(
            transform.contains(
                "✓ .panel .note { text-transform: uppercase }  /pages/cascade.html:9 (0,2,0)"
            ),
            "{transform}"
        );
        let border = section(&report, "border-top-style");
        assert!(
            border.starts_with("border-top-style: none  (no declaration applies"),
            "{border}"
        );
        assert!(
            border.contains("✗ .panel { border-top-style: dashed }")
                && border.contains("not inherited"),
            "{border}"
        );
    });
}

#[test]
fn a_sass_stylesheet_points_to_its_scss_lines() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/cascade.html").await;
        let report = tab
            .css(&query("#save", &["padding-left", "padding"]))
            .await
            .unwrap();
        // theme.css.map maps the declaration to line 6 of src/theme.scss, the rule to line 5;
        // the button's own `padding-inline-start` from the browser loses to it.
        let left = section(&report, "padding-left");
        assert!(left.starts_with("padding-left: 8px\n  ✓ .toolbar .btn { padding: 4px 8px }  /pages/src/theme.scss:6 (0,2,0)"), "{left}");
        assert!(
            left.contains("padding-inline-start: 6px }  user-agent — browser default"),
            "{left}"
        );
        let shorthand = section(&report, "padding");
        assert!(
            shorthand.starts_with("padding: 4px 8px\n  ✓ .toolbar .btn { padding: 4px 8px }"),
            "{shorthand}"
        );
        let text = report.to_text();
        assert!(
            text.contains("\n  .toolbar .btn { padding }  /pages/src/theme.scss:5 (0,2,0)"),
            "{text}"
        );
        assert!(report.notes.is_empty(), "{:?}", report.notes);
    });
}

#[test]
fn without_properties_it_explains_what_the_page_sets() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/cascade.html").await;
        let mut q = query("#save", &[]);
        q.pseudo = true;
        let report = tab.css(&q).await.unwrap();
        let names: Vec<&str> = report.properties.iter().map(|p| p.name.as_str()).collect();
        for n in [
            "margin-left",
            "padding",
            "color",
            "cursor",
            "background-color",
            "width",
            "font-family",
        ] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        let note = tab
            .css(&CssQuery {
                pseudo: true,
                ..query(".note", &["color"])
            })
            .await
            .unwrap();
        assert!(
            note.to_text()
                .contains("\n  .note::before { content }  /pages/cascade.css:17 (0,1,1)"),
            "{}",
            note.to_text()
        );
    });
}

#[test]
fn bad_input_gets_a_clear_answer_at_once() {
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/cascade.html").await;
        let start = Instant::now();
        match tab.css(&query("#sav", &["color"])).await {
            Err(BrowserError::ElementNotFound { suggestions, .. }) => {
                assert!(
                    suggestions.contains(&"#save".to_string()),
                    "{suggestions:?}"
                )
            }
            other => panic!("expected ElementNotFound, got {other:?}"),
        }
        let err = tab.css(&query("#save", &["colr"])).await.unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("`colr` is not a CSS property") && message.contains("color"),
            "{message}"
        );
        let err = tab.css(&query("  ", &[])).await.unwrap_err();
        assert!(matches!(err, BrowserError::InvalidInput(_)), "{err}");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        // The page still answers: nothing was left waiting.
        assert!(tab.css(&query("#save", &["color"])).await.is_ok());
    });
}
