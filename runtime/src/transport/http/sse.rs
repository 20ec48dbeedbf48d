//! Server-sent events, each message as one `message` event: a call's notifications and requests
//! to the client, then its response; and a session's GET stream of notifications that answer no
//! request.
//!
//! 2026-07-28 ([`stream`]): the call runs in its own task, and dropping the stream (the client
//! went away) cancels it, as that era requires. Handshake era ([`resumable`], [`listen`]): every
//! event has an id and is kept in the session's [`Replay`] until its stream ends, the stream
//! starts with a priming event (an id, a `retry` field, empty data), and a broken connection
//! leaves the call running: `GET` with `Last-Event-ID` ([`resume`]) reads on from that event.

use super::Body;
use super::replay::{Log, Next, Replay};
use crate::dispatch::Admitted;
use crate::peer::{Outbound, Peer, StreamCloser};
use crate::principal::Principal;
use crate::protocol::jsonrpc::Outgoing;
use bytes::Bytes;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use std::convert::Infallible;
use std::sync::Arc;
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
    let outbound = Outbound::new(tx);
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
        let item = Ok::<_, Infallible>(Frame::data(event(None, &message)));
        // The response ends the stream.
        if message.is_response() {
            rx = None;
        }
        Some((item, (rx, tick, guard)))
    });
    response(BodyExt::boxed(StreamBody::new(events)))
}

/// A handshake-era call's POST stream: `call` runs in its own task, and what it sends goes into
/// a new stream of `replay`, read from the start by this response. A broken connection leaves
/// the call running (only the session's end, `notifications/cancelled`, a bound or
/// [`ResumeOptions::detached_timeout`] cancel it).
pub(super) fn resumable(
    replay: &Arc<Replay>,
    call: Admitted,
    peer: impl FnOnce(&Outbound) -> Option<Peer>,
    principal: Option<Principal>,
    keepalive: Duration,
) -> Option<Response<Body>> {
    let log = replay.open(call.token())?;
    let (tx, rx) = mpsc::channel::<Outgoing>(64);
    let weak = Arc::downgrade(&log);
    let outbound = Outbound {
        tx,
        closer: Some(StreamCloser(Arc::new(move || {
            if let Some(log) = weak.upgrade() {
                log.kick();
            }
        }))),
    };
    let peer = peer(&outbound);
    let turn = log.attach();
    tokio::spawn(pump(replay.clone(), log.clone(), rx, true));
    tokio::spawn(async move {
        if let Some(reply) = call.run(outbound.clone(), peer, principal).await {
            outbound.send(reply).await;
        }
    });
    Some(read(replay.clone(), log, turn, 1, true, keepalive, Box::new(())))
}

/// A session's GET stream (handshake era): the messages posted to its mailbox, which `rx`
/// receives, kept as stream 0 of `replay`, from `after` on (the events after it are replayed
/// first) or from now; an SSE comment every `keepalive` when nothing else goes. It never carries
/// a response. `on_close` is dropped with the stream.
pub(super) fn listen<G: Send + Sync + 'static>(
    replay: &Arc<Replay>,
    log: Arc<Log>,
    rx: mpsc::Receiver<Outgoing>,
    after: Option<u64>,
    keepalive: Duration,
    on_close: G,
) -> Response<Body> {
    let turn = log.attach();
    let from = after.map_or_else(|| log.next_seq(), |a| a + 1);
    tokio::spawn(pump(replay.clone(), log.clone(), rx, false));
    read(
        replay.clone(),
        log,
        turn,
        from,
        after.is_none(),
        keepalive,
        Box::new(on_close),
    )
}

/// `GET` with `Last-Event-ID` naming a call's stream: the events after `after`, then the rest as
/// they come, ending after the response as the POST stream would have.
pub(super) fn resume(replay: &Arc<Replay>, log: Arc<Log>, after: u64, keepalive: Duration) -> Response<Body> {
    let turn = log.attach();
    read(replay.clone(), log, turn, after + 1, false, keepalive, Box::new(()))
}

/// Moves what a call (or the session's mailbox, stream 0) sends into `log`, waiting while the
/// reader has `WINDOW` events not taken yet. A call's stream is over once its response went in,
/// or once the call ended without one.
async fn pump(replay: Arc<Replay>, log: Arc<Log>, mut rx: mpsc::Receiver<Outgoing>, call: bool) {
    while let Some(message) = rx.recv().await {
        let last = call && message.is_response();
        replay.push(&log, last, |id| event(Some(id), &message));
        if last {
            break;
        }
        loop {
            let advanced = log.advanced.notified();
            tokio::pin!(advanced);
            advanced.as_mut().enable();
            if !log.waits_for_reader() {
                break;
            }
            advanced.await;
        }
    }
    if call {
        log.over();
        if log.drained() {
            replay.remove(log.n);
        }
    }
}

/// A reader of one kept stream, as a response body.
struct Reader {
    replay: Arc<Replay>,
    log: Arc<Log>,
    turn: u64,
    /// The seq it takes next.
    cursor: u64,
    /// The first bytes to send: the priming event (a new stream) or the `retry` field (a resumed
    /// one).
    head: Option<Bytes>,
    tick: tokio::time::Interval,
    /// When the connection is closed early ([`ResumeOptions::close_streams_after`]).
    close_at: Option<tokio::time::Instant>,
    /// It sent the response: the stream ends at the next poll.
    sent_last: bool,
    /// It reached the end of the stream.
    finished: bool,
    _on_close: Box<dyn std::any::Any + Send + Sync>,
}

impl Drop for Reader {
    fn drop(&mut self) {
        if !self.log.detach(self.turn) {
            // Another reader took over: the stream is theirs.
            return;
        }
        if self.finished {
            // Read to its end; kept a little longer for a client whose connection broke as the
            // response went out.
            self.replay.linger(self.log.n);
            return;
        }
        if self.log.n == 0 {
            // The GET stream waits for the next GET; nothing runs on it.
            return;
        }
        // The connection went first: the call runs on for a reader to come back.
        let (replay, log, turn) = (Arc::downgrade(&self.replay), Arc::downgrade(&self.log), self.turn);
        let wait = self.replay.options().detached_timeout;
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let timer = rt.spawn(async move {
                tokio::time::sleep(wait).await;
                let (Some(replay), Some(log)) = (replay.upgrade(), log.upgrade()) else {
                    return;
                };
                if !log.still_detached_since(turn) {
                    return;
                }
                if log.complete() {
                    tracing::debug!(stream = log.n, "a finished call's stream was never resumed: dropped");
                    replay.remove(log.n);
                    return;
                }
                tracing::warn!(
                    stream = log.n,
                    after_ms = wait.as_millis() as u64,
                    "a call whose client went away was cancelled: no client resumed its stream \
                     within ResumeOptions::detached_timeout"
                );
                replay.end(log.n, "no client resumed it in time");
            });
            self.log.wait_for_reader(timer.abort_handle());
        }
    }
}

impl Reader {
    async fn next(mut self) -> Option<(Result<Frame<Bytes>, Infallible>, Self)> {
        if let Some(head) = self.head.take() {
            return Some((Ok(Frame::data(head)), self));
        }
        if self.sent_last {
            self.finished = true;
            return None;
        }
        let log = self.log.clone();
        loop {
            let changed = log.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            match log.next(self.turn, &mut self.cursor) {
                Next::Event(event, last) => {
                    self.sent_last = last;
                    return Some((Ok(Frame::data(event)), self));
                }
                Next::Finished => {
                    self.finished = true;
                    return None;
                }
                Next::Stop => return None,
                Next::Wait => {}
            }
            let close_at = self.close_at;
            tokio::select! {
                _ = changed => {}
                _ = self.tick.tick() => {
                    let comment = Bytes::from_static(b": keep-alive\n\n");
                    return Some((Ok(Frame::data(comment)), self));
                }
                _ = async move {
                    match close_at {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => return None,
            }
        }
    }
}

/// A response reading `log` for reader `turn` from seq `from`; `priming`: a new stream, which
/// starts with a priming event whose id names the point before `from`.
fn read(
    replay: Arc<Replay>,
    log: Arc<Log>,
    turn: u64,
    from: u64,
    priming: bool,
    keepalive: Duration,
    on_close: Box<dyn std::any::Any + Send + Sync>,
) -> Response<Body> {
    let options = replay.options();
    let retry = options.retry.as_millis();
    let head = if priming {
        format!("id: {}\nretry: {retry}\ndata: \n\n", replay.id(log.n, from - 1))
    } else {
        format!("retry: {retry}\n\n")
    };
    let close_at = options.close_after.map(|after| tokio::time::Instant::now() + after);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let reader = Reader {
        replay,
        log,
        turn,
        cursor: from,
        head: Some(Bytes::from(head)),
        tick,
        close_at,
        sent_last: false,
        finished: false,
        _on_close: on_close,
    };
    let events = futures_util::stream::unfold(reader, Reader::next);
    response(BodyExt::boxed(StreamBody::new(events)))
}

/// One message as one `message` event, with its id if it has one.
fn event(id: Option<&str>, message: &Outgoing) -> Bytes {
    let mut event = Vec::with_capacity(256);
    if let Some(id) = id {
        event.extend_from_slice(b"id: ");
        event.extend_from_slice(id.as_bytes());
        event.push(b'\n');
    }
    event.extend_from_slice(b"event: message\ndata: ");
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
