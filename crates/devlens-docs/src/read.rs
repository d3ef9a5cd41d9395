//! Reading a documentation folder (or one page by URL) into chunks ready to store.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::DocsError;
use crate::blocks::{Block, Format, parse_plain};
use crate::chunk::chunk_page;
use crate::store::StoredChunk;

/// Parses `text` written in `format` into blocks.
pub fn parse(format: Format, text: &str) -> Vec<Block> {
    match format {
        Format::Markdown => crate::markdown::parse(text),
        Format::Rst => crate::rst::parse(text),
        Format::Html => crate::html::parse(text),
        Format::Text => parse_plain(text),
    }
}

/// Files larger than this are not documentation pages (generated bundles, data dumps).
pub const MAX_PAGE_BYTES: u64 = 8 * 1024 * 1024;

/// The chunks of a set of pages, deduplicated.
#[derive(Debug, Default)]
pub struct Pages {
    pub pages: usize,
    pub chunks: Vec<StoredChunk>,
    /// Chunks dropped because an identical one (same type and text) was already there.
    pub duplicates: usize,
    /// Files passed over: not a docs format, too large, or not UTF-8.
    pub skipped: Vec<String>,
}

/// The documentation files under `root`, sorted (stable chunk order across runs); hidden folders,
/// `node_modules` and the `_sources/` copies of a Sphinx build are not entered.
pub fn doc_files(root: &Path) -> Result<(Vec<PathBuf>, Vec<String>), DocsError> {
    let read_err = |path: &Path, e: std::io::Error| DocsError::Read {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let meta = std::fs::metadata(root).map_err(|e| read_err(root, e))?;
    if meta.is_file() {
        return Ok((vec![root.to_path_buf()], Vec::new()));
    }
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| read_err(&dir, e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.')
                    && name != "node_modules"
                    && !(name == "_sources" && is_sphinx_build(&dir))
                {
                    stack.push(path);
                }
            } else if Format::of_path(&path).is_some() {
                files.push(path);
            } else if !name.starts_with('.') {
                skipped.push(relative(root, &path));
            }
        }
    }
    files.sort();
    skipped.sort();
    Ok((files, skipped))
}

/// Whether `dir` holds a Sphinx HTML build. Its `_sources/` folder repeats every page as reST
/// (or text): read twice, each answer would have a twin that crowds out other sections, and
/// ingesting would take twice as long.
fn is_sphinx_build(dir: &Path) -> bool {
    ["searchindex.js", "objects.inv"]
        .iter()
        .any(|marker| dir.join(marker).is_file())
}

/// `path` relative to `root`, with `/` separators.
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let rel = if rel.as_os_str().is_empty() {
        path.file_name().map(Path::new).unwrap_or(path)
    } else {
        rel
    };
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// A chunk's content hash: type plus whitespace-normalised text, so the same snippet repeated
/// across pages is stored once.
pub fn content_hash(kind: &str, content: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(kind.as_bytes());
    for word in content.split_whitespace() {
        hasher.update(b" ");
        hasher.update(word.as_bytes());
    }
    hex::encode(&hasher.finalize()[..12])
}

/// The title of a page without headings: its file name without extension.
fn page_title(source: &str) -> String {
    let name = source.rsplit('/').next().unwrap_or(source);
    name.split('.').next().unwrap_or(name).to_string()
}

/// Adds one page's chunks to `pages`. `url_base` is the page's link (a relative path or URL).
pub fn add_page(
    pages: &mut Pages,
    seen: &mut HashSet<String>,
    source: &str,
    url_base: &str,
    format: Format,
    text: &str,
) {
    let blocks = parse(format, text);
    let chunks = chunk_page(&blocks, &page_title(source));
    pages.pages += 1;
    for chunk in chunks {
        let hash = content_hash(chunk.kind.as_str(), &chunk.content);
        if !seen.insert(hash.clone()) {
            pages.duplicates += 1;
            continue;
        }
        let url = if chunk.anchor.is_empty() {
            url_base.to_string()
        } else {
            format!("{url_base}#{}", chunk.anchor)
        };
        pages.chunks.push(StoredChunk {
            section: chunk.section,
            anchor: chunk.anchor,
            kind: chunk.kind,
            language: chunk.language,
            source: source.to_string(),
            url,
            content: chunk.content,
            tokens: chunk.tokens,
            hash,
        });
    }
}

/// Reads and chunks every docs file under `root`. `progress(done, total)` after each file.
pub fn read_folder(
    root: &Path,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Pages, DocsError> {
    let (files, skipped) = doc_files(root)?;
    if files.is_empty() {
        return Err(DocsError::NothingToIngest {
            path: root.to_path_buf(),
        });
    }
    let mut pages = Pages {
        skipped,
        ..Pages::default()
    };
    let mut seen = HashSet::new();
    let total = files.len();
    for (i, path) in files.iter().enumerate() {
        let source = relative(root, path);
        let too_big = std::fs::metadata(path)
            .map(|m| m.len() > MAX_PAGE_BYTES)
            .unwrap_or(false);
        let text = if too_big {
            None
        } else {
            match std::fs::read(path) {
                Ok(bytes) => String::from_utf8(bytes).ok(),
                Err(e) => {
                    return Err(DocsError::Read {
                        path: path.clone(),
                        reason: e.to_string(),
                    });
                }
            }
        };
        match (text, Format::of_path(path)) {
            (Some(text), Some(format)) => {
                add_page(&mut pages, &mut seen, &source, &source, format, &text)
            }
            _ => pages.skipped.push(source),
        }
        progress(i + 1, total);
    }
    Ok(pages)
}

/// The format of a fetched page: from the content type, else the URL's extension, else HTML.
pub fn format_of_response(url: &str, content_type: Option<&str>) -> Format {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    if ct.contains("markdown") {
        return Format::Markdown;
    }
    if ct.contains("x-rst") {
        return Format::Rst;
    }
    let path = url.split(['?', '#']).next().unwrap_or(url);
    match Format::of_path(Path::new(path)) {
        Some(f) => f,
        None if ct.starts_with("text/plain") => Format::Text,
        None => Format::Html,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sources_copies_of_a_sphinx_build_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("html/_sources/library")).unwrap();
        std::fs::create_dir_all(root.join("notes/_sources")).unwrap();
        std::fs::write(root.join("html/searchindex.js"), "Search.setIndex({})").unwrap();
        std::fs::write(
            root.join("html/os.html"),
            "<h1>os</h1><p>Miscellaneous.</p>",
        )
        .unwrap();
        std::fs::write(root.join("html/_sources/library/os.rst.txt"), "os\n==\n").unwrap();
        // Not a Sphinx build: a folder of that name is read like any other.
        std::fs::write(root.join("notes/_sources/a.md"), "# A").unwrap();
        let (files, _) = doc_files(root).unwrap();
        let names: Vec<String> = files.iter().map(|f| relative(root, f)).collect();
        assert_eq!(names, vec!["html/os.html", "notes/_sources/a.md"]);
    }

    #[test]
    fn folders_are_walked_in_order_and_duplicates_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("guide/.hidden")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(
            root.join("index.md"),
            "# Home\n\nWelcome.\n\n```js\nx()\n```\n",
        )
        .unwrap();
        std::fs::write(
            root.join("guide/b.rst"),
            "Guide\n=====\n\nRead.\n\n.. code-block:: js\n\n   x()\n",
        )
        .unwrap();
        std::fs::write(root.join("guide/c.html"), "<h1>C</h1><p>Sea.</p>").unwrap();
        std::fs::write(root.join("guide/notes.txt"), "Plain notes.").unwrap();
        std::fs::write(root.join("guide/.hidden/h.md"), "# H").unwrap();
        std::fs::write(root.join("node_modules/x/r.md"), "# R").unwrap();
        std::fs::write(root.join("logo.png"), [0u8, 159, 146]).unwrap();
        std::fs::write(root.join("bad.md"), [0xffu8, 0xfe, 0]).unwrap();
        let pages = read_folder(root, &|_, _| {}).unwrap();
        assert_eq!(pages.pages, 4);
        assert_eq!(pages.duplicates, 1, "the second `x()` snippet");
        assert_eq!(pages.skipped, vec!["logo.png", "bad.md"]);
        let sources: Vec<&str> = pages.chunks.iter().map(|c| c.source.as_str()).collect();
        assert_eq!(
            sources,
            vec![
                "guide/b.rst",
                "guide/b.rst",
                "guide/c.html",
                "guide/notes.txt",
                "index.md"
            ]
        );
        let notes = &pages.chunks[3];
        assert_eq!(
            (notes.section.as_str(), notes.url.as_str()),
            ("notes", "guide/notes.txt")
        );
        assert_eq!(pages.chunks[0].url, "guide/b.rst#guide");
        assert!(matches!(
            read_folder(&root.join("guide/.hidden/none"), &|_, _| {}),
            Err(DocsError::Read { .. })
        ));
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_folder(empty.path(), &|_, _| {}),
            Err(DocsError::NothingToIngest { .. })
        ));
    }

    #[test]
    fn response_formats() {
        assert_eq!(format_of_response("https://x/a.md", None), Format::Markdown);
        assert_eq!(
            format_of_response("https://x/a", Some("text/markdown; charset=utf-8")),
            Format::Markdown
        );
        assert_eq!(
            format_of_response("https://x/llms.txt?x=1", Some("text/plain")),
            Format::Text
        );
        assert_eq!(
            format_of_response("https://x/docs/", Some("text/html")),
            Format::Html
        );
    }
}
