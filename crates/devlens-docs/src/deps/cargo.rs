//! Cargo: the direct dependencies `Cargo.toml` declares (the package's, and every workspace
//! member's, `workspace = true` entries taken from `[workspace.dependencies]`), the version each
//! resolves to in `Cargo.lock`, and its sources in Cargo's registry cache
//! (`$CARGO_HOME/registry/src/<index>/<name>-<version>/`), which hold its README and the doc
//! comments of its code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Dependency, Ecosystem, Problem, relative, toml_error};

/// The sections of a manifest that name dependencies, and whether they are for development.
const SECTIONS: [(&str, bool); 3] = [
    ("dependencies", false),
    ("build-dependencies", true),
    ("dev-dependencies", true),
];

fn read_toml(root: &Path, path: &Path, problems: &mut Vec<Problem>) -> Option<toml::Table> {
    let text = std::fs::read_to_string(path).ok()?;
    match toml::from_str(&text) {
        Ok(table) => Some(table),
        Err(e) => {
            problems.push(Problem::new(relative(root, path), toml_error(&text, &e)));
            None
        }
    }
}

/// The Cargo dependencies of the project at `root` (nothing without a Cargo.toml).
pub(super) fn scan(root: &Path, problems: &mut Vec<Problem>) -> Vec<Dependency> {
    let manifest = root.join("Cargo.toml");
    if !manifest.is_file() {
        return Vec::new();
    }
    let Some(top) = read_toml(root, &manifest, problems) else {
        return Vec::new();
    };
    let workspace = top.get("workspace");
    let shared = workspace
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
        .cloned()
        .unwrap_or_default();
    let mut manifests = vec![(manifest.clone(), top.clone())];
    for member in workspace
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str())
    {
        for dir in super::npm::expand(root, member) {
            let path = dir.join("Cargo.toml");
            if path.is_file()
                && path != manifest
                && let Some(table) = read_toml(root, &path, problems)
            {
                manifests.push((path, table));
            }
        }
    }
    let members: Vec<String> = manifests
        .iter()
        .filter_map(|(_, t)| t.get("package")?.get("name")?.as_str().map(str::to_string))
        .collect();

    // crate name → (requirement, manifest, dev): a normal dependency wins over a dev one.
    let mut declared: BTreeMap<String, (String, String, bool)> = BTreeMap::new();
    for (path, table) in &manifests {
        for (section, dev) in SECTIONS {
            let Some(entries) = table.get(section).and_then(|s| s.as_table()) else {
                continue;
            };
            for (key, spec) in entries {
                let spec = match spec.get("workspace").and_then(|w| w.as_bool()) {
                    Some(true) => shared.get(key).unwrap_or(spec),
                    _ => spec,
                };
                if spec.get("path").is_some() || spec.get("git").is_some() {
                    continue;
                }
                let name = spec
                    .get("package")
                    .and_then(|p| p.as_str())
                    .unwrap_or(key)
                    .to_string();
                if members.contains(&name) {
                    continue;
                }
                let requirement = match spec {
                    toml::Value::String(v) => v.clone(),
                    other => other
                        .get("version")
                        .and_then(|v| v.as_str())
                        .unwrap_or_default()
                        .to_string(),
                };
                let entry = (requirement, relative(root, path), dev);
                // Replaced only when the known one is for development and this one is not.
                if declared.get(&name).is_none_or(|known| known.2 && !dev) {
                    declared.insert(name, entry);
                }
            }
        }
    }
    if declared.is_empty() {
        return Vec::new();
    }
    let locked = read_lock(root, problems);
    let sources = registry_sources();
    declared
        .into_iter()
        .map(|(name, (requirement, declared_in, dev))| {
            let version = pick_version(locked.get(&name), &requirement);
            let dir = version.as_ref().and_then(|v| {
                sources
                    .iter()
                    .map(|index| index.join(format!("{name}-{v}")))
                    .find(|d| d.join("Cargo.toml").is_file())
            });
            let description = dir
                .as_ref()
                .and_then(|d| std::fs::read_to_string(d.join("Cargo.toml")).ok())
                .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
                .and_then(|t| {
                    t.get("package")?
                        .get("description")?
                        .as_str()
                        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
                })
                .unwrap_or_default();
            Dependency {
                ecosystem: Ecosystem::Crates,
                id: Ecosystem::Crates.library_id(&name),
                installed: dir.as_ref().and(version.clone()),
                locked: version,
                name,
                declared: requirement,
                declared_in,
                dev,
                description,
                dir,
            }
        })
        .collect()
}

/// `Cargo.lock`: the versions of each registry crate.
fn read_lock(root: &Path, problems: &mut Vec<Problem>) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let path = root.join("Cargo.lock");
    if !path.is_file() {
        return out;
    }
    let Some(lock) = read_toml(root, &path, problems) else {
        return out;
    };
    for package in lock
        .get("package")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
    {
        let registry = package
            .get("source")
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.starts_with("registry+") || s.starts_with("sparse+"));
        if let (Some(name), Some(version), true) = (
            package.get("name").and_then(|n| n.as_str()),
            package.get("version").and_then(|v| v.as_str()),
            registry,
        ) {
            out.entry(name.to_string())
                .or_default()
                .push(version.to_string());
        }
    }
    out
}

/// The locked version a requirement means: the only one, else the newest whose major (or
/// `0.minor`) the requirement names, else the newest.
fn pick_version(versions: Option<&Vec<String>>, requirement: &str) -> Option<String> {
    let versions = versions?;
    let numbers = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .take(3)
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    let mut sorted = versions.clone();
    sorted.sort_by_key(|v| numbers(v));
    let wanted = numbers(requirement.trim_start_matches(['^', '=', '~', ' ']));
    let compatible = |v: &String| {
        let have = numbers(v);
        match (wanted.first(), have.first()) {
            (Some(0), Some(0)) => wanted.get(1) == have.get(1),
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    };
    sorted
        .iter()
        .rev()
        .find(|v| compatible(v))
        .or(sorted.last())
        .cloned()
}

/// The unpacked crates of Cargo's registry cache, one folder per index.
fn registry_sources() -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry/src")) else {
        return Vec::new();
    };
    let mut indexes: Vec<PathBuf> = std::fs::read_dir(src)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    indexes.sort();
    indexes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locked_version_a_requirement_means() {
        let versions = vec![
            "0.13.1".to_string(),
            "0.22.1".to_string(),
            "0.23.1".to_string(),
        ];
        assert_eq!(
            pick_version(Some(&versions), "0.22").as_deref(),
            Some("0.22.1")
        );
        assert_eq!(
            pick_version(Some(&versions), "^0.13.0").as_deref(),
            Some("0.13.1")
        );
        assert_eq!(
            pick_version(Some(&versions), "*").as_deref(),
            Some("0.23.1")
        );
        let one = vec!["1.0.104".to_string()];
        assert_eq!(pick_version(Some(&one), "1").as_deref(), Some("1.0.104"));
        assert_eq!(pick_version(None, "1"), None);
    }
}
