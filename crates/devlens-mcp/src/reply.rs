//! Shaping tool results: compact text for the model, structured JSON for programs.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

/// A successful result: `text` is what the model reads, `value` goes in `structuredContent`.
pub fn structured<T: Serialize>(text: String, value: &T) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = serde_json::to_value(value).ok();
    result
}

/// A failed call the model can act on: the message says what to do next.
pub fn failure(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}
