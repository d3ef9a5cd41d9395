//! Session commands: `devlens browser launch|navigate|click|…` and `devlens debug …` act on the
//! browser of a running `devlens serve --http` through its HTTP API (see [`crate::remote`]), so
//! a session lives across commands — what an agent working from a shell needs. Each command is
//! one tool call with the tool's arguments; the answer is the tool's compact text (or its
//! structured form with `--json`).

use std::path::Path;

use anyhow::Context as _;
use base64::Engine as _;
use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};

use devlens_app::AppError;
use devlens_core::Config;

use crate::browser_cmd::{BrowserArgs, BrowserCommand};
use crate::remote::Remote;

#[derive(Debug, Args)]
pub(crate) struct DebugArgs {
    /// The running devlens server [default: DEVLENS_SERVER, then the config's [server] http,
    /// then 127.0.0.1:7878]
    #[arg(long, global = true, value_name = "HOST:PORT")]
    pub server: Option<String>,
    /// The bearer token for a server that requires one (`devlens token create` on the server)
    #[arg(
        long,
        global = true,
        env = "DEVLENS_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
    /// Print the structured answer as JSON
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: DebugCommand,
}

/// Debugger commands: they act on the active tab of the server's browser.
#[derive(Debug, Subcommand)]
pub(crate) enum DebugCommand {
    /// Turn the debugger on for the active tab (the other commands do it on first use)
    Enable,
    /// Set a breakpoint at FILE:LINE (the original source through source maps, e.g.
    /// src/cart.ts:42 or app.js:12); the next pause answers with where it stopped
    Break {
        #[arg(value_name = "FILE:LINE[:COLUMN]")]
        location: String,
        /// Only pause when this JavaScript expression is true
        #[arg(long)]
        condition: Option<String>,
    },
    /// List the breakpoints
    Breakpoints,
    /// Remove a breakpoint by the id `break` or `breakpoints` printed
    Remove { id: String },
    /// Resume a paused page
    Resume,
    /// Pause the page at the next JavaScript statement
    Pause,
    /// Step over (default), into or out of the current call
    Step {
        #[arg(default_value = "over", value_parser = ["over", "into", "out"])]
        direction: String,
    },
    /// The paused page's call stack with each frame's scopes
    Stack,
    /// Evaluate an expression in a paused frame (the top one by default)
    Eval {
        expression: String,
        /// The frame, by its number in `stack`
        #[arg(long)]
        frame: Option<usize>,
    },
    /// Pause on thrown exceptions: none, uncaught or all
    Exceptions {
        #[arg(value_parser = ["none", "uncaught", "all"])]
        state: String,
    },
    /// Wait until the page pauses (a breakpoint hit by a timer or a request), then show where
    Wait {
        #[arg(long, value_name = "MS")]
        timeout_ms: Option<u64>,
    },
}

/// Whether `args` is a session command: the new verbs always, the page commands when neither
/// `--url` nor `--connect` names a page of their own.
pub(crate) fn is_session(args: &BrowserArgs) -> bool {
    let own_browser = args.browser.connect.is_some();
    match &args.command {
        BrowserCommand::Launch { .. }
        | BrowserCommand::Close { .. }
        | BrowserCommand::Navigate { .. }
        | BrowserCommand::Click { .. }
        | BrowserCommand::Fill { .. }
        | BrowserCommand::Type { .. }
        | BrowserCommand::Press { .. }
        | BrowserCommand::Hover { .. }
        | BrowserCommand::Select { .. }
        | BrowserCommand::Scroll { .. }
        | BrowserCommand::Wait { .. }
        | BrowserCommand::Dialog { .. } => true,
        BrowserCommand::Snapshot { page, .. }
        | BrowserCommand::Query { page, .. }
        | BrowserCommand::Screenshot { page, .. }
        | BrowserCommand::Console { page, .. }
        | BrowserCommand::Network { page, .. }
        | BrowserCommand::Eval { page, .. } => page.url.is_none() && !own_browser,
        BrowserCommand::Tabs { .. } => !own_browser,
        BrowserCommand::Open { .. } | BrowserCommand::Audit(_) => false,
    }
}

/// Arguments as a JSON object, leaving out the ones not given.
fn args(pairs: &[(&str, Value)]) -> Value {
    let map: Map<String, Value> = pairs
        .iter()
        .filter(|(_, v)| !v.is_null() && *v != Value::Bool(false))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    Value::Object(map)
}

/// One tool call, printed as text or as JSON.
async fn call(remote: &Remote, route: &str, body: Value, json: bool) -> anyhow::Result<()> {
    if json {
        let value = remote.json(route, body).await?;
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        let text = remote.text(route, body).await?;
        println!("{}", text.trim_end());
    }
    Ok(())
}

pub(crate) async fn run_browser(config: Config, a: BrowserArgs) -> anyhow::Result<()> {
    if a.browser.window.is_some() || a.browser.chrome_path.is_some() {
        return Err(AppError::invalid(
            "--window and --chrome-path apply to one-shot commands (with --url); the server's \
             browser takes them from its config ([browser] in devlens.toml, CHROME_PATH)",
        )
        .into());
    }
    let remote = Remote::new(
        a.browser.server.as_deref(),
        a.browser.token.as_deref(),
        &config,
    )?;
    let r = &remote;
    match a.command {
        BrowserCommand::Launch { json } => {
            let body = json!({ "action": "launch", "headless": !a.browser.headful });
            call(r, "browser/chrome", body, json).await
        }
        BrowserCommand::Close { json } => call(r, "browser/disconnect", json!({}), json).await,
        BrowserCommand::Navigate {
            url,
            back,
            forward,
            reload,
            json,
        } => {
            let action = [(back, "back"), (forward, "forward"), (reload, "reload")]
                .into_iter()
                .find(|(on, _)| *on)
                .map(|(_, name)| name);
            let body = args(&[("url", json!(url)), ("action", json!(action))]);
            call(r, "browser/navigate", body, json).await
        }
        BrowserCommand::Click {
            target,
            double,
            right,
            json,
        } => {
            let button = right.then_some("right");
            let body = args(&[
                ("element", json!(target)),
                ("doubleClick", json!(double)),
                ("button", json!(button)),
            ]);
            call(r, "browser/click_element", body, json).await
        }
        BrowserCommand::Fill {
            target,
            value,
            json,
        } => {
            let body = json!({ "element": target, "value": value });
            call(r, "browser/fill_element", body, json).await
        }
        BrowserCommand::Type {
            text,
            into,
            submit,
            json,
        } => {
            let body = args(&[
                ("text", json!(text)),
                ("element", json!(into)),
                ("submit", json!(submit)),
            ]);
            call(r, "browser/type_text", body, json).await
        }
        BrowserCommand::Press { key, on, json } => {
            let body = args(&[("key", json!(key)), ("element", json!(on))]);
            call(r, "browser/press_key", body, json).await
        }
        BrowserCommand::Hover { target, json } => {
            call(r, "browser/hover", json!({ "element": target }), json).await
        }
        BrowserCommand::Select {
            target,
            values,
            json,
        } => {
            let body = json!({ "element": target, "values": values });
            call(r, "browser/select_option", body, json).await
        }
        BrowserCommand::Scroll {
            direction,
            element,
            amount,
            json,
        } => {
            let body = args(&[
                ("direction", json!(direction)),
                ("element", json!(element)),
                ("amount", json!(amount)),
            ]);
            call(r, "browser/scroll", body, json).await
        }
        BrowserCommand::Wait {
            text,
            gone,
            selector,
            url_contains,
            network_idle,
            timeout_ms,
            json,
        } => {
            let (text, text_gone) = if gone { (None, text) } else { (text, None) };
            let body = args(&[
                ("text", json!(text)),
                ("textGone", json!(text_gone)),
                ("selector", json!(selector)),
                ("urlContains", json!(url_contains)),
                ("networkIdle", json!(network_idle)),
                ("timeoutMs", json!(timeout_ms)),
            ]);
            call(r, "browser/wait_for", body, json).await
        }
        BrowserCommand::Dialog { action, text, json } => {
            let mut body = args(&[("promptText", json!(text))]);
            // Set after `args`, which leaves `false` out: here it is the answer "dismiss".
            body["accept"] = json!(action == "accept");
            call(r, "browser/handle_dialog", body, json).await
        }
        BrowserCommand::Snapshot {
            interactive,
            offset,
            limit,
            json,
            ..
        } => {
            let body = args(&[
                ("interactiveOnly", json!(interactive)),
                ("offset", json!((offset > 0).then_some(offset))),
                ("limit", json!(limit)),
            ]);
            call(r, "browser/snapshot", body, json).await
        }
        BrowserCommand::Query {
            selector,
            text,
            visible,
            limit,
            json,
            ..
        } => {
            let body = args(&[
                ("selector", json!(selector)),
                ("text", json!(text)),
                ("visible", json!(visible)),
                ("limit", json!(limit)),
            ]);
            call(r, "browser/query_elements", body, json).await
        }
        BrowserCommand::Console {
            level, limit, json, ..
        } => {
            let body = args(&[("level", json!(level)), ("limit", json!(limit))]);
            call(r, "browser/get_console_logs", body, json).await
        }
        BrowserCommand::Network {
            failed,
            r#type,
            url_contains,
            limit,
            include_static,
            json,
            ..
        } => {
            let body = args(&[
                ("failedOnly", json!(failed)),
                ("resourceType", json!(r#type)),
                ("urlContains", json!(url_contains)),
                ("limit", json!(limit)),
                ("includeStatic", json!(include_static)),
            ]);
            call(r, "browser/list_network_requests", body, json).await
        }
        BrowserCommand::Eval {
            expression, json, ..
        } => {
            call(
                r,
                "browser/evaluate",
                json!({ "expression": expression }),
                json,
            )
            .await
        }
        BrowserCommand::Tabs { json } => {
            call(r, "browser/target", json!({ "action": "list" }), json).await
        }
        BrowserCommand::Screenshot {
            out,
            full_page,
            element,
            format,
            quality,
            json,
            ..
        } => {
            let format = format.or_else(|| {
                let ext = out.extension()?.to_str()?.to_ascii_lowercase();
                Some(if ext == "jpg" { "jpeg".into() } else { ext })
            });
            let body = args(&[
                ("fullPage", json!(full_page)),
                ("element", json!(element)),
                ("format", json!(format)),
                ("quality", json!(quality)),
            ]);
            let value = remote.json("browser/screenshot", body).await?;
            save_screenshot(&value, &out)?;
            if json {
                let mut shown = value;
                if let Some(object) = shown.as_object_mut() {
                    object.remove("data");
                    object.insert("path".into(), json!(out.display().to_string()));
                }
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                println!("saved {}", out.display());
            }
            Ok(())
        }
        BrowserCommand::Open { .. } | BrowserCommand::Audit(_) => {
            unreachable!("one-shot commands are not session commands")
        }
    }
}

/// Writes the image the server sent inline (base64) to `out`.
fn save_screenshot(value: &Value, out: &Path) -> anyhow::Result<()> {
    let data = value["data"]
        .as_str()
        .context("the server's screenshot answer holds no image")?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .context("the server's screenshot is not valid base64")?;
    std::fs::write(out, bytes).with_context(|| format!("cannot write {}", out.display()))
}

pub(crate) async fn run_debug(config: Config, a: DebugArgs) -> anyhow::Result<()> {
    let remote = Remote::new(a.server.as_deref(), a.token.as_deref(), &config)?;
    let r = &remote;
    let json = a.json;
    match a.command {
        DebugCommand::Enable => call(r, "debugger/enable", json!({}), json).await,
        DebugCommand::Break {
            location,
            condition,
        } => {
            let (url, line, column) = parse_location(&location)?;
            let body = args(&[
                ("action", json!("set")),
                ("url", json!(url)),
                ("lineNumber", json!(line)),
                ("columnNumber", json!(column)),
                ("condition", json!(condition)),
            ]);
            call(r, "debugger/breakpoint", body, json).await
        }
        DebugCommand::Breakpoints => {
            call(r, "debugger/breakpoint", json!({ "action": "list" }), json).await
        }
        DebugCommand::Remove { id } => {
            let body = json!({ "action": "remove", "breakpointId": id });
            call(r, "debugger/breakpoint", body, json).await
        }
        DebugCommand::Resume => {
            call(r, "debugger/execution", json!({ "action": "resume" }), json).await
        }
        DebugCommand::Pause => {
            call(r, "debugger/execution", json!({ "action": "pause" }), json).await
        }
        DebugCommand::Step { direction } => {
            call(r, "debugger/step", json!({ "direction": direction }), json).await
        }
        DebugCommand::Stack => call(r, "debugger/call_stack", json!({}), json).await,
        DebugCommand::Eval { expression, frame } => {
            let body = args(&[
                ("expression", json!(expression)),
                ("frameIndex", json!(frame)),
            ]);
            call(r, "debugger/evaluate_in_frame", body, json).await
        }
        DebugCommand::Exceptions { state } => {
            call(
                r,
                "debugger/pause_on_exceptions",
                json!({ "state": state }),
                json,
            )
            .await
        }
        DebugCommand::Wait { timeout_ms } => {
            let body = args(&[("timeoutMs", json!(timeout_ms))]);
            call(r, "debugger/wait_for_pause", body, json).await
        }
    }
}

/// `app.js:12` or `src/cart.ts:42:7` → (file, line, column).
fn parse_location(location: &str) -> anyhow::Result<(String, u32, Option<u32>)> {
    let usage = || {
        anyhow::Error::from(AppError::invalid(format!(
            "give the breakpoint as FILE:LINE or FILE:LINE:COLUMN (e.g. app.js:12), got \
             `{location}`"
        )))
    };
    let mut parts = location.rsplitn(3, ':');
    let last = parts.next().ok_or_else(usage)?;
    let middle = parts.next().ok_or_else(usage)?;
    match (middle.parse::<u32>(), last.parse::<u32>(), parts.next()) {
        // FILE:LINE:COLUMN
        (Ok(line), Ok(column), Some(file)) if !file.is_empty() => {
            Ok((file.to_string(), line, Some(column)))
        }
        // FILE:LINE (a file name may hold a colon, as in http://host:port/app.js:12)
        (_, Ok(line), _) => {
            let file = location
                .rsplit_once(':')
                .map(|(file, _)| file)
                .ok_or_else(usage)?;
            if file.is_empty() {
                return Err(usage());
            }
            Ok((file.to_string(), line, None))
        }
        _ => Err(usage()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakpoint_locations_parse_with_and_without_columns() {
        assert_eq!(
            parse_location("app.js:12").unwrap(),
            ("app.js".into(), 12, None)
        );
        assert_eq!(
            parse_location("src/cart.ts:42:7").unwrap(),
            ("src/cart.ts".into(), 42, Some(7))
        );
        assert_eq!(
            parse_location("http://localhost:5173/app.js:3").unwrap(),
            ("http://localhost:5173/app.js".into(), 3, None)
        );
        for bad in ["app.js", ":12", "app.js:x", ""] {
            assert!(parse_location(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn absent_and_false_arguments_are_left_out() {
        let body = args(&[
            ("a", json!(null)),
            ("b", json!(false)),
            ("c", json!(3)),
            ("d", json!("x")),
        ]);
        assert_eq!(body, json!({"c": 3, "d": "x"}));
    }
}
