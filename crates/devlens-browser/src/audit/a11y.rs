//! Accessibility audit with axe-core, the engine Lighthouse and the DevTools use.
//!
//! The pinned `axe.min.js` (vendor/axe-core, MPL-2.0) ships inside the binary. It runs in an
//! isolated world of each frame — the page's own globals stay untouched and a page's
//! Content-Security-Policy cannot block it — once per frame (`iframes: false`), cross-site
//! frames through their own session. The answer keeps what an agent acts on: rules grouped by
//! impact, a few elements per rule with a selector, a snapshot ref it can click or inspect, a
//! short HTML excerpt and what to fix.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::page::dom::ElementTarget;
use crate::records::refs::Realm;
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::truncate;

/// axe-core, vendored (vendor/axe-core: VERSION, LICENSE, refresh script).
const AXE_SOURCE: &str = include_str!("../../../../vendor/axe-core/axe.min.js");

/// Elements shown per rule by default and at most.
const DEFAULT_NODES: usize = 3;
const MAX_NODES: usize = 20;
/// How long an audit of one frame may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// How long to wait for a page that is still loading before auditing what is there.
const LOAD_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct A11yOptions {
    /// Only this element and its descendants: a ref (e12) or CSS selector.
    pub scope: Option<String>,
    /// Only rules with these tags (wcag2a, wcag2aa, wcag21aa, wcag22aa, best-practice, …).
    pub tags: Vec<String>,
    /// Only these rule ids (e.g. image-alt, color-contrast).
    pub rules: Vec<String>,
    /// Skip these rule ids.
    pub exclude: Vec<String>,
    /// Elements listed per rule (default 3, at most 20).
    pub max_nodes: Option<usize>,
}

/// An element that fails a rule.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct A11yNode {
    /// A CSS selector that finds it again (in its frame).
    pub selector: String,
    /// Its snapshot ref, usable by click_element, query_elements and the other tools.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The start of its HTML.
    pub html: String,
    /// What is wrong and how to fix it.
    pub failure: String,
    /// The frame's URL when the element is in an iframe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
}

/// A rule the page breaks.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct A11yViolation {
    /// The axe rule id, e.g. `image-alt`.
    pub id: String,
    /// critical, serious, moderate or minor.
    pub impact: String,
    pub help: String,
    pub help_url: String,
    /// WCAG criteria and levels (wcag2a, wcag111, …) or best-practice.
    pub tags: Vec<String>,
    /// Elements failing it.
    pub count: usize,
    /// The first of them.
    pub nodes: Vec<A11yNode>,
}

/// A rule axe could not decide: a person should look.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct A11yReview {
    pub id: String,
    pub help: String,
    pub count: usize,
}

/// The result of an accessibility audit.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct A11yReport {
    pub url: String,
    /// Violations, most severe first.
    pub violations: Vec<A11yViolation>,
    /// Results that need review (axe's "incomplete").
    pub needs_review: Vec<A11yReview>,
    /// Rules that passed.
    pub passed: usize,
    /// Frames audited (the page counts as one).
    pub frames: usize,
    pub axe_version: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

const IMPACTS: [&str; 4] = ["critical", "serious", "moderate", "minor"];

fn impact_rank(impact: &str) -> usize {
    IMPACTS
        .iter()
        .position(|i| *i == impact)
        .unwrap_or(IMPACTS.len())
}

impl A11yReport {
    pub fn to_text(&self) -> String {
        let elements: usize = self.violations.iter().map(|v| v.count).sum();
        let mut out = if self.violations.is_empty() {
            format!("accessibility of {}: no violations", self.url)
        } else {
            let mut by_impact = Vec::new();
            for impact in IMPACTS {
                let n = self
                    .violations
                    .iter()
                    .filter(|v| v.impact == impact)
                    .count();
                if n > 0 {
                    by_impact.push(format!("{n} {impact}"));
                }
            }
            format!(
                "accessibility of {}: {} rule(s) violated by {elements} element(s) ({})",
                self.url,
                self.violations.len(),
                by_impact.join(", ")
            )
        };
        let _ = write!(out, "; {} passed", self.passed);
        if !self.needs_review.is_empty() {
            let ids: Vec<String> = self
                .needs_review
                .iter()
                .map(|r| format!("{} ({})", r.id, r.count))
                .collect();
            let _ = write!(out, "; need review: {}", ids.join(", "));
        }
        if self.frames > 1 {
            let _ = write!(out, "; {} frames", self.frames);
        }
        let mut impact = "";
        for v in &self.violations {
            if v.impact != impact {
                impact = &v.impact;
                let _ = write!(out, "\n{impact}:");
            }
            let _ = write!(
                out,
                "\n  {} — {} [{}] ×{}",
                v.id,
                v.help,
                v.tags.join(" "),
                v.count
            );
            for n in &v.nodes {
                let reference = n
                    .reference
                    .as_deref()
                    .map(|r| format!("{r} "))
                    .unwrap_or_default();
                let _ = write!(out, "\n    {reference}{}  {}", n.selector, n.html);
                if let Some(frame) = &n.frame {
                    let _ = write!(out, "  (in frame {frame})");
                }
                if !n.failure.is_empty() {
                    let _ = write!(out, "\n      {}", n.failure.replace('\n', " "));
                }
            }
            if v.count > v.nodes.len() {
                let _ = write!(out, "\n    … {} more", v.count - v.nodes.len());
            }
        }
        for n in &self.notes {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

/// Checks the asked tags and rules against axe's own, so a typo is not an empty audit.
const KNOWN_FN: &str = r#"
function(tags, rules) {
  const all = axe.getRules();
  const knownTags = new Set(all.flatMap((r) => r.tags));
  const knownRules = new Set(all.map((r) => r.ruleId));
  return {
    badTags: tags.filter((t) => !knownTags.has(t)),
    badRules: rules.filter((r) => !knownRules.has(r)),
    tags: Array.from(knownTags),
    rules: Array.from(knownRules),
  };
}
"#;

/// Runs axe on `this` (an element) or the document (or a selector within it) and packs the
/// answer small; the failing elements stay in `__devlensAxeNodes` for their refs.
const RUN_FN: &str = r#"
async function(opts) {
  let context = document;
  if (this && this.nodeType === 1) context = this;
  else if (opts.selector) {
    if (!document.querySelector(opts.selector)) return { noMatch: true };
    context = { include: [opts.selector] };
  }
  const o = { resultTypes: ['violations', 'incomplete'], iframes: false, elementRef: true };
  if (opts.rules.length) o.runOnly = { type: 'rule', values: opts.rules };
  else if (opts.tags.length) o.runOnly = { type: 'tag', values: opts.tags };
  if (opts.exclude.length) {
    o.rules = {};
    for (const r of opts.exclude) o.rules[r] = { enabled: false };
  }
  const r = await axe.run(context, o);
  const nodes = [];
  const target = (t) => t.map((p) => (Array.isArray(p) ? p.join(' >>> ') : p)).join(' ');
  const pack = (v, keep) => ({
    id: v.id, impact: v.impact || 'minor', help: v.help, helpUrl: v.helpUrl,
    tags: v.tags.filter((t) => /^wcag|^best-practice$|^section508$|^EN-/.test(t)),
    count: v.nodes.length,
    nodes: keep ? v.nodes.slice(0, opts.maxNodes).map((n) => {
      nodes.push(n.element || null);
      return { selector: target(n.target), html: n.html, failure: n.failureSummary || '' };
    }) : [],
  });
  globalThis.__devlensAxeNodes = nodes;
  return {
    violations: r.violations.map((v) => pack(v, true)),
    incomplete: r.incomplete.map((v) => pack(v, false)),
    passed: r.passes.length,
    version: axe.version,
  };
}
"#;

/// One frame to audit: the session it is reached through and its frame id.
struct AuditFrame {
    realm: Realm,
    frame_id: String,
    url: String,
    top: bool,
}

/// A frame's isolated world with axe loaded.
struct AxeWorld {
    realm: Realm,
    context_id: i64,
}

#[derive(Deserialize)]
struct FrameResult {
    #[serde(default, rename = "noMatch")]
    no_match: bool,
    #[serde(default)]
    violations: Vec<RawRule>,
    #[serde(default)]
    incomplete: Vec<RawRule>,
    #[serde(default)]
    passed: usize,
    #[serde(default)]
    version: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    id: String,
    impact: String,
    help: String,
    #[serde(default)]
    help_url: String,
    #[serde(default)]
    tags: Vec<String>,
    count: usize,
    #[serde(default)]
    nodes: Vec<RawNode>,
}

#[derive(Deserialize)]
struct RawNode {
    selector: String,
    html: String,
    failure: String,
}

impl Tab {
    /// Audits the page's accessibility with axe-core.
    pub async fn audit_accessibility(&self, options: &A11yOptions) -> Result<A11yReport> {
        self.guard_running("an accessibility audit")?;
        if !options.rules.is_empty() && !options.tags.is_empty() {
            return Err(BrowserError::InvalidInput(
                "give either tags or rules, not both: rules already name exactly what runs".into(),
            ));
        }
        let max_nodes = options
            .max_nodes
            .unwrap_or(DEFAULT_NODES)
            .clamp(1, MAX_NODES);
        let mut notes = Vec::new();
        if !self.wait_loaded(LOAD_WAIT).await {
            notes.push(format!(
                "the page was still loading after {}s; audited what was there, run again once it has loaded",
                LOAD_WAIT.as_secs()
            ));
        }
        let scope = options
            .scope
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let frames = match scope {
            // A scope narrows the audit to one element, found in whichever frame it lives.
            Some(_) => Vec::new(),
            None => self.audit_frames().await?,
        };
        let url = self.current_url().await;
        let opts = json!({
            "tags": options.tags,
            "rules": options.rules,
            "exclude": options.exclude,
            "maxNodes": max_nodes,
            "selector": Value::Null,
        });

        let mut results: Vec<(Realm, Option<String>, i64, FrameResult)> = Vec::new();
        match scope.map(ElementTarget::parse) {
            Some(ElementTarget::Ref(r)) => {
                let (world, object_id) = self.ref_in_world(&r).await?;
                self.check_known(&world, options).await?;
                let v = self.run_axe(&world, Some(&object_id), opts.clone()).await?;
                results.push((world.realm, None, world.context_id, v));
            }
            Some(ElementTarget::Selector(selector)) => {
                let top = self.top_frame().await?;
                let world = self.axe_world(&top).await?;
                self.check_known(&world, options).await?;
                let mut opts = opts.clone();
                opts["selector"] = json!(selector);
                let v = self
                    .run_axe(&world, None, opts)
                    .await
                    .map_err(|e| match e {
                        BrowserError::Protocol { message, .. }
                            if message.contains("is not a valid selector") =>
                        {
                            BrowserError::InvalidSelector {
                                selector: selector.clone(),
                                reason: message,
                            }
                        }
                        other => other,
                    })?;
                if v.no_match {
                    return Err(BrowserError::ElementNotFound {
                        selector: selector.clone(),
                        suggestions: self.selector_suggestions(&selector).await,
                    });
                }
                results.push((world.realm, None, world.context_id, v));
            }
            None => {
                for (i, frame) in frames.iter().enumerate() {
                    let world = match self.axe_world(frame).await {
                        Ok(w) => w,
                        Err(e) if !frame.top => {
                            notes.push(format!("frame {} was not audited: {e}", frame.url));
                            continue;
                        }
                        Err(e) => return Err(e),
                    };
                    if i == 0 {
                        self.check_known(&world, options).await?;
                    }
                    match self.run_axe(&world, None, opts.clone()).await {
                        Ok(v) => {
                            let label = (!frame.top).then(|| frame.url.clone());
                            results.push((world.realm, label, world.context_id, v));
                        }
                        Err(e) if !frame.top => {
                            notes.push(format!("frame {} was not audited: {e}", frame.url));
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }

        let frames_audited = results.len();
        let mut axe_version = String::new();
        let mut passed = 0;
        let mut violations: BTreeMap<String, A11yViolation> = BTreeMap::new();
        let mut review: BTreeMap<String, A11yReview> = BTreeMap::new();
        for (realm, frame, context_id, result) in results {
            axe_version = result.version;
            passed = passed.max(result.passed);
            let refs = self.node_refs(&realm, context_id).await;
            let mut index = 0;
            for rule in result.violations {
                let entry = violations
                    .entry(rule.id.clone())
                    .or_insert_with(|| A11yViolation {
                        id: rule.id.clone(),
                        impact: rule.impact.clone(),
                        help: rule.help.clone(),
                        help_url: rule.help_url.clone(),
                        tags: rule.tags.clone(),
                        count: 0,
                        nodes: Vec::new(),
                    });
                entry.count += rule.count;
                for node in rule.nodes {
                    let reference = refs.get(index).cloned().flatten();
                    index += 1;
                    if entry.nodes.len() < max_nodes {
                        entry.nodes.push(A11yNode {
                            selector: node.selector,
                            reference,
                            html: truncate(&node.html, 120),
                            failure: truncate(&summary(&node.failure), 240),
                            frame: frame.clone(),
                        });
                    }
                }
            }
            for rule in result.incomplete {
                review
                    .entry(rule.id.clone())
                    .or_insert_with(|| A11yReview {
                        id: rule.id,
                        help: rule.help,
                        count: 0,
                    })
                    .count += rule.count;
            }
        }
        let mut violations: Vec<A11yViolation> = violations.into_values().collect();
        violations.sort_by(|a, b| {
            impact_rank(&a.impact)
                .cmp(&impact_rank(&b.impact))
                .then(b.count.cmp(&a.count))
                .then(a.id.cmp(&b.id))
        });
        Ok(A11yReport {
            url,
            violations,
            needs_review: review.into_values().collect(),
            passed,
            frames: frames_audited,
            axe_version,
            notes,
        })
    }

    /// Waits up to `limit` for the document to finish loading; false when it has not.
    pub(crate) async fn wait_loaded(&self, limit: Duration) -> bool {
        let start = Instant::now();
        loop {
            let state = self
                .eval_raw("document.readyState", true)
                .await
                .ok()
                .and_then(|v| v["result"]["value"].as_str().map(str::to_string));
            if state.as_deref() == Some("complete") {
                return true;
            }
            if start.elapsed() >= limit {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn current_url(&self) -> String {
        self.eval_raw("location.href", true)
            .await
            .ok()
            .and_then(|v| v["result"]["value"].as_str().map(str::to_string))
            .unwrap_or_default()
    }

    async fn top_frame(&self) -> Result<AuditFrame> {
        let tree = self.call(Raw::new("Page.getFrameTree", json!({}))).await?;
        let frame = &tree["frameTree"]["frame"];
        Ok(AuditFrame {
            realm: Realm::Page,
            frame_id: frame["id"].as_str().unwrap_or_default().to_string(),
            url: frame["url"].as_str().unwrap_or_default().to_string(),
            top: true,
        })
    }

    /// The page and its frames, in-process and cross-site.
    async fn audit_frames(&self) -> Result<Vec<AuditFrame>> {
        let mut frames = vec![self.top_frame().await?];
        for f in self.local_frames().await {
            frames.push(AuditFrame {
                realm: Realm::Page,
                frame_id: f.frame_id,
                url: f.url,
                top: false,
            });
        }
        let parents: Vec<String> = frames.iter().map(|f| f.frame_id.clone()).collect();
        let parents: Vec<&str> = parents.iter().map(String::as_str).collect();
        for f in self.remote_frames(&parents).await {
            frames.push(AuditFrame {
                realm: Realm::Remote {
                    target_id: f.target_id.clone(),
                },
                frame_id: f.target_id,
                url: f.url,
                top: false,
            });
        }
        Ok(frames)
    }

    /// A fresh isolated world in a frame with axe loaded into it.
    async fn axe_world(&self, frame: &AuditFrame) -> Result<AxeWorld> {
        let world = self
            .call_in(
                &frame.realm,
                Raw::new(
                    "Page.createIsolatedWorld",
                    json!({ "frameId": frame.frame_id, "worldName": "devlens-audit" }),
                ),
            )
            .await?;
        let context_id = world["executionContextId"].as_i64().ok_or_else(|| {
            BrowserError::protocol("Page.createIsolatedWorld", "no execution context")
        })?;
        let loaded = self
            .call_in(
                &frame.realm,
                Raw::new(
                    "Runtime.evaluate",
                    json!({ "expression": AXE_SOURCE, "contextId": context_id, "silent": true }),
                ),
            )
            .await?;
        if let Some(ex) = loaded.get("exceptionDetails") {
            return Err(BrowserError::protocol(
                "loading axe-core",
                crate::records::console::exception_text(ex),
            ));
        }
        Ok(AxeWorld {
            realm: frame.realm.clone(),
            context_id,
        })
    }

    /// The element a ref names, resolved in an axe world of its frame.
    async fn ref_in_world(&self, reference: &str) -> Result<(AxeWorld, String)> {
        let stale = || BrowserError::StaleRef {
            reference: reference.to_string(),
            reason: "is not from the latest snapshot of this page".into(),
        };
        let (realm, backend) = self
            .state()
            .page_state()
            .refs
            .node(reference)
            .ok_or_else(stale)?;
        let described = self
            .call_in(
                &realm,
                Raw::new("DOM.describeNode", json!({ "backendNodeId": backend })),
            )
            .await
            .map_err(|_| stale())?;
        // The frame that owns the node: the tree's frames are tried in turn.
        let frames: Vec<AuditFrame> = match &realm {
            Realm::Page => self
                .audit_frames()
                .await?
                .into_iter()
                .filter(|f| f.realm == Realm::Page)
                .collect(),
            Realm::Remote { target_id } => vec![AuditFrame {
                realm: realm.clone(),
                frame_id: target_id.clone(),
                url: String::new(),
                top: false,
            }],
        };
        if described["node"]["nodeType"].as_i64() != Some(1) {
            return Err(BrowserError::InvalidInput(format!(
                "{reference} is not an element; scope an audit to an element's ref or a selector"
            )));
        }
        for frame in &frames {
            let world = self.axe_world(frame).await?;
            let resolved = self
                .call_in(
                    &realm,
                    Raw::new(
                        "DOM.resolveNode",
                        json!({ "backendNodeId": backend, "executionContextId": world.context_id }),
                    ),
                )
                .await;
            if let Ok(v) = resolved
                && let Some(id) = v["object"]["objectId"].as_str()
            {
                return Ok((world, id.to_string()));
            }
        }
        Err(stale())
    }

    /// Refuses tags and rule ids axe does not know, naming close ones.
    async fn check_known(&self, world: &AxeWorld, options: &A11yOptions) -> Result<()> {
        if options.tags.is_empty() && options.rules.is_empty() && options.exclude.is_empty() {
            return Ok(());
        }
        let mut rules = options.rules.clone();
        rules.extend(options.exclude.iter().cloned());
        let known = self
            .world_call(world, None, KNOWN_FN, json!([options.tags, rules]))
            .await?;
        let strings = |key: &str| -> Vec<String> {
            known[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        for (bad, all, what) in [("badTags", "tags", "tag"), ("badRules", "rules", "rule")] {
            let bad = strings(bad);
            if let Some(first) = bad.first() {
                let all = strings(all);
                let close =
                    devlens_core::suggest::closest(first, all.iter().map(String::as_str), 3);
                let hint = if close.is_empty() {
                    String::new()
                } else {
                    format!(" (did you mean {}?)", close.join(", "))
                };
                let examples = if what == "tag" {
                    "wcag2a, wcag2aa, wcag21aa, wcag22aa, best-practice"
                } else {
                    "image-alt, label, color-contrast, heading-order, duplicate-id"
                };
                return Err(BrowserError::InvalidInput(format!(
                    "axe-core has no {what} `{first}`{hint}; known {what}s include {examples}"
                )));
            }
        }
        Ok(())
    }

    async fn run_axe(
        &self,
        world: &AxeWorld,
        object_id: Option<&str>,
        opts: Value,
    ) -> Result<FrameResult> {
        let v = self
            .world_call(world, object_id, RUN_FN, json!([opts]))
            .await?;
        serde_json::from_value(v)
            .map_err(|e| BrowserError::protocol("reading axe-core's results", e.to_string()))
    }

    /// Calls a function in an axe world, on an element or with `this` the global.
    async fn world_call(
        &self,
        world: &AxeWorld,
        object_id: Option<&str>,
        function: &str,
        args: Value,
    ) -> Result<Value> {
        let arguments: Vec<Value> = match args {
            Value::Array(a) => a.into_iter().map(|v| json!({ "value": v })).collect(),
            v => vec![json!({ "value": v })],
        };
        let mut params = json!({
            "functionDeclaration": function,
            "arguments": arguments,
            "returnByValue": true,
            "awaitPromise": true,
        });
        match object_id {
            Some(id) => params["objectId"] = json!(id),
            None => params["executionContextId"] = json!(world.context_id),
        }
        let call = self.call_in(&world.realm, Raw::new("Runtime.callFunctionOn", params));
        let v = match tokio::time::timeout(RUN_TIMEOUT, call).await {
            Ok(v) => v?,
            Err(_) => {
                return Err(BrowserError::Timeout {
                    what: "the accessibility audit".into(),
                    after: RUN_TIMEOUT,
                    hint: Some("Scope it to a part of the page (scope) or to fewer rules.".into()),
                });
            }
        };
        if let Some(ex) = v.get("exceptionDetails") {
            return Err(BrowserError::protocol(
                "running axe-core",
                crate::records::console::exception_text(ex),
            ));
        }
        Ok(v["result"].get("value").cloned().unwrap_or(Value::Null))
    }

    /// Snapshot refs of the failing elements an axe run kept, in order.
    async fn node_refs(&self, realm: &Realm, context_id: i64) -> Vec<Option<String>> {
        let Ok(list) = self
            .call_in(
                realm,
                Raw::new(
                    "Runtime.evaluate",
                    json!({ "expression": "globalThis.__devlensAxeNodes", "contextId": context_id }),
                ),
            )
            .await
        else {
            return Vec::new();
        };
        let Some(list_id) = list["result"]["objectId"].as_str() else {
            return Vec::new();
        };
        let Ok(props) = self
            .call_in(
                realm,
                Raw::new(
                    "Runtime.getProperties",
                    json!({ "objectId": list_id, "ownProperties": true }),
                ),
            )
            .await
        else {
            return Vec::new();
        };
        let mut by_index: BTreeMap<usize, Option<String>> = BTreeMap::new();
        for p in props["result"].as_array().into_iter().flatten() {
            let Some(i) = p["name"].as_str().and_then(|n| n.parse::<usize>().ok()) else {
                continue;
            };
            let mut reference = None;
            if let Some(object_id) = p["value"]["objectId"].as_str()
                && let Ok(node) = self
                    .call_in(
                        realm,
                        Raw::new("DOM.describeNode", json!({ "objectId": object_id })),
                    )
                    .await
                && let Some(backend) = node["node"]["backendNodeId"].as_i64()
            {
                reference = Some(
                    self.state()
                        .page_state()
                        .refs
                        .ref_for((realm.clone(), backend)),
                );
            }
            by_index.insert(i, reference);
        }
        let _ = self
            .call_in(
                realm,
                Raw::new("Runtime.releaseObject", json!({ "objectId": list_id })),
            )
            .await;
        let len = by_index.keys().next_back().map_or(0, |k| k + 1);
        (0..len).map(|i| by_index.remove(&i).flatten()).collect()
    }
}

/// axe's failure summary without its boilerplate first line ("Fix any of the following:").
fn summary(failure: &str) -> String {
    let mut parts = Vec::new();
    for line in failure.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Fix any of the following")
            || line.starts_with("Fix all of the following")
        {
            continue;
        }
        parts.push(line);
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_summary_drops_the_boilerplate() {
        let s = "Fix any of the following:\n  Element does not have an alt attribute\n  aria-label attribute does not exist or is empty";
        assert_eq!(
            summary(s),
            "Element does not have an alt attribute; aria-label attribute does not exist or is empty"
        );
    }

    #[test]
    fn axe_is_vendored_whole() {
        assert!(AXE_SOURCE.starts_with("/*! axe v"));
        assert!(AXE_SOURCE.len() > 400_000);
    }
}
