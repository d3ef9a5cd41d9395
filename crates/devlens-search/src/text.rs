//! Text normalisation that makes identifiers searchable as words.

/// Splits identifiers into words: `listForRepo` → `list For Repo`, `issue_comment` →
/// `issue comment`, `/repos/{owner}/{repo}` → `repos owner repo`. BM25 then matches a question's
/// words against names written in code.
pub fn identifier_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_alphanumeric() {
            if let Some(p) = prev {
                let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
                let boundary = (p.is_lowercase() && c.is_uppercase())
                    || (p.is_alphabetic() && c.is_ascii_digit())
                    || (p.is_ascii_digit() && c.is_alphabetic())
                    // "HTTPServer" → "HTTP Server"
                    || (p.is_uppercase() && c.is_uppercase() && next_lower);
                if boundary {
                    out.push(' ');
                }
            }
            out.push(c);
            prev = Some(c);
        } else {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            prev = None;
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::identifier_words;

    #[test]
    fn splits_code_names_into_words() {
        assert_eq!(identifier_words("listForRepo"), "list For Repo");
        assert_eq!(
            identifier_words("issues/create-comment"),
            "issues create comment"
        );
        assert_eq!(
            identifier_words("/repos/{owner}/{repo}/pulls"),
            "repos owner repo pulls"
        );
        assert_eq!(identifier_words("getHTTPServer2"), "get HTTP Server 2");
        assert_eq!(identifier_words(""), "");
    }
}
