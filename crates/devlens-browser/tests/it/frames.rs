//! Iframes and shadow DOM: the snapshot shows the documents of same-origin and cross-site
//! iframes with refs that actions use; selectors reach into open shadow roots and same-origin
//! frames.

use crate::common;

use common::{Env, image_size, with_browser};
use devlens_browser::{
    ClickOptions, ElementQuery, ElementTarget, EvaluateOptions, ScreenshotRequest, ScreenshotScope,
    SnapshotOptions, Tab,
};

async fn eval(tab: &Tab, js: &str) -> serde_json::Value {
    let r = tab
        .evaluate(js, &EvaluateOptions::default())
        .await
        .expect("evaluate");
    assert!(r.error.is_none(), "{js} threw {:?}", r.error);
    r.value
}

fn ref_of(snapshot: &str, needle: &str) -> ElementTarget {
    let r = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .and_then(|l| l.split("[ref=").nth(1))
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no ref for {needle} in\n{snapshot}"));
    ElementTarget::parse(r)
}

#[test]
fn snapshot_refs_reach_into_same_origin_and_cross_site_frames() {
    with_browser(|env: Env| async move {
        let tab = env.open("/frames").await;
        let snap = tab.snapshot(&SnapshotOptions::default()).await.unwrap();
        let text = snap.to_text();
        assert!(text.contains("- iframe \"Same frame\""), "{text}");
        assert!(
            text.contains("- iframe \"Cross frame\" http://localhost:"),
            "{text}"
        );
        assert!(text.contains("  - button \"Cross button\" [ref="), "{text}");
        assert!(text.contains("button \"Shadow button\" [ref="), "{text}");

        for label in ["Same", "Cross", "Shadow"] {
            let button = ref_of(&text, &format!("button \"{label} button\""));
            tab.click(&button, &ClickOptions::default()).await.unwrap();
        }
        let field = ref_of(&text, "textbox \"Cross field\"");
        tab.fill(&field, "over there").await.unwrap();
        let after = tab
            .snapshot(&SnapshotOptions::default())
            .await
            .unwrap()
            .to_text();
        for label in ["Same", "Cross", "Shadow"] {
            assert!(
                after.contains(&format!("button \"{label} clicked\"")),
                "{label}:\n{after}"
            );
        }
        assert!(after.contains("value=\"over there\""), "{after}");

        let cross = ref_of(&after, "button \"Cross clicked\"");
        let shot = tab
            .screenshot(&ScreenshotRequest {
                scope: ScreenshotScope::Element(cross),
                ..Default::default()
            })
            .await
            .unwrap();
        let (w, h) = image_size(&shot.data);
        assert!((40..300).contains(&w) && (10..60).contains(&h), "{w}x{h}");

        // Scoping a snapshot to the cross-site iframe's content works too.
        let scoped = tab
            .snapshot(&SnapshotOptions {
                root: Some(ref_of(&after, "textbox \"Cross field\"")),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(scoped.lines.len(), 1, "{}", scoped.to_text());
    });
}

#[test]
fn selectors_reach_into_shadow_roots_and_same_origin_frames() {
    with_browser(|env: Env| async move {
        let tab = env.open("/frames").await;
        let query = |selector: &str| ElementQuery {
            selector: selector.into(),
            text: None,
            visible: None,
            limit: Some(20),
            offset: 0,
        };
        let found = tab.query_elements(&query(".shadow-btn")).await.unwrap();
        assert_eq!(found.total, 1, "{}", found.to_text());
        assert!(found.deep);
        assert_eq!(found.elements[0].selector, "#host >>> button");
        let in_frame = tab.query_elements(&query("#b")).await.unwrap();
        assert_eq!(
            in_frame.total,
            1,
            "only the same-origin frame: {}",
            in_frame.to_text()
        );
        assert_eq!(in_frame.elements[0].selector, "#same >>> #b");
        assert!(
            in_frame.elements[0].rect[1] > 0,
            "{:?}",
            in_frame.elements[0]
        );
        let everywhere = tab.query_elements(&query(">>> button")).await.unwrap();
        assert_eq!(everywhere.total, 2, "{}", everywhere.to_text());
        let light = tab.query_elements(&query("h1")).await.unwrap();
        assert!(!light.deep);

        tab.click(
            &ElementTarget::parse("#same >>> #b"),
            &ClickOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(
            eval(
                &tab,
                "document.getElementById('same').contentDocument.getElementById('b').textContent"
            )
            .await,
            "Same clicked"
        );
        tab.click(
            &ElementTarget::parse(".shadow-btn"),
            &ClickOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(
            eval(
                &tab,
                "document.getElementById('host').shadowRoot.querySelector('button').textContent"
            )
            .await,
            "Shadow clicked"
        );
        let e = tab
            .click(
                &ElementTarget::parse("#host >>> .nope"),
                &ClickOptions::default(),
            )
            .await
            .unwrap_err();
        assert!(e.to_string().contains("no element matches"), "{e}");
        let e = tab.query_elements(&query("#host >>>")).await.unwrap_err();
        assert!(e.to_string().contains("not a valid"), "{e}");
    });
}
