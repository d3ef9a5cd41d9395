//! The per-tab event collector: one task that turns the page's protocol events into the tab's
//! console buffer, network log, navigation counters and dialog state.
//!
//! It subscribes before anything else happens on a tab devlens opens, so nothing of the first
//! load is missed. It ends when the tab's target goes away (the streams close), marking the tab
//! closed.

use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::log::EventEntryAdded;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestServedFromCache, EventRequestWillBeSent,
    EventResponseReceived, Response,
};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventFrameRequestedNavigation, EventFrameStartedLoading,
    EventFrameStoppedLoading, EventJavascriptDialogClosed, EventJavascriptDialogOpening,
    EventLoadEventFired, EventNavigatedWithinDocument,
};
use chromiumoxide::cdp::browser_protocol::target::EventTargetDestroyed;
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
use chromiumoxide::error::CdpError;
use chromiumoxide::listeners::EventStream;
use futures::stream::{BoxStream, StreamExt, select_all};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::records::console::{
    ConsoleLevel, exception_parts, format_args, frame_location, stack_frames,
};
use crate::records::network::{LoadFailure, RequestStart, ResponseInfo};
use crate::records::{Blocker, DialogInfo, TabState};

pub(crate) enum TabEvent {
    Console(Arc<EventConsoleApiCalled>),
    Exception(Arc<EventExceptionThrown>),
    Log(Arc<EventEntryAdded>),
    Request(Arc<EventRequestWillBeSent>),
    Response(Arc<EventResponseReceived>),
    Finished(Arc<EventLoadingFinished>),
    Failed(Arc<EventLoadingFailed>),
    FromCache(Arc<EventRequestServedFromCache>),
    DialogOpening(Arc<EventJavascriptDialogOpening>),
    DialogClosed,
    FrameNavigated(Arc<EventFrameNavigated>),
    NavigationRequested(Arc<EventFrameRequestedNavigation>),
    SameDocument(Arc<EventNavigatedWithinDocument>),
    StartedLoading(Arc<EventFrameStartedLoading>),
    StoppedLoading(Arc<EventFrameStoppedLoading>),
    Load,
    Destroyed,
}

/// Subscribes to the page's events and starts the task that records them.
pub(crate) async fn start(
    page: &Page,
    state: Arc<TabState>,
    destroyed: EventStream<EventTargetDestroyed>,
) -> Result<JoinHandle<()>, CdpError> {
    let target = page.target_id().clone();
    macro_rules! stream {
        ($ty:ty, $variant:ident) => {
            page.event_listener::<$ty>()
                .await?
                .map(TabEvent::$variant)
                .boxed()
        };
    }
    let streams: Vec<BoxStream<'static, TabEvent>> = vec![
        stream!(EventConsoleApiCalled, Console),
        stream!(EventExceptionThrown, Exception),
        stream!(EventEntryAdded, Log),
        stream!(EventRequestWillBeSent, Request),
        stream!(EventResponseReceived, Response),
        stream!(EventLoadingFinished, Finished),
        stream!(EventLoadingFailed, Failed),
        stream!(EventRequestServedFromCache, FromCache),
        stream!(EventJavascriptDialogOpening, DialogOpening),
        page.event_listener::<EventJavascriptDialogClosed>()
            .await?
            .map(|_| TabEvent::DialogClosed)
            .boxed(),
        stream!(EventFrameNavigated, FrameNavigated),
        stream!(EventFrameRequestedNavigation, NavigationRequested),
        stream!(EventNavigatedWithinDocument, SameDocument),
        stream!(EventFrameStartedLoading, StartedLoading),
        stream!(EventFrameStoppedLoading, StoppedLoading),
        page.event_listener::<EventLoadEventFired>()
            .await?
            .map(|_| TabEvent::Load)
            .boxed(),
        // Chrome ends the tab's streams only sometimes when it closes; the browser always
        // says which target went.
        destroyed
            .filter(move |e| std::future::ready(e.target_id == target))
            .map(|_| TabEvent::Destroyed)
            .boxed(),
    ];
    let mut events = select_all(streams);
    let mut catch_up_asked = state.catch_up_asked.subscribe();
    Ok(tokio::spawn(async move {
        loop {
            tokio::select! {
                // Events first: a request to catch up is answered only when none is waiting.
                biased;
                event = events.next() => match event {
                    None | Some(TabEvent::Destroyed) => break,
                    Some(event) => record(&state, event),
                },
                Ok(()) = catch_up_asked.changed() => {
                    let asked = *catch_up_asked.borrow_and_update();
                    state.caught_up.send_replace(asked);
                }
            }
        }
        state.mark_closed();
    }))
}

pub(crate) fn record(state: &TabState, event: TabEvent) {
    let (page_url, page_index, main_frame) = {
        let p = state.page_state();
        (p.url.clone(), p.navigations, p.main_frame.clone())
    };
    let is_main = |frame: &str| main_frame.as_deref().is_none_or(|m| m == frame);
    match event {
        TabEvent::Console(ev) => {
            let level = match ev.r#type.as_ref() {
                "error" | "assert" => ConsoleLevel::Error,
                "warning" => ConsoleLevel::Warn,
                "info" => ConsoleLevel::Info,
                "debug" => ConsoleLevel::Debug,
                // Bookkeeping calls with nothing to read.
                "clear" | "endGroup" | "profile" | "profileEnd" => return,
                _ => ConsoleLevel::Log,
            };
            let args: Vec<Value> = ev
                .args
                .iter()
                .filter_map(|a| serde_json::to_value(a).ok())
                .collect();
            let mut text = format_args(&args);
            if ev.r#type.as_ref() == "assert" {
                text = format!("Assertion failed: {text}");
            }
            let stack_json = ev
                .stack_trace
                .as_ref()
                .and_then(|s| serde_json::to_value(s).ok());
            let frames = stack_frames(stack_json.as_ref(), &page_url);
            let source = stack_json
                .as_ref()
                .and_then(|s| s.get("callFrames"))
                .and_then(Value::as_array)
                .and_then(|f| f.first())
                .and_then(|f| frame_location(f, &page_url));
            let stack = if level == ConsoleLevel::Error || ev.r#type.as_ref() == "trace" {
                frames
            } else {
                Vec::new()
            };
            state.console_mut().push(level, text, source, stack, false);
        }
        TabEvent::Exception(ev) => {
            let details = serde_json::to_value(&ev.exception_details).unwrap_or(Value::Null);
            let (text, source, stack) = exception_parts(&details, &page_url);
            state
                .console_mut()
                .push(ConsoleLevel::Error, text, source, stack, true);
        }
        TabEvent::Log(ev) => {
            let entry = &ev.entry;
            let level = match entry.level.as_ref() {
                "error" => ConsoleLevel::Error,
                "warning" => ConsoleLevel::Warn,
                // Verbose/info browser chatter (violations, interventions) is noise for agents.
                _ => return,
            };
            // Failed resources are in the network log with more detail.
            if entry.text.starts_with("Failed to load resource") {
                return;
            }
            let source = entry.url.as_deref().filter(|u| !u.is_empty()).map(|u| {
                let line = entry.line_number.unwrap_or(0) + 1;
                format!("{}:{line}", crate::text::short_url(u, &page_url))
            });
            state
                .console_mut()
                .push(level, entry.text.clone(), source, Vec::new(), false);
        }
        TabEvent::Request(ev) => {
            let headers = ev.request.headers.inner().clone();
            let redirect = ev.redirect_response.as_ref();
            let redirect_headers = redirect.map(|r| r.headers.inner().clone());
            let ty = ev.r#type.as_ref().map(|t| t.as_ref().to_string());
            let frame = ev.frame_id.as_ref().map(|f| f.as_ref().to_string());
            let start = RequestStart {
                request_id: ev.request_id.as_ref(),
                method: &ev.request.method,
                url: &full_url(&ev.request.url, ev.request.url_fragment.as_deref()),
                resource_type: ty.as_deref(),
                frame_id: frame.as_deref(),
                timestamp: *ev.timestamp.inner(),
                headers: &headers,
                has_post_data: ev.request.has_post_data.unwrap_or(false),
                page: page_index,
            };
            let redirect_info = match (redirect, &redirect_headers) {
                (Some(r), Some(h)) => Some(response_info(
                    ev.request_id.as_ref(),
                    ty.as_deref().unwrap_or(""),
                    r,
                    h,
                    *ev.timestamp.inner(),
                )),
                _ => None,
            };
            state.network_mut().on_request(start, redirect_info);
        }
        TabEvent::Response(ev) => {
            let headers = ev.response.headers.inner().clone();
            let info = response_info(
                ev.request_id.as_ref(),
                ev.r#type.as_ref(),
                &ev.response,
                &headers,
                *ev.timestamp.inner(),
            );
            state.network_mut().on_response(info, page_index);
        }
        TabEvent::Finished(ev) => state.network_mut().on_finished(
            ev.request_id.as_ref(),
            *ev.timestamp.inner(),
            ev.encoded_data_length,
            page_index,
        ),
        TabEvent::Failed(ev) => {
            let blocked = ev
                .blocked_reason
                .as_ref()
                .map(|b| b.as_ref().to_string())
                .or_else(|| {
                    ev.cors_error_status
                        .as_ref()
                        .map(|c| format!("CORS {}", c.cors_error.as_ref()))
                });
            state.network_mut().on_failed(
                LoadFailure {
                    request_id: ev.request_id.as_ref(),
                    timestamp: *ev.timestamp.inner(),
                    error: &ev.error_text,
                    canceled: ev.canceled.unwrap_or(false),
                    blocked,
                    resource_type: ev.r#type.as_ref(),
                },
                page_index,
            );
        }
        TabEvent::FromCache(ev) => state
            .network_mut()
            .on_served_from_cache(ev.request_id.as_ref(), page_index),
        TabEvent::DialogOpening(ev) => {
            let dialog = DialogInfo {
                kind: ev.r#type.as_ref().to_string(),
                message: crate::text::truncate(&ev.message, 500),
                default_prompt: ev.default_prompt.clone().filter(|p| !p.is_empty()),
            };
            state.page_state().dialog = Some(dialog.clone());
            state.blocker.send_replace(Some(Blocker::Dialog(dialog)));
        }
        TabEvent::DialogClosed => {
            state.page_state().dialog = None;
            state.blocker.send_replace(None);
        }
        TabEvent::FrameNavigated(ev) => {
            if ev.frame.parent_id.is_none() {
                let frame = ev.frame.id.as_ref().to_string();
                let page = {
                    let mut p = state.page_state();
                    p.main_frame = Some(frame.clone());
                    p.url = full_url(&ev.frame.url, ev.frame.url_fragment.as_deref());
                    p.navigations += 1;
                    p.on_new_document();
                    p.navigations
                };
                state.network_mut().adopt_document(&frame, page);
                state.console_mut().new_page();
            }
        }
        TabEvent::NavigationRequested(ev) => {
            // Only navigations that replace this tab's page (not new tabs or downloads).
            if is_main(ev.frame_id.as_ref()) && ev.disposition.as_ref() == "currentTab" {
                state.page_state().navigation_requests += 1;
            }
        }
        TabEvent::SameDocument(ev) => {
            if is_main(ev.frame_id.as_ref()) {
                let mut p = state.page_state();
                p.url = ev.url.clone();
                p.same_document += 1;
            }
        }
        TabEvent::StartedLoading(ev) => {
            if is_main(ev.frame_id.as_ref()) {
                state.page_state().loading = true;
            }
        }
        TabEvent::StoppedLoading(ev) => {
            if is_main(ev.frame_id.as_ref()) {
                state.page_state().loading = false;
            }
        }
        TabEvent::Load => {
            let mut p = state.page_state();
            p.loads += 1;
        }
        TabEvent::Destroyed => state.mark_closed(),
    }
}

fn full_url(url: &str, fragment: Option<&str>) -> String {
    match fragment {
        Some(f) if !f.is_empty() => format!("{url}{f}"),
        _ => url.to_string(),
    }
}

fn response_info<'a>(
    request_id: &'a str,
    resource_type: &'a str,
    r: &'a Response,
    headers: &'a Value,
    timestamp: f64,
) -> ResponseInfo<'a> {
    ResponseInfo {
        request_id,
        resource_type,
        url: &r.url,
        status: r.status,
        status_text: &r.status_text,
        mime_type: &r.mime_type,
        headers,
        remote_address: r.remote_ip_address.as_ref().map(|ip| match r.remote_port {
            Some(port) => format!("{ip}:{port}"),
            None => ip.clone(),
        }),
        from_cache: r.from_disk_cache.unwrap_or(false)
            || r.from_prefetch_cache.unwrap_or(false)
            || r.from_service_worker.unwrap_or(false),
        timestamp,
    }
}
