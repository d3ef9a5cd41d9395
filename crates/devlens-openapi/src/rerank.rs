//! The second stage of an API search: who orders the first stage's best candidates
//! (`[search] rerank`), and how.
//!
//! - `cross-encoder` — the model in `[embedding] reranker_dir` scores each candidate's endpoint
//!   text with the question, on this machine (the default when a folder is configured);
//! - `sampling` — the MCP client's model, through `sampling/createMessage`: only an MCP caller
//!   whose client declared the capability has one ([`CallerModel`]);
//! - `llm` — the `[llm]` endpoint;
//! - `none`.
//!
//! A language model reads one compact line per candidate (method, path, operationId, one line
//! of summary) and answers with their numbers ([`devlens_search::listwise`]). It gets
//! `[search] rerank_timeout_secs`; on a timeout, an error or an answer naming no candidate the
//! search answers in its first stage's order and the notice says why: a search never fails
//! because of its second stage.

use std::sync::Arc;
use std::time::{Duration, Instant};

use devlens_core::{Config, RerankChoice};
use devlens_embed::{CallerModel, ChatError, ChatModel, ChatPrompt, Reranker};
use devlens_search::{listwise, rerank};

use crate::{
    ApiSpec, EndpointRef,
    search::{Reranked, SearchHit, SearchResponse, first_sentence, rerank_hits},
    semantic::endpoint_text,
};

/// How long past its timeout a language model that does not keep it is waited for.
const TIMEOUT_GRACE: Duration = Duration::from_secs(1);

/// The second stage a search runs.
pub(crate) enum Stage {
    CrossEncoder(Arc<dyn Reranker>),
    Model {
        by: RerankChoice,
        model: Arc<dyn ChatModel>,
        timeout: Duration,
    },
}

/// The second stage in force: `[search] rerank`, else the cross-encoder when one is configured.
pub(crate) fn choice(config: &Config, cross_encoder_configured: bool) -> RerankChoice {
    config
        .file
        .search
        .rerank
        .unwrap_or(if cross_encoder_configured {
            RerankChoice::CrossEncoder
        } else {
            RerankChoice::None
        })
}

/// The notice of a second stage that could not run or reorder: the cross-encoder's (what to fix
/// in its folder) or a language model's (who was asked).
pub(crate) fn not_reranked(by: RerankChoice, why: &str) -> String {
    match by {
        RerankChoice::CrossEncoder | RerankChoice::None => rerank::not_reranked(why),
        model => listwise::not_reranked_by(model.as_str(), why),
    }
}

/// The model a `sampling` search asks, or the notice saying why there is none.
pub(crate) fn sampling_model(caller: &CallerModel) -> Result<Arc<dyn ChatModel>, String> {
    match caller {
        CallerModel::Available(model) => Ok(Arc::clone(model)),
        CallerModel::Unavailable(why) => Err(not_reranked(RerankChoice::Sampling, why)),
    }
}

/// Runs `stage` on the hits of `response` (the first stage's, best first) and keeps `limit`;
/// what ran, or the notice of why the hits stay in the first stage's order (then cut to
/// `limit`).
pub(crate) async fn run(
    stage: Stage,
    spec: &ApiSpec,
    query: &str,
    response: &mut SearchResponse,
    limit: usize,
) -> Result<Reranked, String> {
    let candidates = response.results.len();
    let started = Instant::now();
    let ran = match stage {
        Stage::CrossEncoder(reranker) => cross_encoder(&*reranker, spec, query, response, limit)
            .await
            .map(|()| Reranked {
                by: RerankChoice::CrossEncoder.as_str().into(),
                model: Some(reranker.model().to_string()),
                candidates,
                ms: 0,
            })
            .map_err(|why| not_reranked(RerankChoice::CrossEncoder, &why)),
        Stage::Model { by, model, timeout } => {
            language_model(&*model, timeout, spec, query, response, limit)
                .await
                .map(|model| Reranked {
                    by: by.as_str().into(),
                    model,
                    candidates,
                    ms: 0,
                })
                .map_err(|why| not_reranked(by, &why))
        }
    };
    match ran {
        Ok(mut reranked) => {
            reranked.ms = started.elapsed().as_millis() as u64;
            Ok(reranked)
        }
        Err(notice) => {
            response.results.truncate(limit);
            Err(notice)
        }
    }
}

/// The cross-encoder reads the question with each hit's endpoint text and scores it.
async fn cross_encoder(
    reranker: &dyn Reranker,
    spec: &ApiSpec,
    query: &str,
    response: &mut SearchResponse,
    limit: usize,
) -> Result<(), String> {
    let texts: Vec<String> = response
        .results
        .iter()
        .map(|hit| {
            spec.find_operation(&route(hit))
                .map(endpoint_text)
                .unwrap_or_default()
        })
        .collect();
    let scores = reranker
        .score(query, &texts)
        .await
        .map_err(|e| e.to_string())?;
    rerank_hits(response, &scores, limit)
}

/// A language model orders the hits by their numbers; their scores stay the first stage's.
/// Returns the model's name when the answerer gave one.
async fn language_model(
    model: &dyn ChatModel,
    timeout: Duration,
    spec: &ApiSpec,
    query: &str,
    response: &mut SearchResponse,
    limit: usize,
) -> Result<Option<String>, String> {
    let lines: Vec<String> = response
        .results
        .iter()
        .map(|hit| candidate_line(spec, hit))
        .collect();
    let prompt = ChatPrompt {
        system: listwise::SYSTEM_PROMPT.into(),
        user: listwise::user_prompt(query, &lines),
        max_tokens: listwise::MAX_TOKENS,
        temperature: 0.0,
        timeout,
    };
    let started = Instant::now();
    let after = |why: String| format!("{why} (after {})", seconds(started.elapsed()));
    let timed_out = || {
        format!(
            "no answer within {} (raise [search] rerank_timeout_secs for a slower model)",
            seconds(timeout)
        )
    };
    // The model keeps the prompt's timeout itself (sampling cancels its request then); this
    // bound is for one that does not.
    let answer = match tokio::time::timeout(timeout + TIMEOUT_GRACE, model.chat(&prompt)).await {
        Err(_) | Ok(Err(ChatError::TimedOut(_))) => return Err(timed_out()),
        Ok(Err(e)) => return Err(after(e.to_string())),
        Ok(Ok(answer)) => answer,
    };
    let order = listwise::parse_order(&answer.text, lines.len()).map_err(after)?;
    rerank::reorder(&mut response.results, &listwise::scores_for(&order), limit)?;
    Ok(answer.model.filter(|m| !m.trim().is_empty()))
}

/// One candidate as the model reads it: `GET /pets/{petId} getPetById: Find pet by ID`.
fn candidate_line(spec: &ApiSpec, hit: &SearchHit) -> String {
    let mut line = format!("{} {}", hit.method, hit.path);
    if let Some(id) = &hit.operation_id {
        line.push(' ');
        line.push_str(id);
    }
    let about = hit
        .summary
        .clone()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| {
            spec.find_operation(&route(hit))
                .ok()
                .and_then(|op| op.description.as_deref())
                .map(first_sentence)
        });
    if let Some(about) = about.filter(|s| !s.trim().is_empty()) {
        line.push_str(": ");
        line.push_str(&about);
    }
    line
}

fn route(hit: &SearchHit) -> EndpointRef {
    EndpointRef::MethodPath {
        method: hit.method.clone(),
        path: hit.path.clone(),
    }
}

/// `840 ms`, `1.2 s`, `15 s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{} ms", d.as_millis())
    } else if s >= 10.0 || s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}
