//! The examples' tools, driven through the in-memory client on both eras: the exact outputs of
//! the tutorials they come from.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../examples/booking.rs"]
mod booking;
#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;
#[allow(dead_code)]
#[path = "../examples/connect.rs"]
mod connect;
#[allow(dead_code)]
#[path = "../examples/deploy.rs"]
mod deploy;
#[allow(dead_code)]
#[path = "../examples/notes.rs"]
mod notes;
#[allow(dead_code)]
#[path = "../examples/watch.rs"]
mod watch;

use mcp_resolve::testing::TestClient;
use mcp_resolve::{Server, protocol::ProtocolVersion};
use serde_json::{Value, json};
use std::sync::Arc;

fn text(frame: &Value) -> String {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
        .to_string()
}

/// One call on 2026-07-28, answering any question with `answer`; returns (questions, result).
async fn stateless_call(server: impl Into<Arc<Server>>, tool: &str, args: Value, answer: Value) -> (Vec<Value>, Value) {
    stateless_request(server, "tools/call", json!({"name": tool, "arguments": args}), answer).await
}

/// One request of `method` (`tools/call`, `prompts/get`, `resources/read`) on 2026-07-28,
/// retried with `answer` to every question until it completes; returns (questions, result).
async fn stateless_request(
    server: impl Into<Arc<Server>>,
    method: &str,
    params: Value,
    answer: Value,
) -> (Vec<Value>, Value) {
    let mut c = TestClient::stateless(server, json!({"elicitation": {"form": {}, "url": {}}}));
    let mut r = c.request(method, params.clone()).await;
    let mut questions = Vec::new();
    while r["result"]["resultType"] == "input_required" {
        let requests = r["result"]["inputRequests"].as_object().unwrap().clone();
        let mut responses = serde_json::Map::new();
        for (k, q) in requests {
            questions.push(q["params"].clone());
            responses.insert(k, answer.clone());
        }
        let mut retry = params.clone();
        retry["inputResponses"] = Value::Object(responses);
        retry["requestState"] = r["result"]["requestState"].clone();
        r = c.request(method, retry).await;
    }
    (questions, r)
}

/// One call on 2025-11-25, answering every back-channel question with `answer`.
async fn handshake_call(server: impl Into<Arc<Server>>, tool: &str, args: Value, answer: Value) -> (Vec<Value>, Value) {
    handshake_request(server, "tools/call", json!({"name": tool, "arguments": args}), answer).await
}

/// One request of `method` on 2025-11-25, answering every back-channel question with `answer`.
async fn handshake_request(
    server: impl Into<Arc<Server>>,
    method: &str,
    params: Value,
    answer: Value,
) -> (Vec<Value>, Value) {
    let mut c = TestClient::handshake(server, ProtocolVersion::V2025_11_25, json!({"elicitation": {}})).await;
    let id = c.start(method, params).await;
    let mut questions = Vec::new();
    loop {
        let frame = c.recv().await;
        if frame["id"] == json!(id) && frame.get("method").is_none() {
            return (questions, frame);
        }
        assert_eq!(frame["method"], "elicitation/create", "{frame}");
        questions.push(frame["params"].clone());
        c.send(&json!({"jsonrpc": "2.0", "id": frame["id"], "result": answer}))
            .await;
    }
}

/// The notes prompt asks how long the summary should be (unless told), and the folder resource
/// asks before sharing file names; both on both eras.
#[tokio::test]
async fn notes_prompt_and_resource_ask_on_both_eras() {
    let server = || {
        Server::new("notes")
            .state(notes::Folders::sample())
            .prompt(notes::summarize_folder)
            .resource(notes::folder)
    };
    for legacy in [false, true] {
        let request = |method: &'static str, params: Value, answer: Value| async move {
            if legacy {
                handshake_request(server(), method, params, answer).await
            } else {
                stateless_request(server(), method, params, answer).await
            }
        };
        let detailed = json!({"action": "accept", "content": {"length": "detailed"}});
        let (q, r) = request(
            "prompts/get",
            json!({"name": "summarize_folder", "arguments": {"path": "/tmp/notes/ideas"}}),
            detailed,
        )
        .await;
        assert_eq!(q.len(), 1, "{q:?}");
        assert_eq!(q[0]["message"], "How long should the summary of /tmp/notes/ideas be?");
        assert_eq!(
            q[0]["requestedSchema"]["properties"]["length"]["enum"],
            json!(["short", "detailed"])
        );
        assert_eq!(
            r["result"]["messages"][0]["content"]["text"],
            "Summarize the notes in /tmp/notes/ideas (garden.md, trip.md) file by file."
        );
        // Told the length: nothing asked.
        let (q, r) = request(
            "prompts/get",
            json!({"name": "summarize_folder", "arguments": {"path": "/tmp/notes/empty", "length": "short"}}),
            json!({"action": "cancel"}),
        )
        .await;
        assert!(q.is_empty(), "{q:?}");
        assert_eq!(
            r["result"]["messages"][0]["content"]["text"],
            "Summarize the notes in /tmp/notes/empty (no files) in one sentence."
        );
        // The resource asks before sharing; a decline shares nothing.
        let yes = json!({"action": "accept", "content": {"ok": true}});
        let (q, r) = request("resources/read", json!({"uri": "notes://folder/ideas"}), yes).await;
        assert_eq!(
            q[0]["message"],
            "Share the names of the 2 file(s) in /tmp/notes/ideas with the assistant?"
        );
        assert_eq!(r["result"]["contents"][0]["text"], "garden.md\ntrip.md");
        let (_, r) = request(
            "resources/read",
            json!({"uri": "notes://folder/ideas"}),
            json!({"action": "decline"}),
        )
        .await;
        assert_eq!(
            r["error"]["message"],
            "the user did not agree to share the file names in /tmp/notes/ideas"
        );
        let (q, r) = request(
            "resources/read",
            json!({"uri": "notes://folder/nowhere"}),
            json!({"action": "decline"}),
        )
        .await;
        assert!(q.is_empty());
        // Resource not found: -32002 on the handshake era, -32602 on 2026-07-28.
        let not_found = if legacy { -32002 } else { -32602 };
        assert_eq!(r["error"]["code"], not_found, "{r}");
        assert_eq!(r["error"]["data"]["uri"], "notes://folder/nowhere");
    }
}

fn notes_server() -> Server {
    Server::new("notes")
        .state(notes::Folders::sample())
        .tool(notes::delete_folder)
        .tool(notes::add)
}

#[tokio::test]
async fn notes_gives_the_tutorial_outputs_on_both_eras() {
    let yes = json!({"action": "accept", "content": {"ok": true}});
    let no = json!({"action": "accept", "content": {"ok": false}});
    let decline = json!({"action": "decline"});
    let cancel = json!({"action": "cancel"});
    for handshake in [false, true] {
        let call = |answer: Value, path: &str| {
            let args = json!({ "path": path });
            async move {
                if handshake {
                    handshake_call(notes_server(), "delete_folder", args, answer).await
                } else {
                    stateless_call(notes_server(), "delete_folder", args, answer).await
                }
            }
        };
        let (q, r) = call(no.clone(), "/tmp/notes/drafts").await;
        assert_eq!(q.len(), 1, "{r}");
        assert_eq!(q[0]["message"], "/tmp/notes/drafts has 2 file(s). Delete anyway?");
        assert_eq!(
            q[0]["requestedSchema"]["properties"],
            json!({"ok": {"type": "boolean"}})
        );
        assert_eq!(q[0]["requestedSchema"]["required"], json!(["ok"]));
        assert_eq!(text(&r), "kept the folder");
        assert_eq!(
            text(&call(decline.clone(), "/tmp/notes/drafts").await.1),
            "declined: folder not deleted"
        );
        assert_eq!(
            text(&call(cancel.clone(), "/tmp/notes/drafts").await.1),
            "cancelled: folder not deleted"
        );
    }
    // Each server has its own folders: the two deletions share one server, so the second asks
    // nothing.
    let shared = Arc::new(notes_server());
    let (q, r) = stateless_call(
        shared.clone(),
        "delete_folder",
        json!({"path": "/tmp/notes/drafts"}),
        yes.clone(),
    )
    .await;
    assert_eq!(q.len(), 1);
    assert_eq!(text(&r), "deleted /tmp/notes/drafts");
    let (q, r) = handshake_call(
        shared.clone(),
        "delete_folder",
        json!({"path": "/tmp/notes/drafts"}),
        yes.clone(),
    )
    .await;
    assert!(q.is_empty(), "the folder is gone: {q:?}");
    assert_eq!(text(&r), "deleted /tmp/notes/drafts");
    let (q, r) = handshake_call(
        notes_server(),
        "delete_folder",
        json!({"path": "/tmp/notes/empty"}),
        yes,
    )
    .await;
    assert!(q.is_empty(), "an empty folder needs no question");
    assert_eq!(text(&r), "deleted /tmp/notes/empty");
}

#[tokio::test]
async fn booking_falls_back_to_an_argument_for_a_client_that_cannot_be_asked() {
    let server = || Server::new("booking").tool(booking::book_table);
    let christmas = json!({"date": "2024-12-25", "time": "19:00", "party_size": 2});
    let mut with_date = christmas.clone();
    with_date["alternative_date"] = json!("2024-12-27");
    for legacy in [false, true] {
        let mut c = if legacy {
            TestClient::handshake(server(), ProtocolVersion::V2025_11_25, json!({})).await
        } else {
            TestClient::stateless(server(), json!({}))
        };
        let r = c.call_tool("book_table", christmas.clone()).await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert!(
            text(&r).contains("this client cannot be asked for another date: call again with `alternative_date`"),
            "{r}"
        );
        let r = c.call_tool("book_table", with_date.clone()).await;
        assert_eq!(text(&r), "[SUCCESS] Booked a table for 2 on 2024-12-27 at 19:00");
    }
}

/// Issue 13, point 4: a tool body asks with `Context::elicit` on the handshake era; on
/// 2026-07-28 it gets the error naming the fix, and a client without forms gets -32021.
#[tokio::test]
async fn booking_now_asks_from_the_body_on_the_handshake_era_only() {
    let server = || Server::new("booking").tool(booking::book_table_now);
    let args = json!({"date": "2024-12-25", "time": "19:00", "party_size": 2});
    for (answer, expected) in [
        (
            json!({"action": "accept", "content": {"checkAlternative": true, "alternativeDate": "2024-12-28"}}),
            "[SUCCESS] Booked a table for 2 on 2024-12-28 at 19:00",
        ),
        (json!({"action": "decline"}), "[CANCELLED] Booking cancelled"),
    ] {
        let (q, r) = handshake_call(server(), "book_table_now", args.clone(), answer).await;
        assert_eq!(q[0]["message"], "No table for 2 on 2024-12-25. Try another date?");
        assert_eq!(text(&r), expected);
    }
    let mut c = TestClient::stateless(server(), json!({"elicitation": {}}));
    let r = c.call_tool("book_table_now", args.clone()).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text(&r).contains("ask from a #[resolver]"), "{r}");
    let mut c = TestClient::handshake(server(), ProtocolVersion::V2025_11_25, json!({})).await;
    let r = c.call_tool("book_table_now", args).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {"form": {}}}})
    );
}

#[tokio::test]
async fn booking_offers_another_date_on_christmas() {
    let args = json!({"date": "2024-12-25", "time": "19:00", "party_size": 2});
    let answer = json!({"action": "accept", "content": {"checkAlternative": true, "alternativeDate": "2025-12-27"}});
    let server = || Server::new("booking").tool(booking::book_table);
    for (q, r) in [
        stateless_call(server(), "book_table", args.clone(), answer.clone()).await,
        handshake_call(server(), "book_table", args.clone(), answer.clone()).await,
    ] {
        assert_eq!(q.len(), 1);
        let props = &q[0]["requestedSchema"]["properties"];
        assert_eq!(props["alternativeDate"]["default"], "2024-12-26");
        assert_eq!(props["alternativeDate"]["format"], "date");
        assert_eq!(props["checkAlternative"]["type"], "boolean");
        assert_eq!(text(&r), "[SUCCESS] Booked a table for 2 on 2025-12-27 at 19:00");
    }
    let (q, r) = stateless_call(
        server(),
        "book_table",
        json!({"date": "2024-12-24", "time": "19:00", "party_size": 2}),
        Value::Null,
    )
    .await;
    assert!(q.is_empty());
    assert_eq!(text(&r), "[SUCCESS] Booked a table for 2 on 2024-12-24 at 19:00");
    // A bad date in the answer is refused by the server, not trusted.
    let bad = json!({"action": "accept", "content": {"checkAlternative": true, "alternativeDate": "next week"}});
    let (_, r) = stateless_call(server(), "book_table", args, bad).await;
    assert_eq!(r["result"]["isError"], true);
    assert!(
        text(&r).contains("field `alternativeDate`: must be a valid date"),
        "{r}"
    );
}

#[tokio::test]
async fn deploy_asks_the_seed_form() {
    let answer = json!({"action": "accept", "content": {"environment": "prd", "notify": false, "window": "2026-09-01T10:00:00Z"}});
    let (q, r) = stateless_call(
        Server::new("deploy").tool(deploy::deploy),
        "deploy",
        json!({"service": "api"}),
        answer,
    )
    .await;
    assert_eq!(q.len(), 1);
    let schema = &q[0]["requestedSchema"];
    assert_eq!(
        schema["properties"]["environment"],
        json!({"type": "string", "title": "Environment", "default": "stg",
               "oneOf": [{"const": "stg", "title": "Staging"}, {"const": "prd", "title": "Production"}]})
    );
    assert_eq!(schema["required"], json!(["environment"]));
    assert_eq!(
        schema["properties"]["notify"],
        json!({"type": "boolean", "title": "Notify the on-call channel", "default": true})
    );
    assert_eq!(
        schema["properties"]["window"],
        json!({"type": "string", "title": "Deploy at", "format": "date-time"})
    );
    assert_eq!(text(&r), "deploying api to production at 2026-09-01T10:00:00Z");
    // Defaults fill what the client left out, but the environment must be answered.
    let (_, r) = stateless_call(
        Server::new("deploy").tool(deploy::deploy),
        "deploy",
        json!({"service": "api"}),
        json!({"action": "accept", "content": {"environment": "stg"}}),
    )
    .await;
    assert_eq!(
        text(&r),
        "deploying api to staging at now, notifying the on-call channel"
    );
    let (_, r) = stateless_call(
        Server::new("deploy").tool(deploy::deploy),
        "deploy",
        json!({"service": "api"}),
        json!({"action": "accept", "content": {}}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "resolver `confirm_deployment` received an answer that does not match its form: field `environment`: is required"
    );
}

/// The conformance fixtures whose checks are weak or whose rounds the runner drives by hand
/// (`docs/CONFORMANCE.md` §4.8, §5.3): the multi-round tool asks a second, differently sealed
/// question after an empty first answer, and a tampered state is an error.
#[tokio::test]
async fn conformance_multi_round_and_tampered_state() {
    let mut c = TestClient::stateless(conformance::server(), json!({"elicitation": {}}));
    let tool = "test_input_required_result_multi_round";
    let r1 = c.call_tool(tool, json!({})).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    assert_eq!(
        r1["result"]["inputRequests"]["step1"]["params"]["message"],
        "Step 1: What is your name?"
    );
    let s1 = r1["result"]["requestState"].clone();
    let r2 = c
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {}, "requestState": s1,
                   "inputResponses": {"step1": {"action": "accept", "content": {}}}}),
        )
        .await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    let step2 = &r2["result"]["inputRequests"]["step2"]["params"];
    assert_eq!(step2["message"], "Step 2: What is your favorite color?");
    let s2 = r2["result"]["requestState"].clone();
    assert_ne!(s1, s2, "each round has its own state");
    let r3 = c
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {}, "requestState": s2,
                   "inputResponses": {"step2": {"action": "accept", "content": {"color": "blue"}}}}),
        )
        .await;
    assert_eq!(text(&r3), "Hello stranger, your favorite color is blue.");

    let tool = "test_input_required_result_tampered_state";
    let r1 = c.call_tool(tool, json!({})).await;
    let state = format!("{}-TAMPERED", r1["result"]["requestState"].as_str().unwrap());
    let r2 = c
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {}, "requestState": state,
                   "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}}),
        )
        .await;
    assert_eq!(r2["error"]["code"], -32602, "{r2}");
    assert_eq!(r2["error"]["data"]["reason"], "invalid_request_state", "{r2}");
}

/// The 2025 elicitation fixtures ask the schemas the runner checks field by field, and a client
/// without sampling gets -32021 from `test_missing_capability` on 2026.
#[tokio::test]
async fn conformance_elicitation_schemas_and_missing_capability() {
    let answer = json!({"action": "accept", "content": {"name": "Jane Smith", "age": 25, "score": 88,
                        "status": "inactive", "verified": false}});
    let (q, r) = handshake_call(
        conformance::server(),
        "test_elicitation_sep1034_defaults",
        json!({}),
        answer,
    )
    .await;
    assert_eq!(q.len(), 1);
    let props = &q[0]["requestedSchema"]["properties"];
    assert_eq!(props["age"]["type"], "integer");
    assert_eq!(props["score"]["default"], 95.5);
    assert_eq!(props["status"]["enum"], json!(["active", "inactive", "pending"]));
    assert_eq!(props["status"]["default"], "active");
    assert!(text(&r).contains("Jane Smith"), "{r}");

    let answer = json!({"action": "accept", "content": {"untitledSingle": "option1", "titledSingle": "value1",
        "legacyEnum": "opt1", "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]}});
    let (q, r) = handshake_call(
        conformance::server(),
        "test_elicitation_sep1330_enums",
        json!({}),
        answer,
    )
    .await;
    let props = &q[0]["requestedSchema"]["properties"];
    assert_eq!(
        props["legacyEnum"]["enumNames"],
        json!(["Option One", "Option Two", "Option Three"])
    );
    assert_eq!(
        props["titledMulti"]["items"]["anyOf"][0],
        json!({"const": "value1", "title": "First Choice"})
    );
    assert_eq!(r["result"]["isError"], false, "{r}");

    let mut c = TestClient::stateless(conformance::server(), json!({}));
    let r = c.call_tool("test_missing_capability", json!({})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(r["error"]["data"]["requiredCapabilities"], json!({"sampling": {}}));
}

#[tokio::test]
async fn watch_tells_the_subscribers_of_todays_note_when_it_changes() {
    let server = std::sync::Arc::new(watch::server());
    let mut watcher = TestClient::handshake(server.clone(), ProtocolVersion::V2025_11_25, json!({})).await;
    let mut writer = TestClient::stateless(server, json!({}));
    let r = watcher
        .request("resources/subscribe", json!({"uri": "notes://today"}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    let r = writer.call_tool("write_today", json!({"text": "buy milk"})).await;
    assert_eq!(text(&r), "saved; 1 subscriber(s) told");
    assert_eq!(
        watcher.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "notes://today"}})
    );
    let r = watcher.request("resources/read", json!({"uri": "notes://today"})).await;
    assert_eq!(r["result"]["contents"][0]["text"], "buy milk", "{r}");
}

// ---- connect: the consent pages, in process (tests/browser.rs drives them in a real browser) ----

/// A request to one of `connect`'s pages.
fn page_request(
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> mcp_resolve::http::Request<mcp_resolve::Bytes> {
    let mut req = mcp_resolve::http::Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    req.body(mcp_resolve::Bytes::from(body.to_owned())).unwrap()
}

/// A page's status, its text, and the response.
fn page_of(
    resp: mcp_resolve::http::Response<mcp_resolve::Bytes>,
) -> (u16, String, mcp_resolve::http::Response<mcp_resolve::Bytes>) {
    (
        resp.status().as_u16(),
        String::from_utf8(resp.body().to_vec()).unwrap(),
        resp,
    )
}

/// `connect_account {service: github}` on 2026-07-28: its question's page URL and the state.
async fn connect_asked(c: &mut TestClient) -> (String, Value) {
    let r = c.call_tool("connect_account", json!({"service": "github"})).await;
    let url = r["result"]["inputRequests"]["connect"]["params"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("no URL-mode question: {r}"))
        .to_owned();
    (url, r["result"]["requestState"].clone())
}

/// Its retry with the user's consent (`accept`).
async fn connect_accepted(c: &mut TestClient, state: Value) -> Value {
    c.request(
        "tools/call",
        json!({"name": "connect_account", "arguments": {"service": "github"},
               "inputResponses": {"connect": {"action": "accept"}}, "requestState": state}),
    )
    .await
}

const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

/// Without sign-in (no token variables) the flow is bound to no one: the page shows the question
/// and its form, records Approve once, and the call finishes "connected github as anonymous";
/// every malformed request is refused with its status; a page URL edited to another service does
/// not connect the one asked for; and HTML is escaped.
#[tokio::test]
async fn connect_pages_record_the_consent_once_and_refuse_malformed_requests() {
    let server = std::sync::Arc::new(
        Server::new("connect")
            .url_wait(std::time::Duration::from_millis(20))
            // No tokens in process: the pages are tried without a sign-in.
            .anonymous_url_flows()
            .state(our_base())
            .tool(connect::connect_account),
    );
    let pages = connect::Pages::new(server.url_flows(), None, our_base(), connect::TokenVault::default());
    let mut c = TestClient::stateless(server.clone(), json!({"elicitation": {"url": {}}}));

    let bad = c.call_tool("connect_account", json!({"service": "Git Hub"})).await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(text(&bad).contains("lowercase letters, digits or dashes"), "{bad}");

    let (url, state) = connect_asked(&mut c).await;
    let path = url.strip_prefix("http://127.0.0.1:9").unwrap().to_owned();
    assert!(path.starts_with("/connect?service=github&flow="), "{url}");
    let flow = path.rsplit("flow=").next().unwrap().to_owned();

    for (uri, status) in [
        ("/connect?service=github".to_string(), 400),
        (format!("/connect?service=github&flow=%zz{flow}"), 400),
        (format!("/connect?service=%3Cb%3E&flow={flow}"), 400),
        (format!("/connect?service=github&flow={flow}&flow={flow}"), 400),
        ("/connect?service=github&flow=AAAAAAAAAAAAAAAAAAAAAA".to_string(), 404),
    ] {
        let (got, body, _) = page_of(pages.connect(page_request("GET", &uri, &[], "")).await);
        assert_eq!(got, status, "{uri}: {body}");
        assert!(!body.contains("<form"), "{uri}: {body}");
    }
    let (status, body, resp) = page_of(pages.connect(page_request("GET", &path, &[], "")).await);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("Connect your github account: open the page and approve"),
        "{body}"
    );
    assert!(body.contains(&format!("name=\"flow\" value=\"{flow}\"")), "{body}");
    assert!(
        body.contains("value=\"approve\"") && body.contains("value=\"deny\""),
        "{body}"
    );
    assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
    assert!(
        resp.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("form-action 'self'")
    );

    let post = |body: String, headers: &'static [(&'static str, &'static str)]| {
        let pages = pages.clone();
        async move { page_of(pages.connect(page_request("POST", "/connect", headers, &body)).await) }
    };
    let approve = format!("flow={flow}&service=github&decision=approve");
    for (body, headers, status) in [
        (approve.clone(), &[OURS][..], 415),
        (approve.clone(), &[OURS, ("content-type", "text/plain")][..], 415),
        (
            format!("flow={flow}&service=github&decision=maybe"),
            &[OURS, FORM][..],
            400,
        ),
        (format!("flow={flow}&decision=approve"), &[OURS, FORM][..], 400),
        (
            "flow=AAAAAAAAAAAAAAAAAAAAAA&service=github&decision=approve".to_string(),
            &[OURS, FORM][..],
            404,
        ),
    ] {
        let (got, page, _) = post(body.clone(), headers).await;
        assert_eq!(got, status, "{body}: {page}");
    }
    let (status, page, _) = post(approve.clone(), &[OURS, FORM]).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Your github account is connected"), "{page}");
    // Once: the page and the form refuse the finished flow.
    let (status, page, _) = post(format!("flow={flow}&service=github&decision=deny"), &[OURS, FORM]).await;
    assert_eq!(status, 409, "{page}");
    let (status, _, _) = page_of(pages.connect(page_request("GET", &path, &[], "")).await);
    assert_eq!(status, 409);

    let done = connect_accepted(&mut c, state).await;
    assert_eq!(text(&done), "connected github as anonymous", "{done}");

    // A form edited to approve another service does not connect the one asked for.
    let (url, state) = connect_asked(&mut c).await;
    let flow = url.rsplit("flow=").next().unwrap().to_owned();
    let (status, _, _) = post(format!("flow={flow}&service=gitlab&decision=approve"), &[OURS, FORM]).await;
    assert_eq!(status, 200);
    let done = connect_accepted(&mut c, state).await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(text(&done), "the page connected gitlab, not github: nothing connected");

    // No sign-in to offer, and only GET / POST.
    let (status, _, _) = page_of(pages.login(page_request("GET", "/login?token=x", &[], "")).await);
    assert_eq!(status, 404);
    let (status, _, resp) = page_of(pages.connect(page_request("PUT", &path, &[], "")).await);
    assert_eq!(status, 405);
    assert_eq!(resp.headers()["allow"], "GET, POST");

    assert_eq!(
        connect::escape(r#"<a href="x">'&"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
    );
}

/// A decision posted from anywhere but the page's own origin (no `Origin`, another port of this
/// host, another site, an opaque origin) is refused with 403 and records nothing: the flow stays
/// open, and the page's own post then completes it.
#[tokio::test]
async fn connect_refuses_a_decision_posted_from_another_origin() {
    let server = std::sync::Arc::new(
        Server::new("connect")
            .url_wait(std::time::Duration::from_millis(20))
            // No tokens in process: the pages are tried without a sign-in.
            .anonymous_url_flows()
            .state(our_base())
            .tool(connect::connect_account),
    );
    let pages = connect::Pages::new(server.url_flows(), None, our_base(), connect::TokenVault::default());
    let mut c = TestClient::stateless(server.clone(), json!({"elicitation": {"url": {}}}));
    let (url, state) = connect_asked(&mut c).await;
    let path = url.strip_prefix("http://127.0.0.1:9").unwrap().to_owned();
    let flow = path.rsplit("flow=").next().unwrap().to_owned();
    let approve = format!("flow={flow}&service=github&decision=approve");
    for origin in [
        None,
        Some("http://127.0.0.1:8080"),
        Some("http://localhost:9"),
        Some("https://evil.example"),
        Some("null"),
    ] {
        let mut headers = vec![FORM];
        headers.extend(origin.map(|o| ("origin", o)));
        let (status, page, _) = page_of(
            pages
                .connect(page_request("POST", "/connect", &headers, &approve))
                .await,
        );
        assert_eq!(status, 403, "{origin:?}: {page}");
        assert!(page.contains("Not from this site"), "{page}");
    }
    let (status, page, _) = page_of(pages.connect(page_request("GET", &path, &[], "")).await);
    assert_eq!(status, 200, "the flow is still open: {page}");
    let (status, page, _) = page_of(
        pages
            .connect(page_request("POST", "/connect", &[OURS, FORM], &approve))
            .await,
    );
    assert_eq!(status, 200, "{page}");
    let done = connect_accepted(&mut c, state).await;
    assert_eq!(text(&done), "connected github as anonymous", "{done}");
}

/// The stand-in access token an approval mints stays on the server. `list_repos` before any
/// approval, after a denial, and for a service never connected is a tool error telling the model
/// to call `connect_account` first; after the approval it answers with the account's
/// repositories; no frame the client gets and no page holds the token's prefix. The vault keeps
/// one connection per user (issuer and subject) and service: another subject, the same subject
/// from another issuer, or another service finds nothing, and a new approval replaces the old.
#[tokio::test]
async fn connect_keeps_the_token_on_the_server_per_user_and_service() {
    let vault = connect::TokenVault::default();
    let server = std::sync::Arc::new(
        Server::new("connect")
            .url_wait(std::time::Duration::from_millis(20))
            .anonymous_url_flows()
            .state(our_base())
            .state(vault.clone())
            .tool(connect::connect_account)
            .tool(connect::list_repos),
    );
    let pages = connect::Pages::new(server.url_flows(), None, our_base(), vault.clone());
    let mut c = TestClient::stateless(server.clone(), json!({"elicitation": {"url": {}}}));
    let mut seen = Vec::new();
    let connect_first = |service: &str| {
        format!(
            "{service} is not connected for you: call connect_account with service \"{service}\" first, \
             then call list_repos again"
        )
    };
    let decide = |flow: String, decision: &'static str| {
        let pages = pages.clone();
        async move {
            let body = format!("flow={flow}&service=github&decision={decision}");
            page_of(
                pages
                    .connect(page_request("POST", "/connect", &[OURS, FORM], &body))
                    .await,
            )
        }
    };

    let r = c.call_tool("list_repos", json!({"service": "github"})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(text(&r), connect_first("github"));
    assert!(r["result"].get("inputRequests").is_none(), "nothing is asked: {r}");

    // Denied: still not connected.
    let (url, state) = connect_asked(&mut c).await;
    let (status, page, _) = decide(url.rsplit("flow=").next().unwrap().to_owned(), "deny").await;
    assert_eq!(status, 200, "{page}");
    let done = connect_accepted(&mut c, state).await;
    assert_eq!(text(&done), "declined: github not connected", "{done}");
    let r = c.call_tool("list_repos", json!({"service": "github"})).await;
    assert_eq!(
        (r["result"]["isError"].clone(), text(&r)),
        (json!(true), connect_first("github"))
    );

    // Approved: connected, and the token is used on the server only.
    let (url, state) = connect_asked(&mut c).await;
    let (status, page, _) = decide(url.rsplit("flow=").next().unwrap().to_owned(), "approve").await;
    assert_eq!(status, 200, "{page}");
    seen.push(page);
    let done = connect_accepted(&mut c, state).await;
    assert_eq!(text(&done), "connected github as anonymous", "{done}");
    let r = c.call_tool("list_repos", json!({"service": "github"})).await;
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(
        text(&r),
        "github repositories of anonymous: anonymous/notes, anonymous/website"
    );
    seen.extend([done.to_string(), r.to_string()]);
    let r = c.call_tool("list_repos", json!({"service": "gitlab"})).await;
    assert_eq!(
        (r["result"]["isError"].clone(), text(&r)),
        (json!(true), connect_first("gitlab"))
    );
    let listed = c.request("tools/list", json!({})).await;
    seen.push(listed.to_string());
    for shown in &seen {
        assert!(
            !shown.contains(connect::ACCESS_TOKEN_PREFIX),
            "a token reached the client or the page: {shown}"
        );
    }

    // One connection per user and service.
    let user = |sub: &str, iss: Option<&str>| {
        let mut p = mcp_resolve::Principal::new(sub);
        p.issuer = iss.map(str::to_owned);
        p
    };
    let alice = user("alice", Some("https://a.example"));
    let first = connect::Connection::mint("alice").unwrap();
    vault.keep(Some(&alice), "github", &first).await.unwrap();
    let found = vault.connection(Some(&alice), "github").await.unwrap();
    assert_eq!(found.map(|c| c.account).as_deref(), Some("alice"));
    for (other, service) in [
        (user("bob", Some("https://a.example")), "github"),
        (user("alice", Some("https://b.example")), "github"),
        (user("alice", None), "github"),
        (alice.clone(), "gitlab"),
    ] {
        let found = vault.connection(Some(&other), service).await.unwrap();
        assert!(
            found.is_none(),
            "{other:?} on {service} found alice's github connection"
        );
    }
    let second = connect::Connection::mint("alice-2").unwrap();
    vault.keep(Some(&alice), "github", &second).await.unwrap();
    let found = vault.connection(Some(&alice), "github").await.unwrap();
    assert_eq!(found.map(|c| c.account).as_deref(), Some("alice-2"), "replaced");
}

// ---- connect's sign-in: a form of its own, never a token in a URL, nothing forced ----

/// The origin the pages take posts from (`our_base()`).
const OURS: (&str, &str) = ("origin", "http://127.0.0.1:9");

/// Where these tests' pages live: the server's `PageBase` state, and the pages' own origin.
fn our_base() -> connect::PageBase {
    connect::PageBase(OURS.1.into())
}
const SIGN_IN_COOKIE: &str = "__Host-connect_sign_in";
const SESSION_COOKIE: &str = "__Host-connect_session";

/// Tokens the pages' verifier knows: alice's and mallory's.
struct Table;
impl mcp_resolve::auth::TokenVerifier for Table {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> mcp_resolve::auth::BoxFuture<'a, Result<mcp_resolve::Principal, mcp_resolve::auth::AuthError>> {
        Box::pin(async move {
            match token {
                "alice-token" => Ok(mcp_resolve::Principal::new("alice")),
                "mallory-token" => Ok(mcp_resolve::Principal::new("mallory")),
                _ => Err(mcp_resolve::auth::AuthError::new("unknown token")),
            }
        })
    }
}

/// `connect`'s pages with sign-in (tokens of [`Table`]).
fn signing_pages() -> connect::Pages {
    let server = Server::new("connect").state(our_base()).tool(connect::connect_account);
    connect::Pages::new(
        server.url_flows(),
        Some(std::sync::Arc::new(Table)),
        our_base(),
        connect::TokenVault::default(),
    )
}

/// The `Set-Cookie` headers of a response.
fn set_cookies(resp: &mcp_resolve::http::Response<mcp_resolve::Bytes>) -> Vec<String> {
    resp.headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

/// The value a response sets cookie `name` to (`None` when it sets none).
fn cookie_set(resp: &mcp_resolve::http::Response<mcp_resolve::Bytes>, name: &str) -> Option<String> {
    set_cookies(resp).iter().find_map(|c| {
        let value = c.strip_prefix(name)?.strip_prefix('=')?;
        Some(value.split(';').next().unwrap_or_default().to_owned())
    })
}

/// What a browser gets from `GET /login`: its pre-sign-in cookie (`name=value`) and the form's
/// CSRF token.
async fn sign_in_form(pages: &connect::Pages) -> (String, String) {
    let (status, body, resp) = page_of(pages.login(page_request("GET", "/login", &[], "")).await);
    assert_eq!(status, 200, "{body}");
    let form = cookie_set(&resp, SIGN_IN_COOKIE).unwrap_or_else(|| panic!("no sign-in cookie: {resp:?}"));
    let csrf = body
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no CSRF token in the form: {body}"));
    (format!("{SIGN_IN_COOKIE}={form}"), csrf.to_owned())
}

/// `POST /login` with these headers and form body.
async fn post_sign_in(
    pages: &connect::Pages,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, mcp_resolve::http::Response<mcp_resolve::Bytes>) {
    page_of(pages.login(page_request("POST", uri, headers, body)).await)
}

/// Signs in through the form, as a browser does; the session cookie (`name=value`).
async fn signed_in(pages: &connect::Pages, token: &str) -> String {
    let (form, csrf) = sign_in_form(pages).await;
    let (status, body, resp) = post_sign_in(
        pages,
        "/login",
        &[OURS, FORM, ("cookie", &form)],
        &format!("csrf={csrf}&token={token}"),
    )
    .await;
    assert_eq!(status, 303, "{body}");
    let session = cookie_set(&resp, SESSION_COOKIE).unwrap_or_else(|| panic!("no session cookie: {resp:?}"));
    format!("{SESSION_COOKIE}={session}")
}

/// With sign-in: the page wants a session (401 without one), `/login` hands out a form, and its
/// post from this origin with the form's CSRF token and a valid token signs the browser in: a
/// fresh random session id in a `__Host-`, Secure, HttpOnly, SameSite=Lax cookie (never the
/// token), the form's cookie removed; the session then names the user on every page.
#[tokio::test]
async fn connect_signs_the_browser_in_with_a_session_id_not_the_token() {
    let pages = signing_pages();
    let path = "/connect?service=github&flow=AAAAAAAAAAAAAAAAAAAAAA";
    for cookie in [
        None,
        Some(format!("{SESSION_COOKIE}=alice-token")),
        Some("connect_session=alice-token".to_owned()),
        Some(format!("{SESSION_COOKIE}={}", "A".repeat(43))),
    ] {
        let headers: Vec<(&str, &str)> = cookie.iter().map(|c| ("cookie", c.as_str())).collect();
        let (status, body, _) = page_of(pages.connect(page_request("GET", path, &headers, "")).await);
        assert_eq!(status, 401, "{cookie:?}: {body}");
        assert!(body.contains("Sign in first"), "{body}");
    }

    let (status, body, resp) = page_of(pages.login(page_request("GET", "/login", &[], "")).await);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Not signed in"), "{body}");
    assert!(
        body.contains("<form method=\"post\" action=\"/login\">") && body.contains("type=\"password\" name=\"token\""),
        "{body}"
    );
    let form_cookie = set_cookies(&resp)
        .into_iter()
        .find(|c| c.starts_with(SIGN_IN_COOKIE))
        .unwrap();
    let form_id = cookie_set(&resp, SIGN_IN_COOKIE).unwrap();
    assert_eq!(form_id.len(), 43, "{form_cookie}");
    assert_eq!(
        form_cookie,
        format!("{SIGN_IN_COOKIE}={form_id}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=600")
    );
    // Each form has its own CSRF token and pre-sign-in id.
    let (a, b) = (sign_in_form(&pages).await, sign_in_form(&pages).await);
    assert!(a.0 != b.0 && a.1 != b.1, "{a:?} {b:?}");

    let (form, csrf) = sign_in_form(&pages).await;
    let (status, _, resp) = post_sign_in(
        &pages,
        "/login",
        &[OURS, FORM, ("cookie", &form)],
        &format!("csrf={csrf}&token=alice-token"),
    )
    .await;
    assert_eq!(status, 303);
    assert_eq!(resp.headers()["location"], "/login");
    let session = cookie_set(&resp, SESSION_COOKIE).unwrap();
    assert!(session.len() == 43 && !session.contains("alice"), "{session}");
    let cookies = set_cookies(&resp);
    assert!(
        cookies.contains(&format!(
            "{SESSION_COOKIE}={session}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=3600"
        )),
        "{cookies:?}"
    );
    assert!(
        cookies.contains(&format!(
            "{SIGN_IN_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=0"
        )),
        "{cookies:?}"
    );

    let signed_in = format!("theme=dark; {SESSION_COOKIE}={session}");
    let (status, body, _) = page_of(
        pages
            .login(page_request("GET", "/login", &[("cookie", &signed_in)], ""))
            .await,
    );
    assert_eq!(status, 200);
    assert!(body.contains("Signed in as <b class=\"user\">alice</b>"), "{body}");
    // Signed in, the made-up flow is simply not found.
    let (status, _, _) = page_of(
        pages
            .connect(page_request("GET", path, &[("cookie", &signed_in)], ""))
            .await,
    );
    assert_eq!(status, 404);
    // A session cookie sent twice (one planted beside it) is read as none.
    let twice = format!("{SESSION_COOKIE}={session}; {SESSION_COOKIE}={session}");
    let (status, _, _) = page_of(
        pages
            .connect(page_request("GET", path, &[("cookie", &twice)], ""))
            .await,
    );
    assert_eq!(status, 401);
    // Each sign-in gets a session of its own.
    assert_ne!(signed_in_session(&pages).await, signed_in_session(&pages).await);
}

async fn signed_in_session(pages: &connect::Pages) -> String {
    signed_in(pages, "alice-token").await
}

/// A sign-in the browser's user did not make is refused, and signs nobody in: a token in the
/// URL (GET or POST), a post without this origin (none, another port of this host, another site,
/// an opaque one), without the form's CSRF token, with a made-up one, with the attacker's own
/// form's token (bound to another browser's pre-sign-in cookie), without the pre-sign-in cookie
/// or with it twice, a form posted a second time, and a token the verifier refuses.
#[tokio::test]
async fn connect_refuses_sign_ins_it_did_not_hand_out() {
    let pages = signing_pages();
    // The old sign-in link: refused, and nothing is set.
    for uri in ["/login?token=mallory-token", "/login?token=alice-token"] {
        let (status, body, resp) = page_of(pages.login(page_request("GET", uri, &[], "")).await);
        assert_eq!(status, 400, "{uri}: {body}");
        assert!(body.contains("A token never goes in a link"), "{body}");
        assert!(set_cookies(&resp).is_empty(), "{uri}: {resp:?}");
    }

    // The victim's browser holds a form of its own; the attacker holds another.
    let (victim_form, victim_csrf) = sign_in_form(&pages).await;
    let (attacker_form, attacker_csrf) = sign_in_form(&pages).await;
    let made_up = "B".repeat(43);
    let twice = format!("{victim_form}; {attacker_form}");
    let forced = format!("csrf={victim_csrf}&token=mallory-token");
    // What the post is, its headers, its body, and the status it gets.
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, String, u16);
    let cases: Vec<Case> = vec![
        ("no Origin", vec![FORM, ("cookie", &victim_form)], forced.clone(), 403),
        (
            "another port of this host",
            vec![("origin", "http://127.0.0.1:8080"), FORM, ("cookie", &victim_form)],
            forced.clone(),
            403,
        ),
        (
            "another site",
            vec![("origin", "https://evil.example"), FORM, ("cookie", &victim_form)],
            forced.clone(),
            403,
        ),
        (
            "an opaque origin",
            vec![("origin", "null"), FORM, ("cookie", &victim_form)],
            forced.clone(),
            403,
        ),
        (
            "no CSRF token",
            vec![OURS, FORM, ("cookie", &victim_form)],
            "token=mallory-token".to_owned(),
            403,
        ),
        (
            "a made-up CSRF token",
            vec![OURS, FORM, ("cookie", &victim_form)],
            format!("csrf={made_up}&token=mallory-token"),
            403,
        ),
        (
            "the attacker's own form's token",
            vec![OURS, FORM, ("cookie", &victim_form)],
            format!("csrf={attacker_csrf}&token=mallory-token"),
            403,
        ),
        ("no pre-sign-in cookie", vec![OURS, FORM], forced.clone(), 403),
        (
            "the pre-sign-in cookie twice",
            vec![OURS, FORM, ("cookie", &twice)],
            forced.clone(),
            403,
        ),
        ("not a form", vec![OURS, ("cookie", &victim_form)], forced.clone(), 415),
    ];
    for (what, headers, body, status) in cases {
        let (got, page, resp) = post_sign_in(&pages, "/login", &headers, &body).await;
        assert_eq!(got, status, "{what}: {page}");
        assert_eq!(cookie_set(&resp, SESSION_COOKIE), None, "{what} signed in: {resp:?}");
    }
    // The token in the URL of a post from the right form: refused too.
    let (status, page, resp) = post_sign_in(
        &pages,
        "/login?token=mallory-token",
        &[OURS, FORM, ("cookie", &victim_form)],
        &format!("csrf={victim_csrf}"),
    )
    .await;
    assert_eq!(status, 400, "{page}");
    assert_eq!(cookie_set(&resp, SESSION_COOKIE), None);

    // None of it used up the victim's form: the victim's own sign-in goes through, once.
    let own = format!("csrf={victim_csrf}&token=alice-token");
    let headers = [OURS, FORM, ("cookie", victim_form.as_str())];
    let (status, page, resp) = post_sign_in(&pages, "/login", &headers, &own).await;
    assert_eq!(status, 303, "{page}");
    assert!(cookie_set(&resp, SESSION_COOKIE).is_some());
    let (status, page, resp) = post_sign_in(&pages, "/login", &headers, &own).await;
    assert_eq!(status, 403, "a form signs in once: {page}");
    assert_eq!(cookie_set(&resp, SESSION_COOKIE), None);

    // A token the verifier refuses: 401, nobody signed in.
    let (form, csrf) = sign_in_form(&pages).await;
    let (status, page, resp) = post_sign_in(
        &pages,
        "/login",
        &[OURS, FORM, ("cookie", &form)],
        &format!("csrf={csrf}&token=bob-token"),
    )
    .await;
    assert_eq!(status, 401, "{page}");
    assert_eq!(cookie_set(&resp, SESSION_COOKIE), None);
    let (status, _, resp) = page_of(pages.login(page_request("PUT", "/login", &[], "")).await);
    assert_eq!(status, 405);
    assert_eq!(resp.headers()["allow"], "GET, POST");
}

/// The pages hold at most 10 000 sign-ins (forms handed out and sessions) at once: the next
/// `GET /login` is a 503 that sets no cookie, and nothing grows further.
#[tokio::test]
async fn connect_holds_at_most_10_000_sign_ins() {
    let pages = signing_pages();
    for n in 0..10_000 {
        let (status, body, _) = page_of(pages.login(page_request("GET", "/login", &[], "")).await);
        assert_eq!(status, 200, "form {n}: {body}");
    }
    let (status, body, resp) = page_of(pages.login(page_request("GET", "/login", &[], "")).await);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("Try again"), "{body}");
    assert!(set_cookies(&resp).is_empty(), "{resp:?}");
}
