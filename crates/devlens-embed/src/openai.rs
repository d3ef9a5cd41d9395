//! OpenAI embeddings (`POST {base}/embeddings`), and any server that speaks the same API
//! (point `OPENAI_BASE_URL` or `[embedding] base_url` at it).

use serde::Deserialize;

use crate::remote::{Auth, RemoteClient, TextRole, remote_embedder, trim_base};
use crate::{ApiKey, EmbedError, Provider, RemoteOptions};

/// The model used when none is configured.
pub const DEFAULT_OPENAI_MODEL: &str = "text-embedding-3-small";
/// The public API; OpenAI-compatible servers are configured with a different base URL.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// What an [`OpenAi`] embedder needs; [`crate::embedder_from_settings`] fills it from settings
/// and the environment.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    pub api_key: ApiKey,
    pub model: String,
    pub base_url: String,
    /// Sent as `dimensions` (text-embedding-3-* can shorten their vectors); `None` = the model's.
    pub dimensions: Option<usize>,
    pub options: RemoteOptions,
}

impl OpenAiConfig {
    pub fn new(api_key: ApiKey) -> Self {
        Self {
            api_key,
            model: DEFAULT_OPENAI_MODEL.into(),
            base_url: DEFAULT_OPENAI_BASE_URL.into(),
            dimensions: None,
            options: RemoteOptions::default(),
        }
    }
}

/// OpenAI (or compatible) embeddings. OpenAI has no task types: documents and queries are
/// embedded the same way.
#[derive(Debug)]
pub struct OpenAi {
    client: RemoteClient,
    url: String,
    dimensions: Option<usize>,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    index: usize,
    embedding: Vec<f32>,
}

impl OpenAi {
    /// The embeddings endpoint takes at most this many inputs per request.
    const MAX_BATCH: usize = 2048;

    pub fn new(mut config: OpenAiConfig) -> Result<Self, EmbedError> {
        if config.options.batch_size > Self::MAX_BATCH {
            tracing::warn!(
                batch_size = config.options.batch_size,
                max = Self::MAX_BATCH,
                "OpenAI accepts at most 2048 inputs per request; using 2048"
            );
            config.options.batch_size = Self::MAX_BATCH;
        }
        let prior = config.dimensions.or_else(|| known_dims(&config.model));
        let url = format!("{}/embeddings", trim_base(&config.base_url));
        let client = RemoteClient::new(
            Provider::OpenAi,
            config.model,
            config.options,
            prior,
            Auth::Bearer(&config.api_key, "OPENAI_API_KEY"),
            &url,
        )?;
        Ok(Self {
            client,
            url,
            dimensions: config.dimensions,
        })
    }

    async fn request(
        &self,
        texts: &[String],
        _role: TextRole,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut body = serde_json::json!({ "model": self.client.model, "input": texts });
        if let Some(dims) = self.dimensions {
            body["dimensions"] = dims.into();
        }
        let hint = format!(
            "Check the model name `{}` and the base URL ({})",
            self.client.model, self.url
        );
        let response: EmbeddingsResponse = self.client.post_json(&self.url, &body, &hint).await?;
        // `index` says which input a vector belongs to; the order of `data` is not promised.
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for item in response.data {
            match slots.get_mut(item.index) {
                Some(slot @ None) => *slot = Some(item.embedding),
                _ => {
                    return Err(self.client.bad_response(format!(
                        "index {} out of range or repeated for {} inputs",
                        item.index,
                        texts.len()
                    )));
                }
            }
        }
        slots
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.client.bad_response("an input got no vector"))
    }
}

/// The sizes OpenAI documents; others are learnt from the first answer.
fn known_dims(model: &str) -> Option<usize> {
    match model {
        "text-embedding-3-small" | "text-embedding-ada-002" => Some(1536),
        "text-embedding-3-large" => Some(3072),
        _ => None,
    }
}

remote_embedder!(OpenAi);
