//! The bodies of devlens's fuzz targets: what each one feeds devlens, given libFuzzer's bytes.
//! `fuzz/fuzz_targets/<target>.rs` is a one-line `fuzz_target!` around `<target>::run`
//! (`scripts/fuzz` runs them with cargo-fuzz); the tests here run every body over a few seeds,
//! so `scripts/test` fails when a target stops building or panics on a plain input. What each
//! target found: docs/hardening.md.

pub mod app_tool_args;
pub mod browser_sourcemap;
pub mod docs_html;
pub mod docs_markdown;
mod docs_page;
pub mod docs_robots;
pub mod docs_rst;
pub mod docs_sitemap;
pub mod kb_import;
pub mod openapi_multi_file;
pub mod openapi_spec;

/// A target's body: one input, as libFuzzer hands it over.
pub type Body = fn(&[u8]);

/// Every target: its name (the fuzz binary's and its corpus folder's) and its body.
pub const TARGETS: &[(&str, Body)] = &[
    ("openapi_spec", openapi_spec::run),
    ("openapi_multi_file", openapi_multi_file::run),
    ("docs_markdown", docs_markdown::run),
    ("docs_rst", docs_rst::run),
    ("docs_html", docs_html::run),
    ("docs_robots", docs_robots::run),
    ("docs_sitemap", docs_sitemap::run),
    ("browser_sourcemap", browser_sourcemap::run),
    ("kb_import", kb_import::run),
    ("app_tool_args", app_tool_args::run),
];

#[cfg(test)]
mod tests;
