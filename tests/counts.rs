//! Counts CI can hold (issue 31, point 3): timings on shared machines are noise, but how many
//! allocations a call makes is not. Each call below runs through the stdio connection loop (the
//! `bench` door `serve_lines`, the loop `serve_stdio` runs) over an in-memory pipe, on one
//! thread, with dhat counting every allocation of the process; the client's own work (reading
//! a state out of a response, writing the retry) is counted apart and taken off. A change that
//! makes a call allocate more fails here, naming the workload, until its bound is raised here
//! on purpose (with docs/PERFORMANCE.md saying why).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Allocations per call, at most: the counts reached on 2026-12-07 (issue 31: 25, 25, 97 and
/// 158 at `c95a882`; the method and tool names borrowed, a body's future boxed once; one fewer
/// since a call's slot keeps its two permits in place of a `Vec`, one fewer again per line
/// read since a stdio connection reads each line into the last one's buffer, and one fewer per
/// echo since a call that is done at once is polled where it stands, unboxed; a call with
/// resolvers, boxed once whole, no longer boxes them apart: one fewer per round; an answer's
/// text written once at its size, where serde_json's buffer was grown and shrunk: one or two
/// fewer per answer; a handshake-era call's asker kept in its context's allocation: one fewer
/// per call; on 2026-07-28 a `_meta` that repeats the last request's not read again, so not
/// skipped with serde_json's stack of the objects it is in: one fewer per echo), whole.
const ECHO_2025: u64 = 11;
const ECHO_2026: u64 = 11;
/// A call that asks one question: the handshake era's call and its `elicitation/create`
/// exchange; on 2026-07-28 both rounds (the `InputRequiredResult` and the retry).
const ASK_2025: u64 = 79;
const ASK_2026: u64 = 138;

/// Calls measured per workload (after as many to warm up).
const CALLS: u64 = 500;

#[derive(Clone, Debug, FormSchema)]
struct UserInfo {
    name: String,
}

#[resolver]
async fn who() -> Resolution<UserInfo> {
    Elicit::form("What is your name?").into()
}

/// Echo the text back.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Ask the user's name, then greet them.
#[tool]
async fn ask_name(#[resolve(who)] user: ElicitationResult<UserInfo>) -> String {
    match user {
        ElicitationResult::Accepted(u) => format!("hello {}", u.name),
        _ => "no".into(),
    }
}

fn server() -> Server {
    Server::new("counts")
        .tool(echo)
        .tool(ask_name)
        // Thousands of questions from one caller within the minute: not what is counted here.
        .question_limit(u32::MAX, std::time::Duration::from_secs(60))
        .unlimited_call_rate()
}

/// Blocks allocated so far by the whole process.
fn allocated() -> u64 {
    dhat::HeapStats::get().total_blocks
}

struct Pipe {
    to_server: WriteHalf<DuplexStream>,
    from_server: BufReader<ReadHalf<DuplexStream>>,
    line: Vec<u8>,
}

impl Pipe {
    fn start() -> Self {
        let (client, served) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(served);
        tokio::spawn(mcp_resolve::bench::serve_lines(server(), r, w));
        let (from_server, to_server) = tokio::io::split(client);
        Pipe {
            to_server,
            from_server: BufReader::with_capacity(1 << 16, from_server),
            line: Vec::with_capacity(1 << 14),
        }
    }

    async fn send(&mut self, frame: &[u8]) {
        self.to_server.write_all(frame).await.unwrap();
    }

    /// The next line from the server, into the pipe's own buffer.
    async fn next(&mut self) -> &[u8] {
        self.line.clear();
        self.from_server.read_until(b'\n', &mut self.line).await.unwrap();
        assert!(!self.line.is_empty(), "the server closed the pipe");
        &self.line
    }
}

const ENVELOPE: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

fn echo_frame(modern: bool) -> Vec<u8> {
    let meta = if modern { format!(",{ENVELOPE}") } else { String::new() };
    format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}}{meta}}}}}"#)
        .into_bytes()
        .into_iter()
        .chain(*b"\n")
        .collect()
}

fn ask_frame(modern: bool) -> Vec<u8> {
    let meta = if modern { format!(",{ENVELOPE}") } else { String::new() };
    format!(r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"ask_name","arguments":{{}}{meta}}}}}"#)
        .into_bytes()
        .into_iter()
        .chain(*b"\n")
        .collect()
}

/// The client's work on a 2026-07-28 `InputRequiredResult`: the retry frame.
fn retry_frame(first: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(first).unwrap();
    let state = &v["result"]["requestState"];
    assert!(state.is_string(), "an InputRequiredResult: {v}");
    let key = v["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut frame = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {
            "name": "ask_name", "arguments": {},
            "inputResponses": {key: {"action": "accept", "content": {"name": "bench"}}},
            "requestState": state,
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}},
        }
    }))
    .unwrap();
    frame.push(b'\n');
    frame
}

/// The client's work on a handshake-era `elicitation/create`: the answer frame.
fn answer_frame(request: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(request).unwrap();
    assert_eq!(v["method"], "elicitation/create", "{v}");
    let mut frame = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": v["id"], "result": {"action": "accept", "content": {"name": "bench"}}
    }))
    .unwrap();
    frame.push(b'\n');
    frame
}

/// One echo call.
async fn echo_call(pipe: &mut Pipe, frame: &[u8]) {
    pipe.send(frame).await;
    let line = pipe.next().await;
    assert!(
        line.windows(5).any(|w| w == b"hello"),
        "{}",
        String::from_utf8_lossy(line)
    );
}

/// One call that asks; returns the allocations the client made for it (to be taken off).
async fn ask_call(pipe: &mut Pipe, first: &[u8], modern: bool) -> u64 {
    pipe.send(first).await;
    let line = pipe.next().await.to_vec();
    let before = allocated();
    let reply = if modern {
        retry_frame(&line)
    } else {
        answer_frame(&line)
    };
    let client = allocated() - before;
    pipe.send(&reply).await;
    let done = pipe.next().await;
    assert!(
        done.windows(11).any(|w| w == b"hello bench"),
        "{}",
        String::from_utf8_lossy(done)
    );
    // The client's copy of the line, and the frame it built (dropped here).
    client + 1
}

/// Allocations per call of `CALLS` calls, after as many to warm up.
async fn per_call(pipe: &mut Pipe, workload: &str) -> u64 {
    let modern = workload.ends_with("2026");
    let asks = workload.starts_with("ask");
    let frame = if asks { ask_frame(modern) } else { echo_frame(modern) };
    let run = async |pipe: &mut Pipe| {
        let mut client = 0;
        for _ in 0..CALLS {
            if asks {
                client += ask_call(pipe, &frame, modern).await;
            } else {
                echo_call(pipe, &frame).await;
            }
        }
        client
    };
    run(pipe).await;
    let before = allocated();
    let client = run(pipe).await;
    let total = allocated() - before - client;
    total.div_ceil(CALLS)
}

#[test]
fn allocations_per_call_stay_at_or_under_the_counts_reached() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let counts = runtime.block_on(async {
        let mut handshake = Pipe::start();
        handshake
            .send(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"counts","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#)
            .await;
        handshake.next().await;
        let echo_2025 = per_call(&mut handshake, "echo 2025").await;
        let ask_2025 = per_call(&mut handshake, "ask 2025").await;
        let mut modern = Pipe::start();
        let echo_2026 = per_call(&mut modern, "echo 2026").await;
        let ask_2026 = per_call(&mut modern, "ask 2026").await;
        [
            ("echo, 2025-11-25", echo_2025, ECHO_2025),
            ("one question, 2025-11-25", ask_2025, ASK_2025),
            ("echo, 2026-07-28", echo_2026, ECHO_2026),
            ("one question (two rounds), 2026-07-28", ask_2026, ASK_2026),
        ]
    });
    eprintln!("allocations per call: {counts:?}");
    for (workload, reached, bound) in counts {
        assert!(
            reached <= bound,
            "{workload}: {reached} allocations per call, over the {bound} reached before (tests/counts.rs)"
        );
    }
}
