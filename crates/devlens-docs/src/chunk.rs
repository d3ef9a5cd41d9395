//! Pages into chunks: the units that are searched, returned and budgeted.
//!
//! A chunk belongs to one section and carries its heading path (`h1 > h2 > h3`) — what a question
//! is usually about, and what the golden sets match on. Prose is packed up to
//! [`MAX_TEXT_TOKENS`] per chunk (split at paragraph, then line or sentence boundaries); every code
//! block is a chunk of its own, whole, with its language, typed `example` when its section or
//! the prose right before it says so, else `code`.

use serde::{Deserialize, Serialize};

use crate::blocks::Block;
use crate::tokens;

/// The most cl100k tokens of prose in one chunk: a few paragraphs, small enough that five results
/// fit the default 4,000-token context with room to spare.
pub const MAX_TEXT_TOKENS: usize = 350;

/// What a chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    Text,
    Code,
    Example,
}

impl ChunkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Code => "code",
            Self::Example => "example",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "text" => Some(Self::Text),
            "code" => Some(Self::Code),
            "example" => Some(Self::Example),
            _ => None,
        }
    }

    pub fn is_code(self) -> bool {
        self != Self::Text
    }
}

/// One searchable piece of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// The heading path, `Title > Section > Subsection`.
    pub section: String,
    /// The anchor of the innermost heading (empty before the first heading).
    pub anchor: String,
    pub kind: ChunkKind,
    /// Prose, or the code block fenced with its language.
    pub content: String,
    pub language: Option<String>,
    pub tokens: usize,
}

/// Cuts one page's blocks into chunks. `page_title` names the page when it has no heading of its
/// own before the first content.
pub fn chunk_page(blocks: &[Block], page_title: &str) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    // (level, text, anchor) of the open headings, outermost first.
    let mut path: Vec<(u8, String, String)> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut pending_tokens = 0usize;
    let mut last_prose = String::new();

    let section_of = |path: &[(u8, String, String)]| -> (String, String) {
        if path.is_empty() {
            return (page_title.to_string(), String::new());
        }
        let section = path
            .iter()
            .map(|(_, t, _)| t.as_str())
            .collect::<Vec<_>>()
            .join(" > ");
        (
            section,
            path.last().map(|p| p.2.clone()).unwrap_or_default(),
        )
    };
    let flush = |pending: &mut Vec<String>,
                 pending_tokens: &mut usize,
                 path: &[(u8, String, String)],
                 chunks: &mut Vec<Chunk>| {
        if pending.is_empty() {
            return;
        }
        let (section, anchor) = section_of(path);
        let content = pending.join("\n\n");
        chunks.push(Chunk {
            section,
            anchor,
            kind: ChunkKind::Text,
            tokens: tokens::count(&content),
            content,
            language: None,
        });
        pending.clear();
        *pending_tokens = 0;
    };

    for block in blocks {
        match block {
            Block::Heading {
                level,
                text,
                anchor,
            } => {
                flush(&mut pending, &mut pending_tokens, &path, &mut chunks);
                while path.last().is_some_and(|(l, _, _)| l >= level) {
                    path.pop();
                }
                path.push((*level, text.clone(), anchor.clone()));
                last_prose.clear();
            }
            Block::Text(text) => {
                for piece in split_to_budget(text, MAX_TEXT_TOKENS) {
                    let n = tokens::count(&piece);
                    if pending_tokens + n > MAX_TEXT_TOKENS {
                        flush(&mut pending, &mut pending_tokens, &path, &mut chunks);
                    }
                    pending_tokens += n + 1;
                    pending.push(piece);
                }
                last_prose = text.clone();
            }
            Block::Code { language, code } => {
                flush(&mut pending, &mut pending_tokens, &path, &mut chunks);
                let (section, anchor) = section_of(&path);
                let is_example = section.to_lowercase().contains("example")
                    || last_prose.to_lowercase().contains("example");
                let content = format!(
                    "```{}\n{}\n```",
                    language.as_deref().unwrap_or(""),
                    code.trim_end()
                );
                chunks.push(Chunk {
                    section,
                    anchor,
                    kind: if is_example {
                        ChunkKind::Example
                    } else {
                        ChunkKind::Code
                    },
                    tokens: tokens::count(&content),
                    content,
                    language: language.clone(),
                });
            }
        }
    }
    flush(&mut pending, &mut pending_tokens, &path, &mut chunks);
    chunks
}

/// `text` as pieces of at most `max` tokens: whole when it fits, else split at line ends, then
/// sentence ends, then token boundaries.
fn split_to_budget(text: &str, max: usize) -> Vec<String> {
    if tokens::count(text) <= max {
        return vec![text.to_string()];
    }
    let mut units: Vec<&str> = text.split_inclusive('\n').collect();
    if units.len() == 1 {
        units = text.split_inclusive(". ").collect();
    }
    let mut out = Vec::new();
    let mut current = String::new();
    let mut current_tokens = 0;
    for unit in units {
        let n = tokens::count(unit);
        if n > max {
            if !current.trim().is_empty() {
                out.push(current.trim().to_string());
            }
            current.clear();
            current_tokens = 0;
            let mut rest = unit.to_string();
            while !rest.trim().is_empty() {
                let head = tokens::truncate(&rest, max);
                if head.is_empty() {
                    break;
                }
                out.push(head.trim().to_string());
                rest = rest[head.len()..].to_string();
            }
            continue;
        }
        if current_tokens + n > max && !current.trim().is_empty() {
            out.push(current.trim().to_string());
            current.clear();
            current_tokens = 0;
        }
        current.push_str(unit);
        current_tokens += n;
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(level: u8, text: &str) -> Block {
        Block::Heading {
            level,
            text: text.into(),
            anchor: crate::blocks::slug(text),
        }
    }

    #[test]
    fn heading_paths_code_types_and_sizes() {
        let long = "word ".repeat(900);
        let blocks = vec![
            Block::Text("Before any heading.".into()),
            h(1, "Guide"),
            Block::Text("Intro.".into()),
            h(2, "Install"),
            Block::Code {
                language: Some("sh".into()),
                code: "npm i x".into(),
            },
            h(3, "Details"),
            Block::Text("For example:".into()),
            Block::Code {
                language: None,
                code: "x()".into(),
            },
            h(2, "Usage"),
            Block::Text(long),
        ];
        let chunks = chunk_page(&blocks, "guide.md");
        let summary: Vec<(&str, ChunkKind)> = chunks
            .iter()
            .map(|c| (c.section.as_str(), c.kind))
            .collect();
        assert_eq!(summary[0], ("guide.md", ChunkKind::Text));
        assert_eq!(summary[1], ("Guide", ChunkKind::Text));
        assert_eq!(summary[2], ("Guide > Install", ChunkKind::Code));
        assert_eq!(summary[3], ("Guide > Install > Details", ChunkKind::Text));
        assert_eq!(
            summary[4],
            ("Guide > Install > Details", ChunkKind::Example)
        );
        assert!(chunks[4].content.starts_with("```\nx()"));
        assert_eq!(chunks[2].content, "```sh\nnpm i x\n```");
        assert_eq!(chunks[2].language.as_deref(), Some("sh"));
        assert_eq!(chunks[2].anchor, "install");
        let usage: Vec<&Chunk> = chunks
            .iter()
            .filter(|c| c.section == "Guide > Usage")
            .collect();
        assert!(usage.len() >= 3, "{}", usage.len());
        assert!(usage.iter().all(|c| c.tokens <= MAX_TEXT_TOKENS));
    }

    #[test]
    fn code_stays_whole_however_long() {
        let code = "let x = 1;\n".repeat(500);
        let chunks = chunk_page(
            &[Block::Code {
                language: Some("js".into()),
                code: code.clone(),
            }],
            "p",
        );
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].content.contains(code.trim_end()));
    }
}
