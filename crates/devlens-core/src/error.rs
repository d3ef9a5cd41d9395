//! Errors of configuration and project lookup. Every message says what to do next.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}. Fix the file or remove it to use the defaults.")]
    ConfigSyntax { path: PathBuf, message: String },
    #[error("{path}: {message}.")]
    ConfigSetting { path: PathBuf, message: String },
    #[error(
        "cannot save the settings into {path}: {message}. Nothing was changed; set them by hand \
         in the file's [kb] table."
    )]
    ConfigEdit { path: PathBuf, message: String },
    #[error(
        "{path} is not a projects file devlens understands: {message}. Expected a JSON list of \
         projects such as [{{\"name\": \"petstore\", \"swaggerUrl\": \"https://…/openapi.json\"}}]."
    )]
    ProjectsSyntax { path: PathBuf, message: String },
    #[error("unknown project '{name}'.{hint}")]
    UnknownProject { name: String, hint: String },
    #[error(
        "no project given and no active project set. Pass --project NAME (or --spec PATH_OR_URL), \
         or add one with `devlens project add NAME SPEC` and select it with `devlens project use NAME`."
    )]
    NoActiveProject,
    #[error(
        "project '{name}' has no OpenAPI/Swagger spec. Add one with `devlens project add {name} SPEC`."
    )]
    ProjectWithoutSpec { name: String },
    #[error(
        "invalid project name '{name}': use letters, digits, '.', '_' or '-' (at most 100 characters)"
    )]
    InvalidProjectName { name: String },
    #[error(
        "no data directory: set DEVLENS_DATA_DIR or pass --data-dir (the platform data directory \
         could not be determined)"
    )]
    NoDataDir,
}

impl CoreError {
    pub(crate) fn unknown_project(name: &str, known: &[String]) -> Self {
        let hint = if known.is_empty() {
            " No projects are configured: add one with `devlens project add NAME SPEC`.".to_string()
        } else {
            let close = crate::suggest::closest(name, known.iter().map(String::as_str), 3);
            if close.is_empty() {
                format!(" Known projects: {}.", known.join(", "))
            } else {
                format!(" Did you mean: {}?", close.join(", "))
            }
        };
        CoreError::UnknownProject {
            name: name.to_string(),
            hint,
        }
    }
}
