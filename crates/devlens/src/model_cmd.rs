//! `devlens model …`: installing and locating the local embedding model.

use std::path::PathBuf;

use clap::Subcommand;
use serde::Serialize;

use devlens_core::Config;
use devlens_embed::{
    DEFAULT_LOCAL_MODEL, Embedder, EngineOptions, LocalBert, install_from_folder,
    install_local_model, local_model_name_for, resolve_model_dir,
};

use crate::output::print;

#[derive(Debug, Subcommand)]
pub(crate) enum ModelCommand {
    /// Install the model into the data dir: from the Hugging Face hub, or from a local folder
    Install {
        /// A folder holding config.json, tokenizer.json and model.safetensors (no download)
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Show where the model is looked for and whether it loads
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelReport {
    model: String,
    /// The data directory (`onnxruntime/` there holds the runtime `scripts/run` installs).
    data_dir: String,
    installed: bool,
    dir: Option<String>,
    dims: Option<usize>,
    /// `candle`, or `onnx (<file>)` when ONNX Runtime runs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    engine: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl ModelReport {
    fn to_text(&self) -> String {
        match (&self.dir, &self.error) {
            (Some(dir), None) => format!(
                "{} is installed in {dir} ({} dims; engine: {})",
                self.model,
                self.dims.unwrap_or_default(),
                self.engine.as_deref().unwrap_or("candle")
            ),
            (_, Some(error)) => error.clone(),
            (None, None) => format!("{} is not installed", self.model),
        }
    }
}

/// Loads the model from `dir` with the engine the settings pick, to prove it works, and reports
/// it.
fn check(dir: &std::path::Path, config: &Config) -> ModelReport {
    let name = local_model_name_for(&config.file.embedding, dir);
    let loaded = EngineOptions::resolve(&config.file.embedding, &config.data_dir, &|name| {
        std::env::var(name).ok()
    })
    .and_then(|engine| LocalBert::load_with(dir, &name, 1, &engine));
    match loaded {
        Ok(model) => ModelReport {
            model: name,
            data_dir: config.data_dir.root().display().to_string(),
            installed: true,
            dir: Some(dir.display().to_string()),
            dims: Some(model.dims()),
            engine: Some(model.engine()),
            error: None,
        },
        Err(e) => ModelReport {
            model: name,
            data_dir: config.data_dir.root().display().to_string(),
            installed: false,
            dir: Some(dir.display().to_string()),
            dims: None,
            engine: None,
            error: Some(e.to_string()),
        },
    }
}

pub(crate) async fn run(config: Config, command: ModelCommand) -> anyhow::Result<()> {
    match command {
        ModelCommand::Install { from, json } => {
            let dir = match from {
                Some(folder) => install_from_folder(&folder, &config.data_dir)?,
                None => {
                    eprintln!("downloading {DEFAULT_LOCAL_MODEL} from the Hugging Face hub…");
                    install_local_model(&config.data_dir).await?
                }
            };
            let report = check(&dir, &config);
            print(json, &report, || report.to_text())
        }
        ModelCommand::Status { json } => {
            let report = match resolve_model_dir(&config.file.embedding, &config.data_dir) {
                Ok(dir) => check(dir.as_path(), &config),
                Err(e) => ModelReport {
                    model: DEFAULT_LOCAL_MODEL.to_string(),
                    data_dir: config.data_dir.root().display().to_string(),
                    installed: false,
                    dir: None,
                    dims: None,
                    engine: None,
                    error: Some(e.to_string()),
                },
            };
            if report.installed {
                return print(json, &report, || report.to_text());
            }
            // Not installed is a failure exit, so scripts can test for it.
            if json {
                print(true, &report, String::new)?;
            }
            anyhow::bail!(report.to_text())
        }
    }
}
