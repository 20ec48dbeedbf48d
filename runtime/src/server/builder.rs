//! The server as its author builds it: identity, tools, limits. Built once, then shared by every
//! connection.
//!
//! (Over 500 lines on purpose: one job, the builder's settings, each with its documentation and
//! a runnable example. The settings' values are in [`super::config`], the answers a built server
//! gives in [`super::answers`].)

use super::config::{CacheScope, Config};
#[cfg(doc)]
use crate::app_state::State;
use crate::app_state::States;
use crate::budget::Budget;
use crate::principal::Principal;
use crate::prompt::IntoPrompt;
use crate::prompt::PromptDefinition;
use crate::protocol::jsonrpc::to_raw;
use crate::protocol::messages::{Empty, ListChanged, ResourcesCapability, ResultMeta, ServerCapabilities};
use crate::protocol::{ErrorObject, Implementation};
use crate::resource::IntoResource;
use crate::resource::ResourceDefinition;
use crate::seal::{Sealer, StateKeys};
use crate::server::registry::{Item, Kind, Registry};
use crate::store::SharedStore;
use crate::tool::IntoTool;
use crate::tool::ToolDefinition;
use serde_json::value::RawValue;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// An MCP server: its identity, its tools, and its limits. Build it once, then serve it on a
/// transport ([`Server::serve_stdio`], or [`crate::testing::TestClient`] in tests).
///
/// ```
/// use mcp_resolve_runtime::Server;
/// let server = Server::new("notes")
///     .version("1.0.0")
///     .instructions("Manages notes folders.")
///     .max_frame_bytes(1 << 20)
///     .max_in_flight(16);
/// assert_eq!(server.info().name, "notes");
/// assert!(server.tools().is_empty());
/// ```
pub struct Server {
    pub(super) info: Implementation,
    pub(super) instructions: Option<String>,
    /// Every tool, prompt and resource.
    pub(super) registry: Registry,
    /// The tools' definitions, in registration order.
    pub(super) definitions: Vec<ToolDefinition>,
    /// `definitions` as `tools/list` sends them, serialized once, at the first listing.
    pub(super) tools_json: OnceLock<Result<Box<RawValue>, ErrorObject>>,
    /// The prompts' definitions as `prompts/list` sends them, serialized once.
    pub(super) prompts_json: OnceLock<Result<Box<RawValue>, ErrorObject>>,
    pub(super) resources_json: OnceLock<Result<Box<RawValue>, ErrorObject>>,
    pub(super) templates_json: OnceLock<Result<Box<RawValue>, ErrorObject>>,
    pub(super) capabilities: ServerCapabilities,
    /// The `_meta` of every 2026-07-28 result (`serverInfo`), serialized once.
    pub(super) result_meta: Box<RawValue>,
    pub(crate) config: Config,
    /// Who subscribed to which resource ([`Server::resource_updates`]).
    pub(crate) updates: crate::updates::ResourceUpdates,
    /// The application state ([`Server::state`]).
    pub(crate) states: Arc<States>,
    /// What every call's context shares, and what a body's questions start from, made at the
    /// first call (the server is built by then): one count per call instead of one per part.
    pub(crate) call_parts: OnceLock<Arc<crate::context::ServerParts>>,
    pub(crate) ask_base: OnceLock<Arc<crate::resolve::ask::AskContext>>,
    /// Its requests' counters (`mcp_requests_total`).
    pub(crate) request_metrics: crate::telemetry::RequestMetrics,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.info)
            .field("tools", &self.registry.tool_names())
            .field("config", &self.config)
            .finish()
    }
}

fn result_meta(info: &Implementation) -> Box<RawValue> {
    to_raw(&ResultMeta { server_info: info }).unwrap_or_else(|_| empty_object())
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".into()).unwrap_or_else(|_| unreachable!("`{{}}` is JSON"))
}

impl Server {
    /// A server with this name and no tools.
    pub fn new(name: impl Into<String>) -> Self {
        let info = Implementation::new(name, "");
        Self {
            result_meta: result_meta(&info),
            info,
            instructions: None,
            registry: Registry::default(),
            definitions: Vec::new(),
            tools_json: OnceLock::new(),
            prompts_json: OnceLock::new(),
            resources_json: OnceLock::new(),
            templates_json: OnceLock::new(),
            capabilities: ServerCapabilities {
                tools: ListChanged { list_changed: false },
                logging: None,
                prompts: None,
                resources: None,
                completions: None,
                extensions: None,
                tasks: None,
            },
            config: Config::default(),
            updates: crate::updates::ResourceUpdates::default(),
            states: Arc::default(),
            call_parts: OnceLock::new(),
            ask_base: OnceLock::new(),
            request_metrics: crate::telemetry::RequestMetrics::default(),
        }
    }
    /// Sets the version reported in `serverInfo`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self.result_meta = result_meta(&self.info);
        self
    }
    /// Sets the instructions reported by `initialize` and `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }
    /// Holds `value` as application state: every `#[tool]`, `#[prompt]`, `#[resource]`,
    /// `#[resolver]` or completer parameter of type [`State<T>`] receives it (hidden from the
    /// schemas), and [`Context::state`](crate::Context::state) returns it. Each server has its
    /// own; a second value of the same type replaces the first. A server missing a state one
    /// of its items or resolvers takes does not start: serving returns an error naming the
    /// type and the item.
    ///
    /// ```
    /// use mcp_resolve_runtime::Server;
    /// struct Tracker {
    ///     url: String,
    /// }
    /// let server = Server::new("triage").state(Tracker { url: "https://tracker.example".into() });
    /// # let _ = server;
    /// ```
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.states).insert(value);
        self
    }
    /// The application state of type `T` the server holds (`None`: none was registered), to
    /// share with what runs beside the server, such as the pages of URL-mode questions
    /// (`HttpOptions::page`): the very value the items receive, not a copy.
    ///
    /// ```
    /// use mcp_resolve_runtime::{Server, State};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// struct Visits(AtomicU32);
    /// let server = Server::new("pages").state(Visits(AtomicU32::new(0)));
    /// let visits: State<Visits> = server.state_of::<Visits>().expect("registered above");
    /// visits.0.fetch_add(1, Ordering::Relaxed); // what a page does
    /// assert_eq!(server.state_of::<Visits>().map(|v| v.0.load(Ordering::Relaxed)), Some(1));
    /// assert!(server.state_of::<String>().is_none());
    /// ```
    pub fn state_of<T: Send + Sync + 'static>(&self) -> Option<crate::app_state::State<T>> {
        self.states.get::<T>()
    }

    /// Whether the server holds every application state its items, resolvers and completers
    /// take; `Err` names the first missing type and who takes it. Serving checks this first.
    pub(crate) fn check_states(&self) -> Result<(), String> {
        for kind in [Kind::Tool, Kind::Prompt, Kind::Resource] {
            for item in self.registry.of(kind) {
                for (need, via) in item.state_needs() {
                    if self.states.has(&need) {
                        continue;
                    }
                    let via = match via {
                        None => String::new(),
                        Some("completer") => " (in a completer)".to_owned(),
                        Some(resolver) => format!(" (through resolver `{resolver}`)"),
                    };
                    return Err(format!(
                        "{} `{}` takes `State<{}>`{via}, and the server holds no state of that type: register one with `Server::state(value)` before serving",
                        kind.as_str(),
                        item.id,
                        (need.name)(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Registers a tool; its definition (name, schemas) is built now, once.
    ///
    /// # Panics
    /// When a tool with the same name is already registered: that is a programming error.
    pub fn tool<A>(mut self, tool: impl IntoTool<A>) -> Self {
        let (item, def) = Item::tool(tool.into_tool());
        if def.execution.task_support != crate::tool::TaskSupport::Forbidden {
            use crate::protocol::tasks::TASKS_EXTENSION;
            self.capabilities.extensions = Some(serde_json::json!({ TASKS_EXTENSION: {} }));
            self.capabilities.tasks = Some(serde_json::json!({
                "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } }
            }));
        }
        self.register(item);
        self.definitions.push(def);
        self
    }
    /// Registers a prompt (`#[prompt]`, or a [`Prompt`](crate::prompt::Prompt) by hand); the server then declares the
    /// `prompts` capability and answers `prompts/list` and `prompts/get`.
    ///
    /// # Panics
    /// When a prompt with the same name is already registered: that is a programming error.
    ///
    /// ```
    /// use mcp_resolve_runtime::{
    ///     Server,
    ///     prompt::{GetPromptResult, Prompt, PromptCall, PromptDefinition},
    ///     protocol::ErrorObject,
    /// };
    /// use futures_util::future::BoxFuture;
    /// struct Hello;
    /// impl Prompt for Hello {
    ///     fn definition(&self) -> PromptDefinition {
    ///         PromptDefinition::new("hello")
    ///     }
    ///     fn get(&self, _: PromptCall) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> {
    ///         Box::pin(async { Ok(GetPromptResult::default()) })
    ///     }
    /// }
    /// let server = Server::new("notes").prompt(Hello);
    /// assert_eq!(server.prompts()[0].name, "hello");
    /// ```
    pub fn prompt<A>(mut self, prompt: impl IntoPrompt<A>) -> Self {
        let item = Item::prompt(prompt.into_prompt());
        if item
            .prompt_definition()
            .is_some_and(|d| d.arguments.iter().any(|a| a.completer.is_some()))
        {
            self.capabilities.completions = Some(Empty {});
        }
        self.register(item);
        self.capabilities.prompts = Some(Empty {});
        self
    }
    /// Registers a resource (`#[resource]`, or a [`Resource`](crate::resource::Resource) by hand): a static URI, listed by
    /// `resources/list`, or a URI template, listed by `resources/templates/list`. The server then
    /// declares the `resources` capability and answers `resources/read` (and, on the handshake
    /// era, `resources/subscribe` and `resources/unsubscribe`).
    ///
    /// # Panics
    /// When a resource with the same URI or template is already registered: that is a
    /// programming error.
    ///
    /// ```
    /// use mcp_resolve_runtime::{
    ///     Server,
    ///     protocol::ErrorObject,
    ///     resource::{IntoResourceContents, Resource, ResourceCall, ResourceContents, ResourceDefinition},
    /// };
    /// use futures_util::future::BoxFuture;
    /// struct Motd;
    /// impl Resource for Motd {
    ///     fn definition(&self) -> ResourceDefinition {
    ///         ResourceDefinition::new("test://motd", "motd")
    ///     }
    ///     fn read(&self, call: ResourceCall) -> BoxFuture<'static, Result<Vec<ResourceContents>, ErrorObject>> {
    ///         Box::pin(async move { "Hello".into_contents(&call.uri, None) })
    ///     }
    /// }
    /// let server = Server::new("notes").resource(Motd);
    /// assert_eq!(server.resources()[0].name, "motd");
    /// ```
    pub fn resource<A>(mut self, resource: impl IntoResource<A>) -> Self {
        let item = Item::resource(resource.into_resource());
        if item.resource_definition().is_some_and(|d| !d.completers.is_empty()) {
            self.capabilities.completions = Some(Empty {});
        }
        self.register(item);
        self.capabilities.resources = Some(ResourcesCapability { subscribe: Some(true) });
        self
    }
    /// Adds `item` to the registry; a name, URI or template registered twice is a programming
    /// error, and panics saying which.
    fn register(&mut self, item: Item) {
        if let Err(twice) = self.registry.add(item) {
            panic!("{twice}");
        }
    }
    /// The largest frame (one JSON-RPC message) accepted, in bytes; larger frames are refused with
    /// -32600 and the connection goes on. Default 4 MiB.
    pub fn max_frame_bytes(mut self, bytes: usize) -> Self {
        self.config.max_frame_bytes = bytes.max(64);
        self
    }
    /// How many tool calls one stdio (or in-memory) connection may run at once; further requests
    /// wait (the transport stops reading) until one finishes. HTTP bounds its requests by
    /// connections, sessions and bytes instead ([`HttpOptions`](crate::HttpOptions)). A call waiting for the client's answer to its question
    /// does not count: see [`Server::max_waiting`]. Default 64.
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.config.max_in_flight = calls.max(1);
        self
    }
    /// How many calls of one connection (stdio) or session (HTTP, handshake era) may wait for
    /// the client's answer to a question at once (default 64). Waiting calls leave their running
    /// slot to other calls; a call that would ask beyond this bound stops at once with an
    /// `isError` result saying so, instead of waiting.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").max_waiting(8);
    /// # let _ = server;
    /// ```
    pub fn max_waiting(mut self, calls: usize) -> Self {
        self.config.max_waiting = calls.max(1);
        self
    }
    /// How much memory the JSON trees made from clients' `arguments` and `inputResponses` may
    /// take at once, across all calls (default 256 MiB). Each call's share is estimated from
    /// its text before it is parsed and held until the call ends: a call whose arguments alone
    /// would take more is refused with -32602, one arriving while others hold the rest gets a
    /// -32603 "server busy" error to retry. Whatever this budget, a call's trees may not take
    /// more than 16 times their text (or 16 MiB, if more): past that, -32602.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").max_json_memory(64 << 20);
    /// # let _ = server;
    /// ```
    pub fn max_json_memory(mut self, bytes: usize) -> Self {
        self.config.json_memory = Budget::new(bytes);
        self
    }
    /// The most rounds of questions one call may take (2026-07-28: `InputRequiredResult`s;
    /// handshake era: questions). Beyond it the call stops with an `isError` result. Default 10.
    pub fn max_rounds(mut self, rounds: u64) -> Self {
        self.config.max_rounds = rounds.max(1);
        self
    }
    /// Joins requests to their callers' traces: `hook` gets each request's `mcp.request` span
    /// and the W3C trace context the request carried (`traceparent`/`tracestate` in
    /// `params._meta`, else the HTTP `traceparent` header), and makes it the span's parent.
    /// With `tracing-opentelemetry`, extract an OpenTelemetry context from the two values and
    /// call `span.set_parent(…)`. Called only when a subscriber records the span. See
    /// [`telemetry`](crate::telemetry) for the spans.
    ///
    /// ```
    /// use mcp_resolve_runtime::Server;
    /// let server = Server::new("notes").on_trace_context(|span, trace| {
    ///     // e.g. `span.set_parent(propagator.extract(&trace_headers))`
    ///     span.record("trace_parent_seen", trace.trace_id());
    /// });
    /// # let _ = server;
    /// ```
    pub fn on_trace_context(
        mut self,
        hook: impl Fn(&tracing::Span, &crate::telemetry::TraceContext) + Send + Sync + 'static,
    ) -> Self {
        self.config.trace_hook = Some(crate::telemetry::TraceHook(std::sync::Arc::new(hook)));
        self
    }
    /// How long a handshake-era question waits for the client's answer. Default 600 s.
    pub fn elicitation_timeout(mut self, timeout: Duration) -> Self {
        self.config.elicitation_timeout = timeout;
        self
    }
    /// The keys that seal `requestState`. By default a random key is made per process (at the
    /// first seal), so a retry must come back to the same process; give replicas the same keys so
    /// any of them can serve it.
    pub fn state_keys(mut self, keys: StateKeys) -> Self {
        let leeway = self.config.sealer.leeway;
        self.config.sealer = Sealer::new(Some(keys), self.config.sealer.ttl);
        self.config.sealer.leeway = leeway;
        self
    }
    /// How long a sealed `requestState` stays valid. Default 600 s (plus the clock leeway of
    /// [`Server::state_leeway`]).
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.config.sealer.ttl = ttl;
        self
    }
    /// The clock leeway for sealed `requestState`, at both ends of its life: a state issued up to
    /// this far in the future is taken, and a state stays valid this long past its expiry, so
    /// replicas whose clocks differ a little serve each other's rounds. Default 60 s; keep it
    /// small next to [`Server::state_ttl`].
    ///
    /// ```
    /// use mcp_resolve_runtime::Server;
    /// use std::time::Duration;
    /// let server = Server::new("notes")
    ///     .state_ttl(Duration::from_secs(300))
    ///     .state_leeway(Duration::from_secs(5));
    /// # let _ = server;
    /// ```
    pub fn state_leeway(mut self, leeway: Duration) -> Self {
        self.config.sealer.leeway = leeway;
        self
    }
    /// Where the server keeps what outlives one request and must be seen by every replica: the
    /// single-use answers already used and the URL-mode flows pages complete. Default: a
    /// [`MemoryStore`](crate::store::MemoryStore) of this process; replicas behind a load balancer share
    /// one (e.g. `RedisStore`, with the `redis` feature), or a replay through another replica
    /// goes unseen. A store that fails refuses the single-use call it served (-32603) before
    /// anything runs; calls whose answers are not single-use never ask it.
    ///
    /// ```
    /// use mcp_resolve_runtime::{Server, store::MemoryStore};
    /// let server = Server::new("notes").store(MemoryStore::with_capacity(10_000));
    /// # let _ = server;
    /// ```
    pub fn store<S: crate::store::Store>(mut self, store: S) -> Self {
        self.config.store = SharedStore(Arc::new(store));
        self
    }
    /// How long a URL-mode flow (the page a URL-mode question sends the user to) stays open:
    /// past it the page refuses the flow and the question ends the call. Default 600 s.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").url_flow_ttl(std::time::Duration::from_secs(300));
    /// # let _ = server;
    /// ```
    pub fn url_flow_ttl(mut self, ttl: Duration) -> Self {
        self.config.url_flow_ttl = ttl;
        self
    }
    /// How long a 2026-07-28 retry whose user accepted a URL-mode question waits for the page to
    /// be completed before asking the question again (the handshake era waits up to
    /// [`Server::elicitation_timeout`]). Each re-ask is a round, so the user has about
    /// `max_rounds` × this on the page (clients cap rounds too, commonly at 10). Default 30 s:
    /// five minutes in all by default.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").url_wait(std::time::Duration::from_secs(3));
    /// # let _ = server;
    /// ```
    pub fn url_wait(mut self, wait: Duration) -> Self {
        self.config.url_wait = wait;
        self
    }
    /// How many calls (`tools/call`, `prompts/get`, `resources/read`, `completion/complete`) one
    /// caller may make: `per_second` sustained, `burst` at once (defaults 100 and 200: far more
    /// than a model calls, so only a runaway client meets them). A caller is an authenticated
    /// principal, else an unauthenticated HTTP client's address, else a stdio connection. Past
    /// it the call is refused before it runs: -32603 "Too many requests … retry in N ms" with
    /// `data.retryAfterMs`, and over HTTP status 429 with `Retry-After`; other callers are not
    /// slowed. `subscriptions/listen` is bounded apart ([`Server::max_listens`]).
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").call_rate_limit(20, 40);
    /// # let _ = server;
    /// ```
    pub fn call_rate_limit(mut self, per_second: u32, burst: u32) -> Self {
        let one = std::num::NonZeroU32::MIN;
        let per_second = std::num::NonZeroU32::new(per_second).unwrap_or(one);
        let burst = std::num::NonZeroU32::new(burst).unwrap_or(one);
        self.config.call_rate = Some(Arc::new(super::rate::CallRate::new(per_second, burst)));
        self
    }
    /// How long a task is kept after it is created (its `ttlMs`): `tasks/get` answers for it that
    /// long, then it is gone. Default 1 hour. A 2025-11-25 client may ask for another retention
    /// with `task.ttl`; it gets at most `max` (default 24 hours), and at least one second.
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = mcp_resolve_runtime::Server::new("deploys")
    ///     .task_ttl(Duration::from_secs(6 * 3600), Duration::from_secs(48 * 3600));
    /// # let _ = server;
    /// ```
    pub fn task_ttl(mut self, ttl: Duration, max: Duration) -> Self {
        self.config.tasks.max_ttl = max.max(Duration::from_secs(1));
        self.config.tasks.ttl = ttl.clamp(Duration::from_secs(1), self.config.tasks.max_ttl);
        self
    }
    /// The `pollIntervalMs` a task suggests to its client (default 1 s). Polls count as calls
    /// against [`Server::call_rate_limit`], whatever the client does with the suggestion.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("deploys").task_poll_interval(std::time::Duration::from_secs(2));
    /// # let _ = server;
    /// ```
    pub fn task_poll_interval(mut self, every: Duration) -> Self {
        self.config.tasks.poll_interval = every.max(Duration::from_millis(1));
        self
    }
    /// How many tasks run at once on this server: `per_caller` of one caller (default 16) and
    /// `total` in all (default 1024). A call past either is refused before its task exists
    /// (-32603 "Too many tasks" naming the caller's count, or "Server busy"); tasks that ended
    /// do not count. Like the task bodies, the count is this process's.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("deploys").max_tasks(4, 256);
    /// # let _ = server;
    /// ```
    pub fn max_tasks(mut self, per_caller: usize, total: usize) -> Self {
        self.config.tasks.per_caller = per_caller.max(1);
        self.config.tasks.total = total.max(1);
        self
    }
    /// The largest tool result a task keeps, in bytes of JSON (default 1 MiB): a bigger one fails
    /// the task with an error saying so, as the result would be stored for every poll to read.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("reports").max_task_result_bytes(4 << 20);
    /// # let _ = server;
    /// ```
    pub fn max_task_result_bytes(mut self, bytes: usize) -> Self {
        self.config.tasks.max_result_bytes = bytes;
        self
    }
    /// How long a running task is vouched for by the replica that runs it (default 15 s,
    /// renewed every third of it): a task whose replica stopped is reported `failed` by the
    /// first `tasks/get` after its lease ran out, so it is never stuck `working`.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("deploys").task_lease(std::time::Duration::from_secs(30));
    /// # let _ = server;
    /// ```
    pub fn task_lease(mut self, lease: Duration) -> Self {
        self.config.tasks.lease = lease.max(Duration::from_millis(30));
        self
    }
    /// How often a task's question looks in the store for its answer when the answer may come
    /// through another replica (default 250 ms); an answer given to the replica running the
    /// task wakes it at once.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("deploys").task_answer_poll(std::time::Duration::from_millis(100));
    /// # let _ = server;
    /// ```
    pub fn task_answer_poll(mut self, every: Duration) -> Self {
        self.config.tasks.answer_poll = every.max(Duration::from_millis(1));
        self
    }
    /// How often a handshake-era client on stdio is pinged once initialized (default 60 s;
    /// `None`: never). A client that leaves a ping unanswered for as long is taken to be gone:
    /// its connection ends, its questions fail and its calls are cancelled, instead of waiting for
    /// a write to fail. (2026-07-28 has no `ping`; an HTTP session's stream carries keep-alive
    /// comments and ends after `session_idle`.)
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").ping_interval(Some(std::time::Duration::from_secs(30)));
    /// # let _ = server;
    /// ```
    pub fn ping_interval(mut self, every: Option<Duration>) -> Self {
        self.config.ping_interval = every.map(|e| e.max(Duration::from_millis(10)));
        self
    }
    /// Takes calls at any rate (no [`Server::call_rate_limit`]): for a server behind a gateway
    /// that limits callers itself, or a benchmark.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("bench").unlimited_call_rate();
    /// # let _ = server;
    /// ```
    pub fn unlimited_call_rate(mut self) -> Self {
        self.config.call_rate = None;
        self
    }
    /// Lets URL-mode questions be asked of callers that are not authenticated. By default they
    /// are not: the page a URL-mode question sends the user to must know that the person who
    /// opens it is the one asked (elicitation: "The MCP Server MUST verify the identity of the
    /// user who opens the URL"; "possession of a state handle MUST NOT be treated as
    /// authentication"), which takes a principal to bind the flow to, so without bearer tokens
    /// ([`HttpOptions::bearer`](crate::HttpOptions::bearer)) such a question ends the call saying
    /// so. With this, a flow of an unauthenticated caller is bound to nobody: whoever holds its
    /// link may complete it. Use it only where that is what you mean (a page that authenticates
    /// the user itself and checks the outcome against your own records, or a trusted local
    /// setup).
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("kiosk").anonymous_url_flows();
    /// # let _ = server;
    /// ```
    pub fn anonymous_url_flows(mut self) -> Self {
        self.config.anonymous_url_flows = true;
        self
    }
    /// Declares that the scope `broader` implies each of `narrower` (MCP authorization: "servers
    /// MUST account for scope hierarchies, where a broader scope implies narrower ones"): a token
    /// granting `notes:admin` then passes every check for `notes:read` too, and the caller's
    /// [`Principal::scopes`](crate::Principal) list both. Implications chain (`admin` →
    /// `write` → `read`); nothing is ever implied by a name's prefix.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes")
    ///     .scope_implies("notes:admin", ["notes:write"])
    ///     .scope_implies("notes:write", ["notes:read"]);
    /// # let _ = server;
    /// ```
    pub fn scope_implies<S: Into<String>>(
        mut self,
        broader: impl Into<String>,
        narrower: impl IntoIterator<Item = S>,
    ) -> Self {
        let implied = self.config.scope_implications.entry(broader.into()).or_default();
        for scope in narrower {
            let scope = scope.into();
            if !implied.contains(&scope) {
                implied.push(scope);
            }
        }
        self
    }
    /// `principal` with the scopes its granted ones imply ([`Server::scope_implies`]) added
    /// after them, each once: what every scope check sees.
    pub(crate) fn with_implied_scopes(&self, mut principal: Principal) -> Principal {
        let implications = &self.config.scope_implications;
        if implications.is_empty() {
            return principal;
        }
        let mut i = 0;
        while i < principal.scopes.len() {
            if let Some(implied) = implications.get(&principal.scopes[i]) {
                for scope in implied {
                    if !principal.scopes.contains(scope) {
                        principal.scopes.push(scope.clone());
                    }
                }
            }
            i += 1;
        }
        principal
    }
    /// How many 2026-07-28 `subscriptions/listen` streams may be open at once: `total` across
    /// every caller (default 1024; unauthenticated callers count toward it only) and
    /// `per_caller` for one authenticated principal (default 16). Past them the listen request
    /// is refused before anything is sent: -32600 for a caller over its share, -32603 "busy"
    /// when the total is reached.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").max_listens(4096, 8);
    /// # let _ = server;
    /// ```
    pub fn max_listens(mut self, total: usize, per_caller: usize) -> Self {
        let lifetime = self.config.listens.lifetime;
        self.config.listens = Arc::new(super::listen::ListenLimits::new(total, per_caller, lifetime));
        self
    }
    /// How long one `subscriptions/listen` stream stays open (default 24 h): then the server ends
    /// it gracefully, with the listen request's response, and the client listens again.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").listen_lifetime(std::time::Duration::from_secs(3600));
    /// # let _ = server;
    /// ```
    pub fn listen_lifetime(mut self, lifetime: Duration) -> Self {
        let (total, per_caller) = (self.config.listens.total, self.config.listens.per_caller);
        self.config.listens = Arc::new(super::listen::ListenLimits::new(total, per_caller, lifetime));
        self
    }
    /// How many questions one tool, prompt or resource may ask one caller (an authenticated
    /// principal; every unauthenticated caller counts as one) in each window of `window`: past
    /// it the question is not asked and the call ends with an `isError` result (a prompt's or
    /// resource's -32603) saying to try again later, and the refusal is logged. A resource is
    /// counted by its template (its URI when static), so reading many URIs of one template spends
    /// one budget. Counted in this process; every round that asks again counts. Default: 100 per
    /// 60 s: more than a person answers (and than the 64 questions that may wait at once), far
    /// fewer than a runaway loop asks.
    ///
    /// What it counts is bounded, and a bound falls on the caller over it: at most 1 000 tools,
    /// prompts and templates per caller, and 100 000 callers at once (past that, callers not
    /// counted yet are refused until a window ends).
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = mcp_resolve_runtime::Server::new("notes").question_limit(5, Duration::from_secs(60));
    /// # let _ = server;
    /// ```
    pub fn question_limit(mut self, max: u32, window: Duration) -> Self {
        self.config.question_limit = Arc::new(crate::resolve::limit::QuestionLimit::new(max, window));
        self
    }
    /// How many URL-mode flows one caller (an authenticated principal; every unauthenticated
    /// caller counts as one) may have waiting for their pages at once (at least 1). A question
    /// that would start one more is not asked: its call ends saying the caller has that many
    /// steps waiting (a tool's `isError` result, a prompt's or resource's -32603), and nothing
    /// else is affected. A flow stops waiting when its page completes or declines it, when the
    /// call takes its outcome, or when it expires ([`Server::url_flow_ttl`]).
    ///
    /// Counted by this server, in this process: with replicas, a caller may have this many
    /// waiting at each (flows finished through another replica are found in the store once the
    /// caller is at the bound). Default 16: more than one person keeps open. A server without
    /// authentication shares the bound among all its users: raise it there.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes").url_flows_per_caller(4);
    /// # let _ = server;
    /// ```
    pub fn url_flows_per_caller(self, max: usize) -> Self {
        self.config.waiting_flows.set_max(max);
        self
    }
    /// The URL-mode flows, for the pages the server's URL-mode questions send users to: take it
    /// before serving the server (the pages run beside it), or from a call's
    /// [`Context::url_flows`](crate::Context::url_flows).
    ///
    /// ```
    /// let flows = mcp_resolve_runtime::Server::new("notes").url_flows();
    /// # let _ = flows;
    /// ```
    pub fn url_flows(&self) -> crate::url_flow::UrlFlows {
        crate::url_flow::UrlFlows {
            store: self.config.store.clone(),
            ttl: self.config.url_flow_ttl,
            waiting: self.config.waiting_flows.clone(),
        }
    }
    /// The audience bound into `requestState` (default: the server's name); replicas serving one
    /// deployment share it.
    pub fn state_audience(mut self, audience: impl Into<String>) -> Self {
        self.config.audience = Some(audience.into());
        self
    }
    /// Caching hints (2026-07-28) on `tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`, `resources/read` and `server/discover`.
    /// Default: 0 ms, public.
    pub fn list_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.config.list_ttl_ms = ttl_ms;
        self.config.list_cache_scope = scope;
        self
    }
    /// The server's name and version.
    pub fn info(&self) -> &Implementation {
        &self.info
    }
    /// The registered tools' definitions, in registration order.
    pub fn tools(&self) -> &[ToolDefinition] {
        &self.definitions
    }
    /// The registered resources' definitions (static and templates), in registration order.
    pub fn resources(&self) -> Vec<&ResourceDefinition> {
        self.registry
            .of(Kind::Resource)
            .filter_map(|r| r.resource_definition())
            .collect()
    }
    /// The registered prompts' definitions, in registration order.
    pub fn prompts(&self) -> Vec<&PromptDefinition> {
        self.registry
            .of(Kind::Prompt)
            .filter_map(|p| p.prompt_definition())
            .collect()
    }
}

impl Server {
    /// The handle that tells subscribed clients a resource changed ([`ResourceUpdates`](crate::updates::ResourceUpdates)). Take it
    /// before the server is served; clones share the same subscriptions.
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes");
    /// let updates = server.resource_updates();
    /// std::thread::spawn(move || updates.updated("file:///notes/today.md"));
    /// ```
    pub fn resource_updates(&self) -> crate::updates::ResourceUpdates {
        self.updates.clone()
    }
}
