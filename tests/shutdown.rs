//! The `notes` example stops gracefully on SIGTERM (as a container runtime or systemd stops it):
//! it refuses new connections, lets the call in flight finish, and exits with status 0 well
//! within its grace (`HttpOptions::shutdown_grace`, 30 s). The steps of the shutdown itself are
//! tested in `tests/http.rs` `shutting_down_finishes_calls_in_flight_refuses_new_connections_and_returns`.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

#[test]
fn sigterm_stops_the_notes_server_gracefully_and_it_exits_0() {
    let mut server = support::HttpChild::start(support::notes_bin(), "notes shutdown", &|_| Vec::new());
    // A keep-alive connection with one request answered: idle when the signal comes.
    let mut idle = std::net::TcpStream::connect(server.addr).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    write!(
        idle,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr,
        body.len()
    )
    .unwrap();
    let mut got = [0u8; 4096];
    let n = idle.read(&mut got).unwrap();
    assert!(String::from_utf8_lossy(&got[..n]).starts_with("HTTP/1.1 200"));
    let begun = Instant::now();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(10),
            "still running 10 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let log = server.stop();
    assert!(status.success(), "exit status {status}: {log}");
    assert!(log.contains("shutting down") && log.contains("shut down"), "{log}");
    assert!(begun.elapsed() < Duration::from_secs(5), "{:?}: {log}", begun.elapsed());
    assert!(
        std::net::TcpStream::connect(server.addr).is_err(),
        "nothing listens any more"
    );
}

/// stdio ends cleanly on EOF: the client closes stdin with calls answered and one just sent;
/// every answer is written, and the server exits with status 0.
#[test]
fn the_notes_server_on_stdio_answers_what_it_read_and_exits_0_at_eof() {
    let mut child = std::process::Command::new(support::notes_bin())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    let begun = Instant::now();
    drop(stdin);
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(10),
            "still running 10 s after EOF"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit status {status}");
    let answers: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 2, "{out}");
    assert_eq!(answers[1]["id"], 2, "{out}");
    assert_eq!(answers[1]["result"]["structuredContent"]["result"], 5, "{out}");
}
