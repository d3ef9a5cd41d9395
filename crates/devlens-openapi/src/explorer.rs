//! The API explorer: the one place every surface (MCP tools, CLI commands, REST endpoints) calls
//! to list tags, list endpoints, show details and search. It turns "a project name or a spec
//! location" into a loaded spec, and keeps the per-spec search indexes.

use std::sync::{Arc, Mutex};

use serde::Serialize;

use devlens_core::{Config, CoreError, ProjectRegistry};

use crate::{
    ApiSpec, EndpointDetails, EndpointRef, EndpointSummary, OpenApiError, SpecCache, SpecSource,
    TagSummary,
    search::{OperationIndex, SearchRequest, SearchResponse},
};

/// How many per-spec search indexes stay in memory.
const INDEX_CACHE: usize = 8;
/// Default page size of endpoint lists.
pub const DEFAULT_PAGE: usize = 100;

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
}

/// What kind of failure, for surfaces that need a category (HTTP status codes, exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The request itself is wrong (missing or conflicting arguments).
    InvalidInput,
    /// Something named does not exist (project, operation, tag, file).
    NotFound,
    /// The spec could not be fetched from its server.
    Upstream,
    /// The spec exists but cannot be used (malformed, not OpenAPI, broken `$ref`).
    Unprocessable,
    Internal,
}

impl ExplorerError {
    pub fn kind(&self) -> FailureKind {
        match self {
            Self::InvalidInput(_) => FailureKind::InvalidInput,
            Self::Project(CoreError::UnknownProject { .. }) => FailureKind::NotFound,
            Self::Project(
                CoreError::NoActiveProject
                | CoreError::InvalidProjectName { .. }
                | CoreError::ProjectWithoutSpec { .. },
            ) => FailureKind::InvalidInput,
            Self::Project(_) => FailureKind::Internal,
            Self::Spec(e) => spec_failure_kind(e),
            Self::Search(_) => FailureKind::Internal,
        }
    }
}

fn spec_failure_kind(error: &OpenApiError) -> FailureKind {
    match error {
        OpenApiError::InvalidSource { .. } => FailureKind::InvalidInput,
        OpenApiError::FileNotFound { .. }
        | OpenApiError::UnknownOperation { .. }
        | OpenApiError::UnknownEndpoint { .. }
        | OpenApiError::UnknownTag { .. } => FailureKind::NotFound,
        OpenApiError::FetchFailed { .. } | OpenApiError::HttpStatus { .. } => FailureKind::Upstream,
        OpenApiError::Internal { .. } => FailureKind::Internal,
        _ => FailureKind::Unprocessable,
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TagList {
    pub tags: Vec<TagSummary>,
}

impl TagList {
    pub fn to_text(&self) -> String {
        if self.tags.is_empty() {
            return "this spec has no operations".into();
        }
        let mut out = String::new();
        for tag in &self.tags {
            out.push_str(&format!("{} ({})", tag.name, tag.endpoints));
            let description = tag
                .description
                .as_deref()
                .map(crate::search::first_sentence);
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

impl EndpointPage {
    pub fn to_text(&self) -> String {
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

/// Loads specs (cached by content hash) and answers the API tools.
#[derive(Debug)]
pub struct ApiExplorer {
    config: Config,
    specs: SpecCache,
    indexes: Mutex<Vec<(String, Arc<OperationIndex>)>>,
}

impl ApiExplorer {
    pub fn new(config: Config) -> Self {
        Self {
            config,
            specs: SpecCache::new(),
            indexes: Mutex::new(Vec::new()),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The project registry as it is on disk now (edits apply without a restart).
    pub fn projects(&self) -> Result<ProjectRegistry, CoreError> {
        ProjectRegistry::load(&self.config)
    }

    /// Loads the spec a selector names.
    pub async fn open(&self, selector: &SpecSelector) -> Result<Arc<ApiSpec>, ExplorerError> {
        let location = match (&selector.spec, &selector.project) {
            (Some(_), Some(_)) => {
                return Err(ExplorerError::InvalidInput(
                    "give either a project or a spec location, not both".into(),
                ));
            }
            (Some(spec), None) => spec.clone(),
            (None, project) => self.projects()?.spec_of(project.as_deref())?.1,
        };
        let source = SpecSource::parse(&location)?;
        Ok(self.specs.load(&source).await?)
    }

    pub async fn tags(&self, selector: &SpecSelector) -> Result<TagList, ExplorerError> {
        let spec = self.open(selector).await?;
        Ok(TagList { tags: spec.tags() })
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
        let limit = limit.unwrap_or(usize::MAX).max(1);
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

    pub async fn search(
        &self,
        selector: &SpecSelector,
        request: &SearchRequest,
    ) -> Result<SearchResponse, ExplorerError> {
        let spec = self.open(selector).await?;
        let index = self.index_for(&spec).await?;
        Ok(index.search(&spec, request)?)
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
