//! The MCP client's model, lent through sampling (`sampling/createMessage`): what
//! `[search] rerank = "sampling"` asks to order a search's best candidates.
//!
//! Only a client that declared the `sampling` capability is asked; whether a human approves the
//! request first is the client's business. The request goes out within the tool call that
//! needs it (over Streamable HTTP on that call's event stream), carries its own timeout, and is
//! cancelled (`notifications/cancelled`) when the timeout passes.

#![allow(deprecated)] // Sampling is deprecated by SEP-2577 (2026-07-28) but is what clients speak.

use std::sync::Arc;

use rmcp::{
    RoleServer,
    model::{
        ClientResult, CreateMessageRequest, CreateMessageRequestParams, ProtocolVersion,
        SamplingMessage, SamplingMessageContentBlock, ServerRequest,
    },
    service::{Peer, PeerRequestOptions, RequestContext, ServiceError},
};

use devlens_app::api::{BoxFuture, CallerModel, ChatAnswer, ChatError, ChatModel, ChatPrompt};

/// The model of the client at the other end of `peer`.
struct ClientModel {
    peer: Peer<RoleServer>,
}

impl std::fmt::Debug for ClientModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientModel")
    }
}

/// The model the caller of `context` can lend: its client's, when it declared sampling.
pub(crate) fn caller_model(context: &RequestContext<RoleServer>) -> CallerModel {
    if context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
    {
        return CallerModel::Unavailable(
            "this MCP session speaks protocol 2026-07-28, which has no server-to-client \
             requests (sampling)"
                .into(),
        );
    }
    let Some(client) = context.peer.peer_info() else {
        return CallerModel::Unavailable(
            "this MCP session did not say what its client can do (no initialize), so it \
             cannot be asked for sampling"
                .into(),
        );
    };
    if client.capabilities.sampling.is_none() {
        return CallerModel::Unavailable(
            "this MCP client did not declare the sampling capability".into(),
        );
    }
    CallerModel::Available(Arc::new(ClientModel {
        peer: context.peer.clone(),
    }))
}

impl ChatModel for ClientModel {
    fn describe(&self) -> String {
        "sampling (the MCP client's model)".into()
    }

    fn chat<'a>(&'a self, prompt: &'a ChatPrompt) -> BoxFuture<'a, Result<ChatAnswer, ChatError>> {
        Box::pin(async move {
            let params = CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text(prompt.user.clone())],
                prompt.max_tokens,
            )
            .with_system_prompt(prompt.system.clone())
            .with_temperature(prompt.temperature);
            let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
            let answer = self
                .peer
                .send_cancellable_request(request, PeerRequestOptions::with_timeout(prompt.timeout))
                .await
                .map_err(failed)?
                .await_response()
                .await
                .map_err(failed)?;
            let ClientResult::CreateMessageResult(result) = answer else {
                return Err(ChatError::Failed(
                    "the client answered sampling/createMessage with something else".into(),
                ));
            };
            let text: Vec<String> = result
                .message
                .content
                .into_vec()
                .into_iter()
                .filter_map(|block| match block {
                    SamplingMessageContentBlock::Text(text) => Some(text.text),
                    _ => None,
                })
                .collect();
            Ok(ChatAnswer {
                text: text.join("\n"),
                model: Some(result.model),
            })
        })
    }
}

/// A failed sampling request in a sentence.
fn failed(e: ServiceError) -> ChatError {
    ChatError::Failed(match e {
        ServiceError::Timeout { timeout } => return ChatError::TimedOut(timeout),
        ServiceError::McpError(error) => format!("the client refused sampling: {}", error.message),
        ServiceError::TransportClosed => "the client went away".into(),
        other => format!("sampling failed: {other}"),
    })
}
