//! Bearer tokens for a devlens server that others reach: `devlens token create|list|revoke`, and
//! the check the HTTP server makes of every request that needs one.
//!
//! A token is `dlt_` and 32 random bytes (base64url). It is shown once, when it is made; the data
//! dir keeps only its SHA-256, its last four characters (so a person can tell tokens apart) and
//! what it may do: `read` (searches, queries, listing) or `write` (also everything that changes
//! state). The file, `tokens.json`, is written atomically and readable by its owner only, and it
//! is re-read when it changes, so `devlens token revoke` takes effect on a running server at once.
//! Neither a token nor its hash is ever logged or printed after creation.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;
use std::time::SystemTime;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use devlens_core::{DataDir, ErrorKind, Report, clock, paths::write_atomic_private};

use crate::AppError;
use crate::extension::same_secret;

/// What every devlens token starts with, so one is recognisable in a config or a leak scanner.
pub const TOKEN_PREFIX: &str = "dlt_";
/// How a token is made, for messages that send the user to make one.
pub const CREATE_HINT: &str = "devlens token create --scope write";
const NAME_MAX_CHARS: usize = 64;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Searches, queries, listings, reading files and the browser's records.
    Read,
    /// Also every call that changes state: projects, indexes, the knowledge base, docs, files,
    /// the browser.
    Write,
}

impl Scope {
    /// Whether a token of this scope may make a call that needs `needed`.
    pub fn allows(self, needed: Scope) -> bool {
        self == Scope::Write || needed == Scope::Read
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = AppError;

    fn from_str(s: &str) -> Result<Self, AppError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read" => Ok(Scope::Read),
            "write" => Ok(Scope::Write),
            other => Err(AppError::invalid(format!(
                "unknown scope '{other}': a token's scope is `read` (searches, queries, listings) \
                 or `write` (also everything that changes state)"
            ))),
        }
    }
}

/// A token as the file keeps it: never the secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredToken {
    id: String,
    #[serde(default)]
    name: String,
    scope: Scope,
    created_at: String,
    /// SHA-256 of the whole token, hex.
    sha256: String,
    /// The token's last four characters, to tell tokens apart in a list.
    last4: String,
}

/// What `tokens.json` holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct TokensFile {
    #[serde(default)]
    tokens: Vec<StoredToken>,
}

/// A token as listed: who it is, never the secret.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    pub scope: Scope,
    pub created_at: String,
    /// The token's last four characters.
    pub last4: String,
}

impl From<&StoredToken> for TokenInfo {
    fn from(t: &StoredToken) -> Self {
        Self {
            id: t.id.clone(),
            name: t.name.clone(),
            scope: t.scope,
            created_at: t.created_at.clone(),
            last4: t.last4.clone(),
        }
    }
}

/// `devlens token list`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenList {
    pub tokens: Vec<TokenInfo>,
}

impl Report for TokenList {
    fn to_text(&self) -> String {
        if self.tokens.is_empty() {
            return format!("No tokens. Make one with `{CREATE_HINT}` (or --scope read).");
        }
        let mut text = format!(
            "{} token{}:",
            self.tokens.len(),
            if self.tokens.len() == 1 { "" } else { "s" }
        );
        for t in &self.tokens {
            let name = if t.name.is_empty() { "-" } else { &t.name };
            text.push_str(&format!(
                "\n  {}  {:<5}  {name}  created {}  ends …{}",
                t.id, t.scope, t.created_at, t.last4
            ));
        }
        text
    }
}

/// A token just made: the one time its secret is shown.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedToken {
    #[serde(flatten)]
    pub info: TokenInfo,
    /// The token itself. Not kept anywhere: lose it and make another.
    pub token: String,
}

// Never print the secret by accident (a `{:?}` in a log line).
impl fmt::Debug for CreatedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreatedToken")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Report for CreatedToken {
    fn to_text(&self) -> String {
        format!(
            "{token}\n\nThe {scope} token {id}{name} above is shown this once: keep it in a \
             password manager or your MCP client's config. Send it as `Authorization: Bearer \
             <token>` (the CLI: DEVLENS_TOKEN or --token). Revoke it with `devlens token revoke \
             {id}`.",
            token = self.token,
            scope = self.info.scope,
            id = self.info.id,
            name = if self.info.name.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.info.name)
            },
        )
    }
}

/// `devlens token revoke`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevokedToken {
    pub id: String,
    pub name: String,
}

impl Report for RevokedToken {
    fn to_text(&self) -> String {
        format!(
            "Revoked token {}{}: requests carrying it are refused from now on.",
            self.id,
            if self.name.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.name)
            }
        )
    }
}

/// Who a token that checked out belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenIdentity {
    pub id: String,
    pub name: String,
    pub scope: Scope,
}

impl From<&StoredToken> for TokenIdentity {
    fn from(t: &StoredToken) -> Self {
        Self {
            id: t.id.clone(),
            name: t.name.clone(),
            scope: t.scope,
        }
    }
}

/// The file as read and what it looked like on disk then.
#[derive(Debug, Default)]
struct Loaded {
    file: TokensFile,
    stamp: Option<(SystemTime, u64)>,
}

/// The tokens of one data dir.
#[derive(Debug)]
pub struct TokenStore {
    path: PathBuf,
    loaded: Mutex<Option<Loaded>>,
}

impl TokenStore {
    pub fn new(data_dir: &DataDir) -> Self {
        Self {
            path: data_dir.root().join("tokens.json"),
            loaded: Mutex::new(None),
        }
    }

    /// Where the tokens are kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes a token of `scope`, named `name` (for the list); its secret is in the answer only.
    pub fn create(&self, scope: Scope, name: Option<&str>) -> Result<CreatedToken, AppError> {
        let name = valid_name(name.unwrap_or_default())?;
        let token = format!(
            "{TOKEN_PREFIX}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random::<32>()?)
        );
        self.update(|file| {
            let id = loop {
                let id = hex::encode(random::<4>()?);
                if !file.tokens.iter().any(|t| t.id == id) {
                    break id;
                }
            };
            let stored = StoredToken {
                id,
                name,
                scope,
                created_at: clock::now_rfc3339(),
                sha256: digest(&token),
                last4: token[token.len() - 4..].to_string(),
            };
            let info = TokenInfo::from(&stored);
            file.tokens.push(stored);
            Ok((CreatedToken { info, token }, true))
        })
    }

    /// Every token, oldest first.
    pub fn list(&self) -> Result<TokenList, AppError> {
        self.update(|file| {
            let tokens = file.tokens.iter().map(TokenInfo::from).collect();
            Ok((TokenList { tokens }, false))
        })
    }

    /// Forgets the token `id`: requests carrying it are refused from then on.
    pub fn revoke(&self, id: &str) -> Result<RevokedToken, AppError> {
        let id = id.trim();
        self.update(|file| {
            let Some(at) = file.tokens.iter().position(|t| t.id == id) else {
                let known: Vec<&str> = file.tokens.iter().map(|t| t.id.as_str()).collect();
                return Err(AppError::new(
                    ErrorKind::NotFound,
                    if known.is_empty() {
                        format!("no token '{id}': there are no tokens")
                    } else {
                        format!(
                            "no token '{id}'; the tokens are {} (see `devlens token list`)",
                            known.join(", ")
                        )
                    },
                ));
            };
            let gone = file.tokens.remove(at);
            Ok((
                RevokedToken {
                    id: gone.id,
                    name: gone.name,
                },
                true,
            ))
        })
    }

    /// Whether no token exists (a server that requires tokens cannot be used then).
    pub fn is_empty(&self) -> Result<bool, AppError> {
        self.update(|file| Ok((file.tokens.is_empty(), false)))
    }

    /// The token `secret` is, if it is one of ours. A damaged file is an error, not a refusal:
    /// the server's owner has to fix it.
    pub fn verify(&self, secret: &str) -> Result<Option<TokenIdentity>, AppError> {
        let secret = secret.trim();
        if secret.is_empty() {
            return Ok(None);
        }
        let presented = digest(secret);
        self.update(|file| {
            let found = file
                .tokens
                .iter()
                .find(|t| same_secret(presented.as_bytes(), t.sha256.as_bytes()))
                .map(TokenIdentity::from);
            Ok((found, false))
        })
    }

    /// The token `id`, while it exists (a panel session holds a token's id, not the token).
    pub fn identity(&self, id: &str) -> Result<Option<TokenIdentity>, AppError> {
        self.update(|file| {
            let found = file
                .tokens
                .iter()
                .find(|t| t.id == id)
                .map(TokenIdentity::from);
            Ok((found, false))
        })
    }

    /// Runs `change` on the current tokens; writes the file when it says something changed.
    /// A failed write keeps the file (and the state in memory) as it was.
    fn update<T>(
        &self,
        change: impl FnOnce(&mut TokensFile) -> Result<(T, bool), AppError>,
    ) -> Result<T, AppError> {
        let mut slot = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        // Another devlens on this data dir (`token create` beside a running server) may change
        // the file at the same moment: the lock makes each read, change and write whole.
        let _lock = lock_beside(&self.path);
        let on_disk = stamp(&self.path);
        if slot.as_ref().is_none_or(|l| l.stamp != on_disk) {
            *slot = Some(Loaded {
                file: read(&self.path)?,
                stamp: on_disk,
            });
        }
        let loaded = slot
            .as_mut()
            .ok_or_else(|| AppError::new(ErrorKind::Internal, "the tokens did not load"))?;
        // A copy: a change that fails, or a write that fails, leaves the tokens as they were.
        let mut file = loaded.file.clone();
        let (result, dirty) = change(&mut file)?;
        if dirty {
            let json = serde_json::to_vec_pretty(&file)
                .map_err(|e| AppError::new(ErrorKind::Internal, e.to_string()))?;
            // Owner-only from its first byte: it holds secrets.
            write_atomic_private(&self.path, &json)?;
            *loaded = Loaded {
                file,
                stamp: stamp(&self.path),
            };
        }
        Ok(result)
    }
}

/// An exclusive lock on `<file>.lock`, held until the returned file is dropped; `None` when the
/// data dir cannot hold one (read-only), and then the change goes ahead unlocked.
fn lock_beside(path: &Path) -> Option<std::fs::File> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(PathBuf::from(name))
        .ok()?;
    fs4::fs_std::FileExt::lock_exclusive(&file).ok()?;
    Some(file)
}

/// A name for the list: trimmed, one line, at most 64 characters.
fn valid_name(name: &str) -> Result<String, AppError> {
    let name = name.trim();
    if name.chars().any(char::is_control) {
        return Err(AppError::invalid(
            "a token's name is one line of text (no tabs or line breaks)",
        ));
    }
    if name.chars().count() > NAME_MAX_CHARS {
        return Err(AppError::invalid(format!(
            "a token's name is at most {NAME_MAX_CHARS} characters"
        )));
    }
    Ok(name.to_string())
}

fn digest(token: &str) -> String {
    hex::encode(&Sha256::digest(token.as_bytes())[..])
}

fn random<const N: usize>() -> Result<[u8; N], AppError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("cannot make a token: the system's random source failed ({e})"),
        )
    })?;
    Ok(bytes)
}

fn read(path: &Path) -> Result<TokensFile, AppError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!(
                    "{} is damaged ({e}). Restore it, or delete it and make new tokens with \
                     `{CREATE_HINT}`.",
                    path.display()
                ),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TokensFile::default()),
        Err(e) => Err(AppError::new(
            ErrorKind::Internal,
            format!("cannot read {}: {e}", path.display()),
        )),
    }
}

/// When and how big the file was: a write by another process changes one or the other.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use devlens_core::Classify;

    fn store() -> (tempfile::TempDir, TokenStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(&DataDir::at(dir.path()));
        (dir, store)
    }

    #[test]
    fn two_processes_creating_tokens_at_once_lose_none() {
        let dir = tempfile::tempdir().unwrap();
        // Two stores on one data dir stand for two devlens processes.
        let made: Vec<String> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        let store = TokenStore::new(&DataDir::at(dir.path()));
                        (0..25)
                            .map(|_| store.create(Scope::Write, None).unwrap().token)
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        let fresh = TokenStore::new(&DataDir::at(dir.path()));
        assert_eq!(fresh.list().unwrap().tokens.len(), 50);
        for token in &made {
            assert!(fresh.verify(token).unwrap().is_some(), "{token} was lost");
        }
    }

    #[test]
    fn a_created_token_verifies_with_its_scope_and_is_stored_hashed() {
        let (_dir, store) = store();
        assert!(store.is_empty().unwrap());
        let made = store.create(Scope::Read, Some(" ci bot ")).unwrap();
        assert!(made.token.starts_with(TOKEN_PREFIX));
        assert_eq!(
            made.token.len(),
            TOKEN_PREFIX.len() + 43,
            "32 bytes, base64url"
        );
        assert_eq!(made.info.name, "ci bot");
        assert!(!format!("{made:?}").contains(&made.token), "Debug hides it");

        let who = store.verify(&made.token).unwrap().unwrap();
        assert_eq!(
            (who.id.as_str(), who.scope),
            (made.info.id.as_str(), Scope::Read)
        );
        assert!(store.verify("dlt_wrong").unwrap().is_none());
        assert!(store.verify("").unwrap().is_none());

        let on_disk = std::fs::read_to_string(store.path()).unwrap();
        assert!(!on_disk.contains(&made.token), "{on_disk}");
        assert!(on_disk.contains(&digest(&made.token)));
        let listed = store.list().unwrap();
        assert!(!listed.to_text().contains(&made.token));
        assert!(
            listed
                .to_text()
                .contains(&made.token[made.token.len() - 4..])
        );
    }

    #[test]
    fn a_revoked_token_no_longer_verifies_even_in_a_running_server() {
        let (dir, server) = store();
        let made = server.create(Scope::Write, None).unwrap();
        assert!(server.verify(&made.token).unwrap().is_some());
        // The CLI revokes in another process: the server's store notices the file changed.
        let cli = TokenStore::new(&DataDir::at(dir.path()));
        assert_eq!(cli.revoke(&made.info.id).unwrap().id, made.info.id);
        assert!(server.verify(&made.token).unwrap().is_none());
        assert!(server.identity(&made.info.id).unwrap().is_none());
        let again = cli.revoke(&made.info.id).unwrap_err();
        assert_eq!(again.kind(), ErrorKind::NotFound);
    }

    #[test]
    fn scopes_parse_and_write_covers_read() {
        assert_eq!("READ".parse::<Scope>().unwrap(), Scope::Read);
        assert_eq!("write".parse::<Scope>().unwrap(), Scope::Write);
        assert_eq!(
            "admin".parse::<Scope>().unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert!(Scope::Write.allows(Scope::Write) && Scope::Write.allows(Scope::Read));
        assert!(Scope::Read.allows(Scope::Read) && !Scope::Read.allows(Scope::Write));
    }

    #[test]
    fn names_are_one_short_line() {
        let (_dir, store) = store();
        assert!(store.create(Scope::Read, Some("a\nb")).is_err());
        assert!(store.create(Scope::Read, Some(&"x".repeat(65))).is_err());
        assert!(store.is_empty().unwrap(), "a refused name makes no token");
    }

    #[test]
    fn a_damaged_file_is_an_error_that_names_it() {
        let (_dir, store) = store();
        std::fs::write(store.path(), "{not json").unwrap();
        let e = store.verify("dlt_x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Internal);
        assert!(e.to_string().contains("tokens.json"), "{e}");
    }
}
