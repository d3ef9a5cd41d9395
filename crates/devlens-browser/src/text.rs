//! Small text helpers that keep output short.

/// At most `max` characters of `s`, with `…` when something was cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Runs of whitespace (newlines included) collapsed to one space, trimmed.
pub(crate) fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `scheme://host:port` of an http(s) URL.
pub(crate) fn origin(url: &str) -> Option<&str> {
    let scheme_end = url.find("://")?;
    let scheme = &url[..scheme_end];
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let rest = &url[scheme_end + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    Some(&url[..scheme_end + 3 + end])
}

/// A URL as short as it can be without losing meaning: same-origin URLs lose their origin,
/// data: URLs their payload, anything very long its middle.
pub(crate) fn short_url(url: &str, page_url: &str) -> String {
    if let Some(rest) = url.strip_prefix("data:") {
        let kind = rest.split([';', ',']).next().unwrap_or("");
        return format!("data:{kind},…");
    }
    let shortened = match (origin(url), origin(page_url)) {
        (Some(a), Some(b)) if a == b => {
            let path = &url[a.len()..];
            if path.is_empty() { "/" } else { path }
        }
        _ => url,
    };
    if shortened.chars().count() > 160 {
        let head: String = shortened.chars().take(110).collect();
        let tail: String = {
            let chars: Vec<char> = shortened.chars().collect();
            chars[chars.len() - 40..].iter().collect()
        };
        format!("{head}…{tail}")
    } else {
        shortened.to_string()
    }
}

/// A byte count for people: `512 B`, `3.4 kB`, `1.2 MB`.
pub(crate) fn bytes(n: u64) -> String {
    if n < 1000 {
        format!("{n} B")
    } else if n < 1_000_000 {
        format!("{:.1} kB", n as f64 / 1000.0)
    } else {
        format!("{:.1} MB", n as f64 / 1_000_000.0)
    }
}

/// The longest prefix of `s` that is at most `max` bytes and ends on a char boundary.
pub(crate) fn prefix_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(truncate("hello", 10), "hello");
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(collapse("  a \n\t b  "), "a b");
        assert_eq!(origin("http://a:1/x?y"), Some("http://a:1"));
        assert_eq!(origin("about:blank"), None);
        assert_eq!(short_url("http://a:1/x.js", "http://a:1/"), "/x.js");
        assert_eq!(short_url("http://b/x.js", "http://a:1/"), "http://b/x.js");
        assert_eq!(
            short_url("data:image/png;base64,AAAA", ""),
            "data:image/png,…"
        );
        assert!(
            short_url(&format!("http://b/{}", "x".repeat(300)), "")
                .chars()
                .count()
                < 160
        );
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1500), "1.5 kB");
        assert_eq!(prefix_bytes("héllo", 2), "h");
    }
}
