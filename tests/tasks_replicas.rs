//! Tasks across replicas: two `rollout` replicas (release, every feature) sharing one state key
//! and one Redis (`MCP_RESOLVE_REDIS_URL`, a `redis-server` of the test's own), directly on their
//! ports and behind nginx doing round-robin, spoken to on 2026-07-28 with the tasks extension.
//! A task created through one replica is answered through the other and read, `completed` with
//! the same result, through either and through nginx; the same through round-robin alone, every
//! request on the other replica than the one before; a cancellation through one replica holds on
//! the other; and a task whose replica dies (lease 1 s) is reported `failed` by the survivor
//! within seconds, never left `working` or `input_required`.
//!
//! Not here: another caller cannot see a task. That needs the replicas to know their callers
//! (bearer tokens, as `tests/scale_out.rs` gives `notes`), and `rollout` takes no
//! `MCP_RESOLVE_JWT_SECRET`; the owner check itself is `tasks::tests::another_callers_task_is_not_found`.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::{HttpChild, RedisServer};

/// One state key shared by both replicas: 32 random bytes in base64 (fixed here so a failure
/// reproduces; never deployed).
const STATE_KEY: &str = "k8Qm0v3Rr6yq1TzW5c2nXo7bHd4sLf9aJ0eUp6iVw1M=";
/// The text of a rollout whose failed canary was rolled back.
const ROLLED_BACK: &str = "rolled back: api stays on the previous version";

fn root() -> PathBuf {
    PathBuf::from(support::MANIFEST_DIR)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} does not listen on {port} within 20 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Two replicas sharing one Redis and one state key (and `env`, e.g. a short task lease), and
/// the Redis.
struct Replicas {
    a: HttpChild,
    b: HttpChild,
    _redis: RedisServer,
}

impl Replicas {
    fn start(env: &[(&str, &str)]) -> Self {
        let redis = RedisServer::start();
        let mut vars: Vec<(String, String)> = vec![
            ("MCP_RESOLVE_STATE_KEY".into(), STATE_KEY.into()),
            ("MCP_RESOLVE_REDIS_URL".into(), redis.url()),
            ("RUST_LOG".into(), "warn".into()),
        ];
        vars.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let make = |_: std::net::SocketAddr| vars.clone();
        let a = HttpChild::start(support::rollout_bin(), "rollout replica A", &make);
        let b = HttpChild::start(support::rollout_bin(), "rollout replica B", &make);
        Self { a, b, _redis: redis }
    }

    fn a(&self) -> u16 {
        self.a.addr.port()
    }

    fn b(&self) -> u16 {
        self.b.addr.port()
    }

    /// Both replicas' stderr, for a failure message.
    fn logs(&self) -> String {
        format!(
            "--- replica A stderr ---\n{}\n--- replica B stderr ---\n{}",
            support::text_of(&self.a.stderr),
            support::text_of(&self.b.stderr)
        )
    }
}

/// nginx in front of both replicas (tests/interop/nginx: one process, so requests alternate
/// strictly between the replicas; a fresh upstream connection per request; `X-Upstream` names
/// the replica that answered).
fn nginx(r: &Replicas, name: &str) -> (Proc, u16) {
    let listen = free_port();
    let work = tempdir(name);
    let child = Command::new("bash")
        .arg(root().join("tests/interop/nginx/run.sh"))
        .args([r.a().to_string(), r.b().to_string(), listen.to_string()])
        .arg(&work)
        .env("NGINX_BIN", support::nginx())
        .env_remove("NGINX")
        .stdin(Stdio::null())
        .spawn()
        .expect("nginx starts");
    let proc = Proc(child);
    wait_for_port(listen, "nginx");
    (proc, listen)
}

fn tempdir(name: &str) -> PathBuf {
    let target = std::env::var("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir());
    let dir = target.join(format!("{name}-{}-{}", std::process::id(), free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a POST came back with.
#[derive(Debug)]
struct Reply {
    status: u16,
    /// `X-Upstream` (through nginx): the replica that answered; empty when direct.
    upstream: String,
    body: Value,
}

impl Reply {
    fn result(&self) -> &Value {
        &self.body["result"]
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One 2026-07-28 request to 127.0.0.1:`port`, with the `_meta` envelope (elicitation and the
/// tasks extension declared) and the `Mcp-Method` / `Mcp-Name` headers. Like `support::http`
/// (one request, `Connection: close`, reads bounded at 10 s), but it keeps `X-Upstream`.
fn rpc(port: u16, method: &str, name: &str, mut params: Value) -> Reply {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let fail = |e: std::io::Error| -> ! { panic!("{method} {name} on 127.0.0.1:{port}: {e}") };
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|e| fail(e));
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap_or_else(|e| fail(e));
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n\
         Mcp-Name: {name}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap_or_else(|e| fail(e));
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap_or_else(|e| fail(e));
    let (head, text) = raw.split_once("\r\n\r\n").unwrap_or((raw.as_str(), ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let upstream = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("x-upstream").then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    let body = serde_json::from_str(text).unwrap_or_else(|_| json!(text));
    Reply { status, upstream, body }
}

/// `tools/call rollout` for `service` with a failing canary, `step_ms` per step: must come back
/// at once as a task that is `working`. Returns the reply and the task id.
fn create(port: u16, service: &str, step_ms: u64) -> (Reply, String) {
    let r = rpc(
        port,
        "tools/call",
        "rollout",
        json!({"name": "rollout", "arguments": {"service": service, "canary_fails": true, "step_ms": step_ms}}),
    );
    let t = r.result();
    assert_eq!(r.status, 200, "tools/call rollout through {port}: {r:?}");
    assert_eq!(t["resultType"], "task", "a CreateTaskResult: {r:?}");
    assert_eq!(t["status"], "working", "{r:?}");
    for field in ["createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"] {
        assert!(!t[field].is_null(), "CreateTaskResult has {field}: {r:?}");
    }
    let id = t["taskId"].as_str().expect("a taskId").to_string();
    (r, id)
}

fn get(port: u16, id: &str) -> Reply {
    let r = rpc(port, "tasks/get", id, json!({"taskId": id}));
    assert_eq!(r.status, 200, "tasks/get {id} through {port}: {r:?}");
    assert_eq!(r.result()["taskId"], id, "{r:?}");
    r
}

/// Polls `tasks/get` through `port` every 50 ms until the task's status is `want`; fails after
/// `within`, naming what it waited for and what it saw last. `seen` gets every reply.
fn wait_for(port: u16, id: &str, want: &str, within: Duration, seen: &mut Vec<Reply>) -> Value {
    let started = Instant::now();
    loop {
        let r = get(port, id);
        let status = r.result()["status"].as_str().unwrap_or("").to_string();
        let result = r.result().clone();
        seen.push(r);
        if status == want {
            return result;
        }
        assert!(
            !matches!(status.as_str(), "completed" | "failed" | "cancelled"),
            "task {id} ended {status} through {port} while waiting for {want}: {result}"
        );
        assert!(
            started.elapsed() < within,
            "task {id} not {want} through {port} within {within:?}; last seen {status}: {result}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The one question of an `input_required` task: its key, checked to be the canary form.
fn the_question(view: &Value, service: &str) -> String {
    let asks = view["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(asks.len(), 1, "one question: {view}");
    let (key, ask) = asks.iter().next().unwrap();
    assert_eq!(ask["method"], "elicitation/create", "{view}");
    let message = ask["params"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains(&format!("The canary of {service} failed")),
        "the canary question: {view}"
    );
    assert!(
        ask["params"]["requestedSchema"]["properties"]["roll_back"].is_object(),
        "{view}"
    );
    key.clone()
}

/// `tasks/update` accepting `roll_back: true` for question `key`.
fn roll_back(port: u16, id: &str, key: &str) -> Reply {
    let r = rpc(
        port,
        "tasks/update",
        id,
        json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"roll_back": true}}}}),
    );
    assert_eq!(r.status, 200, "tasks/update {id} through {port}: {r:?}");
    assert_eq!(r.result()["resultType"], "complete", "{r:?}");
    r
}

/// The outcome of a completed task: not an error, and its text.
fn completed_text(view: &Value) -> String {
    assert_eq!(view["status"], "completed", "{view}");
    assert_eq!(view["result"]["isError"], false, "{view}");
    view["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {view}"))
        .to_string()
}

#[test]
fn a_task_created_on_one_replica_is_answered_on_the_other_and_read_everywhere() {
    let started = Instant::now();
    let r = Replicas::start(&[]);
    let (_proxy, listen) = nginx(&r, "tasks-across");
    let (a, b) = (r.a(), r.b());

    let (_, id) = create(a, "api", 100);
    // B sees the task A runs, and its question once A asks it.
    let asking = wait_for(b, &id, "input_required", Duration::from_secs(10), &mut Vec::new());
    let key = the_question(&asking, "api");
    // A sees the same question.
    let on_a = get(a, &id);
    assert_eq!(on_a.result()["status"], "input_required", "{on_a:?}");
    assert_eq!(on_a.result()["inputRequests"], asking["inputRequests"], "{on_a:?}");

    roll_back(b, &id, &key);
    // The body on A takes the answer B stored, rolls back, and stores its outcome.
    let done = wait_for(a, &id, "completed", Duration::from_secs(10), &mut Vec::new());
    assert_eq!(completed_text(&done), ROLLED_BACK, "{}", r.logs());

    // The same outcome through A, through B and through nginx (both replicas in turn).
    let mut upstreams = std::collections::BTreeSet::new();
    for (port, through) in [(a, "A"), (b, "B"), (listen, "nginx"), (listen, "nginx")] {
        let got = get(port, &id);
        assert_eq!(completed_text(got.result()), ROLLED_BACK, "through {through}: {got:?}");
        assert_eq!(got.result()["result"], done["result"], "through {through}: {got:?}");
        if port == listen {
            upstreams.insert(got.upstream);
        }
    }
    assert_eq!(
        upstreams.len(),
        2,
        "nginx sent the reads to both replicas: {upstreams:?}"
    );
    eprintln!("a task across two replicas and Redis: {:.1?}", started.elapsed());
}

#[test]
fn a_task_followed_through_round_robin_completes_with_requests_on_both_replicas() {
    let r = Replicas::start(&[]);
    let (_proxy, listen) = nginx(&r, "tasks-rr");

    let (created, id) = create(listen, "api", 100);
    let creator = created.upstream.clone();
    assert!(!creator.is_empty(), "X-Upstream on the creation: {created:?}");
    let mut seen = Vec::new();
    let asking = wait_for(listen, &id, "input_required", Duration::from_secs(10), &mut seen);
    let key = the_question(&asking, "api");
    // One process of nginx alternates strictly: when the last read came from the other replica,
    // the next request would reach the creator, so one more read goes there first and the
    // answer lands on the replica that does not run the task.
    if seen.last().is_some_and(|s| s.upstream != creator) {
        seen.push(get(listen, &id));
    }
    let update = roll_back(listen, &id, &key);
    assert_ne!(
        update.upstream, creator,
        "the answer went to the replica that does not run the task"
    );
    let mut after = Vec::new();
    let done = wait_for(listen, &id, "completed", Duration::from_secs(10), &mut after);
    assert_eq!(completed_text(&done), ROLLED_BACK, "{}", r.logs());
    // Both replicas report it completed, with the same result.
    let last = get(listen, &id);
    assert_eq!(last.result()["result"], done["result"], "{last:?}");
    after.push(last);

    let mut order = vec![created.upstream.clone()];
    order.extend(seen.iter().map(|s| s.upstream.clone()));
    order.push(update.upstream.clone());
    order.extend(after.iter().map(|s| s.upstream.clone()));
    let replicas: std::collections::BTreeSet<&String> = order.iter().collect();
    assert_eq!(replicas.len(), 2, "requests reached both replicas: {order:?}");
    assert!(
        order.windows(2).all(|w| w[0] != w[1]),
        "every request went to the other replica than the one before: {order:?}"
    );
    assert!(
        after.iter().filter(|s| s.result()["status"] == "completed").count() >= 2,
        "completed seen through both replicas: {order:?}"
    );
}

#[test]
fn a_task_cancelled_through_one_replica_stays_cancelled_on_the_other() {
    let r = Replicas::start(&[]);
    let (a, b) = (r.a(), r.b());
    // Long steps: the body on A is still deploying when B cancels.
    let (_, id) = create(a, "api", 2000);
    let c = rpc(b, "tasks/cancel", &id, json!({"taskId": id}));
    assert_eq!(c.status, 200, "tasks/cancel through B: {c:?}");
    assert_eq!(c.result()["resultType"], "complete", "{c:?}");
    for port in [a, b] {
        let got = get(port, &id);
        assert_eq!(got.result()["status"], "cancelled", "{got:?}");
    }
    // The body on A would have asked after two steps (4 s): the task stays cancelled, with
    // neither a question nor an outcome.
    std::thread::sleep(Duration::from_millis(4500));
    let later = get(a, &id);
    assert_eq!(later.result()["status"], "cancelled", "{later:?}\n{}", r.logs());
    assert!(later.result()["inputRequests"].is_null(), "{later:?}");
    assert!(later.result()["result"].is_null(), "{later:?}");
}

/// Lease 1 s on both replicas: the replica running a task vouches for it every third of that.
const LEASE: [(&str, &str); 1] = [("MCP_RESOLVE_TASK_LEASE_MS", "1000")];

/// Kills replica A (which runs task `id`), then polls B every 50 ms: the task must be `failed`,
/// with an error saying why, within 5 s, and never `completed` on the way. Returns how long it
/// took.
fn survivor_reports_failed(r: &mut Replicas, id: &str, was: &str) -> Duration {
    r.a.child.kill().expect("kill replica A");
    let _ = r.a.child.wait();
    let killed = Instant::now();
    let failed = loop {
        let got = get(r.b(), id);
        let view = got.result();
        match view["status"].as_str() {
            Some("failed") => break view.clone(),
            Some(s) if s == was || s == "working" => {}
            other => panic!("task {id} {other:?} through B after A died while {was}: {got:?}"),
        }
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "task {id} still {} through B 5 s after its replica died while {was}: {view}\n{}",
            view["status"],
            r.logs()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = killed.elapsed();
    let message = failed["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("stopped before it finished"),
        "an error saying why: {failed}"
    );
    assert!(failed["inputRequests"].is_null(), "no question left: {failed}");
    // It stays failed: a late answer does not bring it back.
    let _ = rpc(
        r.b(),
        "tasks/update",
        id,
        json!({"taskId": id, "inputResponses": {"canary_failed": {"action": "accept", "content": {"roll_back": true}}}}),
    );
    let again = get(r.b(), id);
    assert_eq!(again.result()["status"], "failed", "{again:?}");
    took
}

#[test]
fn a_working_task_whose_replica_dies_is_failed_by_the_survivor_within_seconds() {
    let mut r = Replicas::start(&LEASE);
    // Steps of 10 s: the task is `working` for the whole test.
    let (_, id) = create(r.a(), "api", 10_000);
    // Past one lease, A has renewed it: still working through B.
    std::thread::sleep(Duration::from_millis(1500));
    let alive = get(r.b(), &id);
    assert_eq!(
        alive.result()["status"],
        "working",
        "renewed by A: {alive:?}\n{}",
        r.logs()
    );
    let took = survivor_reports_failed(&mut r, &id, "working");
    eprintln!("working task reported failed {took:.1?} after its replica died");
}

#[test]
fn an_asking_task_whose_replica_dies_is_failed_by_the_survivor_within_seconds() {
    let mut r = Replicas::start(&LEASE);
    let (_, id) = create(r.a(), "api", 50);
    let asking = wait_for(r.b(), &id, "input_required", Duration::from_secs(10), &mut Vec::new());
    the_question(&asking, "api");
    // Waiting for its answer past one lease, A still vouches for it.
    std::thread::sleep(Duration::from_millis(1500));
    let alive = get(r.b(), &id);
    assert_eq!(
        alive.result()["status"],
        "input_required",
        "renewed by A: {alive:?}\n{}",
        r.logs()
    );
    let took = survivor_reports_failed(&mut r, &id, "input_required");
    eprintln!("asking task reported failed {took:.1?} after its replica died");
}
