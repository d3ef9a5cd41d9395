//! Writing settings back into `devlens.toml` (the dev panel's settings), keeping the file a
//! person wrote: its comments, blank lines, order and every other table stay as they were.
//!
//! The file is edited as a document with toml_edit (format-preserving: whitespace, comments and
//! order are part of what it reads), not as lines: only the keys that change are touched (a
//! changed value keeps its spacing and trailing comment; a new key goes after the table's last
//! key; a missing table is appended), and every shape TOML allows — an inline `kb = { … }`
//! table, dotted `kb.top_k` keys — is edited in its own shape. The result is parsed again and
//! must say exactly what was asked, with everything else unchanged, before it replaces the file
//! (atomically); anything else is refused, and the file left as it was.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, Value};

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
    let mut changes: Vec<(&str, Option<Value>)> = Vec::new();
    if old.search_mode != kb.search_mode {
        changes.push(("search_mode", kb.search_mode.as_deref().map(Value::from)));
    }
    if old.similarity_threshold != kb.similarity_threshold {
        changes.push((
            "similarity_threshold",
            kb.similarity_threshold.map(|f| Value::from(short_float(f))),
        ));
    }
    if old.top_k != kb.top_k {
        changes.push(("top_k", kb.top_k.map(|k| Value::from(k as i64))));
    }
    if old.auto_generate_answer != kb.auto_generate_answer {
        changes.push((
            "auto_generate_answer",
            kb.auto_generate_answer.map(Value::from),
        ));
    }
    if old.show_similarity_scores != kb.show_similarity_scores {
        changes.push((
            "show_similarity_scores",
            kb.show_similarity_scores.map(Value::from),
        ));
    }
    if changes.is_empty() {
        return Ok(wanted);
    }
    let refuse = |why: &str| CoreError::ConfigEdit {
        path: path.to_path_buf(),
        message: why.to_string(),
    };
    let edited = set_table_keys(&text, "kb", changes).map_err(|why| refuse(&why))?;
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

/// `0.35`, not `0.3499999940395355`: the shortest decimal that reads back as the same `f32`.
fn short_float(f: f32) -> f64 {
    f.to_string().parse().unwrap_or(f64::from(f))
}

/// Sets (`Some`) or removes (`None`) the keys of the table `[table]` in the TOML `text`, whatever
/// shape the table has (a `[table]` section, an inline table, dotted keys); everything else stays
/// byte for byte. A value that is changed keeps its spacing and trailing comment.
pub fn set_table_keys(
    text: &str,
    table: &str,
    changes: Vec<(&str, Option<Value>)>,
) -> Result<String, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("not valid TOML ({})", e.message()))?;
    if !doc.contains_key(table) {
        if changes.iter().all(|(_, v)| v.is_none()) {
            return Ok(text.to_string());
        }
        let mut new = Table::new();
        if !text.trim().is_empty() {
            // A blank line between the file's last table and the new one, as a person writes it.
            new.decor_mut().set_prefix("\n");
        }
        doc.insert(table, Item::Table(new));
    }
    let Some(keys) = doc.get_mut(table).and_then(Item::as_table_like_mut) else {
        return Err(format!("`{table}` is not a table; change it by hand"));
    };
    for (key, value) in changes {
        let Some(mut value) = value else {
            keys.remove(key);
            continue;
        };
        match keys.get_mut(key) {
            Some(Item::Value(old)) => {
                *value.decor_mut() = old.decor().clone();
                *old = value;
            }
            Some(_) => {
                return Err(format!(
                    "`{table}.{key}` is a table, not a value; change it by hand"
                ));
            }
            None => {
                keys.insert(key, Item::Value(value));
            }
        }
    }
    let mut out = doc.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# my devlens\nactive_project = \"pets\" # the usual one\n\n\
                        [kb]\n# how many\ntop_k = 5 # results\nsearch_mode = \"hybrid\"\n\n\
                        [server]\nhttp = \"127.0.0.1:9000\"\n";

    #[test]
    fn changes_only_the_keys_and_keeps_comments() {
        let out = set_table_keys(
            FILE,
            "kb",
            vec![
                ("top_k", Some(Value::from(8))),
                ("similarity_threshold", Some(Value::from(0.4))),
                ("search_mode", None),
            ],
        )
        .unwrap();
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
            vec![("top_k", Some(Value::from(3)))],
        )
        .unwrap();
        assert_eq!(out, "[server]\nhttp = \"x\"\n\n[kb]\ntop_k = 3\n");
        assert_eq!(
            set_table_keys("", "kb", vec![("top_k", Some(Value::from(3)))]).unwrap(),
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
    fn inline_tables_and_dotted_keys_are_edited_in_their_own_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("devlens.toml");
        std::fs::write(&path, "kb = { top_k = 5 } # inline\n").unwrap();
        update_kb_settings(&path, |s| s.top_k = Some(9)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "kb = { top_k = 9 } # inline\n"
        );
        std::fs::write(&path, "kb.top_k = 5\n[server]\nhttp = \"x\"\n").unwrap();
        let saved = update_kb_settings(&path, |s| {
            s.top_k = Some(9);
            s.search_mode = Some("keyword".into());
        })
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("kb.top_k = 9\n"), "{text}");
        let file: ConfigFile = toml::from_str(&text).unwrap();
        assert_eq!(file.kb, saved);
        assert_eq!(file.server.http.as_deref(), Some("x"));
    }

    #[test]
    fn a_broken_file_is_named_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("devlens.toml");
        std::fs::write(&path, "top_k = = 1\n").unwrap();
        let err = update_kb_settings(&path, |s| s.top_k = Some(9))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not valid TOML"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "top_k = = 1\n");
    }

    #[test]
    fn floats_stay_short() {
        assert_eq!(short_float(0.35), 0.35);
        assert_eq!(Value::from(short_float(1.0)).to_string(), "1.0");
        assert_eq!(Value::from(short_float(0.35)).to_string(), "0.35");
    }
}
