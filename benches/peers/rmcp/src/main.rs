//! Benchmark peer: a small MCP server built on the official Rust SDK (`rmcp`).
//!
//! Usage:
//!   rmcp-peer                                  stdio (tokio stdin/stdout)
//!   rmcp-peer --pipes                          stdio via rmcp's non-blocking FIFO transport
//!   rmcp-peer --http 127.0.0.1:PORT            Streamable HTTP on `/mcp` (stateless, JSON)
//!   rmcp-peer --http 127.0.0.1:PORT --sessions Streamable HTTP on `/mcp` with sessions and SSE
//!
//! rmcp's best configuration over HTTP depends on the era, and the benchmark uses each for its
//! era. On 2026-07-28 it is the stateless mode (`NeverSessionManager`, JSON responses): that era
//! has no sessions, and `ask_name_mrtr` asks with an `InputRequiredResult` in a plain response.
//! On the handshake era (2025-11-25) it is `--sessions`: `peer.elicit` has to reach the client on
//! the SSE stream of the call's POST and take the answer from a POST of the same session, which
//! the stateless mode cannot do, so `initialize` opens a session (`LocalSessionManager`, the
//! `Mcp-Session-Id` header, DELETE ends it). Both leave out the SSE keep-alive pings and the
//! priming events (`retry`), which cost a call something and which a client on loopback does not
//! need; 2026-07-28 requests to the `--sessions` server are still served statelessly, as rmcp
//! serves that era whatever the mode.
//!
//! A last `--current-thread` runs it on tokio's current-thread runtime instead of the
//! multi-thread one `#[tokio::main]` gives: for one stdio client, it saves the hops between
//! worker threads.
//!
//! Tools: `echo`, `add`, `ask_name` (legacy elicitation round trip via
//! `peer.elicit`) and `ask_name_mrtr` (2026-07-28 multi round-trip request).

use std::{net::SocketAddr, sync::Arc};

use rmcp::{
    ErrorData, Peer, RoleServer, ServerHandler, ServiceExt,
    handler::server::{
        router::tool::ToolRouter,
        tool::{InputResponses, RequestState},
        wrapper::Parameters,
    },
    model::{
        CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams, ElicitResult,
        ElicitationAction, InputRequest, InputRequests, InputRequiredResult, ServerCapabilities, ServerConfig,
    },
    service::{ElicitationError, ServerInitializeError},
    tool, tool_handler, tool_router,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
        session::{SessionManager, local::LocalSessionManager, never::NeverSessionManager},
    },
};
use schemars::JsonSchema;
use serde::Deserialize;

const NAME_KEY: &str = "name";
const NAME_PROMPT: &str = "What is your name?";
const MRTR_STATE: &str = "ask_name:1";

#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct UserInfo {
    name: String,
}
rmcp::elicit_safe!(UserInfo);

/// The server. The tool router is built once and shared (HTTP creates a
/// handler instance per request; cloning only bumps the `Arc`).
#[derive(Clone)]
struct Peerless {
    tool_router: Arc<ToolRouter<Self>>,
}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s.into())])
}

fn name_request() -> InputRequest {
    let schema = serde_json::from_value(serde_json::json!({
        "type": "object",
        "properties": { "name": { "type": "string" } },
        "required": ["name"],
    }))
    .expect("static elicitation schema is valid");
    InputRequest::Elicitation(ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: NAME_PROMPT.into(),
        requested_schema: schema,
    }))
}

#[tool_router]
impl Peerless {
    fn new() -> Self {
        Self {
            tool_router: Arc::new(Self::tool_router()),
        }
    }

    #[tool(description = "Echo the given text back")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> CallToolResult {
        text(args.text)
    }

    #[tool(description = "Add two integers")]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> CallToolResult {
        text(args.a.wrapping_add(args.b).to_string())
    }

    #[tool(description = "Ask the user for their name (server-initiated elicitation)")]
    async fn ask_name(&self, peer: Peer<RoleServer>) -> Result<CallToolResult, ErrorData> {
        match peer.elicit::<UserInfo>(NAME_PROMPT).await {
            Ok(Some(user)) => Ok(text(format!("hello {}", user.name))),
            Ok(None) => Err(ErrorData::invalid_params("no content", None)),
            Err(ElicitationError::UserDeclined) => Ok(text("declined")),
            Err(ElicitationError::UserCancelled) => Ok(text("cancelled")),
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }

    #[tool(description = "Ask the user for their name (multi round-trip request)")]
    async fn ask_name_mrtr(
        &self,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let answer = responses.as_ref().and_then(|r| r.get(NAME_KEY));
        let Some(answer) = answer else {
            let mut requests = InputRequests::new();
            requests.insert(NAME_KEY.to_owned(), name_request());
            return Ok(InputRequiredResult::new(Some(requests), Some(MRTR_STATE.into())).into());
        };
        if state.as_deref() != Some(MRTR_STATE) {
            return Err(ErrorData::invalid_params("unknown requestState", None));
        }
        let result = ElicitResult::deserialize(answer)
            .map_err(|e| ErrorData::invalid_params(format!("bad elicitation result: {e}"), None))?;
        let reply = match result.action {
            ElicitationAction::Accept => {
                let name = result
                    .content
                    .as_ref()
                    .and_then(|c| c.get("name"))
                    .and_then(|n| n.as_str())
                    .ok_or_else(|| ErrorData::invalid_params("accept without name", None))?;
                format!("hello {name}")
            }
            ElicitationAction::Decline => "declined".to_owned(),
            ElicitationAction::Cancel => "cancelled".to_owned(),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unsupported elicitation action {other:?}"),
                    None,
                ));
            }
        };
        Ok(text(reply).into())
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Peerless {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn usage() -> ! {
    eprintln!("usage: rmcp-peer [--pipes | --http HOST:PORT [--sessions]] [--current-thread]");
    std::process::exit(2);
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn serve_stdio(pipes: bool) -> Result<(), BoxError> {
    let server = Peerless::new();
    let started = if pipes {
        server.serve(rmcp::transport::stdio_pipes()).await
    } else {
        server.serve(rmcp::transport::stdio()).await
    };
    match started {
        Ok(running) => {
            running.waiting().await?;
            Ok(())
        }
        // stdin closed before the first message: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

async fn serve_http(addr: SocketAddr, sessions: bool) -> Result<(), BoxError> {
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_sse_retry(None)
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1"]);
    if sessions {
        let mut manager = LocalSessionManager::default();
        // No priming event at the head of each call's stream either.
        manager.session_config.sse_retry = None;
        serve_http_with(addr, config.with_legacy_session_mode(true), manager).await
    } else {
        serve_http_with(
            addr,
            config.with_legacy_session_mode(false),
            NeverSessionManager::default(),
        )
        .await
    }
}

async fn serve_http_with<M: SessionManager>(
    addr: SocketAddr,
    config: StreamableHttpServerConfig,
    sessions: M,
) -> Result<(), BoxError> {
    use hyper_util::{rt::TokioIo, service::TowerToHyperService};

    let proto = Peerless::new();
    let mcp = StreamableHttpService::new(move || Ok(proto.clone()), Arc::new(sessions), config);

    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(_) => continue,
        };
        let _ = stream.set_nodelay(true);
        let mcp = TowerToHyperService::new(mcp.clone());
        tokio::spawn(async move {
            // Only `/mcp` is served; everything else is a 404.
            let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let call = (req.uri().path() == "/mcp").then(|| hyper::service::Service::call(&mcp, req));
                async move {
                    match call {
                        Some(call) => call.await,
                        None => Ok(not_found()),
                    }
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

type HttpBody = http_body_util::combinators::BoxBody<hyper::body::Bytes, std::convert::Infallible>;

fn not_found() -> hyper::Response<HttpBody> {
    use http_body_util::BodyExt;
    let mut resp = hyper::Response::new(http_body_util::Empty::new().boxed());
    *resp.status_mut() = hyper::StatusCode::NOT_FOUND;
    resp
}

fn main() -> Result<(), BoxError> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let current_thread = args.last().is_some_and(|a| a == "--current-thread");
    if current_thread {
        args.pop();
    }
    let mut args = args.into_iter();
    let mode = args.next();
    let rt = if current_thread {
        tokio::runtime::Builder::new_current_thread().enable_all().build()?
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()?
    };
    match mode.as_deref() {
        None => rt.block_on(serve_stdio(false)),
        Some("--pipes") => rt.block_on(serve_stdio(true)),
        Some("--http") => {
            let addr: SocketAddr = args.next().unwrap_or_else(|| usage()).parse()?;
            let sessions = match args.next().as_deref() {
                None => false,
                Some("--sessions") => true,
                Some(_) => usage(),
            };
            rt.block_on(serve_http(addr, sessions))
        }
        Some(_) => usage(),
    }
}
