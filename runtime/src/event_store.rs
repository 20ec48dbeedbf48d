//! Where a Streamable HTTP listener keeps the events of handshake-era SSE streams, so that a
//! client whose connection broke can resume one with `Last-Event-ID`
//! ([`ResumeOptions`](crate::ResumeOptions)). In this process's memory by default
//! ([`MemoryEventStore`]); an operator with another need (events kept off the heap, in a pool of
//! its own, or counted by its own metrics) plugs in its own [`EventStore`] with
//! [`ResumeOptions::event_store`](crate::ResumeOptions::event_store).
//!
//! The store only holds bytes. The framework decides everything else: the ids, what may be
//! replayed to whom, the bounds (it tells the store what to drop), and when a stream ends. A
//! handshake-era session lives in one process, so the store is that process's, never shared
//! between replicas.

use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Mutex;

/// One stream of one session: `session` is a number the listener gave the session (never its
/// id), `stream` the stream's number within it (0: the session's GET stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamKey {
    /// The session's number in this listener.
    pub session: u64,
    /// The stream's number in the session.
    pub stream: u64,
}

/// Keeps the events of streams for resumption. Each stream's events arrive in order, numbered
/// from 1 without gaps (`seq`); an event is one SSE event, encoded, ready to send again.
///
/// The calls are synchronous and made with the stream's own lock held: they must not block
/// for long (no network round trip). Every event the framework appends is either read back,
/// dropped with [`EventStore::drop_before`], or dropped with its stream by
/// [`EventStore::remove`].
///
/// ```
/// use mcp_resolve_runtime::Bytes;
/// use mcp_resolve_runtime::event_store::{EventStore, MemoryEventStore, StreamKey};
/// let store = MemoryEventStore::default();
/// let key = StreamKey { session: 1, stream: 2 };
/// store.append(key, 1, Bytes::from_static(b"id: x-2-1\ndata: {}\n\n"));
/// store.append(key, 2, Bytes::from_static(b"id: x-2-2\ndata: {}\n\n"));
/// assert_eq!(store.get(key, 2).unwrap(), Bytes::from_static(b"id: x-2-2\ndata: {}\n\n"));
/// store.drop_before(key, 2);
/// assert!(store.get(key, 1).is_none());
/// store.remove(key);
/// assert!(store.get(key, 2).is_none());
/// ```
pub trait EventStore: Send + Sync + 'static {
    /// Keeps `event` as number `seq` of `stream` (one more than the last kept, or 1).
    fn append(&self, stream: StreamKey, seq: u64, event: Bytes);
    /// Event `seq` of `stream`, if it is kept.
    fn get(&self, stream: StreamKey, seq: u64) -> Option<Bytes>;
    /// Drops the events of `stream` numbered below `seq`.
    fn drop_before(&self, stream: StreamKey, seq: u64);
    /// Drops every event of `stream`.
    fn remove(&self, stream: StreamKey);
}

/// One store shared by owners of an `Arc` (a test that looks into the store it gave the
/// listener, say).
impl<S: EventStore + ?Sized> EventStore for std::sync::Arc<S> {
    fn append(&self, stream: StreamKey, seq: u64, event: Bytes) {
        (**self).append(stream, seq, event);
    }
    fn get(&self, stream: StreamKey, seq: u64) -> Option<Bytes> {
        (**self).get(stream, seq)
    }
    fn drop_before(&self, stream: StreamKey, seq: u64) {
        (**self).drop_before(stream, seq);
    }
    fn remove(&self, stream: StreamKey) {
        (**self).remove(stream);
    }
}

/// The default [`EventStore`]: this process's memory, in shards so that sessions rarely wait
/// on one another's lock.
pub struct MemoryEventStore {
    shards: Vec<Mutex<Shard>>,
}

/// Some streams' events, each stream's contiguous and oldest first.
type Shard = HashMap<StreamKey, VecDeque<(u64, Bytes)>>;

const SHARDS: usize = 16;

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl fmt::Debug for MemoryEventStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryEventStore").finish_non_exhaustive()
    }
}

impl MemoryEventStore {
    fn shard(&self, key: StreamKey) -> std::sync::MutexGuard<'_, Shard> {
        let i = (key.session as usize)
            .wrapping_mul(31)
            .wrapping_add(key.stream as usize)
            % SHARDS;
        self.shards[i].lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, stream: StreamKey, seq: u64, event: Bytes) {
        self.shard(stream).entry(stream).or_default().push_back((seq, event));
    }

    fn get(&self, stream: StreamKey, seq: u64) -> Option<Bytes> {
        let shard = self.shard(stream);
        let events = shard.get(&stream)?;
        let first = events.front()?.0;
        let (s, e) = events.get(usize::try_from(seq.checked_sub(first)?).ok()?)?;
        (*s == seq).then(|| e.clone())
    }

    fn drop_before(&self, stream: StreamKey, seq: u64) {
        if let Some(events) = self.shard(stream).get_mut(&stream) {
            while events.front().is_some_and(|(s, _)| *s < seq) {
                events.pop_front();
            }
        }
    }

    fn remove(&self, stream: StreamKey) {
        self.shard(stream).remove(&stream);
    }
}
