//! The per-call context a tool (and later a resolver) can take as a parameter.

use crate::protocol::{ClientCapabilities, Era, ErrorObject, Implementation, ProtocolVersion, RequestId};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// An authenticated caller. There is none on stdio; HTTP transports fill it from a verified token.
///
/// ```
/// use mcp_resolve_runtime::Principal;
/// let p = Principal { subject: "user-42".into(), issuer: Some("https://auth.example".into()) };
/// assert_eq!(p.subject, "user-42");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal {
    /// The subject (`sub`).
    pub subject: String,
    /// The issuer (`iss`), when known.
    pub issuer: Option<String>,
}

/// Where a connection's outgoing frames go.
#[derive(Clone, Debug)]
pub(crate) struct Outbound {
    pub(crate) tx: mpsc::Sender<Vec<u8>>,
}

impl Outbound {
    pub(crate) async fn send(&self, frame: Vec<u8>) -> bool {
        self.tx.send(frame).await.is_ok()
    }
}

type Waiters = Arc<Mutex<Option<HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>>>>;

/// The client, as a handshake-era connection lets the server call it back: requests with ids of
/// the server's own, answered by responses the transport routes here.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    outbound: Outbound,
    waiters: Waiters,
    next_id: Arc<AtomicI64>,
    /// Woken each time a question goes out, so a transport that stopped reading can start again:
    /// the answer must get through.
    asked: Arc<tokio::sync::Notify>,
}

/// Why a request to the client got no result.
#[derive(Debug)]
pub(crate) enum PeerError {
    /// The client answered with a JSON-RPC error.
    Client(ErrorObject),
    /// No answer in time.
    Timeout,
    /// The connection closed.
    Closed,
}

/// Removes a waiter when the request is abandoned (timeout, cancellation of the call).
struct WaiterGuard<'a> {
    waiters: &'a Waiters,
    id: RequestId,
}

impl Drop for WaiterGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut w) = self.waiters.lock()
            && let Some(map) = w.as_mut()
        {
            map.remove(&self.id);
        }
    }
}

impl Peer {
    pub(crate) fn new(outbound: Outbound) -> Self {
        Self {
            outbound,
            waiters: Arc::new(Mutex::new(Some(HashMap::new()))),
            next_id: Arc::new(AtomicI64::new(1)),
            asked: Arc::default(),
        }
    }

    /// A peer that writes to `outbound` (one HTTP response stream) but shares its waiting
    /// requests and id space with `other` (the session): answers arrive as separate POSTs.
    #[cfg(feature = "http")]
    pub(crate) fn sharing(other: &Peer, outbound: Outbound) -> Self {
        Self {
            outbound,
            waiters: other.waiters.clone(),
            next_id: other.next_id.clone(),
            asked: other.asked.clone(),
        }
    }

    /// Sends a request to the client and waits for its response.
    pub(crate) async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, PeerError> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        match self.waiters.lock() {
            Ok(mut w) => match w.as_mut() {
                Some(map) => {
                    map.insert(id.clone(), tx);
                }
                None => return Err(PeerError::Closed),
            },
            Err(_) => return Err(PeerError::Closed),
        }
        let _guard = WaiterGuard {
            waiters: &self.waiters,
            id: id.clone(),
        };
        self.asked.notify_one();
        let frame = crate::protocol::jsonrpc::encode_request(&id, method, &params);
        if !self.outbound.send(frame).await {
            return Err(PeerError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(e))) => Err(PeerError::Client(e)),
            Ok(Err(_)) => Err(PeerError::Closed),
            Err(_) => Err(PeerError::Timeout),
        }
    }

    /// Whether a request to the client is waiting for its answer.
    pub(crate) fn awaiting_client(&self) -> bool {
        self.waiters
            .lock()
            .is_ok_and(|w| w.as_ref().is_some_and(|m| !m.is_empty()))
    }

    /// Resolves once a question went out since the last call (or at once if one went out before
    /// and nobody was waiting).
    pub(crate) async fn asked(&self) {
        self.asked.notified().await;
    }

    /// Hands a response to its waiter; `false` when no request of ours has that id.
    pub(crate) fn deliver(&self, id: &RequestId, outcome: Result<Value, ErrorObject>) -> bool {
        let waiter = self
            .waiters
            .lock()
            .ok()
            .and_then(|mut w| w.as_mut().and_then(|m| m.remove(id)));
        match waiter {
            Some(tx) => tx.send(outcome).is_ok(),
            None => false,
        }
    }

    /// The client is gone: every waiting request fails now, and new ones fail at once.
    pub(crate) fn close(&self) {
        if let Ok(mut w) = self.waiters.lock() {
            w.take();
        }
    }
}

/// The request a tool is serving: who asked, on which protocol era, with which capabilities, and
/// the means to report progress and notice cancellation.
///
/// Take it as a parameter of a `#[tool]` function (any parameter name); it never appears in the
/// tool's `inputSchema`.
///
/// ```
/// use mcp_resolve_runtime::{ClientCapabilities, Context, Era, ProtocolVersion};
/// // A detached context, as unit tests of a tool body may build one.
/// let cx = Context::detached(ProtocolVersion::V2026_07_28, ClientCapabilities::default());
/// assert_eq!(cx.era(), Era::Stateless);
/// assert!(cx.principal().is_none());
/// assert!(!cx.is_cancelled());
/// ```
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<ContextInner>,
}

#[derive(Debug)]
struct ContextInner {
    request_id: Option<RequestId>,
    version: ProtocolVersion,
    capabilities: ClientCapabilities,
    client_info: Option<Arc<Implementation>>,
    principal: Option<Principal>,
    progress_token: Option<Value>,
    outbound: Option<Outbound>,
    cancel: CancellationToken,
}

pub(crate) struct ContextParts {
    pub(crate) request_id: RequestId,
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) principal: Option<Principal>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) outbound: Outbound,
    pub(crate) cancel: CancellationToken,
}

impl Context {
    pub(crate) fn new(p: ContextParts) -> Self {
        Self {
            inner: Arc::new(ContextInner {
                request_id: Some(p.request_id),
                version: p.version,
                capabilities: p.capabilities,
                client_info: p.client_info,
                principal: p.principal,
                progress_token: p.progress_token,
                outbound: Some(p.outbound),
                cancel: p.cancel,
            }),
        }
    }

    /// A context attached to no connection, for unit tests of tool bodies: progress goes nowhere
    /// and it is never cancelled.
    pub fn detached(version: ProtocolVersion, capabilities: ClientCapabilities) -> Self {
        Self {
            inner: Arc::new(ContextInner {
                request_id: None,
                version,
                capabilities,
                client_info: None,
                principal: None,
                progress_token: None,
                outbound: None,
                cancel: CancellationToken::new(),
            }),
        }
    }

    /// The JSON-RPC id of the request being served (`None` when detached).
    pub fn request_id(&self) -> Option<&RequestId> {
        self.inner.request_id.as_ref()
    }
    /// The protocol version of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }
    /// The protocol era of this request.
    pub fn era(&self) -> Era {
        self.inner.version.era()
    }
    /// The client's capabilities for this request (2026-07-28: from this request's `_meta`;
    /// handshake era: from `initialize`).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.capabilities
    }
    /// The client's name and version, when it sent them.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.client_info.as_deref()
    }
    /// The authenticated caller, when the transport has one (never on stdio).
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }
    /// Whether the client asked for progress notifications on this request.
    pub fn wants_progress(&self) -> bool {
        self.inner.progress_token.is_some()
    }
    /// Sends `notifications/progress` when the client supplied a `progressToken`; does nothing
    /// otherwise. `progress` should increase with every call.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(token), Some(out)) = (&self.inner.progress_token, &self.inner.outbound) else {
            return;
        };
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), json!(progress));
        if let Some(t) = total {
            params.insert("total".into(), json!(t));
        }
        if let Some(m) = message {
            params.insert("message".into(), json!(m));
        }
        let frame = crate::protocol::jsonrpc::encode_notification("notifications/progress", &Value::Object(params));
        out.send(frame).await;
    }
    /// Whether the client cancelled this request (or the connection closed).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }
    /// Completes when the request is cancelled; use it in `tokio::select!` around long work.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }
}
