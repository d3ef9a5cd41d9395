//! What the HTTP providers share: the API key that never shows, micro-batching with progress, and
//! one JSON POST with retries that turns every failure into an actionable [`EmbedError`].
//!
//! Requests go through the outbound guard ([`devlens_core::outbound`]): the provider's configured
//! endpoint is allowed even on this machine or a private network (Ollama on
//! `127.0.0.1:11434`, a server on the LAN), link-local and cloud metadata addresses never, and a
//! redirect elsewhere only to public hosts or those `DEVLENS_NETWORK_ALLOW` names.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use devlens_core::outbound::{self, GuardedClient, OutboundPolicy};
use reqwest::header::{HeaderName, HeaderValue};
use serde::de::DeserializeOwned;

use crate::retry::{is_retryable_status, parse_retry_after};
use crate::{BoxFuture, EmbedError, Progress, Provider, RetryPolicy, l2_normalize};

/// An API key. Its `Debug` is redacted and it has no `Display`, so it cannot end up in a log line
/// or an error message by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Keys shorter than this are not searched for in error bodies (redacting "ab" everywhere
    /// would mangle messages, and no real key is that short).
    const MIN_REDACT_LEN: usize = 6;

    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into().trim().to_owned())
    }

    /// The key itself, for the request header that carries it; nothing else should see it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `<redacted>`: providers sometimes echo
    /// a malformed key in their error message.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() >= Self::MIN_REDACT_LEN && text.contains(&self.0) {
            text.replace(&self.0, "<redacted>")
        } else {
            text.to_owned()
        }
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Batching, pacing and retry settings shared by the HTTP providers.
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    /// Texts per request (the seed's 16 keeps requests small and retries cheap).
    pub batch_size: usize,
    /// Pause between batches to smooth the request rate (0 in tests).
    pub inter_batch_delay: Duration,
    pub retry: RetryPolicy,
    /// Ceiling of one request, connection included.
    pub request_timeout: Duration,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        Self {
            batch_size: 16,
            inter_batch_delay: Duration::from_millis(200),
            retry: RetryPolicy::default(),
            request_timeout: Duration::from_secs(60),
        }
    }
}

impl RemoteOptions {
    /// Defaults with `[embedding] batch_size` applied.
    pub fn from_batch_size(batch_size: Option<usize>) -> Result<Self, EmbedError> {
        let mut options = Self::default();
        if let Some(size) = batch_size {
            if size == 0 {
                return Err(EmbedError::InvalidSettings(
                    "`[embedding] batch_size` must be at least 1".into(),
                ));
            }
            options.batch_size = size;
        }
        Ok(options)
    }
}

/// The vector size: a prior from the model name (0 when unknown), corrected once by the first
/// answer, then enforced so one index never mixes sizes.
#[derive(Debug)]
pub(crate) struct DimsCell {
    value: AtomicUsize,
    /// 0 until an answer was seen, then 1.
    confirmed: AtomicUsize,
}

impl DimsCell {
    pub(crate) fn new(prior: Option<usize>) -> Self {
        Self {
            value: AtomicUsize::new(prior.unwrap_or(0)),
            confirmed: AtomicUsize::new(0),
        }
    }

    pub(crate) fn get(&self) -> usize {
        self.value.load(Ordering::Relaxed)
    }

    fn observe(&self, provider: Provider, model: &str, dims: usize) -> Result<(), EmbedError> {
        if self.confirmed.swap(1, Ordering::AcqRel) == 0 {
            let prior = self.value.swap(dims, Ordering::AcqRel);
            if prior != 0 && prior != dims {
                tracing::warn!(
                    provider = provider.as_str(),
                    model,
                    expected = prior,
                    got = dims,
                    "embedding size differs from the model's usual size; using the server's"
                );
            }
            return Ok(());
        }
        let known = self.get();
        if known != dims {
            return Err(EmbedError::BadResponse {
                provider,
                message: format!(
                    "vectors changed size from {known} to {dims} between requests; was the model \
                     on the server replaced?"
                ),
            });
        }
        Ok(())
    }
}

/// An HTTP client bound to one provider, model and key.
#[derive(Debug)]
pub(crate) struct RemoteClient {
    http: GuardedClient,
    pub(crate) provider: Provider,
    pub(crate) model: String,
    pub(crate) options: RemoteOptions,
    pub(crate) dims: DimsCell,
    key: Option<ApiKey>,
    /// The variable the key comes from, named in hints about 401/403.
    key_var: Option<&'static str>,
    /// Header carrying the key, marked sensitive so `reqwest`'s own Debug hides it.
    auth: Option<(HeaderName, HeaderValue)>,
}

/// How a provider sends its key.
pub(crate) enum Auth<'a> {
    None,
    Bearer(&'a ApiKey, &'static str),
    Header(&'static str, &'a ApiKey, &'static str),
}

impl RemoteClient {
    /// A client for `endpoint`, the provider's configured URL: the outbound guard allows it
    /// (its host and port) besides public hosts and `DEVLENS_NETWORK_ALLOW`.
    pub(crate) fn new(
        provider: Provider,
        model: String,
        options: RemoteOptions,
        dims_prior: Option<usize>,
        auth: Auth<'_>,
        endpoint: &str,
    ) -> Result<Self, EmbedError> {
        if options.batch_size == 0 {
            return Err(EmbedError::InvalidSettings(
                "the batch size must be at least 1".into(),
            ));
        }
        let (key, key_var, header) = match auth {
            Auth::None => (None, None, None),
            Auth::Bearer(key, var) => (
                Some(key.clone()),
                Some(var),
                Some((
                    reqwest::header::AUTHORIZATION,
                    format!("Bearer {}", key.expose()),
                )),
            ),
            Auth::Header(name, key, var) => (
                Some(key.clone()),
                Some(var),
                Some((HeaderName::from_static(name), key.expose().to_owned())),
            ),
        };
        let auth = match header {
            Some((name, value)) => {
                let mut value = HeaderValue::from_str(&value).map_err(|_| {
                    EmbedError::InvalidSettings(format!(
                        "the API key in {} contains characters that cannot be sent in an HTTP \
                         header (a stray newline or quote?)",
                        key_var.unwrap_or("the environment")
                    ))
                })?;
                value.set_sensitive(true);
                Some((name, value))
            }
            None => None,
        };
        let policy = OutboundPolicy::from_env().allowing(endpoint);
        let builder = policy
            .client_builder()
            .timeout(options.request_timeout)
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("devlens/", env!("CARGO_PKG_VERSION")));
        let http = GuardedClient::new(policy, builder).map_err(|e| {
            EmbedError::InvalidSettings(format!("HTTP client: {}", outbound::explain(&e)))
        })?;
        Ok(Self {
            http,
            provider,
            model,
            options,
            dims: DimsCell::new(dims_prior),
            key,
            key_var,
            auth,
        })
    }

    fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(key) => key.redact(text),
            None => text.to_owned(),
        }
    }

    /// POSTs `body` as JSON and decodes a 2xx answer, retrying 429/5xx and connection failures
    /// per the [`RetryPolicy`]. `hint_404` says what a 404 most likely means for this provider.
    pub(crate) async fn post_json<T: DeserializeOwned>(
        &self,
        url: &str,
        body: &serde_json::Value,
        hint_404: &str,
    ) -> Result<T, EmbedError> {
        let policy = &self.options.retry;
        let first_attempt = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut request = self
                .http
                .post(url)
                .await
                .map_err(|refused| self.refused(&refused.to_string()))?
                .json(body);
            if let Some((name, value)) = &self.auth {
                request = request.header(name.clone(), value.clone());
            }
            let started = Instant::now();
            let failure = match request.send().await {
                Ok(response) if response.status().is_success() => match response.bytes().await {
                    Ok(bytes) => {
                        tracing::trace!(
                            provider = self.provider.as_str(),
                            elapsed_ms = started.elapsed().as_millis() as u64,
                            "embeddings request done"
                        );
                        return serde_json::from_slice(&bytes).map_err(|e| {
                            EmbedError::BadResponse {
                                provider: self.provider,
                                message: self.redact(&format!("invalid JSON ({e})")),
                            }
                        });
                    }
                    Err(e) => Failure::Transport(self.describe(&e)),
                },
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| parse_retry_after(v, SystemTime::now()));
                    let text = response.text().await.unwrap_or_default();
                    let message = self.redact(&error_message(&text));
                    if !is_retryable_status(status) {
                        return Err(EmbedError::Api {
                            provider: self.provider,
                            status,
                            message,
                            hint: self.hint(status, hint_404),
                        });
                    }
                    Failure::Status {
                        status,
                        message,
                        retry_after,
                    }
                }
                // The guard refused an address the name resolved to, or a redirect: no retry.
                Err(e) if outbound::refusal_in(&e).is_some() => {
                    return Err(self.refused(&outbound::explain(&e)));
                }
                Err(e) if e.is_builder() => {
                    return Err(EmbedError::InvalidSettings(format!(
                        "cannot build a request to {}: {}",
                        self.redact(url),
                        self.describe(&e)
                    )));
                }
                Err(e) => Failure::Transport(self.describe(&e)),
            };

            let server_wait = match &failure {
                Failure::Status { retry_after, .. } => *retry_after,
                Failure::Transport(_) => None,
            };
            let delay = server_wait.unwrap_or_else(|| policy.backoff(attempt - 1));
            let max_attempts = match failure {
                Failure::Status { .. } => policy.max_attempts,
                Failure::Transport(_) => policy.max_connect_attempts,
            };
            let over_budget = first_attempt.elapsed() + delay > policy.max_total_wait;
            if attempt >= max_attempts || over_budget {
                let budget_note = if over_budget && attempt < max_attempts {
                    format!(
                        " (next wait of {:.1} s would exceed the {} s retry budget)",
                        delay.as_secs_f64(),
                        policy.max_total_wait.as_secs()
                    )
                } else {
                    String::new()
                };
                return Err(match failure {
                    Failure::Status {
                        status, message, ..
                    } => EmbedError::RetriesExhausted {
                        provider: self.provider,
                        status,
                        attempts: attempt,
                        message: format!("{message}{budget_note}"),
                    },
                    Failure::Transport(message) => EmbedError::Connection {
                        provider: self.provider,
                        url: self.redact(url),
                        message: format!("{message} (after {attempt} attempts){budget_note}"),
                        hint: self.connection_hint(),
                    },
                });
            }
            match &failure {
                Failure::Status {
                    status, message, ..
                } => tracing::warn!(
                    provider = self.provider.as_str(),
                    model = %self.model,
                    status,
                    attempt,
                    max_attempts,
                    delay_ms = delay.as_millis() as u64,
                    server_asked = server_wait.is_some(),
                    %message,
                    "embeddings request rate-limited or failed; retrying"
                ),
                Failure::Transport(message) => tracing::warn!(
                    provider = self.provider.as_str(),
                    model = %self.model,
                    attempt,
                    max_attempts,
                    delay_ms = delay.as_millis() as u64,
                    %message,
                    "embeddings server unreachable; retrying"
                ),
            }
            tokio::time::sleep(delay).await;
        }
    }

    /// The outbound guard's refusal as a settings error: the configured endpoint (or where it
    /// redirects) is an address devlens never fetches.
    fn refused(&self, why: &str) -> EmbedError {
        EmbedError::InvalidSettings(self.redact(&format!(
            "{why}. The {} embeddings endpoint comes from `[embedding] base_url` or {}: point it \
             at the provider's server",
            self.provider,
            match self.provider {
                Provider::OpenAi => "OPENAI_BASE_URL",
                Provider::Gemini => "GEMINI_BASE_URL",
                Provider::Ollama => "OLLAMA_HOST",
                Provider::Local => "the settings",
            }
        )))
    }

    /// A transport error with its causes ("connection refused" sits deep in the chain).
    fn describe(&self, error: &reqwest::Error) -> String {
        let mut text = if error.is_timeout() {
            format!(
                "timed out after {} s",
                self.options.request_timeout.as_secs()
            )
        } else {
            error.to_string()
        };
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            let cause_text = cause.to_string();
            if !text.contains(&cause_text) {
                text.push_str(": ");
                text.push_str(&cause_text);
            }
            source = cause.source();
        }
        self.redact(&text)
    }

    fn hint(&self, status: u16, hint_404: &str) -> String {
        match status {
            401 | 403 => match self.key_var {
                Some(var) => {
                    format!("Check that {var} holds a valid key with access to this model")
                }
                None => "Check the server's access settings".into(),
            },
            404 => hint_404.to_owned(),
            413 => "The request is too large: lower `[embedding] batch_size`".into(),
            400 | 422 => format!(
                "Check the model name `{}` and `[embedding] dimensions`",
                self.model
            ),
            _ => "Check the provider's status page and your settings".into(),
        }
    }

    fn connection_hint(&self) -> String {
        match self.provider {
            Provider::Ollama => format!(
                "Is Ollama running (`ollama serve`) with the model pulled (`ollama pull {}`)? \
                 Set OLLAMA_HOST or `[embedding] base_url` if it listens elsewhere",
                self.model
            ),
            _ => "Check the network connection, a proxy, and `[embedding] base_url`".into(),
        }
    }

    /// Runs `embed_batch` over `texts` in micro-batches: progress, pacing, and the checks every
    /// provider's answer needs (one vector per text, one size), then L2 normalisation.
    pub(crate) async fn embed_in_batches<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
        mut embed_batch: impl FnMut(&'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>>,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let total = texts.len();
        let batches = total.div_ceil(self.options.batch_size);
        let started = Instant::now();
        let mut out = Vec::with_capacity(total);
        for (i, chunk) in texts.chunks(self.options.batch_size).enumerate() {
            if i > 0 && !self.options.inter_batch_delay.is_zero() {
                tokio::time::sleep(self.options.inter_batch_delay).await;
            }
            let vectors = embed_batch(chunk).await?;
            out.extend(self.check_vectors(chunk.len(), vectors)?);
            // Info, not debug: a remote batch takes seconds, and the seed asks for visible
            // progress (provider, model, batch i/n) during a re-index.
            tracing::info!(
                provider = self.provider.as_str(),
                model = %self.model,
                batch = i + 1,
                batches,
                size = chunk.len(),
                "embedded batch"
            );
            progress(out.len(), total);
        }
        if total > 0 {
            tracing::info!(
                provider = self.provider.as_str(),
                model = %self.model,
                texts = total,
                batches,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "embedded documents"
            );
        }
        Ok(out)
    }

    /// One vector per input, all of one (non-zero) size, normalised.
    pub(crate) fn check_vectors(
        &self,
        expected: usize,
        mut vectors: Vec<Vec<f32>>,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        if vectors.len() != expected {
            return Err(EmbedError::BadResponse {
                provider: self.provider,
                message: format!("asked for {expected} vectors, got {}", vectors.len()),
            });
        }
        let dims = vectors.first().map_or(0, Vec::len);
        if vectors.iter().any(|v| v.len() != dims || v.is_empty()) {
            return Err(EmbedError::BadResponse {
                provider: self.provider,
                message: "vectors of different or zero length in one answer".into(),
            });
        }
        if dims > 0 {
            self.dims.observe(self.provider, &self.model, dims)?;
        }
        vectors.iter_mut().for_each(|v| l2_normalize(v));
        Ok(vectors)
    }

    pub(crate) fn bad_response(&self, message: impl Into<String>) -> EmbedError {
        EmbedError::BadResponse {
            provider: self.provider,
            message: message.into(),
        }
    }
}

enum Failure {
    Status {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    Transport(String),
}

/// The provider's own words from an error body: OpenAI and Gemini send `{"error": {"message"}}`,
/// Ollama `{"error": "…"}`; anything else is shown as (shortened) text.
fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        let error = v.get("error").unwrap_or(v);
        error
            .get("message")
            .and_then(|m| m.as_str())
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_owned());
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return "no error message".into();
    }
    const MAX: usize = 300;
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Strips a trailing slash so `{base}/path` never doubles it.
pub(crate) fn trim_base(url: &str) -> String {
    url.trim().trim_end_matches('/').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_redacted_in_debug_and_text() {
        let key = ApiKey::new("sk-test-1234567890");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(
            key.redact("Incorrect API key provided: sk-test-1234567890."),
            "Incorrect API key provided: <redacted>."
        );
        assert_eq!(ApiKey::new("ab").redact("a b ab"), "a b ab");
    }

    #[test]
    fn error_messages_come_from_the_providers_json() {
        assert_eq!(
            error_message(r#"{"error":{"message":"Invalid model","type":"x"}}"#),
            "Invalid model"
        );
        assert_eq!(
            error_message(r#"{"error":"model \"x\" not found"}"#),
            "model \"x\" not found"
        );
        assert_eq!(error_message("  Bad\n gateway "), "Bad gateway");
        assert_eq!(error_message(""), "no error message");
        assert!(error_message(&"x".repeat(1000)).ends_with('…'));
    }

    #[test]
    fn client_debug_does_not_show_the_key() {
        let key = ApiKey::new("sk-secret-abcdef123456");
        let client = RemoteClient::new(
            Provider::OpenAi,
            "m".into(),
            RemoteOptions::default(),
            None,
            Auth::Bearer(&key, "OPENAI_API_KEY"),
            "https://api.openai.com/v1",
        )
        .unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("abcdef123456"), "{debug}");
    }
}

/// What the texts of one request are for: Gemini embeds documents and queries differently; the
/// other providers embed both alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextRole {
    Document,
    Query,
}

/// The [`Embedder`](crate::Embedder) of a remote provider, the same for each: `$provider` has a
/// `client: RemoteClient` field and `async fn request(&self, texts: &[String], role: TextRole)`
/// that sends one batch; batching, pacing, the answer's checks and normalisation are the
/// client's.
macro_rules! remote_embedder {
    ($provider:ty) => {
        impl crate::Embedder for $provider {
            fn provider(&self) -> crate::Provider {
                self.client.provider
            }

            fn model(&self) -> &str {
                &self.client.model
            }

            fn dims(&self) -> usize {
                self.client.dims.get()
            }

            fn embed_documents<'a>(
                &'a self,
                texts: &'a [String],
                progress: crate::Progress<'a>,
            ) -> crate::BoxFuture<'a, Result<Vec<Vec<f32>>, crate::EmbedError>> {
                Box::pin(self.client.embed_in_batches(texts, progress, |chunk| {
                    Box::pin(self.request(chunk, crate::remote::TextRole::Document))
                }))
            }

            fn embed_query<'a>(
                &'a self,
                text: &'a str,
            ) -> crate::BoxFuture<'a, Result<Vec<f32>, crate::EmbedError>> {
                Box::pin(async move {
                    let texts = [text.to_owned()];
                    let vectors = self.request(&texts, crate::remote::TextRole::Query).await?;
                    let mut vectors = self.client.check_vectors(1, vectors)?;
                    Ok(vectors.remove(0))
                })
            }
        }
    };
}
pub(crate) use remote_embedder;
