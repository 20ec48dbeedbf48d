//! Handshake-era HTTP (2025-06-18, 2025-11-25): `initialize` opens a session; its requests come
//! as POSTs naming it. A call that asks the user answers its POST with an SSE stream carrying the
//! `elicitation/create` request; the client's answer comes as a separate POST, answered 202. A
//! GET naming the session opens its stream of notifications that answer no request
//! (`notifications/resources/updated`); one at a time, the latest taking over.

use super::replay::{Refusal, Replay};
use super::sessions::HandshakeSession;
use super::{
    Body, SESSION_HEADER, SentVersion, State, VERSION_HEADER, WithStatus, empty, error_response, guard, header_str,
    message_response,
};
use crate::dispatch::{Dispatch, Dispatcher};
use crate::peer::Peer;
use crate::principal::Principal;
use crate::protocol::inbound::Inbound;
use crate::protocol::jsonrpc::Outgoing;
use crate::protocol::{Era, ErrorObject, ProtocolVersion};
use crate::server::Session;
use crate::server::rate::CallerKey;
use crate::updates::MAX_QUEUED;
use http::{HeaderValue, StatusCode};
use std::sync::{Arc, Weak};
use tokio::sync::mpsc;

const LAST_EVENT_ID: &str = "last-event-id";

impl State {
    /// `initialize` without a session: a new session, if the bound allows.
    pub(super) fn initialize(&self, inbound: Inbound<'_>, principal: Option<Principal>) -> http::Response<Body> {
        let dispatcher = Dispatcher::connection(self.server.clone());
        let mut session = Session::new();
        let reply = match dispatcher.dispatch(&mut session, None, principal.as_ref(), inbound, None) {
            Dispatch::Reply(reply @ Outgoing::Response { outcome: Ok(_), .. }) => reply,
            Dispatch::Reply(error) => return message_response(error, true),
            Dispatch::Done | Dispatch::Call(_) | Dispatch::Forbidden(..) => return empty(StatusCode::BAD_REQUEST),
        };
        let replay = match Replay::new(self.options.resume.clone(), self.kept.clone()) {
            Ok(replay) => replay,
            Err(e) => return no_session(&e),
        };
        let handshake = HandshakeSession::new(
            principal,
            session,
            dispatcher,
            self.sink.clone(),
            self.server.config.max_waiting,
            replay,
        );
        let session_id = match self.sessions.open(handshake) {
            Ok(Some(id)) => id,
            Ok(None) => return empty(StatusCode::SERVICE_UNAVAILABLE),
            Err(e) => return no_session(&e),
        };
        let mut r = message_response(reply, true);
        if let Ok(h) = HeaderValue::from_str(&session_id) {
            r.headers_mut().insert(SESSION_HEADER, h);
        }
        r
    }

    /// A message for the session named `session_id`.
    pub(super) fn in_session(
        &self,
        headers: &http::HeaderMap,
        sent: SentVersion,
        session_id: &str,
        inbound: Inbound<'_>,
        principal: Option<Principal>,
        caller: &CallerKey,
    ) -> http::Response<Body> {
        let handshake = match self.session(headers, sent, session_id, principal.as_ref()) {
            Ok(handshake) => handshake,
            Err(refused) => return refused.response(request_id(&inbound)),
        };
        let dispatched = match handshake.session.lock() {
            Ok(mut s) => handshake.dispatcher.dispatch(
                &mut s,
                Some(&handshake.peer),
                principal.as_ref(),
                inbound,
                super::carried_trace(headers).as_ref(),
            ),
            Err(_) => Dispatch::Reply(Outgoing::error(
                None,
                ErrorObject::internal("session state unavailable"),
            )),
        };
        if let Dispatch::Call(call) = &dispatched
            && let Err(forbidden) = call.allowed(principal.as_ref())
        {
            return self.insufficient_scope(headers, call.id().clone(), &forbidden);
        }
        if let Dispatch::Call(call) = &dispatched
            && let Err((e, wait)) = call.over_rate(caller)
        {
            return super::too_many(call.id().clone(), e, wait);
        }
        match dispatched {
            Dispatch::Done => empty(StatusCode::ACCEPTED),
            Dispatch::Forbidden(id, forbidden) => self.insufficient_scope(headers, id, &forbidden),
            // On this era an error is an ordinary response (200).
            Dispatch::Reply(message) => message_response(message, false),
            Dispatch::Call(call) => super::sse::resumable(
                &handshake.replay,
                call,
                |out| Some(Peer::sharing(&handshake.peer, out.clone())),
                principal,
                self.options.stream_keepalive,
            )
            // The session ended since it was looked up.
            .unwrap_or_else(|| Refused::NoSession.response(None)),
        }
    }

    /// The live session named `session_id`, if `principal` owns it, and if the request names a
    /// handshake-era version this server supports, or none. A client should send the version it
    /// negotiated, but the specification refuses only invalid or unsupported ones (as the official
    /// Python SDK does): another supported version is served, under the negotiated one. A client
    /// that sends none is taken at its word, as the specification allows for older clients.
    fn session(
        &self,
        headers: &http::HeaderMap,
        sent: SentVersion,
        session_id: &str,
        principal: Option<&Principal>,
    ) -> Result<Arc<HandshakeSession>, Refused> {
        let handshake = self.sessions.get(session_id, principal).ok_or(Refused::NoSession)?;
        if sent != SentVersion::Absent && !sent.names(Era::Handshake) {
            let text = header_str(headers, VERSION_HEADER).unwrap_or_default();
            return Err(Refused::Unsupported(text.to_owned()));
        }
        Ok(handshake)
    }

    /// `GET` naming a session: its stream of notifications that answer no request, or with
    /// `Last-Event-ID` the rest of one of its streams whose connection broke. It needs
    /// `Accept: text/event-stream` (else 406) and a session of the caller's (else 404, as for a
    /// POST). One reader per stream: a second GET takes over, and the first ends (a client
    /// that reconnects is never locked out by a stream it lost). A `Last-Event-ID` that names no
    /// event of this session gets 400, one whose events are no longer kept 410; neither replays
    /// anything. The GET stream ends with the session; while it is open the session is not idle.
    pub(super) fn listen(
        &self,
        headers: &http::HeaderMap,
        sent: SentVersion,
        session_id: &str,
        principal: Option<Principal>,
    ) -> http::Response<Body> {
        if !guard::accepts_event_stream(headers) {
            return error_response(
                None,
                ErrorObject::invalid_request("Not Acceptable: a GET stream needs `Accept: text/event-stream`"),
            )
            .with_status(StatusCode::NOT_ACCEPTABLE);
        }
        let handshake = match self.session(headers, sent, session_id, principal.as_ref()) {
            Ok(handshake) => handshake,
            Err(refused) => return refused.response(None),
        };
        let keepalive = self.options.stream_keepalive;
        let mut after = None;
        if let Some(last) = headers.get(LAST_EVENT_ID) {
            let found = last.to_str().map_err(|_| Refusal::Foreign);
            match found.and_then(|last| handshake.replay.find(last)) {
                Ok((log, seq)) if log.n != 0 => return super::sse::resume(&handshake.replay, log, seq, keepalive),
                Ok((_, seq)) => after = Some(seq),
                Err(refusal) => return Refused::Resume(refusal).response(None),
            }
        }
        let Some(log) = handshake.replay.listen_log() else {
            return Refused::NoSession.response(None);
        };
        let (tx, rx) = mpsc::channel(MAX_QUEUED);
        // `None`: the session ended since it was looked up.
        let Some(attachment) = handshake.mailbox.attach(tx) else {
            return Refused::NoSession.response(None);
        };
        let on_close = Detach {
            session: Arc::downgrade(&handshake),
            attachment,
        };
        super::sse::listen(&handshake.replay, log, rx, after, keepalive, on_close)
    }
}

/// 503: no randomness for a session's ids (nothing weaker is used instead).
fn no_session(e: &crate::seal::RandomUnavailable) -> http::Response<Body> {
    tracing::error!(error = %e, "no session opened");
    error_response(
        None,
        ErrorObject::internal("Internal error: no session could be opened"),
    )
    .with_status(StatusCode::SERVICE_UNAVAILABLE)
}

/// Why a request naming a session is refused.
enum Refused {
    /// No live session of the caller's has that id: 404.
    NoSession,
    /// The request names a version that is not a handshake-era one this server supports: 400.
    Unsupported(String),
    /// A `Last-Event-ID` that is not resumed: 400 (not an event of this session's) or 410 (its
    /// events are no longer kept).
    Resume(Refusal),
}

impl Refused {
    /// The refusal, echoing the request's id when the body was read (a GET has none).
    fn response(self, id: Option<crate::protocol::RequestId>) -> http::Response<Body> {
        match self {
            Self::NoSession => error_response(id, ErrorObject::invalid_request("Not Found: no such session"))
                .with_status(StatusCode::NOT_FOUND),
            Self::Unsupported(sent) => error_response(
                id,
                ErrorObject::invalid_request(format!(
                    "Bad Request: MCP-Protocol-Version {sent:?} is not a version this session can be served with \
                     (supported: {})",
                    handshake_versions()
                )),
            )
            .with_status(StatusCode::BAD_REQUEST),
            Self::Resume(Refusal::Foreign) => error_response(
                id,
                ErrorObject::invalid_request(
                    "Bad Request: Last-Event-ID names no event of this session; open the stream without it",
                ),
            )
            .with_status(StatusCode::BAD_REQUEST),
            Self::Resume(Refusal::Gone) => error_response(
                id,
                ErrorObject::invalid_request(
                    "Gone: the events after this Last-Event-ID are no longer kept (the stream ended, or a bound \
                     dropped them); nothing is replayed",
                ),
            )
            .with_status(StatusCode::GONE),
        }
    }
}

/// The id of a request, to echo in its refusal (base protocol: error responses "MUST include the
/// same ID as the request they correspond to").
fn request_id(inbound: &Inbound<'_>) -> Option<crate::protocol::RequestId> {
    match inbound {
        Inbound::Request { id, .. } => Some(id.clone()),
        _ => None,
    }
}

/// The handshake-era versions this server supports, for a refusal's message.
fn handshake_versions() -> String {
    let versions = ProtocolVersion::ALL.iter().filter(|v| v.era() == Era::Handshake);
    versions.map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
}

/// Closes a session's GET stream on its side when the stream goes (the client left): the
/// session's idle clock starts again from then.
struct Detach {
    session: Weak<HandshakeSession>,
    attachment: u64,
}

impl Drop for Detach {
    fn drop(&mut self) {
        if let Some(handshake) = self.session.upgrade() {
            handshake.mailbox.detach(self.attachment);
            handshake.touch();
        }
    }
}
