//! The workspace's dependencies in the library docs: listed with what is stored of them, found
//! by `resolve_library_id` before anyone added them, and read from their installed folder on
//! the first `query_docs` about them — at the installed version, which a question without a
//! version gets.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use devlens_core::Report;

use crate::deps::{self, Dependency, Problem, WorkspaceDeps};
use crate::ingest::{DocsSource, IngestReport, IngestRequest, IngestStage};
use crate::query::{QueryDocsInput, QueryDocsOutput};
use crate::resolve::{self, Resolved};
use crate::store::LibraryInfo;
use crate::{Docs, DocsError};

/// One dependency and what the docs hold of it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ListedDependency {
    #[serde(flatten)]
    pub dependency: Dependency,
    /// Whether the installed version's docs are stored (else the first question reads them).
    pub ingested: bool,
    /// The versions stored, newest first (older installs stay until removed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stored_versions: Vec<String>,
}

/// `devlens docs deps`, `GET /api/docs/deps`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DependencyList {
    /// The workspace whose manifests were read.
    pub workspace: String,
    pub dependencies: Vec<ListedDependency>,
    /// Manifests and lock files that could not be parsed (the rest was read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
}

impl Report for DependencyList {
    fn to_text(&self) -> String {
        let mut lines = Vec::new();
        if self.dependencies.is_empty() {
            lines.push(format!(
                "no dependencies found in {}: devlens reads package.json with \
                 package-lock.json, pnpm-lock.yaml or yarn.lock",
                self.workspace
            ));
        }
        for listed in &self.dependencies {
            let d = &listed.dependency;
            let state = match (&d.installed, listed.ingested) {
                (None, _) => "not installed: run your package manager's install".to_string(),
                (Some(_), true) => "ingested".to_string(),
                (Some(_), false) => "read on its first question (or `--ingest`)".to_string(),
            };
            lines.push(format!(
                "{}  {}  {}  {}{}  [{}]",
                d.id,
                d.name,
                d.installed.as_deref().unwrap_or("-"),
                d.ecosystem.as_str(),
                if d.dev { ", dev" } else { "" },
                state
            ));
        }
        for problem in &self.problems {
            lines.push(format!("warning: {}: {}", problem.file, problem.reason));
        }
        lines.join("\n")
    }
}

impl Docs {
    /// The direct dependencies of the workspace at `root`, with their installed versions.
    pub fn workspace_dependencies(&self, root: &Path) -> WorkspaceDeps {
        deps::scan(root, &self.locks)
    }

    /// The direct dependencies of the workspace at `root` and what is stored of each.
    pub fn dependencies(&self, root: &Path) -> Result<DependencyList, DocsError> {
        let found = self.workspace_dependencies(root);
        let stored = self.store.libraries()?;
        let dependencies = found
            .dependencies
            .into_iter()
            .map(|dependency| {
                let stored_versions = stored
                    .iter()
                    .find(|l| l.id == dependency.id)
                    .map(|l| l.versions.clone())
                    .unwrap_or_default();
                let ingested = dependency
                    .version()
                    .is_some_and(|v| stored_versions.iter().any(|s| s == v));
                ListedDependency {
                    dependency,
                    ingested,
                    stored_versions,
                }
            })
            .collect();
        Ok(DependencyList {
            workspace: root.display().to_string(),
            dependencies,
            problems: found.problems,
        })
    }

    /// The libraries `name` may mean, best first: the stored ones and the workspace's installed
    /// dependencies (`deps`), each dependency marked with its installed version.
    pub fn resolve_in(
        &self,
        name: &str,
        query: Option<&str>,
        deps: Option<&WorkspaceDeps>,
    ) -> Result<Resolved, DocsError> {
        let mut resolved = self.resolve(name, query)?;
        let Some(deps) = deps else {
            return Ok(resolved);
        };
        let mut libraries: Vec<LibraryInfo> = self.store.libraries()?;
        for dep in &deps.dependencies {
            let Some(installed) = dep.version() else {
                continue;
            };
            if libraries.iter().any(|l| l.id == dep.id) {
                continue;
            }
            let mut description = format!(
                "{} dependency of the workspace ({installed} installed); {} read on the first \
                 question",
                dep.ecosystem.as_str(),
                match dep.ecosystem {
                    crate::Ecosystem::Npm => "its README, docs and type declarations are",
                    crate::Ecosystem::PyPi => "its long description and module docstrings are",
                    crate::Ecosystem::Crates => "its README and doc comments are",
                }
            );
            if !dep.description.is_empty() {
                description = format!("{}. {description}", dep.description.trim_end_matches('.'));
            }
            libraries.push(LibraryInfo {
                id: dep.id.clone(),
                name: dep.name.clone(),
                description,
                source: "workspace".into(),
                versions: Vec::new(),
                snippets: 0,
                updated_at: String::new(),
            });
        }
        resolved.matches = resolve::resolve(&libraries, name, query);
        for m in &mut resolved.matches {
            m.installed_version = deps.by_id(&m.id).and_then(|d| d.installed.clone());
        }
        Ok(resolved)
    }

    /// Answers `query_docs`; when the library is one of the workspace's dependencies (`deps`),
    /// a question without a version is about the installed one, and an installed version not
    /// stored yet is read from its folder first (the answer says so).
    pub async fn query_in(
        &self,
        input: &QueryDocsInput,
        deps: Option<&WorkspaceDeps>,
    ) -> Result<QueryDocsOutput, DocsError> {
        let Some(dep) = deps.and_then(|d| d.by_id(input.library_id.trim())) else {
            return self.query(input).await;
        };
        let Some(installed) = dep.installed.clone() else {
            if self.store.library(&dep.id)?.is_some() {
                return self.query(input).await;
            }
            return Err(DocsError::InvalidInput(format!(
                "{} is a dependency of the workspace ({}) but is not installed, so its docs \
                 cannot be read: install the project's dependencies (npm install, pnpm install \
                 or yarn) and ask again",
                dep.name, dep.declared_in
            )));
        };
        let stored_versions = self
            .store
            .library(&dep.id)?
            .map(|l| l.versions)
            .unwrap_or_default();
        let asked = input
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty());
        if let Some(asked) = asked
            && asked != installed
            && !stored_versions.iter().any(|v| v == asked)
        {
            return Err(DocsError::InvalidInput(format!(
                "the workspace has {} {installed} installed, not {asked}; ask without a version \
                 (or with `{installed}`) for the installed one's docs{}",
                dep.name,
                if stored_versions.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", or one of the stored versions: {}",
                        stored_versions.join(", ")
                    )
                }
            )));
        }
        let wanted = asked.unwrap_or(&installed).to_string();
        let mut notice = None;
        if wanted == installed && !stored_versions.contains(&installed) {
            notice = self.ingest_dependency_once(dep).await?;
        }
        let mut input = input.clone();
        input.version = Some(wanted);
        let mut output = self.query(&input).await?;
        if let Some(read) = notice {
            output.notice = Some(match output.notice.take() {
                Some(other) => format!("{read}; {other}"),
                None => read,
            });
        }
        Ok(output)
    }

    /// Reads dependency `dep` at its installed version unless another caller just did;
    /// `Some(what was done)` when this call read it.
    async fn ingest_dependency_once(&self, dep: &Dependency) -> Result<Option<String>, DocsError> {
        let _one_at_a_time = self.dependency_ingest.lock().await;
        let installed = dep.version().unwrap_or_default();
        let stored = self
            .store
            .library(&dep.id)?
            .is_some_and(|l| l.versions.iter().any(|v| v == installed));
        if stored {
            return Ok(None);
        }
        let started = Instant::now();
        let report = self.ingest_dependency(dep, &|_, _, _| {}).await?;
        Ok(Some(format!(
            "read {} {} from {} in {:.1} s ({} sections): the first question about this \
             version; later ones answer from the store",
            dep.name,
            report.version,
            dep.ecosystem.install_place(&dep.name),
            started.elapsed().as_secs_f64(),
            report.sections
        )))
    }

    /// Ingests dependency `dep` from its installed folder at its installed version (the first
    /// question about it), its chunk vectors as [`Docs::ingest`] adds them.
    pub async fn ingest_dependency(
        &self,
        dep: &Dependency,
        progress: &(dyn Fn(IngestStage, usize, usize) + Sync),
    ) -> Result<IngestReport, DocsError> {
        let request = Self::dependency_request(dep)?;
        self.ingest(&request, progress).await
    }

    /// [`Docs::ingest_dependency`], returning once the version is searchable (`devlens docs
    /// deps --ingest`, which adds every dependency's chunk vectors after all are searchable).
    pub async fn ingest_dependency_searchable(
        &self,
        dep: &Dependency,
        progress: &(dyn Fn(IngestStage, usize, usize) + Sync),
    ) -> Result<IngestReport, DocsError> {
        let request = Self::dependency_request(dep)?;
        self.ingest_searchable(&request, progress).await
    }

    fn dependency_request(dep: &Dependency) -> Result<IngestRequest, DocsError> {
        let (Some(dir), Some(version)) = (dep.dir.clone(), dep.installed.clone()) else {
            return Err(DocsError::InvalidInput(format!(
                "{} is not installed in the workspace; install the project's dependencies first",
                dep.name
            )));
        };
        let request = IngestRequest {
            id: dep.id.clone(),
            source: DocsSource::Package {
                dir,
                name: dep.name.clone(),
            },
            version: Some(version),
            name: Some(dep.name.clone()),
            description: (!dep.description.is_empty()).then(|| dep.description.clone()),
        };
        Ok(request)
    }
}
