//! Search quality on the committed golden set (60 saved solutions, 50 paraphrased questions, 20
//! the knowledge base cannot answer) with the local model: what a user notices as "it found
//! the note I saved" and "it did not make something up when I had no note".

use crate::common;

use devlens_core::Report;
use devlens_kb::eval::parse_golden;
use devlens_kb::{SearchMode, SearchOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_solutions_are_found_by_paraphrased_questions() {
    let Some(model) = common::test_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kb = common::kb_in(&dir, Ok(model));
    let report = kb
        .import_json(&common::golden_solutions(), "solutions.json")
        .unwrap();
    assert_eq!(report.imported, 60);
    assert_eq!(report.need_embedding, 60);
    let reembed = kb.reembed(&|_, _| {}).await.unwrap();
    assert_eq!(reembed.embedded, 60);
    // Long solutions are embedded whole, in several chunks.
    assert!(reembed.chunks > 100, "{reembed:?}");

    let golden = parse_golden(&common::golden_queries()).unwrap();
    let mut reports = Vec::new();
    for mode in SearchMode::ALL {
        let options = SearchOptions {
            mode: Some(mode),
            ..SearchOptions::default()
        };
        let sweep = std::env::var_os("DEVLENS_KB_SWEEP").is_some();
        let r = kb.eval(&golden, &options, sweep).await.unwrap();
        eprintln!("{}", r.to_text());
        reports.push(r);
    }
    let semantic = &reports[0];
    assert_eq!(semantic.mode, SearchMode::Semantic);
    assert!(
        semantic.hit_at_k >= 0.9,
        "semantic hit@5 {}",
        semantic.hit_at_k
    );
    assert!(
        semantic.off_topic_empty >= 0.4,
        "{}",
        semantic.off_topic_empty
    );
    let hybrid = &reports[2];
    assert!(hybrid.hit_at_k >= 0.9, "hybrid hit@5 {}", hybrid.hit_at_k);
    assert!(hybrid.off_topic_empty >= 0.3, "{}", hybrid.off_topic_empty);
}
