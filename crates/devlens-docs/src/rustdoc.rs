//! Rust sources as API reference pages: a file's `//!` docs open its page, and every public item
//! with `///` docs becomes a section named after it — `fn`, `struct`, `enum`, `trait`, `type`,
//! `const`, `static`, `mod`, `macro_rules!` — its declaration line as a code block, its docs as
//! text (their code blocks as examples); public methods in an `impl` block are subsections
//! (`Engine.encode`). Like [`crate::dts`], a reader of items, not a parser.

const ITEMS: [&str; 10] = [
    "fn ",
    "struct ",
    "enum ",
    "trait ",
    "type ",
    "const ",
    "static ",
    "mod ",
    "union ",
    "macro_rules! ",
];

/// The Markdown page of one source file, or `None` when it documents nothing. `module` titles
/// it (`base64::engine`).
pub(crate) fn to_markdown(module: &str, text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = format!("# {module}\n\n");
    let mut documented = false;
    let inner: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_start())
        .take_while(|l| l.starts_with("//!") || l.is_empty() || l.starts_with("#!["))
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let inner = inner.join("\n");
    if !inner.trim().is_empty() {
        out.push_str(inner.trim());
        out.push_str("\n\n");
        documented = true;
    }
    // The type of the `impl` block being read, and its indentation.
    let mut impl_of: Option<(String, usize)> = None;
    let mut doc: Vec<&str> = Vec::new();
    let mut exported_macro = false;
    for (i, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let stripped = line.trim_start();
        if let Some(text) = stripped.strip_prefix("///") {
            doc.push(text.strip_prefix(' ').unwrap_or(text));
            continue;
        }
        if stripped.starts_with("#[") {
            exported_macro |= stripped.starts_with("#[macro_export");
            continue;
        }
        if impl_of
            .as_ref()
            .is_some_and(|(_, at)| indent <= *at && stripped.starts_with('}'))
        {
            impl_of = None;
        }
        if indent == 0 && (stripped.starts_with("impl ") || stripped.starts_with("impl<")) {
            impl_of = impl_target(stripped).map(|t| (t, indent));
            doc.clear();
            continue;
        }
        let public = stripped.starts_with("pub ") && !stripped.starts_with("pub(");
        let item = strip_qualifiers(stripped.strip_prefix("pub ").unwrap_or(stripped));
        let kind = ITEMS.iter().find(|k| item.starts_with(*k));
        let in_scope = indent == 0 || impl_of.as_ref().is_some_and(|(_, at)| indent == at + 4);
        if let (Some(kind), true) = (kind, in_scope)
            && (public || (*kind == "macro_rules! " && exported_macro))
            && !doc.is_empty()
        {
            let name: String = item[kind.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let (hashes, title) = match (&impl_of, indent) {
                (Some((owner, _)), i) if i > 0 => ("###", format!("{owner}.{name}")),
                _ => ("##", name),
            };
            out.push_str(&format!(
                "{hashes} {title}\n\n```rust\n{}\n```\n\n{}\n\n",
                declaration(&lines, i),
                doc_text(&doc)
            ));
            documented = true;
        }
        if !stripped.is_empty() && !stripped.starts_with("//") {
            doc.clear();
            exported_macro = false;
        }
    }
    documented.then_some(out)
}

/// `async`, `unsafe`, `const`, `extern "C"` before an item's keyword.
fn strip_qualifiers(item: &str) -> &str {
    let mut rest = item;
    loop {
        let next = ["async ", "unsafe ", "const fn", "extern \"C\" ", "default "]
            .iter()
            .find(|q| rest.starts_with(*q));
        match next {
            Some(&"const fn") => return &rest[6..],
            Some(q) => rest = rest[q.len()..].trim_start(),
            None => return rest,
        }
    }
}

/// The type an `impl` line is for: `impl<T> Trait for Engine<T> {` → `Engine`.
fn impl_target(line: &str) -> Option<String> {
    let line = line.trim_end_matches('{').trim();
    let mut rest = line.strip_prefix("impl")?;
    if rest.starts_with('<') {
        let mut depth = 0;
        let end = rest.char_indices().find_map(|(i, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
        rest = &rest[end + 1..];
    }
    let target = rest.rsplit(" for ").next().unwrap_or(rest).trim();
    let name: String = target
        .trim_start_matches(['&', '*'])
        .rsplit("::")
        .next()
        .unwrap_or(target)
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// An item's declaration: its lines up to the `{` or `;` that ends the header, or `where`.
fn declaration(lines: &[&str], start: usize) -> String {
    let indent = lines[start].len() - lines[start].trim_start().len();
    let mut out = Vec::new();
    for line in lines.iter().skip(start).take(20) {
        let text = line.get(indent..).unwrap_or(line.trim_start()).trim_end();
        if let Some(head) = text.strip_suffix('{') {
            out.push(head.trim_end());
            break;
        }
        out.push(text);
        if text.ends_with(';') || text.trim_start().starts_with("where") {
            break;
        }
    }
    out.join("\n")
}

/// `///` lines as Markdown: rustdoc's code blocks are Rust unless they say otherwise, and
/// their `# hidden` setup lines are left out.
fn doc_text(lines: &[&str]) -> String {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in lines {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            if !in_code {
                let lang = trimmed.trim_start_matches('`').trim();
                let plain = lang.is_empty()
                    || lang.split(',').all(|t| {
                        matches!(
                            t.trim(),
                            "rust"
                                | "no_run"
                                | "ignore"
                                | "should_panic"
                                | "compile_fail"
                                | "edition2018"
                                | "edition2021"
                                | "edition2024"
                        )
                    });
                out.push(if plain {
                    "Example:\n\n```rust".to_string()
                } else {
                    line.to_string()
                });
            } else {
                out.push("```".to_string());
            }
            in_code = !in_code;
            continue;
        }
        if in_code && (trimmed == "#" || trimmed.starts_with("# ")) {
            continue;
        }
        out.push(line.to_string());
    }
    out.join("\n").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"//! Correct, fast base64.
//!
//! Pick an engine and encode.

/// Encodes bytes as standard base64.
///
/// ```
/// # use base64::encode;
/// assert_eq!(encode(b"hi"), "aGk=");
/// ```
#[inline]
pub fn encode<T: AsRef<[u8]>>(input: T) -> String {
    todo!()
}

/// Not public, not shown.
fn helper() {}

/// An engine.
pub struct Engine {
    config: Config,
}

impl<'a> Engine {
    /// Decodes `input`.
    pub fn decode(&self, input: &str) -> Result<Vec<u8>, DecodeError> {
        todo!()
    }

    fn private(&self) {}
}

/// A macro.
#[macro_export]
macro_rules! b64 {
    () => {};
}
"#;

    #[test]
    fn public_items_with_docs_become_sections() {
        let page = to_markdown("base64", SOURCE).unwrap();
        assert!(page.starts_with("# base64\n\nCorrect, fast base64.\n\nPick an engine and encode.\n\n## encode\n\n```rust\npub fn encode<T: AsRef<[u8]>>(input: T) -> String\n```\n\nEncodes bytes as standard base64.\n\nExample:\n\n```rust\nassert_eq!(encode(b\"hi\"), \"aGk=\");\n```"), "{page}");
        assert!(
            page.contains("## Engine\n\n```rust\npub struct Engine\n```\n\nAn engine."),
            "{page}"
        );
        assert!(page.contains("### Engine.decode\n\n```rust\npub fn decode(&self, input: &str) -> Result<Vec<u8>, DecodeError>\n```\n\nDecodes `input`."), "{page}");
        assert!(page.contains("## b64"), "{page}");
        for absent in ["helper", "private", "# use"] {
            assert!(!page.contains(absent), "{absent}: {page}");
        }
        assert_eq!(
            impl_target("impl<T: Config> Engine for GeneralPurpose<T> {"),
            Some("GeneralPurpose".into())
        );
        assert_eq!(to_markdown("m", "fn f() {}\n"), None);
    }
}
