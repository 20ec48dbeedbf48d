//! `mcp-load resume`: handshake-era calls that ask, their connections cut at random points and
//! resumed with `Last-Event-ID`, against one server (the `conformance` example: its
//! `test_elicitation` asks every time).
//!
//! `--sessions` sessions (2025-11-25, elicitation declared) each run their share of `--calls`
//! one after another. Every call is `test_elicitation` on a connection of its own, answered with
//! a username unique to the call (`u-<i>`), so a result meant for another call is caught. Each
//! call's stream is cut (the connection dropped) at a point drawn from a seeded generator: not
//! at all, after the priming event, after the question, or after the answer went up (before the
//! result is read); the driver then resumes with `GET` + `Last-Event-ID` (the last id it read),
//! answers if the question had not come yet, and reads on to the result. A call is **lost** when
//! no result arrives within `--call-timeout`, **wrong** when the result is not its own, and a
//! **duplicate** when an event id reaches the driver twice within the call (a replay going back
//! too far) or a second result arrives. The server's resident set (`--pid`) is read before, at
//! the end, and after `--settle` seconds, when the streams read to their end have stopped
//! lingering (30 s).

use crate::replicas::{lock, status_kib};
use crate::wire::http::Events;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const VERSION: &str = "2025-11-25";

struct Options {
    addr: String,
    calls: usize,
    sessions: usize,
    seed: u64,
    pid: Option<u32>,
    call_timeout: Duration,
    settle: Duration,
}

fn usage() -> ! {
    eprintln!(
        "usage: mcp-load resume --addr HOST:PORT [--calls N] [--sessions S] [--seed N] [--pid PID]\n\
         \x20      [--call-timeout SECS] [--settle SECS]"
    );
    std::process::exit(2)
}

fn parse(args: &[String]) -> Options {
    let mut o = Options {
        addr: String::new(),
        calls: 1000,
        sessions: 50,
        seed: 1,
        pid: None,
        call_timeout: Duration::from_secs(30),
        settle: Duration::from_secs(35),
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--addr" => o.addr = val(),
            "--calls" => o.calls = val().parse().unwrap_or_else(|_| usage()),
            "--sessions" => o.sessions = val().parse().unwrap_or_else(|_| usage()),
            "--seed" => o.seed = val().parse().unwrap_or_else(|_| usage()),
            "--pid" => o.pid = Some(val().parse().unwrap_or_else(|_| usage())),
            "--call-timeout" => o.call_timeout = Duration::from_secs(val().parse().unwrap_or_else(|_| usage())),
            "--settle" => o.settle = Duration::from_secs(val().parse().unwrap_or_else(|_| usage())),
            _ => usage(),
        }
    }
    if o.addr.is_empty() || o.sessions == 0 {
        usage()
    }
    o
}

/// Where a call's connection is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    Never,
    Priming,
    Question,
    Answer,
}

/// A small seeded generator (xorshift64*): the same seed cuts the same calls the same way.
fn draw(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[derive(Default)]
struct Tally {
    done: AtomicUsize,
    lost: AtomicUsize,
    wrong: AtomicUsize,
    duplicates: AtomicUsize,
    resumed: AtomicUsize,
    problems: Mutex<Vec<String>>,
}

/// One request on a new connection; the response head and its body, read as it comes.
async fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: String) -> Result<(u16, Incoming), String> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut req = hyper::Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", addr);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
    let resp = sender.send_request(req).await.map_err(|e| format!("send: {e}"))?;
    Ok((resp.status().as_u16(), resp.into_body()))
}

async fn session(addr: &str) -> Result<String, String> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "mcp-load", "version": "0"}}});
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let req = hyper::Request::post("/mcp")
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(init.to_string())))
        .map_err(|e| e.to_string())?;
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let sid = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .ok_or("no session id")?
        .to_owned();
    let _ = resp.into_body().collect().await;
    let h = headers(&sid);
    let hh: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, body) = request(addr, "POST", &hh, note).await?;
    let _ = body.collect().await;
    if status != 202 {
        return Err(format!("notifications/initialized: {status}"));
    }
    Ok(sid)
}

fn headers(sid: &str) -> Vec<(&'static str, String)> {
    vec![
        ("content-type", "application/json".into()),
        ("accept", "application/json, text/event-stream".into()),
        ("mcp-session-id", sid.into()),
        ("mcp-protocol-version", VERSION.into()),
    ]
}

/// One call, cut at `cut`, resumed, checked.
async fn call(addr: &str, sid: &str, i: usize, cut: Cut, t: &Tally) -> Result<(), String> {
    let h = headers(sid);
    let hh: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": format!("call {i}")}}});
    let (status, stream) = request(addr, "POST", &hh, body.to_string()).await?;
    if status != 200 {
        return Err(format!("tools/call: HTTP {status}"));
    }
    let mut events = Events::new(stream);
    let mut seen: Vec<String> = Vec::new();
    let mut last: Option<String> = None;
    let mut question: Option<Value> = None;
    let mut results: Vec<Value> = Vec::new();
    let answer_for = |q: &Value| {
        json!({"jsonrpc": "2.0", "id": q["id"], "result": {"action": "accept",
            "content": {"username": format!("u-{i}"), "email": format!("u{i}@example.com")}}})
        .to_string()
    };
    let answer = |q: Value| {
        let body = answer_for(&q);
        let hh = hh.clone();
        async move {
            let (status, b) = request(addr, "POST", &hh, body).await?;
            let _ = b.collect().await;
            if status == 202 {
                Ok(())
            } else {
                Err(format!("answer: HTTP {status}"))
            }
        }
    };
    // Every id read, in order: one read twice is a duplicate.
    let note = |id: &Option<String>, seen: &mut Vec<String>, last: &mut Option<String>| {
        if let Some(id) = id {
            if seen.contains(id) {
                t.duplicates.fetch_add(1, Ordering::Relaxed);
            }
            seen.push(id.clone());
            *last = Some(id.clone());
        }
    };
    // The first stream, up to the cut.
    let mut cut_done = cut == Cut::Never;
    loop {
        let Some((id, data)) = events.next().await else { break };
        note(&id, &mut seen, &mut last);
        if data.is_empty() {
            if cut == Cut::Priming {
                cut_done = true;
                break;
            }
            continue;
        }
        let m: Value = serde_json::from_str(&data).map_err(|e| format!("event: {e}"))?;
        if m["method"] == "elicitation/create" {
            question = Some(m.clone());
            if cut == Cut::Question {
                cut_done = true;
                break;
            }
            answer(m).await?;
            if cut == Cut::Answer {
                cut_done = true;
                break;
            }
        } else if m["id"] == json!(i) {
            results.push(m);
            break;
        }
    }
    drop(events);
    if !cut_done && results.is_empty() {
        return Err("the stream ended before its result, uncut".into());
    }
    if cut == Cut::Question
        && let Some(q) = question.clone()
    {
        // The question arrived, then the connection broke: the person answers all the same.
        answer(q).await?;
    }
    if results.is_empty() {
        t.resumed.fetch_add(1, Ordering::Relaxed);
        let last_id = last.clone().ok_or("no event id to resume from")?;
        let g = [
            ("accept", "text/event-stream"),
            ("mcp-session-id", sid),
            ("mcp-protocol-version", VERSION),
            ("last-event-id", last_id.as_str()),
        ];
        let (status, stream) = request(addr, "GET", &g, String::new()).await?;
        if status != 200 {
            return Err(format!("resume: HTTP {status}"));
        }
        let mut events = Events::new(stream);
        while let Some((id, data)) = events.next().await {
            note(&id, &mut seen, &mut last);
            if data.is_empty() {
                continue;
            }
            let m: Value = serde_json::from_str(&data).map_err(|e| format!("event: {e}"))?;
            if m["method"] == "elicitation/create" {
                if question.is_some() {
                    t.duplicates.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                question = Some(m.clone());
                answer(m).await?;
            } else if m["id"] == json!(i) {
                results.push(m);
            }
        }
    }
    match results.as_slice() {
        [] => Err("no result".into()),
        [r] => {
            let want = format!("\"u-{i}\"");
            let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
            if text.contains(&want) {
                Ok(())
            } else {
                t.wrong.fetch_add(1, Ordering::Relaxed);
                Err(format!("wrong result: {text}"))
            }
        }
        _ => {
            t.duplicates.fetch_add(1, Ordering::Relaxed);
            Err("more than one result".into())
        }
    }
}

pub(crate) fn main(args: &[String]) -> i32 {
    let o = parse(args);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(run(o))
}

async fn run(o: Options) -> i32 {
    let rss = |when: &str| {
        let kib = o.pid.and_then(|p| status_kib(p, "VmRSS:"));
        eprintln!(
            "resume: server VmRSS {when}: {} KiB",
            kib.map_or("?".into(), |k| k.to_string())
        );
        kib
    };
    let before = rss("before");
    let tally = std::sync::Arc::new(Tally::default());
    let started = Instant::now();
    let per = o.calls.div_ceil(o.sessions);
    let cuts = std::sync::Arc::new(Mutex::new([0usize; 4]));
    let mut workers = Vec::new();
    for s in 0..o.sessions {
        let (addr, t, cuts) = (o.addr.clone(), tally.clone(), cuts.clone());
        let (calls, seed, timeout) = (o.calls, o.seed, o.call_timeout);
        workers.push(tokio::spawn(async move {
            let sid = match session(&addr).await {
                Ok(s) => s,
                Err(e) => {
                    lock(&t.problems).push(format!("session: {e}"));
                    t.lost
                        .fetch_add(per.min(calls.saturating_sub(s * per)), Ordering::Relaxed);
                    return;
                }
            };
            let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (s as u64 + 1);
            for i in (s * per)..((s + 1) * per).min(calls) {
                let cut = match draw(&mut state) % 4 {
                    0 => Cut::Never,
                    1 => Cut::Priming,
                    2 => Cut::Question,
                    _ => Cut::Answer,
                };
                lock(&cuts)[cut as usize] += 1;
                match tokio::time::timeout(timeout, call(&addr, &sid, i, cut, &t)).await {
                    Ok(Ok(())) => {
                        t.done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(Err(e)) => {
                        t.lost.fetch_add(1, Ordering::Relaxed);
                        lock(&t.problems).push(format!("call {i} ({cut:?}): {e}"));
                    }
                    Err(_) => {
                        t.lost.fetch_add(1, Ordering::Relaxed);
                        lock(&t.problems).push(format!("call {i} ({cut:?}): no result within {timeout:?}"));
                    }
                }
            }
            // Ends its session, as a client that is done does.
            let h = [("mcp-session-id", sid.as_str())];
            if let Ok((_, body)) = request(&addr, "DELETE", &h, String::new()).await {
                let _ = body.collect().await;
            }
        }));
    }
    for w in workers {
        let _ = w.await;
    }
    let elapsed = started.elapsed();
    let end = rss("at the end");
    if !o.settle.is_zero() {
        tokio::time::sleep(o.settle).await;
    }
    let settled = rss(&format!("{} s later", o.settle.as_secs()));
    let (done, lost, wrong, dup, resumed) = (
        tally.done.load(Ordering::Relaxed),
        tally.lost.load(Ordering::Relaxed),
        tally.wrong.load(Ordering::Relaxed),
        tally.duplicates.load(Ordering::Relaxed),
        tally.resumed.load(Ordering::Relaxed),
    );
    let cuts = *lock(&cuts);
    let report = json!({
        "calls": o.calls, "completed": done, "lost": lost, "wrong": wrong, "duplicates": dup,
        "resumed": resumed, "sessions": o.sessions, "seed": o.seed,
        "cuts": {"never": cuts[0], "after_priming": cuts[1], "after_question": cuts[2], "after_answer": cuts[3]},
        "seconds": elapsed.as_secs_f64(), "calls_per_s": done as f64 / elapsed.as_secs_f64(),
        "rss_kib": {"before": before, "end": end, "settled": settled},
    });
    println!("{report}");
    let problems = lock(&tally.problems);
    let wrong_ones = problems.iter().filter(|p| p.contains("wrong")).take(3);
    for p in problems
        .iter()
        .filter(|p| !p.contains("wrong"))
        .take(7)
        .chain(wrong_ones)
    {
        eprintln!("resume: {p}");
    }
    i32::from(done != o.calls || lost > 0 || wrong > 0 || dup > 0)
}
