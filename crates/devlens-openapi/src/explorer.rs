//! The API explorer: the one place every surface (MCP tools, CLI commands, REST endpoints) calls
//! to list tags, list endpoints, show details and search. It turns "a project name or a spec
//! location" into a loaded spec, and keeps the per-spec search indexes.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use devlens_core::outbound::OutboundPolicy;
use devlens_core::{Classify, Config, CoreError, ErrorKind, ProjectRegistry, RerankChoice};
use devlens_embed::{
    CallerModel, ChatClient, ChatModel, EmbedError, Embedder, LazyEmbedder, LazyReranker,
    LoadFailure, Progress,
};
use devlens_search::{Retrieval, StoreError};

use crate::{
    ApiSpec, EndpointDetails, EndpointRef, EndpointSummary, OpenApiError, SpecCache, SpecSource,
    TagSummary,
    eval::{EvalReport, EvalRerank, GoldenQuestion},
    rerank,
    search::{
        DEFAULT_MODE, OperationIndex, SearchMode, SearchRequest, SearchResponse, SemanticQuery,
    },
    semantic::{FileIndexStore, SemanticIndex, SemanticIndexStore, index_name, query_text},
};

/// How many per-spec search indexes stay in memory.
const INDEX_CACHE: usize = 8;
/// Default page size of endpoint lists.
pub const DEFAULT_PAGE: usize = 100;
/// The most endpoints one page of a tag holds, on every surface (a tag of thousands is read in pages:
/// the answer's `nextOffset` says where the next starts).
pub const MAX_PAGE: usize = 200;

/// Which spec a call is about: a configured project (or the active one), or a spec location.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecSelector {
    pub project: Option<String>,
    pub spec: Option<String>,
}

impl SpecSelector {
    pub fn project(name: Option<String>) -> Self {
        Self {
            project: name,
            spec: None,
        }
    }
}

/// Everything an explorer call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ExplorerError {
    #[error(transparent)]
    Project(#[from] CoreError),
    #[error(transparent)]
    Spec(#[from] OpenApiError),
    #[error("{0}")]
    InvalidInput(String),
    #[error("search failed: {0}")]
    Search(#[from] devlens_search::SearchError),
    #[error(transparent)]
    Embedding(#[from] EmbedError),
    /// No embedder could be loaded (no model, no key): the reason says what to do.
    #[error(transparent)]
    Embedder(#[from] LoadFailure),
    #[error("the semantic index store failed: {0}")]
    Store(#[from] StoreError),
    /// An index build for the same project is already running.
    #[error("{0}")]
    Busy(String),
}

impl Classify for ExplorerError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidInput(_) => ErrorKind::InvalidInput,
            Self::Project(e) => e.kind(),
            Self::Spec(e) => e.kind(),
            Self::Store(StoreError::Database(_)) => ErrorKind::Unavailable,
            Self::Search(_) | Self::Store(_) => ErrorKind::Internal,
            Self::Embedding(e) if e.is_unavailable() => ErrorKind::Unavailable,
            Self::Embedding(
                EmbedError::UnknownProvider { .. } | EmbedError::InvalidSettings(_),
            ) => ErrorKind::InvalidInput,
            Self::Embedding(_) => ErrorKind::Upstream,
            Self::Embedder(e) => e.kind(),
            Self::Busy(_) => ErrorKind::Conflict,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TagList {
    pub tags: Vec<TagSummary>,
}

/// Every operation of a spec, grouped by tag: a table of contents to read rather than search.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationList {
    pub title: String,
    pub version: String,
    pub tags: Vec<TaggedOperations>,
}

/// One tag of an [`OperationList`] and its operations, in document order.
#[derive(Debug, Clone, Serialize)]
pub struct TaggedOperations {
    pub tag: TagSummary,
    pub operations: Vec<EndpointSummary>,
}

impl devlens_core::Report for OperationList {
    fn to_text(&self) -> String {
        let mut out = format!("# {} {}\n", self.title, self.version);
        for group in &self.tags {
            out.push_str(&format!(
                "\n## {} ({})\n",
                group.tag.name, group.tag.endpoints
            ));
            for op in &group.operations {
                out.push_str(&format!("- {} {}", op.method, op.path));
                if let Some(id) = &op.operation_id {
                    out.push_str(&format!(" `{id}`"));
                }
                if let Some(summary) = op.summary.as_deref().filter(|s| !s.is_empty()) {
                    out.push_str(&format!(" — {}", crate::model::first_sentence(summary)));
                }
                out.push('\n');
            }
        }
        out
    }
}

impl devlens_core::Report for TagList {
    fn to_text(&self) -> String {
        if self.tags.is_empty() {
            return "this spec has no operations".into();
        }
        let mut out = String::new();
        for tag in &self.tags {
            out.push_str(&format!("{} ({})", tag.name, tag.endpoints));
            let description = tag.description.as_deref().map(crate::model::first_sentence);
            if let Some(d) = description.filter(|d| !d.is_empty()) {
                out.push_str(&format!(" — {d}"));
            }
            out.push('\n');
        }
        out.pop();
        out
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointPage {
    pub endpoints: Vec<EndpointSummary>,
    pub total: usize,
    /// Where the next page starts, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

impl devlens_core::Report for EndpointPage {
    fn to_text(&self) -> String {
        let mut out = String::new();
        for e in &self.endpoints {
            out.push_str(&format!("{} {}", e.method, e.path));
            if let Some(id) = &e.operation_id {
                out.push_str(&format!("  ({id})"));
            }
            if let Some(s) = &e.summary {
                out.push_str(&format!(" — {s}"));
            }
            out.push('\n');
        }
        match self.next_offset {
            Some(next) => out.push_str(&format!(
                "… {} of {} shown; next page: offset {next}",
                self.endpoints.len(),
                self.total
            )),
            None => {
                out.pop();
            }
        }
        out
    }
}

/// Where a selector points: the spec's location, the project (if one was named or active), the
/// name of its semantic index, and what loading it may fetch.
#[derive(Debug, Clone)]
struct Located {
    location: String,
    project: Option<String>,
    index_name: String,
    /// The outbound guard's policy for this spec: the configuration's allow list, plus the spec
    /// URL and base URL of a project the user declared.
    policy: OutboundPolicy,
}

impl Located {
    /// The command that builds this index, for messages.
    fn index_command(&self) -> String {
        match &self.project {
            Some(p) => format!("`devlens api index --project {p}`"),
            None => format!("`devlens api index --spec {}`", self.location),
        }
    }
}

/// The state of a spec's semantic index.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexStatus {
    pub indexed: bool,
    pub vector_count: usize,
    pub dims: Option<usize>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub built_at: Option<String>,
    /// Hash of the spec the index was built from.
    pub swagger_hash: Option<String>,
    /// The spec changed since the build: re-index to search its current endpoints.
    pub stale: bool,
    /// The index was built by another embedding model than the one configured now: its
    /// vectors cannot be compared with a question's, so semantic search falls back to keywords.
    #[serde(default)]
    pub model_mismatch: bool,
    /// What to do, when something needs doing (not built, stale, built by another model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl devlens_core::Report for IndexStatus {
    fn to_text(&self) -> String {
        let mut out = if self.indexed {
            format!(
                "indexed: {} vectors, {} dims, {} `{}`, built {}{}",
                self.vector_count,
                self.dims.unwrap_or_default(),
                self.provider.as_deref().unwrap_or("?"),
                self.model.as_deref().unwrap_or("?"),
                self.built_at.as_deref().unwrap_or("?"),
                if self.stale { " (stale)" } else { "" }
            )
        } else {
            "not indexed".to_string()
        };
        if let Some(notice) = &self.notice {
            out.push_str(&format!("\nnote: {notice}"));
        }
        out
    }
}

/// What an index build did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexReport {
    #[serde(flatten)]
    pub status: IndexStatus,
    /// Endpoint texts sent to the embedder.
    pub embedded: usize,
    /// Vectors reused from the previous index (unchanged endpoint texts).
    pub reused: usize,
    pub seconds: f64,
}

impl devlens_core::Report for IndexReport {
    fn to_text(&self) -> String {
        format!(
            "{}\nembedded {} endpoint texts, reused {} in {:.1} s",
            self.status.to_text(),
            self.embedded,
            self.reused,
            self.seconds
        )
    }
}

/// Loads specs (cached by content hash) and answers the API tools.
#[derive(Debug)]
pub struct ApiExplorer {
    config: Config,
    specs: SpecCache,
    indexes: Mutex<Vec<(String, Arc<OperationIndex>)>>,
    store: Arc<dyn SemanticIndexStore>,
    /// Loaded semantic indexes by name, with the store version they were loaded at.
    semantic: Mutex<HashMap<String, (String, Arc<SemanticIndex>)>>,
    /// The embedder, loaded on first use (a failed load is tried again after a while: the user
    /// may have installed the model meanwhile); a host may share it with its other corpora.
    embedder: Arc<LazyEmbedder>,
    /// The second stage, when `[embedding] reranker_dir` names a cross-encoder.
    reranker: Arc<LazyReranker>,
    /// The `[llm]` endpoint `[search] rerank = "llm"` asks; `None` when none is configured, the
    /// reason when its settings are wrong.
    llm: Result<Option<Arc<dyn ChatModel>>, String>,
    building: Mutex<HashSet<String>>,
}

impl ApiExplorer {
    pub fn new(config: Config) -> Self {
        let store = Arc::new(FileIndexStore::new(
            config.data_dir.subdir("indexes").join("api"),
        ));
        let embedder = Arc::new(LazyEmbedder::new(
            config.file.embedding.clone(),
            config.data_dir.clone(),
        ));
        let reranker = Arc::new(LazyReranker::new(reranker_dir(&config)));
        let llm = ChatClient::from_settings(&config.file.llm, &|name| std::env::var(name).ok())
            .map(|client| client.map(|c| Arc::new(c) as Arc<dyn ChatModel>))
            .map_err(|e| e.to_string());
        Self {
            config,
            specs: SpecCache::new(),
            indexes: Mutex::new(Vec::new()),
            store,
            semantic: Mutex::new(HashMap::new()),
            embedder,
            reranker,
            llm,
            building: Mutex::new(HashSet::new()),
        }
    }

    /// Reranks the best candidates of every question with `reranker` (instead of the one
    /// `[embedding] reranker_dir` names).
    pub fn with_reranker(mut self, reranker: Arc<LazyReranker>) -> Self {
        self.reranker = reranker;
        self
    }

    /// An explorer that embeds with `embedder` instead of the configured provider.
    pub fn with_embedder(config: Config, embedder: Arc<dyn Embedder>) -> Self {
        Self::new(config).with_lazy_embedder(Arc::new(LazyEmbedder::ready(Ok(embedder))))
    }

    /// Keeps semantic indexes in `store` (a team server's database) instead of the data dir.
    pub fn with_index_store(mut self, store: Arc<dyn SemanticIndexStore>) -> Self {
        self.store = store;
        self
    }

    /// Embeds with `embedder`, which a host shares with its other corpora (one model loaded).
    pub fn with_lazy_embedder(mut self, embedder: Arc<LazyEmbedder>) -> Self {
        self.embedder = embedder;
        self
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The project registry as it is on disk now (edits apply without a restart).
    pub fn projects(&self) -> Result<ProjectRegistry, CoreError> {
        ProjectRegistry::load(&self.config)
    }

    fn locate(&self, selector: &SpecSelector) -> Result<Located, ExplorerError> {
        let mut policy = self.config.outbound();
        let (location, project) = match (&selector.spec, &selector.project) {
            (Some(_), Some(_)) => {
                return Err(ExplorerError::InvalidInput(
                    "give either a project or a spec location, not both".into(),
                ));
            }
            // A location a caller names is fetched from public hosts (and those the user
            // allowed) only.
            (Some(spec), None) => (spec.clone(), None),
            (None, project) => {
                let registry = self.projects()?;
                let chosen = registry.resolve(project.as_deref())?;
                let (name, spec) = registry.spec_of(Some(&chosen.name))?;
                // The user declared this project: its own spec URL and base URL are configured
                // targets, even on this machine or a private network.
                if chosen.trusted {
                    for target in std::iter::once(&spec).chain(chosen.base_url.as_ref()) {
                        allow_url(&mut policy, target);
                    }
                }
                (spec, Some(name))
            }
        };
        let index_name = index_name(project.as_deref(), &location);
        Ok(Located {
            location,
            project,
            index_name,
            policy,
        })
    }

    async fn load(&self, located: &Located) -> Result<Arc<ApiSpec>, ExplorerError> {
        let source = SpecSource::parse(&located.location)?;
        Ok(self.specs.load_with(&source, &located.policy).await?)
    }

    /// Loads the spec a selector names.
    pub async fn open(&self, selector: &SpecSelector) -> Result<Arc<ApiSpec>, ExplorerError> {
        self.load(&self.locate(selector)?).await
    }

    pub async fn tags(&self, selector: &SpecSelector) -> Result<TagList, ExplorerError> {
        let spec = self.open(selector).await?;
        Ok(TagList { tags: spec.tags() })
    }

    /// Every operation, grouped by tag (an operation with several tags is under each).
    pub async fn operations(
        &self,
        selector: &SpecSelector,
    ) -> Result<OperationList, ExplorerError> {
        let spec = self.open(selector).await?;
        let tags = spec
            .tags()
            .into_iter()
            .map(|tag| {
                let operations = spec.endpoints_by_tag(&tag.name)?;
                Ok(TaggedOperations { tag, operations })
            })
            .collect::<Result<_, OpenApiError>>()?;
        Ok(OperationList {
            title: spec.title.clone(),
            version: spec.version.clone(),
            tags,
        })
    }

    pub async fn endpoints(
        &self,
        selector: &SpecSelector,
        tag: &str,
        offset: usize,
        limit: Option<usize>,
    ) -> Result<EndpointPage, ExplorerError> {
        if tag.trim().is_empty() {
            return Err(ExplorerError::InvalidInput(
                "`tag` is required: list tag names with list_api_tags".into(),
            ));
        }
        let spec = self.open(selector).await?;
        let all = spec.endpoints_by_tag(tag)?;
        let total = all.len();
        // Every surface gets the same bound: a tag of thousands is read in pages.
        let limit = limit.unwrap_or(MAX_PAGE).clamp(1, MAX_PAGE);
        let endpoints: Vec<EndpointSummary> = all.into_iter().skip(offset).take(limit).collect();
        let end = offset.saturating_add(endpoints.len());
        Ok(EndpointPage {
            endpoints,
            total,
            next_offset: (end < total).then_some(end),
        })
    }

    pub async fn details(
        &self,
        selector: &SpecSelector,
        endpoint: &EndpointRef,
    ) -> Result<EndpointDetails, ExplorerError> {
        let spec = self.open(selector).await?;
        Ok(spec.endpoint_details(endpoint)?)
    }

    /// Searches in the request's mode (default hybrid). Semantic and hybrid fall back to keyword
    /// ranking, with a notice saying why and what to do, when there is no usable index or no
    /// embedder: a search never fails for want of embeddings.
    pub async fn search(
        &self,
        selector: &SpecSelector,
        request: &SearchRequest,
    ) -> Result<SearchResponse, ExplorerError> {
        self.search_for(selector, request, &CallerModel::none_outside_mcp())
            .await
    }

    /// [`Self::search`] for a caller that may lend its model (an MCP client that declared
    /// sampling), which `[search] rerank = "sampling"` asks to order the best candidates. A
    /// second stage that cannot run, fails, times out or answers garbage leaves the first
    /// stage's order and says why in the notice.
    pub async fn search_for(
        &self,
        selector: &SpecSelector,
        request: &SearchRequest,
        caller: &CallerModel,
    ) -> Result<SearchResponse, ExplorerError> {
        let located = self.locate(selector)?;
        let spec = self.load(&located).await?;
        let keyword = self.index_for(&spec).await?;
        // Listing a tag's endpoints ranks nothing: no semantic side to make ready.
        let asked = match &request.query {
            Some(_) => request.mode.unwrap_or(DEFAULT_MODE),
            None => SearchMode::Keyword,
        };
        let mut stale = None;
        let mut plan = Retrieval::plan(asked, || async {
            let query = request.query.as_deref().unwrap_or_default();
            let (semantic, note) = self.semantic_query(&located, &spec, query).await?;
            stale = note;
            Ok(semantic)
        })
        .await;
        if let Some(note) = stale {
            plan.note(note);
        }
        // The second stage, when one is chosen: what runs and how many candidates it reads, or
        // the notice saying why it cannot (the answer keeps the first stage's order).
        let second = match &request.query {
            Some(_) => self.second_stage(caller).await,
            None => None,
        };
        // The first stage recalls the candidates the second reads.
        let recall = match &second {
            Some(Ok((_, candidates))) => request.limit.max(*candidates),
            _ => request.limit,
        };
        let first = SearchRequest {
            limit: recall,
            ..request.clone()
        };
        let mut response = keyword.search(&spec, &first, &plan)?;
        let notice = match (&request.query, second) {
            (Some(query), Some(Ok((stage, _)))) => {
                match rerank::run(stage, &spec, query, &mut response, request.limit).await {
                    Ok(reranked) => {
                        response.reranked = Some(reranked);
                        None
                    }
                    Err(notice) => Some(notice),
                }
            }
            (_, Some(Err(notice))) => Some(notice),
            _ => None,
        };
        if let Some(note) = notice {
            response.notice = Some(match response.notice.take() {
                Some(notice) => format!("{notice}; {note}"),
                None => note,
            });
        }
        if request.details {
            for hit in &mut response.results {
                let endpoint = EndpointRef::MethodPath {
                    method: hit.method.clone(),
                    path: hit.path.clone(),
                };
                hit.details = spec.endpoint_details(&endpoint).ok();
            }
        }
        Ok(response)
    }

    /// The second stage `[search] rerank` chooses and how many candidates it reads; `None` when
    /// there is none, the notice when it cannot run.
    async fn second_stage(
        &self,
        caller: &CallerModel,
    ) -> Option<Result<(rerank::Stage, usize), String>> {
        let choice = rerank::choice(&self.config, self.reranker.configured());
        let stage = match choice {
            RerankChoice::None => return None,
            RerankChoice::CrossEncoder => match self.reranker.get().await {
                Some(Ok(reranker)) => Ok(rerank::Stage::CrossEncoder(reranker)),
                Some(Err(why)) => Err(rerank::not_reranked(choice, &why)),
                None => Err(rerank::not_reranked(
                    choice,
                    "no reranker folder is configured ([embedding] reranker_dir)",
                )),
            },
            RerankChoice::Llm => match &self.llm {
                Ok(Some(model)) => Ok(Arc::clone(model)),
                Ok(None) => Err(rerank::not_reranked(
                    choice,
                    &format!(
                        "no [llm] endpoint is configured; {}",
                        devlens_embed::chat::HOW_TO_CONFIGURE
                    ),
                )),
                Err(why) => Err(rerank::not_reranked(choice, why)),
            }
            .map(|model| self.model_stage(choice, model)),
            RerankChoice::Sampling => {
                rerank::sampling_model(caller).map(|model| self.model_stage(choice, model))
            }
        };
        let candidates =
            devlens_search::rerank::candidates(self.config.file.embedding.rerank_candidates)
                .map_err(|why| rerank::not_reranked(choice, &why));
        Some(stage.and_then(|stage| Ok((stage, candidates?))))
    }

    fn model_stage(&self, by: RerankChoice, model: Arc<dyn ChatModel>) -> rerank::Stage {
        rerank::Stage::Model {
            by,
            model,
            timeout: self.config.file.search.rerank_timeout(),
        }
    }

    /// The index and the question's vector for a semantic search, plus a notice when the index
    /// is stale; or why semantic search cannot run now.
    async fn semantic_query(
        &self,
        located: &Located,
        spec: &ApiSpec,
        query: &str,
    ) -> Result<(SemanticQuery, Option<String>), String> {
        let index = match self.stored_index(&located.index_name).await {
            Ok(Some(index)) => index,
            Ok(None) => {
                return Err(format!(
                    "no semantic index for this spec yet: build it with {} (or the \
                     build_api_embedding_index tool)",
                    located.index_command()
                ));
            }
            Err(e) => return Err(format!("{e}; rebuild it with {}", located.index_command())),
        };
        let embedder = self.embedder().await.map_err(|e| e.to_string())?;
        if let Some(why) = index.mismatch(embedder.as_ref()) {
            return Err(format!("{why} ({})", located.index_command()));
        }
        let vector = embedder
            .embed_query(&query_text(query))
            .await
            .map_err(|e| e.to_string())?;
        let notice = index.is_stale(spec).then(|| {
            format!(
                "the semantic index is stale: the spec changed after it was built ({}); \
                 endpoints added since are missing. Re-index with {}",
                index.meta.built_at,
                located.index_command()
            )
        });
        let rows = index.rows_in(spec);
        Ok((
            SemanticQuery {
                index,
                vector,
                rows,
            },
            notice,
        ))
    }

    /// The embedder: the configured provider, loaded on first use.
    pub async fn embedder(&self) -> Result<Arc<dyn Embedder>, LoadFailure> {
        self.embedder.load().await
    }

    /// The stored semantic index `name`, loaded once per stored version.
    async fn stored_index(&self, name: &str) -> Result<Option<Arc<SemanticIndex>>, StoreError> {
        let Some(version) = self.store.version(name)? else {
            self.semantic_cache().remove(name);
            return Ok(None);
        };
        if let Some((v, index)) = self.semantic_cache().get(name)
            && *v == version
        {
            return Ok(Some(Arc::clone(index)));
        }
        let store = self.store.clone();
        let owned = name.to_string();
        let loaded = tokio::task::spawn_blocking(move || store.load(&owned))
            .await
            .map_err(|e| StoreError::Corrupt {
                path: Default::default(),
                reason: format!("loading was cancelled: {e}"),
            })??;
        let Some(index) = loaded else {
            return Ok(None);
        };
        let index = Arc::new(index);
        self.semantic_cache()
            .insert(name.to_string(), (version, Arc::clone(&index)));
        Ok(Some(index))
    }

    fn semantic_cache(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (String, Arc<SemanticIndex>)>> {
        self.semantic.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the selector's semantic index stands.
    pub async fn index_status(
        &self,
        selector: &SpecSelector,
    ) -> Result<IndexStatus, ExplorerError> {
        let located = self.locate(selector)?;
        let spec = self.load(&located).await?;
        let index = self.stored_index(&located.index_name).await?;
        let mut status = status_of(index.as_deref(), &spec, &located);
        if let Some(index) = &index
            && let Ok(embedder) = self.embedder().await
            && let Some(why) = index.mismatch(embedder.as_ref())
        {
            status.model_mismatch = true;
            status.notice = Some(format!("{why} ({})", located.index_command()));
        }
        Ok(status)
    }

    /// Builds (or rebuilds) the selector's semantic index, reusing the vectors of unchanged
    /// endpoint texts unless `force`. The new index replaces the old one only once complete.
    pub async fn build_index(
        &self,
        selector: &SpecSelector,
        force: bool,
        progress: Progress<'_>,
    ) -> Result<IndexReport, ExplorerError> {
        let started = Instant::now();
        let located = self.locate(selector)?;
        let _guard = BuildGuard::claim(&self.building, &located)?;
        let spec = self.load(&located).await?;
        let embedder = self.embedder().await?;
        // A damaged previous index is simply not reused.
        let previous = match force {
            true => None,
            false => self.stored_index(&located.index_name).await.ok().flatten(),
        };
        tracing::info!(
            index = %located.index_name,
            operations = spec.operations().len(),
            provider = embedder.provider().as_str(),
            "building the semantic index"
        );
        let outcome =
            SemanticIndex::build(&spec, embedder.as_ref(), previous.as_deref(), progress).await?;
        let store = self.store.clone();
        let name = located.index_name.clone();
        let index = outcome.index;
        let index = tokio::task::spawn_blocking(move || store.save(&name, &index).map(|()| index))
            .await
            .map_err(|e| StoreError::Corrupt {
                path: Default::default(),
                reason: format!("saving was cancelled: {e}"),
            })??;
        let status = status_of(Some(&index), &spec, &located);
        Ok(IndexReport {
            status,
            embedded: outcome.embedded,
            reused: outcome.reused,
            seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        })
    }

    /// Runs every golden question through `search` in `mode` and scores where the expected
    /// operation landed.
    pub async fn eval(
        &self,
        selector: &SpecSelector,
        golden: &[GoldenQuestion],
        mode: Option<SearchMode>,
    ) -> Result<EvalReport, ExplorerError> {
        let mut ranks = Vec::with_capacity(golden.len());
        let mut timings = Vec::with_capacity(golden.len());
        let mut ran = None;
        let mut notice = None;
        let mut reranked = Vec::new();
        let mut reranked_by = None;
        for question in golden {
            let request = SearchRequest::new(
                Some(question.question.clone()),
                None,
                None,
                Some(crate::eval::EVAL_DEPTH as i64),
                mode,
            )
            .map_err(ExplorerError::InvalidInput)?;
            let started = Instant::now();
            let response = self.search(selector, &request).await?;
            timings.push(started.elapsed().as_secs_f64() * 1000.0);
            ran = Some(response.mode);
            notice = notice.or(response.notice.clone());
            if let Some(second) = &response.reranked {
                reranked.push(second.ms as f64);
                reranked_by.get_or_insert_with(|| match &second.model {
                    Some(model) => format!("{} ({model})", second.by),
                    None => second.by.clone(),
                });
            }
            ranks.push(question.rank_in(&response.results));
        }
        let mut report = EvalReport::new(
            golden,
            &ranks,
            &timings,
            ran.unwrap_or(DEFAULT_MODE),
            notice,
        );
        report.rerank = reranked_by.map(|by| EvalRerank::new(by, &reranked));
        Ok(report)
    }

    async fn index_for(&self, spec: &Arc<ApiSpec>) -> Result<Arc<OperationIndex>, ExplorerError> {
        if let Some(index) = self.cached_index(&spec.swagger_hash) {
            return Ok(index);
        }
        let building = Arc::clone(spec);
        let index = tokio::task::spawn_blocking(move || OperationIndex::build(&building))
            .await
            .map_err(|e| {
                ExplorerError::InvalidInput(format!("index build was cancelled: {e}"))
            })??;
        let index = Arc::new(index);
        let mut cache = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
        cache.retain(|(hash, _)| hash != &spec.swagger_hash);
        cache.push((spec.swagger_hash.clone(), Arc::clone(&index)));
        if cache.len() > INDEX_CACHE {
            cache.remove(0);
        }
        Ok(index)
    }

    fn cached_index(&self, hash: &str) -> Option<Arc<OperationIndex>> {
        let mut cache = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
        let position = cache.iter().position(|(h, _)| h == hash)?;
        // Most recently used last.
        let entry = cache.remove(position);
        let index = Arc::clone(&entry.1);
        cache.push(entry);
        Some(index)
    }
}

/// Allows the host and port of `target` when it is an http(s) URL (a spec path is not a host).
fn allow_url(policy: &mut OutboundPolicy, target: &str) {
    let lower = target.trim().to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        policy.allow(target.trim());
    }
}

fn status_of(index: Option<&SemanticIndex>, spec: &ApiSpec, located: &Located) -> IndexStatus {
    match index {
        None => IndexStatus {
            indexed: false,
            vector_count: 0,
            dims: None,
            model: None,
            provider: None,
            built_at: None,
            swagger_hash: None,
            stale: false,
            model_mismatch: false,
            notice: Some(format!(
                "not built yet: build it with {} (or the build_api_embedding_index tool)",
                located.index_command()
            )),
        },
        Some(index) => {
            let stale = index.is_stale(spec);
            IndexStatus {
                indexed: true,
                vector_count: index.meta.vector_count,
                dims: Some(index.meta.dims),
                model: Some(index.meta.model.clone()),
                provider: Some(index.meta.provider.clone()),
                built_at: Some(index.meta.built_at.clone()),
                swagger_hash: Some(index.meta.swagger_hash.clone()),
                stale,
                model_mismatch: false,
                notice: stale.then(|| {
                    format!(
                        "stale: the spec changed since the build; re-index with {}",
                        located.index_command()
                    )
                }),
            }
        }
    }
}

/// Marks an index as being built for as long as it lives.
struct BuildGuard<'a> {
    building: &'a Mutex<HashSet<String>>,
    name: String,
}

impl<'a> BuildGuard<'a> {
    fn claim(
        building: &'a Mutex<HashSet<String>>,
        located: &Located,
    ) -> Result<Self, ExplorerError> {
        let mut set = building.lock().unwrap_or_else(|p| p.into_inner());
        if !set.insert(located.index_name.clone()) {
            return Err(ExplorerError::Busy(
                "this index is already being built; wait for that build to finish (searches \
                 keep using the previous index meanwhile)"
                    .into(),
            ));
        }
        Ok(Self {
            building,
            name: located.index_name.clone(),
        })
    }
}

impl Drop for BuildGuard<'_> {
    fn drop(&mut self) {
        self.building
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.name);
    }
}

/// The cross-encoder folder: `DEVLENS_RERANKER_DIR`, else `[embedding] reranker_dir`.
fn reranker_dir(config: &Config) -> Option<std::path::PathBuf> {
    std::env::var_os("DEVLENS_RERANKER_DIR")
        .filter(|dir| !dir.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| config.file.embedding.reranker_dir.clone())
}
