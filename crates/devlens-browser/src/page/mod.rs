//! Floor 2, reading the page: elements ([`dom`], across [`frames`]), the accessibility snapshot
//! ([`snapshot`]), the console and the network as a call reads them ([`console`], [`network`]),
//! screenshots ([`screenshot`]), emulation ([`emulation`]), and a paused page ([`inspect`]).
//! Nothing here acts on the page; everything reads through the tab core.

pub mod console;
pub mod dom;
pub mod emulation;
pub mod frames;
pub mod inspect;
pub mod network;
pub mod screenshot;
pub mod snapshot;
