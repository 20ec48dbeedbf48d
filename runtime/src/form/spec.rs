//! What a form's fields say: formats, defaults, constraints, choices, and the error naming a
//! refused field.

use serde_json::{Value, json};
use std::fmt;

/// A string `format` a form field may declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `email`
    Email,
    /// `uri`
    Uri,
    /// `date` (`YYYY-MM-DD`)
    Date,
    /// `date-time` (RFC 3339)
    DateTime,
}

impl Format {
    /// The keyword's value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Email => "email",
            Self::Uri => "uri",
            Self::Date => "date",
            Self::DateTime => "date-time",
        }
    }
}

/// A default value, as written in `#[form(default = …)]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    /// A string (also a choice's wire value).
    Str(&'static str),
    /// An integer.
    Int(i64),
    /// A number.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// Choices of a multi-select.
    List(&'static [&'static str]),
}

impl DefaultValue {
    pub(crate) fn to_json(self) -> Value {
        match self {
            Self::Str(s) => json!(s),
            Self::Int(i) => json!(i),
            Self::Float(f) => json!(f),
            Self::Bool(b) => json!(b),
            Self::List(l) => json!(l),
        }
    }
}

/// What a field's attributes say: title, description, constraints, default.
///
/// ```
/// use mcp_resolve_runtime::form::FieldSpec;
/// const SPEC: FieldSpec = FieldSpec { min_length: Some(1), ..FieldSpec::new("name") };
/// assert_eq!(SPEC.name, "name");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldSpec {
    /// The property name on the wire.
    pub name: &'static str,
    /// `title`.
    pub title: Option<&'static str>,
    /// `description`.
    pub description: Option<&'static str>,
    /// `minLength` (strings).
    pub min_length: Option<u64>,
    /// `maxLength` (strings).
    pub max_length: Option<u64>,
    /// `format` (strings).
    pub format: Option<Format>,
    /// `minimum` (numbers).
    pub minimum: Option<f64>,
    /// `maximum` (numbers).
    pub maximum: Option<f64>,
    /// `minItems` (multi-select).
    pub min_items: Option<u64>,
    /// `maxItems` (multi-select).
    pub max_items: Option<u64>,
    /// `default`.
    pub default: Option<DefaultValue>,
    /// The field stays in `required` although it has a `default`: the client may pre-fill the
    /// default, and an answer must still carry the field (`#[form(default = …, required)]`).
    pub required: bool,
}

impl FieldSpec {
    /// A spec with a name and nothing else.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            title: None,
            description: None,
            min_length: None,
            max_length: None,
            format: None,
            minimum: None,
            maximum: None,
            min_items: None,
            max_items: None,
            default: None,
            required: false,
        }
    }
}

/// The shape of a field type, for compile-time checks of which constraints apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A string.
    Text,
    /// An integer.
    Integer,
    /// A number.
    Number,
    /// A boolean.
    Boolean,
    /// One of a choice enum's values.
    Choice,
    /// Several of a choice enum's values.
    MultiChoice,
}

/// One value of a choice enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The value on the wire.
    pub value: &'static str,
    /// A human-readable title.
    pub title: Option<&'static str>,
}

/// How a choice enum is rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChoiceStyle {
    /// `enum: [...]`, or `oneOf: [{const, title}]` when any choice has a title.
    Standard,
    /// The legacy `enum` + `enumNames`, for clients that predate titled enums.
    EnumNames,
}

/// Rendering options (the protocol version decides a few details).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderOptions {
    /// Keep the form's top-level `title`/`description` (the handshake era has them; 2026-07-28
    /// `requestedSchema` does not).
    pub top_level_title: bool,
}

impl RenderOptions {
    /// Whether to keep the form's top-level `title`/`description`.
    ///
    /// ```
    /// use mcp_resolve_runtime::form::RenderOptions;
    /// assert!(RenderOptions::default().top_level_title(true).top_level_title);
    /// ```
    pub const fn top_level_title(mut self, keep: bool) -> Self {
        self.top_level_title = keep;
        self
    }
}

/// Why accepted content was refused: the field and the rule.
///
/// ```
/// use mcp_resolve_runtime::form::FormError;
/// let e = FormError::new("ok", "expected a boolean, got \"yes\"");
/// assert_eq!(e.to_string(), "field `ok`: expected a boolean, got \"yes\"");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormError {
    /// The field (empty for the whole form).
    pub field: String,
    /// What rule failed.
    pub rule: String,
}

impl FormError {
    /// An error about one field.
    pub fn new(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            rule: rule.into(),
        }
    }
}

impl fmt::Display for FormError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.rule)
        } else {
            write!(f, "field `{}`: {}", self.field, self.rule)
        }
    }
}

impl std::error::Error for FormError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_error_names_its_field_when_it_has_one() {
        assert_eq!(
            FormError::new("email", "must be a valid email").to_string(),
            "field `email`: must be a valid email"
        );
        assert_eq!(
            FormError::new("", "expected an object").to_string(),
            "expected an object"
        );
    }
}
