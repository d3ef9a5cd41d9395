//! REST endpoints for the browser and the debugger under `/api/browser/` and `/api/debugger/`:
//! one `POST` per tool, whose JSON body is the tool's MCP arguments and whose answer is the
//! tool's structured result. The dev panel, the extension and a CLI that reaches a running server
//! drive the same browser sessions an agent does.

use std::sync::Arc;

use axum::{
    Json, Router,
    extract::{State, rejection::JsonRejection},
    routing::{get, post},
};
use base64::Engine as _;
use serde::Serialize;
use serde_json::{Value, json};

use devlens_app::{
    App, AppError, audit,
    browser::{self, TargetOutcome, WithScreenshot},
    debugger::{self, BreakpointOutcome},
};
use devlens_browser::Screenshot;

use crate::failure::{Failure, JsonResult, json_body};

type Shared = State<Arc<App>>;

/// A result as JSON.
fn to_json<T: Serialize>(value: &T) -> Result<Value, Failure> {
    serde_json::to_value(value).map_err(|e| Failure::from(AppError::invalid(e.to_string())))
}

/// A screenshot as JSON, with the image inline (base64) when it was not saved to a file.
fn screenshot_json(shot: &Screenshot) -> Result<Value, Failure> {
    let mut value = to_json(shot)?;
    if shot.path.is_none()
        && let Some(object) = value.as_object_mut()
    {
        object.insert("mimeType".into(), json!(shot.format.mime_type()));
        object.insert(
            "data".into(),
            json!(base64::engine::general_purpose::STANDARD.encode(&shot.data)),
        );
    }
    Ok(value)
}

/// A result with the screenshot taken after it, when one was asked for.
pub(crate) fn shown_json<T: Serialize>(shown: WithScreenshot<T>) -> Result<Value, Failure> {
    let mut value = to_json(&shown.result)?;
    if let (Some(object), Some(shot)) = (value.as_object_mut(), shown.screenshot) {
        let shot = match shot {
            Ok(shot) => screenshot_json(&shot)?,
            Err(why) => json!({ "error": why }),
        };
        object.insert("screenshot".into(), shot);
    }
    Ok(value)
}

/// One route per tool: `$path` takes the tool's arguments as JSON and answers `$run`'s result.
macro_rules! tool_routes {
    ($router:expr, $( $path:literal => |$app:ident, $args:ident: $ty:ty| $run:expr ),* $(,)?) => {{
        let router = $router;
        $(
            let router = router.route(
                $path,
                post(|State($app): Shared, body: Result<Json<$ty>, JsonRejection>| async move {
                    let $args: $ty = json_body(body, concat!("the arguments of the ", $path, " tool"))?;
                    let value: Value = $run;
                    Ok::<_, Failure>(Json(value))
                }),
            );
        )*
        router
    }};
}

pub(crate) fn routes() -> Router<Arc<App>> {
    let router = Router::new().route("/browser/connections", get(connections));
    tool_routes!(router,
        "/browser/chrome" => |app, args: browser::ChromeArgs| to_json(&browser::chrome(&app, args).await?)?,
        "/browser/disconnect" => |app, args: browser::ConnectionArgs| to_json(&browser::disconnect(&app, args).await?)?,
        "/browser/target" => |app, args: browser::TargetArgs| match browser::target(&app, args).await? {
            TargetOutcome::Tabs(tabs) => to_json(&tabs)?,
            TargetOutcome::Switched(tab) => to_json(&tab)?,
            TargetOutcome::Opened(tab) => to_json(&tab)?,
        },
        "/browser/navigate" => |app, args: browser::NavigateArgs| to_json(&browser::navigate(&app, args).await?)?,
        "/browser/query_elements" => |app, args: browser::QueryElementsArgs| to_json(&browser::query_elements(&app, args).await?)?,
        "/browser/snapshot" => |app, args: browser::SnapshotArgs| to_json(&browser::snapshot(&app, args).await?)?,
        "/browser/click_element" => |app, args: browser::ClickArgs| to_json(&browser::click(&app, args).await?)?,
        "/browser/fill_element" => |app, args: browser::FillArgs| to_json(&browser::fill(&app, args).await?)?,
        "/browser/type_text" => |app, args: browser::TypeTextArgs| to_json(&browser::type_text(&app, args).await?)?,
        "/browser/press_key" => |app, args: browser::PressKeyArgs| to_json(&browser::press_key(&app, args).await?)?,
        "/browser/hover" => |app, args: browser::ElementArgs| to_json(&browser::hover(&app, args).await?)?,
        "/browser/select_option" => |app, args: browser::SelectOptionArgs| to_json(&browser::select_option(&app, args).await?)?,
        "/browser/scroll" => |app, args: browser::ScrollArgs| to_json(&browser::scroll(&app, args).await?)?,
        "/browser/wait_for" => |app, args: browser::WaitForArgs| to_json(&browser::wait_for(&app, args).await?)?,
        "/browser/handle_dialog" => |app, args: browser::HandleDialogArgs| to_json(&browser::handle_dialog(&app, args).await?)?,
        "/browser/get_console_logs" => |app, args: browser::ConsoleArgs| to_json(&browser::console_logs(&app, args).await?)?,
        "/browser/list_network_requests" => |app, args: browser::NetworkArgs| to_json(&browser::network_requests(&app, args).await?)?,
        "/browser/get_network_request" => |app, args: browser::NetworkRequestArgs| {
            let ws = app.workspace()?;
            to_json(&browser::network_request(&app, &ws, args).await?)?
        },
        "/browser/screenshot" => |app, args: browser::ScreenshotArgs| {
            let ws = app.workspace()?;
            screenshot_json(&browser::screenshot(&app, &ws, args).await?)?
        },
        "/browser/evaluate" => |app, args: browser::EvaluateArgs| shown_json(browser::evaluate(&app, args).await?)?,
        "/browser/inject_css" => |app, args: browser::InjectCssArgs| shown_json(browser::inject_css(&app, args).await?)?,
        "/browser/remove_css" => |app, args: browser::RemoveCssArgs| shown_json(browser::remove_css(&app, args).await?)?,
        "/browser/emulate" => |app, args: browser::EmulateArgs| to_json(&browser::emulate(&app, args).await?)?,
        "/browser/inspect_css" => |app, args: audit::CssArgs| to_json(&audit::css(&app, args).await?)?,
        "/browser/inspect_app_state" => |app, args: audit::AppStateArgs| to_json(&audit::app_state(&app, args).await?)?,
        "/browser/audit_accessibility" => |app, args: audit::AccessibilityArgs| to_json(&audit::accessibility(&app, args).await?)?,
        "/browser/audit_performance" => |app, args: audit::PerformanceArgs| {
            let ws = app.workspace()?;
            to_json(&audit::performance(&app, &ws, args).await?)?
        },
        "/debugger/enable" => |app, args: debugger::DebugConnectionArgs| to_json(&debugger::enable(&app, args).await?)?,
        "/debugger/breakpoint" => |app, args: debugger::BreakpointArgs| match debugger::breakpoint(&app, args).await? {
            BreakpointOutcome::Set(set) => to_json(&set)?,
            BreakpointOutcome::List(list) => to_json(&list)?,
        },
        "/debugger/execution" => |app, args: debugger::ExecutionArgs| to_json(&debugger::execution(&app, args).await?)?,
        "/debugger/step" => |app, args: debugger::StepArgs| to_json(&debugger::step(&app, &args).await?)?,
        "/debugger/call_stack" => |app, args: debugger::DebugConnectionArgs| to_json(&debugger::call_stack(&app, args).await?)?,
        "/debugger/evaluate_in_frame" => |app, args: debugger::EvaluateInFrameArgs| to_json(&debugger::evaluate_in_frame(&app, args).await?)?,
        "/debugger/pause_on_exceptions" => |app, args: debugger::PauseOnExceptionsArgs| to_json(&debugger::pause_on_exceptions(&app, args).await?)?,
        "/debugger/wait_for_pause" => |app, args: debugger::WaitForPauseArgs| to_json(&debugger::wait_for_pause(&app, args).await?)?,
    )
}

/// `GET /api/browser/connections`: what `chrome_list_connections` answers.
async fn connections(State(app): Shared) -> JsonResult<devlens_browser::ConnectionList> {
    Ok(Json(browser::connections(&app)))
}
