//! The local embedder: a sentence-transformers BERT model (all-MiniLM-L6-v2 by default) run on
//! the CPU from a Hugging Face model folder — no network at run time — on one of two engines:
//! ONNX Runtime (`onnx.rs`, loaded at run time, an ONNX export in `<model dir>/onnx/`) when it is
//! there and `[embedding] local_engine` allows, else candle (pure Rust, always there). An MPNet
//! folder (`model_type: "mpnet"` in config.json, e.g. all-mpnet-base-v2: 768 dims, about 4x
//! the cost) runs on candle only (`encoder.rs`).
//!
//! Output matches sentence-transformers: tokenise with the model's `tokenizer.json`, truncate to
//! the model's `max_seq_length` (256 for all-MiniLM-L6-v2 — its `tokenizer.json` says 128 and
//! pads to 128, which sentence-transformers overrides, and so do we), BERT forward pass, mean
//! pooling over the attention mask, L2 normalisation.
//!
//! Speed: texts are sorted by token count before batching so a batch carries little padding
//! (a third of the tokens were padding in input order), and the
//! original order is restored afterwards. Forward passes run in `spawn_blocking` so the async
//! runtime keeps serving while a batch computes.
//!
//! Threads (candle; ONNX Runtime mirrors it with one-thread sessions, see `onnx.rs`): every
//! forward pass runs on one thread, inside a one-thread rayon pool, so candle's
//! matrix multiplies (gemm, which splits its work over the *current* rayon pool) stay on it.
//! Bulk work runs one batch per core side by side: everything parallelises, element-wise passes
//! included (candle runs those on one thread), and nothing waits on a fork-join per matrix
//! multiply. A single query is too small to split well: on this kind of machine its latency was
//! lowest on one thread, and a query keeps its own pool so it never queues behind an index build.

mod browser;
mod engine;
mod install;
mod model_dir;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use devlens_core::{DataDir, EmbeddingSettings};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::encoder::{Encoder, ModelConfig};
use crate::onnx::Lane;
use crate::{BoxFuture, EmbedError, Embedder, Progress, Provider};
use engine::{Engine, Runner, one_thread_pool, open_onnx};
pub(crate) use model_dir::missing_files;
use model_dir::{local_model_name, max_seq_len, read_pooling};

pub use browser::{BrowserModel, browser_model};
pub use engine::{EngineChoice, EngineOptions};
pub use install::{install_from_folder, install_local_model, install_local_model_from};
pub use model_dir::{resolve_model_dir, resolve_model_dir_with_env};

/// The default local model, as sentence-transformers names it.
pub const DEFAULT_LOCAL_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// Texts per forward pass when `[embedding] batch_size` is not set (measured best at 32–64).
const DEFAULT_LOCAL_BATCH: usize = 32;

/// A loaded local BERT embedding model. Cheap to share: the weights sit behind an `Arc`.
pub struct LocalBert {
    runner: Arc<Runner>,
    name: String,
    dir: PathBuf,
    batch_size: usize,
}

impl std::fmt::Debug for LocalBert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalBert")
            .field("model", &self.name)
            .field("dir", &self.dir)
            .field("dims", &self.runner.dims)
            .field("max_tokens", &self.runner.max_len)
            .field("pooling", &self.runner.pooling)
            .field("batch_size", &self.batch_size)
            .finish()
    }
}

impl LocalBert {
    /// Finds the model folder ([`resolve_model_dir`]) and loads it.
    pub fn from_settings(
        settings: &EmbeddingSettings,
        data_dir: &DataDir,
    ) -> Result<Self, EmbedError> {
        Self::from_settings_with_env(settings, data_dir, &|name| std::env::var(name).ok())
    }

    /// [`LocalBert::from_settings`] with `env` standing in for the environment.
    pub fn from_settings_with_env(
        settings: &EmbeddingSettings,
        data_dir: &DataDir,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, EmbedError> {
        let dir = resolve_model_dir_with_env(settings, data_dir, env)?;
        let batch_size = match settings.batch_size {
            Some(0) => {
                return Err(EmbedError::InvalidSettings(
                    "`[embedding] batch_size` must be at least 1".into(),
                ));
            }
            Some(n) => n,
            None => DEFAULT_LOCAL_BATCH,
        };
        let engine = EngineOptions::resolve(settings, data_dir, env)?;
        Self::load_with(
            &dir,
            &local_model_name_for(settings, &dir),
            batch_size,
            &engine,
        )
    }

    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`. `name` is what
    /// [`Embedder::model`] reports.
    pub fn load(dir: &Path, name: &str, batch_size: usize) -> Result<Self, EmbedError> {
        let candle = EngineOptions {
            choice: EngineChoice::Candle,
            ..EngineOptions::default()
        };
        Self::load_with(dir, name, batch_size, &candle)
    }

    /// [`LocalBert::load`] with the engine `options` pick.
    pub fn load_with(
        dir: &Path,
        name: &str,
        batch_size: usize,
        options: &EngineOptions,
    ) -> Result<Self, EmbedError> {
        let started = Instant::now();
        let load_err = |message: String| EmbedError::ModelLoad {
            dir: dir.to_path_buf(),
            message,
        };
        let missing = missing_files(dir);
        if !missing.is_empty() {
            return Err(load_err(format!("missing {}", missing.join(", "))));
        }

        let config = ModelConfig::read(&dir.join("config.json")).map_err(load_err)?;
        let max_len = max_seq_len(dir, config.max_tokens()).map_err(load_err)?;
        let pooling = read_pooling(dir).map_err(load_err)?;

        let (tokenizer, pad_id) =
            load_tokenizer(dir, max_len, config.pad_token_id()).map_err(load_err)?;

        let device = Device::Cpu;
        // candle's own choice (physical cores, or RAYON_NUM_THREADS).
        let workers = candle_core::utils::get_num_threads().max(1);
        let engine = match open_onnx(dir, &config, workers, options) {
            Ok(Some(onnx)) => Engine::Onnx(onnx),
            Ok(None) => {
                // A plain read rather than mmap: candle's mmap loader is `unsafe` (forbidden
                // here), and reading 90 MB takes well under the one-second load budget (MPNet's
                // 438 MB take longer).
                let tensors =
                    candle_core::safetensors::load(dir.join("model.safetensors"), &device)
                        .map_err(|e| load_err(format!("model.safetensors: {e}")))?;
                let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
                let encoder = Encoder::load(vb, &config)
                    .map_err(|e| load_err(format!("weights do not match config.json: {e}")))?;
                Engine::Candle(encoder)
            }
            Err(message) => return Err(load_err(message)),
        };
        let bulk = (0..workers)
            .map(|i| one_thread_pool(format!("embed-bulk-{i}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(load_err)?;
        let query = one_thread_pool("embed-query".into()).map_err(load_err)?;

        tracing::info!(
            model = name,
            engine = %engine.describe(),
            dir = %dir.display(),
            model_type = config.model_type(),
            dims = config.hidden_size(),
            max_tokens = max_len,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "loaded local embedding model"
        );
        Ok(Self {
            runner: Arc::new(Runner {
                engine,
                tokenizer,
                device,
                pooling,
                max_len,
                dims: config.hidden_size(),
                pad_id,
                bulk,
                query,
            }),
            name: name.to_owned(),
            dir: dir.to_path_buf(),
            batch_size: batch_size.max(1),
        })
    }

    /// The folder the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Longer texts are truncated to this many tokens (special tokens included).
    pub fn max_tokens(&self) -> usize {
        self.runner.max_len
    }

    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// `candle`, or `onnx (<file>)`.
    pub fn engine(&self) -> String {
        self.runner.engine.describe()
    }
}

impl Embedder for LocalBert {
    fn provider(&self) -> Provider {
        Provider::Local
    }

    fn model(&self) -> &str {
        &self.name
    }

    fn dims(&self) -> usize {
        self.runner.dims
    }

    fn engine(&self) -> Option<String> {
        Some(LocalBert::engine(self))
    }

    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let total = texts.len();
            if total == 0 {
                return Ok(Vec::new());
            }
            let started = Instant::now();
            let runner = self.runner.clone();
            let owned = texts.to_vec();
            let encodings = blocking(move || runner.tokenize(owned)).await?;

            if total <= self.batch_size && matches!(self.runner.engine, Engine::Onnx(_)) {
                // A small job (a saved solution's chunks): on the session spread over every core.
                let runner = self.runner.clone();
                let vectors = blocking(move || runner.embed_small_job(encodings)).await?;
                progress(total, total);
                return Ok(vectors);
            }
            // Longest first: batches of similar length carry little padding, and the biggest
            // batch (the memory peak) comes first.
            let mut order: Vec<usize> = (0..total).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].len()));
            let mut encodings: Vec<Option<Encoding>> = encodings.into_iter().map(Some).collect();
            // Small jobs (an incremental re-index) still get every worker busy.
            let per_batch = self
                .batch_size
                .min(total.div_ceil(self.runner.bulk.len()))
                .max(1);
            let chunks: Vec<&[usize]> = order.chunks(per_batch).collect();
            let batches: Vec<Vec<Encoding>> = chunks
                .iter()
                .map(|chunk| {
                    chunk
                        .iter()
                        .map(|&i| encodings[i].take().unwrap_or_default())
                        .collect()
                })
                .collect();

            let (done, mut finished) = tokio::sync::mpsc::unbounded_channel();
            let runner = self.runner.clone();
            let workers =
                tokio::task::spawn_blocking(move || runner.embed_batches(&batches, &done));
            let mut out: Vec<Option<Vec<f32>>> = vec![None; total];
            let mut ready = vec![false; chunks.len()];
            // Progress counts the batches done in order, so it only ever grows by whole batches.
            let mut reported = 0;
            while let Some((b, vectors)) = finished.recv().await {
                for (&i, v) in chunks[b].iter().zip(vectors?) {
                    out[i] = Some(v);
                }
                ready[b] = true;
                while reported < chunks.len() && ready[reported] {
                    reported += 1;
                    tracing::debug!(
                        provider = "local",
                        model = %self.name,
                        batch = reported,
                        batches = chunks.len(),
                        "embedded batch"
                    );
                    progress((reported * per_batch).min(total), total);
                }
            }
            workers
                .await
                .map_err(|e| EmbedError::Inference(format!("embedding task failed: {e}")))?;
            let batches = chunks.len();
            let elapsed = started.elapsed();
            tracing::info!(
                provider = "local",
                model = %self.name,
                texts = total,
                batches,
                elapsed_ms = elapsed.as_millis() as u64,
                per_sec = (total as f64 / elapsed.as_secs_f64().max(1e-9)).round(),
                "embedded documents"
            );
            out.into_iter()
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| EmbedError::Inference("a text got no vector".into()))
        })
    }

    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        Box::pin(async move {
            let runner = self.runner.clone();
            let text = text.to_owned();
            let mut vectors = blocking(move || {
                runner.query.install(|| {
                    let encodings = runner.tokenize(vec![text])?;
                    runner.embed(&encodings, Lane::Query)
                })
            })
            .await?;
            vectors
                .pop()
                .ok_or_else(|| EmbedError::Inference("the query got no vector".into()))
        })
    }
}

/// `dir`'s tokenizer.json, truncating to `max_len` tokens and not padding (batches are padded to
/// their longest text, not to tokenizer.json's fixed 128), and the padding token's id.
pub(crate) fn load_tokenizer(
    dir: &Path,
    max_len: usize,
    config_pad_id: usize,
) -> Result<(Tokenizer, u32), String> {
    let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
        .map_err(|e| format!("tokenizer.json: {e}"))?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_len,
            ..TruncationParams::default()
        }))
        .map_err(|e| format!("tokenizer truncation: {e}"))?;
    let pad_id = tokenizer
        .get_padding()
        .map(|p| p.pad_id)
        .or_else(|| tokenizer.token_to_id("[PAD]"))
        .unwrap_or(config_pad_id as u32);
    tokenizer.with_padding(None);
    Ok((tokenizer, pad_id))
}

/// Runs CPU-bound work off the async worker threads.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, EmbedError> + Send + 'static,
) -> Result<T, EmbedError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| EmbedError::Inference(format!("embedding task failed: {e}")))?
}

/// The name the local model in `dir` goes by: `[embedding] model`; without it the default's,
/// unless the folder holds another kind of model (an MPNet from `scripts/fetch-mpnet`), which is
/// named after its folder — vectors, caches and indexes are kept apart by model name.
pub fn local_model_name_for(settings: &EmbeddingSettings, dir: &Path) -> String {
    if let Some(name) = local_model_name(settings) {
        return name;
    }
    match ModelConfig::read(&dir.join("config.json")) {
        Ok(config) if config.model_type() != "bert" => {
            let folder = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| config.model_type().to_string());
            format!("sentence-transformers/{folder}")
        }
        _ => DEFAULT_LOCAL_MODEL.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_of_another_kind_of_model_is_named_after_itself() {
        let root = tempfile::tempdir().unwrap();
        let folder = |name: &str, model_type: &str| {
            let dir = root.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(
                dir.join("config.json"),
                format!(
                    r#"{{"model_type": "{model_type}", "vocab_size": 10, "hidden_size": 8,
                        "num_hidden_layers": 1, "num_attention_heads": 2,
                        "intermediate_size": 16, "max_position_embeddings": 514}}"#
                ),
            )
            .unwrap();
            dir
        };
        let unnamed = EmbeddingSettings::default();
        let mpnet = folder("all-mpnet-base-v2", "mpnet");
        let bert = folder("minilm", "bert");
        assert_eq!(
            local_model_name_for(&unnamed, &mpnet),
            "sentence-transformers/all-mpnet-base-v2"
        );
        assert_eq!(local_model_name_for(&unnamed, &bert), DEFAULT_LOCAL_MODEL);
        let named = EmbeddingSettings {
            model: Some("team/mpnet".into()),
            ..Default::default()
        };
        assert_eq!(local_model_name_for(&named, &mpnet), "team/mpnet");
    }
}
