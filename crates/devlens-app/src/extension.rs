//! Pairing the devlens Chrome extension with this server.
//!
//! The HTTP guard refuses every foreign `Origin`, and a browser extension calls from its own,
//! `chrome-extension://<id>`. So that only the user's own extension gets in, the server keeps a
//! pairing token (shown on the panel's Extension page and by `devlens extension token`): the
//! extension sends it once from its origin, the server compares it in constant time and records
//! the origin; from then on the guard accepts that origin until it is revoked.
//!
//! The state lives in `extension.json` in the data dir, written atomically and readable by its
//! owner only. It is re-read when the file changes, so a `devlens extension` command and a
//! running server agree. Neither the token nor the paired origins are ever logged.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use devlens_core::{DataDir, ErrorKind, Report, clock, paths::write_atomic_private};

use crate::AppError;

pub use devlens_embed::BrowserModel;

/// The local embedding model as the extension runs it (its int8 ONNX file, tokenizer, id), or
/// why there is none to give it: then the extension searches by keywords.
pub fn browser_model(config: &devlens_core::Config) -> Result<BrowserModel, String> {
    let settings = &config.file.embedding;
    let dir = devlens_embed::resolve_model_dir(settings, &config.data_dir)
        .map_err(|e| format!("{e} Then run `devlens extension path` again"))?;
    devlens_embed::browser_model(settings, &dir).map_err(|e| e.to_string())
}

/// The scheme of a Chrome extension's origin.
const EXTENSION_SCHEME: &str = "chrome-extension://";

/// Where the panel shows the token, for messages that send the user there.
const WHERE_THE_TOKEN_IS: &str = "the devlens panel's Extension page (/extension on the \
                                   server, e.g. http://127.0.0.1:7878/extension) or \
                                   `devlens extension token`";

/// An extension origin the server accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairedOrigin {
    /// `chrome-extension://<id>`.
    pub origin: String,
    pub paired_at: String,
}

/// What `extension.json` holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PairingFile {
    #[serde(default)]
    token: String,
    #[serde(default)]
    origins: Vec<PairedOrigin>,
}

/// The pairing state as the panel shows it: the token to copy and the paired origins.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingStatus {
    pub token: String,
    pub origins: Vec<PairedOrigin>,
}

impl Report for PairingStatus {
    fn to_text(&self) -> String {
        let mut text = format!("Pairing token: {}\n", self.token);
        if self.origins.is_empty() {
            text.push_str("No extension is paired yet.");
        } else {
            text.push_str("Paired:");
            for o in &self.origins {
                text.push_str(&format!("\n  {} (since {})", o.origin, o.paired_at));
            }
        }
        text
    }
}

/// What a pairing or a revocation did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingChange {
    pub origin: String,
    /// Whether the origin is paired after the call.
    pub paired: bool,
    /// Whether anything changed (pairing twice or revoking an unknown origin changes nothing).
    pub changed: bool,
}

impl Report for PairingChange {
    fn to_text(&self) -> String {
        match (self.paired, self.changed) {
            (true, true) => format!("Paired {}.", self.origin),
            (true, false) => format!("{} was already paired.", self.origin),
            (false, true) => format!("Revoked {}: it can no longer call devlens.", self.origin),
            (false, false) => format!("{} was not paired.", self.origin),
        }
    }
}

/// The loaded file and the modification time it was read at.
#[derive(Debug, Default)]
struct Loaded {
    file: PairingFile,
    modified: Option<SystemTime>,
}

/// The pairing state of one data dir.
#[derive(Debug)]
pub struct ExtensionPairing {
    path: PathBuf,
    loaded: Mutex<Option<Loaded>>,
}

impl ExtensionPairing {
    pub fn new(data_dir: &DataDir) -> Self {
        Self {
            path: data_dir.root().join("extension.json"),
            loaded: Mutex::new(None),
        }
    }

    /// The token (created on first use) and the paired origins.
    pub fn status(&self) -> Result<PairingStatus, AppError> {
        self.update(|file| {
            let created = ensure_token(file)?;
            Ok((status_of(file), created))
        })
    }

    /// Replaces the token; origins already paired stay paired.
    pub fn new_token(&self) -> Result<PairingStatus, AppError> {
        self.update(|file| {
            file.token = new_token()?;
            Ok((status_of(file), true))
        })
    }

    /// Pairs `origin` (the `Origin` the extension's request carried) when `token` is right.
    pub fn pair(&self, origin: Option<&str>, token: &str) -> Result<PairingChange, AppError> {
        let origin = extension_origin(origin)?;
        let token = token.trim();
        if token.is_empty() {
            return Err(AppError::invalid(format!(
                "Enter the pairing token: copy it from {WHERE_THE_TOKEN_IS}."
            )));
        }
        self.update(|file| {
            let created = ensure_token(file)?;
            if !same_secret(token.as_bytes(), file.token.as_bytes()) {
                return Err(AppError::new(
                    ErrorKind::Unauthorized,
                    format!(
                        "The pairing token is wrong. Copy the current token from \
                         {WHERE_THE_TOKEN_IS}, paste it into the extension's options and press \
                         Pair again."
                    ),
                ));
            }
            if file.origins.iter().any(|o| o.origin == origin) {
                return Ok((changed(origin, true, false), created));
            }
            file.origins.push(PairedOrigin {
                origin: origin.clone(),
                paired_at: clock::now_rfc3339(),
            });
            Ok((changed(origin, true, true), true))
        })
    }

    /// Forgets `origin`: the guard refuses it again.
    pub fn revoke(&self, origin: &str) -> Result<PairingChange, AppError> {
        let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        if origin.is_empty() {
            return Err(AppError::invalid(
                "Name the origin to revoke, e.g. chrome-extension://<id> (the Extension page lists them).",
            ));
        }
        self.update(|file| {
            let before = file.origins.len();
            file.origins.retain(|o| o.origin != origin);
            let removed = file.origins.len() != before;
            Ok((changed(origin, false, removed), removed))
        })
    }

    /// Whether `origin` is paired. An unreadable file pairs nothing.
    pub fn is_paired(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        self.paired_origins().contains(&origin)
    }

    /// The paired origins (for the guard and the panel's `frame-ancestors`).
    pub fn paired_origins(&self) -> Vec<String> {
        let mut slot = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        match self.fresh(&mut slot) {
            Ok(loaded) => loaded
                .file
                .origins
                .iter()
                .map(|o| o.origin.clone())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Runs `change` on the current state; writes the file when it says something changed.
    /// A failed write keeps the file (and the state in memory) as it was.
    fn update<T>(
        &self,
        change: impl FnOnce(&mut PairingFile) -> Result<(T, bool), AppError>,
    ) -> Result<T, AppError> {
        let mut slot = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        let loaded = self.fresh(&mut slot)?;
        let mut file = loaded.file.clone();
        let (result, dirty) = change(&mut file)?;
        if dirty {
            self.write(&file)?;
            *loaded = Loaded {
                file,
                modified: modified(&self.path),
            };
        }
        Ok(result)
    }

    /// The state, re-read when the file changed since it was last read.
    fn fresh<'a>(&self, slot: &'a mut Option<Loaded>) -> Result<&'a mut Loaded, AppError> {
        let on_disk = modified(&self.path);
        let stale = slot.as_ref().is_none_or(|l| l.modified != on_disk);
        if stale {
            *slot = Some(Loaded {
                file: read(&self.path)?,
                modified: on_disk,
            });
        }
        slot.as_mut()
            .ok_or_else(|| AppError::new(ErrorKind::Internal, "the pairing state did not load"))
    }

    fn write(&self, file: &PairingFile) -> Result<(), AppError> {
        let json = serde_json::to_vec_pretty(file)
            .map_err(|e| AppError::new(ErrorKind::Internal, e.to_string()))?;
        // Owner-only from its first byte: it holds secrets.
        write_atomic_private(&self.path, &json)?;
        Ok(())
    }
}

fn status_of(file: &PairingFile) -> PairingStatus {
    PairingStatus {
        token: file.token.clone(),
        origins: file.origins.clone(),
    }
}

fn changed(origin: String, paired: bool, changed: bool) -> PairingChange {
    PairingChange {
        origin,
        paired,
        changed,
    }
}

/// Gives `file` a token when it has none; whether it did.
fn ensure_token(file: &mut PairingFile) -> Result<bool, AppError> {
    if file.token.is_empty() {
        file.token = new_token()?;
        return Ok(true);
    }
    Ok(false)
}

/// 128 random bits as 32 hex digits.
fn new_token() -> Result<String, AppError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("cannot make a pairing token: the system's random source failed ({e})"),
        )
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares two secrets in time that depends on their lengths only, not on where they differ.
pub(crate) fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() || expected.is_empty() {
        return false;
    }
    given
        .iter()
        .zip(expected)
        .fold(0u8, |diff, (a, b)| diff | (a ^ b))
        == 0
}

/// The extension origin a pairing request came from, normalised; what is wrong otherwise.
fn extension_origin(origin: Option<&str>) -> Result<String, AppError> {
    let Some(origin) = origin.map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase()) else {
        return Err(AppError::invalid(
            "This request carries no Origin: pairing is done by the devlens extension itself \
             (its options page, Pair button), which the browser identifies by its origin.",
        ));
    };
    let id = origin.strip_prefix(EXTENSION_SCHEME).unwrap_or_default();
    // Chrome's extension ids are 32 letters a–p.
    if id.len() != 32 || !id.bytes().all(|b| (b'a'..=b'p').contains(&b)) {
        return Err(AppError::invalid(format!(
            "Only a Chrome extension can pair (origin chrome-extension://<id>); this request came \
             from '{origin}'. Pages on this machine need no pairing."
        )));
    }
    Ok(origin)
}

fn read(path: &Path) -> Result<PairingFile, AppError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!(
                    "{} is damaged ({e}). Delete it to start over: extensions must then pair again.",
                    path.display()
                ),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PairingFile::default()),
        Err(e) => Err(AppError::new(
            ErrorKind::Internal,
            format!("cannot read {}: {e}", path.display()),
        )),
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use devlens_core::Classify;

    const ID: &str = "chrome-extension://abcdefghijklmnopabcdefghijklmnop";

    #[test]
    fn the_right_token_pairs_the_origin_a_wrong_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let pairing = ExtensionPairing::new(&DataDir::at(dir.path()));
        let token = pairing.status().unwrap().token;
        assert_eq!(token.len(), 32);
        assert_eq!(pairing.status().unwrap().token, token, "the token is kept");

        let wrong = pairing.pair(Some(ID), "0123").unwrap_err();
        assert_eq!(wrong.kind(), ErrorKind::Unauthorized);
        assert!(wrong.to_string().contains("token is wrong"), "{wrong}");
        assert!(!wrong.to_string().contains(&token), "never says the token");
        assert!(!pairing.is_paired(ID));

        let paired = pairing.pair(Some(&format!("{ID}/")), &token).unwrap();
        assert!(paired.paired && paired.changed);
        assert!(pairing.is_paired(ID));
        assert!(!pairing.pair(Some(ID), &token).unwrap().changed);

        // Another process (a fresh instance) sees the same state.
        let again = ExtensionPairing::new(&DataDir::at(dir.path()));
        assert!(again.is_paired(ID));
        assert!(again.revoke(ID).unwrap().changed);
        assert!(
            !pairing.is_paired(ID),
            "the running server notices the file changed"
        );
    }

    #[test]
    fn only_extension_origins_pair() {
        let dir = tempfile::tempdir().unwrap();
        let pairing = ExtensionPairing::new(&DataDir::at(dir.path()));
        let token = pairing.status().unwrap().token;
        for origin in [
            None,
            Some("http://evil.com"),
            Some("chrome-extension://short"),
        ] {
            let e = pairing.pair(origin, &token).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidInput, "{origin:?}");
        }
        assert_eq!(
            pairing.pair(Some(ID), " ").unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    }

    #[test]
    fn a_new_token_keeps_the_paired_origins() {
        let dir = tempfile::tempdir().unwrap();
        let pairing = ExtensionPairing::new(&DataDir::at(dir.path()));
        let old = pairing.status().unwrap().token;
        pairing.pair(Some(ID), &old).unwrap();
        let fresh = pairing.new_token().unwrap();
        assert_ne!(fresh.token, old);
        assert_eq!(fresh.origins.len(), 1);
        assert_eq!(
            pairing.pair(Some(ID), &old).unwrap_err().kind(),
            ErrorKind::Unauthorized
        );
    }

    #[test]
    fn secrets_compare_by_content() {
        assert!(same_secret(b"abcd", b"abcd"));
        assert!(!same_secret(b"abce", b"abcd"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(!same_secret(b"", b""));
    }
}
