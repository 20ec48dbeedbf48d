//! `mcp-load report`: the JSON lines of a benchmark run as the Markdown tables of
//! `docs/PERFORMANCE.md`, one table per workload, with each figure as a ratio to each peer.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The labels whose figures are divided by the others': mcp-resolve on tokio's multi-thread and
/// current-thread runtimes.
const OURS: [&str; 2] = ["mcp-resolve", "mcp-resolve-ct"];

#[derive(Default)]
struct Figures {
    rates: Vec<f64>,
    p50: Vec<f64>,
    p99: Vec<f64>,
    rss_kib: u64,
    errors: u64,
    rounds: f64,
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// The workload a run belongs to: the same work under every framework's tool name.
fn workload(tool: &str) -> &'static str {
    if tool.starts_with("ask_name") {
        "one form elicitation"
    } else {
        "echo"
    }
}

/// (transport, workload, protocol, mode, clients).
type GroupKey = (String, String, String, String, u64);

pub(crate) fn render(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    // (transport, workload, protocol, mode, clients) → label → figures, labels in first-seen order.
    let mut groups: BTreeMap<GroupKey, Vec<(String, Figures)>> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| format!("{path}:{}: {e}", i + 1))?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let f = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        let key = (
            s("transport"),
            workload(&s("tool")).to_string(),
            s("protocol"),
            s("mode"),
            v.get("clients").and_then(Value::as_u64).unwrap_or(1),
        );
        let rows = groups.entry(key).or_default();
        let label = s("label");
        let idx = match rows.iter().position(|(l, _)| *l == label) {
            Some(i) => i,
            None => {
                rows.push((label, Figures::default()));
                rows.len() - 1
            }
        };
        let fig = &mut rows[idx].1;
        fig.rates.push(f("calls_per_s"));
        fig.p50.push(f("p50_us"));
        fig.p99.push(f("p99_us"));
        fig.rss_kib = fig
            .rss_kib
            .max(v.get("peak_rss_kib").and_then(Value::as_u64).unwrap_or(0));
        fig.errors += v.get("errors").and_then(Value::as_u64).unwrap_or(0);
        fig.rounds = f("rounds_per_call");
    }
    let mut out = String::new();
    for ((transport, work, protocol, mode, clients), rows) in &groups {
        let how = match (transport.as_str(), mode.as_str()) {
            ("http", _) => format!("{clients} concurrent clients"),
            (_, "pipe") => "pipelined".to_string(),
            _ => "sequential".to_string(),
        };
        let _ = writeln!(out, "#### {transport}, {work}, {protocol}, {how}\n");
        let ours_rows: Vec<(&str, &Figures)> = OURS
            .iter()
            .filter_map(|o| rows.iter().find(|(l, _)| l == o).map(|(l, f)| (l.as_str(), f)))
            .collect();
        let names = ours_rows.iter().map(|(l, _)| *l).collect::<Vec<_>>().join(" / ");
        let _ = writeln!(
            out,
            "| server | calls/s (median of {}, min–max) | p50 µs | p99 µs | peak RSS MiB | rounds/call | errors \
             | speed: {names} ÷ this | p50: {names} ÷ this | p99: {names} ÷ this | RSS: {names} ÷ this |",
            rows.first().map_or(0, |(_, f)| f.rates.len())
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|");
        for (label, f) in rows {
            let rate = median(&f.rates);
            let min = f.rates.iter().copied().fold(f64::INFINITY, f64::min);
            let max = f.rates.iter().copied().fold(0.0, f64::max);
            // Each figure of ours divided by this row's: above 1× is more calls/s, or more
            // latency or memory.
            let ratio = |ours: &dyn Fn(&Figures) -> f64, theirs: f64| -> String {
                if OURS.contains(&label.as_str()) || theirs <= 0.0 {
                    return "—".into();
                }
                let parts: Vec<String> = ours_rows
                    .iter()
                    .map(|(_, o)| format!("{:.2}×", ours(o) / theirs))
                    .collect();
                if parts.is_empty() {
                    "—".into()
                } else {
                    parts.join(" / ")
                }
            };
            let speed = ratio(&|o| median(&o.rates), rate);
            let p50 = ratio(&|o| median(&o.p50), median(&f.p50));
            let p99 = ratio(&|o| median(&o.p99), median(&f.p99));
            let mem = ratio(&|o| o.rss_kib as f64, f.rss_kib as f64);
            let _ = writeln!(
                out,
                "| {label} | {rate:.0} ({min:.0}–{max:.0}) | {:.0} | {:.0} | {:.1} | {:.2} | {} | {speed} | {p50} | {p99} | {mem} |",
                median(&f.p50),
                median(&f.p99),
                f.rss_kib as f64 / 1024.0,
                f.rounds,
                f.errors
            );
        }
        out.push('\n');
    }
    Ok(out)
}
