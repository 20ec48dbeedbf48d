//! How a question reaches the user, one asker per era:
//! - [`Collect`] (2026-07-28): a question goes into the round's `InputRequiredResult`; its answer
//!   comes back in the retry's `inputResponses`, and answers kept from earlier rounds ride in the
//!   sealed state.
//! - [`BackChannel`] (handshake era): a question is a request to the client (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`), awaited now.

use super::state::{FlowRef, Kept, RoundState};
use crate::context::{AskNow, Context, ElicitError};
use crate::elicit::{Action, AskRequest};
use crate::peer::{Peer, PeerError};
use crate::principal::Principal;
use crate::protocol::messages::{
    ELICITATION_COMPLETE, ElicitRequestParams, ElicitResult, ElicitUrlParams, ElicitationCompleteParams, EmptyResult,
    InputParams, InputRequest,
};
use crate::protocol::{ErrorObject, ProtocolVersion};
use crate::question::{AskSpec, Settled};
use crate::url_flow::{Progress, UrlFlows, check_url, with_flow};
use futures_util::future::BoxFuture;
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
    /// Who asks, in messages: ``resolver `key` ``, or the question of a tool body.
    pub(crate) who: String,
    pub(crate) version: ProtocolVersion,
}

/// An answer as the asker reads it: an `ElicitResult` for a form, the whole result for a
/// sampling or roots request, what the page recorded for a URL-mode question.
enum Answer {
    Elicit(ElicitResult),
    Result(Value),
    Recorded(Value),
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
            // A URL-mode question is kept once it settled: accepted with the page's outcome, or
            // declined / cancelled.
            AskRequest::Url { .. } if kept.action == Action::Accept.as_str() => {
                Self::Recorded(content.unwrap_or(Value::Null))
            }
            AskRequest::Url { .. } => Self::Elicit(ElicitResult {
                action: kept.action.clone(),
                content: None,
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
            Self::Result(v) | Self::Recorded(v) => Kept {
                action: Action::Accept.as_str().to_owned(),
                content: raw(v),
                q: digest.to_owned(),
            },
        }
    }
}

/// A question ready for an asker: the client declared what it needs (else the -32021 the call
/// ends with, naming `who` asks), pinned by the digest of its era-neutral rendering.
pub(crate) fn prepare<'a>(
    kind: &'static str,
    target: &'a str,
    key: &'a str,
    ask: &'a AskSpec,
    context: &crate::context::Context,
    who: &str,
) -> Result<Question<'a>, ErrorObject> {
    use crate::protocol::codes;
    use serde_json::json;
    let caps = context.client_capabilities();
    let version = context.protocol_version();
    let (declared, what, required) = match &ask.request {
        AskRequest::Form { .. } => (
            caps.elicitation_form(),
            "form elicitation",
            json!({ "elicitation": { "form": {} } }),
        ),
        AskRequest::Url { .. } => (
            caps.elicitation_url() && version >= ProtocolVersion::V2025_11_25,
            "URL-mode elicitation",
            json!({ "elicitation": { "url": {} } }),
        ),
        AskRequest::Sampling(_) => (caps.sampling(), "sampling", json!({ "sampling": {} })),
        AskRequest::Roots => (caps.roots(), "roots", json!({ "roots": {} })),
    };
    if !declared {
        let message = if matches!(ask.request, AskRequest::Url { .. }) && version < ProtocolVersion::V2025_11_25 {
            format!(
                "{who} asks in URL mode, which protocol {} does not have (it needs 2025-11-25 or later)",
                version.as_str()
            )
        } else {
            format!(
                "Client did not declare the {what} capability required by {}",
                who.to_lowercase_first()
            )
        };
        return Err(ErrorObject::new(codes::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(json!({ "requiredCapabilities": required })));
    }
    // Rendered for the wire only when it is actually asked.
    let schema = match &ask.request {
        AskRequest::Form { schema, .. } => Some(schema(crate::form::RenderOptions::default())),
        _ => None,
    };
    let digest = match (&ask.request, &schema) {
        (AskRequest::Form { message, .. }, Some(schema)) => crate::seal::question_digest(message, schema),
        (AskRequest::Url { message, url }, _) => crate::seal::request_digest(
            ask.request.method(),
            &json!({ "mode": "url", "message": message, "url": url }),
        ),
        (AskRequest::Sampling(p), _) => {
            crate::seal::request_digest(ask.request.method(), &serde_json::to_value(p).unwrap_or(Value::Null))
        }
        _ => crate::seal::request_digest(ask.request.method(), &Value::Null),
    };
    Ok(Question {
        kind,
        target,
        key,
        ask,
        schema,
        digest,
        who: who.to_lowercase_first(),
        version,
    })
}

/// `Resolver 'x'` → `resolver 'x'`, for the middle of a sentence.
trait LowerFirst {
    fn to_lowercase_first(&self) -> String;
}

impl LowerFirst for str {
    fn to_lowercase_first(&self) -> String {
        let mut c = self.chars();
        match c.next() {
            Some(f) => f.to_lowercase().chain(c).collect(),
            None => String::new(),
        }
    }
}

/// What a question is, in the words of its messages.
fn what(request: &AskRequest) -> &'static str {
    match request {
        AskRequest::Form { .. } => "form",
        AskRequest::Url { .. } => "url",
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
                    (Some(neutral), crate::protocol::Era::Stateless) => neutral.clone(),
                    _ => schema(crate::form::RenderOptions {
                        top_level_title: self.version.era() == crate::protocol::Era::Handshake,
                    }),
                },
            }),
            // The URL with its flow is made by the asker (`url_params`).
            AskRequest::Url { message, url } => InputParams::ElicitUrl(ElicitUrlParams {
                mode: "url",
                message: message.clone(),
                url: url.clone(),
                elicitation_id: None,
            }),
            AskRequest::Sampling(p) => InputParams::Sampling(p.clone()),
            AskRequest::Roots => InputParams::Roots(EmptyResult {}),
        }
    }

    /// A URL-mode question's params, sending the user to `url` (the page's URL with the flow);
    /// the handshake era names the elicitation by the flow's id.
    fn url_params(&self, url: &str, flow: &str) -> InputParams {
        let message = match &self.ask.request {
            AskRequest::Url { message, .. } => message.clone(),
            _ => String::new(),
        };
        InputParams::ElicitUrl(ElicitUrlParams {
            mode: "url",
            message,
            url: url.to_owned(),
            elicitation_id: (self.version.era() == crate::protocol::Era::Handshake).then(|| flow.to_owned()),
        })
    }

    /// Applies one answer; `None` when it is malformed (not an `ElicitResult`, or not an object).
    fn apply(&self, answer: &Answer, round: u64) -> Option<Result<Settled, String>> {
        let key = self.key;
        let who = &self.who;
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
                            Err(e) => Err(format!("{who} received an answer that does not match its form: {e}")),
                        },
                        Some(_) => Err(format!("{who} received accepted content that is not an object")),
                        None => Err(format!("{who} received an accepted answer with no content")),
                    },
                    other => Ok(Settled::Refused(other, key.to_owned())),
                }
            }
            Answer::Recorded(outcome) => {
                tracing::info!(
                    kind = self.kind,
                    target = self.target,
                    key,
                    mode,
                    round,
                    "URL-mode step completed"
                );
                (self.ask.parse)(outcome)
                    .map(|v| Settled::Answered(Action::Accept, Some(v)))
                    .map_err(|e| format!("{who}: the page recorded an outcome it cannot read: {e}"))
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
                    .map_err(|e| format!("{who} received an answer it cannot read: {e}"))
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
    /// The URL-mode flows asked now.
    pub(crate) flows_now: BTreeMap<String, FlowRef>,
    /// Where URL-mode flows are, and whose this call is.
    pub(crate) asking: AskContext,
}

/// What askers need beyond the question: the caller, the budget of questions it may be asked,
/// and for URL-mode questions the flows and how long a retry waits for the page to be completed
/// before asking again.
#[derive(Clone, Debug)]
pub(crate) struct AskContext {
    pub(crate) flows: UrlFlows,
    pub(crate) principal: Option<Principal>,
    pub(crate) wait: Duration,
    pub(crate) limit: std::sync::Arc<super::limit::QuestionLimit>,
    /// URL-mode questions may be asked of an unauthenticated caller.
    pub(crate) anonymous_url_flows: bool,
}

/// How often a waiting question looks at its flow.
const POLL: Duration = Duration::from_millis(200);

impl AskContext {
    /// Waits up to `wait` for the flow to leave pending; its progress then.
    async fn settle(&self, flow: &str, wait: Duration) -> Result<Progress, String> {
        let until = tokio::time::Instant::now() + wait;
        loop {
            match self.flows.progress(flow, self.principal.as_ref()).await {
                Ok(Progress::Pending) if tokio::time::Instant::now() < until => tokio::time::sleep(POLL).await,
                Ok(p) => return Ok(p),
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// The flow for a question: checks the page's URL, starts a flow, and adds its id.
    async fn start(&self, q: &Question<'_>) -> Result<FlowRef, String> {
        let AskRequest::Url { message, url } = &q.ask.request else {
            return Err("not a URL-mode question".into());
        };
        check_url(url).map_err(|why| format!("{}: the page's URL is refused: {why}", q.who))?;
        if self.principal.is_none() && !self.anonymous_url_flows {
            return Err(format!(
                "{}: a URL-mode question needs an authenticated caller, so that the page knows the person who opens it is \
                 the one asked; serve over HTTP with bearer tokens (HttpOptions::bearer), or let anyone holding the \
                 link complete it with Server::anonymous_url_flows()",
                q.who
            ));
        }
        let id = self
            .flows
            .start(self.principal.as_ref(), message)
            .await
            .map_err(|e| format!("{}: {e}", q.who))?;
        let url = with_flow(url, &id);
        Ok(FlowRef {
            id,
            url,
            q: q.digest.clone(),
        })
    }
}

/// What the page's flow came to, for the question whose answer it completes.
fn outcome(who: &str, progress: Progress) -> Option<Result<Answer, String>> {
    match progress {
        Progress::Pending => None,
        Progress::Done(v) => Some(Ok(Answer::Recorded(
            serde_json::from_str(v.get()).unwrap_or(Value::Null),
        ))),
        Progress::Declined => Some(Ok(Answer::Elicit(ElicitResult {
            action: Action::Decline.as_str().to_owned(),
            content: None,
        }))),
        Progress::Gone => Some(Err(format!(
            "{who}: the page's step expired or was completed for another call; call again"
        ))),
    }
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
                        target,
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
                        tracing::info!(target, key, round, "URL-mode step not completed yet; asking again");
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
    pub(crate) asking: AskContext,
}

impl BackChannel {
    pub(crate) async fn ask(&mut self, q: &Question<'_>) -> Asked {
        let (target, key) = (q.target, q.key);
        let who = &q.who;
        let mode = what(&q.ask.request);
        self.questions += 1;
        if self.questions > self.max_questions {
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
        tracing::info!(kind = q.kind, target, key, mode, round, "question asked");
        match self.peer.request(q.ask.request.method(), &params, self.timeout).await {
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
                    None => Asked::Done(Err(format!("{who} received a malformed answer"))),
                }
            }
            Err(PeerError::Client(e)) => {
                tracing::info!(
                    target,
                    key,
                    code = e.code,
                    "the client answered the question with an error"
                );
                Asked::Abort(e)
            }
            Err(PeerError::Timeout) => Asked::Done(Err(format!("{who}: no answer within {:?}", self.timeout))),
            Err(PeerError::Busy(n)) => {
                tracing::warn!(
                    target,
                    key,
                    waiting = n,
                    "question not asked: too many wait for the client"
                );
                Asked::Done(Err(format!(
                    "{who}: {n} questions already wait for the client's answers; try again once some are answered"
                )))
            }
            Err(PeerError::Closed) => Asked::Done(Err(format!("{who}: the client went away before answering"))),
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

/// A tool body's own questions (`Context::elicit`, `Context::ask`): the handshake era's
/// back-channel of the call, with the call's budget of questions.
#[derive(Clone, Debug)]
pub(crate) struct Imperative {
    pub(crate) peer: Peer,
    pub(crate) timeout: Duration,
    pub(crate) asking: AskContext,
    pub(crate) kind: &'static str,
    pub(crate) target: String,
    /// What the question limit counts: the definition (a resource's template, not its URI).
    pub(crate) item: String,
}

impl AskNow for Imperative {
    fn kind(&self) -> &'static str {
        self.kind
    }
    fn ask<'a>(&'a self, ask: &'a AskSpec, context: &'a Context) -> BoxFuture<'a, Result<Settled, ElicitError>> {
        Box::pin(self.ask_now(ask, context))
    }
}

impl Imperative {
    /// Asks `ask` now, on the back-channel.
    async fn ask_now(&self, ask: &AskSpec, context: &Context) -> Result<Settled, ElicitError> {
        let who = format!("{} '{}'", capitalized(self.kind), self.target);
        let mut q = prepare(self.kind, &self.target, "elicit", ask, context, &who).map_err(ElicitError::Refused)?;
        q.who = format!("the question of {} `{}`", self.kind, self.target);
        self.asking
            .limit
            .take(self.kind, &self.item, self.asking.principal.as_ref())
            .map_err(ElicitError::Failed)?;
        let mut back = BackChannel {
            peer: self.peer.clone(),
            timeout: self.timeout,
            max_questions: u64::MAX,
            questions: 0,
            asking: self.asking.clone(),
        };
        match back.ask(&q).await {
            Asked::Done(Ok(settled)) => Ok(settled),
            Asked::Done(Err(m)) => Err(ElicitError::Failed(m)),
            Asked::Abort(e) => Err(ElicitError::Refused(e)),
            Asked::Pending => Err(ElicitError::Failed("the question got no answer".into())),
        }
    }
}

fn capitalized(kind: &str) -> String {
    let mut c = kind.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
