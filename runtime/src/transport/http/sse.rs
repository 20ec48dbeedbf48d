//! Server-sent events, each message as one `message` event: a call's notifications and requests
//! to the client, then its response (the call runs in its own task; dropping the stream, as when
//! the client went away, cancels it); and a session's GET stream of notifications that answer no
//! request.

use super::Body;
use crate::dispatch::Admitted;
use crate::peer::{Outbound, Peer};
use crate::principal::Principal;
use crate::protocol::jsonrpc::Outgoing;
use bytes::Bytes;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Cancels the call when the response stream is dropped.
struct CancelOnDrop(CancellationToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Runs `call` and streams what it sends, ending with its response; an SSE comment every
/// `keepalive` when nothing else goes (a `subscriptions/listen` stream, open for long), so
/// proxies keep it and a client that went away is noticed.
pub(super) fn stream(
    call: Admitted,
    peer: impl FnOnce(&Outbound) -> Option<Peer>,
    principal: Option<Principal>,
    keepalive: Option<Duration>,
) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Outgoing>(64);
    let outbound = Outbound { tx };
    let guard = CancelOnDrop(call.token());
    let peer = peer(&outbound);
    tokio::spawn(async move {
        if let Some(reply) = call.run(outbound.clone(), peer, principal).await {
            outbound.send(reply).await;
        }
    });
    // Without a keep-alive, the first tick never comes.
    let every = keepalive.unwrap_or(Duration::from_secs(365 * 24 * 3600));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let events = futures_util::stream::unfold((Some(rx), tick, guard), |(mut rx, mut tick, guard)| async move {
        let message = tokio::select! {
            message = rx.as_mut()?.recv() => message?,
            _ = tick.tick() => {
                let comment = Bytes::from_static(b": keep-alive\n\n");
                return Some((Ok(Frame::data(comment)), (rx, tick, guard)));
            }
        };
        let item = Ok::<_, Infallible>(Frame::data(event(&message)));
        // The response ends the stream.
        if message.is_response() {
            rx = None;
        }
        Some((item, (rx, tick, guard)))
    });
    response(BodyExt::boxed(StreamBody::new(events)))
}

/// A session's GET stream (handshake era): the messages posted to its mailbox, which `rx`
/// receives, for as long as the client keeps it open and the mailbox keeps it attached; an SSE
/// comment every `keepalive` when nothing else goes. It never carries a response. `on_close` is
/// dropped with the stream.
pub(super) fn listen<G: Send + Sync + 'static>(
    rx: mpsc::Receiver<Outgoing>,
    keepalive: Duration,
    on_close: G,
) -> Response<Body> {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let events = futures_util::stream::unfold((rx, tick, on_close), |(mut rx, mut tick, on_close)| async move {
        let bytes = tokio::select! {
            message = rx.recv() => event(&message?),
            _ = tick.tick() => Bytes::from_static(b": keep-alive\n\n"),
        };
        Some((Ok::<_, Infallible>(Frame::data(bytes)), (rx, tick, on_close)))
    });
    response(BodyExt::boxed(StreamBody::new(events)))
}

/// One message as one `message` event.
fn event(message: &Outgoing) -> Bytes {
    let mut event = b"event: message\ndata: ".to_vec();
    message.encode_into(&mut event);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// An SSE response around `body`.
fn response(body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}
