//! One error type for every embedder, so callers can decide between "fall back to keyword search"
//! ([`EmbedError::is_unavailable`]) and "tell the user what to fix".
//!
//! Messages are built from an HTTP status and the provider's own error message only — never from
//! request headers — and any occurrence of the API key in a provider's message is replaced before
//! it gets here (see `remote::ApiKey::redact`).

use std::path::PathBuf;

use devlens_core::{Classify, ErrorKind};

use crate::Provider;

/// Why embedding failed, and what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// No folder with `config.json`, `tokenizer.json` and `model.safetensors` was found.
    #[error(
        "the local embedding model `{model}` is not installed (looked in: {tried}). \
         Install it with `devlens model install`, or point DEVLENS_MODEL_DIR or `[embedding] \
         model_dir` at a folder holding config.json, tokenizer.json and model.safetensors"
    )]
    ModelMissing {
        model: String,
        /// Every folder that was looked at, with what was wrong with it, joined for display.
        tried: String,
    },

    /// The model folder exists but its files could not be read or do not describe a BERT model.
    #[error(
        "the local embedding model in {} could not be loaded: {message}. Reinstall it with \
         `devlens model install`", dir.display()
    )]
    ModelLoad { dir: PathBuf, message: String },

    /// The forward pass or the tokenizer failed on input that loaded fine.
    #[error("local embedding failed: {0}")]
    Inference(String),

    /// A remote provider was chosen but its API key variable is not set.
    #[error(
        "{provider} embeddings need an API key in the environment variable {var}; set it, or \
         use the local model with EMBEDDING_PROVIDER=local"
    )]
    MissingKey {
        provider: Provider,
        var: &'static str,
    },

    /// The server could not be reached (refused, DNS, TLS, timeout) even after retries.
    #[error("cannot reach the {provider} embeddings server at {url}: {message}. {hint}")]
    Connection {
        provider: Provider,
        url: String,
        message: String,
        hint: String,
    },

    /// The provider kept answering 429/5xx until the retry budget ran out.
    #[error(
        "{provider} embeddings are rate-limited or unavailable (HTTP {status}) after {attempts} \
         attempts: {message}. Wait and retry, or lower `[embedding] batch_size`"
    )]
    RetriesExhausted {
        provider: Provider,
        status: u16,
        attempts: u32,
        message: String,
    },

    /// A non-retryable error answer (bad key, unknown model, malformed request).
    #[error("{provider} rejected the embeddings request (HTTP {status}): {message}. {hint}")]
    Api {
        provider: Provider,
        status: u16,
        message: String,
        hint: String,
    },

    /// A 2xx answer whose body is not what the provider documents.
    #[error("{provider} returned an unexpected embeddings response: {message}")]
    BadResponse { provider: Provider, message: String },

    /// `EMBEDDING_PROVIDER` or `[embedding] provider` names no known provider.
    #[error(
        "unknown embedding provider `{name}`; valid values are local, openai, gemini, ollama and \
         auto (set EMBEDDING_PROVIDER or `[embedding] provider`)"
    )]
    UnknownProvider { name: String },

    /// A setting that cannot work, e.g. a batch size of 0 or a malformed base URL.
    #[error("invalid embedding settings: {0}")]
    InvalidSettings(String),

    /// `devlens model install` (or [`crate::install_from_folder`]) failed; nothing was replaced.
    #[error("installing the local embedding model failed: {message}")]
    Install { message: String },
}

impl EmbedError {
    /// True when embeddings cannot be had right now (no model, no key, no server, rate-limited
    /// past the retry budget, unreadable model): semantic search should fall back to keyword
    /// search and say so, rather than fail.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            Self::ModelMissing { .. }
                | Self::ModelLoad { .. }
                | Self::MissingKey { .. }
                | Self::Connection { .. }
                | Self::RetriesExhausted { .. }
        )
    }
}

impl Classify for EmbedError {
    fn kind(&self) -> ErrorKind {
        match self {
            _ if self.is_unavailable() => ErrorKind::Unavailable,
            Self::UnknownProvider { .. } | Self::InvalidSettings(_) => ErrorKind::InvalidInput,
            Self::Api { .. } | Self::BadResponse { .. } => ErrorKind::Upstream,
            Self::Inference(_) | Self::Install { .. } => ErrorKind::Internal,
            // Covered by `is_unavailable`; listed so a new variant is a compile error here.
            Self::ModelMissing { .. }
            | Self::ModelLoad { .. }
            | Self::MissingKey { .. }
            | Self::Connection { .. }
            | Self::RetriesExhausted { .. } => ErrorKind::Unavailable,
        }
    }
}

#[cfg(test)]
mod kind_tests {
    use super::*;

    #[test]
    fn each_failure_has_the_kind_its_fix_needs() {
        let missing = EmbedError::ModelMissing {
            model: "m".into(),
            tried: "x".into(),
        };
        assert_eq!(missing.kind(), ErrorKind::Unavailable);
        assert_eq!(
            EmbedError::UnknownProvider { name: "x".into() }.kind(),
            ErrorKind::InvalidInput
        );
        let rejected = EmbedError::Api {
            provider: Provider::OpenAi,
            status: 401,
            message: "bad key".into(),
            hint: String::new(),
        };
        assert_eq!(rejected.kind(), ErrorKind::Upstream);
        assert_eq!(
            EmbedError::Inference("x".into()).kind(),
            ErrorKind::Internal
        );
    }
}
