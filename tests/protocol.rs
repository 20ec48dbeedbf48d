//! Behaviour of the protocol core on both eras, driven through the in-memory client, which speaks
//! real JSON-RPC frames to the same connection loop that serves stdio.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::testing::TestClient;
use mcp_resolve::{Context, Server, protocol::ProtocolVersion, tool, tool::Json};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> Json<i64> {
    Json(a + b)
}

/// Repeat a word.
#[tool]
async fn repeat(
    /// The word.
    word: String,
    /// How many times (default 1).
    times: Option<u32>,
) -> String {
    word.repeat(times.unwrap_or(1) as usize)
}

/// A colour.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Colour {
    Red,
    Green,
}

/// Paint things.
#[tool]
async fn paint(colour: Colour, things: Vec<String>) -> String {
    let c = match colour {
        Colour::Red => "red",
        Colour::Green => "green",
    };
    format!("{} {c}", things.join("+"))
}

/// Sleep, then answer.
#[tool]
async fn sleepy(ms: u64, tag: String) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    tag
}

/// Panics.
#[tool]
async fn boom() -> String {
    panic!("the tool fell over")
}

/// What the context says.
#[tool]
async fn whoami(cx: Context) -> Json<Value> {
    Json(json!({
        "era": format!("{:?}", cx.era()),
        "version": cx.protocol_version().as_str(),
        "form": cx.client_capabilities().elicitation_form(),
        "client": cx.client_info().map(|c| c.name.clone()),
        "principal": cx.principal().is_some(),
    }))
}

/// Reports progress twice.
#[tool]
async fn progress(cx: Context) -> String {
    cx.progress(1.0, Some(2.0), Some("half")).await;
    cx.progress(2.0, Some(2.0), None).await;
    "done".into()
}

static CANCELLED_DROPPED: AtomicBool = AtomicBool::new(false);

struct DropFlag;
impl Drop for DropFlag {
    fn drop(&mut self) {
        CANCELLED_DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Waits until cancelled.
#[tool]
async fn forever() -> String {
    let _flag = DropFlag;
    std::future::pending::<()>().await;
    unreachable!()
}

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MAX_RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Counts how many run at once.
#[tool]
async fn counted() -> String {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MAX_RUNNING.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(50)).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    "ok".into()
}

fn server() -> Server {
    Server::new("test")
        .version("1.2.3")
        .tool(add)
        .tool(repeat)
        .tool(sleepy)
        .tool(boom)
        .tool(whoami)
        .tool(progress)
        .tool(forever)
        .tool(paint)
}

fn modern() -> TestClient {
    TestClient::stateless(server(), json!({"elicitation": {"form": {}}}))
}

async fn legacy(version: ProtocolVersion) -> TestClient {
    TestClient::handshake(server(), version, json!({"elicitation": {}})).await
}

fn error_code(frame: &Value) -> i64 {
    frame["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {frame}"))
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {frame}"))
}

async fn assert_still_serving(c: &mut TestClient) {
    let r = c.call_tool("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(r["result"]["structuredContent"], json!({"result": 5}), "{r}");
}

// ---------------------------------------------------------------- 2026-07-28

#[tokio::test]
async fn discover_describes_the_server() {
    let mut c = modern();
    let r = c.request("server/discover", json!({})).await;
    let res = &r["result"];
    // Every version served, newest first: a dual-era client learns it may fall back.
    assert_eq!(
        res["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"])
    );
    assert_eq!(res["resultType"], "complete");
    assert_eq!(res["ttlMs"], 0);
    assert_eq!(res["cacheScope"], "public");
    assert!(res["capabilities"]["tools"].is_object());
    assert_eq!(
        res["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "test", "version": "1.2.3"})
    );
}

#[tokio::test]
async fn tools_list_has_schemas_and_cache_hints() {
    let mut c = modern();
    let r = c.request("tools/list", json!({})).await;
    let res = &r["result"];
    assert_eq!(res["resultType"], "complete");
    assert!(res["ttlMs"].is_u64() && res["cacheScope"].is_string());
    let tools = res["tools"].as_array().unwrap();
    let repeat_def = tools.iter().find(|t| t["name"] == "repeat").unwrap();
    assert_eq!(repeat_def["description"], "Repeat a word.");
    let schema = &repeat_def["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["word"]));
    assert_eq!(schema["additionalProperties"], false, "its arguments and no others");
    assert_eq!(
        schema["properties"]["word"],
        json!({"type": "string", "description": "The word."})
    );
    assert_eq!(
        schema["properties"]["times"]["description"],
        "How many times (default 1)."
    );
    let whoami_def = tools.iter().find(|t| t["name"] == "whoami").unwrap();
    assert_eq!(
        whoami_def["inputSchema"],
        json!({"type": "object", "additionalProperties": false}),
        "the context is not an argument"
    );
    let add_def = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add_def["outputSchema"]["properties"]["result"]["type"], "integer");
}

#[tokio::test]
async fn call_stamps_result_type_and_server_info() {
    let mut c = modern();
    let r = c.call_tool("add", json!({"a": 1, "b": 2})).await;
    let res = &r["result"];
    assert_eq!(res["content"], json!([{"type": "text", "text": "3"}]));
    assert_eq!(res["structuredContent"], json!({"result": 3}));
    assert_eq!(res["isError"], false);
    assert_eq!(res["resultType"], "complete");
    assert_eq!(res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "test");
}

#[tokio::test]
async fn missing_envelope_keys_are_invalid_params() {
    let mut c = TestClient::raw(server());
    let r = c
        .request(
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        )
        .await;
    assert_eq!(error_code(&r), -32602);
    assert_eq!(
        r["error"]["message"],
        "params._meta is missing the required envelope key(s): io.modelcontextprotocol/clientCapabilities"
    );
    // The connection is stateless (the first request carried the version key) and still serves.
    let ok = c
        .request("tools/list", json!({"_meta": TestClient::envelope(&json!({}))}))
        .await;
    assert_eq!(ok["result"]["resultType"], "complete", "{ok}");
}

/// 2026-07-28 versioning: an unsupported version MUST be answered with an
/// UnsupportedProtocolVersionError "listing the versions it does support" — every one, the
/// handshake-era ones included.
#[tokio::test]
async fn unsupported_version_names_supported_and_requested() {
    let mut c = modern();
    let r = c
        .request(
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2027-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await;
    assert_eq!(error_code(&r), -32022);
    assert_eq!(r["error"]["message"], "Unsupported protocol version");
    assert_eq!(
        r["error"]["data"],
        json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"], "requested": "2027-01-01"})
    );
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn initialize_on_a_stateless_connection_is_refused() {
    let mut c = modern();
    c.request("server/discover", json!({})).await;
    let r = c
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await;
    assert_eq!(error_code(&r), -32022);
    assert_eq!(
        r["error"]["message"],
        "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted"
    );
    assert_eq!(
        r["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn removed_and_unknown_methods_are_not_found() {
    let mut c = modern();
    for method in ["ping", "logging/setLevel", "resources/list", "nope"] {
        let r = c.request(method, json!({})).await;
        assert_eq!(error_code(&r), -32601, "{method}: {r}");
        assert_eq!(r["error"]["data"], method);
    }
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn unknown_tool_is_invalid_params() {
    let mut c = modern();
    let r = c.call_tool("nope", json!({})).await;
    assert_eq!(error_code(&r), -32602);
    assert_eq!(r["error"]["message"], "Unknown tool: nope");
    let r = c.request("tools/call", json!({"arguments": {}})).await;
    assert_eq!(error_code(&r), -32602);
    let r = c
        .request("tools/call", json!({"name": "add", "arguments": [1, 2]}))
        .await;
    assert_eq!(error_code(&r), -32602);
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn argument_errors_name_the_argument_and_the_expectation() {
    let mut c = modern();
    let r = c.call_tool("repeat", json!({"word": 42})).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(text(&r), "argument `word`: expected a string, got 42");
    // Every bad argument is reported at once.
    let r = c.call_tool("add", json!({"a": "one", "b": null})).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        text(&r),
        "argument `a`: expected i64, got \"one\"\nargument `b`: expected i64, got null"
    );
    let r = c.call_tool("repeat", json!({})).await;
    assert_eq!(text(&r), "argument `word`: missing required argument (a string)");
    // Optional arguments may be absent; an unknown one is refused (the schema allows none).
    let r = c.call_tool("repeat", json!({"word": "ab"})).await;
    assert_eq!(text(&r), "ab");
    let r = c.call_tool("repeat", json!({"word": "ab", "extra": true})).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        text(&r),
        "argument `extra`: tool `repeat` has no such argument; it takes `times`, `word`"
    );
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn context_reports_the_stateless_request() {
    let mut c = modern();
    let r = c.call_tool("whoami", json!({})).await;
    assert_eq!(
        r["result"]["structuredContent"]["result"],
        json!({"era": "Stateless", "version": "2026-07-28", "form": true, "client": "mcp-resolve-test", "principal": false})
    );
    // Capabilities come from this request only.
    let r = c
        .request(
            "tools/call",
            json!({"name": "whoami", "arguments": {}, "_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await;
    assert_eq!(r["result"]["structuredContent"]["result"]["form"], false, "{r}");
}

#[tokio::test]
async fn progress_notifications_precede_the_result() {
    let mut c = modern();
    let id = c
        .start(
            "tools/call",
            json!({"name": "progress", "arguments": {}, "_meta": {"progressToken": "p1"}}),
        )
        .await;
    let first = c.recv().await;
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(
        first["params"],
        json!({"progressToken": "p1", "progress": 1.0, "total": 2.0, "message": "half"})
    );
    let second = c.recv().await;
    assert_eq!(second["params"]["progress"], 2.0);
    let done = c.response_to(&json!(id)).await;
    assert_eq!(text(&done), "done");
    // Without a token nothing is sent.
    let r = c.call_tool("progress", json!({})).await;
    assert_eq!(text(&r), "done");
    assert!(c.try_recv(Duration::from_millis(100)).await.is_none());
}

// ---------------------------------------------------------------- handshake era

#[tokio::test]
async fn initialize_echoes_known_versions() {
    for (offered, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2024-11-05"),
        // 2025-03-26 requires batches, which are not taken: the client is offered the latest.
        ("2025-03-26", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let mut c = TestClient::raw(server());
        let r = c.initialize(offered, json!({})).await;
        let res = &r["result"];
        assert_eq!(res["protocolVersion"], answered, "{offered}");
        assert_eq!(res["serverInfo"], json!({"name": "test", "version": "1.2.3"}));
        assert!(res["capabilities"]["tools"].is_object());
        assert!(res.get("resultType").is_none());
    }
}

#[tokio::test]
async fn handshake_results_carry_no_stateless_fields() {
    let mut c = legacy(ProtocolVersion::V2025_11_25).await;
    let r = c.request("tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
    for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(r["result"].get(key).is_none(), "{key} in {r}");
    }
    let r = c.call_tool("add", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3}, "isError": false})
    );
    assert_eq!(c.request("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn context_reports_the_handshake() {
    let mut c = legacy(ProtocolVersion::V2025_06_18).await;
    let r = c.call_tool("whoami", json!({})).await;
    assert_eq!(
        r["result"]["structuredContent"]["result"],
        json!({"era": "Handshake", "version": "2025-06-18", "form": true, "client": "mcp-resolve-test", "principal": false})
    );
}

#[tokio::test]
async fn requests_before_initialize_are_refused() {
    let mut c = TestClient::raw(server());
    let r = c.request("tools/list", json!({})).await;
    assert_eq!(error_code(&r), -32602);
    assert_eq!(r["error"]["message"], "Invalid request parameters");
    assert_eq!(c.request("ping", json!({})).await["result"], json!({}));
    let r = c.initialize("2025-11-25", json!({})).await;
    assert!(r["result"].is_object());
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn envelope_on_a_handshake_connection_is_refused() {
    let mut c = legacy(ProtocolVersion::V2025_11_25).await;
    let r = c
        .request("tools/list", json!({"_meta": TestClient::envelope(&json!({}))}))
        .await;
    assert_eq!(error_code(&r), -32600);
    assert_eq!(
        r["error"]["message"],
        "this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it"
    );
    let r = c.request("server/discover", json!({})).await;
    assert_eq!(error_code(&r), -32601);
    let r = c.initialize("2025-11-25", json!({})).await;
    assert_eq!(error_code(&r), -32600, "a second initialize");
    assert_still_serving(&mut c).await;
}

// ---------------------------------------------------------------- bad input

#[tokio::test]
async fn malformed_json_is_a_parse_error() {
    let mut c = modern();
    c.send_raw(r#"{"jsonrpc":"2.0","id":1,"method":"#).await;
    let r = c.recv().await;
    assert_eq!(error_code(&r), -32700);
    assert_eq!(r["id"], Value::Null);
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn invalid_requests_are_refused() {
    let mut c = modern();
    for (frame, id) in [
        (r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#, Value::Null),
        (r#""just a string""#, Value::Null),
        (r#"{"id":5,"method":"tools/list"}"#, json!(5)),
        (r#"{"jsonrpc":"2.0","id":6,"method":7}"#, json!(6)),
        (r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":8}"#, json!(8)),
    ] {
        c.send_raw(frame).await;
        let r = c.recv().await;
        assert_eq!(error_code(&r), -32600, "{frame}: {r}");
        assert_eq!(r["id"], id, "{frame}");
    }
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn oversized_frame_is_refused_and_the_connection_goes_on() {
    let mut c = TestClient::stateless(server().max_frame_bytes(1024), json!({}));
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "repeat", "arguments": {"word": "x".repeat(5000)}}});
    c.send(&big).await;
    let r = c.recv().await;
    assert_eq!(error_code(&r), -32600);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exceeds the limit of 1024 bytes"),
        "{r}"
    );
    assert_still_serving(&mut c).await;
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result() {
    let mut c = modern();
    let r = c.call_tool("boom", json!({})).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(text(&r), "tool `boom` failed: internal error");
    assert!(!text(&r).contains("fell over"), "the panic message stays in the log");
    assert_still_serving(&mut c).await;
}

// ---------------------------------------------------------------- transport

// tokio's paused clock: the tools' sleeps end only once nothing else can run, so the order
// of events does not depend on the machine's load.
#[tokio::test(start_paused = true)]
async fn responses_come_back_out_of_order() {
    let mut c = modern();
    let slow = c
        .start(
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 300, "tag": "slow"}}),
        )
        .await;
    let fast = c
        .start(
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 1, "tag": "fast"}}),
        )
        .await;
    let first = c.recv().await;
    assert_eq!(first["id"], fast);
    assert_eq!(text(&first), "fast");
    let second = c.recv().await;
    assert_eq!(second["id"], slow);
}

// tokio's paused clock: the tools' sleeps end only once nothing else can run, so the order
// of events does not depend on the machine's load.
#[tokio::test(start_paused = true)]
async fn cancelled_requests_stop_and_get_no_response() {
    let mut c = modern();
    let id = c.start("tools/call", json!({"name": "forever", "arguments": {}})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    c.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user gave up"}),
    )
    .await;
    assert_still_serving(&mut c).await;
    for _ in 0..50 {
        if CANCELLED_DROPPED.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        CANCELLED_DROPPED.load(Ordering::SeqCst),
        "the tool's future was dropped"
    );
    let (frames, result) = c.close().await;
    assert!(result.is_ok());
    assert!(
        frames.iter().all(|f| f["id"] != id),
        "no response for a cancelled request: {frames:?}"
    );
}

// tokio's paused clock: the tools' sleeps end only once nothing else can run, so the order
// of events does not depend on the machine's load.
#[tokio::test(start_paused = true)]
async fn calls_in_flight_are_bounded() {
    let mut c = TestClient::stateless(Server::new("bounded").tool(counted).max_in_flight(2), json!({}));
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(c.start("tools/call", json!({"name": "counted", "arguments": {}})).await);
    }
    for id in ids {
        let r = c.response_to(&json!(id)).await;
        assert_eq!(text(&r), "ok");
    }
    assert_eq!(MAX_RUNNING.load(Ordering::SeqCst), 2);
}

// tokio's paused clock: the tools' sleeps end only once nothing else can run, so the order
// of events does not depend on the machine's load.
#[tokio::test(start_paused = true)]
async fn end_of_input_lets_calls_in_flight_finish() {
    let mut c = modern();
    let id = c
        .start(
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 200, "tag": "late"}}),
        )
        .await;
    let (frames, result) = c.close().await;
    assert!(result.is_ok());
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["id"], id);
    assert_eq!(frames[0]["result"]["content"][0]["text"], "late");
}

// tokio's paused clock: the tools' sleeps end only once nothing else can run, so the order
// of events does not depend on the machine's load.
#[tokio::test(start_paused = true)]
async fn duplicate_request_ids_in_flight_are_refused() {
    let mut c = modern();
    let call = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "sleepy", "arguments": {"ms": 200, "tag": "a"}, "_meta": TestClient::envelope(&json!({}))}});
    c.send(&call(77)).await;
    c.send(&call(77)).await;
    let r = c.recv().await;
    assert_eq!(error_code(&r), -32600);
    assert_eq!(r["id"], 77);
    let r = c.recv().await;
    assert_eq!(text(&r), "a");
}

#[tokio::test]
async fn enums_and_vectors_are_arguments() {
    let mut c = modern();
    let list = c.request("tools/list", json!({})).await;
    let paint_def = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "paint")
        .unwrap()
        .clone();
    let schema = &paint_def["inputSchema"];
    assert_eq!(
        schema["properties"]["things"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    let colour = &schema["properties"]["colour"];
    let colour = match colour.get("$ref") {
        Some(r) => &schema["$defs"][r.as_str().unwrap().trim_start_matches("#/$defs/")],
        None => colour,
    };
    assert_eq!(colour["enum"], json!(["red", "green"]), "{schema}");
    let r = c
        .call_tool("paint", json!({"colour": "green", "things": ["a", "b"]}))
        .await;
    assert_eq!(text(&r), "a+b green");
    let r = c.call_tool("paint", json!({"colour": "blue", "things": []})).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        text(&r),
        "argument `colour`: unknown variant `blue`, expected `red` or `green`"
    );
}

/// Arguments nested deeper than serde_json's 128 levels are refused with -32602 and a clear
/// message; 100 000 levels do not overflow the stack (every pass over raw text is iterative); the
/// connection goes on.
#[tokio::test]
async fn deeply_nested_arguments_are_refused_and_the_connection_goes_on() {
    let mut c = legacy(ProtocolVersion::V2025_11_25).await;
    for depth in [200, 100_000] {
        let x = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":{depth},"method":"tools/call","params":{{"name":"add","arguments":{{"a":1,"b":2,"x":{x}}}}}}}"#
        );
        c.send_raw(&frame).await;
        let r = c.response_to(&json!(depth)).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("recursion limit"),
            "{r}"
        );
    }
    let r = c.call_tool("add", json!({"a": 1, "b": 2})).await;
    assert_eq!(r["result"]["structuredContent"], json!({"result": 3}));
}

/// What a call's arguments take in memory follows their size, not their shape: arguments whose
/// parsed tree would take more than 16 times their text (and more than 16 MiB) are refused with
/// -32602 before anything is built, saying what to send instead; the connection goes on.
#[tokio::test]
async fn arguments_that_would_grow_too_much_once_parsed_are_refused() {
    let mut c = legacy(ProtocolVersion::V2025_11_25).await;
    // 300 000 one-member objects: 2.1 MB of text, about 230 MB as a tree.
    let x = format!("[{}]", vec![r#"{"":0}"#; 300_000].join(","));
    let frame = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"add","arguments":{{"a":1,"b":2,"x":{x}}}}}}}"#
    );
    c.send_raw(&frame).await;
    let r = c.response_to(&json!(5)).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("more than 16 times"), "{message}");
    // The same text as one string is taken (parsed within the budget; then `x` is refused as
    // an argument `add` does not have, which is a result, not the memory refusal).
    let s = "x".repeat(2_100_000);
    let r = c.call_tool("add", json!({"a": 1, "b": 2, "x": s})).await;
    assert!(r.get("error").is_none(), "{}", &r.to_string()[..200]);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "argument `x`: tool `add` has no such argument; it takes `a`, `b`"
    );
}

static SCOPED_RAN: AtomicBool = AtomicBool::new(false);

/// Needs a token granting `notes:admin`.
#[tool(scopes = ["notes:admin"])]
async fn scoped() -> String {
    SCOPED_RAN.store(true, Ordering::SeqCst);
    "ran".into()
}

#[tokio::test]
async fn a_scoped_tool_is_refused_clearly_where_no_token_comes() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let server = Server::new("t").tool(scoped);
        let mut c = match version {
            ProtocolVersion::V2026_07_28 => TestClient::stateless(server, json!({})),
            v => TestClient::handshake(server, v, json!({})).await,
        };
        let r = c.call_tool("scoped", json!({})).await;
        let e = &r["error"];
        assert_eq!(e["code"], -32600, "{r}");
        assert_eq!(
            e["message"],
            "Forbidden: tool `scoped` needs the scope(s) `notes:admin`, and this connection carries no token; serve it over HTTP with bearer authentication"
        );
        assert_eq!(
            e["data"],
            json!({"error": "insufficient_scope", "requiredScopes": ["notes:admin"]})
        );
    }
    assert!(!SCOPED_RAN.load(Ordering::SeqCst), "the tool never ran");
}

/// Logs at three levels, then answers.
#[tool]
async fn chatty(cx: Context) -> String {
    use mcp_resolve::protocol::LogLevel;
    cx.log(LogLevel::Debug, "details").await;
    cx.log_to(LogLevel::Info, Some("chatty"), "started").await;
    cx.log(LogLevel::Error, json!({"failed": "nothing"})).await;
    "done".into()
}

/// The `notifications/message` frames before the response to `id`, as (level, data).
async fn logs_before(c: &mut TestClient, id: i64) -> Vec<(String, Value)> {
    let mut logs = Vec::new();
    loop {
        let frame = c.recv().await;
        if frame["id"] == json!(id) && frame.get("method").is_none() {
            assert_eq!(frame["result"]["content"][0]["text"], "done", "{frame}");
            return logs;
        }
        assert_eq!(frame["method"], "notifications/message", "{frame}");
        logs.push((
            frame["params"]["level"].as_str().unwrap().to_string(),
            frame["params"]["data"].clone(),
        ));
    }
}

#[tokio::test]
async fn handshake_logs_follow_set_level() {
    let mut c = TestClient::handshake(Server::new("t").tool(chatty), ProtocolVersion::V2025_11_25, json!({})).await;
    // Until the client sets a level: info and above.
    let id = c.start("tools/call", json!({"name": "chatty", "arguments": {}})).await;
    let logs = logs_before(&mut c, id).await;
    assert_eq!(
        logs,
        vec![
            ("info".to_string(), json!("started")),
            ("error".to_string(), json!({"failed": "nothing"}))
        ]
    );
    let r = c.request("logging/setLevel", json!({"level": "debug"})).await;
    assert_eq!(r["result"], json!({}), "exactly {{}}: {r}");
    let id = c.start("tools/call", json!({"name": "chatty", "arguments": {}})).await;
    assert_eq!(logs_before(&mut c, id).await.len(), 3);
    let r = c.request("logging/setLevel", json!({"level": "error"})).await;
    assert_eq!(r["result"], json!({}));
    let id = c.start("tools/call", json!({"name": "chatty", "arguments": {}})).await;
    assert_eq!(
        logs_before(&mut c, id).await,
        vec![("error".to_string(), json!({"failed": "nothing"}))]
    );
    let r = c.request("logging/setLevel", json!({"level": "loud"})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

/// Logging (both eras): "Servers that emit log message notifications MUST declare the
/// `logging` capability" — any tool may log through its `Context`, so both `initialize` and
/// `server/discover` declare it; `logging/setLevel` is gone on 2026-07-28 (the level comes in
/// `_meta`).
#[tokio::test]
async fn the_logging_capability_is_declared_on_both_eras() {
    let mut c = TestClient::raw(Server::new("t").tool(chatty));
    let init = c.initialize("2025-11-25", json!({})).await;
    assert_eq!(init["result"]["capabilities"]["logging"], json!({}), "{init}");
    let mut c = TestClient::stateless(Server::new("t").tool(chatty), json!({}));
    let discover = c.request("server/discover", json!({})).await;
    assert_eq!(discover["result"]["capabilities"]["logging"], json!({}), "{discover}");
    let r = c.request("logging/setLevel", json!({"level": "debug"})).await;
    assert_eq!(r["error"]["code"], -32601, "removed on 2026-07-28: {r}");
}

#[tokio::test]
async fn stateless_requests_get_logs_only_when_they_ask() {
    let mut c = TestClient::stateless(Server::new("t").tool(chatty), json!({}));
    let r = c.call_tool("chatty", json!({})).await;
    assert_eq!(r["result"]["content"][0]["text"], "done");
    assert!(
        c.try_recv(Duration::from_millis(50)).await.is_none(),
        "no logs without logLevel"
    );
    let id = c
        .start(
            "tools/call",
            json!({"name": "chatty", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "info"}}),
        )
        .await;
    let logs = logs_before(&mut c, id).await;
    assert_eq!(
        logs.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
        ["info", "error"]
    );
}

/// Asks the client's model, which needs the `sampling` capability: without it, the call ends
/// with the protocol's -32021, not an `isError` result.
#[tool]
async fn summarize(cx: Context) -> mcp_resolve::tool::CallToolResult {
    if cx.client_capabilities().sampling() {
        return mcp_resolve::tool::CallToolResult::success(vec![mcp_resolve::tool::Content::text("sampled")]);
    }
    mcp_resolve::tool::CallToolResult::protocol_error(mcp_resolve::protocol::ErrorObject::missing_capability(
        json!({"sampling": {}}),
        "summarize needs the client's sampling capability",
    ))
}

#[tokio::test]
async fn a_tool_can_end_with_a_json_rpc_error() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let server = Server::new("t").tool(summarize);
        let mut c = match version {
            ProtocolVersion::V2026_07_28 => TestClient::stateless(server, json!({})),
            v => TestClient::handshake(server, v, json!({})).await,
        };
        let r = c.call_tool("summarize", json!({})).await;
        assert!(r.get("result").is_none(), "{r}");
        assert_eq!(
            r["error"],
            json!({"code": -32021, "message": "summarize needs the client's sampling capability", "data": {"requiredCapabilities": {"sampling": {}}}})
        );
        let server = Server::new("t").tool(summarize);
        let mut c = match version {
            ProtocolVersion::V2026_07_28 => TestClient::stateless(server, json!({"sampling": {}})),
            v => TestClient::handshake(server, v, json!({"sampling": {}})).await,
        };
        let r = c.call_tool("summarize", json!({})).await;
        assert_eq!(r["result"]["content"][0]["text"], "sampled", "{r}");
    }
}

/// Pagination (both eras): "Invalid cursors SHOULD result in an error with code -32602". Every
/// list is one page here, so no cursor was ever handed out: any is invalid; `null` is none.
#[tokio::test]
async fn an_invalid_cursor_is_invalid_params_on_both_eras() {
    for mut c in [modern(), legacy(ProtocolVersion::V2025_11_25).await] {
        let r = c.request("tools/list", json!({"cursor": "not-one-of-ours"})).await;
        assert_eq!(error_code(&r), -32602, "{r}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("unknown cursor"),
            "{r}"
        );
        let r = c.request("tools/list", json!({"cursor": null})).await;
        assert!(r["result"]["tools"].is_array(), "{r}");
        assert!(r["result"].get("nextCursor").is_none(), "one page: {r}");
        assert_still_serving(&mut c).await;
    }
}

/// 2026-07-28 logging: an unrecognised `io.modelcontextprotocol/logLevel` in `_meta` is -32602
/// (as `logging/setLevel`'s is on the handshake era), and nothing runs.
#[tokio::test]
async fn an_unrecognised_log_level_in_the_envelope_is_invalid_params() {
    let mut c = TestClient::stateless(Server::new("t").tool(chatty), json!({}));
    for level in [json!("loud"), json!(3), json!("INFO")] {
        let r = c
            .request(
                "tools/call",
                json!({"name": "chatty", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": level}}),
            )
            .await;
        assert_eq!(r["error"]["code"], -32602, "{level}: {r}");
        assert!(r["error"]["message"].as_str().unwrap().contains("logLevel"), "{r}");
    }
    assert!(
        c.try_recv(Duration::from_millis(50)).await.is_none(),
        "nothing ran, nothing logged"
    );
    let r = c
        .request(
            "tools/call",
            json!({"name": "chatty", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "error"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "done", "{r}");
}

static NOTED: AtomicUsize = AtomicUsize::new(0);

/// Counts its runs (only the unknown-argument test calls it).
#[tool]
async fn note_once(text: String) -> String {
    NOTED.fetch_add(1, Ordering::SeqCst);
    text
}

/// Tools (both eras): "Servers MUST validate all tool inputs". A `#[tool]`'s `inputSchema` says
/// `additionalProperties: false`, so an argument it does not name is refused before anything
/// runs, as an `isError` result the model can correct, naming the argument and what the tool
/// takes; the tool's own arguments still work.
#[tokio::test]
async fn an_argument_the_schema_does_not_allow_is_refused_before_the_tool_runs() {
    for mut c in [
        TestClient::stateless(Server::new("t").tool(note_once).tool(boom), json!({})),
        TestClient::handshake(
            Server::new("t").tool(note_once).tool(boom),
            ProtocolVersion::V2025_11_25,
            json!({}),
        )
        .await,
    ] {
        let r = c.call_tool("note_once", json!({"text": "hi", "unexpected": 1})).await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert_eq!(
            r["result"]["content"][0]["text"],
            "argument `unexpected`: tool `note_once` has no such argument; it takes `text`"
        );
        let r = c.call_tool("boom", json!({"x": 1})).await;
        assert_eq!(
            r["result"]["content"][0]["text"], "argument `x`: tool `boom` has no such argument; it takes no arguments",
            "{r}"
        );
        let r = c.call_tool("note_once", json!({"text": "hi"})).await;
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    }
    assert_eq!(NOTED.load(Ordering::SeqCst), 2, "only the well-formed calls ran");
}

/// Tools: "Rate limit tool invocations"; completion: "Implement appropriate rate limiting". One
/// caller (here a stdio connection) over its rate is refused before the call runs, saying when to
/// retry; another connection is not slowed.
#[tokio::test]
async fn a_caller_over_its_call_rate_is_refused_and_others_are_not_slowed() {
    let server = std::sync::Arc::new(Server::new("t").tool(note_rate).call_rate_limit(1, 3));
    let mut flood = TestClient::stateless(server.clone(), json!({}));
    let mut other = TestClient::stateless(server, json!({}));
    for i in 0..3 {
        let r = flood.call_tool("note_rate", json!({})).await;
        assert_eq!(r["result"]["content"][0]["text"], "ran", "{i}: {r}");
    }
    let r = flood.call_tool("note_rate", json!({})).await;
    assert_eq!(error_code(&r), -32603, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Too many requests: this caller may make 1 calls a second (3 at once)"),
        "{message}"
    );
    let retry = r["error"]["data"]["retryAfterMs"].as_u64().unwrap();
    assert!(retry > 0 && retry <= 1000, "{r}");
    assert_eq!(RATED.load(Ordering::SeqCst), 3, "the refused call never ran");
    let r = other.call_tool("note_rate", json!({})).await;
    assert_eq!(r["result"]["content"][0]["text"], "ran", "another caller: {r}");
    // Lists and discovery are not calls: never refused.
    assert!(flood.request("tools/list", json!({})).await["result"]["tools"].is_array());
}

static RATED: AtomicUsize = AtomicUsize::new(0);

/// Counts its runs (only the rate test calls it).
#[tool]
async fn note_rate() -> String {
    RATED.fetch_add(1, Ordering::SeqCst);
    "ran".into()
}

/// Ping: "Implementations SHOULD periodically issue pings to detect connection health", the
/// frequency configurable. A handshake-era stdio client is pinged every `ping_interval` once
/// initialized; one that answers keeps its connection, one that leaves a ping unanswered for as
/// long is taken to be gone and its connection ends.
#[tokio::test(start_paused = true)]
async fn an_idle_client_is_pinged_and_one_that_never_answers_is_let_go() {
    let every = Duration::from_secs(60);
    let mut c = TestClient::handshake(
        server().ping_interval(Some(every)),
        ProtocolVersion::V2025_11_25,
        json!({}),
    )
    .await;
    let started = tokio::time::Instant::now();
    let ping = c.try_recv(Duration::from_secs(600)).await.expect("a ping");
    assert_eq!(ping["method"], "ping", "{ping}");
    assert_eq!(started.elapsed(), every);
    c.send(&json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}})).await;
    let r = c.call_tool("add", json!({"a": 1, "b": 2})).await;
    assert_eq!(r["result"]["structuredContent"]["result"], 3, "still served: {r}");
    // The next ping goes unanswered: a whole interval later the connection ends.
    let ping = c.try_recv(Duration::from_secs(600)).await.expect("a second ping");
    assert_eq!(ping["method"], "ping");
    let unanswered = tokio::time::Instant::now();
    let given_up = c.try_recv(Duration::from_secs(600)).await.expect("the ping cancelled");
    assert_eq!(given_up["method"], "notifications/cancelled", "{given_up}");
    assert_eq!(given_up["params"]["requestId"], ping["id"]);
    assert_eq!(unanswered.elapsed(), every, "exactly one interval");
    // The server closed its side: end of input at once, not a wait of 600 s.
    let closed = tokio::time::Instant::now();
    assert!(
        c.try_recv(Duration::from_secs(600)).await.is_none(),
        "nothing more: the server let go"
    );
    assert!(
        closed.elapsed() < Duration::from_secs(1),
        "the pipe is closed, not quiet"
    );
    let (_, ended) = c.close().await;
    assert!(ended.is_ok(), "{ended:?}");

    // A 2026-07-28 connection has no ping.
    let mut c = TestClient::stateless(server().ping_interval(Some(every)), json!({}));
    assert!(c.request("tools/list", json!({})).await["result"].is_object());
    assert!(c.try_recv(Duration::from_secs(600)).await.is_none(), "never pinged");
}

/// Decided deviation L3 (docs/SPEC.md): both parties "MUST respect the negotiated protocol
/// version", and 2024-11-05 has no `elicitation/create`: a question on such a session is the
/// missing-capability error, whatever the client declared, and nothing is sent.
#[tokio::test]
async fn a_2024_11_05_session_is_never_sent_elicitation() {
    let mut c = TestClient::handshake(
        Server::new("t").tool(ask_twice),
        ProtocolVersion::V2024_11_05,
        json!({"elicitation": {}}),
    )
    .await;
    let r = c.call_tool("ask_twice", json!({})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert!(c.try_recv(Duration::from_millis(50)).await.is_none(), "nothing sent");
    let mut c = TestClient::handshake(
        Server::new("t").tool(ask_twice),
        ProtocolVersion::V2025_06_18,
        json!({"elicitation": {}}),
    )
    .await;
    c.start("tools/call", json!({"name": "ask_twice", "arguments": {}}))
        .await;
    assert_eq!(c.recv().await["method"], "elicitation/create", "2025-06-18 has it");
}

/// A yes/no question.
#[derive(Clone, Debug, mcp_resolve::FormSchema)]
struct YesNo {
    ok: bool,
}

/// Asks once.
#[mcp_resolve::resolver]
async fn ask_ok() -> mcp_resolve::Elicit<YesNo> {
    mcp_resolve::Elicit::form("OK?")
}

/// Asks a yes/no question.
#[tool]
async fn ask_twice(#[resolve(ask_ok)] ok: YesNo) -> String {
    ok.ok.to_string()
}

/// Reports progress that does not always increase.
#[tool]
async fn wobbly(cx: Context) -> String {
    for value in [1.0, 1.0, 0.5, 2.0, f64::NAN, 3.0] {
        cx.progress(value, None, None).await;
    }
    "done".into()
}

/// Keeps a copy of its context in a task that reports progress once told to, after the answer.
#[tool]
async fn lingering(cx: Context) -> String {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    LINGER.lock().unwrap().replace(tx);
    tokio::spawn(async move {
        let _ = rx.await;
        cx.progress(5.0, None, Some("too late")).await;
        LINGERED.store(true, Ordering::SeqCst);
    });
    "answered".into()
}

static LINGER: std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>> = std::sync::Mutex::new(None);
static LINGERED: AtomicBool = AtomicBool::new(false);

/// Progress (both eras): "The `progress` value MUST increase with each notification" — a value
/// not above the last one sent is not sent — and "Progress notifications MUST stop after
/// completion", even from a clone of the context a tool's task kept.
#[tokio::test]
async fn progress_only_increases_and_stops_after_the_answer() {
    let server_side = Server::new("t").tool(wobbly).tool(lingering);
    let mut c2 = TestClient::handshake(server_side, ProtocolVersion::V2025_11_25, json!({})).await;
    let id = c2
        .start(
            "tools/call",
            json!({"name": "wobbly", "arguments": {}, "_meta": {"progressToken": "w"}}),
        )
        .await;
    let mut values = Vec::new();
    loop {
        let frame = c2.recv().await;
        if frame["id"] == json!(id) {
            break;
        }
        assert_eq!(frame["method"], "notifications/progress", "{frame}");
        values.push(frame["params"]["progress"].as_f64().unwrap());
    }
    assert_eq!(values, [1.0, 2.0, 3.0]);
    let r = c2
        .request(
            "tools/call",
            json!({"name": "lingering", "arguments": {}, "_meta": {"progressToken": "l"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "answered", "{r}");
    let told = LINGER.lock().unwrap().take().expect("the task is waiting");
    told.send(()).unwrap();
    for _ in 0..100 {
        if LINGERED.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(LINGERED.load(Ordering::SeqCst), "the task tried");
    assert!(
        c2.try_recv(Duration::from_millis(100)).await.is_none(),
        "no progress after the answer"
    );
}
