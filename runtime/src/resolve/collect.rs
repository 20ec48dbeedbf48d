//! The 2026-07-28 asker: a round's questions are collected for its `InputRequiredResult`, and
//! the retry's `inputResponses` (and the answers kept in the sealed state) answer them.

use super::ask::{Answer, AskContext, Asked, Question, outcome, what};
use super::state::{FlowRef, Kept, RoundState};
use crate::elicit::{Action, AskRequest};
use crate::protocol::messages::{ElicitResult, InputRequest};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

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
    /// The URL-mode flows asked now.
    pub(crate) flows_now: BTreeMap<String, FlowRef>,
    /// Where URL-mode flows are, and whose this call is.
    pub(crate) asking: AskContext,
    /// The last answer was kept from an earlier round, not given now (telemetry counts an
    /// answer once).
    pub(crate) restored: bool,
}

impl Collect {
    pub(crate) fn new(state: RoundState, responses: Map<String, Value>, asking: AskContext) -> Self {
        Self {
            state,
            responses,
            requests: BTreeMap::new(),
            asked_now: BTreeMap::new(),
            keep: BTreeMap::new(),
            flows_now: BTreeMap::new(),
            asking,
            restored: false,
        }
    }

    /// Asks a URL-mode question (again): the same flow, until its page is completed.
    fn defer_url(&mut self, q: &Question<'_>, flow: FlowRef) -> Asked {
        self.asked_now.insert(q.key.to_owned(), q.digest.clone());
        self.requests.insert(
            q.key.to_owned(),
            InputRequest {
                method: q.ask.request.method(),
                params: q.url_params(&flow.url, &flow.id),
            },
        );
        self.flows_now.insert(q.key.to_owned(), flow);
        Asked::Pending
    }

    /// A URL-mode question: an outcome kept from an earlier round; else the flow asked last
    /// round, whose page the store says is done (the value), declined, or not yet (asked again,
    /// after waiting a little when the user accepted); else a new flow.
    async fn ask_url(&mut self, q: &Question<'_>) -> Asked {
        let (target, key) = (q.target, q.key);
        let who = &q.who;
        let round = self.state.round;
        if let Some(kept) = self.state.outcomes.get(key).filter(|k| k.q == q.digest).cloned() {
            self.state.outcomes.remove(key);
            self.restored = true;
            let answer = Answer::restore(&q.ask.request, &kept);
            return match q.apply(&answer, round) {
                Some(settled) => {
                    if settled.is_ok() {
                        self.keep.insert(key.to_owned(), kept);
                    }
                    Asked::Done(settled)
                }
                None => Asked::Done(Err(format!("{who}: a kept answer does not read"))),
            };
        }
        let flow = self.state.flows.remove(key).filter(|f| f.q == q.digest);
        let asked_this = self.state.asked.get(key) == Some(&q.digest);
        let response = self.responses.remove(key).filter(|_| asked_this);
        let Some(flow) = flow else {
            return match self.asking.start(q).await {
                Ok(flow) => {
                    tracing::info!(
                        kind = q.kind,
                        item = target,
                        key,
                        mode = "url",
                        round = round + 1,
                        "question asked"
                    );
                    self.defer_url(q, flow)
                }
                Err(m) => Asked::Done(Err(m)),
            };
        };
        let action = response
            .as_ref()
            .and_then(ElicitResult::read)
            .and_then(|a| Action::parse(&a.action));
        let answer = match action {
            // Not answered (or not an answer): the same question again.
            None => return self.defer_url(q, flow),
            Some(declined @ (Action::Decline | Action::Cancel)) => Answer::Elicit(ElicitResult {
                action: declined.as_str().to_owned(),
                content: None,
            }),
            // Consent only: the page says whether the step is done.
            Some(Action::Accept) => match self.asking.settle(&flow.id, self.asking.wait).await {
                Err(m) => return Asked::Done(Err(format!("{who}: {m}"))),
                Ok(progress) => match outcome(&q.who, progress) {
                    None => {
                        tracing::info!(
                            item = target,
                            key,
                            round,
                            "URL-mode step not completed yet; asking again"
                        );
                        return self.defer_url(q, flow);
                    }
                    Some(Err(m)) => return Asked::Done(Err(m)),
                    Some(Ok(answer)) => answer,
                },
            },
        };
        match q.apply(&answer, round) {
            Some(settled) => {
                if settled.is_ok() {
                    self.keep.insert(key.to_owned(), answer.keep(&q.digest));
                }
                Asked::Done(settled)
            }
            None => self.defer_url(q, flow),
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

    pub(crate) async fn ask(&mut self, q: &Question<'_>) -> Asked {
        if let AskRequest::Url { .. } = q.ask.request {
            return self.ask_url(q).await;
        }
        let (target, key) = (q.target, q.key);
        let mode = what(&q.ask.request);
        let round = self.state.round;
        // An answer kept from an earlier round, to this very question; or one given now to the
        // question asked last round.
        let restored = match self.state.outcomes.get(key) {
            Some(k) if k.q == q.digest => self.state.outcomes.remove(key),
            _ => None,
        };
        self.restored = restored.is_some();
        let answer = match &restored {
            Some(kept) => Some(Answer::restore(&q.ask.request, kept)),
            None => {
                let asked_this = self.state.asked.get(key) == Some(&q.digest);
                match self.responses.remove(key) {
                    Some(answer) if asked_this => Some(Answer::read(&q.ask.request, answer)),
                    Some(_) => {
                        tracing::info!(
                            item = target,
                            key,
                            "answer discarded: the question changed since it was asked"
                        );
                        None
                    }
                    None => None,
                }
            }
        };
        let Some(answer) = answer else {
            tracing::info!(
                kind = q.kind,
                item = target,
                key,
                mode,
                round = round + 1,
                "question asked"
            );
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
                tracing::info!(item = target, key, "malformed answer; asking again");
                self.defer(q)
            }
        }
    }
}
