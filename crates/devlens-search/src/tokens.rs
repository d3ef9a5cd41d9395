//! Exact token counts with OpenAI's cl100k_base, the budget unit of token-bounded contexts
//! (`query_docs`, `ask_knowledge_base`).
//!
//! The BPE ranks ship inside `tiktoken-rs`, so counting works offline. Building the encoder takes
//! a while (it parses ~100k ranks), hence one shared instance built on first use.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| {
        // The ranks are compiled into the crate: failing to parse them would be a build defect,
        // not something input can cause.
        tiktoken_rs::cl100k_base().expect("cl100k_base ranks ship with tiktoken-rs")
    })
}

/// The number of cl100k_base tokens of `text`.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    bpe().encode_ordinary(text).len()
}

/// The longest prefix of `text` that is at most `max` tokens, cut at a token boundary (and, when
/// the boundary splits a character, shortened to the last whole character).
pub fn truncate(text: &str, max: usize) -> String {
    if max == 0 {
        return String::new();
    }
    let tokens = bpe().encode_ordinary(text);
    if tokens.len() <= max {
        return text.to_string();
    }
    let mut keep = max;
    loop {
        let prefix = &tokens[..keep];
        match bpe().decode(prefix) {
            Ok(decoded) if text.starts_with(&decoded) => return decoded,
            _ if keep == 0 => return String::new(),
            _ => keep -= 1,
        }
    }
}

/// Builds the encoder now rather than inside the first timed query.
pub fn warm_up() {
    let _ = bpe();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_cl100k() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        // A well-known cl100k example: "tiktoken is great!" is 6 tokens.
        assert_eq!(count("tiktoken is great!"), 6);
    }

    #[test]
    fn truncation_stays_within_the_limit_and_is_a_prefix() {
        let text = "naïve café — résumé ".repeat(50);
        for max in [0, 1, 2, 7, 33, 100] {
            let cut = truncate(&text, max);
            assert!(count(&cut) <= max, "{max}");
            assert!(text.starts_with(&cut));
        }
        assert_eq!(truncate("short", 10), "short");
    }
}
