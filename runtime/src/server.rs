//! The server: tool registry, configuration, and the per-connection protocol state machine that
//! serves both protocol eras. Transports feed it frames; it never touches I/O itself.

use crate::context::{Context, ContextParts, Outbound, Principal};
use crate::protocol::envelope::{self, Envelope, KEY_SERVER_INFO, META};
use crate::protocol::{ClientCapabilities, ErrorObject, Implementation, ProtocolVersion, RequestId, codes};
use crate::result::CallToolResult;
use crate::tool::{Tool, ToolCall, ToolDefinition};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
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
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_frame_bytes: 4 * 1024 * 1024,
            max_in_flight: 64,
            list_ttl_ms: 0,
            list_cache_scope: CacheScope::Public,
        }
    }
}

struct Entry {
    tool: Arc<dyn Tool>,
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
        self.entries.push(Entry { tool: Arc::new(tool) });
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
    client_info: Option<Implementation>,
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
    pub(crate) name: String,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Implementation>,
    pub(crate) progress_token: Option<Value>,
}

impl PendingCall {
    /// Runs the call to completion, turning a panic into an `isError` result.
    pub(crate) async fn run(
        self,
        server: &Server,
        id: RequestId,
        outbound: Outbound,
        cancel: CancellationToken,
        principal: Option<Principal>,
    ) -> Value {
        use futures_util::FutureExt;
        let context = Context::new(ContextParts {
            request_id: id,
            version: self.version,
            capabilities: self.capabilities,
            client_info: self.client_info,
            principal,
            progress_token: self.progress_token,
            outbound,
            cancel,
        });
        let fut = self.tool.call(ToolCall::new(self.arguments, context));
        let result = match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
            Ok(r) => r,
            Err(payload) => {
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a non-string payload".into());
                tracing::error!(tool = %self.name, panic = %what, "tool panicked");
                CallToolResult::error(format!("tool `{}` failed: internal error", self.name))
            }
        };
        let value = match serde_json::to_value(&result) {
            Ok(Value::Object(m)) => m,
            _ => match serde_json::to_value(CallToolResult::error("could not serialize the tool's result")) {
                Ok(Value::Object(m)) => m,
                _ => Map::new(),
            },
        };
        server.stamp(value, self.version)
    }
}

impl Server {
    /// Adds what every 2026-07-28 result carries; handshake-era results pass unchanged.
    pub(crate) fn stamp(&self, mut result: Map<String, Value>, version: ProtocolVersion) -> Value {
        if version.era() == crate::Era::Stateless {
            result.insert("resultType".into(), "complete".into());
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
        client_info: Option<Implementation>,
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
        Step::Call(PendingCall {
            tool: self.entries[i].tool.clone(),
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

    fn stateless(server: &Server, method: &str, params: Option<Map<String, Value>>) -> Step {
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
        } = match envelope::validate(params.as_ref()) {
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
                let client_info = p.get("clientInfo").and_then(|v| serde_json::from_value(v.clone()).ok());
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
