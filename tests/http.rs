//! Streamable HTTP: statuses and errors of both eras, sessions, the back-channel over SSE, Host and
//! Origin checks, limits. Raw HTTP/1.1 through hyper's client, against an in-process server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use mcp_resolve::prelude::*;
use mcp_resolve::{HttpOptions, seal::StateKeys};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Clone, Debug, FormSchema)]
struct Ok_ {
    ok: bool,
}

#[resolver]
async fn confirm(path: String) -> Resolution<Ok_> {
    if path == "empty" {
        return Resolution::Value(Ok_ { ok: true });
    }
    Elicit::form(format!("Delete {path}?")).into()
}

/// Delete something.
#[tool]
async fn delete(path: String, #[resolve(confirm)] ok: ElicitationResult<Ok_>) -> String {
    match ok {
        ElicitationResult::Accepted(Ok_ { ok: true }) => format!("deleted {path}"),
        ElicitationResult::Accepted(_) => "kept".into(),
        ElicitationResult::Declined => "declined".into(),
        ElicitationResult::Cancelled => "cancelled".into(),
    }
}

static NAPS_DROPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Naps of a second or more begun (only `bad_bodies_are_refused_and_the_server_keeps_serving`
/// takes one).
static LONG_NAPS_BEGUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct Dropped;
impl Drop for Dropped {
    fn drop(&mut self) {
        NAPS_DROPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Reports progress and logs, then answers.
#[tool]
async fn steps(cx: Context) -> String {
    cx.progress(1.0, Some(2.0), Some("half way")).await;
    cx.log(mcp_resolve::protocol::LogLevel::Info, "half way").await;
    "done".into()
}

/// Sleeps.
#[tool]
async fn nap(ms: u64) -> String {
    let guard = Dropped;
    if ms >= 1000 {
        LONG_NAPS_BEGUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    tokio::time::sleep(Duration::from_millis(ms)).await;
    std::mem::forget(guard);
    "awake".into()
}

static PURGED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Empties the bin; only for callers whose token grants `notes:admin`.
#[tool(scopes = ["notes:admin"])]
async fn purge() -> String {
    PURGED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    "purged".into()
}

/// Says where a request was routed.
#[tool]
async fn route(
    /// The region; mirrored into `Mcp-Param-Region`.
    #[arg(header = "Region")]
    region: String,
    #[arg(header = "Shard")] shard: Option<u32>,
) -> String {
    format!("{region}/{}", shard.unwrap_or(0))
}

/// Ends with -32021 unless the client can sample.
#[tool]
async fn needs_sampling(cx: Context) -> mcp_resolve::tool::CallToolResult {
    if cx.client_capabilities().sampling() {
        return mcp_resolve::tool::CallToolResult::success(vec![mcp_resolve::tool::Content::text("sampled")]);
    }
    mcp_resolve::tool::CallToolResult::protocol_error(mcp_resolve::protocol::ErrorObject::missing_capability(
        json!({"sampling": {}}),
        "needs sampling",
    ))
}

async fn start(options: HttpOptions) -> SocketAddr {
    start_with(options, |s| s).await
}

async fn start_with(options: HttpOptions, tune: impl FnOnce(Server) -> Server) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::new("http-test")
        .tool(delete)
        .tool(nap)
        .tool(steps)
        .tool(purge)
        .tool(route)
        .tool(needs_sampling)
        .state_keys(StateKeys::new(&[7; 32]).unwrap());
    tokio::spawn(tune(server).serve_http_on(listener, options.max_body_bytes(64 * 1024)));
    addr
}

struct Reply {
    status: u16,
    headers: http::HeaderMap,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    /// The JSON of each SSE `data:` line.
    fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }
}

async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    send_to(addr, method, "/mcp", headers, body).await
}

async fn send_to(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", format!("127.0.0.1:{}", addr.port()));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    // Bounded: a regression that turns a refusal into an open stream fails here, naming the
    // request, instead of hanging the suite.
    let exchange = async {
        let resp: http::Response<Incoming> = sender.send_request(req).await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = String::from_utf8(resp.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
        Reply { status, headers, body }
    };
    tokio::time::timeout(Duration::from_secs(20), exchange)
        .await
        .unwrap_or_else(|_| panic!("no whole response to {method} {path} within 20 s"))
}

fn envelope(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// A well-formed 2026-07-28 POST.
async fn modern(addr: SocketAddr, id: i64, method: &str, mut params: Value) -> Reply {
    params["_meta"] = envelope(json!({"elicitation": {}}));
    let name = params.get("name").and_then(Value::as_str).unwrap_or("").to_string();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if !name.is_empty() {
        headers.push(("mcp-name", &name));
    }
    send(addr, "POST", &headers, &body).await
}

const JSON: (&str, &str) = ("content-type", "application/json");

#[tokio::test]
async fn stateless_calls_and_rounds() {
    let addr = start(HttpOptions::default()).await;
    let r = modern(addr, 1, "server/discover", json!({})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["resultType"], "complete");
    assert!(r.headers.get("mcp-session-id").is_none(), "no sessions on 2026-07-28");
    let r = modern(
        addr,
        2,
        "tools/call",
        json!({"name": "delete", "arguments": {"path": "x"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(v["result"]["resultType"], "input_required");
    let state = v["result"]["requestState"].as_str().unwrap().to_string();
    let retry = json!({"name": "delete", "arguments": {"path": "x"}, "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}, "requestState": state});
    let r = modern(addr, 3, "tools/call", retry.clone()).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "deleted x");
    let mut tampered = retry;
    tampered["requestState"] = json!(format!("{state}-TAMPERED"));
    let r = modern(addr, 4, "tools/call", tampered).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["error"],
        json!({"code": -32602, "message": "Invalid or expired requestState", "data": {"reason": "invalid_request_state"}})
    );
    assert_eq!(r.json()["id"], 4);
}

#[tokio::test]
async fn header_and_envelope_errors_have_their_statuses() {
    let addr = start(HttpOptions::default()).await;
    let call =
        |meta: Value| json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": meta}}).to_string();
    let good = call(envelope(json!({})));
    type Case<'a> = (Vec<(&'a str, &'a str)>, String, u16, i64);
    let cases: Vec<Case> = vec![
        (vec![JSON], good.clone(), 400, -32020),
        (
            vec![JSON, ("mcp-protocol-version", "2026-07-28")],
            call(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})),
            400,
            -32602,
        ),
        (
            vec![JSON, ("mcp-protocol-version", "2027-01-01")],
            good.clone(),
            400,
            -32020,
        ),
        (
            vec![
                JSON,
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
            ],
            good.clone(),
            400,
            -32020,
        ),
        (
            vec![
                JSON,
                ("mcp-protocol-version", "2027-01-01"),
                ("mcp-method", "tools/list"),
            ],
            call(
                json!({"io.modelcontextprotocol/protocolVersion": "2027-01-01", "io.modelcontextprotocol/clientCapabilities": {}}),
            ),
            400,
            -32022,
        ),
        // The standard headers are required, not only compared when present.
        (
            vec![JSON, ("mcp-protocol-version", "2026-07-28")],
            good.clone(),
            400,
            -32020,
        ),
    ];
    for (headers, body, status, code) in cases {
        let r = send(addr, "POST", &headers, &body).await;
        assert_eq!(r.status, status, "{headers:?}: {}", r.body);
        assert_eq!(r.json()["error"]["code"], code, "{headers:?}: {}", r.body);
        assert_eq!(r.json()["id"], 9);
    }
    let r = modern(
        addr,
        5,
        "tools/call",
        json!({"name": "delete", "arguments": {"path": "x"}}),
    )
    .await;
    assert_eq!(r.status, 200);
    let body = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "nap", "arguments": {"ms": 1}, "_meta": envelope(json!({}))}}).to_string();
    let r = send(
        addr,
        "POST",
        &[
            JSON,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "delete"),
        ],
        &body,
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020)),
        "Mcp-Name mismatch"
    );
    for method in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "nope"] {
        let r = modern(addr, 7, method, json!({})).await;
        assert_eq!(r.status, 404, "{method}");
        assert_eq!(r.json()["error"]["code"], -32601);
    }
    assert_eq!(send(addr, "GET", &[], "").await.status, 405);
    assert_eq!(send(addr, "DELETE", &[], "").await.status, 405);
}

#[tokio::test]
async fn bad_bodies_are_refused_and_the_server_keeps_serving() {
    let addr = start(HttpOptions::default()).await;
    let r = send(addr, "POST", &[("content-type", "text/plain")], "{}").await;
    assert_eq!(r.status, 415);
    let r = send(addr, "POST", &[JSON], "{nope").await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!(-32700)));
    let r = send(
        addr,
        "POST",
        &[JSON],
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
    )
    .await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!(-32600)));
    let big = format!("{{\"x\":\"{}\"}}", "a".repeat(100 * 1024));
    assert_eq!(send(addr, "POST", &[JSON], &big).await.status, 413);
    // A client that goes away mid-call does not hurt the server.
    {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        let conn = tokio::spawn(conn);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nap", "arguments": {"ms": 5000}, "_meta": envelope(json!({}))}}).to_string();
        let req = http::Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "nap")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let pending = tokio::spawn(async move { sender.send_request(req).await });
        // The client goes away once the call runs (not after a guessed time: on a loaded
        // machine the request may take longer to arrive).
        let begun = tokio::time::timeout(Duration::from_secs(10), async {
            while LONG_NAPS_BEGUN.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(begun.is_ok(), "the 5 s nap did not begin within 10 s");
        pending.abort();
        conn.abort();
    }
    // The call was dropped with the connection: its future did not run to the end (within
    // 4 s, so long before the nap itself would have ended).
    for _ in 0..200 {
        if NAPS_DROPPED.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        NAPS_DROPPED.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the abandoned call is cancelled"
    );
    let r = modern(addr, 2, "tools/call", json!({"name": "nap", "arguments": {"ms": 1}})).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "awake");
}

#[tokio::test]
async fn dns_rebinding_is_refused() {
    let addr = start(HttpOptions::default().allow_host("notes.example.com")).await;
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope(json!({}))}})
            .to_string();
    for (host, origin, expected) in [
        ("evil.example", None, 403),
        ("127.0.0.1", Some("http://evil.example"), 403),
        ("notes.example.com", None, 200),
        ("localhost", Some("http://localhost:3000"), 200),
        // Loopback is decided on the parsed host, never on a prefix (issue 22's probes).
        ("127.0.0.1", Some("http://[::1]evil.com"), 403),
        ("127.attacker.example", None, 403),
        ("127.0.0.1", Some("http://127.attacker.example"), 403),
        ("[::1]evil.com", None, 403),
    ] {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
        tokio::spawn(conn);
        let mut req = http::Request::post("/mcp")
            .header("host", host)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "server/discover");
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        let resp = tokio::time::timeout(
            Duration::from_secs(10),
            sender.send_request(req.body(Full::new(Bytes::from(body.clone()))).unwrap()),
        )
        .await
        .unwrap_or_else(|_| panic!("no response head within 10 s: host {host}, origin {origin:?}"))
        .unwrap();
        assert_eq!(resp.status().as_u16(), expected, "host {host}, origin {origin:?}");
    }
}

/// A handshake-era call answered over SSE is several small writes (the priming event, the
/// result, the end of the chunked body). With Nagle's algorithm on, each waited for the client's
/// delayed ACK on a keep-alive connection, about 40 ms a call (a fresh connection, in TCP's
/// quick-ACK start, hid it: every other test here opens one per request). The listener turns
/// Nagle off.
#[tokio::test]
async fn handshake_calls_on_one_keep_alive_connection_do_not_wait_for_delayed_acks() {
    let addr = start(HttpOptions::default()).await;
    let sid = session_as(addr, None).await;
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let calls = 20;
    let started = std::time::Instant::now();
    for id in 10..10 + calls {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "nap", "arguments": {"ms": 0}}});
        let req = http::Request::post("/mcp")
            .header("host", format!("127.0.0.1:{}", addr.port()))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::new(Bytes::from(call.to_string())))
            .unwrap();
        sender.ready().await.unwrap();
        let resp = sender.send_request(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        let body = String::from_utf8_lossy(&body);
        assert!(body.contains(&format!("\"id\":{id}")), "{body}");
    }
    let took = started.elapsed();
    // Waiting for delayed ACKs, the calls took 20 × 40 ms and more.
    assert!(
        took < Duration::from_millis(400),
        "{calls} handshake-era calls on one connection took {took:?}"
    );
}

#[tokio::test]
async fn handshake_sessions_ask_over_sse() {
    let addr = start(HttpOptions::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = send(addr, "POST", &[JSON], &init.to_string()).await;
    assert_eq!(r.status, 200);
    let sid = r.headers.get("mcp-session-id").unwrap().to_str().unwrap().to_string();
    assert!(sid.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let h = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    assert_eq!(
        send(
            addr,
            "POST",
            &h,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        )
        .await
        .status,
        202
    );
    // The call's stream carries the question; the answer is a separate POST, sent once the
    // question is out (read from the stream, not guessed from the time).
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "delete", "arguments": {"path": "x"}}}).to_string();
    let mut stream = open_with(addr, "POST", &h, &call).await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.headers.get("content-type").unwrap(), "text/event-stream");
    let question = stream.event().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(question["params"]["message"], "Delete x?");
    // The question's id is the server's first: 1.
    assert_eq!(question["id"], 1);
    let answer =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"action": "accept", "content": {"ok": true}}}).to_string();
    assert_eq!(send(addr, "POST", &h, &answer).await.status, 202);
    let result = stream.event().await;
    assert_eq!(result["id"], 2);
    assert_eq!(result["result"]["content"][0]["text"], "deleted x");
    assert!(stream.ends().await, "nothing after the response");
    // A call that asks nothing is plain JSON... or SSE; either way it completes.
    let r = send(
        addr,
        "POST",
        &h,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(r.json()["result"]["tools"].is_array());
    // DELETE ends the session; its id is then unknown.
    assert_eq!(
        send(addr, "DELETE", &[("mcp-session-id", sid.as_str())], "")
            .await
            .status,
        200
    );
    assert_eq!(
        send(
            addr,
            "POST",
            &h,
            &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).to_string()
        )
        .await
        .status,
        404
    );
}

/// Over a real socket, so in real time (the exact window: `sessions.rs`'
/// `a_session_idle_for_the_idle_time_ends_and_makes_room`, on tokio's paused clock). The second
/// `initialize` comes milliseconds after the first: an idle time of 1 s leaves a loaded machine
/// room; the wait for expiry is the whole idle time, which the server's clock counts too.
#[tokio::test]
async fn sessions_expire_and_are_bounded() {
    let idle = Duration::from_secs(1);
    let addr = start(HttpOptions::default().session_idle(idle).max_sessions(1)).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();
    let first = send(addr, "POST", &[JSON], &init).await;
    let sid = first
        .headers
        .get("mcp-session-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        send(addr, "POST", &[JSON], &init).await.status,
        503,
        "one session at most"
    );
    tokio::time::sleep(idle).await;
    let h = [JSON, ("mcp-session-id", sid.as_str())];
    assert_eq!(
        send(
            addr,
            "POST",
            &h,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string()
        )
        .await
        .status,
        404
    );
    assert_eq!(
        send(addr, "POST", &[JSON], &init).await.status,
        200,
        "the expired session made room"
    );
}

struct Tokens;

impl mcp_resolve::auth::TokenVerifier for Tokens {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> mcp_resolve::auth::BoxFuture<'a, Result<mcp_resolve::Principal, mcp_resolve::auth::AuthError>> {
        Box::pin(async move {
            match token {
                "alice" | "bob" | "carol" | "dave" | "erin" => Ok(mcp_resolve::Principal {
                    subject: token.into(),
                    issuer: Some("test".into()),
                    scopes: match token {
                        "carol" => vec!["notes:read".into(), "notes:admin".into()],
                        "dave" => vec!["notes:owner".into()],
                        // A prefix of every scope, and implying none of them.
                        "erin" => vec!["notes".into()],
                        _ => vec!["notes:read".into()],
                    },
                }),
                _ => Err(mcp_resolve::auth::AuthError::new("unknown token")),
            }
        })
    }
    /// The issuer of these tokens, named in the metadata when the options name none.
    fn authorization_server(&self) -> Option<&str> {
        Some("https://auth.test")
    }
}

async fn as_user(addr: SocketAddr, token: &str, id: i64, mut params: Value) -> Reply {
    params["_meta"] = envelope(json!({"elicitation": {}}));
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string();
    let auth = format!("Bearer {token}");
    let name = params["name"].as_str().unwrap_or("").to_string();
    let headers = [
        JSON,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", name.as_str()),
        ("authorization", auth.as_str()),
    ];
    send(addr, "POST", &headers, &body).await
}

#[tokio::test]
async fn bearer_tokens_name_the_principal_and_bind_the_state() {
    let addr = start(HttpOptions::default().bearer(Tokens)).await;
    let r = modern(addr, 1, "tools/list", json!({})).await;
    assert_eq!(r.status, 401);
    let metadata = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        addr.port()
    );
    assert_eq!(
        r.headers.get("www-authenticate").unwrap().to_str().unwrap(),
        format!(r#"Bearer resource_metadata="{metadata}""#)
    );
    let r = as_user(addr, "mallory", 2, json!({"name": "nap", "arguments": {"ms": 1}})).await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.headers.get("www-authenticate").unwrap().to_str().unwrap(),
        format!(r#"Bearer error="invalid_token", resource_metadata="{metadata}""#)
    );
    let r = as_user(addr, "alice", 3, json!({"name": "delete", "arguments": {"path": "x"}})).await;
    let state = r.json()["result"]["requestState"].as_str().unwrap().to_string();
    let retry = json!({"name": "delete", "arguments": {"path": "x"}, "inputResponses": {"confirm": {"action": "decline"}}, "requestState": state});
    let r = as_user(addr, "bob", 4, retry.clone()).await;
    assert_eq!(
        (
            r.status,
            r.json()["error"]["code"].clone(),
            r.json()["error"]["data"]["reason"].clone()
        ),
        (400, json!(-32602), json!("invalid_request_state")),
        "bob cannot use alice's state: {}",
        r.body
    );
    let r = as_user(addr, "alice", 5, retry).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "declined");
}

#[tokio::test]
async fn a_call_with_a_progress_token_streams_over_sse() {
    let addr = start(HttpOptions::default()).await;
    let mut params = json!({"name": "steps", "arguments": {}});
    params["_meta"] = envelope(json!({}));
    params["_meta"]["progressToken"] = json!("p-1");
    let body = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": params}).to_string();
    let r = send(
        addr,
        "POST",
        &[
            JSON,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "steps"),
        ],
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.headers.get("content-type").unwrap(), "text/event-stream");
    let events = r.events();
    assert_eq!(events.len(), 2, "{}", r.body);
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[0]["params"]["progressToken"], "p-1");
    assert_eq!(events[1]["id"], 8);
    assert_eq!(
        events[1]["result"]["resultType"], "complete",
        "results on SSE carry resultType too"
    );
}

#[tokio::test]
async fn a_call_that_asks_for_logs_streams_them_over_sse() {
    let addr = start(HttpOptions::default()).await;
    let mut params = json!({"name": "steps", "arguments": {}});
    params["_meta"] = envelope(json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}).to_string();
    let headers = [
        JSON,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "steps"),
    ];
    let r = send(addr, "POST", &headers, &body).await;
    assert_eq!(r.headers.get("content-type").unwrap(), "text/event-stream");
    let events = r.events();
    assert_eq!(events.len(), 2, "no progress token, one log line: {}", r.body);
    assert_eq!(
        events[0],
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "half way"}})
    );
    assert_eq!(events[1]["result"]["content"][0]["text"], "done");
    // A level above what the tool logs: the result, and no message.
    let body = body.replace(r#"logLevel":"info""#, r#"logLevel":"error""#);
    assert!(body.contains("error"));
    let r = send(addr, "POST", &headers, &body).await;
    assert!(r.body.contains(r#""text":"done""#), "{}", r.body);
    assert!(!r.body.contains("notifications/message"), "{}", r.body);
}

async fn init_as(addr: SocketAddr, token: &str) -> Reply {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();
    let auth = format!("Bearer {token}");
    send(addr, "POST", &[JSON, ("authorization", auth.as_str())], &init).await
}

fn session_id(r: &Reply) -> String {
    r.headers
        .get("mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {} {}", r.status, r.body))
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn sessions_belong_to_their_principal_and_each_has_a_cap() {
    let addr = start(HttpOptions::default().bearer(Tokens).max_sessions_per_principal(2)).await;
    let a1 = session_id(&init_as(addr, "alice").await);
    let _a2 = session_id(&init_as(addr, "alice").await);
    assert_eq!(
        init_as(addr, "alice").await.status,
        503,
        "alice is at her cap of two sessions"
    );
    let b1 = session_id(&init_as(addr, "bob").await);
    // Bob cannot end Alice's session, nor use it.
    let del = |token: &'static str, sid: String| async move {
        let auth = format!("Bearer {token}");
        send(
            addr,
            "DELETE",
            &[("authorization", auth.as_str()), ("mcp-session-id", sid.as_str())],
            "",
        )
        .await
        .status
    };
    assert_eq!(del("bob", a1.clone()).await, 404);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let ping = |token: &'static str, sid: String, body: String| async move {
        let auth = format!("Bearer {token}");
        send(
            addr,
            "POST",
            &[JSON, ("authorization", auth.as_str()), ("mcp-session-id", sid.as_str())],
            &body,
        )
        .await
        .status
    };
    assert_eq!(
        ping("alice", a1.clone(), list.clone()).await,
        200,
        "still alive for alice"
    );
    assert_eq!(ping("bob", a1.clone(), list.clone()).await, 404);
    // Alice ends her own; that frees a place under her cap.
    assert_eq!(del("alice", a1.clone()).await, 200);
    assert_eq!(ping("alice", a1, list.clone()).await, 404);
    assert_eq!(init_as(addr, "alice").await.status, 200);
    assert_eq!(ping("bob", b1, list).await, 200);
}

/// 2025-11-25 transports: "If the server receives a request with an invalid or unsupported
/// MCP-Protocol-Version, it MUST respond with 400 Bad Request" — and only then: a session request
/// naming another supported handshake-era version is served (as the official Python SDK does,
/// and as the conformance runner 0.1.16 sends 2025-03-26 after negotiating 2025-11-25).
#[tokio::test]
async fn a_session_request_names_a_supported_handshake_version() {
    let addr = start(HttpOptions::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();
    let sid = session_id(&send(addr, "POST", &[JSON], &init).await);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let with = |version: Option<&'static str>| {
        let sid = sid.clone();
        let list = list.clone();
        async move {
            let mut h = vec![JSON, ("mcp-session-id", sid.as_str())];
            if let Some(v) = version {
                h.push(("mcp-protocol-version", v));
            }
            send(addr, "POST", &h, &list).await.status
        }
    };
    for supported in ["2025-06-18", "2025-11-25", "2025-03-26", "2024-11-05"] {
        assert_eq!(with(Some(supported)).await, 200, "{supported}");
    }
    assert_eq!(with(None).await, 200, "older clients send none");
    for wrong in ["1999-01-01", "not-a-date", "2026-07-28", "2025-06-18x", "2025-6-18"] {
        assert_eq!(with(Some(wrong)).await, 400, "{wrong}");
    }
}

#[tokio::test]
async fn ambiguous_hosts_origins_and_media_types_are_refused() {
    let addr = start(HttpOptions::default()).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}).to_string();
    let port = addr.port();
    let userinfo_host = format!("127.0.0.1:{port}@evil.com");
    assert_eq!(
        send(addr, "POST", &[JSON, ("host", "evil.com")], &body).await.status,
        400,
        "two Host headers"
    );
    // The helper sets Host; a raw request sends only the one given here.
    assert_eq!(raw(addr, &userinfo_host, "", &body).await, "403", "userinfo in Host");
    let plain = format!("127.0.0.1:{port}");
    assert_eq!(
        raw(addr, &plain, "origin: http://localhost@evil.com\r\n", &body).await,
        "403",
        "userinfo in Origin"
    );
    assert_eq!(raw(addr, &plain, "", &body).await, "200", "the same request, plain");
    for (ct, status) in [
        ("application/jsonx", 415),
        ("application/json-seq", 415),
        ("Application/JSON; charset=utf-8", 200),
    ] {
        assert_eq!(
            send(addr, "POST", &[("content-type", ct)], &body).await.status,
            status,
            "{ct}"
        );
    }
}

/// One request written by hand (one `Host`, extra header lines as given); the status code.
async fn raw(addr: SocketAddr, host: &str, extra: &str, body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut out))
        .await
        .unwrap_or_else(|_| panic!("the server did not answer and close a POST with host {host:?} within 10 s"))
        .unwrap();
    out.split(' ').nth(1).unwrap_or("").to_string()
}

/// Reads until the peer closes (or `within` passes: then panics); what was read.
async fn read_until_closed(s: &mut tokio::net::TcpStream, within: Duration) -> String {
    use tokio::io::AsyncReadExt;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => panic!(
                "the connection is still open after {within:?}; read so far: {:?}",
                String::from_utf8_lossy(&out)
            ),
            Ok(Ok(0)) | Ok(Err(_)) => return String::from_utf8_lossy(&out).into_owned(),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
}

/// Real time: real sockets against hyper's timer (tokio's paused clock would jump to the next
/// timer whenever the test waits for the socket). Each client below writes what it sends at
/// once after connecting: the 1 s header and body times leave a loaded machine room for that,
/// and every wait for the server to cut a connection off is bounded at 5 s.
#[tokio::test]
async fn slow_headers_slow_bodies_idle_connections_and_huge_declared_bodies_are_cut_off() {
    use tokio::io::AsyncWriteExt;
    let addr = start(
        HttpOptions::default()
            .header_timeout(Duration::from_secs(1))
            .body_timeout(Duration::from_secs(1)),
    )
    .await;
    let host = format!("127.0.0.1:{}", addr.port());

    // Headers trickling in, one line every 100 ms: closed once the header time is up.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\n").await.unwrap();
    let (mut rd, mut wr) = slow.into_split();
    let trickle = tokio::spawn(async move {
        for i in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if wr.write_all(format!("x-slow-{i}: 1\r\n").as_bytes()).await.is_err() {
                return i;
            }
        }
        100
    });
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        use tokio::io::AsyncReadExt;
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "a connection sending headers at 10 lines/s is still open after 5 s"
    );
    trickle.abort();

    // A connection that never sends anything is closed too.
    let mut silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    read_until_closed(&mut silent, Duration::from_secs(5)).await;

    // Idle keep-alive: one exchange, then nothing; the server closes it.
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    idle.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let got = read_until_closed(&mut idle, Duration::from_secs(5)).await;
    assert!(got.starts_with("HTTP/1.1 "), "{got}");

    // A body that stops halfway: 408, closed.
    let mut half = tokio::net::TcpStream::connect(addr).await.unwrap();
    half.write_all(
        format!("POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"jsonrpc\"")
            .as_bytes(),
    )
    .await
    .unwrap();
    let got = read_until_closed(&mut half, Duration::from_secs(5)).await;
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("Request Timeout"), "{got}");

    // A declared length over the limit: 413 at once, without waiting for a byte of the body.
    let mut huge = tokio::net::TcpStream::connect(addr).await.unwrap();
    huge.write_all(
        format!("POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: 1000000000000\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    // (Waiting for the body would end in 408 from the body timeout, not 413.)
    let got = read_until_closed(&mut huge, Duration::from_secs(5)).await;
    assert!(got.starts_with("HTTP/1.1 413"), "{got}");

    // A chunked body over the limit (64 KiB in these tests): 413 as soon as it is crossed.
    let mut chunked = tokio::net::TcpStream::connect(addr).await.unwrap();
    chunked
        .write_all(
            format!("POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 40_000, " ".repeat(40_000));
    chunked.write_all(chunk.repeat(2).as_bytes()).await.unwrap();
    let got = read_until_closed(&mut chunked, Duration::from_secs(5)).await;
    assert!(got.starts_with("HTTP/1.1 413"), "{got}");

    // Through all of it the server kept serving.
    let r = modern(addr, 1, "tools/list", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

/// At the connection cap nothing more is accepted: a further client waits (in the listen
/// backlog, nothing refused or lost) and is served as soon as a connection closes.
#[tokio::test]
async fn connections_past_the_cap_wait_and_are_served_when_one_closes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = start(HttpOptions::default().max_connections(2)).await;
    let a = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _b = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    c.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            addr.port(),
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    // Not served while two connections are open…
    let mut buf = [0u8; 64];
    let early = tokio::time::timeout(Duration::from_millis(500), c.read(&mut buf)).await;
    assert!(
        early.is_err(),
        "a third connection was served past the cap of 2: {early:?}"
    );
    // …and served once one of them goes.
    drop(a);
    let got = read_until_closed(&mut c, Duration::from_secs(5)).await;
    assert!(got.starts_with("HTTP/1.1 202"), "{got}");
}

/// A handshake-era session may have `max_waiting` calls waiting for answers; a call that would
/// ask beyond that stops at once with an `isError` result, and the session goes on.
#[tokio::test]
async fn a_session_caps_its_calls_waiting_for_answers() {
    let addr = start_with(HttpOptions::default(), |s| s.max_waiting(2)).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "0"}}});
    let sid = session_id(&send(addr, "POST", &[JSON], &init.to_string()).await);
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let h = [JSON, ("mcp-session-id", sid.as_str())];
    assert_eq!(send(addr, "POST", &h, initialized).await.status, 202);
    let h = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    // Two calls whose questions are out (read from their streams).
    let mut waiting = Vec::new();
    for id in 2..4 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "delete", "arguments": {"path": "x"}}});
        let mut stream = open_with(addr, "POST", &h, &call.to_string()).await;
        assert_eq!(stream.event().await["method"], "elicitation/create");
        waiting.push(stream);
    }
    let third = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "delete", "arguments": {"path": "y"}}});
    let r = tokio::time::timeout(Duration::from_secs(5), send(addr, "POST", &h, &third.to_string()))
        .await
        .expect("the third question fails at once instead of waiting");
    let last = r.events().pop().unwrap_or_else(|| r.json());
    assert_eq!(last["result"]["isError"], true, "{}", r.body);
    assert!(
        last["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("2 questions already wait"),
        "{}",
        r.body
    );
    // A call that asks nothing is served meanwhile; the waiting ones end with the session.
    let r = send(
        addr,
        "POST",
        &h,
        &json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}).to_string(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        send(addr, "DELETE", &[("mcp-session-id", sid.as_str())], "")
            .await
            .status,
        200
    );
    for mut w in waiting {
        assert_eq!(w.status, 200);
        loop {
            match w.next(Duration::from_secs(5)).await {
                Sse::End => break,
                Sse::Quiet => panic!("a waiting call's stream is still open 5 s after its session ended"),
                Sse::Event(_) | Sse::Comment(_) | Sse::Priming => {}
            }
        }
    }
}

/// Bodies held at once are bounded across connections: a body that would take the listener past
/// `max_buffered_bytes` gets 503 with `Retry-After`; a client that declares a length and sends
/// nothing holds nothing; bytes are given back when a request ends.
#[tokio::test]
async fn bodies_held_at_once_are_bounded_across_connections() {
    use tokio::io::AsyncWriteExt;
    let addr = start(HttpOptions::default().max_buffered_bytes(100 * 1024)).await;
    let host = format!("127.0.0.1:{}", addr.port());
    let head = |len: usize| {
        format!("POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {len}\r\n\r\n")
    };
    // Declares 60 000 bytes and sends none: holds nothing.
    let mut declared = tokio::net::TcpStream::connect(addr).await.unwrap();
    declared.write_all(head(60_000).as_bytes()).await.unwrap();
    // Sends 60 000 of 61 000 bytes and stalls: holds them.
    let mut stalled = tokio::net::TcpStream::connect(addr).await.unwrap();
    stalled.write_all(head(61_000).as_bytes()).await.unwrap();
    stalled.write_all(" ".repeat(60_000).as_bytes()).await.unwrap();
    // Another 60 000-byte body does not fit beside it, once the server holds the stalled bytes.
    // (Tried until then, not after a guessed time: on a loaded machine they may be read late.
    // A body read before them fits, and is no JSON: 400.)
    let got = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let mut second = tokio::net::TcpStream::connect(addr).await.unwrap();
            second.write_all(head(60_000).as_bytes()).await.unwrap();
            second.write_all(" ".repeat(60_000).as_bytes()).await.unwrap();
            let got = read_until_closed(&mut second, Duration::from_secs(5)).await;
            if !got.starts_with("HTTP/1.1 400") {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a 60 000-byte body beside 60 000 held bytes is refused within 10 s");
    assert!(got.starts_with("HTTP/1.1 503"), "{got}");
    assert!(got.to_ascii_lowercase().contains("retry-after: 1"), "{got}");
    // Small requests still fit, and once the stalled client goes (and the server has seen it
    // go), a large one does too.
    assert_eq!(modern(addr, 1, "tools/list", json!({})).await.status, 200);
    drop(stalled);
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized","params":{{"pad":"{}"}}}}"#,
        "x".repeat(60_000)
    );
    let r = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let r = send(addr, "POST", &[JSON], &big).await;
            if r.status != 503 {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the stalled client's bytes are given back within 10 s of it going");
    assert_eq!(r.status, 202, "{}", r.body);
    drop(declared);
}

/// The `Authorization` scheme is case-insensitive (RFC 7235): `BEARER` and `bearer` work as
/// `Bearer` does; another scheme does not.
#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let addr = start(HttpOptions::default().bearer(Tokens)).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nap", "arguments": {"ms": 1}, "_meta": envelope(json!({}))}}).to_string();
    for (auth, status) in [
        ("BEARER alice", 200),
        ("bearer alice", 200),
        ("bEaReR   alice", 200),
        ("Basic alice", 401),
        ("Bearer", 401),
    ] {
        let headers = [
            JSON,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "nap"),
            ("authorization", auth),
        ];
        let r = send(addr, "POST", &headers, &body).await;
        assert_eq!(r.status, status, "{auth}: {}", r.body);
    }
}

/// A prompt for callers granted `notes:prompts`.
#[mcp_resolve::prompt(scopes = ["notes:prompts"])]
async fn scoped_prompt() -> String {
    "scoped".into()
}

/// A resource for callers granted `notes:secret`.
#[mcp_resolve::resource(uri = "notes://secret", scopes = ["notes:secret"])]
async fn secret_note() -> String {
    "secret".into()
}

#[tokio::test]
async fn protected_resource_metadata_is_served_and_linked_from_every_challenge() {
    let addr = start_with(
        HttpOptions::default()
            .bearer(Tokens)
            .authorization_server("https://auth.test")
            .scopes_supported(["notes:read"]),
        |s| s.prompt(scoped_prompt).resource(secret_note),
    )
    .await;
    let port = addr.port();
    let expected = json!({
        "resource": format!("http://127.0.0.1:{port}/mcp"),
        "authorization_servers": ["https://auth.test"],
        // The configured scopes, then every tool's, prompt's and resource's.
        "scopes_supported": ["notes:read", "notes:admin", "notes:prompts", "notes:secret"],
        "bearer_methods_supported": ["header"],
        "resource_name": "http-test",
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let r = send_to(addr, "GET", path, &[], "").await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(r.headers["content-type"], "application/json");
        assert_eq!(r.json(), expected, "{path}");
    }
    let r = send_to(addr, "POST", "/.well-known/oauth-protected-resource", &[JSON], "{}").await;
    assert_eq!((r.status, r.headers["allow"].to_str().unwrap()), (405, "GET, HEAD"));
    assert_eq!(
        send_to(addr, "GET", "/.well-known/oauth-protected-resource/other", &[], "")
            .await
            .status,
        404
    );
    // The DNS-rebinding defence covers the document too.
    let r = send_to(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource",
        &[("origin", "https://evil.example")],
        "",
    )
    .await;
    assert_eq!(r.status, 403);

    // A configured resource URI is the document's `resource`, and the challenges link its document.
    let addr = start(
        HttpOptions::default()
            .bearer(Tokens)
            .resource("https://notes.example.com/tenant/mcp")
            .authorization_server("https://auth.test"),
    )
    .await;
    let r = send_to(addr, "GET", "/.well-known/oauth-protected-resource/tenant/mcp", &[], "").await;
    assert_eq!(r.json()["resource"], "https://notes.example.com/tenant/mcp");
    assert_eq!(r.json()["scopes_supported"], json!(["notes:admin"]));
    let r = modern(addr, 1, "tools/list", json!({})).await;
    assert_eq!(
        r.headers["www-authenticate"],
        r#"Bearer resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/tenant/mcp""#
    );

    // A server that takes no tokens protects nothing: no document.
    let addr = start(HttpOptions::default()).await;
    let r = send_to(addr, "GET", "/.well-known/oauth-protected-resource/mcp", &[], "").await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a_scoped_tool_refuses_a_token_without_its_scope_before_anything_runs() {
    use std::sync::atomic::Ordering::SeqCst;
    let addr = start(HttpOptions::default().bearer(Tokens)).await;
    let metadata = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        addr.port()
    );
    let purge_call = json!({"name": "purge", "arguments": {}});
    let before = PURGED.load(SeqCst);

    // 2026-07-28.
    let r = as_user(addr, "alice", 1, purge_call.clone()).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        r.headers["www-authenticate"].to_str().unwrap(),
        format!(r#"Bearer error="insufficient_scope", scope="notes:admin", resource_metadata="{metadata}""#)
    );
    let error = &r.json()["error"];
    assert_eq!(error["code"], -32600);
    assert_eq!(error["data"]["requiredScopes"], json!(["notes:admin"]));
    assert!(error["message"].as_str().unwrap().contains("`notes:admin`"), "{error}");
    assert_eq!(r.json()["id"], 1);
    assert_eq!(PURGED.load(SeqCst), before, "the tool did not run");
    let r = as_user(addr, "carol", 2, purge_call.clone()).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "purged");
    // Tools without scopes are anyone's.
    let r = as_user(addr, "alice", 3, json!({"name": "nap", "arguments": {"ms": 1}})).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "awake");

    // 2025-06-18, in a session: the same 403 before the call would stream.
    let sid = session_id(&init_as(addr, "alice").await);
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": purge_call}).to_string();
    let r = send(
        addr,
        "POST",
        &[
            JSON,
            ("accept", "application/json, text/event-stream"),
            ("mcp-session-id", &sid),
            ("authorization", "Bearer alice"),
        ],
        &call,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains(r#"error="insufficient_scope", scope="notes:admin""#)
    );
    assert_eq!(r.json()["id"], 4);
    assert_eq!(PURGED.load(SeqCst), before + 1, "only carol's call ran");

    // Without bearer authentication nobody holds a scope: 403, with no challenge to answer.
    let addr = start(HttpOptions::default()).await;
    let r = modern(addr, 5, "tools/call", purge_call).await;
    assert_eq!(r.status, 403);
    assert!(r.headers.get("www-authenticate").is_none());
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("carries no token"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn mirrored_arguments_must_match_their_headers() {
    let addr = start(HttpOptions::default()).await;
    let r = modern(addr, 1, "tools/list", json!({})).await;
    let tools = r.json()["result"]["tools"].clone();
    let listed = tools.as_array().unwrap().iter().find(|t| t["name"] == "route").unwrap();
    assert_eq!(listed["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region");
    assert_eq!(listed["inputSchema"]["properties"]["shard"]["x-mcp-header"], "Shard");

    let call = |args: Value, extra: Vec<(&'static str, &'static str)>| async move {
        let mut params = json!({"name": "route", "arguments": args});
        params["_meta"] = envelope(json!({}));
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).to_string();
        let mut headers = vec![
            JSON,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "route"),
        ];
        headers.extend(extra);
        send(addr, "POST", &headers, &body).await
    };
    let r = call(
        json!({"region": "eu-west", "shard": 7}),
        vec![("mcp-param-region", "eu-west"), ("mcp-param-shard", "7")],
    )
    .await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "eu-west/7", "{}", r.body);
    // Header names ignore case; an absent optional argument has no header; encoded values are decoded.
    let r = call(
        json!({"region": "été"}),
        vec![("MCP-PARAM-REGION", "=?base64?w6l0w6k=?=")],
    )
    .await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "été/0", "{}", r.body);
    for (args, headers, why) in [
        (
            json!({"region": "eu-west"}),
            vec![("mcp-param-region", "us-east")],
            "Header mismatch: Mcp-Param-Region does not match the body",
        ),
        (
            json!({"region": "eu-west"}),
            vec![],
            "Header mismatch: the Mcp-Param-Region header is required",
        ),
        (
            json!({"region": "eu-west"}),
            vec![("mcp-param-region", "eu-west"), ("mcp-param-shard", "1")],
            "Header mismatch: Mcp-Param-Shard is sent but the argument is not",
        ),
    ] {
        let r = call(args, headers).await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.json()["error"]["code"], -32020);
        assert_eq!(r.json()["error"]["message"], why);
    }
    // Mcp-Name may come encoded too.
    let r = call(json!({"region": "x"}), vec![("mcp-param-region", "x")]).await;
    assert_eq!(r.status, 200);
    let mut params = json!({"name": "route", "arguments": {"region": "x"}});
    params["_meta"] = envelope(json!({}));
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}).to_string();
    let headers = [
        JSON,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "=?base64?cm91dGU=?="),
        ("mcp-param-region", "x"),
    ];
    let r = send(addr, "POST", &headers, &body).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "x/0", "{}", r.body);
}

/// Greets someone.
#[prompt]
async fn greet(name: String) -> String {
    format!("Greet {name}.")
}

/// Only for callers whose token grants `notes:admin`.
#[prompt(scopes = ["notes:admin"])]
async fn admin_prompt() -> String {
    "admin".into()
}

#[tokio::test]
async fn prompts_over_stateless_http_check_mcp_name_and_scopes() {
    let addr = start_with(HttpOptions::default().bearer(Tokens), |s| {
        s.prompt(greet)
            .prompt(admin_prompt)
            .list_cache(1_000, mcp_resolve::server::CacheScope::Public)
    })
    .await;
    let post = |id: i64, method: &'static str, params: Value, name: Option<&'static str>, token: &'static str| async move {
        let mut params = params;
        params["_meta"] = envelope(json!({}));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let auth = format!("Bearer {token}");
        let mut headers = vec![
            JSON,
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
            ("authorization", auth.as_str()),
        ];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        send(addr, "POST", &headers, &body).await
    };

    // Carol may use every prompt: the configured hints. Alice's list hides `admin_prompt`, so it
    // is hers alone: private, whatever the configured scope.
    let r = post(1, "prompts/list", json!({}), None, "carol").await;
    let res = &r.json()["result"];
    assert_eq!(
        (res["ttlMs"].clone(), res["cacheScope"].clone()),
        (json!(1000), json!("public"))
    );
    assert_eq!(res["prompts"].as_array().map(Vec::len), Some(2), "{}", r.body);
    let r = post(1, "prompts/list", json!({}), None, "alice").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let res = &r.json()["result"];
    assert_eq!(
        (res["ttlMs"].clone(), res["cacheScope"].clone()),
        (json!(1000), json!("private"))
    );
    assert_eq!(res["prompts"].as_array().map(Vec::len), Some(1), "{}", r.body);
    assert_eq!(res["resultType"], "complete");
    assert_eq!(
        res["prompts"][0]["arguments"][0],
        json!({"name": "name", "required": true})
    );

    let get = json!({"name": "greet", "arguments": {"name": "Ada"}});
    let r = post(2, "prompts/get", get.clone(), Some("greet"), "alice").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["result"]["messages"][0]["content"]["text"], "Greet Ada.");
    assert_eq!(r.json()["result"]["resultType"], "complete");

    // Mcp-Name must be params.name.
    let r = post(3, "prompts/get", get.clone(), Some("admin_prompt"), "alice").await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020)),
        "{}",
        r.body
    );
    let r = post(4, "prompts/get", get, None, "alice").await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020)),
        "{}",
        r.body
    );

    // A missing argument: -32602 naming it.
    let r = post(5, "prompts/get", json!({"name": "greet"}), Some("greet"), "alice").await;
    assert_eq!(r.json()["error"]["code"], -32602, "{}", r.body);
    assert_eq!(r.json()["error"]["data"]["missing"], json!(["name"]));

    // Scopes: 403 with the challenge, before the prompt runs; carol holds it.
    let scoped = json!({"name": "admin_prompt"});
    let r = post(6, "prompts/get", scoped.clone(), Some("admin_prompt"), "alice").await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains(r#"error="insufficient_scope", scope="notes:admin""#)
    );
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("prompt `admin_prompt`")
    );
    let r = post(7, "prompts/get", scoped, Some("admin_prompt"), "carol").await;
    assert_eq!(
        r.json()["result"]["messages"][0]["content"]["text"],
        "admin",
        "{}",
        r.body
    );

    let r = post(8, "server/discover", json!({}), None, "alice").await;
    assert_eq!(r.json()["result"]["capabilities"]["prompts"], json!({}), "{}", r.body);
}

/// A note, by id.
#[resource(template = "test://notes/{id}", mime_type = "text/plain")]
async fn note(id: String) -> String {
    format!("note {id}")
}

#[tokio::test]
async fn resources_over_stateless_http_check_mcp_name() {
    let addr = start_with(HttpOptions::default(), |s| s.resource(note)).await;
    let post = |id: i64, method: &'static str, params: Value, name: Option<&'static str>| async move {
        let mut params = params;
        params["_meta"] = envelope(json!({}));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let mut headers = vec![
            JSON,
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
        ];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        send(addr, "POST", &headers, &body).await
    };
    let read = json!({"uri": "test://notes/7"});
    let r = post(1, "resources/read", read.clone(), Some("test://notes/7")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let res = &r.json()["result"];
    assert_eq!(res["contents"][0]["text"], "note 7");
    assert_eq!(res["resultType"], "complete");
    assert!(res["ttlMs"].is_u64() && res["cacheScope"].is_string(), "{}", r.body);
    // Mcp-Name must be params.uri.
    let r = post(2, "resources/read", read.clone(), Some("test://notes/8")).await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020)),
        "{}",
        r.body
    );
    let r = post(3, "resources/read", read, None).await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020)),
        "{}",
        r.body
    );
    // An unknown URI: -32602 with the URI.
    let r = post(4, "resources/read", json!({"uri": "test://nope"}), Some("test://nope")).await;
    assert_eq!(r.json()["error"]["code"], -32602, "{}", r.body);
    assert_eq!(r.json()["error"]["data"], json!({"uri": "test://nope"}));
    let r = post(5, "resources/templates/list", json!({}), None).await;
    assert_eq!(
        r.json()["result"]["resourceTemplates"][0]["uriTemplate"],
        "test://notes/{id}"
    );
    // 2026-07-28 has no subscriptions.
    let r = post(6, "resources/subscribe", json!({"uri": "test://notes/7"}), None).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a_tool_ending_with_a_protocol_error_gets_its_http_status() {
    let addr = start(HttpOptions::default()).await;
    let mut params = json!({"name": "needs_sampling", "arguments": {}});
    params["_meta"] = envelope(json!({}));
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params}).to_string();
    let headers = [
        JSON,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "needs_sampling"),
    ];
    let r = send(addr, "POST", &headers, &body).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], -32021);
    assert_eq!(
        r.json()["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    let body = body.replace(r#"clientCapabilities":{}"#, r#"clientCapabilities":{"sampling":{}}"#);
    assert!(body.contains(r#""sampling":{}"#));
    let r = send(addr, "POST", &headers, &body).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "sampled", "{}", r.body);
}

// ------------------------------------------------------------------ the GET stream

const WATCHED: &str = "test://watched-resource";

/// A resource clients watch.
#[mcp_resolve::resource(uri = "test://watched-resource", mime_type = "text/plain")]
async fn watched_resource() -> String {
    "watched".into()
}

/// A server with resources, and the handle that announces their updates.
async fn start_watched(options: HttpOptions) -> (SocketAddr, mcp_resolve::resource::ResourceUpdates) {
    let mut updates = None;
    let addr = start_with(options, |s| {
        let s = s.resource(watched_resource).resource(note);
        updates = Some(s.resource_updates());
        s
    })
    .await;
    (addr, updates.unwrap())
}

/// What an open response stream gave next.
#[derive(Debug)]
enum Sse {
    Event(Value),
    Comment(String),
    /// An event with no data (a stream's priming event), or a lone `retry` field.
    Priming,
    /// The server ended the stream.
    End,
    /// Nothing within the wait.
    Quiet,
}

/// A response read as it arrives (a GET stream). Dropping it closes the connection.
struct Stream {
    status: u16,
    headers: http::HeaderMap,
    body: Incoming,
    buffer: String,
    conn: tokio::task::JoinHandle<()>,
    /// The id of the last event read, and the last `retry` field.
    last_id: Option<String>,
    retry: Option<u64>,
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.conn.abort();
    }
}

impl Stream {
    async fn next(&mut self, wait: Duration) -> Sse {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let block = block.trim_end();
                if let Some(comment) = block.strip_prefix(':') {
                    return Sse::Comment(comment.trim().to_string());
                }
                for line in block.lines() {
                    if let Some(id) = line.strip_prefix("id: ") {
                        self.last_id = Some(id.to_owned());
                    }
                    if let Some(ms) = line.strip_prefix("retry: ") {
                        self.retry = ms.parse().ok();
                    }
                }
                let data = block.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or("");
                if data.is_empty() {
                    return Sse::Priming;
                }
                assert!(block.contains("event: message\n"), "{block}");
                return Sse::Event(serde_json::from_str(data).unwrap());
            }
            match tokio::time::timeout_at(deadline, self.body.frame()).await {
                Err(_) => return Sse::Quiet,
                Ok(None) => return Sse::End,
                Ok(Some(frame)) => {
                    if let Ok(data) = frame.unwrap().into_data() {
                        self.buffer.push_str(std::str::from_utf8(&data).unwrap());
                    }
                }
            }
        }
    }

    /// The next message event, skipping keep-alive comments; panics on anything else.
    async fn event(&mut self) -> Value {
        loop {
            match self.next(Duration::from_secs(5)).await {
                Sse::Event(v) => return v,
                Sse::Comment(_) | Sse::Priming => continue,
                other => panic!("no event: {other:?}"),
            }
        }
    }

    /// Whether the server ends the stream within a while (comments aside).
    async fn ends(&mut self) -> bool {
        loop {
            match self.next(Duration::from_secs(5)).await {
                Sse::End => return true,
                Sse::Comment(_) | Sse::Priming => continue,
                other => panic!("expected the end: {other:?}"),
            }
        }
    }

    /// Nothing but comments for a short while.
    async fn quiet(&mut self) {
        loop {
            match self.next(Duration::from_millis(150)).await {
                Sse::Quiet => return,
                Sse::Comment(_) | Sse::Priming => continue,
                other => panic!("expected nothing: {other:?}"),
            }
        }
    }
}

/// Sends a bodiless request and returns as soon as the response's head is in.
async fn open(addr: SocketAddr, method: &str, headers: &[(&str, &str)]) -> Stream {
    open_with(addr, method, headers, "").await
}

/// Sends a request and returns as soon as the response's head is in: its body is then read as
/// it arrives.
async fn open_with(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Stream {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let conn = tokio::spawn(async move {
        conn.await.ok();
    });
    let mut req = http::Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", format!("127.0.0.1:{}", addr.port()));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(5), sender.send_request(req))
        .await
        .expect("the head of the response within 5 s")
        .unwrap();
    Stream {
        status: resp.status().as_u16(),
        headers: resp.headers().clone(),
        body: resp.into_body(),
        buffer: String::new(),
        conn,
        last_id: None,
        retry: None,
    }
}

const SSE: (&str, &str) = ("accept", "text/event-stream");

/// A 2025-11-25 session (initialized) of the caller `token` names (none: no `Authorization`).
async fn session_as(addr: SocketAddr, token: Option<&str>) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![JSON];
    if let Some(a) = &auth {
        headers.push(("authorization", a.as_str()));
    }
    let sid = session_id(&send(addr, "POST", &headers, &init).await);
    headers.push(("mcp-session-id", sid.as_str()));
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(send(addr, "POST", &headers, initialized).await.status, 202);
    sid
}

/// A request in session `sid`; its JSON answer.
async fn in_session(addr: SocketAddr, sid: &str, id: i64, method: &str, params: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let h = [JSON, ("mcp-session-id", sid), ("mcp-protocol-version", "2025-11-25")];
    send(addr, "POST", &h, &body).await
}

fn is_update(v: &Value, uri: &str) -> bool {
    *v == json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
}

#[tokio::test]
async fn a_sessions_get_stream_carries_its_resource_updates_until_the_session_ends() {
    let (addr, updates) = start_watched(HttpOptions::default()).await;
    let sid = session_as(addr, None).await;
    let r = in_session(addr, &sid, 2, "resources/subscribe", json!({"uri": WATCHED})).await;
    assert_eq!(r.json()["result"], json!({}), "{}", r.body);
    assert_eq!(updates.subscribers(WATCHED), 1);
    assert_eq!(updates.updated(WATCHED), 0, "no stream open: nowhere to tell it");

    let get = [
        SSE,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let mut first = open(addr, "GET", &get).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.headers["content-type"], "text/event-stream");
    assert_eq!(first.headers["cache-control"], "no-cache");
    assert_eq!(updates.updated(WATCHED), 1);
    assert!(is_update(&first.event().await, WATCHED));
    assert_eq!(updates.updated("test://notes/1"), 0, "not subscribed to that one");
    first.quiet().await;

    // One stream per session: a second GET takes over, and the first ends.
    let mut second = open(addr, "GET", &get).await;
    assert_eq!(second.status, 200);
    assert!(first.ends().await, "the earlier stream ends");
    assert_eq!(updates.updated(WATCHED), 1);
    assert!(
        is_update(&second.event().await, WATCHED),
        "told once, on the stream open now"
    );

    let r = in_session(addr, &sid, 3, "resources/unsubscribe", json!({"uri": WATCHED})).await;
    assert_eq!(r.json()["result"], json!({}));
    assert_eq!(updates.updated(WATCHED), 0);
    second.quiet().await;

    // The session's end closes its stream and drops its subscriptions.
    in_session(addr, &sid, 4, "resources/subscribe", json!({"uri": WATCHED})).await;
    assert_eq!(updates.subscribers(WATCHED), 1);
    assert_eq!(
        send(addr, "DELETE", &[("mcp-session-id", sid.as_str())], "")
            .await
            .status,
        200
    );
    assert!(second.ends().await, "DELETE ends the stream");
    assert_eq!(updates.subscribers(WATCHED), 0, "the registry is empty");
    assert_eq!(open(addr, "GET", &get).await.status, 404);
}

#[tokio::test]
async fn get_is_refused_without_a_session_on_2026_and_without_accept() {
    let (addr, _updates) = start_watched(HttpOptions::default()).await;
    let sid = session_as(addr, None).await;
    let allow = |r: &Reply| r.headers.get("allow").map(|v| v.to_str().unwrap().to_string());
    // Without a session there is only POST (initialize, or 2026-07-28 requests).
    let r = send(addr, "GET", &[SSE], "").await;
    assert_eq!((r.status, allow(&r)), (405, Some("POST".into())));
    let r = send(addr, "DELETE", &[], "").await;
    assert_eq!((r.status, allow(&r)), (405, Some("POST".into())));
    // 2026-07-28 has no GET stream, whatever else the request carries.
    let r = send(
        addr,
        "GET",
        &[
            SSE,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-session-id", sid.as_str()),
        ],
        "",
    )
    .await;
    assert_eq!((r.status, allow(&r)), (405, Some("POST".into())));
    // Within a session: GET, POST and DELETE.
    let r = send(addr, "PUT", &[("mcp-session-id", sid.as_str())], "").await;
    assert_eq!((r.status, allow(&r)), (405, Some("GET, POST, DELETE".into())));

    let s = ("mcp-session-id", sid.as_str());
    for accept in [None, Some("application/json"), Some("text/*")] {
        let mut h = vec![s];
        if let Some(a) = accept {
            h.push(("accept", a));
        }
        let r = send(addr, "GET", &h, "").await;
        assert_eq!(r.status, 406, "{accept:?}");
        assert_eq!(r.json()["error"]["code"], -32600);
    }
    let r = open(
        addr,
        "GET",
        &[s, ("accept", "application/json, Text/Event-Stream; q=0.5")],
    )
    .await;
    assert_eq!(r.status, 200, "a list naming it, with parameters");
    drop(r);
    // Another supported handshake-era version is served; an unknown one is not.
    let other_version = [SSE, s, ("mcp-protocol-version", "2025-06-18")];
    let r = open(addr, "GET", &other_version).await;
    assert_eq!(r.status, 200);
    drop(r);
    let unsupported = [SSE, s, ("mcp-protocol-version", "1999-01-01")];
    assert_eq!(send(addr, "GET", &unsupported, "").await.status, 400);
    let unknown = [SSE, ("mcp-session-id", "0123456789abcdef0123456789abcdef")];
    assert_eq!(send(addr, "GET", &unknown, "").await.status, 404);
    let evil = [SSE, s, ("origin", "http://evil.example")];
    assert_eq!(
        send(addr, "GET", &evil, "").await.status,
        403,
        "Origin is checked as on POST"
    );
}

#[tokio::test]
async fn only_the_sessions_owner_opens_its_stream() {
    let (addr, updates) = start_watched(HttpOptions::default().bearer(Tokens)).await;
    let sid = session_as(addr, Some("alice")).await;
    let auth = |t: &'static str| {
        (
            "authorization",
            if t == "alice" { "Bearer alice" } else { "Bearer bob" },
        )
    };
    let s = ("mcp-session-id", sid.as_str());
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": WATCHED}});
    let r = send(addr, "POST", &[JSON, s, auth("alice")], &body.to_string()).await;
    assert_eq!(r.json()["result"], json!({}));
    let r = send(addr, "GET", &[SSE, s], "").await;
    assert_eq!(r.status, 401, "no token");
    assert!(r.headers.contains_key("www-authenticate"));
    assert_eq!(
        send(addr, "GET", &[SSE, s, auth("bob")], "").await.status,
        404,
        "bob's is none of his"
    );
    assert_eq!(updates.updated(WATCHED), 0, "bob opened nothing");
    let mut mine = open(addr, "GET", &[SSE, s, auth("alice")]).await;
    assert_eq!(mine.status, 200);
    assert_eq!(updates.updated(WATCHED), 1);
    assert!(is_update(&mine.event().await, WATCHED));
}

/// Real time: a real socket against the server's keep-alive timer. The stream is held open for
/// a second, past the 300 ms idle time, and each keep-alive comment (every 50 ms) is waited for
/// up to 5 s: a loaded machine that delays the server sends the comments it owes at once
/// (tokio's interval catches up), so only a stream that stops fails.
#[tokio::test]
async fn an_open_stream_keeps_its_session_and_once_closed_the_session_expires() {
    let idle = Duration::from_millis(300);
    let options = HttpOptions::default()
        .session_idle(idle)
        .stream_keepalive(Duration::from_millis(50));
    let (addr, updates) = start_watched(options).await;
    let sid = session_as(addr, None).await;
    in_session(addr, &sid, 2, "resources/subscribe", json!({"uri": WATCHED})).await;
    let mut stream = open(addr, "GET", &[SSE, ("mcp-session-id", sid.as_str())]).await;
    // Past the idle time with no request: comments keep the stream alive, and the session lives.
    let mut comments = 0;
    let until = tokio::time::Instant::now() + Duration::from_secs(1);
    while tokio::time::Instant::now() < until {
        match stream.next(Duration::from_secs(5)).await {
            Sse::Comment(c) => {
                assert_eq!(c, "keep-alive");
                comments += 1;
            }
            // The stream's priming event.
            Sse::Priming => {}
            other => panic!("only keep-alive comments: {other:?}"),
        }
    }
    assert!(comments >= 5, "{comments} keep-alive comments");
    let r = in_session(addr, &sid, 3, "ping", json!({})).await;
    assert_eq!(r.status, 200, "a session whose stream is open is not idle");
    assert_eq!(updates.updated(WATCHED), 1);
    assert!(is_update(&stream.event().await, WATCHED));
    // The client goes away; the session is idle from then on, expires, and unsubscribes.
    drop(stream);
    tokio::time::sleep(2 * idle).await;
    assert_eq!(in_session(addr, &sid, 4, "ping", json!({})).await.status, 404);
    assert_eq!(updates.subscribers(WATCHED), 0);
}

#[tokio::test]
async fn a_stream_that_is_not_read_loses_updates_and_nothing_waits_for_it() {
    let (addr, updates) = start_watched(HttpOptions::default()).await;
    let slow = session_as(addr, None).await;
    let fast = session_as(addr, None).await;
    in_session(addr, &slow, 2, "resources/subscribe", json!({"uri": WATCHED})).await;
    in_session(addr, &fast, 2, "resources/subscribe", json!({"uri": "test://notes/1"})).await;
    let mut slow_stream = open(addr, "GET", &[SSE, ("mcp-session-id", slow.as_str())]).await;
    let mut fast_stream = open(addr, "GET", &[SSE, ("mcp-session-id", fast.as_str())]).await;
    // Nobody reads the slow stream: its queue (256) fills, and then updates for it are dropped,
    // at once.
    let started = std::time::Instant::now();
    let mut sent = 0;
    while updates.updated(WATCHED) == 1 {
        sent += 1;
        assert!(sent < 1_000_000, "the queue is bounded");
    }
    assert!(sent >= 256, "{sent}");
    // Real time: `updated` is synchronous, so no tokio clock applies. The loop takes
    // milliseconds; 5 s only rules out each update waiting a while for the reader (one that
    // waited for it outright would never return, and the per-test time limit names it).
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    // Other sessions are told, and the slow one is served.
    assert_eq!(updates.updated("test://notes/1"), 1);
    assert!(is_update(&fast_stream.event().await, "test://notes/1"));
    assert_eq!(in_session(addr, &slow, 3, "ping", json!({})).await.status, 200);
    for _ in 0..sent {
        assert!(is_update(&slow_stream.event().await, WATCHED));
    }
    slow_stream.quiet().await;
}

/// Pages beside the MCP endpoint (`HttpOptions::page`): served at their exact path for any
/// method, with their body read within the bounds, no bearer token asked for (the page signs its
/// user in itself), the DNS-rebinding defence applied, and the safe headers added unless the
/// handler sets them.
#[tokio::test]
async fn pages_are_served_beside_the_endpoint_with_the_same_guards_but_no_token() {
    let page = |req: http::Request<Bytes>| async move {
        let text = format!("{} {} {}", req.method(), req.uri(), String::from_utf8_lossy(req.body()));
        http::Response::new(Bytes::from(text))
    };
    let framed = |_req: http::Request<Bytes>| async {
        http::Response::builder()
            .header("x-frame-options", "SAMEORIGIN")
            .body(Bytes::from_static(b"mine"))
            .unwrap()
    };
    let addr = start(
        HttpOptions::default()
            .bearer(Tokens)
            .page("/connect", page)
            .page("/framed", framed),
    )
    .await;
    let r = send_to(addr, "GET", "/connect?flow=abc", &[], "").await;
    assert_eq!(r.status, 200, "no token is asked for: {}", r.body);
    assert_eq!(r.body, "GET /connect?flow=abc ");
    assert_eq!(r.headers["cache-control"], "no-store");
    assert_eq!(r.headers["referrer-policy"], "same-origin");
    assert_eq!(r.headers["x-frame-options"], "DENY");
    let r = send_to(
        addr,
        "POST",
        "/connect",
        &[("content-type", "application/x-www-form-urlencoded")],
        "ok=1",
    )
    .await;
    assert_eq!(r.body, "POST /connect ok=1");
    let r = send_to(addr, "GET", "/framed", &[], "").await;
    assert_eq!(
        r.headers["x-frame-options"], "SAMEORIGIN",
        "the handler's own header is kept"
    );
    // Only the exact path; the rebinding defence and the body bound apply.
    assert_eq!(send_to(addr, "GET", "/connect/x", &[], "").await.status, 404);
    let r = send_to(addr, "GET", "/connect", &[("origin", "https://evil.example")], "").await;
    assert_eq!(r.status, 403);
    let big = "x".repeat(65 * 1024);
    assert_eq!(send_to(addr, "POST", "/connect", &[], &big).await.status, 413);
    // The MCP endpoint still wants its token.
    assert_eq!(send(addr, "POST", &[JSON], "{}").await.status, 401);
}

// ---- issue 22: what the server runs is what every reader of the request sees --------------------

/// A 2026-07-28 `tools/call route` with these extra headers (appended: repeats stay repeats).
async fn route_with(addr: SocketAddr, extra: &[(&str, &str)]) -> Reply {
    let mut params = json!({"name": "route", "arguments": {"region": "eu-west"}});
    params["_meta"] = envelope(json!({}));
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).to_string();
    let mut headers = vec![
        JSON,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "route"),
        ("mcp-param-region", "eu-west"),
    ];
    headers.extend_from_slice(extra);
    send(addr, "POST", &headers, &body).await
}

/// A repeated `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`, `Authorization` or
/// `Mcp-Session-Id` is refused (400; -32020 for the headers mirrored from the body, as for one
/// that disagrees with it): a gateway reading the last or the joined value would see another
/// request than the one the server runs.
#[tokio::test]
async fn repeated_headers_that_say_what_runs_or_who_calls_are_refused() {
    let addr = start(HttpOptions::default()).await;
    let r = route_with(addr, &[]).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "eu-west/0", "{}", r.body);
    for (extra, name) in [
        (("mcp-param-region", "us-east"), "mcp-param-region"),
        (("Mcp-Param-Region", "eu-west"), "mcp-param-region"),
        (("mcp-name", "nap"), "mcp-name"),
        (("mcp-name", "route"), "mcp-name"),
        (("mcp-method", "tools/list"), "mcp-method"),
        (("mcp-protocol-version", "2026-07-28"), "mcp-protocol-version"),
        (("mcp-param-shard", "1"), "mcp-param-shard"),
    ] {
        let mut headers = vec![extra];
        if name == "mcp-param-shard" {
            headers.push(extra);
        }
        let r = route_with(addr, &headers).await;
        assert_eq!(r.status, 400, "{name}: {}", r.body);
        assert_eq!(r.json()["error"]["code"], -32020, "{name}");
        assert_eq!(
            r.json()["error"]["message"],
            format!("Bad Request: the {name} header appears more than once")
        );
    }
    // Who calls, and which session.
    let addr = start(HttpOptions::default().bearer(Tokens)).await;
    let r = route_with(addr, &[("authorization", "Bearer alice")]).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = route_with(
        addr,
        &[("authorization", "Bearer alice"), ("authorization", "Bearer carol")],
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32600)),
        "{}",
        r.body
    );
    let sid = session_as(addr, Some("alice")).await;
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).to_string();
    let h = [
        JSON,
        ("authorization", "Bearer alice"),
        ("mcp-session-id", sid.as_str()),
    ];
    assert_eq!(send(addr, "POST", &h, &list).await.status, 200);
    let h = [
        JSON,
        ("authorization", "Bearer alice"),
        ("mcp-session-id", sid.as_str()),
        ("mcp-session-id", "another"),
    ];
    let r = send(addr, "POST", &h, &list).await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32600)),
        "{}",
        r.body
    );
}

/// 2025-11-25 transports: "Servers MUST validate the Origin header on all incoming connections":
/// `allow_origin` lets its origin in and no other, on every bind.
#[tokio::test]
async fn an_allowed_origin_is_served_and_any_other_refused() {
    let addr = start(HttpOptions::default().allow_origin("https://app.example.com")).await;
    let discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope(json!({}))}})
            .to_string();
    let headers = |origin: &'static str| {
        vec![
            JSON,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
            ("origin", origin),
        ]
    };
    for (origin, status) in [
        ("https://app.example.com", 200),
        ("https://app.example.com.evil.example", 403),
        ("http://app.example.com", 403),
        ("https://evil.example", 403),
        ("null", 403),
    ] {
        let r = send(addr, "POST", &headers(origin), &discover).await;
        assert_eq!(r.status, status, "{origin}: {}", r.body);
    }
}

/// A listener on every interface (not loopback), reached through 127.0.0.1.
async fn wildcard_listener() -> (tokio::net::TcpListener, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, SocketAddr::from(([127, 0, 0, 1], port)))
}

/// A server bound to an address that is not loopback checks `Host` and `Origin` as a loopback
/// one does; given no `Host` to allow it refuses to start, saying what to set, unless it opts
/// out with `allow_any_host` — which still checks `Origin`.
#[tokio::test]
async fn a_server_on_every_interface_needs_its_hosts_or_an_explicit_opt_out() {
    let (listener, _) = wildcard_listener().await;
    let refused = tokio::time::timeout(
        Duration::from_secs(5),
        Server::new("open").serve_http_on(listener, HttpOptions::default()),
    )
    .await
    .expect("refused at once");
    let e = refused.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("HttpOptions::allow_host"), "{e}");

    let discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope(json!({}))}})
            .to_string();
    let ask = |addr: SocketAddr, host: &'static str, origin: Option<&'static str>| {
        let discover = discover.clone();
        async move {
            let mut h = vec![
                ("content-type", "application/json"),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "server/discover"),
            ];
            if let Some(o) = origin {
                h.push(("origin", o));
            }
            raw_status(addr, host, &h, &discover).await
        }
    };
    // Hosts named by `allow_host` or by the resource URI.
    let (listener, addr) = wildcard_listener().await;
    let options = HttpOptions::default()
        .allow_host("notes.example.com")
        .resource("https://mcp.example.com/mcp");
    tokio::spawn(Server::new("open").serve_http_on(listener, options));
    assert_eq!(ask(addr, "notes.example.com", None).await, 200);
    assert_eq!(ask(addr, "mcp.example.com", None).await, 200);
    assert_eq!(ask(addr, "127.0.0.1", None).await, 200);
    assert_eq!(ask(addr, "evil.example", None).await, 403);
    assert_eq!(ask(addr, "evil.example", Some("https://evil.example")).await, 403);
    assert_eq!(
        ask(addr, "notes.example.com", Some("https://evil.example")).await,
        403,
        "Origin on every bind"
    );
    // The server's own pages post with its own origin.
    assert_eq!(
        ask(addr, "notes.example.com", Some("https://notes.example.com")).await,
        200
    );

    // The opt-out: any Host, but still no foreign Origin.
    let (listener, addr) = wildcard_listener().await;
    tokio::spawn(Server::new("open").serve_http_on(listener, HttpOptions::default().allow_any_host()));
    assert_eq!(ask(addr, "anything.example", None).await, 200);
    assert_eq!(
        ask(addr, "anything.example", Some("https://anything.example")).await,
        403
    );
}

/// The Protected Resource Metadata's `resource` comes from configuration, or from a `Host` that
/// passed the check; never from an unchecked one (a cache would keep it for an hour).
#[tokio::test]
async fn the_metadata_resource_never_comes_from_an_unchecked_host() {
    let (listener, _) = wildcard_listener().await;
    let options = HttpOptions::default().allow_any_host().bearer(Tokens);
    let e = tokio::time::timeout(
        Duration::from_secs(5),
        Server::new("m").serve_http_on(listener, options),
    )
    .await
    .expect("refused at once")
    .unwrap_err();
    assert!(e.to_string().contains("HttpOptions::resource"), "{e}");
    // A resource that is no absolute http(s) URL could not name the server: refused at start.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let options = HttpOptions::default().resource("notes.example.com/mcp");
    let e = tokio::time::timeout(
        Duration::from_secs(5),
        Server::new("m").serve_http_on(listener, options),
    )
    .await
    .expect("refused at once")
    .unwrap_err();
    assert!(e.to_string().contains("not an absolute http(s) URL"), "{e}");

    let (listener, addr) = wildcard_listener().await;
    let options = HttpOptions::default()
        .allow_any_host()
        .bearer(Tokens)
        .resource("https://notes.example.com/mcp")
        .authorization_server("https://auth.test");
    tokio::spawn(Server::new("m").serve_http_on(listener, options));
    let doc = raw_response(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource",
        "evil.example",
        &[],
        "",
    )
    .await;
    assert!(doc.starts_with("HTTP/1.1 200"), "{doc}");
    assert!(doc.contains(r#""resource":"https://notes.example.com/mcp""#), "{doc}");
    assert!(!doc.contains("evil.example"), "{doc}");

    // Made from the checked Host, and varying with it.
    let (listener, addr) = wildcard_listener().await;
    let options = HttpOptions::default()
        .allow_host("notes.example.com")
        .bearer(Tokens)
        .authorization_server("https://auth.test");
    tokio::spawn(Server::new("m").serve_http_on(listener, options));
    let doc = raw_response(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource",
        "notes.example.com",
        &[],
        "",
    )
    .await;
    assert!(doc.contains(r#""resource":"https://notes.example.com/mcp""#), "{doc}");
    assert!(doc.to_ascii_lowercase().contains("vary: host"), "{doc}");
    let doc = raw_response(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource",
        "evil.example",
        &[],
        "",
    )
    .await;
    assert!(doc.starts_with("HTTP/1.1 403"), "{doc}");
}

/// One request over a fresh connection with exactly this `Host`; the whole response as text.
async fn raw_response(
    addr: SocketAddr,
    method: &str,
    path: &str,
    host: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut out))
        .await
        .expect("the whole response within 10 s")
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// The status of a POST /mcp with exactly this `Host`.
async fn raw_status(addr: SocketAddr, host: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    let r = raw_response(addr, "POST", "/mcp", host, headers, body).await;
    r.get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {r}"))
}

/// A template resource for callers granted `notes:secret`.
#[mcp_resolve::resource(template = "notes://vault/{name}", scopes = ["notes:secret"])]
async fn vault(name: String) -> String {
    format!("vault {name}")
}

/// Names of a list's items (`name`, or `uri` / `uriTemplate`).
fn listed(r: &Reply, key: &str) -> Vec<String> {
    let items = r.json()["result"][key]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{}", r.body));
    let field = |v: &Value| {
        (v.get("name").or(v.get("uri")).or(v.get("uriTemplate")))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    items.iter().map(field).collect()
}

/// Lists and `resources/subscribe` apply the scopes of the call they lead to: a caller sees only
/// what it may use (and a 2026-07-28 list made for one caller is `cacheScope: private`), and
/// cannot subscribe to a resource it may not read (403 `insufficient_scope`, as the read is).
#[tokio::test]
async fn lists_and_subscriptions_apply_the_scopes_of_what_they_lead_to() {
    let addr = start_with(HttpOptions::default().bearer(Tokens), |s| {
        s.prompt(scoped_prompt)
            .prompt(greet)
            .resource(secret_note)
            .resource(note)
            .resource(vault)
    })
    .await;
    let list = |token: &'static str, method: &'static str| async move {
        let mut params = json!({});
        params["_meta"] = envelope(json!({}));
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        let auth = format!("Bearer {token}");
        let h = [
            JSON,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
            ("authorization", auth.as_str()),
        ];
        send(addr, "POST", &h, &body).await
    };
    let alice = list("alice", "tools/list").await;
    assert!(
        !listed(&alice, "tools").contains(&"purge".to_string()),
        "{}",
        alice.body
    );
    assert!(listed(&alice, "tools").contains(&"nap".to_string()));
    assert_eq!(alice.json()["result"]["cacheScope"], "private");
    let carol = list("carol", "tools/list").await;
    assert!(listed(&carol, "tools").contains(&"purge".to_string()), "{}", carol.body);
    assert_eq!(
        list("alice", "prompts/list").await.json()["result"]["prompts"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(listed(&list("alice", "prompts/list").await, "prompts"), ["greet"]);
    let resources = listed(&list("alice", "resources/list").await, "resources");
    assert!(!resources.contains(&"notes://secret".to_string()), "{resources:?}");
    let templates = listed(&list("alice", "resources/templates/list").await, "resourceTemplates");
    assert!(
        !templates.contains(&"notes://vault/{name}".to_string()),
        "{templates:?}"
    );
    assert!(!templates.is_empty(), "the unscoped template stays");

    // Subscribing leads to reads: the same scopes, the same refusal.
    let sid = session_as(addr, Some("alice")).await;
    let subscribe = |uri: &'static str| {
        let sid = sid.clone();
        async move {
            let body =
                json!({"jsonrpc": "2.0", "id": 7, "method": "resources/subscribe", "params": {"uri": uri}}).to_string();
            let h = [
                JSON,
                ("authorization", "Bearer alice"),
                ("mcp-session-id", sid.as_str()),
            ];
            send(addr, "POST", &h, &body).await
        }
    };
    for uri in ["notes://secret", "notes://vault/x"] {
        let r = subscribe(uri).await;
        assert_eq!(r.status, 403, "{uri}: {}", r.body);
        assert_eq!(r.json()["error"]["data"]["error"], "insufficient_scope");
        let challenge = r.headers["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains(r#"scope="notes:secret""#), "{challenge}");
    }
    let r = subscribe("test://notes/a").await;
    assert_eq!((r.status, r.json()["result"].clone()), (200, json!({})), "{}", r.body);
}

/// Header count (hyper's bound, 100): a request with more gets 431, and the server goes on.
#[tokio::test]
async fn more_than_100_headers_get_431_and_the_server_goes_on() {
    let addr = start(HttpOptions::default()).await;
    let host = format!("127.0.0.1:{}", addr.port());
    let many: Vec<(String, String)> = (0..120).map(|i| (format!("x-h{i}"), "v".to_string())).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = raw_response(addr, "POST", "/mcp", &host, &many, "{}").await;
    assert!(r.starts_with("HTTP/1.1 431"), "{r}");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}).to_string();
    assert_eq!(send(addr, "POST", &[JSON], &init).await.status, 200);
}

/// A 2026-07-28 `subscriptions/listen` request of `token`'s: its headers and body.
fn listen_request(token: &str, id: &str, uris: &[&str]) -> (Vec<(&'static str, String)>, String) {
    let mut params = json!({"notifications": {"resourceSubscriptions": uris}});
    params["_meta"] = envelope(json!({}));
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}).to_string();
    let headers = vec![
        ("content-type", "application/json".to_string()),
        ("accept", "application/json, text/event-stream".to_string()),
        ("mcp-protocol-version", "2026-07-28".to_string()),
        ("mcp-method", "subscriptions/listen".to_string()),
        ("authorization", format!("Bearer {token}")),
    ];
    (headers, body)
}

/// A 2026-07-28 `subscriptions/listen` over HTTP as `token`: its open stream.
async fn listen_as(addr: SocketAddr, token: &str, id: &str, uris: &[&str]) -> Stream {
    let (headers, body) = listen_request(token, id, uris);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    open_with(addr, "POST", &headers, &body).await
}

/// `subscriptions/listen` over Streamable HTTP (2026-07-28: "Long-lived change notifications
/// use `subscriptions/listen`: a POST whose response is a long-lived stream"): the
/// acknowledgment first, updates tagged with the request's id, keep-alive comments while idle;
/// closing the stream is cancellation and unsubscribes; one caller's streams are bounded and the
/// bound falls on that caller only.
#[tokio::test]
async fn subscriptions_listen_streams_updates_over_http_and_is_bounded_per_caller() {
    let mut updates = None;
    let options = HttpOptions::default()
        .bearer(Tokens)
        .stream_keepalive(Duration::from_millis(50));
    let addr = start_with(options, |s| {
        let s = s.resource(watched_resource).resource(note).max_listens(64, 2);
        updates = Some(s.resource_updates());
        s
    })
    .await;
    let updates = updates.unwrap();
    let mut stream = listen_as(addr, "alice", "watch-1", &[WATCHED, "test://notes/7"]).await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.headers["content-type"], "text/event-stream");
    assert_eq!(
        stream.event().await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "watch-1"},
            "notifications": {"resourceSubscriptions": [WATCHED, "test://notes/7"]},
        }})
    );
    assert_eq!(updates.updated("test://notes/7"), 1);
    assert_eq!(
        stream.event().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "watch-1"}, "uri": "test://notes/7",
        }})
    );
    // Idle: keep-alive comments, nothing else.
    assert!(matches!(stream.next(Duration::from_secs(5)).await, Sse::Comment(_)));
    // Alice's second stream is fine; her third is refused (400, -32600), Bob's is not.
    let second = listen_as(addr, "alice", "watch-2", &[WATCHED]).await;
    let (headers, body) = listen_request("alice", "watch-3", &[WATCHED]);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let third = send(addr, "POST", &headers, &body).await;
    assert_eq!(
        (third.status, third.json()["error"]["code"].clone()),
        (400, json!(-32600)),
        "{}",
        third.body
    );
    assert!(
        third.body.contains("holds 2 subscriptions/listen streams"),
        "{}",
        third.body
    );
    let mut bob = listen_as(addr, "bob", "watch-b", &[WATCHED]).await;
    assert_eq!(bob.status, 200);
    assert_eq!(bob.event().await["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(updates.subscribers(WATCHED), 3);
    // Closing a stream cancels it: its subscriptions go.
    drop(stream);
    drop(second);
    drop(bob);
    let gone = tokio::time::timeout(Duration::from_secs(5), async {
        while updates.subscribers(WATCHED) + updates.subscribers("test://notes/7") > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    assert!(gone.await.is_ok(), "closed streams leave nothing subscribed");
    let again = listen_as(addr, "alice", "watch-4", &[WATCHED]).await;
    assert_eq!(again.status, 200, "closed streams give their places back");
}

/// A verifier that knows no issuer.
struct Anonymous;

impl mcp_resolve::auth::TokenVerifier for Anonymous {
    fn verify<'a>(
        &'a self,
        _: &'a str,
    ) -> mcp_resolve::auth::BoxFuture<'a, Result<mcp_resolve::Principal, mcp_resolve::auth::AuthError>> {
        Box::pin(async { Err(mcp_resolve::auth::AuthError::new("no tokens")) })
    }
}

/// Authorization (both eras): "The Protected Resource Metadata document returned by the MCP server
/// MUST include the `authorization_servers` field containing at least one authorization server":
/// the configured one, else the verifier's issuer; with neither the server refuses to start. And
/// "MCP servers SHOULD include a `scope` parameter in the `WWW-Authenticate` header" of a 401:
/// the configured `scopes_supported`.
#[tokio::test]
async fn the_metadata_always_names_an_authorization_server_and_the_401_names_the_scopes() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let refused = tokio::time::timeout(
        Duration::from_secs(5),
        Server::new("m").serve_http_on(listener, HttpOptions::default().bearer(Anonymous)),
    )
    .await
    .expect("refused at once")
    .unwrap_err();
    assert!(
        refused.to_string().contains("HttpOptions::authorization_server"),
        "{refused}"
    );

    let addr = start(HttpOptions::default().bearer(Tokens)).await;
    let doc = send_to(addr, "GET", "/.well-known/oauth-protected-resource", &[], "").await;
    assert_eq!(
        doc.json()["authorization_servers"],
        json!(["https://auth.test"]),
        "the verifier's issuer"
    );
    let r = modern(addr, 1, "tools/list", json!({})).await;
    assert!(
        !r.headers["www-authenticate"].to_str().unwrap().contains("scope="),
        "none configured"
    );

    let options = HttpOptions::default()
        .bearer(Anonymous)
        .authorization_server("https://login.example.com")
        .scopes_supported(["notes:read", "notes:write"]);
    let addr = start(options).await;
    let doc = send_to(addr, "GET", "/.well-known/oauth-protected-resource", &[], "").await;
    assert_eq!(
        doc.json()["authorization_servers"],
        json!(["https://login.example.com"])
    );
    let r = modern(addr, 1, "tools/list", json!({})).await;
    assert_eq!(r.status, 401);
    let challenge = r.headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains(r#"scope="notes:read notes:write""#), "{challenge}");
}

/// The scopes the caller's token grants, as the tool sees them.
#[tool]
async fn my_scopes(cx: Context) -> String {
    cx.principal().map(|p| p.scopes.join(" ")).unwrap_or_default()
}

/// 2026-07-28 authorization: "Servers MUST account for scope hierarchies, where a broader scope
/// implies narrower ones": the server declares them (`Server::scope_implies`), they chain, and
/// every check — calls, lists, the tool's own view — sees them; nothing is implied by prefix.
#[tokio::test]
async fn declared_scope_hierarchies_are_honoured_and_prefixes_imply_nothing() {
    use std::sync::atomic::Ordering::SeqCst;
    let addr = start_with(HttpOptions::default().bearer(Tokens), |s| {
        s.tool(my_scopes)
            .scope_implies("notes:owner", ["notes:admin"])
            .scope_implies("notes:admin", ["notes:read"])
    })
    .await;
    let before = PURGED.load(SeqCst);
    let r = as_user(addr, "dave", 1, json!({"name": "purge", "arguments": {}})).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "purged", "{}", r.body);
    assert!(PURGED.load(SeqCst) > before);
    let r = as_user(addr, "dave", 2, json!({"name": "my_scopes", "arguments": {}})).await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "notes:owner notes:admin notes:read",
        "chained, each once, after the granted ones"
    );
    let r = as_user(addr, "erin", 3, json!({"name": "purge", "arguments": {}})).await;
    assert_eq!(r.status, 403, "`notes` is a prefix, not a broader scope: {}", r.body);
    let mut params = json!({});
    params["_meta"] = envelope(json!({}));
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": params}).to_string();
    let h = [
        JSON,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
        ("authorization", "Bearer dave"),
    ];
    let r = send(addr, "POST", &h, &body).await;
    assert!(r.body.contains(r#""name":"purge""#), "listed for dave: {}", r.body);
}

/// Rate limits over HTTP: a caller over its rate gets 429 with `Retry-After` and the JSON-RPC
/// error; the rate is counted per principal, so another caller (and an unauthenticated client,
/// counted by its address) is served.
#[tokio::test]
async fn a_caller_over_its_rate_gets_429_and_others_are_served() {
    let addr = start_with(HttpOptions::default().bearer(Tokens), |s| s.call_rate_limit(1, 2)).await;
    let call = json!({"name": "nap", "arguments": {"ms": 1}});
    for _ in 0..2 {
        assert_eq!(as_user(addr, "alice", 1, call.clone()).await.status, 200);
    }
    let r = as_user(addr, "alice", 2, call.clone()).await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(r.headers["retry-after"], "1");
    assert_eq!(r.json()["error"]["code"], -32603);
    assert_eq!(r.json()["id"], 2);
    assert!(
        r.json()["error"]["data"]["retryAfterMs"].as_u64().is_some(),
        "{}",
        r.body
    );
    assert_eq!(as_user(addr, "bob", 3, call).await.status, 200, "bob is not slowed");
}

/// Decided deviations of issue 33 (docs/SPEC.md, L1, L2, L5): a refusal in a session echoes the
/// request's id (base protocol: "Error responses MUST include the same ID"); an `initialize`
/// naming an unknown `MCP-Protocol-Version` is 400 (transports: "invalid or unsupported … MUST
/// respond with 400"); a 2026-07-28 request ignores an `Mcp-Session-Id` it still carries.
#[tokio::test]
async fn session_refusals_echo_the_id_bad_versions_stop_initialize_and_2026_ignores_sessions() {
    let addr = start(HttpOptions::default()).await;
    let list = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/list"}).to_string();
    let unknown = [JSON, ("mcp-session-id", "0123456789abcdef0123456789abcdef")];
    let r = send(addr, "POST", &unknown, &list).await;
    assert_eq!((r.status, r.json()["id"].clone()), (404, json!(41)), "{}", r.body);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();
    let sid = session_id(&send(addr, "POST", &[JSON], &init).await);
    let bad = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2099-99-99"),
    ];
    let r = send(addr, "POST", &bad, &list).await;
    assert_eq!((r.status, r.json()["id"].clone()), (400, json!(41)), "{}", r.body);
    for garbage in ["garbage", "2099-99-99"] {
        let r = send(addr, "POST", &[JSON, ("mcp-protocol-version", garbage)], &init).await;
        assert_eq!(r.status, 400, "{garbage}: {}", r.body);
        assert_eq!(r.json()["id"], 1);
        assert!(r.headers.get("mcp-session-id").is_none(), "no session opened");
    }
    assert_eq!(
        send(addr, "POST", &[JSON, ("mcp-protocol-version", "2025-11-25")], &init)
            .await
            .status,
        200
    );
    // 2026-07-28 traffic naming a live session: the header is ignored, the request served.
    let mut params = json!({});
    params["_meta"] = envelope(json!({}));
    let discover = json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": params}).to_string();
    let h = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    let r = send(addr, "POST", &h, &discover).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["result"]["resultType"], "complete");
    assert!(r.headers.get("mcp-session-id").is_none(), "no session echoed");
    // DELETE carrying a 2026-07-28 header is no session's end on that era: 405, the session lives.
    let h = [("mcp-session-id", sid.as_str()), ("mcp-protocol-version", "2026-07-28")];
    let r = send(addr, "DELETE", &h, "").await;
    assert_eq!((r.status, r.headers["allow"].to_str().unwrap()), (405, "POST"));
    let h = [JSON, ("mcp-session-id", sid.as_str())];
    assert_eq!(
        send(addr, "POST", &h, &list).await.status,
        200,
        "the session was not ended"
    );
}

/// Transports (2025-11-25, GET stream): "The server MUST NOT send a JSON-RPC response on the
/// stream unless resuming a stream associated with a previous client request": a call in the
/// session is answered on its own POST, never on the session's GET stream.
#[tokio::test]
async fn the_get_stream_never_carries_a_response() {
    let (addr, updates) = start_watched(HttpOptions::default()).await;
    let sid = session_as(addr, None).await;
    let mut stream = open(addr, "GET", &[SSE, ("mcp-session-id", sid.as_str())]).await;
    assert_eq!(stream.status, 200);
    let r = in_session(
        addr,
        &sid,
        5,
        "tools/call",
        json!({"name": "nap", "arguments": {"ms": 1}}),
    )
    .await;
    let answer = r.events().pop().unwrap_or_else(|| r.json());
    assert_eq!(answer["id"], 5, "answered on its POST: {}", r.body);
    stream.quiet().await;
    // What the stream is for still comes.
    in_session(addr, &sid, 6, "resources/subscribe", json!({"uri": WATCHED})).await;
    assert_eq!(updates.updated(WATCHED), 1);
    assert!(is_update(&stream.event().await, WATCHED));
}

// ---- Calls that survive a broken connection (handshake era): priming events, event ids,
// no cancel on disconnect, resumption with `Last-Event-ID`.

/// Runs while its flag lives; counts how many times it was dropped (cancelled or done).
static HELD_DROPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static HELD_STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct HeldFlag;
impl Drop for HeldFlag {
    fn drop(&mut self) {
        HELD_DROPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Holds on for an hour.
#[tool]
async fn held() -> String {
    let _flag = HeldFlag;
    HELD_STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "held".into()
}

/// Closes its own stream, as a server that polls does, then answers.
#[tool]
async fn reconnect(cx: Context) -> String {
    assert!(cx.close_stream(), "a handshake-era HTTP call has a stream to close");
    tokio::time::sleep(Duration::from_millis(100)).await;
    "reconnected".into()
}

/// Sends `n` progress notifications, then answers.
#[tool]
async fn chatter(n: u32, cx: Context) -> String {
    for i in 1..=n {
        cx.progress(f64::from(i), Some(f64::from(n)), None).await;
    }
    format!("said {n}")
}

async fn start_resumable(options: HttpOptions) -> SocketAddr {
    start_with(options, |s| s.tool(held).tool(reconnect).tool(chatter)).await
}

/// A 2025-11-25 session that can be asked (elicitation declared); its headers.
async fn asking_session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();
    let sid = session_id(&send(addr, "POST", &[JSON], &init).await);
    let h = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(send(addr, "POST", &h, initialized).await.status, 202);
    sid
}

/// `GET` resuming session `sid`'s stream after `last`.
async fn resume(addr: SocketAddr, sid: &str, last: &str) -> Stream {
    let h = [
        SSE,
        ("mcp-session-id", sid),
        ("mcp-protocol-version", "2025-11-25"),
        ("last-event-id", last),
    ];
    open(addr, "GET", &h).await
}

/// Every message event left on `stream`, to its end.
async fn drain(stream: &mut Stream) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        match stream.next(Duration::from_secs(5)).await {
            Sse::Event(v) => out.push(v),
            Sse::Comment(_) | Sse::Priming => {}
            Sse::End => return out,
            Sse::Quiet => panic!("the stream neither ended nor sent anything: {out:?}"),
        }
    }
}

/// A call that asks, its connection cut at each point a network can cut it (after the priming
/// event, after the question, after the answer went in), resumed with `Last-Event-ID`: the
/// question arrives once, the result once, and the stream ends after it, as the POST's would have.
#[tokio::test]
async fn a_call_cut_at_any_point_is_resumed_with_last_event_id_and_answers_exactly_once() {
    let addr = start_resumable(HttpOptions::default()).await;
    for cut in ["after the priming event", "after the question", "after the answer"] {
        let sid = asking_session(addr).await;
        let h = [
            JSON,
            ("mcp-session-id", sid.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "delete", "arguments": {"path": "x"}}}).to_string();
        let mut stream = open_with(addr, "POST", &h, &call).await;
        assert_eq!(stream.headers["content-type"], "text/event-stream");
        // The priming event comes first: an id, a retry field and empty data.
        assert!(
            matches!(stream.next(Duration::from_secs(5)).await, Sse::Priming),
            "{cut}"
        );
        let priming = stream.last_id.clone().expect("the priming event has an id");
        assert_eq!(stream.retry, Some(1000), "the default retry");
        let mut seen = Vec::new();
        let answer =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"action": "accept", "content": {"ok": true}}}).to_string();
        if cut != "after the priming event" {
            let question = stream.event().await;
            assert_eq!(question["method"], "elicitation/create");
            seen.push(question);
        }
        let last = stream.last_id.clone().unwrap();
        drop(stream);
        if cut == "after the answer" {
            assert_eq!(send(addr, "POST", &h, &answer).await.status, 202, "{cut}");
        }
        // The call ran on: its stream is resumed after the last event that arrived.
        let mut resumed = resume(addr, &sid, &last).await;
        assert_eq!(resumed.status, 200, "{cut}");
        if cut == "after the priming event" {
            let question = resumed.event().await;
            assert_eq!(question["method"], "elicitation/create");
            seen.push(question);
            assert_eq!(send(addr, "POST", &h, &answer).await.status, 202, "{cut}");
        } else if cut == "after the question" {
            assert_eq!(send(addr, "POST", &h, &answer).await.status, 202, "{cut}");
        }
        seen.extend(drain(&mut resumed).await);
        let questions = seen.iter().filter(|m| m["method"] == "elicitation/create").count();
        let results: Vec<_> = seen.iter().filter(|m| m["id"] == 2).collect();
        assert_eq!(questions, 1, "{cut}: the question once: {seen:?}");
        assert_eq!(results.len(), 1, "{cut}: the result once: {seen:?}");
        assert_eq!(results[0]["result"]["content"][0]["text"], "deleted x", "{cut}");
        // Read to its end, it lingers a little for a client that missed the end: resumed after
        // its last event, it has nothing more, and ends at once.
        let last = resumed.last_id.clone().unwrap();
        assert_ne!(last, priming);
        let mut again = resume(addr, &sid, &last).await;
        assert_eq!(again.status, 200, "{cut}");
        assert!(drain(&mut again).await.is_empty(), "{cut}: nothing after the result");
    }
}

/// Only this session's own event ids resume; anything else is refused with nothing replayed, and
/// another caller cannot name the session at all.
#[tokio::test]
async fn a_last_event_id_of_another_session_or_none_at_all_is_refused() {
    let addr = start_resumable(HttpOptions::default()).await;
    let ours = asking_session(addr).await;
    let theirs = asking_session(addr).await;
    let h = [
        JSON,
        ("mcp-session-id", theirs.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "delete", "arguments": {"path": "x"}}}).to_string();
    let mut stream = open_with(addr, "POST", &h, &call).await;
    stream.event().await;
    let their_id = stream.last_id.clone().unwrap();
    for last in [their_id.as_str(), "garbage", "1-1-1", ""] {
        let r = send(
            addr,
            "GET",
            &[SSE, ("mcp-session-id", ours.as_str()), ("last-event-id", last)],
            "",
        )
        .await;
        assert_eq!(r.status, 400, "{last:?}: {}", r.body);
        assert!(
            r.body.contains("Last-Event-ID names no event of this session"),
            "{}",
            r.body
        );
    }
    // Their own id, in their session, resumes (a second reader takes over from the first).
    let mut resumed = resume(addr, &theirs, &their_id).await;
    assert_eq!(resumed.status, 200);
    assert!(stream.ends().await, "the first reader ended when the second took over");
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}}).to_string();
    assert_eq!(send(addr, "POST", &h, &answer).await.status, 202);
    let rest = drain(&mut resumed).await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["result"]["content"][0]["text"], "declined");
}

/// A broken stream does not cancel its call on the handshake era; `notifications/cancelled`
/// does, and so does the session's end; a call nobody comes back for is cancelled after
/// `detached_timeout`. (2026-07-28 still cancels on close: `tests/requirements.rs`
/// `closing_an_sse_response_cancels_its_call`.)
#[tokio::test]
async fn a_detached_call_runs_on_until_cancelled_the_session_ends_or_nobody_comes_back() {
    use std::sync::atomic::Ordering::SeqCst;
    let resume_options = mcp_resolve::ResumeOptions::default().detached_timeout(Duration::from_millis(700));
    let addr = start_resumable(HttpOptions::default().resumable(resume_options)).await;
    let wait_for = |n: usize, what: &'static str| async move {
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        while HELD_DROPPED.load(SeqCst) < n {
            assert!(tokio::time::Instant::now() < until, "{what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let before = HELD_DROPPED.load(SeqCst);
    let call = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "held", "arguments": {}}})
            .to_string()
    };
    for (i, how) in ["notifications/cancelled", "DELETE", "nobody comes back"]
        .into_iter()
        .enumerate()
    {
        let sid = asking_session(addr).await;
        let h = [
            JSON,
            ("mcp-session-id", sid.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let started = HELD_STARTED.load(SeqCst);
        let mut stream = open_with(addr, "POST", &h, &call(7)).await;
        assert!(matches!(stream.next(Duration::from_secs(5)).await, Sse::Priming));
        while HELD_STARTED.load(SeqCst) == started {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(stream);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            HELD_DROPPED.load(SeqCst),
            before + i,
            "{how}: the call runs on after its stream broke"
        );
        match how {
            "notifications/cancelled" => {
                let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
                assert_eq!(send(addr, "POST", &h, &cancel.to_string()).await.status, 202);
            }
            "DELETE" => {
                assert_eq!(
                    send(addr, "DELETE", &[("mcp-session-id", sid.as_str())], "")
                        .await
                        .status,
                    200
                );
            }
            _ => {}
        }
        wait_for(before + i + 1, how).await;
    }
}

/// Polling (SEP-1699): with `close_streams_after`, every stream's connection is closed after
/// that time, its retry field sent first, and the client resumes; a tool may also close its own
/// stream (`Context::close_stream`). Either way the result arrives once, on the resumed stream.
#[tokio::test]
async fn a_stream_closed_by_the_server_is_resumed_and_delivers_its_result() {
    let resume_options = mcp_resolve::ResumeOptions::default()
        .retry(Duration::from_millis(50))
        .close_streams_after(Duration::from_millis(300));
    let addr = start_resumable(HttpOptions::default().resumable(resume_options)).await;
    let sid = asking_session(addr).await;
    let h = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    // The tool closes its stream at once.
    let call =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "reconnect", "arguments": {}}})
            .to_string();
    let mut stream = open_with(addr, "POST", &h, &call).await;
    assert!(drain(&mut stream).await.is_empty(), "closed before its result");
    assert_eq!(stream.retry, Some(50));
    let last = stream.last_id.clone().unwrap();
    let mut resumed = resume(addr, &sid, &last).await;
    let rest = drain(&mut resumed).await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["result"]["content"][0]["text"], "reconnected");
    // The server closes a stream that is still waiting after 300 ms; the resumed one goes on.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "delete", "arguments": {"path": "y"}}}).to_string();
    let mut stream = open_with(addr, "POST", &h, &call).await;
    let question = drain(&mut stream).await;
    assert_eq!(
        question.len(),
        1,
        "the question, then the connection closed: {question:?}"
    );
    let answer =
        json!({"jsonrpc": "2.0", "id": question[0]["id"], "result": {"action": "accept", "content": {"ok": true}}});
    assert_eq!(send(addr, "POST", &h, &answer.to_string()).await.status, 202);
    let mut resumed = resume(addr, &sid, stream.last_id.as_deref().unwrap()).await;
    let rest = drain(&mut resumed).await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["result"]["content"][0]["text"], "deleted y");
}

/// A hostile client that starts calls and never reads them cannot grow what its session keeps:
/// at the session's bound its oldest detached call is cancelled, and another session's call, read
/// as it goes, gets every one of its events.
#[tokio::test]
async fn a_client_that_never_comes_back_is_bounded_and_others_never_notice() {
    let resume_options = mcp_resolve::ResumeOptions::default().max_session_events(32);
    let addr = start_resumable(HttpOptions::default().resumable(resume_options)).await;
    let hostile = asking_session(addr).await;
    let h = [
        JSON,
        ("mcp-session-id", hostile.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let mut ids = Vec::new();
    for id in 0..4 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "chatter", "arguments": {"n": 200}, "_meta": {"progressToken": id}}}).to_string();
        let mut stream = open_with(addr, "POST", &h, &call).await;
        assert!(matches!(stream.next(Duration::from_secs(5)).await, Sse::Priming));
        ids.push(stream.last_id.clone().unwrap());
        drop(stream);
    }
    // Meanwhile a well-behaved session reads a call of 500 notifications to its end.
    let good = asking_session(addr).await;
    let g = [
        JSON,
        ("mcp-session-id", good.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "chatter", "arguments": {"n": 500}, "_meta": {"progressToken": "g"}}}).to_string();
    let mut stream = open_with(addr, "POST", &g, &call).await;
    let all = drain(&mut stream).await;
    assert_eq!(all.len(), 501, "every progress notification and the result");
    assert_eq!(all[500]["result"]["content"][0]["text"], "said 500");
    // The hostile session kept at most its bound: at least the oldest of its calls was dropped,
    // and a resumption never replays what it no longer holds.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut refused = 0;
    for id in &ids {
        let r = resume(addr, &hostile, id).await;
        if r.status == 410 {
            refused += 1;
        } else {
            assert_eq!(r.status, 200);
        }
    }
    assert!(refused >= 3, "{refused} of 4 dropped: 4 × 201 events cannot fit in 32");
}

/// An event store of the operator's own: the events go there, are read back from there for the
/// resumption, and are removed from there once the session ends.
#[tokio::test]
async fn an_event_store_of_ones_own_keeps_the_events_a_resumption_reads() {
    use mcp_resolve::event_store::{EventStore, MemoryEventStore, StreamKey};
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    #[derive(Default)]
    struct Counted {
        inner: MemoryEventStore,
        appended: AtomicUsize,
        read: AtomicUsize,
        removed: AtomicUsize,
    }
    impl EventStore for Counted {
        fn append(&self, stream: StreamKey, seq: u64, event: Bytes) {
            self.appended.fetch_add(1, SeqCst);
            self.inner.append(stream, seq, event);
        }
        fn get(&self, stream: StreamKey, seq: u64) -> Option<Bytes> {
            self.read.fetch_add(1, SeqCst);
            self.inner.get(stream, seq)
        }
        fn drop_before(&self, stream: StreamKey, seq: u64) {
            self.inner.drop_before(stream, seq);
        }
        fn remove(&self, stream: StreamKey) {
            self.removed.fetch_add(1, SeqCst);
            self.inner.remove(stream);
        }
    }
    let store = std::sync::Arc::new(Counted::default());
    let resume_options = mcp_resolve::ResumeOptions::default().event_store(store.clone());
    let addr = start_resumable(HttpOptions::default().resumable(resume_options)).await;
    let sid = asking_session(addr).await;
    let h = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "delete", "arguments": {"path": "z"}}}).to_string();
    let mut stream = open_with(addr, "POST", &h, &call).await;
    let question = stream.event().await;
    let last = stream.last_id.clone().unwrap();
    drop(stream);
    let answer =
        json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"ok": true}}});
    assert_eq!(send(addr, "POST", &h, &answer.to_string()).await.status, 202);
    let reads_before = store.read.load(SeqCst);
    let mut resumed = resume(addr, &sid, &last).await;
    let rest = drain(&mut resumed).await;
    assert_eq!(rest[0]["result"]["content"][0]["text"], "deleted z");
    assert_eq!(store.appended.load(SeqCst), 2, "the question and the result");
    assert!(store.read.load(SeqCst) > reads_before, "the resumption read the store");
    assert_eq!(
        send(addr, "DELETE", &[("mcp-session-id", sid.as_str())], "")
            .await
            .status,
        200
    );
    assert!(store.removed.load(SeqCst) >= 1, "the session's end removed its streams");
}

/// Graceful shutdown (`Server::serve_http_until`): once the signal comes, new connections are
/// refused, a call in flight finishes and gets its result, a session's GET stream ends, a
/// handshake-era call waiting on the user answers (its question failed, saying why), and the
/// server returns well within its grace.
#[tokio::test]
async fn shutting_down_finishes_calls_in_flight_refuses_new_connections_and_returns() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = Server::new("http-test")
        .tool(delete)
        .tool(nap)
        .state_keys(StateKeys::new(&[7; 32]).unwrap());
    let options = HttpOptions::default().shutdown_grace(Duration::from_secs(5));
    let served = tokio::spawn(server.serve_http_until(listener, options, async {
        let _ = stopped.await;
    }));
    // In flight when the signal comes: a 2026-07-28 call napping 800 ms, a session's GET stream,
    // and a handshake-era call waiting for its question's answer.
    let napping = tokio::spawn(modern(
        addr,
        1,
        "tools/call",
        json!({"name": "nap", "arguments": {"ms": 800}}),
    ));
    let sid = asking_session(addr).await;
    let h = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let mut listening = open(addr, "GET", &[SSE, ("mcp-session-id", sid.as_str())]).await;
    assert_eq!(listening.status, 200);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "delete", "arguments": {"path": "x"}}}).to_string();
    let mut asking = open_with(addr, "POST", &h, &call).await;
    assert_eq!(asking.event().await["method"], "elicitation/create");
    // And a 2026-07-28 `subscriptions/listen` stream, open for long.
    let (lh, lb) = listen_request("", "listen-1", &[]);
    let lh: Vec<(&str, &str)> = lh
        .iter()
        .filter(|(k, _)| *k != "authorization")
        .map(|(k, v)| (*k, v.as_str()))
        .collect();
    let mut subscribed = open_with(addr, "POST", &lh, &lb).await;
    assert_eq!(subscribed.status, 200);
    let ack = subscribed.event().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    let begun = tokio::time::Instant::now();
    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "a new connection is refused once shutting down"
    );
    let r = napping.await.unwrap();
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "awake",
        "the call in flight finished"
    );
    assert!(listening.ends().await, "the GET stream ended");
    assert!(subscribed.ends().await, "the listen stream ended");
    let answer = asking.event().await;
    assert_eq!(answer["id"], 2, "the waiting call answered: {answer}");
    let why = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(why.contains("the server is shutting down"), "it says why: {answer}");
    assert!(asking.ends().await);
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("the server returns within its grace")
        .unwrap()
        .unwrap();
    assert!(begun.elapsed() < Duration::from_secs(4), "{:?}", begun.elapsed());
}

/// Past `shutdown_grace`, what still runs is cancelled: a handshake-era call computing for an
/// hour is dropped, its session ended, and the server returns about the grace later.
#[tokio::test]
async fn past_the_grace_what_still_runs_is_cancelled_and_the_server_returns() {
    use std::sync::atomic::Ordering::SeqCst;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = Server::new("http-test").tool(held);
    let options = HttpOptions::default().shutdown_grace(Duration::from_millis(300));
    let served = tokio::spawn(server.serve_http_until(listener, options, async {
        let _ = stopped.await;
    }));
    let sid = asking_session(addr).await;
    let h = [
        JSON,
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let started = HELD_STARTED.load(SeqCst);
    let dropped = HELD_DROPPED.load(SeqCst);
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "held", "arguments": {}}})
        .to_string();
    let _running = open_with(addr, "POST", &h, &call).await;
    while HELD_STARTED.load(SeqCst) == started {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let begun = tokio::time::Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("the server returns after its grace")
        .unwrap()
        .unwrap();
    assert!(begun.elapsed() >= Duration::from_millis(300), "it waited the grace");
    assert!(
        HELD_DROPPED.load(SeqCst) > dropped,
        "the call still running was cancelled"
    );
}

/// What the linking page records.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Linked {
    account: String,
}

/// Asks from its body, in URL mode (handshake era).
#[tool]
async fn link_now(cx: Context) -> String {
    match cx
        .elicit_url::<Linked>("Link your account", "https://notes.example/link")
        .await
    {
        Ok(ElicitationResult::Accepted(l)) => format!("linked as {}", l.account),
        Ok(other) => format!("not linked: {other:?}"),
        Err(e) => format!("cannot ask: {e}"),
    }
}

/// A tool body's own URL-mode question on a 2025-11-25 session is its caller's: asked of an
/// authenticated caller by a server that refuses URL-mode questions of anonymous ones, and its
/// flow completed by that caller only (elicitation, URL mode: the server "MUST verify the
/// identity of the user who opens the URL").
#[tokio::test]
async fn a_tool_bodys_url_question_in_a_session_is_bound_to_its_caller() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::new("http-test")
        .tool(link_now)
        .state_keys(StateKeys::new(&[7; 32]).unwrap());
    let flows = server.url_flows();
    tokio::spawn(server.serve_http_on(listener, HttpOptions::default().bearer(Tokens)));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"url": {}}}, "clientInfo": {"name": "t", "version": "0"}}}).to_string();
    let auth = [JSON, ("authorization", "Bearer alice")];
    let sid = session_id(&send(addr, "POST", &auth, &init).await);
    let h = [
        JSON,
        ("authorization", "Bearer alice"),
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(send(addr, "POST", &h, initialized).await.status, 202);

    let call =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "link_now", "arguments": {}}})
            .to_string();
    let mut stream = open_with(addr, "POST", &h, &call).await;
    let question = stream.event().await;
    assert_eq!(
        question["method"], "elicitation/create",
        "asked, not refused: {question}"
    );
    assert_eq!(question["params"]["mode"], "url", "{question}");
    let url = question["params"]["url"].as_str().unwrap();
    let flow = url
        .split(['?', '&'])
        .find_map(|p| p.strip_prefix("flow="))
        .unwrap_or_else(|| panic!("no flow in {url}"))
        .to_owned();
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept"}}).to_string();
    assert_eq!(send(addr, "POST", &h, &answer).await.status, 202);

    let as_user = |subject: &str| mcp_resolve::Principal {
        subject: subject.into(),
        issuer: Some("test".into()),
        scopes: vec!["notes:read".into()],
    };
    let linked = Linked { account: "a1".into() };
    assert!(
        flows.complete(&flow, Some(&as_user("bob")), &linked).await.is_err(),
        "another caller's page"
    );
    assert!(flows.complete(&flow, None, &linked).await.is_err(), "nobody's page");
    flows.complete(&flow, Some(&as_user("alice")), &linked).await.unwrap();
    let result = loop {
        let event = stream.event().await;
        if event["id"] == 2 {
            break event;
        }
    };
    assert_eq!(result["result"]["content"][0]["text"], "linked as a1", "{result}");
}
