//! "Did you mean" suggestions, shared by every lookup that can miss.

/// The `limit` candidates closest to `wanted`, best first.
///
/// A candidate qualifies when it contains `wanted` (or the reverse), or when its normalised
/// edit similarity is at least 0.5: loose enough to catch typos, strict enough not to suggest
/// noise.
pub fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    limit: usize,
) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let mut score = strsim::normalized_damerau_levenshtein(&wanted_lower, &lower);
            if !wanted_lower.is_empty()
                && (lower.contains(&wanted_lower) || wanted_lower.contains(&lower))
            {
                score = score.max(0.75);
            }
            (score >= 0.5).then_some((score, candidate))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(limit)
        .map(|(_, c)| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn typos_and_substrings_are_suggested_best_first() {
        let names = ["petstore", "github", "stripe", "pets"];
        assert_eq!(closest("petstor", names, 2), vec!["petstore", "pets"]);
        assert_eq!(closest("git", names, 3), vec!["github"]);
        assert!(closest("zzzzzz", names, 3).is_empty());
    }
}
