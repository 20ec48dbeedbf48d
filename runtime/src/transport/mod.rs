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
use crate::server::{Server, Session, Step};
use frames::{Frame, FrameReader};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Semaphore, mpsc};
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
    // Calls run up to `max_in_flight` at once; up to as many again wait their turn, admitted by
    // the reader, which keeps reading meanwhile (answers to back-channel questions must get
    // through). With both full, the reader stops reading: that is the backpressure.
    let permits = Arc::new(Semaphore::new(server.config.max_in_flight));
    let admission = Arc::new(Semaphore::new(server.config.max_in_flight * 2));
    let mut tasks = JoinSet::new();
    let principal: Option<Principal> = None;

    let result = loop {
        // Reap finished calls so the set does not grow with the connection's lifetime.
        while tasks.try_join_next().is_some() {}
        let frame = match frames.next().await {
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
                    let Ok(admitted) = admission.clone().acquire_owned().await else {
                        break Ok(());
                    };
                    let server = server.clone();
                    let out = outbound.clone();
                    let in_flight = in_flight.clone();
                    let principal = principal.clone();
                    let permits = permits.clone();
                    let peer = peer.clone();
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
            },
        }
    };
    // End of input: questions waiting for the client can no longer be answered; the rest of
    // what is in flight finishes, then the writer closes.
    peer.close();
    while tasks.join_next().await.is_some() {}
    drop(peer);
    drop(outbound);
    match writer_task.await {
        Ok(Ok(())) | Err(_) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "writer closed"),
    }
    result
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
