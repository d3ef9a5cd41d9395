//! The app's state as its framework holds it: which frameworks run on the page (with versions),
//! the React or Vue 3 component tree around an element, one component's props, state and hooks,
//! the Redux, Zustand, Pinia and Vuex stores that can be found, and the globals the app added to
//! `window`.
//!
//! Each view is one page function (`state.js`) that reads the framework's own structures — React
//! fibers, Vue vnodes and instances — so it works on production builds without DevTools hooks.
//! Values come back bounded (depth, keys, string length), with cycles marked and anything that
//! looks like a secret redacted; lists are paged.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, Result};
use crate::page::dom::ElementTarget;
use crate::records::console::exception_text;
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::truncate;

const STATE_FN: &str = include_str!("state.js");
/// Default and largest page of tree nodes, hooks, stores or globals.
const DEFAULT_LIMIT: usize = 60;
const MAX_LIMIT: usize = 300;
/// Default and largest tree depth below the starting component.
const DEFAULT_DEPTH: usize = 12;
const MAX_DEPTH: usize = 60;
/// Default and largest JSON size of one value.
const DEFAULT_VALUE_BYTES: usize = 1500;
const MAX_VALUE_BYTES: usize = 64 * 1024;
/// Top-level `let`/`const`/`class` names read for the globals view.
const MAX_LEXICAL: usize = 200;

/// What `app_state` reads.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum StateView {
    /// The frameworks on the page with versions, and the stores found.
    #[default]
    Frameworks,
    /// The component tree (around `element` when given).
    Tree,
    /// One component's props, state and hooks (the one that rendered `element`).
    Component,
    /// Redux, Zustand, Pinia and Vuex stores with their state.
    Stores,
    /// What the app added to `window`, against a blank page.
    Globals,
}

/// The framework to read when a page has both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StateFramework {
    React,
    Vue,
}

/// What to read.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct StateQuery {
    /// Default frameworks.
    pub view: StateView,
    /// tree, component: the element (ref e12 or CSS selector) whose component to show.
    pub element: Option<String>,
    /// tree, component: react or vue, when the page has both.
    pub framework: Option<StateFramework>,
    /// Tree levels below the start (default 12).
    pub depth: Option<usize>,
    /// Skip this many items (paging).
    pub offset: usize,
    /// Items per page (default 60, at most 300).
    pub limit: Option<usize>,
    /// Cut each value's JSON at this many bytes (default 1500).
    pub max_value_bytes: Option<usize>,
}

/// A framework or store found on the page.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Framework {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Where it was found (roots, the mount element, the store's place).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// A component in the tree; host elements are left out.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeNode {
    /// Nesting below the first node shown.
    pub depth: usize,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Value>,
    /// memo, forwardRef, class or root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The component of the element asked about.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selected: bool,
}

/// A named value: a hook's context, a store, a global.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamedValue {
    /// Where it lives: `window.store`, a Pinia id, a global's name, a context's name.
    pub name: String,
    /// redux, zustand, pinia, vuex; a global's type; context.
    pub kind: String,
    pub value: Value,
}

/// One hook of a React function component, in call order.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hook {
    pub index: usize,
    /// state, reducer, ref, memo, callback, effect, syncExternalStore or other.
    pub kind: String,
    pub value: Value,
}

/// One component's data.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentState {
    /// React or Vue.
    pub framework: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Value>,
    /// function, class, memo, forwardRef (React); component (Vue).
    pub kind: String,
    /// The enclosing components, nearest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<String>,
    /// Props (React's without children).
    pub props: Value,
    /// A React class component's state, or a Vue component's data().
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// What a Vue component's setup() returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Value>,
    /// A Vue component's computed values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computed: Option<Value>,
    /// A React function component's hooks (this page of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<Hook>,
    /// React contexts the component reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<NamedValue>,
}

/// The answer of `app_state`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppState {
    pub view: StateView,
    pub frameworks: Vec<Framework>,
    /// Tree: the components from the root down to the element's component.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tree: Vec<TreeNode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentState>,
    /// Stores or globals.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<NamedValue>,
    /// Tree nodes, hooks, stores or globals before paging.
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What the page function answers.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Reply {
    frameworks: Vec<Framework>,
    notes: Vec<String>,
    error: Option<ReplyError>,
    tree: Option<TreePage>,
    component: Option<ComponentState>,
    items: Vec<NamedValue>,
    total: usize,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TreePage {
    path: Vec<String>,
    items: Vec<TreeNode>,
    total: usize,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ReplyError {
    kind: String,
    message: String,
}

impl Framework {
    fn line(&self) -> String {
        let mut out = self.name.clone();
        if let Some(v) = &self.version {
            let _ = write!(out, " {v}");
        }
        if !self.detail.is_empty() {
            let _ = write!(out, " ({})", self.detail);
        }
        out
    }
}

/// A key as JSON: `key="todo-1"`, `key=3`.
fn key_text(key: &Option<Value>) -> String {
    match key {
        Some(k) => format!(" key={k}"),
        None => String::new(),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The names of the frameworks, for messages.
fn framework_list(frameworks: &[Framework]) -> String {
    if frameworks.is_empty() {
        return "no framework devlens knows (React, Preact, Vue, Angular, Svelte, Next.js, Nuxt)"
            .into();
    }
    let names: Vec<String> = frameworks.iter().map(Framework::line).collect();
    names.join(", ")
}

impl AppState {
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        match self.view {
            StateView::Frameworks => {
                if self.frameworks.is_empty() {
                    out.push_str(&framework_list(&self.frameworks));
                    out.push_str(" on this page; view globals lists what the app added to window");
                }
                for f in &self.frameworks {
                    let _ = writeln!(out, "{}", f.line());
                }
            }
            StateView::Tree => {
                if !self.path.is_empty() {
                    let _ = writeln!(out, "path: {}", self.path.join(" › "));
                }
                for n in &self.tree {
                    let _ = write!(
                        out,
                        "{}{}{}",
                        "  ".repeat(n.depth),
                        n.name,
                        key_text(&n.key)
                    );
                    if let Some(k) = &n.kind {
                        let _ = write!(out, " ({k})");
                    }
                    out.push_str(if n.selected { "  ◀ element\n" } else { "\n" });
                }
            }
            StateView::Component => {
                if let Some(c) = &self.component {
                    component_text(c, &mut out);
                }
            }
            StateView::Stores | StateView::Globals => {
                if self.total == 0 {
                    out.push_str(if self.view == StateView::Stores {
                        "no store found (looked at window globals, React providers, props and hooks, Vue apps' Pinia and Vuex)\n"
                    } else {
                        "the page added nothing to window\n"
                    });
                }
                for i in &self.items {
                    let _ = writeln!(out, "{} ({}): {}", i.name, i.kind, value_text(&i.value));
                }
            }
        }
        let shown = self.shown();
        if let Some(next) = self.next_offset {
            let _ = writeln!(
                out,
                "… {shown} of {} shown; next page: offset {next}",
                self.total
            );
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out.trim_end().to_string()
    }

    fn shown(&self) -> usize {
        match self.view {
            StateView::Tree => self.tree.len(),
            StateView::Component => self.component.as_ref().map_or(0, |c| c.hooks.len()),
            _ => self.items.len(),
        }
    }
}

fn component_text(c: &ComponentState, out: &mut String) {
    let _ = write!(
        out,
        "{}{} ({} {})",
        c.name,
        key_text(&c.key),
        c.framework,
        c.kind
    );
    if !c.parents.is_empty() {
        let _ = write!(out, " in {}", c.parents.join(" ‹ "));
    }
    out.push('\n');
    let _ = writeln!(out, "props: {}", value_text(&c.props));
    for (label, v) in [
        ("state", &c.state),
        ("setup", &c.setup),
        ("computed", &c.computed),
    ] {
        if let Some(v) = v {
            let _ = writeln!(out, "{label}: {}", value_text(v));
        }
    }
    if !c.hooks.is_empty() {
        out.push_str("hooks:\n");
        for h in &c.hooks {
            let _ = writeln!(out, "  {} {}: {}", h.index, h.kind, value_text(&h.value));
        }
    }
    for x in &c.context {
        let _ = writeln!(out, "context {}: {}", x.name, value_text(&x.value));
    }
}

/// A name CDP reports as a global lexical binding, safe to write into an expression.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

impl Tab {
    /// The app's state as its framework holds it: frameworks, component tree, one component,
    /// stores or globals (see [`StateView`]).
    pub async fn app_state(&self, query: &StateQuery) -> Result<AppState> {
        self.guard_running("reading the app state")?;
        let view = query.view;
        let element = query
            .element
            .as_deref()
            .map(str::trim)
            .filter(|e| !e.is_empty());
        if element.is_some() && !matches!(view, StateView::Tree | StateView::Component) {
            return Err(BrowserError::InvalidInput(
                "element goes with the tree and component views; leave it out for frameworks, stores and globals".into(),
            ));
        }
        let limit = query.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let opts = json!({
            "view": view,
            "framework": query.framework.map(|f| match f {
                StateFramework::React => "react",
                StateFramework::Vue => "vue",
            }),
            "depth": query.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH),
            "offset": query.offset,
            "limit": limit,
            "maxValueBytes": query.max_value_bytes.unwrap_or(DEFAULT_VALUE_BYTES).clamp(100, MAX_VALUE_BYTES),
        });
        let reply = if let Some(e) = element {
            let el = self.resolve(&ElementTarget::parse(e)).await?;
            self.call_el(&el, STATE_FN, json!([opts])).await?
        } else {
            // Top-level let/const/class live outside window: read them by name, with getters
            // written at the top level of the expression so the page function's own names
            // cannot shadow them.
            let mut getters = String::new();
            if view == StateView::Globals {
                let names = self
                    .call(Raw::new("Runtime.globalLexicalScopeNames", json!({})))
                    .await
                    .ok();
                let names = names
                    .as_ref()
                    .and_then(|v| v["names"].as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|n| is_identifier(n))
                    .take(MAX_LEXICAL);
                for n in names {
                    let _ = write!(getters, "{n}: () => {n}, ");
                }
            }
            let expression = format!("({STATE_FN})({opts}, {{ {getters} }})");
            let v = self.eval_raw(&expression, true).await?;
            if let Some(ex) = v.get("exceptionDetails") {
                return Err(BrowserError::protocol(
                    "reading the app state",
                    exception_text(ex),
                ));
            }
            v["result"].get("value").cloned().unwrap_or(Value::Null)
        };
        let reply: Reply = serde_json::from_value(reply)
            .map_err(|e| BrowserError::protocol("reading the app state", e))?;
        if let Some(err) = reply.error {
            let found = framework_list(&reply.frameworks);
            let next = if err.kind == "component" {
                "Pick an element inside the app's root (query_elements or a snapshot), or leave element out for the top component"
            } else {
                "view frameworks, stores and globals work on any page"
            };
            return Err(BrowserError::InvalidInput(format!(
                "{}. This page has: {found}. {next}.",
                err.message
            )));
        }
        let (path, tree, total) = match reply.tree {
            Some(t) => (t.path, t.items, t.total),
            None => (Vec::new(), Vec::new(), reply.total),
        };
        let shown = match view {
            StateView::Tree => tree.len(),
            StateView::Component => reply.component.as_ref().map_or(0, |c| c.hooks.len()),
            StateView::Frameworks => 0,
            _ => reply.items.len(),
        };
        let end = query.offset.saturating_add(shown);
        let mut notes = reply.notes;
        if query.offset > 0 && shown == 0 && total > 0 {
            notes.push(format!(
                "offset {} is past the end ({total} items)",
                query.offset
            ));
        }
        Ok(AppState {
            view,
            frameworks: reply.frameworks,
            path: path.into_iter().map(|p| truncate(&p, 80)).collect(),
            tree,
            component: reply.component,
            items: reply.items,
            total,
            next_offset: (shown > 0 && end < total).then_some(end),
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_names_are_plain_identifiers() {
        assert!(is_identifier("appState"));
        assert!(is_identifier("$store"));
        assert!(!is_identifier("a; alert(1)"));
        assert!(!is_identifier("1x"));
        assert!(!is_identifier(""));
    }

    #[test]
    fn a_tree_reads_as_an_indented_list_with_the_next_page() {
        let node = |depth, name: &str, key: Option<Value>, selected| TreeNode {
            depth,
            name: name.into(),
            key,
            kind: None,
            selected,
        };
        let state = AppState {
            view: StateView::Tree,
            frameworks: Vec::new(),
            path: vec!["App".into(), "TodoList".into()],
            tree: vec![
                node(0, "TodoList", None, false),
                node(1, "TodoItem", Some(json!("todo-1")), true),
            ],
            component: None,
            items: Vec::new(),
            total: 5,
            next_offset: Some(2),
            notes: Vec::new(),
        };
        assert_eq!(
            state.to_text(),
            "path: App › TodoList\nTodoList\n  TodoItem key=\"todo-1\"  ◀ element\n… 2 of 5 shown; next page: offset 2"
        );
    }
}
