//! Source Map v3: parsing and lookups both ways, so the debugger can speak in the files a
//! developer wrote (`src/cart.ts:12`) while Chrome runs the bundle (`/assets/app.js:1:4821`),
//! and the maps of a tab's scripts as they load. Fetching maps and sources through the page is
//! the tab core's ([`crate::tab::sourcemaps`]).
//!
//! Own small parser (the format is one JSON object and a base64 VLQ string): `version`,
//! `sources`, `sourceRoot`, `sourcesContent`, `names`, `mappings`, and index maps whose
//! `sections` embed their maps. Positions here are 0-based, as the protocol has them; the
//! debugger converts to the 1-based lines users see. Base64 and percent-decoding are the
//! `base64` and `percent-encoding` crates'.
//!
//! Kept rather than the `sourcemap` crate (9.3.2) after a side-by-side run on real maps
//! (bench/sourcemaps: Angular's and RxJS's, 135 KB to 2.6 MB, 505,401 lookups): both name the
//! same original position everywhere but in two places where this one chooses on purpose — a
//! column before a line's first mapping (the crate answers with the previous line's last
//! mapping; here it is the line's first, the indentation case) and several mappings at one
//! column (the crate takes the first, this the last written; 42 lookups in RxJS's UMD map). The
//! crate parses in about half the time (20 against 43 ms for the 2.6 MB map) because it builds
//! no original → generated index; breakpoints set on an original line need one, which it does
//! not have, and the debugger resolves sources against the map's URL itself. It would also add
//! 10 crates and about 18 CPU-seconds of rustc to a clean build (scripts/dependency-cost).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{Semaphore, watch};

/// The largest source map devlens reads (bigger ones are left unmapped, with a note).
pub(crate) const MAX_MAP_BYTES: usize = 16 * 1024 * 1024;
/// The largest original source fetched for excerpts (when the map has no `sourcesContent`).
pub(crate) const MAX_SOURCE_BYTES: usize = 2 * 1024 * 1024;
/// Scripts whose maps are kept (the oldest go first: earlier documents' scripts).
const MAX_MAPS: usize = 256;
/// Original sources fetched and kept.
const MAX_FETCHED_SOURCES: usize = 32;
/// Maps loaded at the same time (a dev server's page can have hundreds of modules).
const PARALLEL_LOADS: usize = 4;
/// How long one map may take to load.
pub(crate) const LOAD_WAIT: Duration = Duration::from_secs(15);

/// A script's source map, as the debugger keeps it.
#[derive(Debug)]
pub(crate) struct ScriptMap {
    pub script_url: String,
    pub map: SourceMap,
}

/// Where loading a script's map stands.
#[derive(Debug, Clone)]
pub(crate) enum MapState {
    Loading,
    Ready(Arc<ScriptMap>),
    Failed(String),
}

/// The source maps of a tab's scripts, loaded when `Debugger.scriptParsed` names one.
#[derive(Debug)]
pub(crate) struct ScriptMaps {
    pub(crate) by_script: HashMap<String, MapState>,
    pub(crate) order: VecDeque<String>,
    /// Original sources fetched because their map had no `sourcesContent`: URL → text.
    pub(crate) fetched: VecDeque<(String, Arc<str>)>,
    /// Bumped whenever a load finishes, for callers waiting on them.
    pub(crate) changed: watch::Sender<u64>,
    pub limiter: Arc<Semaphore>,
}

impl Default for ScriptMaps {
    fn default() -> Self {
        Self {
            by_script: HashMap::new(),
            order: VecDeque::new(),
            fetched: VecDeque::new(),
            changed: watch::Sender::new(0),
            limiter: Arc::new(Semaphore::new(PARALLEL_LOADS)),
        }
    }
}

impl ScriptMaps {
    /// Marks a script's map as loading; false when it is known already.
    pub(crate) fn start(&mut self, script: &str) -> bool {
        if self.by_script.contains_key(script) {
            return false;
        }
        if self.order.len() >= MAX_MAPS
            && let Some(old) = self.order.pop_front()
        {
            self.by_script.remove(&old);
        }
        self.order.push_back(script.to_string());
        self.by_script.insert(script.to_string(), MapState::Loading);
        self.changed.send_modify(|n| *n += 1);
        true
    }

    pub(crate) fn finish(&mut self, script: &str, state: MapState) {
        if let Some(slot) = self.by_script.get_mut(script) {
            *slot = state;
        }
        self.changed.send_modify(|n| *n += 1);
    }

    pub(crate) fn get(&self, script: &str) -> Option<Arc<ScriptMap>> {
        match self.by_script.get(script)? {
            MapState::Ready(m) => Some(m.clone()),
            _ => None,
        }
    }

    pub(crate) fn failure(&self, script: &str) -> Option<&str> {
        match self.by_script.get(script)? {
            MapState::Failed(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn is_loading(&self, script: &str) -> bool {
        matches!(self.by_script.get(script), Some(MapState::Loading))
    }

    /// Not even started (its `scriptParsed` not handled yet, or no map loaded for it).
    pub(crate) fn is_unknown(&self, script: &str) -> bool {
        !self.by_script.contains_key(script)
    }

    pub(crate) fn loading(&self) -> bool {
        self.by_script
            .values()
            .any(|s| matches!(s, MapState::Loading))
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Maps (newest script per URL) with a source matching `pattern`, and that source's index.
    pub(crate) fn find(&self, pattern: &str) -> Vec<(Arc<ScriptMap>, usize)> {
        let mut out: Vec<(Arc<ScriptMap>, usize)> = Vec::new();
        for script in self.order.iter().rev() {
            let Some(m) = self.get(script) else { continue };
            if out.iter().any(|(o, _)| o.script_url == m.script_url) {
                continue;
            }
            if let Some(i) = m.map.find_source(pattern) {
                out.push((m, i));
            }
        }
        out
    }

    /// Original source URLs of all loaded maps, sorted, without duplicates.
    pub(crate) fn sources(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .by_script
            .values()
            .filter_map(|s| match s {
                MapState::Ready(m) => Some(m.map.sources.iter().cloned()),
                _ => None,
            })
            .flatten()
            .collect();
        all.sort();
        all.dedup();
        all
    }

    pub(crate) fn fetched(&self, url: &str) -> Option<Arc<str>> {
        self.fetched
            .iter()
            .find(|(u, _)| u == url)
            .map(|(_, t)| t.clone())
    }

    pub(crate) fn remember_fetched(&mut self, url: &str, text: Arc<str>) {
        if self.fetched.len() >= MAX_FETCHED_SOURCES {
            self.fetched.pop_front();
        }
        self.fetched.push_back((url.to_string(), text));
    }
}

/// A parsed source map.
///
/// Public so that anything holding a map's text (a build tool's output, a test, the fuzz
/// targets in `fuzz/`) can read it the way the debugger does: [`SourceMap::parse`], then
/// [`SourceMap::original`], [`SourceMap::generated`] and [`SourceMap::find_source`].
#[derive(Debug, Default)]
pub struct SourceMap {
    /// Source URLs, resolved against `sourceRoot` and the map's own URL.
    pub sources: Vec<String>,
    /// `sourcesContent`, where the map carries it.
    pub contents: Vec<Option<Arc<str>>>,
    pub names: Vec<String>,
    /// Segments of each generated line, sorted by generated column.
    pub(crate) lines: Vec<Vec<Segment>>,
    /// Every mapped segment by original position: (source, line, column, generated line,
    /// generated column), sorted; for original → generated lookups.
    pub(crate) by_original: Vec<(u32, u32, u32, u32, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) column: u32,
    pub(crate) original: Option<Original>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Original {
    pub(crate) source: u32,
    pub(crate) line: u32,
    pub(crate) column: u32,
    pub(crate) name: Option<u32>,
}

/// A position in an original source (0-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginalPosition {
    pub source: usize,
    pub line: u32,
    pub column: u32,
    pub name: Option<String>,
}

/// A position in the generated script (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeneratedPosition {
    pub line: u32,
    pub column: u32,
}

/// Positions beyond this are not real code (and keep `+ 1` for 1-based lines safe).
const MAX_POSITION: i64 = 1 << 30;
/// Generated lines a map may describe (a bundle of more is not one a browser runs well).
pub(crate) const MAX_LINES: usize = 4_000_000;
/// How far below a line without code a breakpoint slides to the next line that has some.
const SLIDE_LINES: u32 = 20;

impl SourceMap {
    /// Parses map JSON; `map_url` resolves relative source URLs (the script's URL for inline
    /// maps).
    pub fn parse(text: &str, map_url: &str) -> Result<Self, String> {
        let text = text.trim_start_matches('\u{feff}');
        // Maps may start with `)]}'` to stop them running as script.
        let text = match text.strip_prefix(")]}'") {
            Some(rest) => rest.split_once('\n').map(|(_, r)| r).unwrap_or(""),
            None => text,
        };
        let json: Value =
            serde_json::from_str(text).map_err(|e| format!("not valid source map JSON: {e}"))?;
        let mut map = Self::default();
        map.add(&json, map_url, 0, 0)?;
        map.finish();
        Ok(map)
    }

    /// Adds a (section's) map, shifted by a generated offset.
    pub(crate) fn add(
        &mut self,
        json: &Value,
        map_url: &str,
        line0: u32,
        col0: u32,
    ) -> Result<(), String> {
        match json.get("version").and_then(Value::as_u64) {
            Some(3) => {}
            Some(v) => return Err(format!("source map version {v} (only version 3 is read)")),
            None => return Err("not a source map: no `version`".into()),
        }
        if let Some(sections) = json.get("sections").and_then(Value::as_array) {
            for s in sections {
                let line = s
                    .pointer("/offset/line")
                    .and_then(Value::as_u64)
                    .unwrap_or(0) as u32;
                let col = s
                    .pointer("/offset/column")
                    .and_then(Value::as_u64)
                    .unwrap_or(0) as u32;
                let Some(inner) = s.get("map") else {
                    return Err(
                        "index map sections that point to other files (`url`) are not \
                                supported; bundle with embedded section maps or a plain map"
                            .into(),
                    );
                };
                let col = if line == 0 {
                    col0.saturating_add(col)
                } else {
                    col
                };
                self.add(inner, map_url, line0.saturating_add(line), col)?;
            }
            return Ok(());
        }
        let root = json.get("sourceRoot").and_then(Value::as_str).unwrap_or("");
        let first_source = self.sources.len() as u32;
        let first_name = self.names.len() as u32;
        let sources = json
            .get("sources")
            .and_then(Value::as_array)
            .ok_or("not a source map: no `sources` list")?;
        let contents = json.get("sourcesContent").and_then(Value::as_array);
        for (i, s) in sources.iter().enumerate() {
            let s = s.as_str().unwrap_or("");
            self.sources.push(resolve_source(root, s, map_url));
            self.contents.push(
                contents
                    .and_then(|c| c.get(i))
                    .and_then(Value::as_str)
                    .map(Arc::from),
            );
        }
        for n in json
            .get("names")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.names.push(n.as_str().unwrap_or("").to_string());
        }
        let mappings = json
            .get("mappings")
            .and_then(Value::as_str)
            .ok_or("not a source map: no `mappings` string")?;
        self.decode(
            mappings,
            line0,
            col0,
            first_source,
            first_name,
            sources.len() as u32,
        )
    }

    /// Decodes `mappings`: `;` separates generated lines, `,` segments; each segment is 1, 4
    /// or 5 VLQ fields, relative to the previous one (the generated column only within a line).
    fn decode(
        &mut self,
        mappings: &str,
        line0: u32,
        col0: u32,
        first_source: u32,
        first_name: u32,
        source_count: u32,
    ) -> Result<(), String> {
        let (mut source, mut oline, mut ocol, mut name) = (0i64, 0i64, 0i64, 0i64);
        for (i, line) in mappings.split(';').enumerate() {
            let gen_line = line0 as usize + i;
            let mut gcol = 0i64;
            let shift = if i == 0 { col0 as i64 } else { 0 };
            for seg in line.split(',').filter(|s| !s.is_empty()) {
                let f = vlq_decode(seg).map_err(|e| {
                    format!("bad mapping `{seg}` on generated line {gen_line}: {e}")
                })?;
                if !matches!(f.len(), 1 | 4 | 5) {
                    return Err(format!(
                        "bad mapping `{seg}` on generated line {gen_line}: {} fields",
                        f.len()
                    ));
                }
                // Saturating: a hostile map must not overflow (positions past MAX_POSITION
                // are dropped below).
                gcol = gcol.saturating_add(f[0]);
                let original = if f.len() >= 4 {
                    source = source.saturating_add(f[1]);
                    oline = oline.saturating_add(f[2]);
                    ocol = ocol.saturating_add(f[3]);
                    let named = (f.len() == 5).then(|| {
                        name = name.saturating_add(f[4]);
                        name
                    });
                    let valid = |v: i64| (0..=MAX_POSITION).contains(&v);
                    (source >= 0 && source < source_count as i64 && valid(oline) && valid(ocol))
                        .then(|| Original {
                            source: first_source + source as u32,
                            line: oline as u32,
                            column: ocol as u32,
                            name: named
                                .filter(|n| (0..=MAX_POSITION).contains(n))
                                .map(|n| first_name.saturating_add(n as u32)),
                        })
                } else {
                    None
                };
                let column = gcol.saturating_add(shift);
                if !(0..=MAX_POSITION).contains(&column) {
                    continue;
                }
                if gen_line > MAX_LINES {
                    return Err(format!(
                        "the source map maps more than {MAX_LINES} generated lines"
                    ));
                }
                if self.lines.len() <= gen_line {
                    self.lines.resize(gen_line + 1, Vec::new());
                }
                self.lines[gen_line].push(Segment {
                    column: column as u32,
                    original,
                });
            }
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) {
        for (gl, segs) in self.lines.iter_mut().enumerate() {
            segs.sort_by_key(|s| s.column);
            for s in segs.iter() {
                if let Some(o) = s.original {
                    self.by_original
                        .push((o.source, o.line, o.column, gl as u32, s.column));
                }
            }
        }
        self.by_original.sort_unstable();
        self.by_original.dedup();
    }

    /// Where a generated position came from. A column before the line's first mapping takes
    /// that first mapping (indentation); a segment without a source maps nowhere.
    pub fn original(&self, line: u32, column: u32) -> Option<OriginalPosition> {
        let segs = self.lines.get(line as usize)?;
        let at = segs.partition_point(|s| s.column <= column);
        let seg = if at == 0 {
            segs.first()?
        } else {
            &segs[at - 1]
        };
        let o = seg.original?;
        Some(OriginalPosition {
            source: o.source as usize,
            line: o.line,
            column: o.column,
            name: o.name.and_then(|n| self.names.get(n as usize).cloned()),
        })
    }

    /// Generated positions of an original line (0-based), at most `max`, first in generated
    /// order. Without a column: the first mapping of the line in each generated line it landed
    /// on; with one: the mapping at or after it on that line. A line without code slides down
    /// to the next one that has some (like DevTools); the line found is returned too.
    pub fn generated(
        &self,
        source: usize,
        line: u32,
        column: Option<u32>,
        max: usize,
    ) -> Option<(u32, Vec<GeneratedPosition>)> {
        let source = source as u32;
        for l in line..line.saturating_add(SLIDE_LINES) {
            let start = self
                .by_original
                .partition_point(|e| (e.0, e.1) < (source, l));
            let on_line: Vec<_> = self.by_original[start..]
                .iter()
                .take_while(|e| (e.0, e.1) == (source, l))
                .collect();
            if on_line.is_empty() {
                if column.is_some() {
                    return None;
                }
                continue;
            }
            // The original column to stop at: the asked one, or the closest mapped after it.
            let wanted = match column {
                Some(c) => on_line
                    .iter()
                    .map(|e| e.2)
                    .filter(|oc| *oc >= c)
                    .min()
                    .unwrap_or_else(|| on_line.iter().map(|e| e.2).max().unwrap_or(0)),
                None => on_line.iter().map(|e| e.2).min().unwrap_or(0),
            };
            let mut out: Vec<GeneratedPosition> = Vec::new();
            let mut hits: Vec<_> = on_line
                .iter()
                .filter(|e| column.is_some_and(|_| e.2 == wanted) || column.is_none())
                .map(|e| GeneratedPosition {
                    line: e.3,
                    column: e.4,
                })
                .collect();
            hits.sort_by_key(|p| (p.line, p.column));
            for p in hits {
                if out.last().is_none_or(|last| last.line != p.line) {
                    out.push(p);
                }
            }
            out.truncate(max);
            return Some((l, out));
        }
        None
    }

    /// The index of the source whose URL matches `pattern` (a full URL or its end, as
    /// breakpoints take them); several matches prefer the shortest URL.
    pub fn find_source(&self, pattern: &str) -> Option<usize> {
        self.sources
            .iter()
            .enumerate()
            .filter(|(_, s)| url_matches(pattern, s))
            .min_by_key(|(_, s)| s.len())
            .map(|(i, _)| i)
    }
}

/// A source's URL: `sourceRoot` joined in front, then resolved against the map's URL.
fn resolve_source(root: &str, source: &str, map_url: &str) -> String {
    let joined = if root.is_empty() || has_scheme(source) || source.starts_with('/') {
        source.to_string()
    } else if root.ends_with('/') {
        format!("{root}{source}")
    } else {
        format!("{root}/{source}")
    };
    resolve_url(map_url, &joined)
}

fn has_scheme(url: &str) -> bool {
    url.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// A URL relative to `base` made absolute (enough of RFC 3986 for script and map URLs).
pub(crate) fn resolve_url(base: &str, relative: &str) -> String {
    if has_scheme(relative) {
        return normalize_path(relative);
    }
    if base.starts_with("data:") || !has_scheme(base) {
        return normalize_path(relative);
    }
    let scheme_end = base.find(':').unwrap_or(0);
    if let Some(rest) = relative.strip_prefix("//") {
        return format!("{}//{rest}", &base[..=scheme_end]);
    }
    let after_scheme = &base[scheme_end + 1..];
    let authority_end = if let Some(r) = after_scheme.strip_prefix("//") {
        scheme_end + 3 + r.find(['/', '?', '#']).unwrap_or(r.len())
    } else {
        scheme_end + 1
    };
    let origin = &base[..authority_end];
    if relative.starts_with('/') {
        return normalize_path(&format!("{origin}{relative}"));
    }
    let path = base[authority_end..].split(['?', '#']).next().unwrap_or("");
    let dir = match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    };
    normalize_path(&format!("{origin}{dir}{relative}"))
}

/// Removes `.` and `..` segments from a URL's path (`webpack:///./src/a.js` → `webpack:///src/a.js`).
fn normalize_path(url: &str) -> String {
    let (head, query) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let path_start = match head.find("://") {
        Some(i) => {
            let rest = &head[i + 3..];
            i + 3 + rest.find('/').unwrap_or(rest.len())
        }
        None => 0,
    };
    let (prefix, path) = head.split_at(path_start);
    if !path.contains("./") {
        return url.to_string();
    }
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {}
            ".." => {
                if parts.last().is_some_and(|p| !p.is_empty() && *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            "" if i > 0 && i + 1 < segments.len() => {}
            s => parts.push(s),
        }
    }
    let mut out = parts.join("/");
    if absolute && !out.starts_with('/') {
        out.insert(0, '/');
    }
    if path.ends_with("/.") || path.ends_with("/..") {
        out.push('/');
    }
    format!("{prefix}{out}{query}")
}

/// Whether a URL matches a breakpoint pattern: a full URL, the end of one at a `/`
/// (`cart.ts`, `src/cart.ts`), or with `*` wildcards; query and fragment ignored.
fn url_matches(pattern: &str, url: &str) -> bool {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return false;
    }
    if pattern.contains("://") {
        return glob(pattern, url);
    }
    if pattern.starts_with('/') || pattern.starts_with('*') {
        return (0..url.len())
            .filter(|&j| url.is_char_boundary(j))
            .any(|j| glob(pattern, &url[j..]));
    }
    glob(pattern, url)
        || url
            .match_indices('/')
            .any(|(j, _)| glob(pattern, &url[j + 1..]))
}

/// Whole-text match where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// One base64 VLQ segment into its signed fields.
fn vlq_decode(segment: &str) -> Result<Vec<i64>, String> {
    let mut out = Vec::with_capacity(5);
    let (mut value, mut shift) = (0i64, 0u32);
    for c in segment.bytes() {
        let digit = base64_value(c).ok_or_else(|| format!("`{}` is not base64", c as char))?;
        if shift > 60 {
            return Err("number too large".into());
        }
        value |= i64::from(digit & 31) << shift;
        if digit & 32 != 0 {
            shift += 5;
            continue;
        }
        out.push(if value & 1 == 1 {
            -(value >> 1)
        } else {
            value >> 1
        });
        value = 0;
        shift = 0;
    }
    if shift != 0 {
        return Err("ends in the middle of a number".into());
    }
    Ok(out)
}

/// A VLQ digit's value (the base64 crate decodes whole strings, not single digits).
fn base64_value(c: u8) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    })
}

/// Standard (or URL-safe) base64, padding and whitespace ignored: what `data:` URLs and
/// `IO.read` chunks carry.
pub(crate) fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    use base64::alphabet::{STANDARD, URL_SAFE};
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    let compact: String;
    let text = if text.bytes().any(|c| c.is_ascii_whitespace()) {
        compact = text.split_ascii_whitespace().collect();
        &compact
    } else {
        text
    };
    let alphabet = if text.contains(['-', '_']) {
        &URL_SAFE
    } else {
        &STANDARD
    };
    GeneralPurpose::new(alphabet, LENIENT)
        .decode(text)
        .map_err(|e| format!("not base64: {e}"))
}

/// The text of a `data:` URL (base64 or percent-encoded).
pub(crate) fn data_url_text(url: &str) -> Result<String, String> {
    let rest = url.strip_prefix("data:").ok_or("not a data: URL")?;
    let (meta, payload) = rest.split_once(',').ok_or("a data: URL without a comma")?;
    let bytes = if meta.split(';').any(|p| p.eq_ignore_ascii_case("base64")) {
        base64_decode(payload)?
    } else {
        percent_encoding::percent_decode_str(payload).collect()
    };
    String::from_utf8(bytes).map_err(|_| "the inline map is not UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes fields the way bundlers do (for building maps in tests).
    fn vlq(fields: &[i64]) -> String {
        const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for &f in fields {
            let mut v = if f < 0 { ((-f) << 1) | 1 } else { f << 1 };
            loop {
                let mut digit = (v & 31) as usize;
                v >>= 5;
                if v > 0 {
                    digit |= 32;
                }
                out.push(B64[digit] as char);
                if v == 0 {
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn vlq_decodes_known_values() {
        assert_eq!(vlq_decode("AAAA").unwrap(), vec![0, 0, 0, 0]);
        assert_eq!(vlq_decode("C").unwrap(), vec![1]);
        assert_eq!(vlq_decode("D").unwrap(), vec![-1]);
        assert_eq!(vlq_decode("gB").unwrap(), vec![16]);
        assert_eq!(vlq_decode("AAgBC").unwrap(), vec![0, 0, 16, 1]);
        assert_eq!(vlq_decode("SAAS").unwrap(), vec![9, 0, 0, 9]);
        assert_eq!(vlq_decode("+/////D").unwrap(), vec![2_147_483_647]);
        for n in [0, 1, -1, 15, 16, -16, 1000, -123456, i32::MAX as i64] {
            assert_eq!(vlq_decode(&vlq(&[n])).unwrap(), vec![n], "{n}");
        }
        assert!(vlq_decode("g").is_err(), "continuation without an end");
        assert!(vlq_decode("A!").is_err());
    }

    #[test]
    fn base64_and_data_urls() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVs\nbG8=\n").unwrap(), b"hello");
        assert_eq!(
            base64_decode("-_-_").unwrap(),
            base64_decode("+/+/").unwrap()
        );
        assert_eq!(
            data_url_text("data:application/json;charset=utf-8;base64,eyJhIjoxfQ==").unwrap(),
            "{\"a\":1}"
        );
        assert_eq!(
            data_url_text("data:application/json,%7B%22a%22%3A1%7D").unwrap(),
            "{\"a\":1}"
        );
        assert!(data_url_text("data:application/json;base64,!!").is_err());
    }

    /// A map of two sources: generated line 0 is a wrapper, line 1.. come from a.js and b.js.
    fn sample() -> SourceMap {
        // gen (1,2) ← a.js (0,0); gen (1,10) ← a.js (0,8) name "total";
        // gen (2,2) ← a.js (1,2); gen (4,2) ← b.js (3,4); gen (5,0) unmapped segment.
        let mut mappings = String::from(";");
        mappings.push_str(&vlq(&[2, 0, 0, 0]));
        mappings.push(',');
        mappings.push_str(&vlq(&[8, 0, 0, 8, 0]));
        mappings.push(';');
        mappings.push_str(&vlq(&[2, 0, 1, -6]));
        mappings.push_str(";;");
        mappings.push_str(&vlq(&[2, 1, 2, 2]));
        mappings.push(';');
        mappings.push_str(&vlq(&[0]));
        let json = serde_json::json!({
            "version": 3,
            "file": "bundle.js",
            "sourceRoot": "../src",
            "sources": ["a.js", "lib/b.js"],
            "sourcesContent": ["let x = total();\n  x++;\n", null],
            "names": ["total"],
            "mappings": mappings,
        });
        SourceMap::parse(&json.to_string(), "http://h/assets/js/bundle.js.map").unwrap()
    }

    #[test]
    fn generated_to_original() {
        let m = sample();
        assert_eq!(
            m.sources,
            ["http://h/assets/src/a.js", "http://h/assets/src/lib/b.js"]
        );
        assert!(m.contents[0].as_deref().unwrap().starts_with("let x"));
        assert!(m.contents[1].is_none());
        let at = |l, c| {
            m.original(l, c)
                .map(|o| (o.source, o.line, o.column, o.name))
        };
        assert_eq!(at(1, 2), Some((0, 0, 0, None)));
        assert_eq!(at(1, 9), Some((0, 0, 0, None)));
        assert_eq!(at(1, 12), Some((0, 0, 8, Some("total".into()))));
        // Before the first mapping of a line: that mapping (indentation).
        assert_eq!(at(2, 0), Some((0, 1, 2, None)));
        assert_eq!(at(4, 7), Some((1, 3, 4, None)));
        assert_eq!(at(0, 0), None, "the wrapper line maps nowhere");
        assert_eq!(at(5, 3), None, "a segment without a source");
        assert_eq!(at(99, 0), None);
    }

    #[test]
    fn original_to_generated() {
        let m = sample();
        let p = |line, column| GeneratedPosition { line, column };
        assert_eq!(m.generated(0, 0, None, 5), Some((0, vec![p(1, 2)])));
        assert_eq!(m.generated(0, 0, Some(5), 5), Some((0, vec![p(1, 10)])));
        assert_eq!(m.generated(0, 1, None, 5), Some((1, vec![p(2, 2)])));
        // b.js line 0 has no code: slides to line 3.
        assert_eq!(m.generated(1, 0, None, 5), Some((3, vec![p(4, 2)])));
        assert_eq!(m.generated(0, 50, None, 5), None);
        assert_eq!(m.find_source("a.js"), Some(0));
        assert_eq!(m.find_source("src/lib/b.js"), Some(1));
        assert_eq!(m.find_source("b.js"), Some(1));
        assert_eq!(m.find_source("ib/b.js"), None, "suffixes start at a /");
        assert_eq!(m.find_source("http://h/assets/src/a.js"), Some(0));
        assert_eq!(m.find_source("src/*.js"), Some(0));
    }

    #[test]
    fn source_root_and_url_resolution() {
        assert_eq!(
            resolve_url("http://h/a/b/app.js", "app.js.map"),
            "http://h/a/b/app.js.map"
        );
        assert_eq!(
            resolve_url("http://h/a/b/app.js?v=1", "../src/x.ts"),
            "http://h/a/src/x.ts"
        );
        assert_eq!(
            resolve_url("http://h/a/app.js", "/maps/app.map"),
            "http://h/maps/app.map"
        );
        assert_eq!(
            resolve_url("https://h/a/app.js", "//cdn/x.map"),
            "https://cdn/x.map"
        );
        assert_eq!(
            resolve_url("http://h/a/app.js", "webpack:///./src/a.js"),
            "webpack:///src/a.js"
        );
        assert_eq!(resolve_url("http://h", "x.js"), "http://h/x.js");
        assert_eq!(
            resolve_source("", "src/a.ts", "http://h/dist/app.js.map"),
            "http://h/dist/src/a.ts"
        );
        assert_eq!(
            resolve_source("/app/", "a.ts", "http://h/dist/app.js.map"),
            "http://h/app/a.ts"
        );
        assert_eq!(
            resolve_source("webpack://proj", "./src/a.ts", "http://h/x.map"),
            "webpack://proj/src/a.ts"
        );
        assert_eq!(
            resolve_source("", "a.ts", "data:application/json;base64,e30="),
            "a.ts"
        );
    }

    #[test]
    fn url_patterns() {
        assert!(url_matches("cart.ts", "http://h/src/cart.ts"));
        assert!(url_matches("src/cart.ts", "webpack://app/src/cart.ts?x"));
        assert!(!url_matches("art.ts", "http://h/src/cart.ts"));
        assert!(url_matches("/src/cart.ts", "http://h/src/cart.ts"));
        assert!(url_matches("http://h/src/cart.ts", "http://h/src/cart.ts"));
        assert!(url_matches("*/cart.ts", "http://h/src/cart.ts"));
        assert!(url_matches("src/*.ts", "http://h/src/cart.ts"));
        assert!(!url_matches("src/*.ts", "http://h/src/cart.js"));
    }

    #[test]
    fn index_maps_and_errors() {
        let section = |src: &str| serde_json::json!({"version": 3, "sources": [src], "names": [], "mappings": "AAAA;AACA"});
        let json = serde_json::json!({
            "version": 3,
            "sections": [
                {"offset": {"line": 0, "column": 0}, "map": section("a.js")},
                {"offset": {"line": 10, "column": 4}, "map": section("b.js")},
            ]
        });
        let m = SourceMap::parse(&json.to_string(), "http://h/x.map").unwrap();
        assert_eq!(m.original(1, 0).map(|o| (o.source, o.line)), Some((0, 1)));
        assert_eq!(m.original(10, 4).map(|o| (o.source, o.line)), Some((1, 0)));
        assert_eq!(m.original(11, 0).map(|o| (o.source, o.line)), Some((1, 1)));
        assert_eq!(
            m.generated(1, 1, None, 5).map(|g| g.1),
            Some(vec![GeneratedPosition {
                line: 11,
                column: 0
            }])
        );

        let url_section = serde_json::json!({"version": 3, "sections": [{"offset": {"line": 0, "column": 0}, "url": "a.map"}]});
        let e = SourceMap::parse(&url_section.to_string(), "http://h/x.map").unwrap_err();
        assert!(e.contains("not supported"), "{e}");
        assert!(
            SourceMap::parse("{\"version\": 2}", "x")
                .unwrap_err()
                .contains("version 2")
        );
        assert!(SourceMap::parse("nope", "x").unwrap_err().contains("JSON"));
        let bad = serde_json::json!({"version": 3, "sources": [], "mappings": "A!"});
        assert!(
            SourceMap::parse(&bad.to_string(), "x")
                .unwrap_err()
                .contains("bad mapping")
        );
        // Hostile numbers neither panic nor allocate without bound.
        let huge = serde_json::json!({"version": 3, "sources": ["a.js"], "mappings": "+/////D+/////D+/////D+/////D,+/////D+/////D+/////D+/////D;AAAA"});
        assert!(SourceMap::parse(&huge.to_string(), "x").is_ok());
        let far = serde_json::json!({"version": 3, "sections": [{"offset": {"line": 4294967295u32, "column": 0}, "map": section("a.js")}]});
        assert!(
            SourceMap::parse(&far.to_string(), "x")
                .unwrap_err()
                .contains("generated lines")
        );
        // An XSSI prefix is skipped.
        let ok = format!(")]}}'\n{}", section("a.js"));
        assert!(SourceMap::parse(&ok, "x").is_ok());
    }
}
