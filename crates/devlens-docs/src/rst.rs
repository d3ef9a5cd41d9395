//! A pragmatic reStructuredText reader: what chunking needs, not a full docutils.
//!
//! Sections are a title line under- (and optionally over-) lined with one punctuation character;
//! levels follow the order in which the styles first appear, as in docutils. Literal blocks
//! (a paragraph ending in `::`, `.. code-block:: lang`, `.. code:: lang`, `.. sourcecode::`) become
//! code; `.. _label:` targets name the next section's anchor; other directives keep their body as
//! prose, comments are dropped, and inline roles (``:func:`x` ``) are reduced to their text.

use crate::blocks::{Block, slug};

const ADORNMENTS: &str = "=-~^\"'`#*+_.:<>";

pub(crate) fn parse(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut pending_anchor: Option<String> = None;
    let mut paragraph: Vec<String> = Vec::new();
    // Set by a paragraph ending in `::`: the next indented block is code.
    let mut literal_next = false;
    let mut i = 0;

    let flush = |paragraph: &mut Vec<String>, blocks: &mut Vec<Block>| {
        if !paragraph.is_empty() {
            let text = inline(&paragraph.join("\n"));
            if !text.trim().is_empty() {
                blocks.push(Block::Text(text.trim().to_string()));
            }
            paragraph.clear();
        }
    };

    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();

        // Section title: [overline] title underline.
        if let Some((title, style, consumed)) = section_at(&lines, i) {
            flush(&mut paragraph, &mut blocks);
            let level = match styles.iter().position(|s| *s == style) {
                Some(p) => p + 1,
                None => {
                    styles.push(style);
                    styles.len()
                }
            };
            let title = inline(&title);
            let anchor = pending_anchor.take().unwrap_or_else(|| slug(&title));
            blocks.push(Block::Heading {
                level: level.min(6) as u8,
                text: title,
                anchor,
            });
            i += consumed;
            literal_next = false;
            continue;
        }

        if trimmed.is_empty() {
            flush(&mut paragraph, &mut blocks);
            i += 1;
            continue;
        }

        if let Some(rest) = trimmed.strip_prefix(".. ") {
            flush(&mut paragraph, &mut blocks);
            if let Some(label) = rest.strip_prefix('_').and_then(|l| l.strip_suffix(':')) {
                pending_anchor = Some(slug(label));
                i += 1;
                continue;
            }
            let indent = indent_of(line);
            let (body, next) = indented_block(&lines, i + 1, indent);
            if let Some((name, argument)) = rest.split_once("::") {
                let name = name.trim();
                let argument = argument.trim();
                if matches!(
                    name,
                    "code-block" | "code" | "sourcecode" | "literalinclude"
                ) {
                    let code = strip_options(&body);
                    if !code.trim().is_empty() && name != "literalinclude" {
                        blocks.push(Block::Code {
                            language: (!argument.is_empty()).then(|| argument.to_string()),
                            code,
                        });
                    }
                } else if !matches!(
                    name,
                    "toctree" | "image" | "figure" | "raw" | "include" | "highlight" | "index"
                ) {
                    // note, warning, versionadded, function signatures, …: keep what they say.
                    let mut text = String::new();
                    if !argument.is_empty() {
                        text.push_str(argument);
                        text.push('\n');
                    }
                    text.push_str(&strip_options(&body));
                    let text = inline(text.trim());
                    if !text.is_empty() {
                        blocks.push(Block::Text(text));
                    }
                }
            }
            // Anything else after `.. ` is a comment.
            i = next;
            continue;
        }

        if literal_next && indent_of(line) > 0 {
            let (body, next) = indented_block(&lines, i, 0);
            if !body.trim().is_empty() {
                blocks.push(Block::Code {
                    language: None,
                    code: body,
                });
            }
            literal_next = false;
            i = next;
            continue;
        }

        paragraph.push(trimmed.to_string());
        if trimmed.ends_with("::") {
            // "Example::" keeps "Example:"; a lone "::" disappears.
            if let Some(last) = paragraph.last_mut() {
                let kept = last.trim_end_matches(':').to_string();
                *last = if kept.is_empty() {
                    kept
                } else if last.ends_with(" ::") {
                    kept.trim_end().to_string()
                } else {
                    format!("{kept}:")
                };
            }
            flush(&mut paragraph, &mut blocks);
            literal_next = true;
        } else {
            literal_next = false;
        }
        i += 1;
    }
    flush(&mut paragraph, &mut blocks);
    blocks
}

/// A section title at line `i`: (title, style, lines consumed).
fn section_at(lines: &[&str], i: usize) -> Option<(String, (char, bool), usize)> {
    let line = lines[i];
    // Overlined: adornment, title, same adornment.
    if let Some(c) = adornment(line)
        && let (Some(title), Some(under)) = (lines.get(i + 1), lines.get(i + 2))
        && adornment(under) == Some(c)
        && !title.trim().is_empty()
        && adornment(title).is_none()
    {
        return Some((title.trim().to_string(), (c, true), 3));
    }
    let under = lines.get(i + 1)?;
    let c = adornment(under)?;
    let title = line.trim_end();
    if title.is_empty() || line.starts_with(' ') || adornment(line).is_some() {
        return None;
    }
    // The underline must be at least as long as the title (docutils warns otherwise; many
    // real files are off by a character or two, so allow a little slack).
    if under.trim_end().chars().count() + 2 < title.chars().count() {
        return None;
    }
    Some((title.to_string(), (c, false), 2))
}

/// The character of an adornment line (`=====`), if `line` is one.
fn adornment(line: &str) -> Option<char> {
    let line = line.trim_end();
    let first = line.chars().next()?;
    (line.chars().count() >= 3 && ADORNMENTS.contains(first) && line.chars().all(|c| c == first))
        .then_some(first)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The lines from `start` indented deeper than `indent` (blank lines included while the block
/// goes on), de-indented; and the index of the first line after it.
fn indented_block(lines: &[&str], start: usize, indent: usize) -> (String, usize) {
    let mut end = start;
    let mut last_content = start;
    while end < lines.len() {
        let line = lines[end];
        if line.trim().is_empty() {
            end += 1;
            continue;
        }
        if indent_of(line) <= indent {
            break;
        }
        end += 1;
        last_content = end;
    }
    let body: Vec<&str> = lines[start..last_content.max(start)].to_vec();
    let common = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l))
        .min()
        .unwrap_or(0);
    let text = body
        .iter()
        .map(|l| l.get(common..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    (text.trim_matches('\n').to_string(), last_content.max(start))
}

/// Drops a directive's leading `:option: value` lines.
fn strip_options(body: &str) -> String {
    let mut lines = body.lines().peekable();
    while let Some(line) = lines.peek() {
        let t = line.trim();
        if t.starts_with(':') && t[1..].contains(':') {
            lines.next();
        } else {
            break;
        }
    }
    lines
        .collect::<Vec<_>>()
        .join("\n")
        .trim_matches('\n')
        .to_string()
}

/// Inline markup to plain text: roles (`:func:`x``) and interpreted text to their text,
/// ``literals`` to `literals`, `link <url>`_ to its text.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('`') {
        let (before, after) = rest.split_at(pos);
        // A role name right before the backtick: `:name:`.
        let before = match before.strip_suffix(':') {
            Some(b) => match b.rfind(':') {
                Some(start)
                    if b[start + 1..]
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == ':' || c == '-') =>
                {
                    &b[..start]
                }
                _ => before,
            },
            None => before,
        };
        out.push_str(before);
        let double = after.starts_with("``");
        let open = if double { 2 } else { 1 };
        let close_pat = if double { "``" } else { "`" };
        match after[open..].find(close_pat) {
            Some(end) => {
                let inner = &after[open..open + end];
                let inner = match (inner.rfind('<'), inner.ends_with('>')) {
                    (Some(lt), true) if lt > 0 => inner[..lt].trim_end(),
                    _ => inner,
                };
                out.push('`');
                out.push_str(inner.trim_start_matches('~'));
                out.push('`');
                let mut tail = &after[open + end + close_pat.len()..];
                tail = tail.strip_prefix("__").unwrap_or(tail);
                tail = tail.strip_prefix('_').unwrap_or(tail);
                rest = tail;
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
=====
Guide
=====

.. _install:

Installing
==========

Run this::

    pip install x
    x --version

Usage
-----

Call :func:`x.run` with ``debug=True``, see `docs <https://x>`_.

.. code-block:: python
   :linenos:

   import x
   x.run()

.. note::
   Needs Python 3.

.. a comment
   that spans lines

Back to text.
";

    #[test]
    fn sections_literals_directives() {
        let blocks = parse(SAMPLE);
        let headings: Vec<(u8, &str, &str)> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Heading {
                    level,
                    text,
                    anchor,
                } => Some((*level, text.as_str(), anchor.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            headings,
            vec![
                (1, "Guide", "guide"),
                (2, "Installing", "install"),
                (3, "Usage", "usage")
            ]
        );
        assert!(blocks.contains(&Block::Text("Run this:".into())));
        assert!(blocks.contains(&Block::Code {
            language: None,
            code: "pip install x\nx --version".into()
        }));
        assert!(blocks.contains(&Block::Text(
            "Call `x.run` with `debug=True`, see `docs`.".into()
        )));
        assert!(blocks.contains(&Block::Code {
            language: Some("python".into()),
            code: "import x\nx.run()".into()
        }));
        assert!(blocks.contains(&Block::Text("Needs Python 3.".into())));
        assert!(
            !blocks
                .iter()
                .any(|b| matches!(b, Block::Text(t) if t.contains("comment")))
        );
        assert_eq!(blocks.last(), Some(&Block::Text("Back to text.".into())));
    }

    #[test]
    fn odd_input_does_not_panic() {
        for text in [
            "",
            "::",
            "====",
            "a\n==",
            "`unclosed",
            ":role:`x",
            ".. code-block::",
            "é\n===",
        ] {
            let _ = parse(text);
        }
    }
}
