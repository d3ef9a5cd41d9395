//! Timestamps for stored records (`builtAt`, `createdAt`): RFC 3339 in UTC, second precision,
//! formatted by the `time` crate (already built for tantivy, with these features).

use std::time::{SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Now, as `2026-11-22T18:00:12Z`.
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    rfc3339(secs)
}

/// Seconds since the Unix epoch as an RFC 3339 UTC timestamp. (Past year 9999, which `time`
/// cannot format, the epoch is written: no record gets such a date from a clock.)
pub fn rfc3339(unix_secs: u64) -> String {
    i64::try_from(unix_secs)
        .ok()
        .and_then(|secs| OffsetDateTime::from_unix_timestamp(secs).ok())
        .and_then(|at| at.format(&Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_string())
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_370_412), "2026-11-22T18:00:12Z");
    }
}
