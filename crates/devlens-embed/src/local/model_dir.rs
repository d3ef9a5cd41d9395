//! Finding and reading a model folder: `DEVLENS_MODEL_DIR`, `[embedding] model_dir`, the data
//! dir, the Hugging Face cache; the folder's sequence length and pooling.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use devlens_core::{DataDir, EmbeddingSettings};

use super::DEFAULT_LOCAL_MODEL;
use super::engine::Pooling;
use crate::EmbedError;

/// Sequence length when the folder has no `sentence_bert_config.json`.
const DEFAULT_MAX_SEQ_LEN: usize = 256;

/// What a model folder must hold.
pub(super) const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Files that change the output (sequence length, pooling) or document the model; copied when
/// present, not required.
pub(super) const OPTIONAL_FILES: [&str; 7] = [
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "modules.json",
    "config_sentence_transformers.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
];

pub(super) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))
}

/// sentence-transformers' `max_seq_length`, never beyond the position table.
pub(super) fn max_seq_len(dir: &Path, max_positions: usize) -> Result<usize, String> {
    let path = dir.join("sentence_bert_config.json");
    let configured = if path.is_file() {
        let value: serde_json::Value = read_json(&path)?;
        value
            .get("max_seq_length")
            .and_then(serde_json::Value::as_u64)
            .map(|n| n as usize)
    } else {
        None
    };
    Ok(configured
        .unwrap_or(DEFAULT_MAX_SEQ_LEN)
        .min(max_positions)
        .max(2))
}

pub(super) fn read_pooling(dir: &Path) -> Result<Pooling, String> {
    let path = dir.join("1_Pooling").join("config.json");
    if !path.is_file() {
        return Ok(Pooling::Mean);
    }
    let value: serde_json::Value = read_json(&path)?;
    let flag = |name: &str| value.get(name).and_then(serde_json::Value::as_bool) == Some(true);
    if flag("pooling_mode_mean_tokens") {
        Ok(Pooling::Mean)
    } else if flag("pooling_mode_cls_token") {
        Ok(Pooling::Cls)
    } else {
        Err(
            "1_Pooling/config.json asks for a pooling mode other than mean or CLS, which \
             devlens does not implement"
                .into(),
        )
    }
}

/// Which of the files every model folder needs (config, tokenizer, weights) `dir` lacks.
pub(crate) fn missing_files(dir: &Path) -> Vec<&'static str> {
    REQUIRED_FILES
        .into_iter()
        .filter(|f| !dir.join(f).is_file())
        .collect()
}

/// The model name `[embedding] model` gives, if any.
pub(super) fn local_model_name(settings: &EmbeddingSettings) -> Option<String> {
    settings
        .model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
}

/// The folder name under `<data dir>/models/`: the model's last path segment.
pub(super) fn short_name(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

/// Finds the local model folder: `DEVLENS_MODEL_DIR`, then `[embedding] model_dir`, then
/// `<data dir>/models/all-MiniLM-L6-v2`, then the Hugging Face cache
/// (`$HF_HUB_CACHE`, `$HF_HOME/hub` or `~/.cache/huggingface/hub`). The first folder holding
/// config.json, tokenizer.json and model.safetensors wins; none is [`EmbedError::ModelMissing`]
/// naming every folder tried.
pub fn resolve_model_dir(
    settings: &EmbeddingSettings,
    data_dir: &DataDir,
) -> Result<PathBuf, EmbedError> {
    resolve_model_dir_with_env(settings, data_dir, &|name| std::env::var(name).ok())
}

/// [`resolve_model_dir`] reading the environment through `env` (tests cannot safely set
/// process environment variables).
pub fn resolve_model_dir_with_env(
    settings: &EmbeddingSettings,
    data_dir: &DataDir,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, EmbedError> {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let model = local_model_name(settings).unwrap_or_else(|| DEFAULT_LOCAL_MODEL.to_owned());
    let mut candidates: Vec<PathBuf> = Vec::new();
    candidates.extend(env("DEVLENS_MODEL_DIR").map(PathBuf::from));
    candidates.extend(settings.model_dir.clone());
    candidates.push(data_dir.subdir("models").join(short_name(&model)));
    if let Some(hub) = hf_hub_dir(&env) {
        candidates.extend(hf_snapshots(&hub, &model));
    }

    let mut tried = Vec::new();
    let mut seen = HashSet::new();
    for dir in candidates {
        if !seen.insert(dir.clone()) {
            continue;
        }
        if !dir.is_dir() {
            tried.push(format!("{} (not found)", dir.display()));
            continue;
        }
        let missing = missing_files(&dir);
        if missing.is_empty() {
            if !tried.is_empty() {
                tracing::debug!(dir = %dir.display(), skipped = %tried.join("; "), "using model folder");
            }
            return Ok(dir);
        }
        tried.push(format!("{} (no {})", dir.display(), missing.join(", ")));
    }
    Err(EmbedError::ModelMissing {
        model,
        tried: tried.join("; "),
    })
}

/// The Hugging Face hub cache root, as `huggingface_hub` computes it.
fn hf_hub_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = env("HF_HUB_CACHE").or_else(|| env("HUGGINGFACE_HUB_CACHE")) {
        return Some(PathBuf::from(dir));
    }
    if let Some(home) = env("HF_HOME") {
        return Some(PathBuf::from(home).join("hub"));
    }
    let cache = env("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".cache")))?;
    Some(cache.join("huggingface").join("hub"))
}

/// Snapshot folders of `model` in the hub cache: the one `refs/main` points at first, then any
/// other (newest name order is arbitrary, but any complete snapshot serves).
fn hf_snapshots(hub: &Path, model: &str) -> Vec<PathBuf> {
    let repo = hub.join(format!("models--{}", model.replace('/', "--")));
    let snapshots = repo.join("snapshots");
    let mut out = Vec::new();
    if let Ok(rev) = std::fs::read_to_string(repo.join("refs").join("main")) {
        out.push(snapshots.join(rev.trim()));
    }
    if let Ok(entries) = std::fs::read_dir(&snapshots) {
        let mut others: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir() && !out.contains(p))
            .collect();
        others.sort();
        out.extend(others);
    }
    if out.is_empty() {
        // Named in the "tried" list so users see where a `huggingface-cli download` would go.
        out.push(snapshots);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_missing_model_names_the_folders_and_the_install_command() {
        let data = tempfile::tempdir().unwrap();
        let explicit = data.path().join("nowhere");
        let settings = EmbeddingSettings {
            model_dir: Some(explicit.clone()),
            ..Default::default()
        };
        let hub = data.path().join("hf");
        let env = |name: &str| (name == "HF_HOME").then(|| hub.display().to_string());
        let err =
            resolve_model_dir_with_env(&settings, &DataDir::at(data.path()), &env).unwrap_err();
        assert!(err.is_unavailable());
        let text = err.to_string();
        assert!(text.contains("devlens model install"), "{text}");
        assert!(text.contains(&explicit.display().to_string()), "{text}");
        assert!(text.contains("models/all-MiniLM-L6-v2"), "{text}");
        assert!(
            text.contains("models--sentence-transformers--all-MiniLM-L6-v2"),
            "{text}"
        );
    }

    #[test]
    fn an_incomplete_folder_is_skipped_with_the_missing_files_named() {
        let data = tempfile::tempdir().unwrap();
        let dir = data.path().join("models/all-MiniLM-L6-v2");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), "{}").unwrap();
        let err = resolve_model_dir_with_env(
            &EmbeddingSettings::default(),
            &DataDir::at(data.path()),
            &no_env,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("no tokenizer.json, model.safetensors"),
            "{err}"
        );
    }

    #[test]
    fn the_hub_cache_snapshot_from_refs_main_is_found() {
        let data = tempfile::tempdir().unwrap();
        let repo = data
            .path()
            .join("hub/models--sentence-transformers--all-MiniLM-L6-v2");
        let snap = repo.join("snapshots/abc123");
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "abc123\n").unwrap();
        for f in REQUIRED_FILES {
            std::fs::write(snap.join(f), "x").unwrap();
        }
        let hub = data.path().join("hub");
        let env = |name: &str| (name == "HF_HUB_CACHE").then(|| hub.display().to_string());
        let found = resolve_model_dir_with_env(
            &EmbeddingSettings::default(),
            &DataDir::at(&data.path().join("data")),
            &env,
        )
        .unwrap();
        assert_eq!(found, snap);
    }

    #[test]
    fn env_dir_wins_over_settings_and_data_dir() {
        let data = tempfile::tempdir().unwrap();
        let make = |name: &str| {
            let dir = data.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            for f in REQUIRED_FILES {
                std::fs::write(dir.join(f), "x").unwrap();
            }
            dir
        };
        let from_env = make("env");
        let from_settings = make("settings");
        let settings = EmbeddingSettings {
            model_dir: Some(from_settings.clone()),
            ..Default::default()
        };
        let env_value = from_env.display().to_string();
        let env = |name: &str| (name == "DEVLENS_MODEL_DIR").then(|| env_value.clone());
        let data_dir = DataDir::at(data.path());
        assert_eq!(
            resolve_model_dir_with_env(&settings, &data_dir, &env).unwrap(),
            from_env
        );
        assert_eq!(
            resolve_model_dir_with_env(&settings, &data_dir, &no_env).unwrap(),
            from_settings
        );
    }
}
