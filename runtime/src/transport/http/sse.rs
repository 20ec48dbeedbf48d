//! Server-sent events: a call's notifications and requests to the client, then its response,
//! each as one `message` event. The call runs in its own task; dropping the stream (the client
//! went away) cancels it.

use super::Body;
use crate::context::Principal;
use crate::dispatch::Admitted;
use crate::peer::{Outbound, Peer};
use crate::protocol::jsonrpc::Outgoing;
use bytes::Bytes;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use std::convert::Infallible;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Cancels the call when the response stream is dropped.
struct CancelOnDrop(CancellationToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Runs `call` and streams what it sends, ending with its response.
pub(super) fn stream(
    call: Admitted,
    peer: impl FnOnce(&Outbound) -> Option<Peer>,
    principal: Option<Principal>,
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
    let events = futures_util::stream::unfold((Some(rx), guard), |(mut rx, guard)| async move {
        let message = rx.as_mut()?.recv().await?;
        let mut event = b"event: message\ndata: ".to_vec();
        message.encode_into(&mut event);
        event.extend_from_slice(b"\n\n");
        let item = Ok::<_, Infallible>(Frame::data(Bytes::from(event)));
        // The response ends the stream.
        if message.is_response() {
            rx = None;
        }
        Some((item, (rx, guard)))
    });
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(events)));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}
