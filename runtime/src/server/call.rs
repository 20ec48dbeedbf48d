//! One call (a tool call, a prompt, a resource read, a completion), from its params to its
//! result: resolvers first (asking on the back-channel, or answering with an
//! `InputRequiredResult`), then the body. A tool's failures and panics become `isError` results;
//! a prompt's or resource's, JSON-RPC errors.

use super::Server;
use super::registry::{Body, Finished, Input, Item, Kind, Running, panic_text};
use super::resolving::{Channel, Resolved, Resolving, binding};
use crate::access::Forbidden;
use crate::budget::Hold;
use crate::context::{Context, ContextParts};
use crate::peer::{Outbound, Peer};
use crate::principal::Principal;
use crate::protocol::envelope::Envelope;
use crate::protocol::{Era, ErrorObject, RequestId};
use crate::resolve::state::RoundState;
use crate::telemetry::CallOutcome;
use crate::tool_result::CallToolResult;
use futures_util::FutureExt;
use serde_json::{Map, Value};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Marks a call's context finished when the call's future ends (answered, failed or dropped).
struct FinishOnDrop(Context);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// What a call's telemetry notes while it runs: how it ended, and in which round.
#[derive(Clone, Copy)]
pub(crate) struct Seen {
    outcome: CallOutcome,
    round: u64,
}

/// What one request of a call notes (`telemetry`): the call's fields and outcome on the request's
/// own `mcp.request` span (one span per request, as OpenTelemetry's conventions for MCP have it:
/// a second span per call cost 9 % of an echo call's CPU with spans on) and one set of call
/// metrics; labels are registered names only. A listen stream or a task method notes nothing
/// here: its span gets the request's outcome.
pub(crate) struct Watch {
    /// `None`: nothing to note.
    kind: Option<&'static str>,
    item: Option<Arc<Item>>,
    completed: Option<Arc<str>>,
    pub(crate) span: tracing::Span,
    pub(crate) seen: Seen,
    #[cfg(feature = "metrics")]
    started: std::time::Instant,
}

impl Watch {
    fn label(&self) -> &str {
        match (&self.item, &self.completed) {
            (Some(item), _) => &item.id,
            (None, Some(name)) => name,
            (None, None) => "other",
        }
    }

    /// Notes how the call ended (`None`: cancelled) and gives the span back when its outcome is
    /// still to be noted (not a call of an item or completer).
    pub(crate) fn finish(mut self, result: Option<&Answer>) -> Option<tracing::Span> {
        let Some(kind) = self.kind else { return Some(self.span) };
        let error = match result {
            None => {
                self.seen.outcome = CallOutcome::Cancelled;
                None
            }
            Some(Err(e)) => {
                self.seen.outcome = CallOutcome::Error;
                Some(e.code)
            }
            Some(Ok(_)) => None,
        };
        crate::telemetry::record_ended(&self.span, self.seen.outcome.as_str(), error, Some(self.seen.round));
        #[cfg(feature = "metrics")]
        let seconds = self.started.elapsed().as_secs_f64();
        // No clock read without metrics.
        #[cfg(not(feature = "metrics"))]
        let seconds = 0.0;
        match &self.item {
            Some(item) => item.metrics.call(kind, self.seen.outcome, seconds, self.seen.round),
            // A completion: its handles are registered each time (completions are rare).
            None => {
                crate::telemetry::ItemMetrics::new(self.label()).call(kind, self.seen.outcome, seconds, self.seen.round)
            }
        }
        None
    }
}

/// What to do with one request. (`Call` is the large variant, on purpose: a route is matched at
/// once, and boxing the call cost an allocation per call.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Route {
    /// Answer now.
    Reply(Answer),
    /// Run a tool call (possibly long): the dispatcher admits it and the transport runs it.
    Call(PendingCall),
    /// Refused for want of scopes, before anything ran.
    Forbidden(Forbidden),
}

/// What a call runs once admitted. Every kind shares the rest of [`PendingCall`]: the scopes
/// check, the JSON budget, the `Context`, cancellation and the panic guard; only the body differs.
pub(crate) enum Work {
    /// `tools/call`, `prompts/get`, `resources/read`: resolvers (the engine), then the item's
    /// body, with a resource's template variables (empty for the other kinds).
    Item {
        item: Arc<Item>,
        variables: Vec<(String, String)>,
    },
    /// `completion/complete`: a completer (none: no values) and the value typed so far.
    Complete {
        completer: Option<crate::completion::Completer>,
        value: String,
    },
    /// `subscriptions/listen` (2026-07-28): a stream of the notifications it honours.
    Listen(Box<super::listen::Listen>),
    /// `tasks/get`, `tasks/update`, `tasks/cancel`.
    Task(Box<super::task::TaskOp>),
}

impl Work {
    /// The definition the question limit counts for a call naming `name`: a resource's
    /// template, else the name (a tool's or prompt's).
    fn item(&self, name: &Arc<str>) -> Arc<str> {
        match self {
            Self::Item { item, .. } => item.id.clone(),
            _ => name.clone(),
        }
    }

    /// What a call naming `name` calls, for its questions: a resource's URI, else the name (a
    /// tool's or prompt's, shared with its item rather than copied).
    fn target(&self, name: &Arc<str>) -> Arc<str> {
        match self {
            Self::Item { item, .. } if item.kind() != Kind::Resource => item.id.clone(),
            _ => name.clone(),
        }
    }

    /// What the caller asked for, in messages (`tool`, `prompt`, `resource`).
    fn kind(&self) -> &'static str {
        match self {
            Self::Item { item, .. } => item.kind().as_str(),
            Self::Complete { .. } => "completion target",
            Self::Listen(_) => "subscription",
            Self::Task(_) => "task",
        }
    }

    /// The method, which sealed state is bound to.
    fn method(&self) -> &'static str {
        match self {
            Self::Item { item, .. } => item.kind().method(),
            Self::Complete { .. } => "completion/complete",
            Self::Listen(_) => "subscriptions/listen",
            Self::Task(_) => "tasks",
        }
    }
}

/// A call ready to run: a `tools/call` (or, through [`Work`], another method whose body is the
/// server author's code), admitted by the dispatcher like any other.
pub(crate) struct PendingCall {
    pub(super) work: Work,
    /// 2025-11-25 `tools/call`: the client asked for a task.
    pub(super) task: Option<Box<crate::protocol::tasks::TaskParam>>,
    /// The scopes the caller needs.
    pub(super) scopes: Arc<[String]>,
    /// Its answers are single-use: each `requestState` opens once.
    pub(super) single_use: bool,
    /// The tool's or prompt's name, the resource's URI.
    pub(super) name: Arc<str>,
    pub(super) arguments: Map<String, Value>,
    pub(super) envelope: Envelope,
    /// 2026-07-28 retries: the answers and the sealed state.
    pub(super) input_responses: Map<String, Value>,
    pub(super) request_state: Option<String>,
    /// The share of the server's JSON budget its trees take, held until the call ends.
    pub(super) memory: Hold,
}

impl PendingCall {
    /// What the call's telemetry names: its kind and its registered name (a resource's
    /// template; `other` for a completion of nothing registered); `None` for a listen stream or
    /// a task method.
    fn noted(&self) -> Option<(&'static str, &str)> {
        match &self.work {
            Work::Item { item, .. } => Some((item.kind().as_str(), &item.id)),
            Work::Complete { completer, .. } => {
                Some(("completion", if completer.is_some() { &self.name } else { "other" }))
            }
            Work::Listen(_) | Work::Task(_) => None,
        }
    }

    /// The request's span, made once the call is known: every field the call names is given
    /// as it is made (one span per request; a value recorded later costs a filter's lookup).
    pub(crate) fn span(&self, method: crate::telemetry::Method, principal: Option<&Principal>) -> tracing::Span {
        let called = self.noted().map(|(kind, name)| crate::telemetry::Called {
            verb: self.work.method(),
            kind,
            name,
            version: self.envelope.version,
        });
        crate::telemetry::request_span(method, called, principal)
    }

    /// The call's [`Watch`]: `span` is the request's, made by [`PendingCall::span`]; its kind is
    /// the one the span was named with ([`PendingCall::noted`]).
    #[inline]
    pub(crate) fn watch(&self, span: tracing::Span) -> Watch {
        let kind = self.noted().map(|(kind, _)| kind);
        let (item, completed) = match &self.work {
            Work::Item { item, .. } => (Some(item.clone()), None),
            Work::Complete { completer, .. } => (None, completer.as_ref().map(|_| self.name.clone())),
            Work::Listen(_) | Work::Task(_) => (None, None),
        };
        Watch {
            kind,
            item,
            completed,
            span,
            seen: Seen {
                outcome: CallOutcome::Ok,
                round: 1,
            },
            #[cfg(feature = "metrics")]
            started: std::time::Instant::now(),
        }
    }

    /// Whether `principal` may run this call: its token grants every scope the tool needs.
    pub(crate) fn allowed(&self, principal: Option<&Principal>) -> Result<(), Forbidden> {
        crate::access::check(self.work.kind(), &self.name, &self.scopes, principal)
    }

    /// Whether the client asked for notifications during the call: progress, or log messages;
    /// a listen stream is nothing else.
    pub(crate) fn wants_stream(&self) -> bool {
        self.is_listen() || self.envelope.progress_token.is_some() || self.envelope.log_level.is_some()
    }

    /// Whether this is a `subscriptions/listen` stream (long-lived: HTTP keeps it alive).
    pub(crate) fn is_listen(&self) -> bool {
        matches!(self.work, Work::Listen(_))
    }

    /// Starts the call: what comes before its body runs here, at once, and the body's future is
    /// made. A call with nothing to wait for before its body (no resolvers, no
    /// sealed state to open, not a task: most calls) goes on as a [`BodyRun`] that the request's
    /// future polls in place; any other goes on as [`PendingCall::run`], boxed. How it ended and
    /// in which round go into `seen` (its [`Watch`]).
    pub(crate) fn start(
        self,
        server: &Arc<Server>,
        id: RequestId,
        cancel: CancellationToken,
        caller: Caller,
        seen: &mut Seen,
    ) -> Started {
        // Before anything runs: transports that can answer otherwise (HTTP's 403) ask first.
        if let Err(forbidden) = self.allowed(caller.principal.as_ref()) {
            return Started::Done(Err(forbidden.error()));
        }
        let waits = match &self.work {
            Work::Item { item, .. } => {
                !item.resolvers().is_empty()
                    || (self.request_state.is_some() && self.envelope.version.era() == Era::Stateless)
            }
            Work::Complete { .. } | Work::Listen(_) | Work::Task(_) => true,
        };
        if waits {
            return Started::Later(Box::pin(self.run(server.clone(), id, cancel, caller, *seen)));
        }
        match self.setup(server, id, cancel, caller, None, seen) {
            Ok((setup, _channel)) => setup.body(server, Vec::new(), seen),
            Err(answer) => Started::Done(answer),
        }
    }

    /// Runs the call (allowed already: [`PendingCall::start`]) to completion and returns its
    /// result (serialized) or its JSON-RPC error (`None`: cancelled), with `seen` as it ended
    /// (how, in which round: kept when it is cancelled, as the race with its cancellation runs
    /// inside). Every kind of call can run here; a call with nothing to wait for before its body
    /// runs through [`PendingCall::start`] instead, which shares its steps
    /// ([`PendingCall::setup`], [`Setup::body`]).
    async fn run(
        self,
        server: Arc<Server>,
        id: RequestId,
        cancel: CancellationToken,
        caller: Caller,
        mut seen: Seen,
    ) -> (Option<Answer>, Seen) {
        let token = cancel.clone();
        // Its steps as one labelled block (an `async fn` called for them would hold these
        // arguments once more), raced with the cancellation around it, which leaves `seen` here.
        let run = async {
            let Caller {
                outbound,
                peer,
                principal,
            } = caller;
            let answer: Option<Answer> = 'answer: {
                if let Work::Listen(listen) = self.work {
                    // Boxed, as every path a plain call does not take.
                    break 'answer Some(Box::pin(listen.serve(&server, &id, outbound)).await);
                }
                if let Work::Task(op) = self.work {
                    let reply = super::answers::Reply::of_call(self.envelope.version, true);
                    let follows = match self.envelope.version.era() {
                        Era::Stateless => self.envelope.capabilities.tasks(),
                        Era::Handshake => true,
                    };
                    break 'answer Some(Box::pin(server.task_op(*op, follows, principal.as_ref(), reply, peer)).await);
                }
                // A retry's sealed state (2026-07-28): a handshake-era call has none (its questions are
                // answered within the call).
                let state = match (&self.request_state, self.envelope.version.era()) {
                    (Some(token), Era::Stateless) => {
                        // A resource's state is bound to its URI and the variables read from it.
                        let variables = match &self.work {
                            Work::Item { item, variables } if item.kind() == Kind::Resource => {
                                Some(variables_map(variables))
                            }
                            _ => None,
                        };
                        let bound = binding(
                            self.work.method(),
                            &self.name,
                            variables.as_ref().unwrap_or(&self.arguments),
                            &server,
                            principal.as_ref(),
                        );
                        let sealer = &server.config.sealer;
                        Some(if self.single_use {
                            match Box::pin(bound.open_once::<RoundState>(sealer, &*server.config.store.0, token)).await
                            {
                                Ok(state) => state,
                                Err(e) => break 'answer Some(Err(e)),
                            }
                        } else {
                            match bound.open::<RoundState>(sealer, token) {
                                Ok(state) => state,
                                Err(e) => break 'answer Some(Err(e)),
                            }
                        })
                    }
                    _ => None,
                };
                let (mut setup, channel) = match self.setup(
                    &server,
                    id,
                    cancel,
                    Caller {
                        outbound,
                        peer,
                        principal,
                    },
                    state,
                    &mut seen,
                ) {
                    Ok(setup) => setup,
                    Err(answer) => break 'answer Some(answer),
                };
                let item = match &setup.work {
                    Work::Item { item, .. } => item.clone(),
                    Work::Complete { .. } => break 'answer Some(setup.complete(&server).await),
                    // Served above.
                    Work::Listen(_) | Work::Task(_) => {
                        break 'answer Some(Err(ErrorObject::internal(
                            "Internal error: a listen stream or task method was run as a call",
                        )));
                    }
                };
                // A resource's resolvers read its template's variables as their arguments.
                let read = match (&setup.work, item.kind()) {
                    (Work::Item { variables, .. }, Kind::Resource) => variables_map(variables),
                    _ => std::mem::take(&mut setup.arguments),
                };
                let resolved = if item.resolvers().is_empty() {
                    Resolved::Ready(read, Vec::new())
                } else {
                    let resolving = Resolving {
                        item: item.clone(),
                        channel,
                        principal: setup.principal.clone(),
                    };
                    resolving.run(&server, &setup.name, read, &setup.context).await
                };
                let (arguments, values) = match resolved {
                    Resolved::Ready(arguments, values) => (arguments, values),
                    Resolved::Stop(message) if item.kind() == Kind::Tool => {
                        seen.outcome = CallOutcome::ToolError;
                        break 'answer Some(setup.reply.tool(&server, CallToolResult::error(message)));
                    }
                    Resolved::Stop(message) => break 'answer Some(Err(ErrorObject::internal(message))),
                    Resolved::Answer(answer) => {
                        seen.outcome = CallOutcome::InputRequired;
                        break 'answer Some(answer);
                    }
                };
                setup.arguments = arguments;
                match setup.body(&server, values, &mut seen) {
                    Started::Done(answer) => Some(answer),
                    Started::Body(mut body) => Some(std::future::poll_fn(|cx| body.poll(cx, &server, &mut seen)).await),
                    // A task.
                    Started::Later(later) => {
                        let (answer, noted) = later.await;
                        seen = noted;
                        answer
                    }
                }
            };
            answer
        };
        let answer = Waiting::new(token, run).await.flatten();
        (answer, seen)
    }

    /// The steps every call of an item or completer takes before its resolvers: whether it
    /// becomes a task, its round (from the sealed `state` of a retry), how its questions travel,
    /// its [`Context`], and a tool's arguments checked against its schema; with the channel its
    /// resolvers ask on. `Err`: the call's answer already.
    fn setup(
        self,
        server: &Arc<Server>,
        id: RequestId,
        cancel: CancellationToken,
        caller: Caller,
        state: Option<RoundState>,
        seen: &mut Seen,
    ) -> Result<(Setup, Channel), Answer> {
        let Caller {
            outbound,
            peer,
            principal,
        } = caller;
        let Self {
            task,
            work,
            scopes: _,
            single_use: _,
            name,
            arguments,
            envelope,
            input_responses,
            request_state,
            memory,
        } = self;
        let version = envelope.version;
        // Whether a tool call becomes a task: decided before anything runs, so that a tool that
        // must be a task refuses a client that cannot follow one at once.
        let as_task = match &work {
            Work::Item { item, .. } if item.kind() == Kind::Tool => {
                let follows = match version.era() {
                    Era::Stateless => envelope.capabilities.tasks(),
                    Era::Handshake => task.is_some() && version >= crate::protocol::ProtocolVersion::V2025_11_25,
                };
                super::task::task_mode(item.task, version, follows, &name).map_err(Err)?
            }
            _ => false,
        };
        // Results of retries are never cached (2026-07-28): they carry no caching hints.
        let retry = request_state.is_some() || !input_responses.is_empty();
        seen.round = state.as_ref().map_or(0, |s| s.round) + 1;
        // The era, decided here once: how this call's questions travel.
        let channel = Channel::of(version.era(), retry, peer, state, input_responses);
        // How the answer is written (stamped for the era, cached or not): the channel's.
        let reply = channel.reply();
        let parts = ContextParts {
            request_id: id,
            version,
            capabilities: envelope.capabilities,
            client_info: envelope.client_info,
            principal: principal.clone(),
            progress_token: envelope.progress_token,
            log_level: envelope.log_level,
            outbound,
            cancel,
            server: server.call_parts(),
        };
        let context = match channel.back_channel() {
            Some(peer) => Context::new(
                parts,
                crate::resolve::ask::Imperative {
                    peer: crate::resolve::back_channel::Line::Peer(peer.clone()),
                    timeout: server.config.elicitation_timeout,
                    // The caller is the context's.
                    asking: server.ask_base(),
                    kind: work.kind(),
                    target: work.target(&name),
                    item: work.item(&name),
                    metrics: match &work {
                        Work::Item { item, .. } => item.metrics.clone(),
                        _ => Arc::new(crate::telemetry::ItemMetrics::new(&name)),
                    },
                },
            ),
            None => Context::new(parts, crate::context::NoBackChannel),
        };
        // However the call ends, its context sends no progress after its answer.
        let finished = FinishOnDrop(context.clone());
        if let Work::Item { item, .. } = &work
            && item.kind() == Kind::Tool
        {
            // Tools: "Validate all tool inputs": a name the schema does not allow is refused
            // before anything runs, as a result the model can correct.
            if let Some(known) = &item.closed_arguments
                && let Some(unknown) = arguments.keys().find(|k| !known.contains(k))
            {
                let takes = if known.is_empty() {
                    "it takes no arguments".to_owned()
                } else {
                    let names: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                    format!("it takes {}", names.join(", "))
                };
                let shown: String = unknown.chars().take(64).collect();
                let message = format!("argument `{shown}`: tool `{name}` has no such argument; {takes}");
                seen.outcome = CallOutcome::ToolError;
                return Err(reply.tool(server, CallToolResult::error(message)));
            }
            if let Body::Tool(tool) = &item.body
                && !tool.resolvers().is_empty()
                && let Err(result) = tool.check_arguments(&arguments)
            {
                seen.outcome = CallOutcome::ToolError;
                return Err(reply.tool(server, result));
            }
        }
        let setup = Setup {
            work,
            task,
            name,
            arguments,
            as_task,
            reply,
            context,
            finished,
            principal,
            memory,
        };
        Ok((setup, channel))
    }
}

/// What a transport runs a call with: where its notifications and requests to the client go,
/// its connection's back-channel (handshake era), and who calls (from a bearer token).
pub(crate) struct Caller {
    pub(crate) outbound: Outbound,
    pub(crate) peer: Option<Peer>,
    pub(crate) principal: Option<Principal>,
}

/// How a call goes on after [`PendingCall::start`].
pub(crate) enum Started {
    /// Answered already: refused, or its arguments rejected.
    Done(Answer),
    /// Its body runs, with nothing before it to wait for.
    Body(BodyRun),
    /// Everything else, boxed with its cancellation: [`PendingCall::run`] (resolvers, a sealed
    /// state to open, a listen stream, a completion), or a task starting.
    Later(Later),
}

pub(crate) use crate::protocol::jsonrpc::Answer;

/// A call's part that waits: one allocation for it and its registration with the call's
/// cancellation. It gives its answer (`None`: cancelled) and what it noted.
pub(crate) type Later = std::pin::Pin<Box<dyn Future<Output = (Option<Answer>, Seen)> + Send>>;

pin_project_lite::pin_project! {
    /// Runs `run` unless `token` is cancelled first: `None` then. Cancellation wins a tie with a
    /// ready result, as it is looked at before each poll. A call that is done when first polled
    /// (most tools that ask nothing) costs one look at the token; only one that waits registers
    /// to be woken by it. (Not `tokio::select!`, which returns `Pending` when the task's budget
    /// is spent: a call that is ready when first polled must complete then.)
    pub(crate) struct Waiting<F> {
        // Given to `woken` once it registers (the registration holds the token).
        token: Option<CancellationToken>,
        #[pin]
        woken: Option<tokio_util::sync::WaitForCancellationFutureOwned>,
        #[pin]
        run: F,
    }
}

impl<F: Future> Waiting<F> {
    pub(crate) fn new(token: CancellationToken, run: F) -> Self {
        Self {
            token: Some(token),
            woken: None,
            run,
        }
    }

    /// Registers to be woken by a cancellation (once; polled at once, so a cancellation that
    /// came while the call was polled is seen): whether it is cancelled.
    pub(crate) fn register(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> bool {
        let mut this = self.project();
        if this.woken.is_none()
            && let Some(token) = this.token.take()
        {
            this.woken.set(Some(token.cancelled_owned()));
        }
        this.woken.as_pin_mut().is_some_and(|w| w.poll(cx).is_ready())
    }
}

impl<F: Future> Future for Waiting<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        let this = self.as_mut().project();
        let stop = match this.woken.as_pin_mut() {
            Some(woken) => woken.poll(cx).is_ready(),
            None => this.token.as_ref().is_some_and(CancellationToken::is_cancelled),
        };
        if stop {
            return std::task::Poll::Ready(None);
        }
        if let std::task::Poll::Ready(out) = this.run.poll(cx) {
            return std::task::Poll::Ready(Some(out));
        }
        if self.register(cx) {
            return std::task::Poll::Ready(None);
        }
        std::task::Poll::Pending
    }
}

/// A call set up ([`PendingCall::setup`]): what its resolvers and its body run with.
struct Setup {
    work: Work,
    task: Option<Box<crate::protocol::tasks::TaskParam>>,
    name: Arc<str>,
    /// The arguments (taken by the resolvers while they run, given back with their values).
    arguments: Map<String, Value>,
    as_task: bool,
    reply: super::answers::Reply,
    context: Context,
    finished: FinishOnDrop,
    principal: Option<Principal>,
    memory: Hold,
}

impl Setup {
    /// Starts an item's body with its arguments and its resolved `values` (empty: it has no
    /// resolvers), or its task.
    fn body(self, server: &Arc<Server>, values: Vec<crate::question::Settled>, seen: &mut Seen) -> Started {
        let Work::Item { item, variables } = self.work else {
            return Started::Done(Err(ErrorObject::internal(
                "Internal error: only an item's call has a body",
            )));
        };
        let kind = item.kind();
        let input = Input {
            // Read by resources only (their URI): a tool or prompt needs no copy.
            name: match kind {
                Kind::Resource => self.name.to_string(),
                Kind::Tool | Kind::Prompt => String::new(),
            },
            arguments: self.arguments,
            variables,
            context: self.context,
        };
        if self.as_task {
            let token = input.context.token().clone();
            let start = super::task::TaskStart {
                item,
                input,
                resolved: values,
                principal: self.principal,
                ttl_ms: self.task.and_then(|t| t.ttl),
            };
            seen.outcome = CallOutcome::Task;
            let (server, seen, reply) = (server.clone(), *seen, self.reply);
            // Its context and its share of the JSON budget are held until the task started.
            let held = (self.finished, self.memory);
            return Started::Later(Box::pin(async move {
                let answer = Waiting::new(token, server.start_task(start, reply)).await;
                drop(held);
                (answer, seen)
            }));
        }
        // One guard for every kind: a panic where the body is called, or while it runs.
        let running = std::panic::catch_unwind(AssertUnwindSafe(|| item.run(input, values)));
        let mut body = BodyRun {
            running: None,
            reply: self.reply,
            item,
            name: self.name,
            _finished: self.finished,
            _memory: self.memory,
        };
        match running {
            Ok(running) => {
                body.running = Some(running);
                Started::Body(body)
            }
            Err(payload) => Started::Done(body.answer(server, Err(payload), seen)),
        }
    }

    /// A completion's values from its completer (none: no values).
    async fn complete(self, server: &Server) -> Answer {
        let Work::Complete { completer, value } = self.work else {
            return Err(ErrorObject::internal(
                "Internal error: only a completion has a completer",
            ));
        };
        let values = match completer {
            None => Vec::new(),
            Some(c) => {
                let context = self.context;
                match AssertUnwindSafe(async move { c.run(value, context).await })
                    .catch_unwind()
                    .await
                {
                    Ok(v) => v,
                    Err(payload) => {
                        panic_text("completer", &self.name, &payload);
                        return Err(ErrorObject::internal(format!(
                            "completion for `{}` failed: internal error",
                            self.name
                        )));
                    }
                }
            }
        };
        self.reply
            .complete(server, crate::completion::CompleteResult::capped(values))
    }
}

/// An item's body running: polled in place by the request's future, its panics caught at
/// each poll. Holds the call's JSON budget and its context until it ends.
pub(crate) struct BodyRun {
    /// `None` while it is made and once it ended.
    running: Option<Running>,
    reply: super::answers::Reply,
    item: Arc<Item>,
    name: Arc<str>,
    _finished: FinishOnDrop,
    _memory: Hold,
}

impl BodyRun {
    /// Polls the body; once it ends, its answer as the era writes it.
    pub(crate) fn poll(
        &mut self,
        cx: &mut std::task::Context<'_>,
        server: &Server,
        seen: &mut Seen,
    ) -> std::task::Poll<Answer> {
        let Some(running) = self.running.as_mut() else {
            return std::task::Poll::Ready(Err(ErrorObject::internal("Internal error: a call without a body")));
        };
        let polled = match std::panic::catch_unwind(AssertUnwindSafe(|| std::pin::Pin::new(running).poll(cx))) {
            Ok(std::task::Poll::Pending) => return std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(finished)) => Ok(finished),
            Err(payload) => Err(payload),
        };
        // The body's future is dropped inside a guard too: its `Drop` is the body's code.
        let running = self.running.take();
        let ended = match (
            polled,
            std::panic::catch_unwind(AssertUnwindSafe(move || drop(running))),
        ) {
            (Ok(finished), Ok(())) => Ok(finished),
            (Err(payload), _) | (Ok(_), Err(payload)) => Err(payload),
        };
        std::task::Poll::Ready(self.answer(server, ended, seen))
    }

    /// The body, once it waits: run on its own with its cancellation (one allocation).
    pub(crate) fn waiting(
        self,
        cx: &mut std::task::Context<'_>,
        server: &Arc<Server>,
        token: &CancellationToken,
        seen: Seen,
    ) -> Option<Later> {
        let run = BodyWaits {
            body: self,
            server: server.clone(),
            seen,
        };
        let mut later = Box::pin(Noted {
            waiting: Waiting::new(token.clone(), run),
            seen,
        });
        (!later.as_mut().register(cx)).then_some(later)
    }

    /// The answer to a body that ended (`Err`: it panicked).
    fn answer(
        &self,
        server: &Server,
        ended: Result<Result<Finished, ErrorObject>, Box<dyn std::any::Any + Send>>,
        seen: &mut Seen,
    ) -> Answer {
        let (reply, name) = (self.reply, &self.name);
        match ended {
            Ok(Ok(Finished::Tool(result))) => {
                if result.is_error {
                    seen.outcome = CallOutcome::ToolError;
                }
                reply.tool(server, result)
            }
            Ok(Ok(Finished::Prompt(result))) => reply.complete(server, &result),
            Ok(Ok(Finished::Resource(contents))) => reply.read(server, name, &contents),
            Ok(Err(e)) => Err(e),
            Err(payload) => {
                let kind = self.item.kind();
                panic_text(kind.as_str(), name, &payload);
                let failed = format!("{} `{name}` failed: internal error", kind.as_str());
                match kind {
                    // A tool's failure is a result the model sees; a prompt's or a resource's,
                    // a JSON-RPC error.
                    Kind::Tool => {
                        seen.outcome = CallOutcome::ToolError;
                        reply.tool(server, CallToolResult::error(failed))
                    }
                    Kind::Prompt | Kind::Resource => Err(ErrorObject::internal(failed)),
                }
            }
        }
    }
}

/// A body that waits, on its own: its answer and what it noted.
struct BodyWaits {
    body: BodyRun,
    server: Arc<Server>,
    seen: Seen,
}

impl Future for BodyWaits {
    type Output = (Answer, Seen);

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        this.body
            .poll(cx, &this.server, &mut this.seen)
            .map(|answer| (answer, this.seen))
    }
}

pin_project_lite::pin_project! {
    /// What waits, raced with its cancellation, as a [`Later`]: cancelled, it gives what was
    /// noted when it began to wait.
    struct Noted<F> {
        #[pin]
        waiting: Waiting<F>,
        seen: Seen,
    }
}

impl<F: Future> Noted<F> {
    fn register(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> bool {
        self.project().waiting.register(cx)
    }
}

impl<F: Future<Output = (Answer, Seen)>> Future for Noted<F> {
    type Output = (Option<Answer>, Seen);

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        let this = self.project();
        let seen = *this.seen;
        this.waiting.poll(cx).map(|ended| match ended {
            Some((answer, noted)) => (Some(answer), noted),
            None => (None, seen),
        })
    }
}

/// A template's variables as the map resolvers read arguments from (and the state is bound to).
fn variables_map(variables: &[(String, String)]) -> Map<String, Value> {
    variables
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::dispatch::{Dispatch, Dispatcher};
    use crate::elicit::{Confirm, Elicit};
    use crate::peer::Outbound;
    use crate::protocol::inbound::classify;
    use crate::protocol::jsonrpc::Outgoing;
    use crate::resolve::def::{ResolveInputs, ResolveSlot, ResolverSpec, Step, into_step};
    use crate::server::Session;
    use futures_util::future::BoxFuture;
    use std::sync::Arc;

    fn ask(_: ResolveInputs) -> BoxFuture<'static, Step> {
        Box::pin(async { into_step(Elicit::<Confirm>::form("Go on?")) })
    }
    static ASK: ResolverSpec = ResolverSpec {
        name: "ask",
        module: "tests",
        key: "ask",
        deps: &[],
        states: &[],
        once: false,
        run: ask,
    };
    /// One `#[resolve]` parameter whose resolver asks a yes/no form (also `dispatch.rs`'s tests).
    pub(crate) static SLOTS: [ResolveSlot; 1] = [ResolveSlot {
        param: "ok",
        resolver: &ASK,
    }];

    struct Asks;
    impl crate::tool::Tool for Asks {
        fn definition(&self) -> crate::tool::ToolDefinition {
            crate::tool::ToolDefinition::new("asks", crate::tool::ArgsSchema::new().finish())
        }
        fn resolvers(&self) -> &'static [ResolveSlot] {
            &SLOTS
        }
        fn call(&self, _: crate::tool::ToolCall) -> BoxFuture<'static, crate::tool_result::CallToolResult> {
            Box::pin(async { crate::tool_result::CallToolResult::default() })
        }
    }

    async fn first_round() -> Outgoing {
        let d = Dispatcher::stateless(Arc::new(crate::server::Server::new("t").tool(Asks)));
        let frame = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}"#;
        let Dispatch::Call(call) = d.dispatch(&mut Session::new(), None, None, classify(frame), None) else {
            panic!("a call")
        };
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            call.run(Outbound::new(tx), None, None),
        )
        .await
        .expect("the first round of `asks` ended within 10 s")
        .unwrap()
    }

    #[tokio::test]
    async fn a_state_that_cannot_be_sealed_fails_the_call() {
        let ok = first_round().await;
        let text = String::from_utf8(ok.encode()).unwrap();
        assert!(text.contains(r#""requestState":"v2."#), "{text}");

        crate::seal::tests::RANDOM_FAILS.with(|r| r.set(true));
        let failed = first_round().await;
        crate::seal::tests::RANDOM_FAILS.with(|r| r.set(false));
        let Outgoing::Response { outcome: Err(e), .. } = failed else {
            panic!("an error, not an InputRequiredResult with an empty state")
        };
        assert_eq!(e.code, -32603);
    }
}
