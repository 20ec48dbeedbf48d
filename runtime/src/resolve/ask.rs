//! How a question reaches the user, one asker per era:
//! - [`Collect`] (2026-07-28): a question goes into the round's `InputRequiredResult`; its answer
//!   comes back in the retry's `inputResponses`, and answers kept from earlier rounds ride in the
//!   sealed state.
//! - [`BackChannel`] (handshake era): a question is a request to the client (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`), awaited now.

use super::def::{AskSpec, Settled};
use super::state::{Kept, RoundState};
use crate::elicit::{Action, AskRequest};
use crate::peer::{Peer, PeerError};
use crate::protocol::messages::{ElicitRequestParams, ElicitResult, EmptyResult, InputParams, InputRequest};
use crate::protocol::{ErrorObject, ProtocolVersion};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// What asking produced.
pub(crate) enum Asked {
    /// The resolver's value, or why it failed (its message).
    Done(Result<Settled, String>),
    /// Asked; the answer comes in a later round.
    Pending,
    /// A JSON-RPC error ends the call (the client answered the question with an error).
    Abort(ErrorObject),
}

/// One question, as both askers see it.
pub(crate) struct Question<'a> {
    /// What asks, for logs and messages: `tool`, `prompt`, `resource`.
    pub(crate) kind: &'static str,
    /// The tool's or prompt's name, the resource's URI.
    pub(crate) target: &'a str,
    pub(crate) key: &'a str,
    pub(crate) ask: &'a AskSpec,
    /// A form's era-neutral rendering (without its top-level title), which the digest is taken
    /// over and 2026-07-28 sends; `None` for other kinds.
    pub(crate) schema: Option<Map<String, Value>>,
    /// The digest of its era-neutral rendering: an answer counts only for this very question.
    pub(crate) digest: String,
    pub(crate) version: ProtocolVersion,
}

/// An answer as the asker reads it: an `ElicitResult` for a form, the whole result for a
/// sampling or roots request.
enum Answer {
    Elicit(ElicitResult),
    Result(Value),
}

impl Answer {
    /// What the client sent for `request`.
    fn read(request: &AskRequest, sent: Value) -> Self {
        match request {
            AskRequest::Form { .. } => Self::Elicit(ElicitResult::read(&sent).unwrap_or(ElicitResult {
                action: String::new(),
                content: None,
            })),
            _ => Self::Result(sent),
        }
    }

    /// An answer kept in the state.
    fn restore(request: &AskRequest, kept: &Kept) -> Self {
        let content = kept.content.as_ref().and_then(|c| serde_json::from_str(c.get()).ok());
        match request {
            AskRequest::Form { .. } => Self::Elicit(ElicitResult {
                action: kept.action.clone(),
                content,
            }),
            _ => Self::Result(content.unwrap_or(Value::Null)),
        }
    }

    /// The answer as the state keeps it.
    fn keep(&self, digest: &str) -> Kept {
        let raw = |v: &Value| serde_json::value::to_raw_value(v).ok();
        match self {
            Self::Elicit(e) => Kept {
                action: e.action.clone(),
                content: e.content.as_ref().and_then(raw),
                q: digest.to_owned(),
            },
            Self::Result(v) => Kept {
                action: Action::Accept.as_str().to_owned(),
                content: raw(v),
                q: digest.to_owned(),
            },
        }
    }
}

/// What a question is, in the words of its messages.
fn what(request: &AskRequest) -> &'static str {
    match request {
        AskRequest::Form { .. } => "form",
        AskRequest::Sampling(_) => "sampling",
        AskRequest::Roots => "roots",
    }
}

impl Question<'_> {
    /// The request's params; a form gets its title back on the handshake era.
    pub(crate) fn params(&self) -> InputParams {
        match &self.ask.request {
            AskRequest::Form { message, schema } => InputParams::Elicit(ElicitRequestParams {
                mode: (self.version > ProtocolVersion::V2025_06_18).then_some("form"),
                message: message.clone(),
                requested_schema: match (&self.schema, self.version.era()) {
                    (Some(neutral), crate::Era::Stateless) => neutral.clone(),
                    _ => schema(crate::form::RenderOptions {
                        top_level_title: self.version.era() == crate::Era::Handshake,
                    }),
                },
            }),
            AskRequest::Sampling(p) => InputParams::Sampling(p.clone()),
            AskRequest::Roots => InputParams::Roots(EmptyResult {}),
        }
    }

    /// Applies one answer; `None` when it is malformed (not an `ElicitResult`, or not an object).
    fn apply(&self, answer: &Answer, round: u64) -> Option<Result<Settled, String>> {
        let key = self.key;
        let mode = what(&self.ask.request);
        let settled = match answer {
            Answer::Elicit(answer) => {
                let action = Action::parse(&answer.action)?;
                tracing::info!(
                    kind = self.kind,
                    target = self.target,
                    key,
                    mode,
                    action = action.as_str(),
                    round,
                    "question answered"
                );
                match action {
                    Action::Accept => match &answer.content {
                        Some(content @ Value::Object(_)) => match (self.ask.parse)(content) {
                            Ok(v) => Ok(Settled::Answered(Action::Accept, Some(v))),
                            Err(e) => Err(format!(
                                "resolver `{key}` received an answer that does not match its form: {e}"
                            )),
                        },
                        Some(_) => Err(format!(
                            "resolver `{key}` received accepted content that is not an object"
                        )),
                        None => Err(format!("resolver `{key}` received an accepted answer with no content")),
                    },
                    other => Ok(Settled::Answered(other, None)),
                }
            }
            Answer::Result(result) => {
                if !result.is_object() {
                    return None;
                }
                tracing::info!(
                    kind = self.kind,
                    target = self.target,
                    key,
                    mode,
                    round,
                    "question answered"
                );
                (self.ask.parse)(result)
                    .map(|v| Settled::Answered(Action::Accept, Some(v)))
                    .map_err(|e| format!("resolver `{key}` received an answer it cannot read: {e}"))
            }
        };
        Some(settled)
    }
}

/// 2026-07-28: questions are collected for the round's `InputRequiredResult`.
pub(crate) struct Collect {
    /// The state the retry brought back (empty on the first round).
    pub(crate) state: RoundState,
    /// The retry's `inputResponses`.
    pub(crate) responses: Map<String, Value>,
    /// Questions for this round.
    pub(crate) requests: BTreeMap<String, InputRequest>,
    /// The digest of each question asked now.
    pub(crate) asked_now: BTreeMap<String, String>,
    /// Answers to keep for the next round.
    pub(crate) keep: BTreeMap<String, Kept>,
}

impl Collect {
    pub(crate) fn new(state: RoundState, responses: Map<String, Value>) -> Self {
        Self {
            state,
            responses,
            requests: BTreeMap::new(),
            asked_now: BTreeMap::new(),
            keep: BTreeMap::new(),
        }
    }

    fn defer(&mut self, q: &Question<'_>) -> Asked {
        self.asked_now.insert(q.key.to_owned(), q.digest.clone());
        self.requests.insert(
            q.key.to_owned(),
            InputRequest {
                method: q.ask.request.method(),
                params: q.params(),
            },
        );
        Asked::Pending
    }

    pub(crate) fn ask(&mut self, q: &Question<'_>) -> Asked {
        let (target, key) = (q.target, q.key);
        let mode = what(&q.ask.request);
        let round = self.state.round;
        // An answer kept from an earlier round, to this very question; or one given now to the
        // question asked last round.
        let restored = match self.state.outcomes.get(key) {
            Some(k) if k.q == q.digest => self.state.outcomes.remove(key),
            _ => None,
        };
        let answer = match &restored {
            Some(kept) => Some(Answer::restore(&q.ask.request, kept)),
            None => {
                let asked_this = self.state.asked.get(key) == Some(&q.digest);
                match self.responses.remove(key) {
                    Some(answer) if asked_this => Some(Answer::read(&q.ask.request, answer)),
                    Some(_) => {
                        tracing::info!(target, key, "answer discarded: the question changed since it was asked");
                        None
                    }
                    None => None,
                }
            }
        };
        let Some(answer) = answer else {
            tracing::info!(kind = q.kind, target, key, mode, round = round + 1, "question asked");
            return self.defer(q);
        };
        match q.apply(&answer, round) {
            Some(settled) => {
                if settled.is_ok() {
                    // A kept answer goes on as the text it was sealed as; a new one is written once.
                    let kept = restored.unwrap_or_else(|| answer.keep(&q.digest));
                    self.keep.insert(key.to_owned(), kept);
                }
                Asked::Done(settled)
            }
            None => {
                // Malformed: it never completes the call; ask again.
                tracing::info!(target, key, "malformed answer; asking again");
                self.defer(q)
            }
        }
    }
}

/// Handshake era: each question is a request to the client, awaited in turn.
pub(crate) struct BackChannel {
    pub(crate) peer: Peer,
    pub(crate) timeout: Duration,
    pub(crate) max_questions: u64,
    pub(crate) questions: u64,
}

impl BackChannel {
    pub(crate) async fn ask(&mut self, q: &Question<'_>) -> Asked {
        let (target, key) = (q.target, q.key);
        let mode = what(&q.ask.request);
        self.questions += 1;
        if self.questions > self.max_questions {
            return Asked::Done(Err(format!(
                "{} `{target}` stopped: it needed more than {} questions",
                q.kind, self.max_questions
            )));
        }
        let round = self.questions;
        tracing::info!(kind = q.kind, target, key, mode, round, "question asked");
        match self
            .peer
            .request(q.ask.request.method(), &q.params(), self.timeout)
            .await
        {
            Ok(answer) => match q.apply(&Answer::read(&q.ask.request, answer), round) {
                Some(settled) => Asked::Done(settled),
                None => Asked::Done(Err(format!("resolver `{key}` received a malformed answer"))),
            },
            Err(PeerError::Client(e)) => {
                tracing::info!(
                    target,
                    key,
                    code = e.code,
                    "the client answered the question with an error"
                );
                Asked::Abort(e)
            }
            Err(PeerError::Timeout) => {
                Asked::Done(Err(format!("resolver `{key}`: no answer within {:?}", self.timeout)))
            }
            Err(PeerError::Busy(n)) => {
                tracing::warn!(
                    target,
                    key,
                    waiting = n,
                    "question not asked: too many wait for the client"
                );
                Asked::Done(Err(format!(
                    "resolver `{key}`: {n} questions already wait for the client's answers; try again once some are answered"
                )))
            }
            Err(PeerError::Closed) => {
                Asked::Done(Err(format!("resolver `{key}`: the client went away before answering")))
            }
        }
    }
}
