//! A TCP proxy that breaks one connection at a chosen point of a call, as a network does: the
//! client's side and the server's side of that connection are shut down together, and both
//! processes see the connection end. Everything else passes through unchanged, byte for byte.
//!
//! It also records the SSE event ids it passes from the server to the client, so a test can say
//! that no event reached the client twice.

// Each test binary that includes it uses some of the cut points.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// Where the proxy breaks the connection that carries a `tools/call`'s event stream: after the
/// named event went through (the answer: as it goes up, before the result can come back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Once the stream's first event (the priming event, with its `retry` field) went through.
    Priming,
    /// Once the `elicitation/create` request went through.
    Question,
    /// When the client's answer goes to the server (before the result can come back).
    Answer,
}

#[derive(Default)]
struct State {
    /// The connections open, by number: the client's socket and the server's.
    open: HashMap<u64, (TcpStream, TcpStream)>,
    /// The connection whose last request is a `tools/call`.
    calls: Vec<u64>,
    /// The connection that carried the question.
    asked_on: Option<u64>,
    /// The cut happened (it happens once).
    done: bool,
    /// The connection to break at its next chunk from the server, without passing it on.
    doomed: Option<u64>,
    /// `id:` values passed to the client, in order.
    ids: Vec<String>,
}

/// The proxy: listens on `addr` and forwards to the server it was started for.
pub(crate) struct CutProxy {
    pub(crate) addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl CutProxy {
    pub(crate) fn start(upstream: SocketAddr, cut: Cut) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        std::thread::spawn(move || {
            for (n, client) in listener.incoming().enumerate() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(upstream) else {
                    continue;
                };
                let n = n as u64;
                if let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) {
                    shared.lock().unwrap().open.insert(n, (c, s));
                }
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let st = shared.clone();
                std::thread::spawn(move || upward(n, client, s2, cut, &st));
                let st = shared.clone();
                std::thread::spawn(move || downward(n, server, c2, cut, &st));
            }
        });
        CutProxy { addr, state }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Whether the connection was broken.
    pub(crate) fn cut_happened(&self) -> bool {
        self.state.lock().unwrap().done
    }

    /// The SSE event ids passed to the client, in order.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.state.lock().unwrap().ids.clone()
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Shuts both sides of connection `n` down.
fn break_connection(n: u64, state: &Mutex<State>) {
    let mut st = state.lock().unwrap();
    st.done = true;
    if let Some((c, s)) = st.open.remove(&n) {
        let _ = c.shutdown(Shutdown::Both);
        let _ = s.shutdown(Shutdown::Both);
    }
}

/// Client to server: requests. Notes which connection carries a `tools/call`, and breaks the
/// question's connection when the answer goes up (`Cut::Answer`).
fn upward(n: u64, mut from: TcpStream, mut to: TcpStream, cut: Cut, state: &Mutex<State>) {
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(read) = from.read(&mut buf) {
        if read == 0 {
            break;
        }
        let chunk = &buf[..read];
        {
            let mut st = state.lock().unwrap();
            if contains(chunk, b"\"tools/call\"") {
                st.calls.push(n);
            }
            if cut == Cut::Answer && !st.done && contains(chunk, b"\"action\"") {
                st.doomed = st.asked_on;
            }
        }
        if cut == Cut::Answer {
            let doomed = state.lock().unwrap().doomed;
            if let Some(d) = doomed
                && !state.lock().unwrap().done
            {
                break_connection(d, state);
            }
        }
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Server to client: responses and event streams. Records event ids, and breaks a call's stream
/// after its priming event or its question.
fn downward(n: u64, mut from: TcpStream, mut to: TcpStream, cut: Cut, state: &Mutex<State>) {
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(read) = from.read(&mut buf) {
        if read == 0 {
            break;
        }
        let chunk = &buf[..read];
        let mut after = false;
        {
            let mut st = state.lock().unwrap();
            if st.doomed == Some(n) && !st.done {
                drop(st);
                break_connection(n, state);
                return;
            }
            let is_call = st.calls.last() == Some(&n);
            if contains(chunk, b"elicitation/create") {
                st.asked_on = Some(n);
            }
            if !st.done && is_call {
                after = match cut {
                    Cut::Priming => contains(chunk, b"retry:"),
                    Cut::Question => contains(chunk, b"elicitation/create"),
                    Cut::Answer => false,
                };
            }
            for line in String::from_utf8_lossy(chunk).lines() {
                if let Some(id) = line.strip_prefix("id: ").or_else(|| line.strip_prefix("id:")) {
                    st.ids.push(id.trim().to_owned());
                }
            }
        }
        if to.write_all(chunk).is_err() {
            break;
        }
        if after {
            let _ = to.flush();
            std::thread::sleep(std::time::Duration::from_millis(50));
            break_connection(n, state);
            return;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
