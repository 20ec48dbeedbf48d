//! Interop: the official MCP Python SDK client (`mcp==2.3.0`, through
//! `tests/interop/py_updates.py`) watches a resource of the `watch` example, over stdio and over
//! Streamable HTTP. On 2025-11-25 (where over HTTP the SDK opens the session's GET stream
//! itself): it subscribes, a tool call changes the resource and the SDK receives
//! `notifications/resources/updated` for it, typed, and reads the new contents; after
//! `resources/unsubscribe` nothing more comes. On 2026-07-28 the same through
//! `subscriptions/listen` (`Client.listen`): the SDK's typed acknowledgment and event, and the
//! stream's end unsubscribes.
//!
//! The stdio test builds the example in the debug profile through `$CARGO` (once per test
//! binary); the HTTP test serves the same server in-process. `scripts/setup-python.sh` makes the
//! venv on first use.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

#[allow(dead_code)]
#[path = "../examples/watch.rs"]
mod watch;

mod support;

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{HttpChild, MANIFEST_DIR, python, watch_bin};

/// How long one driver run may take before it is killed.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs the driver with `args`; its events, or a panic with everything it printed.
fn drive(args: &[&str]) -> Vec<Value> {
    let script = Path::new(MANIFEST_DIR).join("tests/interop/py_updates.py");
    let mut child = Command::new(python())
        .arg(script)
        .args(["--uri", "notes://today", "--tool", "write_today"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the driver starts");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > DEADLINE {
            child.kill().ok();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let ok = out.status.success() && events.last() == Some(&json!({"event": "done"}));
    assert!(
        ok,
        "driver failed ({:?}):\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    events
}

/// What every run must show, whatever the transport.
fn check(events: &[Value]) {
    let names: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "connected",
            "subscribed",
            "result",
            "updated",
            "read",
            "unsubscribed",
            "result",
            "quiet",
            "done"
        ],
        "{events:#?}"
    );
    assert_eq!(events[0]["protocol_version"], "2025-11-25");
    assert_eq!(events[0]["capabilities"]["resources"], json!({"subscribe": true}));
    assert_eq!(events[2]["text"], "saved; 1 subscriber(s) told", "{events:#?}");
    assert_eq!(events[3]["uri"], "notes://today");
    assert_eq!(events[4]["text"], "v1", "the client read what changed");
    assert_eq!(
        events[6]["text"], "saved; 0 subscriber(s) told",
        "unsubscribed: nobody to tell"
    );
}

#[test]
fn the_python_sdk_is_told_of_updates_over_stdio() {
    let bin = watch_bin().to_str().unwrap().to_string();
    let events = drive(&["--", &bin]);
    check(&events);
    assert_eq!(events[2]["calls"], 1, "on stdio the first change is told");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_is_told_of_updates_on_its_get_stream_over_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = watch::server();
    let updates = server.resource_updates();
    tokio::spawn(server.serve_http_on(listener, mcp_resolve::HttpOptions::default()));
    let events = tokio::task::spawn_blocking(move || drive(&["--url", &url]))
        .await
        .unwrap();
    check(&events);
    assert_eq!(updates.subscribers("notes://today"), 0);
}

/// What a `--listen` run (2026-07-28) must show, whatever the transport.
fn check_listen(events: &[Value]) {
    let names: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "connected",
            "listening",
            "result",
            "updated",
            "read",
            "unsubscribed",
            "result",
            "done"
        ],
        "{events:#?}"
    );
    assert_eq!(events[0]["protocol_version"], "2026-07-28");
    assert_eq!(events[0]["capabilities"]["resources"], json!({"subscribe": true}));
    assert_eq!(
        events[1]["honored"],
        json!({"resourceSubscriptions": ["notes://today"]})
    );
    assert_eq!(events[2]["text"], "saved; 1 subscriber(s) told", "{events:#?}");
    assert_eq!(events[3]["uri"], "notes://today");
    assert_eq!(events[4]["text"], "v1");
    assert_eq!(events[6]["text"], "saved; 0 subscriber(s) told");
}

#[test]
fn the_python_sdk_listens_for_updates_over_stdio() {
    let bin = watch_bin().to_str().unwrap().to_string();
    check_listen(&drive(&["--listen", "--", &bin]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_listens_for_updates_over_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = watch::server();
    let updates = server.resource_updates();
    tokio::spawn(server.serve_http_on(listener, mcp_resolve::HttpOptions::default()));
    let events = tokio::task::spawn_blocking(move || drive(&["--listen", "--url", &url]))
        .await
        .unwrap();
    check_listen(&events);
    assert_eq!(updates.subscribers("notes://today"), 0);
}

/// One raw 2026-07-28 POST to `url`: its response body as it arrives.
async fn post(url: &str, method: &str, name: Option<&str>, params: Value) -> hyper::body::Incoming {
    use http_body_util::Full;
    let uri: http::Uri = url.parse().unwrap();
    let authority = uri.authority().unwrap().clone();
    let tcp = tokio::net::TcpStream::connect(authority.as_str()).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": "L1", "method": method, "params": params}).to_string();
    let mut req = http::Request::post(uri.path())
        .header("host", authority.as_str())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        req = req.header("mcp-name", name);
    }
    let req = req.body(Full::new(bytes::Bytes::from(body))).unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(10), sender.send_request(req))
        .await
        .expect("a response head within 10 s")
        .unwrap();
    assert_eq!(resp.status(), 200, "{method} to {url}");
    resp.into_body()
}

/// The next `n` SSE `data:` messages of `body`, within 10 s.
async fn messages(body: &mut hyper::body::Incoming, buffer: &mut String, n: usize) -> Vec<Value> {
    use http_body_util::BodyExt;
    let mut out = Vec::new();
    let read = async {
        while out.len() < n {
            if let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                // A priming event (ours) has empty data.
                let data = block.lines().find_map(|l| l.strip_prefix("data: "));
                if let Some(data) = data.filter(|d| !d.trim().is_empty()) {
                    out.push(serde_json::from_str(data).unwrap());
                }
                continue;
            }
            let frame = body.frame().await.expect("the stream goes on").unwrap();
            if let Ok(data) = frame.into_data() {
                // Lines may end with CRLF (the Python SDK's SSE) or LF (ours).
                buffer.push_str(std::str::from_utf8(&data).unwrap());
                *buffer = buffer.replace("\r\n", "\n");
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the messages within 10 s");
    out
}

/// What a server sends on a listen stream for `notes://today`: the acknowledgment, then the
/// update a `write_today` call causes.
async fn listen_frames(url: &str) -> (Value, Value) {
    let filter = json!({"notifications": {"resourceSubscriptions": ["notes://today"]}});
    let mut stream = post(url, "subscriptions/listen", None, filter).await;
    let mut buffer = String::new();
    let ack = messages(&mut stream, &mut buffer, 1).await.remove(0);
    let call = json!({"name": "write_today", "arguments": {"text": "v1"}});
    drop(post(url, "tools/call", Some("write_today"), call).await);
    let update = messages(&mut stream, &mut buffer, 1).await.remove(0);
    (ack, update)
}

/// The official Python SDK serves `subscriptions/listen` itself: the same raw listen against its
/// twin of the `watch` example (`tests/interop/py_watch_server.py`) and against ours gets the
/// same acknowledgment and the same tagged update, frame for frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_frames_match_the_python_sdk_servers() {
    let script = Path::new(MANIFEST_DIR).join("tests/interop/py_watch_server.py");
    let mut peer = tokio::task::spawn_blocking(move || {
        HttpChild::start_with(python(), &[script.as_os_str()], "python watch", &|_| Vec::new())
    })
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ours = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(watch::server().serve_http_on(listener, mcp_resolve::HttpOptions::default()));
    let theirs = listen_frames(&peer.url()).await;
    let ours = listen_frames(&ours).await;
    assert_eq!(
        theirs.0,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "L1"},
            "notifications": {"resourceSubscriptions": ["notes://today"]},
        }}),
        "the Python SDK's acknowledgment"
    );
    assert_eq!(ours.0, theirs.0, "the acknowledgment");
    assert_eq!(ours.1, theirs.1, "the update");
    assert!(
        peer.exit_status().is_none(),
        "the Python server is still up: {}",
        peer.stop()
    );
}
