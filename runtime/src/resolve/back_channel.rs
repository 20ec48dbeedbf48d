//! The asker that waits: each question is a request to the client on the connection's
//! back-channel (handshake era), or a question of a running task (its `tasks/get` shows it, a
//! `tasks/update` answers it), awaited in turn.

use super::ask::{Answer, AskContext, Asked, Question, outcome, what};
use super::state::FlowRef;
use crate::elicit::{Action, AskRequest};
use crate::peer::{Peer, PeerError};
use crate::protocol::messages::{ELICITATION_COMPLETE, ElicitResult, ElicitationCompleteParams};
use crate::tasks::TaskLine;
use serde_json::Value;
use std::time::Duration;

/// Where a waiting question goes.
#[derive(Clone, Debug)]
pub(crate) enum Line {
    /// A request on the connection's back-channel (handshake era).
    Peer(Peer),
    /// A question of a running task, under a key the task never used.
    Task(TaskLine),
}

impl Line {
    async fn request<P: serde::Serialize>(
        &self,
        method: &'static str,
        params: &P,
        key: &str,
        timeout: Duration,
    ) -> Result<Value, PeerError> {
        match self {
            Self::Peer(peer) => peer.request(method, params, timeout).await,
            Self::Task(task) => {
                let params = serde_json::to_value(params)
                    .map_err(|e| PeerError::Client(crate::protocol::ErrorObject::internal(e.to_string())))?;
                task.request(method, params, key, timeout).await
            }
        }
    }

    /// A notification about a question answered; a task has no stream to send it on.
    async fn notify<P: serde::Serialize>(&self, method: &'static str, params: &P) {
        if let Self::Peer(peer) = self {
            peer.notify(method, params).await;
        }
    }
}

/// Each question is a request to the client, awaited in turn.
pub(crate) struct BackChannel {
    pub(crate) peer: Line,
    pub(crate) timeout: Duration,
    pub(crate) max_questions: u64,
    pub(crate) questions: u64,
    pub(crate) asking: AskContext,
    /// The last question got no answer in time (telemetry: `expired`).
    pub(crate) expired: bool,
}

impl BackChannel {
    pub(crate) async fn ask(&mut self, q: &Question<'_>) -> Asked {
        let (target, key) = (q.target, q.key);
        let who = &q.who;
        let mode = what(&q.ask.request);
        self.questions += 1;
        if self.questions > self.max_questions {
            crate::telemetry::metric::limit_hit("rounds");
            return Asked::Done(Err(format!(
                "{} `{target}` stopped: it needed more than {} questions",
                q.kind, self.max_questions
            )));
        }
        let round = self.questions;
        let flow = match &q.ask.request {
            AskRequest::Url { .. } => match self.asking.start(q).await {
                Ok(flow) => Some(flow),
                Err(m) => return Asked::Done(Err(m)),
            },
            _ => None,
        };
        let params = match &flow {
            Some(flow) => q.url_params(&flow.url, &flow.id),
            None => q.params(),
        };
        tracing::info!(kind = q.kind, item = target, key, mode, round, "question asked");
        match self
            .peer
            .request(q.ask.request.method(), &params, key, self.timeout)
            .await
        {
            Ok(answer) => {
                let answer = match &flow {
                    Some(flow) => match self.url_answer(q, flow, &answer).await {
                        Ok(a) => a,
                        Err(m) => return Asked::Done(Err(m)),
                    },
                    None => Answer::read(&q.ask.request, answer),
                };
                match q.apply(&answer, round) {
                    Some(settled) => Asked::Done(settled),
                    // A task's answer came through `tasks/update`, which only acknowledges: as
                    // with a 2026-07-28 retry, a malformed one is asked again (under a new key).
                    None if matches!(self.peer, Line::Task(_)) => {
                        tracing::info!(item = target, key, "malformed answer; asking again");
                        Box::pin(self.ask(q)).await
                    }
                    None => Asked::Done(Err(format!("{who} received a malformed answer"))),
                }
            }
            Err(PeerError::Client(e)) => {
                tracing::info!(
                    item = target,
                    key,
                    code = e.code,
                    "the client answered the question with an error"
                );
                Asked::Abort(e)
            }
            Err(PeerError::Timeout) => {
                self.expired = true;
                Asked::Done(Err(format!("{who}: no answer within {:?}", self.timeout)))
            }
            Err(PeerError::Busy(n)) => {
                crate::telemetry::metric::limit_hit("waiting_questions");
                tracing::warn!(
                    item = target,
                    key,
                    waiting = n,
                    "question not asked: too many wait for the client"
                );
                Asked::Done(Err(format!(
                    "{who}: {n} questions already wait for the client's answers; try again once some are answered"
                )))
            }
            Err(PeerError::Closed) => Asked::Done(Err(format!("{who}: the client went away before answering"))),
            Err(PeerError::Stopping) => Asked::Done(Err(format!(
                "{who}: not answered: the server is shutting down; call again"
            ))),
            Err(PeerError::NotInitialized) => Asked::Done(Err(format!(
                "{who}: not asked: the client did not send notifications/initialized within {:?}",
                self.timeout
            ))),
        }
    }

    /// A URL-mode answer on the back-channel: a decline or cancel is the answer; an accept is the
    /// user's consent, and the question waits (up to the elicitation timeout) for the page to be
    /// completed, then tells the client with `notifications/elicitation/complete`.
    async fn url_answer(&self, q: &Question<'_>, flow: &FlowRef, answer: &Value) -> Result<Answer, String> {
        let who = &q.who;
        let action = ElicitResult::read(answer).and_then(|a| Action::parse(&a.action));
        match action {
            None => Err(format!("{who} received a malformed answer")),
            Some(declined @ (Action::Decline | Action::Cancel)) => Ok(Answer::Elicit(ElicitResult {
                action: declined.as_str().to_owned(),
                content: None,
            })),
            Some(Action::Accept) => {
                let progress = self
                    .asking
                    .settle(&flow.id, self.timeout)
                    .await
                    .map_err(|m| format!("{who}: {m}"))?;
                match outcome(&q.who, progress) {
                    None => Err(format!("{who}: the page was not completed within {:?}", self.timeout)),
                    Some(settled) => {
                        let params = ElicitationCompleteParams {
                            elicitation_id: &flow.id,
                        };
                        self.peer.notify(ELICITATION_COMPLETE, &params).await;
                        settled
                    }
                }
            }
        }
    }
}
