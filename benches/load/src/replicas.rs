//! `mcp-load replicas`: two-round MRTR calls through a proxy in front of server replicas that
//! share one state key, with bearer identities (see `benches/replicas.sh`).
//!
//! Every call is `ask_name` on 2026-07-28: round 1 must be an `InputRequiredResult` with one
//! form question and a `requestState`; round 2 answers it (accept, `name` = a string unique to
//! the call) with the echoed state, under the same identity, and must come back as exactly
//! `hello <name>`. A call is **lost** when a round gets no answer (transport error, timeout,
//! 5xx) and **wrong** when an answer is anything but the expected one. Every `--cross-every`th
//! call also replays its state and answers under the next identity's token: that probe must be
//! refused, and an answer to it counts as a **cross-principal acceptance**.
//!
//! Routing (`--route`): `rr` sends both rounds to `/mcp`, and the proxy's round-robin decides;
//! `alternate` sends round 1 of even calls to `/a` and round 2 to `/b` (odd calls the other way
//! round), paths the proxy maps to one replica each. Either way the replica that answered each
//! round is read from the proxy's `X-Upstream` header, and the calls whose rounds were answered
//! by different replicas are counted.
//!
//! Two shapes: a burst (`--calls N`: all N calls started at once, over `--connections`
//! keep-alive connections) or a soak (`--rate R --duration SECS`: a new call every 1/R s). The
//! resident set of the processes given with `--pid LABEL=PID` is sampled every `--rss-every`
//! seconds (to `--rss-csv`), and their peak (`VmHWM`) is read at the end.

use crate::jwt;
use crate::report::{NA, show};
use crate::wire::http::connect;
use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;

const PROTOCOL: &str = "2026-07-28";
const TOOL: &str = "ask_name";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Route {
    RoundRobin,
    Alternate,
}

struct Options {
    label: String,
    addr: String,
    secret: String,
    audience: String,
    identities: usize,
    calls: usize,
    warmup: usize,
    connections: usize,
    route: Route,
    cross_every: usize,
    pids: Vec<(String, u32)>,
    rate: Option<f64>,
    duration: Option<Duration>,
    max_in_flight: usize,
    rss_csv: Option<String>,
    rss_every: Duration,
    request_timeout: Duration,
    timeout: Duration,
    out: Option<String>,
    md: Option<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: mcp-load replicas --addr HOST:PORT [--secret JWT_SECRET] [--audience AUD] [--label L]\n\
         \x20      [--identities N] [--calls N] [--warmup N] [--connections C] [--route rr|alternate] [--cross-every K]\n\
         \x20      [--rate CALLS_PER_S --duration SECS] [--max-in-flight N] [--pid LABEL=PID]...\n\
         \x20      [--rss-csv FILE] [--rss-every SECS] [--request-timeout SECS] [--timeout SECS]\n\
         \x20      [--out FILE.jsonl] [--md FILE.md]\n\
         --secret (the HS256 secret in hex) defaults to $MCP_RESOLVE_JWT_SECRET, --audience (the tokens' `aud`, which the\n\
         servers require) to $MCP_RESOLVE_JWT_AUDIENCE."
    );
    std::process::exit(2)
}

fn parse(args: &[String]) -> Options {
    let mut o = Options {
        label: "replicas".into(),
        addr: String::new(),
        secret: std::env::var("MCP_RESOLVE_JWT_SECRET").unwrap_or_default(),
        audience: std::env::var("MCP_RESOLVE_JWT_AUDIENCE").unwrap_or_default(),
        identities: 100,
        calls: 10_000,
        warmup: 200,
        connections: 4000,
        route: Route::Alternate,
        cross_every: 10,
        pids: Vec::new(),
        rate: None,
        duration: None,
        max_in_flight: 10_000,
        rss_csv: None,
        rss_every: Duration::from_secs(10),
        request_timeout: Duration::from_secs(120),
        timeout: Duration::from_secs(3600),
        out: None,
        md: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_else(|| usage());
        let secs = |v: String| Duration::from_secs_f64(v.parse().unwrap_or_else(|_| usage()));
        match a.as_str() {
            "--label" => o.label = val(),
            "--addr" => o.addr = val(),
            "--secret" => o.secret = val(),
            "--audience" => o.audience = val(),
            "--identities" => o.identities = val().parse().unwrap_or_else(|_| usage()),
            "--calls" | "-n" => o.calls = val().parse().unwrap_or_else(|_| usage()),
            "--warmup" => o.warmup = val().parse().unwrap_or_else(|_| usage()),
            "--connections" => o.connections = val().parse().unwrap_or_else(|_| usage()),
            "--route" => {
                o.route = match val().as_str() {
                    "rr" => Route::RoundRobin,
                    "alternate" => Route::Alternate,
                    _ => usage(),
                }
            }
            "--cross-every" => o.cross_every = val().parse().unwrap_or_else(|_| usage()),
            "--pid" => {
                let v = val();
                let (label, pid) = v.split_once('=').unwrap_or_else(|| usage());
                o.pids
                    .push((label.to_string(), pid.parse().unwrap_or_else(|_| usage())));
            }
            "--rate" => o.rate = Some(val().parse().unwrap_or_else(|_| usage())),
            "--duration" => o.duration = Some(secs(val())),
            "--max-in-flight" => o.max_in_flight = val().parse().unwrap_or_else(|_| usage()),
            "--rss-csv" => o.rss_csv = Some(val()),
            "--rss-every" => o.rss_every = secs(val()),
            "--request-timeout" => o.request_timeout = secs(val()),
            "--timeout" => o.timeout = secs(val()),
            "--out" => o.out = Some(val()),
            "--md" => o.md = Some(val()),
            _ => usage(),
        }
    }
    if o.addr.is_empty() || o.secret.is_empty() || o.audience.is_empty() || o.identities < 2 || o.connections == 0 {
        usage()
    }
    if o.rate.is_some() != o.duration.is_some() {
        eprintln!("mcp-load replicas: --rate and --duration go together");
        usage()
    }
    o
}

// ---------------------------------------------------------------------------------------------
// Requests

/// What a POST came back with.
struct Reply {
    status: u16,
    upstream: String,
    body: Value,
}

/// A keep-alive connection to the proxy, opened again when it breaks.
pub(crate) struct Conn {
    pub(crate) send: Option<SendRequest<Full<Bytes>>>,
}

/// A fixed set of connections shared by every call: a round takes one, in FIFO order, and gives
/// it back when its answer is read (`mcp-load tasks` uses it too).
pub(crate) struct Pool {
    free: tokio::sync::Mutex<mpsc::UnboundedReceiver<Conn>>,
    back: mpsc::UnboundedSender<Conn>,
}

impl Pool {
    pub(crate) async fn open(addr: &str, n: usize) -> Result<Arc<Self>, String> {
        let (back, free) = mpsc::unbounded_channel();
        // Opened a few at a time: a burst of thousands of SYNs overflows the listen backlog.
        let mut opened = 0;
        while opened < n {
            let batch = (n - opened).min(64);
            let mut handles = Vec::with_capacity(batch);
            for _ in 0..batch {
                let addr = addr.to_string();
                handles.push(tokio::spawn(async move { connect(&addr).await }));
            }
            for h in handles {
                let send = h.await.map_err(|e| e.to_string())??;
                let _ = back.send(Conn { send: Some(send) });
            }
            opened += batch;
        }
        Ok(Arc::new(Self {
            free: tokio::sync::Mutex::new(free),
            back,
        }))
    }

    pub(crate) async fn take(&self) -> Conn {
        // The sender half lives in `self`: the channel never closes while the pool exists.
        self.free.lock().await.recv().await.unwrap_or(Conn { send: None })
    }

    pub(crate) fn give(&self, c: Conn) {
        let _ = self.back.send(c);
    }
}

struct Shared {
    o: Options,
    host: String,
    tokens: Vec<String>,
    meta: Value,
    pool: Arc<Pool>,
    stats: Mutex<Stats>,
    next_id: AtomicU64,
    /// Calls whose round 1 is answered and round 2 not yet: now, and at most.
    open: AtomicUsize,
    open_max: AtomicUsize,
    done: AtomicUsize,
    failed: AtomicUsize,
}

impl Shared {
    fn body(&self, id: u64, retry: Option<(&Value, &Value)>) -> Vec<u8> {
        let mut params = json!({"name": TOOL, "arguments": {}, "_meta": self.meta});
        if let Some((responses, state)) = retry {
            params["inputResponses"] = responses.clone();
            params["requestState"] = state.clone();
        }
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .unwrap_or_default()
    }

    /// One POST on a pooled connection. `Err` is a request with no answer: a transport error or
    /// a timeout (the connection is then dropped and opened again for the next round).
    async fn post(
        &self,
        path: &str,
        identity: usize,
        retry: Option<(&Value, &Value)>,
    ) -> Result<(Reply, Duration), String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = self.body(id, retry);
        let mut conn = self.pool.take().await;
        let started = Instant::now();
        let result = tokio::time::timeout(self.o.request_timeout, self.send(&mut conn, path, identity, id, body)).await;
        let result = match result {
            Ok(r) => r,
            Err(_) => Err(format!("no answer within {:?}", self.o.request_timeout)),
        };
        if result.is_err() {
            conn.send = None;
        }
        self.pool.give(conn);
        result.map(|r| (r, started.elapsed()))
    }

    async fn send(
        &self,
        conn: &mut Conn,
        path: &str,
        identity: usize,
        id: u64,
        body: Vec<u8>,
    ) -> Result<Reply, String> {
        if conn.send.as_ref().is_none_or(SendRequest::is_closed) {
            conn.send = Some(connect(&self.o.addr).await?);
        }
        let Some(send) = conn.send.as_mut() else {
            return Err("no connection".into());
        };
        let req = hyper::Request::post(path)
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL)
            .header("mcp-method", "tools/call")
            .header("mcp-name", TOOL)
            .header("authorization", &self.tokens[identity])
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        send.ready().await.map_err(|e| format!("connection: {e}"))?;
        let resp = send.send_request(req).await.map_err(|e| format!("send: {e}"))?;
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let upstream = header("x-upstream");
        let sse = header("content-type").starts_with("text/event-stream");
        let bytes = crate::wire::http::body_bytes(resp).await?;
        let body = if sse {
            // The response is the event whose data has our id and a result or an error.
            String::from_utf8_lossy(&bytes)
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|v| v.get("id") == Some(&json!(id)) && (v.get("result").is_some() || v.get("error").is_some()))
                .unwrap_or_else(|| json!(String::from_utf8_lossy(&bytes)))
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)))
        };
        if (200..300).contains(&status) && body.get("id") != Some(&json!(id)) {
            return Ok(Reply {
                status,
                upstream,
                body: json!({"driver": format!("the answer is not to request {id}"), "got": body}),
            });
        }
        Ok(Reply { status, upstream, body })
    }
}

// ---------------------------------------------------------------------------------------------
// Calls

#[derive(Default)]
struct Stats {
    started: usize,
    completed: usize,
    lost: usize,
    wrong: usize,
    cross_attempts: usize,
    cross_refused: usize,
    cross_accepted: usize,
    cross_lost: usize,
    cross_other: usize,
    alternated: usize,
    /// Replica (X-Upstream) → rounds it answered.
    upstreams: BTreeMap<String, usize>,
    /// Full two-round calls: from the call's start to round 2's answer, and the two rounds'
    /// own request times summed (what the call spent on the wire, not waiting for a connection).
    latencies: Vec<Duration>,
    wire: Vec<Duration>,
    first_lost: Option<String>,
    first_wrong: Option<String>,
    first_cross: Option<String>,
}

enum Outcome {
    Done { alternated: bool },
    Lost(String),
    Wrong(String),
}

fn is_lost(r: &Result<(Reply, Duration), String>) -> Option<String> {
    match r {
        Err(e) => Some(e.clone()),
        Ok((reply, _)) if reply.status >= 500 => Some(format!(
            "HTTP {} from {:?}: {}",
            reply.status, reply.upstream, reply.body
        )),
        Ok(_) => None,
    }
}

pub(crate) fn short(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 400 {
        let mut cut = 400;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// The answers to round 1's questions: accept, with `name` set.
fn answers(result: &Value, name: &str) -> Result<Value, String> {
    let reqs = result
        .get("inputRequests")
        .and_then(Value::as_object)
        .filter(|r| r.len() == 1)
        .ok_or_else(|| format!("round 1: not one input request: {}", short(result)))?;
    let mut out = serde_json::Map::new();
    for (key, req) in reqs {
        let asks_name = req.get("method").and_then(Value::as_str) == Some("elicitation/create")
            && req.pointer("/params/requestedSchema/properties/name").is_some();
        if !asks_name {
            return Err(format!("round 1: not the name form: {}", short(req)));
        }
        out.insert(key.clone(), json!({"action": "accept", "content": {"name": name}}));
    }
    Ok(Value::Object(out))
}

async fn call(s: Arc<Shared>, index: usize) {
    let identity = index % s.o.identities;
    let name = format!("u{identity}-c{index}");
    let (first, second) = match s.o.route {
        Route::RoundRobin => ("/mcp", "/mcp"),
        Route::Alternate if index.is_multiple_of(2) => ("/a", "/b"),
        Route::Alternate => ("/b", "/a"),
    };
    let started = Instant::now();
    let mut wire = Duration::ZERO;
    let mut upstreams = Vec::new();
    let outcome = 'call: {
        let r1 = s.post(first, identity, None).await;
        if let Some(e) = is_lost(&r1) {
            break 'call Outcome::Lost(format!("round 1: {e}"));
        }
        let Ok((r1, t1)) = r1 else {
            break 'call Outcome::Lost("round 1".into());
        };
        wire += t1;
        upstreams.push(r1.upstream.clone());
        let result = r1.body.get("result").cloned().unwrap_or(Value::Null);
        let state = result.get("requestState").cloned().unwrap_or(Value::Null);
        if r1.status != 200
            || result.get("resultType").and_then(Value::as_str) != Some("input_required")
            || !state.is_string()
        {
            break 'call Outcome::Wrong(format!("round 1: HTTP {}: {}", r1.status, short(&r1.body)));
        }
        let responses = match answers(&result, &name) {
            Ok(r) => r,
            Err(e) => break 'call Outcome::Wrong(e),
        };
        let now_open = s.open.fetch_add(1, Ordering::Relaxed) + 1;
        s.open_max.fetch_max(now_open, Ordering::Relaxed);

        // Another principal replays this call's state and answers: it must be refused.
        if s.o.cross_every > 0 && index.is_multiple_of(s.o.cross_every) {
            let thief = (identity + 1) % s.o.identities;
            let probe = index / s.o.cross_every;
            let path = if probe.is_multiple_of(2) { second } else { first };
            let r = s.post(path, thief, Some((&responses, &state))).await;
            let mut st = lock(&s.stats);
            st.cross_attempts += 1;
            match r {
                Err(e) => {
                    st.cross_lost += 1;
                    st.first_cross.get_or_insert(format!("probe lost: {e}"));
                }
                Ok((reply, _)) => {
                    let reason = reply.body.pointer("/error/data/reason").and_then(Value::as_str);
                    let answered = reply.body.get("result").is_some();
                    if answered {
                        st.cross_accepted += 1;
                        st.first_cross.get_or_insert(format!(
                            "ACCEPTED for {thief}: HTTP {} from {}: {}",
                            reply.status,
                            reply.upstream,
                            short(&reply.body)
                        ));
                    } else if reply.status == 400 && reason == Some("invalid_request_state") {
                        st.cross_refused += 1;
                    } else if reply.status >= 500 {
                        st.cross_lost += 1;
                        st.first_cross
                            .get_or_insert(format!("probe HTTP {}: {}", reply.status, short(&reply.body)));
                    } else {
                        // Refused, but not the way we expect: counted apart, reported.
                        st.cross_other += 1;
                        st.first_cross.get_or_insert(format!(
                            "probe refused otherwise: HTTP {}: {}",
                            reply.status,
                            short(&reply.body)
                        ));
                    }
                }
            }
        }

        let r2 = s.post(second, identity, Some((&responses, &state))).await;
        s.open.fetch_sub(1, Ordering::Relaxed);
        if let Some(e) = is_lost(&r2) {
            break 'call Outcome::Lost(format!("round 2: {e}"));
        }
        let Ok((r2, t2)) = r2 else {
            break 'call Outcome::Lost("round 2".into());
        };
        wire += t2;
        upstreams.push(r2.upstream.clone());
        let result = r2.body.get("result").unwrap_or(&Value::Null);
        let text = result.pointer("/content/0/text").and_then(Value::as_str);
        let want = format!("hello {name}");
        if r2.status != 200
            || text != Some(want.as_str())
            || result.get("isError") == Some(&Value::Bool(true))
            || result.get("resultType").and_then(Value::as_str) == Some("input_required")
        {
            break 'call Outcome::Wrong(format!(
                "round 2 (want {want:?}): HTTP {}: {}",
                r2.status,
                short(&r2.body)
            ));
        }
        Outcome::Done {
            alternated: !upstreams[0].is_empty() && upstreams[0] != upstreams[1],
        }
    };
    let mut st = lock(&s.stats);
    for u in upstreams {
        *st.upstreams.entry(u).or_default() += 1;
    }
    match outcome {
        Outcome::Done { alternated } => {
            st.completed += 1;
            st.alternated += usize::from(alternated);
            st.latencies.push(started.elapsed());
            st.wire.push(wire);
        }
        Outcome::Lost(e) => {
            st.lost += 1;
            st.first_lost.get_or_insert(e);
            s.failed.fetch_add(1, Ordering::Relaxed);
        }
        Outcome::Wrong(e) => {
            st.wrong += 1;
            st.first_wrong.get_or_insert(e);
            s.failed.fetch_add(1, Ordering::Relaxed);
        }
    }
    s.done.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

// ---------------------------------------------------------------------------------------------
// Memory

pub(crate) fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// How many sockets a process has open (its listener included).
fn sockets(pid: u32) -> Option<usize> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(
        fds.flatten()
            .filter(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|target| target.to_string_lossy().starts_with("socket:"))
            })
            .count(),
    )
}

/// One sample: seconds since the start, then VmRSS of every pid (KiB).
type Sample = (f64, Vec<Option<u64>>);

/// Samples VmRSS of the pids every `every`, until `stop`; writes CSV rows as it goes, with the
/// number of sockets each has open (a replica's memory follows its connections).
fn sampler(
    pids: Vec<(String, u32)>,
    every: Duration,
    csv: Option<String>,
    stop: Arc<AtomicBool>,
    s: Arc<Shared>,
) -> std::thread::JoinHandle<Vec<Sample>> {
    std::thread::spawn(move || {
        let mut file = csv.and_then(|p| match std::fs::File::create(&p) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("mcp-load replicas: cannot write {p}: {e}");
                None
            }
        });
        if let Some(f) = file.as_mut() {
            let cols: Vec<String> = pids.iter().map(|(l, _)| format!("{l}_rss_kib")).collect();
            let socks: Vec<String> = pids.iter().map(|(l, _)| format!("{l}_sockets")).collect();
            let _ = writeln!(f, "t_s,{},calls_done,calls_failed,{}", cols.join(","), socks.join(","));
        }
        let t0 = Instant::now();
        let mut samples = Vec::new();
        let mut sample = |samples: &mut Vec<Sample>| {
            let t = t0.elapsed().as_secs_f64();
            let row: Vec<Option<u64>> = pids.iter().map(|(_, p)| status_kib(*p, "VmRSS:")).collect();
            if let Some(f) = file.as_mut() {
                let cols: Vec<String> = row
                    .iter()
                    .map(|v| v.map(|k| k.to_string()).unwrap_or_default())
                    .collect();
                let socks: Vec<String> = pids
                    .iter()
                    .map(|(_, p)| sockets(*p).map(|n| n.to_string()).unwrap_or_default())
                    .collect();
                let _ = writeln!(
                    f,
                    "{t:.1},{},{},{},{}",
                    cols.join(","),
                    s.done.load(Ordering::Relaxed),
                    s.failed.load(Ordering::Relaxed),
                    socks.join(",")
                );
                let _ = f.flush();
            }
            samples.push((t, row));
        };
        let mut next = Duration::ZERO;
        loop {
            if t0.elapsed() >= next {
                sample(&mut samples);
                next += every;
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100).min(every));
        }
        // A last sample at the end, in the CSV too.
        sample(&mut samples);
        samples
    })
}

/// Least-squares slope of (t, kib) in KiB per minute.
fn slope_kib_per_min(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mt = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mk = points.iter().map(|p| p.1).sum::<f64>() / n;
    let num: f64 = points.iter().map(|p| (p.0 - mt) * (p.1 - mk)).sum();
    let den: f64 = points.iter().map(|p| (p.0 - mt).powi(2)).sum();
    (den > 0.0).then(|| num / den * 60.0)
}

// ---------------------------------------------------------------------------------------------
// The run

/// The `p` quantile of sorted durations in ms, rounded to 0.01; `None` for an empty series.
fn pct(sorted: &[Duration], p: f64) -> Option<f64> {
    crate::percentile(sorted, p).map(|d| (d.as_secs_f64() * 1e5).round() / 100.0)
}

pub(crate) fn main(args: &[String]) -> i32 {
    let o = parse(args);
    let timeout = o.timeout;
    std::thread::spawn(move || {
        std::thread::sleep(timeout);
        eprintln!("mcp-load replicas: timed out after {timeout:?}");
        std::process::exit(3);
    });
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-load replicas: {e}");
            return 1;
        }
    };
    match rt.block_on(run(o)) {
        Ok(ok) => i32::from(!ok),
        Err(e) => {
            eprintln!("mcp-load replicas: {e}");
            1
        }
    }
}

async fn run(o: Options) -> Result<bool, String> {
    let exp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_secs()
        + o.timeout.as_secs()
        + 3600;
    let secret = jwt::secret_from_hex(&o.secret)?;
    let tokens = (0..o.identities)
        .map(|i| {
            let claims = json!({"sub": format!("user-{i}"), "iss": "mcp-load", "aud": o.audience, "exp": exp});
            format!("Bearer {}", jwt::hs256(&secret, &claims))
        })
        .collect();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-load", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    let connections = match o.rate {
        Some(_) => o.connections.min(o.max_in_flight.max(1) * 2),
        None => o.connections.min((o.calls.max(o.warmup) * 2).max(1)),
    };
    let opened = Instant::now();
    let pool = Pool::open(&o.addr, connections).await?;
    eprintln!(
        "[{}] {connections} connections open in {:.1?}",
        o.label,
        opened.elapsed()
    );
    let s = Arc::new(Shared {
        host: o.addr.clone(),
        o,
        tokens,
        meta,
        pool,
        stats: Mutex::new(Stats::default()),
        next_id: AtomicU64::new(1),
        open: AtomicUsize::new(0),
        open_max: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
    });

    // Warm-up (not counted): every identity and both replicas.
    if s.o.warmup > 0 {
        let tasks: Vec<_> = (0..s.o.warmup).map(|i| tokio::spawn(call(s.clone(), i))).collect();
        for t in tasks {
            let _ = t.await;
        }
        let mut st = lock(&s.stats);
        if st.lost + st.wrong + st.cross_accepted > 0 {
            return Err(format!(
                "warm-up failed: lost {}, wrong {}, cross-principal accepted {}; {:?} {:?} {:?}",
                st.lost, st.wrong, st.cross_accepted, st.first_lost, st.first_wrong, st.first_cross
            ));
        }
        *st = Stats::default();
        s.open_max.store(0, Ordering::Relaxed);
        s.done.store(0, Ordering::Relaxed);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let sampling = sampler(
        s.o.pids.clone(),
        s.o.rss_every,
        s.o.rss_csv.clone(),
        stop.clone(),
        s.clone(),
    );
    let cpu_start: Vec<Option<u64>> = s.o.pids.iter().map(|(_, p)| crate::cpu_ns(*p)).collect();
    let started = Instant::now();
    let mut shed = 0usize;
    let base = s.o.warmup;
    let mut tasks = Vec::new();
    match (s.o.rate, s.o.duration) {
        (Some(rate), Some(duration)) => {
            // Soak: a new call every 1/rate s, as long as fewer than max-in-flight are open.
            let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.max(0.001)));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            let mut index = base;
            let in_flight = Arc::new(AtomicUsize::new(0));
            while started.elapsed() < duration {
                tick.tick().await;
                if in_flight.load(Ordering::Relaxed) >= s.o.max_in_flight {
                    shed += 1;
                    continue;
                }
                in_flight.fetch_add(1, Ordering::Relaxed);
                lock(&s.stats).started += 1;
                let (s2, f) = (s.clone(), in_flight.clone());
                tokio::spawn(async move {
                    call(s2, index).await;
                    f.fetch_sub(1, Ordering::Relaxed);
                });
                index += 1;
            }
            // Let the calls still open finish.
            let deadline = Instant::now() + s.o.request_timeout * 3;
            while in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        _ => {
            // Burst: every call starts now.
            lock(&s.stats).started = s.o.calls;
            for i in 0..s.o.calls {
                tasks.push(tokio::spawn(call(s.clone(), base + i)));
            }
            for t in tasks.drain(..) {
                let _ = t.await;
            }
        }
    }
    let elapsed = started.elapsed();
    let cpu_end: Vec<Option<u64>> = s.o.pids.iter().map(|(_, p)| crate::cpu_ns(*p)).collect();
    stop.store(true, Ordering::Relaxed);
    let samples = sampling.join().unwrap_or_default();
    let peaks: Vec<Option<u64>> = s.o.pids.iter().map(|(_, p)| status_kib(*p, "VmHWM:")).collect();

    let o = &s.o;
    let mut st = lock(&s.stats);
    st.latencies.sort();
    st.wire.sort();
    // Calls that started and neither finished nor failed (the soak's stragglers) are lost too.
    let unfinished = st.started.saturating_sub(st.completed + st.lost + st.wrong);
    st.lost += unfinished;
    if unfinished > 0 {
        st.first_lost
            .get_or_insert_with(|| format!("{unfinished} call(s) never finished"));
    }
    let rate = st.completed as f64 / elapsed.as_secs_f64().max(1e-9);
    let alternation = st.alternated as f64 / st.completed.max(1) as f64;

    // Memory: per process, the first, last and largest VmRSS sample, the peak (VmHWM) and the
    // slope of VmRSS over the run and over its part after the first 5 minutes.
    let mut memory = serde_json::Map::new();
    for (k, (label, pid)) in o.pids.iter().enumerate() {
        let pts: Vec<(f64, f64)> = samples
            .iter()
            .filter_map(|(t, row)| row.get(k).copied().flatten().map(|v| (*t, v as f64)))
            .collect();
        let later: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.0 >= 300.0).collect();
        memory.insert(
            label.clone(),
            json!({
                "pid": pid,
                "peak_rss_kib": peaks[k],
                // CPU time of all the process's threads over the measured calls, per completed
                // two-round call (cross-principal probes included): steadier than calls/s here.
                "cpu_us_per_call": cpu_start[k].zip(cpu_end[k]).map(|(a, b)| {
                    (b.saturating_sub(a) as f64 / 1e3 / st.completed.max(1) as f64 * 10.0).round() / 10.0
                }),
                "rss_start_kib": pts.first().map(|p| p.1),
                "rss_end_kib": pts.last().map(|p| p.1),
                "rss_max_kib": pts.iter().map(|p| p.1).fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v)))),
                "rss_slope_kib_per_min": slope_kib_per_min(&pts).map(|v| (v * 100.0).round() / 100.0),
                "rss_slope_after_5min_kib_per_min": slope_kib_per_min(&later).map(|v| (v * 100.0).round() / 100.0),
            }),
        );
    }
    let line = json!({
        "label": o.label,
        "shape": if o.rate.is_some() { "soak" } else { "burst" },
        "route": if o.route == Route::Alternate { "alternate" } else { "rr" },
        "calls": st.started,
        "completed": st.completed,
        "identities": o.identities,
        "connections": connections,
        "rate_target": o.rate,
        "shed": shed,
        "elapsed_s": (elapsed.as_secs_f64() * 100.0).round() / 100.0,
        "calls_per_s": rate.round(),
        "p50_ms": pct(&st.latencies, 0.5),
        "p99_ms": pct(&st.latencies, 0.99),
        "max_ms": pct(&st.latencies, 1.0),
        "wire_p50_ms": pct(&st.wire, 0.5),
        "wire_p99_ms": pct(&st.wire, 0.99),
        "open_between_rounds_max": s.open_max.load(Ordering::Relaxed),
        "lost": st.lost,
        "wrong": st.wrong,
        "cross_attempts": st.cross_attempts,
        "cross_refused": st.cross_refused,
        "cross_accepted": st.cross_accepted,
        "cross_lost": st.cross_lost,
        "cross_other": st.cross_other,
        "alternated": st.alternated,
        "alternation": (alternation * 10000.0).round() / 10000.0,
        "upstream_rounds": st.upstreams,
        "memory": memory,
        "first_lost": st.first_lost,
        "first_wrong": st.first_wrong,
        "first_cross": st.first_cross,
    });
    let ok = st.lost == 0
        && st.wrong == 0
        && st.cross_accepted == 0
        && st.cross_lost == 0
        && st.cross_other == 0
        && st.completed > 0;

    eprintln!(
        "[{}] {} calls, {} done in {:.1} s: {:.0} calls/s, p50 {} ms, p99 {} ms (on the wire: {} / {} ms); \
         lost {}, wrong {}, cross-principal {}/{} refused, {} accepted; rounds on different replicas {:.1}%",
        o.label,
        st.started,
        st.completed,
        elapsed.as_secs_f64(),
        rate,
        show(pct(&st.latencies, 0.5), 1),
        show(pct(&st.latencies, 0.99), 1),
        show(pct(&st.wire, 0.5), 1),
        show(pct(&st.wire, 0.99), 1),
        st.lost,
        st.wrong,
        st.cross_refused,
        st.cross_attempts,
        st.cross_accepted,
        alternation * 100.0
    );
    for (what, e) in [
        ("lost", &st.first_lost),
        ("wrong", &st.first_wrong),
        ("cross", &st.first_cross),
    ] {
        if let Some(e) = e {
            eprintln!("  first {what}: {e}");
        }
    }
    let md = markdown(&line, &samples, &o.pids);
    print!("{md}");
    let mut written = true;
    for (path, text) in [(&o.out, format!("{line}\n")), (&o.md, md)] {
        if let Some(path) = path {
            let w = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(text.as_bytes()));
            if let Err(e) = w {
                eprintln!("mcp-load replicas: cannot write {path}: {e}");
                written = false;
            }
        }
    }
    Ok(ok && written)
}

/// A figure of the results line with `decimals` decimals, or n/a when the run has none.
fn f(v: &Value, decimals: usize) -> String {
    show(v.as_f64(), decimals)
}

fn mib(v: &Value) -> String {
    v.as_f64()
        .map(|k| format!("{:.1}", k / 1024.0))
        .unwrap_or_else(|| NA.into())
}

/// The run as Markdown: one table of figures, one of memory, and for a soak the RSS every 5 min.
fn markdown(line: &Value, samples: &[Sample], pids: &[(String, u32)]) -> String {
    let mut out = String::new();
    let l = line;
    out.push_str(&format!(
        "\n### {} ({}, route {})\n\n",
        l["label"].as_str().unwrap_or(""),
        l["shape"].as_str().unwrap_or(""),
        l["route"].as_str().unwrap_or("")
    ));
    out.push_str("| calls | identities | connections | calls/s | p50 ms | p99 ms | wire p50/p99 ms | lost | wrong | cross-principal accepted / tries | rounds on different replicas |\n");
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    out.push_str(&format!(
        "| {} | {} | {} | {} | {} | {} | {} / {} | {} | {} | {} / {} | {:.1}% |\n\n",
        l["calls"],
        l["identities"],
        l["connections"],
        f(&l["calls_per_s"], 0),
        f(&l["p50_ms"], 1),
        f(&l["p99_ms"], 1),
        f(&l["wire_p50_ms"], 1),
        f(&l["wire_p99_ms"], 1),
        l["lost"],
        l["wrong"],
        l["cross_accepted"],
        l["cross_attempts"],
        l["alternation"].as_f64().unwrap_or(0.0) * 100.0
    ));
    if pids.is_empty() {
        return out;
    }
    let soak = l["shape"] == "soak";
    if soak {
        out.push_str("| process | peak RSS (VmHWM) MiB | RSS start MiB | RSS end MiB | RSS max MiB | slope KiB/min | slope after 5 min KiB/min |\n");
        out.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
    } else {
        out.push_str(
            "| process | peak RSS (VmHWM) MiB | RSS before the calls MiB | CPU µs per call |\n|---|---:|---:|---:|\n",
        );
    }
    for (label, _) in pids {
        let m = &l["memory"][label];
        if soak {
            out.push_str(&format!(
                "| {label} | {} | {} | {} | {} | {} | {} |\n",
                mib(&m["peak_rss_kib"]),
                mib(&m["rss_start_kib"]),
                mib(&m["rss_end_kib"]),
                mib(&m["rss_max_kib"]),
                f(&m["rss_slope_kib_per_min"], 2),
                f(&m["rss_slope_after_5min_kib_per_min"], 2)
            ));
        } else {
            out.push_str(&format!(
                "| {label} | {} | {} | {} |\n",
                mib(&m["peak_rss_kib"]),
                mib(&m["rss_start_kib"]),
                f(&m["cpu_us_per_call"], 1)
            ));
        }
    }
    if soak {
        out.push_str("\nVmRSS every 5 minutes (MiB):\n\n| t |");
        for (label, _) in pids {
            out.push_str(&format!(" {label} |"));
        }
        out.push_str("\n|---:|");
        out.push_str(&"---:|".repeat(pids.len()));
        out.push('\n');
        let last = samples.last().map_or(0.0, |s| s.0);
        let mut mark = 0.0;
        while mark <= last + 1e-9 {
            // The first sample at or after the mark.
            if let Some((t, row)) = samples.iter().find(|(t, _)| *t >= mark - 0.5) {
                out.push_str(&format!("| {:.0} min |", t / 60.0));
                for v in row {
                    out.push_str(&format!(
                        " {} |",
                        v.map_or(NA.into(), |k| format!("{:.1}", k as f64 / 1024.0))
                    ));
                }
                out.push('\n');
            }
            mark += 300.0;
        }
        if let Some((t, row)) = samples.last()
            && (t % 300.0) > 1.0
        {
            out.push_str(&format!("| {:.1} min (end) |", t / 60.0));
            for v in row {
                out.push_str(&format!(
                    " {} |",
                    v.map_or(NA.into(), |k| format!("{:.1}", k as f64 / 1024.0))
                ));
            }
            out.push('\n');
        }
    }
    out
}
