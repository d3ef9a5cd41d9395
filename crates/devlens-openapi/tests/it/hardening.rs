//! Inputs found by fuzzing (`scripts/fuzz`, docs/hardening.md) or while writing its targets,
//! and attacks through a spec: each once made devlens panic, hang, exhaust memory or read what it
//! should not, and must now get an answer or a clear error.

use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use devlens_core::outbound::{HostLookup, OutboundPolicy};
use devlens_core::{Classify, ErrorKind};
use devlens_openapi::{OpenApiError, SpecCache, SpecSource};

const MB: u64 = 1024 * 1024;

/// A spec whose one operation answers with `$ref: reference` (a response object elsewhere).
fn spec_referencing(reference: &str) -> String {
    format!(
        "openapi: 3.0.0\ninfo: {{title: t, version: '1'}}\npaths:\n  /a:\n    get:\n      \
         responses:\n        '200': {{$ref: '{reference}'}}\n"
    )
}

async fn load_file(path: &Path) -> Result<Arc<devlens_openapi::ApiSpec>, OpenApiError> {
    SpecCache::new()
        .load(&SpecSource::File(path.to_path_buf()))
        .await
}

/// A `$ref` to a device that never ends (`/dev/zero`) once read forever: its length on disk is
/// 0, so the size check passed. Such a `$ref` now leads outside the spec's folder and is refused
/// before anything is read; the spec itself being such a device reads one byte past the budget.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_ref_to_an_endless_device_is_too_large_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("api.yaml");
    std::fs::write(&root, spec_referencing("/dev/zero#/r")).unwrap();
    let err = load_file(&root).await.unwrap_err();
    assert!(
        matches!(&err, OpenApiError::UnresolvedRef { reason, .. }
            if reason.contains("outside the spec's folder")),
        "{err}"
    );
    let err = SpecCache::with_load_budget(MB)
        .load(&SpecSource::File("/dev/zero".into()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, OpenApiError::TooLarge { .. }) && err.to_string().contains("1 MB"),
        "{err}"
    );
}

/// A cloned repository's spec reads the user's credentials through `$ref`s: up and out of its
/// folder, by absolute path, or through a symbolic link inside the folder. All refused; files
/// inside the folder still load.
#[tokio::test]
async fn local_refs_outside_the_spec_folder_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("repo/specs");
    std::fs::create_dir_all(&specs).unwrap();
    let secret = dir.path().join("hosts.yml");
    std::fs::write(&secret, "token: {description: hunter2-secret}\n").unwrap();
    let absolute = secret.display().to_string();
    let mut references = vec![
        "../../hosts.yml#/token".to_string(),
        format!("{absolute}#/token"),
        format!("file://{absolute}#/token"),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&secret, specs.join("link.yml")).unwrap();
        references.push("link.yml#/token".into());
    }
    for reference in references {
        let root = specs.join("api.yaml");
        std::fs::write(&root, spec_referencing(&reference)).unwrap();
        let err = load_file(&root).await.unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(&err, OpenApiError::UnresolvedRef { .. }),
            "{reference}: {message}"
        );
        assert!(
            message.contains("outside the spec's folder"),
            "{reference}: {message}"
        );
        assert!(message.contains("redocly bundle"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }

    // Inside the folder (a sub-folder too): loaded.
    std::fs::create_dir_all(specs.join("parts")).unwrap();
    std::fs::write(specs.join("parts/ok.yaml"), "ok: {description: fine}\n").unwrap();
    let root = specs.join("api.yaml");
    std::fs::write(&root, spec_referencing("parts/ok.yaml#/ok")).unwrap();
    let spec = load_file(&root).await.unwrap();
    assert_eq!(spec.operations().len(), 1);
}

#[derive(Debug)]
struct FixedLookup(Vec<IpAddr>);

impl HostLookup for FixedLookup {
    fn lookup(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok(self.0.clone())
    }
}

/// `$ref` URLs to the cloud metadata service (by address, by name, by a name resolving there)
/// and to private hosts nobody allowed are refused before anything is sent.
#[tokio::test]
async fn ref_urls_to_link_local_and_private_addresses_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("api.yaml");
    let metadata = OutboundPolicy::public_only().with_lookup(Arc::new(FixedLookup(vec![
        "169.254.169.254".parse().unwrap(),
    ])));
    for (reference, policy, expect) in [
        (
            "http://169.254.169.254/latest/meta-data/r.yaml#/ok",
            OutboundPolicy::public_only(),
            "refused always",
        ),
        (
            "http://metadata.google.internal/computeMetadata/v1/r.yaml#/ok",
            OutboundPolicy::public_only(),
            "refused always",
        ),
        (
            "http://[fe80::1]/r.yaml#/ok",
            OutboundPolicy::public_only(),
            "link-local",
        ),
        (
            "http://specs.example/r.yaml#/ok",
            metadata,
            "refused always",
        ),
        (
            "http://10.0.0.5/r.yaml#/ok",
            OutboundPolicy::public_only(),
            "private address",
        ),
    ] {
        std::fs::write(&root, spec_referencing(reference)).unwrap();
        let err = SpecCache::new()
            .load_with(&SpecSource::File(root.clone()), &policy)
            .await
            .unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(&err, OpenApiError::FetchRefused { .. }),
            "{reference}: {message}"
        );
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{message}");
        assert!(message.contains(expect), "{reference}: {message}");
        assert!(
            message.starts_with("cannot resolve $ref `"),
            "{reference}: {message}"
        );
    }
}

/// A spec server on 127.0.0.1: `/api.yaml` (which `$ref`s `/part.yaml`), `/part.yaml`,
/// `/moved.yaml` (a redirect to the metadata service), `/other-host.yaml` (which `$ref`s a
/// service on another port of this machine), `/endless.yaml` (a body that never ends). Counts
/// the body bytes it sent.
struct SpecServer {
    base: String,
    sent: Arc<AtomicU64>,
}

fn spec_server() -> SpecServer {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&sent);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let ok = |body: String| {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/yaml\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                };
                let reply = match path.as_str() {
                    "/api.yaml" => ok(spec_referencing("part.yaml#/ok")),
                    "/part.yaml" => ok("ok: {description: fine}\n".into()),
                    "/other-host.yaml" => ok(spec_referencing("http://127.0.0.1:6379/r.yaml#/ok")),
                    "/moved.yaml" => "HTTP/1.1 302 Found\r\nlocation: \
                                      http://169.254.169.254/latest/meta-data/\r\n\
                                      content-length: 0\r\nconnection: close\r\n\r\n"
                        .to_string(),
                    "/endless.yaml" => {
                        let _ = conn.write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-type: application/yaml\r\n\
                              transfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                        );
                        let body = "# padding padding padding padding\n".repeat(2000);
                        let chunk = format!("{:x}\r\n{body}\r\n", body.len());
                        while conn.write_all(chunk.as_bytes()).is_ok() {
                            counted.fetch_add(body.len() as u64, Ordering::SeqCst);
                        }
                        return;
                    }
                    _ => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_string(),
                };
                let _ = conn.write_all(reply.as_bytes());
            });
        }
    });
    SpecServer { base, sent }
}

/// A spec URL on this machine is fetched only when allowed; once allowed, its `$ref`s to the
/// same server load, but a redirect to the metadata service and a `$ref` to another port of this
/// machine are refused.
#[tokio::test]
async fn spec_urls_on_this_machine_need_an_allow_entry_and_keep_to_it() {
    let server = spec_server();
    let url = |path: &str| SpecSource::parse(&format!("{}{path}", server.base)).unwrap();
    let err = SpecCache::new().load(&url("/api.yaml")).await.unwrap_err();
    assert!(matches!(&err, OpenApiError::FetchRefused { .. }), "{err}");
    assert!(
        err.to_string().contains("DEVLENS_NETWORK_ALLOW=127.0.0.1:"),
        "{err}"
    );

    let allowed = OutboundPolicy::public_only().allowing(&server.base);
    let spec = SpecCache::new()
        .load_with(&url("/api.yaml"), &allowed)
        .await
        .unwrap();
    assert_eq!(spec.operations().len(), 1);

    let err = SpecCache::new()
        .load_with(&url("/moved.yaml"), &allowed)
        .await
        .unwrap_err();
    assert!(matches!(&err, OpenApiError::FetchRefused { .. }), "{err}");
    assert!(err.to_string().contains("refused always"), "{err}");

    let err = SpecCache::new()
        .load_with(&url("/other-host.yaml"), &allowed)
        .await
        .unwrap_err();
    assert!(matches!(&err, OpenApiError::FetchRefused { .. }), "{err}");
    assert!(err.to_string().contains("127.0.0.1:6379"), "{err}");
}

/// One byte budget for a whole load: documents that each fit but together do not are refused,
/// and an endless body over HTTP is cut off at the budget while it streams in.
#[tokio::test]
async fn one_byte_budget_covers_the_spec_and_every_document_it_references() {
    let dir = tempfile::tempdir().unwrap();
    let padding = "x".repeat(600 * 1024);
    let root = dir.path().join("api.yaml");
    std::fs::write(
        &root,
        format!(
            "openapi: 3.0.0\ninfo: {{title: t, version: '1', description: '{padding}'}}\n\
             paths:\n  /a:\n    get:\n      responses:\n        '200': {{$ref: 'part.yaml#/ok'}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("part.yaml"),
        format!("ok: {{description: '{padding}'}}\n"),
    )
    .unwrap();
    // Each document alone fits in 1 MB...
    let alone = dir.path().join("alone.yaml");
    std::fs::write(
        &alone,
        format!(
            "openapi: 3.0.0\ninfo: {{title: t, version: '1', description: '{padding}'}}\n\
             paths: {{}}\n"
        ),
    )
    .unwrap();
    SpecCache::with_load_budget(MB)
        .load(&SpecSource::File(alone))
        .await
        .unwrap();
    // ...both together do not.
    let err = SpecCache::with_load_budget(MB)
        .load(&SpecSource::File(root.clone()))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(&err, OpenApiError::TooLarge { .. }), "{message}");
    assert!(
        message.contains("with the documents its $refs pull in is larger than 1 MB"),
        "{message}"
    );
    // The default budget (256 MB) holds them.
    load_file(&root).await.unwrap();

    // Over HTTP, streamed: the endless body is cut off once past the budget.
    let server = spec_server();
    let allowed = OutboundPolicy::public_only().allowing(&server.base);
    let endless = SpecSource::parse(&format!("{}/endless.yaml", server.base)).unwrap();
    let err = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        SpecCache::with_load_budget(MB).load_with(&endless, &allowed),
    )
    .await
    .expect("the load ends in time")
    .unwrap_err();
    assert!(matches!(&err, OpenApiError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("larger than 1 MB"), "{err}");
    let sent = server.sent.load(Ordering::SeqCst);
    assert!(sent < 64 * MB, "{sent} bytes were sent");
}
