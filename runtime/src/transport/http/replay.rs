//! What a handshake-era session keeps of its SSE streams so that a client whose connection broke
//! can resume one (`GET` with `Last-Event-ID`): each stream's events, with ids that name the
//! stream, until the stream ends, within the bounds of [`ResumeOptions`].
//!
//! Stream 0 is the session's GET stream; each call's POST stream gets the next number. An event
//! id is `<salt>-<stream>-<seq>`: the salt is 64 random bits of the session's own, so an id never
//! names a stream of another session and cannot be guessed from one; `seq` counts from 1 within
//! the stream (0 names the point before its first event: the priming event's id).
//!
//! A [`Log`] is written by the pump that reads its call (or the session's mailbox) and read by at
//! most one reader at a time, the response body of a POST or of a resuming GET; a new reader takes
//! over from the one before. A stream without a reader keeps what its call sends until a reader
//! comes back, the call ends past [`ResumeOptions::detached_timeout`], or a bound drops it.

use super::options::ResumeOptions;
use crate::event_store::{EventStore, MemoryEventStore, StreamKey};
use crate::seal::{RandomUnavailable, random};
use bytes::Bytes;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How many events a stream with a reader holds that the reader has not taken yet before its
/// call waits (backpressure, as a plain stream's channel gives).
const WINDOW: u64 = 64;

/// How long a stream read to its end is still kept: the response was handed to the connection,
/// but a connection broken at that moment may not have delivered it, and its client resumes.
pub(super) const LINGER: Duration = Duration::from_secs(30);

/// What every session of a listener keeps, together: the bytes, and the streams read to their
/// end that linger ([`LINGER`]), oldest first, which go first when the total is over its bound.
pub(super) struct Kept {
    bytes: AtomicUsize,
    lingering: Mutex<VecDeque<(Instant, Weak<Replay>, u64)>>,
    /// A task lets go of lingering streams as their time comes ([`Kept::expiring`]): one for
    /// every session, not a timer per stream (a busy listener had one per call of the last 30 s).
    expiring: std::sync::atomic::AtomicBool,
    /// Where every session's events are kept.
    store: Arc<dyn EventStore>,
    /// The next session's number (its streams' keys in the store).
    sessions: AtomicU64,
}

impl Default for Kept {
    fn default() -> Self {
        Self::new(Arc::new(MemoryEventStore::default()))
    }
}

impl Kept {
    pub(super) fn new(store: Arc<dyn EventStore>) -> Self {
        Self {
            bytes: AtomicUsize::new(0),
            lingering: Mutex::default(),
            expiring: std::sync::atomic::AtomicBool::new(false),
            store,
            sessions: AtomicU64::new(1),
        }
    }

    /// Drops the oldest lingering stream of any session; `false` when none lingers.
    fn drop_oldest_lingering(&self) -> bool {
        let oldest = self.lingering.lock().ok().and_then(|mut q| q.pop_front());
        match oldest {
            Some((_, replay, n)) => {
                if let Some(replay) = replay.upgrade() {
                    replay.remove(n);
                }
                true
            }
            None => false,
        }
    }

    /// Lets go of the streams that lingered their time.
    fn expire(&self) {
        let expired: Vec<(Weak<Replay>, u64)> = match self.lingering.lock() {
            Ok(mut q) => {
                let mut out = Vec::new();
                while q.front().is_some_and(|(at, _, _)| at.elapsed() >= LINGER) {
                    if let Some((_, r, n)) = q.pop_front() {
                        out.push((r, n));
                    }
                }
                out
            }
            Err(_) => Vec::new(),
        };
        for (replay, n) in expired {
            if let Some(replay) = replay.upgrade() {
                replay.remove(n);
            }
        }
    }

    /// Lets go of lingering streams as their time comes, until none lingers; then it stops,
    /// and the next stream to linger starts it again.
    async fn expiring(self: Arc<Self>) {
        // Dropped before it stops by itself (its runtime shut down, a panic): the next stream to
        // linger starts another.
        struct Running<'a>(&'a std::sync::atomic::AtomicBool, bool);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                if self.1 {
                    self.0.store(false, Ordering::SeqCst);
                }
            }
        }
        let mut running = Running(&self.expiring, true);
        loop {
            let next = self
                .lingering
                .lock()
                .ok()
                .and_then(|q| q.front().map(|(at, _, _)| *at + LINGER));
            match next {
                Some(deadline) => {
                    tokio::time::sleep_until(deadline).await;
                    self.expire();
                }
                None => {
                    self.expiring.store(false, Ordering::SeqCst);
                    // A stream that lingered since the queue was seen empty found this task
                    // still running and started none: go on for it.
                    let empty = self.lingering.lock().map_or(true, |q| q.is_empty());
                    if empty || self.expiring.swap(true, Ordering::SeqCst) {
                        // The flag is as it should be: cleared, or another task's.
                        running.1 = false;
                        return;
                    }
                }
            }
        }
    }

    /// Bytes kept now.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// One session's kept streams.
pub(super) struct Replay {
    salt: String,
    /// Its number in the listener (its streams' keys in the store).
    session: u64,
    options: ResumeOptions,
    /// What every session of the listener keeps.
    total: Arc<Kept>,
    /// The start of the session's id, for log lines (never the whole id: it is a credential).
    label: OnceLock<String>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The next call stream's number (stream 0 is the GET stream).
    next: u64,
    /// Oldest first.
    streams: BTreeMap<u64, Arc<Log>>,
    bytes: usize,
    events: usize,
    /// The session ended: nothing is kept any more.
    closed: bool,
}

/// One stream's events.
pub(super) struct Log {
    pub(super) n: u64,
    /// Where its events are kept, and under which key.
    store: Arc<dyn EventStore>,
    key: StreamKey,
    /// The call's; `None` for the GET stream.
    cancel: Option<CancellationToken>,
    state: Mutex<LogState>,
    /// New events, a reader taking over, the stream closed early or ended.
    pub(super) changed: Notify,
    /// The reader took events, or went.
    pub(super) advanced: Notify,
    /// The timer that ends the stream if no reader comes back ([`Log::wait_for_reader`]).
    timer: Mutex<Option<tokio::task::AbortHandle>>,
}

#[derive(Default)]
pub(super) struct LogState {
    /// The lowest seq the store keeps (`next_seq` when it keeps none), and the size of each
    /// event kept, from that one on (the events themselves are in the [`EventStore`]).
    first: u64,
    sizes: VecDeque<usize>,
    next_seq: u64,
    /// Events below this were handed to a reader.
    sent: u64,
    /// The response's seq: the stream ends after it.
    last: Option<u64>,
    /// Nothing more comes (the call ended without a response).
    over: bool,
    /// Dropped (why): readers stop and resumption is refused.
    ended: Option<String>,
    /// The reader now (0: none) and how many attached so far.
    reader: u64,
    readers: u64,
    /// A reader asked to close early ([`Log::kick`]).
    kicked: u64,
}

impl LogState {
    /// Over, read to its end, and none of its events kept any more.
    fn spent(&self) -> bool {
        self.first >= self.next_seq
            && self.sent >= self.next_seq
            && (self.over || self.last.is_some_and(|l| l < self.sent))
    }
}

/// Why a `Last-Event-ID` is not resumed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Not an id of this session's (malformed, or another session's): 400.
    Foreign,
    /// This session's, but the events after it are no longer kept: 410.
    Gone,
}

/// What a reader takes next.
pub(super) enum Next {
    /// An event, and whether it is the stream's last (the response).
    Event(Bytes, bool),
    /// Nothing yet: wait for `changed`.
    Wait,
    /// The stream is over and everything was taken.
    Finished,
    /// This reader must stop: another took over, the stream was closed early or dropped.
    Stop,
}

impl Replay {
    pub(super) fn new(options: ResumeOptions, total: Arc<Kept>) -> Result<Self, RandomUnavailable> {
        let mut raw = [0u8; 8];
        random(&mut raw)?;
        Ok(Self {
            salt: raw.iter().map(|b| format!("{b:02x}")).collect(),
            session: total.sessions.fetch_add(1, Ordering::Relaxed),
            options,
            total,
            label: OnceLock::new(),
            inner: Mutex::new(Inner {
                next: 1,
                ..Inner::default()
            }),
        })
    }

    pub(super) fn options(&self) -> &ResumeOptions {
        &self.options
    }

    /// Names the session in log lines (the start of its id).
    pub(super) fn label(&self, session_id: &str) {
        let _ = self.label.set(session_id.chars().take(8).collect());
    }

    fn inner(&self) -> Option<MutexGuard<'_, Inner>> {
        self.inner.lock().ok()
    }

    /// The id of event `seq` of stream `n`.
    pub(super) fn id(&self, n: u64, seq: u64) -> String {
        format!("{}-{n}-{seq}", self.salt)
    }

    /// A new call stream; `None` once the session ended.
    pub(super) fn open(&self, cancel: CancellationToken) -> Option<Arc<Log>> {
        let mut inner = self.inner()?;
        if inner.closed {
            return None;
        }
        let n = inner.next;
        inner.next += 1;
        let log = Arc::new(Log::new(n, Some(cancel), self.total.store.clone(), self.session));
        inner.streams.insert(n, log.clone());
        Some(log)
    }

    /// The session's GET stream, made on first use; `None` once the session ended.
    pub(super) fn listen_log(&self) -> Option<Arc<Log>> {
        let mut inner = self.inner()?;
        if inner.closed {
            return None;
        }
        Some(
            inner
                .streams
                .entry(0)
                .or_insert_with(|| Arc::new(Log::new(0, None, self.total.store.clone(), self.session)))
                .clone(),
        )
    }

    /// The stream `last_event_id` names and the seq it names, if every event after it is kept.
    pub(super) fn find(&self, last_event_id: &str) -> Result<(Arc<Log>, u64), Refusal> {
        let mut parts = last_event_id.trim().splitn(3, '-');
        let (Some(salt), Some(n), Some(seq)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(Refusal::Foreign);
        };
        let (Ok(n), Ok(seq)) = (n.parse::<u64>(), seq.parse::<u64>()) else {
            return Err(Refusal::Foreign);
        };
        if salt != self.salt {
            return Err(Refusal::Foreign);
        }
        let log = {
            let inner = self.inner().ok_or(Refusal::Gone)?;
            if n >= inner.next {
                return Err(Refusal::Foreign);
            }
            inner.streams.get(&n).cloned().ok_or(Refusal::Gone)?
        };
        let st = log.state().ok_or(Refusal::Gone)?;
        if st.ended.is_some() {
            return Err(Refusal::Gone);
        }
        // An event not sent yet is no event of ours; one before the first kept is gone.
        if seq >= st.next_seq {
            return Err(Refusal::Foreign);
        }
        if seq + 1 < st.first {
            return Err(Refusal::Gone);
        }
        drop(st);
        Ok((log, seq))
    }

    /// Keeps `event` (made by `encode` from its id) as the next of `log`; `last`: it is the
    /// response. The bounds are kept after it went in.
    pub(super) fn push(&self, log: &Log, last: bool, encode: impl FnOnce(&str) -> Bytes) {
        let len = {
            let Some(mut st) = log.state() else { return };
            if st.ended.is_some() {
                return;
            }
            let seq = st.next_seq;
            st.next_seq += 1;
            let event = encode(&self.id(log.n, seq));
            let len = event.len();
            log.store.append(log.key, seq, event);
            st.sizes.push_back(len);
            if last {
                st.last = Some(seq);
            }
            len
        };
        self.total.bytes.fetch_add(len, Ordering::Relaxed);
        if let Some(mut inner) = self.inner() {
            inner.bytes += len;
            inner.events += 1;
        }
        log.changed.notify_waiters();
        self.keep_bounds();
    }

    /// Over a bound: events a reader already took go first (oldest streams first); then the
    /// session's oldest call without a reader is ended. A stream with a reader is never dropped
    /// (its backpressure bounds it).
    fn keep_bounds(&self) {
        loop {
            // Over the total: streams read to their end (of any session) go first.
            if self.total.bytes.load(Ordering::Relaxed) > self.options.max_total_bytes
                && self.total.drop_oldest_lingering()
            {
                continue;
            }
            let victim = {
                let Some(mut inner) = self.inner() else { return };
                let over = |inner: &Inner| {
                    inner.bytes > self.options.max_session_bytes
                        || inner.events > self.options.max_session_events
                        || self.total.bytes.load(Ordering::Relaxed) > self.options.max_total_bytes
                };
                if !over(&inner) {
                    return;
                }
                let mut freed = None;
                // Streams read to their end whose every event is dropped: nothing of them is
                // left to resume, and scanning past them again for every new event made a long
                // session's calls slower and slower (docs/PERFORMANCE.md).
                let mut spent = Vec::new();
                for log in inner.streams.values() {
                    let Some(mut st) = log.state() else { continue };
                    if st.first < st.sent
                        && let Some(len) = st.sizes.pop_front()
                    {
                        st.first += 1;
                        log.store.drop_before(log.key, st.first);
                        freed = Some(len);
                        if log.n != 0 && st.spent() {
                            spent.push(log.n);
                        }
                        break;
                    }
                    if log.n != 0 && st.spent() {
                        spent.push(log.n);
                    }
                }
                for n in spent {
                    if let Some(log) = inner.streams.remove(&n) {
                        log.stop_timer();
                        log.store.remove(log.key);
                    }
                }
                if let Some(len) = freed {
                    inner.bytes -= len;
                    inner.events -= 1;
                    self.total.bytes.fetch_sub(len, Ordering::Relaxed);
                    continue;
                }
                let detached = inner
                    .streams
                    .values()
                    .find(|l| l.n != 0 && l.state().is_some_and(|st| st.reader == 0))
                    .cloned();
                match detached {
                    Some(log) => log,
                    None => return,
                }
            };
            let (bytes, events) = (self.options.max_session_bytes, self.options.max_session_events);
            tracing::warn!(
                session = self.label.get().map_or("?", String::as_str),
                stream = victim.n,
                max_session_bytes = bytes,
                max_session_events = events,
                max_total_bytes = self.options.max_total_bytes,
                "a call whose client went away was cancelled: the events kept for it to resume \
                 went over a bound (ResumeOptions)"
            );
            self.end(victim.n, "the events kept for it went over a bound");
        }
    }

    /// Drops stream `n` and cancels its call, `why` (a reader stops, resumption is refused).
    pub(super) fn end(&self, n: u64, why: &str) {
        let Some(log) = self.inner().and_then(|mut inner| inner.streams.remove(&n)) else {
            return;
        };
        if let Some(mut st) = log.state() {
            st.ended = Some(why.to_owned());
        }
        log.stop_timer();
        self.forget(&log);
        if let Some(c) = &log.cancel {
            c.cancel();
        }
        log.changed.notify_waiters();
        log.advanced.notify_waiters();
    }

    /// Stream `n` was read to its end: it is kept for [`LINGER`] more (or less, if the total is
    /// over its bound), then dropped.
    pub(super) fn linger(self: &Arc<Self>, n: u64) {
        if let Ok(mut q) = self.total.lingering.lock() {
            q.push_back((Instant::now(), Arc::downgrade(self), n));
        }
        if !self.total.expiring.swap(true, Ordering::SeqCst) {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => drop(rt.spawn(self.total.clone().expiring())),
                Err(_) => self.total.expiring.store(false, Ordering::SeqCst),
            }
        }
    }

    /// Drops stream `n` (its call is over): nothing of it is kept.
    pub(super) fn remove(&self, n: u64) {
        if let Some(log) = self.inner().and_then(|mut inner| inner.streams.remove(&n)) {
            log.stop_timer();
            self.forget(&log);
        }
    }

    /// Takes `log`'s events out of the counts (it left the map).
    fn forget(&self, log: &Log) {
        let (bytes, events) = match log.state() {
            Some(mut st) => {
                let bytes: usize = st.sizes.iter().sum();
                let events = st.sizes.len();
                st.sizes.clear();
                st.first = st.next_seq;
                log.store.remove(log.key);
                (bytes, events)
            }
            None => (0, 0),
        };
        self.total.bytes.fetch_sub(bytes, Ordering::Relaxed);
        if let Some(mut inner) = self.inner() {
            inner.bytes -= bytes;
            inner.events -= events;
        }
    }

    /// The session ended: every stream is dropped (its calls were cancelled with it).
    pub(super) fn close(&self) {
        let logs: Vec<u64> = match self.inner() {
            Some(mut inner) => {
                inner.closed = true;
                inner.streams.keys().copied().collect()
            }
            None => return,
        };
        for n in logs {
            self.end(n, "the session ended");
        }
    }

    /// Bytes and events this session keeps now.
    #[cfg(test)]
    fn kept(&self) -> (usize, usize) {
        self.inner().map_or((0, 0), |i| (i.bytes, i.events))
    }
}

impl Log {
    fn new(n: u64, cancel: Option<CancellationToken>, store: Arc<dyn EventStore>, session: u64) -> Self {
        Self {
            n,
            store,
            key: StreamKey { session, stream: n },
            cancel,
            state: Mutex::new(LogState {
                first: 1,
                next_seq: 1,
                sent: 1,
                ..LogState::default()
            }),
            changed: Notify::new(),
            advanced: Notify::new(),
            timer: Mutex::new(None),
        }
    }

    /// `timer` ends the stream unless a reader comes back first (which stops it), so a stream
    /// resumed at once holds no timer for the rest of the detached timeout.
    pub(super) fn wait_for_reader(&self, timer: tokio::task::AbortHandle) {
        if let Ok(mut t) = self.timer.lock()
            && let Some(old) = t.replace(timer)
        {
            old.abort();
        }
    }

    fn stop_timer(&self) {
        if let Some(t) = self.timer.lock().ok().and_then(|mut t| t.take()) {
            t.abort();
        }
    }

    fn state(&self) -> Option<MutexGuard<'_, LogState>> {
        self.state.lock().ok()
    }

    /// A reader attaches, taking over from the one before (which stops): its number.
    pub(super) fn attach(&self) -> u64 {
        self.stop_timer();
        let turn = match self.state() {
            Some(mut st) => {
                st.readers += 1;
                st.reader = st.readers;
                st.readers
            }
            None => 0,
        };
        self.changed.notify_waiters();
        turn
    }

    /// The seq the next event will get.
    pub(super) fn next_seq(&self) -> u64 {
        self.state().map_or(1, |st| st.next_seq)
    }

    /// Reader `turn` went: `true` if it was the reader (the stream has none now), `false` if
    /// another had taken over.
    pub(super) fn detach(&self, turn: u64) -> bool {
        {
            let Some(mut st) = self.state() else { return false };
            if st.reader != turn {
                return false;
            }
            st.reader = 0;
        }
        self.advanced.notify_waiters();
        true
    }

    /// Whether its call is over (its response kept, or it ended without one).
    pub(super) fn complete(&self) -> bool {
        self.state().is_some_and(|st| st.over || st.last.is_some())
    }

    /// Whether the stream still has no reader since reader `turn` went.
    pub(super) fn still_detached_since(&self, turn: u64) -> bool {
        self.state()
            .is_some_and(|st| st.reader == 0 && st.readers == turn && st.ended.is_none())
    }

    /// What reader `turn`, at `cursor` (the next seq it wants), takes now.
    pub(super) fn next(&self, turn: u64, cursor: &mut u64) -> Next {
        let next = {
            let Some(mut st) = self.state() else { return Next::Stop };
            if st.reader != turn || st.kicked == turn || st.ended.is_some() {
                return Next::Stop;
            }
            if *cursor < st.first {
                // Dropped before this reader took it (a bound): never skip silently.
                return Next::Stop;
            }
            if *cursor < st.next_seq {
                let seq = *cursor;
                // A store that lost a kept event ends the reader: never skip silently.
                let Some(event) = self.store.get(self.key, seq) else {
                    return Next::Stop;
                };
                *cursor = seq + 1;
                st.sent = st.sent.max(*cursor);
                Next::Event(event, st.last == Some(seq))
            } else if st.over || st.last.is_some_and(|l| l < *cursor) {
                Next::Finished
            } else {
                Next::Wait
            }
        };
        if matches!(next, Next::Event(..)) {
            self.advanced.notify_waiters();
        }
        next
    }

    /// Whether the writer should wait: a reader is there and has not taken `WINDOW` events.
    pub(super) fn waits_for_reader(&self) -> bool {
        self.state()
            .is_some_and(|st| st.reader != 0 && st.ended.is_none() && st.next_seq - st.sent >= WINDOW)
    }

    /// The call ended without a response (cancelled): nothing more comes.
    pub(super) fn over(&self) {
        if let Some(mut st) = self.state() {
            st.over = true;
        }
        self.changed.notify_waiters();
    }

    /// Whether the call ended without a response and nothing is left for a reader (drop it).
    pub(super) fn drained(&self) -> bool {
        self.state()
            .is_some_and(|st| st.over && st.last.is_none() && st.reader == 0 && st.sent >= st.next_seq)
    }

    /// Closes the connection of the reader now (its stream goes on for the next reader).
    pub(super) fn kick(&self) {
        if let Some(mut st) = self.state() {
            st.kicked = st.reader;
        }
        self.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(options: ResumeOptions) -> Replay {
        Replay::new(options, Arc::default()).unwrap()
    }

    fn push(r: &Replay, log: &Log, text: &str) {
        r.push(log, false, |id| Bytes::from(format!("id: {id}\ndata: {text}\n\n")));
    }

    fn take(log: &Log, turn: u64, cursor: &mut u64) -> Vec<String> {
        let mut out = Vec::new();
        while let Next::Event(e, _) = log.next(turn, cursor) {
            out.push(String::from_utf8_lossy(&e).into_owned());
        }
        out
    }

    #[test]
    fn ids_name_their_session_and_stream_and_resume_after_exactly_that_event() {
        let r = replay(ResumeOptions::default());
        let other = replay(ResumeOptions::default());
        let log = r.open(CancellationToken::new()).unwrap();
        let turn = log.attach();
        push(&r, &log, "a");
        push(&r, &log, "b");
        let mut cursor = 1;
        assert_eq!(take(&log, turn, &mut cursor).len(), 2);
        // The connection broke after "a" arrived: the rest is "b" and what came since.
        push(&r, &log, "c");
        assert!(log.detach(turn));
        let (found, after) = r.find(&r.id(1, 1)).unwrap();
        let turn = found.attach();
        let mut cursor = after + 1;
        let rest = take(&found, turn, &mut cursor);
        assert!(rest[0].contains("data: b") && rest[1].contains("data: c"), "{rest:?}");
        assert_eq!(rest.len(), 2);
        assert!(rest[0].starts_with(&format!("id: {}", r.id(1, 2))));
        // Another session's id, a stream never opened, a seq not sent yet: not ids of ours.
        assert_eq!(r.find(&other.id(1, 1)).err(), Some(Refusal::Foreign));
        assert_eq!(r.find(&r.id(7, 1)).err(), Some(Refusal::Foreign));
        assert_eq!(r.find(&r.id(1, 9)).err(), Some(Refusal::Foreign));
        assert_eq!(r.find("garbage").err(), Some(Refusal::Foreign));
        r.remove(1);
        assert_eq!(r.find(&r.id(1, 1)).err(), Some(Refusal::Gone));
    }

    #[test]
    fn a_second_reader_takes_over_and_the_first_stops() {
        let r = replay(ResumeOptions::default());
        let log = r.open(CancellationToken::new()).unwrap();
        let first = log.attach();
        let second = log.attach();
        push(&r, &log, "a");
        let mut cursor = 1;
        assert!(matches!(log.next(first, &mut cursor), Next::Stop));
        assert!(matches!(log.next(second, &mut cursor), Next::Event(..)));
        assert!(!log.detach(first), "not the reader any more");
    }

    #[test]
    fn over_a_session_bound_taken_events_go_first_then_the_oldest_detached_call() {
        let options = ResumeOptions::default().max_session_events(4);
        let r = replay(options);
        let detached_token = CancellationToken::new();
        let detached = r.open(detached_token.clone()).unwrap();
        let g = detached.attach();
        push(&r, &detached, "d1");
        assert!(detached.detach(g));
        let live_token = CancellationToken::new();
        let live = r.open(live_token.clone()).unwrap();
        let turn = live.attach();
        let mut cursor = 1;
        for i in 0..3 {
            push(&r, &live, &format!("l{i}"));
            take(&live, turn, &mut cursor);
        }
        assert_eq!(r.kept().1, 4, "at the bound, nothing dropped");
        push(&r, &live, "l3");
        assert_eq!(r.kept().1, 4, "one taken event of the live stream went");
        assert!(!detached_token.is_cancelled());
        // Nothing taken is left to drop: the detached call ends, the live one never does.
        push(&r, &live, "l4");
        push(&r, &live, "l5");
        push(&r, &live, "l6");
        push(&r, &live, "l7");
        assert!(detached_token.is_cancelled());
        assert!(!live_token.is_cancelled());
        assert_eq!(r.find(&r.id(1, 0)).err(), Some(Refusal::Gone));
        let rest = take(&live, turn, &mut cursor);
        assert_eq!(rest.len(), 5, "the live reader misses nothing: {rest:?}");
    }

    /// A store that counts the streams it holds events for (their keys), over the memory store.
    #[derive(Default)]
    struct Counting {
        store: MemoryEventStore,
        keys: Mutex<std::collections::HashSet<StreamKey>>,
    }

    impl EventStore for Counting {
        fn append(&self, stream: StreamKey, seq: u64, event: Bytes) {
            self.keys.lock().unwrap().insert(stream);
            self.store.append(stream, seq, event);
        }
        fn get(&self, stream: StreamKey, seq: u64) -> Option<Bytes> {
            self.store.get(stream, seq)
        }
        fn drop_before(&self, stream: StreamKey, seq: u64) {
            self.store.drop_before(stream, seq);
        }
        fn remove(&self, stream: StreamKey) {
            self.keys.lock().unwrap().remove(&stream);
            self.store.remove(stream);
        }
    }

    /// A busy session goes over its bound of events again and again: calls read to their end
    /// whose events are all dropped leave the session's map, so each new event does not scan
    /// past every call made in the last 30 s (which made a long session's calls slower and
    /// slower). A call still running keeps its place, and what it sends is still kept.
    #[test]
    fn calls_read_to_their_end_and_dropped_leave_the_session() {
        let store = Arc::new(Counting::default());
        let total = Arc::new(Kept::new(store.clone()));
        let r = Replay::new(ResumeOptions::default().max_session_events(8), total).unwrap();
        let running = r.open(CancellationToken::new()).unwrap();
        let live = running.attach();
        for _ in 0..500 {
            let log = r.open(CancellationToken::new()).unwrap();
            let turn = log.attach();
            push(&r, &log, "priming");
            r.push(&log, true, |id| Bytes::from(format!("id: {id}\ndata: result\n\n")));
            let mut cursor = 1;
            assert_eq!(take(&log, turn, &mut cursor).len(), 2);
            assert!(matches!(log.next(turn, &mut cursor), Next::Finished));
        }
        let streams = r.inner().unwrap().streams.len();
        assert!(streams <= 8, "{streams} streams kept for 8 events");
        assert!(r.kept().1 <= 8);
        // The streams that left gave their place in the store back too.
        let keys = store.keys.lock().unwrap().len();
        assert!(keys <= 8, "the store holds {keys} streams");
        // The running call was never dropped, and what it sends now is kept for it.
        push(&r, &running, "later");
        let mut cursor = 1;
        assert_eq!(take(&running, live, &mut cursor).len(), 1);
        assert!(r.inner().unwrap().streams.contains_key(&running.n));
        // A call read to its end whose events are still kept stays resumable; once they are
        // all dropped, it is gone (410) at once instead of after its 30 s of lingering.
        let done = r.open(CancellationToken::new()).unwrap();
        let turn = done.attach();
        r.push(&done, true, |_| Bytes::from_static(b"result"));
        let mut cursor = 1;
        assert_eq!(take(&done, turn, &mut cursor).len(), 1);
        assert!(r.find(&r.id(done.n, 0)).is_ok(), "its event is still kept");
        for _ in 0..8 {
            push(&r, &running, "more");
        }
        assert_eq!(r.find(&r.id(done.n, 0)).err(), Some(Refusal::Gone));
        assert!(!r.inner().unwrap().streams.contains_key(&done.n));
    }

    #[test]
    fn the_total_bound_counts_every_session_and_ending_a_session_gives_it_back() {
        let total = Arc::new(Kept::default());
        let options = ResumeOptions::default().max_total_bytes(100);
        let a = Replay::new(options.clone(), total.clone()).unwrap();
        let b = Replay::new(options, total.clone()).unwrap();
        let ta = CancellationToken::new();
        let la = a.open(ta.clone()).unwrap();
        let g = la.attach();
        la.detach(g);
        a.push(&la, false, |_| Bytes::from(vec![b'x'; 60]));
        let tb = CancellationToken::new();
        let lb = b.open(tb.clone()).unwrap();
        let g = lb.attach();
        lb.detach(g);
        b.push(&lb, false, |_| Bytes::from(vec![b'y'; 60]));
        assert!(tb.is_cancelled(), "the session whose event crossed the bound pays");
        assert!(!ta.is_cancelled(), "the other session never notices");
        assert_eq!(total.bytes(), 60);
        a.close();
        assert!(ta.is_cancelled());
        assert_eq!(total.bytes(), 0);
        assert!(a.open(CancellationToken::new()).is_none(), "closed");
    }

    #[tokio::test]
    async fn over_the_total_streams_read_to_their_end_go_first_whichever_session_they_are_of() {
        let total = Arc::new(Kept::default());
        let options = ResumeOptions::default().max_total_bytes(100);
        let a = Arc::new(Replay::new(options.clone(), total.clone()).unwrap());
        let b = Replay::new(options, total.clone()).unwrap();
        let done = a.open(CancellationToken::new()).unwrap();
        let turn = done.attach();
        a.push(&done, true, |_| Bytes::from(vec![b'r'; 60]));
        let mut cursor = 1;
        assert_eq!(take(&done, turn, &mut cursor).len(), 1);
        assert!(matches!(done.next(turn, &mut cursor), Next::Finished));
        assert!(done.detach(turn));
        a.linger(done.n);
        assert!(
            a.find(&a.id(1, 0)).is_ok(),
            "it lingers: a client that missed its end resumes"
        );
        let token = CancellationToken::new();
        let waiting = b.open(token.clone()).unwrap();
        let turn = waiting.attach();
        waiting.detach(turn);
        b.push(&waiting, false, |_| Bytes::from(vec![b'w'; 60]));
        assert!(!token.is_cancelled(), "the finished stream went instead");
        assert_eq!(a.find(&a.id(1, 0)).err(), Some(Refusal::Gone));
        assert_eq!(total.bytes(), 60);
    }

    /// A stream read to its end lingers for [`LINGER`], then goes; one task lets every
    /// lingering stream go in its time, stops when none lingers, and starts again for the next.
    #[tokio::test(start_paused = true)]
    async fn lingering_streams_go_in_their_time() {
        let total = Arc::new(Kept::default());
        let r = Arc::new(Replay::new(ResumeOptions::default(), total.clone()).unwrap());
        let finish = |r: &Arc<Replay>| {
            let log = r.open(CancellationToken::new()).unwrap();
            let turn = log.attach();
            r.push(&log, true, |_| Bytes::from_static(b"result"));
            let mut cursor = 1;
            assert_eq!(take(&log, turn, &mut cursor).len(), 1);
            assert!(log.detach(turn));
            r.linger(log.n);
            log.n
        };
        let first = finish(&r);
        tokio::time::sleep(LINGER / 2).await;
        let second = finish(&r);
        assert!(total.expiring.load(Ordering::SeqCst), "one task lets them go");
        tokio::time::sleep(LINGER / 2 + Duration::from_millis(10)).await;
        assert_eq!(r.find(&r.id(first, 0)).err(), Some(Refusal::Gone), "its time came");
        assert!(r.find(&r.id(second, 0)).is_ok(), "still lingering");
        tokio::time::sleep(LINGER / 2).await;
        assert_eq!(r.find(&r.id(second, 0)).err(), Some(Refusal::Gone));
        assert_eq!(total.bytes(), 0);
        tokio::task::yield_now().await;
        assert!(!total.expiring.load(Ordering::SeqCst), "none lingers: the task stopped");
        let third = finish(&r);
        tokio::time::sleep(LINGER + Duration::from_millis(10)).await;
        assert_eq!(r.find(&r.id(third, 0)).err(), Some(Refusal::Gone), "started again");
    }
}
