//! Streamable HTTP, both protocol eras on one endpoint (hyper 1.x).
//!
//! The path of a POST: [`guard`] (`Host`/`Origin`, bearer token), the body read within its limit,
//! one parse, then [`stateless`] (2026-07-28: headers checked against the body, a fresh session
//! per request) or [`handshake`] (2025-era sessions from [`sessions`]); replies are JSON bodies
//! or [`sse`] streams. Both hand messages to the same dispatcher as stdio does. A GET naming a
//! session passes the same guard, then opens that session's [`sse`] stream of notifications
//! ([`handshake`]); `DELETE` ends a session.
//!
//! (Over 500 lines on purpose: the listener, its bounds and the routing of a request are one
//! piece; what each route does is in the modules below.)

mod bearer_env;
mod guard;
mod handshake;
mod metadata;
mod mirror;
mod options;
mod replay;
mod service;
mod sessions;
mod sse;
mod stateless;

pub use options::{HttpOptions, ResumeOptions};
pub use service::{ClientAddr, HttpService, ResponseBody};

/// A request body this transport reads: hyper's own, or any other `http-body` body (an axum
/// application's, through [`HttpService`]).
pub(crate) trait HttpBody: hyper::body::Body<Data: Send, Error: Send> + Send + 'static {}
impl<B: hyper::body::Body<Data: Send, Error: Send> + Send + 'static> HttpBody for B {}

use crate::budget::{Budget, Hold};
use crate::dispatch::Dispatcher;
use crate::peer::Outbound;
use crate::protocol::inbound::{Inbound, classify};
use crate::protocol::jsonrpc::Outgoing;
use crate::protocol::{ErrorObject, RequestId, codes};
use crate::server::Server;
use crate::server::rate::CallerKey;
use crate::telemetry::Open;
use crate::throttle::Throttle;
use bytes::Buf as _;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use sessions::Sessions;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

type Body = BoxBody<Bytes, Infallible>;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

/// What every request of one listener shares.
struct State {
    /// The `Host` values served besides loopback names (each `name` or `name:port`): the allowed
    /// hosts and the configured resource's.
    hosts: Vec<String>,
    server: Arc<Server>,
    options: HttpOptions,
    /// 2026-07-28 traffic: nothing registered, ids are each client's own.
    stateless: Dispatcher,
    sessions: Sessions,
    /// Bytes of request bodies being read or handled.
    buffered: Budget,
    /// Bytes of events every session keeps for resumption ([`ResumeOptions::max_total_bytes`]).
    kept: Arc<replay::Kept>,
    /// Where frames for no stream in particular go (a session's own peer outbound is never read).
    sink: Outbound,
    /// The metadata's `scopes_supported`: the configured ones, then every tool's, prompt's and
    /// resource's, once each.
    scopes_supported: Vec<String>,
    /// The metadata's `authorization_servers`: the configured ones, else the verifier's issuer.
    authorization_servers: Vec<String>,
    /// Whether the MCP endpoint (and its metadata document) is served: not when the pages ride
    /// beside a stdio server ([`Server::serve_stdio_with_pages`]).
    mcp: bool,
    /// Shutting down ([`Server::serve_http_until`]): connections finish what they serve and close.
    stopping: tokio_util::sync::CancellationToken,
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = status;
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

/// A message as a JSON body. Errors get their HTTP status when `error_status` (2026-07-28 and
/// requests outside a session); inside a handshake-era session an error is an ordinary 200.
fn message_response(message: Outgoing, error_status: bool) -> Response<Body> {
    let status = match &message {
        Outgoing::Response { outcome: Err(e), .. } if error_status => status_of(e),
        _ => StatusCode::OK,
    };
    let mut r = Response::new(full(message.encode()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn error_response(id: Option<RequestId>, e: ErrorObject) -> Response<Body> {
    message_response(Outgoing::error(id, e), true)
}

/// 429 with `Retry-After` (whole seconds, rounded up): a caller over its rate
/// ([`Server::call_rate_limit`]); nothing of the call ran.
fn too_many(id: RequestId, e: ErrorObject, wait: Duration) -> Response<Body> {
    let mut r = error_response(Some(id), e).with_status(StatusCode::TOO_MANY_REQUESTS);
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    if let Ok(v) = HeaderValue::from_str(&secs.max(1).to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// The W3C trace context of the request's `traceparent` and `tracestate` headers, when well
/// formed (a request's own in `params._meta` comes first: `Dispatcher::dispatch`).
fn carried_trace(headers: &HeaderMap) -> Option<crate::telemetry::TraceContext> {
    let parent = header_str(headers, "traceparent")?;
    crate::telemetry::TraceContext::parse(parent, header_str(headers, "tracestate"))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

trait WithStatus {
    fn with_status(self, status: StatusCode) -> Self;
    /// Asks hyper to close the connection after this response (the rest of a body is not read).
    fn closing(self) -> Self;
}

impl WithStatus for Response<Body> {
    fn with_status(mut self, status: StatusCode) -> Self {
        *self.status_mut() = status;
        self
    }
    fn closing(mut self) -> Self {
        self.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        self
    }
}

/// What a request's `MCP-Protocol-Version` header names, read once per request: every era
/// decision HTTP takes from that header (a 2026-07-28 request has no session and no GET stream;
/// `initialize` opens a session unless the header names 2026-07-28; a session's request must not
/// name another era) asks this value. The header's text, for an error message, is read where the
/// message is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SentVersion {
    /// No header (older clients, and a client before `initialize`).
    Absent,
    /// A version this server knows.
    Known(crate::protocol::ProtocolVersion),
    /// A header naming no version this server knows.
    Unknown,
}

impl SentVersion {
    pub(super) fn of(headers: &HeaderMap) -> Self {
        match header_str(headers, VERSION_HEADER) {
            None => Self::Absent,
            Some(sent) => crate::protocol::ProtocolVersion::parse(sent).map_or(Self::Unknown, Self::Known),
        }
    }

    /// Names a version of `era`.
    pub(super) fn names(self, era: crate::protocol::Era) -> bool {
        matches!(self, Self::Known(v) if v.era() == era)
    }
}

/// Whether a sessionless message opens a handshake-era session: `initialize`, unless it comes
/// dressed as 2026-07-28 traffic (on that wire the method is removed: 404).
fn opens_session(sent: SentVersion, inbound: &Inbound<'_>) -> bool {
    let Inbound::Request { method, params, .. } = inbound else {
        return false;
    };
    method == "initialize"
        && params.meta.check().is_ok()
        && !params.meta.has_envelope()
        && !sent.names(crate::protocol::Era::Stateless)
}

impl State {
    /// The state of one listener.
    fn new(server: Arc<Server>, options: HttpOptions, mcp: bool) -> Arc<Self> {
        let (tx, mut rx) = mpsc::channel::<Outgoing>(16);
        // Messages for no stream in particular are dropped.
        tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let mut scopes_supported = options.scopes_supported.clone();
        let required = (server.tools().iter().flat_map(|t| &t.scopes))
            .chain(server.prompts().into_iter().flat_map(|p| &p.scopes))
            .chain(server.resources().into_iter().flat_map(|r| &r.scopes));
        for scope in required {
            if !scopes_supported.contains(scope) {
                scopes_supported.push(scope.clone());
            }
        }
        let mut authorization_servers = options.authorization_servers.clone();
        if authorization_servers.is_empty()
            && let Some(issuer) = options.verifier.as_ref().and_then(|v| v.authorization_server())
        {
            authorization_servers.push(issuer.to_owned());
        }
        let mut hosts = options.allowed_hosts.clone();
        if let Some(authority) = options
            .resource
            .as_deref()
            .and_then(crate::authority::parse_url)
            .map(|(_, a, _)| a)
        {
            hosts.push(authority.as_str().to_ascii_lowercase());
        }
        Arc::new(State {
            scopes_supported,
            authorization_servers,
            hosts,
            stateless: Dispatcher::stateless(server.clone()),
            sessions: Sessions::new(
                options.session_idle,
                options.max_sessions,
                options.max_sessions_per_principal,
            )
            .with_prefix(&options.session_prefix),
            buffered: Budget::new(options.max_buffered_bytes),
            kept: Arc::new(match options.resume.store.clone() {
                Some(store) => replay::Kept::new(store),
                None => replay::Kept::default(),
            }),
            server,
            options,
            sink: Outbound::new(tx),
            mcp,
            stopping: tokio_util::sync::CancellationToken::new(),
        })
    }

    /// 413, and the connection closed: the rest of the body is never read.
    fn too_large(&self) -> Response<Body> {
        crate::telemetry::metric::limit_hit("body_bytes");
        error_response(
            None,
            ErrorObject::invalid_request(format!(
                "Invalid Request: body exceeds the limit of {} bytes",
                self.options.max_body_bytes
            )),
        )
        .with_status(StatusCode::PAYLOAD_TOO_LARGE)
        .closing()
    }

    /// Reads a body within the size limit, the body time limit and the listener's budget of
    /// buffered bytes, taken as the bytes arrive (so a client that declares a length and stalls
    /// holds only what it sent) and held until the request is handled. A declared length over
    /// the limit is refused before a byte of the body is read.
    async fn read_body<B: HttpBody>(&self, body: B) -> Result<(Bytes, Hold), Response<Body>> {
        let mut body = std::pin::pin!(body);
        let limit = self.options.max_body_bytes;
        let declared = body.size_hint().lower();
        if declared > limit as u64 {
            return Err(self.too_large());
        }
        let mut held = Hold::default();
        let expected = body.size_hint().exact().map_or(limit, |n| n as usize);
        let read = async {
            let mut buf = bytes::BytesMut::with_capacity((declared as usize).min(64 * 1024));
            while let Some(frame) = body.frame().await {
                let Ok(frame) = frame else {
                    return Err(empty(StatusCode::BAD_REQUEST));
                };
                let Ok(mut data) = frame.into_data() else { continue };
                let data = data.copy_to_bytes(data.remaining());
                if buf.len() + data.len() > limit {
                    return Err(self.too_large());
                }
                let more = (buf.len() + data.len()).saturating_sub(held.bytes());
                if more > 0 {
                    // Taken in steps of up to 64 KiB (never past the declared length), not
                    // per frame.
                    let step = more.max((64 * 1024).min(expected.saturating_sub(held.bytes())));
                    self.buffered.grow(&mut held, step).map_err(|_| self.busy())?;
                }
                buf.extend_from_slice(&data);
            }
            Ok(buf.freeze())
        };
        match tokio::time::timeout(self.options.body_timeout, read).await {
            Ok(Ok(bytes)) => Ok((bytes, held)),
            Ok(Err(refused)) => Err(refused),
            Err(_) => {
                let r = error_response(
                    None,
                    ErrorObject::invalid_request(format!(
                        "Request Timeout: the body did not arrive within {} ms",
                        self.options.body_timeout.as_millis()
                    )),
                )
                .with_status(StatusCode::REQUEST_TIMEOUT)
                .closing();
                Err(r)
            }
        }
    }

    /// 503 and the connection closed: the service is shutting down ([`HttpService::shutdown`]).
    fn stopping_response(&self) -> Response<Body> {
        let mut r = error_response(
            None,
            ErrorObject::internal("Service unavailable: the server is shutting down; retry on another replica"),
        )
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
        .closing();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        r
    }

    /// 503: the listener holds as many body bytes as it may; the connection is closed.
    fn busy(&self) -> Response<Body> {
        crate::telemetry::metric::limit_hit("buffered_bytes");
        static BUSY: Throttle = Throttle::new();
        if let Some(left_out) = BUSY.admit() {
            tracing::warn!(
                left_out,
                limit = self.buffered.limit(),
                "request refused: too many body bytes held"
            );
        }
        let mut r = error_response(
            None,
            ErrorObject::internal("Server busy: too many request bodies are being read; retry later"),
        )
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
        .closing();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        r
    }

    async fn handle<B: HttpBody>(self: Arc<Self>, req: Request<B>, peer: Option<SocketAddr>) -> Response<Body> {
        if self.stopping.is_cancelled() {
            return self.stopping_response();
        }
        let document = self.mcp && metadata::is_document_path(&self.options, req.uri().path());
        let page = self
            .options
            .pages
            .iter()
            .find(|(p, _)| p == req.uri().path())
            .map(|(_, h)| h.clone());
        if (!self.mcp || req.uri().path() != self.options.path) && !document && page.is_none() {
            return empty(StatusCode::NOT_FOUND);
        }
        if let Some((name, code)) = guard::repeated_header(req.headers()) {
            return error_response(
                None,
                ErrorObject::new(code, format!("Bad Request: the {name} header appears more than once")),
            )
            .with_status(StatusCode::BAD_REQUEST);
        }
        if !guard::hosts_allowed(&self.options, &self.hosts, req.headers()) {
            return guard::forbidden(req.headers());
        }
        if document {
            // Public: what a client reads to learn where to get a token.
            return self.metadata(req.method(), req.headers());
        }
        if let Some(handler) = page {
            return self.page(req, handler).await;
        }
        let principal = match guard::principal(&self.options, req.headers()).await {
            // Every check of this request sees the scopes the granted ones imply.
            Ok(p) => p.map(|p| self.server.with_implied_scopes(p)),
            Err(refused) => return refused,
        };
        let session_id = header_str(req.headers(), SESSION_HEADER).map(str::to_owned);
        // 2026-07-28 has no GET stream (nor sessions): its GET is refused whatever it carries.
        let sent = SentVersion::of(req.headers());
        let stateless = sent.names(crate::protocol::Era::Stateless);
        match (req.method(), &session_id) {
            (&Method::POST, _) => {}
            (&Method::GET, Some(id)) if !stateless => return self.listen(req.headers(), sent, id, principal),
            (&Method::DELETE, Some(id)) if !stateless => {
                return empty(if self.sessions.close(id, principal.as_ref()) {
                    StatusCode::OK
                } else {
                    StatusCode::NOT_FOUND
                });
            }
            // `Allow` names what a request like this one could use: with a session, its GET
            // stream, its requests and its end; without one (2026-07-28 traffic, or a client yet
            // to send `initialize`), POST only.
            (_, id) => {
                let allow = if id.is_some() && !stateless {
                    "GET, POST, DELETE"
                } else {
                    "POST"
                };
                let mut r = empty(StatusCode::METHOD_NOT_ALLOWED);
                r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
                return r;
            }
        }
        if !guard::is_json(req.headers()) {
            return error_response(
                None,
                ErrorObject::invalid_request("Invalid Request: Content-Type must be application/json"),
            )
            .with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE);
        }
        let (parts, body) = req.into_parts();
        let (bytes, _held) = match self.read_body(body).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        let inbound = classify(&bytes);
        if let Inbound::Invalid { id, error } = inbound {
            return error_response(id, error).with_status(StatusCode::BAD_REQUEST);
        }
        // Whose rate a call counts against: the principal, else the client's address.
        let unauthenticated = peer.map_or(CallerKey::Connection(0), |p| CallerKey::Address(p.ip()));
        let caller = CallerKey::of(principal.as_ref(), unauthenticated);
        // A 2026-07-28 request ignores an `Mcp-Session-Id` it still carries (that era has no
        // sessions: "ignore it").
        if let Some(id) = session_id.filter(|_| !stateless) {
            return self.in_session(&parts.headers, sent, &id, inbound, principal, &caller);
        }
        if opens_session(sent, &inbound) {
            // A version header `initialize` carries must name a version this server knows
            // ("invalid or unsupported … MUST respond with 400"); none is fine.
            if sent == SentVersion::Unknown {
                let sent = header_str(&parts.headers, VERSION_HEADER).unwrap_or_default();
                let id = match &inbound {
                    Inbound::Request { id, .. } => Some(id.clone()),
                    _ => None,
                };
                return error_response(
                    id,
                    ErrorObject::invalid_request(format!(
                        "Bad Request: MCP-Protocol-Version {sent:?} is not a version this server supports"
                    )),
                )
                .with_status(StatusCode::BAD_REQUEST);
            }
            return self.initialize(inbound, principal);
        }
        self.stateless(&parts.headers, sent, inbound, principal, &caller).await
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
    ///
    /// It refuses to start (an [`std::io::ErrorKind::InvalidInput`] error saying what to set)
    /// when the listener is bound to an address that is not loopback and no `Host` is allowed
    /// besides the loopback names ([`HttpOptions::allow_host`], [`HttpOptions::resource`], or
    /// the opt-out [`HttpOptions::allow_any_host`]), and when bearer tokens are required with
    /// any `Host` allowed but no [`HttpOptions::resource`] to name in the metadata; and, as
    /// [`Server::serve_stdio`] does, when an item takes a `State<T>` the server does not hold.
    pub async fn serve_http_on(self, listener: TcpListener, options: HttpOptions) -> std::io::Result<()> {
        self.serve_http_until(listener, options, std::future::pending()).await
    }

    /// [`Server::serve_http_on`] until `shutdown` resolves (Ctrl-C, SIGTERM, your own signal),
    /// then stops gracefully and returns:
    ///
    /// 1. the listener closes at once: new connections are refused;
    /// 2. handshake-era GET streams and 2026-07-28 `subscriptions/listen` streams end, and
    ///    questions waiting for a client fail, so the calls
    ///    that asked them answer (2026-07-28 calls between rounds lose nothing: their state is
    ///    in the client's hands);
    /// 3. requests in flight finish, within [`HttpOptions::shutdown_grace`] (30 s); idle
    ///    keep-alive connections close;
    /// 4. past the grace, what still runs is cancelled and every session ends.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use mcp_resolve_runtime::{HttpOptions, Server};
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    /// // With tokio's `signal` feature: `async { let _ = tokio::signal::ctrl_c().await; }`.
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// # drop(stop);
    /// let shutdown = async { let _ = stopped.await; };
    /// Server::new("notes").serve_http_until(listener, HttpOptions::default(), shutdown).await
    /// # }
    /// ```
    pub async fn serve_http_until(
        self,
        listener: TcpListener,
        options: HttpOptions,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> std::io::Result<()> {
        let bound = listener.local_addr()?;
        let state = State::new(Arc::new(self), options, true);
        state.check_start(bound)?;
        tracing::info!(
            server = %state.server.info().name,
            "serving MCP (Streamable HTTP): listening on http://{bound}{}",
            state.options.path
        );
        let permits = Arc::new(Semaphore::new(state.options.max_connections));
        tokio::select! {
            served = state.clone().accept(listener, permits.clone()) => return served,
            () = shutdown => {}
        }
        state.shut_down(&permits).await;
        Ok(())
    }

    /// Serves MCP on stdio, as [`Server::serve_stdio`] does, and this server's pages
    /// ([`HttpOptions::page`]) on `listener`: for a stdio server whose URL-mode questions send
    /// the user to a page of its own. The pages see the calls' flows ([`Server::url_flows`]).
    /// The listener serves the pages only: no MCP endpoint and no metadata document there (404),
    /// with every check of [`Server::serve_http_on`] (`Host`, `Origin`, bounds, refusals to
    /// start). A stdio caller is anonymous, so URL-mode questions need
    /// [`Server::anonymous_url_flows`]. It ends when stdin ends.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use mcp_resolve_runtime::{Bytes, HttpOptions, Server, http::Response};
    /// let server = Server::new("connect").anonymous_url_flows();
    /// let flows = server.url_flows();
    /// let options = HttpOptions::default().page("/connect", move |_req| {
    ///     let _flows = flows.clone(); // the page reads and completes the calls' flows
    ///     async move { Response::new(Bytes::from("Approve?")) }
    /// });
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    /// server.serve_stdio_with_pages(listener, options).await
    /// # }
    /// ```
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio_with_pages(self, listener: TcpListener, options: HttpOptions) -> std::io::Result<()> {
        let bound = listener.local_addr()?;
        let state = State::new(Arc::new(self), options, false);
        state.check_start(bound)?;
        tracing::info!(
            server = %state.server.info().name,
            "serving MCP on stdio: waiting for a client on stdin; its pages on http://{bound}"
        );
        let server = state.server.clone();
        let permits = Arc::new(Semaphore::new(state.options.max_connections));
        tokio::select! {
            served = crate::transport::stdio::serve_shared(server) => served,
            accepted = state.accept(listener, permits) => accepted,
        }
    }
}

impl State {
    /// Accepts connections on `listener` until the task is dropped, at most `max_connections`
    /// at once.
    async fn accept(self: Arc<Self>, listener: TcpListener, permits: Arc<Semaphore>) -> std::io::Result<()> {
        let state = self;
        let mut backoff = ACCEPT_BACKOFF_MIN;
        loop {
            // At the connection cap, nothing more is accepted until a connection closes: new
            // ones wait in the listen backlog (backpressure, nothing refused or lost).
            let permit = match permits.clone().try_acquire_owned() {
                Ok(p) => p,
                Err(_) => {
                    crate::telemetry::metric::limit_hit("connections");
                    static FULL: Throttle = Throttle::new();
                    if let Some(left_out) = FULL.admit() {
                        tracing::warn!(
                            limit = state.options.max_connections,
                            left_out,
                            "connection limit reached; new connections wait to be accepted"
                        );
                    }
                    match permits.clone().acquire_owned().await {
                        Ok(p) => p,
                        Err(_) => return Ok(()),
                    }
                }
            };
            let (stream, peer) = match listener.accept().await {
                Ok(s) => {
                    backoff = ACCEPT_BACKOFF_MIN;
                    s
                }
                Err(e) => {
                    // Out of descriptors (EMFILE) or similar: pause accepting, longer each time,
                    // while the connections already open go on being served.
                    static FAILED: Throttle = Throttle::new();
                    if let Some(left_out) = FAILED.admit() {
                        tracing::warn!(error = %e, left_out, "accept failed; backing off");
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                    continue;
                }
            };
            // Nagle off: an SSE reply (a handshake-era call's priming event, its questions, its
            // result, the end of the chunked body) is several small writes, and with Nagle on each
            // waits for the ACK of the one before, which a client's delayed ACK holds for ~40 ms.
            let _ = stream.set_nodelay(true);
            tokio::spawn(state.clone().serve_connection(TokioIo::new(stream), Some(peer), permit));
        }
    }
}

impl State {
    /// A page of the server's author: its body read within the bounds, then its handler; the
    /// safe headers added unless it set them.
    async fn page<B: HttpBody>(&self, req: Request<B>, handler: options::PageHandler) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let (bytes, _held) = match self.read_body(body).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        let response = handler(Request::from_parts(parts, bytes)).await;
        let (mut parts, body) = response.into_parts();
        for (name, value) in [
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "same-origin"),
            (header::X_FRAME_OPTIONS, "DENY"),
        ] {
            parts.headers.entry(name).or_insert(HeaderValue::from_static(value));
        }
        Response::from_parts(parts, full(body))
    }
}

/// A refusal to start, logged.
fn refuse(why: String) -> std::io::Result<()> {
    tracing::error!("{why}");
    Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, why))
}

impl State {
    /// Refuses a start that would leave `Host` unchecked by accident, or the metadata's
    /// `resource` to be made from a `Host` nobody checked.
    fn check_start(&self, bound: SocketAddr) -> std::io::Result<()> {
        if !bound.ip().is_loopback() && self.hosts.is_empty() && !self.options.any_host {
            return refuse(format!(
                "not serving HTTP on {bound}: an address that is not loopback needs the Host names clients use \
                 (HttpOptions::allow_host(\"mcp.example.com\"), or HttpOptions::resource with the server's URL), \
                 or HttpOptions::allow_any_host() when a proxy in front checks Host; otherwise any web page \
                 could reach this server through DNS rebinding"
            ));
        }
        self.check_options(&format!("not serving HTTP on {bound}"))
    }

    /// The checks of [`State::check_start`] that need no address (an [`HttpService`] has none);
    /// each refusal starts with `not`.
    fn check_options(&self, not: &str) -> std::io::Result<()> {
        if let Err(why) = self.server.check_states() {
            return refuse(why);
        }
        if let Some(resource) = &self.options.resource {
            let absolute = crate::authority::parse_url(resource)
                .is_some_and(|(scheme, _, _)| matches!(scheme.as_str(), "http" | "https"));
            if !absolute {
                return refuse(format!(
                    "{not}: HttpOptions::resource {resource:?} is not an absolute http(s) URL \
                     (e.g. https://mcp.example.com/mcp)"
                ));
            }
        }
        let prefix = &self.options.session_prefix;
        if prefix.len() > 32
            || !prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return refuse(format!(
                "{not}: HttpOptions::session_id_prefix {prefix:?} must be at most 32 letters, \
                 digits, '-' or '_' (it starts every session id, which a load balancer reads)"
            ));
        }
        if self.options.verifier.is_some() && self.authorization_servers.is_empty() {
            return refuse(format!(
                "{not}: bearer tokens need an authorization server to name in the Protected \
                 Resource Metadata (clients get their tokens there): HttpOptions::authorization_server(\"https://auth.example.com\"), \
                 or a verifier that knows its issuer (JwksVerifier::issuer)"
            ));
        }
        if self.options.any_host && self.options.verifier.is_some() && self.options.resource.is_none() {
            return refuse(format!(
                "{not}: with bearer tokens and any Host allowed, set HttpOptions::resource \
                 to this server's URL (the Protected Resource Metadata's `resource` is never made from an unchecked Host)"
            ));
        }
        Ok(())
    }
}

impl State {
    /// The graceful stop of [`Server::serve_http_until`], once the listener is gone: GET streams
    /// end and waiting questions fail, connections finish within the grace, then whatever is
    /// left is cancelled.
    async fn shut_down(&self, permits: &Semaphore) {
        let grace = self.options.shutdown_grace;
        tracing::info!(
            grace_ms = grace.as_millis() as u64,
            "shutting down: no new connections; requests in flight finish"
        );
        self.stopping.cancel();
        self.sessions.wind_down();
        let all = u32::try_from(self.options.max_connections).unwrap_or(u32::MAX);
        // Every permit back: every connection closed (the permits are given back at once, or
        // the wait below could never end early).
        let drained = tokio::time::timeout(grace, permits.acquire_many(all)).await.is_ok();
        if !drained {
            tracing::warn!(
                grace_ms = grace.as_millis() as u64,
                "shutting down: requests still running after the grace are cancelled"
            );
        }
        self.sessions.close_all();
        // The cancelled ones answer and close their streams (briefly).
        let _ = tokio::time::timeout(Duration::from_secs(1), permits.acquire_many(all)).await;
        tracing::info!("shut down");
    }
}

/// The shortest and longest pause after a failed `accept`.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

impl State {
    /// Serves one connection until it closes, with the header, idle and body time limits.
    async fn serve_connection<I>(
        self: Arc<Self>,
        io: TokioIo<I>,
        peer: Option<SocketAddr>,
        _permit: OwnedSemaphorePermit,
    ) where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let header_timeout = self.options.header_timeout;
        let stopping = self.stopping.clone();
        let _open = Open::connection("http");
        let service = hyper::service::service_fn(move |req| {
            let state = self.clone();
            async move { Ok::<_, Infallible>(state.handle(req, peer).await) }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(io, service);
        tokio::pin!(conn);
        // Shutting down: the request in flight finishes, then the connection closes (an idle
        // one at once).
        let served = tokio::select! {
            served = conn.as_mut() => served,
            () = stopping.cancelled() => {
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        if let Err(e) = served {
            tracing::debug!(?peer, error = %e, "connection ended");
        }
    }
}

/// Serves one connection over `io` as [`Server::serve_http_on`] serves an accepted stream
/// (`State::serve_connection`, with its time limits), with a listener state of its own: the door
/// of the HTTP fuzz target (`bench::serve_http_connection`), which writes raw request bytes into
/// an in-memory pipe. Without `check_hosts`, any `Host` is taken ([`HttpOptions::allow_any_host`]).
#[cfg(feature = "bench")]
pub(crate) async fn serve_io<IO>(server: Arc<Server>, options: HttpOptions, check_hosts: bool, io: IO)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let options = if check_hosts { options } else { options.allow_any_host() };
    let state = State::new(server, options, true);
    // The one connection of this listener holds its one permit.
    let Ok(permit) = Arc::new(Semaphore::new(1)).try_acquire_owned() else {
        return;
    };
    state.serve_connection(TokioIo::new(io), None, permit).await;
}
