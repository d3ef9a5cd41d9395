//! Gemini embeddings (`POST {base}/models/{model}:batchEmbedContents`).
//!
//! Gemini embeds documents and queries differently (task types `RETRIEVAL_DOCUMENT` and
//! `RETRIEVAL_QUERY`), which measurably helps retrieval. The key goes in the `x-goog-api-key`
//! header only — never in the URL, where proxies and logs would see it.

use serde::Deserialize;

use crate::remote::{Auth, RemoteClient, TextRole, remote_embedder, trim_base};
use crate::{ApiKey, EmbedError, Provider, RemoteOptions};

pub const DEFAULT_GEMINI_MODEL: &str = "gemini-embedding-001";
pub const DEFAULT_GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// What a [`Gemini`] embedder needs.
#[derive(Debug, Clone)]
pub struct GeminiConfig {
    pub api_key: ApiKey,
    /// With or without the `models/` prefix.
    pub model: String,
    pub base_url: String,
    /// `outputDimensionality` (gemini-embedding-001: 768, 1536 or 3072); `None` = the model's.
    pub dimensions: Option<usize>,
    pub options: RemoteOptions,
}

impl GeminiConfig {
    pub fn new(api_key: ApiKey) -> Self {
        Self {
            api_key,
            model: DEFAULT_GEMINI_MODEL.into(),
            base_url: DEFAULT_GEMINI_BASE_URL.into(),
            dimensions: None,
            options: RemoteOptions::default(),
        }
    }
}

/// Google Gemini embeddings.
#[derive(Debug)]
pub struct Gemini {
    client: RemoteClient,
    url: String,
    dimensions: Option<usize>,
}

/// Gemini's name for what the texts are for.
fn task_type(role: TextRole) -> &'static str {
    match role {
        TextRole::Document => "RETRIEVAL_DOCUMENT",
        TextRole::Query => "RETRIEVAL_QUERY",
    }
}

#[derive(Deserialize)]
struct BatchResponse {
    #[serde(default)]
    embeddings: Vec<ContentEmbedding>,
}

#[derive(Deserialize)]
struct ContentEmbedding {
    values: Vec<f32>,
}

impl Gemini {
    /// `batchEmbedContents` takes at most this many requests.
    const MAX_BATCH: usize = 100;

    pub fn new(mut config: GeminiConfig) -> Result<Self, EmbedError> {
        if config.options.batch_size > Self::MAX_BATCH {
            tracing::warn!(
                batch_size = config.options.batch_size,
                max = Self::MAX_BATCH,
                "Gemini accepts at most 100 texts per request; using 100"
            );
            config.options.batch_size = Self::MAX_BATCH;
        }
        let model = config.model.trim().trim_start_matches("models/").to_owned();
        let prior = config.dimensions.or_else(|| known_dims(&model));
        let url = format!(
            "{}/models/{model}:batchEmbedContents",
            trim_base(&config.base_url)
        );
        let client = RemoteClient::new(
            Provider::Gemini,
            model,
            config.options,
            prior,
            Auth::Header("x-goog-api-key", &config.api_key, "GEMINI_API_KEY"),
            &url,
        )?;
        Ok(Self {
            client,
            url,
            dimensions: config.dimensions,
        })
    }

    async fn request(&self, texts: &[String], role: TextRole) -> Result<Vec<Vec<f32>>, EmbedError> {
        let model_ref = format!("models/{}", self.client.model);
        let requests: Vec<serde_json::Value> = texts
            .iter()
            .map(|text| {
                let mut request = serde_json::json!({
                    "model": model_ref,
                    "content": { "parts": [{ "text": text }] },
                    "taskType": task_type(role),
                });
                if let Some(dims) = self.dimensions {
                    request["outputDimensionality"] = dims.into();
                }
                request
            })
            .collect();
        let body = serde_json::json!({ "requests": requests });
        let hint = format!(
            "Check the model name `{}` (GEMINI_EMBED_MODEL) and the base URL",
            self.client.model
        );
        let response: BatchResponse = self.client.post_json(&self.url, &body, &hint).await?;
        Ok(response.embeddings.into_iter().map(|e| e.values).collect())
    }
}

fn known_dims(model: &str) -> Option<usize> {
    match model {
        "gemini-embedding-001" => Some(3072),
        "text-embedding-004" | "embedding-001" => Some(768),
        _ => None,
    }
}

remote_embedder!(Gemini);
