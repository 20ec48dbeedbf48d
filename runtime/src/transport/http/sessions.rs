//! Handshake-era sessions: opened by `initialize`, named by `Mcp-Session-Id`, owned by the
//! principal that opened them, ended by `DELETE` or by idleness. A session with its GET stream
//! open is not idle.

use super::replay::Replay;
use crate::dispatch::Dispatcher;
use crate::peer::{Mailbox, Outbound, Peer};
use crate::principal::Principal;
use crate::seal::{RandomUnavailable, random};
use crate::server::Session;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
// tokio's clock: the system's monotonic clock, which a test can pause and advance
// (`tokio::time::pause`), so idle windows are tested exactly.
use tokio::time::Instant;

/// One handshake-era session.
pub(super) struct HandshakeSession {
    /// Who opened it; only they may use it.
    pub(super) principal: Option<Principal>,
    pub(super) session: Mutex<Session>,
    /// Its calls in flight (cancelled by `notifications/cancelled` or when it ends).
    pub(super) dispatcher: Dispatcher,
    /// Requests to the client and their waiters; each call's stream writes its own requests.
    pub(super) peer: Peer,
    /// Where its notifications go: the GET stream, while one is open (shared with `session`).
    pub(super) mailbox: Mailbox,
    /// Its streams' events, kept for a client to resume.
    pub(super) replay: Arc<Replay>,
    last_seen: Mutex<Instant>,
}

impl HandshakeSession {
    pub(super) fn new(
        principal: Option<Principal>,
        session: Session,
        dispatcher: Dispatcher,
        sink: Outbound,
        max_waiting: usize,
        replay: Replay,
    ) -> Self {
        Self {
            principal,
            replay: Arc::new(replay),
            mailbox: session.mailbox().clone(),
            session: Mutex::new(session),
            dispatcher,
            peer: Peer::new(sink, max_waiting),
            last_seen: Mutex::new(Instant::now()),
        }
    }

    /// How long nothing happened: no request, and no GET stream open.
    fn idle_for(&self) -> Option<Duration> {
        if self.mailbox.is_open() {
            return Some(Duration::ZERO);
        }
        self.last_seen.lock().ok().map(|t| t.elapsed())
    }

    pub(super) fn touch(&self) {
        if let Ok(mut t) = self.last_seen.lock() {
            *t = Instant::now();
        }
    }

    /// Ends it: questions waiting for the client fail at once, calls in flight are cancelled,
    /// its subscriptions end and its GET stream closes.
    pub(super) fn end(&self) {
        self.peer.close();
        self.dispatcher.cancel_all();
        self.mailbox.close();
        self.replay.close();
        if let Ok(mut s) = self.session.lock() {
            s.end();
        }
    }
}

/// The open sessions.
pub(super) struct Sessions {
    inner: Mutex<Inner>,
    idle: Duration,
    max: usize,
    max_per_principal: usize,
    /// Starts every id (`HttpOptions::session_id_prefix`), with a dot after it.
    prefix: String,
}

struct Inner {
    map: HashMap<String, Arc<HandshakeSession>>,
    /// Open sessions per authenticated caller: (issuer, subject).
    owned: HashMap<(Option<String>, String), usize>,
    last_sweep: Instant,
}

impl Inner {
    fn remove(&mut self, id: &str) -> Option<Arc<HandshakeSession>> {
        let gone = self.map.remove(id)?;
        crate::telemetry::metric::sessions(-1.0);
        if let Some(p) = &gone.principal {
            let key = caller(p);
            if let Some(n) = self.owned.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    self.owned.remove(&key);
                }
            }
        }
        gone.end();
        Some(gone)
    }

    /// Drops the idle sessions.
    fn sweep(&mut self, idle: Duration) {
        let expired: Vec<String> = self
            .map
            .iter()
            .filter(|(_, s)| s.idle_for().is_none_or(|t| t >= idle))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.remove(&id);
        }
        self.last_sweep = Instant::now();
    }
}

impl Sessions {
    pub(super) fn new(idle: Duration, max: usize, max_per_principal: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                owned: HashMap::new(),
                last_sweep: Instant::now(),
            }),
            idle,
            max,
            max_per_principal,
            prefix: String::new(),
        }
    }

    /// Ids start with `prefix` and a dot (none when empty).
    pub(super) fn with_prefix(mut self, prefix: &str) -> Self {
        self.prefix = if prefix.is_empty() {
            String::new()
        } else {
            format!("{prefix}.")
        };
        self
    }

    /// Adds a session under a new random id; `Ok(None)` when a bound is reached (the global one,
    /// or the principal's). Idle sessions are swept at most every quarter of the idle time, or
    /// when the global bound is reached, so opening a session is O(1) amortized.
    pub(super) fn open(&self, session: HandshakeSession) -> Result<Option<String>, RandomUnavailable> {
        let Ok(mut inner) = self.inner.lock() else {
            return Ok(None);
        };
        if inner.map.len() >= self.max || inner.last_sweep.elapsed() >= self.idle / 4 {
            inner.sweep(self.idle);
        }
        if inner.map.len() >= self.max {
            crate::telemetry::metric::limit_hit("sessions");
            return Ok(None);
        }
        if let Some(p) = &session.principal
            && inner.owned.get(&caller(p)).copied().unwrap_or(0) >= self.max_per_principal
        {
            crate::telemetry::metric::limit_hit("sessions_per_principal");
            return Ok(None);
        }
        let id = format!("{}{}", self.prefix, new_session_id()?);
        if let Some(p) = &session.principal {
            *inner.owned.entry(caller(p)).or_default() += 1;
        }
        session.replay.label(&id);
        inner.map.insert(id.clone(), Arc::new(session));
        crate::telemetry::metric::sessions(1.0);
        Ok(Some(id))
    }

    /// The live session named `id`, if `principal` owns it. An expired one is ended and dropped;
    /// another principal's session is as unknown as a missing one.
    pub(super) fn get(&self, id: &str, principal: Option<&Principal>) -> Option<Arc<HandshakeSession>> {
        let mut inner = self.inner.lock().ok()?;
        let expired = inner.map.get(id)?.idle_for().is_none_or(|t| t >= self.idle);
        if expired {
            inner.remove(id);
            return None;
        }
        let found = inner
            .map
            .get(id)
            .filter(|s| same_caller(s.principal.as_ref(), principal))
            .cloned()?;
        found.touch();
        Some(found)
    }

    /// Shutting down: every GET stream ends and every question waiting for a client fails (its
    /// call answers); the sessions and their calls go on.
    pub(super) fn wind_down(&self) {
        let Ok(inner) = self.inner.lock() else { return };
        for s in inner.map.values() {
            s.mailbox.close();
            s.replay.end(0, "the server is shutting down");
            s.peer.shut_down();
        }
    }

    /// Ends every session (shutting down, past the grace): their calls are cancelled.
    pub(super) fn close_all(&self) {
        let Ok(mut inner) = self.inner.lock() else { return };
        let ids: Vec<String> = inner.map.keys().cloned().collect();
        for id in ids {
            inner.remove(&id);
        }
    }

    /// Ends the session named `id` if `principal` owns it; `false` when there is no such session
    /// of theirs.
    pub(super) fn close(&self, id: &str, principal: Option<&Principal>) -> bool {
        let Ok(mut inner) = self.inner.lock() else {
            return false;
        };
        if !inner
            .map
            .get(id)
            .is_some_and(|s| same_caller(s.principal.as_ref(), principal))
        {
            return false;
        }
        inner.remove(id).is_some()
    }
}

/// The key a caller's sessions are counted under: scopes are not part of who is calling.
fn caller(p: &Principal) -> (Option<String>, String) {
    (p.issuer.clone(), p.subject.clone())
}

fn same_caller(a: Option<&Principal>, b: Option<&Principal>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_caller(b),
        _ => false,
    }
}

/// 128 random bits, hex. No randomness, no session: an id guessed from anything else would let
/// another client in.
fn new_session_id() -> Result<String, RandomUnavailable> {
    let mut raw = [0u8; 16];
    random(&mut raw)?;
    Ok(raw.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::tests::without_randomness;

    fn session() -> HandshakeSession {
        session_of(None)
    }

    fn session_of(principal: Option<Principal>) -> HandshakeSession {
        let server = Arc::new(crate::server::Server::new("t"));
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        HandshakeSession::new(
            principal,
            Session::new(),
            Dispatcher::connection(server),
            Outbound::new(tx),
            32,
            Replay::new(Default::default(), Arc::default()).unwrap(),
        )
    }

    fn who(subject: &str, scopes: &[&str]) -> Principal {
        Principal {
            subject: subject.into(),
            issuer: Some("https://auth.example.com".into()),
            scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn no_randomness_opens_no_session() {
        let sessions = Sessions::new(Duration::from_secs(60), 10, 10);
        let s = session();
        assert!(without_randomness(|| sessions.open(s)).is_err());
        let id = sessions.open(session()).unwrap().unwrap();
        assert_eq!(id.len(), 32);
        assert!(sessions.get(&id, None).is_some());
    }

    #[test]
    fn a_prefix_starts_every_id() {
        let sessions = Sessions::new(Duration::from_secs(60), 10, 10).with_prefix("eu-1");
        let id = sessions.open(session()).unwrap().unwrap();
        assert!(id.starts_with("eu-1.") && id.len() == 5 + 32, "{id}");
        assert!(sessions.get(&id, None).is_some());
    }

    /// The idle window, exactly (tokio's paused clock): a session idle for less than `idle` is
    /// served and holds its place, a request starts its count again, and one idle for `idle`
    /// is ended and makes room.
    #[tokio::test(start_paused = true)]
    async fn a_session_idle_for_the_idle_time_ends_and_makes_room() {
        let idle = Duration::from_secs(30 * 60);
        let just_less = idle - Duration::from_millis(1);
        let sessions = Sessions::new(idle, 1, 1);
        let id = sessions.open(session()).unwrap().unwrap();
        tokio::time::advance(just_less).await;
        assert!(sessions.open(session()).unwrap().is_none(), "not idle yet: no room");
        assert!(sessions.get(&id, None).is_some(), "served");
        tokio::time::advance(just_less).await;
        assert!(sessions.get(&id, None).is_some(), "the request started the count again");
        tokio::time::advance(idle).await;
        assert!(sessions.get(&id, None).is_none(), "idle for `idle`: ended");
        assert!(sessions.open(session()).unwrap().is_some(), "its place is free");
    }

    /// Only the principal that opened a session (whatever its scopes now) may use or end it; to
    /// anyone else it is as unknown as a missing one. An anonymous session is anonymous callers'.
    #[test]
    fn a_session_is_its_openers_only() {
        let sessions = Sessions::new(Duration::from_secs(60), 10, 10);
        let id = sessions.open(session_of(Some(who("alice", &["a"])))).unwrap().unwrap();
        assert!(sessions.get(&id, Some(&who("bob", &["a"]))).is_none());
        assert!(sessions.get(&id, None).is_none());
        let mut other_issuer = who("alice", &["a"]);
        other_issuer.issuer = Some("https://evil.example".into());
        assert!(sessions.get(&id, Some(&other_issuer)).is_none());
        assert!(sessions.get(&id, Some(&who("alice", &["b", "c"]))).is_some());
        assert!(!sessions.close(&id, Some(&who("bob", &[]))));
        assert!(!sessions.close(&id, None));
        assert!(sessions.get(&id, Some(&who("alice", &[]))).is_some(), "still open");
        assert!(sessions.close(&id, Some(&who("alice", &[]))));
        assert!(sessions.get(&id, Some(&who("alice", &[]))).is_none());
        assert!(!sessions.close(&id, Some(&who("alice", &[]))), "closed once");
        let anonymous = sessions.open(session()).unwrap().unwrap();
        assert!(sessions.get(&anonymous, Some(&who("alice", &[]))).is_none());
        assert!(sessions.get(&anonymous, None).is_some());
        assert!(!sessions.close("no-such-session", None));
    }

    /// Each principal opens at most its share; ending one of its sessions gives the place back,
    /// and another principal's count is its own.
    #[test]
    fn a_principal_opens_at_most_its_share_and_ending_one_gives_it_back() {
        let sessions = Sessions::new(Duration::from_secs(60), 10, 2);
        let alice = || session_of(Some(who("alice", &[])));
        let first = sessions.open(alice()).unwrap().unwrap();
        let second = sessions.open(alice()).unwrap().unwrap();
        assert_ne!(first, second);
        assert!(sessions.open(alice()).unwrap().is_none(), "alice is at her share");
        assert!(sessions.open(session_of(Some(who("bob", &[])))).unwrap().is_some());
        assert!(
            sessions.open(session()).unwrap().is_some(),
            "anonymous sessions count globally only"
        );
        assert!(sessions.close(&first, Some(&who("alice", &[]))));
        assert!(sessions.open(alice()).unwrap().is_some(), "her place came back");
        assert!(sessions.open(alice()).unwrap().is_none());
        let ids: Vec<String> = (0..3).filter_map(|_| sessions.open(session()).unwrap()).collect();
        assert_eq!(ids.len(), 3);
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }

    /// At the global bound, idle sessions are swept before a new one is refused; a session with
    /// its GET stream open is never idle; ending a session closes its stream.
    #[tokio::test(start_paused = true)]
    async fn the_bound_sweeps_idle_sessions_and_an_open_stream_keeps_a_session() {
        let idle = Duration::from_secs(60);
        let sessions = Sessions::new(idle, 2, 10);
        let listening = sessions.open(session()).unwrap().unwrap();
        let quiet = sessions.open(session()).unwrap().unwrap();
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let held = sessions.get(&listening, None).unwrap();
        assert!(held.mailbox.attach(tx).is_some());
        assert!(sessions.open(session()).unwrap().is_none(), "full, nothing idle");
        tokio::time::advance(idle).await;
        assert!(sessions.open(session()).unwrap().is_some(), "the quiet one was swept");
        assert!(sessions.get(&quiet, None).is_none());
        assert!(sessions.get(&listening, None).is_some(), "its stream is open: not idle");
        assert!(held.mailbox.is_open());
        assert!(sessions.close(&listening, None));
        assert!(!held.mailbox.is_open(), "ending the session ends its stream");
    }

    /// A principal's expired sessions stop counting against its share within a quarter of the
    /// idle time (the periodic sweep), even when the server is far from its global bound.
    #[tokio::test(start_paused = true)]
    async fn expired_sessions_give_their_principal_its_share_back() {
        let idle = Duration::from_secs(60);
        let sessions = Sessions::new(idle, 100, 1);
        let alice = || session_of(Some(who("alice", &[])));
        assert!(sessions.open(alice()).unwrap().is_some());
        assert!(sessions.open(alice()).unwrap().is_none(), "at her share");
        tokio::time::advance(idle).await;
        assert!(sessions.open(alice()).unwrap().is_some(), "the expired one was swept");
    }
}
