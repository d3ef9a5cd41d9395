//! `devlens token …`: the bearer tokens a server others reach requires. They live in the data
//! dir (hashed), so run these where the server runs, with its data dir; a running server sees a
//! new or revoked token at once.

use clap::Subcommand;

use devlens_app::tokens::TokenStore;
use devlens_core::Config;

use crate::output::report;

#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a token and print it — the only time it is shown (the data dir keeps its hash)
    Create {
        /// What it may do: `read` (search, query, ask, list, read files and the browser's
        /// records) or `write` (also everything that changes state)
        #[arg(long, value_parser = parse_scope)]
        scope: devlens_app::tokens::Scope,
        /// A name to tell it apart in `devlens token list` (who or what holds it)
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The tokens: id, name, scope, when made and their last four characters (never a token)
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token by its id: calls carrying it are refused from now on, by running servers
    /// too
    Revoke {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

fn parse_scope(text: &str) -> Result<devlens_app::tokens::Scope, String> {
    text.parse()
        .map_err(|e: devlens_app::AppError| e.to_string())
}

pub(crate) fn run(config: &Config, command: TokenCommand) -> anyhow::Result<()> {
    let tokens = TokenStore::new(&config.data_dir);
    match command {
        TokenCommand::Create { scope, name, json } => {
            report(json, &tokens.create(scope, name.as_deref())?)
        }
        TokenCommand::List { json } => report(json, &tokens.list()?),
        TokenCommand::Revoke { id, json } => report(json, &tokens.revoke(&id)?),
    }
}
