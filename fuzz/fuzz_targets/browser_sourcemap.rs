//! `browser_sourcemap` (crates/devlens-fuzz-harness/src/browser_sourcemap.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::browser_sourcemap::run(data));
