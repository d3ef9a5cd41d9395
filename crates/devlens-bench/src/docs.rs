//! `devlens docs bench`: what ingesting a docs folder costs (pages, sections, the model's share),
//! what ingesting it again costs (vectors reused), and, with a golden file, how well and how
//! fast its questions are answered.

use std::path::PathBuf;

use serde::Serialize;

use devlens_core::Config;
use devlens_core::progress::ProgressLine;
use devlens_docs::{Docs, DocsSource, IngestRequest, IngestStage, parse_golden};

/// What `devlens docs bench` reports.
#[derive(Debug, Serialize)]
pub struct DocsBenchReport {
    path: String,
    pages: usize,
    chunks: usize,
    /// Sections (page and heading path): what gets one embedding each.
    sections: usize,
    /// The embedding model, or none (keyword search only).
    model: Option<String>,
    /// Distinct texts (of sections and of prose chunks) run through the model.
    embedded_texts: usize,
    /// Until the version answered queries (its section vectors stored).
    searchable_seconds: f64,
    /// Until every chunk had its own vector too (`[docs] passage_vectors`): the whole ingest.
    ingest_seconds: f64,
    pages_per_sec: f64,
    sections_per_sec: f64,
    /// The same folder again: unchanged sections reuse their stored vectors.
    reingest_seconds: f64,
    reused_vectors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    queries: Option<BenchQueries>,
}

#[derive(Debug, Serialize)]
struct BenchQueries {
    n: usize,
    k: usize,
    hit_at_k: f64,
    mrr: f64,
    uncached_p50_ms: f64,
    uncached_p95_ms: f64,
    cached_p50_ms: f64,
    cached_p95_ms: f64,
}

impl DocsBenchReport {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}: {} pages, {} chunks, {} sections ({})\n\
             ingest    {:.1} s  (searchable after {:.1} s; {:.1} pages/s, {:.0} sections/s, {} texts \
             embedded)\n\
             re-ingest {:.1} s  (unchanged: {} vectors reused)",
            self.path,
            self.pages,
            self.chunks,
            self.sections,
            self.model
                .as_deref()
                .map_or("keyword search only".to_string(), |m| format!(
                    "embedded with {m}"
                )),
            self.ingest_seconds,
            self.searchable_seconds,
            self.pages_per_sec,
            self.sections_per_sec,
            self.embedded_texts,
            self.reingest_seconds,
            self.reused_vectors,
        );
        if let Some(q) = &self.queries {
            out.push_str(&format!(
                "\nqueries   {} questions, hit@{} {:.3}, MRR {:.3}\n\
                 uncached  p50 {:.1} ms, p95 {:.1} ms\n\
                 cached    p50 {:.3} ms, p95 {:.3} ms",
                q.n,
                q.k,
                q.hit_at_k,
                q.mrr,
                q.uncached_p50_ms,
                q.uncached_p95_ms,
                q.cached_p50_ms,
                q.cached_p95_ms
            ));
        }
        out
    }
}

/// A scratch folder removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Ingests `path` twice into a scratch registry (never the user's) and, with a golden file,
/// scores its questions.
pub async fn run(
    config: &Config,
    path: &std::path::Path,
    golden: Option<&std::path::Path>,
    max_results: usize,
) -> anyhow::Result<DocsBenchReport> {
    if !(1..=20).contains(&max_results) {
        anyhow::bail!("--max-results must be between 1 and 20, got {max_results}");
    }
    let questions = match golden {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                anyhow::anyhow!("cannot read the golden file {}: {e}", file.display())
            })?;
            Some(parse_golden(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?)
        }
        None => None,
    };
    let scratch = Scratch(std::env::temp_dir().join(format!(
        "devlens-docs-bench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    )));
    // The configured embedder (the user's model), over a scratch registry.
    let embedder = devlens_embed::embedder_from_settings(&config.file.embedding, &config.data_dir);
    if let Err(e) = &embedder {
        eprintln!("note: benchmarking keyword search only: {e}");
    }
    let docs = Docs::with_embedder(&scratch.0.join("docs.sqlite"), embedder.ok())?
        .with_passage_vectors(config.file.docs.embeds_passages());
    let request = IngestRequest {
        id: "bench".into(),
        source: DocsSource::Path(path.to_path_buf()),
        version: None,
        name: None,
        description: None,
    };
    let embedding = ProgressLine::new("embedding sections");
    let refining = ProgressLine::new("adding passage vectors");
    let first = docs
        .ingest(&request, &|stage, done, total| match stage {
            IngestStage::Embedding => embedding.update(done, total),
            IngestStage::Refining => refining.update(done, total),
            IngestStage::Reading => {}
        })
        .await;
    embedding.finish();
    refining.finish();
    let first = first?;
    let again = docs.ingest(&request, &|_, _, _| {}).await?;
    let queries = match questions {
        Some(questions) => {
            let eval = docs.eval("bench", &questions, max_results).await?;
            let (cached_p50_ms, cached_p95_ms) = eval.cached_ms.unwrap_or_default();
            Some(BenchQueries {
                n: eval.n,
                k: max_results,
                hit_at_k: eval.hit_at_k,
                mrr: eval.mrr,
                uncached_p50_ms: eval.p50_ms,
                uncached_p95_ms: eval.p95_ms,
                cached_p50_ms,
                cached_p95_ms,
            })
        }
        None => None,
    };
    let seconds = first.seconds.max(1e-9);
    Ok(DocsBenchReport {
        path: path.display().to_string(),
        pages: first.pages,
        chunks: first.chunks,
        sections: first.sections,
        model: first.model.clone(),
        embedded_texts: first.embedded_texts,
        searchable_seconds: first.searchable_seconds,
        ingest_seconds: first.seconds,
        pages_per_sec: first.pages as f64 / seconds,
        sections_per_sec: first.sections as f64 / seconds,
        reingest_seconds: again.seconds,
        reused_vectors: again.reused_vectors,
        queries,
    })
}
