//! How often one caller may be asked by one tool, prompt or resource: at most `max` questions in
//! each window of `window`, counted per (item, caller) in this process. Past it the question is
//! not asked and the call ends saying so; each refusal is logged (rate-limited).
//!
//! The item is the definition that asks, never what a request names: a tool or a prompt by its
//! name, a resource by its template (its URI when it is static), so a caller reading many URIs
//! of one template spends one budget. A caller is an authenticated principal (issuer and
//! subject); every unauthenticated caller together is one caller, as nothing tells them apart.
//!
//! Every count is bounded, and a bound falls on the caller over it: each caller counts at most
//! [`MAX_ITEMS_PER_CALLER`] items at once (past it that caller's new items are refused), and at
//! most [`MAX_CALLERS`] callers are counted at once (past it, callers not counted yet are
//! refused until a window ends: only that many distinct principals asked within one window can
//! do that, never one caller). Expired windows are swept in expiry order, each once
//! ([`ExpiringMap`]): a refusal never scans the table.

use crate::expiring::ExpiringMap;
use crate::principal::Principal;
use crate::throttle::Throttle;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many callers are counted at once.
pub(crate) const MAX_CALLERS: usize = 100_000;
/// How many items (tools, prompts, resource templates) are counted for one caller at once.
pub(crate) const MAX_ITEMS_PER_CALLER: usize = 1_000;

/// Who is asked: issuer and subject; `None`: every unauthenticated caller.
type Caller = Option<(Option<String>, String)>;

/// Each caller's questions per item (`"tool name"`) in the current window; the window ends when
/// the entry expires, and the caller's entry when its last window does.
type Windows = ExpiringMap<Caller, ExpiringMap<String, u32>>;

/// Why a question was not asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// This caller had its `max` questions from this item in this window.
    Spent,
    /// This caller is counted for `max_items` items already.
    TooManyItems,
    /// `max_callers` callers are counted already, and this one is not.
    TooManyCallers,
    /// The table is unusable (a panic while it was held): fail closed.
    Unavailable,
}

/// The question budget of a server.
#[derive(Debug)]
pub(crate) struct QuestionLimit {
    pub(crate) max: u32,
    pub(crate) window: Duration,
    max_items: usize,
    max_callers: usize,
    callers: Mutex<Windows>,
}

/// `d` as a person reads it: whole seconds, else milliseconds.
fn span(d: Duration) -> String {
    if d.subsec_nanos() == 0 && d.as_secs() > 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

impl QuestionLimit {
    pub(crate) fn new(max: u32, window: Duration) -> Self {
        Self::with_bounds(max, window, MAX_CALLERS, MAX_ITEMS_PER_CALLER)
    }

    fn with_bounds(max: u32, window: Duration, max_callers: usize, max_items: usize) -> Self {
        Self {
            max: max.max(1),
            window,
            max_items: max_items.max(1),
            max_callers: max_callers.max(1),
            callers: Mutex::new(ExpiringMap::new(max_callers)),
        }
    }

    /// Takes one question for `kind` `item` (a definition's name, or a resource's template)
    /// asked of `principal`; `Err` with the message the call ends with when it may not be asked.
    pub(crate) fn take(&self, kind: &str, item: &str, principal: Option<&Principal>) -> Result<(), String> {
        self.take_at(Instant::now(), kind, item, principal)
    }

    /// [`QuestionLimit::take`] at `now`.
    fn take_at(&self, now: Instant, kind: &str, item: &str, principal: Option<&Principal>) -> Result<(), String> {
        let who = principal.map(|p| (p.issuer.clone(), p.subject.clone()));
        let refused = match self.callers.lock() {
            Err(_) => Some(Refusal::Unavailable),
            Ok(mut callers) => self.count(&mut callers, now, format!("{kind} {item}"), who),
        };
        let Some(refusal) = refused else {
            return Ok(());
        };
        static HIT: Throttle = Throttle::new();
        if let Some(left_out) = HIT.admit() {
            tracing::warn!(
                kind,
                item,
                subject = principal.map(|p| p.subject.as_str()),
                limit = self.max,
                window_ms = self.window.as_millis() as u64,
                reason = ?refusal,
                left_out,
                "question limit reached; not asked"
            );
        }
        let why = match refusal {
            Refusal::Spent => format!(
                "it asked this caller more than {} questions in {}",
                self.max,
                span(self.window)
            ),
            Refusal::TooManyItems => format!(
                "this caller is being asked by {} tools, prompts and resources within {}, the most counted for one caller",
                self.max_items,
                span(self.window)
            ),
            Refusal::TooManyCallers => format!(
                "the server is counting the questions of {} callers within {}, the most it counts at once",
                self.max_callers,
                span(self.window)
            ),
            Refusal::Unavailable => "the question limit is unavailable".to_owned(),
        };
        Err(format!("{kind} `{item}` stopped: {why}; try again later"))
    }

    /// Counts one question of `item` for `who`; why not, when it may not be asked.
    fn count(&self, callers: &mut Windows, now: Instant, item: String, who: Caller) -> Option<Refusal> {
        let end = now.checked_add(self.window).unwrap_or(now);
        if callers.get(&who, now).is_none()
            && callers
                .insert(who.clone(), ExpiringMap::new(self.max_items), end, now)
                .is_err()
        {
            return Some(Refusal::TooManyCallers);
        }
        let windows = callers.get_mut(&who, now)?;
        if let Some(asked) = windows.get_mut(&item, now) {
            *asked = asked.saturating_add(1);
            return (*asked > self.max).then_some(Refusal::Spent);
        }
        // A new window for this item: the caller's entry lives until it ends.
        if windows.insert(item, 1, end, now).is_err() {
            return Some(Refusal::TooManyItems);
        }
        callers.set_expiry(&who, end);
        None
    }

    /// How many entries the callers table's sweeps have looked at.
    #[cfg(test)]
    fn examined(&self) -> u64 {
        self.callers.lock().map_or(0, |c| c.examined())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn each_caller_of_each_target_has_its_own_window() {
        let limit = QuestionLimit::new(2, Duration::from_millis(50));
        let t0 = Instant::now();
        let alice = Principal::new("alice");
        let bob = Principal::new("bob");
        assert!(limit.take_at(t0, "tool", "a", Some(&alice)).is_ok());
        assert!(limit.take_at(t0, "tool", "a", Some(&alice)).is_ok());
        let end = t0 + Duration::from_millis(50);
        let just_before = end - Duration::from_nanos(1);
        let refused = limit.take_at(just_before, "tool", "a", Some(&alice)).unwrap_err();
        assert_eq!(
            refused,
            "tool `a` stopped: it asked this caller more than 2 questions in 50 ms; try again later"
        );
        assert!(limit.take_at(t0, "tool", "a", Some(&bob)).is_ok(), "another caller");
        assert!(limit.take_at(t0, "tool", "b", Some(&alice)).is_ok(), "another tool");
        assert!(limit.take_at(t0, "prompt", "a", Some(&alice)).is_ok(), "another kind");
        assert!(limit.take_at(end, "tool", "a", Some(&alice)).is_ok(), "a new window");
        assert!(limit.take_at(end, "tool", "a", Some(&alice)).is_ok());
        assert!(
            limit.take_at(end, "tool", "a", Some(&alice)).is_err(),
            "and its own count"
        );
    }

    #[test]
    fn every_unauthenticated_caller_is_one_caller() {
        let limit = QuestionLimit::new(1, MINUTE);
        assert!(limit.take("tool", "a", None).is_ok());
        assert!(limit.take("tool", "a", None).is_err());
        assert!(limit.take("tool", "a", Some(&Principal::new("alice"))).is_ok());
    }

    /// The review's finding: one caller asked through 100 000 distinct targets filled the table,
    /// and every other caller's first question was refused. Now the caller is refused alone,
    /// once it is counted for its share of items.
    #[test]
    fn one_caller_flooding_distinct_targets_is_refused_alone() {
        let limit = QuestionLimit::new(100, MINUTE);
        let mallory = Principal::new("mallory");
        let mut refused = None;
        for i in 0..=100_000 {
            if let Err(m) = limit.take("resource", &format!("test://items/{i}"), Some(&mallory)) {
                refused.get_or_insert((i, m));
            }
        }
        assert_eq!(
            refused,
            Some((
                MAX_ITEMS_PER_CALLER,
                format!(
                    "resource `test://items/{MAX_ITEMS_PER_CALLER}` stopped: this caller is being asked by {MAX_ITEMS_PER_CALLER} tools, prompts and resources within 60 s, the most counted for one caller; try again later"
                )
            ))
        );
        assert!(
            limit.take("resource", "test://items/0", Some(&mallory)).is_ok(),
            "its own items still count"
        );
        for who in ["alice", "bob"] {
            assert!(limit.take("tool", "a", Some(&Principal::new(who))).is_ok(), "{who}");
        }
        assert!(limit.take("tool", "a", None).is_ok(), "unauthenticated callers");
    }

    #[test]
    fn a_full_table_refuses_new_callers_without_scanning_and_sweeps_each_window_once() {
        let limit = QuestionLimit::with_bounds(1, MINUTE, 100, 4);
        let t0 = Instant::now();
        for i in 0..100 {
            let p = Principal::new(format!("user{i}"));
            assert!(limit.take_at(t0, "tool", "a", Some(&p)).is_ok());
        }
        let stranger = Principal::new("stranger");
        let before = limit.examined();
        for _ in 0..1_000 {
            assert_eq!(
                limit.take_at(t0, "tool", "a", Some(&stranger)),
                Err("tool `a` stopped: the server is counting the questions of 100 callers within 60 s, the most it counts at once; try again later".into())
            );
        }
        assert_eq!(limit.examined() - before, 1_000, "one look per refusal, no scan");
        // Known callers are still counted, each in its own window.
        let user0 = Principal::new("user0");
        assert!(limit.take_at(t0, "tool", "a", Some(&user0)).is_err(), "spent");
        assert!(limit.take_at(t0, "tool", "b", Some(&user0)).is_ok());
        // The windows end: the first caller to need room sweeps each once, in one go.
        let later = t0 + MINUTE;
        let before = limit.examined();
        assert!(limit.take_at(later, "tool", "a", Some(&stranger)).is_ok());
        assert_eq!(limit.examined() - before, 100, "each expired caller looked at once");
        let before = limit.examined();
        for i in 0..99 {
            let p = Principal::new(format!("new{i}"));
            assert!(limit.take_at(later, "tool", "a", Some(&p)).is_ok());
        }
        assert_eq!(limit.examined() - before, 99, "nothing left to sweep: one look each");
    }

    /// A refusal names its window as a person reads it: whole seconds as seconds, anything else
    /// (a fraction, or nothing) in milliseconds, never rounded to a wrong figure.
    #[test]
    fn a_window_is_named_in_whole_seconds_else_in_milliseconds() {
        assert_eq!(span(Duration::from_secs(60)), "60 s");
        assert_eq!(span(Duration::from_millis(1500)), "1500 ms");
        assert_eq!(span(Duration::from_millis(250)), "250 ms");
        assert_eq!(span(Duration::ZERO), "0 ms");
    }
}
