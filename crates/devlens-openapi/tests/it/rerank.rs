//! The second stage of an API search: a configured reranker (a cross-encoder, or a language
//! model: the `[llm]` endpoint here, the MCP client's in the devlens crate's mcp_sampling)
//! reorders the best candidates.
//!
//! The reranker here is a stand-in that prefers one endpoint, so what is checked is what the
//! explorer does with any reranker's scores: recall, order, limit, filters, failures. The
//! cross-encoder itself is tested in devlens-embed (`rerank.rs`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use devlens_core::Config;
use devlens_embed::{BoxFuture, EmbedError, LazyReranker, Reranker};
use devlens_openapi::{
    explorer::{ApiExplorer, SpecSelector},
    search::{SearchMode, SearchRequest, SearchResponse},
};

/// Scores 1 for passages that hold `prefer`, 0 for the rest; remembers what it was asked.
#[derive(Debug)]
struct Prefers {
    prefer: &'static str,
    fail: bool,
    asked: Mutex<Vec<(String, Vec<String>)>>,
}

impl Prefers {
    fn new(prefer: &'static str) -> Arc<Self> {
        Arc::new(Self {
            prefer,
            fail: false,
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl Reranker for Prefers {
    fn model(&self) -> &str {
        "prefers"
    }

    fn score<'a>(
        &'a self,
        query: &'a str,
        passages: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<f32>, EmbedError>> {
        self.asked
            .lock()
            .unwrap()
            .push((query.to_string(), passages.to_vec()));
        Box::pin(async move {
            if self.fail {
                return Err(EmbedError::Inference("the model ran out of memory".into()));
            }
            Ok(passages
                .iter()
                .map(|p| f32::from(u8::from(p.contains(self.prefer))))
                .collect())
        })
    }
}

fn config(data: &Path, candidates: Option<usize>) -> Config {
    let mut config = Config::with_data_dir(data);
    config.file.embedding.rerank_candidates = candidates;
    config
}

fn petstore() -> SpecSelector {
    let path: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/swagger2-petstore.json");
    SpecSelector {
        project: None,
        spec: Some(path.display().to_string()),
    }
}

fn question(q: &str, limit: i64) -> SearchRequest {
    SearchRequest::new(
        Some(q.into()),
        None,
        None,
        Some(limit),
        Some(SearchMode::Keyword),
    )
    .unwrap()
}

fn ids(api_hits: &[devlens_openapi::search::SearchHit]) -> Vec<&str> {
    api_hits
        .iter()
        .map(|h| h.operation_id.as_deref().unwrap_or(""))
        .collect()
}

#[tokio::test]
async fn the_reranker_reorders_the_best_candidates_and_the_limit_applies_after() {
    let data = tempfile::tempdir().unwrap();
    let plain = ApiExplorer::new(config(data.path(), None));
    let first_stage = plain
        .search(&petstore(), &question("pet", 8))
        .await
        .unwrap();
    let first = ids(&first_stage.results);
    assert_ne!(
        first[0], "uploadFile",
        "the first stage ranks another first"
    );
    let upload_at = first.iter().position(|id| *id == "uploadFile").unwrap();
    assert!(upload_at >= 2, "{first:?}");

    let reranker = Prefers::new("OperationId: uploadFile");
    let api = ApiExplorer::new(config(data.path(), Some(upload_at + 1)))
        .with_reranker(Arc::new(LazyReranker::ready(reranker.clone())));
    let response = api.search(&petstore(), &question("pet", 2)).await.unwrap();
    assert_eq!(response.notice, None);
    let reranked = response.reranked.clone().unwrap();
    assert_eq!(
        (
            reranked.by.as_str(),
            reranked.model.as_deref(),
            reranked.candidates
        ),
        ("cross-encoder", Some("prefers"), upload_at + 1)
    );
    // Two asked, but the reranker read `rerank_candidates` of them: deep enough to reach it.
    let asked = reranker.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0, "pet");
    assert_eq!(asked[0].1.len(), upload_at + 1);
    assert!(asked[0].1[0].starts_with(&format!(
        "{} {}",
        first_stage.results[0].method, first_stage.results[0].path
    )));
    // uploadFile first with the reranker's score; ties keep the first stage's order.
    assert_eq!(ids(&response.results), vec!["uploadFile", first[0]]);
    assert_eq!(response.results[0].score, 1.0);
    assert_eq!(response.results[1].score, 0.0);
}

#[tokio::test]
async fn filters_hold_and_listing_a_tag_is_not_reranked() {
    let data = tempfile::tempdir().unwrap();
    let reranker = Prefers::new("OperationId: uploadFile");
    let api = ApiExplorer::new(config(data.path(), None))
        .with_reranker(Arc::new(LazyReranker::ready(reranker.clone())));
    let mut request = question("pet", 5);
    request.method = Some("GET".into());
    request.details = true;
    let response = api.search(&petstore(), &request).await.unwrap();
    assert!(!response.results.is_empty());
    assert!(response.results.iter().all(|h| h.method == "GET"));
    assert!(response.results.iter().all(|h| h.details.is_some()));

    let listing = SearchRequest::new(None, Some("pet".into()), None, Some(50), None).unwrap();
    api.search(&petstore(), &listing).await.unwrap();
    assert_eq!(reranker.asked.lock().unwrap().len(), 1, "only the question");
}

#[tokio::test]
async fn a_failing_or_missing_reranker_leaves_the_first_stage_and_says_why() {
    let data = tempfile::tempdir().unwrap();
    let plain = ApiExplorer::new(config(data.path(), None))
        .search(&petstore(), &question("pet", 3))
        .await
        .unwrap();

    let failing = Arc::new(Prefers {
        prefer: "deletePet",
        fail: true,
        asked: Mutex::new(Vec::new()),
    });
    let api = ApiExplorer::new(config(data.path(), None))
        .with_reranker(Arc::new(LazyReranker::ready(failing)));
    let response = api.search(&petstore(), &question("pet", 3)).await.unwrap();
    assert_eq!(ids(&response.results), ids(&plain.results));
    let notice = response.notice.unwrap();
    assert!(notice.contains("not reranked"), "{notice}");
    assert!(notice.contains("ran out of memory"), "{notice}");
    assert!(notice.contains("reranker_dir"), "{notice}");

    // A candidate count out of range: the same answer, and the notice says what to set.
    let api = ApiExplorer::new(config(data.path(), Some(0)))
        .with_reranker(Arc::new(LazyReranker::ready(Prefers::new("deletePet"))));
    let response = api.search(&petstore(), &question("pet", 3)).await.unwrap();
    assert_eq!(ids(&response.results), ids(&plain.results));
    let notice = response.notice.unwrap();
    assert!(
        notice.contains("rerank_candidates must be between 1 and 100 (got 0)"),
        "{notice}"
    );

    // A folder that holds no model: the same answer, and the notice says what is missing.
    let empty = tempfile::tempdir().unwrap();
    let mut with_folder = config(data.path(), None);
    with_folder.file.embedding.reranker_dir = Some(empty.path().to_path_buf());
    let response = ApiExplorer::new(with_folder)
        .search(&petstore(), &question("pet", 3))
        .await
        .unwrap();
    assert_eq!(ids(&response.results), ids(&plain.results));
    let notice = response.notice.unwrap();
    assert!(notice.contains("missing config.json"), "{notice}");
}

/// What a fake OpenAI-compatible endpoint does with one chat request.
enum Llm {
    /// Answers with this text; the closure reads the prompt's user message.
    Says(fn(&str) -> String),
    /// Never answers.
    Silent,
    /// Answers with this HTTP status.
    Fails(u16),
}

/// A local OpenAI-compatible endpoint (`/v1/chat/completions`); returns its `/v1` base and the
/// request bodies it received.
async fn fake_llm(behaviour: Llm) -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    use axum::{Json, http::StatusCode, response::IntoResponse};
    let seen: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let log = Arc::clone(&seen);
    let behaviour = Arc::new(behaviour);
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |Json(body): Json<serde_json::Value>| {
            let log = Arc::clone(&log);
            let behaviour = Arc::clone(&behaviour);
            async move {
                log.lock().unwrap().push(body.clone());
                let user = body["messages"][1]["content"].as_str().unwrap_or_default();
                match &*behaviour {
                    Llm::Says(answer) => Json(serde_json::json!({
                        "choices": [{"message": {"role": "assistant", "content": answer(user)}}]
                    }))
                    .into_response(),
                    Llm::Silent => std::future::pending().await,
                    Llm::Fails(status) => StatusCode::from_u16(*status).unwrap().into_response(),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

/// `[search] rerank = "llm"` with `[llm]` at `base`.
fn llm_config(data: &Path, base: &str, timeout_secs: Option<u64>) -> Config {
    let mut config = config(data, None);
    config.file.search.rerank = Some(devlens_core::RerankChoice::Llm);
    config.file.search.rerank_timeout_secs = timeout_secs;
    config.file.llm.base_url = Some(base.into());
    config.file.llm.model = Some("ranker-7b".into());
    config
}

/// The candidate lines of a prompt: `(number, line)`.
fn candidates(user: &str) -> Vec<(usize, String)> {
    user.lines()
        .filter_map(|line| {
            let (n, rest) = line.split_once(' ')?;
            Some((n.parse().ok()?, rest.to_string()))
        })
        .collect()
}

/// The number of the candidate whose line holds `what`.
fn number_of(user: &str, what: &str) -> usize {
    candidates(user)
        .into_iter()
        .find(|(_, line)| line.contains(what))
        .unwrap_or_else(|| panic!("no candidate holds {what}: {user}"))
        .0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llm_orders_the_candidates_and_the_rest_follow_in_first_stage_order() {
    let data = tempfile::tempdir().unwrap();
    let first_stage = ApiExplorer::new(config(data.path(), None))
        .search(&petstore(), &question("pet", 20))
        .await
        .unwrap();
    let first = ids(&first_stage.results);
    assert_ne!(first[0], "uploadFile");

    // The model puts uploadFile first, then deletePet, names one number twice and one that is
    // no candidate.
    let (base, seen) = fake_llm(Llm::Says(|user| {
        let upload = number_of(user, "uploadFile");
        let delete = number_of(user, "deletePet");
        format!("```json\n[{upload}, {delete}, {upload}, 99]\n```")
    }))
    .await;
    let api = ApiExplorer::new(llm_config(data.path(), &base, None));
    let response = api.search(&petstore(), &question("pet", 4)).await.unwrap();
    assert_eq!(response.notice, None);
    let rest: Vec<&str> = first
        .iter()
        .copied()
        .filter(|id| !["uploadFile", "deletePet"].contains(id))
        .take(2)
        .collect();
    assert_eq!(
        ids(&response.results),
        [vec!["uploadFile", "deletePet"], rest].concat()
    );
    // Scores stay the first stage's: the order is the model's.
    let upload_score = first_stage
        .results
        .iter()
        .find(|h| h.operation_id.as_deref() == Some("uploadFile"))
        .unwrap()
        .score;
    assert_eq!(response.results[0].score, upload_score);
    let reranked = response.reranked.clone().unwrap();
    assert_eq!(reranked.by, "llm");
    assert_eq!(reranked.model.as_deref(), Some("ranker-7b"));
    assert_eq!(reranked.candidates, first.len().min(20));
    let text = devlens_core::Report::to_text(&response);
    assert!(
        text.starts_with("reranked by llm (ranker-7b): "),
        "the answer says who ordered it: {text}"
    );

    // One short, strict request: the question, one line per candidate, a small token budget.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let body = &seen[0];
    assert_eq!(body["model"], "ranker-7b");
    assert_eq!(body["max_tokens"], 200);
    assert_eq!(body["temperature"], 0.0);
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("JSON array")
    );
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.starts_with("Question: pet\n"), "{user}");
    let lines = candidates(user);
    assert_eq!(lines.len(), first.len().min(20));
    assert!(
        lines
            .iter()
            .any(|(_, line)| line == "POST /pets/{petId}/uploadImage uploadFile: uploads an image"),
        "{user}"
    );
}

/// Searches "pet" with `config` and checks the answer is the first stage's (`plain`), with no
/// second stage reported; its notice.
async fn first_stage_kept(config: Config, plain: &SearchResponse) -> String {
    let response = ApiExplorer::new(config)
        .search(&petstore(), &question("pet", 3))
        .await
        .unwrap();
    assert_eq!(ids(&response.results), ids(&plain.results));
    assert_eq!(response.reranked, None);
    response.notice.unwrap()
}

async fn plain_search(data: &Path) -> SearchResponse {
    ApiExplorer::new(config(data, None))
        .search(&petstore(), &question("pet", 3))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_errors_and_silence_from_the_llm_keep_the_first_stage_and_say_why() {
    let data = tempfile::tempdir().unwrap();
    let plain = plain_search(data.path()).await;

    let (base, _) = fake_llm(Llm::Says(|_| "I'd suggest looking at the pets.".into())).await;
    let notice = first_stage_kept(llm_config(data.path(), &base, None), &plain).await;
    assert!(
        notice.starts_with("not reranked by llm: its answer named none of the"),
        "{notice}"
    );
    assert!(
        notice.contains("\"I'd suggest looking at the pets.\""),
        "{notice}"
    );
    assert!(
        notice.ends_with("the first stage's order is kept"),
        "{notice}"
    );

    let (base, _) = fake_llm(Llm::Fails(500)).await;
    let notice = first_stage_kept(llm_config(data.path(), &base, None), &plain).await;
    assert!(notice.contains("answered HTTP 500"), "{notice}");

    // A model that never answers: the timeout (1 s here) passes and the first stage stands.
    let (base, seen) = fake_llm(Llm::Silent).await;
    let notice = first_stage_kept(llm_config(data.path(), &base, Some(1)), &plain).await;
    assert_eq!(seen.lock().unwrap().len(), 1, "it was asked");
    assert!(
        notice.contains(
            "not reranked by llm: no answer within 1 s (raise [search] rerank_timeout_secs"
        ),
        "{notice}"
    );

    // No endpoint configured: said, with how to configure one.
    let mut unset = config(data.path(), None);
    unset.file.search.rerank = Some(devlens_core::RerankChoice::Llm);
    let notice = first_stage_kept(unset, &plain).await;
    assert!(
        notice.contains("no [llm] endpoint is configured"),
        "{notice}"
    );
}

#[tokio::test]
async fn sampling_outside_mcp_and_a_chosen_stage_without_its_model_fall_back_with_a_notice() {
    let data = tempfile::tempdir().unwrap();
    let plain = plain_search(data.path()).await;
    let mut sampling = config(data.path(), None);
    sampling.file.search.rerank = Some(devlens_core::RerankChoice::Sampling);
    let notice = first_stage_kept(sampling, &plain).await;
    assert!(
        notice.starts_with("not reranked by sampling: only an MCP client can lend its model"),
        "{notice}"
    );

    // `none` turns a configured cross-encoder off.
    let reranker = Prefers::new("OperationId: uploadFile");
    let mut none = config(data.path(), None);
    none.file.search.rerank = Some(devlens_core::RerankChoice::None);
    let response = ApiExplorer::new(none)
        .with_reranker(Arc::new(LazyReranker::ready(reranker.clone())))
        .search(&petstore(), &question("pet", 3))
        .await
        .unwrap();
    assert_eq!(ids(&response.results), ids(&plain.results));
    assert_eq!(response.notice, None);
    assert!(reranker.asked.lock().unwrap().is_empty());
}
