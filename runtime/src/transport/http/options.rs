//! The settings of the HTTP transport.

use crate::auth::TokenVerifier;
use futures_util::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

/// What serves a page: the request (its body read within `max_body_bytes`), and the response.
pub(super) type PageHandler =
    Arc<dyn Fn(http::Request<bytes::Bytes>) -> BoxFuture<'static, http::Response<bytes::Bytes>> + Send + Sync>;

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
    pub(super) verifier: Option<Arc<dyn TokenVerifier>>,
    pub(super) resource: Option<String>,
    pub(super) authorization_servers: Vec<String>,
    pub(super) scopes_supported: Vec<String>,
    pub(super) path: String,
    pub(super) allowed_hosts: Vec<String>,
    pub(super) allowed_origins: Vec<String>,
    /// `Host` is not checked ([`HttpOptions::allow_any_host`]).
    pub(super) any_host: bool,
    pub(super) max_body_bytes: usize,
    pub(super) session_idle: Duration,
    pub(super) max_sessions: usize,
    pub(super) max_sessions_per_principal: usize,
    pub(super) header_timeout: Duration,
    pub(super) body_timeout: Duration,
    pub(super) max_connections: usize,
    pub(super) max_buffered_bytes: usize,
    pub(super) stream_keepalive: Duration,
    /// Handshake-era streams that outlive their connection ([`HttpOptions::resumable`]).
    pub(super) resume: ResumeOptions,
    /// What every session id starts with ([`HttpOptions::session_id_prefix`]).
    pub(super) session_prefix: String,
    /// How long requests in flight may take to finish once shutting down.
    pub(super) shutdown_grace: Duration,
    /// Pages served beside the MCP endpoint, by exact path.
    pub(super) pages: Vec<(String, PageHandler)>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("path", &self.path)
            .field("bearer", &self.verifier.is_some())
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("any_host", &self.any_host)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_connections", &self.max_connections)
            .field("max_buffered_bytes", &self.max_buffered_bytes)
            .field("stream_keepalive", &self.stream_keepalive)
            .field("resume", &self.resume)
            .field("session_prefix", &self.session_prefix)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("pages", &self.pages.iter().map(|(p, _)| p).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            verifier: None,
            resource: None,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            path: "/mcp".into(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            any_host: false,
            max_body_bytes: 4 * 1024 * 1024,
            session_idle: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            max_sessions_per_principal: 100,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 4096,
            max_buffered_bytes: 64 * 1024 * 1024,
            stream_keepalive: Duration::from_secs(15),
            resume: ResumeOptions::default(),
            session_prefix: String::new(),
            shutdown_grace: Duration::from_secs(30),
            pages: Vec::new(),
        }
    }
}

impl HttpOptions {
    /// Serves a page of yours at `path` (an exact path, any method) beside the MCP endpoint: the
    /// page a URL-mode question sends the user to, say. Its requests pass the same `Host` /
    /// `Origin` check and body bounds as MCP requests, but no bearer token is asked for: the
    /// page signs its user in itself (a browser brings no token), and checks that user against
    /// the flow with [`UrlFlows`](crate::url_flow::UrlFlows). Responses get `Cache-Control: no-store`,
    /// `Referrer-Policy: same-origin` (the URL carries the flow's id: it never leaves for another
    /// site, while the page's own form posts keep their `Origin`) and `X-Frame-Options: DENY`
    /// unless the handler sets them.
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// use mcp_resolve_runtime::http::{Request, Response};
    /// use mcp_resolve_runtime::Bytes;
    /// let options = HttpOptions::default().page("/hello", |_req: Request<Bytes>| async {
    ///     Response::new(Bytes::from_static(b"<p>Hello</p>"))
    /// });
    /// # let _ = options;
    /// ```
    pub fn page<F, Fut>(mut self, path: impl Into<String>, handler: F) -> Self
    where
        F: Fn(http::Request<bytes::Bytes>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = http::Response<bytes::Bytes>> + Send + 'static,
    {
        let handler: PageHandler = Arc::new(move |req| Box::pin(handler(req)));
        let path = path.into();
        self.pages.retain(|(p, _)| *p != path);
        self.pages.push((path, handler));
        self
    }
    /// Requires `Authorization: Bearer <token>` on every request, checked by `verifier`; a
    /// missing or refused token gets 401 with `WWW-Authenticate`. The principal it yields is seen
    /// by tools and resolvers and bound into `requestState`.
    pub fn bearer(mut self, verifier: impl TokenVerifier) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }
    /// This server's canonical URI as clients reach it (e.g. `https://notes.example.com/mcp`):
    /// the `resource` of its Protected Resource Metadata (RFC 9728), and what its tokens' audience
    /// should be (RFC 8707). Without it, the URI is made from each request's `Host` and the path,
    /// with `http` for a loopback host and `https` otherwise; set it behind a proxy that changes
    /// the host, scheme or path.
    ///
    /// With [`HttpOptions::bearer`], the metadata is served at
    /// `/.well-known/oauth-protected-resource` and at that path followed by the resource's path
    /// (`/.well-known/oauth-protected-resource/mcp`), and every 401 and 403 challenge links it
    /// (`resource_metadata="…"`), so an MCP client can find the authorization server.
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// let options = HttpOptions::default()
    ///     .resource("https://notes.example.com/mcp")
    ///     .authorization_server("https://auth.example.com")
    ///     .scopes_supported(["notes:read", "notes:write"]);
    /// # let _ = options;
    /// ```
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.resource = Some(uri.into());
        self
    }
    /// Names an authorization server (its issuer URL) in the Protected Resource Metadata; call it
    /// once per server. The metadata must name at least one (RFC 9728 as MCP profiles it): without
    /// this, the verifier's issuer is named ([`TokenVerifier::authorization_server`]), and a
    /// server with bearer tokens and neither refuses to start.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        if !self.authorization_servers.contains(&issuer) {
            self.authorization_servers.push(issuer);
        }
        self
    }
    /// Scopes listed in the Protected Resource Metadata (`scopes_supported`), besides the ones
    /// the server's tools, prompts and resources require (`scopes = [...]` on their attributes),
    /// which are always listed. These are also the `scope` of every 401 challenge: the scopes a
    /// client should ask for first (MCP authorization: "servers SHOULD include a `scope`
    /// parameter"); a tool that needs more answers 403 `insufficient_scope` naming its own.
    pub fn scopes_supported<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes_supported.extend(scopes.into_iter().map(Into::into));
        self
    }
    /// The verifier bearer tokens are checked with, if any: what a page of the server
    /// ([`HttpOptions::page`]) signs a browser in with, so that the person on the page is checked
    /// exactly as the MCP caller was.
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// assert!(HttpOptions::default().token_verifier().is_none());
    /// ```
    pub fn token_verifier(&self) -> Option<Arc<dyn TokenVerifier>> {
        self.verifier.clone()
    }
    /// Whether requests need a bearer token ([`HttpOptions::bearer`] or
    /// [`HttpOptions::bearer_from_env`] configured a verifier).
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// assert!(!HttpOptions::default().bearer_required());
    /// ```
    pub fn bearer_required(&self) -> bool {
        self.verifier.is_some()
    }
    /// The endpoint's path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }
    /// Accepts this `Host` (name, or name:port) besides the loopback names and the host of
    /// [`HttpOptions::resource`].
    ///
    /// `Host` and `Origin` are checked on every bind (403 otherwise): the DNS-rebinding defence.
    /// `Host` must be a loopback name (`localhost`, 127.0.0.0/8, `[::1]`), the host of the
    /// configured [`HttpOptions::resource`], or one given here. A server bound to an address
    /// that is not loopback (`0.0.0.0`, a public address) with none of these refuses to start,
    /// saying so: name the hosts clients use, or opt out with [`HttpOptions::allow_any_host`].
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// let options = HttpOptions::default().allow_host("notes.example.com").allow_host("10.0.0.5:8000");
    /// # let _ = options;
    /// ```
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into().to_ascii_lowercase());
        self
    }
    /// Accepts this `Origin` (e.g. `https://app.example.com`: scheme, host and any port, as a
    /// browser sends it) besides loopback origins and the server's own. An `Origin` is checked
    /// on every bind, whatever [`HttpOptions::allow_any_host`] says: a browser page of another
    /// site gets 403 unless its origin is listed here.
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// let options = HttpOptions::default().allow_origin("https://app.example.com");
    /// # let _ = options;
    /// ```
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        let origin = origin.into().to_ascii_lowercase();
        self.allowed_origins.push(origin.trim_end_matches('/').to_owned());
        self
    }
    /// Takes any `Host`: for a server behind a proxy that checks `Host` itself, or reached under
    /// names not known in advance. Without it, a server bound to an address that is not loopback
    /// and given no allowed host refuses to start. `Origin` is still checked, and the Protected
    /// Resource Metadata's `resource` is then never made from `Host`: set
    /// [`HttpOptions::resource`] when bearer tokens are required.
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// let options = HttpOptions::default().allow_any_host().resource("https://notes.example.com/mcp");
    /// # let _ = options;
    /// ```
    pub fn allow_any_host(mut self) -> Self {
        self.any_host = true;
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
    /// How many handshake-era sessions one authenticated principal may have open at once
    /// (default 100), so that one caller cannot take every session; beyond it that caller's
    /// `initialize` gets 503. Without bearer authentication only [`HttpOptions::max_sessions`]
    /// applies.
    pub fn max_sessions_per_principal(mut self, n: usize) -> Self {
        self.max_sessions_per_principal = n.max(1);
        self
    }
    /// How long a client may take to send a request's line and headers (default 10 s), counted
    /// from when the connection opens or its previous response ends; past it the connection is
    /// closed. The same clock closes an idle keep-alive connection: one that sends no new request
    /// within this time after its last response.
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// use std::time::Duration;
    /// let options = HttpOptions::default().header_timeout(Duration::from_secs(5));
    /// # let _ = options;
    /// ```
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout.max(Duration::from_millis(1));
        self
    }
    /// How long a client may take to send a request's whole body (default 30 s); past it the
    /// request gets 408 and the connection is closed.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout.max(Duration::from_millis(1));
        self
    }
    /// How many connections are served at once (default 4096; an idle one takes about 18 KiB
    /// and a descriptor). At the limit nothing more is accepted until a connection closes: new
    /// connections wait in the listen backlog, and idle ones are closed by
    /// [`HttpOptions::header_timeout`]. Keep the process's open-file limit
    /// above it; otherwise accepting pauses (with a back-off, the connections already open still
    /// served) until descriptors free up.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }
    /// How many bytes of request bodies the listener holds at once, across all connections
    /// (default 64 MiB): bodies being read, and bodies read but not yet handled. A request that
    /// would take it past this bound gets 503 with `Retry-After`, and its connection is closed.
    pub fn max_buffered_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_bytes = bytes.max(1);
        self
    }
    /// How often a session's GET stream (handshake era: the stream of
    /// `notifications/resources/updated`) carries an SSE comment when it has nothing else to
    /// send (default 15 s), so that proxies do not close it as idle and a client that went away
    /// is noticed.
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// use std::time::Duration;
    /// let options = HttpOptions::default().stream_keepalive(Duration::from_secs(30));
    /// # let _ = options;
    /// ```
    pub fn stream_keepalive(mut self, every: Duration) -> Self {
        self.stream_keepalive = every.max(Duration::from_millis(1));
        self
    }
    /// How long requests in flight may take to finish once [`Server::serve_http_until`]'s
    /// shutdown began (default 30 s); past it they are cancelled and the server returns.
    ///
    /// [`Server::serve_http_until`]: crate::Server::serve_http_until
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// use std::time::Duration;
    /// let options = HttpOptions::default().shutdown_grace(Duration::from_secs(10));
    /// # let _ = options;
    /// ```
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }
    /// Starts every handshake-era session id with `prefix` and a dot (`a.5f3c…`; none by
    /// default): name each replica, and a load balancer sends a session's requests (its resumed
    /// streams included) to the replica that holds it by reading the id alone, whatever address
    /// the client comes from now. At most 32 letters, digits, `-` or `_`; anything else refuses
    /// to start. README's "Several replicas" shows the nginx `map` that reads it.
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// let options = HttpOptions::default().session_id_prefix("a");
    /// # let _ = options;
    /// ```
    pub fn session_id_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.session_prefix = prefix.into();
        self
    }
    /// The bounds of resumable streams (handshake era): how long a call whose stream broke
    /// runs on waiting for its client to come back, and how many bytes and events a session,
    /// and the whole listener, keep for clients to resume. See [`ResumeOptions`].
    ///
    /// ```
    /// use mcp_resolve_runtime::{HttpOptions, ResumeOptions};
    /// use std::time::Duration;
    /// let options = HttpOptions::default().resumable(
    ///     ResumeOptions::default()
    ///         .detached_timeout(Duration::from_secs(120))
    ///         .close_streams_after(Duration::from_secs(50)),
    /// );
    /// # let _ = options;
    /// ```
    pub fn resumable(mut self, resume: ResumeOptions) -> Self {
        self.resume = resume;
        self
    }
}

/// How handshake-era (2025-06-18, 2025-11-25) SSE streams survive a broken connection.
///
/// Every event of a session's streams (a call's POST stream, the session's GET stream) carries an
/// `id` and is kept until its stream ends, so a client whose connection broke sends `GET` with
/// `Mcp-Session-Id` and `Last-Event-ID` and gets the rest of that stream. A stream starts with a
/// priming event (an `id`, a `retry` field, empty `data`). A broken stream does not cancel its
/// call: the call runs on, and what it sends is kept for the client, within these bounds:
///
/// | bound | default | reached |
/// |---|---|---|
/// | [`detached_timeout`](Self::detached_timeout) | 5 min | a call nobody reads for that long is cancelled, its events dropped |
/// | [`max_session_bytes`](Self::max_session_bytes) | 1 MiB | events already written are dropped first, then the session's oldest detached call is cancelled |
/// | [`max_session_events`](Self::max_session_events) | 4,096 | as for bytes |
/// | [`max_total_bytes`](Self::max_total_bytes) | 64 MiB | as for bytes, within the session whose event crossed it |
/// | [`retry`](Self::retry) | 1 s | the reconnection delay a client is told |
/// | [`close_streams_after`](Self::close_streams_after) | off | each stream's connection is closed after that time (SEP-1699 polling) |
///
/// A stream with a reader is never dropped: it waits for its reader (backpressure) instead. A
/// stream read to its end is kept 30 s more (its response went to the connection, but a
/// connection broken at that moment may not have delivered it); over the total bound, such
/// streams go first, and over a session's bound their events (already delivered once) go before
/// anything else: a stream whose every event went is gone at once (resuming it is refused, 410).
/// `notifications/cancelled` and the session's end (`DELETE`, idleness, eviction) still cancel.
/// 2026-07-28 streams are not kept: closing one cancels its request, as that era requires.
///
/// ```
/// use mcp_resolve_runtime::ResumeOptions;
/// use std::time::Duration;
/// let resume = ResumeOptions::default()
///     .detached_timeout(Duration::from_secs(600))
///     .max_session_bytes(4 << 20);
/// # let _ = resume;
/// ```
#[derive(Clone)]
pub struct ResumeOptions {
    /// Where the events are kept ([`ResumeOptions::event_store`]); in memory when `None`.
    pub(super) store: Option<Arc<dyn crate::event_store::EventStore>>,
    pub(super) detached_timeout: Duration,
    pub(super) max_session_bytes: usize,
    pub(super) max_session_events: usize,
    pub(super) max_total_bytes: usize,
    pub(super) retry: Duration,
    pub(super) close_after: Option<Duration>,
}

impl std::fmt::Debug for ResumeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResumeOptions")
            .field("event_store", &if self.store.is_some() { "custom" } else { "memory" })
            .field("detached_timeout", &self.detached_timeout)
            .field("max_session_bytes", &self.max_session_bytes)
            .field("max_session_events", &self.max_session_events)
            .field("max_total_bytes", &self.max_total_bytes)
            .field("retry", &self.retry)
            .field("close_after", &self.close_after)
            .finish()
    }
}

impl Default for ResumeOptions {
    fn default() -> Self {
        Self {
            store: None,
            detached_timeout: Duration::from_secs(5 * 60),
            max_session_bytes: 1 << 20,
            max_session_events: 4096,
            max_total_bytes: 64 << 20,
            retry: Duration::from_secs(1),
            close_after: None,
        }
    }
}

impl ResumeOptions {
    /// Keeps the events in `store` instead of this process's memory
    /// ([`MemoryEventStore`](crate::event_store::MemoryEventStore)). The bounds above still
    /// apply: the framework tells the store what to drop.
    ///
    /// ```
    /// use mcp_resolve_runtime::ResumeOptions;
    /// use mcp_resolve_runtime::event_store::MemoryEventStore;
    /// let resume = ResumeOptions::default().event_store(MemoryEventStore::default());
    /// # let _ = resume;
    /// ```
    pub fn event_store(mut self, store: impl crate::event_store::EventStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }
    /// How long a call whose stream broke runs on without a reader (default 5 min): past it the
    /// call is cancelled and its events dropped, with a log line naming the session.
    pub fn detached_timeout(mut self, timeout: Duration) -> Self {
        self.detached_timeout = timeout;
        self
    }
    /// Bytes of events one session keeps for resumption (default 1 MiB).
    pub fn max_session_bytes(mut self, bytes: usize) -> Self {
        self.max_session_bytes = bytes.max(1);
        self
    }
    /// Events one session keeps for resumption (default 4,096).
    pub fn max_session_events(mut self, events: usize) -> Self {
        self.max_session_events = events.max(1);
        self
    }
    /// Bytes of events the listener keeps for resumption across all sessions (default 64 MiB).
    pub fn max_total_bytes(mut self, bytes: usize) -> Self {
        self.max_total_bytes = bytes.max(1);
        self
    }
    /// The `retry` field of each stream's priming event: how long a client waits before it
    /// reconnects (default 1 s).
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = retry;
        self
    }
    /// Closes each stream's connection after `after` (off by default), once its priming event
    /// and `retry` field went out; the client reconnects with `Last-Event-ID` and the stream goes
    /// on (SEP-1699 polling). For deployments whose proxies cut long requests.
    pub fn close_streams_after(mut self, after: Duration) -> Self {
        self.close_after = Some(after.max(Duration::from_millis(1)));
        self
    }
}
