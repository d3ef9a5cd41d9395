//! The benchmarks behind `devlens api bench`, `devlens docs bench`, `devlens kb bench` and `devlens store bench`: what
//! loading, indexing and searching specs cost ([`api`]), what ingesting and querying a docs folder costs ([`docs`]), what saving and searching solutions
//! cost with the local model ([`kb`]), and the scale run of the embedded store beside
//! PostgreSQL ([`store`]). Each returns its report (JSON and text); the binary's commands parse
//! the flags and print it. Figures and how to reproduce them: docs/benchmarks.md.

pub mod api;
pub mod docs;
pub mod kb;
pub mod store;
