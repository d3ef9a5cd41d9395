//! The house as ARCHITECTURE.md draws it: every crate's devlens dependencies are the ones its
//! table lists, and no crate's top-level modules import each other in a circle (a module that
//! needs a sibling's piece and is needed by it is two modules' worth of one thing, or a piece in
//! the wrong place).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The devlens crates in a manifest's `[dependencies]` (not dev- or build-dependencies).
fn manifest_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut section = String::new();
    let mut deps = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if section == "[dependencies]" && line.starts_with("devlens") {
            let name: String = line
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            deps.insert(name);
        }
    }
    deps
}

/// ARCHITECTURE.md's "depends on" table: crate → its devlens dependencies.
fn drawn_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("| crate | depends on |")
        .expect("ARCHITECTURE.md has a `| crate | depends on |` table");
    text[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
            let deps = cells[1]
                .split(',')
                .map(str::trim)
                .filter(|d| d.starts_with("devlens"))
                .map(String::from)
                .collect();
            (cells[0].trim_matches('`').to_string(), deps)
        })
        .collect()
}

#[test]
fn the_crate_graph_is_the_one_architecture_md_draws() {
    let drawn = drawn_dependencies();
    let mut actual = BTreeMap::new();
    for dir in crate_dirs() {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        actual.insert(name, manifest_dependencies(&manifest));
    }
    assert_eq!(
        drawn, actual,
        "ARCHITECTURE.md's table of who depends on whom differs from the crates' Cargo.toml \
         (left: the table, right: the manifests); redraw it with the change"
    );
    for adapter in ["devlens-mcp", "devlens-http"] {
        let expected: BTreeSet<String> = ["devlens-app", "devlens-core"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            actual[adapter], expected,
            "{adapter} reaches the domain through devlens-app only"
        );
    }
}

/// The source with comments and the unit-test module cut off: what the crate itself imports.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first name of each path a `crate::` reference names (`crate::a::B`, `crate::{a, b::C}`).
fn crate_references(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut part_start) = (0usize, 0usize);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        names.insert(ident(&group[part_start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.insert(ident(&group[part_start..i]));
                        part_start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(ident(rest));
        }
    }
    names.remove("");
    names
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A circle in `graph`, as the modules along it, if there is one.
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_modules_that_import_each_other_in_a_circle() {
    let mut circles = Vec::new();
    for dir in crate_dirs() {
        let src = dir.join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        // Top-level modules: `a.rs` and everything under `a/`; lib.rs and main.rs are the root.
        let module_of = |path: &Path| -> Option<String> {
            let rel = path.strip_prefix(&src).ok()?;
            let first = rel.components().next()?.as_os_str().to_string_lossy();
            let name = first.trim_end_matches(".rs").to_string();
            (!matches!(name.as_str(), "lib" | "main")).then_some(name)
        };
        let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in &files {
            let Some(module) = module_of(file) else {
                continue;
            };
            let uses: Vec<String> = crate_references(&code_of(file))
                .into_iter()
                .filter(|m| modules.contains(m) && *m != module)
                .collect();
            graph.entry(module).or_default().extend(uses);
        }
        if let Some(circle) = find_circle(&graph) {
            circles.push(format!(
                "{}: {}",
                dir.file_name().unwrap().to_string_lossy(),
                circle.join(" → ")
            ));
        }
    }
    assert!(
        circles.is_empty(),
        "modules importing each other in a circle (move the shared piece to the lower module, \
         or to a module of its own):\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_circle_check_sees_grouped_and_plain_imports() {
    let refs = crate_references(
        "use crate::{a::X, b, c::{d, e}};\nlet y = crate::f::g();\nuse crate::Api;",
    );
    let expected: BTreeSet<String> = ["Api", "a", "b", "c", "f"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(refs, expected);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(find_circle(&graph).unwrap(), ["a", "b", "c", "a"]);
}
