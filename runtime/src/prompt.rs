//! Prompts: what `#[prompt]` implements, what `prompts/list` lists and what `prompts/get` returns.

use crate::context::Context;
use crate::protocol::ErrorObject;
pub use crate::protocol::content::Content;
pub use crate::protocol::content::Role;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt::Display;

/// One argument of a prompt, as `prompts/list` describes it. Prompt arguments are strings.
///
/// ```
/// use mcp_resolve_runtime::prompt::PromptArgument;
/// let a = PromptArgument::new("topic", true).description("What to write about");
/// assert_eq!(serde_json::to_value(&a).unwrap()["required"], true);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptArgument {
    /// The argument's name (its key in `arguments`).
    pub name: String,
    /// What the argument is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether `prompts/get` must carry it.
    #[serde(default)]
    pub required: bool,
    /// What `completion/complete` offers for it; not sent.
    #[serde(skip)]
    pub completer: Option<crate::completion::Completer>,
}

impl PromptArgument {
    /// An argument with this name.
    pub fn new(name: impl Into<String>, required: bool) -> Self {
        Self {
            name: name.into(),
            description: None,
            required,
            completer: None,
        }
    }
    /// Sets the completer `completion/complete` runs for this argument.
    pub fn complete(mut self, c: crate::completion::Completer) -> Self {
        self.completer = Some(c);
        self
    }
    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
}

/// A prompt's metadata, as `prompts/list` sends it (the scopes stay on the server).
///
/// ```
/// use mcp_resolve_runtime::prompt::{PromptArgument, PromptDefinition};
/// let d = PromptDefinition::new("summarize")
///     .description("Summarize a text")
///     .argument(PromptArgument::new("text", true));
/// let v = serde_json::to_value(&d).unwrap();
/// assert_eq!(v["arguments"][0]["name"], "text");
/// assert!(v.get("scopes").is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptDefinition {
    /// The prompt's name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments, in order.
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
    /// The scopes a caller's token must grant; not sent.
    #[serde(skip)]
    pub scopes: Vec<String>,
}

impl PromptDefinition {
    /// A prompt with this name and no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            scopes: Vec::new(),
        }
    }
    /// Sets the title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.title = Some(t.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
    /// Adds an argument.
    pub fn argument(mut self, a: PromptArgument) -> Self {
        self.arguments.push(a);
        self
    }
    /// The scopes a caller's token must grant (checked like a tool's).
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

/// One message of a prompt: a role and one content item (text, image, audio, or an embedded
/// resource, the same [`Content`] tools return).
///
/// ```
/// use mcp_resolve_runtime::{prompt::PromptMessage, tool::Content};
/// let m = PromptMessage::user(Content::text("Hi"));
/// assert_eq!(
///     serde_json::to_value(&m).unwrap(),
///     serde_json::json!({"role": "user", "content": {"type": "text", "text": "Hi"}})
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message.
    pub fn new(role: Role, content: Content) -> Self {
        Self { role, content }
    }
    /// A user message.
    pub fn user(content: Content) -> Self {
        Self::new(Role::User, content)
    }
    /// An assistant message.
    pub fn assistant(content: Content) -> Self {
        Self::new(Role::Assistant, content)
    }
}

/// The result of `prompts/get`.
///
/// ```
/// use mcp_resolve_runtime::{prompt::{GetPromptResult, PromptMessage}, tool::Content};
/// let r = GetPromptResult::new(vec![PromptMessage::user(Content::text("Hi"))]).description("A greeting");
/// assert_eq!(serde_json::to_value(&r).unwrap()["description"], "A greeting");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetPromptResult {
    /// A description of this rendering of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// A result with these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        Self {
            description: None,
            messages,
        }
    }
    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
}

/// What a `#[prompt]` function may return: `String` (one user text message), `PromptMessage`,
/// `Vec<PromptMessage>`, `GetPromptResult`, or `Result<T, E: Display>` of one of them, whose
/// `Err` answers the request with a JSON-RPC error -32603 carrying `E`'s text.
///
/// ```
/// use mcp_resolve_runtime::prompt::IntoPromptResult;
/// let r = "Say hi".to_string().into_prompt_result().unwrap();
/// assert_eq!(r.messages.len(), 1);
/// let e: Result<String, String> = Err("no such note".into());
/// assert_eq!(e.into_prompt_result().unwrap_err().code, -32603);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a `#[prompt]`",
    label = "not a prompt result",
    note = "return `String`, `PromptMessage`, `Vec<PromptMessage>`, `GetPromptResult`, or a `Result` of one of them whose error implements `Display`"
)]
pub trait IntoPromptResult {
    /// The result, or the JSON-RPC error of the request.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(Content::text(self))]))
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.to_owned().into_prompt_result()
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl<T: IntoPromptResult, E: Display> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        match self {
            Ok(v) => v.into_prompt_result(),
            Err(e) => Err(ErrorObject::internal(e.to_string())),
        }
    }
}

/// One `prompts/get`: its arguments (every value a string; required ones present, checked
/// before the prompt runs) and the request's context.
///
/// ```
/// use mcp_resolve_runtime::{Context, prompt::PromptCall, protocol::ProtocolVersion};
/// let cx = Context::detached(ProtocolVersion::V2025_11_25, Default::default());
/// let mut args = serde_json::Map::new();
/// args.insert("topic".into(), "rust".into());
/// let call = PromptCall::new(args, cx);
/// assert_eq!(call.argument("topic"), Some("rust"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct PromptCall {
    /// The `arguments` object (empty when the client sent none).
    pub arguments: Map<String, Value>,
    /// The request's context.
    pub context: Context,
    /// The values of the prompt's resolved parameters, in the order of [`Prompt::resolvers`];
    /// read by generated code only.
    pub(crate) resolved: Vec<crate::question::Settled>,
}

impl PromptCall {
    /// A call with these arguments and context.
    pub fn new(arguments: Map<String, Value>, context: Context) -> Self {
        Self {
            arguments,
            context,
            resolved: Vec::new(),
        }
    }
    /// The string value of argument `name`, if given.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).and_then(Value::as_str)
    }
}

/// A prompt the server can list and get. `#[prompt]` implements it; implement it by hand for
/// prompts whose shape is only known at run time.
///
/// ```
/// use mcp_resolve_runtime::{
///     prompt::{GetPromptResult, Prompt, PromptArgument, PromptCall, PromptDefinition, PromptMessage},
///     protocol::ErrorObject,
///     tool::Content,
/// };
/// use futures_util::future::BoxFuture;
///
/// struct Greet;
/// impl Prompt for Greet {
///     fn definition(&self) -> PromptDefinition {
///         PromptDefinition::new("greet").argument(PromptArgument::new("name", true))
///     }
///     fn get(&self, call: PromptCall) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> {
///         let name = call.argument("name").unwrap_or("you").to_owned();
///         Box::pin(async move {
///             Ok(GetPromptResult::new(vec![PromptMessage::user(Content::text(format!("Greet {name}")))]))
///         })
///     }
/// }
/// # let _ = Greet.definition();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt",
    note = "annotate an `async fn` with `#[prompt]`, or implement `Prompt` by hand"
)]
pub trait Prompt: Send + Sync + 'static {
    /// The prompt's metadata; called once, at registration.
    fn definition(&self) -> PromptDefinition;
    /// The parameters filled by resolvers (`#[resolve(fn)]`, whose parameters may read the
    /// prompt's arguments); none by default.
    #[doc(hidden)]
    fn resolvers(&self) -> &'static [crate::resolve::def::ResolveSlot] {
        &[]
    }
    /// The application state its own parameters take (`State<T>`), `None` for each other one;
    /// its resolvers' are read from them. The server checks it holds each before it serves.
    #[doc(hidden)]
    fn states(&self) -> &'static [Option<crate::app_state::StateNeed>] {
        &[]
    }
    /// Renders the prompt.
    fn get(&self, call: PromptCall) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>>;
}

/// Checks a `prompts/get`'s `arguments` against the definition: every value a string, every
/// required argument present. Unknown arguments are ignored.
pub(crate) fn check_arguments(def: &PromptDefinition, arguments: &Map<String, Value>) -> Result<(), ErrorObject> {
    if let Some((key, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
        return Err(ErrorObject::invalid_params(format!(
            "Invalid params: prompt argument `{key}` must be a string"
        )));
    }
    let missing: Vec<&str> = def
        .arguments
        .iter()
        .filter(|a| a.required && !arguments.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let list = missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
    Err(
        ErrorObject::invalid_params(format!("Invalid params: missing required argument(s) {list}"))
            .with_data(serde_json::json!({ "missing": missing })),
    )
}

crate::item::into_item!(
    /// What [`Server::prompt`](crate::Server::prompt) registers: a `#[prompt]` function, or a
    /// value implementing [`Prompt`].
    ///
    /// ```
    /// use mcp_resolve_runtime::prompt::{IntoPrompt, Prompt};
    /// fn registered<A>(prompt: impl IntoPrompt<A>) -> String {
    ///     prompt.into_prompt().definition().name
    /// }
    /// ```
    IntoPrompt,
    Prompt,
    into_prompt,
    "`{Self}` is not a prompt",
    "not a `#[prompt]` function",
    "annotate an `async fn` with `#[prompt]`, or implement `Prompt` by hand"
);
