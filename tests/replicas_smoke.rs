//! Replicas under load, in small: `benches/replicas.sh --smoke` runs two `bench_server`
//! replicas sharing one state key and one HS256 secret behind nginx, and the load driver makes
//! 200 concurrent two-round calls under 10 bearer identities, once with each call's rounds sent
//! to different replicas and once through plain round-robin. Checked here: no call lost, no wrong
//! answer, every replay of a state under another identity refused, and with alternate routing
//! every call's rounds answered by both replicas. The figures themselves are not checked
//! (`docs/PERFORMANCE.md` has the real run).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn replicas_under_load_lose_nothing_and_refuse_other_principals() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("benches/replicas.sh"))
        .arg("--smoke")
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .expect("run benches/replicas.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "benches/replicas.sh --smoke failed:\n{stderr}\n{report}"
    );
    let results =
        std::fs::read_to_string(root.join("target/replicas-smoke/results.jsonl")).expect("results.jsonl written");
    let runs: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let routes: Vec<&str> = runs.iter().map(|r| r["route"].as_str().unwrap()).collect();
    assert_eq!(routes, ["alternate", "rr"], "{results}");
    for r in &runs {
        assert_eq!(r["calls"], 200, "{r}");
        assert_eq!(r["completed"], 200, "{r}");
        assert_eq!(r["lost"], 0, "{r}");
        assert_eq!(r["wrong"], 0, "{r}");
        assert_eq!(r["cross_accepted"], 0, "{r}");
        assert_eq!(r["cross_attempts"], 20, "{r}");
        assert_eq!(r["cross_refused"], 20, "{r}");
        // Both replicas answered rounds.
        let upstreams = r["upstream_rounds"].as_object().unwrap();
        assert_eq!(upstreams.len(), 2, "{r}");
        for label in ["replica-a", "replica-b"] {
            assert!(
                r["memory"][label]["peak_rss_kib"].as_u64().is_some_and(|k| k > 0),
                "{r}"
            );
        }
    }
    assert_eq!(runs[0]["alternation"].as_f64(), Some(1.0), "{}", runs[0]);
}
