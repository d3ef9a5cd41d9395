//! The local model's second engine: ONNX Runtime, loaded at run time from its shared library
//! (`libonnxruntime.so`, e.g. from the `onnxruntime` PyPI wheel), so the default build stays pure
//! Rust and links nothing. It runs an ONNX export of the same model folder (`<model dir>/onnx/`,
//! the layout of the Hugging Face hub's `onnx/` folder, or one `scripts/build-onnx-model.py`
//! writes from `model.safetensors`) and gives the token vectors [`crate::LocalBert`] pools.
//!
//! Why: on these 2-core machines ONNX Runtime's kernels (fused attention, int8 matrix multiplies on
//! the VNNI dot-product instructions) embed several times faster than candle; see the README's
//! embedding figures.
//!
//! Threads: like the candle engine, each forward pass runs on one thread (one session per bulk
//! worker, each with a one-thread intra-op pool, plus one for queries), so bulk work runs one batch
//! per core side by side and a query never queues behind an index build.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;

/// ONNX files looked for in `<model dir>/onnx/` when `[embedding] onnx_model` is not set, best
/// first: the int8 export `scripts/build-onnx-model.py` writes, the hub's int8 exports for
/// AVX-512 VNNI and AVX-512, then float32.
pub const ONNX_MODEL_FILES: [&str; 4] = [
    "model_qint8.onnx",
    "model_qint8_avx512_vnni.onnx",
    "model_qint8_avx512.onnx",
    "model.onnx",
];

/// The library's file name, found through the system's library search path when no path is given.
const DEFAULT_LIBRARY: &str = "libonnxruntime.so";

/// The ONNX Runtime library can be loaded once per process; once loaded, it is kept.
static RUNTIME: OnceLock<Environment> = OnceLock::new();
/// One load attempt at a time.
static LOADING: Mutex<()> = Mutex::new(());

/// Loads the ONNX Runtime library (`library`, or the system's `libonnxruntime.so`) once per
/// process. A second call with another path keeps the first library. A failed load is not kept:
/// a later call (the library installed meanwhile, or a path given where the first call had none)
/// tries again, as ort itself allows.
pub(crate) fn load_runtime(library: Option<&Path>) -> Result<&'static Environment, String> {
    if let Some(environment) = RUNTIME.get() {
        return Ok(environment);
    }
    let _one_at_a_time = LOADING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(environment) = RUNTIME.get() {
        return Ok(environment);
    }
    let path = library.map_or_else(|| PathBuf::from(DEFAULT_LIBRARY), Path::to_path_buf);
    let not_loaded = |e: &dyn std::fmt::Display| {
        format!(
            "cannot load ONNX Runtime from {}: {e}. Install it (`pip install onnxruntime` \
             ships libonnxruntime.so.* in onnxruntime/capi/) and point ORT_DYLIB_PATH or \
             `[embedding] onnxruntime` at the library file",
            path.display()
        )
    };
    let environment = ort::init_from(&path)
        .map_err(|e| not_loaded(&e))?
        .with_name("devlens")
        .build()
        .map_err(|e| not_loaded(&e))?;
    Ok(RUNTIME.get_or_init(|| environment))
}

/// The ONNX file of `model_dir` to run: `preferred` (a path, or a file name under `onnx/`), else
/// the first of [`ONNX_MODEL_FILES`] that exists.
pub(crate) fn find_onnx_model(
    model_dir: &Path,
    preferred: Option<&str>,
) -> Result<PathBuf, String> {
    let folder = model_dir.join("onnx");
    if let Some(name) = preferred {
        let direct = PathBuf::from(name);
        for candidate in [
            direct.clone(),
            folder.join(&direct),
            model_dir.join(&direct),
        ] {
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
        return Err(format!(
            "the ONNX model {name} is neither a file nor in {}",
            folder.display()
        ));
    }
    ONNX_MODEL_FILES
        .iter()
        .map(|name| folder.join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| {
            format!(
                "{} holds none of {}; `scripts/build-onnx-model.py {}` writes them from \
                 model.safetensors",
                folder.display(),
                ONNX_MODEL_FILES.join(", "),
                model_dir.display()
            )
        })
}

/// Sessions of one ONNX model: one per bulk worker and one for queries (one intra-op thread
/// each), and one spread over every worker's core for small jobs.
pub(crate) struct OnnxEngine {
    bulk: Vec<Mutex<Session>>,
    query: Mutex<Session>,
    wide: Mutex<Session>,
    model: PathBuf,
    /// Whether the graph takes `token_type_ids` (some exports leave it out).
    token_types: bool,
}

/// Which sessions a forward pass uses.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lane {
    /// One of the per-core sessions: many batches side by side.
    Bulk,
    /// The query session: one text, never behind other work.
    Query,
    /// The all-cores session: a job of one batch (a saved solution's few chunks), which on one
    /// core would leave the others idle (measured: 3 chunks of 174 tokens 110 ms on one thread,
    /// 51 ms on two).
    Wide,
}

/// The inputs of one forward pass, padded to one length: `n` rows of `len` tokens.
pub(crate) struct Inputs<'a> {
    pub n: usize,
    pub len: usize,
    pub ids: &'a [i64],
    pub type_ids: &'a [i64],
    pub mask: &'a [i64],
}

impl OnnxEngine {
    /// Opens `model` in `workers` + 2 sessions ([`load_runtime`] must have succeeded first).
    pub(crate) fn open(model: &Path, workers: usize) -> Result<Self, String> {
        let environment = load_runtime(None)?;
        let session_with = |threads: usize| -> Result<Mutex<Session>, String> {
            let options = |e: ort::Error<_>| format!("ONNX Runtime session options: {e}");
            let built = Session::builder(environment)
                .map_err(|e| format!("ONNX Runtime session: {e}"))?
                .with_optimization_level(GraphOptimizationLevel::Level3)
                .map_err(options)?
                // Its fused Add + LayerNorm kernel was the slow part of the int8 graph: 17% of a
                // forward pass (32 texts of 50 tokens), 13% faster without it; float32 unchanged.
                .with_disabled_optimizers("SkipLayerNormFusion;LayerNormFusion")
                .map_err(options)?
                .with_intra_threads(threads)
                .map_err(options)?
                .with_inter_threads(1)
                .map_err(options)?
                .commit_from_file(model)
                .map_err(|e| format!("{}: {e}", model.display()))?;
            Ok(Mutex::new(built))
        };
        let session = || session_with(1);
        let query = session()?;
        let (token_types, output_ok) = {
            let guard = query
                .lock()
                .map_err(|_| "session lock poisoned".to_string())?;
            let names: Vec<&str> = guard.inputs().iter().map(|i| i.name()).collect();
            for needed in ["input_ids", "attention_mask"] {
                if !names.contains(&needed) {
                    return Err(format!(
                        "{} has inputs {names:?}, not the BERT inputs input_ids and \
                         attention_mask",
                        model.display()
                    ));
                }
            }
            (
                names.contains(&"token_type_ids"),
                !guard.outputs().is_empty(),
            )
        };
        if !output_ok {
            return Err(format!("{} has no outputs", model.display()));
        }
        let bulk = (0..workers.max(1))
            .map(|_| session())
            .collect::<Result<Vec<_>, _>>()?;
        let wide = session_with(workers.max(1))?;
        Ok(Self {
            bulk,
            query,
            wide,
            model: model.to_path_buf(),
            token_types,
        })
    }

    pub(crate) fn model_path(&self) -> &Path {
        &self.model
    }

    /// The last hidden state, `n × len × dims` row-major.
    pub(crate) fn hidden_states(
        &self,
        lane: Lane,
        inputs: &Inputs<'_>,
        dims: usize,
    ) -> Result<Vec<f32>, String> {
        let mut session = match lane {
            Lane::Query => self.query.lock().map_err(|_| "session lock poisoned")?,
            Lane::Wide => self.wide.lock().map_err(|_| "session lock poisoned")?,
            Lane::Bulk => self.free_bulk_session()?,
        };
        let shape = [inputs.n, inputs.len];
        let tensor_err = |e: ort::Error| format!("input tensor: {e}");
        let ids = TensorRef::from_array_view((shape, inputs.ids)).map_err(tensor_err)?;
        let mask = TensorRef::from_array_view((shape, inputs.mask)).map_err(tensor_err)?;
        let mut feed = ort::inputs!["input_ids" => ids, "attention_mask" => mask];
        if self.token_types {
            let types = TensorRef::from_array_view((shape, inputs.type_ids)).map_err(tensor_err)?;
            feed.push(("token_type_ids".into(), types.into()));
        }
        let outputs = session
            .run(feed)
            .map_err(|e| format!("ONNX Runtime forward pass: {e}"))?;
        let (out_shape, data) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| format!("ONNX Runtime output: {e}"))?;
        let expected = [inputs.n as i64, inputs.len as i64, dims as i64];
        if **out_shape != expected {
            return Err(format!(
                "{} gave an output of shape {:?}, expected token vectors {expected:?}",
                self.model.display(),
                &**out_shape
            ));
        }
        Ok(data.to_vec())
    }

    /// A bulk session no other worker holds (there is one per worker, so one is always free
    /// unless more threads than workers call in; then wait for the first).
    fn free_bulk_session(&self) -> Result<std::sync::MutexGuard<'_, Session>, String> {
        for session in &self.bulk {
            if let Ok(guard) = session.try_lock() {
                return Ok(guard);
            }
        }
        self.bulk[0]
            .lock()
            .map_err(|_| "session lock poisoned".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_int8_export_is_preferred_and_a_named_file_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let err = find_onnx_model(dir.path(), None).unwrap_err();
        assert!(
            err.contains("model_qint8.onnx") && err.contains("build-onnx-model.py"),
            "{err}"
        );
        std::fs::create_dir(dir.path().join("onnx")).unwrap();
        for name in ["model.onnx", "model_qint8_avx512.onnx", "model_qint8.onnx"] {
            std::fs::write(dir.path().join("onnx").join(name), b"x").unwrap();
        }
        let picked = find_onnx_model(dir.path(), None).unwrap();
        assert!(
            picked.ends_with("onnx/model_qint8.onnx"),
            "{}",
            picked.display()
        );
        let picked = find_onnx_model(dir.path(), Some("model.onnx")).unwrap();
        assert!(picked.ends_with("onnx/model.onnx"), "{}", picked.display());
        let err = find_onnx_model(dir.path(), Some("other.onnx")).unwrap_err();
        assert!(err.contains("other.onnx"), "{err}");
    }

    #[test]
    fn a_missing_library_says_how_to_install_and_point_at_it() {
        let err = load_runtime(Some(Path::new("/nonexistent/libonnxruntime.so"))).unwrap_err();
        assert!(err.contains("pip install onnxruntime"), "{err}");
        assert!(err.contains("ORT_DYLIB_PATH"), "{err}");
    }
}
