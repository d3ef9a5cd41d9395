//! Named points inside multi-step writes, where the crash-safety tests stop a process exactly as
//! a `kill -9` landing there would: with `DEVLENS_CRASH_AT=<point>` in its environment, a process
//! aborts when it reaches that point. An abort runs no destructors and flushes nothing, so the
//! next run finds what a kill leaves (a half-written version folder, an uncommitted SQLite
//! transaction) — no timing involved. Without the variable a point costs one environment read
//! per write, not per item.

/// The environment variable naming the point to stop at.
pub const CRASH_AT_VAR: &str = "DEVLENS_CRASH_AT";

/// The API index store: a new version's files are written, `CURRENT` still names the old one.
pub const INDEX_VERSION_WRITTEN: &str = "index-version-written";
/// The API index store: the replacement `CURRENT` is written but not yet renamed into place.
pub const INDEX_CURRENT_PENDING: &str = "index-current-pending";
/// The API index store: `CURRENT` names the new version; older versions are not yet removed.
pub const INDEX_SWITCHED: &str = "index-switched";
/// The docs store: a version's rows are inserted, its transaction not yet committed.
pub const DOCS_BEFORE_COMMIT: &str = "docs-before-commit";

/// Aborts the process when `DEVLENS_CRASH_AT` names `point`.
pub fn crash_point(point: &str) {
    if std::env::var_os(CRASH_AT_VAR).is_some_and(|v| v == point) {
        eprintln!("{CRASH_AT_VAR}={point}: stopping here, as a kill would");
        std::process::abort();
    }
}
