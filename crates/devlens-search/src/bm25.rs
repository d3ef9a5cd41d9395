//! Keyword ranking in memory that gives what SQLite FTS5's `bm25()` gives over a table with
//! `tokenize = 'porter unicode61'`: the same tokens (ASCII exactly; other scripts closely), the
//! same Porter stemmer, the same formula (k1 1.2, b 0.75, per-column weights scaling how often a
//! term occurs, a document's length counted over every column).
//!
//! Why it exists: FTS5 scores every matching row through its auxiliary-function interface, which
//! costs a few microseconds a row; a question with a common word matches most of a large
//! knowledge base, so one query spent 10–20 ms at 20,000 solutions. Term-at-a-time scoring over
//! postings in memory does the same arithmetic in well under a millisecond. The store's FTS5 (or
//! tsvector) index stays the durable one; this is a copy kept current by the corpus.

use std::collections::HashMap;

/// A document's place in the index.
type Slot = u32;

#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: Slot,
    /// How often the term occurs, each occurrence counting its column's weight.
    weighted: f32,
}

#[derive(Debug)]
struct Doc {
    key: Box<str>,
    /// What the owner stored it as, to tell when it changed.
    version: u64,
}

/// Why a query cannot be answered here exactly: the caller asks the store's own index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswerable {
    /// A query word is not plain ASCII letters and digits (FTS5 folds other scripts by tables
    /// this copy only approximates), or does not make exactly one token.
    Word(String),
}

/// An in-memory BM25 index of documents made of weighted columns, keyed by the owner's ids.
#[derive(Debug)]
pub struct Bm25Index {
    weights: Vec<f64>,
    terms: HashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    docs: Vec<Doc>,
    /// Per slot, the document's tokens over all columns (FTS5's `xColumnSize(-1)`), or
    /// [`REMOVED`]: what scoring reads for every posting, kept apart from `docs` so a query's
    /// random reads stay in a few hundred KB.
    lengths: Vec<u32>,
    slot_of: HashMap<Box<str>, Slot>,
    live_tokens: u64,
    dead: usize,
    /// A score per slot, all zero between queries: reused, as allocating and zeroing one per
    /// query cost as much as scoring a common word at 100,000 documents.
    scores: std::sync::Mutex<Vec<f64>>,
}

/// The length of a removed document in [`Bm25Index::lengths`].
const REMOVED: u32 = u32::MAX;

const K1: f64 = 1.2;
const B: f64 = 0.75;

impl Bm25Index {
    /// An empty index whose documents have `weights.len()` columns, weighted so.
    pub fn new(weights: &[f64]) -> Self {
        Self {
            weights: weights.to_vec(),
            terms: HashMap::new(),
            postings: Vec::new(),
            docs: Vec::new(),
            lengths: Vec::new(),
            slot_of: HashMap::new(),
            live_tokens: 0,
            dead: 0,
            scores: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Documents in the index.
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    /// The version `key` was indexed at, if it is indexed.
    pub fn version(&self, key: &str) -> Option<u64> {
        self.slot_of
            .get(key)
            .map(|&slot| self.docs[slot as usize].version)
    }

    /// The keys of every indexed document.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.slot_of.keys().map(|k| &**k)
    }

    /// Indexes (or re-indexes) the document `key` at `version`, one text per column (missing
    /// columns are empty).
    pub fn upsert(&mut self, key: &str, version: u64, columns: &[&str]) {
        self.remove(key);
        let slot = self.docs.len() as Slot;
        let mut weighted: HashMap<u32, f32> = HashMap::new();
        let mut tokens = 0u32;
        for (column, text) in columns.iter().enumerate() {
            let weight = self.weights.get(column).copied().unwrap_or(1.0) as f32;
            for_each_token(text, |token| {
                tokens = tokens.saturating_add(1).min(REMOVED - 1);
                let next = self.terms.len() as u32;
                let term = match self.terms.get(token) {
                    Some(&term) => term,
                    None => {
                        self.terms.insert(token.into(), next);
                        self.postings.push(Vec::new());
                        next
                    }
                };
                *weighted.entry(term).or_insert(0.0) += weight;
            });
        }
        for (term, weighted) in weighted {
            self.postings[term as usize].push(Posting {
                doc: slot,
                weighted,
            });
        }
        self.docs.push(Doc {
            key: key.into(),
            version,
        });
        self.lengths.push(tokens);
        self.slot_of.insert(key.into(), slot);
        self.live_tokens += u64::from(tokens);
    }

    /// Takes `key` out of the index; whether it was in.
    pub fn remove(&mut self, key: &str) -> bool {
        let Some(slot) = self.slot_of.remove(key) else {
            return false;
        };
        let tokens = std::mem::replace(&mut self.lengths[slot as usize], REMOVED);
        self.live_tokens -= u64::from(tokens);
        self.dead += 1;
        // Postings of removed documents are skipped while scoring; drop them once they are
        // as many as the live ones, so memory and query time follow the live documents.
        if self.dead > 1024 && self.dead > self.slot_of.len() {
            self.compact();
        }
        true
    }

    fn compact(&mut self) {
        let mut new_slot = vec![Slot::MAX; self.docs.len()];
        let mut docs = Vec::with_capacity(self.slot_of.len());
        let mut lengths = Vec::with_capacity(self.slot_of.len());
        let old_docs = std::mem::take(&mut self.docs);
        for (old, (doc, tokens)) in old_docs.into_iter().zip(&self.lengths).enumerate() {
            if *tokens != REMOVED {
                new_slot[old] = docs.len() as Slot;
                docs.push(doc);
                lengths.push(*tokens);
            }
        }
        for postings in &mut self.postings {
            postings.retain_mut(|p| {
                p.doc = new_slot[p.doc as usize];
                p.doc != Slot::MAX
            });
        }
        for slot in self.slot_of.values_mut() {
            *slot = new_slot[*slot as usize];
        }
        self.lengths = lengths;
        self.docs = docs;
        self.dead = 0;
    }

    /// The `limit` best documents for any of `words` (each a phrase of one token, as FTS5's
    /// `"a" OR "b"`), best first, with their BM25 scores (higher is better; FTS5's `bm25()`
    /// negated); equal scores by key.
    pub fn search(&self, words: &[String], limit: usize) -> Result<Vec<(&str, f32)>, Unanswerable> {
        let mut phrases: Vec<Option<u32>> = Vec::with_capacity(words.len());
        for word in words {
            if !word.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Err(Unanswerable::Word(word.clone()));
            }
            let mut token = None;
            let mut count = 0;
            for_each_token(word, |t| {
                count += 1;
                token = Some(t.to_string());
            });
            match token {
                Some(token) if count == 1 => phrases.push(self.terms.get(token.as_str()).copied()),
                _ => return Err(Unanswerable::Word(word.clone())),
            }
        }
        let rows = self.slot_of.len();
        if rows == 0 || limit == 0 {
            return Ok(Vec::new());
        }
        let avgdl = self.live_tokens as f64 / rows as f64;
        // The shared scores, or fresh ones while another query holds them.
        let mut shared = self.scores.try_lock().ok();
        let mut own = Vec::new();
        let score = match shared.as_deref_mut() {
            Some(scores) => scores,
            None => &mut own,
        };
        score.resize(self.docs.len(), 0.0);
        let mut matched: Vec<Slot> = Vec::new();
        for term in phrases.into_iter().flatten() {
            let postings = &self.postings[term as usize];
            // Every posting is live until something is removed: no pass to count them then.
            let hits = if self.dead == 0 {
                postings.len()
            } else {
                postings
                    .iter()
                    .filter(|p| self.lengths[p.doc as usize] != REMOVED)
                    .count()
            };
            if hits == 0 {
                continue;
            }
            let idf = ((rows as f64 - hits as f64 + 0.5) / (hits as f64 + 0.5)).ln();
            let idf = if idf <= 0.0 { 1e-6 } else { idf };
            for p in postings {
                let slot = p.doc as usize;
                let tokens = self.lengths[slot];
                if tokens == REMOVED {
                    continue;
                }
                let freq = f64::from(p.weighted);
                if score[slot] == 0.0 {
                    matched.push(p.doc);
                }
                score[slot] += idf
                    * (freq * (K1 + 1.0) / (freq + K1 * (1.0 - B + B * f64::from(tokens) / avgdl)));
            }
        }
        // Equal scores in the order of their keys: the same answer whatever order the
        // documents were indexed in (two stores list them differently).
        let best = {
            let score = &*score;
            let by_score = |a: &Slot, b: &Slot| {
                score[*b as usize]
                    .total_cmp(&score[*a as usize])
                    .then_with(|| self.docs[*a as usize].key.cmp(&self.docs[*b as usize].key))
            };
            if matched.len() > limit {
                matched.select_nth_unstable_by(limit - 1, by_score);
            }
            let mut best = matched[..matched.len().min(limit)].to_vec();
            best.sort_unstable_by(by_score);
            best.into_iter()
                .map(|slot| (&*self.docs[slot as usize].key, score[slot as usize] as f32))
                .collect()
        };
        // Every score a query set (only positive ones: an idf is at least 1e-6) back to zero.
        for slot in matched {
            score[slot as usize] = 0.0;
        }
        Ok(best)
    }
}

/// Calls `f` with each token of `text` as FTS5's `porter unicode61` makes it: runs of letters and
/// digits (combining marks continue a run), lower-cased, Latin diacritics removed, then stemmed.
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut token = String::new();
    let mut stemmed = Vec::with_capacity(64);
    let mut flush = |token: &mut String| {
        if !token.is_empty() {
            stemmed.clear();
            stemmed.extend_from_slice(token.as_bytes());
            porter_stem(&mut stemmed);
            // Only ASCII bytes are removed or rewritten, so the stem stays UTF-8.
            f(std::str::from_utf8(&stemmed).unwrap_or(token));
            token.clear();
        }
    };
    for c in text.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                token.push(c.to_ascii_lowercase());
            } else {
                flush(&mut token);
            }
        } else if c.is_alphanumeric() || is_private_use(c) {
            fold_into(c, &mut token);
        } else if is_diacritic(c) && !token.is_empty() {
            // Removed, as FTS5 does by default; the token goes on.
        } else {
            flush(&mut token);
        }
    }
    flush(&mut token);
}

fn is_private_use(c: char) -> bool {
    matches!(c as u32, 0xE000..=0xF8FF)
}

fn is_diacritic(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F)
}

/// Lower-cases `c` and drops a Latin letter's diacritic (é → e), as unicode61 folds.
fn fold_into(c: char, out: &mut String) {
    use unicode_normalization::char::decompose_canonical;
    let lower = c.to_lowercase().next().unwrap_or(c);
    if matches!(lower as u32, 0x00C0..=0x024F | 0x1E00..=0x1EFF) {
        let mut base = None;
        let mut marks_only = true;
        decompose_canonical(lower, |d| {
            if base.is_none() {
                base = Some(d);
            } else if !is_diacritic(d) {
                marks_only = false;
            }
        });
        if let Some(base) = base.filter(|_| marks_only) {
            out.push(base);
            return;
        }
    }
    out.push(lower);
}

/// FTS5's Porter stemmer (sqlite3.c, `fts5PorterCb`), byte for byte: tokens of 3 to 64 bytes.
pub fn porter_stem(word: &mut Vec<u8>) {
    if word.len() < 3 || word.len() > 64 {
        return;
    }
    let w = word;
    // Step 1a.
    if ends(w, b"s") {
        let n = w.len();
        if w[n - 2] == b'e' {
            if (n > 4 && w[n - 4] == b's' && w[n - 3] == b's') || (n > 3 && w[n - 3] == b'i') {
                w.truncate(n - 2);
            } else {
                w.truncate(n - 1);
            }
        } else if w[n - 2] != b's' {
            w.truncate(n - 1);
        }
    }
    // Step 1b.
    if apply(w, STEP_1B) && !apply(w, STEP_1B2) {
        let n = w.len();
        let c = w[n - 1];
        if !is_vowel(c, false) && c != b'l' && c != b's' && c != b'z' && n >= 2 && c == w[n - 2] {
            w.truncate(n - 1);
        } else if m_eq1(w) && o_star(w) {
            w.push(b'e');
        }
    }
    // Step 1c.
    let n = w.len();
    if n > 0 && w[n - 1] == b'y' && has_vowel(&w[..n - 1]) {
        w[n - 1] = b'i';
    }
    // Steps 2 to 4.
    apply(w, STEP_2);
    apply(w, STEP_3);
    apply(w, STEP_4);
    // Step 5a.
    let n = w.len();
    if n > 0 && w[n - 1] == b'e' {
        let stem = &w[..n - 1];
        if m_gt1(stem) || (m_eq1(stem) && !o_star(stem)) {
            w.truncate(n - 1);
        }
    }
    // Step 5b.
    let n = w.len();
    if n > 1 && w[n - 1] == b'l' && w[n - 2] == b'l' && m_gt1(&w[..n - 1]) {
        w.truncate(n - 1);
    }
}

#[derive(Clone, Copy)]
enum Cond {
    None,
    MGt0,
    MGt1,
    MGt1SOrT,
    Vowel,
}

/// One rule of a step: a suffix, the condition its stem must meet, what replaces it, and
/// whether applying it counts as the step's "did something" (steps 1b and 1b2 report it).
type Rule = (&'static [u8], Cond, &'static [u8], bool);

const STEP_1B: &[Rule] = &[
    (b"eed", Cond::MGt0, b"ee", false),
    (b"ed", Cond::Vowel, b"", true),
    (b"ing", Cond::Vowel, b"", true),
];
const STEP_1B2: &[Rule] = &[
    (b"at", Cond::None, b"ate", true),
    (b"bl", Cond::None, b"ble", true),
    (b"iz", Cond::None, b"ize", true),
];
const STEP_2: &[Rule] = &[
    (b"ational", Cond::MGt0, b"ate", false),
    (b"tional", Cond::MGt0, b"tion", false),
    (b"enci", Cond::MGt0, b"ence", false),
    (b"anci", Cond::MGt0, b"ance", false),
    (b"izer", Cond::MGt0, b"ize", false),
    (b"logi", Cond::MGt0, b"log", false),
    (b"bli", Cond::MGt0, b"ble", false),
    (b"alli", Cond::MGt0, b"al", false),
    (b"entli", Cond::MGt0, b"ent", false),
    (b"eli", Cond::MGt0, b"e", false),
    (b"ousli", Cond::MGt0, b"ous", false),
    (b"ization", Cond::MGt0, b"ize", false),
    (b"ation", Cond::MGt0, b"ate", false),
    (b"ator", Cond::MGt0, b"ate", false),
    (b"alism", Cond::MGt0, b"al", false),
    (b"iveness", Cond::MGt0, b"ive", false),
    (b"fulness", Cond::MGt0, b"ful", false),
    (b"ousness", Cond::MGt0, b"ous", false),
    (b"aliti", Cond::MGt0, b"al", false),
    (b"iviti", Cond::MGt0, b"ive", false),
    (b"biliti", Cond::MGt0, b"ble", false),
];
const STEP_3: &[Rule] = &[
    (b"ical", Cond::MGt0, b"ic", false),
    (b"ness", Cond::MGt0, b"", false),
    (b"icate", Cond::MGt0, b"ic", false),
    (b"iciti", Cond::MGt0, b"ic", false),
    (b"ful", Cond::MGt0, b"", false),
    (b"ative", Cond::MGt0, b"", false),
    (b"alize", Cond::MGt0, b"al", false),
];
const STEP_4: &[Rule] = &[
    (b"al", Cond::MGt1, b"", false),
    (b"ance", Cond::MGt1, b"", false),
    (b"ence", Cond::MGt1, b"", false),
    (b"er", Cond::MGt1, b"", false),
    (b"ic", Cond::MGt1, b"", false),
    (b"able", Cond::MGt1, b"", false),
    (b"ible", Cond::MGt1, b"", false),
    (b"ant", Cond::MGt1, b"", false),
    (b"ement", Cond::MGt1, b"", false),
    (b"ment", Cond::MGt1, b"", false),
    (b"ent", Cond::MGt1, b"", false),
    (b"ion", Cond::MGt1SOrT, b"", false),
    (b"ou", Cond::MGt1, b"", false),
    (b"ism", Cond::MGt1, b"", false),
    (b"ate", Cond::MGt1, b"", false),
    (b"iti", Cond::MGt1, b"", false),
    (b"ous", Cond::MGt1, b"", false),
    (b"ive", Cond::MGt1, b"", false),
    (b"ize", Cond::MGt1, b"", false),
];

fn ends(w: &[u8], suffix: &[u8]) -> bool {
    w.len() > suffix.len() && w.ends_with(suffix)
}

/// The first rule whose suffix the word ends in (with a stem before it) decides, as the
/// generated C does: when its condition fails, no later rule is tried.
fn apply(w: &mut Vec<u8>, rules: &[Rule]) -> bool {
    let Some(&(suffix, cond, output, reports)) = rules.iter().find(|r| ends(w, r.0)) else {
        return false;
    };
    let stem = w.len() - suffix.len();
    let met = match cond {
        Cond::None => true,
        Cond::MGt0 => m_gt0(&w[..stem]),
        Cond::MGt1 => m_gt1(&w[..stem]),
        Cond::MGt1SOrT => matches!(w[stem - 1], b's' | b't') && m_gt1(&w[..stem]),
        Cond::Vowel => has_vowel(&w[..stem]),
    };
    if !met {
        return false;
    }
    w.truncate(stem);
    w.extend_from_slice(output);
    reports
}

fn is_vowel(c: u8, y_is_vowel: bool) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u') || (y_is_vowel && c == b'y')
}

/// Past the first vowel-consonant sequence of `stem`: where it ends, or 0 when there is none.
fn gobble_vc(stem: &[u8], prev_consonant: bool) -> usize {
    let mut consonant = prev_consonant;
    let mut i = 0;
    while i < stem.len() {
        consonant = !is_vowel(stem[i], consonant);
        if !consonant {
            break;
        }
        i += 1;
    }
    i += 1;
    while i < stem.len() {
        consonant = !is_vowel(stem[i], consonant);
        if consonant {
            return i + 1;
        }
        i += 1;
    }
    0
}

fn m_gt0(stem: &[u8]) -> bool {
    gobble_vc(stem, false) != 0
}

fn m_gt1(stem: &[u8]) -> bool {
    let n = gobble_vc(stem, false);
    n != 0 && gobble_vc(&stem[n..], true) != 0
}

fn m_eq1(stem: &[u8]) -> bool {
    let n = gobble_vc(stem, false);
    n != 0 && gobble_vc(&stem[n..], true) == 0
}

/// `*o`: the stem ends consonant-vowel-consonant, the last not w, x or y.
fn o_star(stem: &[u8]) -> bool {
    let Some(&last) = stem.last() else {
        return false;
    };
    if matches!(last, b'w' | b'x' | b'y') {
        return false;
    }
    let mut mask = 0u32;
    let mut consonant = false;
    for &c in stem {
        consonant = !is_vowel(c, consonant);
        mask = (mask << 1) + u32::from(consonant);
    }
    mask & 0x7 == 0x5
}

fn has_vowel(stem: &[u8]) -> bool {
    stem.iter().enumerate().any(|(i, &c)| is_vowel(c, i > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stem(word: &str) -> String {
        let mut w = word.as_bytes().to_vec();
        porter_stem(&mut w);
        String::from_utf8(w).unwrap()
    }

    fn tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_token(text, |t| out.push(t.to_string()));
        out
    }

    #[test]
    fn stems_as_the_porter_algorithm() {
        for (word, expected) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("hopping", "hop"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("generalization", "gener"),
            ("caching", "cach"),
            ("caches", "cach"),
            ("requests", "request"),
            ("as", "as"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
    }

    #[test]
    fn tokens_fold_case_and_latin_diacritics() {
        assert_eq!(
            tokens("Café CORS_error, useEffect"),
            ["cafe", "cor", "error", "useeffect"]
        );
        assert_eq!(tokens("naïve"), ["naiv"]);
    }

    #[test]
    fn scores_and_updates() {
        let mut index = Bm25Index::new(&[4.0, 1.0]);
        index.upsert("a", 1, &["CORS error", "the preflight request fails"]);
        index.upsert(
            "b",
            1,
            &["Hydration mismatch", "server and client render differ"],
        );
        index.upsert(
            "c",
            1,
            &["Preflight caching", "Max-Age caches the preflight"],
        );
        let hits = index.search(&["preflight".into()], 10).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), ["c", "a"]);
        index.remove("c");
        let hits = index.search(&["preflight".into()], 10).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), ["a"]);
        index.upsert("a", 2, &["Unrelated", "nothing here"]);
        assert!(index.search(&["preflight".into()], 10).unwrap().is_empty());
        assert_eq!(index.version("a"), Some(2));
        assert_eq!(
            index.search(&["café".into()], 10),
            Err(Unanswerable::Word("café".into()))
        );
    }

    #[test]
    fn compaction_keeps_the_live_documents() {
        let mut index = Bm25Index::new(&[1.0]);
        for i in 0..3000 {
            index.upsert(&format!("d{i}"), 1, &[&format!("word{} common", i % 7)]);
        }
        for i in 0..2500 {
            index.remove(&format!("d{i}"));
        }
        assert_eq!(index.len(), 500);
        let hits = index.search(&["common".into()], 1000).unwrap();
        assert_eq!(hits.len(), 500);
        assert!(
            hits.iter()
                .all(|(k, _)| k[1..].parse::<usize>().unwrap() >= 2500)
        );
    }
    /// Documents from the project's own docs (sections of its Markdown), as FTS5 and this index
    /// see them.
    fn markdown_sections() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = vec![root.join("README.md")];
        for entry in std::fs::read_dir(root.join("docs")).unwrap() {
            files.push(entry.unwrap().path());
        }
        files.sort();
        let mut sections = Vec::new();
        for file in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "md"))
        {
            let text = std::fs::read_to_string(file).unwrap();
            let mut title = String::new();
            let mut body = String::new();
            for line in text.lines() {
                if let Some(heading) = line.strip_prefix('#') {
                    if !body.is_empty() {
                        sections.push((std::mem::take(&mut title), std::mem::take(&mut body)));
                    }
                    title = heading.trim_start_matches('#').trim().to_string();
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
            sections.push((title, body));
        }
        sections
    }

    #[test]
    fn stems_every_word_of_the_docs_as_fts5_does() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
        )
        .unwrap();
        let mut words: Vec<String> = markdown_sections()
            .iter()
            .flat_map(|(t, b)| {
                format!("{t} {b}")
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .map(str::to_lowercase)
                    .collect::<Vec<_>>()
            })
            .filter(|w| !w.is_empty())
            .collect();
        words.sort();
        words.dedup();
        assert!(words.len() > 3000, "{} words", words.len());
        let tx = conn.unchecked_transaction().unwrap();
        for (i, word) in words.iter().enumerate() {
            tx.execute(
                "INSERT INTO t (rowid, x) VALUES (?1, ?2)",
                rusqlite::params![i as i64, word],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        let mut stmt = conn.prepare("SELECT doc, term FROM v").unwrap();
        let fts5: HashMap<i64, String> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for (i, word) in words.iter().enumerate() {
            assert_eq!(tokens(word), [fts5[&(i as i64)].clone()], "{word}");
        }
    }

    #[test]
    fn ranks_as_fts5_bm25_does() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(title, tags, body, tokenize = 'porter unicode61');",
        )
        .unwrap();
        let sections = markdown_sections();
        let mut index = Bm25Index::new(&[4.0, 2.0, 1.0]);
        let tx = conn.unchecked_transaction().unwrap();
        for (i, (title, body)) in sections.iter().enumerate() {
            let tags = if i % 3 == 0 { "browser kb" } else { "" };
            tx.execute(
                "INSERT INTO t (rowid, title, tags, body) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![i as i64, title, tags, body],
            )
            .unwrap();
            index.upsert(&i.to_string(), 0, &[title, tags, body]);
        }
        tx.commit().unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT rowid, -bm25(t, 4.0, 2.0, 1.0) AS s FROM t WHERE t MATCH ?1 \
                 ORDER BY s DESC, rowid LIMIT 40",
            )
            .unwrap();
        let mut asked = 0;
        // Each heading, and the first words of each section, as a question.
        let questions = sections.iter().flat_map(|(title, body)| {
            let opening: String = body
                .split_whitespace()
                .take(8)
                .collect::<Vec<_>>()
                .join(" ");
            [title.clone(), opening]
        });
        for question in questions {
            let words: Vec<String> = question
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            if words.is_empty() {
                continue;
            }
            let query = words
                .iter()
                .map(|w| format!("\"{w}\""))
                .collect::<Vec<_>>()
                .join(" OR ");
            let expected: Vec<(String, f64)> = stmt
                .query_map([&query], |r| {
                    Ok((r.get::<_, i64>(0)?.to_string(), r.get(1)?))
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let got = index.search(&words, 40).unwrap();
            assert_eq!(got.len(), expected.len(), "{query}");
            for ((key, score), (want_key, want_score)) in got.iter().zip(&expected) {
                assert!(
                    (f64::from(*score) - want_score).abs() <= 1e-5 * want_score.abs().max(1.0),
                    "{query}: {key} {score} against {want_key} {want_score}"
                );
                // Equal scores may come in either order; different ones in the same.
                if (f64::from(*score) - want_score).abs() > 1e-9 {
                    assert_eq!(key, want_key, "{query}");
                }
            }
            asked += 1;
        }
        assert!(asked > 150, "{asked} queries");
    }
}
