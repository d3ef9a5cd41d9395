//! `docs add --url`: a docs site crawled the way a reader would walk it.
//!
//! Breadth-first from the start page, following links that stay on its origin and under its
//! folder (the start page `https://x.dev/docs/guide/intro` keeps to `https://x.dev/docs/guide/`),
//! fragments stripped and every URL fetched once. Only HTML, Markdown, reStructuredText and
//! plain-text responses are read. A level is fetched a few pages at a time and its links taken
//! in page order, so the same site gives the same chunks in the same order on every run.
//!
//! The start page must answer (else nothing is worth storing); a page that fails later is
//! reported and skipped.
//!
//! The site's `robots.txt` is read first ([`crate::robots`]): disallowed links are not followed
//! (and counted), a disallowed start page is an error, and a `Crawl-delay` makes the crawl fetch
//! one page at a time that far apart (10 s at most). `ignore_robots` is for sites the user owns.
//!
//! A site that publishes `llms-full.txt` or `llms.txt` (the convention for docs meant for language
//! models: Vite, Vue, Svelte and many docs sites) is read from that instead: the full form is the
//! whole docs in one request; the short form lists the pages, which are read (on the same site,
//! within `max_pages`). The start page's folder is looked in before the site's root; a crawl is
//! the fallback.
//!
//! The site's sitemaps (those robots.txt names, else `/sitemap.xml`) add the pages they list in
//! scope to the start page's links, so pages no link reaches (a navigation drawn by JavaScript)
//! are read too.
//!
//! Every request goes through the outbound guard ([`devlens_core::outbound`]): the start page,
//! robots.txt, the sitemaps, every page and every redirect hop. Link-local and cloud metadata
//! addresses are never fetched; a host on this machine or a private network only when the user
//! allowed it (`[network] allow`, `DEVLENS_NETWORK_ALLOW`). Bodies are read with their cap
//! checked while reading, so a huge or endless answer is cut off, never held whole.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use devlens_core::outbound::{self, BodyError, GuardedClient, OutboundPolicy};
use reqwest::Url;

use crate::DocsError;
use crate::blocks::Format;
use crate::read::{self, Pages};
use crate::robots::{self, Robots};
use crate::sitemap::{self, Sitemap};

/// Pages fetched at most, by default: a whole docs section of most libraries.
pub const DEFAULT_MAX_PAGES: usize = 200;
/// Links followed from the start page at most, by default.
pub const DEFAULT_MAX_DEPTH: usize = 5;
/// The most pages one crawl may be asked to fetch: a large docs site's section. A whole site
/// beyond it is better downloaded and ingested with `--path`.
pub const MAX_PAGES_CEILING: usize = 5_000;
/// The most links from the start page one crawl may be asked to follow.
pub const MAX_DEPTH_CEILING: usize = 20;
/// Page URLs read from sitemaps at most (the sitemap protocol's own limit for one file).
const MAX_SITEMAP_URLS: usize = 50_000;
/// Requests in flight at once: quick on a docs host without hammering it.
const IN_FLIGHT: usize = 4;
const PAGE_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest `Crawl-delay` honoured as asked; a longer one is cut to this.
const MAX_CRAWL_DELAY: Duration = Duration::from_secs(10);
/// Sitemap files read at most (an index and its children).
const MAX_SITEMAPS: usize = 32;

/// How far a crawl goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrawlLimits {
    pub max_pages: usize,
    pub max_depth: usize,
    /// Fetch what the site's robots.txt disallows too (a site of one's own).
    pub ignore_robots: bool,
}

impl Default for CrawlLimits {
    fn default() -> Self {
        Self {
            max_pages: DEFAULT_MAX_PAGES,
            max_depth: DEFAULT_MAX_DEPTH,
            ignore_robots: false,
        }
    }
}

impl CrawlLimits {
    /// Checks the limits before anything is fetched: at least one page, at most
    /// [`MAX_PAGES_CEILING`] pages and [`MAX_DEPTH_CEILING`] links deep.
    pub fn check(&self) -> Result<(), DocsError> {
        if self.max_pages == 0 {
            return Err(DocsError::InvalidInput(
                "--max-pages must be at least 1".into(),
            ));
        }
        if self.max_pages > MAX_PAGES_CEILING {
            return Err(DocsError::InvalidInput(format!(
                "maxPages (--max-pages) is {}, over the ceiling of {MAX_PAGES_CEILING} pages one \
                 crawl may fetch: give at most {MAX_PAGES_CEILING}, start the crawl deeper in the \
                 site (one docs section at a time), or download the docs and use --path",
                self.max_pages
            )));
        }
        if self.max_depth > MAX_DEPTH_CEILING {
            return Err(DocsError::InvalidInput(format!(
                "maxDepth (--max-depth) is {}, over the ceiling of {MAX_DEPTH_CEILING} links from \
                 the start page: give at most {MAX_DEPTH_CEILING}",
                self.max_depth
            )));
        }
        Ok(())
    }
}

/// What a crawl found besides the pages.
#[derive(Debug, Default)]
pub struct CrawlOutcome {
    pub pages: Pages,
    /// `url: reason` of pages that could not be fetched.
    pub failed: Vec<String>,
    /// Links in scope left unfetched because of `max_pages` (0 when the site was covered).
    pub left_over: usize,
    /// Links in scope that robots.txt disallows, not followed.
    pub disallowed: usize,
    /// The site's `Crawl-delay`, as honoured.
    pub crawl_delay: Option<Duration>,
    /// Pages in scope the site's sitemaps list besides the start page's links.
    pub from_sitemap: usize,
    /// Set when the site's `llms-full.txt` or `llms.txt` was read instead of a crawl: its URL,
    /// and how many of the pages it links to were read (0 for the full form).
    pub llms_txt: Option<(String, usize)>,
}

/// One fetched page.
struct Fetched {
    /// After redirects, without a fragment.
    url: Url,
    format: Format,
    text: String,
}

enum PageError {
    /// Not a docs page (an image, JSON, a redirect out of scope): passed over quietly.
    Skipped,
    Failed(String),
    /// The outbound guard refused the page or a redirect on the way (its sentence).
    Refused(String),
}

/// A request that failed as a page error: the guard's refusal, or reqwest's reason (without
/// the URL, which the caller names).
fn send_failure(error: &reqwest::Error) -> PageError {
    match outbound::refusal_of(error) {
        Some(refused) => PageError::Refused(refused.to_string()),
        None => PageError::Failed(outbound::explain(error)),
    }
}

/// The guard's refusal as the crawl's error: nothing was stored.
fn refused(reason: String) -> DocsError {
    DocsError::Refused(format!("{reason}. Nothing was stored"))
}

/// The scope of a crawl: its origin and path prefix.
#[derive(Debug, Clone)]
struct Scope {
    origin: String,
    prefix: String,
}

impl Scope {
    fn of(start: &Url) -> Self {
        let path = start.path();
        let prefix = match path.rfind('/') {
            Some(i) => path[..=i].to_string(),
            None => "/".to_string(),
        };
        Self {
            origin: start.origin().ascii_serialization(),
            prefix,
        }
    }

    fn contains(&self, url: &Url) -> bool {
        url.origin().ascii_serialization() == self.origin && url.path().starts_with(&self.prefix)
    }
}

/// Whether a link's file extension could be a docs page (no extension: a pretty URL).
fn looks_like_a_page(url: &Url) -> bool {
    let last = url.path().rsplit('/').next().unwrap_or("");
    match last.rsplit_once('.') {
        None => true,
        Some((_, ext)) => matches!(
            ext.to_ascii_lowercase().as_str(),
            "html" | "htm" | "xhtml" | "md" | "mdx" | "markdown" | "rst" | "txt"
        ),
    }
}

fn without_fragment(mut url: Url) -> Url {
    url.set_fragment(None);
    url
}

/// The links of a page, resolved against its URL, in document order.
fn links(page: &Fetched) -> Vec<Url> {
    let hrefs: Vec<String> = match page.format {
        Format::Html => html_links(&page.text),
        Format::Markdown => markdown_links(&page.text),
        _ => Vec::new(),
    };
    hrefs
        .iter()
        .filter_map(|h| page.url.join(h.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .map(without_fragment)
        .collect()
}

fn html_links(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = lower[from..].find("<a") {
        let start = from + pos + 2;
        from = start;
        if !lower[start..].starts_with(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        if let Some(href) = crate::html::attr(&html[start..end], "href") {
            out.push(href);
        }
        from = end;
    }
    out
}

fn markdown_links(text: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Parser, Tag};
    Parser::new(text)
        .filter_map(|e| match e {
            Event::Start(Tag::Link { dest_url, .. }) => Some(dest_url.to_string()),
            _ => None,
        })
        .collect()
}

async fn fetch(client: &GuardedClient, url: Url, scope: &Scope) -> Result<Fetched, PageError> {
    let response = client
        .get(url.as_str())
        .await
        .map_err(|refused| PageError::Refused(refused.to_string()))?
        .send()
        .await
        .map_err(|e| send_failure(&e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(PageError::Failed(format!("HTTP {status}")));
    }
    let final_url = without_fragment(response.url().clone());
    if !scope.contains(&final_url) {
        return Err(PageError::Skipped);
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.to_ascii_lowercase());
    let readable = content_type.as_deref().is_none_or(|ct| {
        let mime = ct.split(';').next().unwrap_or("").trim();
        matches!(
            mime,
            "text/html"
                | "application/xhtml+xml"
                | "text/markdown"
                | "text/x-markdown"
                | "text/plain"
                | "text/x-rst"
                | ""
        )
    });
    if !readable {
        return Err(PageError::Skipped);
    }
    // Read with the cap checked as the bytes arrive: an endless body is cut off at 8 MB.
    let bytes = outbound::read_body_capped(response, read::MAX_PAGE_BYTES)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge { .. } => PageError::Failed(
                "larger than 8 MB, the most devlens reads of one page; stopped reading there"
                    .into(),
            ),
            BodyError::Read(why) => PageError::Failed(why),
        })?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let format = read::format_of_response(final_url.as_str(), content_type.as_deref());
    Ok(Fetched {
        url: final_url,
        format,
        text,
    })
}

/// The path and query a robots.txt rule is matched against.
fn robots_path(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

/// The rules of `start`'s origin. A missing file (4xx) allows everything; a server error or an
/// unreachable file disallows everything, as RFC 9309 asks: that is an error that says so.
async fn fetch_robots(client: &GuardedClient, start: &Url) -> Result<Robots, DocsError> {
    let mut url = start.clone();
    url.set_path("/robots.txt");
    url.set_query(None);
    let failed = |reason: String| DocsError::Fetch {
        url: url.to_string(),
        reason: format!(
            "{reason}; without it the crawl may not go anywhere on the site (RFC 9309). Try \
             again later, or give --ignore-robots if the site is yours"
        ),
    };
    let response = client
        .get(url.as_str())
        .await
        .map_err(|e| refused(e.to_string()))?
        .send()
        .await
        .map_err(|e| match outbound::refusal_of(&e) {
            Some(refusal) => refused(refusal.to_string()),
            None => failed(outbound::explain(&e)),
        })?;
    let status = response.status();
    if status.is_client_error() {
        return Ok(Robots::allow_all());
    }
    if !status.is_success() {
        return Err(failed(format!("HTTP {status}")));
    }
    let bytes = outbound::read_body_prefix(response, robots::MAX_BYTES)
        .await
        .map_err(failed)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(Robots::parse(&text))
}

/// The page URLs the site's sitemaps list: those robots.txt names, else `/sitemap.xml` (quietly
/// nothing when there is none). Sitemap indexes are followed; compressed sitemaps are passed over.
async fn sitemap_pages(client: &GuardedClient, rules: &Robots, start: &Url) -> Vec<Url> {
    let mut queue: std::collections::VecDeque<String> = rules.sitemaps.iter().cloned().collect();
    if queue.is_empty() {
        let mut url = start.clone();
        url.set_path("/sitemap.xml");
        url.set_query(None);
        url.set_fragment(None);
        queue.push_back(url.to_string());
    }
    let mut read = 0;
    let mut pages = Vec::new();
    let mut visited = HashSet::new();
    while let Some(next) = queue.pop_front() {
        if read >= MAX_SITEMAPS || !visited.insert(next.clone()) {
            continue;
        }
        read += 1;
        let Ok(url) = Url::parse(&next) else { continue };
        if !matches!(url.scheme(), "http" | "https") || url.path().ends_with(".gz") {
            continue;
        }
        let Some(text) = fetch_sitemap(client, url).await else {
            continue;
        };
        match sitemap::parse(&text) {
            Sitemap::Index(children) => queue.extend(children.into_iter().take(MAX_SITEMAPS)),
            Sitemap::Pages(locs) => {
                let room = MAX_SITEMAP_URLS.saturating_sub(pages.len());
                pages.extend(
                    locs.iter()
                        .filter_map(|l| Url::parse(l).ok())
                        .map(without_fragment)
                        .take(room),
                );
            }
        }
    }
    pages
}

/// A sitemap's text, or nothing (missing, refused by the guard, compressed, over 8 MB: a
/// sitemap only adds pages, so its failures are passed over quietly).
async fn fetch_sitemap(client: &GuardedClient, url: Url) -> Option<String> {
    let request = match client.get(url.as_str()).await {
        Ok(request) => request,
        Err(refused) => {
            tracing::debug!(%refused, "sitemap passed over");
            return None;
        }
    };
    let response = match request.send().await {
        Ok(response) => response,
        Err(e) => {
            tracing::debug!(reason = %outbound::explain(&e), "sitemap passed over");
            return None;
        }
    };
    if !response.status().is_success() {
        return None;
    }
    // The cap is checked while reading: something far too big to be a sitemap is cut off.
    let Ok(bytes) = outbound::read_body_capped(response, read::MAX_PAGE_BYTES).await else {
        tracing::debug!(%url, "sitemap passed over (larger than 8 MB or broken off)");
        return None;
    };
    // Gzip without a matching Content-Encoding.
    if bytes.starts_with(&[0x1f, 0x8b]) {
        tracing::debug!(%url, "sitemap passed over (compressed)");
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Which links a crawl follows: new ones in scope that robots.txt allows, up to `max_pages`.
struct Frontier<'a> {
    scope: &'a Scope,
    rules: &'a Robots,
    max_pages: usize,
    /// URLs met so far (fetched, queued or passed over).
    seen: HashSet<String>,
    /// Pages fetched or queued.
    known: usize,
}

impl Frontier<'_> {
    /// Whether `link` is to be fetched (counting it as known); what is passed over for robots.txt
    /// or the page limit is counted in `outcome`.
    fn admit(&mut self, link: &Url, outcome: &mut CrawlOutcome) -> bool {
        if !self.scope.contains(link)
            || !looks_like_a_page(link)
            || !self.seen.insert(link.to_string())
        {
            return false;
        }
        if !self.rules.allows(&robots_path(link)) {
            outcome.disallowed += 1;
            false
        } else if self.known < self.max_pages {
            self.known += 1;
            true
        } else {
            outcome.left_over += 1;
            false
        }
    }
}

/// Crawls from `start`, every request through `policy` (the outbound guard: which private hosts
/// may be fetched). `progress(done, known)` after each page; `known` grows as links are found.
pub async fn crawl(
    start: &str,
    limits: CrawlLimits,
    policy: &OutboundPolicy,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<CrawlOutcome, DocsError> {
    let fetch_err = |reason: String| DocsError::Fetch {
        url: start.to_string(),
        reason,
    };
    limits.check()?;
    let start_url = Url::parse(start.trim()).map_err(|e| fetch_err(format!("not a URL ({e})")))?;
    if !matches!(start_url.scheme(), "http" | "https") {
        return Err(fetch_err("only http(s) URLs can be fetched".into()));
    }
    let start_url = without_fragment(start_url);
    // Literal addresses and metadata names are refused before anything is sent; names are
    // checked by the client's resolver as they are connected to.
    policy
        .check(&start_url)
        .await
        .map_err(|e| refused(e.to_string()))?;
    let builder = policy
        .client_builder()
        .timeout(PAGE_TIMEOUT)
        .user_agent(concat!(
            "devlens/",
            env!("CARGO_PKG_VERSION"),
            " (docs crawler)"
        ));
    let client = Arc::new(
        GuardedClient::new(policy.clone(), builder)
            .map_err(|e| fetch_err(outbound::explain(&e)))?,
    );

    let rules = if limits.ignore_robots {
        Robots::allow_all()
    } else {
        fetch_robots(&client, &start_url).await?
    };
    if !rules.allows(&robots_path(&start_url)) {
        return Err(fetch_err(format!(
            "the site's robots.txt does not let crawlers ({}) fetch it; give --ignore-robots \
             if the site is yours or you may crawl it",
            robots::AGENT
        )));
    }
    let delay = rules.crawl_delay.map(|d| d.min(MAX_CRAWL_DELAY));
    let in_flight = if delay.is_some() { 1 } else { IN_FLIGHT };

    // A site that publishes its docs for language models says it in one file: read that
    // instead of walking the site (unless only the start page was asked for).
    if limits.max_depth > 0
        && let Some(outcome) =
            from_llms_txt(&client, &rules, &start_url, limits, delay, progress).await
    {
        return Ok(outcome);
    }

    // The start page decides the scope, after its redirects (`/docs` -> `/docs/`).
    let open_scope = Scope {
        origin: start_url.origin().ascii_serialization(),
        prefix: "/".into(),
    };
    let first = match fetch(&client, start_url.clone(), &open_scope).await {
        Ok(page) => page,
        Err(PageError::Failed(why)) => return Err(fetch_err(why)),
        Err(PageError::Refused(why)) => return Err(refused(why)),
        Err(PageError::Skipped) => {
            return Err(fetch_err(
                "it is not an HTML, Markdown or text page (or redirects to another site)".into(),
            ));
        }
    };
    let scope = Scope::of(&first.url);
    let listed = if limits.max_depth > 0 {
        sitemap_pages(&client, &rules, &first.url).await
    } else {
        Vec::new()
    };
    let mut frontier = Frontier {
        scope: &scope,
        rules: &rules,
        max_pages: limits.max_pages,
        seen: HashSet::from([start_url.to_string(), first.url.to_string()]),
        known: 1,
    };

    let mut outcome = CrawlOutcome {
        crawl_delay: delay,
        ..CrawlOutcome::default()
    };
    let mut dedup = HashSet::new();
    let mut done = 1usize;
    let mut level: Vec<Fetched> = vec![first];
    let mut depth = 0usize;
    loop {
        // Read this level's pages in order, gathering the next level's links.
        let mut next: Vec<Url> = Vec::new();
        for page in &level {
            let source = page.url.to_string();
            read::add_page(
                &mut outcome.pages,
                &mut dedup,
                &source,
                &source,
                page.format,
                &page.text,
            );
            if depth >= limits.max_depth {
                continue;
            }
            for link in links(page) {
                if frontier.admit(&link, &mut outcome) {
                    next.push(link);
                }
            }
        }
        if depth == 0 {
            // The sitemaps' pages come after the start page's links.
            for link in &listed {
                if frontier.admit(link, &mut outcome) {
                    outcome.from_sitemap += 1;
                    next.push(link.clone());
                }
            }
        }
        progress(done, frontier.known);
        if next.is_empty() {
            break;
        }
        depth += 1;
        // Fetch the next level a few at a time; results keep the links' order.
        let mut results: Vec<Option<Result<Fetched, PageError>>> = Vec::new();
        results.resize_with(next.len(), || None);
        let mut tasks = tokio::task::JoinSet::new();
        let mut queue = next.into_iter().enumerate();
        let mut urls: Vec<String> = Vec::new();
        loop {
            while tasks.len() < in_flight {
                let Some((i, url)) = queue.next() else { break };
                urls.push(url.to_string());
                let client = Arc::clone(&client);
                let scope = scope.clone();
                tasks.spawn(async move {
                    if let Some(d) = delay {
                        tokio::time::sleep(d).await;
                    }
                    (i, fetch(&client, url, &scope).await)
                });
            }
            let Some(joined) = tasks.join_next().await else {
                break;
            };
            if let Ok((i, result)) = joined {
                results[i] = Some(result);
            }
            done += 1;
            progress(done, frontier.known);
        }
        level = Vec::new();
        for (url, result) in urls.iter().zip(results) {
            match result {
                Some(Ok(page)) => {
                    // A redirect onto a page already read is not read twice.
                    if page.url.as_str() == url || frontier.seen.insert(page.url.to_string()) {
                        level.push(page);
                    }
                }
                Some(Err(PageError::Skipped)) => outcome.pages.skipped.push(url.clone()),
                Some(Err(PageError::Failed(why) | PageError::Refused(why))) => {
                    outcome.failed.push(format!("{url}: {why}"))
                }
                None => outcome
                    .failed
                    .push(format!("{url}: the fetch was cancelled")),
            }
        }
    }
    if outcome.pages.chunks.is_empty() {
        return Err(fetch_err(
            "the pages hold no text devlens could read".into(),
        ));
    }
    Ok(outcome)
}

/// The llms.txt files a crawl from `start` looks for, best first: the full form (every page in
/// one file) before the short one (a list of links), in the start page's folder before the
/// site's root.
fn llms_txt_candidates(start: &Url) -> Vec<Url> {
    let folder = Scope::of(start).prefix;
    let mut bases = vec![folder.clone()];
    if folder != "/" {
        bases.push("/".into());
    }
    let mut out = Vec::new();
    for base in &bases {
        for name in ["llms-full.txt", "llms.txt"] {
            if let Ok(url) = start.join(&format!("{base}{name}")) {
                out.push(url);
            }
        }
    }
    out
}

/// Whether a fetched llms.txt is one: Markdown text, not a page a single-page app answers every
/// path with.
fn is_llms_txt(page: &Fetched) -> bool {
    let head = page.text.trim_start();
    let lower: String = head
        .chars()
        .take(64)
        .collect::<String>()
        .to_ascii_lowercase();
    !head.is_empty()
        && page.format != Format::Html
        && !lower.starts_with("<!doctype")
        && !lower.starts_with("<html")
        && !lower.starts_with("not found")
}

/// The docs from the site's `llms-full.txt` (one page) or `llms.txt` (its page, and the pages on
/// the same site it links to, up to `max_pages`), or `None` when the site has neither (or none of
/// what it lists could be read): then the crawl goes on as usual.
async fn from_llms_txt(
    client: &Arc<GuardedClient>,
    rules: &Robots,
    start: &Url,
    limits: CrawlLimits,
    delay: Option<Duration>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Option<CrawlOutcome> {
    let site = Scope {
        origin: start.origin().ascii_serialization(),
        prefix: "/".into(),
    };
    for candidate in llms_txt_candidates(start) {
        if !rules.allows(&robots_path(&candidate)) {
            continue;
        }
        let Ok(file) = fetch(client, candidate.clone(), &site).await else {
            continue;
        };
        if !is_llms_txt(&file) {
            continue;
        }
        let mut outcome = CrawlOutcome {
            crawl_delay: delay,
            ..CrawlOutcome::default()
        };
        let mut dedup = HashSet::new();
        let source = file.url.to_string();
        read::add_page(
            &mut outcome.pages,
            &mut dedup,
            &source,
            &source,
            Format::Markdown,
            &file.text,
        );
        let full = candidate.path().ends_with("llms-full.txt");
        if full {
            progress(1, 1);
            outcome.llms_txt = Some((source, 0));
            return Some(outcome);
        }
        // The short form: the pages it lists, on this site, in its order.
        let markdown = Fetched {
            format: Format::Markdown,
            url: file.url.clone(),
            text: file.text.clone(),
        };
        let mut seen = HashSet::from([source.clone()]);
        let listed: Vec<Url> = links(&markdown)
            .into_iter()
            .filter(|u| site.contains(u) && looks_like_a_page(u))
            .filter(|u| seen.insert(u.to_string()))
            .collect();
        let mut wanted = Vec::new();
        for url in listed {
            if !rules.allows(&robots_path(&url)) {
                outcome.disallowed += 1;
            } else if wanted.len() + 1 >= limits.max_pages {
                outcome.left_over += 1;
            } else {
                wanted.push(url);
            }
        }
        let total = wanted.len() + 1;
        let mut pages_read = 0;
        for (i, url) in wanted.into_iter().enumerate() {
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            match fetch(client, url.clone(), &site).await {
                Ok(page) => {
                    let source = page.url.to_string();
                    read::add_page(
                        &mut outcome.pages,
                        &mut dedup,
                        &source,
                        &source,
                        page.format,
                        &page.text,
                    );
                    pages_read += 1;
                }
                Err(PageError::Skipped) => outcome.pages.skipped.push(url.to_string()),
                Err(PageError::Failed(why) | PageError::Refused(why)) => {
                    outcome.failed.push(format!("{url}: {why}"))
                }
            }
            progress(i + 2, total);
        }
        if pages_read == 0 && outcome.pages.chunks.len() < 2 {
            // A list whose pages could not be read says little: crawl instead.
            return None;
        }
        outcome.llms_txt = Some((source, pages_read));
        return Some(outcome);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that answers every request with HTTP `status` and an empty body.
    async fn answering(status: &'static str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let reply =
                    format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = socket.write_all(reply.as_bytes()).await;
            }
        });
        format!("http://{address}")
    }

    #[tokio::test]
    async fn a_robots_txt_that_fails_stops_the_crawl_with_what_to_do() {
        let site = answering("503 Service Unavailable").await;
        let policy = OutboundPolicy::public_only().allowing(&site);
        let err = crawl(
            &format!("{site}/docs/"),
            CrawlLimits::default(),
            &policy,
            &|_, _| {},
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("robots.txt"), "{err}");
        assert!(err.contains("503"), "{err}");
        assert!(err.contains("--ignore-robots"), "{err}");
        // Told to ignore it, the crawl goes on to the start page (which fails the same way).
        let ignored = CrawlLimits {
            ignore_robots: true,
            ..CrawlLimits::default()
        };
        let err = crawl(&format!("{site}/docs/"), ignored, &policy, &|_, _| {})
            .await
            .unwrap_err()
            .to_string();
        assert!(!err.contains("robots.txt"), "{err}");
    }

    #[test]
    fn scope_is_the_start_pages_folder_on_its_origin() {
        let s = Scope::of(&Url::parse("https://x.dev/docs/guide/intro.html").unwrap());
        assert_eq!(s.prefix, "/docs/guide/");
        let inside = |u: &str| s.contains(&Url::parse(u).unwrap());
        assert!(inside("https://x.dev/docs/guide/setup"));
        assert!(!inside("https://x.dev/docs/other"));
        assert!(!inside("http://x.dev/docs/guide/setup"));
        assert!(!inside("https://x.dev:8443/docs/guide/setup"));
        assert!(!inside("https://cdn.x.dev/docs/guide/setup"));
    }

    #[test]
    fn links_are_resolved_without_fragments() {
        let page = Fetched {
            url: Url::parse("https://x.dev/docs/a.html").unwrap(),
            format: Format::Html,
            text: "<p><a href='b.html#top'>B</a> <A HREF=\"/docs/c/\">C</A> <abbr>x</abbr> \
                   <a name=x>no href</a> <a href=\"mailto:me@x.dev\">mail</a> \
                   <a href=\"../up.html?x=1&amp;y=2\">up</a></p>"
                .into(),
        };
        let got: Vec<String> = links(&page).iter().map(Url::to_string).collect();
        assert_eq!(
            got,
            [
                "https://x.dev/docs/b.html",
                "https://x.dev/docs/c/",
                "https://x.dev/up.html?x=1&y=2"
            ]
        );
        let md = Fetched {
            url: Url::parse("https://x.dev/docs/").unwrap(),
            format: Format::Markdown,
            text: "See [setup](setup.md#install) and ![logo](logo.png).".into(),
        };
        let got: Vec<String> = links(&md).iter().map(Url::to_string).collect();
        assert_eq!(got, ["https://x.dev/docs/setup.md"]);
        for (u, page) in [
            ("https://x.dev/docs/a", true),
            ("https://x.dev/docs/a.HTML", true),
            ("https://x.dev/docs/logo.png", false),
            ("https://x.dev/docs/app.js", false),
        ] {
            assert_eq!(looks_like_a_page(&Url::parse(u).unwrap()), page, "{u}");
        }
    }
}
