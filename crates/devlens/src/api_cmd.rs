//! `devlens api …`: the API tools on the command line. Same core functions as the MCP tools;
//! compact text by default, the stable JSON shapes with `--json`.

use devlens_app::{
    App,
    api::{SearchInput, endpoint_ref, search_mode, search_request, spec_selector},
};
use devlens_core::Config;
use devlens_openapi::{eval::parse_golden, explorer::SpecSelector};

use crate::cli::{ApiCommand, SpecArgs};
use crate::output::report;
use crate::progress::ProgressLine;

fn selector(target: &SpecArgs) -> SpecSelector {
    spec_selector(target.project.clone(), target.spec.clone())
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
    let explorer = app.api();
    match command {
        ApiCommand::Tags { target, json } => {
            let list = explorer.tags(&selector(&target)).await?;
            report(json, &list)
        }
        ApiCommand::Endpoints {
            target,
            tag,
            offset,
            limit,
            json,
        } => {
            let page = explorer
                .endpoints(&selector(&target), &tag, offset, limit)
                .await?;
            report(json, &page)
        }
        ApiCommand::Show {
            target,
            operation_id,
            method,
            path,
            json,
        } => {
            let endpoint = endpoint_ref(operation_id, method, path)?;
            let details = explorer.details(&selector(&target), &endpoint).await?;
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
            let request = search_request(SearchInput {
                query,
                tag,
                method,
                limit: Some(limit),
                mode,
                details,
            })?;
            let response = explorer.search(&selector(&target), &request).await?;
            report(json, &response)
        }
        ApiCommand::Index {
            target,
            force,
            json,
            ..
        } => {
            let progress = ProgressLine::new("embedding endpoints");
            let built = explorer
                .build_index(&selector(&target), force, &|done, total| {
                    progress.update(done, total)
                })
                .await;
            progress.finish();
            report(json, &built?)
        }
        ApiCommand::Status { target, json } => {
            let status = explorer.index_status(&selector(&target)).await?;
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
            let scored = explorer.eval(&selector(&target), &questions, mode).await?;
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
            let config = explorer.config();
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
