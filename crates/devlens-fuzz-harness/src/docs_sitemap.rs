//! A sitemap or sitemap index as the docs crawler reads it: the `<loc>` of each entry,
//! entity-decoded, CDATA unwrapped.

/// One input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = devlens_docs::sitemap::parse(&text);
}
