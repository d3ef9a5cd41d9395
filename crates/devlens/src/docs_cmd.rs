//! `devlens docs …`: library documentation on the command line — ingest, list, resolve, query,
//! eval. Compact text by default; with `--json` the shapes of the CLI contract (and of
//! seed 003's `query_docs` output).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde::Serialize;

use devlens_core::Config;
use devlens_docs::{Docs, DocsSource, IngestRequest, IngestStage, QueryDocsInput, parse_golden};

use crate::output::print;
use crate::progress::ProgressLine;

#[derive(Debug, Args)]
pub struct DocsArgs {
    #[command(subcommand)]
    pub command: DocsCommand,
}

#[derive(Debug, Subcommand)]
pub enum DocsCommand {
    /// Ingest a library's docs (Markdown, MDX, reStructuredText, HTML, text); re-adding a version
    /// replaces it
    // `--version` names the docs' version here, not devlens'.
    #[command(disable_version_flag = true)]
    Add {
        /// The library id: a slug (`react`) or `/org/project`
        id: String,
        /// A folder of docs (read recursively) or one file
        #[arg(
            long,
            value_name = "DIR",
            conflicts_with = "url",
            required_unless_present = "url"
        )]
        path: Option<PathBuf>,
        /// A docs site to crawl from this page: same origin, under the page's folder,
        /// breadth-first
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// With --url: pages to fetch at most [default: 200]
        #[arg(long, conflicts_with = "path")]
        max_pages: Option<usize>,
        /// With --url: links to follow from the start page at most [default: 5]
        #[arg(long, conflicts_with = "path")]
        max_depth: Option<usize>,
        /// The version label [default: latest]
        #[arg(long)]
        version: Option<String>,
        /// The display name [default: the last part of the id]
        #[arg(long)]
        name: Option<String>,
        /// A one-line description (shown by list and resolve)
        #[arg(long)]
        description: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// List the ingested libraries
    List {
        #[arg(long)]
        json: bool,
    },
    /// Find a library's id from its name or a package name (`@vue/runtime-core`, `node:fs`)
    Resolve {
        name: String,
        /// What you want to do with it (breaks ties between similar names)
        #[arg(long)]
        query: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Answer a question from a library's docs within a token budget
    #[command(disable_version_flag = true)]
    Query {
        /// The library id (see `devlens docs list` or `resolve`)
        id: String,
        question: String,
        /// A specific version [default: the newest ingested]
        #[arg(long)]
        version: Option<String>,
        /// Number of results, 1-20
        #[arg(long, default_value_t = 5)]
        max_results: usize,
        /// The context's budget in cl100k tokens, 1000-8000
        #[arg(long, default_value_t = 4000)]
        tokens: usize,
        /// Leave code snippets and examples out
        #[arg(long)]
        no_code: bool,
        #[arg(long)]
        json: bool,
    },
    /// Score retrieval on a golden set: hit@k, MRR, latency
    Eval {
        #[arg(long, value_name = "ID")]
        library: String,
        /// One question per line, a TAB, then `|`-separated substrings of the expected section
        #[arg(long, value_name = "FILE")]
        golden: PathBuf,
        /// k: results per question
        #[arg(long, default_value_t = 5)]
        max_results: usize,
        #[arg(long)]
        json: bool,
    },
    /// Remove a library, or one of its versions
    #[command(disable_version_flag = true)]
    Remove {
        id: String,
        #[arg(long)]
        version: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

/// `docs list --json`.
#[derive(Serialize)]
struct LibraryList {
    libraries: Vec<ListedLibrary>,
}

#[derive(Serialize)]
struct ListedLibrary {
    id: String,
    name: String,
    versions: Vec<String>,
    snippets: usize,
}

#[derive(Serialize)]
struct Removed {
    id: String,
    version: Option<String>,
    removed: bool,
}

pub async fn run(config: Config, args: DocsArgs) -> anyhow::Result<()> {
    let docs = Docs::open(&config)?;
    match args.command {
        DocsCommand::Add {
            id,
            path,
            url,
            max_pages,
            max_depth,
            version,
            name,
            description,
            json,
        } => {
            let source = match (path, url) {
                (Some(path), _) => DocsSource::Path(path),
                (None, Some(url)) => DocsSource::Crawl {
                    url,
                    limits: devlens_docs::crawl::CrawlLimits {
                        max_pages: max_pages.unwrap_or(devlens_docs::crawl::DEFAULT_MAX_PAGES),
                        max_depth: max_depth.unwrap_or(devlens_docs::crawl::DEFAULT_MAX_DEPTH),
                    },
                },
                (None, None) => anyhow::bail!("give --path DIR or --url URL"),
            };
            let request = IngestRequest {
                id,
                source,
                version,
                name,
                description,
            };
            let reading = ProgressLine::new(if matches!(request.source, DocsSource::Path(_)) {
                "reading pages"
            } else {
                "fetching pages"
            });
            let embedding = ProgressLine::new("embedding chunks");
            let report = docs
                .ingest(&request, &|stage, done, total| match stage {
                    IngestStage::Reading => reading.update(done, total),
                    IngestStage::Embedding => embedding.update(done, total),
                })
                .await;
            reading.finish();
            embedding.finish();
            let report = report?;
            print(json, &report, || report.to_text())
        }
        DocsCommand::List { json } => {
            let libraries = docs.list()?;
            let list = LibraryList {
                libraries: libraries
                    .into_iter()
                    .map(|l| ListedLibrary {
                        id: l.id,
                        name: l.name,
                        versions: l.versions,
                        snippets: l.snippets,
                    })
                    .collect(),
            };
            print(json, &list, || {
                if list.libraries.is_empty() {
                    return "no libraries yet: add one with `devlens docs add ID --path DIR`"
                        .to_string();
                }
                list.libraries
                    .iter()
                    .map(|l| {
                        format!(
                            "{}  {}  [{}]  {} snippets",
                            l.id,
                            l.name,
                            l.versions.join(", "),
                            l.snippets
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        }
        DocsCommand::Resolve { name, query, json } => {
            let resolved = devlens_docs::Resolved {
                matches: docs.resolve(&name, query.as_deref())?,
            };
            print(json, &resolved, || resolved.to_text(&name))
        }
        DocsCommand::Query {
            id,
            question,
            version,
            max_results,
            tokens,
            no_code,
            json,
        } => {
            let input = QueryDocsInput {
                library_id: id,
                query: question,
                version,
                max_results: Some(max_results),
                include_code: Some(!no_code),
                context_limit: Some(tokens),
            };
            let output = docs.query(&input).await?;
            print(json, &output, || output.to_text())
        }
        DocsCommand::Eval {
            library,
            golden,
            max_results,
            json,
        } => {
            if !(1..=20).contains(&max_results) {
                anyhow::bail!("--max-results must be between 1 and 20, got {max_results}");
            }
            let text = std::fs::read_to_string(&golden).map_err(|e| {
                anyhow::anyhow!("cannot read the golden file {}: {e}", golden.display())
            })?;
            let questions =
                parse_golden(&text).map_err(|e| anyhow::anyhow!("{}: {e}", golden.display()))?;
            let report = docs.eval(&library, &questions, max_results).await?;
            print(json, &report, || report.to_text())
        }
        DocsCommand::Remove { id, version, json } => {
            let removed = docs.registry().remove(&id, version.as_deref())?;
            if !removed {
                anyhow::bail!(
                    "nothing to remove: library `{id}`{} is not stored (see `devlens docs list`)",
                    version
                        .as_deref()
                        .map(|v| format!(" version `{v}`"))
                        .unwrap_or_default()
                );
            }
            let out = Removed {
                id,
                version,
                removed,
            };
            print(json, &out, || match &out.version {
                Some(v) => format!("removed {} {v}", out.id),
                None => format!("removed {}", out.id),
            })
        }
    }
}
