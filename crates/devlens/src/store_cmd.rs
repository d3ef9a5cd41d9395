//! `devlens store …`: the team server's database — check it (connect, migrate, count through
//! the stores), and the scale run that measures the embedded store and PostgreSQL side by side
//! (devlens-bench's `store`).

use clap::{Args, Subcommand};
use serde::Serialize;

use devlens_core::Config;
use devlens_search::postgres::ServerDatabase;

use crate::output::print;

#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Connect to the team server database ([store] url or DEVLENS_DATABASE_URL), bring its
    /// schema up to date and say what it holds
    Check {
        #[arg(long)]
        json: bool,
    },
    /// Scale run: index a folder of specs, ingest docs folders and generate a knowledge base in
    /// the embedded store and in PostgreSQL, and compare build time, query latency, memory and
    /// size
    Bench(devlens_bench::store::ScaleArgs),
}

pub(crate) async fn run(config: Config, args: StoreArgs) -> anyhow::Result<()> {
    match args.command {
        StoreCommand::Check { json } => check(&config, json),
        StoreCommand::Bench(scale) => match scale.side {
            Some(side) => {
                let report = devlens_bench::store::run_side(side, &scale).await?;
                print(true, &report, String::new)
            }
            None => {
                let sides = devlens_bench::store::run_both(&config, &scale).await?;
                print(scale.json, &sides, || devlens_bench::store::table(&sides))
            }
        },
    }
}

/// What `devlens store check` reports.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StoreCheck {
    store: String,
    location: String,
    api_indexes: i64,
    docs_libraries: i64,
    docs_chunks: i64,
    solutions: i64,
    size_mib: f64,
}

fn check(config: &Config, json: bool) -> anyhow::Result<()> {
    let Some(url) = config.database_url() else {
        anyhow::bail!(
            "no team server database is configured: set [store] url in devlens.toml or \
             DEVLENS_DATABASE_URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE). Without one \
             devlens keeps everything in its data dir ({})",
            config.data_dir.root().display()
        );
    };
    let db = ServerDatabase::open(&url);
    db.check().map_err(anyhow::Error::msg)?;
    let counts = devlens_app::store::counts(&db)?;
    let report = StoreCheck {
        store: "postgres".into(),
        location: db.location().to_string(),
        api_indexes: counts.api_indexes,
        docs_libraries: counts.docs_libraries,
        docs_chunks: counts.docs_chunks,
        solutions: counts.solutions,
        size_mib: counts.size_mib,
    };
    print(json, &report, || {
        format!(
            "PostgreSQL at {}: schema up to date\n{} API indexes, {} docs libraries ({} chunks), \
             {} solutions; {:.1} MiB",
            report.location,
            report.api_indexes,
            report.docs_libraries,
            report.docs_chunks,
            report.solutions,
            report.size_mib
        )
    })
}
