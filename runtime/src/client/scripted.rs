//! Answers written in advance, for tests: per question key, per round, with a default; every
//! question asked is kept for assertions.

use super::elicitation::{Answer, ElicitationHandler, ElicitationRequest};
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// An [`ElicitationHandler`] that answers from a script: by the question's key (its key in
/// `inputRequests`, or on the handshake era the key an mcp-resolve server names in `_meta`),
/// optionally by the how-many-th time that key is asked, else a default (cancel). Clones share
/// the script and the record, so keep one to assert on after handing one to the client.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_resolve_runtime::client::ClientError> {
/// use mcp_resolve_runtime::Server;
/// use mcp_resolve_runtime::client::{Answer, Client, Scripted};
/// let answers = Scripted::new()
///     .on("confirm_delete", Answer::json(serde_json::json!({"ok": true})))
///     .on_round("confirm_delete", 2, Answer::Decline);
/// let client = Client::builder().elicitation(answers.clone()).in_process(Server::new("notes")).await?;
/// // … call the tools; then assert on what was asked:
/// assert!(answers.keys().is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Scripted {
    inner: Arc<Mutex<Script>>,
}

#[derive(Default)]
struct Script {
    by_key: HashMap<String, Answer>,
    by_round: HashMap<(String, usize), Answer>,
    otherwise: Option<Answer>,
    url: bool,
    form: bool,
    asked: Vec<ElicitationRequest>,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripted")
            .field("asked", &self.keys())
            .finish_non_exhaustive()
    }
}

impl Scripted {
    /// An empty script: every question is cancelled; form and URL mode declared.
    pub fn new() -> Self {
        let s = Self::default();
        {
            let mut i = s.lock();
            i.url = true;
            i.form = true;
        }
        s
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Answers question `key` with `answer` every time it is asked (unless a round says
    /// otherwise).
    pub fn on(self, key: &str, answer: Answer) -> Self {
        self.lock().by_key.insert(key.to_owned(), answer);
        self
    }

    /// Answers the `n`-th time question `key` is asked (1 for the first) with `answer`.
    pub fn on_round(self, key: &str, n: usize, answer: Answer) -> Self {
        self.lock().by_round.insert((key.to_owned(), n), answer);
        self
    }

    /// The answer to any question the script does not name (default: [`Answer::Cancel`]).
    pub fn otherwise(self, answer: Answer) -> Self {
        self.lock().otherwise = Some(answer);
        self
    }

    /// Declares form mode only: a server must not ask this client in URL mode.
    pub fn form_only(self) -> Self {
        self.lock().url = false;
        self
    }

    /// Declares URL mode only.
    pub fn url_only(self) -> Self {
        self.lock().form = false;
        self
    }

    /// Every question asked so far, in order.
    pub fn asked(&self) -> Vec<ElicitationRequest> {
        self.lock().asked.clone()
    }

    /// The keys of the questions asked so far, in order (`?` for a question without a key).
    pub fn keys(&self) -> Vec<String> {
        self.lock()
            .asked
            .iter()
            .map(|q| q.key.clone().unwrap_or_else(|| "?".into()))
            .collect()
    }

    /// Forgets the questions asked so far (the script stays).
    pub fn clear(&self) {
        self.lock().asked.clear();
    }
}

impl Answer {
    /// Accepts with `content`, a JSON object (anything else is sent as an empty form).
    ///
    /// ```
    /// use mcp_resolve_runtime::client::Answer;
    /// let a = Answer::json(serde_json::json!({"ok": true}));
    /// assert_eq!(a.to_wire()["content"]["ok"], true);
    /// ```
    pub fn json(content: Value) -> Self {
        match content {
            Value::Object(m) => Self::Accept(Some(m)),
            _ => Self::Accept(Some(serde_json::Map::new())),
        }
    }
}

impl ElicitationHandler for Scripted {
    fn answer(&self, request: ElicitationRequest) -> BoxFuture<'static, Answer> {
        let mut s = self.lock();
        let key = request.key.clone().unwrap_or_default();
        let n = s
            .asked
            .iter()
            .filter(|q| q.key.as_deref().unwrap_or_default() == key)
            .count()
            + 1;
        let answer = s
            .by_round
            .get(&(key.clone(), n))
            .or_else(|| s.by_key.get(&key))
            .or(s.otherwise.as_ref())
            .cloned()
            .unwrap_or(Answer::Cancel);
        s.asked.push(request);
        Box::pin(std::future::ready(answer))
    }
    fn form(&self) -> bool {
        self.lock().form
    }
    fn url(&self) -> bool {
        self.lock().url
    }
}
