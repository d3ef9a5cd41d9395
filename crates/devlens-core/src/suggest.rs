//! "Did you mean" suggestions, shared by every lookup that can miss (projects, operationIds,
//! tags, endpoints, libraries).
//!
//! Three signals, best first: the name contains the query (or the other way round), the query's
//! words appear in the name (`create issue` finds `issues/create`), and edit similarity
//! (Jaro-Winkler, good at typos and shared prefixes).

/// Below this score a candidate is not worth suggesting.
const MIN_SCORE: f64 = 0.72;

/// The `limit` candidates closest to `query`, best first, without duplicates.
pub fn closest<'a>(
    query: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    limit: usize,
) -> Vec<String> {
    let q = query.trim().to_lowercase();
    if q.is_empty() {
        return Vec::new();
    }
    let q_words = words(&q);
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let s = score(&q, &q_words, c);
            (s >= MIN_SCORE).then_some((s, c))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.len().cmp(&b.1.len())));
    let mut out: Vec<String> = Vec::new();
    for (_, c) in scored {
        if !out.iter().any(|o| o == c) {
            out.push(c.to_string());
            if out.len() >= limit {
                break;
            }
        }
    }
    out
}

/// How close `candidate` is to the query `q` (lower-cased, split into `q_words`): 3 for equal,
/// about 2 for containment, else the better of word overlap and Jaro-Winkler similarity.
pub fn score(q: &str, q_words: &[&str], candidate: &str) -> f64 {
    let c = candidate.to_lowercase();
    if c == q {
        return 3.0;
    }
    if q.len() >= 3 && c.contains(q) {
        // Shorter names that contain the query are the likelier meaning.
        return 2.0 - (c.len() - q.len()) as f64 / (c.len() as f64 * 10.0);
    }
    if c.len() >= 3 && q.contains(c.as_str()) {
        return 1.5;
    }
    let c_words = words(&c);
    let overlap = if q_words.len() > 1 && !c_words.is_empty() {
        let hits = q_words
            .iter()
            .filter(|w| {
                c_words
                    .iter()
                    .any(|cw| cw.starts_with(*w) || w.starts_with(cw) && cw.len() >= 3)
            })
            .count();
        hits as f64 / q_words.len() as f64
    } else {
        0.0
    };
    let edit = strsim::jaro_winkler(q, &c);
    overlap.max(edit)
}

/// The alphanumeric words of `s`.
pub fn words(s: &str) -> Vec<&str> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_substrings_and_words_are_suggested() {
        let ids = [
            "issues/create",
            "issues/list",
            "repos/create",
            "pulls/create",
            "users/get",
        ];
        assert_eq!(closest("issues/crate", ids, 5)[0], "issues/create");
        assert_eq!(closest("create issue", ids, 5)[0], "issues/create");
        let s = closest("create", ids, 5);
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|x| x.ends_with("create")));
        assert!(closest("zzzz", ids, 5).is_empty());
        assert!(closest("  ", ids, 5).is_empty());
    }

    #[test]
    fn project_names_with_typos() {
        let names = ["petstore", "github", "stripe", "pets"];
        assert_eq!(closest("petstor", names, 2), vec!["petstore", "pets"]);
        assert_eq!(closest("git", names, 3), vec!["github"]);
        assert!(closest("zzzzzz", names, 3).is_empty());
    }

    #[test]
    fn never_more_than_the_limit() {
        let many: Vec<String> = (0..50).map(|i| format!("op{i}")).collect();
        assert_eq!(closest("op", many.iter().map(String::as_str), 5).len(), 5);
    }
}
