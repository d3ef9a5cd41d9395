//! `devlens docs …`: library documentation on the command line — ingest, list, resolve, query,
//! eval. Compact text by default; with `--json` the stable JSON shapes (those of the
//! `query_docs` tool's output).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde::Serialize;

use devlens_app::{
    App,
    docs::{
        self, DocsSource, Ingest, IngestRequest, IngestStage, QueryDocsInput, RemoveDocs,
        ResolveLibrary, SourceInput, docs_source,
    },
};
use devlens_core::Config;
use devlens_docs::{Docs, parse_golden};

use crate::output::{print, report};
use crate::progress::ProgressLine;

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
        /// With --url: also fetch what the site's robots.txt disallows (a site of your own)
        #[arg(long, conflicts_with = "path")]
        ignore_robots: bool,
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
            let report = bench(&config, &path, golden.as_deref(), max_results).await?;
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
            version,
            name,
            description,
            json,
        } => {
            let source = docs_source(SourceInput {
                path,
                url,
                max_pages,
                max_depth,
                ignore_robots,
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
            let reading = ProgressLine::new(if matches!(ingest.source(), DocsSource::Path(_)) {
                "reading pages"
            } else {
                "fetching pages"
            });
            let embedding = ProgressLine::new("embedding chunks");
            let ingested = ingest
                .run(&|stage, done, total| match stage {
                    IngestStage::Reading => reading.update(done, total),
                    IngestStage::Embedding => embedding.update(done, total),
                })
                .await;
            reading.finish();
            embedding.finish();
            report(json, &ingested?)
        }
        DocsCommand::List { json } => report(json, &docs::libraries(&app)?),
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

/// `docs bench --json`.
#[derive(Debug, Serialize)]
struct BenchReport {
    path: String,
    pages: usize,
    chunks: usize,
    /// Sections (page and heading path): what gets one embedding each.
    sections: usize,
    /// The embedding model, or none (keyword search only).
    model: Option<String>,
    /// Distinct section texts run through the model.
    embedded_texts: usize,
    ingest_seconds: f64,
    pages_per_sec: f64,
    sections_per_sec: f64,
    /// The same folder again: unchanged sections reuse their stored vectors.
    reingest_seconds: f64,
    reused_vectors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    queries: Option<BenchQueries>,
}

#[derive(Debug, Serialize)]
struct BenchQueries {
    n: usize,
    k: usize,
    hit_at_k: f64,
    mrr: f64,
    uncached_p50_ms: f64,
    uncached_p95_ms: f64,
    cached_p50_ms: f64,
    cached_p95_ms: f64,
}

impl BenchReport {
    fn to_text(&self) -> String {
        let mut out = format!(
            "{}: {} pages, {} chunks, {} sections ({})\n\
             ingest    {:.1} s  ({:.1} pages/s, {:.0} sections/s, {} texts embedded)\n\
             re-ingest {:.1} s  (unchanged: {} vectors reused)",
            self.path,
            self.pages,
            self.chunks,
            self.sections,
            self.model
                .as_deref()
                .map_or("keyword search only".to_string(), |m| format!(
                    "embedded with {m}"
                )),
            self.ingest_seconds,
            self.pages_per_sec,
            self.sections_per_sec,
            self.embedded_texts,
            self.reingest_seconds,
            self.reused_vectors,
        );
        if let Some(q) = &self.queries {
            out.push_str(&format!(
                "\nqueries   {} questions, hit@{} {:.3}, MRR {:.3}\n\
                 uncached  p50 {:.1} ms, p95 {:.1} ms\n\
                 cached    p50 {:.3} ms, p95 {:.3} ms",
                q.n,
                q.k,
                q.hit_at_k,
                q.mrr,
                q.uncached_p50_ms,
                q.uncached_p95_ms,
                q.cached_p50_ms,
                q.cached_p95_ms
            ));
        }
        out
    }
}

/// A scratch folder removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn bench(
    config: &Config,
    path: &std::path::Path,
    golden: Option<&std::path::Path>,
    max_results: usize,
) -> anyhow::Result<BenchReport> {
    if !(1..=20).contains(&max_results) {
        anyhow::bail!("--max-results must be between 1 and 20, got {max_results}");
    }
    let questions = match golden {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                anyhow::anyhow!("cannot read the golden file {}: {e}", file.display())
            })?;
            Some(parse_golden(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?)
        }
        None => None,
    };
    let scratch = Scratch(std::env::temp_dir().join(format!(
        "devlens-docs-bench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    )));
    // The configured embedder (the user's model), over a scratch registry.
    let embedder = devlens_embed::embedder_from_settings(&config.file.embedding, &config.data_dir);
    if let Err(e) = &embedder {
        eprintln!("note: benchmarking keyword search only: {e}");
    }
    let docs = Docs::with_embedder(&scratch.0.join("docs.sqlite"), embedder.ok())?
        .with_passage_vectors(config.file.docs.embeds_passages());
    let request = IngestRequest {
        id: "bench".into(),
        source: DocsSource::Path(path.to_path_buf()),
        version: None,
        name: None,
        description: None,
    };
    let embedding = ProgressLine::new("embedding sections");
    let first = docs
        .ingest(&request, &|stage, done, total| {
            if stage == IngestStage::Embedding {
                embedding.update(done, total)
            }
        })
        .await;
    embedding.finish();
    let first = first?;
    let again = docs.ingest(&request, &|_, _, _| {}).await?;
    let queries = match questions {
        Some(questions) => {
            let eval = docs.eval("bench", &questions, max_results).await?;
            let (cached_p50_ms, cached_p95_ms) = eval.cached_ms.unwrap_or_default();
            Some(BenchQueries {
                n: eval.n,
                k: max_results,
                hit_at_k: eval.hit_at_k,
                mrr: eval.mrr,
                uncached_p50_ms: eval.p50_ms,
                uncached_p95_ms: eval.p95_ms,
                cached_p50_ms,
                cached_p95_ms,
            })
        }
        None => None,
    };
    let seconds = first.seconds.max(1e-9);
    Ok(BenchReport {
        path: path.display().to_string(),
        pages: first.pages,
        chunks: first.chunks,
        sections: first.sections,
        model: first.model.clone(),
        embedded_texts: first.embedded_texts,
        ingest_seconds: first.seconds,
        pages_per_sec: first.pages as f64 / seconds,
        sections_per_sec: first.sections as f64 / seconds,
        reingest_seconds: again.seconds,
        reused_vectors: again.reused_vectors,
        queries,
    })
}
