//! The network record of each tab: every request with method, URL, status, type, duration and
//! size, bounded, filterable and paged; headers kept (bounded). Bodies are fetched from the
//! browser only when asked ([`crate::page::network`]).
//!
//! Events arrive on separate streams and may be seen out of order, so each one upserts the entry
//! of its request id. Redirects become one entry per hop.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::text::{bytes, short_url, truncate};

/// Default and largest page of [`NetworkQuery::limit`].
pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 500;
/// Default inline body size of [`BodyOptions::max_body_bytes`].
pub const DEFAULT_BODY_BYTES: usize = 4096;
/// Largest inline body; bigger ones go to a file.
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// Header values and counts kept per request.
const MAX_HEADER_VALUE: usize = 500;
const MAX_HEADERS: usize = 60;

/// One request as listed: compact, no headers or bodies.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkEntry {
    /// Per-tab id for `get_network_request`.
    pub id: u64,
    pub method: String,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Document, Script, Fetch, XHR, Image, Stylesheet, ...
    pub resource_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Bytes over the wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The network error (`net::ERR_CONNECTION_REFUSED`) or block reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_cache: bool,
}

impl NetworkEntry {
    /// Failed: a network error, or an HTTP status of 400 or more.
    pub fn is_failed(&self) -> bool {
        self.failure.is_some() || self.status.is_some_and(|s| s >= 400)
    }

    /// `#7 GET 404 Fetch /api/x 12 ms 0.3 kB`, URLs of the page's origin shortened.
    pub fn to_line(&self, page_url: &str) -> String {
        let mut out = format!("#{} {}", self.id, self.method);
        match (&self.failure, self.status) {
            (Some(f), _) => {
                let _ = write!(out, " FAILED {f}");
            }
            (None, Some(s)) => {
                let _ = write!(out, " {s}");
            }
            (None, None) if self.pending => out.push_str(" pending"),
            (None, None) => {}
        }
        let _ = write!(
            out,
            " {} {}",
            self.resource_type,
            short_url(&self.url, page_url)
        );
        if let Some(ms) = self.duration_ms {
            let _ = write!(out, " {ms} ms");
        }
        if let Some(size) = self.size.filter(|s| *s > 0) {
            let _ = write!(out, " {}", bytes(size));
        }
        if self.from_cache {
            out.push_str(" (cache)");
        }
        out
    }
}

/// Which requests to list.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct NetworkQuery {
    /// Only network errors and HTTP 4xx/5xx.
    pub failed_only: bool,
    /// Only this resource type (document, script, fetch, xhr, image, stylesheet, font, ...).
    pub resource_type: Option<String>,
    /// Only URLs containing this (case-insensitive).
    pub url_contains: Option<String>,
    /// Skip this many matching requests (paging).
    pub offset: usize,
    /// At most this many (default 50, at most 500).
    pub limit: Option<usize>,
    /// Also requests of pages this tab showed before the current one.
    pub include_previous_pages: bool,
    /// Also the static resources that loaded fine (scripts, stylesheets, images, fonts, media):
    /// left out by default, like DevTools' Fetch/XHR view, since they are rarely the question
    /// and cost tokens. Failed ones are always listed; a `resourceType` filter lists its type.
    pub include_static: bool,
}

/// Resource types of a page's static assets, as Chrome names them.
const STATIC_TYPES: &[&str] = &[
    "Script",
    "Stylesheet",
    "Image",
    "Font",
    "Media",
    "Manifest",
    "TextTrack",
];

impl NetworkEntry {
    /// A static asset that loaded fine (hidden from the list unless asked for).
    fn is_quiet_static(&self) -> bool {
        // Chrome's own favicon request is typed `Other`.
        let favicon = self
            .url
            .split(['?', '#'])
            .next()
            .unwrap_or("")
            .ends_with("/favicon.ico");
        !self.is_failed()
            && !self.pending
            && (favicon
                || STATIC_TYPES
                    .iter()
                    .any(|t| self.resource_type.eq_ignore_ascii_case(t)))
    }
}

/// A page of the network log.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPage {
    /// Oldest first.
    pub requests: Vec<NetworkEntry>,
    /// Matching requests in the log.
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Requests pushed out of the bounded log since the tab was attached.
    pub dropped: u64,
    /// Static resources that loaded fine and were left out (`includeStatic` lists them).
    #[serde(skip_serializing_if = "is_zero")]
    pub static_hidden: usize,
    #[serde(skip)]
    pub(crate) page_url: String,
}

pub(crate) fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl NetworkPage {
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if self.requests.is_empty() {
            out.push_str("no matching requests");
        }
        for r in &self.requests {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&r.to_line(&self.page_url));
        }
        if let Some(next) = self.next_offset {
            let _ = write!(
                out,
                "\n… {} of {} shown; next page: offset {next}",
                self.requests.len(),
                self.total
            );
        }
        if self.static_hidden > 0 {
            let _ = write!(
                out,
                "\n… {} static resources that loaded fine not listed (includeStatic lists them)",
                self.static_hidden
            );
        }
        if self.dropped > 0 {
            let _ = write!(
                out,
                "\n… {} older requests were dropped from the log",
                self.dropped
            );
        }
        out
    }
}

/// How much of the bodies to return.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct BodyOptions {
    /// Inline at most this many bytes of each body (default 4096, at most 262144).
    pub max_body_bytes: usize,
    /// Write the full response body to this file instead of inlining it.
    pub save_response_body_to: Option<PathBuf>,
    /// Include request and response headers (default true).
    pub headers: bool,
}

impl Default for BodyOptions {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_BODY_BYTES,
            save_response_body_to: None,
            headers: true,
        }
    }
}

/// A request or response body.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageBody {
    /// The body (text), cut to the byte limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Size of the whole body in bytes.
    pub size: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Binary content (not inlined; save it to a file to see it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_to: Option<String>,
}

/// Everything about one request.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestDetails {
    #[serde(flatten)]
    pub entry: NetworkEntry,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_address: Option<String>,
    /// The request this one was redirected from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redirected_from: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub request_headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub response_headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_body: Option<MessageBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_body: Option<MessageBody>,
    /// Why a body is missing, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_note: Option<String>,
}

impl RequestDetails {
    pub fn to_text(&self) -> String {
        let e = &self.entry;
        let mut out = format!("{} {}", e.method, e.url);
        match (&e.failure, e.status) {
            (Some(f), _) => {
                let _ = write!(out, "\nfailed: {f}");
            }
            (None, Some(s)) => {
                let _ = write!(
                    out,
                    "\nstatus: {s} {}",
                    self.status_text.as_deref().unwrap_or("")
                );
            }
            _ if e.pending => out.push_str("\nstatus: pending"),
            _ => {}
        }
        let _ = write!(out, "\ntype: {}", e.resource_type);
        if let Some(m) = &self.mime_type {
            let _ = write!(out, " ({m})");
        }
        if let Some(ms) = e.duration_ms {
            let _ = write!(out, ", {ms} ms");
        }
        if let Some(size) = e.size {
            let _ = write!(out, ", {}", bytes(size));
        }
        if let Some(from) = self.redirected_from {
            let _ = write!(out, "\nredirected from #{from}");
        }
        for (title, headers) in [
            ("request headers", &self.request_headers),
            ("response headers", &self.response_headers),
        ] {
            if !headers.is_empty() {
                let _ = write!(out, "\n{title}:");
                for (k, v) in headers {
                    let _ = write!(out, "\n  {k}: {v}");
                }
            }
        }
        for (title, body) in [
            ("request body", &self.request_body),
            ("response body", &self.response_body),
        ] {
            let Some(body) = body else { continue };
            let _ = write!(out, "\n{title} ({}):", bytes(body.size as u64));
            if let Some(path) = &body.saved_to {
                let _ = write!(out, " saved to {path}");
            } else if body.binary {
                out.push_str(" binary, not shown (save it to a file)");
            } else if let Some(text) = &body.text {
                let _ = write!(out, "\n{text}");
                if body.truncated {
                    let _ = write!(
                        out,
                        "\n… cut at {} bytes (raise maxBodyBytes or save it to a file)",
                        text.len()
                    );
                }
            }
        }
        if let Some(note) = &self.body_note {
            let _ = write!(out, "\n{note}");
        }
        out
    }
}

/// The full record of one request hop, as the log keeps it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Record {
    pub(crate) id: u64,
    pub(crate) request_id: String,
    pub(crate) method: String,
    pub(crate) url: String,
    pub(crate) resource_type: String,
    pub frame_id: Option<String>,
    /// Which page of the tab (navigation count) the request belongs to.
    pub(crate) page: u64,
    pub(crate) started: Option<f64>,
    pub(crate) ended: Option<f64>,
    pub(crate) status: Option<u16>,
    pub(crate) status_text: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) failure: Option<String>,
    pub(crate) canceled: bool,
    pub(crate) from_cache: bool,
    pub(crate) finished: bool,
    pub(crate) remote_address: Option<String>,
    pub(crate) request_headers: Vec<(String, String)>,
    pub(crate) response_headers: Vec<(String, String)>,
    pub(crate) has_post_data: bool,
    pub(crate) redirected_from: Option<u64>,
}

impl Record {
    pub(crate) fn summary(&self) -> NetworkEntry {
        // A response that arrived and was then cut off (an unread fetch body dropped, a page
        // left) is not a network failure: its status says what happened. The events may come
        // in either order, so this is decided here rather than when they arrive.
        let aborted_after_response = self.status.is_some()
            && (self.canceled || self.failure.as_deref() == Some("net::ERR_ABORTED"));
        let failure = if aborted_after_response {
            None
        } else {
            self.failure.clone()
        };
        let duration_ms = match (self.started, self.ended) {
            (Some(s), Some(e)) if e >= s => Some(((e - s) * 1000.0).round() as u64),
            _ => None,
        };
        NetworkEntry {
            id: self.id,
            method: self.method.clone(),
            url: self.url.clone(),
            status: self.status,
            resource_type: if self.resource_type.is_empty() {
                "Other".into()
            } else {
                self.resource_type.clone()
            },
            duration_ms,
            size: self.size,
            pending: !self.finished && self.failure.is_none(),
            failure,
            from_cache: self.from_cache,
        }
    }

    /// Still loading, and not a long-lived stream that never "finishes".
    pub(crate) fn in_flight(&self) -> bool {
        !self.finished
            && self.failure.is_none()
            && !matches!(
                self.resource_type.as_str(),
                "EventSource" | "WebSocket" | "Media"
            )
    }

    pub(crate) fn is_main_document(&self, main_frame: Option<&str>) -> bool {
        self.resource_type == "Document"
            && main_frame.is_some_and(|m| self.frame_id.as_deref() == Some(m))
    }
}

/// The bounded log behind a tab's network view.
#[derive(Debug)]
pub(crate) struct NetworkLog {
    pub(crate) records: VecDeque<Record>,
    pub(crate) capacity: usize,
    pub(crate) next_id: u64,
    pub(crate) dropped: u64,
    /// CDP request id → id of its current (latest) hop.
    pub(crate) current: HashMap<String, u64>,
}

pub(crate) struct RequestStart<'a> {
    pub request_id: &'a str,
    pub method: &'a str,
    pub url: &'a str,
    pub resource_type: Option<&'a str>,
    pub frame_id: Option<&'a str>,
    pub timestamp: f64,
    pub headers: &'a Value,
    pub has_post_data: bool,
    pub page: u64,
}

pub(crate) struct LoadFailure<'a> {
    pub request_id: &'a str,
    pub timestamp: f64,
    pub error: &'a str,
    pub canceled: bool,
    pub blocked: Option<String>,
    pub resource_type: &'a str,
}

pub(crate) struct ResponseInfo<'a> {
    pub request_id: &'a str,
    pub resource_type: &'a str,
    pub url: &'a str,
    pub status: i64,
    pub status_text: &'a str,
    pub mime_type: &'a str,
    pub headers: &'a Value,
    pub remote_address: Option<String>,
    pub from_cache: bool,
    pub timestamp: f64,
}

impl NetworkLog {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            records: VecDeque::new(),
            capacity: capacity.max(1),
            next_id: 1,
            dropped: 0,
            current: HashMap::new(),
        }
    }

    /// The id the next request will get.
    pub(crate) fn mark(&self) -> u64 {
        self.next_id
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    fn record_mut(&mut self, id: u64) -> Option<&mut Record> {
        // Ids are increasing, so the position follows from the first id held.
        let first = self.records.front()?.id;
        let index = usize::try_from(id.checked_sub(first)?).ok()?;
        self.records.get_mut(index).filter(|r| r.id == id)
    }

    pub(crate) fn record(&self, id: u64) -> Option<&Record> {
        let first = self.records.front()?.id;
        let index = usize::try_from(id.checked_sub(first)?).ok()?;
        self.records.get(index).filter(|r| r.id == id)
    }

    pub(crate) fn insert(&mut self, record: Record) -> u64 {
        if self.records.len() == self.capacity
            && let Some(old) = self.records.pop_front()
        {
            self.dropped += 1;
            if self.current.get(&old.request_id) == Some(&old.id) {
                self.current.remove(&old.request_id);
            }
        }
        let id = record.id;
        self.current.insert(record.request_id.clone(), id);
        self.records.push_back(record);
        id
    }

    /// The record of a request id, created empty when an event outruns `requestWillBeSent`.
    fn upsert(&mut self, request_id: &str, page: u64) -> Option<&mut Record> {
        let id = match self.current.get(request_id).copied() {
            Some(id) if self.record(id).is_some() => id,
            _ => {
                let id = self.next_id;
                self.next_id += 1;
                self.insert(Record {
                    id,
                    request_id: request_id.to_string(),
                    page,
                    ..Default::default()
                })
            }
        };
        self.record_mut(id)
    }

    pub(crate) fn on_request(
        &mut self,
        start: RequestStart<'_>,
        redirect: Option<ResponseInfo<'_>>,
    ) {
        let mut redirected_from = None;
        if let Some(redirect) = redirect
            && let Some(&prev) = self.current.get(start.request_id)
        {
            // The previous hop ends with the redirect response; this request is a new hop.
            self.apply_response(prev, &redirect);
            if let Some(r) = self.record_mut(prev) {
                r.finished = true;
                r.ended = Some(start.timestamp);
            }
            self.current.remove(start.request_id);
            redirected_from = Some(prev);
        }
        let Some(record) = self.upsert(start.request_id, start.page) else {
            return;
        };
        if record.method.is_empty() {
            record.method = start.method.to_string();
            record.url = start.url.to_string();
            record.started = Some(start.timestamp);
            record.page = start.page;
        }
        if let Some(t) = start.resource_type {
            record.resource_type = t.to_string();
        }
        if record.frame_id.is_none() {
            record.frame_id = start.frame_id.map(str::to_string);
        }
        record.request_headers = headers(start.headers);
        record.has_post_data = start.has_post_data;
        record.redirected_from = redirected_from;
    }

    pub(crate) fn on_response(&mut self, response: ResponseInfo<'_>, page: u64) {
        if let Some(id) = self.upsert(response.request_id, page).map(|r| r.id) {
            self.apply_response(id, &response);
        }
    }

    fn apply_response(&mut self, id: u64, r: &ResponseInfo<'_>) {
        let Some(record) = self.record_mut(id) else {
            return;
        };
        if record.url.is_empty() {
            record.url = r.url.to_string();
        }
        if !r.resource_type.is_empty() {
            record.resource_type = r.resource_type.to_string();
        }
        record.status = u16::try_from(r.status).ok();
        record.status_text = Some(r.status_text.to_string()).filter(|s| !s.is_empty());
        record.mime_type = Some(r.mime_type.to_string()).filter(|s| !s.is_empty());
        record.response_headers = headers(r.headers);
        record.remote_address = r.remote_address.clone();
        record.from_cache |= r.from_cache;
        if record.started.is_none() {
            record.started = Some(r.timestamp);
        }
    }

    pub(crate) fn on_finished(
        &mut self,
        request_id: &str,
        timestamp: f64,
        encoded: f64,
        page: u64,
    ) {
        let Some(record) = self.upsert(request_id, page) else {
            return;
        };
        record.finished = true;
        record.ended = Some(timestamp);
        if encoded >= 0.0 {
            record.size = Some(encoded as u64);
        }
    }

    pub(crate) fn on_failed(&mut self, f: LoadFailure<'_>, page: u64) {
        let LoadFailure {
            request_id,
            timestamp,
            error,
            canceled,
            blocked,
            resource_type,
        } = f;
        let Some(record) = self.upsert(request_id, page) else {
            return;
        };
        record.ended = Some(timestamp);
        record.canceled = canceled;
        if record.resource_type.is_empty() {
            record.resource_type = resource_type.to_string();
        }
        let mut failure = if error.is_empty() {
            "failed".to_string()
        } else {
            error.to_string()
        };
        if let Some(b) = blocked {
            failure = format!("{failure} (blocked: {b})");
        }
        record.failure = Some(failure);
    }

    pub(crate) fn on_served_from_cache(&mut self, request_id: &str, page: u64) {
        if let Some(record) = self.upsert(request_id, page) {
            record.from_cache = true;
        }
    }

    /// A main-frame navigation committed: its document request belongs to the new page.
    pub(crate) fn adopt_document(&mut self, main_frame: &str, page: u64) {
        if let Some(r) =
            self.records.iter_mut().rev().find(|r| {
                r.resource_type == "Document" && r.frame_id.as_deref() == Some(main_frame)
            })
        {
            r.page = page;
        }
    }

    pub(crate) fn records_on_page(&self, page: u64) -> impl Iterator<Item = &Record> {
        self.records.iter().filter(move |r| r.page >= page)
    }

    pub(crate) fn records_since(&self, mark: u64) -> impl Iterator<Item = &Record> {
        self.records.iter().filter(move |r| r.id >= mark)
    }

    /// Failed requests (errors and 4xx/5xx, not cancellations) with `id >= mark`: the newest
    /// `limit` and how many more.
    pub(crate) fn failed_since(&self, mark: u64, limit: usize) -> (Vec<NetworkEntry>, usize) {
        let failed: Vec<NetworkEntry> = self
            .records_since(mark)
            // Requests cancelled before any answer (a navigation replaced their page) are noise.
            .filter(|r| !(r.canceled && r.status.is_none()))
            // The browser asks every site for a favicon; a missing one is not the page's fault.
            .filter(|r| !r.url.ends_with("/favicon.ico"))
            .map(Record::summary)
            .filter(NetworkEntry::is_failed)
            .collect();
        let omitted = failed.len().saturating_sub(limit);
        (failed[omitted..].to_vec(), omitted)
    }

    /// Requests of this tab that are still loading, started at or after `mark`.
    pub(crate) fn in_flight_since(&self, mark: u64) -> usize {
        self.records_since(mark).filter(|r| r.in_flight()).count()
    }

    /// Requests of page `page` (or later) that are still loading.
    pub(crate) fn in_flight_on_page(&self, page: u64) -> usize {
        self.records
            .iter()
            .filter(|r| r.page >= page && r.in_flight())
            .count()
    }

    /// The latest main-frame document response at or after `mark`.
    pub(crate) fn main_document_since(
        &self,
        mark: u64,
        main_frame: Option<&str>,
    ) -> Option<NetworkEntry> {
        self.records_since(mark)
            .filter(|r| r.is_main_document(main_frame))
            .last()
            .map(Record::summary)
    }

    pub(crate) fn query(&self, q: &NetworkQuery, current_page: u64, page_url: &str) -> NetworkPage {
        let limit = q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let kind = q
            .resource_type
            .as_deref()
            .map(|t| t.trim().to_ascii_lowercase())
            .filter(|t| !t.is_empty());
        let needle = q
            .url_contains
            .as_deref()
            .map(str::to_lowercase)
            .filter(|n| !n.is_empty());
        let matching: Vec<NetworkEntry> = self
            .records
            .iter()
            .filter(|r| q.include_previous_pages || r.page >= current_page)
            .filter(|r| {
                kind.as_deref()
                    .is_none_or(|k| r.resource_type.eq_ignore_ascii_case(k))
            })
            .filter(|r| {
                needle
                    .as_deref()
                    .is_none_or(|n| r.url.to_lowercase().contains(n))
            })
            .map(Record::summary)
            .filter(|e| !q.failed_only || e.is_failed())
            .collect();
        // An explicit type filter is a request for that type, static or not.
        let hide_static = !q.include_static && kind.is_none();
        let before = matching.len();
        let matching: Vec<NetworkEntry> = if hide_static {
            matching
                .into_iter()
                .filter(|e| !e.is_quiet_static())
                .collect()
        } else {
            matching
        };
        let static_hidden = before - matching.len();
        let total = matching.len();
        let requests: Vec<NetworkEntry> = matching.into_iter().skip(q.offset).take(limit).collect();
        let end = q.offset.saturating_add(requests.len());
        NetworkPage {
            requests,
            total,
            next_offset: (end < total).then_some(end),
            dropped: self.dropped,
            static_hidden,
            page_url: page_url.to_string(),
        }
    }

    pub(crate) fn get(&self, id: u64) -> Option<Record> {
        self.record(id).cloned()
    }
}

pub(crate) fn headers(v: &Value) -> Vec<(String, String)> {
    let Some(map) = v.as_object() else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = map
        .iter()
        .take(MAX_HEADERS)
        .map(|(k, v)| {
            let value = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            (k.to_ascii_lowercase(), truncate(&value, MAX_HEADER_VALUE))
        })
        .collect();
    out.sort();
    out
}

/// Parses `12`, `#12` or `r12`.
pub(crate) fn parse_id(id: &str) -> Option<u64> {
    let id = id.trim();
    let id = id
        .strip_prefix('#')
        .or_else(|| id.strip_prefix('r'))
        .unwrap_or(id);
    id.parse().ok()
}

/// Standard base64 (the browser's encoding of binary bodies).
pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    pub(crate) fn value(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' | b'-' => Some(62),
            b'/' | b'_' => Some(63),
            _ => None,
        }
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in s.as_bytes() {
        if c == b'=' || c.is_ascii_whitespace() {
            continue;
        }
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn start<'a>(id: &'a str, url: &'a str, ty: &'a str, headers: &'a Value) -> RequestStart<'a> {
        RequestStart {
            request_id: id,
            method: "GET",
            url,
            resource_type: Some(ty),
            frame_id: Some("F"),
            timestamp: 1.0,
            headers,
            has_post_data: false,
            page: 1,
        }
    }

    fn response<'a>(id: &'a str, status: i64, headers: &'a Value) -> ResponseInfo<'a> {
        ResponseInfo {
            request_id: id,
            resource_type: "",
            url: "",
            status,
            status_text: "",
            mime_type: "text/html",
            headers,
            remote_address: None,
            from_cache: false,
            timestamp: 1.1,
        }
    }

    #[test]
    fn log_tracks_requests_redirects_and_failures() {
        let h = json!({"Content-Type": "text/html"});
        let mut log = NetworkLog::new(10);
        log.on_request(start("1", "http://a/x", "Document", &h), None);
        let mut redirect_start = start("1", "http://a/y", "Document", &h);
        redirect_start.timestamp = 1.2;
        log.on_request(redirect_start, Some(response("1", 302, &h)));
        log.on_response(response("1", 200, &h), 1);
        log.on_finished("1", 1.5, 1234.0, 1);
        // Finished before its start was seen: still one entry.
        log.on_finished("2", 2.0, 10.0, 1);
        log.on_request(start("2", "http://a/api", "Fetch", &h), None);
        log.on_failed(
            LoadFailure {
                request_id: "3",
                timestamp: 2.0,
                error: "net::ERR_CONNECTION_REFUSED",
                canceled: false,
                blocked: None,
                resource_type: "Image",
            },
            1,
        );

        let page = log.query(&NetworkQuery::default(), 1, "http://a/");
        assert_eq!(page.total, 4);
        let first = &page.requests[0];
        assert_eq!(
            (first.status, first.url.as_str()),
            (Some(302), "http://a/x")
        );
        let second = &page.requests[1];
        assert_eq!((second.status, second.duration_ms), (Some(200), Some(300)));
        assert_eq!(log.get(second.id).unwrap().redirected_from, Some(first.id));
        assert_eq!(page.requests[2].url, "http://a/api");
        assert!(!page.requests[2].pending);

        let failed = log.query(
            &NetworkQuery {
                failed_only: true,
                ..Default::default()
            },
            1,
            "",
        );
        assert_eq!(failed.total, 1);
        assert!(
            failed
                .to_text()
                .contains("FAILED net::ERR_CONNECTION_REFUSED")
        );
        let fetch = log.query(
            &NetworkQuery {
                resource_type: Some("fetch".into()),
                ..Default::default()
            },
            1,
            "",
        );
        assert_eq!(fetch.total, 1);
        let paged = log.query(
            &NetworkQuery {
                limit: Some(2),
                offset: 1,
                ..Default::default()
            },
            1,
            "",
        );
        assert_eq!((paged.requests.len(), paged.next_offset), (2, Some(3)));
        assert_eq!(log.in_flight_since(0), 0);
    }

    #[test]
    fn static_resources_that_loaded_fine_are_counted_not_listed_unless_asked_for() {
        let h = json!({});
        let mut log = NetworkLog::new(10);
        for (id, url, ty, status) in [
            ("1", "http://a/", "Document", 200),
            ("2", "http://a/app.js", "Script", 200),
            ("3", "http://a/site.css", "Stylesheet", 200),
            ("4", "http://a/logo.png", "Image", 404),
            ("5", "http://a/api/items", "Fetch", 200),
            ("7", "http://a/favicon.ico", "Other", 200),
        ] {
            log.on_request(start(id, url, ty, &h), None);
            log.on_response(response(id, status, &h), 1);
            log.on_finished(id, 1.5, 100.0, 1);
        }
        // Still loading: listed, since it may be what is slow.
        log.on_request(start("6", "http://a/big.js", "Script", &h), None);

        let page = log.query(&NetworkQuery::default(), 1, "http://a/");
        let urls: Vec<&str> = page.requests.iter().map(|r| r.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://a/",
                "http://a/logo.png",
                "http://a/api/items",
                "http://a/big.js"
            ]
        );
        assert_eq!((page.total, page.static_hidden), (4, 3));
        assert!(
            page.to_text().contains("3 static resources"),
            "{}",
            page.to_text()
        );

        let all = log.query(
            &NetworkQuery {
                include_static: true,
                ..Default::default()
            },
            1,
            "",
        );
        assert_eq!((all.total, all.static_hidden), (7, 0));
        assert!(!all.to_text().contains("static resources"));
        // Asking for a type lists it.
        let scripts = log.query(
            &NetworkQuery {
                resource_type: Some("script".into()),
                ..Default::default()
            },
            1,
            "",
        );
        assert_eq!(scripts.total, 2);
    }

    #[test]
    fn log_is_bounded() {
        let h = json!({});
        let mut log = NetworkLog::new(2);
        for i in 0..5 {
            let id = i.to_string();
            log.on_request(start(&id, "http://a/", "Fetch", &h), None);
        }
        let page = log.query(&NetworkQuery::default(), 0, "");
        assert_eq!(page.total, 2);
        assert_eq!(page.dropped, 3);
        assert!(log.get(1).is_none());
        assert!(log.get(5).is_some());
    }

    #[test]
    fn ids_and_base64() {
        assert_eq!(parse_id("#12"), Some(12));
        assert_eq!(parse_id("r3"), Some(3));
        assert_eq!(parse_id("x"), None);
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
    }
}
