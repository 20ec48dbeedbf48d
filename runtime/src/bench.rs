//! Doors for `benches/micro.rs`, behind the non-default `bench` feature. Not API: thin doors onto
//! crate-private machinery, so a benchmark measures the real code paths without a transport.

use crate::dispatch::{Dispatch, Dispatcher};
use crate::protocol::inbound::classify;
use crate::resolve::state::CallBinding;
use crate::seal::Sealer;
use crate::server::Session;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Seals and unseals `requestState` as the server does for a `tools/call` of `tool` with
/// `arguments`, for `audience`, without a principal.
#[derive(Debug, Clone)]
pub struct StateSealer(Sealer);

fn binding<'a>(tool: &'a str, arguments: &'a Map<String, Value>, audience: &'a str) -> CallBinding<'a> {
    CallBinding {
        tool,
        arguments,
        audience,
        principal: None,
    }
}

impl StateSealer {
    /// A sealer with these keys and token lifetime.
    pub fn new(keys: crate::StateKeys, ttl: Duration) -> Self {
        Self(Sealer::new(Some(keys), ttl))
    }

    /// The sealed token (`v1.…`) of a state given as JSON text, as the engine holds its kept
    /// answers; `None` when sealing failed.
    pub fn seal(&self, state: &RawValue, tool: &str, arguments: &Map<String, Value>, audience: &str) -> Option<String> {
        binding(tool, arguments, audience).seal(&self.0, state).ok()
    }

    /// The state inside `token`, or `None` when it is refused (the reason is not told).
    pub fn unseal(&self, token: &str, tool: &str, arguments: &Map<String, Value>, audience: &str) -> Option<Value> {
        binding(tool, arguments, audience).open(&self.0, token).ok()
    }

    /// As [`StateSealer::unseal`], but the state comes back as the JSON text it was sealed as
    /// (authenticated, fresh, bound), without building a value from it.
    pub fn unseal_raw(
        &self,
        token: &str,
        tool: &str,
        arguments: &Map<String, Value>,
        audience: &str,
    ) -> Option<Box<RawValue>> {
        binding(tool, arguments, audience).open(&self.0, token).ok()
    }
}

/// Serves one JSON-RPC frame as the stateless HTTP path does, minus the I/O: parse, dispatch
/// (resolvers, tool body, sealing), encode the response (no framing). Each frame gets a fresh
/// session and no back-channel, so this serves the 2026-07-28 era; a handshake-era `tools/call`
/// gets "not initialized". Progress notifications are dropped. `None` for frames that get no
/// response (notifications, responses).
#[derive(Clone)]
pub struct FrameHandler(Dispatcher);

impl FrameHandler {
    /// A handler for `server`.
    pub fn new(server: crate::Server) -> Self {
        Self(Dispatcher::stateless(Arc::new(server)))
    }

    /// The response to one frame.
    pub async fn handle(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        match self.0.dispatch(&mut Session::new(), None, classify(bytes)) {
            Dispatch::Done => None,
            Dispatch::Reply(message) => Some(message.encode()),
            Dispatch::Call(call) => call.run_detached(None).await.map(|m| m.encode()),
        }
    }
}
