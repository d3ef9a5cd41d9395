//! The crate's floors, checked: every `crate::…` path a module names must lead to its own floor
//! or one below, and the modules must not import each other in a circle (see the table in the
//! crate docs). Read from the sources, so a new import that breaks the layering fails here
//! rather than in a reviewer's head.

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    /// The floor of each top-level module.
    const FLOORS: &[(&str, u8)] = &[
        ("error", 0),
        ("text", 0),
        ("records", 0),
        ("tab", 1),
        ("page", 2),
        ("effects", 3),
        ("act", 4),
        ("debug", 4),
        ("audit", 5),
    ];

    fn floor(module: &str) -> u8 {
        let top = module.split("::").next().unwrap_or(module);
        FLOORS
            .iter()
            .find(|(name, _)| *name == top)
            .map(|(_, f)| *f)
            .unwrap_or_else(|| panic!("module `{top}` has no floor: add it to FLOORS"))
    }

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The code of a file: without its tests and comments (doc links name modules too).
    fn code_of(text: &str) -> String {
        let code = text.split("#[cfg(test)]").next().unwrap_or(text);
        code.lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `records/console.rs` → `records::console`; `tab/mod.rs` → `tab`.
    fn module_of(src: &Path, file: &Path) -> String {
        let rel = file.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        parts.join("::")
    }

    /// The modules (files) `text` names through `crate::…`, outside its tests.
    fn imports(text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
        let code = code_of(text);
        let code = code.as_str();
        let mut out = BTreeSet::new();
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            // `crate::records::console::ConsoleBuffer` → the longest known module prefix.
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            for n in (1..=segments.len()).rev() {
                let candidate = segments[..n].join("::");
                if known.contains(&candidate) {
                    out.insert(candidate);
                    break;
                }
            }
            // A grouped import names modules inside braces: `crate::records::{console, network}`.
            if let Some(group) = rest.strip_prefix(&path).and_then(|r| r.strip_prefix('{')) {
                let inner: String = group.chars().take_while(|c| *c != '}').collect();
                for name in inner.split(',').map(str::trim) {
                    let candidate = format!("{}{}", path, name);
                    if known.contains(&candidate) {
                        out.insert(candidate);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn modules_import_only_their_floor_and_below_and_never_in_a_circle() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let modules: BTreeMap<String, PathBuf> = files
            .iter()
            .map(|f| (module_of(&src, f), f.clone()))
            .filter(|(m, _)| m != "lib" && m != "floors")
            .collect();
        let known: BTreeSet<String> = modules.keys().cloned().collect();
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut upward = Vec::new();
        for (module, file) in &modules {
            let text = std::fs::read_to_string(file).unwrap();
            let mut deps = imports(&text, &known);
            deps.remove(module);
            // A module's own parent (its `mod.rs`) only declares it.
            for dep in &deps {
                if floor(dep) > floor(module) {
                    upward.push(format!(
                        "{module} (floor {}) → {dep} (floor {})",
                        floor(module),
                        floor(dep)
                    ));
                }
            }
            graph.insert(module.clone(), deps);
        }
        assert!(
            upward.is_empty(),
            "imports that point up a floor:\n{}",
            upward.join("\n")
        );

        // A circle: depth-first search for a back edge.
        fn visit(
            node: &str,
            graph: &BTreeMap<String, BTreeSet<String>>,
            state: &mut BTreeMap<String, u8>,
            path: &mut Vec<String>,
        ) -> Option<Vec<String>> {
            state.insert(node.to_string(), 1);
            path.push(node.to_string());
            for next in graph.get(node).into_iter().flatten() {
                match state.get(next.as_str()) {
                    Some(1) => {
                        let start = path.iter().position(|p| p == next).unwrap_or(0);
                        let mut circle = path[start..].to_vec();
                        circle.push(next.clone());
                        return Some(circle);
                    }
                    Some(_) => {}
                    None => {
                        if let Some(c) = visit(next, graph, state, path) {
                            return Some(c);
                        }
                    }
                }
            }
            path.pop();
            state.insert(node.to_string(), 2);
            None
        }
        let mut state = BTreeMap::new();
        for module in graph.keys() {
            if !state.contains_key(module.as_str()) {
                let circle = visit(module, &graph, &mut state, &mut Vec::new());
                assert!(
                    circle.is_none(),
                    "an import circle: {}",
                    circle.unwrap().join(" → ")
                );
            }
        }
        // Floor 0 is plain data: no protocol there.
        for (module, file) in &modules {
            if floor(module) == 0 {
                let text = std::fs::read_to_string(file).unwrap();
                assert!(
                    !text.contains("chromiumoxide"),
                    "{module} is a record but speaks the protocol"
                );
            }
        }
        // The check reads what it should: the crate's modules, each on its floor.
        assert!(known.len() > 20, "{known:?}");
        assert!(
            graph["effects"].contains("records::debugger"),
            "{:?}",
            graph["effects"]
        );
    }

    /// The methods each module adds to `Tab` (in its `impl Tab` blocks).
    fn tab_methods(text: &str) -> BTreeSet<String> {
        let code = text.split("#[cfg(test)]").next().unwrap_or(text);
        let mut out = BTreeSet::new();
        let mut in_tab = false;
        for line in code.lines() {
            if line.starts_with("impl Tab {") {
                in_tab = true;
            } else if line == "}" {
                in_tab = false;
            } else if in_tab && let Some(rest) = line.trim_start().strip_prefix("pub") {
                let rest = rest.trim_start_matches("(crate)").trim_start();
                let rest = rest.strip_prefix("async ").unwrap_or(rest);
                if let Some(name) = rest.strip_prefix("fn ") {
                    out.insert(
                        name.chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect(),
                    );
                }
            }
        }
        out
    }

    /// Methods are called without an import, so the import check cannot see them: a module may
    /// call on a tab (`self.` inside `impl Tab`, or `tab.`) only methods of its floor or below.
    #[test]
    fn tab_methods_are_called_only_from_their_floor_and_above() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let texts: BTreeMap<String, String> = files
            .iter()
            .map(|f| (module_of(&src, f), std::fs::read_to_string(f).unwrap()))
            .filter(|(m, _)| m != "lib" && m != "floors")
            .collect();
        let mut defined: BTreeMap<String, String> = BTreeMap::new();
        for (module, text) in &texts {
            for name in tab_methods(text) {
                defined.insert(name, module.clone());
            }
        }
        let mut upward = Vec::new();
        for (module, text) in &texts {
            let code = code_of(text);
            for (name, owner) in &defined {
                if floor(owner) <= floor(module) {
                    continue;
                }
                let called = [format!("self.{name}("), format!("tab.{name}(")]
                    .iter()
                    .any(|call| code.contains(call.as_str()));
                if called {
                    upward.push(format!("{module} calls Tab::{name} of {owner}"));
                }
            }
        }
        assert!(defined.len() > 50, "{defined:?}");
        assert!(
            upward.is_empty(),
            "calls that reach up a floor:\n{}",
            upward.join("\n")
        );
    }
}
