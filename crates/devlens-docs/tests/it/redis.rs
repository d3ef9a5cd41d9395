//! The shared Redis tier of the answer cache, against a real `redis-server` this test starts on
//! a free port: servers share answers, re-ingesting retires them everywhere, and a Redis that
//! goes away costs no query its answer.
//!
//! Without `redis-server` on PATH the test prints a skip notice and passes, unless
//! DEVLENS_REQUIRE_REDIS=1 (scripts/test sets it), where it fails.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use devlens_docs::{CacheOutcome, Docs, DocsSource, IngestRequest, QueryDocsInput};

/// A `redis-server` child, stopped when dropped.
struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    fn start() -> Option<Self> {
        Self::start_with(&[])
    }

    fn start_with(extra: &[&str]) -> Option<Self> {
        Self::start_listening(|port| vec!["--port".into(), port.to_string()], extra)
    }

    /// TLS only, with the test CA's server certificate (for 127.0.0.1 and localhost).
    fn start_tls() -> Option<Self> {
        let tls = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls");
        let file = |name: &str| tls.join(name).display().to_string();
        let (cert, key, ca) = (file("server.pem"), file("server.key"), file("ca.pem"));
        Self::start_listening(
            |port| {
                vec![
                    "--port".into(),
                    "0".into(),
                    "--tls-port".into(),
                    port.to_string(),
                ]
            },
            &[
                "--tls-cert-file",
                &cert,
                "--tls-key-file",
                &key,
                "--tls-ca-cert-file",
                &ca,
                "--tls-auth-clients",
                "no",
            ],
        )
    }

    fn start_listening(listen: impl Fn(u16) -> Vec<String>, extra: &[&str]) -> Option<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let spawned = Command::new("redis-server")
            .args(listen(port))
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let why = format!(
                    "redis-server could not be started ({e}); install the Debian package redis-server"
                );
                if std::env::var("DEVLENS_REQUIRE_REDIS").as_deref() == Ok("1") {
                    panic!("{why} (DEVLENS_REQUIRE_REDIS=1)");
                }
                eprintln!("skipped: {why}");
                return None;
            }
        };
        let mut server = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on port {port} within 10 s"
            );
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("redis-server exited at start: {status}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        server.port = port;
        Some(server)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/3", self.port)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn ingest(docs: &Docs, rt: &tokio::runtime::Runtime, pages: &Path) {
    let request = IngestRequest {
        id: "widgets".into(),
        source: DocsSource::Path(pages.to_path_buf()),
        version: Some("2".into()),
        name: None,
        description: None,
    };
    rt.block_on(docs.ingest(&request, &|_, _, _| {})).unwrap();
}

fn ask(docs: &Docs, rt: &tokio::runtime::Runtime, question: &str) -> (String, CacheOutcome) {
    let input = QueryDocsInput {
        library_id: "widgets".into(),
        query: question.into(),
        version: None,
        max_results: None,
        include_code: None,
        context_limit: None,
    };
    let request = input.validate().unwrap();
    let (answer, outcome) = rt.block_on(docs.query_traced(&request)).unwrap();
    (answer.context, outcome)
}

#[test]
fn servers_share_answers_until_the_docs_change_and_survive_redis_going_away() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    std::fs::write(
        pages.join("a.md"),
        "# Widgets\n\n## Refresh\n\nWidgets refresh every second.\n\n## Colors\n\nWidgets are blue.\n",
    )
    .unwrap();
    let open = |registry: &str| {
        Docs::with_embedder(&dir.path().join(registry), None)
            .unwrap()
            .with_redis(&redis.url(), None)
            .unwrap()
    };
    // Servers A and C share a data dir; B has its own, where the same docs were ingested.
    let a = open("one/docs.sqlite");
    let c = open("one/docs.sqlite");
    let b = open("two/docs.sqlite");
    ingest(&a, &rt, &pages);
    ingest(&b, &rt, &pages);

    let question = "how often do widgets refresh";
    let (first, outcome) = ask(&a, &rt, question);
    assert_eq!(outcome, CacheOutcome::Miss);
    assert!(first.contains("every second"), "{first}");
    let (from_b, outcome) = ask(&b, &rt, question);
    assert_eq!(
        (from_b.as_str(), outcome),
        (first.as_str(), CacheOutcome::Redis)
    );
    let (from_c, outcome) = ask(&c, &rt, question);
    assert_eq!(
        (from_c.as_str(), outcome),
        (first.as_str(), CacheOutcome::Redis)
    );
    // Asked again, C has it in process.
    assert_eq!(ask(&c, &rt, question).1, CacheOutcome::Hit);
    assert!(
        c.metrics_text()
            .contains("devlens_docs_cache_hits_total{tier=\"redis\"} 1\n")
    );

    // A re-ingests changed docs: C (same data dir) never sees the old answer again, from
    // either tier.
    std::fs::write(
        pages.join("a.md"),
        "# Widgets\n\n## Refresh\n\nWidgets refresh by server push now.\n",
    )
    .unwrap();
    ingest(&a, &rt, &pages);
    let (fresh, outcome) = ask(&c, &rt, question);
    assert_eq!(outcome, CacheOutcome::Miss);
    assert!(fresh.contains("server push"), "{fresh}");
    assert_eq!(ask(&a, &rt, question).1, CacheOutcome::Redis);
    // B still holds the old docs, and the answers that go with them.
    assert_eq!(ask(&b, &rt, question).0, first);

    // Redis goes away: queries still answer, computed, then from the process's own cache.
    redis.stop();
    let other = "what color are widgets";
    let (answer, outcome) = ask(&b, &rt, other);
    assert_eq!(outcome, CacheOutcome::Miss);
    assert!(answer.contains("blue"), "{answer}");
    assert_eq!(ask(&b, &rt, other).1, CacheOutcome::Hit);
    let errors = b.redis().unwrap().stats.errors.load(Relaxed);
    assert!(errors >= 1, "the failure was counted");
    assert!(
        b.metrics_text()
            .contains("devlens_docs_cache_redis_errors_total")
    );
}

#[test]
fn a_password_and_a_database_from_the_url_are_used() {
    let Some(redis) = RedisServer::start_with(&["--requirepass", "s3cret"]) else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = |auth: &str| format!("redis://{auth}127.0.0.1:{}/5", redis.port);
    let good = Docs::with_embedder(&dir.path().join("a.sqlite"), None)
        .unwrap()
        .with_redis(&url(":s3cret@"), None)
        .unwrap();
    assert!(rt.block_on(good.redis().unwrap().ping()));
    // A wrong password is a cache that is not there, not a failing query.
    let wrong = Docs::with_embedder(&dir.path().join("b.sqlite"), None)
        .unwrap()
        .with_redis(&url(":nope@"), None)
        .unwrap();
    let cache = wrong.redis().unwrap();
    assert!(!rt.block_on(cache.ping()));
    assert_eq!(cache.stats.errors.load(Relaxed), 1);
}

/// `rediss://`: answers are shared over TLS when the server's certificate is trusted (its CA
/// given as a file), and a server whose certificate is not trusted is a cache that is not there
/// (the query still answers), never an unverified connection.
#[test]
fn tls_to_redis_checks_the_certificate() {
    let Some(redis) = RedisServer::start_tls() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls/ca.pem");
    let url = format!("rediss://127.0.0.1:{}/2", redis.port);

    let trusted = |registry: &str| {
        Docs::with_embedder(&dir.path().join(registry), None)
            .unwrap()
            .with_redis(&url, Some(&ca))
            .unwrap()
    };
    let a = trusted("a.sqlite");
    assert!(rt.block_on(a.redis().unwrap().ping()), "TLS PING");
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    std::fs::write(
        pages.join("a.md"),
        "# Widgets\n\n## Size\n\nWidgets are small.\n",
    )
    .unwrap();
    let b = trusted("b.sqlite");
    ingest(&a, &rt, &pages);
    ingest(&b, &rt, &pages);
    assert_eq!(ask(&a, &rt, "how big are widgets").1, CacheOutcome::Miss);
    assert_eq!(ask(&b, &rt, "how big are widgets").1, CacheOutcome::Redis);

    // The system's roots alone do not know the test CA: no connection, and no failing query.
    let untrusted = Docs::with_embedder(&dir.path().join("a.sqlite"), None)
        .unwrap()
        .with_redis(&url, None)
        .unwrap();
    assert!(!rt.block_on(untrusted.redis().unwrap().ping()));
    let (answer, outcome) = ask(&untrusted, &rt, "how big are widgets");
    assert_eq!(outcome, CacheOutcome::Miss);
    assert!(answer.contains("small"), "{answer}");

    // Plain redis:// to a TLS port fails the same quiet way.
    let plain = Docs::with_embedder(&dir.path().join("a.sqlite"), None)
        .unwrap()
        .with_redis(&format!("redis://127.0.0.1:{}/2", redis.port), None)
        .unwrap();
    assert!(!rt.block_on(plain.redis().unwrap().ping()));

    // A CA file that is not there is a clear error at start.
    let err = Docs::with_embedder(&dir.path().join("c.sqlite"), None)
        .unwrap()
        .with_redis(&url, Some(&dir.path().join("missing.pem")))
        .unwrap_err()
        .to_string();
    assert!(err.contains("redis_ca_file"), "{err}");
}
