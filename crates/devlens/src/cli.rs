//! The command-line grammar.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "devlens",
    version,
    about = "Browser, API, docs and knowledge tools for AI coding agents — over MCP, CLI and HTTP",
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Where devlens stores its data [default: the platform data dir, e.g. ~/.local/share/devlens]
    #[arg(long, global = true, env = "DEVLENS_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Configuration file [default: ./devlens.toml, then <data dir>/devlens.toml]
    #[arg(long, global = true, env = "DEVLENS_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// More log output (to stderr)
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

impl GlobalArgs {
    pub(crate) fn overrides(&self) -> devlens_core::ConfigOverrides {
        devlens_core::ConfigOverrides {
            data_dir: self.data_dir.clone(),
            config_file: self.config.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the MCP server: stdio by default, or Streamable HTTP + REST API with --http
    Serve(crate::serve::ServeArgs),
    /// Explore OpenAPI/Swagger specs: tags, endpoints, details, search
    #[command(subcommand)]
    Api(crate::api_cmd::ApiCommand),
    /// Manage projects (named specs) and the active project
    #[command(subcommand)]
    Project(crate::project_cmd::ProjectCommand),
    /// Install or locate the local embedding model (all-MiniLM-L6-v2)
    #[command(subcommand)]
    Model(crate::model_cmd::ModelCommand),
    /// The browser: session commands on a running `devlens serve --http` (launch, navigate,
    /// click, fill, snapshot, …), or one-shot checks of a page in a headless Chrome (--url)
    Browser(crate::browser_cmd::BrowserArgs),
    /// The JavaScript debugger of a running server's browser: breakpoints, stepping, the stack
    Debug(crate::session_cmd::DebugArgs),
    /// Library docs: ingest, list, resolve, query within a token budget, eval
    Docs(crate::docs_cmd::DocsArgs),
    /// Knowledge base: saved solutions, semantic search, cited answers
    Kb(crate::kb_cmd::KbArgs),
    /// The project's files as the workspace tools see them: read, list, search
    Workspace(crate::workspace_cmd::WorkspaceCmd),
    /// The devlens Chrome extension: the folder to load unpacked, the pairing token
    #[command(subcommand)]
    Extension(crate::extension_cmd::ExtensionCommand),
    /// The team server's database (PostgreSQL + pgvector): check it, and the scale run that
    /// compares it with the embedded store
    Store(crate::store_cmd::StoreArgs),
    /// Bearer tokens for a server others reach (required beyond loopback): create, list, revoke
    #[command(subcommand)]
    Token(crate::token_cmd::TokenCommand),
    /// Trust this folder's devlens.toml after reviewing it: until then it may not set
    /// executables, libraries, credentials or network settings
    Trust(crate::trust_cmd::TrustArgs),
}
