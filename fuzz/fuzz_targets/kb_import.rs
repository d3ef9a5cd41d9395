//! `kb_import` (crates/devlens-fuzz-harness/src/kb_import.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::kb_import::run(data));
