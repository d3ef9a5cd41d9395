//! `devlens extension …`: the Chrome extension's folder and its pairing.
//!
//! The extension's files are compiled into the binary, so an installed devlens needs no copy of
//! the repository: `devlens extension path` writes them into the data dir (rewriting only the
//! files this devlens carries a different version of) and prints the folder for Chrome's "Load
//! unpacked". After an upgrade, running it again and pressing the extension's reload button in
//! chrome://extensions picks up the new files.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde::Serialize;

use devlens_app::extension::ExtensionPairing;
use devlens_core::{Config, paths::write_atomic};

use crate::output::{print, report};

#[derive(Debug, Subcommand)]
pub(crate) enum ExtensionCommand {
    /// Write the extension's files into the data dir (refreshing them when this devlens carries
    /// newer ones) and print the folder: load it in chrome://extensions with Developer mode,
    /// "Load unpacked"
    Path {
        #[arg(long)]
        json: bool,
    },
    /// Print the pairing token the extension's options ask for, and the paired extensions
    Token {
        /// Replace the token (paired extensions stay paired)
        #[arg(long)]
        new: bool,
        #[arg(long)]
        json: bool,
    },
    /// Unpair an extension: its origin, chrome-extension://<id>
    Revoke {
        origin: String,
        #[arg(long)]
        json: bool,
    },
}

/// Every file of `extension/` at the repository root: its name and its bytes.
const FILES: &[(&str, &str)] = &[
    (
        "manifest.json",
        include_str!("../../../extension/manifest.json"),
    ),
    (
        "background.js",
        include_str!("../../../extension/background.js"),
    ),
    ("menu.js", include_str!("../../../extension/menu.js")),
    ("devlens.js", include_str!("../../../extension/devlens.js")),
    ("ask.js", include_str!("../../../extension/ask.js")),
    ("popup.html", include_str!("../../../extension/popup.html")),
    ("popup.js", include_str!("../../../extension/popup.js")),
    (
        "options.html",
        include_str!("../../../extension/options.html"),
    ),
    ("options.js", include_str!("../../../extension/options.js")),
    (
        "devtools.html",
        include_str!("../../../extension/devtools.html"),
    ),
    (
        "devtools.js",
        include_str!("../../../extension/devtools.js"),
    ),
    ("panel.html", include_str!("../../../extension/panel.html")),
    ("panel.js", include_str!("../../../extension/panel.js")),
    (
        "extension.css",
        include_str!("../../../extension/extension.css"),
    ),
];

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Installed {
    /// The folder to load unpacked.
    dir: PathBuf,
    /// Files written now (new or changed); the rest were already current.
    written: Vec<String>,
}

pub(crate) fn run(config: &Config, command: ExtensionCommand) -> anyhow::Result<()> {
    match command {
        ExtensionCommand::Path { json } => {
            let dir = config.data_dir.root().join("extension");
            let written = install(&dir)?;
            let installed = Installed { dir, written };
            // The text is the folder alone, so `$(devlens extension path)` can be used as is.
            print(json, &installed, || installed.dir.display().to_string())
        }
        ExtensionCommand::Token { new, json } => {
            let pairing = ExtensionPairing::new(&config.data_dir);
            let status = if new {
                pairing.new_token()?
            } else {
                pairing.status()?
            };
            report(json, &status)
        }
        ExtensionCommand::Revoke { origin, json } => {
            let change = ExtensionPairing::new(&config.data_dir).revoke(&origin)?;
            report(json, &change)
        }
    }
}

/// Writes every file whose content differs from what `dir` holds; the names written.
fn install(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    for (name, text) in FILES {
        let path = dir.join(name);
        if std::fs::read(&path).ok().as_deref() == Some(text.as_bytes()) {
            continue;
        }
        write_atomic(&path, text.as_bytes())?;
        written.push((*name).to_string());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_file_of_the_extension_is_embedded() {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension");
        let mut on_disk: Vec<String> = std::fs::read_dir(&source)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(n, _)| (*n).to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk, "add new files of extension/ to FILES");
    }

    #[test]
    fn install_writes_what_differs_only() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(install(dir.path()).unwrap().len(), FILES.len());
        assert!(install(dir.path()).unwrap().is_empty());
        std::fs::write(dir.path().join("popup.js"), "stale").unwrap();
        assert_eq!(install(dir.path()).unwrap(), ["popup.js"]);
    }
}
