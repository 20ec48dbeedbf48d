//! What the metrics count (`mcp_resolve::telemetry`, feature `metrics`), through the in-memory
//! client with a recorder of this test's own: an answer is counted once however many rounds
//! keep it, a back-channel question nobody answers counts as expired, a tampered state and a
//! spent question limit are counted by reason, calls by outcome with the round they ended in, and
//! two servers in one process count their requests apart.
//! (The Prometheus exporter over real HTTP: tests/axum.rs. What a call asks of a tracing
//! subscriber: tests/spans.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::protocol::ProtocolVersion;
use mcp_resolve::testing::TestClient;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Every series by its rendering `name{k=v,…}` (labels sorted): counters' totals, histograms'
/// samples.
#[derive(Default)]
struct Recorded {
    counters: Mutex<BTreeMap<String, Arc<AtomicU64>>>,
    histograms: Mutex<BTreeMap<String, Arc<Samples>>>,
}

#[derive(Default)]
struct Samples(Mutex<Vec<f64>>);

impl metrics::HistogramFn for Samples {
    fn record(&self, value: f64) {
        self.0.lock().unwrap().push(value);
    }
}

struct Total(Arc<AtomicU64>);

impl metrics::CounterFn for Total {
    fn increment(&self, value: u64) {
        self.0.fetch_add(value, Ordering::Relaxed);
    }
    fn absolute(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }
}

fn render(key: &Key) -> String {
    let mut labels: Vec<String> = key.labels().map(|l| format!("{}={}", l.key(), l.value())).collect();
    labels.sort();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

impl Recorder for Recorded {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let total = self.counters.lock().unwrap().entry(render(key)).or_default().clone();
        Counter::from_arc(Arc::new(Total(total)))
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        let samples = self.histograms.lock().unwrap().entry(render(key)).or_default().clone();
        Histogram::from_arc(samples)
    }
}

impl Recorded {
    fn count(&self, series: &str) -> u64 {
        self.counters
            .lock()
            .unwrap()
            .get(series)
            .map_or(0, |t| t.load(Ordering::Relaxed))
    }
    fn samples(&self, series: &str) -> Vec<f64> {
        self.histograms
            .lock()
            .unwrap()
            .get(series)
            .map(|s| s.0.lock().unwrap().clone())
            .unwrap_or_default()
    }
    fn all(&self) -> String {
        format!("{:?}", self.counters.lock().unwrap().keys().collect::<Vec<_>>())
    }
}

#[derive(FormSchema, Clone, Debug)]
struct Name {
    name: String,
}

#[resolver(key = "first")]
async fn ask_first() -> Elicit<Name> {
    Elicit::form("First name?")
}

/// Asked once the first is answered: a second round, while the first answer is kept.
#[resolver(key = "last")]
async fn ask_last(#[resolve(ask_first)] first: Name) -> Elicit<Name> {
    Elicit::form(format!("Last name of {}?", first.name))
}

#[tool]
async fn greet(#[resolve(ask_first)] first: Name, #[resolve(ask_last)] last: Name) -> String {
    format!("Hello, {} {}", first.name, last.name)
}

fn server() -> Server {
    Server::new("telemetry").tool(greet)
}

fn caps() -> Value {
    json!({"elicitation": {"form": {}}})
}

fn answer(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

/// A 2026-07-28 call over three rounds (two questions, one per round): each question is asked
/// once and answered once, though the first answer is carried through the third round.
#[tokio::test(flavor = "current_thread")]
async fn a_multi_round_call_counts_each_question_once_and_its_rounds() {
    let recorded = Arc::new(Recorded::default());
    let _local = metrics::set_default_local_recorder(&*recorded);
    let mut c = TestClient::stateless(server(), caps());
    let r1 = c.call_tool("greet", json!({})).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let state = r1["result"]["requestState"].clone();
    let r2 = c
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {}, "inputResponses": {"first": answer("Ada")}, "requestState": state}),
        )
        .await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    let state = r2["result"]["requestState"].clone();
    let r3 = c
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {}, "inputResponses": {"last": answer("Lovelace")}, "requestState": state}),
        )
        .await;
    assert_eq!(r3["result"]["content"][0]["text"], "Hello, Ada Lovelace", "{r3}");

    let all = recorded.all();
    assert_eq!(
        recorded.count("mcp_questions_asked_total{mode=form,name=greet}"),
        2,
        "{all}"
    );
    assert_eq!(
        recorded.count("mcp_questions_answered_total{action=accept,name=greet}"),
        2,
        "the first answer, kept through round 3, is counted once: {all}"
    );
    assert_eq!(
        recorded.count("mcp_calls_total{kind=tool,name=greet,outcome=input_required}"),
        2,
        "{all}"
    );
    assert_eq!(
        recorded.count("mcp_calls_total{kind=tool,name=greet,outcome=ok}"),
        1,
        "{all}"
    );
    assert_eq!(recorded.samples("mcp_call_rounds{kind=tool,name=greet}"), vec![3.0]);
    assert_eq!(
        recorded
            .samples("mcp_call_duration_seconds{kind=tool,name=greet}")
            .len(),
        3
    );
    assert_eq!(
        recorded.count("mcp_requests_total{method=tools/call,outcome=ok}"),
        3,
        "{all}"
    );

    // A tampered state: refused, counted by reason; the request is an error.
    let tampered = c
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {}, "inputResponses": {"first": answer("Eve")}, "requestState": "v2.forged"}),
        )
        .await;
    assert!(tampered.get("error").is_some(), "{tampered}");
    assert_eq!(recorded.count("mcp_states_refused_total{reason=tampered}"), 1, "{all}");
    assert_eq!(
        recorded.count("mcp_requests_total{method=tools/call,outcome=error}"),
        1,
        "{}",
        recorded.all()
    );
    // A method nobody knows is labelled `other`, never by the client's text.
    c.request("x/made-up", json!({})).await;
    assert_eq!(
        recorded.count("mcp_requests_total{method=other,outcome=error}"),
        1,
        "{}",
        recorded.all()
    );
}

/// The handshake era: a question nobody answers within the elicitation timeout is `expired`; a
/// declined one `decline`; past the question limit, a limit hit.
#[tokio::test(flavor = "current_thread")]
async fn back_channel_answers_expiries_and_the_question_limit_are_counted() {
    let recorded = Arc::new(Recorded::default());
    let _local = metrics::set_default_local_recorder(&*recorded);
    let server = server()
        .elicitation_timeout(Duration::from_millis(200))
        .question_limit(2, Duration::from_secs(60));
    let mut c = TestClient::handshake(server, ProtocolVersion::V2025_11_25, caps()).await;

    // Declined at once: the call ends with the decline.
    let id = c.start("tools/call", json!({"name": "greet", "arguments": {}})).await;
    let asked = c.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    c.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}))
        .await;
    let done = c.response_to(&json!(id)).await;
    assert!(done.get("result").is_some(), "{done}");
    assert_eq!(
        recorded.count("mcp_questions_answered_total{action=decline,name=greet}"),
        1,
        "{}",
        recorded.all()
    );

    // Never answered: expired after the timeout.
    let id = c.start("tools/call", json!({"name": "greet", "arguments": {}})).await;
    let asked = c.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let done = c.response_to(&json!(id)).await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        recorded.count("mcp_questions_answered_total{action=expired,name=greet}"),
        1,
        "{}",
        recorded.all()
    );
    assert_eq!(recorded.count("mcp_questions_asked_total{mode=form,name=greet}"), 2);
    // Both calls end with an `isError` result: the tool needs the name.
    assert_eq!(
        recorded.count("mcp_calls_total{kind=tool,name=greet,outcome=tool_error}"),
        2,
        "{}",
        recorded.all()
    );

    // The third question of this caller within the window: over the limit of 2.
    let id = c.start("tools/call", json!({"name": "greet", "arguments": {}})).await;
    let done = c.response_to(&json!(id)).await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        recorded.count("mcp_limit_hits_total{limit=questions}"),
        1,
        "{}",
        recorded.all()
    );
}

/// A server's request counters are its own: two servers in one process, each under its own
/// local recorder, count apart. (Handles kept process-wide would stay bound to the recorder in
/// force at their first use: the second server's requests would go to the first's.)
#[tokio::test(flavor = "current_thread")]
async fn two_servers_under_two_recorders_count_their_requests_apart() {
    for round in 1..=2 {
        let recorded = Arc::new(Recorded::default());
        let _local = metrics::set_default_local_recorder(&*recorded);
        let mut c = TestClient::stateless(server(), caps());
        for _ in 0..round {
            let listed = c.request("tools/list", json!({})).await;
            assert!(listed.get("result").is_some(), "{listed}");
        }
        assert_eq!(
            recorded.count("mcp_requests_total{method=tools/list,outcome=ok}"),
            round,
            "server {round}: {}",
            recorded.all()
        );
    }
}
