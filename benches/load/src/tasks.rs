//! `mcp-load tasks`: 2026-07-28 tasks through a proxy in front of server replicas that share one
//! store (see `benches/replicas.sh --tasks`).
//!
//! Every task is the `rollout` example's tool with a failing canary: task *i* rolls out service
//! `svc-i`. The `tools/call` must come back at once as a `CreateTaskResult` (`working`); the
//! driver then polls `tasks/get` (every `--poll-ms`, or the task's own `pollIntervalMs`) until the
//! task is `input_required` with exactly one question, the canary form naming `svc-i`; answers
//! it once with `tasks/update` (accept, `roll_back: true`); and polls again until the task is
//! `completed` with exactly `rolled back: svc-i stays on the previous version`, so an outcome
//! meant for another task would be caught. A task is **lost** when a request gets no answer
//! (transport error, timeout, HTTP 5xx), when the task is reported `failed` (its replica lost
//! it), or when it is not over within `--task-timeout`; **wrong** when anything else is not as
//! expected (a second question, a wrong text, a JSON-RPC error, `cancelled`). A `tasks/get` or
//! `tasks/update` answered with JSON-RPC -32603 (the server's store failed just then) is a
//! **store error**: counted, and the task polled (and its question answered) again at the next
//! poll, as a client would; a run with any fails all the same.
//!
//! Routing (`--route`): `rr` sends every request to `/mcp`, and the proxy's round-robin decides;
//! `alternate` creates even tasks through `/a` and follows them through `/b` (odd tasks the other
//! way round), so the question is always answered through the replica that does not run the
//! task. Either way, the replica that answered each request is read from `X-Upstream`.
//!
//! All `--tasks` start at once (after `--warmup` tasks that are not counted), over
//! `--connections` keep-alive connections. The CPU time of the processes given with
//! `--pid LABEL=PID` is read before and after, and divided by the completed tasks.

use crate::replicas::{Pool, lock, short, status_kib};
use crate::report::show;
use bytes::Bytes;
use http_body_util::Full;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PROTOCOL: &str = "2026-07-28";
const TOOL: &str = "rollout";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Route {
    RoundRobin,
    Alternate,
}

struct Options {
    label: String,
    addr: String,
    tasks: usize,
    warmup: usize,
    connections: usize,
    route: Route,
    step_ms: u64,
    poll: Option<Duration>,
    pids: Vec<(String, u32)>,
    request_timeout: Duration,
    task_timeout: Duration,
    timeout: Duration,
    out: Option<String>,
    md: Option<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: mcp-load tasks --addr HOST:PORT [--label L] [--tasks N] [--warmup N] [--connections C]\n\
         \x20      [--route rr|alternate] [--step-ms MS] [--poll-ms MS] [--pid LABEL=PID]...\n\
         \x20      [--request-timeout SECS] [--task-timeout SECS] [--timeout SECS] [--out FILE.jsonl] [--md FILE.md]\n\
         --poll-ms defaults to each task's pollIntervalMs."
    );
    std::process::exit(2)
}

fn parse(args: &[String]) -> Options {
    let mut o = Options {
        label: "tasks".into(),
        addr: String::new(),
        tasks: 1000,
        warmup: 20,
        connections: 256,
        route: Route::RoundRobin,
        step_ms: 20,
        poll: None,
        pids: Vec::new(),
        request_timeout: Duration::from_secs(60),
        task_timeout: Duration::from_secs(300),
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
            "--tasks" | "-n" => o.tasks = val().parse().unwrap_or_else(|_| usage()),
            "--warmup" => o.warmup = val().parse().unwrap_or_else(|_| usage()),
            "--connections" => o.connections = val().parse().unwrap_or_else(|_| usage()),
            "--route" => {
                o.route = match val().as_str() {
                    "rr" => Route::RoundRobin,
                    "alternate" => Route::Alternate,
                    _ => usage(),
                }
            }
            "--step-ms" => o.step_ms = val().parse().unwrap_or_else(|_| usage()),
            "--poll-ms" => o.poll = Some(Duration::from_millis(val().parse().unwrap_or_else(|_| usage()))),
            "--pid" => {
                let v = val();
                let (label, pid) = v.split_once('=').unwrap_or_else(|| usage());
                o.pids
                    .push((label.to_string(), pid.parse().unwrap_or_else(|_| usage())));
            }
            "--request-timeout" => o.request_timeout = secs(val()),
            "--task-timeout" => o.task_timeout = secs(val()),
            "--timeout" => o.timeout = secs(val()),
            "--out" => o.out = Some(val()),
            "--md" => o.md = Some(val()),
            _ => usage(),
        }
    }
    if o.addr.is_empty() || o.connections == 0 || o.tasks == 0 {
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

impl Reply {
    fn result(&self) -> &Value {
        self.body.get("result").unwrap_or(&Value::Null)
    }
}

struct Shared {
    o: Options,
    meta: Value,
    pool: Arc<Pool>,
    stats: Mutex<Stats>,
    next_id: AtomicU64,
    /// Tasks created and not yet over (as the driver last saw them): now, and at most.
    open: AtomicUsize,
    open_max: AtomicUsize,
}

impl Shared {
    /// One POST on a pooled connection. `Err` is a request with no answer: a transport error, a
    /// timeout or an HTTP 5xx (a broken connection is opened again for the next request).
    async fn post(&self, path: &str, method: &str, name: &str, mut params: Value) -> Result<Reply, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        params["_meta"] = self.meta.clone();
        let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .unwrap_or_default();
        let mut conn = self.pool.take().await;
        let result = tokio::time::timeout(
            self.o.request_timeout,
            self.send(&mut conn.send, path, method, name, id, body),
        )
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {:?}", self.o.request_timeout)));
        if result.is_err() {
            conn.send = None;
        }
        self.pool.give(conn);
        let reply = result.map_err(|e| format!("{method}: {e}"))?;
        {
            let mut st = lock(&self.stats);
            st.requests += 1;
            *st.upstreams.entry(reply.upstream.clone()).or_default() += 1;
        }
        if reply.status >= 500 {
            return Err(format!(
                "{method}: HTTP {} from {:?}: {}",
                reply.status,
                reply.upstream,
                short(&reply.body)
            ));
        }
        Ok(reply)
    }

    async fn send(
        &self,
        send: &mut Option<hyper::client::conn::http1::SendRequest<Full<Bytes>>>,
        path: &str,
        method: &str,
        name: &str,
        id: u64,
        body: Vec<u8>,
    ) -> Result<Reply, String> {
        if send.as_ref().is_none_or(|s| s.is_closed()) {
            *send = Some(crate::wire::http::connect(&self.o.addr).await?);
        }
        let Some(send) = send.as_mut() else {
            return Err("no connection".into());
        };
        let req = hyper::Request::post(path)
            .header("host", &self.o.addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL)
            .header("mcp-method", method)
            .header("mcp-name", name)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        send.ready().await.map_err(|e| format!("connection: {e}"))?;
        let resp = send.send_request(req).await.map_err(|e| format!("send: {e}"))?;
        let status = resp.status().as_u16();
        let upstream = resp
            .headers()
            .get("x-upstream")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let bytes = crate::wire::http::body_bytes(resp).await?;
        let body: Value = serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)));
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
// Tasks

#[derive(Default)]
struct Stats {
    started: usize,
    completed: usize,
    lost: usize,
    wrong: usize,
    /// Questions the tasks asked (one each is expected) and answers the driver gave.
    questions: usize,
    answers: usize,
    /// Tasks whose answer was taken by the other replica than the one that created the task.
    answered_elsewhere: usize,
    polls: usize,
    /// `tasks/get` or `tasks/update` answered with -32603 (tried again at the next poll).
    store_errors: usize,
    requests: usize,
    /// Replica (X-Upstream) → requests it answered.
    upstreams: BTreeMap<String, usize>,
    /// From the `tools/call` to the `tasks/get` that saw the task completed.
    latencies: Vec<Duration>,
    /// From the `tools/call` to the `tasks/get` that saw its question.
    until_question: Vec<Duration>,
    /// From the `tasks/update` to the `tasks/get` that saw the task completed.
    after_answer: Vec<Duration>,
    /// The `tools/call` alone (the CreateTaskResult).
    create: Vec<Duration>,
    first_lost: Option<String>,
    first_wrong: Option<String>,
    first_store_error: Option<String>,
}

enum Outcome {
    Done {
        elsewhere: bool,
        until_question: Duration,
        after_answer: Duration,
        create: Duration,
    },
    Lost(String),
    Wrong(String),
}

/// The one question of an `input_required` task: its key, checked to be the canary form of
/// `service`.
fn the_question(view: &Value, service: &str) -> Result<String, String> {
    let asks = view
        .get("inputRequests")
        .and_then(Value::as_object)
        .filter(|a| a.len() == 1)
        .ok_or_else(|| format!("not one question: {}", short(view)))?;
    let (key, ask) = asks.iter().next().ok_or("no question")?;
    let message = ask.pointer("/params/message").and_then(Value::as_str).unwrap_or("");
    if ask.get("method").and_then(Value::as_str) != Some("elicitation/create")
        || !message.contains(&format!("The canary of {service} failed"))
        || ask.pointer("/params/requestedSchema/properties/roll_back").is_none()
    {
        return Err(format!("not the canary form of {service}: {}", short(ask)));
    }
    Ok(key.clone())
}

async fn task(s: Arc<Shared>, index: usize) {
    let service = format!("svc-{index}");
    let want = format!("rolled back: {service} stays on the previous version");
    let (first, rest) = match s.o.route {
        Route::RoundRobin => ("/mcp", "/mcp"),
        Route::Alternate if index.is_multiple_of(2) => ("/a", "/b"),
        Route::Alternate => ("/b", "/a"),
    };
    let started = Instant::now();
    let mut polls = 0usize;
    let mut store_errors = 0usize;
    let mut seen: Option<(String, Duration)> = None;
    // An answer whose tasks/update got -32603: it may have landed all the same.
    let mut tried: Option<(Instant, Duration, String)> = None;
    let mut last = Value::Null;
    let mut questions = 0usize;
    let mut answers = 0usize;
    let mut opened = false;
    let outcome = 'task: {
        let params =
            json!({"name": TOOL, "arguments": {"service": service, "canary_fails": true, "step_ms": s.o.step_ms}});
        let created = match s.post(first, "tools/call", TOOL, params).await {
            Ok(r) => r,
            Err(e) => break 'task Outcome::Lost(format!("create: {e}")),
        };
        let create = started.elapsed();
        let t = created.result();
        let id = match t.get("taskId").and_then(Value::as_str) {
            Some(id) if created.status == 200 && t["resultType"] == "task" && t["status"] == "working" => {
                id.to_string()
            }
            _ => {
                break 'task Outcome::Wrong(format!(
                    "create: not a working task: HTTP {}: {}",
                    created.status,
                    short(&created.body)
                ));
            }
        };
        let now_open = s.open.fetch_add(1, Ordering::Relaxed) + 1;
        s.open_max.fetch_max(now_open, Ordering::Relaxed);
        opened = true;
        let every = s
            .o
            .poll
            .unwrap_or_else(|| Duration::from_millis(t.get("pollIntervalMs").and_then(Value::as_u64).unwrap_or(1000)));
        let mut answered_at: Option<(Instant, Duration)> = None;
        let mut elsewhere = false;
        loop {
            if started.elapsed() > s.o.task_timeout {
                break 'task Outcome::Lost(format!(
                    "task {id} ({service}) not over within {:?}; last seen: {}",
                    s.o.task_timeout,
                    short(&last)
                ));
            }
            tokio::time::sleep(every).await;
            polls += 1;
            let got = match s.post(rest, "tasks/get", &id, json!({"taskId": id})).await {
                Ok(r) => r,
                Err(e) => break 'task Outcome::Lost(format!("task {id}: {e}")),
            };
            if got.body.pointer("/error/code") == Some(&json!(-32603)) {
                // The server could not read the task just then: poll again, as a client would.
                store_errors += 1;
                lock(&s.stats)
                    .first_store_error
                    .get_or_insert_with(|| format!("tasks/get {id}: HTTP {}: {}", got.status, short(&got.body)));
                continue;
            }
            let view = got.result();
            if got.status != 200 || view.get("taskId").and_then(Value::as_str) != Some(id.as_str()) {
                break 'task Outcome::Wrong(format!("tasks/get {id}: HTTP {}: {}", got.status, short(&got.body)));
            }
            last = view.clone();
            let status = view.get("status").and_then(Value::as_str).unwrap_or("");
            if status != "input_required"
                && answered_at.is_none()
                && let Some((at, until_question, upstream)) = tried.take()
            {
                // The answer that got -32603 had been taken: the question is gone.
                answers += 1;
                elsewhere = !upstream.is_empty() && upstream != created.upstream;
                answered_at = Some((at, until_question));
            }
            match status {
                "working" => {}
                "input_required" => {
                    if answered_at.is_some() {
                        questions += 1;
                        break 'task Outcome::Wrong(format!("task {id} asked again: {}", short(view)));
                    }
                    let key = match the_question(view, &service) {
                        Ok(k) => k,
                        Err(e) => break 'task Outcome::Wrong(format!("task {id}: {e}")),
                    };
                    // The same question seen again after an answer the server could not take.
                    if seen.as_ref().is_none_or(|(k, _)| *k != key) {
                        questions += 1;
                        seen = Some((key.clone(), started.elapsed()));
                    }
                    let until_question = seen.as_ref().map_or_else(|| started.elapsed(), |(_, t)| *t);
                    let responses = json!({ key: {"action": "accept", "content": {"roll_back": true}} });
                    let update = json!({"taskId": id, "inputResponses": responses});
                    let r = match s.post(rest, "tasks/update", &id, update).await {
                        Ok(r) => r,
                        Err(e) => break 'task Outcome::Lost(format!("task {id}: {e}")),
                    };
                    if r.body.pointer("/error/code") == Some(&json!(-32603)) {
                        store_errors += 1;
                        lock(&s.stats)
                            .first_store_error
                            .get_or_insert_with(|| format!("tasks/update {id}: HTTP {}: {}", r.status, short(&r.body)));
                        tried = Some((Instant::now(), until_question, r.upstream.clone()));
                        continue;
                    }
                    if r.status != 200 || r.result().get("resultType").and_then(Value::as_str) != Some("complete") {
                        break 'task Outcome::Wrong(format!(
                            "tasks/update {id}: HTTP {}: {}",
                            r.status,
                            short(&r.body)
                        ));
                    }
                    answers += 1;
                    elsewhere = !r.upstream.is_empty() && r.upstream != created.upstream;
                    answered_at = Some((Instant::now(), until_question));
                }
                "completed" => {
                    let text = view.pointer("/result/content/0/text").and_then(Value::as_str);
                    if view.pointer("/result/isError") == Some(&Value::Bool(true)) {
                        break 'task Outcome::Wrong(format!(
                            "task {id} completed with an error result ({} question(s) seen): {}",
                            questions,
                            short(view)
                        ));
                    }
                    let Some((answered, until_question)) = answered_at else {
                        break 'task Outcome::Wrong(format!("task {id} completed without asking: {}", short(view)));
                    };
                    if text != Some(want.as_str()) {
                        break 'task Outcome::Wrong(format!("task {id} (want {want:?}): {}", short(view)));
                    }
                    break 'task Outcome::Done {
                        elsewhere,
                        until_question,
                        after_answer: answered.elapsed(),
                        create,
                    };
                }
                "failed" => break 'task Outcome::Lost(format!("task {id} failed: {}", short(view))),
                other => break 'task Outcome::Wrong(format!("task {id} {other}: {}", short(view))),
            }
        }
    };
    if opened {
        s.open.fetch_sub(1, Ordering::Relaxed);
    }
    let mut st = lock(&s.stats);
    st.polls += polls;
    st.store_errors += store_errors;
    st.questions += questions;
    st.answers += answers;
    match outcome {
        Outcome::Done {
            elsewhere,
            until_question,
            after_answer,
            create,
        } => {
            st.completed += 1;
            st.answered_elsewhere += usize::from(elsewhere);
            st.latencies.push(started.elapsed());
            st.until_question.push(until_question);
            st.after_answer.push(after_answer);
            st.create.push(create);
        }
        Outcome::Lost(e) => {
            st.lost += 1;
            st.first_lost.get_or_insert(e);
        }
        Outcome::Wrong(e) => {
            st.wrong += 1;
            st.first_wrong.get_or_insert(e);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The run

/// The `p` quantile of sorted durations in ms, rounded to 0.1; `None` for an empty series.
fn pct(sorted: &[Duration], p: f64) -> Option<f64> {
    crate::percentile(sorted, p).map(|d| (d.as_secs_f64() * 1e4).round() / 10.0)
}

pub(crate) fn main(args: &[String]) -> i32 {
    let o = parse(args);
    let timeout = o.timeout;
    std::thread::spawn(move || {
        std::thread::sleep(timeout);
        eprintln!("mcp-load tasks: timed out after {timeout:?}");
        std::process::exit(3);
    });
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-load tasks: {e}");
            return 1;
        }
    };
    match rt.block_on(run(o)) {
        Ok(ok) => i32::from(!ok),
        Err(e) => {
            eprintln!("mcp-load tasks: {e}");
            1
        }
    }
}

async fn run(o: Options) -> Result<bool, String> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-load", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    let connections = o.connections.min(o.tasks.max(o.warmup).max(1));
    let opened = Instant::now();
    let pool = Pool::open(&o.addr, connections).await?;
    eprintln!(
        "[{}] {connections} connections open in {:.1?}",
        o.label,
        opened.elapsed()
    );
    let s = Arc::new(Shared {
        o,
        meta,
        pool,
        stats: Mutex::new(Stats::default()),
        next_id: AtomicU64::new(1),
        open: AtomicUsize::new(0),
        open_max: AtomicUsize::new(0),
    });

    // Warm-up (not counted): both replicas, the store's connections.
    if s.o.warmup > 0 {
        let warm: Vec<_> = (0..s.o.warmup).map(|i| tokio::spawn(task(s.clone(), i))).collect();
        for t in warm {
            let _ = t.await;
        }
        let mut st = lock(&s.stats);
        if st.lost + st.wrong > 0 {
            return Err(format!(
                "warm-up failed: lost {}, wrong {}; {:?} {:?}",
                st.lost, st.wrong, st.first_lost, st.first_wrong
            ));
        }
        *st = Stats::default();
        s.open_max.store(0, Ordering::Relaxed);
    }

    let rss_before: Vec<Option<u64>> = s.o.pids.iter().map(|(_, p)| status_kib(*p, "VmRSS:")).collect();
    let cpu_start: Vec<Option<u64>> = s.o.pids.iter().map(|(_, p)| crate::cpu_ns(*p)).collect();
    let started = Instant::now();
    lock(&s.stats).started = s.o.tasks;
    let base = s.o.warmup;
    let all: Vec<_> = (0..s.o.tasks)
        .map(|i| tokio::spawn(task(s.clone(), base + i)))
        .collect();
    for t in all {
        let _ = t.await;
    }
    let elapsed = started.elapsed();
    let cpu_end: Vec<Option<u64>> = s.o.pids.iter().map(|(_, p)| crate::cpu_ns(*p)).collect();
    let peaks: Vec<Option<u64>> = s.o.pids.iter().map(|(_, p)| status_kib(*p, "VmHWM:")).collect();

    let o = &s.o;
    let mut guard = lock(&s.stats);
    let st = &mut *guard;
    for v in [
        &mut st.latencies,
        &mut st.until_question,
        &mut st.after_answer,
        &mut st.create,
    ] {
        v.sort();
    }
    // Tasks that neither finished nor failed (a panicked driver task) are lost too.
    let unfinished = st.started.saturating_sub(st.completed + st.lost + st.wrong);
    st.lost += unfinished;
    if unfinished > 0 {
        st.first_lost
            .get_or_insert_with(|| format!("{unfinished} task(s) never finished"));
    }
    let rate = st.completed as f64 / elapsed.as_secs_f64().max(1e-9);
    let per_task = |n: usize| (n as f64 / st.started.max(1) as f64 * 100.0).round() / 100.0;
    let mut processes = serde_json::Map::new();
    for (k, (label, pid)) in o.pids.iter().enumerate() {
        processes.insert(
            label.clone(),
            json!({
                "pid": pid,
                "peak_rss_kib": peaks[k],
                "rss_before_kib": rss_before[k],
                // CPU time of all the process's threads over the measured tasks, per completed
                // task (its create, polls, answer, body, lease renewals and answer polls).
                "cpu_us_per_task": cpu_start[k].zip(cpu_end[k]).map(|(a, b)| {
                    (b.saturating_sub(a) as f64 / 1e3 / st.completed.max(1) as f64 * 10.0).round() / 10.0
                }),
            }),
        );
    }
    let line = json!({
        "label": o.label,
        "workload": "tasks",
        "route": if o.route == Route::Alternate { "alternate" } else { "rr" },
        "tasks": st.started,
        "completed": st.completed,
        "lost": st.lost,
        "wrong": st.wrong,
        "questions": st.questions,
        "answers": st.answers,
        "answered_elsewhere": st.answered_elsewhere,
        "connections": connections,
        "step_ms": o.step_ms,
        "poll_ms": o.poll.map(|p| p.as_millis() as u64),
        "elapsed_s": (elapsed.as_secs_f64() * 100.0).round() / 100.0,
        "tasks_per_s": (rate * 10.0).round() / 10.0,
        "p50_ms": pct(&st.latencies, 0.5),
        "p90_ms": pct(&st.latencies, 0.9),
        "p99_ms": pct(&st.latencies, 0.99),
        "max_ms": pct(&st.latencies, 1.0),
        "question_p50_ms": pct(&st.until_question, 0.5),
        "question_p99_ms": pct(&st.until_question, 0.99),
        "after_answer_p50_ms": pct(&st.after_answer, 0.5),
        "after_answer_p99_ms": pct(&st.after_answer, 0.99),
        "create_p50_ms": pct(&st.create, 0.5),
        "create_p99_ms": pct(&st.create, 0.99),
        "open_max": s.open_max.load(Ordering::Relaxed),
        "polls_per_task": per_task(st.polls),
        "store_errors": st.store_errors,
        "requests_per_task": per_task(st.requests),
        "upstream_requests": st.upstreams,
        "processes": processes,
        "first_lost": st.first_lost,
        "first_wrong": st.first_wrong,
        "first_store_error": st.first_store_error,
    });
    let ok = st.lost == 0
        && st.wrong == 0
        && st.completed == st.started
        && st.questions == st.completed
        && st.answers == st.completed
        && st.store_errors == 0;

    eprintln!(
        "[{}] {} tasks, {} completed in {:.1} s: {:.1} tasks/s, p50 {} ms, p99 {} ms; \
         questions {}, answers {} ({} through the other replica); lost {}, wrong {}, store errors {}",
        o.label,
        st.started,
        st.completed,
        elapsed.as_secs_f64(),
        rate,
        show(pct(&st.latencies, 0.5), 0),
        show(pct(&st.latencies, 0.99), 0),
        st.questions,
        st.answers,
        st.answered_elsewhere,
        st.lost,
        st.wrong,
        st.store_errors,
    );
    for (what, e) in [
        ("lost", &st.first_lost),
        ("wrong", &st.first_wrong),
        ("store error", &st.first_store_error),
    ] {
        if let Some(e) = e {
            eprintln!("  first {what}: {e}");
        }
    }
    let md = markdown(&line, &o.pids);
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
                eprintln!("mcp-load tasks: cannot write {path}: {e}");
                written = false;
            }
        }
    }
    Ok(ok && written)
}

fn f(v: &Value, decimals: usize) -> String {
    show(v.as_f64(), decimals)
}

/// The run as Markdown: one table of figures, one per process.
fn markdown(l: &Value, pids: &[(String, u32)]) -> String {
    let mut out = format!(
        "\n### {} (tasks, route {})\n\n",
        l["label"].as_str().unwrap_or(""),
        l["route"].as_str().unwrap_or("")
    );
    out.push_str("| tasks | step ms | poll ms | tasks/s | completion p50 / p90 / p99 / max ms | question seen p50 ms | answer to completed p50 ms | requests per task | answered through the other replica | lost | wrong | store errors (-32603, retried) |\n");
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    out.push_str(&format!(
        "| {} | {} | {} | {} | {} / {} / {} / {} | {} | {} | {} | {} of {} | {} | {} | {} |\n\n",
        l["tasks"],
        l["step_ms"],
        l["poll_ms"]
            .as_u64()
            .map_or_else(|| "task's".to_string(), |p| p.to_string()),
        f(&l["tasks_per_s"], 1),
        f(&l["p50_ms"], 0),
        f(&l["p90_ms"], 0),
        f(&l["p99_ms"], 0),
        f(&l["max_ms"], 0),
        f(&l["question_p50_ms"], 0),
        f(&l["after_answer_p50_ms"], 0),
        f(&l["requests_per_task"], 1),
        l["answered_elsewhere"],
        l["completed"],
        l["lost"],
        l["wrong"],
        l["store_errors"],
    ));
    if pids.is_empty() {
        return out;
    }
    out.push_str(
        "| process | peak RSS (VmHWM) MiB | RSS before the tasks MiB | CPU µs per task |\n|---|---:|---:|---:|\n",
    );
    let mib = |v: &Value| {
        v.as_f64()
            .map_or_else(|| crate::report::NA.to_string(), |k| format!("{:.1}", k / 1024.0))
    };
    for (label, _) in pids {
        let m = &l["processes"][label];
        out.push_str(&format!(
            "| {label} | {} | {} | {} |\n",
            mib(&m["peak_rss_kib"]),
            mib(&m["rss_before_kib"]),
            f(&m["cpu_us_per_task"], 1)
        ));
    }
    out
}
