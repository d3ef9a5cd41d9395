//! Attacks on devlens from outside, each against a real devlens (a server, an MCP session, the
//! CLI): what an agent, a web page, a cloned repository or a token holder sends, and that devlens
//! refuses it — with a clear error, nothing written, run or sent — while the legitimate path
//! beside it keeps working. docs/hardening.md lists them with the test of each.

mod browser;
mod config;
mod credentials;
mod fetch;
mod http;
mod paths;
mod workspace;
