//! `mcp-load report`: the JSON lines of a benchmark run as the Markdown tables of
//! `docs/PERFORMANCE.md`, one table per workload, with each figure as a ratio to each peer.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The labels whose figures are divided by the others': mcp-resolve on tokio's multi-thread and
/// current-thread runtimes.
const OURS: [&str; 2] = ["mcp-resolve", "mcp-resolve-ct"];

/// One server's runs of one workload, in run order.
#[derive(Default)]
pub(crate) struct Figures {
    pub(crate) rates: Vec<f64>,
    pub(crate) p50: Vec<f64>,
    pub(crate) p99: Vec<f64>,
    pub(crate) rss_kib: u64,
    /// Server CPU µs per call, per run (absent for older results).
    pub(crate) cpu: Vec<f64>,
    pub(crate) errors: u64,
    pub(crate) rounds: f64,
}

pub(crate) fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// The workload a run belongs to: the same work under every framework's tool name.
pub(crate) fn workload(tool: &str) -> &'static str {
    if tool.starts_with("ask_name") {
        "one form elicitation"
    } else {
        "echo"
    }
}

/// (transport, workload, protocol, mode, clients).
pub(crate) type GroupKey = (String, String, String, String, u64);

/// (transport, workload, protocol, mode, clients) → label → figures, labels in first-seen order.
pub(crate) type Groups = BTreeMap<GroupKey, Vec<(String, Figures)>>;

/// The runs of a results file, grouped by workload.
pub(crate) fn load(path: &str) -> Result<Groups, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut groups = Groups::new();
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
        if let Some(cpu) = v.get("server_cpu_us_per_call").and_then(Value::as_f64) {
            fig.cpu.push(cpu);
        }
        fig.errors += v.get("errors").and_then(Value::as_u64).unwrap_or(0);
        fig.rounds = f("rounds_per_call");
    }
    Ok(groups)
}

/// The Markdown tables: one per workload, each sequential stdio one followed by its server time
/// per call.
pub(crate) fn render(groups: &Groups) -> String {
    let mut out = String::new();
    for (key, rows) in groups {
        let (transport, work, protocol, mode, clients) = key;
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
            "| server | calls/s (median of {}, min–max) | p50 µs | p99 µs | peak RSS MiB | server CPU µs/call | rounds/call | errors \
             | speed: {names} ÷ this | p50: {names} ÷ this | p99: {names} ÷ this | RSS: {names} ÷ this | CPU: {names} ÷ this |",
            rows.first().map_or(0, |(_, f)| f.rates.len())
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
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
            let cpu = ratio(&|o| median(&o.cpu), median(&f.cpu));
            let cpu_us = if f.cpu.is_empty() {
                "—".to_string()
            } else {
                format!("{:.1}", median(&f.cpu))
            };
            let _ = writeln!(
                out,
                "| {label} | {rate:.0} ({min:.0}–{max:.0}) | {:.0} | {:.0} | {:.1} | {cpu_us} | {:.2} | {} | {speed} | {p50} | {p99} | {mem} | {cpu} |",
                median(&f.p50),
                median(&f.p99),
                f.rss_kib as f64 / 1024.0,
                f.rounds,
                f.errors
            );
        }
        out.push('\n');
        if let Some(times) = server_times(groups, key) {
            server_time_table(&mut out, key, rows, &times);
        }
    }
    out
}

/// The peers a server time is divided by.
pub(crate) const BASELINES: [&str; 2] = ["rmcp-best", "rmcp-best-ct"];

/// The null server: the driver's and the pipes' own cost, which server time leaves out.
pub(crate) const NULL: &str = "null-server";

/// One server's time per call in a sequential stdio workload.
pub(crate) struct ServerTime {
    pub(crate) label: String,
    /// Per run: its p50 latency minus the null server's p50 in the same round, times the round
    /// trips a call needs.
    pub(crate) runs: Vec<f64>,
    /// Round trips per call: the call and one answer per question (1 + rounds/call).
    pub(crate) trips: f64,
    /// What was subtracted: the null server's median echo p50 times `trips`.
    pub(crate) null_share: f64,
}

impl ServerTime {
    pub(crate) fn median(&self) -> f64 {
        median(&self.runs)
    }
}

/// Server time per call for a sequential stdio workload, `None` for any other workload or when
/// the null server was not measured on the same transport, protocol and mode. The null server
/// serves only echo, so its echo figures stand in for one round trip of every workload; run `i`
/// of a server is paired with run `i` of the null server (the same round of `benches/run.sh`).
pub(crate) fn server_times(groups: &Groups, key: &GroupKey) -> Option<Vec<ServerTime>> {
    let (transport, _, protocol, mode, clients) = key;
    if transport != "stdio" || mode != "seq" {
        return None;
    }
    let null_key = (
        transport.clone(),
        workload("echo").to_string(),
        protocol.clone(),
        mode.clone(),
        *clients,
    );
    let null = &groups.get(&null_key)?.iter().find(|(l, _)| l == NULL)?.1;
    let null_median = median(&null.p50);
    let rows = groups.get(key)?;
    Some(
        rows.iter()
            .filter(|(label, _)| label != NULL)
            .map(|(label, f)| {
                let trips = 1.0 + f.rounds;
                let runs = f
                    .p50
                    .iter()
                    .enumerate()
                    .map(|(i, p50)| p50 - null.p50.get(i).copied().unwrap_or(null_median) * trips)
                    .collect();
                ServerTime {
                    label: label.clone(),
                    runs,
                    trips,
                    null_share: null_median * trips,
                }
            })
            .collect(),
    )
}

fn server_time_table(out: &mut String, key: &GroupKey, rows: &[(String, Figures)], times: &[ServerTime]) {
    let (transport, work, protocol, _, _) = key;
    let _ = writeln!(
        out,
        "#### {transport}, {work}, {protocol}, sequential: server time per call\n"
    );
    let asks = times.iter().any(|t| t.trips > 1.0);
    let _ = writeln!(
        out,
        "Server time per call: each run's p50 latency minus the null server's p50 in the same round, on the \
         same driver, transport, protocol and mode, so the driver's and the pipes' own cost (which the null \
         server's p50 is: it does next to no work) does not hide the server's.{} The ratios divide this \
         row's server time by the peer's: below 1× is less time spent in the server.\n",
        if asks {
            " The null server only serves `echo`, and a call here needs 1 + rounds/call round trips (the call, \
             then one answer per question: the `elicitation/create` response on 2025-11-25, the retry with \
             `inputResponses` on 2026-07-28), so the null server's echo p50 times that many round trips is \
             subtracted."
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "| server | server µs/call (median of {}, min–max) | p50 µs | subtracted µs (round trips × null p50) | \
         ÷ {} | ÷ {} |",
        rows.first().map_or(0, |(_, f)| f.p50.len()),
        BASELINES[0],
        BASELINES[1]
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for t in times {
        let p50 = rows
            .iter()
            .find(|(l, _)| *l == t.label)
            .map_or(0.0, |(_, f)| median(&f.p50));
        let min = t.runs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = t.runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ratios: Vec<String> = BASELINES
            .iter()
            .map(|b| match times.iter().find(|o| o.label == *b) {
                Some(o) if o.label == t.label => "—".into(),
                Some(o) if o.median() > 0.0 => format!("{:.2}×", t.median() / o.median()),
                _ => "—".into(),
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {:.0} ({min:.0}–{max:.0}) | {p50:.0} | {:.0} ({} × {:.0}) | {} | {} |",
            t.label,
            t.median(),
            t.null_share,
            if t.trips.fract() == 0.0 {
                format!("{:.0}", t.trips)
            } else {
                format!("{:.2}", t.trips)
            },
            t.null_share / t.trips,
            ratios[0],
            ratios[1]
        );
    }
    out.push('\n');
}
