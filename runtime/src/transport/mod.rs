//! Transports: newline-delimited JSON-RPC over any byte stream (stdio, in-memory pipes).

#[cfg(feature = "http")]
pub(crate) mod auth;
pub(crate) mod frames;
#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "stdio")]
pub(crate) mod stdio;

use crate::context::{Outbound, Peer, Principal};
use crate::protocol::jsonrpc::{self, Inbound, encode_response};
use crate::protocol::{ErrorObject, RequestId};
use crate::server::{PendingCall, Server, Session, Step};
use frames::{Frame, FrameReader};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

type InFlight = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

/// Serves one connection until the reader reaches end of input, then lets the calls in flight
/// finish, flushes and returns.
pub(crate) async fn serve_connection<R, W>(server: Arc<Server>, reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Vec<u8>>(256);
    let writer_task = tokio::spawn(write_frames(writer, rx));
    let outbound = Outbound { tx };
    let peer = Peer::new(outbound.clone());
    let mut frames = FrameReader::new(reader, server.config.max_frame_bytes);
    let mut session = Session::new();
    let in_flight: InFlight = Arc::default();
    // Calls run up to `max_in_flight` at once; up to as many again are admitted and wait for a
    // slot. Beyond that, requests queue here in arrival order and the reader stops reading: that
    // is the backpressure. It keeps reading, though, while a running call waits for an answer from
    // the client (handshake era), or the answer would never get through: the queue then grows up
    // to `max_queued_bytes`, and requests beyond it are refused with a "busy" error.
    let permits = Arc::new(Semaphore::new(server.config.max_in_flight));
    let admission = Arc::new(Semaphore::new(server.config.max_in_flight * 2));
    let max_queued_bytes = server.config.max_frame_bytes.saturating_mul(8);
    let mut queue = Queue::default();
    let mut tasks = JoinSet::new();
    let starter = Starter {
        server: server.clone(),
        outbound: outbound.clone(),
        in_flight: in_flight.clone(),
        permits,
        peer: peer.clone(),
        principal: None,
    };

    let result = loop {
        // Reap finished calls so the set does not grow with the connection's lifetime.
        while tasks.try_join_next().is_some() {}
        // Start what waits, in arrival order, while there is room.
        while !queue.is_empty() {
            let Ok(slot) = admission.clone().try_acquire_owned() else {
                break;
            };
            if let Some(q) = queue.pop() {
                starter.start(&mut tasks, q, slot);
            }
        }
        let event = if queue.is_empty() {
            Event::Frame(frames.next().await)
        } else if !peer.awaiting_client() {
            // Backpressure: read nothing until a slot frees, unless a question goes out.
            tokio::select! {
                slot = admission.clone().acquire_owned() => Event::Slot(slot),
                () = peer.asked() => Event::Asked,
            }
        } else {
            // The client owes an answer: keep reading (`next` is cancel-safe) and start queued
            // calls as slots free.
            tokio::select! {
                slot = admission.clone().acquire_owned() => Event::Slot(slot),
                frame = frames.next() => Event::Frame(frame),
            }
        };
        let frame = match event {
            Event::Frame(frame) => frame,
            Event::Asked => continue,
            Event::Slot(slot) => {
                match (slot, queue.pop()) {
                    (Ok(slot), Some(q)) => starter.start(&mut tasks, q, slot),
                    (Err(_), _) => break Ok(()),
                    (Ok(_), None) => {}
                }
                continue;
            }
        };
        let frame = match frame {
            Ok(f) => f,
            Err(e) => break Err(e),
        };
        let bytes = match frame {
            Frame::Eof => break Ok(()),
            Frame::TooLarge(n) => {
                tracing::warn!(
                    bytes = n,
                    limit = server.config.max_frame_bytes,
                    "oversized frame refused"
                );
                let e = ErrorObject::invalid_request(format!(
                    "Invalid Request: message of {n} bytes exceeds the limit of {} bytes",
                    server.config.max_frame_bytes
                ));
                outbound.send(encode_response(None, Err(&e))).await;
                continue;
            }
            Frame::Line(bytes) => bytes,
        };
        match jsonrpc::classify(&bytes) {
            Inbound::Invalid { id, error } => {
                tracing::debug!(code = error.code, "invalid frame");
                outbound.send(encode_response(id.as_ref(), Err(&error))).await;
            }
            Inbound::Notification { method, params } => match method.as_str() {
                "notifications/cancelled" => {
                    let id = params
                        .as_ref()
                        .and_then(|p| p.get("requestId"))
                        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
                    if let Some(id) = id {
                        let token = in_flight.lock().ok().and_then(|m| m.get(&id).cloned());
                        if let Some(token) = token {
                            tracing::debug!(%id, "request cancelled by the client");
                            token.cancel();
                        }
                    }
                }
                other => tracing::trace!(method = other, "notification ignored"),
            },
            Inbound::Response { id, outcome } => {
                if !peer.deliver(&id, outcome) {
                    tracing::debug!(%id, "response to no request of ours; ignored");
                }
            }
            Inbound::Request { id, method, params } => match session.on_request(&server, &method, params) {
                Step::Reply(outcome) => {
                    outbound.send(encode_response(Some(&id), outcome.as_ref())).await;
                }
                Step::Call(call) => {
                    let token = CancellationToken::new();
                    let duplicate = match in_flight.lock() {
                        Ok(mut m) => {
                            if m.contains_key(&id) {
                                true
                            } else {
                                m.insert(id.clone(), token.clone());
                                false
                            }
                        }
                        Err(_) => false,
                    };
                    if duplicate {
                        let e = ErrorObject::invalid_request(format!(
                            "Invalid Request: id {id} is already in use by a request in flight"
                        ));
                        outbound.send(encode_response(Some(&id), Err(&e))).await;
                        continue;
                    }
                    let queued = Queued {
                        id,
                        call,
                        token,
                        bytes: bytes.len(),
                    };
                    if queue.is_empty()
                        && let Ok(slot) = admission.clone().try_acquire_owned()
                    {
                        starter.start(&mut tasks, queued, slot);
                    } else if queue.bytes + queued.bytes > max_queued_bytes {
                        tracing::warn!(id = %queued.id, queued = queue.len(), "request refused: too many waiting");
                        if let Ok(mut m) = in_flight.lock() {
                            m.remove(&queued.id);
                        }
                        let e = ErrorObject::internal(
                            "Server busy: too many requests are waiting while the client owes answers; retry later",
                        );
                        outbound.send(encode_response(Some(&queued.id), Err(&e))).await;
                    } else {
                        queue.push(queued);
                    }
                }
            },
        }
    };
    // End of input: questions waiting for the client can no longer be answered; what is queued
    // and in flight finishes, then the writer closes.
    peer.close();
    while let Some(q) = queue.pop() {
        let Ok(slot) = admission.clone().acquire_owned().await else {
            break;
        };
        starter.start(&mut tasks, q, slot);
    }
    while tasks.join_next().await.is_some() {}
    drop(starter);
    drop(peer);
    drop(outbound);
    match writer_task.await {
        Ok(Ok(())) | Err(_) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "writer closed"),
    }
    result
}

/// What woke the connection loop.
enum Event {
    Frame(std::io::Result<Frame>),
    /// A slot freed for the next queued call (an error once the semaphore is closed).
    Slot(Result<OwnedSemaphorePermit, tokio::sync::AcquireError>),
    /// A question went out: reading may have to resume.
    Asked,
}

/// A tool call read but not started yet.
struct Queued {
    id: RequestId,
    call: PendingCall,
    token: CancellationToken,
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
    fn push(&mut self, q: Queued) {
        self.bytes += q.bytes;
        self.calls.push_back(q);
    }
    fn pop(&mut self) -> Option<Queued> {
        let q = self.calls.pop_front()?;
        self.bytes -= q.bytes;
        Some(q)
    }
}

/// What every call of one connection shares.
struct Starter {
    server: Arc<Server>,
    outbound: Outbound,
    in_flight: InFlight,
    permits: Arc<Semaphore>,
    peer: Peer,
    principal: Option<Principal>,
}

impl Starter {
    /// Spawns an admitted call: it waits for a running slot, then runs until it finishes or is
    /// cancelled, and answers unless cancelled.
    fn start(&self, tasks: &mut JoinSet<()>, q: Queued, admitted: OwnedSemaphorePermit) {
        let Queued { id, call, token, .. } = q;
        let server = self.server.clone();
        let out = self.outbound.clone();
        let in_flight = self.in_flight.clone();
        let principal = self.principal.clone();
        let permits = self.permits.clone();
        let peer = self.peer.clone();
        tasks.spawn(async move {
            let run = async {
                let _running = permits.acquire_owned().await.ok()?;
                Some(
                    call.run(&server, id.clone(), out.clone(), Some(peer), token.clone(), principal)
                        .await,
                )
            };
            // Cancellation wins over a result that became ready at the same time.
            let outcome = tokio::select! {
                biased;
                () = token.cancelled() => None,
                v = run => v,
            };
            if let Ok(mut m) = in_flight.lock() {
                m.remove(&id);
            }
            // A cancelled request gets no response.
            if let Some(outcome) = outcome {
                out.send(encode_response(Some(&id), outcome.as_ref())).await;
            }
            drop(admitted);
        });
    }
}

async fn write_frames<W: AsyncWrite + Unpin>(writer: W, mut rx: mpsc::Receiver<Vec<u8>>) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(64 * 1024, writer);
    while let Some(frame) = rx.recv().await {
        w.write_all(&frame).await?;
        while let Ok(more) = rx.try_recv() {
            w.write_all(&more).await?;
        }
        w.flush().await?;
    }
    w.shutdown().await.ok();
    Ok(())
}
