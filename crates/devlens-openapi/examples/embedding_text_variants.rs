//! Measures which endpoint/query strings rank best with the local model, on a golden set.
//!
//! ```text
//! cargo run --release -p devlens-openapi --example embedding_text_variants -- \
//!     SPEC GOLDEN.tsv MODEL_DIR
//! ```
//!
//! Prints top-1/3/5 and MRR for each endpoint-text variant × query variant, semantic alone and
//! fused with BM25. What won is what `semantic::endpoint_text` / `query_text` ship.

#![allow(clippy::unwrap_used)] // test code: a panic is a failed assertion

use std::collections::HashMap;

use devlens_embed::{Embedder, LocalBert};
use devlens_openapi::{
    ApiSpec, Operation,
    eval::{GoldenQuestion, parse_golden},
    search::{OperationIndex, SearchMode, SearchRequest, first_sentence},
};
use devlens_search::{Retrieval, VectorIndex, reciprocal_rank_fusion, text::identifier_words};

type TextFn = fn(&Operation) -> String;

fn seed(op: &Operation) -> String {
    let mut s = format!("{} {}.", op.method, op.path);
    if !op.tags.is_empty() {
        s.push_str(&format!(" Tags: {}.", op.tags.join(", ")));
    }
    if let Some(x) = &op.summary {
        s.push_str(&format!(" Summary: {x}."));
    }
    if let Some(x) = &op.operation_id {
        s.push_str(&format!(" OperationId: {x}."));
    }
    s
}

fn seed_desc(op: &Operation) -> String {
    let mut s = seed(op);
    if let Some(d) = op
        .description
        .as_deref()
        .map(first_sentence)
        .filter(|d| !d.is_empty())
    {
        s.push_str(&format!(" {d}."));
    }
    s
}

fn seed_desc_words(op: &Operation) -> String {
    let mut s = format!("{} {}.", op.method, op.path);
    if !op.tags.is_empty() {
        s.push_str(&format!(" Tags: {}.", op.tags.join(", ")));
    }
    if let Some(x) = &op.summary {
        s.push_str(&format!(" Summary: {}.", x.trim_end_matches('.')));
    }
    if let Some(x) = &op.operation_id {
        s.push_str(&format!(" OperationId: {}.", identifier_words(x)));
    }
    if let Some(d) = op
        .description
        .as_deref()
        .map(first_sentence)
        .filter(|d| !d.is_empty())
    {
        s.push_str(&format!(" Description: {d}."));
    }
    s
}

fn summary_first(op: &Operation) -> String {
    let mut s = String::new();
    if let Some(x) = &op.summary {
        s.push_str(&format!("Summary: {}. ", x.trim_end_matches('.')));
    }
    s.push_str(&format!("{} {}.", op.method, op.path));
    if !op.tags.is_empty() {
        s.push_str(&format!(" Tags: {}.", op.tags.join(", ")));
    }
    if let Some(x) = &op.operation_id {
        s.push_str(&format!(" OperationId: {x}."));
    }
    if let Some(d) = op
        .description
        .as_deref()
        .map(first_sentence)
        .filter(|d| !d.is_empty())
    {
        s.push_str(&format!(" {d}."));
    }
    s
}

fn prose(op: &Operation) -> String {
    let mut parts = Vec::new();
    if let Some(x) = &op.summary {
        parts.push(x.trim_end_matches('.').to_string());
    }
    if let Some(d) = op
        .description
        .as_deref()
        .map(first_sentence)
        .filter(|d| !d.is_empty())
    {
        parts.push(d);
    }
    if !op.tags.is_empty() {
        parts.push(
            op.tags
                .iter()
                .map(|t| identifier_words(t))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    if let Some(x) = &op.operation_id {
        parts.push(identifier_words(x));
    }
    parts.push(format!("{} {}", op.method, op.path));
    parts.join(". ")
}

fn summary_desc(op: &Operation) -> String {
    let mut parts = Vec::new();
    if let Some(x) = &op.summary {
        parts.push(x.trim_end_matches('.').to_string());
    }
    if let Some(d) = op
        .description
        .as_deref()
        .map(first_sentence)
        .filter(|d| !d.is_empty())
    {
        parts.push(d);
    }
    parts.join(". ")
}

fn prose_no_path(op: &Operation) -> String {
    let mut parts = Vec::new();
    if let Some(x) = &op.summary {
        parts.push(x.trim_end_matches('.').to_string());
    }
    if let Some(d) = op
        .description
        .as_deref()
        .map(first_sentence)
        .filter(|d| !d.is_empty())
    {
        parts.push(d);
    }
    if !op.tags.is_empty() {
        parts.push(
            op.tags
                .iter()
                .map(|t| identifier_words(t))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    parts.join(". ")
}

/// What the question asks to do, from its verbs: which HTTP methods fit.
fn intent_methods(q: &str) -> &'static [&'static str] {
    let words: Vec<String> = q
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .map(String::from)
        .collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    if has(&[
        "delete", "remove", "erase", "destroy", "drop", "unstar", "unfollow",
    ]) {
        &["DELETE"]
    } else if has(&[
        "create", "add", "new", "open", "start", "make", "register", "publish", "upload", "attach",
        "post", "submit", "send", "trigger", "run", "report", "store", "set", "follow", "star",
        "ask", "request", "invite", "merge", "cancel", "approve",
    ]) {
        &["POST", "PUT", "PATCH"]
    } else if has(&[
        "update", "edit", "modify", "change", "rename", "close", "lock", "enable", "disable",
    ]) {
        &["PATCH", "PUT", "POST"]
    } else if has(&[
        "list", "get", "fetch", "show", "see", "view", "find", "look", "read", "which", "who",
        "what", "how", "check", "download", "search",
    ]) {
        &["GET"]
    } else {
        &[]
    }
}

type QueryFn = fn(&str) -> String;
fn q_raw(q: &str) -> String {
    q.to_string()
}
fn q_summary(q: &str) -> String {
    format!("Summary: {q}.")
}
fn q_seed(q: &str) -> String {
    format!("Query: {q}.")
}

fn rank_of(ranked: &[usize], ops: &[Operation], g: &GoldenQuestion) -> Option<usize> {
    ranked.iter().position(|&i| {
        let op = &ops[i];
        g.answered_by(op.operation_id.as_deref(), &op.method, &op.path)
    })
}

fn report(label: &str, ranks: &[Option<usize>]) {
    let n = ranks.len() as f64;
    let at = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64 / n;
    let mrr: f64 = ranks
        .iter()
        .map(|r| r.map_or(0.0, |r| 1.0 / (r as f64 + 1.0)))
        .sum::<f64>()
        / n;
    println!(
        "{label:<40} top1 {:.2}  top3 {:.2}  top5 {:.2}  mrr {:.2}",
        at(1),
        at(3),
        at(5),
        mrr
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, spec, golden, model] = &args[..] else {
        eprintln!("usage: embedding_text_variants SPEC GOLDEN.tsv MODEL_DIR");
        std::process::exit(2);
    };
    let spec = ApiSpec::from_bytes(&std::fs::read(spec).unwrap(), spec).unwrap();
    let golden = parse_golden(&std::fs::read_to_string(golden).unwrap()).unwrap();
    let embedder = LocalBert::load(std::path::Path::new(model), "all-MiniLM-L6-v2", 32).unwrap();
    let ops = spec.operations();
    let keyword = OperationIndex::build(&spec).unwrap();
    let by_id: HashMap<(String, String), usize> = ops
        .iter()
        .enumerate()
        .map(|(i, o)| ((o.method.clone(), o.path.clone()), i))
        .collect();
    let mut keyword_ranks = Vec::new();
    let mut keyword_lists = Vec::new();
    for g in &golden {
        let request = SearchRequest::new(
            Some(g.question.clone()),
            None,
            None,
            Some(50),
            Some(SearchMode::Keyword),
        )
        .unwrap();
        let hits = keyword
            .search(&spec, &request, &Retrieval::keyword())
            .unwrap()
            .results;
        let list: Vec<usize> = hits
            .iter()
            .map(|h| by_id[&(h.method.clone(), h.path.clone())])
            .collect();
        keyword_ranks.push(rank_of(&list, ops, g));
        keyword_lists.push(list);
    }
    report("bm25", &keyword_ranks);

    let all: &[(&str, TextFn)] = &[
        ("seed", seed),
        ("seed+desc", seed_desc),
        ("seed+desc-words", seed_desc_words),
        ("summary-first", summary_first),
        ("prose", prose),
        ("prose-no-path", prose_no_path),
        ("summary+desc", summary_desc),
    ];
    let wanted = std::env::var("VARIANTS").unwrap_or_default();
    let variants: Vec<&(&str, TextFn)> = all
        .iter()
        .filter(|(n, _)| wanted.is_empty() || wanted.split(',').any(|w| w == *n))
        .collect();
    let show_misses = std::env::var("MISSES").is_ok();
    let queries: &[(&str, QueryFn)] = &[("raw", q_raw), ("summary:", q_summary)];
    let _ = q_seed;
    for (name, text) in variants {
        let texts: Vec<String> = ops.iter().map(text).collect();
        let started = std::time::Instant::now();
        let vectors = embedder.embed_documents(&texts, &|_, _| {}).await.unwrap();
        let secs = started.elapsed().as_secs_f64();
        println!(
            "-- {name}: {} texts in {secs:.1}s ({:.0}/s); e.g. {:?}",
            texts.len(),
            texts.len() as f64 / secs,
            texts[0]
        );
        let mut index = VectorIndex::new(embedder.dims());
        for v in &vectors {
            index.push(v);
        }
        for (qname, query) in queries {
            let mut sem = Vec::new();
            let mut hyb = Vec::new();
            let mut hyb2 = Vec::new();
            let deltas = [0.02f32, 0.04, 0.06];
            let weights = [0.05f32, 0.1, 0.2];
            let mut boosted: Vec<Vec<Option<usize>>> = vec![Vec::new(); deltas.len()];
            let mut convex: Vec<Vec<Option<usize>>> = vec![Vec::new(); weights.len()];
            let mut both: Vec<Vec<Option<usize>>> = vec![Vec::new(); weights.len()];
            let mut prior = Vec::new();
            for (g, kw) in golden.iter().zip(&keyword_lists) {
                let qv = embedder.embed_query(&query(&g.question)).await.unwrap();
                let list: Vec<usize> = index
                    .search(&qv, 50, |_| true)
                    .iter()
                    .map(|h| h.doc as usize)
                    .collect();
                let r = rank_of(&list, ops, g);
                if show_misses && r != Some(0) {
                    let got: Vec<String> = list[..3]
                        .iter()
                        .map(|&i| ops[i].operation_id.clone().unwrap_or_default())
                        .collect();
                    println!(
                        "   miss {:?}: {} want {:?} got {:?}",
                        r.map(|r| r + 1),
                        g.question,
                        g.answers,
                        got
                    );
                }
                sem.push(r);
                let scored = index.search(&qv, 100, |_| true);
                let methods = intent_methods(&g.question);
                for (di, delta) in deltas.iter().enumerate() {
                    let mut s2: Vec<(f32, usize)> = scored
                        .iter()
                        .map(|h| {
                            let op = &ops[h.doc as usize];
                            (
                                h.score
                                    + if methods.contains(&op.method.as_str()) {
                                        *delta
                                    } else {
                                        0.0
                                    },
                                h.doc as usize,
                            )
                        })
                        .collect();
                    s2.sort_by(|a, b| b.0.total_cmp(&a.0));
                    let l: Vec<usize> = s2.iter().map(|x| x.1).collect();
                    boosted[di].push(rank_of(&l, ops, g));
                }
                {
                    let mut s2: Vec<(f32, usize)> = scored
                        .iter()
                        .map(|h| {
                            let op = &ops[h.doc as usize];
                            (
                                h.score - 0.01 * op.path.matches('{').count() as f32,
                                h.doc as usize,
                            )
                        })
                        .collect();
                    s2.sort_by(|a, b| b.0.total_cmp(&a.0));
                    let l: Vec<usize> = s2.iter().map(|x| x.1).collect();
                    prior.push(rank_of(&l, ops, g));
                }
                // BM25 scores of this question, normalised by the best.
                let request = SearchRequest::new(
                    Some(g.question.clone()),
                    None,
                    None,
                    Some(50),
                    Some(SearchMode::Keyword),
                )
                .unwrap();
                let kw_hits = keyword
                    .search(&spec, &request, &Retrieval::keyword())
                    .unwrap()
                    .results;
                let top = kw_hits.first().map(|h| h.score).unwrap_or(1.0).max(1e-6);
                let kw_score: HashMap<usize, f32> = kw_hits
                    .iter()
                    .map(|h| (by_id[&(h.method.clone(), h.path.clone())], h.score / top))
                    .collect();
                for (wi, w) in weights.iter().enumerate() {
                    for (target, delta) in [(&mut convex[wi], 0.0f32), (&mut both[wi], 0.04)] {
                        let mut s2: Vec<(f32, usize)> = scored
                            .iter()
                            .map(|h| {
                                let i = h.doc as usize;
                                let op = &ops[i];
                                let m = if methods.contains(&op.method.as_str()) {
                                    delta
                                } else {
                                    0.0
                                };
                                (
                                    h.score + w * kw_score.get(&i).copied().unwrap_or(0.0) + m,
                                    i,
                                )
                            })
                            .collect();
                        s2.sort_by(|a, b| b.0.total_cmp(&a.0));
                        let l: Vec<usize> = s2.iter().map(|x| x.1).collect();
                        target.push(rank_of(&l, ops, g));
                    }
                }
                let a: Vec<u64> = list.iter().map(|&i| i as u64).collect();
                let b: Vec<u64> = kw.iter().map(|&i| i as u64).collect();
                let fused: Vec<usize> = reciprocal_rank_fusion(&[(&a, 1.0), (&b, 1.0)], 60.0)
                    .iter()
                    .map(|f| f.0 as usize)
                    .collect();
                hyb.push(rank_of(&fused, ops, g));
                let fused2: Vec<usize> = reciprocal_rank_fusion(&[(&a, 1.0), (&b, 0.5)], 60.0)
                    .iter()
                    .map(|f| f.0 as usize)
                    .collect();
                hyb2.push(rank_of(&fused2, ops, g));
            }
            report(&format!("{name} / {qname} semantic"), &sem);
            report(&format!("{name} / {qname} hybrid k60"), &hyb);
            report(&format!("{name} / {qname} hybrid k60 kw.5"), &hyb2);
            for (di, d) in deltas.iter().enumerate() {
                report(&format!("{name} / {qname} sem+intent {d}"), &boosted[di]);
            }
            report(&format!("{name} / {qname} sem+param prior"), &prior);
            for (wi, w) in weights.iter().enumerate() {
                report(&format!("{name} / {qname} sem+{w}bm25"), &convex[wi]);
                report(
                    &format!("{name} / {qname} sem+{w}bm25+intent.04"),
                    &both[wi],
                );
            }
        }
    }
}
