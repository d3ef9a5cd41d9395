//! Two-way sync with a copy of the knowledge base kept elsewhere — the Chrome extension's, in
//! IndexedDB, embedded in the browser by the same model — so that both converge on the same
//! solutions.
//!
//! The other side (called "the extension" here) sends what changed there since its last sync:
//! solutions saved and deleted, each with `base`, the `updatedAt` both sides agreed on at that
//! sync (`null` for one created there), and the `updatedAt` of every other solution it holds
//! (`known`). The server applies the changes and answers with what the extension lacks or holds
//! an older version of, and with the deletions it has not seen.
//!
//! Per solution the last writer wins. A change whose `base` is the server's `updatedAt` (the
//! server did not touch it since) applies as it is. When both sides changed a solution since
//! the last sync, the later `updatedAt` is kept (the server's on a tie) and the conflict is
//! noted for the user; a deletion competes the same way, by when it happened, which the store
//! remembers in a tombstone (so an edit older than a deletion does not bring a solution back).
//! Every change is checked as a save is ([`crate::solution::clean`], ids, timestamps, vectors);
//! a bad one is reported in `rejected` and the rest still sync. Each change is one conditional
//! write ([`SolutionStore::put_if`], [`SolutionStore::delete_if`]): a solution that changed on
//! the server between reading and writing is read again and decided anew, never overwritten
//! blindly.
//!
//! Vectors travel with the solutions (base64 of little-endian `f32`s per chunk). The
//! extension's are stored as they are when they come from the server's model and cover exactly
//! the chunks the server would cut ([`chunk::chunk_ranges`]), so nothing is embedded twice;
//! otherwise the solution is embedded by the server ([`KnowledgeBase::embed_missing`]). The
//! server's current vectors go back with the solutions it sends when the models match.

use std::collections::{BTreeMap, HashMap, HashSet};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use devlens_core::Report;
use devlens_search::sqlite::blocking;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::{ChunkVector, ChunkVectors, SolutionStore, content_hash};
use crate::{KbError, KnowledgeBase, NewSolution, REEMBED_BATCH, Solution, chunk, solution};

/// A conditional write that finds the solution changed since it was read is decided again this
/// many times before the change is put off to the next sync.
const ATTEMPTS: usize = 3;
/// How far ahead of the server's clock a timestamp may be: clocks drift, but a date far in the
/// future would win every later conflict.
const MAX_CLOCK_AHEAD_NANOS: i128 = 24 * 3600 * 1_000_000_000;
/// The longest vector taken (no embedding model comes near it).
const MAX_DIMS: usize = 16_384;
/// Past this many solutions to send with vectors, all vectors are read in one query instead of
/// one query per solution.
const BULK_VECTORS: usize = 64;

/// `POST /api/kb/sync`'s body: what changed in the extension since its last sync, and what it
/// holds unchanged.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncRequest {
    /// The model the extension's vectors come from (`null`: it has none).
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub dims: Option<usize>,
    /// Solutions saved (`{id, title, url?, text, summary?, tags, createdAt, updatedAt, base,
    /// vectors?}`) and deleted (`{id, deleted: true, updatedAt, base}`) since the last sync.
    /// Each is read on its own, so one that is malformed is rejected alone.
    #[serde(default)]
    pub changes: Vec<Value>,
    /// Every other solution the extension holds: id → its `updatedAt`.
    #[serde(default)]
    pub known: BTreeMap<String, String>,
    /// Send the server's vectors with the solutions it sends (when the models match).
    #[serde(default)]
    pub want_vectors: bool,
}

/// A solution's chunk vectors on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireVectors {
    pub chunks: Vec<WireChunk>,
}

/// One chunk: its UTF-8 byte range in the text and its vector, base64 of little-endian `f32`s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireChunk {
    pub start: usize,
    pub end: usize,
    pub vector: String,
}

impl WireVectors {
    pub fn encode(chunks: &[ChunkVector]) -> Self {
        Self {
            chunks: chunks
                .iter()
                .map(|(range, vector)| WireChunk {
                    start: range.start,
                    end: range.end,
                    vector: STANDARD.encode(devlens_search::vector::to_le_bytes(vector)),
                })
                .collect(),
        }
    }

    /// The chunks as ranges of `text` with `dims`-long vectors; the error says what is wrong.
    pub fn decode(&self, text: &str, dims: usize) -> Result<Vec<ChunkVector>, String> {
        let mut out = Vec::with_capacity(self.chunks.len());
        let mut previous_end = 0;
        for (i, c) in self.chunks.iter().enumerate() {
            if c.start >= c.end
                || c.end > text.len()
                || c.start < previous_end
                || !text.is_char_boundary(c.start)
                || !text.is_char_boundary(c.end)
            {
                return Err(format!(
                    "vectors.chunks[{i}] covers bytes {}..{}, which is not a piece of the text \
                     ({} bytes) after the previous chunk, on character boundaries",
                    c.start,
                    c.end,
                    text.len()
                ));
            }
            previous_end = c.end;
            let bytes = STANDARD
                .decode(&c.vector)
                .or_else(|_| STANDARD_NO_PAD.decode(&c.vector))
                .map_err(|e| format!("vectors.chunks[{i}].vector is not base64: {e}"))?;
            if bytes.len() != dims * 4 {
                return Err(format!(
                    "vectors.chunks[{i}].vector has {} bytes; {dims} dimensions take {}",
                    bytes.len(),
                    dims * 4
                ));
            }
            let vector: Vec<f32> = devlens_search::vector::from_le_bytes(&bytes).collect();
            if vector.iter().any(|x| !x.is_finite()) {
                return Err(format!(
                    "vectors.chunks[{i}].vector holds a value that is not a finite number"
                ));
            }
            out.push((c.start..c.end, vector));
        }
        Ok(out)
    }
}

/// What the server answers a sync.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// The server's embedding model, `null` when it has none.
    pub model: Option<String>,
    pub dims: Option<usize>,
    /// What the extension should take: solutions it lacks or holds an older version of (with
    /// their vectors when asked for and the models match), and deletions.
    pub changes: Vec<ServerChange>,
    /// Solutions changed on both sides since the last sync, and which side was kept.
    pub conflicts: Vec<SyncConflict>,
    /// Changes the server refused, and why; the extension keeps them to send again.
    pub rejected: Vec<RejectedChange>,
    /// What the extension's changes did to the server's knowledge base.
    pub applied: SyncCounts,
    /// The server's clock, RFC 3339.
    pub server_time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// One entry of [`SyncReport::changes`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ServerChange {
    Saved(SavedChange),
    Deleted(DeletedChange),
}

impl ServerChange {
    pub fn id(&self) -> &str {
        match self {
            Self::Saved(s) => &s.solution.id,
            Self::Deleted(d) => &d.id,
        }
    }
}

/// A solution as the server holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SavedChange {
    #[serde(flatten)]
    pub solution: Solution,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vectors: Option<WireVectors>,
}

/// A solution the server no longer has: `{id, deleted: true, updatedAt}` (when it was deleted).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletedChange {
    pub id: String,
    pub deleted: bool,
    pub updated_at: String,
}

/// A solution both sides changed since the last sync.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncConflict {
    pub id: String,
    pub title: String,
    pub kept: Kept,
    /// One sentence a user understands.
    pub why: String,
}

/// Which version a conflict kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kept {
    Server,
    Extension,
    Deleted,
}

/// A change the server refused: its id (when it had one) and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RejectedChange {
    pub id: Option<String>,
    pub why: String,
}

/// What the extension's changes did on the server. A change the server's version won counts
/// as unchanged, as does a deletion of a solution the server does not have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SyncCounts {
    pub created: usize,
    pub updated: usize,
    pub deleted: usize,
    pub unchanged: usize,
}

/// A sync's answer, and the solutions it stored without vectors (to embed next, see
/// [`KnowledgeBase::embed_missing`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SyncOutcome {
    pub report: SyncReport,
    pub unembedded: Vec<String>,
}

impl Report for SyncReport {
    fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let a = &self.applied;
        let mut out = format!(
            "synced: {} created, {} updated, {} deleted, {} unchanged here; {} changes for the \
             extension",
            a.created,
            a.updated,
            a.deleted,
            a.unchanged,
            self.changes.len()
        );
        for c in &self.conflicts {
            let _ = write!(out, "\nconflict {} \"{}\": {}", c.id, c.title, c.why);
        }
        for r in &self.rejected {
            let _ = write!(
                out,
                "\nrejected {}: {}",
                r.id.as_deref().unwrap_or("(no id)"),
                r.why
            );
        }
        if let Some(n) = &self.notice {
            let _ = write!(out, "\nnote: {n}");
        }
        out
    }
}

impl KnowledgeBase {
    /// Applies the extension's changes (last writer wins per solution, conflicts noted, bad
    /// changes rejected alone) and answers with what the extension should take. Solutions
    /// stored without vectors the server could use are listed in
    /// [`SyncOutcome::unembedded`] for [`KnowledgeBase::embed_missing`].
    pub async fn sync(&self, request: SyncRequest) -> Result<SyncOutcome, KbError> {
        let embedder = self.embedder().await;
        let server = embedder
            .as_ref()
            .ok()
            .map(|e| (e.model().to_string(), e.dims()));
        let mut session = Session::new(self.store.as_ref(), &request, server);
        if let Err(reason) = &embedder {
            session.notes.push(format!(
                "the server has no embedding model ({reason}): what the extension sent is found \
                 by keywords until `devlens kb reembed` runs"
            ));
        }
        blocking(|| session.run(request))
    }

    /// Embeds those of `ids` that still lack current vectors of the embedder's model,
    /// [`REEMBED_BATCH`] at a time, each batch stored as it is done. How many got theirs.
    pub async fn embed_missing(&self, ids: &[String]) -> Result<usize, KbError> {
        let embedder = self
            .embedder()
            .await
            .map_err(KbError::EmbedderUnavailable)?;
        let (model, dims) = (embedder.model().to_string(), embedder.dims());
        let mut done = 0;
        for batch in ids.chunks(REEMBED_BATCH) {
            let wanted = blocking(|| -> Result<Vec<Solution>, KbError> {
                let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
                let mut lacking = Vec::new();
                for s in self.store.get_many(&refs)? {
                    if dims == 0 || self.store.solution_vectors(&s.id, &model, dims)?.is_empty() {
                        lacking.push(s);
                    }
                }
                Ok(lacking)
            })?;
            if wanted.is_empty() {
                continue;
            }
            let refs: Vec<&Solution> = wanted.iter().collect();
            let vectors = self.embed(&embedder, &refs).await?;
            let pairs: Vec<(String, ChunkVectors)> =
                wanted.iter().map(|s| s.id.clone()).zip(vectors).collect();
            done += blocking(|| self.store.set_vectors(&pairs))?;
        }
        Ok(done)
    }
}

/// A saved solution the extension sent, checked.
struct IncomingSolution {
    /// As sent.
    sent: Solution,
    /// Cleaned as a save cleans it: what is stored.
    cleaned: Solution,
    base: Option<String>,
    /// The extension's vectors, when the server can store them as its own.
    vectors: Option<ChunkVectors>,
}

/// A deletion the extension sent, checked.
struct IncomingDeletion {
    id: String,
    /// When it was deleted, RFC 3339 UTC.
    deleted_at: String,
    base: Option<String>,
}

enum Change {
    Save(Box<IncomingSolution>),
    Delete(IncomingDeletion),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SavedWire {
    id: String,
    title: String,
    #[serde(default)]
    url: Option<String>,
    text: String,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    created_at: String,
    updated_at: String,
    #[serde(default)]
    base: Option<String>,
    #[serde(default)]
    vectors: Option<WireVectors>,
    /// Only `false` here: a deletion is read as [`DeletedWire`].
    #[serde(default)]
    #[allow(dead_code)]
    deleted: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DeletedWire {
    id: String,
    #[allow(dead_code)]
    deleted: bool,
    updated_at: String,
    #[serde(default)]
    base: Option<String>,
}

const SAVED_SHAPE: &str = "{\"id\", \"title\", \"url\"?, \"text\", \"summary\"?, \"tags\", \
                           \"createdAt\", \"updatedAt\", \"base\", \"vectors\"?: {\"chunks\": \
                           [{\"start\", \"end\", \"vector\"}]}}";
const DELETED_SHAPE: &str = "{\"id\", \"deleted\": true, \"updatedAt\", \"base\"}";

/// One sync's work: what it read, decided and answers.
struct Session<'a> {
    store: &'a dyn SolutionStore,
    /// The server's model and dims.
    server: Option<(String, usize)>,
    /// Whether the extension's vectors are of the server's model and size.
    same_model: bool,
    extension_dims: Option<usize>,
    extension_model: Option<String>,
    now: i128,
    changes: Vec<ServerChange>,
    /// Ids already in `changes`.
    sending: HashSet<String>,
    conflicts: Vec<SyncConflict>,
    rejected: Vec<RejectedChange>,
    counts: SyncCounts,
    unembedded: Vec<String>,
    /// Solutions that came with vectors the server could not use.
    vectors_ignored: usize,
    notes: Vec<String>,
}

impl<'a> Session<'a> {
    fn new(
        store: &'a dyn SolutionStore,
        request: &SyncRequest,
        server: Option<(String, usize)>,
    ) -> Self {
        let same_model = match (&server, &request.model, request.dims) {
            (Some((model, dims)), Some(theirs), Some(their_dims)) => {
                model == theirs && *dims == their_dims && *dims > 0
            }
            _ => false,
        };
        Self {
            store,
            server,
            same_model,
            extension_dims: request.dims,
            extension_model: request.model.clone(),
            now: now_nanos(),
            changes: Vec::new(),
            sending: HashSet::new(),
            conflicts: Vec::new(),
            rejected: Vec::new(),
            counts: SyncCounts::default(),
            unembedded: Vec::new(),
            vectors_ignored: 0,
            notes: Vec::new(),
        }
    }

    fn run(mut self, request: SyncRequest) -> Result<SyncOutcome, KbError> {
        // Every id the request changes, valid or not: the rest of the answer leaves them out.
        let mut handled: HashSet<String> = HashSet::new();
        for raw in request.changes {
            let id = raw.get("id").and_then(Value::as_str).map(str::to_string);
            if let Some(id) = &id
                && !handled.insert(id.clone())
            {
                self.reject(
                    Some(id.clone()),
                    "the id appears in more than one change; send one change per solution",
                );
                continue;
            }
            match self.parse(raw) {
                Err(why) => self.reject(id, why),
                Ok(Change::Save(s)) => self.save(*s)?,
                Ok(Change::Delete(d)) => self.delete(d)?,
            }
        }
        self.answer_known(&request.known, &handled)?;
        if request.want_vectors && self.same_model {
            self.attach_vectors()?;
        }
        if self.vectors_ignored > 0 && self.server.is_some() {
            self.notes.push(format!(
                "the vectors of {} solutions were not used (another model or size, or chunks \
                 cut differently from the server's); the server embeds them itself",
                self.vectors_ignored
            ));
        }
        let (model, dims) = match self.server {
            Some((model, dims)) => (Some(model), (dims > 0).then_some(dims)),
            None => (None, None),
        };
        Ok(SyncOutcome {
            report: SyncReport {
                model,
                dims,
                changes: self.changes,
                conflicts: self.conflicts,
                rejected: self.rejected,
                applied: self.counts,
                server_time: devlens_core::clock::now_rfc3339(),
                notice: (!self.notes.is_empty()).then(|| self.notes.join("; ")),
            },
            unembedded: self.unembedded,
        })
    }

    fn reject(&mut self, id: Option<String>, why: impl Into<String>) {
        self.rejected.push(RejectedChange {
            id,
            why: why.into(),
        });
    }

    fn send(&mut self, solution: Solution) {
        if self.sending.insert(solution.id.clone()) {
            self.changes.push(ServerChange::Saved(SavedChange {
                solution,
                vectors: None,
            }));
        }
    }

    fn send_deleted(&mut self, id: &str, deleted_at: &str) {
        if self.sending.insert(id.to_string()) {
            self.changes.push(ServerChange::Deleted(DeletedChange {
                id: id.to_string(),
                deleted: true,
                updated_at: deleted_at.to_string(),
            }));
        }
    }

    fn conflict(&mut self, id: &str, title: &str, kept: Kept, why: String) {
        self.conflicts.push(SyncConflict {
            id: id.to_string(),
            title: title.to_string(),
            kept,
            why,
        });
    }

    /// Reads and checks one change; the error is why it is rejected.
    fn parse(&mut self, raw: Value) -> Result<Change, String> {
        if !raw.is_object() {
            return Err(format!(
                "a change must be an object: {SAVED_SHAPE} or {DELETED_SHAPE}"
            ));
        }
        if raw.get("deleted") == Some(&Value::Bool(true)) {
            let d: DeletedWire = serde_json::from_value(raw)
                .map_err(|e| format!("not a deletion ({e}); expected {DELETED_SHAPE}"))?;
            self.check_id(&d.id)?;
            self.check_time("updatedAt", &d.updated_at)?;
            if let Some(base) = &d.base {
                self.check_time("base", base)?;
            }
            return Ok(Change::Delete(IncomingDeletion {
                deleted_at: utc(&d.updated_at).unwrap_or(d.updated_at),
                id: d.id,
                base: d.base,
            }));
        }
        let w: SavedWire = serde_json::from_value(raw)
            .map_err(|e| format!("not a solution ({e}); expected {SAVED_SHAPE}"))?;
        self.check_id(&w.id)?;
        self.check_time("createdAt", &w.created_at)?;
        self.check_time("updatedAt", &w.updated_at)?;
        if let Some(base) = &w.base {
            self.check_time("base", base)?;
        }
        let sent = Solution {
            id: w.id,
            title: w.title,
            url: w.url,
            text: w.text,
            summary: w.summary,
            tags: w.tags,
            created_at: w.created_at,
            updated_at: w.updated_at,
        };
        let clean = solution::clean(NewSolution {
            title: sent.title.clone(),
            url: sent.url.clone(),
            text: sent.text.clone(),
            summary: sent.summary.clone(),
            tags: sent.tags.clone(),
        })
        .map_err(|e| e.to_string())?;
        let cleaned = Solution {
            id: sent.id.clone(),
            title: clean.title,
            url: clean.url,
            text: clean.text,
            summary: clean.summary,
            tags: clean.tags,
            created_at: sent.created_at.clone(),
            updated_at: sent.updated_at.clone(),
        };
        let vectors = match (&w.vectors, &self.extension_model) {
            (Some(wire), Some(_)) => self.usable_vectors(wire, &sent, &cleaned)?,
            _ => None,
        };
        Ok(Change::Save(Box::new(IncomingSolution {
            sent,
            cleaned,
            base: w.base,
            vectors,
        })))
    }

    /// The extension's vectors as the server's own, when they are of its model and size and
    /// cover exactly the chunks it would cut and embed; `None` (counted) otherwise. Malformed
    /// vectors are an error.
    fn usable_vectors(
        &mut self,
        wire: &WireVectors,
        sent: &Solution,
        cleaned: &Solution,
    ) -> Result<Option<ChunkVectors>, String> {
        let dims = match self.extension_dims {
            Some(d) if (1..=MAX_DIMS).contains(&d) => d,
            Some(d) => return Err(format!("dims {d} is not a vector size (1–{MAX_DIMS})")),
            None => return Err("vectors were sent without the request's dims".into()),
        };
        let chunks = wire.decode(&sent.text, dims)?;
        let Some(model) = self
            .server
            .as_ref()
            .filter(|_| self.same_model)
            .map(|(model, _)| model.clone())
        else {
            self.vectors_ignored += 1;
            return Ok(None);
        };
        // Vectors are of `embedding_text(title, tags, chunk)` for the server's chunks of the
        // stored text: a save's cleaning that changed any of them makes them another text's.
        let same_embedded_text =
            cleaned.title == sent.title && cleaned.tags == sent.tags && cleaned.text == sent.text;
        let ranges: Vec<_> = chunks.iter().map(|(r, _)| r.clone()).collect();
        let unit = chunks.iter().all(|(_, v)| {
            let norm: f32 = v.iter().map(|x| x * x).sum();
            (norm - 1.0).abs() < 1e-3
        });
        if !same_embedded_text
            || !unit
            || ranges != chunk::chunk_ranges(&cleaned.text, chunk::TARGET_CHARS)
        {
            self.vectors_ignored += 1;
            return Ok(None);
        }
        Ok(Some(ChunkVectors {
            content_hash: content_hash(cleaned),
            model,
            dims,
            chunks,
        }))
    }

    fn check_id(&self, id: &str) -> Result<(), String> {
        if solution::valid_id(id) {
            Ok(())
        } else {
            Err(format!(
                "the id `{id}` is not a solution id: 1–64 letters, digits, `-` or `_`"
            ))
        }
    }

    fn check_time(&self, name: &str, ts: &str) -> Result<(), String> {
        let Some(at) = instant(ts) else {
            return Err(format!(
                "{name} `{ts}` is not an RFC 3339 timestamp (like 2026-03-02T10:15:00.000Z)"
            ));
        };
        if at > self.now + MAX_CLOCK_AHEAD_NANOS {
            return Err(format!(
                "{name} `{ts}` is more than a day ahead of the server's clock; check the date \
                 of the computer that made it"
            ));
        }
        Ok(())
    }

    /// A solution saved in the extension: created, applied over the server's, or losing to
    /// the server's later edit or deletion.
    fn save(&mut self, s: IncomingSolution) -> Result<(), KbError> {
        let id = s.cleaned.id.clone();
        let theirs = s.cleaned.updated_at.clone();
        for _ in 0..ATTEMPTS {
            let Some(current) = self.store.get(&id)? else {
                let tombstone = self.store.tombstone(&id)?;
                if let Some(deleted_at) = &tombstone
                    && later(deleted_at, &theirs)
                {
                    self.counts.unchanged += 1;
                    self.conflict(
                        &id,
                        &s.cleaned.title,
                        Kept::Deleted,
                        format!(
                            "Deleted on the server ({deleted_at}) after its last edit in the \
                             extension ({theirs}), so it stays deleted."
                        ),
                    );
                    self.send_deleted(&id, deleted_at);
                    return Ok(());
                }
                let Some((_, content_changed)) =
                    self.store.put_if(&s.cleaned, s.vectors.as_ref(), None)?
                else {
                    continue;
                };
                self.counts.created += 1;
                if let Some(deleted_at) = tombstone {
                    self.conflict(
                        &id,
                        &s.cleaned.title,
                        Kept::Extension,
                        format!(
                            "Deleted on the server ({deleted_at}) but edited in the extension \
                             later ({theirs}), so the edit was kept and the solution restored."
                        ),
                    );
                }
                self.stored(&s, content_changed);
                return Ok(());
            };
            if same_content(&current, &s.cleaned) {
                // Nothing to apply; the extension takes the server's timestamps if they differ.
                self.counts.unchanged += 1;
                if current != s.sent {
                    self.send(current);
                }
                return Ok(());
            }
            let ours = current.updated_at.clone();
            let agreed = s.base.as_deref().is_some_and(|b| same_instant(b, &ours));
            let extension_later = later(&theirs, &ours);
            if !agreed && !extension_later {
                self.counts.unchanged += 1;
                let why = if same_instant(&theirs, &ours) {
                    format!(
                        "Edited in the extension and on the server at the same time ({ours}) \
                         since the last sync; the server's version was kept."
                    )
                } else {
                    format!(
                        "Edited in the extension ({theirs}) and on the server ({ours}) since the \
                         last sync; the server's edit is later, so it was kept."
                    )
                };
                self.conflict(&id, &current.title, Kept::Server, why);
                self.send(current);
                return Ok(());
            }
            let Some((_, content_changed)) =
                self.store
                    .put_if(&s.cleaned, s.vectors.as_ref(), Some(&ours))?
            else {
                continue;
            };
            self.counts.updated += 1;
            if !agreed {
                self.conflict(
                    &id,
                    &s.cleaned.title,
                    Kept::Extension,
                    format!(
                        "Edited in the extension ({theirs}) and on the server ({ours}) since the \
                         last sync; the extension's edit is later, so it replaced the server's."
                    ),
                );
            }
            self.stored(&s, content_changed);
            return Ok(());
        }
        self.reject(
            Some(id),
            "it changed on the server again and again while this sync ran; the next sync \
             settles it",
        );
        Ok(())
    }

    /// After the extension's version was stored: the extension takes it back when the save's
    /// cleaning changed it, and it is embedded when it came without usable vectors.
    fn stored(&mut self, s: &IncomingSolution, content_changed: bool) {
        if content_changed && s.vectors.is_none() {
            self.unembedded.push(s.cleaned.id.clone());
        }
        if s.cleaned != s.sent {
            self.send(s.cleaned.clone());
        }
    }

    /// A solution deleted in the extension: deleted here unless the server edited it later.
    fn delete(&mut self, d: IncomingDeletion) -> Result<(), KbError> {
        for _ in 0..ATTEMPTS {
            let Some(current) = self.store.get(&d.id)? else {
                self.counts.unchanged += 1;
                return Ok(());
            };
            let ours = current.updated_at.clone();
            let agreed = d.base.as_deref().is_some_and(|b| same_instant(b, &ours));
            if agreed || !later(&ours, &d.deleted_at) {
                if !self.store.delete_if(&d.id, &ours, &d.deleted_at)? {
                    continue;
                }
                self.counts.deleted += 1;
                if !agreed {
                    self.conflict(
                        &d.id,
                        &current.title,
                        Kept::Deleted,
                        format!(
                            "Edited on the server ({ours}) but deleted in the extension later \
                             ({}), so it was deleted.",
                            d.deleted_at
                        ),
                    );
                }
                return Ok(());
            }
            self.counts.unchanged += 1;
            self.conflict(
                &d.id,
                &current.title,
                Kept::Server,
                format!(
                    "Deleted in the extension ({}) but edited on the server later ({ours}), so \
                     the server's version was kept and comes back to the extension.",
                    d.deleted_at
                ),
            );
            self.send(current);
            return Ok(());
        }
        self.reject(
            Some(d.id),
            "it changed on the server again and again while this sync ran; the next sync \
             settles it",
        );
        Ok(())
    }

    /// The rest of the answer: solutions the extension lacks or holds an older version of,
    /// and deletions of those it holds that the server no longer has.
    fn answer_known(
        &mut self,
        known: &BTreeMap<String, String>,
        handled: &HashSet<String>,
    ) -> Result<(), KbError> {
        let versions = self.store.versions()?;
        let mut wanted: Vec<&str> = Vec::new();
        for (id, updated_at) in &versions {
            if handled.contains(id) || self.sending.contains(id) {
                continue;
            }
            match known.get(id) {
                Some(theirs) if same_instant(theirs, updated_at) => {}
                _ => wanted.push(id),
            }
        }
        let mut by_id: HashMap<String, Solution> = self
            .store
            .get_many(&wanted)?
            .into_iter()
            .map(|s| (s.id.clone(), s))
            .collect();
        for id in wanted {
            if let Some(s) = by_id.remove(id) {
                self.send(s);
            }
        }
        let on_server: HashSet<&str> = versions.iter().map(|(id, _)| id.as_str()).collect();
        let mut gone = Vec::new();
        for id in known.keys() {
            if handled.contains(id) || on_server.contains(id.as_str()) {
                continue;
            }
            if !solution::valid_id(id) {
                self.reject(
                    Some(id.clone()),
                    format!("`known` holds `{id}`, which is not a solution id"),
                );
                continue;
            }
            gone.push(id);
        }
        if !gone.is_empty() {
            let tombstones: HashMap<String, String> =
                self.store.tombstones()?.into_iter().collect();
            let now = devlens_core::clock::now_rfc3339();
            for id in gone {
                let at = tombstones.get(id).unwrap_or(&now).clone();
                self.send_deleted(id, &at);
            }
        }
        Ok(())
    }

    /// Puts the server's current vectors on every solution sent that has them.
    fn attach_vectors(&mut self) -> Result<(), KbError> {
        let Some((model, dims)) = self.server.clone() else {
            return Ok(());
        };
        let saved = self
            .changes
            .iter()
            .filter(|c| matches!(c, ServerChange::Saved(_)))
            .count();
        let mut bulk: Option<HashMap<String, Vec<ChunkVector>>> = None;
        if saved > BULK_VECTORS {
            let loaded = self.store.vectors(&model, dims)?;
            let mut grouped: HashMap<String, Vec<ChunkVector>> = HashMap::new();
            for ((id, range), vector) in loaded.rows.into_iter().zip(loaded.data.chunks(dims)) {
                grouped
                    .entry(id)
                    .or_default()
                    .push((range, vector.to_vec()));
            }
            bulk = Some(grouped);
        }
        for change in &mut self.changes {
            let ServerChange::Saved(saved) = change else {
                continue;
            };
            let chunks = match &mut bulk {
                Some(grouped) => grouped.remove(&saved.solution.id).unwrap_or_default(),
                None => self
                    .store
                    .solution_vectors(&saved.solution.id, &model, dims)?,
            };
            if !chunks.is_empty() {
                saved.vectors = Some(WireVectors::encode(&chunks));
            }
        }
        Ok(())
    }
}

/// Title, URL, text, summary and tags are the same (timestamps aside).
fn same_content(a: &Solution, b: &Solution) -> bool {
    a.title == b.title
        && a.url == b.url
        && a.text == b.text
        && a.summary == b.summary
        && a.tags == b.tags
}

/// Whether two timestamps are the same instant (the same text, when either does not parse).
fn same_instant(a: &str, b: &str) -> bool {
    match (instant(a), instant(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Whether `a` is later than `b` (by their text, when either does not parse).
fn later(a: &str, b: &str) -> bool {
    match (instant(a), instant(b)) {
        (Some(x), Some(y)) => x > y,
        _ => a > b,
    }
}

fn now_nanos() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or_default()
}

const NANOS: i128 = 1_000_000_000;

/// Nanoseconds since the Unix epoch of an RFC 3339 timestamp (`2026-03-02T10:15:00Z`, with
/// fractional seconds or a `±hh:mm` offset); `None` when it is not one.
pub(crate) fn instant(ts: &str) -> Option<i128> {
    if !solution::valid_timestamp(ts) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| ts.get(r)?.parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = ts.get(19..)?;
    let mut nanos: i128 = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        for (i, d) in fraction.bytes().take(digits).enumerate() {
            if i < 9 {
                nanos = nanos * 10 + i128::from(d - b'0');
            }
        }
        for _ in digits..9 {
            nanos *= 10;
        }
        rest = &fraction[digits..];
    }
    let offset: i64 = match rest {
        "Z" | "z" => 0,
        _ => {
            let b = rest.as_bytes();
            let sign = match b.first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return None,
            };
            let digits = |i: &[usize]| i.iter().all(|&i| b.get(i).is_some_and(u8::is_ascii_digit));
            if b.len() != 6 || b[3] != b':' || !digits(&[1, 2, 4, 5]) {
                return None;
            }
            let (h, m) = (
                rest.get(1..3)?.parse::<i64>().ok()?,
                rest.get(4..6)?.parse::<i64>().ok()?,
            );
            if h > 23 || m > 59 {
                return None;
            }
            sign * (h * 3600 + m * 60)
        }
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(i128::from(seconds) * NANOS + nanos)
}

/// `ts` as RFC 3339 in UTC (`Z`), its fraction of a second kept; `None` when it is not a
/// timestamp.
pub(crate) fn utc(ts: &str) -> Option<String> {
    let at = instant(ts)?;
    let (seconds, nanos) = (at.div_euclid(NANOS), at.rem_euclid(NANOS));
    let seconds = i64::try_from(seconds).ok()?;
    let (days, secs_of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return None;
    }
    let mut out = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        secs_of_day / 3600,
        secs_of_day % 3600 / 60,
        secs_of_day % 60
    );
    if nanos > 0 {
        let fraction = format!("{nanos:09}");
        // Milliseconds at least, as JavaScript writes them.
        let keep = fraction.trim_end_matches('0').len().max(3);
        out.push('.');
        out.push_str(&fraction[..keep]);
    }
    out.push('Z');
    Some(out)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (H. Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_compare_as_instants() {
        let at = instant("2026-03-02T10:15:00Z").unwrap();
        assert_eq!(instant("2026-03-02T10:15:00.000Z"), Some(at));
        assert_eq!(instant("2026-03-02T12:15:00+02:00"), Some(at));
        assert_eq!(instant("2026-03-02t10:15:00z"), Some(at));
        assert_eq!(instant("2026-03-02T10:15:00.5Z"), Some(at + NANOS / 2));
        assert_eq!(instant("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            instant("2000-02-29T00:00:00Z"),
            Some(951_782_400 * NANOS),
            "a leap day"
        );
        for bad in [
            "yesterday",
            "2026-02-30T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-03-02T24:00:00Z",
            "2026-03-02T10:15:00",
            "2026-03-02T10:15:00.Z",
            "2026-03-02T10:15:00+2:00",
            "2026-03-02T10:15:00+-5:00",
            "2026-03-02T10:15:00Zjunk",
        ] {
            assert_eq!(instant(bad), None, "{bad}");
        }
        assert!(later("2026-03-02T10:15:00.001Z", "2026-03-02T10:15:00Z"));
        assert!(same_instant(
            "2026-03-02T10:15:00Z",
            "2026-03-02T11:15:00+01:00"
        ));
        assert_eq!(
            utc("2026-03-02T12:15:00.120+02:00").as_deref(),
            Some("2026-03-02T10:15:00.120Z")
        );
        assert_eq!(
            utc("2026-03-01T00:30:00+01:00").as_deref(),
            Some("2026-02-28T23:30:00Z")
        );
        assert_eq!(
            utc("2028-02-29T10:15:00Z").as_deref(),
            Some("2028-02-29T10:15:00Z")
        );
    }

    #[test]
    fn dates_round_trip_through_days() {
        for days in [-800_000, -1, 0, 1, 59, 60, 11_016, 20_513, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn vectors_must_be_pieces_of_the_text_of_the_stated_size() {
        let text = "héllo wörld";
        let v = |x: &[f32]| STANDARD.encode(devlens_search::vector::to_le_bytes(x));
        let ok = WireVectors {
            chunks: vec![WireChunk {
                start: 0,
                end: text.len(),
                vector: v(&[1.0, 0.0]),
            }],
        };
        assert_eq!(
            ok.decode(text, 2).unwrap(),
            vec![(0..text.len(), vec![1.0, 0.0])]
        );
        let round = WireVectors::encode(&ok.decode(text, 2).unwrap());
        assert_eq!(round, ok);
        let err = ok.decode(text, 3).unwrap_err();
        assert!(err.contains("3 dimensions"), "{err}");
        for (start, end) in [(0, 2), (3, 3), (0, 99)] {
            let bad = WireVectors {
                chunks: vec![WireChunk {
                    start,
                    end,
                    vector: v(&[1.0, 0.0]),
                }],
            };
            assert!(bad.decode(text, 2).is_err(), "{start}..{end}");
        }
        let nan = WireVectors {
            chunks: vec![WireChunk {
                start: 0,
                end: 1,
                vector: v(&[f32::NAN, 0.0]),
            }],
        };
        assert!(nan.decode(text, 2).unwrap_err().contains("finite"));
        let junk = WireVectors {
            chunks: vec![WireChunk {
                start: 0,
                end: 1,
                vector: "%%%".into(),
            }],
        };
        assert!(junk.decode(text, 2).unwrap_err().contains("base64"));
    }
}
