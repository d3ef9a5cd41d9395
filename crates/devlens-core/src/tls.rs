//! TLS for every connection devlens opens (HTTP clients, `rediss://`, PostgreSQL over TLS):
//! rustls with *ring* as its one crypto provider.
//!
//! Not rustls' default, AWS-LC: the PostgreSQL TLS connector (tokio-postgres-rustls) builds ring
//! anyway, and AWS-LC's C library was 77 CPU-seconds of a clean build here on top of it
//! (docs/development.md, "The test command's time"). reqwest is built without a provider of its
//! own (`rustls-no-provider`), so every client is built after [`install`] — as are the ones a
//! dependency builds itself (chromiumoxide's `/json/version` lookup).

use std::sync::Arc;

use rustls::crypto::CryptoProvider;

/// The crypto provider for a rustls configuration devlens builds itself.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Makes ring the process's default provider, which reqwest and other dependencies' clients use;
/// call it before building one. Idempotent and cheap.
pub fn install() {
    // Err only when a provider is installed already: this one, by an earlier call.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
