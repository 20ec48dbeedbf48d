//! Streamable HTTP, both eras: POSTs to `/mcp`, one keep-alive connection per client, each client
//! making its share of the calls one after another.
//!
//! - 2026-07-28: stateless POSTs (the first client's `server/discover` says the server is ready);
//!   a question is an `InputRequiredResult`, answered by retrying the call.
//! - 2025-11-25 and earlier (the handshake era): each client opens a session of its own
//!   (`initialize`, whose response carries the `Mcp-Session-Id` header, then
//!   `notifications/initialized`) and sends that header on every later request. A question is an
//!   `elicitation/create` request on the SSE stream of the call's POST: the client answers it with
//!   a POST of the JSON-RPC response (the server says 202) and reads the call's result on the same
//!   stream. The answers go on a second keep-alive connection of the client, opened at its first
//!   question: HTTP/1.1 has no multiplexing, and the first connection is busy with the stream. The
//!   session ends with a DELETE after the measured calls (a 405 is a server that does not let
//!   clients end sessions).

use super::{Answer, Inbound, Session};
use crate::{Measured, Options};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Method;
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

struct Shared {
    addr: String,
    session: Session,
    tool: String,
    args: Value,
}

type Conn = SendRequest<Full<Bytes>>;

struct Client {
    send: Conn,
    /// The connection the answers to the server's questions go on (handshake era), opened at the
    /// first question.
    side: Option<Conn>,
    /// The session the server gave at `initialize` (handshake era).
    session_id: Option<String>,
    next_id: i64,
}

impl Client {
    async fn connect(addr: &str) -> Result<Self, String> {
        Ok(Self {
            send: connect(addr).await?,
            side: None,
            session_id: None,
            next_id: 1,
        })
    }

    /// A request to `/mcp` with the era's headers: the protocol version, the session once there
    /// is one, and on 2026-07-28 `Mcp-Method` / `Mcp-Name` from the body.
    fn request(&self, s: &Shared, verb: Method, body: Option<&Value>) -> Result<hyper::Request<Full<Bytes>>, String> {
        let mut req = hyper::Request::builder()
            .method(verb)
            .uri("/mcp")
            .header("host", &s.addr)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", s.session.version());
        if s.session.modern()
            && let Some(method) = body.and_then(|b| b.get("method")).and_then(Value::as_str)
        {
            req = req.header("mcp-method", method);
            if method == "tools/call"
                && let Some(name) = body.and_then(|b| b["params"].get("name")).and_then(Value::as_str)
            {
                req = req.header("mcp-name", name);
            }
        }
        if let Some(id) = &self.session_id {
            req = req.header("mcp-session-id", id);
        }
        let payload = match body {
            Some(b) => {
                req = req.header("content-type", "application/json");
                Bytes::from(serde_json::to_vec(b).unwrap_or_default())
            }
            None => Bytes::new(),
        };
        req.body(Full::new(payload)).map_err(|e| e.to_string())
    }

    /// Opens the client's session with the era's opening frames: `server/discover`, or
    /// `initialize` (whose response names the session) and `notifications/initialized`.
    async fn open(&mut self, s: &Shared) -> Result<(), String> {
        for frame in s.session.opening() {
            if frame.get("id").is_some() {
                let (msg, _) = self.post(s, &frame).await?;
                if let Some(e) = msg.get("error") {
                    return Err(format!("{}: {e}", frame["method"]));
                }
            } else {
                let req = self.request(s, Method::POST, Some(&frame))?;
                deliver(&mut self.send, req).await?;
            }
        }
        Ok(())
    }

    /// POSTs one request and returns the JSON-RPC response to it, from a JSON body or an SSE
    /// stream, with the number of the server's questions answered on the way (handshake era).
    async fn post(&mut self, s: &Shared, body: &Value) -> Result<(Value, u32), String> {
        let id = body.get("id").cloned().unwrap_or(Value::Null);
        let req = self.request(s, Method::POST, Some(body))?;
        self.send.ready().await.map_err(|e| format!("connection: {e}"))?;
        let resp = self.send.send_request(req).await.map_err(|e| format!("send: {e}"))?;
        let status = resp.status();
        if !s.session.modern()
            && self.session_id.is_none()
            && let Some(sid) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())
        {
            self.session_id = Some(sid.to_string());
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let stream = resp.into_body();
        if !status.is_success() || !sse {
            let bytes = stream.collect().await.map_err(|e| format!("body: {e}"))?.to_bytes();
            if !status.is_success() {
                return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes)));
            }
            let msg = serde_json::from_slice(&bytes).map_err(|e| format!("bad JSON body: {e}"))?;
            return Ok((msg, 0));
        }
        // SSE, read as it arrives: a question must be answered before the response comes.
        let mut events = Events::new(stream);
        let mut asked = 0;
        while let Some((_, data)) = events.next().await {
            // A priming event (an id, empty data) or anything else that is not JSON-RPC.
            let Ok(msg) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            match super::classify(&msg) {
                Inbound::ServerRequest { id: qid, method } => {
                    let result = super::answer_server_request(&method, &msg);
                    self.answer(s, &json!({"jsonrpc": "2.0", "id": qid, "result": result}))
                        .await?;
                    asked += 1;
                }
                Inbound::Response { id: rid } if rid == id => {
                    // The server ends the stream after the response: read it to its end, or
                    // the connection cannot carry the next request.
                    while events.next().await.is_some() {}
                    return Ok((msg, asked));
                }
                Inbound::Response { .. } | Inbound::Notification => {}
            }
        }
        Err(format!("the SSE stream ended without the response to {id}"))
    }

    /// POSTs the answer to a server's question on the second connection.
    async fn answer(&mut self, s: &Shared, msg: &Value) -> Result<(), String> {
        let req = self.request(s, Method::POST, Some(msg))?;
        if self.side.is_none() {
            self.side = Some(connect(&s.addr).await?);
        }
        match self.side.as_mut() {
            Some(side) => deliver(side, req).await,
            None => Err("no connection for the answer".into()),
        }
    }

    /// One logical call, retried with answers until it is done. Returns the number of rounds:
    /// questions answered on the call's stream, or retries.
    async fn call(&mut self, s: &Shared) -> Result<(u32, String, Option<String>), String> {
        let mut retry = None;
        let mut rounds = 0;
        loop {
            let id = self.next_id;
            self.next_id += 1;
            let params = s.session.call_params(&s.tool, &s.args, retry.as_ref());
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
            let (msg, asked) = self.post(s, &body).await?;
            rounds += asked;
            match s.session.answer(&msg) {
                Answer::Retry { input_responses, state } => {
                    rounds += 1;
                    if rounds > 10 {
                        return Ok((rounds, String::new(), Some("more than 10 rounds".into())));
                    }
                    retry = Some((input_responses, state));
                }
                Answer::Done { text, error } => return Ok((rounds, text, error)),
            }
        }
    }

    /// Ends the client's session, when it has one: a DELETE naming it. 405 is a server that does
    /// not let clients end sessions.
    async fn close(&mut self, s: &Shared) -> Result<(), String> {
        if self.session_id.is_none() {
            return Ok(());
        }
        let req = self.request(s, Method::DELETE, None)?;
        self.send.ready().await.map_err(|e| format!("connection: {e}"))?;
        let resp = self.send.send_request(req).await.map_err(|e| format!("send: {e}"))?;
        let status = resp.status();
        let bytes = body_bytes(resp).await?;
        if status.is_success() || status == hyper::StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(format!("DELETE: HTTP {status}: {}", String::from_utf8_lossy(&bytes)))
        }
    }
}

/// A response's whole body.
pub(crate) async fn body_bytes(resp: hyper::Response<Incoming>) -> Result<Bytes, String> {
    Ok(resp
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes())
}

/// Sends a message that is no request (a notification, or the answer to a server's question):
/// the server accepts it (202) with nothing to read; a JSON-RPC error in the body is a failure.
async fn deliver(conn: &mut Conn, req: hyper::Request<Full<Bytes>>) -> Result<(), String> {
    conn.ready().await.map_err(|e| format!("connection: {e}"))?;
    let resp = conn.send_request(req).await.map_err(|e| format!("send: {e}"))?;
    let status = resp.status();
    let bytes = body_bytes(resp).await?;
    let refused = serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| v.get("error").is_some());
    if !status.is_success() || refused {
        return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes)));
    }
    Ok(())
}

/// An SSE stream read as it arrives: its events as (id, data), the data lines joined. Comments
/// and events with neither id nor data are skipped; a priming event (an id, empty data) is not.
pub(crate) struct Events {
    body: Incoming,
    buffer: String,
}

impl Events {
    pub(crate) fn new(body: Incoming) -> Self {
        Self {
            body,
            buffer: String::new(),
        }
    }

    /// The next event; `None` when the stream ends or fails.
    pub(crate) async fn next(&mut self) -> Option<(Option<String>, String)> {
        loop {
            if let Some(event) = take_event(&mut self.buffer) {
                return Some(event);
            }
            let frame = self.body.frame().await?.ok()?;
            if let Ok(data) = frame.into_data() {
                push_chunk(&mut self.buffer, &data);
            }
        }
    }
}

/// Appends a chunk of the stream, its line ends made `\n` (JSON data holds no raw `\r`).
fn push_chunk(buffer: &mut String, chunk: &[u8]) {
    buffer.extend(String::from_utf8_lossy(chunk).chars().filter(|&c| c != '\r'));
}

/// The first complete event of `buffer`, taken out of it.
fn take_event(buffer: &mut String) -> Option<(Option<String>, String)> {
    loop {
        let end = buffer.find("\n\n")?;
        let block: String = buffer.drain(..end + 2).collect();
        let id = block.lines().find_map(|l| l.strip_prefix("id: ")).map(str::to_owned);
        let data: String = block
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .collect();
        if block.starts_with(':') || (id.is_none() && data.is_empty()) {
            continue;
        }
        return Some((id, data));
    }
}

pub(crate) async fn run(o: &Options, addr: String, spawned: Instant, pid: u32) -> Result<(Duration, Measured), String> {
    let s = Arc::new(Shared {
        addr: addr.clone(),
        session: Session::new(&o.protocol),
        tool: o.tool.clone(),
        args: o.args.clone(),
    });
    // Ready: the port accepts connections and the first client's session opens.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut first = loop {
        match Client::connect(&addr).await {
            Ok(c) => break c,
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    };
    first.open(&s).await?;
    let ready = spawned.elapsed();

    let mut clients = vec![first];
    for _ in 1..o.clients.max(1) {
        let mut c = Client::connect(&addr).await?;
        // A session per client on the handshake era; 2026-07-28 has nothing to open.
        if !s.session.modern() {
            c.open(&s).await?;
        }
        clients.push(c);
    }
    // Warm-up, spread over the clients; then the measured calls.
    let warm = phase(&s, &mut clients, o.warmup).await;
    if let Some(e) = warm.first_error {
        return Err(format!("warm-up failed: {e}"));
    }
    let started = Instant::now();
    let cpu_start = crate::cpu_ns(pid);
    let mut m = phase(&s, &mut clients, o.n).await;
    m.elapsed = started.elapsed();
    m.calls = o.n;
    m.rss_kib = crate::peak_rss_kib(pid);
    m.cpu_ns = cpu_start.zip(crate::cpu_ns(pid)).map(|(a, b)| b.saturating_sub(a));
    // The sessions end outside the figures.
    for c in &mut clients {
        c.close(&s).await?;
    }
    Ok((ready, m))
}

/// `n` calls shared by all clients; each client takes the next one as soon as it is free.
async fn phase(s: &Arc<Shared>, clients: &mut Vec<Client>, n: usize) -> Measured {
    let counter = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for mut c in clients.drain(..) {
        let s = s.clone();
        let counter = counter.clone();
        tasks.push(tokio::spawn(async move {
            let mut m = Measured::default();
            while counter.fetch_add(1, Ordering::Relaxed) < n {
                let t = Instant::now();
                match c.call(&s).await {
                    Ok((rounds, text, error)) => {
                        m.latencies.push(t.elapsed());
                        m.rounds += rounds as usize;
                        if let Some(e) = error {
                            m.errors += 1;
                            m.first_error.get_or_insert(e);
                        }
                        m.first_text.get_or_insert(text);
                    }
                    Err(e) => {
                        m.errors += 1;
                        m.first_error.get_or_insert(e);
                        break;
                    }
                }
            }
            (c, m)
        }));
    }
    let mut total = Measured::default();
    for t in tasks {
        if let Ok((c, m)) = t.await {
            clients.push(c);
            total.latencies.extend(m.latencies);
            total.rounds += m.rounds;
            total.errors += m.errors;
            if total.first_text.is_none() {
                total.first_text = m.first_text;
            }
            if total.first_error.is_none() {
                total.first_error = m.first_error;
            }
        } else {
            total.errors += 1;
        }
    }
    total
}

/// An HTTP/1.1 keep-alive connection to `addr` (Nagle off), its driver on a task of its own.
pub(crate) async fn connect(addr: &str) -> Result<SendRequest<Full<Bytes>>, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (send, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(conn);
    Ok(send)
}

#[cfg(test)]
mod tests {
    use super::{push_chunk, take_event};

    #[test]
    fn sse_events_are_cut_where_they_end_whatever_the_chunks() {
        let stream = b"id: 0\nretry: 3000\ndata:\n\n: a comment\n\nevent: message\r\nid: 1\r\ndata: {\"a\":1}\r\n\r\ndata: x\ndata: y\n\n";
        // Every split of the stream into two chunks gives the same events.
        for cut in 0..stream.len() {
            let mut buffer = String::new();
            let mut got = Vec::new();
            for chunk in [&stream[..cut], &stream[cut..]] {
                push_chunk(&mut buffer, chunk);
                while let Some(event) = take_event(&mut buffer) {
                    got.push(event);
                }
            }
            let want = [
                (Some("0".to_string()), String::new()),
                (Some("1".to_string()), "{\"a\":1}".to_string()),
                (None, "xy".to_string()),
            ];
            assert_eq!(got, want, "cut at {cut}");
        }
    }
}
