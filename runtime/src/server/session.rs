//! The protocol state of one connection: which era it serves and, on the handshake era, what
//! `initialize` said. It decides what each request gets; it never touches I/O.

use super::Server;
use super::call::{PendingCall, Route};
use crate::access::Forbidden;
use crate::peer::Mailbox;
use crate::principal::Principal;
use crate::protocol::envelope::{Envelope, EnvelopeCache, KnownMeta, Meta};
use crate::protocol::jsonrpc::{Answer, to_body};
use crate::protocol::messages::{EmptyResult, InitializeParams, ParamsHead};
use crate::protocol::{ClientCapabilities, ErrorObject, Implementation, LogLevel, ProtocolVersion, codes};
use crate::updates::{MAX_SUBSCRIPTIONS, Subscriptions};
use serde_json::{Value, json};
use std::sync::Arc;

#[derive(Debug)]
enum EraState {
    Undecided,
    Stateless,
    Handshake(Option<Handshake>),
}

#[derive(Debug)]
struct Handshake {
    version: ProtocolVersion,
    capabilities: ClientCapabilities,
    client_info: Option<Arc<Implementation>>,
    /// The least severe log message the client wants: `info` until `logging/setLevel` says
    /// otherwise.
    log_level: LogLevel,
    /// The URIs the client subscribed to (`resources/subscribe`), registered with the server's
    /// [`super::ResourceUpdates`] until the session ends.
    subscriptions: Subscriptions,
}

const STATELESS_INITIALIZE: &str =
    "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted";
const HANDSHAKE_ENVELOPE: &str = "this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it";

/// One connection's protocol state. On stdio the first request decides the era; on HTTP every
/// 2026-07-28 request gets a fresh one, and each handshake-era session keeps its own.
#[derive(Debug)]
pub(crate) struct Session {
    state: EraState,
    envelopes: EnvelopeCache,
    /// Where notifications for its subscriptions go (handshake era).
    mailbox: Mailbox,
}

impl Session {
    /// A session whose notifications go nowhere until its mailbox is attached.
    pub(crate) fn new() -> Self {
        Self {
            state: EraState::Undecided,
            envelopes: EnvelopeCache::default(),
            mailbox: Mailbox::default(),
        }
    }

    /// A session whose notifications go to `mailbox` (stdio: the connection's outgoing queue).
    pub(crate) fn with_mailbox(mailbox: Mailbox) -> Self {
        let mut session = Self { mailbox, ..Self::new() };
        // A connection's requests repeat their `_meta`: the last one's is kept.
        session.envelopes.remember = true;
        session
    }

    /// The last request's `_meta`, which the next frame likely repeats
    /// ([`classify_knowing`](crate::protocol::inbound::classify_knowing)).
    pub(crate) fn known_meta(&self) -> Option<&KnownMeta> {
        self.envelopes.known()
    }

    /// Where its notifications go (HTTP: the session's GET stream, attached there).
    pub(crate) fn mailbox(&self) -> &Mailbox {
        &self.mailbox
    }

    /// The session ended: its subscriptions leave the server's registry now, even if the
    /// session itself is dropped later.
    pub(crate) fn end(&mut self) {
        if let EraState::Handshake(Some(h)) = &mut self.state {
            h.subscriptions.clear();
        }
    }

    /// Decides what a request gets. Runs on the reader, in arrival order, so the era and the
    /// handshake are settled before the next frame is looked at.
    pub(crate) fn on_request(
        &mut self,
        server: &Server,
        method: &str,
        head: &ParamsHead<'_>,
        principal: Option<&Principal>,
    ) -> Route {
        let meta = &head.meta;
        // A `_meta` whose members cannot be read makes the request invalid. (A stateless
        // connection's `_meta` is checked when it is read: the same text as the last request's,
        // which was read, is not read again.)
        if !matches!(self.state, EraState::Stateless)
            && let Err(e) = meta.check()
        {
            return Route::Reply(Err(e));
        }
        if let EraState::Undecided = self.state {
            self.state = if method != "initialize" && meta.has_envelope() {
                EraState::Stateless
            } else {
                EraState::Handshake(None)
            };
        }
        match &mut self.state {
            EraState::Undecided | EraState::Stateless => {
                stateless(server, method, head, meta, &mut self.envelopes, principal)
            }
            EraState::Handshake(hs) => handshake(server, hs, &self.mailbox, method, head, meta, principal),
        }
    }
}

fn stateless(
    server: &Server,
    method: &str,
    head: &ParamsHead<'_>,
    meta: &Meta<'_>,
    envelopes: &mut EnvelopeCache,
    principal: Option<&Principal>,
) -> Route {
    if method == "initialize" {
        let requested = head
            .protocol_version
            .and_then(|v| serde_json::from_str(v.get()).ok())
            .unwrap_or(Value::Null);
        return Route::Reply(Err(ErrorObject::new(
            codes::UNSUPPORTED_PROTOCOL_VERSION,
            STATELESS_INITIALIZE,
        )
        .with_data(json!({
            "supported": crate::protocol::version::supported_stateless(),
            "requested": requested,
        }))));
    }
    let envelope = match meta.envelope_cached(envelopes) {
        Ok(e) => e,
        Err(e) => return Route::Reply(Err(e)),
    };
    match method {
        "server/discover" => Route::Reply(server.discover(envelope.version)),
        "subscriptions/listen" => PendingCall::prepare_listen(server, head, envelope, principal),
        other => serve(server, other, head, Ok(envelope), principal),
    }
}

fn not_initialized() -> ErrorObject {
    ErrorObject::invalid_params("Invalid request parameters")
        .with_data(json!("the connection is not initialized: send `initialize` first"))
}

/// The methods both eras serve, in one place. `envelope` is what the request carries (its
/// version, the client's capabilities), or why there is none yet (a handshake-era connection not
/// initialized): that error is the answer to a method that needs it, while an unknown method is
/// -32601 either way. Lists show `principal` only what its scopes allow.
fn serve(
    server: &Server,
    method: &str,
    head: &ParamsHead<'_>,
    envelope: Result<Envelope, ErrorObject>,
    principal: Option<&Principal>,
) -> Route {
    fn with(envelope: Result<Envelope, ErrorObject>, then: impl FnOnce(Envelope) -> Route) -> Route {
        match envelope {
            Ok(e) => then(e),
            Err(e) => Route::Reply(Err(e)),
        }
    }
    let listing = match method {
        "tools/list" => true,
        "prompts/list" => server.has_prompts(),
        "resources/list" | "resources/templates/list" => server.has_resources(),
        _ => false,
    };
    if listing && let Some(cursor) = head.cursor.filter(|c| c.get() != "null") {
        // Every list is one page, so this server hands out no cursor: any is unknown
        // (pagination: "Invalid cursors SHOULD result in an error with code -32602").
        return Route::Reply(Err(ErrorObject::invalid_params(format!(
            "Invalid params: unknown cursor {}: this server sends every item in one page and gives no cursors",
            cursor.get().chars().take(64).collect::<String>()
        ))));
    }
    match method {
        "tools/list" => with(envelope, |e| Route::Reply(server.list_tools(e.version, principal))),
        "tools/call" => with(envelope, |e| PendingCall::prepare(server, head, e)),
        "prompts/list" if server.has_prompts() => {
            with(envelope, |e| Route::Reply(server.list_prompts(e.version, principal)))
        }
        "prompts/get" if server.has_prompts() => with(envelope, |e| PendingCall::prepare_prompt(server, head, e)),
        "resources/list" if server.has_resources() => {
            with(envelope, |e| Route::Reply(server.list_resources(e.version, principal)))
        }
        "resources/templates/list" if server.has_resources() => with(envelope, |e| {
            Route::Reply(server.list_resource_templates(e.version, principal))
        }),
        "completion/complete" if server.has_completions() => {
            with(envelope, |e| PendingCall::prepare_complete(server, head, e))
        }
        "resources/read" if server.has_resources() => {
            with(envelope, |e| PendingCall::prepare_resource(server, head, e))
        }
        // The task methods: 2026-07-28's extension (`tasks/result` and `tasks/list` are gone,
        // -32601), 2025-11-25's core tasks (no `tasks/update`); no tasks before 2025-11-25.
        "tasks/get" | "tasks/update" | "tasks/cancel" | "tasks/result" | "tasks/list" if server.has_tasks() => {
            with(envelope, |e| {
                let known = match e.version.era() {
                    crate::protocol::Era::Stateless => matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel"),
                    crate::protocol::Era::Handshake => {
                        e.version >= ProtocolVersion::V2025_11_25 && method != "tasks/update"
                    }
                };
                if !known {
                    return Route::Reply(Err(ErrorObject::method_not_found(method)));
                }
                PendingCall::prepare_task(server, method, head, e)
            })
        }
        other => Route::Reply(Err(ErrorObject::method_not_found(other))),
    }
}

fn handshake(
    server: &Server,
    hs: &mut Option<Handshake>,
    mailbox: &Mailbox,
    method: &str,
    head: &ParamsHead<'_>,
    meta: &Meta<'_>,
    principal: Option<&Principal>,
) -> Route {
    if method != "initialize" && meta.has_envelope() {
        return Route::Reply(Err(ErrorObject::invalid_request(HANDSHAKE_ENVELOPE)));
    }
    match method {
        "initialize" => {
            if hs.is_some() {
                return Route::Reply(Err(ErrorObject::invalid_request(
                    "Invalid Request: the connection is already initialized",
                )));
            }
            let p = InitializeParams::read(head);
            let version = p
                .version
                .filter(|v| v.agreeable())
                .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
            // Both parties "MUST respect the negotiated protocol version": 2024-11-05 has no
            // `elicitation/create`, whatever the client declares.
            let capabilities = if version < ProtocolVersion::V2025_06_18 {
                p.capabilities.without_elicitation()
            } else {
                p.capabilities
            };
            *hs = Some(Handshake {
                version,
                capabilities,
                client_info: p.client_info,
                log_level: LogLevel::Info,
                subscriptions: server.updates.session(mailbox.clone()),
            });
            Route::Reply(server.initialize_result(version))
        }
        "ping" => Route::Reply(to_body(&EmptyResult {})),
        "logging/setLevel" => {
            let Some(h) = hs else {
                return Route::Reply(Err(not_initialized()));
            };
            let Some(level) = head.level.and_then(LogLevel::from_raw) else {
                return Route::Reply(Err(ErrorObject::invalid_params(
                    "Invalid params: `level` must be one of debug, info, notice, warning, error, critical, alert, emergency",
                )));
            };
            h.log_level = level;
            // Exactly `{}`: clients check it.
            Route::Reply(to_body(&EmptyResult {}))
        }
        "resources/subscribe" | "resources/unsubscribe" if server.has_resources() => {
            match subscription(server, hs.as_mut(), method, head, principal) {
                Ok(outcome) => Route::Reply(outcome),
                Err(forbidden) => Route::Forbidden(forbidden),
            }
        }
        other => {
            let envelope = match hs {
                Some(h) => Ok(Envelope {
                    version: h.version,
                    capabilities: h.capabilities.clone(),
                    client_info: h.client_info.clone(),
                    progress_token: meta.progress_token(),
                    log_level: Some(h.log_level),
                }),
                None => Err(not_initialized()),
            };
            serve(server, other, head, envelope, principal)
        }
    }
}

/// `resources/subscribe` and `resources/unsubscribe` (handshake era only; 2026-07-28 has neither):
/// the URI must name a resource whose scopes `principal` holds, as `resources/read` would
/// require; the answer is exactly `{}`. The session's subscriptions are registered with the
/// server's [`super::ResourceUpdates`], which sends `notifications/resources/updated` to the
/// session's mailbox.
fn subscription(
    server: &Server,
    hs: Option<&mut Handshake>,
    method: &str,
    head: &ParamsHead<'_>,
    principal: Option<&Principal>,
) -> Result<Answer, Forbidden> {
    let Some(hs) = hs else {
        return Ok(Err(not_initialized()));
    };
    let uri = match super::read::required_str(head.uri, "uri") {
        Ok(uri) => uri,
        Err(e) => return Ok(Err(e)),
    };
    let entry = match server.find_resource(&uri, crate::protocol::Era::Handshake) {
        Ok((entry, _)) => entry,
        Err(e) => return Ok(Err(e)),
    };
    if method == "resources/subscribe" {
        crate::access::check("resource", &uri, &entry.scopes, principal)?;
        if !hs.subscriptions.subscribe(&uri) {
            return Ok(Err(ErrorObject::invalid_params(format!(
                "Invalid params: this session already holds {MAX_SUBSCRIPTIONS} subscriptions; unsubscribe first"
            ))));
        }
    } else {
        hs.subscriptions.unsubscribe(&uri);
    }
    Ok(to_body(&EmptyResult {}))
}
