//! Form-mode elicitation schemas: the restricted flat schema of `requestedSchema`, and validation
//! of accepted content on the server (the trust boundary).
//!
//! `#[derive(FormSchema)]` implements these traits; the hand-written impls here cover the field
//! types a form may hold: `String`, integers, floats, `bool`, choice enums, `Vec<E>` of a choice
//! enum (multi-select), and `Option` of any of these.

use serde_json::{Map, Number, Value, json};
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

    fn check(self, s: &str) -> bool {
        match self {
            Self::Email => valid_email(s),
            Self::Uri => valid_uri(s),
            Self::Date => valid_date(s),
            Self::DateTime => valid_date_time(s),
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
    fn to_json(self) -> Value {
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

/// A type a form field may have. Forms are flat: text, numbers, booleans, choice enums,
/// multi-select lists of a choice enum, or `Option` of these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a form field",
    label = "not a flat form field",
    note = "a form field is `String`, an integer, a float, `bool`, an enum deriving `FormSchema`, `Vec<E>` of such an enum (multi-select), or `Option` of these",
    note = "to ask for structured data, split the question into several resolvers, or move the value into the tool's arguments"
)]
pub trait FormField: Sized {
    /// The field's shape.
    const KIND: FieldKind;
    /// Whether the field may be absent (`Option`).
    const OPTIONAL: bool = false;
    /// The choices, for choice fields (empty otherwise).
    const CHOICES: &'static [Choice] = &[];
    /// The property schema.
    fn schema(spec: &FieldSpec) -> Map<String, Value>;
    /// Parses and validates a present value.
    fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String>;
    /// The value when the field is absent: the default, or an error.
    fn missing(spec: &FieldSpec) -> Result<Self, String> {
        match spec.default {
            Some(d) => Self::parse(&d.to_json(), spec),
            None => Err("is required".into()),
        }
    }
}

/// A unit enum whose variants are the choices of a single- or multi-select field.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a choice enum",
    note = "a multi-select field is `Vec<E>` where `E` is a unit enum deriving `FormSchema`; a list of free text cannot be asked in a form",
    note = "ask for one value per question, or move the list into the tool's arguments"
)]
pub trait FormChoice: Sized + Copy {
    /// The choices, in variant order.
    const CHOICES: &'static [Choice];
    /// The rendering style.
    const STYLE: ChoiceStyle;
    /// The variant at `index` of [`Self::CHOICES`].
    fn from_index(index: usize) -> Option<Self>;
    /// This variant's index in [`Self::CHOICES`].
    fn index(self) -> usize;
    /// This variant's wire value.
    fn as_value(self) -> &'static str {
        Self::CHOICES.get(self.index()).map(|c| c.value).unwrap_or("")
    }
}

/// A form: a flat object of primitive fields, asked in one elicitation.
///
/// Derive it: `#[derive(FormSchema)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a form",
    note = "derive `FormSchema` for a struct with named fields of flat types"
)]
pub trait FormSchema: Sized + Send + Sync + 'static {
    /// The `requestedSchema`.
    fn requested_schema(options: RenderOptions) -> Map<String, Value>;
    /// Parses and validates accepted content. Unknown keys are ignored.
    fn from_content(content: &Map<String, Value>) -> Result<Self, FormError>;
}

// ---------------------------------------------------------------- rendering helpers

fn base(ty: &str, spec: &FieldSpec) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), ty.into());
    if let Some(t) = spec.title {
        m.insert("title".into(), t.into());
    }
    if let Some(d) = spec.description {
        m.insert("description".into(), d.into());
    }
    if let Some(d) = spec.default {
        m.insert("default".into(), d.to_json());
    }
    m
}

fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

fn describe(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 40 {
        s
    } else {
        format!("{}...", s.chars().take(37).collect::<String>())
    }
}

impl FormField for String {
    const KIND: FieldKind = FieldKind::Text;
    fn schema(spec: &FieldSpec) -> Map<String, Value> {
        let mut m = base("string", spec);
        if let Some(n) = spec.min_length {
            m.insert("minLength".into(), n.into());
        }
        if let Some(n) = spec.max_length {
            m.insert("maxLength".into(), n.into());
        }
        if let Some(f) = spec.format {
            m.insert("format".into(), f.as_str().into());
        }
        m
    }
    fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
        let Value::String(s) = value else {
            return Err(format!("expected a string, got {}", describe(value)));
        };
        let len = s.chars().count() as u64;
        if let Some(n) = spec.min_length.filter(|n| len < *n) {
            return Err(format!("must have at least {n} characters, got {len}"));
        }
        if let Some(n) = spec.max_length.filter(|n| len > *n) {
            return Err(format!("must have at most {n} characters, got {len}"));
        }
        if let Some(f) = spec.format.filter(|f| !f.check(s)) {
            return Err(format!("must be a valid {}, got {}", f.as_str(), describe(value)));
        }
        Ok(s.clone())
    }
}

impl FormField for bool {
    const KIND: FieldKind = FieldKind::Boolean;
    fn schema(spec: &FieldSpec) -> Map<String, Value> {
        base("boolean", spec)
    }
    fn parse(value: &Value, _: &FieldSpec) -> Result<Self, String> {
        value
            .as_bool()
            .ok_or_else(|| format!("expected a boolean, got {}", describe(value)))
    }
}

fn check_range(v: f64, spec: &FieldSpec) -> Result<(), String> {
    if let Some(min) = spec.minimum.filter(|m| v < *m) {
        return Err(format!("must be at least {}, got {}", number(min), number(v)));
    }
    if let Some(max) = spec.maximum.filter(|m| v > *m) {
        return Err(format!("must be at most {}, got {}", number(max), number(v)));
    }
    Ok(())
}

fn numeric_schema(ty: &str, spec: &FieldSpec) -> Map<String, Value> {
    let mut m = base(ty, spec);
    if let Some(v) = spec.minimum {
        m.insert("minimum".into(), number(v));
    }
    if let Some(v) = spec.maximum {
        m.insert("maximum".into(), number(v));
    }
    m
}

macro_rules! integer_field {
    ($($t:ty),*) => {$(
        impl FormField for $t {
            const KIND: FieldKind = FieldKind::Integer;
            fn schema(spec: &FieldSpec) -> Map<String, Value> {
                numeric_schema("integer", spec)
            }
            fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
                let n = match value {
                    Value::Number(n) => n,
                    _ => return Err(format!("expected an integer, got {}", describe(value))),
                };
                let as_int = integer_of(n).ok_or_else(|| format!("expected an integer, got {}", describe(value)))?;
                check_range(as_int as f64, spec)?;
                <$t>::try_from(as_int).map_err(|_| format!("{} is out of range for this field", as_int))
            }
        }
    )*};
}

/// An integer from a JSON number, accepting `3.0` (some clients send integers as floats).
fn integer_of(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Some(u.into());
    }
    n.as_f64()
        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
        .map(|f| f as i128)
}

integer_field!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_field {
    ($($t:ty),*) => {$(
        impl FormField for $t {
            const KIND: FieldKind = FieldKind::Number;
            fn schema(spec: &FieldSpec) -> Map<String, Value> {
                numeric_schema("number", spec)
            }
            fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
                let v = value.as_f64().ok_or_else(|| format!("expected a number, got {}", describe(value)))?;
                check_range(v, spec)?;
                Ok(v as $t)
            }
        }
    )*};
}

float_field!(f32, f64);

impl<T: FormField> FormField for Option<T> {
    const KIND: FieldKind = T::KIND;
    const OPTIONAL: bool = true;
    const CHOICES: &'static [Choice] = T::CHOICES;
    fn schema(spec: &FieldSpec) -> Map<String, Value> {
        T::schema(spec)
    }
    fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
        if value.is_null() {
            Ok(None)
        } else {
            T::parse(value, spec).map(Some)
        }
    }
    fn missing(spec: &FieldSpec) -> Result<Self, String> {
        match spec.default {
            Some(d) => T::parse(&d.to_json(), spec).map(Some),
            None => Ok(None),
        }
    }
}

/// The property schema of a single-select field of choice enum `E`.
pub fn choice_schema<E: FormChoice>(spec: &FieldSpec) -> Map<String, Value> {
    let mut m = base("string", spec);
    let titled = E::CHOICES.iter().any(|c| c.title.is_some());
    match E::STYLE {
        ChoiceStyle::Standard if titled => {
            let one_of: Vec<Value> = E::CHOICES
                .iter()
                .map(|c| json!({ "const": c.value, "title": c.title.unwrap_or(c.value) }))
                .collect();
            m.insert("oneOf".into(), Value::Array(one_of));
        }
        ChoiceStyle::Standard => {
            m.insert("enum".into(), E::CHOICES.iter().map(|c| c.value).collect());
        }
        ChoiceStyle::EnumNames => {
            m.insert("enum".into(), E::CHOICES.iter().map(|c| c.value).collect());
            m.insert(
                "enumNames".into(),
                E::CHOICES.iter().map(|c| c.title.unwrap_or(c.value)).collect(),
            );
        }
    }
    m
}

/// Parses a single-select value of choice enum `E`.
pub fn parse_choice<E: FormChoice>(value: &Value) -> Result<E, String> {
    let expected = || {
        let values: Vec<String> = E::CHOICES.iter().map(|c| format!("`{}`", c.value)).collect();
        format!("expected one of {}, got {}", values.join(", "), describe(value))
    };
    let s = value.as_str().ok_or_else(expected)?;
    E::CHOICES
        .iter()
        .position(|c| c.value == s)
        .and_then(E::from_index)
        .ok_or_else(expected)
}

impl<E: FormChoice> FormField for Vec<E> {
    const KIND: FieldKind = FieldKind::MultiChoice;
    const CHOICES: &'static [Choice] = E::CHOICES;
    fn schema(spec: &FieldSpec) -> Map<String, Value> {
        let mut m = base("array", spec);
        if let Some(n) = spec.min_items {
            m.insert("minItems".into(), n.into());
        }
        if let Some(n) = spec.max_items {
            m.insert("maxItems".into(), n.into());
        }
        let titled = E::CHOICES.iter().any(|c| c.title.is_some());
        let items = if titled {
            let any_of: Vec<Value> = E::CHOICES
                .iter()
                .map(|c| json!({ "const": c.value, "title": c.title.unwrap_or(c.value) }))
                .collect();
            json!({ "anyOf": any_of })
        } else {
            json!({ "type": "string", "enum": E::CHOICES.iter().map(|c| c.value).collect::<Vec<_>>() })
        };
        m.insert("items".into(), items);
        m
    }
    fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
        let Value::Array(items) = value else {
            return Err(format!("expected a list, got {}", describe(value)));
        };
        let n = items.len() as u64;
        if let Some(min) = spec.min_items.filter(|m| n < *m) {
            return Err(format!("must have at least {min} choices, got {n}"));
        }
        if let Some(max) = spec.max_items.filter(|m| n > *m) {
            return Err(format!("must have at most {max} choices, got {n}"));
        }
        let mut out: Vec<E> = Vec::with_capacity(items.len());
        for item in items {
            let choice = parse_choice::<E>(item)?;
            if out.iter().any(|c| c.index() == choice.index()) {
                return Err(format!("lists `{}` twice", choice.as_value()));
            }
            out.push(choice);
        }
        Ok(out)
    }
}

// ---------------------------------------------------------------- formats

fn valid_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.chars().any(char::is_whitespace)
}

fn valid_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn valid_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&s[0..4]), digits(&s[5..7]), digits(&s[8..10])) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

fn valid_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (digits(&s[0..2]), digits(&s[3..5]), digits(&s[6..8])) else {
        return false;
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    let mut rest = &s[8..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest {
        "Z" | "z" => true,
        off if off.len() == 6 && (off.starts_with('+') || off.starts_with('-')) && off.as_bytes()[3] == b':' => {
            matches!((digits(&off[1..3]), digits(&off[4..6])), (Some(oh), Some(om)) if oh <= 23 && om <= 59)
        }
        _ => false,
    }
}

fn valid_date_time(s: &str) -> bool {
    match s.split_once(['T', 't']) {
        Some((d, t)) => valid_date(d) && valid_time(t),
        None => false,
    }
}

/// Compile-time checks used by `#[derive(FormSchema)]`.
#[doc(hidden)]
pub mod check {
    use super::{Choice, FieldKind};

    /// Whether `value` is one of `choices`.
    pub const fn has_choice(choices: &[Choice], value: &str) -> bool {
        let mut i = 0;
        while i < choices.len() {
            if eq(choices[i].value, value) {
                return true;
            }
            i += 1;
        }
        false
    }

    const fn eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Whether two kinds are the same.
    pub const fn is(kind: FieldKind, expected: FieldKind) -> bool {
        kind as u8 == expected as u8
    }

    /// Whether every one of `values` is one of `choices` (a multi-select default).
    pub const fn has_all(choices: &[Choice], values: &[&str]) -> bool {
        let mut i = 0;
        while i < values.len() {
            if !has_choice(choices, values[i]) {
                return false;
            }
            i += 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(valid_email("a@b.co"));
        assert!(!valid_email("a@b"));
        assert!(!valid_email("@b.co"));
        assert!(!valid_email("a b@c.de"));
        assert!(valid_uri("https://example.com/x"));
        assert!(valid_uri("mailto:a@b.co"));
        assert!(!valid_uri("example.com"));
        assert!(!valid_uri("1http://x"));
        assert!(valid_date("2024-02-29"));
        assert!(!valid_date("2023-02-29"));
        assert!(!valid_date("2024-13-01"));
        assert!(!valid_date("24-01-01"));
        assert!(valid_date_time("2026-09-01T10:00:00Z"));
        assert!(valid_date_time("2026-09-01T10:00:00.123+09:00"));
        assert!(!valid_date_time("2026-09-01 10:00:00"));
        assert!(!valid_date_time("2026-09-01T25:00:00Z"));
        assert!(!valid_date_time("2026-09-01T10:00:00"));
    }

    #[test]
    fn strings_are_checked() {
        let spec = FieldSpec {
            min_length: Some(2),
            max_length: Some(3),
            ..FieldSpec::new("n")
        };
        assert_eq!(String::parse(&json!("ab"), &spec), Ok("ab".into()));
        assert_eq!(
            String::parse(&json!("a"), &spec),
            Err("must have at least 2 characters, got 1".into())
        );
        assert_eq!(
            String::parse(&json!("abcd"), &spec),
            Err("must have at most 3 characters, got 4".into())
        );
        assert_eq!(String::parse(&json!(5), &spec), Err("expected a string, got 5".into()));
        let email = FieldSpec {
            format: Some(Format::Email),
            ..FieldSpec::new("e")
        };
        assert!(String::parse(&json!("nope"), &email).is_err());
        assert_eq!(
            Value::Object(String::schema(&email)),
            json!({"type": "string", "format": "email"})
        );
    }

    #[test]
    fn numbers_are_checked() {
        let spec = FieldSpec {
            minimum: Some(1.0),
            maximum: Some(10.0),
            ..FieldSpec::new("n")
        };
        assert_eq!(u8::parse(&json!(3), &spec), Ok(3));
        assert_eq!(u8::parse(&json!(3.0), &spec), Ok(3));
        assert!(u8::parse(&json!(3.5), &spec).is_err());
        assert_eq!(u8::parse(&json!(11), &spec), Err("must be at most 10, got 11".into()));
        assert_eq!(
            i64::parse(&json!("3"), &spec),
            Err("expected an integer, got \"3\"".into())
        );
        assert_eq!(f64::parse(&json!(0.5), &FieldSpec::new("r")), Ok(0.5));
        assert_eq!(
            Value::Object(u8::schema(&spec)),
            json!({"type": "integer", "minimum": 1, "maximum": 10})
        );
    }

    #[test]
    fn booleans_are_strict() {
        let spec = FieldSpec::new("ok");
        assert_eq!(bool::parse(&json!(true), &spec), Ok(true));
        assert_eq!(
            bool::parse(&json!("not-a-bool"), &spec),
            Err("expected a boolean, got \"not-a-bool\"".into())
        );
        assert_eq!(bool::missing(&spec), Err("is required".into()));
        let with_default = FieldSpec {
            default: Some(DefaultValue::Bool(true)),
            ..spec
        };
        assert_eq!(bool::missing(&with_default), Ok(true));
        assert_eq!(<Option<bool>>::missing(&FieldSpec::new("x")), Ok(None));
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Env {
        Stg,
        Prd,
    }

    impl FormChoice for Env {
        const CHOICES: &'static [Choice] = &[
            Choice {
                value: "stg",
                title: Some("Staging"),
            },
            Choice {
                value: "prd",
                title: Some("Production"),
            },
        ];
        const STYLE: ChoiceStyle = ChoiceStyle::Standard;
        fn from_index(i: usize) -> Option<Self> {
            [Self::Stg, Self::Prd].get(i).copied()
        }
        fn index(self) -> usize {
            self as usize
        }
    }

    #[test]
    fn choices() {
        let spec = FieldSpec {
            title: Some("Environment"),
            default: Some(DefaultValue::Str("stg")),
            ..FieldSpec::new("environment")
        };
        assert_eq!(
            Value::Object(choice_schema::<Env>(&spec)),
            json!({"type": "string", "title": "Environment", "default": "stg",
                   "oneOf": [{"const": "stg", "title": "Staging"}, {"const": "prd", "title": "Production"}]})
        );
        assert_eq!(parse_choice::<Env>(&json!("prd")), Ok(Env::Prd));
        assert_eq!(
            parse_choice::<Env>(&json!("dev")),
            Err("expected one of `stg`, `prd`, got \"dev\"".into())
        );
        let multi = FieldSpec {
            max_items: Some(1),
            ..FieldSpec::new("envs")
        };
        assert_eq!(<Vec<Env>>::parse(&json!(["stg"]), &multi), Ok(vec![Env::Stg]));
        assert!(<Vec<Env>>::parse(&json!(["stg", "prd"]), &multi).is_err());
        assert!(<Vec<Env>>::parse(&json!(["stg", "stg"]), &FieldSpec::new("e")).is_err());
        assert!(check::has_all(Env::CHOICES, &["prd", "stg"]));
        assert!(!check::has_all(Env::CHOICES, &["prd", "dev"]));
        assert!(check::has_choice(Env::CHOICES, "prd"));
        assert!(!check::has_choice(Env::CHOICES, "dev"));
    }
}
