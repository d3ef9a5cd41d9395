//! Configuration, data directories and the project registry shared by every devlens crate, and
//! the two seams every surface shares: [`Report`] for results and [`ErrorKind`] for failures.
//!
//! It also holds the two trust gates every crate uses: [`outbound`] (the one guard every request
//! to another machine passes) and [`trust`] (which keys a repository's `devlens.toml` may set).
//!
//! This crate stays light (serde, toml, dirs, and reqwest for the guard's clients, which every
//! fetching crate builds anyway) because everything depends on it: the heavy machinery (search
//! engines, embedders, browsers) lives in the domain crates.

pub mod clock;
pub mod config;
pub mod config_edit;
pub mod error;
pub mod outbound;
pub mod paths;
pub mod percent;
pub mod progress;
pub mod projects;
pub mod report;
pub mod suggest;
pub mod tls;
pub mod trust;

pub use config::{
    BrowserSettings, Config, ConfigOverrides, DocsSettings, EmbeddingSettings, KbSettings,
    LlmSettings, NetworkSettings, ProjectAuth, RerankChoice, SearchSettings, ServerSettings,
    WorkspaceSettings,
};
pub use error::CoreError;
pub use paths::DataDir;
pub use projects::{Project, ProjectRegistry};
pub use report::{Classify, ErrorKind, Report};
