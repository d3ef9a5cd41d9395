//! Learns a second-stage ranking of hybrid candidates from lexical features that read the
//! question and the endpoint together, and scores it with leave-one-spec-out on dev halves.
//!
//! ```text
//! ORT_DYLIB_PATH=… cargo run --release -p devlens-openapi --example learn_rerank -- \
//!     MODEL_DIR SPEC1 GOLDEN1.tsv [SPEC2 GOLDEN2.tsv …]
//! ```
//!
//! `EVAL=SPEC:GOLDEN,…` scores the weights learned on all the training sets on other sets
//! (held-out halves) once, at the end.

#![allow(clippy::unwrap_used)] // a measuring tool: a panic is a failed run

use std::collections::{HashMap, HashSet};
use std::path::Path;

use devlens_embed::Embedder;
use devlens_embed::{EngineChoice, EngineOptions, LocalBert};
use devlens_openapi::{
    ApiSpec, Operation,
    eval::{GoldenQuestion, parse_golden},
    search::{OperationIndex, SearchMode, SearchRequest},
    semantic::{endpoint_text, query_text},
};
use devlens_search::{Retrieval, VectorIndex, text::identifier_words};

const CANDIDATES: usize = 20;

struct Question {
    words: Vec<String>,
    raw: String,
    /// Per candidate: features and whether it answers.
    candidates: Vec<(Vec<f32>, bool)>,
    /// Rank of the first answer in the hybrid order (None: not among the candidates).
    hybrid_rank: Option<usize>,
}

const STOP: &[&str] = &[
    "a", "an", "the", "to", "of", "for", "in", "on", "my", "i", "me", "how", "do", "does", "is",
    "it", "and", "or", "with", "from", "that", "this", "what", "which", "can", "be", "by", "at",
    "are", "was", "there", "their", "they", "we", "our", "you", "your", "need", "want", "just",
    "so", "if", "as", "its", "into", "get", "all", "some", "any", "without", "has", "have", "one",
    "up", "out", "about", "who", "when", "where", "why", "not", "no", "don't", "dont",
];

fn stem(w: &str) -> String {
    let w = w.to_lowercase();
    for (suffix, with) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ] {
        if w.len() > suffix.len() + 3 && w.ends_with(suffix) {
            return format!("{}{}", &w[..w.len() - suffix.len()], with);
        }
    }
    w
}

fn words(text: &str) -> Vec<String> {
    identifier_words(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

fn intent(q: &[String]) -> Option<&'static [&'static str]> {
    let has = |list: &[&str]| q.iter().any(|w| list.contains(&w.as_str()));
    if has(&[
        "delete", "remove", "eras", "destroy", "drop", "unstar", "unfollow", "revok", "archiv",
    ]) {
        Some(&["DELETE", "POST"])
    } else if has(&[
        "creat", "add", "new", "start", "make", "register", "publish", "upload", "attach", "send",
        "post", "submit", "trigger", "invit", "cancel", "approv",
    ]) {
        Some(&["POST", "PUT", "PATCH"])
    } else if has(&[
        "updat", "edit", "modify", "chang", "renam", "enabl", "disabl", "set",
    ]) {
        Some(&["PATCH", "PUT", "POST"])
    } else if has(&[
        "list", "fetch", "show", "see", "view", "find", "look", "read", "check", "download",
        "search", "much", "many",
    ]) {
        Some(&["GET"])
    } else {
        None
    }
}

/// The features of one candidate: hybrid score, cosine, BM25 share, method fit, question words
/// the endpoint's short texts hold, endpoint path words the question holds, question words the
/// long description holds, path parameters, path depth.
fn features(q: &[String], op: &Operation, cosine: f32, bm25: f32) -> Vec<f32> {
    let short: HashSet<String> = words(&format!(
        "{} {} {} {}",
        op.path,
        op.operation_id.as_deref().unwrap_or(""),
        op.summary.as_deref().unwrap_or(""),
        op.tags.join(" ")
    ))
    .into_iter()
    .collect();
    let long: HashSet<String> = words(op.description.as_deref().unwrap_or(""))
        .into_iter()
        .collect();
    let qset: HashSet<&String> = q.iter().collect();
    let n = qset.len().max(1) as f32;
    let in_short = qset.iter().filter(|w| short.contains(**w)).count() as f32 / n;
    let in_long = qset.iter().filter(|w| long.contains(**w)).count() as f32 / n;
    let path_words: Vec<String> = op
        .path
        .split('/')
        .filter(|s| {
            !s.is_empty() && !s.starts_with('{') && !s.chars().next().unwrap().is_ascii_digit()
        })
        .filter(|s| !(s.len() <= 3 && s.starts_with('v')))
        .flat_map(words)
        .collect();
    let path_cover = if path_words.is_empty() {
        0.0
    } else {
        path_words.iter().filter(|w| qset.contains(w)).count() as f32 / path_words.len() as f32
    };
    let method = match intent(q) {
        Some(ms) if ms[0] == op.method => 1.0,
        Some(ms) if ms.contains(&op.method.as_str()) => 0.5,
        Some(_) => -1.0,
        None => 0.0,
    };
    vec![
        cosine + 0.1 * bm25,
        cosine,
        bm25,
        method,
        in_short,
        path_cover,
        in_long,
        op.path.matches('{').count() as f32,
        op.path.split('/').filter(|s| !s.is_empty()).count() as f32,
        op.deprecated as u8 as f32,
    ]
}

const NAMES: &[&str] = &[
    "hybrid",
    "cosine",
    "bm25",
    "method",
    "q_in_short",
    "path_cover",
    "q_in_desc",
    "params",
    "depth",
    "deprecated",
];

fn answers(op: &Operation, golden: &GoldenQuestion) -> bool {
    golden.answered_by(op.operation_id.as_deref(), &op.method, &op.path)
}

async fn load_set(embedder: &LocalBert, spec: &str, golden: &str) -> (String, Vec<Question>) {
    let spec = ApiSpec::from_bytes(&std::fs::read(spec).unwrap(), spec).unwrap();
    let ops = spec.operations();
    let keyword = OperationIndex::build(&spec).unwrap();
    let texts: Vec<String> = ops.iter().map(endpoint_text).collect();
    let vectors = embedder.embed_documents(&texts, &|_, _| {}).await.unwrap();
    let mut index = VectorIndex::new(embedder.dims());
    for v in &vectors {
        index.push(v);
    }
    let by_route: HashMap<(String, String), usize> = ops
        .iter()
        .enumerate()
        .map(|(i, o)| ((o.method.clone(), o.path.clone()), i))
        .collect();
    let mut out = Vec::new();
    for g in parse_golden(&std::fs::read_to_string(golden).unwrap()).unwrap() {
        let question = g.question.as_str();
        let request = SearchRequest::new(
            Some(question.to_string()),
            None,
            None,
            Some(50),
            Some(SearchMode::Keyword),
        )
        .unwrap();
        let kw = keyword
            .search(&spec, &request, &Retrieval::keyword())
            .unwrap()
            .results;
        let top = kw.first().map_or(1.0, |h| h.score).max(1e-6);
        let bm25: HashMap<usize, f32> = kw
            .iter()
            .map(|h| (by_route[&(h.method.clone(), h.path.clone())], h.score / top))
            .collect();
        let qv = embedder.embed_query(&query_text(question)).await.unwrap();
        let mut scored: Vec<(f32, f32, usize)> = index
            .search(&qv, 100, |_| true)
            .into_iter()
            .map(|h| {
                let i = h.doc as usize;
                let b = bm25.get(&i).copied().unwrap_or(0.0);
                (h.score + 0.1 * b, h.score, i)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let hybrid_rank = scored.iter().position(|&(_, _, i)| answers(&ops[i], &g));
        let q = words(question);
        let candidates = scored
            .iter()
            .take(CANDIDATES)
            .map(|&(_, cos, i)| {
                let b = bm25.get(&i).copied().unwrap_or(0.0);
                (features(&q, &ops[i], cos, b), answers(&ops[i], &g))
            })
            .collect();
        out.push(Question {
            words: q,
            raw: question.to_string(),
            candidates,
            hybrid_rank,
        });
    }
    (golden.rsplit('/').next().unwrap().to_string(), out)
}

/// Rank of the first answer under `w` (None when no candidate answers).
fn rank(q: &Question, w: &[f32]) -> Option<usize> {
    let score = |f: &[f32]| f.iter().zip(w).map(|(a, b)| a * b).sum::<f32>();
    let answer = q.candidates.iter().position(|c| c.1)?;
    let s = score(&q.candidates[answer].0);
    // Ties count against the answer: it ranks after every candidate scoring at least as high.
    Some(
        q.candidates
            .iter()
            .enumerate()
            .filter(|(i, c)| *i != answer && score(&c.0) >= s)
            .count(),
    )
}

fn metrics(ranks: &[Option<usize>]) -> (f64, f64, f64) {
    let n = ranks.len().max(1) as f64;
    let at = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64 / n;
    let mrr = ranks
        .iter()
        .map(|r| r.map_or(0.0, |r| 1.0 / (r as f64 + 1.0)))
        .sum::<f64>()
        / n;
    (at(1), at(3), mrr)
}

fn objective(sets: &[&[Question]], w: &[f32]) -> f64 {
    // Macro average over specs of MRR + top-3, so no spec dominates.
    sets.iter()
        .map(|qs| {
            let ranks: Vec<_> = qs.iter().map(|q| rank(q, w)).collect();
            let (_, t3, mrr) = metrics(&ranks);
            mrr + 0.5 * t3
        })
        .sum::<f64>()
        / sets.len() as f64
}

/// Coordinate ascent (as RankLib's): the hybrid weight stays 1, every other weight in turn
/// takes the grid value with the best objective, until a round changes nothing.
fn learn(sets: &[&[Question]]) -> Vec<f32> {
    let mut w = vec![0.0f32; NAMES.len()];
    w[0] = 1.0;
    let grid: Vec<f32> = (-20..=20).map(|i| i as f32 * 0.01).collect();
    for _round in 0..5 {
        let before = w.clone();
        for j in 1..w.len() {
            w[j] = best_weight(sets, &w, j, &grid);
        }
        if w == before {
            break;
        }
    }
    w
}

/// The grid value of weight `j` with the best objective; ties go to the current value, then to
/// the smaller weight.
fn best_weight(sets: &[&[Question]], w: &[f32], j: usize, grid: &[f32]) -> f32 {
    let mut w = w.to_vec();
    let mut top = (objective(sets, &w), w[j]);
    for &g in grid {
        w[j] = g;
        let o = objective(sets, &w);
        if o > top.0 + 1e-9 || ((o - top.0).abs() <= 1e-9 && g.abs() < top.1.abs()) {
            top = (o, g);
        }
    }
    top.1
}

fn show(label: &str, qs: &[Question], w: &[f32]) -> (f64, f64, f64) {
    let base: Vec<_> = qs.iter().map(|q| q.hybrid_rank).collect();
    let mut learned: Vec<_> = qs.iter().map(|q| rank(q, w)).collect();
    // Answers outside the candidates keep their hybrid rank (beyond CANDIDATES).
    for (r, q) in learned.iter_mut().zip(qs) {
        if r.is_none() {
            *r = q.hybrid_rank;
        }
    }
    let (b1, b3, bm) = metrics(&base);
    let (l1, l3, lm) = metrics(&learned);
    let recall = qs
        .iter()
        .filter(|q| q.candidates.iter().any(|c| c.1))
        .count() as f64
        / qs.len().max(1) as f64;
    println!(
        "{label:<28} n={:<3} in top {CANDIDATES} {recall:.2}  hybrid top1 {b1:.2} top3 {b3:.2} mrr {bm:.2}  ->  reranked top1 {l1:.2} top3 {l3:.2} mrr {lm:.2}",
        qs.len()
    );
    if std::env::var("SHOW").is_ok() {
        for (q, (b, l)) in qs.iter().zip(base.iter().zip(&learned)) {
            if b != l {
                println!(
                    "    {:?} -> {:?}  {} {:?}",
                    b.map(|r| r + 1),
                    l.map(|r| r + 1),
                    q.raw,
                    q.words
                );
            }
        }
    }
    (l1, l3, lm)
}

fn print_weights(w: &[f32]) {
    let parts: Vec<String> = NAMES
        .iter()
        .zip(w)
        .filter(|(_, w)| **w != 0.0)
        .map(|(n, w)| format!("{n}={w:+.2}"))
        .collect();
    println!("  weights: {}", parts.join(" "));
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (model, pairs) = args.split_first().unwrap();
    let options = EngineOptions {
        choice: EngineChoice::Onnx,
        onnxruntime: std::env::var("ORT_DYLIB_PATH").ok().map(Into::into),
        onnx_model: None,
    };
    let embedder =
        LocalBert::load_with(Path::new(model), "all-MiniLM-L6-v2", 32, &options).unwrap();
    let mut sets = Vec::new();
    for pair in pairs.chunks(2) {
        sets.push(load_set(&embedder, &pair[0], &pair[1]).await);
    }
    println!("leave one spec out (learn on the others' dev halves, score this one's):");
    for (held, (name, qs)) in sets.iter().enumerate() {
        let train: Vec<&[Question]> = sets
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != held)
            .map(|(_, (_, q))| q.as_slice())
            .collect();
        let w = learn(&train);
        show(name, qs, &w);
        print_weights(&w);
    }
    let all: Vec<&[Question]> = sets.iter().map(|(_, q)| q.as_slice()).collect();
    let w = learn(&all);
    println!("learned on every set given:");
    print_weights(&w);
    for (name, qs) in &sets {
        show(name, qs, &w);
    }
    if let Ok(eval) = std::env::var("EVAL") {
        println!("held-out sets, scored once with those weights:");
        for pair in eval.split(',') {
            let (spec, golden) = pair.split_once(':').unwrap();
            let (name, qs) = load_set(&embedder, spec, golden).await;
            show(&name, &qs, &w);
        }
    }
}
