//! The knowledge base: solutions a developer saved (snippets, answers, pages), found again by
//! meaning, and handed to an agent as a numbered, cited context — or answered from directly by a
//! configured LLM.
//!
//! - [`Solution`]s persist through a [`SolutionStore`] ([`store`]; embedded: one SQLite file
//!   with the chunk embeddings and an FTS5 keyword index); every write is one transaction, so a
//!   failed save or import loses nothing.
//! - Saving ([`save`]): long texts are cut into chunks that are all embedded ([`chunk`]); a
//!   solution scores as its best chunk; an edit re-embeds only the chunks it changed.
//! - [`KnowledgeBase::search`] ([`search`]): `semantic` (default), `keyword` or `hybrid`, with a
//!   similarity threshold calibrated per model; without embeddings it falls back to keyword
//!   search and says so.
//! - [`KnowledgeBase::ask`] ([`answer`]): the retrieved solutions as a token-bounded context
//!   with numbered sources, and, when an OpenAI-compatible endpoint is configured, an answer
//!   that cites them ([`llm`], devlens-embed's chat client, which API searches share).
//! - Export and import ([`transfer`]), re-embedding and status ([`embeddings`]), quality on a
//!   golden set ([`eval`]). What each operation answers is in [`results`].
//! - Two-way sync with the Chrome extension's copy ([`sync`]): last writer wins per solution,
//!   conflicts noted, deletions carried by the stores' tombstones, vectors exchanged when both
//!   sides embed with the same model.

pub mod answer;
pub mod chunk;
pub mod embeddings;
mod error;
pub mod eval;
mod keywords;
pub mod results;
pub mod save;
pub mod search;
mod solution;
pub mod store;
pub mod sync;
pub mod transfer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use devlens_core::{Config, DataDir, KbSettings, LlmSettings};
use devlens_embed::{Embedder, LazyEmbedder};

pub use answer::{Context, Source};
pub use devlens_embed::chat as llm;
pub use error::KbError;
pub use llm::ChatClient;
pub use results::{
    AskAnswer, AskRequest, Deleted, ImportReport, KbStatus, ReembedReport, Saved, SearchHit,
    SearchOptions, SearchResults, SolutionList, SolutionRead, SolutionSummary,
};
pub use search::{DEFAULT_MODE, SearchMode, calibrated_threshold};
pub use solution::{EXPORT_VERSION, ExportFile, NewSolution, Solution, SolutionPatch, valid_id};
pub use store::{ImportCounts, PostgresStore, SolutionStore, SqliteStore};
pub use sync::{
    Kept, RejectedChange, ServerChange, SyncConflict, SyncCounts, SyncOutcome, SyncReport,
    SyncRequest, WireVectors,
};

use crate::search::VectorCache;

/// Where the embedded knowledge base lives under the data dir.
pub fn store_path(data_dir: &DataDir) -> PathBuf {
    data_dir.subdir("kb").join("kb.sqlite")
}

/// Results per search unless asked otherwise.
pub const DEFAULT_TOP_K: usize = 5;
/// The most results one search returns.
pub const MAX_TOP_K: usize = 50;
/// Characters of text shown under each search result.
pub const EXCERPT_CHARS: usize = 240;
/// Solutions embedded at a time by `reembed`, which stores eight such batches per transaction
/// (a sync stores each batch as it is done).
pub const REEMBED_BATCH: usize = 32;

/// The knowledge base: the store, the embedder, the vectors in memory and the settings.
pub struct KnowledgeBase {
    store: Arc<dyn SolutionStore>,
    /// Replaceable while running: the dev panel's settings apply without a restart.
    settings: RwLock<KbSettings>,
    llm: LlmSettings,
    embedder: Arc<LazyEmbedder>,
    vectors: Mutex<Option<Arc<VectorCache>>>,
    /// Solution counts (all, and embedded by the model) at a generation, for stores that search
    /// vectors themselves: counting a big table on every search would cost more than the search.
    counts: Mutex<Option<(i64, String, store::Counts)>>,
    /// The keyword index in memory, caught up with the store on each search.
    keywords: keywords::KeywordCopy,
}

impl std::fmt::Debug for KnowledgeBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeBase")
            .field("store", &self.store)
            .finish()
    }
}

impl KnowledgeBase {
    /// Opens (creating if needed) the embedded knowledge base of `config`'s data dir.
    pub fn open(config: &Config) -> Result<Self, KbError> {
        Self::open_at(&store_path(&config.data_dir), config)
    }

    /// Opens the embedded knowledge base in the file `path` with `config`'s settings.
    pub fn open_at(path: &Path, config: &Config) -> Result<Self, KbError> {
        let mut embedding = config.file.embedding.clone();
        if embedding.model_dir.is_some() {
            embedding.model_dir = embedding.model_dir.map(|d| config.base_dir().join(d));
        }
        let embedder = Arc::new(LazyEmbedder::new(embedding, config.data_dir.clone()));
        Ok(Self::with_store(
            Arc::new(SqliteStore::open(path)?),
            config,
            embedder,
        ))
    }

    /// The knowledge base in `store`, with `config`'s settings, embedding with `embedder`
    /// (which a host may share with its other corpora).
    pub fn with_store(
        store: Arc<dyn SolutionStore>,
        config: &Config,
        embedder: Arc<LazyEmbedder>,
    ) -> Self {
        Self {
            store,
            settings: RwLock::new(config.file.kb.clone()),
            llm: config.file.llm.clone(),
            embedder,
            vectors: Mutex::new(None),
            counts: Mutex::new(None),
            keywords: keywords::KeywordCopy::default(),
        }
    }

    /// Uses `embedder` (or, with `Err(reason)`, none) instead of the configured one: tests, and
    /// hosts that already loaded a model.
    pub fn with_embedder(self, embedder: Result<Arc<dyn Embedder>, String>) -> Self {
        Self {
            embedder: Arc::new(LazyEmbedder::ready(embedder)),
            ..self
        }
    }

    /// Replaces the `[llm]` settings (tests, and hosts that configure the endpoint themselves).
    pub fn with_llm(self, llm: LlmSettings) -> Self {
        Self { llm, ..self }
    }

    /// Where the store lives, for status output and messages.
    pub fn location(&self) -> String {
        self.store.location()
    }

    /// The `[kb]` settings in effect.
    pub fn settings(&self) -> KbSettings {
        self.settings
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Puts `settings` in effect for every later search and answer (the config file changed).
    pub fn set_settings(&self, settings: KbSettings) {
        *self.settings.write().unwrap_or_else(|p| p.into_inner()) = settings;
    }

    /// The embedder, loaded on first use, or why there is none.
    pub async fn embedder(&self) -> Result<Arc<dyn Embedder>, String> {
        self.embedder.get().await
    }
}
