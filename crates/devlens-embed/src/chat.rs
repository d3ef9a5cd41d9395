//! Language models that answer a prompt ([`ChatModel`]): the user's OpenAI-compatible endpoint
//! (`[llm]`, [`ChatClient`]), or — implemented where MCP is spoken — the model of the MCP client
//! that made a request, through sampling ([`CallerModel`]). The knowledge base writes answers
//! with one; searches may ask one to order their best candidates. Used only when a user
//! configures it; everything works without one.
//!
//! [`ChatClient`] speaks OpenAI-compatible chat completions (`POST {base}/chat/completions`):
//! what Ollama, llama.cpp's server, vLLM, LM Studio and OpenAI all speak.
//!
//! Requests go through the outbound guard ([`devlens_core::outbound`]): the configured base URL
//! is allowed even on this machine or a private network, link-local and cloud metadata addresses
//! never, and a redirect elsewhere only to public hosts or those `DEVLENS_NETWORK_ALLOW` names.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use devlens_core::LlmSettings;
use devlens_core::outbound::{self, GuardedClient, OutboundPolicy};

use crate::{ApiKey, BoxFuture, RetryPolicy, is_retryable_status, parse_retry_after};

/// Why a language model gave no answer, in a sentence to show the user (never the API key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChatError {
    /// The prompt's timeout passed first.
    #[error("no answer within {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error("{0}")]
    Failed(String),
}

/// One request to a language model: a system prompt, the user's message, and bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatPrompt {
    pub system: String,
    pub user: String,
    /// The most tokens the answer may take.
    pub max_tokens: u32,
    pub temperature: f32,
    /// How long the caller waits; a model that can cancel its request (MCP sampling) does so
    /// then.
    pub timeout: Duration,
}

/// A model's answer: its text, and which model wrote it when the answerer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatAnswer {
    pub text: String,
    pub model: Option<String>,
}

/// A language model that answers a prompt.
pub trait ChatModel: Send + Sync + std::fmt::Debug {
    /// Who answers, for results and notices: `llm (llama3.2)`, `sampling (the MCP client's
    /// model)`.
    fn describe(&self) -> String;

    fn chat<'a>(&'a self, prompt: &'a ChatPrompt) -> BoxFuture<'a, Result<ChatAnswer, ChatError>>;
}

/// The model of whoever made a request: an MCP client that declared sampling lends its own;
/// anyone else has none, and the reason says why (for the notice of a search that wanted it).
#[derive(Debug, Clone)]
pub enum CallerModel {
    Available(Arc<dyn ChatModel>),
    Unavailable(String),
}

impl CallerModel {
    /// What the CLI and the HTTP API callers have: no MCP client to sample.
    pub fn none_outside_mcp() -> Self {
        Self::Unavailable(
            "only an MCP client can lend its model (sampling), and this search came from the \
             CLI or the HTTP API"
                .into(),
        )
    }
}

/// The key's variable when `[llm] api_key_env` names none.
pub const DEFAULT_KEY_ENV: &str = "DEVLENS_LLM_API_KEY";
pub const DEFAULT_MAX_TOKENS: u32 = 800;
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The most of an answer read: a chat completion of `max_tokens` is a few kilobytes.
const MAX_ANSWER_BYTES: u64 = 8 * 1024 * 1024;

/// A configured chat endpoint.
#[derive(Debug, Clone)]
pub struct ChatClient {
    endpoint: String,
    model: String,
    api_key: Option<ApiKey>,
    max_tokens: u32,
    timeout: Duration,
    retry: RetryPolicy,
    http: GuardedClient,
}

/// How to configure an endpoint, for messages that ask for one.
pub const HOW_TO_CONFIGURE: &str = "set `[llm] base_url` and `model` in devlens.toml (or \
DEVLENS_LLM_BASE_URL and DEVLENS_LLM_MODEL), e.g. http://127.0.0.1:11434/v1 and llama3.2 for \
Ollama";

impl ChatClient {
    /// The endpoint the settings and environment describe; `Ok(None)` when none is configured.
    /// Environment variables win over the file: `DEVLENS_LLM_BASE_URL`, `DEVLENS_LLM_MODEL`, and
    /// the key from `DEVLENS_LLM_API_KEY` (or the variable `api_key_env` names).
    pub fn from_settings(
        settings: &LlmSettings,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ChatError> {
        let env = |name: &str| {
            env(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let base = env("DEVLENS_LLM_BASE_URL").or_else(|| settings.base_url.clone());
        let model = env("DEVLENS_LLM_MODEL").or_else(|| settings.model.clone());
        let (base, model) = match (base, model) {
            (None, None) => return Ok(None),
            (Some(base), Some(model)) if !model.trim().is_empty() => (base, model),
            (Some(_), _) => {
                return Err(ChatError::Failed(format!(
                    "an LLM base URL is set but no model: {HOW_TO_CONFIGURE}"
                )));
            }
            (None, Some(_)) => {
                return Err(ChatError::Failed(format!(
                    "an LLM model is set but no base URL: {HOW_TO_CONFIGURE}"
                )));
            }
        };
        let base = base.trim().trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ChatError::Failed(format!(
                "the LLM base URL `{base}` is not an http(s) URL: {HOW_TO_CONFIGURE}"
            )));
        }
        let key_env = settings
            .api_key_env
            .clone()
            .unwrap_or_else(|| DEFAULT_KEY_ENV.to_string());
        let timeout =
            Duration::from_secs(settings.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS).max(1));
        let policy = OutboundPolicy::from_env().allowing(&base);
        let builder = policy.client_builder().timeout(timeout);
        let http = GuardedClient::new(policy, builder).map_err(|e| {
            ChatError::Failed(format!(
                "cannot create an HTTP client: {}",
                outbound::explain(&e)
            ))
        })?;
        Ok(Some(Self {
            endpoint: format!("{base}/chat/completions"),
            model: model.trim().to_string(),
            api_key: env(&key_env).map(ApiKey::new),
            max_tokens: settings.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1),
            timeout,
            retry: RetryPolicy {
                max_attempts: 3,
                max_connect_attempts: 1,
                max_total_wait: Duration::from_secs(30),
                ..RetryPolicy::default()
            },
            http,
        }))
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// Asks for one answer within `[llm] max_tokens`; retries rate limits and overloaded
    /// servers (honouring `Retry-After`) within a bounded time.
    pub async fn complete(&self, system: &str, user: &str) -> Result<String, ChatError> {
        self.ask(system, user, self.max_tokens, 0.2).await
    }

    async fn ask(
        &self,
        system: &str,
        user: &str,
        max_tokens: u32,
        temperature: f32,
    ) -> Result<String, ChatError> {
        let body = json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": false,
        });
        let started = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut request = self
                .http
                .post(&self.endpoint)
                .await
                .map_err(|refused| self.refused(&refused.to_string()))?
                .json(&body);
            if let Some(key) = &self.api_key {
                request = request.bearer_auth(key.expose());
            }
            let response = match request.send().await {
                Ok(r) => r,
                // The guard refused an address the name resolved to, or a redirect.
                Err(e) if outbound::refusal_in(&e).is_some() => {
                    return Err(self.refused(&outbound::explain(&e)));
                }
                Err(e) if e.is_timeout() => {
                    return Err(ChatError::Failed(format!(
                        "the LLM at {} did not answer within {} s; raise `[llm] timeout_secs` or \
                         use a smaller model",
                        self.endpoint,
                        self.timeout.as_secs()
                    )));
                }
                Err(e) => {
                    return Err(ChatError::Failed(self.redact(&format!(
                        "cannot reach the LLM at {}: {}. Is the server running? ({HOW_TO_CONFIGURE})",
                        self.endpoint,
                        outbound::explain(&e)
                    ))));
                }
            };
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            let text = match outbound::read_body_capped(response, MAX_ANSWER_BYTES).await {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(outbound::BodyError::TooLarge { .. }) => {
                    return Err(ChatError::Failed(format!(
                        "the LLM at {} answered with more than 8 MB; is the base URL an \
                         OpenAI-compatible /v1? ({HOW_TO_CONFIGURE})",
                        self.endpoint
                    )));
                }
                Err(outbound::BodyError::Read(_)) => String::new(),
            };
            if (200..300).contains(&status) {
                return parse_answer(&text).map_err(|m| ChatError::Failed(self.redact(&m)));
            }
            if is_retryable_status(status) && attempt < self.retry.max_attempts {
                let wait = retry_after.unwrap_or_else(|| self.retry.backoff(attempt - 1));
                if started.elapsed() + wait <= self.retry.max_total_wait {
                    tracing::info!(
                        status,
                        wait_ms = wait.as_millis() as u64,
                        "LLM busy, retrying"
                    );
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            let detail: String = text.chars().take(300).collect();
            let hint = match status {
                401 | 403 => format!(
                    " Check the API key (in {DEFAULT_KEY_ENV} or the variable `[llm] api_key_env` names)."
                ),
                404 => " Check the base URL (it usually ends in /v1) and the model name.".into(),
                429 => " The server is rate-limiting: try again later.".into(),
                _ => String::new(),
            };
            return Err(ChatError::Failed(self.redact(&format!(
                "the LLM at {} answered HTTP {status}: {detail}.{hint}",
                self.endpoint
            ))));
        }
    }

    /// The outbound guard's refusal: the configured endpoint (or where it redirects) is an
    /// address devlens never fetches.
    fn refused(&self, why: &str) -> ChatError {
        ChatError::Failed(self.redact(&format!(
            "{why}. The LLM endpoint comes from `[llm] base_url` or DEVLENS_LLM_BASE_URL: point \
             it at the LLM server"
        )))
    }

    fn redact(&self, text: &str) -> String {
        match &self.api_key {
            Some(key) => key.redact(text),
            None => text.to_string(),
        }
    }
}

impl ChatModel for ChatClient {
    fn describe(&self) -> String {
        format!("llm ({})", self.model)
    }

    /// The prompt's own token budget, temperature and timeout (the request is dropped then),
    /// not `[llm] max_tokens`; `[llm] timeout_secs` still bounds each attempt.
    fn chat<'a>(&'a self, prompt: &'a ChatPrompt) -> BoxFuture<'a, Result<ChatAnswer, ChatError>> {
        Box::pin(async move {
            let asked = self.ask(
                &prompt.system,
                &prompt.user,
                prompt.max_tokens,
                prompt.temperature,
            );
            let text = tokio::time::timeout(prompt.timeout, asked)
                .await
                .map_err(|_| ChatError::TimedOut(prompt.timeout))??;
            Ok(ChatAnswer {
                text,
                model: Some(self.model.clone()),
            })
        })
    }
}

fn parse_answer(body: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(body).map_err(|e| {
        format!("the LLM's answer is not JSON ({e}); is the base URL an OpenAI-compatible /v1?")
    })?;
    value
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            "the LLM's answer has no choices[0].message.content; is the base URL an \
             OpenAI-compatible /v1?"
                .to_string()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(base: Option<&str>, model: Option<&str>) -> LlmSettings {
        LlmSettings {
            base_url: base.map(String::from),
            model: model.map(String::from),
            ..LlmSettings::default()
        }
    }

    #[test]
    fn configuration_is_complete_or_explained() {
        let none = |_: &str| None;
        assert!(
            ChatClient::from_settings(&settings(None, None), &none)
                .unwrap()
                .is_none()
        );
        let err =
            ChatClient::from_settings(&settings(Some("http://x/v1"), None), &none).unwrap_err();
        assert!(err.to_string().contains("no model"), "{err}");
        let err = ChatClient::from_settings(&settings(Some("x/v1"), Some("m")), &none).unwrap_err();
        assert!(err.to_string().contains("not an http"), "{err}");
        let env = |name: &str| match name {
            "DEVLENS_LLM_BASE_URL" => Some("http://127.0.0.1:1/v1/".into()),
            "DEVLENS_LLM_MODEL" => Some("llama3.2".into()),
            _ => None,
        };
        let client = ChatClient::from_settings(&settings(None, None), &env)
            .unwrap()
            .unwrap();
        assert_eq!(client.endpoint, "http://127.0.0.1:1/v1/chat/completions");
        assert_eq!(client.model(), "llama3.2");
    }

    #[test]
    fn answers_are_read_from_the_first_choice() {
        assert_eq!(
            parse_answer(r#"{"choices":[{"message":{"role":"assistant","content":" Hi [1] "}}]}"#),
            Ok("Hi [1]".into())
        );
        assert!(parse_answer("<html>").unwrap_err().contains("not JSON"));
        assert!(parse_answer(r#"{"choices":[]}"#).is_err());
    }
}
