//! Page tools against a real headless Chromium and fixture pages: navigation reports, console,
//! network, query_elements, snapshot refs, actions, waits, dialogs, screenshots, live code and
//! emulation. One browser for the whole file; every test works in its own tab.

use crate::common;

use std::time::Duration;

use common::{Env, image_size, with_browser};
use devlens_browser::{
    BodyOptions, BrowserError, ColorScheme, ConsoleLevel, ConsoleQuery, ElementQuery,
    ElementTarget, EmulationRequest, EvaluateOptions, ImageFormat, Navigation, NetworkProfile,
    NetworkQuery, ScreenshotRequest, ScreenshotScope, ScrollRequest, SnapshotOptions, Tab,
    ViewportSize, WaitCondition,
};
use devlens_browser::{ClickOptions, ElementState, ScrollDirection};
use serde_json::json;

fn sel(s: &str) -> ElementTarget {
    ElementTarget::Selector(s.into())
}

async fn eval(tab: &Tab, js: &str) -> serde_json::Value {
    let r = tab
        .evaluate(js, &EvaluateOptions::default())
        .await
        .expect("evaluate");
    assert!(r.error.is_none(), "{js} threw {:?}", r.error);
    r.value
}

#[test]
fn navigate_reports_status_title_errors_and_failed_requests() {
    with_browser(|env: Env| async move {
        let tab = env.open("/").await;
        let report = tab
            .navigate(&Navigation::Url(env.url("/errors")), None)
            .await
            .unwrap();
        assert_eq!(report.status, Some(200));
        assert_eq!(report.title, "Errors page");
        assert!(report.loaded);
        let errors: Vec<&str> = report
            .console_errors
            .iter()
            .map(|e| e.text.as_str())
            .collect();
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("boom from app {code: 42}")),
            "{errors:?}"
        );
        let uncaught = report
            .console_errors
            .iter()
            .find(|e| e.uncaught)
            .expect("the uncaught ReferenceError");
        assert!(
            uncaught.text.contains("notDefinedAnywhere is not defined"),
            "{uncaught:?}"
        );
        assert!(
            uncaught
                .source
                .as_deref()
                .is_some_and(|s| s.starts_with("/app.js:")),
            "{uncaught:?}"
        );
        let failed: Vec<String> = report
            .failed_requests
            .iter()
            .map(|r| format!("{:?} {:?} {}", r.status, r.failure, r.url))
            .collect();
        assert!(
            failed
                .iter()
                .any(|f| f.contains("Some(404)") && f.contains("/api/missing")),
            "{failed:?}"
        );
        assert!(
            failed
                .iter()
                .any(|f| f.contains("ERR_CONNECTION_REFUSED") && f.contains("unreachable.png")),
            "{failed:?}"
        );
        let text = report.to_text();
        assert!(text.contains("HTTP 200"), "{text}");
        assert!(text.contains("console errors"), "{text}");
        assert!(text.contains("failed requests"), "{text}");

        // A missing page loads with its status; a refused connection is an error with a hint.
        let report = tab
            .navigate(&Navigation::Url(env.url("/nope")), None)
            .await
            .unwrap();
        assert_eq!(report.status, Some(404));
        let err = tab
            .navigate(
                &Navigation::Url(format!("http://127.0.0.1:{}/", common::refused_port())),
                None,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, BrowserError::NavigationFailed { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("ERR_CONNECTION_REFUSED"), "{err}");
        assert!(err.to_string().contains("dev server running"), "{err}");

        // History: back to /nope, forward again, reload.
        let back = tab.navigate(&Navigation::Back, None).await.unwrap();
        assert!(
            back.url.ends_with("/nope") || back.url.ends_with("/errors"),
            "{}",
            back.url
        );
        let home = tab
            .navigate(&Navigation::Url(env.url("/")), None)
            .await
            .unwrap();
        assert_eq!(home.title, "Home");
        let back = tab.navigate(&Navigation::Back, None).await.unwrap();
        assert_ne!(back.url, home.url);
        assert!(back.loaded, "{}", back.to_text());
        let forward = tab.navigate(&Navigation::Forward, None).await.unwrap();
        assert_eq!(forward.url, home.url);
        let reload = tab.navigate(&Navigation::Reload, None).await.unwrap();
        assert_eq!((reload.status, reload.title.as_str()), (Some(200), "Home"));
        let err = tab.navigate(&Navigation::Forward, None).await.unwrap_err();
        assert!(err.to_string().contains("no next page"), "{err}");
    });
}

#[test]
fn console_levels_since_last_read_and_ring_bound() {
    with_browser(|env: Env| async move {
        let tab = env.open("/errors").await;
        let all = tab.console_logs(&ConsoleQuery::default());
        let texts: Vec<&str> = all.entries.iter().map(|e| e.text.as_str()).collect();
        assert!(texts.contains(&"careful now"), "{texts:?}");
        assert!(texts.contains(&"hello world {answer: 42}"), "{texts:?}");
        let warn = all
            .entries
            .iter()
            .find(|e| e.text == "careful now")
            .unwrap();
        assert_eq!(warn.level, ConsoleLevel::Warn);

        let errors = tab.console_logs(&ConsoleQuery {
            level: Some(ConsoleLevel::Error),
            ..Default::default()
        });
        assert!(
            errors
                .entries
                .iter()
                .all(|e| e.level == ConsoleLevel::Error)
        );
        assert!(errors.entries.len() >= 2, "{:?}", errors.entries);
        let app_error = errors
            .entries
            .iter()
            .find(|e| e.text.starts_with("boom"))
            .unwrap();
        assert!(
            app_error.stack.iter().any(|f| f.starts_with("report (")),
            "{app_error:?}"
        );

        // Everything was read; only what comes next is new.
        let none = tab.console_logs(&ConsoleQuery {
            since_last_read: true,
            ..Default::default()
        });
        assert!(none.entries.is_empty(), "{:?}", none.entries);
        eval(&tab, "console.info('fresh one'); console.debug('dbg')").await;
        let fresh = tab.console_logs(&ConsoleQuery {
            since_last_read: true,
            ..Default::default()
        });
        let texts: Vec<&str> = fresh.entries.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(texts, ["fresh one", "dbg"]);

        // The ring keeps the newest 500 and says how many it dropped.
        eval(
            &tab,
            "for (let i = 0; i < 600; i++) console.log('line ' + i)",
        )
        .await;
        let logs = tab.console_logs(&ConsoleQuery {
            limit: Some(3),
            contains: Some("line".into()),
            ..Default::default()
        });
        let texts: Vec<&str> = logs.entries.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(texts, ["line 597", "line 598", "line 599"]);
        assert!(logs.dropped >= 100, "dropped {}", logs.dropped);
        assert!(logs.omitted > 0);
        assert!(logs.to_text().contains("older entries were dropped"));

        // Another page: reads show its messages only, and say that earlier ones exist.
        tab.navigate(&Navigation::Url(env.url("/")), None)
            .await
            .unwrap();
        eval(&tab, "console.log('on home')").await;
        let current = tab.console_logs(&ConsoleQuery::default());
        let texts: Vec<&str> = current.entries.iter().map(|e| e.text.as_str()).collect();
        assert!(texts.contains(&"on home"), "{texts:?}");
        assert!(!texts.iter().any(|t| t.starts_with("line ")), "{texts:?}");
        assert!(current.previous_pages >= 400, "{}", current.previous_pages);
        assert!(current.to_text().contains("includePreviousPages"));
        let all = tab.console_logs(&ConsoleQuery {
            include_previous_pages: true,
            contains: Some("line 599".into()),
            ..Default::default()
        });
        assert_eq!(all.entries.len(), 1, "{}", all.to_text());
    });
}

#[test]
fn network_list_filters_and_bounded_bodies() {
    with_browser(|env: Env| async move {
        let tab = env.open("/errors").await;
        // /app.js loaded fine: counted, not listed, unless asked for.
        let page = tab.network_requests(&NetworkQuery::default());
        assert!(page.total >= 4, "{}", page.to_text());
        assert!(
            page.requests.iter().all(|r| !r.url.ends_with("/app.js")),
            "{}",
            page.to_text()
        );
        assert_eq!(page.static_hidden, 1, "{}", page.to_text());
        let all = tab.network_requests(&NetworkQuery {
            include_static: true,
            ..Default::default()
        });
        assert_eq!(all.total, page.total + 1, "{}", all.to_text());
        assert!(all.requests.iter().any(|r| r.url.ends_with("/app.js")));
        let doc = &page.requests[0];
        assert_eq!(
            (doc.resource_type.as_str(), doc.status),
            ("Document", Some(200))
        );

        let failed = tab.network_requests(&NetworkQuery {
            failed_only: true,
            ..Default::default()
        });
        let failed_text = failed.to_text();
        assert!(
            failed_text.contains("404 Fetch /api/missing"),
            "{failed_text}"
        );
        assert!(
            failed_text.contains("FAILED net::ERR_CONNECTION_REFUSED Image"),
            "{failed_text}"
        );
        assert!(failed.requests.iter().all(|r| r.is_failed()));
        let fetches = tab.network_requests(&NetworkQuery {
            resource_type: Some("fetch".into()),
            ..Default::default()
        });
        assert_eq!(fetches.total, 2, "{}", fetches.to_text());
        let data = tab.network_requests(&NetworkQuery {
            url_contains: Some("API/DATA".into()),
            ..Default::default()
        });
        assert_eq!(data.total, 1);
        let paged = tab.network_requests(&NetworkQuery {
            limit: Some(2),
            ..Default::default()
        });
        assert_eq!((paged.requests.len(), paged.next_offset), (2, Some(2)));

        // A big JSON body comes back cut to the limit, or whole in a file.
        eval(
            &tab,
            "fetch('/api/big').then(r => r.json()).then(j => j.items.length)",
        )
        .await;
        let big = tab.network_requests(&NetworkQuery {
            url_contains: Some("/api/big".into()),
            ..Default::default()
        });
        let id = big.requests[0].id.to_string();
        let details = tab
            .network_request(
                &id,
                &BodyOptions {
                    max_body_bytes: 1000,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        let body = details.response_body.as_ref().unwrap();
        assert!(body.truncated);
        assert_eq!(body.text.as_ref().unwrap().len(), 1000);
        assert!(body.size > 20_000, "{}", body.size);
        assert!(
            body.text
                .as_ref()
                .unwrap()
                .starts_with("{\"items\":[\"item-00000\"")
        );
        assert!(
            details
                .response_headers
                .iter()
                .any(|(k, v)| k == "content-type" && v.contains("json"))
        );
        assert!(details.to_text().contains("cut at 1000 bytes"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big.json");
        let saved = tab
            .network_request(
                &format!("#{id}"),
                &BodyOptions {
                    save_response_body_to: Some(file.clone()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(
            saved.response_body.unwrap().saved_to.unwrap(),
            file.display().to_string()
        );
        let on_disk: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(on_disk["items"].as_array().unwrap().len(), 2000);

        // Request bodies too.
        eval(&tab, "fetch('/api/echo', { method: 'POST', body: JSON.stringify({ hello: 'server' }) }).then(r => r.text())").await;
        let echo = tab.network_requests(&NetworkQuery {
            url_contains: Some("/api/echo".into()),
            ..Default::default()
        });
        let details = tab
            .network_request(&echo.requests[0].id.to_string(), &BodyOptions::default())
            .await
            .unwrap();
        assert_eq!(details.entry.method, "POST");
        assert_eq!(
            details.request_body.unwrap().text.as_deref(),
            Some(r#"{"hello":"server"}"#)
        );

        let err = tab
            .network_request("#99999", &BodyOptions::default())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("List the requests"), "{err}");
    });
}

#[test]
fn query_elements_filters_limits_and_suggests() {
    with_browser(|env: Env| async move {
        let tab = env.open("/elements").await;
        let q = |selector: &str| ElementQuery {
            selector: selector.into(),
            ..Default::default()
        };
        let items = tab.query_elements(&q("li.item")).await.unwrap();
        assert_eq!(
            (items.matched, items.total, items.elements.len()),
            (30, 30, 5)
        );
        assert_eq!(items.next_offset, Some(5));
        let first = &items.elements[0];
        assert_eq!((first.tag.as_str(), first.text.as_str()), ("li", "Item 1"));
        assert_eq!(first.role, None, "implicit roles are left to the tag");
        assert!(first.visible);
        assert_eq!(first.selector, "li:nth-of-type(1)");

        let many = tab
            .query_elements(&ElementQuery {
                limit: Some(500),
                ..q("li")
            })
            .await
            .unwrap();
        assert_eq!(many.elements.len(), 20, "at most 20");

        let hidden = tab
            .query_elements(&ElementQuery {
                visible: Some(false),
                ..q("li")
            })
            .await
            .unwrap();
        assert_eq!(hidden.total, 6);
        assert!(hidden.elements.iter().all(|e| !e.visible));
        assert!(hidden.to_text().contains("(hidden)"));

        let seven = tab
            .query_elements(&ElementQuery {
                text: Some("item 7".into()),
                ..q("li")
            })
            .await
            .unwrap();
        assert_eq!(seven.total, 1);
        // The selector of a result finds that element again.
        let again = tab
            .query_elements(&q(&seven.elements[0].selector))
            .await
            .unwrap();
        assert_eq!(again.elements[0].text, "Item 7");

        let button = tab.query_elements(&q("button")).await.unwrap();
        let line = button.to_text();
        assert!(
            line.starts_with("button#submit.btn.primary \"Submit\" @"),
            "{line}"
        );

        let none = tab.query_elements(&q("#sumbit")).await.unwrap();
        assert_eq!(none.matched, 0);
        assert!(
            none.suggestions.contains(&"#submit".to_string()),
            "{:?}",
            none.suggestions
        );
        assert!(none.to_text().contains("close matches: #submit"));

        let err = tab.query_elements(&q("li[")).await.unwrap_err();
        assert!(matches!(err, BrowserError::InvalidSelector { .. }), "{err}");
    });
}

#[test]
fn a_big_page_is_read_only_as_far_as_the_lines_asked_for() {
    with_browser(|env: Env| async move {
        let tab = env.open("/orders").await;
        let page = |offset: usize, limit: usize| SnapshotOptions {
            offset,
            limit: Some(limit),
            ..Default::default()
        };
        // 1,000 lines are too far down the 7,000-element page to read lazily: the whole tree.
        let whole = tab.snapshot(&page(0, 1000)).await.unwrap();
        let total = whole.total_lines.expect("the whole tree counts its lines");
        assert!(total > 7000, "{total}");
        assert!(
            whole.lines[..40].iter().any(|l| l.contains("iframe")),
            "{:#?}",
            &whole.lines[..40]
        );

        let first = tab.snapshot(&SnapshotOptions::default()).await.unwrap();
        assert_eq!(first.total_lines, None, "read lazily: {}", first.to_text());
        assert_eq!(first.lines, whole.lines[..200]);
        assert_eq!(first.next_offset, Some(200));
        assert!(
            first.to_text().contains("200 lines shown; more follow"),
            "{}",
            first.to_text()
        );
        let second = tab.snapshot(&page(200, 200)).await.unwrap();
        assert_eq!(second.lines, whole.lines[200..400]);
        assert_eq!(second.next_offset, Some(400));

        // Under an element: the table's first rows, as in the whole tree.
        let table = SnapshotOptions {
            root: Some(sel("table")),
            ..Default::default()
        };
        let rows = tab.snapshot(&table).await.unwrap();
        let whole_table = tab
            .snapshot(&SnapshotOptions {
                limit: Some(1000),
                ..table.clone()
            })
            .await
            .unwrap();
        assert_eq!(rows.total_lines, None);
        assert_eq!(rows.lines, whole_table.lines[..200]);
        assert!(
            rows.lines[0].starts_with("- table \"All orders\""),
            "{:?}",
            rows.lines[0]
        );

        // A ref from the lazy read acts on its element.
        let search = first
            .lines
            .iter()
            .find(|l| l.contains("searchbox \"Filter\""))
            .and_then(|l| l.split("[ref=").nth(1))
            .and_then(|r| r.split(']').next())
            .expect("the filter's ref")
            .to_string();
        tab.fill(&ElementTarget::parse(&search), "Order 100007")
            .await
            .unwrap();
        let value = eval(&tab, "document.querySelector('input[name=q]').value").await;
        assert_eq!(value, "Order 100007");
    })
}

#[test]
fn snapshot_refs_drive_a_form_fill_and_submit() {
    with_browser(|env: Env| async move {
        let tab = env.open("/form").await;
        let snap = tab.snapshot(&SnapshotOptions::default()).await.unwrap();
        let text = snap.to_text();
        assert!(text.contains("heading \"Sign up\" [level=1]"), "{text}");
        let find_ref = |needle: &str| -> String {
            let line = snap
                .lines
                .iter()
                .find(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("no line with {needle} in\n{text}"));
            let start = line.find("[ref=").unwrap() + 5;
            line[start..].split(']').next().unwrap().to_string()
        };
        let email = find_ref("textbox \"Email\"");
        let submit = find_ref("button \"Create account\"");
        let plan = find_ref("combobox \"Plan\"");
        let terms = find_ref("checkbox \"I agree\"");
        assert!(snap.refs >= 5, "{text}");

        // The same element keeps its ref in a second snapshot; interactive-only is shorter.
        let compact = tab
            .snapshot(&SnapshotOptions {
                interactive_only: true,
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(
            compact
                .lines
                .iter()
                .any(|l| l.contains(&format!("[ref={email}]")))
        );
        assert!(compact.total_lines.unwrap() <= snap.total_lines.unwrap());
        let paged = tab
            .snapshot(&SnapshotOptions {
                limit: Some(2),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(paged.lines.len(), 2);
        assert_eq!(paged.next_offset, Some(2));

        let filled = tab
            .fill(&ElementTarget::parse(&email), "ada@example.com")
            .await
            .unwrap();
        assert!(
            filled.action.contains("ada@example.com"),
            "{}",
            filled.action
        );
        tab.fill(&sel("input[name=password]"), "hunter2")
            .await
            .map(|o| {
                assert!(
                    !o.action.contains("hunter2"),
                    "passwords are masked: {}",
                    o.action
                );
            })
            .unwrap();
        tab.fill(&ElementTarget::parse(&plan), "Pro plan")
            .await
            .unwrap();
        tab.click(&ElementTarget::parse(&terms), &ClickOptions::default())
            .await
            .unwrap();
        tab.fill(&sel("textarea"), "line one").await.unwrap();
        let short = tab.fill(&sel("input[name=short]"), "abcdef").await.unwrap();
        assert!(
            short.notes.iter().any(|n| n.contains("\"abc\"")),
            "{:?}",
            short.notes
        );

        let submitted = tab
            .click(&ElementTarget::parse(&submit), &ClickOptions::default())
            .await
            .unwrap();
        assert_eq!(submitted.status, Some(200), "{}", submitted.to_text());
        assert_eq!(submitted.title.as_deref(), Some("Thanks"));
        assert!(submitted.url.as_deref().unwrap().contains("/submit?"));
        let result = eval(&tab, "document.getElementById('result').textContent").await;
        assert_eq!(
            result,
            json!(
                "email=ada@example.com;note=line one;password=hunter2;plan=pro;short=abc;terms=yes"
            )
        );

        // Refs of the old page are void now.
        let err = tab
            .click(&ElementTarget::parse(&email), &ClickOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(err, BrowserError::StaleRef { .. }), "{err}");
        assert!(err.to_string().contains("Take a new snapshot"), "{err}");
    });
}

#[test]
fn actions_report_what_changed() {
    with_browser(|env: Env| async move {
        let tab = env.open("/actions").await;
        let click = |s: &'static str| {
            let tab = tab.clone();
            async move { tab.click(&sel(s), &ClickOptions::default()).await }
        };

        // An error thrown by a click handler and a failed fetch show up in the outcome.
        let broke = click("#err").await.unwrap();
        assert!(
            broke
                .console_errors
                .iter()
                .any(|e| e.text.contains("nope is not defined")),
            "{}",
            broke.to_text()
        );
        let fetched = click("#fetch404").await.unwrap();
        assert_eq!(fetched.failed_requests.len(), 1, "{}", fetched.to_text());
        assert_eq!(fetched.failed_requests[0].status, Some(404));
        // The action waits for the requests it started.
        let slow = click("#slow").await.unwrap();
        assert!(slow.failed_requests.is_empty());
        assert!(
            !slow.to_text().contains("still pending"),
            "{}",
            slow.to_text()
        );
        // The response arrived within the action; the page's `.then` that writes it may run a
        // moment later on a loaded machine (this failed a CI run once when asserted at once).
        let mut out = json!(null);
        for _ in 0..50 {
            out = eval(&tab, "document.getElementById('out').textContent").await;
            if out == json!("slow done") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(out, json!("slow done"));

        // Hidden and covered elements are refused with the reason.
        let err = click("#hidden-btn").await.unwrap_err();
        assert!(err.to_string().contains("not visible"), "{err}");
        let err = click("#covered").await.unwrap_err();
        assert!(err.to_string().contains("covered by div#overlay"), "{err}");
        let err = click("#nope-button").await.unwrap_err();
        assert!(matches!(err, BrowserError::ElementNotFound { .. }), "{err}");

        // Hover, type + Enter, press_key.
        let hovered = tab.hover(&sel("#hoverme")).await.unwrap();
        assert!(
            hovered.action.starts_with("hovered div#hoverme"),
            "{}",
            hovered.action
        );
        assert_eq!(
            eval(&tab, "document.getElementById('hoverme').textContent").await,
            json!("hovered!")
        );
        tab.type_text(Some(&sel("#search")), "rust", true)
            .await
            .unwrap();
        assert_eq!(
            eval(&tab, "document.getElementById('searched').textContent").await,
            json!("searched:rust")
        );
        tab.press_key("Control+A", Some(&sel("#search")))
            .await
            .unwrap();
        tab.press_key("Backspace", None).await.unwrap();
        assert_eq!(
            eval(&tab, "document.getElementById('search').value").await,
            json!("")
        );
        let err = tab.press_key("Entr", None).await.unwrap_err();
        assert!(err.to_string().contains("Did you mean Enter"), "{err}");

        // Scroll: by direction and to an element.
        let down = tab
            .scroll(&ScrollRequest {
                direction: Some(ScrollDirection::Down),
                amount: Some(300),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(down.action.contains("now at 300 px"), "{}", down.action);
        tab.scroll(&ScrollRequest {
            target: Some(sel("#bottom")),
            ..Default::default()
        })
        .await
        .unwrap();
        let visible = eval(&tab, "(() => { const r = document.getElementById('bottom').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()").await;
        assert_eq!(visible, json!(true));

        // A confirm() dialog: the click returns at once and says so; the page waits for us.
        let asked = click("#ask").await.unwrap();
        let dialog = asked.dialog.clone().expect("dialog reported");
        assert_eq!(
            (dialog.kind.as_str(), dialog.message.as_str()),
            ("confirm", "Delete item?")
        );
        assert!(asked.to_text().contains("handle_dialog"));
        let err = tab
            .evaluate("1 + 1", &EvaluateOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(err, BrowserError::DialogOpen { .. }), "{err}");
        let handled = tab.handle_dialog(false, None).await.unwrap();
        assert!(
            handled.action.starts_with("dismissed the confirm dialog"),
            "{}",
            handled.action
        );
        assert_eq!(
            eval(&tab, "document.getElementById('answer').textContent").await,
            json!("kept")
        );
        click("#ask").await.unwrap();
        tab.handle_dialog(true, None).await.unwrap();
        assert_eq!(
            eval(&tab, "document.getElementById('answer').textContent").await,
            json!("deleted")
        );
        let err = tab.handle_dialog(true, None).await.unwrap_err();
        assert!(matches!(err, BrowserError::NoDialog));

        // wait_for: text that appears later, a timeout that says what the page shows instead.
        click("#later").await.unwrap();
        let waited = tab
            .wait_for(&WaitCondition::Text("done later".into()), None)
            .await
            .unwrap();
        assert!(waited.met);
        let err = tab
            .wait_for(
                &WaitCondition::Text("never there".into()),
                Some(Duration::from_millis(400)),
            )
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("waiting for text \"never there\" to appear"),
            "{msg}"
        );
        assert!(
            msg.contains("The page (") && msg.contains("Done later"),
            "{msg}"
        );
        let err = tab
            .wait_for(
                &WaitCondition::Selector {
                    selector: "#hidden-btn".into(),
                    state: ElementState::Visible,
                },
                Some(Duration::from_millis(300)),
            )
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("1 element(s) match but none is visible"),
            "{err}"
        );
        let err = tab
            .wait_for(
                &WaitCondition::Selector {
                    selector: "#hoverm".into(),
                    state: ElementState::Attached,
                },
                Some(Duration::from_millis(300)),
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains("#hoverme"), "{err}");
        tab.wait_for(
            &WaitCondition::Selector {
                selector: "#bottom".into(),
                state: ElementState::Visible,
            },
            None,
        )
        .await
        .unwrap();
        tab.wait_for(&WaitCondition::NetworkIdle, None)
            .await
            .unwrap();

        // A link to another page reports the navigation; a target=_blank one the new tab.
        let popup = click("#popup").await.unwrap();
        assert_eq!(popup.new_tabs.len(), 1, "{}", popup.to_text());
        assert!(popup.new_tabs[0].url.ends_with("/form"));
        let went = click("#go").await.unwrap();
        assert_eq!(went.status, Some(200));
        assert_eq!(went.title.as_deref(), Some("Sign up"));
        let url = tab
            .wait_for(&WaitCondition::UrlContains("/form".into()), None)
            .await
            .unwrap();
        assert!(url.met);

        // select_option by value and by label; a wrong option lists the real ones.
        tab.select_option(&sel("select"), &["pro".into()])
            .await
            .unwrap();
        assert_eq!(
            eval(&tab, "document.querySelector('select').value").await,
            json!("pro")
        );
        let picked = tab
            .select_option(&sel("select"), &["Free".into()])
            .await
            .unwrap();
        assert!(picked.action.contains("\"Free\""), "{}", picked.action);
        let err = tab
            .select_option(&sel("select"), &["Pro plna".into()])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("Did you mean Pro plan"), "{err}");
        let err = tab
            .fill(&sel("input[type=checkbox]"), "x")
            .await
            .unwrap_err();
        assert!(err.to_string().contains("click it to toggle"), "{err}");
    });
}

#[test]
fn screenshots_viewport_full_page_and_element() {
    with_browser(|env: Env| async move {
        let tab = env.open("/long").await;
        let size = eval(
            &tab,
            "[innerWidth, innerHeight, document.documentElement.scrollHeight]",
        )
        .await;
        let (w, h, full) = (
            size[0].as_u64().unwrap() as u32,
            size[1].as_u64().unwrap() as u32,
            size[2].as_u64().unwrap() as u32,
        );
        let shot = tab.screenshot(&ScreenshotRequest::default()).await.unwrap();
        assert_eq!(shot.format, ImageFormat::Png);
        assert_eq!(image_size(&shot.data), (w, h));
        assert_eq!((shot.width, shot.height), (w, h));

        let page = tab
            .screenshot(&ScreenshotRequest {
                scope: ScreenshotScope::FullPage,
                format: ImageFormat::Jpeg,
                quality: Some(50),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(&page.data[..2], &[0xFF, 0xD8]);
        assert_eq!(image_size(&page.data), (w, full));
        assert!(full > h);

        tab.navigate(&Navigation::Url(env.url("/elements")), None)
            .await
            .unwrap();
        let rect = eval(&tab, "(() => { const r = document.getElementById('submit').getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; })()").await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shots/button.png");
        let element = tab
            .screenshot(&ScreenshotRequest {
                scope: ScreenshotScope::Element(sel("#submit")),
                path: Some(path.clone()),
                ..Default::default()
            })
            .await
            .unwrap();
        let (ew, eh) = image_size(&std::fs::read(&path).unwrap());
        assert!(
            (ew as i64 - rect[0].as_i64().unwrap()).abs() <= 1,
            "{ew} vs {rect}"
        );
        assert!(
            (eh as i64 - rect[1].as_i64().unwrap()).abs() <= 1,
            "{eh} vs {rect}"
        );
        assert!(element.to_text().contains("saved to"));
        let err = tab
            .screenshot(&ScreenshotRequest {
                scope: ScreenshotScope::Element(sel("li[style]")),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no size"), "{err}");
    });
}

#[test]
fn evaluate_and_inject_css() {
    with_browser(|env: Env| async move {
        let tab = env.open("/elements").await;
        let r = tab
            .evaluate("const n = 2; console.log('computing', n); ({ sum: n + 40, list: [1, 'a'], el: document.getElementById('submit') })", &EvaluateOptions::default())
            .await
            .unwrap();
        assert_eq!(
            r.value,
            json!({"sum": 42, "list": [1, "a"], "el": "<button#submit.btn.primary>"})
        );
        assert_eq!(r.value_type, "object");
        assert_eq!(r.console.len(), 1);
        assert_eq!(r.console[0].text, "computing 2");
        // REPL semantics: top-level await, re-declared let.
        let r = tab
            .evaluate(
                "let m = await Promise.resolve(5); m * 2",
                &EvaluateOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(r.value, json!(10));
        // A returned promise is settled, as if awaited.
        let r = tab
            .evaluate(
                "fetch('/api/data').then(r => r.json())",
                &EvaluateOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(r.value, json!({"items": [1, 2, 3], "ok": true}));
        let r = tab
            .evaluate("undefined", &EvaluateOptions::default())
            .await
            .unwrap();
        assert_eq!(
            (r.value_type.as_str(), r.to_text().as_str()),
            ("undefined", "undefined")
        );
        let r = tab
            .evaluate("const o = {}; o.self = o; o", &EvaluateOptions::default())
            .await
            .unwrap();
        assert_eq!(r.value, json!({"self": "[circular]"}));

        let thrown = tab
            .evaluate(
                "function inner() { throw new TypeError('bad thing'); }\ninner()",
                &EvaluateOptions::default(),
            )
            .await
            .unwrap();
        let error = thrown.error.clone().expect("thrown error");
        assert_eq!(error.message, "TypeError: bad thing");
        assert!(
            error.stack.first().is_some_and(|f| f.starts_with("inner")),
            "{error:?}"
        );
        assert!(thrown.to_text().starts_with("threw TypeError: bad thing"));

        let big = tab
            .evaluate(
                "'x'.repeat(100000)",
                &EvaluateOptions {
                    max_value_bytes: Some(100),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert!(big.truncated);

        // A runaway script is stopped and the page answers again.
        let err = tab
            .evaluate(
                "while (true) {}",
                &EvaluateOptions {
                    timeout_ms: Some(500),
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains("It was stopped"), "{err}");
        assert_eq!(eval(&tab, "1 + 1").await, json!(2));

        let css = tab
            .inject_css("li.item { color: rgb(255, 0, 0) } .nothing-here { color: blue }")
            .await
            .unwrap();
        assert_eq!(css.rules, 2);
        assert_eq!(css.matched_elements, 30);
        assert!(
            css.notes.iter().any(|n| n.contains(".nothing-here")),
            "{:?}",
            css.notes
        );
        assert_eq!(
            eval(&tab, "getComputedStyle(document.querySelector('li')).color").await,
            json!("rgb(255, 0, 0)")
        );
        tab.remove_css(&css.id).await.unwrap();
        assert_eq!(
            eval(&tab, "getComputedStyle(document.querySelector('li')).color").await,
            json!("rgb(0, 0, 0)")
        );
        assert!(tab.remove_css(&css.id).await.is_err());
        let broken = tab.inject_css("color: red; }").await.unwrap();
        assert_eq!(broken.rules, 0);
        assert!(broken.notes[0].contains("syntax"));
    });
}

#[test]
fn emulation_changes_what_the_page_sees() {
    with_browser(|env: Env| async move {
        let tab = env.open("/elements").await;
        let state = tab
            .emulate(&EmulationRequest {
                viewport: Some(ViewportSize {
                    width: 375,
                    height: 667,
                    device_scale_factor: Some(2.0),
                    mobile: false,
                }),
                color_scheme: Some(ColorScheme::Dark),
                cpu_slowdown: Some(4.0),
                network: Some(NetworkProfile::Fast3g),
                reset: false,
            })
            .await
            .unwrap();
        assert!(
            state
                .to_text()
                .contains("375x667 @2x, prefers-color-scheme: dark"),
            "{}",
            state.to_text()
        );
        assert_eq!(
            eval(
                &tab,
                "[innerWidth, devicePixelRatio, matchMedia('(prefers-color-scheme: dark)').matches]"
            )
            .await,
            json!([375, 2, true])
        );
        let shot = tab.screenshot(&ScreenshotRequest::default()).await.unwrap();
        assert_eq!((shot.width, shot.height), (750, 1334));
        assert_eq!(tab.emulation().cpu_slowdown, Some(4.0));

        tab.emulate(&EmulationRequest {
            network: Some(NetworkProfile::Offline),
            ..Default::default()
        })
        .await
        .unwrap();
        let offline = eval(
            &tab,
            "fetch('/api/data').then(() => 'online', () => 'offline')",
        )
        .await;
        assert_eq!(offline, json!("offline"));

        let reset = tab
            .emulate(&EmulationRequest {
                reset: true,
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(reset.to_text().starts_with("no emulation"));
        assert_eq!(
            eval(
                &tab,
                "fetch('/api/data').then(() => 'online', () => 'offline')"
            )
            .await,
            json!("online")
        );
        assert_eq!(
            eval(&tab, "matchMedia('(prefers-color-scheme: dark)').matches").await,
            json!(false)
        );

        let err = tab
            .emulate(&EmulationRequest {
                cpu_slowdown: Some(100.0),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
    });
}

#[test]
fn a_closed_tab_says_so() {
    with_browser(|env: Env| async move {
        let tab = env.open("/").await;
        env.sessions
            .close_tab(
                Some(common::CONN),
                Some(&devlens_browser::TabSelector::Id(tab.id().to_string())),
            )
            .await
            .unwrap();
        let err = tab
            .evaluate("1", &EvaluateOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(err, BrowserError::TabGone { .. }), "{err}");
        assert!(err.to_string().contains("switch to another"), "{err}");
    });
}

/// A tab closed behind devlens' back (by the page, the user or another client) fails fast.
#[test]
fn a_tab_closed_elsewhere_says_so_at_once() {
    with_browser(|env: Env| async move {
        let tab = env.open("/").await;
        let endpoint = env
            .sessions
            .connections()
            .connections
            .into_iter()
            .find(|c| c.id == common::CONN)
            .expect("the shared connection")
            .endpoint;
        let host = endpoint.trim_start_matches("http://").trim_end_matches('/');
        let mut stream = tokio::net::TcpStream::connect(host)
            .await
            .expect("DevTools HTTP");
        let request = format!(
            "GET /json/close/{} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n",
            tab.id()
        );
        tokio::io::AsyncWriteExt::write_all(&mut stream, request.as_bytes())
            .await
            .unwrap();
        // Chrome keeps the connection open: the status line is enough.
        let mut answer = vec![0u8; 512];
        let n = tokio::io::AsyncReadExt::read(&mut stream, &mut answer)
            .await
            .unwrap();
        let answer = String::from_utf8_lossy(&answer[..n]);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let started = std::time::Instant::now();
        let err = loop {
            match tab.evaluate("1", &EvaluateOptions::default()).await {
                Err(e) => break e,
                Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "the tab still answers"
            );
        };
        assert!(matches!(err, BrowserError::TabGone { .. }), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?}",
            started.elapsed()
        );
    });
}

/// Files a confined tab saves (what a server's tools get) go through one atomic writer: a
/// symlink put at the path after the path was checked is replaced, never followed; a folder
/// swapped for a symlink to somewhere else makes the save fail with nothing written there.
#[test]
fn saved_files_never_follow_a_symlink_swapped_in_after_the_check() {
    use devlens_browser::audit::memory::MemoryOptions;
    use devlens_workspace::{Access, Places};

    with_browser(|env: Env| async move {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let secret = outside.join("secret.txt");
        std::fs::write(&secret, "do not touch").unwrap();
        let places = Places::new(&ws, &dir.path().join("data"), false).unwrap();
        let root = places.workspace().to_path_buf();
        let tab = env.open("/elements").await.writing_in(&places);
        let checked = |path: &str| places.resolve(path, Access::Write).unwrap().path;

        // A symlink at the screenshot's name, put there after the check: replaced.
        std::fs::create_dir_all(root.join("shots")).unwrap();
        let shot = checked("shots/page.png");
        std::os::unix::fs::symlink(&secret, &shot).unwrap();
        let taken = tab
            .screenshot(&ScreenshotRequest {
                path: Some(shot.clone()),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(std::fs::symlink_metadata(&shot).unwrap().is_file());
        assert_eq!(
            image_size(&std::fs::read(&shot).unwrap()),
            (taken.width, taken.height)
        );
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "do not touch");

        // The folder of a saved response body swapped for a symlink to outside: refused.
        eval(&tab, "fetch('/api/data').then(r => r.text())").await;
        let listed = tab.network_requests(&NetworkQuery {
            url_contains: Some("/api/data".into()),
            ..Default::default()
        });
        let id = listed.requests[0].id;
        std::fs::create_dir_all(root.join("bodies")).unwrap();
        let body = checked("bodies/data.json");
        std::fs::remove_dir(root.join("bodies")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("bodies")).unwrap();
        let err = tab
            .network_request(
                &format!("#{id}"),
                &BodyOptions {
                    save_response_body_to: Some(body),
                    ..Default::default()
                },
            )
            .await
            .unwrap_err();
        assert!(matches!(err, BrowserError::InvalidInput(_)), "{err}");
        assert!(err.to_string().contains("was not written"), "{err}");

        // A heap snapshot streamed into a folder swapped the same way: refused.
        std::fs::create_dir_all(root.join("heap")).unwrap();
        let heap = checked("heap/page.heapsnapshot");
        std::fs::remove_dir(root.join("heap")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("heap")).unwrap();
        let err = tab
            .memory(&MemoryOptions {
                heap_snapshot: true,
                save_to: Some(heap),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("was not written"), "{err}");

        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            1,
            "only the secret is outside"
        );
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "do not touch");
    });
}
