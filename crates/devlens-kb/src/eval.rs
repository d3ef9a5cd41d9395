//! Measuring search quality on a golden set, and calibrating the similarity threshold.
//!
//! Golden file: `question<TAB>id[,id…]` per line (`#` comments); `-` instead of ids marks a
//! question the knowledge base cannot answer, which should get no result at all. A question is
//! a hit at k when one of its ids is among the first k results.

use std::time::Instant;

use serde::Serialize;

use devlens_search::golden::{golden_lines, percentile};

use crate::{KbError, KnowledgeBase, SearchMode, SearchOptions};

/// One golden question; `expected` is empty for a question nothing answers.
#[derive(Debug, Clone, PartialEq)]
pub struct GoldenQuestion {
    pub question: String,
    pub expected: Vec<String>,
}

pub fn parse_golden(text: &str) -> Result<Vec<GoldenQuestion>, String> {
    Ok(golden_lines(
        text,
        ',',
        "a question, a TAB, then comma-separated solution ids, or `-` for none",
    )?
    .into_iter()
    .map(|(question, ids)| GoldenQuestion {
        question,
        expected: ids.into_iter().filter(|id| id != "-").collect(),
    })
    .collect())
}

/// How search did on a golden set.
/// Field names follow `devlens docs eval` and `api eval` (`hit_at_k`, `p50_ms`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvalReport {
    pub mode: SearchMode,
    /// Questions with an answer / without.
    pub n: usize,
    pub off_topic: usize,
    pub top_k: usize,
    pub threshold: Option<f32>,
    pub hit_at_1: f64,
    pub hit_at_3: f64,
    pub hit_at_k: f64,
    pub mrr: f64,
    /// Share of unanswerable questions that got no result (what the threshold is for).
    pub off_topic_empty: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    /// Semantic and hybrid: hit@k and off-topic-empty at other thresholds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<ThresholdRow>,
    /// When a mode other than the one asked for ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ThresholdRow {
    pub threshold: f32,
    pub hit_at_k: f64,
    pub off_topic_empty: f64,
}

impl devlens_core::Report for EvalReport {
    fn to_text(&self) -> String {
        let mut out = format!(
            "{} questions ({} unanswerable), mode {}, top {}{}:\n  hit@1 {:.3}  hit@3 {:.3}  \
             hit@{} {:.3}  MRR {:.3}  unanswerable left empty {:.3}  p50 {:.1} ms  p95 {:.1} ms",
            self.n + self.off_topic,
            self.off_topic,
            self.mode,
            self.top_k,
            self.threshold
                .map(|t| format!(", threshold {t:.2}"))
                .unwrap_or_default(),
            self.hit_at_1,
            self.hit_at_3,
            self.top_k,
            self.hit_at_k,
            self.mrr,
            self.off_topic_empty,
            self.p50_ms,
            self.p95_ms
        );
        if !self.sweep.is_empty() {
            out.push_str("\n  threshold  hit@k   unanswerable-empty");
            for row in &self.sweep {
                out.push_str(&format!(
                    "\n  {:>9.2}  {:.3}  {:.3}",
                    row.threshold, row.hit_at_k, row.off_topic_empty
                ));
            }
        }
        if let Some(n) = &self.notice {
            out.push_str(&format!("\nnote: {n}"));
        }
        out
    }
}

impl KnowledgeBase {
    /// Runs every golden question through [`KnowledgeBase::search`]; with `sweep`, also tries
    /// the thresholds 0.10 … 0.70 (semantic and hybrid).
    pub async fn eval(
        &self,
        golden: &[GoldenQuestion],
        options: &SearchOptions,
        sweep: bool,
    ) -> Result<EvalReport, KbError> {
        let top_k = options.top_k.unwrap_or(crate::DEFAULT_TOP_K);
        let mut hits1 = 0usize;
        let mut hits3 = 0usize;
        let mut hitsk = 0usize;
        let mut rr = 0.0f64;
        let mut empty_off_topic = 0usize;
        let mut latencies = Vec::with_capacity(golden.len());
        let mut mode = options.mode.unwrap_or(crate::DEFAULT_MODE);
        let mut threshold = None;
        let mut notice = None;
        // Warm-up: the model load and first-query set-up are not what a query costs.
        if let Some(first) = golden.first() {
            let _ = self.search(&first.question, options).await?;
        }
        for q in golden {
            let started = Instant::now();
            let found = self
                .search(
                    &q.question,
                    &SearchOptions {
                        top_k: Some(top_k),
                        ..options.clone()
                    },
                )
                .await?;
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            mode = found.mode;
            threshold = found.threshold;
            if found.mode != options.mode.unwrap_or(found.mode) {
                notice = found.notice.clone();
            }
            if q.expected.is_empty() {
                empty_off_topic += usize::from(found.results.is_empty());
                continue;
            }
            if let Some(rank) = found
                .results
                .iter()
                .position(|r| q.expected.contains(&r.id))
            {
                hits1 += usize::from(rank < 1);
                hits3 += usize::from(rank < 3);
                hitsk += 1;
                rr += 1.0 / (rank as f64 + 1.0);
            }
        }
        let off_topic = golden.iter().filter(|q| q.expected.is_empty()).count();
        let n = golden.len() - off_topic;
        let share = |x: usize, of: usize| if of == 0 { 0.0 } else { x as f64 / of as f64 };
        let sweep = if mode == SearchMode::Keyword || !sweep {
            Vec::new()
        } else {
            self.sweep(golden, options, top_k).await?
        };
        Ok(EvalReport {
            mode,
            n,
            off_topic,
            top_k,
            threshold,
            hit_at_1: share(hits1, n),
            hit_at_3: share(hits3, n),
            hit_at_k: share(hitsk, n),
            mrr: if n == 0 { 0.0 } else { rr / n as f64 },
            off_topic_empty: share(empty_off_topic, off_topic),
            p50_ms: percentile(&latencies, 0.5),
            p95_ms: percentile(&latencies, 0.95),
            sweep,
            notice,
        })
    }

    /// hit@k and the unanswerable questions left empty at thresholds 0.10 … 0.70.
    async fn sweep(
        &self,
        golden: &[GoldenQuestion],
        options: &SearchOptions,
        top_k: usize,
    ) -> Result<Vec<ThresholdRow>, KbError> {
        // One unthresholded search per question gives every score a threshold could cut.
        let mut ranked = Vec::with_capacity(golden.len());
        for q in golden {
            let found = self
                .search(
                    &q.question,
                    &SearchOptions {
                        mode: options.mode,
                        top_k: Some(crate::MAX_TOP_K),
                        similarity_threshold: Some(-1.0),
                    },
                )
                .await?;
            ranked.push(found.results);
        }
        let off_topic = golden.iter().filter(|q| q.expected.is_empty()).count();
        let n = golden.len() - off_topic;
        let mut rows = Vec::new();
        for step in 2..=14 {
            let t = step as f32 * 0.05;
            let mut hits = 0;
            let mut empty = 0;
            for (q, results) in golden.iter().zip(&ranked) {
                let kept: Vec<_> = results
                    .iter()
                    .filter(|r| r.similarity.is_some_and(|s| s >= t))
                    .take(top_k)
                    .collect();
                if q.expected.is_empty() {
                    empty += usize::from(kept.is_empty());
                } else if kept.iter().any(|r| q.expected.contains(&r.id)) {
                    hits += 1;
                }
            }
            rows.push(ThresholdRow {
                threshold: (t * 100.0).round() / 100.0,
                hit_at_k: if n == 0 { 0.0 } else { hits as f64 / n as f64 },
                off_topic_empty: if off_topic == 0 {
                    0.0
                } else {
                    empty as f64 / off_topic as f64
                },
            });
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_lines_mark_unanswerable_questions() {
        let g = parse_golden("# c\nfix cors\ts20,s21\nbest pasta\t-\n").unwrap();
        assert_eq!(g[0].expected, vec!["s20", "s21"]);
        assert!(g[1].expected.is_empty());
        assert!(parse_golden("no tab here").unwrap_err().contains("line 1"));
    }
}
