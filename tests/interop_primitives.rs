//! Interop: every non-tool primitive of the release-built `conformance` example (prompts,
//! resources and URI templates, completions, logging, `resources/subscribe`, and the questions
//! resolvers ask: samples, roots, forms, a prompt that asks) driven by the
//! official MCP Python SDK client (`mcp==2.3.0`, through `tests/interop/py_client.py`) on both
//! protocol eras: `--mode auto` (2026-07-28: stateless, `server/discover`, every request carries
//! the `_meta` envelope) and `--mode legacy` (2025-11-25: `initialize` handshake), over stdio and
//! once per era over Streamable HTTP.
//!
//! The test builds what it needs itself, once per test binary: `cargo build --release --example
//! conformance --all-features` through `$CARGO` (a no-op when built already; or
//! `MCP_RESOLVE_CONFORMANCE_BIN=/path/to/conformance`) and `scripts/setup-python.sh`.
//!
//! The fixtures are those of `docs/CONFORMANCE.md` §4.3–§4.7. What each test proves is in its doc
//! comment. Each driver run costs about 2 s (importing `mcp`), so every test batches its steps
//! into one run (two where a client option differs). The per-step outcome events come one per
//! step, in order; notification events (`log`, `notification`, `sampling`, `roots`) belong to the
//! step whose outcome follows them. On failure the assertion message carries the driver's full
//! stdout and stderr (on stdio the server's stderr is inherited by the driver; over HTTP the
//! server's stderr is printed separately).

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

use base64::Engine as _;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::Duration;

mod support;

use support::{DriverRun, HttpChild, MANIFEST_DIR, conformance_bin, python, run_to_end, text_of};

/// How long one driver process may run before it is killed.
const DRIVER_DEADLINE: Duration = Duration::from_secs(60);
/// The driver's own `--timeout`, below the deadline so it reports a timeout as JSON first.
const DRIVER_TIMEOUT_SECS: &str = "50";

const SERVER_NAME: &str = "mcp-resolve-conformance";
const INVALID_PARAMS: i64 = -32602;
const RESOURCE_NOT_FOUND: i64 = -32002;
const METHOD_NOT_FOUND: i64 = -32601;
const MISSING_CAPABILITY: i64 = -32021;
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// One protocol era as the Python client reaches it.
#[derive(Clone, Copy)]
struct Era {
    mode: &'static str,
    version: &'static str,
}

impl Era {
    fn modern(self) -> bool {
        self.version == AUTO.version
    }
}

const AUTO: Era = Era {
    mode: "auto",
    version: "2026-07-28",
};
const LEGACY: Era = Era {
    mode: "legacy",
    version: "2025-11-25",
};

// ---------------------------------------------------------------------------------------------
// Pipes, and a fresh `conformance --http` server per HTTP test, killed when the guard drops.
// ---------------------------------------------------------------------------------------------

/// A fresh `conformance --http` server per HTTP test, killed when the guard drops.
type HttpServer = HttpChild;

// ---------------------------------------------------------------------------------------------
// One driver run: its events plus everything needed to explain a failure.
// ---------------------------------------------------------------------------------------------

struct Run {
    label: String,
    era: Era,
    status: Option<ExitStatus>,
    timed_out: bool,
    stdout: String,
    stderr: String,
    /// HTTP only: the server's stderr so far, and whether it had exited when the driver ended.
    server: Option<(String, Option<ExitStatus>)>,
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

/// The outcome event each step op prints when it succeeds.
fn outcome_event(op: &str) -> &'static str {
    match op {
        "list_tools" => "tools",
        "call" => "result",
        "list_prompts" => "prompts",
        "get_prompt" => "prompt",
        "list_resources" => "resources",
        "list_resource_templates" => "templates",
        "read_resource" => "resource",
        "complete" => "completion",
        "set_logging_level" | "subscribe" | "unsubscribe" | "sleep" => "ok",
        other => panic!("no outcome event known for step op {other:?}"),
    }
}

const OUTCOMES: &[&str] = &[
    "tools",
    "result",
    "prompts",
    "prompt",
    "resources",
    "templates",
    "resource",
    "completion",
    "ok",
    "error",
];

/// One step's outcome and the notification events that arrived while it ran.
struct Step<'a> {
    name: String,
    op: &'a str,
    outcome: &'a Value,
    notes: Vec<&'a Value>,
}

impl Run {
    #[track_caller]
    fn fail(&self, what: impl std::fmt::Display) -> ! {
        let server = match &self.server {
            Some((log, exit)) => {
                format!("\n--- server stderr (exit when the driver ended: {exit:?}) ---\n{log}")
            }
            None => String::new(),
        };
        panic!(
            "[{}] {what}\n--- driver status: {:?}{} after {:.1?} ---\n--- driver stdout ---\n{}\n\
             --- driver stderr{} ---\n{}{server}",
            self.label,
            self.status,
            if self.timed_out { " (killed: deadline)" } else { "" },
            self.elapsed,
            self.stdout,
            if self.server.is_none() { " (incl. server)" } else { "" },
            self.stderr,
        )
    }

    /// The driver ended normally (exit 0, last event `done`, no `exception`), and an HTTP server
    /// was still serving when it did.
    #[track_caller]
    fn assert_clean(&self) {
        self.assert_driver_clean();
        if let Some((_, exit)) = &self.server {
            self.check(
                exit.is_none(),
                format_args!("the server exited during the run: {exit:?}"),
            );
        }
    }

    /// The `connected` event: the era's version, the server's name, and the capabilities each
    /// era must declare (`docs/CONFORMANCE.md` §4.1): `prompts`, `resources`, `completions` on
    /// both; on 2025-11-25 also `logging` and `resources.subscribe: true`; on 2026-07-28 no
    /// `resources.subscribe` (the method does not exist there).
    #[track_caller]
    fn assert_connected(&self) -> &Value {
        let connected = self.events.first().filter(|e| e["event"] == "connected");
        let Some(connected) = connected else {
            self.fail("the first event is not `connected`")
        };
        self.check_eq(
            &connected["protocol_version"],
            &json!(self.era.version),
            "negotiated protocol version",
        );
        self.check_eq(
            &connected["server_info"]["name"],
            &json!(SERVER_NAME),
            "server_info.name",
        );
        let caps = &connected["capabilities"];
        for cap in ["prompts", "resources", "completions", "tools"] {
            self.check(
                caps[cap].is_object(),
                format_args!("the server declares no `{cap}` capability: {caps}"),
            );
        }
        // Both eras: logging (any tool may log), and resource subscriptions (`resources/subscribe`
        // on 2025-11-25, `subscriptions/listen` on 2026-07-28).
        self.check_eq(&caps["logging"], &json!({}), "the logging capability");
        self.check_eq(&caps["resources"]["subscribe"], &json!(true), "resources.subscribe");
        connected
    }

    /// The steps' outcomes, one per step in order, each with the notifications that came before
    /// it (and after the previous outcome). Nothing may arrive after the last outcome.
    #[track_caller]
    fn steps<'a>(&'a self, steps: &'a Value) -> Vec<Step<'a>> {
        let steps = steps.as_array().unwrap();
        let body = self
            .events
            .iter()
            .filter(|e| !matches!(e["event"].as_str(), Some("connected" | "done")));
        let mut out = Vec::new();
        let mut notes = Vec::new();
        for event in body {
            let kind = event["event"].as_str().unwrap_or_default();
            if !OUTCOMES.contains(&kind) {
                notes.push(event);
                continue;
            }
            let Some(step) = steps.get(out.len()) else {
                self.fail(format_args!(
                    "more step outcomes than the {} steps: {event}",
                    steps.len()
                ))
            };
            let op = step["op"].as_str().unwrap();
            let name = format!("step {} ({op} {})", out.len(), step_args(step));
            if kind != "error" && kind != outcome_event(op) {
                self.fail(format_args!("{name}: unexpected outcome {event}"));
            }
            out.push(Step {
                name,
                op,
                outcome: event,
                notes: std::mem::take(&mut notes),
            });
        }
        self.check(
            out.len() == steps.len(),
            format_args!("expected {} step outcomes, got {}", steps.len(), out.len()),
        );
        self.check(
            notes.is_empty(),
            format_args!("events arrived after the last step outcome: {notes:?}"),
        );
        out
    }

    /// The step succeeded; its outcome event.
    #[track_caller]
    fn ok<'a>(&self, step: &Step<'a>) -> &'a Value {
        if step.outcome["event"] == "error" {
            self.fail(format_args!("{}: failed: {}", step.name, step.outcome));
        }
        step.outcome
    }

    /// The step failed with a JSON-RPC error `code`; the error event.
    #[track_caller]
    fn err<'a>(&self, step: &Step<'a>, code: i64) -> &'a Value {
        if step.outcome["event"] != "error" {
            self.fail(format_args!(
                "{}: expected error {code}, got {}",
                step.name, step.outcome
            ));
        }
        self.check_eq(
            &step.outcome["code"],
            &json!(code),
            &format!("{}: error code", step.name),
        );
        step.outcome
    }

    /// The log messages (`notifications/message`) that arrived during the step, as
    /// `(level, data)`; checked that every notification during it was a log message.
    #[track_caller]
    fn logs<'a>(&self, step: &Step<'a>) -> Vec<(&'a str, &'a Value)> {
        let mut logs = Vec::new();
        for note in &step.notes {
            if note["event"] != "log" {
                self.fail(format_args!("{}: an unexpected notification: {note}", step.name));
            }
            logs.push((note["level"].as_str().unwrap_or_default(), &note["data"]));
        }
        logs
    }

    #[track_caller]
    fn assert_quiet(&self, step: &Step<'_>) {
        self.check(
            step.notes.is_empty(),
            format_args!("{}: expected no notifications, got {:?}", step.name, step.notes),
        );
    }

    /// A 2026-07-28 result says it is complete and names the server (`_meta`); a cacheable one
    /// (lists, `resources/read`) also carries the caching hints `ttlMs` and `cacheScope`. The
    /// handshake era's results carry none of these (nothing to check: the SDK drops later
    /// revisions' fields from them).
    #[track_caller]
    fn assert_era_result(&self, result: &Value, cacheable: bool, what: &str) {
        if !self.era.modern() {
            return;
        }
        self.check_eq(
            &result["resultType"],
            &json!("complete"),
            &format!("{what}: resultType"),
        );
        self.check_eq(
            &result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            &json!(SERVER_NAME),
            &format!("{what}: _meta serverInfo.name"),
        );
        if cacheable {
            self.check(
                result["ttlMs"].is_u64(),
                format_args!("{what}: ttlMs must be an integer >= 0, got {}", result["ttlMs"]),
            );
            self.check(
                matches!(result["cacheScope"].as_str(), Some("public" | "private")),
                format_args!(
                    "{what}: cacheScope must be public or private, got {}",
                    result["cacheScope"]
                ),
            );
        }
    }
}

/// A step's arguments, for failure messages.
fn step_args(step: &Value) -> String {
    let mut rest = step.as_object().cloned().unwrap_or_default();
    rest.remove("op");
    Value::Object(rest).to_string()
}

/// How the driver reaches the server.
enum Transport<'a> {
    /// `py_client.py ... -- conformance`: a server process per run, speaking stdio.
    Stdio,
    /// `py_client.py --url URL`: an already running `conformance --http`.
    Http(&'a mut HttpServer),
}

fn drive(label: &str, era: Era, transport: Transport<'_>, options: &[&str], steps: &Value) -> Run {
    let python = python();
    if matches!(transport, Transport::Stdio) {
        conformance_bin(); // built before the clock starts
    }
    let driver = Path::new(MANIFEST_DIR)
        .join("tests")
        .join("interop")
        .join("py_client.py");
    let mut cmd = Command::new(python);
    cmd.arg(&driver)
        .args(["--mode", era.mode, "--timeout", DRIVER_TIMEOUT_SECS])
        .args(options)
        .arg("--steps")
        .arg(steps.to_string());
    let server = match transport {
        Transport::Stdio => {
            cmd.arg("--").arg(conformance_bin());
            None
        }
        Transport::Http(server) => {
            cmd.arg("--url").arg(server.url());
            Some(server)
        }
    };
    // A stdio server inherits the driver's stderr and exits on stdin EOF, so its pipes close
    // quickly; do not hang forever on one that lingers, though.
    let done = run_to_end(&mut cmd, label, DRIVER_DEADLINE, Duration::from_secs(10));
    let server = server.map(|s| {
        let exit = s.child.try_wait().ok().flatten();
        (text_of(&s.stderr), exit)
    });
    let transport = if server.is_some() { "http" } else { "stdio" };
    let mut run = Run {
        label: format!("{label}: {transport} mode={} {}", era.mode, options.join(" ")),
        era,
        status: done.status,
        timed_out: done.timed_out,
        stdout: done.stdout,
        stderr: done.stderr,
        server,
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
    eprintln!("interop-primitives: [{}] {:.1?}", run.label, run.elapsed);
    run
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

fn op(name: &str) -> Value {
    json!({"op": name})
}

fn get_prompt(name: &str, args: Value) -> Value {
    if args.is_null() {
        json!({"op": "get_prompt", "name": name})
    } else {
        json!({"op": "get_prompt", "name": name, "args": args})
    }
}

fn read(uri: &str) -> Value {
    json!({"op": "read_resource", "uri": uri})
}

fn complete_prompt(prompt: &str, arg: &str, value: &str) -> Value {
    json!({
        "op": "complete",
        "ref": {"type": "ref/prompt", "name": prompt},
        "argument": {"name": arg, "value": value},
    })
}

fn complete_template(template: &str, arg: &str, value: &str) -> Value {
    json!({
        "op": "complete",
        "ref": {"type": "ref/resource", "uri": template},
        "argument": {"name": arg, "value": value},
    })
}

fn call(tool: &str) -> Value {
    json!({"op": "call", "tool": tool, "args": {}})
}

/// A call whose request `_meta` asks for log messages at `level` (2026-07-28's only way to).
fn call_logging_at(tool: &str, level: &str) -> Value {
    json!({"op": "call", "tool": tool, "args": {}, "meta": {LOG_LEVEL_KEY: level}})
}

fn set_level(level: &str) -> Value {
    json!({"op": "set_logging_level", "level": level})
}

fn subscribe(uri: &str) -> Value {
    json!({"op": "subscribe", "uri": uri})
}

fn unsubscribe(uri: &str) -> Value {
    json!({"op": "unsubscribe", "uri": uri})
}

fn sleep(seconds: f64) -> Value {
    json!({"op": "sleep", "seconds": seconds})
}

// ---------------------------------------------------------------------------------------------
// The fixtures' expected values (docs/CONFORMANCE.md §4.3–§4.7)
// ---------------------------------------------------------------------------------------------

const ARGS_PROMPT: &str = "test_prompt_with_arguments";
const EMBED_PROMPT: &str = "test_prompt_with_embedded_resource";
const IMAGE_PROMPT: &str = "test_prompt_with_image";
const ASKING_PROMPT: &str = "test_input_required_result_prompt";
const SIMPLE_PROMPT: &str = "test_simple_prompt";
const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";
const UNKNOWN_URI: &str = "test://nonexistent-resource-for-conformance-testing";
const LOGGING_TOOL_LINES: [&str; 3] = [
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
];

/// Base64 that decodes, or the failure.
fn decode(run: &Run, data: &Value, what: &str) -> Vec<u8> {
    let Some(text) = data.as_str().filter(|s| !s.is_empty()) else {
        run.fail(format_args!("{what}: expected non-empty base64, got {data}"))
    };
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_else(|e| run.fail(format_args!("{what}: not base64 ({e}): {text:?}")))
}

/// The bytes are a PNG of 1×1 pixels (signature, then the IHDR chunk's width and height).
#[track_caller]
fn assert_png_1x1(run: &Run, bytes: &[u8], what: &str) {
    run.check(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.get(12..16) == Some(b"IHDR"),
        format_args!("{what}: not a PNG: {bytes:02x?}"),
    );
    let dims = (bytes.get(16..20), bytes.get(20..24));
    run.check(
        dims == (Some(&[0, 0, 0, 1][..]), Some(&[0, 0, 0, 1][..])),
        format_args!("{what}: expected a 1x1 PNG, got IHDR {dims:02x?}"),
    );
}

impl Run {
    /// `prompts/list`: the four prompts, each with its description and arguments.
    #[track_caller]
    fn assert_prompt_list(&self, step: &Step<'_>) {
        let event = self.ok(step);
        self.assert_era_result(&event["result"], true, "prompts/list");
        let prompts = event["prompts"].as_array().cloned().unwrap_or_default();
        let names: Vec<&str> = prompts.iter().filter_map(|p| p["name"].as_str()).collect();
        self.check(
            names == [SIMPLE_PROMPT, ARGS_PROMPT, EMBED_PROMPT, IMAGE_PROMPT, ASKING_PROMPT],
            format_args!("prompt names: {names:?}"),
        );
        let prompt = |name: &str| prompts.iter().find(|p| p["name"] == name).unwrap();
        for (name, description) in [
            (SIMPLE_PROMPT, "A prompt without arguments."),
            (ARGS_PROMPT, "A prompt with two required arguments."),
            (EMBED_PROMPT, "A prompt embedding the resource it is given."),
            (IMAGE_PROMPT, "A prompt with an image."),
            (
                ASKING_PROMPT,
                "A prompt that asks the user first (2026: an InputRequiredResult on `prompts/get`).",
            ),
        ] {
            self.check_eq(
                &prompt(name)["description"],
                &json!(description),
                &format!("{name} description"),
            );
        }
        let no_args = |name: &str| {
            let args = &prompt(name)["arguments"];
            args.is_null() || args.as_array().is_some_and(Vec::is_empty)
        };
        self.check(no_args(SIMPLE_PROMPT), "test_simple_prompt takes no arguments");
        self.check(no_args(IMAGE_PROMPT), "test_prompt_with_image takes no arguments");
        // Its resolved parameter is not an argument.
        self.check(
            no_args(ASKING_PROMPT),
            "test_input_required_result_prompt takes no arguments",
        );
        self.check_eq(
            &prompt(ARGS_PROMPT)["arguments"],
            &json!([
                {"name": "arg1", "description": "First test argument.", "required": true},
                {"name": "arg2", "description": "Second test argument.", "required": true},
            ]),
            "test_prompt_with_arguments arguments",
        );
        self.check_eq(
            &prompt(EMBED_PROMPT)["arguments"],
            &json!([{"name": "resourceUri", "description": "The URI of the resource to embed.", "required": true}]),
            "test_prompt_with_embedded_resource arguments",
        );
    }

    /// A `prompts/get` result's messages, checked to be complete (2026) and non-empty.
    #[track_caller]
    fn prompt_messages<'a>(&self, step: &Step<'a>) -> &'a [Value] {
        let result = &self.ok(step)["result"];
        self.assert_era_result(result, false, &step.name);
        let messages = result["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
        self.check(!messages.is_empty(), format_args!("{}: no messages", step.name));
        messages
    }

    /// `test_prompt_with_arguments` with `arg1`, `arg2`: both values in the one user message.
    #[track_caller]
    fn assert_args_prompt(&self, step: &Step<'_>, arg1: &str, arg2: &str) {
        let messages = self.prompt_messages(step);
        self.check_eq(
            &json!(messages),
            &json!([{"role": "user", "content": {
                "type": "text",
                "text": format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"),
            }}]),
            &format!("{}: messages", step.name),
        );
    }

    /// `test_prompt_with_embedded_resource`: the given URI as an embedded text resource, then
    /// the instruction.
    #[track_caller]
    fn assert_embed_prompt(&self, step: &Step<'_>, uri: &str) {
        let messages = self.prompt_messages(step);
        self.check_eq(
            &json!(messages),
            &json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": uri,
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                }}},
                {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}},
            ]),
            &format!("{}: messages", step.name),
        );
    }

    /// `test_prompt_with_image`: a 1×1 PNG image item, then the instruction.
    #[track_caller]
    fn assert_image_prompt(&self, step: &Step<'_>) {
        let messages = self.prompt_messages(step);
        self.check(messages.len() == 2, format_args!("{}: expected 2 messages", step.name));
        let image = &messages[0];
        self.check_eq(&image["role"], &json!("user"), "image message role");
        self.check_eq(&image["content"]["type"], &json!("image"), "image content type");
        self.check_eq(&image["content"]["mimeType"], &json!("image/png"), "image mimeType");
        let bytes = decode(self, &image["content"]["data"], "image data");
        assert_png_1x1(self, &bytes, "image data");
        self.check_eq(
            &messages[1],
            &json!({"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}),
            "image prompt's second message",
        );
    }

    /// A `resources/read` result with exactly one content item, which is returned.
    #[track_caller]
    fn read_one<'a>(&self, step: &Step<'a>) -> &'a Value {
        let result = &self.ok(step)["result"];
        self.assert_era_result(result, true, &step.name);
        let contents = result["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
        self.check(
            contents.len() == 1,
            format_args!("{}: expected one content item, got {contents:?}", step.name),
        );
        &contents[0]
    }

    #[track_caller]
    fn assert_static_text(&self, step: &Step<'_>) {
        self.check_eq(
            self.read_one(step),
            &json!({
                "uri": STATIC_TEXT,
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource.",
            }),
            &step.name,
        );
    }

    #[track_caller]
    fn assert_static_binary(&self, step: &Step<'_>) {
        let item = self.read_one(step);
        self.check_eq(&item["uri"], &json!(STATIC_BINARY), "static-binary uri");
        self.check_eq(&item["mimeType"], &json!("image/png"), "static-binary mimeType");
        self.check(item.get("text").is_none(), "static-binary is a blob, not text");
        let bytes = decode(self, &item["blob"], "static-binary blob");
        assert_png_1x1(self, &bytes, "static-binary blob");
    }

    /// `test://template/{id}/data` read with `id`: JSON naming that id.
    #[track_caller]
    fn assert_template_read(&self, step: &Step<'_>, id: &str) {
        let item = self.read_one(step);
        self.check_eq(
            &item["uri"],
            &json!(format!("test://template/{id}/data")),
            "template read uri",
        );
        self.check_eq(&item["mimeType"], &json!("application/json"), "template read mimeType");
        let text = item["text"].as_str().unwrap_or_default();
        let data: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| self.fail(format_args!("{}: text is not JSON ({e}): {text:?}", step.name)));
        self.check_eq(
            &data,
            &json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}),
            &format!("{}: the JSON", step.name),
        );
    }

    /// A URI no resource or template answers: -32002 on the handshake era (2025-11-25 resources:
    /// "Resource not found: `-32002`"), -32602 on 2026-07-28 (which does not use -32002), naming
    /// the URI in `data.uri`.
    #[track_caller]
    fn assert_resource_not_found(&self, step: &Step<'_>, uri: &str) {
        let code = if self.era.modern() {
            INVALID_PARAMS
        } else {
            RESOURCE_NOT_FOUND
        };
        let error = self.err(step, code);
        self.check_eq(&error["data"], &json!({"uri": uri}), &format!("{}: data", step.name));
    }

    /// A `completion/complete` result offering exactly `values`, all of them (`total`, no more).
    #[track_caller]
    fn assert_completion(&self, step: &Step<'_>, values: &[&str]) {
        let result = &self.ok(step)["result"];
        self.assert_era_result(result, false, &step.name);
        self.check_eq(
            &result["completion"],
            &json!({"values": values, "total": values.len(), "hasMore": false}),
            &format!("{}: completion", step.name),
        );
    }

    /// The `test_tool_with_logging` call succeeded and its three `info` messages arrived, in
    /// order, before its result; or no message at all (`expect_logs == false`).
    #[track_caller]
    fn assert_logging_tool(&self, step: &Step<'_>, expect_logs: bool) {
        let (text, _) = self.text_result(step);
        self.check(
            text == "Logging test completed",
            format_args!("{}: text {text:?}", step.name),
        );
        let logs = self.logs(step);
        let want: Vec<(&str, Value)> = if expect_logs {
            LOGGING_TOOL_LINES.iter().map(|l| ("info", json!(l))).collect()
        } else {
            Vec::new()
        };
        let got: Vec<(&str, Value)> = logs.iter().map(|(l, d)| (*l, (*d).clone())).collect();
        self.check(
            got == want,
            format_args!("{}: log messages: expected {want:?}, got {got:?}", step.name),
        );
        // No logger is named by these fixtures.
        for note in &step.notes {
            self.check(
                note["logger"].is_null(),
                format_args!("{}: logger in {note}", step.name),
            );
        }
    }

    /// `test_logging_tool`: one `info` message, or none.
    #[track_caller]
    fn assert_logging_tool_once(&self, step: &Step<'_>, expect_log: bool) {
        let (text, _) = self.text_result(step);
        self.check(
            text == "Logging tool completed",
            format_args!("{}: text {text:?}", step.name),
        );
        let got: Vec<(&str, Value)> = self.logs(step).iter().map(|(l, d)| (*l, (*d).clone())).collect();
        let want: Vec<(&str, Value)> = if expect_log {
            vec![("info", json!("test_logging_tool ran"))]
        } else {
            Vec::new()
        };
        self.check(
            got == want,
            format_args!("{}: log messages: expected {want:?}, got {got:?}", step.name),
        );
    }

    /// A successful tool result: its concatenated text and the result.
    #[track_caller]
    fn text_result<'a>(&self, step: &Step<'a>) -> (String, &'a Value) {
        let result = &self.ok(step)["result"];
        self.check_eq(&result["isError"], &json!(false), &format!("{}: isError", step.name));
        let text: String = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["type"] == "text")
            .filter_map(|c| c["text"].as_str())
            .collect();
        (text, result)
    }

    /// A `logging/setLevel`, `resources/subscribe` or `unsubscribe` answered exactly `{}`.
    #[track_caller]
    fn assert_empty_ok(&self, step: &Step<'_>) {
        let event = self.ok(step);
        self.check_eq(&event["op"], &json!(step.op), &format!("{}: op", step.name));
        self.check_eq(&event["result"], &json!({}), &format!("{}: result", step.name));
    }

    /// -32601 for a method 2026-07-28 removed, naming it in `data`.
    #[track_caller]
    fn assert_removed_method(&self, step: &Step<'_>, method: &str) {
        let error = self.err(step, METHOD_NOT_FOUND);
        self.check_eq(&error["data"], &json!(method), &format!("{}: data", step.name));
    }
}

// ---------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------

/// `prompts/list` names the four prompts with their descriptions and arguments; `prompts/get`
/// renders each: the simple text, both argument values in the message, the given URI as an
/// embedded resource (a URI that is not a listed resource), and a real 1×1 PNG; an unknown
/// prompt and a missing required argument are -32602 naming what is wrong. On 2026-07-28 every
/// result says `resultType: complete` and names the server, and the list carries caching hints.
fn prompts(era: Era) {
    let steps = json!([
        op("list_prompts"),
        get_prompt(SIMPLE_PROMPT, Value::Null),
        get_prompt(ARGS_PROMPT, json!({"arg1": "testValue1", "arg2": "testValue2"})),
        get_prompt(ARGS_PROMPT, json!({"arg1": "ünï \"q\"", "arg2": ""})),
        get_prompt(EMBED_PROMPT, json!({"resourceUri": "test://example-resource"})),
        get_prompt(IMAGE_PROMPT, Value::Null),
        get_prompt("no_such_prompt", Value::Null),
        get_prompt(ARGS_PROMPT, json!({"arg1": "only one"})),
    ]);
    let run = drive("prompts", era, Transport::Stdio, &[], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    for step in &s {
        run.assert_quiet(step);
    }
    run.assert_prompt_list(&s[0]);
    run.check_eq(
        &json!(run.prompt_messages(&s[1])),
        &json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]),
        "test_simple_prompt messages",
    );
    run.assert_args_prompt(&s[2], "testValue1", "testValue2");
    run.assert_args_prompt(&s[3], "ünï \"q\"", "");
    run.assert_embed_prompt(&s[4], "test://example-resource");
    run.assert_image_prompt(&s[5]);
    let unknown = run.err(&s[6], INVALID_PARAMS);
    run.check_eq(
        &unknown["data"],
        &json!({"name": "no_such_prompt"}),
        "unknown prompt data",
    );
    let missing = run.err(&s[7], INVALID_PARAMS);
    run.check_eq(&missing["data"], &json!({"missing": ["arg2"]}), "missing argument data");
}

#[test]
fn auto_prompts_list_and_get_every_fixture() {
    prompts(AUTO);
}

#[test]
fn legacy_prompts_list_and_get_every_fixture() {
    prompts(LEGACY);
}

// ---------------------------------------------------------------------------------------------
// Resources and templates
// ---------------------------------------------------------------------------------------------

/// `resources/list` lists the three static resources, `test://static-text` first, each with
/// name, description and MIME type (not the template); `resources/read` returns the text, the
/// PNG as a base64 blob that decodes to a 1×1 PNG, and the watched resource's text;
/// `resources/templates/list` lists `test://template/{id}/data`, and reading it fills in the id
/// (two different ids, so the content is not a constant); a URI nothing answers (also one that
/// only looks like the template) is -32002 on 2025-11-25, -32602 on 2026-07-28, with `data.uri`. 2026-07-28: caching hints on every
/// list and read.
fn resources(era: Era) {
    let steps = json!([
        op("list_resources"),
        read(STATIC_TEXT),
        read(STATIC_BINARY),
        read(WATCHED),
        op("list_resource_templates"),
        read("test://template/123/data"),
        read("test://template/abc-9/data"),
        read(UNKNOWN_URI),
        read("test://template/123/other"),
    ]);
    let run = drive("resources", era, Transport::Stdio, &[], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    for step in &s {
        run.assert_quiet(step);
    }

    let listed = run.ok(&s[0]);
    run.assert_era_result(&listed["result"], true, "resources/list");
    run.check_eq(
        &listed["resources"],
        &json!([
            {"uri": STATIC_TEXT, "name": "static_text", "description": "A static text resource.", "mimeType": "text/plain"},
            {"uri": STATIC_BINARY, "name": "static_binary", "description": "A static binary resource: a 1×1 PNG.", "mimeType": "image/png"},
            {"uri": WATCHED, "name": "watched_resource", "description": "A resource clients may subscribe to (2025).", "mimeType": "text/plain"},
        ]),
        "resources/list",
    );
    run.assert_static_text(&s[1]);
    run.assert_static_binary(&s[2]);
    run.check_eq(
        run.read_one(&s[3]),
        &json!({"uri": WATCHED, "mimeType": "text/plain", "text": "Watched resource content."}),
        "read watched-resource",
    );

    let templates = run.ok(&s[4]);
    run.assert_era_result(&templates["result"], true, "resources/templates/list");
    run.check_eq(
        &templates["resourceTemplates"],
        &json!([{
            "uriTemplate": TEMPLATE,
            "name": "template_data",
            "description": "JSON data for any id.",
            "mimeType": "application/json",
        }]),
        "resources/templates/list",
    );
    run.assert_template_read(&s[5], "123");
    run.assert_template_read(&s[6], "abc-9");
    run.assert_resource_not_found(&s[7], UNKNOWN_URI);
    run.assert_resource_not_found(&s[8], "test://template/123/other");
}

#[test]
fn auto_resources_list_read_templates_and_unknown_uri() {
    resources(AUTO);
}

#[test]
fn legacy_resources_list_read_templates_and_unknown_uri() {
    resources(LEGACY);
}

// ---------------------------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------------------------

/// `completion/complete` on `test_prompt_with_arguments`'s `arg1` offers the fixture's words
/// that start with what was typed (all three for `test`, one for `testV`, none for `zzz`); an
/// argument without a completer (`arg2`, the template's `id`) gets an empty list, not an error;
/// an unknown prompt or template reference is -32602 naming it.
fn completion(era: Era) {
    let steps = json!([
        complete_prompt(ARGS_PROMPT, "arg1", "test"),
        complete_prompt(ARGS_PROMPT, "arg1", "testV"),
        complete_prompt(ARGS_PROMPT, "arg1", "zzz"),
        complete_prompt(ARGS_PROMPT, "arg2", "t"),
        complete_template(TEMPLATE, "id", "1"),
        complete_prompt("no_such_prompt", "arg1", "t"),
        complete_template("test://nowhere/{x}", "x", "1"),
    ]);
    let run = drive("completion", era, Transport::Stdio, &[], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    for step in &s {
        run.assert_quiet(step);
    }
    run.assert_completion(&s[0], &["test", "testValue1", "testing"]);
    run.assert_completion(&s[1], &["testValue1"]);
    run.assert_completion(&s[2], &[]);
    run.assert_completion(&s[3], &[]);
    run.assert_completion(&s[4], &[]);
    let prompt = run.err(&s[5], INVALID_PARAMS);
    run.check_eq(
        &prompt["data"],
        &json!({"name": "no_such_prompt"}),
        "unknown prompt ref data",
    );
    let template = run.err(&s[6], INVALID_PARAMS);
    run.check_eq(
        &template["data"],
        &json!({"uri": "test://nowhere/{x}"}),
        "unknown template ref data",
    );
}

#[test]
fn auto_completion_offers_the_matching_values() {
    completion(AUTO);
}

#[test]
fn legacy_completion_offers_the_matching_values() {
    completion(LEGACY);
}

// ---------------------------------------------------------------------------------------------
// Logging
// ---------------------------------------------------------------------------------------------

/// 2025-11-25: before any `logging/setLevel` the server sends `info` and above (the spec lets it
/// choose); `logging/setLevel` answers exactly `{}`, and the session's level then filters every
/// later call: `error` silences the `info` messages, `debug` lets all three
/// `test_tool_with_logging` messages through in order before the result, `warning` silences
/// `test_logging_tool`, `info` (the boundary) lets it through.
#[test]
fn legacy_logging_set_level_filters_notifications_message() {
    let steps = json!([
        call("test_tool_with_logging"),
        set_level("error"),
        call("test_tool_with_logging"),
        call("test_logging_tool"),
        set_level("debug"),
        call("test_tool_with_logging"),
        call("test_logging_tool"),
        set_level("warning"),
        call("test_logging_tool"),
        set_level("info"),
        call("test_logging_tool"),
    ]);
    let run = drive("logging", LEGACY, Transport::Stdio, &[], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    run.assert_logging_tool(&s[0], true);
    run.assert_empty_ok(&s[1]);
    run.assert_logging_tool(&s[2], false);
    run.assert_logging_tool_once(&s[3], false);
    run.assert_empty_ok(&s[4]);
    run.assert_logging_tool(&s[5], true);
    run.assert_logging_tool_once(&s[6], true);
    run.assert_empty_ok(&s[7]);
    run.assert_logging_tool_once(&s[8], false);
    run.assert_empty_ok(&s[9]);
    run.assert_logging_tool_once(&s[10], true);
    for step in [&s[1], &s[4], &s[7], &s[9]] {
        run.assert_quiet(step);
    }
}

/// 2026-07-28, stateless: without `_meta["io.modelcontextprotocol/logLevel"]` no log message is
/// sent (`sep-2575-server-no-log-without-loglevel`); `logging/setLevel` does not exist (-32601,
/// the Python client sends it anyway); a call whose own `_meta` asks for `info` or `debug` gets
/// the three messages in order before its result, one asking for `error` or `warning` none; and
/// nothing carries over to the next request (a call without the key is silent again).
#[test]
fn auto_logging_only_for_requests_whose_meta_asks_for_a_level() {
    let steps = json!([
        call("test_tool_with_logging"),
        call("test_logging_tool"),
        set_level("debug"),
        call("test_tool_with_logging"),
        call_logging_at("test_tool_with_logging", "info"),
        call_logging_at("test_tool_with_logging", "debug"),
        call_logging_at("test_tool_with_logging", "error"),
        call_logging_at("test_logging_tool", "warning"),
        call_logging_at("test_logging_tool", "info"),
        call("test_tool_with_logging"),
    ]);
    let run = drive("logging", AUTO, Transport::Stdio, &[], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    run.assert_logging_tool(&s[0], false);
    run.assert_logging_tool_once(&s[1], false);
    run.assert_removed_method(&s[2], "logging/setLevel");
    run.assert_quiet(&s[2]);
    run.assert_logging_tool(&s[3], false);
    run.assert_logging_tool(&s[4], true);
    run.assert_logging_tool(&s[5], true);
    run.assert_logging_tool(&s[6], false);
    run.assert_logging_tool_once(&s[7], false);
    run.assert_logging_tool_once(&s[8], true);
    run.assert_logging_tool(&s[9], false);
    for step in &s {
        if step.op == "call" {
            let (_, result) = run.text_result(step);
            run.assert_era_result(result, false, &step.name);
        }
    }
}

/// 2026-07-28 through the SDK's own switch, `Client(log_level=...)` (`--log-level info`), which
/// stamps the logLevel on every request: each call gets its messages, a call's own `_meta` entry
/// overrides it (`error`: none), and other requests carrying the key are unaffected.
#[test]
fn auto_client_log_level_option_asks_on_every_request() {
    let steps = json!([
        call("test_tool_with_logging"),
        call_logging_at("test_tool_with_logging", "error"),
        call("test_logging_tool"),
        get_prompt(SIMPLE_PROMPT, Value::Null),
        call("test_tool_with_logging"),
    ]);
    let run = drive("log-level", AUTO, Transport::Stdio, &["--log-level", "info"], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    run.assert_logging_tool(&s[0], true);
    run.assert_logging_tool(&s[1], false);
    run.assert_logging_tool_once(&s[2], true);
    run.check(!run.prompt_messages(&s[3]).is_empty(), "prompts/get with a logLevel");
    run.assert_quiet(&s[3]);
    run.assert_logging_tool(&s[4], true);
}

// ---------------------------------------------------------------------------------------------
// resources/subscribe and resources/unsubscribe
// ---------------------------------------------------------------------------------------------

/// 2025-11-25: `resources/subscribe` and `resources/unsubscribe` answer exactly `{}` for a listed
/// resource and for a URI the template answers; unsubscribing twice is still `{}`; an unknown
/// URI is -32002 with `data.uri` for both. The watched resource does not change, so no
/// `notifications/resources/updated` arrives while the client waits; the connection keeps
/// serving reads afterwards.
#[test]
fn legacy_subscribe_and_unsubscribe_answer_empty_results() {
    let steps = json!([
        subscribe(WATCHED),
        subscribe("test://template/7/data"),
        subscribe(UNKNOWN_URI),
        sleep(0.3),
        read(WATCHED),
        unsubscribe(WATCHED),
        unsubscribe(WATCHED),
        unsubscribe("test://template/7/data"),
        unsubscribe(UNKNOWN_URI),
        read(STATIC_TEXT),
    ]);
    let run = drive("subscribe", LEGACY, Transport::Stdio, &[], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    for step in &s {
        run.assert_quiet(step);
    }
    run.assert_empty_ok(&s[0]);
    run.assert_empty_ok(&s[1]);
    run.assert_resource_not_found(&s[2], UNKNOWN_URI);
    run.check_eq(&run.ok(&s[3])["op"], &json!("sleep"), "sleep step");
    run.check_eq(
        &run.read_one(&s[4])["text"],
        &json!("Watched resource content."),
        "read watched-resource while subscribed",
    );
    run.assert_empty_ok(&s[5]);
    run.assert_empty_ok(&s[6]);
    run.assert_empty_ok(&s[7]);
    run.assert_resource_not_found(&s[8], UNKNOWN_URI);
    run.assert_static_text(&s[9]);
}

/// 2026-07-28 removed `resources/subscribe` and `resources/unsubscribe`: the Python client still
/// sends them when asked (it only marks them deprecated) and the server answers -32601 naming
/// the method, for a listed URI as for an unknown one, and keeps serving; discover declares
/// `resources` without `subscribe`.
#[test]
fn auto_subscribe_and_unsubscribe_do_not_exist() {
    let steps = json!([
        subscribe(WATCHED),
        unsubscribe(WATCHED),
        subscribe(UNKNOWN_URI),
        read(WATCHED),
    ]);
    let run = drive("subscribe", AUTO, Transport::Stdio, &[], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    for step in &s {
        run.assert_quiet(step);
    }
    run.assert_removed_method(&s[0], "resources/subscribe");
    run.assert_removed_method(&s[1], "resources/unsubscribe");
    run.assert_removed_method(&s[2], "resources/subscribe");
    run.check_eq(
        &run.read_one(&s[3])["text"],
        &json!("Watched resource content."),
        "read watched-resource after the refused subscribe",
    );
}

// ---------------------------------------------------------------------------------------------
// The client's sampling and roots callbacks declare their capabilities
// ---------------------------------------------------------------------------------------------

/// The driver's `--sampling` installs a sampling callback, so the client declares `sampling`
/// (`initialize` capabilities on 2025-11-25, every request's `_meta` on 2026-07-28) and
/// `test_missing_capability` answers; without it the same call is -32021 with
/// `data.requiredCapabilities = {"sampling": {}}`. `--roots` alongside changes nothing for these
/// two steps (neither asks for a sample or the roots, so no `sampling`/`roots` event; the
/// fixtures that do are in `questions_resolvers_ask`).
fn sampling_capability(era: Era) {
    let steps = json!([call("test_missing_capability"), read(STATIC_TEXT)]);
    let roots = r#"[{"uri":"file:///test/root","name":"Test Root"}]"#;
    let with = drive(
        "sampling",
        era,
        Transport::Stdio,
        &[
            "--sampling",
            "This is a test response from the client",
            "--roots",
            roots,
        ],
        &steps,
    );
    with.assert_clean();
    with.assert_connected();
    let s = with.steps(&steps);
    let (text, result) = with.text_result(&s[0]);
    with.check(
        text == "The client declares sampling.",
        format_args!("test_missing_capability with sampling: {text:?}"),
    );
    with.assert_era_result(result, false, "test_missing_capability");
    with.assert_static_text(&s[1]);
    for step in &s {
        with.assert_quiet(step);
    }

    let without = drive("no-sampling", era, Transport::Stdio, &[], &steps);
    without.assert_clean();
    let s = without.steps(&steps);
    let error = without.err(&s[0], MISSING_CAPABILITY);
    without.check_eq(
        &error["data"],
        &json!({"requiredCapabilities": {"sampling": {}}}),
        "test_missing_capability without sampling: data",
    );
    without.assert_static_text(&s[1]);
}

#[test]
fn auto_sampling_callback_declares_the_sampling_capability() {
    sampling_capability(AUTO);
}

#[test]
fn legacy_sampling_callback_declares_the_sampling_capability() {
    sampling_capability(LEGACY);
}

// ---------------------------------------------------------------------------------------------
// Over Streamable HTTP
// ---------------------------------------------------------------------------------------------

/// The same primitives over Streamable HTTP (`conformance --http`, `/mcp`), one fresh server per
/// era: prompts list and get (arguments, embedded resource), resources read (text, blob,
/// template) and the unknown URI, completion, and logging on the call's own response stream
/// (2025-11-25: after `logging/setLevel`; 2026-07-28: from the request's `_meta` logLevel, and
/// `logging/setLevel` / `resources/subscribe` are -32601), subscribe `{}` on 2025-11-25.
fn over_http(era: Era) {
    let mut server = HttpChild::start(conformance_bin(), era.mode, &|_| Vec::new());
    let logging: Vec<Value> = if era.modern() {
        vec![
            set_level("debug"),
            call("test_tool_with_logging"),
            call_logging_at("test_tool_with_logging", "info"),
            subscribe(WATCHED),
        ]
    } else {
        vec![
            set_level("debug"),
            call("test_tool_with_logging"),
            set_level("error"),
            call("test_tool_with_logging"),
            subscribe(WATCHED),
            unsubscribe(WATCHED),
        ]
    };
    let mut steps = vec![
        op("list_prompts"),
        get_prompt(ARGS_PROMPT, json!({"arg1": "testValue1", "arg2": "testValue2"})),
        get_prompt(EMBED_PROMPT, json!({"resourceUri": "test://over-http"})),
        read(STATIC_TEXT),
        read(STATIC_BINARY),
        read("test://template/123/data"),
        read(UNKNOWN_URI),
        complete_prompt(ARGS_PROMPT, "arg1", "test"),
        complete_prompt(ARGS_PROMPT, "arg1", "testi"),
    ];
    steps.extend(logging);
    let steps = Value::Array(steps);
    let run = drive("http", era, Transport::Http(&mut server), &[], &steps);
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);
    run.assert_prompt_list(&s[0]);
    run.assert_args_prompt(&s[1], "testValue1", "testValue2");
    run.assert_embed_prompt(&s[2], "test://over-http");
    run.assert_static_text(&s[3]);
    run.assert_static_binary(&s[4]);
    run.assert_template_read(&s[5], "123");
    run.assert_resource_not_found(&s[6], UNKNOWN_URI);
    run.assert_completion(&s[7], &["test", "testValue1", "testing"]);
    run.assert_completion(&s[8], &["testing"]);
    for step in &s[..9] {
        run.assert_quiet(step);
    }
    if era.modern() {
        run.assert_removed_method(&s[9], "logging/setLevel");
        run.assert_logging_tool(&s[10], false);
        run.assert_logging_tool(&s[11], true);
        run.assert_removed_method(&s[12], "resources/subscribe");
    } else {
        run.assert_empty_ok(&s[9]);
        run.assert_logging_tool(&s[10], true);
        run.assert_empty_ok(&s[11]);
        run.assert_logging_tool(&s[12], false);
        run.assert_empty_ok(&s[13]);
        run.assert_empty_ok(&s[14]);
    }
}

#[test]
fn auto_http_prompts_resources_completion_and_logging() {
    over_http(AUTO);
}

#[test]
fn legacy_http_prompts_resources_completion_and_logging() {
    over_http(LEGACY);
}

// ---------------------------------------------------------------------------------------------
// Questions resolvers ask: the client's LLM, its roots, several kinds at once, and a prompt that
// asks the user (issue 12, points 5 and 6)
// ---------------------------------------------------------------------------------------------

const SAMPLED_TEXT: &str = "This is a test response from the client";

fn call_with(tool: &str, args: Value) -> Value {
    json!({"op": "call", "tool": tool, "args": args})
}

/// The notifications of a step, by event kind (`sampling`, `roots`, `elicitation`), in order.
fn kinds<'a>(step: &Step<'a>) -> Vec<&'a str> {
    step.notes
        .iter()
        .map(|n| n["event"].as_str().unwrap_or_default())
        .collect()
}

/// Through the Python SDK client's own sampling, roots and elicitation callbacks:
/// - `test_sampling` asks the client's LLM for the prompt it was given (2026-07-28: a
///   `sampling/createMessage` input request, 2025-11-25: a back-channel request) and returns
///   the reply;
/// - `test_input_required_result_list_roots` asks `roots/list` and names the root;
/// - `test_input_required_result_multiple_inputs` asks a form, a sample and the roots in one
///   call (one round on 2026-07-28, three requests in turn on 2025-11-25);
/// - `test_input_required_result_prompt` is a prompt that asks the user first.
fn questions_resolvers_ask(era: Era) {
    let roots = r#"[{"uri":"file:///test/root","name":"Test Root"}]"#;
    let steps = json!([
        call_with("test_sampling", json!({"prompt": "What is 2+2?"})),
        call("test_input_required_result_list_roots"),
        call("test_input_required_result_multiple_inputs"),
        get_prompt("test_input_required_result_prompt", Value::Null),
    ]);
    let run = drive(
        "questions",
        era,
        Transport::Stdio,
        &[
            "--sampling",
            SAMPLED_TEXT,
            "--roots",
            roots,
            "--answer",
            r#"{"name":"Zed","context":"test context"}"#,
        ],
        &steps,
    );
    run.assert_clean();
    run.assert_connected();
    let s = run.steps(&steps);

    let (text, result) = run.text_result(&s[0]);
    run.check_eq(
        &json!(text),
        &json!(format!("LLM response to \"What is 2+2?\": {SAMPLED_TEXT}")),
        "test_sampling text",
    );
    run.assert_era_result(result, false, "test_sampling");
    run.check_eq(
        &json!(kinds(&s[0])),
        &json!(["sampling"]),
        "test_sampling asks one sample",
    );
    let sampled = &s[0].notes[0]["params"];
    run.check_eq(
        &sampled["messages"],
        &json!([{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}]),
        "the sampling request's messages",
    );
    run.check_eq(&sampled["maxTokens"], &json!(100), "the sampling request's maxTokens");

    let (text, _) = run.text_result(&s[1]);
    run.check_eq(
        &json!(text),
        &json!("Received 1 root(s): file:///test/root"),
        "list_roots text",
    );
    run.check_eq(&json!(kinds(&s[1])), &json!(["roots"]), "list_roots asks the roots");

    let (text, _) = run.text_result(&s[2]);
    run.check_eq(
        &json!(text),
        &json!(format!("Name: Zed; Greeting: {SAMPLED_TEXT}; Roots: 1")),
        "multiple_inputs text",
    );
    let mut asked = kinds(&s[2]);
    asked.sort_unstable();
    run.check_eq(
        &json!(asked),
        &json!(["elicitation", "roots", "sampling"]),
        "multiple_inputs asks a form, a sample and the roots",
    );
    if era.modern() {
        // One round: the client's callbacks see the inputRequests keys.
        let mut keys: Vec<&str> = s[2]
            .notes
            .iter()
            .map(|n| n["request_id"].as_str().unwrap_or_default())
            .collect();
        keys.sort_unstable();
        run.check_eq(
            &json!(keys),
            &json!(["client_roots", "greeting", "user_name"]),
            "multiple_inputs input request keys",
        );
    }

    let prompt = &run.ok(&s[3])["result"];
    run.check_eq(
        &prompt["messages"],
        &json!([{"role": "user", "content": {"type": "text", "text": "Use this context: test context"}}]),
        "the asking prompt's messages",
    );
    run.check_eq(&json!(kinds(&s[3])), &json!(["elicitation"]), "the prompt asks once");
    run.check_eq(
        &s[3].notes[0]["message"],
        &json!("What context should the prompt use?"),
        "the prompt's question",
    );
    run.assert_era_result(prompt, false, "the asking prompt");
}

#[test]
fn auto_resolvers_ask_samples_roots_and_a_prompt_asks() {
    questions_resolvers_ask(AUTO);
}

#[test]
fn legacy_resolvers_ask_samples_roots_and_a_prompt_asks() {
    questions_resolvers_ask(LEGACY);
}

/// A client that declares neither sampling nor roots gets -32021 naming the capability a
/// resolver needed, and the server goes on serving.
fn capabilities_of_questions(era: Era) {
    let steps = json!([
        call_with("test_sampling", json!({"prompt": "x"})),
        call("test_input_required_result_list_roots"),
        read(STATIC_TEXT),
    ]);
    let run = drive("no-callbacks", era, Transport::Stdio, &[], &steps);
    run.assert_clean();
    let s = run.steps(&steps);
    let e = run.err(&s[0], MISSING_CAPABILITY);
    run.check_eq(
        &e["data"],
        &json!({"requiredCapabilities": {"sampling": {}}}),
        "test_sampling without sampling",
    );
    let e = run.err(&s[1], MISSING_CAPABILITY);
    run.check_eq(
        &e["data"],
        &json!({"requiredCapabilities": {"roots": {}}}),
        "list_roots without roots",
    );
    run.assert_static_text(&s[2]);
}

#[test]
fn auto_questions_need_their_capabilities() {
    capabilities_of_questions(AUTO);
}

#[test]
fn legacy_questions_need_their_capabilities() {
    capabilities_of_questions(LEGACY);
}
