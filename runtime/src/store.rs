//! What the server keeps beyond one request, where every replica sees it: the answers already
//! used once (single-use answers), and the URL-mode flows a page completes. In memory by default
//! ([`MemoryStore`]); replicas share one through [`Server::store`](crate::Server::store) (a
//! Redis store behind the `redis` feature, or your own [`Store`]).

use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Why a store could not answer. The call it served fails closed: nothing is taken as used or
/// completed on an error.
///
/// ```
/// use mcp_resolve_runtime::StoreError;
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
    /// use mcp_resolve_runtime::StoreError;
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
/// use mcp_resolve_runtime::{MemoryStore, Store};
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
/// use mcp_resolve_runtime::{MemoryStore, Server};
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

/// The default [`Store`]: in this process's memory, so it serves one replica only. At most
/// `max_entries` live entries (100 000 by default); expired ones are swept when it is full, and a
/// store still full refuses new entries with an error (the call fails closed) rather than growing.
///
/// ```
/// use mcp_resolve_runtime::{MemoryStore, Store};
/// use std::time::Duration;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let small = MemoryStore::with_capacity(1);
/// assert!(small.insert_new("a", b"", Duration::from_secs(60)).await.unwrap());
/// assert!(small.insert_new("b", b"", Duration::from_secs(60)).await.is_err(), "full");
/// # });
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    entries: Mutex<HashMap<String, (Vec<u8>, Instant)>>,
    max_entries: usize,
}

/// How many entries a [`MemoryStore`] holds unless told otherwise.
pub const DEFAULT_STORE_ENTRIES: usize = 100_000;

impl Default for MemoryStore {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_STORE_ENTRIES)
    }
}

impl MemoryStore {
    /// A store of at most `max_entries` live entries.
    pub fn with_capacity(max_entries: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            max_entries: max_entries.max(1),
        }
    }

    fn locked<T>(
        &self,
        f: impl FnOnce(&mut HashMap<String, (Vec<u8>, Instant)>, Instant) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut map = self
            .entries
            .lock()
            .map_err(|_| StoreError::new("the memory store is poisoned"))?;
        f(&mut map, Instant::now())
    }

    /// Room for one more entry: expired ones are swept when full.
    fn room(&self, map: &mut HashMap<String, (Vec<u8>, Instant)>, now: Instant) -> Result<(), StoreError> {
        if map.len() >= self.max_entries {
            map.retain(|_, (_, expires)| *expires > now);
        }
        if map.len() >= self.max_entries {
            static FULL: crate::throttle::Throttle = crate::throttle::Throttle::new();
            if let Some(left_out) = FULL.admit() {
                tracing::warn!(limit = self.max_entries, left_out, "memory store full; entry refused");
            }
            return Err(StoreError::new(format!(
                "the memory store holds {} live entries, its limit",
                self.max_entries
            )));
        }
        Ok(())
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
        let r = self.locked(|map, now| {
            if map.get(key).is_some_and(|(_, expires)| *expires > now) {
                return Ok(false);
            }
            self.room(map, now)?;
            map.insert(key.to_owned(), (value.to_vec(), deadline(now, ttl)));
            Ok(true)
        });
        Box::pin(async move { r })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        let r = self.locked(|map, now| {
            Ok(map
                .get(key)
                .filter(|(_, expires)| *expires > now)
                .map(|(v, _)| v.clone()))
        });
        Box::pin(async move { r })
    }

    fn replace<'a>(
        &'a self,
        key: &'a str,
        expected: &'a [u8],
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let r = self.locked(|map, now| match map.get_mut(key) {
            Some((v, expires)) if *expires > now && v.as_slice() == expected => {
                *v = value.to_vec();
                *expires = deadline(now, ttl);
                Ok(true)
            }
            _ => Ok(false),
        });
        Box::pin(async move { r })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn entries_expire_and_a_full_store_sweeps_before_it_refuses() {
        let store = MemoryStore::with_capacity(2);
        let short = Duration::from_millis(20);
        assert!(store.insert_new("a", b"1", short).await.unwrap());
        assert!(store.insert_new("b", b"1", Duration::from_secs(60)).await.unwrap());
        assert!(store.insert_new("c", b"1", Duration::from_secs(60)).await.is_err());
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(store.get("a").await.unwrap(), None, "expired");
        assert!(
            store.insert_new("a", b"2", short).await.unwrap(),
            "an expired key is new again"
        );
        assert!(
            !store.replace("b", b"0", b"2", short).await.unwrap(),
            "not the expected value"
        );
        assert!(store.replace("b", b"1", b"2", short).await.unwrap());
        assert!(!store.replace("b", b"1", b"3", short).await.unwrap(), "replaced once");
    }
}
