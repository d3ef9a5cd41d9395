//! Load, normalise and explore OpenAPI 3.0/3.1 and Swagger 2.0 specs.
//!
//! This is the API-knowledge corpus of devlens: what an agent reads before it writes a fetch
//! call. It turns a spec file or URL into an [`ApiSpec`] that can list tags and endpoints, find
//! an operation by id or by method and path (forgiving the usual slips, with suggestions when
//! it cannot), and render [`EndpointDetails`]: parameters, request body and responses with
//! every `$ref` resolved and every schema compacted to what matters for writing the call.
//!
//! Why a `serde_json::Value` and a home-made resolver instead of a typed OpenAPI crate: real
//! specs are messy (Swagger 2.0 next to 3.0 and 3.1, refs across files, cycles, vendor
//! extensions everywhere), and typed crates each cover one version and reject what they do not
//! model. Here a spec is read once; Swagger 2.0 is rewritten into the 3.x shape at load time
//! (`normalize`); everything after that reads one shape. A loaded spec is not kept as one value
//! tree (a 47 MB spec would take 700 MB): its path items and components stay JSON text and are
//! parsed when a request reads them (`compact`, `resolve`).
//!
//! Modules, in the order data flows through them:
//! - `source` — where a spec comes from ([`SpecSource`]);
//! - `load` — reading files and URLs, bundling referenced documents, the content-keyed
//!   [`SpecCache`];
//! - `parse` — JSON or YAML to a value, OpenAPI version detection;
//! - `compact` — documents held compactly: path items and components as JSON text, parsed
//!   when read;
//! - `normalize` — Swagger 2.0 to OpenAPI 3.x;
//! - `resolve` — JSON pointers and `$ref`s across documents, with hop limits, read through a
//!   per-request view that parses what it reaches;
//! - `model` — [`Operation`] and the other listing types, extracted once per spec;
//! - `spec` — [`ApiSpec`]: listing, lookup, suggestions;
//! - `schema` — compact, bounded, cycle-safe schema rendering ([`DetailLimits`]);
//! - `details` / `text` — [`EndpointDetails`] as JSON and as lean text;
//! - [`documents`] — the spec's documents as JSON, refs resolved across them, for the crates
//!   that check values against the spec (devlens-contract) rather than render it.
//!
//! Nothing here panics on user input and nothing recurses without a bound: ref chains are
//! followed in loops with hop limits, schema expansion keeps a stack of open refs and a depth
//! and size budget.

mod compact;
mod details;
mod error;
pub mod eval;
pub mod explorer;
mod load;
mod model;
mod normalize;
mod parse;
mod rerank;
mod resolve;
mod schema;
pub mod search;
pub mod semantic;
mod source;
mod spec;
mod text;

/// The spec's documents as JSON values, read through a [`documents::DocView`] that resolves
/// `$ref`s across them ([`ApiSpec::documents`]). What a validator or a code generator needs
/// beyond the rendered details; the listing types stay the way to find an operation.
pub mod documents {
    pub use crate::model::{template_match, text};
    pub use crate::resolve::{
        DocId, DocSet, DocView, Document, ROOT, RefError, Resolved, percent_decode,
    };
}

pub use details::{EndpointDetails, ParameterDetails, RequestBodyDetails, ResponseDetails};
pub use error::{OpenApiError, SyntaxFormat};
pub use load::SpecCache;
pub use model::{EndpointRef, EndpointSummary, Operation, TagSummary};
pub use schema::DetailLimits;
pub use source::SpecSource;
pub use spec::ApiSpec;
