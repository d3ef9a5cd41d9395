//! MCP completions (`completion/complete`) for prompt arguments and resource-template
//! variables: project names, operationIds and tags of a project, library ids, versions and
//! pages, knowledge-base tags and solution ids, artifact names. Values that depend on another
//! argument (a project's operationIds, a library's versions) take it from the request's
//! context, else the active project.

use std::collections::{BTreeMap, HashMap};

use rmcp::{
    ErrorData,
    model::{CompletionInfo, Reference},
};

use devlens_app::{api, artifacts, docs, kb, projects};

use crate::{DevlensServer, prompts, resources::TEMPLATES};

impl DevlensServer {
    pub(crate) async fn complete_argument(
        &self,
        reference: &Reference,
        argument: &str,
        typed: &str,
        context: &HashMap<String, String>,
    ) -> Result<CompletionInfo, ErrorData> {
        let kind = match reference {
            Reference::Prompt(p) => {
                let offered = self.prompt_list().iter().any(|x| x.name == p.name);
                match prompts::argument_kind(&p.name, argument) {
                    Some(kind) if offered => kind,
                    _ => {
                        return Err(ErrorData::invalid_params(
                            format!(
                                "no prompt `{}` with an argument `{argument}` (prompts/list \
                                 names them)",
                                p.name
                            ),
                            None,
                        ));
                    }
                }
            }
            Reference::Resource(r) => {
                let template = TEMPLATES.iter().find(|(t, _, _, family)| {
                    *t == r.uri && self.options.families.contains(*family)
                });
                match template {
                    Some((t, _, _, _)) if t.contains(&format!("{{{argument}}}")) => {
                        template_kind(argument)
                    }
                    _ => {
                        return Err(ErrorData::invalid_params(
                            format!(
                                "no resource template `{}` with a variable `{argument}` \
                                 (resources/templates/list names them)",
                                r.uri
                            ),
                            None,
                        ));
                    }
                }
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "completion/complete takes a ref/prompt or a ref/resource reference",
                    None,
                ));
            }
        };
        let project = context.get("project").cloned();
        let library = context.get("library").cloned();
        let candidates: Vec<String> = match kind {
            "project" => projects::list(self.app())
                .map(|list| list.projects.into_iter().map(|p| p.name).collect())
                .unwrap_or_default(),
            "operationId" => api::operation_ids(self.app(), &api::SpecSelector::project(project))
                .await
                .unwrap_or_default(),
            "tag" => match api::tags(self.app(), &api::SpecSelector::project(project)).await {
                Ok(list) => list.tags.into_iter().map(|t| t.name).collect(),
                Err(_) => Vec::new(),
            },
            "library" => docs::libraries(self.app())
                .map(|l| l.libraries.into_iter().map(|l| l.id).collect())
                .unwrap_or_default(),
            "version" => docs::libraries(self.app())
                .map(|l| {
                    l.libraries
                        .into_iter()
                        .filter(|l| library.as_deref().is_none_or(|id| id == l.id))
                        .flat_map(|l| l.versions)
                        .collect()
                })
                .unwrap_or_default(),
            "page" => match library {
                Some(id) => docs::outline(self.app(), &id)
                    .map(|o| o.pages.into_iter().map(|p| p.source).collect())
                    .unwrap_or_default(),
                None => Vec::new(),
            },
            "kbTags" => return Ok(self.complete_tags(typed)),
            "solution" => return Ok(self.complete_solutions(typed)),
            "artifact" => artifacts::list(self.app())
                .into_iter()
                .map(|a| a.name)
                .collect(),
            "focus" => prompts::focus_values()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            "url" => {
                let browser = self.app().browser();
                match browser.tab(None).await {
                    Ok(tab) if browser.connections().connections.iter().any(|c| c.alive) => {
                        vec![tab.url()]
                    }
                    _ => Vec::new(),
                }
            }
            _ => Vec::new(),
        };
        Ok(ranked(typed, candidates))
    }

    /// Knowledge-base tags, most used first; in a comma-separated list the last item is
    /// completed and the ones before it kept.
    fn complete_tags(&self, typed: &str) -> CompletionInfo {
        let (before, last) = match typed.rfind(',') {
            Some(i) => (&typed[..=i], typed[i + 1..].trim_start()),
            None => ("", typed),
        };
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        if let Ok(list) = kb::list(self.app()) {
            for tag in list.solutions.into_iter().flat_map(|s| s.tags) {
                *counts.entry(tag).or_default() += 1;
            }
        }
        let mut tags: Vec<(String, usize)> = counts.into_iter().collect();
        tags.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let prefix = if before.is_empty() {
            String::new()
        } else {
            format!("{before} ")
        };
        let mut info = ranked(last, tags.into_iter().map(|(t, _)| t).collect());
        for value in &mut info.values {
            *value = format!("{prefix}{value}");
        }
        info
    }

    /// Solution ids whose id starts with, or whose title contains, what was typed.
    fn complete_solutions(&self, typed: &str) -> CompletionInfo {
        let needle = typed.to_lowercase();
        let ids: Vec<String> = kb::list(self.app())
            .map(|list| {
                list.solutions
                    .into_iter()
                    .filter(|s| s.id.starts_with(typed) || s.title.to_lowercase().contains(&needle))
                    .map(|s| s.id)
                    .collect()
            })
            .unwrap_or_default();
        bounded(ids)
    }
}

fn template_kind(variable: &str) -> &'static str {
    match variable {
        "project" => "project",
        "operationId" => "operationId",
        "tag" => "tag",
        "library" => "library",
        "page" => "page",
        "id" => "solution",
        "name" => "artifact",
        _ => "free",
    }
}

/// The candidates matching `typed` (case-insensitive): those starting with it first, then
/// those containing it, each group in its given order.
fn ranked(typed: &str, candidates: Vec<String>) -> CompletionInfo {
    let needle = typed.to_lowercase();
    let mut starts = Vec::new();
    let mut contains = Vec::new();
    for c in candidates {
        let lower = c.to_lowercase();
        if lower.starts_with(&needle) {
            starts.push(c);
        } else if lower.contains(&needle) {
            contains.push(c);
        }
    }
    starts.extend(contains);
    starts.dedup();
    bounded(starts)
}

/// At most the 100 values MCP allows, with the total and whether more exist.
fn bounded(mut values: Vec<String>) -> CompletionInfo {
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let total_available = u32::try_from(total).unwrap_or(u32::MAX);
    // Within the limit by construction, so this cannot fail; an empty answer if it ever did.
    CompletionInfo::with_pagination(
        values,
        Some(total_available),
        total > CompletionInfo::MAX_VALUES,
    )
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_rank_before_substrings_and_the_list_is_bounded() {
        let info = ranked(
            "get",
            vec![
                "repos/list".into(),
                "forget-me".into(),
                "getUser".into(),
                "GetOrder".into(),
            ],
        );
        assert_eq!(info.values, vec!["getUser", "GetOrder", "forget-me"]);
        assert_eq!(info.total, Some(3));
        let many = ranked("", (0..250).map(|i| format!("op{i}")).collect());
        assert_eq!(
            (many.values.len(), many.total, many.has_more),
            (100, Some(250), Some(true))
        );
    }
}
