//! Floor 4, controlling the JavaScript debugger: breakpoints ([`breakpoints`]) and execution —
//! resume, pause, step, pause on exceptions ([`execution`]). Its state and answers are records
//! ([`crate::records::debugger`]), its events and source maps are the tab core's
//! ([`crate::tab::debug_events`]), and a pause is read by [`crate::page::inspect`].

pub mod breakpoints;
pub mod execution;
