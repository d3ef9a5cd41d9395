//! The API family: the arguments of every API tool, route and command — which spec a call is
//! about, which endpoint it names, what a search asks for — and the calls they make on the API
//! explorer. The MCP tools and the REST routes deserialize these types as they are; the CLI
//! fills them from its flags. Contract calls (traffic checks, calling an endpoint, code samples)
//! are in [`crate::contract`].
//!
//! A surface resolves the spec itself ([`SpecArgs::selector`] on the CLI,
//! [`SpecArgs::confined_selector`] for a tool call or an HTTP request: only the surface knows its
//! caller's workspace and whether the call came over HTTP), then makes one call here.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

pub use devlens_openapi::{
    EndpointDetails, EndpointRef,
    explorer::{
        DEFAULT_PAGE, EndpointPage, IndexReport, IndexStatus, OperationList, SpecSelector, TagList,
    },
    search::{Reranked, SearchMode, SearchRequest, SearchResponse},
};

/// What a surface that can lend its caller's model (the MCP server, through sampling)
/// implements for [`search_for`].
pub use devlens_embed::{BoxFuture, CallerModel, ChatAnswer, ChatError, ChatModel, ChatPrompt};

use crate::workspace::Workspace;
use crate::{App, AppError};

/// Which spec: a configured project (default: the active one) or a spec location.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpecArgs {
    // A configured project (omit for the active one); `spec` is a spec file or URL instead. Both
    // are said once for every API tool (the server's instructions), not in each of 11 schemas.
    #[serde(default, alias = "project")]
    pub project_name: Option<String>,
    #[serde(default)]
    pub spec: Option<String>,
}

impl SpecArgs {
    /// The spec as named, for the CLI: its user names any file or URL they like.
    pub fn selector(&self) -> SpecSelector {
        spec_selector(self.project_name.clone(), self.spec.clone())
    }

    /// The spec a tool call or an HTTP request names, confined: a file only inside the caller's
    /// `workspace` (every path a request names is, as file tools' are) and, over HTTP
    /// (`remote`), no URL at all — any local process or token holder could otherwise make
    /// devlens read a file or fetch an address of their choosing. Projects are how a server's
    /// owner names specs elsewhere.
    ///
    /// `workspace` is asked for only when a spec location is named: a call about a project
    /// needs none (and an MCP session would otherwise ask its client for roots).
    pub async fn confined_selector<F, Fut>(
        &self,
        workspace: F,
        remote: bool,
    ) -> Result<SpecSelector, AppError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Arc<Workspace>, AppError>>,
    {
        let mut selector = self.selector();
        let Some(spec) = selector.spec.take() else {
            return Ok(selector);
        };
        let workspace = workspace().await?;
        let lower = spec.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            if remote {
                return Err(AppError::new(
                    devlens_core::ErrorKind::Forbidden,
                    format!(
                        "over HTTP, `spec` takes a spec file in the workspace, not a URL ({spec}): \
                         ask the server's owner to add it as a project (`devlens project add NAME \
                         URL`) and pass `projectName`"
                    ),
                ));
            }
            selector.spec = Some(spec);
            return Ok(selector);
        }
        let path = spec.strip_prefix("file://").unwrap_or(&spec);
        let resolved = workspace
            .resolve(path, devlens_workspace::Access::Read)
            .map_err(|e| {
                AppError::invalid(format!(
                    "{e} A spec outside the workspace can be added as a project by the server's \
                     owner (`devlens project add NAME PATH`)."
                ))
            })?;
        selector.spec = Some(resolved.path.display().to_string());
        Ok(selector)
    }
}

/// The spec a call names: a configured project, a spec location, or (neither) the active
/// project. Blank values count as not given.
pub fn spec_selector(project: Option<String>, spec: Option<String>) -> SpecSelector {
    let given = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    SpecSelector {
        project: given(project),
        spec: given(spec),
    }
}

/// The endpoint a call names: by operationId, or by method and path — exactly one of the two.
pub fn endpoint_ref(
    operation_id: Option<String>,
    method: Option<String>,
    path: Option<String>,
) -> Result<EndpointRef, AppError> {
    let given = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    match (given(operation_id), given(method), given(path)) {
        (Some(id), None, None) => Ok(EndpointRef::OperationId(id)),
        (None, Some(method), Some(path)) => Ok(EndpointRef::method_path(method, path)),
        _ => Err(AppError::invalid(
            "give either `operationId`, or both `method` and `path` (find them with \
             search_api_documentation or list_endpoints_by_tag, or `devlens api search`)",
        )),
    }
}

/// A search mode by name, or the explorer's default when none is given.
pub fn search_mode(mode: Option<&str>) -> Result<Option<SearchMode>, AppError> {
    mode.map(str::trim)
        .filter(|m| !m.is_empty())
        .map(SearchMode::parse)
        .transpose()
        .map_err(AppError::InvalidInput)
}

/// `list_api_tags`, `GET /api/tags`, `devlens api tags`: the tags with their endpoint counts.
pub async fn tags(app: &App, selector: &SpecSelector) -> Result<TagList, AppError> {
    Ok(app.api().tags(selector).await?)
}

/// `list_endpoints_by_tag`, `GET /api/endpoints`, `devlens api endpoints`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListEndpoints {
    /// Tag name, as listed by list_api_tags.
    // Required of a tool call; a request without it reaches the explorer, which says where the
    // tag names are.
    #[schemars(required)]
    pub tag: Option<String>,
    /// Skip this many endpoints (paging).
    #[serde(default)]
    pub offset: Option<usize>,
    /// At most this many (default 100, at most 200; nextOffset pages on).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

/// A tag's endpoints, a page of them (`limit` not given: as many as a page holds, 200).
pub async fn endpoints(
    app: &App,
    selector: &SpecSelector,
    args: &ListEndpoints,
) -> Result<EndpointPage, AppError> {
    let tag = args.tag.as_deref().unwrap_or_default();
    Ok(app
        .api()
        .endpoints(selector, tag, args.offset.unwrap_or(0), args.limit)
        .await?)
}

/// Every operation of the spec, grouped by tag.
pub async fn operations(app: &App, selector: &SpecSelector) -> Result<OperationList, AppError> {
    Ok(app.api().operations(selector).await?)
}

/// The operationIds of the spec, in document order.
pub async fn operation_ids(app: &App, selector: &SpecSelector) -> Result<Vec<String>, AppError> {
    let spec = app.api().open(selector).await?;
    Ok(spec
        .operations()
        .iter()
        .filter_map(|op| op.operation_id.clone())
        .collect())
}

/// One endpoint: `get_endpoint_details` and `get_code_sample`, `GET /api/endpoint` and
/// `GET /api/code-sample`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointArgs {
    /// E.g. "issues/create"; or give method and path.
    #[serde(default)]
    pub operation_id: Option<String>,
    /// HTTP method, with path.
    #[serde(default)]
    pub method: Option<String>,
    /// Path template, e.g. "/repos/{owner}/{repo}/issues".
    #[serde(default)]
    pub path: Option<String>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

impl EndpointArgs {
    /// The endpoint named (checked before the spec is looked for).
    pub fn endpoint(&self) -> Result<EndpointRef, AppError> {
        endpoint_ref(
            self.operation_id.clone(),
            self.method.clone(),
            self.path.clone(),
        )
    }
}

/// Everything needed to call one endpoint, `$ref`s resolved.
pub async fn details(
    app: &App,
    selector: &SpecSelector,
    endpoint: &EndpointRef,
) -> Result<EndpointDetails, AppError> {
    Ok(app.api().details(selector, endpoint).await?)
}

/// `search_api_documentation`, `GET`/`POST /api/search`, `POST /api/embed/search`,
/// `devlens api search`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchArgs {
    /// A natural-language question, e.g. "add a label to an issue".
    #[serde(default)]
    pub query: Option<String>,
    /// List this tag's endpoints instead of searching.
    #[serde(default)]
    pub tag: Option<String>,
    /// Only this HTTP method.
    #[serde(default)]
    pub method: Option<String>,
    /// How many results, 1 to 50.
    // Required of a tool call; a request without it is refused by the validation, which says
    // what fits.
    #[schemars(required)]
    pub limit: Option<i64>,
    /// hybrid (default: meaning plus keywords), semantic or keyword (what runs without a semantic
    /// index).
    #[serde(default)]
    pub mode: Option<String>,
    /// Attach each hit's full details (parameters, body, response).
    #[serde(default)]
    pub details: Option<bool>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

impl SearchArgs {
    /// The validated search (mode, limit, exactly one of query and tag), checked before any
    /// spec is loaded.
    pub fn request(&self) -> Result<SearchRequest, AppError> {
        let mode = search_mode(self.mode.as_deref())?;
        let mut request = SearchRequest::new(
            self.query.clone(),
            self.tag.clone(),
            self.method.clone(),
            self.limit,
            mode,
        )
        .map_err(AppError::InvalidInput)?;
        request.details = self.details.unwrap_or(false);
        Ok(request)
    }
}

/// `semantic_search_api_documentation`: [`SearchArgs`] in semantic mode, ten results unless
/// asked otherwise.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SemanticSearchArgs {
    /// A natural-language question, e.g. "add a label to an issue".
    #[serde(default)]
    pub query: Option<String>,
    /// List this tag's endpoints instead of searching.
    #[serde(default)]
    pub tag: Option<String>,
    /// Only this HTTP method.
    #[serde(default)]
    pub method: Option<String>,
    /// How many results, 1 to 50 (default 10).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Attach each hit's full details (parameters, body, response).
    #[serde(default)]
    pub details: Option<bool>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

impl SemanticSearchArgs {
    /// The validated search, in semantic mode.
    pub fn request(&self) -> Result<SearchRequest, AppError> {
        SearchArgs {
            query: self.query.clone(),
            tag: self.tag.clone(),
            method: self.method.clone(),
            limit: Some(self.limit.unwrap_or(10)),
            mode: Some(SearchMode::Semantic.as_str().to_string()),
            details: self.details,
            target: SpecArgs::default(),
        }
        .request()
    }
}

/// Ranked endpoints for a question, or a tag's endpoints: for a caller with no model to lend
/// (the CLI, the HTTP API).
pub async fn search(
    app: &App,
    selector: &SpecSelector,
    request: &SearchRequest,
) -> Result<SearchResponse, AppError> {
    Ok(app.api().search(selector, request).await?)
}

/// [`search`] for a caller that may lend its model: an MCP client that declared sampling, which
/// `[search] rerank = "sampling"` asks to order the best candidates.
pub async fn search_for(
    app: &App,
    selector: &SpecSelector,
    request: &SearchRequest,
    caller: &CallerModel,
) -> Result<SearchResponse, AppError> {
    Ok(app.api().search_for(selector, request, caller).await?)
}

/// `build_api_embedding_index`, `POST /api/embed/reindex[/stream]`, `devlens api index`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildIndexArgs {
    /// Embed every endpoint again, unchanged ones too.
    // `force` is how the REST API (and the panel) has always said it.
    #[serde(default, alias = "force")]
    pub force_rebuild: Option<bool>,
    #[serde(flatten)]
    pub target: SpecArgs,
}

/// Builds (or rebuilds) the spec's semantic index, reporting `(done, total)` endpoints embedded.
/// Searches keep using the previous index until the new one is complete.
pub async fn build_index(
    app: &App,
    selector: &SpecSelector,
    args: &BuildIndexArgs,
    progress: &(dyn Fn(usize, usize) + Send + Sync),
) -> Result<IndexReport, AppError> {
    let force = args.force_rebuild.unwrap_or(false);
    Ok(app.api().build_index(selector, force, progress).await?)
}

/// `get_api_index_status`, `GET /api/embed/status`, `devlens api status`: whether the spec's
/// semantic index exists, what built it, and whether it is stale.
pub async fn index_status(app: &App, selector: &SpecSelector) -> Result<IndexStatus, AppError> {
    Ok(app.api().index_status(selector).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use devlens_core::{Classify, ErrorKind};

    #[test]
    fn an_endpoint_is_named_by_operation_id_or_by_method_and_path() {
        assert_eq!(
            endpoint_ref(Some(" issues/create ".into()), None, None).unwrap(),
            EndpointRef::OperationId("issues/create".into())
        );
        assert_eq!(
            endpoint_ref(None, Some("post".into()), Some("/pets".into())).unwrap(),
            EndpointRef::method_path("post", "/pets")
        );
        // Blank counts as not given.
        assert_eq!(
            endpoint_ref(Some("getPet".into()), Some(" ".into()), None).unwrap(),
            EndpointRef::OperationId("getPet".into())
        );
        for (id, method, path) in [
            (None, None, None),
            (Some("getPet"), Some("GET"), Some("/pets")),
            (None, Some("GET"), None),
            (Some("  "), None, None),
        ] {
            let err = endpoint_ref(
                id.map(Into::into),
                method.map(Into::into),
                path.map(Into::into),
            )
            .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            assert!(err.to_string().contains("operationId"), "{err}");
        }
    }

    #[test]
    fn blank_project_and_spec_mean_the_active_project() {
        assert_eq!(
            spec_selector(Some(" ".into()), Some(String::new())),
            SpecSelector::default()
        );
        assert_eq!(
            spec_selector(Some(" pets ".into()), None)
                .project
                .as_deref(),
            Some("pets")
        );
    }

    #[test]
    fn a_spec_is_named_by_project_name_or_project_on_every_surface() {
        for body in [r#"{"projectName": "pets"}"#, r#"{"project": "pets"}"#] {
            let args: SpecArgs = serde_json::from_str(body).unwrap();
            assert_eq!(args.selector().project.as_deref(), Some("pets"), "{body}");
        }
    }

    #[tokio::test]
    async fn a_confined_spec_is_a_workspace_file_and_no_url_over_http() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("api.yaml"), "openapi: 3.0.0").unwrap();
        let data = tempfile::tempdir().unwrap();
        let workspace = Arc::new(Workspace::open(dir.path(), data.path(), false).unwrap());
        let ws = || async { Ok::<_, AppError>(Arc::clone(&workspace)) };
        let named = |spec: &str| SpecArgs {
            project_name: None,
            spec: Some(spec.into()),
        };
        let file = named("api.yaml").confined_selector(ws, true).await.unwrap();
        assert!(file.spec.unwrap().ends_with("api.yaml"));
        let url = named("https://example.com/api.json");
        let refused = url.confined_selector(ws, true).await.unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Forbidden);
        assert!(url.confined_selector(ws, false).await.is_ok());
        let outside = named("/etc/passwd").confined_selector(ws, false).await;
        assert!(outside.is_err());
        // A project needs no workspace at all.
        let project = SpecArgs {
            project_name: Some("pets".into()),
            spec: Some(" ".into()),
        };
        let no_workspace = || async { Err::<Arc<Workspace>, _>(AppError::invalid("not asked")) };
        let selector = project.confined_selector(no_workspace, true).await.unwrap();
        assert_eq!(selector.project.as_deref(), Some("pets"));
    }

    #[test]
    fn search_arguments_are_checked_before_any_spec_is_loaded() {
        let ok = SearchArgs {
            query: Some("add a pet".into()),
            limit: Some(3),
            mode: Some("Semantic".into()),
            details: Some(true),
            ..SearchArgs::default()
        }
        .request()
        .unwrap();
        assert_eq!(ok.mode, Some(SearchMode::Semantic));
        assert!(ok.details);
        let bad_mode = SearchArgs {
            query: Some("x".into()),
            limit: Some(3),
            mode: Some("fuzzy".into()),
            ..SearchArgs::default()
        }
        .request()
        .unwrap_err();
        assert!(bad_mode.to_string().contains("semantic, keyword or hybrid"));
        let no_limit = SearchArgs {
            query: Some("x".into()),
            ..SearchArgs::default()
        }
        .request()
        .unwrap_err();
        assert_eq!(no_limit.kind(), ErrorKind::InvalidInput);
        let semantic = SemanticSearchArgs {
            query: Some("x".into()),
            ..SemanticSearchArgs::default()
        }
        .request()
        .unwrap();
        assert_eq!(semantic.mode, Some(SearchMode::Semantic));
    }
}
