//! `docs_rst` (crates/devlens-fuzz-harness/src/docs_rst.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::docs_rst::run(data));
