//! Combining ranked lists from different retrievers (keyword and semantic) into one.

use std::collections::HashMap;

/// Reciprocal rank fusion: each list contributes `weight / (k + rank)` for every document it
/// ranks (rank from 1). Robust to the two retrievers' scores living on different scales, which is
/// why it is the usual first choice for hybrid search. `k = 60` is the value from the original
/// paper (Cormack et al., 2009).
pub fn reciprocal_rank_fusion(lists: &[(&[u64], f32)], k: f32) -> Vec<(u64, f32)> {
    let mut scores: HashMap<u64, f32> = HashMap::new();
    for (list, weight) in lists {
        for (rank, doc) in list.iter().enumerate() {
            *scores.entry(*doc).or_default() += weight / (k + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(u64, f32)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_ranked_well_by_both_lists_win() {
        let keyword: &[u64] = &[1, 2, 3];
        let semantic: &[u64] = &[2, 4, 1];
        let fused = reciprocal_rank_fusion(&[(keyword, 1.0), (semantic, 1.0)], 60.0);
        let order: Vec<u64> = fused.iter().map(|f| f.0).collect();
        assert_eq!(&order[..2], &[2, 1]);
        assert_eq!(order.len(), 4);
    }

    #[test]
    fn weights_tilt_the_result() {
        let keyword: &[u64] = &[1];
        let semantic: &[u64] = &[2];
        let fused = reciprocal_rank_fusion(&[(keyword, 1.0), (semantic, 2.0)], 60.0);
        assert_eq!(fused[0].0, 2);
    }
}
