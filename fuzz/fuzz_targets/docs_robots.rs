//! `docs_robots` (crates/devlens-fuzz-harness/src/docs_robots.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::docs_robots::run(data));
