//! `mcp-load`: the load driver of `docs/PERFORMANCE.md`. It drives any MCP server the same way,
//! so figures for different frameworks come from one harness.
//!
//! ```text
//! mcp-load stdio [OPTIONS] -- SERVER_CMD [ARGS...]
//! mcp-load http  [OPTIONS] --addr 127.0.0.1:PORT -- SERVER_CMD [ARGS...]
//! mcp-load report RESULTS.jsonl [--charts DIR]
//! mcp-load replicas [OPTIONS] --addr PROXY_HOST:PORT [--secret JWT_SECRET]
//! mcp-load tasks [OPTIONS] --addr PROXY_HOST:PORT
//! ```
//!
//! It spawns the server, opens the session for the protocol asked (2025-era `initialize` +
//! `notifications/initialized`, or 2026-07-28 `server/discover` with the `_meta` envelope on every
//! request), warms up, then makes `-n` logical `tools/call`s, sequentially (send, wait) or
//! pipelined (everything sent at once, over stdio) / from `--clients` concurrent connections (HTTP;
//! on the 2025 era each client opens a session of its own, see `wire/http.rs`).
//! A question the server asks is answered at once with content made from its `requestedSchema`:
//! inline for `elicitation/create` requests (over HTTP, a POST of the answer while the call's SSE
//! stream waits), or by retrying the call with `inputResponses` and the echoed `requestState` for an
//! `InputRequiredResult`. A call is done when its final result comes
//! back; errors (JSON-RPC errors, `isError` results, a missing `--expect` text) are counted and make
//! the exit code non-zero. One JSON line per run goes to `--out`; `report` turns those lines into
//! the Markdown tables of the performance page, with ratios, and with `--charts DIR` draws them as
//! SVG bar charts in DIR. `replicas` drives server replicas that already run behind a proxy with
//! two-round calls under bearer identities (see `replicas.rs` and `benches/replicas.sh`); `tasks`
//! drives them with 2026-07-28 tasks that ask once mid-run (see `tasks.rs` and
//! `benches/replicas.sh --tasks`).

mod charts;
mod jwt;
mod replicas;
mod report;
mod resume;
mod tasks;
mod wire;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wire::{Answer, Call};

/// What one run measured.
#[derive(Debug, Default)]
struct Measured {
    calls: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    rounds: usize,
    errors: usize,
    first_text: Option<String>,
    first_error: Option<String>,
    rss_kib: Option<u64>,
    /// CPU time the server process spent during the measured calls (all its threads), in ns.
    cpu_ns: Option<u64>,
}

struct Options {
    label: String,
    transport: String,
    protocol: String,
    tool: String,
    args: Value,
    mode: String,
    n: usize,
    warmup: usize,
    clients: usize,
    expect: Option<String>,
    out: Option<String>,
    addr: Option<String>,
    timeout: Duration,
    stderr: bool,
    /// The round of `benches/run.sh` this run belongs to, written to the results line.
    round: Option<u64>,
    command: Vec<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: mcp-load stdio|http [--label L] [--protocol 2025-11-25|2026-07-28] [--tool T] [--args JSON]\n\
         \x20      [--mode seq|pipe] [-n N] [--warmup N] [--clients C] [--expect TEXT] [--out FILE]\n\
         \x20      [--addr HOST:PORT] [--timeout SECS] [--stderr] [--round N] -- SERVER_CMD [ARGS...]\n\
         \x20  or: mcp-load report RESULTS.jsonl [--charts DIR]\n\
         \x20  or: mcp-load replicas --addr HOST:PORT [--secret JWT_SECRET] ... (mcp-load replicas --help)\n\
         \x20  or: mcp-load tasks --addr HOST:PORT ... (mcp-load tasks --help)"
    );
    std::process::exit(2)
}

fn parse(mut args: Vec<String>) -> Options {
    let transport = args.remove(0);
    let mut o = Options {
        label: String::new(),
        transport,
        protocol: "2025-11-25".into(),
        tool: "echo".into(),
        args: json!({"text": "hello"}),
        mode: "seq".into(),
        n: 20_000,
        warmup: 200,
        clients: 32,
        expect: None,
        out: None,
        addr: None,
        timeout: Duration::from_secs(300),
        stderr: false,
        round: None,
        command: Vec::new(),
    };
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--label" => o.label = val(),
            "--protocol" => o.protocol = val(),
            "--tool" => o.tool = val(),
            "--args" => o.args = serde_json::from_str(&val()).unwrap_or_else(|_| usage()),
            "--mode" => o.mode = val(),
            "-n" => o.n = val().parse().unwrap_or_else(|_| usage()),
            "--warmup" => o.warmup = val().parse().unwrap_or_else(|_| usage()),
            "--clients" => o.clients = val().parse().unwrap_or_else(|_| usage()),
            "--expect" => o.expect = Some(val()),
            "--out" => o.out = Some(val()),
            "--addr" => o.addr = Some(val()),
            "--timeout" => o.timeout = Duration::from_secs(val().parse().unwrap_or_else(|_| usage())),
            "--stderr" => o.stderr = true,
            "--round" => o.round = Some(val().parse().unwrap_or_else(|_| usage())),
            "--" => {
                o.command = it.collect();
                break;
            }
            _ => usage(),
        }
    }
    if o.command.is_empty() {
        usage()
    }
    // At least one warm-up call: it also starts the pipelined phase.
    o.warmup = o.warmup.max(1);
    if o.label.is_empty() {
        o.label = o.command[0].rsplit('/').next().unwrap_or("server").to_string();
    }
    o
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        usage()
    }
    if args[0] == "report" {
        let (path, chart_dir) = match &args[1..] {
            [path] => (path, None),
            [path, flag, dir] if flag == "--charts" => (path, Some(dir)),
            _ => usage(),
        };
        let done = report::load(path).and_then(|groups| {
            if let Some(dir) = chart_dir {
                for file in charts::write(&groups, std::path::Path::new(dir))? {
                    eprintln!("chart: {}", file.display());
                }
            }
            report::render(&groups)
        });
        match done {
            Ok(text) => print!("{text}"),
            Err(e) => {
                eprintln!("mcp-load report: {e}");
                std::process::exit(1)
            }
        }
        return;
    }
    if args[0] == "replicas" {
        std::process::exit(replicas::main(&args[1..]));
    }
    if args[0] == "resume" {
        std::process::exit(resume::main(&args[1..]));
    }
    if args[0] == "tasks" {
        std::process::exit(tasks::main(&args[1..]));
    }
    if args[0] != "stdio" && args[0] != "http" {
        usage()
    }
    let o = parse(args);
    let mut cmd = Command::new(&o.command[0]);
    cmd.args(&o.command[1..])
        .stdin(Stdio::piped())
        .stdout(if o.transport == "stdio" {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(if o.stderr { Stdio::inherit() } else { Stdio::null() });
    let spawned = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mcp-load: cannot start {:?}: {e}", o.command);
            std::process::exit(1)
        }
    };
    let pid = child.id();
    // A watchdog: a run that hangs is killed and reported, not waited for.
    let timeout = o.timeout;
    std::thread::spawn(move || {
        std::thread::sleep(timeout);
        eprintln!("mcp-load: timed out after {timeout:?}");
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        std::process::exit(3);
    });
    let outcome = if o.transport == "stdio" {
        run_stdio(&o, &mut child, spawned)
    } else {
        run_http(&o, spawned, pid)
    };
    drop(child.stdin.take());
    if o.transport == "http" {
        let _ = child.kill();
    }
    let _ = child.wait();
    let (ready, m) = match outcome {
        Ok(v) => v,
        Err(e) => {
            eprintln!("mcp-load [{}]: {e}", o.label);
            std::process::exit(1)
        }
    };
    let rss_kib = m.rss_kib;
    let mut failed = m.errors > 0;
    if let (Some(want), text) = (&o.expect, &m.first_text)
        && !text.as_deref().unwrap_or("").contains(want.as_str())
    {
        eprintln!("mcp-load [{}]: first result {:?} lacks {want:?}", o.label, text);
        failed = true;
    }
    let mut lat = m.latencies.clone();
    lat.sort();
    // No calls measured, no figure: `null` in the line, n/a on the terminal, never a zero.
    let pct = |p: f64| percentile(&lat, p).map(|d| (d.as_secs_f64() * 1e6).round());
    let per_call = |x: f64| (m.calls > 0).then(|| x / m.calls as f64);
    let rate = (m.calls > 0).then(|| (m.calls as f64 / m.elapsed.as_secs_f64().max(1e-9)).round());
    let line = json!({
        "label": o.label,
        "round": o.round,
        "transport": o.transport,
        "protocol": o.protocol,
        "tool": o.tool,
        "mode": o.mode,
        "clients": if o.transport == "http" { o.clients } else { 1 },
        "n": m.calls,
        "calls_per_s": rate,
        "p50_us": pct(0.5),
        "p99_us": pct(0.99),
        "rounds_per_call": per_call(m.rounds as f64),
        "errors": m.errors,
        "peak_rss_kib": rss_kib,
        "server_cpu_us_per_call": m.cpu_ns.and_then(|ns| per_call(ns as f64 / 1e3)).map(|us| (us * 100.0).round() / 100.0),
        "ready_ms": (ready.as_secs_f64() * 1e4).round() / 10.0,
        "first_text": m.first_text,
        "first_error": m.first_error,
    });
    eprintln!(
        "{:<14} {:<5} {} {:<13} {:<4} {:>9} calls/s  p50 {:>7} µs  p99 {:>7} µs  rss {:>6} KiB  errors {}",
        o.label,
        o.transport,
        o.protocol,
        o.tool,
        o.mode,
        report::show(rate, 0),
        report::show(pct(0.5), 0),
        report::show(pct(0.99), 0),
        rss_kib.map_or_else(|| report::NA.to_string(), |k| k.to_string()),
        m.errors
    );
    if let Some(e) = &m.first_error {
        eprintln!("  first error: {e}");
    }
    if let Some(path) = &o.out {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            eprintln!("mcp-load: cannot write {path}: {e}");
            failed = true;
        }
    } else {
        println!("{line}");
    }
    if failed {
        std::process::exit(1)
    }
}

/// The CPU time a process has spent so far, in ns: every thread it ever had, those that have
/// exited included. This is the kernel's CPU-time clock of the process (`clock_getcpuclockid(3)`),
/// which any process may read for another; summing `/proc/PID/task/*/schedstat` instead would
/// lose the threads that exited between two readings (a blocking pool's, a connection's).
/// `None` when the process is gone.
pub(crate) fn cpu_ns(pid: u32) -> Option<u64> {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).ok()?);
    let now = nix::time::ClockId::pid_cpu_clock_id(pid).ok()?.now().ok()?;
    u64::try_from(Duration::from(now).as_nanos()).ok()
}

/// The `p` quantile (0 to 1, nearest rank) of sorted durations; `None` for an empty series.
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    let last = sorted.len().checked_sub(1)?;
    sorted.get(((last as f64) * p).round() as usize).copied()
}

/// The peak resident set of a process (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// stdio

/// What the reader knows of one request id it is waiting for.
struct Open {
    call: usize,
}

fn run_stdio(o: &Options, child: &mut Child, spawned: Instant) -> Result<(Duration, Measured), String> {
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    // The writer: everything to the server goes through one thread, flushed when nothing more
    // is queued.
    let writer = std::thread::spawn(move || {
        let mut w = BufWriter::with_capacity(32 * 1024, stdin);
        while let Ok(frame) = rx.recv() {
            if w.write_all(&frame).is_err() {
                return;
            }
            while let Ok(more) = rx.try_recv() {
                if w.write_all(&more).is_err() {
                    return;
                }
            }
            if w.flush().is_err() {
                return;
            }
        }
    });
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::with_capacity(4096);
    let mut next_line = |reader: &mut BufReader<_>| -> Result<Value, String> {
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => return Err("the server closed its stdout".into()),
                Ok(_) => {}
                Err(e) => return Err(format!("read: {e}")),
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return serde_json::from_slice(&line).map_err(|e| format!("bad JSON from the server: {e}"));
        }
    };

    let session = wire::Session::new(&o.protocol);
    // Open the session.
    for frame in session.opening() {
        let expects_reply = frame.get("id").is_some();
        let _ = tx.send(wire::line(&frame));
        if expects_reply {
            loop {
                let msg = next_line(&mut reader)?;
                if msg.get("id") == frame.get("id") && msg.get("method").is_none() {
                    if let Some(e) = msg.get("error") {
                        return Err(format!("opening {}: {e}", frame["method"]));
                    }
                    break;
                }
            }
        }
    }
    let ready = spawned.elapsed();

    let mut next_id: i64 = 1000;
    let mut open: HashMap<i64, Open> = HashMap::new();
    let mut calls: Vec<Call> = Vec::new();
    let mut m = Measured::default();
    let total = o.warmup + o.n;
    let mut done = 0usize;
    let mut started = Instant::now();
    let mut cpu_start = None;
    let pipelined = o.mode == "pipe";

    // Pipelined: warm up sequentially, then a feeder thread queues every measured request.
    let send_call = |calls: &mut Vec<Call>, open: &mut HashMap<i64, Open>, next_id: &mut i64| {
        let idx = calls.len();
        calls.push(Call::new());
        let id = *next_id;
        *next_id += 1;
        open.insert(id, Open { call: idx });
        let _ = tx.send(session.call_frame(id, &o.tool, &o.args, None));
    };
    send_call(&mut calls, &mut open, &mut next_id);
    while done < total {
        let msg = next_line(&mut reader)?;
        match wire::classify(&msg) {
            wire::Inbound::ServerRequest { id, method } => {
                let answer = wire::answer_server_request(&method, &msg);
                let _ = tx.send(wire::line(&json!({"jsonrpc": "2.0", "id": id, "result": answer})));
                if done >= o.warmup {
                    m.rounds += 1;
                }
            }
            wire::Inbound::Notification => {}
            wire::Inbound::Response { id } => {
                let Some(Open { call }) = id.as_i64().and_then(|i| open.remove(&i)) else {
                    continue;
                };
                match session.answer(&msg) {
                    Answer::Retry { input_responses, state } => {
                        if done >= o.warmup {
                            m.rounds += 1;
                        }
                        calls[call].rounds += 1;
                        if calls[call].rounds > 10 {
                            m.errors += 1;
                            m.first_error.get_or_insert_with(|| "more than 10 rounds".into());
                        } else {
                            let rid = next_id;
                            next_id += 1;
                            open.insert(rid, Open { call });
                            let retry = (input_responses, state);
                            let _ = tx.send(session.call_frame(rid, &o.tool, &o.args, Some(&retry)));
                            continue;
                        }
                    }
                    Answer::Done { text, error } => {
                        if done >= o.warmup {
                            m.latencies.push(calls[call].started.elapsed());
                            if let Some(e) = error {
                                m.errors += 1;
                                m.first_error.get_or_insert(e);
                            }
                        }
                        if m.first_text.is_none() && done >= o.warmup {
                            m.first_text = Some(text);
                        }
                    }
                }
                done += 1;
                if done == o.warmup {
                    started = Instant::now();
                    cpu_start = cpu_ns(child.id());
                    if pipelined {
                        // Queue every measured request now; the reader keeps answering.
                        let first = calls.len();
                        let base = next_id;
                        next_id += o.n as i64;
                        for k in 0..o.n {
                            calls.push(Call::new());
                            open.insert(base + k as i64, Open { call: first + k });
                        }
                        let tx = tx.clone();
                        let frames: Vec<Vec<u8>> = (0..o.n)
                            .map(|k| session.call_frame(base + k as i64, &o.tool, &o.args, None))
                            .collect();
                        let started_at = Instant::now();
                        for c in &mut calls[first..] {
                            c.started = started_at;
                        }
                        std::thread::spawn(move || {
                            // ~32 KiB per write, as a client streaming requests would.
                            let mut chunk = Vec::with_capacity(40 * 1024);
                            for f in frames {
                                chunk.extend_from_slice(&f);
                                if chunk.len() >= 32 * 1024 {
                                    let _ = tx.send(std::mem::take(&mut chunk));
                                }
                            }
                            if !chunk.is_empty() {
                                let _ = tx.send(chunk);
                            }
                        });
                        continue;
                    }
                }
                if done < total && (!pipelined || done < o.warmup) {
                    send_call(&mut calls, &mut open, &mut next_id);
                }
            }
        }
    }
    m.elapsed = started.elapsed();
    m.calls = o.n;
    // Before stdin closes: the server is still alive (a zombie has no figures).
    m.rss_kib = peak_rss_kib(child.id());
    m.cpu_ns = cpu_start.zip(cpu_ns(child.id())).map(|(a, b)| b.saturating_sub(a));
    drop(tx);
    let _ = writer.join();
    Ok((ready, m))
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP (2026-07-28 stateless, or 2025-era sessions)

fn run_http(o: &Options, spawned: Instant, pid: u32) -> Result<(Duration, Measured), String> {
    let addr = o.addr.clone().ok_or("--addr is required for http")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(wire::http::run(o, addr, spawned, pid))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPU time the calling thread has spent, in ns.
    fn own_thread_cpu_ns() -> u64 {
        let t = nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID
            .now()
            .expect("thread CPU clock");
        u64::try_from(Duration::from(t).as_nanos()).expect("fits")
    }

    #[test]
    fn a_servers_cpu_time_counts_threads_that_have_exited() {
        let me = std::process::id();
        let before = cpu_ns(me).expect("own CPU time");
        // A thread that burns 300 ms of CPU and exits before the second reading, as a server's
        // blocking-pool thread or a per-connection thread does.
        let burned = std::thread::spawn(|| {
            let start = own_thread_cpu_ns();
            let mut x = 0u64;
            while own_thread_cpu_ns() - start < 300_000_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            own_thread_cpu_ns() - start
        })
        .join()
        .expect("the burner thread");
        let after = cpu_ns(me).expect("own CPU time");
        assert!(
            after.saturating_sub(before) >= burned,
            "the process's CPU time grew by {} ns while an exited thread burned {burned} ns",
            after.saturating_sub(before)
        );
    }
}
