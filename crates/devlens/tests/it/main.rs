//! The end-to-end tests of the devlens binary (CLI, MCP, HTTP, panel, extension), as one test
//! binary: each file here is a module of it. Linking a test binary is most of its build time on two
//! cores, so a crate has one (docs/development.md).

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

mod api_traffic;
mod architecture;
mod attacks;
mod auth;
mod bounds;
mod cli_api;
mod cli_browser;
mod cli_docs;
mod cli_kb;
mod cli_session;
mod common;
mod crash_safety;
mod docs_deps;
mod extension;
mod extension_offline;
mod extension_sync;
mod http_families;
mod http_kb;
mod kb_sync;
mod live_coding;
mod load;
mod mcp_browser;
mod mcp_debugger;
mod mcp_docs;
mod mcp_e2e;
mod mcp_kb;
mod mcp_resources;
mod mcp_sampling;
mod mcp_visibility;
mod mcp_workspace;
mod panel;
mod panel_browser;
mod panel_docs;
mod panel_kb;
#[path = "../../../devlens-search/tests/support/postgres.rs"]
mod postgres;
mod quality_gates;
mod team_server;
