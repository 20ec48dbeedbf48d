//! The client as the server sees it: where outgoing messages go, and (handshake era) requests to
//! the client awaiting their answers.

use crate::protocol::jsonrpc::{Outgoing, to_raw};
use crate::protocol::{ErrorObject, RequestId};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Where a connection's outgoing frames go.
#[derive(Clone, Debug)]
pub(crate) struct Outbound {
    pub(crate) tx: mpsc::Sender<Outgoing>,
}

impl Outbound {
    pub(crate) async fn send(&self, message: Outgoing) -> bool {
        self.tx.send(message).await.is_ok()
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
    /// The client answered with a JSON-RPC error (or the request could not be made).
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
    pub(crate) async fn request<P: Serialize>(
        &self,
        method: &'static str,
        params: &P,
        timeout: Duration,
    ) -> Result<Value, PeerError> {
        let params = to_raw(params).map_err(PeerError::Client)?;
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
        let message = Outgoing::Request {
            id: id.clone(),
            method,
            params,
        };
        if !self.outbound.send(message).await {
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
