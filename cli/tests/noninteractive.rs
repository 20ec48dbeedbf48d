//! `mcp-resolve` as a script runs it, with no terminal: against the official Python SDK's Notes
//! server (`tests/interop/py_notes_server.py`) on both eras and on auto, over stdio and HTTP;
//! against our own `notes` example; and against this crate's `questions` example. Questions are
//! answered with `--accept`, `--decline` and `--cancel`, and without them a question is a clear
//! error within seconds, never a hang.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{notes_bin, py_notes, python, questions_bin, run};

/// A call or a list: generous on a loaded machine, and far below a hang.
const LIMIT: Duration = Duration::from_secs(60);

const ACCEPT: &str = r#"{"ok":true}"#;

fn py_call(era: &str, answer: &[&str]) -> support::Run {
    let notes = py_notes();
    let mut args = vec!["call", "delete_folder", "path=/tmp/notes/drafts", "--era", era];
    args.extend_from_slice(answer);
    args.extend_from_slice(&["--", python(), &notes]);
    run(&args, LIMIT)
}

fn accepted_deletes(era: &str) {
    let r = py_call(era, &["--accept", ACCEPT]);
    r.expect_code(0);
    assert_eq!(r.stdout.trim(), "deleted /tmp/notes/drafts", "{r:#?}");
    assert!(
        r.stderr.contains("Delete anyway?") && r.stderr.contains("accepted (--accept)"),
        "the question and its answer are named on stderr: {r:#?}"
    );
}

#[test]
fn python_notes_accept_deletes_the_folder_on_the_legacy_era() {
    accepted_deletes("legacy");
}

#[test]
fn python_notes_accept_deletes_the_folder_on_the_modern_era() {
    accepted_deletes("modern");
}

#[test]
fn python_notes_accept_deletes_the_folder_on_auto() {
    accepted_deletes("auto");
}

#[test]
fn python_notes_decline_and_cancel_reach_the_tool_on_both_eras() {
    for era in ["legacy", "modern"] {
        let r = py_call(era, &["--decline"]);
        r.expect_code(0);
        assert_eq!(r.stdout.trim(), "declined: folder not deleted", "{era}: {r:#?}");
        let r = py_call(era, &["--cancel"]);
        r.expect_code(0);
        assert_eq!(r.stdout.trim(), "cancelled: folder not deleted", "{era}: {r:#?}");
    }
}

#[test]
fn python_notes_tools_are_listed_and_json_output_parses() {
    let notes = py_notes();
    let r = run(&["tools", "--", python(), &notes], LIMIT);
    r.expect_code(0);
    let names: Vec<&str> = r.stdout.lines().map(|l| l.split('(').next().unwrap_or("")).collect();
    assert!(names.contains(&"add") && names.contains(&"delete_folder"), "{r:#?}");
    assert!(r.stdout.contains("delete_folder(path*: string)"), "{r:#?}");

    let r = run(&["tools", "--json", "--era", "legacy", "--", python(), &notes], LIMIT);
    r.expect_code(0);
    let v: Value = serde_json::from_str(&r.stdout).expect("tools --json is JSON");
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"add") && tools.contains(&"delete_folder"), "{v}");

    let r = run(
        &[
            "call",
            "add",
            "a=2",
            "b=3",
            "--json",
            "--era",
            "modern",
            "--",
            python(),
            &notes,
        ],
        LIMIT,
    );
    r.expect_code(0);
    let v: Value = serde_json::from_str(&r.stdout).expect("call --json is JSON");
    assert_eq!(v["isError"], false, "{v}");
    assert_eq!(v["content"][0]["text"], "5", "{v}");

    let r = run(
        &[
            "call",
            "delete_folder",
            "--args",
            r#"{"path": "/tmp/notes/drafts"}"#,
            "--decline",
            "--json",
            "--",
            python(),
            &notes,
        ],
        LIMIT,
    );
    r.expect_code(0);
    let v: Value = serde_json::from_str(&r.stdout).expect("call --json is JSON");
    assert_eq!(v["content"][0]["text"], "declined: folder not deleted", "{v}");
}

#[test]
fn a_question_without_a_terminal_or_an_answer_flag_is_a_clear_error_at_once() {
    for era in ["legacy", "modern"] {
        let r = py_call(era, &[]);
        r.expect_code(1);
        assert!(r.stdout.is_empty(), "{era}: nothing on stdout: {r:#?}");
        for needed in ["no terminal", "--accept", "--decline", "--cancel", "Delete anyway?"] {
            assert!(r.stderr.contains(needed), "{era}: stderr names {needed:?}: {r:#?}");
        }
        assert!(r.took < Duration::from_secs(30), "{era}: took {:?}", r.took);
    }
}

#[test]
fn a_tool_error_goes_to_stderr_with_exit_code_1() {
    let notes = py_notes();
    let r = run(&["call", "add", "a=2", "b=x", "--", python(), &notes], LIMIT);
    r.expect_code(1);
    assert!(r.stdout.is_empty(), "{r:#?}");
    assert!(r.stderr.contains("the tool add failed"), "{r:#?}");
}

#[test]
fn usage_errors_exit_2_and_a_missing_server_exits_1() {
    let limit = Duration::from_secs(20);
    let r = run(&["tools"], limit);
    r.expect_code(2);
    assert!(r.stderr.contains("no server"), "{r:#?}");
    let r = run(&["tools", "--url", "http://127.0.0.1:9/mcp", "--", "x"], limit);
    r.expect_code(2);
    let r = run(&["call", "t", "novalue", "--", "x"], limit);
    r.expect_code(2);
    assert!(r.stderr.contains("is not KEY=VALUE"), "{r:#?}");
    let r = run(&["call", "t", "--accept", "[1]", "--", "x"], limit);
    r.expect_code(2);
    assert!(r.stderr.contains("--accept must be a JSON object"), "{r:#?}");
    let r = run(&["call", "t", "--accept", "{}", "--decline", "--", "x"], limit);
    r.expect_code(2);
    let r = run(&["call", "t", "--era", "future", "--", "x"], limit);
    r.expect_code(2);
    let r = run(&["tools", "--", "/nonexistent/mcp-server"], limit);
    r.expect_code(1);
    assert_eq!(r.stderr.lines().count(), 1, "one line: {r:#?}");
    assert!(r.stderr.starts_with("mcp-resolve: "), "{r:#?}");
}

fn our_notes(era: &str, answer: &[&str]) -> support::Run {
    let bin = notes_bin().to_string_lossy().into_owned();
    let mut args = vec!["call", "delete_folder", "path=/tmp/notes/drafts", "--era", era];
    args.extend_from_slice(answer);
    args.extend_from_slice(&["--", &bin]);
    run(&args, LIMIT)
}

#[test]
fn our_notes_example_answers_on_both_eras() {
    for era in ["legacy", "modern", "auto"] {
        let r = our_notes(era, &["--accept", ACCEPT]);
        r.expect_code(0);
        assert_eq!(r.stdout.trim(), "deleted /tmp/notes/drafts", "{era}: {r:#?}");
        let r = our_notes(era, &["--decline"]);
        r.expect_code(0);
        assert_eq!(r.stdout.trim(), "declined: folder not deleted", "{era}: {r:#?}");
    }
    let r = our_notes("auto", &[]);
    r.expect_code(1);
    assert!(r.stderr.contains("no terminal"), "{r:#?}");
    // A prompt and a resource that ask, and the lists.
    let bin = notes_bin().to_string_lossy().into_owned();
    let r = run(
        &[
            "get",
            "summarize_folder",
            "path=/tmp/notes/ideas",
            "--accept",
            r#"{"length":"short"}"#,
            "--",
            &bin,
        ],
        LIMIT,
    );
    r.expect_code(0);
    assert!(
        r.stdout.contains("[user]") && r.stdout.contains("Summarize the notes in /tmp/notes/ideas"),
        "{r:#?}"
    );
    let r = run(&["read", "notes://folder/ideas", "--accept", ACCEPT, "--", &bin], LIMIT);
    r.expect_code(0);
    assert!(r.stdout.contains("garden.md"), "{r:#?}");
    let r = run(&["prompts", "--", &bin], LIMIT);
    r.expect_code(0);
    assert!(r.stdout.contains("summarize_folder(path*, length)"), "{r:#?}");
    let r = run(&["resources", "--", &bin], LIMIT);
    r.expect_code(0);
    assert!(r.stdout.contains("notes://folder/{name}"), "{r:#?}");
}

#[test]
fn questions_example_forms_logs_and_url_consent() {
    let q = questions_bin().to_string_lossy().into_owned();
    let r = run(
        &[
            "call",
            "order",
            "item=pizza",
            "--accept",
            r#"{"count":2,"toppings":["cheese"]}"#,
            "--",
            &q,
        ],
        LIMIT,
    );
    r.expect_code(0);
    // The size and gift wrap come from the schema's defaults (SEP-1034).
    assert_eq!(r.stdout.trim(), "ordered 2 medium pizza with cheese", "{r:#?}");
    let r = run(&["call", "count_to", "n=3", "--", &q], LIMIT);
    r.expect_code(0);
    assert_eq!(r.stdout.trim(), "counted to 3", "{r:#?}");
    assert!(r.stderr.contains("[info] reached 3"), "log messages on stderr: {r:#?}");
    let r = run(&["call", "count_to", "n=3", "--log-level", "off", "--", &q], LIMIT);
    assert!(!r.stderr.contains("reached"), "{r:#?}");
    let r = run(&["call", "sign_in", "--decline", "--", &q], LIMIT);
    r.expect_code(0);
    assert_eq!(r.stdout.trim(), "declined: not signed in", "{r:#?}");
    // Consent prints the page (no browser is opened by a script); nothing completes it here.
    let r = run(
        &["call", "sign_in", "--accept", "{}", "--timeout", "5", "--", &q],
        LIMIT,
    );
    r.expect_code(1);
    assert!(
        r.stderr
            .contains("open this page to go on: https://shop.example/sign-in?flow="),
        "{r:#?}"
    );
}

/// The Python Notes server on HTTP, killed when dropped.
struct HttpServer(Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn python_notes_over_http_with_headers() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let _server = HttpServer(
        Command::new(python())
            .arg(py_notes())
            .args(["--http", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let until = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "the Python server never listened on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let call = |era: &str, answer: &[&str]| {
        let mut args = vec![
            "call",
            "delete_folder",
            "path=/tmp/notes/drafts",
            "--era",
            era,
            "--url",
            &url,
            "--header",
            "X-Test: 1",
            "--bearer",
            "not-checked",
        ];
        args.extend_from_slice(answer);
        run(&args, LIMIT)
    };
    // The server keeps its folders between calls: declines first, then the deletion.
    for era in ["legacy", "modern"] {
        let r = call(era, &["--decline"]);
        r.expect_code(0);
        assert_eq!(r.stdout.trim(), "declined: folder not deleted", "{era}: {r:#?}");
    }
    let r = call("auto", &["--accept", ACCEPT]);
    r.expect_code(0);
    assert_eq!(r.stdout.trim(), "deleted /tmp/notes/drafts", "{r:#?}");
    assert!(r.stderr.contains("accepted (--accept)"), "{r:#?}");
    let r = run(&["tools", "--url", &url, "--header", "no colon"], LIMIT);
    r.expect_code(2);
}
