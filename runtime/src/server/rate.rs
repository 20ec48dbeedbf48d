//! How fast one caller may call: tools, prompts, resource reads and completions (tools: "Rate
//! limit tool invocations"; completion: "Implement appropriate rate limiting"). A GCRA limiter
//! (the `governor` crate), one state per caller: an authenticated principal, else the client's
//! address (HTTP), else the connection (stdio). Past its rate a caller's call is refused before it
//! runs, saying when to retry; nobody else is slowed.

use crate::principal::Principal;
use crate::protocol::ErrorObject;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Who a call's rate is counted for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum CallerKey {
    /// An authenticated caller: issuer and subject.
    Principal(Option<String>, String),
    /// An unauthenticated HTTP client, by its address.
    Address(IpAddr),
    /// A stdio (or in-memory) connection, by its number.
    Connection(u64),
}

impl CallerKey {
    /// The principal's key when there is one, else `otherwise`.
    pub(crate) fn of(principal: Option<&Principal>, otherwise: CallerKey) -> Self {
        match principal {
            Some(p) => Self::Principal(p.issuer.clone(), p.subject.clone()),
            None => otherwise,
        }
    }
}

/// How many callers' states are kept before the ones back to a full burst are swept (at most
/// once a second). A state is as good as new once its burst has refilled, so sweeping loses
/// nothing.
const SWEEP_ABOVE: usize = 100_000;

type Keyed<C> = RateLimiter<CallerKey, HashMapStateStore<CallerKey>, C, NoOpMiddleware<<C as Clock>::Instant>>;

/// The calls-per-caller limit of a server.
pub(crate) struct CallRate<C: Clock = DefaultClock> {
    pub(crate) per_second: NonZeroU32,
    pub(crate) burst: NonZeroU32,
    limiter: Keyed<C>,
    clock: C,
    last_sweep: Mutex<Option<Instant>>,
}

impl<C: Clock> std::fmt::Debug for CallRate<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRate")
            .field("per_second", &self.per_second)
            .field("burst", &self.burst)
            .finish_non_exhaustive()
    }
}

impl CallRate {
    /// `per_second` calls a second for each caller, `burst` at once.
    pub(crate) fn new(per_second: NonZeroU32, burst: NonZeroU32) -> Self {
        Self::with_clock(per_second, burst, DefaultClock::default())
    }
}

impl<C: Clock + Clone> CallRate<C> {
    pub(crate) fn with_clock(per_second: NonZeroU32, burst: NonZeroU32, clock: C) -> Self {
        let quota = Quota::per_second(per_second).allow_burst(burst);
        Self {
            per_second,
            burst,
            limiter: RateLimiter::hashmap_with_clock(quota, clock.clone()),
            clock,
            last_sweep: Mutex::new(None),
        }
    }

    /// Takes one call of `caller`'s; `Err` with the error its call is refused with (and how long
    /// until it may retry) when it is over its rate.
    pub(crate) fn take(&self, caller: &CallerKey) -> Result<(), (ErrorObject, Duration)> {
        self.sweep();
        let Err(not_until) = self.limiter.check_key(caller) else {
            return Ok(());
        };
        let wait = not_until.wait_time_from(self.clock.now());
        static REFUSED: crate::throttle::Throttle = crate::throttle::Throttle::new();
        if let Some(left_out) = REFUSED.admit() {
            tracing::warn!(?caller, left_out, "call refused: the caller is over its rate");
        }
        let millis = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
        let error = ErrorObject::internal(format!(
            "Too many requests: this caller may make {} calls a second ({} at once); retry in {millis} ms",
            self.per_second, self.burst
        ))
        .with_data(serde_json::json!({ "retryAfterMs": millis }));
        Err((error, wait))
    }

    /// Drops the states of callers back to a full burst, once the table is large, at most once a
    /// second (never a scan per call).
    fn sweep(&self) {
        if self.limiter.len() <= SWEEP_ABOVE {
            return;
        }
        let Ok(mut last) = self.last_sweep.lock() else { return };
        if last.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
            return;
        }
        *last = Some(Instant::now());
        drop(last);
        self.limiter.retain_recent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;

    fn n(v: u32) -> NonZeroU32 {
        NonZeroU32::new(v).unwrap()
    }

    #[test]
    fn each_caller_has_its_own_rate_and_burst_and_refills() {
        let clock = FakeRelativeClock::default();
        let rate = CallRate::with_clock(n(10), n(3), clock.clone());
        let alice = CallerKey::Principal(None, "alice".into());
        let bob = CallerKey::Address("10.0.0.2".parse().unwrap());
        for _ in 0..3 {
            assert!(rate.take(&alice).is_ok());
        }
        let (refused, wait) = rate.take(&alice).unwrap_err();
        assert_eq!(refused.code, -32603);
        assert_eq!(wait, Duration::from_millis(100), "one cell at 10 a second");
        assert_eq!(refused.data.unwrap()["retryAfterMs"], 100);
        assert!(
            refused.message.contains("10 calls a second (3 at once)"),
            "{}",
            refused.message
        );
        assert!(rate.take(&bob).is_ok(), "another caller is not slowed");
        clock.advance(Duration::from_millis(100));
        assert!(rate.take(&alice).is_ok(), "refilled");
        assert!(rate.take(&alice).is_err());
    }
}
