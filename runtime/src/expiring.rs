//! A bounded map whose entries expire, for the tables a client fills by calling: the question
//! limit's callers, the memory store's entries, the URL-mode flows each caller has waiting.
//!
//! Entries are kept in expiry order besides the map, so expired ones are removed from the front,
//! each exactly once: the cost of sweeping is paid by the insert that made the entry (amortized
//! O(log n)), and a request refused because the map is full looks at one entry (the soonest to
//! expire), never at all of them. How many entries sweeps looked at is counted
//! ([`ExpiringMap::examined`]), so tests can hold that promise.

use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;
use std::time::Instant;

/// The map is full of live entries: the new one was not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Full;

/// At most `capacity` entries, each with the instant it expires; an entry is gone from the
/// moment it expires (reads skip it) and is removed by the next sweep.
#[derive(Debug)]
pub(crate) struct ExpiringMap<K, V> {
    entries: HashMap<K, (V, Instant)>,
    /// `(expires, key)` of every entry: its first element is the next to expire.
    by_expiry: BTreeSet<(Instant, K)>,
    capacity: usize,
    /// Index entries sweeps have looked at since the map was made.
    examined: u64,
}

impl<K: Hash + Ord + Clone, V> ExpiringMap<K, V> {
    /// A map of at most `capacity` (at least 1) live entries.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            by_expiry: BTreeSet::new(),
            capacity: capacity.max(1),
            examined: 0,
        }
    }

    /// How many entries it may hold.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many entries it holds, expired ones not yet swept included.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many index entries sweeps have looked at: one per entry removed, plus one per sweep
    /// that stopped at a live entry.
    #[cfg(test)]
    pub(crate) fn examined(&self) -> u64 {
        self.examined
    }

    /// Removes every entry expired at `now`, soonest first; stops at the first live one.
    pub(crate) fn sweep(&mut self, now: Instant) {
        while let Some((expires, _)) = self.by_expiry.first() {
            self.examined += 1;
            if *expires > now {
                break;
            }
            if let Some((_, key)) = self.by_expiry.pop_first() {
                self.entries.remove(&key);
            }
        }
    }

    /// The live value of `key`.
    pub(crate) fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q, now: Instant) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.entries
            .get(key)
            .filter(|(_, expires)| *expires > now)
            .map(|(v, _)| v)
    }

    /// The live value of `key`, to change in place.
    pub(crate) fn get_mut<Q: Hash + Eq + ?Sized>(&mut self, key: &Q, now: Instant) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.entries
            .get_mut(key)
            .filter(|(_, expires)| *expires > now)
            .map(|(v, _)| v)
    }

    /// Sets `key` to `value` until `expires`, replacing what it held (live or not). A new key
    /// needs room: expired entries are swept first, and a map still full refuses it.
    pub(crate) fn insert(&mut self, key: K, value: V, expires: Instant, now: Instant) -> Result<(), Full> {
        self.sweep(now);
        if let Some((_, old)) = self.entries.get(&key) {
            self.by_expiry.remove(&(*old, key.clone()));
        } else if self.entries.len() >= self.capacity {
            return Err(Full);
        }
        self.by_expiry.insert((expires, key.clone()));
        self.entries.insert(key, (value, expires));
        Ok(())
    }

    /// Moves `key`'s expiry to `expires` (nothing when there is no such key).
    pub(crate) fn set_expiry(&mut self, key: &K, expires: Instant) {
        if let Some((_, old)) = self.entries.get_mut(key) {
            if *old == expires {
                return;
            }
            self.by_expiry.remove(&(*old, key.clone()));
            *old = expires;
            self.by_expiry.insert((expires, key.clone()));
        }
    }

    /// Removes `key`.
    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let (value, expires) = self.entries.remove(key)?;
        self.by_expiry.remove(&(expires, key.clone()));
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn expired_entries_are_gone_and_swept_once_each_in_expiry_order() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut m = ExpiringMap::new(3);
        m.insert("a", 1, t0 + 3 * s, t0).unwrap();
        m.insert("b", 2, t0 + s, t0).unwrap();
        m.insert("c", 3, t0 + 2 * s, t0).unwrap();
        assert_eq!(m.insert("d", 4, t0 + s, t0), Err(Full));
        assert_eq!(m.get(&"b", t0 + s), None, "gone the moment it expires");
        assert_eq!(m.get(&"a", t0 + s), Some(&1));
        // "b" expired: "d" takes its room; the sweep removed it and stopped at "c".
        let before = m.examined();
        m.insert("d", 4, t0 + 5 * s, t0 + s).unwrap();
        assert_eq!(m.examined() - before, 2);
        assert_eq!((m.len(), m.get(&"d", t0 + s)), (3, Some(&4)));
        // A new expiry moves the entry in the order; removing it frees its room.
        m.set_expiry(&"c", t0 + 10 * s);
        m.sweep(t0 + 4 * s);
        assert_eq!(m.get(&"a", t0 + 4 * s), None);
        assert_eq!(m.get(&"c", t0 + 4 * s), Some(&3));
        assert_eq!(m.remove(&"c"), Some(3));
        assert_eq!(m.len(), 1);
        if let Some(v) = m.get_mut(&"d", t0 + 4 * s) {
            *v = 40;
        }
        assert_eq!(m.get(&"d", t0 + 4 * s), Some(&40));
    }

    /// The review's finding: a full table was scanned whole for every refused request.
    #[test]
    fn a_full_map_refuses_by_looking_at_one_entry() {
        let t0 = Instant::now();
        let mut m = ExpiringMap::new(10_000);
        for i in 0..10_000u32 {
            m.insert(i, (), t0 + Duration::from_secs(60), t0).unwrap();
        }
        let before = m.examined();
        for i in 0..1_000u32 {
            assert_eq!(m.insert(10_000 + i, (), t0 + Duration::from_secs(60), t0), Err(Full));
        }
        assert_eq!(m.examined() - before, 1_000, "one look per refusal");
        // Once they expire, each is removed once, by the first insert that needs the room.
        let later = t0 + Duration::from_secs(60);
        m.insert(u32::MAX, (), later + Duration::from_secs(60), later).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m.examined() - before, 1_000 + 10_000);
    }
}
