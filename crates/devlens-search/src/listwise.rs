//! A language model as the second stage (listwise reranking): the model reads the question and
//! the first stage's best candidates, one numbered line each, and answers with their numbers,
//! best first. What the corpus keeps: the line a candidate shows, and which model it asks.
//!
//! The answer comes from a model the user does not control line by line (the MCP client's, or
//! the `[llm]` endpoint's), so it is read defensively: a JSON array of numbers anywhere in the
//! answer, else the bare numbers it holds; numbers that name no candidate are ignored, a number
//! said twice counts once, and candidates the answer leaves out follow in the first stage's
//! order. An answer that names no candidate at all is garbage: the first stage's order stands
//! and the notice says so. The candidates' text can hold anything a spec author wrote; the worst
//! it can do here is a worse order, since only numbers are taken from the answer.

/// The most tokens the answer may take: 20 numbers in a JSON array are about 60; the rest is
/// slack for a model that adds a word or thinks aloud briefly.
pub const MAX_TOKENS: u32 = 200;

/// What the model is told it is doing.
pub const SYSTEM_PROMPT: &str = "You rank search results. You get a developer's question and \
numbered candidates, one per line. Reply with only a JSON array of the numbers of the candidates \
that answer the question, best first, e.g. [3, 1, 4]. Leave out candidates that do not answer it. \
No other text.";

/// The longest question and candidate line sent, in characters.
const MAX_QUESTION_CHARS: usize = 500;
const MAX_LINE_CHARS: usize = 200;

/// The user message: the question, then `lines` numbered from 1 (the first stage's order).
pub fn user_prompt(question: &str, lines: &[String]) -> String {
    let mut out = format!(
        "Question: {}\n\nCandidates:\n",
        one_line(question, MAX_QUESTION_CHARS)
    );
    for (i, line) in lines.iter().enumerate() {
        out.push_str(&format!("{} {}\n", i + 1, one_line(line, MAX_LINE_CHARS)));
    }
    out.push_str("\nReply with the JSON array of numbers only.");
    out
}

/// `text` on one line (whitespace runs made one space), cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}

/// The order the model's `answer` gives `candidates` candidates: their positions (from 0),
/// those it named first in its order, then the rest in the first stage's order. The error says
/// why the answer is unusable (it named none of them).
pub fn parse_order(answer: &str, candidates: usize) -> Result<Vec<usize>, String> {
    // A reasoning model's thoughts are not its answer.
    let answer = answer
        .rsplit_once("</think>")
        .map_or(answer, |(_, after)| after);
    let named = json_numbers(answer).unwrap_or_else(|| loose_numbers(answer));
    let mut taken = vec![false; candidates];
    let mut order = Vec::with_capacity(candidates);
    for number in named {
        if let Some(i) = number.checked_sub(1).filter(|&i| i < candidates)
            && !taken[i]
        {
            taken[i] = true;
            order.push(i);
        }
    }
    if order.is_empty() {
        return Err(format!(
            "its answer named none of the {candidates} candidates ({})",
            quote(answer)
        ));
    }
    order.extend((0..candidates).filter(|&i| !taken[i]));
    Ok(order)
}

/// Scores that put items in `order` (positions, best first) under
/// [`crate::rerank::reorder`]: the first gets the highest.
pub fn scores_for(order: &[usize]) -> Vec<f32> {
    let mut scores = vec![0.0; order.len()];
    for (rank, &i) in order.iter().enumerate() {
        if let Some(score) = scores.get_mut(i) {
            *score = (order.len() - rank) as f32;
        }
    }
    scores
}

/// The numbers of the first JSON array in `text` that holds any (`[3, 1]`, `["3", "#1"]`,
/// `[{"id": 3}]`), in its order; `None` when there is no such array.
fn json_numbers(text: &str) -> Option<Vec<usize>> {
    for (at, _) in text.match_indices('[') {
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter();
        let Some(Ok(serde_json::Value::Array(items))) = values.next() else {
            continue;
        };
        let numbers: Vec<usize> = items.iter().filter_map(number_of).collect();
        if !numbers.is_empty() {
            return Some(numbers);
        }
    }
    None
}

fn number_of(item: &serde_json::Value) -> Option<usize> {
    use serde_json::Value;
    match item {
        Value::Number(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        Value::String(s) => s.trim().trim_start_matches('#').parse().ok(),
        Value::Object(fields) => ["id", "number", "candidate"]
            .iter()
            .find_map(|key| fields.get(*key).and_then(number_of)),
        _ => None,
    }
}

/// The numbers standing alone in `text` ("3, 1 and 4", "#3 then #1"), in order: not part of a
/// word, a path (`/v1`), a version (`2.0`) or a larger number.
fn loose_numbers(text: &str) -> Vec<usize> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let before = start.checked_sub(1).map(|b| chars[b]);
        let after = chars.get(i).copied();
        let after_next = chars.get(i + 1).copied();
        let glued_before = before.is_some_and(|c| c.is_alphanumeric() || "/._-{".contains(c));
        let glued_after = after.is_some_and(|c| c.is_alphanumeric() || "/_-}".contains(c))
            || (after == Some('.') && after_next.is_some_and(|c| c.is_ascii_digit()));
        if !glued_before && !glued_after {
            let digits: String = chars[start..i].iter().collect();
            if let Ok(n) = digits.parse() {
                out.push(n);
            }
        }
    }
    out
}

/// The start of an answer, for a notice: one line, at most 60 characters, quoted.
fn quote(answer: &str) -> String {
    let line = one_line(answer, 60);
    if line.is_empty() {
        "an empty answer".into()
    } else {
        format!("\"{line}\"")
    }
}

/// The notice of an answer a language model could not reorder: who was asked (`by`), why not,
/// and that the first stage's order stands.
pub fn not_reranked_by(by: &str, why: &str) -> String {
    format!("not reranked by {by}: {why}; the first stage's order is kept")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_array_gives_the_order_and_the_rest_follow_in_first_stage_order() {
        assert_eq!(parse_order("[3, 1]", 5), Ok(vec![2, 0, 1, 3, 4]));
        // Anywhere in the answer, in a code fence, as strings or objects.
        assert_eq!(
            parse_order("Sure! ```json\n[\"2\", \"#4\"]\n```", 4),
            Ok(vec![1, 3, 0, 2])
        );
        assert_eq!(
            parse_order(r#"[{"id": 2}, {"id": 1}]"#, 3),
            Ok(vec![1, 0, 2])
        );
        // A bracket before the array that is not JSON is skipped.
        assert_eq!(parse_order("[best first] [2,1]", 2), Ok(vec![1, 0]));
    }

    #[test]
    fn unknown_and_repeated_numbers_are_ignored() {
        assert_eq!(parse_order("[9, 2, 0, 2, 1, 2]", 3), Ok(vec![1, 0, 2]));
        assert_eq!(parse_order("[-1, 1.5, 3]", 3), Ok(vec![2, 0, 1]));
    }

    #[test]
    fn without_an_array_the_standalone_numbers_count() {
        assert_eq!(
            parse_order("The best is 3, then #1 and (2).", 4),
            Ok(vec![2, 0, 1, 3])
        );
        // Numbers inside paths, words, versions and larger numbers are not candidates.
        assert_eq!(
            parse_order("GET /v1/pets v2 OAuth2 2.0 200 then 4", 5),
            Ok(vec![3, 0, 1, 2, 4])
        );
        // A cut-off array (the token budget ran out) still gives what it holds.
        assert_eq!(parse_order("[4, 2, 1", 4), Ok(vec![3, 1, 0, 2]));
        // A reasoning model's thoughts do not count.
        assert_eq!(
            parse_order("<think>maybe 1</think>\n[2]", 2),
            Ok(vec![1, 0])
        );
    }

    #[test]
    fn an_answer_naming_no_candidate_is_garbage_and_says_what_it_was() {
        let err = parse_order("I cannot help with that.", 3).unwrap_err();
        assert_eq!(
            err,
            "its answer named none of the 3 candidates (\"I cannot help with that.\")"
        );
        assert!(parse_order("[]", 3).unwrap_err().contains("none of the 3"));
        assert!(parse_order("[7, 8]", 3).is_err());
        assert!(parse_order("", 3).unwrap_err().contains("an empty answer"));
        let long = "x".repeat(500);
        assert!(parse_order(&long, 3).unwrap_err().len() < 120);
    }

    #[test]
    fn scores_put_items_in_the_order() {
        let mut items = vec!["a", "b", "c", "d"];
        crate::rerank::reorder(&mut items, &scores_for(&[2, 0, 1, 3]), 3).unwrap();
        assert_eq!(items, vec!["c", "a", "b"]);
    }

    #[test]
    fn the_prompt_numbers_one_line_per_candidate() {
        let prompt = user_prompt(
            "how do I\nadd a pet?",
            &[
                "POST /pet addPet: Add a pet".into(),
                "GET  /pet/{id}\n getPet".into(),
            ],
        );
        assert_eq!(
            prompt,
            "Question: how do I add a pet?\n\nCandidates:\n1 POST /pet addPet: Add a pet\n\
             2 GET /pet/{id} getPet\n\nReply with the JSON array of numbers only."
        );
        let long = user_prompt(&"q".repeat(900), &[]);
        assert!(long.len() < 600, "{}", long.len());
    }
}
