//! Requirements of the specification matrix (docs/SPEC.md) that the code kept but no test held:
//! one test each, named for the requirement, the spec sentence (shortened) in its doc comment.
//! The in-memory client for what any transport does, Streamable HTTP for what only HTTP does.
//!
//! Its own test binary: the log capture installs a process-wide subscriber (every test's log
//! lines land in it, which the test of tokens wants: no test here may log a token either).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{HttpOptions, protocol::ProtocolVersion, seal::StateKeys, url_flow::UrlFlows};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

// ---------------------------------------------------------------- shared helpers

/// Every log line of this test binary, at every level.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs the capture once (process-wide) and returns it.
fn logs() -> &'static Captured {
    static LOGS: OnceLock<Captured> = OnceLock::new();
    LOGS.get_or_init(|| {
        let log = Captured::default();
        let writer = log.clone();
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::TRACE)
            .init();
        log
    })
}

fn log_text() -> String {
    String::from_utf8_lossy(&logs().0.lock().unwrap()).into_owned()
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
}

/// The 2026-07-28 `_meta` envelope.
fn envelope(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "requirements", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// Serves `server` over Streamable HTTP on a fresh loopback port (a server that refuses to
/// start says why on stderr; its clients then see their connections refused).
async fn serve(server: Server, options: HttpOptions) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serving = server.serve_http_on(listener, options);
    tokio::spawn(async move {
        if let Err(e) = serving.await {
            panic!("the server did not start: {e}");
        }
    });
    addr
}

/// A response whose head is in; its body is read as asked.
struct Open {
    status: u16,
    headers: http::HeaderMap,
    body: Incoming,
    conn: tokio::task::JoinHandle<()>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.conn.abort();
    }
}

impl Open {
    /// The next chunk of the body, within 10 s (`None` at its end).
    async fn chunk(&mut self) -> Option<String> {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("no body chunk within 10 s")?
                .unwrap();
            if let Ok(data) = frame.into_data() {
                return Some(String::from_utf8(data.to_vec()).unwrap());
            }
        }
    }

    /// The whole body, within 10 s.
    async fn text(mut self) -> String {
        let mut all = String::new();
        while let Some(chunk) = self.chunk().await {
            all.push_str(&chunk);
        }
        all
    }

    /// The JSON body, or the last message of an SSE body (a call's response).
    async fn json(self) -> Value {
        let sse = self
            .headers
            .get("content-type")
            .is_some_and(|c| c == "text/event-stream");
        let body = self.text().await;
        let body = match body.lines().filter_map(|l| l.strip_prefix("data: ")).next_back() {
            Some(last) if sse => last.to_owned(),
            _ => body,
        };
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
    }
}

/// POSTs `body` to `/mcp` with `headers` (and `Host`) and returns once the head is in, within
/// 10 s.
async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Open {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let conn = tokio::spawn(async move {
        conn.await.ok();
    });
    let mut req = http::Request::post("/mcp").header("host", format!("127.0.0.1:{}", addr.port()));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(10), sender.send_request(req))
        .await
        .expect("no response head within 10 s")
        .unwrap();
    Open {
        status: resp.status().as_u16(),
        headers: resp.headers().clone(),
        body: resp.into_body(),
        conn,
    }
}

const JSON: (&str, &str) = ("content-type", "application/json");
const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");

/// A well-formed 2026-07-28 POST of `method` (its `Mcp-Name` from `params.name`), with more
/// headers.
async fn post_2026(addr: SocketAddr, id: i64, method: &str, mut params: Value, more: &[(&str, &str)]) -> Open {
    if params.get("_meta").is_none() {
        params["_meta"] = envelope(json!({}));
    }
    let name = params["name"].as_str().unwrap_or("").to_string();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut headers = vec![
        JSON,
        ACCEPT,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if !name.is_empty() {
        headers.push(("mcp-name", &name));
    }
    headers.extend_from_slice(more);
    post(addr, &headers, &body).await
}

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> Json<i64> {
    Json(a + b)
}

/// Sleeps `ms` milliseconds, then answers.
#[tool]
async fn nap(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "awake".into()
}

// ---------------------------------------------------------------- B25-19, B26-29

// The argument and form types below are here for their schemas: their fields are not read.

/// A postal address.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Address {
    /// Street and number.
    street: String,
    unit: Option<u32>,
    tags: Vec<String>,
}

/// How soon.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    High,
}

/// Who receives it.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Recipient {
    Person { name: String },
    Team { id: u64, members: Option<Vec<String>> },
}

/// One line of a receipt.
#[derive(Serialize, JsonSchema)]
struct Line {
    item: String,
    qty: u32,
}

/// What a shipment cost.
#[derive(Serialize, JsonSchema)]
struct Receipt {
    id: u64,
    lines: Vec<Line>,
    total: f64,
    priority: Priority,
    note: Option<String>,
}

/// Ships a parcel: arguments of many shapes, a structured result.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn ship_parcel(
    /// Where to.
    to: Address,
    from: Option<Address>,
    priority: Priority,
    recipient: Recipient,
    weights: Vec<f64>,
    labels: BTreeMap<String, String>,
    #[arg(header = "Region")] region: String,
    #[arg(header = "Shard")] shard: Option<i64>,
    #[arg(header = "Zone")] zone: i64,
    fragile: bool,
    anything: Value,
) -> Json<Receipt> {
    let _ = (
        to, from, recipient, weights, labels, region, shard, zone, fragile, anything,
    );
    Json(Receipt {
        id: 1,
        lines: vec![],
        total: 0.0,
        priority,
        note: None,
    })
}

/// A result that is not an object (wrapped in `result`), with definitions.
#[tool]
async fn list_lines() -> Json<Vec<Line>> {
    Json(vec![])
}

/// A result that may be null.
#[tool]
async fn maybe_count() -> Json<Option<u32>> {
    Json(None)
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Size {
    #[form(rename = "s", title = "Small")]
    Small,
    #[form(rename = "l", title = "Large")]
    Large,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
#[form(enum_names)]
enum Legacy {
    #[form(title = "Option A")]
    A,
    #[form(title = "Option B")]
    B,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Tag {
    X,
    Y,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Flag {
    #[form(title = "First")]
    V1,
    #[form(title = "Second")]
    V2,
}

/// Every shape a form field takes.
#[derive(Clone, Debug, FormSchema)]
#[allow(dead_code)]
#[form(title = "Order")]
struct OrderForm {
    #[form(
        title = "Name",
        description = "Full name",
        min_length = 1,
        max_length = 40,
        default = "Ada"
    )]
    name: String,
    #[form(format = "email")]
    email: String,
    #[form(format = "uri")]
    homepage: Option<String>,
    #[form(format = "date")]
    day: String,
    #[form(format = "date-time")]
    when: Option<String>,
    #[form(minimum = 0, maximum = 150, default = 30)]
    age: u8,
    #[form(minimum = -40, maximum = 2.5, default = -1.5)]
    temperature: f64,
    #[form(default = true)]
    ok: bool,
    #[form(default = "s")]
    size: Size,
    legacy: Legacy,
    phase: Option<Tag>,
    #[form(min_items = 1, max_items = 2, default = ["x"])]
    tags: Vec<Tag>,
    flags: Vec<Flag>,
}

#[resolver]
async fn order_details() -> Elicit<OrderForm> {
    Elicit::form("Order details?")
}

/// Asks a form of every shape.
#[tool]
async fn order(#[resolve(order_details)] form: OrderForm) -> String {
    form.name
}

/// Asks a yes or no.
#[tool]
async fn ship(service: String, #[confirm("Ship {service}?")] ok: bool) -> String {
    format!("{service}: {ok}")
}

fn schema_server() -> Server {
    Server::new("schemas")
        .state_keys(StateKeys::new(&[3; 32]).unwrap())
        .tool(add)
        .tool(ship_parcel)
        .tool(list_lines)
        .tool(maybe_count)
        .tool(order)
        .tool(ship)
}

/// Compiles `schema` as JSON Schema: against the meta-schema of its declared dialect (`$schema`)
/// or of the default one, 2020-12; every `$ref` must resolve and every `pattern` compile.
fn assert_valid_schema(what: &str, schema: &Value) {
    assert!(schema.is_object(), "{what}: not a schema object: {schema}");
    let url = "urn:mcp-resolve:emitted";
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler
        .add_resource(url, schema.clone())
        .unwrap_or_else(|e| panic!("{what}: {e:#}\n{schema:#}"));
    compiler
        .compile(url, &mut boon::Schemas::new())
        .unwrap_or_else(|e| panic!("{what} is not valid JSON Schema: {e:#}\n{schema:#}"));
}

/// Base protocol: "Schemas MUST be valid according to their declared or default dialect" (2020-12
/// when no `$schema`). Every schema the server emits — each tool's `inputSchema` and
/// `outputSchema` on every protocol version, and each `requestedSchema` of an elicitation, on
/// both eras — compiles against the JSON Schema meta-schema, its `$ref`s resolving.
#[tokio::test]
async fn emitted_schemas_are_valid_for_their_dialect() {
    let server = Arc::new(schema_server());
    let mut checked = 0;
    let mut lists = Vec::new();
    let mut modern = TestClient::stateless(server.clone(), json!({"elicitation": {}}));
    lists.push(("2026-07-28", modern.request("tools/list", json!({})).await));
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ] {
        let mut c = TestClient::handshake(server.clone(), version, json!({})).await;
        lists.push((version.as_str(), c.request("tools/list", json!({})).await));
    }
    for (version, list) in &lists {
        let tools = list["result"]["tools"].as_array().unwrap_or_else(|| panic!("{list}"));
        assert_eq!(tools.len(), 6, "{version}: {list}");
        for tool in tools {
            let name = &tool["name"];
            assert_valid_schema(&format!("{version} {name} inputSchema"), &tool["inputSchema"]);
            checked += 1;
            if let Some(output) = tool.get("outputSchema") {
                assert_valid_schema(&format!("{version} {name} outputSchema"), output);
                checked += 1;
            }
        }
    }
    // The wrapped and nested shapes are there (the check above saw them).
    let modern_tools = &lists[0].1["result"]["tools"];
    let parcel = modern_tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ship_parcel")
        .unwrap();
    assert!(parcel["inputSchema"]["$defs"].is_object(), "{parcel}");
    assert_eq!(parcel["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region");
    assert!(
        parcel["inputSchema"]["properties"]["zone"]["minimum"].is_i64(),
        "{parcel}"
    );
    let lines = modern_tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "list_lines")
        .unwrap();
    assert!(lines["outputSchema"]["$defs"].is_object(), "{lines}");

    // Forms: the 2026-07-28 input request and the handshake era's `elicitation/create`.
    for (tool, arguments) in [("order", json!({})), ("ship", json!({"service": "api"}))] {
        let r = modern.call_tool(tool, arguments.clone()).await;
        let requests = r["result"]["inputRequests"]
            .as_object()
            .unwrap_or_else(|| panic!("{r}"));
        for (key, request) in requests {
            let schema = &request["params"]["requestedSchema"];
            assert_valid_schema(&format!("2026-07-28 {tool} {key} requestedSchema"), schema);
            checked += 1;
        }
        let mut c =
            TestClient::handshake(server.clone(), ProtocolVersion::V2025_11_25, json!({"elicitation": {}})).await;
        c.start("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        let asked = c.recv().await;
        assert_eq!(asked["method"], "elicitation/create", "{asked}");
        assert_valid_schema(
            &format!("2025-11-25 {tool} requestedSchema"),
            &asked["params"]["requestedSchema"],
        );
        checked += 1;
    }
    assert_eq!(checked, 5 * 6 + 5 * 4 + 4, "every schema was checked");
}

// ---------------------------------------------------------------- T25-28

static TALLIED: AtomicUsize = AtomicUsize::new(0);

/// Counts its runs (only the session test calls it).
#[tool]
async fn tally() -> String {
    TALLIED.fetch_add(1, Ordering::SeqCst);
    "counted".into()
}

/// Transports (2025-11-25): "Servers that require a session ID SHOULD respond to requests without
/// an `MCP-Session-Id` header (other than initialization) with HTTP 400 Bad Request." A
/// handshake-era request without its session — naming its version or not — is 400, and nothing
/// of it runs; with the session it is served.
#[tokio::test]
async fn a_handshake_request_without_its_session_id_is_400() {
    let addr = serve(Server::new("sessions").tool(tally), HttpOptions::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = post(addr, &[JSON, ACCEPT], &init).await;
    assert_eq!(r.status, 200);
    let session = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let in_session = [
        JSON,
        ACCEPT,
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &in_session, &initialized).await.status, 202);

    let call = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "tally", "arguments": {}}});
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        for request in [call(2), list.clone()] {
            let headers = [JSON, ACCEPT, ("mcp-protocol-version", version)];
            let r = post(addr, &headers, &request).await;
            assert_eq!(r.status, 400, "{version} {request}");
            let body = r.json().await;
            assert_eq!(body["error"]["code"], -32600, "{version}: {body}");
            assert_eq!(body["id"], request["id"], "{body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains("no valid session"), "{message}");
        }
    }
    // Without a version header either: 400 too (the header a 2026-07-28 request needs is missing).
    let r = post(addr, &[JSON, ACCEPT], &call(4)).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json().await["error"]["code"], -32020);
    assert_eq!(TALLIED.load(Ordering::SeqCst), 0, "no request without its session ran");

    let r = post(addr, &in_session, &call(5)).await;
    assert_eq!(r.status, 200);
    assert_eq!(text(&r.json().await), "counted", "served in its session");
    assert_eq!(TALLIED.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------- C25-4, C26-7, C25-6, C26-9

/// A handshake-era client and a 2026-07-28 one, each on its own connection to `server`.
async fn both_eras(server: Server) -> [(TestClient, &'static str); 2] {
    let server = Arc::new(server);
    [
        (
            TestClient::handshake(server.clone(), ProtocolVersion::V2025_11_25, json!({})).await,
            "2025-11-25",
        ),
        (TestClient::stateless(server, json!({})), "2026-07-28"),
    ]
}

/// Cancellation: "Both parties MUST handle these race conditions gracefully" — a cancellation
/// arriving after the request completed. It is ignored: no answer to it, and another call in
/// flight runs to its end; the connection goes on.
#[tokio::test(start_paused = true)]
async fn a_cancellation_after_the_response_is_handled_gracefully() {
    for (mut c, era) in both_eras(Server::new("races").tool(add).tool(nap)).await {
        let done = c
            .start("tools/call", json!({"name": "add", "arguments": {"a": 1, "b": 2}}))
            .await;
        let r = c.response_to(&json!(done)).await;
        assert_eq!(r["result"]["structuredContent"]["result"], 3, "{era}: {r}");
        let running = c
            .start("tools/call", json!({"name": "nap", "arguments": {"ms": 5_000}}))
            .await;
        c.notify(
            "notifications/cancelled",
            json!({"requestId": done, "reason": "too late"}),
        )
        .await;
        // The cancellation is read before the nap ends (the clock stands still meanwhile).
        assert!(c.request("tools/list", json!({})).await["result"]["tools"].is_array());
        let r = c.response_to(&json!(running)).await;
        assert_eq!(text(&r), "awake", "{era}: the call in flight was not touched: {r}");
        let r = c.call_tool("add", json!({"a": 2, "b": 2})).await;
        assert_eq!(r["result"]["structuredContent"]["result"], 4, "{era}: {r}");
        assert!(
            c.try_recv(Duration::from_secs(1)).await.is_none(),
            "{era}: the late cancellation got no answer"
        );
    }
}

/// Cancellation: "Invalid cancellation notifications SHOULD be ignored: unknown request IDs,
/// already completed requests, malformed notifications." None of them is answered, none touches
/// the call in flight (not even one naming its id as a string, another id), and the connection
/// goes on.
#[tokio::test(start_paused = true)]
async fn invalid_cancellations_are_ignored() {
    for (mut c, era) in both_eras(Server::new("invalid").tool(add).tool(nap)).await {
        let running = c
            .start("tools/call", json!({"name": "nap", "arguments": {"ms": 5_000}}))
            .await;
        let cancel = |params: Value| json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params});
        let invalid = [
            cancel(json!({"requestId": 999})),
            cancel(json!({"requestId": "no-such-request"})),
            cancel(json!({"requestId": running.to_string()})),
            cancel(json!({"requestId": null})),
            cancel(json!({"requestId": true})),
            cancel(json!({"requestId": {"id": running}})),
            cancel(json!({"requestId": [running]})),
            cancel(json!({"reason": "no id at all"})),
            cancel(json!({})),
            cancel(json!("not an object")),
            cancel(json!([running])),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}),
        ];
        for frame in &invalid {
            c.send(frame).await;
        }
        c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"#)
            .await;
        let r = c.call_tool("add", json!({"a": 1, "b": 2})).await;
        assert_eq!(
            r["result"]["structuredContent"]["result"], 3,
            "{era}: still served: {r}"
        );
        let r = c.response_to(&json!(running)).await;
        assert_eq!(text(&r), "awake", "{era}: the call in flight ran to its end: {r}");
        // Only the unreadable frame is answered (a parse error, as any unreadable frame is).
        let mut answers = Vec::new();
        while let Some(frame) = c.try_recv(Duration::from_secs(1)).await {
            answers.push(frame);
        }
        assert!(
            answers
                .iter()
                .all(|a| a["error"]["code"] == -32700 && a["id"].is_null()),
            "{era}: {answers:?}"
        );
        assert_eq!(answers.len(), 1, "{era}: {answers:?}");
    }
}

// ---------------------------------------------------------------- P25-7

/// Ping: "Implementations SHOULD log ping failures for diagnostics." A ping the client leaves
/// unanswered is logged, as a warning, when the server gives up on the connection.
#[tokio::test(start_paused = true)]
async fn an_unanswered_ping_is_logged() {
    logs();
    let every = Duration::from_secs(60);
    let mut c = TestClient::handshake(
        Server::new("pings").tool(add).ping_interval(Some(every)),
        ProtocolVersion::V2025_11_25,
        json!({}),
    )
    .await;
    let ping = c.try_recv(Duration::from_secs(600)).await.expect("a ping");
    assert_eq!(ping["method"], "ping", "{ping}");
    let warned = |log: &str| {
        log.lines()
            .any(|l| l.contains("WARN") && l.contains("the client answered no ping in time"))
    };
    assert!(!warned(&log_text()), "nothing to log yet");
    // Unanswered: the server cancels its ping and ends the connection, and says why.
    let given_up = c.try_recv(Duration::from_secs(600)).await.expect("the ping cancelled");
    assert_eq!(given_up["method"], "notifications/cancelled", "{given_up}");
    assert!(
        c.try_recv(Duration::from_secs(600)).await.is_none(),
        "the connection ended"
    );
    let (_, ended) = c.close().await;
    assert!(ended.is_ok(), "{ended:?}");
    let log = log_text();
    assert!(warned(&log), "the failed ping is logged: {log}");
}

// ---------------------------------------------------------------- TL25-5, TL26-8, TL25-8, TL26-11

/// Adds, as `Add`: another tool than `add`.
#[tool(name = "Add")]
async fn add_upper(a: i64, b: i64) -> String {
    format!("Add: {}", a + b)
}

/// Tools: "Tool names SHOULD be considered case-sensitive." `add` and `Add` are two tools, each
/// called by its exact name; `ADD` names neither.
#[tokio::test]
async fn tool_names_are_case_sensitive() {
    for (mut c, era) in both_eras(Server::new("cases").tool(add).tool(add_upper)).await {
        let names: Vec<Value> = c.request("tools/list", json!({})).await["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(names, [json!("add"), json!("Add")], "{era}");
        let r = c.call_tool("add", json!({"a": 1, "b": 2})).await;
        assert_eq!(r["result"]["structuredContent"]["result"], 3, "{era}: {r}");
        let r = c.call_tool("Add", json!({"a": 1, "b": 2})).await;
        assert_eq!(text(&r), "Add: 3", "{era}: {r}");
        for other in ["ADD", "aDD", "adD"] {
            let r = c.call_tool(other, json!({"a": 1, "b": 2})).await;
            assert_eq!(r["error"]["code"], -32602, "{era}: {other} is no tool: {r}");
        }
    }
}

/// Adds, registered under a name already taken.
#[tool(name = "add")]
async fn add_again(a: i64, b: i64) -> String {
    format!("{}", a + b)
}

/// Tools: "Tool names SHOULD be unique within a server." A second tool of a name already
/// registered is refused where the server is built (a programming error: `Server::tool` panics,
/// naming it), whether it is the same function or another one.
#[test]
fn a_second_tool_of_the_same_name_is_refused() {
    let refusal = |build: fn() -> Server| {
        let Err(panic) = std::panic::catch_unwind(build) else {
            panic!("registration refused")
        };
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap()
    };
    let same = refusal(|| Server::new("t").tool(add).tool(nap).tool(add));
    assert_eq!(same, "a tool named `add` is already registered");
    let other = refusal(|| Server::new("t").tool(add).tool(add_again));
    assert_eq!(other, "a tool named `add` is already registered");
    // Names differing in case only are two names.
    let _ = Server::new("t").tool(add).tool(add_upper);
}

// ---------------------------------------------------------------- TL26-3, PR26-3, R26-3, TL26-4

/// Greets someone.
#[prompt]
async fn greet(name: String) -> String {
    format!("Hello {name}.")
}

/// Says goodbye.
#[prompt]
async fn farewell() -> String {
    "Bye.".into()
}

/// A note.
#[resource(uri = "test://notes/readme")]
async fn readme() -> String {
    "read me".into()
}

/// Another note.
#[resource(uri = "test://notes/todo")]
async fn todo() -> String {
    "- test".into()
}

/// A note by id.
#[resource(template = "test://notes/{id}")]
async fn note(id: String) -> String {
    format!("note {id}")
}

fn listing_server() -> Server {
    Server::new("lists")
        .state_keys(StateKeys::new(&[5; 32]).unwrap())
        .tool(add)
        .tool(nap)
        .tool(ship)
        .tool(add_upper)
        .prompt(greet)
        .prompt(farewell)
        .resource(readme)
        .resource(todo)
        .resource(note)
}

/// `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list` on `c`, each
/// with `params`.
async fn lists_with(c: &mut TestClient, params: Value) -> Vec<Value> {
    let mut all = Vec::new();
    for method in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ] {
        let r = c.request(method, params.clone()).await;
        assert!(r["result"].is_object(), "{method}: {r}");
        all.push(r["result"].clone());
    }
    all
}

async fn lists(c: &mut TestClient) -> Vec<Value> {
    lists_with(c, json!({})).await
}

/// Tools, prompts, resources (2026-07-28): "[The set] MUST NOT vary per-connection or as a side
/// effect of other requests on the connection." Two connections, whose clients declare other
/// capabilities and names, list the same tools, prompts, resources and templates; so does the
/// first after calls, reads, prompts, completions, a question left unanswered and a log level.
#[tokio::test]
async fn lists_do_not_vary_per_connection_or_after_other_requests() {
    let server = Arc::new(listing_server());
    let mut first = TestClient::stateless(server.clone(), json!({"elicitation": {}}));
    let before = lists(&mut first).await;
    assert_eq!(before[0]["tools"].as_array().map(Vec::len), Some(4), "{}", before[0]);
    assert_eq!(before[1]["prompts"].as_array().map(Vec::len), Some(2));
    assert_eq!(before[2]["resources"].as_array().map(Vec::len), Some(2));
    assert_eq!(before[3]["resourceTemplates"].as_array().map(Vec::len), Some(1));

    // Other requests on the first connection.
    assert_eq!(
        first.call_tool("add", json!({"a": 1, "b": 1})).await["result"]["isError"],
        false
    );
    let asked = first.call_tool("ship", json!({"service": "api"})).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert!(first.call_tool("nope", json!({})).await["error"].is_object());
    let got = first
        .request("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}}))
        .await;
    assert!(got["result"]["messages"].is_array(), "{got}");
    let read = first.request("resources/read", json!({"uri": "test://notes/7"})).await;
    assert!(read["result"]["contents"].is_array(), "{read}");
    let leveled = json!({"name": "add", "arguments": {"a": 1, "b": 2},
        "_meta": {"io.modelcontextprotocol/logLevel": "debug", "progressToken": "p"}});
    assert!(first.request("tools/call", leveled).await["result"].is_object());
    first.request("server/discover", json!({})).await;
    assert_eq!(lists(&mut first).await, before, "the same after other requests");

    // Another connection, another client.
    for capabilities in [
        json!({}),
        json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}),
    ] {
        let mut second = TestClient::stateless(server.clone(), capabilities);
        let other =
            json!({"_meta": {"io.modelcontextprotocol/clientInfo": {"name": "another-client", "version": "9"}}});
        assert_eq!(
            lists_with(&mut second, other).await,
            before,
            "the same on another connection"
        );
    }
    // And the handshake era's connections list the same items.
    for (version, caps) in [
        (ProtocolVersion::V2025_11_25, json!({})),
        (ProtocolVersion::V2025_11_25, json!({"elicitation": {}, "sampling": {}})),
    ] {
        let mut c = TestClient::handshake(server.clone(), version, caps).await;
        c.call_tool("add", json!({"a": 1, "b": 1})).await;
        let legacy = lists(&mut c).await;
        for (key, (old, new)) in ["tools", "prompts", "resources", "resourceTemplates"]
            .iter()
            .zip(legacy.iter().zip(&before))
        {
            assert_eq!(old[key], new[key], "{key} on a handshake-era connection");
        }
    }
}

/// Tools (2026-07-28): "Servers SHOULD return tools in a deterministic order (i.e., the same
/// ordering across requests when the underlying set of tools has not changed)." The order is the
/// order of registration: the same on every request, on every connection, and on every replica
/// built the same way.
#[tokio::test]
async fn tools_are_listed_in_a_deterministic_order() {
    let registered = [
        "add",
        "nap",
        "ship",
        "Add",
        "ship_parcel",
        "list_lines",
        "maybe_count",
        "order",
        "tally",
    ];
    let replica = || {
        Server::new("replica")
            .state_keys(StateKeys::new(&[5; 32]).unwrap())
            .tool(add)
            .tool(nap)
            .tool(ship)
            .tool(add_upper)
            .tool(ship_parcel)
            .tool(list_lines)
            .tool(maybe_count)
            .tool(order)
            .tool(tally)
    };
    let names = |list: &Value| -> Vec<String> {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    for _ in 0..3 {
        let server = Arc::new(replica());
        for _ in 0..2 {
            let mut c = TestClient::stateless(server.clone(), json!({}));
            for _ in 0..2 {
                let list = c.request("tools/list", json!({})).await;
                assert_eq!(names(&list), registered, "{list}");
            }
        }
    }
}

// ---------------------------------------------------------------- E25-8

/// What the consent page records.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Connected {
    account: String,
}

#[resolver(key = "connect")]
async fn consent(service: String) -> Elicit<Connected> {
    Elicit::url(
        format!("Sign in to {service} on the page to connect it"),
        format!("https://notes.example/connect?service={service}"),
    )
}

/// Connects an account through a page of the server's.
#[tool]
async fn connect_account(service: String, #[resolve(consent)] c: ElicitationResult<Connected>) -> String {
    match c {
        ElicitationResult::Accepted(c) => format!("connected {service} as {}", c.account),
        other => format!("{service} not connected: {other:?}"),
    }
}

/// The `flow` query parameter of a URL-mode question's URL.
fn flow_of(asked: &Value) -> String {
    let url = asked["params"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("no url: {asked}"));
    url.split(['?', '&'])
        .find_map(|p| p.strip_prefix("flow="))
        .unwrap_or_else(|| panic!("no flow in {url}"))
        .to_owned()
}

/// Elicitation (2025-11-25): "Servers sending [`notifications/elicitation/complete`] MUST only
/// send the notification to the client that initiated the elicitation request." Two clients
/// each wait for their own page, a third is idle: completing one page tells its client only,
/// with its own `elicitationId`.
#[tokio::test(start_paused = true)]
async fn the_elicitation_complete_notification_goes_to_the_asking_client_only() {
    let server = Arc::new(
        Server::new("urls")
            .anonymous_url_flows()
            .state_keys(StateKeys::new(&[9; 32]).unwrap())
            .elicitation_timeout(Duration::from_secs(60))
            .tool(connect_account),
    );
    let flows: UrlFlows = server.url_flows();
    let caps = json!({"elicitation": {"form": {}, "url": {}}});
    let v = ProtocolVersion::V2025_11_25;
    let mut a = TestClient::handshake(server.clone(), v, caps.clone()).await;
    let mut b = TestClient::handshake(server.clone(), v, caps.clone()).await;
    let mut idle = TestClient::handshake(server.clone(), v, caps).await;
    let ask = |c: &'static str| json!({"name": "connect_account", "arguments": {"service": c}});
    let call_a = a.start("tools/call", ask("github")).await;
    let asked_a = a.recv().await;
    let call_b = b.start("tools/call", ask("gitlab")).await;
    let asked_b = b.recv().await;
    assert_eq!(
        (&asked_a["method"], &asked_b["method"]),
        (&json!("elicitation/create"), &json!("elicitation/create"))
    );
    let (flow_a, flow_b) = (flow_of(&asked_a), flow_of(&asked_b));
    assert_ne!(flow_a, flow_b);
    let accept = |asked: &Value| json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}});

    for (flow, account) in [(&flow_a, "octocat"), (&flow_b, "tanuki")] {
        let done = Connected {
            account: account.into(),
        };
        flows.complete(flow, None, &done).await.unwrap();
    }
    a.send(&accept(&asked_a)).await;
    let note = a.recv().await;
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": flow_a}})
    );
    assert_eq!(
        text(&a.response_to(&json!(call_a)).await),
        "connected github as octocat"
    );
    assert!(
        b.try_recv(Duration::from_secs(1)).await.is_none(),
        "b waits for its own page only"
    );
    assert!(
        idle.try_recv(Duration::from_secs(1)).await.is_none(),
        "the idle client is told nothing"
    );

    b.send(&accept(&asked_b)).await;
    let note = b.recv().await;
    assert_eq!(note["params"], json!({"elicitationId": flow_b}), "{note}");
    assert_eq!(text(&b.response_to(&json!(call_b)).await), "connected gitlab as tanuki");
    assert!(
        a.try_recv(Duration::from_secs(1)).await.is_none(),
        "a is not told of b's page"
    );
    assert!(idle.try_recv(Duration::from_secs(1)).await.is_none());
}

// ---------------------------------------------------------------- CO25-8, CO25-9, CO26-8, CO26-9

static SECRETS_SUGGESTED: AtomicUsize = AtomicUsize::new(0);

/// The names of secrets: sensitive suggestions.
async fn secret_names(value: String, _cx: Context) -> Vec<String> {
    SECRETS_SUGGESTED.fetch_add(1, Ordering::SeqCst);
    ["alpha-secret", "beta-secret"]
        .iter()
        .filter(|s| s.starts_with(&value))
        .map(|s| s.to_string())
        .collect()
}

async fn colours(value: String, _cx: Context) -> Vec<String> {
    ["red", "green"]
        .iter()
        .filter(|s| s.starts_with(&value))
        .map(|s| s.to_string())
        .collect()
}

/// Opens a secret; only for callers granted `vault:read`.
#[prompt(scopes = ["vault:read"])]
async fn open_secret(#[arg(complete = secret_names)] name: String) -> String {
    format!("Open {name}.")
}

/// A secret; only for callers granted `vault:read`.
#[resource(template = "vault://secrets/{name}", scopes = ["vault:read"])]
async fn secret(#[arg(complete = secret_names)] name: String) -> String {
    format!("secret {name}")
}

/// Paints; for everyone.
#[prompt]
async fn paint(#[arg(complete = colours)] colour: String) -> String {
    format!("Paint it {colour}.")
}

fn vault_server() -> Server {
    Server::new("vault").prompt(open_secret).prompt(paint).resource(secret)
}

/// The two completions of a secret's name: of the prompt's argument, of the template's variable.
fn secret_completions() -> [Value; 2] {
    [
        json!({"ref": {"type": "ref/prompt", "name": "open_secret"}, "argument": {"name": "name", "value": ""}}),
        json!({"ref": {"type": "ref/resource", "uri": "vault://secrets/{name}"}, "argument": {"name": "name", "value": ""}}),
    ]
}

/// Bearer tokens for the completion test: `reader` is granted nothing, `keeper` `vault:read`.
struct VaultTokens;

impl mcp_resolve::auth::TokenVerifier for VaultTokens {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> mcp_resolve::auth::BoxFuture<'a, Result<mcp_resolve::Principal, mcp_resolve::auth::AuthError>> {
        Box::pin(async move {
            let scopes = match token {
                "reader" => vec![],
                "keeper" => vec!["vault:read".to_string()],
                _ => return Err(mcp_resolve::auth::AuthError::new("unknown token")),
            };
            Ok(mcp_resolve::Principal {
                subject: token.into(),
                issuer: None,
                scopes,
            })
        })
    }
}

/// Completion: "Implementations MUST: control access to sensitive suggestions" and "prevent
/// completion-based information disclosure". A completion of a scoped prompt's argument or
/// resource template's variable needs the prompt's or resource's scopes: a caller without them
/// gets the refusal, no value, and the completer never runs; a caller with them gets the values.
/// In memory (no token: refused on both eras) and over HTTP (a token without the scope: 403; with
/// it: 200).
#[tokio::test]
async fn completions_of_scoped_items_need_their_scopes() {
    let before = SECRETS_SUGGESTED.load(Ordering::SeqCst);
    for (mut c, era) in both_eras(vault_server()).await {
        for params in secret_completions() {
            let r = c.request("completion/complete", params.clone()).await;
            assert_eq!(r["error"]["code"], -32600, "{era}: {r}");
            assert_eq!(r["error"]["data"]["error"], "insufficient_scope", "{era}: {r}");
            assert!(
                r.get("result").is_none() && !r.to_string().contains("-secret"),
                "{era}: {r}"
            );
        }
        let open =
            json!({"ref": {"type": "ref/prompt", "name": "paint"}, "argument": {"name": "colour", "value": "r"}});
        let r = c.request("completion/complete", open).await;
        assert_eq!(
            r["result"]["completion"]["values"],
            json!(["red"]),
            "{era}: an open prompt completes: {r}"
        );
    }
    assert_eq!(SECRETS_SUGGESTED.load(Ordering::SeqCst), before, "no completer ran");

    let options = HttpOptions::default()
        .bearer(VaultTokens)
        .authorization_server("https://auth.test");
    let addr = serve(vault_server(), options).await;
    for (i, params) in secret_completions().into_iter().enumerate() {
        let id = i as i64 + 1;
        let r = post_2026(
            addr,
            id,
            "completion/complete",
            params.clone(),
            &[("authorization", "Bearer reader")],
        )
        .await;
        assert_eq!(r.status, 403);
        let body = r.json().await;
        assert_eq!(body["error"]["data"]["error"], "insufficient_scope", "{body}");
        assert!(!body.to_string().contains("-secret"), "{body}");
        assert_eq!(SECRETS_SUGGESTED.load(Ordering::SeqCst), before + i, "no completer ran");
        let r = post_2026(
            addr,
            id,
            "completion/complete",
            params,
            &[("authorization", "Bearer keeper")],
        )
        .await;
        assert_eq!(r.status, 200);
        let body = r.json().await;
        assert_eq!(
            body["result"]["completion"]["values"],
            json!(["alpha-secret", "beta-secret"]),
            "{body}"
        );
    }
    assert_eq!(
        SECRETS_SUGGESTED.load(Ordering::SeqCst),
        before + 2,
        "only the keeper's ran"
    );
}

// ---------------------------------------------------------------- A25-24, AS26-4

/// Who is calling.
#[cfg(feature = "jwt")]
#[tool]
async fn whoami(cx: Context) -> String {
    cx.principal().map(|p| p.subject.clone()).unwrap_or_default()
}

/// Authorization: "Clients and servers MUST implement secure token storage and follow OAuth best
/// practices" — the server keeps no token: verified, it is dropped (the principal is kept), and
/// no bearer token, accepted or refused, reaches the log (a refusal logs its reason only), on
/// either era. Checked with the shipped HS256 verifier: its refusal reasons name no token.
#[cfg(feature = "jwt")]
#[tokio::test]
async fn no_bearer_token_reaches_the_log() {
    use mcp_resolve::auth::TokenVerifier as _;
    logs();
    const AUDIENCE: &str = "https://vault.test/mcp";
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).unwrap();
    let verifier = || mcp_resolve::auth::Hs256Verifier::new(&secret, AUDIENCE).unwrap();
    let sign = |claims: Value, key: &[u8]| {
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(key).unwrap(),
        )
        .unwrap()
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let good = sign(json!({"sub": "alice", "aud": AUDIENCE, "exp": now + 600}), &secret);
    let refused = [
        sign(json!({"sub": "alice", "aud": AUDIENCE, "exp": now - 3600}), &secret),
        sign(
            json!({"sub": "alice", "aud": "https://elsewhere.test", "exp": now + 600}),
            &secret,
        ),
        sign(
            json!({"sub": "alice", "aud": AUDIENCE, "exp": now + 600}),
            b"another secret of thirty-two byte",
        ),
        "garbage-token-7f3a9c".to_string(),
        "eyJhbGciOiJub25lIn0.eyJzdWIiOiJldmUifQ.".to_string(),
    ];
    // Every refusal's reason (what the log would say) names no token.
    for token in &refused {
        let reason = verifier().verify(token).await.unwrap_err().to_string();
        assert!(!reason.contains(token.as_str()), "{reason}");
    }

    let addr = serve(
        Server::new("vault").tool(whoami),
        HttpOptions::default()
            .bearer(verifier())
            .authorization_server("https://auth.test"),
    )
    .await;
    let call = json!({"name": "whoami", "arguments": {}});
    for (i, token) in refused.iter().enumerate() {
        let auth = format!("Bearer {token}");
        let r = post_2026(addr, i as i64, "tools/call", call.clone(), &[("authorization", &auth)]).await;
        assert_eq!(r.status, 401, "{token}");
    }
    let auth = format!("Bearer {good}");
    let r = post_2026(addr, 10, "tools/call", call.clone(), &[("authorization", &auth)]).await;
    assert_eq!(text(&r.json().await), "alice");
    // The handshake era: a session opened and used with the token.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = post(addr, &[JSON, ACCEPT, ("authorization", &auth)], &init).await;
    assert_eq!(r.status, 200);
    let session = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let headers = [
        JSON,
        ACCEPT,
        ("authorization", auth.as_str()),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &headers, &initialized).await.status, 202);
    let r = post(
        addr,
        &headers,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
    )
    .await;
    assert_eq!(text(&r.json().await), "alice");

    let log = log_text();
    assert!(
        log.contains("request refused: bearer token"),
        "a refusal is logged: {log}"
    );
    for token in refused.iter().chain([&good]) {
        // The whole token, and its signature alone.
        let signature = token.rsplit('.').next().unwrap();
        for part in [token.as_str(), signature] {
            if part.len() >= 16 {
                assert!(!log.contains(part), "a token reached the log ({part}): {log}");
            }
        }
    }
}

// ---------------------------------------------------------------- B26-41

/// Needs `admin` (only over HTTP with such a token).
#[tool(scopes = ["admin"])]
async fn purge() -> String {
    "purged".into()
}

/// Base protocol (2026-07-28): "Implementations SHOULD NOT use [clientInfo/serverInfo] to change
/// the behavior of the client or server, and SHOULD NOT rely on them for security decisions."
/// Clients that differ only in `clientInfo` (a known client's name, an "admin" one, none at all)
/// get the same answers to the same requests on both eras — discovery, lists, calls, a question,
/// a refusal for want of scopes.
#[tokio::test]
async fn client_info_changes_no_answer() {
    let server = Arc::new(
        Server::new("info")
            .state_keys(StateKeys::new(&[4; 32]).unwrap())
            .tool(add)
            .tool(ship)
            .tool(purge)
            .prompt(greet),
    );
    let infos = [
        Some(json!({"name": "claude-ai", "version": "1.0"})),
        Some(json!({"name": "admin", "title": "Administrator console", "version": "999"})),
        None,
    ];
    let requests = [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}})),
        ("tools/call", json!({"name": "add", "arguments": {"a": 1, "b": 2}})),
        ("tools/call", json!({"name": "ship", "arguments": {"service": "api"}})),
        ("tools/call", json!({"name": "purge", "arguments": {}})),
    ];
    // 2026-07-28: the envelope carries the client's name on every request.
    let mut answers: Vec<Vec<Value>> = Vec::new();
    for info in &infos {
        let mut c = TestClient::raw(server.clone());
        let mut meta = envelope(json!({"elicitation": {}}));
        match info {
            Some(info) => meta["io.modelcontextprotocol/clientInfo"] = info.clone(),
            None => {
                meta.as_object_mut()
                    .unwrap()
                    .remove("io.modelcontextprotocol/clientInfo");
            }
        }
        let mut seen = Vec::new();
        for (method, params) in &requests {
            let mut params = params.clone();
            params["_meta"] = meta.clone();
            let mut r = c.request(method, params).await;
            // The sealed state differs on every question (a fresh nonce), whoever asks.
            if let Some(result) = r["result"].as_object_mut()
                && result.get("resultType") == Some(&json!("input_required"))
            {
                assert!(result.remove("requestState").is_some(), "{method}: a state");
            }
            seen.push(r);
        }
        assert_eq!(seen[6]["error"]["data"]["error"], "insufficient_scope", "{}", seen[6]);
        assert_eq!(seen[5]["result"]["resultType"], "input_required", "{}", seen[5]);
        answers.push(seen);
    }
    assert_eq!(answers[0], answers[1], "2026-07-28: another name, the same answers");
    assert_eq!(answers[0], answers[2], "2026-07-28: no name, the same answers");

    // The handshake era: `initialize` names the client once, for the session.
    let mut answers: Vec<Vec<Value>> = Vec::new();
    for info in infos.iter().take(2) {
        let mut c = TestClient::raw(server.clone());
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info});
        let mut seen = vec![c.request("initialize", init).await];
        c.notify("notifications/initialized", json!({})).await;
        for (method, params) in requests.iter().skip(1) {
            seen.push(c.request(method, params.clone()).await);
        }
        assert_eq!(seen[6]["error"]["data"]["error"], "insufficient_scope", "{}", seen[6]);
        answers.push(seen);
    }
    assert_eq!(answers[0], answers[1], "2025-11-25: another name, the same answers");
}

// ---------------------------------------------------------------- H26-12, H26-13

/// A note one can listen to.
#[resource(uri = "test://watched")]
async fn watched() -> String {
    "watched".into()
}

/// Streamable HTTP (2026-07-28): "When initiating an SSE stream, servers SHOULD include the
/// `X-Accel-Buffering: no` header in the HTTP response." Every SSE response carries it: a call
/// asking for progress, one asking for log messages, a `subscriptions/listen` stream.
#[tokio::test]
async fn sse_responses_say_x_accel_buffering_no() {
    let addr = serve(Server::new("sse").tool(add).resource(watched), HttpOptions::default()).await;
    let mut progress = json!({"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": envelope(json!({}))});
    progress["_meta"]["progressToken"] = json!("p-1");
    let mut logged = json!({"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": envelope(json!({}))});
    logged["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    let listen = json!({"notifications": {"resourceSubscriptions": ["test://watched"]}});
    for (method, params) in [
        ("tools/call", progress),
        ("tools/call", logged),
        ("subscriptions/listen", listen),
    ] {
        let r = post_2026(addr, 1, method, params, &[]).await;
        assert_eq!(r.status, 200, "{method}");
        assert_eq!(r.headers["content-type"], "text/event-stream", "{method}");
        assert_eq!(
            r.headers.get("x-accel-buffering").map(|v| v.to_str().unwrap()),
            Some("no"),
            "{method}: {:?}",
            r.headers
        );
    }
    // A plain JSON answer is no stream.
    let r = post_2026(
        addr,
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        &[],
    )
    .await;
    assert_eq!(r.headers["content-type"], "application/json");
}

static HOLD_DROPPED: AtomicBool = AtomicBool::new(false);

/// Sets [`HOLD_DROPPED`] when dropped.
struct DropFlag;

impl Drop for DropFlag {
    fn drop(&mut self) {
        HOLD_DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Reports that it started, then holds on for an hour.
#[tool]
async fn hold(cx: Context) -> String {
    let _flag = DropFlag;
    cx.progress(1.0, None, Some("started")).await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "held".into()
}

/// Streamable HTTP (2026-07-28): "Closing the SSE response stream MUST be treated by the server as
/// cancellation of that request." A call answering over SSE is dropped (its future no longer
/// runs) once the client closes the stream; the server goes on serving.
#[tokio::test]
async fn closing_an_sse_response_cancels_its_call() {
    let addr = serve(Server::new("sse").tool(hold).tool(add), HttpOptions::default()).await;
    let mut params = json!({"name": "hold", "arguments": {}, "_meta": envelope(json!({}))});
    params["_meta"]["progressToken"] = json!("h-1");
    let mut r = post_2026(addr, 1, "tools/call", params, &[]).await;
    assert_eq!(r.headers["content-type"], "text/event-stream");
    let first = r.chunk().await.expect("the progress event");
    assert!(first.contains("notifications/progress"), "{first}");
    assert!(
        !HOLD_DROPPED.load(Ordering::SeqCst),
        "the call runs while its stream is open"
    );
    drop(r);
    let cancelled = async {
        while !HOLD_DROPPED.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), cancelled)
        .await
        .expect("the call is cancelled once its stream is closed");
    let r = post_2026(
        addr,
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        &[],
    )
    .await;
    assert_eq!(r.json().await["result"]["structuredContent"]["result"], 3);
}
