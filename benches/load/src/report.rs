//! `mcp-load report`: the JSON lines of a benchmark run as the Markdown tables of
//! `docs/PERFORMANCE.md`, one table per workload, with each figure as a ratio to each peer.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The labels whose figures are divided by the others': mcp-resolve on tokio's multi-thread and
/// current-thread runtimes.
const OURS: [&str; 2] = ["mcp-resolve", "mcp-resolve-ct"];

/// One run of one server on one workload: one line of the results file. A figure the run did
/// not produce (no calls measured, no CPU reading, an older file) is `None`, never a zero.
#[derive(Clone, Debug, Default)]
pub(crate) struct Run {
    /// The round of `benches/run.sh` the run was made in (`round`), when the line says.
    pub(crate) round: Option<u64>,
    pub(crate) rate: Option<f64>,
    pub(crate) p50: Option<f64>,
    pub(crate) p99: Option<f64>,
    /// Server CPU µs per call.
    pub(crate) cpu: Option<f64>,
}

/// One server's runs of one workload, in run order.
#[derive(Default)]
pub(crate) struct Figures {
    pub(crate) runs: Vec<Run>,
    /// The largest peak RSS of its runs, when any run read one.
    pub(crate) rss_kib: Option<u64>,
    pub(crate) errors: u64,
    pub(crate) rounds: Option<f64>,
}

impl Figures {
    /// The runs' calls/s, leaving out runs without one.
    pub(crate) fn rates(&self) -> Vec<f64> {
        self.runs.iter().filter_map(|r| r.rate).collect()
    }

    pub(crate) fn p50(&self) -> Vec<f64> {
        self.runs.iter().filter_map(|r| r.p50).collect()
    }

    pub(crate) fn p99(&self) -> Vec<f64> {
        self.runs.iter().filter_map(|r| r.p99).collect()
    }

    pub(crate) fn cpu(&self) -> Vec<f64> {
        self.runs.iter().filter_map(|r| r.cpu).collect()
    }
}

/// The median of a series; `None` for an empty one (there is no figure to show).
pub(crate) fn median(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied()
}

/// The median, least and largest of a series; `None` for an empty one.
pub(crate) fn spread(v: &[f64]) -> Option<(f64, f64, f64)> {
    let m = median(v)?;
    let lo = v.iter().copied().fold(m, f64::min);
    let hi = v.iter().copied().fold(m, f64::max);
    Some((m, lo, hi))
}

/// What a table shows for a figure that was not measured.
pub(crate) const NA: &str = "n/a";

/// A figure with `decimals` decimals, or [`NA`].
pub(crate) fn show(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| NA.to_string(), |v| format!("{v:.decimals$}"))
}

/// A series as `median (min–max)`, or [`NA`] when it is empty.
fn show_spread(v: &[f64]) -> String {
    spread(v).map_or_else(|| NA.to_string(), |(m, lo, hi)| format!("{m:.0} ({lo:.0}–{hi:.0})"))
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
        let f = |k: &str| v.get(k).and_then(Value::as_f64);
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
        fig.runs.push(Run {
            round: v.get("round").and_then(Value::as_u64),
            rate: f("calls_per_s"),
            p50: f("p50_us"),
            p99: f("p99_us"),
            cpu: f("server_cpu_us_per_call"),
        });
        if let Some(kib) = v.get("peak_rss_kib").and_then(Value::as_u64) {
            fig.rss_kib = Some(fig.rss_kib.map_or(kib, |k| k.max(kib)));
        }
        fig.errors += v.get("errors").and_then(Value::as_u64).unwrap_or(0);
        fig.rounds = f("rounds_per_call").or(fig.rounds);
    }
    Ok(groups)
}

/// The Markdown tables: one per workload, each sequential stdio one followed by its server time
/// per call. An error when a server time cannot be computed honestly (see [`server_times`]).
pub(crate) fn render(groups: &Groups) -> Result<String, String> {
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
            rows.first().map_or(0, |(_, f)| f.runs.len())
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (label, f) in rows {
            // Each figure of ours divided by this row's: above 1× is more calls/s, or more
            // latency or memory. n/a where either side was not measured.
            let ratio = |ours: &dyn Fn(&Figures) -> Option<f64>, theirs: Option<f64>| -> String {
                if OURS.contains(&label.as_str()) || ours_rows.is_empty() {
                    return "—".into();
                }
                let parts: Vec<String> = ours_rows
                    .iter()
                    .map(|(_, o)| match (ours(o), theirs) {
                        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
                        _ => NA.to_string(),
                    })
                    .collect();
                parts.join(" / ")
            };
            let rss = |f: &Figures| f.rss_kib.map(|k| k as f64);
            let speed = ratio(&|o| median(&o.rates()), median(&f.rates()));
            let p50 = ratio(&|o| median(&o.p50()), median(&f.p50()));
            let p99 = ratio(&|o| median(&o.p99()), median(&f.p99()));
            let mem = ratio(&rss, rss(f));
            let cpu = ratio(&|o| median(&o.cpu()), median(&f.cpu()));
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} | {} | {} | {} | {} | {speed} | {p50} | {p99} | {mem} | {cpu} |",
                show_spread(&f.rates()),
                show(median(&f.p50()), 0),
                show(median(&f.p99()), 0),
                show(rss(f).map(|k| k / 1024.0), 1),
                show(median(&f.cpu()), 1),
                show(f.rounds, 2),
                f.errors
            );
        }
        out.push('\n');
        if let Some(times) = server_times(groups, key)? {
            server_time_table(&mut out, key, rows, &times);
        }
    }
    Ok(out)
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
    pub(crate) fn median(&self) -> Option<f64> {
        median(&self.runs)
    }
}

/// Server time per call for a sequential stdio workload; `None` for any other workload or when
/// the null server was not measured on the same transport, protocol and mode. The null server
/// serves only echo, so its echo figures stand in for one round trip of every workload. A run of
/// a server is paired with the null server's run of the same round of `benches/run.sh` (the
/// `round` of both lines; for lines without one, the run at the same position). A run whose
/// round has no null-server p50 is an error naming both: another round's figure is never
/// substituted, since the machine's speed differs between rounds. A run that measured no p50
/// has no server time.
pub(crate) fn server_times(groups: &Groups, key: &GroupKey) -> Result<Option<Vec<ServerTime>>, String> {
    let (transport, work, protocol, mode, clients) = key;
    if transport != "stdio" || mode != "seq" {
        return Ok(None);
    }
    let null_key = (
        transport.clone(),
        workload("echo").to_string(),
        protocol.clone(),
        mode.clone(),
        *clients,
    );
    let Some((_, null)) = groups
        .get(&null_key)
        .and_then(|rows| rows.iter().find(|(l, _)| l == NULL))
    else {
        return Ok(None);
    };
    let Some(null_median) = median(&null.p50()) else {
        return Err(format!(
            "{transport}, {protocol}, sequential: the {NULL} has runs but no p50 to subtract"
        ));
    };
    let Some(rows) = groups.get(key) else {
        return Ok(None);
    };
    let mut times = Vec::new();
    for (label, f) in rows.iter().filter(|(label, _)| label != NULL) {
        let trips = 1.0 + f.rounds.unwrap_or(0.0);
        let mut runs = Vec::new();
        for (i, run) in f.runs.iter().enumerate() {
            let Some(p50) = run.p50 else { continue };
            let (paired, which) = match run.round {
                Some(r) => (null.runs.iter().find(|n| n.round == Some(r)), format!("round {r}")),
                None => (null.runs.get(i), format!("run {} (by position)", i + 1)),
            };
            let Some(null_p50) = paired.and_then(|n| n.p50) else {
                return Err(format!(
                    "{transport}, {work}, {protocol}, sequential: {label} has a p50 in {which} but the {NULL} has none \
                     there to subtract ({} run(s) of the {NULL}); rerun it or drop {label}'s run",
                    null.runs.len()
                ));
            };
            runs.push(p50 - null_p50 * trips);
        }
        times.push(ServerTime {
            label: label.clone(),
            runs,
            trips,
            null_share: null_median * trips,
        });
    }
    Ok(Some(times))
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
        rows.first().map_or(0, |(_, f)| f.runs.len()),
        BASELINES[0],
        BASELINES[1]
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for t in times {
        let p50 = rows
            .iter()
            .find(|(l, _)| *l == t.label)
            .and_then(|(_, f)| median(&f.p50()));
        let ratios: Vec<String> = BASELINES
            .iter()
            .map(|b| match times.iter().find(|o| o.label == *b) {
                Some(o) if o.label == t.label => "—".into(),
                Some(o) => match (t.median(), o.median()) {
                    (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
                    _ => NA.to_string(),
                },
                None => "—".into(),
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0} ({} × {:.0}) | {} | {} |",
            t.label,
            show_spread(&t.runs),
            show(p50, 0),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(protocol: &str, mode: &str) -> GroupKey {
        ("stdio".into(), "echo".into(), protocol.into(), mode.into(), 1)
    }

    fn run(round: u64, p50: f64) -> Run {
        Run {
            round: Some(round),
            rate: Some(1e6 / p50),
            p50: Some(p50),
            p99: Some(p50 * 2.0),
            cpu: Some(10.0),
        }
    }

    fn figures(runs: Vec<Run>) -> Figures {
        Figures {
            runs,
            rss_kib: Some(4096),
            errors: 0,
            rounds: Some(0.0),
        }
    }

    #[test]
    fn an_empty_series_is_shown_as_n_a_not_inf() {
        // mcp-resolve measured nothing in its one run (no calls: every figure absent), next to
        // a peer that did.
        let mut groups = Groups::new();
        groups.insert(
            key("2026-07-28", "pipe"),
            vec![
                (
                    "mcp-resolve".into(),
                    Figures {
                        runs: vec![Run::default()],
                        ..Figures::default()
                    },
                ),
                ("rmcp-best".into(), figures(vec![run(1, 100.0)])),
            ],
        );
        let text = render(&groups).expect("a report");
        assert!(!text.to_lowercase().contains("inf"), "{text}");
        assert!(!text.contains("NaN"), "{text}");
        let ours = text
            .lines()
            .find(|l| l.starts_with("| mcp-resolve |"))
            .expect("our row");
        assert!(ours.starts_with("| mcp-resolve | n/a | n/a | n/a |"), "{ours}");
        let peer = text
            .lines()
            .find(|l| l.starts_with("| rmcp-best |"))
            .expect("the peer's row");
        // Its calls/s are shown; every ratio with our missing figures is n/a, not 0.00×.
        assert!(
            peer.starts_with("| rmcp-best | 10000 (10000–10000) | 100 | 200 |"),
            "{peer}"
        );
        assert!(!peer.contains('×'), "{peer}");
    }

    #[test]
    fn a_server_time_without_the_null_servers_run_of_its_round_is_an_error() {
        // Three rounds of mcp-resolve, but the null server's run of round 2 failed: its median
        // must not stand in for it.
        let mut groups = Groups::new();
        groups.insert(
            key("2026-07-28", "seq"),
            vec![
                ("null-server".into(), figures(vec![run(1, 100.0), run(3, 100.0)])),
                (
                    "mcp-resolve".into(),
                    figures(vec![run(1, 130.0), run(2, 400.0), run(3, 130.0)]),
                ),
            ],
        );
        let err = server_times(&groups, &key("2026-07-28", "seq")).err().expect("refused");
        assert!(
            err.contains("mcp-resolve") && err.contains("round 2") && err.contains("null-server"),
            "{err}"
        );
        let err = render(&groups).expect_err("the report is refused too");
        assert!(err.contains("round 2"), "{err}");
    }

    #[test]
    fn server_times_pair_runs_by_round() {
        // The null server's runs came in another order: each is still paired with its round.
        let mut groups = Groups::new();
        groups.insert(
            key("2025-11-25", "seq"),
            vec![
                ("null-server".into(), figures(vec![run(2, 50.0), run(1, 100.0)])),
                ("mcp-resolve".into(), figures(vec![run(1, 130.0), run(2, 60.0)])),
            ],
        );
        let times = server_times(&groups, &key("2025-11-25", "seq"))
            .expect("paired")
            .expect("a sequential stdio workload with the null server");
        assert_eq!(times.len(), 1);
        assert_eq!(times[0].runs, vec![30.0, 10.0]);
    }
}
