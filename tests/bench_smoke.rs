//! The load benchmark still works: `benches/run.sh --smoke` builds the driver, the null server
//! and the rmcp peer (debug), and drives every server of the real benchmark — mcp-resolve on
//! both runtimes, rmcp in three configurations, the Python SDK, the null server — for a few calls
//! of every workload. This checks that each run completed with no error and the expected answer,
//! that the report has every table and that every chart was drawn. The figures themselves are not checked: they come from
//! a few calls on debug builds (`docs/PERFORMANCE.md` has the real ones).

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

/// Every server the benchmark drives on stdio echo, and those it drives with a question.
const ECHO_SERVERS: [&str; 7] = [
    "null-server",
    "mcp-resolve",
    "mcp-resolve-ct",
    "rmcp-best",
    "rmcp-best-ct",
    "rmcp-default",
    "python-sdk",
];
const ASK_SERVERS: [&str; 5] = [
    "mcp-resolve",
    "mcp-resolve-ct",
    "rmcp-best",
    "rmcp-best-ct",
    "python-sdk",
];

#[test]
fn the_load_benchmark_runs_every_server_and_workload() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("benches/run.sh"))
        .arg("--smoke")
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .expect("run benches/run.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "benches/run.sh --smoke failed:\n{stderr}\n{report}"
    );

    let results =
        std::fs::read_to_string(root.join("target/bench-smoke/results.jsonl")).expect("results.jsonl written");
    let runs: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let mut seen = BTreeSet::new();
    for r in &runs {
        let (label, transport, protocol, tool, mode) = (
            r["label"].as_str().unwrap(),
            r["transport"].as_str().unwrap(),
            r["protocol"].as_str().unwrap(),
            r["tool"].as_str().unwrap(),
            r["mode"].as_str().unwrap(),
        );
        assert_eq!(r["errors"], 0, "{r}");
        assert!(r["calls_per_s"].as_f64().unwrap() > 0.0, "{r}");
        let asks = tool.starts_with("ask_name");
        let want = if asks { "hello bench" } else { "hello" };
        assert_eq!(r["first_text"], want, "{r}");
        // One question per call for the elicitation workloads, none for echo.
        assert_eq!(r["rounds_per_call"].as_f64(), Some(if asks { 1.0 } else { 0.0 }), "{r}");
        if label != "null-server" {
            assert!(r["peak_rss_kib"].as_u64().is_some_and(|k| k > 0), "no RSS figure: {r}");
        }
        let workload = if asks { "ask" } else { "echo" };
        seen.insert(format!("{transport} {protocol} {mode} {workload} {label}"));
    }

    let mut expected = BTreeSet::new();
    for protocol in ["2025-11-25", "2026-07-28"] {
        for mode in ["seq", "pipe"] {
            for label in ECHO_SERVERS {
                expected.insert(format!("stdio {protocol} {mode} echo {label}"));
            }
            for label in ASK_SERVERS {
                expected.insert(format!("stdio {protocol} {mode} ask {label}"));
            }
        }
    }
    for workload in ["echo", "ask"] {
        for label in ["mcp-resolve", "rmcp-best", "python-sdk"] {
            expected.insert(format!("http 2026-07-28 concurrent {workload} {label}"));
        }
        // The handshake era over HTTP: sessions, which the Python peer does not serve.
        for label in ["mcp-resolve", "rmcp-best"] {
            expected.insert(format!("http 2025-11-25 concurrent {workload} {label}"));
        }
    }
    let missing: Vec<_> = expected.difference(&seen).collect();
    assert!(missing.is_empty(), "runs missing from the benchmark: {missing:#?}");

    // The report: one table per workload (8 over stdio, 4 over HTTP), with the ratio columns,
    // and after each of the four sequential stdio ones its server time per call.
    assert_eq!(
        report.matches("\n#### ").count() + usize::from(report.starts_with("#### ")),
        16,
        "{report}"
    );
    assert!(
        report.contains("speed: mcp-resolve / mcp-resolve-ct ÷ this"),
        "{report}"
    );
    assert_eq!(
        report.matches(", sequential: server time per call\n").count(),
        4,
        "{report}"
    );
    assert_eq!(
        report.matches("| ÷ rmcp-best | ÷ rmcp-best-ct |").count(),
        4,
        "{report}"
    );
    assert!(
        report.contains("null server's echo p50 times that many round trips"),
        "{report}"
    );

    // The charts: one SVG document each, every server of the chart named in its legend.
    let (all, asks) = (ECHO_SERVERS, ASK_SERVERS);
    let charts: [(&str, &[&str]); 10] = [
        ("calls-stdio-echo-seq.svg", &all),
        ("calls-stdio-echo-pipe.svg", &all),
        ("calls-stdio-ask-seq.svg", &asks),
        ("calls-stdio-ask-pipe.svg", &asks),
        ("calls-http.svg", &["mcp-resolve", "rmcp-best", "python-sdk"]),
        ("cpu-http.svg", &["mcp-resolve", "rmcp-best", "python-sdk"]),
        ("p50-stdio-echo-seq.svg", &all),
        ("p50-stdio-ask-seq.svg", &asks),
        ("server-time-stdio-echo-seq.svg", &all[1..]),
        ("server-time-stdio-ask-seq.svg", &asks),
    ];
    let dir = root.join("target/bench-smoke/charts");
    for (file, labels) in charts {
        let svg = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(
            svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"),
            "{file}: not SVG"
        );
        assert_eq!(svg.matches("<svg").count(), 1, "{file}");
        assert_eq!(
            svg.matches("<text").count(),
            svg.matches("</text>").count(),
            "{file}: unbalanced <text>"
        );
        // plotters writes each text on a line of its own, between its tags.
        let texts: Vec<&str> = svg.lines().filter(|l| !l.starts_with('<')).collect();
        for label in labels {
            assert!(texts.contains(label), "{file}: no {label} in the legend: {texts:?}");
        }
        if !labels.contains(&"null-server") {
            assert!(
                !texts.contains(&"null-server"),
                "{file}: the null server has no bar here"
            );
        }
    }
}
