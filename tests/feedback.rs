//! The `feedback` example (seed 000's `collect_feedback`) driven by the official MCP Python SDK
//! client (`tests/interop/py_client.py`) on both eras, over its real stdio (started as a client
//! starts a local server) and over Streamable HTTP: the form the client is shown (a rating of 1
//! to 5, required, and an optional comment), an accepted answer reaching the result (and kept: a
//! second response is the topic's second), an accepted answer without a comment, a decline and a
//! cancel each with a result of its own, and a rating outside 1 to 5 refused by the server (an
//! error result naming the field) before the tool runs.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::{Era, HttpChild, PyCall, feedback_bin};

/// How long one driver run may take (a debug build, a Python start).
const WAIT: Duration = Duration::from_secs(60);

/// Where the client reaches the server: its stdio, or the HTTP endpoint of a running server.
#[derive(Clone, Copy)]
enum Transport<'a> {
    Stdio,
    Http(&'a HttpChild),
}

/// `calls` calls of `collect_feedback {"topic": "the demo"}`, every question answered with
/// `answer`; the driver run to its end.
fn run(era: Era, transport: Transport<'_>, answer: &Value, calls: usize) -> PyCall {
    let answer = match answer {
        Value::String(action) => action.clone(),
        content => content.to_string(),
    };
    let steps: Vec<Value> = (0..calls)
        .map(|_| json!({"op": "call", "tool": "collect_feedback", "args": {"topic": "the demo"}}))
        .collect();
    let steps = Value::from(steps).to_string();
    let bin = feedback_bin().to_string_lossy().into_owned();
    let mut args = vec![
        "--mode",
        era.mode(),
        "--answer",
        &answer,
        "--timeout",
        "50",
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
    let mut call = PyCall::spawn(&args, WAIT);
    let status = call.finish().unwrap_or_else(|e| panic!("{e}\n{}", call.transcript()));
    check(
        &call,
        status.success() && !call.named("done").is_empty(),
        "the driver ends cleanly",
    );
    let connected = call.named("connected");
    check(
        &call,
        connected
            .first()
            .is_some_and(|c| c["protocol_version"] == era.version()),
        format_args!("the era is {}", era.version()),
    );
    call
}

#[track_caller]
fn check(call: &PyCall, ok: bool, what: impl std::fmt::Display) {
    assert!(ok, "{what}\n{}", call.transcript());
}

/// The text of each call's result, in order.
fn results(call: &PyCall) -> Vec<String> {
    call.named("result")
        .iter()
        .map(|r| {
            check(call, r["result"]["isError"] != true, format_args!("not an error: {r}"));
            r["result"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect()
        })
        .collect()
}

/// The question every call asks: seed 000's form, as the client received it.
fn check_question(call: &PyCall, asked: usize) {
    let questions = call.named("elicitation");
    check(call, questions.len() == asked, format_args!("{asked} question(s)"));
    for q in questions {
        check(call, q["mode"] == "form", "a form");
        check(call, q["message"] == "How was the demo?", "the message");
        let schema = &q["requestedSchema"];
        check(
            call,
            schema["properties"]
                == json!({
                    "rating": {
                        "type": "integer",
                        "title": "Rating (1-5)",
                        "description": "1 (bad) to 5 (great).",
                        "minimum": 1,
                        "maximum": 5,
                    },
                    "comment": {
                        "type": "string",
                        "title": "Comment",
                        "description": "Anything you would like to add (optional).",
                    },
                }),
            format_args!("the form's fields: {schema}"),
        );
        check(
            call,
            schema["required"] == json!(["rating"]),
            format_args!("only the rating is required: {schema}"),
        );
    }
}

/// Every outcome on one era and transport.
fn every_outcome(era: Era, transport: Transport<'_>) {
    // Accepted: the rating and the comment reach the result; the second response is the second.
    let accepted = run(era, transport, &json!({"rating": 4, "comment": "great"}), 2);
    check_question(&accepted, 2);
    let summary = "Thank you! Recorded 4/5 for the demo, with your comment: \"great\".";
    check(
        &accepted,
        results(&accepted)
            == [
                format!("{summary} (response 1 about the demo)"),
                format!("{summary} (response 2 about the demo)"),
            ],
        "the accepted answers' results",
    );

    // The comment is optional.
    let rating_only = run(era, transport, &json!({"rating": 2}), 1);
    check_question(&rating_only, 1);
    let expected = match transport {
        // A server of its own per run: its first response.
        Transport::Stdio => "Thank you! Recorded 2/5 for the demo. (response 1 about the demo)",
        // The same server as the two above: its third.
        Transport::Http(_) => "Thank you! Recorded 2/5 for the demo. (response 3 about the demo)",
    };
    check(&rating_only, results(&rating_only) == [expected], "a rating alone");

    // Declined and cancelled: results of their own, nothing recorded.
    let declined = run(era, transport, &json!("decline"), 1);
    check_question(&declined, 1);
    check(
        &declined,
        results(&declined) == ["No feedback recorded for the demo: you declined. Nothing more will be asked about it."],
        "the declined call's result",
    );
    let cancelled = run(era, transport, &json!("cancel"), 1);
    check_question(&cancelled, 1);
    check(
        &cancelled,
        results(&cancelled)
            == ["No feedback recorded for the demo: the question was dismissed. Ask again later if you like."],
        "the cancelled call's result",
    );

    // Out of range: refused by the server, the tool never sees it (an error result, nothing
    // recorded).
    let out_of_range = run(era, transport, &json!({"rating": 6}), 1);
    let refused = out_of_range.named("result");
    check(
        &out_of_range,
        refused.len() == 1
            && refused[0]["result"]["isError"] == true
            && refused[0]["result"]["content"][0]["text"]
                == "resolver `feedback` received an answer that does not match its form: field `rating`: must be at most 5, got 6",
        "a rating of 6 is refused, naming the field and the bound",
    );
}

#[test]
fn over_stdio_on_2026_07_28() {
    every_outcome(Era::New, Transport::Stdio);
}

#[test]
fn over_stdio_on_2025_11_25() {
    every_outcome(Era::Old, Transport::Stdio);
}

#[test]
fn over_http_on_both_eras() {
    for era in [Era::New, Era::Old] {
        // A server of its own per era, so the responses it counts are this era's.
        let mut server = HttpChild::start(feedback_bin(), &format!("feedback {era:?}"), &|_| Vec::new());
        every_outcome(era, Transport::Http(&server));
        assert!(
            server.exit_status().is_none(),
            "the server still runs:\n{}",
            server.stop()
        );
    }
}
