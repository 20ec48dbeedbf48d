//! Handshake-era HTTP (2025-06-18, 2025-11-25): `initialize` opens a session; its requests come
//! as POSTs naming it. A call that asks the user answers its POST with an SSE stream carrying the
//! `elicitation/create` request; the client's answer comes as a separate POST, answered 202.

use super::sessions::LegacySession;
use super::{
    Body, SESSION_HEADER, State, VERSION_HEADER, WithStatus, empty, error_response, header_str, message_response,
};
use crate::context::Principal;
use crate::dispatch::{Dispatch, Dispatcher};
use crate::peer::Peer;
use crate::protocol::ErrorObject;
use crate::protocol::inbound::Inbound;
use crate::protocol::jsonrpc::Outgoing;
use crate::server::Session;
use http::{HeaderValue, StatusCode};

impl State {
    /// `initialize` without a session: a new session, if the bound allows.
    pub(super) fn initialize(&self, inbound: Inbound<'_>, principal: Option<Principal>) -> http::Response<Body> {
        let dispatcher = Dispatcher::connection(self.server.clone());
        let mut session = Session::new();
        let reply = match dispatcher.dispatch(&mut session, None, inbound) {
            Dispatch::Reply(reply @ Outgoing::Response { outcome: Ok(_), .. }) => reply,
            Dispatch::Reply(error) => return message_response(error, true),
            Dispatch::Done | Dispatch::Call(_) => return empty(StatusCode::BAD_REQUEST),
        };
        let legacy = LegacySession::new(
            principal,
            session,
            dispatcher,
            self.sink.clone(),
            self.server.config.max_waiting,
        );
        let session_id = match self.sessions.open(legacy) {
            Ok(Some(id)) => id,
            Ok(None) => return empty(StatusCode::SERVICE_UNAVAILABLE),
            Err(e) => {
                tracing::error!(error = %e, "no session opened");
                return error_response(
                    None,
                    ErrorObject::internal("Internal error: no session could be opened"),
                )
                .with_status(StatusCode::SERVICE_UNAVAILABLE);
            }
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
        session_id: &str,
        inbound: Inbound<'_>,
        principal: Option<Principal>,
    ) -> http::Response<Body> {
        let Some(legacy) = self.sessions.get(session_id, principal.as_ref()) else {
            return error_response(None, ErrorObject::invalid_request("Not Found: no such session"))
                .with_status(StatusCode::NOT_FOUND);
        };
        // After `initialize`, every request names the negotiated version (a client that sends
        // none is taken at its word, as the specification allows for older clients).
        if let Some(sent) = header_str(headers, VERSION_HEADER) {
            let negotiated = legacy.session.lock().ok().and_then(|s| s.negotiated());
            if negotiated.is_some_and(|v| v.as_str() != sent) {
                return error_response(
                    None,
                    ErrorObject::invalid_request(format!(
                        "Bad Request: MCP-Protocol-Version {sent:?} is not the version this session negotiated"
                    )),
                )
                .with_status(StatusCode::BAD_REQUEST);
            }
        }
        let dispatched = match legacy.session.lock() {
            Ok(mut s) => legacy.dispatcher.dispatch(&mut s, Some(&legacy.peer), inbound),
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
        match dispatched {
            Dispatch::Done => empty(StatusCode::ACCEPTED),
            // On this era an error is an ordinary response (200).
            Dispatch::Reply(message) => message_response(message, false),
            Dispatch::Call(call) => {
                super::sse::stream(call, |out| Some(Peer::sharing(&legacy.peer, out.clone())), principal)
            }
        }
    }
}
