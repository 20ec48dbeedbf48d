//! The resolver part of a call, the same for tools, prompts and resources: the era's asker, the
//! engine over the item's `#[resolve]` parameters, and on 2026-07-28 the round's
//! `InputRequiredResult` with its sealed state.

use super::builder::Server;
use super::registry::{Item, panic_text};
use crate::context::Context;
use crate::peer::Peer;
use crate::principal::Principal;
use crate::protocol::Era;
use crate::protocol::ErrorObject;
use crate::protocol::messages::InputRequiredResult;
use crate::question::Settled;
use crate::resolve::ask::{BackChannel, Collect};
use crate::resolve::engine::{Asker, Engine, Outcome};
use crate::resolve::state::{CallBinding, RoundState};
use futures_util::FutureExt;
use serde_json::value::RawValue;
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
    Answer(Result<Box<RawValue>, ErrorObject>),
}

/// The resolver part of a call, the same for tools, prompts and resources.
pub(super) struct Resolving {
    pub(super) item: Arc<Item>,
    pub(super) input_responses: Map<String, Value>,
    pub(super) state: RoundState,
    pub(super) principal: Option<Principal>,
    pub(super) peer: Option<Peer>,
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
            input_responses,
            state,
            principal,
            peer,
        } = self;
        let (kind, method, slots) = (item.kind().as_str(), item.kind().method(), item.resolvers());
        if slots.is_empty() {
            return Resolved::Ready(arguments, Vec::new());
        }
        let version = context.protocol_version();
        let stateless = version.era() == Era::Stateless;
        let shared = Arc::new(arguments);
        let asking = server.ask_context(principal.clone());
        let asker = match (stateless, peer) {
            (false, Some(peer)) => Asker::BackChannel(BackChannel {
                peer,
                timeout: server.config.elicitation_timeout,
                max_questions: server.config.max_rounds,
                questions: 0,
                asking,
            }),
            _ => Asker::Collect(Collect::new(state, input_responses, asking)),
        };
        let engine = Engine::new(
            kind,
            (name, &item.id),
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
                    server.result(&body, version, "input_required")
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
