//! Calls that survive a broken connection, with the official clients and nothing of ours on the
//! client side: the release `notes` example behind a proxy that breaks the connection carrying
//! a handshake-era `delete_folder` call's event stream at one point (after its priming event,
//! after its question, or as the answer goes up, before the result can come back). The client
//! reconnects on its own with `GET` and `Last-Event-ID`, and the call completes exactly once: one
//! question, one result, the folder deleted, no event reaching the client twice.
//!
//! The official TypeScript client (`@modelcontextprotocol/client` 2.4.0,
//! `tests/interop/ts_client.mjs`) does this; so does the official Python SDK client (`mcp`
//! 2.3.0, `tests/interop/py_client.py`).

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod support;

#[path = "support/cut.rs"]
mod cut;

use cut::{Cut, CutProxy};
use support::{HttpChild, MANIFEST_DIR, node, notes_bin, python, run_to_end};

#[derive(Clone, Copy, Debug)]
enum Client {
    TypeScript,
    Python,
}

/// One `delete_folder` call on the drafts (which asks), through a proxy that cuts at `cut`.
fn cut_call(client: Client, cut: Cut) {
    let label = format!("{client:?} cut {cut:?}");
    let mut server = HttpChild::start(notes_bin(), &label, &|_| Vec::new());
    let log = cut_call_through(client, cut, server.addr, &label, &mut || server.stop());
    drop(log);
}

/// [`cut_call`] to whatever listens on `upstream`; `logs` gives the servers' logs for a failure.
fn cut_call_through(
    client: Client,
    cut: Cut,
    upstream: std::net::SocketAddr,
    label: &str,
    logs: &mut dyn FnMut() -> String,
) -> Vec<String> {
    let proxy = CutProxy::start(upstream, cut);
    let driver = Path::new(MANIFEST_DIR).join("tests").join("interop");
    let mut cmd = match client {
        Client::TypeScript => {
            let mut c = Command::new(node());
            c.arg(driver.join("ts_client.mjs")).args(["--transport", "http"]);
            c
        }
        Client::Python => {
            let mut c = Command::new(python());
            c.arg(driver.join("py_client.py"));
            c
        }
    };
    let steps = json!([{"op": "call", "tool": "delete_folder", "args": {"path": "/tmp/notes/drafts"}}]);
    cmd.arg("--url")
        .arg(proxy.url())
        .args(["--mode", "legacy", "--answer", r#"{"ok": true}"#, "--timeout", "40"])
        .arg("--steps")
        .arg(steps.to_string());
    let done = run_to_end(&mut cmd, label, Duration::from_secs(50), Duration::from_secs(5));
    let log = logs();
    let events: Vec<Value> = done
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let context = format!(
        "[{label}]\n--- driver stdout ---\n{}\n--- driver stderr ---\n{}\n--- server ---\n{log}\n--- ids ---\n{:?}",
        done.stdout,
        done.stderr,
        proxy.ids()
    );
    assert!(proxy.cut_happened(), "the proxy never cut: {context}");
    let asked = events.iter().filter(|e| e["event"] == "elicitation").count();
    assert_eq!(asked, 1, "one question: {context}");
    let results: Vec<&Value> = events.iter().filter(|e| e["event"] == "result").collect();
    assert_eq!(results.len(), 1, "one result: {context}");
    assert_eq!(
        results[0]["result"]["content"][0]["text"], "deleted /tmp/notes/drafts",
        "the folder deleted: {context}"
    );
    assert!(events.iter().any(|e| e["event"] == "done"), "{context}");
    eprintln!("{label}: {:.1?}", done.elapsed);
    let ids = proxy.ids();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "no event reached the client twice: {context}");
    ids
}

#[test]
fn typescript_client_resumes_a_call_cut_after_its_priming_event() {
    cut_call(Client::TypeScript, Cut::Priming);
}

#[test]
fn typescript_client_resumes_a_call_cut_after_its_question() {
    cut_call(Client::TypeScript, Cut::Question);
}

#[test]
fn typescript_client_resumes_a_call_cut_as_its_answer_goes_up() {
    cut_call(Client::TypeScript, Cut::Answer);
}

#[test]
fn python_client_resumes_a_call_cut_after_its_question() {
    cut_call(Client::Python, Cut::Question);
}

#[test]
fn python_client_resumes_a_call_cut_as_its_answer_goes_up() {
    cut_call(Client::Python, Cut::Answer);
}

/// Behind a load balancer, handshake-era sessions live on one replica: each replica starts its
/// session ids with its name (`MCP_RESOLVE_SESSION_PREFIX`, `HttpOptions::session_id_prefix`),
/// nginx sends a request naming a session to the replica its id names (`AFFINITY=session` in
/// `tests/interop/nginx/run.sh`) and `initialize` round-robin, and a cut call resumes on the
/// replica that runs it. Two sessions, one on each replica (each replica's drafts folder is
/// deleted once: a second call there would not ask).
#[test]
fn typescript_client_resumes_through_nginx_with_session_affinity() {
    let named = |name: &'static str| move |_| vec![("MCP_RESOLVE_SESSION_PREFIX".to_owned(), name.to_owned())];
    let mut a = HttpChild::start(notes_bin(), "replica A", &named("a"));
    let mut b = HttpChild::start(notes_bin(), "replica B", &named("b"));
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let work = support::target_dir().join("resume-nginx").join(listen.to_string());
    let nginx = Command::new("bash")
        .arg(Path::new(MANIFEST_DIR).join("tests/interop/nginx/run.sh"))
        .args([a.addr.port().to_string(), b.addr.port().to_string(), listen.to_string()])
        .arg(&work)
        .env("NGINX_BIN", support::nginx())
        .env("AFFINITY", "session")
        .env_remove("NGINX")
        .stdin(std::process::Stdio::null())
        .spawn()
        .expect("nginx starts");
    let _nginx = KillOnDrop(nginx);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", listen)).is_err() {
        assert!(std::time::Instant::now() < deadline, "nginx listens");
        std::thread::sleep(Duration::from_millis(20));
    }
    let upstream: std::net::SocketAddr = ([127, 0, 0, 1], listen).into();
    for (i, cut) in [Cut::Question, Cut::Answer].into_iter().enumerate() {
        let label = format!("nginx session {i}, cut {cut:?}");
        let access = work.join("access.log");
        let mut logs = || {
            format!(
                "--- nginx access log ---\n{}",
                std::fs::read_to_string(&access).unwrap_or_default()
            )
        };
        cut_call_through(Client::TypeScript, cut, upstream, &label, &mut logs);
    }
    // Both replicas served sessions (each `delete_folder` asked on the replica that ran it).
    let (la, lb) = (a.stop(), b.stop());
    assert!(
        la.contains("question asked") && lb.contains("question asked"),
        "both replicas ran calls:\n--- A ---\n{la}\n--- B ---\n{lb}"
    );
}

/// A child process killed when dropped (a failing test leaves no proxy behind).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
