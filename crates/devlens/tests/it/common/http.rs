//! The REST test client: `devlens serve --http` on a free port, requests and their JSON answers.

use reqwest::StatusCode;
use serde_json::Value;

/// An HTTP client for the tests' requests (devlens' crypto provider installed first, as devlens
/// does: reqwest brings none of its own).
pub fn client() -> reqwest::Client {
    builder().build().expect("an HTTP client")
}

/// A client builder, for tests that set timeouts and the like.
pub fn builder() -> reqwest::ClientBuilder {
    devlens_core::tls::install();
    reqwest::Client::builder()
}

/// A running `devlens serve --http` and its base URL; killed when dropped.
pub struct Server {
    _child: tokio::process::Child,
    pub base: String,
}

/// Starts `cmd` (a devlens command with its environment; `serve --http 127.0.0.1:0` is added).
pub async fn start(cmd: tokio::process::Command) -> Server {
    let (child, base) = super::serve_http(cmd).await;
    Server {
        _child: child,
        base,
    }
}

/// The devlens command with its data in `data_dir`, started there, cleared of the user's
/// environment and without an embedding model.
pub fn command(data_dir: &std::path::Path) -> tokio::process::Command {
    let mut cmd = super::devlens_process(data_dir);
    super::mcp::no_model(&mut cmd, data_dir);
    cmd
}

/// Sends `request`; the status and the JSON answer (a body that is not JSON fails the test).
pub async fn send(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.expect("request");
    let status = response.status();
    let text = response.text().await.expect("body");
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status}: {e}: {text}"));
    (status, value)
}

/// A request that must succeed; its JSON answer.
pub async fn ok(request: reqwest::RequestBuilder) -> Value {
    let (status, body) = send(request).await;
    assert!(status.is_success(), "{status}: {body}");
    body
}

/// The error message of a failed request, checking its status and that it says its kind.
pub async fn error(request: reqwest::RequestBuilder, expected: StatusCode) -> String {
    let (status, body) = send(request).await;
    assert_eq!(status, expected, "{body}");
    assert!(body["kind"].is_string(), "no error kind: {body}");
    body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error message: {body}"))
        .to_string()
}
