//! Every question and answer is a `tracing` event with the tool, the resolver's key, the mode, the
//! action and the round; a client's cancellation is logged with its reason. (Its own test binary:
//! the subscriber is process-wide.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use serde_json::json;
use std::sync::{Arc, Mutex};

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

/// Deploy something.
#[tool]
async fn ship(service: String, #[confirm("Ship {service}?")] ok: bool) -> String {
    format!("{service}: {ok}")
}

#[tokio::test]
async fn every_question_and_answer_is_logged() {
    let log = Captured::default();
    let writer = log.clone();
    tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .init();
    let mut c = TestClient::stateless(Server::new("logs").tool(ship), json!({"elicitation": {}}));
    let r = c.call_tool("ship", json!({"service": "api"})).await;
    let state = r["result"]["requestState"].clone();
    let r = c
        .request(
            "tools/call",
            json!({"name": "ship", "arguments": {"service": "api"}, "inputResponses": {"ok": {"action": "decline"}}, "requestState": state}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let asked = text
        .lines()
        .find(|l| l.contains("question asked"))
        .unwrap_or_else(|| panic!("{text}"));
    for field in [
        "kind=\"tool\"",
        "item=\"ship\"",
        "key=\"ok\"",
        "mode=\"form\"",
        "round=1",
    ] {
        assert!(asked.contains(field), "{field} in {asked}");
    }
    let answered = text
        .lines()
        .find(|l| l.contains("question answered"))
        .unwrap_or_else(|| panic!("{text}"));
    for field in [
        "kind=\"tool\"",
        "item=\"ship\"",
        "key=\"ok\"",
        "mode=\"form\"",
        "action=\"decline\"",
        "round=1",
    ] {
        assert!(answered.contains(field), "{field} in {answered}");
    }
    // Cancellation: the reason "can be logged" — it is, with the request's id.
    let mut c = TestClient::handshake(
        Server::new("logs").tool(ship),
        mcp_resolve::protocol::ProtocolVersion::V2025_11_25,
        json!({"elicitation": {}}),
    )
    .await;
    let id = c
        .start("tools/call", json!({"name": "ship", "arguments": {"service": "api"}}))
        .await;
    assert_eq!(c.recv().await["method"], "elicitation/create");
    c.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user pressed stop"}),
    )
    .await;
    assert_eq!(
        c.recv().await["method"],
        "notifications/cancelled",
        "the server's own question too"
    );
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let cancelled = text
        .lines()
        .find(|l| l.contains("request cancelled by the client"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(cancelled.contains("reason=\"user pressed stop\""), "{cancelled}");
    assert!(cancelled.contains(&format!("id={id}")), "{cancelled}");
}
