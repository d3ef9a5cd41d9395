//! Measures the local embedder: model load time, bulk throughput on synthetic endpoint strings,
//! and single-query latency.
//!
//! ```text
//! cargo run --release -p devlens-embed --example embed_bench -- [texts=1000] [batch=32] [queries=100]
//! ```
//!
//! The model folder comes from `DEVLENS_MODEL_DIR`, else `.testdata/models/all-MiniLM-L6-v2`.
//! `EMBED_BENCH_TEXTS` / `EMBED_BENCH_QUERIES` name JSON arrays of strings to use instead of the
//! synthetic ones (e.g. what `devlens api bench --semantic --texts-out F --queries-out G` wrote),
//! so two builds can be compared on the same real texts.

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

use std::path::PathBuf;
use std::time::{Duration, Instant};

use devlens_embed::{DEFAULT_LOCAL_MODEL, Embedder, LocalBert};

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const RESOURCES: [&str; 12] = [
    "repos",
    "issues",
    "pulls",
    "users",
    "orgs",
    "teams",
    "gists",
    "commits",
    "releases",
    "actions/runs",
    "projects",
    "webhooks",
];
const SUMMARIES: [&str; 8] = [
    "List items for the authenticated user",
    "Create a new item",
    "Get an item by id",
    "Update an item — only the fields provided are changed; the rest keep their values",
    "Delete an item",
    "Search items with qualifiers such as language, stars, topics and creation date, sorted \
     by best match unless a sort field is given",
    "Lock an item",
    "Download an archive of the item as a tarball or zipball",
];

fn synth(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let method = METHODS[i % METHODS.len()];
            let resource = RESOURCES[(i / 5) % RESOURCES.len()];
            let summary = SUMMARIES[(i * 7 + i / 3) % SUMMARIES.len()];
            format!(
                "{} /{resource}/{{owner}}/{{id{i}}} — {summary} — tags: {resource}",
                method.to_lowercase()
            )
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numeric arguments: texts batch queries"))
        .collect();
    let count = args.first().copied().unwrap_or(1_000);
    let batch = args.get(1).copied().unwrap_or(32);
    let queries = args.get(2).copied().unwrap_or(100);

    let dir = std::env::var_os("DEVLENS_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.testdata/models/all-MiniLM-L6-v2")
        });
    let started = Instant::now();
    let model = LocalBert::load(&dir, DEFAULT_LOCAL_MODEL, batch).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let load = started.elapsed();

    let from_file = |var: &str| -> Option<Vec<String>> {
        let path = std::env::var_os(var)?;
        let text = std::fs::read_to_string(&path).expect("readable texts file");
        Some(serde_json::from_str(&text).expect("a JSON array of strings"))
    };
    let texts = from_file("EMBED_BENCH_TEXTS").unwrap_or_else(|| synth(count));
    let count = texts.len();
    let questions = from_file("EMBED_BENCH_QUERIES");
    // Warm-up: first-touch allocations and thread pools.
    model
        .embed_documents(&texts[..batch.min(count)], &|_, _| {})
        .await
        .unwrap();

    let started = Instant::now();
    let vectors = model.embed_documents(&texts, &|_, _| {}).await.unwrap();
    let bulk = started.elapsed();
    assert_eq!(vectors.len(), count);

    let mut latencies = Vec::with_capacity(queries);
    for i in 0..queries {
        let q = match &questions {
            Some(list) => list[i % list.len()].clone(),
            None => format!(
                "how do I {} {} number {i}",
                ["list", "create", "delete", "search"][i % 4],
                RESOURCES[i % RESOURCES.len()]
            ),
        };
        let started = Instant::now();
        model.embed_query(&q).await.unwrap();
        latencies.push(started.elapsed());
    }
    latencies.sort();

    println!(
        "model load: {:.0} ms\nbulk: {count} texts, batch {batch}: {:.2} s = {:.1} sentences/s\n\
         single query ({queries}): p50 {:.1} ms, p95 {:.1} ms",
        load.as_secs_f64() * 1e3,
        bulk.as_secs_f64(),
        count as f64 / bulk.as_secs_f64(),
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.95).as_secs_f64() * 1e3,
    );
}
