//! One newline-delimited JSON-RPC connection (stdio, an in-memory pipe): read frames, hand them to
//! the dispatcher, write what comes back, with backpressure.
//!
//! Reading and writing run in the connection's own task. A call that completes when first
//! polled (most tools that ask nothing) is answered there too, without a hop to another task or
//! thread; a call that waits is spawned and answers through the same writer.

use super::frames::{Frame, FrameReader};
use crate::dispatch::{Admitted, Dispatch, Dispatcher};
use crate::peer::{Mailbox, Outbound, Peer, Slot};
use crate::protocol::ErrorObject;
use crate::protocol::inbound::classify_knowing;
use crate::protocol::jsonrpc::Outgoing;
use crate::server::rate::CallerKey;
use crate::server::{Server, Session};
use crate::throttle::Throttle;
use futures_util::FutureExt;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;

/// Serves one connection until the reader reaches end of input, then lets the calls in flight
/// finish, flushes and returns.
pub(crate) async fn serve_connection<R, W>(server: Arc<Server>, reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Outgoing>(256);
    // The writer is a task of its own, not a second branch of this one: a response handed to it
    // then wakes another task, which the worker runs next on the same thread. Woken from within
    // itself, a task would be put back in the runtime's shared queue with another worker
    // notified (a `futex` or two), and a lone call would often change threads
    // (tests/syscalls.rs).
    let writer = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(write_messages(writer, rx)));
    let read = read_messages(server, reader, Outbound::new(tx)).await;
    match writer.await {
        Ok(Err(e)) => tracing::debug!(error = %e, "writer closed"),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        _ => {}
    }
    read
}

/// The reading half: frames in, dispatched; returns at end of input once every call finished.
async fn read_messages<R: AsyncRead + Unpin>(
    server: Arc<Server>,
    reader: R,
    outbound: Outbound,
) -> std::io::Result<()> {
    let peer = Peer::new(outbound.clone(), server.config.max_waiting);
    let dispatcher = Dispatcher::connection(server.clone());
    // Its calls' rate is counted for the connection: stdio carries no token.
    static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let caller = CallerKey::Connection(CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let mut frames = FrameReader::new(reader, server.config.max_frame_bytes);
    // Notifications for its subscriptions go on the connection too, never waiting for room.
    let mut session = Session::with_mailbox(Mailbox::attached(&outbound));
    // A copy of a frame whose known `_meta` is skipped (at most `KNOWN_META_MAX_FRAME` bytes).
    let mut scratch = String::new();
    // Calls run up to `max_in_flight` at once; up to as many again are admitted and wait for a
    // slot. Beyond that, requests queue here in arrival order and the reader stops reading: that
    // is the backpressure. It keeps reading, though, while a running call waits for an answer from
    // the client (handshake era), or the answer would never get through: the queue then grows up
    // to `max_queued_bytes`, and requests beyond it are refused with a "busy" error.
    let admission = Arc::new(Semaphore::new(server.config.max_in_flight * 2));
    // The admission of a call that was done at once, kept for the next one: only this loop draws
    // on `admission`, so keeping one changes no bound, and saves the semaphore's lock that each
    // release takes.
    let mut spare: Option<OwnedSemaphorePermit> = None;
    let max_queued_bytes = server.config.max_frame_bytes.saturating_mul(8);
    let mut queue = Queue::default();
    let mut tasks = JoinSet::new();
    let starter = Starter {
        outbound: outbound.clone(),
        permits: Arc::new(Semaphore::new(server.config.max_in_flight)),
        peer: peer.clone(),
    };
    // A handshake-era client is pinged while it is connected; one that stops answering is gone,
    // and the connection ends (`Server::ping_interval`).
    let dead = tokio_util::sync::CancellationToken::new();
    let _pinger = server.config.ping_interval.map(|every| {
        let (peer, dead) = (peer.clone(), dead.clone());
        tokio_util::task::AbortOnDropHandle::new(tokio::spawn(async move {
            pings(peer, every).await;
            dead.cancel();
        }))
    });

    let result = loop {
        // Reap finished calls so the set does not grow with the connection's lifetime.
        while tasks.try_join_next().is_some() {}
        // Start what waits, in arrival order, while there is room.
        while !queue.is_empty() {
            let Some(slot) = spare.take().or_else(|| admission.clone().try_acquire_owned().ok()) else {
                break;
            };
            if let Some(call) = queue.pop()
                && let Some(reply) = starter.start(&mut tasks, call, slot, &mut spare)
            {
                outbound.send(reply).await;
            }
        }
        let event = if queue.is_empty() {
            tokio::select! {
                frame = frames.next() => Event::Frame(frame),
                () = dead.cancelled() => Event::Dead,
            }
        } else if !peer.awaiting_client() {
            // Backpressure: read nothing until a slot frees, unless a question goes out.
            tokio::select! {
                slot = admission.clone().acquire_owned() => Event::Slot(slot),
                () = peer.asked() => Event::Asked,
                () = dead.cancelled() => Event::Dead,
            }
        } else {
            // The client owes an answer: keep reading (`next` is cancel-safe) and start queued
            // calls as slots free.
            tokio::select! {
                slot = admission.clone().acquire_owned() => Event::Slot(slot),
                frame = frames.next() => Event::Frame(frame),
                () = dead.cancelled() => Event::Dead,
            }
        };
        let frame = match event {
            Event::Frame(frame) => frame,
            Event::Asked => continue,
            Event::Dead => {
                tracing::warn!("the client answered no ping in time; ending the connection");
                // Questions waiting for it fail now; the calls in flight end.
                peer.close();
                dispatcher.cancel_all();
                break Ok(());
            }
            Event::Slot(slot) => {
                match (slot, queue.pop()) {
                    (Ok(slot), Some(call)) => {
                        if let Some(reply) = starter.start(&mut tasks, call, slot, &mut spare) {
                            outbound.send(reply).await;
                        }
                    }
                    (Err(_), _) => break Ok(()),
                    (Ok(_), None) => {}
                }
                continue;
            }
        };
        let bytes = match frame {
            Err(e) => break Err(e),
            Ok(Frame::Eof) => break Ok(()),
            Ok(Frame::TooLarge(n)) => {
                let limit = server.config.max_frame_bytes;
                static OVERSIZED: Throttle = Throttle::new();
                if let Some(left_out) = OVERSIZED.admit() {
                    tracing::warn!(bytes = n, limit, left_out, "oversized frame refused");
                }
                let e = ErrorObject::invalid_request(format!(
                    "Invalid Request: message of {n} bytes exceeds the limit of {limit} bytes"
                ));
                outbound.send(Outgoing::error(None, e)).await;
                continue;
            }
            Ok(Frame::Line(bytes)) => bytes,
        };
        // The envelope the client sent last is likely in this frame again: found, not read.
        let inbound = classify_knowing(&bytes, session.known_meta(), &mut scratch);
        // No principal: stdio carries no token.
        let mut dispatched = dispatcher.dispatch(&mut session, Some(&peer), None, inbound, None);
        // A caller over its rate: refused before anything runs. (Looked at where it stands: a
        // call is a few hundred bytes, and each move of it is a copy.)
        let refused = match &dispatched {
            Dispatch::Call(call) => call
                .over_rate(&caller)
                .err()
                .map(|(e, _)| Outgoing::error(Some(call.id().clone()), e)),
            _ => None,
        };
        if let Some(reply) = refused {
            dispatched = Dispatch::Reply(reply);
        }
        let frame_bytes = bytes.len();
        frames.recycle(bytes);
        match dispatched {
            Dispatch::Done => {}
            Dispatch::Reply(message) => {
                outbound.send(message).await;
            }
            Dispatch::Forbidden(id, forbidden) => {
                outbound.send(Outgoing::error(Some(id), forbidden.error())).await;
            }
            Dispatch::Call(call) => {
                if queue.is_empty()
                    && let Some(slot) = spare.take().or_else(|| admission.clone().try_acquire_owned().ok())
                {
                    if let Some(reply) = starter.start(&mut tasks, call, slot, &mut spare) {
                        outbound.send(reply).await;
                    }
                } else if queue.bytes + frame_bytes > max_queued_bytes {
                    let id = call.id().clone();
                    static BUSY: Throttle = Throttle::new();
                    if let Some(left_out) = BUSY.admit() {
                        tracing::warn!(%id, queued = queue.len(), left_out, "request refused: too many waiting");
                    }
                    drop(call);
                    let e = ErrorObject::internal(
                        "Server busy: too many requests are waiting while the client owes answers; retry later",
                    );
                    outbound.send(Outgoing::error(Some(id), e)).await;
                } else {
                    queue.push(call, frame_bytes);
                }
            }
        }
    };
    // End of input: questions waiting for the client can no longer be answered, and its
    // subscriptions end; what is queued and in flight finishes, then the writer closes (when the
    // last sender is dropped).
    peer.close();
    session.end();
    while let Some(call) = queue.pop() {
        let slot = match spare.take() {
            Some(slot) => slot,
            None => match admission.clone().acquire_owned().await {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        if let Some(reply) = starter.start(&mut tasks, call, slot, &mut spare) {
            outbound.send(reply).await;
        }
    }
    while tasks.join_next().await.is_some() {}
    result
}

/// What woke the connection loop.
enum Event {
    Frame(std::io::Result<Frame>),
    /// A slot freed for the next queued call (an error once the semaphore is closed).
    Slot(Result<OwnedSemaphorePermit, tokio::sync::AcquireError>),
    /// A question went out: reading may have to resume.
    Asked,
    /// The client answered no ping in time.
    Dead,
}

/// Pings the client every `every` once it is initialized (lifecycle: "Implementations SHOULD
/// periodically issue pings to detect connection health"); returns when one goes unanswered for
/// `every`, or the connection closed. An error answer is an answer: the client is there.
async fn pings(peer: Peer, every: std::time::Duration) {
    peer.wait_initialized().await;
    loop {
        tokio::time::sleep(every).await;
        let answered = peer
            .request("ping", &crate::protocol::messages::EmptyResult {}, every)
            .await;
        if let Err(
            crate::peer::PeerError::Timeout | crate::peer::PeerError::Closed | crate::peer::PeerError::Stopping,
        ) = answered
        {
            return;
        }
    }
}

/// A tool call admitted but not started yet.
struct Queued {
    call: Admitted,
    /// The size of its frame, which bounds the queue.
    bytes: usize,
}

#[derive(Default)]
struct Queue {
    calls: VecDeque<Queued>,
    bytes: usize,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }
    fn len(&self) -> usize {
        self.calls.len()
    }
    /// Queues `call`, whose frame was `bytes` long.
    fn push(&mut self, call: Admitted, bytes: usize) {
        self.bytes += bytes;
        self.calls.push_back(Queued { call, bytes });
    }
    fn pop(&mut self) -> Option<Admitted> {
        let q = self.calls.pop_front()?;
        self.bytes -= q.bytes;
        Some(q.call)
    }
}

/// What every call of one connection shares.
struct Starter {
    outbound: Outbound,
    /// Running slots (`max_in_flight`).
    permits: Arc<Semaphore>,
    peer: Peer,
}

impl Starter {
    /// Starts an admitted call. With a running slot free, it is polled once here: a call that is
    /// already done returns its response, for the caller to send without a task, and its
    /// admission in `spare`; one that waits goes on in its own task. Without one, it runs in its
    /// own task once a slot frees.
    #[must_use = "the response of a call that completed at once must be sent"]
    fn start(
        &self,
        tasks: &mut JoinSet<()>,
        call: Admitted,
        admitted: OwnedSemaphorePermit,
        spare: &mut Option<OwnedSemaphorePermit>,
    ) -> Option<Outgoing> {
        let out = self.outbound.clone();
        // The call holds its permits through its slot, and leaves them while it waits for the
        // client; they are given back when the last handle on the slot goes, with the call.
        let slot = Slot::new(self.permits.clone());
        let peer = self.peer.for_call(slot.clone());
        let Ok(running) = self.permits.clone().try_acquire_owned() else {
            // No running slot: it runs in its own task once one frees (its time counted from
            // then).
            let permits = self.permits.clone();
            tasks.spawn(async move {
                let Ok(running) = permits.acquire_owned().await else {
                    return;
                };
                slot.hold(running, Some(admitted));
                answer(call.run(out.clone(), Some(peer), None), out, slot).await;
            });
            return None;
        };
        let mut run = call.run(out.clone(), Some(peer), None);
        slot.hold(running, None);
        // Polled here, where it stands: a call that is done at once moves nowhere, and one that
        // waits moves into its task as what is left of it (the call's future is `Unpin`).
        let mut cx = std::task::Context::from_waker(futures_util::task::noop_waker_ref());
        match std::panic::catch_unwind(AssertUnwindSafe(|| run.poll_unpin(&mut cx))) {
            Ok(std::task::Poll::Ready(reply)) => {
                *spare = Some(admitted);
                reply
            }
            // A panic the call's own guards did not catch: the call is dropped, unanswered, as
            // a panicked task would be.
            Err(_) => {
                *spare = Some(admitted);
                None
            }
            Ok(std::task::Poll::Pending) => {
                slot.admit(admitted);
                match run.into_waiting() {
                    Ok(waiting) => tasks.spawn(answer(waiting, out, slot)),
                    Err(run) => tasks.spawn(answer(run, out, slot)),
                };
                None
            }
        }
    }
}

/// Sends the response of a call that goes on in its own task, once it has one; its slot goes
/// with it (a panic of the call is its end, unanswered).
async fn answer<F: Future<Output = Option<Outgoing>>>(run: F, out: Outbound, slot: Arc<Slot>) {
    if let Ok(Some(reply)) = AssertUnwindSafe(run).catch_unwind().await {
        out.send(reply).await;
    }
    drop(slot);
}

/// The writing half: each message is encoded and framed by a newline; the buffer is flushed
/// whenever no more messages are waiting.
async fn write_messages<W: AsyncWrite + Unpin>(writer: W, mut rx: mpsc::Receiver<Outgoing>) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(64 * 1024, writer);
    let mut frame = Vec::with_capacity(512);
    while let Some(message) = rx.recv().await {
        let mut next = Some(message);
        while let Some(message) = next {
            frame.clear();
            message.encode_into(&mut frame);
            frame.push(b'\n');
            w.write_all(&frame).await?;
            next = rx.try_recv().ok();
        }
        w.flush().await?;
    }
    w.shutdown().await.ok();
    Ok(())
}
