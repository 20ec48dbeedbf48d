//! Shared by the interop tests: the release `notes` and `conformance` binaries, the debug `watch`
//! binary and the peers' installers, each obtained once per test binary.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

pub(crate) const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

pub(crate) fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => Path::new(MANIFEST_DIR).join(dir), // join keeps an absolute `dir` as is
        None => Path::new(MANIFEST_DIR).join("target"),
    }
}

/// Runs `cargo build [--release] --example <example> --all-features` (a no-op when it is built
/// already) and returns the binary, or the binary `$<env>` names instead.
fn build_example(example: &str, env: Option<&str>, release: bool) -> Result<PathBuf, String> {
    if let Some(env) = env
        && let Some(bin) = std::env::var_os(env)
    {
        let bin = PathBuf::from(bin);
        return if bin.is_file() {
            Ok(bin)
        } else {
            Err(format!("{env}={} is not a file", bin.display()))
        };
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let manifest = Path::new(MANIFEST_DIR).join("Cargo.toml");
    let profile: &[&str] = if release { &["--release"] } else { &[] };
    let shown = format!(
        "cargo build {}--example {example} --all-features",
        if release { "--release " } else { "" }
    );
    let started = Instant::now();
    let out = Command::new(&cargo)
        .arg("build")
        .args(profile)
        .args([
            "--example",
            example,
            "--all-features",
            "--message-format=json-render-diagnostics",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{cargo}`: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let or_env = env.map_or_else(String::new, |env| {
            format!(", or point {env} at a built {example} binary")
        });
        return Err(format!(
            "`{shown}` failed ({}):\n{stderr}\nBuild it yourself with `{shown}`{or_env}.",
            out.status
        ));
    }
    // Prefer the path cargo reports (it honours `build.target-dir` from config files too).
    let reported = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == example)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from));
    let bin = reported.unwrap_or_else(|| {
        target_dir()
            .join(if release { "release" } else { "debug" })
            .join("examples")
            .join(format!("{example}{}", std::env::consts::EXE_SUFFIX))
    });
    eprintln!(
        "interop: {example} binary {} (cargo build took {:.1?})",
        bin.display(),
        started.elapsed()
    );
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "cargo built the {example} example, but {} does not exist",
            bin.display()
        ))
    }
}

/// The release `notes` example (`MCP_RESOLVE_NOTES_BIN` overrides it).
pub(crate) fn notes_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("notes", Some("MCP_RESOLVE_NOTES_BIN"), true)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// The release `conformance` example (`MCP_RESOLVE_CONFORMANCE_BIN` overrides it).
pub(crate) fn conformance_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("conformance", Some("MCP_RESOLVE_CONFORMANCE_BIN"), true)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// The `watch` example, built in the debug profile (as the tests themselves are).
pub(crate) fn watch_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("watch", None, false)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// Runs a `scripts/setup-*.sh` script; its last non-empty stdout line is an executable.
pub(crate) fn setup_script(name: &str) -> Result<PathBuf, String> {
    let script = Path::new(MANIFEST_DIR).join("scripts").join(name);
    let out = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let exe = stdout
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(PathBuf::from);
    match exe {
        Some(exe) if out.status.success() && exe.is_file() => Ok(exe),
        _ => Err(format!(
            "scripts/{name} failed ({}); it must print the interpreter last.\n\
             --- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
            out.status
        )),
    }
}

pub(crate) fn python() -> &'static Path {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PY.get_or_init(|| setup_script("setup-python.sh")) {
        Ok(py) => py,
        Err(e) => panic!("{e}"),
    }
}

pub(crate) fn node() -> &'static Path {
    static NODE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match NODE.get_or_init(|| setup_script("setup-node.sh")) {
        Ok(node) => node,
        Err(e) => panic!("{e}"),
    }
}

/// The nginx binary (installed from the distribution's packages when missing).
pub(crate) fn nginx() -> &'static Path {
    static NGINX: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match NGINX.get_or_init(|| setup_script("setup-nginx.sh")) {
        Ok(nginx) => nginx,
        Err(e) => panic!("{e}"),
    }
}

/// One run of a client driver (`tests/interop/*_client.*`): its JSON-lines events and what is
/// needed to explain a failure. The assertions every interop test makes live here.
pub(crate) trait DriverRun {
    /// Panics with `what` and everything that explains it (outputs, logs).
    fn fail(&self, what: impl std::fmt::Display) -> !;
    /// The driver's events, in order.
    fn events(&self) -> &[Value];
    /// Whether the driver was killed at the deadline.
    fn timed_out(&self) -> bool;
    /// The driver's exit status.
    fn status(&self) -> Option<std::process::ExitStatus>;

    #[track_caller]
    fn check(&self, ok: bool, what: impl std::fmt::Display) {
        if !ok {
            self.fail(what)
        }
    }

    #[track_caller]
    fn check_eq(&self, got: &Value, want: &Value, what: &str) {
        if got != want {
            self.fail(format_args!("{what}: expected {want}, got {got}"))
        }
    }

    /// The driver ended normally: exit status 0 and a final `done` event, no `exception`.
    #[track_caller]
    fn assert_driver_clean(&self) {
        if let Some(exc) = self.events().iter().find(|e| e["event"] == "exception") {
            self.fail(format_args!("the driver reported an exception: {exc}"));
        }
        self.check(!self.timed_out(), "the driver did not finish in time");
        self.check(
            self.status().is_some_and(|s| s.success()),
            "the driver exited unsuccessfully",
        );
        self.check(
            self.events().last().is_some_and(|e| e["event"] == "done"),
            "the last event is not `done`",
        );
    }
}
