//! npm: the direct dependencies `package.json` declares (the root's and its workspaces'), the
//! version each resolves to in the lock file (`package-lock.json`, `pnpm-lock.yaml` or
//! `yarn.lock`), and the folder it is installed in (`node_modules/<name>`), whose own
//! `package.json` gives the installed version.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Dependency, Ecosystem, LockCache, Problem, relative};

/// The sections of `package.json` that name dependencies, and whether they are for development.
const SECTIONS: [(&str, bool); 4] = [
    ("dependencies", false),
    ("optionalDependencies", false),
    ("peerDependencies", false),
    ("devDependencies", true),
];

/// At most this many workspace members are read (a monorepo's `packages/*`).
const MAX_MEMBERS: usize = 500;

/// The npm dependencies of the project at `root` (nothing when it has no `package.json`).
pub(super) fn scan(root: &Path, locks: &LockCache, problems: &mut Vec<Problem>) -> Vec<Dependency> {
    let manifest = root.join("package.json");
    let Some(root_package) = read_package_json(root, &manifest, problems) else {
        return Vec::new();
    };
    // The root and its workspace members: each declares dependencies; members are not
    // dependencies of each other (npm links them).
    let mut projects = vec![(root.to_path_buf(), root_package.clone())];
    for dir in workspace_members(root, &root_package, problems) {
        if let Some(package) = read_package_json(root, &dir.join("package.json"), problems) {
            projects.push((dir, package));
        }
    }
    let members: Vec<String> = projects
        .iter()
        .filter_map(|(_, p)| p.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    let lock = read_lock(root, locks, problems);

    // name → (declared range, declared in, dev): the first project naming it wins, and a
    // runtime dependency beats a development one.
    let mut declared: BTreeMap<String, (String, PathBuf, bool)> = BTreeMap::new();
    for (dir, package) in &projects {
        for (section, dev) in SECTIONS {
            let Some(entries) = package.get(section).and_then(Value::as_object) else {
                continue;
            };
            for (name, range) in entries {
                if members.contains(name) || !valid_package_name(name) {
                    continue;
                }
                let range = range.as_str().unwrap_or("").to_string();
                let entry = declared
                    .entry(name.clone())
                    .or_insert_with(|| (range.clone(), dir.clone(), dev));
                if entry.2 && !dev {
                    *entry = (range, dir.clone(), dev);
                }
            }
        }
    }

    declared
        .into_iter()
        .map(|(name, (range, project, dev))| {
            // Installed beside the project that declares it, or hoisted to the root.
            let dir = [
                project.join("node_modules").join(&name),
                root.join("node_modules").join(&name),
            ]
            .into_iter()
            .find(|d| d.join("package.json").is_file())
            .and_then(|d| inside(root, &d, &name, problems));
            let installed = dir.as_ref().and_then(|d| installed_version(d));
            let locked = lock.version(&name, &range, &relative(root, &project));
            let description = dir
                .as_ref()
                .and_then(|d| read_json(&d.join("package.json")).ok())
                .and_then(|p| {
                    p.get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_default();
            Dependency {
                ecosystem: Ecosystem::Npm,
                id: Ecosystem::Npm.library_id(&name),
                name,
                declared: range,
                declared_in: relative(root, &project.join("package.json")),
                dev,
                installed,
                locked,
                description,
                dir,
            }
        })
        .collect()
}

/// The installed folder `dir`, canonical, when it lies inside the workspace: a package linked
/// from elsewhere (`npm link`) is not read, and that is said.
fn inside(root: &Path, dir: &Path, name: &str, problems: &mut Vec<Problem>) -> Option<PathBuf> {
    let canonical_root = std::fs::canonicalize(root).ok()?;
    let canonical = std::fs::canonicalize(dir).ok()?;
    if canonical.starts_with(&canonical_root) {
        Some(canonical)
    } else {
        problems.push(Problem::new(
            relative(root, dir),
            format!("{name} is linked to a folder outside the workspace; its docs are not read"),
        ));
        None
    }
}

/// npm's package names: lower-case letters, digits and `-._~`, optionally `@scope/`.
fn valid_package_name(name: &str) -> bool {
    let body = match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, rest)) if !scope.is_empty() => {
                if !scope.chars().all(package_char) {
                    return false;
                }
                rest
            }
            _ => return false,
        },
        None => name,
    };
    !body.is_empty() && name.len() <= 214 && body.chars().all(package_char)
}

fn package_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("line {}: {e}", e.line()))
}

/// A `package.json`, or `None` (with a problem when it exists but cannot be read).
fn read_package_json(root: &Path, path: &Path, problems: &mut Vec<Problem>) -> Option<Value> {
    if !path.is_file() {
        return None;
    }
    match read_json(path) {
        Ok(value) if value.is_object() => Some(value),
        Ok(_) => {
            problems.push(Problem::new(relative(root, path), "not a JSON object"));
            None
        }
        Err(why) => {
            problems.push(Problem::new(relative(root, path), why));
            None
        }
    }
}

/// The version in an installed package's own `package.json`.
fn installed_version(dir: &Path) -> Option<String> {
    read_json(&dir.join("package.json"))
        .ok()?
        .get("version")?
        .as_str()
        .map(str::to_string)
}

/// The folders of the workspace members `package.json` (`workspaces`) or `pnpm-workspace.yaml`
/// (`packages`) name: plain paths, `dir/*` and `dir/**`; `!pattern` leaves folders out.
fn workspace_members(root: &Path, package: &Value, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    let mut patterns: Vec<String> = match package.get("workspaces") {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(Value::Object(map)) => map
            .get("packages")
            .and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let pnpm = root.join("pnpm-workspace.yaml");
    if pnpm.is_file() {
        match std::fs::read_to_string(&pnpm)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_norway::from_str::<serde_norway::Value>(&t).map_err(yaml_error))
        {
            Ok(doc) => {
                if let Some(list) = doc.get("packages").and_then(|p| p.as_sequence()) {
                    patterns.extend(list.iter().filter_map(|p| p.as_str()).map(str::to_string));
                }
            }
            Err(why) => problems.push(Problem::new("pnpm-workspace.yaml", why)),
        }
    }
    let (excluded, included): (Vec<String>, Vec<String>) =
        patterns.into_iter().partition(|p| p.starts_with('!'));
    let excluded: Vec<PathBuf> = excluded
        .iter()
        .flat_map(|p| expand(root, p.trim_start_matches('!')))
        .collect();
    let mut members: Vec<PathBuf> = included
        .iter()
        .flat_map(|p| expand(root, p))
        .filter(|d| !excluded.contains(d) && d.join("package.json").is_file() && d != root)
        .collect();
    members.sort();
    members.dedup();
    members.truncate(MAX_MEMBERS);
    members
}

/// The folders a workspace pattern names, inside `root` only.
pub(super) fn expand(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let pattern = pattern
        .trim()
        .trim_start_matches("./")
        .trim_end_matches('/');
    if pattern.is_empty() || pattern.split('/').any(|s| s == "..") || pattern.starts_with('/') {
        return Vec::new();
    }
    let mut dirs = vec![root.to_path_buf()];
    for segment in pattern.split('/') {
        let mut next = Vec::new();
        for dir in &dirs {
            match segment {
                "**" => {
                    // Any depth, up to four levels below (node_modules never).
                    let mut stack = vec![(dir.clone(), 0)];
                    while let Some((d, depth)) = stack.pop() {
                        next.push(d.clone());
                        if depth < 4 {
                            stack.extend(subdirs(&d).into_iter().map(|s| (s, depth + 1)));
                        }
                    }
                }
                s if s.contains('*') => {
                    let (prefix, suffix) = s.split_once('*').unwrap_or((s, ""));
                    next.extend(subdirs(dir).into_iter().filter(|d| {
                        d.file_name().map(|n| n.to_string_lossy()).is_some_and(|n| {
                            n.starts_with(prefix) && n.ends_with(suffix.trim_start_matches('*'))
                        })
                    }));
                }
                s => next.push(dir.join(s)),
            }
        }
        dirs = next;
    }
    dirs.into_iter().filter(|d| d.is_dir()).collect()
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name != "node_modules"
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

fn yaml_error(e: serde_norway::Error) -> String {
    match e.location() {
        Some(at) => format!("line {}: {e}", at.line()),
        None => e.to_string(),
    }
}

/// What a lock file says each dependency resolved to.
#[derive(Debug, Clone, Default)]
pub(super) struct Lock {
    /// (project folder relative to the root, "" for the root; name) → version.
    by_project: HashMap<(String, String), String>,
    /// (name, declared range) → version (yarn.lock).
    by_range: HashMap<(String, String), String>,
    /// name → the version installed at the top of node_modules.
    top: HashMap<String, String>,
}

impl Lock {
    fn version(&self, name: &str, range: &str, project: &str) -> Option<String> {
        let project = if project == "." { "" } else { project };
        self.by_project
            .get(&(project.to_string(), name.to_string()))
            .or_else(|| self.by_range.get(&(name.to_string(), range.to_string())))
            .or_else(|| self.top.get(name))
            .cloned()
    }
}

/// The project's lock file, parsed (from the cache when its text has not changed).
fn read_lock(root: &Path, locks: &LockCache, problems: &mut Vec<Problem>) -> Lock {
    for (file, parse) in [
        (
            "package-lock.json",
            parse_package_lock as fn(&str) -> Result<Lock, String>,
        ),
        ("npm-shrinkwrap.json", parse_package_lock),
        ("pnpm-lock.yaml", parse_pnpm_lock),
        ("yarn.lock", parse_yarn_lock),
    ] {
        let path = root.join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        return match locks.get_or_parse(&path, &text, parse) {
            Ok(lock) => lock,
            Err(why) => {
                problems.push(Problem::new(file, why));
                Lock::default()
            }
        };
    }
    Lock::default()
}

/// `package-lock.json` / `npm-shrinkwrap.json`: lockfileVersion 2 and 3 (`packages`, keyed by
/// install path) and 1 (`dependencies`, keyed by name).
pub(super) fn parse_package_lock(text: &str) -> Result<Lock, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("line {}: {e}", e.line()))?;
    let mut lock = Lock::default();
    if let Some(packages) = doc.get("packages").and_then(Value::as_object) {
        for (path, entry) in packages {
            let Some(version) = entry.get("version").and_then(Value::as_str) else {
                continue;
            };
            // `node_modules/a`, `node_modules/@s/a`, `packages/app/node_modules/a`; nested
            // `node_modules/a/node_modules/b` are b's copy for a, not the project's.
            let Some((project, name)) = path.rsplit_once("node_modules/") else {
                continue;
            };
            let project = project.trim_end_matches('/');
            if project.contains("node_modules") {
                continue;
            }
            if project.is_empty() {
                lock.top.insert(name.to_string(), version.to_string());
            }
            lock.by_project
                .insert((project.to_string(), name.to_string()), version.to_string());
        }
    } else if let Some(deps) = doc.get("dependencies").and_then(Value::as_object) {
        for (name, entry) in deps {
            if let Some(version) = entry.get("version").and_then(Value::as_str) {
                lock.top.insert(name.clone(), version.to_string());
            }
        }
    } else if !doc.is_object() {
        return Err("not a JSON object".into());
    }
    Ok(lock)
}

/// `pnpm-lock.yaml`: `importers` (one per project, lockfile v6 and later; v5 without
/// `importers` lists the root's at the top level). Versions lose their peer suffix
/// (`1.2.3(react@18.3.1)`, v5's `1.2.3_react@18.3.1`).
pub(super) fn parse_pnpm_lock(text: &str) -> Result<Lock, String> {
    let doc: serde_norway::Value = serde_norway::from_str(text).map_err(yaml_error)?;
    let mut lock = Lock::default();
    let clean = |v: &str| -> String {
        v.split('(')
            .next()
            .unwrap_or(v)
            .split('_')
            .next()
            .unwrap_or(v)
            .to_string()
    };
    let mut add = |project: &str, importer: &serde_norway::Value| {
        for (section, _) in SECTIONS {
            let Some(entries) = importer.get(section).and_then(|s| s.as_mapping()) else {
                continue;
            };
            for (name, entry) in entries {
                let Some(name) = name.as_str() else { continue };
                let version = entry
                    .get("version")
                    .and_then(|v| v.as_str())
                    .or_else(|| entry.as_str());
                if let Some(version) = version.filter(|v| !v.starts_with("link:")) {
                    let version = clean(version);
                    if project.is_empty() {
                        lock.top.insert(name.to_string(), version.clone());
                    }
                    lock.by_project
                        .insert((project.to_string(), name.to_string()), version);
                }
            }
        }
    };
    match doc.get("importers").and_then(|i| i.as_mapping()) {
        Some(importers) => {
            for (project, importer) in importers {
                let project = project.as_str().unwrap_or("");
                add(if project == "." { "" } else { project }, importer);
            }
        }
        None if doc.is_mapping() => add("", &doc),
        None => return Err("not a YAML mapping".into()),
    }
    Ok(lock)
}

/// `yarn.lock`, classic (v1: `version "1.2.3"`) and Berry (`version: 1.2.3`, `name@npm:range`
/// keys): each entry's header lists the ranges it resolves.
pub(super) fn parse_yarn_lock(text: &str) -> Result<Lock, String> {
    let mut lock = Lock::default();
    let mut current: Vec<(String, String)> = Vec::new();
    let mut header_line = 0;
    let mut version_seen = true;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') && !line.starts_with('\t') {
            if !version_seen && !current.is_empty() {
                return Err(format!("line {header_line}: an entry without a version"));
            }
            let Some(header) = line.trim_end().strip_suffix(':') else {
                return Err(format!(
                    "line {number}: expected an entry header ending in `:`, found `{}`",
                    line.chars().take(60).collect::<String>()
                ));
            };
            if header.trim_matches('"') == "__metadata" {
                current.clear();
                version_seen = true;
                continue;
            }
            current = header
                .split(", ")
                .filter_map(|spec| {
                    let spec = spec.trim().trim_matches('"');
                    // The `@` that separates name and range is not a scope's leading one.
                    let at = spec[1..].find('@')? + 1;
                    let (name, range) = (&spec[..at], &spec[at + 1..]);
                    let range = range.strip_prefix("npm:").unwrap_or(range);
                    Some((name.to_string(), range.to_string()))
                })
                .collect();
            header_line = number;
            version_seen = false;
            continue;
        }
        let field = line.trim();
        if let Some(rest) = field.strip_prefix("version") {
            let rest = rest.trim_start_matches(':').trim().trim_matches('"');
            if line.len() - line.trim_start().len() <= 2 && !rest.is_empty() {
                for (name, range) in &current {
                    lock.by_range
                        .insert((name.clone(), range.clone()), rest.to_string());
                    lock.top
                        .entry(name.clone())
                        .or_insert_with(|| rest.to_string());
                }
                version_seen = true;
            }
        }
    }
    if !version_seen && !current.is_empty() {
        return Err(format!("line {header_line}: an entry without a version"));
    }
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_lock_v3_names_the_projects_copies_not_nested_ones() {
        let lock = parse_package_lock(
            r#"{"lockfileVersion": 3, "packages": {
                "": {"name": "app"},
                "node_modules/express": {"version": "4.21.2"},
                "node_modules/@types/node": {"version": "22.1.0"},
                "node_modules/express/node_modules/debug": {"version": "2.6.9"},
                "node_modules/debug": {"version": "4.3.7"},
                "packages/web/node_modules/express": {"version": "5.0.1"}
            }}"#,
        )
        .unwrap();
        assert_eq!(lock.version("express", "^4", "").as_deref(), Some("4.21.2"));
        assert_eq!(
            lock.version("@types/node", "*", "").as_deref(),
            Some("22.1.0")
        );
        assert_eq!(lock.version("debug", "*", "").as_deref(), Some("4.3.7"));
        assert_eq!(
            lock.version("express", "^5", "packages/web").as_deref(),
            Some("5.0.1")
        );
        let v1 = parse_package_lock(r#"{"dependencies": {"got": {"version": "11.8.6"}}}"#).unwrap();
        assert_eq!(v1.version("got", "^11", "").as_deref(), Some("11.8.6"));
        let broken = parse_package_lock("{\n  \"packages\": {\n    oops\n  }\n}").unwrap_err();
        assert!(broken.starts_with("line 3:"), "{broken}");
    }

    #[test]
    fn pnpm_lock_importers_and_peer_suffixes() {
        let lock = parse_pnpm_lock(
            "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      react-dom:\n        \
             specifier: ^18.3.0\n        version: 18.3.1(react@18.3.1)\n  packages/ui:\n    \
             devDependencies:\n      vitest:\n        specifier: ^2\n        version: 2.1.8\n      \
             app:\n        specifier: workspace:*\n        version: link:../app\n",
        )
        .unwrap();
        assert_eq!(
            lock.version("react-dom", "^18.3.0", "").as_deref(),
            Some("18.3.1")
        );
        assert_eq!(
            lock.version("vitest", "^2", "packages/ui").as_deref(),
            Some("2.1.8")
        );
        assert_eq!(lock.version("app", "workspace:*", "packages/ui"), None);
        let v5 = parse_pnpm_lock(
            "lockfileVersion: 5.4\ndependencies:\n  vue: 3.4.21_typescript@5.4.2\n",
        )
        .unwrap();
        assert_eq!(v5.version("vue", "^3", "").as_deref(), Some("3.4.21"));
        let broken = parse_pnpm_lock("importers:\n  .:\n    dependencies: [\n").unwrap_err();
        assert!(broken.starts_with("line "), "{broken}");
    }

    #[test]
    fn yarn_lock_classic_and_berry() {
        let classic = parse_yarn_lock(
            "# yarn lockfile v1\n\n\"@babel/core@^7.0.0\", \"@babel/core@^7.1.0\":\n  version \
             \"7.26.0\"\n  resolved \"https://registry.yarnpkg.com/x\"\n\nexpress@^4.19.0:\n  \
             version \"4.21.2\"\n  dependencies:\n    debug \"2.6.9\"\n",
        )
        .unwrap();
        assert_eq!(
            classic.version("@babel/core", "^7.1.0", "").as_deref(),
            Some("7.26.0")
        );
        assert_eq!(
            classic.version("express", "^4.19.0", "").as_deref(),
            Some("4.21.2")
        );
        let berry = parse_yarn_lock(
            "__metadata:\n  version: 8\n\n\"yargs@npm:^17.7.2\":\n  version: 17.7.2\n  \
             resolution: \"yargs@npm:17.7.2\"\n",
        )
        .unwrap();
        assert_eq!(
            berry.version("yargs", "^17.7.2", "").as_deref(),
            Some("17.7.2")
        );
        let broken =
            parse_yarn_lock("express@^4:\n  version \"4.21.2\"\nthis is not yarn\n").unwrap_err();
        assert!(broken.starts_with("line 3:"), "{broken}");
    }

    #[test]
    fn package_names() {
        for ok in ["express", "@types/node", "lodash.merge", "date-fns"] {
            assert!(valid_package_name(ok), "{ok}");
        }
        for bad in ["", "@", "@scope", "../x", "a b", "@s/../x"] {
            assert!(!valid_package_name(bad), "{bad}");
        }
    }
}
