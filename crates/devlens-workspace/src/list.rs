//! Listing files: `.gitignore` respected (ripgrep's `ignore` crate, also outside a git
//! repository), `.git/` never shown, filtered by globs, sorted and paged.

use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;

use devlens_core::Report;

use crate::WorkspaceError;

/// Files listed when no limit is asked for.
pub const DEFAULT_LIST: usize = 200;
/// The most files one list returns.
pub const MAX_LIST: usize = 2000;
/// Files looked at, at most, by one list or search: a workspace with an unignored
/// `node_modules` should not stall a call.
pub const MAX_WALK: usize = 200_000;

/// One listed file.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ListedFile {
    /// Relative to the workspace.
    pub path: String,
    pub bytes: u64,
}

/// What `list_files` returns.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileList {
    pub files: Vec<ListedFile>,
    /// Files that matched, in all.
    pub total: usize,
    /// Where the next page starts, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Why the list may be incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl Report for FileList {
    fn to_text(&self) -> String {
        let mut out: Vec<String> = self.files.iter().map(|f| f.path.clone()).collect();
        if self.files.is_empty() {
            out.push("no files match".into());
        }
        if let Some(next) = self.next_offset {
            out.push(format!(
                "… {} of {} shown; next page: offset {next}",
                self.files.len(),
                self.total
            ));
        }
        if let Some(n) = &self.notice {
            out.push(format!("note: {n}"));
        }
        out.join("\n")
    }
}

/// Globs as a person writes them: a pattern without `/` matches a file name in any folder
/// (`*.tsx`), one with `/` matches from the workspace root (`src/**/*.ts`).
pub(crate) fn glob_set(patterns: &[String]) -> Result<Option<GlobSet>, WorkspaceError> {
    let patterns: Vec<&str> = patterns
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect();
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let full = if pattern.contains('/') {
            pattern.trim_start_matches("./").to_string()
        } else {
            format!("**/{pattern}")
        };
        let glob = Glob::new(&full).map_err(|e| {
            WorkspaceError::InvalidInput(format!(
                "`{pattern}` is not a valid glob ({e}); write e.g. `*.tsx` or `src/**/*.css`"
            ))
        })?;
        set.add(glob);
    }
    set.build()
        .map(Some)
        .map_err(|e| WorkspaceError::InvalidInput(format!("invalid globs: {e}")))
}

/// The files under `dir` (inside the workspace `root`), as paths relative to `root`, in the
/// walk's order, with their sizes; and whether the walk stopped at [`MAX_WALK`].
pub(crate) fn walk(
    root: &Path,
    dir: &Path,
    globs: Option<&GlobSet>,
    mut visit: impl FnMut(&Path, &str, u64) -> bool,
) -> bool {
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    let mut seen = 0usize;
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        seen += 1;
        if seen > MAX_WALK {
            return true;
        }
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel_text = rel.to_string_lossy();
        if globs.is_some_and(|g| !g.is_match(rel)) {
            continue;
        }
        let bytes = entry.metadata().map(|m| m.len()).unwrap_or(0);
        if !visit(path, &rel_text, bytes) {
            break;
        }
    }
    false
}

pub(crate) fn list(
    root: &Path,
    dir: &Path,
    patterns: &[String],
    offset: usize,
    limit: usize,
) -> Result<FileList, WorkspaceError> {
    if limit == 0 || limit > MAX_LIST {
        return Err(WorkspaceError::InvalidInput(format!(
            "limit must be between 1 and {MAX_LIST}, got {limit}"
        )));
    }
    let globs = glob_set(patterns)?;
    let mut files = Vec::new();
    let mut total = 0usize;
    let stopped = walk(root, dir, globs.as_ref(), |_, rel, bytes| {
        if total >= offset && files.len() < limit {
            files.push(ListedFile {
                path: rel.to_string(),
                bytes,
            });
        }
        total += 1;
        true
    });
    let shown_until = offset + files.len();
    Ok(FileList {
        files,
        total,
        next_offset: (shown_until < total).then_some(shown_until),
        notice: stopped.then(|| {
            format!(
                "the listing stopped after {MAX_WALK} files; narrow it with a folder or globs \
                 (or add generated folders to .gitignore)"
            )
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignored_files_and_git_folders_are_left_out_and_globs_filter() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "src/app.tsx",
            "src/deep/util.ts",
            "README.md",
            ".env.example",
            "node_modules/react/index.js",
            ".git/HEAD",
            "dist/bundle.js",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "node_modules/\ndist/\n").unwrap();
        let all = list(root, root, &[], 0, 100).unwrap();
        let paths: Vec<&str> = all.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                ".env.example",
                ".gitignore",
                "README.md",
                "src/app.tsx",
                "src/deep/util.ts"
            ]
        );
        let ts = list(root, root, &["*.ts".into(), "*.tsx".into()], 0, 100).unwrap();
        assert_eq!(ts.total, 2);
        let deep = list(root, root, &["src/deep/**".into()], 0, 100).unwrap();
        assert_eq!(deep.files[0].path, "src/deep/util.ts");
        let paged = list(root, root, &[], 1, 2).unwrap();
        assert_eq!((paged.files.len(), paged.next_offset), (2, Some(3)));
        assert!(list(root, root, &["[".into()], 0, 10).is_err());
    }
}
