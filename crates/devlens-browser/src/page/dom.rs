//! Finding elements: `query_elements` (compact, bounded summaries of what a CSS selector
//! matches) and the resolution of an action's target — a snapshot ref or a selector — to a live
//! element, with "did you mean" suggestions when a selector matches nothing.
//!
//! The work runs as small JavaScript functions in the page: one round trip per query instead of
//! one per element and attribute.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::records::console::exception_text;
use crate::records::refs::Realm;
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::truncate;

/// Default and largest number of elements `query_elements` returns.
pub const DEFAULT_QUERY_LIMIT: usize = 5;
pub const MAX_QUERY_LIMIT: usize = 20;

/// Helpers every page function starts with: visibility and a short label for messages.
const PRELUDE: &str = r#"
const __visible = (el) => {
  if (!el || !el.isConnected) return false;
  if (el.checkVisibility && !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
};
const __text = (s, n) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
const __label = (el) => {
  if (!el || !el.tagName) return 'element';
  const tag = el.tagName.toLowerCase();
  let s = tag;
  if (el.id) s += '#' + el.id;
  else if (el.classList && el.classList.length) s += '.' + el.classList[0];
  const field = ['input', 'textarea', 'select'].includes(tag);
  const name = el.getAttribute('aria-label') || (field ? (el.getAttribute('name') || el.getAttribute('placeholder') || '') : (el.innerText || el.textContent || el.getAttribute('alt') || el.getAttribute('title') || ''));
  const t = __text(name, 40);
  if (t) s += ' "' + t + '"';
  return s;
};
const __inside = (el) => {
  const out = [];
  if (el.shadowRoot) out.push(el.shadowRoot);
  if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') { try { if (el.contentDocument) out.push(el.contentDocument); } catch (e) {} }
  return out;
};
// `roots` and every open shadow root and same-origin frame document under them, bounded.
const __roots = (roots) => {
  const out = roots.slice();
  const seen = new Set(out);
  for (let i = 0; i < out.length && out.length < 200; i++) {
    const els = out[i].querySelectorAll('*');
    for (let j = 0; j < els.length && out.length < 200; j++) {
      for (const inner of __inside(els[j])) if (!seen.has(inner)) { seen.add(inner); out.push(inner); }
    }
  }
  return out;
};
const __deepAll = (sel, roots) => {
  const out = [];
  const seen = new Set();
  for (const r of __roots(roots)) for (const el of r.querySelectorAll(sel)) if (!seen.has(el)) { seen.add(el); out.push(el); }
  return out;
};
// What a selector names. `a >>> b`: b inside the shadow roots and frames under a; `>>> b`: b
// anywhere. A plain selector that matches nothing in the page is looked for deep when `fallback`.
const __select = (sel, fallback) => {
  if (!sel.includes('>>>')) {
    const light = Array.from(document.querySelectorAll(sel));
    if (light.length || !fallback) return { all: light, deep: false };
    return { all: __deepAll(sel, [document]), deep: true };
  }
  const parts = sel.split('>>>').map((p) => p.trim());
  let roots = [document];
  let all = [];
  for (let i = 0; i < parts.length; i++) {
    if (!parts[i]) {
      if (i === 0) continue;
      throw new SyntaxError("'" + sel + "' is not a valid selector (nothing after '>>>')");
    }
    all = i === 0 ? Array.from(document.querySelectorAll(parts[i])) : __deepAll(parts[i], roots);
    roots = all.flatMap(__inside);
  }
  return { all, deep: true };
};
// A selector that matches `el` alone within its document or shadow root.
const __unique = (el) => {
  const root = el.getRootNode();
  const esc = (s) => CSS.escape(s);
  const one = (s) => { try { return root.querySelectorAll(s).length === 1; } catch (e) { return false; } };
  if (el.id && one('#' + esc(el.id))) return '#' + esc(el.id);
  const parts = [];
  let cur = el;
  while (cur && cur.nodeType === 1 && parts.length < 5) {
    let part = cur.tagName.toLowerCase();
    if (cur.id && one('#' + esc(cur.id))) { parts.unshift('#' + esc(cur.id)); break; }
    const parent = cur.parentElement;
    if (parent) {
      const same = Array.from(parent.children).filter((c) => c.tagName === cur.tagName);
      if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(cur) + 1) + ')';
    }
    parts.unshift(part);
    if (one(parts.join(' > '))) return parts.join(' > ');
    cur = parent;
  }
  return parts.join(' > ');
};
// The selector of `el` from the page, crossing shadow roots and frames with `>>>`.
const __path = (el) => {
  const parts = [];
  let cur = el;
  while (cur && parts.length < 10) {
    parts.unshift(__unique(cur));
    const root = cur.getRootNode();
    if (root.nodeType === 11 && root.host) cur = root.host;
    else { const w = root.defaultView; cur = w && w.frameElement ? w.frameElement : null; }
  }
  return parts.join(' >>> ');
};
// [x, y, width, height] in the page's viewport (frames' offsets added).
const __rect = (el) => {
  const r = el.getBoundingClientRect();
  let x = r.left, y = r.top;
  let w = el.ownerDocument.defaultView;
  while (w && w.frameElement) {
    const f = w.frameElement;
    const fr = f.getBoundingClientRect();
    x += fr.left + f.clientLeft;
    y += fr.top + f.clientTop;
    w = w.parent;
  }
  return [Math.round(x), Math.round(y), Math.round(r.width), Math.round(r.height)];
};
"#;

/// What an action acts on: a ref from the latest snapshot (`e12`) or a CSS selector.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ElementTarget {
    Ref(String),
    Selector(String),
}

impl ElementTarget {
    /// `e12` (or `ref=e12`) is a snapshot ref; anything else is a CSS selector.
    pub fn parse(s: &str) -> Self {
        let t = s.trim();
        let r = t.strip_prefix("ref=").unwrap_or(t);
        if r.len() > 1 && r.starts_with('e') && r[1..].chars().all(|c| c.is_ascii_digit()) {
            Self::Ref(r.to_string())
        } else {
            Self::Selector(t.to_string())
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Ref(r) => format!("ref {r}"),
            Self::Selector(s) => format!("`{s}`"),
        }
    }
}

/// A live element in the page.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub object_id: String,
    /// The session that reaches it (the tab's, or a cross-site iframe's).
    pub realm: Realm,
    /// How many elements the selector matched (1 for refs).
    pub matches: usize,
}

/// One element, compactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ElementSummary {
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<String>,
    /// The ARIA role attribute (the tag implies the rest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Visible text (or value), shortened.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// href, src, name, type, value, placeholder, aria-label, alt, title, for, disabled, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<(String, String)>,
    pub visible: bool,
    /// Position and size in CSS pixels, relative to the viewport: [x, y, width, height].
    pub rect: [i64; 4],
    /// A selector that matches this element alone.
    pub selector: String,
}

impl ElementSummary {
    /// `button#save.primary role=button "Save" [type=submit] @10,20 80x30 → #save`
    pub fn to_line(&self) -> String {
        let mut out = self.tag.clone();
        if let Some(id) = &self.id {
            let _ = write!(out, "#{id}");
        }
        for c in &self.classes {
            let _ = write!(out, ".{c}");
        }
        if let Some(role) = &self.role {
            let _ = write!(out, " role={role}");
        }
        if !self.text.is_empty() {
            let _ = write!(out, " \"{}\"", self.text);
        }
        for (k, v) in &self.attributes {
            if v.is_empty() {
                let _ = write!(out, " [{k}]");
            } else {
                let _ = write!(out, " [{k}={v}]");
            }
        }
        if self.visible {
            let [x, y, w, h] = self.rect;
            let _ = write!(out, " @{x},{y} {w}x{h}");
        } else {
            out.push_str(" (hidden)");
        }
        let _ = write!(out, " → {}", self.selector);
        out
    }
}

/// What to look for.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ElementQuery {
    /// CSS selector.
    pub selector: String,
    /// Only elements whose text, value, label or placeholder contains this (case-insensitive).
    pub text: Option<String>,
    /// Only visible (true) or only hidden (false) elements.
    pub visible: Option<bool>,
    /// At most this many (default 5, at most 20).
    pub limit: Option<usize>,
    /// Skip this many matches (paging).
    pub offset: usize,
}

/// The answer to an [`ElementQuery`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ElementList {
    pub elements: Vec<ElementSummary>,
    /// Elements the selector matched, before the text/visibility filters.
    pub matched: usize,
    /// Elements left after the filters.
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Close selectors when nothing matched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
    /// The matches are inside shadow roots or iframes (their selectors cross them with `>>>`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deep: bool,
    #[serde(skip)]
    selector: String,
}

impl ElementList {
    pub fn to_text(&self) -> String {
        if self.matched == 0 {
            let mut out = format!("no element matches `{}`", self.selector);
            if !self.suggestions.is_empty() {
                let _ = write!(out, "; close matches: {}", self.suggestions.join(", "));
            }
            return out;
        }
        if self.total == 0 {
            return format!(
                "{} element(s) match `{}` but none passes the text/visibility filter",
                self.matched, self.selector
            );
        }
        let mut out = String::new();
        if self.deep && !self.selector.contains(">>>") {
            out.push_str("(nothing in the page itself; found inside shadow roots or iframes)\n");
        }
        for (i, e) in self.elements.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&e.to_line());
        }
        let shown_to = self.next_offset.unwrap_or(self.total);
        if self.next_offset.is_some() || self.total > self.elements.len() {
            let _ = write!(out, "\n… {} of {} shown", self.elements.len(), self.total);
            if self.next_offset.is_some() {
                let _ = write!(out, "; next page: offset {shown_to}");
            }
        }
        out
    }
}

const QUERY_FN: &str = r#"
function(sel, text, wantVisible, offset, limit) {
  __PRELUDE__
  const { all, deep } = __select(sel, true);
  const needle = text ? text.toLowerCase() : null;
  const textOf = (el) => {
    const tag = el.tagName.toLowerCase();
    if (tag === 'input' || tag === 'textarea') return el.value || '';
    if (tag === 'select') return el.selectedOptions.length ? el.selectedOptions[0].label : '';
    return el.innerText || el.textContent || '';
  };
  const KEY_ATTRS = ['href', 'src', 'name', 'type', 'value', 'placeholder', 'aria-label', 'alt', 'title', 'for', 'action', 'method', 'data-testid', 'aria-expanded', 'aria-checked', 'aria-selected'];
  const filtered = all.filter((el) => {
    if (wantVisible !== null && __visible(el) !== wantVisible) return false;
    if (needle) {
      const hay = [textOf(el), el.getAttribute('aria-label'), el.getAttribute('placeholder'), el.getAttribute('title'), el.getAttribute('alt')].join(' ').toLowerCase();
      if (!hay.includes(needle)) return false;
    }
    return true;
  });
  const items = filtered.slice(offset, offset + limit).map((el) => {
    const attributes = [];
    for (const name of KEY_ATTRS) {
      if (!el.hasAttribute(name)) continue;
      if (name === 'type' && el.tagName.toLowerCase() === 'button') continue;
      let v = el.getAttribute(name) || '';
      if (name === 'value' && (el.tagName.toLowerCase() === 'input' || el.tagName.toLowerCase() === 'textarea')) continue;
      attributes.push([name, __text(v, 80)]);
    }
    for (const flag of ['disabled', 'checked', 'required', 'readonly', 'multiple', 'hidden']) {
      if (el[flag] === true || (flag === 'hidden' && el.hasAttribute('hidden'))) attributes.push([flag, '']);
    }
    return {
      tag: el.tagName.toLowerCase(),
      id: el.id || null,
      classes: Array.from(el.classList || []).slice(0, 4),
      role: el.getAttribute('role') || null,
      text: __text(textOf(el), 80),
      attributes,
      visible: __visible(el),
      rect: __rect(el),
      selector: __path(el),
    };
  });
  return { matched: all.length, total: filtered.length, deep, items };
}
"#;

/// Collects the selector-shaped names a page offers, for "did you mean".
const CANDIDATES_FN: &str = r#"
function() {
  __PRELUDE__
  const out = new Set();
  for (const root of __roots([document])) {
    const els = root.querySelectorAll('*');
    for (let i = 0; i < els.length && out.size < 3000; i++) {
      const el = els[i];
      const tag = el.tagName.toLowerCase();
      if (tag === 'script' || tag === 'style' || tag === 'template' || tag === 'head' || tag === 'meta' || tag === 'title' || tag === 'link' || tag === 'html' || tag === 'body') continue;
      out.add(tag);
      if (el.id) { out.add('#' + el.id); out.add(tag + '#' + el.id); }
      for (const c of Array.from(el.classList || []).slice(0, 3)) { out.add('.' + c); out.add(tag + '.' + c); }
      for (const a of ['name', 'data-testid', 'type', 'aria-label', 'role']) {
        const v = el.getAttribute(a);
        if (v && v.length < 40) out.add('[' + a + '="' + v + '"]');
      }
    }
  }
  return Array.from(out);
}
"#;

/// Finds the first visible match of a selector (or the first match when none is visible),
/// looking inside shadow roots and same-origin frames when the page itself has none.
const FIND_FN: &str = r#"
(() => {
  __PRELUDE__
  const all = __select(__SEL__, true).all;
  if (!all.length) return null;
  for (const el of all) if (__visible(el)) { el.__devlensMatches = all.length; return el; }
  all[0].__devlensMatches = all.length;
  return all[0];
})()
"#;

pub(crate) fn page_fn(body: &str) -> String {
    body.replace("__PRELUDE__", PRELUDE)
}

impl Tab {
    /// Evaluates an expression in the page, returning the `Runtime.evaluate` result.
    pub(crate) async fn eval_raw(&self, expression: &str, by_value: bool) -> Result<Value> {
        self.call(Raw::new(
            "Runtime.evaluate",
            json!({
                "expression": expression,
                "returnByValue": by_value,
                "awaitPromise": true,
            }),
        ))
        .await
    }

    /// Calls `function` with `this` = an object of the tab's session and JSON `args`.
    pub(crate) async fn call_on(
        &self,
        object_id: &str,
        function: &str,
        args: Value,
    ) -> Result<Value> {
        self.call_on_in(&Realm::Page, object_id, function, args)
            .await
    }

    /// Calls `function` with `this` = a resolved element (in whichever frame it lives).
    pub(crate) async fn call_el(
        &self,
        el: &Resolved,
        function: &str,
        args: Value,
    ) -> Result<Value> {
        self.call_on_in(&el.realm, &el.object_id, function, args)
            .await
    }

    /// Runs a function in the page with JSON arguments (one round trip).
    pub(crate) async fn call_fn(&self, function: &str, args: Value) -> Result<Value> {
        let args = match args {
            Value::Array(a) => a,
            Value::Null => Vec::new(),
            v => vec![v],
        };
        let args = serde_json::to_string(&args).unwrap_or_else(|_| "[]".into());
        let expression = format!("({function})(...{args})");
        let v = self.eval_raw(&expression, true).await?;
        if let Some(ex) = v.get("exceptionDetails") {
            return Err(BrowserError::protocol(
                "running a page function",
                exception_text(ex),
            ));
        }
        Ok(v["result"].get("value").cloned().unwrap_or(Value::Null))
    }

    /// Resolves an action target to a live element.
    pub(crate) async fn resolve(&self, target: &ElementTarget) -> Result<Resolved> {
        match target {
            ElementTarget::Ref(r) => self.resolve_ref(r).await,
            ElementTarget::Selector(s) => self.resolve_selector(s).await,
        }
    }

    async fn resolve_ref(&self, reference: &str) -> Result<Resolved> {
        let node = self.state().page_state().refs.node(reference);
        let Some((realm, backend)) = node else {
            return Err(BrowserError::StaleRef {
                reference: reference.to_string(),
                reason: "is not from the latest snapshot of this page".into(),
            });
        };
        let resolved = self
            .call_in(
                &realm,
                Raw::new("DOM.resolveNode", json!({ "backendNodeId": backend })),
            )
            .await;
        match resolved {
            Ok(v) => match v["object"].get("objectId").and_then(Value::as_str) {
                Some(id) => Ok(Resolved {
                    object_id: id.to_string(),
                    realm,
                    matches: 1,
                }),
                None => Err(stale(reference)),
            },
            Err(BrowserError::Protocol { .. } | BrowserError::FrameGone) => Err(stale(reference)),
            Err(e) => Err(e),
        }
    }

    async fn resolve_selector(&self, selector: &str) -> Result<Resolved> {
        let selector = selector.trim();
        if selector.is_empty() {
            return Err(BrowserError::InvalidInput(
                "give a CSS selector or a snapshot ref (e.g. e12)".into(),
            ));
        }
        let quoted = serde_json::to_string(selector).unwrap_or_default();
        let expression = page_fn(FIND_FN).replace("__SEL__", &quoted);
        let v = self.eval_raw(&expression, false).await?;
        if let Some(ex) = v.get("exceptionDetails") {
            return Err(BrowserError::InvalidSelector {
                selector: selector.to_string(),
                reason: selector_error(ex),
            });
        }
        let result = &v["result"];
        match result.get("objectId").and_then(Value::as_str) {
            Some(id) if result.get("subtype").and_then(Value::as_str) != Some("null") => {
                let matches = self
                    .call_on(id, "function() { const n = this.__devlensMatches || 1; delete this.__devlensMatches; return n; }", Value::Null)
                    .await
                    .ok()
                    .and_then(|v| v.as_u64())
                    .unwrap_or(1) as usize;
                Ok(Resolved {
                    object_id: id.to_string(),
                    realm: Realm::Page,
                    matches,
                })
            }
            _ => Err(BrowserError::ElementNotFound {
                selector: selector.to_string(),
                suggestions: self.selector_suggestions(selector).await,
            }),
        }
    }

    /// Selectors in the page close to `selector` (best first).
    pub(crate) async fn selector_suggestions(&self, selector: &str) -> Vec<String> {
        let Ok(Value::Array(names)) = self.call_fn(&page_fn(CANDIDATES_FN), Value::Null).await
        else {
            return Vec::new();
        };
        let names: Vec<String> = names
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        // Compare the whole selector and its last compound part (`form #sumbit` → `#sumbit`).
        let last = selector
            .rsplit([' ', '>', '+', '~'])
            .find(|s| !s.is_empty())
            .unwrap_or(selector);
        let mut out = devlens_core::suggest::closest(selector, names.iter().map(String::as_str), 3);
        if last != selector {
            let prefix = &selector[..selector.len() - last.len()];
            for s in devlens_core::suggest::closest(last, names.iter().map(String::as_str), 3) {
                let full = format!("{prefix}{s}");
                if !out.contains(&full) {
                    out.push(full);
                }
            }
        }
        out.truncate(3);
        out
    }

    /// Compact summaries of the elements a selector matches, filtered and paged.
    pub async fn query_elements(&self, query: &ElementQuery) -> Result<ElementList> {
        self.guard_running("query_elements")?;
        let selector = query.selector.trim();
        if selector.is_empty() {
            return Err(BrowserError::InvalidInput(
                "give a CSS selector, e.g. `button`, `#login`, `form input[name=email]`".into(),
            ));
        }
        let limit = query
            .limit
            .unwrap_or(DEFAULT_QUERY_LIMIT)
            .clamp(1, MAX_QUERY_LIMIT);
        let text = query
            .text
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let function = page_fn(QUERY_FN);
        let result = self
            .call_fn(
                &function,
                json!([selector, text, query.visible, query.offset, limit]),
            )
            .await;
        let v = match result {
            Ok(v) => v,
            Err(BrowserError::Protocol { message, .. })
                if message.contains("is not a valid selector") =>
            {
                return Err(BrowserError::InvalidSelector {
                    selector: selector.to_string(),
                    reason: clean_selector_message(&message),
                });
            }
            Err(e) => return Err(e),
        };
        let matched = v.get("matched").and_then(Value::as_u64).unwrap_or(0) as usize;
        let deep = matched > 0 && v.get("deep").and_then(Value::as_bool) == Some(true);
        let total = v.get("total").and_then(Value::as_u64).unwrap_or(0) as usize;
        let elements: Vec<ElementSummary> = v
            .get("items")
            .cloned()
            .and_then(|items| serde_json::from_value(items).ok())
            .unwrap_or_default();
        let end = query.offset.saturating_add(elements.len());
        let suggestions = if matched == 0 {
            self.selector_suggestions(selector).await
        } else {
            Vec::new()
        };
        Ok(ElementList {
            elements,
            matched,
            total,
            next_offset: (end < total).then_some(end),
            suggestions,
            deep,
            selector: selector.to_string(),
        })
    }
}

pub(crate) fn stale(reference: &str) -> BrowserError {
    BrowserError::StaleRef {
        reference: reference.to_string(),
        reason: "points to an element that is no longer in the page".into(),
    }
}

fn selector_error(ex: &Value) -> String {
    clean_selector_message(&exception_text(ex))
}

/// "SyntaxError: Failed to execute 'querySelectorAll' on 'Document': 'a[' is not a valid
/// selector." → "'a[' is not a valid selector".
fn clean_selector_message(message: &str) -> String {
    let m = message.rsplit(": ").next().unwrap_or(message);
    truncate(m.trim().trim_end_matches('.'), 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_refs_and_selectors() {
        assert_eq!(
            ElementTarget::parse("e12"),
            ElementTarget::Ref("e12".into())
        );
        assert_eq!(
            ElementTarget::parse("ref=e3"),
            ElementTarget::Ref("e3".into())
        );
        assert_eq!(
            ElementTarget::parse("em"),
            ElementTarget::Selector("em".into())
        );
        assert_eq!(
            ElementTarget::parse(" #a "),
            ElementTarget::Selector("#a".into())
        );
    }

    #[test]
    fn selector_errors_are_short() {
        assert_eq!(
            clean_selector_message(
                "SyntaxError: Failed to execute 'querySelectorAll' on 'Document': 'a[' is not a valid selector."
            ),
            "'a[' is not a valid selector"
        );
    }

    #[test]
    fn summaries_render_on_one_line() {
        let e = ElementSummary {
            tag: "button".into(),
            id: Some("save".into()),
            classes: vec!["primary".into()],
            role: Some("button".into()),
            text: "Save".into(),
            attributes: vec![("disabled".into(), String::new())],
            visible: true,
            rect: [1, 2, 3, 4],
            selector: "#save".into(),
        };
        assert_eq!(
            e.to_line(),
            "button#save.primary role=button \"Save\" [disabled] @1,2 3x4 → #save"
        );
        let plain = ElementSummary { role: None, ..e };
        assert!(plain.to_line().starts_with("button#save.primary \"Save\""));
    }
}
