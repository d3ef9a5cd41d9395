//! `devlens docs …`: library documentation on the command line — ingest, list, resolve, query,
//! eval. Compact text by default; with `--json` the stable JSON shapes (those of the
//! `query_docs` tool's output).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, Subcommand};

use devlens_app::{
    App,
    docs::{
        self, DocsSource, Ingest, IngestRequest, IngestStage, QueryDocsInput, RemoveDocs,
        ResolveLibrary, SourceInput, docs_source,
    },
};
use devlens_core::Config;
use devlens_docs::parse_golden;

use crate::output::{print, report};
use devlens_core::progress::ProgressLine;

#[derive(Debug, Args)]
pub(crate) struct DocsArgs {
    #[command(subcommand)]
    pub command: DocsCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum DocsCommand {
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
            conflicts_with_all = ["url", "git"],
            required_unless_present_any = ["url", "git"]
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
        /// With --url: also fetch what the site's robots.txt disallows (a site of your own)
        #[arg(long, conflicts_with = "path")]
        ignore_robots: bool,
        /// A git repository to clone one commit deep (https, http or file URL); its docs are
        /// read like a folder's
        #[arg(long, value_name = "URL", conflicts_with = "url")]
        git: Option<String>,
        /// With --git: the branch or tag [default: the default branch]; it is the version
        #[arg(long = "ref", value_name = "REF", requires = "git")]
        git_ref: Option<String>,
        /// With --git: the docs folder inside the repository [default: all of it]
        #[arg(long, value_name = "DIR", requires = "git")]
        dir: Option<String>,
        /// The version label [default: latest]
        #[arg(long)]
        version: Option<String>,
        /// The display name [default: the last part of the id]
        #[arg(long)]
        name: Option<String>,
        /// A one-line description (shown by list and resolve)
        #[arg(long)]
        description: Option<String>,
        /// Return once the version answers queries (its section vectors stored), leaving the
        /// chunks' own vectors — answers in later paragraphs — to `devlens docs refine` or the
        /// next `devlens serve`
        #[arg(long)]
        searchable_only: bool,
        #[arg(long)]
        json: bool,
    },
    /// Add the chunk vectors an ingest left unfinished (a killed `docs add`, `--searchable-only`),
    /// for every library or one; a no-op when none are missing
    Refine {
        /// Only this library's versions
        id: Option<String>,
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
    /// Benchmark: ingest a docs folder into a scratch registry (your libraries are not touched),
    /// ingest it again unchanged, and time the golden questions uncached and cached
    Bench {
        /// A folder of docs (100 pages or more gives steady figures)
        #[arg(long, value_name = "DIR")]
        path: PathBuf,
        /// Questions to time (and score), in `docs eval`'s golden format
        #[arg(long, value_name = "FILE")]
        golden: Option<PathBuf>,
        /// k: results per question
        #[arg(long, default_value_t = 5)]
        max_results: usize,
        #[arg(long)]
        json: bool,
    },
    /// List the project's direct dependencies (package.json with its lock file) with their
    /// installed versions: libraries whose docs are read from the install on their first question
    Deps {
        /// Read every installed dependency not stored yet now, with progress
        #[arg(long)]
        ingest: bool,
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

pub(crate) async fn run(config: Config, args: DocsArgs) -> anyhow::Result<()> {
    // The bench works in a scratch registry: it opens none of the user's.
    let command = match args.command {
        DocsCommand::Bench {
            path,
            golden,
            max_results,
            json,
        } => {
            let report =
                devlens_bench::docs::run(&config, &path, golden.as_deref(), max_results).await?;
            return print(json, &report, || report.to_text());
        }
        other => other,
    };
    let app = App::new(config);
    // Opened first: docs that cannot open are said before any input is read.
    let store = app.docs()?;
    match command {
        DocsCommand::Add {
            id,
            path,
            url,
            max_pages,
            max_depth,
            ignore_robots,
            git,
            git_ref,
            dir,
            version,
            name,
            description,
            searchable_only,
            json,
        } => {
            let source = docs_source(SourceInput {
                path,
                url,
                max_pages,
                max_depth,
                ignore_robots,
                git,
                git_ref,
                git_dir: dir,
            })?;
            let ingest = Ingest::new(
                &app,
                IngestRequest {
                    id,
                    source,
                    version,
                    name,
                    description,
                },
            )?;
            let reading = ProgressLine::new(match ingest.source() {
                DocsSource::Url(_) | DocsSource::Crawl { .. } => "fetching pages",
                _ => "reading pages",
            });
            let embedding = ProgressLine::new("embedding chunks");
            let refining = ProgressLine::new("adding passage vectors");
            let searchable = AtomicBool::new(false);
            let progress = |stage, done, total| match stage {
                IngestStage::Reading => reading.update(done, total),
                IngestStage::Embedding => embedding.update(done, total),
                IngestStage::Refining => {
                    if !searchable.swap(true, Ordering::Relaxed) {
                        embedding.finish();
                        eprintln!(
                            "searchable now; adding passage vectors (stopping here keeps it \
                             searchable: `devlens docs refine` finishes them)"
                        );
                    }
                    refining.update(done, total)
                }
            };
            let ingested = if searchable_only {
                ingest.run_searchable(&progress).await
            } else {
                ingest.run(&progress).await
            };
            reading.finish();
            if searchable.load(Ordering::Relaxed) {
                refining.finish();
            } else {
                embedding.finish();
            }
            report(json, &ingested?)
        }
        DocsCommand::Refine { id, json } => {
            let line = ProgressLine::new("adding passage vectors");
            let refined = docs::refine(&app, id.as_deref(), &|_, done, total| {
                line.update(done, total)
            })
            .await;
            line.finish();
            report(json, &refined?)
        }
        DocsCommand::List { json } => report(json, &docs::libraries(&app)?),
        DocsCommand::Deps {
            ingest: false,
            json,
        } => report(json, &docs::dependencies(&app)?),
        DocsCommand::Deps { ingest: true, json } => {
            let line = ProgressLine::new("reading dependencies");
            let refining = ProgressLine::new("adding passage vectors");
            let searchable = AtomicBool::new(false);
            let done = docs::ingest_dependencies(
                &app,
                &|_name, done, total| line.update(done, total),
                &|_name, done, total| {
                    if !searchable.swap(true, Ordering::Relaxed) {
                        line.finish();
                    }
                    refining.update(done, total)
                },
            )
            .await;
            if searchable.load(Ordering::Relaxed) {
                refining.finish();
            } else {
                line.finish();
            }
            report(json, &done?)
        }
        DocsCommand::Resolve { name, query, json } => {
            let args = ResolveLibrary {
                library_name: Some(name),
                query,
            };
            report(json, &docs::resolve(&app, &args)?)
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
            report(json, &docs::query(&app, &input).await?)
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
            // Only the CLI scores retrieval: it asks the docs themselves.
            report(json, &store.eval(&library, &questions, max_results).await?)
        }
        // Answered above.
        DocsCommand::Bench { .. } => Ok(()),
        DocsCommand::Remove { id, version, json } => {
            let removed = docs::remove(&app, &RemoveDocs { id, version })?;
            report(json, &removed)
        }
    }
}
