//! Projects — a name and a spec — as every surface manages them: listed with the active one,
//! added only once their spec loads (so a typo in a URL is said at once, and a project that
//! worked is never replaced by one that does not), made active, removed.

use serde::{Deserialize, Serialize};

use devlens_core::{Project, Report};
use devlens_openapi::explorer::SpecSelector;

use crate::{App, AppError};

/// The projects and the active one.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectList {
    pub projects: Vec<Project>,
    pub active: Option<String>,
}

impl Report for ProjectList {
    fn to_text(&self) -> String {
        if self.projects.is_empty() {
            return "no projects: add one with `devlens project add NAME SPEC`".into();
        }
        self.projects
            .iter()
            .map(|p| {
                let marker = if Some(&p.name) == self.active.as_ref() {
                    "*"
                } else {
                    " "
                };
                format!(
                    "{marker} {}  {}",
                    p.name,
                    p.spec.as_deref().unwrap_or("(no spec)")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Every project and the active one.
pub fn list(app: &App) -> Result<ProjectList, AppError> {
    let registry = app.api().projects()?;
    Ok(ProjectList {
        projects: registry.projects().to_vec(),
        active: registry.active_name(),
    })
}

/// Adds (or replaces) a project once its spec has loaded.
pub async fn add(app: &App, name: &str, spec: &str) -> Result<Project, AppError> {
    let name = name.trim();
    let spec = spec.trim();
    if name.is_empty() {
        return Err(AppError::invalid(
            "the project needs a name (letters, digits, `.`, `_`, `-`)",
        ));
    }
    if spec.is_empty() {
        return Err(AppError::invalid(
            "the project needs a spec: a file path or an http(s) URL of an OpenAPI or Swagger document",
        ));
    }
    // Check the name before fetching anything, then the spec before writing anything.
    let mut registry = app.api().projects()?;
    registry.check_name(name)?;
    app.api()
        .open(&SpecSelector {
            project: None,
            spec: Some(spec.to_string()),
        })
        .await?;
    Ok(registry.add(name, spec)?)
}

/// `POST /api/projects`: a project to add.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AddProject {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub spec: String,
}

/// [`add`] for a caller over HTTP (the panel, the REST API): a spec file must lie inside the
/// workspace (like every path a request names); an http(s) URL is fetched through the outbound
/// guard.
pub async fn add_from_request(app: &App, name: &str, spec: &str) -> Result<Project, AppError> {
    let spec = spec.trim();
    let lower = spec.to_ascii_lowercase();
    if spec.is_empty() || lower.starts_with("http://") || lower.starts_with("https://") {
        return add(app, name, spec).await;
    }
    let path = spec.strip_prefix("file://").unwrap_or(spec);
    let resolved = app
        .workspace()?
        .resolve(path, devlens_workspace::Access::Read)
        .map_err(|e| {
            AppError::invalid(format!(
                "{e} Over HTTP a project's spec is a file in the workspace or an http(s) URL; \
                 `devlens project add NAME PATH` on the server's machine takes any file."
            ))
        })?;
    add(app, name, &resolved.path.display().to_string()).await
}

/// Makes `name` the active project.
pub fn activate(app: &App, name: &str) -> Result<(), AppError> {
    let mut registry = app.api().projects()?;
    Ok(registry.set_active(name.trim())?)
}

/// Removes a project devlens manages (one in devlens.toml is removed there).
pub fn remove(app: &App, name: &str) -> Result<(), AppError> {
    let mut registry = app.api().projects()?;
    Ok(registry.remove(name.trim())?)
}

/// What a re-index of every project reports while it runs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase", tag = "event")]
pub enum ReindexEvent {
    /// Project `index` (1-based) of `of` starts.
    Started {
        project: String,
        index: usize,
        of: usize,
    },
    /// `done` of `total` endpoint texts of `project` are embedded.
    Progress {
        project: String,
        done: usize,
        total: usize,
    },
    /// `project` finished, or failed with `error` (the others go on).
    Finished {
        project: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        report: Option<devlens_openapi::explorer::IndexReport>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// One project's outcome in a re-index of all.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectReindex {
    pub project: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<devlens_openapi::explorer::IndexReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Every project re-indexed, one after the other.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReindexAll {
    pub projects: Vec<ProjectReindex>,
    /// How many were built.
    pub built: usize,
}

impl Report for ReindexAll {
    fn to_text(&self) -> String {
        if self.projects.is_empty() {
            return "no projects: add one with `devlens project add NAME SPEC`".into();
        }
        let mut lines = vec![format!(
            "re-indexed {} of {} projects",
            self.built,
            self.projects.len()
        )];
        for p in &self.projects {
            lines.push(match (&p.report, &p.error) {
                (Some(r), _) => format!(
                    "  {}: {} vectors ({} embedded, {} reused) in {:.1} s",
                    p.project, r.status.vector_count, r.embedded, r.reused, r.seconds
                ),
                (None, Some(e)) => format!("  {}: failed: {e}", p.project),
                (None, None) => format!("  {}: nothing done", p.project),
            });
        }
        lines.join("\n")
    }
}

/// `POST /api/embed/reindex-all[/stream]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ReindexAllArgs {
    /// Embed every endpoint again instead of reusing the vectors of unchanged ones.
    #[serde(default)]
    pub force: bool,
}

/// Re-indexes every project in turn (reusing unchanged vectors unless `force`). A project that
/// fails is reported and the rest go on; each old index keeps serving until its new one is
/// complete.
pub async fn reindex_all(
    app: &App,
    force: bool,
    on_event: &(dyn Fn(ReindexEvent) + Send + Sync),
) -> Result<ReindexAll, AppError> {
    let names: Vec<String> = app
        .api()
        .projects()?
        .projects()
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let of = names.len();
    let mut projects = Vec::with_capacity(of);
    for (i, project) in names.into_iter().enumerate() {
        on_event(ReindexEvent::Started {
            project: project.clone(),
            index: i + 1,
            of,
        });
        let selector = SpecSelector {
            project: Some(project.clone()),
            spec: None,
        };
        let progress = |done: usize, total: usize| {
            on_event(ReindexEvent::Progress {
                project: project.clone(),
                done,
                total,
            })
        };
        let (report, error) = match app.api().build_index(&selector, force, &progress).await {
            Ok(report) => (Some(report), None),
            Err(e) => (None, Some(e.to_string())),
        };
        on_event(ReindexEvent::Finished {
            project: project.clone(),
            report: report.clone(),
            error: error.clone(),
        });
        projects.push(ProjectReindex {
            project,
            report,
            error,
        });
    }
    let built = projects.iter().filter(|p| p.report.is_some()).count();
    Ok(ReindexAll { projects, built })
}
