//! Interop: the release-built `notes` example driven by the official MCP Python SDK client
//! (`mcp==2.3.0`, through `tests/interop/py_client.py`) on both protocol eras.
//!
//! The test builds what it needs itself, once per test binary:
//! - `cargo build --release --example notes --all-features` through `$CARGO` (nested inside the running
//!   `cargo test`; checked with cargo 1.95: no lock deadlock, and a no-op when already built).
//!   `MCP_RESOLVE_NOTES_BIN=/path/to/notes` skips the build and uses that binary instead.
//! - `scripts/setup-python.sh` (creates `target/interop/venv` on first use, then a stamp check).
//!
//! What it proves is the seed-001 acceptance (the tutorial's Notes server): `delete_folder` asks
//! `{ok: boolean}` once for a folder with files, and nothing for an empty or unknown one; yes / no /
//! decline / cancel each give their clean result; a client without the elicitation capability gets
//! -32021 instead and the server keeps serving. Each runs on both eras (`--mode auto` → 2026-07-28,
//! InputRequiredResult + retry; `--mode legacy` → 2025-11-25, back-channel `elicitation/create`).
//! The driver's `--answer` is fixed per run, so there is one test per (era, answer). Last, the
//! prompt and the resource of `notes` that ask the user, accepted and declined, on both eras.
//!
//! Each driver run costs about 2 s (importing `mcp`), so every test batches its steps into one run.
//! On failure the assertion message carries the driver's full stdout and stderr (the server's
//! stderr is inherited by the driver, so its logs are there too).

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::Duration;

mod support;

use support::{DriverRun, MANIFEST_DIR, notes_bin, python, run_to_end};
/// How long one driver process may run before it is killed.
const DRIVER_DEADLINE: Duration = Duration::from_secs(60);
/// The driver's own `--timeout`, below the deadline so it reports a timeout as JSON first.
const DRIVER_TIMEOUT_SECS: &str = "50";

const NEW_ERA: &str = "2026-07-28";
const OLD_ERA: &str = "2025-11-25";

// ---------------------------------------------------------------------------------------------
// Prerequisites: the release binary and the venv python, each obtained once per test binary.
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// One driver run: its events plus everything needed to explain a failure.
// ---------------------------------------------------------------------------------------------

struct Run {
    label: String,
    status: Option<ExitStatus>,
    timed_out: bool,
    stdout: String,
    stderr: String,
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
        panic!(
            "[{}] {what}\n--- driver status: {:?}{} after {:.1?} ---\n--- driver stdout ---\n{}\n--- driver stderr (incl. server) ---\n{}",
            self.label,
            self.status,
            if self.timed_out { " (killed: deadline)" } else { "" },
            self.elapsed,
            self.stdout,
            self.stderr,
        )
    }

    /// The run ended normally: exit status 0 and a final `done` event, no `exception`.
    #[track_caller]
    fn assert_clean(&self) {
        self.assert_driver_clean();
    }

    /// The `connected` event, checked for the negotiated protocol version and (when the client
    /// discovered the server, i.e. not in a pinned mode) the server info and tools capability.
    #[track_caller]
    fn assert_connected(&self, version: &str, discovered: bool) {
        let connected = self.events.first().filter(|e| e["event"] == "connected");
        let Some(connected) = connected else {
            self.fail("the first event is not `connected`")
        };
        self.check_eq(
            &connected["protocol_version"],
            &json!(version),
            "negotiated protocol version",
        );
        if discovered {
            self.check_eq(&connected["server_info"]["name"], &json!("notes"), "server_info.name");
            self.check(
                connected["capabilities"]["tools"].is_object(),
                "the server declares no tools capability",
            );
        }
    }

    /// The per-step events (`tools`, `result`, `error`), in step order. Elicitation events are
    /// questions the server asked mid-step; they are not step outcomes.
    fn outcomes(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| matches!(e["event"].as_str(), Some("tools" | "result" | "error")))
            .collect()
    }

    /// The outcomes, checked to be exactly one per step.
    #[track_caller]
    fn step_outcomes(&self, steps: usize) -> Vec<&Value> {
        let outcomes = self.outcomes();
        self.check(
            outcomes.len() == steps,
            format_args!("expected {steps} step outcomes, got {}", outcomes.len()),
        );
        outcomes
    }

    #[track_caller]
    fn assert_tools(&self, event: &Value) {
        self.check_eq(&event["event"], &json!("tools"), "list_tools outcome");
        let tools = event["tools"].as_array().cloned().unwrap_or_default();
        let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        names.sort_unstable();
        self.check(names == ["add", "delete_folder"], format_args!("tool names: {names:?}"));
        let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();

        let input = &tool("delete_folder")["inputSchema"];
        self.check_eq(&input["type"], &json!("object"), "delete_folder inputSchema.type");
        let props = input["properties"].as_object().cloned().unwrap_or_default();
        self.check(
            props.keys().eq(["path"]),
            format_args!("delete_folder properties: {:?}", props.keys().collect::<Vec<_>>()),
        );
        self.check_eq(&props["path"]["type"], &json!("string"), "delete_folder path type");
        self.check_eq(&input["required"], &json!(["path"]), "delete_folder required");

        let add = tool("add");
        self.check_eq(&add["inputSchema"]["required"], &json!(["a", "b"]), "add required");
        let output = &add["outputSchema"];
        self.check_eq(&output["type"], &json!("object"), "add outputSchema.type");
        self.check_eq(
            &output["properties"]["result"]["type"],
            &json!("integer"),
            "add outputSchema result type",
        );
    }

    /// A `result` event; returns (concatenated text content, isError, the result object).
    #[track_caller]
    fn assert_result<'a>(&self, event: &'a Value, is_error: bool, what: &str) -> (String, &'a Value) {
        if event["event"] != "result" {
            self.fail(format_args!("{what}: expected a `result` event, got {event}"));
        }
        let result = &event["result"];
        self.check_eq(&result["isError"], &json!(is_error), &format!("{what}: isError"));
        let text: String = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["type"] == "text")
            .filter_map(|c| c["text"].as_str())
            .collect();
        (text, result)
    }

    #[track_caller]
    fn assert_text(&self, event: &Value, is_error: bool, text: &str, what: &str) {
        let (got, _) = self.assert_result(event, is_error, what);
        self.check(got == text, format_args!("{what}: expected text {text:?}, got {got:?}"));
    }

    #[track_caller]
    fn assert_add_3(&self, event: &Value) {
        let (text, result) = self.assert_result(event, false, "add {a:1,b:2}");
        self.check(text == "3", format_args!("add text: expected \"3\", got {text:?}"));
        self.check_eq(
            &result["structuredContent"],
            &json!({"result": 3}),
            "add structuredContent",
        );
    }
}

fn drive(label: &str, mode: &str, answer: &str, steps: &Value) -> Run {
    let (bin, python) = (notes_bin(), python());
    let driver = Path::new(MANIFEST_DIR)
        .join("tests")
        .join("interop")
        .join("py_client.py");
    let mut cmd = Command::new(python);
    cmd.arg(&driver)
        .args(["--mode", mode, "--answer", answer, "--timeout", DRIVER_TIMEOUT_SECS])
        .arg("--steps")
        .arg(steps.to_string())
        .arg("--")
        .arg(bin);
    // The server inherits the driver's stderr and exits on stdin EOF, so its pipes close
    // quickly; do not hang forever on one that lingers, though.
    let done = run_to_end(&mut cmd, label, DRIVER_DEADLINE, Duration::from_secs(10));
    let mut run = Run {
        label: format!("{label}: mode={mode} answer={answer}"),
        status: done.status,
        timed_out: done.timed_out,
        stdout: done.stdout,
        stderr: done.stderr,
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
    eprintln!("interop: [{}] {:.1?}", run.label, run.elapsed);
    run
}

// ---------------------------------------------------------------------------------------------
// The tests: the seed-001 acceptance (the tutorial's Notes server) on both eras.
// ---------------------------------------------------------------------------------------------

const DRAFTS: &str = "/tmp/notes/drafts";
const EMPTY: &str = "/tmp/notes/empty";
const DRAFTS_QUESTION: &str = "/tmp/notes/drafts has 2 file(s). Delete anyway?";
/// The error a client without the form elicitation capability gets instead of a question.
const MISSING_CAPABILITY: i64 = -32021;

/// One protocol era as the Python client reaches it.
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

fn list_tools() -> Value {
    json!({"op": "list_tools"})
}

fn call(tool: &str, args: Value) -> Value {
    json!({"op": "call", "tool": tool, "args": args})
}

fn delete(path: &str) -> Value {
    call("delete_folder", json!({"path": path}))
}

impl Run {
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

    /// The seed-001 question: the drafts message and a flat `{ok: boolean}` form.
    #[track_caller]
    fn assert_confirm_question(&self, q: &Value, era: Era) {
        self.check_eq(&q["message"], &json!(DRAFTS_QUESTION), "question message");
        self.check_eq(&q["mode"], &json!("form"), "question mode");
        let schema = &q["requestedSchema"];
        self.check_eq(&schema["type"], &json!("object"), "requestedSchema.type");
        let props = schema["properties"].as_object().cloned().unwrap_or_default();
        self.check(
            props.keys().eq(["ok"]),
            format_args!("requestedSchema properties: {:?}", props.keys().collect::<Vec<_>>()),
        );
        self.check_eq(&props["ok"]["type"], &json!("boolean"), "requestedSchema ok.type");
        self.check_eq(&schema["required"], &json!(["ok"]), "requestedSchema.required");
        if era.version == NEW_ERA {
            // InputRequiredResult: the callback's request id is the inputRequests key.
            self.check_eq(&q["request_id"], &json!("confirm_delete"), "inputRequests key");
        } else {
            // Back-channel elicitation/create: a JSON-RPC request id from the server.
            self.check(
                q["request_id"].is_number() || q["request_id"].is_string(),
                format_args!("elicitation/create request id: {}", q["request_id"]),
            );
        }
    }

    /// An `error` event with the missing-elicitation-capability code and data.
    #[track_caller]
    fn assert_missing_capability(&self, event: &Value, what: &str) {
        if event["event"] != "error" {
            self.fail(format_args!("{what}: expected an `error` event, got {event}"));
        }
        self.check_eq(&event["code"], &json!(MISSING_CAPABILITY), &format!("{what}: code"));
        self.check_eq(
            &event["data"]["requiredCapabilities"],
            &json!({"elicitation": {"form": {}}}),
            &format!("{what}: data.requiredCapabilities"),
        );
    }
}

/// `--answer {"ok": true}`: list, add, delete drafts (one question, deleted), delete it again
/// (gone: no question, "deleted" as in the Python seed), delete the empty folder (no question),
/// a wrongly typed argument, an unknown tool.
fn answer_yes(era: Era) {
    let steps = json!([
        list_tools(),
        call("add", json!({"a": 1, "b": 2})),
        delete(DRAFTS),
        delete(DRAFTS),
        delete(EMPTY),
        call("delete_folder", json!({"path": 42})),
        call("no_such_tool", json!({})),
    ]);
    let run = drive("yes", era.mode, r#"{"ok": true}"#, &steps);
    run.assert_clean();
    run.assert_connected(era.version, true);
    let out = run.step_outcomes(7);
    let questions = run.questions_per_step(&[0, 0, 1, 0, 0, 0, 0]);
    run.assert_confirm_question(questions[2][0], era);

    run.assert_tools(out[0]);
    run.assert_add_3(out[1]);
    run.assert_text(out[2], false, "deleted /tmp/notes/drafts", "delete drafts (yes)");
    run.assert_text(out[3], false, "deleted /tmp/notes/drafts", "delete drafts again (gone)");
    run.assert_text(out[4], false, "deleted /tmp/notes/empty", "delete empty");

    let (text, _) = run.assert_result(out[5], true, "delete_folder {path: 42}");
    run.check(
        text.contains("path") && text.contains("string"),
        format_args!(
            "delete_folder {{path: 42}}: the error must name `path` and say a string was expected, got {text:?}"
        ),
    );

    run.check_eq(&out[6]["event"], &json!("error"), "unknown tool outcome");
    run.check_eq(&out[6]["code"], &json!(-32602), "unknown tool error code");
}

/// Any answer but "yes": the drafts folder is kept, so a second delete asks again; the empty
/// folder in between asks nothing.
fn answer_keeps(era: Era, label: &str, answer: &str, text: &str) {
    let steps = json!([delete(DRAFTS), delete(EMPTY), delete(DRAFTS)]);
    let run = drive(label, era.mode, answer, &steps);
    run.assert_clean();
    run.assert_connected(era.version, true);
    let out = run.step_outcomes(3);
    let questions = run.questions_per_step(&[1, 0, 1]);
    run.assert_confirm_question(questions[0][0], era);
    run.assert_confirm_question(questions[2][0], era);
    run.assert_text(out[0], false, text, "delete drafts");
    run.assert_text(out[1], false, "deleted /tmp/notes/empty", "delete empty");
    run.assert_text(out[2], false, text, "delete drafts again (kept, so asked again)");
}

/// `--answer none` (no elicitation capability declared): plain tools work, the drafts delete
/// fails with -32021 before the tool body runs (a second try fails the same way: the folder is
/// still there), the empty folder is deleted without a question, and the server keeps serving.
fn answer_none(era: Era) {
    let steps = json!([
        list_tools(),
        call("add", json!({"a": 1, "b": 2})),
        delete(DRAFTS),
        delete(EMPTY),
        delete(DRAFTS),
        call("no_such_tool", json!({})),
    ]);
    let run = drive("none", era.mode, "none", &steps);
    run.assert_clean();
    run.assert_connected(era.version, true);
    let out = run.step_outcomes(6);
    run.questions_per_step(&[0; 6]);
    run.assert_tools(out[0]);
    run.assert_add_3(out[1]);
    run.assert_missing_capability(out[2], "delete drafts without elicitation");
    run.assert_text(
        out[3],
        false,
        "deleted /tmp/notes/empty",
        "delete empty without elicitation",
    );
    run.assert_missing_capability(out[4], "delete drafts again without elicitation");
    run.check_eq(&out[5]["code"], &json!(-32602), "unknown tool error code");
}

#[test]
fn auto_yes_asks_once_deletes_drafts_then_gone_and_empty_ask_nothing() {
    answer_yes(AUTO);
}

#[test]
fn legacy_yes_asks_once_deletes_drafts_then_gone_and_empty_ask_nothing() {
    answer_yes(LEGACY);
}

#[test]
fn auto_no_keeps_the_folder() {
    answer_keeps(AUTO, "no", r#"{"ok": false}"#, "kept the folder");
}

#[test]
fn legacy_no_keeps_the_folder() {
    answer_keeps(LEGACY, "no", r#"{"ok": false}"#, "kept the folder");
}

#[test]
fn auto_decline_is_a_clean_result() {
    answer_keeps(AUTO, "decline", "decline", "declined: folder not deleted");
}

#[test]
fn legacy_decline_is_a_clean_result() {
    answer_keeps(LEGACY, "decline", "decline", "declined: folder not deleted");
}

#[test]
fn auto_cancel_is_a_clean_result() {
    answer_keeps(AUTO, "cancel", "cancel", "cancelled: folder not deleted");
}

#[test]
fn legacy_cancel_is_a_clean_result() {
    answer_keeps(LEGACY, "cancel", "cancel", "cancelled: folder not deleted");
}

#[test]
fn auto_without_elicitation_capability_gets_32021_and_keeps_serving() {
    answer_none(AUTO);
}

#[test]
fn legacy_without_elicitation_capability_gets_32021_and_keeps_serving() {
    answer_none(LEGACY);
}

#[test]
fn pinned_2026_07_28_mode_calls_add() {
    let run = drive(
        "pinned",
        NEW_ERA,
        r#"{"ok": true}"#,
        &json!([call("add", json!({"a": 1, "b": 2}))]),
    );
    run.assert_clean();
    // Pinned: no discovery/initialize, so the client knows no server info or capabilities.
    run.assert_connected(NEW_ERA, false);
    let out = run.step_outcomes(1);
    run.assert_add_3(out[0]);
    // The 2026-07-28 result envelope still names the server.
    run.check_eq(
        &out[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        &json!("notes"),
        "result _meta serverInfo.name",
    );
}

// ---------------------------------------------------------------------------------------------
// A prompt and a resource that ask the user (issue 12, point 5)
// ---------------------------------------------------------------------------------------------

const IDEAS: &str = "/tmp/notes/ideas";

/// `notes`' prompt `summarize_folder` asks how long the summary should be unless told, and its
/// resource `notes://folder/{name}` asks before sharing a folder's file names, through the Python
/// SDK client: on 2026-07-28 as an `InputRequiredResult` to `prompts/get` / `resources/read` that
/// the client's driver answers and retries, on 2025-11-25 as back-channel `elicitation/create`
/// requests while the request waits. Accepted, the messages and the contents reflect the answer;
/// declined, both requests fail with the error naming why; nothing is asked when nothing needs to
/// be (the length given, an empty folder).
fn prompt_and_resource_ask(era: Era) {
    let steps = json!([
        {"op": "get_prompt", "name": "summarize_folder", "args": {"path": IDEAS}},
        {"op": "get_prompt", "name": "summarize_folder", "args": {"path": IDEAS, "length": "short"}},
        {"op": "read_resource", "uri": "notes://folder/ideas"},
        {"op": "read_resource", "uri": "notes://folder/empty"},
    ]);
    // One answer fits both forms: each form reads its own field and ignores the other.
    let run = drive("asking", era.mode, r#"{"length": "detailed", "ok": true}"#, &steps);
    run.assert_clean();
    run.assert_connected(era.version, true);
    let per_step = run.asked_per_step(4);
    let messages: Vec<&str> = per_step
        .iter()
        .map(|(questions, _)| {
            questions
                .iter()
                .map(|q| q["message"].as_str().unwrap_or(""))
                .collect::<Vec<_>>()
        })
        .map(|m| if m.is_empty() { "" } else { m[0] })
        .collect();
    run.check(
        messages
            == [
                "How long should the summary of /tmp/notes/ideas be?",
                "",
                "Share the names of the 2 file(s) in /tmp/notes/ideas with the assistant?",
                "",
            ],
        format_args!("questions per step: {messages:?}"),
    );
    run.check(
        per_step.iter().all(|(q, _)| q.len() <= 1),
        "at most one question per step",
    );
    let prompt_text = |i: usize| per_step[i].1["result"]["messages"][0]["content"]["text"].clone();
    run.check_eq(
        &prompt_text(0),
        &json!("Summarize the notes in /tmp/notes/ideas (garden.md, trip.md) file by file."),
        "the asked prompt",
    );
    run.check_eq(
        &prompt_text(1),
        &json!("Summarize the notes in /tmp/notes/ideas (garden.md, trip.md) in one sentence."),
        "the prompt told its length",
    );
    run.check_eq(
        &per_step[2].1["result"]["contents"][0]["text"],
        &json!("garden.md\ntrip.md"),
        "the shared folder",
    );
    run.check_eq(
        &per_step[3].1["result"]["contents"][0]["text"],
        &json!(""),
        "the empty folder, shared without a question",
    );
    if era.version == NEW_ERA {
        let schema = &per_step[0].0[0]["requestedSchema"];
        run.check_eq(
            &schema["properties"]["length"]["enum"],
            &json!(["short", "detailed"]),
            "the prompt's form",
        );
    }

    let run = drive("asking-declined", era.mode, "decline", &steps);
    run.assert_clean();
    let per_step = run.asked_per_step(4);
    run.check_eq(&per_step[0].1["event"], &json!("error"), "a declined prompt question");
    run.check_eq(&per_step[0].1["code"], &json!(-32603), "its code");
    run.check_eq(
        &per_step[0].1["message"],
        &json!("`style` was not resolved: the user declined the question `summary_length`, so the prompt did not run"),
        "its message",
    );
    run.check_eq(&per_step[1].1["event"], &json!("prompt"), "the prompt told its length");
    run.check_eq(
        &per_step[2].1["message"],
        &json!("the user did not agree to share the file names in /tmp/notes/ideas"),
        "a declined resource question",
    );
    run.check_eq(&per_step[3].1["event"], &json!("resource"), "the empty folder");
}

impl Run {
    /// Per step: the questions asked during it and its outcome (`prompt`, `resource`, `error`),
    /// checked to be exactly `steps` outcomes.
    #[track_caller]
    fn asked_per_step(&self, steps: usize) -> Vec<(Vec<&Value>, &Value)> {
        let mut out = Vec::new();
        let mut questions = Vec::new();
        for event in &self.events {
            match event["event"].as_str() {
                Some("elicitation") => questions.push(event),
                Some("prompt" | "resource" | "error") => out.push((std::mem::take(&mut questions), event)),
                _ => {}
            }
        }
        self.check(
            out.len() == steps,
            format_args!("expected {steps} step outcomes, got {}", out.len()),
        );
        out
    }
}

#[test]
fn auto_a_prompt_and_a_resource_ask() {
    prompt_and_resource_ask(AUTO);
}

#[test]
fn legacy_a_prompt_and_a_resource_ask() {
    prompt_and_resource_ask(LEGACY);
}
