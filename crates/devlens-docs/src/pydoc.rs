//! Python modules as API reference pages: the module's docstring, then every public function and
//! class with a docstring as a section named after it (its `def` or `class` line as a code
//! block, the docstring as text), and a class's public methods with docstrings as subsections
//! (`Console.print`). Like [`crate::dts`], a reader of definitions, not a parser: it follows
//! indentation, brackets and triple quotes far enough to find them.

/// The Markdown page of one module, or `None` when it documents nothing. `module` titles it
/// (`rich.console`).
pub(crate) fn to_markdown(module: &str, text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = format!("# {module}\n\n");
    let mut documented = false;
    if let Some((doc, _)) = docstring_at(&lines, first_statement(&lines, 0)) {
        out.push_str(&doc);
        out.push_str("\n\n");
        documented = true;
    }
    let mut class: Option<(String, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        let stripped = line.trim_start();
        if class
            .as_ref()
            .is_some_and(|(_, at)| indent <= *at && !stripped.is_empty())
        {
            class = None;
        }
        let definition = ["async def ", "def ", "class "]
            .iter()
            .find(|k| stripped.starts_with(*k));
        let in_scope = indent == 0 || class.as_ref().is_some_and(|(_, at)| indent == at + 4);
        let (Some(keyword), true) = (definition, in_scope) else {
            i += 1;
            continue;
        };
        let name: String = stripped[keyword.len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (signature, body) = signature_lines(&lines, i);
        let is_class = *keyword == "class ";
        if is_class && indent == 0 {
            class = Some((name.clone(), indent));
        }
        if !name.starts_with('_')
            && let Some((doc, end)) = docstring_at(&lines, first_statement(&lines, body))
        {
            let (hashes, title) = match (&class, indent) {
                (Some((owner, _)), i) if i > 0 => ("###", format!("{owner}.{name}")),
                _ => ("##", name.clone()),
            };
            out.push_str(&format!(
                "{hashes} {title}\n\n```python\n{signature}\n```\n\n{doc}\n\n"
            ));
            documented = true;
            i = end.max(i + 1);
            continue;
        }
        i = body.max(i + 1);
    }
    documented.then_some(out)
}

/// The lines of a `def` or `class` header from line `start` through the `:` that ends it (at
/// bracket depth 0); and the line after it.
fn signature_lines(lines: &[&str], start: usize) -> (String, usize) {
    let mut depth = 0i32;
    let mut taken = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(start) {
        taken.push(line.trim_end());
        for c in line.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        if depth <= 0 && line.trim_end().ends_with(':') || taken.len() > 40 {
            let indent = lines[start].len() - lines[start].trim_start().len();
            let text = taken
                .iter()
                .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
                .collect::<Vec<_>>()
                .join("\n");
            return (text, i + 1);
        }
    }
    (lines[start].trim().to_string(), start + 1)
}

/// The first line at or after `from` that holds code (not blank, not a comment).
fn first_statement(lines: &[&str], from: usize) -> usize {
    let mut i = from;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if !t.is_empty() && !t.starts_with('#') {
            return i;
        }
        i += 1;
    }
    lines.len()
}

/// The triple-quoted string starting at line `at`, dedented, and the line after it.
fn docstring_at(lines: &[&str], at: usize) -> Option<(String, usize)> {
    let first = lines.get(at)?.trim_start();
    let body = first.trim_start_matches(['r', 'R', 'u', 'U']);
    let quote = ["\"\"\"", "'''"]
        .into_iter()
        .find(|q| body.starts_with(q))?;
    let opened = &body[3..];
    if let Some(end) = opened.find(quote) {
        let text = opened[..end].trim().to_string();
        return (!text.is_empty()).then_some((text, at + 1));
    }
    let mut collected = vec![opened.trim_end().to_string()];
    for (i, line) in lines.iter().enumerate().skip(at + 1) {
        if let Some(end) = line.find(quote) {
            collected.push(line[..end].to_string());
            let text = dedent(&collected);
            return (!text.is_empty()).then_some((text, i + 1));
        }
        collected.push((*line).to_string());
        if collected.len() > 400 {
            break;
        }
    }
    None
}

/// Docstring lines without the indentation they share (the first line aside, as PEP 257 does).
fn dedent(lines: &[String]) -> String {
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = vec![lines[0].trim()];
    out.extend(
        lines
            .iter()
            .skip(1)
            .map(|l| l.get(indent..).unwrap_or(l.trim_start()).trim_end()),
    );
    out.join("\n").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = r#""""Render rich text in the terminal."""

import os

__all__ = ["Console", "print_json"]


def print_json(
    json: str,
    *,
    indent: int = 2,
) -> None:
    """Pretty prints JSON.

    Args:
        json (str): A string of JSON.
        indent (int): Spaces to indent with.
    """
    print(json)


def _private():
    """Not shown."""


class Console:
    """A high level console interface.

    Example:
        >>> console = Console()
    """

    def __init__(self, width=None):
        """Not a section: a dunder."""

    def print(self, *objects, sep=" ") -> None:
        '''Print to the console.'''
        nested = """not a docstring"""

    def rule(self):
        return None


def undocumented():
    pass
"#;

    #[test]
    fn public_definitions_with_docstrings_become_sections() {
        let page = to_markdown("rich.console", MODULE).unwrap();
        assert!(page.starts_with("# rich.console\n\nRender rich text in the terminal.\n\n## print_json\n\n```python\ndef print_json(\n    json: str,\n    *,\n    indent: int = 2,\n) -> None:\n```\n\nPretty prints JSON.\n\nArgs:\n    json (str): A string of JSON."), "{page}");
        assert!(
            page.contains(
                "## Console\n\n```python\nclass Console:\n```\n\nA high level console interface."
            ),
            "{page}"
        );
        assert!(page.contains("### Console.print\n\n```python\ndef print(self, *objects, sep=\" \") -> None:\n```\n\nPrint to the console."), "{page}");
        for absent in [
            "_private",
            "__init__",
            "rule",
            "undocumented",
            "not a docstring",
        ] {
            assert!(!page.contains(absent), "{absent}: {page}");
        }
    }

    #[test]
    fn nothing_documented_no_page_and_broken_input_is_survived() {
        assert_eq!(to_markdown("m", "x = 1\n"), None);
        for broken in [
            "def f(:\n",
            "\"\"\"never closed\n",
            "class A:\n    def b(\n",
            "",
        ] {
            let _ = to_markdown("m", broken);
        }
    }
}
