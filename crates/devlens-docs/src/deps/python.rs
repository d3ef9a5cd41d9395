//! Python: the direct dependencies `pyproject.toml` (PEP 621 `dependencies` and
//! `optional-dependencies`, PEP 735 `dependency-groups`, Poetry's and uv's tables) and
//! `requirements*.txt` declare, and the versions installed in the project's virtualenv (`.venv`,
//! `venv` or `env` in the workspace, else the active one, `VIRTUAL_ENV`): each package's
//! `*.dist-info/METADATA` gives its version, summary and long description (its README).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::{Dependency, Ecosystem, Problem, relative, toml_error};

/// `-r other.txt` is followed this deep.
const MAX_INCLUDE_DEPTH: usize = 3;

/// PEP 503's normalised name: lower case, runs of `-`, `_` and `.` as one `-`.
pub(crate) fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out.trim_matches('-').to_string()
}

/// The distribution name a PEP 508 requirement starts with (`requests[socks]>=2.31` →
/// `requests`), or `None` for what names no package (a URL, a path, an option).
fn requirement_name(spec: &str) -> Option<(String, String)> {
    let spec = spec.trim();
    let name: String = spec
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    let rest = spec[name.len()..].trim();
    let valid = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && (rest.is_empty()
            || rest.starts_with(['[', '=', '<', '>', '!', '~', ';', '(', ' ', '@']));
    valid.then(|| (name, rest.to_string()))
}

/// One declared requirement: name as written, the rest of its spec, where, whether for
/// development.
type Declared = (String, String, String, bool);

/// The Python dependencies of the project at `root` (nothing without a pyproject.toml or a
/// requirements file).
pub(super) fn scan(root: &Path, problems: &mut Vec<Problem>) -> Vec<Dependency> {
    let mut declared: Vec<Declared> = Vec::new();
    let pyproject = root.join("pyproject.toml");
    if pyproject.is_file() {
        read_pyproject(root, &pyproject, &mut declared, problems);
    }
    let mut requirement_files: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .map(|n| n.to_string_lossy().to_string())
                        .is_some_and(|n| n.starts_with("requirements") && n.ends_with(".txt"))
                })
                .collect()
        })
        .unwrap_or_default();
    requirement_files.sort();
    for file in &requirement_files {
        read_requirements(root, file, 0, &mut declared, problems);
    }
    if declared.is_empty() {
        return Vec::new();
    }
    let installed = installed_packages(root);

    // By normalised name: the first declaration wins, a runtime one over a development one.
    let mut by_name: BTreeMap<String, Declared> = BTreeMap::new();
    for entry in declared {
        let key = normalize(&entry.0);
        // Replaced only when the known one is for development and this one is not.
        let replace = by_name.get(&key).is_none_or(|known| known.3 && !entry.3);
        if replace {
            by_name.insert(key, entry);
        }
    }
    by_name
        .into_iter()
        .filter(|(key, _)| key != "python")
        .map(|(key, (name, spec, declared_in, dev))| {
            let found = installed.get(&key);
            Dependency {
                ecosystem: Ecosystem::PyPi,
                id: Ecosystem::PyPi.library_id(&key),
                name,
                declared: spec,
                declared_in,
                dev,
                installed: found.map(|f| f.version.clone()),
                locked: None,
                description: found.map(|f| f.summary.clone()).unwrap_or_default(),
                dir: found.map(|f| f.dist_info.clone()),
            }
        })
        .collect()
}

fn read_pyproject(
    root: &Path,
    path: &Path,
    declared: &mut Vec<Declared>,
    problems: &mut Vec<Problem>,
) {
    let file = relative(root, path);
    let Ok(text) = std::fs::read_to_string(path) else {
        problems.push(Problem::new(file, "cannot be read"));
        return;
    };
    let doc: toml::Table = match toml::from_str(&text) {
        Ok(doc) => doc,
        Err(e) => {
            problems.push(Problem::new(file, toml_error(&text, &e)));
            return;
        }
    };
    let mut add_specs = |list: Option<&toml::Value>, dev: bool| {
        for spec in list.and_then(|l| l.as_array()).into_iter().flatten() {
            if let Some((name, rest)) = spec.as_str().and_then(requirement_name) {
                declared.push((name, rest, file.clone(), dev));
            }
        }
    };
    let project = doc.get("project");
    add_specs(project.and_then(|p| p.get("dependencies")), false);
    if let Some(extras) = project
        .and_then(|p| p.get("optional-dependencies"))
        .and_then(|o| o.as_table())
    {
        for list in extras.values() {
            add_specs(Some(list), false);
        }
    }
    if let Some(groups) = doc.get("dependency-groups").and_then(|g| g.as_table()) {
        for list in groups.values() {
            add_specs(Some(list), true);
        }
    }
    let tool = doc.get("tool");
    add_specs(
        tool.and_then(|t| t.get("uv"))
            .and_then(|u| u.get("dev-dependencies")),
        true,
    );
    let poetry = tool.and_then(|t| t.get("poetry"));
    let mut add_table = |table: Option<&toml::Value>, dev: bool| {
        for (name, spec) in table.and_then(|t| t.as_table()).into_iter().flatten() {
            let spec = match spec {
                toml::Value::String(s) => s.clone(),
                other => other
                    .get("version")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string(),
            };
            declared.push((name.clone(), spec, file.clone(), dev));
        }
    };
    add_table(poetry.and_then(|p| p.get("dependencies")), false);
    add_table(poetry.and_then(|p| p.get("dev-dependencies")), true);
    if let Some(groups) = poetry
        .and_then(|p| p.get("group"))
        .and_then(|g| g.as_table())
    {
        for group in groups.values() {
            add_table(group.get("dependencies"), true);
        }
    }
}

/// A requirements file, following `-r other.txt` inside the workspace.
fn read_requirements(
    root: &Path,
    path: &Path,
    depth: usize,
    declared: &mut Vec<Declared>,
    problems: &mut Vec<Problem>,
) {
    let file = relative(root, path);
    let Ok(text) = std::fs::read_to_string(path) else {
        problems.push(Problem::new(file, "cannot be read"));
        return;
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let dev = ["dev", "test", "lint", "doc"]
        .iter()
        .any(|w| name.contains(w));
    for line in text.lines() {
        let line = line.split(" #").next().unwrap_or(line).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let include = line
            .strip_prefix("-r ")
            .or_else(|| line.strip_prefix("--requirement "))
            .or_else(|| line.strip_prefix("--requirement="));
        if let Some(other) = include {
            let target = path.parent().unwrap_or(root).join(other.trim());
            let inside = std::fs::canonicalize(&target)
                .ok()
                .zip(std::fs::canonicalize(root).ok())
                .is_some_and(|(t, r)| t.starts_with(r));
            if depth < MAX_INCLUDE_DEPTH && inside {
                read_requirements(root, &target, depth + 1, declared, problems);
            }
            continue;
        }
        if line.starts_with('-') || line.contains("://") {
            continue;
        }
        if let Some((package, rest)) = requirement_name(line) {
            declared.push((package, rest, file.clone(), dev));
        }
    }
}

/// An installed distribution.
#[derive(Debug, Clone)]
struct Installed {
    version: String,
    summary: String,
    dist_info: PathBuf,
}

/// The virtualenv whose packages are the project's: one in the workspace (`.venv`, `venv`,
/// `env`), else the active one (`VIRTUAL_ENV`) — the workspace's first, because a server may
/// have been started with another project's virtualenv active.
fn virtualenv(root: &Path) -> Option<PathBuf> {
    let active = std::env::var_os("VIRTUAL_ENV").map(PathBuf::from);
    [".venv", "venv", "env"]
        .iter()
        .map(|d| root.join(d))
        .chain(active)
        .find(|d| d.join("pyvenv.cfg").is_file())
}

/// The site-packages folders of the project's virtualenv.
pub(super) fn site_packages(root: &Path) -> Vec<PathBuf> {
    let Some(venv) = virtualenv(root) else {
        return Vec::new();
    };
    let mut dirs = vec![venv.join("Lib/site-packages")];
    if let Ok(entries) = std::fs::read_dir(venv.join("lib")) {
        dirs.extend(
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
                .map(|e| e.path().join("site-packages")),
        );
    }
    dirs.retain(|d| d.is_dir());
    dirs.sort();
    dirs
}

/// The distributions installed in the project's virtualenv, by normalised name.
fn installed_packages(root: &Path) -> HashMap<String, Installed> {
    let mut out = HashMap::new();
    for dir in site_packages(root) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !entry.file_name().to_string_lossy().ends_with(".dist-info") {
                continue;
            }
            let Some(metadata) = crate::pymeta::read_metadata(&path.join("METADATA")) else {
                continue;
            };
            out.insert(
                normalize(&metadata.name),
                Installed {
                    version: metadata.version,
                    summary: metadata.summary,
                    dist_info: path,
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_requirements() {
        assert_eq!(normalize("Typing_Extensions"), "typing-extensions");
        assert_eq!(normalize("zope.interface"), "zope-interface");
        assert_eq!(
            requirement_name("requests[socks]>=2.31; python_version > '3.8'"),
            Some((
                "requests".into(),
                "[socks]>=2.31; python_version > '3.8'".into()
            ))
        );
        assert_eq!(requirement_name("rich==13.9.4").unwrap().0, "rich");
        assert_eq!(requirement_name("./local/pkg"), None);
        assert_eq!(requirement_name("-e ."), None);
    }
}
