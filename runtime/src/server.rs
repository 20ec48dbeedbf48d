//! The server: tool registry, configuration, and the per-connection protocol state machine that
//! serves both protocol eras. Transports feed it frames; it never touches I/O itself.

use crate::context::{Context, ContextParts, Outbound, Peer, Principal};
use crate::protocol::envelope::{self, Envelope, KEY_SERVER_INFO, META};
use crate::protocol::{ClientCapabilities, ErrorObject, Implementation, ProtocolVersion, RequestId, codes};
use crate::resolve::{Channel, Engine, Keys, Outcome, StateIn};
use crate::state::{Binding, Sealer, StateKeys};
use crate::tool::{Tool, ToolCall, ToolDefinition};
use crate::tool_result::CallToolResult;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Who may cache list results (`cacheScope` on 2026-07-28), with [`Server::list_cache`].
///
/// ```
/// use mcp_resolve_runtime::{CacheScope, Server};
/// let server = Server::new("notes").list_cache(60_000, CacheScope::Private);
/// # let _ = server;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// Any cache may keep the result.
    Public,
    /// Only the requesting user's cache may keep it.
    Private,
}

impl CacheScope {
    fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Private => "private",
        }
    }
}

/// Limits and knobs. Every field has a safe default.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) max_frame_bytes: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) list_ttl_ms: u64,
    pub(crate) list_cache_scope: CacheScope,
    pub(crate) max_rounds: u64,
    pub(crate) elicitation_timeout: Duration,
    pub(crate) sealer: Sealer,
    pub(crate) audience: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_frame_bytes: 4 * 1024 * 1024,
            max_in_flight: 64,
            list_ttl_ms: 0,
            list_cache_scope: CacheScope::Public,
            max_rounds: 10,
            elicitation_timeout: Duration::from_secs(600),
            sealer: Sealer {
                keys: StateKeys::generate(),
                ttl: Duration::from_secs(600),
            },
            audience: None,
        }
    }
}

struct Entry {
    tool: Arc<dyn Tool>,
    keys: Arc<Keys>,
}

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
    info: Implementation,
    instructions: Option<String>,
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    definitions: Vec<ToolDefinition>,
    tools_json: Vec<Value>,
    pub(crate) config: Config,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.info)
            .field("tools", &self.index.keys().collect::<Vec<_>>())
            .field("config", &self.config)
            .finish()
    }
}

impl Server {
    /// A server with this name and no tools.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, ""),
            instructions: None,
            entries: Vec::new(),
            index: HashMap::new(),
            definitions: Vec::new(),
            tools_json: Vec::new(),
            config: Config::default(),
        }
    }
    /// Sets the version reported in `serverInfo`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }
    /// Sets the instructions reported by `initialize` and `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }
    /// Registers a tool; its definition (name, schemas) is built now, once.
    ///
    /// # Panics
    /// When a tool with the same name is already registered: that is a programming error.
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        let def = tool.definition();
        assert!(
            !self.index.contains_key(&def.name),
            "a tool named `{}` is already registered",
            def.name
        );
        let json = serde_json::to_value(&def).unwrap_or_else(|_| json!({ "name": def.name }));
        self.index.insert(def.name.clone(), self.entries.len());
        let keys = Arc::new(Keys::for_tool(tool.resolvers()));
        self.entries.push(Entry {
            tool: Arc::new(tool),
            keys,
        });
        self.definitions.push(def);
        self.tools_json.push(json);
        self
    }
    /// The largest frame (one JSON-RPC message) accepted, in bytes; larger frames are refused with
    /// -32600 and the connection goes on. Default 4 MiB.
    pub fn max_frame_bytes(mut self, bytes: usize) -> Self {
        self.config.max_frame_bytes = bytes.max(64);
        self
    }
    /// How many tool calls one connection may run at once; further requests wait (the transport
    /// stops reading) until one finishes. Default 64.
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.config.max_in_flight = calls.max(1);
        self
    }
    /// The most rounds of questions one call may take (2026-07-28: `InputRequiredResult`s;
    /// handshake era: questions). Beyond it the call stops with an `isError` result. Default 10.
    pub fn max_rounds(mut self, rounds: u64) -> Self {
        self.config.max_rounds = rounds.max(1);
        self
    }
    /// How long a handshake-era question waits for the client's answer. Default 600 s.
    pub fn elicitation_timeout(mut self, timeout: Duration) -> Self {
        self.config.elicitation_timeout = timeout;
        self
    }
    /// The keys that seal `requestState`. By default a random key is made per process, so a retry
    /// must come back to the same process; give replicas the same keys so any of them can serve it.
    pub fn state_keys(mut self, keys: StateKeys) -> Self {
        self.config.sealer.keys = keys;
        self
    }
    /// How long a sealed `requestState` stays valid. Default 600 s.
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.config.sealer.ttl = ttl;
        self
    }
    /// The audience bound into `requestState` (default: the server's name); replicas serving one
    /// deployment share it.
    pub fn state_audience(mut self, audience: impl Into<String>) -> Self {
        self.config.audience = Some(audience.into());
        self
    }
    /// Caching hints on `tools/list` and `server/discover` (2026-07-28). Default: 0 ms, public.
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
}

/// The protocol state of one connection (stdio process, in-memory pair).
#[derive(Debug)]
enum EraState {
    Undecided,
    Stateless,
    Handshake(Option<Handshake>),
}

#[derive(Debug, Clone)]
struct Handshake {
    version: ProtocolVersion,
    capabilities: ClientCapabilities,
    client_info: Option<Arc<Implementation>>,
}

/// What to do with one request.
pub(crate) enum Step {
    /// Answer now.
    Reply(Result<Value, ErrorObject>),
    /// Run a tool call (possibly long): the transport spawns it.
    Call(PendingCall),
}

/// A tool call ready to run.
pub(crate) struct PendingCall {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) keys: Arc<Keys>,
    pub(crate) name: String,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) progress_token: Option<Value>,
    /// 2026-07-28 retries: the answers and the sealed state.
    pub(crate) input_responses: Map<String, Value>,
    pub(crate) request_state: Option<String>,
}

fn invalid_state() -> ErrorObject {
    ErrorObject::invalid_params("Invalid or expired requestState")
        .with_data(json!({ "reason": "invalid_request_state" }))
}

impl PendingCall {
    /// Runs the call to completion: resolvers first (asking on the back-channel, or answering
    /// with an `InputRequiredResult`), then the body. A panic becomes an `isError` result.
    pub(crate) async fn run(
        self,
        server: &Server,
        id: RequestId,
        outbound: Outbound,
        peer: Option<Peer>,
        cancel: CancellationToken,
        principal: Option<Principal>,
    ) -> Result<Value, ErrorObject> {
        use futures_util::FutureExt;
        let stateless = self.version.era() == crate::Era::Stateless;
        let audience = server.config.audience.as_deref().unwrap_or(&server.info.name);
        fn binding<'a>(
            name: &'a str,
            arguments: &'a Map<String, Value>,
            audience: &'a str,
            principal: Option<&'a Principal>,
        ) -> Binding<'a> {
            Binding {
                method: "tools/call",
                target: name,
                arguments,
                audience,
                principal,
            }
        }
        let state_in = match (&self.request_state, stateless) {
            (Some(token), true) => match server.config.sealer.unseal::<StateIn>(
                token,
                &binding(&self.name, &self.arguments, audience, principal.as_ref()),
            ) {
                Ok(inner) => inner,
                Err(reason) => {
                    tracing::warn!(tool = %self.name, %reason, "requestState rejected on tools/call");
                    return Err(invalid_state());
                }
            },
            _ => StateIn::default(),
        };
        let context = Context::new(ContextParts {
            request_id: id,
            version: self.version,
            capabilities: self.capabilities,
            client_info: self.client_info,
            principal: principal.clone(),
            progress_token: self.progress_token,
            outbound,
            cancel,
        });
        let params = self.tool.resolvers();
        if !params.is_empty()
            && let Err(result) = self.tool.check_arguments(&self.arguments)
        {
            return Ok(server.stamp(to_map(&result), self.version));
        }
        let arguments = Arc::new(self.arguments);
        let mut resolved = Vec::new();
        if !params.is_empty() {
            let channel = match (stateless, peer) {
                (true, _) | (false, None) => Channel::Stateless {
                    state: state_in,
                    responses: self.input_responses,
                },
                (false, Some(peer)) => Channel::BackChannel {
                    peer,
                    timeout: server.config.elicitation_timeout,
                },
            };
            let engine = Engine::new(
                &self.name,
                &self.keys,
                arguments.clone(),
                context.clone(),
                channel,
                server.config.max_rounds,
            );
            let outcome = match std::panic::AssertUnwindSafe(engine.run(params)).catch_unwind().await {
                Ok(o) => o,
                Err(payload) => Outcome::Stop(panicked(&self.name, &payload)),
            };
            match outcome {
                Outcome::Ready(values) => resolved = values,
                Outcome::Stop(result) => return Ok(server.stamp(to_map(&result), self.version)),
                Outcome::Abort(e) => return Err(e),
                Outcome::InputRequired { requests, state } if stateless => {
                    let token = server
                        .config
                        .sealer
                        .seal(&state, &binding(&self.name, &arguments, audience, principal.as_ref()));
                    let mut result = Map::new();
                    result.insert("inputRequests".into(), Value::Object(requests));
                    result.insert("requestState".into(), Value::String(token));
                    return Ok(server.stamp_as(result, self.version, "input_required"));
                }
                Outcome::InputRequired { .. } => {
                    return Err(ErrorObject::internal(
                        "a handshake-era call cannot return InputRequiredResult",
                    ));
                }
            }
        }
        let arguments = Arc::try_unwrap(arguments).unwrap_or_else(|a| (*a).clone());
        let mut call = ToolCall::new(arguments, context);
        call.resolved = resolved;
        let fut = self.tool.call(call);
        let result = match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
            Ok(r) => r,
            Err(payload) => panicked(&self.name, &payload),
        };
        Ok(server.stamp(to_map(&result), self.version))
    }
}

fn panicked(tool: &str, payload: &Box<dyn std::any::Any + Send>) -> CallToolResult {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".into());
    tracing::error!(tool, panic = %what, "tool panicked");
    CallToolResult::error(format!("tool `{tool}` failed: internal error"))
}

fn to_map(result: &CallToolResult) -> Map<String, Value> {
    match serde_json::to_value(result) {
        Ok(Value::Object(m)) => m,
        _ => match serde_json::to_value(CallToolResult::error("could not serialize the tool's result")) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
    }
}

impl Server {
    /// Adds what every 2026-07-28 result carries; handshake-era results pass unchanged.
    pub(crate) fn stamp(&self, result: Map<String, Value>, version: ProtocolVersion) -> Value {
        self.stamp_as(result, version, "complete")
    }

    pub(crate) fn stamp_as(&self, mut result: Map<String, Value>, version: ProtocolVersion, kind: &str) -> Value {
        if version.era() == crate::Era::Stateless {
            result.insert("resultType".into(), kind.into());
            let mut meta = match result.remove(META) {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            meta.insert(
                KEY_SERVER_INFO.into(),
                json!({ "name": self.info.name, "version": self.info.version }),
            );
            result.insert(META.into(), Value::Object(meta));
        }
        Value::Object(result)
    }

    fn cache_hints(&self, result: &mut Map<String, Value>) {
        result.insert("ttlMs".into(), self.config.list_ttl_ms.into());
        result.insert("cacheScope".into(), self.config.list_cache_scope.as_str().into());
    }

    fn capabilities(&self) -> Value {
        json!({ "tools": { "listChanged": false } })
    }

    fn list_tools(&self, version: ProtocolVersion) -> Value {
        let mut result = Map::new();
        result.insert("tools".into(), Value::Array(self.tools_json.clone()));
        if version.era() == crate::Era::Stateless {
            self.cache_hints(&mut result);
        }
        self.stamp(result, version)
    }

    fn discover(&self, version: ProtocolVersion) -> Value {
        let mut result = Map::new();
        result.insert(
            "supportedVersions".into(),
            json!(crate::protocol::version::supported_stateless()),
        );
        result.insert("capabilities".into(), self.capabilities());
        if let Some(i) = &self.instructions {
            result.insert("instructions".into(), i.clone().into());
        }
        self.cache_hints(&mut result);
        self.stamp(result, version)
    }

    fn initialize_result(&self, version: ProtocolVersion) -> Value {
        let mut result = Map::new();
        result.insert("protocolVersion".into(), version.as_str().into());
        result.insert("capabilities".into(), self.capabilities());
        result.insert(
            "serverInfo".into(),
            json!({ "name": self.info.name, "version": self.info.version }),
        );
        if let Some(i) = &self.instructions {
            result.insert("instructions".into(), i.clone().into());
        }
        Value::Object(result)
    }

    fn prepare_call(
        &self,
        params: Option<Map<String, Value>>,
        version: ProtocolVersion,
        capabilities: ClientCapabilities,
        client_info: Option<Arc<Implementation>>,
        progress_token: Option<Value>,
    ) -> Step {
        let mut params = params.unwrap_or_default();
        let name = match params.remove("name") {
            Some(Value::String(n)) => n,
            Some(_) => {
                return Step::Reply(Err(ErrorObject::invalid_params(
                    "Invalid params: `name` must be a string",
                )));
            }
            None => return Step::Reply(Err(ErrorObject::invalid_params("Invalid params: `name` is required"))),
        };
        let Some(&i) = self.index.get(&name) else {
            return Step::Reply(Err(
                ErrorObject::invalid_params(format!("Unknown tool: {name}")).with_data(json!({ "name": name }))
            ));
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a,
            Some(_) => {
                return Step::Reply(Err(ErrorObject::invalid_params(
                    "Invalid params: `arguments` must be an object",
                )));
            }
        };
        let input_responses = match params.remove("inputResponses") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(r)) => r,
            Some(_) => {
                return Step::Reply(Err(ErrorObject::invalid_params(
                    "Invalid params: `inputResponses` must be an object keyed like `inputRequests`",
                )));
            }
        };
        let request_state = match params.remove("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => return Step::Reply(Err(invalid_state())),
        };
        Step::Call(PendingCall {
            tool: self.entries[i].tool.clone(),
            keys: self.entries[i].keys.clone(),
            input_responses,
            request_state,
            name,
            arguments,
            version,
            capabilities,
            client_info,
            progress_token,
        })
    }
}

const MODERN_INITIALIZE: &str =
    "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted";
const LEGACY_ENVELOPE: &str = "this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it";

/// One connection's protocol state: which era it serves and, on the handshake era, what
/// `initialize` said.
#[derive(Debug)]
pub(crate) struct Session {
    state: EraState,
}

impl Session {
    pub(crate) fn new() -> Self {
        Self {
            state: EraState::Undecided,
        }
    }

    /// Decides what a request gets. Runs on the reader, in arrival order, so the era and the
    /// handshake are settled before the next frame is looked at.
    pub(crate) fn on_request(&mut self, server: &Server, method: &str, params: Option<Map<String, Value>>) -> Step {
        if let EraState::Undecided = self.state {
            self.state = if method != "initialize" && envelope::has_envelope(params.as_ref()) {
                EraState::Stateless
            } else {
                EraState::Handshake(None)
            };
        }
        match &mut self.state {
            EraState::Undecided | EraState::Stateless => Self::stateless(server, method, params),
            EraState::Handshake(hs) => Self::handshake(server, hs, method, params),
        }
    }

    fn stateless(server: &Server, method: &str, mut params: Option<Map<String, Value>>) -> Step {
        if method == "initialize" {
            let requested = params
                .as_ref()
                .and_then(|p| p.get("protocolVersion"))
                .cloned()
                .unwrap_or(Value::Null);
            return Step::Reply(Err(ErrorObject::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                MODERN_INITIALIZE,
            )
            .with_data(json!({
                "supported": crate::protocol::version::supported_stateless(),
                "requested": requested,
            }))));
        }
        let Envelope {
            version,
            capabilities,
            client_info,
            progress_token,
        } = match envelope::take(params.as_mut()) {
            Ok(e) => e,
            Err(e) => return Step::Reply(Err(e)),
        };
        match method {
            "server/discover" => Step::Reply(Ok(server.discover(version))),
            "tools/list" => Step::Reply(Ok(server.list_tools(version))),
            "tools/call" => server.prepare_call(params, version, capabilities, client_info, progress_token),
            other => Step::Reply(Err(ErrorObject::method_not_found(other))),
        }
    }

    fn handshake(
        server: &Server,
        hs: &mut Option<Handshake>,
        method: &str,
        params: Option<Map<String, Value>>,
    ) -> Step {
        if method != "initialize" && envelope::has_envelope(params.as_ref()) {
            return Step::Reply(Err(ErrorObject::invalid_request(LEGACY_ENVELOPE)));
        }
        match method {
            "initialize" => {
                if hs.is_some() {
                    return Step::Reply(Err(ErrorObject::invalid_request(
                        "Invalid Request: the connection is already initialized",
                    )));
                }
                let p = params.unwrap_or_default();
                let version = p
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .and_then(ProtocolVersion::parse)
                    .filter(|v| v.era() == crate::Era::Handshake)
                    .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
                let capabilities =
                    ClientCapabilities::from_value(p.get("capabilities").cloned().unwrap_or(Value::Null));
                let client_info = p
                    .get("clientInfo")
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .map(Arc::new);
                *hs = Some(Handshake {
                    version,
                    capabilities,
                    client_info,
                });
                Step::Reply(Ok(server.initialize_result(version)))
            }
            "ping" => Step::Reply(Ok(json!({}))),
            "tools/list" | "tools/call" => {
                let Some(h) = hs.clone() else {
                    return Step::Reply(Err(ErrorObject::invalid_params("Invalid request parameters")
                        .with_data(json!("the connection is not initialized: send `initialize` first"))));
                };
                if method == "tools/list" {
                    return Step::Reply(Ok(server.list_tools(h.version)));
                }
                let token = envelope::progress_token(params.as_ref());
                server.prepare_call(params, h.version, h.capabilities, h.client_info, token)
            }
            other => Step::Reply(Err(ErrorObject::method_not_found(other))),
        }
    }
}
