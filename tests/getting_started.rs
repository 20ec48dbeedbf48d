//! The README's "Getting started", followed as written.
//!
//! The blocks a newcomer copies are marked in README.md with an HTML comment on the line before
//! their fence (`<!-- getting-started: Cargo.toml -->`, `src/main.rs`, `client.py`, `output`).
//! The test takes them from there, so an edit that breaks the section breaks this test:
//! - it writes the project `cargo new hello-mcp` makes (under `target/tmp/getting-started/`),
//!   with the README's `[dependencies]` lines and `src/main.rs`. Two changes a newcomer does not
//!   make: the `mcp-resolve` line gets `path = "<this repository>"` (the crate is not published),
//!   and the manifest gets an empty `[workspace]` (the project sits inside this repository's
//!   workspace directory). The repository's `Cargo.lock` is copied in, so the versions are the
//!   ones the workspace is tested with and the build needs no network when they are cached;
//! - it builds it with `cargo build --offline` into this workspace's target directory (reusing
//!   what is compiled there already), and without `--offline` if cargo needs the network;
//! - it runs the README's `client.py` with the official MCP Python SDK (`scripts/setup-python.sh`,
//!   the same `mcp` version the README names): over stdio with accept (the output must be the
//!   README's `output` block), decline and cancel, and over Streamable HTTP with accept;
//! - it drives the server with `tests/interop/py_client.py` on both protocol eras (2026-07-28 and
//!   2025-11-25): the tools the client sees, the question's form, the results of accept and
//!   decline, and -32021 for a client that cannot be asked, as the README says.
//!
//! On failure the message carries the client's events or output and the server's stderr.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod support;

use support::{DriverRun, HttpChild, MANIFEST_DIR, python, run_to_end, target_dir};

/// The package `cargo new hello-mcp` makes, as the README names it.
const PACKAGE: &str = "hello-mcp";
/// How long one client process may run before it is killed.
const CLIENT_DEADLINE: Duration = Duration::from_secs(60);
/// `py_client.py`'s own `--timeout`, below the deadline so it reports a timeout as JSON first.
const DRIVER_TIMEOUT_SECS: &str = "50";
/// What `client.py` answers when it accepts, and what `py_client.py` is told to answer.
const ACCEPT: &str = r#"{"people": 4, "outside": true}"#;
/// The last line of `client.py`'s output when it declines or cancels, as the README says.
const DECLINED: &str = "book_table: Not booked: you declined.";
const CANCELLED: &str = "book_table: Not booked: cancelled.";
/// What a stdio server says on stderr when it starts, as the README quotes it.
const STDIO_LINE: &str = "serving MCP on stdio: waiting for a client on stdin";
/// The error of a client without the form elicitation capability.
const MISSING_CAPABILITY: i64 = -32021;

// ---------------------------------------------------------------------------------------------
// The README's marked blocks.
// ---------------------------------------------------------------------------------------------

fn readme() -> &'static str {
    static README: OnceLock<String> = OnceLock::new();
    README.get_or_init(|| {
        std::fs::read_to_string(Path::new(MANIFEST_DIR).join("README.md")).expect("README.md is readable")
    })
}

/// The README with every run of whitespace made one space, to find prose across line breaks.
fn readme_prose() -> String {
    readme().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A fenced block of the README: its info string and its text (without the fences).
struct Block {
    info: String,
    text: String,
}

/// The fenced block right after `<!-- getting-started: NAME -->`, which must occur once.
fn block(name: &str) -> Result<Block, String> {
    let marker = format!("<!-- getting-started: {name} -->");
    let lines: Vec<&str> = readme().lines().collect();
    let at: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim() == marker).collect();
    let &[at] = at.as_slice() else {
        return Err(format!(
            "README.md must have the line `{marker}` once (before the block it marks); found {}",
            at.len()
        ));
    };
    let Some(info) = lines.get(at + 1).and_then(|l| l.strip_prefix("```")) else {
        return Err(format!("README.md: the line after `{marker}` must open a ``` block"));
    };
    let body = &lines[at + 2..];
    let Some(end) = body.iter().position(|l| l.trim_end() == "```") else {
        return Err(format!("README.md: the block after `{marker}` is not closed"));
    };
    Ok(Block {
        info: info.trim().to_string(),
        text: body[..end].iter().map(|l| format!("{l}\n")).collect(),
    })
}

#[track_caller]
fn block_or_panic(name: &str) -> Block {
    block(name).unwrap_or_else(|e| panic!("{e}"))
}

/// The README's `[dependencies]` lines, the `mcp-resolve` one pointed at this repository.
fn dependencies() -> Result<String, String> {
    let deps = block("Cargo.toml")?;
    let version = env!("CARGO_PKG_VERSION");
    let repo = toml_string(MANIFEST_DIR);
    let mut found = false;
    let mut out = String::new();
    for line in deps.text.lines() {
        let Some(spec) = line
            .strip_prefix("mcp-resolve")
            .and_then(|r| r.trim_start().strip_prefix('='))
        else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        found = true;
        let spec = spec.trim();
        let pointed = if spec == format!("\"{version}\"") {
            format!("mcp-resolve = {{ version = \"{version}\", path = {repo} }}")
        } else if let Some(rest) = spec.strip_prefix('{')
            && spec.contains(&format!("version = \"{version}\""))
        {
            format!("mcp-resolve = {{ path = {repo},{rest}")
        } else {
            return Err(format!(
                "README.md: the `mcp-resolve` dependency must name this crate's version, \"{version}\"; it is `{line}`"
            ));
        };
        out.push_str(&pointed);
        out.push('\n');
    }
    if !found {
        return Err("README.md: the Cargo.toml block has no `mcp-resolve = ...` line".into());
    }
    Ok(out)
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes") // JSON's escapes are TOML's
}

/// The `mcp` version `scripts/setup-python.sh` installs.
fn sdk_version() -> String {
    let script = std::fs::read_to_string(Path::new(MANIFEST_DIR).join("scripts/setup-python.sh"))
        .expect("scripts/setup-python.sh is readable");
    script
        .lines()
        .find_map(|l| l.strip_prefix("MCP_VERSION=\"")?.strip_suffix('"'))
        .expect("scripts/setup-python.sh sets MCP_VERSION=\"...\"")
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// The newcomer's project, written and built once per test binary.
// ---------------------------------------------------------------------------------------------

struct Project {
    dir: PathBuf,
    bin: PathBuf,
}

fn project() -> &'static Project {
    static PROJECT: OnceLock<Result<Project, String>> = OnceLock::new();
    match PROJECT.get_or_init(make_project) {
        Ok(project) => project,
        Err(e) => panic!("{e}"),
    }
}

/// Writes the project (each file only when its text changed, so that a project built already,
/// by an earlier test process, is not built again) and builds it.
fn make_project() -> Result<Project, String> {
    let dir = target_dir().join("tmp").join("getting-started").join(PACKAGE);
    std::fs::create_dir_all(dir.join("src")).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        if std::fs::read(&path).is_ok_and(|held| held == text.as_bytes()) {
            return Ok(());
        }
        std::fs::write(path, text).map_err(|e| format!("cannot write {name} in {}: {e}", dir.display()))
    };
    // What `cargo new hello-mcp` writes, with the README's lines under `[dependencies]`.
    write(
        "Cargo.toml",
        &format!(
            "[package]\nname = \"{PACKAGE}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\n{}\n\
             # Not the newcomer's: this project sits inside the mcp-resolve workspace's directory.\n\
             [workspace]\n",
            dependencies()?
        ),
    )?;
    write("src/main.rs", &block("src/main.rs")?.text)?;
    write("client.py", &block("client.py")?.text)?;
    let lock = std::fs::read_to_string(Path::new(MANIFEST_DIR).join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    write("Cargo.lock", &lock)?;

    let started = Instant::now();
    let out = match cargo_build(&dir, true)? {
        Ok(out) => out,
        Err(stderr) if stderr.contains("offline") => {
            eprintln!("getting_started: `cargo build --offline` needs the network; building online:\n{stderr}");
            cargo_build(&dir, false)?
                .map_err(|stderr| format!("`cargo build` of the README's project failed:\n{stderr}"))?
        }
        Err(stderr) => {
            return Err(format!(
                "`cargo build --offline` of the README's project failed:\n{stderr}"
            ));
        }
    };
    let bin = String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == PACKAGE)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("cargo built {}, but reported no `{PACKAGE}` executable", dir.display()))?;
    eprintln!("getting_started: built {} in {:.1?}", bin.display(), started.elapsed());
    Ok(Project { dir, bin })
}

/// `cargo build [--offline]` in `dir`, into this workspace's target directory: `Ok(stdout)` or
/// `Err(stderr)` of a failed build.
fn cargo_build(dir: &Path, offline: bool) -> Result<Result<Vec<u8>, String>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let out = Command::new(&cargo)
        .arg("build")
        .args(offline.then_some("--offline"))
        .arg("--message-format=json-render-diagnostics")
        .env("CARGO_TARGET_DIR", target_dir())
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{cargo}`: {e}"))?;
    Ok(if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

// ---------------------------------------------------------------------------------------------
// One client process: what it printed, and everything that explains a failure.
// ---------------------------------------------------------------------------------------------

struct Run {
    label: String,
    status: Option<ExitStatus>,
    timed_out: bool,
    stdout: String,
    /// The client's stderr; on stdio the server's stderr is inherited into it.
    stderr: String,
    /// `py_client.py`'s JSON events (empty for `client.py`).
    events: Vec<Value>,
    elapsed: Duration,
}

impl DriverRun for Run {
    fn fail(&self, what: impl std::fmt::Display) -> ! {
        panic!(
            "[{}] {what}\n--- client status: {:?}{} after {:.1?} ---\n--- client stdout ---\n{}\n--- client stderr (and the server's) ---\n{}",
            self.label,
            self.status,
            if self.timed_out { " (killed: deadline)" } else { "" },
            self.elapsed,
            self.stdout,
            self.stderr,
        )
    }
    fn events(&self) -> &[Value] {
        &self.events
    }
    fn timed_out(&self) -> bool {
        self.timed_out
    }
    fn status(&self) -> Option<ExitStatus> {
        self.status
    }
}

/// Runs the venv's python with `args` in the project's directory, killed at the deadline.
fn run_python(label: &str, args: Vec<OsString>) -> Run {
    let mut cmd = Command::new(python());
    cmd.args(&args).current_dir(&project().dir);
    let done = run_to_end(&mut cmd, label, CLIENT_DEADLINE, Duration::from_secs(10));
    let run = Run {
        label: label.to_string(),
        status: done.status,
        timed_out: done.timed_out,
        stdout: done.stdout,
        stderr: done.stderr,
        events: Vec::new(),
        elapsed: done.elapsed,
    };
    eprintln!("getting_started: [{label}] {:.1?}", run.elapsed);
    run
}

/// `python client.py ACTION SERVER...`, as the README runs it.
fn readme_client(label: &str, action: &str, server: &[OsString]) -> Run {
    let mut args = vec![OsString::from("client.py"), action.into()];
    args.extend_from_slice(server);
    let run = run_python(label, args);
    run.check(!run.timed_out, "client.py did not finish in time");
    run.check(
        run.status.is_some_and(|s| s.success()),
        "client.py exited unsuccessfully",
    );
    run
}

// ---------------------------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------------------------

/// The marked blocks are there, and the commands the README gives are those the tests run.
#[test]
fn readme_marks_the_blocks_it_gives() {
    for (name, info) in [
        ("Cargo.toml", "toml"),
        ("src/main.rs", "rust,no_run"),
        ("client.py", "python"),
        ("output", "text"),
    ] {
        let block = block_or_panic(name);
        assert_eq!(block.info, info, "README.md: the `{name}` block's info string");
        assert!(!block.text.trim().is_empty(), "README.md: the `{name}` block is empty");
    }
    let deps = dependencies().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        deps.lines().any(|l| l.starts_with("tokio")),
        "README.md: the Cargo.toml block has no tokio line:\n{deps}"
    );
    let prose = readme_prose();
    let said = [
        format!("cargo new {PACKAGE}"),
        format!("\"mcp=={}\"", sdk_version()),
        format!("client.py accept ./target/debug/{PACKAGE}"),
        "cargo run -- --http 127.0.0.1:8000".into(),
        format!("`{STDIO_LINE}`"),
        "`serving MCP (Streamable HTTP): listening on http://127.0.0.1:8000/mcp`".into(),
        "client.py accept http://127.0.0.1:8000/mcp".into(),
        format!("With `decline` the last line is `{DECLINED}`, with `cancel` `{CANCELLED}`."),
    ];
    for said in said {
        assert!(prose.contains(&said), "README.md no longer says {said:?}");
    }
}

/// The README's `client.py` against the README's server over stdio: accept prints the README's
/// output block, decline and cancel end with the lines it names.
#[test]
fn readme_client_over_stdio() {
    let output = block_or_panic("output").text;
    let server = [project().bin.clone().into_os_string()];
    let run = readme_client("client.py accept (stdio)", "accept", &server);
    run.check(
        run.stdout == output,
        format_args!("client.py's output is not the README's:\n--- README ---\n{output}"),
    );
    // The server is not silent: its subscriber (the README's `main`) says on stderr, which the
    // client passes through, that it waits for a client.
    run.check(
        run.stderr.contains(STDIO_LINE),
        format_args!("the server's stderr does not say {STDIO_LINE:?}"),
    );
    for (action, last) in [("decline", DECLINED), ("cancel", CANCELLED)] {
        let run = readme_client(&format!("client.py {action} (stdio)"), action, &server);
        let mut want: Vec<&str> = output.lines().collect();
        *want.last_mut().unwrap() = last;
        let got: Vec<&str> = run.stdout.lines().collect();
        run.check(got == want, format_args!("client.py {action}: expected {want:#?}"));
    }
}

/// The README's `client.py` against the README's server over Streamable HTTP (`--http ADDR`).
#[test]
fn readme_client_over_http() {
    let output = block_or_panic("output").text;
    let mut server = HttpChild::start(&project().bin, "getting-started http", &|_| Vec::new());
    // Over HTTP the server's stderr is its own: collect it before checking anything.
    let mut run = run_python(
        "client.py accept (http)",
        vec!["client.py".into(), "accept".into(), server.url().into()],
    );
    let exited = server.exit_status();
    run.stderr.push_str("\n--- server stderr ---\n");
    run.stderr.push_str(&server.stop());
    run.check(
        exited.is_none(),
        format_args!("the server exited during the calls: {exited:?}"),
    );
    run.check(!run.timed_out, "client.py did not finish in time");
    run.check(
        run.status.is_some_and(|s| s.success()),
        "client.py exited unsuccessfully",
    );
    run.check(
        run.stdout == output,
        format_args!("client.py's output over HTTP is not the README's:\n--- README ---\n{output}"),
    );
    let listening = format!("listening on {}", server.url());
    run.check(
        run.stderr.contains(&listening),
        format_args!("the server's stderr does not say {listening:?}"),
    );
}

/// One protocol era as `py_client.py --mode` reaches it.
#[derive(Clone, Copy)]
struct Era {
    mode: &'static str,
    version: &'static str,
}

const NEW_ERA: Era = Era {
    mode: "auto",
    version: "2026-07-28",
};
const OLD_ERA: Era = Era {
    mode: "legacy",
    version: "2025-11-25",
};

/// `py_client.py --mode MODE --answer ANSWER` over stdio: list the tools, call `add`, call
/// `book_table`.
fn drive(era: Era, answer: &str) -> Run {
    let steps = json!([
        {"op": "list_tools"},
        {"op": "call", "tool": "add", "args": {"a": 1, "b": 2}},
        {"op": "call", "tool": "book_table", "args": {"date": "2026-05-01"}},
    ]);
    let driver = Path::new(MANIFEST_DIR).join("tests/interop/py_client.py");
    let args: Vec<OsString> = vec![
        driver.into_os_string(),
        "--mode".into(),
        era.mode.into(),
        "--answer".into(),
        answer.into(),
        "--timeout".into(),
        DRIVER_TIMEOUT_SECS.into(),
        "--steps".into(),
        steps.to_string().into(),
        "--".into(),
        project().bin.clone().into_os_string(),
    ];
    let mut run = run_python(&format!("py_client.py {} answer={answer}", era.version), args);
    let events: Result<Vec<Value>, String> = run
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).map_err(|_| l.to_string()))
        .collect();
    match events {
        Ok(events) => run.events = events,
        Err(line) => run.fail(format_args!("the driver printed a line that is not JSON: {line}")),
    }
    run.assert_driver_clean();
    run
}

impl Run {
    /// The events of one kind, in order.
    fn of(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["event"] == kind).collect()
    }

    /// Connected on `era`; the tools and their arguments as the README describes them; `add`
    /// gave 3. Returns the outcome of the `book_table` call.
    #[track_caller]
    fn assert_common(&self, era: Era) -> &Value {
        let connected = &self.events[0];
        self.check_eq(&connected["event"], &json!("connected"), "the first event");
        self.check_eq(&connected["protocol_version"], &json!(era.version), "protocol version");
        self.check_eq(&connected["server_info"]["name"], &json!(PACKAGE), "server name");

        let outcomes: Vec<&Value> = self
            .events
            .iter()
            .filter(|e| matches!(e["event"].as_str(), Some("tools" | "result" | "error")))
            .collect();
        self.check(outcomes.len() == 3, "expected one outcome per step (3)");
        let tools = outcomes[0]["tools"].as_array().cloned().unwrap_or_default();
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        self.check(names == ["add", "book_table"], format_args!("tools: {names:?}"));
        self.check_eq(
            &tools[0]["inputSchema"]["required"],
            &json!(["a", "b"]),
            "add's arguments",
        );
        let book = &tools[1]["inputSchema"];
        let props: Vec<&String> = book["properties"]
            .as_object()
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        self.check(props == ["date"], format_args!("book_table's arguments: {props:?}"));
        self.check_eq(&book["required"], &json!(["date"]), "book_table's required arguments");

        self.check_eq(&outcomes[1]["event"], &json!("result"), "add's outcome");
        self.check_eq(&outcomes[1]["result"]["isError"], &json!(false), "add's isError");
        self.check_eq(&outcomes[1]["result"]["content"][0]["text"], &json!("3"), "add's text");
        outcomes[2]
    }

    /// Asked once, the README's question, with the form the README describes.
    #[track_caller]
    fn assert_asked(&self) {
        let output = block_or_panic("output").text;
        let message = output
            .lines()
            .find_map(|l| l.strip_prefix("asked: "))
            .unwrap_or_else(|| panic!("README.md: the output block has no `asked: ` line:\n{output}"));
        let asked = self.of("elicitation");
        self.check(
            asked.len() == 1,
            format_args!("expected one question, got {}", asked.len()),
        );
        let question = asked[0];
        self.check_eq(&question["message"], &json!(message), "the question");
        self.check_eq(&question["mode"], &json!("form"), "the question's mode");
        let schema = &question["requestedSchema"];
        self.check_eq(
            &schema["required"],
            &json!(["people", "outside"]),
            "the form's required fields",
        );
        let people = &schema["properties"]["people"];
        self.check_eq(&people["type"], &json!("integer"), "people's type");
        self.check_eq(&people["minimum"], &json!(1), "people's minimum");
        self.check_eq(&people["maximum"], &json!(12), "people's maximum");
        self.check_eq(
            &schema["properties"]["outside"]["type"],
            &json!("boolean"),
            "outside's type",
        );
    }

    #[track_caller]
    fn assert_text(&self, outcome: &Value, text: &str) {
        self.check_eq(&outcome["event"], &json!("result"), "book_table's outcome");
        self.check_eq(&outcome["result"]["isError"], &json!(false), "book_table's isError");
        self.check_eq(
            &outcome["result"]["content"][0]["text"],
            &json!(text),
            "book_table's text",
        );
    }
}

/// Accept and decline, and a client that cannot be asked, on one era.
fn python_sdk_client(era: Era) {
    let output = block_or_panic("output").text;
    let booked = output
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("book_table: "))
        .unwrap();

    let run = drive(era, ACCEPT);
    let outcome = run.assert_common(era);
    run.assert_asked();
    run.assert_text(outcome, booked);

    let run = drive(era, "decline");
    let outcome = run.assert_common(era);
    run.assert_asked();
    run.assert_text(outcome, DECLINED.strip_prefix("book_table: ").unwrap());

    // No elicitation callback: no capability, so -32021 naming it, and `add` still works.
    let run = drive(era, "none");
    let outcome = run.assert_common(era);
    run.check(
        run.of("elicitation").is_empty(),
        "a client without the capability was asked",
    );
    run.check_eq(
        &outcome["event"],
        &json!("error"),
        "book_table's outcome without the capability",
    );
    run.check_eq(&outcome["code"], &json!(MISSING_CAPABILITY), "the error code");
    run.check_eq(
        &outcome["data"]["requiredCapabilities"],
        &json!({"elicitation": {"form": {}}}),
        "the capability the error names",
    );
}

/// On 2026-07-28: the question as an `InputRequiredResult`, the answer in the retry.
#[test]
fn python_sdk_client_2026_07_28() {
    python_sdk_client(NEW_ERA);
}

/// On 2025-11-25: `initialize`, the question as an `elicitation/create` request.
#[test]
fn python_sdk_client_2025_11_25() {
    python_sdk_client(OLD_ERA);
}
