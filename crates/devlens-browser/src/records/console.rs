//! The console record of each tab: a bounded ring buffer of messages, uncaught exceptions and the
//! browser's own warnings, read with a level filter, a limit and "since last read".
//!
//! Messages are formatted when they arrive (the objects they reference may be gone later), in
//! the compact way DevTools shows them: `{a: 1, b: "x"}`, `[1, 2, 3]`, `div#app.main`. Identical
//! consecutive messages collapse into one with a count. Exceptions are shown the same way here,
//! whether they arrive as an event, a pause or a thrown evaluation.

use std::collections::VecDeque;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::text::{collapse, short_url, truncate};

/// Longest message text kept.
const MAX_TEXT: usize = 1000;
/// Most stack frames kept per entry.
pub(crate) const MAX_FRAMES: usize = 8;
/// Default and largest page of [`ConsoleQuery::limit`].
pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 500;

/// Severity, ordered: a query for `Warn` returns warnings and errors.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    Debug,
    Log,
    Info,
    Warn,
    Error,
}

impl ConsoleLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Log => "log",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }

    /// Parses `error`, `warn`/`warning`, `info`, `log`, `debug`/`verbose`/`all`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" | "errors" => Some(Self::Error),
            "warn" | "warning" | "warnings" => Some(Self::Warn),
            "info" => Some(Self::Info),
            "log" => Some(Self::Log),
            "debug" | "verbose" | "all" => Some(Self::Debug),
            _ => None,
        }
    }
}

/// One console message, exception or browser warning.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleEntry {
    /// Increasing per tab; `since last read` and smart responses compare these.
    pub id: u64,
    pub level: ConsoleLevel,
    pub text: String,
    /// `file:line:col` of the call (same-origin URLs shortened to their path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Call stack for errors, traces and exceptions, innermost first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
    /// How many identical messages in a row this entry stands for.
    #[serde(skip_serializing_if = "is_one")]
    pub count: u32,
    /// An uncaught exception or unhandled promise rejection.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub uncaught: bool,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl ConsoleEntry {
    /// `error Uncaught TypeError: x (app.js:3:5)` and the stack below it.
    pub fn to_text(&self) -> String {
        let mut out = format!("{:<5} {}", self.level.as_str(), self.text);
        if self.count > 1 {
            let _ = write!(out, " (×{})", self.count);
        }
        if let Some(source) = &self.source {
            let _ = write!(out, " ({source})");
        }
        // The first frame is the source already; more frames are worth their tokens.
        if self.stack.len() > 1 {
            for frame in &self.stack {
                let _ = write!(out, "\n      at {frame}");
            }
        }
        out
    }
}

/// What to read from the console.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ConsoleQuery {
    /// Lowest level to include (`error` = errors only). Default: everything.
    pub level: Option<ConsoleLevel>,
    /// Only entries whose text contains this (case-insensitive).
    pub contains: Option<String>,
    /// At most this many, the most recent (default 50, at most 500).
    pub limit: Option<usize>,
    /// Only entries that arrived after the previous console read of this tab.
    pub since_last_read: bool,
    /// Also entries logged by pages this tab showed before the current one (default: only the
    /// current page, as DevTools does without "Preserve log").
    pub include_previous_pages: bool,
}

/// The answer to a [`ConsoleQuery`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleLogs {
    /// Oldest first.
    pub entries: Vec<ConsoleEntry>,
    /// Matching entries left out by the limit (older than the ones shown).
    pub omitted: usize,
    /// Entries pushed out of the ring buffer since the tab was attached.
    pub dropped: u64,
    pub capacity: usize,
    /// Matching entries from pages shown before the current one, left out (ask with
    /// `includePreviousPages`).
    #[serde(skip_serializing_if = "is_zero")]
    pub previous_pages: usize,
    #[serde(skip)]
    pub(crate) since_last_read: bool,
}

pub(crate) fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ConsoleLogs {
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if self.entries.is_empty() {
            out.push_str(if self.since_last_read {
                "no new console messages since the last read"
            } else if self.previous_pages > 0 {
                "no console messages on the current page"
            } else {
                "no console messages"
            });
        }
        for e in &self.entries {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&e.to_text());
        }
        if self.omitted > 0 {
            let _ = write!(
                out,
                "\n… {} earlier matching entries not shown (raise the limit or filter by level)",
                self.omitted
            );
        }
        if self.previous_pages > 0 {
            let _ = write!(
                out,
                "\n… {} matching entries from earlier pages of this tab not shown \
                 (includePreviousPages)",
                self.previous_pages
            );
        }
        if self.dropped > 0 {
            let _ = write!(
                out,
                "\n… {} older entries were dropped (the buffer keeps the last {})",
                self.dropped, self.capacity
            );
        }
        out
    }
}

/// The ring buffer behind a tab's console.
#[derive(Debug)]
pub(crate) struct ConsoleBuffer {
    pub(crate) entries: VecDeque<ConsoleEntry>,
    pub(crate) capacity: usize,
    pub(crate) next_id: u64,
    pub(crate) dropped: u64,
    pub(crate) read_cursor: u64,
    /// The id of the first entry of the page the tab shows now.
    pub(crate) page_start: u64,
}

impl ConsoleBuffer {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            capacity: capacity.max(1),
            next_id: 1,
            dropped: 0,
            read_cursor: 0,
            page_start: 0,
        }
    }

    /// The tab's main frame committed a new document: later reads show its entries only.
    pub(crate) fn new_page(&mut self) {
        self.page_start = self.next_id;
    }

    /// The id the next entry will get; entries with a smaller id happened before now.
    pub(crate) fn mark(&self) -> u64 {
        self.next_id
    }

    pub(crate) fn push(
        &mut self,
        level: ConsoleLevel,
        text: String,
        source: Option<String>,
        stack: Vec<String>,
        uncaught: bool,
    ) {
        let id = self.next_id;
        self.next_id += 1;
        let text = truncate(&text, MAX_TEXT);
        // Collapse a repeat into the previous entry, moving it to the new id so readers that
        // ask for "new" entries see it again.
        if let Some(last) = self.entries.back()
            && last.id >= self.page_start
            && last.level == level
            && last.text == text
            && last.source == source
            && last.uncaught == uncaught
        {
            if let Some(mut last) = self.entries.pop_back() {
                last.id = id;
                last.count = last.count.saturating_add(1);
                self.entries.push_back(last);
            }
            return;
        }
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
            self.dropped += 1;
        }
        self.entries.push_back(ConsoleEntry {
            id,
            level,
            text,
            source,
            stack,
            count: 1,
            uncaught,
        });
    }

    pub(crate) fn query(&mut self, q: &ConsoleQuery) -> ConsoleLogs {
        let limit = q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let min_id = if q.since_last_read {
            self.read_cursor + 1
        } else {
            0
        };
        let page_start = if q.include_previous_pages {
            0
        } else {
            self.page_start
        };
        let needle = q
            .contains
            .as_deref()
            .map(str::to_lowercase)
            .filter(|n| !n.is_empty());
        let (matching, earlier): (Vec<&ConsoleEntry>, Vec<&ConsoleEntry>) = self
            .entries
            .iter()
            .filter(|e| e.id >= min_id)
            .filter(|e| q.level.is_none_or(|l| e.level >= l))
            .filter(|e| {
                needle
                    .as_deref()
                    .is_none_or(|n| e.text.to_lowercase().contains(n))
            })
            .partition(|e| e.id >= page_start);
        let omitted = matching.len().saturating_sub(limit);
        let entries: Vec<ConsoleEntry> = matching[omitted..].iter().map(|e| (*e).clone()).collect();
        // Every read counts: the next "since last read" starts after what exists now.
        self.read_cursor = self.next_id - 1;
        ConsoleLogs {
            entries,
            omitted,
            dropped: self.dropped,
            capacity: self.capacity,
            previous_pages: earlier.len(),
            since_last_read: q.since_last_read,
        }
    }

    /// Entries with `id >= mark`, at least `min_level`, the newest `limit`, and how many more.
    pub(crate) fn since(
        &self,
        mark: u64,
        min_level: ConsoleLevel,
        limit: usize,
    ) -> (Vec<ConsoleEntry>, usize) {
        let matching: Vec<&ConsoleEntry> = self
            .entries
            .iter()
            .filter(|e| e.id >= mark && e.level >= min_level)
            .collect();
        let omitted = matching.len().saturating_sub(limit);
        (
            matching[omitted..].iter().map(|e| (*e).clone()).collect(),
            omitted,
        )
    }
}

/// Formats the arguments of a `console.*` call (CDP `RemoteObject`s as JSON) the way DevTools
/// prints them, applying `%s`/`%d`/`%o`/`%c` substitutions of a leading format string.
pub(crate) fn format_args(args: &[Value]) -> String {
    let mut out = String::new();
    let mut rest = args;
    if let Some(first) = args.first()
        && first.get("type").and_then(Value::as_str) == Some("string")
        && let Some(format) = first.get("value").and_then(Value::as_str)
        && format.contains('%')
    {
        let (formatted, used) = substitute(format, &args[1..]);
        out.push_str(&formatted);
        rest = &args[1 + used..];
    } else if let Some(first) = args.first() {
        out.push_str(&format_value(first, true));
        rest = &args[1..];
    }
    for arg in rest {
        out.push(' ');
        out.push_str(&format_value(arg, true));
    }
    out
}

fn substitute(format: &str, args: &[Value]) -> (String, usize) {
    let mut out = String::new();
    let mut used = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('%') => {
                chars.next();
                out.push('%');
            }
            Some(spec @ ('s' | 'd' | 'i' | 'f' | 'o' | 'O' | 'c')) => {
                chars.next();
                if spec == 'c' {
                    // CSS styling: consumes an argument, prints nothing.
                    used += usize::from(used < args.len());
                    continue;
                }
                match args.get(used) {
                    Some(arg) => {
                        used += 1;
                        let mut s = format_value(arg, true);
                        if matches!(spec, 'd' | 'i')
                            && let Ok(n) = s.parse::<f64>()
                        {
                            s = format!("{}", n.trunc());
                        }
                        out.push_str(&s);
                    }
                    None => {
                        out.push('%');
                        out.push(spec);
                    }
                }
            }
            _ => out.push('%'),
        }
    }
    (out, used)
}

/// One `RemoteObject` as text; `top` strings print bare, nested ones quoted.
pub(crate) fn format_value(obj: &Value, top: bool) -> String {
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let subtype = obj.get("subtype").and_then(Value::as_str);
    match ty {
        "string" => {
            let s = obj.get("value").and_then(Value::as_str).unwrap_or("");
            if top { s.to_string() } else { quote(s) }
        }
        "number" | "boolean" | "bigint" => obj
            .get("unserializableValue")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| obj.get("value").map(Value::to_string))
            .or_else(|| {
                obj.get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default(),
        "undefined" => "undefined".into(),
        "symbol" => description(obj),
        "function" => {
            let d = description(obj);
            truncate(&collapse(d.lines().next().unwrap_or("")), 80)
        }
        "object" => match subtype {
            Some("null") => "null".into(),
            Some("error") => {
                let d = description(obj);
                d.lines().next().unwrap_or("").to_string()
            }
            Some("node") => description(obj),
            _ => match obj.get("preview") {
                Some(preview) => format_preview(preview),
                None => description(obj),
            },
        },
        _ => description(obj),
    }
}

pub(crate) fn description(obj: &Value) -> String {
    obj.get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn quote(s: &str) -> String {
    serde_json::to_string(&truncate(s, 100)).unwrap_or_default()
}

/// `{a: 1, b: "x"}` / `[1, 2]` from an `ObjectPreview`.
fn format_preview(preview: &Value) -> String {
    let subtype = preview.get("subtype").and_then(Value::as_str);
    let overflow = preview
        .get("overflow")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let props = preview
        .get("properties")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let render = |p: &Value| -> String {
        let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
        let value = p.get("value").and_then(Value::as_str).unwrap_or("");
        match ty {
            "string" => quote(value),
            "object" if p.get("subtype").and_then(Value::as_str) != Some("null") => {
                match p.get("valuePreview") {
                    Some(inner) => format_preview(inner),
                    None => value.to_string(),
                }
            }
            _ => value.to_string(),
        }
    };
    match subtype {
        Some("array" | "typedarray") => {
            let mut parts: Vec<String> = props.iter().map(render).collect();
            if overflow {
                parts.push("…".into());
            }
            format!("[{}]", parts.join(", "))
        }
        // Maps, sets, dates, regexps, errors, nodes: their description says it best.
        Some(_) => preview
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        None => {
            let mut parts: Vec<String> = props
                .iter()
                .map(|p| {
                    let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                    format!("{name}: {}", render(p))
                })
                .collect();
            if overflow {
                parts.push("…".into());
            }
            let class = preview
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| *d != "Object")
                .map(|d| format!("{d} "))
                .unwrap_or_default();
            format!("{class}{{{}}}", parts.join(", "))
        }
    }
}

/// `fn (file:line:col)` lines from a CDP `StackTrace` (as JSON).
pub(crate) fn stack_frames(stack: Option<&Value>, page_url: &str) -> Vec<String> {
    let Some(frames) = stack
        .and_then(|s| s.get("callFrames"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    frames
        .iter()
        .take(MAX_FRAMES)
        .map(|f| {
            let name = f
                .get("functionName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .unwrap_or("(anonymous)");
            match frame_location(f, page_url) {
                Some(loc) => format!("{name} ({loc})"),
                None => name.to_string(),
            }
        })
        .collect()
}

/// `file:line:col` (1-based) of a call frame.
pub(crate) fn frame_location(frame: &Value, page_url: &str) -> Option<String> {
    let url = frame.get("url").and_then(Value::as_str).unwrap_or("");
    if url.is_empty() {
        return None;
    }
    let line = frame.get("lineNumber").and_then(Value::as_i64).unwrap_or(0) + 1;
    let col = frame
        .get("columnNumber")
        .and_then(Value::as_i64)
        .unwrap_or(0)
        + 1;
    Some(format!("{}:{line}:{col}", short_url(url, page_url)))
}

/// Text, source and stack of an uncaught exception (`ExceptionDetails` as JSON).
pub(crate) fn exception_parts(
    details: &Value,
    page_url: &str,
) -> (String, Option<String>, Vec<String>) {
    let prefix = details
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or("Uncaught");
    let exception = details.get("exception");
    let description = exception
        .and_then(|e| e.get("description"))
        .and_then(Value::as_str)
        .map(|d| d.lines().next().unwrap_or("").to_string())
        .or_else(|| {
            // A thrown primitive (`throw "x"`) has a value instead of a description.
            exception
                .filter(|e| e.get("type").is_some())
                .map(|e| crate::records::console::format_value(e, false))
        });
    let text = match description {
        Some(d) if !prefix.contains(&d) => format!("{prefix} {d}"),
        _ => prefix.to_string(),
    };
    let stack = stack_frames(details.get("stackTrace"), page_url);
    let source = details
        .get("stackTrace")
        .and_then(|s| s.get("callFrames"))
        .and_then(Value::as_array)
        .and_then(|f| f.first())
        .and_then(|f| frame_location(f, page_url))
        .or_else(|| {
            let url = details.get("url").and_then(Value::as_str)?;
            let line = details
                .get("lineNumber")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                + 1;
            Some(format!("{}:{line}", crate::text::short_url(url, page_url)))
        });
    (collapse(&text), source, stack)
}

/// The first line of an exception's description (`ExceptionDetails` JSON).
pub(crate) fn exception_text(ex: &Value) -> String {
    ex.get("exception")
        .and_then(|e| e.get("description"))
        .and_then(Value::as_str)
        .map(|d| d.lines().next().unwrap_or("").to_string())
        .or_else(|| ex.get("text").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "exception".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn push(b: &mut ConsoleBuffer, level: ConsoleLevel, text: &str) {
        b.push(level, text.into(), None, vec![], false);
    }

    #[test]
    fn ring_is_bounded_and_repeats_collapse() {
        let mut b = ConsoleBuffer::new(3);
        for i in 0..5 {
            push(&mut b, ConsoleLevel::Log, &format!("m{i}"));
        }
        push(&mut b, ConsoleLevel::Log, "m4");
        let logs = b.query(&ConsoleQuery::default());
        let texts: Vec<&str> = logs.entries.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(texts, ["m2", "m3", "m4"]);
        assert_eq!(logs.entries[2].count, 2);
        assert_eq!(logs.dropped, 2);
        assert!(logs.to_text().contains("(×2)"));
        assert!(logs.to_text().contains("dropped"));
    }

    #[test]
    fn reads_show_the_current_page_unless_asked_for_earlier_ones() {
        let mut b = ConsoleBuffer::new(100);
        push(&mut b, ConsoleLevel::Error, "old page failed");
        push(&mut b, ConsoleLevel::Log, "same");
        b.new_page();
        // A repeat on the new page is its own entry, not a count on the old page's one.
        push(&mut b, ConsoleLevel::Log, "same");
        let logs = b.query(&ConsoleQuery::default());
        let texts: Vec<&str> = logs.entries.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(texts, ["same"]);
        assert_eq!(logs.entries[0].count, 1);
        assert_eq!(logs.previous_pages, 2);
        assert!(logs.to_text().contains("includePreviousPages"));
        let errors = b.query(&ConsoleQuery {
            level: Some(ConsoleLevel::Error),
            ..Default::default()
        });
        assert!(errors.entries.is_empty());
        assert!(
            errors
                .to_text()
                .contains("no console messages on the current page")
        );
        let all = b.query(&ConsoleQuery {
            include_previous_pages: true,
            ..Default::default()
        });
        assert_eq!(all.entries.len(), 3);
        assert_eq!(all.previous_pages, 0);
    }

    #[test]
    fn level_filter_limit_and_since_last_read() {
        let mut b = ConsoleBuffer::new(100);
        push(&mut b, ConsoleLevel::Log, "a");
        push(&mut b, ConsoleLevel::Warn, "b");
        push(&mut b, ConsoleLevel::Error, "c");
        let q = ConsoleQuery {
            level: Some(ConsoleLevel::Warn),
            ..Default::default()
        };
        assert_eq!(b.query(&q).entries.len(), 2);
        let q = ConsoleQuery {
            limit: Some(1),
            ..Default::default()
        };
        let logs = b.query(&q);
        assert_eq!(logs.entries[0].text, "c");
        assert_eq!(logs.omitted, 2);
        let since = ConsoleQuery {
            since_last_read: true,
            ..Default::default()
        };
        assert!(b.query(&since).entries.is_empty());
        assert!(b.query(&since).to_text().contains("no new"));
        push(&mut b, ConsoleLevel::Info, "d");
        let logs = b.query(&since);
        assert_eq!(logs.entries.len(), 1);
        assert_eq!(logs.entries[0].text, "d");
    }

    #[test]
    fn arguments_format_like_devtools() {
        let args = vec![
            json!({"type": "string", "value": "n=%d %s%c!"}),
            json!({"type": "number", "value": 4.7, "description": "4.7"}),
            json!({"type": "string", "value": "x"}),
            json!({"type": "string", "value": "color: red"}),
            json!({"type": "object", "preview": {"type": "object", "overflow": false, "properties": [
                {"name": "a", "type": "number", "value": "1"},
                {"name": "b", "type": "string", "value": "hi"}
            ]}}),
            json!({"type": "object", "subtype": "array", "preview": {"type": "object", "subtype": "array", "overflow": true, "properties": [
                {"name": "0", "type": "number", "value": "1"}
            ]}}),
            json!({"type": "object", "subtype": "null", "value": null}),
            json!({"type": "undefined"}),
        ];
        assert_eq!(
            format_args(&args),
            r#"n=4 x! {a: 1, b: "hi"} [1, …] null undefined"#
        );
    }
}
