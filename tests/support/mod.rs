//! Shared by the interop tests: the release `notes`, `axum`, `conformance`, `connect` and `rollout` binaries, the
//! debug `watch`, `feedback` and `payment` binaries and the peers' installers, each obtained once per test binary.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

pub(crate) const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// A protocol era as the official Python SDK client (`tests/interop/py_client.py`) is told to
/// speak it: its mode, and the version it then negotiates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28 (the client's `auto` mode).
    New,
    /// 2025-11-25 (`legacy`: the `initialize` handshake).
    Old,
}

impl Era {
    pub(crate) fn mode(self) -> &'static str {
        match self {
            Era::New => "auto",
            Era::Old => "legacy",
        }
    }
    pub(crate) fn version(self) -> &'static str {
        match self {
            Era::New => "2026-07-28",
            Era::Old => "2025-11-25",
        }
    }
}

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

/// The release `bench_server` example (`MCP_RESOLVE_BENCH_BIN` overrides it), built with every
/// feature as `scripts/test.sh` builds it.
pub(crate) fn bench_server_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("bench_server", Some("MCP_RESOLVE_BENCH_BIN"), true)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// The release `axum` example (`MCP_RESOLVE_AXUM_BIN` overrides it), built with every feature
/// (it needs `tower` and `metrics`).
pub(crate) fn axum_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("axum", Some("MCP_RESOLVE_AXUM_BIN"), true)) {
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

/// The release `rollout` example, built with every feature (`redis`: replicas share their tasks
/// through `MCP_RESOLVE_REDIS_URL`); `MCP_RESOLVE_ROLLOUT_BIN` overrides it.
pub(crate) fn rollout_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("rollout", Some("MCP_RESOLVE_ROLLOUT_BIN"), true)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// The release `connect` example (`MCP_RESOLVE_CONNECT_BIN` overrides it).
pub(crate) fn connect_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("connect", Some("MCP_RESOLVE_CONNECT_BIN"), true)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// The `connect` example in the debug profile (as the tests themselves are), for tests that do
/// not need the release build.
pub(crate) fn connect_debug_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("connect", None, false)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// The `triage` example in the debug profile (as the tests themselves are).
pub(crate) fn triage_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("triage", None, false)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// The `feedback` example in the debug profile (as the tests themselves are).
pub(crate) fn feedback_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("feedback", None, false)) {
        Ok(bin) => bin,
        Err(e) => panic!("{e}"),
    }
}

/// The `payment` example in the debug profile (as the tests themselves are).
pub(crate) fn payment_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| build_example("payment", None, false)) {
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

/// The chromedriver binary, with Debian's chromium beside it (installed when missing).
pub(crate) fn chromedriver() -> &'static Path {
    static DRIVER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match DRIVER.get_or_init(|| setup_script("setup-chromium.sh")) {
        Ok(driver) => driver,
        Err(e) => panic!("{e}"),
    }
}

/// The redis-server binary (Debian's package, installed by scripts/setup-redis.sh when missing).
pub(crate) fn redis_server_bin() -> &'static Path {
    static REDIS: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match REDIS.get_or_init(|| setup_script("setup-redis.sh")) {
        Ok(redis) => redis,
        Err(e) => panic!("{e}"),
    }
}

/// A redis-server of the test's own: a free loopback port, no persistence, a temporary working
/// directory; killed (and its directory removed) when dropped.
pub(crate) struct RedisServer {
    child: Child,
    pub(crate) port: u16,
    dir: PathBuf,
}

impl RedisServer {
    pub(crate) fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        Self::start_on(port)
    }

    /// On this port (a Redis coming back where it was).
    pub(crate) fn start_on(port: u16) -> Self {
        let dir = target_dir()
            .join("tmp")
            .join(format!("redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("redis-server's directory");
        let child = Command::new(redis_server_bin())
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "yes"])
            .arg("--dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let server = Self { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !server.answers_ping() {
            assert!(Instant::now() < deadline, "redis-server does not answer on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// `PING` → `+PONG`, over a plain socket.
    fn answers_ping(&self) -> bool {
        use std::io::Write;
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let mut buf = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    /// Kills it now (a Redis that goes away).
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
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

/// Drains a pipe on its own thread so it can never fill up and stall its writer.
pub(crate) fn drain(mut pipe: impl Read + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, mpsc::Receiver<()>) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    let sink = Arc::clone(&buf);
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => sink.lock().unwrap().extend_from_slice(&chunk[..n]),
            }
        }
        let _ = tx.send(());
    });
    (buf, rx)
}

/// A client process run to its end: its exit, whether the deadline killed it, and its output.
pub(crate) struct Finished {
    pub(crate) status: Option<ExitStatus>,
    pub(crate) timed_out: bool,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
}

/// Spawns `cmd` with piped stdout and stderr (stdin closed), waits for it until `deadline`
/// (then kills it), and collects its output, waiting at most `grace` for the pipes to close:
/// a stdio server inherits the client's stderr and exits on stdin EOF, so that is quick, but a
/// lingering one must not hang the test.
pub(crate) fn run_to_end(cmd: &mut Command, label: &str, deadline: Duration, grace: Duration) -> Finished {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("[{label}] cannot start {:?}: {e}", cmd.get_program()));
    let (stdout, stdout_done) = drain(child.stdout.take().expect("piped stdout"));
    let (stderr, stderr_done) = drain(child.stderr.take().expect("piped stderr"));
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= deadline => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("[{label}] waiting for {:?}: {e}", cmd.get_program()),
        }
    };
    let _ = stdout_done.recv_timeout(grace);
    let _ = stderr_done.recv_timeout(grace);
    Finished {
        status,
        timed_out,
        stdout: text_of(&stdout),
        stderr: text_of(&stderr),
        elapsed: started.elapsed(),
    }
}

/// What a drained pipe holds so far, as text.
pub(crate) fn text_of(buf: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap()).into_owned()
}

/// How long a fresh HTTP server may take to accept TCP connections.
const SERVER_READY_DEADLINE: Duration = Duration::from_secs(20);
/// Fresh ports tried before giving up (another process may grab a released port first).
const PORT_ATTEMPTS: usize = 5;

/// An example serving Streamable HTTP (`<bin> --http 127.0.0.1:PORT`) in its own process, killed
/// when this guard drops.
pub(crate) struct HttpChild {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
    pub(crate) stderr_done: mpsc::Receiver<()>,
}

impl HttpChild {
    /// Starts `bin --http 127.0.0.1:PORT` on a port the OS just handed out (bound to
    /// 127.0.0.1:0, then released), with the environment `env` makes for that address, and waits
    /// until it accepts TCP connections. If the server exits first (someone else took the port
    /// in between), it retries on a new port.
    pub(crate) fn start(bin: &Path, label: &str, env: &dyn Fn(SocketAddr) -> Vec<(String, String)>) -> HttpChild {
        Self::start_with(bin, &[], label, env)
    }

    /// [`HttpChild::start`] of `program ARGS… --http ADDR` (a script under an interpreter).
    pub(crate) fn start_with(
        bin: &Path,
        args: &[&std::ffi::OsStr],
        label: &str,
        env: &dyn Fn(SocketAddr) -> Vec<(String, String)>,
    ) -> HttpChild {
        let name = bin.file_name().map_or_else(|| "server".into(), |n| n.to_string_lossy());
        let mut failures = String::new();
        for attempt in 1..=PORT_ATTEMPTS {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .unwrap_or_else(|e| panic!("[{label}] cannot pick a free port: {e}"));
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let mut child = Command::new(bin)
                .args(args)
                .arg("--http")
                .arg(addr.to_string())
                .envs(env(addr))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("[{label}] cannot spawn {}: {e}", bin.display()));
            let (stderr, stderr_done) = drain(child.stderr.take().unwrap());
            let mut server = HttpChild {
                child,
                addr,
                stderr,
                stderr_done,
            };
            let started = Instant::now();
            loop {
                if let Ok(Some(status)) = server.child.try_wait() {
                    let _ = server.stderr_done.recv_timeout(Duration::from_secs(2));
                    failures.push_str(&format!(
                        "attempt {attempt}: the server on {addr} exited with {status} before accepting connections:\n{}\n",
                        text_of(&server.stderr)
                    ));
                    break;
                }
                if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                    // Connectable and still ours (not exited with "address in use").
                    if server.child.try_wait().ok().flatten().is_none() {
                        return server;
                    }
                    continue;
                }
                if started.elapsed() >= SERVER_READY_DEADLINE {
                    let log = server.stop();
                    panic!(
                        "[{label}] the server on {addr} accepted no connection within {SERVER_READY_DEADLINE:?}\n\
                         --- server stderr ---\n{log}"
                    );
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("[{label}] could not start a {name} server in {PORT_ATTEMPTS} attempts:\n{failures}");
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Whether the server is still running (it must outlive every client request).
    pub(crate) fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Kills the server and returns its stderr.
    pub(crate) fn stop(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = self.stderr_done.recv_timeout(Duration::from_secs(5));
        text_of(&self.stderr)
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Python SDK driver (`tests/interop/py_client.py`) run with some arguments, its events read
/// as they arrive: for tests that act while a call waits (open a page, then see the result).
pub(crate) struct PyCall {
    child: Child,
    lines: mpsc::Receiver<String>,
    pub(crate) events: Vec<Value>,
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
    closed: bool,
    /// How long [`PyCall::finish`] waits for the driver to end.
    wait: Duration,
}

impl PyCall {
    /// Starts `py_client.py ARGS…` under the test venv's python.
    pub(crate) fn spawn(args: &[&str], wait: Duration) -> PyCall {
        let mut child = Command::new(python())
            .arg(Path::new(MANIFEST_DIR).join("tests/interop/py_client.py"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn the Python driver: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout pipe"));
        let (stderr, _) = drain(child.stderr.take().unwrap_or_else(|| panic!("no stderr pipe")));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        PyCall {
            child,
            lines,
            events: Vec::new(),
            stderr,
            closed: false,
            wait,
        }
    }

    /// Reads one more event within `timeout`; `false` at the deadline or once stdout closed.
    pub(crate) fn read_one(&mut self, timeout: Duration) -> bool {
        if self.closed {
            return false;
        }
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                let event = serde_json::from_str(&line)
                    .unwrap_or_else(|_| serde_json::json!({"event": "not-json", "line": line}));
                self.events.push(event);
                true
            }
            Err(mpsc::RecvTimeoutError::Timeout) => false,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                self.closed = true;
                false
            }
        }
    }

    /// The first event named `name` (read so far or arriving within `timeout`).
    pub(crate) fn wait_for(&mut self, name: &str, timeout: Duration) -> Result<Value, String> {
        self.wait_for_nth(name, 0, timeout)
    }

    /// The `n`th (from 0) event named `name` (read so far or arriving within `timeout`).
    pub(crate) fn wait_for_nth(&mut self, name: &str, n: usize, timeout: Duration) -> Result<Value, String> {
        self.wait_until(&format!("`{name}` event #{n}"), timeout, |events| {
            events.iter().filter(|e| e["event"] == name).nth(n).cloned()
        })
    }

    /// The first event `find` picks out of those read so far or arriving within `timeout`.
    pub(crate) fn wait_until(
        &mut self,
        what: &str,
        timeout: Duration,
        find: impl Fn(&[Value]) -> Option<Value>,
    ) -> Result<Value, String> {
        let started = Instant::now();
        loop {
            if let Some(e) = find(&self.events) {
                return Ok(e);
            }
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() || (!self.read_one(left) && self.closed) {
                return Err(format!("the client sent no {what} within {timeout:?}"));
            }
        }
    }

    /// The events that arrive within `window` (none may be a `result` for a call still waiting).
    pub(crate) fn settle(&mut self, window: Duration) {
        let started = Instant::now();
        while let Some(left) = window.checked_sub(started.elapsed()) {
            if !self.read_one(left) {
                break;
            }
        }
    }

    /// Reads to the end and waits for the process; its exit status.
    pub(crate) fn finish(&mut self) -> Result<ExitStatus, String> {
        let started = Instant::now();
        while !self.closed && started.elapsed() < self.wait {
            self.read_one(self.wait.saturating_sub(started.elapsed()));
        }
        while started.elapsed() < self.wait {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Ok(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err("the Python driver did not exit".into())
    }

    /// The events named `name` read so far.
    pub(crate) fn named(&self, name: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["event"] == name).collect()
    }

    /// Everything read so far and the driver's stderr (the server's too, on stdio), for a
    /// failure message.
    pub(crate) fn transcript(&self) -> String {
        let events: Vec<String> = self.events.iter().map(Value::to_string).collect();
        format!(
            "--- driver events ---\n{}\n--- driver stderr ---\n{}",
            events.join("\n"),
            text_of(&self.stderr)
        )
    }
}

impl Drop for PyCall {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request to a page listener on 127.0.0.1:`port` (`Connection: close`); returns
/// (status, body).
pub(crate) fn http(port: u16, method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let fail = |e: std::io::Error| -> ! { panic!("{method} {target} on 127.0.0.1:{port}: {e}") };
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|e| fail(e));
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap_or_else(|e| fail(e));
    let mut req = format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap_or_else(|e| fail(e));
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap_or_else(|e| fail(e));
    let status = raw.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}
