//! The local all-MiniLM-L6-v2 embedder on the real model (see `common::test_model_dir` for the
//! test data): agreement with an independent reference, semantics, batching invariants,
//! truncation, resolution and installation.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use common::{assert_close, test_model_dir};
use devlens_core::{DataDir, EmbeddingSettings};
use devlens_embed::{
    DEFAULT_LOCAL_MODEL, Embedder, LocalBert, Provider, dot, embedder_from_settings_with_env,
    install_from_folder, install_local_model_from,
};

/// The model, loaded once for the whole test binary (tests run on separate runtimes; the model
/// holds no runtime state).
fn model() -> Option<Arc<LocalBert>> {
    static MODEL: OnceLock<Option<Arc<LocalBert>>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = test_model_dir()?;
            Some(Arc::new(
                LocalBert::load(&dir, DEFAULT_LOCAL_MODEL, 4).unwrap(),
            ))
        })
        .clone()
}

fn strings(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| t.to_string()).collect()
}

#[tokio::test]
async fn reports_its_shape() {
    let Some(model) = model() else { return };
    assert_eq!(model.provider(), Provider::Local);
    assert_eq!(model.model(), "sentence-transformers/all-MiniLM-L6-v2");
    assert_eq!(model.dims(), 384);
    // sentence_bert_config.json's 256, not tokenizer.json's 128.
    assert_eq!(model.max_tokens(), 256);
}

/// Reference vectors computed outside Rust from the same weights (NumPy BERT forward pass with
/// the Python `tokenizers` package, mean pooling, normalisation: see
/// `tests/fixtures/make_reference.py`), so the pooling, masking and truncation are checked
/// against an independent implementation, not against themselves.
#[tokio::test]
async fn matches_the_reference_embeddings() {
    let Some(model) = model() else { return };
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/minilm_reference.json")).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    let texts: Vec<String> = cases
        .iter()
        .map(|c| c["text"].as_str().unwrap().to_owned())
        .collect();
    let vectors = model.embed_documents(&texts, &|_, _| {}).await.unwrap();
    for (case, got) in cases.iter().zip(&vectors) {
        let want: Vec<f32> = case["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        assert_close(got, &want, 1e-5);
    }
    // And the anchor everyone can check: sentence-transformers prints these first components
    // for this sentence with this model.
    assert_eq!(texts[0], "This is an example sentence");
    assert_close(
        &vectors[0][..5],
        &[0.067657, 0.063496, 0.048713, 0.079305, 0.037448],
        1e-5,
    );
}

#[tokio::test]
async fn vectors_are_unit_length_and_similar_questions_score_higher() {
    let Some(model) = model() else { return };
    common::assert_related_text_scores_higher(model.as_ref()).await;
}

#[tokio::test]
async fn length_sorted_batches_keep_input_order_and_match_single_queries() {
    let Some(model) = model() else { return };
    let texts = strings(&[
        "GET /repos/{owner}/{repo}/issues — List repository issues — tags: issues",
        "ping",
        "POST /repos/{owner}/{repo}/pulls — Create a pull request. Draft pull requests are \
         available in public repositories with GitHub Free and in public and private \
         repositories with paid plans.",
        "DELETE /repos/{owner}/{repo} — Delete a repository",
        "ping",
        "",
        "PATCH /user — Update the authenticated user",
        "GET /search/code — Search code across all repositories with qualifiers",
        "x",
    ]);
    let progress = Mutex::new(Vec::new());
    let on_progress = |done: usize, total: usize| progress.lock().unwrap().push((done, total));
    // Batch size 4 (see `model()`): 9 texts make 3 batches of mixed lengths.
    let batched = model.embed_documents(&texts, &on_progress).await.unwrap();
    assert_eq!(batched.len(), texts.len());
    assert_eq!(*progress.lock().unwrap(), vec![(4, 9), (8, 9), (9, 9)]);
    for (text, vector) in texts.iter().zip(&batched) {
        let single = model.embed_query(text).await.unwrap();
        assert_close(vector, &single, 1e-5);
    }
    assert_eq!(batched[1], batched[4], "identical texts, identical vectors");
    assert!(
        model
            .embed_documents(&[], &|_, _| {})
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn texts_are_truncated_at_256_tokens_not_128() {
    let Some(model) = model() else { return };
    let words = |word: &str, n: usize| vec![word; n].join(" ");
    // Tokens 129..256 still count ...
    let short = words("alpha", 150);
    let longer = format!("{short} {}", words("zebra", 50));
    // ... tokens past 256 do not.
    let base = words("alpha", 260);
    let tail_a = format!("{base} {}", words("zebra", 100));
    let tail_b = format!("{base} {}", words("apple", 100));
    let v = model
        .embed_documents(&[short, longer, tail_a, tail_b], &|_, _| {})
        .await
        .unwrap();
    assert!(dot(&v[0], &v[1]) < 0.9999, "tokens after 128 were dropped");
    assert_close(&v[2], &v[3], 1e-6);
}

#[tokio::test]
async fn settings_resolve_to_the_local_model_with_a_query_cache() {
    let Some(dir) = test_model_dir() else { return };
    let data = tempfile::tempdir().unwrap();
    let dir_value = dir.display().to_string();
    let env = |name: &str| (name == "DEVLENS_MODEL_DIR").then(|| dir_value.clone());
    let embedder = embedder_from_settings_with_env(
        &EmbeddingSettings::default(),
        &DataDir::at(data.path()),
        &env,
    )
    .unwrap();
    assert_eq!(embedder.provider(), Provider::Local);
    assert_eq!(embedder.dims(), 384);
    assert!(format!("{embedder:?}").contains("CachedEmbedder"));
    let a = embedder.embed_query("list pull requests").await.unwrap();
    let b = embedder.embed_query("list pull requests").await.unwrap();
    assert_eq!(a, b);

    // Without the model: a ModelMissing the search layer can fall back on.
    let err = embedder_from_settings_with_env(
        &EmbeddingSettings::default(),
        &DataDir::at(data.path()),
        &|_| None,
    );
    if let Err(err) = err {
        assert!(err.is_unavailable(), "{err}");
        assert!(err.to_string().contains("devlens model install"), "{err}");
    } // (else the model was found in this machine's Hugging Face cache — also fine)
}

fn assert_installed(target: &Path) {
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert!(target.join(f).is_file(), "{f} missing");
    }
    assert!(target.join("sentence_bert_config.json").is_file());
    let entries: Vec<String> = std::fs::read_dir(target.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        entries,
        vec!["all-MiniLM-L6-v2".to_owned()],
        "leftovers: {entries:?}"
    );
}

#[tokio::test]
async fn install_from_folder_copies_a_loadable_model_and_replaces_an_old_one() {
    let Some(src) = test_model_dir() else { return };
    let data = tempfile::tempdir().unwrap();
    let data_dir = DataDir::at(data.path());
    let target = install_from_folder(&src, &data_dir).unwrap();
    assert_eq!(target, data.path().join("models/all-MiniLM-L6-v2"));
    assert_installed(&target);
    // Again, over the existing install: still exactly one complete folder.
    std::fs::write(target.join("stale-file"), "old").unwrap();
    let target = install_from_folder(&src, &data_dir).unwrap();
    assert_installed(&target);
    assert!(!target.join("stale-file").exists());
    let loaded = LocalBert::load(&target, DEFAULT_LOCAL_MODEL, 32).unwrap();
    assert_eq!(loaded.dims(), 384);
}

#[tokio::test]
async fn install_downloads_from_a_hub_endpoint() {
    let Some(src) = test_model_dir() else { return };
    use axum::extract::Path as UrlPath;
    use axum::http::StatusCode;
    let requested = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = requested.clone();
    let app = axum::Router::new().route(
        "/sentence-transformers/all-MiniLM-L6-v2/resolve/main/{*file}",
        axum::routing::get(move |UrlPath(file): UrlPath<String>| {
            let src = src.clone();
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(file.clone());
                match std::fs::read(src.join(&file)) {
                    Ok(bytes) => Ok(bytes),
                    Err(_) => Err(StatusCode::NOT_FOUND),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let data = tempfile::tempdir().unwrap();
    let target = install_local_model_from(&DataDir::at(data.path()), &url)
        .await
        .unwrap();
    server.abort();
    assert_installed(&target);
    let requested = requested.lock().unwrap().clone();
    for f in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "1_Pooling/config.json",
    ] {
        assert!(
            requested.contains(&f.to_owned()),
            "{f} not fetched: {requested:?}"
        );
    }
}

#[tokio::test]
async fn install_failure_leaves_nothing_behind() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new(); // every file: 404
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let data = tempfile::tempdir().unwrap();
    let err = install_local_model_from(&DataDir::at(data.path()), &url)
        .await
        .unwrap_err()
        .to_string();
    server.abort();
    assert!(err.contains("404"), "{err}");
    let models = data.path().join("models");
    assert_eq!(std::fs::read_dir(models).unwrap().count(), 0);
}
