//! The second stage any corpus can put after its retrieval: a reranker (a model that reads the
//! question with each candidate, `devlens_embed::Reranker`) scores the first stage's best
//! candidates, and they are put in that order. What the corpus keeps: which text of a candidate
//! the reranker reads.

/// Candidates a reranker reads when `[embedding] rerank_candidates` is not set: on the blind API
/// dev halves the answer was among the best 20 hybrid candidates for 87–92% of the questions.
pub const DEFAULT_CANDIDATES: usize = 20;
/// The most candidates a reranker reads: each costs a forward pass of the model.
pub const MAX_CANDIDATES: usize = 100;

/// How many candidates a reranker reads: `configured` (`[embedding] rerank_candidates`), else
/// [`DEFAULT_CANDIDATES`]; the error says what to set.
pub fn candidates(configured: Option<usize>) -> Result<usize, String> {
    match configured.unwrap_or(DEFAULT_CANDIDATES) {
        n @ 1..=MAX_CANDIDATES => Ok(n),
        n => Err(format!(
            "[embedding] rerank_candidates must be between 1 and {MAX_CANDIDATES} (got {n})"
        )),
    }
}

/// Puts `items` in the order of their `scores` (one each, from the reranker; best first, ties
/// keep the first stage's order) and keeps the first `limit`; returns their scores, in that
/// order. When the scores do not fit the items, the error says so and `items` stay as they were.
pub fn reorder<T>(items: &mut Vec<T>, scores: &[f32], limit: usize) -> Result<Vec<f32>, String> {
    if scores.len() != items.len() {
        return Err(format!(
            "the reranker gave {} scores for {} candidates",
            scores.len(),
            items.len()
        ));
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    // A stable sort: equal scores keep the first stage's order.
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    order.truncate(limit);
    let mut taken: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(order.iter().filter_map(|&i| taken[i].take()));
    Ok(order.iter().map(|&i| scores[i]).collect())
}

/// The notice of an answer its reranker could not reorder (it keeps the first stage's order).
pub fn not_reranked(why: &str) -> String {
    format!("not reranked: {why}; fix or unset [embedding] reranker_dir")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_out_of_range_say_what_to_set() {
        assert_eq!(candidates(None), Ok(DEFAULT_CANDIDATES));
        assert_eq!(candidates(Some(5)), Ok(5));
        for bad in [0, MAX_CANDIDATES + 1] {
            let err = candidates(Some(bad)).unwrap_err();
            assert!(
                err.contains("rerank_candidates must be between 1 and 100"),
                "{err}"
            );
        }
    }

    #[test]
    fn best_score_first_ties_in_first_stage_order_then_the_limit() {
        let mut items = vec!["a", "b", "c", "d"];
        let scores = reorder(&mut items, &[0.1, 0.9, 0.1, 0.5], 3).unwrap();
        assert_eq!(items, vec!["b", "d", "a"]);
        assert_eq!(scores, vec![0.9, 0.5, 0.1]);
        let mut items = vec!["a", "b"];
        let err = reorder(&mut items, &[1.0], 2).unwrap_err();
        assert_eq!(err, "the reranker gave 1 scores for 2 candidates");
        assert_eq!(items, vec!["a", "b"], "left as they were");
    }
}
