//! The Streamable HTTP endpoint as a service to mount in an application of one's own (axum, or
//! plain hyper): the same `State::handle` every connection of [`Server::serve_http_on`] runs.

use super::{Body, HttpOptions, State};
use crate::server::Server;
use bytes::Bytes;
use http::{Request, Response};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Where the service reads a request's client address from: [`HttpService::client_addr_from`].
type AddrOf = Arc<dyn Fn(&http::Extensions) -> Option<SocketAddr> + Send + Sync>;

/// The client's address, as a request extension [`HttpService`] reads (as it reads a bare
/// [`SocketAddr`] extension): unauthenticated callers are rate-limited by address
/// ([`Server::call_rate_limit`]). Requests with no address share one budget.
///
/// ```
/// use mcp_resolve_runtime::{ClientAddr, http::Request};
/// let mut req = Request::new(());
/// req.extensions_mut().insert(ClientAddr("192.0.2.7:50000".parse().unwrap()));
/// assert!(req.extensions().get::<ClientAddr>().is_some());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr(pub SocketAddr);

/// The Streamable HTTP endpoint of a [`Server`] as a service: both eras, its sessions, SSE
/// streams, the Protected Resource Metadata document and its pages ([`HttpOptions::page`]), with
/// every check of [`Server::serve_http_on`] (`Host` and `Origin`, bearer tokens, body size and
/// time, buffered bytes, sessions). Made by [`Server::into_http_service`]; cheap to clone (one
/// shared state).
///
/// With the `tower` feature it is a `tower::Service` for axum's `Router::route_service` (the
/// path is kept: it must equal [`HttpOptions::path`], `/mcp` by default) or
/// `Router::nest_service` (the prefix is stripped: set `HttpOptions::path("/")`). Mount the
/// metadata document's path too when tokens are required
/// (`/.well-known/oauth-protected-resource/mcp`), and each page's.
///
/// What belongs to a listener is the embedding application's job: the number of connections
/// ([`HttpOptions::max_connections`]) and the time to send headers
/// ([`HttpOptions::header_timeout`]) are not applied here; see docs/OPERATIONS.md for the
/// tower-http layers that do it. The client's address comes from a request extension
/// ([`ClientAddr`], a [`SocketAddr`], or [`HttpService::client_addr_from`]).
///
/// ```
/// # async fn run() -> std::io::Result<()> {
/// use mcp_resolve_runtime::{Bytes, HttpOptions, Server, http::{Request, StatusCode}};
/// let service = Server::new("notes").into_http_service(HttpOptions::default())?;
/// let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
/// let req = Request::post("/mcp")
///     .header("host", "localhost")
///     .header("content-type", "application/json")
///     .header("accept", "application/json, text/event-stream")
///     .header("mcp-protocol-version", "2026-07-28")
///     .header("mcp-method", "server/discover")
///     .body(http_body_util::Full::new(Bytes::from(discover)))
///     .unwrap();
/// let response = service.handle(req).await;
/// assert_eq!(response.status(), StatusCode::OK);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(run()).unwrap();
/// ```
#[derive(Clone)]
pub struct HttpService {
    state: Arc<State>,
    addr_of: Option<AddrOf>,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService")
            .field("server", &self.state.server.info().name)
            .field("path", &self.state.options.path)
            .finish_non_exhaustive()
    }
}

/// A response body of [`HttpService`]: bytes, whole or streamed (SSE).
pub struct ResponseBody(Body);

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResponseBody")
    }
}

impl hyper::body::Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.0.size_hint()
    }
}

impl Server {
    /// This server's Streamable HTTP endpoint as an [`HttpService`], to mount in an application
    /// of your own. Call it inside a tokio runtime. It refuses (an
    /// [`std::io::ErrorKind::InvalidInput`] error saying what to set) what
    /// [`Server::serve_http_on`] refuses, except the check of the bound address, which a service
    /// does not know: with no [`HttpOptions::allow_host`] only loopback `Host` names are served.
    ///
    /// ```
    /// # async fn run() -> std::io::Result<()> {
    /// use mcp_resolve_runtime::{HttpOptions, Server};
    /// let mcp = Server::new("notes").into_http_service(HttpOptions::default().allow_host("mcp.example.com"))?;
    /// # let _ = mcp; Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(run()).unwrap();
    /// ```
    pub fn into_http_service(self, options: HttpOptions) -> std::io::Result<HttpService> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(std::io::Error::other(
                "Server::into_http_service must be called inside a tokio runtime (it starts the sessions' timers)",
            ));
        }
        let state = State::new(Arc::new(self), options, true);
        state.check_options("not serving HTTP")?;
        tracing::info!(
            server = %state.server.info().name,
            "serving MCP (Streamable HTTP) as a service at {}",
            state.options.path
        );
        Ok(HttpService { state, addr_of: None })
    }
}

impl HttpService {
    /// Reads the client's address from the request's extensions with `f`, e.g. axum's
    /// `ConnectInfo`: `.client_addr_from(|e| e.get::<ConnectInfo<SocketAddr>>().map(|c| c.0))`.
    /// Without it, a [`ClientAddr`] or [`SocketAddr`] extension is read.
    ///
    /// ```
    /// # async fn run() -> std::io::Result<()> {
    /// use mcp_resolve_runtime::{HttpOptions, Server};
    /// #[derive(Clone)]
    /// struct Peer(std::net::SocketAddr);
    /// let mcp = Server::new("notes")
    ///     .into_http_service(HttpOptions::default())?
    ///     .client_addr_from(|e| e.get::<Peer>().map(|p| p.0));
    /// # let _ = mcp; Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(run()).unwrap();
    /// ```
    pub fn client_addr_from(
        mut self,
        f: impl Fn(&http::Extensions) -> Option<SocketAddr> + Send + Sync + 'static,
    ) -> Self {
        self.addr_of = Some(Arc::new(f));
        self
    }

    /// Serves one request: the service without tower (e.g. inside a hyper `service_fn`).
    ///
    /// ```
    /// # async fn run() -> std::io::Result<()> {
    /// use mcp_resolve_runtime::{Bytes, HttpOptions, Server, http::{Request, StatusCode}};
    /// let mcp = Server::new("notes").into_http_service(HttpOptions::default())?;
    /// let req = Request::get("/elsewhere").header("host", "localhost").body(http_body_util::Empty::<Bytes>::new()).unwrap();
    /// assert_eq!(mcp.handle(req).await.status(), StatusCode::NOT_FOUND);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(run()).unwrap();
    /// ```
    pub fn handle<B>(&self, req: Request<B>) -> impl Future<Output = Response<ResponseBody>> + Send + 'static
    where
        B: hyper::body::Body<Data: Send, Error: Send> + Send + 'static,
    {
        let peer = match &self.addr_of {
            Some(f) => f(req.extensions()),
            None => (req.extensions().get::<ClientAddr>().map(|a| a.0))
                .or_else(|| req.extensions().get::<SocketAddr>().copied()),
        };
        let state = self.state.clone();
        async move { state.handle(req, peer).await.map(ResponseBody) }
    }

    /// Begins a graceful stop, for the application's own (e.g. `axum::serve(…)
    /// .with_graceful_shutdown(…)`): handshake-era GET streams and 2026-07-28
    /// `subscriptions/listen` streams end, questions waiting for a
    /// client fail (so the calls that asked them answer), and new requests get 503 with
    /// `Connection: close`; requests in flight go on until they finish, which the application's
    /// server waits for. [`HttpService::close`] then ends every session.
    ///
    /// ```
    /// # async fn run() -> std::io::Result<()> {
    /// use mcp_resolve_runtime::{HttpOptions, Server};
    /// let mcp = Server::new("notes").into_http_service(HttpOptions::default())?;
    /// mcp.shutdown();
    /// mcp.close();
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(run()).unwrap();
    /// ```
    pub fn shutdown(&self) {
        if !self.state.stopping.is_cancelled() {
            tracing::info!("shutting down: new requests are refused; requests in flight finish");
            self.state.stopping.cancel();
            self.state.sessions.wind_down();
        }
    }

    /// Ends every session (and cancels what they still run): the last step of a stop, once the
    /// application's server has returned.
    pub fn close(&self) {
        self.shutdown();
        self.state.sessions.close_all();
    }
}

#[cfg(feature = "tower")]
impl<B> tower_service::Service<Request<B>> for HttpService
where
    B: hyper::body::Body<Data: Send, Error: Send> + Send + 'static,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let served = self.handle(req);
        Box::pin(async move { Ok(served.await) })
    }
}
