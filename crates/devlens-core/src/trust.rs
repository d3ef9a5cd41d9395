//! Trusting a repository's `devlens.toml`.
//!
//! A `./devlens.toml` comes with whatever folder devlens was started in — often a repository
//! someone else wrote. Until the user says it may, such a file sets only harmless keys (projects,
//! search and docs options); the keys that run code, load libraries, send credentials somewhere
//! or open the network ([`crate::config::ConfigFile::strip_untrusted`] lists them) are ignored
//! with one warning. `devlens trust` records the file's canonical path and the SHA-256 of its
//! bytes in the data dir (`trusted-configs.json`, owner-only), as `direnv allow` and `mise trust`
//! do: a file changed since needs trusting again. Files the user named (`--config`,
//! `DEVLENS_CONFIG`) and the data dir's own `devlens.toml` are the user's and always trusted.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{CoreError, DataDir, clock, paths::write_atomic_private};

/// The file in the data dir that records trusted configuration files.
pub const TRUST_FILE: &str = "trusted-configs.json";

/// One trusted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustedConfig {
    /// Canonical path of the file.
    pub path: PathBuf,
    /// SHA-256 of its bytes when it was trusted, hex.
    pub sha256: String,
    /// When it was trusted (RFC 3339, UTC).
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    trusted: Vec<TrustedConfig>,
}

/// Whether a configuration file may set every key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigTrust {
    /// Named by the user, the data dir's own, trusted with `devlens trust`, or no file at all.
    Trusted,
    /// A `./devlens.toml` not trusted (or changed since it was): these keys were ignored.
    Untrusted { ignored: Vec<String> },
}

impl ConfigTrust {
    pub fn is_trusted(&self) -> bool {
        matches!(self, Self::Trusted)
    }
}

/// The trust records of one data dir.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    pub fn new(data_dir: &DataDir) -> Self {
        Self {
            path: data_dir.root().join(TRUST_FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `config` (as it is now on disk, `bytes`) is trusted.
    pub fn is_trusted(&self, config: &Path, bytes: &[u8]) -> Result<bool, CoreError> {
        let Ok(canonical) = std::fs::canonicalize(config) else {
            return Ok(false);
        };
        let digest = sha256_hex(bytes);
        Ok(self
            .read()?
            .trusted
            .iter()
            .any(|t| t.path == canonical && t.sha256 == digest))
    }

    /// Trusts `config` as it is now; replaces an older record of the same file.
    pub fn trust(&self, config: &Path) -> Result<TrustedConfig, CoreError> {
        let canonical = std::fs::canonicalize(config).map_err(|source| CoreError::Read {
            path: config.to_path_buf(),
            source,
        })?;
        let bytes = std::fs::read(&canonical).map_err(|source| CoreError::Read {
            path: canonical.clone(),
            source,
        })?;
        let record = TrustedConfig {
            path: canonical.clone(),
            sha256: sha256_hex(&bytes),
            trusted_at: clock::now_rfc3339(),
        };
        let mut file = self.read()?;
        file.trusted.retain(|t| t.path != canonical);
        file.trusted.push(record.clone());
        self.write(&file)?;
        Ok(record)
    }

    /// Forgets `config`; whether it was trusted.
    pub fn untrust(&self, config: &Path) -> Result<bool, CoreError> {
        let canonical = std::fs::canonicalize(config).unwrap_or_else(|_| config.to_path_buf());
        let mut file = self.read()?;
        let before = file.trusted.len();
        file.trusted.retain(|t| t.path != canonical);
        if file.trusted.len() == before {
            return Ok(false);
        }
        self.write(&file)?;
        Ok(true)
    }

    /// Every trusted file.
    pub fn list(&self) -> Result<Vec<TrustedConfig>, CoreError> {
        Ok(self.read()?.trusted)
    }

    fn read(&self) -> Result<TrustFile, CoreError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| CoreError::ConfigSyntax {
                path: self.path.clone(),
                message: format!(
                    "{e}; delete it to forget every trusted devlens.toml (trust them again with \
                     `devlens trust`)"
                ),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustFile::default()),
            Err(source) => Err(CoreError::Read {
                path: self.path.clone(),
                source,
            }),
        }
    }

    fn write(&self, file: &TrustFile) -> Result<(), CoreError> {
        let json = serde_json::to_vec_pretty(file).map_err(|e| CoreError::Write {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        write_atomic_private(&self.path, &json)
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trusted_file_stays_trusted_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(&DataDir::at(&dir.path().join("data")));
        let config = dir.path().join("devlens.toml");
        std::fs::write(&config, "[browser]\nchrome_path = \"./x.sh\"\n").unwrap();
        let bytes = std::fs::read(&config).unwrap();
        assert!(!store.is_trusted(&config, &bytes).unwrap());
        store.trust(&config).unwrap();
        assert!(store.is_trusted(&config, &bytes).unwrap());
        assert!(
            !store
                .is_trusted(&config, b"[browser]\nchrome_path = \"./y.sh\"\n")
                .unwrap()
        );
        assert_eq!(store.list().unwrap().len(), 1);
        store.trust(&config).unwrap();
        assert_eq!(store.list().unwrap().len(), 1, "trusting again replaces");
        assert!(store.untrust(&config).unwrap());
        assert!(!store.is_trusted(&config, &bytes).unwrap());
        assert!(!store.untrust(&config).unwrap());
    }
}
