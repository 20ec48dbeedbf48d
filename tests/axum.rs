//! The Notes server inside an axum application (`examples/axum.rs`), over real HTTP: the release
//! example (`axum --http 127.0.0.1:PORT`, built with every feature; `MCP_RESOLVE_AXUM_BIN`
//! overrides it) driven by the official Python SDK client (`tests/interop/py_client.py --url`) on
//! both eras (`--mode legacy`: the 2025-11-25 handshake; `--mode 2026-07-28`), beside the
//! application's own routes and middleware; the endpoint's guarantees kept through axum; a stop
//! on SIGTERM; the Prometheus metrics scraped after a session; and, in-process,
//! `Router::nest_service` with the prefix stripped.
//!
//! Every test starts a fresh server process on a free port (the folders are per process), killed
//! by a drop guard when the test ends. On failure the message carries the driver's output and
//! the server's stderr.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

mod support;

use support::{DriverRun, HttpChild, MANIFEST_DIR, axum_bin, python, run_to_end, text_of};

#[allow(dead_code)]
#[path = "../examples/notes.rs"]
mod notes;

/// How long one driver process may run before it is killed.
const DRIVER_DEADLINE: Duration = Duration::from_secs(60);
/// The driver's own `--timeout`, below the deadline so it reports a timeout as JSON first.
const DRIVER_TIMEOUT_SECS: &str = "50";

const DRAFTS: &str = "/tmp/notes/drafts";
const IDEAS: &str = "/tmp/notes/ideas";
const DRAFTS_QUESTION: &str = "/tmp/notes/drafts has 2 file(s). Delete anyway?";
const IDEAS_QUESTION: &str = "/tmp/notes/ideas has 2 file(s). Delete anyway?";
const LENGTH_QUESTION: &str = "How long should the summary of /tmp/notes/drafts be?";
const SHARE_QUESTION: &str = "Share the names of the 2 file(s) in /tmp/notes/ideas with the assistant?";

/// One protocol era as the Python client reaches it.
#[derive(Clone, Copy, Debug)]
struct Era {
    mode: &'static str,
    version: &'static str,
}

const LEGACY: Era = Era {
    mode: "legacy",
    version: "2025-11-25",
};
const MODERN: Era = Era {
    mode: "2026-07-28",
    version: "2026-07-28",
};

fn start(label: &str) -> HttpChild {
    HttpChild::start(axum_bin(), label, &|_| Vec::new())
}

// ---------------------------------------------------------------------------------------------
// The Python SDK client, one run per list of steps.
// ---------------------------------------------------------------------------------------------

struct Run {
    label: String,
    status: Option<ExitStatus>,
    timed_out: bool,
    stdout: String,
    stderr: String,
    /// The server's stderr when the driver finished.
    server_log: String,
    events: Vec<Value>,
}

impl DriverRun for Run {
    fn fail(&self, what: impl std::fmt::Display) -> ! {
        panic!(
            "[{}] {what}\n--- driver status: {:?}{} ---\n--- driver stdout ---\n{}\n--- driver stderr ---\n{}\n\
             --- server stderr ---\n{}",
            self.label,
            self.status,
            if self.timed_out { " (killed: deadline)" } else { "" },
            self.stdout,
            self.stderr,
            self.server_log,
        )
    }
    fn events(&self) -> &[Value] {
        &self.events
    }
    fn timed_out(&self) -> bool {
        self.timed_out
    }
    fn status(&self) -> Option<ExitStatus> {
        self.status
    }
}

impl Run {
    /// The events that end a step, in order (one per step).
    fn outcomes(&self, steps: usize) -> Vec<&Value> {
        let outcomes: Vec<&Value> = self
            .events
            .iter()
            .filter(|e| {
                !matches!(
                    e["event"].as_str(),
                    Some("connected" | "done" | "elicitation" | "log" | "notification")
                )
            })
            .collect();
        self.check(
            outcomes.len() == steps,
            format_args!("expected {steps} step outcomes, got {}", outcomes.len()),
        );
        outcomes
    }

    /// The questions the client was asked, their messages in order.
    fn questions(&self) -> Vec<&str> {
        self.events
            .iter()
            .filter(|e| e["event"] == "elicitation")
            .filter_map(|e| e["message"].as_str())
            .collect()
    }

    /// Connected on `era`'s version to the Notes server, and ended cleanly.
    #[track_caller]
    fn assert_clean_on(&self, era: Era) {
        self.assert_driver_clean();
        let connected = self.events.first().filter(|e| e["event"] == "connected");
        let Some(connected) = connected else {
            self.fail("the first event is not `connected`")
        };
        self.check_eq(&connected["protocol_version"], &json!(era.version), "protocol version");
        // On 2026-07-28 the client named its version: it made no `server/discover` call.
        if era.version == LEGACY.version || !connected["server_info"].is_null() {
            self.check_eq(&connected["server_info"]["name"], &json!("notes"), "server name");
        }
    }

    /// A tool call's text, not an error.
    #[track_caller]
    fn assert_text(&self, event: &Value, text: &str) {
        self.check_eq(&event["event"], &json!("result"), "a tool call's outcome");
        self.check_eq(&event["result"]["isError"], &json!(false), "isError");
        self.check_eq(&event["result"]["content"][0]["text"], &json!(text), "the tool's text");
    }
}

/// `py_client.py --url http://ADDR/mcp --mode MODE ARGS… --steps STEPS` against `server`.
fn drive(server: &mut HttpChild, label: &str, era: Era, args: &[&str], steps: &Value) -> Run {
    let label = format!("{label} ({})", era.mode);
    let mut cmd = Command::new(python());
    cmd.arg(Path::new(MANIFEST_DIR).join("tests/interop/py_client.py"))
        .arg("--url")
        .arg(server.url())
        .args(["--mode", era.mode, "--timeout", DRIVER_TIMEOUT_SECS])
        .args(args)
        .arg("--steps")
        .arg(steps.to_string());
    let done = run_to_end(&mut cmd, &label, DRIVER_DEADLINE, Duration::from_secs(5));
    let server_exit = server.exit_status();
    let mut run = Run {
        label,
        status: done.status,
        timed_out: done.timed_out,
        stdout: done.stdout,
        stderr: done.stderr,
        server_log: text_of(&server.stderr),
        events: Vec::new(),
    };
    for line in run.stdout.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(event) if event["event"].is_string() => run.events.push(event),
            _ => run.fail(format_args!(
                "the driver printed a line that is not a JSON event: {line}"
            )),
        }
    }
    if let Some(status) = server_exit {
        run.fail(format_args!("the server exited during the run: {status}"));
    }
    run
}

fn call(tool: &str, args: Value) -> Value {
    json!({"op": "call", "tool": tool, "args": args})
}

// ---------------------------------------------------------------------------------------------
// Plain HTTP/1.1 over a socket: one request per connection (`Connection: close`).
// ---------------------------------------------------------------------------------------------

struct Reply {
    status: u16,
    /// Names in lower case.
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// A request to `addr` with `Host: 127.0.0.1:PORT` unless `headers` name one, read to its end.
fn request(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{method} {target} on {addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(head(addr, method, target, headers, body.len()).as_bytes())
        .unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("{method} {target}: reading the response: {e}"));
    parse(&raw)
}

/// The request line and headers (`Connection: close`, `Content-Length: LEN`).
fn head(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)], len: usize) -> String {
    let mut req = format!("{method} {target} HTTP/1.1\r\nConnection: close\r\nContent-Length: {len}\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req
}

/// A whole HTTP/1.1 response: status, headers, body (de-chunked).
fn parse(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of headers in {text:?}"));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Reply { status, headers, body }
}

/// A chunked body's data (what arrived of it).
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            out.push_str(&after[..size.min(after.len())]);
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].strip_prefix("\r\n").unwrap_or(&after[size..]);
    }
    out
}

/// The JSON messages of an SSE body (`data:` lines; the priming event's empty data left out).
fn sse_messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("an SSE event that is not JSON ({e}): {d}")))
        .collect()
}

const JSON_BODY: (&str, &str) = ("content-type", "application/json");
const ACCEPT_BOTH: (&str, &str) = ("accept", "application/json, text/event-stream");

/// A 2026-07-28 `server/discover`: the body with its `_meta` envelope, and its headers.
fn discover() -> (String, Vec<(&'static str, &'static str)>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }}});
    let headers = vec![
        JSON_BODY,
        ACCEPT_BOTH,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    (body.to_string(), headers)
}

/// `kill -TERM` the server.
fn sigterm(server: &HttpChild) {
    let killed = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success(), "kill -TERM {}", server.child.id());
}

/// The server's exit status within `limit`, and how long it took.
fn exit_within(server: &mut HttpChild, limit: Duration) -> (ExitStatus, Duration) {
    let begun = Instant::now();
    loop {
        if let Some(status) = server.exit_status() {
            return (status, begun.elapsed());
        }
        if begun.elapsed() > limit {
            let log = server.stop();
            panic!("still running {limit:?} after SIGTERM\n--- server stderr ---\n{log}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------------------------
// The Notes server through axum, with the Python SDK client.
// ---------------------------------------------------------------------------------------------

/// On `era`: the lists, the prompt and the resource (each asking first), `delete_folder` on a
/// folder with files answered yes (deleted: the application's own JSON route, which reads the
/// same state, no longer finds it), then on another answered no (kept).
fn lists_asks_and_answers(era: Era) {
    let mut server = start(&format!("axum session {}", era.mode));
    let steps = json!([
        {"op": "list_tools"},
        {"op": "list_prompts"},
        {"op": "list_resource_templates"},
        {"op": "get_prompt", "name": "summarize_folder", "args": {"path": DRAFTS}},
        {"op": "read_resource", "uri": "notes://folder/ideas"},
        call("delete_folder", json!({"path": DRAFTS})),
    ]);
    // Each form question gets the answer named by its first field.
    let answers = r#"{"ok": {"ok": true}, "length": {"length": "detailed"}}"#;
    let run = drive(
        &mut server,
        "lists, asks, accepts",
        era,
        &["--answers", answers],
        &steps,
    );
    run.assert_clean_on(era);
    let out = run.outcomes(6);
    let mut tools: Vec<&str> = out[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    tools.sort_unstable();
    run.check(tools == ["add", "delete_folder"], format_args!("tools: {tools:?}"));
    let prompts: Vec<&str> = out[1]["prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str())
        .collect();
    run.check(prompts == ["summarize_folder"], format_args!("prompts: {prompts:?}"));
    run.check_eq(
        &out[2]["resourceTemplates"][0]["uriTemplate"],
        &json!("notes://folder/{name}"),
        "the resource template",
    );
    run.check_eq(
        &out[3]["result"]["messages"][0]["content"]["text"],
        &json!("Summarize the notes in /tmp/notes/drafts (a.md, b.md) file by file."),
        "the prompt (asked: detailed)",
    );
    run.check_eq(
        &out[4]["result"]["contents"][0]["text"],
        &json!("garden.md\ntrip.md"),
        "the resource (consent given)",
    );
    run.assert_text(out[5], "deleted /tmp/notes/drafts");
    let questions = run.questions();
    run.check(
        questions == [LENGTH_QUESTION, SHARE_QUESTION, DRAFTS_QUESTION],
        format_args!("questions: {questions:?}"),
    );
    // The application's trace span wraps what MCP logs of the request.
    run.check(
        run.server_log.contains("request{method=POST path=\"/mcp\" id=\"") && run.server_log.contains("question asked"),
        "the server's log of a question is inside the application's request span",
    );
    let gone = request(server.addr, "GET", "/api/folders/drafts", &[], "");
    assert_eq!(
        gone.status, 404,
        "the application sees the tool's deletion: {}",
        gone.body
    );

    let steps = json!([call("delete_folder", json!({"path": IDEAS}))]);
    let run = drive(&mut server, "declines", era, &["--answer", "decline"], &steps);
    run.assert_clean_on(era);
    let out = run.outcomes(1);
    run.assert_text(out[0], "declined: folder not deleted");
    run.check(
        run.questions() == [IDEAS_QUESTION],
        format_args!("questions: {:?}", run.questions()),
    );
    let kept = request(server.addr, "GET", "/api/folders/ideas", &[], "");
    assert_eq!(kept.status, 200, "{}", kept.body);
    assert_eq!(kept.json()["files"], json!(["garden.md", "trip.md"]));
}

#[test]
fn python_handshake_era_lists_asks_and_answers_through_axum() {
    lists_asks_and_answers(LEGACY);
}

#[test]
fn python_2026_07_28_lists_asks_and_answers_through_axum() {
    lists_asks_and_answers(MODERN);
}

// ---------------------------------------------------------------------------------------------
// The application beside MCP; the endpoint's guarantees through axum.
// ---------------------------------------------------------------------------------------------

/// `GET /health` and the JSON `GET /api/folders/{name}` answer beside `/mcp`; the application's
/// middleware runs on MCP's responses as on its own: a new `x-request-id` on each, a client's
/// own kept.
#[test]
fn the_application_routes_and_middleware_serve_beside_mcp() {
    let server = start("axum routes");
    let health = request(server.addr, "GET", "/health", &[], "");
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));
    let folder = request(server.addr, "GET", "/api/folders/drafts", &[], "");
    assert_eq!(folder.status, 200);
    assert_eq!(
        folder.json(),
        json!({"path": "/tmp/notes/drafts", "files": ["a.md", "b.md"]})
    );
    assert_eq!(request(server.addr, "GET", "/api/folders/nowhere", &[], "").status, 404);

    let (body, headers) = discover();
    let discovered = request(server.addr, "POST", "/mcp", &headers, &body);
    assert_eq!(discovered.status, 200, "{}", discovered.body);
    assert_eq!(
        discovered.json()["result"]["resultType"],
        "complete",
        "{}",
        discovered.body
    );
    let id = discovered.header("x-request-id").unwrap_or_default();
    assert_eq!(id.len(), 36, "a UUID set by the middleware on /mcp: {id:?}");
    assert_ne!(Some(id), health.header("x-request-id"), "a new id per request");
    let mut own = headers.clone();
    own.push(("x-request-id", "client-chose-this"));
    let discovered = request(server.addr, "POST", "/mcp", &own, &body);
    assert_eq!(discovered.status, 200);
    assert_eq!(discovered.header("x-request-id"), Some("client-chose-this"));
    // The handshake era's `initialize` too, with its session header.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let opened = request(
        server.addr,
        "POST",
        "/mcp",
        &[JSON_BODY, ACCEPT_BOTH],
        &init.to_string(),
    );
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert!(opened.header("mcp-session-id").is_some());
    assert!(opened.header("x-request-id").is_some());

    let metrics = request(server.addr, "GET", "/metrics", &[], "");
    assert_eq!(metrics.status, 200);
    assert!(
        metrics
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/plain")),
        "{:?}",
        metrics.headers
    );
}

/// Through axum, MCP still refuses a foreign `Host` or `Origin` (403), a body over the limit
/// (413, before a byte of it is read), and a GET without a session (405, `Allow: POST`); the
/// refusals carry the application's request id too.
#[test]
fn mcp_guarantees_hold_through_axum() {
    let server = start("axum guarantees");
    let (body, headers) = discover();
    let mut foreign = headers.clone();
    foreign.push(("host", "evil.example"));
    let refused = request(server.addr, "POST", "/mcp", &foreign, &body);
    assert_eq!(refused.status, 403, "a foreign Host: {}", refused.body);
    assert!(refused.header("x-request-id").is_some());
    let mut foreign = headers.clone();
    foreign.push(("origin", "https://evil.example"));
    let refused = request(server.addr, "POST", "/mcp", &foreign, &body);
    assert_eq!(refused.status, 403, "a foreign Origin: {}", refused.body);

    // 4 MiB is the limit: a declared 5 MiB is refused at once, the body never sent.
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(head(server.addr, "POST", "/mcp", &headers, 5 << 20).as_bytes())
        .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let too_large = parse(&raw);
    assert_eq!(too_large.status, 413, "{}", too_large.body);

    let get = request(server.addr, "GET", "/mcp", &[("accept", "text/event-stream")], "");
    assert_eq!(get.status, 405, "{}", get.body);
    assert_eq!(get.header("allow"), Some("POST"));
    let mut server = server;
    assert!(server.exit_status().is_none(), "still serving");
}

// ---------------------------------------------------------------------------------------------
// Stopping on SIGTERM.
// ---------------------------------------------------------------------------------------------

/// Idle (one keep-alive connection open after its request), SIGTERM stops it at once: exit 0,
/// nothing listens any more.
#[test]
fn sigterm_while_idle_exits_0_quickly() {
    let mut server = start("axum sigterm idle");
    let (body, headers) = discover();
    let mut idle = TcpStream::connect(server.addr).unwrap();
    let mut req = head(server.addr, "POST", "/mcp", &headers, body.len()).replace("Connection: close\r\n", "");
    req.push_str(&body);
    idle.write_all(req.as_bytes()).unwrap();
    let mut got = [0u8; 4096];
    let n = idle.read(&mut got).unwrap();
    assert!(String::from_utf8_lossy(&got[..n]).starts_with("HTTP/1.1 200"));
    sigterm(&server);
    let (status, took) = exit_within(&mut server, Duration::from_secs(10));
    let log = server.stop();
    assert!(status.success(), "exit status {status}: {log}");
    assert!(took < Duration::from_secs(3), "{took:?}: {log}");
    assert!(log.contains("shut down"), "{log}");
    assert!(TcpStream::connect(server.addr).is_err(), "nothing listens any more");
}

/// A handshake-era call waiting for the user's answer when SIGTERM comes is answered (its
/// question failed, saying the server is shutting down) on its own SSE stream, and the process
/// exits 0 well within its grace.
#[test]
fn sigterm_while_a_handshake_call_waits_on_a_question_answers_it_and_exits_0() {
    let mut server = start("axum sigterm asking");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "0"}}});
    let opened = request(
        server.addr,
        "POST",
        "/mcp",
        &[JSON_BODY, ACCEPT_BOTH],
        &init.to_string(),
    );
    assert_eq!(opened.status, 200, "{}", opened.body);
    let sid = opened.header("mcp-session-id").unwrap().to_owned();
    let in_session = [
        JSON_BODY,
        ACCEPT_BOTH,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(
        request(server.addr, "POST", "/mcp", &in_session, &initialized).status,
        202
    );
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "delete_folder", "arguments": {"path": DRAFTS}}})
    .to_string();
    let mut asking = TcpStream::connect(server.addr).unwrap();
    asking.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    asking
        .write_all(head(server.addr, "POST", "/mcp", &in_session, call.len()).as_bytes())
        .unwrap();
    asking.write_all(call.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&raw).contains("elicitation/create") {
        let n = asking.read(&mut chunk).unwrap();
        assert!(
            n > 0,
            "the stream ended before the question: {}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&chunk[..n]);
    }

    sigterm(&server);
    let begun = Instant::now();
    asking
        .read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("the call's stream did not end: {e}"));
    let stream = parse(&raw);
    assert_eq!(stream.status, 200);
    assert!(stream.header("x-request-id").is_some());
    let messages = sse_messages(&stream.body);
    assert_eq!(messages[0]["method"], "elicitation/create", "{messages:?}");
    let answer = messages
        .iter()
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("the waiting call was not answered: {}", stream.body));
    // The question failed, so the call ends as a tool error naming the resolver and why.
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let why = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(why.contains("confirm_delete"), "the answer says why: {answer}");
    assert!(
        why.contains("the server is shutting down"),
        "the answer says why: {answer}"
    );
    let (status, took) = exit_within(&mut server, Duration::from_secs(10));
    let log = server.stop();
    assert!(status.success(), "exit status {status}: {log}");
    assert!(begun.elapsed() < Duration::from_secs(5), "{took:?}: {log}");
}

// ---------------------------------------------------------------------------------------------
// Metrics.
// ---------------------------------------------------------------------------------------------

/// The values of the series `name` whose labels include every one of `labels`.
fn series(text: &str, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (key, value) = l.rsplit_once(' ')?;
            let (metric, set) = match key.split_once('{') {
                Some((m, rest)) => (m, rest.strip_suffix('}')?),
                None => (key, ""),
            };
            let wanted = metric == name
                && labels
                    .iter()
                    .all(|(k, v)| set.split(',').any(|kv| kv == format!("{k}=\"{v}\"")));
            wanted.then(|| value.parse().ok()).flatten()
        })
        .collect()
}

/// After a session on each era (a confirmation accepted on the handshake era, one declined on
/// 2026-07-28), `GET /metrics` shows the server's series with values that add up.
#[test]
fn metrics_are_scraped_after_a_session() {
    let mut server = start("axum metrics");
    let accepted = drive(
        &mut server,
        "accepts",
        LEGACY,
        &["--answer", r#"{"ok": true}"#],
        &json!([call("delete_folder", json!({"path": DRAFTS}))]),
    );
    accepted.assert_clean_on(LEGACY);
    accepted.assert_text(accepted.outcomes(1)[0], "deleted /tmp/notes/drafts");
    let declined = drive(
        &mut server,
        "declines",
        MODERN,
        &["--answer", "decline"],
        &json!([
            call("delete_folder", json!({"path": IDEAS})),
            call("add", json!({"a": 1, "b": 2}))
        ]),
    );
    declined.assert_clean_on(MODERN);
    declined.assert_text(declined.outcomes(2)[0], "declined: folder not deleted");

    let scraped = request(server.addr, "GET", "/metrics", &[], "");
    assert_eq!(scraped.status, 200);
    let text = &scraped.body;
    let log = text_of(&server.stderr);
    let total = |name: &str, labels: &[(&str, &str)]| -> f64 {
        let values = series(text, name, labels);
        assert!(
            !values.is_empty(),
            "no series {name} with {labels:?} in /metrics:\n{text}\n--- server stderr ---\n{log}"
        );
        values.iter().sum()
    };
    // Each era's delete, the 2026-07-28 one in two rounds (the question, the retry), and `add`.
    let calls = total("mcp_requests_total", &[("method", "tools/call")]);
    assert!(calls >= 4.0, "tools/call requests: {calls}\n{text}");
    let ok = total(
        "mcp_calls_total",
        &[("kind", "tool"), ("name", "delete_folder"), ("outcome", "ok")],
    );
    assert!(ok >= 2.0, "delete_folder calls ending ok: {ok}\n{text}");
    let asked = total("mcp_questions_asked_total", &[("name", "delete_folder")]);
    assert!(asked >= 2.0, "questions asked: {asked}\n{text}");
    for action in ["accept", "decline"] {
        let answered = total(
            "mcp_questions_answered_total",
            &[("name", "delete_folder"), ("action", action)],
        );
        assert!(answered >= 1.0, "answers {action}: {answered}\n{text}");
    }
    // A summary (the exporter's default) or a histogram: both have `_count` and `_sum`.
    let timed = [("kind", "tool"), ("name", "delete_folder")];
    let count = total("mcp_call_duration_seconds_count", &timed);
    let sum = total("mcp_call_duration_seconds_sum", &timed);
    assert!(count >= 3.0, "timed rounds of delete_folder: {count}\n{text}");
    assert!(
        sum.is_finite() && sum > 0.0 && sum < 60.0,
        "seconds in delete_folder: {sum}\n{text}"
    );
    let quantiles = series(text, "mcp_call_duration_seconds", &timed);
    let buckets = series(text, "mcp_call_duration_seconds_bucket", &timed);
    assert!(
        !quantiles.is_empty() || !buckets.is_empty(),
        "neither quantiles nor buckets of mcp_call_duration_seconds\n{text}"
    );
    let open = total("mcp_sessions_open", &[]);
    assert!(
        (0.0..=1.0).contains(&open),
        "handshake sessions open after the client left: {open}\n{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// `Router::nest_service`, in-process.
// ---------------------------------------------------------------------------------------------

/// Nested with `Router::nest_service("/mcp", …)`, the prefix is stripped, so the service serves
/// `HttpOptions::path("/")`: `POST /mcp` reaches MCP, a path under the prefix that is not the
/// endpoint is MCP's 404, the application's own routes answer, and `Host` is still checked.
#[test]
fn nest_service_strips_the_prefix() {
    use axum::Router;
    use axum::routing::get;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let addr = rt.block_on(async {
        let mcp = notes::server()
            .into_http_service(mcp_resolve::HttpOptions::default().path("/"))
            .unwrap();
        let app = Router::new()
            .route("/", get(|| async { "the application" }))
            .nest_service("/mcp", mcp);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    });
    let (body, headers) = discover();
    let discovered = request(addr, "POST", "/mcp", &headers, &body);
    assert_eq!(discovered.status, 200, "{}", discovered.body);
    assert_eq!(discovered.json()["id"], 1);
    assert_eq!(discovered.json()["result"]["resultType"], "complete");

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }}})
    .to_string();
    let mut listing = headers.clone();
    listing.retain(|(k, _)| *k != "mcp-method");
    listing.push(("mcp-method", "tools/list"));
    let tools = request(addr, "POST", "/mcp", &listing, &list);
    assert_eq!(tools.status, 200, "{}", tools.body);
    let names: Vec<String> = tools.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"delete_folder".to_owned()), "{names:?}");

    let elsewhere = request(addr, "POST", "/mcp/elsewhere", &headers, &body);
    assert_eq!(elsewhere.status, 404, "not the endpoint: {}", elsewhere.body);
    let root = request(addr, "GET", "/", &[], "");
    assert_eq!((root.status, root.body.as_str()), (200, "the application"));
    let mut foreign = headers.clone();
    foreign.push(("host", "evil.example"));
    assert_eq!(request(addr, "POST", "/mcp", &foreign, &body).status, 403);
    drop(rt);
}
