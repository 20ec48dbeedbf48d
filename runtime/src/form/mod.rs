//! Form-mode elicitation schemas: the restricted flat schema of `requestedSchema`, and validation
//! of accepted content on the server (the trust boundary).
//!
//! `#[derive(FormSchema)]` implements these traits; the hand-written impls here cover the field
//! types a form may hold: `String`, integers, floats, `bool`, choice enums, `Vec<E>` of a choice
//! enum (multi-select), and `Option` of any of these.

pub(crate) mod fields;
mod format;
mod spec;

/// The property schema of a single-select field of choice enum `E`.
#[doc(hidden)]
#[deprecated(
    note = "what `#[derive(FormSchema)]` generates calls this; it leaves the public API: derive `FormSchema` instead"
)]
pub fn choice_schema<E: FormChoice>(spec: &FieldSpec) -> Map<String, Value> {
    fields::choice_schema::<E>(spec)
}

/// Parses a single-select value of choice enum `E`.
#[doc(hidden)]
#[deprecated(
    note = "what `#[derive(FormSchema)]` generates calls this; it leaves the public API: derive `FormSchema` instead"
)]
pub fn parse_choice<E: FormChoice>(value: &Value) -> Result<E, String> {
    fields::parse_choice::<E>(value)
}
pub use spec::{Choice, ChoiceStyle, DefaultValue, FieldKind, FieldSpec, FormError, Format, RenderOptions};

use serde_json::{Map, Value};

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
    /// The value when the field is absent: the default, or an error when there is none or the
    /// field is [`required`](FieldSpec::required) all the same.
    fn missing(spec: &FieldSpec) -> Result<Self, String> {
        match spec.default {
            Some(d) if !spec.required => Self::parse(&d.to_json(), spec),
            _ => Err("is required".into()),
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

/// The words that make a name look like a secret, and the names that are one: a form field, or a
/// URL-mode page's query parameter, named like this is refused. `#[derive(FormSchema)]` checks
/// form fields against the same list at compile time (its tests compare the two).
#[doc(hidden)]
pub const SECRET_WORDS: (&[&str], &[&str]) = (
    &[
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "privatekey",
        "creditcard",
        "cardnumber",
        "cvv",
        "cvc",
    ],
    &["pin", "ssn"],
);

/// Whether `name` looks like a secret: lowercased without `_` and `-`, it contains one of
/// [`SECRET_WORDS`]' words, or is one of its names.
pub(crate) fn looks_secret(name: &str) -> bool {
    let norm: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_WORDS.0.iter().any(|w| norm.contains(w)) || SECRET_WORDS.1.contains(&norm.as_str())
}
