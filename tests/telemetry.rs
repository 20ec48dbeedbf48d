//! What the metrics count (`mcp_resolve::telemetry`, feature `metrics`), through the in-memory
//! client with a recorder of this test's own: an answer is counted once however many rounds
//! keep it, a back-channel question nobody answers counts as expired, a tampered state and a
//! spent question limit are counted by reason, and calls by outcome with the round they ended in.
//! (The Prometheus exporter over real HTTP: tests/axum.rs.) And what a call asks of a tracing
//! subscriber: one span per request, its fields given as it is made (issue 31, point 5: each
//! span, record and enter is work every subscriber does; a second span per call cost 9 %).
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

/// Answers at once: a call that asks nothing.
#[tool]
async fn shout(text: String) -> String {
    text.to_uppercase()
}

fn server() -> Server {
    Server::new("telemetry").tool(greet).tool(shout)
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

/// What a subscriber is asked to do, counted: spans made (by name, with how many fields were
/// given then), values recorded later, enters, closes.
#[derive(Default)]
struct SpanWork {
    made: Mutex<Vec<(String, usize)>>,
    records: AtomicU64,
    enters: AtomicU64,
    closes: AtomicU64,
}

struct Counting(Arc<SpanWork>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Counting {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Given(usize);
        impl tracing::field::Visit for Given {
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {
                self.0 += 1;
            }
        }
        let mut given = Given(0);
        attrs.record(&mut given);
        self.0
            .made
            .lock()
            .unwrap()
            .push((attrs.metadata().name().to_owned(), given.0));
    }
    fn on_record(
        &self,
        _: &tracing::span::Id,
        _: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        self.0.records.fetch_add(1, Ordering::Relaxed);
    }
    fn on_enter(&self, _: &tracing::span::Id, _: tracing_subscriber::layer::Context<'_, S>) {
        self.0.enters.fetch_add(1, Ordering::Relaxed);
    }
    fn on_close(&self, _: tracing::span::Id, _: tracing_subscriber::layer::Context<'_, S>) {
        self.0.closes.fetch_add(1, Ordering::Relaxed);
    }
}

impl SpanWork {
    fn take(&self) -> (Vec<(String, usize)>, u64, u64, u64) {
        (
            std::mem::take(&mut *self.made.lock().unwrap()),
            self.records.swap(0, Ordering::Relaxed),
            self.enters.swap(0, Ordering::Relaxed),
            self.closes.swap(0, Ordering::Relaxed),
        )
    }
}

/// A call that answers at once is one span, `mcp.request`, made with the call's fields (the
/// method, the tool, the protocol version, the era: 7 values), entered once while it runs,
/// given one record (its outcome and round) and closed; on either era. A request that is not a
/// call is one span too, entered while it is answered. A second span per call, or a value
/// recorded after the span is made, fails here by count.
#[tokio::test(flavor = "current_thread")]
async fn a_call_is_one_span_made_with_its_fields_and_recorded_once() {
    use tracing_subscriber::layer::SubscriberExt;
    let work = Arc::new(SpanWork::default());
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(Counting(work.clone())));

    let mut modern = TestClient::stateless(server(), caps());
    let mut handshake = TestClient::handshake(server(), ProtocolVersion::V2025_11_25, caps()).await;
    work.take();
    for (era, client) in [("2026-07-28", &mut modern), ("2025-11-25", &mut handshake)] {
        let r = client.call_tool("shout", json!({"text": "hi"})).await;
        assert_eq!(r["result"]["content"][0]["text"], "HI", "{era}: {r}");
        let (made, records, enters, closes) = work.take();
        assert_eq!(
            made,
            [("mcp.request".to_owned(), 7)],
            "{era}: the spans made, with the values given"
        );
        assert_eq!((records, enters, closes), (1, 1, 1), "{era}: records, enters, closes");

        let r = client.request("tools/list", json!({})).await;
        assert!(r["result"]["tools"].is_array(), "{era}: {r}");
        let (made, records, enters, closes) = work.take();
        assert_eq!(made, [("mcp.request".to_owned(), 3)], "{era}: tools/list");
        assert_eq!((records, enters, closes), (1, 1, 1), "{era}: tools/list");
    }
}
