//! `devlens workspace read|list|search`: the project's files as the workspace tools see them
//! (confined, `.gitignore` respected, bounded), for scripts and for checking what an agent sees.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use devlens_app::{
    App,
    workspace::{self as files, ListFiles, ReadFile, SearchFiles},
};
use devlens_core::Config;

use crate::output::report;

/// The project folder tools read and write.
#[derive(Debug, Args, Clone)]
pub(crate) struct WorkspaceArgs {
    /// The project folder: every file a tool reads or writes (and every screenshot or saved
    /// body) stays inside it or the data dir [default: the client's MCP root, else the current
    /// directory]
    #[arg(long, global = true, env = "DEVLENS_WORKSPACE", value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Tools may read the workspace but not change it
    #[arg(long, global = true, env = "DEVLENS_READ_ONLY_WORKSPACE", value_parser = clap::builder::FalseyValueParser::new())]
    pub read_only_workspace: bool,
}

#[derive(Debug, Args)]
pub(crate) struct WorkspaceCmd {
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    #[command(subcommand)]
    pub command: WorkspaceCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum WorkspaceCommand {
    /// Print a text file's lines, numbered
    Read {
        /// Relative to the workspace
        path: String,
        /// First line (1-based)
        #[arg(long)]
        start_line: Option<usize>,
        /// Lines [default: 2000]
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// List files (respecting .gitignore), optionally under a folder and matching globs
    List {
        /// A folder of the workspace
        path: Option<String>,
        /// Glob, e.g. '*.tsx' or 'src/**/*.css' (repeatable)
        #[arg(long = "glob", value_name = "GLOB")]
        globs: Vec<String>,
        #[arg(long)]
        offset: Option<usize>,
        /// Files [default: 200]
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Search file contents for a regular expression (or --literal text)
    Search {
        pattern: String,
        /// A folder of the workspace
        #[arg(long)]
        path: Option<String>,
        #[arg(long)]
        literal: bool,
        #[arg(short = 'i', long)]
        ignore_case: bool,
        /// Glob, e.g. '*.ts' (repeatable)
        #[arg(long = "glob", value_name = "GLOB")]
        globs: Vec<String>,
        /// Context lines around each match
        #[arg(short = 'C', long)]
        context: Option<usize>,
        /// Matching lines [default: 50]
        #[arg(long)]
        max_matches: Option<usize>,
        #[arg(long)]
        json: bool,
    },
}

pub(crate) async fn run(config: Config, args: WorkspaceCmd) -> anyhow::Result<()> {
    let choice =
        devlens_app::WorkspaceChoice::resolve(&config, args.workspace.workspace.as_deref(), true);
    let app = App::new(config).with_workspace_choice(&choice);
    let ws = app.workspace()?;
    match args.command {
        WorkspaceCommand::Read {
            path,
            start_line,
            limit,
            json,
        } => {
            let request = ReadFile {
                path,
                start_line,
                limit,
            };
            report(json, &files::read_file(ws, request).await?)
        }
        WorkspaceCommand::List {
            path,
            globs,
            offset,
            limit,
            json,
        } => {
            let request = ListFiles {
                path,
                globs,
                offset,
                limit,
            };
            report(json, &files::list_files(ws, request).await?)
        }
        WorkspaceCommand::Search {
            pattern,
            path,
            literal,
            ignore_case,
            globs,
            context,
            max_matches,
            json,
        } => {
            let request = SearchFiles {
                pattern,
                literal: Some(literal),
                case_insensitive: Some(ignore_case),
                globs,
                path,
                context,
                max_matches,
            };
            report(json, &files::search_files(ws, request).await?)
        }
    }
}
