//! What a running devlens has loaded and stored (`GET /api/status`, the dev panel's Status
//! page): the embedding model, the engine that runs it and whether it loads, and how big each
//! index is — the API projects' vectors, the docs libraries' chunks, the knowledge base's
//! solutions.
//!
//! A part that cannot be read (a spec that does not load, a store that does not open) is a note
//! on that part, never a failure of the whole answer: the page is most needed when something is
//! wrong. Nothing here names a secret: the provider is shown, its API key never.

use std::fmt::Write as _;

use serde::Serialize;

use devlens_core::Report;
use devlens_embed::{resolve_model_dir, resolve_provider};

use crate::App;
use crate::api::spec_selector;

/// The whole status.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub version: String,
    /// Where indexes, the knowledge base and the docs are stored.
    pub data_dir: String,
    pub embedding: EmbeddingStatus,
    pub api: ApiIndexes,
    pub docs: DocsIndex,
    pub kb: KbIndex,
}

/// The embedding model every corpus shares.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddingStatus {
    /// `local`, `openai`, `gemini` or `ollama` (from `[embedding] provider` and
    /// `EMBEDDING_PROVIDER`).
    pub provider: String,
    /// The model as the provider names it, once it loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dims: Option<usize>,
    /// `candle` or `onnx (<file>)` for the local model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The local model's folder, when one was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_dir: Option<String>,
    pub loaded: bool,
    /// Why it does not load, and what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The projects' semantic indexes.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiIndexes {
    pub projects: Vec<ProjectIndex>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One project's index.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectIndex {
    pub name: String,
    pub active: bool,
    pub indexed: bool,
    pub vectors: usize,
    /// The spec changed since the build.
    pub stale: bool,
    /// What to do, when something needs doing (or why the spec could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// The library docs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocsIndex {
    pub libraries: Vec<LibraryIndex>,
    pub chunks: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One library.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LibraryIndex {
    pub id: String,
    pub name: String,
    /// Newest first.
    pub versions: Vec<String>,
    /// Chunks of the newest version.
    pub chunks: usize,
}

/// The knowledge base.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KbIndex {
    pub solutions: usize,
    /// Solutions with vectors of the current model.
    pub embedded: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Reads the status; loads the embedding model if nothing has yet (that is the question
/// "does it load").
pub async fn status(app: &App) -> ServerStatus {
    ServerStatus {
        version: env!("CARGO_PKG_VERSION").to_string(),
        data_dir: app.config().data_dir.root().display().to_string(),
        embedding: embedding(app).await,
        api: api_indexes(app).await,
        docs: docs_index(app),
        kb: kb_index(app).await,
    }
}

async fn embedding(app: &App) -> EmbeddingStatus {
    let settings = &app.config().file.embedding;
    let provider = resolve_provider(settings, &|name| std::env::var(name).ok());
    let model_dir = match &provider {
        Ok(devlens_embed::Provider::Local) => {
            resolve_model_dir(settings, &app.config().data_dir).ok()
        }
        _ => None,
    };
    let mut status = EmbeddingStatus {
        provider: provider
            .as_ref()
            .map_or_else(|_| "unknown".to_string(), |p| p.as_str().to_string()),
        model: None,
        dims: None,
        engine: None,
        model_dir: model_dir.map(|d| d.display().to_string()),
        loaded: false,
        error: None,
    };
    match app.embedder.load().await {
        Ok(embedder) => {
            status.model = Some(embedder.model().to_string());
            status.dims = Some(embedder.dims()).filter(|d| *d > 0);
            status.engine = embedder.engine();
            status.loaded = true;
        }
        Err(failure) => status.error = Some(failure.message),
    }
    status
}

async fn api_indexes(app: &App) -> ApiIndexes {
    let registry = match app.api().projects() {
        Ok(registry) => registry,
        Err(e) => {
            return ApiIndexes {
                projects: Vec::new(),
                error: Some(e.to_string()),
            };
        }
    };
    let active = registry.active_name();
    let mut projects = Vec::new();
    for project in registry.projects() {
        let selector = spec_selector(Some(project.name.clone()), None);
        let mut index = ProjectIndex {
            name: project.name.clone(),
            active: active.as_deref() == Some(project.name.as_str()),
            indexed: false,
            vectors: 0,
            stale: false,
            notice: None,
        };
        match app.api().index_status(&selector).await {
            Ok(s) => {
                index.indexed = s.indexed;
                index.vectors = s.vector_count;
                index.stale = s.stale;
                index.notice = s.notice;
            }
            Err(e) => index.notice = Some(e.to_string()),
        }
        projects.push(index);
    }
    ApiIndexes {
        projects,
        error: None,
    }
}

fn docs_index(app: &App) -> DocsIndex {
    match app.docs().and_then(|docs| docs.list()) {
        Ok(list) => {
            let libraries: Vec<LibraryIndex> = list
                .libraries
                .into_iter()
                .map(|l| LibraryIndex {
                    id: l.id,
                    name: l.name,
                    versions: l.versions,
                    chunks: l.snippets,
                })
                .collect();
            DocsIndex {
                chunks: libraries.iter().map(|l| l.chunks).sum(),
                libraries,
                error: None,
            }
        }
        Err(e) => DocsIndex {
            libraries: Vec::new(),
            chunks: 0,
            error: Some(e.to_string()),
        },
    }
}

async fn kb_index(app: &App) -> KbIndex {
    let status = match app.kb() {
        Ok(kb) => kb.status().await,
        Err(e) => Err(e),
    };
    match status {
        Ok(s) => KbIndex {
            solutions: s.solutions,
            embedded: s.embedded,
            error: None,
        },
        Err(e) => KbIndex {
            solutions: 0,
            embedded: 0,
            error: Some(e.to_string()),
        },
    }
}

impl Report for ServerStatus {
    fn to_text(&self) -> String {
        let e = &self.embedding;
        let mut out = format!("devlens {} — data in {}\n", self.version, self.data_dir);
        if e.loaded {
            let _ = write!(
                out,
                "embedding: {} `{}`, {} dims",
                e.provider,
                e.model.as_deref().unwrap_or("?"),
                e.dims.unwrap_or_default()
            );
            if let Some(engine) = &e.engine {
                let _ = write!(out, ", engine {engine}");
            }
            if let Some(dir) = &e.model_dir {
                let _ = write!(out, ", from {dir}");
            }
        } else {
            let _ = write!(
                out,
                "embedding: {} does not load: {}",
                e.provider,
                e.error.as_deref().unwrap_or("unknown reason")
            );
        }
        out.push_str("\nAPI projects:");
        if let Some(error) = &self.api.error {
            let _ = write!(out, " {error}");
        } else if self.api.projects.is_empty() {
            out.push_str(" none");
        }
        for p in &self.api.projects {
            let state = match (p.indexed, p.stale) {
                (false, _) => "not indexed".to_string(),
                (true, false) => format!("{} vectors", p.vectors),
                (true, true) => format!("{} vectors (stale)", p.vectors),
            };
            let _ = write!(
                out,
                "\n  {}{} {state}",
                p.name,
                if p.active { " (active)" } else { "" }
            );
            if let Some(notice) = &p.notice {
                let _ = write!(out, " — {notice}");
            }
        }
        match &self.docs.error {
            Some(error) => {
                let _ = write!(out, "\ndocs: {error}");
            }
            None => {
                let _ = write!(
                    out,
                    "\ndocs: {}, {}",
                    count(self.docs.libraries.len(), "library", "libraries"),
                    count(self.docs.chunks, "chunk", "chunks")
                );
            }
        }
        match &self.kb.error {
            Some(error) => {
                let _ = write!(out, "\nknowledge base: {error}");
            }
            None => {
                let _ = write!(
                    out,
                    "\nknowledge base: {} ({} embedded)",
                    count(self.kb.solutions, "solution", "solutions"),
                    self.kb.embedded
                );
            }
        }
        out
    }
}

/// `1 library`, `2 libraries`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
