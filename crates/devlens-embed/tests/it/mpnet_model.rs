//! The local embedder on all-mpnet-base-v2 (MPNet, candle engine), the optional larger model.
//! Runs only when `DEVLENS_MPNET_DIR` names its folder (`scripts/fetch-mpnet` puts it in
//! `.testdata/models/all-mpnet-base-v2`); skipped otherwise, CI included (438 MB).

use crate::common;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use common::assert_close;
use devlens_embed::{Embedder, EngineChoice, EngineOptions, LocalBert};

const NAME: &str = "sentence-transformers/all-mpnet-base-v2";

fn mpnet_dir() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("DEVLENS_MPNET_DIR").filter(|v| !v.is_empty()) else {
        eprintln!(
            "SKIPPED: DEVLENS_MPNET_DIR is not set (scripts/fetch-mpnet fetches all-mpnet-base-v2)"
        );
        return None;
    };
    Some(PathBuf::from(dir))
}

fn model() -> Option<Arc<LocalBert>> {
    static MODEL: OnceLock<Option<Arc<LocalBert>>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = mpnet_dir()?;
            Some(Arc::new(LocalBert::load(&dir, NAME, 4).unwrap()))
        })
        .clone()
}

#[tokio::test]
async fn reports_its_shape() {
    let Some(model) = model() else { return };
    assert_eq!(model.dims(), 768);
    // sentence_bert_config.json's 384.
    assert_eq!(model.max_tokens(), 384);
    assert_eq!(LocalBert::engine(&model), "candle");
}

/// Reference values from an independent NumPy MPNet forward pass over the same weights
/// (`tests/fixtures/make_mpnet_reference.py`): each vector's first components and the sum of
/// all of them, for texts that exercise padding, relative distances past 128 and truncation.
#[tokio::test]
async fn matches_the_reference_embeddings() {
    let Some(model) = model() else { return };
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/mpnet_reference.json")).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    let texts: Vec<String> = cases
        .iter()
        .map(|c| c["text"].as_str().unwrap().to_owned())
        .collect();
    // Batched (padded, length-sorted) and one by one as queries (no padding, no mask).
    let batched = model.embed_documents(&texts, &|_, _| {}).await.unwrap();
    for (case, got) in cases.iter().zip(&batched) {
        let leading: Vec<f32> = case["leading"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let text = case["text"].as_str().unwrap();
        assert_close(&got[..leading.len()], &leading, 1e-5);
        let sum: f32 = got.iter().sum();
        let want = case["sum"].as_f64().unwrap() as f32;
        assert!((sum - want).abs() < 1e-4, "{text:?}: sum {sum} vs {want}");
        let query = model.embed_query(text).await.unwrap();
        assert_close(&query, got, 1e-5);
    }
}

/// The anchor everyone can check: what sentence-transformers prints for these sentences with
/// this model (first and last three components).
#[tokio::test]
async fn matches_sentence_transformers_printed_output() {
    let Some(model) = model() else { return };
    let texts = vec![
        "This is an example sentence".to_owned(),
        "Each sentence is converted".to_owned(),
    ];
    let got = model.embed_documents(&texts, &|_, _| {}).await.unwrap();
    let want: [([f32; 3], [f32; 3]); 2] = [
        (
            [0.0225026, -0.07829173, -0.02303073],
            [-0.00827929, 0.02652686, -0.00201898],
        ),
        (
            [0.04170233, 0.00109741, -0.0155342],
            [-0.02181629, -0.0635936, -0.00875287],
        ),
    ];
    for (v, (first, last)) in got.iter().zip(want) {
        assert_close(&v[..3], &first, 1e-5);
        assert_close(&v[v.len() - 3..], &last, 1e-5);
    }
}

#[tokio::test]
async fn vectors_are_unit_length_and_similar_questions_score_higher() {
    let Some(model) = model() else { return };
    common::assert_related_text_scores_higher(model.as_ref()).await;
}

#[test]
fn the_onnx_engine_refuses_mpnet_with_a_clear_error() {
    let Some(dir) = mpnet_dir() else { return };
    let onnx = EngineOptions {
        choice: EngineChoice::Onnx,
        ..EngineOptions::default()
    };
    let err = LocalBert::load_with(&dir, NAME, 4, &onnx)
        .unwrap_err()
        .to_string();
    assert!(err.contains("BERT models only"), "{err}");
    assert!(err.contains("candle"), "{err}");
}
