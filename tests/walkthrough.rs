//! docs/walkthrough.md replayed: the guide's client script (`examples/walkthrough/walkthrough.py`,
//! the official MCP Python SDK from `scripts/setup-python.sh`) run against the release `notes`
//! example on both protocol eras, its stdout compared with the output the guide shows.
//!
//! The guide marks its blocks with a comment on the line before the fence:
//! `<!-- walkthrough: walkthrough.py -->` (the script, which must equal the file), and
//! `<!-- walkthrough: output auto -->` / `<!-- walkthrough: output legacy -->` (what
//! `--mode auto` and `--mode legacy` print). An edit to the guide, the script or the server that
//! changes what a reader would see fails here, naming the block.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod support;

use support::{MANIFEST_DIR, notes_bin, python, run_to_end};

/// One script run (importing `mcp` and two server rounds per call take a few seconds).
const DEADLINE: Duration = Duration::from_secs(60);

fn guide() -> String {
    std::fs::read_to_string(Path::new(MANIFEST_DIR).join("docs/walkthrough.md")).expect("docs/walkthrough.md")
}

fn script_path() -> std::path::PathBuf {
    Path::new(MANIFEST_DIR).join("examples/walkthrough/walkthrough.py")
}

/// The text of the fenced block right after `<!-- walkthrough: NAME -->`, which must occur once.
fn block(name: &str) -> String {
    let guide = guide();
    let marker = format!("<!-- walkthrough: {name} -->");
    let lines: Vec<&str> = guide.lines().collect();
    let at: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim() == marker).collect();
    let &[at] = at.as_slice() else {
        panic!(
            "docs/walkthrough.md must have the line `{marker}` once, before the block it marks; found {}",
            at.len()
        )
    };
    assert!(
        lines.get(at + 1).is_some_and(|l| l.starts_with("```")),
        "docs/walkthrough.md: the line after `{marker}` must open a ``` block"
    );
    let body = &lines[at + 2..];
    let end = body
        .iter()
        .position(|l| l.trim_end() == "```")
        .unwrap_or_else(|| panic!("docs/walkthrough.md: the block after `{marker}` is not closed"));
    body[..end].iter().map(|l| format!("{l}\n")).collect()
}

/// Runs the script as the guide says, with the release `notes` after `--`; its stdout.
fn replay(mode: &str) -> String {
    let mut cmd = Command::new(python());
    cmd.arg(script_path())
        .args(["--mode", mode, "--"])
        .arg(notes_bin())
        // The script's own default; set here so a RUST_LOG of the test run cannot change it.
        .env("RUST_LOG", "warn");
    let run = run_to_end(
        &mut cmd,
        &format!("walkthrough --mode {mode}"),
        DEADLINE,
        Duration::from_secs(5),
    );
    assert!(
        !run.timed_out && run.status.is_some_and(|s| s.success()),
        "walkthrough.py --mode {mode}: status {:?}{} after {:.1?}\n--- stdout ---\n{}\n--- stderr (incl. server) ---\n{}",
        run.status,
        if run.timed_out { " (killed: deadline)" } else { "" },
        run.elapsed,
        run.stdout,
        run.stderr
    );
    run.stdout
}

#[track_caller]
fn assert_replays(mode: &str) {
    let shown = block(&format!("output {mode}"));
    let printed = replay(mode);
    assert!(
        printed == shown,
        "walkthrough.py --mode {mode} no longer prints what docs/walkthrough.md shows\n--- the guide ---\n{shown}--- the script ---\n{printed}"
    );
}

#[test]
fn the_guide_shows_the_script_as_it_is() {
    let file = std::fs::read_to_string(script_path()).expect("examples/walkthrough/walkthrough.py");
    assert!(
        block("walkthrough.py") == file,
        "docs/walkthrough.md's `walkthrough.py` block differs from examples/walkthrough/walkthrough.py: copy the file into the guide"
    );
}

/// 2026-07-28: each question comes back as an `InputRequiredResult` and the client calls again.
#[test]
fn the_2026_07_28_run_prints_what_the_guide_shows() {
    assert_replays("auto");
}

/// 2025-11-25: the `initialize` handshake, each question an `elicitation/create` request.
#[test]
fn the_2025_11_25_run_prints_what_the_guide_shows() {
    assert_replays("legacy");
}

/// The two runs differ only where the guide says they do: the protocol line, and the form's
/// description, which only the handshake era's `requestedSchema` has room for. Everything the
/// tool answers is the same on both.
#[test]
fn the_eras_differ_only_in_the_protocol_and_the_schema_lines() {
    let auto = block("output auto");
    let legacy = block("output legacy");
    let same = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with("protocol ") && !l.starts_with("[client] schema: "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(same(&auto), same(&legacy));
    assert_eq!(auto.lines().next(), Some("protocol 2026-07-28"));
    assert_eq!(legacy.lines().next(), Some("protocol 2025-11-25"));
}
