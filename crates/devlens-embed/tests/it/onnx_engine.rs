//! The local model on its ONNX Runtime engine (the library from `ORT_DYLIB_PATH`, the ONNX
//! exports `scripts/build-onnx-model.py` writes into the model folder; scripts/fetch-testdata
//! installs both): float32 agrees with the independent reference like the candle engine, int8
//! stays close to it and ranks the same way, and `auto` picks ONNX Runtime when it is there.

use crate::common;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use common::{assert_close, missing_test_data, norm, test_model_dir};
use devlens_core::{DataDir, EmbeddingSettings};
use devlens_embed::{
    DEFAULT_LOCAL_MODEL, Embedder, EngineChoice, EngineOptions, LocalBert, dot,
    embedder_from_settings_with_env,
};

/// The model folder and the ONNX Runtime library, or `None` (with a notice) when the test data
/// is absent and not required.
fn setup() -> Option<(PathBuf, PathBuf)> {
    let dir = test_model_dir()?;
    let library = std::env::var_os("ORT_DYLIB_PATH")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.testdata/onnxruntime/libonnxruntime.so")
        });
    let complete = library.exists() && dir.join("onnx/model_qint8.onnx").is_file();
    if complete {
        return Some((dir, library));
    }
    missing_test_data(&format!(
        "ONNX Runtime ({}) or the model's ONNX exports ({}/onnx) are missing. Run \
         scripts/fetch-testdata",
        library.display(),
        dir.display()
    ))
}

fn load(onnx_model: &str) -> Option<Arc<LocalBert>> {
    let (dir, library) = setup()?;
    let options = EngineOptions {
        choice: EngineChoice::Onnx,
        onnxruntime: Some(library),
        onnx_model: Some(onnx_model.into()),
    };
    Some(Arc::new(
        LocalBert::load_with(&dir, DEFAULT_LOCAL_MODEL, 4, &options).unwrap(),
    ))
}

fn float32() -> Option<Arc<LocalBert>> {
    static MODEL: OnceLock<Option<Arc<LocalBert>>> = OnceLock::new();
    MODEL.get_or_init(|| load("model.onnx")).clone()
}

fn int8() -> Option<Arc<LocalBert>> {
    static MODEL: OnceLock<Option<Arc<LocalBert>>> = OnceLock::new();
    MODEL.get_or_init(|| load("model_qint8.onnx")).clone()
}

/// The reference texts and vectors (`tests/fixtures/make_reference.py`).
fn reference() -> (Vec<String>, Vec<Vec<f32>>) {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/minilm_reference.json")).unwrap();
    fixture["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = c["text"].as_str().unwrap().to_owned();
            let vector = c["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            (text, vector)
        })
        .unzip()
}

#[tokio::test]
async fn float32_matches_the_reference_like_candle() {
    let Some(model) = float32() else { return };
    assert_eq!(model.engine(), "onnx (model.onnx)");
    assert_eq!(model.model(), DEFAULT_LOCAL_MODEL);
    assert_eq!(model.dims(), 384);
    let (texts, want) = reference();
    // In batches (padding masked) and one by one (the query path).
    let batched = model.embed_documents(&texts, &|_, _| {}).await.unwrap();
    for ((text, got), want) in texts.iter().zip(&batched).zip(&want) {
        assert_close(got, want, 1e-5);
        let single = model.embed_query(text).await.unwrap();
        assert_close(&single, want, 1e-5);
    }
}

#[tokio::test]
async fn int8_stays_close_to_the_reference_and_ranks_alike() {
    let Some(model) = int8() else { return };
    assert_eq!(model.engine(), "onnx (model_qint8.onnx)");
    let (texts, want) = reference();
    let got = model.embed_documents(&texts, &|_, _| {}).await.unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((norm(g) - 1.0).abs() < 1e-5);
        let cosine = dot(g, w);
        assert!(
            cosine > 0.95,
            "int8 vector off the reference: cosine {cosine}"
        );
    }
    common::assert_related_text_scores_higher(model.as_ref()).await;
}

/// More texts than one batch run on the per-core sessions side by side; every vector must come
/// back to its own text. (int8 activations are quantised per batch, so a text's vector moves a
/// little with its batch-mates: compared by nearest neighbour, not to 1e-5.)
#[tokio::test]
async fn many_texts_across_workers_keep_their_order() {
    let Some(model) = int8() else { return };
    let topics = [
        "bake sourdough bread",
        "repair a bicycle tyre",
        "configure a firewall",
        "plant tomatoes in spring",
        "write a sonnet about the sea",
        "train a puppy to sit",
        "invest in index funds",
    ];
    let texts: Vec<String> = (0..70)
        .map(|i| format!("{} {}", topics[i % 7], "step by step ".repeat(i / 7)))
        .collect();
    let all = model.embed_documents(&texts, &|_, _| {}).await.unwrap();
    for i in [0, 8, 17, 33, 69] {
        let single = model.embed_query(&texts[i]).await.unwrap();
        let nearest = (0..all.len())
            .max_by(|&a, &b| dot(&all[a], &single).total_cmp(&dot(&all[b], &single)))
            .unwrap();
        assert!(dot(&all[i], &single) > 0.97, "text {i}");
        assert_eq!(
            nearest % 7,
            i % 7,
            "text {i} came back nearest to text {nearest}"
        );
    }
}

#[tokio::test]
async fn auto_picks_onnx_runtime_from_the_settings_and_candle_without_it() {
    let Some((dir, library)) = setup() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let data_dir = DataDir::at(data.path());
    let dir_value = dir.to_string_lossy().into_owned();
    let library_value = library.to_string_lossy().into_owned();
    let settings = EmbeddingSettings::default();

    let with_runtime = |name: &str| match name {
        "DEVLENS_MODEL_DIR" => Some(dir_value.clone()),
        "ORT_DYLIB_PATH" => Some(library_value.clone()),
        _ => None,
    };
    let model = LocalBert::from_settings_with_env(&settings, &data_dir, &with_runtime).unwrap();
    assert_eq!(model.engine(), "onnx (model_qint8.onnx)");

    let candle = |name: &str| match name {
        "DEVLENS_MODEL_DIR" => Some(dir_value.clone()),
        "DEVLENS_LOCAL_ENGINE" => Some("candle".into()),
        _ => None,
    };
    let model = LocalBert::from_settings_with_env(&settings, &data_dir, &candle).unwrap();
    assert_eq!(model.engine(), "candle");

    // Asking for ONNX Runtime with a model file that is not there names what is missing.
    let missing = |name: &str| match name {
        "DEVLENS_MODEL_DIR" => Some(dir_value.clone()),
        "DEVLENS_LOCAL_ENGINE" => Some("onnx".into()),
        "DEVLENS_ONNX_MODEL" => Some("nope.onnx".into()),
        _ => None,
    };
    let err = LocalBert::from_settings_with_env(&settings, &data_dir, &missing)
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope.onnx"), "{err}");

    // A misspelt engine is a settings error saying the choices.
    let typo = |name: &str| match name {
        "DEVLENS_MODEL_DIR" => Some(dir_value.clone()),
        "DEVLENS_LOCAL_ENGINE" => Some("tensorflow".into()),
        _ => None,
    };
    let err = embedder_from_settings_with_env(&settings, &data_dir, &typo)
        .expect_err("an unknown engine is refused")
        .to_string();
    assert!(err.contains("auto, candle or onnx"), "{err}");
}
