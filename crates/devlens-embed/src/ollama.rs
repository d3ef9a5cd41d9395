//! Ollama embeddings (`POST {host}/api/embed`): a local server, so no key, but the same batching
//! and retries (a busy Ollama answers 503 while loading a model).

use serde::Deserialize;

use crate::remote::{Auth, RemoteClient, TextRole, remote_embedder};
use crate::{EmbedError, Provider, RemoteOptions};

pub const DEFAULT_OLLAMA_MODEL: &str = "nomic-embed-text";
pub const DEFAULT_OLLAMA_HOST: &str = "http://127.0.0.1:11434";

/// What an [`Ollama`] embedder needs.
#[derive(Debug, Clone)]
pub struct OllamaConfig {
    pub model: String,
    /// `OLLAMA_HOST` style: `http://host:port`, `host:port` or just `host`.
    pub host: String,
    pub options: RemoteOptions,
}

impl Default for OllamaConfig {
    fn default() -> Self {
        Self {
            model: DEFAULT_OLLAMA_MODEL.into(),
            host: DEFAULT_OLLAMA_HOST.into(),
            options: RemoteOptions::default(),
        }
    }
}

/// Embeddings from a local (or LAN) Ollama server.
#[derive(Debug)]
pub struct Ollama {
    client: RemoteClient,
    url: String,
}

#[derive(Deserialize)]
struct EmbedResponse {
    embeddings: Vec<Vec<f32>>,
}

impl Ollama {
    pub fn new(config: OllamaConfig) -> Result<Self, EmbedError> {
        let url = format!("{}/api/embed", normalize_host(&config.host)?);
        let prior = known_dims(&config.model);
        let client = RemoteClient::new(
            Provider::Ollama,
            config.model,
            config.options,
            prior,
            Auth::None,
            &url,
        )?;
        Ok(Self { client, url })
    }

    async fn request(
        &self,
        texts: &[String],
        _role: TextRole,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = serde_json::json!({ "model": self.client.model, "input": texts });
        let hint = format!(
            "Pull the model with `ollama pull {}`, or check OLLAMA_HOST",
            self.client.model
        );
        let response: EmbedResponse = self.client.post_json(&self.url, &body, &hint).await?;
        Ok(response.embeddings)
    }
}

/// Accepts what `OLLAMA_HOST` accepts: a scheme and port are optional, `0.0.0.0` (a listen
/// address) means this machine.
fn normalize_host(host: &str) -> Result<String, EmbedError> {
    let host = host.trim().trim_end_matches('/');
    let with_scheme = if host.contains("://") {
        host.to_owned()
    } else {
        format!("http://{host}")
    };
    let mut url = reqwest::Url::parse(&with_scheme).map_err(|e| {
        EmbedError::InvalidSettings(format!(
            "Ollama host `{host}` is not a URL ({e}); check OLLAMA_HOST or `[embedding] base_url`"
        ))
    })?;
    if url.host_str() == Some("0.0.0.0") {
        let _ = url.set_host(Some("127.0.0.1"));
    }
    if url.port().is_none() && !host.contains("://") {
        let _ = url.set_port(Some(11434));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

fn known_dims(model: &str) -> Option<usize> {
    let base = model.split(':').next().unwrap_or(model);
    match base {
        "nomic-embed-text" => Some(768),
        "mxbai-embed-large" => Some(1024),
        "all-minilm" => Some(384),
        _ => None,
    }
}

remote_embedder!(Ollama);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_forms_are_accepted() {
        assert_eq!(
            normalize_host("http://127.0.0.1:11434/").unwrap(),
            "http://127.0.0.1:11434"
        );
        assert_eq!(normalize_host("0.0.0.0").unwrap(), "http://127.0.0.1:11434");
        assert_eq!(
            normalize_host("gpu-box:8080").unwrap(),
            "http://gpu-box:8080"
        );
        assert_eq!(
            normalize_host("https://ollama.example.com").unwrap(),
            "https://ollama.example.com"
        );
        assert!(normalize_host("http://[bad").is_err());
    }
}
