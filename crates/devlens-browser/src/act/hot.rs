//! Floor 4, a page taking a file change: whether the open page loaded a project file (and which
//! dev server feeds it), and — once the file changed on disk — how the change arrived (a hot
//! update, a reload by the dev server or by devlens, the dev server's error overlay) and what
//! followed: console errors, failed requests, the overlay's text, an element's computed style.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::act::navigate::Navigation;
use crate::effects::{Followups, Mark, is_zero, render_changes};
use crate::error::Result;
use crate::records::console::ConsoleEntry;
use crate::records::network::NetworkEntry;
use crate::tab::targets::Tab;
use crate::text::truncate;

/// Console errors and failed requests listed in an update.
const UPDATE_ITEMS: usize = 5;
/// The overlay's text is cut here.
const OVERLAY_CHARS: usize = 1500;
/// How often the page is looked at while waiting.
const POLL: Duration = Duration::from_millis(25);
/// The overlay is read every this many polls (it costs a page round trip).
const OVERLAY_EVERY: u32 = 8;

/// The dev servers whose clients devlens recognises among a page's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DevServer {
    Vite,
    Webpack,
    Next,
    LiveReload,
}

impl DevServer {
    fn from_path(path: &str) -> Option<Self> {
        if path.starts_with("/@vite/client") {
            Some(Self::Vite)
        } else if path.contains("webpack-hmr") {
            Some(Self::Next)
        } else if path.contains("webpack-dev-server")
            || path.contains("sockjs-node")
            || path.ends_with(".hot-update.json")
        {
            Some(Self::Webpack)
        } else if path.ends_with("livereload.js") {
            Some(Self::LiveReload)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Vite => "Vite",
            Self::Webpack => "webpack",
            Self::Next => "Next.js",
            Self::LiveReload => "LiveReload",
        }
    }
}

/// A file the open page uses, watched from before it changes.
#[derive(Debug, Clone)]
pub struct FileWatch {
    mark: Mark,
    /// The request path the page loaded the file by, e.g. `/src/App.jsx`.
    served_as: String,
    dev_server: Option<DevServer>,
    overlay_before: Option<String>,
}

impl FileWatch {
    pub fn served_as(&self) -> &str {
        &self.served_as
    }

    pub fn dev_server(&self) -> Option<DevServer> {
        self.dev_server
    }
}

/// An element whose computed style to report after the change.
#[derive(Debug, Clone, Default)]
pub struct StyleProbe {
    pub selector: String,
    pub properties: Vec<String>,
}

/// How to wait for a change.
#[derive(Debug, Clone)]
pub struct UpdateOptions {
    /// How long the dev server may take to deliver the change.
    pub timeout: Duration,
    /// Reload the page when no dev server with hot reload feeds it.
    pub reload: bool,
    pub style: Option<StyleProbe>,
}

impl Default for UpdateOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(8),
            reload: true,
            style: None,
        }
    }
}

/// How the page took a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Arrival {
    /// The dev server swapped the changed module in place (hot module replacement).
    HotUpdate,
    /// The dev server reloaded the page.
    DevServerReload,
    /// devlens reloaded the page: no dev server with hot reload feeds it.
    Reloaded,
    /// The dev server refused the change and shows its error overlay.
    ErrorOverlay,
    /// Nothing happened within the time limit.
    NotSeen,
}

/// What the open page made of a file change.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageUpdate {
    /// The page's URL after the change.
    pub url: String,
    pub arrival: Arrival,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dev_server: Option<DevServer>,
    /// From the write to the page taking the change.
    pub waited_ms: u64,
    /// Console errors since the change, newest last.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub console_errors: Vec<ConsoleEntry>,
    #[serde(skip_serializing_if = "is_zero")]
    pub console_errors_omitted: usize,
    /// Requests since the change that failed or answered 4xx/5xx.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_requests: Vec<NetworkEntry>,
    #[serde(skip_serializing_if = "is_zero")]
    pub failed_requests_omitted: usize,
    /// The text of the dev server's error overlay, when one shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay: Option<String>,
    /// An error overlay showed before the change and is gone now.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overlay_cleared: bool,
    /// The probed element's computed style (property → value), when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl PageUpdate {
    /// Whether the change went in cleanly: taken, no overlay, no errors, nothing failed.
    pub fn is_clean(&self) -> bool {
        !matches!(self.arrival, Arrival::ErrorOverlay | Arrival::NotSeen)
            && self.overlay.is_none()
            && self.console_errors.is_empty()
            && self.failed_requests.is_empty()
    }

    pub fn to_text(&self) -> String {
        let server = self
            .dev_server
            .map(|d| format!(" ({})", d.name()))
            .unwrap_or_default();
        let mut out = match self.arrival {
            Arrival::HotUpdate => format!("Page: hot update{server} in {} ms", self.waited_ms),
            Arrival::DevServerReload => {
                format!(
                    "Page: reloaded by the dev server{server} in {} ms",
                    self.waited_ms
                )
            }
            Arrival::Reloaded => format!("Page: reloaded by devlens in {} ms", self.waited_ms),
            Arrival::ErrorOverlay => {
                format!("Page: the dev server{server} refused the change")
            }
            Arrival::NotSeen => format!(
                "Page: did not take the change within {} ms{server}",
                self.waited_ms
            ),
        };
        let _ = write!(out, " — {}", self.url);
        if let Some(overlay) = &self.overlay {
            let _ = write!(out, "\nError overlay:\n{overlay}");
        } else if self.overlay_cleared {
            out.push_str("\nThe error overlay is gone.");
        }
        render_changes(
            &mut out,
            &self.console_errors,
            self.console_errors_omitted,
            &self.failed_requests,
            self.failed_requests_omitted,
            None,
            &self.url,
        );
        if let Some(style) = &self.style {
            let shown: Vec<String> = style.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let _ = write!(out, "\nStyle: {}", shown.join("; "));
        }
        if self.is_clean() {
            out.push_str("\nNo console errors or failed requests.");
        }
        for note in &self.notes {
            let _ = write!(out, "\nNote: {note}");
        }
        out
    }
}

/// The path of a URL (no scheme, host, query or fragment), for http(s) URLs.
fn url_path(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))?;
    let path = &rest[rest.find('/')?..];
    let end = path.find(['?', '#']).unwrap_or(path.len());
    Some(&path[..end])
}

/// Whether a request for `path` serves the project file `rel` (`src/App.jsx`): the path is the
/// file's (`/src/App.jsx`), or its tail (`/logo.svg` for `public/logo.svg`).
fn serves(path: &str, rel: &str) -> bool {
    if path.len() <= 1 {
        return false;
    }
    let rel = format!("/{}", rel.trim_start_matches("./"));
    rel == path || rel.ends_with(path)
}

/// Reads the error overlay of Vite, webpack-dev-server or Next.js, when one shows.
const OVERLAY_JS: &str = r#"(() => {
  const text = (s) => (s || '').replace(/\n{3,}/g, '\n\n').trim();
  const vite = document.querySelector('vite-error-overlay');
  if (vite && vite.shadowRoot) {
    const r = vite.shadowRoot;
    const parts = ['.message', '.file', '.frame'].map((s) => r.querySelector(s)).filter(Boolean);
    return text(parts.length ? parts.map((e) => e.textContent).join('\n') : r.textContent);
  }
  const webpack = document.getElementById('webpack-dev-server-client-overlay');
  if (webpack) {
    try { return text(webpack.contentDocument.body.innerText); } catch (e) { return 'webpack error overlay'; }
  }
  const next = document.querySelector('nextjs-portal');
  if (next && next.shadowRoot && next.shadowRoot.querySelector('[data-nextjs-dialog], [data-nextjs-toast-errors]')) {
    return text(next.shadowRoot.textContent);
  }
  return null;
})()"#;

/// The computed style of the first element matching `selector`, for `properties`.
fn style_js(probe: &StyleProbe) -> String {
    format!(
        r#"(() => {{
  const el = document.querySelector({selector});
  if (!el) return null;
  const cs = getComputedStyle(el);
  const out = {{}};
  for (const p of {properties}) out[p] = cs.getPropertyValue(p);
  return out;
}})()"#,
        selector = Value::String(probe.selector.clone()),
        properties = Value::from(probe.properties.clone()),
    )
}

impl Tab {
    /// Whether the open page loaded the project file `rel` (a path relative to the project
    /// folder the page is served from); if so, a watch to call [`Tab::page_update`] with after
    /// the file changed.
    pub async fn watch_file(&self, rel: &str) -> Option<FileWatch> {
        self.check_alive().ok()?;
        // A page held by a dialog or a debugger pause takes no change until it is released.
        if self.blocker().is_some() {
            return None;
        }
        let page = self.state().page_state().navigations;
        let (served_as, dev_server) = {
            let log = self.state().network_mut();
            let mut dev_server = None;
            let mut served_as = None;
            for record in log.records_on_page(page) {
                let Some(path) = url_path(&record.url) else {
                    continue;
                };
                dev_server = dev_server.or(DevServer::from_path(path));
                if served_as.is_none() && serves(path, rel) {
                    served_as = Some(path.to_string());
                }
            }
            (served_as, dev_server)
        };
        let document = self.url();
        let served_as = served_as.or_else(|| {
            // The page itself: `/` or `/docs/` is its folder's index.html.
            let path = url_path(&document)?;
            let index = format!("{path}index.html");
            (path.ends_with('/') && serves(&index, rel)).then_some(index)
        })?;
        Some(FileWatch {
            overlay_before: self.error_overlay().await,
            mark: self.mark().await,
            served_as,
            dev_server,
        })
    }

    /// After the watched file changed: waits for the page to take the change — a dev server's
    /// hot update or reload, else (with `options.reload`) a reload by devlens — lets what it
    /// started finish, and reports what followed.
    pub async fn page_update(
        &self,
        watch: FileWatch,
        options: &UpdateOptions,
    ) -> Result<PageUpdate> {
        let started = Instant::now();
        let mark = &watch.mark;
        let mut notes = Vec::new();
        let mut arrival = Arrival::NotSeen;
        if watch.dev_server.is_some() {
            let mut polls = 0u32;
            while started.elapsed() < options.timeout {
                self.check_alive()?;
                if self.blocker().is_some() {
                    notes.push(
                        "a dialog or a debugger pause holds the page: handle_dialog or resume it"
                            .into(),
                    );
                    break;
                }
                if let Some(seen) = self.arrival_since(&watch) {
                    arrival = seen;
                    break;
                }
                polls += 1;
                if polls.is_multiple_of(OVERLAY_EVERY) {
                    let overlay = self.error_overlay().await;
                    if overlay.is_some() && overlay != watch.overlay_before {
                        arrival = Arrival::ErrorOverlay;
                        break;
                    }
                }
                tokio::time::sleep(POLL).await;
            }
        } else if options.reload {
            self.navigate(&Navigation::Reload, Some(options.timeout))
                .await?;
            arrival = Arrival::Reloaded;
        } else {
            notes.push(
                "no dev server with hot reload feeds this page and reload is off: `navigate` \
                 with action reload shows the change"
                    .into(),
            );
        }
        let waited_ms = started.elapsed().as_millis() as u64;
        notes.extend(self.settle(mark).await);
        // A dev server shows its overlay a moment after the failed update or reload.
        let mut overlay = self.error_overlay().await;
        if overlay.is_none() && arrival != Arrival::NotSeen && watch.dev_server.is_some() {
            tokio::time::sleep(Duration::from_millis(150)).await;
            overlay = self.error_overlay().await;
        }
        if arrival == Arrival::NotSeen && overlay.is_some() && overlay != watch.overlay_before {
            arrival = Arrival::ErrorOverlay;
        }
        if arrival == Arrival::NotSeen && watch.dev_server.is_some() {
            notes.push(format!(
                "the page did not take the change within {} s: is the dev server still running \
                 and watching this file? `navigate` with action reload loads it anyway",
                options.timeout.as_secs()
            ));
        }
        let Followups {
            console_errors,
            console_errors_omitted,
            failed_requests,
            failed_requests_omitted,
        } = self.followups(mark, UPDATE_ITEMS);
        let style = match &options.style {
            Some(probe) if self.open_dialog().is_some() => {
                notes.push(format!(
                    "`{}` was not read: a dialog is open (handle_dialog)",
                    probe.selector
                ));
                None
            }
            Some(probe) => match self.eval_raw(&style_js(probe), true).await {
                Ok(v) => match v.pointer("/result/value") {
                    Some(Value::Object(map)) => Some(
                        map.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                            .collect(),
                    ),
                    _ => {
                        notes.push(format!("no element matches `{}`", probe.selector));
                        None
                    }
                },
                Err(e) => {
                    notes.push(format!("the style could not be read: {e}"));
                    None
                }
            },
            None => None,
        };
        Ok(PageUpdate {
            url: self.url(),
            arrival,
            dev_server: watch.dev_server,
            waited_ms,
            console_errors,
            console_errors_omitted,
            failed_requests,
            failed_requests_omitted,
            overlay_cleared: watch.overlay_before.is_some() && overlay.is_none(),
            overlay,
            style,
            notes,
        })
    }

    /// A dev server's answer to the change since the watch began: the page reloaded, or the
    /// changed file was fetched again (a hot update asks for it with a new query string).
    fn arrival_since(&self, watch: &FileWatch) -> Option<Arrival> {
        let reloaded = {
            let p = self.state().page_state();
            p.navigations > watch.mark.navigations || p.loads > watch.mark.loads
        };
        if reloaded {
            return Some(Arrival::DevServerReload);
        }
        let log = self.state().network_mut();
        log.records_since(watch.mark.network)
            .any(|r| url_path(&r.url) == Some(watch.served_as.as_str()))
            .then_some(Arrival::HotUpdate)
    }

    /// The text of the dev server's error overlay, when one shows.
    pub(crate) async fn error_overlay(&self) -> Option<String> {
        // A dialog would hold the evaluation until it closes.
        if self.open_dialog().is_some() {
            return None;
        }
        let answer = self.eval_raw(OVERLAY_JS, true).await.ok()?;
        let text = answer.pointer("/result/value")?.as_str()?;
        (!text.is_empty()).then(|| truncate(text, OVERLAY_CHARS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_paths_name_the_project_files_they_serve() {
        assert_eq!(
            url_path("http://127.0.0.1:5173/src/App.jsx?t=123#x"),
            Some("/src/App.jsx")
        );
        assert_eq!(url_path("data:text/html,x"), None);
        assert!(serves("/src/App.jsx", "src/App.jsx"));
        assert!(serves("/logo.svg", "public/logo.svg"));
        assert!(!serves("/", "index.html"));
        assert!(!serves("/src/App.jsx", "src/Other.jsx"));
        assert_eq!(DevServer::from_path("/@vite/client"), Some(DevServer::Vite));
        assert_eq!(DevServer::from_path("/src/main.js"), None);
    }

    #[test]
    fn an_update_says_how_it_arrived_and_what_followed() {
        let update = PageUpdate {
            url: "http://127.0.0.1:5173/".into(),
            arrival: Arrival::HotUpdate,
            dev_server: Some(DevServer::Vite),
            waited_ms: 84,
            console_errors: Vec::new(),
            console_errors_omitted: 0,
            failed_requests: Vec::new(),
            failed_requests_omitted: 0,
            overlay: None,
            overlay_cleared: true,
            style: Some(BTreeMap::from([("color".into(), "rgb(255, 0, 0)".into())])),
            notes: Vec::new(),
        };
        let text = update.to_text();
        assert!(
            text.starts_with("Page: hot update (Vite) in 84 ms"),
            "{text}"
        );
        assert!(text.contains("The error overlay is gone."), "{text}");
        assert!(text.contains("Style: color: rgb(255, 0, 0)"), "{text}");
        assert!(text.contains("No console errors"), "{text}");
    }
}
