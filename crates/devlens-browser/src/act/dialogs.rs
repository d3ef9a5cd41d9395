//! Answering the page's JavaScript dialogs (alert, confirm, prompt, beforeunload).

use serde_json::json;

use crate::effects::ActionOutcome;
use crate::error::{BrowserError, Result};
use crate::records::Blocker;
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::truncate;

impl Tab {
    /// Accepts or dismisses the open JavaScript dialog (`prompt_text` answers a prompt).
    pub async fn handle_dialog(
        &self,
        accept: bool,
        prompt_text: Option<&str>,
    ) -> Result<ActionOutcome> {
        self.check_alive()?;
        let Some(Blocker::Dialog(dialog)) = self.blocker() else {
            return Err(BrowserError::NoDialog);
        };
        let mark = self.mark().await;
        let mut params = json!({ "accept": accept });
        if let Some(text) = prompt_text {
            params["promptText"] = json!(text);
        }
        self.call(Raw::new("Page.handleJavaScriptDialog", params))
            .await?;
        // Clear it now rather than when the closing event arrives: the page is free again.
        self.state().page_state().dialog = None;
        self.state().blocker.send_replace(None);
        let action = format!(
            "{} the {} dialog \"{}\"",
            if accept { "accepted" } else { "dismissed" },
            dialog.kind,
            truncate(&dialog.message, 80)
        );
        Ok(self.finish(&mark, action, Vec::new()).await)
    }
}
