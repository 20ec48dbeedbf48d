//! One call (a tool call, a prompt, a resource read, a completion), from its params to its
//! result: resolvers first (asking on the back-channel, or answering with an
//! `InputRequiredResult`), then the body. A tool's failures and panics become `isError` results;
//! a prompt's or resource's, JSON-RPC errors.

use super::Server;
use super::registry::{Body, Finished, Input, Item, Kind};
use crate::access::Forbidden;
use crate::budget::{Budget, EXPANSION, Hold, Short, max_tree_cost, tree_cost};
use crate::context::{Context, ContextParts};
use crate::peer::{Outbound, Peer};
use crate::principal::Principal;
use crate::protocol::envelope::Envelope;
use crate::protocol::jsonrpc::raw_str;
use crate::protocol::messages::{InputRequiredResult, ParamsHead};
use crate::protocol::{Era, ErrorObject, ProtocolVersion, RequestId};
use crate::question::Settled;
use crate::resolve::ask::{BackChannel, Collect};
use crate::resolve::engine::{Asker, Engine, Outcome};
use crate::resolve::state::{CallBinding, RoundState, invalid_state};
use crate::tool_result::CallToolResult;
use futures_util::FutureExt;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
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

/// What to do with one request.
pub(crate) enum Route {
    /// Answer now.
    Reply(Result<Box<RawValue>, ErrorObject>),
    /// Run a tool call (possibly long): the dispatcher admits it and the transport runs it.
    Call(Box<PendingCall>),
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
}

impl Work {
    /// The definition the question limit counts for a call naming `name`: a resource's
    /// template, else the name (a tool's or prompt's).
    fn item<'a>(&'a self, name: &'a str) -> &'a str {
        match self {
            Self::Item { item, .. } => &item.id,
            _ => name,
        }
    }

    /// What the caller asked for, in messages (`tool`, `prompt`, `resource`).
    fn kind(&self) -> &'static str {
        match self {
            Self::Item { item, .. } => item.kind().as_str(),
            Self::Complete { .. } => "completion target",
            Self::Listen(_) => "subscription",
        }
    }

    /// The method, which sealed state is bound to.
    fn method(&self) -> &'static str {
        match self {
            Self::Item { item, .. } => item.kind().method(),
            Self::Complete { .. } => "completion/complete",
            Self::Listen(_) => "subscriptions/listen",
        }
    }
}

/// A call ready to run: a `tools/call` (or, through [`Work`], another method whose body is the
/// server author's code), admitted by the dispatcher like any other.
pub(crate) struct PendingCall {
    work: Work,
    /// The scopes the caller needs.
    scopes: Arc<[String]>,
    /// Its answers are single-use: each `requestState` opens once.
    single_use: bool,
    /// The tool's or prompt's name, the resource's URI.
    name: String,
    arguments: Map<String, Value>,
    envelope: Envelope,
    /// 2026-07-28 retries: the answers and the sealed state.
    input_responses: Map<String, Value>,
    request_state: Option<String>,
    /// The share of the server's JSON budget its trees take, held until the call ends.
    memory: Hold,
}

/// The members every call kind reads the same way: `arguments`, and on a 2026-07-28 retry
/// `inputResponses` and `requestState`; the trees' memory is taken from the server's budget.
struct Common {
    arguments: Map<String, Value>,
    input_responses: Map<String, Value>,
    request_state: Option<String>,
    memory: Hold,
}

impl Common {
    fn read(server: &Server, head: &ParamsHead<'_>) -> Result<Self, ErrorObject> {
        let budget = &server.config.json_memory;
        let mut memory = Hold::default();
        let arguments = object(head.arguments, "arguments", budget, &mut memory)?;
        let input_responses = object(head.input_responses, "inputResponses", budget, &mut memory)?;
        let request_state = match head.request_state {
            None => None,
            Some(r) if r.get() == "null" => None,
            Some(r) => Some(raw_str(r).ok_or_else(invalid_state)?.into_owned()),
        };
        Ok(Self {
            arguments,
            input_responses,
            request_state,
            memory,
        })
    }
}

/// A required string member of the params (`name`, `uri`), or -32602 naming it.
pub(crate) fn required_str<'a>(
    raw: Option<&'a RawValue>,
    what: &str,
) -> Result<std::borrow::Cow<'a, str>, ErrorObject> {
    match raw {
        None => Err(ErrorObject::invalid_params(format!(
            "Invalid params: `{what}` is required"
        ))),
        Some(raw) => raw_str(raw)
            .ok_or_else(|| ErrorObject::invalid_params(format!("Invalid params: `{what}` must be a string"))),
    }
}

/// An object member: absent or `null` is empty; anything else but an object is `what`'s error.
/// The tree's estimated memory is taken from the server's JSON budget first, and held in `hold`.
fn object(
    raw: Option<&RawValue>,
    what: &str,
    budget: &Budget,
    hold: &mut Hold,
) -> Result<Map<String, Value>, ErrorObject> {
    match raw {
        None => Ok(Map::new()),
        Some(r) if r.get() == "null" => Ok(Map::new()),
        Some(r) if crate::protocol::jsonrpc::is_object(r) => {
            let cost = tree_cost(r.get());
            if cost > max_tree_cost(r.get().len()) {
                return Err(ErrorObject::invalid_params(format!(
                    "Invalid params: `{what}` would take about {} KiB of memory once parsed, more than {EXPANSION} times its {} bytes; send fewer, larger values (e.g. one string instead of many small objects)",
                    cost.div_ceil(1024),
                    r.get().len()
                )));
            }
            budget.grow(hold, cost).map_err(|short| match short {
                Short::TooLarge => ErrorObject::invalid_params(format!(
                    "Invalid params: `{what}` would take about {} KiB of memory once parsed, more than this server's limit of {} KiB",
                    cost.div_ceil(1024),
                    budget.limit() / 1024
                )),
                Short::Busy => ErrorObject::internal(
                    "Server busy: other calls hold the memory for their arguments; retry later",
                ),
            })?;
            serde_json::from_str(r.get())
                .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: `{what}`: {e}")))
        }
        Some(_) => Err(ErrorObject::invalid_params(match what {
            "inputResponses" => "Invalid params: `inputResponses` must be an object keyed like `inputRequests`".into(),
            _ => format!("Invalid params: `{what}` must be an object"),
        })),
    }
}

impl PendingCall {
    /// Reads a `tools/call`'s params: the tool (known, or -32602), its arguments, and on a retry
    /// the answers and the state.
    pub(crate) fn prepare(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        Self::route(Self::read_tool(server, head, envelope))
    }

    /// A prepared call, or the error that is the request's answer.
    pub(crate) fn route(call: Result<Self, ErrorObject>) -> Route {
        match call {
            Ok(call) => Route::Call(Box::new(call)),
            Err(e) => Route::Reply(Err(e)),
        }
    }

    fn read_tool(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Result<Self, ErrorObject> {
        let name = required_str(head.name, "name")?;
        let Some(item) = server.tool_item(&name) else {
            return Err(ErrorObject::invalid_params(format!("Unknown tool: {name}")).with_data(json!({ "name": name })));
        };
        Self::of_item(
            item,
            Vec::new(),
            name.into_owned(),
            envelope,
            Common::read(server, head)?,
        )
    }

    /// Reads a `prompts/get`'s params: the prompt (known, or -32602), its arguments (strings,
    /// the required ones present, or -32602 naming them).
    pub(crate) fn prepare_prompt(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        Self::route(Self::read_prompt(server, head, envelope))
    }

    fn read_prompt(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Result<Self, ErrorObject> {
        let name = required_str(head.name, "name")?;
        let Some((item, definition)) = server
            .prompt_item(&name)
            .and_then(|p| Some((p, p.prompt_definition()?)))
        else {
            return Err(
                ErrorObject::invalid_params(format!("Unknown prompt: {name}")).with_data(json!({ "name": name }))
            );
        };
        let common = Common::read(server, head)?;
        crate::prompt::check_arguments(definition, &common.arguments)?;
        Self::of_item(item, Vec::new(), name.into_owned(), envelope, common)
    }

    /// Reads a `resources/read`'s params: the URI (a static resource's, or one a template
    /// matches; else -32602 with the URI in `data`).
    pub(crate) fn prepare_resource(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        Self::route(Self::read_resource(server, head, envelope))
    }

    fn read_resource(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Result<Self, ErrorObject> {
        let uri = required_str(head.uri, "uri")?;
        let (item, variables) = server.find_resource(&uri, envelope.version.era())?;
        Self::of_item(item, variables, uri.into_owned(), envelope, Common::read(server, head)?)
    }

    /// A call of a tool, prompt or resource named `name` (a resource: by its URI).
    fn of_item(
        item: &Arc<Item>,
        variables: Vec<(String, String)>,
        name: String,
        envelope: Envelope,
        common: Common,
    ) -> Result<Self, ErrorObject> {
        let work = Work::Item {
            item: item.clone(),
            variables,
        };
        Ok(Self::new(
            work,
            (item.scopes.clone(), item.single_use),
            name,
            envelope,
            common,
        ))
    }

    /// Reads a `completion/complete`'s params: `ref` (a known prompt or resource, or -32602) and
    /// `argument`.
    pub(crate) fn prepare_complete(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        Self::route(Self::read_complete(server, head, envelope))
    }

    fn read_complete(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Result<Self, ErrorObject> {
        let req = crate::completion::CompleteRequest::read(head.reference, head.argument)?;
        if req.target.len() > crate::resource::MAX_URI_BYTES || req.value.len() > crate::resource::MAX_URI_BYTES {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: `ref` and `argument.value` may hold at most {} bytes",
                crate::resource::MAX_URI_BYTES
            )));
        }
        let (completer, scopes) = server.completer(&req)?;
        let work = Work::Complete {
            completer,
            value: req.value,
        };
        Ok(Self::new(
            work,
            (scopes, false),
            req.target,
            envelope,
            Common::read(server, head)?,
        ))
    }

    /// A call of `work`, with the scopes it needs and whether its answers are single-use.
    fn new(
        work: Work,
        (scopes, single_use): (Arc<[String]>, bool),
        name: String,
        envelope: Envelope,
        common: Common,
    ) -> Self {
        let Common {
            arguments,
            input_responses,
            request_state,
            memory,
        } = common;
        Self {
            work,
            scopes,
            single_use,
            name,
            arguments,
            envelope,
            input_responses,
            request_state,
            memory,
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

    /// Reads a `subscriptions/listen` from `principal` (2026-07-28): its filter, within the
    /// bounds, before anything is sent.
    pub(crate) fn prepare_listen(
        server: &Server,
        head: &ParamsHead<'_>,
        envelope: Envelope,
        principal: Option<&Principal>,
    ) -> Route {
        let listen = super::listen::Listen::read(server, head.notifications, principal);
        Self::route(listen.and_then(|listen| {
            Ok(Self::new(
                Work::Listen(Box::new(listen)),
                (Arc::from(Vec::new()), false),
                "subscriptions/listen".to_owned(),
                envelope,
                Common::read(server, head)?,
            ))
        }))
    }

    /// Runs the call to completion and returns its result (serialized) or its JSON-RPC error.
    pub(crate) async fn run(
        self,
        server: &Server,
        id: RequestId,
        outbound: Outbound,
        peer: Option<Peer>,
        cancel: CancellationToken,
        principal: Option<Principal>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        // Before anything runs: transports that can answer otherwise (HTTP's 403) ask first.
        if let Err(forbidden) = self.allowed(principal.as_ref()) {
            return Err(forbidden.error());
        }
        if let Work::Listen(listen) = self.work {
            return listen.serve(server, &id, outbound).await;
        }
        let Self {
            work,
            scopes: _,
            single_use,
            name,
            arguments,
            envelope,
            input_responses,
            request_state,
            memory: _memory,
        } = self;
        let version = envelope.version;
        let stateless = version.era() == Era::Stateless;
        // Results of retries are never cached (2026-07-28): they carry no caching hints.
        let retry = request_state.is_some() || !input_responses.is_empty();
        let state = match (&request_state, stateless) {
            (Some(token), true) => {
                // A resource's state is bound to its URI and the variables read from it.
                let variables = match &work {
                    Work::Item { item, variables } if item.kind() == Kind::Resource => Some(variables_map(variables)),
                    _ => None,
                };
                let bound = binding(
                    work.method(),
                    &name,
                    variables.as_ref().unwrap_or(&arguments),
                    server,
                    principal.as_ref(),
                );
                let sealer = &server.config.sealer;
                if single_use {
                    bound
                        .open_once::<RoundState>(sealer, &*server.config.store.0, token)
                        .await?
                } else {
                    bound.open::<RoundState>(sealer, token)?
                }
            }
            _ => RoundState::default(),
        };
        let context = Context::new(ContextParts {
            request_id: id,
            version,
            capabilities: envelope.capabilities,
            client_info: envelope.client_info,
            principal: principal.clone(),
            progress_token: envelope.progress_token,
            log_level: envelope.log_level,
            outbound,
            cancel,
            updates: server.resource_updates(),
            flows: server.url_flows(),
            imperative: match (&peer, stateless) {
                (Some(peer), false) => Some(std::sync::Arc::new(crate::resolve::ask::Imperative {
                    peer: peer.clone(),
                    timeout: server.config.elicitation_timeout,
                    asking: server.ask_context(principal.clone()),
                    kind: work.kind(),
                    target: name.clone(),
                    item: work.item(&name).to_owned(),
                })),
                _ => None,
            },
        });
        // However the call ends, its context sends no progress after its answer.
        let _finished = FinishOnDrop(context.clone());
        match work {
            // Served before a `Context` is made (see the top of this function).
            Work::Listen(_) => Err(ErrorObject::internal(
                "Internal error: a listen stream was run as a call",
            )),
            Work::Item { item, variables } => {
                let kind = item.kind();
                if kind == Kind::Tool {
                    // Tools: "Validate all tool inputs": a name the schema does not allow is
                    // refused before anything runs, as a result the model can correct.
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
                        return finish(server, CallToolResult::error(message), version);
                    }
                    if let Body::Tool(tool) = &item.body
                        && !tool.resolvers().is_empty()
                        && let Err(result) = tool.check_arguments(&arguments)
                    {
                        return finish(server, result, version);
                    }
                }
                // A resource's resolvers read its template's variables as their arguments.
                let read = match kind {
                    Kind::Resource => variables_map(&variables),
                    _ => arguments,
                };
                let resolving = Resolving {
                    item: item.clone(),
                    input_responses,
                    state,
                    principal,
                    peer,
                };
                let (arguments, resolved) = match resolving.run(server, &name, read, &context).await {
                    Resolved::Ready(arguments, values) => (arguments, values),
                    Resolved::Stop(message) if kind == Kind::Tool => {
                        return finish(server, CallToolResult::error(message), version);
                    }
                    Resolved::Stop(message) => return Err(ErrorObject::internal(message)),
                    Resolved::Answer(answer) => return answer,
                };
                let input = Input {
                    name: name.clone(),
                    arguments,
                    variables,
                    context,
                };
                // One guard for every kind: a panic, where the body is called or while it runs.
                let body = AssertUnwindSafe(async { item.run(input, resolved).await }).catch_unwind();
                match body.await {
                    Ok(Ok(Finished::Tool(result))) => finish(server, result, version),
                    Ok(Ok(Finished::Prompt(result))) => server.complete_result(&result, version),
                    Ok(Ok(Finished::Resource(contents))) => server.read_result(&name, &contents, version, retry),
                    Ok(Err(e)) => Err(e),
                    Err(payload) => {
                        panic_text(kind.as_str(), &name, &payload);
                        let failed = format!("{} `{name}` failed: internal error", kind.as_str());
                        match kind {
                            // A tool's failure is a result the model sees; a prompt's or a
                            // resource's, a JSON-RPC error.
                            Kind::Tool => finish(server, CallToolResult::error(failed), version),
                            Kind::Prompt | Kind::Resource => Err(ErrorObject::internal(failed)),
                        }
                    }
                }
            }
            Work::Complete { completer, value } => {
                let values = match completer {
                    None => Vec::new(),
                    Some(c) => match AssertUnwindSafe(async move { c.run(value, context).await })
                        .catch_unwind()
                        .await
                    {
                        Ok(v) => v,
                        Err(payload) => {
                            panic_text("completer", &name, &payload);
                            return Err(ErrorObject::internal(format!(
                                "completion for `{name}` failed: internal error"
                            )));
                        }
                    },
                };
                server.complete_result(crate::completion::CompleteResult::capped(values), version)
            }
        }
    }
}

/// A template's variables as the map resolvers read arguments from (and the state is bound to).
fn variables_map(variables: &[(String, String)]) -> Map<String, Value> {
    variables
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect()
}

/// What resolving a call's `#[resolve]` parameters gave.
enum Resolved {
    /// Every value, in the order of the slots, and the arguments back: the body runs.
    Ready(Map<String, Value>, Vec<Settled>),
    /// The call stops with this message (a tool's `isError` result, else a JSON-RPC error).
    Stop(String),
    /// The call's answer is this: an `InputRequiredResult` (2026-07-28), or a JSON-RPC error.
    Answer(Result<Box<RawValue>, ErrorObject>),
}

/// The resolver part of a call, the same for tools, prompts and resources.
struct Resolving {
    item: Arc<Item>,
    input_responses: Map<String, Value>,
    state: RoundState,
    principal: Option<Principal>,
    peer: Option<Peer>,
}

impl Resolving {
    /// Runs the engine over `slots` (nothing to do without any): the values, a stop, or the
    /// round's `InputRequiredResult`, whose state is sealed and bound to the method, `name` and
    /// `arguments`.
    async fn run(self, server: &Server, name: &str, arguments: Map<String, Value>, context: &Context) -> Resolved {
        let Self {
            item,
            input_responses,
            state,
            principal,
            peer,
        } = self;
        let (kind, method, slots) = (item.kind().as_str(), item.kind().method(), item.resolvers());
        if slots.is_empty() {
            return Resolved::Ready(arguments, Vec::new());
        }
        let version = context.protocol_version();
        let stateless = version.era() == Era::Stateless;
        let shared = Arc::new(arguments);
        let asking = server.ask_context(principal.clone());
        let asker = match (stateless, peer) {
            (false, Some(peer)) => Asker::BackChannel(BackChannel {
                peer,
                timeout: server.config.elicitation_timeout,
                max_questions: server.config.max_rounds,
                questions: 0,
                asking,
            }),
            _ => Asker::Collect(Collect::new(state, input_responses, asking)),
        };
        let engine = Engine::new(
            kind,
            (name, &item.id),
            &item.keys,
            shared.clone(),
            context.clone(),
            asker,
            server.config.max_rounds,
        );
        let outcome = match AssertUnwindSafe(engine.run(slots)).catch_unwind().await {
            Ok(o) => o,
            Err(payload) => {
                panic_text("resolver", name, &payload);
                Outcome::Stop(format!("{kind} `{name}` failed: internal error"))
            }
        };
        match outcome {
            Outcome::Ready(values) => Resolved::Ready(Arc::try_unwrap(shared).unwrap_or_else(|a| (*a).clone()), values),
            Outcome::Stop(message) => Resolved::Stop(message),
            Outcome::Abort(e) => Resolved::Answer(Err(e)),
            Outcome::InputRequired { requests, state } if stateless => {
                let sealed =
                    binding(method, name, &shared, server, principal.as_ref()).seal(&server.config.sealer, &state);
                Resolved::Answer(sealed.and_then(|request_state| {
                    let body = InputRequiredResult {
                        input_requests: requests,
                        request_state,
                    };
                    server.result(&body, version, "input_required")
                }))
            }
            Outcome::InputRequired { .. } => Resolved::Answer(Err(ErrorObject::internal(
                "a handshake-era call cannot return InputRequiredResult",
            ))),
        }
    }
}

/// What sealed state of a call is bound to.
fn binding<'a>(
    method: &'static str,
    name: &'a str,
    arguments: &'a Map<String, Value>,
    server: &'a Server,
    principal: Option<&'a Principal>,
) -> CallBinding<'a> {
    CallBinding {
        method,
        tool: name,
        arguments,
        audience: server.audience(),
        principal,
    }
}

/// A tool's result as the answer: the result, or the JSON-RPC error it stands for.
fn finish(server: &Server, result: CallToolResult, version: ProtocolVersion) -> Result<Box<RawValue>, ErrorObject> {
    match result.protocol_error {
        // 2026-07-28 reserves -32042: implementations must not send it.
        Some(error)
            if error.code == crate::protocol::codes::URL_ELICITATION_REQUIRED && version.era() == Era::Stateless =>
        {
            tracing::error!("a tool answered -32042 on 2026-07-28, where the code is reserved; refused");
            Err(ErrorObject::internal(
                "Internal error: the tool needs a URL-mode elicitation, which 2026-07-28 asks from a resolver (Elicit::url), not with -32042",
            ))
        }
        Some(error) => Err(*error),
        None => server.complete_result(&result, version),
    }
}

/// Logs a panic of the server author's code (rate-limited); the client sees only that it failed.
fn panic_text(kind: &'static str, name: &str, payload: &Box<dyn std::any::Any + Send>) {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".into());
    static PANICKED: crate::throttle::Throttle = crate::throttle::Throttle::new();
    if let Some(left_out) = PANICKED.admit() {
        tracing::error!(kind, name, panic = %what, left_out, "server code panicked");
    }
}

#[cfg(test)]
mod tests {
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
        once: false,
        run: ask,
    };
    static SLOTS: [ResolveSlot; 1] = [ResolveSlot {
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
        let Dispatch::Call(call) = d.dispatch(&mut Session::new(), None, None, classify(frame)) else {
            panic!("a call")
        };
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            call.run(Outbound { tx }, None, None),
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
