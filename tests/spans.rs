//! What a request asks of a tracing subscriber (`mcp_resolve::telemetry`; issue 31, point 5):
//! every span made, value recorded and span entered is work each subscriber does for each
//! request, so they are counted here, through the in-memory client on both eras. A call is one
//! span, `mcp.request`, made with the call's fields (method, tool, protocol version, era: 7
//! values), entered once while it runs, given one record at its end (outcome and round, and the
//! error's code when it failed) and closed; a request that is not a call is one span made with
//! its 3 values and one record. A second span per call, or a value recorded after the span is
//! made, fails here by count. (A second span per call cost an echo call 9 % of its CPU with the
//! registry recording spans: docs/PERFORMANCE.md.)
//!
//! The subscriber is the process's global default, so this binary holds this one test: another
//! test's thread could otherwise settle the callsites' interest without it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::protocol::ProtocolVersion;
use mcp_resolve::testing::TestClient;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Answers at once: a call that asks nothing.
#[tool]
async fn shout(text: String) -> String {
    text.to_uppercase()
}

/// What the subscriber was asked to do: spans made (name, values given then), the fields of
/// each record, enters, closes.
#[derive(Default)]
struct SpanWork {
    made: Mutex<Vec<(String, usize)>>,
    records: Mutex<Vec<Vec<String>>>,
    enters: AtomicU64,
    closes: AtomicU64,
}

/// Names the fields a span or record was given.
#[derive(Default)]
struct Fields(Vec<String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, _: &dyn std::fmt::Debug) {
        self.0.push(field.name().to_owned());
    }
}

struct Counting(Arc<SpanWork>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Counting {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut given = Fields::default();
        attrs.record(&mut given);
        self.0
            .made
            .lock()
            .unwrap()
            .push((attrs.metadata().name().to_owned(), given.0.len()));
    }
    fn on_record(
        &self,
        _: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut given = Fields::default();
        values.record(&mut given);
        self.0.records.lock().unwrap().push(given.0);
    }
    fn on_enter(&self, _: &tracing::span::Id, _: tracing_subscriber::layer::Context<'_, S>) {
        self.0.enters.fetch_add(1, Ordering::Relaxed);
    }
    fn on_close(&self, _: tracing::span::Id, _: tracing_subscriber::layer::Context<'_, S>) {
        self.0.closes.fetch_add(1, Ordering::Relaxed);
    }
}

/// Spans made, records, enters, closes since the last take.
type Taken = (Vec<(String, usize)>, Vec<Vec<String>>, u64, u64);

impl SpanWork {
    fn take(&self) -> Taken {
        (
            std::mem::take(&mut *self.made.lock().unwrap()),
            std::mem::take(&mut *self.records.lock().unwrap()),
            self.enters.swap(0, Ordering::Relaxed),
            self.closes.swap(0, Ordering::Relaxed),
        )
    }
}

fn request(values: usize) -> Vec<(String, usize)> {
    vec![("mcp.request".to_owned(), values)]
}

#[tokio::test(flavor = "current_thread")]
async fn a_call_is_one_span_made_with_its_fields_and_recorded_once() {
    use tracing_subscriber::layer::SubscriberExt;
    let work = Arc::new(SpanWork::default());
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Counting(work.clone())))
        .expect("the only subscriber of this binary");

    let server = || Server::new("spans").tool(shout);
    let caps = json!({"elicitation": {"form": {}}});
    let mut modern = TestClient::stateless(server(), caps.clone());
    let mut handshake = TestClient::handshake(server(), ProtocolVersion::V2025_11_25, caps).await;
    work.take();
    for (era, client) in [("2026-07-28", &mut modern), ("2025-11-25", &mut handshake)] {
        let r = client.call_tool("shout", json!({"text": "hi"})).await;
        assert_eq!(r["result"]["content"][0]["text"], "HI", "{era}: {r}");
        let (made, records, enters, closes) = work.take();
        assert_eq!(made, request(7), "{era}: a call's spans, with the values given as made");
        assert_eq!(records, [["mcp.round", "mcp.outcome"]], "{era}: a call's records");
        assert_eq!((enters, closes), (1, 1), "{era}: a call's enters and closes");

        if era == "2026-07-28" {
            // A `requestState` that does not open: the call runs and fails (-32602), its code
            // given in the same one record.
            let r = client
                .request(
                    "tools/call",
                    json!({"name": "shout", "arguments": {"text": "hi"}, "requestState": "not-a-state"}),
                )
                .await;
            assert_eq!(r["error"]["code"], -32602, "{era}: {r}");
            let (made, records, _, closes) = work.take();
            assert_eq!(made, request(7), "{era}: a failed call's spans");
            assert_eq!(
                records,
                [["mcp.round", "mcp.outcome", "error.type"]],
                "{era}: a failed call's records"
            );
            assert_eq!(closes, 1, "{era}");
        }

        let r = client.request("tools/list", json!({})).await;
        assert!(r["result"]["tools"].is_array(), "{era}: {r}");
        let (made, records, enters, closes) = work.take();
        assert_eq!(made, request(3), "{era}: tools/list's spans");
        assert_eq!(records, [["mcp.outcome"]], "{era}: tools/list's records");
        assert_eq!((enters, closes), (1, 1), "{era}: tools/list's enters and closes");

        // A tool nobody registered: refused while its params are read, one record.
        let r = client.call_tool("nobody", json!({})).await;
        assert!(r["error"]["code"].is_i64(), "{era}: {r}");
        let (made, records, _, closes) = work.take();
        assert_eq!(made, request(3), "{era}: a refused call's spans");
        assert_eq!(
            records,
            [["mcp.outcome", "error.type"]],
            "{era}: a refused call's records"
        );
        assert_eq!(closes, 1, "{era}");
    }
}
