//! Ingesting a library version: read its pages (a folder, or a site crawled from a URL), chunk
//! them, embed one text per section (reusing the vectors of texts the stored docs already have)
//! and replace the stored version in one write, so queries see the old docs or the new ones.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use devlens_core::Report;
use devlens_search::sqlite::blocking;

use crate::store::{DocsStore, NewVersion, StoredChunk};
use crate::{ChunkKind, DEFAULT_VERSION, Docs, DocsError, crawl, read, validate_id};

/// Where the docs of a library come from.
#[derive(Debug, Clone)]
pub enum DocsSource {
    /// A folder (read recursively) or one file.
    Path(PathBuf),
    /// A docs site crawled from this page with the default limits.
    Url(String),
    /// A docs site crawled from `url` within `limits`.
    Crawl {
        url: String,
        limits: crawl::CrawlLimits,
    },
}

/// `devlens docs add`.
#[derive(Debug, Clone)]
pub struct IngestRequest {
    pub id: String,
    pub source: DocsSource,
    pub version: Option<String>,
    pub name: Option<String>,
    pub description: Option<String>,
}

/// What ingestion is doing, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngestStage {
    Reading,
    Embedding,
}

/// What an ingest stored.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IngestReport {
    pub id: String,
    pub name: String,
    pub version: String,
    pub pages: usize,
    pub chunks: usize,
    /// Sections (page and heading path) the chunks belong to.
    pub sections: usize,
    pub duplicates: usize,
    /// Files passed over (not a docs format, too large, not UTF-8).
    pub skipped: usize,
    /// Pages of a crawl that could not be fetched (`url: reason`), skipped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// Whether the chunks were embedded (semantic ranking available).
    pub embedded: bool,
    /// Distinct section texts run through the model in this ingest.
    pub embedded_texts: usize,
    /// Section texts whose vectors came from the stored docs instead (unchanged sections).
    pub reused_vectors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl Report for IngestReport {
    fn to_text(&self) -> String {
        let mut out = format!(
            "{} {}: {} pages, {} chunks ({} duplicates dropped, {} files skipped) in {:.1} s, {}",
            self.id,
            self.version,
            self.pages,
            self.chunks,
            self.duplicates,
            self.skipped,
            self.seconds,
            match &self.model {
                Some(m) => format!("embedded with {m}"),
                None => "keyword search only".into(),
            }
        );
        if !self.failed.is_empty() {
            out.push_str(&format!(
                "\n{} pages could not be fetched and were skipped:",
                self.failed.len()
            ));
            for f in self.failed.iter().take(10) {
                out.push_str(&format!("\n  {f}"));
            }
            if self.failed.len() > 10 {
                out.push_str(&format!("\n  … and {} more", self.failed.len() - 10));
            }
        }
        if let Some(notice) = &self.notice {
            out.push_str(&format!("\nnote: {notice}"));
        }
        out
    }
}

impl Docs {
    /// Reads, chunks, embeds and stores a library version, replacing what was stored under the
    /// same id and version only once everything is ready.
    pub async fn ingest(
        &self,
        request: &IngestRequest,
        progress: &(dyn Fn(IngestStage, usize, usize) + Sync),
    ) -> Result<IngestReport, DocsError> {
        let started = Instant::now();
        let id = validate_id(&request.id)?;
        let version = request
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .unwrap_or(DEFAULT_VERSION)
            .to_string();
        if version.len() > 100 || version.chars().any(char::is_control) {
            return Err(DocsError::InvalidInput(format!(
                "invalid version `{version}`: use a short label such as `18.20` or `latest`"
            )));
        }
        let mut failed = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        let (pages, source_label) = match &request.source {
            DocsSource::Path(path) => {
                let root = path.clone();
                let reading = |done, total| progress(IngestStage::Reading, done, total);
                // Parsing and token counting are CPU work; a blocking section keeps it simple
                // (the CLI awaits it, a server calls ingest rarely).
                let pages = blocking(|| read::read_folder(&root, &reading))?;
                let label = std::fs::canonicalize(path)
                    .unwrap_or_else(|_| path.clone())
                    .display()
                    .to_string();
                (pages, label)
            }
            DocsSource::Url(url) | DocsSource::Crawl { url, .. } => {
                let limits = match &request.source {
                    DocsSource::Crawl { limits, .. } => *limits,
                    _ => crawl::CrawlLimits::default(),
                };
                let reading = |done, total| progress(IngestStage::Reading, done, total);
                let outcome = crawl::crawl(url, limits, &reading).await?;
                failed = outcome.failed;
                if outcome.left_over > 0 {
                    notes.push(format!(
                        "stopped at {} pages (--max-pages); {} more links were not followed",
                        limits.max_pages, outcome.left_over
                    ));
                }
                if outcome.disallowed > 0 {
                    notes.push(format!(
                        "{} links the site's robots.txt disallows were not followed \
                         (--ignore-robots follows them on a site of your own)",
                        outcome.disallowed
                    ));
                }
                if outcome.from_sitemap > 0 {
                    notes.push(format!(
                        "{} pages were added from the site's sitemap, beyond the start page's \
                         links",
                        outcome.from_sitemap
                    ));
                }
                if let Some(delay) = outcome.crawl_delay {
                    notes.push(format!(
                        "the site's robots.txt asks for a crawl delay: one page every {:.1} s",
                        delay.as_secs_f64()
                    ));
                }
                (outcome.pages, url.clone())
            }
        };
        let name = request
            .name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .or_else(|| self.store.library(&id).ok().flatten().map(|l| l.name))
            .unwrap_or_else(|| id.rsplit('/').next().unwrap_or(&id).to_string());

        let mut embedded_texts = 0;
        let mut reused_vectors = 0;
        let (embeddings, model, notice) = match self.embedder().await {
            Ok(embedder) => {
                let (texts, rows) = embedding_texts(&pages.chunks);
                // Vectors of texts the stored docs already have (the version being replaced, else
                // the library's newest) are reused: re-ingesting unchanged docs embeds nothing.
                let registry = Arc::clone(&self.store);
                let known = blocking(|| {
                    reusable_vectors(registry.as_ref(), &id, &version, embedder.model(), &texts)
                });
                let missing: Vec<String> = texts
                    .iter()
                    .filter(|t| !known.contains_key(t.as_str()))
                    .cloned()
                    .collect();
                reused_vectors = texts.len() - missing.len();
                embedded_texts = missing.len();
                let embedding = |done, total| progress(IngestStage::Embedding, done, total);
                let embedded = if missing.is_empty() {
                    Ok(Vec::new())
                } else {
                    embedder.embed_documents(&missing, &embedding).await
                };
                match embedded {
                    Ok(vectors) if vectors.len() == missing.len() => {
                        let fresh: HashMap<&str, &Vec<f32>> =
                            missing.iter().map(String::as_str).zip(&vectors).collect();
                        // Every text is either known or fresh, by construction.
                        let by_text: Option<Vec<&Vec<f32>>> = texts
                            .iter()
                            .map(|t| {
                                known
                                    .get(t.as_str())
                                    .or_else(|| fresh.get(t.as_str()).copied())
                            })
                            .collect();
                        let per_chunk: Option<Vec<Vec<f32>>> = by_text
                            .map(|by_text| rows.iter().map(|&r| by_text[r].clone()).collect());
                        (per_chunk, Some(embedder.model().to_string()), None)
                    }
                    Ok(vectors) => {
                        return Err(DocsError::InvalidInput(format!(
                            "the embedder returned {} vectors for {} texts; nothing was stored",
                            vectors.len(),
                            missing.len()
                        )));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            Err(why) => (
                None,
                None,
                Some(format!(
                    "stored for keyword search only: {why}. Ingest again once the model is \
                     installed for semantic ranking"
                )),
            ),
        };
        notes.extend(notice);
        let notice = (!notes.is_empty()).then(|| notes.join("; "));
        let registry = Arc::clone(&self.store);
        let new = NewVersion {
            library_id: &id,
            name: &name,
            description: request.description.as_deref(),
            version: &version,
            source: &source_label,
            pages: pages.pages,
            chunks: &pages.chunks,
            embeddings: match (&model, &embeddings) {
                (Some(m), Some(v)) => Some((m.as_str(), v.as_slice())),
                _ => None,
            },
        };
        blocking(|| registry.replace_version(&new))?;
        Ok(IngestReport {
            id,
            name,
            version,
            pages: pages.pages,
            chunks: pages.chunks.len(),
            sections: pages
                .chunks
                .iter()
                .map(|c| (c.source.as_str(), c.section.as_str()))
                .collect::<std::collections::HashSet<_>>()
                .len(),
            duplicates: pages.duplicates,
            skipped: pages.skipped.len(),
            failed,
            embedded: model.is_some(),
            embedded_texts,
            reused_vectors,
            model,
            seconds: started.elapsed().as_secs_f64(),
            notice,
        })
    }
}

/// The texts to embed for `chunks` and, per chunk, which of them is its vector.
///
/// One text per section (page and heading path), shared by the section's chunks: the heading
/// path and the first words of the section's prose say what it is about, and embedding thousands
/// of full chunks with a local model takes minutes where this takes a fraction (a BERT forward
/// pass costs more than linearly in length, and sections are fewer than chunks). Keyword ranking
/// still tells a section's chunks apart.
pub fn embedding_texts(chunks: &[StoredChunk]) -> (Vec<String>, Vec<usize>) {
    // Measured on the Node.js docs: 100 characters saved ~6% of the model's CPU time (same
    // hit@5), the last two heading levels only ~12% but cost hit@5 (0.925 -> 0.900); per-text
    // overhead, not length, dominates at these sizes.
    const PROSE_CHARS: usize = 160;
    let mut texts: Vec<String> = Vec::new();
    let mut of_section: HashMap<(&str, &str), usize> = HashMap::new();
    // Sections that read the same share one text (and one forward pass).
    let mut of_text: HashMap<String, usize> = HashMap::new();
    // The first prose of each section, for sections whose first chunk is code.
    let mut prose: HashMap<(&str, &str), &str> = HashMap::new();
    for c in chunks.iter().filter(|c| c.kind == ChunkKind::Text) {
        prose
            .entry((c.source.as_str(), c.section.as_str()))
            .or_insert(c.content.as_str());
    }
    let mut rows = Vec::with_capacity(chunks.len());
    for c in chunks {
        let key = (c.source.as_str(), c.section.as_str());
        let row = *of_section.entry(key).or_insert_with(|| {
            let body = prose.get(&key).copied().unwrap_or(c.content.as_str());
            let body = summary(body);
            let mut cut = PROSE_CHARS.min(body.len());
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            let text = format!("{}: {}", c.section, &body[..cut]);
            *of_text.entry(text).or_insert_with_key(|text| {
                texts.push(text.clone());
                texts.len() - 1
            })
        });
        rows.push(row);
    }
    (texts, rows)
}

/// Vectors for `texts` found in the stored docs of `id` embedded with `model`: the version being
/// replaced, else the library's newest. Keyed by the exact text embedded, so a vector is reused
/// only where the model would compute the same one. Nothing is an error here: a registry that
/// cannot be read just means embedding everything.
fn reusable_vectors(
    registry: &dyn DocsStore,
    id: &str,
    version: &str,
    model: &str,
    texts: &[String],
) -> HashMap<String, Vec<f32>> {
    let mut out = HashMap::new();
    let newest = registry
        .library(id)
        .ok()
        .flatten()
        .and_then(|l| l.versions.first().cloned());
    let source = match registry.generation(id, version) {
        Ok(Some(_)) => Some(version.to_string()),
        _ => newest,
    };
    let Some(Ok(Some(old))) = source.map(|v| registry.load_version(id, &v)) else {
        return out;
    };
    let Some((old_model, dims, flat)) = old.vectors else {
        return out;
    };
    if old_model != model || dims == 0 {
        return out;
    }
    let wanted: std::collections::HashSet<&str> = texts.iter().map(String::as_str).collect();
    let (old_texts, rows) = embedding_texts(&old.chunks);
    for (chunk, &row) in rows.iter().enumerate() {
        let text = &old_texts[row];
        if wanted.contains(text.as_str())
            && !out.contains_key(text)
            && let Some(v) = flat.get(chunk * dims..(chunk + 1) * dims)
        {
            out.insert(text.clone(), v.to_vec());
        }
    }
    out
}

/// The sentences of a section's prose, without the parameter and option lists that API
/// references put first (`- path {string}`): those say little about what a section is for. Falls
/// back to the whole text when it is all list.
fn summary(prose: &str) -> String {
    let sentences: Vec<&str> = prose
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with(['-', '*', '|', '>', '+'])
                && !l.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
        .collect();
    if sentences.is_empty() {
        prose.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        sentences.join(" ")
    }
}
