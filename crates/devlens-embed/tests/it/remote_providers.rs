//! OpenAI, Gemini and Ollama against a local mock server: request shape, batching, retries on
//! 429/503 honouring `Retry-After`, normalisation, order, and keys kept out of errors.

use crate::common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{MockServer, Reply, assert_close, fake_vector, norm, normalized};
use devlens_core::{DataDir, EmbeddingSettings};
use devlens_embed::{
    ApiKey, EmbedError, Embedder, Gemini, GeminiConfig, Ollama, OllamaConfig, OpenAi, OpenAiConfig,
    Provider, RemoteOptions, RetryPolicy, embedder_from_settings_with_env,
};
use serde_json::json;

const OPENAI_KEY: &str = "sk-test-0123456789abcdef";
const GEMINI_KEY: &str = "AIza-test-0123456789abcdef";

/// No pacing and quick retries, so the tests take milliseconds.
fn fast_options(batch_size: usize) -> RemoteOptions {
    RemoteOptions {
        batch_size,
        inter_batch_delay: Duration::ZERO,
        retry: RetryPolicy {
            max_attempts: 4,
            max_connect_attempts: 2,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            max_total_wait: Duration::from_secs(5),
        },
        request_timeout: Duration::from_secs(10),
    }
}

fn texts(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("GET /repos/{{owner}}/items/{i} — item number {i}"))
        .collect()
}

fn input_strings(body: &serde_json::Value) -> Vec<String> {
    body["input"]
        .as_array()
        .expect("input array")
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// Records progress calls.
struct ProgressLog(Mutex<Vec<(usize, usize)>>);

impl ProgressLog {
    fn new() -> Self {
        Self(Mutex::new(Vec::new()))
    }
    fn callback(&self) -> impl Fn(usize, usize) + Send + Sync + '_ {
        move |done, total| self.0.lock().unwrap().push((done, total))
    }
    fn calls(&self) -> Vec<(usize, usize)> {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn openai_batches_retries_after_429_and_returns_unit_vectors_in_order() {
    let server = MockServer::start(|req, n| {
        if n == 1 {
            // The second batch is rate-limited once.
            return Reply::status(429, json!({"error": {"message": "Rate limit reached"}}))
                .with_header("retry-after", "0");
        }
        let inputs = input_strings(&req.body);
        // Answer out of order: the embedder must sort by `index`.
        let data: Vec<_> = inputs
            .iter()
            .enumerate()
            .rev()
            .map(
                |(i, t)| json!({"object": "embedding", "index": i, "embedding": fake_vector(t, 8)}),
            )
            .collect();
        Reply::ok(json!({"object": "list", "data": data, "model": "text-embedding-3-small"}))
    })
    .await;

    let embedder = OpenAi::new(OpenAiConfig {
        base_url: format!("{}/v1/", server.url),
        dimensions: Some(8),
        options: fast_options(2),
        ..OpenAiConfig::new(ApiKey::new(OPENAI_KEY))
    })
    .unwrap();
    assert_eq!(embedder.dims(), 8);

    let input = texts(5);
    let log = ProgressLog::new();
    let callback = log.callback();
    let vectors = embedder.embed_documents(&input, &callback).await.unwrap();

    assert_eq!(vectors.len(), 5);
    for (text, v) in input.iter().zip(&vectors) {
        assert!((norm(v) - 1.0).abs() < 1e-5);
        assert_close(v, &normalized(fake_vector(text, 8)), 1e-6);
    }
    assert_eq!(log.calls(), vec![(2, 5), (4, 5), (5, 5)]);

    let requests = server.requests();
    assert_eq!(requests.len(), 4, "3 batches + 1 retry");
    assert_eq!(
        requests[1].body, requests[2].body,
        "the retry resends the same batch"
    );
    for req in &requests {
        assert_eq!(req.method, "POST");
        assert_eq!(req.path, "/v1/embeddings");
        assert_eq!(
            req.header("authorization"),
            Some(format!("Bearer {OPENAI_KEY}").as_str())
        );
        assert!(
            req.header("content-type")
                .unwrap()
                .starts_with("application/json")
        );
        assert_eq!(req.body["model"], "text-embedding-3-small");
        assert_eq!(req.body["dimensions"], 8);
    }
    assert_eq!(input_strings(&requests[0].body), input[..2]);
    assert_eq!(input_strings(&requests[3].body), input[4..]);
}

#[tokio::test]
async fn openai_rejected_key_is_a_clear_error_without_the_key() {
    let server = MockServer::start(|_, _| {
        Reply::status(
            401,
            json!({"error": {
                "message": format!("Incorrect API key provided: {OPENAI_KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
                "type": "invalid_request_error", "code": "invalid_api_key"}}),
        )
    })
    .await;
    let embedder = OpenAi::new(OpenAiConfig {
        base_url: server.url.clone(),
        options: fast_options(16),
        ..OpenAiConfig::new(ApiKey::new(OPENAI_KEY))
    })
    .unwrap();
    let err = embedder.embed_query("hello").await.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, EmbedError::Api { status: 401, .. }),
        "{err:?}"
    );
    assert!(!text.contains(OPENAI_KEY), "key leaked: {text}");
    assert!(
        !format!("{err:?}").contains(OPENAI_KEY),
        "key leaked in Debug"
    );
    assert!(
        !format!("{embedder:?}").contains(OPENAI_KEY),
        "key leaked in Debug"
    );
    assert!(
        text.contains("Incorrect API key provided: <redacted>"),
        "{text}"
    );
    assert!(text.contains("OPENAI_API_KEY"), "{text}");
    assert!(
        !err.is_unavailable(),
        "a wrong key must be reported, not silently skipped"
    );
    assert_eq!(server.requests().len(), 1, "4xx is not retried");
}

#[tokio::test]
async fn openai_persistent_rate_limit_gives_up_after_the_attempt_budget() {
    let server = MockServer::start(|_, _| {
        Reply::status(
            429,
            json!({"error": {"message": "You exceeded your current quota"}}),
        )
    })
    .await;
    let embedder = OpenAi::new(OpenAiConfig {
        base_url: server.url.clone(),
        options: fast_options(16),
        ..OpenAiConfig::new(ApiKey::new(OPENAI_KEY))
    })
    .unwrap();
    let err = embedder.embed_query("hello").await.unwrap_err();
    assert!(
        matches!(
            err,
            EmbedError::RetriesExhausted {
                status: 429,
                attempts: 4,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.is_unavailable());
    assert!(
        err.to_string().contains("exceeded your current quota"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn a_retry_after_beyond_the_wait_budget_fails_fast() {
    let server = MockServer::start(|_, _| {
        Reply::status(503, json!({"error": {"message": "overloaded"}}))
            .with_header("retry-after", "3600")
    })
    .await;
    let embedder = OpenAi::new(OpenAiConfig {
        base_url: server.url.clone(),
        options: fast_options(16),
        ..OpenAiConfig::new(ApiKey::new(OPENAI_KEY))
    })
    .unwrap();
    let started = Instant::now();
    let err = embedder.embed_query("hello").await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(err.to_string().contains("retry budget"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn gemini_sends_task_types_dimensions_and_the_key_header_only() {
    let server = MockServer::start(|req, n| {
        if n == 0 {
            return Reply::status(503, json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}))
                .with_header("retry-after", "1");
        }
        let embeddings: Vec<_> = req.body["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let text = r["content"]["parts"][0]["text"].as_str().unwrap();
                json!({"values": fake_vector(text, 4)})
            })
            .collect();
        Reply::ok(json!({"embeddings": embeddings}))
    })
    .await;
    let embedder = Gemini::new(GeminiConfig {
        base_url: format!("{}/v1beta", server.url),
        model: "models/gemini-embedding-001".into(),
        dimensions: Some(4),
        options: fast_options(3),
        ..GeminiConfig::new(ApiKey::new(GEMINI_KEY))
    })
    .unwrap();
    assert_eq!(embedder.model(), "gemini-embedding-001");

    let input = texts(4);
    let started = Instant::now();
    let vectors = embedder.embed_documents(&input, &|_, _| {}).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After: 1 was not honoured"
    );
    for (text, v) in input.iter().zip(&vectors) {
        assert_close(v, &normalized(fake_vector(text, 4)), 1e-6);
    }
    let query = embedder.embed_query("list my repositories").await.unwrap();
    assert_close(
        &query,
        &normalized(fake_vector("list my repositories", 4)),
        1e-6,
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 4, "2 document batches + 1 retry + 1 query");
    for (i, req) in requests.iter().enumerate() {
        assert_eq!(
            req.path,
            "/v1beta/models/gemini-embedding-001:batchEmbedContents"
        );
        assert_eq!(req.query, None, "the key must not travel in the URL");
        assert_eq!(req.header("x-goog-api-key"), Some(GEMINI_KEY));
        assert_eq!(req.header("authorization"), None);
        let task = if i == 3 {
            "RETRIEVAL_QUERY"
        } else {
            "RETRIEVAL_DOCUMENT"
        };
        for r in req.body["requests"].as_array().unwrap() {
            assert_eq!(r["model"], "models/gemini-embedding-001");
            assert_eq!(r["taskType"], task);
            assert_eq!(r["outputDimensionality"], 4);
        }
    }
    assert_eq!(requests[1].body["requests"].as_array().unwrap().len(), 3);
    assert_eq!(requests[2].body["requests"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn gemini_error_echoing_the_key_is_redacted() {
    let server = MockServer::start(|_, _| {
        Reply::status(
            400,
            json!({"error": {"code": 400, "message": format!("API key not valid: {GEMINI_KEY}"), "status": "INVALID_ARGUMENT"}}),
        )
    })
    .await;
    let embedder = Gemini::new(GeminiConfig {
        base_url: server.url.clone(),
        options: fast_options(16),
        ..GeminiConfig::new(ApiKey::new(GEMINI_KEY))
    })
    .unwrap();
    let err = embedder.embed_query("q").await.unwrap_err().to_string();
    assert!(!err.contains(GEMINI_KEY), "key leaked: {err}");
    assert!(err.contains("API key not valid"), "{err}");
    assert!(err.contains("HTTP 400"), "{err}");
}

#[tokio::test]
async fn ollama_retries_with_backoff_and_learns_the_vector_size() {
    let server = MockServer::start(|req, n| {
        if n == 0 {
            return Reply::status(429, json!({"error": "server busy"}));
        }
        let embeddings: Vec<_> = input_strings(&req.body)
            .iter()
            .map(|t| fake_vector(t, 5))
            .collect();
        Reply::ok(json!({"model": "my-embedder", "embeddings": embeddings}))
    })
    .await;
    let embedder = Ollama::new(OllamaConfig {
        model: "my-embedder".into(),
        host: server.url.clone(),
        options: fast_options(16),
    })
    .unwrap();
    assert_eq!(embedder.dims(), 0, "unknown model: size not known yet");
    let input = texts(3);
    let vectors = embedder.embed_documents(&input, &|_, _| {}).await.unwrap();
    assert_eq!(embedder.dims(), 5);
    for (text, v) in input.iter().zip(&vectors) {
        assert_close(v, &normalized(fake_vector(text, 5)), 1e-6);
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].path, "/api/embed");
    assert_eq!(requests[1].body["model"], "my-embedder");
    assert_eq!(input_strings(&requests[1].body), input);
}

#[tokio::test]
async fn ollama_not_running_is_unavailable_with_a_hint() {
    // A port that was just free: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let embedder = Ollama::new(OllamaConfig {
        host: addr.to_string(),
        options: fast_options(16),
        ..OllamaConfig::default()
    })
    .unwrap();
    let err = embedder.embed_query("q").await.unwrap_err();
    assert!(matches!(err, EmbedError::Connection { .. }), "{err:?}");
    assert!(err.is_unavailable());
    let text = err.to_string();
    assert!(text.contains("ollama serve"), "{text}");
    assert!(text.contains("after 2 attempts"), "{text}");
}

#[tokio::test]
async fn settings_point_openai_at_a_compatible_server_and_queries_are_cached() {
    let server = MockServer::start(|req, _| {
        let data: Vec<_> = input_strings(&req.body)
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"index": i, "embedding": fake_vector(t, 6)}))
            .collect();
        Reply::ok(json!({"data": data}))
    })
    .await;
    let settings = EmbeddingSettings {
        provider: Some("openai".into()),
        model: Some("local-embedder".into()),
        base_url: Some(server.url.clone()),
        ..Default::default()
    };
    let env = |name: &str| (name == "OPENAI_API_KEY").then(|| OPENAI_KEY.to_owned());
    let data = tempfile::tempdir().unwrap();
    let embedder =
        embedder_from_settings_with_env(&settings, &DataDir::at(data.path()), &env).unwrap();
    assert_eq!(embedder.provider(), Provider::OpenAi);
    assert_eq!(embedder.model(), "local-embedder");

    let first = embedder
        .embed_query("how do I create an issue")
        .await
        .unwrap();
    let second = embedder
        .embed_query("how do I create an issue")
        .await
        .unwrap();
    assert_eq!(first, second);
    assert_eq!(embedder.dims(), 6);
    assert_eq!(
        server.requests().len(),
        1,
        "the repeated query came from the cache"
    );
    assert!(!format!("{embedder:?}").contains(OPENAI_KEY));
}

/// The configured endpoint is allowed even on this machine (the mock above, Ollama's default
/// `127.0.0.1:11434`), but link-local and cloud metadata addresses never: a provider pointed
/// there, or redirecting there, is refused at once with the guard's sentence, not retried.
#[tokio::test]
async fn endpoints_on_the_metadata_address_are_refused_even_when_configured() {
    let openai = OpenAi::new(OpenAiConfig {
        base_url: "http://169.254.169.254/latest/meta-data".into(),
        options: fast_options(16),
        ..OpenAiConfig::new(ApiKey::new(OPENAI_KEY))
    })
    .unwrap();
    let ollama = Ollama::new(OllamaConfig {
        host: "http://metadata.google.internal".into(),
        options: fast_options(16),
        ..OllamaConfig::default()
    })
    .unwrap();
    for err in [
        openai.embed_query("q").await.unwrap_err(),
        ollama.embed_query("q").await.unwrap_err(),
    ] {
        assert!(matches!(err, EmbedError::InvalidSettings(_)), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("refused always"), "{text}");
        assert!(text.contains("[embedding] base_url"), "{text}");
        assert!(!text.contains(OPENAI_KEY), "{text}");
    }

    // An allowed endpoint that redirects to the metadata service: refused on the way, once.
    let server = MockServer::start(|_, _| {
        Reply::status(307, json!({})).with_header(
            "location",
            "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        )
    })
    .await;
    let redirected = OpenAi::new(OpenAiConfig {
        base_url: server.url.clone(),
        options: fast_options(16),
        ..OpenAiConfig::new(ApiKey::new(OPENAI_KEY))
    })
    .unwrap();
    let err = redirected.embed_query("q").await.unwrap_err();
    assert!(matches!(err, EmbedError::InvalidSettings(_)), "{err:?}");
    assert!(err.to_string().contains("refused always"), "{err}");
    assert_eq!(server.requests().len(), 1, "a refusal is not retried");
}
