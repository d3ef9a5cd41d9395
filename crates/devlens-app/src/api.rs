//! The API family's requests: which spec a call is about, which endpoint it names, what a search
//! asks for. Every surface builds them here, so a request is read the same way on each.

use devlens_openapi::{
    EndpointRef,
    explorer::SpecSelector,
    search::{SearchMode, SearchRequest},
};

use crate::AppError;

/// The spec a call names: a configured project, a spec location, or (neither) the active
/// project. Blank values count as not given.
pub fn spec_selector(project: Option<String>, spec: Option<String>) -> SpecSelector {
    let given = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    SpecSelector {
        project: given(project),
        spec: given(spec),
    }
}

/// The spec a tool call or an HTTP request names, confined: a file only inside the workspace
/// (every path a request names is, as file tools' are) and, over HTTP (`remote`), no URL at all —
/// any local process or token holder could otherwise make devlens read a file or fetch an
/// address of their choosing. Projects are how a server's owner names specs elsewhere. The CLI
/// uses [`spec_selector`]: its user names what they like.
pub fn confined_spec_selector(
    project: Option<String>,
    spec: Option<String>,
    workspace: &devlens_workspace::Workspace,
    remote: bool,
) -> Result<SpecSelector, AppError> {
    let mut selector = spec_selector(project, spec);
    let Some(spec) = selector.spec.take() else {
        return Ok(selector);
    };
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

/// What a search asks for, as a caller sends it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchInput {
    /// A question; exactly one of `query` and `tag`.
    pub query: Option<String>,
    /// List this tag's endpoints instead of searching.
    pub tag: Option<String>,
    /// Keep only this HTTP method.
    pub method: Option<String>,
    /// How many results, 1–50; required.
    pub limit: Option<i64>,
    /// `hybrid`, `semantic` or `keyword`.
    pub mode: Option<String>,
    /// Attach each hit's endpoint details.
    pub details: bool,
}

/// A validated search request.
pub fn search_request(input: SearchInput) -> Result<SearchRequest, AppError> {
    let mode = search_mode(input.mode.as_deref())?;
    let mut request = SearchRequest::new(input.query, input.tag, input.method, input.limit, mode)
        .map_err(AppError::InvalidInput)?;
    request.details = input.details;
    Ok(request)
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
    fn search_input_is_checked_before_any_spec_is_loaded() {
        let ok = search_request(SearchInput {
            query: Some("add a pet".into()),
            limit: Some(3),
            mode: Some("Semantic".into()),
            details: true,
            ..SearchInput::default()
        })
        .unwrap();
        assert_eq!(ok.mode, Some(SearchMode::Semantic));
        assert!(ok.details);
        let bad_mode = search_request(SearchInput {
            query: Some("x".into()),
            limit: Some(3),
            mode: Some("fuzzy".into()),
            ..SearchInput::default()
        })
        .unwrap_err();
        assert!(bad_mode.to_string().contains("semantic, keyword or hybrid"));
        let no_limit = search_request(SearchInput {
            query: Some("x".into()),
            ..SearchInput::default()
        })
        .unwrap_err();
        assert_eq!(no_limit.kind(), ErrorKind::InvalidInput);
    }
}
