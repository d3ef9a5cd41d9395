//! Writing and editing files: atomically (a temporary file beside the target, then a rename, so
//! a reader or a crash never sees half a file), one writer per file at a time, refusing an edit
//! whose text is not in the file exactly once, and showing what changed as a unified diff.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use devlens_core::Report;

use crate::WorkspaceError;

/// The most lines of diff an answer shows.
pub const MAX_DIFF_LINES: usize = 200;
/// The most bytes a write or an edit may leave in a file.
pub const MAX_WRITE_BYTES: usize = 10 * 1024 * 1024;

/// An edit: replace exact text, or apply a unified diff.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Replace `old` with `new`; `old` must occur exactly once unless `all`.
    Replace { old: String, new: String, all: bool },
    /// A unified diff (`@@ -a,b +c,d @@` hunks; the `---`/`+++` header is optional).
    Patch(String),
}

/// What a write or an edit did.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// Relative to the workspace.
    pub path: String,
    /// Whether the file was created (it did not exist).
    pub created: bool,
    pub bytes: usize,
    pub lines_added: usize,
    pub lines_removed: usize,
    /// Occurrences replaced (an edit by replacement).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacements: Option<usize>,
    /// The change as a unified diff, at most [`MAX_DIFF_LINES`] lines.
    pub diff: String,
    /// The new content's version.
    pub version: String,
}

impl Report for FileChange {
    fn to_text(&self) -> String {
        let what = if self.created { "created" } else { "changed" };
        let mut out = format!(
            "{what} {} (+{} −{} lines, {} bytes)",
            self.path, self.lines_added, self.lines_removed, self.bytes
        );
        if !self.diff.is_empty() && !self.created {
            out.push('\n');
            out.push_str(self.diff.trim_end());
        }
        out
    }
}

/// Applies `edit` to `text`: the new text and how many replacements were made.
pub(crate) fn apply(
    text: &str,
    edit: &Edit,
    shown: &str,
) -> Result<(String, Option<usize>), WorkspaceError> {
    match edit {
        Edit::Replace { old, new, all } => {
            if old.is_empty() {
                return Err(WorkspaceError::InvalidInput(
                    "oldText is empty: give the exact text to replace (write_file replaces a \
                     whole file)"
                        .into(),
                ));
            }
            if old == new {
                return Err(WorkspaceError::InvalidInput(
                    "oldText and newText are the same: the edit would change nothing".into(),
                ));
            }
            let found: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
            let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
            match found.len() {
                0 => Err(WorkspaceError::EditMismatch(not_found_message(
                    text, old, shown,
                ))),
                1 => Ok((text.replacen(old.as_str(), new, 1), Some(1))),
                n if *all => Ok((text.replace(old.as_str(), new), Some(n))),
                n => {
                    let lines: Vec<String> = found
                        .iter()
                        .take(10)
                        .map(|&i| line_of(i).to_string())
                        .collect();
                    Err(WorkspaceError::EditMismatch(format!(
                        "oldText occurs {n} times in {shown} (lines {}): nothing was changed. \
                         Include more of the surrounding lines so it names one place, or pass \
                         replaceAll: true to change every one",
                        lines.join(", ")
                    )))
                }
            }
        }
        Edit::Patch(diff) => {
            let diff = with_header(diff);
            let patch = diffy::Patch::from_str(&diff).map_err(|e| {
                WorkspaceError::InvalidInput(format!(
                    "the diff cannot be read ({e}): give unified-diff hunks like \
                     `@@ -3,2 +3,2 @@` followed by ` `, `-` and `+` lines"
                ))
            })?;
            if patch.hunks().is_empty() {
                return Err(WorkspaceError::InvalidInput(
                    "the diff has no hunks (`@@ -a,b +c,d @@` lines)".into(),
                ));
            }
            let patched = diffy::apply(text, &patch).map_err(|e| {
                WorkspaceError::EditMismatch(format!(
                    "the diff does not apply to {shown} ({e}: its context or removed lines are \
                     not in the file as written); nothing was changed. Read the file again and \
                     make the diff from what it holds now"
                ))
            })?;
            Ok((patched, None))
        }
    }
}

/// A diff without the `---`/`+++` header gets one: agents often send just the hunks.
fn with_header(diff: &str) -> String {
    if diff.trim_start().starts_with("---") {
        diff.to_string()
    } else {
        format!("--- a\n+++ b\n{diff}")
    }
}

/// Why `old` was not found, with the nearest thing that was when there is one.
fn not_found_message(text: &str, old: &str, shown: &str) -> String {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let first_line = old
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(old)
        .trim();
    let hint = if !first_line.is_empty()
        && let Some(n) = text.lines().position(|l| l.contains(first_line))
    {
        format!(
            " Its first line is at line {} but what follows differs; read the file again and \
             copy the text exactly",
            n + 1
        )
    } else if squash(text).contains(&squash(old)) {
        " It is there with other whitespace or indentation: copy it exactly as the file \
         has it"
            .to_string()
    } else {
        " Read the file again and copy the text exactly, indentation included".to_string()
    };
    format!("oldText was not found in {shown}: nothing was changed.{hint}.")
}

/// The unified diff of `before` → `after`, cut at [`MAX_DIFF_LINES`], and the lines it adds
/// and removes.
pub(crate) fn diff(shown: &str, before: &str, after: &str) -> (String, usize, usize) {
    let patch = diffy::create_patch(before, after);
    let mut added = 0;
    let mut removed = 0;
    for hunk in patch.hunks() {
        for line in hunk.lines() {
            match line {
                diffy::Line::Insert(_) => added += 1,
                diffy::Line::Delete(_) => removed += 1,
                diffy::Line::Context(_) => {}
            }
        }
    }
    let full = patch.to_string();
    let mut lines = full.lines();
    // A header naming the file instead of diffy's "original"/"modified".
    let _ = (lines.next(), lines.next());
    let body: Vec<&str> = lines.collect();
    let mut out = format!("--- a/{shown}\n+++ b/{shown}\n");
    for line in body.iter().take(MAX_DIFF_LINES) {
        out.push_str(line);
        out.push('\n');
    }
    if body.len() > MAX_DIFF_LINES {
        out.push_str(&format!(
            "… {} more diff lines not shown\n",
            body.len() - MAX_DIFF_LINES
        ));
    }
    (out, added, removed)
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename. An existing file's
/// permissions are kept.
pub(crate) fn write_atomic(path: &Path, shown: &str, bytes: &[u8]) -> Result<(), WorkspaceError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let io = |action, e: std::io::Error| WorkspaceError::io(action, shown, &e);
    let parent = path
        .parent()
        .ok_or_else(|| WorkspaceError::InvalidInput(format!("{shown} has no folder")))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(
        ".{name}.devlens-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| io("write", e))?;
        file.write_all(bytes).map_err(|e| io("write", e))?;
        file.sync_all().map_err(|e| io("write", e))?;
        if let Ok(meta) = std::fs::metadata(path) {
            let _ = std::fs::set_permissions(&tmp, meta.permissions());
        }
        std::fs::rename(&tmp, path).map_err(|e| io("replace", e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replace(old: &str, new: &str) -> Edit {
        Edit::Replace {
            old: old.into(),
            new: new.into(),
            all: false,
        }
    }

    #[test]
    fn a_replacement_needs_exactly_one_match() {
        let text = "a = 1;\nb = 1;\nc = 2;\n";
        assert_eq!(
            apply(text, &replace("c = 2", "c = 3"), "f").unwrap(),
            ("a = 1;\nb = 1;\nc = 3;\n".to_string(), Some(1))
        );
        let several = apply(text, &replace("= 1", "= 9"), "f")
            .unwrap_err()
            .to_string();
        assert!(
            several.contains("occurs 2 times") && several.contains("lines 1, 2"),
            "{several}"
        );
        let all = Edit::Replace {
            old: "= 1".into(),
            new: "= 9".into(),
            all: true,
        };
        assert_eq!(apply(text, &all, "f").unwrap().1, Some(2));
        let none = apply(text, &replace("d = 4", "x"), "f")
            .unwrap_err()
            .to_string();
        assert!(none.contains("was not found"), "{none}");
        let spaces = apply(
            "if (x) {\n    go();\n}\n",
            &replace("if (x) {\n  go();", "y"),
            "f",
        )
        .unwrap_err()
        .to_string();
        assert!(spaces.contains("line 1"), "{spaces}");
    }

    #[test]
    fn a_unified_diff_applies_with_or_without_its_header() {
        let text = "one\ntwo\nthree\n";
        let hunks = "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
        assert_eq!(
            apply(text, &Edit::Patch(hunks.into()), "f").unwrap().0,
            "one\nTWO\nthree\n"
        );
        let stale = "@@ -1,3 +1,3 @@\n one\n-deux\n+TWO\n three\n";
        let err = apply(text, &Edit::Patch(stale.into()), "f")
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not apply"), "{err}");
        assert!(apply(text, &Edit::Patch("nonsense".into()), "f").is_err());
    }

    #[test]
    fn diffs_name_the_file_and_count_lines() {
        let (diff, added, removed) = diff("src/a.js", "x\ny\n", "x\nz\nw\n");
        assert!(
            diff.starts_with("--- a/src/a.js\n+++ b/src/a.js\n@@"),
            "{diff}"
        );
        assert_eq!((added, removed), (2, 1));
    }
}
