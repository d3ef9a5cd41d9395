//! The shape every input format is parsed into: headings, prose and code blocks, in document
//! order. Chunking works on this alone, so adding a format means writing one parser (and a line
//! in [`crate::read::parse`]).

/// One structural piece of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// A heading of `level` 1 (title) to 6, with the anchor a link to it would use.
    Heading {
        level: u8,
        text: String,
        anchor: String,
    },
    /// Prose: a paragraph, a list, a table, a quote — as plain text with Markdown-ish marks.
    Text(String),
    /// A code block, kept whole, with its language when the source names one.
    Code {
        language: Option<String>,
        code: String,
    },
}

/// The documentation formats devlens reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Rst,
    Html,
    Text,
}

impl Format {
    /// The format of a file, by extension; `None` for files that are not docs.
    pub fn of_path(path: &std::path::Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "md" | "mdx" | "markdown" | "mdown" => Self::Markdown,
            "rst" | "rest" => Self::Rst,
            "html" | "htm" | "xhtml" => Self::Html,
            "txt" | "text" => {
                // Sphinx ships its sources as `page.rst.txt`.
                let stem = path.file_stem()?.to_str()?.to_ascii_lowercase();
                if stem.ends_with(".rst") {
                    Self::Rst
                } else {
                    Self::Text
                }
            }
            _ => return None,
        })
    }
}

/// Plain text: paragraphs separated by blank lines; no headings (the file name is the title).
pub fn parse_plain(text: &str) -> Vec<Block> {
    paragraphs(text).into_iter().map(Block::Text).collect()
}

/// Splits text at blank lines, trimming each paragraph's trailing space.
pub fn paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.trim().is_empty() {
                out.push(current.trim_end().to_string());
            }
            current.clear();
        } else {
            current.push_str(line.trim_end());
            current.push('\n');
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim_end().to_string());
    }
    out
}

/// A GitHub-style anchor: lower-case, spaces to `-`, punctuation other than `-`/`_` dropped.
pub fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        if c.is_alphanumeric() || c == '_' || c == '-' {
            out.extend(c.to_lowercase());
        } else if c.is_whitespace() {
            out.push('-');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn formats_by_extension() {
        assert_eq!(Format::of_path(Path::new("a/b.MD")), Some(Format::Markdown));
        assert_eq!(Format::of_path(Path::new("x.mdx")), Some(Format::Markdown));
        assert_eq!(Format::of_path(Path::new("x.rst.txt")), Some(Format::Rst));
        assert_eq!(Format::of_path(Path::new("x.txt")), Some(Format::Text));
        assert_eq!(Format::of_path(Path::new("x.htm")), Some(Format::Html));
        assert_eq!(Format::of_path(Path::new("x.json")), None);
        assert_eq!(Format::of_path(Path::new("Makefile")), None);
    }

    #[test]
    fn slugs_like_github() {
        assert_eq!(slug("Promises API"), "promises-api");
        assert_eq!(
            slug("fs.readFile(path[, options])"),
            "fsreadfilepath-options"
        );
        assert_eq!(slug("  Hello, World! "), "hello-world");
    }

    #[test]
    fn plain_text_is_paragraphs() {
        let blocks = parse_plain("one\ntwo\n\n\nthree  \n");
        assert_eq!(
            blocks,
            vec![Block::Text("one\ntwo".into()), Block::Text("three".into())]
        );
    }
}
