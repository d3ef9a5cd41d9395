//! Navigation with a "smart" answer: after a load, the final URL, the HTTP status, the title, and
//! the console errors and failed requests that happened during the load — what a developer looks
//! at first, without a second call. Opening a tab on a URL ([`NewTab`]) answers the same.

use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::effects::{Followups, Mark, NavigationOutcome};
use crate::error::{BrowserError, Result, net_error_hint};
use crate::tab::cdp::Raw;
use crate::tab::session::BrowserSessions;
use crate::tab::targets::{Tab, TabInfo};

/// Default and longest time a navigation may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const MAX_TIMEOUT: Duration = Duration::from_secs(120);
/// Console errors and failed requests listed in the answer.
const REPORT_ITEMS: usize = 10;

/// Where to go.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Navigation {
    /// A URL; `localhost:3000` and `example.com` get a scheme.
    Url(String),
    Back,
    Forward,
    Reload,
}

/// The schemes a tab may be sent to. Others (`view-source:`, `chrome:`, `filesystem:`, …) are
/// refused: `view-source:file:///…` would show a local file past the `file:` check.
/// `chrome-extension:` stays: a front end may be an extension's pages, and they read no local
/// file a page could not.
const SCHEMES: &[&str] = &[
    "http",
    "https",
    "file",
    "about",
    "data",
    "blob",
    "javascript",
    "chrome-extension",
];

/// The scheme `url` starts with, if it starts with one (`localhost:3000` does not: a port).
fn scheme_of(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once(':')?;
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    // `host:8080/x` is a host and a port, not a scheme.
    let port = rest.split(['/', '?', '#']).next().unwrap_or("");
    let is_port = !port.is_empty() && port.chars().all(|c| c.is_ascii_digit());
    (valid && !is_port).then_some(scheme)
}

/// Adds a scheme where people leave it out: `http://` for local hosts, `https://` otherwise;
/// refuses schemes a tab is not sent to.
fn normalize_url(input: &str) -> Result<String> {
    let url = input.trim();
    if url.is_empty() {
        return Err(BrowserError::InvalidInput(
            "give a URL to navigate to".into(),
        ));
    }
    // Chrome drops tabs and newlines inside a URL, so `vi\new-source:` is `view-source:`.
    let compact: String = url
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    if let Some(scheme) = scheme_of(&compact) {
        if !SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
            return Err(BrowserError::InvalidInput(format!(
                "`{scheme}:` URLs are not opened: use an http(s) URL, a file: URL inside the \
                 workspace, about:blank, a data: URL or an extension's page"
            )));
        }
        return Ok(url.to_string());
    }
    if url.contains(char::is_whitespace) {
        return Err(BrowserError::InvalidInput(format!(
            "`{url}` is not a URL (it has spaces)"
        )));
    }
    let host = url.split(['/', '?', '#']).next().unwrap_or(url);
    let local = host.starts_with("localhost")
        || host.starts_with("127.")
        || host.starts_with("0.0.0.0")
        || host.starts_with("[::1]")
        || host
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok());
    Ok(format!("{}://{url}", if local { "http" } else { "https" }))
}

/// A tab opened by [`BrowserSessions::new_tab`], with the load report when a URL was given.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewTab {
    pub tab: TabInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub navigation: Option<NavigationOutcome>,
}

impl NewTab {
    pub fn to_text(&self) -> String {
        let mut out = format!("opened tab [{}] (now active)", self.tab.index);
        match &self.navigation {
            Some(n) => {
                out.push('\n');
                out.push_str(&n.to_text());
            }
            None => {
                let _ = write!(out, " {}", self.tab.url);
            }
        }
        out
    }
}

impl BrowserSessions {
    /// Opens a tab, makes it active and, given a URL, loads it and reports the load.
    pub async fn new_tab(&self, connection: Option<&str>, url: Option<&str>) -> Result<NewTab> {
        let conn = self.connection(connection)?;
        let tab = conn.open_tab().await?;
        let navigation = match url.map(str::trim).filter(|u| !u.is_empty()) {
            Some(url) => Some(
                tab.navigate(
                    &crate::act::navigate::Navigation::Url(url.to_string()),
                    None,
                )
                .await?,
            ),
            None => None,
        };
        let targets = conn.sync_tabs().await?;
        let list = conn.tab_list(&targets);
        let info = list
            .tabs
            .into_iter()
            .find(|t| t.id == tab.inner.target_id)
            .ok_or_else(|| BrowserError::TabGone {
                tab: "just opened".into(),
            })?;
        Ok(NewTab {
            tab: info,
            navigation,
        })
    }
}

impl Tab {
    /// Loads a URL, goes back or forward in history, or reloads; waits for the `load` event
    /// (default timeout 30 s) and reports the load.
    pub async fn navigate(
        &self,
        to: &Navigation,
        timeout: Option<Duration>,
    ) -> Result<NavigationOutcome> {
        self.guard()?;
        if self.is_paused() {
            // The pause would answer for the new page at once; what to do is the caller's call.
            return Err(BrowserError::InvalidInput(
                "the page is paused in the debugger: resume it first (`execution` action \
                 resume), then navigate"
                    .into(),
            ));
        }
        let limit = timeout
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(Duration::from_secs(1), MAX_TIMEOUT);
        let mark = self.mark().await;
        let mut notes = Vec::new();
        let mut loaded = true;
        match to {
            Navigation::Url(url) => {
                let url = normalize_url(url)?;
                let tab = self.clone();
                let target = url.clone();
                // chromiumoxide answers Page.navigate once the page has loaded.
                let answer = self
                    .run_blocking("loading the page", limit, async move {
                        tab.call(Raw::new("Page.navigate", json!({ "url": target })))
                            .await
                    })
                    .await;
                let answer = match answer {
                    Err(BrowserError::Timeout { .. }) => {
                        loaded = false;
                        notes.push(format!(
                            "the page did not finish loading within {} s",
                            limit.as_secs()
                        ));
                        None
                    }
                    other => other?,
                };
                if let Some(answer) = answer
                    && let Some(error) = answer.get("errorText").and_then(Value::as_str)
                    && !error.is_empty()
                {
                    if answer.get("isDownload").and_then(Value::as_bool) == Some(true) {
                        notes.push("the URL started a download instead of showing a page".into());
                    } else if error == "net::ERR_HTTP_RESPONSE_CODE_FAILURE" {
                        // The server answered (4xx/5xx with an empty body); the status says it.
                        notes.push("the server sent an error status with an empty body; Chrome shows its own error page".into());
                    } else {
                        return Err(BrowserError::NavigationFailed {
                            url,
                            error: error.to_string(),
                            hint: net_error_hint(error),
                        });
                    }
                }
            }
            Navigation::Back | Navigation::Forward => {
                let history = self
                    .call(Raw::new("Page.getNavigationHistory", json!({})))
                    .await?;
                let current = history
                    .get("currentIndex")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                let entries = history
                    .get("entries")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let wanted = if *to == Navigation::Back {
                    current - 1
                } else {
                    current + 1
                };
                let Some(entry) = usize::try_from(wanted).ok().and_then(|i| entries.get(i)) else {
                    return Err(BrowserError::InvalidInput(format!(
                        "there is no {} page in this tab's history",
                        if *to == Navigation::Back {
                            "previous"
                        } else {
                            "next"
                        }
                    )));
                };
                let id = entry.get("id").cloned().unwrap_or(Value::Null);
                self.call(Raw::new(
                    "Page.navigateToHistoryEntry",
                    json!({ "entryId": id }),
                ))
                .await?;
                loaded = self.wait_for_load(&mark, limit).await;
            }
            Navigation::Reload => {
                self.call(Raw::new("Page.reload", json!({}))).await?;
                loaded = self.wait_for_load(&mark, limit).await;
            }
        }
        notes.extend(self.settle(&mark).await);
        Ok(self.load_report(&mark, loaded, notes).await)
    }

    /// Waits for a history navigation or reload to load (or a same-document change to land).
    async fn wait_for_load(&self, mark: &Mark, limit: Duration) -> bool {
        let start = tokio::time::Instant::now();
        loop {
            if self.blocker().is_some() {
                return false;
            }
            {
                // A load event, a committed navigation (pages restored from the back-forward
                // cache fire no load) or a same-document URL change, and nothing loading.
                let p = self.state().page_state();
                let changed =
                    p.loads > mark.loads || p.navigations > mark.navigations || p.url != mark.url;
                if changed && !p.loading {
                    return true;
                }
            }
            if start.elapsed() > limit {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn load_report(
        &self,
        mark: &Mark,
        loaded: bool,
        notes: Vec<String>,
    ) -> NavigationOutcome {
        let main_frame = self.state().page_state().main_frame.clone();
        let Followups {
            console_errors,
            console_errors_omitted,
            failed_requests,
            failed_requests_omitted,
        } = self.followups(mark, REPORT_ITEMS);
        let document = self
            .state()
            .network_mut()
            .main_document_since(mark.network, main_frame.as_deref());
        let info = self.info().await.ok();
        let dialog = self.open_dialog();
        let paused = self.pause_context_if_paused().await.map(Box::new);
        NavigationOutcome {
            url: info
                .as_ref()
                .map(|i| i.url.clone())
                .unwrap_or_else(|| self.url()),
            status: document.and_then(|d| d.status),
            title: info.map(|i| i.title).unwrap_or_default(),
            loaded: loaded && paused.is_none(),
            console_errors,
            console_errors_omitted,
            failed_requests,
            failed_requests_omitted,
            dialog,
            paused,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_a_scheme() {
        assert_eq!(
            normalize_url("localhost:3000/x").unwrap(),
            "http://localhost:3000/x"
        );
        assert_eq!(
            normalize_url("127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(normalize_url("example.com").unwrap(), "https://example.com");
        assert_eq!(normalize_url("about:blank").unwrap(), "about:blank");
        assert_eq!(normalize_url("http://a/b").unwrap(), "http://a/b");
        assert_eq!(
            normalize_url("localhost:3000").unwrap(),
            "http://localhost:3000"
        );
        assert_eq!(
            normalize_url("myhost:8080/x").unwrap(),
            "http://myhost:8080/x"
        );
        assert_eq!(
            normalize_url("data:text/html,x").unwrap(),
            "data:text/html,x"
        );
        assert_eq!(
            normalize_url("FILE:///ws/a.html").unwrap(),
            "FILE:///ws/a.html"
        );
        assert!(normalize_url(" ").is_err());
        assert!(normalize_url("not a url").is_err());
    }

    #[test]
    fn only_web_file_about_and_data_urls_are_opened() {
        for refused in [
            "view-source:file:///etc/passwd",
            "VIEW-SOURCE:https://example.com",
            "vi\new-source:file:///etc/passwd",
            "chrome://settings",
            "filesystem:file:///x",
            "ftp://example.com/x",
        ] {
            let err = normalize_url(refused).unwrap_err().to_string();
            assert!(err.contains("are not opened"), "{refused}: {err}");
        }
        // An extension's own pages are a front end too.
        assert!(normalize_url("chrome-extension://abc/options.html").is_ok());
    }
}
