//! Handshake-era sessions: opened by `initialize`, named by `Mcp-Session-Id`, owned by the
//! principal that opened them, ended by `DELETE` or by idleness.

use crate::context::Principal;
use crate::dispatch::Dispatcher;
use crate::peer::{Outbound, Peer};
use crate::seal::{RandomUnavailable, random};
use crate::server::Session;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One handshake-era session.
pub(super) struct LegacySession {
    /// Who opened it; only they may use it.
    pub(super) principal: Option<Principal>,
    pub(super) session: Mutex<Session>,
    /// Its calls in flight (cancelled by `notifications/cancelled` or when it ends).
    pub(super) dispatcher: Dispatcher,
    /// Requests to the client and their waiters; each call's stream writes its own requests.
    pub(super) peer: Peer,
    last_seen: Mutex<Instant>,
}

impl LegacySession {
    pub(super) fn new(principal: Option<Principal>, session: Session, dispatcher: Dispatcher, sink: Outbound) -> Self {
        Self {
            principal,
            session: Mutex::new(session),
            dispatcher,
            peer: Peer::new(sink),
            last_seen: Mutex::new(Instant::now()),
        }
    }

    fn idle_for(&self) -> Option<Duration> {
        self.last_seen.lock().ok().map(|t| t.elapsed())
    }

    pub(super) fn touch(&self) {
        if let Ok(mut t) = self.last_seen.lock() {
            *t = Instant::now();
        }
    }

    /// Ends it: questions waiting for the client fail at once, calls in flight are cancelled.
    fn end(&self) {
        self.peer.close();
        self.dispatcher.cancel_all();
    }
}

/// The open sessions.
pub(super) struct Sessions {
    map: Mutex<HashMap<String, Arc<LegacySession>>>,
    idle: Duration,
    max: usize,
}

impl Sessions {
    pub(super) fn new(idle: Duration, max: usize) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            idle,
            max,
        }
    }

    /// Adds a session under a new random id; `Ok(None)` when the bound is reached (after idle
    /// sessions were dropped).
    pub(super) fn open(&self, session: LegacySession) -> Result<Option<String>, RandomUnavailable> {
        let Ok(mut map) = self.map.lock() else {
            return Ok(None);
        };
        let idle = self.idle;
        map.retain(|_, s| {
            let alive = s.idle_for().is_some_and(|t| t < idle);
            if !alive {
                s.end();
            }
            alive
        });
        if map.len() >= self.max {
            return Ok(None);
        }
        let id = new_session_id()?;
        map.insert(id.clone(), Arc::new(session));
        Ok(Some(id))
    }

    /// The live session named `id`, if `principal` owns it. An expired one is ended and dropped;
    /// another principal's session is as unknown as a missing one.
    pub(super) fn get(&self, id: &str, principal: Option<&Principal>) -> Option<Arc<LegacySession>> {
        let mut map = self.map.lock().ok()?;
        let expired = map.get(id)?.idle_for().is_none_or(|t| t >= self.idle);
        if expired {
            if let Some(gone) = map.remove(id) {
                gone.end();
            }
            return None;
        }
        let found = map.get(id).filter(|s| s.principal.as_ref() == principal).cloned()?;
        found.touch();
        Some(found)
    }

    /// Ends the session named `id`; `false` when there is none.
    pub(super) fn close(&self, id: &str) -> bool {
        match self.map.lock().ok().and_then(|mut m| m.remove(id)) {
            Some(s) => {
                s.end();
                true
            }
            None => false,
        }
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

    fn session() -> LegacySession {
        let server = Arc::new(crate::Server::new("t"));
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        LegacySession::new(None, Session::new(), Dispatcher::connection(server), Outbound { tx })
    }

    #[test]
    fn no_randomness_opens_no_session() {
        let sessions = Sessions::new(Duration::from_secs(60), 10);
        assert!(without_randomness(|| sessions.open(session())).is_err());
        let id = sessions.open(session()).unwrap().unwrap();
        assert_eq!(id.len(), 32);
        assert!(sessions.get(&id, None).is_some());
    }
}
