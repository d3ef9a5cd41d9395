//! `docs_sitemap` (crates/devlens-fuzz-harness/src/docs_sitemap.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::docs_sitemap::run(data));
