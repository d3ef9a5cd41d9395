//! The CLI's session commands against a running `devlens serve --http`: one browser session
//! lives across separate `devlens browser …` and `devlens debug …` processes — launch, navigate,
//! look, set a breakpoint, click into it, inspect the paused frame, resume, read the result.
//! Without a server, the command says how to start one.

use crate::common;

const APP_JS: &str = r#"function price(qty, unit) {
  const total = qty * unit;
  return total * 1.2;
}
document.getElementById("buy").addEventListener("click", () => {
  console.warn("buying", 3);
  document.getElementById("out").textContent = String(price(3, 10));
});
"#;

const PAGE: &str = r#"<!doctype html><html><head><meta charset=utf-8><title>Shop</title></head>
<body><label>Coupon <input id="coupon"></label><button id="buy">Buy</button><p id="out"></p>
<script src="/static/app.js"></script></body></html>"#;

async fn fixture_server() -> String {
    common::serve_page_with_script(PAGE, APP_JS).await
}

/// `devlens <args>` against the server at `server`: (exit code, stdout, stderr).
fn devlens(data_dir: &std::path::Path, server: &str, args: &[&str]) -> (i32, String, String) {
    let output = common::devlens(data_dir)
        .env("DEVLENS_SERVER", server)
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs a command that must succeed; its stdout.
fn ok(data_dir: &std::path::Path, server: &str, args: &[&str]) -> String {
    let (code, out, err) = devlens(data_dir, server, args);
    assert_eq!(code, 0, "devlens {args:?} failed:\n{err}\n{out}");
    out
}

#[test]
fn without_a_server_the_command_says_how_to_start_one() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = format!("127.0.0.1:{port}");
    let (code, _, err) = devlens(dir.path(), &server, &["browser", "click", "#buy"]);
    assert_eq!(code, 4, "unavailable: {err}");
    assert!(
        err.contains(&format!("no devlens server answers at http://{server}")),
        "{err}"
    );
    assert!(err.contains("devlens serve --http"), "{err}");
    let (code, _, err) = devlens(dir.path(), &server, &["debug", "break", "app.js"]);
    assert_eq!(code, 2, "a bad location is the caller's to fix: {err}");
    assert!(err.contains("FILE:LINE"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_lives_across_commands() {
    if !common::browser_available() {
        return;
    }
    let site = fixture_server().await;
    let dir = tempfile::tempdir().unwrap();
    let (_server, base) = common::serve_http(common::devlens_process(dir.path())).await;
    let data = dir.path().to_path_buf();
    let page = format!("{site}/");
    // The commands block; the fixture site and the server run on.
    tokio::task::spawn_blocking(move || {
        let d = data.as_path();
        let b = base.as_str();
        assert!(ok(d, b, &["browser", "launch"]).contains("launched"));
        let loaded = ok(d, b, &["browser", "navigate", &page]);
        assert!(loaded.contains("Shop"), "{loaded}");
        let snapshot = ok(d, b, &["browser", "snapshot", "--interactive"]);
        assert!(snapshot.contains("Buy"), "{snapshot}");
        assert!(ok(d, b, &["browser", "fill", "#coupon", "SPRING"]).contains("SPRING"));
        // The state is the server's: the next command sees the value the last one typed.
        let value = ok(
            d,
            b,
            &["browser", "eval", "document.getElementById('coupon').value"],
        );
        assert!(value.contains("SPRING"), "{value}");

        let set = ok(d, b, &["debug", "break", "app.js:2"]);
        assert!(set.contains("app.js"), "{set}");
        let clicked = ok(d, b, &["browser", "click", "#buy"]);
        assert!(clicked.contains("Paused (breakpoint)"), "{clicked}");
        let stack = ok(d, b, &["debug", "stack"]);
        assert!(stack.contains("price"), "{stack}");
        let product = ok(d, b, &["debug", "eval", "qty * unit"]);
        assert!(product.trim_end().ends_with("(number) 30"), "{product}");
        ok(d, b, &["debug", "resume"]);
        let out = ok(
            d,
            b,
            &[
                "browser",
                "eval",
                "document.getElementById('out').textContent",
            ],
        );
        assert_eq!(out.trim(), "\"36\"", "{out}");
        let console = ok(d, b, &["browser", "console", "--json"]);
        let console: serde_json::Value = serde_json::from_str(&console).unwrap();
        assert!(console.to_string().contains("buying"), "{console}");

        // Not paused any more: the caller's mistake, with what to do.
        let (code, _, err) = devlens(d, b, &["debug", "stack"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("not paused"), "{err}");
        let shot = d.join("page.png");
        ok(
            d,
            b,
            &["browser", "screenshot", "--out", shot.to_str().unwrap()],
        );
        assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
        ok(d, b, &["browser", "close"]);
    })
    .await
    .unwrap();
}
