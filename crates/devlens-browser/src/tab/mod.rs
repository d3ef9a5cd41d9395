//! Floor 1, the tab core: starting or finding Chrome ([`launch`]), the files a tab writes
//! ([`artifacts`]), connections ([`session`]), the
//! tabs of a connection and the handle every page call goes through ([`targets`], [`registry`]),
//! the DevTools Protocol plumbing ([`cdp`]), which local files pages may load ([`files`]), and
//! the event pumps that keep a tab's records
//! ([`events`], [`debug_events`], with source maps loaded through the page by [`sourcemaps`]).
//! It imports only the records below it.

pub mod artifacts;
pub mod cdp;
pub mod debug_events;
pub mod events;
pub mod files;
pub mod launch;
pub mod registry;
pub mod session;
pub mod sourcemaps;
pub mod targets;
