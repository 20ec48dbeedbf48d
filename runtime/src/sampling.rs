//! Questions for the client rather than the user: an LLM sample (`sampling/createMessage`) and
//! the client's roots (`roots/list`). A resolver returns them as it returns a form; both are
//! deprecated in 2026-07-28 (SEP-2577) but still served there as input requests.

use crate::elicit::{Ask, AskRequest, IntoResolution, Resolution};
use crate::protocol::content::Content;
use crate::protocol::content::Role;
use crate::protocol::messages::{CreateMessageParams, ModelHint, ModelPreferences, SamplingMessage};
use serde::Deserialize;
use serde_json::Value;

/// The `maxTokens` of a [`Sample`] unless [`Sample::max_tokens`] says otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// Asks the client's LLM for a message (`sampling/createMessage`). The resolver's value is the
/// reply, a [`Sampled`]. The client must declare the `sampling` capability.
///
/// ```
/// use mcp_resolve_runtime::{elicit::Resolution, sampling::{Sample, Sampled}};
/// fn ask() -> Resolution<Sampled> {
///     Sample::new("What is the capital of France?")
///         .system_prompt("Answer in one word.")
///         .max_tokens(100)
///         .into()
/// }
/// assert!(matches!(ask(), Resolution::Ask(_)));
/// ```
#[derive(Clone, Debug)]
pub struct Sample {
    params: CreateMessageParams,
}

impl Sample {
    /// A request whose one message is the user's `text`; `maxTokens` is [`DEFAULT_MAX_TOKENS`].
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            params: CreateMessageParams {
                messages: vec![SamplingMessage {
                    role: Role::User,
                    content: Content::text(text),
                }],
                max_tokens: DEFAULT_MAX_TOKENS,
                system_prompt: None,
                temperature: None,
                stop_sequences: Vec::new(),
                model_preferences: None,
            },
        }
    }
    /// Adds a message (text, image or audio content) after the ones already there.
    pub fn message(mut self, role: Role, content: Content) -> Self {
        self.params.messages.push(SamplingMessage { role, content });
        self
    }
    /// Adds a user text message.
    pub fn user(self, text: impl Into<String>) -> Self {
        self.message(Role::User, Content::text(text))
    }
    /// Adds an assistant text message (an earlier turn of the conversation).
    pub fn assistant(self, text: impl Into<String>) -> Self {
        self.message(Role::Assistant, Content::text(text))
    }
    /// The most tokens the reply may take.
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.params.max_tokens = n;
        self
    }
    /// A system prompt the client may use.
    pub fn system_prompt(mut self, text: impl Into<String>) -> Self {
        self.params.system_prompt = Some(text.into());
        self
    }
    /// The sampling temperature.
    pub fn temperature(mut self, t: f64) -> Self {
        self.params.temperature = Some(t);
        self
    }
    /// A sequence at which the client's model should stop.
    pub fn stop_sequence(mut self, s: impl Into<String>) -> Self {
        self.params.stop_sequences.push(s.into());
        self
    }
    /// A model the server would like (`modelPreferences.hints`); the client decides.
    pub fn model_hint(mut self, name: impl Into<String>) -> Self {
        let prefs = self
            .params
            .model_preferences
            .get_or_insert_with(ModelPreferences::default);
        prefs.hints.push(ModelHint { name: name.into() });
        self
    }
}

/// The client's reply to a [`Sample`] (a `CreateMessageResult`).
///
/// ```
/// use mcp_resolve_runtime::{prompt::Role, sampling::Sampled, tool::Content};
/// let reply = Sampled::new(Role::Assistant, Content::text("Paris"), "test-model");
/// assert_eq!(reply.text(), Some("Paris"));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Sampled {
    /// Who speaks: the assistant, as a rule.
    pub role: Role,
    /// What the model said: text, image or audio items, in order (items of other kinds are left
    /// out).
    pub content: Vec<Content>,
    /// The model that answered.
    pub model: String,
    /// Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, …), when the client says.
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// A reply with one content item.
    pub fn new(role: Role, content: Content, model: impl Into<String>) -> Self {
        Self {
            role,
            content: vec![content],
            model: model.into(),
            stop_reason: None,
        }
    }
    /// The first text item, if the reply has one.
    pub fn text(&self) -> Option<&str> {
        self.content.iter().find_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
    }

    /// Reads a `CreateMessageResult`: `role`, `model` and `content` (one item or a list) are
    /// required.
    pub(crate) fn read(answer: &Value) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct Wire {
            role: Role,
            content: Value,
            model: String,
            #[serde(default, rename = "stopReason")]
            stop_reason: Option<String>,
        }
        let w = Wire::deserialize(answer).map_err(|e| format!("not a sampling result: {e}"))?;
        let items = match w.content {
            Value::Array(items) => items,
            one @ Value::Object(_) => vec![one],
            _ => return Err("not a sampling result: `content` must be an object or a list".into()),
        };
        let content = items
            .into_iter()
            .filter_map(|item| Content::deserialize(item).ok())
            .filter(|c| !matches!(c, Content::Resource { .. }))
            .collect();
        Ok(Self {
            role: w.role,
            content,
            model: w.model,
            stop_reason: w.stop_reason,
        })
    }
}

impl From<Sample> for Ask<Sampled> {
    fn from(s: Sample) -> Self {
        Ask {
            request: AskRequest::Sampling(s.params),
            parse: Box::new(Sampled::read),
        }
    }
}

impl From<Sample> for Resolution<Sampled> {
    fn from(s: Sample) -> Self {
        Self::Ask(s.into())
    }
}

impl IntoResolution for Sample {
    type Output = Sampled;
    fn into_resolution(self) -> Result<Resolution<Sampled>, String> {
        Ok(Resolution::Ask(self.into()))
    }
}

/// Asks the client for its roots (`roots/list`): the directories or files it lets the server
/// work in. The resolver's value is the list, `Vec<Root>`. The client must declare the `roots`
/// capability.
///
/// ```
/// use mcp_resolve_runtime::{elicit::Resolution, sampling::{ListRoots, Root}};
/// fn ask() -> Resolution<Vec<Root>> {
///     ListRoots.into()
/// }
/// assert!(matches!(ask(), Resolution::Ask(_)));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ListRoots;

/// One root the client offers.
///
/// ```
/// use mcp_resolve_runtime::sampling::Root;
/// let r: Root = serde_json::from_value(serde_json::json!({"uri": "file:///work", "name": "work"})).unwrap();
/// assert_eq!(r.uri, "file:///work");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[non_exhaustive]
pub struct Root {
    /// The root's URI (`file://…`).
    pub uri: String,
    /// A name for it, when the client gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Reads a `ListRootsResult`: `{"roots": [{"uri": …, "name"?: …}, …]}`.
impl Root {
    /// A root at `uri` (`file://…`), without a name.
    ///
    /// ```
    /// use mcp_resolve_runtime::sampling::Root;
    /// let r = Root::new("file:///work/notes").name("notes");
    /// assert_eq!(serde_json::to_value(&r).unwrap(), serde_json::json!({"uri": "file:///work/notes", "name": "notes"}));
    /// ```
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
        }
    }
    /// Names it.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

fn read_roots(answer: &Value) -> Result<Vec<Root>, String> {
    #[derive(Deserialize)]
    struct Wire {
        roots: Vec<Root>,
    }
    Wire::deserialize(answer)
        .map(|w| w.roots)
        .map_err(|e| format!("not a roots result: {e}"))
}

impl From<ListRoots> for Ask<Vec<Root>> {
    fn from(_: ListRoots) -> Self {
        Ask {
            request: AskRequest::Roots,
            parse: Box::new(read_roots),
        }
    }
}

impl From<ListRoots> for Resolution<Vec<Root>> {
    fn from(r: ListRoots) -> Self {
        Self::Ask(r.into())
    }
}

impl IntoResolution for ListRoots {
    type Output = Vec<Root>;
    fn into_resolution(self) -> Result<Resolution<Vec<Root>>, String> {
        Ok(Resolution::Ask(self.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sampling_result_is_read_with_one_item_or_a_list() {
        let one = Sampled::read(&json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"})).unwrap();
        assert_eq!(one.text(), Some("Paris"));
        assert_eq!(one.stop_reason.as_deref(), Some("endTurn"));
        let many = Sampled::read(&json!({"role": "assistant", "content": [{"type": "tool_use", "id": "x"}, {"type": "text", "text": "Hi"}], "model": "m"})).unwrap();
        assert_eq!(many.content, vec![Content::text("Hi")]);
        assert!(Sampled::read(&json!({"role": "assistant", "content": "Paris", "model": "m"})).is_err());
        assert!(Sampled::read(&json!({"content": {"type": "text", "text": "x"}, "model": "m"})).is_err());
    }

    #[test]
    fn sample_params_are_what_the_wire_wants() {
        let Ask {
            request: AskRequest::Sampling(p),
            ..
        } = Ask::from(
            Sample::new("Hi")
                .assistant("Hello")
                .max_tokens(50)
                .model_hint("claude")
                .temperature(0.5),
        )
        else {
            panic!("a sampling request")
        };
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "Hi"}},
                    {"role": "assistant", "content": {"type": "text", "text": "Hello"}}
                ],
                "maxTokens": 50,
                "temperature": 0.5,
                "modelPreferences": {"hints": [{"name": "claude"}]}
            })
        );
    }

    #[test]
    fn roots_are_read_from_their_result() {
        assert_eq!(
            read_roots(&json!({"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]}))
                .unwrap()
                .len(),
            2
        );
        assert!(read_roots(&json!({"roots": "x"})).is_err());
        assert!(read_roots(&json!([])).is_err());
    }
}
