//! `devlens api …`: the API tools on the command line. Same core functions as the MCP tools;
//! compact text by default, the stable JSON shapes with `--json`.

use devlens_core::{Config, Report};
use devlens_openapi::{
    EndpointRef,
    eval::parse_golden,
    explorer::{ApiExplorer, SpecSelector},
    search::{SearchMode, SearchRequest},
};

use crate::cli::{ApiCommand, SpecArgs};
use crate::output::print;
use crate::progress::ProgressLine;

fn parse_mode(mode: Option<&str>) -> anyhow::Result<Option<SearchMode>> {
    mode.map(SearchMode::parse)
        .transpose()
        .map_err(anyhow::Error::msg)
}

fn selector(target: &SpecArgs) -> SpecSelector {
    SpecSelector {
        project: target.project.clone(),
        spec: target.spec.clone(),
    }
}

pub async fn run(mut config: Config, command: ApiCommand) -> anyhow::Result<()> {
    if let ApiCommand::Index {
        provider: Some(provider),
        ..
    } = &command
    {
        config.file.embedding.provider = Some(provider.clone());
    }
    let explorer = ApiExplorer::new(config);
    match command {
        ApiCommand::Tags { target, json } => {
            let list = explorer.tags(&selector(&target)).await?;
            print(json, &list, || list.to_text())
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
            print(json, &page, || page.to_text())
        }
        ApiCommand::Show {
            target,
            operation_id,
            method,
            path,
            json,
        } => {
            let endpoint = match (operation_id, method, path) {
                (Some(id), _, _) => EndpointRef::OperationId(id),
                (None, Some(method), Some(path)) => EndpointRef::method_path(method, path),
                _ => anyhow::bail!("give --operation-id, or both --method and --path"),
            };
            let details = explorer.details(&selector(&target), &endpoint).await?;
            print(json, &details, || details.to_text())
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
            let mode = parse_mode(mode.as_deref())?;
            let mut request = SearchRequest::new(query, tag, method, Some(limit), mode)
                .map_err(anyhow::Error::msg)?;
            request.details = details;
            let response = explorer.search(&selector(&target), &request).await?;
            print(json, &response, || response.to_text())
        }
        ApiCommand::Index {
            target,
            force,
            json,
            ..
        } => {
            let progress = ProgressLine::new("embedding endpoints");
            let report = explorer
                .build_index(&selector(&target), force, &|done, total| {
                    progress.update(done, total)
                })
                .await;
            progress.finish();
            let report = report?;
            print(json, &report, || report.to_text())
        }
        ApiCommand::Status { target, json } => {
            let status = explorer.index_status(&selector(&target)).await?;
            print(json, &status, || status.to_text())
        }
        ApiCommand::Eval {
            target,
            golden,
            mode,
            json,
        } => {
            let mode = parse_mode(mode.as_deref())?;
            let text = std::fs::read_to_string(&golden).map_err(|e| {
                anyhow::anyhow!("cannot read the golden file {}: {e}", golden.display())
            })?;
            let questions =
                parse_golden(&text).map_err(|e| anyhow::anyhow!("{}: {e}", golden.display()))?;
            let report = explorer.eval(&selector(&target), &questions, mode).await?;
            print(json, &report, || report.to_text())
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
            let report =
                crate::bench::run(&spec, runs, queries, semantic.then_some(config), &dump).await?;
            print(json, &report, || report.to_text())
        }
    }
}
