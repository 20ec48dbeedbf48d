//! Completions (`completion/complete`): the values a client may offer for a prompt argument or a
//! resource template variable, from a completer declared with `#[arg(complete = fn_name)]`.

use crate::context::Context;
use crate::protocol::ErrorObject;
use futures_util::future::BoxFuture;
use serde::Serialize;

/// The most values one `completion/complete` returns; `total` and `hasMore` say what was left out.
///
/// ```
/// assert_eq!(mcp_resolve_runtime::completion::MAX_COMPLETIONS, 100);
/// ```
pub const MAX_COMPLETIONS: usize = 100;

/// A completer: given what the user typed so far, the values to offer. `#[arg(complete = f)]`
/// makes one of `async fn f(value: String, cx: Context) -> Vec<String>`, or of
/// `async fn f(value: String, state: State<T>) -> Vec<String>` to read application state.
///
/// ```
/// use mcp_resolve_runtime::{Context, completion::Completer};
/// fn colours(value: String, _: Context) -> futures_util::future::BoxFuture<'static, Vec<String>> {
///     Box::pin(async move {
///         ["red", "green"].iter().filter(|c| c.starts_with(&value)).map(|c| c.to_string()).collect()
///     })
/// }
/// let c = Completer::new(colours);
/// # let _ = c;
/// ```
#[derive(Clone, Copy)]
pub struct Completer(
    fn(String, Context) -> BoxFuture<'static, Vec<String>>,
    Option<crate::app_state::StateNeed>,
);

impl Completer {
    /// A completer running `f`.
    pub fn new(f: fn(String, Context) -> BoxFuture<'static, Vec<String>>) -> Self {
        Self(f, None)
    }
    /// The same completer, taking application state of the type `need` names (which the server
    /// checks it holds before it serves).
    #[doc(hidden)]
    pub fn needing(self, need: Option<crate::app_state::StateNeed>) -> Self {
        Self(self.0, need)
    }
    pub(crate) fn run(self, value: String, cx: Context) -> BoxFuture<'static, Vec<String>> {
        (self.0)(value, cx)
    }
    /// The application state it takes.
    pub(crate) fn need(&self) -> Option<crate::app_state::StateNeed> {
        self.1
    }
}

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Completer")
    }
}

/// Completers compare equal: a definition's equality is about what is listed.
impl PartialEq for Completer {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Completion {
    pub(crate) values: Vec<String>,
    pub(crate) total: usize,
    pub(crate) has_more: bool,
}

#[derive(Serialize)]
pub(crate) struct CompleteResult {
    pub(crate) completion: Completion,
}

impl CompleteResult {
    /// At most [`MAX_COMPLETIONS`] of `values`, with the total.
    pub(crate) fn capped(mut values: Vec<String>) -> Self {
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        Self {
            completion: Completion {
                has_more: total > values.len(),
                values,
                total,
            },
        }
    }
}

/// What `completion/complete` asks about, read from `ref` and `argument`.
pub(crate) struct CompleteRequest {
    /// `ref/prompt` (the name) or `ref/resource` (the URI template).
    pub(crate) prompt: bool,
    pub(crate) target: String,
    pub(crate) argument: String,
    pub(crate) value: String,
}

impl CompleteRequest {
    pub(crate) fn read(
        reference: Option<&serde_json::value::RawValue>,
        argument: Option<&serde_json::value::RawValue>,
    ) -> Result<Self, ErrorObject> {
        #[derive(serde::Deserialize)]
        struct Ref {
            #[serde(rename = "type")]
            kind: String,
            name: Option<String>,
            uri: Option<String>,
        }
        #[derive(serde::Deserialize)]
        struct Arg {
            name: String,
            value: String,
        }
        let bad = |what: &str| ErrorObject::invalid_params(format!("Invalid params: {what}"));
        let reference: Ref = reference
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .ok_or_else(|| {
                bad("`ref` must be {\"type\": \"ref/prompt\", \"name\": …} or {\"type\": \"ref/resource\", \"uri\": …}")
            })?;
        let argument: Arg = argument
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .ok_or_else(|| bad("`argument` must be {\"name\": …, \"value\": …} with strings"))?;
        let (prompt, target) = match (reference.kind.as_str(), reference.name, reference.uri) {
            ("ref/prompt", Some(name), _) => (true, name),
            ("ref/resource", _, Some(uri)) => (false, uri),
            _ => {
                return Err(bad(
                    "`ref` must be {\"type\": \"ref/prompt\", \"name\": …} or {\"type\": \"ref/resource\", \"uri\": …}",
                ));
            }
        };
        Ok(Self {
            prompt,
            target,
            argument: argument.name,
            value: argument.value,
        })
    }
}
