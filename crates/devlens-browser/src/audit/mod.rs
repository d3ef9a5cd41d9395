//! Floor 5, audits and inspection: what an agent needs to find and fix a front-end problem.
//! Accessibility with axe-core ([`a11y`]), performance — vitals, a trace reduced to findings,
//! a CPU profile, memory ([`perf`]) —, why a style applies or not ([`css`]) and the state of
//! the app's framework ([`state`]). Audits may reload the page or wait for actions, so they sit
//! above acting.

pub mod a11y;
pub mod css;
pub mod memory;
pub mod perf;
pub mod state;
