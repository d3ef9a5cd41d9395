//! Loading specs from files and URLs, bundling the documents they reference, and caching the
//! result.
//!
//! The cache is keyed by content (the root document's SHA-256), so two paths to the same file,
//! or a URL that keeps serving the same bytes, share one parsed spec. Files are re-checked on
//! every load, but only by `stat` (modification time and length) unless they changed; URLs are
//! re-fetched at most once a minute. Parsing (up to tens of megabytes of JSON) runs on the
//! blocking pool, never on an async worker.
//!
//! What a load may read is bounded: URLs (the spec's and those its `$ref`s name) are fetched
//! through the outbound guard ([`devlens_core::outbound`]: never link-local or cloud metadata
//! addresses, private hosts only when allowed), local `$ref`s stay inside the root spec's folder
//! (symbolic links followed), and the spec and every document it pulls in share one byte budget
//! (256 MB), checked while reading.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use devlens_core::outbound::{self, BodyError, GuardedClient, OutboundPolicy};
use tokio::sync::OnceCell;
use url::Url;

use crate::error::{OpenApiError, http_status_hint};
use crate::parse::{parse_document, read_root};
use crate::resolve::{DocId, DocSet, Document, ROOT, external_refs};
use crate::source::{SpecSource, Stamp, redact_url};
use crate::spec::{ApiSpec, content_hash};

/// Parsed specs kept in memory; the least recently used beyond this are dropped.
const MAX_CACHED_SPECS: usize = 8;
/// What the specs kept may weigh together ([`ApiSpec::weight`]); beyond it the least recently
/// used are dropped too, down to the one in use. Microsoft Graph beta, the largest spec seen,
/// weighs 65 MB loaded and up to 145 MB once it keeps its most parsed pieces: three to seven of
/// them fit.
const MAX_CACHED_BYTES: usize = 512 * 1024 * 1024;
/// A URL's spec is trusted this long before it is fetched again.
const URL_TTL: Duration = Duration::from_secs(60);
/// Whole-request timeout for fetching a document.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most one load reads: the spec and every document its `$ref`s pull in, together (the
/// largest real specs seen are under 50 MB).
const MAX_LOAD_BYTES: u64 = 256 * 1024 * 1024;
const MB: u64 = 1024 * 1024;
/// External documents one spec may pull in.
pub(crate) const MAX_EXTERNAL_DOCUMENTS: usize = 50;
const ACCEPT: &str = "application/json, application/yaml, application/x-yaml, text/yaml, \
                      application/vnd.oai.openapi+json, application/vnd.oai.openapi, \
                      text/plain;q=0.8, */*;q=0.5";

/// Loads specs and keeps the parsed results. Cheap to clone; clones share the cache.
#[derive(Clone, Default)]
pub struct SpecCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SpecCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cached = self.inner.state.lock().map(|s| s.specs.len()).unwrap_or(0);
        f.debug_struct("SpecCache")
            .field("cached", &cached)
            .finish()
    }
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    limits: CacheLimits,
}

/// How much the cache keeps (a count of specs and their weight together), and how much one
/// load may read.
#[derive(Clone, Copy)]
struct CacheLimits {
    specs: usize,
    bytes: usize,
    load_bytes: u64,
}

impl Default for CacheLimits {
    fn default() -> CacheLimits {
        CacheLimits {
            specs: MAX_CACHED_SPECS,
            bytes: MAX_CACHED_BYTES,
            load_bytes: MAX_LOAD_BYTES,
        }
    }
}

#[derive(Default)]
struct State {
    specs: HashMap<String, Entry>,
    tick: u64,
    files: HashMap<PathBuf, (Stamp, String)>,
    urls: HashMap<String, (String, Instant)>,
}

/// One cached spec; the cell makes concurrent loads of the same new content parse it once.
struct Entry {
    cell: Arc<OnceCell<Arc<ApiSpec>>>,
    last_used: u64,
}

impl SpecCache {
    pub fn new() -> SpecCache {
        SpecCache::default()
    }

    /// A cache whose loads read at most `bytes`: the spec and every document its `$ref`s pull
    /// in, together (256 MB by default).
    pub fn with_load_budget(bytes: u64) -> SpecCache {
        SpecCache {
            inner: Arc::new(Inner {
                limits: CacheLimits {
                    load_bytes: bytes,
                    ..CacheLimits::default()
                },
                ..Inner::default()
            }),
        }
    }

    /// Loads a spec, from the cache when its content has not changed. URLs are fetched from
    /// public hosts only; [`SpecCache::load_with`] allows private ones.
    pub async fn load(&self, source: &SpecSource) -> Result<Arc<ApiSpec>, OpenApiError> {
        self.load_with(source, &OutboundPolicy::public_only()).await
    }

    /// Loads a spec, fetching it (when it is a URL) and the documents its `$ref`s name through
    /// the outbound guard with `policy`: which private hosts may be fetched (a project's own
    /// spec URL and base URL, `[network] allow`).
    pub async fn load_with(
        &self,
        source: &SpecSource,
        policy: &OutboundPolicy,
    ) -> Result<Arc<ApiSpec>, OpenApiError> {
        match source {
            SpecSource::File(path) => self.load_file(path, policy).await,
            SpecSource::Url(url) => self.load_url(url, policy).await,
        }
    }

    async fn load_file(
        &self,
        path: &Path,
        policy: &OutboundPolicy,
    ) -> Result<Arc<ApiSpec>, OpenApiError> {
        let meta = tokio::fs::metadata(path)
            .await
            .map_err(|e| file_error(path, &e))?;
        let stamp = Stamp::of(&meta);
        let known = self.with_state(|s| s.files.get(path).cloned());
        if let Some((known_stamp, hash)) = known
            && known_stamp == stamp
            && let Some(spec) = self.cached(&hash).await
        {
            return Ok(spec);
        }
        let budget = self.inner.limits.load_bytes;
        let too_large = OpenApiError::TooLarge {
            location: path.display().to_string(),
            limit_mb: budget / MB,
        };
        let bytes = read_file(path, budget, too_large).await?;
        let (bytes, hash) = hash_off_thread(bytes, &path.display().to_string()).await?;
        let canonical = tokio::fs::canonicalize(path).await.ok();
        let base = canonical
            .as_ref()
            .and_then(|abs| Url::from_file_path(abs).ok());
        let source = path.display().to_string();
        let mut loader = Loader::new(policy, budget, source.clone());
        loader.read = bytes.len() as u64;
        loader.root_dir = canonical
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        let spec = self
            .get_or_build(&hash, || {
                self.build(bytes, base, source, hash.clone(), loader)
            })
            .await?;
        self.with_state(|s| {
            s.files.insert(path.to_path_buf(), (stamp, hash.clone()));
        });
        Ok(spec)
    }

    async fn load_url(
        &self,
        url: &Url,
        policy: &OutboundPolicy,
    ) -> Result<Arc<ApiSpec>, OpenApiError> {
        let key = url.as_str().to_string();
        let known = self.with_state(|s| s.urls.get(&key).cloned());
        if let Some((hash, fetched_at)) = known
            && fetched_at.elapsed() < URL_TTL
            && let Some(spec) = self.cached(&hash).await
        {
            return Ok(spec);
        }
        let mut loader = Loader::new(policy, self.inner.limits.load_bytes, redact_url(url));
        let (bytes, _) = loader.fetch(url).await?;
        let (bytes, hash) = hash_off_thread(bytes, &redact_url(url)).await?;
        let spec = self
            .get_or_build(&hash, || {
                self.build(
                    bytes,
                    Some(url.clone()),
                    redact_url(url),
                    hash.clone(),
                    loader,
                )
            })
            .await?;
        self.with_state(|s| {
            s.urls.insert(key, (hash.clone(), Instant::now()));
        });
        Ok(spec)
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        // A poisoned lock only means another thread panicked mid-update of plain maps; the
        // data is still usable, and refusing to load specs forever would be worse.
        let mut guard = self
            .inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }

    /// A cached spec for this content, if its external files have not changed since.
    async fn cached(&self, hash: &str) -> Option<Arc<ApiSpec>> {
        let spec = self.with_state(|s| {
            s.tick += 1;
            let tick = s.tick;
            let entry = s.specs.get_mut(hash)?;
            entry.last_used = tick;
            entry.cell.get().cloned()
        })?;
        for (path, stamp) in &spec.external_files {
            let now = tokio::fs::metadata(path).await.ok().map(|m| Stamp::of(&m));
            if now != Some(*stamp) {
                return None;
            }
        }
        Some(spec)
    }

    async fn get_or_build<F, Fut>(&self, hash: &str, build: F) -> Result<Arc<ApiSpec>, OpenApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<ApiSpec, OpenApiError>>,
    {
        if let Some(spec) = self.cached(hash).await {
            return Ok(spec);
        }
        let cell = self.with_state(|s| {
            s.tick += 1;
            let tick = s.tick;
            let entry = s.specs.entry(hash.to_string()).or_insert_with(|| Entry {
                cell: Arc::new(OnceCell::new()),
                last_used: tick,
            });
            // Same root content but an external file changed (`cached` said no): start afresh.
            if entry.cell.initialized() {
                entry.cell = Arc::new(OnceCell::new());
            }
            entry.last_used = tick;
            entry.cell.clone()
        });
        let spec = cell
            .get_or_try_init(|| async { build().await.map(Arc::new) })
            .await?
            .clone();
        self.evict();
        Ok(spec)
    }

    /// Keeps at most [`MAX_CACHED_SPECS`] parsed specs weighing at most [`MAX_CACHED_BYTES`]
    /// together (but always the last one used), dropping the least recently used, and forgets
    /// file/URL entries that point to dropped specs.
    fn evict(&self) {
        let limits = self.inner.limits;
        self.with_state(|s| {
            s.specs
                .retain(|_, e| e.cell.initialized() || Arc::strong_count(&e.cell) > 1);
            loop {
                let (count, weight) = s
                    .specs
                    .values()
                    .filter_map(|e| e.cell.get())
                    .fold((0, 0), |(n, w), spec| (n + 1, w + spec.weight()));
                let over = count > limits.specs || (count > 1 && weight > limits.bytes);
                if !over {
                    break;
                }
                let oldest = s
                    .specs
                    .iter()
                    .filter(|(_, e)| e.cell.initialized())
                    .min_by_key(|(_, e)| e.last_used)
                    .map(|(k, _)| k.clone());
                match oldest {
                    Some(k) => {
                        s.specs.remove(&k);
                    }
                    None => break,
                }
            }
            let specs = &s.specs;
            s.files.retain(|_, (_, h)| specs.contains_key(h));
            s.urls.retain(|_, (h, _)| specs.contains_key(h));
        });
    }

    /// Reads the root (the file's bytes become the text of its pieces, see `compact`), loads
    /// the documents it references, normalises and indexes.
    async fn build(
        &self,
        bytes: Vec<u8>,
        base: Option<Url>,
        source: String,
        hash: String,
        mut loader: Loader,
    ) -> Result<ApiSpec, OpenApiError> {
        let display = source.clone();
        let root = blocking(&source, move || read_root(bytes, base, &display)).await?;
        let mut docs = DocSet::new(root.document);
        let external_files = load_external(&mut docs, root.refs, &mut loader).await?;
        let (kind, declared) = (root.kind, root.declared);
        let location = source.clone();
        blocking(&location, move || {
            Ok(ApiSpec::assemble(
                docs,
                kind,
                declared,
                hash,
                source,
                external_files,
            ))
        })
        .await
    }
}

/// Loads every document the spec references, transitively, breadth first, up to
/// [`MAX_EXTERNAL_DOCUMENTS`] and within the load's byte budget; local files only inside the
/// root spec's folder. A missing or broken document is an error now, so that rendering details
/// later never does I/O and never meets a half-loaded spec.
async fn load_external(
    docs: &mut DocSet,
    refs: Vec<String>,
    loader: &mut Loader,
) -> Result<Vec<(PathBuf, Stamp)>, OpenApiError> {
    let mut files = Vec::new();
    let mut queue: VecDeque<(DocId, String)> = refs.into_iter().map(|r| (ROOT, r)).collect();
    while let Some((from, reference)) = queue.pop_front() {
        let from_display = docs
            .doc(from)
            .map_or_else(String::new, |d| d.display.clone());
        let broken = |reason: String| OpenApiError::UnresolvedRef {
            reference: reference.clone(),
            from: from_display.clone(),
            reason,
        };
        let url = match docs.target_url(&reference, from) {
            Ok(Some(url)) => url,
            Ok(None) => continue,
            Err(e) => return Err(broken(e.to_string())),
        };
        if docs.contains_url(&url) {
            continue;
        }
        let from_remote = docs
            .doc(from)
            .and_then(|d| d.url.as_ref())
            .is_some_and(|u| u.scheme() != "file");
        match url.scheme() {
            "file" if from_remote => {
                return Err(broken(
                    "a spec fetched over HTTP may not reference local files".into(),
                ));
            }
            "file" => loader.confine(&url).await.map_err(&broken)?,
            "http" | "https" => {}
            other => return Err(broken(format!("the `{other}` scheme is not supported"))),
        }
        if docs.len() > MAX_EXTERNAL_DOCUMENTS {
            return Err(OpenApiError::TooManyDocuments {
                location: docs
                    .doc(ROOT)
                    .map_or_else(String::new, |d| d.display.clone()),
                limit: MAX_EXTERNAL_DOCUMENTS,
            });
        }
        let (bytes, stamp) = loader.fetch(&url).await.map_err(|e| match e {
            OpenApiError::FileNotFound { path } => broken(format!(
                "{} does not exist; fix the $ref or add the file",
                path.display()
            )),
            // The load's budget is the whole spec's: said as is.
            too_large @ OpenApiError::TooLarge { .. } => too_large,
            OpenApiError::FetchRefused { reason } => OpenApiError::FetchRefused {
                reason: format!("cannot resolve $ref `{reference}` in {from_display}: {reason}"),
            },
            other => broken(other.to_string()),
        })?;
        let display = match url.to_file_path() {
            Ok(p) if url.scheme() == "file" => {
                if let Some(stamp) = stamp {
                    files.push((p.clone(), stamp));
                }
                p.display().to_string()
            }
            _ => redact_url(&url),
        };
        let shown = display.clone();
        let (value, refs) = blocking(&display, move || {
            let value = parse_document(&bytes, &shown)?;
            let refs = external_refs(&value);
            Ok((value, refs))
        })
        .await?;
        let id = docs.add(Document::parsed(Some(url), display, value));
        queue.extend(refs.into_iter().map(|r| (id, r)));
    }
    Ok(files)
}

/// One load's reading: the outbound guard's client (built on first use), what is left of the
/// load's byte budget, and the folder its local `$ref`s must stay in.
struct Loader {
    policy: OutboundPolicy,
    client: Option<GuardedClient>,
    budget: u64,
    /// Bytes read so far, every document together.
    read: u64,
    /// The root spec's folder (links resolved), when it was loaded from a file.
    root_dir: Option<PathBuf>,
    /// The root spec as shown, for the budget's message.
    root: String,
}

impl Loader {
    fn new(policy: &OutboundPolicy, budget: u64, root: String) -> Loader {
        Loader {
            policy: policy.clone(),
            client: None,
            budget,
            read: 0,
            root_dir: None,
            root,
        }
    }

    /// The error when a document would take the load past its budget: the document alone when
    /// it is the root, else the spec with what it pulled in.
    fn too_large(&self, location: String) -> OpenApiError {
        let location = if self.read == 0 {
            location
        } else {
            format!("{} with the documents its $refs pull in", self.root)
        };
        OpenApiError::TooLarge {
            location,
            limit_mb: self.budget / MB,
        }
    }

    /// Checks that a local `$ref` stays inside the root spec's folder, where it is written and
    /// where its links lead: a spec may not read `~/.ssh/id_rsa` or `../../.config/gh/hosts.yml`.
    async fn confine(&self, url: &Url) -> Result<(), String> {
        let outside = |root: &Path| {
            format!(
                "it leads outside the spec's folder {}: devlens reads $ref files only inside the \
                 folder of the spec it loads (symbolic links followed). Move the file into that \
                 folder, or bundle the spec into one file (e.g. `redocly bundle`) and load that",
                root.display()
            )
        };
        let Some(root) = &self.root_dir else {
            return Err("a spec not loaded from a file may not reference local files".into());
        };
        let Ok(path) = url.to_file_path() else {
            return Err(outside(root));
        };
        // The URL was joined from the root's real path, so `..` is resolved already.
        if !path.starts_with(root) {
            return Err(outside(root));
        }
        match tokio::fs::canonicalize(&path).await {
            Ok(real) if !real.starts_with(root) => Err(outside(root)),
            _ => Ok(()),
        }
    }

    /// Reads a document from a `file:` or `http(s):` URL within what is left of the budget;
    /// files also get their stamp.
    async fn fetch(&mut self, url: &Url) -> Result<(Vec<u8>, Option<Stamp>), OpenApiError> {
        let left = self.budget.saturating_sub(self.read);
        if url.scheme() == "file" {
            let path = url
                .to_file_path()
                .map_err(|()| OpenApiError::InvalidSource {
                    input: url.to_string(),
                    reason: "not a local file path".into(),
                })?;
            let meta = tokio::fs::metadata(&path)
                .await
                .map_err(|e| file_error(&path, &e))?;
            let too_large = self.too_large(path.display().to_string());
            let bytes = read_file(&path, left, too_large).await?;
            self.read += bytes.len() as u64;
            return Ok((bytes, Some(Stamp::of(&meta))));
        }
        let shown = redact_url(url);
        let failed = |reason: String| OpenApiError::FetchFailed {
            url: shown.clone(),
            reason,
        };
        let client = match &self.client {
            Some(client) => client.clone(),
            None => {
                let builder = self
                    .policy
                    .client_builder()
                    .timeout(HTTP_TIMEOUT)
                    .connect_timeout(CONNECT_TIMEOUT)
                    .user_agent(concat!("devlens/", env!("CARGO_PKG_VERSION")));
                let client = GuardedClient::new(self.policy.clone(), builder).map_err(|e| {
                    failed(format!(
                        "cannot set up the HTTP client: {}",
                        outbound::explain(&e)
                    ))
                })?;
                self.client = Some(client.clone());
                client
            }
        };
        let response = client
            .get(url.as_str())
            .await
            .map_err(|refused| OpenApiError::FetchRefused {
                reason: refused.to_string(),
            })?
            .header(reqwest::header::ACCEPT, ACCEPT)
            .send()
            .await
            .map_err(|e| match outbound::refusal_of(&e) {
                // A redirect, or an address the name resolved to, that the guard refused.
                Some(refused) => OpenApiError::FetchRefused {
                    reason: refused.to_string(),
                },
                None => failed(request_error(e)),
            })?;
        let status = response.status();
        if !status.is_success() {
            return Err(OpenApiError::HttpStatus {
                url: shown,
                status: status.as_u16(),
                hint: http_status_hint(status.as_u16()),
            });
        }
        // The cap is checked as the bytes arrive: an endless body is cut off at the budget.
        let body = match outbound::read_body_capped(response, left).await {
            Ok(body) => body,
            Err(BodyError::TooLarge { .. }) => return Err(self.too_large(shown)),
            Err(BodyError::Read(why)) => return Err(failed(why)),
        };
        self.read += body.len() as u64;
        Ok((body, None))
    }
}

/// Runs CPU-heavy work on the blocking pool; a panic there becomes an error, not a crash.
async fn blocking<T, F>(location: &str, f: F) -> Result<T, OpenApiError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, OpenApiError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| OpenApiError::Internal {
            location: location.to_string(),
            message: format!("the parser task failed ({e})"),
        })?
}

async fn hash_off_thread(
    bytes: Vec<u8>,
    location: &str,
) -> Result<(Vec<u8>, String), OpenApiError> {
    blocking(location, move || {
        let hash = content_hash(&bytes);
        Ok((bytes, hash))
    })
    .await
}

/// Reads at most `limit` bytes of a file; more is `too_large`.
async fn read_file(
    path: &Path,
    limit: u64,
    too_large: OpenApiError,
) -> Result<Vec<u8>, OpenApiError> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| file_error(path, &e))?;
    if meta.is_dir() {
        return Err(OpenApiError::FileUnreadable {
            path: path.to_path_buf(),
            reason: "it is a directory".into(),
        });
    }
    if meta.len() > limit {
        return Err(too_large);
    }
    // Read at most one byte past the limit: the length above is 0 for a device or a pipe
    // (`$ref: /dev/zero`, `--spec /dev/stdin`), whose end only the reading finds.
    let owned = path.to_path_buf();
    let bytes = tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut bytes = Vec::new();
        std::fs::File::open(&owned)?
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map(|_| bytes)
    })
    .await
    .map_err(|e| OpenApiError::Internal {
        location: path.display().to_string(),
        message: format!("the file reading task failed ({e})"),
    })?
    .map_err(|e| file_error(path, &e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large);
    }
    Ok(bytes)
}

fn file_error(path: &Path, e: &std::io::Error) -> OpenApiError {
    match e.kind() {
        std::io::ErrorKind::NotFound => OpenApiError::FileNotFound {
            path: path.to_path_buf(),
        },
        _ => OpenApiError::FileUnreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        },
    }
}

/// A request error's reason without the URL (which may hold a token) and with its causes
/// (`connection refused`, `dns error`), which are what a person can act on.
fn request_error(e: reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("no answer within {} s", HTTP_TIMEOUT.as_secs());
    }
    error_chain(&e.without_url())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(cause) = cur {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    impl SpecCache {
        fn with_limits(specs: usize, bytes: usize) -> SpecCache {
            SpecCache {
                inner: Arc::new(Inner {
                    limits: CacheLimits {
                        specs,
                        bytes,
                        load_bytes: MAX_LOAD_BYTES,
                    },
                    ..Inner::default()
                }),
            }
        }
    }

    /// A small spec whose content (and so cache key) differs by `n`.
    fn write_spec(dir: &Path, n: usize) -> SpecSource {
        let path = dir.join(format!("spec{n}.json"));
        let mut paths = serde_json::Map::new();
        for i in 0..20 {
            paths.insert(
                format!("/things{n}/{i}"),
                serde_json::json!({"get": {"summary": format!("Read thing {i} of {n}"),
                    "responses": {"200": {"description": "ok"}}}}),
            );
        }
        let spec = serde_json::json!({"openapi": "3.0.0",
            "info": {"title": format!("spec {n}"), "version": "1"}, "paths": paths});
        std::fs::write(&path, serde_json::to_vec(&spec).unwrap()).unwrap();
        SpecSource::File(path)
    }

    async fn load(cache: &SpecCache, source: &SpecSource) -> Arc<ApiSpec> {
        cache.load(source).await.unwrap()
    }

    #[tokio::test]
    async fn the_cache_drops_the_least_recently_used_beyond_its_count() {
        let dir = tempfile::tempdir().unwrap();
        let sources: Vec<_> = (0..3).map(|n| write_spec(dir.path(), n)).collect();
        let cache = SpecCache::with_limits(2, usize::MAX);
        let first = load(&cache, &sources[0]).await;
        let second = load(&cache, &sources[1]).await;
        // Using the first again makes the second the least recently used.
        assert!(Arc::ptr_eq(&first, &load(&cache, &sources[0]).await));
        load(&cache, &sources[2]).await;
        assert!(Arc::ptr_eq(&first, &load(&cache, &sources[0]).await));
        assert!(!Arc::ptr_eq(&second, &load(&cache, &sources[1]).await));
    }

    #[tokio::test]
    async fn the_cache_drops_specs_beyond_its_weight_but_keeps_the_one_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let sources: Vec<_> = (0..3).map(|n| write_spec(dir.path(), n)).collect();
        let weight = load(&SpecCache::new(), &sources[0]).await.weight();
        assert!(weight > 0);
        // Room for two specs of this size, not three.
        let cache = SpecCache::with_limits(8, weight * 5 / 2);
        let first = load(&cache, &sources[0]).await;
        let second = load(&cache, &sources[1]).await;
        let third = load(&cache, &sources[2]).await;
        assert!(Arc::ptr_eq(&third, &load(&cache, &sources[2]).await));
        assert!(Arc::ptr_eq(&second, &load(&cache, &sources[1]).await));
        assert!(!Arc::ptr_eq(&first, &load(&cache, &sources[0]).await));
        // A spec heavier than the whole budget is still kept while it is the one in use.
        let tiny = SpecCache::with_limits(8, 1);
        let only = load(&tiny, &sources[0]).await;
        assert!(Arc::ptr_eq(&only, &load(&tiny, &sources[0]).await));
    }

    #[test]
    fn cache_is_send_sync_and_cheap_to_clone() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<SpecCache>();
        fn assert_send<T: Send>(_: &T) {}
        let cache = SpecCache::new();
        let src = SpecSource::File("x.json".into());
        assert_send(&cache.load(&src));
    }
}
