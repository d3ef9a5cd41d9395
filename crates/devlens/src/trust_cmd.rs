//! `devlens trust`: lets a repository's `./devlens.toml` set every key (devlens-core's trust.rs
//! says which it may not set until then). Like `direnv allow` and `mise trust`, trust is for the
//! file as it is now: the data dir records its path and SHA-256, and a changed file needs
//! trusting again.

use std::path::{Path, PathBuf};

use clap::Args;

use devlens_core::{
    ConfigOverrides, DataDir,
    config::ConfigFile,
    trust::{TrustStore, TrustedConfig},
};

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The file to trust [default: ./devlens.toml]
    pub file: Option<PathBuf>,
    /// Forget the file's trust
    #[arg(long, conflicts_with = "list")]
    pub untrust: bool,
    /// List the trusted files
    #[arg(long)]
    pub list: bool,
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn run(overrides: &ConfigOverrides, args: TrustArgs) -> anyhow::Result<()> {
    // The config is not loaded: trusting a file must not first apply (or warn about) it.
    let data_dir = DataDir::resolve(overrides.data_dir.as_deref())?;
    data_dir.ensure()?;
    let store = TrustStore::new(&data_dir);
    if args.list {
        let trusted = store.list()?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&trusted)?);
        } else if trusted.is_empty() {
            println!(
                "No devlens.toml is trusted. Run `devlens trust` in a folder to trust its file."
            );
        } else {
            for TrustedConfig {
                path,
                sha256,
                trusted_at,
            } in trusted
            {
                let now = match std::fs::read(&path) {
                    Ok(bytes) if store.is_trusted(&path, &bytes)? => "",
                    Ok(_) => " (changed since: run `devlens trust` there again)",
                    Err(_) => " (gone)",
                };
                println!(
                    "{}  sha256 {}…  trusted {trusted_at}{now}",
                    path.display(),
                    sha256.get(..12).unwrap_or(&sha256)
                );
            }
        }
        return Ok(());
    }
    let file = args.file.unwrap_or_else(|| PathBuf::from("devlens.toml"));
    if args.untrust {
        let was = store.untrust(&file)?;
        println!(
            "{} {}",
            file.display(),
            if was {
                "is no longer trusted: devlens ignores its security-relevant settings again."
            } else {
                "was not trusted; nothing changed."
            }
        );
        return Ok(());
    }
    let applies = security_settings(&file)?;
    let record = store.trust(&file)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&record)?);
        return Ok(());
    }
    println!(
        "Trusted {} (sha256 {}…).",
        record.path.display(),
        record.sha256.get(..12).unwrap_or(&record.sha256)
    );
    if applies.is_empty() {
        println!("It sets nothing an untrusted file may not, so devlens reads it as before.");
    } else {
        println!("These settings in it now apply: {}.", applies.join(", "));
    }
    println!(
        "A change to the file needs `devlens trust` again; `devlens trust --untrust` undoes this."
    );
    Ok(())
}

/// The keys of `file` that apply only once it is trusted; an unreadable file is said now.
fn security_settings(file: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        anyhow::anyhow!(
            "cannot read {} ({e}): run `devlens trust` in the folder that holds the devlens.toml \
             to trust, or name it: `devlens trust path/to/devlens.toml`",
            file.display()
        )
    })?;
    let mut parsed: ConfigFile = toml::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not a valid devlens.toml ({}); fix it before trusting it",
            file.display(),
            e.to_string().trim().replace('\n', " ")
        )
    })?;
    let base = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(parsed.strip_untrusted(base))
}
