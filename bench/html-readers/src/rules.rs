//! devlens' reading rules (crates/devlens-docs/src/html.rs) as a state machine over parser
//! events, so the same rules can be driven by html5ever's tree (scraper) and by lol_html's
//! stream: what differs between the readers is then only how each turns bytes into elements and
//! text. Kept in step with html.rs by hand; it is a measuring tool, not shipped code.

use devlens_docs::blocks::{Block, slug};

const SKIPPED: &[&str] = &[
    "head", "script", "style", "nav", "header", "footer", "svg", "noscript", "template", "iframe",
    "button", "form", "select",
];
const BLOCK_ELEMENTS: &[&str] = &[
    "p",
    "div",
    "ul",
    "ol",
    "dl",
    "table",
    "section",
    "article",
    "blockquote",
    "details",
    "main",
    "aside",
    "figure",
    "hr",
];
const LINE_ELEMENTS: &[&str] = &["br", "li", "tr", "dt", "dd", "summary", "figcaption"];
pub const VOID: &[&str] = &[
    "br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "track",
    "wbr",
];

/// The attributes the rules read, decoded.
#[derive(Default)]
pub struct Attrs {
    pub id: Option<String>,
    pub class: Option<String>,
    pub role: Option<String>,
    pub name: Option<String>,
}

impl Attrs {
    fn is_navigation(&self) -> bool {
        if self.role.as_deref() == Some("navigation") {
            return true;
        }
        let marks = format!(
            "{} {}",
            self.id.as_deref().unwrap_or_default(),
            self.class.as_deref().unwrap_or_default()
        )
        .to_ascii_lowercase();
        marks
            .split(|c: char| c.is_whitespace())
            .any(|m| m == "toc" || m.contains("sidebar") || m == "breadcrumbs" || m == "navbar")
    }

    fn code_language(&self) -> Option<String> {
        self.class.as_deref()?.split_whitespace().find_map(|c| {
            ["language-", "lang-", "highlight-", "sourceCode "]
                .iter()
                .find_map(|p| c.strip_prefix(p))
                .filter(|l| !l.is_empty() && *l != "default" && *l != "none")
                .map(str::to_string)
        })
    }
}

#[derive(Default)]
struct Prose {
    text: String,
    link_chars: usize,
}

/// The reader's state between events.
#[derive(Default)]
pub struct Rules {
    blocks: Vec<Block>,
    title: Option<String>,
    prose: Prose,
    heading: Option<(u8, String, Option<String>)>,
    pre: Option<(Option<String>, String)>,
    skip: Option<(String, usize)>,
    in_title: bool,
    link_depth: usize,
}

impl Rules {
    fn flush(&mut self) {
        let text = collapse_lines(&self.prose.text);
        let total = text.chars().filter(|c| !c.is_whitespace()).count();
        let mostly_links = total > 80 && self.prose.link_chars * 10 > total * 7;
        if !text.is_empty() && !mostly_links {
            self.blocks.push(Block::Text(text));
        }
        self.prose = Prose::default();
    }

    /// A start tag (`name` lower-case).
    pub fn start(&mut self, name: &str, attrs: &Attrs) {
        let void = VOID.contains(&name);
        if let Some((skipped, depth)) = self.skip.as_mut() {
            if name == skipped && !void {
                *depth += 1;
            }
            return;
        }
        if name == "title" {
            self.in_title = true;
            return;
        }
        if !void && (SKIPPED.contains(&name) || attrs.is_navigation()) {
            self.skip = Some((name.to_string(), 1));
            return;
        }
        if let Some((language, code)) = self.pre.as_mut() {
            if name == "code" && language.is_none() {
                *language = attrs.code_language();
            } else if name == "br" {
                code.push('\n');
            }
            return;
        }
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let level = name.as_bytes()[1] - b'0';
                self.flush();
                self.heading = Some((level, String::new(), attrs.id.clone()));
            }
            "pre" => {
                self.flush();
                self.pre = Some((attrs.code_language(), String::new()));
            }
            "a" => {
                self.link_depth += 1;
                if let Some((_, _, anchor @ None)) = self.heading.as_mut() {
                    *anchor = attrs.id.clone().or_else(|| attrs.name.clone());
                }
            }
            _ => self.either(name, false),
        }
    }

    /// An end tag, or the end of an element the parser closed.
    pub fn end(&mut self, name: &str) {
        if let Some((skipped, depth)) = self.skip.as_mut() {
            if name == skipped {
                *depth -= 1;
                if *depth == 0 {
                    self.skip = None;
                }
            }
            return;
        }
        if name == "title" {
            self.in_title = false;
            return;
        }
        if let Some((language, code)) = self.pre.as_mut() {
            if name == "pre" {
                let code = code.trim_matches('\n').to_string();
                let language = language.take();
                self.pre = None;
                if !code.trim().is_empty() {
                    self.blocks.push(Block::Code { language, code });
                }
            }
            return;
        }
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                if let Some((level, text, anchor)) = self.heading.take() {
                    let text = collapse_lines(&text)
                        .trim_end_matches(['#', '¶', '§'])
                        .trim()
                        .to_string();
                    if !text.is_empty() {
                        let anchor = anchor.unwrap_or_else(|| slug(&text));
                        self.blocks.push(Block::Heading {
                            level,
                            text,
                            anchor,
                        });
                    }
                }
            }
            "a" => self.link_depth = self.link_depth.saturating_sub(1),
            "td" | "th" => self.prose.text.push_str(" | "),
            _ => self.either(name, true),
        }
    }

    /// What the rules do alike on a start and an end tag.
    fn either(&mut self, name: &str, closing: bool) {
        match name {
            "code" if self.heading.is_none() => self.prose.text.push('`'),
            _ if BLOCK_ELEMENTS.contains(&name) => {
                if matches!(name, "ul" | "ol" | "dl" | "table") && !closing {
                    self.prose.text.push('\n');
                } else {
                    self.flush();
                }
            }
            _ if self.heading.is_none() && LINE_ELEMENTS.contains(&name) => {
                self.prose.text.push('\n');
                if name == "li" && !closing {
                    self.prose.text.push_str("- ");
                }
            }
            _ => {}
        }
    }

    /// Decoded text.
    pub fn text(&mut self, text: &str) {
        if text.is_empty() || self.skip.is_some() {
            return;
        }
        if self.in_title {
            self.title.get_or_insert_with(String::new).push_str(text);
            return;
        }
        if let Some((_, code)) = self.pre.as_mut() {
            code.push_str(text);
            return;
        }
        if let Some((_, heading_text, _)) = self.heading.as_mut() {
            heading_text.push_str(text);
            return;
        }
        if self.link_depth > 0 {
            self.prose.link_chars += text.chars().filter(|c| !c.is_whitespace()).count();
        }
        self.prose.text.push_str(text);
    }

    pub fn finish(mut self) -> Vec<Block> {
        self.flush();
        let mut blocks = self.blocks;
        if let Some(title) = self.title.map(|t| collapse_lines(&t)).filter(|t| !t.is_empty())
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
}

fn collapse_lines(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty() && l != "-")
        .collect();
    lines.join("\n")
}
