//! Searching file contents: a regex or a literal, with context lines, over the files a listing
//! would show (ripgrep's searcher and matcher), bounded in matches, per file and per line.

use std::path::Path;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde::Serialize;

use devlens_core::Report;

use crate::WorkspaceError;
use crate::list::{glob_set, walk};

/// Matches returned when no limit is asked for.
pub const DEFAULT_MATCHES: usize = 50;
/// The most matches one search returns.
pub const MAX_MATCHES: usize = 500;
/// The most matching lines shown from one file.
pub const MAX_PER_FILE: usize = 20;
/// The most context lines around a match.
pub const MAX_CONTEXT: usize = 10;
/// A longer line is cut around where it matched.
const LINE_CHARS: usize = 300;

/// What a search asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchQuery {
    pub pattern: String,
    /// The pattern is text, not a regular expression.
    pub literal: bool,
    pub case_insensitive: bool,
    /// Only files matching these globs.
    pub globs: Vec<String>,
    /// Lines of context before and after each match.
    pub context: usize,
    pub max_matches: usize,
}

/// One line shown: a match or its context.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct FoundLine {
    pub line: u64,
    pub text: String,
    /// Whether the line matched (otherwise it is context).
    #[serde(rename = "match")]
    pub is_match: bool,
}

/// The lines of one file.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct FileMatches {
    pub path: String,
    pub lines: Vec<FoundLine>,
}

/// What `search_files` returns.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatches {
    pub pattern: String,
    pub files: Vec<FileMatches>,
    /// Matching lines shown.
    pub matches: usize,
    /// Whether there were more matches than shown.
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl Report for SearchMatches {
    /// grep's format: `path:line:text` for matches, `path-line-text` for context, `--` between
    /// groups.
    fn to_text(&self) -> String {
        let mut out = String::new();
        for file in &self.files {
            let mut previous: Option<u64> = None;
            for line in &file.lines {
                if previous.is_some_and(|p| line.line > p + 1) {
                    out.push_str("--\n");
                }
                let sep = if line.is_match { ':' } else { '-' };
                out.push_str(&format!(
                    "{}{sep}{}{sep}{}\n",
                    file.path, line.line, line.text
                ));
                previous = Some(line.line);
            }
        }
        if self.files.is_empty() {
            out.push_str(&format!("no matches for `{}`\n", self.pattern));
        }
        if self.truncated {
            out.push_str(&format!(
                "… more matches than the {} shown: narrow the pattern or the globs\n",
                self.matches
            ));
        }
        if let Some(n) = &self.notice {
            out.push_str(&format!("note: {n}\n"));
        }
        out.truncate(out.trim_end().len());
        out
    }
}

/// Collects one file's lines.
struct Collect<'a> {
    lines: &'a mut Vec<FoundLine>,
    matches: usize,
    budget: usize,
    truncated: bool,
}

fn shown_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    if text.chars().count() > LINE_CHARS {
        let mut cut: String = text.chars().take(LINE_CHARS).collect();
        cut.push_str(" …");
        cut
    } else {
        text.to_string()
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.matches >= self.budget {
            self.truncated = true;
            return Ok(false);
        }
        self.matches += 1;
        self.lines.push(FoundLine {
            line: mat.line_number().unwrap_or(0),
            text: shown_line(mat.bytes()),
            is_match: true,
        });
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.lines.push(FoundLine {
            line: context.line_number().unwrap_or(0),
            text: shown_line(context.bytes()),
            is_match: false,
        });
        Ok(true)
    }
}

pub(crate) fn search(
    root: &Path,
    dir: &Path,
    query: &SearchQuery,
) -> Result<SearchMatches, WorkspaceError> {
    if query.pattern.is_empty() {
        return Err(WorkspaceError::InvalidInput(
            "the pattern is empty: give the text or regular expression to find".into(),
        ));
    }
    if query.max_matches == 0 || query.max_matches > MAX_MATCHES {
        return Err(WorkspaceError::InvalidInput(format!(
            "maxMatches must be between 1 and {MAX_MATCHES}, got {}",
            query.max_matches
        )));
    }
    if query.context > MAX_CONTEXT {
        return Err(WorkspaceError::InvalidInput(format!(
            "context must be at most {MAX_CONTEXT} lines, got {}",
            query.context
        )));
    }
    let matcher = RegexMatcherBuilder::new()
        .fixed_strings(query.literal)
        .case_insensitive(query.case_insensitive)
        .build(&query.pattern)
        .map_err(|e| {
            WorkspaceError::InvalidInput(format!(
                "`{}` is not a valid regular expression ({e}); pass literal: true to search for \
                 the text as it is",
                query.pattern
            ))
        })?;
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(query.context)
        .after_context(query.context)
        // Files with NUL bytes are binary: skipped rather than shown as garbage.
        .binary_detection(BinaryDetection::quit(0))
        .build();
    let globs = glob_set(&query.globs)?;
    let mut files = Vec::new();
    let mut matches = 0usize;
    let mut truncated = false;
    let mut unreadable = 0usize;
    let stopped = walk(root, dir, globs.as_ref(), |path, rel, _| {
        let mut lines = Vec::new();
        let budget = (query.max_matches - matches).min(MAX_PER_FILE);
        let mut sink = Collect {
            lines: &mut lines,
            matches: 0,
            budget,
            truncated: false,
        };
        if searcher.search_path(&matcher, path, &mut sink).is_err() {
            unreadable += 1;
            return true;
        }
        let (found, cut) = (sink.matches, sink.truncated);
        if found > 0 {
            matches += found;
            truncated |= cut;
            files.push(FileMatches {
                path: rel.to_string(),
                lines,
            });
        }
        if matches >= query.max_matches {
            truncated = true;
            return false;
        }
        true
    });
    let mut notes = Vec::new();
    if stopped {
        notes.push(format!(
            "the search stopped after {} files; narrow it with a folder or globs",
            crate::list::MAX_WALK
        ));
    }
    if unreadable > 0 {
        notes.push(format!("{unreadable} files could not be read"));
    }
    Ok(SearchMatches {
        pattern: query.pattern.clone(),
        files,
        matches,
        truncated,
        notice: (!notes.is_empty()).then(|| notes.join("; ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/app.js"),
            "import x from 'y';\nfunction render() {\n  return useState(0);\n}\n",
        )
        .unwrap();
        std::fs::write(root.join("src/other.css"), "body { color: red }\n").unwrap();
        std::fs::write(root.join("logo.bin"), b"use\0State").unwrap();
        dir
    }

    fn query(pattern: &str) -> SearchQuery {
        SearchQuery {
            pattern: pattern.into(),
            max_matches: DEFAULT_MATCHES,
            ..SearchQuery::default()
        }
    }

    #[test]
    fn a_regex_finds_lines_with_their_context_and_binary_files_are_skipped() {
        let dir = tree();
        let found = search(
            dir.path(),
            dir.path(),
            &SearchQuery {
                context: 1,
                ..query(r"use\w+\(")
            },
        )
        .unwrap();
        assert_eq!(found.matches, 1);
        assert_eq!(found.files.len(), 1);
        let text = found.to_text();
        assert_eq!(
            text,
            "src/app.js-2-function render() {\nsrc/app.js:3:  return useState(0);\nsrc/app.js-4-}"
        );
    }

    #[test]
    fn literals_globs_limits_and_bad_patterns() {
        let dir = tree();
        let literal = search(
            dir.path(),
            dir.path(),
            &SearchQuery {
                literal: true,
                ..query("useState(0)")
            },
        )
        .unwrap();
        assert_eq!(literal.matches, 1);
        let css_only = search(
            dir.path(),
            dir.path(),
            &SearchQuery {
                globs: vec!["*.css".into()],
                case_insensitive: true,
                ..query("COLOR")
            },
        )
        .unwrap();
        assert_eq!(css_only.files[0].path, "src/other.css");
        let one = search(
            dir.path(),
            dir.path(),
            &SearchQuery {
                max_matches: 1,
                ..query("[a-z]")
            },
        )
        .unwrap();
        assert!(one.truncated && one.matches == 1);
        let err = search(dir.path(), dir.path(), &query("useState(")).unwrap_err();
        assert!(err.to_string().contains("literal: true"), "{err}");
    }
}
