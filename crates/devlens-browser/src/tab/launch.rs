//! Finding, starting and stopping Chrome, and parsing DevTools endpoints.
//!
//! devlens starts Chrome itself instead of through chromiumoxide's `Browser::launch` so that a
//! browser it launched can never outlive it. On Unix the browser runs under a tiny `sh` guard
//! whose stdin is a pipe from devlens: when devlens exits for any reason (even SIGKILL) the pipe
//! closes, the guard stops Chrome and removes the temporary profile. The guard lives in its own
//! process group, so a Ctrl-C in devlens's terminal reaches devlens only and the normal shutdown
//! path runs. Flags are passed to Chrome directly, with their leading dashes (chromiumoxide's
//! `BrowserConfig` would add a second pair).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

use crate::error::{BrowserError, Result};

/// Executable names tried on `PATH`, in order.
const PATH_NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// Where browsers usually live when they are not on `PATH`.
const STANDARD_LOCATIONS: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/snap/bin/chromium",
    "/opt/google/chrome/chrome",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe",
];

/// How long Chrome may take to print its DevTools endpoint.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(20);
/// How many lines of the browser's stderr are kept for error messages.
const STDERR_LINES: usize = 12;

/// How to launch a browser.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct LaunchOptions {
    /// The Chrome/Chromium executable. Default: `CHROME_PATH`, then the usual names on `PATH`
    /// and install locations.
    pub chrome_path: Option<PathBuf>,
    /// Run without a window (default true).
    pub headless: bool,
    /// A profile directory to use. Default: a fresh temporary one, removed when the browser
    /// closes.
    pub user_data_dir: Option<PathBuf>,
    /// The remote debugging port, so other tools can attach too. Default: any free port.
    pub port: Option<u16>,
    /// Window size in CSS pixels (default 1280x720).
    pub window_width: u32,
    pub window_height: u32,
    /// More Chrome flags, e.g. `--lang=de`.
    pub extra_args: Vec<String>,
    /// The id of the new connection. Default: `c1`, `c2`, ...
    pub connection_id: Option<String>,
    /// Whether Chrome runs in its sandbox. Default: yes, unless devlens runs as root.
    pub sandbox: Sandbox,
}

/// Whether a launched Chrome runs in its own sandbox, which keeps a compromised renderer (a page
/// exploiting a browser bug) away from the user's files and processes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum Sandbox {
    /// In the sandbox, unless devlens runs as root: Chrome refuses to start sandboxed as root.
    #[default]
    Auto,
    /// Without the sandbox, because the configuration says so (`[browser] no_sandbox = true`):
    /// for containers whose kernel does not let Chrome build it.
    Disabled,
}

/// How a launched browser ended up running: what the launch answer reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SandboxState {
    /// In Chrome's sandbox.
    Sandboxed,
    /// Without it: devlens runs as root.
    OffAsRoot,
    /// Without it: `[browser] no_sandbox = true`.
    OffConfigured,
}

impl SandboxState {
    /// Decides for a launch: `as_root` is whether devlens runs as root.
    pub fn decide(sandbox: Sandbox, as_root: bool) -> Self {
        match sandbox {
            Sandbox::Disabled => Self::OffConfigured,
            Sandbox::Auto if as_root => Self::OffAsRoot,
            Sandbox::Auto => Self::Sandboxed,
        }
    }

    pub fn is_sandboxed(self) -> bool {
        self == Self::Sandboxed
    }

    /// As the launch answer says it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Sandboxed => "sandboxed",
            Self::OffAsRoot => "without Chrome's sandbox (running as root)",
            Self::OffConfigured => "without Chrome's sandbox (configured)",
        }
    }
}

/// Whether this process runs as root (effective uid 0): Chrome cannot use its sandbox then.
pub fn running_as_root() -> bool {
    #[cfg(target_os = "linux")]
    {
        // `Uid:` real, effective, saved, file-system.
        if let Ok(status) = std::fs::read_to_string("/proc/self/status")
            && let Some(line) = status.lines().find(|l| l.starts_with("Uid:"))
        {
            return line.split_whitespace().nth(2) == Some("0");
        }
    }
    #[cfg(unix)]
    {
        // A file this process creates is owned by its effective uid.
        use std::os::unix::fs::MetadataExt as _;
        if let Ok(meta) = tempfile::tempfile().and_then(|f| f.metadata()) {
            return meta.uid() == 0;
        }
    }
    false
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            chrome_path: None,
            headless: true,
            user_data_dir: None,
            port: None,
            window_width: 1280,
            window_height: 720,
            extra_args: Vec::new(),
            connection_id: None,
            sandbox: Sandbox::Auto,
        }
    }
}

/// Where a running Chrome's DevTools endpoint is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectOptions {
    /// `9222`, `host:9222`, `http://host:9222` or a `ws://.../devtools/browser/...` URL.
    pub endpoint: String,
    /// The id of the new connection. Default: `c1`, `c2`, ...
    #[serde(default)]
    pub connection_id: Option<String>,
}

impl ConnectOptions {
    /// An endpoint from the host/port pair most tools ask for (host defaults to 127.0.0.1).
    pub fn host_port(host: Option<&str>, port: u16) -> Self {
        let host = host.filter(|h| !h.trim().is_empty()).unwrap_or("127.0.0.1");
        Self {
            endpoint: format!("{}:{port}", host.trim()),
            connection_id: None,
        }
    }
}

/// Turns what a user typed into a URL chromiumoxide can connect to.
pub(crate) fn normalize_endpoint(input: &str) -> Result<String> {
    let s = input.trim().trim_end_matches('/');
    if s.is_empty() {
        return Err(BrowserError::InvalidInput(
            "give the DevTools endpoint to connect to: a port (9222), host:port, http://host:port or a ws:// URL".into(),
        ));
    }
    if s.starts_with("ws://") || s.starts_with("wss://") {
        return Ok(s.to_string());
    }
    if s.starts_with("http://") || s.starts_with("https://") {
        return Ok(s.to_string());
    }
    if let Ok(port) = s.parse::<u16>() {
        return Ok(format!("http://127.0.0.1:{port}"));
    }
    match s.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
            Ok(format!("http://{s}"))
        }
        _ => Err(BrowserError::InvalidInput(format!(
            "`{input}` is not a DevTools endpoint: use a port (9222), host:port, http://host:port or a ws:// URL"
        ))),
    }
}

/// The http endpoint other tools can attach to, from the browser's websocket URL.
pub(crate) fn http_endpoint(ws_url: &str) -> Option<String> {
    let rest = ws_url
        .strip_prefix("ws://")
        .or_else(|| ws_url.strip_prefix("wss://"))?;
    let authority = rest.split('/').next()?;
    Some(format!("http://{authority}"))
}

/// Finds the browser executable: the explicit path, then `CHROME_PATH`, then `PATH`, then the
/// usual install locations.
pub fn find_chrome(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        return checked(path, "--chrome-path");
    }
    if let Some(env) = std::env::var_os("CHROME_PATH").filter(|v| !v.is_empty()) {
        return checked(Path::new(&env), "CHROME_PATH");
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            for name in PATH_NAMES {
                let candidate = dir.join(name);
                if candidate.is_file() {
                    return Ok(candidate);
                }
            }
        }
    }
    for location in STANDARD_LOCATIONS {
        let candidate = Path::new(location);
        if candidate.is_file() {
            return Ok(candidate.to_path_buf());
        }
    }
    Err(BrowserError::ChromeNotFound {
        searched: PATH_NAMES.join(", "),
    })
}

pub(crate) fn checked(path: &Path, origin: &'static str) -> Result<PathBuf> {
    if path.is_file() {
        Ok(path.to_path_buf())
    } else {
        Err(BrowserError::ChromePathInvalid {
            path: path.display().to_string(),
            origin,
        })
    }
}

/// The flags every launch gets. `--no-sandbox` only when `sandbox` says so (root, or configured);
/// headless Chromium on a locked-down machine (containers, CI) needs no GPU; the rest keep
/// Chrome from phoning home, showing first-run UI or throttling tabs that are not in front
/// (agents drive background tabs too).
fn chrome_args(opts: &LaunchOptions, sandbox: SandboxState, profile: &Path) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    if !sandbox.is_sandboxed() {
        args.push("--no-sandbox".into());
    }
    args.extend(
        [
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-default-apps",
            "--disable-dev-shm-usage",
            "--disable-background-timer-throttling",
            "--disable-backgrounding-occluded-windows",
            "--disable-renderer-backgrounding",
            "--disable-breakpad",
            "--disable-features=Translate,MediaRouter,OptimizationHints",
            "--password-store=basic",
            "--use-mock-keychain",
            "--mute-audio",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    if opts.headless {
        args.push("--headless".into());
        args.push("--hide-scrollbars".into());
    }
    args.push(format!(
        "--remote-debugging-port={}",
        opts.port.unwrap_or(0)
    ));
    args.push(format!("--user-data-dir={}", profile.display()));
    args.push(format!(
        "--window-size={},{}",
        opts.window_width.max(100),
        opts.window_height.max(100)
    ));
    for extra in &opts.extra_args {
        let flag = extra.trim();
        // The sandbox is decided above (and reported); a flag cannot turn it off unannounced.
        if flag.is_empty() || flag.trim_start_matches('-') == "no-sandbox" {
            continue;
        }
        // Accept flags with or without their dashes; Chrome wants two.
        args.push(format!("--{}", flag.trim_start_matches('-')));
    }
    // No window of Chrome's own: devlens opens the first tab itself, so no start-up navigation
    // can land after the first page devlens loads.
    args.push("--no-startup-window".into());
    args
}

/// Stops Chrome when devlens's end of stdin closes, then removes the temporary profile.
///
/// Once Chrome runs, the guard's own stderr goes to /dev/null: devlens may be gone, and a write
/// to the dead pipe would kill the guard before it cleans up. Chrome's helper processes (network
/// service, renderers) can outlive the main one and keep writing to the profile — even recreate
/// it — so they get a TERM too before the profile is removed, and the removal is checked again
/// after a pause. `kill -TERM -$$` reaches the guard's own process group only, which exists
/// because devlens starts the guard as a group leader (`process_group(0)`).
#[cfg(unix)]
const GUARD_SCRIPT: &str = r#"exec 3<&0 0</dev/null
"$@" 3<&- &
pid=$!
echo "devlens-chrome-pid $pid" >&2
exec 2>/dev/null
( while read -r _; do :; done; kill -TERM "$pid"; sleep 5; kill -KILL "$pid" ) <&3 &
watcher=$!
exec 3<&-
wait "$pid"
status=$?
kill "$watcher"
trap '' TERM
kill -TERM -$$
case "$DEVLENS_TEMP_PROFILE" in
  *devlens-chrome-*)
    gone=0
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      rm -rf -- "$DEVLENS_TEMP_PROFILE"
      if [ -e "$DEVLENS_TEMP_PROFILE" ]; then gone=0; else gone=$((gone + 1)); fi
      [ "$gone" -ge 3 ] && break
      sleep 0.3
    done ;;
esac
exit $status
"#;

/// A browser process devlens started.
pub(crate) struct LaunchedChrome {
    pub executable: PathBuf,
    /// Whether it runs in Chrome's sandbox.
    pub sandbox: SandboxState,
    /// The browser's own process id, when known.
    pub pid: Option<u32>,
    /// The guard (Unix) or the browser itself.
    child: Child,
    /// devlens's end of the guard's stdin: dropping it stops the browser.
    stdin: Option<ChildStdin>,
    /// A profile directory devlens created and removes.
    temp_profile: Option<PathBuf>,
    pub headless: bool,
    /// Set when the browser's stderr closed: the browser (and its guard) exited.
    pub exited: Arc<AtomicBool>,
}

impl std::fmt::Debug for LaunchedChrome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaunchedChrome")
            .field("executable", &self.executable)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Spawned {
    pub chrome: LaunchedChrome,
    pub ws_url: String,
}

type Tail = Arc<Mutex<VecDeque<String>>>;

/// Starts the browser and waits for its DevTools websocket URL.
pub(crate) async fn spawn_chrome(opts: &LaunchOptions) -> Result<Spawned> {
    let executable = find_chrome(opts.chrome_path.as_deref())?;
    let (profile, temp_profile) = match &opts.user_data_dir {
        Some(dir) => (dir.clone(), None),
        None => {
            let dir = tempfile::Builder::new()
                .prefix("devlens-chrome-")
                .tempdir()
                .map_err(|e| {
                    launch_failed(
                        &executable,
                        format!("cannot create a temporary profile: {e}"),
                        vec![],
                    )
                })?
                .keep();
            (dir.clone(), Some(dir))
        }
    };
    let sandbox = SandboxState::decide(opts.sandbox, running_as_root());
    let args = chrome_args(opts, sandbox, &profile);

    let mut command = guarded_command(&executable, &args);
    if let Some(dir) = &temp_profile {
        command.env("DEVLENS_TEMP_PROFILE", dir);
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            remove_dir(temp_profile.as_deref());
            return Err(launch_failed(
                &executable,
                format!("cannot start it: {e}"),
                vec![],
            ));
        }
    };
    let stdin = child.stdin.take();
    let tail: Tail = Arc::new(Mutex::new(VecDeque::new()));
    let (ws_tx, ws_rx) = oneshot::channel::<StderrSignal>();
    let (pid_tx, mut pid_rx) = oneshot::channel::<u32>();
    let exited = Arc::new(AtomicBool::new(false));
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(read_stderr(
            stderr,
            tail.clone(),
            ws_tx,
            pid_tx,
            exited.clone(),
        ));
    }
    let mut chrome = LaunchedChrome {
        executable: executable.clone(),
        sandbox,
        pid: if cfg!(unix) { None } else { child.id() },
        child,
        stdin,
        temp_profile,
        headless: opts.headless,
        exited,
    };

    let outcome = tokio::select! {
        signal = ws_rx => signal.ok(),
        _ = chrome.child.wait() => None,
        _ = tokio::time::sleep(LAUNCH_TIMEOUT) => Some(StderrSignal::TimedOut),
    };
    // The guard prints the pid before the browser prints anything.
    if let Ok(pid) = pid_rx.try_recv() {
        chrome.pid = Some(pid);
    }
    let lines: Vec<String> = tail
        .lock()
        .map(|t| t.iter().cloned().collect())
        .unwrap_or_default();
    let failure = match outcome {
        Some(StderrSignal::Listening(ws_url)) => return Ok(Spawned { chrome, ws_url }),
        Some(StderrSignal::PortInUse) => format!(
            "the debugging port {} is already in use; pick another port or leave it out",
            opts.port.unwrap_or(0)
        ),
        Some(StderrSignal::TimedOut) => format!(
            "it did not open its DevTools endpoint within {} s",
            LAUNCH_TIMEOUT.as_secs()
        ),
        None => {
            if lines.iter().any(|l| l.contains("existing browser session")) {
                "the profile directory is in use by another Chrome; close it or use another user-data-dir".to_string()
            } else if sandbox.is_sandboxed() && lines.iter().any(|l| sandbox_failure(l)) {
                "Chrome's sandbox cannot start on this machine (common in containers without \
                 unprivileged user namespaces): allow them (e.g. `sysctl \
                 kernel.unprivileged_userns_clone=1`), or set `no_sandbox = true` under \
                 [browser] in devlens.toml to run Chrome without it"
                    .to_string()
            } else {
                "it exited right after starting".to_string()
            }
        }
    };
    chrome.stop().await;
    Err(launch_failed(&executable, failure, lines))
}

/// A line Chrome prints when it cannot build its sandbox.
fn sandbox_failure(line: &str) -> bool {
    line.contains("No usable sandbox")
        || line.contains("SUID sandbox")
        || line.contains("Running as root without --no-sandbox")
}

fn launch_failed(executable: &Path, reason: String, stderr: Vec<String>) -> BrowserError {
    BrowserError::LaunchFailed {
        executable: executable.display().to_string(),
        reason,
        stderr,
    }
}

#[cfg(unix)]
fn guarded_command(executable: &Path, args: &[String]) -> Command {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(GUARD_SCRIPT)
        .arg("devlens-chrome-guard")
        .arg(executable)
        .args(args)
        // Terminal signals (Ctrl-C) go to devlens only; devlens then closes the browser.
        .process_group(0)
        .kill_on_drop(false);
    command
}

#[cfg(not(unix))]
fn guarded_command(executable: &Path, args: &[String]) -> Command {
    let mut command = Command::new(executable);
    command.args(args).kill_on_drop(true);
    command
}

enum StderrSignal {
    Listening(String),
    PortInUse,
    TimedOut,
}

/// Drains the browser's stderr for its whole life (a full pipe would block Chrome), keeping the
/// last lines for error messages and reporting the endpoint and the browser's pid.
async fn read_stderr(
    stderr: tokio::process::ChildStderr,
    tail: Tail,
    ws_tx: oneshot::Sender<StderrSignal>,
    pid_tx: oneshot::Sender<u32>,
    exited: Arc<AtomicBool>,
) {
    let mut reader = BufReader::new(stderr);
    let mut ws_tx = Some(ws_tx);
    let mut pid_tx = Some(pid_tx);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf).trim_end().to_string();
        if let Some(pid) = line.strip_prefix("devlens-chrome-pid ") {
            if let (Some(tx), Ok(pid)) = (pid_tx.take(), pid.trim().parse()) {
                let _ = tx.send(pid);
            }
            continue;
        }
        if let Some((_, ws)) = line.split_once("DevTools listening on ")
            && let Some(tx) = ws_tx.take()
        {
            let _ = tx.send(StderrSignal::Listening(ws.trim().to_string()));
        } else if line.contains("Cannot start http server for devtools")
            && let Some(tx) = ws_tx.take()
        {
            let _ = tx.send(StderrSignal::PortInUse);
        }
        // Debian's wrapper script prints a harmless shell warning; keep it out of messages.
        if line.is_empty() || line.contains("unexpected operator") {
            continue;
        }
        if let Ok(mut t) = tail.lock() {
            if t.len() == STDERR_LINES {
                t.pop_front();
            }
            t.push_back(line);
        }
    }
    exited.store(true, Ordering::SeqCst);
}

impl LaunchedChrome {
    /// Stops the browser and waits for it, removing a temporary profile. Call after asking the
    /// browser to close over CDP; this is the fallback when it did not.
    pub(crate) async fn stop(&mut self) {
        // Closing the pipe tells the guard to stop the browser (TERM, then KILL after 5 s).
        self.stdin.take();
        let exited = tokio::time::timeout(Duration::from_secs(8), self.child.wait())
            .await
            .is_ok();
        if !exited {
            let _ = self.child.kill().await;
        }
        if cfg!(not(unix)) {
            let _ = self.child.kill().await;
        }
        // The guard removes the profile itself; this covers a guard that was killed.
        if let Some(dir) = self.temp_profile.take() {
            for _ in 0..20 {
                if !dir.exists() {
                    break;
                }
                if std::fs::remove_dir_all(&dir).is_ok() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

impl Drop for LaunchedChrome {
    fn drop(&mut self) {
        // Dropping `stdin` (a field) closes the pipe: the guard stops the browser and removes the
        // temporary profile even though nothing here can await. Without the guard (Windows),
        // `kill_on_drop` ends the browser and the profile is removed below, best effort.
        if cfg!(not(unix)) {
            let _ = self.child.start_kill();
            remove_dir(self.temp_profile.as_deref());
        }
    }
}

fn remove_dir(dir: Option<&Path>) {
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_normalized() {
        assert_eq!(normalize_endpoint("9222").unwrap(), "http://127.0.0.1:9222");
        assert_eq!(
            normalize_endpoint("localhost:9333").unwrap(),
            "http://localhost:9333"
        );
        assert_eq!(
            normalize_endpoint("http://127.0.0.1:9222/").unwrap(),
            "http://127.0.0.1:9222"
        );
        let ws = "ws://127.0.0.1:9222/devtools/browser/abc";
        assert_eq!(normalize_endpoint(ws).unwrap(), ws);
        assert!(normalize_endpoint("").is_err());
        assert!(normalize_endpoint("not an endpoint").is_err());
        assert!(normalize_endpoint("host:99999").is_err());
        assert_eq!(http_endpoint(ws).as_deref(), Some("http://127.0.0.1:9222"));
    }

    #[test]
    fn flags_get_their_dashes_once() {
        let opts = LaunchOptions {
            extra_args: vec!["lang=de".into(), "--foo".into(), " ".into()],
            ..Default::default()
        };
        let args = chrome_args(&opts, SandboxState::OffAsRoot, Path::new("profile"));
        assert!(args.contains(&"--lang=de".to_string()));
        assert!(args.contains(&"--foo".to_string()));
        assert!(args.contains(&"--headless".to_string()));
        assert!(args.contains(&"--no-sandbox".to_string()));
        assert!(args.contains(&"--remote-debugging-port=0".to_string()));
        assert!(args.iter().all(|a| !a.starts_with("----")));
        assert_eq!(args.last().map(String::as_str), Some("--no-startup-window"));
    }

    #[test]
    fn the_sandbox_is_off_only_as_root_or_when_configured() {
        assert_eq!(
            SandboxState::decide(Sandbox::Auto, false),
            SandboxState::Sandboxed
        );
        assert_eq!(
            SandboxState::decide(Sandbox::Auto, true),
            SandboxState::OffAsRoot
        );
        assert_eq!(
            SandboxState::decide(Sandbox::Disabled, false),
            SandboxState::OffConfigured
        );
        let opts = LaunchOptions {
            // A flag cannot switch it off behind the report's back.
            extra_args: vec!["--no-sandbox".into(), "no-sandbox".into()],
            ..Default::default()
        };
        let sandboxed = chrome_args(&opts, SandboxState::Sandboxed, Path::new("p"));
        assert!(
            !sandboxed.iter().any(|a| a.contains("no-sandbox")),
            "{sandboxed:?}"
        );
        for off in [SandboxState::OffAsRoot, SandboxState::OffConfigured] {
            let args = chrome_args(&opts, off, Path::new("p"));
            assert_eq!(
                args.iter().filter(|a| *a == "--no-sandbox").count(),
                1,
                "{args:?}"
            );
        }
        assert_eq!(SandboxState::Sandboxed.describe(), "sandboxed");
        assert_eq!(
            SandboxState::OffAsRoot.describe(),
            "without Chrome's sandbox (running as root)"
        );
        assert_eq!(
            SandboxState::OffConfigured.describe(),
            "without Chrome's sandbox (configured)"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn root_is_recognised_by_the_effective_uid() {
        use std::os::unix::fs::MetadataExt as _;
        let owner = tempfile::tempfile().unwrap().metadata().unwrap().uid();
        assert_eq!(running_as_root(), owner == 0);
    }

    #[test]
    fn explicit_path_must_exist() {
        let e = find_chrome(Some(Path::new("/nonexistent/chrome"))).unwrap_err();
        assert!(e.to_string().contains("--chrome-path"), "{e}");
    }
}
