//! Input on a page — click, fill, type, press, hover, select, scroll — each answering with what
//! changed ([`crate::effects`]): a new URL, an HTTP status, new console errors, failed requests,
//! a dialog, a new tab.
//!
//! Input is real (CDP `Input.*` events at the element's centre, after scrolling it into view and
//! checking that nothing covers it), so pages see what a user's mouse and keyboard produce.
//! Anything that runs page code can block (an `alert()` in a click handler, a breakpoint): such
//! steps run raced against the tab's blockers, so the call returns at once with what blocked it.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::effects::ActionOutcome;
use crate::error::{BrowserError, Result};
use crate::page::dom::{ElementTarget, Resolved, page_fn};
use crate::tab::cdp::Raw;
use crate::tab::targets::Tab;
use crate::text::truncate;

/// How long the input events of one action may take before the page counts as stuck.
const ACTION_LIMIT: Duration = Duration::from_secs(10);
/// Default and longest `wait_for` timeout.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(5);
pub const MAX_WAIT: Duration = Duration::from_secs(60);
/// Longer text is inserted at once instead of key by key.
const TYPE_KEYS_MAX: usize = 2000;

/// Which mouse button.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    #[default]
    Left,
    Right,
    Middle,
}

/// How to click.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ClickOptions {
    pub button: MouseButton,
    /// Double-click.
    pub double: bool,
}

/// Where to scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
    Top,
    Bottom,
}

/// A scroll: an element into view, or the page (or a scrollable element) in a direction.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ScrollRequest {
    /// Without a direction: scroll this element into view. With one: scroll inside it.
    pub target: Option<ElementTarget>,
    pub direction: Option<ScrollDirection>,
    /// Pixels (default: most of the viewport).
    pub amount: Option<u32>,
}

const POINT_FN: &str = r#"
function(checkCovered) {
  __PRELUDE__
  const el = this;
  const info = { label: __label(el) };
  if (!el.isConnected) { info.error = 'it is no longer in the page'; return info; }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (!__visible(el)) { info.error = 'it is not visible (hidden, zero-sized or transparent)'; return info; }
  if (el.disabled) { info.error = 'it is disabled'; return info; }
  // An element of a same-origin frame can come from the page's context: use its own window.
  const win = el.ownerDocument.defaultView || window;
  info.hidden = el.ownerDocument.visibilityState === 'hidden';
  info.framed = win !== win.top;
  const r = el.getBoundingClientRect();
  info.x = r.left + r.width / 2;
  info.y = r.top + r.height / 2;
  if (checkCovered) {
    // Inside a shadow root the document would answer with the host: ask the element's root.
    const root = el.getRootNode();
    const top = (root.elementFromPoint ? root : document).elementFromPoint(info.x, info.y);
    if (top && top !== el && !el.contains(top) && !top.contains(el) && top.control !== el) {
      info.error = 'it is covered by ' + __label(top) + '; close or move that first';
    }
  }
  return info;
}
"#;

const FILL_PREP_FN: &str = r#"
function(value) {
  __PRELUDE__
  const el = this;
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || 'text').toLowerCase();
  const info = { label: __label(el), type };
  if (!el.isConnected) { info.error = 'it is no longer in the page'; return info; }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (tag === 'select') { info.kind = 'select'; return info; }
  if (tag === 'input' && (type === 'checkbox' || type === 'radio')) { info.error = 'it is a ' + type + '; click it to toggle it'; return info; }
  if (tag === 'input' && type === 'file') { info.error = 'it is a file input; devlens cannot pick files yet'; return info; }
  const textual = tag === 'textarea' || el.isContentEditable || (tag === 'input' && !['button', 'submit', 'reset', 'image', 'hidden'].includes(type));
  if (!textual) { info.error = 'it is not a text field (input, textarea, select or contenteditable)'; return info; }
  if (el.disabled) { info.error = 'it is disabled'; return info; }
  if (el.readOnly) { info.error = 'it is read-only'; return info; }
  if (!__visible(el)) { info.error = 'it is not visible'; return info; }
  if (tag === 'input' && ['date', 'time', 'datetime-local', 'month', 'week', 'range', 'color'].includes(type)) {
    // The keyboard cannot fill these; set the value as their picker would.
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    setter.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    info.kind = 'direct';
    return info;
  }
  el.focus();
  if (el.isContentEditable) {
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    const sel = (el.ownerDocument.defaultView || window).getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  } else {
    el.select();
  }
  info.kind = 'text';
  return info;
}
"#;

const VALUE_FN: &str =
    "function() { return this.isContentEditable ? this.innerText : String(this.value ?? ''); }";

const FOCUS_FN: &str = r#"
function() {
  __PRELUDE__
  const el = this;
  const info = { label: __label(el) };
  if (!el.isConnected) { info.error = 'it is no longer in the page'; return info; }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (el.disabled) { info.error = 'it is disabled'; return info; }
  el.focus();
  // The element's own root: in a shadow root the document would answer with the host.
  const active = el.getRootNode().activeElement;
  if (active !== el && !el.contains(active)) { info.error = 'it cannot take keyboard focus'; return info; }
  try { const n = (el.value || '').length; if (el.setSelectionRange) el.setSelectionRange(n, n); } catch (e) {}
  return info;
}
"#;

const SELECT_FN: &str = r#"
function(wanted) {
  __PRELUDE__
  const el = this;
  const info = { label: __label(el) };
  if (el.tagName.toLowerCase() !== 'select') { info.error = 'it is not a <select>'; return info; }
  if (el.disabled) { info.error = 'it is disabled'; return info; }
  const opts = Array.from(el.options);
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const chosen = [];
  const missing = [];
  for (const w of wanted) {
    const o = opts.find((o) => o.value === w) || opts.find((o) => norm(o.label) === norm(w));
    if (o) chosen.push(o); else missing.push(w);
  }
  info.options = opts.slice(0, 40).map((o) => o.label.trim() === o.value ? o.value : o.label.trim() + ' (' + o.value + ')');
  if (missing.length) { info.missing = missing; return info; }
  if (!el.multiple && chosen.length > 1) { info.error = 'it takes one option, not ' + chosen.length; return info; }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  for (const o of opts) o.selected = chosen.includes(o);
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  info.selected = chosen.map((o) => o.label.trim());
  return info;
}
"#;

const SCROLL_FN: &str = r#"
function(direction, amount) {
  __PRELUDE__
  const isEl = this && this.nodeType === 1;
  const el = isEl ? this : null;
  const info = { label: el ? __label(el) : 'the page' };
  if (el && !direction) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  } else {
    const box = el ? el : document.scrollingElement || document.documentElement;
    const stepY = amount || Math.round((el ? el.clientHeight : window.innerHeight) * 0.8);
    const stepX = amount || Math.round((el ? el.clientWidth : window.innerWidth) * 0.8);
    const by = { up: [0, -stepY], down: [0, stepY], left: [-stepX, 0], right: [stepX, 0] }[direction];
    if (direction === 'top') box.scrollTo({ top: 0, behavior: 'instant' });
    else if (direction === 'bottom') box.scrollTo({ top: box.scrollHeight, behavior: 'instant' });
    else if (by) box.scrollBy({ left: by[0], top: by[1], behavior: 'instant' });
  }
  const box = el && direction ? el : document.scrollingElement || document.documentElement;
  info.x = Math.round(box.scrollLeft);
  info.y = Math.round(box.scrollTop);
  info.height = Math.round(box.scrollHeight);
  info.viewport = Math.round(el && direction ? el.clientHeight : window.innerHeight);
  return info;
}
"#;

impl Tab {
    /// Scrolls the element into view and finds the point to click, or says why it cannot.
    pub(crate) async fn point(
        &self,
        el: &Resolved,
        action: &'static str,
        check_covered: bool,
    ) -> Result<(f64, f64, String)> {
        let info = self
            .call_el(el, &page_fn(POINT_FN), json!([check_covered]))
            .await?;
        let label = str_of(&info, "label");
        if let Some(reason) = info.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NotInteractable {
                action,
                element: label,
                reason: reason.to_string(),
            });
        }
        let mut x = info.get("x").and_then(Value::as_f64).unwrap_or(0.0);
        let mut y = info.get("y").and_then(Value::as_f64).unwrap_or(0.0);
        // Inside an iframe the page function measures in the frame's viewport: ask Chrome
        // where the element is in the tab's.
        if info.get("framed").and_then(Value::as_bool) == Some(true) {
            let [bx, by, bw, bh] = self.viewport_box(&el.realm, &el.object_id).await?;
            if bw > 0.0 && bh > 0.0 {
                (x, y) = (bx + bw / 2.0, by + bh / 2.0);
            }
        }
        if info.get("hidden").and_then(Value::as_bool) == Some(true) {
            self.bring_to_front().await?;
        }
        Ok((x, y, label))
    }

    /// A tab in the background (another tab of its window in front, e.g. a popup it opened)
    /// gets no frames, and Chrome holds input events until it does: bring it to the front.
    async fn bring_to_front(&self) -> Result<()> {
        self.call(Raw::new("Page.bringToFront", json!({})))
            .await
            .map(drop)
    }

    async fn front_if_hidden(&self) -> Result<()> {
        let v = self.eval_raw("document.visibilityState", true).await?;
        if v["result"].get("value").and_then(Value::as_str) == Some("hidden") {
            self.bring_to_front().await?;
        }
        Ok(())
    }

    /// Clicks an element (a snapshot ref or a CSS selector) with real mouse events.
    pub async fn click(
        &self,
        target: &ElementTarget,
        options: &ClickOptions,
    ) -> Result<ActionOutcome> {
        self.guard_running("a click")?;
        let mark = self.mark().await;
        let el = self.resolve(target).await?;
        let (x, y, label) = self.point(&el, "click", true).await?;
        let tab = self.clone();
        let opts = options.clone();
        self.run_blocking("the click", ACTION_LIMIT, async move {
            tab.mouse_click(x, y, &opts).await
        })
        .await?;
        let mut notes = Vec::new();
        if el.matches > 1 {
            notes.push(format!(
                "{} elements match {}; clicked the first visible one",
                el.matches,
                target.describe()
            ));
        }
        let verb = match (options.double, options.button) {
            (true, _) => "double-clicked",
            (false, MouseButton::Right) => "right-clicked",
            (false, MouseButton::Middle) => "middle-clicked",
            (false, MouseButton::Left) => "clicked",
        };
        Ok(self.finish(&mark, format!("{verb} {label}"), notes).await)
    }

    async fn mouse(
        &self,
        kind: &str,
        x: f64,
        y: f64,
        button: &str,
        buttons: u32,
        clicks: u32,
    ) -> Result<()> {
        self.call(Raw::new(
            "Input.dispatchMouseEvent",
            json!({
                "type": kind, "x": x, "y": y,
                "button": button, "buttons": buttons, "clickCount": clicks,
            }),
        ))
        .await
        .map(drop)
    }

    async fn mouse_click(&self, x: f64, y: f64, options: &ClickOptions) -> Result<()> {
        let (button, mask) = match options.button {
            MouseButton::Left => ("left", 1),
            MouseButton::Right => ("right", 2),
            MouseButton::Middle => ("middle", 4),
        };
        self.mouse("mouseMoved", x, y, "none", 0, 0).await?;
        let rounds = if options.double { 2 } else { 1 };
        for count in 1..=rounds {
            self.mouse("mousePressed", x, y, button, mask, count)
                .await?;
            self.mouse("mouseReleased", x, y, button, 0, count).await?;
        }
        Ok(())
    }

    /// Moves the mouse over an element (hover styles, menus, tooltips).
    pub async fn hover(&self, target: &ElementTarget) -> Result<ActionOutcome> {
        self.guard_running("hover")?;
        let mark = self.mark().await;
        let el = self.resolve(target).await?;
        let (x, y, label) = self.point(&el, "hover", false).await?;
        let tab = self.clone();
        self.run_blocking("the hover", ACTION_LIMIT, async move {
            tab.mouse("mouseMoved", x, y, "none", 0, 0).await
        })
        .await?;
        Ok(self
            .finish(&mark, format!("hovered {label}"), Vec::new())
            .await)
    }

    /// Replaces the value of a text field (input, textarea, contenteditable; a select picks the
    /// option) as typing would: focus, select all, insert.
    pub async fn fill(&self, target: &ElementTarget, value: &str) -> Result<ActionOutcome> {
        self.guard_running("fill")?;
        let el = self.resolve(target).await?;
        let mark = self.mark().await;
        let info = self
            .call_el(&el, &page_fn(FILL_PREP_FN), json!([value]))
            .await?;
        let label = str_of(&info, "label");
        if let Some(reason) = info.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NotInteractable {
                action: "fill",
                element: label,
                reason: reason.to_string(),
            });
        }
        let kind = str_of(&info, "kind");
        if kind == "select" {
            return self.select_option(target, &[value.to_string()]).await;
        }
        if kind == "text" {
            self.front_if_hidden().await?;
            let tab = self.clone();
            let text = value.to_string();
            let done = self
                .run_blocking("filling the field", ACTION_LIMIT, async move {
                    if text.is_empty() {
                        tab.key_press(&parse_key("Delete")?).await
                    } else {
                        tab.call(Raw::new("Input.insertText", json!({ "text": text })))
                            .await
                            .map(drop)
                    }
                })
                .await?;
            if done.is_none() {
                return Ok(self
                    .outcome(&mark, format!("started filling {label}"), Vec::new())
                    .await);
            }
        }
        let mut notes = Vec::new();
        let secret = str_of(&info, "type") == "password";
        if let Ok(Value::String(now)) = self.call_el(&el, VALUE_FN, Value::Null).await
            && now != value
        {
            notes.push(if secret {
                "the field does not hold the full value (maxlength or input filtering?)".to_string()
            } else {
                format!(
                    "the field now holds \"{}\", not the value given (maxlength, a mask or validation?)",
                    truncate(&now, 60)
                )
            });
        }
        let shown = if secret {
            "••••".to_string()
        } else {
            format!("\"{}\"", truncate(value, 60))
        };
        Ok(self
            .finish(&mark, format!("filled {label} with {shown}"), notes)
            .await)
    }

    /// Types text key by key into the focused element (or `target`, focused first), then
    /// presses Enter when `submit`.
    pub async fn type_text(
        &self,
        target: Option<&ElementTarget>,
        text: &str,
        submit: bool,
    ) -> Result<ActionOutcome> {
        self.guard_running("typing")?;
        let mark = self.mark().await;
        let mut label = String::from("the focused element");
        if let Some(target) = target {
            label = self.focus(target).await?;
        }
        self.front_if_hidden().await?;
        let tab = self.clone();
        let text_owned = text.to_string();
        let done = self
            .run_blocking(
                "typing",
                ACTION_LIMIT + Duration::from_millis(text.len() as u64 * 5),
                async move {
                    tab.type_keys(&text_owned).await?;
                    if submit {
                        tab.key_press(&parse_key("Enter")?).await?;
                    }
                    Ok(())
                },
            )
            .await?;
        let verb = if done.is_some() {
            "typed"
        } else {
            "started typing"
        };
        let action = format!(
            "{verb} \"{}\" into {label}{}",
            truncate(text, 60),
            if submit { " and pressed Enter" } else { "" }
        );
        Ok(self.finish(&mark, action, Vec::new()).await)
    }

    /// Presses a key or a combination (`Enter`, `Escape`, `ArrowDown`, `Control+A`,
    /// `Shift+Tab`), on `target` (focused first) or the focused element.
    pub async fn press_key(
        &self,
        key: &str,
        target: Option<&ElementTarget>,
    ) -> Result<ActionOutcome> {
        self.guard_running("a key press")?;
        let combo = parse_key(key)?;
        let mark = self.mark().await;
        if let Some(target) = target {
            self.focus(target).await?;
        }
        self.front_if_hidden().await?;
        let tab = self.clone();
        let c = combo.clone();
        self.run_blocking("the key press", ACTION_LIMIT, async move {
            tab.key_press(&c).await
        })
        .await?;
        Ok(self
            .finish(&mark, format!("pressed {}", combo.display), Vec::new())
            .await)
    }

    async fn focus(&self, target: &ElementTarget) -> Result<String> {
        let el = self.resolve(target).await?;
        let info = self.call_el(&el, &page_fn(FOCUS_FN), Value::Null).await?;
        let label = str_of(&info, "label");
        if let Some(reason) = info.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NotInteractable {
                action: "focus",
                element: label,
                reason: reason.to_string(),
            });
        }
        Ok(label)
    }

    async fn type_keys(&self, text: &str) -> Result<()> {
        if text.chars().count() > TYPE_KEYS_MAX {
            return self
                .call(Raw::new("Input.insertText", json!({ "text": text })))
                .await
                .map(drop);
        }
        for ch in text.chars() {
            match ch {
                '\n' => self.key_press(&parse_key("Enter")?).await?,
                '\t' => self.key_press(&parse_key("Tab")?).await?,
                '\r' => {}
                _ => {
                    let s = ch.to_string();
                    let def = key_definition(&s);
                    let mut down = json!({
                        "type": "keyDown", "key": s, "text": s, "unmodifiedText": s,
                    });
                    if let Some(def) = def {
                        down["code"] = json!(def.code);
                        down["windowsVirtualKeyCode"] = json!(def.key_code);
                    }
                    self.call(Raw::new("Input.dispatchKeyEvent", down.clone()))
                        .await?;
                    let mut up = down;
                    up["type"] = json!("keyUp");
                    if let Some(o) = up.as_object_mut() {
                        o.remove("text");
                        o.remove("unmodifiedText");
                    }
                    self.call(Raw::new("Input.dispatchKeyEvent", up)).await?;
                }
            }
        }
        Ok(())
    }

    async fn key_press(&self, combo: &KeyCombo) -> Result<()> {
        let mut modifiers = 0;
        for m in &combo.modifiers {
            modifiers |= m.bit;
            self.call(Raw::new(
                "Input.dispatchKeyEvent",
                json!({
                    "type": "rawKeyDown", "key": m.key, "code": m.code,
                    "windowsVirtualKeyCode": m.key_code, "modifiers": modifiers,
                }),
            ))
            .await?;
        }
        // Text only without Control/Alt/Meta: Control+A selects, it does not type "a".
        let text = combo.text.as_deref().filter(|_| modifiers & 0b111 == 0);
        let mut down = json!({
            "type": if text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": combo.key, "code": combo.code,
            "windowsVirtualKeyCode": combo.key_code, "modifiers": modifiers,
        });
        if let Some(t) = text {
            down["text"] = json!(t);
            down["unmodifiedText"] = json!(t);
        }
        self.call(Raw::new("Input.dispatchKeyEvent", down)).await?;
        self.call(Raw::new(
            "Input.dispatchKeyEvent",
            json!({
                "type": "keyUp", "key": combo.key, "code": combo.code,
                "windowsVirtualKeyCode": combo.key_code, "modifiers": modifiers,
            }),
        ))
        .await?;
        for m in combo.modifiers.iter().rev() {
            modifiers &= !m.bit;
            self.call(Raw::new(
                "Input.dispatchKeyEvent",
                json!({
                    "type": "keyUp", "key": m.key, "code": m.code,
                    "windowsVirtualKeyCode": m.key_code, "modifiers": modifiers,
                }),
            ))
            .await?;
        }
        Ok(())
    }

    /// Selects options of a `<select>` by value or visible label.
    pub async fn select_option(
        &self,
        target: &ElementTarget,
        values: &[String],
    ) -> Result<ActionOutcome> {
        self.guard_running("selecting an option")?;
        if values.is_empty() {
            return Err(BrowserError::InvalidInput(
                "give the option(s) to select, by value or by visible label".into(),
            ));
        }
        let mark = self.mark().await;
        let el = self.resolve(target).await?;
        let tab = self.clone();
        let wanted = json!([values]);
        let info = self
            .run_blocking("selecting the option", ACTION_LIMIT, async move {
                tab.call_el(&el, &page_fn(SELECT_FN), wanted).await
            })
            .await?;
        let Some(info) = info else {
            return Ok(self
                .outcome(&mark, format!("selected {}", values.join(", ")), Vec::new())
                .await);
        };
        let label = str_of(&info, "label");
        if let Some(reason) = info.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NotInteractable {
                action: "select an option of",
                element: label,
                reason: reason.to_string(),
            });
        }
        let options: Vec<String> = strings(&info, "options");
        let missing = strings(&info, "missing");
        if let Some(first) = missing.first() {
            let close =
                devlens_core::suggest::closest(first, options.iter().map(String::as_str), 3);
            let mut msg = format!("{label} has no option \"{first}\".");
            if !close.is_empty() {
                let _ = write!(msg, " Did you mean {}?", close.join(", "));
            }
            let _ = write!(msg, " Options: {}", options.join(", "));
            return Err(BrowserError::InvalidInput(truncate(&msg, 1500)));
        }
        let selected = strings(&info, "selected")
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(self
            .finish(&mark, format!("selected {selected} in {label}"), Vec::new())
            .await)
    }

    /// Scrolls an element into view, or the page (or a scrollable element) in a direction.
    pub async fn scroll(&self, request: &ScrollRequest) -> Result<ActionOutcome> {
        self.guard_running("scrolling")?;
        let mark = self.mark().await;
        let direction = request.direction.map(|d| match d {
            ScrollDirection::Up => "up",
            ScrollDirection::Down => "down",
            ScrollDirection::Left => "left",
            ScrollDirection::Right => "right",
            ScrollDirection::Top => "top",
            ScrollDirection::Bottom => "bottom",
        });
        if request.target.is_none() && direction.is_none() {
            return Err(BrowserError::InvalidInput(
                "say where to scroll: a direction (up, down, left, right, top, bottom) and/or an element to bring into view".into(),
            ));
        }
        let args = json!([direction, request.amount]);
        let function = page_fn(SCROLL_FN);
        let info = match &request.target {
            Some(t) => {
                let el = self.resolve(t).await?;
                self.call_el(&el, &function, args).await?
            }
            None => self.call_fn(&function, args).await?,
        };
        let label = str_of(&info, "label");
        let y = info.get("y").and_then(Value::as_i64).unwrap_or(0);
        let height = info.get("height").and_then(Value::as_i64).unwrap_or(0);
        let viewport = info.get("viewport").and_then(Value::as_i64).unwrap_or(0);
        let action = match direction {
            None => format!("scrolled {label} into view"),
            Some(d) => format!(
                "scrolled {}{}; now at {y} px of {height} px (viewport {viewport} px)",
                if request.target.is_some() {
                    format!("{label} ")
                } else {
                    String::new()
                },
                match d {
                    "top" | "bottom" => format!("to the {d}"),
                    _ => d.to_string(),
                }
            ),
        };
        Ok(self.finish(&mark, action, Vec::new()).await)
    }
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

pub(crate) fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A modifier key with its `modifiers` bit.
#[derive(Debug, Clone)]
struct Modifier {
    key: &'static str,
    code: &'static str,
    key_code: i64,
    bit: u32,
}

/// A parsed key combination.
#[derive(Debug, Clone)]
struct KeyCombo {
    modifiers: Vec<Modifier>,
    key: String,
    code: String,
    key_code: i64,
    text: Option<String>,
    display: String,
}

fn modifier(name: &str) -> Option<Modifier> {
    let (key, code, key_code, bit) = match name.to_ascii_lowercase().as_str() {
        "alt" | "option" => ("Alt", "AltLeft", 18, 1),
        "control" | "ctrl" => ("Control", "ControlLeft", 17, 2),
        "meta" | "cmd" | "command" | "super" => ("Meta", "MetaLeft", 91, 4),
        "shift" => ("Shift", "ShiftLeft", 16, 8),
        _ => return None,
    };
    Some(Modifier {
        key,
        code,
        key_code,
        bit,
    })
}

/// The US-layout definition of a key name (`Enter`, `a`, `ArrowDown`), the main-keyboard one
/// when the numpad has the same key.
fn key_definition(name: &str) -> Option<&'static chromiumoxide::keys::KeyDefinition> {
    let layout = &chromiumoxide::keys::USKEYBOARD_LAYOUT;
    let exact = || layout.iter().filter(|d| d.key == name);
    exact()
        .find(|d| !d.code.starts_with("Numpad"))
        .or_else(|| exact().next())
}

/// Parses `Enter`, `escape`, `Control+Shift+K`, `Meta+a`, `+`.
fn parse_key(input: &str) -> Result<KeyCombo> {
    let input = input.trim();
    if input.is_empty() {
        return Err(BrowserError::InvalidInput(
            "give a key, e.g. Enter, Escape, Tab, ArrowDown, Control+A".into(),
        ));
    }
    // A trailing "+" is the plus key itself ("Control++").
    let (mods_part, key_name) = if input == "+" {
        ("", "+")
    } else if let Some(stripped) = input.strip_suffix("++") {
        (stripped, "+")
    } else {
        match input.rsplit_once('+') {
            Some((m, k)) => (m, k),
            None => ("", input),
        }
    };
    let mut modifiers = Vec::new();
    for part in mods_part.split('+').filter(|p| !p.trim().is_empty()) {
        match modifier(part.trim()) {
            Some(m) => modifiers.push(m),
            None => {
                return Err(BrowserError::InvalidInput(format!(
                    "`{part}` in `{input}` is not a modifier: use Alt, Control, Meta or Shift"
                )));
            }
        }
    }
    let key_name = key_name.trim();
    let alias = match key_name.to_ascii_lowercase().as_str() {
        "esc" => "Escape".to_string(),
        "return" => "Enter".to_string(),
        "del" => "Delete".to_string(),
        "space" | "spacebar" => " ".to_string(),
        "up" => "ArrowUp".to_string(),
        "down" => "ArrowDown".to_string(),
        "left" => "ArrowLeft".to_string(),
        "right" => "ArrowRight".to_string(),
        "pgup" => "PageUp".to_string(),
        "pgdn" => "PageDown".to_string(),
        _ => key_name.to_string(),
    };
    let layout = &chromiumoxide::keys::USKEYBOARD_LAYOUT;
    let def = key_definition(&alias).or_else(|| {
        // Named keys match case-insensitively (`enter`, `arrowdown`); single letters do not.
        (alias.chars().count() > 1)
            .then(|| {
                layout
                    .iter()
                    .find(|d| d.key.eq_ignore_ascii_case(&alias))
                    .and_then(|d| key_definition(d.key))
            })
            .flatten()
    });
    let Some(def) = def else {
        if let Some(m) = modifier(&alias) {
            // A modifier pressed on its own.
            return Ok(KeyCombo {
                display: input.to_string(),
                key: m.key.to_string(),
                code: m.code.to_string(),
                key_code: m.key_code,
                text: None,
                modifiers,
            });
        }
        let names: Vec<&str> = layout
            .iter()
            .map(|d| d.key)
            .filter(|k| k.len() > 1)
            .collect();
        let close = devlens_core::suggest::closest(&alias, names, 3);
        let mut msg = format!("unknown key `{key_name}`.");
        if !close.is_empty() {
            let _ = write!(msg, " Did you mean {}?", close.join(", "));
        }
        msg.push_str(" Keys use the names of KeyboardEvent.key: Enter, Tab, Escape, Backspace, ArrowDown, PageUp, F5, a, 1, …");
        return Err(BrowserError::InvalidInput(msg));
    };
    let text = def.text.map(str::to_string).or_else(|| {
        let single = def.key.chars().count() == 1;
        single.then(|| {
            let shifted = modifiers.iter().any(|m| m.key == "Shift");
            if shifted {
                def.key.to_uppercase()
            } else {
                def.key.to_string()
            }
        })
    });
    Ok(KeyCombo {
        display: input.to_string(),
        key: def.key.to_string(),
        code: def.code.to_string(),
        key_code: def.key_code,
        text,
        modifiers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_with_modifiers_and_aliases() {
        let k = parse_key("Enter").unwrap();
        assert_eq!((k.key.as_str(), k.text.as_deref()), ("Enter", Some("\r")));
        let k = parse_key("control+a").unwrap();
        assert_eq!(k.modifiers.len(), 1);
        assert_eq!(k.code, "KeyA");
        let k = parse_key("esc").unwrap();
        assert_eq!(k.key, "Escape");
        let k = parse_key("arrowdown").unwrap();
        assert_eq!(k.code, "ArrowDown");
        let k = parse_key("Control++").unwrap();
        assert_eq!(k.key, "+");
        let e = parse_key("Entr").unwrap_err();
        assert!(e.to_string().contains("Did you mean Enter"), "{e}");
        let e = parse_key("Hyper+a").unwrap_err();
        assert!(e.to_string().contains("not a modifier"), "{e}");
        assert!(parse_key(" ").is_err());
        assert_eq!(parse_key("Shift").unwrap().key, "Shift");
    }
}
