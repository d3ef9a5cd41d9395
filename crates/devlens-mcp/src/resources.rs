//! MCP resources: what devlens knows, as documents a client can attach or a person can browse —
//! a spec's operations and endpoints, a library's pages, saved solutions, the browser's state,
//! the screenshots and traces the tools saved.
//!
//! Every resource is compact markdown (artifacts keep their own type) read through the
//! application layer, like a tool's answer. `devlens://` URIs name them; a path segment that
//! may hold `/` (a library id, a docs page) is percent-encoded, as a client expanding the
//! templates below (RFC 6570 simple expansion) writes it.
//!
//! Subscriptions (`resources/subscribe`, or a 2026-07-28 `subscriptions/listen` naming URIs)
//! are served by polling: each subscribed resource is read again every second and an update is
//! sent when its content changed. The list itself (projects, libraries, artifacts) is polled
//! the same way for `notifications/resources/list_changed`. Both are cheap reads; nothing is
//! polled for a session that subscribed to nothing.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use rmcp::{
    ErrorData,
    model::{Resource, ResourceContents, ResourceTemplate},
};
use serde_json::json;

use devlens_app::api::{self, EndpointRef, SpecSelector};
use devlens_app::{AppError, Classify, ErrorKind, Report, artifacts, docs, kb, projects};
use devlens_core::percent::{decode, encode};

use crate::{DevlensServer, ToolFamily, visibility::ToolState};

/// How often subscribed resources and the resource list are looked at again.
pub(crate) const WATCH_POLL: Duration = Duration::from_secs(1);
/// How many subscriptions one session may hold.
const MAX_SUBSCRIPTIONS: usize = 100;

const MARKDOWN: &str = "text/markdown";

/// A devlens resource, parsed from its URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Address {
    /// `devlens://api` — the projects.
    Projects,
    /// `devlens://api/{project}/operations`
    Operations { project: String },
    /// `devlens://api/{project}/operations/{operationId}`
    Operation { project: String, operation: String },
    /// `devlens://api/{project}/tags/{tag}`
    Tag { project: String, tag: String },
    /// `devlens://api/{project}/index-status`
    IndexStatus { project: String },
    /// `devlens://docs` — the libraries.
    Libraries,
    /// `devlens://docs/{library}` — a library's pages and sections.
    Library { library: String },
    /// `devlens://docs/{library}/pages/{page}`
    Page { library: String, page: String },
    /// `devlens://kb/solutions`
    Solutions,
    /// `devlens://kb/solutions/{id}`
    Solution { id: String },
    /// `devlens://browser` — connections, the active tab, the debugger.
    Browser,
    /// `devlens://artifacts/{name}`
    Artifact { name: String },
}

const SCHEME: &str = "devlens://";

/// The resource templates: (template, name, what it is).
pub(crate) const TEMPLATES: [(&str, &str, &str, ToolFamily); 6] = [
    (
        "devlens://api/{project}/operations/{operationId}",
        "endpoint",
        "An endpoint's contract: parameters, request body, responses (compact markdown).",
        ToolFamily::Api,
    ),
    (
        "devlens://api/{project}/tags/{tag}",
        "endpoints-by-tag",
        "The endpoints of one tag of a project's spec.",
        ToolFamily::Api,
    ),
    (
        "devlens://docs/{library}",
        "library",
        "A library's docs: versions, pages and their sections.",
        ToolFamily::Docs,
    ),
    (
        "devlens://docs/{library}/pages/{page}",
        "docs-page",
        "One page of a library's docs, every section with its code.",
        ToolFamily::Docs,
    ),
    (
        "devlens://kb/solutions/{id}",
        "solution",
        "A saved solution from the knowledge base.",
        ToolFamily::Kb,
    ),
    (
        "devlens://artifacts/{name}",
        "artifact",
        "A file the tools saved: screenshot, trace, heap snapshot.",
        ToolFamily::Browser,
    ),
];

impl Address {
    pub(crate) fn parse(uri: &str) -> Option<Address> {
        let rest = uri.strip_prefix(SCHEME)?;
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let raw: Vec<&str> = rest.split('/').collect();
        let mut parts = Vec::with_capacity(raw.len());
        for part in &raw {
            parts.push(decode(part)?);
        }
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let owned = |s: &str| s.to_string();
        Some(match parts.as_slice() {
            ["api"] | ["api", ""] => Address::Projects,
            ["api", p, "operations"] => Address::Operations { project: owned(p) },
            ["api", p, "operations", op] => Address::Operation {
                project: owned(p),
                operation: owned(op),
            },
            ["api", p, "tags", tag] => Address::Tag {
                project: owned(p),
                tag: owned(tag),
            },
            ["api", p, "index-status"] => Address::IndexStatus { project: owned(p) },
            ["docs"] | ["docs", ""] => Address::Libraries,
            ["docs", lib] => Address::Library {
                library: owned(lib),
            },
            ["docs", lib, "pages", page] => Address::Page {
                library: owned(lib),
                page: owned(page),
            },
            ["kb", "solutions"] => Address::Solutions,
            ["kb", "solutions", id] => Address::Solution { id: owned(id) },
            ["browser"] => Address::Browser,
            ["artifacts", ..] if parts.len() > 1 => Address::Artifact {
                // Artifacts may sit in sub-folders: `traces/load.json`, encoded or not.
                name: parts[1..].join("/"),
            },
            _ => return None,
        })
        .filter(|a| a.segments_are_named())
    }

    fn segments_are_named(&self) -> bool {
        match self {
            Address::Operations { project } | Address::IndexStatus { project } => {
                !project.is_empty()
            }
            Address::Operation {
                project,
                operation: second,
            }
            | Address::Tag {
                project,
                tag: second,
            } => !project.is_empty() && !second.is_empty(),
            Address::Library { library } => !library.is_empty(),
            Address::Page { library, page } => !library.is_empty() && !page.is_empty(),
            Address::Solution { id } => !id.is_empty(),
            Address::Artifact { name } => !name.is_empty(),
            Address::Projects | Address::Libraries | Address::Solutions | Address::Browser => true,
        }
    }

    pub(crate) fn uri(&self) -> String {
        let e = encode;
        match self {
            Address::Projects => format!("{SCHEME}api"),
            Address::Operations { project } => format!("{SCHEME}api/{}/operations", e(project)),
            Address::Operation { project, operation } => {
                format!("{SCHEME}api/{}/operations/{}", e(project), e(operation))
            }
            Address::Tag { project, tag } => format!("{SCHEME}api/{}/tags/{}", e(project), e(tag)),
            Address::IndexStatus { project } => {
                format!("{SCHEME}api/{}/index-status", e(project))
            }
            Address::Libraries => format!("{SCHEME}docs"),
            Address::Library { library } => format!("{SCHEME}docs/{}", e(library)),
            Address::Page { library, page } => {
                format!("{SCHEME}docs/{}/pages/{}", e(library), e(page))
            }
            Address::Solutions => format!("{SCHEME}kb/solutions"),
            Address::Solution { id } => format!("{SCHEME}kb/solutions/{}", e(id)),
            Address::Browser => format!("{SCHEME}browser"),
            Address::Artifact { name } => format!(
                "{SCHEME}artifacts/{}",
                name.split('/').map(e).collect::<Vec<_>>().join("/")
            ),
        }
    }

    /// The family whose tools this resource belongs with.
    pub(crate) fn family(&self) -> ToolFamily {
        match self {
            Address::Projects
            | Address::Operations { .. }
            | Address::Operation { .. }
            | Address::Tag { .. }
            | Address::IndexStatus { .. } => ToolFamily::Api,
            Address::Libraries | Address::Library { .. } | Address::Page { .. } => ToolFamily::Docs,
            Address::Solutions | Address::Solution { .. } => ToolFamily::Kb,
            Address::Browser | Address::Artifact { .. } => ToolFamily::Browser,
        }
    }
}

/// The error for a URI devlens does not serve (SEP-2164: invalid params, with the URI).
pub(crate) fn not_found(uri: &str, why: impl std::fmt::Display) -> ErrorData {
    ErrorData::invalid_params(why.to_string(), Some(json!({ "uri": uri })))
}

fn unknown_uri(uri: &str) -> ErrorData {
    not_found(
        uri,
        format!(
            "no resource `{uri}`: devlens serves devlens://api, devlens://docs, \
             devlens://kb/solutions, devlens://browser and devlens://artifacts/NAME (see \
             resources/list and resources/templates/list)"
        ),
    )
}

/// An application failure as a resource error: the caller's mistake is invalid params (with
/// the URI), anything else an internal error.
fn app_error(uri: &str, e: impl Classify) -> ErrorData {
    match e.kind() {
        ErrorKind::InvalidInput
        | ErrorKind::NotFound
        | ErrorKind::Precondition
        | ErrorKind::Unprocessable
        | ErrorKind::Conflict
        | ErrorKind::Gone => not_found(uri, e),
        _ => ErrorData::internal_error(e.to_string(), Some(json!({ "uri": uri }))),
    }
}

fn markdown(uri: &str, text: String) -> ResourceContents {
    ResourceContents::text(text, uri).with_mime_type(MARKDOWN)
}

fn resource(address: &Address, name: String, title: &str, description: &str) -> Resource {
    Resource::new(address.uri(), name)
        .with_title(title)
        .with_description(description)
        .with_mime_type(MARKDOWN)
}

/// What one session subscribed to with `resources/subscribe`.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    uris: Mutex<BTreeSet<String>>,
}

impl Subscriptions {
    fn set(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.uris.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn add(&self, uri: &str) -> Result<(), ErrorData> {
        let mut set = self.set();
        if set.len() >= MAX_SUBSCRIPTIONS && !set.contains(uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "this session already follows {MAX_SUBSCRIPTIONS} resources: unsubscribe \
                     from some first"
                ),
                Some(json!({ "uri": uri })),
            ));
        }
        set.insert(uri.to_string());
        Ok(())
    }

    pub(crate) fn remove(&self, uri: &str) {
        self.set().remove(uri);
    }

    pub(crate) fn list(&self) -> Vec<String> {
        self.set().iter().cloned().collect()
    }
}

impl DevlensServer {
    fn offers(&self, address: &Address) -> bool {
        self.options.families.contains(address.family())
    }

    /// Every concrete resource: the fixed entry points of each family offered, each project's
    /// operations and index status, each library, each saved artifact. Solutions, endpoints and
    /// pages are many: they are reached through the templates (and completions).
    pub(crate) fn list_resources_now(&self) -> Vec<Resource> {
        let families = &self.options.families;
        let mut out = Vec::new();
        if families.contains(ToolFamily::Api) {
            out.push(resource(
                &Address::Projects,
                "projects".into(),
                "API projects",
                "The configured API projects and their specs; the active one is marked.",
            ));
            if let Ok(list) = projects::list(self.app()) {
                for name in list.projects.into_iter().map(|p| p.name) {
                    out.push(resource(
                        &Address::Operations {
                            project: name.clone(),
                        },
                        format!("{name}-operations"),
                        &format!("{name}: operations"),
                        "Every operation of the project's spec, grouped by tag.",
                    ));
                    out.push(resource(
                        &Address::IndexStatus {
                            project: name.clone(),
                        },
                        format!("{name}-index-status"),
                        &format!("{name}: search index status"),
                        "Whether the project's semantic index is built and current (subscribe \
                         to follow a re-index).",
                    ));
                }
            }
        }
        if families.contains(ToolFamily::Docs) {
            out.push(resource(
                &Address::Libraries,
                "libraries".into(),
                "Library docs",
                "The libraries whose docs devlens holds, with their versions.",
            ));
            if let Ok(list) = docs::libraries(self.app()) {
                for lib in list.libraries {
                    out.push(resource(
                        &Address::Library {
                            library: lib.id.clone(),
                        },
                        lib.id.trim_start_matches('/').replace('/', "-"),
                        &format!("{} docs", lib.name),
                        &format!(
                            "{} ({}): pages and sections; versions {}",
                            lib.name,
                            lib.id,
                            lib.versions.join(", ")
                        ),
                    ));
                }
            }
        }
        if families.contains(ToolFamily::Kb) {
            out.push(resource(
                &Address::Solutions,
                "solutions".into(),
                "Saved solutions",
                "The knowledge base's solutions, newest first (read one at \
                 devlens://kb/solutions/{id}).",
            ));
        }
        if families.contains(ToolFamily::Browser) {
            out.push(resource(
                &Address::Browser,
                "browser".into(),
                "Browser state",
                "Connections, the active tab and whether its debugger is on or paused \
                 (subscribe to follow it).",
            ));
            for artifact in artifacts::list(self.app()) {
                let address = Address::Artifact {
                    name: artifact.name.clone(),
                };
                out.push(
                    Resource::new(address.uri(), artifact.name.clone())
                        .with_title(artifact.name.clone())
                        .with_description("A file the tools saved")
                        .with_mime_type(artifact.mime_type)
                        .with_size(artifact.size),
                );
            }
        }
        out
    }

    pub(crate) fn resource_templates(&self) -> Vec<ResourceTemplate> {
        TEMPLATES
            .iter()
            .filter(|(_, _, _, family)| self.options.families.contains(*family))
            .map(|(template, name, description, _)| {
                let mime = if *name == "artifact" {
                    "application/octet-stream"
                } else {
                    MARKDOWN
                };
                ResourceTemplate::new(*template, *name)
                    .with_description(*description)
                    .with_mime_type(mime)
            })
            .collect()
    }

    /// Reads one resource.
    pub(crate) async fn read_resource_now(
        &self,
        uri: &str,
    ) -> Result<Vec<ResourceContents>, ErrorData> {
        let Some(address) = Address::parse(uri) else {
            return Err(unknown_uri(uri));
        };
        if !self.offers(&address) {
            return Err(not_found(
                uri,
                format!(
                    "`{uri}` belongs to the {} tools, which this server was started without",
                    address.family()
                ),
            ));
        }
        let err = |e: AppError| app_error(uri, e);
        let project = |p: &str| SpecSelector::project(Some(p.to_string()));
        let app = self.app();
        let text = match &address {
            Address::Projects => projects_text(self).map_err(err)?,
            Address::Operations { project: p } => api::operations(app, &project(p))
                .await
                .map_err(err)?
                .to_text(),
            Address::Operation {
                project: p,
                operation,
            } => api::details(app, &project(p), &EndpointRef::parse(operation))
                .await
                .map_err(err)?
                .to_text(),
            Address::Tag { project: p, tag } => {
                let whole_tag = api::ListEndpoints {
                    tag: Some(tag.clone()),
                    ..api::ListEndpoints::default()
                };
                api::endpoints(app, &project(p), &whole_tag)
                    .await
                    .map_err(err)?
                    .to_text()
            }
            Address::IndexStatus { project: p } => api::index_status(app, &project(p))
                .await
                .map_err(err)?
                .to_text(),
            Address::Libraries => docs::libraries(app).map_err(err)?.to_text(),
            Address::Library { library } => docs::outline(app, library).map_err(err)?.to_text(),
            Address::Page { library, page } => {
                docs::page(app, library, page).map_err(err)?.to_text()
            }
            Address::Solutions => kb::list(app).map_err(err)?.to_text(),
            Address::Solution { id } => kb::get(app, id).map_err(err)?.to_text(),
            Address::Browser => browser_text(self).await,
            Address::Artifact { name } => {
                let (artifact, bytes) = artifacts::read(self.app(), name).map_err(err)?;
                let content = match String::from_utf8(bytes) {
                    Ok(text) if artifacts::is_text(artifact.mime_type) => {
                        ResourceContents::text(text, uri)
                    }
                    Ok(text) => ResourceContents::blob(
                        base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
                        uri,
                    ),
                    Err(e) => ResourceContents::blob(
                        base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
                        uri,
                    ),
                };
                return Ok(vec![content.with_mime_type(artifact.mime_type)]);
            }
        };
        Ok(vec![markdown(uri, text)])
    }

    /// A digest of a resource's content (or of why it cannot be read), to tell when it
    /// changed.
    pub(crate) async fn resource_digest(&self, uri: &str) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        if let Some(Address::Artifact { name }) = Address::parse(uri) {
            // Size and time, not the bytes: a trace can be large.
            artifacts::list(self.app())
                .into_iter()
                .find(|a| a.name == name)
                .map(|a| (a.size, a.modified))
                .hash(&mut h);
            return h.finish();
        }
        match self.read_resource_now(uri).await {
            Ok(contents) => format!("{contents:?}").hash(&mut h),
            Err(e) => e.message.hash(&mut h),
        }
        h.finish()
    }

    /// A digest of the resource list, to tell when it changed.
    pub(crate) fn resource_list_digest(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for r in self.list_resources_now() {
            (r.uri, r.size).hash(&mut h);
        }
        h.finish()
    }

    /// Watches the resource list (while `list_wanted()`) and `subscribed()`'s resources,
    /// calling `list_changed` and `updated(uri)` on changes, until `closed` says the client is
    /// gone or a notification cannot be delivered.
    pub(crate) async fn watch_resources<LF, UF>(
        &self,
        subscribed: impl Fn() -> Vec<String>,
        list_wanted: impl Fn() -> bool,
        closed: impl Fn() -> bool,
        list_changed: impl Fn() -> LF,
        updated: impl Fn(String) -> UF,
    ) where
        LF: Future<Output = bool>,
        UF: Future<Output = bool>,
    {
        let mut list: Option<u64> = None;
        let mut seen: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        let mut tick = tokio::time::interval(WATCH_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            if closed() {
                return;
            }
            if list_wanted() {
                let now = self.resource_list_digest();
                let changed = list.is_some_and(|before| before != now);
                list = Some(now);
                if changed && !list_changed().await {
                    return;
                }
            } else {
                list = None;
            }
            let uris = subscribed();
            seen.retain(|uri, _| uris.contains(uri));
            for uri in uris {
                let digest = self.resource_digest(&uri).await;
                let changed = seen
                    .insert(uri.clone(), digest)
                    .is_some_and(|before| before != digest);
                if changed && !updated(uri).await {
                    return;
                }
            }
        }
    }
}

fn projects_text(server: &DevlensServer) -> Result<String, AppError> {
    let list = projects::list(server.app())?;
    let active = list.active;
    let mut out = String::new();
    for p in &list.projects {
        let mark = if active.as_deref() == Some(p.name.as_str()) {
            " (active)"
        } else {
            ""
        };
        out.push_str(&format!(
            "- {}{mark}: {} — devlens://api/{}/operations\n",
            p.name,
            p.spec.as_deref().unwrap_or("(no spec)"),
            encode(&p.name)
        ));
    }
    if out.is_empty() {
        out = "no API projects yet: add one with `devlens project add NAME SPEC`\n".into();
    }
    Ok(out)
}

async fn browser_text(server: &DevlensServer) -> String {
    let browser = server.app().browser();
    let connections = devlens_app::browser::connections(server.app());
    let state = ToolState::of(browser).await;
    let mut out = format!("state: {}\n", state.name());
    if state != ToolState::NotConnected
        && let Ok(tab) = browser.tab(None).await
    {
        out.push_str(&format!("active tab: {}\n", tab.url()));
    }
    out.push_str(&connections.to_text());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_with_slashes_and_spaces_encoded() {
        let cases = [
            Address::Projects,
            Address::Operation {
                project: "shop api".into(),
                operation: "repos/get".into(),
            },
            Address::Tag {
                project: "petstore".into(),
                tag: "pets & owners".into(),
            },
            Address::Library {
                library: "/facebook/react".into(),
            },
            Address::Page {
                library: "/facebook/react".into(),
                page: "reference/hooks/useState.md".into(),
            },
            Address::Solution {
                id: "abc123".into(),
            },
            Address::Artifact {
                name: "traces/load trace.json".into(),
            },
            Address::Browser,
        ];
        for address in cases {
            let uri = address.uri();
            assert_eq!(Address::parse(&uri), Some(address.clone()), "{uri}");
        }
        assert_eq!(
            Address::Library {
                library: "/facebook/react".into()
            }
            .uri(),
            "devlens://docs/%2Ffacebook%2Freact"
        );
    }

    #[test]
    fn other_uris_are_not_devlens_resources() {
        for uri in [
            "test://static-text",
            "devlens://nothing",
            "devlens://api/p/operations/",
            "devlens://docs/%zz",
            "devlens://docs/a/pages",
            "devlens://artifacts/",
        ] {
            assert_eq!(Address::parse(uri), None, "{uri}");
        }
    }
}
