//! The `requestState` of a 2026-07-28 call: what it holds between rounds, and what it is bound
//! to. Sealing itself (the cipher, keys, expiry) is [`crate::seal`]'s.

use crate::principal::Principal;
use crate::protocol::ErrorObject;
use crate::seal::{Binding, Refusal, SealError, Sealer};
use crate::store::Store;
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

/// A client can send refused states as fast as it likes: one line a second at most, whatever
/// the reason.
static REFUSED: Throttle = Throttle::new();

/// Where a single-use call's opened states are recorded, under the digest of the token.
pub(crate) const USED_PREFIX: &str = "mcp-resolve/used/";

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

    fn refused(&self, reason: Refusal) -> ErrorObject {
        crate::telemetry::metric::state_refused(match reason {
            Refusal::Malformed | Refusal::Seal => "tampered",
            Refusal::Binding | Refusal::Audience | Refusal::Principal => "mismatched",
            Refusal::Expired => "expired",
            Refusal::Replayed => "replayed",
        });
        if let Some(left_out) = REFUSED.admit() {
            tracing::warn!(tool = %self.tool, %reason, left_out, "requestState rejected");
        }
        invalid_state()
    }

    /// The state in `token`, when it is ours, fresh and bound to this call.
    pub(crate) fn open<T: DeserializeOwned>(&self, sealer: &Sealer, token: &str) -> Result<T, ErrorObject> {
        sealer
            .unseal(token, &self.binding())
            .map_err(|reason| self.refused(reason))
    }

    /// [`CallBinding::open`] for a call whose answers are single-use: the token is consumed, so
    /// it opens once. It is recorded in `store` as used (under the SHA-256 of the token) for as
    /// long as any replica could still take it: its remaining life on this clock plus the leeway
    /// once more, for replicas whose clocks are behind. Seen before: refused like any bad state.
    /// The store failing: -32603, and the call does not run (fail closed).
    pub(crate) async fn open_once<T: DeserializeOwned>(
        &self,
        sealer: &Sealer,
        store: &dyn Store,
        token: &str,
    ) -> Result<T, ErrorObject> {
        // Opened first: only our own fresh tokens for this very call reach the store.
        let (state, takeable) = sealer
            .unseal_for(token, &self.binding())
            .map_err(|reason| self.refused(reason))?;
        let key = format!("{USED_PREFIX}{}", crate::seal::token_digest(token));
        match store.insert_new(&key, b"", takeable + sealer.leeway).await {
            Ok(true) => Ok(state),
            Ok(false) => Err(self.refused(Refusal::Replayed)),
            Err(e) => {
                static UNAVAILABLE: Throttle = Throttle::new();
                if let Some(left_out) = UNAVAILABLE.admit() {
                    tracing::error!(tool = %self.tool, error = %e, left_out, "single-use requestState not checked: the store failed; the call is refused");
                }
                Err(ErrorObject::internal(
                    "Internal error: this call's answers are single-use and the store that records used ones is unavailable, so nothing ran; start the call again later",
                ))
            }
        }
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

    fn binding(arguments: &Map<String, Value>) -> CallBinding<'_> {
        CallBinding {
            method: "tools/call",
            tool: "t",
            arguments,
            audience: "a",
            principal: None,
        }
    }

    #[test]
    fn a_state_survives_sealing_and_is_bound_to_its_call() {
        let sealer = Sealer::new(None, std::time::Duration::from_secs(60));
        let args = Map::new();
        let call = binding(&args);
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

    /// A state the client's answers made too large to seal ends the call as the client's
    /// invalid params, saying so; it is not an internal error.
    #[test]
    fn a_state_too_large_to_seal_is_refused_as_invalid_params() {
        let sealer = Sealer::new(None, std::time::Duration::from_secs(60));
        let args = Map::new();
        let mut state = RoundState::default();
        let huge = json!({ "text": "x".repeat(crate::seal::MAX_STATE_BYTES) });
        state.outcomes.insert(
            "k".into(),
            Kept {
                action: "accept".into(),
                content: Some(serde_json::value::to_raw_value(&huge).unwrap()),
                q: "d".into(),
            },
        );
        let e = binding(&args).seal(&sealer, &state).unwrap_err();
        assert_eq!(e.code, -32602);
        assert!(
            e.message.starts_with("Invalid params: the state to seal has "),
            "{}",
            e.message
        );
    }

    /// The time to live `open_once` gave the store for `token`'s used record (its first write).
    fn recorded_ttl(store: &crate::testing::RecordingStore, token: &str) -> std::time::Duration {
        let key = format!("{USED_PREFIX}{}", crate::seal::token_digest(token));
        let writes = store.writes();
        assert!(!writes.is_empty(), "nothing recorded");
        assert_eq!(writes[0].0, key, "recorded under the token's digest");
        writes[0].1
    }

    #[tokio::test]
    async fn a_single_use_state_opens_once_and_a_failing_store_refuses_it() {
        use std::time::{Duration, Instant};
        let sealer = Sealer::new(None, Duration::from_secs(60));
        let args = Map::new();
        let call = binding(&args);
        let before = Instant::now();
        let token = call.seal(&sealer, &RoundState::default()).unwrap();
        let store = crate::testing::RecordingStore::default();
        assert!(call.open_once::<RoundState>(&sealer, &store, &token).await.is_ok());
        let elapsed = before.elapsed();
        assert_eq!(
            call.open_once::<RoundState>(&sealer, &store, &token).await.unwrap_err(),
            invalid_state(),
            "replayed"
        );
        // Recorded under the token's digest, for the token's life and the leeway twice at most:
        // 60 s + 2 × 60 s, less the time since it was sealed. (The margin of 1 s: the token's
        // clock is the system clock, which may be stepped while `Instant` is not.)
        let key = format!("{USED_PREFIX}{}", crate::seal::token_digest(&token));
        assert_eq!(store.get(&key).await.unwrap().as_deref(), Some(&b""[..]));
        let ttl = recorded_ttl(&store, &token);
        let bound = sealer.ttl + 2 * sealer.leeway;
        assert_eq!(bound, Duration::from_secs(180));
        assert!(ttl <= bound, "{ttl:?} is past the bound {bound:?}");
        assert!(
            ttl + elapsed + Duration::from_secs(1) >= bound,
            "{ttl:?}: forgotten while a replica whose clock is behind could take the token"
        );
        // A state that does not open never reaches the store.
        let other = CallBinding { tool: "u", ..call };
        assert_eq!(
            other
                .open_once::<RoundState>(&sealer, &crate::testing::FailingStore, &token)
                .await
                .unwrap_err(),
            invalid_state()
        );
        let fresh = call.seal(&sealer, &RoundState::default()).unwrap();
        let e = call
            .open_once::<RoundState>(&sealer, &crate::testing::FailingStore, &fresh)
            .await
            .unwrap_err();
        assert_eq!(e.code, -32603);
        assert!(e.message.contains("single-use"), "{}", e.message);
    }

    /// A token sealed under a longer TTL than the one configured now expires by the TTL of now,
    /// and is recorded for that long: the bound is `state_ttl` + 2 × `state_leeway` as configured.
    #[tokio::test]
    async fn a_used_state_is_recorded_no_longer_than_the_ttl_configured_now_and_the_leeway_twice() {
        use crate::seal::StateKeys;
        use std::time::Duration;
        let keys = || Some(StateKeys::new(&[3u8; 32]).unwrap());
        let long = Sealer::new(keys(), Duration::from_secs(600));
        let mut short = Sealer::new(keys(), Duration::from_secs(30));
        short.leeway = Duration::from_secs(5);
        let args = Map::new();
        let call = binding(&args);
        let token = call.seal(&long, &RoundState::default()).unwrap();
        let store = crate::testing::RecordingStore::default();
        assert!(call.open_once::<RoundState>(&short, &store, &token).await.is_ok());
        let ttl = recorded_ttl(&store, &token);
        assert!(ttl <= Duration::from_secs(40), "{ttl:?}");
        // Less the time since it was sealed, with a margin of 1 s (as above).
        assert!(
            ttl >= Duration::from_secs(39),
            "{ttl:?}: forgotten while a replica whose clock is behind could take the token"
        );
    }
}
