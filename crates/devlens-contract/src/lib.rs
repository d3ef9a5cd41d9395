//! What an API's spec promises, checked: live traffic against the spec ([`traffic`]), calls
//! built from an operationId and checked before and after they are sent ([`call`]), and code
//! samples ([`sample`]). Built on devlens-openapi, which loads and renders specs; this crate
//! reads the spec's documents ([`devlens_openapi::documents`]) to validate values against them.
//!
//! The details rendering of devlens-openapi compacts schemas for reading (bounded, cycles
//! marked). Checking needs the opposite: the whole schema, refs kept as refs, in a dialect a JSON
//! Schema validator runs. [`export`] turns an OpenAPI schema into that (3.0 and normalised
//! Swagger 2.0 → draft 4 with `nullable` mapped; 3.1 → 2020-12), and [`Contract`] gathers one
//! operation's parameters, request body and responses with their validators compiled once.

pub mod call;
mod error;
mod export;
mod findings;
pub mod har;
mod redact;
pub mod sample;
pub mod traffic;

use serde_json::Value;

use devlens_openapi::Operation;
use devlens_openapi::documents::text;
use devlens_openapi::documents::{DocId, DocView, ROOT};

pub use error::ContractError;
pub(crate) use export::{Dialect, Flow, export_schema};
pub use findings::{Finding, FindingKind, Side};

/// One parameter of an operation, as a check reads it.
#[derive(Debug)]
pub(crate) struct ParamContract {
    pub name: String,
    /// `path`, `query`, `header` or `cookie`.
    pub location: String,
    pub required: bool,
    /// The parameter's schema as exported (None: any value).
    pub schema: Option<Value>,
    pub validator: Option<jsonschema::Validator>,
}

/// A media type of a request body or a response, with its schema.
#[derive(Debug)]
pub(crate) struct MediaContract {
    /// Lowercase, without parameters (`application/json`, `application/*`, `*/*`).
    pub media_type: String,
    pub validator: Option<jsonschema::Validator>,
}

#[derive(Debug)]
pub(crate) struct BodyContract {
    pub required: bool,
    pub media: Vec<MediaContract>,
}

#[derive(Debug)]
pub(crate) struct ResponseContract {
    /// `200`, `2XX` or `default`, as the spec writes it (uppercased).
    pub status: String,
    pub media: Vec<MediaContract>,
}

/// Everything a validator needs about one operation.
#[derive(Debug)]
pub(crate) struct Contract {
    pub operation: Operation,
    pub params: Vec<ParamContract>,
    pub body: Option<BodyContract>,
    pub responses: Vec<ResponseContract>,
}

impl Contract {
    /// Builds the contract of `op` from the document; parts whose refs are broken are left
    /// out (they accept anything) rather than failing the whole check.
    pub(crate) fn build(docs: &DocView<'_>, op: &Operation, dialect: Dialect) -> Contract {
        let mut contract = Contract {
            operation: op.clone(),
            params: Vec::new(),
            body: None,
            responses: Vec::new(),
        };
        let (Some((item, doc)), Some(raw_op)) = operation_object(docs, op) else {
            return contract;
        };
        for list in [item.get("parameters"), raw_op.get("parameters")]
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
        {
            for raw in list {
                let Some(param) = param_contract(docs, raw, doc, dialect) else {
                    continue;
                };
                match contract
                    .params
                    .iter_mut()
                    .find(|p| p.name == param.name && p.location == param.location)
                {
                    Some(existing) => *existing = param,
                    None => contract.params.push(param),
                }
            }
        }
        if let Some(body) = raw_op
            .get("requestBody")
            .and_then(|rb| docs.deref(rb, doc).ok())
        {
            contract.body = Some(BodyContract {
                required: body.value.get("required").and_then(Value::as_bool) == Some(true),
                media: media_contracts(
                    docs,
                    body.value.get("content"),
                    body.doc,
                    dialect,
                    Flow::Request,
                ),
            });
        }
        if let Some(responses) = raw_op.get("responses").and_then(Value::as_object) {
            for (status, raw) in responses {
                if status.starts_with("x-") {
                    continue;
                }
                let Ok(response) = docs.deref(raw, doc) else {
                    continue;
                };
                contract.responses.push(ResponseContract {
                    status: status.to_ascii_uppercase(),
                    media: media_contracts(
                        docs,
                        response.value.get("content"),
                        response.doc,
                        dialect,
                        Flow::Response,
                    ),
                });
            }
        }
        contract
    }

    /// The documented response for a status: exact code, then its class (`4XX`), then
    /// `default`.
    pub(crate) fn response(&self, status: u16) -> Option<&ResponseContract> {
        let exact = status.to_string();
        let class = format!("{}XX", status / 100);
        self.responses
            .iter()
            .find(|r| r.status == exact)
            .or_else(|| self.responses.iter().find(|r| r.status == class))
            .or_else(|| self.responses.iter().find(|r| r.status == "DEFAULT"))
    }

    /// Documented statuses, as the spec writes them.
    pub(crate) fn statuses(&self) -> Vec<String> {
        self.responses
            .iter()
            .map(|r| {
                if r.status == "DEFAULT" {
                    "default".to_string()
                } else {
                    r.status.clone()
                }
            })
            .collect()
    }
}

fn param_contract(
    docs: &DocView<'_>,
    raw: &Value,
    doc: DocId,
    dialect: Dialect,
) -> Option<ParamContract> {
    let p = docs.deref(raw, doc).ok()?;
    let name = text(p.value.get("name"))?;
    let location = text(p.value.get("in")).unwrap_or_else(|| "query".into());
    let raw_schema = p.value.get("schema").or_else(|| {
        p.value
            .get("content")
            .and_then(Value::as_object)
            .and_then(|c| c.values().next())
            .and_then(|m| m.get("schema"))
    });
    let schema = raw_schema.map(|s| export_schema(docs, s, p.doc, dialect, Flow::Request));
    let validator = schema.as_ref().and_then(|s| compile(s, dialect));
    Some(ParamContract {
        required: location == "path"
            || p.value.get("required").and_then(Value::as_bool) == Some(true),
        name,
        location,
        schema,
        validator,
    })
}

fn media_contracts(
    docs: &DocView<'_>,
    content: Option<&Value>,
    doc: DocId,
    dialect: Dialect,
    flow: Flow,
) -> Vec<MediaContract> {
    let Some(content) = content.and_then(Value::as_object) else {
        return Vec::new();
    };
    content
        .iter()
        .map(|(media_type, media)| {
            let schema = media
                .get("schema")
                .map(|s| export_schema(docs, s, doc, dialect, flow));
            let validator = schema.as_ref().and_then(|s| compile(s, dialect));
            MediaContract {
                media_type: media_base(media_type),
                validator,
            }
        })
        .collect()
}

/// Compiles an exported schema. A schema the validator refuses (a regex it cannot read, a
/// keyword in the wrong shape) checks nothing rather than failing the check.
fn compile(schema: &Value, dialect: Dialect) -> Option<jsonschema::Validator> {
    let options = match dialect {
        Dialect::Draft4 => jsonschema::draft4::options(),
        Dialect::Draft202012 => jsonschema::draft202012::options(),
    };
    match options.should_validate_formats(true).build(schema) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::debug!(error = %e, "schema not compiled; values under it are not checked");
            None
        }
    }
}

/// The path item of `op` with the document it is in (as far as one operation reads it: see
/// [`DocView::path_item_for`]), and the operation object in it.
pub(crate) fn operation_object<'a>(
    docs: &'a DocView<'_>,
    op: &Operation,
) -> (Option<(&'a Value, DocId)>, Option<&'a Value>) {
    let method = op.method.to_ascii_lowercase();
    let Some(item) = docs
        .path_item_for(&op.path, &method)
        .ok()
        .flatten()
        .and_then(|raw| docs.deref(raw, ROOT).ok())
    else {
        return (None, None);
    };
    (Some((item.value, item.doc)), item.value.get(&method))
}

/// A content type without its parameters, lowercase (`application/json; charset=utf-8` →
/// `application/json`).
pub(crate) fn media_base(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// JSON, or a `+json` / `/json` flavour of it.
pub(crate) fn is_json_media(media_type: &str) -> bool {
    let base = media_base(media_type);
    base == "application/json" || base.ends_with("+json") || base.ends_with("/json")
}

/// The documented media type a message of `content_type` falls under: exact, then JSON
/// flavours of each other, then `type/*`, then `*/*`.
pub(crate) fn pick_media<'c>(
    media: &'c [MediaContract],
    content_type: &str,
) -> Option<&'c MediaContract> {
    let base = media_base(content_type);
    let major = base.split('/').next().unwrap_or("");
    media
        .iter()
        .find(|m| m.media_type == base)
        .or_else(|| {
            is_json_media(&base)
                .then(|| media.iter().find(|m| is_json_media(&m.media_type)))
                .flatten()
        })
        .or_else(|| media.iter().find(|m| m.media_type == format!("{major}/*")))
        .or_else(|| media.iter().find(|m| m.media_type == "*/*"))
}

/// The dialect a spec's schemas are written in.
pub(crate) fn dialect_of(spec_version: &str) -> Dialect {
    if spec_version.starts_with("3.1") {
        Dialect::Draft202012
    } else {
        Dialect::Draft4
    }
}
