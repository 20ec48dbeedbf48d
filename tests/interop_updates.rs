//! Interop: the official MCP Python SDK client (`mcp==2.3.0`, through
//! `tests/interop/py_updates.py`) watches a resource of the `watch` example on 2025-11-25, over
//! stdio and over Streamable HTTP (where the SDK opens the session's GET stream itself): it
//! subscribes, a tool call changes the resource and the SDK receives
//! `notifications/resources/updated` for it, typed, and reads the new contents; after
//! `resources/unsubscribe` nothing more comes.
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
use support::{MANIFEST_DIR, python, watch_bin};

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
