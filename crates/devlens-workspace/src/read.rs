//! Reading a text file: a range of lines, numbered, bounded; binary files refused with what they
//! are.

use std::io::{BufRead, BufReader, Read};

use serde::Serialize;

use devlens_core::Report;

use crate::{WorkspaceError, content_version};

/// Lines returned when no limit is asked for.
pub const DEFAULT_LINES: usize = 2000;
/// The most lines one read returns.
pub const MAX_LINES: usize = 10_000;
/// The most bytes of text one read returns: past it the answer stops at a line boundary and
/// says where to continue.
pub const MAX_READ_BYTES: usize = 256 * 1024;
/// A longer line is cut (minified bundles hold megabyte lines).
pub const MAX_LINE_CHARS: usize = 2000;
/// How much of a file is sniffed to tell text from binary.
const SNIFF_BYTES: usize = 8192;

/// What `read_file` returns.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    /// The path, relative to the workspace.
    pub path: String,
    /// The first line returned (1-based).
    pub start_line: usize,
    /// The lines, without line numbers.
    pub text: String,
    /// Lines returned.
    pub lines: usize,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// Where the next read starts, when the file goes on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_line: Option<usize>,
    /// Lines that were cut at [`MAX_LINE_CHARS`].
    #[serde(skip_serializing_if = "is_zero")]
    pub cut_lines: usize,
    /// The content's version: an edit can name it to be sure the file did not change since.
    pub version: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Report for FileContent {
    /// The lines numbered like `cat -n`, then where to continue.
    fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + self.lines * 8);
        let width = (self.start_line + self.lines).to_string().len().max(4);
        for (i, line) in self.text.split_inclusive('\n').enumerate() {
            out.push_str(&format!("{:>width$}\t{line}", self.start_line + i));
        }
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        if self.total_lines == 0 {
            out.push_str(&format!("({} is empty)\n", self.path));
        }
        if let Some(next) = self.next_line {
            out.push_str(&format!(
                "… {} of {} lines shown; continue with startLine {next}\n",
                self.lines, self.total_lines
            ));
        }
        if self.cut_lines > 0 {
            out.push_str(&format!(
                "({} lines longer than {MAX_LINE_CHARS} characters were cut)\n",
                self.cut_lines
            ));
        }
        out.truncate(out.trim_end().len());
        out
    }
}

/// What a file's first bytes say it is, when it is not text.
pub(crate) fn binary_kind(head: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG", "PNG image"),
        (b"\xff\xd8\xff", "JPEG image"),
        (b"GIF8", "GIF image"),
        (b"RIFF", "RIFF media (WebP, WAV or AVI)"),
        (b"%PDF", "PDF document"),
        (b"PK\x03\x04", "ZIP archive"),
        (b"\x1f\x8b", "gzip archive"),
        (b"\x00asm", "WebAssembly module"),
        (b"\x7fELF", "ELF executable"),
        (b"wOFF", "WOFF font"),
        (b"wOF2", "WOFF2 font"),
        (b"SQLite format 3", "SQLite database"),
    ];
    if let Some((_, kind)) = MAGIC.iter().find(|(magic, _)| head.starts_with(magic)) {
        return Some(kind);
    }
    if head.contains(&0) {
        return Some("binary data");
    }
    // Invalid UTF-8 in the middle of the sniffed part (not just a character cut at its end).
    match std::str::from_utf8(head) {
        Ok(_) => None,
        Err(e) if e.error_len().is_some() => Some("not UTF-8 text"),
        Err(_) => None,
    }
}

/// Reads lines `start_line..` (1-based) of the file at `path`, at most `limit` of them.
pub(crate) fn read_lines(
    path: &std::path::Path,
    shown: &str,
    start_line: usize,
    limit: usize,
) -> Result<FileContent, WorkspaceError> {
    if start_line == 0 {
        return Err(WorkspaceError::InvalidInput(
            "startLine counts from 1".into(),
        ));
    }
    if limit == 0 || limit > MAX_LINES {
        return Err(WorkspaceError::InvalidInput(format!(
            "limit must be between 1 and {MAX_LINES} lines, got {limit}"
        )));
    }
    let io = |action, e: std::io::Error| WorkspaceError::io(action, shown, &e);
    let meta = std::fs::metadata(path).map_err(|e| io("read", e))?;
    if meta.is_dir() {
        return Err(WorkspaceError::InvalidInput(format!(
            "{shown} is a folder: list its files with list_files"
        )));
    }
    let mut file = std::fs::File::open(path).map_err(|e| io("open", e))?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| io("read", e))?;
    if let Some(kind) = binary_kind(&head) {
        return Err(WorkspaceError::Binary {
            path: shown.to_string(),
            kind: kind.to_string(),
            bytes: meta.len(),
        });
    }
    let file = std::fs::File::open(path).map_err(|e| io("open", e))?;
    let mut reader = BufReader::new(file);
    let mut hasher = crate::VersionHasher::default();
    let mut text = String::new();
    let mut line = Vec::new();
    let (mut total, mut lines, mut cut) = (0usize, 0usize, 0usize);
    let mut next_line = None;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| io("read", e))?;
        if n == 0 {
            break;
        }
        hasher.update(&line);
        total += 1;
        if total < start_line || next_line.is_some() {
            continue;
        }
        if lines == limit || text.len() + line.len() > MAX_READ_BYTES && lines > 0 {
            next_line = Some(total);
            continue;
        }
        let decoded = String::from_utf8_lossy(&line);
        if decoded.chars().count() > MAX_LINE_CHARS + 1 {
            let kept: String = decoded.chars().take(MAX_LINE_CHARS).collect();
            text.push_str(&kept);
            text.push_str(" …[cut]\n");
            cut += 1;
        } else {
            text.push_str(&decoded);
        }
        lines += 1;
    }
    if start_line > total.max(1) {
        return Err(WorkspaceError::InvalidInput(format!(
            "{shown} has {total} lines; startLine {start_line} is past its end"
        )));
    }
    Ok(FileContent {
        path: shown.to_string(),
        start_line,
        text,
        lines,
        total_lines: total,
        next_line,
        cut_lines: cut,
        version: hasher.finish(),
    })
}

/// The whole text of a file and its version, for an edit (binary files refused).
pub(crate) fn read_whole(
    path: &std::path::Path,
    shown: &str,
) -> Result<(String, String), WorkspaceError> {
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => WorkspaceError::NotFound {
            path: shown.to_string(),
            hint: "Create it with write_file, or check the name with list_files.".into(),
        },
        _ => WorkspaceError::io("read", shown, &e),
    })?;
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if let Some(kind) = binary_kind(head) {
        return Err(WorkspaceError::Binary {
            path: shown.to_string(),
            kind: kind.to_string(),
            bytes: bytes.len() as u64,
        });
    }
    let version = content_version(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| WorkspaceError::Binary {
        path: shown.to_string(),
        kind: "not UTF-8 text".into(),
        bytes: 0,
    })?;
    Ok((text, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_files_are_told_by_their_first_bytes() {
        assert_eq!(binary_kind(b"\x89PNG\r\n\x1a\n"), Some("PNG image"));
        assert_eq!(binary_kind(b"abc\0def"), Some("binary data"));
        assert_eq!(binary_kind(b"ab\xffcd"), Some("not UTF-8 text"));
        assert_eq!(binary_kind("héllo".as_bytes()), None);
        // A character cut at the end of the sniffed bytes is still text.
        assert_eq!(binary_kind(&"é".as_bytes()[..1]), None);
    }

    #[test]
    fn a_range_of_lines_is_numbered_and_says_where_to_continue() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "one\ntwo\nthree\nfour\n").unwrap();
        let read = read_lines(&path, "f.txt", 2, 2).unwrap();
        assert_eq!(read.text, "two\nthree\n");
        assert_eq!((read.total_lines, read.next_line), (4, Some(4)));
        let text = read.to_text();
        assert!(text.starts_with("   2\ttwo\n   3\tthree\n"), "{text}");
        assert!(text.contains("continue with startLine 4"), "{text}");
        assert!(read_lines(&path, "f.txt", 9, 2).is_err());
        assert!(read_lines(&path, "f.txt", 0, 2).is_err());
        let whole = read_lines(&path, "f.txt", 1, 100).unwrap();
        assert_eq!(whole.version, read_whole(&path, "f.txt").unwrap().1);
    }
}
