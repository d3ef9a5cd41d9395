//! The OpenAPI integration tests, as one test binary: each file here is a module of it. Linking a
//! test binary is most of its build time on two cores, so a crate has one (docs/development.md).

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

mod details_snapshot;
mod fixture_specs;
mod hardening;
mod real_world_specs;
mod rerank;
mod semantic_index;
mod support;
