//! Docs from a git repository, as Context7 ingests most libraries: a shallow clone of one branch
//! or tag (the `git` binary), whose docs folder is then read like any folder; the ref is the
//! version.
//!
//! What the clone may do is narrowed to fetching: https, http (both through the outbound guard,
//! redirects off) and `file:` only — never `ext::` or other transports that run commands — no
//! prompts for credentials, no LFS downloads, no submodules, no hooks of the repository.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Url;

use devlens_core::outbound::OutboundPolicy;

use crate::DocsError;

/// A clone that has not finished by then is stopped.
const CLONE_TIMEOUT: Duration = Duration::from_secs(300);

/// A repository to read docs from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// `https://…`, `http://…` or `file://…` (a path on this machine).
    pub url: String,
    /// A branch or tag [default: the repository's default branch].
    pub reference: Option<String>,
    /// The docs folder inside the repository [default: all of it].
    pub dir: Option<String>,
}

/// A finished clone, removed when dropped.
#[derive(Debug)]
pub(crate) struct Clone {
    root: PathBuf,
    /// The folder to read (the clone, or its `dir`).
    pub folder: PathBuf,
    /// The ref checked out: the one asked for, else the default branch's name.
    pub version: String,
    /// The URL without credentials, and the ref: where the docs came from.
    pub label: String,
}

impl Drop for Clone {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Checks what a caller gave before anything runs.
pub fn validate(source: &GitSource) -> Result<Url, DocsError> {
    let bad = |m: String| Err(DocsError::InvalidInput(m));
    let url = match Url::parse(source.url.trim()) {
        Ok(url) => url,
        Err(e) => {
            return bad(format!(
                "`{}` is not a repository URL ({e}): give https://host/owner/repo.git or \
                 file:///path/to/repo",
                source.url
            ));
        }
    };
    if !matches!(url.scheme(), "https" | "http" | "file") {
        return bad(format!(
            "devlens clones repositories over https, http or file: URLs, not `{}:`",
            url.scheme()
        ));
    }
    if let Some(reference) = &source.reference {
        let ok = !reference.is_empty()
            && reference.len() <= 200
            && !reference.starts_with(['-', '/', '.'])
            && !reference.contains("..")
            && !reference.ends_with(['/', '.'])
            && reference
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '+'));
        if !ok {
            return bad(format!(
                "`{reference}` is not a branch or tag name devlens can check out (letters, \
                 digits, `.`, `_`, `-`, `+` and `/`)"
            ));
        }
    }
    if let Some(dir) = &source.dir {
        let path = Path::new(dir);
        if path.is_absolute()
            || path
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return bad(format!(
                "--dir `{dir}` must be a folder inside the repository, like `docs`"
            ));
        }
    }
    Ok(url)
}

/// The URL as it may be shown and stored: without a user name or password.
fn shown(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

/// Clones `source` (one commit deep) into a new folder under `scratch`; http(s) hosts must pass
/// `policy`.
pub(crate) async fn clone(
    source: &GitSource,
    policy: &OutboundPolicy,
    scratch: &Path,
) -> Result<Clone, DocsError> {
    let url = validate(source)?;
    if url.scheme() != "file" {
        policy
            .check(&url)
            .await
            .map_err(|e| DocsError::Refused(format!("{e}. Nothing was stored")))?;
    }
    std::fs::create_dir_all(scratch).map_err(|e| DocsError::Read {
        path: scratch.to_path_buf(),
        reason: e.to_string(),
    })?;
    let root = scratch.join(format!(
        "clone-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    // From here on the folder is removed however this ends.
    let mut clone = Clone {
        root: root.clone(),
        folder: root.clone(),
        version: String::new(),
        label: shown(&url),
    };
    let mut command = tokio::process::Command::new("git");
    command
        .args([
            "-c",
            "protocol.allow=never",
            "-c",
            "protocol.https.allow=always",
            "-c",
            "protocol.http.allow=always",
            "-c",
            "protocol.file.allow=always",
            "-c",
            "http.followRedirects=false",
            "-c",
            "core.hooksPath=/dev/null",
            "clone",
            "--quiet",
            "--depth",
            "1",
            "--single-branch",
            "--no-tags",
        ])
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true")
        .env("SSH_ASKPASS", "true")
        .env("GIT_LFS_SKIP_SMUDGE", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(reference) = &source.reference {
        command.args(["--branch", reference]);
    }
    command.arg("--").arg(url.as_str()).arg(&root);
    let child = command.spawn().map_err(|e| {
        DocsError::InvalidInput(format!(
            "cannot run git ({e}): install git to add docs from a repository"
        ))
    })?;
    let output = match tokio::time::timeout(CLONE_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(fetch_error(&clone.label, e.to_string())),
        Err(_) => {
            return Err(fetch_error(
                &clone.label,
                format!(
                    "the clone took longer than {} s and was stopped",
                    CLONE_TIMEOUT.as_secs()
                ),
            ));
        }
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why = stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.trim_start_matches("fatal: ").trim())
            .collect::<Vec<_>>()
            .join("; ");
        let hint = match &source.reference {
            Some(r) if why.contains("not found") => {
                format!(" (is `{r}` a branch or tag of this repository?)")
            }
            _ => String::new(),
        };
        return Err(fetch_error(
            &clone.label,
            format!("git clone failed: {why}{hint}"),
        ));
    }
    clone.version = match &source.reference {
        Some(r) => r.clone(),
        None => current_ref(&root).await,
    };
    clone.label = format!("{}@{}", clone.label, clone.version);
    if let Some(dir) = &source.dir {
        let folder = root.join(dir);
        let inside = std::fs::canonicalize(&folder)
            .ok()
            .zip(std::fs::canonicalize(&root).ok())
            .is_some_and(|(f, r)| f.starts_with(r) && f.is_dir());
        if !inside {
            return Err(DocsError::InvalidInput(format!(
                "the repository has no folder `{dir}` at {}; leave --dir out to read all of it",
                clone.version
            )));
        }
        clone.folder = folder;
    }
    Ok(clone)
}

fn fetch_error(url: &str, reason: String) -> DocsError {
    DocsError::Fetch {
        url: url.to_string(),
        reason,
    }
}

/// The checked-out branch's name, or the commit's short id when none is checked out.
async fn current_ref(root: &Path) -> String {
    let run = |args: &'static [&'static str]| {
        let mut command = tokio::process::Command::new("git");
        command.arg("-C").arg(root).args(args);
        command
    };
    for args in [
        &["rev-parse", "--abbrev-ref", "HEAD"][..],
        &["rev-parse", "--short", "HEAD"][..],
    ] {
        if let Ok(output) = run(args).output().await
            && output.status.success()
        {
            let name = String::from_utf8_lossy(&output.stdout).trim().to_string();
            if !name.is_empty() && name != "HEAD" {
                return name;
            }
        }
    }
    "HEAD".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(url: &str, reference: Option<&str>, dir: Option<&str>) -> GitSource {
        GitSource {
            url: url.into(),
            reference: reference.map(Into::into),
            dir: dir.map(Into::into),
        }
    }

    #[test]
    fn only_fetching_transports_and_plain_refs_and_folders() {
        assert!(
            validate(&source(
                "https://github.com/vitejs/vite.git",
                Some("v6.0.0"),
                Some("docs")
            ))
            .is_ok()
        );
        assert!(validate(&source("file:///srv/repos/widgets.git", None, None)).is_ok());
        for (url, reference, dir, said) in [
            ("ext::sh -c touch% /tmp/pwned", None, None, "ext"),
            ("ssh://git@github.com/a/b.git", None, None, "not `ssh:`"),
            (
                "https://github.com/a/b.git",
                Some("--upload-pack=touch"),
                None,
                "not a branch or tag",
            ),
            (
                "https://github.com/a/b.git",
                Some("a..b"),
                None,
                "not a branch or tag",
            ),
            (
                "https://github.com/a/b.git",
                None,
                Some("../../etc"),
                "inside the repository",
            ),
            (
                "https://github.com/a/b.git",
                None,
                Some("/etc"),
                "inside the repository",
            ),
        ] {
            let error = validate(&source(url, reference, dir))
                .unwrap_err()
                .to_string();
            assert!(error.contains(said), "{url} {reference:?} {dir:?}: {error}");
        }
    }

    #[test]
    fn credentials_never_show() {
        let url = Url::parse("https://user:secret@example.com/a/b.git").unwrap();
        assert_eq!(shown(&url), "https://example.com/a/b.git");
    }
}
