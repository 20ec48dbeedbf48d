//! Streamable HTTP on 2026-07-28: stateless POSTs to `/mcp`, one keep-alive connection per
//! client, each client making its share of the calls one after another.

use super::{Answer, Session};
use crate::{Measured, Options};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
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

struct Client {
    send: SendRequest<Full<Bytes>>,
    next_id: i64,
}

impl Client {
    async fn connect(addr: &str) -> Result<Self, String> {
        Ok(Self {
            send: connect(addr).await?,
            next_id: 1,
        })
    }

    /// POSTs one request and returns the JSON-RPC response to it, from a JSON body or an SSE
    /// stream.
    async fn post(&mut self, s: &Shared, method: &str, name: Option<&str>, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut req = hyper::Request::post("/mcp")
            .header("host", &s.addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", super::MODERN)
            .header("mcp-method", method);
        if let Some(n) = name {
            req = req.header("mcp-name", n);
        }
        let req = req
            .body(Full::new(Bytes::from(serde_json::to_vec(&body).unwrap_or_default())))
            .map_err(|e| e.to_string())?;
        self.send.ready().await.map_err(|e| format!("connection: {e}"))?;
        let resp = self.send.send_request(req).await.map_err(|e| format!("send: {e}"))?;
        let status = resp.status();
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes)));
        }
        if !sse {
            return serde_json::from_slice(&bytes).map_err(|e| format!("bad JSON body: {e}"));
        }
        // SSE: the response is the event whose data has our id and a result or an error.
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines() {
            if let Some(data) = line.strip_prefix("data:")
                && let Ok(v) = serde_json::from_str::<Value>(data.trim())
                && v.get("id") == Some(&json!(id))
                && (v.get("result").is_some() || v.get("error").is_some())
            {
                return Ok(v);
            }
        }
        Err(format!("no response in the SSE stream: {text}"))
    }

    /// One logical call, retried with answers until it is done. Returns the number of rounds.
    async fn call(&mut self, s: &Shared) -> Result<(u32, String, Option<String>), String> {
        let mut retry = None;
        let mut rounds = 0;
        loop {
            let params = s.session.call_params(&s.tool, &s.args, retry.as_ref());
            let msg = self.post(s, "tools/call", Some(&s.tool), params).await?;
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
}

pub(crate) async fn run(o: &Options, addr: String, spawned: Instant, pid: u32) -> Result<(Duration, Measured), String> {
    let s = Arc::new(Shared {
        addr: addr.clone(),
        session: Session::new(super::MODERN),
        tool: o.tool.clone(),
        args: o.args.clone(),
    });
    // Ready: the port accepts connections and `server/discover` answers.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut first = loop {
        match Client::connect(&addr).await {
            Ok(c) => break c,
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    };
    let discover = first
        .post(&s, "server/discover", None, s.session.call_params_bare())
        .await?;
    if let Some(e) = discover.get("error") {
        return Err(format!("server/discover: {e}"));
    }
    let ready = spawned.elapsed();

    let mut clients = vec![first];
    for _ in 1..o.clients.max(1) {
        clients.push(Client::connect(&addr).await?);
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
