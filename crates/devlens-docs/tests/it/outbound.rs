//! The docs crawler behind the outbound guard: a start host that resolves to the cloud metadata
//! address or a private one is refused (unless the user allowed it), a redirect to the metadata
//! address is refused on the way, a local site the user allowed is crawled, bodies are cut off
//! at their cap while they stream in, and crawl limits have a ceiling.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use devlens_core::outbound::{HostLookup, OutboundPolicy};
use devlens_docs::crawl::{self, CrawlLimits, CrawlOutcome, MAX_DEPTH_CEILING, MAX_PAGES_CEILING};
use devlens_docs::{Docs, DocsError, DocsSource, IngestRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Resolves every name to fixed addresses, as a hostile or misconfigured DNS would.
#[derive(Debug)]
struct FixedLookup(Vec<IpAddr>);

impl HostLookup for FixedLookup {
    fn lookup(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok(self.0.clone())
    }
}

fn resolving_to(address: &str) -> Arc<dyn HostLookup> {
    Arc::new(FixedLookup(vec![address.parse().unwrap()]))
}

/// What the fixture site answers for a path.
enum Answer {
    Page(&'static str, String),
    Redirect(String),
    /// A chunked body without Content-Length that never ends.
    Endless(&'static str),
    NotFound,
}

/// A site on 127.0.0.1 answering with `route`; counts the requests and the body bytes it sent.
struct Site {
    base: String,
    port: u16,
    requests: Arc<AtomicU64>,
    sent: Arc<AtomicU64>,
}

async fn site(route: impl Fn(&str) -> Answer + Send + Sync + 'static) -> Site {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let route = Arc::new(route);
    let requests = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));
    let (counted, sent_bytes) = (Arc::clone(&requests), Arc::clone(&sent));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let route = Arc::clone(&route);
            let counted = Arc::clone(&counted);
            let sent_bytes = Arc::clone(&sent_bytes);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 2048];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let head = String::from_utf8_lossy(&head).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let reply = match route(&path) {
                    Answer::Page(content_type, body) => format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
                         connection: close\r\n\r\n{body}",
                        body.len()
                    ),
                    Answer::Redirect(to) => format!(
                        "HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\n\
                         connection: close\r\n\r\n"
                    ),
                    Answer::NotFound => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\
                                         connection: close\r\n\r\n"
                        .to_string(),
                    Answer::Endless(content_type) => {
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n\
                             transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
                        );
                        if socket.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                        let line = "<p>more and more and more text</p>\n";
                        let body = line.repeat(64 * 1024 / line.len());
                        let chunk = format!("{:x}\r\n{body}\r\n", body.len());
                        // Until the reader hangs up.
                        while socket.write_all(chunk.as_bytes()).await.is_ok() {
                            sent_bytes.fetch_add(body.len() as u64, Ordering::SeqCst);
                        }
                        return;
                    }
                };
                let _ = socket.write_all(reply.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    Site {
        base: format!("http://{address}"),
        port: address.port(),
        requests,
        sent,
    }
}

/// A small docs site: two linked pages under /docs/, no robots.txt, no sitemap.
fn docs_site(path: &str) -> Answer {
    let html = "text/html; charset=utf-8";
    match path {
        "/docs/index.html" => Answer::Page(
            html,
            "<h1>Sprockets</h1><p>Sprockets mesh with gears. See <a href='setup.html'>setup</a>.</p>"
                .into(),
        ),
        "/docs/setup.html" => Answer::Page(
            html,
            "<h1>Setup</h1><p>Oil the sprocket before first use.</p>".into(),
        ),
        _ => Answer::NotFound,
    }
}

async fn crawl_with(
    start: &str,
    limits: CrawlLimits,
    policy: &OutboundPolicy,
) -> Result<CrawlOutcome, DocsError> {
    tokio::time::timeout(
        Duration::from_secs(60),
        crawl::crawl(start, limits, policy, &|_, _| {}),
    )
    .await
    .expect("the crawl ends in time")
}

fn ignoring_robots() -> CrawlLimits {
    CrawlLimits {
        ignore_robots: true,
        ..CrawlLimits::default()
    }
}

#[tokio::test]
async fn a_start_host_resolving_to_the_metadata_address_is_refused_and_nothing_is_stored() {
    let site = site(docs_site).await;
    let start = format!("http://docs.example:{}/docs/index.html", site.port);
    let policy = OutboundPolicy::public_only().with_lookup(resolving_to("169.254.169.254"));
    // Through robots.txt first, and straight to the page when robots.txt is ignored.
    for limits in [CrawlLimits::default(), ignoring_robots()] {
        let err = crawl_with(&start, limits, &policy).await.unwrap_err();
        assert!(matches!(err, DocsError::Refused(_)), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("refused always"), "{message}");
        assert!(message.contains("metadata"), "{message}");
    }
    // Allowing the name changes nothing: metadata addresses are refused whatever is allowed.
    let allowed = policy
        .clone()
        .allowing(&format!("docs.example:{}", site.port));
    let err = crawl_with(&start, ignoring_robots(), &allowed)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("refused always"), "{err}");

    // Through the ingest: refused, and the library is not stored.
    let dir = tempfile::tempdir().unwrap();
    let docs = Docs::with_embedder(&dir.path().join("docs.sqlite"), None)
        .unwrap()
        .with_outbound(policy);
    let request = IngestRequest {
        id: "meta".into(),
        source: DocsSource::Url(start),
        version: None,
        name: None,
        description: None,
    };
    let err = docs.ingest(&request, &|_, _, _| {}).await.unwrap_err();
    assert!(err.to_string().contains("Nothing was stored"), "{err}");
    assert_eq!(
        devlens_core::Classify::kind(&err),
        devlens_core::ErrorKind::Forbidden
    );
    assert!(docs.list().unwrap().libraries.is_empty());
    assert_eq!(site.requests.load(Ordering::SeqCst), 0, "nothing was sent");
}

#[tokio::test]
async fn a_start_host_resolving_to_a_private_address_is_refused_unless_allowed() {
    let site = site(docs_site).await;
    let start = format!("http://docs.example:{}/docs/index.html", site.port);
    let private = OutboundPolicy::public_only().with_lookup(resolving_to("10.0.0.5"));
    for limits in [CrawlLimits::default(), ignoring_robots()] {
        let err = crawl_with(&start, limits, &private).await.unwrap_err();
        assert!(matches!(err, DocsError::Refused(_)), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("private address (10.0.0.5)"), "{message}");
        assert!(
            message.contains(&format!("DEVLENS_NETWORK_ALLOW=docs.example:{}", site.port)),
            "{message}"
        );
    }

    // The same name resolving to this machine, allowed on its port: the crawl works.
    let allowed = OutboundPolicy::public_only()
        .with_lookup(resolving_to("127.0.0.1"))
        .allowing(&format!("docs.example:{}", site.port));
    let outcome = crawl_with(&start, CrawlLimits::default(), &allowed)
        .await
        .unwrap();
    assert_eq!(outcome.pages.pages, 2, "{:?}", outcome.failed);
    // Allowed on another port only, it stays refused.
    let other_port = OutboundPolicy::public_only()
        .with_lookup(resolving_to("127.0.0.1"))
        .allowing("docs.example:1");
    let err = crawl_with(&start, CrawlLimits::default(), &other_port)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("private address"), "{err}");
}

#[tokio::test]
async fn a_local_site_is_crawled_only_when_allowed() {
    let site = site(docs_site).await;
    let start = format!("{}/docs/index.html", site.base);
    let err = crawl_with(
        &start,
        CrawlLimits::default(),
        &OutboundPolicy::public_only(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, DocsError::Refused(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains(&format!("DEVLENS_NETWORK_ALLOW=127.0.0.1:{}", site.port)),
        "{err}"
    );
    assert_eq!(site.requests.load(Ordering::SeqCst), 0, "nothing was sent");

    let allowed = OutboundPolicy::public_only().allowing(&format!("127.0.0.1:{}", site.port));
    let outcome = crawl_with(&start, CrawlLimits::default(), &allowed)
        .await
        .unwrap();
    assert_eq!(outcome.pages.pages, 2, "{:?}", outcome.failed);
    assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
}

#[tokio::test]
async fn a_redirect_to_the_metadata_address_is_refused() {
    let site = site(|path| match path {
        "/docs/" => Answer::Redirect("http://169.254.169.254/latest/meta-data/".into()),
        "/docs/index.html" => Answer::Page(
            "text/html",
            "<h1>Gears</h1><p>Gears turn. Read <a href='moved.html'>the moved page</a>.</p>".into(),
        ),
        "/docs/moved.html" => {
            Answer::Redirect("http://169.254.169.254/latest/meta-data/iam/".into())
        }
        _ => Answer::NotFound,
    })
    .await;
    let allowed = OutboundPolicy::public_only().allowing(&site.base);

    // The start page redirects there: the crawl is refused with the guard's sentence.
    let err = crawl_with(
        &format!("{}/docs/", site.base),
        CrawlLimits::default(),
        &allowed,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, DocsError::Refused(_)), "{err:?}");
    assert!(err.to_string().contains("169.254.169.254"), "{err}");
    assert!(err.to_string().contains("refused always"), "{err}");

    // A later page redirects there: that page is reported as refused, the rest is read.
    let outcome = crawl_with(
        &format!("{}/docs/index.html", site.base),
        CrawlLimits::default(),
        &allowed,
    )
    .await
    .unwrap();
    assert_eq!(outcome.pages.pages, 1);
    assert_eq!(outcome.failed.len(), 1, "{:?}", outcome.failed);
    assert!(
        outcome.failed[0].contains("moved.html") && outcome.failed[0].contains("refused always"),
        "{:?}",
        outcome.failed
    );
}

#[tokio::test]
async fn an_endless_page_is_cut_off_at_the_cap_while_streaming() {
    let site = site(|path| match path {
        "/docs/" => Answer::Endless("text/html"),
        _ => Answer::NotFound,
    })
    .await;
    let allowed = OutboundPolicy::public_only().allowing(&site.base);
    let err = crawl_with(
        &format!("{}/docs/", site.base),
        CrawlLimits::default(),
        &allowed,
    )
    .await
    .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("larger than 8 MB"), "{message}");
    // The reader hung up soon after 8 MB (what the sockets buffer comes on top).
    let sent = site.sent.load(Ordering::SeqCst);
    assert!(sent < 64 * 1024 * 1024, "{sent} bytes were sent");
}

#[tokio::test]
async fn endless_robots_txt_and_sitemaps_are_read_only_up_to_their_caps() {
    let site = site(|path| match path {
        "/robots.txt" => Answer::Endless("text/plain"),
        "/sitemap.xml" => Answer::Endless("application/xml"),
        other => docs_site(other),
    })
    .await;
    let allowed = OutboundPolicy::public_only().allowing(&site.base);
    let outcome = crawl_with(
        &format!("{}/docs/index.html", site.base),
        CrawlLimits::default(),
        &allowed,
    )
    .await
    .unwrap();
    assert_eq!(outcome.pages.pages, 2, "{:?}", outcome.failed);
    assert_eq!(outcome.from_sitemap, 0);
    let sent = site.sent.load(Ordering::SeqCst);
    assert!(sent < 2 * 64 * 1024 * 1024, "{sent} bytes were sent");
}

#[tokio::test]
async fn crawl_limits_over_their_ceiling_are_refused_before_anything_is_fetched() {
    let site = site(docs_site).await;
    let allowed = OutboundPolicy::public_only().allowing(&site.base);
    let start = format!("{}/docs/index.html", site.base);
    let too_many = CrawlLimits {
        max_pages: MAX_PAGES_CEILING + 1,
        ..CrawlLimits::default()
    };
    let err = crawl_with(&start, too_many, &allowed).await.unwrap_err();
    assert!(matches!(err, DocsError::InvalidInput(_)), "{err:?}");
    assert!(err.to_string().contains("5000"), "{err}");
    assert!(err.to_string().contains("--max-pages"), "{err}");
    let too_deep = CrawlLimits {
        max_depth: MAX_DEPTH_CEILING + 1,
        ..CrawlLimits::default()
    };
    let err = crawl_with(&start, too_deep, &allowed).await.unwrap_err();
    assert!(err.to_string().contains("ceiling of 20"), "{err}");
    assert_eq!(
        site.requests.load(Ordering::SeqCst),
        0,
        "nothing was fetched"
    );
    // At the ceiling is fine.
    let at_ceiling = CrawlLimits {
        max_pages: MAX_PAGES_CEILING,
        max_depth: MAX_DEPTH_CEILING,
        ignore_robots: false,
    };
    assert!(at_ceiling.check().is_ok());
}
