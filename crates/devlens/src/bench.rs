//! `devlens api bench`: how long loading and indexing a spec takes, how much memory it needs, and
//! keyword query latency. Medians and percentiles of repeated runs in one process, so figures
//! from a shared machine stay comparable.

use std::{path::Path, time::Instant};

use anyhow::Context;
use serde::Serialize;

use devlens_openapi::{
    ApiSpec,
    search::{OperationIndex, SearchRequest},
};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchReport {
    pub spec: String,
    pub bytes: usize,
    pub operations: usize,
    pub runs: usize,
    /// Parse + normalise + list operations, median of `runs`.
    pub load_ms_p50: f64,
    /// Build the BM25 index, median of `runs`.
    pub index_ms_p50: f64,
    /// Peak resident memory of the process (VmHWM), MiB.
    pub peak_rss_mib: f64,
    /// Resident memory before loading, MiB.
    pub base_rss_mib: f64,
    pub queries: usize,
    pub query_ms_p50: f64,
    pub query_ms_p95: f64,
}

impl BenchReport {
    pub fn to_text(&self) -> String {
        format!(
            "{} ({:.1} MB, {} operations, {} runs)\n\
             load   p50 {:.1} ms\nindex  p50 {:.1} ms\n\
             memory peak {:.0} MiB (base {:.0} MiB)\n\
             keyword query p50 {:.3} ms, p95 {:.3} ms over {} queries",
            self.spec,
            self.bytes as f64 / 1e6,
            self.operations,
            self.runs,
            self.load_ms_p50,
            self.index_ms_p50,
            self.peak_rss_mib,
            self.base_rss_mib,
            self.query_ms_p50,
            self.query_ms_p95,
            self.queries
        )
    }
}

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * (samples.len() - 1) as f64).round() as usize;
    samples[rank.min(samples.len() - 1)]
}

/// VmHWM / VmRSS from /proc (Linux); 0 elsewhere.
fn proc_status_mib(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Questions a user might type: the operations' own summaries, lower-cased and without the
/// first word's capital, spread evenly over the spec.
fn sample_queries(spec: &ApiSpec, count: usize) -> Vec<String> {
    let ops = spec.operations();
    let with_summary: Vec<&str> = ops.iter().filter_map(|o| o.summary.as_deref()).collect();
    if with_summary.is_empty() {
        return ops.iter().take(count).map(|o| o.path.clone()).collect();
    }
    (0..count)
        .map(|i| with_summary[(i * 7919) % with_summary.len()].to_lowercase())
        .collect()
}

pub fn run(path: &Path, runs: usize, queries: usize) -> anyhow::Result<BenchReport> {
    let runs = runs.max(1);
    let base_rss_mib = proc_status_mib("VmRSS:");
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let location = path.display().to_string();
    let mut load_ms = Vec::with_capacity(runs);
    let mut index_ms = Vec::with_capacity(runs);
    let mut kept = None;
    for _ in 0..runs {
        let start = Instant::now();
        let spec = ApiSpec::from_bytes(&bytes, &location)?;
        load_ms.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        let index = OperationIndex::build(&spec)?;
        index_ms.push(start.elapsed().as_secs_f64() * 1e3);
        kept = Some((spec, index));
    }
    let (spec, index) = kept.context("no run completed")?;
    let mut query_ms = Vec::with_capacity(queries);
    for query in sample_queries(&spec, queries) {
        let request = SearchRequest::new(Some(query), None, None, Some(10), None)
            .map_err(anyhow::Error::msg)?;
        let start = Instant::now();
        let response = index.search(&spec, &request)?;
        query_ms.push(start.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(response);
    }
    Ok(BenchReport {
        spec: location,
        bytes: bytes.len(),
        operations: spec.operations().len(),
        runs,
        load_ms_p50: percentile(&mut load_ms, 50.0),
        index_ms_p50: percentile(&mut index_ms, 50.0),
        peak_rss_mib: proc_status_mib("VmHWM:"),
        base_rss_mib,
        queries: query_ms.len(),
        query_ms_p50: percentile(&mut query_ms, 50.0),
        query_ms_p95: percentile(&mut query_ms, 95.0),
    })
}
