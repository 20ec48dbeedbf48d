//! How a question reaches the user: the question as both askers see it (prepared for the
//! client, rendered for its era, an answer applied to it), the [`Asker`] chosen once per call,
//! and a tool body's own questions ([`Imperative`]). The askers themselves:
//! - [`Collect`] (2026-07-28, `collect.rs`): a question goes into the round's
//!   `InputRequiredResult`; its answer comes back in the retry's `inputResponses`, and answers
//!   kept from earlier rounds ride in the sealed state.
//! - [`BackChannel`] (handshake era, `back_channel.rs`): a question is a request to the client
//!   (`elicitation/create`, `sampling/createMessage`, `roots/list`), awaited now.
//!
//! (Over 500 lines with its tests, on purpose: the code is under 500; the tests take one question
//! through both askers with one set of fixtures, so they stay together here.)

use super::back_channel::BackChannel;
use super::collect::Collect;
use super::state::{FlowRef, Kept};
use crate::context::{AskNow, Context, ElicitError};
use crate::elicit::{Action, AskRequest};
use crate::principal::Principal;
use crate::protocol::messages::{
    ElicitRequestParams, ElicitResult, ElicitUrlParams, EmptyResult, InputParams, QuestionMeta,
};
use crate::protocol::{ErrorObject, ProtocolVersion};
use crate::question::{AskSpec, Settled};
use crate::url_flow::{Progress, UrlFlows, check_url, with_flow};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
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
pub(super) enum Answer {
    Elicit(ElicitResult),
    Result(Value),
    Recorded(Value),
}

impl Answer {
    /// What the client sent for `request`.
    pub(super) fn read(request: &AskRequest, sent: Value) -> Self {
        match request {
            AskRequest::Form { .. } => Self::Elicit(ElicitResult::read(&sent).unwrap_or(ElicitResult {
                action: String::new(),
                content: None,
            })),
            _ => Self::Result(sent),
        }
    }

    /// An answer kept in the state.
    pub(super) fn restore(request: &AskRequest, kept: &Kept) -> Self {
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
    pub(super) fn keep(&self, digest: &str) -> Kept {
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
    if let AskRequest::Form {
        schema: crate::elicit::FormRender::Invalid(why),
        ..
    } = &ask.request
    {
        return Err(ErrorObject::internal(format!("{who} cannot ask its question: {why}")));
    }
    // Rendered for the wire only when it is actually asked.
    let schema = match &ask.request {
        AskRequest::Form { schema, .. } => Some(schema.render(crate::form::RenderOptions::default())),
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
pub(super) fn what(request: &AskRequest) -> &'static str {
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
        let meta = self.key_meta();
        match &self.ask.request {
            AskRequest::Form { message, schema } => InputParams::Elicit(ElicitRequestParams {
                mode: (self.version > ProtocolVersion::V2025_06_18).then_some("form"),
                message: message.clone(),
                requested_schema: match (&self.schema, self.version.era()) {
                    (Some(neutral), crate::protocol::Era::Stateless) => neutral.clone(),
                    _ => schema.render(crate::form::RenderOptions {
                        top_level_title: self.version.era() == crate::protocol::Era::Handshake,
                    }),
                },
                meta,
            }),
            // The URL with its flow is made by the asker (`url_params`).
            AskRequest::Url { message, url } => InputParams::ElicitUrl(ElicitUrlParams {
                mode: "url",
                message: message.clone(),
                url: url.clone(),
                elicitation_id: None,
                meta,
            }),
            AskRequest::Sampling(p) => InputParams::Sampling(p.clone()),
            AskRequest::Roots => InputParams::Roots(EmptyResult {}),
        }
    }

    /// A URL-mode question's params, sending the user to `url` (the page's URL with the flow);
    /// the handshake era names the elicitation by the flow's id.
    pub(super) fn url_params(&self, url: &str, flow: &str) -> InputParams {
        let message = match &self.ask.request {
            AskRequest::Url { message, .. } => message.clone(),
            _ => String::new(),
        };
        InputParams::ElicitUrl(ElicitUrlParams {
            mode: "url",
            message,
            url: url.to_owned(),
            elicitation_id: (self.version.era() == crate::protocol::Era::Handshake).then(|| flow.to_owned()),
            meta: self.key_meta(),
        })
    }

    /// The key in the request's `_meta`, on the handshake era (2026-07-28 keys `inputRequests`).
    fn key_meta(&self) -> Option<QuestionMeta> {
        (self.version.era() == crate::protocol::Era::Handshake).then(|| QuestionMeta {
            key: self.key.to_owned(),
        })
    }

    /// Applies one answer; `None` when it is malformed (not an `ElicitResult`, or not an object).
    pub(super) fn apply(&self, answer: &Answer, round: u64) -> Option<Result<Settled, String>> {
        let key = self.key;
        let who = &self.who;
        let mode = what(&self.ask.request);
        let settled = match answer {
            Answer::Elicit(answer) => {
                let action = Action::parse(&answer.action)?;
                tracing::info!(
                    kind = self.kind,
                    item = self.target,
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
                    item = self.target,
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
                    item = self.target,
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
    pub(super) async fn settle(&self, flow: &str, wait: Duration) -> Result<Progress, String> {
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
    pub(super) async fn start(&self, q: &Question<'_>) -> Result<FlowRef, String> {
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
            .start_page(self.principal.as_ref(), message, url)
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
pub(super) fn outcome(who: &str, progress: Progress) -> Option<Result<Answer, String>> {
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

/// How a call's questions reach the user, chosen once per call from its era.
pub(crate) enum Asker {
    /// 2026-07-28: collected into an `InputRequiredResult`.
    Collect(Collect),
    /// Handshake era: asked on the back-channel now.
    BackChannel(BackChannel),
}

/// What asks a question: the item (`kind`, `target`, and `item`, what the question limit counts),
/// the question's key, and how a refusal and the logs name the asker.
pub(crate) struct Origin<'a> {
    pub(crate) kind: &'static str,
    pub(crate) target: &'a str,
    pub(crate) item: &'a str,
    pub(crate) metrics: &'a crate::telemetry::ItemMetrics,
    pub(crate) key: &'a str,
    /// In a refusal: "Resolver 'k'", "Tool 'deploy'".
    pub(crate) named: String,
    /// In the logs: "resolver `k`", "the question of tool `deploy`".
    pub(crate) logged: String,
}

impl Asker {
    /// What both askers share.
    pub(crate) fn context(&self) -> &AskContext {
        match self {
            Self::Collect(c) => &c.asking,
            Self::BackChannel(b) => &b.asking,
        }
    }

    /// One question, the same sequence for a resolver's and a body's own: made from `ask` for
    /// this client (a refusal ends the call: [`Asked::Abort`]), counted against the question
    /// limit (past it the question fails), then asked.
    pub(crate) async fn ask(&mut self, origin: Origin<'_>, ask: &AskSpec, context: &Context) -> Asked {
        let mut question = match prepare(origin.kind, origin.target, origin.key, ask, context, &origin.named) {
            Ok(q) => q,
            Err(e) => return Asked::Abort(e),
        };
        question.who = origin.logged;
        let asking = self.context();
        if let Err(m) = asking.limit.take(origin.kind, origin.item, asking.principal.as_ref()) {
            crate::telemetry::metric::limit_hit("questions");
            return Asked::Done(Err(m));
        }
        let mode = what(&question.ask.request);
        let span = tracing::info_span!(
            target: "mcp_resolve",
            "mcp.question",
            mcp.question.key = origin.key,
            mcp.question.mode = mode,
            mcp.outcome = tracing::field::Empty,
        );
        let back_channel = matches!(self, Self::BackChannel(_));
        let asked = {
            let asking = std::pin::pin!(async {
                match &mut *self {
                    Self::Collect(c) => c.ask(&question).await,
                    Self::BackChannel(b) => b.ask(&question).await,
                }
            });
            crate::telemetry::InSpan::new(&span, asking).await
        };
        // Asked now: on the back-channel (whatever came of it), or put to the client in an
        // `InputRequiredResult` (answered in a later round).
        if back_channel || matches!(asked, Asked::Pending) {
            origin.metrics.question_asked(mode);
        }
        let (expired, restored) = match self {
            Self::BackChannel(b) => (std::mem::take(&mut b.expired), false),
            Self::Collect(c) => (false, std::mem::take(&mut c.restored)),
        };
        let outcome = match &asked {
            Asked::Done(Err(_)) if expired => {
                origin.metrics.question_answered("expired");
                "expired"
            }
            Asked::Pending => "input_required",
            Asked::Done(Ok(Settled::Answered(action, _) | Settled::Refused(action, _))) => {
                if !restored {
                    origin.metrics.question_answered(action.as_str());
                }
                action.as_str()
            }
            Asked::Done(Ok(Settled::Value(_))) => "value",
            Asked::Done(Err(_)) => "failed",
            Asked::Abort(_) => "error",
        };
        span.record("mcp.outcome", outcome);
        asked
    }
}

/// A tool body's own questions (`Context::elicit`, `Context::ask`): the handshake era's
/// back-channel of the call, with the call's budget of questions.
#[derive(Clone, Debug)]
pub(crate) struct Imperative {
    pub(crate) peer: super::back_channel::Line,
    pub(crate) timeout: Duration,
    /// What URL-mode questions need; its caller is the context's, taken when the body asks.
    pub(crate) asking: std::sync::Arc<AskContext>,
    pub(crate) kind: &'static str,
    /// What is called: a tool's or prompt's name, a resource's URI.
    pub(crate) target: std::sync::Arc<str>,
    /// What the question limit counts: the definition (a resource's template, not its URI).
    pub(crate) item: std::sync::Arc<str>,
    /// The item's metric handles.
    pub(crate) metrics: std::sync::Arc<crate::telemetry::ItemMetrics>,
}

impl AskNow for Imperative {
    fn ask<'a>(&'a self, ask: &'a AskSpec, context: &'a Context) -> BoxFuture<'a, Result<Settled, ElicitError>> {
        Box::pin(self.ask_now(ask, context))
    }
}

impl Imperative {
    /// Asks `ask` now, on the back-channel.
    async fn ask_now(&self, ask: &AskSpec, context: &Context) -> Result<Settled, ElicitError> {
        let origin = Origin {
            kind: self.kind,
            target: &self.target,
            item: &self.item,
            metrics: &self.metrics,
            key: "elicit",
            named: format!("{} '{}'", capitalized(self.kind), self.target),
            logged: format!("the question of {} `{}`", self.kind, self.target),
        };
        let mut asker = Asker::BackChannel(BackChannel {
            expired: false,
            peer: self.peer.clone(),
            timeout: self.timeout,
            max_questions: u64::MAX,
            questions: 0,
            asking: AskContext {
                principal: context.principal().cloned(),
                ..AskContext::clone(&self.asking)
            },
        });
        match asker.ask(origin, ask, context).await {
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

#[cfg(test)]
mod tests {
    use super::super::state::RoundState;
    use super::*;
    use crate::elicit::{Ask, Confirm, Elicit};
    use crate::form::{FormSchema, RenderOptions};
    use crate::peer::{Outbound, Peer};
    use crate::protocol::ClientCapabilities;
    use crate::protocol::jsonrpc::Outgoing;
    use crate::sampling::{ListRoots, Root, Sample};
    use crate::server::Server;
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    /// What a URL-mode page records in these tests.
    #[derive(Clone, Debug, PartialEq, serde::Deserialize)]
    struct Connected {
        account: String,
    }

    const PAGE: &str = "https://notes.example/connect";

    fn spec<T: Send + Sync + 'static>(ask: impl Into<Ask<T>>) -> AskSpec {
        AskSpec::erase(ask.into())
    }

    fn confirm(message: &str) -> AskSpec {
        spec(Elicit::<Confirm>::form(message))
    }

    fn page(url: &str) -> AskSpec {
        spec(Elicit::<Connected>::url("Connect GitHub", url))
    }

    fn roots() -> AskSpec {
        spec(ListRoots)
    }

    /// A client that declared every capability a question can need.
    fn can_answer_all() -> ClientCapabilities {
        ClientCapabilities::from_value(json!({
            "elicitation": { "form": {}, "url": {} },
            "sampling": {},
            "roots": {},
        }))
    }

    /// `ask` as resolver `k` of tool `notes` asks it on `version`, of a client that can answer it.
    fn question(ask: &AskSpec, version: ProtocolVersion) -> Question<'_> {
        let cx = Context::detached(version, can_answer_all());
        prepare("tool", "notes", "k", ask, &cx, "Resolver `k`").unwrap_or_else(|e| panic!("{}", e.message))
    }

    /// Why `ask` is not asked on `version` of a client that declared `capabilities`.
    fn refusal(ask: &AskSpec, version: ProtocolVersion, capabilities: Value) -> ErrorObject {
        let cx = Context::detached(version, ClientCapabilities::from_value(capabilities));
        match prepare("tool", "notes", "k", ask, &cx, "Resolver `k`") {
            Ok(_) => panic!("asked on {version:?}"),
            Err(e) => e,
        }
    }

    /// What asking came to, for assertion messages.
    fn show(asked: &Asked) -> String {
        match asked {
            Asked::Done(settled) => format!("{settled:?}"),
            Asked::Pending => "asked".into(),
            Asked::Abort(e) => format!("aborted: {}", e.message),
        }
    }

    /// The accepted value of a settled question.
    fn accepted<T: Clone + 'static>(asked: &Asked) -> T {
        match asked {
            Asked::Done(Ok(settled)) => crate::question::FromResolved::<T>::from_resolved(settled, "k", "tool")
                .unwrap_or_else(|e| panic!("{e}")),
            other => panic!("not settled: {}", show(other)),
        }
    }

    /// The 2026-07-28 asker of the retry of round 1, whose state and `inputResponses` are given.
    fn retry(state: RoundState, responses: Value, asking: AskContext) -> Collect {
        let Value::Object(responses) = responses else {
            panic!("inputResponses is an object")
        };
        Collect::new(RoundState { round: 1, ..state }, responses, asking)
    }

    /// A round-1 state that asked `q` as `k`.
    fn asked(q: &Question<'_>) -> RoundState {
        let mut state = RoundState::default();
        state.asked.insert("k".into(), q.digest.clone());
        state
    }

    fn kept(action: &str, content: Option<Value>, q: &str) -> Kept {
        Kept {
            action: action.into(),
            content: content.map(|c| serde_json::value::to_raw_value(&c).unwrap()),
            q: q.into(),
        }
    }

    /// A round-1 state that kept `kept` as the answer to `k`.
    fn keeping(kept: Kept) -> RoundState {
        let mut state = RoundState::default();
        state.outcomes.insert("k".into(), kept);
        state
    }

    fn alice() -> AskContext {
        Server::new("t").ask_context(Some(Principal::new("alice")))
    }

    // ---------------------------------------------------------------- prepare

    /// A question the client cannot answer is not asked: -32021 naming the capability it needs
    /// and who asks, or, for a URL-mode question on a protocol without URL mode, saying so.
    #[test]
    fn a_question_is_asked_only_of_a_client_that_declared_what_answers_it() {
        let form = confirm("Delete?");
        let e = refusal(&form, ProtocolVersion::V2025_06_18, json!({ "sampling": {} }));
        assert_eq!(e.code, -32021);
        assert_eq!(
            e.message,
            "Client did not declare the form elicitation capability required by resolver `k`"
        );
        assert_eq!(
            e.data,
            Some(json!({ "requiredCapabilities": { "elicitation": { "form": {} } } }))
        );

        let url = page(PAGE);
        let with_url = json!({ "elicitation": { "url": {} } });
        for old in [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18] {
            let e = refusal(&url, old, with_url.clone());
            assert_eq!(e.code, -32021);
            assert_eq!(
                e.message,
                format!(
                    "Resolver `k` asks in URL mode, which protocol {} does not have (it needs 2025-11-25 or later)",
                    old.as_str()
                )
            );
        }
        for new in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let e = refusal(&url, new, json!({ "elicitation": { "form": {} } }));
            assert_eq!(
                e.message, "Client did not declare the URL-mode elicitation capability required by resolver `k`",
                "{new:?}"
            );
            let cx = Context::detached(new, ClientCapabilities::from_value(with_url.clone()));
            let q = prepare("tool", "notes", "k", &url, &cx, "Resolver `k`");
            assert!(q.is_ok(), "asked in URL mode on {new:?}");
        }
        assert_eq!(question(&form, ProtocolVersion::V2026_07_28).who, "resolver `k`");
    }

    /// An answer counts only for the very question it answers: the digest a question is pinned
    /// by changes with its message, its form, its page, its prompt.
    #[test]
    fn a_question_is_pinned_by_what_it_asks() {
        let v = ProtocolVersion::V2026_07_28;
        let digest = |ask: &AskSpec| question(ask, v).digest;
        assert_eq!(digest(&confirm("Delete?")), digest(&confirm("Delete?")));
        assert_ne!(digest(&confirm("Delete?")), digest(&confirm("Delete all?")));
        let titled = titled_form("Delete?");
        assert_ne!(digest(&confirm("Delete?")), digest(&form_with(text_form, "Delete?")));
        assert_eq!(
            digest(&titled),
            digest(&confirm("Delete?")),
            "its title is not what it asks"
        );
        assert_ne!(digest(&page(PAGE)), digest(&page("https://notes.example/pay")));
        assert_ne!(
            digest(&spec(Sample::new("Summarize a"))),
            digest(&spec(Sample::new("Summarize b")))
        );
        let distinct: std::collections::BTreeSet<String> = [confirm("x"), page(PAGE), spec(Sample::new("x")), roots()]
            .iter()
            .map(digest)
            .collect();
        assert_eq!(distinct.len(), 4, "each kind of question its own");
    }

    /// Confirm's form with a top-level title where the protocol has one.
    fn titled_schema(options: RenderOptions) -> Map<String, Value> {
        let mut schema = Confirm::requested_schema(options);
        if options.top_level_title {
            schema.insert("title".into(), "Deleting notes".into());
        }
        schema
    }

    /// Another form: the same field, as text.
    fn text_form(_: RenderOptions) -> Map<String, Value> {
        let Value::Object(m) = json!({
            "type": "object",
            "properties": { "ok": { "type": "string" } },
            "required": ["ok"],
        }) else {
            unreachable!()
        };
        m
    }

    fn form_with(schema: fn(RenderOptions) -> Map<String, Value>, message: &str) -> AskSpec {
        let mut ask = confirm(message);
        ask.request = AskRequest::Form {
            message: message.into(),
            schema: crate::elicit::FormRender::Static(schema),
        };
        ask
    }

    fn titled_form(message: &str) -> AskSpec {
        form_with(titled_schema, message)
    }

    // ---------------------------------------------------------------- params

    /// A form goes out as each protocol reads it: `mode` from 2025-11-25 on, the form's title
    /// and the question's key in `_meta` on the handshake era only (2026-07-28 keys
    /// `inputRequests` instead).
    #[test]
    fn a_form_is_sent_as_each_protocol_reads_it() {
        let ask = titled_form("Delete?");
        let params = |v| serde_json::to_value(question(&ask, v).params()).unwrap();
        let with_title = Value::Object(titled_schema(RenderOptions::default().top_level_title(true)));
        let without = Value::Object(titled_schema(RenderOptions::default()));
        assert_eq!(
            params(ProtocolVersion::V2025_06_18),
            json!({ "message": "Delete?", "requestedSchema": with_title, "_meta": {"mcp-resolve/key": "k"} })
        );
        assert_eq!(
            params(ProtocolVersion::V2025_11_25),
            json!({ "mode": "form", "message": "Delete?", "requestedSchema": with_title, "_meta": {"mcp-resolve/key": "k"} })
        );
        assert_eq!(
            params(ProtocolVersion::V2026_07_28),
            json!({ "mode": "form", "message": "Delete?", "requestedSchema": without })
        );
    }

    /// A URL-mode question sends the user to the page with its flow; the handshake era names the
    /// elicitation by the flow, 2026-07-28 carries it in `requestState` instead.
    #[test]
    fn a_url_question_sends_its_message_and_the_page_with_its_flow() {
        let ask = page(PAGE);
        let params = |v| {
            serde_json::to_value(question(&ask, v).url_params("https://notes.example/connect?flow=F", "F")).unwrap()
        };
        assert_eq!(
            params(ProtocolVersion::V2025_11_25),
            json!({
                "mode": "url",
                "message": "Connect GitHub",
                "url": "https://notes.example/connect?flow=F",
                "elicitationId": "F",
                "_meta": {"mcp-resolve/key": "k"},
            })
        );
        assert_eq!(
            params(ProtocolVersion::V2026_07_28),
            json!({ "mode": "url", "message": "Connect GitHub", "url": "https://notes.example/connect?flow=F" })
        );
    }

    // ---------------------------------------------------------------- Collect (2026-07-28)

    /// The retry's answer is taken for the question asked last round, as the client answered it
    /// (accepted with its form's value, or declined); the same key answering another question
    /// is discarded and the question asked.
    #[tokio::test]
    async fn an_answer_counts_only_for_the_question_asked_last_round() {
        let ask = confirm("Delete?");
        let q = question(&ask, ProtocolVersion::V2026_07_28);
        let accept = json!({ "k": { "action": "accept", "content": { "ok": true } } });

        let mut collect = retry(asked(&q), accept.clone(), alice());
        let answer = collect.ask(&q).await;
        assert_eq!(accepted::<Confirm>(&answer), Confirm { ok: true });
        assert_eq!(
            collect.keep["k"].q, q.digest,
            "kept for the next round, for this question"
        );

        let mut collect = retry(asked(&q), json!({ "k": { "action": "decline" } }), alice());
        let answer = collect.ask(&q).await;
        assert_eq!(show(&answer), "Ok(Refused(decline, k))");

        let other = confirm("Delete all?");
        let before = question(&other, ProtocolVersion::V2026_07_28);
        let mut collect = retry(asked(&before), accept, alice());
        let answer = collect.ask(&q).await;
        assert!(matches!(answer, Asked::Pending), "{}", show(&answer));
        assert_eq!(collect.asked_now["k"], q.digest, "the question is asked");
        assert!(collect.keep.is_empty());
    }

    /// An answer kept from an earlier round settles the very question it answered, as it was
    /// given (a decline stays a decline); kept for another question, it is not reused.
    #[tokio::test]
    async fn an_answer_kept_for_another_question_is_not_reused() {
        let ask = confirm("Delete?");
        let q = question(&ask, ProtocolVersion::V2026_07_28);

        let declined = kept("decline", None, &q.digest);
        let answer = retry(keeping(declined), json!({}), alice()).ask(&q).await;
        assert_eq!(show(&answer), "Ok(Refused(decline, k))");

        let yes = kept("accept", Some(json!({ "ok": true })), &q.digest);
        let mut collect = retry(keeping(yes), json!({}), alice());
        assert_eq!(accepted::<Confirm>(&collect.ask(&q).await), Confirm { ok: true });
        assert!(collect.keep.contains_key("k"), "kept on");

        let elsewhere = kept("accept", Some(json!({ "ok": true })), "the digest of another question");
        let mut collect = retry(keeping(elsewhere), json!({}), alice());
        let answer = collect.ask(&q).await;
        assert!(matches!(answer, Asked::Pending), "{}", show(&answer));
        assert!(collect.requests.contains_key("k"), "asked");
    }

    /// A sampling or roots answer is the whole result: an object settles the question; anything
    /// else is malformed, never completes the call, and the question is asked again.
    #[tokio::test]
    async fn a_result_that_is_not_an_object_is_asked_again() {
        let ask = roots();
        let q = question(&ask, ProtocolVersion::V2026_07_28);
        let answer = retry(
            asked(&q),
            json!({ "k": { "roots": [{ "uri": "file:///notes" }] } }),
            alice(),
        )
        .ask(&q)
        .await;
        let roots: Vec<Root> = accepted(&answer);
        assert_eq!(roots.len(), 1);
        assert_eq!(roots[0].uri, "file:///notes");

        let mut collect = retry(asked(&q), json!({ "k": [{ "uri": "file:///notes" }] }), alice());
        let answer = collect.ask(&q).await;
        assert!(matches!(answer, Asked::Pending), "{}", show(&answer));
        assert!(collect.requests.contains_key("k"), "asked again");
    }

    // ---------------------------------------------------------------- URL mode (2026-07-28)

    /// A URL-mode outcome kept from an earlier round settles its question as it settled: with
    /// the value the page recorded when accepted, as a decline when declined; kept for another
    /// question, a new flow is started instead.
    #[tokio::test]
    async fn a_kept_page_outcome_settles_its_question_as_it_settled() {
        let ask = page(PAGE);
        let q = question(&ask, ProtocolVersion::V2026_07_28);

        let done = kept("accept", Some(json!({ "account": "a1" })), &q.digest);
        let mut collect = retry(keeping(done), json!({}), alice());
        let answer = collect.ask(&q).await;
        assert_eq!(accepted::<Connected>(&answer), Connected { account: "a1".into() });
        assert!(collect.keep.contains_key("k"), "kept on");

        for refused in ["decline", "cancel"] {
            let answer = retry(keeping(kept(refused, None, &q.digest)), json!({}), alice())
                .ask(&q)
                .await;
            assert_eq!(show(&answer), format!("Ok(Refused({refused}, k))"));
        }

        let elsewhere = kept("accept", Some(json!({ "account": "a1" })), "another question");
        let mut collect = retry(keeping(elsewhere), json!({}), alice());
        let answer = collect.ask(&q).await;
        assert!(matches!(answer, Asked::Pending), "{}", show(&answer));
        assert!(collect.flows_now.contains_key("k"), "a new flow");
    }

    /// Round 1 sends the user to the page with a new flow; the retry, once the user accepted and
    /// the page recorded its outcome, settles the question with it. A declined page declines it.
    #[tokio::test]
    async fn a_page_completed_since_the_last_round_settles_its_question() {
        let ask = page(PAGE);
        let q = question(&ask, ProtocolVersion::V2026_07_28);
        let alice_p = Principal::new("alice");
        for (record, expected) in [(true, "Ok(Answered(accept))"), (false, "Ok(Refused(decline, k))")] {
            let asking = alice();
            let mut first = Collect::new(RoundState::default(), Map::new(), asking.clone());
            assert!(matches!(first.ask(&q).await, Asked::Pending));
            let flow = first.flows_now.remove("k").expect("a flow started");
            assert_eq!(
                serde_json::to_value(&first.requests["k"].params).unwrap()["url"],
                json!(format!("{PAGE}?flow={}", flow.id))
            );
            if record {
                asking
                    .flows
                    .complete(&flow.id, Some(&alice_p), &json!({ "account": "a1" }))
                    .await
                    .unwrap();
            } else {
                asking.flows.decline(&flow.id, Some(&alice_p)).await.unwrap();
            }
            let mut state = asked(&q);
            state.flows.insert("k".into(), flow);
            let answer = retry(state, json!({ "k": { "action": "accept" } }), asking)
                .ask(&q)
                .await;
            assert_eq!(show(&answer), expected);
            if record {
                assert_eq!(accepted::<Connected>(&answer), Connected { account: "a1".into() });
            }
        }
    }

    /// A question whose user accepted waits for the page, looking at its flow now and then, and
    /// goes on as soon as the page recorded its outcome (on tokio's paused clock).
    #[tokio::test(start_paused = true)]
    async fn a_waiting_question_sees_the_page_completed_while_it_waits() {
        let asking = alice();
        let owner = Principal::new("alice");
        let id = asking.flows.start(Some(&owner), "Connect GitHub").await.unwrap();
        let (flows, flow) = (asking.flows.clone(), id.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            flows
                .complete(&flow, Some(&owner), &json!({ "account": "a1" }))
                .await
                .unwrap();
        });
        let start = tokio::time::Instant::now();
        let progress = tokio::time::timeout(Duration::from_secs(60), asking.settle(&id, Duration::from_secs(5)))
            .await
            .expect("the wait ends");
        match progress {
            Ok(Progress::Done(v)) => assert_eq!(v.get(), r#"{"account":"a1"}"#),
            other => panic!("{other:?}"),
        }
        assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    }

    /// A page not completed in time leaves the question pending once its wait is over: not a
    /// poll later, and never waiting on (on tokio's paused clock, where a wait with no end would
    /// run into the test's bound at once).
    #[tokio::test(start_paused = true)]
    async fn a_waiting_question_gives_up_when_its_wait_is_over() {
        let asking = alice();
        let id = asking
            .flows
            .start(asking.principal.as_ref(), "Connect GitHub")
            .await
            .unwrap();
        let start = tokio::time::Instant::now();
        let progress = tokio::time::timeout(Duration::from_secs(60), asking.settle(&id, Duration::from_secs(1)))
            .await
            .expect("the wait ends");
        assert!(matches!(progress, Ok(Progress::Pending)), "{progress:?}");
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    /// A URL-mode question is asked only of an authenticated caller (the page must know the
    /// person who opens it is the one asked), unless the server lets anyone holding the link
    /// complete it; its page's URL is checked first.
    #[tokio::test]
    async fn a_url_question_needs_an_authenticated_caller_unless_anonymous_flows_are_allowed() {
        let ask = page(PAGE);
        let q = question(&ask, ProtocolVersion::V2026_07_28);
        let e = Server::new("t").ask_context(None).start(&q).await.unwrap_err();
        assert!(
            e.starts_with("resolver `k`: a URL-mode question needs an authenticated caller"),
            "{e}"
        );
        let anyone = Server::new("t").anonymous_url_flows().ask_context(None);
        let flow = anyone.start(&q).await.unwrap();
        assert_eq!(flow.url, format!("{PAGE}?flow={}", flow.id));
        assert_eq!(flow.q, q.digest);
        assert!(alice().start(&q).await.is_ok());

        let plain = page("http://notes.example/connect");
        let e = alice()
            .start(&question(&plain, ProtocolVersion::V2026_07_28))
            .await
            .unwrap_err();
        assert!(e.starts_with("resolver `k`: the page's URL is refused: "), "{e}");
    }

    // ---------------------------------------------------------------- the back-channel

    /// The other end of a handshake-era connection: a client that answers every request with
    /// `answer(method)`, and the methods of the requests and notifications it was sent.
    fn client(answer: fn(&str) -> Value) -> (Peer, Arc<Mutex<Vec<String>>>) {
        let (tx, mut rx) = tokio::sync::mpsc::channel(16);
        let peer = Peer::new(Outbound::new(tx), 8);
        peer.initialized();
        let sent = Arc::new(Mutex::new(Vec::new()));
        let (answering, seen) = (peer.clone(), sent.clone());
        tokio::spawn(async move {
            while let Some(frame) = rx.recv().await {
                match frame {
                    Outgoing::Request { id, method, .. } => {
                        seen.lock().unwrap().push(method.to_owned());
                        answering.deliver(&id, Ok(answer(method)));
                    }
                    Outgoing::Notification { method, .. } => seen.lock().unwrap().push(method.to_owned()),
                    Outgoing::Response { .. } => {}
                }
            }
        });
        (peer, sent)
    }

    /// A handshake-era call asks at most `max_questions`: the one past it is not sent, and the
    /// call stops saying why.
    #[tokio::test]
    async fn a_call_is_asked_no_more_questions_than_its_bound() {
        let (peer, sent) = client(|_| json!({ "roots": [] }));
        let mut back = BackChannel {
            expired: false,
            peer: crate::resolve::back_channel::Line::Peer(peer),
            timeout: Duration::from_secs(10),
            max_questions: 2,
            questions: 0,
            asking: alice(),
        };
        let ask = roots();
        let q = question(&ask, ProtocolVersion::V2025_11_25);
        for n in 1..=2 {
            let answer = back.ask(&q).await;
            assert!(matches!(answer, Asked::Done(Ok(_))), "question {n}: {}", show(&answer));
        }
        let third = back.ask(&q).await;
        assert_eq!(
            show(&third),
            format!(
                "{:?}",
                Err::<(), _>("tool `notes` stopped: it needed more than 2 questions")
            )
        );
        assert_eq!(
            *sent.lock().unwrap(),
            ["roots/list", "roots/list"],
            "the third was not sent"
        );
    }

    /// A tool body's question the client cannot answer is refused before anything is sent,
    /// naming the tool that asks.
    #[tokio::test]
    async fn a_tool_bodys_question_is_refused_naming_its_tool() {
        let (peer, sent) = client(|_| json!({}));
        let imperative = Imperative {
            peer: crate::resolve::back_channel::Line::Peer(peer),
            timeout: Duration::from_secs(10),
            asking: std::sync::Arc::new(alice()),
            kind: "tool",
            target: "notes".into(),
            item: "notes".into(),
            metrics: std::sync::Arc::new(crate::telemetry::ItemMetrics::new("notes")),
        };
        let refused = |e: Result<Settled, ElicitError>| match e {
            Err(ElicitError::Refused(e)) => e.message,
            other => panic!("{other:?}"),
        };
        let no_form = Context::detached(
            ProtocolVersion::V2025_11_25,
            ClientCapabilities::from_value(json!({ "sampling": {} })),
        );
        assert_eq!(
            refused(imperative.ask_now(&confirm("Delete?"), &no_form).await),
            "Client did not declare the form elicitation capability required by tool 'notes'"
        );
        let old = Context::detached(
            ProtocolVersion::V2025_06_18,
            ClientCapabilities::from_value(json!({ "elicitation": { "url": {} } })),
        );
        assert_eq!(
            refused(imperative.ask_now(&page(PAGE), &old).await),
            "Tool 'notes' asks in URL mode, which protocol 2025-06-18 does not have (it needs 2025-11-25 or later)"
        );
        assert!(sent.lock().unwrap().is_empty());
    }

    // ---------------------------------------------------------------- logs

    /// Each question asked or answered is logged with its kind (`mode`), in these words. (Read
    /// from `what` rather than captured from the log: a subscriber set for one test thread
    /// misses events now and then while other tests register the same callsites, which would
    /// make the test flaky.)
    #[test]
    fn each_kind_of_question_is_named_in_its_logs() {
        let sample = spec(Sample::new("Summarize"));
        for (ask, mode) in [
            (confirm("Delete?"), "form"),
            (page(PAGE), "url"),
            (sample, "sampling"),
            (roots(), "roots"),
        ] {
            assert_eq!(what(&ask.request), mode);
        }
    }
}
