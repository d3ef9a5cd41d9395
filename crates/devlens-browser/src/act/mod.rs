//! Floor 4, acting on the page: input (click, fill, type, press, hover, select, scroll), waits,
//! dialogs, navigation and live code (evaluate, inject CSS). Each answers with what it changed
//! ([`crate::effects`]).

pub mod dialogs;
pub mod hot;
pub mod input;
pub mod live;
pub mod navigate;
pub mod waits;
