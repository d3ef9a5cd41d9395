//! A knowledge-base export file as `devlens kb import` (and the import tool and REST route)
//! reads it: JSON into the export format, every solution checked (ids, titles, texts, URLs,
//! tags, timestamps), then written in one transaction. What an import accepts must export and
//! import again; the store is emptied after each input so it stays small.

use std::sync::OnceLock;

use devlens_core::Config;
use devlens_kb::{ExportFile, KnowledgeBase};

fn knowledge_base() -> &'static KnowledgeBase {
    static KB: OnceLock<KnowledgeBase> = OnceLock::new();
    KB.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("devlens-fuzz-kb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary data folder");
        let config = Config::with_data_dir(&dir);
        KnowledgeBase::open(&config)
            .expect("the knowledge base opens")
            // No embedding model: an import stores solutions; `reembed` embeds them later.
            .with_embedder(Err("fuzzing without a model".into()))
    })
}

/// One input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let Ok(json) = std::str::from_utf8(data) else {
        return;
    };
    let kb = knowledge_base();
    if kb.import_json(json, "fuzz.json").is_err() {
        return;
    }
    let exported = kb.export_json().expect("what was imported exports");
    kb.import_json(&exported, "export.json")
        .expect("an export imports again");
    let file: ExportFile = serde_json::from_str(&exported).expect("an export is an export file");
    for solution in &file.solutions {
        kb.delete(&solution.id)
            .expect("an imported solution can be deleted");
    }
}
