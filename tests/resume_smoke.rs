//! Calls that survive a broken connection, under load, in small: the load driver
//! (`mcp-load resume`, benches/load) runs 200 handshake-era calls that ask over 20 sessions
//! against the release `conformance` example, each call's connection cut at a seeded random
//! point (not at all, after the priming event, after the question, after the answer) and resumed
//! with `Last-Event-ID`. Checked here: every call completed with its own result, none lost, none
//! wrong, no event delivered twice, and most calls were resumed. The figures of the 1,000-call
//! runs are in docs/PERFORMANCE.md ("Resumed calls").
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn two_hundred_cut_calls_each_complete_exactly_once() {
    let root = Path::new(support::MANIFEST_DIR);
    let load_target = root.join("target/bench-load");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "-q", "--manifest-path"])
        .arg(root.join("benches/load/Cargo.toml"))
        .env("CARGO_TARGET_DIR", &load_target)
        .status()
        .expect("cargo runs");
    assert!(built.success(), "the load driver builds");
    let mut server = support::HttpChild::start(support::conformance_bin(), "resume smoke", &|_| {
        vec![("MCP_RESOLVE_LOAD_QUESTIONS".to_owned(), "100000".to_owned())]
    });
    let out = Command::new(load_target.join("debug/mcp-load"))
        .args(["resume", "--addr", &server.addr.to_string()])
        .args(["--calls", "200", "--sessions", "20", "--settle", "0", "--seed", "7"])
        .args(["--pid", &server.child.id().to_string()])
        .stdin(Stdio::null())
        .output()
        .expect("the driver runs");
    let log = server.stop();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = format!("--- driver ---\n{stdout}\n{stderr}\n--- server ---\n{log}");
    assert!(out.status.success(), "{context}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("one JSON report");
    assert_eq!(report["completed"], 200, "{context}");
    assert_eq!(report["lost"], 0, "{context}");
    assert_eq!(report["wrong"], 0, "{context}");
    assert_eq!(report["duplicates"], 0, "{context}");
    let cuts = &report["cuts"];
    for point in ["never", "after_priming", "after_question", "after_answer"] {
        assert!(cuts[point].as_u64().is_some_and(|n| n > 20), "{point}: {context}");
    }
    assert!(report["resumed"].as_u64().is_some_and(|n| n >= 100), "{context}");
}
