//! What resolvers return and what tools receive: a value, or a question (`Elicit<F>`), and the
//! three outcomes of a question.

use crate::form::{FieldKind, FieldSpec, FormError, FormField, FormSchema, RenderOptions};
use serde_json::{Map, Value};
use std::any::Any;
use std::fmt::{self, Display};
use std::marker::PhantomData;
use std::sync::Arc;

/// Parses accepted content into the form, type-erased.
pub(crate) type ParseFn = fn(&Map<String, Value>) -> Result<Arc<dyn Any + Send + Sync>, FormError>;

/// A form-mode question: a message and the form `F` the user fills in.
///
/// ```
/// use mcp_resolve_runtime::{Confirm, Elicit, Resolution};
/// let ask: Resolution<Confirm> = Elicit::form("/tmp/notes/drafts has 2 file(s). Delete anyway?").into();
/// assert!(matches!(ask, Resolution::Ask(_)));
/// ```
pub struct Elicit<F> {
    pub(crate) message: String,
    pub(crate) schema: fn(RenderOptions) -> Map<String, Value>,
    pub(crate) parse: ParseFn,
    _form: PhantomData<fn() -> F>,
}

impl<F> fmt::Debug for Elicit<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Elicit")
            .field("message", &self.message)
            .finish_non_exhaustive()
    }
}

fn parse_erased<F: FormSchema>(content: &Map<String, Value>) -> Result<Arc<dyn Any + Send + Sync>, FormError> {
    F::from_content(content).map(|f| Arc::new(f) as Arc<dyn Any + Send + Sync>)
}

impl<F: FormSchema> Elicit<F> {
    /// Asks the user to fill in form `F`, with this message.
    pub fn form(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            schema: F::requested_schema,
            parse: parse_erased::<F>,
            _form: PhantomData,
        }
    }
    /// The message shown to the user.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What a resolver produced: a value (nothing is asked), or a question.
///
/// Resolver bodies re-run on every round of a 2026-07-28 call, so they must be idempotent: a
/// recorded answer is used only when the body asks the same question again.
///
/// ```
/// use mcp_resolve_runtime::{Confirm, Elicit, Resolution};
/// fn decide(files: usize) -> Resolution<Confirm> {
///     if files == 0 {
///         return Resolution::Value(Confirm { ok: true });
///     }
///     Elicit::form(format!("{files} file(s). Delete anyway?")).into()
/// }
/// assert!(matches!(decide(0), Resolution::Value(Confirm { ok: true })));
/// assert!(matches!(decide(2), Resolution::Ask(_)));
/// ```
#[derive(Debug)]
pub enum Resolution<T> {
    /// The value, with no question asked.
    Value(T),
    /// A question whose accepted answer is the value.
    Ask(Elicit<T>),
}

impl<T> From<Elicit<T>> for Resolution<T> {
    fn from(e: Elicit<T>) -> Self {
        Self::Ask(e)
    }
}

/// The answer to a question, as a tool (or a dependent resolver) that wants to branch on all
/// three outcomes receives it. A resolver that returned a value without asking counts as accepted.
///
/// ```
/// use mcp_resolve_runtime::{Confirm, ElicitationResult};
/// let r: ElicitationResult<Confirm> = ElicitationResult::Declined;
/// let text = match r {
///     ElicitationResult::Accepted(Confirm { ok: true }) => "deleted",
///     ElicitationResult::Accepted(_) => "kept the folder",
///     ElicitationResult::Declined => "declined: folder not deleted",
///     ElicitationResult::Cancelled => "cancelled: folder not deleted",
/// };
/// assert_eq!(text, "declined: folder not deleted");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElicitationResult<T> {
    /// The user submitted the form.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the question without deciding.
    Cancelled,
}

/// The three actions of an answer.
///
/// ```
/// use mcp_resolve_runtime::Action;
/// assert_eq!(Action::parse("decline"), Some(Action::Decline));
/// assert_eq!(Action::Cancel.as_str(), "cancel");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// `accept`
    Accept,
    /// `decline`
    Decline,
    /// `cancel`
    Cancel,
}

impl Action {
    /// From the wire string.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "accept" => Some(Self::Accept),
            "decline" => Some(Self::Decline),
            "cancel" => Some(Self::Cancel),
            _ => None,
        }
    }
    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        }
    }
}

impl Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A yes/no confirmation form: `{"ok": boolean}` (required).
///
/// ```
/// use mcp_resolve_runtime::Confirm;
/// use mcp_resolve_runtime::form::{FormSchema, RenderOptions};
/// let schema = serde_json::Value::Object(Confirm::requested_schema(RenderOptions::default()));
/// assert_eq!(schema, serde_json::json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Confirm {
    /// Whether the user said yes.
    pub ok: bool,
}

const CONFIRM_OK: FieldSpec = FieldSpec::new("ok");

impl FormSchema for Confirm {
    fn requested_schema(_: RenderOptions) -> Map<String, Value> {
        let mut props = Map::new();
        props.insert("ok".into(), Value::Object(<bool as FormField>::schema(&CONFIRM_OK)));
        let mut m = Map::new();
        m.insert("type".into(), "object".into());
        m.insert("properties".into(), Value::Object(props));
        m.insert("required".into(), Value::Array(vec!["ok".into()]));
        m
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, FormError> {
        let ok = match content.get("ok") {
            Some(v) => <bool as FormField>::parse(v, &CONFIRM_OK),
            None => <bool as FormField>::missing(&CONFIRM_OK),
        }
        .map_err(|rule| FormError::new("ok", rule))?;
        Ok(Self { ok })
    }
}

const _: () = assert!(matches!(<bool as FormField>::KIND, FieldKind::Boolean));

/// Converts what a resolver body returns into a [`Resolution`]: `Resolution<T>`, `Elicit<T>`, or
/// `Result` of either (an `Err` stops the call with an `isError` result).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[resolver]`",
    label = "not a resolution",
    note = "return `Resolution<T>` (a value or a question), `Elicit<F>` (always ask), or a `Result` of either"
)]
pub trait IntoResolution {
    /// The resolved value's type.
    type Output: Clone + Send + Sync + 'static;
    /// The conversion; `Err` carries a message for the `isError` result.
    fn into_resolution(self) -> Result<Resolution<Self::Output>, String>;
}

impl<T: Clone + Send + Sync + 'static> IntoResolution for Resolution<T> {
    type Output = T;
    fn into_resolution(self) -> Result<Resolution<T>, String> {
        Ok(self)
    }
}

impl<T: Clone + Send + Sync + 'static> IntoResolution for Elicit<T> {
    type Output = T;
    fn into_resolution(self) -> Result<Resolution<T>, String> {
        Ok(Resolution::Ask(self))
    }
}

impl<R: IntoResolution, E: Display> IntoResolution for Result<R, E> {
    type Output = R::Output;
    fn into_resolution(self) -> Result<Resolution<R::Output>, String> {
        match self {
            Ok(r) => r.into_resolution(),
            Err(e) => Err(e.to_string()),
        }
    }
}
