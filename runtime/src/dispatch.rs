//! The connection core: what every transport does with an inbound message, in one place.
//!
//! A transport reads bytes, hands each message to [`Dispatcher::dispatch`], and writes what comes
//! back. The dispatcher owns the in-flight registry of its connection (or session): a call is
//! registered when it is admitted and removed when it finishes, is cancelled, or is dropped, so
//! nothing is left behind. Cancellation (`notifications/cancelled`) and the encoding of results
//! into [`Outgoing`] messages happen here too; transports only add framing (a newline, an SSE
//! event) and map errors to their own statuses.

use crate::access::Forbidden;
use crate::peer::{Outbound, Peer};
use crate::principal::Principal;
use crate::protocol::inbound::Inbound;
use crate::protocol::jsonrpc::Outgoing;
use crate::protocol::messages::{CANCELLED, ParamsHead};
use crate::protocol::{ErrorObject, RequestId};
use crate::server::call::{Answer, Caller, Later, PendingCall, Seen, Started, Watch};
use crate::server::{Route, Server, Session};
use crate::telemetry::{Method, RequestOutcome, TraceContext};
use std::hash::BuildHasher;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use tokio_util::sync::CancellationToken;

type Registry = Arc<Mutex<InFlight>>;

/// The calls in flight on a connection or session, by id. Each id is hashed once, when its call
/// is admitted (keyed SipHash: ids are the client's), and its entry found by that hash when the
/// call leaves.
#[derive(Default)]
struct InFlight {
    calls: hashbrown::HashTable<(RequestId, CancellationToken)>,
    hasher: std::hash::RandomState,
}

impl InFlight {
    fn get(&self, id: &RequestId) -> Option<&CancellationToken> {
        let hash = self.hasher.hash_one(id);
        self.calls.find(hash, |(k, _)| k == id).map(|(_, token)| token)
    }
}

/// Dispatches the messages of one connection (stdio, an in-memory pipe, a handshake-era HTTP
/// session) or of stateless traffic (2026-07-28 HTTP, where ids are the client's own and calls
/// are cancelled by closing their stream, so nothing is registered).
#[derive(Clone)]
pub(crate) struct Dispatcher {
    server: Arc<Server>,
    /// `None` for stateless traffic.
    registry: Option<Registry>,
}

/// What became of one inbound message. (`Call` is the large variant, on purpose: a message's
/// dispatch is matched at once, and boxing the call would cost an allocation per call.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Dispatch {
    /// Nothing to send (a notification, a response delivered to its waiter).
    Done,
    /// Send this.
    Reply(Outgoing),
    /// A call to run: the transport decides where (inline, a task, an HTTP response stream).
    Call(Admitted),
    /// A request refused for want of scopes, before anything of it ran: HTTP answers 403 with
    /// its challenge, other transports the JSON-RPC error ([`Forbidden::error`]).
    Forbidden(RequestId, Forbidden),
}

impl Dispatcher {
    /// A dispatcher with its own in-flight registry: one per connection or session.
    pub(crate) fn connection(server: Arc<Server>) -> Self {
        Self {
            server,
            registry: Some(Arc::default()),
        }
    }

    /// A dispatcher for stateless traffic: nothing is registered.
    pub(crate) fn stateless(server: Arc<Server>) -> Self {
        Self { server, registry: None }
    }

    /// Handles one inbound message for a connection in state `session` from `principal` (lists
    /// show it what its scopes allow); `peer` receives the client's responses (handshake era).
    pub(crate) fn dispatch(
        &self,
        session: &mut Session,
        peer: Option<&Peer>,
        principal: Option<&Principal>,
        inbound: Inbound<'_>,
        carried: Option<&TraceContext>,
    ) -> Dispatch {
        match inbound {
            Inbound::Invalid { id, error } => {
                tracing::debug!(code = error.code, "invalid message");
                Dispatch::Reply(Outgoing::error(id, error))
            }
            Inbound::Notification { method, params } => {
                if method == CANCELLED {
                    self.cancel(&params);
                } else if method == "notifications/initialized" {
                    // Requests to the client may go out now.
                    if let Some(peer) = peer {
                        peer.initialized();
                    }
                } else {
                    tracing::trace!(method = %method, "notification ignored");
                }
                Dispatch::Done
            }
            Inbound::Response { id, outcome } => {
                if !peer.is_some_and(|p| p.deliver(&id, outcome)) {
                    tracing::debug!(%id, "response to no request of ours; ignored");
                }
                Dispatch::Done
            }
            Inbound::Request {
                id,
                ref method,
                ref params,
            } => {
                let label = Method::of(method);
                // A call's span is made once the call is known, with all its fields; it runs in
                // the span later, and its params are only read here (no event, no server code).
                // Any other request is in its span while the session answers it.
                let early = (!label.is_call()).then(|| crate::telemetry::request_span(label, None, principal));
                if let Some(span) = early.as_ref().filter(|s| !s.is_disabled()) {
                    self.join_trace(span, params, carried);
                }
                let route = {
                    let _entered = early.as_ref().map(tracing::Span::enter);
                    session.on_request(&self.server, method, params, principal)
                };
                let span = match (early, &route) {
                    (Some(span), _) => span,
                    (None, route) => {
                        let span = match route {
                            Route::Call(call) => call.span(label, principal),
                            _ => crate::telemetry::request_span(label, None, principal),
                        };
                        if !span.is_disabled() {
                            self.join_trace(&span, params, carried);
                        }
                        span
                    }
                };
                match route {
                    Route::Reply(outcome) => {
                        request_ended(
                            &self.server,
                            &span,
                            label,
                            outcome.as_ref().err().map(|e| e.code),
                            false,
                        );
                        Dispatch::Reply(Outgoing::Response { id: Some(id), outcome })
                    }
                    Route::Forbidden(forbidden) => {
                        span.record("mcp.outcome", RequestOutcome::Forbidden.as_str());
                        self.server.request_metrics.request(label, RequestOutcome::Forbidden);
                        Dispatch::Forbidden(id, forbidden)
                    }
                    Route::Call(call) => match self.admit(id) {
                        // Built where it is returned: a call is a few hundred bytes, and each
                        // move of it is a copy.
                        Ok(registration) => Dispatch::Call(Admitted {
                            registration,
                            call,
                            server: self.server.clone(),
                            span,
                            method: label,
                        }),
                        Err(reply) => {
                            request_ended(
                                &self.server,
                                &span,
                                label,
                                Some(crate::protocol::codes::INVALID_REQUEST),
                                false,
                            );
                            Dispatch::Reply(reply)
                        }
                    },
                }
            }
        }
    }

    /// Makes the trace context `params._meta` carries (else `carried`, the transport's) the
    /// parent of `span` through the server's hook.
    fn join_trace(&self, span: &tracing::Span, params: &ParamsHead<'_>, carried: Option<&TraceContext>) {
        let Some(hook) = &self.server.config.trace_hook else {
            return;
        };
        let raw = crate::protocol::jsonrpc::raw_str;
        let (parent, state) = params.meta.trace();
        let state = state.and_then(raw);
        let own = parent
            .and_then(raw)
            .and_then(|tp| TraceContext::parse(&tp, state.as_deref()));
        if let Some(trace) = own.as_ref().or(carried) {
            (hook.0)(span, trace);
        }
    }

    /// Registers a call under its id; a second call with an id still in flight is refused.
    fn admit(&self, id: RequestId) -> Result<Registration, Outgoing> {
        let token = CancellationToken::new();
        let place = if let Some(registry) = &self.registry {
            let mut map = match registry.lock() {
                Ok(m) => m,
                Err(_) => {
                    return Err(Outgoing::error(
                        Some(id),
                        ErrorObject::internal("Internal error: the connection's call registry is unavailable"),
                    ));
                }
            };
            // The id hashed once, for its admission and its leaving.
            let InFlight { calls, hasher } = &mut *map;
            let hash = hasher.hash_one(&id);
            let taken = match calls.entry(hash, |(k, _)| *k == id, |(k, _)| hasher.hash_one(k)) {
                hashbrown::hash_table::Entry::Occupied(_) => true,
                hashbrown::hash_table::Entry::Vacant(slot) => {
                    slot.insert((id.clone(), token.clone()));
                    false
                }
            };
            drop(map);
            if taken {
                let e = ErrorObject::invalid_request(format!(
                    "Invalid Request: id {id} is already in use by a request in flight"
                ));
                return Err(Outgoing::error(Some(id), e));
            }
            Some((registry.clone(), hash))
        } else {
            None
        };
        Ok(Registration { id, token, place })
    }

    /// `notifications/cancelled`: cancels the named call if it is in flight here.
    fn cancel(&self, params: &ParamsHead<'_>) {
        let Some(registry) = &self.registry else { return };
        let id = params.request_id.and_then(RequestId::from_raw);
        let Some(id) = id else { return };
        let token = registry.lock().ok().and_then(|m| m.get(&id).cloned());
        if let Some(token) = token {
            // Cancellation: the reason "can be logged"; a client's text, so shortened.
            let reason = params.reason.and_then(crate::protocol::jsonrpc::raw_str);
            let reason: Option<String> = reason.map(|r| r.chars().take(200).collect());
            let reason = reason.as_deref().unwrap_or("none given");
            tracing::debug!(%id, reason, "request cancelled by the client");
            token.cancel();
        }
    }

    /// Cancels every call in flight (the connection or session ended).
    pub(crate) fn cancel_all(&self) {
        if let Some(map) = self.registry.as_ref().and_then(|r| r.lock().ok()) {
            for (_, token) in &map.calls {
                token.cancel();
            }
        }
    }

    /// How many calls are registered (for tests of the registry's bounds).
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> usize {
        self.registry
            .as_ref()
            .and_then(|r| r.lock().ok().map(|m| m.calls.len()))
            .unwrap_or(0)
    }
}

/// A call's place in the registry; leaving it (dropped, finished, cancelled) removes the entry.
struct Registration {
    id: RequestId,
    token: CancellationToken,
    /// The registry it is in, and its id's hash there (none: stateless traffic).
    place: Option<(Registry, u64)>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some((registry, hash)) = &self.place
            && let Ok(mut m) = registry.lock()
            && let Ok(entry) = m.calls.find_entry(*hash, |(k, _)| *k == self.id)
        {
            entry.remove();
        }
    }
}

/// A call admitted by the dispatcher, not yet run.
pub(crate) struct Admitted {
    registration: Registration,
    call: PendingCall,
    server: Arc<Server>,
    /// Its `mcp.request` span, and the method as a metric label.
    span: tracing::Span,
    method: Method,
}

impl Admitted {
    pub(crate) fn id(&self) -> &RequestId {
        &self.registration.id
    }

    /// Cancels the call (e.g. its HTTP response stream was dropped).
    pub(crate) fn token(&self) -> CancellationToken {
        self.registration.token.clone()
    }

    pub(crate) fn wants_stream(&self) -> bool {
        self.call.wants_stream()
    }

    /// Takes the call from `caller`'s rate ([`Server::call_rate_limit`]); `Err` with the error
    /// it is refused with and how long until the caller may retry. Listen streams are bounded
    /// apart and not counted.
    pub(crate) fn over_rate(
        &self,
        caller: &crate::server::rate::CallerKey,
    ) -> Result<(), (ErrorObject, std::time::Duration)> {
        match &self.server.config.call_rate {
            Some(rate) if !self.call.is_listen() => rate.take(caller).inspect_err(|(e, _)| {
                crate::telemetry::metric::limit_hit("call_rate");
                request_ended(&self.server, &self.span, self.method, Some(e.code), false);
            }),
            _ => Ok(()),
        }
    }

    /// Whether the call is a `subscriptions/listen` stream, open for long.
    pub(crate) fn is_listen(&self) -> bool {
        self.call.is_listen()
    }

    /// Whether `principal` holds the scopes the call needs (checked again when it runs); a
    /// refusal ends the request here (`forbidden` on its span and in the metrics), as the
    /// transport answers it without running the call (HTTP's 403).
    pub(crate) fn allowed(&self, principal: Option<&Principal>) -> Result<(), crate::access::Forbidden> {
        self.call.allowed(principal).inspect_err(|_| {
            self.span.record("mcp.outcome", RequestOutcome::Forbidden.as_str());
            self.server
                .request_metrics
                .request(self.method, RequestOutcome::Forbidden);
        })
    }

    /// Runs the call with nowhere to send notifications (no progress token, no back-channel):
    /// progress sends fail at once instead of waiting. As the 2026-07-28 HTTP path without a
    /// progress token, and the benchmark door, run calls.
    pub(crate) fn run_detached(self, principal: Option<Principal>) -> CallFuture {
        let (tx, _) = tokio::sync::mpsc::channel(1);
        self.run(Outbound::new(tx), None, principal)
    }

    /// Runs the call: its future gives its response, or `None` when it was cancelled (a
    /// cancelled request gets no response; cancellation wins a tie with a ready result).
    /// Notifications and requests to the client go to `outbound` meanwhile.
    #[inline]
    pub(crate) fn run(self, outbound: Outbound, peer: Option<Peer>, principal: Option<Principal>) -> CallFuture {
        let Self {
            registration,
            call,
            server,
            span,
            method,
        } = self;
        let watch = call.watch(span);
        CallFuture {
            core: Core {
                live: Some((registration, watch)),
                server,
                method,
            },
            step: Step::Start(Start {
                call,
                caller: Caller {
                    outbound,
                    peer,
                    principal,
                },
            }),
        }
    }
}

/// A call running ([`Admitted::run`]). Written by hand rather than as an `async fn`, which would
/// keep its arguments beside each future it awaits: it holds each part of the call once, and is
/// `Unpin`, so a connection polls it where it stands; one that waits goes on as a smaller
/// [`WaitingCall`] ([`CallFuture::into_waiting`]). Its size is held by a test below.
pub(crate) struct CallFuture {
    core: Core,
    step: Step,
}

/// A call that waits, as a connection moves it into a task of its own: what is left of its
/// [`CallFuture`] once it started.
pub(crate) struct WaitingCall {
    core: Core,
    later: Later,
}

/// What every state of a call keeps until it ends.
struct Core {
    /// The call's place in the registry and its telemetry, until it ends.
    live: Option<(Registration, Watch)>,
    server: Arc<Server>,
    method: Method,
}

/// What a call starts with.
struct Start {
    call: PendingCall,
    caller: Caller,
}

/// Where a [`CallFuture`] is. (`Start` is the large variant, on purpose: a call that waits
/// moves into its task as a [`WaitingCall`], without it.)
#[allow(clippy::large_enum_variant)]
enum Step {
    /// Not polled yet.
    Start(Start),
    /// What waits, boxed with its cancellation: the body once it waits, or what waits before
    /// its body or is no body.
    Later(Later),
    /// Its answer given.
    Done,
}

impl CallFuture {
    /// What is left of a call that waits (polled once, and pending), to move it into a task:
    /// smaller than its future (`Err`: it has not started, or ended).
    #[allow(clippy::result_large_err)] // the call itself, given back whole: boxing it would cost an allocation
    pub(crate) fn into_waiting(self) -> Result<WaitingCall, Self> {
        match self.step {
            Step::Later(later) => Ok(WaitingCall { core: self.core, later }),
            step => Err(Self { core: self.core, step }),
        }
    }
}

impl Core {
    /// Polls the call's running part (`poll`: `None` when cancelled) in its request's span, and
    /// once it ends, notes how and gives its response.
    fn poll(
        &mut self,
        cx: &mut std::task::Context<'_>,
        poll: impl FnOnce(&mut std::task::Context<'_>, &Arc<Server>, &Registration, &mut Seen) -> Poll<Option<Answer>>,
    ) -> Poll<Option<Outgoing>> {
        let Some((registration, watch)) = &mut self.live else {
            // Ended already: it stays so.
            return Poll::Pending;
        };
        let polled = {
            // The request's span, entered while the call is polled.
            let _entered = watch.span.enter();
            poll(cx, &self.server, registration, &mut watch.seen)
        };
        let Poll::Ready(outcome) = polled else {
            return Poll::Pending;
        };
        let Some((registration, watch)) = self.live.take() else {
            return Poll::Pending;
        };
        let id = registration.id.clone();
        drop(registration);
        // A call's outcome is on the span already; the request's metric is counted either way.
        let span = watch.finish(outcome.as_ref()).unwrap_or_else(tracing::Span::none);
        match &outcome {
            None => request_ended(&self.server, &span, self.method, None, true),
            Some(o) => request_ended(
                &self.server,
                &span,
                self.method,
                o.as_ref().err().map(|e| e.code),
                false,
            ),
        }
        Poll::Ready(outcome.map(|outcome| Outgoing::Response { id: Some(id), outcome }))
    }
}

impl Step {
    /// Polls the call's part that is running (`None`: cancelled); a call not started yet starts
    /// (what comes before its body runs, at once, and its body is polled in place), as
    /// `registration` in `server`'s registry, noting in `seen`.
    fn poll(
        &mut self,
        cx: &mut std::task::Context<'_>,
        server: &Arc<Server>,
        registration: &Registration,
        seen: &mut Seen,
    ) -> Poll<Option<Answer>> {
        if let Self::Start(_) = self
            && let Self::Start(Start { call, caller }) = std::mem::replace(self, Self::Done)
        {
            // Cancelled before it started: nothing of it runs.
            if registration.token.is_cancelled() {
                return Poll::Ready(None);
            }
            let started = call.start(
                server,
                registration.id.clone(),
                registration.token.clone(),
                caller,
                seen,
            );
            match started {
                Started::Done(answer) => return Poll::Ready(Some(answer)),
                Started::Body(mut body) => {
                    if let Poll::Ready(answer) = body.poll(cx, server, seen) {
                        return Poll::Ready(Some(answer));
                    }
                    // It waits: from now on on its own, woken by a cancellation too.
                    let Some(later) = body.waiting(cx, server, &registration.token, *seen) else {
                        return Poll::Ready(None);
                    };
                    *self = Self::Later(later);
                    return Poll::Pending;
                }
                Started::Later(later) => *self = Self::Later(later),
            }
        }
        let Self::Later(later) = self else {
            return Poll::Ready(Some(Err(ErrorObject::internal(
                "Internal error: a call was polled after it ended",
            ))));
        };
        let polled = poll_later(later, cx, seen);
        if polled.is_ready() {
            *self = Self::Done;
        }
        polled
    }
}

/// Polls what waits; what it noted goes into `seen` when it ends.
fn poll_later(later: &mut Later, cx: &mut std::task::Context<'_>, seen: &mut Seen) -> Poll<Option<Answer>> {
    later.as_mut().poll(cx).map(|(answer, noted)| {
        *seen = noted;
        answer
    })
}

impl Future for CallFuture {
    type Output = Option<Outgoing>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Option<Outgoing>> {
        let this = self.get_mut();
        let step = &mut this.step;
        this.core.poll(cx, |cx, server, registration, seen| {
            step.poll(cx, server, registration, seen)
        })
    }
}

impl Future for WaitingCall {
    type Output = Option<Outgoing>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Option<Outgoing>> {
        let this = self.get_mut();
        let later = &mut this.later;
        this.core.poll(cx, |cx, _, _, seen| poll_later(later, cx, seen))
    }
}

/// Notes how a request ended on its span and in the metrics: an error's code, or cancelled.
fn request_ended(server: &Server, span: &tracing::Span, method: Method, error: Option<i64>, cancelled: bool) {
    let (outcome, error) = match (error, cancelled) {
        (_, true) => (RequestOutcome::Cancelled, None),
        (Some(code), _) => (RequestOutcome::Error, Some(code)),
        (None, _) => (RequestOutcome::Ok, None),
    };
    crate::telemetry::record_ended(span, outcome.as_str(), error, None);
    server.request_metrics.request(method, outcome);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::inbound::classify;

    fn call_frame(id: u64) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow","arguments":{{}}}}}}"#)
            .into_bytes()
    }

    struct Slow;
    impl crate::tool::Tool for Slow {
        fn definition(&self) -> crate::tool::ToolDefinition {
            crate::tool::ToolDefinition::new("slow", crate::tool::ArgsSchema::new().finish())
        }
        fn call(
            &self,
            _: crate::tool::ToolCall,
        ) -> futures_util::future::BoxFuture<'static, crate::tool_result::CallToolResult> {
            Box::pin(std::future::pending())
        }
    }

    fn initialized() -> (Dispatcher, Session) {
        let d = Dispatcher::connection(Arc::new(Server::new("t").tool(Slow)));
        let mut s = Session::new();
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
        assert!(matches!(
            d.dispatch(&mut s, None, None, classify(init), None),
            Dispatch::Reply(_)
        ));
        (d, s)
    }

    /// A `_meta` with a member given twice makes a request invalid (-32600, with its id), on
    /// either era and whether or not the connection saw a good `_meta` before.
    #[test]
    fn a_meta_whose_members_cannot_be_read_is_an_invalid_request() {
        let refused =
            |d: &Dispatcher, s: &mut Session, frame: &[u8]| match d.dispatch(s, None, None, classify(frame), None) {
                Dispatch::Reply(Outgoing::Response { id, outcome: Err(e) }) => (id, e.code),
                _ => panic!("not refused"),
            };
        let twice = br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"progressToken":1,"progressToken":2}}}"#;
        let (d, mut s) = initialized();
        assert_eq!(refused(&d, &mut s, twice), (Some(RequestId::from(9)), -32600));
        // A first request decides nothing when it is invalid.
        let mut fresh = Session::new();
        assert_eq!(refused(&d, &mut fresh, twice), (Some(RequestId::from(9)), -32600));
        let envelope =
            r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;
        let good = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{{envelope}}}}}}}"#);
        assert!(matches!(
            d.dispatch(&mut fresh, None, None, classify(good.as_bytes()), None),
            Dispatch::Reply(Outgoing::Response { outcome: Ok(_), .. })
        ));
        let bad = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{{{envelope},"progressToken":1,"progressToken":2}}}}}}"#
        );
        assert_eq!(
            refused(&d, &mut fresh, bad.as_bytes()),
            (Some(RequestId::from(2)), -32600)
        );
    }

    /// On tokio's paused clock: a call that cancellation does not end leaves the runtime idle,
    /// so the 10 s bound below fails the test at once instead of after 10 s.
    #[tokio::test(start_paused = true)]
    async fn a_dropped_or_cancelled_call_leaves_nothing_behind() {
        let (d, mut s) = initialized();
        let frame = call_frame(1);
        let Dispatch::Call(first) = d.dispatch(&mut s, None, None, classify(&frame), None) else {
            panic!("a call")
        };
        assert_eq!(d.in_flight(), 1);
        // The same id again, while in flight: refused.
        let Dispatch::Reply(Outgoing::Response { outcome: Err(e), .. }) =
            d.dispatch(&mut s, None, None, classify(&frame), None)
        else {
            panic!("a duplicate id is refused")
        };
        assert_eq!(e.code, -32600);
        drop(first);
        assert_eq!(d.in_flight(), 0, "a dropped call is unregistered");

        let Dispatch::Call(second) = d.dispatch(&mut s, None, None, classify(&call_frame(2)), None) else {
            panic!("a call")
        };
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let running = tokio::spawn(second.run(Outbound::new(tx), None, None));
        tokio::task::yield_now().await;
        let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
        assert!(matches!(
            d.dispatch(&mut s, None, None, classify(cancel), None),
            Dispatch::Done
        ));
        let ended = tokio::time::timeout(std::time::Duration::from_secs(10), running)
            .await
            .expect("the cancelled call (whose tool never ends by itself) ended within 10 s");
        assert!(ended.unwrap().is_none(), "a cancelled call gets no response");
        assert_eq!(d.in_flight(), 0);
    }

    /// The future of a call ([`CallFuture`]), made for every call where it runs, and what is left
    /// of it once it waits ([`WaitingCall`]), moved into a task: what each call initializes and
    /// moves. Their sizes are held here so that a change that grows them (a large part held
    /// inline: box it where it is rare) fails by name. 592 and 192 bytes on 2026-12-07 (x86_64,
    /// test build); 2 680 while the call was one `async fn`, boxed, and 5 048 before its rare
    /// paths were boxed (docs/PERFORMANCE.md).
    const CALL_FUTURE_BOUND: usize = 640;
    const WAITING_CALL_BOUND: usize = 256;

    #[tokio::test]
    async fn a_call_future_stays_under_its_bound() {
        let d = Dispatcher::stateless(Arc::new(Server::new("t").tool(Slow)));
        let frame = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let Dispatch::Call(call) = d.dispatch(&mut Session::new(), None, None, classify(frame), None) else {
            panic!("a call")
        };
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let mut run = call.run(Outbound::new(tx), None, None);
        let size = std::mem::size_of_val(&run);
        eprintln!("call future: {size} bytes");
        assert!(
            size <= CALL_FUTURE_BOUND,
            "a call's future is {size} bytes, over its bound of {CALL_FUTURE_BOUND} (runtime/src/dispatch.rs)"
        );
        // `slow` waits: what is left of it goes on.
        let mut cx = std::task::Context::from_waker(futures_util::task::noop_waker_ref());
        assert!(Pin::new(&mut run).poll(&mut cx).is_pending());
        let Ok(waiting) = run.into_waiting() else {
            panic!("a call that waits goes on as a WaitingCall")
        };
        let size = std::mem::size_of_val(&waiting);
        eprintln!("waiting call: {size} bytes");
        assert!(
            size <= WAITING_CALL_BOUND,
            "a waiting call is {size} bytes, over its bound of {WAITING_CALL_BOUND} (runtime/src/dispatch.rs)"
        );
    }

    /// The cancellation race without a registration for a call that is done at once: a token
    /// cancelled before the first poll runs nothing, a ready call answers, a waiting one is woken
    /// by a later cancellation, and cancellation wins a tie with a ready result.
    #[tokio::test]
    async fn until_cancelled_keeps_the_race_of_a_call_and_its_cancellation() {
        fn until_cancelled<F: Future>(token: &CancellationToken, run: F) -> crate::server::call::Waiting<F> {
            crate::server::call::Waiting::new(token.clone(), run)
        }
        let polled = std::sync::atomic::AtomicUsize::new(0);
        let counted = |ready: bool| {
            let polled = &polled;
            std::future::poll_fn(move |_| {
                polled.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if ready { Poll::Ready(7) } else { Poll::Pending }
            })
        };
        let token = CancellationToken::new();
        assert_eq!(until_cancelled(&token, counted(true)).await, Some(7));
        assert_eq!(polled.swap(0, std::sync::atomic::Ordering::SeqCst), 1);

        token.cancel();
        assert_eq!(until_cancelled(&token, counted(true)).await, None, "cancelled first");
        assert_eq!(
            polled.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "a cancelled call is never polled"
        );

        // Waiting, then cancelled from elsewhere: woken, and no result.
        let token = CancellationToken::new();
        let later = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            later.cancel();
        });
        let ended = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            until_cancelled(&token, counted(false)),
        )
        .await
        .expect("a cancellation wakes a waiting call");
        assert_eq!(ended, None);

        // Cancelled while the call is polled the first time (the call itself cancels its token
        // and waits): the cancellation is seen though it came before the call registered.
        let token = CancellationToken::new();
        let own = token.clone();
        let cancels_itself = std::future::poll_fn(move |_| {
            own.cancel();
            Poll::<u8>::Pending
        });
        let ended = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            until_cancelled(&token, cancels_itself),
        )
        .await
        .expect("a cancellation during the first poll ends the call");
        assert_eq!(ended, None);

        // A tie: a call that waited once and would be ready at its next poll, cancelled in
        // between: cancellation wins, and the call is not polled again.
        let token = CancellationToken::new();
        let polls = std::sync::atomic::AtomicUsize::new(0);
        let then_ready = std::future::poll_fn(|_| match polls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => Poll::Pending,
            _ => Poll::Ready(1),
        });
        let mut tie = std::pin::pin!(until_cancelled(&token, then_ready));
        let mut cx = std::task::Context::from_waker(futures_util::task::noop_waker_ref());
        assert!(tie.as_mut().poll(&mut cx).is_pending());
        token.cancel();
        let ended = match tie.as_mut().poll(&mut cx) {
            Poll::Ready(ended) => ended,
            Poll::Pending => panic!("a cancelled call ends at its next poll"),
        };
        assert_eq!(
            polls.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the call was not polled once cancelled"
        );
        assert_eq!(ended, None, "cancellation wins a tie with a ready result");
    }
    #[tokio::test]
    async fn stateless_traffic_registers_nothing() {
        let d = Dispatcher::stateless(Arc::new(Server::new("t").tool(Slow)));
        let frame = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let a = d.dispatch(&mut Session::new(), None, None, classify(frame), None);
        let b = d.dispatch(&mut Session::new(), None, None, classify(frame), None);
        assert!(
            matches!((a, b), (Dispatch::Call(_), Dispatch::Call(_))),
            "two clients may use one id"
        );
        assert_eq!(d.in_flight(), 0);
    }

    /// The values recorded on spans, as `name=value` (a subscriber of the test's own: every
    /// span is enabled, none is kept).
    #[derive(Default, Clone)]
    struct Recorded(Arc<std::sync::Mutex<Vec<String>>>);

    impl tracing::field::Visit for Recorded {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            if let Ok(mut v) = self.0.lock() {
                v.push(format!("{}={value:?}", field.name()));
            }
        }
    }

    impl tracing::Subscriber for Recorded {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
            values.record(&mut self.clone());
        }
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, _: &tracing::Event<'_>) {}
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    /// Sets `recorded` as this thread's subscriber until the guard drops, once the request span's
    /// callsite asks it. Tests share the process: a callsite another test's thread met first,
    /// with no subscriber there, can keep an interest computed before this one was set (a
    /// registration that was under way when the interest was rebuilt), so it is rebuilt until a
    /// request span is enabled here.
    fn recording(recorded: &Recorded) -> tracing::subscriber::DefaultGuard {
        let guard = tracing::subscriber::set_default(recorded.clone());
        for _ in 0..1_000 {
            tracing::callsite::rebuild_interest_cache();
            let probe = crate::telemetry::request_span(crate::telemetry::Method::of("tools/call"), None, None);
            if !probe.is_disabled() {
                break;
            }
            std::thread::yield_now();
        }
        guard
    }

    /// A retry cancelled while its body waits is noted with its round (2, from its sealed
    /// state) and as cancelled: the general path races its cancellation inside, so what it
    /// noted before is kept.
    #[tokio::test]
    async fn a_cancelled_retry_is_noted_with_its_round() {
        struct AsksThenWaits;
        impl crate::tool::Tool for AsksThenWaits {
            fn definition(&self) -> crate::tool::ToolDefinition {
                crate::tool::ToolDefinition::new("asks", crate::tool::ArgsSchema::new().finish())
            }
            fn resolvers(&self) -> &'static [crate::resolve::def::ResolveSlot] {
                &crate::server::call::tests::SLOTS
            }
            fn call(
                &self,
                _: crate::tool::ToolCall,
            ) -> futures_util::future::BoxFuture<'static, crate::tool_result::CallToolResult> {
                Box::pin(std::future::pending())
            }
        }
        let d = Dispatcher::stateless(Arc::new(Server::new("t").tool(AsksThenWaits)));
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
        let first = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"asks",{meta}}}}}"#);
        let Dispatch::Call(call) = d.dispatch(&mut Session::new(), None, None, classify(first.as_bytes()), None) else {
            panic!("a call")
        };
        let asked: serde_json::Value =
            serde_json::from_slice(&call.run_detached(None).await.unwrap().encode()).unwrap();
        let state = asked["result"]["requestState"]
            .as_str()
            .expect("a first round asks")
            .to_owned();
        let retry = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"asks","inputResponses":{{"ask":{{"action":"accept","content":{{"ok":true}}}}}},"requestState":"{state}",{meta}}}}}"#
        );

        let recorded = Recorded::default();
        let guard = recording(&recorded);
        let Dispatch::Call(call) = d.dispatch(&mut Session::new(), None, None, classify(retry.as_bytes()), None) else {
            panic!("a call")
        };
        let token = call.token();
        let mut run = call.run_detached(None);
        let mut cx = std::task::Context::from_waker(futures_util::task::noop_waker_ref());
        assert!(Pin::new(&mut run).poll(&mut cx).is_pending(), "the body waits");
        token.cancel();
        assert!(
            matches!(Pin::new(&mut run).poll(&mut cx), Poll::Ready(None)),
            "a cancelled call has no response"
        );
        drop(guard);
        let recorded = recorded.0.lock().map(|v| v.clone()).unwrap_or_default();
        assert!(recorded.contains(&"mcp.round=2".to_owned()), "{recorded:?}");
        assert!(
            recorded.contains(&"mcp.outcome=\"cancelled\"".to_owned()),
            "{recorded:?}"
        );
    }

    /// A request's trace context (`params._meta.traceparent`) goes to the server's hook with
    /// the request's span when a subscriber records it: for a call (whose span is made once the
    /// call is known) and for any other request (whose span is made first).
    #[test]
    fn a_requests_trace_context_goes_to_the_hook_with_its_recorded_span() {
        const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let joined = Arc::new(std::sync::Mutex::new(Vec::new()));
        let server = {
            let joined = joined.clone();
            Server::new("t").tool(Slow).on_trace_context(move |span, trace| {
                if let Ok(mut j) = joined.lock() {
                    j.push((span.is_disabled(), trace.traceparent().to_owned()));
                }
            })
        };
        let recorded = Recorded::default();
        let guard = recording(&recorded);
        let d = Dispatcher::stateless(Arc::new(server));
        let meta = format!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"traceparent":"{PARENT}"}}"#
        );
        let call = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"slow",{meta}}}}}"#);
        let Dispatch::Call(call) = d.dispatch(&mut Session::new(), None, None, classify(call.as_bytes()), None) else {
            panic!("a call")
        };
        drop(call);
        let list = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{meta}}}}}"#);
        assert!(matches!(
            d.dispatch(&mut Session::new(), None, None, classify(list.as_bytes()), None),
            Dispatch::Reply(_)
        ));
        drop(guard);
        let joined = joined.lock().map(|j| j.clone()).unwrap_or_default();
        assert_eq!(joined, [(false, PARENT.to_owned()), (false, PARENT.to_owned())]);
    }

    /// A call the transport refuses before it runs (HTTP's 403 for missing scopes) ends its
    /// request there: `forbidden` on its span (and in `mcp_requests_total`).
    #[test]
    fn a_call_refused_for_its_scopes_before_it_runs_is_noted_forbidden() {
        struct Guarded;
        impl crate::tool::Tool for Guarded {
            fn definition(&self) -> crate::tool::ToolDefinition {
                crate::tool::ToolDefinition::new("guarded", crate::tool::ArgsSchema::new().finish())
                    .scopes(["notes:admin"])
            }
            fn call(
                &self,
                _: crate::tool::ToolCall,
            ) -> futures_util::future::BoxFuture<'static, crate::tool_result::CallToolResult> {
                Box::pin(std::future::pending())
            }
        }
        let recorded = Recorded::default();
        let guard = recording(&recorded);
        let d = Dispatcher::stateless(Arc::new(Server::new("t").tool(Guarded)));
        let frame = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"guarded","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let reader = crate::principal::Principal::new("reader");
        let Dispatch::Call(call) = d.dispatch(&mut Session::new(), None, Some(&reader), classify(frame), None) else {
            panic!("a call to run")
        };
        assert!(call.allowed(Some(&reader)).is_err(), "the reader lacks notes:admin");
        drop((call, guard));
        let recorded = recorded.0.lock().map(|v| v.clone()).unwrap_or_default();
        assert_eq!(recorded, ["mcp.outcome=\"forbidden\""], "{recorded:?}");
    }
}
