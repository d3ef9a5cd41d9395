//! The engines that compute token vectors — candle (pure Rust, always there) or ONNX Runtime
//! (loaded at run time) — and the runner that tokenises, batches and pools around them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use candle_core::{DType, Device, IndexOp, Tensor};
use devlens_core::{DataDir, EmbeddingSettings};
use tokenizers::{Encoding, Tokenizer};

use crate::encoder::{Encoder, ModelConfig};
use crate::onnx::{Inputs, Lane, OnnxEngine, find_onnx_model};
use crate::{EmbedError, l2_normalize};

/// From this many tokens on, a small job's texts run one by one rather than in one batch.
pub(super) const LONG_TEXT_TOKENS: usize = 128;

/// How token vectors become one sentence vector (`1_Pooling/config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pooling {
    Mean,
    Cls,
}

/// The part that moves into `spawn_blocking`.
pub(super) struct Runner {
    pub(super) engine: Engine,
    pub(super) tokenizer: Tokenizer,
    pub(super) device: Device,
    pub(super) pooling: Pooling,
    pub(super) max_len: usize,
    pub(super) dims: usize,
    pub(super) pad_id: u32,
    /// One single-thread pool per bulk worker (one per core).
    pub(super) bulk: Vec<rayon::ThreadPool>,
    /// The single-thread pool queries run in.
    pub(super) query: rayon::ThreadPool,
}

/// One batch's vectors, or why it failed, tagged with the batch's position.
pub(super) type BatchResult = (usize, Result<Vec<Vec<f32>>, EmbedError>);

/// What computes the token vectors.
pub(super) enum Engine {
    /// Pure Rust, always available.
    Candle(Encoder),
    /// ONNX Runtime, loaded at run time (`onnx.rs`).
    Onnx(OnnxEngine),
}

/// Which engine to load (`[embedding] local_engine`, env `DEVLENS_LOCAL_ENGINE`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// ONNX Runtime when its library and an ONNX export of the model load, else candle.
    #[default]
    Auto,
    Candle,
    /// ONNX Runtime or an error saying what is missing.
    Onnx,
}

impl EngineChoice {
    pub fn parse(name: &str) -> Result<Self, EmbedError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Self::Auto),
            "candle" => Ok(Self::Candle),
            "onnx" | "onnxruntime" | "ort" => Ok(Self::Onnx),
            other => Err(EmbedError::InvalidSettings(format!(
                "unknown local engine `{other}`: use auto, candle or onnx"
            ))),
        }
    }
}

/// How [`LocalBert::load_with`] picks and finds its engine.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    pub choice: EngineChoice,
    /// ONNX Runtime's shared library [default: `libonnxruntime.so` on the library path].
    pub onnxruntime: Option<PathBuf>,
    /// The ONNX file: a path or a name in `<model dir>/onnx/` (see [`crate::ONNX_MODEL_FILES`]).
    pub onnx_model: Option<String>,
}

impl EngineOptions {
    /// From `[embedding]` and the environment (`DEVLENS_LOCAL_ENGINE`, `ORT_DYLIB_PATH`,
    /// `DEVLENS_ONNX_MODEL` win over the settings). Without a library named there, the one
    /// `scripts/run` installs into the data dir (`onnxruntime/libonnxruntime.so`) when present,
    /// else the system's.
    pub fn resolve(
        settings: &EmbeddingSettings,
        data_dir: &DataDir,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, EmbedError> {
        let installed = data_dir
            .root()
            .join("onnxruntime")
            .join("libonnxruntime.so");
        let choice = env("DEVLENS_LOCAL_ENGINE")
            .or_else(|| settings.local_engine.clone())
            .map(|name| EngineChoice::parse(&name))
            .transpose()?
            .unwrap_or_default();
        Ok(Self {
            choice,
            onnxruntime: env("ORT_DYLIB_PATH")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .or_else(|| settings.onnxruntime.clone())
                .or_else(|| installed.exists().then_some(installed)),
            onnx_model: env("DEVLENS_ONNX_MODEL")
                .filter(|p| !p.is_empty())
                .or_else(|| settings.onnx_model.clone()),
        })
    }
}

/// A rayon pool of one thread named `name`.
pub(super) fn one_thread_pool(name: String) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(move |_| name.clone())
        .build()
        .map_err(|e| format!("cannot start an embedding thread: {e}"))
}

impl Engine {
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Candle(_) => "candle".into(),
            Self::Onnx(onnx) => format!(
                "onnx ({})",
                onnx.model_path()
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
            ),
        }
    }
}

/// The ONNX Runtime engine when `options` ask for it and it loads; `None` means candle. With
/// `auto`, whatever is missing is logged and candle is used; with `onnx` it is the error. Only
/// BERT models run on ONNX Runtime: others (MPNet) run on candle under `auto`.
pub(super) fn open_onnx(
    dir: &Path,
    config: &ModelConfig,
    workers: usize,
    options: &EngineOptions,
) -> Result<Option<OnnxEngine>, String> {
    if options.choice == EngineChoice::Candle {
        return Ok(None);
    }
    if !config.runs_on_onnx() {
        let kind = config.model_type();
        if options.choice == EngineChoice::Onnx {
            return Err(format!(
                "the ONNX Runtime engine runs BERT models only, and config.json says model_type \
                 `{kind}`: set `[embedding] local_engine = \"candle\"` (or `auto`, or \
                 DEVLENS_LOCAL_ENGINE=candle)"
            ));
        }
        tracing::debug!(
            model_type = kind,
            "ONNX Runtime runs BERT models only; the candle engine runs"
        );
        return Ok(None);
    }
    let opened = crate::onnx::load_runtime(options.onnxruntime.as_deref()).and_then(|_| {
        let model = find_onnx_model(dir, options.onnx_model.as_deref())?;
        OnnxEngine::open(&model, workers)
    });
    match (opened, &options.choice) {
        (Ok(engine), _) => Ok(Some(engine)),
        (Err(message), EngineChoice::Onnx) => Err(message),
        (Err(message), _) => {
            tracing::debug!(reason = %message, "ONNX Runtime not used; the candle engine runs");
            Ok(None)
        }
    }
}

impl Runner {
    pub(super) fn tokenize(&self, texts: Vec<String>) -> Result<Vec<Encoding>, EmbedError> {
        self.tokenizer
            .encode_batch_fast(texts, true)
            .map_err(|e| EmbedError::Inference(format!("tokenizer: {e}")))
    }

    /// One forward pass over `batch`, padded to its longest member; one unit vector per text.
    pub(super) fn embed(
        &self,
        batch: &[Encoding],
        lane: Lane,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        match &self.engine {
            Engine::Candle(encoder) => self
                .forward_candle(encoder, batch)
                .map_err(|e| EmbedError::Inference(format!("forward pass: {e}"))),
            Engine::Onnx(onnx) => self
                .forward_onnx(onnx, batch, lane)
                .map_err(EmbedError::Inference),
        }
    }

    /// Embeds a few texts on the all-cores ONNX Runtime session, in input order. Texts of
    /// [`LONG_TEXT_TOKENS`] or more run one by one (no padding, and on two threads one long text
    /// at a time was faster than a batch: 8 × 176 tokens 112 ms vs 135 ms; 176 + 176 + 60 tokens
    /// 31 ms vs 47 ms padded into one batch); shorter ones share one batch (8 × 20 tokens: 16 ms
    /// vs 26 ms one by one).
    pub(super) fn embed_small_job(
        &self,
        encodings: Vec<Encoding>,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out: Vec<Option<Vec<f32>>> = vec![None; encodings.len()];
        let (long, short): (Vec<usize>, Vec<usize>) =
            (0..encodings.len()).partition(|&i| encodings[i].len() >= LONG_TEXT_TOKENS);
        for i in long {
            let vector = self.embed(std::slice::from_ref(&encodings[i]), Lane::Wide)?;
            out[i] = vector.into_iter().next();
        }
        if !short.is_empty() {
            let batch: Vec<Encoding> = short.iter().map(|&i| encodings[i].clone()).collect();
            for (i, vector) in short.iter().zip(self.embed(&batch, Lane::Wide)?) {
                out[*i] = Some(vector);
            }
        }
        out.into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| EmbedError::Inference("a text got no vector".into()))
    }

    /// Embeds `batches` one per bulk worker at a time, sending each result to `done` as it is
    /// ready. Stops early when a batch fails or nobody listens any more.
    pub(super) fn embed_batches(
        &self,
        batches: &[Vec<Encoding>],
        done: &tokio::sync::mpsc::UnboundedSender<BatchResult>,
    ) {
        let next = AtomicUsize::new(0);
        let work = || {
            loop {
                let b = next.fetch_add(1, Ordering::Relaxed);
                let Some(batch) = batches.get(b) else { break };
                let result = self.embed(batch, Lane::Bulk);
                let failed = result.is_err();
                if done.send((b, result)).is_err() || failed {
                    // Let the other workers stop too.
                    next.store(batches.len(), Ordering::Relaxed);
                    break;
                }
            }
        };
        let workers = self.bulk.len().min(batches.len()).max(1);
        std::thread::scope(|scope| {
            for pool in &self.bulk[1..workers] {
                scope.spawn(|| pool.install(work));
            }
            self.bulk[0].install(work);
        });
    }

    /// A batch's token ids, token type ids and attention mask, each row padded to the longest:
    /// `(rows, length, ids, type ids, mask)`, row-major.
    #[allow(clippy::type_complexity)]
    pub(super) fn padded<T: From<u32> + Copy>(
        &self,
        batch: &[Encoding],
    ) -> (usize, usize, Vec<T>, Vec<T>, Vec<T>) {
        let n = batch.len();
        let len = batch.iter().map(Encoding::len).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(n * len);
        let mut type_ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        let (pad_id, zero) = (T::from(self.pad_id), T::from(0));
        for enc in batch {
            let pad = len - enc.len();
            ids.extend(enc.get_ids().iter().map(|&t| T::from(t)));
            ids.extend(std::iter::repeat_n(pad_id, pad));
            type_ids.extend(enc.get_type_ids().iter().map(|&t| T::from(t)));
            type_ids.extend(std::iter::repeat_n(zero, pad));
            mask.extend(enc.get_attention_mask().iter().map(|&t| T::from(t)));
            mask.extend(std::iter::repeat_n(zero, pad));
        }
        (n, len, ids, type_ids, mask)
    }

    /// The ONNX Runtime forward pass, pooled here (the graph gives token vectors).
    pub(super) fn forward_onnx(
        &self,
        onnx: &OnnxEngine,
        batch: &[Encoding],
        lane: Lane,
    ) -> Result<Vec<Vec<f32>>, String> {
        let (n, len, ids, type_ids, mask) = self.padded::<i64>(batch);
        let inputs = Inputs {
            n,
            len,
            ids: &ids,
            type_ids: &type_ids,
            mask: &mask,
        };
        let dims = self.dims;
        let hidden = onnx.hidden_states(lane, &inputs, dims)?;
        let rows = hidden
            .chunks_exact(len * dims)
            .zip(mask.chunks_exact(len))
            .map(|(tokens, row_mask)| {
                let mut v = match self.pooling {
                    Pooling::Mean => {
                        let mut sum = vec![0f32; dims];
                        let mut count = 0f32;
                        for (token, &m) in tokens.chunks_exact(dims).zip(row_mask) {
                            if m != 0 {
                                sum.iter_mut().zip(token).for_each(|(s, x)| *s += x);
                                count += 1.0;
                            }
                        }
                        let count = count.max(1e-9);
                        sum.iter_mut().for_each(|s| *s /= count);
                        sum
                    }
                    Pooling::Cls => tokens[..dims].to_vec(),
                };
                l2_normalize(&mut v);
                v
            })
            .collect();
        Ok(rows)
    }

    pub(super) fn forward_candle(
        &self,
        encoder: &Encoder,
        batch: &[Encoding],
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let (n, len, ids, type_ids, mask) = self.padded::<u32>(batch);
        let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
        let type_ids = Tensor::from_vec(type_ids, (n, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        // Without padding (a single text, or texts of one length) the mask changes nothing.
        let padded = batch.iter().any(|enc| enc.len() < len);
        let hidden = encoder.forward(&ids, &type_ids, padded.then_some(&mask))?; // (n, len, dims)
        let pooled = match self.pooling {
            Pooling::Mean => {
                let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
                let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (n, dims)
                let counts = mask.sum(1)?.clamp(1e-9, f32::MAX)?; // (n, 1)
                summed.broadcast_div(&counts)?
            }
            Pooling::Cls => hidden.i((.., 0))?.contiguous()?,
        };
        let mut rows = pooled.to_vec2::<f32>()?;
        rows.iter_mut().for_each(|v| l2_normalize(v));
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mpnet() -> ModelConfig {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(
            &path,
            r#"{"model_type": "mpnet", "vocab_size": 10, "hidden_size": 8,
                "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16,
                "max_position_embeddings": 514}"#,
        )
        .unwrap();
        ModelConfig::read(&path).unwrap()
    }

    #[test]
    fn an_mpnet_model_runs_on_candle_under_auto_and_is_refused_by_onnx() {
        let dir = tempfile::tempdir().unwrap();
        let auto = EngineOptions::default();
        assert!(matches!(
            open_onnx(dir.path(), &mpnet(), 1, &auto),
            Ok(None)
        ));
        let onnx = EngineOptions {
            choice: EngineChoice::Onnx,
            ..EngineOptions::default()
        };
        let err = open_onnx(dir.path(), &mpnet(), 1, &onnx)
            .err()
            .unwrap_or_default();
        assert!(err.contains("BERT models only"), "{err}");
        assert!(err.contains("model_type `mpnet`"), "{err}");
    }
}
