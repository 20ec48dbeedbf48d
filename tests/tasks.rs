//! Tasks (long-running tool calls) over real Streamable HTTP, on both eras: the 2026-07-28
//! extension `io.modelcontextprotocol/tasks` (server-directed: `tools/call` answers a
//! `CreateTaskResult`, `tasks/get` shows the questions and the outcome, `tasks/update` answers,
//! `tasks/cancel`) and 2025-11-25's core tasks (`task` in `tools/call`, `tasks/get`, `tasks/list`,
//! `tasks/cancel`, `tasks/result` asking the task's questions on its own response stream).
//!
//! Each test serves its own in-process server (`Server::serve_http_on`) and speaks raw HTTP/1.1
//! through hyper's client, so what is checked is what a client sees on the wire: the running
//! bounds, the result size bound, retention, the lease, cancellation, questions and answers,
//! isolation between callers (told apart by bearer tokens), the era rules and the call rate.
//! Every wait is bounded and says what it waited for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use mcp_resolve::auth::{AuthError, BoxFuture, TokenVerifier};
use mcp_resolve::prelude::*;
use mcp_resolve::store::MemoryStore;
use mcp_resolve::{HttpOptions, Principal};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

const TASKS_EXT: &str = "io.modelcontextprotocol/tasks";
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// How long a test waits for any one thing a task should do by itself.
const WAIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------------
// Tools

/// Sleeps `ms` milliseconds, then says so: a task when the client follows tasks.
#[tool(task = "optional")]
async fn nap(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms}")
}

/// Only ever a task.
#[tool(task = "required")]
async fn must_task() -> String {
    "done as a task".into()
}

/// Never a task.
#[tool]
async fn plain() -> String {
    "plain".into()
}

/// Per-test slots of `stoppable`: tests run in parallel, each with its own slot.
static STOPPABLE_REACHED: [AtomicUsize; 16] = [const { AtomicUsize::new(0) }; 16];
static STOPPABLE_DROPPED: [AtomicUsize; 16] = [const { AtomicUsize::new(0) }; 16];

/// Counts a body dropped before it finished (it was stopped).
struct DropCount(usize);
impl Drop for DropCount {
    fn drop(&mut self) {
        STOPPABLE_DROPPED[self.0].fetch_add(1, Ordering::SeqCst);
    }
}

/// Sleeps `ms`, then marks its slot reached: a body that was stopped never gets there.
#[tool(task = "optional")]
async fn stoppable(slot: usize, ms: u64) -> String {
    let guard = DropCount(slot);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    std::mem::forget(guard);
    STOPPABLE_REACHED[slot].fetch_add(1, Ordering::SeqCst);
    "reached".into()
}

/// A result of `bytes` bytes of text.
#[tool(task = "optional")]
async fn big(bytes: usize) -> String {
    "x".repeat(bytes)
}

/// What `proceed` asks.
#[derive(Clone, Debug, FormSchema)]
struct Choice {
    proceed: bool,
}

/// Asks whether to proceed, and says what it got.
#[tool(task = "optional")]
async fn proceed(cx: Context) -> Result<String, String> {
    match cx.elicit::<Choice>("Proceed?").await {
        Ok(ElicitationResult::Accepted(c)) => Ok(format!("proceed={}", c.proceed)),
        Ok(ElicitationResult::Declined) => Ok("declined".into()),
        Ok(ElicitationResult::Cancelled) => Ok("cancelled".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// One of the two answers `two_names` waits for.
#[derive(Clone, Debug, FormSchema)]
struct Named {
    name: String,
}

/// Asks two questions at once, so both are pending together.
#[tool(task = "optional")]
async fn two_names(cx: Context) -> Result<String, String> {
    let (a, b) = tokio::join!(cx.elicit::<Named>("First?"), cx.elicit::<Named>("Second?"));
    let name = |r: Result<ElicitationResult<Named>, ElicitError>| match r {
        Ok(ElicitationResult::Accepted(n)) => Ok(n.name),
        Ok(_) => Ok("(none)".to_owned()),
        Err(e) => Err(e.to_string()),
    };
    let (a, b) = (name(a)?, name(b)?);
    let mut both = [a, b];
    both.sort();
    Ok(format!("got {} and {}", both[0], both[1]))
}

/// Reports progress with a message, then works on for `ms`.
#[tool(task = "optional")]
async fn halfway(ms: u64, cx: Context) -> String {
    cx.progress(1.0, Some(2.0), Some("half way")).await;
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "finished".into()
}

fn base(name: &str) -> Server {
    Server::new(name)
        .tool(nap)
        .tool(must_task)
        .tool(plain)
        .tool(stoppable)
        .tool(big)
        .tool(proceed)
        .tool(two_names)
        .tool(halfway)
}

// ---------------------------------------------------------------------------------------------
// Serving and callers

/// Every non-empty token is a caller: `Principal::new(token)`.
struct AnyName;

impl TokenVerifier for AnyName {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            if token.is_empty() {
                Err(AuthError::new("no token"))
            } else {
                Ok(Principal::new(token))
            }
        })
    }
    fn authorization_server(&self) -> Option<&str> {
        Some("https://auth.test")
    }
}

/// Serves `server` on a free loopback port; with `bearer`, every request needs a token (any
/// non-empty one names its caller).
async fn serve(server: Server, bearer: bool) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = if bearer {
        HttpOptions::default().bearer(AnyName)
    } else {
        HttpOptions::default()
    };
    tokio::spawn(server.serve_http_on(listener, options));
    addr
}

/// One HTTP response, read whole.
struct Reply {
    status: u16,
    headers: http::HeaderMap,
    body: String,
}

impl Reply {
    /// The JSON-RPC message of the response: the body, or the SSE event that answers `id`.
    fn message(&self, id: i64) -> Value {
        let sse = self
            .headers
            .get("content-type")
            .is_some_and(|c| c.to_str().unwrap_or("").starts_with("text/event-stream"));
        if !sse {
            return serde_json::from_str(&self.body)
                .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.body));
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
            // A priming event has empty data.
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_json::from_str::<Value>(d.trim()).unwrap())
            .find(|m| m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
            .unwrap_or_else(|| panic!("no response to request {id} in the stream: {}", self.body))
    }
}

/// One request on a fresh connection, read whole within 10 s.
async fn send(addr: SocketAddr, headers: &[(String, String)], body: String) -> Reply {
    let exchange = async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
        tokio::spawn(conn);
        let mut req = http::Request::post("/mcp").header("host", format!("127.0.0.1:{}", addr.port()));
        for (k, v) in headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = sender
            .send_request(req.body(Full::new(Bytes::from(body.clone()))).unwrap())
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    };
    tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .unwrap_or_else(|_| panic!("no whole response within 10 s to {body}"))
}

static NEXT_ID: AtomicI64 = AtomicI64::new(100);

fn next_id() -> i64 {
    NEXT_ID.fetch_add(1, Ordering::SeqCst)
}

/// A 2026-07-28 client: every request stands alone, with its envelope in `_meta`.
#[derive(Clone)]
struct Modern {
    addr: SocketAddr,
    token: Option<&'static str>,
    /// Declares the tasks extension.
    tasks: bool,
}

impl Modern {
    fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            token: None,
            tasks: true,
        }
    }

    fn as_caller(addr: SocketAddr, token: &'static str) -> Self {
        Self {
            token: Some(token),
            ..Self::new(addr)
        }
    }

    fn without_tasks(addr: SocketAddr) -> Self {
        Self {
            tasks: false,
            ..Self::new(addr)
        }
    }

    /// The request as sent, and the reply.
    async fn post(&self, method: &str, mut params: Value) -> (i64, Reply) {
        let mut caps = json!({"elicitation": {"form": {}}});
        if self.tasks {
            caps["extensions"] = json!({ TASKS_EXT: {} });
        }
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        let name = match method {
            "tools/call" => params["name"].as_str(),
            "tasks/get" | "tasks/update" | "tasks/cancel" => params["taskId"].as_str(),
            _ => None,
        }
        .map(str::to_owned);
        let id = next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
            ("mcp-protocol-version".to_owned(), "2026-07-28".to_owned()),
            ("mcp-method".to_owned(), method.to_owned()),
        ];
        if let Some(name) = name {
            headers.push(("mcp-name".to_owned(), name));
        }
        if let Some(token) = self.token {
            headers.push(("authorization".to_owned(), format!("Bearer {token}")));
        }
        (id, send(self.addr, &headers, body).await)
    }

    /// The JSON-RPC response to `method`.
    async fn rpc(&self, method: &str, params: Value) -> Value {
        let (id, reply) = self.post(method, params).await;
        reply.message(id)
    }

    /// The result of `method`; fails on an error.
    async fn ok(&self, method: &str, params: Value) -> Value {
        let m = self.rpc(method, params.clone()).await;
        match m.get("result") {
            Some(r) => r.clone(),
            None => panic!("`{method}` {params} failed: {m}"),
        }
    }

    /// The error of `method`; fails on a result.
    async fn err(&self, method: &str, params: Value) -> Value {
        let m = self.rpc(method, params.clone()).await;
        match m.get("error") {
            Some(e) => e.clone(),
            None => panic!("`{method}` {params} was expected to fail: {m}"),
        }
    }

    /// Calls `tool` as a task: the `CreateTaskResult`.
    async fn start(&self, tool: &str, arguments: Value) -> Value {
        let r = self
            .ok("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_eq!(r["resultType"], "task", "`{tool}` did not become a task: {r}");
        assert!(r["taskId"].as_str().is_some_and(|id| !id.is_empty()), "{r}");
        r
    }

    /// Calls `tool` as a task: its id.
    async fn start_id(&self, tool: &str, arguments: Value) -> String {
        self.start(tool, arguments).await["taskId"].as_str().unwrap().to_owned()
    }

    async fn get(&self, id: &str) -> Value {
        self.ok("tasks/get", json!({"taskId": id})).await
    }

    async fn update(&self, id: &str, responses: Value) -> Value {
        self.rpc("tasks/update", json!({"taskId": id, "inputResponses": responses}))
            .await
    }

    async fn cancel(&self, id: &str) -> Value {
        self.rpc("tasks/cancel", json!({"taskId": id})).await
    }

    /// Polls `tasks/get` until `done` holds of the task (every poll passes through `each`
    /// first); the task then. Fails after [`WAIT`], naming `what`.
    async fn poll_until(
        &self,
        id: &str,
        what: &str,
        mut each: impl FnMut(&Value),
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let t = self.get(id).await;
            each(&t);
            if done(&t) {
                return t;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "task {id}: waited {WAIT:?} for {what}; last tasks/get: {t}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The task once its status is `status`.
    async fn wait_status(&self, id: &str, status: &str) -> Value {
        self.poll_until(id, &format!("status `{status}`"), |_| {}, |t| t["status"] == status)
            .await
    }

    /// The task once it asks (`input_required` with `n` pending questions).
    async fn wait_questions(&self, id: &str, n: usize) -> Value {
        self.poll_until(
            id,
            &format!("{n} pending question(s)"),
            |_| {},
            |t| t["status"] == "input_required" && t["inputRequests"].as_object().is_some_and(|q| q.len() == n),
        )
        .await
    }
}

/// The only key of a task's pending questions.
fn only_key(task: &Value) -> String {
    let asks = task["inputRequests"].as_object().unwrap();
    assert_eq!(asks.len(), 1, "one pending question: {task}");
    asks.keys().next().unwrap().clone()
}

/// A 2026-07-28 acknowledgement: an empty result (stamped with `resultType` and the server's
/// `_meta`, nothing else).
#[track_caller]
fn assert_ack(m: &Value, what: &str) {
    let r = m
        .get("result")
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("{what}: not a result: {m}"));
    assert_eq!(r.get("resultType"), Some(&json!("complete")), "{what}: {m}");
    assert!(
        r.keys().all(|k| k == "resultType" || k == "_meta"),
        "{what}: an acknowledgement carries nothing else: {m}"
    );
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The text of a tool result.
fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"))
}

/// A 2025-11-25 (or older) session over HTTP.
struct Session {
    addr: SocketAddr,
    sid: String,
    version: &'static str,
    token: Option<&'static str>,
}

impl Session {
    /// `initialize` (with form elicitation) and `notifications/initialized`; the session and the
    /// initialize result.
    async fn open(addr: SocketAddr, version: &'static str, token: Option<&'static str>) -> (Self, Value) {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "tasks-test", "version": "0"},
        }});
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ];
        if let Some(t) = token {
            headers.push(("authorization".to_owned(), format!("Bearer {t}")));
        }
        let r = send(addr, &headers, init.to_string()).await;
        assert_eq!(r.status, 200, "initialize: {}", r.body);
        let result = r.message(1)["result"].clone();
        assert_eq!(result["protocolVersion"], version, "{result}");
        let sid = r
            .headers
            .get("mcp-session-id")
            .expect("initialize opens a session")
            .to_str()
            .unwrap()
            .to_owned();
        let session = Self {
            addr,
            sid,
            version,
            token,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = send(addr, &session.headers(), initialized.to_string()).await;
        assert_eq!(r.status, 202, "notifications/initialized: {}", r.body);
        (session, result)
    }

    fn headers(&self) -> Vec<(String, String)> {
        let mut h = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
            ("mcp-session-id".to_owned(), self.sid.clone()),
            ("mcp-protocol-version".to_owned(), self.version.to_owned()),
        ];
        if let Some(t) = self.token {
            h.push(("authorization".to_owned(), format!("Bearer {t}")));
        }
        h
    }

    async fn rpc(&self, method: &str, params: Value) -> Value {
        let id = next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        send(self.addr, &self.headers(), body).await.message(id)
    }

    async fn ok(&self, method: &str, params: Value) -> Value {
        let m = self.rpc(method, params.clone()).await;
        match m.get("result") {
            Some(r) => r.clone(),
            None => panic!("`{method}` {params} failed on {}: {m}", self.version),
        }
    }

    async fn err(&self, method: &str, params: Value) -> Value {
        let m = self.rpc(method, params.clone()).await;
        match m.get("error") {
            Some(e) => e.clone(),
            None => panic!("`{method}` {params} was expected to fail on {}: {m}", self.version),
        }
    }

    /// Sends a request and returns once the head of its response is in; its body (an SSE
    /// stream) is read as it arrives.
    async fn stream(&self, method: &str, params: Value) -> (i64, Stream) {
        let id = next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let tcp = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
        let conn = tokio::spawn(async move {
            conn.await.ok();
        });
        let mut req = http::Request::post("/mcp").header("host", format!("127.0.0.1:{}", self.addr.port()));
        for (k, v) in self.headers() {
            req = req.header(k, v);
        }
        let resp = tokio::time::timeout(
            Duration::from_secs(5),
            sender.send_request(req.body(Full::new(Bytes::from(body))).unwrap()),
        )
        .await
        .unwrap_or_else(|_| panic!("no response head to `{method}` within 5 s"))
        .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "`{method}`");
        (
            id,
            Stream {
                body: resp.into_body(),
                buffer: String::new(),
                _conn: Abort(conn),
            },
        )
    }

    /// The client's answer to the server's request `id` (a POST of the JSON-RPC response).
    async fn respond(&self, id: &Value, result: Value) -> u16 {
        let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        send(self.addr, &self.headers(), body).await.status
    }
}

/// Aborts the connection's task when dropped.
struct Abort(tokio::task::JoinHandle<()>);
impl Drop for Abort {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A response body read as SSE events arrive.
struct Stream {
    body: Incoming,
    buffer: String,
    _conn: Abort,
}

impl Stream {
    /// The next message event (keep-alive comments skipped), within `wait`; `what` names it.
    async fn event(&mut self, what: &str, wait: Duration) -> Value {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data: String = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue;
                }
                return serde_json::from_str(&data).unwrap_or_else(|e| panic!("not JSON ({e}): {data}"));
            }
            match tokio::time::timeout_at(deadline, self.body.frame()).await {
                Err(_) => panic!("waited {wait:?} on the stream for {what}; nothing came"),
                Ok(None) => panic!("the stream ended before {what}"),
                Ok(Some(frame)) => {
                    if let Ok(data) = frame.unwrap().into_data() {
                        self.buffer.push_str(std::str::from_utf8(&data).unwrap());
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running bounds and result size

#[tokio::test]
async fn the_running_bound_falls_on_the_caller_and_a_task_that_ended_frees_its_place() {
    let addr = serve(base("bounds").max_tasks(2, 3), true).await;
    let (alice, bob, carol) = (
        Modern::as_caller(addr, "alice"),
        Modern::as_caller(addr, "bob"),
        Modern::as_caller(addr, "carol"),
    );
    let short = alice.start_id("nap", json!({"ms": 400})).await;
    let long = alice.start_id("nap", json!({"ms": 30_000})).await;
    // Alice's third is refused before it exists, naming her count.
    let e = alice
        .err("tools/call", json!({"name": "nap", "arguments": {"ms": 1}}))
        .await;
    assert_eq!(e["code"], -32603, "{e}");
    assert!(e["message"].as_str().unwrap().contains("Too many tasks"), "{e}");
    assert_eq!(e["data"]["runningTasks"], 2, "{e}");
    // Bob is not held back by Alice's bound.
    let bobs = bob.start_id("nap", json!({"ms": 30_000})).await;
    // The server's total (3) is reached now: the next caller meets it.
    let e = carol
        .err("tools/call", json!({"name": "nap", "arguments": {"ms": 1}}))
        .await;
    assert_eq!(e["code"], -32603, "{e}");
    assert!(e["message"].as_str().unwrap().contains("busy"), "{e}");
    // Alice's short task ends: its place is hers again (the place is given back as the body's
    // runner ends, just after the outcome is stored: bounded retries).
    alice.wait_status(&short, "completed").await;
    let deadline = tokio::time::Instant::now() + WAIT;
    let again = loop {
        let m = alice
            .rpc("tools/call", json!({"name": "nap", "arguments": {"ms": 30_000}}))
            .await;
        if let Some(r) = m.get("result") {
            break r.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the place of Alice's ended task was not given back within {WAIT:?}: {m}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert_eq!(again["resultType"], "task", "{again}");
    // Cancelled tasks free their places too.
    for (who, id) in [(&alice, &long), (&bob, &bobs)] {
        assert!(who.cancel(id).await.get("result").is_some());
    }
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let m = bob
            .rpc("tools/call", json!({"name": "nap", "arguments": {"ms": 1}}))
            .await;
        if m.get("result").is_some() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "cancelled tasks did not give their places back within {WAIT:?}: {m}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn a_result_over_max_task_result_bytes_fails_the_task_naming_the_sizes_and_one_under_completes() {
    let addr = serve(base("sizes").max_task_result_bytes(300), false).await;
    let c = Modern::new(addr);
    let over = c.start_id("big", json!({"bytes": 1000})).await;
    let t = c.wait_status(&over, "failed").await;
    assert!(t.get("result").is_none(), "a failed task keeps no result: {t}");
    let message = t["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {t}"));
    assert!(message.contains("`big`"), "names the tool: {message}");
    assert!(message.contains("(300 bytes)"), "names the bound: {message}");
    let size: usize = message
        .split(" is ")
        .nth(1)
        .and_then(|s| s.split(" bytes").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("names the result's size: {message}"));
    assert!(size > 1000, "the size is the result's ({size}): {message}");
    let under = c.start_id("big", json!({"bytes": 10})).await;
    let t = c.wait_status(&under, "completed").await;
    assert_eq!(text(&t["result"]), "x".repeat(10), "{t}");
    assert!(t.get("error").is_none(), "{t}");
}

// ---------------------------------------------------------------------------------------------
// Retention

#[tokio::test]
async fn ttl_is_the_configured_one_and_a_2025_ttl_above_the_max_is_capped() {
    let server = base("ttl")
        .task_ttl(Duration::from_secs(90), Duration::from_secs(120))
        .task_poll_interval(Duration::from_millis(1500));
    let addr = serve(server, false).await;
    // 2026-07-28: the CreateTaskResult and tasks/get carry the configured ttl and interval.
    let c = Modern::new(addr);
    let created = c.start("nap", json!({"ms": 10})).await;
    assert_eq!(created["ttlMs"], 90_000, "{created}");
    assert_eq!(created["pollIntervalMs"], 1500, "{created}");
    assert_eq!(created["status"], "working", "{created}");
    for at in ["createdAt", "lastUpdatedAt"] {
        let t = created[at].as_str().unwrap_or_else(|| panic!("no {at}: {created}"));
        assert!(
            t.len() == 24 && t.ends_with('Z') && t.as_bytes()[10] == b'T',
            "{at}: {t}"
        );
    }
    let id = created["taskId"].as_str().unwrap();
    let t = c.wait_status(id, "completed").await;
    assert_eq!(t["ttlMs"], 90_000, "{t}");
    assert_eq!(t["pollIntervalMs"], 1500, "{t}");
    // 2025-11-25: `task.ttl` is honoured up to the max, capped above it, the default without.
    let (s, _) = Session::open(addr, "2025-11-25", None).await;
    for (asked, given) in [
        (json!({"ttl": 10_000_000}), 120_000),
        (json!({"ttl": 5000}), 5000),
        (json!({}), 90_000),
    ] {
        let r = s
            .ok(
                "tools/call",
                json!({"name": "nap", "arguments": {"ms": 10}, "task": asked}),
            )
            .await;
        assert_eq!(r["task"]["ttl"], given, "task {asked}: {r}");
        assert_eq!(r["task"]["pollInterval"], 1500, "{r}");
        let id = r["task"]["taskId"].as_str().unwrap();
        assert_eq!(s.ok("tasks/get", json!({"taskId": id})).await["ttl"], given);
    }
}

#[tokio::test]
async fn a_task_is_gone_once_its_ttl_ran_out() {
    let server = base("ttl-expiry").task_ttl(Duration::from_secs(1), Duration::from_secs(1));
    let addr = serve(server, false).await;
    let c = Modern::new(addr);
    let id = c.start_id("nap", json!({"ms": 10})).await;
    let t = c.wait_status(&id, "completed").await;
    assert_eq!(t["ttlMs"], 1000, "{t}");
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let m = c.rpc("tasks/get", json!({"taskId": id})).await;
        if let Some(e) = m.get("error") {
            assert_eq!(e["code"], -32602, "{e}");
            assert!(e["message"].as_str().unwrap().contains("Unknown task"), "{e}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "a task of ttl 1 s was still there after {WAIT:?}: {m}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// The lease and replicas

/// Two replicas share one store. While the replica running a task lives it renews the lease, so
/// the other replica sees the task `working` for many leases; once that replica is gone (its
/// runtime shut down, the task body with it), the other replica reports the task `failed`.
#[test]
fn a_task_whose_replica_stopped_is_failed_once_its_lease_ran_out() {
    let store = Arc::new(MemoryStore::default());
    let lease = Duration::from_millis(150);
    let replica = |store: Arc<MemoryStore>| base("lease").store(store).task_lease(lease);
    let rt_a = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let rt_b = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let a = rt_a.block_on(serve(replica(store.clone()), false));
    let b = rt_b.block_on(serve(replica(store), false));
    let id = rt_b.block_on(async {
        let id = Modern::new(a).start_id("nap", json!({"ms": 60_000})).await;
        // Six leases long, replica A keeps vouching for it: B sees it working.
        let on_b = Modern::new(b);
        let until = tokio::time::Instant::now() + lease * 6;
        while tokio::time::Instant::now() < until {
            let t = on_b.get(&id).await;
            assert_eq!(t["status"], "working", "renewed by the replica running it: {t}");
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        id
    });
    // Replica A stops: its server and the task's body go with its runtime.
    rt_a.shutdown_timeout(Duration::from_secs(5));
    rt_b.block_on(async {
        let t = Modern::new(b)
            .poll_until(
                &id,
                "status `failed` after the lease ran out",
                |_| {},
                |t| t["status"] == "failed",
            )
            .await;
        assert_eq!(t["error"]["code"], -32603, "{t}");
        let message = t["error"]["message"].as_str().unwrap();
        assert!(message.contains("lost") && message.contains("stopped"), "{message}");
    });
}

#[tokio::test]
async fn a_cancel_or_an_answer_through_another_replica_reaches_the_body() {
    let store = Arc::new(MemoryStore::default());
    let replica = |store: Arc<MemoryStore>| {
        base("replicas")
            .store(store)
            .task_lease(Duration::from_millis(300))
            .task_answer_poll(Duration::from_millis(50))
    };
    let a = Modern::new(serve(replica(store.clone()), false).await);
    let b = Modern::new(serve(replica(store), false).await);
    // A cancel through B stops the body running on A.
    let id = a.start_id("stoppable", json!({"slot": 2, "ms": 1500})).await;
    assert_ack(&b.cancel(&id).await, "cancel through B");
    let deadline = tokio::time::Instant::now() + WAIT;
    while STOPPABLE_DROPPED[2].load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the body on A was not stopped within {WAIT:?} of a cancel through B"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert_eq!(
        STOPPABLE_REACHED[2].load(Ordering::SeqCst),
        0,
        "the cancelled body ran on"
    );
    assert_eq!(a.get(&id).await["status"], "cancelled");
    // An answer through B reaches the body asking on A.
    let id = a.start_id("proceed", json!({})).await;
    let key = only_key(&b.wait_questions(&id, 1).await);
    let ack = b.update(&id, json!({ key: accept(json!({"proceed": true})) })).await;
    assert_ack(&ack, "tasks/update through B");
    let t = a.wait_status(&id, "completed").await;
    assert_eq!(text(&t["result"]), "proceed=true", "{t}");
}

// ---------------------------------------------------------------------------------------------
// Cancellation

#[tokio::test]
async fn tasks_cancel_stops_the_body_and_a_second_cancel_on_2026_is_an_idempotent_ack() {
    let addr = serve(base("cancel-2026"), false).await;
    let c = Modern::new(addr);
    let id = c.start_id("stoppable", json!({"slot": 0, "ms": 600})).await;
    // Cancelled while it runs (seen working, a moment later); a cancel sent the instant the task
    // exists is `a_cancel_sent_as_soon_as_the_task_exists_stops_its_body`.
    assert_eq!(c.get(&id).await["status"], "working");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ack = c.cancel(&id).await;
    assert_ack(&ack, "tasks/cancel of a running task");
    let t = c.get(&id).await;
    assert_eq!(t["status"], "cancelled", "{t}");
    assert!(t.get("result").is_none() && t.get("error").is_none(), "{t}");
    // The body is stopped, not left to run: it never reaches its end.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        STOPPABLE_REACHED[0].load(Ordering::SeqCst),
        0,
        "the cancelled body ran on"
    );
    assert_eq!(STOPPABLE_DROPPED[0].load(Ordering::SeqCst), 1, "the body was dropped");
    assert_eq!(c.get(&id).await["status"], "cancelled");
    // Cancelling a task that is over acknowledges and changes nothing.
    let again = c.cancel(&id).await;
    assert_ack(&again, "a second tasks/cancel");
    assert_eq!(c.get(&id).await["status"], "cancelled");
    let done = c.start_id("nap", json!({"ms": 10})).await;
    let before = c.wait_status(&done, "completed").await;
    let ack = c.cancel(&done).await;
    assert_ack(&ack, "tasks/cancel of a completed task");
    let after = c.get(&done).await;
    assert_eq!(
        after["status"], "completed",
        "a completed task stays completed: {after}"
    );
    assert_eq!(after["result"], before["result"]);
    assert_eq!(after["lastUpdatedAt"], before["lastUpdatedAt"]);
}

#[tokio::test]
async fn tasks_cancel_on_2025_answers_the_task_and_a_task_over_cannot_be_cancelled() {
    let addr = serve(base("cancel-2025"), false).await;
    let (s, _) = Session::open(addr, "2025-11-25", None).await;
    let r = s
        .ok(
            "tools/call",
            json!({"name": "stoppable", "arguments": {"slot": 1, "ms": 600}, "task": {}}),
        )
        .await;
    let id = r["task"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(s.ok("tasks/get", json!({"taskId": id})).await["status"], "working");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let cancelled = s.ok("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancelled["taskId"], id.as_str(), "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        STOPPABLE_REACHED[1].load(Ordering::SeqCst),
        0,
        "the cancelled body ran on"
    );
    assert_eq!(STOPPABLE_DROPPED[1].load(Ordering::SeqCst), 1, "the body was dropped");
    assert_eq!(s.ok("tasks/get", json!({"taskId": id})).await["status"], "cancelled");
    let e = s.err("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(e["code"], -32602, "{e}");
    assert!(e["message"].as_str().unwrap().contains("cancelled already"), "{e}");
    // tasks/result of a cancelled task is an error, not a hang.
    let e = s.err("tasks/result", json!({"taskId": id})).await;
    assert_eq!(e["code"], -32602, "{e}");
    // A completed task cannot be cancelled either.
    let r = s
        .ok(
            "tools/call",
            json!({"name": "nap", "arguments": {"ms": 10}, "task": {}}),
        )
        .await;
    let done = r["task"]["taskId"].as_str().unwrap().to_owned();
    let deadline = tokio::time::Instant::now() + WAIT;
    while s.ok("tasks/get", json!({"taskId": done})).await["status"] != "completed" {
        assert!(tokio::time::Instant::now() < deadline, "nap 10 ms did not complete");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let e = s.err("tasks/cancel", json!({"taskId": done})).await;
    assert_eq!(e["code"], -32602, "{e}");
    assert!(e["message"].as_str().unwrap().contains("completed already"), "{e}");
}

/// A client may cancel the moment it has the task's id. Each of six tasks (three per era) is
/// cancelled right after its `CreateTaskResult`; none of their bodies may run on to its end.
/// (Several, because the window this guards is narrow: one cancel alone slips through it only
/// some of the time.)
#[tokio::test]
async fn a_cancel_sent_as_soon_as_the_task_exists_stops_its_body() {
    let addr = serve(base("cancel-at-once"), false).await;
    let c = Modern::new(addr);
    let (s, _) = Session::open(addr, "2025-11-25", None).await;
    let slots = 4..10;
    let mut ids = Vec::new();
    for slot in slots.clone() {
        let args = json!({"slot": slot, "ms": 600});
        let (id, cancelled) = if slot % 2 == 0 {
            let id = c.start_id("stoppable", args).await;
            (id.clone(), c.cancel(&id).await.get("result").is_some())
        } else {
            let r = s
                .ok(
                    "tools/call",
                    json!({"name": "stoppable", "arguments": args, "task": {}}),
                )
                .await;
            let id = r["task"]["taskId"].as_str().unwrap().to_owned();
            let m = s.rpc("tasks/cancel", json!({"taskId": id})).await;
            (id, m["result"]["status"] == "cancelled")
        };
        assert!(cancelled, "task {id} (slot {slot}) was not cancelled");
        ids.push((slot, id));
    }
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let ran_on: Vec<String> = ids
        .iter()
        .filter(|(slot, _)| STOPPABLE_REACHED[*slot].load(Ordering::SeqCst) > 0)
        .map(|(slot, id)| {
            format!(
                "slot {slot} ({}, task {id})",
                if slot % 2 == 0 { "2026-07-28" } else { "2025-11-25" }
            )
        })
        .collect();
    assert!(
        ran_on.is_empty(),
        "bodies ran on to their end after tasks/cancel answered `cancelled`: {ran_on:?}"
    );
    // A body the cancel reached before it was first polled never started (no guard to drop);
    // one that started was dropped, once.
    for (slot, id) in &ids {
        assert!(
            STOPPABLE_DROPPED[*slot].load(Ordering::SeqCst) <= 1,
            "slot {slot}: task {id}'s body was dropped more than once"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Questions (2026-07-28)

#[tokio::test]
async fn a_pending_question_shows_on_every_poll_until_answered_and_never_after() {
    let addr = serve(base("questions"), false).await;
    let c = Modern::new(addr);
    let id = c.start_id("proceed", json!({})).await;
    let first = c.wait_questions(&id, 1).await;
    let key = only_key(&first);
    let asked = &first["inputRequests"][&key];
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], "Proceed?", "{asked}");
    assert!(
        asked["params"]["requestedSchema"]["properties"]["proceed"].is_object(),
        "{asked}"
    );
    for _ in 0..5 {
        let t = c.get(&id).await;
        assert_eq!(t["status"], "input_required", "{t}");
        assert_eq!(
            t["inputRequests"], first["inputRequests"],
            "the same question, same key"
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let ack = c.update(&id, json!({ &key: accept(json!({"proceed": true})) })).await;
    assert_ack(&ack, "tasks/update answering the question");
    let t = c
        .poll_until(
            &id,
            "status `completed`",
            |t| {
                assert!(
                    t.get("inputRequests").is_none(),
                    "an answered question is not shown: {t}"
                );
                assert_ne!(t["status"], "input_required", "{t}");
            },
            |t| t["status"] == "completed",
        )
        .await;
    assert_eq!(text(&t["result"]), "proceed=true", "{t}");
    assert_eq!(t["result"]["isError"], false, "{t}");
    // Answering again, once over: acknowledged, nothing changes.
    let ack = c.update(&id, json!({ &key: accept(json!({"proceed": false})) })).await;
    assert_ack(&ack, "tasks/update once the task is over");
    assert_eq!(c.get(&id).await["result"], t["result"]);
}

#[tokio::test]
async fn a_partial_answer_keeps_input_required_with_only_the_unanswered_key() {
    let addr = serve(base("partial"), false).await;
    let c = Modern::new(addr);
    let id = c.start_id("two_names", json!({})).await;
    let both = c.wait_questions(&id, 2).await;
    let keys: Vec<String> = both["inputRequests"].as_object().unwrap().keys().cloned().collect();
    assert_ne!(keys[0], keys[1]);
    let ack = c.update(&id, json!({ &keys[0]: accept(json!({"name": "Ada"})) })).await;
    assert_ack(&ack, "tasks/update answering one of two");
    for _ in 0..3 {
        let t = c.get(&id).await;
        assert_eq!(t["status"], "input_required", "{t}");
        assert_eq!(only_key(&t), keys[1], "only the unanswered key: {t}");
        assert_eq!(t["inputRequests"][&keys[1]], both["inputRequests"][&keys[1]]);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let ack = c
        .update(&id, json!({ &keys[1]: accept(json!({"name": "Grace"})) }))
        .await;
    assert_ack(&ack, "tasks/update answering the other");
    let t = c.wait_status(&id, "completed").await;
    assert_eq!(text(&t["result"]), "got Ada and Grace", "{t}");
}

#[tokio::test]
async fn an_answer_under_an_unknown_key_is_acknowledged_and_changes_nothing() {
    let addr = serve(base("unknown-key"), false).await;
    let c = Modern::new(addr);
    let id = c.start_id("proceed", json!({})).await;
    let before = c.wait_questions(&id, 1).await;
    let key = only_key(&before);
    let ack = c
        .update(&id, json!({"no-such-key": accept(json!({"proceed": true}))}))
        .await;
    assert_ack(&ack, "tasks/update under an unknown key");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = c.get(&id).await;
    assert_eq!(after["status"], "input_required", "{after}");
    assert_eq!(after["inputRequests"], before["inputRequests"], "{after}");
    assert_eq!(after["lastUpdatedAt"], before["lastUpdatedAt"], "{after}");
    // The real key still answers.
    c.update(&id, json!({ &key: accept(json!({"proceed": false})) })).await;
    let t = c.wait_status(&id, "completed").await;
    assert_eq!(text(&t["result"]), "proceed=false", "{t}");
}

/// "Malformed" as the runtime defines it (`docs/SPEC.md` M26-13, `tests/resolvers.rs`
/// `malformed_answers_never_complete_the_call`): an answer that is not an answer (a number,
/// `null`, a string, an unknown action). Each is asked again under a key never used before; an
/// old key no longer answers.
#[tokio::test]
async fn a_malformed_answer_is_asked_again_under_a_new_key_and_keys_are_never_reused() {
    let addr = serve(base("malformed"), false).await;
    let c = Modern::new(addr);
    let id = c.start_id("proceed", json!({})).await;
    let mut seen: Vec<String> = Vec::new();
    let mut task = c.wait_questions(&id, 1).await;
    for bad in [json!(12345), Value::Null, json!("accept"), json!({"action": "maybe"})] {
        let key = only_key(&task);
        assert!(!seen.contains(&key), "key {key} reused (seen {seen:?})");
        seen.push(key.clone());
        let ack = c.update(&id, json!({ &key: bad })).await;
        assert_ack(&ack, "tasks/update with a malformed answer");
        task = c
            .poll_until(
                &id,
                &format!("the question asked again after the malformed answer {bad}"),
                |t| assert_ne!(t["status"], "completed", "a malformed answer {bad} ended the task: {t}"),
                |t| {
                    t["status"] == "input_required"
                        && t["inputRequests"]
                            .as_object()
                            .is_some_and(|q| q.len() == 1 && !q.contains_key(&key))
                },
            )
            .await;
        assert_eq!(task["inputRequests"][only_key(&task)]["params"]["message"], "Proceed?");
    }
    let last = only_key(&task);
    assert!(!seen.contains(&last), "key {last} reused (seen {seen:?})");
    // An old key does not answer the new question.
    c.update(&id, json!({ &seen[0]: accept(json!({"proceed": true})) }))
        .await;
    let t = c.get(&id).await;
    assert_eq!(only_key(&t), last, "{t}");
    c.update(&id, json!({ &last: accept(json!({"proceed": true})) })).await;
    let t = c.wait_status(&id, "completed").await;
    assert_eq!(text(&t["result"]), "proceed=true", "{t}");
}

/// Accepted content that does not fit the form ends the question with an error the body sees
/// (here returned as the tool's error): the task completes with `isError: true`. That holds for a
/// wrong type, and also for an accept without content and content that is not an object, which
/// the runtime treats as answers that break the form (as `tests/resolvers.rs`
/// `invalid_accepted_content_is_an_error_result_naming_the_rule` does), not as malformed.
#[tokio::test]
async fn accepted_content_that_does_not_fit_the_form_completes_the_task_with_is_error() {
    let addr = serve(base("misfit"), false).await;
    let c = Modern::new(addr);
    for (answer, says) in [
        (accept(json!({"proceed": "yes"})), "does not match its form"),
        (json!({"action": "accept"}), "no content"),
        (accept(json!("yes")), "not an object"),
    ] {
        let id = c.start_id("proceed", json!({})).await;
        let key = only_key(&c.wait_questions(&id, 1).await);
        let ack = c.update(&id, json!({ &key: answer })).await;
        assert_ack(&ack, "tasks/update with content that breaks the form");
        let t = c.wait_status(&id, "completed").await;
        assert_eq!(t["result"]["isError"], true, "{answer}: {t}");
        assert!(text(&t["result"]).contains(says), "{answer}: {t}");
    }
}

/// A question nobody answers fails after `elicitation_timeout`: the body gets the error (here
/// its result), the question leaves the task, and the task ends instead of waiting forever.
#[tokio::test]
async fn a_question_nobody_answers_fails_after_the_elicitation_timeout() {
    let server = base("unanswered").elicitation_timeout(Duration::from_millis(400));
    let addr = serve(server, false).await;
    let c = Modern::new(addr);
    let id = c.start_id("proceed", json!({})).await;
    c.wait_questions(&id, 1).await;
    let t = c.wait_status(&id, "completed").await;
    assert_eq!(t["result"]["isError"], true, "{t}");
    assert!(text(&t["result"]).contains("no answer within"), "{t}");
    assert!(t.get("inputRequests").is_none(), "the question left the task: {t}");
}

#[tokio::test]
async fn a_decline_reaches_the_body_as_declined() {
    let addr = serve(base("decline"), false).await;
    let c = Modern::new(addr);
    for (action, expected) in [("decline", "declined"), ("cancel", "cancelled")] {
        let id = c.start_id("proceed", json!({})).await;
        let key = only_key(&c.wait_questions(&id, 1).await);
        c.update(&id, json!({ &key: {"action": action} })).await;
        let t = c.wait_status(&id, "completed").await;
        assert_eq!(text(&t["result"]), expected, "{t}");
        assert_eq!(t["result"]["isError"], false, "{t}");
    }
}

// ---------------------------------------------------------------------------------------------
// Isolation

#[tokio::test]
async fn another_callers_task_is_an_unknown_task_to_every_method_on_both_eras() {
    let addr = serve(base("isolation"), true).await;
    let (alice, mallory) = (Modern::as_caller(addr, "alice"), Modern::as_caller(addr, "mallory"));
    let id = alice.start_id("proceed", json!({})).await;
    let before = alice.wait_questions(&id, 1).await;
    let key = only_key(&before);
    let unknown = |e: &Value, what: &str| {
        assert_eq!(e["code"], -32602, "{what}: {e}");
        assert!(
            e["message"].as_str().unwrap().starts_with("Unknown task"),
            "{what}: {e}"
        );
    };
    let e = mallory.err("tasks/get", json!({"taskId": id})).await;
    unknown(&e, "mallory's tasks/get");
    let e = mallory
        .err(
            "tasks/update",
            json!({"taskId": id, "inputResponses": { &key: accept(json!({"proceed": true})) }}),
        )
        .await;
    unknown(&e, "mallory's tasks/update");
    let e = mallory.err("tasks/cancel", json!({"taskId": id})).await;
    unknown(&e, "mallory's tasks/cancel");
    // Mallory's attempts changed nothing.
    let after = alice.get(&id).await;
    assert_eq!(after["status"], "input_required", "{after}");
    assert_eq!(after["inputRequests"], before["inputRequests"], "{after}");
    // An id nobody has is the same error, to its owner too.
    let nobody = "0123456789abcdef0123456789abcdef";
    for method in ["tasks/get", "tasks/cancel"] {
        unknown(&alice.err(method, json!({"taskId": nobody})).await, method);
    }
    unknown(
        &alice
            .err("tasks/update", json!({"taskId": nobody, "inputResponses": {}}))
            .await,
        "tasks/update",
    );
    // 2025-11-25: Mallory's session neither sees nor reaches Alice's tasks.
    let (m, _) = Session::open(addr, "2025-11-25", Some("mallory")).await;
    for method in ["tasks/get", "tasks/cancel", "tasks/result"] {
        unknown(&m.err(method, json!({"taskId": id})).await, method);
    }
    let (a, _) = Session::open(addr, "2025-11-25", Some("alice")).await;
    let r = a
        .ok(
            "tools/call",
            json!({"name": "nap", "arguments": {"ms": 10}, "task": {}}),
        )
        .await;
    let alices = r["task"]["taskId"].as_str().unwrap().to_owned();
    let listed = a.ok("tasks/list", json!({})).await;
    assert!(
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["taskId"] == alices.as_str()),
        "{listed}"
    );
    let listed = m.ok("tasks/list", json!({})).await;
    assert_eq!(listed["tasks"], json!([]), "mallory lists none of alice's: {listed}");
    unknown(&m.err("tasks/get", json!({"taskId": alices})).await, "tasks/get");
    alice.cancel(&id).await;
}

// ---------------------------------------------------------------------------------------------
// Clients that do not follow tasks, and the methods of each era

#[tokio::test]
async fn a_2026_client_without_the_extension_gets_no_tasks() {
    let addr = serve(base("no-extension"), false).await;
    let c = Modern::without_tasks(addr);
    let e = c
        .err("tasks/get", json!({"taskId": "0123456789abcdef0123456789abcdef"}))
        .await;
    assert_eq!(e["code"], -32021, "{e}");
    assert!(e["message"].as_str().unwrap().contains(TASKS_EXT), "{e}");
    assert_eq!(
        e["data"]["requiredCapabilities"]["extensions"][TASKS_EXT],
        json!({}),
        "{e}"
    );
    // An optional task tool answers in its response.
    let r = c
        .ok("tools/call", json!({"name": "nap", "arguments": {"ms": 10}}))
        .await;
    assert!(r.get("taskId").is_none(), "{r}");
    assert_ne!(r["resultType"], "task", "{r}");
    assert_eq!(text(&r), "slept 10", "{r}");
    // A required one refuses, naming the extension.
    let e = c.err("tools/call", json!({"name": "must_task", "arguments": {}})).await;
    assert_eq!(e["code"], -32021, "{e}");
    assert_eq!(
        e["data"]["requiredCapabilities"]["extensions"][TASKS_EXT],
        json!({}),
        "{e}"
    );
    // A tool that is never a task answers in its response to a client that follows tasks.
    let r = Modern::new(addr)
        .ok("tools/call", json!({"name": "plain", "arguments": {}}))
        .await;
    assert_eq!(text(&r), "plain", "{r}");
}

#[tokio::test]
async fn each_era_has_its_own_task_methods_and_capabilities() {
    let addr = serve(base("eras"), false).await;
    let some_id = json!({"taskId": "0123456789abcdef0123456789abcdef"});
    // 2026-07-28: no tasks/result, no tasks/list.
    let c = Modern::new(addr);
    for method in ["tasks/result", "tasks/list"] {
        let e = c.err(method, some_id.clone()).await;
        assert_eq!(e["code"], -32601, "{method} on 2026-07-28: {e}");
    }
    // server/discover declares the extension, not the core capability.
    let d = c.ok("server/discover", json!({})).await;
    assert_eq!(d["capabilities"]["extensions"][TASKS_EXT], json!({}), "{d}");
    assert!(d["capabilities"].get("tasks").is_none(), "{d}");
    // 2025-11-25: the core `tasks` capability, no extensions; no tasks/update.
    let (s, init) = Session::open(addr, "2025-11-25", None).await;
    assert_eq!(
        init["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    assert!(init["capabilities"].get("extensions").is_none(), "{init}");
    let e = s
        .err("tasks/update", json!({"taskId": "x", "inputResponses": {}}))
        .await;
    assert_eq!(e["code"], -32601, "tasks/update on 2025-11-25: {e}");
    let tools = s.ok("tools/list", json!({})).await;
    let support = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"]["taskSupport"].clone())
            .unwrap_or_else(|| panic!("no tool {name}: {tools}"))
    };
    assert_eq!(support("nap"), "optional");
    assert_eq!(support("must_task"), "required");
    // Without `task`, an optional tool answers at once and a required one is -32601.
    let r = s
        .ok("tools/call", json!({"name": "nap", "arguments": {"ms": 10}}))
        .await;
    assert_eq!(text(&r), "slept 10", "{r}");
    let e = s.err("tools/call", json!({"name": "must_task", "arguments": {}})).await;
    assert_eq!(e["code"], -32601, "{e}");
    // 2025-06-18: no tasks at all.
    let (old, init) = Session::open(addr, "2025-06-18", None).await;
    assert!(init["capabilities"].get("tasks").is_none(), "{init}");
    assert!(init["capabilities"].get("extensions").is_none(), "{init}");
    for method in [
        "tasks/get",
        "tasks/list",
        "tasks/result",
        "tasks/cancel",
        "tasks/update",
    ] {
        let e = old.err(method, some_id.clone()).await;
        assert_eq!(e["code"], -32601, "{method} on 2025-06-18: {e}");
    }
    // and `task` asks for nothing there: the optional tool answers at once.
    let r = old
        .ok(
            "tools/call",
            json!({"name": "nap", "arguments": {"ms": 10}, "task": {}}),
        )
        .await;
    assert_eq!(text(&r), "slept 10", "{r}");
}

// ---------------------------------------------------------------------------------------------
// 2025-11-25 end to end

#[tokio::test]
async fn a_2025_task_asks_on_the_tasks_result_stream_and_delivers_its_result_there() {
    let addr = serve(base("core").task_poll_interval(Duration::from_millis(700)), false).await;
    let (s, _) = Session::open(addr, "2025-11-25", None).await;
    let r = s
        .ok(
            "tools/call",
            json!({"name": "proceed", "arguments": {}, "task": {"ttl": 60_000}}),
        )
        .await;
    let task = &r["task"];
    let id = task["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {r}"))
        .to_owned();
    assert_eq!(task["status"], "working", "{r}");
    assert_eq!(task["ttl"], 60_000, "{r}");
    assert_eq!(task["pollInterval"], 700, "{r}");
    assert!(
        task["createdAt"].is_string() && task["lastUpdatedAt"].is_string(),
        "{r}"
    );
    assert!(r.get("content").is_none(), "a task, not a result: {r}");
    // tasks/get: the task, waiting for its question.
    let deadline = tokio::time::Instant::now() + WAIT;
    let got = loop {
        let t = s.ok("tasks/get", json!({"taskId": id})).await;
        assert_eq!(t["taskId"], id.as_str(), "{t}");
        if t["status"] == "input_required" {
            break t;
        }
        assert!(tokio::time::Instant::now() < deadline, "never input_required: {t}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert!(
        got.get("inputRequests").is_none(),
        "2025-11-25 asks on tasks/result: {got}"
    );
    let listed = s.ok("tasks/list", json!({})).await;
    let mine: Vec<&Value> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["taskId"] == id.as_str())
        .collect();
    assert_eq!(mine.len(), 1, "{listed}");
    assert_eq!(mine[0]["status"], "input_required", "{listed}");
    // tasks/result: the question comes on its stream, tied to the task.
    let (result_id, mut stream) = s.stream("tasks/result", json!({"taskId": id})).await;
    let question = stream.event("the task's elicitation/create", WAIT).await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(question["params"]["message"], "Proceed?", "{question}");
    assert_eq!(
        question["params"]["_meta"][RELATED_TASK],
        json!({"taskId": id}),
        "{question}"
    );
    assert!(question["id"].is_number() || question["id"].is_string(), "{question}");
    let status = s.respond(&question["id"], accept(json!({"proceed": true}))).await;
    assert_eq!(status, 202, "the answer's POST");
    let answer = stream.event("the response to tasks/result", WAIT).await;
    assert_eq!(answer["id"], result_id, "{answer}");
    let result = &answer["result"];
    assert_eq!(text(result), "proceed=true", "{answer}");
    assert_eq!(result["isError"], false, "{answer}");
    assert_eq!(result["_meta"][RELATED_TASK], json!({"taskId": id}), "{answer}");
    // Afterwards: completed, and listed so.
    assert_eq!(s.ok("tasks/get", json!({"taskId": id})).await["status"], "completed");
    let listed = s.ok("tasks/list", json!({})).await;
    assert!(
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["taskId"] == id.as_str() && t["status"] == "completed"),
        "{listed}"
    );
    // tasks/result of a completed task answers at once, the same result.
    let again = s.ok("tasks/result", json!({"taskId": id})).await;
    assert_eq!(&again, result);
}

// ---------------------------------------------------------------------------------------------
// Progress and rate

#[tokio::test]
async fn progress_in_a_task_body_shows_as_its_status_message_on_both_eras() {
    let addr = serve(base("progress"), false).await;
    let c = Modern::new(addr);
    let id = c.start_id("halfway", json!({"ms": 1500})).await;
    let t = c
        .poll_until(
            &id,
            "statusMessage `half way`",
            |_| {},
            |t| t["statusMessage"] == "half way",
        )
        .await;
    assert_eq!(t["status"], "working", "{t}");
    c.cancel(&id).await;
    let (s, _) = Session::open(addr, "2025-11-25", None).await;
    let r = s
        .ok(
            "tools/call",
            json!({"name": "halfway", "arguments": {"ms": 1500}, "task": {}}),
        )
        .await;
    let id = r["task"]["taskId"].as_str().unwrap().to_owned();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let t = s.ok("tasks/get", json!({"taskId": id})).await;
        if t["statusMessage"] == "half way" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {WAIT:?} for statusMessage `half way` on 2025-11-25: {t}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    s.ok("tasks/cancel", json!({"taskId": id})).await;
}

#[tokio::test]
async fn task_polls_count_against_the_call_rate() {
    let addr = serve(base("rate").call_rate_limit(1, 2), false).await;
    let c = Modern::new(addr);
    let id = c.start_id("nap", json!({"ms": 5000})).await;
    // One call spent of a burst of 2; rapid polls meet the bound.
    let mut refused = None;
    for _ in 0..4 {
        let (rid, reply) = c.post("tasks/get", json!({"taskId": id})).await;
        if reply.status == 429 {
            refused = Some((rid, reply));
            break;
        }
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let (rid, reply) = refused.expect("rapid tasks/get was never refused (429) with call_rate_limit(1, 2)");
    assert!(reply.headers.get("retry-after").is_some(), "429 names when to retry");
    let m = reply.message(rid);
    assert_eq!(m["error"]["code"], -32603, "{m}");
    assert!(
        m["error"]["message"].as_str().unwrap().contains("Too many requests"),
        "{m}"
    );
}
