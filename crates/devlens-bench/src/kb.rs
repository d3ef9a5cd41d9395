//! `devlens kb bench`: what saving and searching cost with the local model, in temporary
//! knowledge bases (never the user's). Saves are timed one at a time on real solution texts;
//! searches run over a generated knowledge base of `--solutions` entries, with every query
//! embedded afresh (no query cache), in each mode.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::Context as _;
use clap::Args;
use serde::Serialize;

use devlens_core::Config;
use devlens_core::progress::ProgressLine;
use devlens_embed::{BoxFuture, EmbedError, Embedder, LocalBert, Progress, Provider};
use devlens_kb::{
    ExportFile, KnowledgeBase, NewSolution, SearchMode, SearchOptions, Solution, SolutionPatch,
};
use devlens_search::golden::percentile;

#[derive(Debug, Args)]
pub struct KbBenchArgs {
    /// Real solutions to save (an export file), e.g. crates/devlens-kb/tests/golden/solutions.json
    #[arg(long, value_name = "FILE")]
    pub corpus: PathBuf,
    /// Questions (a golden file; only the questions are used), e.g.
    /// crates/devlens-kb/tests/golden/queries.tsv
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,
    /// Size of the generated knowledge base the searches run over
    #[arg(long, default_value_t = 10_000)]
    pub solutions: usize,
    /// Keep the benchmark's knowledge bases in DIR (not a temporary folder): a second run over
    /// the same DIR finds the generated solutions embedded and measures the searches at once
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KbBenchReport {
    model: String,
    /// The local model's engine: `candle` or `onnx (<file>)`.
    engine: String,
    model_load_ms: f64,
    saves: SaveBench,
    edits: EditBench,
    corpus: CorpusBench,
    /// Per mode: one search (embed the question without cache, rank, read the hits).
    search: Vec<ModeBench>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SaveBench {
    n: usize,
    mean_chars: usize,
    chunks: usize,
    /// One `add`: chunk, embed, one transaction.
    p50_ms: f64,
    p95_ms: f64,
    mean_ms: f64,
    /// The same for the solutions of at most 2,000 characters (most of the corpus).
    up_to_2000_chars_p95_ms: f64,
    /// Of the mean: the model's share (tokenise and embed the chunks); the rest is chunking and
    /// the store's transaction.
    mean_embed_ms: f64,
}

/// One `update` that adds a paragraph at the end of a saved solution: only the chunks it
/// changed are embedded again.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct EditBench {
    n: usize,
    /// Chunks embedded again, of all the edited solutions' chunks.
    embedded_chunks: usize,
    chunks: usize,
    p50_ms: f64,
    p95_ms: f64,
    mean_ms: f64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CorpusBench {
    solutions: usize,
    /// Solutions embedded by this run (0 when `--scratch` held them from an earlier run).
    embedded: usize,
    chunks: usize,
    import_ms: f64,
    reembed_s: f64,
    solutions_per_s: f64,
    /// The first search after a write reloads every vector from the store.
    reload_ms: f64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ModeBench {
    mode: SearchMode,
    queries: usize,
    p50_ms: f64,
    p95_ms: f64,
}

impl KbBenchReport {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "model {} (engine {}, loaded in {:.0} ms)\n\
             save + embed: {} solutions (mean {} chars, {} chunks): p50 {:.1} ms, p95 {:.1} ms, \
             mean {:.1} ms (embedding {:.1} ms); up to 2,000 chars p95 {:.1} ms\n\
             edit (a paragraph added at the end): {} solutions, {} of {} chunks embedded again: \
             p50 {:.1} ms, p95 {:.1} ms, mean {:.1} ms\n\
             knowledge base of {} solutions: import {:.0} ms, ",
            self.model,
            self.engine,
            self.model_load_ms,
            self.saves.n,
            self.saves.mean_chars,
            self.saves.chunks,
            self.saves.p50_ms,
            self.saves.p95_ms,
            self.saves.mean_ms,
            self.saves.mean_embed_ms,
            self.saves.up_to_2000_chars_p95_ms,
            self.edits.n,
            self.edits.embedded_chunks,
            self.edits.chunks,
            self.edits.p50_ms,
            self.edits.p95_ms,
            self.edits.mean_ms,
            self.corpus.solutions,
            self.corpus.import_ms,
        );
        if self.corpus.embedded == 0 {
            out.push_str("already embedded by an earlier run");
        } else {
            out.push_str(&format!(
                "reembed {} solutions ({} chunks) in {:.1} s ({:.0} solutions/s)",
                self.corpus.embedded,
                self.corpus.chunks,
                self.corpus.reembed_s,
                self.corpus.solutions_per_s
            ));
        }
        out.push_str(&format!(
            ", first search after a write {:.0} ms",
            self.corpus.reload_ms
        ));
        for m in &self.search {
            out.push_str(&format!(
                "\nsearch {:<8} {} queries: p50 {:.1} ms, p95 {:.1} ms",
                m.mode.as_str(),
                m.queries,
                m.p50_ms,
                m.p95_ms
            ));
        }
        out
    }
}

/// The model, with the time spent in it added up (to split a save into embedding and the rest).
#[derive(Debug)]
struct TimedEmbedder {
    inner: Arc<dyn Embedder>,
    nanos: AtomicU64,
}

impl TimedEmbedder {
    fn total_ms(&self) -> f64 {
        self.nanos.load(Ordering::Relaxed) as f64 / 1e6
    }

    fn add(&self, since: Instant) {
        self.nanos
            .fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

impl Embedder for TimedEmbedder {
    fn provider(&self) -> Provider {
        self.inner.provider()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn dims(&self) -> usize {
        self.inner.dims()
    }

    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let t = Instant::now();
            let out = self.inner.embed_documents(texts, progress).await;
            self.add(t);
            out
        })
    }

    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        Box::pin(async move {
            let t = Instant::now();
            let out = self.inner.embed_query(text).await;
            self.add(t);
            out
        })
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Sentences of the real texts, recombined into `n` short solutions: realistic words and
/// lengths without copying any one solution.
pub fn generated(corpus: &[Solution], n: usize) -> Vec<Solution> {
    let sentences: Vec<&str> = corpus
        .iter()
        .flat_map(|s| s.text.split(['\n', '.']))
        .map(str::trim)
        .filter(|s| (40..=220).contains(&s.len()))
        .collect();
    let tags: Vec<&String> = corpus.iter().flat_map(|s| &s.tags).collect();
    let pick = |i: usize, salt: usize| -> usize {
        // A fixed multiplicative hash: the same knowledge base on every run.
        (i.wrapping_mul(2_654_435_761)
            .wrapping_add(salt.wrapping_mul(40_503)))
            % sentences.len().max(1)
    };
    (0..n)
        .map(|i| {
            let title: String = sentences[pick(i, 1)].chars().take(80).collect();
            let text = (2..5)
                .map(|salt| sentences[pick(i, salt)])
                .collect::<Vec<_>>()
                .join(". ");
            let ts = devlens_core::clock::rfc3339(1_767_225_600 + i as u64 * 60);
            Solution {
                id: format!("gen{i:06}"),
                title,
                url: Some(format!("https://wiki.example.com/notes/{i}")),
                text: format!("{text}."),
                summary: None,
                tags: vec![tags[i % tags.len().max(1)].clone()],
                created_at: ts.clone(),
                updated_at: ts,
            }
        })
        .collect()
}

/// The solutions of a knowledge-base export file the benchmarks are made of (not empty).
pub fn read_corpus(path: &std::path::Path) -> anyhow::Result<ExportFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let corpus: ExportFile = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a knowledge-base export file", path.display()))?;
    anyhow::ensure!(
        !corpus.solutions.is_empty(),
        "{} has no solutions",
        path.display()
    );
    Ok(corpus)
}

/// Runs the benchmark in temporary knowledge bases (or `--scratch`), never the user's.
pub async fn run(config: Config, args: &KbBenchArgs) -> anyhow::Result<KbBenchReport> {
    let corpus = read_corpus(&args.corpus)?;
    let queries_text = std::fs::read_to_string(&args.queries)
        .with_context(|| format!("cannot read {}", args.queries.display()))?;
    let queries: Vec<String> = devlens_kb::eval::parse_golden(&queries_text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.queries.display()))?
        .into_iter()
        .map(|q| q.question)
        .collect();
    anyhow::ensure!(args.solutions > 0, "--solutions must be at least 1");

    let started = Instant::now();
    // The model itself, without the query cache the server wraps it in: every query pays.
    let local = LocalBert::from_settings(&config.file.embedding, &config.data_dir)
        .context("the benchmark needs the local model (`devlens model install`)")?;
    let engine = local.engine();
    let timed = Arc::new(TimedEmbedder {
        inner: Arc::new(local),
        nanos: AtomicU64::new(0),
    });
    let model: Arc<dyn Embedder> = timed.clone();
    let model_load_ms = ms(started);

    let temporary = tempfile::tempdir().context("cannot create a temporary folder")?;
    let scratch = args.scratch.as_deref().unwrap_or(temporary.path());
    let open = |name: &str| -> anyhow::Result<KnowledgeBase> {
        let data = Config::with_data_dir(&scratch.join(name));
        Ok(KnowledgeBase::open(&data)?.with_embedder(Ok(model.clone())))
    };

    // Saves, one at a time.
    let saves_dir = scratch.join("saves");
    if saves_dir.exists() {
        std::fs::remove_dir_all(&saves_dir)
            .with_context(|| format!("cannot clear {}", saves_dir.display()))?;
    }
    let saves_kb = open("saves")?;
    let mut save_ms = Vec::new();
    let mut saved_ids = Vec::new();
    let mut chunks = 0;
    let embed_ms_before = timed.total_ms();
    let bar = ProgressLine::new("saving");
    for (i, s) in corpus.solutions.iter().enumerate() {
        let t = Instant::now();
        let saved = saves_kb
            .add(NewSolution {
                title: s.title.clone(),
                url: s.url.clone(),
                text: s.text.clone(),
                summary: s.summary.clone(),
                tags: s.tags.clone(),
            })
            .await?;
        save_ms.push(ms(t));
        chunks += saved.chunks;
        saved_ids.push(saved.solution.id);
        bar.update(i + 1, corpus.solutions.len());
    }
    bar.finish();
    let saves = SaveBench {
        n: save_ms.len(),
        mean_chars: corpus
            .solutions
            .iter()
            .map(|s| s.text.chars().count())
            .sum::<usize>()
            / corpus.solutions.len(),
        chunks,
        p50_ms: percentile(&save_ms, 0.5),
        p95_ms: percentile(&save_ms, 0.95),
        mean_ms: save_ms.iter().sum::<f64>() / save_ms.len().max(1) as f64,
        mean_embed_ms: (timed.total_ms() - embed_ms_before) / save_ms.len().max(1) as f64,
        up_to_2000_chars_p95_ms: percentile(
            &corpus
                .solutions
                .iter()
                .zip(&save_ms)
                .filter(|(s, _)| s.text.chars().count() <= 2000)
                .map(|(_, &ms)| ms)
                .collect::<Vec<_>>(),
            0.95,
        ),
    };

    // Edits: a paragraph added at the end of each saved solution.
    let mut edit_ms = Vec::new();
    let (mut edit_chunks, mut edit_embedded) = (0, 0);
    let bar = ProgressLine::new("editing");
    for (i, (s, id)) in corpus.solutions.iter().zip(&saved_ids).enumerate() {
        let t = Instant::now();
        let saved = saves_kb
            .update(
                id,
                SolutionPatch {
                    text: Some(format!(
                        "{}\n\nUpdate: this still holds with the current release; checked again \
                         after upgrading the toolchain.",
                        s.text
                    )),
                    ..SolutionPatch::default()
                },
            )
            .await?;
        edit_ms.push(ms(t));
        edit_chunks += saved.chunks;
        edit_embedded += saved.chunks - saved.reused_chunks;
        bar.update(i + 1, saved_ids.len());
    }
    bar.finish();
    let edits = EditBench {
        n: edit_ms.len(),
        embedded_chunks: edit_embedded,
        chunks: edit_chunks,
        p50_ms: percentile(&edit_ms, 0.5),
        p95_ms: percentile(&edit_ms, 0.95),
        mean_ms: edit_ms.iter().sum::<f64>() / edit_ms.len().max(1) as f64,
    };

    // A large knowledge base: import, embed, search.
    let big = open("big")?;
    let export = ExportFile {
        version: devlens_kb::EXPORT_VERSION,
        solutions: generated(&corpus.solutions, args.solutions),
    };
    let t = Instant::now();
    big.import_json(&serde_json::to_string(&export)?, "generated")?;
    let import_ms = ms(t);
    let bar = ProgressLine::new("embedding");
    let reembed = big.reembed(&|done, total| bar.update(done, total)).await;
    bar.finish();
    let reembed = reembed?;
    let t = Instant::now();
    big.search(&queries[0], &SearchOptions::default()).await?;
    let reload_ms = ms(t);

    let mut search = Vec::new();
    for mode in SearchMode::ALL {
        let options = SearchOptions {
            mode: Some(mode),
            ..SearchOptions::default()
        };
        let mut times = Vec::with_capacity(queries.len());
        for q in &queries {
            let t = Instant::now();
            big.search(q, &options).await?;
            times.push(ms(t));
        }
        search.push(ModeBench {
            mode,
            queries: times.len(),
            p50_ms: percentile(&times, 0.5),
            p95_ms: percentile(&times, 0.95),
        });
    }
    let report = KbBenchReport {
        model: model.model().to_string(),
        engine,
        model_load_ms,
        saves,
        edits,
        corpus: CorpusBench {
            solutions: args.solutions,
            embedded: reembed.embedded,
            chunks: reembed.chunks,
            import_ms,
            reembed_s: reembed.seconds,
            solutions_per_s: reembed.embedded as f64 / reembed.seconds.max(1e-9),
            reload_ms,
        },
        search,
    };
    Ok(report)
}
