//! Connections and tabs: launching, attaching a second connection to a running Chrome and seeing
//! the tabs it already had, switching/opening/closing tabs, and no browser left behind.

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::{block_on, browser_available, server};
use devlens_browser::{
    BrowserError, BrowserSessions, ConnectOptions, ConnectionKind, LaunchOptions, TabSelector,
};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Is the process still there (and not a zombie)?
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn profile_dir(pid: u32) -> Option<PathBuf> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    cmdline
        .split(|b| *b == 0)
        .filter_map(|a| std::str::from_utf8(a).ok())
        .find_map(|a| a.strip_prefix("--user-data-dir="))
        .map(PathBuf::from)
}

async fn gone_within(pid: u32, limit: Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if !running(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[test]
fn launch_attach_tabs_and_clean_up() {
    if !browser_available() {
        return;
    }
    block_on(async {
        let base = server().await;
        let sessions = BrowserSessions::new();
        let port = free_port();
        let launched = sessions
            .launch(&LaunchOptions {
                port: Some(port),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(launched.id, "c1");
        assert_eq!(launched.kind, ConnectionKind::Launched);
        assert_eq!(launched.endpoint, format!("http://127.0.0.1:{port}"));
        assert_eq!(launched.tabs, 1);
        assert!(
            launched.to_text().contains("(active) launched"),
            "{}",
            launched.to_text()
        );
        let pid = launched.pid.expect("pid of the launched browser");
        assert!(running(pid));
        let profile = profile_dir(pid).expect("temporary profile");
        assert!(profile.exists());

        // Tabs opened through the first connection...
        sessions
            .new_tab(None, Some(&format!("{base}/form")))
            .await
            .unwrap();
        let opened = sessions
            .new_tab(None, Some(&format!("{base}/elements")))
            .await
            .unwrap();
        assert_eq!(opened.navigation.as_ref().unwrap().title, "Elements");
        assert!(opened.tab.active);

        // ...are there for a second connection attached to the same browser.
        let attached = sessions
            .connect(&ConnectOptions::host_port(None, port))
            .await
            .unwrap();
        assert_eq!(
            (attached.id.as_str(), attached.kind),
            ("c2", ConnectionKind::Connected)
        );
        assert!(attached.active);
        let tabs = sessions.tabs(Some("c2")).await.unwrap();
        let titles: Vec<&str> = tabs.tabs.iter().map(|t| t.title.as_str()).collect();
        assert!(
            titles.contains(&"Sign up") && titles.contains(&"Elements"),
            "{titles:?}"
        );
        assert_eq!(tabs.tabs.len(), 3, "{}", tabs.to_text());

        // Switch by title and by index; calls without a tab act on the active one.
        let picked = sessions
            .switch_tab(Some("c2"), &TabSelector::Title("sign".into()))
            .await
            .unwrap();
        assert_eq!(picked.title, "Sign up");
        let tab = sessions.tab(Some("c2")).await.unwrap();
        let value = tab
            .evaluate("document.title", &Default::default())
            .await
            .unwrap()
            .value;
        assert_eq!(value, serde_json::json!("Sign up"));
        let by_index = sessions
            .switch_tab(Some("c2"), &TabSelector::Index(picked.index))
            .await
            .unwrap();
        assert_eq!(by_index.id, picked.id);
        let err = sessions
            .switch_tab(Some("c2"), &TabSelector::Title("nothing like it".into()))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("Open tabs:"), "{err}");

        // Close a tab through one connection; the other stops listing it.
        let left = sessions
            .close_tab(Some("c2"), Some(&TabSelector::Url("/elements".into())))
            .await
            .unwrap();
        assert_eq!(left.tabs.len(), 2, "{}", left.to_text());
        let mut first_sees = 0;
        for _ in 0..20 {
            first_sees = sessions.tabs(Some("c1")).await.unwrap().tabs.len();
            if first_sees == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(first_sees, 2);

        let list = sessions.connections();
        assert_eq!(list.connections.len(), 2);
        assert!(
            list.to_text().contains("c2 (active) connected"),
            "{}",
            list.to_text()
        );
        sessions.use_connection("c1").unwrap();
        let err = sessions.use_connection("c9").unwrap_err();
        assert!(err.to_string().contains("Connections: c1, c2"), "{err}");

        // Disconnecting the attached connection leaves the browser running...
        let d = sessions.disconnect(Some("c2")).await.unwrap();
        assert!(!d.browser_closed);
        assert!(running(pid));
        assert_eq!(sessions.tabs(None).await.unwrap().tabs.len(), 2);
        // ...disconnecting the launcher closes it and removes its temporary profile.
        let d = sessions.disconnect(None).await.unwrap();
        assert!(d.browser_closed);
        assert!(d.to_text().contains("was closed"));
        assert!(
            gone_within(pid, Duration::from_secs(10)).await,
            "browser still running"
        );
        assert!(
            !profile.exists(),
            "profile left behind: {}",
            profile.display()
        );
        let err = sessions.tab(None).await.unwrap_err();
        assert!(matches!(err, BrowserError::NotConnected), "{err}");
    });
}

#[test]
fn dropping_the_sessions_stops_the_browser() {
    if !browser_available() {
        return;
    }
    block_on(async {
        let sessions = BrowserSessions::new();
        let info = sessions.launch(&LaunchOptions::default()).await.unwrap();
        let pid = info.pid.unwrap();
        let profile = profile_dir(pid).unwrap();
        drop(sessions);
        assert!(
            gone_within(pid, Duration::from_secs(10)).await,
            "orphaned browser {pid}"
        );
        for _ in 0..50 {
            if !profile.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(!profile.exists(), "profile left behind");
    });
}

#[test]
fn failures_say_what_to_do() {
    block_on(async {
        let sessions = BrowserSessions::new();
        let err = sessions.tab(None).await.unwrap_err();
        assert!(
            err.to_string()
                .starts_with("no browser connected. Launch one"),
            "{err}"
        );
        let err = sessions.tabs(Some("c1")).await.unwrap_err();
        assert!(matches!(err, BrowserError::NotConnected), "{err}");

        let err = sessions
            .connect(&ConnectOptions::host_port(None, free_port()))
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("cannot connect to Chrome at http://127.0.0.1:"),
            "{msg}"
        );
        assert!(msg.contains("--remote-debugging-port=9222"), "{msg}");
        let err = sessions
            .connect(&ConnectOptions {
                endpoint: "what?".into(),
                connection_id: None,
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not a DevTools endpoint"), "{err}");

        let err = sessions
            .launch(&LaunchOptions {
                chrome_path: Some("/no/such/chrome".into()),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert!(
            sessions
                .connections()
                .to_text()
                .starts_with("no browser connected")
        );
    });
}

/// A Chromium somebody else started, with a page already open: devlens lists that tab and
/// drives it, and leaves the browser running when it disconnects.
#[test]
fn a_tab_opened_before_connecting_is_listed_and_usable() {
    if !browser_available() {
        return;
    }
    block_on(async {
        let base = server().await;
        let port = free_port();
        let profile = tempfile::tempdir().unwrap();
        let chrome = devlens_browser::find_chrome(None).unwrap();
        let mut child = std::process::Command::new(chrome)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                &format!("--remote-debugging-port={port}"),
                &format!("--user-data-dir={}", profile.path().display()),
                &format!("{base}/form"),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let sessions = BrowserSessions::new();
        let mut connected = None;
        for _ in 0..100 {
            if let Ok(c) = sessions
                .connect(&ConnectOptions::host_port(None, port))
                .await
            {
                connected = Some(c);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let connected = connected.expect("connect to the running Chromium");
        let mut tabs = sessions.tabs(None).await.unwrap();
        for _ in 0..50 {
            if tabs.tabs.iter().any(|t| t.title == "Sign up") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            tabs = sessions.tabs(None).await.unwrap();
        }
        let picked = sessions
            .switch_tab(None, &TabSelector::Title("sign up".into()))
            .await
            .unwrap_or_else(|e| panic!("{e}: {}", tabs.to_text()));
        let tab = sessions.tab(None).await.unwrap();
        assert_eq!(tab.id(), picked.id);
        let value = tab
            .evaluate("document.title", &Default::default())
            .await
            .unwrap()
            .value;
        assert_eq!(value, serde_json::json!("Sign up"), "{}", tabs.to_text());
        let gone = sessions.disconnect(Some(&connected.id)).await.unwrap();
        assert!(!gone.browser_closed);
        assert!(running(child.id()), "the browser was closed");
        let _ = child.kill();
        let _ = child.wait();
    });
}

/// A browser of confined sessions (a server's) loads `file:` pages only inside the workspace and
/// the artifacts folder — whoever asks: a navigation, a page script, an iframe, a symlink. The
/// launch answer says whether Chrome runs in its sandbox.
#[test]
fn a_confined_browser_loads_local_files_only_inside_the_workspace() {
    use devlens_browser::{
        EvaluateOptions, Navigation, SandboxState, SnapshotOptions, running_as_root,
    };
    use devlens_workspace::Places;

    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP SECRET 4711").unwrap();
    let secret_url = format!("file://{}", secret.display());
    std::fs::write(
        ws.join("page.html"),
        format!(
            "<!doctype html><title>Inside</title><h1>inside the workspace</h1>\
             <iframe src=\"{secret_url}\"></iframe>"
        ),
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, ws.join("link.txt")).unwrap();
    let places = Places::new(&ws, &dir.path().join("data"), false).unwrap();
    let root = places.workspace().to_path_buf();

    block_on(async {
        let sessions = BrowserSessions::new();
        sessions.confine_files(&places);
        let launched = sessions.launch(&LaunchOptions::default()).await.unwrap();
        let expected = SandboxState::decide(Default::default(), running_as_root());
        assert_eq!(launched.sandbox, Some(expected));
        assert!(
            launched.to_text().ends_with(expected.describe()),
            "{}",
            launched.to_text()
        );
        let tab = sessions.tab(None).await.unwrap();
        let text = |tab: devlens_browser::Tab| async move {
            tab.snapshot(&SnapshotOptions::default())
                .await
                .unwrap()
                .to_text()
        };

        // Inside: loads. Its iframe of the outside file does not.
        let page = format!("file://{}", root.join("page.html").display());
        let report = tab
            .navigate(&Navigation::Url(page.clone()), None)
            .await
            .unwrap();
        assert_eq!(report.title, "Inside", "{}", report.to_text());
        let shown = text(tab.clone()).await;
        assert!(shown.contains("inside the workspace"), "{shown}");
        assert!(
            !shown.contains("TOP SECRET"),
            "the iframe read the file: {shown}"
        );

        // Straight to the outside file, and through a symlink in the workspace: refused.
        for url in [
            secret_url.clone(),
            format!("file://{}", root.join("link.txt").display()),
        ] {
            let err = tab
                .navigate(&Navigation::Url(url.clone()), None)
                .await
                .unwrap_err()
                .to_string();
            assert!(err.contains("ACCESS_DENIED"), "{url}: {err}");
        }

        // A page script of a workspace page sending the tab there: the file is not shown.
        tab.navigate(&Navigation::Url(page), None).await.unwrap();
        let _ = tab
            .evaluate(
                &format!("location.href = {secret_url:?}; 1"),
                &EvaluateOptions::default(),
            )
            .await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let shown = text(tab.clone()).await;
        assert!(!shown.contains("TOP SECRET"), "{} shows {shown}", tab.url());
        assert!(
            !tab.url().contains("secret.txt") || shown.contains("denied"),
            "{shown}"
        );

        // Unconfined sessions (a CLI run, the user's own files) load it: the check above is
        // the confinement's doing, not Chrome's.
        let open = BrowserSessions::new();
        open.launch(&LaunchOptions::default()).await.unwrap();
        let free = open.tab(None).await.unwrap();
        free.navigate(&Navigation::Url(secret_url.clone()), None)
            .await
            .unwrap();
        assert!(text(free).await.contains("TOP SECRET 4711"));
        open.shutdown().await;
        sessions.shutdown().await;
    });
}
