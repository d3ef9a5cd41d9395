//! The persistent embedding index of a spec's operations: what semantic and hybrid search rank
//! with.
//!
//! One index per project (or per spec location), kept by a [`SemanticIndexStore`] (store/:
//! [`FileIndexStore`], files in the data dir's `indexes/` folder, or [`PostgresIndexStore`], a
//! team server's database): a rebuild writes a complete new version beside the live one and
//! swaps it in atomically, so searches keep answering from the old index meanwhile and a crash mid-build
//! leaves it intact. Re-indexing is manual (a re-index costs embedding time the user chooses to spend): a changed spec makes the index
//! *stale*, which status and results say, and rebuilding embeds only endpoints whose text
//! changed — vectors are reused by text hash when the model is the same.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use devlens_embed::{EmbedError, Embedder, Progress};
use devlens_search::{VectorHit, VectorIndex};

use crate::model::first_sentence;
use crate::{ApiSpec, Operation};

mod store;

pub use store::{FileIndexStore, PostgresIndexStore, SemanticIndexStore};

/// Version of [`endpoint_text`]: an index built with another format is re-embedded in full.
pub const TEXT_FORMAT: u32 = 1;

/// The string an operation is embedded as: route, tags, summary and operationId, then the
/// first sentence of the description — `POST /repos/{owner}/{repo}/issues. Tags: issues. Summary: Create an issue.
/// OperationId: issues/create. Any user with pull access can create an issue.`
///
/// Measured against four other layouts on the GitHub golden set
/// (`examples/embedding_text_variants.rs`): natural-language-first layouts, dropping the route,
/// or splitting identifiers into words all ranked lower with all-MiniLM-L6-v2; the description's
/// first sentence added most (top-1 0.54 → 0.67).
pub fn endpoint_text(op: &Operation) -> String {
    let mut text = format!("{} {}.", op.method, op.path);
    if !op.tags.is_empty() {
        text.push_str(&format!(" Tags: {}.", op.tags.join(", ")));
    }
    if let Some(summary) = op
        .summary
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        text.push_str(&format!(" Summary: {}.", summary.trim_end_matches('.')));
    }
    if let Some(id) = &op.operation_id {
        text.push_str(&format!(" OperationId: {id}."));
    }
    if let Some(first) = op
        .description
        .as_deref()
        .map(first_sentence)
        .filter(|d| !d.is_empty())
    {
        text.push_str(&format!(" {first}."));
    }
    text
}

/// The string a question is embedded as: the question itself. A `Query: …` wrapper
/// and a `Summary: …` wrapper both ranked lower.
pub fn query_text(query: &str) -> String {
    query.trim().to_string()
}

fn text_hash(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..12])
}

/// Per-index metadata, stored as `meta.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexMeta {
    /// Hash of the spec the index was built from; differs from the spec's now when it changed.
    pub swagger_hash: String,
    /// When the build finished (RFC 3339, UTC).
    pub built_at: String,
    pub dims: usize,
    pub model: String,
    pub provider: String,
    pub vector_count: usize,
    pub text_format: u32,
    /// The spec's location at build time.
    pub source: String,
}

/// One indexed operation, stored in `items.json` (one per vector, same order).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IndexedEndpoint {
    /// operationId, or `METHOD /path` when there is none.
    pub id: String,
    pub method: String,
    pub path: String,
    pub summary: Option<String>,
    pub tags: Vec<String>,
    pub operation_id: Option<String>,
    /// Hash of the embedded text: unchanged text, reusable vector.
    pub text_hash: String,
}

/// Where each row sits in one spec: computed once per spec content, not per query.
type RowPositions = Arc<[Option<usize>]>;

/// A loaded or freshly built index.
#[derive(Debug)]
pub struct SemanticIndex {
    pub meta: IndexMeta,
    pub items: Vec<IndexedEndpoint>,
    pub vectors: VectorIndex,
    /// `rows_in`'s last answer, keyed by the spec's hash.
    rows_cache: Mutex<Option<(String, RowPositions)>>,
}

/// What a build did.
#[derive(Debug)]
pub struct BuildOutcome {
    pub index: SemanticIndex,
    /// Texts sent to the embedder.
    pub embedded: usize,
    /// Vectors taken over from the previous index.
    pub reused: usize,
}

impl SemanticIndex {
    /// Embeds `spec`'s operations. Vectors of `previous` are reused for unchanged texts when it
    /// was built by the same model with the same text format.
    pub async fn build(
        spec: &ApiSpec,
        embedder: &dyn Embedder,
        previous: Option<&SemanticIndex>,
        progress: Progress<'_>,
    ) -> Result<BuildOutcome, EmbedError> {
        let operations = spec.operations();
        let texts: Vec<String> = operations.iter().map(endpoint_text).collect();
        let hashes: Vec<String> = texts.iter().map(|t| text_hash(t)).collect();

        let reusable: HashMap<&str, usize> = previous
            .filter(|p| p.mismatch(embedder).is_none())
            .map(|p| {
                p.items
                    .iter()
                    .enumerate()
                    .map(|(row, item)| (item.text_hash.as_str(), row))
                    .collect()
            })
            .unwrap_or_default();
        let missing: Vec<usize> = (0..texts.len())
            .filter(|&i| !reusable.contains_key(hashes[i].as_str()))
            .collect();
        let to_embed: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
        let fresh = if to_embed.is_empty() {
            Vec::new()
        } else {
            embedder.embed_documents(&to_embed, progress).await?
        };
        if fresh.len() != to_embed.len() {
            return Err(EmbedError::BadResponse {
                provider: embedder.provider(),
                message: format!("{} vectors for {} texts", fresh.len(), to_embed.len()),
            });
        }
        let dims = fresh
            .first()
            .map(Vec::len)
            .or_else(|| previous.map(|p| p.vectors.dims()))
            .unwrap_or_else(|| embedder.dims());
        let mut fresh_of: HashMap<usize, &Vec<f32>> = HashMap::new();
        for (&i, vector) in missing.iter().zip(&fresh) {
            fresh_of.insert(i, vector);
        }

        let mut vectors = VectorIndex::new(dims);
        let mut items = Vec::with_capacity(operations.len());
        for (i, op) in operations.iter().enumerate() {
            let vector: &[f32] = match fresh_of.get(&i) {
                Some(v) => v,
                None => previous
                    .and_then(|p| p.vectors.get(reusable[hashes[i].as_str()]))
                    .unwrap_or_default(),
            };
            if !vectors.push(vector) {
                return Err(EmbedError::BadResponse {
                    provider: embedder.provider(),
                    message: format!(
                        "a vector of length {} where {dims} was expected",
                        vector.len()
                    ),
                });
            }
            items.push(IndexedEndpoint {
                id: op
                    .operation_id
                    .clone()
                    .unwrap_or_else(|| format!("{} {}", op.method, op.path)),
                method: op.method.clone(),
                path: op.path.clone(),
                summary: op.summary.clone(),
                tags: op.tags.clone(),
                operation_id: op.operation_id.clone(),
                text_hash: hashes[i].clone(),
            });
        }
        let meta = IndexMeta {
            swagger_hash: spec.swagger_hash.clone(),
            built_at: devlens_core::clock::now_rfc3339(),
            dims,
            model: embedder.model().to_string(),
            provider: embedder.provider().as_str().to_string(),
            vector_count: items.len(),
            text_format: TEXT_FORMAT,
            source: spec.source.clone(),
        };
        Ok(BuildOutcome {
            embedded: to_embed.len(),
            reused: operations.len() - to_embed.len(),
            index: SemanticIndex {
                meta,
                items,
                vectors,
                rows_cache: Mutex::new(None),
            },
        })
    }

    /// Why this index cannot answer queries embedded by `embedder`, if it cannot.
    pub fn mismatch(&self, embedder: &dyn Embedder) -> Option<String> {
        let same_model = self.meta.provider == embedder.provider().as_str()
            && self.meta.model == embedder.model();
        // Remote models report 0 dimensions until they have answered once.
        let same_dims = embedder.dims() == 0 || embedder.dims() == self.meta.dims;
        if !same_model || !same_dims {
            return Some(format!(
                "the index was built with {} `{}` ({} dims) but the current embedder is {} `{}` \
                 ({} dims); rebuild it with the current one",
                self.meta.provider,
                self.meta.model,
                self.meta.dims,
                embedder.provider().as_str(),
                embedder.model(),
                embedder.dims()
            ));
        }
        (self.meta.text_format != TEXT_FORMAT).then(|| {
            "the index was built by an older devlens (another endpoint text format); \
             rebuild it"
                .to_string()
        })
    }

    /// Whether the spec changed since the build.
    pub fn is_stale(&self, spec: &ApiSpec) -> bool {
        self.meta.swagger_hash != spec.swagger_hash
    }

    /// Cosine-ranked rows for a query vector; `keep` filters rows before scoring.
    pub fn rank(&self, query: &[f32], limit: usize, keep: impl Fn(u64) -> bool) -> Vec<VectorHit> {
        self.vectors.search(query, limit, keep)
    }

    /// For each row, the position of the same operation (method + path) in `spec`, if it is
    /// still there: a stale index keeps answering for what did not move.
    pub fn rows_in(&self, spec: &ApiSpec) -> RowPositions {
        let mut cache = self.rows_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((hash, rows)) = cache.as_ref()
            && *hash == spec.swagger_hash
        {
            return Arc::clone(rows);
        }
        let positions: HashMap<(&str, &str), usize> = spec
            .operations()
            .iter()
            .enumerate()
            .map(|(i, op)| ((op.method.as_str(), op.path.as_str()), i))
            .collect();
        let rows: RowPositions = self
            .items
            .iter()
            .map(|item| {
                positions
                    .get(&(item.method.as_str(), item.path.as_str()))
                    .copied()
            })
            .collect();
        *cache = Some((spec.swagger_hash.clone(), Arc::clone(&rows)));
        rows
    }
}

/// The store name of a project's index, or of a spec location's (hashed, since locations hold
/// slashes and can be long).
pub fn index_name(project: Option<&str>, location: &str) -> String {
    match project {
        Some(name)
            if !name.is_empty()
                && name.len() <= 100
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                && !name.starts_with('.') =>
        {
            format!("project-{name}")
        }
        Some(name) => format!("project-{}", text_hash(name)),
        None => format!("spec-{}", text_hash(location)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(summary: Option<&str>, description: Option<&str>) -> Operation {
        Operation {
            method: "POST".into(),
            path: "/repos/{owner}/{repo}/issues".into(),
            operation_id: Some("issues/create".into()),
            summary: summary.map(Into::into),
            description: description.map(Into::into),
            tags: vec!["issues".into()],
            deprecated: false,
        }
    }

    #[test]
    fn endpoint_text_is_the_route_then_what_the_spec_says() {
        let text = endpoint_text(&op(
            Some("Create an issue."),
            Some("Any user with pull access can create an issue. More text."),
        ));
        assert_eq!(
            text,
            "POST /repos/{owner}/{repo}/issues. Tags: issues. Summary: Create an issue. \
             OperationId: issues/create. Any user with pull access can create an issue."
        );
        assert_eq!(
            endpoint_text(&op(None, None)),
            "POST /repos/{owner}/{repo}/issues. Tags: issues. OperationId: issues/create."
        );
    }

    #[test]
    fn index_names_are_safe_file_names() {
        assert_eq!(index_name(Some("shop"), "x"), "project-shop");
        assert!(index_name(Some("../etc"), "x").starts_with("project-"));
        assert!(!index_name(Some("../etc"), "x").contains('/'));
        let by_spec = index_name(None, "https://example.com/openapi.json");
        assert!(by_spec.starts_with("spec-") && by_spec.len() == 5 + 24);
    }
}
