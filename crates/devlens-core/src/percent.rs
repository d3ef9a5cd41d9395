//! Percent-encoding (RFC 3986, with the `percent-encoding` crate) for the few places devlens
//! builds or reads URLs by hand: resource URIs, credentials in a Redis URL.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Everything but RFC 3986's unreserved characters (`A–Z a–z 0–9 - . _ ~`).
const NOT_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes everything but the unreserved characters: what RFC 6570 simple expansion does
/// to a variable, so the result is one path segment.
pub fn encode(text: &str) -> String {
    utf8_percent_encode(text, NOT_UNRESERVED).to_string()
}

/// Undoes percent-encoding; `None` for a malformed escape or bytes that are not UTF-8. (The
/// crate's decoder keeps a malformed `%` as it is; a resource URI or a Redis password with one
/// is refused here instead of read as something else.)
pub fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let well_formed = text.match_indices('%').all(|(i, _)| {
        bytes
            .get(i + 1..i + 3)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return None;
    }
    percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(|s| s.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_bad_escapes() {
        for text in ["/facebook/react", "a b&c", "ünïcode", "plain-name_1.0~x"] {
            assert_eq!(decode(&encode(text)).as_deref(), Some(text));
        }
        assert_eq!(encode("/a b"), "%2Fa%20b");
        assert_eq!(decode("%zz"), None);
        assert_eq!(decode("%4"), None);
        assert_eq!(decode("%FF"), None, "not UTF-8");
    }
}
