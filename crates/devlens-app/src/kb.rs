//! The knowledge base family's requests: saving a solution (new, or an update of a saved one),
//! and the rules for what an update changes.

use devlens_kb::{KnowledgeBase, NewSolution, Saved, SearchMode, SolutionPatch};

use crate::AppError;

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
    fn a_blank_id_is_a_new_solution() {
        let save = SaveSolution {
            id: Some("  ".into()),
            ..SaveSolution::default()
        };
        assert!(!save.is_update());
    }
}
