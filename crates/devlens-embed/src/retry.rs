//! When and how long to wait before asking a rate-limited or overloaded provider again.
//!
//! Exponential backoff with jitter spreads the retries of concurrent clients apart; a server's
//! `Retry-After` (seconds or an HTTP date) wins over our own guess, because it knows. Attempts and
//! the total time spent waiting are both bounded, so an indexing run fails with a clear message
//! instead of hanging.

use std::time::{Duration, SystemTime};

/// Bounds and pacing of retries on 429 / 5xx / connection errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Requests per batch on 429 / 5xx, the first included (so `1` means no retry).
    pub max_attempts: u32,
    /// Requests per batch when the server cannot be reached at all. Lower than `max_attempts`:
    /// a server that is not running rarely starts within seconds, and a query waiting on it
    /// delays the keyword fallback.
    pub max_connect_attempts: u32,
    /// The first backoff; each retry doubles it.
    pub base_delay: Duration,
    /// Ceiling of one computed backoff (a server's `Retry-After` may ask for longer).
    pub max_delay: Duration,
    /// Ceiling of the time spent on one batch, requests and waits included; a retry that would
    /// end its wait past it is not made, so a run fails with a clear error rather than hang.
    pub max_total_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 6,
            max_connect_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_total_wait: Duration::from_secs(90),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0 for the first retry): `base · 2^retry`, capped at
    /// `max_delay`, then jittered uniformly into `[d/2, d]` so clients that failed together do not
    /// retry together.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32.checked_shl(retry.min(30)).unwrap_or(u32::MAX));
        let capped = exp.min(self.max_delay);
        capped.mul_f64(0.5 + 0.5 * random_unit())
    }
}

/// Statuses worth another try: rate limits and transient server trouble.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

/// Parses a `Retry-After` value: delta-seconds (`"3"`, also fractional `"0.5"` as some proxies
/// send) or an HTTP date, relative to `now`. A date in the past means "now".
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A number in `[0, 1)` that differs between calls; good enough for jitter, no `rand` needed.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    // Each RandomState gets fresh keys, and the clock adds more variation.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    hasher.write_u128(nanos);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_exponentially_within_jitter_and_cap() {
        let policy = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1_000),
            ..RetryPolicy::default()
        };
        for _ in 0..50 {
            let first = policy.backoff(0);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.backoff(2);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let late = policy.backoff(40);
            assert!(late >= Duration::from_millis(500) && late <= Duration::from_millis(1_000));
        }
        let samples: std::collections::HashSet<_> = (0..20).map(|_| policy.backoff(3)).collect();
        assert!(samples.len() > 1, "jitter should vary the delay");
    }

    #[test]
    fn retry_after_accepts_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(" 7 ", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1_500))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }

    #[test]
    fn only_transient_statuses_are_retried() {
        for s in [429, 500, 502, 503, 504] {
            assert!(is_retryable_status(s));
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!is_retryable_status(s));
        }
    }
}
