//! The browser integration tests against real headless Chromium, as one test binary: each file here
//! is a module of it. Linking a test binary is most of its build time on two cores, so a crate has
//! one (docs/development.md).

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

mod audits_a11y;
mod audits_css;
mod audits_memory;
mod audits_perf;
mod audits_state;
mod browser;
mod common;
mod connections;
mod debugger;
mod frames;
