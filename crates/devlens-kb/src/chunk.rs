//! Cutting a solution into the pieces that get embedded.
//!
//! Embedding only the first 1,000 characters (as simpler knowledge bases do) would leave
//! whatever a long write-up says further down unfindable by meaning. Here every part is embedded: the text is cut at
//! paragraph boundaries (a fenced code block stays one piece) into chunks of about
//! [`TARGET_CHARS`], and each chunk is embedded with the title in front, so a chunk about
//! "the cleanup function" still knows it belongs to "React effects". A solution scores as its
//! best chunk.

use std::ops::Range;

/// About 180 word pieces with the title: inside the 256 all-MiniLM-L6-v2 reads, and close to the
/// 128 it was trained on, where it is sharpest. (Measured with `devlens kb eval`; see the README.)
pub const TARGET_CHARS: usize = 700;

/// Byte ranges of `text`, in order, each about `target` bytes or less (a single line longer than
/// that is cut at a sentence or, failing that, a character boundary). Whitespace between chunks
/// is left out.
pub fn chunk_ranges(text: &str, target: usize) -> Vec<Range<usize>> {
    let target = target.max(64);
    let mut units: Vec<Range<usize>> = Vec::new();
    for block in blocks(text) {
        if block.len() <= target {
            units.push(block);
        } else {
            split_long(text, block, target, &mut units);
        }
    }
    let mut chunks: Vec<Range<usize>> = Vec::new();
    for unit in units {
        match chunks.last_mut() {
            Some(last) if unit.end - last.start <= target => last.end = unit.end,
            _ => chunks.push(unit),
        }
    }
    chunks
}

/// Paragraphs (separated by blank lines), with a fenced code block kept whole.
fn blocks(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut end = 0;
    let mut in_fence = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if trimmed.is_empty() && !in_fence {
            if let Some(s) = start.take() {
                out.push(s..end);
            }
            continue;
        }
        start.get_or_insert(line_start + (line.len() - line.trim_start().len()));
        end = line_start + line.trim_end().len();
    }
    if let Some(s) = start {
        out.push(s..end);
    }
    out
}

/// Cuts an over-long block at line ends, then sentence ends, then character boundaries.
fn split_long(text: &str, block: Range<usize>, target: usize, out: &mut Vec<Range<usize>>) {
    let mut start = block.start;
    while block.end - start > target {
        let window = &text[start..floor_char(text, start + target)];
        let cut = window
            .rfind('\n')
            .filter(|&i| i > target / 3)
            .map(|i| i + 1)
            .or_else(|| {
                window
                    .rfind(". ")
                    .filter(|&i| i > target / 3)
                    .map(|i| i + 2)
            })
            .or_else(|| window.rfind(' ').filter(|&i| i > target / 3).map(|i| i + 1))
            .unwrap_or(window.len())
            .max(1);
        let end = floor_char(text, start + cut).max(next_char(text, start));
        let piece = start..trim_end_at(text, start, end);
        if !piece.is_empty() {
            out.push(piece);
        }
        start = skip_space(text, end);
    }
    if start < block.end {
        out.push(start..block.end);
    }
}

fn floor_char(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn next_char(text: &str, i: usize) -> usize {
    text[i..].chars().next().map_or(i, |c| i + c.len_utf8())
}

fn trim_end_at(text: &str, start: usize, end: usize) -> usize {
    start + text[start..end].trim_end().len()
}

fn skip_space(text: &str, i: usize) -> usize {
    i + (text[i..].len() - text[i..].trim_start().len())
}

/// The text embedded for one chunk: the title (and tags) give every chunk its context.
pub fn embedding_text(title: &str, tags: &[String], chunk: &str) -> String {
    if tags.is_empty() {
        format!("{title}\n{chunk}")
    } else {
        format!("{title} ({})\n{chunk}", tags.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str, target: usize) -> Vec<&str> {
        chunk_ranges(text, target)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn paragraphs_pack_into_chunks_and_code_fences_stay_whole() {
        let text = "First paragraph, a few words long.\n\nSecond paragraph, as long.\n\n\
                    ```js\nconst a = 1;\n\nconst b = 2;\n```\n\nLast.";
        assert_eq!(pieces(text, 1000), vec![text]);
        let small = pieces(text, 64);
        assert!(
            small
                .iter()
                .any(|p| p.contains("const a = 1;\n\nconst b = 2;")),
            "{small:?}"
        );
        assert_eq!(
            small.first(),
            Some(&"First paragraph, a few words long.\n\nSecond paragraph, as long.")
        );
    }

    #[test]
    fn everything_is_covered_and_no_chunk_is_much_over_target() {
        let para = "Word ".repeat(60);
        let text = format!("{para}\n\n{}\n\n{para}", "ü".repeat(900));
        let ranges = chunk_ranges(&text, 200);
        let letters = |s: &str| s.chars().filter(|c| !c.is_whitespace()).count();
        let covered: usize = ranges.iter().map(|r| letters(&text[r.clone()])).sum();
        assert_eq!(covered, letters(&text));
        for r in &ranges {
            assert!(r.len() <= 200, "{}", r.len());
            assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
        }
        assert!(chunk_ranges("", 100).is_empty());
        assert!(chunk_ranges("  \n\n ", 100).is_empty());
    }
}
