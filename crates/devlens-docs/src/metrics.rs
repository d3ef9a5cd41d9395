//! Counters of `query_docs` in the Prometheus text format (what `/metrics` serves): requests,
//! errors, latency and tokens per answer as histograms, cache hits and misses.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A fixed-bucket histogram; the sum is kept in micro-units to stay an integer.
#[derive(Debug)]
struct Histogram {
    bounds: &'static [f64],
    buckets: Vec<AtomicU64>,
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            buckets: bounds.iter().map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum_micros: AtomicU64::new(0),
        }
    }

    fn observe(&self, value: f64) {
        for (bound, bucket) in self.bounds.iter().zip(&self.buckets) {
            if value <= *bound {
                bucket.fetch_add(1, Relaxed);
            }
        }
        self.count.fetch_add(1, Relaxed);
        self.sum_micros
            .fetch_add((value * 1_000_000.0).round() as u64, Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (bound, bucket) in self.bounds.iter().zip(&self.buckets) {
            let _ = writeln!(
                out,
                "{name}_bucket{{le=\"{bound}\"}} {}",
                bucket.load(Relaxed)
            );
        }
        let count = self.count.load(Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.sum_micros.load(Relaxed) as f64 / 1_000_000.0;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
    }
}

/// The answer cache's counts, both tiers.
#[derive(Debug, Default, Clone, Copy)]
pub struct CacheCounts {
    pub memory_hits: u64,
    pub redis_hits: u64,
    pub misses: u64,
    /// `None` without a Redis tier.
    pub redis_errors: Option<u64>,
}

/// What `query_docs` did since the process started.
#[derive(Debug)]
pub struct QueryMetrics {
    requests: AtomicU64,
    errors: AtomicU64,
    latency: Histogram,
    tokens: Histogram,
}

impl Default for QueryMetrics {
    fn default() -> Self {
        Self {
            requests: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            latency: Histogram::new(&[0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0]),
            tokens: Histogram::new(&[250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0]),
        }
    }
}

impl QueryMetrics {
    /// Records one call: its duration and, for an answer, its `total_tokens`.
    pub fn record(&self, seconds: f64, tokens: Option<usize>) {
        self.requests.fetch_add(1, Relaxed);
        self.latency.observe(seconds);
        match tokens {
            Some(t) => self.tokens.observe(t as f64),
            None => {
                self.errors.fetch_add(1, Relaxed);
            }
        }
    }

    /// The Prometheus text exposition of these metrics and the cache's counts.
    pub fn render(&self, cache: &CacheCounts) -> String {
        let mut out = String::new();
        let counter = |out: &mut String, name: &str, help: &str, value: u64| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        };
        counter(
            &mut out,
            "devlens_docs_queries_total",
            "query_docs calls.",
            self.requests.load(Relaxed),
        );
        counter(
            &mut out,
            "devlens_docs_query_errors_total",
            "query_docs calls that failed (bad input, unknown library, no results, storage).",
            self.errors.load(Relaxed),
        );
        let _ = writeln!(
            out,
            "# HELP devlens_docs_cache_hits_total Answers served from a cache, by tier (memory: \
             this process; redis: shared by servers).\n\
             # TYPE devlens_docs_cache_hits_total counter\n\
             devlens_docs_cache_hits_total{{tier=\"memory\"}} {}\n\
             devlens_docs_cache_hits_total{{tier=\"redis\"}} {}",
            cache.memory_hits, cache.redis_hits
        );
        counter(
            &mut out,
            "devlens_docs_cache_misses_total",
            "Answers computed (in no cache tier).",
            cache.misses,
        );
        if let Some(errors) = cache.redis_errors {
            counter(
                &mut out,
                "devlens_docs_cache_redis_errors_total",
                "Redis commands that failed (the query went on without Redis).",
                errors,
            );
        }
        let cache_hits = cache.memory_hits + cache.redis_hits;
        let lookups = cache_hits + cache.misses;
        let ratio = if lookups == 0 {
            0.0
        } else {
            cache_hits as f64 / lookups as f64
        };
        let _ = writeln!(
            out,
            "# HELP devlens_docs_cache_hit_ratio Share of answers served from the cache.\n\
             # TYPE devlens_docs_cache_hit_ratio gauge\ndevlens_docs_cache_hit_ratio {ratio}"
        );
        self.latency.render(
            &mut out,
            "devlens_docs_query_duration_seconds",
            "query_docs latency.",
        );
        self.tokens.render(
            &mut out,
            "devlens_docs_answer_tokens",
            "cl100k tokens of each answer's context.",
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_cumulative_buckets() {
        let m = QueryMetrics::default();
        m.record(0.003, Some(1200));
        m.record(0.2, None);
        let text = m.render(&CacheCounts {
            memory_hits: 2,
            redis_hits: 1,
            misses: 1,
            redis_errors: Some(4),
        });
        assert!(text.contains("devlens_docs_cache_hits_total{tier=\"redis\"} 1\n"));
        assert!(text.contains("devlens_docs_cache_redis_errors_total 4\n"));
        assert!(text.contains("devlens_docs_queries_total 2\n"));
        assert!(text.contains("devlens_docs_query_errors_total 1\n"));
        assert!(text.contains("devlens_docs_cache_hit_ratio 0.75\n"));
        assert!(text.contains("devlens_docs_query_duration_seconds_bucket{le=\"0.005\"} 1\n"));
        assert!(text.contains("devlens_docs_query_duration_seconds_bucket{le=\"0.25\"} 2\n"));
        assert!(text.contains("devlens_docs_query_duration_seconds_count 2\n"));
        assert!(text.contains("devlens_docs_answer_tokens_bucket{le=\"2000\"} 1\n"));
    }
}
