//! `resolve_library_id`: from what a user or an agent calls a library to the id devlens stores
//! it under — tolerant of spelling (`reactt`), of package names (`@vue/runtime-core`, `node:fs`,
//! `@types/node`) and of the `js` suffixes (`vuejs`, `next.js`).

use serde::Serialize;

use crate::store::LibraryInfo;
use devlens_core::suggest;

/// Below this a library is not a match.
const MIN_SCORE: f64 = 0.8;
/// At most this many matches.
pub const MAX_MATCHES: usize = 10;

/// One ranked match (the CLI's and the tool's `matches[]`).
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct LibraryMatch {
    pub id: String,
    pub name: String,
    pub description: String,
    /// Newest first.
    pub versions: Vec<String>,
    pub snippets: usize,
    /// Set when the library is a dependency of the workspace: the version installed there,
    /// which `query_docs` reads (on its first question, when `versions` lacks it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_version: Option<String>,
    #[serde(skip)]
    pub score: f64,
}

/// The answer of `resolve_library_id` (and `devlens docs resolve --json`).
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Resolved {
    /// Best first; empty when nothing stored is close.
    pub matches: Vec<LibraryMatch>,
    /// The name that was resolved.
    #[serde(skip)]
    pub name: String,
}

impl devlens_core::Report for Resolved {
    /// One line per match, its description indented below.
    fn to_text(&self) -> String {
        let name = &self.name;
        if self.matches.is_empty() {
            return format!(
                "no library matches `{name}`; see `devlens docs list`, or add it with \
                 `devlens docs add ID --path DIR`"
            );
        }
        self.matches
            .iter()
            .map(|m| {
                let mut line = format!(
                    "{}  {}  [{}]  {} snippets",
                    m.id,
                    m.name,
                    m.versions.join(", "),
                    m.snippets
                );
                if let Some(installed) = &m.installed_version {
                    line.push_str(&format!("  (workspace dependency, {installed} installed)"));
                }
                if !m.description.is_empty() {
                    line.push_str(&format!("\n    {}", m.description));
                }
                line
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The ways a typed name may refer to a library, each with how much a match through it counts.
fn name_variants(input: &str) -> Vec<(String, f64)> {
    let lower = input.trim().to_lowercase();
    let mut out: Vec<(String, f64)> = vec![(lower.clone(), 1.0)];
    let push = |v: &str, weight: f64, out: &mut Vec<(String, f64)>| {
        let v = v.trim_matches(|c: char| !c.is_alphanumeric());
        if v.len() >= 2 && !out.iter().any(|(o, _)| o == v) {
            out.push((v.to_string(), weight));
        }
    };
    let unscoped = lower.trim_start_matches('@');
    push(unscoped, 1.0, &mut out);
    // `node:fs` → node; `@vue/runtime-core` → vue (the project) and runtime-core (the package);
    // `@types/node` → node (the scope names no library there).
    let segments: Vec<&str> = unscoped
        .split(['/', ':'])
        .filter(|s| !s.is_empty())
        .collect();
    for (i, segment) in segments.iter().enumerate() {
        let generic_scope =
            i == 0 && segments.len() > 1 && matches!(*segment, "types" | "npm" | "pypi");
        if !generic_scope {
            push(segment, 0.95, &mut out);
        }
    }
    let snapshot: Vec<(String, f64)> = out.clone();
    for (v, w) in snapshot {
        for suffix in [".js", "-js", "_js", "js", ".ts", "-rs", ".py", "-py"] {
            if let Some(stem) = v.strip_suffix(suffix) {
                push(stem, w * 0.98, &mut out);
            }
        }
        if let Some(stem) = v.strip_prefix("py") {
            push(stem, w * 0.9, &mut out);
        }
    }
    out
}

/// What a library can be called: its id, the id's segments, its name.
fn library_names(lib: &LibraryInfo) -> Vec<String> {
    let mut names = vec![
        lib.id.trim_start_matches('/').to_lowercase(),
        lib.name.to_lowercase(),
    ];
    for segment in lib.id.split('/').filter(|s| !s.is_empty()) {
        names.push(segment.to_lowercase());
    }
    let name = lib.name.to_lowercase();
    for suffix in [".js", "js"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            names.push(stem.trim().to_string());
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// The libraries `name` may mean, best first. `query` (what the user wants to do) breaks ties
/// towards libraries whose description mentions it.
pub fn resolve(libraries: &[LibraryInfo], name: &str, query: Option<&str>) -> Vec<LibraryMatch> {
    let variants = name_variants(name);
    let query_words: Vec<String> = query
        .map(|q| {
            suggest::words(&q.to_lowercase())
                .into_iter()
                .filter(|w| w.len() > 3)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut matches: Vec<LibraryMatch> = libraries
        .iter()
        .filter_map(|lib| {
            let names = library_names(lib);
            let mut best = 0.0f64;
            for (variant, weight) in &variants {
                let words = suggest::words(variant);
                for candidate in &names {
                    best = best.max(suggest::score(variant, &words, candidate) * weight);
                }
            }
            if best < MIN_SCORE {
                return None;
            }
            let description = lib.description.to_lowercase();
            let mentions = query_words
                .iter()
                .filter(|w| description.contains(w.as_str()))
                .count();
            Some(LibraryMatch {
                id: lib.id.clone(),
                name: lib.name.clone(),
                description: lib.description.clone(),
                versions: lib.versions.clone(),
                snippets: lib.snippets,
                installed_version: None,
                score: best + 0.02 * mentions as f64,
            })
        })
        .collect();
    matches.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.snippets.cmp(&a.snippets))
            .then_with(|| a.id.cmp(&b.id))
    });
    matches.truncate(MAX_MATCHES);
    matches
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(id: &str, name: &str, description: &str) -> LibraryInfo {
        LibraryInfo {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            source: String::new(),
            versions: vec!["latest".into()],
            snippets: 10,
            updated_at: String::new(),
        }
    }

    fn libs() -> Vec<LibraryInfo> {
        vec![
            lib("/vuejs/core", "Vue", "The progressive JavaScript framework"),
            lib(
                "react",
                "React",
                "A library for web and native user interfaces",
            ),
            lib("nodejs", "Node.js", "JavaScript runtime"),
            lib("/vercel/next.js", "Next.js", "The React framework"),
            lib("preact", "Preact", "Fast 3kB alternative to React"),
        ]
    }

    fn first(name: &str) -> Option<String> {
        resolve(&libs(), name, None).first().map(|m| m.id.clone())
    }

    #[test]
    fn names_packages_and_typos() {
        assert_eq!(first("react").as_deref(), Some("react"));
        assert_eq!(first("Reactt").as_deref(), Some("react"));
        assert_eq!(first("@vue/runtime-core").as_deref(), Some("/vuejs/core"));
        assert_eq!(first("vuejs").as_deref(), Some("/vuejs/core"));
        assert_eq!(first("vue").as_deref(), Some("/vuejs/core"));
        assert_eq!(first("node:fs").as_deref(), Some("nodejs"));
        assert_eq!(first("@types/node").as_deref(), Some("nodejs"));
        assert_eq!(first("nextjs").as_deref(), Some("/vercel/next.js"));
        assert_eq!(first("next").as_deref(), Some("/vercel/next.js"));
        assert!(resolve(&libs(), "zzzzzz", None).is_empty());
        assert!(resolve(&libs(), "", None).is_empty());
    }
}
