//! `app_tool_args` (crates/devlens-fuzz-harness/src/app_tool_args.rs says what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| devlens_fuzz_harness::app_tool_args::run(data));
