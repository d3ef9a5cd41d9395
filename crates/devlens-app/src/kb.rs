//! The knowledge base family's requests: saving a solution (new, or an update of a saved one),
//! the rules for what an update changes, and the `[kb]` settings as the dev panel reads and
//! writes them (into the config file, and into the running knowledge base).

use serde::{Deserialize, Deserializer, Serialize};

use devlens_core::{Report, config_edit};
use devlens_kb::{
    DEFAULT_TOP_K, KnowledgeBase, MAX_TOP_K, NewSolution, Saved, SearchMode, SolutionPatch,
    calibrated_threshold,
};

use crate::{App, AppError};

/// A save as a caller sends it: without `id` a new solution (title and text required); with
/// `id` an update of that solution, where only the fields given change.
///
/// On an update an empty `url` or `summary` removes it, and empty tags (or an empty list)
/// remove the tags: on a command line or in a form, an empty value is how a person says "none".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SaveSolution {
    pub id: Option<String>,
    pub title: Option<String>,
    pub text: Option<String>,
    pub url: Option<String>,
    pub summary: Option<String>,
    pub tags: Option<Vec<String>>,
}

/// `value` for an optional field of an update: `None` keeps it, `Some(None)` removes it (an
/// empty string), `Some(Some(v))` sets it.
pub fn clearable(value: Option<String>) -> Option<Option<String>> {
    value.map(|v| (!v.trim().is_empty()).then_some(v))
}

/// Tags for an update: blank ones dropped, so `--tags ""` or `[""]` leaves none.
fn update_tags(tags: Option<Vec<String>>) -> Option<Vec<String>> {
    tags.map(|tags| tags.into_iter().filter(|t| !t.trim().is_empty()).collect())
}

impl SaveSolution {
    /// Whether this save updates a saved solution.
    pub fn is_update(&self) -> bool {
        self.id.as_deref().is_some_and(|id| !id.trim().is_empty())
    }

    /// Saves: creates a solution, or updates the one `id` names.
    pub async fn run(self, kb: &KnowledgeBase) -> Result<Saved, AppError> {
        if self.is_update() {
            let id = self.id.unwrap_or_default();
            let patch = SolutionPatch {
                title: self.title,
                url: clearable(self.url),
                text: self.text,
                summary: clearable(self.summary),
                tags: update_tags(self.tags),
            };
            return Ok(kb.update(id.trim(), patch).await?);
        }
        let (Some(title), Some(text)) = (self.title, self.text) else {
            return Err(AppError::invalid(
                "a new solution needs a title and a text (or give the id of a saved solution to \
                 update it)",
            ));
        };
        let new = NewSolution {
            title,
            url: self.url.filter(|u| !u.trim().is_empty()),
            text,
            summary: self.summary.filter(|s| !s.trim().is_empty()),
            tags: self.tags.unwrap_or_default(),
        };
        Ok(kb.add(new).await?)
    }
}

/// A search mode by name (`semantic`, `keyword`, `hybrid`), or the configured default when none
/// is given.
pub fn search_mode(mode: Option<&str>) -> Result<Option<SearchMode>, AppError> {
    crate::api::search_mode(mode)
}

/// The `[kb]` settings in effect, the defaults they fall back to, and the file they are saved
/// in: what the dev panel's settings form shows.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KbSettingsView {
    /// Where saved settings go (and the next start reads them from).
    pub config_file: String,
    /// As set; `None`: the embedding model's calibrated default.
    pub similarity_threshold: Option<f32>,
    /// The calibrated threshold of the embedding model in use, when a model is available.
    pub default_similarity_threshold: Option<f32>,
    pub top_k: usize,
    pub auto_generate_answer: bool,
    pub show_similarity_scores: bool,
    /// The default search mode (`[kb] search_mode`).
    pub search_mode: SearchMode,
}

impl Report for KbSettingsView {
    fn to_text(&self) -> String {
        let threshold = match (self.similarity_threshold, self.default_similarity_threshold) {
            (Some(t), _) => format!("{t}"),
            (None, Some(d)) => format!("{d} (calibrated default)"),
            (None, None) => "calibrated default".into(),
        };
        format!(
            "similarity threshold: {threshold}\ntop k: {}\nsearch mode: {}\nauto-generate \
             answers: {}\nshow similarity scores: {}\nconfig file: {}",
            self.top_k,
            self.search_mode,
            if self.auto_generate_answer {
                "on"
            } else {
                "off"
            },
            if self.show_similarity_scores {
                "on"
            } else {
                "off"
            },
            self.config_file
        )
    }
}

/// A change to the `[kb]` settings: absent fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KbSettingsChange {
    /// `null` returns to the embedding model's calibrated default.
    #[serde(default, deserialize_with = "nullable", alias = "similarity_threshold")]
    pub similarity_threshold: Option<Option<f32>>,
    #[serde(alias = "top_k")]
    pub top_k: Option<usize>,
    #[serde(alias = "auto_generate_answer")]
    pub auto_generate_answer: Option<bool>,
    #[serde(alias = "show_similarity_scores")]
    pub show_similarity_scores: Option<bool>,
}

/// The fields a settings change may hold, for messages about a body that does not parse.
pub const KB_SETTINGS_FIELDS: &str = "any of {\"similarityThreshold\": 0..1 or null, \"topK\": \
                                      1..50, \"autoGenerateAnswer\": bool, \
                                      \"showSimilarityScores\": bool}";

/// `null` → `Some(None)`, absent → `None` (with `#[serde(default)]`), a value → `Some(Some(v))`.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

impl KbSettingsChange {
    /// Refuses values no search could use, saying what fits.
    pub fn validate(&self) -> Result<(), AppError> {
        if let Some(Some(t)) = self.similarity_threshold
            && !(0.0..=1.0).contains(&t)
        {
            return Err(AppError::invalid(format!(
                "The similarity threshold must be a number from 0 to 1 (got {t}): semantic \
                 matches scoring below it are left out. Leave it empty for the model's \
                 calibrated default."
            )));
        }
        if let Some(k) = self.top_k
            && !(1..=MAX_TOP_K).contains(&k)
        {
            return Err(AppError::invalid(format!(
                "Top-k must be a whole number from 1 to {MAX_TOP_K} (got {k}): it is how many \
                 solutions a search returns."
            )));
        }
        Ok(())
    }
}

/// The `[kb]` settings in effect in `app`'s knowledge base.
pub async fn settings(app: &App) -> Result<KbSettingsView, AppError> {
    let kb = app.kb()?;
    let s = kb.settings();
    let model = kb.embedder().await.ok().map(|e| e.model().to_string());
    Ok(KbSettingsView {
        config_file: {
            let path = app.config().writable_path();
            std::path::absolute(&path)
                .unwrap_or(path)
                .display()
                .to_string()
        },
        similarity_threshold: s.similarity_threshold,
        default_similarity_threshold: model.as_deref().map(calibrated_threshold),
        top_k: s.top_k.unwrap_or(DEFAULT_TOP_K),
        auto_generate_answer: s.auto_generate_answer.unwrap_or(false),
        show_similarity_scores: s.show_similarity_scores.unwrap_or(true),
        search_mode: s
            .search_mode
            .as_deref()
            .and_then(|m| SearchMode::parse(m).ok())
            .unwrap_or(devlens_kb::DEFAULT_MODE),
    })
}

/// Saves `change` into the config file's `[kb]` table (keeping the rest of the file and its
/// comments) and puts the file's `[kb]` settings in effect at once. A bad value or a file that
/// cannot be edited changes nothing.
pub async fn save_settings(
    app: &App,
    change: KbSettingsChange,
) -> Result<KbSettingsView, AppError> {
    change.validate()?;
    let kb = app.kb()?;
    let path = app.config().writable_path();
    let saved = config_edit::update_kb_settings(&path, |s| {
        if let Some(t) = change.similarity_threshold {
            s.similarity_threshold = t;
        }
        if let Some(k) = change.top_k {
            s.top_k = Some(k);
        }
        if let Some(on) = change.auto_generate_answer {
            s.auto_generate_answer = Some(on);
        }
        if let Some(on) = change.show_similarity_scores {
            s.show_similarity_scores = Some(on);
        }
    })?;
    kb.set_settings(saved);
    settings(app).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_strings_clear_optional_fields_on_update() {
        assert_eq!(clearable(None), None);
        assert_eq!(clearable(Some(" ".into())), Some(None));
        assert_eq!(clearable(Some("x".into())), Some(Some("x".into())));
        assert_eq!(
            update_tags(Some(vec![String::new()])),
            Some(Vec::<String>::new())
        );
        assert_eq!(update_tags(None), None);
    }

    #[test]
    fn settings_out_of_range_are_refused_with_what_fits() {
        let bad = KbSettingsChange {
            similarity_threshold: Some(Some(1.5)),
            ..KbSettingsChange::default()
        };
        let err = bad.validate().unwrap_err().to_string();
        assert!(err.starts_with("The similarity threshold must be"), "{err}");
        for k in [0, 51] {
            let bad = KbSettingsChange {
                top_k: Some(k),
                ..KbSettingsChange::default()
            };
            let err = bad.validate().unwrap_err().to_string();
            assert!(err.starts_with("Top-k must be"), "{err}");
        }
        let reset: KbSettingsChange =
            serde_json::from_str(r#"{"similarityThreshold": null, "topK": 50}"#).unwrap();
        assert_eq!(reset.similarity_threshold, Some(None));
        reset.validate().unwrap();
    }

    #[tokio::test]
    async fn saved_settings_reach_the_file_and_the_running_knowledge_base() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("devlens.toml");
        std::fs::write(&path, "# mine\n[kb]\ntop_k = 5 # five\n").unwrap();
        let mut config = devlens_core::Config::with_data_dir(&dir.path().join("data"));
        config.config_path = Some(path.clone());
        config.file.kb.top_k = Some(5);
        let kb = KnowledgeBase::open_at(&dir.path().join("kb.sqlite"), &config)
            .unwrap()
            .with_embedder(Err("no model in this test".into()));
        let app = App::new(config).with_kb(kb);
        let change = KbSettingsChange {
            top_k: Some(2),
            similarity_threshold: Some(Some(0.5)),
            ..KbSettingsChange::default()
        };
        let view = save_settings(&app, change).await.unwrap();
        assert_eq!(view.top_k, 2);
        assert_eq!(app.kb().unwrap().settings().similarity_threshold, Some(0.5));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# mine\n[kb]\ntop_k = 2 # five\n"),
            "{text}"
        );
        // A bad value changes neither.
        let bad = KbSettingsChange {
            top_k: Some(0),
            ..KbSettingsChange::default()
        };
        assert!(save_settings(&app, bad).await.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert_eq!(app.kb().unwrap().settings().top_k, Some(2));
    }

    #[test]
    fn a_blank_id_is_a_new_solution() {
        let save = SaveSolution {
            id: Some("  ".into()),
            ..SaveSolution::default()
        };
        assert!(!save.is_update());
    }
}
