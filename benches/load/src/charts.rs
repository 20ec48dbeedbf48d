//! `mcp-load report --charts DIR`: the side-by-side figures of the report as SVG bar charts, one
//! bar per server, grouped by protocol (or, over HTTP, by workload):
//!
//! - `calls-stdio-{echo,ask}-{seq,pipe}.svg` and `calls-http.svg`: calls/s;
//! - `cpu-http.svg`: the server's CPU time per call over HTTP;
//! - `p50-stdio-{echo,ask}-seq.svg`: p50 latency of sequential calls;
//! - `server-time-stdio-{echo,ask}-seq.svg`: server time per sequential call (see
//!   [`report::server_times`]).
//!
//! Bars are the median of the runs, whiskers their min–max. Text is written as SVG `<text>` in
//! the generic `sans-serif` family, laid out by plotters' built-in estimate: drawing needs no font
//! file, the viewer picks the font.

use crate::report::{self, Figures, GroupKey, Groups};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// One bar: the median and the min–max of the runs.
#[derive(Clone, Copy)]
struct Bar {
    value: f64,
    lo: f64,
    hi: f64,
}

impl Bar {
    /// No bar for an empty series.
    fn of(runs: &[f64]) -> Option<Bar> {
        let (value, lo, hi) = report::spread(runs)?;
        Some(Bar { value, lo, hi })
    }
}

struct Chart {
    file: String,
    title: String,
    y_desc: String,
    /// The x axis: one group of bars each.
    groups: Vec<String>,
    /// The servers, one bar in each group.
    series: Vec<String>,
    /// `bars[group][series]`.
    bars: Vec<Vec<Option<Bar>>>,
    note: String,
}

/// Each server's colour, the same in every chart (Okabe–Ito, readable with colour blindness).
fn colour(label: &str, i: usize) -> RGBColor {
    const OTHERS: [RGBColor; 4] = [
        RGBColor(0xF0, 0xE4, 0x42),
        RGBColor(0x00, 0x00, 0x00),
        RGBColor(0x88, 0x44, 0x99),
        RGBColor(0x44, 0x88, 0x44),
    ];
    match label {
        "mcp-resolve" => RGBColor(0x00, 0x72, 0xB2),
        "mcp-resolve-ct" => RGBColor(0x56, 0xB4, 0xE9),
        "rmcp-best" => RGBColor(0xD5, 0x5E, 0x00),
        "rmcp-best-ct" => RGBColor(0xE6, 0x9F, 0x00),
        "rmcp-default" => RGBColor(0xCC, 0x79, 0xA7),
        "python-sdk" => RGBColor(0x00, 0x9E, 0x73),
        "null-server" => RGBColor(0x99, 0x99, 0x99),
        _ => OTHERS[i % OTHERS.len()],
    }
}

/// A figure as a bar's label: short enough to sit above a bar.
fn short(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if a >= 1000.0 {
        format!("{:.1}k", v / 1000.0)
    } else if a >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn slug(work: &str) -> &'static str {
    if work == "echo" { "echo" } else { "ask" }
}

/// A workload's name in a chart's title.
fn short_work(work: &str) -> &str {
    if work == "echo" { work } else { "elicitation" }
}

fn how(mode: &str) -> &'static str {
    if mode == "pipe" { "pipelined" } else { "sequential" }
}

/// Every server of `keys`' rows, in first-seen order.
fn servers<'a>(groups: &'a Groups, keys: &[&GroupKey]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for k in keys {
        for (label, _) in &groups[*k] {
            if !out.contains(&label.as_str()) {
                out.push(label);
            }
        }
    }
    out
}

fn chart_of(
    groups: &Groups,
    keys: &[&GroupKey],
    group_name: impl Fn(&GroupKey) -> String,
    figure: impl Fn(&GroupKey, &str, &Figures) -> Option<Bar>,
) -> (Vec<String>, Vec<String>, Vec<Vec<Option<Bar>>>) {
    let series = servers(groups, keys);
    let bars = keys
        .iter()
        .map(|k| {
            series
                .iter()
                .map(|s| {
                    let (_, f) = groups[*k].iter().find(|(l, _)| l == s)?;
                    figure(k, s, f)
                })
                .collect()
        })
        .collect();
    (
        keys.iter().map(|k| group_name(k)).collect(),
        series.iter().map(|s| s.to_string()).collect(),
        bars,
    )
}

fn charts(groups: &Groups) -> Result<Vec<Chart>, String> {
    let runs = groups.values().flatten().map(|(_, f)| f.runs.len()).max().unwrap_or(0);
    let spread = if runs > 1 {
        format!("Bars: median of {runs} runs; whiskers: min–max.")
    } else {
        format!("Bars: {runs} run.")
    };
    let mut out = Vec::new();
    let protocol = |k: &GroupKey| k.2.clone();
    // Calls/s over stdio: one chart per workload and mode, grouped by protocol.
    for work in ["echo", "one form elicitation"] {
        for mode in ["seq", "pipe"] {
            let keys: Vec<&GroupKey> = groups
                .keys()
                .filter(|k| k.0 == "stdio" && k.1 == work && k.3 == mode)
                .collect();
            if keys.is_empty() {
                continue;
            }
            let (g, s, bars) = chart_of(groups, &keys, protocol, |_, _, f| Bar::of(&f.rates()));
            out.push(Chart {
                file: format!("calls-stdio-{}-{mode}.svg", slug(work)),
                title: format!("stdio, {}, {}: calls/s (higher is better)", short_work(work), how(mode)),
                y_desc: "calls/s".into(),
                groups: g,
                series: s,
                bars,
                note: spread.clone(),
            });
        }
    }
    // Calls/s over HTTP: one chart, grouped by workload.
    let keys: Vec<&GroupKey> = groups.keys().filter(|k| k.0 == "http").collect();
    if !keys.is_empty() {
        let (g, s, bars) = chart_of(
            groups,
            &keys,
            |k| format!("{}, {}", k.1, k.2),
            |_, _, f| Bar::of(&f.rates()),
        );
        let clients = keys[0].4;
        out.push(Chart {
            file: "calls-http.svg".into(),
            title: format!("Streamable HTTP, {clients} concurrent clients: calls/s (higher is better)"),
            y_desc: "calls/s".into(),
            groups: g,
            series: s,
            bars,
            note: spread.clone(),
        });
        // And what each call cost the server: with the machine's 2 cores shared by the server
        // and the driver, calls/s alone hides a server that spends more for the same rate.
        let (g, s, bars) = chart_of(
            groups,
            &keys,
            |k| format!("{}, {}", k.1, k.2),
            |_, _, f| Bar::of(&f.cpu()),
        );
        out.push(Chart {
            file: "cpu-http.svg".into(),
            title: format!("Streamable HTTP, {clients} concurrent clients: server CPU per call (lower is better)"),
            y_desc: "server CPU µs per call".into(),
            groups: g,
            series: s,
            bars,
            note: format!(
                "Server CPU: the server process's CPU time over the measured calls, divided by the calls. {spread}"
            ),
        });
    }
    // Sequential stdio: p50 latency and server time per call.
    for work in ["echo", "one form elicitation"] {
        let keys: Vec<&GroupKey> = groups
            .keys()
            .filter(|k| k.0 == "stdio" && k.1 == work && k.3 == "seq")
            .collect();
        if keys.is_empty() {
            continue;
        }
        let (g, s, bars) = chart_of(groups, &keys, protocol, |_, _, f| Bar::of(&f.p50()));
        out.push(Chart {
            file: format!("p50-stdio-{}-seq.svg", slug(work)),
            title: format!("stdio, {}, sequential: p50 latency (lower is better)", short_work(work)),
            y_desc: "p50 µs".into(),
            groups: g,
            series: s,
            bars,
            note: spread.clone(),
        });
        let times = keys
            .iter()
            .map(|k| report::server_times(groups, k))
            .collect::<Result<Vec<_>, _>>()?;
        let (g, s, bars) = chart_of(groups, &keys, protocol, |k, label, _| {
            let i = keys.iter().position(|o| o == &k)?;
            let t = times[i].as_ref()?.iter().find(|t| t.label == label)?;
            Bar::of(&t.runs)
        });
        // The null server has no server time: drop its empty bars.
        let keep: Vec<usize> = (0..s.len()).filter(|&j| bars.iter().any(|b| b[j].is_some())).collect();
        let subtracted = if work == "echo" {
            "the null server's p50"
        } else {
            "the null server's echo p50 × round trips per call (1 + rounds/call)"
        };
        out.push(Chart {
            file: format!("server-time-stdio-{}-seq.svg", slug(work)),
            title: format!(
                "stdio, {}, sequential: server time per call (lower is better)",
                short_work(work)
            ),
            y_desc: "server µs per call".into(),
            groups: g,
            series: keep.iter().map(|&j| s[j].clone()).collect(),
            bars: bars.iter().map(|b| keep.iter().map(|&j| b[j]).collect()).collect(),
            note: format!("Server time: p50 minus {subtracted}, run by run. {spread}"),
        });
    }
    Ok(out)
}

/// Draws every chart into `dir`, returning the files written.
pub(crate) fn write(groups: &Groups, dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for chart in charts(groups)? {
        let path = dir.join(&chart.file);
        draw(&chart, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

const BAR: u32 = 30;
const GROUP_GAP: u32 = 40;
const FONT: &str = "sans-serif";

fn draw(c: &Chart, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let n_groups = c.groups.len().max(1);
    let n_series = c.series.len().max(1);
    let plot_w = n_groups as u32 * (n_series as u32 * BAR + GROUP_GAP);
    let width = (plot_w + 100).max(760);
    // The y range: from 0 (or the lowest whisker) to the highest, unless one bar dwarfs the rest
    // (the Python SDK's latency): then the axis stops above the others and that bar is cut.
    let all: Vec<Bar> = c.bars.iter().flatten().flatten().copied().collect();
    let mut tops: Vec<f64> = all.iter().map(|b| b.hi.max(b.value)).collect();
    tops.sort_by(|a, b| b.total_cmp(a));
    // Cut the `i` highest bars (at most one a group) when each is over 3× the next highest.
    let clip = (1..=n_groups.min(tops.len().saturating_sub(1)))
        .find(|&i| tops[i] > 0.0 && tops[i - 1] > 3.0 * tops[i])
        .map(|i| tops[i] * 1.25);
    let highest = tops.first().copied().unwrap_or(1.0).max(0.0);
    // The legend: as many rows as the servers' names need.
    let text_w = |s: &str, size: f64| s.chars().count() as f64 * size / 1.24 * 0.6;
    let mut rows = 1;
    let mut x = 20.0;
    for s in &c.series {
        let w = 22.0 + text_w(s, 18.0) + 24.0;
        if x + w > f64::from(width) - 20.0 {
            rows += 1;
            x = 20.0;
        }
        x += w;
    }
    // The note under the legend, wrapped to the chart's width.
    let mut note: Vec<String> = vec![String::new()];
    let note_text = if clip.is_some() {
        format!(
            "{} A bar with a white band is cut: its figure is the label above it.",
            c.note
        )
    } else {
        c.note.clone()
    };
    for word in note_text.split(' ') {
        let last = note.last_mut().expect("one line");
        if !last.is_empty() && text_w(&format!("{last} {word}"), 16.0) > f64::from(width) - 40.0 {
            note.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    let legend_h = 24 * rows + 18 * note.len() as u32 + 16;
    let height = 420 + legend_h;

    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&c.title, (FONT, 24))?;
    let (plot, legend) = root.split_vertically(root.dim_in_pixel().1 - legend_h);

    let y_hi = clip.unwrap_or(highest).max(1e-9) * 1.15;
    let y_lo = all.iter().map(|b| b.lo.min(b.value)).fold(0.0, f64::min) * 1.15;

    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .margin_right(24)
        .x_label_area_size(34)
        .y_label_area_size(78)
        .build_cartesian_2d(0f64..n_groups as f64, y_lo..y_hi)?;
    let y_label = |v: &f64| short(*v);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&y_label)
        .y_desc(c.y_desc.as_str())
        .y_label_style((FONT, 17))
        .axis_desc_style((FONT, 18))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(0xE0, 0xE0, 0xE0))
        .draw()?;

    // Bars take `n_series` slots of the group's width, centred, with a gap between groups.
    let slot = (1.0 - f64::from(GROUP_GAP) / f64::from(n_series as u32 * BAR + GROUP_GAP)) / n_series as f64;
    // The groups' names under the axis (plotters would put its labels at round numbers).
    for (g, name) in c.groups.iter().enumerate() {
        let style = TextStyle::from((FONT, 19).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        chart.draw_series(std::iter::once(
            EmptyElement::at((g as f64 + 0.5, y_lo)) + Text::new(name.clone(), (0, 8), style),
        ))?;
    }
    for (g, bars) in c.bars.iter().enumerate() {
        for (s, bar) in bars.iter().enumerate() {
            let Some(b) = bar else { continue };
            let x0 = g as f64 + 0.5 - slot * n_series as f64 / 2.0 + slot * s as f64;
            let (l, r) = (x0 + slot * 0.08, x0 + slot * 0.92);
            let mid = (l + r) / 2.0;
            let cut = clip.is_some_and(|top| b.value > top);
            let top = if cut { clip.unwrap_or(b.value) } else { b.value };
            let fill = colour(&c.series[s], s);
            chart.draw_series(std::iter::once(Rectangle::new([(l, 0.0), (r, top)], fill.filled())))?;
            if cut {
                // A white band: the bar goes on beyond the axis.
                let (a, z) = (top * 0.90, top * 0.94);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(l - 0.01, a), (r + 0.01, z)],
                    WHITE.filled(),
                )))?;
            } else if b.hi > b.lo {
                let line = BLACK.stroke_width(1);
                let (cl, cr) = (mid - slot * 0.18, mid + slot * 0.18);
                chart.draw_series([
                    PathElement::new(vec![(mid, b.lo), (mid, b.hi)], line),
                    PathElement::new(vec![(cl, b.lo), (cr, b.lo)], line),
                    PathElement::new(vec![(cl, b.hi), (cr, b.hi)], line),
                ])?;
            }
            let label_at = if cut { top } else { b.hi.max(b.value).max(0.0) };
            let style = TextStyle::from((FONT, 15).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Bottom));
            chart.draw_series(std::iter::once(
                EmptyElement::at((mid, label_at)) + Text::new(short(b.value), (0, -3), style),
            ))?;
        }
    }

    // The legend and the note, below the plot.
    let mut x = 20i32;
    let mut y = 8i32;
    for (i, s) in c.series.iter().enumerate() {
        let w = (22.0 + text_w(s, 18.0) + 24.0) as i32;
        if x + w > width as i32 - 20 {
            x = 20;
            y += 24;
        }
        legend.draw(&Rectangle::new([(x, y), (x + 16, y + 16)], colour(s, i).filled()))?;
        legend.draw(&Text::new(
            s.clone(),
            (x + 22, y + 8),
            TextStyle::from((FONT, 18).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        x += w;
    }
    for (i, line) in note.iter().enumerate() {
        legend.draw(&Text::new(
            line.clone(),
            (20, y + 30 + 18 * i as i32),
            TextStyle::from((FONT, 16).into_font())
                .color(&RGBColor(0x55, 0x55, 0x55))
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    root.present()?;
    Ok(())
}
