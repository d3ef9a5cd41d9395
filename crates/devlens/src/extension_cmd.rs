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

use devlens_app::extension::{BrowserModel, ExtensionPairing, browser_model};
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
    ("engine.js", include_str!("../../../extension/engine.js")),
    (
        "offscreen.html",
        include_str!("../../../extension/offscreen.html"),
    ),
    (
        "offscreen.js",
        include_str!("../../../extension/offscreen.js"),
    ),
    ("localdb.js", include_str!("../../../extension/localdb.js")),
    ("localkb.js", include_str!("../../../extension/localkb.js")),
    ("chunk.js", include_str!("../../../extension/chunk.js")),
    (
        "tokenizer.js",
        include_str!("../../../extension/tokenizer.js"),
    ),
    (
        "embedder.js",
        include_str!("../../../extension/embedder.js"),
    ),
    ("sync.js", include_str!("../../../extension/sync.js")),
    (
        "syncstate.js",
        include_str!("../../../extension/syncstate.js"),
    ),
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

/// onnxruntime-web (vendor/onnxruntime-web, MIT): the runtime the extension embeds with, written
/// as `ort/<name>`.
const RUNTIME: &[(&str, &[u8])] = &[
    (
        "ort.wasm.bundle.min.mjs",
        include_bytes!("../../../vendor/onnxruntime-web/ort.wasm.bundle.min.mjs"),
    ),
    (
        "ort-wasm-simd-threaded.wasm",
        include_bytes!("../../../vendor/onnxruntime-web/ort-wasm-simd-threaded.wasm"),
    ),
    (
        "LICENSE",
        include_bytes!("../../../vendor/onnxruntime-web/LICENSE"),
    ),
];

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Installed {
    /// The folder to load unpacked.
    dir: PathBuf,
    /// Files written now (new or changed); the rest were already current.
    written: Vec<String>,
    /// The embedding model copied into `model/`, or none (then `model_missing` says why and
    /// the extension searches by keywords).
    model: Option<BrowserModel>,
    model_missing: Option<String>,
    /// The folder's size in bytes.
    bytes: u64,
}

pub(crate) fn run(config: &Config, command: ExtensionCommand) -> anyhow::Result<()> {
    match command {
        ExtensionCommand::Path { json } => {
            let dir = config.data_dir.root().join("extension");
            let mut written = install(&dir)?;
            let (model, model_missing) = match browser_model(config) {
                Ok(model) => {
                    written.extend(install_model(&dir, &model)?);
                    (Some(model), None)
                }
                Err(why) => {
                    // stderr: stdout is the folder alone.
                    eprintln!(
                        "note: the extension gets no embedding model, so it searches by keywords \
                         until it has one: {why}"
                    );
                    (None, Some(why))
                }
            };
            let bytes = folder_size(&dir);
            let installed = Installed {
                dir,
                written,
                model,
                model_missing,
                bytes,
            };
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

/// Writes `bytes` to `dir/name` unless it holds them already; whether it wrote.
fn write_if_changed(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<bool> {
    let path = dir.join(name);
    if std::fs::read(&path).ok().as_deref() == Some(bytes) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    write_atomic(&path, bytes)?;
    Ok(true)
}

/// Copies the model (its int8 ONNX file and tokenizer) into `dir/model/` with `model.json`
/// describing it; the names written.
fn install_model(dir: &Path, model: &BrowserModel) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    let onnx = std::fs::read(&model.onnx)?;
    let tokenizer = std::fs::read(&model.tokenizer)?;
    let mut info = serde_json::to_value(model)?;
    info["file"] = "model.onnx".into();
    let info = serde_json::to_vec_pretty(&info)?;
    for (name, bytes) in [
        ("model/model.onnx", onnx.as_slice()),
        ("model/tokenizer.json", tokenizer.as_slice()),
        ("model/model.json", info.as_slice()),
    ] {
        if write_if_changed(dir, name, bytes)? {
            written.push(name.to_string());
        }
    }
    Ok(written)
}

/// Bytes of every file under `dir`.
fn folder_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => folder_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Writes every file whose content differs from what `dir` holds; the names written.
fn install(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    for (name, bytes) in RUNTIME {
        let name = format!("ort/{name}");
        if write_if_changed(dir, &name, bytes)? {
            written.push(name);
        }
    }
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
        assert_eq!(
            install(dir.path()).unwrap().len(),
            FILES.len() + RUNTIME.len()
        );
        assert!(install(dir.path()).unwrap().is_empty());
        std::fs::write(dir.path().join("popup.js"), "stale").unwrap();
        assert_eq!(install(dir.path()).unwrap(), ["popup.js"]);
    }
}
