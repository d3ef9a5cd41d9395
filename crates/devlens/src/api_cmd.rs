//! `devlens api …`: the API tools on the command line. The same application calls and argument
//! types as the MCP tools and the REST API (the spec named as the user typed it, unconfined);
//! compact text by default, the stable JSON shapes with `--json`.

use anyhow::Context as _;
use devlens_app::{
    App,
    api::{
        self, BuildIndexArgs, ListEndpoints, SearchArgs, SpecSelector, endpoint_ref, search_mode,
    },
};
use serde_json::{Map, Value, json};

use devlens_app::AppError;
use devlens_app::contract::{self, CallEndpoint, CheckTraffic, TrafficReport, TrafficSource};
use devlens_app::projects::ReindexEvent;
use devlens_core::Config;
use devlens_openapi::eval::parse_golden;

use crate::cli::{ApiCommand, SpecArgs};
use crate::output::report;
use crate::progress::ProgressLine;
use crate::remote::Remote;

fn selector(target: &SpecArgs) -> SpecSelector {
    target.to_app().selector()
}

pub(crate) async fn run(mut config: Config, command: ApiCommand) -> anyhow::Result<()> {
    if let ApiCommand::Index {
        provider: Some(provider),
        ..
    } = &command
    {
        config.file.embedding.provider = Some(provider.clone());
    }
    let app = App::new(config);
    match command {
        ApiCommand::Tags { target, json } => {
            let list = api::tags(&app, &selector(&target)).await?;
            report(json, &list)
        }
        ApiCommand::Endpoints {
            target,
            tag,
            offset,
            limit,
            json,
        } => {
            let args = ListEndpoints {
                tag: Some(tag),
                offset: Some(offset),
                limit,
                target: target.to_app(),
            };
            let page = api::endpoints(&app, &args.target.selector(), &args).await?;
            report(json, &page)
        }
        ApiCommand::CheckTraffic {
            target,
            har,
            base_url,
            include_previous_pages,
            server,
            token,
            json,
        } => {
            let checked: TrafficReport = match har {
                Some(path) => {
                    let bytes = std::fs::read(&path).map_err(|e| {
                        AppError::invalid(format!(
                            "cannot read the HAR file {}: {e}. Check the path.",
                            path.display()
                        ))
                    })?;
                    let request = CheckTraffic {
                        selector: selector(&target),
                        base_url,
                        source: TrafficSource::HarBytes {
                            bytes,
                            name: path.display().to_string(),
                        },
                    };
                    contract::check_traffic(&app, request).await?
                }
                None => {
                    let remote = Remote::new(server.as_deref(), token.as_deref(), app.config())?;
                    let body = json!({
                        "project": target.project,
                        "spec": target.spec,
                        "baseUrl": base_url,
                        "includePreviousPages": include_previous_pages,
                    });
                    let value = remote.json("check-traffic", body).await?;
                    serde_json::from_value(value).context("reading the server's answer")?
                }
            };
            report(json, &checked)?;
            if checked.findings + checked.undocumented.len() > 0 {
                anyhow::bail!(
                    "the traffic differs from the spec ({} finding(s), {} undocumented endpoint(s))",
                    checked.findings,
                    checked.undocumented.len()
                );
            }
            Ok(())
        }
        ApiCommand::Call {
            target,
            operation_id,
            method,
            path,
            params,
            body,
            headers,
            base_url,
            execute,
            dry_run,
            json,
        } => {
            let endpoint = endpoint_ref(operation_id, method, path)?;
            let request = CallEndpoint {
                selector: selector(&target),
                endpoint: Some(endpoint),
                params: parse_params(&params)?,
                headers: parse_headers(&headers)?,
                body: body.as_deref().map(parse_body).transpose()?,
                content_type: None,
                base_url,
                execute: if execute {
                    Some(true)
                } else if dry_run {
                    Some(false)
                } else {
                    None
                },
                dry_run_only: false,
            };
            let outcome = contract::call_endpoint(&app, request).await?;
            report(json, &outcome)
        }
        ApiCommand::Sample {
            target,
            operation_id,
            method,
            path,
            json,
        } => {
            let endpoint = endpoint_ref(operation_id, method, path)?;
            let sample = contract::code_sample(&app, &selector(&target), &endpoint).await?;
            report(json, &sample)
        }
        ApiCommand::Show {
            target,
            operation_id,
            method,
            path,
            json,
        } => {
            let endpoint = endpoint_ref(operation_id, method, path)?;
            let details = api::details(&app, &selector(&target), &endpoint).await?;
            report(json, &details)
        }
        ApiCommand::Search {
            target,
            query,
            tag,
            method,
            limit,
            mode,
            details,
            json,
        } => {
            let args = SearchArgs {
                query,
                tag,
                method,
                limit: Some(limit),
                mode,
                details: Some(details),
                target: target.to_app(),
            };
            let request = args.request()?;
            let response = api::search(&app, &args.target.selector(), &request).await?;
            report(json, &response)
        }
        ApiCommand::Index {
            force,
            all: true,
            json,
            ..
        } => {
            let progress = ProgressLine::new("embedding endpoints");
            let on_event = |event: ReindexEvent| match event {
                ReindexEvent::Started { project, index, of } => {
                    progress.set_message(&format!("{project} ({index} of {of})"))
                }
                ReindexEvent::Progress { done, total, .. } => progress.update(done, total),
                ReindexEvent::Finished { .. } => {}
            };
            let outcome = devlens_app::projects::reindex_all(&app, force, &on_event).await;
            progress.finish();
            let outcome = outcome?;
            report(json, &outcome)?;
            if outcome.built < outcome.projects.len() {
                // Some failed: said above; the exit status says so too.
                std::process::exit(1);
            }
            Ok(())
        }
        ApiCommand::Index {
            target,
            force,
            json,
            ..
        } => {
            let args = BuildIndexArgs {
                force_rebuild: Some(force),
                target: target.to_app(),
            };
            let progress = ProgressLine::new("embedding endpoints");
            let built = api::build_index(&app, &args.target.selector(), &args, &|done, total| {
                progress.update(done, total)
            })
            .await;
            progress.finish();
            report(json, &built?)
        }
        ApiCommand::Status { target, json } => {
            let status = api::index_status(&app, &selector(&target)).await?;
            report(json, &status)
        }
        ApiCommand::Eval {
            target,
            golden,
            mode,
            json,
        } => {
            let mode = search_mode(mode.as_deref())?;
            let text = std::fs::read_to_string(&golden).map_err(|e| {
                anyhow::anyhow!("cannot read the golden file {}: {e}", golden.display())
            })?;
            let questions =
                parse_golden(&text).map_err(|e| anyhow::anyhow!("{}: {e}", golden.display()))?;
            // Only the CLI scores search quality: it asks the explorer itself.
            let scored = app.api().eval(&selector(&target), &questions, mode).await?;
            report(json, &scored)
        }
        ApiCommand::Bench {
            spec,
            runs,
            queries,
            semantic,
            texts_out,
            queries_out,
            json,
        } => {
            let config = app.config();
            let dump = crate::bench::Dump {
                texts: texts_out.as_deref(),
                queries: queries_out.as_deref(),
            };
            let measured =
                crate::bench::run(&spec, runs, queries, semantic.then_some(config), &dump).await?;
            crate::output::print(json, &measured, || measured.to_text())
        }
    }
}

/// `--param NAME=VALUE`s: a value that reads as a JSON array or object is one; anything else is
/// a string (the spec's type decides how it is read).
fn parse_params(params: &[String]) -> Result<Map<String, Value>, AppError> {
    let mut out = Map::new();
    for p in params {
        let (name, value) = p.split_once('=').ok_or_else(|| {
            AppError::invalid(format!(
                "--param `{p}` is not NAME=VALUE (e.g. --param productId=7)"
            ))
        })?;
        let value = value.trim();
        let parsed = if value.starts_with('[') || value.starts_with('{') {
            serde_json::from_str(value).map_err(|e| {
                AppError::invalid(format!("--param {name}: `{value}` is not valid JSON ({e})"))
            })?
        } else {
            Value::String(value.to_string())
        };
        out.insert(name.trim().to_string(), parsed);
    }
    Ok(out)
}

/// `--header 'NAME: VALUE'`s.
fn parse_headers(headers: &[String]) -> Result<Vec<(String, String)>, AppError> {
    headers
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| AppError::invalid(format!("--header `{h}` is not `NAME: VALUE`")))
        })
        .collect()
}

/// `--body`: JSON, or `@FILE` holding JSON.
fn parse_body(body: &str) -> Result<Value, AppError> {
    let text = match body.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| AppError::invalid(format!("cannot read the body file {path}: {e}")))?,
        None => body.to_string(),
    };
    serde_json::from_str(&text).map_err(|e| {
        AppError::invalid(format!(
            "--body is not valid JSON ({e}); pass JSON, or @FILE to read it from a file"
        ))
    })
}
