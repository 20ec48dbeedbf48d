//! Interop over Streamable HTTP: the release-built `notes` example (`notes --http 127.0.0.1:PORT`,
//! endpoint `/mcp`) driven by two official clients on both protocol eras:
//! - the Python SDK client `mcp==2.3.0` (`tests/interop/py_client.py --url URL`),
//! - the TypeScript client `@modelcontextprotocol/client` 2.4.0
//!   (`tests/interop/ts_client.mjs --transport http --url URL --wire FILE`).
//!
//! The test builds what it needs itself, once per test binary: `cargo build --release --example
//! notes` through `$CARGO` (or `MCP_RESOLVE_NOTES_BIN=/path/to/notes`), `scripts/setup-python.sh`
//! and `scripts/setup-node.sh` (each creates its environment on first use, then a stamp check).
//!
//! What it proves is the seed-001 acceptance (the tutorial's Notes server) over HTTP, for each
//! client × era (`--mode auto` must negotiate 2026-07-28: stateless, `server/discover` probe,
//! InputRequiredResult + retry; `--mode legacy` gets 2025-11-25: `initialize`, a session, and the
//! `elicitation/create` request on the call's own SSE stream) × answer (yes / decline / none):
//! `delete_folder` lists only `path`; it asks `{ok: boolean}` once for `/tmp/notes/drafts` and
//! nothing for an empty or deleted folder; yes deletes, decline keeps; a client without the
//! elicitation capability gets -32021 (a JSON-RPC error, on both eras and both clients) and the
//! server keeps serving.
//!
//! Every run gets a FRESH server process (the folder table is per process) on a free port, killed
//! by a drop guard when the run ends. On failure the assertion message carries the driver's full
//! stdout and stderr, the server's stderr, and (TypeScript) the HTTP wire log, which also stays in
//! `target/interop/http-wire/<test>.log`.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

use serde_json::{Value, json};
use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

mod support;

use support::{DriverRun, HttpChild, MANIFEST_DIR, node, notes_bin, python, run_to_end, target_dir};
/// How long one driver process may run before it is killed.
const DRIVER_DEADLINE: Duration = Duration::from_secs(60);
/// The driver's own `--timeout`, below the deadline so it reports a timeout as JSON first.
const DRIVER_TIMEOUT_SECS: &str = "50";

const NEW_ERA: &str = "2026-07-28";
const OLD_ERA: &str = "2025-11-25";

// ---------------------------------------------------------------------------------------------
// Prerequisites: the release binary, the venv python and node, each obtained once per binary.
// ---------------------------------------------------------------------------------------------

/// A fresh `notes --http` server per run, killed when the guard drops.
type Server = HttpChild;

/// `notes --http`, with no extra environment.
fn start(label: &str) -> Server {
    start_with(label, &|_| Vec::new())
}

/// `notes --http` with environment variables made for the address it gets.
fn start_with(label: &str, env: &dyn Fn(SocketAddr) -> Vec<(String, String)>) -> Server {
    HttpChild::start(notes_bin(), label, env)
}

// ---------------------------------------------------------------------------------------------
// Identity: an authorization server's keys (generated here) published as a JWKS by a local
// endpoint, and `notes` configured from the environment to take only tokens signed with them,
// issued for its own URL.
// ---------------------------------------------------------------------------------------------

#[path = "support/identity.rs"]
mod identity;

const ISSUER: &str = "https://auth.test";

struct Identity {
    /// Runs the JWKS endpoint for the whole test binary.
    _runtime: tokio::runtime::Runtime,
    jwks: identity::JwksServer,
    signer: identity::Signer,
}

fn identity() -> &'static Identity {
    static IDENTITY: std::sync::OnceLock<Identity> = std::sync::OnceLock::new();
    IDENTITY.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let signer = identity::Signer::p256("interop-es256");
        let jwks = runtime.block_on(identity::JwksServer::start(identity::set_of(&[&signer])));
        Identity {
            _runtime: runtime,
            jwks,
            signer,
        }
    })
}

impl Identity {
    /// The environment `notes` reads its identity settings from (`HttpOptions::bearer_from_env`).
    fn env(&self, addr: SocketAddr) -> Vec<(String, String)> {
        [
            ("MCP_RESOLVE_JWKS_URL", self.jwks.url.clone()),
            ("MCP_RESOLVE_JWT_AUDIENCE", format!("http://{addr}/mcp")),
            ("MCP_RESOLVE_JWT_ISSUER", ISSUER.to_string()),
            ("MCP_RESOLVE_AUTH_SERVER", ISSUER.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn token(&self, audience: &str) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        self.signer.sign(&json!({
            "sub": "alice", "iss": ISSUER, "aud": audience, "iat": now, "exp": now + 600,
            "scope": "notes:read notes:write",
        }))
    }
}

/// Whether the server takes tokens, and which token the client sends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bearer {
    /// No identity settings, no token.
    Off,
    /// A token signed by the published key, for this server.
    Valid,
    /// A token signed by the published key, for another server.
    OtherAudience,
    /// The server takes tokens; the client sends none.
    Missing,
}

fn identity_token(bearer: Bearer, url: &str) -> Option<String> {
    match bearer {
        Bearer::Off | Bearer::Missing => None,
        Bearer::Valid => Some(identity().token(url)),
        Bearer::OtherAudience => Some(identity().token("https://elsewhere.test/mcp")),
    }
}

// ---------------------------------------------------------------------------------------------
// One driver run against its own server: its events plus everything needed to explain a failure.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Client {
    Python,
    TypeScript,
}

/// One protocol era as the clients reach it.
#[derive(Clone, Copy)]
struct Era {
    mode: &'static str,
    version: &'static str,
}

const AUTO: Era = Era {
    mode: "auto",
    version: NEW_ERA,
};
const LEGACY: Era = Era {
    mode: "legacy",
    version: OLD_ERA,
};

struct Run {
    label: String,
    client: Client,
    era: Era,
    status: Option<ExitStatus>,
    timed_out: bool,
    stdout: String,
    stderr: String,
    server_log: String,
    /// The server's exit status when the driver finished (`None`: still serving, as it must).
    server_exit: Option<ExitStatus>,
    wire_file: Option<PathBuf>,
    wire: String,
    events: Vec<Value>,
    elapsed: Duration,
}

impl DriverRun for Run {
    fn fail(&self, what: impl std::fmt::Display) -> ! {
        Run::fail(self, what)
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

impl Run {
    #[track_caller]
    fn fail(&self, what: impl std::fmt::Display) -> ! {
        let wire = match &self.wire_file {
            Some(file) => format!("\n--- HTTP wire log ({}) ---\n{}", file.display(), self.wire),
            None => String::new(),
        };
        panic!(
            "[{}] {what}\n--- driver status: {:?}{} after {:.1?} ---\n--- driver stdout ---\n{}\n\
             --- driver stderr ---\n{}\n--- server stderr (exit when the driver ended: {:?}) ---\n{}{wire}",
            self.label,
            self.status,
            if self.timed_out { " (killed: deadline)" } else { "" },
            self.elapsed,
            self.stdout,
            self.stderr,
            self.server_exit,
            self.server_log,
        )
    }

    /// The run ended normally (exit 0, last event `done`, no `exception`) and the server was
    /// still serving when the driver finished.
    #[track_caller]
    fn assert_clean(&self) {
        self.assert_driver_clean();
        self.check(self.server_exit.is_none(), "the server exited during the run");
    }

    /// The `connected` event: negotiated version, server info, tools capability, and (TypeScript)
    /// the era and the session id (a session only on the 2025 era).
    #[track_caller]
    fn assert_connected(&self) {
        let connected = self.events.first().filter(|e| e["event"] == "connected");
        let Some(connected) = connected else {
            self.fail("the first event is not `connected`")
        };
        self.check_eq(
            &connected["protocol_version"],
            &json!(self.era.version),
            "negotiated protocol version",
        );
        self.check_eq(&connected["server_info"]["name"], &json!("notes"), "server_info.name");
        self.check(
            connected["capabilities"]["tools"].is_object(),
            "the server declares no tools capability",
        );
        if self.client == Client::TypeScript {
            let modern = self.era.version == NEW_ERA;
            self.check_eq(
                &connected["era"],
                &json!(if modern { "modern" } else { "legacy" }),
                "TypeScript client era",
            );
            let session = &connected["session_id"];
            if modern {
                self.check(
                    session.is_null(),
                    format_args!("2026-07-28 is stateless, got session {session}"),
                );
            } else {
                self.check(
                    session.as_str().is_some_and(|s| !s.is_empty()),
                    format_args!("2025-11-25 over HTTP needs an Mcp-Session-Id, got {session}"),
                );
            }
        }
    }

    /// The per-step events (`tools`, `result`, `error`), checked to be exactly one per step.
    #[track_caller]
    fn step_outcomes(&self, steps: usize) -> Vec<&Value> {
        let outcomes: Vec<&Value> = self
            .events
            .iter()
            .filter(|e| matches!(e["event"].as_str(), Some("tools" | "result" | "error")))
            .collect();
        self.check(
            outcomes.len() == steps,
            format_args!("expected {steps} step outcomes, got {}", outcomes.len()),
        );
        outcomes
    }

    /// The `elicitation` events grouped by the step during which they arrived (an elicitation
    /// event precedes its step's outcome), checked to be exactly `expected[i]` for step `i`.
    #[track_caller]
    fn questions_per_step(&self, expected: &[usize]) -> Vec<Vec<&Value>> {
        let mut per_step: Vec<Vec<&Value>> = vec![Vec::new()];
        for event in &self.events {
            match event["event"].as_str() {
                Some("elicitation") => per_step.last_mut().unwrap().push(event),
                Some("tools" | "result" | "error") => per_step.push(Vec::new()),
                _ => {}
            }
        }
        let trailing = per_step.pop().unwrap();
        self.check(
            trailing.is_empty(),
            format_args!("{} question(s) arrived after the last step outcome", trailing.len()),
        );
        let counts: Vec<usize> = per_step.iter().map(Vec::len).collect();
        self.check(
            counts == expected,
            format_args!("questions per step: expected {expected:?}, got {counts:?}"),
        );
        per_step
    }

    /// `tools/list`: `delete_folder` takes only `path` (the resolver's `confirm` is hidden).
    #[track_caller]
    fn assert_tools(&self, event: &Value) {
        self.check_eq(&event["event"], &json!("tools"), "list_tools outcome");
        let tools = event["tools"].as_array().cloned().unwrap_or_default();
        let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        names.sort_unstable();
        self.check(names == ["add", "delete_folder"], format_args!("tool names: {names:?}"));
        let delete = tools.iter().find(|t| t["name"] == "delete_folder").unwrap();
        let input = &delete["inputSchema"];
        self.check_eq(&input["type"], &json!("object"), "delete_folder inputSchema.type");
        let props = input["properties"].as_object().cloned().unwrap_or_default();
        self.check(
            props.keys().eq(["path"]),
            format_args!("delete_folder properties: {:?}", props.keys().collect::<Vec<_>>()),
        );
        self.check_eq(&props["path"]["type"], &json!("string"), "delete_folder path type");
        self.check_eq(&input["required"], &json!(["path"]), "delete_folder required");
    }

    /// The seed-001 question: the drafts message and a flat `{ok: boolean}` form.
    #[track_caller]
    fn assert_confirm_question(&self, q: &Value) {
        self.check_eq(&q["message"], &json!(DRAFTS_QUESTION), "question message");
        self.check_eq(&q["mode"], &json!("form"), "question mode");
        let schema = &q["requestedSchema"];
        self.check_eq(&schema["type"], &json!("object"), "requestedSchema.type");
        self.check_eq(
            &schema["properties"],
            &json!({"ok": {"type": "boolean"}}),
            "requestedSchema.properties",
        );
        self.check_eq(&schema["required"], &json!(["ok"]), "requestedSchema.required");
        if self.era.version == NEW_ERA {
            // InputRequiredResult: the handler's request id is the inputRequests key.
            self.check_eq(&q["request_id"], &json!("confirm_delete"), "inputRequests key");
        } else {
            // elicitation/create: a JSON-RPC request id chosen by the server.
            self.check(
                q["request_id"].is_number() || q["request_id"].is_string(),
                format_args!("elicitation/create request id: {}", q["request_id"]),
            );
        }
    }

    #[track_caller]
    fn assert_text(&self, event: &Value, text: &str, what: &str) {
        if event["event"] != "result" {
            self.fail(format_args!("{what}: expected a `result` event, got {event}"));
        }
        let result = &event["result"];
        self.check_eq(&result["isError"], &json!(false), &format!("{what}: isError"));
        let got: String = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["type"] == "text")
            .filter_map(|c| c["text"].as_str())
            .collect();
        self.check(got == text, format_args!("{what}: expected text {text:?}, got {got:?}"));
    }

    /// -32021 as a JSON-RPC error on the wire (both clients, both eras over HTTP report it as an
    /// `error` event: on 2025-11-25 it is the `error` response on the call's SSE stream).
    #[track_caller]
    fn assert_missing_capability(&self, event: &Value, what: &str) {
        if event["event"] != "error" {
            self.fail(format_args!("{what}: expected an `error` event, got {event}"));
        }
        self.check_eq(&event["code"], &json!(MISSING_CAPABILITY), &format!("{what}: code"));
        self.check_eq(
            &event["data"],
            &json!({"requiredCapabilities": {"elicitation": {"form": {}}}}),
            &format!("{what}: data"),
        );
        let message = event["message"].as_str().unwrap_or_default();
        self.check(
            message.contains("elicitation") && message.contains("confirm_delete"),
            format_args!("{what}: the message should name the capability and the resolver: {message:?}"),
        );
    }

    #[track_caller]
    fn assert_add_3(&self, event: &Value) {
        self.assert_text(event, "3", "add {a:1,b:2}");
        self.check_eq(
            &event["result"]["structuredContent"],
            &json!({"result": 3}),
            "add structuredContent",
        );
    }

    /// (TypeScript `--wire` log) How the first `delete_folder` call on the drafts travelled:
    /// on 2025-11-25 its POST is answered with an SSE stream carrying the `elicitation/create`
    /// request and then the result, within the session; on 2026-07-28 no session header appears
    /// and the call is answered with an `inputRequests` result, then retried with
    /// `inputResponses` + `requestState`.
    #[track_caller]
    fn assert_wire_question(&self, final_text: &str) {
        if self.client != Client::TypeScript {
            return;
        }
        let lines: Vec<&str> = self.wire.lines().collect();
        // `>> #N {body}` request bodies; `<< #N header: value` / `<< #N body: ...` responses.
        let request = |n: &str| -> Option<&str> {
            let prefix = format!(">> #{n} {{");
            lines
                .iter()
                .find(|l| l.starts_with(&prefix))
                .map(|l| &l[prefix.len() - 1..])
        };
        let response_line = |n: &str, what: &str| -> Option<&str> {
            let prefix = format!("<< #{n} {what}");
            lines
                .iter()
                .find(|l| l.starts_with(&prefix))
                .map(|l| &l[prefix.len()..])
        };
        let ids: Vec<&str> = lines
            .iter()
            .filter_map(|l| l.strip_prefix(">> #"))
            .filter_map(|l| l.split_once(' '))
            .filter(|(_, rest)| rest.starts_with('{'))
            .map(|(n, _)| n)
            .filter(|n| request(n).is_some_and(|b| b.contains(r#""method":"tools/call""#) && b.contains(DRAFTS)))
            .collect();
        let Some(first) = ids.first().copied() else {
            self.fail("wire log: no tools/call POST for the drafts folder")
        };
        let body = response_line(first, "body: ").unwrap_or_default();
        if self.era.version == NEW_ERA {
            self.check(
                !self.wire.to_ascii_lowercase().contains("mcp-session-id"),
                "wire log: 2026-07-28 must be stateless, but an mcp-session-id header appeared",
            );
            self.check(
                body.contains(r#""inputRequests""#) && body.contains(r#""requestState""#),
                format_args!("wire log #{first}: expected an InputRequiredResult, got {body}"),
            );
            let retry = ids.get(1).and_then(|n| request(n)).unwrap_or_default();
            self.check(
                retry.contains(r#""inputResponses""#) && retry.contains(r#""requestState""#),
                format_args!("wire log: expected a retry with inputResponses + requestState, got {retry}"),
            );
        } else {
            let content_type = response_line(first, "content-type: ").unwrap_or_default();
            self.check(
                content_type.starts_with("text/event-stream"),
                format_args!("wire log #{first}: the call must be answered with an SSE stream, got {content_type:?}"),
            );
            let question = body.find(r#""method":"elicitation/create""#);
            let result = body.find(final_text);
            self.check(
                question.is_some() && result.is_some() && question < result,
                format_args!(
                    "wire log #{first}: expected elicitation/create and then the result {final_text:?} \
                     on the call's SSE stream, got {body}"
                ),
            );
        }
    }
}

fn drive(test: &str, client: Client, era: Era, answer: &str, steps: &Value) -> Run {
    drive_as(test, client, era, answer, steps, Bearer::Off)
}

fn drive_as(test: &str, client: Client, era: Era, answer: &str, steps: &Value, bearer: Bearer) -> Run {
    let label = format!(
        "{test}: {} mode={} answer={answer}",
        match client {
            Client::Python => "python",
            Client::TypeScript => "typescript",
        },
        era.mode
    );
    let mut server = match bearer {
        Bearer::Off => start(&label),
        _ => start_with(&label, &|addr| identity().env(addr)),
    };
    let driver_dir = Path::new(MANIFEST_DIR).join("tests").join("interop");
    let mut wire_file = None;
    let mut cmd = match client {
        Client::Python => {
            let mut cmd = Command::new(python());
            cmd.arg(driver_dir.join("py_client.py"));
            cmd
        }
        Client::TypeScript => {
            let dir = target_dir().join("interop").join("http-wire");
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join(format!("{test}.log"));
            let mut cmd = Command::new(node());
            cmd.arg(driver_dir.join("ts_client.mjs"))
                .args(["--transport", "http", "--wire"])
                .arg(&file);
            wire_file = Some(file);
            cmd
        }
    };
    if let Some(token) = identity_token(bearer, &server.url()) {
        cmd.arg("--bearer").arg(token);
    }
    cmd.arg("--url")
        .arg(server.url())
        .args(["--mode", era.mode, "--answer", answer, "--timeout", DRIVER_TIMEOUT_SECS])
        .arg("--steps")
        .arg(steps.to_string());
    let done = run_to_end(&mut cmd, &label, DRIVER_DEADLINE, Duration::from_secs(5));
    let server_exit = server.exit_status();
    let server_log = server.stop();
    drop(server);
    let wire = wire_file
        .as_ref()
        .map(|f| std::fs::read_to_string(f).unwrap_or_else(|e| format!("<cannot read: {e}>")))
        .unwrap_or_default();

    let mut run = Run {
        label,
        client,
        era,
        status: done.status,
        timed_out: done.timed_out,
        stdout: done.stdout,
        stderr: done.stderr,
        server_log,
        server_exit,
        wire_file,
        wire,
        events: Vec::new(),
        elapsed: done.elapsed,
    };
    for line in run.stdout.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(event) if event["event"].is_string() => run.events.push(event),
            Ok(_) | Err(_) => run.fail(format_args!(
                "the driver printed a line that is not a JSON event: {line}"
            )),
        }
    }
    eprintln!("interop-http: [{}] {:.1?}", run.label, run.elapsed);
    run
}

// ---------------------------------------------------------------------------------------------
// The scenarios: seed-001 (the tutorial's Notes server), one fresh server per run.
// ---------------------------------------------------------------------------------------------

const DRAFTS: &str = "/tmp/notes/drafts";
const EMPTY: &str = "/tmp/notes/empty";
const DRAFTS_QUESTION: &str = "/tmp/notes/drafts has 2 file(s). Delete anyway?";
/// The error a client without the form elicitation capability gets instead of a question.
const MISSING_CAPABILITY: i64 = -32021;

fn list_tools() -> Value {
    json!({"op": "list_tools"})
}

fn delete(path: &str) -> Value {
    json!({"op": "call", "tool": "delete_folder", "args": {"path": path}})
}

fn add_1_2() -> Value {
    json!({"op": "call", "tool": "add", "args": {"a": 1, "b": 2}})
}

/// Yes: one question, the drafts are deleted; deleting them again asks nothing (gone), and so
/// does the empty folder.
fn answer_yes(test: &str, client: Client, era: Era) {
    answer_yes_as(test, client, era, Bearer::Off);
}

fn answer_yes_as(test: &str, client: Client, era: Era, bearer: Bearer) {
    let steps = json!([list_tools(), delete(DRAFTS), delete(DRAFTS), delete(EMPTY)]);
    let run = drive_as(test, client, era, r#"{"ok": true}"#, &steps, bearer);
    run.assert_clean();
    run.assert_connected();
    let out = run.step_outcomes(4);
    let questions = run.questions_per_step(&[0, 1, 0, 0]);
    run.assert_confirm_question(questions[1][0]);
    run.assert_tools(out[0]);
    run.assert_text(out[1], "deleted /tmp/notes/drafts", "delete drafts (yes)");
    run.assert_text(
        out[2],
        "deleted /tmp/notes/drafts",
        "delete drafts again (gone: no question)",
    );
    run.assert_text(out[3], "deleted /tmp/notes/empty", "delete empty");
    run.assert_wire_question("deleted /tmp/notes/drafts");
}

/// Decline: a clean result, the drafts are kept, so a second delete asks again; the empty folder
/// in between asks nothing.
fn answer_decline(test: &str, client: Client, era: Era) {
    let steps = json!([delete(DRAFTS), delete(EMPTY), delete(DRAFTS)]);
    let run = drive(test, client, era, "decline", &steps);
    run.assert_clean();
    run.assert_connected();
    let out = run.step_outcomes(3);
    let questions = run.questions_per_step(&[1, 0, 1]);
    run.assert_confirm_question(questions[0][0]);
    run.assert_confirm_question(questions[2][0]);
    let declined = "declined: folder not deleted";
    run.assert_text(out[0], declined, "delete drafts (decline)");
    run.assert_text(out[1], "deleted /tmp/notes/empty", "delete empty");
    run.assert_text(out[2], declined, "delete drafts again (kept, so asked again)");
    run.assert_wire_question(declined);
}

/// `--answer none` (no elicitation capability declared): the empty folder is deleted without a
/// question, the drafts delete fails with -32021, plain tools keep working, and a second drafts
/// delete fails the same way (the folder is still there).
fn answer_none(test: &str, client: Client, era: Era) {
    let steps = json!([list_tools(), delete(EMPTY), delete(DRAFTS), add_1_2(), delete(DRAFTS)]);
    let run = drive(test, client, era, "none", &steps);
    run.assert_clean();
    run.assert_connected();
    let out = run.step_outcomes(5);
    run.questions_per_step(&[0; 5]);
    run.assert_tools(out[0]);
    run.assert_text(out[1], "deleted /tmp/notes/empty", "delete empty without elicitation");
    run.assert_missing_capability(out[2], "delete drafts without elicitation");
    run.assert_add_3(out[3]);
    run.assert_missing_capability(out[4], "delete drafts again without elicitation");
}

#[test]
fn python_auto_yes() {
    answer_yes("python_auto_yes", Client::Python, AUTO);
}

#[test]
fn python_auto_decline() {
    answer_decline("python_auto_decline", Client::Python, AUTO);
}

#[test]
fn python_auto_none_gets_32021() {
    answer_none("python_auto_none_gets_32021", Client::Python, AUTO);
}

#[test]
fn python_legacy_yes() {
    answer_yes("python_legacy_yes", Client::Python, LEGACY);
}

#[test]
fn python_legacy_decline() {
    answer_decline("python_legacy_decline", Client::Python, LEGACY);
}

#[test]
fn python_legacy_none_gets_32021() {
    answer_none("python_legacy_none_gets_32021", Client::Python, LEGACY);
}

#[test]
fn typescript_auto_yes() {
    answer_yes("typescript_auto_yes", Client::TypeScript, AUTO);
}

#[test]
fn typescript_auto_decline() {
    answer_decline("typescript_auto_decline", Client::TypeScript, AUTO);
}

#[test]
fn typescript_auto_none_gets_32021() {
    answer_none("typescript_auto_none_gets_32021", Client::TypeScript, AUTO);
}

#[test]
fn typescript_legacy_yes() {
    answer_yes("typescript_legacy_yes", Client::TypeScript, LEGACY);
}

#[test]
fn typescript_legacy_decline() {
    answer_decline("typescript_legacy_decline", Client::TypeScript, LEGACY);
}

#[test]
fn typescript_legacy_none_gets_32021() {
    answer_none("typescript_legacy_none_gets_32021", Client::TypeScript, LEGACY);
}

// ---------------------------------------------------------------------------------------------
// Bearer tokens signed with the authorization server's published keys (issue 11).
// ---------------------------------------------------------------------------------------------

/// The Python client sends a JWKS-signed token for this server on every request: the whole
/// seed-001 flow, question round included, on 2026-07-28.
#[test]
fn python_auto_with_a_jwks_token() {
    answer_yes_as("python_auto_with_a_jwks_token", Client::Python, AUTO, Bearer::Valid);
}

/// The same on 2025-11-25: `initialize`, a session owned by the token's subject, and the
/// question on the call's SSE stream.
#[test]
fn python_legacy_with_a_jwks_token() {
    answer_yes_as("python_legacy_with_a_jwks_token", Client::Python, LEGACY, Bearer::Valid);
}

/// No token, or a token for another server (validly signed): the Python client is refused (the
/// 401 and its body) on both eras, and the server keeps serving.
#[test]
fn python_without_a_token_or_with_one_for_another_server_is_refused() {
    for (era, bearer) in [
        (AUTO, Bearer::Missing),
        (AUTO, Bearer::OtherAudience),
        (LEGACY, Bearer::Missing),
        (LEGACY, Bearer::OtherAudience),
    ] {
        let run = drive_as(
            "python_refused",
            Client::Python,
            era,
            "none",
            &json!([list_tools()]),
            bearer,
        );
        let exception = run.events.iter().find(|e| e["event"] == "exception");
        let Some(exception) = exception else {
            run.fail("the client was not refused")
        };
        // The SDK reports the 401's JSON-RPC body.
        run.check(
            exception["message"] == "Unauthorized: a valid bearer token is required",
            format_args!("expected the 401 refusal, got {exception}"),
        );
        run.check(run.server_exit.is_none(), "the server exited");
    }
}

/// A raw HTTP/1.1 exchange (`Connection: close`): the status line, the headers, the body.
fn raw_http(addr: SocketAddr, request: &str) -> (String, String, String) {
    use std::io::Write;
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    tcp.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.to_string(), headers.to_ascii_lowercase(), body.to_string())
}

/// What an MCP client discovers: the 401 challenge names the Protected Resource Metadata, and the
/// document names this server and its authorization server (`MCP_RESOLVE_AUTH_SERVER`).
#[test]
fn notes_publishes_its_protected_resource_metadata() {
    let server = start_with("metadata", &|addr| identity().env(addr));
    let addr = server.addr;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
    let (status, headers, _) = raw_http(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(status.contains(" 401 "), "{status}");
    let document = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    assert!(
        headers.contains(&format!("www-authenticate: bearer resource_metadata=\"{document}\"")),
        "{headers}"
    );
    let (status, _, body) = raw_http(
        addr,
        &format!("GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    );
    assert!(status.contains(" 200 "), "{status}");
    let metadata: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(metadata["resource"], format!("http://{addr}/mcp"));
    assert_eq!(metadata["authorization_servers"], json!([ISSUER]));
    assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
}

/// Identity settings that cannot be right stop `notes` at start-up, with a message naming the
/// variable.
#[test]
fn notes_refuses_to_start_on_bad_identity_settings() {
    let cases: [(&[(&str, &str)], &str); 6] = [
        (
            &[
                ("MCP_RESOLVE_JWT_SECRET", "c2hvcnQ="),
                ("MCP_RESOLVE_JWT_AUDIENCE", "http://127.0.0.1/mcp"),
            ],
            "MCP_RESOLVE_JWT_SECRET: the HS256 secret decodes to 5 bytes, fewer than 32",
        ),
        (
            &[
                ("MCP_RESOLVE_JWT_SECRET", "a shared secret of at least thirty-two bytes"),
                ("MCP_RESOLVE_JWT_AUDIENCE", "http://127.0.0.1/mcp"),
            ],
            "MCP_RESOLVE_JWT_SECRET: the HS256 secret is neither hex nor base64 (passphrases are not taken); \
             a key is 32 or more random bytes in hex or base64: make one with `openssl rand -base64 32`",
        ),
        (
            &[("MCP_RESOLVE_JWT_SECRET", "rLV6WCAktSg0+OlF0oqcexm1GIdVKqCrQ0P7vV7nDgg=")],
            "MCP_RESOLVE_JWT_SECRET is set but MCP_RESOLVE_JWT_AUDIENCE is not",
        ),
        (
            &[
                ("MCP_RESOLVE_JWKS_URL", "http://auth.example/jwks.json"),
                ("MCP_RESOLVE_JWT_AUDIENCE", "x"),
                ("MCP_RESOLVE_JWT_ISSUER", "https://auth.example"),
            ],
            "MCP_RESOLVE_JWKS_URL: ",
        ),
        (
            &[
                ("MCP_RESOLVE_JWKS_URL", "https://auth.example/jwks.json"),
                ("MCP_RESOLVE_JWT_AUDIENCE", "https://notes.example/mcp"),
            ],
            "MCP_RESOLVE_JWKS_URL is set but MCP_RESOLVE_JWT_ISSUER is not: set it",
        ),
        (
            &[("MCP_RESOLVE_JWT_AUDIENCE", "http://127.0.0.1/mcp")],
            "MCP_RESOLVE_JWT_AUDIENCE is set but neither",
        ),
    ];
    for (env, expected) in cases {
        // Bounded: a `notes` that starts serving instead is killed after 20 s.
        let output = run_to_end(
            Command::new(notes_bin())
                .args(["--http", "127.0.0.1:0"])
                .envs(env.iter().copied()),
            "bad identity settings",
            Duration::from_secs(20),
            Duration::from_secs(5),
        );
        let stderr = output.stderr;
        assert!(
            !output.timed_out && output.status.is_some_and(|s| !s.success()),
            "{env:?}: started anyway ({:?})",
            output.status
        );
        assert!(
            stderr.contains(expected),
            "{env:?}: expected {expected:?} in:\n{stderr}"
        );
    }
}
