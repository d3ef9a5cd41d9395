//! The docs family: the arguments of every docs tool, route and command — finding a library's
//! id, querying its docs, where a library's docs come from when they are added (a folder or a
//! site), what an ingest reports while it runs, removing a library — and the calls they make on
//! the library docs (opened on first use). A query takes the docs crate's own input
//! ([`QueryDocsInput`], the shape Context7's tool takes), which every surface deserializes or
//! builds as it is.

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use devlens_core::{ErrorKind, Report};
use devlens_docs::crawl::CrawlLimits;
use devlens_docs::{Docs, validate_id};

pub use devlens_docs::{
    DependencyList, DocsPage, DocsSource, GitSource, IngestReport, IngestRequest, IngestStage,
    LibraryList, LibraryOutline, ListedDependency, QueryDocsInput, QueryDocsOutput, RefineAll,
    Resolved, WorkspaceDeps,
};

use crate::{App, AppError};

/// `resolve_library_id`, `GET /api/docs/resolve`, `devlens docs resolve`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolveLibrary {
    /// The library or package name, e.g. "react", "@vue/runtime-core", "node:fs"; typos are
    /// tolerated.
    // Required of a tool call; a request without it is refused by the docs, which say what to
    // give.
    #[serde(alias = "name", alias = "library_name")]
    #[schemars(required)]
    pub library_name: Option<String>,
    /// What you want to do with it; breaks ties between similar names.
    #[serde(default)]
    pub query: Option<String>,
}

/// The libraries matching a name, best first: the ingested ones and the workspace's installed
/// dependencies.
pub fn resolve(app: &App, args: &ResolveLibrary) -> Result<Resolved, AppError> {
    let name = args.library_name.as_deref().unwrap_or_default();
    let docs = app.docs()?;
    let deps = project_root(app).map(|root| docs.workspace_dependencies(&root));
    Ok(docs.resolve_in(name, args.query.as_deref(), deps.as_ref())?)
}

/// The best sections and code examples of a library's docs for a question, within a token
/// budget; a dependency of the workspace is answered at its installed version, read from its
/// folder on the first question.
pub async fn query(app: &App, input: &QueryDocsInput) -> Result<QueryDocsOutput, AppError> {
    let docs = app.docs()?;
    let deps = if devlens_docs::deps::is_dependency_id(&input.library_id) {
        project_root(app).map(|root| docs.workspace_dependencies(&root))
    } else {
        None
    };
    Ok(docs.query_in(input, deps.as_ref()).await?)
}

/// The workspace's direct dependencies, their installed versions and what is stored of each.
pub fn dependencies(app: &App) -> Result<DependencyList, AppError> {
    let root = project_root(app).ok_or_else(no_project)?;
    Ok(app.docs()?.dependencies(&root)?)
}

/// Reads every installed direct dependency whose installed version is not stored yet;
/// `progress(dependency, done, total)` before each. One that fails is reported and the rest
/// go on. Each is stored searchable first (section vectors); their chunks' own vectors follow
/// once all are searchable: in the background in a server, else before this returns
/// (`refining(stored, planned)` meanwhile).
pub async fn ingest_dependencies(
    app: &App,
    progress: &(dyn Fn(&str, usize, usize) + Sync),
    refining: &(dyn Fn(&str, usize, usize) + Sync),
) -> Result<DependencyIngest, AppError> {
    let root = project_root(app).ok_or_else(no_project)?;
    let docs = app.docs()?;
    let listed = docs.dependencies(&root)?;
    let todo: Vec<&ListedDependency> = listed
        .dependencies
        .iter()
        .filter(|d| d.dependency.installed.is_some() && !d.ingested)
        .collect();
    let mut outcome = DependencyIngest {
        already: listed.dependencies.iter().filter(|d| d.ingested).count(),
        not_installed: listed
            .dependencies
            .iter()
            .filter(|d| d.dependency.installed.is_none())
            .map(|d| d.dependency.name.clone())
            .collect(),
        ..DependencyIngest::default()
    };
    for (i, listed) in todo.iter().enumerate() {
        progress(&listed.dependency.name, i, todo.len());
        match docs
            .ingest_dependency_searchable(&listed.dependency, &|_, _, _| {})
            .await
        {
            Ok(report) => outcome.ingested.push(report),
            Err(e) => outcome
                .failed
                .push(format!("{}: {e}", listed.dependency.name)),
        }
    }
    progress("", todo.len(), todo.len());
    if outcome.ingested.iter().any(|r| r.refining.is_some()) {
        if docs.refines_in_background() {
            let background = docs.refine_in_background();
            for report in &mut outcome.ingested {
                report.background = background && report.refining.is_some();
            }
        } else {
            let refined = docs.refine_all(refining).await?;
            for report in &mut outcome.ingested {
                if let Some(r) = refined
                    .refined
                    .iter()
                    .find(|r| r.id == report.id && r.version == report.version)
                {
                    report.embedded_texts += r.embedded_texts;
                    report.refining = r.refining;
                    report.seconds += r.seconds;
                }
            }
            outcome.failed.extend(refined.failed);
        }
    }
    Ok(outcome)
}

/// Adds the missing chunk vectors of every stored version (`devlens docs refine`), or of one
/// library's versions (`id`); `progress("id version", stored, planned)`.
pub async fn refine(
    app: &App,
    id: Option<&str>,
    progress: &(dyn Fn(&str, usize, usize) + Sync),
) -> Result<RefineAll, AppError> {
    let docs = app.docs()?;
    match id.map(str::trim).filter(|i| !i.is_empty()) {
        None => Ok(docs.refine_all(progress).await?),
        Some(id) => {
            let library = docs.store().library(id)?.ok_or_else(|| {
                AppError::new(
                    ErrorKind::NotFound,
                    format!("library `{id}` is not stored (see `devlens docs list`)"),
                )
            })?;
            let mut all = RefineAll {
                refined: Vec::new(),
                failed: Vec::new(),
            };
            for version in &library.versions {
                let label = format!("{id} {version}");
                let each = |stored, planned| progress(&label, stored, planned);
                match docs.refine(id, version, &each).await {
                    Ok(r) if r.planned > 0 || r.embedded_texts > 0 => all.refined.push(r),
                    Ok(_) => {}
                    Err(e) => all.failed.push(format!("{label}: {e}")),
                }
            }
            Ok(all)
        }
    }
}

/// What `devlens docs deps --ingest` did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DependencyIngest {
    pub ingested: Vec<IngestReport>,
    /// Dependencies whose installed version was stored already.
    pub already: usize,
    /// Declared but not installed: nothing to read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_installed: Vec<String>,
    /// `name: why`, for those that could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

impl Report for DependencyIngest {
    fn to_text(&self) -> String {
        let mut lines: Vec<String> = self.ingested.iter().map(Report::to_text).collect();
        lines.push(format!(
            "{} dependencies read, {} stored already{}",
            self.ingested.len(),
            self.already,
            if self.not_installed.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} not installed ({})",
                    self.not_installed.len(),
                    self.not_installed.join(", ")
                )
            }
        ));
        for failed in &self.failed {
            lines.push(format!("could not read {failed}"));
        }
        lines.join("\n")
    }
}

/// The project folder whose dependencies are the libraries of the workspace, if devlens runs
/// in one.
fn project_root(app: &App) -> Option<PathBuf> {
    let workspace = app.workspace().ok()?;
    workspace
        .missing_project()
        .is_none()
        .then(|| workspace.root().to_path_buf())
}

fn no_project() -> AppError {
    AppError::invalid(
        "there is no project folder to read dependencies from: run devlens in your project \
         (or pass --workspace DIR)",
    )
}

/// The ingested libraries and their versions.
pub fn libraries(app: &App) -> Result<LibraryList, AppError> {
    Ok(app.docs()?.list()?)
}

/// The pages of a library's newest version and their sections.
pub fn outline(app: &App, library: &str) -> Result<LibraryOutline, AppError> {
    Ok(app.docs()?.outline(library, None)?)
}

/// One page of a library's newest version, as [`outline`] names it.
pub fn page(app: &App, library: &str, page: &str) -> Result<DocsPage, AppError> {
    Ok(app.docs()?.page(library, None, page)?)
}

/// The Prometheus text of the docs queries (requests, errors, latency and tokens histograms,
/// cache hits and misses).
pub fn metrics_text(app: &App) -> Result<String, AppError> {
    Ok(app.docs()?.metrics_text())
}

/// Where docs come from, as a caller sends it: a folder on this machine or a site to crawl.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceInput {
    pub path: Option<PathBuf>,
    pub url: Option<String>,
    /// With `url`: pages to fetch at most.
    pub max_pages: Option<usize>,
    /// With `url`: links to follow from the start page at most.
    pub max_depth: Option<usize>,
    /// With `url`: also fetch what the site's robots.txt disallows (a site of one's own).
    pub ignore_robots: bool,
    /// A git repository to clone (https, http or file URL).
    pub git: Option<String>,
    /// With `git`: the branch or tag [default: the default branch].
    pub git_ref: Option<String>,
    /// With `git`: the docs folder inside the repository.
    pub git_dir: Option<String>,
}

/// The source of an ingest: exactly one of a folder, a URL and a git repository; crawl limits
/// only with a URL, a ref and a folder only with a repository.
pub fn docs_source(input: SourceInput) -> Result<DocsSource, AppError> {
    let url = input.url.filter(|u| !u.trim().is_empty());
    let path = input.path.filter(|p| !p.as_os_str().is_empty());
    let git = input.git.filter(|g| !g.trim().is_empty());
    let git_ref = input.git_ref.filter(|r| !r.trim().is_empty());
    let git_dir = input.git_dir.filter(|d| !d.trim().is_empty());
    if git.is_none() && (git_ref.is_some() || git_dir.is_some()) {
        return Err(AppError::invalid(
            "ref and dir apply to a repository: give them with `git`",
        ));
    }
    if let Some(repository) = git {
        if path.is_some() || url.is_some() {
            return Err(AppError::invalid(
                "give exactly one of `path` (a docs folder), `url` (a docs site to crawl) or \
                 `git` (a repository)",
            ));
        }
        if input.max_pages.is_some() || input.max_depth.is_some() || input.ignore_robots {
            return Err(AppError::invalid(
                "maxPages, maxDepth and ignoreRobots apply to a crawl, not to a repository",
            ));
        }
        let source = GitSource {
            url: repository.trim().to_string(),
            reference: git_ref.map(|r| r.trim().to_string()),
            dir: git_dir.map(|d| d.trim().to_string()),
        };
        devlens_docs::git::validate(&source)?;
        return Ok(DocsSource::Git(source));
    }
    match (path, url) {
        (Some(path), None) => {
            if input.max_pages.is_some() || input.max_depth.is_some() || input.ignore_robots {
                return Err(AppError::invalid(
                    "maxPages, maxDepth and ignoreRobots apply to a crawl: give them with `url`, \
                     not with `path`",
                ));
            }
            Ok(DocsSource::Path(path))
        }
        (None, Some(url)) => {
            let defaults = CrawlLimits::default();
            Ok(DocsSource::Crawl {
                url: url.trim().to_string(),
                limits: CrawlLimits {
                    max_pages: input.max_pages.unwrap_or(defaults.max_pages),
                    max_depth: input.max_depth.unwrap_or(defaults.max_depth),
                    ignore_robots: input.ignore_robots,
                },
            })
        }
        _ => Err(AppError::invalid(
            "give exactly one of `path` (a docs folder on this machine) or `url` (a docs site \
             to crawl)",
        )),
    }
}

/// A library to add, as the REST API and the panel send it: an id, and a folder (`path`) or a
/// site crawled from `url`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddDocs {
    pub id: String,
    pub path: Option<String>,
    pub url: Option<String>,
    #[serde(alias = "max_pages")]
    pub max_pages: Option<usize>,
    #[serde(alias = "max_depth")]
    pub max_depth: Option<usize>,
    #[serde(default, alias = "ignore_robots")]
    pub ignore_robots: bool,
    /// A git repository to clone (https or http; a `file:` repository only on the CLI).
    pub git: Option<String>,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub dir: Option<String>,
    pub version: Option<String>,
    pub name: Option<String>,
    pub description: Option<String>,
}

impl AddDocs {
    /// The ingest request of a caller over HTTP (the panel, the REST API), who may name a folder
    /// only inside the workspace or a `[docs] roots` folder; a relative path is relative to the
    /// workspace.
    pub fn into_confined_request(mut self, app: &App) -> Result<IngestRequest, AppError> {
        if let Some(path) = self.path.as_deref().filter(|p| !p.trim().is_empty()) {
            self.path = Some(confined_docs_folder(app, path)?);
        }
        // A `file:` repository is a path on this machine, which a caller over HTTP may not name.
        if self
            .git
            .as_deref()
            .is_some_and(|g| g.trim().to_ascii_lowercase().starts_with("file:"))
        {
            return Err(AppError::invalid(
                "over HTTP, docs come from https or http repositories; clone a repository on \
                 this machine with the CLI (`devlens docs add ID --git file:///…`)",
            ));
        }
        self.into_request()
    }

    /// The ingest request, checked before anything is read or fetched: an id is there and well
    /// formed, and exactly one source is given.
    pub fn into_request(self) -> Result<IngestRequest, AppError> {
        if self.id.trim().is_empty() {
            return Err(AppError::invalid(
                "give the library an id: a slug like `react` or a path like `/facebook/react`",
            ));
        }
        let id = validate_id(&self.id)?;
        let source = docs_source(SourceInput {
            path: self.path.map(Into::into),
            url: self.url,
            max_pages: self.max_pages,
            max_depth: self.max_depth,
            ignore_robots: self.ignore_robots,
            git: self.git,
            git_ref: self.git_ref,
            git_dir: self.dir,
        })?;
        Ok(IngestRequest {
            id,
            source,
            version: self.version,
            name: self.name,
            description: self.description,
        })
    }
}

/// An ingest checked and ready to run: the request, and the docs it goes into — opened already,
/// so that a store that cannot open is said before anything is read or streamed.
pub struct Ingest {
    docs: Arc<Docs>,
    request: IngestRequest,
}

impl Ingest {
    /// `request` into `app`'s docs (the CLI, whose user names any folder).
    pub fn new(app: &App, request: IngestRequest) -> Result<Self, AppError> {
        Ok(Self {
            docs: app.docs()?,
            request,
        })
    }

    /// A library added over HTTP (the panel, the REST API): a folder only inside the workspace
    /// or a `[docs] roots` folder (see [`AddDocs::into_confined_request`]).
    pub fn confined(app: &App, add: AddDocs) -> Result<Self, AppError> {
        let request = add.into_confined_request(app)?;
        Self::new(app, request)
    }

    /// Where the docs come from.
    pub fn source(&self) -> &DocsSource {
        &self.request.source
    }

    /// Reads (or fetches) the pages, chunks and embeds them; re-adding a version replaces it.
    /// `progress(stage, done, total)`.
    pub async fn run(
        &self,
        progress: &(dyn Fn(IngestStage, usize, usize) + Sync),
    ) -> Result<IngestReport, AppError> {
        Ok(self.docs.ingest(&self.request, progress).await?)
    }

    /// [`Ingest::run`], returning once the version answers queries: its chunks' own vectors are
    /// left to `devlens docs refine` or a server ([`refine`]).
    pub async fn run_searchable(
        &self,
        progress: &(dyn Fn(IngestStage, usize, usize) + Sync),
    ) -> Result<IngestReport, AppError> {
        Ok(self.docs.ingest_searchable(&self.request, progress).await?)
    }
}

/// What an ingest is doing, as a stream reports it: `done` of `total` pages read (or fetched),
/// then sections embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IngestProgress {
    pub stage: &'static str,
    pub done: usize,
    pub total: usize,
}

impl IngestProgress {
    pub fn new(stage: IngestStage, done: usize, total: usize) -> Self {
        Self {
            stage: match stage {
                IngestStage::Reading => "reading",
                IngestStage::Embedding => "embedding",
                IngestStage::Refining => "refining",
            },
            done,
            total,
        }
    }
}

/// A removed library (every version), or one removed version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemovedDocs {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub removed: bool,
}

impl Report for RemovedDocs {
    fn to_text(&self) -> String {
        match &self.version {
            Some(v) => format!("removed {} {v}", self.id),
            None => format!("removed {}", self.id),
        }
    }
}

/// `DELETE /api/docs/libraries`, `devlens docs remove`: a library (every version), or one of
/// its versions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct RemoveDocs {
    #[serde(default)]
    pub id: String,
    pub version: Option<String>,
}

/// Removes library `id`, or only its `version`; a library (or version) that is not stored is
/// a not-found error that says where to look.
pub fn remove(app: &App, args: &RemoveDocs) -> Result<RemovedDocs, AppError> {
    let id = args.id.trim();
    if id.is_empty() {
        return Err(AppError::invalid(
            "give the id of the library to remove (see `devlens docs list`)",
        ));
    }
    let version = args
        .version
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty());
    if !app.docs()?.remove(id, version)? {
        return Err(AppError::new(
            ErrorKind::NotFound,
            format!(
                "nothing to remove: library `{id}`{} is not stored (see `devlens docs list`)",
                version
                    .map(|v| format!(" version `{v}`"))
                    .unwrap_or_default()
            ),
        ));
    }
    Ok(RemovedDocs {
        id: id.to_string(),
        version: version.map(str::to_string),
        removed: true,
    })
}

/// `path` resolved inside a configured docs root or the workspace, or why it may not be read.
fn confined_docs_folder(app: &App, path: &str) -> Result<String, AppError> {
    let config = app.config();
    if let Ok(canonical) = std::fs::canonicalize(path) {
        let in_a_root = config.file.docs.roots.iter().any(|root| {
            std::fs::canonicalize(config.base_dir().join(root))
                .is_ok_and(|root| canonical.starts_with(root))
        });
        if in_a_root {
            return Ok(canonical.display().to_string());
        }
    }
    let workspace = app.workspace().map_err(|e| {
        AppError::invalid(format!(
            "docs can be added from a folder over HTTP only inside the workspace or a `[docs] \
             roots` folder, and there is no workspace: {e}"
        ))
    })?;
    let resolved = workspace
        .resolve(path, devlens_workspace::Access::Read)
        .map_err(|e| {
            AppError::invalid(format!(
                "{e} Over HTTP, docs are added from folders inside the workspace or a folder \
                 listed in `[docs] roots` of a trusted devlens.toml (the CLI, `devlens docs add`, \
                 reads any folder)."
            ))
        })?;
    Ok(resolved.path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_a_folder_or_a_site_never_both() {
        let folder = docs_source(SourceInput {
            path: Some("docs".into()),
            ..SourceInput::default()
        })
        .unwrap();
        assert!(matches!(folder, DocsSource::Path(p) if p == std::path::Path::new("docs")));
        let site = docs_source(SourceInput {
            url: Some(" https://example.com/docs/ ".into()),
            max_pages: Some(3),
            ..SourceInput::default()
        })
        .unwrap();
        match site {
            DocsSource::Crawl { url, limits } => {
                assert_eq!(url, "https://example.com/docs/");
                assert_eq!(limits.max_pages, 3);
                assert_eq!(limits.max_depth, CrawlLimits::default().max_depth);
            }
            other => panic!("{other:?}"),
        }
        for input in [
            SourceInput::default(),
            SourceInput {
                path: Some("docs".into()),
                url: Some("https://example.com".into()),
                ..SourceInput::default()
            },
            SourceInput {
                path: Some("docs".into()),
                max_pages: Some(3),
                ..SourceInput::default()
            },
        ] {
            assert!(docs_source(input).is_err());
        }
    }

    #[test]
    fn a_repository_is_a_source_of_its_own_with_its_ref_and_folder() {
        let git = |url: &str, git_ref: Option<&str>, dir: Option<&str>| SourceInput {
            git: Some(url.into()),
            git_ref: git_ref.map(Into::into),
            git_dir: dir.map(Into::into),
            ..SourceInput::default()
        };
        match docs_source(git(
            "https://github.com/vitejs/vite.git",
            Some("v6.0.0"),
            Some("docs"),
        )) {
            Ok(DocsSource::Git(source)) => {
                assert_eq!(source.reference.as_deref(), Some("v6.0.0"));
                assert_eq!(source.dir.as_deref(), Some("docs"));
            }
            other => panic!("{other:?}"),
        }
        let message = |input: SourceInput| docs_source(input).unwrap_err().to_string();
        assert!(
            message(SourceInput {
                path: Some("docs".into()),
                ..git("https://a/b.git", None, None)
            })
            .contains("exactly one of")
        );
        assert!(
            message(SourceInput {
                max_pages: Some(3),
                ..git("https://a/b.git", None, None)
            })
            .contains("apply to a crawl")
        );
        assert!(
            message(SourceInput {
                git_ref: Some("v1".into()),
                ..SourceInput::default()
            })
            .contains("give them with `git`")
        );
        assert!(message(git("ext::sh -c id", None, None)).contains("ext"));

        // Over HTTP a `file:` repository would name a path of this machine.
        let dir = tempfile::tempdir().unwrap();
        let app = App::new(devlens_core::Config::with_data_dir(dir.path()));
        let add = AddDocs {
            id: "widgets".into(),
            git: Some("file:///etc".into()),
            ..AddDocs::default()
        };
        let error = add.into_confined_request(&app).unwrap_err().to_string();
        assert!(
            error.contains("over HTTP, docs come from https or http repositories"),
            "{error}"
        );
    }

    #[test]
    fn an_added_library_needs_a_good_id_and_one_source() {
        let ok = AddDocs {
            id: " /acme/widgets ".into(),
            path: Some("docs".into()),
            url: Some("  ".into()),
            ..AddDocs::default()
        }
        .into_request()
        .unwrap();
        assert_eq!(ok.id, "/acme/widgets");
        assert!(matches!(ok.source, DocsSource::Path(_)));
        let message = |add: AddDocs| add.into_request().unwrap_err().to_string();
        assert!(message(AddDocs::default()).contains("give the library an id"));
        assert!(
            message(AddDocs {
                id: "Bad Id".into(),
                path: Some("docs".into()),
                ..AddDocs::default()
            })
            .contains("invalid library id")
        );
        assert!(
            message(AddDocs {
                id: "widgets".into(),
                ..AddDocs::default()
            })
            .contains("give exactly one of `path`")
        );
    }

    #[test]
    fn removing_what_is_not_stored_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let docs = Docs::with_embedder(&dir.path().join("docs.sqlite"), None).unwrap();
        let app = App::new(devlens_core::Config::with_data_dir(dir.path())).with_docs(docs);
        let args = RemoveDocs {
            id: "widgets".into(),
            version: Some("2.0".into()),
        };
        let error = remove(&app, &args).unwrap_err();
        assert_eq!(devlens_core::Classify::kind(&error), ErrorKind::NotFound);
        assert!(
            error
                .to_string()
                .contains("`widgets` version `2.0` is not stored"),
            "{error}"
        );
    }
}
