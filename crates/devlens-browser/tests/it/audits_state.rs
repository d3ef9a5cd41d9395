//! The app-state inspection on real production builds of React 18 and Vue 3 (npm packages
//! fetched by scripts/fetch-testdata): frameworks and versions, component trees with names and
//! keys, a component's state read back before and after a click, stores, globals, redaction,
//! and clear answers for what is not there.

use crate::common;

use std::time::{Duration, Instant};

use common::{Env, testdata_present, with_browser};
use devlens_browser::audit::state::{AppState, StateFramework, StateQuery, StateView};
use devlens_browser::{BrowserError, ClickOptions, ElementTarget, EvaluateOptions, Tab};

const REACT: &str = "react-dom/package/umd/react-dom.production.min.js";
const VUE: &str = "pinia/package/dist/pinia.iife.prod.js";

fn query(view: StateView, element: Option<&str>) -> StateQuery {
    StateQuery {
        view,
        element: element.map(str::to_string),
        ..Default::default()
    }
}

async fn state(tab: &Tab, view: StateView, element: Option<&str>) -> AppState {
    tab.app_state(&query(view, element))
        .await
        .unwrap_or_else(|e| panic!("{view:?} {element:?}: {e}"))
}

/// The view's text, checked to contain each part.
async fn text(tab: &Tab, view: StateView, element: Option<&str>, parts: &[&str]) -> String {
    let text = state(tab, view, element).await.to_text();
    for part in parts {
        assert!(text.contains(part), "{part:?} missing from:\n{text}");
    }
    text
}

async fn click(tab: &Tab, selector: &str) {
    tab.click(&ElementTarget::parse(selector), &ClickOptions::default())
        .await
        .expect("click");
}

#[test]
fn react_app_frameworks_tree_component_and_stores() {
    if !testdata_present(REACT) {
        return;
    }
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/react-app.html").await;
        use StateView::{Component, Frameworks, Stores, Tree};

        let found = [
            "React 18.3.1 (1 root(s): div#root)",
            "Redux (store <Provider> props.store)",
            "Zustand (store window.useThemeStore)",
        ];
        let t = text(&tab, Frameworks, None, &found).await;
        assert!(!t.contains("Vue"), "{t}");

        let tree = [
            "(root div#root) (root)\n  App\n    Provider\n      TodoApp\n        Header (forwardRef)\n        Counter\n        TodoList\n",
            "          TodoItem key=\"todo-1\" (memo)\n          TodoItem key=\"todo-2\" (memo)\n      StatusBar (class)",
        ];
        text(&tab, Tree, None, &tree).await;
        // Around an element: the path from the root, the element's component marked.
        let t = text(&tab, Tree, Some("li.todo"), &[]).await;
        let around =
            "path: App › Provider › TodoApp › TodoList\nTodoItem key=\"todo-1\" (memo)  ◀ element";
        assert!(t.starts_with(around), "{t}");

        // A state value reads back, and changes after a click.
        let counter = [
            "Counter (React function) in TodoApp ‹ Provider ‹ App",
            "  0 state: 0\n  1 ref: 0",
        ];
        text(&tab, Component, Some("#inc"), &counter).await;
        click(&tab, "#inc").await;
        click(&tab, "#inc").await;
        text(&tab, Component, Some("#inc"), &["  0 state: 2\n  1 ref: 2"]).await;

        // Props without children, the secret redacted; reducer, memo and ref hooks; the context.
        let app = [
            r#"props: {"title":"Todos","apiToken":"[redacted]"}"#,
            r#"  0 reducer: [{"id":1,"title":"Write tests","done":false}"#,
            "  1 memo: 2\n  2 ref: <h1>\n",
            "context StoreContext: {\"dispatch\":\"[function ",
        ];
        let t = text(&tab, Component, Some("#remaining"), &app).await;
        assert!(!t.contains("tok-9f8e7d6c"), "{t}");
        click(&tab, "li.todo").await;
        let toggled = [
            r#"  0 reducer: [{"id":1,"title":"Write tests","done":true}"#,
            "  1 memo: 1\n",
        ];
        text(&tab, Component, Some("#remaining"), &toggled).await;

        // A class component's state, its password redacted.
        let status = [r#"state: {"online":true,"password":"[redacted]"}"#];
        text(&tab, Component, Some("#status"), &status).await;

        let stores = [
            r#"<Provider> props.store (redux): {"filter":"all","toggles":1}"#,
            r#"window.useThemeStore (zustand): {"theme":"dark","toggle":"[function toggle]"}"#,
        ];
        text(&tab, Stores, None, &stores).await;

        // Paging: two nodes from the third on, and the way to the next page.
        let paged = StateQuery {
            view: Tree,
            limit: Some(2),
            offset: 2,
            ..Default::default()
        };
        let page = tab.app_state(&paged).await.unwrap();
        assert_eq!(page.tree.len(), 2);
        assert_eq!(page.tree[0].name, "Provider");
        let t = page.to_text();
        assert!(t.ends_with("… 2 of 10 shown; next page: offset 4"), "{t}");
    });
}

#[test]
fn react_globals_are_the_apps_own() {
    if !testdata_present(REACT) {
        return;
    }
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/react-app.html").await;
        let globals = state(&tab, StateView::Globals, None).await;
        let names: Vec<&str> = globals.items.iter().map(|i| i.name.as_str()).collect();
        let own = [
            "React",
            "ReactDOM",
            "Redux",
            "appVersion",
            "APP_CONFIG",
            "useThemeStore",
            "Counter",
            "lexicalCounter",
            "store",
        ];
        for name in own {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        for builtin in [
            "document",
            "fetch",
            "localStorage",
            "location",
            "setTimeout",
            "Array",
        ] {
            assert!(!names.contains(&builtin), "{builtin} in {names:?}");
        }
        let previews = [
            "appVersion (string): \"1.4.2\"",
            "lexicalCounter (number (let/const)): 3",
            "React (object): library 18.3.1 {",
            "APP_CONFIG (object): {apiBase, sessionToken}",
        ];
        text(&tab, StateView::Globals, None, &previews).await;
    });
}

#[test]
fn vue_app_frameworks_tree_component_and_pinia() {
    if !testdata_present(VUE) {
        return;
    }
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/vue-app.html").await;
        use StateView::{Component, Frameworks, Stores, Tree};

        let t = text(
            &tab,
            Frameworks,
            None,
            &["Vue 3.5.", " (app on div#app)", "Pinia (store cart)"],
        )
        .await;
        assert!(!t.contains("React"), "{t}");
        let tree = "(app div#app) (root)\n  ShopApp\n    PromoBanner\n    CartPanel\n      CartItem key=1\n      CartItem key=2";
        text(&tab, Tree, None, &[tree]).await;

        let cart = [
            "CartPanel (Vue component) in ShopApp",
            r#"props: {"title":"Cart","apiKey":"[redacted]"}"#,
            r#"setup: {"added":0,"form":{"email":"a@example.com","password":"[redacted]"}"#,
        ];
        text(&tab, Component, Some("#add"), &cart).await;
        click(&tab, "#add").await;
        text(&tab, Component, Some("#add"), &[r#"setup: {"added":1,"#]).await;
        let t = text(&tab, Tree, Some("li.cart-item"), &[]).await;
        assert!(
            t.starts_with("path: ShopApp › CartPanel\nCartItem key=1  ◀ element"),
            "{t}"
        );

        let banner = [
            "PromoBanner (Vue component) in ShopApp",
            r#"state: {"dismissed":false,"sessionId":"[redacted]"}"#,
            r#"computed: {"label":"Sale!"}"#,
        ];
        text(&tab, Component, Some("#banner"), &banner).await;

        let stores = [
            r#"cart (pinia): {"items":[{"id":1,"name":"Tea","qty":2}"#,
            r#""name":"Extra 1","qty":1}],"checkoutToken":"[redacted]"}"#,
        ];
        text(&tab, Stores, None, &stores).await;
    });
}

#[test]
fn absent_frameworks_and_elements_answer_clearly() {
    if !testdata_present(REACT) {
        return;
    }
    with_browser(|env: Env| async move {
        let tab = env.open("/pages/react-app.html").await;
        let vue = StateQuery {
            view: StateView::Tree,
            framework: Some(StateFramework::Vue),
            ..Default::default()
        };
        let err = tab.app_state(&vue).await.unwrap_err();
        assert!(matches!(err, BrowserError::InvalidInput(_)), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.starts_with("no Vue 3 app on this page. This page has: React 18.3.1"),
            "{msg}"
        );

        let err = tab
            .app_state(&query(StateView::Component, Some("#no-such-thing")))
            .await
            .unwrap_err();
        assert!(
            matches!(err, BrowserError::ElementNotFound { .. }),
            "{err:?}"
        );
        let err = tab
            .app_state(&query(StateView::Globals, Some("#inc")))
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("element goes with the tree and component views"),
            "{err}"
        );

        // A page paused in the debugger is refused at once rather than waited for.
        tab.enable_debugger().await.expect("debugger on");
        let arm = "setTimeout(() => { debugger; }, 100); 'armed'";
        tab.evaluate(arm, &EvaluateOptions::default())
            .await
            .expect("arm the pause");
        tab.wait_for_pause(None).await.expect("paused");
        let started = Instant::now();
        let err = tab
            .app_state(&query(StateView::Tree, None))
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(err.to_string().contains("resume it first"), "{err}");
        tab.resume().await.expect("resume");

        // A page without any framework: a clear answer at once, and the other views still work.
        let plain = env.open("/").await;
        let started = Instant::now();
        let err = plain
            .app_state(&query(StateView::Component, None))
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        let msg = err.to_string();
        assert!(
            msg.contains(
                "has no mounted React or Vue 3 app. This page has: no framework devlens knows"
            ),
            "{msg}"
        );
        let t = text(&plain, StateView::Frameworks, None, &[]).await;
        assert!(t.starts_with("no framework devlens knows"), "{t}");
        let t = text(&plain, StateView::Globals, None, &[]).await;
        assert_eq!(t, "the page added nothing to window");
        let err = plain
            .app_state(&query(StateView::Tree, Some("h1")))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("no mounted React or Vue 3 app"),
            "{err}"
        );
    });
}
