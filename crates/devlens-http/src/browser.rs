//! REST endpoints for the browser and the debugger under `/api/browser/` and `/api/debugger/`:
//! one `POST` per tool, whose JSON body is the tool's MCP arguments and whose answer is the
//! tool's structured result — or, for a request that accepts `text/plain` (the CLI), the compact
//! text an agent reads. The dev panel, the extension and the CLI's session commands drive the
//! same browser sessions an agent does.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{State, rejection::JsonRejection},
    http::{HeaderMap, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
    routing::{get, post},
};
use base64::Engine as _;
use futures_util::Stream;
use serde::Serialize;
use serde_json::{Value, json};

use devlens_app::live::{BrowserWatch, POLL_INTERVAL};
use devlens_app::{
    App, AppError, Report, audit,
    browser::{self, Screenshot, WithScreenshot},
    debugger,
};

use crate::failure::{Failure, json_body};

type Shared = State<Arc<App>>;

/// A tool's answer in both forms; the request's `Accept` picks one.
pub(crate) struct Answer {
    pub(crate) json: Value,
    text: String,
}

impl Answer {
    pub(crate) fn respond(self, headers: &HeaderMap) -> Response {
        let wants_text = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|accept| accept.contains("text/plain"));
        if wants_text {
            (
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                self.text,
            )
                .into_response()
        } else {
            Json(self.json).into_response()
        }
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<Value, Failure> {
    serde_json::to_value(value).map_err(|e| Failure::from(AppError::invalid(e.to_string())))
}

/// A result's answer: its structured form and its compact text.
pub(crate) fn answer<T: Report>(value: &T) -> Result<Answer, Failure> {
    Ok(Answer {
        json: to_json(value)?,
        text: value.to_text(),
    })
}

/// A screenshot, with the image inline (base64) when it was not saved to a file.
fn screenshot_answer(shot: &Screenshot) -> Result<Answer, Failure> {
    let mut answer = answer(shot)?;
    if shot.path.is_none()
        && let Some(object) = answer.json.as_object_mut()
    {
        object.insert("mimeType".into(), json!(shot.format.mime_type()));
        object.insert(
            "data".into(),
            json!(base64::engine::general_purpose::STANDARD.encode(&shot.data)),
        );
    }
    Ok(answer)
}

/// A result with the screenshot taken after it, when one was asked for.
pub(crate) fn shown_answer<T: Report>(shown: WithScreenshot<T>) -> Result<Answer, Failure> {
    let mut answer = answer(&shown.result)?;
    if let Some(shot) = shown.screenshot {
        let (json, note) = match shot {
            Ok(shot) => (screenshot_answer(&shot)?.json, shot.to_text()),
            Err(why) => (json!({ "error": why }), format!("no screenshot: {why}")),
        };
        if let Some(object) = answer.json.as_object_mut() {
            object.insert("screenshot".into(), json);
        }
        answer.text = format!("{}\n{note}", answer.text);
    }
    Ok(answer)
}

/// One route per tool: `$path` takes the tool's arguments as JSON and answers `$run`'s result.
macro_rules! tool_routes {
    ($router:expr, $( $path:literal => |$app:ident, $args:ident: $ty:ty| $run:expr ),* $(,)?) => {{
        let router = $router;
        $(
            let router = router.route(
                $path,
                post(|State($app): Shared, headers: HeaderMap, body: Result<Json<$ty>, JsonRejection>| async move {
                    let $args: $ty = json_body(body, concat!("the arguments of the ", $path, " tool"))?;
                    let answer: Answer = $run;
                    Ok::<_, Failure>(answer.respond(&headers))
                }),
            );
        )*
        router
    }};
}

pub(crate) fn routes() -> Router<Arc<App>> {
    let router = Router::new()
        .route("/browser/connections", get(connections))
        .route("/browser/events", get(events));
    tool_routes!(router,
        "/browser/chrome" => |app, args: browser::ChromeArgs| answer(&browser::chrome(&app, args).await?)?,
        "/browser/disconnect" => |app, args: browser::ConnectionArgs| answer(&browser::disconnect(&app, args).await?)?,
        "/browser/target" => |app, args: browser::TargetArgs| answer(&browser::target(&app, args).await?)?,
        "/browser/navigate" => |app, args: browser::NavigateArgs| answer(&browser::navigate(&app, args).await?)?,
        "/browser/query_elements" => |app, args: browser::QueryElementsArgs| answer(&browser::query_elements(&app, args).await?)?,
        "/browser/snapshot" => |app, args: browser::SnapshotArgs| answer(&browser::snapshot(&app, args).await?)?,
        "/browser/click_element" => |app, args: browser::ClickArgs| answer(&browser::click(&app, args).await?)?,
        "/browser/fill_element" => |app, args: browser::FillArgs| answer(&browser::fill(&app, args).await?)?,
        "/browser/type_text" => |app, args: browser::TypeTextArgs| answer(&browser::type_text(&app, args).await?)?,
        "/browser/press_key" => |app, args: browser::PressKeyArgs| answer(&browser::press_key(&app, args).await?)?,
        "/browser/hover" => |app, args: browser::ElementArgs| answer(&browser::hover(&app, args).await?)?,
        "/browser/select_option" => |app, args: browser::SelectOptionArgs| answer(&browser::select_option(&app, args).await?)?,
        "/browser/scroll" => |app, args: browser::ScrollArgs| answer(&browser::scroll(&app, args).await?)?,
        "/browser/wait_for" => |app, args: browser::WaitForArgs| answer(&browser::wait_for(&app, args).await?)?,
        "/browser/handle_dialog" => |app, args: browser::HandleDialogArgs| answer(&browser::handle_dialog(&app, args).await?)?,
        "/browser/get_console_logs" => |app, args: browser::ConsoleArgs| answer(&browser::console_logs(&app, args).await?)?,
        "/browser/list_network_requests" => |app, args: browser::NetworkArgs| answer(&browser::network_requests(&app, args).await?)?,
        "/browser/get_network_request" => |app, args: browser::NetworkRequestArgs| {
            let ws = app.workspace()?;
            answer(&browser::network_request(&app, &ws, args).await?)?
        },
        "/browser/screenshot" => |app, args: browser::ScreenshotArgs| {
            let ws = app.workspace()?;
            screenshot_answer(&browser::screenshot(&app, &ws, args).await?)?
        },
        "/browser/evaluate" => |app, args: browser::EvaluateArgs| shown_answer(browser::evaluate(&app, args).await?)?,
        "/browser/inject_css" => |app, args: browser::InjectCssArgs| shown_answer(browser::inject_css(&app, args).await?)?,
        "/browser/remove_css" => |app, args: browser::RemoveCssArgs| shown_answer(browser::remove_css(&app, args).await?)?,
        "/browser/emulate" => |app, args: browser::EmulateArgs| answer(&browser::emulate(&app, args).await?)?,
        "/browser/inspect_css" => |app, args: audit::CssArgs| answer(&audit::css(&app, args).await?)?,
        "/browser/inspect_app_state" => |app, args: audit::AppStateArgs| answer(&audit::app_state(&app, args).await?)?,
        "/browser/audit_accessibility" => |app, args: audit::AccessibilityArgs| answer(&audit::accessibility(&app, args).await?)?,
        "/browser/audit_performance" => |app, args: audit::PerformanceArgs| {
            let ws = app.workspace()?;
            answer(&audit::performance(&app, &ws, args).await?)?
        },
        "/debugger/enable" => |app, args: debugger::DebugConnectionArgs| answer(&debugger::enable(&app, args).await?)?,
        "/debugger/breakpoint" => |app, args: debugger::BreakpointArgs| answer(&debugger::breakpoint(&app, args).await?)?,
        "/debugger/execution" => |app, args: debugger::ExecutionArgs| answer(&debugger::execution(&app, args).await?)?,
        "/debugger/step" => |app, args: debugger::StepArgs| answer(&debugger::step(&app, &args).await?)?,
        "/debugger/call_stack" => |app, args: debugger::DebugConnectionArgs| answer(&debugger::call_stack(&app, args).await?)?,
        "/debugger/evaluate_in_frame" => |app, args: debugger::EvaluateInFrameArgs| answer(&debugger::evaluate_in_frame(&app, args).await?)?,
        "/debugger/pause_on_exceptions" => |app, args: debugger::PauseOnExceptionsArgs| answer(&debugger::pause_on_exceptions(&app, args).await?)?,
        "/debugger/wait_for_pause" => |app, args: debugger::WaitForPauseArgs| answer(&debugger::wait_for_pause(&app, args).await?)?,
    )
}

/// `GET /api/browser/connections`: what `chrome_list_connections` answers.
async fn connections(State(app): Shared, headers: HeaderMap) -> Result<Response, Failure> {
    Ok(answer(&browser::connections(&app))?.respond(&headers))
}

/// `GET /api/browser/events`: server-sent events of the agent's browser as it changes —
/// `browser` (connections and tabs), `page` (the active tab shows another document), `console`,
/// `network`, `paused` (the pause context) and `resumed` — for the dev panel's Browser page.
/// Each client has its own [`BrowserWatch`]; it stops when the client goes.
async fn events(State(app): Shared) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let start = (app, BrowserWatch::new(), VecDeque::<Event>::new(), true);
    let stream =
        futures_util::stream::unfold(start, |(app, mut watch, mut ready, first)| async move {
            let mut first = first;
            while ready.is_empty() {
                if !first {
                    tokio::time::sleep(POLL_INTERVAL).await;
                }
                first = false;
                ready.extend(watch.poll(&app).await.iter().map(|event| {
                    Event::default()
                        .event(event.name())
                        .data(serde_json::to_string(event).unwrap_or_default())
                }));
            }
            let event = ready.pop_front()?;
            Some((Ok(event), (app, watch, ready, first)))
        });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
