//! TypeScript declaration files (`.d.ts`) as API reference pages: every declaration with a JSDoc
//! comment becomes a section named after its symbol — its signature as a code block, the
//! comment's text, its `@param`s and `@returns`, and its `@example`s as examples. Members of
//! an interface or class with their own comment become subsections (`Options > timeout`).
//!
//! The page is written as Markdown and read like any other page, so it chunks, ranks and
//! budgets as the rest of the docs do. It is a reader of declarations, not a TypeScript parser:
//! it follows brackets, strings and comments far enough to find where a declaration ends.

/// One documented declaration.
#[derive(Debug, Clone, PartialEq)]
struct Symbol {
    /// `format`, or `Options.timeout` for a member.
    name: String,
    signature: String,
    doc: String,
    /// Depth: 0 for a top-level declaration, 1 for a member.
    depth: usize,
}

/// The Markdown page of one declaration file, or `None` when it documents nothing.
/// `module` titles the page (`date-fns/format`).
pub(crate) fn to_markdown(module: &str, text: &str) -> Option<String> {
    let symbols = symbols(text);
    if symbols.is_empty() {
        return None;
    }
    let mut out = format!("# {module}\n\n");
    for symbol in symbols {
        let hashes = if symbol.depth == 0 { "##" } else { "###" };
        out.push_str(&format!("{hashes} {}\n\n", symbol.name));
        out.push_str(&format!("```ts\n{}\n```\n\n", symbol.signature));
        out.push_str(&render_doc(&symbol.doc));
        out.push('\n');
    }
    Some(out)
}

/// An open body: an interface, class or enum (its members are `Name.member` subsections) or a
/// namespace, module or `declare global` (its declarations are sections of their own, named
/// `Namespace.name`, or as written for a quoted module and `global`).
#[derive(Debug, Clone)]
struct Container {
    prefix: String,
    members_are_subsections: bool,
    /// The brace depth inside its body.
    depth: usize,
}

/// The documented declarations of `text`, in order.
fn symbols(text: &str) -> Vec<Symbol> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut containers: Vec<Container> = Vec::new();
    let mut depth = 0usize;
    let mut pending_doc: Option<String> = None;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("/**") {
            let end = rest.find("*/").map(|e| e + 2).unwrap_or(rest.len());
            pending_doc = Some(clean_comment(&rest[..end]));
            i += end;
            continue;
        }
        if rest.starts_with("/*") {
            i += rest.find("*/").map(|e| e + 2).unwrap_or(rest.len());
            continue;
        }
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        }
        let c = bytes[i];
        if c.is_ascii_whitespace() || c == b';' {
            i += 1;
            continue;
        }
        if c == b'}' {
            if containers.last().is_some_and(|open| open.depth == depth) {
                containers.pop();
            }
            depth = depth.saturating_sub(1);
            pending_doc = None;
            i += 1;
            continue;
        }
        // Where this declaration sits: at the top, directly in a container's body, or deeper
        // (an object type's fields: not symbols).
        let container = containers
            .last()
            .filter(|open| open.depth == depth)
            .cloned();
        let reachable = depth == 0 || container.is_some();
        let member = container
            .as_ref()
            .is_some_and(|c| c.members_are_subsections);
        let head_kind = declaration_kind(rest);
        let (statement, body_opens) = read_statement(rest, head_kind, member);
        let head = statement.trim_end_matches(['{', ';', ',']).trim();
        let doc = pending_doc.take();
        let name = reachable
            .then(|| symbol_name(head, head_kind, member))
            .flatten();
        let full_name = name.as_ref().map(|name| match &container {
            Some(open) if !open.prefix.is_empty() => format!("{}.{name}", open.prefix),
            _ => name.clone(),
        });
        let documented = doc
            .as_deref()
            .is_some_and(|d| !d.trim().is_empty() && !d.contains("@internal"));
        if documented && let Some(full_name) = &full_name {
            out.push(Symbol {
                name: full_name.clone(),
                signature: one_signature(statement.trim_end_matches(['{', ',']).trim()),
                doc: doc.unwrap_or_default(),
                depth: usize::from(member),
            });
        }
        if body_opens {
            depth += 1;
            if reachable && head_kind != Kind::Plain {
                let quoted_or_global = matches!(head_kind, Kind::Namespace)
                    && (head.contains(['"', '\'']) || strip_modifiers(head).starts_with("global"));
                containers.push(Container {
                    prefix: if quoted_or_global {
                        container.map(|c| c.prefix).unwrap_or_default()
                    } else {
                        full_name.unwrap_or_default()
                    },
                    members_are_subsections: head_kind == Kind::Type,
                    depth,
                });
            }
        }
        i += statement.len().max(1);
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// interface, class, enum: their members are subsections.
    Type,
    /// namespace, module, `declare global`: their declarations are sections.
    Namespace,
    /// function, type, const, let, var, or a member.
    Plain,
}

const MODIFIERS: [&str; 12] = [
    "export",
    "declare",
    "default",
    "abstract",
    "async",
    "readonly",
    "static",
    "public",
    "protected",
    "private",
    "override",
    "accessor",
];

fn strip_modifiers(head: &str) -> &str {
    let mut rest = head.trim_start();
    loop {
        let word = rest
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("");
        if MODIFIERS.contains(&word) && rest[word.len()..].starts_with(char::is_whitespace) {
            rest = rest[word.len()..].trim_start();
        } else {
            return rest;
        }
    }
}

fn declaration_kind(head: &str) -> Kind {
    let rest = strip_modifiers(head);
    let word = rest
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("");
    match word {
        "interface" | "class" | "enum" => Kind::Type,
        "namespace" | "module" | "global" => Kind::Namespace,
        _ => Kind::Plain,
    }
}

/// The symbol a declaration (or member) declares; `None` for what names nothing (imports,
/// re-exports, index signatures).
fn symbol_name(head: &str, kind: Kind, member: bool) -> Option<String> {
    let rest = strip_modifiers(head);
    let first = rest
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("");
    if matches!(first, "import" | "export" | "from") || rest.starts_with('[') {
        return None;
    }
    let rest = match first {
        "function" | "const" | "let" | "var" | "type" | "interface" | "class" | "namespace"
        | "module" | "enum" | "global" => rest[first.len()..].trim_start(),
        "get" | "set" if member => {
            let after = rest[first.len()..].trim_start();
            if after.starts_with(['(', ':', '?']) {
                rest
            } else {
                after
            }
        }
        _ => rest,
    };
    let rest = rest.trim_start_matches('*').trim_start();
    if member && rest.starts_with('(') {
        return Some("(call)".into());
    }
    if member && rest.starts_with("new") && rest[3..].trim_start().starts_with(['(', '<']) {
        return Some("new".into());
    }
    if let Some(quoted) = rest.strip_prefix(['"', '\'']) {
        let end = quoted.find(['"', '\''])?;
        return Some(quoted[..end].to_string());
    }
    if first == "global" && kind == Kind::Namespace {
        return Some("global".into());
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'))
        .collect();
    (!name.is_empty()).then_some(name)
}

/// A declaration's text on fewer lines: runs of whitespace inside it kept as written, but at
/// most 1,200 characters (a long overloaded type is cut with `…`).
fn one_signature(head: &str) -> String {
    let lines: Vec<&str> = head.lines().map(str::trim_end).collect();
    let joined = lines.join("\n");
    if joined.chars().count() > 1200 {
        let cut: String = joined.chars().take(1200).collect();
        format!("{cut} …")
    } else {
        joined
    }
}

/// The statement (or member) at the start of `text`, through its `;` (or `,` in an enum), or
/// through the `{` that opens the body of an interface, class, enum or namespace; whether a body
/// opens. Brackets, strings and comments are followed so a `;` inside a type does not end it;
/// a `member` written without `;` ends with its line.
fn read_statement(text: &str, kind: Kind, member: bool) -> (&str, bool) {
    let bytes = text.as_bytes();
    let mut stack: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' | b'\'' | b'`' => {
                i += 1;
                while i < bytes.len() && bytes[i] != c {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'/' if text[i..].starts_with("/*") => {
                i += text[i..]
                    .find("*/")
                    .map(|e| e + 1)
                    .unwrap_or(text.len() - i);
            }
            b'/' if text[i..].starts_with("//") => {
                i += text[i..].find('\n').unwrap_or(text.len() - i);
                continue;
            }
            b'{' if stack.is_empty() && kind != Kind::Plain => return (&text[..=i], true),
            b'(' | b'[' | b'{' => stack.push(c),
            b')' | b']' | b'}' if !stack.is_empty() => {
                stack.pop();
            }
            b'}' => return (&text[..i], false),
            b';' if stack.is_empty() => return (&text[..=i], false),
            b'\n' if stack.is_empty() && ends_line_statement(&text[..i], &text[i..], member) => {
                return (&text[..i], false);
            }
            _ => {}
        }
        i += 1;
    }
    (text, false)
}

/// Whether a line break ends the statement before it: an enum member's `,`, or a member written
/// without `;` whose next line does not go on with it (`| B`, `& C`, `=> D`).
fn ends_line_statement(so_far: &str, after: &str, member: bool) -> bool {
    let last = so_far.trim_end();
    if last.ends_with(',') && !last.contains('(') {
        return true;
    }
    if !member || last.is_empty() {
        return false;
    }
    let continues = last.ends_with(['|', '&', '=', ':', ',', '(', '<', '?', '.'])
        || last.ends_with("=>")
        || last.ends_with("extends");
    let next = after.trim_start();
    let next_continues =
        next.starts_with(['|', '&', '.', '=', '?', ':', '<', '>', '{', '(', ')', ']']);
    !continues && !next_continues
}

/// The text of a `/** … */` comment without its frame and leading `*`s.
fn clean_comment(comment: &str) -> String {
    let inner = comment.trim_start_matches("/**").trim_end_matches("*/");
    inner
        .lines()
        .map(|line| {
            let t = line.trim_start();
            let t = t.strip_prefix('*').unwrap_or(t);
            t.strip_prefix(' ').unwrap_or(t).trim_end()
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// A JSDoc comment as Markdown: its text, then parameters, return value, defaults, deprecation
/// and examples. `{@link X}` becomes `X`.
fn render_doc(doc: &str) -> String {
    let doc = unlink(doc);
    let mut text = String::new();
    let mut params: Vec<String> = Vec::new();
    let mut extra: Vec<String> = Vec::new();
    let mut examples: Vec<String> = Vec::new();
    // The tag being read and its text so far.
    let mut tag: Option<(String, String)> = None;
    let flush = |tag: Option<(String, String)>,
                 params: &mut Vec<String>,
                 extra: &mut Vec<String>,
                 examples: &mut Vec<String>| {
        let Some((name, body)) = tag else { return };
        let body = body.trim().to_string();
        match name.as_str() {
            "param" | "arg" | "argument" => {
                let body = body.trim_start();
                // `{Type} name - text` or `name text`
                let body = if body.starts_with('{') {
                    body.find('}')
                        .map(|e| body[e + 1..].trim_start())
                        .unwrap_or(body)
                } else {
                    body
                };
                let (name, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
                let rest = rest.trim_start().trim_start_matches('-').trim();
                params.push(format!("- `{}` — {rest}", name.trim_matches(['[', ']'])));
            }
            "returns" | "return" => extra.push(format!("Returns: {}", strip_type(&body))),
            "throws" | "throw" => extra.push(format!("Throws: {}", strip_type(&body))),
            "default" | "defaultValue" => extra.push(format!("Default: `{body}`")),
            "deprecated" => extra.push(format!("Deprecated. {body}").trim().to_string()),
            "see" => extra.push(format!("See: {body}")),
            "since" => extra.push(format!("Since: {body}")),
            "example" => {
                if body.contains("```") {
                    examples.push(body);
                } else if !body.is_empty() {
                    examples.push(format!("```ts\n{body}\n```"));
                }
            }
            _ => {}
        }
    };
    for line in doc.lines() {
        let trimmed = line.trim_start();
        if let Some(tagged) = trimmed.strip_prefix('@')
            && tagged.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            flush(tag.take(), &mut params, &mut extra, &mut examples);
            let (name, rest) = tagged
                .split_once(char::is_whitespace)
                .unwrap_or((tagged, ""));
            // date-fns writes its text under `@summary` and `@description`: prose, not tags.
            if matches!(name, "summary" | "description" | "remarks") {
                text.push_str(rest);
                text.push('\n');
                continue;
            }
            tag = Some((name.to_string(), rest.to_string()));
            continue;
        }
        match tag.as_mut() {
            Some((_, body)) => {
                body.push('\n');
                body.push_str(line);
            }
            None => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    flush(tag.take(), &mut params, &mut extra, &mut examples);
    let mut out = String::new();
    let text = text.trim();
    if !text.is_empty() {
        out.push_str(text);
        out.push_str("\n\n");
    }
    if !params.is_empty() {
        out.push_str("Parameters:\n\n");
        out.push_str(&params.join("\n"));
        out.push_str("\n\n");
    }
    for line in extra {
        out.push_str(&line);
        out.push_str("\n\n");
    }
    for example in examples {
        out.push_str("Example:\n\n");
        out.push_str(&example);
        out.push_str("\n\n");
    }
    out
}

/// `{Type} text` → `text`.
fn strip_type(body: &str) -> String {
    let body = body.trim_start();
    if body.starts_with('{') {
        body.find('}')
            .map(|e| body[e + 1..].trim().to_string())
            .unwrap_or_else(|| body.to_string())
    } else {
        body.to_string()
    }
}

/// `{@link Target}` / `{@link Target text}` / `{@linkcode X}` → the text or the target.
fn unlink(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(start) = rest.find("{@link") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let Some(end) = after.find('}') else {
            out.push_str(after);
            return out;
        };
        let inner = after[1..end]
            .trim_start_matches("@linkcode")
            .trim_start_matches("@linkplain")
            .trim_start_matches("@link")
            .trim();
        let shown = inner
            .split_once('|')
            .or_else(|| inner.split_once(' '))
            .map(|(_, text)| text.trim())
            .filter(|t| !t.is_empty())
            .unwrap_or(inner);
        out.push_str(&format!("`{shown}`"));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE_FNS_FORMAT: &str = r#"import type { FormatOptions } from "./types.js";
export type { FormatOptions };
/**
 * @name format
 * @category Common Helpers
 * @summary Format the date.
 *
 * @description
 * Return the formatted date string in the given format. The result may vary by locale.
 *
 * @param date - The original date
 * @param formatStr - The string of tokens
 * @param options - An object with options
 *
 * @returns The formatted date string
 *
 * @throws `date` must not be Invalid Date
 *
 * @example
 * // Represent 11 February 2014 in middle-endian format:
 * const result = format(new Date(2014, 1, 11), 'MM/dd/yyyy')
 * //=> '02/11/2014'
 */
export declare function format<DateType extends Date>(
  date: DateType | number | string,
  formatStr: string,
  options?: FormatOptions,
): string;
"#;

    #[test]
    fn a_documented_function_becomes_a_section_with_its_signature_params_and_example() {
        let page = to_markdown("date-fns/format", DATE_FNS_FORMAT).unwrap();
        assert!(page.starts_with("# date-fns/format\n\n## format\n\n```ts\nexport declare function format<DateType extends Date>("), "{page}");
        assert!(
            page.contains("options?: FormatOptions,\n): string;\n```"),
            "{page}"
        );
        assert!(
            page.contains("Return the formatted date string in the given format."),
            "{page}"
        );
        assert!(
            page.contains("- `formatStr` — The string of tokens"),
            "{page}"
        );
        assert!(
            page.contains("Returns: The formatted date string"),
            "{page}"
        );
        assert!(
            page.contains("Example:\n\n```ts\n// Represent 11 February 2014"),
            "{page}"
        );
        assert!(!page.contains("@category"), "{page}");
        // The page reads back into one section with a code block and an example.
        let blocks = crate::read::parse(crate::blocks::Format::Markdown, &page);
        let chunks = crate::chunk::chunk_page(&blocks, "format");
        assert!(
            chunks
                .iter()
                .all(|c| c.section == "date-fns/format > format"),
            "{chunks:?}"
        );
        assert!(
            chunks.iter().any(|c| c.kind == crate::ChunkKind::Example),
            "{chunks:?}"
        );
    }

    #[test]
    fn documented_members_of_interfaces_and_classes_are_subsections() {
        let text = r#"
/** Options of a request. */
export interface Options {
    /**
     * Milliseconds to wait for the server to end the response before aborting the request.
     * @default undefined
     */
    timeout?: number | { request?: number; connect?: number };
    // undocumented
    retry: RetryOptions;
    /** Sends `body` as JSON. See {@link Options.body | the body option}. */
    json?: Record<string, unknown>;
}
/** A client. */
export declare class Client {
    /** Creates a client for `baseUrl`. */
    constructor(baseUrl: string);
    /** Sends a GET request. */
    get(url: string, options?: Options): Promise<Response>;
    private secret;
}
/** @internal */
export declare function hidden(): void;
export declare function undocumented(): void;
"#;
        let names: Vec<String> = symbols(text).into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "Options",
                "Options.timeout",
                "Options.json",
                "Client",
                "Client.constructor",
                "Client.get"
            ]
        );
        let page = to_markdown("got", text).unwrap();
        assert!(page.contains("### Options.timeout\n\n```ts\ntimeout?: number | { request?: number; connect?: number };\n```"), "{page}");
        assert!(page.contains("Default: `undefined`"), "{page}");
        assert!(page.contains("See `the body option`."), "{page}");
        assert!(!page.contains("hidden"), "{page}");
    }

    #[test]
    fn nothing_documented_no_page() {
        assert_eq!(
            to_markdown(
                "x",
                "export declare const x: number;\nexport * from './y';\n"
            ),
            None
        );
        assert_eq!(to_markdown("x", ""), None);
        // Unterminated input does not panic.
        for broken in [
            "/** doc",
            "/** doc */ export interface A {",
            "/** a */ export type T = '",
            "}}}",
        ] {
            let _ = to_markdown("x", broken);
        }
    }
}
