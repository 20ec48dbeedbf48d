//! Tasks across replicas under load, in small: `benches/replicas.sh --tasks --smoke` runs two
//! release `rollout` replicas sharing one state key and one Redis behind nginx, and the load
//! driver (`mcp-load tasks`) starts 50 concurrent 2026-07-28 tasks at once, once with every task
//! created through one replica and followed and answered through the other, and once through
//! plain round-robin. Checked here: every task asked exactly once, was answered once, and
//! completed with its own text; none lost, none wrong; both replicas answered requests. The
//! figures themselves are not checked (`docs/PERFORMANCE.md`, "Tasks", has the real run).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn tasks_across_replicas_under_load_ask_once_and_all_complete() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("benches/replicas.sh"))
        .args(["--tasks", "--smoke"])
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .expect("run benches/replicas.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "benches/replicas.sh --tasks --smoke failed:\n{stderr}\n{report}"
    );
    let results =
        std::fs::read_to_string(root.join("target/replicas-tasks-smoke/results.jsonl")).expect("results.jsonl written");
    let runs: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let routes: Vec<&str> = runs.iter().map(|r| r["route"].as_str().unwrap()).collect();
    assert_eq!(routes, ["alternate", "rr"], "{results}");
    for r in &runs {
        assert_eq!(r["workload"], "tasks", "{r}");
        assert_eq!(r["tasks"], 50, "{r}");
        assert_eq!(r["completed"], 50, "{r}");
        assert_eq!(r["lost"], 0, "{r}");
        assert_eq!(r["wrong"], 0, "{r}");
        assert_eq!(r["store_errors"], 0, "every tasks/get and tasks/update answered: {r}");
        assert_eq!(r["questions"], 50, "each task asked once: {r}");
        assert_eq!(r["answers"], 50, "each task was answered once: {r}");
        let upstreams = r["upstream_requests"].as_object().unwrap();
        assert_eq!(upstreams.len(), 2, "both replicas answered: {r}");
        for label in ["replica-a", "replica-b", "redis"] {
            assert!(
                r["processes"][label]["peak_rss_kib"].as_u64().is_some_and(|k| k > 0),
                "{label}: {r}"
            );
        }
    }
    // Alternate routing: every answer went through the replica that does not run its task.
    assert_eq!(runs[0]["answered_elsewhere"], 50, "{}", runs[0]);
}
