//! The fuzz targets' smoke check without AFL: `fuzz/src/lib.rs` is compiled here as a module, and
//! every committed input under `fuzz/corpus/<target>/` (seeds and what fuzzing found worth
//! keeping) and `fuzz/regressions/<target>/` (inputs that once broke something) is replayed
//! through its target. A target panics when an invariant breaks, so a replay that returns is a
//! pass. `docs/FUZZING.md` tells how to run the fuzzers themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(unreachable_pub, dead_code, missing_docs)]
#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::path::Path;

/// Replays every file of `dir/<target>/` through its target; returns how many ran.
fn replay(dir: &str, target: &str, run: targets::Target) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else { return 0 };
    let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "{} broke target `{target}`", file.display());
    }
    files.len()
}

#[test]
fn every_corpus_input_replays_cleanly() {
    for (target, run) in targets::TARGETS {
        let seeds = replay("fuzz/corpus", target, run);
        assert!(seeds > 0, "no corpus for target `{target}`");
        let regressions = replay("fuzz/regressions", target, run);
        eprintln!("{target}: {seeds} corpus input(s), {regressions} regression input(s)");
    }
}

/// The HTTP target is only worth its time if its bytes reach the tools: a seed's call is
/// answered by the tool, and a keep-alive connection gets both of its answers.
#[test]
fn http_seeds_reach_the_tools() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/http");
    let echo = targets::http_exchange(&std::fs::read(root.join("stateless-echo")).unwrap());
    let echo = String::from_utf8_lossy(&echo);
    assert!(echo.starts_with("HTTP/1.1 200"), "{echo}");
    assert!(echo.contains(r#""text":"hi""#), "{echo}");
    let two = targets::http_exchange(&std::fs::read(root.join("stateless-retry-keepalive")).unwrap());
    assert_eq!(String::from_utf8_lossy(&two).matches("HTTP/1.1 ").count(), 2);
}
