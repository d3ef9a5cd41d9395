//! The project's own dependencies as libraries: read from the workspace's manifests and lock
//! files, each with the version installed there, so `resolve_library_id` finds them and the
//! first `query_docs` about one reads its docs from its installed folder (README, docs, type
//! declarations: [`crate::package`]) — no `devlens docs add`, nothing fetched.
//!
//! Only the workspace is read (and the package folders inside it); a manifest or lock file that
//! cannot be parsed is named with its line as a [`Problem`], and the rest still works.

mod cargo;
mod npm;
pub(crate) mod python;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Where a dependency comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    Npm,
    #[serde(rename = "pypi")]
    PyPi,
    Crates,
}

impl Ecosystem {
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Npm => "npm",
            Ecosystem::PyPi => "pypi",
            Ecosystem::Crates => "crates",
        }
    }

    /// Where a package `name` is installed, as a user would name it.
    pub fn install_place(self, name: &str) -> String {
        match self {
            Ecosystem::Npm => format!("node_modules/{name}"),
            Ecosystem::PyPi => format!("the virtualenv's site-packages ({name})"),
            Ecosystem::Crates => format!("Cargo's registry cache ({name})"),
        }
    }

    /// The library id of package `name`: `/npm/express`; a scope loses its `@`
    /// (`@vue/runtime-core` → `/npm/vue/runtime-core`); a Python name is normalised
    /// (`Typing_Extensions` → `/pypi/typing-extensions`).
    pub fn library_id(self, name: &str) -> String {
        let name = match self {
            Ecosystem::Npm => name.trim_start_matches('@').to_lowercase(),
            Ecosystem::PyPi => python::normalize(name),
            Ecosystem::Crates => name.to_lowercase(),
        };
        format!("/{}/{name}", self.as_str())
    }
}

/// One direct dependency of the workspace.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Dependency {
    /// The library id its docs are stored under (`/npm/express`).
    pub id: String,
    /// The package name (`express`, `@types/node`).
    pub name: String,
    pub ecosystem: Ecosystem,
    /// The version installed in the workspace (its folder's own manifest), if it is installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub installed: Option<String>,
    /// The version the lock file resolves it to, if there is a lock file naming it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<String>,
    /// The range the manifest asks for (`^4.19.0`).
    pub declared: String,
    /// The manifest that declares it, relative to the workspace.
    pub declared_in: String,
    /// Whether only development needs it (`devDependencies`).
    pub dev: bool,
    /// The package's own one-line description.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The installed folder its docs are read from.
    #[serde(skip)]
    pub dir: Option<PathBuf>,
}

impl Dependency {
    /// The version its docs are stored under: the installed one.
    pub fn version(&self) -> Option<&str> {
        self.installed.as_deref()
    }
}

/// A manifest or lock file that could not be read as it should.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Problem {
    /// The file, relative to the workspace.
    pub file: String,
    /// What is wrong, with the line where the parser stopped.
    pub reason: String,
}

impl Problem {
    fn new(file: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            reason: reason.into(),
        }
    }
}

/// The direct dependencies of a workspace (`devlens docs deps`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct WorkspaceDeps {
    /// By ecosystem, then name.
    pub dependencies: Vec<Dependency>,
    /// Manifests and lock files that could not be parsed (the rest was read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
}

impl WorkspaceDeps {
    /// The dependency stored under library `id`.
    pub fn by_id(&self, id: &str) -> Option<&Dependency> {
        self.dependencies.iter().find(|d| d.id == id)
    }
}

/// What a scan read, to tell whether it is still true: the manifests, lock files and the
/// install markers package managers rewrite on every install, each with its size and time.
type Fingerprint = Vec<(PathBuf, Option<(u64, std::time::SystemTime)>)>;

/// Files whose change means the dependencies may have changed, besides the manifests read:
/// lock files, and the markers npm, pnpm and yarn write into node_modules on every install.
const WATCHED: [&str; 11] = [
    ".",
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "node_modules/.package-lock.json",
    "node_modules/.modules.yaml",
    "node_modules/.yarn-integrity",
    "pyproject.toml",
    "Cargo.lock",
];

/// Scans by workspace, kept while nothing they read has changed, and parsed lock files by
/// path, kept while their text is unchanged: a lock file of a large project is megabytes, and
/// the dependencies are looked at by every resolve.
#[derive(Default)]
pub struct LockCache {
    parsed: Mutex<HashMap<PathBuf, ([u8; 32], npm::Lock)>>,
    scans: Mutex<HashMap<PathBuf, (Fingerprint, WorkspaceDeps)>>,
}

impl std::fmt::Debug for LockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockCache").finish_non_exhaustive()
    }
}

impl LockCache {
    fn get_or_parse(
        &self,
        path: &Path,
        text: &str,
        parse: fn(&str) -> Result<npm::Lock, String>,
    ) -> Result<npm::Lock, String> {
        let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        let mut parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((known, lock)) = parsed.get(path)
            && *known == hash
        {
            return Ok(lock.clone());
        }
        let lock = parse(text)?;
        parsed.insert(path.to_path_buf(), (hash, lock.clone()));
        Ok(lock)
    }
}

fn fingerprint(root: &Path, deps: &WorkspaceDeps) -> Fingerprint {
    let mut files: Vec<PathBuf> = WATCHED.iter().map(|f| root.join(f)).collect();
    files.extend(deps.dependencies.iter().map(|d| root.join(&d.declared_in)));
    // A package installed or upgraded in a virtualenv adds a folder to its site-packages.
    files.extend(python::site_packages(root));
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|f| {
            let stamp = std::fs::metadata(&f)
                .ok()
                .and_then(|m| Some((m.len(), m.modified().ok()?)));
            (f, stamp)
        })
        .collect()
}

/// The direct dependencies of the workspace at `root`, with their installed versions (from the
/// cache while no manifest, lock file or install marker has changed).
pub fn scan(root: &Path, cache: &LockCache) -> WorkspaceDeps {
    {
        let scans = cache.scans.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((print, deps)) = scans.get(root)
            && *print == fingerprint(root, deps)
        {
            return deps.clone();
        }
    }
    let deps = scan_now(root, cache);
    let print = fingerprint(root, &deps);
    cache
        .scans
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(root.to_path_buf(), (print, deps.clone()));
    deps
}

fn scan_now(root: &Path, locks: &LockCache) -> WorkspaceDeps {
    let mut problems = Vec::new();
    let mut dependencies = npm::scan(root, locks, &mut problems);
    dependencies.extend(python::scan(root, &mut problems));
    dependencies.extend(cargo::scan(root, &mut problems));
    dependencies
        .sort_by(|a, b| (a.ecosystem.as_str(), &a.name).cmp(&(b.ecosystem.as_str(), &b.name)));
    WorkspaceDeps {
        dependencies,
        problems,
    }
}

/// Whether `id` is where a dependency's docs are stored (`/npm/…`, `/pypi/…`, `/crates/…`): only then is the workspace
/// looked at for a query.
pub fn is_dependency_id(id: &str) -> bool {
    let id = id.trim();
    ["/npm/", "/pypi/", "/crates/"]
        .iter()
        .any(|prefix| id.starts_with(prefix))
}

/// A TOML parse error as a problem's reason: `line N: what`.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let line = e
        .span()
        .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    match line {
        Some(line) => format!("line {line}: {}", e.message().trim()),
        None => e.message().trim().to_string(),
    }
}

/// `path` relative to `root`, with `/` separators (`.` for the root itself).
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    if rel.as_os_str().is_empty() {
        return ".".into();
    }
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn direct_dependencies_with_installed_locked_and_declared_versions() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "package.json",
            r#"{"name": "app", "workspaces": ["packages/*"],
                "dependencies": {"express": "^4.19.0", "@types/node": "^22"},
                "devDependencies": {"vitest": "^2", "express": "^4"}}"#,
        );
        write(
            root,
            "packages/ui/package.json",
            r#"{"name": "ui", "dependencies": {"app": "*", "date-fns": "^4.1.0"}}"#,
        );
        write(
            root,
            "package-lock.json",
            r#"{"lockfileVersion": 3, "packages": {
                "node_modules/express": {"version": "4.21.2"},
                "node_modules/vitest": {"version": "2.1.8"},
                "node_modules/date-fns": {"version": "4.1.0"}}}"#,
        );
        write(
            root,
            "node_modules/express/package.json",
            r#"{"name": "express", "version": "4.21.2", "description": "Fast web framework"}"#,
        );
        write(
            root,
            "node_modules/@types/node/package.json",
            r#"{"name": "@types/node", "version": "22.10.1"}"#,
        );
        let deps = scan(root, &LockCache::default());
        assert!(deps.problems.is_empty(), "{:?}", deps.problems);
        let names: Vec<&str> = deps.dependencies.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["@types/node", "date-fns", "express", "vitest"]);
        let express = deps.by_id("/npm/express").unwrap();
        assert_eq!(express.installed.as_deref(), Some("4.21.2"));
        assert_eq!(express.locked.as_deref(), Some("4.21.2"));
        assert_eq!(express.declared, "^4.19.0");
        assert!(!express.dev, "a runtime dependency beats a dev one");
        assert_eq!(express.description, "Fast web framework");
        let types = deps.by_id("/npm/types/node").unwrap();
        assert_eq!(types.installed.as_deref(), Some("22.10.1"));
        assert_eq!(types.locked, None);
        let date_fns = deps.by_id("/npm/date-fns").unwrap();
        assert_eq!(date_fns.declared_in, "packages/ui/package.json");
        assert_eq!(date_fns.installed, None, "not installed");
        assert_eq!(date_fns.locked.as_deref(), Some("4.1.0"));
        assert!(deps.by_id("/npm/vitest").unwrap().dev);
    }

    #[test]
    fn a_broken_lock_file_is_named_with_its_line_and_the_rest_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "package.json",
            r#"{"dependencies": {"express": "^4"}}"#,
        );
        write(root, "yarn.lock", "express@^4:\n  version \"4.21.2\"\n!!\n");
        write(
            root,
            "node_modules/express/package.json",
            r#"{"version": "4.21.2"}"#,
        );
        let deps = scan(root, &LockCache::default());
        assert_eq!(deps.problems.len(), 1);
        assert_eq!(deps.problems[0].file, "yarn.lock");
        assert!(
            deps.problems[0].reason.starts_with("line 3:"),
            "{:?}",
            deps.problems
        );
        assert_eq!(deps.dependencies[0].installed.as_deref(), Some("4.21.2"));

        write(root, "package.json", "{\n  \"dependencies\": {,\n}");
        let deps = scan(root, &LockCache::default());
        assert!(deps.dependencies.is_empty());
        assert_eq!(deps.problems[0].file, "package.json");
        assert!(
            deps.problems[0].reason.starts_with("line 2:"),
            "{:?}",
            deps.problems
        );
    }

    #[test]
    fn no_manifest_no_dependencies() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            scan(dir.path(), &LockCache::default()),
            WorkspaceDeps::default()
        );
    }
}
