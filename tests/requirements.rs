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
use mcp_resolve::{HttpOptions, ProtocolVersion, StateKeys, UrlFlows};
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

/// Serves `server` over Streamable HTTP on a fresh loopback port.
async fn serve(server: Server, options: HttpOptions) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener, options));
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

    async fn json(self) -> Value {
        let body = self.text().await;
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

/// A postal address.
#[derive(Deserialize, JsonSchema)]
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
