//! Shared by the CLI's tests: the binary, the servers it drives (the official Python SDK's Notes
//! server, our `notes` example, this crate's `questions` example), and running a command with a
//! bounded wait.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The workspace root (this crate is `cli/` in it).
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The `mcp-resolve` binary under test.
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-resolve")
}

/// Runs a setup script of the repository and returns the last line it printed.
pub(crate) fn setup(script: &str) -> String {
    let out = Command::new("bash")
        .arg(repo().join("scripts").join(script))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/{script}: {e}"));
    assert!(
        out.status.success(),
        "scripts/{script} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The venv's python, with the official MCP SDK (`scripts/setup-python.sh`).
pub(crate) fn python() -> &'static str {
    static PY: OnceLock<String> = OnceLock::new();
    PY.get_or_init(|| setup("setup-python.sh"))
}

/// The official Python SDK's Notes server.
pub(crate) fn py_notes() -> String {
    repo()
        .join("tests/interop/py_notes_server.py")
        .to_string_lossy()
        .into_owned()
}

/// `cargo build` with `args` (from the workspace root); the executable of the target `name`.
fn cargo_build(args: &[&str], name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let started = Instant::now();
    let out = Command::new(&cargo)
        .arg("build")
        .args(args)
        .args(["--message-format=json-render-diagnostics", "--manifest-path"])
        .arg(repo().join("Cargo.toml"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cargo}: {e}"));
    assert!(
        out.status.success(),
        "cargo build {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo build {args:?} named no executable for {name}"));
    eprintln!("built {} in {:.1?}", exe.display(), started.elapsed());
    exe
}

/// Our `notes` example (`MCP_RESOLVE_NOTES_BIN`, as scripts/test.sh sets it, or built here).
pub(crate) fn notes_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("MCP_RESOLVE_NOTES_BIN") {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(p.is_file(), "MCP_RESOLVE_NOTES_BIN={} is not a file", p.display());
            p
        }
        None => cargo_build(&["--example", "notes", "--all-features"], "notes"),
    })
}

/// Our `rollout` example, a tool that runs as a task and asks mid-run
/// (`MCP_RESOLVE_ROLLOUT_BIN`, as scripts/test.sh sets it, or built here).
pub(crate) fn rollout_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("MCP_RESOLVE_ROLLOUT_BIN") {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(p.is_file(), "MCP_RESOLVE_ROLLOUT_BIN={} is not a file", p.display());
            p
        }
        None => cargo_build(&["--example", "rollout", "--all-features"], "rollout"),
    })
}

/// This crate's `questions` example (cargo builds the examples with the tests; built here when
/// it is not).
pub(crate) fn questions_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let beside = Path::new(bin()).parent().unwrap().join("examples").join("questions");
        if beside.is_file() {
            beside
        } else {
            cargo_build(&["-p", "mcp-resolve-cli", "--example", "questions"], "questions")
        }
    })
}

/// What a finished command did.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) took: Duration,
}

impl Run {
    /// Panics, showing everything, unless the exit code is `code`.
    pub(crate) fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit code: {self:#?}");
        self
    }
}

/// Runs `mcp-resolve args…` with stdin from /dev/null (no terminal), waiting at most `limit`.
pub(crate) fn run(args: &[&str], limit: Duration) -> Run {
    let started = Instant::now();
    let mut child = Command::new(bin())
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-resolve");
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run {
        code: status.and_then(|s| s.code()),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        took: started.elapsed(),
    };
    assert!(
        status.is_some(),
        "mcp-resolve {args:?} ran longer than {limit:?}: {run:#?}"
    );
    run
}
