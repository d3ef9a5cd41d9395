//! The workspace family's requests — read, list, search, write and edit files of the project the
//! agent works in — as every surface sends them (MCP arguments, REST bodies, CLI flags), and
//! what they run. Paths are confined by [`devlens_workspace`]: inside the workspace or devlens'
//! artifacts folder, or refused.
//!
//! A write or an edit of a file the open page uses closes the live-coding loop: devlens waits
//! for the page to take the change (a dev server's hot update or reload, else a reload of its
//! own) and reports what followed, with the page's error locations named as workspace files.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use devlens_browser::{FileWatch, PageUpdate, StyleProbe, Tab, UpdateOptions};
use devlens_core::Report;
use devlens_workspace::{Access, Edit, FileChange, SearchQuery};

pub use devlens_workspace::{FileContent, FileList, SearchMatches, Workspace};

use crate::browser::WithScreenshot;
use crate::{App, AppError};

/// `read_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadFile {
    /// Relative to the workspace (or absolute inside it).
    pub path: String,
    /// First line, 1-based (default 1).
    #[serde(default)]
    pub start_line: Option<usize>,
    /// Lines (default 2000, at most 10000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `list_files`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListFiles {
    /// A folder of the workspace (default: all of it).
    #[serde(default)]
    pub path: Option<String>,
    /// Globs, e.g. ["*.tsx", "src/**/*.css"].
    #[serde(default)]
    pub globs: Vec<String>,
    #[serde(default)]
    pub offset: Option<usize>,
    /// Files (default 200, at most 2000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `search_files`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchFiles {
    /// A regular expression (or text with literal: true).
    pub pattern: String,
    #[serde(default)]
    pub literal: Option<bool>,
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    /// Only files matching these globs.
    #[serde(default)]
    pub globs: Vec<String>,
    /// A folder of the workspace (default: all of it).
    #[serde(default)]
    pub path: Option<String>,
    /// Context lines around each match (0-10).
    #[serde(default)]
    pub context: Option<usize>,
    /// Matching lines (default 50, at most 500).
    #[serde(default)]
    pub max_matches: Option<usize>,
}

/// `write_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteFile {
    /// Relative to the workspace; missing folders are created.
    pub path: String,
    /// The whole new content.
    pub content: String,
    /// What to check on the open page after the change.
    #[serde(default)]
    pub page: Option<PageCheck>,
}

/// What to check on the open page after a write or an edit of a file it uses. By default
/// devlens waits for the page to take the change and reports errors that followed.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageCheck {
    /// Wait for the page to take the change (default true).
    #[serde(default)]
    pub wait: Option<bool>,
    /// Reload when no dev server hot-reloads the page (default true).
    #[serde(default)]
    pub reload: Option<bool>,
    /// Attach a screenshot afterwards.
    #[serde(default)]
    pub screenshot: Option<bool>,
    /// Report an element's computed style afterwards.
    #[serde(default)]
    pub style: Option<StyleCheck>,
    /// How long the dev server may take, in ms (default 8000, at most 60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// An element's computed style to report.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StyleCheck {
    /// A CSS selector; the first match is read.
    pub selector: String,
    /// Default: color, background-color, font-size, display.
    #[serde(default)]
    pub properties: Vec<String>,
}

/// A write or an edit, and what the open page made of it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiveChange {
    #[serde(flatten)]
    pub change: FileChange,
    /// How the open page took the change, when it uses the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PageUpdate>,
    /// Where the page's errors point in the workspace (`src/main.js:3`): open them with
    /// read_file.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_sources: Vec<String>,
    /// Why the open page could not be checked (the file is written all the same).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_error: Option<String>,
}

impl Report for LiveChange {
    fn to_text(&self) -> String {
        let mut out = self.change.to_text();
        if let Some(page) = &self.page {
            out.push('\n');
            out.push_str(&page.to_text());
        }
        if !self.error_sources.is_empty() {
            out.push_str("\nIn the workspace: ");
            out.push_str(&self.error_sources.join(", "));
        }
        if let Some(why) = &self.page_error {
            out.push_str("\nPage: not checked: ");
            out.push_str(why);
        }
        out
    }
}

/// `edit_file`: give oldText and newText, or a unified diff.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditFile {
    pub path: String,
    /// Exact text to replace.
    #[serde(default)]
    pub old_text: Option<String>,
    #[serde(default)]
    pub new_text: Option<String>,
    #[serde(default)]
    pub replace_all: Option<bool>,
    /// Instead: unified-diff hunks (`@@ -a,b +c,d @@`).
    #[serde(default)]
    pub diff: Option<String>,
    /// read_file's version: refuse if the file changed since.
    #[serde(default)]
    pub expected_version: Option<String>,
    /// What to check on the open page after the change.
    #[serde(default)]
    pub page: Option<PageCheck>,
}

impl EditFile {
    /// The edit this asks for: a replacement or a diff, not both.
    pub fn edit(&self) -> Result<Edit, AppError> {
        match (&self.old_text, &self.new_text, &self.diff) {
            (Some(old), Some(new), None) => Ok(Edit::Replace {
                old: old.clone(),
                new: new.clone(),
                all: self.replace_all.unwrap_or(false),
            }),
            (None, None, Some(diff)) => Ok(Edit::Patch(diff.clone())),
            _ => Err(AppError::invalid(
                "give oldText and newText (exact text to replace), or diff (unified-diff hunks), \
                 not both",
            )),
        }
    }
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, AppError> + Send + 'static,
) -> Result<T, AppError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AppError::invalid(format!("the file operation was cancelled: {e}")))?
}

/// The file tools need a project folder; without one (devlens started in `/` or a home folder
/// with no `--workspace`) they say so and what to pass.
fn project_folder(ws: &Workspace) -> Result<(), AppError> {
    match ws.missing_project() {
        Some(why) => Err(AppError::new(
            devlens_core::ErrorKind::Precondition,
            format!("the file tools have no workspace: {why}"),
        )),
        None => Ok(()),
    }
}

pub async fn read_file(ws: Arc<Workspace>, request: ReadFile) -> Result<FileContent, AppError> {
    project_folder(&ws)?;
    blocking(move || Ok(ws.read_file(&request.path, request.start_line, request.limit)?)).await
}

pub async fn list_files(ws: Arc<Workspace>, request: ListFiles) -> Result<FileList, AppError> {
    project_folder(&ws)?;
    blocking(move || {
        Ok(ws.list_files(
            request.path.as_deref(),
            &request.globs,
            request.offset,
            request.limit,
        )?)
    })
    .await
}

pub async fn search_files(
    ws: Arc<Workspace>,
    request: SearchFiles,
) -> Result<SearchMatches, AppError> {
    project_folder(&ws)?;
    blocking(move || {
        let query = SearchQuery {
            pattern: request.pattern,
            literal: request.literal.unwrap_or(false),
            case_insensitive: request.case_insensitive.unwrap_or(false),
            globs: request.globs,
            context: request.context.unwrap_or(0),
            max_matches: request
                .max_matches
                .unwrap_or(devlens_workspace::search::DEFAULT_MATCHES),
        };
        Ok(ws.search_files(request.path.as_deref(), &query)?)
    })
    .await
}

/// `write_file`, then what the open page made of it.
pub async fn write_file(
    app: &App,
    ws: Arc<Workspace>,
    request: WriteFile,
) -> Result<WithScreenshot<LiveChange>, AppError> {
    project_folder(&ws)?;
    let watch = PageWatch::start(app, &ws, &request.path, request.page).await?;
    let written = {
        let ws = Arc::clone(&ws);
        blocking(move || Ok(ws.write_file(&request.path, &request.content)?)).await?
    };
    watch.finish(&ws, written).await
}

/// `edit_file`, then what the open page made of it.
pub async fn edit_file(
    app: &App,
    ws: Arc<Workspace>,
    request: EditFile,
) -> Result<WithScreenshot<LiveChange>, AppError> {
    project_folder(&ws)?;
    let edit = request.edit()?;
    let watch = PageWatch::start(app, &ws, &request.path, request.page.clone()).await?;
    let edited = {
        let ws = Arc::clone(&ws);
        blocking(move || {
            Ok(ws.edit_file(&request.path, &edit, request.expected_version.as_deref())?)
        })
        .await?
    };
    watch.finish(&ws, edited).await
}

/// The open page, watched from before a change to a file it uses.
struct PageWatch {
    watched: Option<(Tab, FileWatch)>,
    check: PageCheck,
}

impl PageWatch {
    /// Watches the active tab when it loaded `path` (and waiting is not turned off).
    async fn start(
        app: &App,
        ws: &Workspace,
        path: &str,
        check: Option<PageCheck>,
    ) -> Result<Self, AppError> {
        let check = check.unwrap_or_default();
        if let Some(style) = &check.style
            && style.selector.trim().is_empty()
        {
            return Err(AppError::invalid(
                "page.style.selector is empty: give a CSS selector, e.g. \"h1\"",
            ));
        }
        let mut watched = None;
        if check.wait != Some(false)
            && let Ok(resolved) = ws.resolve(path, Access::Write)
            // The artifacts folder holds nothing a page loads.
            && resolved.path.starts_with(ws.root())
            && let Ok(tab) = app.browser().tab(None).await
            && let Some(watch) = tab.watch_file(&resolved.display).await
        {
            watched = Some((tab, watch));
        }
        Ok(Self { watched, check })
    }

    async fn finish(
        self,
        ws: &Workspace,
        change: FileChange,
    ) -> Result<WithScreenshot<LiveChange>, AppError> {
        let Some((tab, watch)) = self.watched else {
            return Ok(WithScreenshot {
                result: LiveChange {
                    change,
                    page: None,
                    error_sources: Vec::new(),
                    page_error: None,
                },
                screenshot: None,
            });
        };
        let options = UpdateOptions {
            timeout: Duration::from_millis(
                self.check.timeout_ms.unwrap_or(8_000).clamp(100, 60_000),
            ),
            reload: self.check.reload.unwrap_or(true),
            style: self.check.style.map(|s| StyleProbe {
                selector: s.selector,
                properties: if s.properties.is_empty() {
                    DEFAULT_STYLE_PROPERTIES
                        .iter()
                        .map(|p| p.to_string())
                        .collect()
                } else {
                    s.properties
                },
            }),
        };
        // The file is written: a page that went away since only loses the report.
        let page = match tab.page_update(watch, &options).await {
            Ok(page) => page,
            Err(e) => {
                return Ok(WithScreenshot {
                    result: LiveChange {
                        change,
                        page: None,
                        error_sources: Vec::new(),
                        page_error: Some(e.to_string()),
                    },
                    screenshot: None,
                });
            }
        };
        let error_sources = error_sources(ws, &page);
        let result = LiveChange {
            change,
            page: Some(page),
            error_sources,
            page_error: None,
        };
        Ok(crate::browser::with_screenshot(&tab, result, self.check.screenshot).await)
    }
}

/// Properties a style check reports when it names none.
const DEFAULT_STYLE_PROPERTIES: [&str; 4] = ["color", "background-color", "font-size", "display"];

/// The workspace files and lines the page's errors point at: console error locations and their
/// stacks, and file paths in the dev server's overlay.
fn error_sources(ws: &Workspace, page: &PageUpdate) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut add = |location: &str| {
        if let Some(at) = ws.locate(location)
            && !found.contains(&at)
        {
            found.push(at);
        }
    };
    for entry in &page.console_errors {
        if let Some(source) = &entry.source {
            add(source);
        }
        for frame in &entry.stack {
            add(frame);
        }
    }
    if let Some(overlay) = &page.overlay {
        for word in overlay.split_whitespace() {
            add(word);
        }
    }
    found.truncate(10);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_a_replacement_or_a_diff() {
        let edit = |old: Option<&str>, new: Option<&str>, diff: Option<&str>| EditFile {
            path: "a".into(),
            old_text: old.map(Into::into),
            new_text: new.map(Into::into),
            replace_all: None,
            diff: diff.map(Into::into),
            expected_version: None,
            page: None,
        };
        assert!(matches!(
            edit(Some("a"), Some("b"), None).edit(),
            Ok(Edit::Replace { .. })
        ));
        assert!(matches!(
            edit(None, None, Some("@@ -1 +1 @@")).edit(),
            Ok(Edit::Patch(_))
        ));
        assert!(edit(Some("a"), None, None).edit().is_err());
        assert!(edit(Some("a"), Some("b"), Some("@@")).edit().is_err());
    }
}
