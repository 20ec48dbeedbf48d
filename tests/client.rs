//! The Rust client (`mcp_resolve::client`, feature `client`) against real servers over real
//! transports: the official Python SDK's Notes server (`tests/interop/py_notes_server.py`) on
//! both eras over stdio and Streamable HTTP, our own `notes` example on both, and a scripted
//! stdio peer for the client's own limits (rounds, time, cancellation).

#![cfg(all(unix, feature = "client"))]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

mod support;

#[path = "support/cut.rs"]
mod cut;

use mcp_resolve::client::{
    Answer, CallOptions, Client, ClientError, ElicitationRequest, EraChoice, Stderr, content_text,
};
use mcp_resolve::protocol::ProtocolVersion;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{HttpChild, MANIFEST_DIR, notes_bin, python};
use tokio::process::Command;

fn script(name: &str) -> PathBuf {
    PathBuf::from(MANIFEST_DIR).join("tests/interop").join(name)
}

fn py_notes() -> Command {
    let mut c = Command::new(python());
    c.arg(script("py_notes_server.py"));
    c
}

/// A handler that records each question and gives `answer`.
fn recording(
    answer: Answer,
) -> (
    Arc<Mutex<Vec<ElicitationRequest>>>,
    impl Fn(ElicitationRequest) -> std::future::Ready<Answer> + Send + Sync + 'static,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    (seen, move |q: ElicitationRequest| {
        log.lock().unwrap().push(q);
        std::future::ready(answer.clone())
    })
}

fn ok(yes: bool) -> Answer {
    let mut m = Map::new();
    m.insert("ok".into(), json!(yes));
    Answer::Accept(Some(m))
}

fn text(r: &mcp_resolve::tool::CallToolResult) -> String {
    content_text(&r.content)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_notes_server_over_stdio_on_each_era_and_auto() {
    for (era, version, keyed) in [
        (EraChoice::Stateless, ProtocolVersion::V2026_07_28, true),
        (EraChoice::Handshake, ProtocolVersion::V2025_11_25, false),
        (EraChoice::Auto, ProtocolVersion::V2026_07_28, true),
    ] {
        let (seen, handler) = recording(ok(true));
        let client = Client::builder()
            .era(era)
            .elicitation(handler)
            .stderr(Stderr::Capture)
            .stdio(py_notes())
            .await
            .unwrap_or_else(|e| panic!("{era:?}: {e}"));
        assert_eq!(client.protocol_version(), version, "{era:?}");
        assert_eq!(client.server_info().name, "Notes", "{era:?}");
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert!(names.contains(&"delete_folder") && names.contains(&"add"), "{names:?}");
        let r = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(text(&r), "5");
        assert!(seen.lock().unwrap().is_empty(), "add asks nothing");

        let r = client
            .call_tool("delete_folder", json!({"path": "/tmp/notes/drafts"}))
            .await
            .unwrap_or_else(|e| panic!("{era:?}: {e}\n{}", client.stderr()));
        assert_eq!(text(&r), "deleted /tmp/notes/drafts", "{era:?}");
        let questions = seen.lock().unwrap().clone();
        assert_eq!(questions.len(), 1, "{era:?}: {questions:?}");
        let q = &questions[0];
        assert_eq!(q.message, "/tmp/notes/drafts has 2 file(s). Delete anyway?");
        assert_eq!(q.server.name, "Notes", "the question names who asks");
        assert_eq!(q.key.is_some(), keyed, "{era:?}: {q:?}");
        assert_eq!(q.schema().unwrap()["properties"]["ok"]["type"], "boolean");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_cancel_and_no_to_the_python_server_on_each_era() {
    for era in [EraChoice::Stateless, EraChoice::Handshake] {
        for (answer, expected) in [
            (Answer::Decline, "declined: folder not deleted"),
            (Answer::Cancel, "cancelled: folder not deleted"),
            (ok(false), "kept the folder"),
        ] {
            let (_seen, handler) = recording(answer.clone());
            let client = Client::builder()
                .era(era)
                .elicitation(handler)
                .stdio(py_notes())
                .await
                .unwrap();
            let r = client
                .call_tool("delete_folder", json!({"path": "/tmp/notes/drafts"}))
                .await
                .unwrap();
            assert_eq!(text(&r), expected, "{era:?} {answer:?}");
            client.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_notes_server_over_http_on_each_era_and_auto() {
    let py = python().to_path_buf();
    let notes = script("py_notes_server.py");
    for json_response in [false, true] {
        let mut args: Vec<&std::ffi::OsStr> = vec![notes.as_os_str()];
        if json_response {
            args.push("--json-response".as_ref());
        }
        let mut server = HttpChild::start_with(&py, &args, "py-notes-http", &|_| Vec::new());
        for (era, version) in [
            (EraChoice::Stateless, ProtocolVersion::V2026_07_28),
            (EraChoice::Handshake, ProtocolVersion::V2025_11_25),
            (EraChoice::Auto, ProtocolVersion::V2026_07_28),
        ] {
            let (seen, handler) = recording(ok(true));
            let client = Client::builder()
                .era(era)
                .elicitation(handler)
                .http(&server.url())
                .await
                .unwrap_or_else(|e| panic!("{era:?} json={json_response}: {e}"));
            assert_eq!(client.protocol_version(), version);
            // Each run deletes the folder again: a fresh path per run would need a server
            // restart, so the second and later deletions find nothing to ask about.
            let r = client
                .call_tool("delete_folder", json!({"path": "/tmp/notes/drafts"}))
                .await
                .unwrap_or_else(|e| panic!("{era:?} json={json_response}: {e}"));
            assert!(text(&r).starts_with("deleted"), "{era:?}: {}", text(&r));
            let asked = seen.lock().unwrap().len();
            assert!(asked <= 1, "{era:?}: asked {asked} times");
            client.close().await;
        }
        assert!(server.exit_status().is_none(), "{}", server.stop());
        server.stop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_server_over_http_asks_on_each_era() {
    // A fresh server per era, so the non-empty folder is there to ask about.
    let py = python().to_path_buf();
    let notes = script("py_notes_server.py");
    for (era, keyed) in [(EraChoice::Stateless, true), (EraChoice::Handshake, false)] {
        let mut server = HttpChild::start_with(&py, &[notes.as_os_str()], "py-notes-http", &|_| Vec::new());
        let (seen, handler) = recording(ok(true));
        let client = Client::builder()
            .era(era)
            .elicitation(handler)
            .http(&server.url())
            .await
            .unwrap();
        let r = client
            .call_tool("delete_folder", json!({"path": "/tmp/notes/drafts"}))
            .await
            .unwrap_or_else(|e| panic!("{era:?}: {e}\n{}", server.stop()));
        assert_eq!(text(&r), "deleted /tmp/notes/drafts");
        let questions = seen.lock().unwrap().clone();
        assert_eq!(questions.len(), 1, "{era:?}");
        assert_eq!(questions[0].key.is_some(), keyed);
        client.close().await;
        server.stop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_notes_example_over_stdio_and_http_on_each_era() {
    for era in [EraChoice::Stateless, EraChoice::Handshake, EraChoice::Auto] {
        let (seen, handler) = recording(ok(true));
        let client = Client::builder()
            .era(era)
            .elicitation(handler)
            .stdio(Command::new(notes_bin()))
            .await
            .unwrap();
        assert_eq!(client.server_info().name, "notes");
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "delete_folder"));
        let prompts = client.list_all_prompts().await.unwrap();
        let resources = client.list_all_resources().await.unwrap();
        let templates = client.list_resource_templates(None).await.unwrap();
        assert!(
            !prompts.is_empty() || !resources.is_empty() || !templates.items.is_empty(),
            "the notes example lists a prompt or a resource"
        );
        let r = client
            .call_tool("delete_folder", json!({"path": "/tmp/notes/drafts"}))
            .await
            .unwrap();
        assert!(!r.is_error, "{era:?}: {}", text(&r));
        assert_eq!(seen.lock().unwrap().len(), 1, "{era:?}: {}", text(&r));
        client.close().await;
    }
    let mut server = HttpChild::start(notes_bin(), "notes-http", &|_| Vec::new());
    for era in [EraChoice::Stateless, EraChoice::Handshake] {
        let (seen, handler) = recording(Answer::Decline);
        let client = Client::builder()
            .era(era)
            .elicitation(handler)
            .http(&server.url())
            .await
            .unwrap();
        let r = client
            .call_tool("delete_folder", json!({"path": "/tmp/notes/drafts"}))
            .await
            .unwrap_or_else(|e| panic!("{era:?}: {e}"));
        assert_eq!(seen.lock().unwrap().len(), 1, "{era:?}: {}", text(&r));
        client.close().await;
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_handler_nothing_is_declared_and_the_server_says_so() {
    // The Python server cannot ask a client that declared no elicitation: a clear error.
    for era in [EraChoice::Stateless, EraChoice::Handshake] {
        let client = Client::builder().era(era).stdio(py_notes()).await.unwrap();
        let r = client
            .call_tool("delete_folder", json!({"path": "/tmp/notes/drafts"}))
            .await;
        match r {
            Err(ClientError::Rpc(e)) => assert!(e.code == -32021 || e.code == -32602 || e.code == -32600, "{e:?}"),
            Ok(r) => assert!(r.is_error, "{era:?}: {}", text(&r)),
            Err(e) => panic!("{era:?}: {e}"),
        }
        client.close().await;
    }
}

fn scripted(mode: &str) -> Command {
    let mut c = Command::new("python3");
    c.arg(script("py_scripted_server.py")).arg(mode);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_asks_forever_is_stopped_at_the_round_limit_with_fresh_ids_and_its_state_echoed() {
    let (seen, handler) = recording(ok(true));
    let client = Client::builder()
        .elicitation(handler)
        .stderr(Stderr::Capture)
        .stdio(scripted("asks-forever"))
        .await
        .unwrap();
    let e = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(e, ClientError::TooManyRounds(10)), "{e}");
    assert!(e.to_string().contains("more than 10 rounds"), "{e}");
    assert_eq!(seen.lock().unwrap().len(), 10, "one question per round answered");
    // The server logs each request it got on stderr, which the client reads on its own: the
    // last retry's line may still be on its way when the call has failed (a CI run saw 10).
    let mut sent: Vec<Value> = Vec::new();
    for _ in 0..100 {
        sent = client
            .stderr()
            .lines()
            .filter_map(|l| l.strip_prefix("got: "))
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|m: &Value| m["method"] == "tools/call")
            .collect();
        if sent.len() >= 11 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(sent.len(), 11, "the call and ten retries");
    let ids: std::collections::HashSet<String> = sent.iter().map(|m| m["id"].to_string()).collect();
    assert_eq!(ids.len(), 11, "every retry has a fresh id");
    assert!(sent[0]["params"].get("requestState").is_none());
    for (i, m) in sent.iter().enumerate().skip(1) {
        assert_eq!(
            m["params"]["requestState"],
            format!("s{i}"),
            "the state of the round before, as sent"
        );
        assert_eq!(
            m["params"]["inputResponses"]["again"],
            json!({"action": "accept", "content": {"ok": true}})
        );
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({"elicitation": {"form": {}, "url": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
    }
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_its_time_limit_is_an_error_and_is_cancelled_on_the_wire() {
    let client = Client::builder()
        .stderr(Stderr::Capture)
        .stdio(scripted("silent"))
        .await
        .unwrap();
    let e = client
        .call_tool_with(
            "t",
            json!({}),
            CallOptions::default().timeout(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Timeout(_)), "{e}");
    // The server is told; then it keeps serving.
    let mut cancelled = None;
    for _ in 0..50 {
        cancelled = client
            .stderr()
            .lines()
            .filter_map(|l| l.strip_prefix("got: "))
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|m| m["method"] == "notifications/cancelled");
        if cancelled.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancelled = cancelled.expect("notifications/cancelled sent");
    assert_eq!(
        cancelled["params"]["requestId"], 2,
        "the id of the call (1 was server/discover)"
    );
    let again = client.request("ping", json!({})).await.unwrap_err();
    assert!(matches!(again, ClientError::Rpc(ref e) if e.code == -32601), "{again}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_is_a_closed_error_naming_its_stderr() {
    let mut c = Command::new("sh");
    c.arg("-c").arg("echo 'cannot open the database' >&2; exit 3");
    let e = Client::builder().stderr(Stderr::Capture).stdio(c).await.unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, ClientError::Closed(_)), "{text}");
    assert!(text.contains("cannot open the database"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_result_type_is_invalid_and_is_not_retried() {
    // A client that does not follow tasks knows no `resultType: "task"`.
    let client = Client::builder()
        .tasks(false)
        .stderr(Stderr::Capture)
        .stdio(scripted("odd-result"))
        .await
        .unwrap();
    let e = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(e, ClientError::Protocol(_)), "{e}");
    assert!(e.to_string().contains("unknown resultType `task`"), "{e}");
    let calls = client.stderr().lines().filter(|l| l.contains("\"tools/call\"")).count();
    assert_eq!(calls, 1, "not sent again");
    client.close().await;
    // One that does refuses a task result without a flat `taskId`, and sends nothing more.
    let client = Client::builder()
        .stderr(Stderr::Capture)
        .stdio(scripted("odd-result"))
        .await
        .unwrap();
    let e = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(e.to_string().contains("a CreateTaskResult without a taskId"), "{e}");
    let calls = client.stderr().lines().filter(|l| l.contains("\"tools/")).count();
    assert_eq!(calls, 1, "not sent again, and no task polled");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_followed_to_a_bound_and_a_repeated_cursor_is_an_error() {
    let client = Client::builder().stdio(scripted("same-cursor")).await.unwrap();
    let e = client.list_all_tools().await.unwrap_err();
    assert!(e.to_string().contains("same cursor twice"), "{e}");
    client.close().await;
    let client = Client::builder().stdio(scripted("endless-pages")).await.unwrap();
    let e = client.list_all_tools().await.unwrap_err();
    assert!(e.to_string().contains("more than 1000 pages"), "{e}");
    // One page at a time still works.
    let page = client.list_tools(None).await.unwrap();
    assert_eq!(page.items.len(), 1);
    assert!(page.next_cursor.is_some());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_bound_is_skipped_and_the_connection_goes_on() {
    let client = Client::builder()
        .max_message_bytes(1 << 20)
        .stderr(Stderr::Null)
        .stdio(scripted("huge"))
        .await
        .unwrap();
    let e = client
        .call_tool_with("t", json!({}), CallOptions::default().timeout(Duration::from_secs(2)))
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Timeout(_)), "{e}");
    client.request("ping", json!({})).await.unwrap();
    client.close().await;
}

/// Answers every form of the conformance example's task tools: `confirm`, and a `name` when the
/// form asks for one (the message says which).
fn task_answers() -> (
    Arc<Mutex<Vec<ElicitationRequest>>>,
    impl Fn(ElicitationRequest) -> std::future::Ready<Answer> + Send + Sync + 'static,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    (seen, move |q: ElicitationRequest| {
        let mut m = Map::new();
        m.insert("confirm".into(), json!(true));
        if q.message.contains("name") {
            let who = if q.message.starts_with("First") { "Ada" } else { "Grace" };
            m.insert("name".into(), json!(who));
        }
        log.lock().unwrap().push(q);
        std::future::ready(Answer::Accept(Some(m)))
    })
}

/// Runs the conformance example's task tools through `client` (tools listed first, as a
/// 2025-11-25 client asks for a task only for a tool that supports one).
async fn follow_tasks(client: &Client, seen: &Mutex<Vec<ElicitationRequest>>, label: &str) {
    let tools = client.list_all_tools().await.unwrap();
    let support = |name: &str| tools.iter().find(|t| t.name == name).map(|t| t.execution.task_support);
    assert_eq!(
        support("confirm_delete"),
        Some(mcp_resolve::tool::TaskSupport::Optional),
        "{label}"
    );
    assert_eq!(
        support("greet"),
        Some(mcp_resolve::tool::TaskSupport::Forbidden),
        "{label}"
    );

    let r = client
        .call_tool("confirm_delete", json!({"filename": "a.txt"}))
        .await
        .unwrap_or_else(|e| panic!("{label}: confirm_delete: {e}"));
    assert_eq!(text(&r), "Deleted a.txt", "{label}");
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "{label}: one question, put to the handler once"
    );

    let r = client
        .call_tool("multi_input", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{label}: multi_input: {e}"));
    assert_eq!(text(&r), "got Ada and Grace", "{label}");
    assert_eq!(
        seen.lock().unwrap().len(),
        3,
        "{label}: two questions pending at once, each asked once"
    );

    let r = client.call_tool("failing_job", json!({})).await.unwrap();
    assert!(r.is_error, "{label}: a tool error completes the task with isError");
    assert_eq!(text(&r), "the job failed", "{label}");

    match client.call_tool("protocol_error_job", json!({})).await {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(e.code, -32603, "{label}");
            assert!(e.message.contains("protocol_error_job"), "{label}: {}", e.message);
        }
        other => panic!("{label}: a task that failed is the task's error, not {other:?}"),
    }

    let r = client
        .call_tool("slow_compute", json!({"seconds": 1, "label": "x"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "computed x after 1s", "{label}");
}

/// Calls that become tasks are followed to their end on both eras, over stdio and Streamable
/// HTTP: a task's questions reach the handler once each (two pending at once too), a tool error
/// completes the task with `is_error`, a task that failed is the call's error, and the result
/// is the task's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_that_become_tasks_are_followed_to_their_end_on_each_era_and_transport() {
    for era in [EraChoice::Stateless, EraChoice::Handshake] {
        let (seen, handler) = task_answers();
        let client = Client::builder()
            .era(era)
            .elicitation(handler)
            .stderr(Stderr::Null)
            .stdio(Command::new(support::conformance_bin()))
            .await
            .unwrap();
        follow_tasks(&client, &seen, &format!("stdio {era:?}")).await;
        client.close().await;
    }
    let mut server = HttpChild::start(support::conformance_bin(), "conformance-http", &|_| Vec::new());
    for era in [EraChoice::Stateless, EraChoice::Handshake] {
        let (seen, handler) = task_answers();
        let client = Client::builder()
            .era(era)
            .elicitation(handler)
            .http(&server.url())
            .await
            .unwrap();
        follow_tasks(&client, &seen, &format!("http {era:?}")).await;
        client.close().await;
    }
    server.stop();
}

/// A client that does not follow tasks declares no extension: an optional task tool answers in
/// its response, and a tool that runs only as a task is refused with -32021 naming the
/// extension.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_tasks_an_optional_task_tool_answers_at_once_and_a_required_one_is_refused() {
    let client = Client::builder()
        .era(EraChoice::Stateless)
        .tasks(false)
        .stderr(Stderr::Null)
        .stdio(Command::new(support::conformance_bin()))
        .await
        .unwrap();
    let r = client
        .call_tool("slow_compute", json!({"seconds": 0, "label": "now"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "computed now after 0s");
    match client.call_tool("failing_job", json!({})).await {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(e.code, -32021);
            assert_eq!(
                e.data.unwrap()["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
                json!({})
            );
        }
        other => panic!("a required task tool without the extension is -32021, not {other:?}"),
    }
    client.close().await;
}

/// Our client resumes a handshake-era call whose stream the network cut (after the question, or
/// as the answer goes up), on its own, with `Last-Event-ID`: one question, one result, no event
/// read twice (`tests/support/cut.rs` breaks the connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_call_cut_by_the_network_is_resumed_by_our_client() {
    for point in [cut::Cut::Question, cut::Cut::Answer] {
        let mut server = HttpChild::start(notes_bin(), "notes-cut", &|_| Vec::new());
        let proxy = cut::CutProxy::start(server.addr, point);
        let (seen, handler) = recording(ok(true));
        let client = Client::builder()
            .era(EraChoice::Handshake)
            .elicitation(handler)
            .http(&proxy.url())
            .await
            .unwrap();
        let r = client
            .call_tool("delete_folder", json!({"path": "/tmp/notes/drafts"}))
            .await
            .unwrap_or_else(|e| panic!("{point:?}: {e}\n{}", server.stop()));
        assert_eq!(text(&r), "deleted /tmp/notes/drafts", "{point:?}");
        assert!(proxy.cut_happened(), "{point:?}: the stream was cut");
        assert_eq!(seen.lock().unwrap().len(), 1, "{point:?}: asked once");
        let ids = proxy.ids();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{point:?}: no event read twice: {ids:?}");
        client.close().await;
        server.stop();
    }
}
