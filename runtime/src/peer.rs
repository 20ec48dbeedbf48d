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
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

/// Where a connection's outgoing frames go.
#[derive(Clone, Debug)]
pub(crate) struct Outbound {
    pub(crate) tx: mpsc::Sender<Outgoing>,
    /// Closes the connection's stream early (a handshake-era HTTP stream that can be resumed);
    /// `None` elsewhere.
    pub(crate) closer: Option<StreamCloser>,
}

/// Closes one HTTP stream's connection early ([`Outbound::close_stream`]).
#[derive(Clone)]
pub(crate) struct StreamCloser(pub(crate) Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for StreamCloser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamCloser")
    }
}

impl Outbound {
    pub(crate) fn new(tx: mpsc::Sender<Outgoing>) -> Self {
        Self { tx, closer: None }
    }

    /// Closes the stream this goes to, if it can be closed early and resumed; `false` if not.
    pub(crate) fn close_stream(&self) -> bool {
        match &self.closer {
            Some(c) => {
                (c.0)();
                true
            }
            None => false,
        }
    }

    pub(crate) async fn send(&self, message: Outgoing) -> bool {
        self.tx.send(message).await.is_ok()
    }
}

/// Where one connection's or session's notifications that answer no request go
/// (`notifications/resources/updated`): the connection's outgoing queue on stdio and in-memory
/// pipes, the session's GET stream while one is open on HTTP, and nowhere otherwise. Clones share
/// one mailbox. Posting never waits: a full queue drops the message.
#[derive(Clone, Debug, Default)]
pub(crate) struct Mailbox(Arc<Mutex<MailboxState>>);

#[derive(Debug, Default)]
struct MailboxState {
    /// The queue messages go to now, and the number of its attachment.
    open: Option<(u64, mpsc::Sender<Outgoing>)>,
    /// Attachments made so far.
    attachments: u64,
    /// The session ended: nothing attaches any more.
    closed: bool,
}

/// What became of a posted message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Posted {
    /// Queued for the client.
    Sent,
    /// The queue is full (the client reads too slowly): dropped.
    Full,
    /// No queue is open (no GET stream, or the connection closed): dropped.
    Unheard,
}

impl Mailbox {
    /// A mailbox that posts to a connection's outgoing queue for as long as it lives.
    pub(crate) fn attached(outbound: &Outbound) -> Self {
        let mailbox = Self::default();
        mailbox.attach(outbound.tx.clone());
        mailbox
    }

    /// Later messages go to `tx`. A queue attached before is let go, so the stream reading it
    /// ends once it has sent what it holds. Returns the attachment's number, for
    /// [`Mailbox::detach`]; `None` once the mailbox is closed.
    pub(crate) fn attach(&self, tx: mpsc::Sender<Outgoing>) -> Option<u64> {
        let mut state = self.0.lock().ok()?;
        if state.closed {
            return None;
        }
        state.attachments += 1;
        let n = state.attachments;
        state.open = Some((n, tx));
        Some(n)
    }

    /// The stream of attachment `n` is gone; nothing changes if another one took its place.
    pub(crate) fn detach(&self, n: u64) {
        if let Ok(mut state) = self.0.lock()
            && state.open.as_ref().is_some_and(|(m, _)| *m == n)
        {
            state.open = None;
        }
    }

    /// The session ended: the open queue is let go (its stream ends) and nothing attaches again.
    pub(crate) fn close(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.closed = true;
            state.open = None;
        }
    }

    /// Whether a queue is attached and its reader still there.
    pub(crate) fn is_open(&self) -> bool {
        self.0
            .lock()
            .is_ok_and(|s| s.open.as_ref().is_some_and(|(_, tx)| !tx.is_closed()))
    }

    /// Queues `message` if a queue is open and has room; never waits.
    pub(crate) fn post(&self, message: Outgoing) -> Posted {
        let Ok(state) = self.0.lock() else {
            return Posted::Unheard;
        };
        match state.open.as_ref().map(|(_, tx)| tx.try_send(message)) {
            Some(Ok(())) => Posted::Sent,
            Some(Err(mpsc::error::TrySendError::Full(_))) => Posted::Full,
            Some(Err(mpsc::error::TrySendError::Closed(_))) | None => Posted::Unheard,
        }
    }
}

type Waiters = Mutex<Option<HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>>>;

/// The client, as a handshake-era connection lets the server call it back: requests with ids of
/// the server's own, answered by responses the transport routes here.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    outbound: Outbound,
    /// What every handle of the connection (or session) shares: one count to clone, as each call
    /// takes a handle of its own.
    shared: Arc<Shared>,
    /// The running slot of the one call this handle belongs to, left while it waits (stdio).
    slot: Option<Arc<Slot>>,
}

/// The part of a [`Peer`] its handles share.
#[derive(Debug)]
struct Shared {
    waiters: Waiters,
    next_id: AtomicI64,
    /// Woken each time a question goes out, so a transport that stopped reading can start again:
    /// the answer must get through.
    asked: tokio::sync::Notify,
    /// Questions of this connection or session waiting for their answers, bounded
    /// ([`crate::Server::max_waiting`]).
    waiting: Semaphore,
    max_waiting: usize,
    /// The client sent `notifications/initialized`: requests may go out (lifecycle: "The server
    /// SHOULD NOT send requests other than pings and logging before receiving the initialized
    /// notification").
    initialized: tokio::sync::watch::Sender<bool>,
    /// Closed because the server is shutting down ([`Peer::shut_down`]), not because the client
    /// went away: waiting questions fail saying so.
    stopping: std::sync::atomic::AtomicBool,
}

/// A call's running slot (and its place in the admission queue), given up while the call waits
/// for the client so that other calls can run, and taken again, waiting if need be, once the
/// answer is in.
#[derive(Debug)]
pub(crate) struct Slot {
    running: Arc<Semaphore>,
    held: Mutex<SlotState>,
}

#[derive(Debug, Default)]
struct SlotState {
    /// Questions of this call out now.
    out: usize,
    /// Its running slot, and its admission (kept in place: a `Vec` of them cost an allocation
    /// per call).
    running: Option<OwnedSemaphorePermit>,
    admitted: Option<OwnedSemaphorePermit>,
}

impl Slot {
    /// A slot drawn from `running`; its permits are handed over by [`Slot::hold`].
    pub(crate) fn new(running: Arc<Semaphore>) -> Arc<Self> {
        Arc::new(Self {
            running,
            held: Mutex::default(),
        })
    }

    /// The permits the call runs under: its running slot, and its admission (until its first
    /// question goes out).
    pub(crate) fn hold(&self, running: OwnedSemaphorePermit, admitted: Option<OwnedSemaphorePermit>) {
        if let Ok(mut h) = self.held.lock() {
            h.running = Some(running);
            if admitted.is_some() {
                h.admitted = admitted;
            }
        }
    }

    /// The call's admission, handed over after its first poll (a call done by then gives it
    /// back to its connection instead): held until its first question goes out, or let go now
    /// if one is out already.
    pub(crate) fn admit(&self, admitted: OwnedSemaphorePermit) {
        if let Ok(mut h) = self.held.lock()
            && h.out == 0
            && h.running.is_some()
        {
            h.admitted = Some(admitted);
        }
    }

    /// A question goes out: the first one gives the permits back.
    fn leave(self: &Arc<Self>) -> Away {
        if let Ok(mut h) = self.held.lock() {
            h.out += 1;
            if h.out == 1 {
                h.running = None;
                h.admitted = None;
            }
        }
        Away(self.clone())
    }
}

/// A question of a call with a [`Slot`] is out; [`Away::back`] takes a running slot again.
struct Away(Arc<Slot>);

impl Away {
    async fn back(self) {
        let last = self.0.held.lock().is_ok_and(|h| h.out == 1);
        if last && let Ok(p) = self.0.running.clone().acquire_owned().await {
            self.0.hold(p, None);
        }
    }
}

impl Drop for Away {
    fn drop(&mut self) {
        if let Ok(mut h) = self.0.held.lock() {
            h.out = h.out.saturating_sub(1);
        }
    }
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
    /// The server is shutting down.
    Stopping,
    /// As many questions as may wait at once are waiting already; this one was not sent.
    Busy(usize),
    /// The client did not send `notifications/initialized` in time: nothing was sent.
    NotInitialized,
}

/// Removes a waiter when the request is abandoned (timeout, cancellation of the call), and then
/// tells the client it need not answer (cancellation: a party that stops waiting "SHOULD" send
/// `notifications/cancelled`), with `reason`. A request answered, or a connection closed, sends
/// nothing.
struct WaiterGuard<'a> {
    waiters: &'a Waiters,
    id: RequestId,
    outbound: &'a Outbound,
    reason: &'static str,
}

impl Drop for WaiterGuard<'_> {
    fn drop(&mut self) {
        let abandoned = match self.waiters.lock() {
            Ok(mut w) => w.as_mut().is_some_and(|map| map.remove(&self.id).is_some()),
            Err(_) => false,
        };
        if abandoned {
            let params = CancelledParams {
                request_id: &self.id,
                reason: self.reason,
            };
            if let Ok(params) = to_raw(&params) {
                // Never waits: a full or closed queue loses it, as the request is over anyway.
                let _ = self.outbound.tx.try_send(Outgoing::Notification {
                    method: crate::protocol::messages::CANCELLED,
                    params,
                });
            }
        }
    }
}

/// The params of the `notifications/cancelled` the server sends for its own request.
#[derive(Serialize)]
struct CancelledParams<'a> {
    #[serde(rename = "requestId")]
    request_id: &'a RequestId,
    reason: &'static str,
}

impl Peer {
    /// A peer on which at most `max_waiting` questions wait at once.
    pub(crate) fn new(outbound: Outbound, max_waiting: usize) -> Self {
        Self {
            outbound,
            shared: Arc::new(Shared {
                waiters: Mutex::new(Some(HashMap::new())),
                next_id: AtomicI64::new(1),
                asked: tokio::sync::Notify::new(),
                waiting: Semaphore::new(max_waiting.max(1)),
                max_waiting: max_waiting.max(1),
                initialized: tokio::sync::watch::Sender::new(false),
                stopping: std::sync::atomic::AtomicBool::new(false),
            }),
            slot: None,
        }
    }

    /// The client sent `notifications/initialized`: requests waiting for it go out.
    pub(crate) fn initialized(&self) {
        self.shared.initialized.send_replace(true);
    }

    /// Resolves once the client sent `notifications/initialized`.
    pub(crate) async fn wait_initialized(&self) {
        let mut ready = self.shared.initialized.subscribe();
        let _ = ready.wait_for(|done| *done).await;
    }

    /// The handle of one call, which leaves `slot` while its questions wait.
    pub(crate) fn for_call(&self, slot: Arc<Slot>) -> Self {
        Self {
            slot: Some(slot),
            ..self.clone()
        }
    }

    /// A peer that writes to `outbound` (one HTTP response stream) but shares its waiting
    /// requests and id space with `other` (the session): answers arrive as separate POSTs.
    #[cfg(feature = "http")]
    pub(crate) fn sharing(other: &Peer, outbound: Outbound) -> Self {
        Self {
            outbound,
            shared: other.shared.clone(),
            slot: None,
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
        // Nothing goes out before the client said it is initialized (it may still be setting
        // up); it has the same time to say so as to answer.
        let mut ready = self.shared.initialized.subscribe();
        if tokio::time::timeout(timeout, ready.wait_for(|done| *done))
            .await
            .is_err()
        {
            return Err(PeerError::NotInitialized);
        }
        let Ok(_waiting) = self.shared.waiting.try_acquire() else {
            return Err(PeerError::Busy(self.shared.max_waiting));
        };
        let id = RequestId::from(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        match self.shared.waiters.lock() {
            Ok(mut w) => match w.as_mut() {
                Some(map) => {
                    map.insert(id.clone(), tx);
                }
                None if self.shared.stopping.load(Ordering::Relaxed) => return Err(PeerError::Stopping),
                None => return Err(PeerError::Closed),
            },
            Err(_) => return Err(PeerError::Closed),
        }
        // The call leaves its slot only for a question that is out: one refused above keeps it,
        // and one that cannot be sent takes it again before the call goes on.
        let away = self.slot.as_ref().map(Slot::leave);
        let mut guard = WaiterGuard {
            waiters: &self.shared.waiters,
            id: id.clone(),
            outbound: &self.outbound,
            reason: "the server stopped waiting: the call it asked for was cancelled",
        };
        self.shared.asked.notify_one();
        let message = Outgoing::Request {
            id: id.clone(),
            method,
            params,
        };
        if !self.outbound.send(message).await {
            drop(guard);
            drop(_waiting);
            if let Some(away) = away {
                away.back().await;
            }
            return Err(PeerError::Closed);
        }
        let answer = tokio::time::timeout(timeout, rx).await;
        if answer.is_err() {
            guard.reason = "the server stopped waiting: no answer in time";
        }
        drop(guard);
        drop(_waiting);
        if let Some(away) = away {
            away.back().await;
        }
        match answer {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(e))) => Err(PeerError::Client(e)),
            Ok(Err(_)) if self.shared.stopping.load(Ordering::Relaxed) => Err(PeerError::Stopping),
            Ok(Err(_)) => Err(PeerError::Closed),
            Err(_) => Err(PeerError::Timeout),
        }
    }

    /// Sends a notification to the client (one about a request it answered, e.g.
    /// `notifications/elicitation/complete`); a closed connection loses it.
    pub(crate) async fn notify<P: Serialize>(&self, method: &'static str, params: &P) {
        if let Ok(params) = to_raw(params) {
            self.outbound.send(Outgoing::Notification { method, params }).await;
        }
    }

    /// Whether a request to the client is waiting for its answer.
    pub(crate) fn awaiting_client(&self) -> bool {
        self.shared
            .waiters
            .lock()
            .is_ok_and(|w| w.as_ref().is_some_and(|m| !m.is_empty()))
    }

    /// Resolves once a question went out since the last call (or at once if one went out before
    /// and nobody was waiting).
    pub(crate) async fn asked(&self) {
        self.shared.asked.notified().await;
    }

    /// Hands a response to its waiter; `false` when no request of ours has that id.
    pub(crate) fn deliver(&self, id: &RequestId, outcome: Result<Value, ErrorObject>) -> bool {
        let waiter = self
            .shared
            .waiters
            .lock()
            .ok()
            .and_then(|mut w| w.as_mut().and_then(|m| m.remove(id)));
        match waiter {
            Some(tx) => tx.send(outcome).is_ok(),
            None => false,
        }
    }

    /// The server is shutting down: as [`Peer::close`], and the questions fail saying so.
    #[cfg(feature = "http")]
    pub(crate) fn shut_down(&self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        self.close();
    }

    /// The client is gone: every waiting request fails now, and new ones fail at once.
    pub(crate) fn close(&self) {
        if let Ok(mut w) = self.shared.waiters.lock() {
            w.take();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A question that cannot go out (the connection closed) does not let its call run on
    /// outside its running slot: the call keeps its slot, or takes it again, before going on.
    #[tokio::test]
    async fn a_question_that_cannot_go_out_keeps_its_call_in_its_slot() {
        let running = Arc::new(Semaphore::new(1));
        // The writer is gone: sending fails after the question was registered.
        let (tx, rx) = mpsc::channel(4);
        drop(rx);
        let peer = Peer::new(Outbound::new(tx), 8);
        peer.initialized();
        let slot = Slot::new(running.clone());
        let Ok(permit) = running.clone().try_acquire_owned() else {
            panic!("a fresh semaphore has its permit");
        };
        slot.hold(permit, None);
        let call = peer.for_call(slot.clone());
        let asked = call
            .request("elicitation/create", &serde_json::json!({}), Duration::from_secs(5))
            .await;
        assert!(matches!(asked, Err(PeerError::Closed)), "{asked:?}");
        assert_eq!(running.available_permits(), 0, "the call holds its running slot again");
        // Closed before asking: refused without leaving the slot.
        peer.close();
        let asked = call
            .request("elicitation/create", &serde_json::json!({}), Duration::from_secs(5))
            .await;
        assert!(matches!(asked, Err(PeerError::Closed)), "{asked:?}");
        assert_eq!(running.available_permits(), 0, "the call never left its running slot");
        drop(call);
        drop(slot);
        assert_eq!(
            running.available_permits(),
            1,
            "the slot gives its permit back with the call"
        );
    }
}
