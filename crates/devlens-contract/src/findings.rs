//! What a check found: one [`Finding`] per way a message breaks its contract, with where (a
//! JSON pointer into the body, or a parameter), what the spec wants and the value seen
//! (bounded, secrets redacted).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::redact::{is_secret_key, redact_value};

/// Which message of an exchange a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Request,
    Response,
}

/// The ways traffic can differ from its spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// An answer with a status the operation does not list (and no `default`).
    UndocumentedStatus,
    /// A body in a content type the operation does not list.
    UndocumentedContentType,
    /// A required field, parameter or body is absent.
    MissingRequired,
    /// A value of another JSON type than the schema's.
    WrongType,
    /// A value the schema's `enum` (or `const`) does not list.
    EnumValue,
    /// A field the schema forbids (`additionalProperties: false`).
    ExtraField,
    /// A parameter the operation does not declare.
    UnknownParameter,
    /// Another constraint: format, pattern, length, range, item count, one-of.
    Constraint,
    /// A body that should be JSON and is not.
    InvalidJson,
}

impl FindingKind {
    fn label(self) -> &'static str {
        match self {
            Self::UndocumentedStatus => "undocumented status",
            Self::UndocumentedContentType => "undocumented content type",
            Self::MissingRequired => "missing required",
            Self::WrongType => "wrong type",
            Self::EnumValue => "value not in enum",
            Self::ExtraField => "extra field",
            Self::UnknownParameter => "unknown parameter",
            Self::Constraint => "constraint",
            Self::InvalidJson => "invalid JSON",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One way a message breaks its contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub kind: FindingKind,
    pub side: Side,
    /// The response status it was seen with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// JSON pointer into the body (`/items/0/status`; empty for the whole body).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The parameter, as `query.limit`, `path.petId`, `header.X-Trace`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// What the spec wants, briefly.
    pub expected: String,
    /// The value seen: JSON, at most 120 characters, secrets redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen: Option<String>,
    /// How many calls showed it.
    pub count: usize,
}

impl Finding {
    pub(crate) fn new(kind: FindingKind, side: Side, expected: impl Into<String>) -> Finding {
        Finding {
            kind,
            side,
            status: None,
            pointer: None,
            parameter: None,
            expected: expected.into(),
            seen: None,
            count: 1,
        }
    }

    pub(crate) fn at_pointer(mut self, pointer: impl Into<String>) -> Finding {
        self.pointer = Some(pointer.into());
        self
    }

    pub(crate) fn at_parameter(mut self, location: &str, name: &str) -> Finding {
        self.parameter = Some(format!("{location}.{name}"));
        self
    }

    pub(crate) fn with_status(mut self, status: Option<u16>) -> Finding {
        self.status = status;
        self
    }

    pub(crate) fn seen(mut self, value: &Value, key: Option<&str>) -> Finding {
        self.seen = Some(shown_value(value, key));
        self
    }

    /// Same finding in another call (count aside).
    pub(crate) fn same_as(&self, other: &Finding) -> bool {
        self.kind == other.kind
            && self.side == other.side
            && self.status == other.status
            && self.pointer == other.pointer
            && self.parameter == other.parameter
            && self.expected == other.expected
    }

    /// `response 200 /0/status: value not in enum — expected one of "a", "b"; seen "c" (×3)`
    pub fn to_line(&self) -> String {
        let mut out = match self.side {
            Side::Request => "request".to_string(),
            Side::Response => match self.status {
                Some(s) => format!("response {s}"),
                None => "response".to_string(),
            },
        };
        if let Some(p) = &self.parameter {
            out.push(' ');
            out.push_str(p);
        } else if let Some(p) = &self.pointer {
            out.push(' ');
            out.push_str(if p.is_empty() { "(body)" } else { p });
        }
        out.push_str(": ");
        out.push_str(self.kind.label());
        if !self.expected.is_empty() {
            out.push_str(" — ");
            out.push_str(&self.expected);
        }
        if let Some(seen) = &self.seen {
            out.push_str("; seen ");
            out.push_str(seen);
        }
        if self.count > 1 {
            out.push_str(&format!(" (×{})", self.count));
        }
        out
    }
}

/// Characters of a value shown in a finding.
const SEEN_CHARS: usize = 120;

/// A value as a finding shows it: JSON, redacted, cut.
pub(crate) fn shown_value(value: &Value, key: Option<&str>) -> String {
    if key.is_some_and(is_secret_key) {
        return "\"[redacted]\"".into();
    }
    let redacted = redact_value(value);
    let text = serde_json::to_string(&redacted).unwrap_or_default();
    if text.chars().count() <= SEEN_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(SEEN_CHARS).collect();
    cut.push('…');
    cut
}

/// At most this many findings per message: a body of the wrong shape entirely would otherwise
/// list every field.
pub(crate) const MAX_FINDINGS_PER_MESSAGE: usize = 20;

/// The findings of one value against one validator.
pub(crate) fn validate(
    validator: &jsonschema::Validator,
    instance: &Value,
    side: Side,
    status: Option<u16>,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for error in validator.iter_errors(instance) {
        if out.len() >= MAX_FINDINGS_PER_MESSAGE {
            break;
        }
        let pointer = error.instance_path().as_str().to_string();
        let key = pointer.rsplit('/').next().map(unescape);
        let seen = error.instance();
        use jsonschema::error::ValidationErrorKind as K;
        let finding = match error.kind() {
            K::Required { property } => {
                let name = property.as_str().unwrap_or("");
                Finding::new(
                    FindingKind::MissingRequired,
                    side,
                    format!("required field `{name}`"),
                )
                .at_pointer(join_pointer(&pointer, name))
            }
            K::Type { kind } => Finding::new(
                FindingKind::WrongType,
                side,
                format!("type {}", type_names(kind)),
            )
            .at_pointer(pointer.clone())
            .seen(seen, key.as_deref()),
            K::Enum { options } => Finding::new(
                FindingKind::EnumValue,
                side,
                format!("one of {}", shown_value(options, None)),
            )
            .at_pointer(pointer.clone())
            .seen(seen, key.as_deref()),
            K::Constant { expected_value } => Finding::new(
                FindingKind::EnumValue,
                side,
                format!("exactly {}", shown_value(expected_value, None)),
            )
            .at_pointer(pointer.clone())
            .seen(seen, key.as_deref()),
            K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
                for name in unexpected {
                    if out.len() >= MAX_FINDINGS_PER_MESSAGE {
                        break;
                    }
                    let field = join_pointer(&pointer, name);
                    let value = seen.get(name).cloned().unwrap_or(Value::Null);
                    out.push(
                        Finding::new(
                            FindingKind::ExtraField,
                            side,
                            "no such field (additionalProperties: false)",
                        )
                        .at_pointer(field)
                        .seen(&value, Some(name))
                        .with_status(status),
                    );
                }
                continue;
            }
            other => Finding::new(FindingKind::Constraint, side, constraint_text(other))
                .at_pointer(pointer.clone())
                .seen(seen, key.as_deref()),
        };
        out.push(finding.with_status(status));
    }
    out
}

fn type_names(kind: &jsonschema::error::TypeKind) -> String {
    match kind {
        jsonschema::error::TypeKind::Single(t) => t.to_string(),
        jsonschema::error::TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
            names.join(" or ")
        }
    }
}

fn constraint_text(kind: &jsonschema::error::ValidationErrorKind) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match kind {
        K::Format { format } => format!("format `{format}`"),
        K::Pattern { pattern } => format!("pattern `{pattern}`"),
        K::MinLength { limit } => format!("at least {limit} characters"),
        K::MaxLength { limit } => format!("at most {limit} characters"),
        K::Minimum { limit } => format!("at least {limit}"),
        K::Maximum { limit } => format!("at most {limit}"),
        K::ExclusiveMinimum { limit } => format!("more than {limit}"),
        K::ExclusiveMaximum { limit } => format!("less than {limit}"),
        K::MinItems { limit } => format!("at least {limit} items"),
        K::MaxItems { limit } => format!("at most {limit} items"),
        K::UniqueItems => "unique items".into(),
        K::MultipleOf { .. } => "a multiple of the schema's `multipleOf`".into(),
        K::AnyOf { .. } => "one of the schema's alternatives (anyOf)".into(),
        K::OneOfNotValid { .. } => {
            "exactly one of the schema's alternatives (oneOf); none matches".into()
        }
        K::OneOfMultipleValid { .. } => {
            "exactly one of the schema's alternatives (oneOf); several match".into()
        }
        K::Not { .. } => "not the shape the schema excludes (not)".into(),
        K::MinProperties { limit } => format!("at least {limit} fields"),
        K::MaxProperties { limit } => format!("at most {limit} fields"),
        K::FalseSchema => "nothing here (the schema is false)".into(),
        other => {
            let debug = format!("{other:?}");
            debug
                .split([' ', '{', '('])
                .next()
                .unwrap_or("constraint")
                .to_string()
        }
    }
}

/// `/a` + `b` → `/a/b`, with the name escaped as a JSON pointer segment.
pub(crate) fn join_pointer(base: &str, name: &str) -> String {
    format!("{base}/{}", name.replace('~', "~0").replace('/', "~1"))
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// Adds `finding` to `list`, or counts it when the same one is already there.
pub(crate) fn merge(list: &mut Vec<Finding>, finding: Finding) {
    match list.iter_mut().find(|f| f.same_as(&finding)) {
        Some(existing) => existing.count += finding.count,
        None => list.push(finding),
    }
}
