//! Markdown and MDX through pulldown-cmark (CommonMark plus tables and heading ids).
//!
//! MDX is read as Markdown after dropping what only MDX has at the top level (`import`/`export`
//! lines); JSX elements arrive as HTML and are skipped like HTML comments. YAML/TOML front matter
//! is dropped, except its `title`, which becomes the page title when the page has no `#` heading.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::blocks::{Block, slug};

pub(crate) fn parse(text: &str) -> Vec<Block> {
    let (front_title, body) = split_front_matter(text);
    let body = drop_mdx_statements(body);
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let mut blocks = Vec::new();
    let mut text_buf = String::new();
    // (level, text so far, explicit id)
    let mut heading: Option<(u8, String, Option<String>)> = None;
    let mut code: Option<(Option<String>, String)> = None;
    let mut list_depth = 0usize;

    let flush = |buf: &mut String, blocks: &mut Vec<Block>| {
        let t = buf.trim();
        if !t.is_empty() {
            blocks.push(Block::Text(t.to_string()));
        }
        buf.clear();
    };

    for event in Parser::new_ext(&body, options) {
        if let Some((_, code_text)) = code.as_mut() {
            match event {
                Event::Text(t) => code_text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let (language, code_text) = code.take().unwrap_or_default();
                    let code_text = code_text.trim_end_matches('\n').to_string();
                    if !code_text.trim().is_empty() {
                        blocks.push(Block::Code {
                            language,
                            code: code_text,
                        });
                    }
                }
                _ => {}
            }
            continue;
        }
        if let Some((_, heading_text, _)) = heading.as_mut() {
            match event {
                Event::Text(t) | Event::Code(t) => heading_text.push_str(&t),
                Event::SoftBreak | Event::HardBreak => heading_text.push(' '),
                Event::End(TagEnd::Heading(_)) => {
                    let (level, text, id) = heading.take().unwrap_or_default();
                    let text = text.trim().to_string();
                    if !text.is_empty() {
                        let anchor = id.unwrap_or_else(|| slug(&text));
                        blocks.push(Block::Heading {
                            level,
                            text,
                            anchor,
                        });
                    }
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                flush(&mut text_buf, &mut blocks);
                heading = Some((
                    level_number(level),
                    String::new(),
                    id.map(|i| i.to_string()),
                ));
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                flush(&mut text_buf, &mut blocks);
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .next()
                        .filter(|l| !l.is_empty())
                        .map(str::to_string),
                    CodeBlockKind::Indented => None,
                };
                code = Some((language, String::new()));
            }
            Event::Start(Tag::Item) => {
                if !text_buf.is_empty() && !text_buf.ends_with('\n') {
                    text_buf.push('\n');
                }
                text_buf.push_str(&"  ".repeat(list_depth.saturating_sub(1)));
                text_buf.push_str("- ");
            }
            Event::Start(Tag::List(_)) => list_depth += 1,
            Event::End(TagEnd::List(_)) => {
                list_depth = list_depth.saturating_sub(1);
                if list_depth == 0 {
                    flush(&mut text_buf, &mut blocks);
                }
            }
            Event::End(TagEnd::Paragraph) => {
                if list_depth == 0 {
                    flush(&mut text_buf, &mut blocks);
                } else {
                    text_buf.push('\n');
                }
            }
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => {
                text_buf.push('\n');
            }
            Event::End(TagEnd::TableCell) => text_buf.push_str(" | "),
            Event::End(TagEnd::Table) | Event::End(TagEnd::BlockQuote(_)) => {
                flush(&mut text_buf, &mut blocks);
            }
            Event::Text(t) => text_buf.push_str(&t),
            Event::Code(t) => {
                text_buf.push('`');
                text_buf.push_str(&t);
                text_buf.push('`');
            }
            Event::SoftBreak => text_buf.push(' '),
            Event::HardBreak => text_buf.push('\n'),
            // HTML blocks, comments and MDX/JSX elements: markup, not prose.
            _ => {}
        }
    }
    flush(&mut text_buf, &mut blocks);

    if let Some(title) = front_title
        && !blocks
            .iter()
            .any(|b| matches!(b, Block::Heading { level: 1, .. }))
    {
        blocks.insert(
            0,
            Block::Heading {
                level: 1,
                anchor: slug(&title),
                text: title,
            },
        );
    }
    blocks
}

fn level_number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Splits off `---` YAML (or `+++` TOML) front matter, returning its `title` and the rest.
fn split_front_matter(text: &str) -> (Option<String>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for fence in ["---", "+++"] {
        let Some(rest) = text.strip_prefix(fence) else {
            continue;
        };
        let Some(rest) = rest
            .strip_prefix('\n')
            .or_else(|| rest.strip_prefix("\r\n"))
        else {
            continue;
        };
        let close = format!("\n{fence}");
        if let Some(end) = rest.find(&close) {
            let matter = &rest[..end];
            let after = &rest[end + close.len()..];
            let title = matter.lines().find_map(|line| {
                let value = line
                    .strip_prefix("title:")
                    .or_else(|| line.strip_prefix("title ="))?;
                let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
                (!value.is_empty()).then(|| value.to_string())
            });
            return (title, after);
        }
    }
    (None, text)
}

/// Blanks MDX `import`/`export` lines outside code fences.
fn drop_mdx_statements(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        let mdx_statement = !in_fence
            && !line.starts_with(' ')
            && (line.starts_with("import ") || line.starts_with("export "));
        if !mdx_statement {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_prose_and_fenced_code() {
        let md = "---\ntitle: Ignored\n---\n# Guide\n\nIntro with `code` and a [link](x).\n\n\
                  ## Install {#setup}\n\n- one\n- two\n\n```bash title=x\nnpm i x\n```\n\n\
                  <Note>jsx</Note>\n\n    indented\n";
        let blocks = parse(md);
        assert_eq!(
            blocks[0],
            Block::Heading {
                level: 1,
                text: "Guide".into(),
                anchor: "guide".into()
            }
        );
        assert_eq!(
            blocks[1],
            Block::Text("Intro with `code` and a link.".into())
        );
        assert_eq!(
            blocks[2],
            Block::Heading {
                level: 2,
                text: "Install".into(),
                anchor: "setup".into()
            }
        );
        assert_eq!(blocks[3], Block::Text("- one\n- two".into()));
        assert_eq!(
            blocks[4],
            Block::Code {
                language: Some("bash".into()),
                code: "npm i x".into()
            }
        );
        // Inline JSX keeps its text: `<Note>` wrappers hold prose.
        assert_eq!(blocks[5], Block::Text("jsx".into()));
        assert_eq!(
            blocks[6],
            Block::Code {
                language: None,
                code: "indented".into()
            }
        );
        assert_eq!(blocks.len(), 7);
    }

    #[test]
    fn mdx_statements_dropped_and_front_matter_title_used() {
        let mdx = "---\ntitle: \"Hooks\"\n---\nimport X from './x'\n\nSome text.\n\n\
                   ```js\nimport React from 'react'\n```\n";
        let blocks = parse(mdx);
        assert_eq!(
            blocks[0],
            Block::Heading {
                level: 1,
                text: "Hooks".into(),
                anchor: "hooks".into()
            }
        );
        assert_eq!(blocks[1], Block::Text("Some text.".into()));
        assert!(matches!(&blocks[2], Block::Code { code, .. } if code.contains("import React")));
    }
}
