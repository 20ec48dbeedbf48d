//! Streamable HTTP, both protocol eras on one endpoint (hyper 1.x).
//!
//! - 2026-07-28: every POST is served statelessly. Headers are checked against the body
//!   (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`); questions travel as
//!   `InputRequiredResult`, so any replica sharing the state key can serve any round.
//! - 2025-06-18 / 2025-11-25: `initialize` opens a session (`Mcp-Session-Id`). A call that asks
//!   the user answers its POST with an SSE stream carrying the `elicitation/create` request; the
//!   client's answer comes as a separate POST, answered 202. `DELETE` ends the session.

use crate::context::{Outbound, Peer, Principal};
use crate::protocol::envelope;
use crate::protocol::jsonrpc::{self, Inbound, encode_response};
use crate::protocol::{ErrorObject, RequestId, codes};
use crate::server::{Server, Session, Step};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

type Body = BoxBody<Bytes, Infallible>;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";

/// Settings of the HTTP transport.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use mcp_resolve_runtime::{HttpOptions, Server};
/// let options = HttpOptions::default().path("/mcp").allow_host("notes.example.com");
/// Server::new("notes").serve_http("127.0.0.1:8000".parse().unwrap(), options).await
/// # }
/// ```
#[derive(Clone)]
pub struct HttpOptions {
    verifier: Option<Arc<dyn super::auth::TokenVerifier>>,
    path: String,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    max_body_bytes: usize,
    session_idle: Duration,
    max_sessions: usize,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("path", &self.path)
            .field("bearer", &self.verifier.is_some())
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish_non_exhaustive()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            verifier: None,
            path: "/mcp".into(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            session_idle: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
        }
    }
}

impl HttpOptions {
    /// Requires `Authorization: Bearer <token>` on every request, checked by `verifier`; a
    /// missing or refused token gets 401 with `WWW-Authenticate`. The principal it yields is seen
    /// by tools and resolvers and bound into `requestState`.
    pub fn bearer(mut self, verifier: impl super::auth::TokenVerifier) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }
    /// The endpoint's path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }
    /// Accepts this `Host` (name, or name:port) besides the loopback names.
    ///
    /// `Host` and `Origin` are checked (403 otherwise) on a loopback bind — the DNS-rebinding
    /// defence — and on any bind once an allow-list is given. A server bound to a public address
    /// with no allow-list accepts any `Host`.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into().to_ascii_lowercase());
        self
    }
    /// Accepts this `Origin` (e.g. `https://app.example.com`) besides loopback origins.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into().to_ascii_lowercase());
        self
    }
    /// The largest request body accepted (default 4 MiB); larger ones get 413.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }
    /// How long an idle handshake-era session lives (default 30 min).
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }
    /// How many handshake-era sessions may be open at once (default 10 000); beyond it
    /// `initialize` gets 503.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }
}

struct LegacySession {
    /// Who opened it; only they may use it.
    principal: Option<Principal>,
    session: Mutex<Session>,
    peer: Peer,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    last_seen: Mutex<Instant>,
}

struct State {
    /// Whether `Host`/`Origin` are checked: on a loopback bind, or when an allow-list is given.
    check_hosts: bool,
    server: Arc<Server>,
    options: HttpOptions,
    sessions: Mutex<HashMap<String, Arc<LegacySession>>>,
    /// Where undeliverable frames go (a session's own peer outbound is never read).
    sink: Outbound,
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = status;
    r
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// The HTTP status of a JSON-RPC error on this transport.
fn status_of(e: &ErrorObject) -> StatusCode {
    match e.code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::PARSE_ERROR
        | codes::INVALID_REQUEST
        | codes::INVALID_PARAMS
        | codes::HEADER_MISMATCH
        | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        | codes::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn error_response(id: Option<&RequestId>, e: &ErrorObject) -> Response<Body> {
    json_response(status_of(e), trim(encode_response(id, Err(e))))
}

fn trim(mut frame: Vec<u8>) -> Vec<u8> {
    if frame.last() == Some(&b'\n') {
        frame.pop();
    }
    frame
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

fn is_loopback_name(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "::1")
}

/// `host[:port]` → host.
fn host_part(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().map_or(authority, |h| &authority[..h.len() + 2]);
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

impl State {
    /// DNS-rebinding defence: `Host` and `Origin` must name this server.
    fn allowed(&self, headers: &HeaderMap) -> bool {
        if !self.check_hosts {
            return true;
        }
        let host_ok = match header_str(headers, "host") {
            None => false,
            Some(h) => {
                let h = h.to_ascii_lowercase();
                is_loopback_name(host_part(&h))
                    || self
                        .options
                        .allowed_hosts
                        .iter()
                        .any(|a| *a == h || *a == host_part(&h))
            }
        };
        let origin_ok = match header_str(headers, "origin") {
            None => true,
            Some(o) => {
                let o = o.to_ascii_lowercase();
                let authority = o.split_once("://").map_or("", |(_, rest)| rest);
                is_loopback_name(host_part(authority)) || self.options.allowed_origins.contains(&o)
            }
        };
        host_ok && origin_ok
    }

    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        if req.uri().path() != self.options.path {
            return empty(StatusCode::NOT_FOUND);
        }
        if !self.allowed(req.headers()) {
            tracing::warn!(host = ?req.headers().get("host"), origin = ?req.headers().get("origin"), "request refused: Host or Origin not allowed");
            return error_response(
                None,
                &ErrorObject::invalid_request("Forbidden: Host or Origin not allowed"),
            )
            .with_status(StatusCode::FORBIDDEN);
        }
        let session_id = header_str(req.headers(), SESSION_HEADER).map(str::to_owned);
        let principal = match &self.options.verifier {
            None => None,
            Some(verifier) => {
                let token = header_str(req.headers(), "authorization").and_then(|a| {
                    a.strip_prefix("Bearer ")
                        .or_else(|| a.strip_prefix("bearer "))
                        .map(str::trim)
                });
                let verified = match token {
                    Some(t) => verifier.verify(t).await,
                    None => Err(super::auth::AuthError::new("no bearer token")),
                };
                match verified {
                    Ok(p) => Some(p),
                    Err(e) => {
                        tracing::info!(reason = %e, "request refused: bearer token");
                        let mut r = error_response(
                            None,
                            &ErrorObject::invalid_request("Unauthorized: a valid bearer token is required"),
                        )
                        .with_status(StatusCode::UNAUTHORIZED);
                        let challenge = if token.is_some() {
                            r#"Bearer realm="mcp", error="invalid_token""#
                        } else {
                            r#"Bearer realm="mcp""#
                        };
                        r.headers_mut()
                            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
                        return r;
                    }
                }
            }
        };
        match *req.method() {
            Method::POST => {}
            Method::DELETE if session_id.is_some() => {
                let removed = self
                    .sessions
                    .lock()
                    .ok()
                    .and_then(|mut s| s.remove(session_id.as_deref().unwrap_or("")));
                return match removed {
                    Some(s) => {
                        s.peer.close();
                        empty(StatusCode::OK)
                    }
                    None => empty(StatusCode::NOT_FOUND),
                };
            }
            _ => {
                let mut r = empty(StatusCode::METHOD_NOT_ALLOWED);
                r.headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
                return r;
            }
        }
        let json_type = header_str(req.headers(), "content-type")
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"));
        if !json_type {
            return error_response(
                None,
                &ErrorObject::invalid_request("Invalid Request: Content-Type must be application/json"),
            )
            .with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE);
        }
        let (parts, body) = req.into_parts();
        let bytes = match Limited::new(body, self.options.max_body_bytes).collect().await {
            Ok(c) => c.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return error_response(
                    None,
                    &ErrorObject::invalid_request(format!(
                        "Invalid Request: body exceeds the limit of {} bytes",
                        self.options.max_body_bytes
                    )),
                )
                .with_status(StatusCode::PAYLOAD_TOO_LARGE);
            }
            Err(_) => return empty(StatusCode::BAD_REQUEST),
        };
        let inbound = jsonrpc::classify(&bytes);
        if let Inbound::Invalid { id, error } = &inbound {
            return json_response(StatusCode::BAD_REQUEST, trim(encode_response(id.as_ref(), Err(error))));
        }
        if let Some(id) = session_id {
            return self.legacy(&id, inbound, principal).await;
        }
        // `initialize` opens a handshake-era session, unless it comes dressed as 2026-07-28
        // traffic: on that wire the method is removed (404 below).
        if let Inbound::Request { method, params, .. } = &inbound
            && method == "initialize"
            && !envelope::has_envelope(params.as_ref())
            && header_str(&parts.headers, VERSION_HEADER)
                .and_then(crate::ProtocolVersion::parse)
                .is_none_or(|v| v.era() == crate::Era::Handshake)
        {
            return self.initialize(inbound, principal);
        }
        self.stateless(&parts.headers, inbound, principal).await
    }

    async fn stateless(&self, headers: &HeaderMap, inbound: Inbound, principal: Option<Principal>) -> Response<Body> {
        let (id, method, params) = match inbound {
            Inbound::Request { id, method, params } => (id, method, params),
            // Notifications need no answer; cancellation is closing the stream on this era.
            Inbound::Notification { .. } => return empty(StatusCode::ACCEPTED),
            Inbound::Response { id, .. } => {
                return error_response(
                    Some(&id),
                    &ErrorObject::invalid_request("Invalid Request: a 2026-07-28 client sends no responses"),
                );
            }
            Inbound::Invalid { .. } => return empty(StatusCode::BAD_REQUEST),
        };
        let header_version = header_str(headers, VERSION_HEADER);
        let legacy_header = header_version
            .and_then(crate::ProtocolVersion::parse)
            .is_some_and(|v| v.era() == crate::Era::Handshake);
        if legacy_header && !envelope::has_envelope(params.as_ref()) {
            return error_response(
                Some(&id),
                &ErrorObject::invalid_request(
                    "Bad Request: no valid session; a handshake-era client starts with `initialize`",
                ),
            );
        }
        let Some(header_version) = header_version else {
            return error_response(
                Some(&id),
                &ErrorObject::new(
                    codes::HEADER_MISMATCH,
                    "Header mismatch: the MCP-Protocol-Version header is required",
                ),
            );
        };
        if let Err(e) = envelope::validate(params.as_ref())
            && e.code == codes::INVALID_PARAMS
        {
            return error_response(Some(&id), &e);
        }
        if envelope::meta_version(params.as_ref()) != Some(header_version) {
            return error_response(
                Some(&id),
                &ErrorObject::new(
                    codes::HEADER_MISMATCH,
                    "Header mismatch: MCP-Protocol-Version does not match params._meta",
                ),
            );
        }
        let problem = match header_str(headers, METHOD_HEADER) {
            Some(m) if m == method => None,
            Some(_) => Some("Header mismatch: Mcp-Method does not match the body"),
            None => Some("Header mismatch: the Mcp-Method header is required"),
        };
        if let Some(message) = problem {
            return error_response(Some(&id), &ErrorObject::new(codes::HEADER_MISMATCH, message));
        }
        let name = params.as_ref().and_then(|p| match method.as_str() {
            "tools/call" | "prompts/get" => p.get("name").and_then(Value::as_str),
            "resources/read" => p.get("uri").and_then(Value::as_str),
            _ => None,
        });
        if let Some(name) = name {
            let problem = match header_str(headers, NAME_HEADER) {
                Some(h) if h == name => None,
                Some(_) => Some("Header mismatch: Mcp-Name does not match the body"),
                None => Some("Header mismatch: the Mcp-Name header is required"),
            };
            if let Some(message) = problem {
                return error_response(Some(&id), &ErrorObject::new(codes::HEADER_MISMATCH, message));
            }
        }
        if method == "initialize" {
            return error_response(Some(&id), &ErrorObject::method_not_found(&method));
        }
        let mut session = Session::new();
        match session.on_request(&self.server, &method, params) {
            Step::Reply(Ok(v)) => json_response(StatusCode::OK, trim(encode_response(Some(&id), Ok(&v)))),
            Step::Reply(Err(e)) => error_response(Some(&id), &e),
            Step::Call(call) => {
                let wants_progress = call.progress_token.is_some();
                let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
                let outbound = Outbound { tx };
                let server = self.server.clone();
                let cancel = CancellationToken::new();
                let run = {
                    let cancel = cancel.clone();
                    let outbound = outbound.clone();
                    let id = id.clone();
                    async move {
                        (
                            call.run(&server, id.clone(), outbound, None, cancel, principal).await,
                            id,
                        )
                    }
                };
                if !wants_progress {
                    drop(rx);
                    // Dropping this future (the client went away) drops the call: cancellation.
                    return match run.await {
                        (Ok(v), id) => json_response(StatusCode::OK, trim(encode_response(Some(&id), Ok(&v)))),
                        (Err(e), id) => error_response(Some(&id), &e),
                    };
                }
                sse_response(
                    rx,
                    outbound,
                    async move {
                        let (r, id) = run.await;
                        Ok((id, r))
                    },
                    cancel,
                )
            }
        }
    }

    fn initialize(&self, inbound: Inbound, principal: Option<Principal>) -> Response<Body> {
        let Inbound::Request { id, method, params } = inbound else {
            return empty(StatusCode::BAD_REQUEST);
        };
        let live = self.sweep();
        if live >= self.options.max_sessions {
            return empty(StatusCode::SERVICE_UNAVAILABLE);
        }
        let mut session = Session::new();
        let reply = match session.on_request(&self.server, &method, params) {
            Step::Reply(r) => r,
            Step::Call(_) => Err(ErrorObject::internal("initialize is not a call")),
        };
        let v = match reply {
            Ok(v) => v,
            Err(e) => return error_response(Some(&id), &e),
        };
        let session_id = new_session_id();
        let legacy = Arc::new(LegacySession {
            principal,
            session: Mutex::new(session),
            peer: Peer::new(self.sink.clone()),
            in_flight: Mutex::new(HashMap::new()),
            last_seen: Mutex::new(Instant::now()),
        });
        if let Ok(mut s) = self.sessions.lock() {
            s.insert(session_id.clone(), legacy);
        }
        let mut r = json_response(StatusCode::OK, trim(encode_response(Some(&id), Ok(&v))));
        if let Ok(h) = HeaderValue::from_str(&session_id) {
            r.headers_mut().insert(SESSION_HEADER, h);
        }
        r
    }

    /// Drops idle sessions (their open questions fail at once); returns how many remain.
    fn sweep(&self) -> usize {
        let Ok(mut sessions) = self.sessions.lock() else {
            return 0;
        };
        let idle = self.options.session_idle;
        sessions.retain(|_, s| {
            let alive = s.last_seen.lock().map(|t| t.elapsed() < idle).unwrap_or(false);
            if !alive {
                s.peer.close();
            }
            alive
        });
        sessions.len()
    }

    async fn legacy(&self, session_id: &str, inbound: Inbound, principal: Option<Principal>) -> Response<Body> {
        // Only this session's age matters here; `initialize` sweeps the rest.
        let idle = self.options.session_idle;
        let found = self.sessions.lock().ok().and_then(|mut s| {
            let expired = s
                .get(session_id)?
                .last_seen
                .lock()
                .map(|t| t.elapsed() >= idle)
                .unwrap_or(true);
            if expired {
                if let Some(gone) = s.remove(session_id) {
                    gone.peer.close();
                }
                return None;
            }
            s.get(session_id).cloned()
        });
        // Another principal's session is as unknown as a missing one.
        let Some(legacy) = found.filter(|l| l.principal == principal) else {
            return error_response(None, &ErrorObject::invalid_request("Not Found: no such session"))
                .with_status(StatusCode::NOT_FOUND);
        };
        if let Ok(mut t) = legacy.last_seen.lock() {
            *t = Instant::now();
        }
        match inbound {
            Inbound::Response { id, outcome } => {
                legacy.peer.deliver(&id, outcome);
                empty(StatusCode::ACCEPTED)
            }
            Inbound::Notification { method, params } => {
                if method == "notifications/cancelled"
                    && let Some(id) = params
                        .as_ref()
                        .and_then(|p| p.get("requestId"))
                        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok())
                    && let Some(token) = legacy.in_flight.lock().ok().and_then(|m| m.get(&id).cloned())
                {
                    token.cancel();
                }
                empty(StatusCode::ACCEPTED)
            }
            Inbound::Invalid { id, error } => error_response(id.as_ref(), &error),
            Inbound::Request { id, method, params } => {
                let step = match legacy.session.lock() {
                    Ok(mut s) => s.on_request(&self.server, &method, params),
                    Err(_) => Step::Reply(Err(ErrorObject::internal("session state unavailable"))),
                };
                match step {
                    Step::Reply(Ok(v)) => json_response(StatusCode::OK, trim(encode_response(Some(&id), Ok(&v)))),
                    Step::Reply(Err(e)) => {
                        // On the handshake era an error is an ordinary response.
                        json_response(StatusCode::OK, trim(encode_response(Some(&id), Err(&e))))
                    }
                    Step::Call(call) => {
                        let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
                        let outbound = Outbound { tx };
                        let peer = Peer::sharing(&legacy.peer, outbound.clone());
                        let cancel = CancellationToken::new();
                        if let Ok(mut m) = legacy.in_flight.lock() {
                            m.insert(id.clone(), cancel.clone());
                        }
                        let server = self.server.clone();
                        let run = {
                            let cancel = cancel.clone();
                            let outbound = outbound.clone();
                            let legacy = legacy.clone();
                            async move {
                                let r = call
                                    .run(&server, id.clone(), outbound, Some(peer), cancel, principal)
                                    .await;
                                if let Ok(mut m) = legacy.in_flight.lock() {
                                    m.remove(&id);
                                }
                                // On this era a call's JSON-RPC error is its response.
                                Ok::<_, ErrorObject>((id, r))
                            }
                        };
                        sse_response(rx, outbound, run, cancel)
                    }
                }
            }
        }
    }
}

/// Streams the call's notifications and requests as SSE events, then its response. The call runs
/// in its own task; when the client drops the stream, the call is cancelled.
fn sse_response<F>(rx: mpsc::Receiver<Vec<u8>>, outbound: Outbound, run: F, cancel: CancellationToken) -> Response<Body>
where
    F: std::future::Future<Output = Result<(RequestId, Result<Value, ErrorObject>), ErrorObject>> + Send + 'static,
{
    let token = cancel.clone();
    tokio::spawn(async move {
        let outcome = tokio::select! {
            biased;
            () = token.cancelled() => None,
            o = run => Some(o),
        };
        let frame = match outcome {
            Some(Ok((id, Ok(v)))) => encode_response(Some(&id), Ok(&v)),
            Some(Ok((id, Err(e)))) => encode_response(Some(&id), Err(&e)),
            Some(Err(e)) => encode_response(None, Err(&e)),
            None => return,
        };
        outbound.send(frame).await;
    });
    struct Guard(CancellationToken);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.cancel();
        }
    }
    let stream = futures_util::stream::unfold((rx, Guard(cancel)), |(mut rx, guard)| async move {
        let frame = rx.recv().await?;
        let is_response = serde_json::from_slice::<Map<String, Value>>(&frame)
            .map(|m| m.get("method").is_none())
            .unwrap_or(true);
        let mut event = b"event: message\ndata: ".to_vec();
        event.extend_from_slice(&trim(frame));
        event.extend_from_slice(b"\n\n");
        let item = Ok::<_, Infallible>(Frame::data(Bytes::from(event)));
        if is_response {
            // The response ends the stream: drop the receiver so the next poll ends it.
            let (_tx, closed) = mpsc::channel(1);
            return Some((item, (closed, guard)));
        }
        Some((item, (rx, guard)))
    });
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

fn new_session_id() -> String {
    let mut raw = [0u8; 16];
    if getrandom::fill(&mut raw).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        raw = t.to_le_bytes();
    }
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

trait WithStatus {
    fn with_status(self, status: StatusCode) -> Self;
}

impl WithStatus for Response<Body> {
    fn with_status(mut self, status: StatusCode) -> Self {
        *self.status_mut() = status;
        self
    }
}

impl Server {
    /// Serves Streamable HTTP on `addr` until the task is dropped, both eras on one endpoint.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use mcp_resolve_runtime::{HttpOptions, Server};
    /// Server::new("notes").serve_http("127.0.0.1:8000".parse().unwrap(), HttpOptions::default()).await
    /// # }
    /// ```
    pub async fn serve_http(self, addr: SocketAddr, options: HttpOptions) -> std::io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_http_on(listener, options).await
    }

    /// Serves Streamable HTTP on a bound listener (e.g. port 0 in tests).
    pub async fn serve_http_on(self, listener: TcpListener, options: HttpOptions) -> std::io::Result<()> {
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(16);
        // Frames for no stream in particular are dropped.
        tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let loopback = listener.local_addr().map(|a| a.ip().is_loopback()).unwrap_or(true);
        let check_hosts = loopback || !options.allowed_hosts.is_empty() || !options.allowed_origins.is_empty();
        let state = Arc::new(State {
            check_hosts,
            server: Arc::new(self),
            options,
            sessions: Mutex::new(HashMap::new()),
            sink: Outbound { tx },
        });
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let state = state.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(state.handle(req).await) }
                });
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!(%peer, error = %e, "connection ended");
                }
            });
        }
    }
}
