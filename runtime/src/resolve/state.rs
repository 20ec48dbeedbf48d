//! The `requestState` of a 2026-07-28 call: what it holds between rounds, and what it is bound
//! to. Sealing itself (the cipher, keys, expiry) is [`crate::seal`]'s.

use crate::context::Principal;
use crate::protocol::ErrorObject;
use crate::seal::{Binding, SealError, Sealer};
use crate::throttle::Throttle;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// An answer kept across rounds, with the digest of the question it answers: it is used again
/// only if the resolver asks the same question. Its content stays JSON text, so a state carried
/// over many rounds is never re-escaped.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Kept {
    pub(crate) action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) content: Option<Box<RawValue>>,
    pub(crate) q: String,
}

/// The engine's state between rounds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct RoundState {
    /// The round the questions of this state were asked in (1 for the first).
    #[serde(default, rename = "r")]
    pub(crate) round: u64,
    /// Answers kept, by question key.
    #[serde(default)]
    pub(crate) outcomes: BTreeMap<String, Kept>,
    /// The digest of each question asked in this round, by key: an answer counts only for the
    /// question that was asked.
    #[serde(default)]
    pub(crate) asked: BTreeMap<String, String>,
    /// The URL-mode flows asked in this round, by key: the retry learns from the store whether
    /// the page completed them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) flows: BTreeMap<String, FlowRef>,
}

/// A URL-mode flow a question started: its id (the `flow` of the page's URL), the full URL the
/// user was sent to, and the digest of the question that started it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FlowRef {
    pub(crate) id: String,
    pub(crate) url: String,
    pub(crate) q: String,
}

/// What a call's state is bound to: the method (`tools/call`, `prompts/get`, …), the tool or
/// prompt, its arguments, the deployment and the caller.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallBinding<'a> {
    pub(crate) method: &'static str,
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a Map<String, Value>,
    pub(crate) audience: &'a str,
    pub(crate) principal: Option<&'a Principal>,
}

/// The one error every refused `requestState` gets; the reason goes to the log only.
pub(crate) fn invalid_state() -> ErrorObject {
    ErrorObject::invalid_params("Invalid or expired requestState")
        .with_data(json!({ "reason": "invalid_request_state" }))
}

impl CallBinding<'_> {
    fn binding(&self) -> Binding<'_> {
        Binding {
            method: self.method,
            target: self.tool,
            arguments: self.arguments,
            audience: self.audience,
            principal: self.principal,
        }
    }

    /// The state in `token`, when it is ours, fresh and bound to this call.
    pub(crate) fn open<T: DeserializeOwned>(&self, sealer: &Sealer, token: &str) -> Result<T, ErrorObject> {
        static REFUSED: Throttle = Throttle::new();
        sealer.unseal(token, &self.binding()).map_err(|reason| {
            // A client can send refused states as fast as it likes: one line a second at most.
            if let Some(left_out) = REFUSED.admit() {
                tracing::warn!(tool = %self.tool, %reason, left_out, "requestState rejected");
            }
            invalid_state()
        })
    }

    /// `state`, sealed and bound to this call. A failure (no randomness) stops the call.
    pub(crate) fn seal<S: Serialize + ?Sized>(&self, sealer: &Sealer, state: &S) -> Result<String, ErrorObject> {
        sealer.seal(state, &self.binding()).map_err(|e| {
            static FAILED: Throttle = Throttle::new();
            if let Some(left_out) = FAILED.admit() {
                tracing::error!(tool = %self.tool, error = %e, left_out, "requestState could not be sealed");
            }
            match e {
                // The client's answers made it too large: say so.
                SealError::TooLarge(_) => ErrorObject::invalid_params(format!("Invalid params: {e}")),
                _ => ErrorObject::internal("Internal error: the request state could not be sealed"),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_survives_sealing_and_is_bound_to_its_call() {
        let sealer = Sealer::new(None, std::time::Duration::from_secs(60));
        let args = Map::new();
        let call = CallBinding {
            method: "tools/call",
            tool: "t",
            arguments: &args,
            audience: "a",
            principal: None,
        };
        let mut state = RoundState {
            round: 2,
            ..RoundState::default()
        };
        state.asked.insert("k".into(), "digest".into());
        state.outcomes.insert(
            "j".into(),
            Kept {
                action: "accept".into(),
                content: Some(serde_json::value::to_raw_value(&json!({"ok": true})).unwrap()),
                q: "d2".into(),
            },
        );
        let token = call.seal(&sealer, &state).unwrap();
        let opened = call.open::<RoundState>(&sealer, &token).unwrap();
        assert_eq!(
            serde_json::to_string(&opened).unwrap(),
            serde_json::to_string(&state).unwrap()
        );
        let other = CallBinding { tool: "u", ..call };
        assert_eq!(other.open::<RoundState>(&sealer, &token).unwrap_err(), invalid_state());
    }
}
