//! Why a style applies or not: an element's computed values, the declarations that set each
//! property with the one that won marked and why each other lost (specificity, order,
//! `!important`, the style attribute, inheritance, an invalid value), and the element's matched
//! rules with their stylesheet `file:line`, mapped to the original (Sass, CSS-in-JS) when the
//! sheet has a source map.
//!
//! Chrome says what matched (`CSS.getMatchedStylesForNode`: rules in ascending cascade order,
//! with specificity); the winner of each property is worked out here as the DevTools Styles
//! pane does. The CSS agent runs only for the call: starting it announces every stylesheet
//! (the only way to learn their URLs), and it costs the page while it runs.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::css::EventStyleSheetAdded;
use chromiumoxide::cdp::browser_protocol::target::EventReceivedMessageFromTarget;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::page::dom::{ElementTarget, Resolved};
use crate::records::refs::Realm;
use crate::records::sourcemap::SourceMap;
use crate::tab::cdp::Raw;
use crate::tab::sourcemaps;
use crate::tab::targets::Tab;
use crate::text::{short_url, truncate};

/// Default and largest number of matched rules listed.
pub const DEFAULT_RULES: usize = 10;
pub const MAX_RULES: usize = 50;
/// Properties explained when none are asked, and at most when asked.
const DEFAULT_PROPERTIES: usize = 12;
const MAX_PROPERTIES: usize = 30;
/// Declarations listed per property.
const MAX_DECLARATIONS: usize = 8;
/// How long the source maps of the matched sheets may take to load, all together.
const MAP_WAIT: Duration = Duration::from_secs(5);

/// Which element, and which of its properties to explain.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct CssQuery {
    /// A snapshot ref (e12) or a CSS selector.
    pub element: String,
    /// Properties to explain, e.g. ["color", "padding"] (default: those its rules set or it
    /// inherits).
    pub properties: Vec<String>,
    /// Also its pseudo-elements' rules (::before, ::after, ::marker).
    pub pseudo: bool,
    /// At most this many matched rules (default 10, at most 50).
    pub max_rules: Option<usize>,
}

/// The answer to a [`CssQuery`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CssReport {
    /// `button#save.btn.primary`
    pub element: String,
    pub properties: Vec<CssProperty>,
    /// The element's author rules and style attribute, highest precedence first (then its
    /// pseudo-elements' rules when asked).
    pub rules: Vec<MatchedRule>,
    /// Author rules left out (maxRules).
    #[serde(skip_serializing_if = "is_zero")]
    pub more_rules: usize,
    /// Browser default rules that match too.
    pub user_agent_rules: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One property: its computed value and the declarations that compete for it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CssProperty {
    pub name: String,
    /// The computed value.
    pub value: String,
    /// The applied declaration(s) first, then the others by precedence.
    pub declarations: Vec<CssDeclaration>,
    /// Declarations left out.
    #[serde(skip_serializing_if = "is_zero")]
    pub more: usize,
}

/// A declaration that sets (part of) a property.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CssDeclaration {
    /// It gives the computed value (or part of it, for a shorthand).
    pub applied: bool,
    /// The rule's matching selector(s), `element.style` or `attributes`.
    pub rule: String,
    /// `color: red`
    pub declaration: String,
    /// `file:line`, the original source when a source map has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// [ids, classes, types]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specificity: Option<[u32; 3]>,
    /// From the browser's default stylesheet.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub user_agent: bool,
    /// The ancestor it is declared on, when not the element itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inherited_from: Option<String>,
    /// Why it won or lost.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub why: String,
}

/// A rule that matches the element.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchedRule {
    pub selector: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specificity: Option<[u32; 3]>,
    /// The properties it declares.
    pub properties: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn spec_text(s: [u32; 3]) -> String {
    format!("{},{},{}", s[0], s[1], s[2])
}

/// `  /pages/a.css:4 (0,1,0)`
fn where_text(source: &Option<String>, specificity: Option<[u32; 3]>, user_agent: bool) -> String {
    match (source, specificity, user_agent) {
        (_, _, true) => "  user-agent".into(),
        (s, sp, _) => {
            let s = s.as_deref().map(|s| format!("  {s}")).unwrap_or_default();
            let sp = sp
                .map(|sp| format!(" ({})", spec_text(sp)))
                .unwrap_or_default();
            format!("{s}{sp}")
        }
    }
}

impl CssDeclaration {
    fn to_line(&self) -> String {
        let mark = if self.applied { '✓' } else { '✗' };
        let at = where_text(&self.source, self.specificity, self.user_agent);
        let why = if self.why.is_empty() {
            String::new()
        } else {
            format!(" — {}", self.why)
        };
        format!("{mark} {} {{ {} }}{at}{why}", self.rule, self.declaration)
    }
}

impl MatchedRule {
    fn to_line(&self) -> String {
        let props = truncate(&self.properties.join(", "), 80);
        let at = where_text(&self.source, self.specificity, false);
        format!("{} {{ {props} }}{at}", self.selector)
    }
}

impl CssReport {
    pub fn to_text(&self) -> String {
        let mut out = self.element.clone();
        for p in &self.properties {
            let _ = write!(out, "\n{}: {}", p.name, p.value);
            if !p.declarations.iter().any(|d| d.applied) {
                out.push_str("  (no declaration applies: the initial or default value)");
            }
            for d in &p.declarations {
                let _ = write!(out, "\n  {}", d.to_line());
            }
            if p.more > 0 {
                let _ = write!(out, "\n  … {} more", p.more);
            }
        }
        out.push_str("\nrules, highest precedence first:");
        if self.rules.is_empty() {
            out.push_str(" no author rule matches");
        }
        for r in &self.rules {
            let _ = write!(out, "\n  {}", r.to_line());
        }
        if self.more_rules > 0 {
            let _ = write!(out, "\n  … {} more (raise maxRules)", self.more_rules);
        }
        if self.user_agent_rules > 0 {
            let _ = write!(out, "\n  + {} user-agent rules", self.user_agent_rules);
        }
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

/// A position in a stylesheet's text (0-based).
#[derive(Debug, Clone)]
struct Loc {
    sheet: String,
    line: u32,
    column: u32,
}

/// What a `CSS.styleSheetAdded` header says about a sheet.
#[derive(Debug, Clone)]
struct Sheet {
    url: String,
    start_line: u32,
    map_url: Option<String>,
    frame: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Inline,
    Attributes,
    Rule,
    UserAgent,
}

/// One declaration: `name: value` in a rule or style attribute.
#[derive(Debug, Clone)]
struct Decl {
    name: String,
    value: String,
    important: bool,
    /// Chrome parsed it (`parsedOk`): an invalid value or unknown name is ignored.
    valid: bool,
    /// Commented out.
    disabled: bool,
    loc: Option<Loc>,
    /// The longhands it sets (itself for a longhand).
    longhands: Vec<String>,
}

impl Decl {
    fn text(&self) -> String {
        let value = if self.value.is_empty() {
            "(shorthand)"
        } else {
            &self.value
        };
        let bang = if self.important { " !important" } else { "" };
        format!("{}: {}{bang}", self.name, truncate(value, 80))
    }

    fn sets(&self, names: &[String]) -> bool {
        names.contains(&self.name) || self.longhands.iter().any(|l| names.contains(l))
    }
}

/// A rule or style attribute on the element (owner 0) or on its k-th ancestor (owner k).
#[derive(Debug, Clone)]
struct Block {
    kind: Kind,
    selector: String,
    specificity: Option<[u32; 3]>,
    loc: Option<Loc>,
    owner: usize,
    decls: Vec<Decl>,
}

/// A declaration: (block index, declaration index).
type DeclRef = (usize, usize);

/// What matched the element and its ancestors, in ascending precedence per owner.
#[derive(Debug, Default)]
struct Cascade {
    blocks: Vec<Block>,
    ancestors: usize,
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn loc_of(range: &Value, sheet: Option<&str>) -> Option<Loc> {
    let line = range.get("startLine")?.as_u64()?;
    let column = range
        .get("startColumn")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Some(Loc {
        sheet: sheet?.to_string(),
        line: line as u32,
        column: column as u32,
    })
}

/// The declarations of a CDP `CSSStyle`. Chrome lists those written in the source (with a
/// range), then the longhands in effect (without one); user-agent and attribute styles have no
/// ranges, so there each entry is a declaration.
fn declarations(style: &Value) -> Vec<Decl> {
    let props = arr(&style["cssProperties"]);
    let ranged = props.iter().any(|p| p.get("range").is_some());
    let sheet = style["styleSheetId"].as_str();
    let written = props.iter().filter(|p| !ranged || p.get("range").is_some());
    written
        .map(|p| {
            let name = str_of(&p["name"]);
            let important = p["important"].as_bool() == Some(true);
            let value = str_of(&p["value"]);
            let value = match value.strip_suffix("!important") {
                Some(v) if important => v.trim_end().to_string(),
                _ => value,
            };
            let mut longhands: Vec<String> = arr(&p["longhandProperties"])
                .iter()
                .map(|l| str_of(&l["name"]))
                .collect();
            if longhands.is_empty() {
                longhands.push(name.clone());
            }
            Decl {
                name,
                value,
                important,
                valid: p["parsedOk"].as_bool() != Some(false),
                disabled: p["disabled"].as_bool() == Some(true),
                loc: loc_of(&p["range"], sheet),
                longhands,
            }
        })
        .collect()
}

/// A CDP `RuleMatch` as a block: the selectors that matched, the highest specificity.
fn rule_block(m: &Value, owner: usize) -> Block {
    let rule = &m["rule"];
    let all = arr(&rule["selectorList"]["selectors"]);
    let index = |i: &Value| all.get(usize::try_from(i.as_u64()?).ok()?);
    let mut picked: Vec<&Value> = arr(&m["matchingSelectors"])
        .iter()
        .filter_map(index)
        .collect();
    if picked.is_empty() {
        picked = all.iter().collect();
    }
    let texts: Vec<String> = picked.iter().map(|s| str_of(&s["text"])).collect();
    let specificity = picked.iter().map(|s| {
        let n = |k: &str| s["specificity"][k].as_u64().map(|n| n as u32);
        match (n("a"), n("b"), n("c")) {
            (Some(a), Some(b), Some(c)) => [a, b, c],
            _ => specificity_of(s["text"].as_str().unwrap_or("")),
        }
    });
    let sheet = rule["styleSheetId"].as_str();
    let first = picked.first().and_then(|s| loc_of(&s["range"], sheet));
    let user_agent = rule["origin"].as_str() == Some("user-agent");
    Block {
        kind: if user_agent {
            Kind::UserAgent
        } else {
            Kind::Rule
        },
        selector: texts.join(", "),
        specificity: specificity.max(),
        loc: first.or_else(|| loc_of(&rule["style"]["range"], sheet)),
        owner,
        decls: declarations(&rule["style"]),
    }
}

/// An element's blocks in ascending precedence: user-agent rules, presentational attributes,
/// author rules (Chrome's order: layers, specificity, source order), the style attribute.
fn blocks_of(owner: usize, inline: &Value, attributes: &Value, rules: &Value) -> Vec<Block> {
    let rules: Vec<Block> = arr(rules).iter().map(|m| rule_block(m, owner)).collect();
    let ua = rules
        .iter()
        .take_while(|b| b.kind == Kind::UserAgent)
        .count();
    // The style attribute and presentational attributes are in no file.
    let plain = |kind, selector: &str, style: &Value| Block {
        kind,
        selector: selector.to_string(),
        specificity: None,
        loc: None,
        owner,
        decls: declarations(style)
            .into_iter()
            .map(|d| Decl { loc: None, ..d })
            .collect(),
    };
    let mut out: Vec<Block> = rules[..ua].to_vec();
    if attributes.is_object() {
        out.push(plain(Kind::Attributes, "attributes", attributes));
    }
    out.extend_from_slice(&rules[ua..]);
    if inline.is_object() {
        out.push(plain(Kind::Inline, "element.style", inline));
    }
    out.retain(|b| !b.decls.is_empty());
    out
}

impl Cascade {
    fn from_matched(m: &Value) -> Self {
        let (inline, attributes) = (&m["inlineStyle"], &m["attributesStyle"]);
        let mut blocks = blocks_of(0, inline, attributes, &m["matchedCSSRules"]);
        let inherited = arr(&m["inherited"]);
        for (k, e) in inherited.iter().enumerate() {
            blocks.extend(blocks_of(
                k + 1,
                &e["inlineStyle"],
                &Value::Null,
                &e["matchedCSSRules"],
            ));
        }
        Self {
            blocks,
            ancestors: inherited.len(),
        }
    }

    fn decl(&self, r: DeclRef) -> &Decl {
        &self.blocks[r.0].decls[r.1]
    }

    /// Precedence within one owner: `!important` first (a user-agent one above an author
    /// one), then cascade order.
    fn key(&self, r: DeclRef) -> (bool, bool, usize, usize) {
        let important = self.decl(r).important;
        (
            important,
            important && self.blocks[r.0].kind == Kind::UserAgent,
            r.0,
            r.1,
        )
    }

    fn refs(&self) -> impl Iterator<Item = DeclRef> + '_ {
        let per_block = |(b, block): (usize, &Block)| (0..block.decls.len()).map(move |d| (b, d));
        self.blocks.iter().enumerate().flat_map(per_block)
    }

    /// The declaration that gives a longhand (`slot`: its names) its value: the element's
    /// own best, else for an inherited property the closest ancestor's.
    fn winner(&self, slot: &[String], inherited: bool) -> Option<DeclRef> {
        let last = if inherited { self.ancestors } else { 0 };
        (0..=last).find_map(|owner| {
            let competes = |r: &DeclRef| {
                let d = self.decl(*r);
                self.blocks[r.0].owner == owner && d.valid && !d.disabled && d.sets(slot)
            };
            self.refs().filter(competes).max_by_key(|r| self.key(*r))
        })
    }

    /// What an agent most likely asks about: what the page's rules set on the element
    /// (highest precedence first), then inherited properties its ancestors' rules set.
    fn default_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for owner in 0..=self.ancestors {
            let blocks = self.blocks.iter().rev().filter(|b| b.owner == owner);
            for b in blocks.filter(|b| b.kind != Kind::UserAgent) {
                for d in &b.decls {
                    if (owner == 0 || inherits(&d.name)) && !out.contains(&d.name) {
                        out.push(d.name.clone());
                    }
                }
            }
        }
        out
    }
}

/// Whether a property passes from parent to child by default.
fn inherits(name: &str) -> bool {
    const PREFIXES: &str = "-- font list-style text-emphasis -webkit-text-stroke fill stroke \
        marker white-space text-wrap";
    const NAMES: &str = "color line-height letter-spacing word-spacing text-align \
        text-align-last text-indent text-transform text-shadow text-rendering text-orientation \
        text-underline-position text-underline-offset text-decoration-skip-ink text-size-adjust \
        -webkit-text-fill-color word-break overflow-wrap word-wrap hyphens tab-size line-break \
        direction writing-mode visibility cursor pointer-events quotes orphans widows \
        caption-side border-collapse border-spacing empty-cells color-scheme caret-color \
        accent-color image-rendering paint-order text-anchor clip-rule shape-rendering \
        color-interpolation dominant-baseline forced-color-adjust print-color-adjust \
        ruby-position math-depth math-style";
    NAMES.split_whitespace().any(|n| n == name)
        || PREFIXES.split_whitespace().any(|p| name.starts_with(p))
}

/// The other name of the same value in a horizontal writing mode: `padding-inline-start` ↔
/// `padding-left` (left to right), `inset-block-start` ↔ `top`.
fn counterpart(name: &str, horizontal: bool, ltr: bool) -> Option<String> {
    if !horizontal || name.ends_with("-radius") {
        return None;
    }
    let (start, end) = if ltr {
        ("left", "right")
    } else {
        ("right", "left")
    };
    let sides = [("top", "block-start"), ("bottom", "block-end")];
    for (physical, logical) in sides
        .into_iter()
        .chain([(start, "inline-start"), (end, "inline-end")])
    {
        if name == physical {
            return Some(format!("inset-{logical}"));
        }
        if name.strip_prefix("inset-") == Some(logical) {
            return Some(physical.to_string());
        }
        for family in ["margin-", "padding-", "border-"] {
            let Some(rest) = name.strip_prefix(family) else {
                continue;
            };
            for (from, to) in [(physical, logical), (logical, physical)] {
                if let Some(tail) = rest.strip_prefix(from)
                    && (tail.is_empty() || tail.starts_with('-'))
                {
                    return Some(format!("{family}{to}{tail}"));
                }
            }
        }
    }
    None
}

/// Specificity from a selector's text, for a Chrome that does not give it: ids; classes,
/// attributes and pseudo-classes; types and pseudo-elements. `:is()`, `:not()`, `:has()`
/// count their most specific argument, `:where()` nothing.
fn specificity_of(selector: &str) -> [u32; 3] {
    let c: Vec<char> = selector.chars().collect();
    let word = |mut i: usize| {
        while i < c.len()
            && (c[i].is_alphanumeric() || matches!(c[i], '-' | '_') || !c[i].is_ascii())
        {
            i += 1;
        }
        i
    };
    let (mut s, mut i) = ([0u32; 3], 0);
    while i < c.len() {
        let start = i;
        i = word(i + 1);
        match c[start] {
            '#' => s[0] += 1,
            '.' => s[1] += 1,
            '[' => {
                s[1] += 1;
                i = c[start..]
                    .iter()
                    .position(|&ch| ch == ']')
                    .map_or(c.len(), |p| start + p + 1);
            }
            ':' => {
                let element = c.get(start + 1) == Some(&':');
                let end = word(if element { start + 2 } else { i });
                let name: String = c[start..end].iter().filter(|ch| **ch != ':').collect();
                i = end;
                let mut arg = String::new();
                if c.get(i) == Some(&'(') {
                    let mut depth = 0;
                    for &ch in &c[i..] {
                        i += 1;
                        depth += i32::from(ch == '(') - i32::from(ch == ')');
                        if depth == 0 {
                            break;
                        }
                        arg.push(ch);
                    }
                }
                let arg = arg.strip_prefix('(').unwrap_or(&arg);
                match name.to_ascii_lowercase().as_str() {
                    _ if element => s[2] += 1,
                    "before" | "after" | "first-line" | "first-letter" => s[2] += 1,
                    "is" | "not" | "has" | "matches" => {
                        let best = arg.split(',').map(specificity_of).max().unwrap_or_default();
                        (0..3).for_each(|k| s[k] += best[k]);
                    }
                    "where" => {}
                    _ => s[1] += 1,
                }
            }
            ch if ch.is_alphabetic() || ch == '_' || ch == '-' => s[2] += 1,
            _ => i = start + 1,
        }
    }
    s
}

/// Stylesheet headers and loaded maps: the `file:line` of a position.
struct Places {
    sheets: HashMap<String, Sheet>,
    maps: HashMap<String, SourceMap>,
    page_url: String,
}

impl Places {
    fn place(&self, loc: &Loc) -> Option<String> {
        if let Some(map) = self.maps.get(&loc.sheet)
            && let Some(o) = map.original(loc.line, loc.column)
            && let Some(src) = map.sources.get(o.source)
        {
            return Some(format!("{}:{}", short_url(src, &self.page_url), o.line + 1));
        }
        let sheet = self.sheets.get(&loc.sheet)?;
        let url = match sheet.url.as_str() {
            "" => "constructed stylesheet".to_string(),
            url => short_url(url, &self.page_url),
        };
        Some(format!("{url}:{}", sheet.start_line + loc.line + 1))
    }
}

/// Facts from the page: labels, the properties' longhands and computed values.
const FACTS_FN: &str = r#"
function(names) {
  const label = (e) => {
    let s = e.tagName.toLowerCase();
    if (e.id) s += '#' + e.id;
    for (const c of Array.from(e.classList || []).slice(0, 3)) s += '.' + c;
    return s;
  };
  // The flat tree, as Chrome's inheritance walks it.
  const up = (e) => e.assignedSlot || e.parentElement || (e.parentNode && e.parentNode.host) || null;
  const ancestors = [];
  for (let p = up(this); p && ancestors.length < 64; p = up(p)) ancestors.push(label(p));
  const cs = getComputedStyle(this);
  const scratch = document.createElement('div').style;
  const props = names.map((name) => {
    let longhands = [name];
    if (!name.startsWith('--')) {
      scratch.cssText = '';
      scratch.setProperty(name, 'inherit');
      longhands = Array.from(scratch);
    }
    return { name, longhands, value: cs.getPropertyValue(name).trim() };
  });
  const unknown = props.some((p) => !p.longhands.length);
  return {
    label: label(this), ancestors, props, known: unknown ? Array.from(cs) : [],
    horizontal: cs.writingMode === 'horizontal-tb', ltr: cs.direction !== 'rtl',
  };
}
"#;

impl Tab {
    /// Why an element looks the way it does: for each property its computed value and the
    /// declarations that set it, the winner marked and why each other lost; its matched rules
    /// with `file:line` (source-mapped when the sheet has a map).
    pub async fn css(&self, query: &CssQuery) -> Result<CssReport> {
        self.guard_running("css")?;
        let target = query.element.trim();
        if target.is_empty() {
            return Err(BrowserError::InvalidInput(
                "give the element: a snapshot ref (e12) or a CSS selector such as `#save`".into(),
            ));
        }
        let mut notes = Vec::new();
        let mut asked: Vec<String> = Vec::new();
        for p in &query.properties {
            let p = p.trim().trim_end_matches(':');
            let p = if p.starts_with("--") {
                p.to_string()
            } else {
                p.to_ascii_lowercase()
            };
            if !p.is_empty() && !asked.contains(&p) {
                asked.push(p);
            }
        }
        if asked.len() > MAX_PROPERTIES {
            notes.push(format!(
                "only the first {MAX_PROPERTIES} properties are explained"
            ));
            asked.truncate(MAX_PROPERTIES);
        }
        let el = self.resolve(&ElementTarget::parse(target)).await?;
        if el.matches > 1 {
            let n = el.matches;
            notes.push(format!(
                "`{target}` matches {n} elements; this is the first visible one"
            ));
        }
        let (matched, sheets) = self.matched_styles(&el).await?;
        let cascade = Cascade::from_matched(&matched);
        let mut names = asked.clone();
        if names.is_empty() {
            names = cascade.default_names();
            if names.len() > DEFAULT_PROPERTIES {
                let more = names.len() - DEFAULT_PROPERTIES;
                notes.push(format!(
                    "{more} more properties set by the page; ask with `properties`"
                ));
                names.truncate(DEFAULT_PROPERTIES);
            }
        }
        let facts = self.call_el(&el, FACTS_FN, json!([names])).await?;
        let props = arr(&facts["props"]);
        if let Some(bad) = props.iter().find(|p| arr(&p["longhands"]).is_empty()) {
            let name = str_of(&bad["name"]);
            let known: Vec<String> = arr(&facts["known"]).iter().map(str_of).collect();
            let close = devlens_core::suggest::closest(&name, known.iter().map(String::as_str), 3);
            let hint = match close.is_empty() {
                true => String::new(),
                false => format!(" (did you mean {}?)", close.join(", ")),
            };
            return Err(BrowserError::InvalidInput(format!(
                "`{name}` is not a CSS property this browser knows{hint}; give names such as \
                 `color`, `padding` or a custom property `--name`"
            )));
        }

        let max_rules = query.max_rules.unwrap_or(DEFAULT_RULES).clamp(1, MAX_RULES);
        let own: Vec<&Block> = cascade
            .blocks
            .iter()
            .filter(|b| b.owner == 0)
            .rev()
            .collect();
        // Pseudo-elements' rules name them in their selectors (`.note::before`).
        let pseudo = arr(&matched["pseudoElements"])
            .iter()
            .filter(|_| query.pseudo);
        let pseudo = pseudo.flat_map(|p| arr(&p["matches"]).iter().rev());
        let pseudo = pseudo.map(|m| rule_block(m, 0));
        let pseudo: Vec<Block> = pseudo.filter(|b| b.kind != Kind::UserAgent).collect();
        let listed = own.iter().copied().filter(|b| b.kind != Kind::UserAgent);
        let listed: Vec<&Block> = listed.chain(&pseudo).collect();
        let all = cascade.blocks.iter().chain(&pseudo);
        let places = self.places(sheets, all, &mut notes).await;
        let view = View {
            c: &cascade,
            places: &places,
            ancestors: arr(&facts["ancestors"]).iter().map(str_of).collect(),
            axis: (facts["horizontal"] != false, facts["ltr"] != false),
        };
        let properties = props.iter().map(|p| view.property(p, &asked)).collect();
        let rule = |b: &Block| MatchedRule {
            selector: b.selector.clone(),
            source: b.loc.as_ref().and_then(|l| places.place(l)),
            specificity: b.specificity,
            properties: b.decls.iter().map(|d| d.name.clone()).collect(),
        };
        Ok(CssReport {
            element: str_of(&facts["label"]),
            properties,
            rules: listed.iter().take(max_rules).map(|b| rule(b)).collect(),
            more_rules: listed.len().saturating_sub(max_rules),
            user_agent_rules: own.iter().filter(|b| b.kind == Kind::UserAgent).count(),
            notes,
        })
    }

    /// `CSS.getMatchedStylesForNode` for an element, and the stylesheets its session
    /// announced when the CSS agent started.
    async fn matched_styles(&self, el: &Resolved) -> Result<(Value, HashMap<String, Sheet>)> {
        let realm = &el.realm;
        let call = |method, params| self.call_in(realm, Raw::new(method, params));
        // Started afresh, the agent announces every sheet again.
        let _ = call("CSS.disable", json!({})).await;
        call("DOM.enable", json!({})).await?;
        call("DOM.getDocument", json!({ "depth": 0 })).await?;
        let node = call("DOM.requestNode", json!({ "objectId": el.object_id })).await?;
        let Some(node_id) = node["nodeId"].as_i64().filter(|n| *n > 0) else {
            return Err(BrowserError::InvalidInput(
                "the element left the page; ask again".into(),
            ));
        };
        let mut events = self.sheet_events(realm).await?;
        let matched = match call("CSS.enable", json!({})).await {
            Ok(_) => call("CSS.getMatchedStylesForNode", json!({ "nodeId": node_id })).await,
            Err(e) => Err(e),
        };
        // The announcements come before the answer to `CSS.enable`.
        let mut sheets = HashMap::new();
        while let Some(Some(h)) = events.next().now_or_never() {
            let Some(id) = h["styleSheetId"].as_str() else {
                continue;
            };
            let sheet = Sheet {
                url: str_of(&h["sourceURL"]),
                start_line: h["startLine"].as_f64().unwrap_or(0.0) as u32,
                map_url: h["sourceMapURL"]
                    .as_str()
                    .filter(|u| !u.is_empty())
                    .map(str::to_string),
                frame: str_of(&h["frameId"]),
            };
            sheets.insert(id.to_string(), sheet);
        }
        let _ = call("CSS.disable", json!({})).await;
        Ok((matched?, sheets))
    }

    async fn sheet_events(&self, realm: &Realm) -> Result<BoxStream<'static, Value>> {
        let err = |e| self.map_err("CSS.enable", e);
        let page = self.page();
        Ok(match realm {
            Realm::Page => {
                let events = page
                    .event_listener::<EventStyleSheetAdded>()
                    .await
                    .map_err(err)?;
                events
                    .map(|e| serde_json::to_value(&e.header).unwrap_or_default())
                    .boxed()
            }
            // A cross-site iframe's events come as messages of its tunnelled session.
            Realm::Remote { .. } => {
                let events = page
                    .event_listener::<EventReceivedMessageFromTarget>()
                    .await;
                let header = |e: std::sync::Arc<EventReceivedMessageFromTarget>| async move {
                    let v: Value = serde_json::from_str(&e.message).ok()?;
                    let added = v["method"].as_str() == Some("CSS.styleSheetAdded");
                    added.then(|| v["params"]["header"].clone())
                };
                events.map_err(err)?.filter_map(header).boxed()
            }
        })
    }

    /// Where the blocks' sheets are, with the source maps of those that have one (loaded
    /// within [`MAP_WAIT`]; a failure becomes a note).
    async fn places<'a>(
        &self,
        mut sheets: HashMap<String, Sheet>,
        blocks: impl Iterator<Item = &'a Block>,
        notes: &mut Vec<String>,
    ) -> Places {
        let page_url = self.url();
        let mut used: Vec<&str> = Vec::new();
        for b in blocks {
            let locs = b.decls.iter().filter_map(|d| d.loc.as_ref()).chain(&b.loc);
            used.extend(locs.map(|l| l.sheet.as_str()));
        }
        sheets.retain(|id, _| used.contains(&id.as_str()));
        if used.iter().any(|id| !sheets.contains_key(*id)) {
            notes.push("a stylesheet did not say its URL; its rules show no source".into());
        }
        let mut maps = HashMap::new();
        let loads = async {
            for (id, sheet) in &sheets {
                let Some(map_url) = &sheet.map_url else {
                    continue;
                };
                let loaded = sourcemaps::load(self.page(), Some(&sheet.frame), &sheet.url, map_url);
                match loaded.await {
                    Ok(map) => {
                        maps.insert(id.clone(), map);
                    }
                    Err(e) => notes.push(format!(
                        "{}: source map not loaded ({}); showing CSS lines",
                        short_url(&sheet.url, &page_url),
                        truncate(&e, 160)
                    )),
                }
            }
        };
        if tokio::time::timeout(MAP_WAIT, loads).await.is_err() {
            notes.push("source maps took too long to load; showing CSS lines".into());
        }
        Places {
            sheets,
            maps,
            page_url,
        }
    }
}

/// The cascade seen from the element: explains one property at a time.
struct View<'a> {
    c: &'a Cascade,
    places: &'a Places,
    ancestors: Vec<String>,
    /// Horizontal writing mode, left to right.
    axis: (bool, bool),
}

impl View<'_> {
    fn ancestor(&self, owner: usize) -> String {
        let known = self.ancestors.get(owner.saturating_sub(1)).cloned();
        known.unwrap_or_else(|| format!("ancestor {owner}"))
    }

    fn place(&self, r: DeclRef) -> Option<String> {
        let loc = self
            .c
            .decl(r)
            .loc
            .as_ref()
            .or(self.c.blocks[r.0].loc.as_ref());
        loc.and_then(|l| self.places.place(l))
    }

    /// One property from the page's facts (`{name, longhands, value}`): its declarations,
    /// winners first, each with why it won or lost.
    fn property(&self, fact: &Value, asked: &[String]) -> CssProperty {
        let c = self.c;
        let name = str_of(&fact["name"]);
        let longhands: Vec<String> = arr(&fact["longhands"]).iter().map(str_of).collect();
        // Each longhand with the names that share its value and the declaration that won it.
        let slots: Vec<(String, Vec<String>, Option<DeclRef>)> = longhands
            .iter()
            .map(|l| {
                let mut slot = vec![l.clone()];
                slot.extend(counterpart(l, self.axis.0, self.axis.1));
                let won = c.winner(&slot, inherits(l));
                (l.clone(), slot, won)
            })
            .collect();
        let inherited = longhands.iter().any(|l| inherits(l));
        let mut names: Vec<String> = slots.iter().flat_map(|s| s.1.clone()).collect();
        names.push(name.clone());
        let explicit = asked.contains(&name);
        let shown = |r: &DeclRef| {
            let b = &c.blocks[r.0];
            let ancestor_ok = inherited || (explicit && b.kind != Kind::UserAgent);
            c.decl(*r).sets(&names) && (b.owner == 0 || ancestor_ok)
        };
        let won = |r: DeclRef| -> Vec<String> {
            slots
                .iter()
                .filter(|s| s.2 == Some(r))
                .map(|s| s.0.clone())
                .collect()
        };
        let mut refs: Vec<DeclRef> = c.refs().filter(shown).collect();
        refs.sort_by_key(|r| {
            (
                won(*r).is_empty(),
                c.blocks[r.0].owner,
                std::cmp::Reverse(c.key(*r)),
            )
        });
        // A user-agent rule's longhands make one line; one losing user-agent rule is enough.
        let (mut groups, mut more): (Vec<Vec<DeclRef>>, usize) = (Vec::new(), 0);
        for r in refs {
            let ua = |r: DeclRef| c.blocks[r.0].kind == Kind::UserAgent;
            if let Some(g) = groups.iter_mut().find(|g| ua(r) && g[0].0 == r.0) {
                g.push(r);
            } else if groups.len() >= MAX_DECLARATIONS
                || ua(r)
                    && won(r).is_empty()
                    && groups.iter().any(|g| ua(g[0]) && won(g[0]).is_empty())
            {
                more += 1;
            } else {
                groups.push(vec![r]);
            }
        }
        let declarations = groups.iter().map(|g| {
            let (r, b, d) = (g[0], &c.blocks[g[0].0], c.decl(g[0]));
            let won: Vec<String> = g.iter().flat_map(|r| won(*r)).collect();
            let why = if won.is_empty() {
                // The declaration it competes with: the winner of a longhand it sets.
                let rival = slots.iter().find(|s| d.sets(&s.1) && s.2.is_some());
                let rival = rival.or_else(|| slots.iter().find(|s| s.2.is_some()));
                self.why_lost(r, rival.and_then(|s| s.2), &name, inherited)
            } else {
                let mut why = Vec::new();
                if d.important {
                    why.push("!important".to_string());
                }
                match b.kind {
                    Kind::Inline => why.push("inline style".into()),
                    Kind::UserAgent => why.push("browser default".into()),
                    _ => {}
                }
                if b.owner > 0 {
                    why.push(format!("inherited from {}", self.ancestor(b.owner)));
                }
                if won.len() < longhands.len() {
                    why.push(format!("for {}", truncate(&won.join(", "), 60)));
                }
                why.join("; ")
            };
            let mut in_order = g.clone();
            in_order.sort_unstable();
            let text: Vec<String> = in_order.iter().map(|r| c.decl(*r).text()).collect();
            CssDeclaration {
                applied: !won.is_empty(),
                rule: b.selector.clone(),
                declaration: truncate(&text.join("; "), 100),
                source: self.place(r),
                specificity: b.specificity,
                user_agent: b.kind == Kind::UserAgent,
                inherited_from: (b.owner > 0).then(|| self.ancestor(b.owner)),
                why,
            }
        });
        let declarations = declarations.collect();
        CssProperty {
            name,
            value: str_of(&fact["value"]),
            declarations,
            more,
        }
    }

    fn why_lost(&self, r: DeclRef, rival: Option<DeclRef>, name: &str, inherited: bool) -> String {
        let c = self.c;
        let (b, d) = (&c.blocks[r.0], c.decl(r));
        if d.disabled {
            return "disabled (commented out)".into();
        }
        if !d.valid {
            return format!(
                "invalid value: the browser ignores `{}`",
                truncate(&d.text(), 60)
            );
        }
        if b.owner > 0 && !inherited {
            return format!("not inherited: {name} does not pass from parent to child");
        }
        let Some(w) = rival else { return String::new() };
        let (wb, wd) = (&c.blocks[w.0], c.decl(w));
        // Reasons name files only: `cascade.css:8`.
        let brief = |r: DeclRef| {
            let place = self.place(r).unwrap_or_default();
            place.rsplit('/').next().unwrap_or_default().to_string()
        };
        let at = match brief(w) {
            p if p.is_empty() => String::new(),
            p => format!(" at {p}"),
        };
        let at = if wb.kind == Kind::UserAgent {
            " (user-agent)".into()
        } else {
            at
        };
        let who = format!("`{}`{at}", truncate(&wb.selector, 60));
        if b.owner > 0 && wb.owner == 0 {
            return format!(
                "inherited values lose to any declaration on the element itself: {who}"
            );
        }
        if b.owner > 0 && wb.owner < b.owner {
            return format!("a closer ancestor, {}, sets it", self.ancestor(wb.owner));
        }
        if wd.important && !d.important {
            return format!("loses to !important in {who}");
        }
        if wb.kind == Kind::Inline && b.kind != Kind::Inline {
            return "loses to the inline style (style attribute)".into();
        }
        match (b.kind, wb.kind) {
            (Kind::UserAgent, Kind::UserAgent) => {
                return format!("overridden by a later browser default, `{}`", wb.selector);
            }
            (Kind::UserAgent, _) => return format!("browser default, overridden by {who}"),
            _ => {}
        }
        if w.0 == r.0 {
            return format!("overridden by a later `{}` in the same rule", wd.name);
        }
        match (wb.specificity, b.specificity) {
            (Some(ws), Some(ds)) if ws > ds => {
                format!(
                    "overridden by {who} (specificity {} > {})",
                    spec_text(ws),
                    spec_text(ds)
                )
            }
            (Some(ws), Some(ds)) if ws == ds => {
                let order = match (brief(w), brief(r)) {
                    (wp, dp) if wp.is_empty() || dp.is_empty() => String::new(),
                    (wp, dp) => match (wp.rsplit_once(':'), dp.rsplit_once(':')) {
                        (Some((wf, _)), Some((df, line))) if wf == df => {
                            format!(" ({wp} after :{line})")
                        }
                        _ => format!(" ({wp} after {dp})"),
                    },
                };
                let sel = truncate(&wb.selector, 60);
                format!("overridden by `{sel}`, a later rule of equal specificity{order}")
            }
            (Some(_), Some(_)) => format!(
                "overridden by {who}: later in the cascade despite lower specificity (cascade \
                 layer, @scope or stylesheet origin)"
            ),
            _ => format!("overridden by {who}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specificity_from_selector_text() {
        assert_eq!(specificity_of("#a .b > c:hover::before"), [1, 2, 2]);
        assert_eq!(specificity_of(".btn.primary"), [0, 2, 0]);
        assert_eq!(specificity_of(":where(#x) .y"), [0, 1, 0]);
        assert_eq!(specificity_of(":not(#a, .b) p"), [1, 0, 1]);
        assert_eq!(specificity_of(":is(:not(.a), b)"), [0, 1, 0]);
        assert_eq!(specificity_of("a[href^='x']:after"), [0, 1, 2]);
        assert_eq!(specificity_of("*"), [0, 0, 0]);
    }

    #[test]
    fn logical_names_meet_their_physical_ones() {
        let ltr = |n| counterpart(n, true, true);
        assert_eq!(ltr("padding-left").as_deref(), Some("padding-inline-start"));
        assert_eq!(
            counterpart("padding-inline-start", true, false).as_deref(),
            Some("padding-right")
        );
        assert_eq!(
            ltr("border-top-width").as_deref(),
            Some("border-block-start-width")
        );
        assert_eq!(ltr("left").as_deref(), Some("inset-inline-start"));
        assert_eq!(ltr("inset-block-end").as_deref(), Some("bottom"));
        assert_eq!(ltr("border-top-left-radius"), None);
        assert_eq!(counterpart("padding-left", false, true), None);
        assert_eq!(ltr("color"), None);
    }

    #[test]
    fn the_cascade_picks_winners_and_says_why_others_lost() {
        let prop = |name: &str, value: &str, line: u64| {
            json!([{ "name": name, "value": value, "range": { "startLine": line, "startColumn": 2 } },
                   { "name": name, "value": value }])
        };
        let rule = |sel: &str, b: u64, props: Value| {
            let selector = json!({ "text": sel, "specificity": { "a": 0, "b": b, "c": 0 } });
            json!({ "matchingSelectors": [0], "rule": {
                "selectorList": { "selectors": [selector] }, "origin": "regular",
                "style": { "cssProperties": props } } })
        };
        let padding = json!([{ "name": "padding", "value": "4px", "range": { "startLine": 9 },
            "longhandProperties": [{ "name": "padding-top" }, { "name": "padding-left" }] }]);
        let ua = json!({ "matchingSelectors": [0], "rule": { "origin": "user-agent",
            "selectorList": { "selectors": [{ "text": "button" }] },
            "style": { "cssProperties": [{ "name": "color", "value": "buttontext" }] } } });
        let matched = json!({
            "matchedCSSRules": [ua, rule(".btn", 1, prop("color", "blue", 3)),
                rule(".btn.primary", 2, prop("color", "red", 4)), rule(".x", 1, padding)],
            "inherited": [{ "matchedCSSRules": [rule(".panel", 1, prop("color", "green", 1))] }],
        });
        let c = Cascade::from_matched(&matched);
        assert_eq!(c.default_names(), ["padding", "color"]);
        assert_eq!(
            c.blocks[3].decls[0].longhands,
            ["padding-top", "padding-left"]
        );
        let places = Places {
            sheets: HashMap::new(),
            maps: HashMap::new(),
            page_url: String::new(),
        };
        let view = View {
            c: &c,
            places: &places,
            ancestors: vec!["div.panel".into()],
            axis: (true, true),
        };
        let fact = json!({ "name": "color", "longhands": ["color"], "value": "rgb(255, 0, 0)" });
        let p = view.property(&fact, &[]);
        let lines: Vec<String> = p.declarations.iter().map(CssDeclaration::to_line).collect();
        assert_eq!(lines[0], "✓ .btn.primary { color: red } (0,2,0)");
        assert_eq!(
            lines[1],
            "✗ .btn { color: blue } (0,1,0) — overridden by `.btn.primary` (specificity 0,2,0 > 0,1,0)"
        );
        assert_eq!(
            lines[2],
            "✗ button { color: buttontext }  user-agent — browser default, overridden by `.btn.primary`"
        );
        assert!(
            lines[3].ends_with(
                "— inherited values lose to any declaration on the element itself: `.btn.primary`"
            ),
            "{lines:?}"
        );
        assert_eq!(
            p.declarations[3].inherited_from.as_deref(),
            Some("div.panel")
        );
    }
}
