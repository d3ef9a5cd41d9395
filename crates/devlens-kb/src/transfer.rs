//! Export and import: every solution as one JSON file (`{"version":1,"solutions":[…]}`) that
//! round-trips byte for byte. An import is all or nothing: a file with anything wrong in it is
//! refused, naming its first problems, before anything is written.

use devlens_search::sqlite::blocking;

use crate::{
    EXPORT_VERSION, ExportFile, ImportReport, KbError, KnowledgeBase, NewSolution, solution,
    valid_id,
};

impl KnowledgeBase {
    /// Every solution in the export format.
    pub fn export(&self) -> Result<ExportFile, KbError> {
        Ok(ExportFile {
            version: EXPORT_VERSION,
            solutions: blocking(|| self.store.all())?,
        })
    }

    /// The export as pretty JSON (what `devlens kb export` writes).
    pub fn export_json(&self) -> Result<String, KbError> {
        let file = self.export()?;
        serde_json::to_string_pretty(&file)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| KbError::InvalidInput(format!("cannot serialise the export: {e}")))
    }

    /// Imports an export file: every solution or, when anything is wrong with the file, none.
    /// Solutions whose id exists are replaced; embeddings come from `reembed`.
    pub fn import_json(&self, json: &str, source_name: &str) -> Result<ImportReport, KbError> {
        let fail = |problems: String| KbError::Import {
            source_name: source_name.to_string(),
            problems,
        };
        let file: ExportFile = serde_json::from_str(json).map_err(|e| fail(e.to_string()))?;
        if file.version != EXPORT_VERSION {
            return Err(fail(format!(
                "it is format version {}, this devlens reads version {EXPORT_VERSION}",
                file.version
            )));
        }
        let mut problems = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, s) in file.solutions.iter().enumerate() {
            let at = format!("solutions[{i}] (id `{}`)", s.id);
            if !valid_id(&s.id) {
                problems.push(format!(
                    "{at}: the id must be 1–64 letters, digits, `-` or `_`"
                ));
            }
            if !seen.insert(s.id.as_str()) {
                problems.push(format!("{at}: the id appears twice"));
            }
            let cleaned = solution::clean(NewSolution {
                title: s.title.clone(),
                url: s.url.clone(),
                text: s.text.clone(),
                summary: s.summary.clone(),
                tags: s.tags.clone(),
            });
            if let Err(e) = cleaned {
                problems.push(format!("{at}: {e}"));
            }
            for (name, ts) in [("createdAt", &s.created_at), ("updatedAt", &s.updated_at)] {
                if !solution::valid_timestamp(ts) {
                    problems.push(format!("{at}: {name} `{ts}` is not an RFC 3339 timestamp"));
                }
            }
            if problems.len() >= 5 {
                break;
            }
        }
        if !problems.is_empty() {
            return Err(fail(problems.join("; ")));
        }
        let counts = blocking(|| self.store.import(&file.solutions))?;
        let need_embedding = blocking(|| {
            let model = self.embedding_model_hint();
            self.store.counts(model.as_deref())
        })
        .map(|c| c.solutions - c.embedded)?;
        Ok(ImportReport {
            imported: file.solutions.len(),
            counts,
            need_embedding,
            notice: (need_embedding > 0).then(|| {
                format!(
                    "{need_embedding} solutions have no current embedding: run `devlens kb reembed` \
                     so semantic search finds them (keyword search already does)"
                )
            }),
        })
    }

    /// The model a current embedding is made by, without loading the embedder: the loaded
    /// embedder's, else the cached vectors', else the one most solutions were embedded with (a
    /// remote provider's, say), else the local default.
    fn embedding_model_hint(&self) -> Option<String> {
        self.embedder
            .loaded_model()
            .or_else(|| {
                let c = self.vectors.lock().ok()?;
                c.as_ref().map(|c| c.model.clone())
            })
            .or_else(|| self.store.prevailing_model().ok().flatten())
            .or_else(|| Some(devlens_embed::DEFAULT_LOCAL_MODEL.to_string()))
    }
}
