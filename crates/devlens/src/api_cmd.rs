//! `devlens api …`: the API tools on the command line. The same application calls and argument
//! types as the MCP tools and the REST API (the spec named as the user typed it, unconfined);
//! compact text by default, the stable JSON shapes with `--json`.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};
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
use devlens_core::{Config, RerankChoice};
use devlens_openapi::eval::parse_golden;

use crate::output::report;
use crate::remote::Remote;
use devlens_core::progress::ProgressLine;

/// Which spec a command is about: the flags of [`devlens_app::api::SpecArgs`].
#[derive(Debug, Args, Clone)]
pub(crate) struct SpecArgs {
    /// A spec file or http(s) URL (JSON or YAML; OpenAPI 3.x or Swagger 2.0)
    #[arg(long, value_name = "PATH_OR_URL", conflicts_with = "project")]
    pub spec: Option<String>,
    /// A configured project [default: the active project]
    #[arg(long, value_name = "NAME", env = "DEVLENS_PROJECT")]
    pub project: Option<String>,
}

impl SpecArgs {
    /// The application's spec arguments, as the tools and the REST API take them.
    pub(crate) fn to_app(&self) -> devlens_app::api::SpecArgs {
        devlens_app::api::SpecArgs {
            project_name: self.project.clone(),
            spec: self.spec.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum ApiCommand {
    /// List tags with their endpoint counts
    Tags {
        #[command(flatten)]
        target: SpecArgs,
        #[arg(long)]
        json: bool,
    },
    /// List the endpoints of a tag
    Endpoints {
        #[command(flatten)]
        target: SpecArgs,
        #[arg(long)]
        tag: String,
        /// Skip this many endpoints
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Show at most this many endpoints (at most 200 a page; --offset pages on) [default: 200]
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Show one endpoint: parameters, request body, responses
    Show {
        #[command(flatten)]
        target: SpecArgs,
        #[arg(long, conflicts_with_all = ["method", "path"], required_unless_present = "method")]
        operation_id: Option<String>,
        #[arg(long, requires = "path")]
        method: Option<String>,
        #[arg(long, requires = "method")]
        path: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Find endpoints for a question, or list a tag's endpoints
    Search {
        #[command(flatten)]
        target: SpecArgs,
        /// A natural-language question
        #[arg(long, conflicts_with = "tag", required_unless_present = "tag")]
        query: Option<String>,
        /// List this tag's endpoints instead
        #[arg(long)]
        tag: Option<String>,
        /// Keep only GET, POST, PUT, PATCH or DELETE
        #[arg(long)]
        method: Option<String>,
        /// Number of results (1-50)
        #[arg(long, default_value_t = 10)]
        limit: i64,
        /// hybrid (default), semantic or keyword
        #[arg(long)]
        mode: Option<String>,
        /// Include each hit's full endpoint details
        #[arg(long)]
        details: bool,
        #[arg(long)]
        json: bool,
    },
    /// Build (or rebuild) the semantic search index of a spec; unchanged endpoints reuse their
    /// vectors
    Index {
        #[command(flatten)]
        target: SpecArgs,
        /// Embedding provider for this build: local, openai, gemini, ollama or auto
        /// [default: EMBEDDING_PROVIDER, then `[embedding] provider`, then local]
        #[arg(long)]
        provider: Option<String>,
        /// Embed every endpoint again instead of reusing the vectors of unchanged ones
        #[arg(long)]
        force: bool,
        /// Re-index every project, one after the other (a failure is reported, the rest go on)
        #[arg(long, conflicts_with_all = ["spec", "project"])]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show whether a spec has a semantic index, what built it, and whether it is stale
    Status {
        #[command(flatten)]
        target: SpecArgs,
        #[arg(long)]
        json: bool,
    },
    /// Score search quality on a golden set of questions (top-1/3/5, MRR, latency)
    Eval {
        #[command(flatten)]
        target: SpecArgs,
        /// Golden file: one question per line, a TAB, then comma-separated operationIds
        #[arg(long, value_name = "FILE")]
        golden: PathBuf,
        /// hybrid (default), semantic or keyword
        #[arg(long)]
        mode: Option<String>,
        /// The second stage, instead of `[search] rerank`: cross-encoder, llm (the `[llm]`
        /// endpoint) or none (sampling needs an MCP client: here it falls back)
        #[arg(long, value_name = "STAGE")]
        rerank: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Check API traffic against the spec: a HAR file, or (without --har) the live traffic of
    /// the running server's browser tab. Exits 1 when something differs from the spec
    CheckTraffic {
        #[command(flatten)]
        target: SpecArgs,
        /// A HAR file (DevTools → Network → Export HAR, Playwright, Firefox)
        #[arg(long, value_name = "FILE")]
        har: Option<PathBuf>,
        /// Where the API runs, e.g. http://127.0.0.1:8080/api [default: the project's
        /// base_url, else the spec's servers]
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Also the requests of pages the tab showed before (live traffic only)
        #[arg(long)]
        include_previous_pages: bool,
        /// The running server whose browser to read (live traffic only) [default:
        /// DEVLENS_SERVER, `[server] http`, 127.0.0.1:7878]
        #[arg(long, value_name = "HOST:PORT")]
        server: Option<String>,
        /// The bearer token for a server that requires one
        #[arg(
            long,
            env = "DEVLENS_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        token: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Call an endpoint: arguments checked against the spec first, the answer checked after.
    /// GET/HEAD/OPTIONS are sent; other methods print the request as curl unless --execute
    Call {
        #[command(flatten)]
        target: SpecArgs,
        /// The operationId (or give --method and --path)
        #[arg(conflicts_with_all = ["method", "path"], required_unless_present = "method")]
        operation_id: Option<String>,
        #[arg(long, requires = "path")]
        method: Option<String>,
        #[arg(long, requires = "method")]
        path: Option<String>,
        /// A parameter (path, query or header), repeatable: --param productId=7 --param
        /// tags='["a","b"]'
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// The request body: JSON, or @FILE
        #[arg(long, value_name = "JSON|@FILE")]
        body: Option<String>,
        /// An extra header, repeatable: --header 'X-Trace: 1'
        #[arg(long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// Overrides the project's base URL
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Send it, whatever the method
        #[arg(long, conflicts_with = "dry_run")]
        execute: bool,
        /// Only show it (curl), whatever the method
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// A TypeScript fetch function (types from the spec's schemas) and a curl line for an
    /// endpoint
    Sample {
        #[command(flatten)]
        target: SpecArgs,
        /// The operationId (or give --method and --path)
        #[arg(conflicts_with_all = ["method", "path"], required_unless_present = "method")]
        operation_id: Option<String>,
        #[arg(long, requires = "path")]
        method: Option<String>,
        #[arg(long, requires = "method")]
        path: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark loading, indexing and search of a spec
    Bench {
        /// The spec file to measure
        #[arg(long, value_name = "PATH")]
        spec: PathBuf,
        /// How many times to load and index (the median is reported)
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// How many search queries to time
        #[arg(long, default_value_t = 500)]
        queries: usize,
        /// Also measure the local embedding model: load, index build, hybrid queries
        #[arg(long)]
        semantic: bool,
        /// Write the endpoint strings the semantic index embeds to FILE (a JSON array)
        #[arg(long, value_name = "FILE")]
        texts_out: Option<PathBuf>,
        /// Write the questions the semantic queries embed to FILE (a JSON array)
        #[arg(long, value_name = "FILE")]
        queries_out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

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
    if let ApiCommand::Eval {
        rerank: Some(stage),
        ..
    } = &command
    {
        let choice = RerankChoice::parse(stage).map_err(|e| anyhow::anyhow!("--rerank: {e}"))?;
        config.file.search.rerank = Some(choice);
        if choice != RerankChoice::CrossEncoder {
            // The flag chooses the one second stage.
            config.file.embedding.reranker_dir = None;
        }
        config
            .file
            .check_second_stage(&|name| {
                std::env::var(name).ok().filter(|_| {
                    name != "DEVLENS_RERANKER_DIR" || choice == RerankChoice::CrossEncoder
                })
            })
            .map_err(|e| anyhow::anyhow!("--rerank {stage}: {e}"))?;
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
            ..
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
            let dump = devlens_bench::api::Dump {
                texts: texts_out.as_deref(),
                queries: queries_out.as_deref(),
            };
            let measured =
                devlens_bench::api::run(&spec, runs, queries, semantic.then_some(config), &dump)
                    .await?;
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
