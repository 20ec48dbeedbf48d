//! 2026-07-28 over HTTP: every POST stands alone. Headers are checked against the body in the
//! reference order (`MCP-Protocol-Version`, envelope keys, header against `_meta`, `Mcp-Method`,
//! `Mcp-Name`); then the request is dispatched with a fresh session, and a call answers as JSON,
//! or as SSE when the client asked for progress.

use super::{Body, SentVersion, State, VERSION_HEADER, empty, error_response, header_str, message_response};
use crate::dispatch::Dispatch;
use crate::principal::Principal;
use crate::protocol::inbound::Inbound;
use crate::protocol::jsonrpc::raw_str;
use crate::protocol::messages::ParamsHead;
use crate::protocol::{Era, ErrorObject, RequestId, codes};
use crate::server::rate::CallerKey;
use crate::server::{Server, Session};
use http::{HeaderMap, StatusCode};

const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";

fn mismatch(id: &RequestId, message: &'static str) -> Result<(), (RequestId, ErrorObject)> {
    Err((id.clone(), ErrorObject::new(codes::HEADER_MISMATCH, message)))
}

/// The header checks, in the reference order.
fn check_headers(
    server: &Server,
    headers: &HeaderMap,
    sent: SentVersion,
    id: &RequestId,
    method: &str,
    head: &ParamsHead<'_>,
) -> Result<(), (RequestId, ErrorObject)> {
    let meta = &head.meta;
    meta.check().map_err(|e| (id.clone(), e))?;
    let header_version = header_str(headers, VERSION_HEADER);
    if sent.names(Era::Handshake) && !meta.has_envelope() {
        return Err((
            id.clone(),
            ErrorObject::invalid_request(
                "Bad Request: no valid session; a handshake-era client starts with `initialize`",
            ),
        ));
    }
    let Some(header_version) = header_version else {
        return mismatch(id, "Header mismatch: the MCP-Protocol-Version header is required");
    };
    if let Err(e) = meta.validate()
        && e.code == codes::INVALID_PARAMS
    {
        return Err((id.clone(), e));
    }
    if meta.version_str().as_deref() != Some(header_version) {
        return mismatch(id, "Header mismatch: MCP-Protocol-Version does not match params._meta");
    }
    match header_str(headers, METHOD_HEADER) {
        Some(m) if m == method => {}
        Some(_) => return mismatch(id, "Header mismatch: Mcp-Method does not match the body"),
        None => return mismatch(id, "Header mismatch: the Mcp-Method header is required"),
    }
    let name = match method {
        "tools/call" | "prompts/get" => head.name.and_then(raw_str),
        "resources/read" => head.uri.and_then(raw_str),
        // SEP-2663: every task method carries `Mcp-Name: <taskId>`, for load balancers.
        "tasks/get" | "tasks/update" | "tasks/cancel" => head.task_id.and_then(raw_str),
        _ => None,
    };
    if let Some(name) = &name {
        match super::mirror::header(headers, NAME_HEADER) {
            Some(Some(h)) if h == *name => {}
            Some(_) => return mismatch(id, "Header mismatch: Mcp-Name does not match the body"),
            None => return mismatch(id, "Header mismatch: the Mcp-Name header is required"),
        }
    }
    if method == "tools/call"
        && let Some(entry) = name.as_deref().and_then(|n| server.tool_item(n))
        && !entry.mirrored.is_empty()
        && let Err(why) = super::mirror::check_params(headers, head.arguments, &entry.mirrored)
    {
        return Err((
            id.clone(),
            ErrorObject::new(codes::HEADER_MISMATCH, format!("Header mismatch: {why}")),
        ));
    }
    Ok(())
}

impl State {
    pub(super) async fn stateless(
        &self,
        headers: &HeaderMap,
        sent: SentVersion,
        inbound: Inbound<'_>,
        principal: Option<Principal>,
        caller: &CallerKey,
    ) -> http::Response<Body> {
        match &inbound {
            Inbound::Request { id, method, params } => {
                if let Err((id, e)) = check_headers(&self.server, headers, sent, id, method, params) {
                    return error_response(Some(id), e);
                }
                if method == "initialize" {
                    return error_response(Some(id.clone()), ErrorObject::method_not_found(method));
                }
            }
            // Notifications need no answer; cancellation is closing the stream on this era.
            Inbound::Notification { .. } => return empty(StatusCode::ACCEPTED),
            Inbound::Response { id, .. } => {
                return error_response(
                    Some(id.clone()),
                    ErrorObject::invalid_request("Invalid Request: a 2026-07-28 client sends no responses"),
                );
            }
            Inbound::Invalid { .. } => return empty(StatusCode::BAD_REQUEST),
        }
        let dispatched = self.stateless.dispatch(
            &mut Session::new(),
            None,
            principal.as_ref(),
            inbound,
            super::carried_trace(headers).as_ref(),
        );
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
            Dispatch::Reply(message) => message_response(message, true),
            Dispatch::Call(call) if call.wants_stream() => {
                if call.is_listen() {
                    // Open for long: a graceful stop ends it (the client listens again elsewhere).
                    let (token, stopping) = (call.token(), self.stopping.clone());
                    tokio::spawn(async move {
                        tokio::select! {
                            () = stopping.cancelled() => token.cancel(),
                            () = token.cancelled() => {}
                        }
                    });
                }
                let keepalive = call.is_listen().then_some(self.options.stream_keepalive);
                super::sse::stream(call, |_| None, principal, keepalive)
            }
            Dispatch::Call(call) => {
                // Dropping this future (the client went away) drops the call: cancellation.
                match call.run_detached(principal).await {
                    Some(message) => message_response(message, true),
                    None => empty(StatusCode::NO_CONTENT),
                }
            }
        }
    }
}
