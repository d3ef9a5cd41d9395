//! The docs integration tests, as one test binary: each file here is a module of it. Linking a test
//! binary is most of its build time on two cores, so a crate has one (docs/development.md).

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

mod budget;
mod cache;
mod outbound;
#[path = "../../../devlens-search/tests/support/postgres.rs"]
mod postgres;
mod postgres_store;
mod redis;
mod refine;
