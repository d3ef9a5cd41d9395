//! Secrets out of what a check shows: values under keys that name credentials, and strings
//! shaped like tokens (JWTs, long keys), are replaced before anything is reported.

use serde_json::{Map, Value};

const REDACTED: &str = "[redacted]";
/// Below this depth values are shown as `…`: a finding shows a value, not a document.
const MAX_DEPTH: usize = 6;

/// A key whose value is a credential (`password`, `apiKey`, `access_token`, `Authorization`…).
pub(crate) fn is_secret_key(key: &str) -> bool {
    let k: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    [
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "authorization",
        "cookie",
        "session",
        "credential",
        "privatekey",
        "clientsecret",
        "signature",
    ]
    .iter()
    .any(|s| k.contains(s))
}

/// A string that looks like a credential whatever its key: a JWT, a bearer header, or a long
/// run of key-like characters mixing letters and digits.
pub(crate) fn looks_secret(s: &str) -> bool {
    let t = s.trim();
    if t.starts_with("eyJ") && t.matches('.').count() == 2 {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("bearer ") || lower.starts_with("basic ") {
        return true;
    }
    t.len() >= 32
        && !t.contains(' ')
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=+/.".contains(c))
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars().any(|c| c.is_ascii_alphabetic())
        && !t.contains("://")
}

/// `value` with secrets replaced and depth bounded.
pub(crate) fn redact_value(value: &Value) -> Value {
    redact_at(value, 0)
}

fn redact_at(value: &Value, depth: usize) -> Value {
    match value {
        Value::String(s) if looks_secret(s) => Value::String(REDACTED.into()),
        Value::Array(items) if depth >= MAX_DEPTH => {
            Value::String(format!("[… {} items]", items.len()))
        }
        Value::Object(map) if depth >= MAX_DEPTH => {
            Value::String(format!("{{… {} fields}}", map.len()))
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact_at(v, depth + 1)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let shown = if is_secret_key(k) && !v.is_null() {
                        Value::String(REDACTED.into())
                    } else {
                        redact_at(v, depth + 1)
                    };
                    (k.clone(), shown)
                })
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credentials_are_hidden_by_key_and_by_shape() {
        let v = redact_value(&json!({
            "user": "ada",
            "password": "hunter2",
            "apiKey": "abc",
            "nested": {"jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", "note": "plain words here"},
            "key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc00aa11bb"
        }));
        assert_eq!(v["user"], "ada");
        assert_eq!(v["password"], REDACTED);
        assert_eq!(v["apiKey"], REDACTED);
        assert_eq!(v["nested"]["jwt"], REDACTED);
        assert_eq!(v["nested"]["note"], "plain words here");
        assert_eq!(v["key"], REDACTED);
        assert!(!looks_secret(
            "https://example.com/a/very/long/path/with/segments/123"
        ));
    }
}
