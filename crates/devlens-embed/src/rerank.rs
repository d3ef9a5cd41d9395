//! Rerankers: a second stage that reads the question and one candidate together and scores the
//! pair, where an embedding compares two vectors made apart.
//!
//! [`CrossEncoder`] runs a sentence-transformers cross-encoder — BERT for sequence
//! classification with one output, e.g. `cross-encoder/ms-marco-MiniLM-L-6-v2` — from a Hugging
//! Face model folder (config.json, tokenizer.json, model.safetensors) on candle, on the CPU, with
//! no network. No such model ships in a package registry, so devlens does not install one: a
//! user who has one names its folder in `[embedding] reranker_dir`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device, IndexOp, Module, Tensor};
use candle_nn::{Linear, VarBuilder};
use tokenizers::{EncodeInput, Tokenizer};

use crate::bert::Bert;
use crate::encoder::ModelConfig;
use crate::local::{blocking, load_tokenizer, missing_files};
use crate::{BoxFuture, EmbedError};

/// Question + candidate are cut to this many tokens: API endpoint texts fit well within it, and
/// a cross-encoder's cost grows with the square of the length.
const MAX_PAIR_TOKENS: usize = 256;

/// Scores (question, candidate) pairs: higher is a better answer. Scores compare only within one
/// call.
pub trait Reranker: Send + Sync + std::fmt::Debug {
    /// The model's name, for status pages and notices.
    fn model(&self) -> &str;

    /// One score per passage, in the order given.
    fn score<'a>(
        &'a self,
        query: &'a str,
        passages: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>>;
}

/// A BERT cross-encoder loaded from a model folder.
pub struct CrossEncoder {
    inner: Arc<Inner>,
    name: String,
}

struct Inner {
    bert: Bert,
    /// BERT's pooler (dense + tanh over `[CLS]`); sentence-transformers cross-encoders have one.
    pooler: Option<Linear>,
    classifier: Linear,
    tokenizer: Tokenizer,
    pad_id: u32,
    device: Device,
    /// Every core (candle's count): a rerank is many forward passes a searcher waits for, and
    /// candle's matrix multiplies split over the pool they run in.
    pool: rayon::ThreadPool,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder")
            .field("model", &self.name)
            .finish_non_exhaustive()
    }
}

impl CrossEncoder {
    /// Loads the cross-encoder in `dir`; the error names the folder and what is wrong with it.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let load_err = |message: String| EmbedError::ModelLoad {
            dir: dir.to_path_buf(),
            message,
        };
        let missing = missing_files(dir);
        if !missing.is_empty() {
            return Err(load_err(format!(
                "missing {} (a reranker folder holds a cross-encoder, e.g. \
                 cross-encoder/ms-marco-MiniLM-L-6-v2, as Hugging Face saves it)",
                missing.join(", ")
            )));
        }
        let config = match ModelConfig::read(&dir.join("config.json")).map_err(load_err)? {
            ModelConfig::Bert(config) => config,
            other => {
                return Err(load_err(format!(
                    "config.json: model_type `{}` is not supported; the reranker runs BERT \
                     cross-encoders (e.g. cross-encoder/ms-marco-MiniLM-L-6-v2)",
                    other.model_type()
                )));
            }
        };

        let (tokenizer, pad_id) = load_tokenizer(
            dir,
            MAX_PAIR_TOKENS.min(config.sizes.max_position_embeddings),
            config.pad_token_id,
        )
        .map_err(load_err)?;

        let device = Device::Cpu;
        let tensors = candle_core::safetensors::load(dir.join("model.safetensors"), &device)
            .map_err(|e| load_err(format!("model.safetensors: {e}")))?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        if !vb.contains_tensor("classifier.weight") {
            return Err(load_err(
                "model.safetensors has no `classifier` weights: this is not a cross-encoder \
                 (an embedding model such as all-MiniLM-L6-v2 goes in `model_dir`, a \
                 cross-encoder such as ms-marco-MiniLM-L-6-v2 in `reranker_dir`)"
                    .into(),
            ));
        }
        let weights_err =
            |e: candle_core::Error| load_err(format!("weights do not match config.json: {e}"));
        let h = config.sizes.hidden_size;
        let classifier = candle_nn::linear(h, 1, vb.pp("classifier")).map_err(|e| {
            load_err(format!(
                "classifier: {e} (the reranker takes a cross-encoder with one output, a \
                 relevance score)"
            ))
        })?;
        let base = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb.clone()
        };
        let pooler = if base.contains_tensor("pooler.dense.weight") {
            Some(candle_nn::linear(h, h, base.pp("pooler.dense")).map_err(weights_err)?)
        } else {
            None
        };
        let bert = Bert::load(vb, &config).map_err(weights_err)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(candle_core::utils::get_num_threads().max(1))
            .thread_name(|i| format!("rerank-{i}"))
            .build()
            .map_err(|e| load_err(format!("cannot start the reranker's threads: {e}")))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        tracing::info!(model = %name, dir = %dir.display(), "loaded cross-encoder reranker");
        Ok(Self {
            inner: Arc::new(Inner {
                bert,
                pooler,
                classifier,
                tokenizer,
                pad_id,
                device,
                pool,
            }),
            name,
        })
    }
}

impl Inner {
    fn score(&self, query: &str, passages: &[String]) -> Result<Vec<f32>, EmbedError> {
        if passages.is_empty() {
            return Ok(Vec::new());
        }
        let inputs: Vec<EncodeInput<'_>> = passages
            .iter()
            .map(|p| (query.to_string(), p.clone()).into())
            .collect();
        let encodings = self
            .tokenizer
            .encode_batch_fast(inputs, true)
            .map_err(|e| EmbedError::Inference(format!("tokenizer: {e}")))?;
        let n = encodings.len();
        let len = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![self.pad_id; n * len];
        let mut type_ids = vec![0u32; n * len];
        let mut mask = vec![0u32; n * len];
        for (row, enc) in encodings.iter().enumerate() {
            let at = row * len;
            ids[at..at + enc.len()].copy_from_slice(enc.get_ids());
            type_ids[at..at + enc.len()].copy_from_slice(enc.get_type_ids());
            mask[at..at + enc.len()].iter_mut().for_each(|m| *m = 1);
        }
        let padded = encodings.iter().any(|e| e.len() < len);
        let forward = || -> candle_core::Result<Vec<f32>> {
            let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
            let type_ids = Tensor::from_vec(type_ids, (n, len), &self.device)?;
            let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
            let hidden = self
                .bert
                .forward(&ids, &type_ids, padded.then_some(&mask))?;
            let mut cls = hidden.i((.., 0))?.contiguous()?; // (n, hidden)
            if let Some(pooler) = &self.pooler {
                cls = pooler.forward(&cls)?.tanh()?;
            }
            self.classifier.forward(&cls)?.squeeze(1)?.to_vec1::<f32>()
        };
        self.pool
            .install(forward)
            .map_err(|e| EmbedError::Inference(format!("reranker forward pass: {e}")))
    }
}

impl Reranker for CrossEncoder {
    fn model(&self) -> &str {
        &self.name
    }

    fn score<'a>(
        &'a self,
        query: &'a str,
        passages: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        Box::pin(async move {
            let inner = Arc::clone(&self.inner);
            let (query, passages) = (query.to_owned(), passages.to_vec());
            blocking(move || inner.score(&query, &passages)).await
        })
    }
}

/// The configured reranker, loaded on first use; none when no folder is configured. A failed
/// load is kept (and said in every answer's notice) until the process restarts: the folder is
/// the user's to fix.
#[derive(Debug, Default)]
pub struct LazyReranker {
    dir: Option<PathBuf>,
    slot: tokio::sync::OnceCell<Result<Arc<dyn Reranker>, String>>,
}

impl LazyReranker {
    /// The reranker in `dir`, when one is configured.
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self {
            dir,
            slot: tokio::sync::OnceCell::new(),
        }
    }

    /// A reranker already at hand (tests, hosts that load their own).
    pub fn ready(reranker: Arc<dyn Reranker>) -> Self {
        Self {
            dir: None,
            slot: tokio::sync::OnceCell::new_with(Some(Ok(reranker))),
        }
    }

    /// Whether searches rerank at all.
    pub fn configured(&self) -> bool {
        self.dir.is_some() || self.slot.initialized()
    }

    /// The reranker, or why it could not be loaded; `None` when none is configured.
    pub async fn get(&self) -> Option<Result<Arc<dyn Reranker>, String>> {
        if !self.configured() {
            return None;
        }
        let dir = self.dir.clone();
        let loaded = self
            .slot
            .get_or_init(|| async move {
                let Some(dir) = dir else {
                    return Err("no reranker folder is configured".to_string());
                };
                let loaded = tokio::task::spawn_blocking(move || CrossEncoder::load(&dir))
                    .await
                    .map_err(|e| format!("loading the reranker was cancelled: {e}"))?;
                loaded
                    .map(|r| Arc::new(r) as Arc<dyn Reranker>)
                    .map_err(|e| e.to_string())
            })
            .await;
        Some(loaded.clone())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const HIDDEN: usize = 8;
    const WORDS: &[&str] = &[
        "[PAD]",
        "[CLS]",
        "[SEP]",
        "[UNK]",
        "refund",
        "a",
        "charge",
        "list",
        "customers",
        "money",
        "back",
        "create",
        "invoice",
        "send",
        "delete",
        "card",
    ];

    /// Deterministic small weights: no two tensors alike, nothing random.
    fn weights(shape: &[usize], seed: f32) -> Tensor {
        let n: usize = shape.iter().product();
        let values: Vec<f32> = (0..n)
            .map(|i| (i as f32 * 0.37 + seed).sin() * 0.5)
            .collect();
        Tensor::from_vec(values, shape, &Device::Cpu).unwrap()
    }

    /// A one-layer BERT cross-encoder over [`WORDS`], saved as Hugging Face saves one.
    fn tiny_cross_encoder(dir: &Path, with_classifier: bool) {
        let config = serde_json::json!({
            "architectures": ["BertForSequenceClassification"], "model_type": "bert",
            "vocab_size": WORDS.len(), "hidden_size": HIDDEN, "num_hidden_layers": 1,
            "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 64,
            "type_vocab_size": 2, "pad_token_id": 0
        });
        std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
        let vocab: serde_json::Map<String, serde_json::Value> = WORDS
            .iter()
            .enumerate()
            .map(|(i, w)| (w.to_string(), i.into()))
            .collect();
        let tokenizer = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": {"type": "Lowercase"},
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
            "decoder": null,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
        });
        std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
        let mut tensors: HashMap<String, Tensor> = HashMap::new();
        let mut seed = 0.0;
        let mut add = |name: &str, shape: &[usize]| {
            seed += 1.0;
            let t = if name.ends_with("LayerNorm.weight") {
                Tensor::ones(shape, DType::F32, &Device::Cpu).unwrap()
            } else {
                weights(shape, seed)
            };
            tensors.insert(name.to_string(), t);
        };
        let e = "bert.embeddings";
        add(
            &format!("{e}.word_embeddings.weight"),
            &[WORDS.len(), HIDDEN],
        );
        add(&format!("{e}.position_embeddings.weight"), &[64, HIDDEN]);
        add(&format!("{e}.token_type_embeddings.weight"), &[2, HIDDEN]);
        add(&format!("{e}.LayerNorm.weight"), &[HIDDEN]);
        add(&format!("{e}.LayerNorm.bias"), &[HIDDEN]);
        let l = "bert.encoder.layer.0";
        for part in [
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
        ] {
            add(&format!("{l}.{part}.weight"), &[HIDDEN, HIDDEN]);
            add(&format!("{l}.{part}.bias"), &[HIDDEN]);
        }
        for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
            add(&format!("{l}.{norm}.weight"), &[HIDDEN]);
            add(&format!("{l}.{norm}.bias"), &[HIDDEN]);
        }
        add(&format!("{l}.intermediate.dense.weight"), &[16, HIDDEN]);
        add(&format!("{l}.intermediate.dense.bias"), &[16]);
        add(&format!("{l}.output.dense.weight"), &[HIDDEN, 16]);
        add(&format!("{l}.output.dense.bias"), &[HIDDEN]);
        add("bert.pooler.dense.weight", &[HIDDEN, HIDDEN]);
        add("bert.pooler.dense.bias", &[HIDDEN]);
        if with_classifier {
            add("classifier.weight", &[1, HIDDEN]);
            add("classifier.bias", &[1]);
        }
        candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    }

    fn passages(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[tokio::test]
    async fn scores_each_pair_alike_alone_or_padded_in_a_batch() {
        let dir = tempfile::tempdir().unwrap();
        tiny_cross_encoder(dir.path(), true);
        let reranker = CrossEncoder::load(dir.path()).unwrap();
        let query = "money back";
        let short = reranker
            .score(query, &passages(&["refund a charge"]))
            .await
            .unwrap();
        let batch = passages(&["refund a charge", "list customers send invoice delete card"]);
        let both = reranker.score(query, &batch).await.unwrap();
        assert_eq!(both.len(), 2);
        assert!(both.iter().all(|s| s.is_finite()), "{both:?}");
        // Padding the shorter pair to the longer one must not change its score.
        assert!((short[0] - both[0]).abs() < 1e-4, "{short:?} vs {both:?}");
        assert_ne!(both[0], both[1], "different passages, different scores");
        // The question is read with the passage: another question scores the same passage anew.
        let other = reranker.score("create invoice", &batch[..1]).await.unwrap();
        assert_ne!(other[0], short[0]);
        assert!(reranker.score(query, &[]).await.unwrap().is_empty());
        assert_eq!(
            reranker.model(),
            dir.path().file_name().unwrap().to_str().unwrap()
        );
    }

    #[tokio::test]
    async fn a_folder_that_is_not_a_cross_encoder_is_refused_with_what_to_do() {
        let empty = tempfile::tempdir().unwrap();
        let err = CrossEncoder::load(empty.path()).unwrap_err().to_string();
        assert!(
            err.contains("missing config.json, tokenizer.json, model.safetensors"),
            "{err}"
        );
        assert!(err.contains("ms-marco-MiniLM-L-6-v2"), "{err}");

        let embedding_model = tempfile::tempdir().unwrap();
        tiny_cross_encoder(embedding_model.path(), false);
        let err = CrossEncoder::load(embedding_model.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a cross-encoder"), "{err}");
        assert!(err.contains("model_dir"), "{err}");

        let mpnet = tempfile::tempdir().unwrap();
        tiny_cross_encoder(mpnet.path(), true);
        let config = std::fs::read_to_string(mpnet.path().join("config.json")).unwrap();
        std::fs::write(
            mpnet.path().join("config.json"),
            config.replace(r#""model_type":"bert""#, r#""model_type":"xlm-roberta""#),
        )
        .unwrap();
        let err = CrossEncoder::load(mpnet.path()).unwrap_err().to_string();
        assert!(
            err.contains("model_type `xlm-roberta` is not supported"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn the_lazy_reranker_loads_once_and_says_why_it_cannot() {
        assert!(LazyReranker::new(None).get().await.is_none());
        let bad = tempfile::tempdir().unwrap();
        let lazy = LazyReranker::new(Some(bad.path().to_path_buf()));
        assert!(lazy.configured());
        let err = lazy.get().await.unwrap().unwrap_err();
        assert!(err.contains("missing config.json"), "{err}");

        let good = tempfile::tempdir().unwrap();
        tiny_cross_encoder(good.path(), true);
        let lazy = LazyReranker::new(Some(good.path().to_path_buf()));
        let first = lazy.get().await.unwrap().unwrap();
        let again = lazy.get().await.unwrap().unwrap();
        assert!(Arc::ptr_eq(&first, &again), "loaded once");
    }
}
