//! `ask`: the numbered, cited context an agent answers from, and answers generated through an
//! OpenAI-compatible endpoint (a local mock server here) — grounded in the sources, citing them,
//! retried when the server is busy, with clear errors when it is misconfigured and the key never
//! shown.

use crate::common;

use devlens_core::LlmSettings;
use devlens_core::Report;
use devlens_kb::{AskRequest, ChatClient, KnowledgeBase, NewSolution};
use serde_json::json;

async fn kb_with_solutions(dir: &tempfile::TempDir) -> KnowledgeBase {
    // Keyword retrieval: these tests are about the answer side, not the model.
    let kb = common::kb_in(dir, Err("no model in this test".into()));
    for (title, text, url) in [
        (
            "Fix CORS preflight on PUT",
            "The browser sends an OPTIONS preflight before a PUT with a JSON body. Answer it with \
             Access-Control-Allow-Methods: PUT.",
            Some("https://stackoverflow.com/q/1"),
        ),
        (
            "CORS with cookies",
            "For credentialed CORS requests set Access-Control-Allow-Credentials: true and a \
             concrete origin, never *.",
            None,
        ),
    ] {
        kb.add(NewSolution {
            title: title.into(),
            url: url.map(String::from),
            text: text.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    kb
}

fn llm(base: &str) -> LlmSettings {
    LlmSettings {
        base_url: Some(base.into()),
        model: Some("test-model".into()),
        ..LlmSettings::default()
    }
}

fn ask(query: &str, generate: Option<bool>) -> AskRequest {
    AskRequest {
        query: query.into(),
        generate_answer: generate,
        ..AskRequest::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_numbers_its_sources_and_stays_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let kb = kb_with_solutions(&dir).await;
    let answer = kb.ask(&ask("CORS preflight PUT", None)).await.unwrap();
    assert_eq!(answer.sources[0].n, 1);
    assert_eq!(answer.sources[0].title, "Fix CORS preflight on PUT");
    assert_eq!(answer.sources[0].relevance, 100);
    assert!(answer.context.starts_with(
        "[1] Fix CORS preflight on PUT\nSource: https://stackoverflow.com/q/1 · relevance 100%\n"
    ));
    assert!(
        answer
            .context
            .contains("[2] CORS with cookies\nSource: saved note, no URL")
    );
    assert_eq!(answer.answer, None);
    assert!(answer.notice.as_deref().unwrap().contains("keyword"));
    let small = kb
        .ask(&AskRequest {
            context_limit: Some(200),
            ..ask("CORS preflight PUT", None)
        })
        .await
        .unwrap();
    assert!(small.total_tokens <= 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_answer_is_grounded_in_the_sources_and_retried_when_busy() {
    let (base, seen) = common::mock_llm(|n| match n {
        0 => (429, vec![("retry-after", "0".into())], json!({"error": "busy"})),
        _ => (
            200,
            vec![],
            json!({"choices": [{"message": {"role": "assistant",
                "content": "Answer the OPTIONS preflight with Access-Control-Allow-Methods: PUT [1]."}}]}),
        ),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kb = kb_with_solutions(&dir).await.with_llm(llm(&base));
    let answer = kb
        .ask(&ask("CORS preflight PUT", Some(true)))
        .await
        .unwrap();
    assert_eq!(
        answer.answer.as_deref(),
        Some("Answer the OPTIONS preflight with Access-Control-Allow-Methods: PUT [1].")
    );
    assert_eq!(answer.answered_by.as_deref(), Some("test-model"));
    let text = answer.to_text();
    assert!(
        text.starts_with("Answer the OPTIONS") && text.contains("[1] Fix CORS"),
        "{text}"
    );

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "one 429, then the answer");
    let request = &seen[1];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.authorization, None);
    assert_eq!(request.body["model"], "test-model");
    assert_eq!(request.body["stream"], false);
    let system = request.body["messages"][0]["content"].as_str().unwrap();
    assert_eq!(request.body["messages"][0]["role"], "system");
    for rule in [
        "only the numbered sources",
        "[1], [2]",
        "do not cover the question",
    ] {
        assert!(system.contains(rule), "{rule}: {system}");
    }
    let user = request.body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("[1] Fix CORS preflight on PUT"), "{user}");
    assert!(user.ends_with("Question: CORS preflight PUT"), "{user}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_endpoint_or_sources_no_answer_is_made_up() {
    let dir = tempfile::tempdir().unwrap();
    let kb = kb_with_solutions(&dir).await;
    let answer = kb
        .ask(&ask("CORS preflight PUT", Some(true)))
        .await
        .unwrap();
    assert_eq!(answer.answer, None);
    assert!(
        answer
            .notice
            .unwrap()
            .contains("no LLM endpoint is configured")
    );
    assert!(!answer.sources.is_empty());

    // Nothing retrieved: the LLM is not asked at all.
    let (base, seen) = common::mock_llm(|_| (500, vec![], json!({}))).await;
    let kb = kb.with_llm(llm(&base));
    let answer = kb
        .ask(&ask("zebra migration patterns", Some(true)))
        .await
        .unwrap();
    assert!(answer.sources.is_empty() && answer.answer.is_none());
    assert!(answer.notice.unwrap().contains("no saved solution matches"));
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_errors_say_what_to_fix_and_never_show_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let kb = kb_with_solutions(&dir).await;
    let (base, _) = common::mock_llm(|_| (404, vec![], json!({"error": "model not found"}))).await;
    let err = kb
        .with_llm(llm(&base))
        .ask(&ask("CORS preflight PUT", Some(true)))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("HTTP 404") && err.contains("Check the base URL"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let kb = kb_with_solutions(&dir)
        .await
        .with_llm(llm("http://127.0.0.1:9/v1"));
    let err = kb
        .ask(&ask("CORS preflight PUT", Some(true)))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot reach the LLM"), "{err}");

    // The key goes in the header, and a server echoing it back does not leak it.
    let (base, seen) = common::mock_llm(|_| {
        (
            401,
            vec![],
            json!({"error": "invalid key sk-test-1234567890"}),
        )
    })
    .await;
    let env =
        |name: &str| (name == "DEVLENS_LLM_API_KEY").then(|| "sk-test-1234567890".to_string());
    let client = ChatClient::from_settings(&llm(&base), &env)
        .unwrap()
        .unwrap();
    let err = client
        .complete("system", "user")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        !err.contains("sk-test-1234567890") && err.contains("<redacted>"),
        "{err}"
    );
    assert!(err.contains("Check the API key"), "{err}");
    assert_eq!(
        seen.lock().unwrap()[0].authorization.as_deref(),
        Some("Bearer sk-test-1234567890")
    );
}

/// The configured LLM endpoint is allowed even on this machine (the mocks above), but link-local
/// and cloud metadata addresses never: an endpoint there, or one redirecting there, is refused
/// with the guard's sentence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_llm_endpoint_on_the_metadata_address_is_refused() {
    let none = |_: &str| None;
    let client = ChatClient::from_settings(&llm("http://169.254.169.254/latest/v1"), &none)
        .unwrap()
        .unwrap();
    let err = client
        .complete("system", "user")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("refused always"), "{err}");
    assert!(err.contains("[llm] base_url"), "{err}");

    let (base, seen) = common::mock_llm(|_| {
        (
            307,
            vec![(
                "location",
                "http://169.254.169.254/latest/meta-data/iam/".to_string(),
            )],
            json!({}),
        )
    })
    .await;
    let client = ChatClient::from_settings(&llm(&base), &none)
        .unwrap()
        .unwrap();
    let err = client
        .complete("system", "user")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("refused always"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}
