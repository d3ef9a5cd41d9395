//! One spec document, JSON or YAML, OpenAPI 3.x or Swagger 2.0, through everything a user's
//! spec meets: parsing and version detection, Swagger 2.0 normalisation, the operation listing,
//! tags, servers, `$ref` resolution inside the document, endpoint details (JSON and text) for
//! every operation, and endpoint lookup with its suggestions.

use devlens_core::Report;
use devlens_openapi::{ApiSpec, EndpointRef};

/// Operations whose details are rendered per input: enough to reach every shape, few enough
/// to keep a run fast on a spec with thousands of endpoints.
const MAX_DETAILED: usize = 40;

/// One input, as libFuzzer hands it over.
pub fn run(data: &[u8]) {
    let Ok(spec) = ApiSpec::from_bytes(data, "fuzz.yaml") else {
        return;
    };
    let _ = spec.servers();
    for tag in spec.tags().iter().take(MAX_DETAILED) {
        let _ = spec.endpoints_by_tag(&tag.name);
    }
    render_details(&spec, MAX_DETAILED);
    // Lookups by what a caller types: the first line of the input as an endpoint reference
    // (operationId, `GET /path`, a full URL), which exercises the forgiving matching and the
    // suggestions when nothing matches.
    let first_line = String::from_utf8_lossy(data);
    let typed = first_line.lines().next().unwrap_or_default();
    let _ = spec.find_operation(&EndpointRef::parse(typed));
}

/// The details of the first `max` operations, as text and as JSON (what `api_endpoint` returns).
pub(crate) fn render_details(spec: &ApiSpec, max: usize) {
    for op in spec.operations().iter().take(max) {
        let endpoint = EndpointRef::method_path(op.method.clone(), op.path.clone());
        if let Ok(details) = spec.endpoint_details(&endpoint) {
            let _ = details.to_text();
            let _ = serde_json::to_string(&details);
        }
    }
}
