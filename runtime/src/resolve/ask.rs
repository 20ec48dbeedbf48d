//! How a question reaches the user, one asker per era:
//! - [`Collect`] (2026-07-28): a question goes into the round's `InputRequiredResult`; its answer
//!   comes back in the retry's `inputResponses`, and answers kept from earlier rounds ride in the
//!   sealed state.
//! - [`BackChannel`] (handshake era): a question is an `elicitation/create` request to the client,
//!   awaited now.

use super::def::{AskForm, Settled};
use super::state::{Kept, RoundState};
use crate::elicit::Action;
use crate::peer::{Peer, PeerError};
use crate::protocol::messages::{ELICITATION_CREATE, ElicitRequestParams, ElicitResult, InputRequest};
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
    pub(crate) tool: &'a str,
    pub(crate) key: &'a str,
    pub(crate) form: &'a AskForm,
    /// The form rendered without its top-level title (the digest is taken over this).
    pub(crate) schema: Map<String, Value>,
    pub(crate) digest: String,
    pub(crate) version: ProtocolVersion,
}

impl Question<'_> {
    /// The `elicitation/create` params; the handshake era gets the form's title back.
    fn params(&self) -> ElicitRequestParams {
        let requested_schema = match self.version.era() {
            crate::Era::Handshake => (self.form.schema)(crate::form::RenderOptions { top_level_title: true }),
            crate::Era::Stateless => self.schema.clone(),
        };
        ElicitRequestParams {
            mode: (self.version > ProtocolVersion::V2025_06_18).then_some("form"),
            message: self.form.message.clone(),
            requested_schema,
        }
    }

    /// Applies one answer; `None` when it is malformed (not an `ElicitResult`).
    fn apply(&self, answer: &ElicitResult, round: u64) -> Option<Result<Settled, String>> {
        let action = Action::parse(&answer.action)?;
        let key = self.key;
        tracing::info!(
            tool = self.tool,
            key,
            mode = "form",
            action = action.as_str(),
            round,
            "question answered"
        );
        Some(match action {
            Action::Accept => match &answer.content {
                Some(Value::Object(content)) => match (self.form.parse)(content) {
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
        })
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
                method: ELICITATION_CREATE,
                params: q.params(),
            },
        );
        Asked::Pending
    }

    pub(crate) fn ask(&mut self, q: &Question<'_>) -> Asked {
        let (tool, key) = (q.tool, q.key);
        let round = self.state.round;
        // An answer kept from an earlier round, to this very question; or one given now to the
        // question asked last round.
        let restored = match self.state.outcomes.get(key) {
            Some(k) if k.q == q.digest => self.state.outcomes.remove(key),
            _ => None,
        };
        let answer = match &restored {
            Some(kept) => Some(ElicitResult {
                action: kept.action.clone(),
                content: kept.content.as_ref().and_then(|c| serde_json::from_str(c.get()).ok()),
            }),
            None => {
                let asked_this = self.state.asked.get(key) == Some(&q.digest);
                match self.responses.remove(key) {
                    Some(answer) if asked_this => Some(ElicitResult::read(&answer).unwrap_or(ElicitResult {
                        action: String::new(),
                        content: None,
                    })),
                    Some(_) => {
                        tracing::info!(tool, key, "answer discarded: the question changed since it was asked");
                        None
                    }
                    None => None,
                }
            }
        };
        let Some(answer) = answer else {
            tracing::info!(tool, key, mode = "form", round = round + 1, "question asked");
            return self.defer(q);
        };
        match q.apply(&answer, round) {
            Some(settled) => {
                if settled.is_ok() {
                    // A kept answer goes on as the text it was sealed as; a new one is written once.
                    let kept = restored.unwrap_or_else(|| Kept {
                        content: answer
                            .content
                            .as_ref()
                            .and_then(|c| serde_json::value::to_raw_value(c).ok()),
                        action: answer.action,
                        q: q.digest.clone(),
                    });
                    self.keep.insert(key.to_owned(), kept);
                }
                Asked::Done(settled)
            }
            None => {
                // Malformed: it never completes the call; ask again.
                tracing::info!(tool, key, "malformed answer; asking again");
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
        let (tool, key) = (q.tool, q.key);
        self.questions += 1;
        if self.questions > self.max_questions {
            return Asked::Done(Err(format!(
                "tool `{tool}` stopped: it needed more than {} questions",
                self.max_questions
            )));
        }
        let round = self.questions;
        tracing::info!(tool, key, mode = "form", round, "question asked");
        match self.peer.request(ELICITATION_CREATE, &q.params(), self.timeout).await {
            Ok(answer) => match ElicitResult::read(&answer).and_then(|a| q.apply(&a, round)) {
                Some(settled) => Asked::Done(settled),
                None => Asked::Done(Err(format!("resolver `{key}` received a malformed answer"))),
            },
            Err(PeerError::Client(e)) => {
                tracing::info!(
                    tool,
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
                    tool,
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
