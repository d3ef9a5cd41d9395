//! MCP tool arguments: what an agent sends as a tool call's `arguments`, deserialised into the
//! argument types of devlens-app (the ones the MCP server, the REST API and the CLI share) and
//! run through their request constructors and validation — with a workspace in a temporary
//! folder and no browser, so browser, debugger and audit calls go as far as "no browser is
//! connected" and nothing launches or connects.
//!
//! The first byte picks the tool; the rest is the arguments' JSON. `chrome` (launch/connect) is
//! left out: a fuzzer must not start browsers or dial endpoints.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use devlens_app::{App, api, audit, browser, debugger, docs, workspace};
use devlens_core::Config;
use devlens_openapi::EndpointRef;
use devlens_workspace::{Access, Workspace};
use serde::Deserialize;

/// The file `edit_file` and `write_file` work on: the edit's text is fuzzed, not where it goes
/// (where a path may go is fuzzed through `resolve`, without writing).
const PAGE: &str = "page.txt";
const PAGE_TEXT: &str = "line one\nline two\n  indented three\nfour\n\nsix\n";

struct Harness {
    runtime: tokio::runtime::Runtime,
    app: App,
    ws: Arc<Workspace>,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("devlens-fuzz-app-{}", std::process::id()));
        let data = base.join("data");
        let root: PathBuf = base.join("workspace");
        std::fs::create_dir_all(root.join("src")).expect("a temporary workspace");
        std::fs::create_dir_all(&data).expect("a temporary data folder");
        std::fs::write(
            root.join("src/app.ts"),
            "export const answer = 42;\n// TODO: more\n",
        )
        .expect("a workspace file");
        std::fs::write(root.join(PAGE), PAGE_TEXT).expect("a workspace file");
        let app = App::new(Config::with_data_dir(&data)).with_workspace(&root, false);
        let ws = app.workspace().expect("the workspace opens");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        Harness { runtime, app, ws }
    })
}

/// The API family's arguments as the MCP tools name them (their structs are the MCP crate's
/// own; the validation they feed is devlens-app's).
fn parse<'a, T: Deserialize<'a>>(json: &'a [u8]) -> Option<T> {
    serde_json::from_slice(json).ok()
}

/// One input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let Some((&tool, json)) = data.split_first() else {
        return;
    };
    let h = harness();
    let app = &h.app;
    let ws = &h.ws;
    h.runtime.block_on(async {
        match tool % 40 {
            0 => {
                // The API tools' own argument types, as the MCP server and REST API read them.
                if let Some(a) = parse::<api::SearchArgs>(json) {
                    let _ = a.request();
                    let _ = a.target.selector();
                    let _ = a
                        .target
                        .confined_selector(|| async { Ok(Arc::clone(ws)) }, true)
                        .await;
                }
                if let Some(a) = parse::<api::EndpointArgs>(json) {
                    let _ = a.endpoint();
                    if let Some(path) = &a.path {
                        let _ = EndpointRef::parse(path);
                    }
                }
            }
            1 => {
                if let Some(a) = parse::<docs::AddDocs>(json) {
                    let _ = a.into_request();
                }
            }
            2 => {
                if let Some(a) = parse::<workspace::ReadFile>(json) {
                    let _ = ws.resolve(&a.path, Access::Write);
                    let _ = workspace::read_file(ws.clone(), a).await;
                }
            }
            3 => {
                if let Some(a) = parse::<workspace::ListFiles>(json) {
                    let _ = workspace::list_files(ws.clone(), a).await;
                }
            }
            4 => {
                if let Some(a) = parse::<workspace::SearchFiles>(json) {
                    let _ = workspace::search_files(ws.clone(), a).await;
                }
            }
            5 => {
                if let Some(mut a) = parse::<workspace::WriteFile>(json) {
                    let _ = ws.resolve(&a.path, Access::Write);
                    a.path = PAGE.into();
                    let _ = workspace::write_file(app, ws.clone(), a).await;
                }
            }
            6 => {
                if let Some(mut a) = parse::<workspace::EditFile>(json) {
                    let _ = ws.resolve(&a.path, Access::Write);
                    if ws.write_file(PAGE, PAGE_TEXT).is_ok() {
                        a.path = PAGE.into();
                        let _ = workspace::edit_file(app, ws.clone(), a).await;
                    }
                }
            }
            7 => {
                if let Some(a) = parse::<browser::ConnectionArgs>(json) {
                    let _ = browser::disconnect(app, a).await;
                }
            }
            8 => {
                if let Some(a) = parse::<browser::TargetArgs>(json) {
                    let _ = browser::target(app, a).await;
                }
            }
            9 => {
                if let Some(a) = parse::<browser::NavigateArgs>(json) {
                    let _ = browser::navigate(app, a).await;
                }
            }
            10 => {
                if let Some(a) = parse::<browser::QueryElementsArgs>(json) {
                    let _ = browser::query_elements(app, a).await;
                }
            }
            11 => {
                if let Some(a) = parse::<browser::SnapshotArgs>(json) {
                    let _ = browser::snapshot(app, a).await;
                }
            }
            12 => {
                if let Some(a) = parse::<browser::ClickArgs>(json) {
                    let _ = browser::click(app, a).await;
                }
            }
            13 => {
                if let Some(a) = parse::<browser::FillArgs>(json) {
                    let _ = browser::fill(app, a).await;
                }
            }
            14 => {
                if let Some(a) = parse::<browser::TypeTextArgs>(json) {
                    let _ = browser::type_text(app, a).await;
                }
            }
            15 => {
                if let Some(a) = parse::<browser::PressKeyArgs>(json) {
                    let _ = browser::press_key(app, a).await;
                }
            }
            16 => {
                if let Some(a) = parse::<browser::ElementArgs>(json) {
                    let _ = browser::hover(app, a).await;
                }
            }
            17 => {
                if let Some(a) = parse::<browser::SelectOptionArgs>(json) {
                    let _ = browser::select_option(app, a).await;
                }
            }
            18 => {
                if let Some(a) = parse::<browser::ScrollArgs>(json) {
                    let _ = browser::scroll(app, a).await;
                }
            }
            19 => {
                if let Some(a) = parse::<browser::WaitForArgs>(json) {
                    let _ = browser::wait_for(app, a).await;
                }
            }
            20 => {
                if let Some(a) = parse::<browser::HandleDialogArgs>(json) {
                    let _ = browser::handle_dialog(app, a).await;
                }
            }
            21 => {
                if let Some(a) = parse::<browser::ConsoleArgs>(json) {
                    let _ = browser::console_logs(app, a).await;
                }
            }
            22 => {
                if let Some(a) = parse::<browser::NetworkArgs>(json) {
                    let _ = browser::network_requests(app, a).await;
                }
            }
            23 => {
                if let Some(a) = parse::<browser::NetworkRequestArgs>(json) {
                    let _ = browser::network_request(app, ws, a).await;
                }
            }
            24 => {
                if let Some(a) = parse::<browser::ScreenshotArgs>(json) {
                    let _ = browser::screenshot(app, ws, a).await;
                }
            }
            25 => {
                if let Some(a) = parse::<browser::EvaluateArgs>(json) {
                    let _ = browser::evaluate(app, a).await;
                }
            }
            26 => {
                if let Some(a) = parse::<browser::InjectCssArgs>(json) {
                    let _ = browser::inject_css(app, a).await;
                }
            }
            27 => {
                if let Some(a) = parse::<browser::RemoveCssArgs>(json) {
                    let _ = browser::remove_css(app, a).await;
                }
            }
            28 => {
                if let Some(a) = parse::<browser::EmulateArgs>(json) {
                    let _ = browser::emulate(app, a).await;
                }
            }
            29 => {
                if let Some(a) = parse::<debugger::DebugConnectionArgs>(json) {
                    let _ = debugger::enable(app, a).await;
                }
            }
            30 => {
                if let Some(a) = parse::<debugger::BreakpointArgs>(json) {
                    let _ = debugger::breakpoint(app, a).await;
                }
            }
            31 => {
                if let Some(a) = parse::<debugger::ExecutionArgs>(json) {
                    let _ = debugger::execution(app, a).await;
                }
            }
            32 => {
                if let Some(a) = parse::<debugger::StepArgs>(json) {
                    let _ = debugger::step(app, &a).await;
                }
            }
            33 => {
                if let Some(a) = parse::<debugger::EvaluateInFrameArgs>(json) {
                    let _ = debugger::evaluate_in_frame(app, a).await;
                }
            }
            34 => {
                if let Some(a) = parse::<debugger::PauseOnExceptionsArgs>(json) {
                    let _ = debugger::pause_on_exceptions(app, a).await;
                }
            }
            35 => {
                if let Some(a) = parse::<debugger::WaitForPauseArgs>(json) {
                    let _ = debugger::wait_for_pause(app, a).await;
                }
            }
            36 => {
                if let Some(a) = parse::<audit::AccessibilityArgs>(json) {
                    let _ = audit::accessibility(app, a).await;
                }
            }
            37 => {
                if let Some(a) = parse::<audit::PerformanceArgs>(json) {
                    let _ = audit::performance(app, ws, a).await;
                }
            }
            38 => {
                if let Some(a) = parse::<audit::AppStateArgs>(json) {
                    let _ = audit::app_state(app, a).await;
                }
            }
            _ => {
                if let Some(a) = parse::<audit::CssArgs>(json) {
                    let _ = audit::css(app, a).await;
                }
            }
        }
    });
}
