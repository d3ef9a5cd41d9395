//! The workspace family's requests — read, list, search, write and edit files of the project the
//! agent works in — as every surface sends them (MCP arguments, REST bodies, CLI flags), and
//! what they run. Paths are confined by [`devlens_workspace`]: inside the workspace or devlens'
//! data directory, or refused.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use devlens_workspace::{
    Edit, FileChange, FileContent, FileList, SearchMatches, SearchQuery, Workspace,
};

use crate::AppError;

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
    /// Globs, e.g. ["*.tsx", "src/**/*.css"]. .gitignore is respected.
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
}

/// `edit_file`: give oldText and newText, or a unified diff.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditFile {
    pub path: String,
    /// Exact text to replace (must occur once unless replaceAll).
    #[serde(default)]
    pub old_text: Option<String>,
    #[serde(default)]
    pub new_text: Option<String>,
    #[serde(default)]
    pub replace_all: Option<bool>,
    /// Instead: unified-diff hunks (`@@ -a,b +c,d @@`).
    #[serde(default)]
    pub diff: Option<String>,
    /// The version read_file returned: refuse if the file changed since.
    #[serde(default)]
    pub expected_version: Option<String>,
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

pub async fn read_file(ws: Arc<Workspace>, request: ReadFile) -> Result<FileContent, AppError> {
    blocking(move || Ok(ws.read_file(&request.path, request.start_line, request.limit)?)).await
}

pub async fn list_files(ws: Arc<Workspace>, request: ListFiles) -> Result<FileList, AppError> {
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

pub async fn write_file(ws: Arc<Workspace>, request: WriteFile) -> Result<FileChange, AppError> {
    blocking(move || Ok(ws.write_file(&request.path, &request.content)?)).await
}

pub async fn edit_file(ws: Arc<Workspace>, request: EditFile) -> Result<FileChange, AppError> {
    let edit = request.edit()?;
    blocking(move || Ok(ws.edit_file(&request.path, &edit, request.expected_version.as_deref())?))
        .await
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
