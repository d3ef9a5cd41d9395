//! Reads HTML docs folders with three readers — devlens' own (crates/devlens-docs/src/html.rs),
//! one on html5ever's tree (through scraper) and one on lol_html's stream, the last two driving
//! the same rules (rules.rs) — times each over every page, and writes what each read as Markdown
//! under `<out>/<reader>/<corpus>/` so `run` can ingest and score the three alike.
//!
//! Usage: html-readers <out> <corpus>=<folder>...

mod rules;

use std::path::{Path, PathBuf};
use std::time::Instant;

use devlens_docs::blocks::{Block, Format};
use rules::{Attrs, Rules};

const READERS: &[(&str, fn(&str) -> Vec<Block>)] = &[
    ("devlens", devlens_reader),
    ("html5ever", html5ever_reader),
    ("lol_html", lol_html_reader),
];
/// Passes over each corpus per reader; the median is reported.
const PASSES: usize = 5;

fn devlens_reader(html: &str) -> Vec<Block> {
    devlens_docs::read::parse(Format::Html, html)
}

/// html5ever builds the HTML5 tree (implied elements, misnested tags fixed, every entity
/// decoded); the rules walk it in document order.
fn html5ever_reader(html: &str) -> Vec<Block> {
    let document = scraper::Html::parse_document(html);
    let mut rules = Rules::default();
    walk(document.tree.root(), &mut rules);
    rules.finish()
}

fn walk(node: ego_tree::NodeRef<'_, scraper::Node>, rules: &mut Rules) {
    match node.value() {
        scraper::Node::Element(element) => {
            let name = element.name();
            let attrs = Attrs {
                id: element.attr("id").map(str::to_string),
                class: element.attr("class").map(str::to_string),
                role: element.attr("role").map(str::to_string),
                name: element.attr("name").map(str::to_string),
            };
            rules.start(name, &attrs);
            for child in node.children() {
                walk(child, rules);
            }
            if !rules::VOID.contains(&name) {
                rules.end(name);
            }
        }
        scraper::Node::Text(text) => rules.text(&text),
        _ => {
            for child in node.children() {
                walk(child, rules);
            }
        }
    }
}

/// lol_html tokenizes as a stream (no tree: end tags are the ones written); text and attribute
/// values come raw, so entities are decoded with html-escape.
fn lol_html_reader(html: &str) -> Vec<Block> {
    use lol_html::{HtmlRewriter, Settings, doc_text, element, end_tag};
    use std::cell::RefCell;
    use std::rc::Rc;

    let rules = Rc::new(RefCell::new(Rules::default()));
    let decode = |s: String| html_escape::decode_html_entities(&s).into_owned();
    {
        let on_element = rules.clone();
        let on_text = rules.clone();
        let mut rewriter = HtmlRewriter::new(
            Settings {
                element_content_handlers: vec![element!("*", move |el| {
                    let name = el.tag_name().to_ascii_lowercase();
                    let attrs = Attrs {
                        id: el.get_attribute("id").map(decode),
                        class: el.get_attribute("class").map(decode),
                        role: el.get_attribute("role").map(decode),
                        name: el.get_attribute("name").map(decode),
                    };
                    on_element.borrow_mut().start(&name, &attrs);
                    if el.can_have_content() && !rules::VOID.contains(&name.as_str()) {
                        let on_end = on_element.clone();
                        el.on_end_tag(end_tag!(move |_end| {
                            on_end.borrow_mut().end(&name);
                            Ok(())
                        }))?;
                    }
                    Ok(())
                })],
                document_content_handlers: vec![doc_text!(move |chunk| {
                    let text = html_escape::decode_html_entities(chunk.as_str());
                    on_text.borrow_mut().text(&text);
                    Ok(())
                })],
                ..Settings::new()
            },
            |_: &[u8]| {},
        );
        // A page lol_html refuses is read as far as it got.
        let _ = rewriter
            .write(html.as_bytes())
            .and_then(|()| rewriter.end());
    }
    Rc::try_unwrap(rules)
        .map(|r| r.into_inner().finish())
        .unwrap_or_default()
}

fn to_markdown(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            Block::Heading { level, text, .. } => {
                out.push_str(&"#".repeat(usize::from(*level)));
                out.push(' ');
                out.push_str(&text.replace('\n', " "));
            }
            Block::Text(text) => out.push_str(text),
            Block::Code { language, code } => {
                let fence = if code.contains("```") { "~~~~" } else { "```" };
                out.push_str(fence);
                out.push_str(language.as_deref().unwrap_or_default());
                out.push('\n');
                out.push_str(code);
                out.push('\n');
                out.push_str(fence);
            }
        }
        out.push_str("\n\n");
    }
    out
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, corpora)) = args.split_first() else {
        eprintln!("usage: html-readers <out> <corpus>=<folder>...");
        std::process::exit(2);
    };
    let out = PathBuf::from(out);
    println!("| corpus | pages | MB | reader | median ms per pass | MB/s | blocks | headings | code blocks | pages read unlike devlens |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for corpus in corpora {
        let (name, folder) = corpus.split_once('=').expect("<corpus>=<folder>");
        let folder = Path::new(folder);
        let (files, _) = devlens_docs::read::doc_files(folder).expect("readable folder");
        let pages: Vec<(PathBuf, String)> = files
            .into_iter()
            .filter(|f| Format::of_path(f) == Some(Format::Html))
            .filter_map(|f| {
                let text = std::fs::read_to_string(&f).ok()?;
                Some((f, text))
            })
            .collect();
        let bytes: usize = pages.iter().map(|(_, t)| t.len()).sum();
        let mb = bytes as f64 / 1e6;
        let reference: Vec<Vec<Block>> = pages.iter().map(|(_, t)| devlens_reader(t)).collect();
        for (reader, read) in READERS {
            let mut times = Vec::new();
            let mut read_pages = Vec::new();
            for _ in 0..PASSES {
                let started = Instant::now();
                read_pages = pages.iter().map(|(_, t)| read(t)).collect::<Vec<_>>();
                times.push(started.elapsed().as_secs_f64() * 1e3);
            }
            let ms = median(times);
            let blocks: usize = read_pages.iter().map(Vec::len).sum();
            let count = |f: fn(&Block) -> bool| -> usize {
                read_pages.iter().flatten().filter(|b| f(b)).count()
            };
            let headings = count(|b| matches!(b, Block::Heading { .. }));
            let code = count(|b| matches!(b, Block::Code { .. }));
            let unlike = read_pages
                .iter()
                .zip(&reference)
                .filter(|(a, b)| a != b)
                .count();
            println!(
                "| {name} | {} | {mb:.1} | {reader} | {ms:.0} | {:.1} | {blocks} | {headings} | {code} | {unlike} |",
                pages.len(),
                mb / (ms / 1e3),
            );
            for ((path, _), blocks) in pages.iter().zip(&read_pages) {
                let relative = path.strip_prefix(folder).unwrap_or(path);
                let target = out.join(reader).join(name).join(relative).with_extension("md");
                std::fs::create_dir_all(target.parent().expect("a parent")).expect("writable out");
                std::fs::write(&target, to_markdown(blocks)).expect("writable out");
            }
        }
    }
}
