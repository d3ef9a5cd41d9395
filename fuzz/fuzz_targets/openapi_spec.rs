//! `openapi_spec` (crates/devlens-fuzz-harness/src/openapi_spec.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::openapi_spec::run(data));
