//! The CLI's way to a running `devlens serve --http`: session commands (`devlens browser click`,
//! `devlens debug step`, …) act on that server's browser through its HTTP API, so one browser
//! session — its tabs, console, breakpoints, a paused page — lives across commands, as it does
//! for an agent over MCP.

use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;

use devlens_app::{AppError, ErrorKind};
use devlens_core::Config;

/// Where a server is looked for when nothing says otherwise (what `scripts/run` starts).
pub(crate) const DEFAULT_SERVER: &str = "127.0.0.1:7878";
/// Long enough for a page load, a breakpoint wait or a trace; the server bounds each call.
const CALL_TIMEOUT: Duration = Duration::from_secs(180);

/// A running devlens server.
pub(crate) struct Remote {
    base: String,
    client: reqwest::Client,
    /// The bearer token sent with every call (a server beyond loopback requires one).
    token: Option<String>,
}

// The token stays out of debug output.
impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish()
    }
}

impl Remote {
    /// The server `--server` names, else `DEVLENS_SERVER`, else `[server] http` of the config,
    /// else 127.0.0.1:7878. `host:port` and full URLs both work. `token` (`--token` or
    /// `DEVLENS_TOKEN`) goes with every call when given.
    pub(crate) fn new(
        server: Option<&str>,
        token: Option<&str>,
        config: &Config,
    ) -> anyhow::Result<Self> {
        let env = std::env::var("DEVLENS_SERVER")
            .ok()
            .filter(|s| !s.is_empty());
        let address = server
            .map(str::to_string)
            .or(env)
            .or_else(|| config.file.server.http.clone())
            .unwrap_or_else(|| DEFAULT_SERVER.to_string());
        let base = if address.contains("://") {
            address.trim_end_matches('/').to_string()
        } else {
            format!("http://{}", address.trim_end_matches('/'))
        };
        // ring is installed already: main() does it first (devlens_core::tls).
        let client = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .build()
            .context("cannot set up an HTTP client")?;
        let token = token
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        Ok(Self {
            base,
            client,
            token,
        })
    }

    /// Calls a tool route (`browser/click_element`) with its arguments; the compact text.
    pub(crate) async fn text(&self, route: &str, args: Value) -> anyhow::Result<String> {
        let response = self.post(route, args, "text/plain").await?;
        response.text().await.context("reading the server's answer")
    }

    /// As [`Remote::text`], the structured answer.
    pub(crate) async fn json(&self, route: &str, args: Value) -> anyhow::Result<Value> {
        let response = self.post(route, args, "application/json").await?;
        response.json().await.context("reading the server's answer")
    }

    async fn post(
        &self,
        route: &str,
        args: Value,
        accept: &str,
    ) -> anyhow::Result<reqwest::Response> {
        let url = format!("{}/api/{route}", self.base);
        let mut request = self
            .client
            .post(&url)
            .header(reqwest::header::ACCEPT, accept)
            .json(&args);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| self.unreachable(&e))?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        let message = body["error"]
            .as_str()
            .map_or_else(|| format!("the server answered {status}"), str::to_string);
        let kind = ErrorKind::ALL
            .into_iter()
            .find(|k| serde_json::to_value(k).ok().as_ref() == Some(&body["kind"]))
            .unwrap_or(ErrorKind::Upstream);
        Err(AppError::new(kind, message).into())
    }

    fn unreachable(&self, e: &reqwest::Error) -> anyhow::Error {
        let why = if e.is_timeout() {
            format!(
                "{} did not answer within {} s",
                self.base,
                CALL_TIMEOUT.as_secs()
            )
        } else {
            format!("no devlens server answers at {}", self.base)
        };
        AppError::new(
            ErrorKind::Unavailable,
            format!(
                "{why}. Session commands act on the browser of a running server: start one with \
                 `devlens serve --http {DEFAULT_SERVER}` (or scripts/run) in another terminal, \
                 or point at yours with --server HOST:PORT or DEVLENS_SERVER. (Page commands \
                 also run one-shot: --url loads the page in a browser of their own, --connect \
                 uses a running Chrome.)"
            ),
        )
        .into()
    }
}
