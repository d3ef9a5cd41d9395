//! The files a browser needs to run the local model as the server does: the Chrome extension
//! embeds with the same int8 ONNX export, tokenizer and pooling, so its vectors and the server's
//! are interchangeable (`devlens extension path` copies them into the extension's folder).

use std::path::{Path, PathBuf};

use devlens_core::EmbeddingSettings;
use serde::Serialize;

use super::engine::Pooling;
use super::local_model_name_for;
use super::model_dir::{max_seq_len, read_pooling};
use crate::EmbedError;
use crate::encoder::ModelConfig;

/// int8 exports a browser can run (float32 is four times the size: 90 MB for all-MiniLM-L6-v2).
const BROWSER_ONNX_FILES: &[&str] = &[
    "model_qint8.onnx",
    "model_qint8_avx512_vnni.onnx",
    "model_qint8_avx512.onnx",
    "model_quantized.onnx",
];

/// The local model as a browser runs it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserModel {
    /// The model id vectors are stored under (the server's, so synced vectors are reused).
    pub id: String,
    pub dims: usize,
    /// Texts are truncated to this many tokens, special tokens included.
    pub max_tokens: usize,
    /// The int8 ONNX file.
    #[serde(skip)]
    pub onnx: PathBuf,
    #[serde(skip)]
    pub tokenizer: PathBuf,
    /// The ONNX file's size in bytes (for the loading progress).
    pub bytes: u64,
}

/// Describes the model in `dir` for a browser, or says what is missing.
pub fn browser_model(settings: &EmbeddingSettings, dir: &Path) -> Result<BrowserModel, EmbedError> {
    let load_err = |message: String| EmbedError::ModelLoad {
        dir: dir.to_path_buf(),
        message,
    };
    let config = ModelConfig::read(&dir.join("config.json")).map_err(load_err)?;
    if config.model_type() != "bert" {
        return Err(load_err(format!(
            "the extension runs BERT models (all-MiniLM-L6-v2); this is a {} model",
            config.model_type()
        )));
    }
    if read_pooling(dir).map_err(load_err)? != Pooling::Mean {
        return Err(load_err(
            "the extension pools by the mean of the token vectors; this model pools otherwise"
                .into(),
        ));
    }
    let tokenizer = dir.join("tokenizer.json");
    if !tokenizer.is_file() {
        return Err(load_err("there is no tokenizer.json".into()));
    }
    let onnx = BROWSER_ONNX_FILES
        .iter()
        .map(|name| dir.join("onnx").join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            load_err(format!(
                "onnx/ holds no int8 export ({}); `scripts/build-onnx-model.py {}` writes one \
                 from model.safetensors",
                BROWSER_ONNX_FILES.join(", "),
                dir.display()
            ))
        })?;
    let bytes = std::fs::metadata(&onnx)
        .map_err(|e| load_err(e.to_string()))?
        .len();
    Ok(BrowserModel {
        id: local_model_name_for(settings, dir),
        dims: config.hidden_size(),
        max_tokens: max_seq_len(dir, config.max_tokens()).map_err(load_err)?,
        onnx,
        tokenizer,
        bytes,
    })
}
