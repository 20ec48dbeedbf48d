//! What the client does when a server asks the user: one [`ElicitationHandler`] answers the
//! questions of both eras (2026-07-28 `inputRequests`, handshake-era `elicitation/create` and
//! the URL elicitations of a -32042 error).

use crate::protocol::Implementation;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Map, Value};
use std::future::Future;

/// A question a server asks the user.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// Who asks: the server's name and version, as it gave them (or as the client was told to
    /// call it). Show it: the user must see which server wants to know.
    pub server: Implementation,
    /// The question.
    pub message: String,
    /// Form or URL mode.
    pub kind: ElicitationKind,
    /// The server's name for the question: its key in `inputRequests` (2026-07-28); on the
    /// handshake era, the key an mcp-resolve server puts in the request's `_meta`
    /// (`mcp-resolve/key`), `None` from other servers.
    pub key: Option<String>,
}

/// What the server asks for.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitationKind {
    /// A flat form: `requestedSchema`, an object of primitive properties.
    Form {
        /// The schema as sent (`type`, `properties`, `required`, …).
        schema: Map<String, Value>,
    },
    /// A page the user opens; nothing the user types there passes the client.
    Url {
        /// The page. Show it in full, its host highlighted, and open it only when the user
        /// agrees.
        url: String,
        /// The server's id of the flow (2025-11-25 only).
        elicitation_id: Option<String>,
    },
}

impl ElicitationRequest {
    /// The form's schema, if this is a form.
    pub fn schema(&self) -> Option<&Map<String, Value>> {
        match &self.kind {
            ElicitationKind::Form { schema } => Some(schema),
            ElicitationKind::Url { .. } => None,
        }
    }
    /// The page, if this is URL mode.
    pub fn url(&self) -> Option<&str> {
        match &self.kind {
            ElicitationKind::Url { url, .. } => Some(url),
            ElicitationKind::Form { .. } => None,
        }
    }
}

/// The user's answer: the three outcomes of every question.
///
/// ```
/// use mcp_resolve_runtime::client::Answer;
/// #[derive(serde::Serialize)]
/// struct Ok { ok: bool }
/// let a = Answer::form(&Ok { ok: true }).unwrap();
/// assert_eq!(a.to_wire(), serde_json::json!({"action": "accept", "content": {"ok": true}}));
/// assert_eq!(Answer::Decline.to_wire(), serde_json::json!({"action": "decline"}));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The user answered: the form's content, or `None` for consent to a URL.
    Accept(Option<Map<String, Value>>),
    /// The user said no.
    Decline,
    /// The user dismissed the question without choosing.
    Cancel,
}

impl Answer {
    /// Accepts a form with `content`, which must serialize to an object (e.g. the same struct
    /// the server derives `FormSchema` for, if it also derives `Serialize`).
    pub fn form(content: &impl Serialize) -> Result<Self, serde_json::Error> {
        match serde_json::to_value(content)? {
            Value::Object(m) => Ok(Self::Accept(Some(m))),
            other => Err(serde::ser::Error::custom(format!(
                "a form's content is an object, not {other}"
            ))),
        }
    }
    /// Consent to open a URL-mode page.
    pub fn consent() -> Self {
        Self::Accept(None)
    }
    /// The `ElicitResult` on the wire.
    pub fn to_wire(&self) -> Value {
        let mut m = Map::new();
        match self {
            Self::Accept(content) => {
                m.insert("action".into(), "accept".into());
                if let Some(c) = content {
                    m.insert("content".into(), Value::Object(c.clone()));
                }
            }
            Self::Decline => {
                m.insert("action".into(), "decline".into());
            }
            Self::Cancel => {
                m.insert("action".into(), "cancel".into());
            }
        }
        Value::Object(m)
    }
}

/// Answers the questions servers ask. Implemented for any
/// `Fn(ElicitationRequest) -> impl Future<Output = Answer>`.
///
/// ```
/// use mcp_resolve_runtime::client::{Answer, ElicitationRequest, Client};
/// let builder = Client::builder().elicitation(|q: ElicitationRequest| async move {
///     match q.url() {
///         Some(_) => Answer::Decline,  // never open pages unasked
///         None => Answer::Accept(Some(serde_json::json!({"ok": true}).as_object().unwrap().clone())),
///     }
/// });
/// # let _ = builder;
/// ```
pub trait ElicitationHandler: Send + Sync + 'static {
    /// The user's answer to `request`.
    fn answer(&self, request: ElicitationRequest) -> BoxFuture<'static, Answer>;
    /// Whether it answers form-mode questions (declared in the client's capabilities).
    fn form(&self) -> bool {
        true
    }
    /// Whether it answers URL-mode questions (declared in the client's capabilities).
    fn url(&self) -> bool {
        true
    }
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send + 'static,
{
    fn answer(&self, request: ElicitationRequest) -> BoxFuture<'static, Answer> {
        Box::pin(self(request))
    }
}

/// Fills in what an accepted form left out from the schema's defaults (SEP-1034): a property
/// with a `default` that the content does not hold gets it.
///
/// ```
/// use mcp_resolve_runtime::client::apply_defaults;
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "name": {"type": "string", "default": "anon"},
///     "age": {"type": "integer"}}});
/// let mut content = serde_json::Map::new();
/// apply_defaults(schema.as_object().unwrap(), &mut content);
/// assert_eq!(serde_json::Value::Object(content), serde_json::json!({"name": "anon"}));
/// ```
pub fn apply_defaults(schema: &Map<String, Value>, content: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

/// Reads an `elicitation/create` request's params into a question; `None` when they are not one
/// (no message, an unknown mode, a URL question without its URL, a form without a schema).
pub(crate) fn read_request(server: &Implementation, key: Option<String>, params: &Value) -> Option<ElicitationRequest> {
    let message = params.get("message")?.as_str()?.to_owned();
    let kind = match params.get("mode").and_then(Value::as_str) {
        None | Some("form") => ElicitationKind::Form {
            schema: params.get("requestedSchema")?.as_object()?.clone(),
        },
        Some("url") => ElicitationKind::Url {
            url: params.get("url")?.as_str()?.to_owned(),
            elicitation_id: params.get("elicitationId").and_then(Value::as_str).map(str::to_owned),
        },
        Some(_) => return None,
    };
    // On the handshake era an mcp-resolve server names the question in `_meta`.
    let key = key.or_else(|| {
        params
            .get("_meta")?
            .get(crate::protocol::messages::QUESTION_KEY_META)?
            .as_str()
            .map(str::to_owned)
    });
    Some(ElicitationRequest {
        server: server.clone(),
        message,
        kind,
        key,
    })
}

/// Asks `handler`, then applies the schema's defaults to an accepted form.
pub(crate) async fn ask(handler: &dyn ElicitationHandler, request: ElicitationRequest) -> Answer {
    let schema = request.schema().cloned();
    let mut answer = handler.answer(request).await;
    if let (Some(schema), Answer::Accept(content)) = (schema, &mut answer) {
        apply_defaults(&schema, content.get_or_insert_with(Map::new));
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server() -> Implementation {
        Implementation::new("notes", "1")
    }

    #[test]
    fn a_request_without_mode_is_a_form_and_url_mode_needs_its_url() {
        let q = read_request(
            &server(),
            None,
            &json!({"message": "m", "requestedSchema": {"type": "object"}}),
        )
        .unwrap();
        assert!(q.schema().is_some());
        let q = read_request(
            &server(),
            Some("k".into()),
            &json!({"mode": "url", "message": "m", "url": "https://x/y", "elicitationId": "e1"}),
        )
        .unwrap();
        assert_eq!(q.url(), Some("https://x/y"));
        assert_eq!(q.key.as_deref(), Some("k"));
        assert!(read_request(&server(), None, &json!({"mode": "url", "message": "m"})).is_none());
        assert!(read_request(&server(), None, &json!({"mode": "voice", "message": "m"})).is_none());
        assert!(read_request(&server(), None, &json!({"requestedSchema": {}})).is_none());
    }

    #[tokio::test]
    async fn defaults_fill_an_accepted_form_but_never_a_decline_or_a_given_value() {
        let schema = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "a": {"type": "string", "default": "x"}, "b": {"type": "boolean", "default": true}}}});
        let q = read_request(&server(), None, &schema).unwrap();
        let given = |q: ElicitationRequest| async move {
            let _ = q;
            Answer::Accept(Some(json!({"b": false}).as_object().unwrap().clone()))
        };
        let a = ask(&given, q.clone()).await;
        assert_eq!(
            a.to_wire(),
            json!({"action": "accept", "content": {"a": "x", "b": false}})
        );
        let declines = |_: ElicitationRequest| async { Answer::Decline };
        assert_eq!(ask(&declines, q).await, Answer::Decline);
    }
}
