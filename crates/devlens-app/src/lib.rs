//! The devlens application layer: what a running devlens holds, and the requests every surface
//! makes of it.
//!
//! The CLI, the MCP server and the HTTP API are three ways into the same operations. So that
//! the same request gets the same validation and the same answer on each, they all go through
//! here:
//!
//! - [`App`] holds the services — the configuration, the API explorer, the library docs and the
//!   knowledge base (opened on first use and shared by every caller of the process, with one
//!   embedding model between them), the browser sessions, and the workspace every path a tool
//!   touches is confined to.
//! - The family modules ([`api`], [`audit`], [`browser`], [`contract`], [`debugger`], [`docs`],
//!   [`kb`], [`projects`], [`workspace`]) hold one argument type per operation — what an MCP
//!   tool's input schema shows and a REST route reads, deserialized as it is; the CLI fills it
//!   from its flags — and the call every surface makes. They turn what a caller sent into the
//!   domain's requests — naming an endpoint, choosing a spec, saving or updating a solution, the
//!   rule that an empty string clears a field — and say what is wrong when it cannot. The MCP
//!   server and the HTTP API name no domain crate: this is their one door.
//! - What the dev panel and the extension add: [`live`] (the browser's records as a change feed,
//!   read without moving the agent's marks), [`status`] (model, engine, index sizes),
//!   [`extension`] (pairing the Chrome extension with this server), [`tokens`] (the bearer
//!   tokens a server others reach requires).
//! - Results are the domain's own types, each a [`Report`] (serializable, plus compact text),
//!   re-exported by the family module that answers with them;
//!   failures are [`AppError`]s, each with an [`ErrorKind`] the surfaces map to an HTTP status,
//!   an exit code or an MCP error reply.
//!
//! Nothing here speaks MCP or HTTP: options that only make sense on one surface (MCP tool
//! families, a dynamic tool list) stay with that surface.

pub mod api;
pub mod artifacts;
pub mod audit;
pub mod browser;
pub mod contract;
pub mod debugger;
pub mod docs;
mod error;
pub mod extension;
pub mod kb;
pub mod live;
pub mod projects;
pub mod status;
pub mod store;
pub mod tokens;
pub mod workspace;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use devlens_core::Config;
use devlens_docs::{Docs, DocsError};
use devlens_embed::LazyEmbedder;
use devlens_kb::{KbError, KnowledgeBase};
use devlens_openapi::explorer::ApiExplorer;
use devlens_openapi::semantic::PostgresIndexStore;
use devlens_search::postgres::ServerDatabase;
use devlens_workspace::Workspace;

pub use devlens_browser::BrowserSessions;
pub use devlens_core::{Classify, ErrorKind, Report};
pub use error::AppError;

/// Which folder is the workspace, and whether the user chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceChoice {
    pub root: PathBuf,
    pub read_only: bool,
    /// Named by `--workspace`/`DEVLENS_WORKSPACE` or `[workspace] root`; otherwise the folder
    /// devlens was started in, which may turn out unfit (`/`, a home folder), leaving the file
    /// tools without a workspace rather than the server without a start.
    pub explicit: bool,
}

impl WorkspaceChoice {
    /// `--workspace` (`flag`), else `[workspace] root` (relative to the config file; only a
    /// trusted file may set it), else the current directory.
    pub fn resolve(config: &Config, flag: Option<&Path>, read_only_flag: bool) -> Self {
        let read_only = read_only_flag || config.file.workspace.read_only.unwrap_or(false);
        let configured = config
            .file
            .workspace
            .root
            .as_ref()
            .map(|root| config.base_dir().join(root));
        match flag.map(Path::to_path_buf).or(configured) {
            Some(root) => Self {
                root,
                read_only,
                explicit: true,
            },
            None => Self {
                root: PathBuf::from("."),
                read_only,
                explicit: false,
            },
        }
    }
}

/// The services of a running devlens. One per process, shared (behind an `Arc`) by every MCP
/// session, HTTP request and CLI command.
pub struct App {
    config: Config,
    api: ApiExplorer,
    /// The embedding model every corpus shares, loaded on first use.
    embedder: Arc<LazyEmbedder>,
    docs: Mutex<Option<Arc<Docs>>>,
    kb: Mutex<Option<Arc<KnowledgeBase>>>,
    browser: BrowserSessions,
    /// The project folder tools read and write (default: the current directory).
    workspace_root: PathBuf,
    read_only_workspace: bool,
    /// The user named the workspace (`--workspace`, `[workspace] root`): an unfit one is an
    /// error, not an artifacts-only workspace.
    workspace_explicit: bool,
    workspace: Mutex<Option<Arc<Workspace>>>,
    /// Which Chrome extensions may call this server.
    extension: extension::ExtensionPairing,
    /// The team server database every corpus keeps its data in, when `[store] url` (or
    /// `DEVLENS_DATABASE_URL`) names one.
    database: Option<Arc<ServerDatabase>>,
    /// A long-lived process (a server): work that can follow an answer runs in the background
    /// (docs chunk vectors after an ingest, and those a killed process left).
    background: bool,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("data_dir", &self.config.data_dir)
            .finish_non_exhaustive()
    }
}

impl App {
    /// The services for `config`. Nothing is opened yet: the docs and the knowledge base open
    /// on first use, the embedding model loads when a search first needs it.
    pub fn new(mut config: Config) -> Self {
        // A model folder in the config file is relative to that file, for every corpus alike.
        if let Some(dir) = config.file.embedding.model_dir.take() {
            config.file.embedding.model_dir = Some(config.base_dir().join(dir));
        }
        if let Some(dir) = config.file.embedding.reranker_dir.take() {
            config.file.embedding.reranker_dir = Some(config.base_dir().join(dir));
        }
        let embedder = Arc::new(LazyEmbedder::new(
            config.file.embedding.clone(),
            config.data_dir.clone(),
        ));
        let extension = extension::ExtensionPairing::new(&config.data_dir);
        // A team server's database, when one is configured; nothing connects until first use.
        let database = config.database_url().map(|url| ServerDatabase::open(&url));
        let mut api = ApiExplorer::new(config.clone()).with_lazy_embedder(Arc::clone(&embedder));
        if let Some(db) = &database {
            api = api.with_index_store(Arc::new(PostgresIndexStore::new(Arc::clone(db))));
        }
        Self {
            api,
            database,
            config,
            embedder,
            docs: Mutex::new(None),
            kb: Mutex::new(None),
            browser: BrowserSessions::new(),
            workspace_root: PathBuf::from("."),
            read_only_workspace: false,
            workspace_explicit: false,
            workspace: Mutex::new(None),
            extension,
            background: false,
        }
    }

    /// A long-lived process (`devlens serve`): an ingest answers once the docs are searchable
    /// and their chunk vectors follow in the background, as do those a killed process left
    /// (looked for when the docs open).
    pub fn with_background_work(mut self) -> Self {
        self.background = true;
        self
    }

    /// Confines tools to the project folder `root`; `read_only` keeps them from writing in it.
    pub fn with_workspace(mut self, root: &Path, read_only: bool) -> Self {
        self.workspace_root = root.to_path_buf();
        self.read_only_workspace = read_only;
        self.workspace_explicit = true;
        self.workspace = Mutex::new(None);
        self
    }

    /// The workspace `choice` names. One not chosen by the user (the folder devlens was started
    /// in) that cannot be a workspace (`/`, a home folder, the data dir) leaves tools the
    /// artifacts folder only, rather than failing every browser call.
    pub fn with_workspace_choice(mut self, choice: &WorkspaceChoice) -> Self {
        self = self.with_workspace(&choice.root, choice.read_only);
        self.workspace_explicit = choice.explicit;
        self
    }

    /// Uses `api` as the API explorer (tests, and hosts that configure it themselves).
    pub fn with_api(mut self, api: ApiExplorer) -> Self {
        self.api = api;
        self
    }

    /// Uses `docs` as the library docs.
    pub fn with_docs(self, docs: Docs) -> Self {
        *self.docs.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(docs));
        self
    }

    /// Uses `kb` as the knowledge base.
    pub fn with_kb(self, kb: KnowledgeBase) -> Self {
        *self.kb.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(kb));
        self
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The team server database, when one is configured (`None`: the embedded store).
    pub fn database(&self) -> Option<&Arc<ServerDatabase>> {
        self.database.as_ref()
    }

    /// Connects to the configured database and brings its schema up to date: a server checks
    /// this at start rather than failing its first request. Nothing to do for the embedded
    /// store.
    pub fn check_store(&self) -> Result<(), AppError> {
        match &self.database {
            Some(db) => db.check().map_err(|message| AppError::Failed {
                kind: ErrorKind::Unavailable,
                message: format!("the team server database is not usable: {message}"),
            }),
            None => Ok(()),
        }
    }

    /// The API explorer: specs, tags, endpoints, search, semantic indexes.
    pub fn api(&self) -> &ApiExplorer {
        &self.api
    }

    /// The library docs, opened on first use (creating the store). A failure is not
    /// remembered: the next call tries again, so fixing the cause needs no restart.
    pub fn docs(&self) -> Result<Arc<Docs>, DocsError> {
        let mut slot = self.docs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(docs) = slot.as_ref() {
            return Ok(Arc::clone(docs));
        }
        let store: Arc<dyn devlens_docs::DocsStore> = match &self.database {
            Some(db) => Arc::new(devlens_docs::PostgresDocsStore::new(Arc::clone(db))),
            None => Arc::new(devlens_docs::SqliteDocsStore::open(
                &devlens_docs::registry_path(&self.config.data_dir),
            )?),
        };
        let docs = Arc::new(
            Docs::with_store(store, &self.config, Arc::clone(&self.embedder))?
                .with_background_refinement(self.background),
        );
        if self.background && docs.refinements().is_ok_and(|r| !r.is_empty()) {
            // Chunk vectors a killed process left unfinished.
            docs.refine_in_background();
        }
        *slot = Some(Arc::clone(&docs));
        Ok(docs)
    }

    /// The knowledge base, opened on first use (creating the store). A failure is not
    /// remembered.
    pub fn kb(&self) -> Result<Arc<KnowledgeBase>, KbError> {
        let mut slot = self.kb.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(kb) = slot.as_ref() {
            return Ok(Arc::clone(kb));
        }
        let store: Arc<dyn devlens_kb::SolutionStore> = match &self.database {
            Some(db) => Arc::new(devlens_kb::PostgresStore::new(Arc::clone(db))),
            None => Arc::new(devlens_kb::SqliteStore::open(&devlens_kb::store_path(
                &self.config.data_dir,
            ))?),
        };
        let kb = Arc::new(KnowledgeBase::with_store(
            store,
            &self.config,
            Arc::clone(&self.embedder),
        ));
        *slot = Some(Arc::clone(&kb));
        Ok(kb)
    }

    /// The workspace, opened on first use: the project folder and the data dir, the only places
    /// a tool's path may lead.
    pub fn workspace(&self) -> Result<Arc<Workspace>, AppError> {
        let mut slot = self.workspace.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ws) = slot.as_ref() {
            return Ok(Arc::clone(ws));
        }
        let data_dir = self.config.data_dir.root();
        let ws = match Workspace::open(&self.workspace_root, data_dir, self.read_only_workspace) {
            Ok(ws) => Arc::new(ws),
            Err(devlens_workspace::WorkspaceError::InvalidInput(why))
                if !self.workspace_explicit =>
            {
                Arc::new(Workspace::artifacts_only(data_dir, why)?)
            }
            Err(e) => return Err(e.into()),
        };
        *slot = Some(Arc::clone(&ws));
        Ok(ws)
    }

    /// A workspace at `root` with this app's data dir and read-only setting: what a session
    /// works in when its client names its own project folder (MCP roots).
    pub fn workspace_at(&self, root: &Path) -> Result<Arc<Workspace>, AppError> {
        Ok(Arc::new(Workspace::open(
            root,
            self.config.data_dir.root(),
            self.read_only_workspace,
        )?))
    }

    /// The Chrome extension pairing: its token and the paired extension origins.
    pub fn extension(&self) -> &extension::ExtensionPairing {
        &self.extension
    }

    /// The browser connections (launched or attached) and their tabs.
    pub fn browser(&self) -> &BrowserSessions {
        &self.browser
    }

    /// Closes what the process started: browsers devlens launched close with it.
    pub async fn shutdown(&self) {
        self.browser.shutdown().await;
    }
}
