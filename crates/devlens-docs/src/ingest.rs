//! Ingesting a library version: read its pages (a folder, or a site crawled from a URL), chunk
//! them, embed one text per section and one per prose chunk (reusing the vectors of texts the
//! stored docs already have) and replace the stored version in one write, so queries see the old
//! docs or the new ones.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use devlens_core::Report;
use devlens_search::sqlite::blocking;

use crate::store::{ChunkEmbeddings, DocsStore, NewVersion, RefineProgress, StoredChunk};
use crate::{ChunkKind, DEFAULT_VERSION, Docs, DocsError, crawl, git, package, read, validate_id};

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
    /// An installed package's folder: its README, docs folder and type declarations
    /// ([`crate::package`]); `name` is the package's name.
    Package { dir: PathBuf, name: String },
    /// A git repository, cloned one commit deep ([`crate::git`]); its ref is the version.
    Git(git::GitSource),
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
    /// The section texts (`done` of `total`), before the version is stored.
    Embedding,
    /// The chunks' own vectors after the version is searchable (`done` of `total` chunks have
    /// theirs).
    Refining,
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
    /// Distinct texts (of sections and of prose chunks) run through the model in this ingest.
    pub embedded_texts: usize,
    /// Texts whose vectors came from the stored docs instead (unchanged sections and chunks).
    pub reused_vectors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Until the version answered queries (its section vectors stored).
    pub searchable_seconds: f64,
    /// Until the call returned: with every chunk vector stored, unless `refining` says otherwise.
    pub seconds: f64,
    /// Set when the call returned before every chunk had its own vector: how far they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refining: Option<RefineProgress>,
    /// Whether the missing chunk vectors are being added in the background (a server).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl Report for IngestReport {
    fn to_text(&self) -> String {
        let searchable = if self.searchable_seconds + 0.05 < self.seconds {
            format!(" (searchable after {:.1} s)", self.searchable_seconds)
        } else {
            String::new()
        };
        let mut out = format!(
            "{} {}: {} pages, {} chunks ({} duplicates dropped, {} files skipped) in {:.1} s{}, {}",
            self.id,
            self.version,
            self.pages,
            self.chunks,
            self.duplicates,
            self.skipped,
            self.seconds,
            searchable,
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
        if let Some(refining) = &self.refining {
            out.push_str(&format!(
                "\nsearchable now; passage vectors (answers in later paragraphs): {} of {} \
                 stored, {}",
                crate::query::grouped(refining.stored),
                crate::query::grouped(refining.planned),
                if self.background {
                    "the rest are being added in the background"
                } else {
                    "`devlens docs refine` (or a running devlens server) adds the rest"
                }
            ));
        }
        out
    }
}

impl Docs {
    /// Reads, chunks, embeds and stores a library version, replacing what was stored under the
    /// same id and version only once it is searchable; then adds its chunks' own vectors
    /// ([`Docs::refine`]): in the background when this `Docs` refines in the background (a
    /// server, [`Docs::with_background_refinement`]), else before returning. A failure while
    /// adding them leaves the version searchable, said in `notice`.
    pub async fn ingest(
        &self,
        request: &IngestRequest,
        progress: &(dyn Fn(IngestStage, usize, usize) + Sync),
    ) -> Result<IngestReport, DocsError> {
        let started = Instant::now();
        let mut report = self.ingest_searchable(request, progress).await?;
        if report.refining.is_some() {
            if self.refines_in_background() {
                report.background = self.refine_in_background();
            } else {
                let refining = |stored, planned| progress(IngestStage::Refining, stored, planned);
                match self.refine(&report.id, &report.version, &refining).await {
                    Ok(refined) => {
                        report.embedded_texts += refined.embedded_texts;
                        report.refining = refined.refining;
                    }
                    Err(e) => {
                        let failed = format!(
                            "the version is searchable, but adding its passage vectors \
                             failed: {e}; `devlens docs refine` tries again"
                        );
                        report.notice = Some(match report.notice.take() {
                            Some(other) => format!("{other}; {failed}"),
                            None => failed,
                        });
                    }
                }
            }
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Reads, chunks, embeds and stores a library version, replacing what was stored under the
    /// same id and version only once it is searchable: its section vectors, and the chunk
    /// vectors reused from the stored docs. The rest of the chunk vectors are left to
    /// [`Docs::refine`] (`refining` in the report says how many).
    pub async fn ingest_searchable(
        &self,
        request: &IngestRequest,
        progress: &(dyn Fn(IngestStage, usize, usize) + Sync),
    ) -> Result<IngestReport, DocsError> {
        let started = Instant::now();
        let id = validate_id(&request.id)?;
        let asked_version = request
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty());
        let mut version = asked_version.unwrap_or(DEFAULT_VERSION).to_string();
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
            DocsSource::Git(source) => {
                let clone = git::clone(
                    source,
                    &self.outbound,
                    &std::env::temp_dir().join("devlens-git"),
                )
                .await?;
                if asked_version.is_none() {
                    version = clone.version.clone();
                }
                let root = clone.folder.clone();
                let reading = |done, total| progress(IngestStage::Reading, done, total);
                let pages = blocking(|| read::read_folder(&root, &reading))?;
                // The clone is removed here, once read.
                (pages, clone.label.clone())
            }
            DocsSource::Package { dir, name } => {
                let pages = blocking(|| package::read_package(dir, name))?;
                progress(IngestStage::Reading, pages.pages, pages.pages);
                let label = std::fs::canonicalize(dir)
                    .unwrap_or_else(|_| dir.clone())
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
                let outcome = crawl::crawl(url, limits, &self.outbound, &reading).await?;
                failed = outcome.failed;
                match &outcome.llms_txt {
                    Some((file, 0)) => notes.push(format!(
                        "read the site's {file} (all of its docs in one request) instead of \
                         crawling"
                    )),
                    Some((file, pages)) => notes.push(format!(
                        "read the {pages} pages the site's {file} lists instead of crawling"
                    )),
                    None => {}
                }
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
                let plan = EmbeddingPlan::of(&pages.chunks, self.passage_vectors);
                let texts = &plan.texts;
                // Vectors of texts the stored docs already have (the version being replaced, else
                // the library's newest) are reused: re-ingesting unchanged docs embeds nothing.
                let registry = Arc::clone(&self.store);
                let known = blocking(|| {
                    reusable_vectors(registry.as_ref(), &id, &version, embedder.model(), texts)
                });
                reused_vectors = texts
                    .iter()
                    .filter(|t| known.contains_key(t.as_str()))
                    .count();
                // The section texts now, so the version is searchable as soon as it is stored;
                // the chunks' own texts after that ([`Docs::refine`]).
                let section_rows: HashSet<usize> = plan.sections.iter().copied().collect();
                let missing: Vec<String> = texts
                    .iter()
                    .enumerate()
                    .filter(|(row, t)| {
                        section_rows.contains(row) && !known.contains_key(t.as_str())
                    })
                    .map(|(_, t)| t.clone())
                    .collect();
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
                        let vector = |row: usize| {
                            let text = texts[row].as_str();
                            known.get(text).or_else(|| fresh.get(text).copied())
                        };
                        // Every section text is either known or fresh, by construction.
                        let sections: Option<Vec<Vec<f32>>> =
                            plan.sections.iter().map(|&r| vector(r).cloned()).collect();
                        let per_chunk = sections.map(|sections| {
                            // A chunk's own vector where it is known already; the rest come later.
                            let passages: Vec<Option<Vec<f32>>> = plan
                                .passages
                                .iter()
                                .map(|r| r.and_then(vector).cloned())
                                .collect();
                            let planned = plan.passages.iter().filter(|p| p.is_some()).count();
                            (sections, passages, planned)
                        });
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
                (Some(m), Some((sections, passages, planned))) => Some(ChunkEmbeddings {
                    model: m.as_str(),
                    sections,
                    passages,
                    planned: *planned,
                }),
                _ => None,
            },
        };
        let refining = new
            .embeddings
            .map(|e| e.progress())
            .filter(RefineProgress::pending);
        blocking(|| registry.replace_version(&new))?;
        let seconds = started.elapsed().as_secs_f64();
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
            searchable_seconds: seconds,
            seconds,
            refining,
            background: false,
            notice,
        })
    }
}

/// What to embed for a version's chunks: the distinct texts, and which of them gives each chunk
/// its vectors.
#[derive(Debug)]
pub struct EmbeddingPlan {
    pub texts: Vec<String>,
    /// Per chunk, the text of its section.
    pub sections: Vec<usize>,
    /// Per chunk, its own text, where it has one.
    pub passages: Vec<Option<usize>>,
}

impl EmbeddingPlan {
    /// Two kinds of text. One per section (page and heading path), shared by the section's
    /// chunks: the heading path and the first words of its prose say what it is about. And one
    /// per prose chunk, its heading path and its own text: the answer to a question often sits
    /// in a later paragraph of a long section, which the section's text never mentions. A chunk
    /// scores by the better of its two (crate::search). On held-out Python questions the second
    /// text took hit@5 from 0.67 to 0.83 (README, "Retrieval on questions nobody tuned for").
    /// It costs: the passages are long, and embedding them makes an ingest ~3.6x as long
    /// (`[docs] passage_vectors = false` leaves them out: `with_passages`).
    pub fn of(chunks: &[StoredChunk], with_passages: bool) -> Self {
        // Measured on the Node.js docs: 100 characters saved ~6% of the model's CPU time (same
        // hit@5), the last two heading levels only ~12% but cost hit@5 (0.925 -> 0.900); per-text
        // overhead, not length, dominates at these sizes.
        const PROSE_CHARS: usize = 160;
        // A passage beyond this says no more to a model that reads 256 tokens.
        const PASSAGE_CHARS: usize = 1_000;
        let mut texts: Vec<String> = Vec::new();
        // Texts that read the same share one row (and one forward pass).
        let mut of_text: HashMap<String, usize> = HashMap::new();
        let mut row_of = |text: String| -> usize {
            *of_text.entry(text).or_insert_with_key(|text| {
                texts.push(text.clone());
                texts.len() - 1
            })
        };
        let mut of_section: HashMap<(&str, &str), usize> = HashMap::new();
        // The first prose of each section, for sections whose first chunk is code.
        let mut prose: HashMap<(&str, &str), &str> = HashMap::new();
        for c in chunks.iter().filter(|c| c.kind == ChunkKind::Text) {
            prose
                .entry((c.source.as_str(), c.section.as_str()))
                .or_insert(c.content.as_str());
        }
        let mut sections = Vec::with_capacity(chunks.len());
        let mut passages = Vec::with_capacity(chunks.len());
        for c in chunks {
            let key = (c.source.as_str(), c.section.as_str());
            let first_prose = prose.get(&key).copied();
            let row = match of_section.get(&key) {
                Some(&row) => row,
                None => {
                    let body = summary(first_prose.unwrap_or(c.content.as_str()));
                    let row = row_of(format!("{}: {}", c.section, cut(&body, PROSE_CHARS)));
                    of_section.insert(key, row);
                    row
                }
            };
            sections.push(row);
            // A short first paragraph is already all in the section's text.
            let covered = first_prose == Some(c.content.as_str()) && c.content.len() <= PROSE_CHARS;
            let passage = (with_passages && c.kind == ChunkKind::Text && !covered).then(|| {
                let words = c.content.split_whitespace().collect::<Vec<_>>().join(" ");
                row_of(format!("{}: {}", c.section, cut(&words, PASSAGE_CHARS)))
            });
            passages.push(passage);
        }
        Self {
            texts,
            sections,
            passages,
        }
    }
}

/// The first `max` bytes of `text`, at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
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
    let Some(vectors) = old.vectors else {
        return out;
    };
    if vectors.model != model || vectors.dims == 0 {
        return out;
    }
    let wanted: std::collections::HashSet<&str> = texts.iter().map(String::as_str).collect();
    // Every vector the old version has may be reused, passages included.
    let plan = EmbeddingPlan::of(&old.chunks, true);
    let mut keep = |row: usize, vector: Option<&[f32]>| {
        let text = &plan.texts[row];
        if let Some(v) = vector
            && wanted.contains(text.as_str())
            && !out.contains_key(text)
        {
            out.insert(text.clone(), v.to_vec());
        }
    };
    for (chunk, (&section, passage)) in plan.sections.iter().zip(&plan.passages).enumerate() {
        keep(section, vectors.section(chunk));
        if let Some(row) = *passage {
            keep(row, vectors.passage(chunk));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(section: &str, kind: ChunkKind, content: &str) -> StoredChunk {
        StoredChunk::of_page(section, kind, content)
    }

    #[test]
    fn sections_share_a_text_and_prose_chunks_have_their_own() {
        let long = "Opens the file. ".repeat(20);
        let later = "Closing it   flushes\nthe buffers.";
        let chunks = vec![
            chunk("fs > open", ChunkKind::Text, &long),
            chunk("fs > open", ChunkKind::Code, "open('x')"),
            chunk("fs > open", ChunkKind::Text, later),
            chunk("fs > stat", ChunkKind::Text, "Reads metadata."),
        ];
        let plan = EmbeddingPlan::of(&chunks, true);
        // One section text for the three chunks of `fs > open`, another for `fs > stat`.
        assert_eq!(plan.sections[0], plan.sections[1]);
        assert_eq!(plan.sections[0], plan.sections[2]);
        assert_ne!(plan.sections[0], plan.sections[3]);
        assert!(plan.texts[plan.sections[0]].starts_with("fs > open: Opens the file."));
        // Prose chunks have their own text (whitespace collapsed); code does not, nor does a
        // short first paragraph that the section's text already holds whole.
        assert!(plan.passages[0].is_some());
        assert_eq!(plan.passages[1], None);
        assert_eq!(
            plan.texts[plan.passages[2].unwrap()],
            "fs > open: Closing it flushes the buffers."
        );
        assert_eq!(plan.passages[3], None);
        assert_eq!(plan.texts.len(), 4);

        // `[docs] passage_vectors = false`: the section texts alone.
        let sections_only = EmbeddingPlan::of(&chunks, false);
        assert_eq!(sections_only.sections, vec![0, 0, 0, 1]);
        assert!(sections_only.passages.iter().all(Option::is_none));
        assert_eq!(sections_only.texts.len(), 2);
    }

    #[test]
    fn long_passages_are_cut_at_a_character_boundary() {
        let text = "é".repeat(800);
        let plan = EmbeddingPlan::of(&[chunk("s", ChunkKind::Text, &text)], true);
        let passage = &plan.texts[plan.passages[0].unwrap()];
        assert!(passage.len() <= "s: ".len() + 1_000, "{}", passage.len());
    }
}
