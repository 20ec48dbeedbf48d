//! How often one caller may be asked by one tool, prompt or resource: at most `max` questions in
//! each window of `window`, counted per (what asks, caller) in this process. Past it the
//! question is not asked and the call ends saying so; each refusal is logged (rate-limited).

use crate::context::Principal;
use crate::throttle::Throttle;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many (what asks, caller) pairs are counted at once; past it, expired windows are swept,
/// and a still-full table refuses (fails closed).
const MAX_PAIRS: usize = 100_000;

/// What asks (`tool name`) and who is asked (issuer and subject; `None`: unauthenticated).
type Pair = (String, Option<(Option<String>, String)>);

/// The question budget of a server.
#[derive(Debug)]
pub(crate) struct QuestionLimit {
    pub(crate) max: u32,
    pub(crate) window: Duration,
    counts: Mutex<HashMap<Pair, (Instant, u32)>>,
}

impl QuestionLimit {
    pub(crate) fn new(max: u32, window: Duration) -> Self {
        Self {
            max: max.max(1),
            window,
            counts: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one question for `kind` `target` asked of `principal`; `Err` with the message the
    /// call ends with when the caller had its share of this window.
    pub(crate) fn take(&self, kind: &str, target: &str, principal: Option<&Principal>) -> Result<(), String> {
        let who = principal.map(|p| (p.issuer.clone(), p.subject.clone()));
        let key = (format!("{kind} {target}"), who);
        let now = Instant::now();
        let refused = match self.counts.lock() {
            Err(_) => true,
            Ok(mut counts) => {
                if counts.len() >= MAX_PAIRS && !counts.contains_key(&key) {
                    let window = self.window;
                    counts.retain(|_, (start, _)| now.duration_since(*start) < window);
                }
                if counts.len() >= MAX_PAIRS && !counts.contains_key(&key) {
                    true
                } else {
                    let entry = counts.entry(key).or_insert((now, 0));
                    if now.duration_since(entry.0) >= self.window {
                        *entry = (now, 0);
                    }
                    entry.1 += 1;
                    entry.1 > self.max
                }
            }
        };
        if !refused {
            return Ok(());
        }
        static HIT: Throttle = Throttle::new();
        if let Some(left_out) = HIT.admit() {
            tracing::warn!(
                kind,
                target,
                subject = principal.map(|p| p.subject.as_str()),
                limit = self.max,
                window_s = self.window.as_secs(),
                left_out,
                "question limit reached; not asked"
            );
        }
        Err(format!(
            "{kind} `{target}` stopped: it asked this caller more than {} questions in {} s; try again later",
            self.max,
            self.window.as_secs()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_caller_of_each_target_has_its_own_window() {
        let limit = QuestionLimit::new(2, Duration::from_millis(50));
        let alice = Principal::new("alice");
        let bob = Principal::new("bob");
        assert!(limit.take("tool", "a", Some(&alice)).is_ok());
        assert!(limit.take("tool", "a", Some(&alice)).is_ok());
        let refused = limit.take("tool", "a", Some(&alice)).unwrap_err();
        assert_eq!(
            refused,
            "tool `a` stopped: it asked this caller more than 2 questions in 0 s; try again later"
        );
        assert!(limit.take("tool", "a", Some(&bob)).is_ok(), "another caller");
        assert!(limit.take("tool", "b", Some(&alice)).is_ok(), "another tool");
        assert!(limit.take("prompt", "a", Some(&alice)).is_ok(), "another kind");
        std::thread::sleep(Duration::from_millis(60));
        assert!(limit.take("tool", "a", Some(&alice)).is_ok(), "a new window");
    }
}
