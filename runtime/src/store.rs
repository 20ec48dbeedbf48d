//! What the server keeps beyond one request, where every replica sees it: the answers already
//! used once (single-use answers), and the URL-mode flows a page completes. In memory by default
//! ([`MemoryStore`]); replicas share one through [`Server::store`](crate::Server::store) (a
//! Redis store behind the `redis` feature, or your own [`Store`]).

use crate::expiring::{ExpiringMap, Full};
use futures_util::future::BoxFuture;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Why a store could not answer. The call it served fails closed: nothing is taken as used or
/// completed on an error.
///
/// ```
/// use mcp_resolve_runtime::store::StoreError;
/// let e = StoreError::new("connection refused");
/// assert_eq!(e.to_string(), "store unavailable: connection refused");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError(String);

impl StoreError {
    /// An error with this reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self(reason.into())
    }
    /// The reason, without the "store unavailable" of its `Display`.
    ///
    /// ```
    /// use mcp_resolve_runtime::store::StoreError;
    /// assert_eq!(StoreError::new("timed out").reason(), "timed out");
    /// ```
    pub fn reason(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "store unavailable: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// A small key-value store with expiry, shared by the replicas of one deployment: three
/// operations, each atomic. Keys are short ASCII strings chosen by the framework (a prefix and a
/// digest or a random id); values are small byte strings.
///
/// Implement it to keep the framework's state elsewhere (a database, a KMS-backed service); every
/// operation must be atomic with respect to the others on the same key, across replicas.
///
/// ```
/// use mcp_resolve_runtime::store::{MemoryStore, Store};
/// use std::time::Duration;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemoryStore::default();
/// let ttl = Duration::from_secs(60);
/// assert!(store.insert_new("k", b"1", ttl).await.unwrap());
/// assert!(!store.insert_new("k", b"2", ttl).await.unwrap(), "taken already");
/// assert!(store.replace("k", b"1", b"3", ttl).await.unwrap());
/// assert_eq!(store.get("k").await.unwrap().as_deref(), Some(&b"3"[..]));
/// # });
/// ```
pub trait Store: Send + Sync + 'static {
    /// Sets `key` to `value` for `ttl` unless it holds a value already: `true` when this call
    /// set it (the first use of a single-use answer), `false` when it was there.
    fn insert_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// The value of `key`, unless it expired.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>>;
    /// Sets `key` to `value` for `ttl` if it holds exactly `expected` now: `true` when replaced
    /// (a URL-mode flow going from pending to done exactly once).
    fn replace<'a>(
        &'a self,
        key: &'a str,
        expected: &'a [u8],
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
}

/// The server's [`Store`], shared by every call.
#[derive(Clone)]
pub(crate) struct SharedStore(pub(crate) Arc<dyn Store>);

impl fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Store")
    }
}

/// One store shared by owners of an `Arc`: several servers of one process (replicas in a test),
/// or a server and the application.
///
/// ```
/// use mcp_resolve_runtime::{Server, store::MemoryStore};
/// use std::sync::Arc;
/// let used = Arc::new(MemoryStore::default());
/// let a = Server::new("notes").store(used.clone());
/// let b = Server::new("notes").store(used);
/// # let _ = (a, b);
/// ```
impl<S: Store + ?Sized> Store for std::sync::Arc<S> {
    fn insert_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).insert_new(key, value, ttl)
    }
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        (**self).get(key)
    }
    fn replace<'a>(
        &'a self,
        key: &'a str,
        expected: &'a [u8],
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).replace(key, expected, value, ttl)
    }
}

/// The default [`Store`]: in this process's memory, so it serves one replica only.
///
/// Two kinds of entries, each with its own capacity, so that one cannot take the room of the
/// other: at most `max_entries` live URL-mode flows, and at most `max_entries` live entries of
/// every other kind (the single-use answers already used). 100 000 of each by default. Expired
/// entries are removed in expiry order, each once, by the inserts that need their room; a kind
/// still full refuses its new entries with an error (the call fails closed) rather than grow,
/// and that refusal looks at one entry, never at all of them.
///
/// ```
/// use mcp_resolve_runtime::store::{MemoryStore, Store};
/// use std::time::Duration;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let small = MemoryStore::with_capacity(1);
/// assert!(small.insert_new("a", b"", Duration::from_secs(60)).await.unwrap());
/// assert!(small.insert_new("b", b"", Duration::from_secs(60)).await.is_err(), "full");
/// # });
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    tables: Mutex<Tables>,
}

/// Where URL-mode flows keep their records: a [`MemoryStore`] holds them apart from the other
/// entries.
pub(crate) const URL_FLOW_PREFIX: &str = "mcp-resolve/url/";

/// A [`MemoryStore`]'s entries, by kind.
#[derive(Debug)]
struct Tables {
    /// URL-mode flows (keys under [`URL_FLOW_PREFIX`]).
    flows: ExpiringMap<String, Vec<u8>>,
    /// Everything else: the single-use answers already used.
    other: ExpiringMap<String, Vec<u8>>,
}

impl Tables {
    /// The table `key` belongs to, and what its entries are called in a refusal.
    fn of(&mut self, key: &str) -> (&mut ExpiringMap<String, Vec<u8>>, &'static str) {
        if key.starts_with(URL_FLOW_PREFIX) {
            (&mut self.flows, "URL-mode flows")
        } else {
            (&mut self.other, "entries besides URL-mode flows")
        }
    }
}

/// How many entries of each kind a [`MemoryStore`] holds unless told otherwise.
pub const DEFAULT_STORE_ENTRIES: usize = 100_000;

impl Default for MemoryStore {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_STORE_ENTRIES)
    }
}

impl MemoryStore {
    /// A store of at most `max_entries` live URL-mode flows and, apart, at most `max_entries`
    /// live entries of other kinds (single-use answers).
    pub fn with_capacity(max_entries: usize) -> Self {
        Self {
            tables: Mutex::new(Tables {
                flows: ExpiringMap::new(max_entries),
                other: ExpiringMap::new(max_entries),
            }),
        }
    }

    fn locked<T>(&self, f: impl FnOnce(&mut Tables) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut tables = self
            .tables
            .lock()
            .map_err(|_| StoreError::new("the memory store is poisoned"))?;
        f(&mut tables)
    }

    /// [`Store::insert_new`] at `now`.
    fn insert_new_at(&self, now: Instant, key: &str, value: &[u8], ttl: Duration) -> Result<bool, StoreError> {
        self.locked(|tables| {
            let (table, what) = tables.of(key);
            if table.get(key, now).is_some() {
                return Ok(false);
            }
            match table.insert(key.to_owned(), value.to_vec(), deadline(now, ttl), now) {
                Ok(()) => Ok(true),
                Err(Full) => {
                    static FULL: crate::throttle::Throttle = crate::throttle::Throttle::new();
                    if let Some(left_out) = FULL.admit() {
                        tracing::warn!(
                            limit = table.capacity(),
                            what,
                            left_out,
                            "memory store full; entry refused"
                        );
                    }
                    Err(StoreError::new(format!(
                        "the memory store holds {} live {what}, its limit",
                        table.capacity()
                    )))
                }
            }
        })
    }

    /// [`Store::get`] at `now`.
    fn get_at(&self, now: Instant, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.locked(|tables| Ok(tables.of(key).0.get(key, now).cloned()))
    }

    /// [`Store::replace`] at `now`.
    fn replace_at(
        &self,
        now: Instant,
        key: &str,
        expected: &[u8],
        value: &[u8],
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        self.locked(|tables| {
            let (table, _) = tables.of(key);
            match table.get_mut(key, now) {
                Some(v) if v.as_slice() == expected => {
                    *v = value.to_vec();
                    table.set_expiry(&key.to_owned(), deadline(now, ttl));
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
    }
}

fn deadline(now: Instant, ttl: Duration) -> Instant {
    now.checked_add(ttl)
        .unwrap_or(now + Duration::from_secs(365 * 24 * 3600))
}

impl Store for MemoryStore {
    fn insert_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let r = self.insert_new_at(Instant::now(), key, value, ttl);
        Box::pin(async move { r })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        let r = self.get_at(Instant::now(), key);
        Box::pin(async move { r })
    }

    fn replace<'a>(
        &'a self,
        key: &'a str,
        expected: &'a [u8],
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let r = self.replace_at(Instant::now(), key, expected, value, ttl);
        Box::pin(async move { r })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn entries_expire_and_a_full_store_sweeps_before_it_refuses() {
        let store = MemoryStore::with_capacity(2);
        let t0 = Instant::now();
        let short = Duration::from_millis(20);
        assert!(store.insert_new_at(t0, "a", b"1", short).unwrap());
        assert!(store.insert_new_at(t0, "b", b"1", MINUTE).unwrap());
        assert_eq!(
            store.insert_new_at(t0, "c", b"1", MINUTE),
            Err(StoreError::new(
                "the memory store holds 2 live entries besides URL-mode flows, its limit"
            ))
        );
        let t1 = t0 + short;
        assert_eq!(store.get_at(t1, "a").unwrap(), None, "expired");
        assert!(
            store.insert_new_at(t1, "a", b"2", short).unwrap(),
            "an expired key is new again"
        );
        assert!(
            !store.replace_at(t1, "b", b"0", b"2", short).unwrap(),
            "not the expected value"
        );
        assert!(store.replace_at(t1, "b", b"1", b"2", short).unwrap());
        assert!(!store.replace_at(t1, "b", b"1", b"3", short).unwrap(), "replaced once");
        // The replace gave "b" a new life: it ends with it.
        let t2 = t1 + short;
        assert_eq!(store.get_at(t2, "b").unwrap(), None);
        assert!(
            store.insert_new_at(t2, "c", b"1", MINUTE).unwrap(),
            "swept to make room"
        );
    }

    /// The review's finding: URL-mode flows filled the store's one capacity, and every
    /// single-use call failed closed until they expired.
    #[test]
    fn url_flows_filling_their_capacity_leave_single_use_answers_room() {
        let store = MemoryStore::with_capacity(3);
        let t0 = Instant::now();
        let flow = |i: u32| format!("{}{i}", URL_FLOW_PREFIX);
        for i in 0..3 {
            assert!(store.insert_new_at(t0, &flow(i), b"pending", MINUTE).unwrap());
        }
        assert_eq!(
            store.insert_new_at(t0, &flow(3), b"pending", MINUTE),
            Err(StoreError::new(
                "the memory store holds 3 live URL-mode flows, its limit"
            ))
        );
        for i in 0..3 {
            let used = format!("mcp-resolve/used/{i}");
            assert!(
                store.insert_new_at(t0, &used, b"", MINUTE).unwrap(),
                "single-use answer {i}"
            );
        }
        assert!(store.insert_new_at(t0, "mcp-resolve/used/3", b"", MINUTE).is_err());
        // Each kind keeps its own: a flow still reads and completes.
        assert!(store.replace_at(t0, &flow(0), b"pending", b"done", MINUTE).unwrap());
        assert_eq!(store.get_at(t0, &flow(0)).unwrap().as_deref(), Some(&b"done"[..]));
    }

    /// A full store refuses by looking at the entry soonest to expire, never at all of them.
    #[test]
    fn a_refused_insert_does_not_scan_the_store() {
        let store = MemoryStore::with_capacity(10_000);
        let t0 = Instant::now();
        for i in 0..10_000 {
            assert!(store.insert_new_at(t0, &format!("k{i}"), b"", MINUTE).unwrap());
        }
        let examined = || store.tables.lock().map(|t| t.other.examined()).unwrap();
        let before = examined();
        for i in 0..1_000 {
            assert!(store.insert_new_at(t0, &format!("new{i}"), b"", MINUTE).is_err());
        }
        assert_eq!(examined() - before, 1_000);
    }
}
