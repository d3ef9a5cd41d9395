//! Reading a library's docs page by page rather than by question: its outline (the pages and
//! their sections) and one page in full, as MCP resources and the panel show them.

use std::fmt::Write as _;

use serde::Serialize;

use devlens_core::Report;

use crate::{ChunkKind, Docs, DocsError, store::StoredChunk};

/// How many pages an outline names; the rest are counted.
const OUTLINE_PAGES: usize = 500;

/// A library version's pages and the sections of each.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LibraryOutline {
    pub id: String,
    pub name: String,
    pub description: String,
    pub version: String,
    /// Every version, newest first.
    pub versions: Vec<String>,
    pub pages: Vec<PageOutline>,
    /// Pages beyond those listed.
    pub more_pages: usize,
}

/// One page of an outline.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PageOutline {
    /// The file (relative to the ingested folder) or URL: what [`Docs::page`] takes.
    pub source: String,
    /// Section headings in page order, each once.
    pub sections: Vec<String>,
    pub tokens: usize,
}

/// One page, every chunk in order.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DocsPage {
    pub id: String,
    pub version: String,
    pub source: String,
    pub url: String,
    pub sections: Vec<PageSection>,
}

/// A section of a page with its text and code.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PageSection {
    /// The heading path, `Title > Section`.
    pub section: String,
    pub url: String,
    pub content: String,
}

impl Docs {
    /// The pages of a library version (the newest without `version`) and their sections.
    pub fn outline(&self, id: &str, version: Option<&str>) -> Result<LibraryOutline, DocsError> {
        let (library, version) = self.locate(id, version)?;
        let index = self.index(&library.id, &version)?;
        let mut pages: Vec<PageOutline> = Vec::new();
        for chunk in &index.chunks {
            let page = match pages.iter_mut().rev().find(|p| p.source == chunk.source) {
                Some(page) => page,
                None => {
                    pages.push(PageOutline {
                        source: chunk.source.clone(),
                        sections: Vec::new(),
                        tokens: 0,
                    });
                    pages.last_mut().expect("just pushed")
                }
            };
            page.tokens += chunk.tokens;
            if page.sections.last() != Some(&chunk.section) {
                page.sections.push(chunk.section.clone());
            }
        }
        let more_pages = pages.len().saturating_sub(OUTLINE_PAGES);
        pages.truncate(OUTLINE_PAGES);
        Ok(LibraryOutline {
            id: library.id,
            name: library.name,
            description: library.description,
            version,
            versions: library.versions,
            pages,
            more_pages,
        })
    }

    /// One page of a library version (the newest without `version`), as `outline` names it.
    pub fn page(
        &self,
        id: &str,
        version: Option<&str>,
        source: &str,
    ) -> Result<DocsPage, DocsError> {
        let (library, version) = self.locate(id, version)?;
        let index = self.index(&library.id, &version)?;
        let chunks: Vec<&StoredChunk> =
            index.chunks.iter().filter(|c| c.source == source).collect();
        if chunks.is_empty() {
            let pages: std::collections::BTreeSet<&str> =
                index.chunks.iter().map(|c| c.source.as_str()).collect();
            let closest = devlens_core::suggest::closest(source, pages, 3);
            let hint = if closest.is_empty() {
                String::new()
            } else {
                format!(" Did you mean: {}?", closest.join(", "))
            };
            return Err(DocsError::InvalidInput(format!(
                "`{id}` (version {version}) has no page `{source}`.{hint} The library's outline lists its \
                 pages."
            )));
        }
        let mut sections: Vec<PageSection> = Vec::new();
        for chunk in &chunks {
            let text = chunk_markdown(chunk);
            match sections.last_mut() {
                Some(last) if last.section == chunk.section => {
                    last.content.push_str("\n\n");
                    last.content.push_str(&text);
                }
                _ => sections.push(PageSection {
                    section: chunk.section.clone(),
                    url: chunk.url.clone(),
                    content: text,
                }),
            }
        }
        let url = chunks[0]
            .url
            .split('#')
            .next()
            .unwrap_or_default()
            .to_string();
        Ok(DocsPage {
            id: library.id,
            version,
            source: source.to_string(),
            url,
            sections,
        })
    }
}

/// A chunk as markdown: code in a fence with its language.
fn chunk_markdown(chunk: &StoredChunk) -> String {
    match chunk.kind {
        ChunkKind::Text => chunk.content.trim().to_string(),
        ChunkKind::Code | ChunkKind::Example => {
            if chunk.content.trim_start().starts_with("```") {
                chunk.content.trim().to_string()
            } else {
                format!(
                    "```{}\n{}\n```",
                    chunk.language.as_deref().unwrap_or(""),
                    chunk.content.trim_end()
                )
            }
        }
    }
}

impl Report for LibraryOutline {
    fn to_text(&self) -> String {
        let mut s = format!("# {} ({}) {}\n", self.name, self.id, self.version);
        if !self.description.is_empty() {
            let _ = writeln!(s, "{}", self.description);
        }
        if self.versions.len() > 1 {
            let _ = writeln!(s, "versions: {}", self.versions.join(", "));
        }
        let _ = writeln!(s, "\n{} pages:", self.pages.len() + self.more_pages);
        for page in &self.pages {
            let _ = writeln!(s, "- {} (~{} tokens)", page.source, page.tokens);
            for section in page.sections.iter().take(12) {
                let last = section.rsplit(" > ").next().unwrap_or(section);
                let _ = writeln!(s, "  - {last}");
            }
            if page.sections.len() > 12 {
                let _ = writeln!(s, "  - … {} more sections", page.sections.len() - 12);
            }
        }
        if self.more_pages > 0 {
            let _ = writeln!(s, "… and {} more pages", self.more_pages);
        }
        s
    }
}

impl Report for DocsPage {
    fn to_text(&self) -> String {
        let mut s = format!("<!-- {} {} — {} -->\n", self.id, self.version, self.url);
        for section in &self.sections {
            let _ = write!(s, "\n## {}\n\n{}\n", section.section, section.content);
        }
        s
    }
}
