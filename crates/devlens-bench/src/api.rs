//! `devlens api bench`: how long loading and indexing a spec takes, how much memory it needs,
//! keyword query latency and how long rendering endpoint details takes. Medians and percentiles
//! of repeated runs in one process, so figures from a shared machine stay comparable.

use std::{path::Path, time::Instant};

use anyhow::Context;
use serde::Serialize;

use devlens_core::Config;
use devlens_embed::{Embedder, LocalBert};
use devlens_openapi::{
    ApiSpec, EndpointRef,
    search::{DEFAULT_MODE, OperationIndex, SearchRequest, SemanticQuery},
    semantic::{SemanticIndex, endpoint_text, query_text},
};
use devlens_search::Retrieval;

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
    /// Peak resident memory of the process (VmHWM), MiB: loading included, one spec loaded at
    /// a time (each run's spec is dropped before the next loads).
    pub peak_rss_mib: f64,
    /// Resident memory before loading, MiB.
    pub base_rss_mib: f64,
    /// Resident memory with the spec and its keyword index loaded, after the timed queries and
    /// details, MiB.
    pub loaded_rss_mib: f64,
    /// JSON text the spec holds for its path items and components (parsed when read), MiB.
    pub held_text_mib: f64,
    pub queries: usize,
    pub query_ms_p50: f64,
    pub query_ms_p95: f64,
    /// Endpoint details rendered (operations spread over the spec), each twice.
    pub details: usize,
    /// Rendering each one the first time (what a server's first requests on them take).
    pub details_ms_p50: f64,
    pub details_ms_p95: f64,
    /// Rendering the same ones again, straight after.
    pub details_again_ms_p50: f64,
    pub details_again_ms_p95: f64,
    /// With `--semantic`: the local model and the embedding index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticBench>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SemanticBench {
    pub model: String,
    /// The local model's engine: `candle` or `onnx (<file>)`.
    pub engine: String,
    pub model_load_ms: f64,
    /// Embedding every operation from scratch.
    pub index_build_ms: f64,
    pub texts_per_sec: f64,
    /// Rebuilding with nothing changed (every vector reused).
    pub reindex_unchanged_ms: f64,
    pub queries: usize,
    /// One question: embed it (no cache) and rank in hybrid mode.
    pub query_ms_p50: f64,
    pub query_ms_p95: f64,
}

impl BenchReport {
    pub fn to_text(&self) -> String {
        format!(
            "{} ({:.1} MB, {} operations, {} runs)\n\
             load   p50 {:.1} ms\nindex  p50 {:.1} ms\n\
             memory peak {:.0} MiB (base {:.0} MiB, {:.0} MiB loaded; {:.1} MiB of it JSON text)\n\
             keyword query p50 {:.3} ms, p95 {:.3} ms over {} queries\n\
             details p50 {:.3} ms, p95 {:.3} ms over {} endpoints (again: p50 {:.3} ms, p95 {:.3} ms)",
            self.spec,
            self.bytes as f64 / 1e6,
            self.operations,
            self.runs,
            self.load_ms_p50,
            self.index_ms_p50,
            self.peak_rss_mib,
            self.base_rss_mib,
            self.loaded_rss_mib,
            self.held_text_mib,
            self.query_ms_p50,
            self.query_ms_p95,
            self.queries,
            self.details_ms_p50,
            self.details_ms_p95,
            self.details,
            self.details_again_ms_p50,
            self.details_again_ms_p95,
        ) + &self
            .semantic
            .as_ref()
            .map(|s| {
                format!(
                    "\nmodel load {:.0} ms ({}, engine {})\n\
                     semantic index build {:.1} s ({:.0} texts/s); unchanged re-index {:.0} ms\n\
                     hybrid query (embed + rank) p50 {:.1} ms, p95 {:.1} ms over {} queries",
                    s.model_load_ms,
                    s.model,
                    s.engine,
                    s.index_build_ms / 1e3,
                    s.texts_per_sec,
                    s.reindex_unchanged_ms,
                    s.query_ms_p50,
                    s.query_ms_p95,
                    s.queries
                )
            })
            .unwrap_or_default()
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
pub fn proc_status_mib(key: &str) -> f64 {
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

/// Endpoints whose details are timed.
const DETAILS_SAMPLE: usize = 200;

/// Up to `count` operations spread evenly over the spec, by method and path.
fn sample_endpoints(spec: &ApiSpec, count: usize) -> Vec<EndpointRef> {
    let ops = spec.operations();
    let step = (ops.len() / count.max(1)).max(1);
    ops.iter()
        .step_by(step)
        .take(count)
        .map(|op| EndpointRef::method_path(op.method.clone(), op.path.clone()))
        .collect()
}

/// Milliseconds each endpoint's details take to render (a failed one is timed all the same:
/// the error is what a caller would get).
fn time_details(spec: &ApiSpec, endpoints: &[EndpointRef]) -> Vec<f64> {
    endpoints
        .iter()
        .map(|r| {
            let start = Instant::now();
            let details = spec.endpoint_details(r);
            let ms = start.elapsed().as_secs_f64() * 1e3;
            std::hint::black_box(details.ok());
            ms
        })
        .collect()
}

/// Where to write the exact texts the semantic part embeds, for comparisons with other tools.
#[derive(Debug, Default)]
pub struct Dump<'a> {
    /// The endpoint strings (`endpoint_text`), in operation order.
    pub texts: Option<&'a Path>,
    /// The timed questions, as embedded.
    pub queries: Option<&'a Path>,
}

fn write_json_list(path: Option<&Path>, items: &[String]) -> anyhow::Result<()> {
    if let Some(path) = path {
        std::fs::write(path, serde_json::to_vec(items)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

pub async fn run(
    path: &Path,
    runs: usize,
    queries: usize,
    semantic: Option<&Config>,
    dump: &Dump<'_>,
) -> anyhow::Result<BenchReport> {
    let runs = runs.max(1);
    let base_rss_mib = proc_status_mib("VmRSS:");
    let location = path.display().to_string();
    let mut size = 0;
    let mut load_ms = Vec::with_capacity(runs);
    let mut index_ms = Vec::with_capacity(runs);
    let mut kept = None;
    for _ in 0..runs {
        // One spec at a time, read afresh (untimed) and handed over as a server's loader does:
        // the peak is that of loading one spec, not of two side by side.
        drop(kept.take());
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        size = bytes.len();
        let start = Instant::now();
        let spec = ApiSpec::from_vec(bytes, &location)?;
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
        let response = index.search(&spec, &request, &Retrieval::keyword())?;
        query_ms.push(start.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(response);
    }
    let endpoints = sample_endpoints(&spec, DETAILS_SAMPLE);
    let mut details_ms = time_details(&spec, &endpoints);
    let mut details_again_ms = time_details(&spec, &endpoints);
    let loaded_rss_mib = proc_status_mib("VmRSS:");
    let semantic = match semantic {
        Some(config) => Some(semantic_bench(config, &spec, &index, queries.min(200), dump).await?),
        None => None,
    };
    Ok(BenchReport {
        spec: location,
        bytes: size,
        operations: spec.operations().len(),
        runs,
        load_ms_p50: percentile(&mut load_ms, 50.0),
        index_ms_p50: percentile(&mut index_ms, 50.0),
        peak_rss_mib: proc_status_mib("VmHWM:"),
        base_rss_mib,
        loaded_rss_mib,
        held_text_mib: spec.held_text_bytes() as f64 / (1024.0 * 1024.0),
        queries: query_ms.len(),
        query_ms_p50: percentile(&mut query_ms, 50.0),
        query_ms_p95: percentile(&mut query_ms, 95.0),
        details: endpoints.len(),
        details_ms_p50: percentile(&mut details_ms, 50.0),
        details_ms_p95: percentile(&mut details_ms, 95.0),
        details_again_ms_p50: percentile(&mut details_again_ms, 50.0),
        details_again_ms_p95: percentile(&mut details_again_ms, 95.0),
        semantic,
    })
}

async fn semantic_bench(
    config: &Config,
    spec: &ApiSpec,
    keyword: &OperationIndex,
    queries: usize,
    dump: &Dump<'_>,
) -> anyhow::Result<SemanticBench> {
    let texts: Vec<String> = spec.operations().iter().map(endpoint_text).collect();
    write_json_list(dump.texts, &texts)?;
    let questions: Vec<String> = sample_queries(spec, queries)
        .iter()
        .map(|q| query_text(q))
        .collect();
    write_json_list(dump.queries, &questions)?;
    let start = Instant::now();
    // The bare model, not the query cache: every timed question is embedded.
    let model = LocalBert::from_settings(&config.file.embedding, &config.data_dir)?;
    let model_load_ms = start.elapsed().as_secs_f64() * 1e3;

    let start = Instant::now();
    let built = SemanticIndex::build(spec, &model, None, &|_, _| {}).await?;
    let index_build_ms = start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    let again = SemanticIndex::build(spec, &model, Some(&built.index), &|_, _| {}).await?;
    let reindex_unchanged_ms = start.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(again.embedded == 0, "an unchanged re-index embedded texts");

    let index = std::sync::Arc::new(built.index);
    let rows = index.rows_in(spec);
    let mut query_ms = Vec::with_capacity(queries);
    for query in sample_queries(spec, queries) {
        let request = SearchRequest::new(Some(query.clone()), None, None, Some(10), None)
            .map_err(anyhow::Error::msg)?;
        let start = Instant::now();
        let vector = model.embed_query(&query_text(&query)).await?;
        let plan = Retrieval::with(
            DEFAULT_MODE,
            Ok(SemanticQuery {
                index: std::sync::Arc::clone(&index),
                vector,
                rows: std::sync::Arc::clone(&rows),
            }),
        );
        let response = keyword.search(spec, &request, &plan)?;
        query_ms.push(start.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(response);
    }
    Ok(SemanticBench {
        model: model.model().to_string(),
        engine: model.engine(),
        model_load_ms,
        index_build_ms,
        texts_per_sec: spec.operations().len() as f64 / (index_build_ms / 1e3),
        reindex_unchanged_ms,
        queries: query_ms.len(),
        query_ms_p50: percentile(&mut query_ms, 50.0),
        query_ms_p95: percentile(&mut query_ms, 95.0),
    })
}
