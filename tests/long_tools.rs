//! Tools that compute or block for long (docs/tool.md, "Tools that compute or block for long"):
//! on stdio the connection polls each new call once where it reads requests, so a call that is
//! done at once costs no task and no thread hand-off (tests/syscalls.rs). The cost: a body that
//! blocks before its first `.await` holds its connection meanwhile. Handed to
//! `tokio::task::spawn_blocking`, the same work holds nothing, and the connection's next calls
//! answer while it runs. Both halves are held here, through the stdio connection loop over an
//! in-memory pipe, on the multi-thread runtime `#[tokio::main]` gives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long the slow tools take.
const WORK: Duration = Duration::from_millis(600);

/// Echo the text back.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Blocks its thread before it awaits anything: what the docs tell authors not to do.
#[tool]
async fn block_inline() -> String {
    std::thread::sleep(WORK);
    "blocked".into()
}

/// The same work, handed to tokio's blocking pool.
#[tool]
async fn block_aside() -> Result<String, String> {
    tokio::task::spawn_blocking(|| std::thread::sleep(WORK))
        .await
        .map(|()| "done aside".to_owned())
        .map_err(|e| format!("the work failed: {e}"))
}

/// Sends a slow call, then an echo at once, on one connection; returns the lines in the order
/// they came, each with when it came (from the first send).
async fn slow_then_echo(slow: &str) -> Vec<(String, Duration)> {
    let server = Server::new("long").tool(echo).tool(block_inline).tool(block_aside);
    let (client, served) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(served);
    tokio::spawn(mcp_resolve::bench::serve_lines(server, r, w));
    let (from_server, mut to_server) = tokio::io::split(client);
    let mut lines = BufReader::new(from_server).lines();
    let envelope = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let start = Instant::now();
    let frames = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"{slow}\",\"arguments\":{{}},{envelope}}}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"quick\"}},{envelope}}}}}\n"
    );
    to_server.write_all(frames.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    for _ in 0..2 {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the server closed the pipe");
        got.push((line, start.elapsed()));
    }
    got
}

#[tokio::test(flavor = "multi_thread")]
async fn work_handed_to_spawn_blocking_holds_nothing_and_the_next_call_answers_first() {
    let got = slow_then_echo("block_aside").await;
    assert!(got[0].0.contains("quick"), "the echo answers first: {got:?}");
    assert!(
        got[0].1 < WORK / 2,
        "the echo did not wait for the work ({:?}): {got:?}",
        got[0].1
    );
    assert!(got[1].0.contains("done aside"), "{got:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_blocks_before_awaiting_holds_its_connection_until_it_is_done() {
    let got = slow_then_echo("block_inline").await;
    assert!(got[0].0.contains("blocked"), "the blocking call answers first: {got:?}");
    assert!(got[1].0.contains("quick"), "{got:?}");
    assert!(
        got[1].1 >= WORK,
        "the echo was read only after the blocking body returned ({:?}): {got:?}",
        got[1].1
    );
}
