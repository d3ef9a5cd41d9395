//! The contract integration tests, as one test binary: each file here is a module of it. Linking
//! a test binary is most of its build time on two cores, so a crate has one (docs/development.md).

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

mod contract;
mod real_world_specs;
// The test data sets are found as devlens-openapi's tests find them.
#[path = "../../../devlens-openapi/tests/it/support/mod.rs"]
mod support;
