//! The knowledge base family: the arguments of every knowledge-base tool, route and command —
//! saving a solution (new, or an update of a saved one) and the rules for what an update
//! changes, searching, asking, reading and deleting — and the calls they make on the knowledge
//! base (opened on first use); also the `[kb]` settings as the dev panel reads and writes them
//! (into the config file, and into the running knowledge base).
//!
//! The MCP tools deserialize these types as they are; the REST API takes the same operations
//! with bodies of its own shape where it has one (camelCase, unknown fields refused, a
//! solution created and updated by separate routes); the CLI fills them from its flags.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use devlens_core::{Report, config_edit};
use devlens_kb::{
    AskRequest, DEFAULT_TOP_K, KnowledgeBase, MAX_TOP_K, NewSolution, SearchOptions, SolutionPatch,
    calibrated_threshold,
};

pub use devlens_kb::{
    AskAnswer, Deleted, ImportReport, KbStatus, ReembedReport, Saved, SearchMode, SearchResults,
    Solution, SolutionList, SolutionRead, SyncReport, SyncRequest,
};

use crate::{App, AppError};

/// `save_solution`, `devlens kb add` and `devlens kb edit`: without `id` a new solution (title
/// and text required); with `id` an update of that solution, where only the fields given change.
///
/// On an update an empty `url` or `summary` removes it, and empty tags (or an empty list)
/// remove the tags: on a command line or in a form, an empty value is how a person says "none".
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct SaveSolution {
    /// Update this solution (the fields given); omit to save a new one.
    #[serde(default)]
    pub id: Option<String>,
    /// A short title, e.g. "Fix CORS preflight on PUT" (required when new).
    #[serde(default)]
    pub title: Option<String>,
    /// The solution: explanation, code, steps (required when new).
    #[serde(default)]
    pub text: Option<String>,
    /// Where it came from. "" removes it on update.
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// One line. "" removes it on update.
    #[serde(default)]
    pub summary: Option<String>,
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
    async fn run(self, kb: &KnowledgeBase) -> Result<Saved, AppError> {
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

/// Saves: creates a solution, or updates the one `save.id` names.
pub async fn save(app: &App, save: SaveSolution) -> Result<Saved, AppError> {
    save.run(&*app.kb()?).await
}

/// `POST /api/kb/solutions`: a new solution.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSolution {
    pub title: String,
    pub text: String,
    pub url: Option<String>,
    pub summary: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
}

/// The fields a new solution's body holds, for messages about a body that does not parse.
pub const CREATE_SOLUTION_FIELDS: &str =
    "{\"title\", \"text\", \"url\"?, \"summary\"?, \"tags\"?: [..]}";

/// Creates a solution (an empty url or summary is none).
pub async fn create(app: &App, new: CreateSolution) -> Result<Saved, AppError> {
    let save = SaveSolution {
        id: None,
        title: Some(new.title),
        text: Some(new.text),
        url: new.url,
        summary: new.summary,
        tags: Some(new.tags),
    };
    save.run(&*app.kb()?).await
}

/// `PUT /api/kb/solutions/{id}`: only the fields given change; `null` removes url or summary.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSolution {
    pub title: Option<String>,
    pub text: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub url: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    pub summary: Option<Option<String>>,
    pub tags: Option<Vec<String>>,
}

/// The fields an update's body may hold, for messages about a body that does not parse.
pub const UPDATE_SOLUTION_FIELDS: &str =
    "any of {\"title\", \"text\", \"url\", \"summary\", \"tags\"} (null removes url or summary)";

/// Updates solution `id` as `changes` says.
pub async fn update(app: &App, id: &str, changes: UpdateSolution) -> Result<Saved, AppError> {
    let patch = SolutionPatch {
        title: changes.title,
        url: changes.url,
        text: changes.text,
        summary: changes.summary,
        tags: changes.tags,
    };
    Ok(app.kb()?.update(id, patch).await?)
}

/// `search_solutions`, `devlens kb search`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct SearchSolutions {
    /// The problem, e.g. "CORS error on PUT with credentials".
    pub query: String,
    /// semantic (default, by meaning), keyword, or hybrid.
    #[serde(default)]
    pub mode: Option<SearchMode>,
    /// Results, 1–50 (default 5).
    #[serde(default, alias = "topK")]
    pub top_k: Option<usize>,
    /// Minimum cosine similarity, -1–1 (default: calibrated).
    #[serde(default, alias = "similarityThreshold")]
    pub similarity_threshold: Option<f32>,
}

/// `POST /api/kb/search`: [`SearchSolutions`] as the REST API takes it — camelCase, and a field
/// it does not know refused rather than ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchSolutionsBody {
    query: String,
    mode: Option<SearchMode>,
    #[serde(alias = "top_k")]
    top_k: Option<usize>,
    #[serde(alias = "similarity_threshold")]
    similarity_threshold: Option<f32>,
}

/// What a search body holds, for messages about one that does not parse.
pub const SEARCH_SOLUTIONS_FIELDS: &str = "{\"query\", \"mode\"?: \"semantic\"|\"keyword\"|\"hybrid\", \"topK\"?, \"similarityThreshold\"?}";

impl From<SearchSolutionsBody> for SearchSolutions {
    fn from(body: SearchSolutionsBody) -> Self {
        Self {
            query: body.query,
            mode: body.mode,
            top_k: body.top_k,
            similarity_threshold: body.similarity_threshold,
        }
    }
}

/// Saved solutions for a question, best first.
pub async fn search(app: &App, args: &SearchSolutions) -> Result<SearchResults, AppError> {
    let options = SearchOptions {
        mode: args.mode,
        top_k: args.top_k,
        similarity_threshold: args.similarity_threshold,
    };
    Ok(app.kb()?.search(&args.query, &options).await?)
}

/// `ask_knowledge_base`, `devlens kb ask`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct AskKnowledgeBase {
    /// The question.
    pub query: String,
    /// Sources to retrieve, 1–50 (default 5).
    #[serde(default, alias = "topK")]
    pub top_k: Option<usize>,
    /// Also have the configured LLM write a cited answer.
    #[serde(default, alias = "generateAnswer")]
    pub generate_answer: Option<bool>,
    /// semantic (default), keyword, or hybrid.
    #[serde(default)]
    pub mode: Option<SearchMode>,
    /// Token budget of the context, 200–32000 (default 3000).
    #[serde(default, alias = "contextLimit")]
    pub context_limit: Option<usize>,
    /// Minimum cosine similarity of a source. Not offered to models (the calibrated default
    /// serves them); the CLI and the REST API take it.
    #[serde(default, alias = "similarityThreshold")]
    #[schemars(skip)]
    pub similarity_threshold: Option<f32>,
}

/// `POST /api/kb/ask`: [`AskKnowledgeBase`] as the REST API takes it — camelCase, and a field it
/// does not know refused rather than ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AskKnowledgeBaseBody {
    query: String,
    #[serde(alias = "top_k")]
    top_k: Option<usize>,
    #[serde(alias = "generate_answer")]
    generate_answer: Option<bool>,
    mode: Option<SearchMode>,
    #[serde(alias = "context_limit")]
    context_limit: Option<usize>,
    #[serde(alias = "similarity_threshold")]
    similarity_threshold: Option<f32>,
}

/// What an ask body holds, for messages about one that does not parse.
pub const ASK_KNOWLEDGE_BASE_FIELDS: &str = "{\"query\", \"topK\"?, \"generateAnswer\"?, \"mode\"?, \"contextLimit\"?, \"similarityThreshold\"?}";

impl From<AskKnowledgeBaseBody> for AskKnowledgeBase {
    fn from(body: AskKnowledgeBaseBody) -> Self {
        Self {
            query: body.query,
            top_k: body.top_k,
            generate_answer: body.generate_answer,
            mode: body.mode,
            context_limit: body.context_limit,
            similarity_threshold: body.similarity_threshold,
        }
    }
}

/// The best solutions for a question as a numbered context with sources, and an answer from
/// the configured LLM when asked for.
pub async fn ask(app: &App, args: AskKnowledgeBase) -> Result<AskAnswer, AppError> {
    let request = AskRequest {
        query: args.query,
        top_k: args.top_k,
        mode: args.mode,
        similarity_threshold: args.similarity_threshold,
        generate_answer: args.generate_answer,
        context_limit: args.context_limit,
    };
    Ok(app.kb()?.ask(&request).await?)
}

/// `get_solution`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct GetSolution {
    /// From search_solutions or ask_knowledge_base.
    pub id: String,
    /// Where to read the text on from: a cut answer's nextOffset.
    #[serde(default)]
    pub offset: Option<usize>,
}

/// A saved solution with its text from `offset` on, in a part an agent can take in.
pub fn read(app: &App, args: &GetSolution) -> Result<SolutionRead, AppError> {
    Ok(app.kb()?.read(&args.id, args.offset.unwrap_or(0))?)
}

/// `delete_solution`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct SolutionId {
    /// From search_solutions or ask_knowledge_base.
    pub id: String,
}

/// A saved solution, whole.
pub fn get(app: &App, id: &str) -> Result<Solution, AppError> {
    Ok(app.kb()?.get(id)?)
}

/// Deletes a saved solution.
pub fn delete(app: &App, id: &str) -> Result<Deleted, AppError> {
    Ok(app.kb()?.delete(id)?)
}

/// Every solution, newest first.
pub fn list(app: &App) -> Result<SolutionList, AppError> {
    Ok(app.kb()?.list()?)
}

/// Every solution as the JSON file `devlens kb export` writes.
pub fn export_json(app: &App) -> Result<String, AppError> {
    Ok(app.kb()?.export_json()?)
}

/// Imports an export (`source_name` names it in messages): every solution or, when anything in
/// it is wrong, none.
pub fn import_json(app: &App, json: &str, source_name: &str) -> Result<ImportReport, AppError> {
    Ok(app.kb()?.import_json(json, source_name)?)
}

/// Embeds every solution lacking a current embedding, reporting `(done, total)`.
pub async fn reembed(
    app: &App,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<ReembedReport, AppError> {
    Ok(app.kb()?.reembed(progress).await?)
}

/// What a sync body holds, for messages about one that does not parse.
pub const SYNC_FIELDS: &str = "{\"model\": id or null, \"dims\": n or null, \"changes\": \
                               [{\"id\", \"title\", \"text\", \"tags\", \"createdAt\", \
                               \"updatedAt\", \"base\", …} or {\"id\", \"deleted\": true, \
                               \"updatedAt\", \"base\"}], \"known\": {id: updatedAt}, \
                               \"wantVectors\": bool}";

/// Two-way sync with the extension's knowledge base (`POST /api/kb/sync`): applies its
/// changes, answers with the server's, and then embeds, in the background, the solutions it
/// stored without vectors the server could use (the answer does not wait for the model).
pub async fn sync(app: &App, request: SyncRequest) -> Result<SyncReport, AppError> {
    let kb = app.kb()?;
    let outcome = kb.sync(request).await?;
    if !outcome.unembedded.is_empty() && outcome.report.model.is_some() {
        let ids = outcome.unembedded;
        tokio::spawn(async move {
            match kb.embed_missing(&ids).await {
                Ok(n) => tracing::debug!(embedded = n, "solutions from a sync embedded"),
                Err(e) => tracing::warn!(
                    "embedding {} solutions from a sync failed: {e}; `devlens kb reembed` \
                     embeds them",
                    ids.len()
                ),
            }
        });
    }
    Ok(outcome.report)
}

/// Counts, the embedding model, the effective settings.
pub async fn status(app: &App) -> Result<KbStatus, AppError> {
    Ok(app.kb()?.status().await?)
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
