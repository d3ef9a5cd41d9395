//! `openapi_multi_file` (crates/devlens-fuzz-harness/src/openapi_multi_file.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::openapi_multi_file::run(data));
