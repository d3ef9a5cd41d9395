//! The project registry: named projects, each with an OpenAPI/Swagger spec, and the active one.
//!
//! Projects come from two places: `devlens.toml` (`[[projects]]`) and projects files in the
//! `projects.json` format — the one devlens manages in its data directory, plus an extra
//! one named by `projects_file` in the config or `DEVLENS_PROJECTS_FILE`. Such files are
//! written by hand in several shapes, so all of these are read:
//!
//! ```json
//! [{"name": "pets", "swaggerUrl": "https://…/openapi.json"}]
//! {"projects": [{"name": "pets", "swaggerUrl": "…"}], "defaultProject": "pets"}
//! {"projects": {"pets": {"config": {"SWAGGER_URL": "…"}}}, "defaultProject": "pets"}
//! ```
//!
//! A relative spec path is relative to the file that declares it, so a checked-in projects file
//! works from any working directory.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::{Config, CoreError, paths::write_atomic};

/// Keys that name a project's spec, in the order they are tried.
const SPEC_KEYS: &[&str] = &[
    "spec",
    "swaggerUrl",
    "swagger_url",
    "SWAGGER_URL",
    "openapiUrl",
    "openApiUrl",
    "specUrl",
    "url",
    "swaggerFile",
    "file",
    "path",
];
const ACTIVE_KEYS: &[&str] = &["activeProject", "defaultProject", "active_project"];

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Project {
    pub name: String,
    /// The spec location: an http(s) URL or an absolute file path.
    pub spec: Option<String>,
    /// Where the API runs, when declared (`base_url` in devlens.toml, `baseUrl` in a projects
    /// file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// How calls authenticate (devlens.toml only).
    #[serde(skip)]
    pub auth: Option<crate::config::ProjectAuth>,
    /// The file that declares the project.
    #[serde(skip)]
    pub declared_in: PathBuf,
    /// Whether the user declared the project (a file of theirs, a trusted `devlens.toml`):
    /// credentials are sent for it. A project an untrusted `./devlens.toml` declares gets none,
    /// whatever the environment holds for its name.
    #[serde(skip)]
    pub trusted: bool,
}

impl Project {
    /// The prefix of the environment variables that configure this project when the config
    /// does not: `DEVLENS_<NAME>_` with the name uppercased and other characters as `_`.
    pub fn env_prefix(&self) -> String {
        let name: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        format!("DEVLENS_{name}_")
    }
}

#[derive(Debug, Clone)]
pub struct ProjectRegistry {
    projects: Vec<Project>,
    /// The active project as stored (state file, config, projects file), before any override.
    stored_active: Option<String>,
    managed_file: PathBuf,
    state_file: PathBuf,
}

impl ProjectRegistry {
    pub fn load(config: &Config) -> Result<Self, CoreError> {
        let mut projects: Vec<Project> = Vec::new();
        let mut file_active = None;
        let base = config.base_dir();
        let config_origin = config.config_path.clone().unwrap_or_default();
        for entry in &config.file.projects {
            validate_name(&entry.name)?;
            push_unique(
                &mut projects,
                Project {
                    name: entry.name.clone(),
                    spec: entry.spec.as_deref().map(|s| absolutize(s, &base)),
                    base_url: entry.base_url.clone(),
                    auth: entry.auth.clone(),
                    declared_in: config_origin.clone(),
                    trusted: config.trust.is_trusted(),
                },
            );
        }
        // (file, whether the user's): the config's own projects file is as trusted as the config.
        let mut files = vec![(config.data_dir.projects_file(), true)];
        if let Some(extra) = &config.file.projects_file {
            files.push((base.join(extra), config.trust.is_trusted()));
        }
        if let Some(extra) = std::env::var_os("DEVLENS_PROJECTS_FILE").filter(|v| !v.is_empty()) {
            files.push((PathBuf::from(extra), true));
        }
        for (file, trusted) in files {
            if !file.is_file() {
                continue;
            }
            let (declared, active) = read_projects_file(&file, trusted)?;
            for project in declared {
                push_unique(&mut projects, project);
            }
            file_active = file_active.or(active);
        }
        let state_file = config.data_dir.state_file();
        let state_active = read_state(&state_file)
            .get("activeProject")
            .and_then(Value::as_str)
            .map(str::to_string);
        let stored_active = state_active
            .or_else(|| config.file.active_project.clone())
            .or(file_active);
        Ok(Self {
            projects,
            stored_active,
            managed_file: config.data_dir.projects_file(),
            state_file,
        })
    }

    pub fn projects(&self) -> &[Project] {
        &self.projects
    }

    pub fn get(&self, name: &str) -> Result<&Project, CoreError> {
        self.projects
            .iter()
            .find(|p| p.name == name)
            .or_else(|| {
                self.projects
                    .iter()
                    .find(|p| p.name.eq_ignore_ascii_case(name))
            })
            .ok_or_else(|| CoreError::unknown_project(name, &self.names()))
    }

    /// The active project's name: `DEVLENS_PROJECT` (or `PROJECT_NAME`, as older setups name it), then the
    /// stored choice, then the only project when there is exactly one.
    pub fn active_name(&self) -> Option<String> {
        ["DEVLENS_PROJECT", "PROJECT_NAME"]
            .iter()
            .filter_map(|var| std::env::var(var).ok())
            .find(|v| !v.is_empty())
            .or_else(|| self.stored_active.clone())
            .or_else(|| match self.projects.as_slice() {
                [only] => Some(only.name.clone()),
                _ => None,
            })
    }

    /// The project named, or the active one.
    pub fn resolve(&self, name: Option<&str>) -> Result<&Project, CoreError> {
        match name {
            Some(name) => self.get(name),
            None => match self.active_name() {
                Some(active) => self.get(&active),
                None => Err(CoreError::NoActiveProject),
            },
        }
    }

    /// The spec location of the project named (or the active one).
    pub fn spec_of(&self, name: Option<&str>) -> Result<(String, String), CoreError> {
        let project = self.resolve(name)?;
        let spec = project
            .spec
            .clone()
            .ok_or_else(|| CoreError::ProjectWithoutSpec {
                name: project.name.clone(),
            })?;
        Ok((project.name.clone(), spec))
    }

    pub fn names(&self) -> Vec<String> {
        self.projects.iter().map(|p| p.name.clone()).collect()
    }

    /// Whether `name` can name a project (letters, digits, `.`, `_`, `-`; at most 100).
    pub fn check_name(&self, name: &str) -> Result<(), CoreError> {
        validate_name(name)
    }

    /// Adds or replaces a project in the managed `projects.json`, keeping whatever else the file
    /// holds (other keys, other projects, its shape).
    pub fn add(&mut self, name: &str, spec: &str) -> Result<Project, CoreError> {
        validate_name(name)?;
        let spec = absolutize(spec, &std::env::current_dir().unwrap_or_default());
        let mut doc = read_json_or(&self.managed_file, json!({"projects": []}))?;
        upsert_project(&mut doc, name, &spec);
        write_json(&self.managed_file, &doc)?;
        let project = Project {
            name: name.to_string(),
            spec: Some(spec),
            base_url: None,
            auth: None,
            declared_in: self.managed_file.clone(),
            trusted: true,
        };
        self.projects.retain(|p| p.name != name);
        self.projects.push(project.clone());
        Ok(project)
    }

    /// Removes a project from the managed `projects.json`. Projects declared elsewhere (the
    /// config file, an extra projects file) are not devlens's to delete: say where they live.
    pub fn remove(&mut self, name: &str) -> Result<(), CoreError> {
        let project = self.get(name)?.clone();
        if project.declared_in != self.managed_file {
            return Err(CoreError::UnknownProject {
                name: name.to_string(),
                hint: format!(
                    " It is declared in {}; remove it there.",
                    project.declared_in.display()
                ),
            });
        }
        let mut doc = read_json_or(&self.managed_file, json!({"projects": []}))?;
        remove_project(&mut doc, &project.name);
        write_json(&self.managed_file, &doc)?;
        self.projects.retain(|p| p.name != project.name);
        Ok(())
    }

    /// Makes `name` the active project (stored in the data directory's `state.json`).
    pub fn set_active(&mut self, name: &str) -> Result<(), CoreError> {
        let name = self.get(name)?.name.clone();
        let mut state = read_state(&self.state_file);
        state.insert("activeProject".into(), Value::String(name.clone()));
        write_json(&self.state_file, &Value::Object(state))?;
        self.stored_active = Some(name);
        Ok(())
    }
}

fn validate_name(name: &str) -> Result<(), CoreError> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(CoreError::InvalidProjectName {
            name: name.to_string(),
        })
    }
}

fn push_unique(projects: &mut Vec<Project>, project: Project) {
    // The first declaration wins: the config file is read before projects files.
    if !projects.iter().any(|p| p.name == project.name) {
        projects.push(project);
    }
}

fn is_url(spec: &str) -> bool {
    let lower = spec.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

fn absolutize(spec: &str, base: &Path) -> String {
    if is_url(spec) {
        return spec.to_string();
    }
    let path = spec.strip_prefix("file://").unwrap_or(spec);
    let path = Path::new(path);
    if path.is_absolute() {
        path.display().to_string()
    } else {
        let joined = base.join(path);
        std::path::absolute(&joined)
            .unwrap_or(joined)
            .display()
            .to_string()
    }
}

fn read_json_or(path: &Path, default: Value) -> Result<Value, CoreError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| CoreError::ProjectsSyntax {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(default),
        Err(source) => Err(CoreError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn write_json(path: &Path, value: &Value) -> Result<(), CoreError> {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

/// The state file is a cache of choices: unreadable means "no choice made", never an error.
fn read_state(path: &Path) -> Map<String, Value> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

fn spec_in(object: &Map<String, Value>) -> Option<String> {
    let direct = SPEC_KEYS
        .iter()
        .find_map(|k| object.get(*k).and_then(Value::as_str));
    let nested = || {
        object
            .get("config")
            .and_then(Value::as_object)
            .and_then(spec_in)
    };
    direct.map(str::to_string).or_else(nested)
}

fn read_projects_file(
    path: &Path,
    trusted: bool,
) -> Result<(Vec<Project>, Option<String>), CoreError> {
    let doc = read_json_or(path, Value::Null)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let syntax = |message: &str| CoreError::ProjectsSyntax {
        path: path.to_path_buf(),
        message: message.to_string(),
    };
    let (list, active) = match &doc {
        Value::Array(_) => (&doc, None),
        Value::Object(map) => (
            map.get("projects")
                .ok_or_else(|| syntax("no \"projects\" key"))?,
            ACTIVE_KEYS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
                .map(str::to_string),
        ),
        _ => return Err(syntax("expected a JSON array or object")),
    };
    let entries: Vec<(String, &Map<String, Value>)> = match list {
        Value::Array(items) => items
            .iter()
            .map(|item| {
                let object = item
                    .as_object()
                    .ok_or_else(|| syntax("each project must be an object"))?;
                let name = object
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| syntax("a project has no \"name\""))?;
                Ok((name.to_string(), object))
            })
            .collect::<Result<_, CoreError>>()?,
        Value::Object(map) => map
            .iter()
            .map(|(name, item)| {
                let object = item
                    .as_object()
                    .ok_or_else(|| syntax("each project must be an object"))?;
                Ok((name.clone(), object))
            })
            .collect::<Result<_, CoreError>>()?,
        _ => return Err(syntax("\"projects\" must be a list or an object")),
    };
    let mut projects = Vec::with_capacity(entries.len());
    for (name, object) in entries {
        validate_name(&name).map_err(|_| syntax(&format!("invalid project name '{name}'")))?;
        // An untrusted file names specs in its own folder (or at URLs) only.
        let spec = spec_in(object).filter(|s| trusted || crate::config::stays_in_folder(base, s));
        projects.push(Project {
            name,
            spec: spec.map(|s| absolutize(&s, base)),
            base_url: ["baseUrl", "base_url"]
                .iter()
                .find_map(|k| object.get(*k).and_then(Value::as_str))
                .map(str::to_string),
            auth: None,
            declared_in: path.to_path_buf(),
            trusted,
        });
    }
    Ok((projects, active))
}

fn upsert_project(doc: &mut Value, name: &str, spec: &str) {
    if doc.is_array() {
        *doc = json!({ "projects": doc.take() });
    }
    let Some(root) = doc.as_object_mut() else {
        *doc = json!({"projects": [{"name": name, "swaggerUrl": spec}]});
        return;
    };
    let projects = root.entry("projects").or_insert_with(|| json!([]));
    match projects {
        Value::Object(map) => {
            let entry = map.entry(name.to_string()).or_insert_with(|| json!({}));
            if let Some(obj) = entry.as_object_mut() {
                let target = match obj.get_mut("config").and_then(Value::as_object_mut) {
                    Some(config) => config,
                    None => obj,
                };
                set_spec(target, spec);
            }
        }
        Value::Array(items) => {
            let existing = items
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .find(|o| o.get("name").and_then(Value::as_str) == Some(name));
            match existing {
                Some(object) => set_spec(object, spec),
                None => items.push(json!({"name": name, "swaggerUrl": spec})),
            }
        }
        other => *other = json!([{"name": name, "swaggerUrl": spec}]),
    }
}

fn set_spec(object: &mut Map<String, Value>, spec: &str) {
    let key = SPEC_KEYS
        .iter()
        .find(|k| object.contains_key(**k))
        .copied()
        .unwrap_or("swaggerUrl");
    object.insert(key.to_string(), Value::String(spec.to_string()));
}

fn remove_project(doc: &mut Value, name: &str) {
    match doc.get_mut("projects") {
        Some(Value::Object(map)) => {
            map.remove(name);
        }
        Some(Value::Array(items)) => {
            items.retain(|item| item.get("name").and_then(Value::as_str) != Some(name));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_in(dir: &Path) -> Config {
        Config::with_data_dir(dir)
    }

    #[test]
    fn reads_every_seed_shape_with_relative_paths_resolved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("projects.json"),
            r#"{"projects": {"admin": {"config": {"SWAGGER_URL": "https://api.example.com/swagger.json"}},
                             "local": {"swaggerUrl": "specs/local.yaml"}},
                "defaultProject": "admin"}"#,
        )
        .unwrap();
        let registry = ProjectRegistry::load(&config_in(dir.path())).unwrap();
        assert_eq!(registry.names(), vec!["admin", "local"]);
        assert_eq!(
            registry.get("admin").unwrap().spec.as_deref(),
            Some("https://api.example.com/swagger.json")
        );
        let local = registry.get("local").unwrap().spec.clone().unwrap();
        assert!(Path::new(&local).is_absolute());
        assert!(local.ends_with("specs/local.yaml"));
        assert_eq!(registry.resolve(None).unwrap().name, "admin");
    }

    #[test]
    fn add_use_and_remove_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path());
        let mut registry = ProjectRegistry::load(&config).unwrap();
        registry
            .add("pets", "https://example.com/pets.json")
            .unwrap();
        registry
            .add("github", "https://example.com/gh.json")
            .unwrap();
        registry.set_active("github").unwrap();

        let reloaded = ProjectRegistry::load(&config).unwrap();
        assert_eq!(reloaded.names(), vec!["pets", "github"]);
        assert_eq!(reloaded.resolve(None).unwrap().name, "github");

        let mut reloaded = reloaded;
        reloaded.remove("pets").unwrap();
        let again = ProjectRegistry::load(&config).unwrap();
        assert_eq!(again.names(), vec!["github"]);
    }

    #[test]
    fn unknown_project_suggests_close_names() {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = ProjectRegistry::load(&config_in(dir.path())).unwrap();
        registry
            .add("petstore", "https://example.com/p.json")
            .unwrap();
        let err = registry.get("petstor").unwrap_err().to_string();
        assert!(err.contains("Did you mean: petstore"), "{err}");
    }

    #[test]
    fn a_broken_projects_file_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("projects.json"), "{not json").unwrap();
        let err = ProjectRegistry::load(&config_in(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("projects.json"), "{err}");
    }

    #[test]
    fn bad_names_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = ProjectRegistry::load(&config_in(dir.path())).unwrap();
        assert!(registry.add("../etc", "x.json").is_err());
        assert!(registry.add("", "x.json").is_err());
    }
}
