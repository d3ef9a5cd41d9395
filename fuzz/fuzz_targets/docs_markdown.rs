//! `docs_markdown` (crates/devlens-fuzz-harness/src/docs_markdown.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::docs_markdown::run(data));
