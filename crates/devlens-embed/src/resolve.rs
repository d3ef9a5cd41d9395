//! Choosing and building the embedder from `[embedding]` settings and the environment.
//!
//! Precedence: `EMBEDDING_PROVIDER` over `[embedding] provider` over `local`. Per provider, the
//! model comes from `OPENAI_EMBED_MODEL` / `GEMINI_EMBED_MODEL` / `OLLAMA_EMBED_MODEL` over
//! `[embedding] model` over the provider's default. A base URL in `[embedding] base_url` wins over `OPENAI_BASE_URL`,
//! `GEMINI_BASE_URL` and `OLLAMA_HOST`, because those variables are shared with other tools while
//! the setting was written for devlens. API keys come from the environment only.

use std::sync::Arc;

use devlens_core::{DataDir, EmbeddingSettings};

use crate::gemini::{DEFAULT_GEMINI_BASE_URL, DEFAULT_GEMINI_MODEL};
use crate::ollama::{DEFAULT_OLLAMA_HOST, DEFAULT_OLLAMA_MODEL};
use crate::openai::{DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL};
use crate::{
    ApiKey, CachedEmbedder, EmbedError, Embedder, Gemini, GeminiConfig, LocalBert, Ollama,
    OllamaConfig, OpenAi, OpenAiConfig, Provider, RemoteOptions,
};

/// Builds the configured embedder, wrapped in a [`CachedEmbedder`] for queries.
///
/// The local model is loaded here, so a caller that gets an error with
/// [`EmbedError::is_unavailable`] (no model, no key) can fall back to keyword search at once.
pub fn embedder_from_settings(
    settings: &EmbeddingSettings,
    data_dir: &DataDir,
) -> Result<Arc<dyn Embedder>, EmbedError> {
    embedder_from_settings_with_env(settings, data_dir, &|name| std::env::var(name).ok())
}

/// [`embedder_from_settings`] reading the environment through `env`, for tests and embedding
/// hosts that keep their own environment.
pub fn embedder_from_settings_with_env(
    settings: &EmbeddingSettings,
    data_dir: &DataDir,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Embedder>, EmbedError> {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let provider = resolve_provider(settings, &env)?;
    let model = |var: &str, default: &str| {
        env(var)
            .or_else(|| settings.model.clone())
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let base_url = |var: &str, default: &str| {
        settings
            .base_url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .or_else(|| env(var))
            .unwrap_or_else(|| default.to_owned())
    };
    let key = |var: &'static str| {
        env(var)
            .map(ApiKey::new)
            .ok_or(EmbedError::MissingKey { provider, var })
    };

    let embedder: Arc<dyn Embedder> = match provider {
        Provider::Local => Arc::new(LocalBert::from_settings_with_env(settings, data_dir, &env)?),
        Provider::OpenAi => Arc::new(OpenAi::new(OpenAiConfig {
            api_key: key("OPENAI_API_KEY")?,
            model: model("OPENAI_EMBED_MODEL", DEFAULT_OPENAI_MODEL),
            base_url: base_url("OPENAI_BASE_URL", DEFAULT_OPENAI_BASE_URL),
            dimensions: settings.dimensions,
            options: RemoteOptions::from_batch_size(settings.batch_size)?,
        })?),
        Provider::Gemini => Arc::new(Gemini::new(GeminiConfig {
            api_key: key("GEMINI_API_KEY")?,
            model: model("GEMINI_EMBED_MODEL", DEFAULT_GEMINI_MODEL),
            base_url: base_url("GEMINI_BASE_URL", DEFAULT_GEMINI_BASE_URL),
            dimensions: settings.dimensions,
            options: RemoteOptions::from_batch_size(settings.batch_size)?,
        })?),
        Provider::Ollama => {
            if settings.dimensions.is_some() {
                tracing::warn!("`[embedding] dimensions` is ignored by Ollama");
            }
            Arc::new(Ollama::new(OllamaConfig {
                model: model("OLLAMA_EMBED_MODEL", DEFAULT_OLLAMA_MODEL),
                host: base_url("OLLAMA_HOST", DEFAULT_OLLAMA_HOST),
                options: RemoteOptions::from_batch_size(settings.batch_size)?,
            })?)
        }
    };
    tracing::debug!(
        provider = provider.as_str(),
        model = embedder.model(),
        dims = embedder.dims(),
        "embedder ready"
    );
    Ok(Arc::new(CachedEmbedder::new(embedder)))
}

/// Which provider the settings and environment ask for. `auto` follows the seed's defaults:
/// OpenAI when `OPENAI_API_KEY` is set, else Gemini when `GEMINI_API_KEY` is set, else local.
pub fn resolve_provider(
    settings: &EmbeddingSettings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Provider, EmbedError> {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let name = env("EMBEDDING_PROVIDER")
        .or_else(|| settings.provider.clone().filter(|p| !p.trim().is_empty()))
        .unwrap_or_else(|| "local".into());
    if name.trim().eq_ignore_ascii_case("auto") {
        return Ok(if env("OPENAI_API_KEY").is_some() {
            Provider::OpenAi
        } else if env("GEMINI_API_KEY").is_some() {
            Provider::Gemini
        } else {
            Provider::Local
        });
    }
    Provider::parse(&name).ok_or(EmbedError::UnknownProvider {
        name: name.trim().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn settings(provider: Option<&str>) -> EmbeddingSettings {
        EmbeddingSettings {
            provider: provider.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn provider_precedence_env_then_settings_then_local() {
        let none = env_of(&[]);
        assert_eq!(
            resolve_provider(&settings(None), &none).unwrap(),
            Provider::Local
        );
        assert_eq!(
            resolve_provider(&settings(Some("gemini")), &none).unwrap(),
            Provider::Gemini
        );
        let env = env_of(&[("EMBEDDING_PROVIDER", "Ollama")]);
        assert_eq!(
            resolve_provider(&settings(Some("gemini")), &env).unwrap(),
            Provider::Ollama
        );
    }

    #[test]
    fn auto_prefers_openai_then_gemini_then_local() {
        let auto = settings(Some("auto"));
        let both = env_of(&[("OPENAI_API_KEY", "sk-a"), ("GEMINI_API_KEY", "g")]);
        assert_eq!(resolve_provider(&auto, &both).unwrap(), Provider::OpenAi);
        let gemini = env_of(&[("GEMINI_API_KEY", "g"), ("OPENAI_API_KEY", " ")]);
        assert_eq!(resolve_provider(&auto, &gemini).unwrap(), Provider::Gemini);
        assert_eq!(
            resolve_provider(&auto, &env_of(&[])).unwrap(),
            Provider::Local
        );
    }

    #[test]
    fn an_unknown_provider_lists_the_valid_ones() {
        let err = resolve_provider(&settings(Some("cohere")), &env_of(&[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`cohere`"), "{err}");
        for valid in ["local", "openai", "gemini", "ollama", "auto"] {
            assert!(err.contains(valid), "{err}");
        }
    }

    #[test]
    fn a_missing_key_names_the_variable_and_is_unavailable() {
        let data = tempfile::tempdir().unwrap();
        for (provider, var) in [("openai", "OPENAI_API_KEY"), ("gemini", "GEMINI_API_KEY")] {
            let err = embedder_from_settings_with_env(
                &settings(Some(provider)),
                &DataDir::at(data.path()),
                &env_of(&[]),
            )
            .unwrap_err();
            assert!(err.is_unavailable());
            assert!(err.to_string().contains(var), "{err}");
        }
    }

    #[test]
    fn remote_providers_take_models_from_env_over_settings() {
        let data = DataDir::at(std::path::Path::new("/nonexistent"));
        let mut s = settings(Some("openai"));
        s.model = Some("text-embedding-3-large".into());
        let env = env_of(&[("OPENAI_API_KEY", "sk-test-000000")]);
        let e = embedder_from_settings_with_env(&s, &data, &env).unwrap();
        assert_eq!(
            (e.provider(), e.model(), e.dims()),
            (Provider::OpenAi, "text-embedding-3-large", 3072)
        );

        let env = env_of(&[
            ("OPENAI_API_KEY", "sk-test-000000"),
            ("OPENAI_EMBED_MODEL", "text-embedding-3-small"),
        ]);
        let e = embedder_from_settings_with_env(&s, &data, &env).unwrap();
        assert_eq!((e.model(), e.dims()), ("text-embedding-3-small", 1536));

        let mut g = settings(Some("gemini"));
        g.dimensions = Some(768);
        let env = env_of(&[("GEMINI_API_KEY", "g-test-000000")]);
        let e = embedder_from_settings_with_env(&g, &data, &env).unwrap();
        assert_eq!((e.model(), e.dims()), ("gemini-embedding-001", 768));

        let e = embedder_from_settings_with_env(&settings(Some("ollama")), &data, &env_of(&[]))
            .unwrap();
        assert_eq!((e.model(), e.dims()), ("nomic-embed-text", 768));
    }

    #[test]
    fn a_zero_batch_size_is_rejected() {
        let mut s = settings(Some("ollama"));
        s.batch_size = Some(0);
        let err = embedder_from_settings_with_env(
            &s,
            &DataDir::at(std::path::Path::new("/nonexistent")),
            &env_of(&[]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("batch_size"), "{err}");
    }

    #[test]
    fn debug_output_of_a_built_embedder_hides_the_key() {
        let env = env_of(&[("GEMINI_API_KEY", "AIzaSy-very-secret-key")]);
        let e = embedder_from_settings_with_env(
            &settings(Some("gemini")),
            &DataDir::at(std::path::Path::new("/nonexistent")),
            &env,
        )
        .unwrap();
        let debug = format!("{e:?}");
        assert!(!debug.contains("very-secret"), "{debug}");
    }
}
