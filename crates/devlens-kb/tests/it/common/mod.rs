//! Helpers of the knowledge-base tests: the test model, a knowledge base in a temporary folder,
//! and the golden corpus.

// Shared by several test crates, each using a part; test code may unwrap.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;

use devlens_core::Config;
use devlens_embed::{Embedder, LocalBert};
use devlens_kb::KnowledgeBase;

/// The all-MiniLM-L6-v2 folder: `DEVLENS_MODEL_DIR`, else `.testdata/` in the workspace. `None`
/// (with a notice) when absent, unless `DEVLENS_REQUIRE_TESTDATA=1` makes that a failure.
pub fn test_model() -> Option<Arc<dyn Embedder>> {
    let dir = std::env::var_os("DEVLENS_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.testdata/models/all-MiniLM-L6-v2")
        });
    if !dir.join("model.safetensors").is_file() {
        let setup = format!(
            "the local model test data is missing at {}: run scripts/fetch-testdata",
            dir.display()
        );
        assert!(
            std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() != Ok("1"),
            "{setup}"
        );
        eprintln!("SKIPPED: {setup}");
        return None;
    }
    Some(Arc::new(
        LocalBert::load_with(
            &dir,
            devlens_embed::DEFAULT_LOCAL_MODEL,
            32,
            // The engine users get by default, chosen as devlens chooses it: ONNX Runtime where
            // scripts/test provides it (several times faster than candle here), else candle.
            // Both engines are tested as engines in devlens-embed.
            &devlens_embed::EngineOptions::resolve(
                &devlens_core::EmbeddingSettings::default(),
                // No data dir here: the model's folder stands in (it holds no runtime).
                &devlens_core::DataDir::at(&dir),
                &|key| std::env::var(key).ok(),
            )
            .unwrap(),
        )
        .expect("the test model loads"),
    ))
}

/// A knowledge base in a fresh folder, with `embedder` (or none, for `Err(reason)`).
pub fn kb_in(
    dir: &tempfile::TempDir,
    embedder: Result<Arc<dyn Embedder>, String>,
) -> KnowledgeBase {
    let config = Config::with_data_dir(dir.path());
    KnowledgeBase::open(&config)
        .unwrap()
        .with_embedder(embedder)
}

pub fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

pub fn golden_solutions() -> String {
    std::fs::read_to_string(golden_dir().join("solutions.json")).unwrap()
}

pub fn golden_queries() -> String {
    std::fs::read_to_string(golden_dir().join("queries.tsv")).unwrap()
}

/// A request the mock LLM server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    pub body: serde_json::Value,
}

/// A local OpenAI-compatible server answering the n-th request (from 0) with `reply(n)`:
/// status, extra headers, JSON body. Returns its `/v1` base URL and what it saw.
pub async fn mock_llm(
    reply: impl Fn(usize) -> (u16, Vec<(&'static str, String)>, serde_json::Value)
    + Send
    + Sync
    + 'static,
) -> (String, Arc<std::sync::Mutex<Vec<Seen>>>) {
    use axum::http::{HeaderMap, StatusCode, Uri};
    use axum::response::IntoResponse;
    let seen: Arc<std::sync::Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let reply = Arc::new(reply);
    let app = axum::Router::new().fallback(
        move |uri: Uri, headers: HeaderMap, body: axum::body::Bytes| {
            let log = log.clone();
            let reply = reply.clone();
            async move {
                let n = {
                    let mut log = log.lock().unwrap();
                    log.push(Seen {
                        path: uri.path().to_string(),
                        authorization: headers
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .map(String::from),
                        body: serde_json::from_slice(&body).unwrap_or_default(),
                    });
                    log.len() - 1
                };
                let (status, extra, json) = reply(n);
                let mut response =
                    (StatusCode::from_u16(status).unwrap(), axum::Json(json)).into_response();
                for (name, value) in extra {
                    response.headers_mut().insert(name, value.parse().unwrap());
                }
                response
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}
