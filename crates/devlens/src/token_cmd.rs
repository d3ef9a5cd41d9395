//! `devlens token …`: the bearer tokens a server others reach requires. They live in the data
//! dir (hashed), so run these where the server runs, with its data dir; a running server sees a
//! new or revoked token at once.

use devlens_app::tokens::TokenStore;
use devlens_core::Config;

use crate::cli::TokenCommand;
use crate::output::report;

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
