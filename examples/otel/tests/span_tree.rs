//! The spans the example exports, read back from an in-memory exporter behind the very pipeline
//! the binary installs (`tracer_provider`, `subscriber`, the `on_trace_context` hook), for calls
//! over real HTTP to the server serving in-process:
//!
//! - a 2026-07-28 call whose tool asks (an `InputRequiredResult`, then the retry with the
//!   answer), both rounds carrying the client's trace in `params._meta.traceparent`: every span
//!   in the client's trace, `mcp.request` (one span per request, named `tools/call NAME`) →
//!   `mcp.resolver` → `mcp.question` in each round, with the fields `mcp_resolve::telemetry`
//!   names;
//! - a handshake-era (2025-11-25) call that asks nothing, the trace in the HTTP `traceparent`
//!   header alone.
//!
//! No span or span event holds the arguments, the answer or the `requestState`.
//!
//! One subscriber serves the process (a global default), so each test tells its spans by its own
//! trace id.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mcp_resolve::HttpOptions;
use opentelemetry::trace::{SpanId, SpanKind, TraceId};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The example's pipeline with an in-memory exporter, installed once for the process.
fn pipeline() -> &'static (SdkTracerProvider, InMemorySpanExporter) {
    static PIPELINE: OnceLock<(SdkTracerProvider, InMemorySpanExporter)> = OnceLock::new();
    PIPELINE.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = mcp_resolve_example_otel::tracer_provider(exporter.clone());
        tracing::subscriber::set_global_default(mcp_resolve_example_otel::subscriber(&provider))
            .expect("no other global subscriber in this test binary");
        (provider, exporter)
    })
}

/// The example's server on 127.0.0.1:0 until the sender is dropped or sent to.
struct Running {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start() -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served =
        tokio::spawn(
            mcp_resolve_example_otel::server().serve_http_until(listener, HttpOptions::default(), async {
                let _ = stopped.await;
            }),
        );
    Running { addr, stop, served }
}

impl Running {
    /// Stops the server gracefully (`serve_http_until` returns).
    async fn stop(self) {
        let _ = self.stop.send(());
        let served = tokio::time::timeout(Duration::from_secs(10), self.served)
            .await
            .expect("the server stops within 10 s");
        served.unwrap().unwrap();
    }
}

struct Reply {
    status: u16,
    headers: http::HeaderMap,
    body: String,
}

impl Reply {
    /// The JSON-RPC response: the body, or the SSE event that carries a response.
    fn message(&self) -> Value {
        if let Ok(v) = serde_json::from_str::<Value>(&self.body) {
            return v;
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("result").is_some() || v.get("error").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC response in: {}", self.body))
    }
}

/// One POST to /mcp over its own HTTP/1.1 connection; the whole response within 10 s.
async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Reply {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = http::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", format!("127.0.0.1:{}", addr.port()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    let exchange = async {
        let resp = sender.send_request(req).await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            headers,
            body: String::from_utf8(bytes.to_vec()).unwrap(),
        }
    };
    tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .unwrap_or_else(|_| panic!("no whole response to {body} within 10 s"))
}

/// A 2026-07-28 `tools/call` whose `_meta` carries the client's `traceparent`.
async fn modern_call(addr: SocketAddr, id: i64, mut params: Value, traceparent: &str) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "traceparent": traceparent,
        "tracestate": "client=1",
    });
    let name = params["name"].as_str().unwrap().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", name.as_str()),
    ];
    let reply = post(addr, &headers, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.message()
}

/// The spans of `trace` exported so far, once `settled` says they are all there (each request's
/// spans end as its response goes out: a moment after the client has it).
fn spans_of(trace: TraceId, settled: impl Fn(&[SpanData]) -> bool) -> Vec<SpanData> {
    let (provider, exporter) = pipeline();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        provider.force_flush().unwrap();
        let spans: Vec<SpanData> = exporter
            .get_finished_spans()
            .unwrap()
            .into_iter()
            .filter(|s| s.span_context.trace_id() == trace)
            .collect();
        if settled(&spans) {
            return spans;
        }
        assert!(
            Instant::now() < deadline,
            "the spans of trace {trace} did not settle within 10 s: {:#?}",
            brief(&spans)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Names, ids and attributes: what a failure shows.
fn brief(spans: &[SpanData]) -> Vec<String> {
    spans
        .iter()
        .map(|s| {
            let attributes: Vec<String> = s
                .attributes
                .iter()
                .map(|kv| format!("{}={}", kv.key, kv.value.as_str()))
                .collect();
            format!(
                "{} span={} parent={} [{}]",
                s.name,
                s.span_context.span_id(),
                s.parent_span_id,
                attributes.join(", ")
            )
        })
        .collect()
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.as_str().into_owned())
}

/// The span's attributes `expected` names have those values.
fn assert_fields(span: &SpanData, expected: &[(&str, &str)], all: &[SpanData]) {
    for (key, value) in expected {
        assert_eq!(
            attr(span, key).as_deref(),
            Some(*value),
            "`{key}` of span {} ({}); all spans: {:#?}",
            span.name,
            span.span_context.span_id(),
            brief(all)
        );
    }
}

/// The one span among `spans` whose parent is `parent` and that has the attribute `marker` (what
/// tells the four kinds of span apart once `otel.name` has renamed them).
fn child<'a>(spans: &'a [SpanData], parent: SpanId, marker: &str) -> &'a SpanData {
    let found: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.parent_span_id == parent && attr(s, marker).is_some())
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one span with `{marker}` under {parent}; all spans: {:#?}",
        brief(spans)
    );
    found[0]
}

fn count(spans: &[SpanData], marker: &str) -> usize {
    spans.iter().filter(|s| attr(s, marker).is_some()).count()
}

/// No span name, attribute or span event holds any of `secrets`.
fn assert_nothing_leaks(spans: &[SpanData], secrets: &[&str]) {
    for span in spans {
        let mut texts = vec![span.name.to_string()];
        texts.extend(
            span.attributes
                .iter()
                .map(|kv| format!("{}={}", kv.key, kv.value.as_str())),
        );
        for event in span.events.iter() {
            texts.push(event.name.to_string());
            texts.extend(
                event
                    .attributes
                    .iter()
                    .map(|kv| format!("{}={}", kv.key, kv.value.as_str())),
            );
        }
        for text in &texts {
            for secret in secrets {
                assert!(!text.contains(secret), "span {} records {secret:?}: {text}", span.name);
            }
        }
    }
}

const MODERN_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const FIRST_PARENT: &str = "00f067aa0ba902b7";
const SECOND_PARENT: &str = "b7ad6b7169203331";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_rounds_of_a_2026_call_that_asks_are_one_span_tree_each_in_the_clients_trace() {
    pipeline();
    let server = start().await;
    // Values that must appear in no span: an argument, the answer's text, the requestState.
    let project = "apollo";
    let reason = "superseded-by-artemis-7c1f";
    let arguments = json!({"project": project});

    let first = modern_call(
        server.addr,
        1,
        json!({"name": "archive_project", "arguments": arguments}),
        &format!("00-{MODERN_TRACE}-{FIRST_PARENT}-01"),
    )
    .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert!(result["inputRequests"]["confirm_archive"].is_object(), "{first}");
    let state = result["requestState"].as_str().expect("a requestState").to_owned();

    let second = modern_call(
        server.addr,
        2,
        json!({
            "name": "archive_project",
            "arguments": arguments,
            "inputResponses": {"confirm_archive": {"action": "accept", "content": {"archive": true, "reason": reason}}},
            "requestState": state,
        }),
        &format!("00-{MODERN_TRACE}-{SECOND_PARENT}-01"),
    )
    .await;
    assert_eq!(second["result"]["content"][0]["text"], "archived apollo", "{second}");
    server.stop().await;

    let trace = TraceId::from_hex(MODERN_TRACE).unwrap();
    // Two rounds of three spans: request (the call's fields on it), resolver, question.
    let spans = spans_of(trace, |s| s.len() >= 6 && count(s, "mcp.question.key") == 2);
    assert_eq!(spans.len(), 6, "{:#?}", brief(&spans));

    for (round, client_span, call_outcome, resolver_outcome, question_outcome) in [
        ("1", FIRST_PARENT, "input_required", "asked", "input_required"),
        ("2", SECOND_PARENT, "ok", "answered", "accept"),
    ] {
        let client_span = SpanId::from_hex(client_span).unwrap();
        // `mcp.request`, renamed by `otel.name` to the method and the tool; the client's span
        // its remote parent; the call's fields on it.
        let request = child(&spans, client_span, "mcp.method.name");
        assert_eq!(request.name, "tools/call archive_project", "{:#?}", brief(&spans));
        assert_eq!(request.span_kind, SpanKind::Server);
        assert!(
            request.parent_span_is_remote,
            "round {round}: the parent is the client's span"
        );
        assert_eq!(request.span_context.trace_state().header(), "client=1");
        assert_fields(
            request,
            &[
                ("mcp.method.name", "tools/call"),
                ("mcp.item.kind", "tool"),
                ("mcp.item.name", "archive_project"),
                ("mcp.protocol.version", "2026-07-28"),
                ("mcp.era", "2026-07-28"),
                ("mcp.round", round),
                ("mcp.outcome", call_outcome),
            ],
            &spans,
        );
        assert_eq!(attr(request, "error.type"), None, "round {round}: no error");

        let resolver = child(&spans, request.span_context.span_id(), "mcp.resolver.name");
        assert_eq!(resolver.name, "mcp.resolver");
        assert_fields(
            resolver,
            &[
                ("mcp.resolver.name", "confirm_archive"),
                ("mcp.outcome", resolver_outcome),
            ],
            &spans,
        );

        let question = child(&spans, resolver.span_context.span_id(), "mcp.question.key");
        assert_eq!(question.name, "mcp.question");
        assert_fields(
            question,
            &[
                ("mcp.question.key", "confirm_archive"),
                ("mcp.question.mode", "form"),
                ("mcp.outcome", question_outcome),
            ],
            &spans,
        );
    }
    assert_nothing_leaks(&spans, &[project, reason, &state, &state[..16.min(state.len())]]);
}

const HANDSHAKE_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_PARENT: &str = "6e0c63257de34c92";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_call_joins_the_trace_of_its_http_traceparent_header() {
    pipeline();
    let server = start().await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let reply = post(server.addr, &[], &init).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let session = reply.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let in_session = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(server.addr, &in_session, &initialized).await.status, 202);

    // The trace in the header alone: nothing in `_meta`.
    let project = "gemini";
    let traceparent = format!("00-{HANDSHAKE_TRACE}-{HEADER_PARENT}-01");
    let mut headers = in_session.to_vec();
    headers.push(("traceparent", traceparent.as_str()));
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "project_status", "arguments": {"project": project}}});
    let reply = post(server.addr, &headers, &call).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.message()["result"]["content"][0]["text"],
        "gemini is active",
        "{}",
        reply.body
    );
    server.stop().await;

    let trace = TraceId::from_hex(HANDSHAKE_TRACE).unwrap();
    let spans = spans_of(trace, |s| !s.is_empty());
    assert_eq!(
        spans.len(),
        1,
        "one span for the request, its call's fields on it, no question: {:#?}",
        brief(&spans)
    );
    let request = child(&spans, SpanId::from_hex(HEADER_PARENT).unwrap(), "mcp.method.name");
    assert_eq!(request.name, "tools/call project_status");
    assert_eq!(request.span_kind, SpanKind::Server);
    assert!(request.parent_span_is_remote);
    assert_fields(
        request,
        &[
            ("mcp.method.name", "tools/call"),
            ("mcp.item.kind", "tool"),
            ("mcp.item.name", "project_status"),
            ("mcp.protocol.version", "2025-11-25"),
            ("mcp.era", "handshake"),
            ("mcp.round", "1"),
            ("mcp.outcome", "ok"),
        ],
        &spans,
    );
    assert_nothing_leaks(&spans, &[project, &session]);
}
