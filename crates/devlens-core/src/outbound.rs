//! The outbound guard: the one gate every request devlens sends to another machine passes.
//!
//! devlens fetches what callers name — a docs site to crawl, a spec URL and the documents its
//! `$ref`s point at, an endpoint to call, an embedding or LLM provider. A caller (an agent that
//! read a hostile page, a token holder, a cloned repository) can name any address, so without a
//! gate devlens would fetch the cloud's metadata service (`http://169.254.169.254/…`, where
//! instance credentials live) or a service on the user's own network and serve the answer back.
//! The rules:
//!
//! - link-local addresses (169.254.0.0/16, fe80::/10) and the cloud metadata addresses and names
//!   are refused always;
//! - private, loopback and other non-public ranges (10/8, 172.16/12, 192.168/16, 127/8, 100.64/10,
//!   0/8, ::1, fc00::/7, …) only for targets the user configured: a project's base URL, a
//!   configured provider, `[network] allow` or `DEVLENS_NETWORK_ALLOW` (the [`OutboundPolicy`]'s
//!   allow list, origin by origin);
//! - only `http` and `https`.
//!
//! The check runs where it cannot be dodged: [`OutboundPolicy::client`] builds the HTTP client
//! with a DNS resolver that checks every address a name resolves to before it is connected to —
//! the address checked is the address used, so a name that resolves to a public address for the
//! check and a private one for the connection (DNS rebinding) gains nothing — and a redirect
//! policy that checks every hop. Addresses written as literals never reach a resolver, so
//! [`GuardedClient`] checks each request's URL before sending it. Through an HTTP proxy (set by
//! the user's `HTTP_PROXY`/`HTTPS_PROXY`) the proxy resolves names: literal addresses and metadata
//! names are still refused, and the proxy's own host is allowed.

use std::collections::HashSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use url::{Host, Url};

/// Names of cloud metadata services, refused whatever they resolve to.
const METADATA_NAMES: &[&str] = &[
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "metadata.azure.internal",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Metadata services outside the link-local range (Alibaba Cloud, Oracle Cloud, AWS over IPv6).
const METADATA_V4: &[Ipv4Addr] = &[
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(192, 0, 0, 192),
];
const METADATA_V6: &[Ipv6Addr] = &[Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)];

/// Redirects followed at most (reqwest's own default).
const MAX_REDIRECTS: usize = 10;

/// How long resolving a name may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a target is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not http or https.
    Scheme(String),
    /// Not a URL at all.
    NotAUrl,
    /// The URL names no host.
    NoHost,
    /// A link-local address: where cloud metadata services answer; never fetched.
    LinkLocal(IpAddr),
    /// A cloud metadata service by name or address; never fetched.
    Metadata(String),
    /// A private, loopback or otherwise non-public address that nobody allowed.
    Private { host: String, ip: IpAddr },
    /// The name did not resolve.
    Unresolved { host: String, why: String },
}

/// A request the guard refused: which URL, and why (the message says how to allow it when that
/// is possible).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(url, reason))]
pub struct OutboundError {
    pub url: String,
    pub reason: Refusal,
}

fn describe(url: &str, reason: &Refusal) -> String {
    let url = shown_url(url);
    match reason {
        Refusal::Scheme(scheme) => {
            format!("devlens fetches only http(s) URLs, not `{scheme}:` ({url})")
        }
        Refusal::NotAUrl => format!("`{url}` is not a URL"),
        Refusal::NoHost => format!("{url} names no host to fetch from"),
        Refusal::LinkLocal(ip) => format!(
            "devlens does not fetch {url}: {ip} is a link-local address, where cloud metadata \
             services hand out credentials; such addresses are refused always"
        ),
        Refusal::Metadata(what) => format!(
            "devlens does not fetch {url}: {what} is a cloud metadata service, refused always"
        ),
        Refusal::Private { host, ip } => {
            let port_hint = Url::parse(&url)
                .ok()
                .and_then(|u| u.port_or_known_default())
                .map(|p| format!(":{p}"))
                .unwrap_or_default();
            let shown_host = if host.contains(':') {
                format!("[{host}]")
            } else {
                host.clone()
            };
            format!(
                "devlens does not fetch {url}: {host} is a private address ({ip}) — on this \
                 machine or its network — and nobody allowed it. If you mean it, allow it in a \
                 devlens.toml you trust (`[network] allow = [\"{shown_host}{port_hint}\"]`) or \
                 with DEVLENS_NETWORK_ALLOW={shown_host}{port_hint}; a project's own `base_url` \
                 is allowed without that"
            )
        }
        Refusal::Unresolved { host, why } => format!("cannot resolve {host} ({why}) for {url}"),
    }
}

/// The URL as shown: without user info or query (they may hold secrets), bounded.
fn shown_url(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            let s = u.to_string();
            if s.chars().count() > 200 {
                format!("{}…", s.chars().take(200).collect::<String>())
            } else {
                s
            }
        }
        Err(_) => url.chars().take(200).collect(),
    }
}

/// What kind of address `ip` is, for the guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// Reachable on the internet.
    Public,
    /// This machine or a private network: fetched only when allowed.
    Private,
    /// Link-local or a metadata service: never fetched.
    Forbidden,
}

/// Classifies an address. IPv4 addresses carried in IPv6 (mapped, NAT64) count as the IPv4
/// address they carry.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return classify_v4(v4);
            }
            if METADATA_V6.contains(&v6) || v6.is_unicast_link_local() {
                AddressClass::Forbidden
            } else if v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_unique_local()
                || v6.is_multicast()
                // site-local (deprecated, fec0::/10) and documentation (2001:db8::/32)
                || (v6.segments()[0] & 0xffc0) == 0xfec0
                || (v6.segments()[0] == 0x2001 && v6.segments()[1] == 0x0db8)
            {
                AddressClass::Private
            } else {
                AddressClass::Public
            }
        }
    }
}

fn classify_v4(v4: Ipv4Addr) -> AddressClass {
    let [a, b, ..] = v4.octets();
    if v4.is_link_local() || METADATA_V4.contains(&v4) {
        AddressClass::Forbidden
    } else if v4.is_private()
        || v4.is_loopback()
        || v4.is_unspecified()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (carrier-grade NAT)
        || (a == 192 && b == 0 && v4.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || v4.is_documentation()
        || v4.is_broadcast()
        || v4.is_multicast()
        || a >= 240
    {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`)
/// address.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0) {
        let [.., a, b, c, d] = v6.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    None
}

/// One allowed target: a host (name or address), on one port or any.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Allowed {
    /// Lower case; IPv6 without brackets.
    host: String,
    port: Option<u16>,
}

/// Resolves a host name to addresses. The system's resolver by default; tests give their own to
/// make a name resolve where they need it.
pub trait HostLookup: Send + Sync + fmt::Debug {
    fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The system's resolver (getaddrinfo).
#[derive(Debug, Default)]
struct SystemLookup;

impl HostLookup for SystemLookup {
    fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        use std::net::ToSocketAddrs;
        Ok((host, 0u16).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// Which outbound targets devlens may reach beyond the public internet.
#[derive(Debug, Clone)]
pub struct OutboundPolicy {
    allowed: Vec<Allowed>,
    lookup: Arc<dyn HostLookup>,
}

impl Default for OutboundPolicy {
    fn default() -> Self {
        Self::public_only()
    }
}

impl OutboundPolicy {
    /// Public addresses only.
    pub fn public_only() -> Self {
        Self {
            allowed: Vec::new(),
            lookup: Arc::new(SystemLookup),
        }
    }

    /// The user's allow list: `[network] allow` of a trusted configuration and
    /// `DEVLENS_NETWORK_ALLOW` (comma-separated), plus the hosts of the user's HTTP proxies.
    pub fn from_config(config: &crate::Config) -> Self {
        let mut policy = Self::from_env();
        for entry in &config.file.network.allow {
            policy.allow(entry);
        }
        policy
    }

    /// The allow list the environment gives: `DEVLENS_NETWORK_ALLOW` (comma-separated) and the
    /// hosts of the user's HTTP proxies. For clients built where no configuration is at hand (an
    /// embedding provider, the LLM endpoint, the model hub), which allow their own configured
    /// endpoint besides.
    pub fn from_env() -> Self {
        let mut policy = Self::public_only();
        if let Ok(list) = std::env::var("DEVLENS_NETWORK_ALLOW") {
            for entry in list.split(',') {
                policy.allow(entry);
            }
        }
        for var in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            if let Ok(proxy) = std::env::var(var) {
                policy.allow(&proxy);
            }
        }
        policy
    }

    /// Allows `target` even where it is private: `host`, `host:port`, or a URL (its host and
    /// port). Blank or unreadable entries are skipped; link-local and metadata targets stay
    /// refused whatever is allowed.
    pub fn allow(&mut self, target: &str) {
        if let Some(allowed) = parse_target(target)
            && !self.allowed.contains(&allowed)
        {
            self.allowed.push(allowed);
        }
    }

    /// This policy with `target` allowed too (see [`OutboundPolicy::allow`]).
    pub fn allowing(mut self, target: &str) -> Self {
        self.allow(target);
        self
    }

    /// This policy resolving names with `lookup` (tests).
    pub fn with_lookup(mut self, lookup: Arc<dyn HostLookup>) -> Self {
        self.lookup = lookup;
        self
    }

    /// Whether `host:port` was allowed.
    fn allows(&self, host: &str, port: Option<u16>) -> bool {
        self.allowed
            .iter()
            .any(|a| a.host == host && (a.port.is_none() || a.port == port))
    }

    /// Whether `host` was allowed on some port (the resolver cannot see ports).
    fn allows_name(&self, host: &str) -> bool {
        self.allowed.iter().any(|a| a.host == host)
    }

    fn check_ip(&self, url: &Url, host: &str, ip: IpAddr) -> Result<(), OutboundError> {
        let refuse = |reason| OutboundError {
            url: url.to_string(),
            reason,
        };
        match classify(ip) {
            AddressClass::Public => Ok(()),
            AddressClass::Forbidden if is_metadata_ip(ip) => {
                Err(refuse(Refusal::Metadata(ip.to_string())))
            }
            AddressClass::Forbidden => Err(refuse(Refusal::LinkLocal(ip))),
            AddressClass::Private if self.allows(host, url.port_or_known_default()) => Ok(()),
            AddressClass::Private => Err(refuse(Refusal::Private {
                host: host.to_string(),
                ip,
            })),
        }
    }

    /// Checks what can be checked without resolving: the scheme, metadata names, literal
    /// addresses. `Ok(Some(host))`: a name the resolver still has to check; `Ok(None)`: nothing
    /// left to check.
    fn check_literal(&self, url: &Url) -> Result<Option<String>, OutboundError> {
        let refuse = |reason| OutboundError {
            url: url.to_string(),
            reason,
        };
        if !matches!(url.scheme(), "http" | "https") {
            return Err(refuse(Refusal::Scheme(url.scheme().to_string())));
        }
        match url.host() {
            None => Err(refuse(Refusal::NoHost)),
            Some(Host::Ipv4(v4)) => self
                .check_ip(url, &v4.to_string(), IpAddr::V4(v4))
                .map(|()| None),
            Some(Host::Ipv6(v6)) => self
                .check_ip(url, &v6.to_string(), IpAddr::V6(v6))
                .map(|()| None),
            Some(Host::Domain(name)) => {
                let name = normalize_name(name);
                if is_metadata_name(&name) {
                    return Err(refuse(Refusal::Metadata(name)));
                }
                Ok(Some(name))
            }
        }
    }

    /// Checks `url` before a request is sent to it, resolving its host where the allow list
    /// depends on the port (the resolver checks every connection again).
    pub fn check_blocking(&self, url: &Url) -> Result<(), OutboundError> {
        let Some(name) = self.check_literal(url)? else {
            return Ok(());
        };
        // A name allowed on this port may be private; one never allowed is checked by the
        // resolver when it connects. A name allowed on another port only must not reach a
        // private service on this one: resolve it now.
        let port = url.port_or_known_default();
        if self.allows(&name, port) || !self.allows_name(&name) {
            return Ok(());
        }
        let addresses = self.lookup.lookup(&name).map_err(|e| OutboundError {
            url: url.to_string(),
            reason: Refusal::Unresolved {
                host: name.clone(),
                why: e.to_string(),
            },
        })?;
        for ip in addresses {
            self.check_ip(url, &name, ip)?;
        }
        Ok(())
    }

    /// [`OutboundPolicy::check_blocking`] off the async runtime's threads.
    pub async fn check(&self, url: &Url) -> Result<(), OutboundError> {
        if self.check_literal(url)?.is_none() {
            return Ok(());
        }
        let policy = self.clone();
        let owned = url.clone();
        match tokio::task::spawn_blocking(move || policy.check_blocking(&owned)).await {
            Ok(result) => result,
            Err(e) => Err(OutboundError {
                url: url.to_string(),
                reason: Refusal::Unresolved {
                    host: url.host_str().unwrap_or_default().to_string(),
                    why: e.to_string(),
                },
            }),
        }
    }

    /// An HTTP client builder whose connections and redirects pass this policy. Set timeouts,
    /// the user agent and the like on it; build it with [`GuardedClient::new`] so literal
    /// addresses are checked too.
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        crate::tls::install();
        let redirects = self.clone();
        reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver {
                policy: self.clone(),
            }))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= MAX_REDIRECTS {
                    return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
                }
                match redirects.check_blocking(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(refused) => attempt.error(refused),
                }
            }))
    }

    /// A guarded client with reqwest's defaults otherwise.
    pub fn client(&self) -> Result<GuardedClient, reqwest::Error> {
        GuardedClient::new(self.clone(), self.client_builder())
    }
}

fn is_metadata_name(name: &str) -> bool {
    METADATA_NAMES.contains(&name)
}

fn is_metadata_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4 == Ipv4Addr::new(169, 254, 169, 254) || METADATA_V4.contains(&v4),
        IpAddr::V6(v6) => {
            METADATA_V6.contains(&v6) || embedded_v4(v6).is_some_and(|v4| is_metadata_ip(v4.into()))
        }
    }
}

/// A host name as compared: lower case, without a trailing dot.
fn normalize_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// `host`, `host:port`, `[v6]:port` or a URL, as an allow-list entry.
fn parse_target(target: &str) -> Option<Allowed> {
    let target = target.trim();
    if target.is_empty() {
        return None;
    }
    if target.contains("://") {
        let url = Url::parse(target).ok()?;
        let host = match url.host()? {
            Host::Domain(name) => normalize_name(name),
            Host::Ipv4(v4) => v4.to_string(),
            Host::Ipv6(v6) => v6.to_string(),
        };
        return Some(Allowed {
            host,
            port: url.port_or_known_default(),
        });
    }
    if let Ok(addr) = target.parse::<SocketAddr>() {
        return Some(Allowed {
            host: addr.ip().to_string(),
            port: Some(addr.port()),
        });
    }
    if let Ok(ip) = target.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Some(Allowed {
            host: ip.to_string(),
            port: None,
        });
    }
    match target.rsplit_once(':') {
        Some((host, port)) => Some(Allowed {
            host: normalize_name(host),
            port: Some(port.parse().ok()?),
        }),
        None => Some(Allowed {
            host: normalize_name(target),
            port: None,
        }),
    }
}

/// The resolver of guarded clients: a name's addresses are checked before they are connected
/// to, so the address checked is the address used.
#[derive(Debug)]
struct GuardedResolver {
    policy: OutboundPolicy,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let host = normalize_name(name.as_str());
        Box::pin(async move {
            let lookup = Arc::clone(&policy.lookup);
            let looked_up = host.clone();
            let resolved = tokio::time::timeout(
                LOOKUP_TIMEOUT,
                tokio::task::spawn_blocking(move || lookup.lookup(&looked_up)),
            )
            .await
            .map_err(|_| format!("resolving {host} took longer than {LOOKUP_TIMEOUT:?}"))?
            .map_err(|e| e.to_string())??;
            let shown = Url::parse(&format!("http://{host}/"))
                .map(|u| u.to_string())
                .unwrap_or_else(|_| host.clone());
            let allowed_private = policy.allows_name(&host);
            let mut addresses = Vec::new();
            for ip in resolved {
                let refusal = match classify(ip) {
                    AddressClass::Public => None,
                    AddressClass::Private if allowed_private => None,
                    AddressClass::Forbidden if is_metadata_ip(ip) => {
                        Some(Refusal::Metadata(ip.to_string()))
                    }
                    AddressClass::Forbidden => Some(Refusal::LinkLocal(ip)),
                    AddressClass::Private => Some(Refusal::Private {
                        host: host.clone(),
                        ip,
                    }),
                };
                if let Some(reason) = refusal {
                    // One bad address refuses the name: a connection could go to any of them.
                    return Err(Box::new(OutboundError { url: shown, reason })
                        as Box<dyn std::error::Error + Send + Sync>);
                }
                addresses.push(SocketAddr::new(ip, 0));
            }
            if addresses.is_empty() {
                return Err(format!("{host} resolves to no address").into());
            }
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// An HTTP client that checks every request's URL against its policy before sending it (names
/// are checked again by its resolver, every redirect by its redirect policy).
#[derive(Debug, Clone)]
pub struct GuardedClient {
    client: reqwest::Client,
    policy: OutboundPolicy,
}

impl GuardedClient {
    /// `builder` must come from `policy.client_builder()`.
    pub fn new(
        policy: OutboundPolicy,
        builder: reqwest::ClientBuilder,
    ) -> Result<Self, reqwest::Error> {
        Ok(Self {
            client: builder.build()?,
            policy,
        })
    }

    pub fn policy(&self) -> &OutboundPolicy {
        &self.policy
    }

    /// A request to `url`, refused before anything is sent when the guard says no.
    pub async fn request(
        &self,
        method: reqwest::Method,
        url: &str,
    ) -> Result<reqwest::RequestBuilder, OutboundError> {
        let parsed = Url::parse(url).map_err(|_| OutboundError {
            url: url.to_string(),
            reason: Refusal::NotAUrl,
        })?;
        self.policy.check(&parsed).await?;
        Ok(self.client.request(method, parsed))
    }

    pub async fn get(&self, url: &str) -> Result<reqwest::RequestBuilder, OutboundError> {
        self.request(reqwest::Method::GET, url).await
    }

    pub async fn post(&self, url: &str) -> Result<reqwest::RequestBuilder, OutboundError> {
        self.request(reqwest::Method::POST, url).await
    }
}

/// Whether a reqwest error is the guard's refusal (of a redirect or a resolved address); its
/// message then says why.
pub fn refusal_in(error: &reqwest::Error) -> Option<&OutboundError> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refused) = e.downcast_ref::<OutboundError>() {
            return Some(refused);
        }
        source = e.source();
    }
    None
}

/// The guard's refusal in a reqwest error, naming the URL the request was for: the resolver sees
/// only a host, so its own refusal names no port (and would hint `host:80` for `host:8080`).
pub fn refusal_of(error: &reqwest::Error) -> Option<OutboundError> {
    let refused = refusal_in(error)?;
    match error.url() {
        // A redirect refused names its hop already.
        Some(url) if !error.is_redirect() => Some(OutboundError {
            url: url.to_string(),
            reason: refused.reason.clone(),
        }),
        _ => Some(refused.clone()),
    }
}

/// A reqwest error as a sentence: the guard's refusal when it was one, else reqwest's message
/// with its causes.
pub fn explain(error: &reqwest::Error) -> String {
    if let Some(refused) = refusal_of(error) {
        return refused.to_string();
    }
    let mut message = error.without_url_ref().to_string();
    let mut source = std::error::Error::source(error);
    let mut seen = HashSet::new();
    while let Some(e) = source {
        let text = e.to_string();
        if seen.insert(text.clone()) && !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = e.source();
    }
    message
}

trait WithoutUrlRef {
    fn without_url_ref(&self) -> String;
}

impl WithoutUrlRef for reqwest::Error {
    fn without_url_ref(&self) -> String {
        // reqwest prints "error sending request for url (…)": the URL may carry a key.
        let text = self.to_string();
        match text.find(" for url (") {
            Some(at) => text[..at].to_string(),
            None => text,
        }
    }
}

/// A response body too large to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    #[error("the response is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("reading the response failed: {0}")]
    Read(String),
}

/// Reads a response's body, stopping as soon as it passes `limit` bytes: a huge or endless body
/// is never held whole (a declared `Content-Length` over the limit is refused before reading).
pub async fn read_body_capped(
    mut response: reqwest::Response,
    limit: u64,
) -> Result<Vec<u8>, BodyError> {
    if response.content_length().is_some_and(|len| len > limit) {
        return Err(BodyError::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| BodyError::Read(explain(&e)))?
    {
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(BodyError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The first `limit` bytes of a response's body (all of it when shorter), read as they arrive:
/// the rest is never downloaded. For files read only in part (robots.txt).
pub async fn read_body_prefix(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = limit - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) => break,
            Err(e) => return Err(explain(&e)),
        }
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct FixedLookup(Vec<IpAddr>);

    impl HostLookup for FixedLookup {
        fn lookup(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
            Ok(self.0.clone())
        }
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn addresses_are_classified_as_the_guard_needs() {
        let class = |s: &str| classify(s.parse().unwrap());
        for public in ["8.8.8.8", "140.82.112.3", "2606:4700::1111", "100.63.0.1"] {
            assert_eq!(class(public), AddressClass::Public, "{public}");
        }
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd12::1",
            "::",
            "::ffff:127.0.0.1",
            "255.255.255.255",
        ] {
            assert_eq!(class(private), AddressClass::Private, "{private}");
        }
        for forbidden in [
            "169.254.169.254",
            "169.254.1.1",
            "fe80::1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "100.100.100.200",
            "fd00:ec2::254",
        ] {
            assert_eq!(class(forbidden), AddressClass::Forbidden, "{forbidden}");
        }
    }

    #[test]
    fn metadata_and_link_local_are_refused_even_when_allowed() {
        let policy = OutboundPolicy::public_only()
            .allowing("169.254.169.254")
            .allowing("metadata.google.internal");
        for target in [
            "http://169.254.169.254/latest/meta-data/",
            "http://[fe80::1]/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.google.internal./",
            // the same address written as one number
            "http://2852039166/",
            "http://[::ffff:a9fe:a9fe]/",
        ] {
            let err = policy.check_blocking(&url(target)).unwrap_err();
            assert!(
                matches!(err.reason, Refusal::LinkLocal(_) | Refusal::Metadata(_)),
                "{target}: {err:?}"
            );
            assert!(err.to_string().contains("refused always"), "{err}");
        }
    }

    #[test]
    fn private_addresses_need_an_allow_entry_for_their_port() {
        let strict = OutboundPolicy::public_only();
        let err = strict
            .check_blocking(&url("http://127.0.0.1:6379/"))
            .unwrap_err();
        assert!(matches!(err.reason, Refusal::Private { .. }));
        let message = err.to_string();
        assert!(
            message.contains("[network] allow = [\"127.0.0.1:6379\"]"),
            "{message}"
        );
        let allowed = strict.clone().allowing("http://127.0.0.1:3000/api");
        assert!(
            allowed
                .check_blocking(&url("http://127.0.0.1:3000/x"))
                .is_ok()
        );
        assert!(
            allowed
                .check_blocking(&url("http://127.0.0.1:6379/"))
                .is_err()
        );
        let any_port = strict.allowing("10.0.0.5");
        assert!(
            any_port
                .check_blocking(&url("https://10.0.0.5:8443/"))
                .is_ok()
        );
        assert!(any_port.check_blocking(&url("http://[::1]/")).is_err());
    }

    #[test]
    fn a_name_allowed_on_one_port_does_not_open_its_other_ports() {
        let policy = OutboundPolicy::public_only()
            .allowing("localhost:3000")
            .with_lookup(Arc::new(FixedLookup(vec!["127.0.0.1".parse().unwrap()])));
        assert!(
            policy
                .check_blocking(&url("http://localhost:3000/"))
                .is_ok()
        );
        let err = policy
            .check_blocking(&url("http://localhost:6379/"))
            .unwrap_err();
        assert!(matches!(err.reason, Refusal::Private { .. }), "{err:?}");
    }

    #[test]
    fn only_http_and_https() {
        let policy = OutboundPolicy::public_only();
        for target in ["file:///etc/passwd", "ftp://example.com/", "gopher://x/"] {
            let err = policy.check_blocking(&url(target)).unwrap_err();
            assert!(matches!(err.reason, Refusal::Scheme(_)), "{target}");
        }
    }

    #[test]
    fn allow_entries_are_read_in_every_shape() {
        let parsed = |s| parse_target(s).unwrap();
        assert_eq!(parsed("localhost:3000").port, Some(3000));
        assert_eq!(parsed("Intranet.Corp").host, "intranet.corp");
        assert_eq!(parsed("[::1]:8080").host, "::1");
        assert_eq!(parsed("::1").port, None);
        assert_eq!(parsed("https://api.local/v1").port, Some(443));
        assert!(parse_target("  ").is_none());
        assert!(parse_target("host:notaport").is_none());
    }

    #[test]
    fn messages_hide_credentials_in_urls() {
        let err = OutboundPolicy::public_only()
            .check_blocking(&url("http://user:secret@127.0.0.1/x?key=abc"))
            .unwrap_err()
            .to_string();
        assert!(!err.contains("secret") && !err.contains("abc"), "{err}");
    }

    #[tokio::test]
    async fn the_resolver_refuses_a_name_that_resolves_to_a_forbidden_address() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        for (answer, expect) in [
            ("169.254.169.254", "refused always"),
            ("169.254.3.4", "link-local"),
            ("127.0.0.1", "private"),
        ] {
            let policy = OutboundPolicy::public_only()
                .with_lookup(Arc::new(FixedLookup(vec![answer.parse().unwrap()])));
            let client = policy.client().unwrap();
            let target = format!("http://docs.example:{port}/");
            let err = client.get(&target).await.unwrap().send().await.unwrap_err();
            let message = explain(&err);
            assert!(message.contains(expect), "{answer}: {message}");
            assert!(refusal_in(&err).is_some(), "{message}");
        }
    }
}
