//! The optional second tier of the answer cache: a Redis server shared by several devlens
//! servers, so a question one of them answered is a cache hit on all of them.
//!
//! A tiny RESP2 client over a tokio `TcpStream` (PING, GET, SET EX, AUTH, SELECT) rather than
//! the `redis` crate: these five commands are all the cache needs. Measured (scripts/
//! dependency-cost): `redis` 1.8.1 with `tokio-comp` and `tokio-rustls-comp`, the least that
//! speaks `rediss://`, adds 7 crates and about 28 CPU-seconds of rustc to a clean build (the
//! crate itself about 25; about 1% of the clean test build), and what is most of this file — a
//! deadline on every command, a server marked down for a while after a failure, one warning per
//! outage — would stay either way. `rediss://` speaks TLS (rustls, as reqwest does): the
//! server's certificate is checked against the system's roots plus an optional CA file (`[docs]
//! redis_ca_file`, `DEVLENS_REDIS_CA_FILE`) for a private CA.
//!
//! The shared cache may never cost a query its answer: every command has a short deadline, and
//! an unreachable server (refused, timed out, a protocol error) marks it down for a while — the
//! in-process cache carries on alone — with one warning per outage, and one note when it is
//! back.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::DocsError;

/// How long a shared answer lives: long enough to matter, short enough that answers of docs
/// nobody re-ingests (their keys never change) do not stay forever.
pub const ANSWER_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// A command's deadline: a local Redis answers in well under a millisecond, and a query must not
/// wait long on a sick one.
const COMMAND_TIMEOUT: Duration = Duration::from_millis(250);
/// Opening a connection (TCP, TLS, AUTH, SELECT) gets longer: it happens once per connection,
/// and on a loaded machine a handshake alone can pass 250 ms.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// After a failure, Redis is left alone this long before the next try.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// Replies larger than this are not answers devlens stored.
const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// Where the shared cache lives, parsed from `redis[s]://[user:password@]host[:port][/db]`.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisTarget {
    pub host: String,
    pub port: u16,
    pub db: u32,
    /// `rediss://`: the connection is TLS.
    pub tls: bool,
    username: Option<String>,
    password: Option<String>,
}

impl std::fmt::Debug for RedisTarget {
    // Never the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for RedisTarget {
    /// The address without credentials, for logs and errors.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.tls { "rediss" } else { "redis" };
        write!(f, "{scheme}://{}:{}/{}", self.host, self.port, self.db)
    }
}

impl RedisTarget {
    pub fn parse(url: &str) -> Result<Self, DocsError> {
        let bad = |why: &str| {
            // The URL may hold a password: show only its scheme and host part.
            let shown = url
                .rsplit_once('@')
                .map(|(_, host)| format!("redis://…@{host}"))
                .unwrap_or_else(|| url.to_string());
            DocsError::InvalidInput(format!(
                "invalid Redis URL `{shown}`: {why}; expected \
                 redis://[:password@]host[:port][/db] (rediss:// for TLS) in `[docs] redis_url` \
                 or DEVLENS_REDIS_URL (unset it to use the in-process cache only)"
            ))
        };
        let parsed = reqwest::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
        let tls = match parsed.scheme() {
            "redis" => false,
            "rediss" => true,
            _ => return Err(bad("the scheme must be redis:// or rediss://")),
        };
        let host = parsed
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let db = match parsed.path().trim_matches('/') {
            "" => 0,
            n => n
                .parse()
                .map_err(|_| bad("the path must be a database number, e.g. /0"))?,
        };
        let decode = |s: &str| {
            devlens_core::percent::decode(s)
                .ok_or_else(|| bad("the credentials are not valid percent-encoding"))
        };
        let username = match parsed.username() {
            "" => None,
            u => Some(decode(u)?),
        };
        let password = parsed.password().map(decode).transpose()?;
        Ok(Self {
            host,
            port: parsed.port().unwrap_or(6379),
            db,
            tls,
            username,
            password,
        })
    }
}

/// A RESP2 reply (arrays are not needed by the commands used here).
#[derive(Debug, PartialEq)]
enum Reply {
    Simple(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
}

/// A plain or TLS stream.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug> Stream for T {}

/// The TLS settings of `rediss://`: the system's roots, plus the certificates of `ca_file`.
pub fn tls_config(ca_file: Option<&Path>) -> Result<Arc<rustls::ClientConfig>, DocsError> {
    let bad = |why: String| DocsError::InvalidInput(why);
    let extra: Vec<CertificateDer<'static>> = match ca_file {
        None => Vec::new(),
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| {
                    bad(format!(
                        "cannot read the Redis CA file {} ({e}): give a PEM file of the CA that \
                         signed the server's certificate in `[docs] redis_ca_file` or \
                         DEVLENS_REDIS_CA_FILE",
                        path.display()
                    ))
                })?;
            if certs.is_empty() {
                return Err(bad(format!(
                    "the Redis CA file {} holds no PEM certificate",
                    path.display()
                )));
            }
            certs
        }
    };
    let provider = devlens_core::tls::provider();
    let verifier =
        rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
            .map_err(|e| bad(format!("cannot set up TLS for Redis: {e}")))?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(format!("cannot set up TLS for Redis: {e}")))?
        .dangerous() // Not a lax verifier: the platform's, with the extra roots.
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(Arc::new(config))
}

#[derive(Debug)]
struct Connection {
    stream: BufReader<Box<dyn Stream>>,
}

impl Connection {
    async fn open(
        target: &RedisTarget,
        tls: Option<&Arc<rustls::ClientConfig>>,
    ) -> Result<Self, String> {
        let tcp = TcpStream::connect((target.host.as_str(), target.port))
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let stream: Box<dyn Stream> = match tls {
            None => Box::new(tcp),
            Some(config) => {
                let name = ServerName::try_from(target.host.clone())
                    .map_err(|e| format!("`{}` is not a TLS server name: {e}", target.host))?;
                let tls = tokio_rustls::TlsConnector::from(Arc::clone(config))
                    .connect(name, tcp)
                    .await
                    .map_err(|e| {
                        format!(
                            "TLS handshake failed: {e} (for a private CA, give its PEM file in \
                             `[docs] redis_ca_file` or DEVLENS_REDIS_CA_FILE)"
                        )
                    })?;
                Box::new(tls)
            }
        };
        let mut conn = Self {
            stream: BufReader::new(stream),
        };
        if let Some(password) = &target.password {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            if let Some(user) = &target.username {
                args.push(user.as_bytes());
            }
            args.push(password.as_bytes());
            let reply = conn.command(&args).await;
            // The server's words may echo nothing secret, but keep them short.
            reply.map_err(|e| format!("authentication failed: {e}"))?;
        }
        if target.db != 0 {
            conn.command(&[b"SELECT", target.db.to_string().as_bytes()])
                .await?;
        }
        Ok(conn)
    }

    async fn command(&mut self, args: &[&[u8]]) -> Result<Reply, String> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            out.extend_from_slice(arg);
            out.extend_from_slice(b"\r\n");
        }
        let io = |e: std::io::Error| e.to_string();
        self.stream.get_mut().write_all(&out).await.map_err(io)?;
        self.read_reply().await
    }

    async fn read_reply(&mut self) -> Result<Reply, String> {
        let mut line = Vec::new();
        let n = self
            .stream
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        if !line.ends_with(b"\r\n") || line.len() < 3 {
            return Err("malformed reply".into());
        }
        let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        match line[0] {
            b'+' => Ok(Reply::Simple(body)),
            b'-' => Err(body),
            b':' => body
                .parse()
                .map(Reply::Integer)
                .map_err(|_| "malformed integer reply".to_string()),
            b'$' => {
                let len: i64 = body
                    .parse()
                    .map_err(|_| "malformed bulk reply".to_string())?;
                if len < 0 {
                    return Ok(Reply::Bulk(None));
                }
                let len = len as usize;
                if len > MAX_REPLY_BYTES {
                    return Err(format!("a {len}-byte reply is too large"));
                }
                let mut data = vec![0u8; len + 2];
                self.stream
                    .read_exact(&mut data)
                    .await
                    .map_err(|e| e.to_string())?;
                data.truncate(len);
                Ok(Reply::Bulk(Some(data)))
            }
            other => Err(format!("unexpected reply type `{}`", other as char)),
        }
    }
}

/// Counts of the shared tier, for metrics.
#[derive(Debug, Default)]
pub struct RedisStats {
    /// Commands that failed (unreachable, timed out, refused by the server).
    pub errors: AtomicU64,
}

/// The shared answer cache. Cheap to call when Redis is down: it is not contacted again until
/// [`RETRY_AFTER`] has passed.
#[derive(Debug)]
pub struct RedisCache {
    target: RedisTarget,
    /// For `rediss://`.
    tls: Option<Arc<rustls::ClientConfig>>,
    conn: tokio::sync::Mutex<Option<Connection>>,
    down_until: Mutex<Option<Instant>>,
    /// Set while an outage has been reported, so it is reported once.
    warned: AtomicBool,
    pub stats: RedisStats,
}

impl RedisCache {
    /// The cache at `target`; `ca_file` adds a CA to trust for `rediss://`.
    pub fn new(target: RedisTarget, ca_file: Option<&Path>) -> Result<Self, DocsError> {
        let tls = if target.tls {
            Some(tls_config(ca_file)?)
        } else {
            None
        };
        Ok(Self {
            target,
            tls,
            conn: tokio::sync::Mutex::new(None),
            down_until: Mutex::new(None),
            warned: AtomicBool::new(false),
            stats: RedisStats::default(),
        })
    }

    pub fn target(&self) -> &RedisTarget {
        &self.target
    }

    /// The stored value of `key`; `None` when there is none or Redis cannot be asked.
    pub async fn get(&self, key: &str) -> Option<Vec<u8>> {
        match self.run(&[b"GET", key.as_bytes()]).await? {
            Reply::Bulk(value) => value,
            _ => None,
        }
    }

    /// Stores `value` under `key` for `ttl`; failures are logged, never returned.
    pub async fn set(&self, key: &str, value: &[u8], ttl: Duration) {
        let seconds = ttl.as_secs().max(1).to_string();
        self.run(&[b"SET", key.as_bytes(), value, b"EX", seconds.as_bytes()])
            .await;
    }

    /// Whether Redis answers PING now.
    pub async fn ping(&self) -> bool {
        matches!(self.run(&[b"PING"]).await, Some(Reply::Simple(_)))
    }

    async fn run(&self, args: &[&[u8]]) -> Option<Reply> {
        if let Some(until) = *self.down_until.lock().unwrap_or_else(|p| p.into_inner())
            && Instant::now() < until
        {
            return None;
        }
        let mut slot = self.conn.lock().await;
        let result = async {
            if slot.is_none() {
                let open = Connection::open(&self.target, self.tls.as_ref());
                *slot = Some(deadline(CONNECT_TIMEOUT, "no connection", open).await?);
            }
            match slot.as_mut() {
                Some(conn) => deadline(COMMAND_TIMEOUT, "no answer", conn.command(args)).await,
                None => Err("no connection".to_string()),
            }
        }
        .await;
        match result {
            Ok(reply) => {
                if self.warned.swap(false, Relaxed) {
                    tracing::info!(redis = %self.target, "the Redis answer cache is reachable again");
                }
                Some(reply)
            }
            Err(why) => {
                // A half-read reply leaves the stream out of step: start afresh next time.
                *slot = None;
                self.stats.errors.fetch_add(1, Relaxed);
                *self.down_until.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(Instant::now() + RETRY_AFTER);
                if !self.warned.swap(true, Relaxed) {
                    tracing::warn!(
                        redis = %self.target,
                        error = %why,
                        "the Redis answer cache is unavailable; answering from the in-process \
                         cache only (retrying every {} s)",
                        RETRY_AFTER.as_secs()
                    );
                }
                None
            }
        }
    }
}

/// `work`, or `what` with the deadline it missed.
async fn deadline<T>(
    limit: Duration,
    what: &str,
    work: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or_else(|_| Err(format!("{what} within {} ms", limit.as_millis())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_never_show_the_password() {
        let t = RedisTarget::parse("redis://:s3cr%40t@cache.local:6380/2").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.db), ("cache.local", 6380, 2));
        assert_eq!(t.password.as_deref(), Some("s3cr@t"));
        assert_eq!(t.to_string(), "redis://cache.local:6380/2");
        assert!(!format!("{t:?}").contains("s3cr"));
        let d = RedisTarget::parse("redis://127.0.0.1").unwrap();
        assert_eq!((d.port, d.db), (6379, 0));
        let u = RedisTarget::parse("redis://app:pw@[::1]:7000").unwrap();
        assert_eq!(
            (u.host.as_str(), u.username.as_deref()),
            ("::1", Some("app"))
        );
        let tls = RedisTarget::parse("rediss://cache.example.com:6380").unwrap();
        assert!(tls.tls);
        assert_eq!(tls.to_string(), "rediss://cache.example.com:6380/0");
        for bad in [
            "http://x",
            "redis://x/notadb",
            "localhost:6379",
            "redis://:pw@x/zz",
        ] {
            let e = RedisTarget::parse(bad).unwrap_err().to_string();
            assert!(e.contains("DEVLENS_REDIS_URL"), "{e}");
            assert!(!e.contains(":pw"), "{e}");
        }
    }

    #[tokio::test]
    async fn an_unreachable_server_is_a_miss_not_an_error() {
        // A port nothing listens on: bind, note the port, close.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cache = RedisCache::new(
            RedisTarget::parse(&format!("redis://127.0.0.1:{port}")).unwrap(),
            None,
        )
        .unwrap();
        assert_eq!(cache.get("k").await, None);
        cache.set("k", b"v", ANSWER_TTL).await;
        assert!(!cache.ping().await);
        // The second and third calls did not try again (down for RETRY_AFTER).
        assert_eq!(cache.stats.errors.load(Relaxed), 1);
    }
}
