//! Shaping tool results: compact text for the model, structured JSON for programs, and
//! failures as `isError` results whose text says what to do.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use devlens_app::{Classify, Report, browser::Screenshot};

/// A successful result: `text` is what the model reads, `value` goes in `structuredContent`.
pub(crate) fn structured<T: Serialize>(text: String, value: &T) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = serde_json::to_value(value).ok();
    result
}

/// A failed call the model can act on: the message says what to do next.
pub(crate) fn failure(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

/// The reply to an application call: the result's compact text and its structured form, or the
/// error's message as an `isError` result (the model is the one who can fix its call, and MCP
/// clients hide protocol errors from it).
pub(crate) fn reply<T: Report, E: Classify>(result: Result<T, E>) -> CallToolResult {
    match result {
        Ok(value) => structured(value.to_text(), &value),
        Err(e) => failure(e),
    }
}

/// A screenshot as an MCP image block.
pub(crate) fn image_block(shot: &Screenshot) -> ContentBlock {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(&shot.data);
    ContentBlock::image(data, shot.format.mime_type())
}

/// Appends the screenshot a call asked for (or a note saying why there is none).
pub(crate) fn with_image(
    mut reply: CallToolResult,
    screenshot: Option<Result<Screenshot, String>>,
) -> CallToolResult {
    match screenshot {
        Some(Ok(shot)) => reply.content.push(image_block(&shot)),
        Some(Err(why)) => reply
            .content
            .push(ContentBlock::text(format!("no screenshot: {why}"))),
        None => {}
    }
    reply
}

/// As [`reply`], with the screenshot taken afterwards.
pub(crate) fn reply_shown<T: Report>(
    result: Result<devlens_app::browser::WithScreenshot<T>, devlens_app::AppError>,
) -> CallToolResult {
    match result {
        Ok(shown) => with_image(
            structured(shown.result.to_text(), &shown.result),
            shown.screenshot,
        ),
        Err(e) => failure(e),
    }
}
