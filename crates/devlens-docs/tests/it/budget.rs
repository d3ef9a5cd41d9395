//! The context of `query_docs` never exceeds its token budget, whatever the question, the limit
//! or the number of results: checked over many combinations on a generated corpus with sections
//! of every size (including code blocks far larger than any budget) and, when the test data is
//! there, on the Node.js API docs.

use std::path::{Path, PathBuf};

use devlens_docs::{Docs, DocsError, DocsSource, IngestRequest, QueryDocsInput, tokens};

fn ingest(docs: &Docs, id: &str, path: &Path) {
    let request = IngestRequest {
        id: id.into(),
        source: DocsSource::Path(path.to_path_buf()),
        version: None,
        name: None,
        description: None,
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(docs.ingest(&request, &|_, _, _| {})).unwrap();
}

/// Pages whose sections range from one line to thousands of tokens, with large code blocks.
fn generated_corpus(root: &Path) {
    let words = [
        "stream", "buffer", "socket", "timer", "event", "promise", "file", "path", "worker",
        "cache", "token", "query", "server", "client", "module",
    ];
    for page in 0..12 {
        let mut text = format!("# Page {page}\n\n");
        for section in 0..10 {
            let n = (page * 7 + section * 13) % 40;
            let topic = words[(page + section) % words.len()];
            text.push_str(&format!("## {topic} section {section}\n\n"));
            for p in 0..=n / 4 {
                let sentence = format!(
                    "The {topic} API handles {} with naïve options — résumé {p}. ",
                    words[(p + section) % words.len()]
                );
                text.push_str(&sentence.repeat(1 + n));
                text.push_str("\n\n");
            }
            if section % 3 == 0 {
                let lines = 5 + n * n * 3;
                text.push_str("```js\n");
                for l in 0..lines {
                    text.push_str(&format!("const {topic}{l} = use{topic}({l}); // {topic}\n"));
                }
                text.push_str("```\n\n");
            }
        }
        std::fs::write(root.join(format!("page{page}.md")), text).unwrap();
    }
}

fn check_budget(docs: &Docs, id: &str, questions: &[&str]) -> usize {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut checked = 0;
    let mut truncated = 0;
    for (i, question) in questions.iter().enumerate() {
        for limit in [1000, 1001, 1234, 1500, 2048, 3000, 4000, 5555, 8000] {
            let max_results = 1 + (i + limit) % 20;
            for include_code in [true, false] {
                let input = QueryDocsInput {
                    library_id: id.into(),
                    query: (*question).into(),
                    version: None,
                    max_results: Some(max_results),
                    include_code: Some(include_code),
                    context_limit: Some(limit),
                };
                let output = match rt.block_on(docs.query(&input)) {
                    Ok(output) => output,
                    Err(DocsError::NoResults { .. }) => continue,
                    Err(e) => panic!("{question}: {e}"),
                };
                assert!(
                    output.total_tokens <= limit,
                    "{question} / {limit}: {} tokens",
                    output.total_tokens
                );
                assert_eq!(output.total_tokens, tokens::count(&output.context));
                assert!(!output.results.is_empty() && output.results.len() <= max_results);
                if !include_code {
                    assert!(output.results.iter().all(|r| !r.metadata.kind.is_code()));
                }
                truncated += usize::from(output.truncated);
                checked += 1;
            }
        }
    }
    assert!(truncated > 0, "some answers must have hit the budget");
    checked
}

#[test]
fn context_never_exceeds_the_limit_on_a_generated_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    generated_corpus(&pages);
    let docs = Docs::with_embedder(&dir.path().join("docs.sqlite"), None).unwrap();
    ingest(&docs, "generated", &pages);
    let questions = [
        "stream buffer",
        "how do I use the socket timer",
        "promise",
        "worker cache token",
        "naïve options résumé",
        "const use",
        "page 3 event section",
        "query server client module",
        "file path",
        "the API handles",
        "stream stream stream",
        "x",
    ];
    let checked = check_budget(&docs, "generated", &questions);
    assert!(checked > 150, "{checked}");
}

#[test]
fn context_never_exceeds_the_limit_on_the_nodejs_docs() {
    let testdata = std::env::var_os("DEVLENS_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.testdata"));
    let pages = testdata.join("nodejs-doc/md");
    if !pages.join("fs.md").is_file() {
        if std::env::var("DEVLENS_REQUIRE_TESTDATA").as_deref() == Ok("1") {
            panic!("{} is missing; run scripts/fetch-testdata", pages.display());
        }
        eprintln!("skipped: no Node.js docs (run scripts/fetch-testdata)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Keyword ranking: the budget logic does not depend on how candidates were ranked.
    let docs = Docs::with_embedder(&dir.path().join("docs.sqlite"), None).unwrap();
    ingest(&docs, "nodejs", &pages);
    let golden = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/nodejs.tsv"),
    )
    .unwrap();
    let questions: Vec<&str> = devlens_docs::parse_golden(&golden)
        .unwrap()
        .iter()
        .map(|q| q.query.clone())
        .collect::<Vec<_>>()
        .leak()
        .iter()
        .map(String::as_str)
        .collect();
    let checked = check_budget(&docs, "nodejs", &questions);
    assert!(checked > 500, "{checked}");
}
