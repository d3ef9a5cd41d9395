//! Configuration, data directories and the project registry shared by every devlens crate, and
//! the two seams every surface shares: [`Report`] for results and [`ErrorKind`] for failures.
//!
//! This crate stays light (serde, toml, dirs) because everything depends on it: the heavy
//! machinery (search engines, embedders, browsers) lives in the domain crates.

pub mod clock;
pub mod config;
pub mod config_edit;
pub mod error;
pub mod paths;
pub mod percent;
pub mod projects;
pub mod report;
pub mod suggest;

pub use config::{
    BrowserSettings, Config, ConfigOverrides, DocsSettings, EmbeddingSettings, KbSettings,
    LlmSettings, ProjectAuth, ServerSettings,
};
pub use error::CoreError;
pub use paths::DataDir;
pub use projects::{Project, ProjectRegistry};
pub use report::{Classify, ErrorKind, Report};
