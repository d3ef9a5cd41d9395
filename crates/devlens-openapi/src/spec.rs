//! [`ApiSpec`]: a loaded, normalised spec and the ways to explore it.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;

use crate::compact::METHODS;
use crate::details::{self, EndpointDetails};
use crate::error::OpenApiError;
use crate::model::{
    DEFAULT_TAG, EndpointRef, EndpointSummary, Operation, TagSummary, extract_operations,
    loose_path, template_match, text,
};
use crate::normalize::swagger2_to_openapi3;
use crate::parse::{SpecKind, read_root};
use crate::resolve::DocSet;
use crate::schema::DetailLimits;
use devlens_core::suggest;

/// At most this many suggestions per error.
const MAX_SUGGESTIONS: usize = 5;

/// A loaded spec: Swagger 2.0 already turned into the 3.x shape, external documents bundled,
/// operations extracted; its path items and components are held as JSON text and parsed when a
/// request reads them (see `compact`). Immutable and shared (`Arc<ApiSpec>`) between callers.
pub struct ApiSpec {
    /// Lowercase hex SHA-256 of the raw bytes of the root document: the spec's identity for
    /// caches and search indexes.
    pub swagger_hash: String,
    /// Where it was loaded from (a path, or a URL with credentials redacted).
    pub source: String,
    /// `info.title`, empty when missing.
    pub title: String,
    /// `info.version`, empty when missing.
    pub version: String,
    /// The spec format version as declared: `2.0`, `3.0.3`, `3.1.0`, ...
    pub spec_version: String,
    docs: DocSet,
    operations: Vec<Operation>,
    by_id: HashMap<String, usize>,
    by_route: HashMap<(String, String), usize>,
    by_loose_route: HashMap<(String, String), usize>,
    /// Tags as [`ApiSpec::tags`] returns them, with the operations under each.
    tags: Vec<(TagSummary, Vec<usize>)>,
    /// External files with their stamps when loaded, so a cache can tell when to reload.
    pub(crate) external_files: Vec<(PathBuf, crate::source::Stamp)>,
}

impl fmt::Debug for ApiSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiSpec")
            .field("title", &self.title)
            .field("version", &self.version)
            .field("spec_version", &self.spec_version)
            .field("source", &self.source)
            .field("swagger_hash", &self.swagger_hash)
            .field("operations", &self.operations.len())
            .field("documents", &self.docs.len())
            .finish()
    }
}

/// Lowercase hex SHA-256.
pub(crate) fn content_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl ApiSpec {
    /// Parses a spec from memory. Refs to other documents cannot be followed (there is no
    /// location to resolve them against) and show as `$unresolved` in details; use
    /// [`crate::SpecCache::load`] for multi-file specs.
    pub fn from_bytes(bytes: &[u8], source: &str) -> Result<ApiSpec, OpenApiError> {
        ApiSpec::from_vec(bytes.to_vec(), source)
    }

    /// [`ApiSpec::from_bytes`] taking the buffer: a JSON spec keeps the text of its path items
    /// and components in it (see `compact`), so loading needs no second copy of the file.
    pub fn from_vec(bytes: Vec<u8>, source: &str) -> Result<ApiSpec, OpenApiError> {
        let hash = content_hash(&bytes);
        let root = read_root(bytes, None, source)?;
        Ok(ApiSpec::assemble(
            DocSet::new(root.document),
            root.kind,
            root.declared,
            hash,
            source.to_string(),
            Vec::new(),
        ))
    }

    /// Builds the spec from loaded documents (the root not yet normalised), and splits the
    /// documents still parsed whole once the operations are listed.
    pub(crate) fn assemble(
        mut docs: DocSet,
        kind: SpecKind,
        spec_version: String,
        swagger_hash: String,
        source: String,
        external_files: Vec<(PathBuf, crate::source::Stamp)>,
    ) -> ApiSpec {
        if kind == SpecKind::Swagger2 {
            swagger2_to_openapi3(&mut docs);
        }
        let info = docs.root_member("info");
        let title = text(info.and_then(|i| i.get("title"))).unwrap_or_default();
        let version = text(info.and_then(|i| i.get("version"))).unwrap_or_default();
        let operations = extract_operations(&docs);
        let mut by_id = HashMap::new();
        let mut by_route = HashMap::new();
        let mut by_loose_route = HashMap::new();
        for (i, op) in operations.iter().enumerate() {
            if let Some(id) = &op.operation_id {
                by_id.entry(id.clone()).or_insert(i);
            }
            by_route
                .entry((op.method.clone(), op.path.clone()))
                .or_insert(i);
            by_loose_route
                .entry((op.method.clone(), loose_path(&op.path)))
                .or_insert(i);
        }
        let tags = collect_tags(docs.root_member("tags"), &operations);
        docs.split();
        ApiSpec {
            tags,
            swagger_hash,
            source,
            title,
            version,
            spec_version,
            docs,
            operations,
            by_id,
            by_route,
            by_loose_route,
            external_files,
        }
    }

    /// Every operation, in document order (paths in order, then get, put, post, delete,
    /// options, head, patch, trace).
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// The documents, for the modules that read the spec beyond the listing (through a
    /// [`DocSet::view`]).
    pub fn documents(&self) -> &DocSet {
        &self.docs
    }

    /// Bytes of JSON text the spec holds for its path items and components (parsed only when
    /// read); the rest of what it holds is the listing and a few small parsed parts.
    pub fn held_text_bytes(&self) -> usize {
        self.docs.piece_bytes()
    }

    /// About how many bytes the spec holds in memory, for cache budgets: the documents (see
    /// [`DocSet::weight`]) and the listing (operations, their lookup tables and tags).
    pub(crate) fn weight(&self) -> usize {
        /// An operation's structs, table entries and allocations besides its text.
        const PER_OPERATION: usize = 400;
        let listing: usize = self
            .operations
            .iter()
            .map(|op| {
                let text = |s: &Option<String>| s.as_ref().map_or(0, String::len);
                // The path is kept three times (the operation, the two route tables), the id twice.
                PER_OPERATION
                    + op.path.len() * 3
                    + text(&op.operation_id) * 2
                    + text(&op.summary)
                    + text(&op.description)
                    + op.tags.iter().map(String::len).sum::<usize>()
            })
            .sum();
        self.docs.weight() + listing
    }

    /// Server base URLs (`servers[].url`, Swagger's `host` + `basePath`), for building calls.
    pub fn servers(&self) -> Vec<String> {
        self.docs
            .root_member("servers")
            .and_then(Value::as_array)
            .map(|s| {
                s.iter()
                    .filter_map(|s| text(s.get("url")))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    }

    /// The server URLs with their variables filled with defaults.
    pub fn server_urls(&self) -> Vec<String> {
        let Some(servers) = self.docs.root_member("servers").and_then(Value::as_array) else {
            return Vec::new();
        };
        servers
            .iter()
            .filter_map(|s| {
                let mut url = s.get("url")?.as_str()?.trim().to_string();
                if let Some(vars) = s.get("variables").and_then(Value::as_object) {
                    for (name, var) in vars {
                        if let Some(default) = var.get("default").and_then(Value::as_str) {
                            url = url.replace(&format!("{{{name}}}"), default);
                        }
                    }
                }
                (!url.contains('{')).then_some(url)
            })
            .collect()
    }

    /// Tags with their endpoint counts: declared tags in document order (with their
    /// description), then tags only used by operations, in first-seen order. Operations without
    /// tags are counted under `default`. Tags with no endpoints are left out.
    pub fn tags(&self) -> Vec<TagSummary> {
        self.tags.iter().map(|(t, _)| t.clone()).collect()
    }

    /// The endpoints carrying a tag (exact name, else case-insensitive), in document order.
    pub fn endpoints_by_tag(&self, tag: &str) -> Result<Vec<EndpointSummary>, OpenApiError> {
        let wanted = tag.trim();
        let (_, ops) = self
            .tags
            .iter()
            .find(|(t, _)| t.name == wanted)
            .or_else(|| {
                self.tags
                    .iter()
                    .find(|(t, _)| t.name.eq_ignore_ascii_case(wanted))
            })
            .ok_or_else(|| OpenApiError::UnknownTag {
                tag: wanted.to_string(),
                suggestions: suggest::closest(
                    wanted,
                    self.tags.iter().map(|(t, _)| t.name.as_str()),
                    MAX_SUGGESTIONS,
                ),
            })?;
        Ok(ops
            .iter()
            .filter_map(|&i| self.operations.get(i))
            .map(EndpointSummary::from)
            .collect())
    }

    /// Finds an operation by operationId or by method and path.
    ///
    /// Ids match exactly, then case-insensitively; an id written as `GET /path` is taken as a
    /// method and path. Paths match exactly, then ignoring a trailing slash, parameter names
    /// and case, then with a server base path (`/v1`) stripped, then as a concrete path
    /// (`/users/42`) against the templates. Failures carry up to five suggestions.
    pub fn find_operation(&self, r: &EndpointRef) -> Result<&Operation, OpenApiError> {
        self.find_index(r).and_then(|i| {
            self.operations
                .get(i)
                .ok_or_else(|| OpenApiError::Internal {
                    location: self.source.clone(),
                    message: "operation index out of range".into(),
                })
        })
    }

    fn find_index(&self, r: &EndpointRef) -> Result<usize, OpenApiError> {
        match r {
            EndpointRef::OperationId(id) => {
                let id = id.trim();
                if let Some(&i) = self.by_id.get(id) {
                    return Ok(i);
                }
                if let Some(i) = self.operations.iter().position(|op| {
                    op.operation_id
                        .as_deref()
                        .is_some_and(|o| o.eq_ignore_ascii_case(id))
                }) {
                    return Ok(i);
                }
                if let mp @ EndpointRef::MethodPath { .. } = EndpointRef::parse(id) {
                    return self.find_index(&mp);
                }
                Err(OpenApiError::UnknownOperation {
                    id: id.to_string(),
                    suggestions: suggest::closest(
                        id,
                        self.operations
                            .iter()
                            .filter_map(|op| op.operation_id.as_deref()),
                        MAX_SUGGESTIONS,
                    ),
                })
            }
            EndpointRef::MethodPath { method, path } => self.find_route(method, path),
        }
    }

    fn find_route(&self, method: &str, path: &str) -> Result<usize, OpenApiError> {
        let method = method.trim().to_ascii_uppercase();
        // As written first: some specs put query strings in path keys (`/rest?method=x`).
        if let Some(&i) = self
            .by_route
            .get(&(method.clone(), path.trim().to_string()))
        {
            return Ok(i);
        }
        let path = path_of(path.trim());
        if let Some(&i) = self.by_route.get(&(method.clone(), path.clone())) {
            return Ok(i);
        }
        let mut candidates = vec![path.clone()];
        for base in self.server_base_paths() {
            if let Some(rest) = path.strip_prefix(&base)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                candidates.push(if rest.is_empty() {
                    "/".into()
                } else {
                    rest.to_string()
                });
            }
        }
        for p in &candidates {
            if let Some(&i) = self.by_route.get(&(method.clone(), p.clone())) {
                return Ok(i);
            }
            if let Some(&i) = self.by_loose_route.get(&(method.clone(), loose_path(p))) {
                return Ok(i);
            }
        }
        // A concrete path: the template with the most literal segments wins.
        for p in &candidates {
            let concrete = loose_path(p);
            let best = self
                .operations
                .iter()
                .enumerate()
                .filter(|(_, op)| op.method == method)
                .filter_map(|(i, op)| {
                    template_match(&loose_path(&op.path), &concrete).map(|s| (s, i))
                })
                .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            if let Some((_, i)) = best {
                return Ok(i);
            }
        }
        Err(OpenApiError::UnknownEndpoint {
            suggestions: self.route_suggestions(&method, &path),
            method,
            path,
        })
    }

    /// Same path with another method first, then similar paths (same method preferred).
    fn route_suggestions(&self, method: &str, path: &str) -> Vec<String> {
        let q = loose_path(path);
        let q_words = suggest::words(&q);
        let known_method = METHODS.iter().any(|m| m.eq_ignore_ascii_case(method));
        let mut scored: Vec<(f64, String)> = self
            .operations
            .iter()
            .filter_map(|op| {
                let candidate = loose_path(&op.path);
                let mut s = if candidate == q {
                    3.0
                } else {
                    suggest::score(&q, &q_words, &candidate)
                };
                if known_method && op.method == method {
                    s += 0.05;
                }
                (s >= 0.75).then(|| (s, format!("{} {}", op.method, op.path)))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut out: Vec<String> = Vec::new();
        for (_, s) in scored {
            if !out.contains(&s) {
                out.push(s);
            }
            if out.len() == MAX_SUGGESTIONS {
                break;
            }
        }
        out
    }

    /// Path parts of the server URLs (`https://api.x.com/v1` → `/v1`), for callers that pass
    /// full request paths.
    fn server_base_paths(&self) -> Vec<String> {
        self.servers()
            .iter()
            .filter(|s| !s.contains('{'))
            .filter_map(|s| {
                let p = if s.starts_with('/') {
                    s.clone()
                } else {
                    Url::parse(s).ok()?.path().to_string()
                };
                let p = p.trim_end_matches('/').to_string();
                (!p.is_empty()).then_some(p)
            })
            .collect()
    }

    /// Details of one operation with the default [`DetailLimits`].
    pub fn endpoint_details(&self, r: &EndpointRef) -> Result<EndpointDetails, OpenApiError> {
        self.endpoint_details_with(r, &DetailLimits::default())
    }

    /// Details of one operation with explicit bounds on the rendered schemas.
    pub fn endpoint_details_with(
        &self,
        r: &EndpointRef,
        limits: &DetailLimits,
    ) -> Result<EndpointDetails, OpenApiError> {
        let op = self.find_operation(r)?;
        details::build(&self.docs.view(), op, limits)
    }
}

/// The path part of what a caller passed: a full URL loses scheme, host and query.
fn path_of(input: &str) -> String {
    if input.contains("://")
        && let Ok(u) = Url::parse(input)
    {
        return u.path().to_string();
    }
    let p = input.split(['?', '#']).next().unwrap_or(input);
    if p.starts_with('/') {
        p.to_string()
    } else {
        format!("/{p}")
    }
}

/// Characters of a tag description: its first paragraph, enough to choose a tag by.
const TAG_DESCRIPTION_CHARS: usize = 300;

/// Declared tags in document order (with their description), then tags only used by
/// operations, in first-seen order; untagged operations under `default`; empty tags dropped.
fn collect_tags(
    declared: Option<&Value>,
    operations: &[Operation],
) -> Vec<(TagSummary, Vec<usize>)> {
    let mut tags: Vec<(TagSummary, Vec<usize>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    if let Some(declared) = declared.and_then(Value::as_array) {
        for t in declared {
            let Some(name) = text(t.get("name")) else {
                continue;
            };
            if index.contains_key(&name) {
                continue;
            }
            index.insert(name.clone(), tags.len());
            let summary = TagSummary {
                name,
                description: text(t.get("description"))
                    .map(|d| crate::details::paragraph(&d, TAG_DESCRIPTION_CHARS)),
                endpoints: 0,
            };
            tags.push((summary, Vec::new()));
        }
    }
    let default = [DEFAULT_TAG.to_string()];
    for (op_index, op) in operations.iter().enumerate() {
        let names = if op.tags.is_empty() {
            &default[..]
        } else {
            &op.tags[..]
        };
        for name in names {
            let i = *index.entry(name.clone()).or_insert_with(|| {
                let summary = TagSummary {
                    name: name.clone(),
                    description: None,
                    endpoints: 0,
                };
                tags.push((summary, Vec::new()));
                tags.len() - 1
            });
            if let Some((t, ops)) = tags.get_mut(i) {
                t.endpoints += 1;
                ops.push(op_index);
            }
        }
    }
    tags.retain(|(t, _)| t.endpoints > 0);
    tags
}
