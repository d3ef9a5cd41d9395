//! The candle encoders the local embedder runs, picked by the model folder's `config.json`
//! (`model_type`): BERT (`bert.rs`: all-MiniLM-L6-v2, the default) or MPNet (`mpnet.rs`:
//! all-mpnet-base-v2).

use std::path::Path;

use candle_core::Tensor;
use candle_nn::VarBuilder;

use crate::bert::{Bert, Config as BertConfig};
use crate::mpnet::{Config as MPNetConfig, MPNet};

/// A model folder's `config.json`, read for its architecture.
#[derive(Debug, Clone)]
pub(crate) enum ModelConfig {
    Bert(BertConfig),
    MPNet(MPNetConfig),
}

impl ModelConfig {
    /// Reads `path`. A `config.json` without `model_type` is taken for BERT (older exports).
    pub(crate) fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("config.json: {e}"))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("config.json: {e}"))?;
        let fields = |e: serde_json::Error| format!("config.json: {e}");
        match value.get("model_type").and_then(serde_json::Value::as_str) {
            None | Some("bert") => Ok(Self::Bert(serde_json::from_value(value).map_err(fields)?)),
            Some("mpnet") => Ok(Self::MPNet(serde_json::from_value(value).map_err(fields)?)),
            Some(other) => Err(format!(
                "config.json: model_type `{other}` is not supported; devlens runs BERT \
                 (`bert`, e.g. all-MiniLM-L6-v2, or a cross-encoder such as \
                 ms-marco-MiniLM-L-6-v2) and MPNet (`mpnet`, e.g. all-mpnet-base-v2) models"
            )),
        }
    }

    /// `config.json`'s `model_type`.
    pub(crate) fn model_type(&self) -> &'static str {
        match self {
            Self::Bert(_) => "bert",
            Self::MPNet(_) => "mpnet",
        }
    }

    /// The dimension of the token vectors, and so of the embeddings.
    pub(crate) fn hidden_size(&self) -> usize {
        match self {
            Self::Bert(c) => c.sizes.hidden_size,
            Self::MPNet(c) => c.sizes.hidden_size,
        }
    }

    /// The most tokens the position table can take.
    pub(crate) fn max_tokens(&self) -> usize {
        match self {
            Self::Bert(c) => c.sizes.max_position_embeddings,
            Self::MPNet(c) => c.max_tokens(),
        }
    }

    pub(crate) fn pad_token_id(&self) -> usize {
        match self {
            Self::Bert(c) => c.pad_token_id,
            Self::MPNet(c) => c.pad_token_id,
        }
    }

    /// Whether the ONNX Runtime engine runs this architecture: `scripts/build-onnx-model.py`
    /// exports BERT only, and only BERT exports are tested there.
    pub(crate) fn runs_on_onnx(&self) -> bool {
        matches!(self, Self::Bert(_))
    }
}

/// A loaded candle encoder.
pub(crate) enum Encoder {
    Bert(Bert),
    MPNet(MPNet),
}

impl Encoder {
    pub(crate) fn load(vb: VarBuilder<'_>, config: &ModelConfig) -> candle_core::Result<Self> {
        Ok(match config {
            ModelConfig::Bert(c) => Self::Bert(Bert::load(vb, c)?),
            ModelConfig::MPNet(c) => Self::MPNet(MPNet::load(vb, c)?),
        })
    }

    /// Token vectors of the last layer, `(n, len, hidden)`; see [`Bert::forward`].
    pub(crate) fn forward(
        &self,
        ids: &Tensor,
        type_ids: &Tensor,
        mask: Option<&Tensor>,
    ) -> candle_core::Result<Tensor> {
        match self {
            Self::Bert(bert) => bert.forward(ids, type_ids, mask),
            // MPNet has no token types.
            Self::MPNet(mpnet) => mpnet.forward(ids, mask),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<ModelConfig, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, json).unwrap();
        ModelConfig::read(&path)
    }

    const SIZES: &str = r#""vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 514"#;

    #[test]
    fn the_architecture_comes_from_model_type() {
        let bert = read(&format!("{{{SIZES}}}")).unwrap();
        assert_eq!(bert.model_type(), "bert");
        assert_eq!(bert.max_tokens(), 514);
        let mpnet = read(&format!(
            r#"{{"model_type": "mpnet", "pad_token_id": 1, {SIZES}}}"#
        ))
        .unwrap();
        assert_eq!(mpnet.model_type(), "mpnet");
        // Positions 0 and 1 are taken (padding_idx + 1 is the first).
        assert_eq!(mpnet.max_tokens(), 512);
        assert!(!mpnet.runs_on_onnx());
    }

    #[test]
    fn an_unknown_model_type_is_named_in_the_error() {
        let err = match read(&format!(r#"{{"model_type": "t5", {SIZES}}}"#)) {
            Err(err) => err,
            Ok(config) => panic!("read as {}", config.model_type()),
        };
        assert!(err.contains("model_type `t5` is not supported"), "{err}");
    }
}
