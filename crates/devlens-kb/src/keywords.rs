//! The keyword side of a search, ranked in memory: a copy of every solution's keyword entry
//! ([`crate::store::keyword_columns`]) in a [`Bm25Index`] that scores as the embedded store's
//! FTS5 `bm25()` does, kept current with the store.
//!
//! Why: FTS5 (and PostgreSQL's `ts_rank`) score every matching row, and a question with a
//! common word matches most of a large knowledge base — 10–20 ms at 20,000 solutions. The copy
//! scores the same in well under a millisecond. Kept current by the store's generation: when it
//! moved, the solutions whose [`keyword_version`](crate::store::keyword_version) changed are
//! read again, new ones added, deleted ones dropped — by whichever process wrote them, so a team
//! server sharing its database sees the others' writes. A question the copy cannot score exactly
//! (a word outside ASCII letters and digits) is answered by the store's own index.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use devlens_search::bm25::Bm25Index;

use crate::KbError;
use crate::store::{SolutionStore, keyword_columns};

/// Column weights: title, tags, body (as the stores' keyword indexes weigh them).
const WEIGHTS: [f64; 3] = [4.0, 2.0, 1.0];
/// Solutions read from the store at a time while catching up.
const READ_BATCH: usize = 500;

#[derive(Debug)]
pub(crate) struct KeywordCopy {
    state: Mutex<CopyState>,
}

#[derive(Debug)]
struct CopyState {
    /// The store's generation the copy is current with; `None` before the first load.
    generation: Option<i64>,
    index: Bm25Index,
}

impl Default for KeywordCopy {
    fn default() -> Self {
        Self {
            state: Mutex::new(CopyState {
                generation: None,
                index: Bm25Index::new(&WEIGHTS),
            }),
        }
    }
}

impl KeywordCopy {
    /// [`KeywordCopy::search_at`] at the store's generation now.
    #[cfg(test)]
    pub(crate) fn search(
        &self,
        store: &dyn SolutionStore,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<(String, f32)>, KbError> {
        self.search_at(store, store.generation()?, terms, limit)
    }

    /// The `limit` solutions that best match any of `terms` by BM25 (title counting most, then
    /// tags, then text), best first — what [`SolutionStore::keyword`] of the embedded store
    /// returns, brought up to date with `store` at `generation` first. The caller reads the
    /// generation once for all parts of a search (on PostgreSQL every read is a round trip),
    /// before this call.
    pub(crate) fn search_at(
        &self,
        store: &dyn SolutionStore,
        generation: i64,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<(String, f32)>, KbError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.catch_up(store, generation)?;
        match state.index.search(terms, limit) {
            Ok(hits) => Ok(hits
                .into_iter()
                .map(|(id, score)| (id.to_string(), score))
                .collect()),
            Err(_) => {
                drop(state);
                store.keyword(terms, limit)
            }
        }
    }
}

impl CopyState {
    /// `generation` must have been read before this call: a write after it moves the
    /// generation again, and the next search reads what it changed.
    fn catch_up(&mut self, store: &dyn SolutionStore, generation: i64) -> Result<(), KbError> {
        if self.generation == Some(generation) {
            return Ok(());
        }
        let versions = store.keyword_versions()?;
        let current: HashSet<&str> = versions.iter().map(|(id, _)| id.as_str()).collect();
        let gone: Vec<String> = self
            .index
            .keys()
            .filter(|id| !current.contains(id))
            .map(str::to_string)
            .collect();
        for id in &gone {
            self.index.remove(id);
        }
        let stale: Vec<&(String, u64)> = versions
            .iter()
            .filter(|(id, version)| self.index.version(id) != Some(*version))
            .collect();
        for batch in stale.chunks(READ_BATCH) {
            let ids: Vec<&str> = batch.iter().map(|(id, _)| id.as_str()).collect();
            let solutions = store.get_many(&ids)?;
            let by_id: HashMap<&str, &crate::Solution> =
                solutions.iter().map(|s| (s.id.as_str(), s)).collect();
            for (id, version) in batch {
                match by_id.get(id.as_str()) {
                    Some(s) => {
                        let columns = keyword_columns(s);
                        let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
                        self.index.upsert(id, *version, &columns);
                    }
                    // Deleted since the versions were read.
                    None => {
                        self.index.remove(id);
                    }
                }
            }
        }
        self.generation = Some(generation);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::query_terms;
    use crate::store::SqliteStore;
    use crate::{ExportFile, Solution};

    fn golden() -> (Vec<Solution>, Vec<String>) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
        let file: ExportFile =
            serde_json::from_str(&std::fs::read_to_string(dir.join("solutions.json")).unwrap())
                .unwrap();
        let queries =
            crate::eval::parse_golden(&std::fs::read_to_string(dir.join("queries.tsv")).unwrap())
                .unwrap();
        let mut questions: Vec<String> = queries.into_iter().map(|q| q.question).collect();
        // Titles too: words that are in the solutions, several per question.
        questions.extend(file.solutions.iter().map(|s| s.title.clone()));
        (file.solutions, questions)
    }

    /// The copy's ranking is the store's FTS5 ranking: same solutions in the same order (equal
    /// scores in either), same scores.
    fn assert_ranks_as_the_store(copy: &KeywordCopy, store: &SqliteStore, questions: &[String]) {
        for question in questions {
            let terms = query_terms(question);
            let got = copy.search(store, &terms, 40).unwrap();
            let want = store.keyword(&terms, 40).unwrap();
            assert_eq!(got.len(), want.len(), "{question}");
            for ((id, score), (want_id, want_score)) in got.iter().zip(&want) {
                assert!(
                    (score - want_score).abs() <= 1e-4 * want_score.abs().max(1.0),
                    "{question}: {id} {score} against {want_id} {want_score}"
                );
                if (score - want_score).abs() > 1e-6 * want_score.abs().max(1.0) {
                    assert_eq!(id, want_id, "{question}");
                }
            }
        }
    }

    #[test]
    fn ranks_the_golden_set_as_the_store_does_and_follows_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kb.sqlite");
        let store = SqliteStore::open(&path).unwrap();
        let (solutions, questions) = golden();
        store.import(&solutions).unwrap();
        let copy = KeywordCopy::default();
        assert_ranks_as_the_store(&copy, &store, &questions);

        // Another process writes: an edit, a summary, a deletion, a new solution.
        let other = SqliteStore::open(&path).unwrap();
        let mut edited = solutions[3].clone();
        edited.text =
            "Completely different words: hydration mismatch between server and client.".into();
        other.put(&edited, None).unwrap();
        let mut summarised = solutions[5].clone();
        summarised.summary = Some("preflight caching with Access-Control-Max-Age".into());
        other.put(&summarised, None).unwrap();
        assert!(other.delete(&solutions[7].id).unwrap());
        let mut added = solutions[9].clone();
        added.id = "added-later".into();
        added.title = "Service worker serves a stale bundle after deploy".into();
        other.put(&added, None).unwrap();
        let mut asked = questions.clone();
        asked.extend(
            [
                "hydration mismatch",
                "preflight caching max age",
                "service worker stale bundle",
            ]
            .map(String::from),
        );
        assert_ranks_as_the_store(&copy, &store, &asked);
        let hits = copy
            .search(&store, &query_terms("service worker stale bundle"), 5)
            .unwrap();
        assert_eq!(hits[0].0, "added-later");
        assert!(
            copy.search(&store, &query_terms(&solutions[7].title), 60)
                .unwrap()
                .iter()
                .all(|(id, _)| id != &solutions[7].id)
        );
    }

    #[test]
    fn a_word_outside_ascii_is_answered_by_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("kb.sqlite")).unwrap();
        let (solutions, _) = golden();
        store.import(&solutions[..10]).unwrap();
        let mut s = solutions[0].clone();
        s.id = "accents".into();
        s.title = "Erreur de déploiement du café".into();
        store.put(&s, None).unwrap();
        let copy = KeywordCopy::default();
        let terms = query_terms("déploiement café");
        assert_eq!(
            copy.search(&store, &terms, 10).unwrap(),
            store.keyword(&terms, 10).unwrap()
        );
        assert_eq!(copy.search(&store, &terms, 10).unwrap()[0].0, "accents");
    }
}
