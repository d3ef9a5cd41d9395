//! Search quality on a golden set: questions written the way developers ask them, each with the
//! operations that answer it. `devlens api eval` reports top-k hit rates and MRR per mode.
//!
//! File format: one question per line, a TAB, then the answers separated by commas — each an
//! operationId or `METHOD /path`. Blank lines and lines starting with `#` are skipped.

use devlens_search::golden::golden_lines;
pub use devlens_search::golden::percentile;
use serde::Serialize;

use crate::search::{SearchHit, SearchMode};

/// How deep each question searches; ranks beyond this count as misses.
pub const EVAL_DEPTH: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct GoldenQuestion {
    pub question: String,
    pub answers: Vec<String>,
}

impl GoldenQuestion {
    /// Where the first right answer landed in `hits` (0-based).
    pub fn rank_in(&self, hits: &[SearchHit]) -> Option<usize> {
        hits.iter()
            .position(|hit| self.answered_by(hit.operation_id.as_deref(), &hit.method, &hit.path))
    }

    /// Whether the operation `operation_id` (or `method path`) is one of the answers.
    pub fn answered_by(&self, operation_id: Option<&str>, method: &str, path: &str) -> bool {
        self.answers.iter().any(|answer| {
            operation_id == Some(answer.as_str())
                || answer.eq_ignore_ascii_case(&format!("{method} {path}"))
        })
    }
}

/// Reads a golden file; an error names the line and says what the line should look like.
pub fn parse_golden(text: &str) -> Result<Vec<GoldenQuestion>, String> {
    let lines = golden_lines(
        text,
        ',',
        "a question, a TAB, then comma-separated operationIds (or `METHOD /path`s)",
    )?;
    Ok(lines
        .into_iter()
        .map(|(question, answers)| GoldenQuestion { question, answers })
        .collect())
}

/// A question whose answer was not ranked first.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvalMiss {
    pub question: String,
    pub expected: Vec<String>,
    /// 1-based rank of the first right answer, if it was in the top results at all.
    pub rank: Option<usize>,
}

/// The scores of one run. Field names follow the CLI contract (`p50_ms`, not camelCase).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvalReport {
    pub n: usize,
    pub top1: f64,
    pub top3: f64,
    pub top5: f64,
    pub mrr: f64,
    /// Median time per search, embedding the question included.
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub mode: SearchMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The second stage, when one reordered any question's candidates (`[search] rerank`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<EvalRerank>,
    pub misses: Vec<EvalMiss>,
}

/// What the second stage did over a run: who, for how many questions (the others kept the
/// first stage's order: the notice says why), and its own time per question (included in the
/// search times).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvalRerank {
    pub by: String,
    pub reranked: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

impl EvalRerank {
    pub fn new(by: String, timings_ms: &[f64]) -> Self {
        Self {
            by,
            reranked: timings_ms.len(),
            p50_ms: round(percentile(timings_ms, 0.5), 1),
            p95_ms: round(percentile(timings_ms, 0.95), 1),
        }
    }
}

fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

impl EvalReport {
    pub fn new(
        golden: &[GoldenQuestion],
        ranks: &[Option<usize>],
        timings_ms: &[f64],
        mode: SearchMode,
        notice: Option<String>,
    ) -> Self {
        let n = ranks.len().max(1) as f64;
        let within =
            |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64 / n;
        let mrr = ranks
            .iter()
            .map(|r| r.map_or(0.0, |r| 1.0 / (r as f64 + 1.0)))
            .sum::<f64>()
            / n;
        let misses = golden
            .iter()
            .zip(ranks)
            .filter(|(_, r)| **r != Some(0))
            .map(|(q, r)| EvalMiss {
                question: q.question.clone(),
                expected: q.answers.clone(),
                rank: r.map(|r| r + 1),
            })
            .collect();
        Self {
            n: ranks.len(),
            top1: round(within(1), 3),
            top3: round(within(3), 3),
            top5: round(within(5), 3),
            mrr: round(mrr, 3),
            p50_ms: round(percentile(timings_ms, 0.5), 2),
            p95_ms: round(percentile(timings_ms, 0.95), 2),
            mode,
            notice,
            rerank: None,
            misses,
        }
    }
}

impl devlens_core::Report for EvalReport {
    fn to_text(&self) -> String {
        let mut out = format!(
            "{} questions, {} mode: top-1 {:.2}, top-3 {:.2}, top-5 {:.2}, MRR {:.2}; \
             search p50 {:.2} ms, p95 {:.2} ms",
            self.n,
            self.mode.as_str(),
            self.top1,
            self.top3,
            self.top5,
            self.mrr,
            self.p50_ms,
            self.p95_ms
        );
        if let Some(r) = &self.rerank {
            out.push_str(&format!(
                "\nreranked by {} for {} of {} questions: p50 {:.0} ms, p95 {:.0} ms",
                r.by, r.reranked, self.n, r.p50_ms, r.p95_ms
            ));
        }
        if let Some(notice) = &self.notice {
            out.push_str(&format!("\nnote: {notice}"));
        }
        if !self.misses.is_empty() {
            out.push_str("\nnot ranked first:");
            for miss in &self.misses {
                let rank = miss
                    .rank
                    .map_or_else(|| "missed".to_string(), |r| format!("#{r}"));
                out.push_str(&format!(
                    "\n  {rank:>6}  {}  (want {})",
                    miss.question,
                    miss.expected.join(", ")
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: &str, method: &str, path: &str) -> SearchHit {
        SearchHit {
            operation_id: Some(id.into()),
            method: method.into(),
            path: path.into(),
            summary: None,
            score: 1.0,
            details: None,
        }
    }

    #[test]
    fn parses_questions_and_reports_bad_lines() {
        let golden =
            parse_golden("# comment\n\nadd a pet\taddPet, POST /pet\nlist pets\tlistPets\n")
                .unwrap();
        assert_eq!(golden.len(), 2);
        assert_eq!(golden[0].answers, vec!["addPet", "POST /pet"]);
        assert!(parse_golden("no tab here").unwrap_err().contains("line 1"));
        assert!(
            parse_golden("q\t , ")
                .unwrap_err()
                .contains("at least one answer")
        );
        assert!(
            parse_golden("# only comments")
                .unwrap_err()
                .contains("no questions")
        );
    }

    #[test]
    fn ranks_match_by_operation_id_or_route_and_score_correctly() {
        let q = |answers: &[&str]| GoldenQuestion {
            question: "q".into(),
            answers: answers.iter().map(|a| a.to_string()).collect(),
        };
        let hits = vec![hit("a", "GET", "/a"), hit("b", "POST", "/b")];
        assert_eq!(q(&["b"]).rank_in(&hits), Some(1));
        assert_eq!(q(&["post /b"]).rank_in(&hits), Some(1));
        assert_eq!(q(&["zzz"]).rank_in(&hits), None);

        let golden = vec![q(&["a"]), q(&["b"]), q(&["c"])];
        let report = EvalReport::new(
            &golden,
            &[Some(0), Some(2), None],
            &[1.0, 2.0, 3.0],
            SearchMode::Hybrid,
            None,
        );
        assert_eq!(report.top1, 0.333);
        assert_eq!(report.top3, 0.667);
        assert_eq!(report.mrr, round((1.0 + 1.0 / 3.0) / 3.0, 3));
        assert_eq!(report.p50_ms, 2.0);
        assert_eq!(report.misses.len(), 2);
        assert_eq!(report.misses[0].rank, Some(3));
    }
}
