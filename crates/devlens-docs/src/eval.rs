//! Scoring retrieval on a golden set: `question<TAB>substring[|substring…]` per line.

use devlens_search::golden::golden_lines;
pub use devlens_search::golden::percentile;
use std::time::Instant;

use serde::Serialize;

use crate::{Docs, DocsError, QueryDocsInput, query};

/// One golden question: a hit when a result's heading path contains one of `expected`
/// (case-insensitive).
#[derive(Debug, Clone, PartialEq)]
pub struct GoldenQuestion {
    pub query: String,
    pub expected: Vec<String>,
}

impl GoldenQuestion {
    /// The 1-based rank of the first result whose section matches.
    pub fn rank_in<'a>(&self, sections: impl IntoIterator<Item = &'a str>) -> Option<usize> {
        let wanted: Vec<String> = self.expected.iter().map(|e| e.to_lowercase()).collect();
        sections
            .into_iter()
            .position(|s| {
                let s = s.to_lowercase();
                wanted.iter().any(|w| s.contains(w.as_str()))
            })
            .map(|p| p + 1)
    }
}

/// Parses a golden file; blank lines and `#` comments are skipped.
pub fn parse_golden(text: &str) -> Result<Vec<GoldenQuestion>, String> {
    let lines = golden_lines(text, '|', "`question<TAB>substring[|substring…]`")?;
    Ok(lines
        .into_iter()
        .map(|(query, expected)| GoldenQuestion { query, expected })
        .collect())
}

/// `devlens docs eval`'s report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvalReport {
    pub n: usize,
    /// Share of questions with a matching section among the first k results.
    pub hit_at_k: f64,
    /// Mean reciprocal rank of the first matching section (0 for a miss).
    pub mrr: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    #[serde(skip)]
    pub k: usize,
    /// Questions without a hit, and the sections returned instead.
    #[serde(skip)]
    pub misses: Vec<(String, Vec<String>)>,
    #[serde(skip)]
    pub notice: Option<String>,
    /// The same questions asked again, answered from the cache: p50 and p95 in ms.
    #[serde(skip)]
    pub cached_ms: Option<(f64, f64)>,
}

impl devlens_core::Report for EvalReport {
    fn to_text(&self) -> String {
        let mut out = format!(
            "{} questions: hit@{} {:.3}, MRR {:.3}, latency p50 {:.1} ms, p95 {:.1} ms",
            self.n, self.k, self.hit_at_k, self.mrr, self.p50_ms, self.p95_ms
        );
        if let Some((p50, p95)) = self.cached_ms {
            out.push_str(&format!("\ncached: p50 {p50:.3} ms, p95 {p95:.3} ms"));
        }
        for (query, sections) in &self.misses {
            out.push_str(&format!("\nmiss: {query}"));
            for s in sections.iter().take(3) {
                out.push_str(&format!("\n    got: {s}"));
            }
        }
        if let Some(notice) = &self.notice {
            out.push_str(&format!("\nnote: {notice}"));
        }
        out
    }
}

impl Docs {
    /// Scores retrieval for `library` on `golden`: hit@k, MRR and latency (every query runs
    /// uncached).
    pub async fn eval(
        &self,
        library: &str,
        golden: &[GoldenQuestion],
        k: usize,
    ) -> Result<EvalReport, DocsError> {
        let mut latencies = Vec::with_capacity(golden.len());
        let mut hits = 0usize;
        let mut reciprocal = 0.0f64;
        let mut misses = Vec::new();
        let mut notice = None;
        for question in golden {
            let input = QueryDocsInput {
                library_id: library.to_string(),
                query: question.query.clone(),
                version: None,
                max_results: Some(k),
                include_code: Some(true),
                context_limit: Some(query::MAX_CONTEXT_LIMIT),
            };
            let started = Instant::now();
            let answer = match input.validate() {
                Ok(request) => match self.locate(&request.library_id, None) {
                    Ok((lib, version)) => self.answer(&request, lib, version).await.map(|a| a.0),
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            let sections: Vec<String> = match answer {
                Ok(out) => {
                    notice = notice.or(out.notice);
                    out.results
                        .into_iter()
                        .map(|r| r.metadata.section)
                        .collect()
                }
                Err(DocsError::NoResults { .. }) => Vec::new(),
                Err(e) => return Err(e),
            };
            match question.rank_in(sections.iter().map(String::as_str)) {
                Some(rank) => {
                    hits += 1;
                    reciprocal += 1.0 / rank as f64;
                }
                None => misses.push((question.query.clone(), sections)),
            }
        }
        // Then once more through the cache (a first pass fills it), to time cached answers.
        let mut cached = Vec::with_capacity(golden.len());
        for pass in 0..2 {
            for question in golden {
                let input = QueryDocsInput {
                    library_id: library.to_string(),
                    query: question.query.clone(),
                    version: None,
                    max_results: Some(k),
                    include_code: Some(true),
                    context_limit: Some(query::MAX_CONTEXT_LIMIT),
                };
                let started = Instant::now();
                // Not `query`: an eval is no traffic to log or count in the metrics.
                if let Ok(request) = input.validate() {
                    let _ = self.query_traced(&request).await;
                }
                if pass == 1 {
                    cached.push(started.elapsed().as_secs_f64() * 1000.0);
                }
            }
        }
        let n = golden.len().max(1) as f64;
        Ok(EvalReport {
            cached_ms: Some((percentile(&cached, 0.5), percentile(&cached, 0.95))),
            n: golden.len(),
            hit_at_k: hits as f64 / n,
            mrr: reciprocal / n,
            p50_ms: percentile(&latencies, 0.5),
            p95_ms: percentile(&latencies, 0.95),
            k,
            misses,
            notice,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_lines_and_ranks() {
        let golden = parse_golden("# c\n\nhow to read a file\treadFile | readfilesync\n").unwrap();
        assert_eq!(golden[0].expected, vec!["readFile", "readfilesync"]);
        assert_eq!(
            golden[0].rank_in(["A > B", "File system > fsPromises.READFILE(path)"]),
            Some(2)
        );
        assert_eq!(golden[0].rank_in(["A"]), None);
        assert!(parse_golden("no tab here").unwrap_err().contains("line 1"));
        assert!(parse_golden("q\t |").is_err());
        assert!(parse_golden("# only comments").is_err());
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.95), 4.0);
    }
}
