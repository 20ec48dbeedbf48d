//! What resolvers return and what tools receive: a value, or a question ([`Ask`]: a form or a
//! page to open ([`Elicit`]), an LLM sample ([`Sample`](crate::sampling::Sample)) or the client's roots
//! ([`ListRoots`](crate::sampling::ListRoots))), and the three outcomes of a question.

pub use crate::choices::{Choices, MAX_CHOICE_CHARS, MAX_CHOICES};
use crate::form::{FieldKind, FieldSpec, FormError, FormField, FormSchema, RenderOptions};
use crate::protocol::messages::CreateMessageParams;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt::{self, Display};
use std::sync::Arc;

/// Reads the accepted answer (a form's content, a sampling or roots result) into the value.
pub(crate) type ParseFn<T> = Box<dyn Fn(&Value) -> Result<T, String> + Send + Sync>;

/// A form's `requestedSchema`.
#[derive(Clone, Debug)]
pub(crate) enum FormRender {
    /// A `FormSchema` type's, rendered for each era (`RenderOptions`).
    Static(fn(RenderOptions) -> Map<String, Value>),
    /// Built when the question is asked (choices from data), the same on both eras.
    Built(std::sync::Arc<Map<String, Value>>),
    /// A question that cannot be asked, and why: asking it ends the call with that error.
    Invalid(String),
}

impl FormRender {
    pub(crate) fn render(&self, options: RenderOptions) -> Map<String, Value> {
        match self {
            Self::Static(f) => f(options),
            Self::Built(m) => Map::clone(m),
            Self::Invalid(_) => Map::new(),
        }
    }
}

/// What a question asks the client for, as it goes on the wire.
#[derive(Clone, Debug)]
pub(crate) enum AskRequest {
    /// `elicitation/create`, form mode: the message and the form.
    Form { message: String, schema: FormRender },
    /// `elicitation/create`, URL mode: the message and the page to open (the flow's id is added
    /// when it is asked).
    Url { message: String, url: String },
    /// `sampling/createMessage`.
    Sampling(CreateMessageParams),
    /// `roots/list`.
    Roots,
}

/// A question a resolver asks, whose answer becomes its value `T`: a form ([`Elicit`]), an LLM
/// sample ([`Sample`](crate::sampling::Sample)) or the client's roots ([`ListRoots`](crate::sampling::ListRoots)).
/// On 2026-07-28 it is one entry of the round's `inputRequests`; on the handshake era a request
/// to the client on the back-channel. The client must have declared the matching capability
/// (`elicitation`, `sampling`, `roots`), else the call ends with -32021 naming it.
///
/// [`Ask::map`] turns the answer into another value, so one resolver can ask different kinds of
/// questions depending on what the client can answer:
///
/// ```
/// use mcp_resolve_runtime::{elicit::Ask, sampling::{ListRoots, Sample}};
/// let roots: Ask<usize> = Ask::from(ListRoots).map(|roots| roots.len());
/// let capital: Ask<String> = Ask::from(Sample::new("What is the capital of France?").max_tokens(100))
///     .map(|reply| reply.text().unwrap_or_default().to_owned());
/// # let _ = (roots, capital);
/// ```
pub struct Ask<T> {
    pub(crate) request: AskRequest,
    pub(crate) parse: ParseFn<T>,
}

impl<T> fmt::Debug for Ask<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ask")
            .field("request", &self.request)
            .finish_non_exhaustive()
    }
}

impl<T: 'static> Ask<T> {
    /// The same question, whose answer is turned into `U` by `f`.
    pub fn map<U>(self, f: impl Fn(T) -> U + Send + Sync + 'static) -> Ask<U> {
        let parse = self.parse;
        Ask {
            request: self.request,
            parse: Box::new(move |v| parse(v).map(&f)),
        }
    }
    /// The JSON-RPC method the question is asked with: `elicitation/create`,
    /// `sampling/createMessage` or `roots/list`.
    pub fn method(&self) -> &'static str {
        self.request.method()
    }
}

impl AskRequest {
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Self::Form { .. } | Self::Url { .. } => crate::protocol::messages::ELICITATION_CREATE,
            Self::Sampling(_) => crate::protocol::messages::SAMPLING_CREATE_MESSAGE,
            Self::Roots => crate::protocol::messages::ROOTS_LIST,
        }
    }
}

/// A question for the user: a form to fill in ([`Elicit::form`]), or a page of yours to open
/// ([`Elicit::url`]). Its value `T` is the filled form, or what the page recorded.
///
/// ```
/// use mcp_resolve_runtime::{Elicit, elicit::{Confirm, Resolution}};
/// let ask: Resolution<Confirm> = Elicit::form("/tmp/notes/drafts has 2 file(s). Delete anyway?").into();
/// assert!(matches!(ask, Resolution::Ask(_)));
/// ```
pub struct Elicit<T> {
    pub(crate) ask: Ask<T>,
}

impl<T> fmt::Debug for Elicit<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Elicit")
            .field("message", &self.message())
            .finish_non_exhaustive()
    }
}

impl<F: FormSchema> Elicit<F> {
    /// Asks the user to fill in form `F`, with this message.
    pub fn form(message: impl Into<String>) -> Self {
        Self {
            ask: Ask {
                request: AskRequest::Form {
                    message: message.into(),
                    schema: FormRender::Static(F::requested_schema),
                },
                // The content of an accepted answer; the asker has checked it is an object.
                parse: Box::new(|content| match content {
                    Value::Object(m) => F::from_content(m).map_err(|e| e.to_string()),
                    _ => Err("the content is not an object".into()),
                }),
            },
        }
    }
}

impl<T: UrlOutcome> Elicit<T> {
    /// Asks the user to open `url`, a page of yours where they do what must never pass through
    /// the client (sign in to a third party, pay, type a secret), in URL mode. The framework adds
    /// the `flow` query parameter, a one-time id bound to the caller and an expiry; the page
    /// records the outcome with [`UrlFlows::complete`](crate::url_flow::UrlFlows::complete) (or
    /// [`UrlFlows::decline`](crate::url_flow::UrlFlows::decline)), and the value `T` is what it recorded.
    /// The user's `accept` only means they agreed to open the page: the call goes on once the
    /// page says the step is done.
    ///
    /// The URL must be `https` (plain `http` only to a loopback host) and carry no credentials
    /// (`user:password@`), no query parameter named like a secret and no e-mail address: the
    /// client shows it to the user and may log it. It is checked when the question is asked.
    ///
    /// ```
    /// use mcp_resolve_runtime::{Elicit, elicit::Resolution};
    /// #[derive(Clone, serde::Deserialize)]
    /// struct Connected {
    ///     account: String,
    /// }
    /// let ask: Resolution<Connected> =
    ///     Elicit::url("Connect your GitHub account", "https://notes.example/connect?service=github").into();
    /// assert!(matches!(ask, Resolution::Ask(_)));
    /// ```
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            ask: Ask {
                request: AskRequest::Url {
                    message: message.into(),
                    url: url.into(),
                },
                // What the page recorded.
                parse: Box::new(|recorded| T::deserialize(recorded).map_err(|e| e.to_string())),
            },
        }
    }
}

impl<T: 'static> Elicit<T> {
    /// The question of a resolver that asks only sometimes: a resolver of
    /// `Resolution<Option<T>>` returns `Resolution::Value(None)` when there is nothing to ask and
    /// nothing to give, and this question otherwise, whose accepted answer is `Some`. The
    /// parameter then takes `Option<T>` (or `ElicitationResult<Option<T>>`).
    ///
    /// ```
    /// use mcp_resolve_runtime::{Elicit, elicit::{Confirm, Resolution}};
    /// fn maybe(needed: bool) -> Resolution<Option<Confirm>> {
    ///     if !needed {
    ///         return Resolution::Value(None);
    ///     }
    ///     Elicit::form("Go on?").optional()
    /// }
    /// assert!(matches!(maybe(false), Resolution::Value(None)));
    /// assert!(matches!(maybe(true), Resolution::Ask(_)));
    /// ```
    pub fn optional(self) -> Resolution<Option<T>> {
        Resolution::Ask(self.ask.map(Some))
    }
}

impl<T> Elicit<T> {
    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match &self.ask.request {
            AskRequest::Form { message, .. } | AskRequest::Url { message, .. } => message,
            _ => "",
        }
    }
}

/// The question of `choices` (`multi`: a multi-select), whose answer `read` turns into the value;
/// a question that breaks a bound is [`refused`].
fn picking<T, V: 'static>(
    message: String,
    choices: Choices<T>,
    multi: bool,
    read: fn(&Choices<T>, &Value) -> Result<V, crate::form::FormError>,
) -> Elicit<V>
where
    T: Clone + Send + Sync + 'static,
{
    if let Some(why) = choices.invalid(multi) {
        return refused(message, why);
    }
    let schema = Arc::new(choices.schema(multi));
    Elicit {
        ask: Ask {
            request: AskRequest::Form {
                message,
                schema: FormRender::Built(schema),
            },
            parse: Box::new(move |content| read(&choices, choices.field_of(content)?).map_err(|e| e.to_string())),
        },
    }
}

/// A question that cannot be asked: the call ends with an error naming why.
fn refused<T>(message: String, why: String) -> Elicit<T> {
    Elicit {
        ask: Ask {
            request: AskRequest::Form {
                message,
                schema: FormRender::Invalid(why),
            },
            parse: Box::new(|_| Err("the question was not asked".into())),
        },
    }
}

impl<T: Clone + Send + Sync + 'static> Elicit<T> {
    /// Asks the user to pick one of `choices`, options made from data when the resolver runs;
    /// the value is the picked option's. The answer must be one of the keys offered in this
    /// very question (else it is refused as an invalid answer).
    ///
    /// ```
    /// use mcp_resolve_runtime::{Elicit, elicit::{Choices, Resolution}};
    /// let accounts = [("acct_1", "Alice (work)"), ("acct_2", "Alice (home)")];
    /// let choices = accounts
    ///     .iter()
    ///     .fold(Choices::new("account"), |c, (id, name)| c.option(*id, *name, id.to_string()));
    /// let ask: Resolution<String> = Elicit::pick_one("Two accounts are named Alice. Which one?", choices).into();
    /// assert!(matches!(ask, Resolution::Ask(_)));
    /// ```
    pub fn pick_one(message: impl Into<String>, choices: Choices<T>) -> Self {
        picking(message.into(), choices, false, |choices, key| choices.pick(key))
    }
}

impl<T: Clone + Send + Sync + 'static> Elicit<Vec<T>> {
    /// Asks the user to pick some of `choices` (a multi-select; [`Choices::min_items`] and
    /// [`Choices::max_items`] bound how many); the value is the picked options' values, in the
    /// order the answer lists them. Each key must be one offered in this very question, none
    /// twice.
    pub fn pick_many(message: impl Into<String>, choices: Choices<T>) -> Self {
        picking(message.into(), choices, true, |choices, keys| choices.pick_all(keys))
    }
}

/// What a URL-mode page may record as the outcome of the step the user took there: any type
/// that deserializes (the page records it with [`UrlFlows::complete`](crate::url_flow::UrlFlows::complete)).
/// A form is not one: a URL-mode answer carries no content, the user's input stays on the page.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the value of a URL-mode question",
    label = "not something a page records",
    note = "a URL-mode answer carries no content: the page records the outcome. Give `Elicit::url` a type that derives `serde::Deserialize` (e.g. `struct Connected {{ account: String }}`), or ask with `Elicit::form` for a form"
)]
pub trait UrlOutcome: DeserializeOwned + Clone + Send + Sync + 'static {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + Clone + Send + Sync + 'static> UrlOutcome for T {}

/// What a resolver produced: a value (nothing is asked), or a question.
///
/// Resolver bodies re-run on every round of a 2026-07-28 call, so they must be idempotent: a
/// recorded answer is used only when the body asks the same question again.
///
/// ```
/// use mcp_resolve_runtime::{Elicit, elicit::{Confirm, Resolution}};
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
    Ask(Ask<T>),
}

impl<T> From<Elicit<T>> for Ask<T> {
    fn from(e: Elicit<T>) -> Self {
        e.ask
    }
}

impl<T> From<Ask<T>> for Resolution<T> {
    fn from(a: Ask<T>) -> Self {
        Self::Ask(a)
    }
}

impl<T> From<Elicit<T>> for Resolution<T> {
    fn from(e: Elicit<T>) -> Self {
        Self::Ask(e.ask)
    }
}

/// The answer to a question, as a tool (or a dependent resolver) that wants to branch on all
/// three outcomes receives it. A resolver that returned a value without asking counts as accepted.
///
/// ```
/// use mcp_resolve_runtime::elicit::{Confirm, ElicitationResult};
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
/// use mcp_resolve_runtime::elicit::Action;
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
/// use mcp_resolve_runtime::elicit::Confirm;
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

/// Converts what a resolver body returns into a [`Resolution`]: `Resolution<T>`, `Elicit<F>`,
/// [`Ask<T>`], [`Sample`](crate::sampling::Sample), [`ListRoots`](crate::sampling::ListRoots), or a `Result` of one of
/// them (an `Err` stops the call with an `isError` result).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[resolver]`",
    label = "not a resolution",
    note = "return `Resolution<T>` (a value or a question), `Elicit<F>`, `Sample` or `ListRoots` (always ask), or a `Result` of one of them"
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
        Ok(Resolution::Ask(self.ask))
    }
}

impl<T: Clone + Send + Sync + 'static> IntoResolution for Ask<T> {
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
