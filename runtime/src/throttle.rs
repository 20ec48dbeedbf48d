//! Log lines a client can provoke at will (refused states, hosts, tokens) are throttled: at most
//! one a second per kind, each saying how many were left out since the last.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One kind of repeated log line.
#[derive(Debug)]
pub(crate) struct Throttle {
    /// When the last line was written, in ms since the first use of any throttle (0: never).
    last_ms: AtomicU64,
    /// Lines left out since then.
    suppressed: AtomicU64,
}

fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    // +1 so that the first call never looks like "never".
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

impl Throttle {
    /// Interval between two lines of one kind.
    const EVERY_MS: u64 = 1000;

    pub(crate) const fn new() -> Self {
        Self {
            last_ms: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// `Some(n)` when a line may be written now, `n` being how many were left out before it;
    /// `None` when this one is left out (and counted).
    pub(crate) fn admit(&self) -> Option<u64> {
        self.admit_at(now_ms())
    }

    /// [`Throttle::admit`] at `now` (ms, never 0).
    fn admit_at(&self, now: u64) -> Option<u64> {
        let last = self.last_ms.load(Ordering::Relaxed);
        if (last == 0 || now.saturating_sub(last) >= Self::EVERY_MS)
            && self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return Some(self.suppressed.swap(0, Ordering::Relaxed));
        }
        self.suppressed.fetch_add(1, Ordering::Relaxed);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_writes_one_line_and_counts_the_rest() {
        let t = Throttle::new();
        assert_eq!(t.admit_at(5), Some(0));
        for ms in 0..10_000 {
            assert_eq!(t.admit_at(5 + ms / 20), None);
        }
        // A second later the next line reports what was left out.
        assert_eq!(t.admit_at(5 + Throttle::EVERY_MS), Some(10_000));
        assert_eq!(t.admit_at(6 + Throttle::EVERY_MS), None);
        // The real clock goes through the same gate: of two lines at once, one at most is written.
        let real = Throttle::new();
        assert_eq!([real.admit(), real.admit()].iter().filter(|a| a.is_some()).count(), 1);
    }
}
