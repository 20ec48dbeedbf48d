//! The `triage` example (examples/triage/) driven by the official MCP Python SDK client
//! (`tests/interop/py_client.py`) on both eras: over its real stdio, started as a client starts a
//! local server, with the sign-in page on a loopback port of its own choosing; and over
//! Streamable HTTP with the page beside `/mcp`. The test plays the user's browser: when the
//! client reports the URL-mode question, it opens the page and signs in over real HTTP while the
//! call waits.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::{Era, HttpChild, PyCall, http, triage_bin};

/// How long one event may take to come (a debug build, a Python start, a page to wait for).
const WAIT: Duration = Duration::from_secs(60);

/// Where the client reaches the server: its stdio, or the HTTP endpoint of `server`.
enum Transport<'a> {
    Stdio,
    Http(&'a HttpChild),
}

fn start(era: Era, transport: &Transport<'_>, answers: &Value, steps: &Value) -> PyCall {
    let (answers, steps) = (answers.to_string(), steps.to_string());
    let bin = triage_bin().to_string_lossy().into_owned();
    let mut args = vec![
        "--mode",
        era.mode(),
        "--answers",
        &answers,
        "--timeout",
        "90",
        "--steps",
        &steps,
    ];
    let url;
    match transport {
        Transport::Stdio => args.extend(["--", &bin]),
        Transport::Http(server) => {
            url = server.url();
            args.extend(["--url", &url]);
        }
    }
    PyCall::spawn(&args, WAIT)
}

fn call(query: &str) -> Value {
    json!({"op": "call", "tool": "close_issues", "args": {"repo": "acme/app", "query": query}})
}

#[track_caller]
fn check(run: &PyCall, ok: bool, what: impl std::fmt::Display) {
    assert!(ok, "{what}\n{}", run.transcript());
}

/// The user's browser: opens the sign-in URL and signs in as `account`, posting from the page.
fn sign_in(run: &PyCall, url: &str, account: &str) {
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("not loopback: {url}"));
    let (port, target) = rest.split_at(rest.find('/').unwrap());
    let port: u16 = port.parse().unwrap();
    let (status, page) = http(port, "GET", target, &[], "");
    check(run, status == 200, format_args!("GET {url}: {status} {page}"));
    check(
        run,
        page.contains("Sign in to the issue tracker"),
        format_args!("the page: {page}"),
    );
    let flow = target.rsplit("flow=").next().unwrap();
    let origin = format!("http://127.0.0.1:{port}");
    let form = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", origin.as_str()),
    ];
    let body = format!("flow={flow}&account={account}&decision=sign-in");
    let (status, done) = http(port, "POST", "/sign-in", &form, &body);
    check(run, status == 200, format_args!("POST /sign-in: {status} {done}"));
}

fn text(result: &Value) -> String {
    result["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

/// Four of five crashes picked, the sign-in on the page, a comment, the confirmation naming them;
/// then a second call, with one match and the session kept, asks only the confirmation; then the
/// resource shows what is left open, and an unknown repository is "not found".
fn the_whole_story(era: Era, transport: &Transport<'_>) {
    let answers = json!({
        "issues": {"issues": ["101", "102", "104", "105"]},
        "comment": {"comment": "fixed in 2.1"},
        "ok": {"ok": true},
    });
    let steps = json!([
        call("crash"),
        call("dark"),
        {"op": "read_resource", "uri": "issues://acme/app/open"},
        {"op": "read_resource", "uri": "issues://acme/nope/open"},
        {"op": "get_prompt", "name": "triage", "args": {"repo": "acme/app"}},
    ]);
    let mut run = start(era, transport, &answers, &steps);
    let connected = run
        .wait_for("connected", WAIT)
        .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(&run, connected["protocol_version"] == era.version(), "the era");

    // The pick first, then the sign-in page: the user signs in while the call waits.
    let pick = run
        .wait_for_nth("elicitation", 0, WAIT)
        .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(
        &run,
        pick["message"] == "5 open issues of acme/app match \"crash\". Which should be closed?",
        "the pick's message",
    );
    let options = &pick["requestedSchema"]["properties"]["issues"]["items"]["anyOf"];
    check(
        &run,
        options.as_array().map(Vec::len) == Some(5)
            && options[0] == json!({"const": "101", "title": "#101 crash on start"}),
        format_args!("the options: {options}"),
    );
    let url = run
        .wait_until("URL-mode question", WAIT, |events| {
            events
                .iter()
                .find(|e| e["event"] == "elicitation" && e["mode"] == "url")
                .cloned()
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    let url = url["url"].as_str().unwrap().to_owned();
    sign_in(&run, &url, "alice");
    let status = run.finish().unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(
        &run,
        status.success() && !run.named("done").is_empty(),
        "the driver ends cleanly",
    );

    // What was asked, in order (on 2026-07-28 the sign-in and the comment share a round, in key
    // order; the page's question may be asked again while the page is not done yet).
    let mut messages: Vec<&str> = run
        .named("elicitation")
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    messages.dedup();
    let (sign_in_q, comment_q) = (
        "Sign in to the issue tracker to close issues: open the page",
        "Closing 4 issues: leave a comment saying why",
    );
    let middle = match era {
        Era::New => [comment_q, sign_in_q],
        Era::Old => [sign_in_q, comment_q],
    };
    let expected = [
        "5 open issues of acme/app match \"crash\". Which should be closed?",
        middle[0],
        middle[1],
        "Close #101, #102, #104, #105 in acme/app as alice with the comment \"fixed in 2.1\"?",
        "Close #103 in acme/app as alice?",
    ];
    check(&run, messages == expected, format_args!("questions: {messages:#?}"));

    let results = run.named("result");
    check(&run, results.len() == 2, "two call results");
    check(
        &run,
        text(results[0]) == "Closed #101, #102, #104, #105 in acme/app as alice.",
        "the first call's result",
    );
    check(
        &run,
        text(results[1]) == "Closed #103 in acme/app as alice.",
        "the second call's result",
    );
    let resource = run.named("resource");
    let open: Value = serde_json::from_str(resource[0]["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    let ids: Vec<&Value> = open.as_array().unwrap().iter().map(|i| &i["id"]).collect();
    check(&run, ids == [106], format_args!("left open: {open}"));
    let errors = run.named("error");
    let not_found = match era {
        Era::New => -32602,
        Era::Old => -32002,
    };
    check(
        &run,
        errors.len() == 1 && errors[0]["code"] == not_found && errors[0]["data"]["uri"] == "issues://acme/nope/open",
        "an unknown repository is not found",
    );
    let prompt = run.named("prompt");
    check(
        &run,
        prompt[0]["result"]["messages"][0]["content"]["text"]
            == "These are the open issues of acme/app:\n- #106 crash in settings\nFind the duplicates and the ones already fixed, and close them with `close_issues`.",
        "the prompt",
    );
}

/// A declined pick: nothing more is asked, nothing closed.
fn a_declined_pick(era: Era, transport: &Transport<'_>) {
    let mut run = start(era, transport, &json!({"issues": "decline"}), &json!([call("crash")]));
    let status = run.finish().unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(&run, status.success(), "the driver ends cleanly");
    check(&run, run.named("elicitation").len() == 1, "one question");
    let results = run.named("result");
    check(
        &run,
        results.len() == 1 && text(results[0]) == "Nothing closed: you chose no issues.",
        "the result",
    );
}

#[test]
fn over_stdio_on_2026_07_28() {
    the_whole_story(Era::New, &Transport::Stdio);
    a_declined_pick(Era::New, &Transport::Stdio);
}

#[test]
fn over_stdio_on_2025_11_25() {
    the_whole_story(Era::Old, &Transport::Stdio);
    a_declined_pick(Era::Old, &Transport::Stdio);
}

#[test]
fn over_http_on_both_eras() {
    for era in [Era::New, Era::Old] {
        // A server of its own per era: the sign-in is kept by the server.
        let server = HttpChild::start(triage_bin(), &format!("triage {era:?}"), &|_| Vec::new());
        the_whole_story(era, &Transport::Http(&server));
    }
}
