//! Writing command results to stdout: compact text, or pretty JSON with `--json`. A closed pipe
//! (`devlens … | head`) ends the output quietly instead of panicking like `println!`.

use std::io::Write;

use serde::Serialize;

use devlens_app::Report;

/// Writes one line to stdout; a reader that went away is not an error.
pub(crate) fn line(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `value` as pretty JSON when `json`, else `text()`.
pub(crate) fn print<T: Serialize>(
    json: bool,
    value: &T,
    text: impl FnOnce() -> String,
) -> anyhow::Result<()> {
    if json {
        line(&serde_json::to_string_pretty(value)?)
    } else {
        line(&text())
    }
}

/// A result: pretty JSON when `json`, else its compact text.
pub(crate) fn report<T: Report>(json: bool, value: &T) -> anyhow::Result<()> {
    print(json, value, || value.to_text())
}
