//! Writing settings back into `devlens.toml` (the dev panel's settings), keeping the file a
//! person wrote: its comments, blank lines, order and every other table stay as they were.
//!
//! Only the lines of the keys that change are touched (a changed value keeps its line's trailing
//! comment; a new key goes after the table's last key; a missing table is appended). The
//! result is parsed again and must say exactly what was asked, with everything else unchanged,
//! before it replaces the file (atomically) — a file shaped in a way this line editor does not
//! understand (an inline `kb = { … }` table, dotted keys) is refused, not damaged.

use std::path::{Path, PathBuf};

use crate::config::{ConfigFile, KbSettings};
use crate::{Config, CoreError};

impl Config {
    /// The file settings are saved to: the config file that was read, else
    /// `<data dir>/devlens.toml` (which the next start reads).
    pub fn writable_path(&self) -> PathBuf {
        self.config_path
            .clone()
            .unwrap_or_else(|| self.data_dir.config_file())
    }
}

/// Changes the `[kb]` table of the config file at `path` (created when missing) with `change`,
/// applied to what the file says now, and keeps the rest of the file as it is. Answers the
/// `[kb]` settings the file then holds. Nothing is written when the file cannot be read or
/// parsed, or when the edit would change anything but `[kb]`.
pub fn update_kb_settings(
    path: &Path,
    change: impl FnOnce(&mut KbSettings),
) -> Result<KbSettings, CoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(CoreError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let before = parse(path, &text)?;
    let mut wanted = before.kb.clone();
    change(&mut wanted);
    let kb = &wanted;
    let old = &before.kb;
    let mut changes: Vec<(&str, Option<String>)> = Vec::new();
    if old.search_mode != kb.search_mode {
        changes.push(("search_mode", kb.search_mode.as_deref().map(quoted)));
    }
    if old.similarity_threshold != kb.similarity_threshold {
        changes.push(("similarity_threshold", kb.similarity_threshold.map(float)));
    }
    if old.top_k != kb.top_k {
        changes.push(("top_k", kb.top_k.map(|k| k.to_string())));
    }
    if old.auto_generate_answer != kb.auto_generate_answer {
        changes.push((
            "auto_generate_answer",
            kb.auto_generate_answer.map(|b| b.to_string()),
        ));
    }
    if old.show_similarity_scores != kb.show_similarity_scores {
        changes.push((
            "show_similarity_scores",
            kb.show_similarity_scores.map(|b| b.to_string()),
        ));
    }
    if changes.is_empty() {
        return Ok(wanted);
    }
    let edited = set_table_keys(&text, "kb", &changes);
    let refuse = |why: &str| CoreError::ConfigEdit {
        path: path.to_path_buf(),
        message: why.to_string(),
    };
    let after = toml::from_str::<ConfigFile>(&edited).map_err(|e| {
        refuse(&format!(
            "the edited file would not parse ({})",
            e.message().trim()
        ))
    })?;
    let unchanged_elsewhere = ConfigFile {
        kb: KbSettings::default(),
        ..after.clone()
    } == ConfigFile {
        kb: KbSettings::default(),
        ..before
    };
    if after.kb != *kb || !unchanged_elsewhere {
        return Err(refuse("the edit would not say what was asked"));
    }
    crate::paths::write_atomic(path, edited.as_bytes())?;
    Ok(wanted)
}

fn parse(path: &Path, text: &str) -> Result<ConfigFile, CoreError> {
    toml::from_str(text).map_err(|e| CoreError::ConfigSyntax {
        path: path.to_path_buf(),
        message: e.to_string().trim().replace('\n', " "),
    })
}

fn quoted(s: &str) -> String {
    // A TOML basic string is a JSON string for everything a setting holds.
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// `0.35`, not `0.3499999940395355`, and always a float (`1.0`, never the integer `1`).
fn float(f: f32) -> String {
    let s = f.to_string();
    if s.contains(['.', 'e', 'E']) || !f.is_finite() {
        s
    } else {
        format!("{s}.0")
    }
}

/// Sets (`Some(value)`, already rendered as TOML) or removes (`None`) the `keys` of the table
/// `[table]` in `text`, line by line; everything else stays byte for byte.
pub fn set_table_keys(text: &str, table: &str, changes: &[(&str, Option<String>)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut pending: Vec<(&str, &Option<String>)> = changes.iter().map(|(k, v)| (*k, v)).collect();
    let mut section: Option<(usize, usize)> = None; // header line, end (exclusive)
    let mut in_multiline: Option<&str> = None;
    let mut current_is_table = false;
    for (i, line) in lines.iter().enumerate() {
        if let Some(delimiter) = in_multiline {
            if line.matches(delimiter).count() % 2 == 1 {
                in_multiline = None;
            }
            continue;
        }
        for delimiter in ["\"\"\"", "'''"] {
            if line.matches(delimiter).count() % 2 == 1 {
                in_multiline = Some(delimiter);
            }
        }
        if let Some(name) = header_name(line) {
            if current_is_table && let Some((start, _)) = section {
                section = Some((start, i));
            }
            current_is_table = name == table;
            if current_is_table && section.is_none() {
                section = Some((i, lines.len()));
            }
        }
    }
    let Some((start, end)) = section else {
        let mut out = text.to_string();
        let additions: Vec<String> = pending
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} = {v}")))
            .collect();
        if additions.is_empty() {
            return out;
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("[{table}]\n{}\n", additions.join("\n")));
        return out;
    };
    let mut last_key = start;
    let mut removed = Vec::new();
    for (i, line) in lines.iter_mut().enumerate().take(end).skip(start + 1) {
        let Some((key, value_at)) = key_of(line) else {
            continue;
        };
        last_key = i;
        let Some(at) = pending.iter().position(|(k, _)| *k == key) else {
            continue;
        };
        let (_, value) = pending.remove(at);
        match value {
            Some(value) => {
                let comment = trailing_comment(&line[value_at..]);
                let head = line[..value_at].trim_end();
                *line = match comment {
                    Some(c) => format!("{head} {value} {c}"),
                    None => format!("{head} {value}"),
                };
            }
            None => removed.push(i),
        }
    }
    let additions: Vec<String> = pending
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} = {v}")))
        .collect();
    for (n, addition) in additions.into_iter().enumerate() {
        lines.insert(last_key + 1 + n, addition);
    }
    for i in removed.into_iter().rev() {
        lines.remove(i);
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') || text.is_empty() {
        out.push('\n');
    }
    out
}

/// The table a `[name]` or `[[name]]` header line opens (quotes and spaces removed).
fn header_name(line: &str) -> Option<String> {
    let t = line.trim_start();
    if !t.starts_with('[') {
        return None;
    }
    let t = t.trim_start_matches('[');
    let end = t.find(']')?;
    Some(
        t[..end]
            .split('.')
            .map(|part| part.trim().trim_matches(['"', '\'']))
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// The key of a `key = value` line and where its value starts (after the `=`).
fn key_of(line: &str) -> Option<(String, usize)> {
    let t = line.trim_start();
    if t.is_empty() || t.starts_with('#') || t.starts_with('[') {
        return None;
    }
    let eq = line.find('=')?;
    let key = line[..eq].trim().trim_matches(['"', '\'']).to_string();
    (!key.is_empty()).then_some((key, eq + 1))
}

/// A `# comment` after a value, outside its quotes.
fn trailing_comment(value: &str) -> Option<&str> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in value.char_indices() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' => return Some(&value[i..]),
            None => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# my devlens\nactive_project = \"pets\" # the usual one\n\n\
                        [kb]\n# how many\ntop_k = 5 # results\nsearch_mode = \"hybrid\"\n\n\
                        [server]\nhttp = \"127.0.0.1:9000\"\n";

    #[test]
    fn changes_only_the_lines_of_the_keys_and_keeps_comments() {
        let out = set_table_keys(
            FILE,
            "kb",
            &[
                ("top_k", Some("8".into())),
                ("similarity_threshold", Some("0.4".into())),
                ("search_mode", None),
            ],
        );
        assert_eq!(
            out,
            "# my devlens\nactive_project = \"pets\" # the usual one\n\n[kb]\n# how many\n\
             top_k = 8 # results\nsimilarity_threshold = 0.4\n\n[server]\nhttp = \"127.0.0.1:9000\"\n"
        );
    }

    #[test]
    fn a_missing_table_is_appended() {
        let out = set_table_keys(
            "[server]\nhttp = \"x\"",
            "kb",
            &[("top_k", Some("3".into()))],
        );
        assert_eq!(out, "[server]\nhttp = \"x\"\n\n[kb]\ntop_k = 3\n");
        assert_eq!(
            set_table_keys("", "kb", &[("top_k", Some("3".into()))]),
            "[kb]\ntop_k = 3\n"
        );
    }

    #[test]
    fn saves_into_the_file_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("devlens.toml");
        std::fs::write(&path, FILE).unwrap();
        let kb = KbSettings {
            search_mode: Some("hybrid".into()),
            similarity_threshold: Some(0.35),
            top_k: Some(7),
            auto_generate_answer: Some(true),
            show_similarity_scores: Some(false),
        };
        assert_eq!(update_kb_settings(&path, |s| *s = kb.clone()).unwrap(), kb);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("similarity_threshold = 0.35\n"), "{text}");
        assert!(text.contains("top_k = 7 # results"), "{text}");
        assert!(text.starts_with("# my devlens\n"), "{text}");
        let file: ConfigFile = toml::from_str(&text).unwrap();
        assert_eq!(file.kb, kb);
        assert_eq!(file.server.http.as_deref(), Some("127.0.0.1:9000"));
        // A file that does not exist yet is created.
        let fresh = dir.path().join("new/devlens.toml");
        update_kb_settings(&fresh, |s| *s = kb.clone()).unwrap();
        let file: ConfigFile = toml::from_str(&std::fs::read_to_string(&fresh).unwrap()).unwrap();
        assert_eq!(file.kb, kb);
    }

    #[test]
    fn a_shape_the_editor_does_not_understand_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("devlens.toml");
        let inline = "kb = { top_k = 5 }\n";
        std::fs::write(&path, inline).unwrap();
        let err = update_kb_settings(&path, |s| s.top_k = Some(9))
            .unwrap_err()
            .to_string();
        assert!(err.contains("by hand"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), inline);
        // A broken file is named and kept.
        std::fs::write(&path, "top_k = = 1\n").unwrap();
        let err = update_kb_settings(&path, |s| s.top_k = Some(9))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not valid TOML"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "top_k = = 1\n");
    }

    #[test]
    fn floats_stay_short_and_floats() {
        assert_eq!(float(0.35), "0.35");
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(0.0), "0.0");
    }
}
