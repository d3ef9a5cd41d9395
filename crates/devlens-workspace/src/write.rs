//! Writing and editing files: atomically (a temporary file beside the target, then a rename, so
//! a reader or a crash never sees half a file), one writer per file at a time, refusing an edit
//! whose text is not in the file exactly once, and showing what changed as a unified diff.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use devlens_core::Report;

use crate::{Places, WorkspaceError};

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
    let mut file = AtomicFile::start(path, shown, None)?;
    file.write_all(bytes)
        .map_err(|e| WorkspaceError::io("write", shown, &e))?;
    file.commit().map(drop)
}

/// Writes `bytes` to `path` with [`AtomicFile`]: whole or not at all, never through a symlink
/// swapped in at the path, and — given `within` — never into a folder that left those places.
pub fn write_confined(
    path: &Path,
    within: Option<&Places>,
    bytes: &[u8],
) -> Result<(), WorkspaceError> {
    let mut file = AtomicFile::create(path, within)?;
    let shown = file.shown.clone();
    file.write_all(bytes)
        .map_err(|e| WorkspaceError::io("write", &shown, &e))?;
    file.commit().map(drop)
}

/// A file being written so that nobody sees half of it and nothing outside the allowed places
/// is touched, however the path changes between the check and the write.
///
/// A path that passed [`Places::resolve`] can still change before the bytes land: a symlink put
/// at the file's name, or the file's folder swapped for a symlink to somewhere else (a build
/// script, a dev server or a hostile dependency can do either). So:
///
/// - the bytes go to a new temporary file in the destination folder, created exclusively
///   (`O_CREAT|O_EXCL`: it can never be an existing file or a symlink's target), and are
///   renamed over the destination at the end ([`AtomicFile::commit`]). A rename replaces a
///   symlink at the destination rather than following it, so a link swapped in after the check
///   is replaced, and whatever it pointed to is untouched;
/// - the folder is opened once and held: on Linux every later step (the temporary file, the
///   rename) goes through that open folder (`/proc/self/fd/N/…`), so swapping the folder's path
///   for a symlink afterwards cannot redirect it. With `within`, where the open folder really
///   is is checked right after opening it and again right before the rename, and the write is
///   refused (the temporary file removed) when it is not inside a writable place. Elsewhere the
///   folder's path is resolved again at those two points instead.
///
/// Dropped before [`AtomicFile::commit`], the temporary file is removed and the destination is
/// left as it was.
#[derive(Debug)]
pub struct AtomicFile {
    folder: Folder,
    name: OsString,
    temp: OsString,
    file: Option<File>,
    within: Option<Places>,
    shown: String,
}

impl AtomicFile {
    /// Starts writing `path`: creates its missing folders, opens its folder and the temporary
    /// file. `within`: the places the folder must be inside (a path a tool call named); `None`
    /// for a path a person chose for themselves (a CLI `--out`).
    pub fn create(path: &Path, within: Option<&Places>) -> Result<Self, WorkspaceError> {
        let shown = match within {
            Some(places) => match path.strip_prefix(places.workspace()) {
                Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
                _ => path.display().to_string(),
            },
            None => path.display().to_string(),
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| WorkspaceError::io("create the folder of", &shown, &e))?;
        }
        Self::start(path, &shown, within)
    }

    fn start(path: &Path, shown: &str, within: Option<&Places>) -> Result<Self, WorkspaceError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = match path.file_name() {
            Some(name)
                if path
                    .components()
                    .next_back()
                    .is_some_and(|c| matches!(c, std::path::Component::Normal(_))) =>
            {
                name.to_os_string()
            }
            _ => {
                return Err(WorkspaceError::InvalidInput(format!(
                    "{shown} does not name a file: give a path ending in a file name"
                )));
            }
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let folder = Folder::open(parent)
            .map_err(|e| WorkspaceError::io("open the folder of", shown, &e))?;
        let within = within.cloned();
        if let Some(places) = &within {
            check_folder(&folder, places, shown)?;
        }
        let mut temp = OsString::from(".");
        temp.push(&name);
        temp.push(format!(
            ".devlens-{}-{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(folder.entry(&temp))
            .map_err(|e| WorkspaceError::io("write", shown, &e))?;
        Ok(Self {
            folder,
            name,
            temp,
            file: Some(file),
            within,
            shown: shown.to_string(),
        })
    }

    /// The temporary file, for writers that want their own handle (`File::try_clone`, e.g. an
    /// async one). Write through it only before [`AtomicFile::commit`].
    pub fn file(&self) -> &File {
        self.file.as_ref().expect("the file is held until commit")
    }

    /// The path as messages show it.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Makes the file the destination: flushes it to disk, checks the folder once more and
    /// renames the temporary file over the destination (replacing a symlink there, never
    /// following it). Returns the open file, positioned at its end, for reading it back.
    pub fn commit(mut self) -> Result<File, WorkspaceError> {
        let fail = |action, e: std::io::Error| WorkspaceError::io(action, &self.shown, &e);
        let file = self.file();
        file.sync_all().map_err(|e| fail("write", e))?;
        // An existing file keeps its permissions; a symlink or anything else there does not
        // lend its target's.
        if let Ok(meta) = std::fs::symlink_metadata(self.folder.entry(&self.name))
            && meta.is_file()
        {
            let _ = file.set_permissions(meta.permissions());
        }
        if let Some(places) = &self.within {
            // A refusal drops `self`, which removes the temporary file.
            check_folder(&self.folder, places, &self.shown)?;
        }
        std::fs::rename(self.folder.entry(&self.temp), self.folder.entry(&self.name))
            .map_err(|e| fail("replace", e))?;
        // Renamed: nothing left for Drop to remove.
        self.temp.clear();
        Ok(self.file.take().expect("the file is held until commit"))
    }
}

impl std::io::Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the file was committed"))?
            .write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.temp.is_empty() {
            let _ = std::fs::remove_file(self.folder.entry(&self.temp));
        }
    }
}

/// A folder held open while a file is written into it.
#[derive(Debug)]
struct Folder {
    /// How entries are reached: `/proc/self/fd/N` for the open folder on Linux, else its
    /// canonical path.
    base: PathBuf,
    /// The open folder (Linux): keeps `base` pointing at this very folder.
    #[cfg(target_os = "linux")]
    _handle: Option<File>,
}

impl Folder {
    fn open(dir: &Path) -> std::io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::io::AsRawFd as _;
            let handle = File::open(dir)?;
            if !handle.metadata()?.is_dir() {
                return Err(std::io::Error::other("it is not a folder"));
            }
            let base = PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()));
            // Without /proc (an unusual sandbox), fall back to the canonical path.
            if base.is_dir() {
                return Ok(Self {
                    base,
                    _handle: Some(handle),
                });
            }
        }
        Ok(Self {
            base: std::fs::canonicalize(dir)?,
            #[cfg(target_os = "linux")]
            _handle: None,
        })
    }

    fn entry(&self, name: &OsStr) -> PathBuf {
        self.base.join(name)
    }

    /// Where the folder is now.
    fn location(&self) -> std::io::Result<PathBuf> {
        #[cfg(target_os = "linux")]
        if self._handle.is_some() {
            return std::fs::read_link(&self.base);
        }
        std::fs::canonicalize(&self.base)
    }
}

/// Refuses when the folder is not (or no longer) inside a writable place, or is inside `.git`.
fn check_folder(folder: &Folder, places: &Places, shown: &str) -> Result<(), WorkspaceError> {
    let location = folder
        .location()
        .map_err(|e| WorkspaceError::io("check the folder of", shown, &e))?;
    let inside = |root: &Path| location.strip_prefix(root).ok().map(Path::to_path_buf);
    let relative = inside(places.artifacts()).or_else(|| {
        places
            .workspace_writable()
            .then(|| inside(places.workspace()))
            .flatten()
    });
    match relative {
        Some(rel) if !rel.components().any(|c| c.as_os_str() == ".git") => Ok(()),
        _ => Err(WorkspaceError::refused(format!(
            "`{shown}` was not written: its folder is {}, outside the places files may be \
             written (the path changed after it was checked, e.g. a folder was replaced by a \
             symlink); nothing was written there. {}",
            location.display(),
            places.where_files_may_go()
        ))),
    }
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
