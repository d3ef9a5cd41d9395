//! `devlens kb …`: the knowledge base on the command line — save, list, show, edit, search, ask,
//! remove, export, import, reembed, status, eval, bench. Compact text by default; with `--json`
//! the stable JSON shapes the REST API answers with too.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand};

use devlens_app::{
    App,
    kb::{self, AskKnowledgeBase, SaveSolution, SearchSolutions, search_mode},
};
use devlens_core::Config;
use devlens_kb::SearchOptions;

use crate::output::{line, report};
use devlens_core::progress::ProgressLine;

#[derive(Debug, Args)]
pub(crate) struct KbArgs {
    #[command(subcommand)]
    pub command: KbCommand,
}

/// Where a solution's text comes from.
#[derive(Debug, Args)]
pub(crate) struct TextSource {
    /// The solution's text
    #[arg(long, conflicts_with = "file")]
    pub text: Option<String>,
    /// Read the text from a file (`-` for stdin)
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

impl TextSource {
    fn read(&self) -> anyhow::Result<Option<String>> {
        match (&self.text, &self.file) {
            (Some(text), _) => Ok(Some(text.clone())),
            (None, Some(path)) => read_input(path).map(Some),
            (None, None) => Ok(None),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum KbCommand {
    /// Save a solution (embedded now, so semantic search finds it at once)
    Add {
        #[arg(long)]
        title: String,
        /// Where it came from (an answer, an issue, a wiki page)
        #[arg(long)]
        url: Option<String>,
        #[command(flatten)]
        source: TextSource,
        /// Comma-separated tags, e.g. css,layout
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// A one-line summary
        #[arg(long)]
        summary: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// List the saved solutions, newest first
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one solution in full
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Change a solution's title, text, URL, tags or summary (re-embedded when needed)
    Edit {
        id: String,
        #[arg(long)]
        title: Option<String>,
        /// A new URL (`""` removes it)
        #[arg(long)]
        url: Option<String>,
        #[command(flatten)]
        source: TextSource,
        /// New comma-separated tags (`""` removes them)
        #[arg(long, value_delimiter = ',')]
        tags: Option<Vec<String>>,
        /// A new summary (`""` removes it)
        #[arg(long)]
        summary: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Find saved solutions by meaning (default), words, or both
    Search {
        query: String,
        /// semantic, keyword or hybrid [default: [kb] search_mode, else semantic]
        #[arg(long)]
        mode: Option<String>,
        /// Results [default: [kb] top_k, else 5]
        #[arg(long)]
        top_k: Option<usize>,
        /// Minimum cosine similarity for semantic matches [default: calibrated for the model]
        #[arg(long)]
        threshold: Option<f32>,
        #[arg(long)]
        json: bool,
    },
    /// The saved solutions for a question as a numbered, cited context; with --generate also an
    /// answer from the configured LLM
    Ask {
        question: String,
        #[arg(long)]
        top_k: Option<usize>,
        #[arg(long)]
        mode: Option<String>,
        #[arg(long)]
        threshold: Option<f32>,
        /// Generate an answer with the `[llm]` endpoint [default: [kb] auto_generate_answer]
        #[arg(long, conflicts_with = "no_generate")]
        generate: bool,
        /// Do not generate an answer even when auto_generate_answer is on
        #[arg(long)]
        no_generate: bool,
        /// The context's budget in cl100k tokens, 200-32000 [default: 3000]
        #[arg(long)]
        tokens: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Delete a solution
    Rm {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Write every solution as JSON (to stdout, or --out FILE)
    Export {
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Import an export file: all of it, or nothing when anything in it is wrong
    Import {
        /// The file (`-` for stdin)
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Embed every solution that lacks a current embedding (after an import or a model change);
    /// safe to interrupt and run again
    Reembed {
        #[arg(long)]
        json: bool,
    },
    /// Counts, the embedding model, the effective settings
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Score search on a golden set: hit@k, MRR, unanswerable questions left empty, latency
    Eval {
        /// One question per line, a TAB, then comma-separated solution ids (or `-` for none)
        #[arg(long, value_name = "FILE")]
        golden: PathBuf,
        #[arg(long)]
        mode: Option<String>,
        #[arg(long, default_value_t = 5)]
        top_k: usize,
        #[arg(long)]
        threshold: Option<f32>,
        /// Also try thresholds 0.10-0.70 (the calibration table)
        #[arg(long)]
        sweep: bool,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark saves and searches in a temporary knowledge base (needs the embedding model)
    Bench(devlens_bench::kb::KbBenchArgs),
}

fn read_input(path: &Path) -> anyhow::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {}: check that it exists and is a UTF-8 text file",
            path.display()
        )
    })
}

pub(crate) async fn run(config: Config, args: KbArgs) -> anyhow::Result<()> {
    match args.command {
        // The benchmark works in a temporary knowledge base, never the user's.
        KbCommand::Bench(bench) => {
            let report = devlens_bench::kb::run(config, &bench).await?;
            crate::output::print(bench.json, &report, || report.to_text())
        }
        command => run_on_store(config, command).await,
    }
}

async fn run_on_store(config: Config, command: KbCommand) -> anyhow::Result<()> {
    let app = App::new(config);
    // Opened first: a knowledge base that cannot open is said before any input is read.
    let store = app.kb()?;
    match command {
        KbCommand::Add {
            title,
            url,
            source,
            tags,
            summary,
            json,
        } => {
            let Some(text) = source.read()? else {
                anyhow::bail!(
                    "give the solution's text with --text TEXT or --file F (`-` for stdin)"
                );
            };
            let save = SaveSolution {
                id: None,
                title: Some(title),
                text: Some(text),
                url,
                summary,
                tags: Some(tags),
            };
            report(json, &kb::save(&app, save).await?)
        }
        KbCommand::List { json } => report(json, &kb::list(&app)?),
        KbCommand::Show { id, json } => report(json, &kb::get(&app, &id)?),
        KbCommand::Edit {
            id,
            title,
            url,
            source,
            tags,
            summary,
            json,
        } => {
            let save = SaveSolution {
                id: Some(id),
                title,
                text: source.read()?,
                url,
                summary,
                tags,
            };
            report(json, &kb::save(&app, save).await?)
        }
        KbCommand::Search {
            query,
            mode,
            top_k,
            threshold,
            json,
        } => {
            let args = SearchSolutions {
                query,
                mode: search_mode(mode.as_deref())?,
                top_k,
                similarity_threshold: threshold,
            };
            report(json, &kb::search(&app, &args).await?)
        }
        KbCommand::Ask {
            question,
            top_k,
            mode,
            threshold,
            generate,
            no_generate,
            tokens,
            json,
        } => {
            let args = AskKnowledgeBase {
                query: question,
                top_k,
                mode: search_mode(mode.as_deref())?,
                similarity_threshold: threshold,
                generate_answer: if generate {
                    Some(true)
                } else if no_generate {
                    Some(false)
                } else {
                    None
                },
                context_limit: tokens,
            };
            report(json, &kb::ask(&app, args).await?)
        }
        KbCommand::Rm { id, json } => report(json, &kb::delete(&app, &id)?),
        KbCommand::Export { out } => {
            let json = kb::export_json(&app)?;
            match out {
                None => line(json.trim_end()),
                Some(path) => {
                    devlens_core::paths::write_atomic(&path, json.as_bytes())?;
                    eprintln!("exported to {}", path.display());
                    Ok(())
                }
            }
        }
        KbCommand::Import { file, json } => {
            let text = read_input(&file)?;
            let name = if file.as_os_str() == "-" {
                "stdin".to_string()
            } else {
                file.display().to_string()
            };
            report(json, &kb::import_json(&app, &text, &name)?)
        }
        KbCommand::Reembed { json } => {
            let bar = ProgressLine::new("embedding solutions");
            let done = kb::reembed(&app, &|done, total| bar.update(done, total)).await;
            bar.finish();
            report(json, &done?)
        }
        KbCommand::Status { json } => report(json, &kb::status(&app).await?),
        KbCommand::Eval {
            golden,
            mode,
            top_k,
            threshold,
            sweep,
            json,
        } => {
            let text = std::fs::read_to_string(&golden).map_err(|e| {
                anyhow::anyhow!("cannot read the golden file {}: {e}", golden.display())
            })?;
            let questions = devlens_kb::eval::parse_golden(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", golden.display()))?;
            let options = SearchOptions {
                mode: search_mode(mode.as_deref())?,
                top_k: Some(top_k),
                similarity_threshold: threshold,
            };
            // Only the CLI scores search quality: it asks the knowledge base itself.
            report(json, &store.eval(&questions, &options, sweep).await?)
        }
        // Answered by `run`, in a temporary knowledge base.
        KbCommand::Bench(_) => Ok(()),
    }
}
