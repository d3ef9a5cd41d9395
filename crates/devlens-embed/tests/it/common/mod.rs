//! Helpers shared by the integration tests: the test model folder and a scripted HTTP server.

// Shared by several test crates, each using a part; test code may unwrap.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// The all-MiniLM-L6-v2 folder for tests: `DEVLENS_MODEL_DIR`, else `.testdata/` in the
/// workspace. `None` (with a notice) when absent, unless `CI` or `DEVLENS_REQUIRE_TESTDATA=1`
/// make its absence a failure.
pub fn test_model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("DEVLENS_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.testdata/models/all-MiniLM-L6-v2")
        });
    let complete = ["config.json", "tokenizer.json", "model.safetensors"]
        .iter()
        .all(|f| dir.join(f).is_file());
    if complete {
        return Some(dir);
    }
    missing_test_data(&format!(
        "the local model test data is missing at {}. Run scripts/fetch-testdata \
         (or point DEVLENS_MODEL_DIR at an all-MiniLM-L6-v2 folder)",
        dir.display()
    ))
}

/// A question scores its matching text well above an unrelated one, every vector of unit
/// length: the semantics check both engines share.
pub async fn assert_related_text_scores_higher(model: &dyn devlens_embed::Embedder) {
    let query = model
        .embed_query("How do I create an issue?")
        .await
        .unwrap();
    let docs = model
        .embed_documents(
            &["Create an issue".into(), "Delete a repository".into()],
            &|_, _| {},
        )
        .await
        .unwrap();
    for v in std::iter::once(&query).chain(&docs) {
        assert!((norm(v) - 1.0).abs() < 1e-5, "norm {}", norm(v));
    }
    let related = devlens_embed::dot(&query, &docs[0]);
    let unrelated = devlens_embed::dot(&query, &docs[1]);
    assert!(
        related > unrelated + 0.1,
        "related {related} vs unrelated {unrelated}"
    );
}

/// Absent test data: a failure under `CI` or `DEVLENS_REQUIRE_TESTDATA=1`, else a skip notice
/// and `None`.
pub fn missing_test_data<T>(setup: &str) -> Option<T> {
    let required = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
        || std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() == Ok("1");
    assert!(!required, "{setup}");
    eprintln!("SKIPPED: {setup}");
    None
}

/// One request as the mock server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: serde_json::Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// What the mock answers: status, extra headers, JSON body.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: serde_json::Value,
}

impl Reply {
    pub fn ok(body: serde_json::Value) -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    pub fn status(status: u16, body: serde_json::Value) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body,
        }
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

type Script = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

/// A local HTTP server on 127.0.0.1 that records every request and answers by `script(request,
/// number of the request starting at 0)`.
pub struct MockServer {
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    pub async fn start(script: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> Self {
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let seen = requests.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let seen = seen.clone();
                let script = script.clone();
                async move {
                    let recorded = Recorded {
                        method,
                        path: uri.path().to_owned(),
                        query: uri.query().map(str::to_owned),
                        headers,
                        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
                    };
                    let n = {
                        let mut seen = seen.lock().unwrap();
                        seen.push(recorded.clone());
                        seen.len() - 1
                    };
                    let reply = script(&recorded, n);
                    let mut response: Response = (
                        StatusCode::from_u16(reply.status).unwrap(),
                        axum::Json(reply.body),
                    )
                        .into_response();
                    for (name, value) in reply.headers {
                        response.headers_mut().insert(name, value.parse().unwrap());
                    }
                    response
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url,
            requests,
            task,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A deterministic, deliberately non-normalised vector for `text`, so tests can check both the
/// order and the normalisation of what an embedder returns.
pub fn fake_vector(text: &str, dims: usize) -> Vec<f32> {
    let sum: u32 = text.bytes().map(u32::from).sum();
    (0..dims)
        .map(|i| {
            ((sum as usize + i * 7) % 13) as f32 + 1.0 + text.len() as f32 * (i == 0) as u8 as f32
        })
        .collect()
}

pub fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    devlens_embed::l2_normalize(&mut v);
    v
}

pub fn assert_close(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len(), "lengths differ");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol,
            "component {i}: {x} vs {y} (tolerance {tol})"
        );
    }
}

pub fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}
