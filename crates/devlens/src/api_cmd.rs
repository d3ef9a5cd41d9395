//! `devlens api …`: the API tools on the command line. Same core functions as the MCP tools;
//! compact text by default, the stable JSON shapes with `--json`.

use serde::Serialize;

use devlens_core::Config;
use devlens_openapi::{
    EndpointRef,
    explorer::{ApiExplorer, SpecSelector},
    search::{SearchMode, SearchRequest},
};

use crate::cli::{ApiCommand, SpecArgs};

fn selector(target: &SpecArgs) -> SpecSelector {
    SpecSelector {
        project: target.project.clone(),
        spec: target.spec.clone(),
    }
}

fn print<T: Serialize>(json: bool, value: &T, text: impl FnOnce() -> String) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(value)?);
    } else {
        println!("{}", text());
    }
    Ok(())
}

pub async fn run(config: Config, command: ApiCommand) -> anyhow::Result<()> {
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
            json,
        } => {
            let mode = mode
                .as_deref()
                .map(SearchMode::parse)
                .transpose()
                .map_err(anyhow::Error::msg)?;
            let request = SearchRequest::new(query, tag, method, Some(limit), mode)
                .map_err(anyhow::Error::msg)?;
            let response = explorer.search(&selector(&target), &request).await?;
            print(json, &response, || response.to_text())
        }
        ApiCommand::Bench {
            spec,
            runs,
            queries,
            json,
        } => {
            let report = crate::bench::run(&spec, runs, queries)?;
            print(json, &report, || report.to_text())
        }
    }
}
