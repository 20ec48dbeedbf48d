//! The resolver part of a call, the same for tools, prompts and resources: the era's asker, the
//! engine over the item's `#[resolve]` parameters, and on 2026-07-28 the round's
//! `InputRequiredResult` with its sealed state.

use super::answers::Reply;
use super::builder::Server;
use super::registry::{Item, panic_text};
use crate::context::Context;
use crate::peer::Peer;
use crate::principal::Principal;
use crate::protocol::Era;
use crate::protocol::ErrorObject;
use crate::protocol::messages::InputRequiredResult;
use crate::question::Settled;
use crate::resolve::ask::Asker;
use crate::resolve::back_channel::BackChannel;
use crate::resolve::collect::Collect;
use crate::resolve::engine::{Engine, Outcome};
use crate::resolve::state::{CallBinding, RoundState};
use futures_util::FutureExt;
use serde_json::{Map, Value};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// What resolving a call's `#[resolve]` parameters gave.
pub(super) enum Resolved {
    /// Every value, in the order of the slots, and the arguments back: the body runs.
    Ready(Map<String, Value>, Vec<Settled>),
    /// The call stops with this message (a tool's `isError` result, else a JSON-RPC error).
    Stop(String),
    /// The call's answer is this: an `InputRequiredResult` (2026-07-28), or a JSON-RPC error.
    Answer(crate::protocol::jsonrpc::Answer),
}

/// The resolver part of a call, the same for tools, prompts and resources.
pub(super) struct Resolving {
    pub(super) item: Arc<Item>,
    pub(super) channel: Channel,
    pub(super) principal: Option<Principal>,
}

/// How one call's questions travel, decided once from its era and its connection: every part of
/// the call that depends on the era (the asker, a body's own questions, whether a round may end
/// in an `InputRequiredResult`) asks this value.
pub(crate) enum Channel {
    /// 2026-07-28: a round's questions go back in an `InputRequiredResult`; a retry brings their
    /// answers and the state its `requestState` held.
    Stateless {
        state: RoundState,
        input_responses: Map<String, Value>,
        /// The request carries `inputResponses` or `requestState`: its result is not cached.
        retry: bool,
    },
    /// The handshake era: questions are requests on the connection's back-channel (none on a
    /// connection that cannot ask: then, as a round, nothing answered).
    Handshake {
        peer: Option<Peer>,
        input_responses: Map<String, Value>,
    },
}

impl Channel {
    /// `retry`: the request carries `inputResponses` or `requestState`; `state`, what its
    /// `requestState` held (none: a first round, or the handshake era, which has none).
    pub(crate) fn of(
        era: Era,
        retry: bool,
        peer: Option<Peer>,
        state: Option<RoundState>,
        input_responses: Map<String, Value>,
    ) -> Self {
        match era {
            Era::Stateless => Self::Stateless {
                retry,
                state: state.unwrap_or_default(),
                input_responses,
            },
            Era::Handshake => Self::Handshake { peer, input_responses },
        }
    }

    /// How this call's answer is written: stamped for its era, with caching hints unless it
    /// answers a retry.
    pub(crate) fn reply(&self) -> Reply {
        match self {
            Self::Stateless { retry, .. } => Reply::Stateless { retry: *retry },
            Self::Handshake { .. } => Reply::Handshake,
        }
    }

    /// The back-channel a body's own questions go on (handshake era only).
    pub(crate) fn back_channel(&self) -> Option<&Peer> {
        match self {
            Self::Handshake { peer, .. } => peer.as_ref(),
            Self::Stateless { .. } => None,
        }
    }

    /// The engine's asker for this call.
    fn asker(self, server: &Server, asking: crate::resolve::ask::AskContext) -> Asker {
        match self {
            Self::Handshake { peer: Some(peer), .. } => Asker::BackChannel(BackChannel {
                expired: false,
                peer: crate::resolve::back_channel::Line::Peer(peer),
                timeout: server.config.elicitation_timeout,
                max_questions: server.config.max_rounds,
                questions: 0,
                asking,
            }),
            Self::Handshake {
                peer: None,
                input_responses,
            } => Asker::Collect(Collect::new(RoundState::default(), input_responses, asking)),
            Self::Stateless {
                state, input_responses, ..
            } => Asker::Collect(Collect::new(state, input_responses, asking)),
        }
    }
}

impl Resolving {
    /// Runs the engine over `slots` (nothing to do without any): the values, a stop, or the
    /// round's `InputRequiredResult`, whose state is sealed and bound to the method, `name` and
    /// `arguments`.
    pub(super) async fn run(
        self,
        server: &Server,
        name: &str,
        arguments: Map<String, Value>,
        context: &Context,
    ) -> Resolved {
        let Self {
            item,
            channel,
            principal,
        } = self;
        let (kind, method, slots) = (item.kind().as_str(), item.kind().method(), item.resolvers());
        if slots.is_empty() {
            return Resolved::Ready(arguments, Vec::new());
        }
        let reply = channel.reply();
        let stateless = matches!(channel, Channel::Stateless { .. });
        let shared = Arc::new(arguments);
        let asker = channel.asker(server, server.ask_context(principal.clone()));
        let engine = Engine::new(
            kind,
            (name, &item.id, &item.metrics),
            &item.keys,
            shared.clone(),
            context.clone(),
            asker,
            server.config.max_rounds,
        );
        let outcome = match AssertUnwindSafe(engine.run(slots)).catch_unwind().await {
            Ok(o) => o,
            Err(payload) => {
                panic_text("resolver", name, &payload);
                Outcome::Stop(format!("{kind} `{name}` failed: internal error"))
            }
        };
        match outcome {
            Outcome::Ready(values) => Resolved::Ready(Arc::try_unwrap(shared).unwrap_or_else(|a| (*a).clone()), values),
            Outcome::Stop(message) => Resolved::Stop(message),
            Outcome::Abort(e) => Resolved::Answer(Err(e)),
            Outcome::InputRequired { requests, state } if stateless => {
                let sealed =
                    binding(method, name, &shared, server, principal.as_ref()).seal(&server.config.sealer, &state);
                Resolved::Answer(sealed.and_then(|request_state| {
                    let body = InputRequiredResult {
                        input_requests: requests,
                        request_state,
                    };
                    reply.result(server, &body, "input_required")
                }))
            }
            Outcome::InputRequired { .. } => Resolved::Answer(Err(ErrorObject::internal(
                "a handshake-era call cannot return InputRequiredResult",
            ))),
        }
    }
}

/// What sealed state of a call is bound to.
pub(super) fn binding<'a>(
    method: &'static str,
    name: &'a str,
    arguments: &'a Map<String, Value>,
    server: &'a Server,
    principal: Option<&'a Principal>,
) -> CallBinding<'a> {
    CallBinding {
        method,
        tool: name,
        arguments,
        audience: server.audience(),
        principal,
    }
}
